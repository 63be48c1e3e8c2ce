// bench_lcp.c - cost of one phys_solve_lcp on stacks of boxes: 1, 2 and 5 boxes (4, 8 and 20 contacts, four
// corners each on the box below or the ground, so G is rank-deficient), resting, and with the top box
// sliding. For each: cold solves (no warm start: Lemke + stabilization) and warm solves (last solve's labels:
// the clamping subsystem and its check only). Reports instructions per solve (user-space hardware counter
// through perf_event_open; "n/a" where the kernel refuses: then run under
// `valgrind --tool=callgrind --toggle-collect=measured_solve`) and the median microseconds per solve.
// Information only, never a pass/fail test.
//
// usage: bench_lcp [--samples N] [--only ROW]   (ROW: 0..11, one table row, for callgrind)
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "contact.h"

#define MAXBOX 5
#define MAXROW (12 * MAXBOX)
#define NV (6 * MAXBOX)

static double g_stack[1 << 20];

// a stack problem and its storage
typedef struct benchStack_ {
  int nbox;
  double J[MAXROW * NV], G[MAXROW * MAXROW], g[MAXROW], mu[4 * MAXBOX];
  double minv[NV];          // diagonal inverse mass (each box: m, principal inertia at its centre)
} benchStack;

// boxes of half sizes (0.2, 0.15, 0.1), mass 1, centred above each other; contact c of box b is a bottom
// corner of b on the top of b-1 (or the ground): rows n = z, t1 = x, t2 = y of the velocity of b's point
// relative to the support's point, J_row = [dir, r x dir] on each body (support negated)
static void stack_problem(benchStack* s, int nbox, double slide) {
  const double h[3] = {0.2, 0.15, 0.1}, mass = 1, dt = 0.002, grav = 9.81, mu = 0.8;
  const double sx[4] = {1, -1, -1, 1}, sy[4] = {1, 1, -1, -1};
  const double dirs[3][3] = {{0, 0, 1}, {1, 0, 0}, {0, 1, 0}};
  int nv = 6 * nbox, n = 12 * nbox;
  s->nbox = nbox;
  memset(s->J, 0, sizeof(s->J));
  for (int b = 0; b < nbox; b++) {
    double I[3] = {mass * (h[1] * h[1] + h[2] * h[2]) / 3, mass * (h[0] * h[0] + h[2] * h[2]) / 3,
                   mass * (h[0] * h[0] + h[1] * h[1]) / 3};
    for (int k = 0; k < 3; k++) s->minv[6 * b + k] = 1 / mass, s->minv[6 * b + 3 + k] = 1 / I[k];
    for (int c = 0; c < 4; c++) {
      s->mu[4 * b + c] = mu;
      double rb[3] = {sx[c] * h[0], sy[c] * h[1], -h[2]}, ra[3] = {sx[c] * h[0], sy[c] * h[1], h[2]};
      for (int k = 0; k < 3; k++) {
        const double* e = dirs[k];
        double* Jr = s->J + (size_t)(12 * b + 3 * c + k) * nv;
        double* Jb = Jr + 6 * b;
        Jb[0] = e[0], Jb[1] = e[1], Jb[2] = e[2];
        Jb[3] = rb[1] * e[2] - rb[2] * e[1], Jb[4] = rb[2] * e[0] - rb[0] * e[2], Jb[5] = rb[0] * e[1] - rb[1] * e[0];
        if (b == 0) continue;
        double* Ja = Jr + 6 * (b - 1);
        Ja[0] = -e[0], Ja[1] = -e[1], Ja[2] = -e[2];
        Ja[3] = -(ra[1] * e[2] - ra[2] * e[1]), Ja[4] = -(ra[2] * e[0] - ra[0] * e[2]);
        Ja[5] = -(ra[0] * e[1] - ra[1] * e[0]);
      }
    }
  }
  // G = J diag(minv) J'; g = J vf, vf = gravity over a step, the top box sliding along x
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      double t = 0;
      for (int k = 0; k < nv; k++) t += s->J[(size_t)i * nv + k] * s->minv[k] * s->J[(size_t)j * nv + k];
      s->G[(size_t)i * n + j] = t;
    }
  double vf[NV] = {0};
  for (int b = 0; b < nbox; b++) vf[6 * b + 2] = -grav * dt;
  vf[6 * (nbox - 1)] = slide;
  for (int i = 0; i < n; i++) {
    double t = 0;
    for (int k = 0; k < nv; k++) t += s->J[(size_t)i * nv + k] * vf[k];
    s->g[i] = t;
  }
}

//---------------------------------------------------------------------------------------------------------
// measurement

// the measured call (noinline: a callgrind --toggle-collect target)
__attribute__((noinline)) physStatus measured_solve(physData* d, const physConstraintProblem* p,
                                                    physConstraintSolution* sol) {
  return phys_solve_lcp(NULL, d, p, sol);
}

// user-space instruction counter of this thread (-1 if unavailable)
static int counter_open(void) {
  struct perf_event_attr a;
  memset(&a, 0, sizeof(a));
  a.type = PERF_TYPE_HARDWARE;
  a.size = sizeof(a);
  a.config = PERF_COUNT_HW_INSTRUCTIONS;
  a.disabled = 1;
  a.exclude_kernel = 1;
  a.exclude_hv = 1;
  return (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
}

// monotonic clock in microseconds
static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec * 1e-3;
}

// ascending doubles for qsort
static int cmp_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

// one row of the table: instructions (mean over samples) and median microseconds, cold or warm
static void measure(const benchStack* s, int warm, int samples, int fd, const char* label) {
  int n = 12 * s->nbox;
  physData d;
  memset(&d, 0, sizeof(d));
  d.stack = g_stack;
  d.nstack = sizeof(g_stack) / sizeof(double);
  double lambda[MAXROW];
  int state[MAXROW], guess[MAXROW];
  physConstraintSolution sol = {lambda, state, 0, 0, 0};
  physConstraintProblem p = {.nc = 4 * s->nbox, .n = n, .nv = 6 * s->nbox, .J = s->J, .G = s->G, .g = s->g, .mu = s->mu};
  physStatus st = phys_solve_lcp(NULL, &d, &p, &sol);   // the labels a warm start reuses (not measured)
  int pivots = sol.iterations;
  memcpy(guess, state, sizeof(guess));
  p.warm = warm ? guess : NULL;
  double* t = malloc(sizeof(double) * (size_t)samples);
  long long instr = 0;
  int used = 0;
  for (int k = 0; k < samples; k++) {
    if (fd >= 0) ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
    double t0 = now_us();
    measured_solve(&d, &p, &sol);
    t[k] = now_us() - t0;
    if (fd >= 0) ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
    used += sol.warm_used;
  }
  if (fd >= 0 && read(fd, &instr, sizeof(instr)) != sizeof(instr)) instr = -1;
  if (fd >= 0) ioctl(fd, PERF_EVENT_IOC_RESET, 0);
  qsort(t, (size_t)samples, sizeof(double), cmp_double);
  char ins[32];
  if (fd >= 0 && instr >= 0) snprintf(ins, sizeof(ins), "%lld", instr / samples);
  else snprintf(ins, sizeof(ins), "n/a");
  printf("| %-8s | %3d | %-5s | %5d | %-4s | %10s | %8.2f | %.2g |\n", label, 4 * s->nbox, warm ? "warm" : "cold",
         pivots, warm ? (used == samples ? "yes" : "no") : "-", ins, t[samples / 2], sol.residual);
  (void)st;
  free(t);
}

int main(int argc, char** argv) {
  int samples = 2000, only = -1;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--samples") && i + 1 < argc) samples = atoi(argv[++i]);
    if (!strcmp(argv[i], "--only") && i + 1 < argc) only = atoi(argv[++i]);
  }
  if (samples < 1) samples = 1;
  int fd = counter_open();
  if (fd < 0) fprintf(stderr, "bench_lcp: no hardware instruction counter; use callgrind for instructions\n");
  static benchStack s;
  const int nbox[3] = {1, 2, 5};
  printf("| scene    | con | start | pivots (cold) | warm used | instr/solve | us/solve | residual (m/s) |\n");
  printf("|---|---|---|---|---|---|---|---|\n");
  for (int a = 0; a < 3; a++)
    for (int sl = 0; sl < 2; sl++) {
      stack_problem(&s, nbox[a], sl ? 0.5 : 0);
      for (int warm = 0; warm < 2; warm++)
        if (only < 0 || only == 4 * a + 2 * sl + warm) measure(&s, warm, samples, fd, sl ? "sliding" : "resting");
    }
  if (fd >= 0) close(fd);
  return 0;
}
