// test_crb.c - the mass matrix: symmetric positive definite, columns equal to inverse dynamics of unit
// accelerations, M qacc + c == rnea, and v'Mv/2 equal to the kinetic energy from finite differences.
#include "chol.h"
#include "dyn/dyn_models.h"
#include "test.h"

static void check_model(physModel* m, uint64_t seed) {
  physRng r;
  phys_rng_seed(&r, seed);
  physData* d = phys_make_data(m);
  int nv = m->nv;
  double* L = malloc(sizeof(double) * nv * nv);
  double *e = calloc(nv, sizeof(double)), *t0 = calloc(nv, sizeof(double)), *t1 = calloc(nv, sizeof(double));
  for (int trial = 0; trial < 5; trial++) {
    tm_rand_state(m, d, &r, 2);
    tm_forward_kin(m, d);
    phys_crb(m, d);
    // symmetric, positive definite
    double asym = 0, scale = 0;
    for (int i = 0; i < nv * nv; i++) scale = fmax(scale, fabs(d->qM[i]));
    for (int i = 0; i < nv; i++)
      for (int j = 0; j < nv; j++) asym = fmax(asym, fabs(d->qM[i * nv + j] - d->qM[j * nv + i]));
    CHECK(asym == 0);
    memcpy(L, d->qM, sizeof(double) * nv * nv);
    CHECK(phys_chol_factor(L, nv, 0) == nv);
    // column j == rnea(e_j) - rnea(0) (plus armature on the diagonal)
    phys_rnea(m, d, NULL, t0);
    double err = 0;
    for (int j = 0; j < nv; j++) {
      memset(e, 0, sizeof(double) * nv);
      e[j] = 1;
      phys_rnea(m, d, e, t1);
      for (int i = 0; i < nv; i++) {
        double mij = d->qM[i * nv + j] - (i == j ? m->dof_armature[j] : 0);
        err = fmax(err, fabs(mij - (t1[i] - t0[i])));
      }
    }
    CHECK_MSG(err < 1e-12 * fmax(1, scale), "trial %d: column error %g", trial, err);
    // M qacc + c == rnea(qacc) + armature qacc for a random qacc
    for (int i = 0; i < nv; i++) e[i] = phys_rng_range(&r, -3, 3);
    phys_rnea(m, d, e, t1);
    phys_bias_forces(m, d);
    err = 0;
    for (int i = 0; i < nv; i++) {
      double s = d->qfrc_bias[i] - m->dof_armature[i] * e[i];
      for (int j = 0; j < nv; j++) s += d->qM[i * nv + j] * e[j];
      err = fmax(err, fabs(s - t1[i]) / fmax(1, fabs(t1[i])));
    }
    CHECK_MSG(err < 1e-12, "trial %d: M qacc + c vs rnea %g", trial, err);
    // kinetic energy 0.5 v'(M - armature)v == sum_b 0.5 (m |vcom|^2 + w' Ic w), velocities by differences
    double T = 0, Tfd = 0, h = 1e-6;
    for (int i = 0; i < nv; i++)
      for (int j = 0; j < nv; j++) T += 0.5 * d->qvel[i] * (d->qM[i * nv + j] - (i == j) * m->dof_armature[i]) * d->qvel[j];
    physData *dp = phys_make_data(m), *dm = phys_make_data(m);
    memcpy(dp->qpos, d->qpos, sizeof(double) * m->nq);
    memcpy(dm->qpos, d->qpos, sizeof(double) * m->nq);
    phys_integrate_pos(m, dp->qpos, d->qvel, h);
    phys_integrate_pos(m, dm->qpos, d->qvel, -h);
    phys_kinematics(m, dp);
    phys_kinematics(m, dm);
    for (int b = 1; b < m->nbody; b++) {
      double v[3], Rd[9], Rt[9], W[9], w[3], Ic[6], Iw[3];
      for (int i = 0; i < 3; i++) v[i] = (dp->xipos[3 * b + i] - dm->xipos[3 * b + i]) / (2 * h);
      for (int i = 0; i < 9; i++) Rd[i] = (dp->xmat[9 * b + i] - dm->xmat[9 * b + i]) / (2 * h);
      for (int i = 0; i < 3; i++)
        for (int k = 0; k < 3; k++) Rt[3 * i + k] = d->xmat[9 * b + 3 * k + i];
      phys_mat_mul3(W, Rd, Rt);
      w[0] = W[7];
      w[1] = W[2];
      w[2] = W[3];
      phys_sym3_rot_diag(Ic, d->ximat + 9 * b, m->body_inertia + 3 * b);
      phys_sym3_mul(Iw, Ic, w);
      Tfd += 0.5 * m->body_mass[b] * phys_dot3(v, v) + 0.5 * phys_dot3(w, Iw);
    }
    CHECK_REL(T, Tfd, 1e-8, 1);
    phys_free_data(dp);
    phys_free_data(dm);
  }
  free(L);
  free(e);
  free(t0);
  free(t1);
  phys_free_data(d);
  phys_free_model(m);
}

int main(void) {
  check_model(tm_pendulum(), 1);
  check_model(tm_double_pendulum(2), 2);
  check_model(tm_hinge_tree(3), 3);
  check_model(tm_tree(4, 1), 4);
  check_model(tm_tree(5, 0), 5);
  return test_done();
}
