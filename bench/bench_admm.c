// bench_admm.c - cost of one cone / ccp solve on 4, 8 and 20 contacts (1, 2 and 5 unit cubes sliding on
// a plane on their 4 bottom corners, mu = 0.5, dt = 0.01; G block diagonal, each block singular).
// Prints ADMM iterations, user-space instructions per solve (perf_event_open; "n/a" where the kernel
// refuses) and microseconds per solve (median of 201). Information only, not a test.
//
// usage: bench_admm [MODEL.xml [NBOX]]  (a model for the options and the arena, default tests/data/box.xml;
// NBOX: only that many cubes). Without perf counters, count instructions with
//   valgrind --tool=callgrind --toggle-collect=phys_solve_cone --toggle-collect=phys_solve_ccp bench_admm
//   tests/data/box.xml NBOX   and divide each function's inclusive count by 201.
#include <linux/perf_event.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "contact.h"
#include "physid.h"

#define NSAMPLE 201

// a user-space instruction counter, or -1
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

static int cmp_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

// G and g of nbox unit cubes (1 kg, half size 0.1) sliding at 1 m/s in direction 0.3 rad (different per
// box) on their bottom corners: per box G_b = J_b M^-1 J_b', g_b = J_b v_f
static void make_problem(double* G, double* g, double* mu, int nbox) {
  int n = 12 * nbox;
  memset(G, 0, sizeof(double) * n * n);
  const double h = 0.1, m = 1, I = m * (2 * h) * (2 * h) / 6, dt = 0.01;
  for (int b = 0; b < nbox; b++) {
    double J[12][6], th = 0.3 + 0.7 * b, vf[6] = {cos(th), sin(th), -9.81 * dt, 0, 0, 0};
    double minv[6] = {1 / m, 1 / m, 1 / m, 1 / I, 1 / I, 1 / I};
    for (int i = 0; i < 4; i++) {
      double r[3] = {(i & 1) ? h : -h, (i & 2) ? h : -h, -h}, e[3][3] = {{0, 0, 1}, {1, 0, 0}, {0, 1, 0}};
      for (int k = 0; k < 3; k++) {
        double* row = J[3 * i + k];
        row[0] = e[k][0], row[1] = e[k][1], row[2] = e[k][2];
        row[3] = r[1] * e[k][2] - r[2] * e[k][1];
        row[4] = r[2] * e[k][0] - r[0] * e[k][2];
        row[5] = r[0] * e[k][1] - r[1] * e[k][0];
      }
      mu[4 * b + i] = 0.5;
    }
    for (int i = 0; i < 12; i++) {
      double s = 0;
      for (int k = 0; k < 6; k++) s += J[i][k] * vf[k];
      g[12 * b + i] = s;
      for (int j = 0; j < 12; j++) {
        double t = 0;
        for (int k = 0; k < 6; k++) t += J[i][k] * minv[k] * J[j][k];
        G[(12 * b + i) * n + 12 * b + j] = t;
      }
    }
  }
}

int main(int argc, char** argv) {
  physLog log;
  memset(&log, 0, sizeof(log));
  physModel* m = phys_load(argc > 1 ? argv[1] : "tests/data/box.xml", NULL, &log);
  if (!m) {
    fprintf(stderr, "bench_admm: %s\n", log.error);
    return 1;
  }
  physData* d = phys_make_data(m);
  int fd = counter_open();
  static double G[60 * 60], g[60], mu[20], lambda[60], sample[NSAMPLE];
  static int state[60];
  const int nboxes[3] = {1, 2, 5};
  printf("solver  contacts  iterations  instructions/solve  us/solve (tolerance %g, cap %d)\n",
         m->opt.solver_tolerance, m->opt.solver_iterations);
  for (int solver = 0; solver < 2; solver++) {
    for (int k = 0; k < 3; k++) {
      int nbox = nboxes[k], nc = 4 * nbox;
      if (argc > 2 && nbox != atoi(argv[2])) continue;
      make_problem(G, g, mu, nbox);
      physConstraintProblem p = {.nc = nc, .n = 3 * nc, .G = G, .g = g, .mu = mu};
      physConstraintSolution sol = {lambda, state, 0, 0, 0};
      long long count = -1;
      for (int s = 0; s < NSAMPLE; s++) {
        if (fd >= 0 && s == 0) {
          ioctl(fd, PERF_EVENT_IOC_RESET, 0);
          ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
        }
        double t0 = now_us();
        if (solver == 0) phys_solve_cone(m, d, &p, &sol);
        else phys_solve_ccp(m, d, &p, &sol);
        sample[s] = now_us() - t0;
        if (fd >= 0 && s == 0) {
          ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
          if (read(fd, &count, sizeof(count)) != sizeof(count)) count = -1;
        }
      }
      qsort(sample, NSAMPLE, sizeof(double), cmp_double);
      char ins[32] = "n/a";
      if (count >= 0) snprintf(ins, sizeof(ins), "%lld", count);
      printf("%-6s  %8d  %10d  %18s  %8.2f  (residual %.1e)\n", solver ? "ccp" : "cone", nc, sol.iterations,
             ins, sample[NSAMPLE / 2], sol.residual);
    }
  }
  if (fd >= 0) close(fd);
  phys_free_data(d);
  phys_free_model(m);
  return 0;
}
