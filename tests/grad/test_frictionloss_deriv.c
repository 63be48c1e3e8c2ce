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
//   - with a contact (tip sliding on a floor, lcp/cone/ccp) while every row slides: A, B, P against central
//     differences and the dot-product test; rows sticking with contacts or limits active (and penalty's
//     friction with a limit spring): refused with a message, not wrong.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

// the arm with frictionloss F1, F2, F3 under contact model c (contacts off: only the friction rows)
static physModel* arm(double F1, double F2, double F3, int c) {
  char xml[2048];
  snprintf(xml, sizeof xml, ARM, F1, F2, F3);
  physLog log;
  physModel* m = load_text(xml, &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  if (!m) exit(1);
  m->opt.contact = c;
  return m;
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

// the checks at one state of m (file comment); sticking: dofs held at rest (their rows must be 0)
static void check_state(physModel* m, const double* q, const double* v, const double* u, const char* what,
                        const int* sticking) {
  int nv = m->nv, n2 = 2 * nv, nu = m->nu;
  physData* d = phys_make_data(m);
  memcpy(d->qpos, q, sizeof(double) * nv);
  memcpy(d->qvel, v, sizeof(double) * nv);
  memcpy(d->ctrl, u, sizeof(double) * nu);
  double A[36], B[18], Af[36], Bf[18];
  CHECK_MSG(phys_step_jacobian(m, d, A, B) == PHYS_OK, "%s: %s", what, d->lastwarning);
  CHECK(phys_step_jacobian_fd(m, d, 1e-6, Af, Bf) == PHYS_OK);
  double ea = relerr(A, Af, n2 * n2), eb = relerr(B, Bf, n2 * nu);
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

  // dot-product tests
  physRng rng;
  phys_rng_seed(&rng, 11);
  double xb[6], dx[6], du[3], dth[5], xbo[6], ub[3], thb[5];
  for (int i = 0; i < n2; i++) xb[i] = phys_rng_range(&rng, -1, 1), dx[i] = phys_rng_range(&rng, -1, 1);
  for (int i = 0; i < nu; i++) du[i] = phys_rng_range(&rng, -1, 1);
  for (int i = 0; i < nt; i++) dth[i] = phys_rng_range(&rng, -1, 1);
  CHECK(phys_step_vjp(m, d, xb, xbo, ub) == PHYS_OK);
  CHECK(phys_step_param_vjp(m, d, &t, xb, thb) == PHYS_OK);
  double l = 0, r = 0, s = 0;
  for (int i = 0; i < n2; i++) {
    for (int j = 0; j < n2; j++) l += xb[i] * A[i * n2 + j] * dx[j], s += fabs(xb[i] * A[i * n2 + j] * dx[j]);
    for (int j = 0; j < nu; j++) l += xb[i] * B[i * nu + j] * du[j], s += fabs(xb[i] * B[i * nu + j] * du[j]);
    for (int j = 0; j < nt; j++) l += xb[i] * P[i * nt + j] * dth[j], s += fabs(xb[i] * P[i * nt + j] * dth[j]);
  }
  for (int j = 0; j < n2; j++) r += xbo[j] * dx[j];
  for (int j = 0; j < nu; j++) r += ub[j] * du[j];
  for (int j = 0; j < nt; j++) r += thb[j] * dth[j];
  CHECK_MSG(fabs(l - r) <= 1e-12 * s, "%s: dot-product %.17g vs %.17g", what, l, r);

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

// frictionloss rows with a contact (a two-link arm whose tip slides on a frictionless floor under motor torques):
// while every row slides, the constrained step's derivatives take the rows' constant forces in (A, B, P over
// frictionloss:a, frictionloss:b and mass:l1 against central differences < 1e-6, dot-product test 1e-12), in
// lcp, cone and ccp; the same arm held (frictionloss 50) sticks with the contact active: refused
static void test_with_contact(void) {
  const char* xml =
      "<mujoco><option timestep='0.002'/><default><geom friction='0'/></default><worldbody>"
      "<geom type='plane' size='5 5 .1'/><body name='l1' pos='0 0 0.48'><joint name='a' axis='0 1 0' "
      "frictionloss='%g'/><geom type='capsule' fromto='0 0 0 0.4 0 0' size='0.03' mass='1'/><body pos='0.4 0 0'>"
      "<joint name='b' axis='0 1 0' frictionloss='%g'/><geom type='capsule' fromto='0 0 0 0 0 -0.45' "
      "size='0.03' mass='1'/></body></body></worldbody><actuator><motor joint='a'/><motor joint='b'/></actuator>"
      "</mujoco>";
  for (int c = 0; c < 3; c++) {
    char text[2048];
    snprintf(text, sizeof text, xml, 0.5, 0.3);
    physLog log;
    physModel* m = load_text(text, &log);
    CHECK_MSG(m != NULL, "%s", log.error);
    if (!m) return;
    m->opt.contact = c;
    physData* d = phys_make_data(m);
    for (int k = 0; k < 60; k++) {
      d->ctrl[0] = 3 * sin(0.02 * k), d->ctrl[1] = -2 * cos(0.03 * k);
      phys_step(m, d);
    }
    CHECK(d->ncon > 0 && fabs(d->qvel[0]) > 0.1 && fabs(d->qvel[1]) > 0.1);   // in contact, both sliding
    double A[16], B[8], Af[16], Bf[8];
    CHECK_MSG(phys_step_jacobian(m, d, A, B) == PHYS_OK, "%s: %s", phys_contact_name(c), d->lastwarning);
    CHECK(phys_step_jacobian_fd(m, d, 1e-6, Af, Bf) == PHYS_OK);
    double ea = relerr(A, Af, 16), eb = relerr(B, Bf, 8);
    CHECK_MSG(ea < 1e-6 && eb < 1e-6, "contact (%s): A err %.3g, B err %.3g", phys_contact_name(c), ea, eb);
    const char* spec[] = {"frictionloss:a", "frictionloss:b", "mass:l1"};
    physParamTable t;
    CHECK(phys_param_table_build(&t, m, spec, 3, &log) == PHYS_OK);
    double P[12], Pf[12];
    CHECK_MSG(phys_step_param_jacobian(m, d, &t, P) == PHYS_OK, "%s", d->lastwarning);
    param_fd(m, d, &t, Pf);
    double ep = relerr(P, Pf, 12);
    CHECK_MSG(ep < 1e-6, "contact (%s): P err %.3g", phys_contact_name(c), ep);
    CHECK(fabs(P[2 * 3]) > 0 && fabs(P[3 * 3 + 1]) > 0);   // the frictionloss columns move v+
    double xb[4] = {0.3, -0.7, 0.5, 0.2}, xbo[4], ub[2], thb[3], dth[3] = {0.4, -0.6, 0.9}, dx[4] = {1, -1, 0.5, 2};
    double du[2] = {0.3, -0.4}, l = 0, r = 0, s = 0;
    CHECK(phys_step_vjp(m, d, xb, xbo, ub) == PHYS_OK && phys_step_param_vjp(m, d, &t, xb, thb) == PHYS_OK);
    for (int i = 0; i < 4; i++) {
      for (int j = 0; j < 4; j++) l += xb[i] * A[i * 4 + j] * dx[j], s += fabs(xb[i] * A[i * 4 + j] * dx[j]);
      for (int j = 0; j < 2; j++) l += xb[i] * B[i * 2 + j] * du[j], s += fabs(xb[i] * B[i * 2 + j] * du[j]);
      for (int j = 0; j < 3; j++) l += xb[i] * P[i * 3 + j] * dth[j], s += fabs(xb[i] * P[i * 3 + j] * dth[j]);
      r += xbo[i] * dx[i];
    }
    for (int j = 0; j < 2; j++) r += ub[j] * du[j];
    for (int j = 0; j < 3; j++) r += thb[j] * dth[j];
    CHECK_MSG(fabs(l - r) <= 1e-12 * s, "contact (%s): dot-product %.17g vs %.17g", phys_contact_name(c), l, r);
    phys_param_table_free(&t);
    phys_free_data(d);
    phys_free_model(m);

    snprintf(text, sizeof text, xml, 50.0, 50.0);
    m = load_text(text, &log);
    m->opt.contact = c;
    d = phys_make_data(m);
    for (int k = 0; k < 60; k++) phys_step(m, d);
    CHECK(d->ncon > 0 && d->qvel[0] == 0 && d->qvel[1] == 0);
    CHECK_MSG(phys_step_jacobian(m, d, A, B) == PHYS_ERR_ARG && strstr(d->lastwarning, "frictionloss") &&
              strstr(d->lastwarning, "sticking"), "held (%s): %s", phys_contact_name(c), d->lastwarning);
    phys_free_data(d);
    phys_free_model(m);
  }
}

// derivatives the implementation does not cover (frictionloss rows sticking at an active joint limit; penalty's
// friction with a limit spring) are refused with a message naming frictionloss
static void test_refused(void) {
  for (int c = 0; c < 4; c++) {
    physModel* m = arm(20, 5, 2, c);   // held at rest (test_states), j1 beyond its lower limit
    m->jnt_limited[0] = 1;
    m->jnt_range[0] = 0.5, m->jnt_range[1] = 1;
    physData* d = phys_make_data(m);
    d->qpos[0] = 0.3, d->qpos[1] = -0.5, d->qpos[2] = 0.8;
    double A[36], B[18];
    CHECK_MSG(phys_step_jacobian(m, d, A, B) == PHYS_ERR_ARG && strstr(d->lastwarning, "frictionloss"), "%s: %s",
              phys_contact_name(c), d->lastwarning);
    phys_free_data(d);
    phys_free_model(m);
  }
}

int main(void) {
  mjcf_text_begin("fl_deriv");
  test_states();
  test_zero_at_rest();
  test_with_contact();
  test_refused();
  return mjcf_text_end();
}
