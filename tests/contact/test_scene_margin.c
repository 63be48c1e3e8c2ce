// test_scene_margin.c - elastic bounces with and without a detection margin (issue 10 item 16): a ball
// (radius 0.1 m, 1 kg: tests/data/contact/ball_drop.xml's, changed in memory to restitution 1, no gravity,
// dt 10 ms, as tests/grad/test_toi.c's ball) falls at 1 m/s onto the plane, geom margins 0 and 0.05 m,
// friction 0 and 0.3, for lcp, cone and ccp. Each leaves the floor at +1 m/s and keeps that speed (1e-9)
// within the margin and after; without a margin the rebound's position is exact (bottom 0.2 m above the
// plane: the impact at t = 0.2 s, z(0.4 s) = 0.3 m, to 1e-9 m), with a margin the rebound starts at most the
// margin early (assemble.c normal_bias): 0.3 <= z < 0.35.
// ccp at friction 0 once pulled the ball back while it left within the margin (its cone projection kept a
// negative normal impulse on the ray mu = 0, admm.c) and the ball bounced in place at +-2 m/s; the
// projection itself is checked in tests/contact/test_admm.c.
// test_midstep: an impact inside a step, from within the margin, keeps the restitution law's rebound speed.
// With gravity (ball_drop.xml: restitution 0.8, dropped 1 m, here friction 0 and margin 0.05) every model
// rebounds to 0.8^2 m within 2%, as test_scene_bounce.c asks without a margin (ccp reached 3.6 mm before).
// test_eps_continuity: one step of a ball 5 mm above the floor at v = (5, 0, -3), margin 0.01, dt 2 ms (the gap
// closes at t* = 5/3 ms): the state after the step is continuous in restitution at 0 (every coordinate within
// 1e-8 between eps 0 and 1e-9) in lcp, cone, ccp and penalty. Before the margin impact took eps phi(vn) at any
// eps, eps = 0 took the gap bias dist/dt and eps > 0 the restitution bias: z jumped by up to dist.
// test_landing_gravity: one step of a ball 1 mm above the floor at v_z = -1 under gravity (margin 0.01, dt 2 ms,
// friction 0, restitution 0 and 0.5; the gap closes at t* = 1 ms): it leaves at eps |v| and ends at the
// continuous-time height eps |v| (dt - t*) above the floor (1e-12), gravity's share of the impulse, m g dt,
// acting over the whole step (step.c toi_displacement, assemble.c phys_toi_shift). Moving the whole impulse by
// t* left it t* dt g = 19.6 um inside the floor.
#include "contact.h"
#include "scene.h"

#define DROP "tests/data/contact/ball_drop.xml"

// ball_drop.xml's ball (radius 0.1 m, 1 kg) and plane with friction mu and the margin on both geoms, contact
// model `contact`; with bounce = 1 made test_toi's scene: no gravity, dt 10 ms, restitution 1
static physModel* load_ball(double mu, double margin, int contact, int bounce) {
  physModel* m = scene_load(DROP, contact);
  if (!m) return NULL;
  for (int g = 0; g < m->ngeom; g++) {
    m->geom_margin[g] = margin;
    m->geom_friction[3 * g] = mu;
    if (bounce) m->geom_restitution[g] = 1;
  }
  if (bounce) {
    m->opt.gravity[2] = 0;
    m->opt.timestep = 0.01;
  }
  return m;
}

static const char* name_of(int contact) {
  return contact == PHYS_CONTACT_LCP ? "lcp" : contact == PHYS_CONTACT_CONE ? "cone" :
         contact == PHYS_CONTACT_CCP ? "ccp" : "penalty";
}

// the ball dropped at 1 m/s from a bottom height of 0.2 m, 40 steps (impact near t = 0.2 s)
static void test_bounce(int contact, double mu, double margin) {
  physModel* m = load_ball(mu, margin, contact, 1);
  if (!m) return;
  physData* d = phys_make_data(m);
  d->qpos[2] = 0.3;
  d->qvel[2] = -1;
  int up = -1, ok = 1;
  for (int i = 0; i < 40; i++) {
    phys_step(m, d);
    if (up < 0 && d->qvel[2] > 0) up = i;
    if (up >= 0 && fabs(d->qvel[2] - 1) > 1e-9) ok = 0;   // once bounced: +1 m/s at every step
  }
  double z = d->qpos[2];
  CHECK_MSG(up >= 0 && ok, "%s mu %g margin %g: the ball did not leave at +1 m/s (bounce step %d, vz %.6g at "
            "the end)", name_of(contact), mu, margin, up, d->qvel[2]);
  if (margin == 0) CHECK_MSG(fabs(z - 0.3) < 1e-9, "%s mu %g: z(0.4 s) = %.12g, not 0.3", name_of(contact), mu, z);
  else CHECK_MSG(z >= 0.3 - 1e-9 && z < 0.3 + margin, "%s mu %g margin %g: z(0.4 s) = %.12g", name_of(contact), mu,
                 margin, z);
  CHECK_MSG(d->nwarning == 0, "%s mu %g margin %g: %d warnings", name_of(contact), mu, margin, d->nwarning);
  printf("%-4s mu %.1f margin %.2f: leaves at step %d, vz %.12f, z(0.4 s) %.9f\n", name_of(contact), mu, margin, up,
         d->qvel[2], z);
  phys_free_data(d);
  phys_free_model(m);
}

// ball_drop.xml with margin 0.05 and friction 0: the apex after the first bounce (bottom height) is 0.8^2 m
// within 2%
static void test_drop_margin(int contact) {
  physModel* m = load_ball(0, 0.05, contact, 0);
  if (!m) return;
  physData* d = phys_make_data(m);
  int bounced = 0;
  double apex = 0;
  for (int i = 0; i < 1500; i++) {
    phys_step(m, d);
    if (d->qvel[2] > 0) bounced = 1;
    if (bounced) apex = fmax(apex, d->qpos[2] - 0.1);
  }
  CHECK_MSG(bounced && fabs(apex - 0.64) < 0.02 * 0.64, "%s drop with margin 0.05: apex %.4f m, expected 0.64",
            name_of(contact), apex);
  printf("%-4s drop with margin 0.05, friction 0: apex %.4f m (0.8^2 = 0.64)\n", name_of(contact), apex);
  phys_free_data(d);
  phys_free_model(m);
}

// test_bounce's scene with restitution eps, margin 0.05 and friction 0, the impact inside a step (bottom b0
// above the plane at 1 m/s, impact at t_c = b0): once bounced the ball leaves at exactly eps m/s, whatever
// the phase of the impact within the step, and after 0.6 s its bottom is at the continuous eps (0.6 - t_c)
// or up to (1 + eps) |v| dt above it (the rebound starts at the impact step's start, up to |v| dt early). A
// velocity row that also carries the time-of-impact position (b = eps phi + (1 + eps) dist/dt) fails this:
// it leaves at eps - (1 + eps) dist/dt (0.08 or 0.35 m/s instead of 0.8).
static void test_midstep(int contact, double eps, double b0) {
  physModel* m = load_ball(0, 0.05, contact, 1);
  if (!m) return;
  for (int g = 0; g < m->ngeom; g++) m->geom_restitution[g] = eps;
  physData* d = phys_make_data(m);
  d->qpos[2] = 0.1 + b0;
  d->qvel[2] = -1;
  int up = -1, ok = 1;
  for (int i = 0; i < 60; i++) {
    phys_step(m, d);
    if (up < 0 && d->qvel[2] > 0) up = i;
    if (up >= 0 && fabs(d->qvel[2] - eps) > 1e-9) ok = 0;
  }
  double zc = 0.1 + eps * (0.6 - b0), z = d->qpos[2], dt = m->opt.timestep;
  CHECK_MSG(up >= 0 && ok, "%s eps %g b0 %g: the ball did not leave at +%g m/s (bounce step %d, vz %.9g at the end)",
            name_of(contact), eps, b0, eps, up, d->qvel[2]);
  CHECK_MSG(z >= zc - 1e-9 && z <= zc + (1 + eps) * dt + 1e-9, "%s eps %g b0 %g: z(0.6 s) = %.9f, continuous %.9f",
            name_of(contact), eps, b0, z, zc);
  printf("%-4s eps %.1f impact at %.4f s: leaves at step %d, vz %.12f, z(0.6 s) %.6f (continuous %.6f)\n",
         name_of(contact), eps, b0, up, d->qvel[2], z, zc);
  phys_free_data(d);
  phys_free_model(m);
}

// the state (qpos, qvel: 13 values) after one step of the ball 5 mm above the floor at (5, 0, -3), restitution
// eps on both geoms, margin 0.01, dt 2 ms, into x
static void step_eps(int contact, double eps, double* x) {
  physModel* m = load_ball(0.5, 0.01, contact, 0);
  if (!m) return;
  m->opt.timestep = 0.002;
  for (int g = 0; g < m->ngeom; g++) m->geom_restitution[g] = eps;
  physData* d = phys_make_data(m);
  d->qpos[2] = 0.105;
  d->qvel[0] = 5, d->qvel[2] = -3;
  phys_step(m, d);
  memcpy(x, d->qpos, sizeof(double) * 7);
  memcpy(x + 7, d->qvel, sizeof(double) * 6);
  phys_free_data(d);
  phys_free_model(m);
}

static void test_eps_continuity(int contact) {
  double x0[13] = {0}, x1[13] = {0}, dx = 0;
  step_eps(contact, 0, x0);
  step_eps(contact, 1e-9, x1);
  for (int i = 0; i < 13; i++) dx = fmax(dx, fabs(x1[i] - x0[i]));
  CHECK_MSG(dx < 1e-8, "%s: one step's state moves by %.3g between restitution 0 and 1e-9 (z %.9f, %.9f)",
            name_of(contact), dx, x0[2], x1[2]);
  printf("%-7s restitution 0 -> 1e-9: state moves %.3g (z %.9f)\n", name_of(contact), dx, x0[2]);
}

static void test_landing_gravity(int contact, double eps) {
  physModel* m = load_ball(0, 0.01, contact, 0);
  if (!m) return;
  m->opt.timestep = 0.002;
  for (int g = 0; g < m->ngeom; g++) m->geom_restitution[g] = eps;
  physData* d = phys_make_data(m);
  d->qpos[2] = 0.101;
  d->qvel[2] = -1;
  phys_step(m, d);
  double gap = d->qpos[2] - 0.1, want = eps * (0.002 - 0.001);
  CHECK_MSG(fabs(d->qvel[2] - eps) < 1e-12 && fabs(gap - want) < 1e-12,
            "%s eps %g: a landing under gravity leaves at %.12g (want %g), %.6g m above the floor (want %g)",
            name_of(contact), eps, d->qvel[2], eps, gap, want);
  printf("%-4s eps %.1f landing under gravity: vz %.12f, %.3g m above the floor (continuous %g)\n", name_of(contact),
         eps, d->qvel[2], gap, want);
  phys_free_data(d);
  phys_free_model(m);
}

int main(void) {
  const int all[4] = {PHYS_CONTACT_LCP, PHYS_CONTACT_CONE, PHYS_CONTACT_CCP, PHYS_CONTACT_PENALTY};
  for (int k = 0; k < 4; k++) test_eps_continuity(all[k]);
  const int models[3] = {PHYS_CONTACT_LCP, PHYS_CONTACT_CONE, PHYS_CONTACT_CCP};
  for (int k = 0; k < 3; k++) {
    for (int f = 0; f < 2; f++)
      for (int g = 0; g < 2; g++) test_bounce(models[k], f ? 0.3 : 0, g ? 0.05 : 0);
    test_drop_margin(models[k]);
    for (int e = 0; e < 2; e++) test_landing_gravity(models[k], e ? 0.5 : 0);
    for (int e = 0; e < 2; e++)
      for (int p = 0; p < 3; p++) test_midstep(models[k], e ? 0.8 : 0.5, 0.2025 + 0.0025 * p);
  }
  return test_done();
}
