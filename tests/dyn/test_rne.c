// test_rne.c - inverse dynamics: pendulum in closed form, Euler's equations of a free body, the
// Coriolis/centrifugal terms from Lagrange's equations (finite differences of M) and gravity as the
// gradient of the potential energy.
#include "dyn/dyn_models.h"
#include "test.h"

// tau = (Iyy + m L^2) qacc + m g L sin(t)
static void test_pendulum(void) {
  physModel* m = tm_pendulum();
  physData* d = phys_make_data(m);
  for (int k = 0; k < 4; k++) {
    double t = -1 + 0.8 * k, qacc = 0.5 - k, tau;
    d->qpos[0] = t;
    d->qvel[0] = 3 - k;
    tm_forward_kin(m, d);
    phys_rnea(m, d, &qacc, &tau);
    CHECK_NEAR(tau, (1e-3 + 1.5 * 0.49) * qacc + 1.5 * 9.81 * 0.7 * sin(t), 1e-13);
    phys_bias_forces(m, d);
    CHECK_NEAR(d->qfrc_bias[0], 1.5 * 9.81 * 0.7 * sin(t), 1e-13);
  }
  m->opt.disableflags = PHYS_DSBL_GRAVITY;
  phys_bias_forces(m, d);
  CHECK(d->qfrc_bias[0] == 0);
  phys_free_data(d);
  phys_free_model(m);
}

// free body, com at the body origin, zero gravity: force = m a (world), torque = I w' + w x I w (body)
static void test_euler(void) {
  physRng r;
  phys_rng_seed(&r, 5);
  physSpec* s = phys_spec_new();
  int b = tm_body(s, &r, 0, 0.3, 0.2, 1);
  memset(s->body[b].ipos, 0, sizeof(s->body[b].ipos));
  tm_joint(s, &r, b, PHYS_JNT_FREE);
  s->opt.gravity[2] = 0;
  physModel* m = tm_compile(s);
  physData* d = phys_make_data(m);
  for (int trial = 0; trial < 5; trial++) {
    tm_rand_state(m, d, &r, 4);
    double qacc[6], tau[6], I[6], Iw[3], wx[3], Ia[3];
    for (int i = 0; i < 6; i++) qacc[i] = phys_rng_range(&r, -3, 3);
    tm_forward_kin(m, d);
    phys_rnea(m, d, qacc, tau);
    double R[9];
    phys_quat2mat(R, m->body_iquat + 4);
    phys_sym3_rot_diag(I, R, m->body_inertia + 3);
    const double* w = d->qvel + 3;
    phys_sym3_mul(Iw, I, w);
    phys_cross3(wx, w, Iw);
    phys_sym3_mul(Ia, I, qacc + 3);
    for (int i = 0; i < 3; i++) {
      CHECK_NEAR(tau[i], m->body_mass[1] * qacc[i], 1e-12);
      CHECK_NEAR(tau[3 + i], Ia[i] + wx[i], 1e-12);
    }
    CHECK(fabs(wx[0]) + fabs(wx[1]) + fabs(wx[2]) > 1e-3);  // the gyroscopic term is exercised
  }
  phys_free_data(d);
  phys_free_model(m);
}

// M (armature included; constant, so it drops from the derivatives) at qpos
static void mass_at(const physModel* m, physData* d, const double* qpos, double* M) {
  memcpy(d->qpos, qpos, sizeof(double) * m->nq);
  tm_forward_kin(m, d);
  phys_crb(m, d);
  memcpy(M, d->qM, sizeof(double) * m->nv * m->nv);
}

// potential energy -sum_b m_b g . xipos_b
static double potential(const physModel* m, physData* d, const double* qpos) {
  memcpy(d->qpos, qpos, sizeof(double) * m->nq);
  phys_kinematics(m, d);
  double V = 0;
  for (int b = 1; b < m->nbody; b++) V -= m->body_mass[b] * phys_dot3(m->opt.gravity, d->xipos + 3 * b);
  return V;
}

// Lagrange (plain coordinates): c = Mdot v - dT/dq + dV/dq with T = v'Mv/2
static void test_lagrange(uint64_t seed) {
  physRng r;
  phys_rng_seed(&r, seed);
  physModel* m = tm_hinge_tree(seed);
  physData *d = phys_make_data(m), *w = phys_make_data(m);
  int nv = m->nv, nq = m->nq;
  CHECK(nv == nq);
  double *Mp = malloc(sizeof(double) * nv * nv), *Mm = malloc(sizeof(double) * nv * nv);
  double *q = malloc(sizeof(double) * nq), *qp = malloc(sizeof(double) * nq), *c = malloc(sizeof(double) * nv);
  const double h = 1e-5;
  for (int trial = 0; trial < 4; trial++) {
    tm_rand_state(m, d, &r, 2);
    memcpy(q, d->qpos, sizeof(double) * nq);
    memcpy(w->qvel, d->qvel, sizeof(double) * nv);
    const double* v = d->qvel;
    for (int i = 0; i < nv; i++) c[i] = 0;
    // Mdot v along the motion
    for (int i = 0; i < nq; i++) qp[i] = q[i] + h * v[i];
    mass_at(m, w, qp, Mp);
    for (int i = 0; i < nq; i++) qp[i] = q[i] - h * v[i];
    mass_at(m, w, qp, Mm);
    for (int i = 0; i < nv; i++)
      for (int j = 0; j < nv; j++) c[i] += (Mp[i * nv + j] - Mm[i * nv + j]) / (2 * h) * v[j];
    // - dT/dq_k + dV/dq_k
    for (int k = 0; k < nq; k++) {
      memcpy(qp, q, sizeof(double) * nq);
      qp[k] += h;
      mass_at(m, w, qp, Mp);
      double Vp = potential(m, w, qp);
      qp[k] -= 2 * h;
      mass_at(m, w, qp, Mm);
      double Vm = potential(m, w, qp);
      double dT = 0;
      for (int i = 0; i < nv; i++)
        for (int j = 0; j < nv; j++) dT += 0.5 * v[i] * (Mp[i * nv + j] - Mm[i * nv + j]) / (2 * h) * v[j];
      c[k] += -dT + (Vp - Vm) / (2 * h);
    }
    memcpy(d->qpos, q, sizeof(double) * nq);
    tm_forward_kin(m, d);
    phys_bias_forces(m, d);
    double err = 0, scale = 0;
    for (int i = 0; i < nv; i++) {
      err = fmax(err, fabs(d->qfrc_bias[i] - c[i]));
      scale = fmax(scale, fabs(c[i]));
    }
    CHECK_MSG(err < 1e-7 * fmax(1, scale), "seed %d trial %d: bias vs Lagrange %g (scale %g)", (int)seed, trial, err, scale);
  }
  free(Mp);
  free(Mm);
  free(q);
  free(qp);
  free(c);
  phys_free_data(d);
  phys_free_data(w);
  phys_free_model(m);
}

// gravity on every joint type: qfrc_bias(v = 0)_j == dV/dq along the tangent direction e_j
static void test_gravity_gradient(void) {
  physRng r;
  phys_rng_seed(&r, 8);
  physModel* m = tm_tree(8, 1);
  m->opt.gravity[0] = 1.1;
  m->opt.gravity[1] = -0.4;
  physData *d = phys_make_data(m), *w = phys_make_data(m);
  tm_rand_state(m, d, &r, 0);
  tm_forward_kin(m, d);
  phys_bias_forces(m, d);
  double* q = malloc(sizeof(double) * m->nq);
  double* e = calloc(m->nv, sizeof(double));
  const double h = 1e-6;
  double err = 0;
  for (int j = 0; j < m->nv; j++) {
    memset(e, 0, sizeof(double) * m->nv);
    e[j] = 1;
    memcpy(q, d->qpos, sizeof(double) * m->nq);
    phys_integrate_pos(m, q, e, h);
    double Vp = potential(m, w, q);
    memcpy(q, d->qpos, sizeof(double) * m->nq);
    phys_integrate_pos(m, q, e, -h);
    double Vm = potential(m, w, q);
    err = fmax(err, fabs(d->qfrc_bias[j] - (Vp - Vm) / (2 * h)));
  }
  CHECK_MSG(err < 1e-7, "gravity vs potential gradient %g", err);
  free(q);
  free(e);
  phys_free_data(d);
  phys_free_data(w);
  phys_free_model(m);
}

int main(void) {
  test_pendulum();
  test_euler();
  test_lagrange(1);
  test_lagrange(2);
  test_gravity_gradient();
  return test_done();
}
