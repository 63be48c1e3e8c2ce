// test_oracle_fit.c - identification from recorded inputs against MuJoCo 2.2.2 (issue 12's check): the 7-link arm
// models/arm7.xml simulated by MuJoCo under piecewise-constant controls held for each 100 Hz sample (a PD hold
// about the keyframe plus a uniform random excitation, as an excitation run records them), positions written with
// 1e-4 rad noise and no velocities (the loader differences them); 8 runs of 200 samples. From the recorded
// controls (u columns), and again from the measured joint torques (tau columns, MuJoCo's qfrc_actuator, no
// controls), the masses of links l3 and l5 and the dampings of joints j2 and j4, started 30 % off, are identified
// by phys_fit with identify's defaults (phys_fit_defaults, the parameters' default bounds) but --substeps 5 (the
// model's 2 ms step) within 3 %; the same files with the inputs left out give a fit that is far off.
// Velocities are recorded (MuJoCo's qvel with 1e-2 rad/s noise, the size of differencing 1e-4 rad at 100 Hz).
// Measured: with substeps 1 (identify's default: one 10 ms step per sample) the fit ends at l5 = 2e-11 kg and both
// dampings 0 (100 % off); without recorded velocities (backward differences) the one-step loss cannot fit either:
// the distal links accelerate at up to ~10^3 rad/s^2 between samples, so a differenced velocity lags by a dt/2.
//
//   sysid_test_oracle_fit --write DIR   only write the data into DIR/u, DIR/tau and DIR/none (DIR: an
//                                       existing folder, absolute: the binary runs in the source folder)
//                                       and no fit: scripts/bench_identify_robots.sh times identify on them
#include <mujoco/mujoco.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "physid.h"
#include "rng.h"
#include "sysid.h"
#include "test.h"

#define MODEL "models/arm7.xml"   // the tests run in the source folder
#define NRUN 8
#define NSAMPLE 200
#define SUB 5                      // MuJoCo steps of 2 ms per sample

static char g_dir[160];

// a standard normal deviate (Box-Muller)
static double gauss(physRng* rng) {
  double u1 = 1 - phys_rng_uniform(rng), u2 = phys_rng_uniform(rng);
  return sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
}

// run r of the excitation: MuJoCo from the keyframe (perturbed), controls held for SUB steps per sample; writes
// "t,q0..q6,u0..u6" (inputs = 0) or "t,q0..q6,tau0..tau6" (inputs = 1) or "t,q0..q6" (inputs = 2) files into
// folders u/, tau/ and none/; returns the number of steps with an active joint limit
static int excite(const mjModel* mm, mjData* md, int r) {
  physRng rng, noise;
  phys_rng_seed(&rng, 100 + (uint64_t)r);
  phys_rng_seed(&noise, 200 + (uint64_t)r);
  mj_resetDataKeyframe(mm, md, 0);
  for (int i = 0; i < mm->nv; i++) md->qpos[i] += 0.2 * (2 * phys_rng_uniform(&rng) - 1);
  mj_forward(mm, md);
  const char* sub[3] = {"u", "tau", "none"};
  FILE* f[3];
  for (int k = 0; k < 3; k++) {
    char p[256];
    snprintf(p, sizeof p, "%s/%s/run%d.csv", g_dir, sub[k], r);
    f[k] = fopen(p, "w");
    fprintf(f[k], "t");
    for (int i = 0; i < mm->nq; i++) fprintf(f[k], ",q%d", i);
    for (int i = 0; i < mm->nv; i++) fprintf(f[k], ",v%d", i);
    for (int i = 0; k < 2 && i < mm->nu; i++) fprintf(f[k], k ? ",tau%d" : ",u%d", i);
    fprintf(f[k], "\n");
  }
  int nlimit = 0;
  for (int s = 0; s < NSAMPLE; s++) {
    // the controls of this sample: PD about the keyframe plus excitation, clamped to ctrlrange, held to the next
    for (int i = 0; i < mm->nu; i++) {
      double u = 40 * (mm->key_qpos[i] - md->qpos[i]) - 4 * md->qvel[i] + 8 * (2 * phys_rng_uniform(&rng) - 1);
      md->ctrl[i] = fmin(fmax(u, mm->actuator_ctrlrange[2 * i]), mm->actuator_ctrlrange[2 * i + 1]);
    }
    mj_forward(mm, md);   // qfrc_actuator of these controls: the measured joint torques
    for (int k = 0; k < 3; k++) {
      fprintf(f[k], "%.17g", md->time);
      for (int i = 0; i < mm->nq; i++) fprintf(f[k], ",%.17g", md->qpos[i] + 1e-4 * gauss(&noise) * (k == 0));
      for (int i = 0; i < mm->nv; i++) fprintf(f[k], ",%.17g", md->qvel[i] + 1e-2 * gauss(&noise) * (k == 0));
      for (int i = 0; k < 2 && i < mm->nu; i++) fprintf(f[k], ",%.17g", k ? md->qfrc_actuator[i] : md->ctrl[i]);
      fprintf(f[k], "\n");
    }
    for (int k = 0; k < SUB; k++) {
      mj_step(mm, md);
      nlimit += md->nefc > 0;
    }
  }
  for (int k = 0; k < 3; k++) fclose(f[k]);
  return nlimit;
}

// copy the noise of the u files into the others: every folder holds the same positions
static void same_noise(void) {
  char cmd[1024];
  snprintf(cmd, sizeof cmd,
           "cd %s && for f in u/*.csv; do b=$(basename $f); paste -d, <(cut -d, -f1-15 $f) <(cut -d, -f16- tau/$b) "
           "> tau/$b.tmp && mv tau/$b.tmp tau/$b && cut -d, -f1-15 $f > none/$b; done",
           g_dir);
  char full[1200];
  snprintf(full, sizeof full, "bash -c '%s'", cmd);
  CHECK(system(full) == 0);
}

// fit the four parameters to the files of folder sub; returns the relative errors (4) in err
static void fit(const char* sub, double* err, const double* truth) {
  physLog log = {0};
  physModel* m = phys_load(MODEL, NULL, &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  if (!m) return;
  char path[256];
  snprintf(path, sizeof path, "%s/%s", g_dir, sub);
  const char* paths[1] = {path};
  physDataset ds;
  physStatus st = phys_dataset_load(&ds, m, paths, 1, NULL, &log);
  CHECK_MSG(st == PHYS_OK, "%s", log.error);
  const char* spec[4] = {"mass:l3", "mass:l5", "damping:j2", "damping:j4"};
  physParamTable t;
  CHECK(phys_param_table_build(&t, m, spec, 4, &log) == PHYS_OK);
  double theta0[4], lo[4], hi[4];
  phys_param_get(&t, m, theta0);
  phys_param_bounds(&t, lo, hi);
  const double off[4] = {1.3, 0.7, 1.3, 0.7};
  for (int i = 0; i < 4; i++) theta0[i] *= off[i];
  physFitOptions opt;
  phys_fit_defaults(&opt);
  opt.substeps = SUB;   // identify's default (1: the 10 ms of the data) integrates too coarsely; see the header
  physFitResult res;
  st = st == PHYS_OK ? phys_fit(m, &t, theta0, lo, hi, &ds, &opt, &res, &log) : st;
  CHECK_MSG(st == PHYS_OK, "%s", log.error);
  if (st == PHYS_OK) {
    printf("%-4s (controls %d, joint forces %d): l3 %.6g, l5 %.6g kg; j2 %.6g, j4 %.6g N m s/rad; loss %.4g -> %.4g in %d "
           "iterations\n", sub, ds.has_ctrl, ds.has_qfrc, res.theta[0], res.theta[1], res.theta[2], res.theta[3],
           res.loss0, res.loss, res.iterations);
    for (int i = 0; i < 4; i++) err[i] = fabs(res.theta[i] / truth[i] - 1);
    phys_fit_result_free(&res);
  }
  phys_param_table_free(&t);
  phys_dataset_free(&ds);
  phys_free_model(m);
}

int main(int argc, char** argv) {
  int write_only = argc == 3 && !strcmp(argv[1], "--write");
  if (write_only && argv[2][0] != '/') {   // the binary runs in the source folder (tests/test.h)
    fprintf(stderr, "%s: --write %s: give an absolute folder\n", argv[0], argv[2]);
    return 2;
  }
  char err[1000];
  mjModel* mm = mj_loadXML(MODEL, NULL, err, sizeof err);
  CHECK_MSG(mm != NULL, "%s", err);
  if (!mm) return test_done();
  mjData* md = mj_makeData(mm);
  if (write_only)
    snprintf(g_dir, sizeof g_dir, "%s", argv[2]);
  else if (!mkdtemp(strcpy(g_dir, "/tmp/physid_test_oracle_fit_XXXXXX")))
    return 1;
  char cmd[900];
  snprintf(cmd, sizeof cmd, "mkdir %s/u %s/tau %s/none", g_dir, g_dir, g_dir);
  CHECK(system(cmd) == 0);
  int nlimit = 0;
  for (int r = 0; r < NRUN; r++) nlimit += excite(mm, md, r);
  same_noise();
  printf("MuJoCo: %d runs of %d samples at 100 Hz; %d steps with an active joint limit\n", NRUN, NSAMPLE, nlimit);
  CHECK(nlimit == 0);   // the comparison is about the dynamics, not MuJoCo's soft limits
  // the truth: MuJoCo's masses of l3, l5 (bodies 3, 5) and dampings of j2, j4 (dofs 1, 3)
  double truth[4] = {mm->body_mass[3], mm->body_mass[5], mm->dof_damping[1], mm->dof_damping[3]};
  printf("truth: l3 %.6g, l5 %.6g kg; j2 %.6g, j4 %.6g N m s/rad\n", truth[0], truth[1], truth[2], truth[3]);
  if (write_only) {
    mj_deleteData(md);
    mj_deleteModel(mm);
    return test_done();
  }
  double e_u[4] = {1, 1, 1, 1}, e_tau[4] = {1, 1, 1, 1}, e_none[4] = {0, 0, 0, 0};
  fit("u", e_u, truth);
  fit("tau", e_tau, truth);
  fit("none", e_none, truth);
  double worst_u = 0, worst_tau = 0, worst_none = 0;
  for (int i = 0; i < 4; i++) {
    worst_u = fmax(worst_u, e_u[i]);
    worst_tau = fmax(worst_tau, e_tau[i]);
    worst_none = fmax(worst_none, e_none[i]);
  }
  printf("largest relative error: controls %.3g %%, joint torques %.3g %%, inputs ignored %.3g %%\n", 100 * worst_u,
         100 * worst_tau, 100 * worst_none);
  CHECK(worst_u < 0.03);
  CHECK(worst_tau < 0.03);
  CHECK(worst_none > 0.1);
  mj_deleteData(md);
  mj_deleteModel(mm);
  snprintf(cmd, sizeof cmd, "rm -rf %s", g_dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g_dir);
  return test_done();
}
