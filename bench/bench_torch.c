// bench_torch.c - the C API's side of bench/bench_torch.py (issue 18 item 5): one step forward plus backward
// through the public API, at a state the Python script writes: phys_step, then phys_step_vjp (cotangents of the
// state and controls) and phys_step_param_vjp (of the parameters) at the same state with a fixed cotangent of
// the next state. The state is restored before every sample; the median over samples is printed. Then the
// calls physid.torch makes: phys_step_batch and phys_step_vjp_batch with one row (one linearization for the
// state's, the controls' and the parameters' cotangents).
//
// usage: bench_torch STATE_FILE [--samples N] [--param SPEC]... [--contact penalty] MODEL.xml
//   STATE_FILE: three lines of numbers: qpos, qvel, ctrl (the ctrl line may be empty)
// Output: "RESULT\tstep_us=...\tstep_vjp_us=...\tbatch_us=...\tnx=...\tntheta=..." (medians, microseconds;
// step_vjp_us is the forward step, the state's reload and both VJPs: one forward plus backward).
// Times are the process's CPU time (CLOCK_PROCESS_CPUTIME_ID, as bench_torch.py's): time the process waits
// for a core on a loaded machine is not counted. Timing is information, never a pass/fail test.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "physid.h"
#include "physid/derivatives.h"
#include "physid/params.h"

#define MAXPARAM 16

static double now_us(void) {   // the process's CPU time
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return 1e6 * (double)t.tv_sec + 1e-3 * (double)t.tv_nsec;
}

static int cmp_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

// n numbers of one line of f into x; returns how many were read
static int read_line(FILE* f, double* x, int n) {
  char buf[8192];
  if (!fgets(buf, sizeof buf, f)) return 0;
  int k = 0;
  char* p = buf;
  while (k < n) {
    char* e;
    double v = strtod(p, &e);
    if (e == p) break;
    x[k++] = v;
    p = e;
  }
  return k;
}

// the saved state into d (a fresh start: no warm start, time 0)
static void load_state(const physModel* m, physData* d, const double* q, const double* v, const double* u) {
  phys_reset_data(m, d);
  memcpy(d->qpos, q, sizeof(double) * (size_t)m->nq);
  memcpy(d->qvel, v, sizeof(double) * (size_t)m->nv);
  if (m->nu) memcpy(d->ctrl, u, sizeof(double) * (size_t)m->nu);
}

int main(int argc, char** argv) {
  int samples = 200, nspec = 0, contact = -1;
  const char *spec[MAXPARAM], *state = NULL, *model = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--samples") && i + 1 < argc) samples = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--param") && i + 1 < argc && nspec < MAXPARAM) spec[nspec++] = argv[++i];
    else if (!strcmp(argv[i], "--contact") && i + 1 < argc) contact = phys_contact_from_name(argv[++i]);
    else if (!state) state = argv[i];
    else model = argv[i];
  }
  if (!state || !model || samples < 1) {
    fprintf(stderr, "usage: bench_torch STATE_FILE [--samples N] [--param SPEC]... [--contact MODEL] MODEL.xml\n");
    return 2;
  }
  physLog log = {0};
  physModel* m = phys_load(model, NULL, &log);
  if (!m) {
    fprintf(stderr, "bench_torch: %s\n", log.error);
    return 1;
  }
  if (contact >= 0) m->opt.contact = contact;
  physParamTable t;
  if (phys_param_table_build(&t, m, spec, nspec, &log) != PHYS_OK) {
    fprintf(stderr, "bench_torch: %s\n", log.error);
    return 1;
  }
  int nx = 2 * m->nv + m->na;
  double* buf = calloc((size_t)(m->nq + 3 * nx + m->nu + t.ntheta + m->nv + 2 * samples + 4), sizeof(double));
  double *q = buf, *v = q + m->nq, *u = v + m->nv, *xn = u + m->nu + 1, *xb = xn + nx, *ub = xb + nx,
         *tb = ub + m->nu + 1, *ts = tb + t.ntheta + 1, *tv = ts + samples;
  FILE* f = fopen(state, "r");
  int ok = f && read_line(f, q, m->nq) == m->nq && read_line(f, v, m->nv) == m->nv;
  if (ok && m->nu) ok = read_line(f, u, m->nu) == m->nu;
  if (f) fclose(f);
  if (!ok) {
    fprintf(stderr, "bench_torch: %s: needs lines qpos (%d), qvel (%d), ctrl (%d)\n", state, m->nq, m->nv, m->nu);
    return 1;
  }
  for (int i = 0; i < nx; i++) xn[i] = 1.0 / (1 + i);   // a fixed cotangent of the next state
  physData* d = phys_make_data(m);
  for (int s = 0; s < samples; s++) {
    load_state(m, d, q, v, u);
    double t0 = now_us();
    phys_step(m, d);
    double t1 = now_us();
    load_state(m, d, q, v, u);
    double t2 = now_us();
    phys_step(m, d);   // forward: the next state
    load_state(m, d, q, v, u);
    int st = phys_step_vjp(m, d, xn, xb, ub);
    if (t.ntheta && st == PHYS_OK) st = phys_step_param_vjp(m, d, &t, xn, tb);
    double t3 = now_us();
    if (st != PHYS_OK) {
      fprintf(stderr, "bench_torch: the VJP failed (status %d)\n", st);
      return 1;
    }
    ts[s] = t1 - t0;
    tv[s] = t3 - t2;
  }
  qsort(ts, (size_t)samples, sizeof(double), cmp_double);
  qsort(tv, (size_t)samples, sizeof(double), cmp_double);
  double step_us = ts[samples / 2], vjp_us = tv[samples / 2];
  // the calls physid.torch makes: phys_step_batch, then phys_step_vjp_batch (one row; the VJP of the state,
  // controls and parameters from one linearization)
  int ns = m->nq + m->nv + m->na;
  double *x = calloc((size_t)(2 * ns + 2 * nx + m->nu + t.ntheta + 2), sizeof(double)), *x1 = x + ns;
  double *xb1 = x1 + ns, *ub1 = xb1 + nx, *tb1 = ub1 + m->nu + 1;
  memcpy(x, q, sizeof(double) * (size_t)m->nq);
  memcpy(x + m->nq, v, sizeof(double) * (size_t)m->nv);
  for (int s = 0; s < samples; s++) {
    double t0 = now_us();
    int st = phys_step_batch(m, &d, 1, 1, x, u, x1, &log);
    if (st == PHYS_OK) st = phys_step_vjp_batch(m, &d, 1, &t, 1, x, u, xn, xb1, ub1, tb1, &log);
    ts[s] = now_us() - t0;
    if (st != PHYS_OK) {
      fprintf(stderr, "bench_torch: %s\n", log.error);
      return 1;
    }
  }
  qsort(ts, (size_t)samples, sizeof(double), cmp_double);
  printf("RESULT\tstep_us=%.3f\tstep_vjp_us=%.3f\tbatch_us=%.3f\tnx=%d\tntheta=%d\n", step_us, vjp_us,
         ts[samples / 2], nx, t.ntheta);
  free(x);
  phys_free_data(d);
  phys_param_table_free(&t);
  phys_free_model(m);
  free(buf);
  return 0;
}
