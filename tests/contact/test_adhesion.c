// test_adhesion.c - adhesion actuators (src/contact/adhesion.c, MuJoCo 2.2.2's <adhesion>, issue 15) without
// MuJoCo (test_oracle_adhesion.c compares with it):
//  - a ball of mass m on a vertical slide touching a ceiling from below (one contact, its normal from the ceiling
//    down into the ball): the actuator force f = gain ctrl pulls it up, qfrc_actuator = +f on the slide exactly;
//    f > m g holds it at rest (lcp, cone, ccp: v+ = 0 exactly over 200 steps), f < m g lets it go with
//    v+ = dt (f/m - g) in the first step (the contact separates; then no contact, no force: free fall);
//    the control clamped to ctrlrange, the force to forcerange; no contact: no force; ctrl 0: no force;
//  - a box resting on the floor (four corner contacts): the pull splits f/4 per corner, the box's generalized
//    force is -f along z and no torque (to rounding), and the floor (the world) is not moved;
//  - the step derivatives refuse the model with a message naming the actuator; the pbd step refuses it.
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../model/mjcf_text.h"
#include "contact.h"
#include "grad.h"

static const char* CEILING =
    "<mujoco><option timestep='0.002'/><worldbody>"
    "<geom type='plane' size='1 1 .1' pos='0 0 1' zaxis='0 0 -1'/>"
    "<body name='ball' pos='0 0 0.9001'><joint name='z' type='slide' axis='0 0 1'/>"
    "<geom type='sphere' size='.1' mass='2'/></body></worldbody>"
    "<actuator><adhesion name='stick' body='ball' ctrlrange='0 1' gain='%g' forcelimited='%s' forcerange='0 %g'/>"
    "</actuator></mujoco>";

static physModel* ceiling(double gain, int forcelimited, double fmax) {
  char text[1024];
  physLog log;
  snprintf(text, sizeof text, CEILING, gain, forcelimited ? "true" : "false", fmax);
  physModel* m = load_text(text, &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  return m;
}

static void test_ceiling(void) {
  const double g = 9.81, mass = 2, dt = 0.002;
  for (int c = 0; c < 3; c++) {
    // held: f = 30 > m g = 19.62
    physModel* m = ceiling(30, 0, 0);
    if (!m) return;
    m->opt.contact = c;
    physData* d = phys_make_data(m);
    d->ctrl[0] = 1;
    double vmax = 0;
    for (int k = 0; k < 200; k++) {
      phys_step(m, d);
      vmax = fmax(vmax, fabs(d->qvel[0]));
      if (k == 0) CHECK_MSG(d->qfrc_actuator[0] == 30, "%s: qfrc_actuator %.17g", phys_contact_name(c), d->qfrc_actuator[0]);
    }
    CHECK_MSG(vmax < 1e-12 && d->ncon == 1, "%s: held ball moves at %g (ncon %d)", phys_contact_name(c), vmax, d->ncon);
    // ctrl beyond its range: clamped to 1 (30 N); forcelimited at 10 N < m g: released
    d->ctrl[0] = 5;
    phys_step(m, d);
    CHECK(d->qfrc_actuator[0] == 30);
    phys_free_data(d);
    phys_free_model(m);
    m = ceiling(30, 1, 10);
    m->opt.contact = c;
    d = phys_make_data(m);
    d->ctrl[0] = 1;
    phys_step(m, d);
    CHECK_MSG(d->qfrc_actuator[0] == 10, "%s: forcelimited %.17g", phys_contact_name(c), d->qfrc_actuator[0]);
    double v1 = dt * (10 / mass - g);
    CHECK_MSG(fabs(d->qvel[0] - v1) < 1e-12, "%s: released v+ %.17g, expected %.17g", phys_contact_name(c), d->qvel[0], v1);
    for (int k = 0; k < 50; k++) phys_step(m, d);   // away from the ceiling: no contact, no pull
    CHECK_MSG(d->ncon == 0 && d->qfrc_actuator[0] == 0, "%s: ncon %d qfrc %g", phys_contact_name(c), d->ncon, d->qfrc_actuator[0]);
    d->ctrl[0] = 0;
    phys_free_data(d);
    phys_free_model(m);
  }
}

static void test_box(void) {
  physLog log;
  physModel* m = load_text("<mujoco><worldbody><geom type='plane' size='1 1 .1'/><body name='box' pos='0.3 -0.2 0.0499'>"
                           "<freejoint/><geom type='box' size='.05 .05 .05'/></body></worldbody><actuator>"
                           "<adhesion body='box' ctrlrange='0 1' gain='8'/></actuator></mujoco>", &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  if (!m) return;
  physData* d = phys_make_data(m);
  d->ctrl[0] = 0.5;
  phys_step(m, d);
  CHECK_MSG(d->ncon == 4, "ncon %d", d->ncon);
  double e = fabs(d->qfrc_actuator[2] + 4);
  for (int i = 0; i < 6; i++) e = fmax(e, i == 2 ? 0 : fabs(d->qfrc_actuator[i]));
  printf("box on the floor, 4 corners, f = 4 N: qfrc_actuator %.3g %.3g %.3g | %.3g %.3g %.3g (error %.1e)\n",
         d->qfrc_actuator[0], d->qfrc_actuator[1], d->qfrc_actuator[2], d->qfrc_actuator[3], d->qfrc_actuator[4],
         d->qfrc_actuator[5], e);
  CHECK(e < 1e-14);
  // derivatives refused, naming the actuator; pbd refuses the model
  double A[144];
  CHECK(phys_step_jacobian(m, d, A, NULL) == PHYS_ERR_MODEL);
  CHECK_MSG(strstr(d->lastwarning, "adhesion actuator"), "%s", d->lastwarning);
  char msg[256];
  CHECK(!phys_pbd_supported(m, msg, sizeof msg) && strstr(msg, "adhesion actuators"));
  phys_free_data(d);
  phys_free_model(m);
}

int main(void) {
  mjcf_text_begin("adhesion");
  test_ceiling();
  test_box();
  return mjcf_text_end();
}
