// test_aba.c - articulated-body forward dynamics against a dense solve with the CRB mass matrix.
#include "chol.h"
#include "dyn/dyn_models.h"
#include "test.h"

// qacc_ref = (M + diag(add))^-1 (tau - c) by dense Cholesky
static void dense_reference(const physModel* m, physData* d, const double* tau, const double* add, double* qacc) {
  int nv = m->nv;
  double* L = malloc(sizeof(double) * nv * nv);
  phys_crb(m, d);
  phys_bias_forces(m, d);
  memcpy(L, d->qM, sizeof(double) * nv * nv);
  for (int i = 0; i < nv; i++) {
    if (add) L[i * nv + i] += add[i];
    qacc[i] = tau[i] - d->qfrc_bias[i];
  }
  CHECK(phys_chol_factor(L, nv, 0) == nv);
  phys_chol_solve(qacc, L, qacc, nv);
  free(L);
}

static void check_model(physModel* m, uint64_t seed) {
  physRng r;
  phys_rng_seed(&r, seed);
  physData* d = phys_make_data(m);
  int nv = m->nv;
  double *tau = calloc(nv, sizeof(double)), *add = calloc(nv, sizeof(double));
  double *a1 = calloc(nv, sizeof(double)), *a2 = calloc(nv, sizeof(double)), *t = calloc(nv, sizeof(double));
  for (int trial = 0; trial < 10; trial++) {
    tm_rand_state(m, d, &r, 3);
    m->opt.disableflags = trial % 3 == 2 ? PHYS_DSBL_GRAVITY : 0;
    for (int i = 0; i < nv; i++) {
      tau[i] = phys_rng_range(&r, -5, 5);
      add[i] = phys_rng_range(&r, 0, 0.5);
    }
    tm_forward_kin(m, d);
    size_t mark = phys_stack_mark(d);
    for (int with_add = 0; with_add < 2; with_add++) {
      const double* ad = with_add ? add : NULL;
      phys_aba(m, d, tau, ad, a1);
      dense_reference(m, d, tau, ad, a2);
      double err = 0, scale = 0;
      for (int i = 0; i < nv; i++) {
        err = fmax(err, fabs(a1[i] - a2[i]));
        scale = fmax(scale, fabs(a2[i]));
      }
      CHECK_MSG(err <= 1e-12 * scale, "trial %d add %d: |aba - dense| %g, |qacc| %g", trial, with_add, err, scale);
      // inverse check: rnea(qacc) + (armature + add) qacc == tau
      phys_rnea(m, d, a1, t);
      err = 0;
      for (int i = 0; i < nv; i++)
        err = fmax(err, fabs(t[i] + (m->dof_armature[i] + (ad ? ad[i] : 0)) * a1[i] - tau[i]));
      CHECK_MSG(err < 1e-11 * fmax(1, scale), "trial %d: inverse residual %g", trial, err);
    }
    CHECK(phys_stack_mark(d) == mark);
    CHECK(d->nwarning == 0);
  }
  m->opt.disableflags = 0;
  free(tau);
  free(add);
  free(a1);
  free(a2);
  free(t);
  phys_free_data(d);
  phys_free_model(m);
}

// pendulum analytic: qacc = (tau - m g L sin t) / (I + m L^2 + armature)
static void test_pendulum(void) {
  physModel* m = tm_pendulum();
  physData* d = phys_make_data(m);
  d->qpos[0] = 0.6;
  d->qvel[0] = 2;
  tm_forward_kin(m, d);
  double tau = 0.3, qacc;
  phys_aba(m, d, &tau, NULL, &qacc);
  CHECK_NEAR(qacc, (tau - 1.5 * 9.81 * 0.7 * sin(0.6)) / (1e-3 + 1.5 * 0.49), 1e-13);
  phys_free_data(d);
  phys_free_model(m);
}

int main(void) {
  test_pendulum();
  check_model(tm_double_pendulum(1), 1);
  check_model(tm_hinge_tree(2), 2);
  check_model(tm_tree(3, 1), 3);
  check_model(tm_tree(4, 0), 4);
  return test_done();
}
