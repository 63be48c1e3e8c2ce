// test_oracle_adhesion.c - MuJoCo 2.2.2 as the oracle of adhesion actuators (src/contact/adhesion.c, issue 15):
//  1. the reader: <adhesion> with a default class's <general> before it (MuJoCo clears the gain to [gain or 1, 0,
//     ...], no bias, no dynamics, ctrllimited with its ctrlrange, forcelimited read): physid's actuator arrays
//     equal MuJoCo's;
//  2. the generalized force at states where both engines find the same contacts: a ball pulled up to a ceiling
//     (1 contact), a box on the floor turned about z (4 corners), a ball resting on that box with adhesion on each
//     (the box's average over 5 contacts, two bodies pulled together): physid's qfrc_actuator (its step's, at the
//     start state) against MuJoCo's mj_forward, 1e-12 relative to the force;
//  3. a ball held under a ceiling for 0.3 s by adhesion (gain ctrl = 30 N > m g = 19.6 N) and released (ctrl 0):
//     physid holds it exactly, MuJoCo within its soft contact's give (bounded here), and both fall alike after
//     the release (the velocity 0.2 s later within what MuJoCo's contact softness at the release explains).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mujoco/mujoco.h>

#include "physid.h"
#include "test.h"

static char dir[] = "/tmp/physid_oracle_adhesion_XXXXXX";

// text written to dir/name; its path (static buffer)
static const char* put(const char* name, const char* text) {
  static char path[256];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE* f = fopen(path, "w");
  if (f) fputs(text, f), fclose(f);
  return path;
}

// both engines' models of text (exits the check on a load failure: NULL)
static int load_both(const char* text, physModel** pm, mjModel** mm) {
  const char* p = put("m.xml", text);
  physLog log;
  char err[1000] = "";
  *pm = phys_load(p, NULL, &log);
  *mm = mj_loadXML(p, NULL, err, sizeof err);
  CHECK_MSG(*pm && *mm, "physid: %s, MuJoCo: %s", *pm ? "" : log.error, err);
  return *pm && *mm;
}

static void check_reader(void) {
  physModel* m;
  mjModel* mm;
  if (!load_both("<mujoco><default><general gainprm='3 4 5' biasprm='1 2 3' dyntype='filter' dynprm='0.5'/></default>"
                 "<worldbody><geom type='plane' size='1 1 .1'/><body name='ball' pos='0.5 0 0.1'><joint type='slide' "
                 "axis='0 0 1'/><geom type='sphere' size='.1'/></body></worldbody><actuator>"
                 "<adhesion name='b' body='ball' ctrlrange='0 2'/><adhesion name='c' body='ball' ctrlrange='0.5 2' "
                 "gain='7' forcelimited='true' forcerange='-1 1'/></actuator></mujoco>", &m, &mm))
    return;
  CHECK(m->nu == mm->nu && m->na == mm->na);
  for (int a = 0; a < m->nu && a < mm->nu; a++) {
    CHECK(m->actuator_trntype[a] == PHYS_TRN_BODY && mm->actuator_trntype[a] == mjTRN_BODY);
    CHECK(m->actuator_trnid[a] == mm->actuator_trnid[2 * a]);
    CHECK(m->actuator_dyntype[a] == PHYS_DYN_NONE && mm->actuator_dyntype[a] == mjDYN_NONE);
    for (int i = 0; i < 3; i++) {
      CHECK_MSG(m->actuator_gainprm[3 * a + i] == mm->actuator_gainprm[mjNGAIN * a + i], "gainprm[%d] %g vs %g", i,
                m->actuator_gainprm[3 * a + i], mm->actuator_gainprm[mjNGAIN * a + i]);
      CHECK(m->actuator_biasprm[3 * a + i] == mm->actuator_biasprm[mjNBIAS * a + i]);
    }
    CHECK(m->actuator_ctrllimited[a] == mm->actuator_ctrllimited[a] && m->actuator_gear[6 * a] == mm->actuator_gear[6 * a]);
    CHECK(m->actuator_ctrlrange[2 * a] == mm->actuator_ctrlrange[2 * a] &&
          m->actuator_ctrlrange[2 * a + 1] == mm->actuator_ctrlrange[2 * a + 1]);
    CHECK(m->actuator_forcelimited[a] == mm->actuator_forcelimited[a]);
  }
  phys_free_model(m);
  mj_deleteModel(mm);
}

// 2. one state: qpos (nq) and ctrl in both engines; physid's step's qfrc_actuator against mj_forward's
static double compare_at(const char* what, const char* text, const double* qpos, const double* ctrl) {
  physModel* m;
  mjModel* mm;
  if (!load_both(text, &m, &mm)) return 1;
  physData* d = phys_make_data(m);
  mjData* md = mj_makeData(mm);
  memcpy(d->qpos, qpos, sizeof(double) * (size_t)m->nq);
  memcpy(md->qpos, qpos, sizeof(double) * (size_t)mm->nq);
  memcpy(d->ctrl, ctrl, sizeof(double) * (size_t)m->nu);
  memcpy(md->ctrl, ctrl, sizeof(double) * (size_t)mm->nu);
  mj_forward(mm, md);
  phys_step(m, d);
  double err = 0, scale = 0;
  for (int i = 0; i < m->nv; i++) {
    err = fmax(err, fabs(d->qfrc_actuator[i] - md->qfrc_actuator[i]));
    scale = fmax(scale, fabs(md->qfrc_actuator[i]));
  }
  CHECK_MSG(d->ncon == md->ncon, "%s: %d contacts, MuJoCo %d", what, d->ncon, md->ncon);
  CHECK_MSG(scale > 0 && err <= 1e-12 * scale, "%s: qfrc_actuator off by %.3g (scale %.3g)", what, err, scale);
  printf("%-34s %d contacts: qfrc_actuator vs MuJoCo %.1e (largest %.3g)\n", what, d->ncon, err / scale, scale);
  phys_free_data(d);
  mj_deleteData(md);
  phys_free_model(m);
  mj_deleteModel(mm);
  return err / scale;
}

static const char* BALL_CEILING =
    "<mujoco><option timestep='0.002'/><worldbody><geom type='plane' size='1 1 .1' pos='0 0 1' zaxis='0 0 -1'/>"
    "<body name='ball' pos='0 0 0.9001'><joint name='z' type='slide' axis='0 0 1'/><joint name='x' type='slide' "
    "axis='1 0 0'/><geom type='sphere' size='.1' mass='2'/></body></worldbody>"
    "<actuator><adhesion name='stick' body='ball' ctrlrange='0 1' gain='30'/></actuator></mujoco>";

static void check_forces(void) {
  double q1[2] = {0, 0.2}, c1[1] = {0.7};
  compare_at("ball under a ceiling", BALL_CEILING, q1, c1);
  const char* box =
      "<mujoco><worldbody><geom type='plane' size='1 1 .1'/><body name='box'><freejoint/><geom type='box' "
      "size='.05 .07 .04'/></body><body name='ball'><freejoint/><geom type='sphere' size='.03'/></body></worldbody>"
      "<actuator><adhesion name='b' body='box' ctrlrange='0 1' gain='8'/><adhesion name='s' body='ball' "
      "ctrlrange='0 1' gain='3'/></actuator></mujoco>";
  // the box turned by 0.3 about z at (0.3, -0.2), 0.1 mm into the floor; the ball far away, then on the box
  double c = cos(0.15), s = sin(0.15);
  double q2[14] = {0.3, -0.2, 0.0399, c, 0, 0, s, 2, 2, 0.5, 1, 0, 0, 0}, c2[2] = {0.6, 0.9};
  compare_at("box on the floor", box, q2, c2);
  double q3[14] = {0.3, -0.2, 0.0399, c, 0, 0, s, 0.31, -0.19, 0.1098, 1, 0, 0, 0};
  compare_at("ball on the box, box on the floor", box, q3, c2);
}

// 3. held then released (both engines from the same state, 150 steps at ctrl 1, then 100 at ctrl 0)
static void check_release(void) {
  physModel* m;
  mjModel* mm;
  if (!load_both(BALL_CEILING, &m, &mm)) return;
  physData* d = phys_make_data(m);
  mjData* md = mj_makeData(mm);
  double zmax = 0, zmj = 0, z0 = d->qpos[0];
  for (int k = 0; k < 250; k++) {
    d->ctrl[0] = md->ctrl[0] = k < 150 ? 1 : 0;
    phys_step(m, d);
    mj_step(mm, md);
    if (k < 150) zmax = fmax(zmax, fabs(d->qvel[0])), zmj = fmax(zmj, fabs(md->qpos[0] - z0));
  }
  double v = d->qvel[0], vmj = md->qvel[0], vfree = -9.81 * 0.2;
  printf("held 0.3 s: physid |v| <= %.1e, MuJoCo moves %.2e m (its soft contact); 0.2 s after the release v = %.6f, "
         "MuJoCo %.6f (free fall %.6f)\n", zmax, zmj, v, vmj, vfree);
  CHECK(zmax < 1e-12);
  CHECK_MSG(zmj < 2e-4, "MuJoCo's ball moved %g while held", zmj);
  CHECK_MSG(fabs(v - vfree) < 0.01 * fabs(vfree) && fabs(vmj - vfree) < 0.01 * fabs(vfree), "v %g, MuJoCo %g", v, vmj);
  phys_free_data(d);
  mj_deleteData(md);
  phys_free_model(m);
  mj_deleteModel(mm);
}

int main(void) {
  if (!mkdtemp(dir)) return 1;
  check_reader();
  check_forces();
  check_release();
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
  return test_done();
}
