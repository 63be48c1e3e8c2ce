// test_frictionloss_deriv.c - derivatives of steps with joint frictionloss (src/grad/frictionloss_deriv.c): rows
// under lcp, cone and ccp, penalty's regularized friction, on a three-link arm with motors (frictionloss on every
// joint, damping on one):
//   - A, B against central differences of phys_step (phys_step_jacobian_fd, step 1e-6) at a sliding state
//     (every row at its bound), a sticking one (the arm exactly at rest, held by friction), and a mixed one;
//     relative error <= 1e-6 of the largest entry (difference error ~ 1e-12 / 1e-6 rounding);
//   - P over frictionloss:j1..j3, damping:j2 and mass:l2 against central differences (one-sided, forward, for
//     a frictionloss at 0: the right derivative), and the tied frictionloss:j* column = the sum of the three;
//   - the reverse modes (phys_step_vjp, phys_step_param_vjp) by the dot-product test to 1e-12 relative;
//   - at rest, a sticking dof's rows of A, B, P are exactly 0 (it cannot move whatever the perturbation; rows only);
//   - with a contact (lcp/cone/ccp): a two-link arm's tip on a frictionless floor with every row sliding, the
//     same arm held (both rows sticking), a three-link arm with one row sticking and two sliding; and the
//     three-link arm held at an active joint limit: A, B, P against central differences (< 1e-6; measured
//     1e-16 .. 9e-9) and the dot-product test (sticking rows' forces follow the state: the implicit function,
//     step_contact_point.h cpStick; without it A's error is 0.4 .. 2.2); penalty's friction with a limit spring;
//   - tendon frictionloss rows (issue 15 item 3): contact-free in every model (test_tendon_rows) and with a contact
//     in every model (test_tendon_contact: the rows' impulses as unknowns of the step under lcp, cone and ccp,
//     penalty's regularized rope friction in its tape).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "contact.h"
#include "grad.h"
#include "params.h"
#include "physid.h"
#include "../model/mjcf_text.h"
#include "rng.h"

static const char* ARM =
    "<mujoco><option timestep='0.002'/><worldbody>"
    "<body name='l1'><joint name='j1' axis='0 1 0' frictionloss='%g'/>"
    "<geom type='capsule' fromto='0 0 0 0.4 0 0' size='0.04' mass='1.5'/>"
    "<body name='l2' pos='0.4 0 0'><joint name='j2' axis='0 1 0' damping='0.3' frictionloss='%g'/>"
    "<geom type='capsule' fromto='0 0 0 0.3 0 0' size='0.03' mass='1'/>"
    "<body name='l3' pos='0.3 0 0'><joint name='j3' axis='0 0 1' frictionloss='%g'/>"
    "<geom type='capsule' fromto='0 0 0 0.2 0 0' size='0.02' mass='0.5'/></body></body></body></worldbody>"
    "<actuator><motor joint='j1'/><motor joint='j2'/><motor joint='j3'/></actuator></mujoco>";

// the model of MJCF text xml under contact model c (exits on a load failure)
static physModel* model_text(const char* xml, int c) {
  physLog log;
  physModel* m = load_text(xml, &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  if (!m) exit(1);
  m->opt.contact = c;
  return m;
}

// the arm with frictionloss F1, F2, F3 under contact model c (contacts off: only the friction rows)
static physModel* arm(double F1, double F2, double F3, int c) {
  char xml[2048];
  snprintf(xml, sizeof xml, ARM, F1, F2, F3);
  return model_text(xml, c);
}

// max |a_i|
static double maxabs(const double* a, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s = fmax(s, fabs(a[i]));
  return s;
}

// the worst |a - b| relative to max |b| (1e-3 floor)
static double relerr(const double* a, const double* b, int n) {
  double e = 0;
  for (int i = 0; i < n; i++) e = fmax(e, fabs(a[i] - b[i]));
  return e / fmax(maxabs(b, n), 1e-3);
}

// one step from (q, v, u) with theta; x+ into res (2nv: hinges only, q+ then v+)
static void step_theta(physModel* m, physData* d, const physParamTable* t, const double* th, const double* q,
                       const double* v, double* res) {
  CHECK(phys_param_set(t, m, th) == PHYS_OK);
  memcpy(d->qpos, q, sizeof(double) * m->nq);
  memcpy(d->qvel, v, sizeof(double) * m->nv);
  d->time = 0;
  phys_step(m, d);
  memcpy(res, d->qpos, sizeof(double) * m->nv);
  memcpy(res + m->nv, d->qvel, sizeof(double) * m->nv);
}

// P by central differences (forward where theta_j = 0 and the parameter must stay >= 0), step 1e-6
static void param_fd(physModel* m, physData* d, const physParamTable* t, double* Pf) {
  int nv = m->nv, n2 = 2 * nv, nt = t->ntheta;
  double q[8], v[8], th[16], tp[16], xp[16], xm[16], h = 1e-6;
  memcpy(q, d->qpos, sizeof(double) * nv);
  memcpy(v, d->qvel, sizeof(double) * nv);
  phys_param_get(t, m, th);
  for (int j = 0; j < nt; j++) {
    int forward = th[j] == 0;
    memcpy(tp, th, sizeof(double) * nt);
    tp[j] = th[j] + h;
    step_theta(m, d, t, tp, q, v, xp);
    tp[j] = forward ? th[j] : th[j] - h;
    step_theta(m, d, t, tp, q, v, xm);
    for (int i = 0; i < n2; i++) Pf[i * nt + j] = (xp[i] - xm[i]) / (forward ? h : 2 * h);
  }
  CHECK(phys_param_set(t, m, th) == PHYS_OK);
  memcpy(d->qpos, q, sizeof(double) * nv);
  memcpy(d->qvel, v, sizeof(double) * nv);
}

// the dot-product test of phys_step_vjp and phys_step_param_vjp against A, B, P (2nv x 2nv, nu, t's ntheta) at
// d's state with random vectors (seed): |y'(A x + B u + P th) - (A'y . x + B'y . u + P'y . th)| <= 1e-12 sum of
// the terms' magnitudes; returns that relative difference
static double dot_test(physModel* m, physData* d, const physParamTable* t, const double* A, const double* B,
                       const double* P, int seed, const char* what) {
  int n2 = 2 * m->nv, nu = m->nu, nt = t->ntheta;
  physRng rng;
  phys_rng_seed(&rng, (uint64_t)seed);
  double xb[8], dx[8], du[4], dth[8], xbo[8], ub[4], thb[8], l = 0, r = 0, s = 0;
  for (int i = 0; i < n2; i++) xb[i] = phys_rng_range(&rng, -1, 1), dx[i] = phys_rng_range(&rng, -1, 1);
  for (int i = 0; i < nu; i++) du[i] = phys_rng_range(&rng, -1, 1);
  for (int i = 0; i < nt; i++) dth[i] = phys_rng_range(&rng, -1, 1);
  CHECK(phys_step_vjp(m, d, xb, xbo, ub) == PHYS_OK);
  CHECK(phys_step_param_vjp(m, d, t, xb, thb) == PHYS_OK);
  for (int i = 0; i < n2; i++) {
    for (int j = 0; j < n2; j++) l += xb[i] * A[i * n2 + j] * dx[j], s += fabs(xb[i] * A[i * n2 + j] * dx[j]);
    for (int j = 0; j < nu; j++) l += xb[i] * B[i * nu + j] * du[j], s += fabs(xb[i] * B[i * nu + j] * du[j]);
    for (int j = 0; j < nt; j++) l += xb[i] * P[i * nt + j] * dth[j], s += fabs(xb[i] * P[i * nt + j] * dth[j]);
  }
  for (int j = 0; j < n2; j++) r += xbo[j] * dx[j];
  for (int j = 0; j < nu; j++) r += ub[j] * du[j];
  for (int j = 0; j < nt; j++) r += thb[j] * dth[j];
  CHECK_MSG(fabs(l - r) <= 1e-12 * s, "%s: dot-product %.17g vs %.17g", what, l, r);
  return fabs(l - r) / s;
}

// new data of m at (q, v, ctrl u) (hinges: nq = nv), its A, B (phys_step_jacobian) and their errors against
// central differences (phys_step_jacobian_fd, step 1e-6; relerr) into *ea, *eb
static physData* jacobians_at(physModel* m, const double* q, const double* v, const double* u, const char* what,
                              double* A, double* B, double* ea, double* eb) {
  int nv = m->nv, n2 = 2 * nv, nu = m->nu;
  physData* d = phys_make_data(m);
  memcpy(d->qpos, q, sizeof(double) * nv);
  memcpy(d->qvel, v, sizeof(double) * nv);
  memcpy(d->ctrl, u, sizeof(double) * nu);
  double Af[36], Bf[18];
  CHECK_MSG(phys_step_jacobian(m, d, A, B) == PHYS_OK, "%s: %s", what, d->lastwarning);
  CHECK(phys_step_jacobian_fd(m, d, 1e-6, Af, Bf) == PHYS_OK);
  *ea = relerr(A, Af, n2 * n2), *eb = relerr(B, Bf, n2 * nu);
  return d;
}

// the checks at one state of m (file comment); sticking: dofs held at rest (their rows must be 0)
static void check_state(physModel* m, const double* q, const double* v, const double* u, const char* what,
                        const int* sticking) {
  int nv = m->nv, n2 = 2 * nv, nu = m->nu;
  double A[36], B[18], ea, eb;
  physData* d = jacobians_at(m, q, v, u, what, A, B, &ea, &eb);
  CHECK_MSG(ea < 1e-6 && eb < 1e-6, "%s (%s): A err %.3g, B err %.3g", what, phys_contact_name(m->opt.contact), ea, eb);

  const char* spec[] = {"frictionloss:j1", "frictionloss:j2", "frictionloss:j3", "damping:j2", "mass:l2",
                        "frictionloss:j*"};
  physParamTable t;
  physLog log;
  memset(&log, 0, sizeof log);
  CHECK_MSG(phys_param_table_build(&t, m, spec, 5, &log) == PHYS_OK, "%s", log.error);
  int nt = t.ntheta;
  double P[6 * 5], Pf[6 * 5];
  CHECK_MSG(phys_step_param_jacobian(m, d, &t, P) == PHYS_OK, "%s", d->lastwarning);
  param_fd(m, d, &t, Pf);
  double ep = relerr(P, Pf, n2 * nt);
  CHECK_MSG(ep < 1e-6, "%s (%s): P err %.3g", what, phys_contact_name(m->opt.contact), ep);

  // sticking dofs: their q+ and v+ rows are exactly 0
  for (int k = 0; k < nv; k++) {
    if (!sticking[k]) continue;
    for (int c = 0; c < n2; c++) CHECK_MSG(A[(nv + k) * n2 + c] == 0 && A[k * n2 + c] == (c == k), "%s %s k %d c %d: %g %g", what, phys_contact_name(m->opt.contact), k, c, A[(nv + k) * n2 + c], A[k * n2 + c]);
    for (int c = 0; c < nu; c++) CHECK(B[(nv + k) * nu + c] == 0);
    for (int c = 0; c < nt; c++) CHECK(P[(nv + k) * nt + c] == 0);
  }

  dot_test(m, d, &t, A, B, P, 11, what);   // dot-product tests

  // tied: frictionloss:j* = the sum of the three columns
  physParamTable tt;
  CHECK(phys_param_table_build(&tt, m, spec + 5, 1, &log) == PHYS_OK && tt.ntheta == 1);
  double Pt[6];
  CHECK(phys_step_param_jacobian(m, d, &tt, Pt) == PHYS_OK);
  for (int i = 0; i < n2; i++)
    CHECK_NEAR(Pt[i], P[i * nt] + P[i * nt + 1] + P[i * nt + 2], 1e-13 * fmax(1, maxabs(P, n2 * nt)));
  phys_param_table_free(&tt);
  phys_param_table_free(&t);
  phys_free_data(d);
}

static void test_states(void) {
  for (int c = 0; c < 4; c++) {
    int pen = c == PHYS_CONTACT_PENALTY;   // (penalty: regularized, nothing sticks exactly)
    // sliding: every joint moving, frictions well below what would stop them in a step
    physModel* m = arm(0.4, 0.3, 0.2, c);
    double q[3] = {0.3, -0.5, 0.8}, v[3] = {2.0, -1.5, 1.0}, u[3] = {0.5, -0.2, 0.1};
    int none[3] = {0, 0, 0}, all[3] = {1, 1, 1}, first[3] = {1, 0, 0};
    check_state(m, q, v, u, "sliding", none);
    phys_free_model(m);
    // at rest exactly, held: gravity torques (12.3 N m on j1, 0.3 N m motor) below the frictionlosses
    m = arm(20, 5, 2, c);
    double v0[3] = {0, 0, 0}, u0[3] = {0.3, 0.2, 0.1};
    check_state(m, q, v0, u0, "sticking at rest", pen ? none : all);
    // mixed: j1 held at rest, j2 and j3 sliding
    double v1[3] = {0, -1.5, 1.0};
    phys_free_model(m);
    m = arm(20, 0.3, 0.2, c);
    check_state(m, q, v1, u0, "mixed", pen ? none : first);
    phys_free_model(m);
    // frictionloss 0 on j2 (no row; the right derivative -sign(v) e), j1 sliding, j3 sticking at rest
    m = arm(0.4, 0, 3, c);
    double v2[3] = {1.0, -1.5, 0};
    int third[3] = {0, 0, 1};
    check_state(m, q, v2, u0, "frictionloss 0", pen ? none : third);
    phys_free_model(m);
  }
}

// no frictionloss (every joint at 0) but a frictionloss parameter at a state exactly at rest: a small bound
// holds a dof that does not move, so its column is 0 (the steps move j1 under gravity: its column is not)
static void test_zero_at_rest(void) {
  physModel* m = arm(0, 0, 0, PHYS_CONTACT_LCP);
  physData* d = phys_make_data(m);
  const char* spec[] = {"frictionloss:j3"};
  physParamTable t;
  physLog log;
  memset(&log, 0, sizeof log);
  CHECK(phys_param_table_build(&t, m, spec, 1, &log) == PHYS_OK);
  double P[6];
  CHECK(phys_step_param_jacobian(m, d, &t, P) == PHYS_OK);   // j3 turns about z: gravity does not move it
  for (int i = 0; i < 6; i++) CHECK(P[i] == 0);
  phys_param_table_free(&t);
  phys_free_data(d);
  phys_free_model(m);
}

// a two-link arm whose tip touches a floor: the geoms' friction (%g), the frictionlosses of joints a and b
static const char* ARM_FLOOR =
    "<mujoco><option timestep='0.002'/><default><geom friction='%g'/></default><worldbody>"
    "<geom type='plane' size='5 5 .1'/><body name='l1' pos='0 0 0.48'><joint name='a' axis='0 1 0' "
    "frictionloss='%g'/><geom type='capsule' fromto='0 0 0 0.4 0 0' size='0.03' mass='1'/><body pos='0.4 0 0'>"
    "<joint name='b' axis='0 1 0' frictionloss='%g'/><geom type='capsule' fromto='0 0 0 0 0 -0.45' "
    "size='0.03' mass='1'/></body></body></worldbody><actuator><motor joint='a'/><motor joint='b'/></actuator>"
    "</mujoco>";

// ARM_FLOOR with friction mu, frictionlosses Fa, Fb under contact model c
static physModel* arm_floor(double mu, double Fa, double Fb, int c) {
  char text[2048];
  physLog log;
  snprintf(text, sizeof text, ARM_FLOOR, mu, Fa, Fb);
  physModel* m = load_text(text, &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  if (m) m->opt.contact = c;
  return m;
}

// the checks with a contact at m's state in d (nv <= 3, nu <= 3; parameters spec, nspec <= 4): A, B, P against
// central differences < 1e-6 of the largest entry and the dot-product test to 1e-12; *P1 (2nv x nspec) out
static void check_contact(physModel* m, physData* d, const char** spec, int nspec, const char* what, double* P1) {
  int nv = m->nv, n2 = 2 * nv, nu = m->nu;
  const char* cm = phys_contact_name(m->opt.contact);
  double A[36], B[18], Af[36], Bf[18];
  CHECK_MSG(phys_step_jacobian(m, d, A, B) == PHYS_OK, "%s (%s): %s", what, cm, d->lastwarning);
  CHECK(phys_step_jacobian_fd(m, d, 1e-6, Af, Bf) == PHYS_OK);
  double ea = relerr(A, Af, n2 * n2), eb = relerr(B, Bf, n2 * nu);
  CHECK_MSG(ea < 1e-6 && eb < 1e-6, "%s (%s): A err %.3g, B err %.3g", what, cm, ea, eb);
  physParamTable t;
  physLog log;
  memset(&log, 0, sizeof log);
  CHECK_MSG(phys_param_table_build(&t, m, spec, nspec, &log) == PHYS_OK, "%s", log.error);
  int nt = t.ntheta;
  double P[24], Pf[24];
  CHECK_MSG(phys_step_param_jacobian(m, d, &t, P) == PHYS_OK, "%s", d->lastwarning);
  param_fd(m, d, &t, Pf);
  double ep = relerr(P, Pf, n2 * nt);
  CHECK_MSG(ep < 1e-6, "%s (%s): P err %.3g", what, cm, ep);
  memcpy(P1, P, sizeof(double) * (size_t)n2 * nt);
  physRng rng;
  phys_rng_seed(&rng, 5);
  double xb[6], dx[6], du[3], dth[4], xbo[6], ub[3], thb[4], l = 0, r = 0, s = 0;
  for (int i = 0; i < n2; i++) xb[i] = phys_rng_range(&rng, -1, 1), dx[i] = phys_rng_range(&rng, -1, 1);
  for (int i = 0; i < nu; i++) du[i] = phys_rng_range(&rng, -1, 1);
  for (int i = 0; i < nt; i++) dth[i] = phys_rng_range(&rng, -1, 1);
  CHECK(phys_step_vjp(m, d, xb, xbo, ub) == PHYS_OK && phys_step_param_vjp(m, d, &t, xb, thb) == PHYS_OK);
  for (int i = 0; i < n2; i++) {
    for (int j = 0; j < n2; j++) l += xb[i] * A[i * n2 + j] * dx[j], s += fabs(xb[i] * A[i * n2 + j] * dx[j]);
    for (int j = 0; j < nu; j++) l += xb[i] * B[i * nu + j] * du[j], s += fabs(xb[i] * B[i * nu + j] * du[j]);
    for (int j = 0; j < nt; j++) l += xb[i] * P[i * nt + j] * dth[j], s += fabs(xb[i] * P[i * nt + j] * dth[j]);
    r += xbo[i] * dx[i];
  }
  for (int j = 0; j < nu; j++) r += ub[j] * du[j];
  for (int j = 0; j < nt; j++) r += thb[j] * dth[j];
  CHECK_MSG(fabs(l - r) <= 1e-12 * s, "%s (%s): dot-product %.17g vs %.17g", what, cm, l, r);
  printf("  %-30s %-7s A %.2e  B %.2e  P %.2e  dot %.1e\n", what, cm, ea, eb, ep, fabs(l - r) / s);
  phys_param_table_free(&t);
}

// frictionloss rows with a contact (a two-link arm whose tip slides on a frictionless floor under motor torques):
// while every row slides, the constrained step's derivatives take the rows' constant forces in; the same arm
// held (frictionloss 50: both rows stick while the tip presses on the floor) and a three-link arm whose first
// joint sticks while the other two slide with the tip on the floor: the sticking rows' forces follow the state
// (implicit function). A, B, P over frictionloss and mass against central differences < 1e-6, dot-product test
// 1e-12, in lcp, cone and ccp; a sticking dof's v+ rows are exactly 0 and its frictionloss column is 0
static void test_with_contact(void) {
  const char* xml3 =
      "<mujoco><option timestep='0.002'/><default><geom friction='0'/></default><worldbody>"
      "<geom type='plane' size='5 5 .1'/><body name='l1' pos='0 0 0.5'><joint name='a' axis='0 1 0' "
      "frictionloss='50'/><geom type='capsule' fromto='0 0 0 0.3 0 0' size='0.03' mass='1'/>"
      "<body name='l2' pos='0.3 0 0'><joint name='b' axis='0 1 0' frictionloss='0.3'/><geom type='capsule' "
      "fromto='0 0 0 0.2 0 -0.25' size='0.03' mass='1'/><body pos='0.2 0 -0.25'><joint name='c' axis='0 1 0' "
      "frictionloss='0.2'/><geom type='capsule' fromto='0 0 0 0 0 -0.22' size='0.03' mass='0.5'/></body></body>"
      "</body></worldbody><actuator><motor joint='b'/><motor joint='c'/></actuator></mujoco>";
  const char* spec[] = {"frictionloss:a", "frictionloss:b", "mass:l1"};
  const char* spec3[] = {"frictionloss:a", "frictionloss:b", "frictionloss:c", "mass:l2"};
  for (int c = 0; c < 3; c++) {
    double P[24];
    physLog log;
    physModel* m = arm_floor(0, 0.5, 0.3, c);
    if (!m) return;
    physData* d = phys_make_data(m);
    for (int k = 0; k < 60; k++) {
      d->ctrl[0] = 3 * sin(0.02 * k), d->ctrl[1] = -2 * cos(0.03 * k);
      phys_step(m, d);
    }
    CHECK(d->ncon > 0 && fabs(d->qvel[0]) > 0.1 && fabs(d->qvel[1]) > 0.1);   // in contact, both sliding
    check_contact(m, d, spec, 3, "sliding", P);
    CHECK(fabs(P[2 * 3]) > 0 && fabs(P[3 * 3 + 1]) > 0);   // the frictionloss columns move v+
    phys_free_data(d);
    phys_free_model(m);

    m = arm_floor(0, 50, 50, c);
    d = phys_make_data(m);
    for (int k = 0; k < 60; k++) phys_step(m, d);
    d->ctrl[0] = 0.7, d->ctrl[1] = -0.4;
    CHECK(d->ncon > 0 && d->qvel[0] == 0 && d->qvel[1] == 0);
    check_contact(m, d, spec, 3, "held", P);
    for (int j = 0; j < 3; j++) CHECK(fabs(P[2 * 3 + j]) < 1e-15 && fabs(P[3 * 3 + j]) < 1e-15);   // v+ rows
    phys_free_data(d);
    phys_free_model(m);

    m = load_text(xml3, &log);
    CHECK_MSG(m != NULL, "%s", log.error);
    m->opt.contact = c;
    d = phys_make_data(m);
    for (int k = 0; k < 20; k++) {
      d->ctrl[0] = 0, d->ctrl[1] = 0.5;
      phys_step(m, d);
    }
    // in contact and pressing, a held, b and c turning
    CHECK_MSG(d->ncon > 0 && d->contact[0].lambda[0] > 1e-3 && d->qvel[0] == 0 && fabs(d->qvel[1]) > 0.03 &&
              fabs(d->qvel[2]) > 1, "mixed (%s): ncon %d v %g %g %g", phys_contact_name(c), d->ncon, d->qvel[0],
              d->qvel[1], d->qvel[2]);
    check_contact(m, d, spec3, 4, "mixed", P);
    for (int j = 0; j < 4; j++) CHECK(P[3 * 4 + j] == 0);   // a's v+ row
    CHECK(P[3 * 4] == 0 && P[4 * 4] == 0 && P[5 * 4] == 0);   // a's bound does not enter
    CHECK(fabs(P[4 * 4 + 1]) > 0 && fabs(P[5 * 4 + 2]) > 0);   // the sliding rows' bounds do
    phys_free_data(d);
    phys_free_model(m);
  }
}

// rows sticking at an active joint limit (the three-link arm held at rest, j1 beyond its lower limit): lcp, cone
// and ccp differentiate it, and penalty's regularized friction with the limit spring (check_contact)
static void test_limit(void) {
  const char* spec[] = {"frictionloss:j1", "frictionloss:j2", "mass:l2"};
  for (int c = 0; c < 4; c++) {
    physModel* m = arm(20, 5, 2, c);   // held at rest (test_states), j1 beyond its lower limit
    m->jnt_limited[0] = 1;
    m->jnt_range[0] = 0.5, m->jnt_range[1] = 1;
    physData* d = phys_make_data(m);
    d->qpos[0] = 0.3, d->qpos[1] = -0.5, d->qpos[2] = 0.8;
    double P[24];
    check_contact(m, d, spec, 3, "limit", P);
    phys_free_data(d);
    phys_free_model(m);
  }
}

// penalty's regularized frictionloss with penalty contacts (the two-link arm of test_with_contact on a floor):
// sliding under motor torques (|v| > v_slip: C = F / |v|), pressed and creeping (|v| < v_slip: C = F / v_slip),
// the same state exactly at rest, and frictionloss 0 on one joint (P's column forward: the right derivative);
// check_contact (A, B, P against central differences, the dot-product test)
static void test_penalty_contact(void) {
  const char* spec[] = {"frictionloss:a", "frictionloss:b", "mass:l1"};
  const double F[3][2] = {{0.5, 0.3}, {50, 50}, {0, 0.3}};
  for (int c = 0; c < 3; c++) {
    double P[24];
    physModel* m = arm_floor(1, F[c][0], F[c][1], PHYS_CONTACT_PENALTY);
    if (!m) return;
    physData* d = phys_make_data(m);
    for (int k = 0; k < 60; k++) {
      d->ctrl[0] = c == 1 ? 0.5 : 3 * sin(0.02 * k), d->ctrl[1] = c == 1 ? -0.3 : -2 * cos(0.03 * k);
      phys_step(m, d);
    }
    CHECK(d->ncon > 0 && d->contact[0].dist < 0);
    double vs = m->opt.penalty_vslip;
    if (c == 1) CHECK_MSG(fabs(d->qvel[0]) < vs && fabs(d->qvel[1]) < vs, "creeping: %g %g", d->qvel[0], d->qvel[1]);
    else CHECK(fabs(d->qvel[0]) > vs && fabs(d->qvel[1]) > vs);
    const char* what[3] = {"penalty sliding", "penalty creeping", "penalty frictionloss 0"};
    check_contact(m, d, spec, 3, what[c], P);
    if (c != 2) CHECK(fabs(P[2 * 3]) > 0 && fabs(P[3 * 3 + 1]) > 0);   // the frictionloss columns move v+
    if (c == 1) {   // exactly at rest
      d->qvel[0] = d->qvel[1] = 0;
      check_contact(m, d, spec, 3, "penalty at rest", P);
    }
    phys_free_data(d);
    phys_free_model(m);
  }
}

// tendon frictionloss rows (issue 15 item 3): a two-link arm with a rope (a spatial tendon from a world site to the
// second link's tip: its moment r(q) moves with q) and a fixed coupling j1 - 0.5 j2, each with frictionloss, under
// lcp, cone and ccp without contacts. A, B and P (damping:j2, mass:l2) against central differences (relative 1e-6)
// and the dot-product test (1e-12) at: both rows sliding; the arm held at rest by both; the rope's row sticking
// while the arm moves along its null space (r' v = 0: v+ != 0, so the condition r(q)' v+ = 0 moves with q, the
// term C = v+' K_r); the rope sticking and the coupling sliding; the same under the implicit integrator (whose
// step takes frictionloss rows as the Euler step). The measured errors are printed.
static const char* ROPE_ARM =
    "<mujoco><option timestep='0.002'/><worldbody><site name='top' pos='0.2 0 0.5'/>"
    "<body name='l1'><joint name='j1' axis='0 1 0'/>"
    "<geom type='capsule' fromto='0 0 0 0.4 0 0' size='0.04' mass='1.5' contype='0' conaffinity='0'/>"
    "<body name='l2' pos='0.4 0 0'><joint name='j2' axis='0 1 0' damping='0.3'/>"
    "<geom type='capsule' fromto='0 0 0 0.3 0 0' size='0.03' mass='1' contype='0' conaffinity='0'/>"
    "<site name='tip' pos='0.3 0 0'/></body></body></worldbody><tendon>"
    "<spatial name='rope' frictionloss='%g'><site site='top'/><site site='tip'/></spatial>"
    "<fixed name='couple' frictionloss='%g'><joint joint='j1' coef='1'/><joint joint='j2' coef='-0.5'/></fixed>"
    "</tendon><actuator><motor joint='j1'/><motor joint='j2'/></actuator></mujoco>";

// A, B, P of the rope arm at (q, v, u) against central differences and the dot-product test; the worst error
static double check_tendon_state(physModel* m, const double* q, const double* v, const double* u, const char* what) {
  int n2 = 2 * m->nv;
  double A[16], B[8], ea, eb;
  physData* d = jacobians_at(m, q, v, u, what, A, B, &ea, &eb);
  const char* spec[] = {"damping:j2", "mass:l2"};
  physParamTable t;
  physLog log;
  memset(&log, 0, sizeof log);
  CHECK_MSG(phys_param_table_build(&t, m, spec, 2, &log) == PHYS_OK, "%s", log.error);
  int nt = t.ntheta;
  double P[8], Pf[8];
  CHECK_MSG(phys_step_param_jacobian(m, d, &t, P) == PHYS_OK, "%s", d->lastwarning);
  param_fd(m, d, &t, Pf);
  double ep = relerr(P, Pf, n2 * nt);
  CHECK_MSG(ea < 1e-6 && eb < 1e-6 && ep < 1e-6, "%s (%s): A %.3g B %.3g P %.3g", what,
            phys_contact_name(m->opt.contact), ea, eb, ep);
  double dot = dot_test(m, d, &t, A, B, P, 5, what);
  printf("  tendon frictionloss, %-4s %-31s A %.2e  B %.2e  P %.2e  dot %.1e\n", phys_contact_name(m->opt.contact),
         what, ea, eb, ep, dot);
  phys_param_table_free(&t);
  phys_free_data(d);
  return fmax(ea, fmax(eb, ep));
}

// the rope arm with frictionlosses F_rope, F_couple under contact model c
static physModel* rope_arm(double Fr, double Fc, int c) {
  char xml[2048];
  snprintf(xml, sizeof xml, ROPE_ARM, Fr, Fc);
  return model_text(xml, c);
}

// the rope's rate r(q) . v at (q, v) and its moment into r (2)
static double rope_rate(physModel* m, const double* q, const double* v, double* r) {
  physData* d = phys_make_data(m);
  memcpy(d->qpos, q, sizeof(double) * 2);
  phys_forward(m, d);
  phys_tendon_limit_row(m, d, 0, 0, r);
  phys_free_data(d);
  return r[0] * v[0] + r[1] * v[1];
}

static void test_tendon_rows(void) {
  double q[2] = {0.3, -0.6}, u[2] = {0.4, -0.2}, worst = 0;
  for (int c = 0; c < 3; c++) {
    physModel* m = rope_arm(0.5, 0.3, c);
    double v[2] = {2.0, -1.5}, r[2];
    CHECK(phys_frictionloss_count(m) == 2);
    worst = fmax(worst, check_tendon_state(m, q, v, u, "both sliding"));
    phys_free_model(m);
    m = rope_arm(60, 40, c);
    double v0[2] = {0, 0};
    worst = fmax(worst, check_tendon_state(m, q, v0, u, "held at rest"));
    phys_free_model(m);
    // along the rope's null space: v = (r1, -r0), rate 0; its row sticks, the arm moves on
    m = rope_arm(60, 0, c);
    rope_rate(m, q, v0, r);
    double vn[2] = {1.5 * r[1] / hypot(r[0], r[1]), -1.5 * r[0] / hypot(r[0], r[1])};
    CHECK(fabs(rope_rate(m, q, vn, r)) < 1e-15);
    worst = fmax(worst, check_tendon_state(m, q, vn, u, "rope sticking, arm moving"));
    phys_free_model(m);
    m = rope_arm(60, 0.3, c);
    worst = fmax(worst, check_tendon_state(m, q, vn, u, "rope sticking, coupling sliding"));
    m->opt.integrator = PHYS_INT_IMPLICIT;   // (the step's own choice: rows take the Euler step, as the dofs')
    worst = fmax(worst, check_tendon_state(m, q, vn, u, "implicit integrator"));
    phys_free_model(m);
  }
  printf("tendon frictionloss rows: worst relative error %.3g (tolerance 1e-6)\n", worst);
  // penalty's regularized tendon friction (issue 15 item 3, s33; was refused): sliding (|u| > v_slip: C = F/|u|),
  // held at rest (C = F / v_slip), moving along the rope's null space (u = 0)
  for (int k = 0; k < 3; k++) {
    const double F[3][2] = {{0.5, 0.3}, {60, 40}, {60, 0}};
    double v[2] = {2.0, -1.5}, v0[2] = {0, 0}, r[2];
    physModel* m = rope_arm(F[k][0], F[k][1], PHYS_CONTACT_PENALTY);
    rope_rate(m, q, v0, r);
    double vn[2] = {1.5 * r[1] / hypot(r[0], r[1]), -1.5 * r[0] / hypot(r[0], r[1])};
    const double* vk = k == 0 ? v : (k == 1 ? v0 : vn);
    const char* what[3] = {"both sliding", "held at rest", "rope at rate 0, arm moving"};
    worst = fmax(worst, check_tendon_state(m, q, vk, u, what[k]));
    phys_free_model(m);
  }
  printf("with penalty: worst relative error %.3g (tolerance 1e-6)\n", worst);
  // refused with a message, not wrong: a pos:BODY parameter (the rope's moment moves with the link's placement)
  physModel* m = rope_arm(0.5, 0.3, PHYS_CONTACT_LCP);
  physData* d = phys_make_data(m);
  double P[8], v[2] = {2.0, -1.5};
  memcpy(d->qpos, q, sizeof q);
  memcpy(d->qvel, v, sizeof v);
  const char* spec[] = {"pos:l2"};
  physParamTable t;
  physLog log;
  memset(&log, 0, sizeof log);
  CHECK_MSG(phys_param_table_build(&t, m, spec, 1, &log) == PHYS_OK, "%s", log.error);
  CHECK(phys_step_param_jacobian(m, d, &t, P) == PHYS_ERR_ARG);
  CHECK_MSG(strstr(d->lastwarning, "frictionloss of spatial tendon 'rope'"), "%s", d->lastwarning);
  phys_param_table_free(&t);
  phys_free_data(d);
  phys_free_model(m);
}

// tendon frictionloss rows with a contact (issue 15 item 3): the two-link arm of test_with_contact on the floor with
// a rope (a spatial tendon from a world site to the lower link: its moment r(q) turns with q) of frictionloss F_r
// and joint frictionloss on b. Under lcp, cone and ccp the rows' impulses are unknowns of the step
// (step_contact_angular.c: a sticking row keeps r' v+ = 0 while r moves with q, a sliding row's force +-F r(q)
// turns with q); under penalty the rope's regularized friction -C(u) u+ r(q) (tendon_rows.c) is differentiated in
// the tape (penalty_deriv.c). States: the rope sliding (F 0.5) with the tip sliding on a frictionless floor; the
// rope sticking (F 60) with the arm held, the tip pressing on a floor with friction 1 (the contact's rows and the
// rope's hold the two dofs together: a redundant set; the rope sticking on a frictionless floor ends near rest
// with the rope's rate 4e-7, where the primal's alternation of the contact problem and the friction block stops
// short and differences fail: not used). The tip starts 1 mm into the floor and the drift stabilization is
// off (baumgarte 0), so the contact stays active without a correction: at exactly 0 depth the step has a kink, and
// a body held at rest sits on the position correction's kink (docs/limits.md: without any friction row dq+/dq is
// 0.80 against the differences' 0.90 there). A, B, P (damping:b, mass:l1) against central differences and the
// dot-product test (check_contact)
static const char* ROPE_FLOOR =
    "<mujoco><option timestep='0.002'/><default><geom friction='%g'/></default><worldbody>"
    "<geom type='plane' size='5 5 .1'/><site name='top' pos='0.25 0 0.9'/><body name='l1' pos='0 0 0.479'>"
    "<joint name='a' axis='0 1 0'/><geom type='capsule' fromto='0 0 0 0.4 0 0' size='0.03' mass='1'/>"
    "<body pos='0.4 0 0'><joint name='b' axis='0 1 0' damping='0.2' frictionloss='0.2'/><geom type='capsule' "
    "fromto='0 0 0 0 0 -0.45' size='0.03' mass='1'/><site name='mid' pos='0 0 -0.2'/></body></body></worldbody>"
    "<tendon><spatial name='rope' frictionloss='%g'><site site='top'/><site site='mid'/></spatial></tendon>"
    "<actuator><motor joint='a'/><motor joint='b'/></actuator></mujoco>";

static void test_tendon_contact(void) {
  const char* spec[] = {"damping:b", "mass:l1"};
  const double mu[2] = {0, 1}, Fr[2] = {0.5, 60};
  const char* what[2] = {"rope sliding, tip sliding", "rope sticking, tip sticking"};
  for (int c = 0; c < 4; c++)
    for (int k = 0; k < 2; k++) {
      char text[2048];
      physLog log;
      snprintf(text, sizeof text, ROPE_FLOOR, mu[k], Fr[k]);
      physModel* m = load_text(text, &log);
      CHECK_MSG(m != NULL, "%s", log.error);
      if (!m) return;
      m->opt.contact = c;
      m->opt.baumgarte = 0;
      physData* d = phys_make_data(m);
      for (int s = 0; s < 60; s++) {
        d->ctrl[0] = k > 0 ? 0.3 : 3 * sin(0.02 * s), d->ctrl[1] = k > 0 ? -0.2 : -2 * cos(0.03 * s);
        phys_step(m, d);
      }
      double r[2], rate;
      phys_forward(m, d);
      phys_tendon_limit_row(m, d, 0, 0, r);
      rate = r[0] * d->qvel[0] + r[1] * d->qvel[1];
      CHECK_MSG(d->ncon > 0, "%s (%s): no contact", what[k], phys_contact_name(c));
      if (k == 1 && c < 3) CHECK_MSG(fabs(rate) < 1e-15, "%s (%s): rope rate %g", what[k], phys_contact_name(c), rate);
      if (k != 1) CHECK_MSG(fabs(rate) > 1e-3, "%s (%s): rope rate %g", what[k], phys_contact_name(c), rate);
      double P[24];
      check_contact(m, d, spec, 2, what[k], P);
      phys_free_data(d);
      phys_free_model(m);
    }
}

int main(void) {
  mjcf_text_begin("fl_deriv");
  test_states();
  test_zero_at_rest();
  test_with_contact();
  test_limit();
  test_penalty_contact();
  test_tendon_rows();
  test_tendon_contact();
  return mjcf_text_end();
}
