// bench_contact_deriv.c - cost of the constraint geometry derivatives (src/grad/contact_deriv.c) on MuJoCo's
// humanoid lying bent on the floor (17 contacts, 2 limit rows), beside the work that builds the problem.
//
// usage: bench_contact_deriv [--samples N] [MODEL.xml]   (default: the humanoid)
// Tasks (each a noinline measured_* function, so one callgrind run counts them all):
//   collide_assemble  phys_collision + phys_constraint_assemble (the problem the derivatives are taken of)
//   jvp               phys_constraint_jvp along one random dq (dJ beta, dJ' alpha, ddist)
//   vjp               phys_constraint_vjp (alpha' J beta + gamma' dist)
//   jacobian          phys_constraint_jacobian (all three matrices)
//   dJ                phys_constraint_dJ along one dq (the n x nv matrix)
//   vjp_matrix        phys_constraint_vjp_matrix for a full n x nv weight matrix
//   valgrind --tool=callgrind --callgrind-out-file=cg.out bench_contact_deriv --samples 20
//   callgrind_annotate --inclusive=yes cg.out | grep measured_    (divide by the samples)
// Timing is information, never a pass/fail test.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collision.h"
#include "contact.h"
#include "contact_deriv.h"
#include "factor.h"
#include "physid.h"
#include "rot.h"

// monotonic clock in microseconds
static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return 1e6 * (double)t.tv_sec + 1e-3 * (double)t.tv_nsec;
}

//---------------------------------------------------------------------------------------------------------
// measured calls (noinline: callgrind targets)

__attribute__((noinline)) void measured_collide_assemble(const physModel* m, physData* d, physConstraintProblem* p) {
  double *J, *G, *g, *mu;
  phys_collision(m, d);
  phys_constraint_assemble(m, d, d->contact, d->ncon, d->qvel, NULL, p, &J, &G, &g, &mu);
}
__attribute__((noinline)) void measured_jvp(const physModel* m, physData* d, const physConstraintProblem* p,
                                            const double* dq, const double* alpha, const double* beta, double* Jb,
                                            double* Ja, double* dd) {
  phys_constraint_jvp(m, d, p, dq, alpha, beta, Jb, Ja, dd);
}
__attribute__((noinline)) void measured_vjp(const physModel* m, physData* d, const physConstraintProblem* p,
                                            const double* alpha, const double* beta, const double* gamma,
                                            double* qbar) {
  phys_constraint_vjp(m, d, p, alpha, beta, gamma, qbar);
}
__attribute__((noinline)) void measured_jacobian(const physModel* m, physData* d, const physConstraintProblem* p,
                                                 const double* alpha, const double* beta, double* Mb, double* Ma,
                                                 double* Md) {
  phys_constraint_jacobian(m, d, p, alpha, beta, Mb, Ma, Md);
}

__attribute__((noinline)) void measured_dJ(const physModel* m, physData* d, const physConstraintProblem* p,
                                           const double* dq, double* dJ) {
  phys_constraint_dJ(m, d, p, dq, dJ);
}
__attribute__((noinline)) void measured_vjp_matrix(const physModel* m, physData* d, const physConstraintProblem* p,
                                                   const double* A, const double* gamma, double* qbar) {
  phys_constraint_vjp_matrix(m, d, p, A, gamma, qbar);
}

// the humanoid's test pose (tests/grad/test_contact_deriv.c): on its back, joints 0.1 sin(1.7 k), 9 cm up
static void pose(const physModel* m, physData* d) {
  double y[3] = {0, 1, 0};
  memset(d->qpos, 0, sizeof(double) * (size_t)m->nq);
  d->qpos[2] = 0.09;
  phys_axisangle2quat(d->qpos + 3, y, -M_PI / 2 + 0.05);
  for (int k = 7; k < m->nq; k++) d->qpos[k] = 0.1 * sin(1.7 * k);
}

int main(int argc, char** argv) {
  int samples = 200;
  const char* file = "/usr/share/mujoco/model/humanoid/humanoid.xml";
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--samples") == 0 && i + 1 < argc) {
      samples = atoi(argv[++i]);
    } else if (argv[i][0] != '-') {
      file = argv[i];
    } else {
      fprintf(stderr, "usage: bench_contact_deriv [--samples N] [MODEL.xml]\n");
      return 2;
    }
  }
  if (samples <= 0) return 2;
  physLog log;
  memset(&log, 0, sizeof log);
  physModel* m = phys_load(file, NULL, &log);
  if (!m) {
    fprintf(stderr, "bench_contact_deriv: %s\n", log.error);
    return 1;
  }
  physData* d = phys_make_data(m);
  pose(m, d);
  phys_kinematics(m, d);
  phys_com_pos(m, d);
  phys_com_vel(m, d);
  phys_crb(m, d);
  phys_factor_m(m, d->qLD, d->qM, NULL);
  physConstraintProblem p;
  size_t mark = phys_stack_mark(d);
  measured_collide_assemble(m, d, &p);
  int nv = m->nv, n = p.n;
  double* buf = calloc((size_t)(4 * n + 6 * nv + 4 * n * nv + nv * nv + 8), sizeof(double));
  double *alpha = buf, *gamma = alpha + n, *Jb = gamma + n, *dd = Jb + n, *beta = dd + n, *dq = beta + nv;
  double *Ja = dq + nv, *qbar = Ja + nv, *Mb = qbar + nv, *Md = Mb + (size_t)n * nv, *Ma = Md + (size_t)n * nv;
  double *dJ = Ma + (size_t)nv * nv, *A = dJ + (size_t)n * nv;
  for (int i = 0; i < n; i++) alpha[i] = sin(1.3 * i + 0.2), gamma[i] = cos(0.7 * i);
  for (int j = 0; j < nv; j++) beta[j] = sin(0.9 * j + 1), dq[j] = cos(1.1 * j);
  for (int i = 0; i < n * nv; i++) A[i] = sin(0.37 * i);
  printf("# %s: nv %d, %d contacts, %d limit rows; %d samples\n", file, nv, p.nc, p.nl, samples);
  double t[6] = {0, 0, 0, 0, 0, 0};
  for (int s = 0; s < samples; s++) {
    double t0 = now_us();
    measured_jvp(m, d, &p, dq, alpha, beta, Jb, Ja, dd);
    double t1 = now_us();
    measured_vjp(m, d, &p, alpha, beta, gamma, qbar);
    double t2 = now_us();
    measured_jacobian(m, d, &p, alpha, beta, Mb, Ma, Md);
    double t3 = now_us();
    size_t mk = phys_stack_mark(d);
    physConstraintProblem p2;
    measured_collide_assemble(m, d, &p2);
    phys_stack_free(d, mk);
    double t4 = now_us();
    measured_dJ(m, d, &p, dq, dJ);
    double t5 = now_us();
    measured_vjp_matrix(m, d, &p, A, gamma, qbar);
    double t6 = now_us();
    t[0] += t4 - t3, t[1] += t1 - t0, t[2] += t2 - t1, t[3] += t3 - t2, t[4] += t5 - t4, t[5] += t6 - t5;
  }
  const char* name[6] = {"collide_assemble", "jvp", "vjp", "jacobian", "dJ", "vjp_matrix"};
  for (int k = 0; k < 6; k++) printf("RESULT\t%s\tmean_us=%.2f\n", name[k], t[k] / samples);
  phys_stack_free(d, mark);
  free(buf);
  phys_free_data(d);
  phys_free_model(m);
  return 0;
}
