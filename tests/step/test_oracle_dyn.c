// test_oracle_dyn.c - MuJoCo 2.2.2 as the oracle of the smooth dynamics and of the step.
//
// For each model, with MuJoCo's constraint solver (contacts, limits) disabled:
//  1. at >= 20 random states (qpos within joint ranges, random unit quaternions, random qvel, ctrl,
//     qfrc_applied and xfrc_applied): qM (mj_fullM), qfrc_bias, qfrc_passive, qfrc_actuator, qacc and the
//     energies (mj_energyPos/Vel) equal MuJoCo's to 1e-9 relative to the norm of the vector/matrix;
//  2. a 1 s trajectory from a random state with random constant ctrl: phys_step vs mj_step agree to 1e-6
//     (1e-9 on the actuator models tests/data/actuators.xml and actuator_dynamics.xml, act too) at every step,
//     in qpos as the tangent-space difference (phys_difference_pos; absolute: m and rad)
//     and in qvel relative to max(1, |qvel|).
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include <mujoco/mujoco.h>

#include "dyn.h"
#include "physid.h"
#include "test.h"

#define PI 3.14159265358979323846

#define NSTATE 24         // random states per model
#define TOL_DYN 1e-9      // relative to the norm of the reference vector/matrix
#define TOL_TRAJ 1e-6     // per component: qpos absolute (tangent), qvel relative to max(1, |qvel|)

//---------------------------------------------------------------------------------------------------------
// random numbers (splitmix64: fixed seed, same sequence on every machine)

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

// uniform in [0, 1)
static double rng_uniform(void) {
  uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return (double)(z >> 11) * 0x1.0p-53;
}

// uniform in [lo, hi)
static double rng_range(double lo, double hi) { return lo + (hi - lo) * rng_uniform(); }

// standard normal (Box-Muller)
static double rng_normal(void) {
  double u = rng_uniform(), v = rng_uniform();
  return sqrt(-2 * log(1 - u)) * cos(2 * PI * v);
}

// uniformly distributed unit quaternion (normalized 4-D Gaussian)
static void rng_quat(double q[4]) {
  double n = 0;
  for (int i = 0; i < 4; i++) {
    q[i] = rng_normal();
    n += q[i] * q[i];
  }
  n = sqrt(n);
  for (int i = 0; i < 4; i++) {
    q[i] /= n;
  }
}

//---------------------------------------------------------------------------------------------------------
// helpers

// ||a - b|| / max(||b||, 1e-12): the relative error of a against the reference b (n values)
static double rel_err(const double* a, const double* b, int n) {
  double e = 0, r = 0;
  for (int i = 0; i < n; i++) {
    e += (a[i] - b[i]) * (a[i] - b[i]);
    r += b[i] * b[i];
  }
  return sqrt(e) / fmax(sqrt(r), 1e-12);
}

// gunzip src into a new temporary file; returns its path in out (caller unlinks), 0 on failure
static int gunzip_temp(char out[64], const char* src) {
  snprintf(out, 64, "/tmp/physid_oracle_XXXXXX");
  int fd = mkstemp(out);
  gzFile in = gzopen(src, "rb");
  if (fd < 0 || !in) {
    return 0;
  }
  FILE* f = fdopen(fd, "wb");
  char buf[8192];
  int n;
  while ((n = gzread(in, buf, sizeof(buf))) > 0) {
    fwrite(buf, 1, (size_t)n, f);
  }
  gzclose(in);
  fclose(f);
  return 1;
}

// 1 if the two models have the same sizes and joint layout (the rest of the test relies on it)
static int same_layout(const physModel* pm, const mjModel* mm) {
  if (pm->nq != mm->nq || pm->nv != mm->nv || pm->nbody != mm->nbody || pm->njnt != mm->njnt ||
      pm->nu != mm->nu || pm->na != mm->na || pm->nspring != mm->ntendon) {
    return 0;
  }
  for (int j = 0; j < pm->njnt; j++) {
    if (pm->jnt_type[j] != mm->jnt_type[j] || pm->jnt_qposadr[j] != mm->jnt_qposadr[j] ||
        pm->jnt_dofadr[j] != mm->jnt_dofadr[j]) {
      return 0;
    }
  }
  return 1;
}

// random qpos within joint ranges (qpos0 +- 0.5 for unlimited slides and free positions, [-pi, pi] for
// unlimited hinges, uniform unit quaternions); random qvel in [-vmax, vmax]; random ctrl within 1.2x the
// control range (so clamping is exercised) or [-1, 1] when unlimited
static void random_state(const physModel* m, double* qpos, double* qvel, double* ctrl, double vmax) {
  for (int j = 0; j < m->njnt; j++) {
    double* q = qpos + m->jnt_qposadr[j];
    const double* q0 = m->qpos0 + m->jnt_qposadr[j];
    const double* r = m->jnt_range + 2 * j;
    switch (m->jnt_type[j]) {
      case PHYS_JNT_FREE:
        for (int i = 0; i < 3; i++) {
          q[i] = q0[i] + rng_range(-0.5, 0.5);
        }
        rng_quat(q + 3);
        break;
      case PHYS_JNT_BALL:
        rng_quat(q);
        break;
      case PHYS_JNT_SLIDE:
        q[0] = m->jnt_limited[j] ? rng_range(r[0], r[1]) : q0[0] + rng_range(-0.5, 0.5);
        break;
      default:
        q[0] = m->jnt_limited[j] ? rng_range(r[0], r[1]) : rng_range(-PI, PI);
        break;
    }
  }
  for (int i = 0; i < m->nv; i++) {
    qvel[i] = rng_range(-vmax, vmax);
  }
  for (int i = 0; i < m->nu; i++) {
    const double* cr = m->actuator_ctrlrange + 2 * i;
    double half = m->actuator_ctrllimited[i] ? 0.6 * (cr[1] - cr[0]) : 1;
    double mid = m->actuator_ctrllimited[i] ? 0.5 * (cr[0] + cr[1]) : 0;
    ctrl[i] = mid + rng_range(-half, half);
  }
}

// copy physid's state and inputs into MuJoCo's data
static void copy_state(const physModel* pm, const physData* pd, mjData* md) {
  memcpy(md->qpos, pd->qpos, sizeof(double) * (size_t)pm->nq);
  memcpy(md->qvel, pd->qvel, sizeof(double) * (size_t)pm->nv);
  memcpy(md->ctrl, pd->ctrl, sizeof(double) * (size_t)pm->nu);
  memcpy(md->act, pd->act, sizeof(double) * (size_t)pm->na);
  memcpy(md->qfrc_applied, pd->qfrc_applied, sizeof(double) * (size_t)pm->nv);
  memcpy(md->xfrc_applied, pd->xfrc_applied, sizeof(double) * 6 * (size_t)pm->nbody);
  md->time = pd->time;
}

//---------------------------------------------------------------------------------------------------------
// the two checks

// random states: M, bias, passive, actuator forces, qacc and energies against mj_forward
static void check_states(const char* name, const physModel* pm, physData* pd, mjModel* mm, mjData* md) {
  int nv = pm->nv;
  int nt = pm->nspring;
  double* M = calloc((size_t)nv * nv + 1, sizeof(double));
  double* moment = calloc((size_t)nt * nv + 1, sizeof(double));
  double worst[8] = {0}, worst_act_dot = 0;
  for (int k = 0; k < NSTATE; k++) {
    random_state(pm, pd->qpos, pd->qvel, pd->ctrl, 2.0);
    for (int i = 0; i < nv; i++) {
      pd->qfrc_applied[i] = rng_range(-1, 1);
    }
    for (int i = 6; i < 6 * pm->nbody; i++) {
      pd->xfrc_applied[i] = rng_range(-1, 1);
    }
    for (int i = 0; i < pm->na; i++) pd->act[i] = rng_range(-1, 1);
    copy_state(pm, pd, md);
    phys_forward(pm, pd);
    mj_forward(mm, md);
    mj_fullM(mm, M, md->qM);
    double e[8];
    double energy[2];
    // tendon lengths and moments dL/dq (phys_spring_eval's generalized force of tension -1; MuJoCo's ten_J)
    memset(moment, 0, sizeof(double) * (size_t)nt * nv);
    for (int t = 0; t < nt; t++) phys_spring_eval(pm, pd, t, NULL, -1, moment + (size_t)t * nv);
    e[6] = rel_err(pd->spring_length, md->ten_length, nt);
    e[7] = mj_isSparse(mm) ? 0 : rel_err(moment, md->ten_J, nt * nv);   // ten_J is dense below nv 60
    phys_energy(pm, pd, energy);
    e[0] = rel_err(pd->qM, M, nv * nv);
    e[1] = rel_err(pd->qfrc_bias, md->qfrc_bias, nv);
    e[2] = rel_err(pd->qfrc_passive, md->qfrc_passive, nv);
    e[3] = rel_err(pd->qfrc_actuator, md->qfrc_actuator, nv);
    e[4] = rel_err(pd->qacc, md->qacc, nv);
    e[5] = rel_err(energy, md->energy, 2);
    for (int i = 0; i < 8; i++) {
      worst[i] = fmax(worst[i], e[i]);
    }
    worst_act_dot = fmax(worst_act_dot, rel_err(pd->act_dot, md->act_dot, pm->na));
  }
  if (pm->na) {
    printf("%-14s %d states, act_dot worst relative error %.1e\n", name, NSTATE, worst_act_dot);
    CHECK_MSG(worst_act_dot <= TOL_DYN, "%s: act_dot rel err %.3g", name, worst_act_dot);
  }
  static const char* what[8] = {"qM", "qfrc_bias", "qfrc_passive", "qfrc_actuator", "qacc", "energy",
                                "ten_length", "ten_moment"};
  printf("%-14s %d states, worst relative error:", name, NSTATE);
  for (int i = 0; i < 8; i++) {
    printf(" %s %.1e", what[i], worst[i]);
    CHECK_MSG(worst[i] <= TOL_DYN, "%s: %s rel err %.3g > %.1g", name, what[i], worst[i], TOL_DYN);
  }
  printf("\n");
  free(M);
  free(moment);
}

// 1 s trajectory from a random state with random constant ctrl: phys_step vs mj_step. The two engines
// differ by rounding each step (qacc to ~1e-13 relative: ABA vs MuJoCo's LDL'), which the dynamics
// amplifies: on the humanoid in the air MuJoCo against itself with qvel scaled by (1 + 1e-15) already
// differs by up to 3e-8 in qvel after 1 s on some random states, so the humanoid's ~1e-7 here is
// sensitivity, not a model difference (PHYS_ORACLE_VERBOSE=1 prints the growth every 10 steps).
static void check_trajectory(const char* name, const physModel* pm, physData* pd, mjModel* mm,
                             mjData* md, double tol) {
  int nq = pm->nq, nv = pm->nv;
  double* dq = calloc((size_t)nv + 1, sizeof(double));
  phys_reset_data(pm, pd);
  mj_resetData(mm, md);
  random_state(pm, pd->qpos, pd->qvel, pd->ctrl, 1.0);
  for (int i = 0; i < pm->na; i++) pd->act[i] = rng_range(-1, 1);
  copy_state(pm, pd, md);
  int nstep = (int)lround(1.0 / pm->opt.timestep);
  double worst_q = 0, worst_v = 0, worst_a = 0;
  int nwarn0 = pd->nwarning;
  for (int s = 0; s < nstep; s++) {
    phys_step(pm, pd);
    mj_step(mm, md);
    // tangent-space position difference and velocity difference, relative to max(1, |value|)
    phys_difference_pos(pm, dq, 1.0, md->qpos, pd->qpos);
    for (int i = 0; i < nv; i++) {
      worst_q = fmax(worst_q, fabs(dq[i]));
      worst_v = fmax(worst_v, fabs(pd->qvel[i] - md->qvel[i]) / fmax(1, fabs(md->qvel[i])));
    }
    for (int i = 0; i < pm->na; i++) worst_a = fmax(worst_a, fabs(pd->act[i] - md->act[i]) / fmax(1, fabs(md->act[i])));
    if (getenv("PHYS_ORACLE_VERBOSE") && s % 10 == 9) {
      printf("  step %4d: max |qpos diff| %.2e, max qvel diff %.2e\n", s + 1, worst_q, worst_v);
    }
    for (int i = 0; i < nq; i++) {
      if (!isfinite(pd->qpos[i])) {
        worst_q = INFINITY;
      }
    }
  }
  printf("%-14s %d steps of %g s: max |qpos diff| %.1e, max qvel diff %.1e, time %g vs %g\n", name, nstep,
         pm->opt.timestep, worst_q, worst_v, pd->time, md->time);
  CHECK_MSG(worst_q <= tol, "%s: trajectory qpos diff %.3g > %.1g", name, worst_q, tol);
  CHECK_MSG(worst_v <= tol, "%s: trajectory qvel diff %.3g > %.1g", name, worst_v, tol);
  if (pm->na) printf("%-14s max act diff %.1e\n", name, worst_a);
  CHECK_MSG(worst_a <= tol, "%s: trajectory act diff %.3g > %.1g", name, worst_a, tol);
  CHECK_NEAR(pd->time, md->time, 1e-12);
  CHECK(pd->nwarning == nwarn0);
  free(dq);
}

// load one model in both engines and run both checks (trajectory tolerance tol)
static void check_model(const char* name, const char* path, double tol) {
  char err[1024] = "";
  physLog log;
  memset(&log, 0, sizeof(log));
  mjModel* mm = mj_loadXML(path, NULL, err, sizeof(err));
  physModel* pm = phys_load_mjcf(path, &log);
  CHECK_MSG(mm != NULL, "%s: MuJoCo: %s", path, err);
  CHECK_MSG(pm != NULL, "%s: physid: %s", path, log.error);
  if (!mm || !pm) {
    mj_deleteModel(mm);
    phys_free_model(pm);
    return;
  }
  mm->opt.disableflags |= mjDSBL_CONSTRAINT | mjDSBL_CONTACT | mjDSBL_LIMIT;
  pm->opt.disableflags |= PHYS_DSBL_CONTACT | PHYS_DSBL_LIMIT;   // the same unconstrained step
  mm->opt.enableflags |= mjENBL_ENERGY;
  int layout = same_layout(pm, mm);
  CHECK_MSG(layout, "%s: physid and MuJoCo models differ in sizes or joint layout", name);
  CHECK_NEAR(pm->opt.timestep, mm->opt.timestep, 0);
  if (layout) {
    physData* pd = phys_make_data(pm);
    mjData* md = mj_makeData(mm);
    check_states(name, pm, pd, mm, md);
    check_trajectory(name, pm, pd, mm, md, tol);
    phys_free_data(pd);
    mj_deleteData(md);
  }
  phys_free_model(pm);
  mj_deleteModel(mm);
}

// a model whose actuators physid does not build (arm26's muscles, warned about): the tendons' lengths and
// moments along physid's own 1 s motion from a random state (contacts off, joint limits on, ctrl 0) against
// mj_forward at the same positions, to tol absolute (m; moments m per rad). The limits keep arm26 in its joint
// ranges: beyond them (shoulder past ~150 degrees) the straight path's point nearest the shoulder cylinder is
// s0, which its side site x0 sees at exactly 90 degrees, so whether the path wraps is a tie that rounding
// decides, in MuJoCo as in physid (wrap.h: the side point's dot product with that nearest point is 0).
// a copy of the MJCF file src without its <actuator> section, written to out (a mkstemps template): arm26's
// muscles are refused by physid (issue 15 item 2), its tendons are what check_tendon_geometry compares.
// 1 on success.
static int copy_without_actuators(const char* src, char* out) {
  FILE* f = fopen(src, "rb");
  if (!f) return 0;
  static char text[1 << 16];
  size_t n = fread(text, 1, sizeof(text) - 1, f);
  fclose(f);
  text[n] = 0;
  char *a = strstr(text, "<actuator>"), *b = a ? strstr(a, "</actuator>") : NULL;
  if (!a || !b) return 0;
  int fd = mkstemps(out, 4);
  if (fd < 0) return 0;
  FILE* g = fdopen(fd, "wb");
  int ok = g && fwrite(text, 1, (size_t)(a - text), g) == (size_t)(a - text) && fputs(b + strlen("</actuator>"), g) >= 0;
  if (g) fclose(g);
  return ok;
}

static void check_tendon_geometry(const char* name, const char* file, double tol) {
  char err[1024] = "", path[] = "/tmp/physid_oracle_XXXXXX.xml";
  physLog log;
  memset(&log, 0, sizeof(log));
  CHECK_MSG(copy_without_actuators(file, path), "%s: cannot copy %s without its actuators", name, file);
  mjModel* mm = mj_loadXML(path, NULL, err, sizeof(err));
  physModel* pm = phys_load_mjcf(path, &log);
  unlink(path);
  CHECK_MSG(mm && pm, "%s: %s / %s", name, err, log.error);
  if (!mm || !pm) {
    mj_deleteModel(mm);
    phys_free_model(pm);
    return;
  }
  CHECK(pm->nq == mm->nq && pm->nv == mm->nv && pm->nspring == mm->ntendon && pm->nspringsite == mm->nwrap);
  int nv = pm->nv, nt = pm->nspring;
  pm->opt.disableflags |= PHYS_DSBL_CONTACT;
  physData* pd = phys_make_data(pm);
  mjData* md = mj_makeData(mm);
  double* J = calloc((size_t)nv + 1, sizeof(double));
  double ctrl[64];
  random_state(pm, pd->qpos, pd->qvel, ctrl, 2.0);
  double worst_l = 0, worst_j = 0, lmin = INFINITY, lmax = -INFINITY;
  int nstep = (int)lround(1.0 / pm->opt.timestep);
  for (int s = 0; s <= nstep; s++) {
    memcpy(md->qpos, pd->qpos, sizeof(double) * (size_t)pm->nq);
    mj_forward(mm, md);
    phys_forward(pm, pd);
    for (int t = 0; t < nt; t++) {
      worst_l = fmax(worst_l, fabs(pd->spring_length[t] - md->ten_length[t]));
      lmin = fmin(lmin, pd->spring_length[t]), lmax = fmax(lmax, pd->spring_length[t]);
      memset(J, 0, sizeof(double) * (size_t)nv);
      phys_spring_eval(pm, pd, t, NULL, -1, J);
      for (int i = 0; i < nv && !mj_isSparse(mm); i++) worst_j = fmax(worst_j, fabs(J[i] - md->ten_J[t * nv + i]));
    }
    if (s < nstep) phys_step(pm, pd);
  }
  printf("%-14s %d tendons over %d steps (lengths %.3f .. %.3f m): max |ten_length diff| %.1e, max |ten_J diff| %.1e\n",
         name, nt, nstep, lmin, lmax, worst_l, worst_j);
  CHECK_MSG(worst_l <= tol && worst_j <= tol, "%s: tendon geometry differs: %.3g, %.3g > %.1g", name, worst_l, worst_j, tol);
  free(J);
  phys_free_data(pd);
  mj_deleteData(md);
  phys_free_model(pm);
  mj_deleteModel(mm);
}

// the SUPERball tensegrity (issue 16: models/superball.xml, superball_fixed.xml, the filter actuators on its 24
// cables): from the model's pose with random rod velocities in [-0.5, 0.5] and new random controls in [-0.5, 0.5]
// every 100 steps (the data generator's excitation), contacts off, 1 s (1000 steps) of phys_step against
// mj_step: qpos (tangent), qvel (relative to max(1, |qvel|)) and act to tol at every step. (The generic
// check_trajectory starts from random rod orientations, where the 10,000 N/m cables stretch by metres.)
static void check_superball(const char* path, double tol) {
  char err[1024] = "";
  physLog log;
  memset(&log, 0, sizeof(log));
  mjModel* mm = mj_loadXML(path, NULL, err, sizeof(err));
  physModel* pm = phys_load_mjcf(path, &log);
  CHECK_MSG(mm != NULL && pm != NULL, "%s: MuJoCo: %s; physid: %s", path, err, log.error);
  if (!mm || !pm || !same_layout(pm, mm)) {
    CHECK_MSG(0, "%s: the two engines' layouts differ", path);
    mj_deleteModel(mm);
    phys_free_model(pm);
    return;
  }
  mm->opt.disableflags |= mjDSBL_CONSTRAINT | mjDSBL_CONTACT | mjDSBL_LIMIT;
  pm->opt.disableflags |= PHYS_DSBL_CONTACT | PHYS_DSBL_LIMIT;
  physData* pd = phys_make_data(pm);
  mjData* md = mj_makeData(mm);
  for (int i = 0; i < pm->nv; i++) pd->qvel[i] = rng_range(-0.5, 0.5);
  double* dq = calloc((size_t)pm->nv, sizeof(double));
  double worst_q = 0, worst_v = 0, worst_a = 0;
  for (int s = 0; s < 1000; s++) {
    if (s % 100 == 0)
      for (int i = 0; i < pm->nu; i++) pd->ctrl[i] = rng_range(-0.5, 0.5);
    if (s == 0) copy_state(pm, pd, md);   // the same start; afterwards each engine runs its own state
    memcpy(md->ctrl, pd->ctrl, sizeof(double) * (size_t)pm->nu);
    phys_step(pm, pd);
    mj_step(mm, md);
    phys_difference_pos(pm, dq, 1.0, md->qpos, pd->qpos);
    for (int i = 0; i < pm->nv; i++) {
      worst_q = fmax(worst_q, isfinite(dq[i]) ? fabs(dq[i]) : INFINITY);
      worst_v = fmax(worst_v, fabs(pd->qvel[i] - md->qvel[i]) / fmax(1, fabs(md->qvel[i])));
    }
    for (int i = 0; i < pm->na; i++) worst_a = fmax(worst_a, fabs(pd->act[i] - md->act[i]) / fmax(1, fabs(md->act[i])));
  }
  printf("%-14s 1000 steps: max |qpos diff| %.1e, max qvel diff %.1e, max act diff %.1e\n", path, worst_q, worst_v,
         worst_a);
  CHECK_MSG(worst_q <= tol && worst_v <= tol && worst_a <= tol, "%s: trajectory differs: qpos %.3g qvel %.3g act %.3g",
            path, worst_q, worst_v, worst_a);
  free(dq);
  phys_free_data(pd);
  mj_deleteData(md);
  phys_free_model(pm);
  mj_deleteModel(mm);
}

int main(void) {
  char cheetah[64];
  int have_cheetah = gunzip_temp(cheetah, "/usr/share/doc/dart/data/mjcf/openai/half_cheetah.xml.gz");
  CHECK(have_cheetah);
  check_model("humanoid", "/usr/share/mujoco/model/humanoid/humanoid.xml", TOL_TRAJ);
  if (have_cheetah) {
    check_model("half_cheetah", cheetah, TOL_TRAJ);
    unlink(cheetah);
  }
  check_model("arm7", "models/arm7.xml", TOL_TRAJ);
  check_model("pendulum", "tests/data/pendulum.xml", TOL_TRAJ);
  check_model("freebody", "tests/data/freebody.xml", TOL_TRAJ);
  check_model("chain3", "tests/data/chain3.xml", TOL_TRAJ);
  check_model("springmass", "tests/data/springmass.xml", TOL_TRAJ);
  check_model("mixed", "tests/data/mixed.xml", TOL_TRAJ);
  check_model("double_pendulum", "tests/data/double_pendulum.xml", TOL_TRAJ);
  // motor, position, velocity and affine <general> actuators: gain and bias as MuJoCo's, the trajectory to 1e-9
  check_model("actuators", "tests/data/actuators.xml", 1e-9);
  // fixed tendons (springs, dampers, springlength at springref, actuators on them) beside a spatial one
  check_model("tendons_fixed", "tests/data/tendons_fixed.xml", 1e-9);
  // spatial tendons wrapping spheres and cylinders (side sites, a helix), a pulley, springs, motors on them
  check_model("tendons_wrap", "tests/data/tendons_wrap.xml", 1e-9);
  // MuJoCo's arm26: six tendons wrapping two cylinders with and without side sites (its muscles are refused:
  // both engines load it without its <actuator> section)
  check_tendon_geometry("arm26", "/usr/share/mujoco/model/tendon_arm/arm26.xml", 1e-12);
  // integrator and filter dynamics (act in the state), activation, control and force ranges, site transmissions
  // with 6-entry gears (issue 15 item 2): the trajectory and act to 1e-9
  check_model("actuator_dyn", "tests/data/actuator_dynamics.xml", 1e-9);
  check_model("actuator_site", "tests/data/actuator_site.xml", 1e-9);
  check_model("actuator_damper", "tests/data/actuator_damper.xml", 1e-9);   // (damper, intvelocity)
  // the SUPERball tensegrity (issue 16): six free rods, 24 cable tendons with filter actuators; and the
  // non-contact set's variant with rod r0 welded to the world
  check_superball("models/superball.xml", 1e-9);
  check_superball("models/superball_fixed.xml", 1e-9);
  return test_done();
}
