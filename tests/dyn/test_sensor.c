// test_sensor.c - sensors with contacts and noise (src/dyn/sensor.c), against analytic values: a 2 kg box at
// rest on the floor (touch on its bottom zone = m g in lcp, cone, ccp and penalty; zones the contact rays miss read 0; cutoff), a 1.5 kg
// pendulum at rest (force sensor = the weight below the site, rotated into the site frame; torque of the bob's
// weight about the site = 0 under the pivot); phys_sensor_noise's deviation, seeding and unit quaternions.
// The contact-free values against MuJoCo 2.2.2 are in test_oracle_sensor.c.
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "physid.h"
#include "test.h"

static const char* MODEL = PHYS_SOURCE_DIR "/tests/data/sensors_contact.xml";

// value k of the sensor named name
static double value(const physModel* m, const physData* d, const char* name, int k) {
  int i = phys_name2id(m, "sensor", name);
  CHECK_MSG(i >= 0, "no sensor '%s'", name);
  return i >= 0 ? d->sensordata[m->sensor_adr[i] + k] : NAN;
}

// the resting box and the pendulum after 1 s under contact model `contact` (penalty: its spring settles, the
// force of the resting box to 1e-6 as well)
static void test_rest(const physModel* m, int contact) {
  physModel* mc = phys_copy_model(m);
  mc->opt.contact = contact;
  physData* d = phys_make_data(mc);
  for (int k = 0; k < 500; k++) phys_step(mc, d);
  double g = 9.81, w = 2 * g;
  printf("%s: touch %.12g (m g %.12g), top %g, side %g\n", phys_contact_name(contact),
         value(mc, d, "touch_bottom", 0), w, value(mc, d, "touch_top", 0), value(mc, d, "touch_side", 0));
  CHECK_REL(value(mc, d, "touch_bottom", 0), w, 1e-6, 1e-9);
  CHECK(value(mc, d, "touch_top", 0) == 0 && value(mc, d, "touch_side", 0) == 0);
  CHECK(value(mc, d, "touch_cut", 0) == 5);
  // the pendulum at rest: the site's body carries 1.5 kg below the pivot; the site frame is turned 90 degrees
  // about z, so the world's upward force 1.5 g reads (0, 0, 1.5 g) and the bob's weight acts along the line
  // through the site: zero torque
  CHECK_NEAR(value(mc, d, "ft_force", 0), 0, 1e-12);
  CHECK_NEAR(value(mc, d, "ft_force", 1), 0, 1e-12);
  CHECK_REL(value(mc, d, "ft_force", 2), 1.5 * g, 1e-12, 1e-12);
  for (int k = 0; k < 3; k++) CHECK_NEAR(value(mc, d, "ft_torque", k), 0, 1e-12);
  phys_free_data(d);
  phys_free_model(mc);
}

// noise: the jointpos deviation over many draws near 0.2, the same stream the same draws, quaternions unit
static void test_noise(const physModel* m) {
  physData* d = phys_make_data(m);
  phys_forward(m, d);
  double clean[32], noisy[32], again[32], sum = 0, sum2 = 0, maxnorm = 0;
  memcpy(clean, d->sensordata, sizeof(double) * (size_t)m->nsensordata);
  int iq = m->sensor_adr[phys_name2id(m, "sensor", "quat")], ij = m->sensor_adr[phys_name2id(m, "sensor", "pivot_noisy")];
  uint64_t s1 = 7, s2 = 7;
  const int n = 20000;
  for (int k = 0; k < n; k++) {
    phys_sensor_noise(m, clean, noisy, &s1);
    phys_sensor_noise(m, clean, again, &s2);
    CHECK(memcmp(noisy, again, sizeof(double) * (size_t)m->nsensordata) == 0);   // same stream, same draws
    double e = noisy[ij] - clean[ij], q2 = 0;
    sum += e, sum2 += e * e;
    for (int c = 0; c < 4; c++) q2 += noisy[iq + c] * noisy[iq + c];
    maxnorm = fmax(maxnorm, fabs(sqrt(q2) - 1));
    CHECK(noisy[0] == clean[0]);      // touch: no noise attribute
  }
  double mean = sum / n, sd = sqrt(sum2 / n - mean * mean);
  printf("noise: jointpos mean %.4g sd %.4g (0.2), quaternion | |q| - 1 | <= %.3g\n", mean, sd, maxnorm);
  CHECK(fabs(mean) < 0.01 && fabs(sd - 0.2) < 0.006 && maxnorm < 1e-15);
  phys_free_data(d);
}

int main(void) {
  physLog log = {0};
  physModel* m = phys_load_mjcf(MODEL, &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  if (!m) return test_done();
  test_rest(m, PHYS_CONTACT_LCP);
  test_rest(m, PHYS_CONTACT_CONE);
  test_rest(m, PHYS_CONTACT_CCP);
  test_rest(m, PHYS_CONTACT_PENALTY);
  test_noise(m);
  phys_free_model(m);
  return test_done();
}
