// test_scene_bounce.c - restitution scenes (issue 3, item 3):
//  - a ball dropped on a plane rebounds to eps^2 of its drop height within 2% (lcp, cone, ccp: the models
//    with restitution, paper 000 eq. 3). Penalty chooses each contact's damping from eps (src/contact/
//    penalty.c: d = 2 zeta(eps) sqrt(k m_e), the clamped spring-damper's law): with a stiff spring and a
//    fine step it rebounds to eps^2 H within 2% too, and with the scene's defaults it follows the same
//    spring-damper law integrated finely (RK4, 10 us);
//  - two equal balls colliding head-on elastically (eps = 1) exchange their velocities (penalty: with zero
//    damping, its elastic case), and neither scene gains energy.
//  - penalty at a step its spring cannot follow (a 1 kg cube, dt 10 and 20 ms, eps 0.5 and 1; issue 10 item
//    12): the cube never rises above its drop height and ends at rest (it reached 5e6 times its energy).
// Scenes: tests/data/contact/ball_drop.xml (eps 0.8 from the file), balls_collide.xml (eps 1, no gravity),
// penalty_box_coarse.xml.
#include "contact.h"
#include "scene.h"

#define DROP "tests/data/contact/ball_drop.xml"
#define BALLS "tests/data/contact/balls_collide.xml"
#define COARSE "tests/data/contact/penalty_box_coarse.xml"
#define H0 1.0       // drop height of the ball's bottom above the plane (m)
#define RADIUS 0.1

//---------------------------------------------------------------------------------------------------------
// ball drop

// result of one drop
typedef struct dropRun_ {
  double rebound;     // height of the ball's bottom at the apex after the first bounce
  double vimpact;     // largest downward speed before the bounce
  double gain;        // largest energy increase over the initial energy
  int bounced, finite;
} dropRun;

// drop the ball from rest and follow it to the apex after the first bounce (at most 3 s)
static dropRun drop(const physModel* m, physData* d) {
  dropRun r = {0, 0, 0, 0, 1};
  phys_reset_data(m, d);
  phys_forward(m, d);
  double e0 = scene_energy(m, d), zmax = -1;
  int up = 0, n = (int)lround(3.0 / m->opt.timestep);
  for (int i = 0; i < n; i++) {
    phys_step(m, d);
    double e = scene_energy(m, d), z = d->qpos[2], vz = d->qvel[2];
    if (e - e0 > r.gain) r.gain = e - e0;
    if (!up && -vz > r.vimpact) r.vimpact = -vz;
    if (!up && vz > 0 && d->time > 0.1) up = 1;   // the bounce reversed the velocity
    if (up) {
      zmax = fmax(zmax, z);
      if (vz <= 0) break;                          // apex passed
    }
  }
  r.finite = scene_finite(m, d);
  r.bounced = up;
  r.rebound = zmax - RADIUS;
  return r;
}

// apex after the first bounce of the 1-D penalty law m z'' = -m g + max(0, -k phi - c phi'), phi = z - r,
// by RK4 with a 10 us step (error far below 1e-4 relative): the reference of the penalty model
static double penalty_reference(double k, double c, double mass) {
  double z = H0 + RADIUS, v = 0, h = 1e-5, zmax = -1;
  int hit = 0;
  for (int i = 0; i < 400000; i++) {
    double k1z = v, k1v, k2z, k2v, k3z, k3v, k4z, k4v, zz, vv;
#define ACC(Z, V) (-SCENE_G + fmax(0.0, (Z) - RADIUS < 0 ? -k * ((Z) - RADIUS) - c * (V) : 0.0) / mass)
    k1v = ACC(z, v);
    zz = z + 0.5 * h * k1z, vv = v + 0.5 * h * k1v, k2z = vv, k2v = ACC(zz, vv);
    zz = z + 0.5 * h * k2z, vv = v + 0.5 * h * k2v, k3z = vv, k3v = ACC(zz, vv);
    zz = z + h * k3z, vv = v + h * k3v, k4z = vv, k4v = ACC(zz, vv);
#undef ACC
    z += h / 6 * (k1z + 2 * k2z + 2 * k3z + k4z);
    v += h / 6 * (k1v + 2 * k2v + 2 * k3v + k4v);
    if (z - RADIUS < 0) hit = 1;
    if (hit && z - RADIUS > 0) {
      zmax = fmax(zmax, z);
      if (v < 0) break;
    }
  }
  return zmax - RADIUS;
}

// the drop for one contact model, with the file's eps (0.8) and others set through the model
static void test_drop(int contact) {
  physModel* m = scene_load(DROP, contact);
  if (!m) return;
  physData* d = phys_make_data(m);
  const char* name = scene_name(contact);
  int ball = phys_name2id(m, "geom", "ball"), floor = phys_name2id(m, "geom", "floor");
  CHECK(ball >= 0 && floor >= 0);
  if (ball < 0 || floor < 0) return;
  // the file's physid:restitution:ball reaches the model
  CHECK_NEAR(m->geom_restitution[ball], 0.8, 0);
  CHECK_NEAR(m->geom_restitution[floor], 0, 0);
  double v = sqrt(2 * SCENE_G * H0), dt = m->opt.timestep, mass = m->body_mass[1];

  if (contact == PHYS_CONTACT_PENALTY) {
    const double eps[] = {0.8, 0.5, 1.0, 0.0};
    double k0 = m->opt.penalty_stiffness, dt0 = m->opt.timestep;
    for (size_t e = 0; e < sizeof eps / sizeof eps[0]; e++) {
      m->geom_restitution[ball] = eps[e];
      // the damping the model chooses: m_e = m for a ball on a plane (the contact normal passes through
      // its centre), zeta(eps), PHYS_PENALTY_ZETA_MAX for eps = 0
      double zeta = eps[e] > 0 ? fmin(phys_penalty_zeta(eps[e]), PHYS_PENALTY_ZETA_MAX) : PHYS_PENALTY_ZETA_MAX;

      // stiff and fine (k = 1e6, dt = 20 us): the rebound is eps^2 H within 2%, as for the rigid models.
      // The step errs by O(w dt) in the contact's energy (w = sqrt(k/m), w dt = 0.02); gravity acting during
      // the contact (about pi/w long) changes the exit speed by O(g / (w v)) = 0.2% of the impact speed v,
      // 0.9% of the rebound height at eps = 0.5. eps = 0: zeta = 5 rebounds to eps(5)^2 H = 9e-5 m.
      m->opt.penalty_stiffness = 1e6;
      m->opt.timestep = 2e-5;
      dropRun r = drop(m, d);
      double want = eps[e] > 0 ? eps[e] * eps[e] * H0 : 0;
      printf("penalty eps %.1f (k 1e6, dt 20 us): rebound %.5f m (eps^2 H0 = %.5f, rel %.2e), energy gain %.2e J\n",
             eps[e], r.rebound, want, r.rebound / want - 1, r.gain);
      CHECK(r.finite && r.bounced);
      if (eps[e] > 0) CHECK_REL(r.rebound, want, 0.02, 0);
      else CHECK_MSG(r.rebound <= 1e-4, "penalty eps 0: rebound %g m", r.rebound);

      // the scene's spring (k = 1e4, dt = 1 ms): the same law integrated finely, within w dt = 0.1 (the
      // explicit spring's error in the rebound energy); gravity is in both
      m->opt.penalty_stiffness = k0;
      m->opt.timestep = dt0;
      r = drop(m, d);
      double c = 2 * zeta * sqrt(k0 * mass), ref = penalty_reference(k0, c, mass);
      double tol = sqrt(k0 / mass) * dt;
      printf("penalty eps %.1f (k %g, dt %g): rebound %.5f m, spring-damper reference %.5f m (rel %.2e, tol %.2g), "
             "eps^2 H0 %.5f\n", eps[e], k0, dt0, r.rebound, ref, r.rebound / ref - 1, tol, want);
      CHECK(r.finite);
      if (ref > 1e-3) CHECK_REL(r.rebound, ref, tol, 0);
      else CHECK_MSG(!r.bounced || r.rebound <= v * dt, "penalty eps 0: rebound %g m", r.rebound);
      // energy (with the contact spring's, scene_energy): semi-implicit Euler conserves a modified energy
      // that differs from the true one by dt/2 * v.F while a force F acts, so inside the contact the sampled
      // energy may exceed the initial one by up to dt/2 * v * F_max, F_max <= v sqrt(k m) + d v at the
      // impact speed v (the undamped spring's peak plus the damper's)
      double tolE = 0.5 * dt * v * (v * sqrt(k0 * mass) + c * v);
      CHECK_MSG(r.gain <= tolE, "penalty: energy grew by %g J (bound %g)", r.gain, tolE);
    }
  } else {
    const double eps[] = {0.8, 0.5, 1.0, 0.0};
    for (size_t k = 0; k < sizeof eps / sizeof eps[0]; k++) {
      m->geom_restitution[ball] = eps[k];
      dropRun r = drop(m, d);
      // apex at eps^2 H0 within 2% (issue 3): the bounce happens up to one step's travel v*dt = 4.4 mm
      // below the surface and the flight's discrete apex is off by up to v*dt again: 2 v dt / (eps^2 H0)
      // = 1.4% at eps = 0.8. For eps = 0 the ball must not rise by more than one step's travel v dt.
      printf("%-7s eps %.1f: rebound %.5f m (eps^2 H0 = %.5f, rel %.2e), impact %.3f m/s, energy gain %.2e J\n",
             name, eps[k], r.rebound, eps[k] * eps[k] * H0, r.rebound / (eps[k] * eps[k] * H0) - 1,
             r.vimpact, r.gain);
      CHECK(r.finite);
      if (eps[k] > 0) {
        CHECK(r.bounced);
        CHECK_REL(r.rebound, eps[k] * eps[k] * H0, 0.02, 0);
      } else {
        CHECK_MSG(!r.bounced || r.rebound <= v * dt, "%s eps 0: rebound %g m", name, r.rebound);
      }
      // energy: the discrete bounce may lift the ball by one step's travel (m g v dt), nothing more
      CHECK_MSG(r.gain <= mass * SCENE_G * v * dt, "%s eps %.1f: energy grew by %g J", name, eps[k], r.gain);
    }
  }
  phys_free_data(d);
  phys_free_model(m);
}

//---------------------------------------------------------------------------------------------------------
// head-on collision of two equal balls

// ball 1 at 1 m/s towards ball 2 at rest: after 0.2 s (the contact is over by 0.06 s) ball 1 is at rest,
// ball 2 at 1 m/s; momentum is conserved and the energy does not grow
static void test_balls(int contact) {
  physModel* m = scene_load(BALLS, contact);
  if (!m) return;
  const char* name = scene_name(contact);
  physData* d = phys_make_data(m);
  phys_reset_data(m, d);
  int b1 = scene_body(m, "ball1"), b2 = scene_body(m, "ball2");
  int v1 = scene_vadr(m, b1), v2 = scene_vadr(m, b2);
  d->qvel[v1] = 1;
  phys_forward(m, d);
  double e0 = scene_energy(m, d), gain = 0, p0[3], L0[3], p[3], L[3], perr = 0;
  scene_momentum(p0, L0, m, d);
  int ncon = 0, n = (int)lround(0.2 / m->opt.timestep);
  for (int i = 0; i < n; i++) {
    phys_step(m, d);
    if (d->ncon > ncon) ncon = d->ncon;
    gain = fmax(gain, scene_energy(m, d) - e0);
    phys_kinematics(m, d);
    scene_momentum(p, L, m, d);
    for (int k = 0; k < 3; k++) perr = fmax(perr, fmax(fabs(p[k] - p0[k]), fabs(L[k] - L0[k])));
  }
  printf("%-7s balls: v1 %.6f v2 %.6f (exchange: 0, 1), momentum error %.1e, energy gain %.2e J\n", name,
         d->qvel[v1], d->qvel[v2], perr, gain);
  CHECK(scene_finite(m, d));
  CHECK(ncon > 0);
  // exchange: the elastic impulse is exact for the rigid models; 1% (1 cm/s) is left for the solvers'
  // tolerance. Penalty without damping is an undamped spring whose explicit force acts over part of the
  // first and last steps: a 1-D model of this step gives 6e-5 m/s. A separation velocity made from the
  // penetration (one step's travel, 1 mm, times baumgarte/dt = 0.2 m/s) fails it.
  CHECK_NEAR(d->qvel[v1], 0, 0.01);
  CHECK_NEAR(d->qvel[v2], 1, 0.01);
  for (int k = 1; k < 3; k++) CHECK_NEAR(d->qvel[v2 + k], 0, 1e-9);   // head-on: no sideways motion
  // momentum: equal and opposite impulses at one point, conserved to rounding (1e-12 a step)
  CHECK_MSG(perr <= 1e-9, "%s: momentum changed by %g", name, perr);
  // energy, 0.5 J: rigid models exactly (1e-6 J for the solver tolerance). Penalty (its spring's energy
  // counted, scene_energy): semi-implicit Euler's energy differs from its conserved modified energy by
  // dt/2 * v.F while the spring pushes, F_max = v sqrt(k m_e) for the undamped spring, m_e = m/2, v = 1 m/s
  double tol = contact == PHYS_CONTACT_PENALTY
                   ? 0.5 * m->opt.timestep * sqrt(m->opt.penalty_stiffness * 0.5 * m->body_mass[b1]) : 1e-6;
  CHECK_MSG(gain <= tol, "%s: energy grew by %g J (tol %g)", name, gain, tol);
  phys_free_data(d);
  phys_free_model(m);
}

// the penalty cube at dt and restitution eps for 3 s: the mechanical energy (phys_energy: the springs' is
// the detection's, penalty.c) never exceeds its value at the drop, and at the end it is within 0.05 J of
// the cube resting (m g times its half-size): a bounded chatter at 20 ms, none at 10 ms
static void test_coarse(double dt, double eps) {
  physModel* m = scene_load(COARSE, PHYS_CONTACT_PENALTY);
  if (!m) return;
  m->opt.timestep = dt;
  m->geom_restitution[1] = eps;
  physData* d = phys_make_data(m);
  phys_reset_data(m, d);
  double e[2], e0, emax = -INFINITY;
  phys_energy(m, d, e);
  e0 = e[0] + e[1];
  int n = (int)lround(3 / dt);
  for (int i = 0; i < n && scene_finite(m, d); i++) {
    phys_step(m, d);
    phys_energy(m, d, e);
    emax = fmax(emax, e[0] + e[1]);
  }
  double rest = 1 * SCENE_G * 0.05;
  printf("penalty cube, dt %g s, restitution %g: largest energy %.6g J (drop %.6g J), at the end %.4g J (resting "
         "%.4g J)\n", dt, eps, emax, e0, e[0] + e[1], rest);
  CHECK(scene_finite(m, d));
  CHECK_MSG(emax <= e0, "dt %g eps %g: energy %g above the drop's %g", dt, eps, emax, e0);
  CHECK_MSG(fabs(e[0] + e[1] - rest) < 0.05, "dt %g eps %g: energy %g at the end, resting %g", dt, eps, e[0] + e[1],
            rest);
  phys_free_data(d);
  phys_free_model(m);
}

int main(void) {
  for (int c = 0; c < PHYS_NCONTACTMODEL; c++) {
    test_drop(c);
    test_balls(c);
  }
  for (int k = 0; k < 4; k++) test_coarse(k < 2 ? 0.01 : 0.02, k % 2 ? 1.0 : 0.5);
  return test_done();
}
