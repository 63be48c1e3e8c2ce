// test_progressive.c - paper 002's progressive training (src/sysid/progressive.c, phys_fit_progressive):
// a stiff spring-mass (tests/data/springmass.xml with k = 2e4 N/m, b = 20 N s/m, m = 2 kg: omega = 100/s)
// recorded at 25 Hz (dt_obs = 0.04 s, omega dt_obs = 4: semi-implicit Euler at one step per sample diverges)
// from the model's own semi-implicit Euler at 1 ms (40 substeps); two training trajectories and one for
// validation, 0.8 s each, as CSV files loaded by phys_dataset_load. From k = 1.2e4, b = 5 the progressive fit
// (kstep loss, horizon 5, 20 Adam iterations per epoch, lr 0.1 down to 1e-4) recovers k and b (relative 1e-3 and
// 1e-2); its schedule starts implicit at 1 substep, reaches 40 substeps in stage 1, halves the learning rate, and
// ends with semi-implicit epochs; the model's integrator is as on entry. A prior is refused (PHYS_ERR_ARG).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "params.h"
#include "physid.h"
#include "sysid.h"
#include "test.h"

#define DT_OBS 0.04
#define SUB 40

// simulate the true model from (x0, v0) for 0.8 s and write the samples every DT_OBS as "t,q0,v0" to path
static void record(physModel* m, const char* path, double x0, double v0) {
  physData* d = phys_make_data(m);
  FILE* f = fopen(path, "w");
  CHECK(f != NULL);
  if (!f) return;
  d->qpos[0] = x0;
  d->qvel[0] = v0;
  fprintf(f, "t,q0,v0\n");
  for (int k = 0; k <= 20; k++) {
    fprintf(f, "%.17g,%.17g,%.17g\n", k * DT_OBS, d->qpos[0], d->qvel[0]);
    for (int s = 0; s < SUB; s++) phys_step(m, d);
  }
  fclose(f);
  phys_free_data(d);
}

// the data set of the given files
static void load_set(physDataset* ds, const physModel* m, const char* const* paths, int n) {
  physDataOptions dopt;
  memset(&dopt, 0, sizeof dopt);
  physLog log = {0};
  CHECK_MSG(phys_dataset_load(ds, m, paths, n, &dopt, &log) == PHYS_OK, "%s", log.error);
}

int main(void) {
  physModel* m = phys_load_mjcf("tests/data/springmass.xml", NULL);
  CHECK(m != NULL);
  if (!m) return test_done();
  char dir[] = "/tmp/physid_progressive_XXXXXX", p[3][96];
  CHECK(mkdtemp(dir) != NULL);
  m->jnt_stiffness[0] = 2e4;
  m->dof_damping[0] = 20;
  const double start[3][2] = {{0.3, 0}, {0.1, 4}, {-0.2, -2}};
  for (int i = 0; i < 3; i++) {
    snprintf(p[i], sizeof p[i], "%s/traj_%d.csv", dir, i);
    record(m, p[i], start[i][0], start[i][1]);
  }
  physDataset train, valid;
  const char* tp[2] = {p[0], p[1]};
  const char* vp[1] = {p[2]};
  load_set(&train, m, tp, 2);
  load_set(&valid, m, vp, 1);

  physParamTable t;
  physLog log = {0};
  const char* spec[2] = {"stiffness:x", "damping:x"};
  CHECK(phys_param_table_build(&t, m, spec, 2, &log) == PHYS_OK);
  double th0[2] = {1.2e4, 5}, lo[2] = {1e3, 0}, hi[2] = {1e5, 200};
  CHECK(phys_param_set(&t, m, th0) == PHYS_OK);
  physFitOptions o;
  phys_fit_defaults(&o);
  o.loss = PHYS_LOSS_KSTEP;
  o.horizon = 5;
  o.substeps = SUB;
  o.max_iter = 20;
  physProgressiveOptions po = {0.1, 1e-4, 100, 1e-3};
  physProgressiveEpoch hist[200];
  int nh = 0;
  physFitResult res;
  physStatus st = phys_fit_progressive(m, &t, th0, lo, hi, &train, &valid, &o, &po, &res, hist, &nh, &log);
  CHECK_MSG(st == PHYS_OK, "%s", log.error);
  int reached = 0, stage2 = 0, halved = 0;
  for (int e = 0; e < nh; e++) {
    printf("epoch %2d: stage %d substeps %2d lr %.3g train %.6g valid %.6g\n", e, hist[e].stage, hist[e].substeps,
           hist[e].lr, hist[e].train, hist[e].valid);
    if (hist[e].stage == 1 && hist[e].substeps == SUB) reached = 1;
    if (hist[e].stage == 1 && hist[e].lr < 0.1) halved = 1;
    if (hist[e].stage == 2) stage2++;
  }
  CHECK(nh > 0 && hist[0].stage == 1 && hist[0].substeps == 1);
  CHECK(reached && halved && stage2 > 0);
  double k = m->jnt_stiffness[0], b = m->dof_damping[0];
  printf("progressive: k %.6g (true 2e4), b %.6g (true 20) after %d epochs (%d semi-implicit)\n", k, b, nh, stage2);
  CHECK_REL(k, 2e4, 1e-3, 0);
  CHECK_REL(b, 20, 1e-2, 0);
  CHECK(res.theta[0] == k && res.theta[1] == b);
  CHECK(m->opt.integrator == PHYS_INT_EULER);
  phys_fit_result_free(&res);

  // a prior is refused
  o.prior = 1;
  CHECK(phys_fit_progressive(m, &t, th0, lo, hi, &train, &valid, &o, &po, &res, hist, &nh, &log) == PHYS_ERR_ARG);
  CHECK(strstr(log.error, "prior") != NULL);

  phys_param_table_free(&t);
  phys_dataset_free(&train);
  phys_dataset_free(&valid);
  for (int i = 0; i < 3; i++) unlink(p[i]);
  rmdir(dir);
  phys_free_model(m);
  return test_done();
}
