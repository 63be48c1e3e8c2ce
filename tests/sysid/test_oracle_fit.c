// test_oracle_fit.c - identification from recorded inputs against MuJoCo 2.2.2 (issue 12's check): the 7-link arm
// models/arm7.xml simulated by MuJoCo under piecewise-constant controls held for each 100 Hz sample (a PD hold
// about the keyframe plus a uniform random excitation, as an excitation run records them), positions written with
// 1e-4 rad noise and no velocities (the loader differences them); 8 runs of 200 samples. From the recorded
// controls (u columns), and again from the measured joint torques (tau columns, MuJoCo's qfrc_actuator, no
// controls), the masses of links l3 and l5 and the dampings of joints j2 and j4, started 30 % off, are identified
// by phys_fit with identify's defaults (phys_fit_defaults and phys_fit_data_defaults with nothing given: 5 substeps
// from the model's 2 ms timestep, onestep because the velocities are recorded; the parameters' default bounds) within
// 3 %; the same files with the inputs left out give a fit that is far off.
// Velocities are recorded (MuJoCo's qvel with 1e-2 rad/s noise, the size of differencing 1e-4 rad at 100 Hz): the
// one-step residuals do not look like differencing noise (correlation 0.36, lag-1 -0.48).
// Measured: with substeps 1 (the old default: one 10 ms step per sample) the fit ended at l5 = 2e-11 kg and both
// dampings 0 (100 % off); without recorded velocities (backward differences) the one-step loss cannot fit either:
// the distal links accelerate at up to ~10^3 rad/s^2 between samples, so a differenced velocity lags by a dt/2.
// Then the simulated motion-capture cube (test_mocap_cube below).
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
  char why[1200];
  phys_fit_data_defaults(&opt, m, &ds, 0, PHYS_VEL_AUTO, why, sizeof why);   // identify's defaults: nothing given
  CHECK(opt.substeps == SUB);   // the model's 2 ms step, 5 per sample (with 1 the fit ends 100 % off)
  CHECK(opt.loss == PHYS_LOSS_ONESTEP);   // the velocities are measured (backward weight 2.3, far from 1)
  CHECK(fabs(phys_dataset_backward_weight(m, &ds) - 1) > 1);
  physFitResult res;
  st = st == PHYS_OK ? phys_fit(m, &t, theta0, lo, hi, &ds, &opt, &res, &log) : st;
  CHECK_MSG(st == PHYS_OK, "%s", log.error);
  if (st == PHYS_OK) {
    printf("%-4s (controls %d, joint forces %d): l3 %.6g, l5 %.6g kg; j2 %.6g, j4 %.6g N m s/rad; loss %.4g -> %.4g in %d "
           "iterations\n", sub, ds.has_ctrl, ds.has_qfrc, res.theta[0], res.theta[1], res.theta[2], res.theta[3],
           res.loss0, res.loss, res.iterations);
    for (int i = 0; i < 4; i++) err[i] = fabs(res.theta[i] / truth[i] - 1);
    double corr, lag1;
    int np;
    CHECK(phys_fit_differencing_noise(m, &ds, &opt, &corr, &lag1, &np, &log) == PHYS_OK);
    printf("     one-step residuals: corr %.3f, lag-1 %.3f over %d coordinates\n", corr, lag1, np);
    if (strcmp(sub, "none")) CHECK(np == 7 && !phys_fit_differencing_suspect(corr, lag1));   // recorded velocities
    phys_fit_result_free(&res);
  }
  phys_param_table_free(&t);
  phys_dataset_free(&ds);
  phys_free_model(m);
}

//---------------------------------------------------------------------------------------------------------
// the simulated motion-capture cube (issue 12 item 5): MuJoCo 2.2.2 (elliptic cone, 2 ms) slides a 10 cm cube on
// the floor with friction MU from 8 launches (1.5-3 m/s in random directions, a spin about z); 100 samples at
// 100 Hz of its pose, positions with 1 mm noise, no velocity columns (physid differences them: 0.14 m/s of noise).
// physid (cone) identifies friction:cube started at 0.5 with identify's data defaults, and with each loss forced.

#define MU 0.3
static const char* g_slide_xml =
    "<mujoco model=\"slide\">\n  <option timestep=\"0.002\" cone=\"elliptic\"/>\n  <worldbody>\n"
    "    <geom name=\"floor\" type=\"plane\" size=\"20 20 .1\" friction=\"0 0 0\"/>\n"
    "    <body name=\"cube\" pos=\"0 0 0.05\">\n      <freejoint name=\"cube\"/>\n"
    "      <geom name=\"cube\" type=\"box\" size=\".05 .05 .05\" mass=\"1\" friction=\"0.3 0 0\"/>\n"
    "    </body>\n  </worldbody>\n  <custom>\n    <text name=\"physid:contact\" data=\"cone\"/>\n"
    "  </custom>\n</mujoco>\n";

// run r's files: mocap/ the noisy poses without velocity columns; mocapv/ the same with the velocities a
// motion-capture export computes, backward differences of its poses (v_0 = 2 v_1 - v_2; a forward difference
// there, the velocity half a sample later, leaves the default fit 7.6 % high); clean/ the poses without noise and
// their differences
static void write_mocap(const physModel* pm, double q[100][2][7], int r) {
  const char* dir[3] = {"mocap", "mocapv", "clean"};
  for (int d = 0; d < 3; d++) {
    char path[256];
    snprintf(path, sizeof path, "%s/%s/run%d.csv", g_dir, dir[d], r);
    FILE* f = fopen(path, "w");
    if (!f) return;
    fprintf(f, "t,px,py,pz,qw,qx,qy,qz%s\n", d ? ",vx,vy,vz,wx_body,wy_body,wz_body" : "");
    for (int s = 0; s < 100; s++) {
      const double* x = q[s][d == 2];
      fprintf(f, "%.17g", 0.01 * s);
      for (int i = 0; i < 7; i++) fprintf(f, ",%.17g", x[i]);
      double v[6];
      if (d && s > 0) phys_difference_pos(pm, v, 0.01, q[s - 1][d == 2], q[s][d == 2]);
      if (d && s == 0) {   // the first sample: 2 v_1 - v_2, as physid's loader extrapolates
        double v1[6], v2[6];
        phys_difference_pos(pm, v1, 0.01, q[0][d == 2], q[1][d == 2]);
        phys_difference_pos(pm, v2, 0.01, q[1][d == 2], q[2][d == 2]);
        for (int i = 0; i < 6; i++) v[i] = 2 * v1[i] - v2[i];
      }
      for (int i = 0; d && i < 6; i++) fprintf(f, ",%.17g", v[i]);
      fprintf(f, "\n");
    }
    fclose(f);
  }
}

// write the model and the 8 launches into g_dir/slide.xml and g_dir/mocap, mocapv, clean; 0 on failure
static int make_mocap(void) {
  char path[256], err[1000];
  snprintf(path, sizeof path, "%s/slide.xml", g_dir);
  FILE* f = fopen(path, "w");
  if (!f) return 0;
  fputs(g_slide_xml, f);
  fclose(f);
  mjModel* mm = mj_loadXML(path, NULL, err, sizeof err);
  CHECK_MSG(mm != NULL, "%s", err);
  if (!mm) return 0;
  mjData* md = mj_makeData(mm);
  physLog log = {0};
  physModel* pm = phys_load(path, NULL, &log);
  CHECK_MSG(pm != NULL, "%s", log.error);
  physRng rng, noise;
  phys_rng_seed(&rng, 7);
  phys_rng_seed(&noise, 8);
  for (int r = 0; r < 8; r++) {
    mj_resetData(mm, md);
    double speed = 1.5 + 1.5 * phys_rng_uniform(&rng), dir = 2 * M_PI * phys_rng_uniform(&rng);
    md->qpos[2] = 0.0499;
    md->qvel[0] = speed * cos(dir), md->qvel[1] = speed * sin(dir), md->qvel[5] = 4 * (2 * phys_rng_uniform(&rng) - 1);
    for (int k = 0; k < 50; k++) mj_step(mm, md);   // settle 0.1 s onto the floor while sliding
    double q[100][2][7];   // per sample: the pose with noise, without
    for (int s = 0; s < 100; s++) {
      for (int i = 0; i < 7; i++) q[s][0][i] = q[s][1][i] = md->qpos[i];
      for (int i = 0; i < 3; i++) q[s][0][i] += 1e-3 * gauss(&noise);
      for (int k = 0; k < 5; k++) mj_step(mm, md);
    }
    write_mocap(pm, q, r);
  }
  phys_free_model(pm);
  mj_deleteData(md);
  mj_deleteModel(mm);
  return 1;
}

// fit friction:cube from 0.5 to the files of g_dir/dir: loss < 0 the data defaults (given nothing; vel: what the
// velocity columns are declared to be, physVelocitySource), else that loss (velocities weighted as by default); returns the friction, the chosen loss in *chosen, the differencing
// statistics of the one-step residuals at the fit in corr, lag1
static double fit_mocap(const char* dir, int loss, int vel, int* chosen, double* corr, double* lag1) {
  physLog log = {0};
  char path[256];
  snprintf(path, sizeof path, "%s/slide.xml", g_dir);
  physModel* m = phys_load(path, NULL, &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  if (!m) return NAN;
  snprintf(path, sizeof path, "%s/%s", g_dir, dir);
  const char* paths[1] = {path};
  physDataset ds;
  CHECK_MSG(phys_dataset_load(&ds, m, paths, 1, NULL, &log) == PHYS_OK, "%s", log.error);
  const char* spec[1] = {"friction:cube"};
  physParamTable t;
  CHECK(phys_param_table_build(&t, m, spec, 1, &log) == PHYS_OK);
  double theta0 = 0.5, lo, hi, mu = NAN;
  phys_param_bounds(&t, &lo, &hi);
  physFitOptions opt;
  phys_fit_defaults(&opt);
  char why[1200];
  phys_fit_data_defaults(&opt, m, &ds, loss < 0 ? 0 : PHYS_GIVEN_LOSS, vel, why, sizeof why);
  if (loss >= 0) opt.loss = loss;
  *chosen = opt.loss;
  physFitResult res;
  if (phys_fit(m, &t, &theta0, &lo, &hi, &ds, &opt, &res, &log) == PHYS_OK) {
    mu = res.theta[0];
    int np;
    CHECK(phys_fit_differencing_noise(m, &ds, &opt, corr, lag1, &np, &log) == PHYS_OK);
    printf("%s, loss %s%s: friction %.6g (%+.2f %%); one-step residuals: corr %.3f, lag-1 %.3f\n%s\n",
           dir, (const char*[]){"onestep", "kstep", "rollout"}[opt.loss], loss < 0 ? " (data default)" : "", mu,
           100 * (mu / MU - 1), *corr, *lag1, loss < 0 ? why : "");
    phys_fit_result_free(&res);
  } else {
    CHECK_MSG(0, "%s", log.error);
  }
  phys_param_table_free(&t);
  phys_dataset_free(&ds);
  phys_free_model(m);
  return mu;
}

// the defaults give the right friction on motion-capture data; the one-step loss does not and its residuals
// look like differencing noise
static void test_mocap_cube(void) {
  char cmd[3 * sizeof g_dir + 64];
  snprintf(cmd, sizeof cmd, "mkdir %s/mocap %s/mocapv %s/clean", g_dir, g_dir, g_dir);
  CHECK(system(cmd) == 0);
  if (!make_mocap()) return;
  int chosen;
  double corr, lag1;
  // no velocity columns: kstep on positions by default, within 1 %; onestep 117 % high; rollout 9 % low
  double mu = fit_mocap("mocap", -1, PHYS_VEL_AUTO, &chosen, &corr, &lag1);
  CHECK(chosen == PHYS_LOSS_KSTEP);
  CHECK(fabs(mu / MU - 1) < 0.01);
  mu = fit_mocap("mocap", PHYS_LOSS_ONESTEP, PHYS_VEL_AUTO, &chosen, &corr, &lag1);
  CHECK(fabs(mu / MU - 1) > 0.5);   // the bias the default avoids
  CHECK(isnan(corr));               // no velocity observed: nothing to check
  mu = fit_mocap("mocap", PHYS_LOSS_ROLLOUT, PHYS_VEL_AUTO, &chosen, &corr, &lag1);
  CHECK(fabs(mu / MU - 1) > 0.05);
  // velocity columns that are backward differences of the poses (backward weight 1): kstep on positions as without
  // them, within 1 %; declared measured they get onestep, 16 % high, and its velocity residuals look like
  // differencing noise (identify warns). Without noise (the differences of poses 5 MuJoCo steps apart, a dt/2 late)
  // the default is kstep too, +2.2 % (each segment starts from a velocity a dt/2 late), where onestep is 15 % low
  mu = fit_mocap("mocapv", -1, PHYS_VEL_AUTO, &chosen, &corr, &lag1);
  CHECK(chosen == PHYS_LOSS_KSTEP);
  CHECK(fabs(mu / MU - 1) < 0.01);
  mu = fit_mocap("mocapv", -1, PHYS_VEL_MEASURED, &chosen, &corr, &lag1);
  CHECK(chosen == PHYS_LOSS_ONESTEP);
  CHECK(fabs(mu / MU - 1) > 0.1);
  CHECK(phys_fit_differencing_suspect(corr, lag1));
  CHECK(corr > 0.9 && lag1 < -0.4);
  mu = fit_mocap("clean", -1, PHYS_VEL_AUTO, &chosen, &corr, &lag1);
  CHECK(chosen == PHYS_LOSS_KSTEP);
  CHECK(fabs(mu / MU - 1) < 0.03);
  mu = fit_mocap("clean", PHYS_LOSS_ONESTEP, PHYS_VEL_AUTO, &chosen, &corr, &lag1);
  CHECK(fabs(mu / MU - 1) > 0.1);
  CHECK(!phys_fit_differencing_suspect(corr, lag1));
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
  test_mocap_cube();
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
