// test_oracle_fit_sensors.c - identification from sensor readings (fit.c's sensor residuals, dataset.c's sensor
// columns and --observe sensor items): MuJoCo 2.2.2 swings tests/data/arm_sensors.xml for 1 s and writes its
// states and sensordata as `physid simulate --sensors` does; the fit observes only the shoulder encoder and the
// forearm gyro (the state columns give the rollout's start) and recovers the shoulder damping 0.3 from 0.1. The
// residual Jacobian agrees with central differences; an accelerometer cannot be observed (no state derivative).
#include <mujoco/mujoco.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "params.h"
#include "physid.h"
#include "sysid.h"
#include "test.h"

static const char* MODEL = PHYS_SOURCE_DIR "/tests/data/arm_sensors.xml";

// MuJoCo's run from (0.8, -0.5) at rest into a CSV file: row k the state before step k+1 and the sensordata that
// step computed (at that state)
static int write_data(const char* path) {
  char err[512];
  mjModel* mm = mj_loadXML(MODEL, NULL, err, sizeof err);
  CHECK_MSG(mm != NULL, "mujoco: %s", err);
  if (!mm) return 0;
  mjData* md = mj_makeData(mm);
  md->qpos[0] = 0.8, md->qpos[1] = -0.5;
  FILE* f = fopen(path, "w");
  fprintf(f, "t,q0,q1,v0,v1,sensor:enc,sensor:imu:0,sensor:imu:1,sensor:imu:2,sensor:acc:0,sensor:acc:1,sensor:acc:2\n");
  for (int k = 0; k <= 500; k++) {
    double t = md->time, q[2] = {md->qpos[0], md->qpos[1]}, v[2] = {md->qvel[0], md->qvel[1]};
    mj_step(mm, md);
    fprintf(f, "%.17g,%.17g,%.17g,%.17g,%.17g", t, q[0], q[1], v[0], v[1]);
    for (int i = 0; i < mm->nsensordata; i++) fprintf(f, ",%.17g", md->sensordata[i]);
    fprintf(f, "\n");
  }
  fclose(f);
  mj_deleteData(md);
  mj_deleteModel(mm);
  return 1;
}

int main(void) {
  char path[] = "/tmp/test_fit_sensors_XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) return 1;
  close(fd);
  if (!write_data(path)) return test_done();
  physLog log = {0};
  physModel* m = phys_load_mjcf(MODEL, &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  if (!m) return test_done();
  const char* files[] = {path};
  physDataOptions dopt = {0};
  dopt.observe = "sensor:enc,sensor:imu";
  physDataset ds;
  physStatus st = phys_dataset_load(&ds, m, files, 1, &dopt, &log);
  CHECK_MSG(st == PHYS_OK, "%s", log.error);
  // the states are start values only; the encoder and the gyro are the observations
  CHECK(ds.ntraj == 1 && ds.traj[0].T == 501 && ds.nsens == 7 && ds.obs_s && !ds.obs_q[0] && !ds.obs_v[1]);
  for (int a = 0; ds.obs_s && a < 7; a++) CHECK(ds.obs_s[a] == (a < 4));
  physParamTable t;
  const char* spec[] = {"damping:shoulder"};
  CHECK(phys_param_table_build(&t, m, spec, 1, &log) == PHYS_OK);
  physFitOptions opt;
  phys_fit_defaults(&opt);
  opt.loss = PHYS_LOSS_ROLLOUT;
  CHECK(phys_fit_nres(m, &t, &ds, &opt, &log) == 500 * 4);

  // the residual Jacobian against central differences at damping 0.2
  int nres = 500 * 4;
  double* r = malloc(sizeof(double) * 3 * (size_t)nres);
  double *J = r + nres, *rp = J + nres, th = 0.2, h = 1e-6, maxerr = 0, scale = 0;
  CHECK(phys_fit_residuals(m, &t, &th, NULL, &ds, &opt, r, J, &log) == PHYS_OK);
  double tp = th + h, tm = th - h;
  CHECK(phys_fit_residuals(m, &t, &tp, NULL, &ds, &opt, rp, NULL, &log) == PHYS_OK);
  CHECK(phys_fit_residuals(m, &t, &tm, NULL, &ds, &opt, r, NULL, &log) == PHYS_OK);
  for (int i = 0; i < nres; i++) {
    double fd = (rp[i] - r[i]) / (2 * h);
    maxerr = fmax(maxerr, fabs(fd - J[i]));
    scale = fmax(scale, fabs(J[i]));
  }
  printf("residual Jacobian vs central differences: %.3g of %.3g\n", maxerr, scale);
  CHECK(maxerr <= 1e-6 * scale);
  free(r);

  // the fit from 0.1
  double start = 0.1;
  physFitResult res;
  st = phys_fit(m, &t, &start, NULL, NULL, &ds, &opt, &res, &log);
  CHECK_MSG(st == PHYS_OK, "%s", log.error);
  if (st == PHYS_OK) {
    printf("damping from the encoder and the gyro: %.12g (true 0.3), loss %.3g, %d iterations\n", res.theta[0],
           res.loss, res.iterations);
    CHECK(fabs(res.theta[0] - 0.3) < 1e-8);
    phys_fit_result_free(&res);
  }
  phys_dataset_free(&ds);

  // an accelerometer has no state derivative: refused with its name
  dopt.observe = "sensor:acc";
  CHECK(phys_dataset_load(&ds, m, files, 1, &dopt, &log) == PHYS_OK);
  memset(&log, 0, sizeof log);
  CHECK(phys_fit_nres(m, &t, &ds, &opt, &log) == 0 && strstr(log.error, "sensor 'acc' (accelerometer) cannot be observed"));
  phys_dataset_free(&ds);
  dopt.observe = "sensor:nope";
  memset(&log, 0, sizeof log);
  CHECK(phys_dataset_load(&ds, m, files, 1, &dopt, &log) == PHYS_ERR_ARG && strstr(log.error, "no sensor of that name"));
  phys_dataset_free(&ds);
  phys_param_table_free(&t);
  phys_free_model(m);
  unlink(path);
  return test_done();
}
