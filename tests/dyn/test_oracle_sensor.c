// test_oracle_sensor.c - MuJoCo 2.2.2 as the oracle of the sensors (src/dyn/sensor.c): tests/data/sensors.xml
// uses every sensor type physid computes (frame sensors on bodies, xbodies, geoms and sites; accelerometers,
// force and torque sensors on hinge, slide, free- and ball-joint bodies; cutoffs) on a contact-free model. Both engines
// step 1 s from the same non-rest state with constant controls; after every step sensordata (computed at the
// step's start state in both) agree to 1e-9 of each sensor's scale, and the sizes and layout are identical.
#include <mujoco/mujoco.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "physid.h"
#include "test.h"

static const char* MODEL = PHYS_SOURCE_DIR "/tests/data/sensors.xml";

// the sensor table's sizes, types' dimensions, addresses, cutoffs and noise as MuJoCo's
static void check_layout(const physModel* m, const mjModel* mm) {
  CHECK_MSG(m->nsensor == mm->nsensor && m->nsensordata == mm->nsensordata, "nsensor %d/%d nsensordata %d/%d",
            m->nsensor, mm->nsensor, m->nsensordata, mm->nsensordata);
  for (int i = 0; i < m->nsensor && i < mm->nsensor; i++) {
    CHECK_MSG(m->sensor_dim[i] == mm->sensor_dim[i] && m->sensor_adr[i] == mm->sensor_adr[i] &&
                  m->sensor_cutoff[i] == mm->sensor_cutoff[i] && m->sensor_noise[i] == mm->sensor_noise[i],
              "sensor %d (%s): dim %d/%d adr %d/%d", i, phys_sensor_name(m->sensor_type[i]), m->sensor_dim[i],
              mm->sensor_dim[i], m->sensor_adr[i], mm->sensor_adr[i]);
    const char* name = mj_id2name(mm, mjOBJ_SENSOR, i);
    CHECK_MSG(!strcmp(phys_id2name(m, "sensor", i), name ? name : ""), "sensor %d name", i);
  }
}

// largest error of each sensor over the run, relative to max(its largest |value|, 1e-3)
typedef struct sensorErr_ {
  double err[64], scale[64];
} sensorErr;

static void accumulate(sensorErr* e, const physModel* m, const double* a, const mjtNum* b) {
  for (int i = 0; i < m->nsensor; i++) {
    for (int k = 0; k < m->sensor_dim[i]; k++) {
      int j = m->sensor_adr[i] + k;
      e->scale[i] = fmax(e->scale[i], fmax(fabs(a[j]), fabs(b[j])));
      e->err[i] = fmax(e->err[i], fabs(a[j] - b[j]));
    }
  }
}

int main(void) {
  physLog log = {0};
  physModel* m = phys_load_mjcf(MODEL, &log);
  CHECK_MSG(m != NULL, "load: %s", log.error);
  char err[512];
  mjModel* mm = mj_loadXML(MODEL, NULL, err, sizeof(err));
  CHECK_MSG(mm != NULL, "mujoco: %s", err);
  if (!m || !mm) return test_done();
  check_layout(m, mm);
  physData* d = phys_make_data(m);
  mjData* md = mj_makeData(mm);
  // a non-rest start: joint angles, slide offset, free-body spin and drift; constant controls
  const double q0[] = {0.4, -0.7, 0.05}, v0[] = {1.5, -2.0, 0.3, 0.2, -0.1, 0.4, 1.0, -2.0, 0.5, 0.7, -1.1, 0.4, 2.0};
  for (int i = 0; i < 3; i++) d->qpos[i] = md->qpos[i] = q0[i];
  for (int i = 0; i < 13; i++) d->qvel[i] = md->qvel[i] = v0[i];
  d->qpos[14] = md->qpos[14] = 0.3;   // the ball's child hinge (qpos 10..13: the ball)
  const double u[] = {0.3, 0.2, -0.5};
  for (int i = 0; i < 3; i++) d->ctrl[i] = md->ctrl[i] = u[i];
  sensorErr e;
  memset(&e, 0, sizeof(e));
  double qerr = 0;
  for (int step = 0; step < 500; step++) {
    phys_step(m, d);
    mj_step(mm, md);
    accumulate(&e, m, d->sensordata, md->sensordata);
    for (int i = 0; i < m->nq; i++) qerr = fmax(qerr, fabs(d->qpos[i] - md->qpos[i]));
  }
  printf("state after 1 s: max |qpos - mujoco| %.3g\n", qerr);
  CHECK_MSG(qerr < 1e-9, "state differs from MuJoCo's by %.3g", qerr);
  double worst = 0;
  for (int i = 0; i < m->nsensor; i++) {
    double rel = e.err[i] / fmax(e.scale[i], 1e-3);
    worst = fmax(worst, rel);
    printf("  %-14s %-13s max |value| %-10.4g max error %.3g (rel %.3g)\n", phys_id2name(m, "sensor", i),
           phys_sensor_name(m->sensor_type[i]), e.scale[i], e.err[i], rel);
    CHECK_MSG(rel <= 1e-9, "sensor %d '%s' (%s): error %.3g of scale %.3g", i, phys_id2name(m, "sensor", i),
              phys_sensor_name(m->sensor_type[i]), e.err[i], e.scale[i]);
  }
  printf("worst relative sensor error over 1 s: %.3g\n", worst);
  phys_free_data(d);
  phys_free_model(m);
  mj_deleteData(md);
  mj_deleteModel(mm);
  return test_done();
}
