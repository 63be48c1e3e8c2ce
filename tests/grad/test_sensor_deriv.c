// test_sensor_deriv.c - phys_sensor_deriv (src/grad/sensor_deriv.c) against central differences of the sensors
// along every tangent coordinate of q and v (grad.h), on tests/data/sensors.xml (hinges, a slide, a free body, a
// ball joint with a hinge below it; frame sensors on bodies, xbodies, geoms and sites) at three random states.
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "physid.h"
#include "rng.h"
#include "sensor_deriv.h"
#include "test.h"

static const char* MODEL = PHYS_SOURCE_DIR "/tests/data/sensors.xml";

// sensors at the state (qpos, qvel) into out
static void eval(const physModel* m, physData* d, const double* qpos, const double* qvel, double* out) {
  memcpy(d->qpos, qpos, sizeof(double) * (size_t)m->nq);
  memcpy(d->qvel, qvel, sizeof(double) * (size_t)m->nv);
  phys_forward(m, d);
  memcpy(out, d->sensordata, sizeof(double) * (size_t)m->nsensordata);
}

int main(void) {
  physLog log = {0};
  physModel* m = phys_load_mjcf(MODEL, &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  if (!m) return test_done();
  physData* d = phys_make_data(m);
  int nq = m->nq, nv = m->nv, ns = m->nsensordata;
  double q0[32], v0[32], q[32], plus[256], minus[256], H[4 * 64];
  physRng rng;
  phys_rng_seed(&rng, 3);
  const double eps = 1e-6;
  double worst = 0;
  int nchecked = 0;
  for (int trial = 0; trial < 3; trial++) {
    // a random state: joint values and velocities in [-1, 1], the free and ball quaternions random unit
    memcpy(q0, m->qpos0, sizeof(double) * (size_t)nq);
    double dq[32];
    for (int i = 0; i < nv; i++) dq[i] = phys_rng_range(&rng, -1, 1), v0[i] = phys_rng_range(&rng, -2, 2);
    phys_integrate_pos(m, q0, dq, 1.0);
    eval(m, d, q0, v0, plus);
    for (int s = 0; s < m->nsensor; s++) {
      if (!phys_sensor_has_deriv(m->sensor_type[s])) {
        CHECK(phys_sensor_deriv(m, d, s, H) == PHYS_ERR_ARG);
        continue;
      }
      int dim = m->sensor_dim[s], adr = m->sensor_adr[s];
      eval(m, d, q0, v0, plus);
      CHECK(phys_sensor_deriv(m, d, s, H) == PHYS_OK);
      double maxerr = 0, scale = 1e-3;
      for (int c = 0; c < 2 * nv; c++) {
        double e[32] = {0}, vp[32], vm[32];
        memcpy(vp, v0, sizeof(double) * (size_t)nv);
        memcpy(vm, v0, sizeof(double) * (size_t)nv);
        if (c < nv) {
          e[c] = 1;
          memcpy(q, q0, sizeof(double) * (size_t)nq);
          phys_integrate_pos(m, q, e, eps);
          eval(m, d, q, v0, plus);
          memcpy(q, q0, sizeof(double) * (size_t)nq);
          phys_integrate_pos(m, q, e, -eps);
          eval(m, d, q, v0, minus);
        } else {
          vp[c - nv] += eps, vm[c - nv] -= eps;
          eval(m, d, q0, vp, plus);
          eval(m, d, q0, vm, minus);
        }
        for (int k = 0; k < dim; k++) {
          double fd = (plus[adr + k] - minus[adr + k]) / (2 * eps), an = H[k * 2 * nv + c];
          scale = fmax(scale, fabs(an));
          maxerr = fmax(maxerr, fabs(fd - an));
        }
      }
      double rel = maxerr / scale;
      worst = fmax(worst, rel);
      nchecked++;
      CHECK_MSG(rel < 1e-7, "state %d sensor %d '%s' (%s): |analytic - central difference| %.3g of %.3g", trial, s,
                phys_id2name(m, "sensor", s), phys_sensor_name(m->sensor_type[s]), maxerr, scale);
    }
  }
  (void)ns;
  printf("%d sensor derivatives at 3 states, worst relative difference to central differences %.3g\n", nchecked,
         worst);
  phys_free_data(d);
  phys_free_model(m);
  return test_done();
}
