// test_passive_deriv.c - derivatives of the non-inertial generalized forces (src/grad/passive_deriv.c):
// phys_passive_deriv, phys_actuation_deriv and phys_xfrc_deriv against four-point central differences
// (grad_models.h: h = 1e-3, relative 1e-6) of qfrc_passive, qfrc_actuator and sum_b J_b' xfrc_applied_b in
// tangent coordinates, velocities and controls, at random states with random applied forces, on
// tests/data/mixed.xml (every joint type, joint springs and dampers, a spring with a motor; again with a gain
// and a bias on every actuator), tests/data/actuators.xml (position and velocity servos, affine gain and
// bias: forces that depend on position and velocity), tests/data/tendons_fixed.xml (fixed tendons with
// springs, dampers and motors, a spatial tendon), tests/data/tendons_wrap.xml (spatial tendons wrapping spheres
// and cylinders, springs, dampers, motors on them), tests/data/actuator_dynamics.xml (site actuators with
// 6-entry gears, force limits, activations held fixed), slider-crank transmissions (MuJoCo's sample
// slider_crank.xml, tests/data/slider_crank_deriv.xml: a floating base, turning slider axes, gains affine in
// the length and rate; tests/data/slider_crank_broken.xml: the broken branch, and near the dead point), two random trees
// (2- and 3-site springs, a motor on a spring, a rest-length actuator, ball joints) and the humanoid; their
// reverse modes phys_passive_vjp, phys_actuation_vjp and phys_xfrc_vjp by dot-product tests
// (<y, J x> = <J' y, x> to GM_DOT_TOL) against those matrices at the same states; plus
// analytic values: a hinge spring -k, a damper -b, a ball spring at the rest orientation -k E, and a
// control outside its range has no effect.
#include "grad_models.h"

#define NSTATE 3
#define SLIDER_CRANK "/usr/share/mujoco/model/slider_crank/slider_crank.xml"

// the three forces at d's state: passive, actuator, applied (J' xfrc at the centres of mass)
static void forces_at(const physModel* m, physData* d, double* fp, double* fa, double* fx) {
  phys_kinematics(m, d);
  phys_com_pos(m, d);
  phys_com_vel(m, d);
  phys_passive(m, d);
  phys_actuation(m, d);
  memcpy(fp, d->qfrc_passive, sizeof(double) * m->nv);
  memcpy(fa, d->qfrc_actuator, sizeof(double) * m->nv);
  memset(fx, 0, sizeof(double) * m->nv);
  for (int b = 1; b < m->nbody; b++)
    phys_apply_force(m, d, fx, b, d->xipos + 3 * b, d->xfrc_applied + 6 * b, d->xfrc_applied + 6 * b + 3);
}

// which input a perturbation moves
enum { IN_Q = 0, IN_V, IN_U };

// x <- x0 + h along input coordinate j of kind `in`
static void set_input(const physModel* m, physData* d, int in, int j, double h, const double* q0,
                      const double* v0, const double* u0) {
  memcpy(d->qpos, q0, sizeof(double) * m->nq);
  memcpy(d->qvel, v0, sizeof(double) * m->nv);
  memcpy(d->ctrl, u0, sizeof(double) * m->nu);
  if (in == IN_Q) gm_perturb(m, d->qpos, q0, j, h);
  if (in == IN_V) d->qvel[j] += h;
  if (in == IN_U) d->ctrl[j] += h;
}

// four-point central differences of the three forces along every coordinate of one input kind: F[k] is
// nv x n (column j = d force / d input_j); returns the largest |force| met
static double forces_fd(const physModel* m, physData* d, int in, double* F[3]) {
  int nv = m->nv, n = in == IN_U ? m->nu : nv;
  const double step[4] = {2 * GM_H4, GM_H4, -GM_H4, -2 * GM_H4};
  double *q0 = malloc(sizeof(double) * m->nq), *v0 = malloc(sizeof(double) * nv);
  double *u0 = malloc(sizeof(double) * (m->nu + 1)), *f = malloc(sizeof(double) * 12 * nv), fscale = 0;
  memcpy(q0, d->qpos, sizeof(double) * m->nq);
  memcpy(v0, d->qvel, sizeof(double) * nv);
  memcpy(u0, d->ctrl, sizeof(double) * m->nu);
  for (int j = 0; j < n; j++) {
    for (int p = 0; p < 4; p++) {
      set_input(m, d, in, j, step[p], q0, v0, u0);
      forces_at(m, d, f + 3 * p * nv, f + (3 * p + 1) * nv, f + (3 * p + 2) * nv);
    }
    fscale = fmax(fscale, gm_maxabs(f, 12 * nv));
    for (int k = 0; k < 3; k++)
      for (int i = 0; i < nv; i++)
        F[k][i * n + j] = gm_fd4(f[k * nv + i], f[(3 + k) * nv + i], f[(6 + k) * nv + i], f[(9 + k) * nv + i], GM_H4);
  }
  set_input(m, d, IN_Q, 0, 0, q0, v0, u0);
  forces_at(m, d, f, f + nv, f + 2 * nv);
  free(q0), free(v0), free(u0), free(f);
  return fscale;
}

// <y, J x> against <J' y, x> to GM_DOT_TOL for one block J (rows x cols) and its VJP result jty
static void check_dot(const char* what, const double* J, const double* y, const double* x, const double* jty,
                      int rows, int cols) {
  double scale, lhs = gm_bilinear(J, y, x, rows, cols, &scale), rhs = 0;
  for (int j = 0; j < cols; j++) rhs += jty[j] * x[j];
  CHECK_MSG(fabs(lhs - rhs) <= GM_DOT_TOL * scale, "%s: %.17g vs %.17g (scale %.3g)", what, lhs, rhs, scale);
}

// dot-product tests of phys_passive_vjp, phys_actuation_vjp and phys_xfrc_vjp against the matrices of their
// _deriv twins (Aq[3] nv x nv, Av[2] nv x nv, Au[2] nv x nu, checked against differences by the caller) with a
// random f_bar; the outputs start at a random offset, which is subtracted after (the VJPs add)
static void check_vjp(const char* name, const physModel* m, physData* d, physRng* r, double* const Aq[3],
                      double* const Av[2], double* const Au[2]) {
  int nv = m->nv, nu = m->nu;
  double *y = malloc(sizeof(double) * nv), *x = malloc(sizeof(double) * nv);
  double* xu = malloc(sizeof(double) * (nu + 1));
  double *off = malloc(sizeof(double) * (2 * nv + nu)), *qb = malloc(sizeof(double) * nv);
  double *vb = malloc(sizeof(double) * nv), *ub = malloc(sizeof(double) * (nu + 1));
  gm_rand_vec(r, y, nv);
  gm_rand_vec(r, x, nv);
  gm_rand_vec(r, xu, nu);
  gm_rand_vec(r, off, 2 * nv + nu);
  char what[128];
  for (int k = 0; k < 3; k++) {
    memcpy(qb, off, sizeof(double) * nv);
    memcpy(vb, off + nv, sizeof(double) * nv);
    memcpy(ub, off + 2 * nv, sizeof(double) * nu);
    if (k == 0) phys_passive_vjp(m, d, y, qb, vb, ub);
    if (k == 1) phys_actuation_vjp(m, d, y, qb, vb, ub);
    if (k == 2) phys_xfrc_vjp(m, d, y, qb);
    for (int i = 0; i < nv; i++) qb[i] -= off[i], vb[i] -= off[nv + i];
    for (int a = 0; a < nu; a++) ub[a] -= off[2 * nv + a];
    const char* fn[3] = {"phys_passive_vjp", "phys_actuation_vjp", "phys_xfrc_vjp"};
    snprintf(what, sizeof what, "%s %s q", name, fn[k]);
    check_dot(what, Aq[k], y, x, qb, nv, nv);
    if (k < 2) {
      snprintf(what, sizeof what, "%s %s v", name, fn[k]);
      check_dot(what, Av[k], y, x, vb, nv, nv);
    }
    if (k < 2 && nu) {
      snprintf(what, sizeof what, "%s %s u", name, fn[k]);
      check_dot(what, Au[k], y, xu, ub, nv, nu);
    }
  }
  // NULL outputs are skipped: the q output alone gives the same numbers
  memset(qb, 0, sizeof(double) * nv);
  phys_passive_vjp(m, d, y, qb, NULL, NULL);
  snprintf(what, sizeof what, "%s phys_passive_vjp q alone", name);
  check_dot(what, Aq[0], y, x, qb, nv, nv);
  free(y), free(x), free(xu), free(off), free(qb), free(vb), free(ub);
}

// every check at NSTATE random states with random applied forces
static void check_model(const char* name, const physModel* m, uint64_t seed) {
  int nv = m->nv, nu = m->nu;
  size_t nn = (size_t)nv * nv, nuv = (size_t)nv * (nu + 1);
  physData* d = phys_make_data(m);
  physRng r, rv;   // rv: the VJP tests' vectors (the states stay those of r alone)
  phys_rng_seed(&r, seed);
  phys_rng_seed(&rv, seed + 1000);
  double *Fq[3], *Fv[3], *Fu[3], *Aq[3], *Av[2], *Au[2];
  for (int k = 0; k < 3; k++) {
    Fq[k] = malloc(sizeof(double) * nn);
    Fv[k] = malloc(sizeof(double) * nn);
    Fu[k] = malloc(sizeof(double) * nuv);
    Aq[k] = calloc(nn, sizeof(double));
  }
  Av[0] = calloc(nn, sizeof(double));
  Av[1] = calloc(nn, sizeof(double));
  Au[0] = calloc(nuv, sizeof(double));
  Au[1] = calloc(nuv, sizeof(double));
  double worst[3] = {0, 0, 0};
  for (int s = 0; s < NSTATE; s++) {
    gm_random_state(m, d, &r, 2.0);
    for (int i = 0; i < m->na; i++) d->act[i] = phys_rng_range(&r, -1, 1);   // (none: the same stream)
    for (int b = 1; b < m->nbody; b++) gm_rand_vec(&r, d->xfrc_applied + 6 * b, 6);
    double sq = forces_fd(m, d, IN_Q, Fq), sv = forces_fd(m, d, IN_V, Fv), su = nu ? forces_fd(m, d, IN_U, Fu) : 0;
    for (int k = 0; k < 3; k++) memset(Aq[k], 0, sizeof(double) * nn);
    memset(Av[0], 0, sizeof(double) * nn);
    memset(Av[1], 0, sizeof(double) * nn);
    memset(Au[0], 0, sizeof(double) * nuv);
    memset(Au[1], 0, sizeof(double) * nuv);
    phys_passive_deriv(m, d, Aq[0], Av[0], Au[0]);
    phys_actuation_deriv(m, d, Aq[1], Av[1], Au[1]);
    phys_xfrc_deriv(m, d, Aq[2]);
    const char* part[3] = {"passive", "actuation", "xfrc"};
    char what[128];
    for (int k = 0; k < 3; k++) {
      snprintf(what, sizeof what, "%s state %d d%s/dq", name, s, part[k]);
      worst[0] = fmax(worst[0], gm_compare(what, Aq[k], Fq[k], nv, nv, sq, GM_RTOL));
    }
    for (int k = 0; k < 2; k++) {
      snprintf(what, sizeof what, "%s state %d d%s/dv", name, s, part[k]);
      worst[1] = fmax(worst[1], gm_compare(what, Av[k], Fv[k], nv, nv, sv, GM_RTOL));
    }
    check_vjp(name, m, d, &rv, Aq, Av, Au);
    double* zero = calloc(nn, sizeof(double));
    snprintf(what, sizeof what, "%s state %d dxfrc/dv = 0", name, s);
    gm_compare(what, zero, Fv[2], nv, nv, sv, GM_RTOL);
    free(zero);
    for (int k = 0; k < 2 && nu; k++) {
      snprintf(what, sizeof what, "%s state %d d%s/du", name, s, part[k]);
      worst[2] = fmax(worst[2], gm_compare(what, Au[k], Fu[k], nv, nu, su, GM_RTOL));
    }
  }
  printf("%-14s nv %2d nu %2d nspring %d: max rel err d/dq %.2e, d/dv %.2e, d/du %.2e\n", name, nv, nu,
         m->nspring, worst[0], worst[1], worst[2]);
  for (int k = 0; k < 3; k++) free(Fq[k]), free(Fv[k]), free(Fu[k]), free(Aq[k]);
  free(Av[0]), free(Av[1]), free(Au[0]), free(Au[1]);
  phys_free_data(d);
}

// analytic values on mixed.xml with its path spring removed: the ball spring at its rest orientation is
// -k E, the hinge spring -k, dampers -b; a motor's derivative is its gear, 0 when the control is saturated
static void check_analytic(void) {
  physModel* m = gm_load("tests/data/mixed.xml", 0);
  physData* d = phys_make_data(m);
  int nv = m->nv, nu = m->nu;
  double* Dq = calloc((size_t)nv * nv, sizeof(double));
  double* Dv = calloc((size_t)nv * nv, sizeof(double));
  double* Du = calloc((size_t)nv * nu, sizeof(double));
  m->nspring = 0;   // joint springs and dampers alone
  int ball = phys_name2id(m, "joint", "ball"), hinge = phys_name2id(m, "joint", "hinge");
  int da = m->jnt_dofadr[ball], qa = m->jnt_qposadr[ball], dh = m->jnt_dofadr[hinge];
  memcpy(d->qpos + qa, m->qpos_spring + qa, 4 * sizeof(double));
  phys_kinematics(m, d);
  phys_com_pos(m, d);
  phys_com_vel(m, d);
  phys_passive_deriv(m, d, Dq, Dv, Du);
  for (int r = 0; r < 3; r++)
    for (int c = 0; c < 3; c++) CHECK_NEAR(Dq[(da + r) * nv + da + c], r == c ? -2.0 : 0.0, 1e-14);
  CHECK_NEAR(Dq[dh * nv + dh], -3.0, 1e-14);
  CHECK_NEAR(Dv[dh * nv + dh], -0.1, 1e-14);
  CHECK_NEAR(Dv[da * nv + da], -0.3, 1e-14);
  m->nspring = 1;
  // motor on the slide saturated: ctrl 5 > 1
  int a = phys_name2id(m, "actuator", "m_slide"), ds = m->jnt_dofadr[phys_name2id(m, "joint", "slide")];
  memset(Du, 0, sizeof(double) * nv * nu);
  d->ctrl[a] = 5;
  phys_actuation_deriv(m, d, NULL, NULL, Du);
  CHECK_NEAR(Du[ds * nu + a], 0, 0);
  d->ctrl[a] = 0.5;
  phys_actuation_deriv(m, d, NULL, NULL, Du);
  CHECK_NEAR(Du[ds * nu + a], 2.0, 0);
  free(Dq), free(Dv), free(Du);
  phys_free_data(d);
  phys_free_model(m);
}

int main(void) {
  check_analytic();
  physModel* m = gm_load("tests/data/mixed.xml", 0);
  check_model("mixed", m, 1);
  // a gain and a constant bias on every actuator (on the spring's motor too)
  for (int a = 0; a < m->nu; a++) m->actuator_gainprm[3 * a] = 1.3 + 0.1 * a, m->actuator_biasprm[3 * a] = 0.2;
  check_model("mixed gain", m, 11);
  phys_free_model(m);
  // position and velocity servos, an affine gain and bias (length and velocity terms)
  m = gm_load("tests/data/actuators.xml", 0);
  check_model("actuators", m, 12);
  phys_free_model(m);
  // fixed tendons (springs, dampers, motors on them) beside a spatial tendon
  m = gm_load("tests/data/tendons_fixed.xml", 0);
  check_model("tendons_fixed", m, 13);
  phys_free_model(m);
  // spatial tendons wrapping spheres and cylinders (side sites, a helix, a pulley), motors on them
  m = gm_load("tests/data/tendons_wrap.xml", 0);
  check_model("tendons_wrap", m, 15);
  phys_free_model(m);
  for (int k = 0; k < 2; k++) {
    m = tm_tree(41 + k, 1 - k);
    check_model(k ? "tree (fixed)" : "tree (free)", m, 2 + k);
    phys_free_model(m);
  }
  // site transmissions with 6-entry gears (the wrench turns with the site), force-limited motors, activations
  m = gm_load("tests/data/actuator_dynamics.xml", 0);
  check_model("actuator_dyn", m, 14);
  phys_free_model(m);
  // slider-crank transmissions (issue 15): libmujoco-samples' three position servos (forward, backward, one
  // broken at qpos0), a floating base with slider sites that turn and affine gains in the length and rate, the
  // broken branch (det < 0 at every state) and the same model near its dead point (crank length r with r^2 =
  // 0.04 + 1e-4: det = 1e-4 at the broken check's states, the Hessian's 1/s^3 terms 1e6 times the moment's scale)
  m = gm_load(SLIDER_CRANK, 0);
  check_model("slider_crank", m, 16);
  phys_free_model(m);
  m = gm_load("tests/data/slider_crank_deriv.xml", 0);
  check_model("crank_float", m, 17);
  phys_free_model(m);
  m = gm_load("tests/data/slider_crank_broken.xml", 0);
  check_model("crank_broken", m, 18);
  m->actuator_cranklength[0] = sqrt(0.0401);
  check_model("crank_deadpt", m, 18);   // (the same states)
  phys_free_model(m);
  m = gm_load(GM_HUMANOID, 0);
  check_model("humanoid", m, 4);
  phys_free_model(m);
  return test_done();
}
