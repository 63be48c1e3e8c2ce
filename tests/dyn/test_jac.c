// test_jac.c - point, rotation and com Jacobians against finite differences along each dof; the
// transposed product phys_apply_force against J' f.
#include "dyn/dyn_models.h"
#include "test.h"

static void test_model(physModel* m, uint64_t seed) {
  physRng r;
  phys_rng_seed(&r, seed);
  physData *d = phys_make_data(m), *dp = phys_make_data(m), *dm = phys_make_data(m);
  int nv = m->nv;
  double *jp = malloc(sizeof(double) * 3 * nv), *jr = malloc(sizeof(double) * 3 * nv), *e = calloc(nv, sizeof(double));
  double *qfrc = calloc(nv, sizeof(double));
  const double h = 1e-6;
  tm_rand_state(m, d, &r, 1);
  tm_forward_kin(m, d);
  double ep = 0, er = 0, ec = 0, ef = 0;
  for (int s = 0; s < m->nsite; s++) {
    phys_jac_site(m, d, s, jp, jr);
    for (int j = 0; j < nv; j++) {
      memset(e, 0, sizeof(double) * nv);
      e[j] = 1;
      memcpy(dp->qpos, d->qpos, sizeof(double) * m->nq);
      memcpy(dm->qpos, d->qpos, sizeof(double) * m->nq);
      phys_integrate_pos(m, dp->qpos, e, h);
      phys_integrate_pos(m, dm->qpos, e, -h);
      phys_kinematics(m, dp);
      phys_kinematics(m, dm);
      // rotation: skew part of (R+ - R-)/2h R'
      double Rd[9], Rt[9], W[9];
      for (int i = 0; i < 9; i++) Rd[i] = (dp->site_xmat[9 * s + i] - dm->site_xmat[9 * s + i]) / (2 * h);
      for (int i = 0; i < 3; i++)
        for (int k = 0; k < 3; k++) Rt[3 * i + k] = d->site_xmat[9 * s + 3 * k + i];
      phys_mat_mul3(W, Rd, Rt);
      double w[3] = {W[7], W[2], W[3]};
      for (int i = 0; i < 3; i++) {
        ep = fmax(ep, fabs(jp[i * nv + j] - (dp->site_xpos[3 * s + i] - dm->site_xpos[3 * s + i]) / (2 * h)));
        er = fmax(er, fabs(jr[i * nv + j] - w[i]));
      }
      int b = m->site_bodyid[s];
      if (b > 0) {
        double jc[3 * 64];
        phys_jac_com(m, d, b, jc);
        for (int i = 0; i < 3; i++)
          ec = fmax(ec, fabs(jc[i * nv + j] - (dp->xipos[3 * b + i] - dm->xipos[3 * b + i]) / (2 * h)));
      }
    }
    // apply_force: qfrc == jp' f + jr' t
    double f[3] = {0.3, -1.2, 0.7}, t[3] = {-0.4, 0.1, 0.9};
    memset(qfrc, 0, sizeof(double) * nv);
    phys_apply_force(m, d, qfrc, m->site_bodyid[s], d->site_xpos + 3 * s, f, t);
    for (int j = 0; j < nv; j++) {
      double ref = 0;
      for (int i = 0; i < 3; i++) ref += jp[i * nv + j] * f[i] + jr[i * nv + j] * t[i];
      ef = fmax(ef, fabs(qfrc[j] - ref));
    }
  }
  CHECK_MSG(ep < 1e-8, "position jacobian error %g", ep);
  CHECK_MSG(er < 1e-8, "rotation jacobian error %g", er);
  CHECK_MSG(ec < 1e-8, "com jacobian error %g", ec);
  CHECK_MSG(ef < 1e-14, "apply_force error %g", ef);
  // world body: zero jacobian
  phys_jac(m, d, d->xpos, 0, jp, jr);
  for (int i = 0; i < 3 * nv; i++) CHECK(jp[i] == 0 && jr[i] == 0);
  free(jp);
  free(jr);
  free(e);
  free(qfrc);
  phys_free_data(d);
  phys_free_data(dp);
  phys_free_data(dm);
  phys_free_model(m);
}

int main(void) {
  test_model(tm_tree(1, 1), 1);
  test_model(tm_tree(2, 0), 2);
  return test_done();
}
