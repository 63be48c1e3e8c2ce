// test_scene_incline.c - a box on an incline sticks iff tan(angle) <= mu, checked at tan(angle) = mu*(1 -+ 5%)
// for every contact model (issue 3, item 3).
// Scene: tests/data/contact/box_plane.xml (1 kg cube, mu 0.5, dt 1 ms). The incline is made by tilting gravity
// by the angle, which is the same problem as tilting the plane: g = |g| (sin(a) t, -cos(a) z), t the
// direction down the slope. t is the contact frame's tangent 1 (read from d->contact[0].frame), so that for
// lcp the slope runs along an axis of its friction pyramid, where the pyramid's bound is mu (at another
// angle the pyramid allows up to sqrt(2) mu: test_scene_slide.c).
#include "scene.h"

#define SCENE "tests/data/contact/box_plane.xml"
#define MU 0.5
#define T 1.0               // seconds on the incline

// displacement along the slope after T seconds on an incline with tan(angle) = tana; *gain: the largest
// increase of the energy in the tilted gravity field
static double incline(const physModel* m0, double tana, double* gain, int* finite) {
  physModel* m = phys_copy_model(m0);
  physData* d = phys_make_data(m);
  phys_reset_data(m, d);
  for (int i = 0; i < 300; i++) phys_step(m, d);   // settle (penalty: static penetration), read the frame
  double th = scene_tangent_angle(d), a = atan(tana);
  m->opt.gravity[0] = SCENE_G * sin(a) * cos(th);
  m->opt.gravity[1] = SCENE_G * sin(a) * sin(th);
  m->opt.gravity[2] = -SCENE_G * cos(a);
  double x0 = d->qpos[0], y0 = d->qpos[1];
  phys_forward(m, d);
  double e0 = scene_energy(m, d);
  *gain = 0;
  int n = (int)lround(T / m->opt.timestep);
  for (int i = 0; i < n; i++) {
    phys_step(m, d);
    double e = scene_energy(m, d);
    if (e - e0 > *gain) *gain = e - e0;
  }
  *finite = scene_finite(m, d);
  double s = (d->qpos[0] - x0) * cos(th) + (d->qpos[1] - y0) * sin(th);
  phys_free_data(d);
  phys_free_model(m);
  return s;
}

// one contact model at mu -+ 5%
static void test_model(int contact) {
  physModel* m = scene_load(SCENE, contact);
  if (!m) return;
  const char* name = scene_name(contact);
  double gain;
  int finite;

  // tan(angle) = 0.95 mu: sticks. A rigid model (lcp, cone, ccp) holds the contact's tangential velocity at
  // zero up to the solver tolerance: 1 um in 1000 steps allows 1e-9 m of slip per step. Penalty's
  // regularized Coulomb friction needs a creep velocity of the order of vslip to carry the load (the
  // regularization reaches 0.95 of mu*N within a few vslip for the usual shapes): at most 5*vslip*T.
  double stick = incline(m, 0.95 * MU, &gain, &finite);
  double tol = contact == PHYS_CONTACT_PENALTY ? 5 * m->opt.penalty_vslip * T : 1e-6;
  printf("%-7s tan = 0.95 mu: moved %.3e m down the slope in %g s (bound %.1e)\n", name, stick, T, tol);
  CHECK(finite);
  CHECK_MSG(fabs(stick) <= tol, "%s: the box slid %g m at tan(angle) = 0.95 mu", name, stick);
  CHECK_MSG(gain <= 1e-6, "%s: energy grew by %g J", name, gain);

  // tan(angle) = 1.05 mu: slides with a = g (sin a - mu cos a), s = a T^2 / 2. The step adds one step's
  // travel, s_N = s (1 + 1/N) = +0.1%; the acceleration is 1/20 of the friction force, so 5% on s is 0.25%
  // on the friction force: the test asks the friction to be exact and the box to really slide.
  double a = atan(1.05 * MU), acc = SCENE_G * (sin(a) - MU * cos(a));
  double slide = incline(m, 1.05 * MU, &gain, &finite);
  printf("%-7s tan = 1.05 mu: moved %.6f m (analytic %.6f, rel %.2e)\n", name, slide, 0.5 * acc * T * T,
         slide / (0.5 * acc * T * T) - 1);
  CHECK(finite);
  CHECK_REL(slide, 0.5 * acc * T * T, 0.05, 0);
  CHECK_MSG(gain <= 1e-6, "%s: energy grew by %g J", name, gain);
  phys_free_model(m);
}

int main(void) {
  for (int c = 0; c < PHYS_NCONTACTMODEL; c++) test_model(c);
  return test_done();
}
