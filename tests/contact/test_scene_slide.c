// test_scene_slide.c - a box sliding on a plane, for every contact model (issue 3, item 3):
//  - it decelerates at mu*g and stops at v0^2/(2 mu g) within 1% when it slides along a tangent axis;
//  - cone and ccp are isotropic: the stopping distance is the same in every direction within 0.5%;
//  - lcp's 4-sided pyramid is not (paper 000, Fig. 5): at 45 degrees to the pyramid's axes both tangent
//    impulses saturate at mu*lambda_n, the friction is sqrt(2) mu lambda_n and the box stops at
//    v0^2/(2 sqrt(2) mu g), as if mu were larger by sqrt(2);
//  - the energy never grows.
// ccp (Anitescu's relaxation) is the exception the first item does not allow for: its cone program
// makes a sliding contact separate at normal velocity mu*|v_t|. Pushed impulsively from rest, the box is
// launched in the first step (about mu*v0 upward) and flies for a while, so its mean deceleration is not mu*g
// (the stopping distance still is). The test checks the distance for the impulsive start, and the
// deceleration from the relaxation's own consistent state: the box gliding at the height dt*mu*v0 its
// collision envelope keeps (src/collision/collision.c), where the gap term cancels the separation.
// Scene: tests/data/contact/box_plane.xml (1 kg cube, mu 0.5, dt 1 ms). The pyramid's axes are the tangents
// of the plane contact's frame (phys_contact_frame); the test reads them from d->contact[0].frame.
#include "scene.h"

#define SCENE "tests/data/contact/box_plane.xml"
#define MU 0.5
#define V0 2.0              // initial speed (m/s)
#define SETTLE 300          // steps at rest before the push (0.3 s; lets penalty reach its static penetration)

// state of the settled box, restored before each push
typedef struct slideStart_ {
  double qpos[7], qvel[6];
  double tangent;           // angle of the contact frame's tangent 1 in the xy plane
} slideStart;

// result of one push
typedef struct slideRun_ {
  double dist;              // horizontal distance travelled until the end of the run
  double decel;             // mean deceleration between 1/4 and 3/4 of the analytic stopping time
  double gain;              // largest increase of the energy over its value at the push
  double finalspeed;        // horizontal speed at the end
  int finite;
} slideRun;

// let the box settle, and read the contact frame's tangent
static void settle(slideStart* s, const physModel* m, physData* d) {
  phys_reset_data(m, d);
  for (int i = 0; i < SETTLE; i++) phys_step(m, d);
  memcpy(s->qpos, d->qpos, sizeof s->qpos);
  memcpy(s->qvel, d->qvel, sizeof s->qvel);
  s->tangent = scene_tangent_angle(d);
}

// push the settled box, raised by `lift`, at speed V0 in direction angle phi (world xy) and run for the time `T`
static slideRun push_lifted(const physModel* m, physData* d, const slideStart* s, double phi, double T, double lift) {
  slideRun r = {0, 0, 0, 0, 1};
  phys_reset_data(m, d);
  memcpy(d->qpos, s->qpos, sizeof s->qpos);
  memcpy(d->qvel, s->qvel, sizeof s->qvel);
  d->qpos[2] += lift;
  d->qvel[0] = V0 * cos(phi);
  d->qvel[1] = V0 * sin(phi);
  phys_forward(m, d);
  double e0 = scene_energy(m, d);
  double dt = m->opt.timestep, tstop = V0 / (MU * SCENE_G);
  int n = (int)lround(T / dt), n1 = (int)lround(0.25 * tstop / dt), n2 = (int)lround(0.75 * tstop / dt);
  double s1 = 0, s2 = 0;
  for (int i = 1; i <= n; i++) {
    phys_step(m, d);
    double e = scene_energy(m, d);
    if (e - e0 > r.gain) r.gain = e - e0;
    double sp = hypot(d->qvel[0], d->qvel[1]);
    if (i == n1) s1 = sp;
    if (i == n2) s2 = sp;
  }
  r.finite = scene_finite(m, d);
  r.dist = hypot(d->qpos[0] - s->qpos[0], d->qpos[1] - s->qpos[1]);
  r.decel = (s1 - s2) / ((n2 - n1) * dt);
  r.finalspeed = hypot(d->qvel[0], d->qvel[1]);
  return r;
}

static slideRun push(const physModel* m, physData* d, const slideStart* s, double phi, double T) {
  return push_lifted(m, d, s, phi, T, 0);
}

// one contact model: slide along the tangent axis, then in other directions
static void test_model(int contact) {
  physModel* m = scene_load(SCENE, contact);
  if (!m) return;
  physData* d = phys_make_data(m);
  slideStart s;
  settle(&s, m, d);
  const double dstop = V0 * V0 / (2 * MU * SCENE_G), tstop = V0 / (MU * SCENE_G);
  const double T = 1.5 * tstop;   // ample time to stop, even at the lowest deceleration

  // along tangent 1: deceleration mu*g and stopping distance v0^2/(2 mu g) within 1% (issue 3). The
  // discrete step loses at most one step's travel, mu*g*dt/v0 = 0.25% of the distance at dt = 1 ms, which
  // leaves the rest of the 1% to the contact model; the deceleration is exact for an exact friction force.
  slideRun r = push(m, d, &s, s.tangent, T);
  printf("%-7s along t1 (%.1f deg): distance %.6f m (analytic %.6f, rel %.2e), decel %.5f (mu g %.5f)\n",
         scene_name(contact), s.tangent * 180 / M_PI, r.dist, dstop, r.dist / dstop - 1, r.decel, MU * SCENE_G);
  CHECK(r.finite);
  CHECK_REL(r.dist, dstop, 0.01, 0);
  if (contact != PHYS_CONTACT_CCP) {
    CHECK_REL(r.decel, MU * SCENE_G, 0.01, 0);
  } else {
    // ccp: the impulsive push launches the box (see the file comment); from the gliding state the
    // deceleration is mu*g within the same 1%
    slideRun rg = push_lifted(m, d, &s, s.tangent, T, m->opt.timestep * MU * V0);
    printf("%-7s gliding start: distance %.6f m, decel %.5f (impulsive start: decel %.5f)\n", scene_name(contact),
           rg.dist, rg.decel, r.decel);
    CHECK_REL(rg.decel, MU * SCENE_G, 0.01, 0);
    CHECK_REL(rg.dist, dstop, 0.01, 0);
    CHECK(rg.gain <= 1e-6);
  }
  // it stays stopped: after 1.5 stopping times the speed is below 1 mm/s (well under one step's
  // velocity change mu*g*dt = 4.9 mm/s, so a box still sliding would fail)
  CHECK_MSG(r.finalspeed < 1e-3, "%s: still moving at %g m/s", scene_name(contact), r.finalspeed);
  // no energy gain: nothing in this scene adds energy; the allowance is rounding on a 2 J scale
  CHECK_MSG(r.gain <= 1e-6, "%s: energy grew by %g J", scene_name(contact), r.gain);

  // along tangent 2 (the pyramid's other axis): the same distance
  slideRun r2 = push(m, d, &s, s.tangent + M_PI / 2, T);
  CHECK_REL(r2.dist, dstop, 0.01, 0);
  CHECK(r2.gain <= 1e-6);

  // directions between the axes
  const double deg[] = {15, 30, 45, 60, 75, 135, 200, 333};
  double dmin = r.dist, dmax = r.dist, d45 = 0;
  for (size_t k = 0; k < sizeof deg / sizeof deg[0]; k++) {
    slideRun rk = push(m, d, &s, s.tangent + deg[k] * M_PI / 180, T);
    printf("%-7s at %5.1f deg to t1: distance %.6f m (ratio to the axis %.5f)\n", scene_name(contact), deg[k],
           rk.dist, rk.dist / r.dist);
    CHECK(rk.finite);
    CHECK_MSG(rk.gain <= 1e-6, "%s at %g deg: energy grew by %g J", scene_name(contact), deg[k], rk.gain);
    dmin = fmin(dmin, rk.dist);
    dmax = fmax(dmax, rk.dist);
    if (deg[k] == 45) d45 = rk.dist;
  }
  if (contact == PHYS_CONTACT_CONE || contact == PHYS_CONTACT_CCP) {
    // isotropic: every direction within 0.5% (issue 3); the discretization error is the same in every
    // direction (the same speed profile), so the spread measures the friction cone's shape only
    CHECK_MSG(dmax / dmin - 1 <= 0.005, "%s: stopping distances from %.6f to %.6f m", scene_name(contact),
              dmin, dmax);
  }
  if (contact == PHYS_CONTACT_LCP) {
    // paper 000 Fig. 5: at 45 degrees the pyramid's corner gives friction sqrt(2) mu lambda_n, so the
    // distance is v0^2 / (2 sqrt(2) mu g) within 1% (the same budget as the axis case)
    CHECK_REL(d45, dstop / sqrt(2.0), 0.01, 0);
  }
  phys_free_data(d);
  phys_free_model(m);
}

int main(void) {
  for (int c = 0; c < PHYS_NCONTACTMODEL; c++) test_model(c);
  return test_done();
}
