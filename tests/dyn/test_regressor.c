// test_regressor.c - Y(q, v, qacc) pi == rnea for the model's own inertial parameters; linearity in pi
// (a second parameter set gives the rnea of the model with those parameters); inertial_params vs cinert.
#include "dyn/dyn_models.h"
#include "test.h"

// set body b's inertial data from a parameter vector whose inertia about the com is diagonalizable
static void set_params(physModel* m, int b, const double pi[10]) {
  double mass = pi[0], c[3] = {pi[1] / mass, pi[2] / mass, pi[3] / mass}, cc = phys_dot3(c, c);
  double Ic[9] = {pi[4] - mass * (cc - c[0] * c[0]), pi[7] + mass * c[0] * c[1], pi[8] + mass * c[0] * c[2], 0,
                  pi[5] - mass * (cc - c[1] * c[1]), pi[9] + mass * c[1] * c[2], 0, 0,
                  pi[6] - mass * (cc - c[2] * c[2])};
  Ic[3] = Ic[1];
  Ic[6] = Ic[2];
  Ic[7] = Ic[5];
  m->body_mass[b] = mass;
  phys_copy3(m->body_ipos + 3 * b, c);
  phys_eig3(m->body_inertia + 3 * b, m->body_iquat + 4 * b, Ic);
}

static void check_model(physModel* m, uint64_t seed) {
  physRng r;
  phys_rng_seed(&r, seed);
  physData* d = phys_make_data(m);
  int nv = m->nv, np = 10 * (m->nbody - 1);
  double *Y = malloc(sizeof(double) * nv * np), *pi = malloc(sizeof(double) * np);
  double *qacc = malloc(sizeof(double) * nv), *tau = malloc(sizeof(double) * nv);
  for (int b = 1; b < m->nbody; b++) phys_inertial_params(m, b, pi + 10 * (b - 1));
  for (int trial = 0; trial < 5; trial++) {
    tm_rand_state(m, d, &r, 3);
    for (int i = 0; i < nv; i++) qacc[i] = phys_rng_range(&r, -4, 4);
    tm_forward_kin(m, d);
    phys_rnea(m, d, qacc, tau);
    phys_regressor(m, d, qacc, Y);
    double err = 0, scale = 0;
    for (int i = 0; i < nv; i++) {
      double s = 0;
      for (int k = 0; k < np; k++) s += Y[i * np + k] * pi[k];
      err = fmax(err, fabs(s - tau[i]));
      scale = fmax(scale, fabs(tau[i]));
    }
    CHECK_MSG(err < 1e-12 * fmax(1, scale), "seed %d trial %d: |Y pi - rnea| %g", (int)seed, trial, err);
    // cinert from the parameters: mass, first moment in the world
    for (int b = 1; b < m->nbody; b++) {
      const double* p = pi + 10 * (b - 1);
      double hw[3];
      phys_mat_vec3(hw, d->xmat + 9 * b, p + 1);
      for (int i = 0; i < 3; i++) CHECK_NEAR(d->cinert[10 * b + 1 + i], hw[i] + p[0] * d->xpos[3 * b + i], 1e-13);
    }
  }
  // new parameters: shift each body's mass and com, rnea with the new model == Y(old state) pi_new
  double* pi2 = malloc(sizeof(double) * np);
  for (int b = 1; b < m->nbody; b++) {
    double* p = pi2 + 10 * (b - 1);
    memcpy(p, pi + 10 * (b - 1), 10 * sizeof(double));
    double s = phys_rng_range(&r, 0.5, 1.5);
    for (int k = 0; k < 10; k++) p[k] *= s;
    p[1] += 0.01 * p[0];
    set_params(m, b, p);
    double back[10];
    phys_inertial_params(m, b, back);
    for (int k = 0; k < 10; k++) CHECK_NEAR(back[k], p[k], 1e-12);
  }
  tm_forward_kin(m, d);
  phys_rnea(m, d, qacc, tau);
  phys_regressor(m, d, qacc, Y);
  double err = 0;
  for (int i = 0; i < nv; i++) {
    double s = 0;
    for (int k = 0; k < np; k++) s += Y[i * np + k] * pi2[k];
    err = fmax(err, fabs(s - tau[i]) / fmax(1, fabs(tau[i])));
  }
  CHECK_MSG(err < 1e-12, "new parameters: %g", err);
  free(pi2);
  free(Y);
  free(pi);
  free(qacc);
  free(tau);
  phys_free_data(d);
  phys_free_model(m);
}

int main(void) {
  check_model(tm_pendulum(), 1);
  check_model(tm_double_pendulum(2), 2);
  check_model(tm_hinge_tree(3), 3);
  check_model(tm_tree(4, 1), 4);
  return test_done();
}
