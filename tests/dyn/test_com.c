// test_com.c - cdof, cvel, cdof_dot and cinert against finite differences of the kinematics and the
// kinetic energy of each body computed from finite-difference velocities.
#include "dyn/dyn_models.h"
#include "spatial.h"
#include "test.h"

// kinematics at qpos (+) dt*qvel of data src, into dst
static void kin_at(const physModel* m, const physData* src, physData* dst, double dt) {
  memcpy(dst->qpos, src->qpos, sizeof(double) * (size_t)m->nq);
  memcpy(dst->qvel, src->qvel, sizeof(double) * (size_t)m->nv);
  phys_integrate_pos(m, dst->qpos, src->qvel, dt);
  tm_forward_kin(m, dst);
}

// body velocities from central differences: linear velocity of the com, world angular velocity from
// Rdot R' (skew part)
static void fd_body_velocity(const physModel* m, const physData* dp, const physData* dm, const physData* d,
                             int b, double h, double vcom[3], double w[3]) {
  double Rd[9], W[9], Rt[9];
  for (int i = 0; i < 3; i++) vcom[i] = (dp->xipos[3 * b + i] - dm->xipos[3 * b + i]) / (2 * h);
  for (int i = 0; i < 9; i++) Rd[i] = (dp->xmat[9 * b + i] - dm->xmat[9 * b + i]) / (2 * h);
  for (int i = 0; i < 3; i++)
    for (int k = 0; k < 3; k++) Rt[3 * i + k] = d->xmat[9 * b + 3 * k + i];
  phys_mat_mul3(W, Rd, Rt);
  w[0] = 0.5 * (W[7] - W[5]);
  w[1] = 0.5 * (W[2] - W[6]);
  w[2] = 0.5 * (W[3] - W[1]);
  (void)m;
}

static void test_velocities(uint64_t seed, int with_free) {
  physRng r;
  phys_rng_seed(&r, seed);
  physModel* m = tm_tree(seed, with_free);
  physData *d = phys_make_data(m), *dp = phys_make_data(m), *dm = phys_make_data(m);
  const double h = 1e-6;
  for (int trial = 0; trial < 5; trial++) {
    tm_rand_state(m, d, &r, 2);
    tm_forward_kin(m, d);
    kin_at(m, d, dp, h);
    kin_at(m, d, dm, -h);
    double ev = 0, ed = 0, ek = 0;
    for (int b = 1; b < m->nbody; b++) {
      double vcom[3], w[3], v[3];
      fd_body_velocity(m, dp, dm, d, b, h, vcom, w);
      // cvel: angular part and the velocity of the com point
      phys_point_velocity(v, d, b, d->xipos + 3 * b);
      for (int i = 0; i < 3; i++) {
        ev = fmax(ev, fabs(d->cvel[6 * b + i] - w[i]));
        ev = fmax(ev, fabs(v[i] - vcom[i]));
      }
      // kinetic energy: 0.5 cvel . cinert cvel == 0.5 m |vcom|^2 + 0.5 w' Ic w
      double f[6], Ic[6], Iw[3];
      phys_inert_mul(f, d->cinert + 10 * b, d->cvel + 6 * b);
      phys_sym3_rot_diag(Ic, d->ximat + 9 * b, m->body_inertia + 3 * b);
      phys_sym3_mul(Iw, Ic, w);
      double T1 = 0.5 * phys_dot6(d->cvel + 6 * b, f);
      double T2 = 0.5 * m->body_mass[b] * phys_dot3(vcom, vcom) + 0.5 * phys_dot3(w, Iw);
      ek = fmax(ek, fabs(T1 - T2) / fmax(1, fabs(T2)));
    }
    // cdof_dot == d/dt cdof along the motion
    for (int j = 0; j < 6 * m->nv; j++) ed = fmax(ed, fabs(d->cdof_dot[j] - (dp->cdof[j] - dm->cdof[j]) / (2 * h)));
    CHECK_MSG(ev < 1e-8, "seed %d trial %d: cvel error %g", (int)seed, trial, ev);
    CHECK_MSG(ed < 1e-8, "seed %d trial %d: cdof_dot error %g", (int)seed, trial, ed);
    CHECK_MSG(ek < 1e-8, "seed %d trial %d: kinetic energy error %g", (int)seed, trial, ek);
  }
  phys_free_data(d);
  phys_free_data(dp);
  phys_free_data(dm);
  phys_free_model(m);
}

// each cdof column is the motion of the bodies for a unit velocity of that dof: compare the velocity of
// every downstream site point with a finite difference along e_j
static void test_cdof_columns(void) {
  physRng r;
  phys_rng_seed(&r, 21);
  physModel* m = tm_tree(4, 1);
  physData *d = phys_make_data(m), *dp = phys_make_data(m), *dm = phys_make_data(m);
  tm_rand_state(m, d, &r, 1);
  const double h = 1e-6;
  double err = 0;
  for (int j = 0; j < m->nv; j++) {
    memset(d->qvel, 0, sizeof(double) * (size_t)m->nv);
    d->qvel[j] = 1;
    tm_forward_kin(m, d);
    kin_at(m, d, dp, h);
    kin_at(m, d, dm, -h);
    for (int s = 0; s < m->nsite; s++) {
      double v[3];
      phys_point_velocity(v, d, m->site_bodyid[s], d->site_xpos + 3 * s);
      for (int i = 0; i < 3; i++)
        err = fmax(err, fabs(v[i] - (dp->site_xpos[3 * s + i] - dm->site_xpos[3 * s + i]) / (2 * h)));
    }
  }
  CHECK_MSG(err < 1e-8, "site velocity error %g", err);
  // free joint translation dofs are constant unit vectors; their cdof_dot is zero
  CHECK(m->jnt_type[0] == PHYS_JNT_FREE);
  for (int i = 0; i < 18; i++) CHECK(d->cdof_dot[i] == 0);
  phys_free_data(d);
  phys_free_data(dp);
  phys_free_data(dm);
  phys_free_model(m);
}

// cinert of a body: mass and first moment about the origin
static void test_cinert(void) {
  physRng r;
  phys_rng_seed(&r, 2);
  physModel* m = tm_tree(9, 1);
  physData* d = phys_make_data(m);
  tm_rand_state(m, d, &r, 1);
  tm_forward_kin(m, d);
  for (int b = 0; b < m->nbody; b++) {
    CHECK_NEAR(d->cinert[10 * b], m->body_mass[b], 0);
    for (int i = 0; i < 3; i++) CHECK_NEAR(d->cinert[10 * b + 1 + i], m->body_mass[b] * d->xipos[3 * b + i], 1e-14);
  }
  phys_free_data(d);
  phys_free_model(m);
}

int main(void) {
  test_velocities(1, 1);
  test_velocities(2, 1);
  test_velocities(3, 0);
  test_cdof_columns();
  test_cinert();
  return test_done();
}
