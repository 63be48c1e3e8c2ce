// test_scene_roll.c - torsional and rolling friction (issue 16, MuJoCo's condim 4 and 6) on a sphere resting
// on a plane, tests/data/contact/sphere_roll.xml (r = 0.1 m, m = 1 kg, I = 2/5 m r^2 = 0.004 kg m^2; friction
// "1 0.02 0.01", condim 6 against the floor's "1 0 0", condim 3: the pair's mu_spin = 0.02 m, mu_roll = 0.01 m):
//  - penalty, spinning about the normal at 20 rad/s: the torsional torque mu_spin f_n = mu_spin m g decelerates
//    the spin at mu_spin m g / I = 49.05 rad/s^2 (the contact point on the spin axis: no sliding);
//  - penalty, rolling at 1 m/s without slipping: rolling friction mu_roll m g against the rolling, the sliding
//    friction keeping it rolling, m v' = F, I w' = -r F - mu_roll m g, v = w r: v' = -mu_roll m g r / (I + m r^2)
//    = -5 mu_roll g / (7 r) = -0.7007 m/s^2, with r the rolling radius: penalty's contact point lies midway
//    through the penetration m g / k_c, r_e = r + dist / 2 (0.7022 m/s^2 at k_c = 1e4);
//  - condim 4 (torsion only) leaves the rolling free, condim 3 the spin (to rounding);
//  - lcp, cone and ccp (src/contact/angular.c, hard rows): the same laws exactly (the ball at radius r), no loader
//    warning; rolling at 45 degrees to the contact frame's tangents decelerates by 5 mu_roll g/(7 r) under cone's
//    and ccp's disk and sqrt(2) times that under lcp's square (each tangent bounded separately);
//  - a cube spinning on a face (tests/data/contact/box_spin.xml, four corners sharing one torsion row): condim 4
//    brakes mu_spin m g / I_z = 29.43 rad/s^2 more than condim 3 (lcp, cone; one step);
//  - the energy never grows.
#include "scene.h"

#define SCENE "tests/data/contact/sphere_roll.xml"
#define MU_SPIN 0.02
#define MU_ROLL 0.01
#define RADIUS 0.1
#define INERTIA 0.004
#define SETTLE 300   // steps at rest first (penalty reaches its static depth m g / k_c)

// the ball's condim set to `condim`, settled at rest, given the velocity qvel[3..5] = w, qvel[0..2] = v
static void start(const physModel* m, physData* d, const double v[3], const double w[3]) {
  phys_reset_data(m, d);
  for (int i = 0; i < SETTLE; i++) phys_step(m, d);
  for (int k = 0; k < 3; k++) d->qvel[k] = v[k], d->qvel[3 + k] = w[k];
  phys_forward(m, d);
}

// run n steps; returns the largest energy gain over the start
static double run(const physModel* m, physData* d, int n) {
  double e0 = scene_energy(m, d), gain = 0;
  for (int i = 0; i < n; i++) {
    phys_step(m, d);
    double e = scene_energy(m, d);
    if (e - e0 > gain) gain = e - e0;
  }
  return gain;
}

// penalty: the spin's deceleration (0.2 s from 20 rad/s) and the rolling's (0.1 .. 0.5 s from 1 m/s)
static void test_penalty(void) {
  physModel* m = scene_load(SCENE, PHYS_CONTACT_PENALTY);
  if (!m) return;
  physData* d = phys_make_data(m);
  int ball = 1;   // geom 0 is the floor
  const double zero[3] = {0, 0, 0}, spin[3] = {0, 0, 20}, roll_v[3] = {1, 0, 0}, roll_w[3] = {0, 1 / RADIUS, 0};
  double dt = m->opt.timestep, g = SCENE_G;
  for (int condim = 6; condim >= 3; condim--) {
    if (condim == 5) continue;
    m->geom_condim[ball] = condim;
    start(m, d, zero, spin);
    double gain = run(m, d, 200);
    double alpha = (20 - d->qvel[5]) / (200 * dt), want = condim >= 4 ? MU_SPIN * g / INERTIA : 0;
    printf("penalty condim %d: spin decel %.9g rad/s^2 (analytic %.9g), energy gain %.3g J\n", condim, alpha, want, gain);
    double ang[2];
    phys_contact_friction_ang(m, d->contact, ang);
    CHECK(d->ncon == 1 && ang[0] == (condim >= 4 ? MU_SPIN : 0) && ang[1] == (condim == 6 ? MU_ROLL : 0));
    CHECK_MSG(fabs(alpha - want) <= 2e-4 * MU_SPIN * g / INERTIA, "spin decel %.9g want %.9g", alpha, want);
    CHECK(gain <= 1e-9);
    // the constraint torque about the vertical (the free joint's dof 5): -mu_spin f_n against the spin
    CHECK_MSG(fabs(d->qfrc_constraint[5] + want * INERTIA) < 1e-3 * MU_SPIN * g, "torque %.9g", d->qfrc_constraint[5]);

    start(m, d, roll_v, roll_w);
    run(m, d, 100);
    double v1 = d->qvel[0];
    gain = run(m, d, 400);
    double decel = (v1 - d->qvel[0]) / (400 * dt);
    // the ball rolls on the contact point, midway through the penetration m g / k_c: radius r_e = r + dist / 2
    double re = RADIUS + d->contact[0].dist / 2;
    want = condim == 6 ? MU_ROLL * g * re / (INERTIA + re * re) : 0;
    printf("penalty condim %d: rolling decel %.9g m/s^2 (analytic %.9g), slip v - w r_e %.3g m/s, energy gain %.3g J\n",
           condim, decel, want, d->qvel[0] - d->qvel[4] * re, gain);
    CHECK_MSG(fabs(decel - want) <= 3e-4 * 5 * MU_ROLL * g / (7 * RADIUS), "rolling decel %.9g want %.9g", decel, want);
    CHECK(gain <= 1e-9);
  }
  phys_free_data(d);
  phys_free_model(m);
}

// one constrained model c, ball of condim `condim`: the spin's deceleration and the constraint torque (0.2 s from
// 20 rad/s), the rolling's (0.1 .. 0.5 s from 1 m/s, along x and at 45 degrees)
static void constrained_ball(physModel* m, physData* d, int c, int condim) {
  const double zero[3] = {0, 0, 0}, spin[3] = {0, 0, 20}, h = sqrt(0.5);
  double dt = m->opt.timestep, g = SCENE_G;
  m->opt.contact = c;
  m->geom_condim[1] = condim;
  start(m, d, zero, spin);
  double gain = run(m, d, 200), alpha = (20 - d->qvel[5]) / (200 * dt), want = condim >= 4 ? MU_SPIN * g / INERTIA : 0;
  printf("%s condim %d: spin decel %.9g rad/s^2 (analytic %.9g), energy gain %.3g J\n", scene_name(c), condim, alpha,
         want, gain);
  CHECK_MSG(fabs(alpha - want) <= 1e-6 * MU_SPIN * g / INERTIA, "%s spin decel %.9g want %.9g", scene_name(c), alpha, want);
  CHECK_MSG(fabs(d->qfrc_constraint[5] + want * INERTIA) < 1e-6 * MU_SPIN * g, "torque %.9g", d->qfrc_constraint[5]);
  CHECK(gain <= 1e-9);
  for (int diag = 0; diag < 2; diag++) {   // along x, then at 45 degrees between the frame's tangents
    double v[3] = {diag ? h : 1, diag ? h : 0, 0}, w[3] = {-v[1] / RADIUS, v[0] / RADIUS, 0};
    start(m, d, v, w);
    run(m, d, 100);
    double v1 = hypot(d->qvel[0], d->qvel[1]);
    gain = run(m, d, 400);
    double decel = (v1 - hypot(d->qvel[0], d->qvel[1])) / (400 * dt);
    want = condim == 6 ? 5 * MU_ROLL * g / (7 * RADIUS) * (diag && c == PHYS_CONTACT_LCP ? sqrt(2) : 1) : 0;
    printf("%s condim %d: rolling%s decel %.9g m/s^2 (analytic %.9g), energy gain %.3g J\n", scene_name(c), condim,
           diag ? " at 45 deg" : "", decel, want, gain);
    CHECK_MSG(fabs(decel - want) <= 1e-6 * 5 * MU_ROLL * g / (7 * RADIUS), "%s rolling decel %.9g want %.9g",
              scene_name(c), decel, want);
    CHECK(gain <= 1e-9);
  }
  CHECK_MSG(d->warning_count[PHYS_WARN_SOLVER] == 0, "%s: solver warnings: %s", scene_name(c), d->lastwarning);
}

// lcp, cone, ccp: the ball's laws exactly (the frame's tangents x and y: the 45 degree case's premise), no loader
// warning; the cube's torsion on four shared rows
static void test_constrained(void) {
  char file[1024];
  const char* src = getenv("PHYS_SOURCE");
  snprintf(file, sizeof file, "%s%s%s", src ? src : "", src ? "/" : "", SCENE);
  physLog log;
  memset(&log, 0, sizeof log);
  physModel* m = phys_load(file, NULL, &log);
  CHECK(m && log.nwarning == 0);
  m->opt.contact = PHYS_CONTACT_LCP;
  phys_penalty_check(m, &log);
  CHECK_MSG(log.nwarning == 0, "%s", log.warning[0]);   // (before issue 16's rows: "treat it as condim 3")
  physData* d = phys_make_data(m);
  const double zero[3] = {0, 0, 0};
  start(m, d, zero, zero);
  const double* fr = d->contact[0].frame;
  CHECK(d->ncon == 1 && fabs(fabs(fr[3]) - 1) < 1e-15 && fabs(fabs(fr[7]) - 1) < 1e-15);
  for (int c = PHYS_CONTACT_LCP; c <= PHYS_CONTACT_CCP; c++) {
    if (c == PHYS_CONTACT_PENALTY) continue;
    for (int condim = 6; condim >= 3; condim--)
      if (condim != 5) constrained_ball(m, d, c, condim);
  }
  phys_free_data(d);
  phys_free_model(m);
  physModel* b = scene_load("tests/data/contact/box_spin.xml", PHYS_CONTACT_LCP);
  if (!b) return;
  physData* e = phys_make_data(b);
  const double iz = 1.0 * (0.04 + 0.04) / 12, spin[3] = {0, 0, 20};
  // one step from rest on the face (lcp's square friction pyramid is fixed in the floor's frame, so its corner
  // friction changes as the cube turns: only the first step's is the same at condim 3 and 4); ccp's relaxation
  // lifts the sliding cube at mu |v_t| (contact.h), so its normal impulses are not m g dt: lcp and cone here
  for (int c = PHYS_CONTACT_LCP; c <= PHYS_CONTACT_CONE; c++) {
    b->opt.contact = c;
    double a[2];
    for (int k = 0; k < 2; k++) {
      b->geom_condim[1] = k ? 3 : 4;
      start(b, e, zero, spin);
      double gain = run(b, e, 1);
      a[k] = (20 - e->qvel[5]) / b->opt.timestep;
      CHECK(gain <= 1e-9 && e->ncon == 4 && e->warning_count[PHYS_WARN_SOLVER] == 0);
    }
    printf("%s: cube spin decel condim 4 %.9g, condim 3 %.9g rad/s^2: torsion's share %.9g (analytic %.9g)\n",
           scene_name(c), a[0], a[1], a[0] - a[1], MU_SPIN * SCENE_G / iz);
    CHECK_MSG(fabs(a[0] - a[1] - MU_SPIN * SCENE_G / iz) <= 1e-6 * MU_SPIN * SCENE_G / iz, "%s cube torsion %.9g",
              scene_name(c), a[0] - a[1]);
  }
  // condim 6 on the cube: 12 angular rows on 6 dofs (the arena's bound counts 3 rows per contact), every model,
  // 0.2 s spinning and rolling: the energy never grows; no warning of any kind under lcp and ccp (cone's ADMM
  // warns here at condim 3 as well: 12 'staggered projections not converged' at residuals ~1e-10 m/s)
  b->geom_condim[1] = 6;
  for (int c = PHYS_CONTACT_LCP; c <= PHYS_CONTACT_CCP; c++) {
    if (c == PHYS_CONTACT_PENALTY) continue;
    b->opt.contact = c;
    const double v[3] = {0.5, 0, 0}, w[3] = {0, 2, 10};
    start(b, e, v, w);
    double gain = run(b, e, 200);
    int nw = 0;
    for (int k = 0; k < PHYS_NWARNKIND; k++) nw += e->warning_count[k];
    printf("%s: cube condim 6, 0.2 s: spin %.6g rad/s, speed %.6g m/s, %d warnings, energy gain %.3g J\n",
           scene_name(c), e->qvel[5], hypot(e->qvel[0], e->qvel[1]), nw, gain);
    CHECK_MSG((nw == 0 || c == PHYS_CONTACT_CONE) && gain <= 1e-9, "%s: %d warnings (%s), gain %.3g", scene_name(c), nw,
              e->lastwarning, gain);
  }
  phys_free_data(e);
  phys_free_model(b);
}

int main(void) {
  test_penalty();
  test_constrained();
  return test_done();
}
