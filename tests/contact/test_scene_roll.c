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
//  - lcp, cone and ccp treat condim 6 as 3 (the spin is kept) and the loader says so; the energy never grows.
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

// lcp, cone, ccp: condim 6 acts as 3 (the spin is kept), and the loader warns, naming the geom and the file
static void test_constrained(void) {
  char file[1024];
  const char* src = getenv("PHYS_SOURCE");
  snprintf(file, sizeof file, "%s%s%s", src ? src : "", src ? "/" : "", SCENE);
  physLog log;
  memset(&log, 0, sizeof log);
  physModel* m = phys_load(file, NULL, &log);
  CHECK(m && log.nwarning == 0);   // the file's contact model is penalty: no warning
  m->opt.contact = PHYS_CONTACT_LCP;
  phys_penalty_check(m, &log);
  CHECK_MSG(log.nwarning == 1 && strstr(log.warning[0], "geom 'ball': condim 6: torsional and rolling friction are "
                                                          "simulated under contact model penalty only; lcp, cone and "
                                                          "ccp (this model's: lcp) treat it as condim 3"),
            "%s", log.warning[0]);
  physData* d = phys_make_data(m);
  const double zero[3] = {0, 0, 0}, spin[3] = {0, 0, 20};
  for (int c = PHYS_CONTACT_LCP; c <= PHYS_CONTACT_CCP; c++) {
    if (c == PHYS_CONTACT_PENALTY) continue;
    m->opt.contact = c;
    start(m, d, zero, spin);
    run(m, d, 200);
    printf("%s: spin after 0.2 s %.12g rad/s (kept)\n", scene_name(c), d->qvel[5]);
    CHECK(fabs(d->qvel[5] - 20) < 1e-6);
  }
  phys_free_data(d);
  phys_free_model(m);
}

int main(void) {
  test_penalty();
  test_constrained();
  return test_done();
}
