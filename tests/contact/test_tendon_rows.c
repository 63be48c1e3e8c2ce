// test_tendon_rows.c - tendon length limits as constraint rows (src/contact/tendon_rows.c, issue 15 item 3): the
// rows' Jacobian is the tendon's moment (+ lower, - upper) and their dist L - lo / hi - L; phys_constraint_assemble
// puts them after the joint limits; a body hanging on a limited rope (upper limit of a spatial tendon) and one
// standing on a lower limit of a fixed tendon stop at the limit and are held by exactly their weight in lcp, cone
// and ccp; penalty holds them at the spring's sag m g / k_c; a swinging pendulum on a slack rope never stretches
// it past the limit; the step derivatives refuse limited tendons (their rows' derivatives are not built).
#include <math.h>
#include <string.h>

#include "contact.h"
#include "dyn.h"
#include "factor.h"
#include "grad.h"
#include "model/mjcf_text.h"

// a 1 kg ball on a vertical slide, 1.2 m of rope from the site 1 m above it (upper limit) and a fixed tendon
// L = 2 z limited below at -0.1 (the ball stands at z = -0.05); 'rope' alone (ROPE) or 'floor' alone (FLOOR)
#define BALL                                                                                                   \
  "<mujoco><option timestep='0.001'/><worldbody><site name='top' pos='0 0 1'/>"                               \
  "<body><joint name='z' type='slide' axis='0 0 1'/><geom size='.05' mass='1' contype='0' conaffinity='0'/>"   \
  "<site name='b'/></body></worldbody><tendon>"
static const char* ROPE = BALL "<spatial name='rope' limited='true' range='0 1.2'><site site='top'/><site site='b'/>"
                               "</spatial></tendon></mujoco>";
static const char* FLOOR = BALL "<fixed name='floor' limited='true' range='-0.1 5'><joint joint='z' coef='2'/>"
                                "</fixed></tendon></mujoco>";
// a pendulum (hinge about y, arm 0.5 m along x at rest) and a rope from a world site at (0.3, 0, 0.4) to its tip
// of 0.55 m: slack near the bottom of the swing, taut near the top; and a joint limit beside it
static const char* PENDULUM =
    "<mujoco><compiler angle='radian'/><option timestep='0.001'/><worldbody><site name='top' pos='0.3 0 0.4'/>"
    "<body><joint name='h' axis='0 1 0' limited='true' range='-3 3'/>"
    "<geom type='capsule' fromto='0 0 0 .5 0 0' size='.02' contype='0' conaffinity='0'/><site name='tip' pos='.5 0 0'/>"
    "</body></worldbody><tendon><spatial name='rope' limited='true' range='0 0.55'><site site='top'/>"
    "<site site='tip'/></spatial></tendon></mujoco>";

// the assembled rows at a violated state equal the moment dL/dq (phys_spring_eval, tension -1) with the side's sign
// and their dist the distance to the bound; a joint limit violated at the same time keeps its row first
static void test_rows(void) {
  physLog log;
  physModel* m = load_text(PENDULUM, &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  if (!m) return;
  physData* d = phys_make_data(m);
  double q[3] = {0.2, -0.4, 3.1};   // taut (below the bar: L > 0.55), slack, taut and past the joint limit
  for (int k = 0; k < 3; k++) {
    d->qpos[0] = q[k];
    phys_forward(m, d);
    double L = d->spring_length[0], mom = 0;
    phys_spring_eval(m, d, 0, NULL, -1, &mom);
    int active = L >= 0.55, jl = q[k] > 3;
    CHECK(phys_constraint_nlimit(m, d) == active + jl);
    size_t mark = phys_stack_mark(d);
    double *J, *G, *g, *mu, vf[1] = {0.7}, add[1] = {0};
    CHECK(phys_factor_m(m, d->qLD, d->qM, add) == 1);   // (no damping: M~ = M)
    physConstraintProblem p;
    phys_constraint_assemble(m, d, NULL, 0, vf, NULL, &p, &J, &G, &g, &mu);
    CHECK(p.nl == active + jl && p.n == p.nl);
    if (jl) CHECK(J[0] == -1);   // the joint's upper limit first
    if (active) {
      int r = jl;
      double row = 0;
      CHECK(phys_tendon_limit_row(m, d, 0, 1, &row) == 0.55 - L);
      CHECK(J[r] == -mom && row == -mom && g[r] == -mom * 0.7);
      CHECK(fabs(G[r * p.n + r] - mom * mom / d->qM[0]) < 1e-15 * G[r * p.n + r]);
      CHECK_MSG(p.gpos[r] < 0 || 0.55 - L + PHYS_CONTACT_SLOP >= -PHYS_CONTACT_SLOP_TOL, "gpos %g", p.gpos[r]);
    }
    phys_stack_free(d, mark);
  }
  phys_free_data(d);
  phys_free_model(m);
}

// the tendon's length at d's state
static double length(const physModel* m, physData* d) {
  phys_forward(m, d);
  return d->spring_length[0];
}

// the ball dropped from rest at z = 0: after 1 s it hangs at the limit (within the slop), at rest, and the
// constraint force is its weight m g = 9.81 N (lcp, cone, ccp); penalty sags by m g / k_c beyond the limit
static void test_hold(const char* text, double limit, int upper) {
  physLog log;
  physModel* m = load_text(text, &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  if (!m) return;
  for (int cm = 0; cm < 4; cm++) {
    m->opt.contact = cm;
    physData* d = phys_make_data(m);
    double maxviol = 0;
    for (int t = 0; t < 1000; t++) {
      phys_step(m, d);
      double v = upper ? length(m, d) - limit : limit - length(m, d);
      if (t > 300 && v > maxviol) maxviol = v;
    }
    double L = length(m, d), f = d->qfrc_constraint[0], g = 9.81;
    if (cm < 3) {
      double tol = PHYS_CONTACT_SLOP + PHYS_CONTACT_SLOP_TOL;   // where the position correction stops
      CHECK_MSG(maxviol <= tol && fabs(L - limit) <= tol,
                "model %d: L %.12g (limit %g), largest violation after 0.3 s %.3g", cm, L, limit, maxviol);
      CHECK_MSG(fabs(f - g) < 1e-9 && fabs(d->qvel[0]) < 1e-9, "model %d: force %.15g, v %g", cm, f, d->qvel[0]);
      CHECK(d->nlimit == 1);
    } else {
      // the row r pushes f r = m g: f = k_c (-dist) = m g / |r| (the floor's row is 2: L = 2 z)
      double k = m->opt.penalty_stiffness, sag = (upper ? 1 : 0.5) * g / k, viol = upper ? L - limit : limit - L;
      CHECK_MSG(fabs(viol - sag) < 1e-6 * viol && fabs(f - g) < 1e-6,
                "penalty: violation %.12g (m g / (k_c |r|): %.12g), force %.12g", viol, sag, f);
    }
    int nwarn = 0;
    for (int k = 0; k < PHYS_NWARNKIND; k++) nwarn += d->warning_count[k];
    CHECK_MSG(nwarn == 0, "model %d: %d warnings", cm, nwarn);
    phys_free_data(d);
  }
  // derivatives (tests/grad/test_tendon_rows_deriv.c): penalty's limit spring has them too
  CHECK(m->opt.contact == PHYS_CONTACT_PENALTY);
  physData* d = phys_make_data(m);
  double A[4];
  CHECK(phys_step_jacobian(m, d, A, NULL) == PHYS_OK);
  phys_free_data(d);
  phys_free_model(m);
}

// the pendulum released with its rope slack swings down and is caught when the rope becomes taut: over 2 s the
// rope never stretches beyond its limit by more than one step's travel at the largest rate (the row acts from
// the step after it passes the limit, as a joint limit's, and the position correction takes the rest back) and
// the energy never rises above the start's (lcp, cone, ccp)
static void test_swing(void) {
  physLog log;
  physModel* m = load_text(PENDULUM, &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  if (!m) return;
  for (int cm = 0; cm < 3; cm++) {
    m->opt.contact = cm;
    physData* d = phys_make_data(m);
    d->qpos[0] = -1.0;   // tip up at 57 degrees: the rope is slack
    double L0 = length(m, d), maxL = 0, e0 = 0, emax = -INFINITY, maxrate = 0;
    int caught = 0;
    for (int t = 0; t < 2000; t++) {
      phys_forward(m, d);
      maxrate = fmax(maxrate, fabs(d->spring_velocity[0]));
      phys_step(m, d);
      phys_forward(m, d);
      double L = d->spring_length[0], en[2];
      phys_energy(m, d, en);
      double e = en[0] + en[1];
      if (t == 0) e0 = e;
      if (d->nlimit > 0) caught = 1;
      maxL = fmax(maxL, L);
      emax = fmax(emax, e);
    }
    CHECK_MSG(L0 < 0.55 && caught, "model %d: L0 %g, caught %d", cm, L0, caught);
    // the rope is caught in the step after it passes the limit: at most one step's stretch beyond it
    CHECK_MSG(maxL < 0.55 + maxrate * m->opt.timestep, "model %d: longest %.12g (rate %g)", cm, maxL, maxrate);
    CHECK_MSG(emax <= e0 + 1e-9, "model %d: energy %.12g above the start's %.12g", cm, emax, e0);
    phys_free_data(d);
  }
  phys_free_model(m);
}

// the ball on its slide with a fixed tendon L = 2 z of frictionloss F (its row 2, the dof's friction force 2 F):
// from rest, 2 F = 12 N > m g holds it exactly at rest with the force m g (lcp, cone, ccp); 2 F = 6 N < m g lets
// it slide down at g - 2 F / m, so after 500 steps v = -500 dt (g - 6) (semi-implicit Euler, exact to rounding);
// penalty's regularized friction slides within 3 % of that (its lag, as a joint frictionloss's)
static void test_frictionloss(void) {
  static const char* const TEXT[2] = {
      BALL "<fixed name='dry' frictionloss='6'><joint joint='z' coef='2'/></fixed></tendon></mujoco>",
      BALL "<fixed name='dry' frictionloss='3'><joint joint='z' coef='2'/></fixed></tendon></mujoco>"};
  for (int k = 0; k < 2; k++) {
    physLog log;
    physModel* m = load_text(TEXT[k], &log);
    CHECK_MSG(m != NULL && log.nwarning == 0, "%s", log.error);
    if (!m) return;
    for (int cm = 0; cm < 4; cm++) {
      m->opt.contact = cm;
      physData* d = phys_make_data(m);
      for (int t = 0; t < 500; t++) phys_step(m, d);
      double v = d->qvel[0], f = d->qfrc_constraint[0], slide = -500 * m->opt.timestep * (9.81 - 6);
      if (k == 0 && cm < 3) CHECK_MSG(fabs(v) < 1e-15 && fabs(f - 9.81) < 1e-12, "model %d: v %g f %.15g", cm, v, f);
      if (k == 1 && cm < 3) CHECK_MSG(fabs(v - slide) < 1e-12 && fabs(f - 6) < 1e-12, "model %d: v %.15g f %.15g", cm, v, f);
      if (k == 0 && cm == 3) CHECK_MSG(fabs(v) < 1e-3, "penalty: v %g", v);   // (creeps below vslip)
      // penalty lags by its viscous start below vslip and C taken at the step's start: -1.8510 for -1.905 (a joint
      // frictionloss of 6 N on the same slide: -1.8563)
      if (k == 1 && cm == 3) CHECK_MSG(fabs(v - slide) < 0.03 * fabs(slide), "penalty: v %.12g (%.12g)", v, slide);
      phys_free_data(d);
    }
    // derivatives in every contact model (tests/grad/test_frictionloss_deriv.c, test_tendon_rows_deriv.c)
    m->opt.contact = PHYS_CONTACT_PENALTY;
    physData* d = phys_make_data(m);
    double A[4];
    CHECK(phys_step_jacobian(m, d, A, NULL) == PHYS_OK);
    phys_free_data(d);
    phys_free_model(m);
  }
}

int main(void) {
  mjcf_text_begin("tendon_rows");
  test_rows();
  test_hold(ROPE, 1.2, 1);
  test_hold(FLOOR, -0.1, 0);
  test_swing();
  test_frictionloss();
  return mjcf_text_end();
}
