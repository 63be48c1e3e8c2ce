// test_oracle_muscle.c - MuJoCo 2.2.2 as the oracle of muscles and slider-crank transmissions (src/dyn/muscle.c,
// issue 15 items 2 and 6):
//  1. the muscle curves against MuJoCo's own mju_muscleGain, mju_muscleBias and mju_muscleDynamics at random
//     lengths, velocities, controls and activations (to 1e-15 relative);
//  2. arm26.xml (six muscles on wrapped tendons) and slider_crank.xml (three slider-crank position servos): sizes,
//     acc0 (1e-12 relative), actuator lengths and qfrc_actuator at random states (1e-9 relative), and 1 s
//     trajectories under fixed controls, MuJoCo's constraint solver off (qpos, qvel, act to 1e-9);
//  3. arm26's lengthrange: physid's (corners of the joint ranges) against MuJoCo's mj_setLengthRange (a
//     simulation against the soft joint limits): the difference is the limits' penetration, bounded here; the
//     trajectory check above runs on a copy of arm26 with MuJoCo's lengthrange written in, and the original
//     file's trajectory difference is printed and bounded by what that lengthrange difference explains.
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mujoco/mujoco.h>

#include "dyn.h"
#include "physid.h"
#include "rng.h"
#include "test.h"

#define ARM26 "/usr/share/mujoco/model/tendon_arm/arm26.xml"
#define SLIDER "/usr/share/mujoco/model/slider_crank/slider_crank.xml"

static physRng rng;   // seeded in main (src/math/rng.h: the same sequence on every machine)

// uniform in [lo, hi)
static double rng_range(double lo, double hi) { return phys_rng_range(&rng, lo, hi); }

// |a - b| / max(|b|, 1e-300)
static double rel(double a, double b) { return fabs(a - b) / fmax(fabs(b), 1e-300); }

// 1. the curves at 2000 random points against MuJoCo's functions, with MuJoCo's muscle defaults and with
// random parameters (force given and scaled)
static void check_curves(void) {
  double worst[3] = {0};
  for (int k = 0; k < 2000; k++) {
    double prm[9] = {0.75, 1.05, -1, 200, 0.5, 1.6, 1.5, 1.3, 1.2};
    if (k % 2) {
      prm[0] = rng_range(0.5, 0.9), prm[1] = rng_range(1.0, 1.3), prm[2] = k % 4 == 1 ? rng_range(10, 100) : -1;
      prm[3] = rng_range(50, 300), prm[4] = rng_range(0.3, 0.7), prm[5] = rng_range(1.3, 2.0);
      prm[6] = rng_range(0.5, 3), prm[7] = rng_range(1, 2), prm[8] = rng_range(1.1, 1.8);
    }
    double lr[2] = {rng_range(0.1, 0.3), rng_range(0.4, 0.8)}, acc0 = rng_range(0.1, 5);
    double len = rng_range(lr[0] - 0.2, lr[1] + 0.2), vel = rng_range(-3, 3);
    double tau[2] = {rng_range(0.005, 0.05), rng_range(0.02, 0.1)}, ctrl = rng_range(-0.2, 1.2), act = rng_range(-0.2, 1.2);
    worst[0] = fmax(worst[0], rel(phys_muscle_gain(len, vel, lr, acc0, prm), mju_muscleGain(len, vel, lr, acc0, prm)));
    worst[1] = fmax(worst[1], rel(phys_muscle_bias(len, lr, acc0, prm), mju_muscleBias(len, lr, acc0, prm)));
    worst[2] = fmax(worst[2], rel(phys_muscle_dynamics(ctrl, act, tau), mju_muscleDynamics(ctrl, act, tau)));
  }
  printf("muscle curves, 2000 points: gain %.1e, bias %.1e, dynamics %.1e (relative)\n", worst[0], worst[1], worst[2]);
  for (int i = 0; i < 3; i++) CHECK_MSG(worst[i] <= 1e-15, "curve %d differs from MuJoCo's by %.3g", i, worst[i]);
}

// copy of arm26 with MuJoCo's lengthrange of each muscle written into its element (out: a mkstemps template)
static int arm26_with_lengthrange(const mjModel* mm, char* out) {
  FILE* f = fopen(ARM26, "rb");
  if (!f) return 0;
  static char text[1 << 16], res[1 << 17];
  size_t n = fread(text, 1, sizeof(text) - 1, f);
  fclose(f);
  text[n] = 0;
  char *p = text, *q = res;
  for (int a = 0; a < mm->nu; a++) {
    char* e = strstr(p, "<muscle name=");
    if (!e) return 0;
    e += strlen("<muscle");
    memcpy(q, p, (size_t)(e - p));
    q += e - p;
    q += sprintf(q, " lengthrange=\"%.17g %.17g\"", mm->actuator_lengthrange[2 * a], mm->actuator_lengthrange[2 * a + 1]);
    p = e;
  }
  strcpy(q, p);
  int fd = mkstemps(out, 4);
  if (fd < 0) return 0;
  FILE* g = fdopen(fd, "wb");
  int ok = g && fputs(res, g) >= 0;
  if (g) fclose(g);
  return ok;
}

// the sizes physid and MuJoCo give a model
static int same_sizes(const physModel* pm, const mjModel* mm) {
  return pm->nq == mm->nq && pm->nv == mm->nv && pm->nu == mm->nu && pm->na == mm->na && pm->nbody == mm->nbody &&
         pm->njnt == mm->njnt && pm->ngeom == mm->ngeom && pm->nsite == mm->nsite && pm->nspring == mm->ntendon;
}

// random states within the joint ranges: actuator lengths, velocities and qfrc_actuator against mj_forward
static void check_states(const char* name, const physModel* pm, const mjModel* mm) {
  physData* pd = phys_make_data(pm);
  mjData* md = mj_makeData(mm);
  double worst_len = 0, worst_vel = 0, worst_frc = 0, worst_dot = 0;
  for (int k = 0; k < 50; k++) {
    for (int j = 0; j < pm->njnt; j++) {
      const double* r = pm->jnt_range + 2 * j;
      pd->qpos[j] = pm->jnt_limited[j] ? rng_range(r[0], r[1]) : rng_range(-3, 3);
      pd->qvel[j] = rng_range(-2, 2);
    }
    for (int a = 0; a < pm->nu; a++) pd->ctrl[a] = rng_range(-0.2, 1.2);
    for (int a = 0; a < pm->na; a++) pd->act[a] = rng_range(0, 1);
    memcpy(md->qpos, pd->qpos, sizeof(double) * (size_t)pm->nq);
    memcpy(md->qvel, pd->qvel, sizeof(double) * (size_t)pm->nv);
    memcpy(md->ctrl, pd->ctrl, sizeof(double) * (size_t)pm->nu);
    memcpy(md->act, pd->act, sizeof(double) * (size_t)pm->na);
    phys_forward(pm, pd);
    mj_forward(mm, md);
    double fn = 0, fe = 0;
    for (int a = 0; a < pm->nu; a++) {
      double vel, len = phys_actuator_length(pm, pd, a, &vel);
      worst_len = fmax(worst_len, fabs(len - md->actuator_length[a]));
      worst_vel = fmax(worst_vel, fabs(vel - md->actuator_velocity[a]) / fmax(1, fabs(md->actuator_velocity[a])));
    }
    for (int i = 0; i < pm->nv; i++) fn += md->qfrc_actuator[i] * md->qfrc_actuator[i];
    for (int i = 0; i < pm->nv; i++) fe += (pd->qfrc_actuator[i] - md->qfrc_actuator[i]) * (pd->qfrc_actuator[i] - md->qfrc_actuator[i]);
    worst_frc = fmax(worst_frc, sqrt(fe) / fmax(sqrt(fn), 1e-12));
    for (int a = 0; a < pm->na; a++) worst_dot = fmax(worst_dot, rel(pd->act_dot[a], md->act_dot[a]));
  }
  printf("%-12s 50 states: actuator_length %.1e m, actuator_velocity %.1e, qfrc_actuator %.1e relative, act_dot %.1e\n",
         name, worst_len, worst_vel, worst_frc, worst_dot);
  CHECK_MSG(worst_len <= 1e-12 && worst_vel <= 1e-12, "%s: actuator length %.3g, velocity %.3g", name, worst_len, worst_vel);
  CHECK_MSG(worst_frc <= 1e-9 && worst_dot <= 1e-12, "%s: qfrc_actuator %.3g, act_dot %.3g", name, worst_frc, worst_dot);
  phys_free_data(pd);
  mj_deleteData(md);
}

// 1 s from qpos0 at rest with the fixed controls ctrl, MuJoCo's constraint solver off (joint limits too; the
// controls are chosen so that arm26 stays where its shoulder tendons' wrap is no tie: beyond ~150 degrees whether
// a path wraps is decided by rounding in both engines, test_oracle_dyn.c check_tendon_geometry):
// the largest qpos, qvel (relative to max(1, |qvel|)) and act differences over the steps into worst[3]
static void trajectory(const physModel* pm, mjModel* mm, const double* ctrl, double worst[3]) {
  physData* pd = phys_make_data(pm);
  mjData* md = mj_makeData(mm);
  mm->opt.disableflags |= mjDSBL_CONSTRAINT | mjDSBL_CONTACT | mjDSBL_LIMIT;
  memcpy(pd->ctrl, ctrl, sizeof(double) * (size_t)pm->nu);
  memcpy(md->ctrl, ctrl, sizeof(double) * (size_t)pm->nu);
  worst[0] = worst[1] = worst[2] = 0;
  int nstep = (int)lround(1.0 / pm->opt.timestep);
  for (int s = 0; s < nstep; s++) {
    phys_step(pm, pd);
    mj_step(mm, md);
    for (int i = 0; i < pm->nq; i++) worst[0] = fmax(worst[0], fabs(pd->qpos[i] - md->qpos[i]));
    for (int i = 0; i < pm->nv; i++) worst[1] = fmax(worst[1], fabs(pd->qvel[i] - md->qvel[i]) / fmax(1, fabs(md->qvel[i])));
    for (int i = 0; i < pm->na; i++) worst[2] = fmax(worst[2], fabs(pd->act[i] - md->act[i]));
  }
  CHECK_MSG(pd->nwarning == 0, "%d warnings, the last: %s", pd->nwarning, pd->lastwarning);
  phys_free_data(pd);
  mj_deleteData(md);
}

// physid's model of path with contacts and joint limits off (MuJoCo's solver is off in the comparison)
static physModel* load_free(const char* path) {
  physLog log;
  memset(&log, 0, sizeof(log));
  physModel* pm = phys_load_mjcf(path, &log);
  CHECK_MSG(pm != NULL, "%s: %s", path, log.error);
  if (pm) pm->opt.disableflags |= PHYS_DSBL_CONTACT | PHYS_DSBL_LIMIT;
  return pm;
}

// 2-3. arm26
static void check_arm26(void) {
  char err[1000] = "", path[] = "/tmp/physid_arm26_XXXXXX.xml";
  mjModel* mm = mj_loadXML(ARM26, NULL, err, sizeof(err));
  CHECK_MSG(mm != NULL, "%s", err);
  if (!mm) return;
  physModel* own = load_free(ARM26);
  CHECK(arm26_with_lengthrange(mm, path));
  physModel* pm = load_free(path);
  unlink(path);
  if (!own || !pm) goto done;
  CHECK(same_sizes(own, mm) && same_sizes(pm, mm));
  double dacc = 0, dlr = 0;
  for (int a = 0; a < mm->nu; a++) {
    dacc = fmax(dacc, rel(own->actuator_acc0[a], mm->actuator_acc0[a]));
    for (int k = 0; k < 2; k++) dlr = fmax(dlr, fabs(own->actuator_lengthrange[2 * a + k] - mm->actuator_lengthrange[2 * a + k]));
  }
  printf("arm26        acc0 %.1e relative; lengthrange (joint-range corners vs mj_setLengthRange) %.2e m\n", dacc, dlr);
  CHECK_MSG(dacc <= 1e-12, "acc0 differs by %.3g", dacc);
  CHECK_MSG(dlr <= 2e-4, "lengthrange differs by %.3g m", dlr);
  check_states("arm26", pm, mm);
  static const double CTRL[3][6] = {{0.3, 0.25, 0.3, 0.25, 0.2, 0.2}, {0.2, 0.35, 0.4, 0.3, 0.1, 0.2}, {1.0, 1.0, 0.0, 1.0, 0.3, 0.3}};
  for (int k = 0; k < 3; k++) {
    double w[3], wo[3];
    trajectory(pm, mm, CTRL[k], w);
    trajectory(own, mm, CTRL[k], wo);
    printf("arm26        ctrl set %d, 1 s: max |qpos diff| %.1e, qvel %.1e, act %.1e (own lengthrange: qpos %.1e, qvel %.1e)\n",
           k, w[0], w[1], w[2], wo[0], wo[1]);
    CHECK_MSG(w[0] <= 1e-9 && w[1] <= 1e-9 && w[2] <= 1e-9, "arm26 trajectory %d: %.3g %.3g %.3g", k, w[0], w[1], w[2]);
    // physid's own lengthrange (1.5e-4 m from MuJoCo's) moves the normalized length by up to ~1e-3: the
    // trajectory then drifts by millimetres, not more
    CHECK_MSG(wo[0] <= 5e-3 && wo[1] <= 1e-2, "arm26 trajectory %d with physid's lengthrange: %.3g %.3g", k, wo[0], wo[1]);
  }
done:
  phys_free_model(own);
  phys_free_model(pm);
  mj_deleteModel(mm);
}

// 2. slider_crank
static void check_slider(void) {
  char err[1000] = "";
  mjModel* mm = mj_loadXML(SLIDER, NULL, err, sizeof(err));
  CHECK_MSG(mm != NULL, "%s", err);
  physModel* pm = load_free(SLIDER);
  if (mm && pm) {
    CHECK(same_sizes(pm, mm));
    double dacc = 0;
    for (int a = 0; a < mm->nu; a++) dacc = fmax(dacc, rel(pm->actuator_acc0[a], mm->actuator_acc0[a]));
    check_states("slider_crank", pm, mm);
    static const double CTRL[2][3] = {{0.05, -0.08, 0.02}, {-0.1, 0.1, -0.03}};
    for (int k = 0; k < 2; k++) {
      double w[3];
      trajectory(pm, mm, CTRL[k], w);
      printf("slider_crank ctrl set %d, 1 s: max |qpos diff| %.1e, qvel %.1e\n", k, w[0], w[1]);
      CHECK_MSG(w[0] <= 1e-9 && w[1] <= 1e-9, "slider_crank trajectory %d: %.3g %.3g", k, w[0], w[1]);
    }
  }
  phys_free_model(pm);
  mj_deleteModel(mm);
}

int main(void) {
  if (access(ARM26, R_OK) != 0) {   // (ctest: SKIP_RETURN_CODE 77)
    printf("SKIP: libmujoco-samples is not installed\n");
    return 77;
  }
  phys_rng_seed(&rng, 2026);
  check_curves();
  check_arm26();
  check_slider();
  return test_done();
}
