// bench_rollout.c - cost of the rollout gradient (src/grad/rollout.c) against the forward rollout alone, per
// step: MuJoCo's humanoid in the air (contacts and limits disabled) by default, T steps (default 100) of
// smooth controls, the loss 0.5 |v|^2 at every step, no parameter table.
// Tasks: forward (phys_rollout), grad_sqrt (phys_rollout_grad, k = ceil(sqrt T): one forward pass, one
// recomputation, T VJPs) and grad_tape (k = 1: no recomputation, T + 1 states stored).
//
// usage: bench_rollout [--T N] [--samples S] [MODEL.xml]
// Instructions: each task runs in a noinline measured_* function, so one callgrind run counts them all:
//   valgrind --tool=callgrind --callgrind-out-file=cg.out bench_rollout --samples 5
//   callgrind_annotate --inclusive=yes cg.out | grep measured_    (divide by samples x T)
// Timing (median over samples) is information, never a pass/fail test.
// Measured (callgrind, humanoid, T = 100, --samples 1, session 32, branch s32-vjp): forward 63.3k instructions
// per step; grad_sqrt 281.2k (4.44x forward; 20 states stored); grad_tape 224.8k (3.55x; 101 states) (earlier:
// 60.2k, 266.8k, 213.1k; at main f583fa1, before save_state stopped zeroing each record's contact room, 63.3k,
// 323.5k, 301.7k). The tape's
// ratio is one step + one phys_step_vjp (2.56x the step, bench_grad) + the limit check of every step; the
// checkpointed gradient adds one more forward pass (the recomputation). Wall time: 5.3, 23.3, 17.8 us/step.
// Session 33 (branch s33-vjp: the last segment's states kept from the forward pass, not recomputed): forward
// 63.3k, grad_sqrt 269.3k (4.25x; 275.0k = 4.34x at main 23f30c0), grad_tape 218.6k (3.45x).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "physid.h"
#include "rollout.h"

#define HUMANOID "/usr/share/mujoco/model/humanoid/humanoid.xml"

// l_t = 0.5 |v|^2
static double vel_loss(void* ctx, int t, const double* qpos, const double* qvel, double* gq, double* gv) {
  const physModel* m = ctx;
  double l = 0;
  (void)t, (void)qpos, (void)gq;
  for (int i = 0; i < m->nv; i++) {
    l += 0.5 * qvel[i] * qvel[i];
    gv[i] = qvel[i];
  }
  return l;
}

__attribute__((noinline)) double measured_forward(const physModel* m, physData* d, int T, const double* u) {
  return phys_rollout(m, d, T, u, vel_loss, (void*)m);
}
__attribute__((noinline)) physStatus measured_grad_sqrt(const physModel* m, physData* d, int T, const double* u,
                                                        double* work, double* xb, double* ub) {
  double L;
  return phys_rollout_grad(m, d, NULL, T, 0, u, vel_loss, (void*)m, work, &L, xb, ub, NULL, NULL);
}
__attribute__((noinline)) physStatus measured_grad_tape(const physModel* m, physData* d, int T, const double* u,
                                                        double* work, double* xb, double* ub) {
  double L;
  return phys_rollout_grad(m, d, NULL, T, 1, u, vel_loss, (void*)m, work, &L, xb, ub, NULL, NULL);
}

// monotonic clock in microseconds
static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec * 1e-3;
}

// ascending order for qsort
static int cmp_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  int T = 100, nsample = 20;
  const char* file = HUMANOID;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--T") && i + 1 < argc) T = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--samples") && i + 1 < argc) nsample = atoi(argv[++i]);
    else if (argv[i][0] != '-') file = argv[i];
    else {
      fprintf(stderr, "usage: bench_rollout [--T N] [--samples S] [MODEL.xml]\n");
      return 2;
    }
  }
  if (T < 1 || nsample < 1) return 2;
  physLog log;
  memset(&log, 0, sizeof log);
  physModel* m = phys_load(file, NULL, &log);
  if (!m) {
    fprintf(stderr, "bench_rollout: cannot load %s: %s\n", file, log.error);
    return 1;
  }
  m->opt.disableflags |= PHYS_DSBL_CONTACT | PHYS_DSBL_LIMIT;
  physData* d = phys_make_data(m);
  double* qpos0 = malloc(sizeof(double) * m->nq);
  double* qvel0 = malloc(sizeof(double) * m->nv);
  memcpy(qpos0, m->qpos0, sizeof(double) * m->nq);
  for (int i = 0; i < m->nv; i++) qvel0[i] = 0.3 * sin(0.7 * i + 0.1);
  double* u = malloc(sizeof(double) * ((size_t)T * m->nu + 1));
  for (int t = 0; t < T; t++)
    for (int i = 0; i < m->nu; i++) {
      const double* rg = m->actuator_ctrlrange + 2 * i;
      double s = 0.5 + 0.3 * sin(0.05 * t + 1.3 * i);
      u[t * m->nu + i] = m->actuator_ctrllimited[i] ? rg[0] + s * (rg[1] - rg[0]) : 2 * s - 1;
    }
  int k = phys_rollout_interval(T, 0);
  size_t nws = phys_rollout_worksize(m, T, k, 0), nwt = phys_rollout_worksize(m, T, 1, 0);
  double* ws = malloc(sizeof(double) * nws);
  double* wt = malloc(sizeof(double) * nwt);
  double* xb = malloc(sizeof(double) * 2 * m->nv);
  double* ub = malloc(sizeof(double) * ((size_t)T * m->nu + 1));
  double* us[3];
  for (int j = 0; j < 3; j++) us[j] = malloc(sizeof(double) * nsample);

  for (int s = 0; s < nsample; s++)
    for (int j = 0; j < 3; j++) {
      memcpy(d->qpos, qpos0, sizeof(double) * m->nq);
      memcpy(d->qvel, qvel0, sizeof(double) * m->nv);
      d->time = 0;
      double t0 = now_us();
      physStatus st = PHYS_OK;
      if (j == 0) measured_forward(m, d, T, u);
      else if (j == 1) st = measured_grad_sqrt(m, d, T, u, ws, xb, ub);
      else st = measured_grad_tape(m, d, T, u, wt, xb, ub);
      us[j][s] = now_us() - t0;
      if (st != PHYS_OK) {
        fprintf(stderr, "bench_rollout: gradient failed (status %d)\n", st);
        return 1;
      }
    }
  static const char* name[3] = {"forward", "grad_sqrt", "grad_tape"};
  double med[3];
  printf("model %s (nv %d, nu %d), T = %d, k = %d, %d samples\n", file, m->nv, m->nu, T, k, nsample);
  printf("workspace: sqrt %zu doubles (%d states), tape %zu doubles (%d states)\n", nws,
         phys_rollout_nstate(T, k), nwt, phys_rollout_nstate(T, 1));
  for (int j = 0; j < 3; j++) {
    qsort(us[j], nsample, sizeof(double), cmp_double);
    med[j] = us[j][nsample / 2];
    printf("%-10s %10.2f us per step  (%.2fx forward)\n", name[j], med[j] / T, med[j] / med[0]);
  }
  for (int j = 0; j < 3; j++) free(us[j]);
  free(qpos0), free(qvel0), free(u), free(ws), free(wt), free(xb), free(ub);
  phys_free_data(d);
  phys_free_model(m);
  return 0;
}
