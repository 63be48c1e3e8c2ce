// test_oracle_dyn_mj.c - MuJoCo 2.2.2 as the oracle of the dynamics layer, independent of the MJCF loader:
// each mjModel is converted to a physSpec (bodies, inertias, joints, sites, spatial tendons, motors) and
// M, qfrc_bias, qfrc_passive, qfrc_actuator and qacc (ABA) are compared at random states, with
// disableflags contact|constraint in MuJoCo.
#include <mujoco/mujoco.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "physid.h"
#include "spec.h"
#include "dyn/dyn.h"
#include "rng.h"
#include "test.h"

// the same model as a physSpec, compiled: explicit inertias, joints with MuJoCo's qpos0/qpos_spring,
// sites, spatial tendons through sites only (as springs), motors (gear times gainprm[0])
static physModel* convert(const mjModel* mm) {
  physSpec* s = phys_spec_new();
  s->opt.timestep = mm->opt.timestep;
  for (int i = 0; i < 3; i++) s->opt.gravity[i] = mm->opt.gravity[i];
  for (int b = 1; b < mm->nbody; b++) {
    int i = phys_spec_add_body(s, mm->body_parentid[b]);
    physSpecBody* sb = s->body + i;
    snprintf(sb->name, sizeof(sb->name), "b%d", b);
    memcpy(sb->pos, mm->body_pos + 3 * b, 24);
    memcpy(sb->quat, mm->body_quat + 4 * b, 32);
    sb->has_inertial = 1;
    sb->mass = mm->body_mass[b];
    memcpy(sb->ipos, mm->body_ipos + 3 * b, 24);
    memcpy(sb->iquat, mm->body_iquat + 4 * b, 32);
    memcpy(sb->inertia, mm->body_inertia + 3 * b, 24);
  }
  for (int j = 0; j < mm->njnt; j++) {
    int i = phys_spec_add_joint(s, mm->jnt_bodyid[j], mm->jnt_type[j]);
    physSpecJoint* sj = s->joint + i;
    snprintf(sj->name, sizeof(sj->name), "j%d", j);
    memcpy(sj->pos, mm->jnt_pos + 3 * j, 24);
    memcpy(sj->axis, mm->jnt_axis + 3 * j, 24);
    int qa = mm->jnt_qposadr[j], da = mm->jnt_dofadr[j];
    sj->ref = mm->qpos0[qa];
    sj->springref = mm->qpos_spring[qa];
    sj->stiffness = mm->jnt_stiffness[j];
    sj->damping = mm->dof_damping[da];
    sj->armature = mm->dof_armature[da];
  }
  for (int k = 0; k < mm->nsite; k++) {
    int i = phys_spec_add_site(s, mm->site_bodyid[k]);
    snprintf(s->site[i].name, PHYS_NAMELEN, "s%d", k);
    memcpy(s->site[i].pos, mm->site_pos + 3 * k, 24);
    memcpy(s->site[i].quat, mm->site_quat + 4 * k, 32);
  }
  for (int t = 0; t < mm->ntendon; t++) {
    int i = phys_spec_add_spring(s);
    physSpecSpring* sp = s->spring + i;
    snprintf(sp->name, PHYS_NAMELEN, "t%d", t);
    sp->nsite = mm->tendon_num[t];
    for (int k = 0; k < sp->nsite; k++) sp->site[k] = mm->wrap_objid[mm->tendon_adr[t] + k];
    sp->stiffness = mm->tendon_stiffness[t];
    sp->damping = mm->tendon_damping[t];
    sp->restlength = mm->tendon_lengthspring[t];
  }
  for (int a = 0; a < mm->nu; a++) {
    int i = phys_spec_add_actuator(s);
    physSpecActuator* sa = s->actuator + i;
    snprintf(sa->name, PHYS_NAMELEN, "a%d", a);
    int tendon = mm->actuator_trntype[a] == mjTRN_TENDON;
    sa->trntype = tendon ? PHYS_TRN_SPRING : PHYS_TRN_JOINT;
    snprintf(sa->target, PHYS_NAMELEN, tendon ? "t%d" : "j%d", mm->actuator_trnid[2 * a]);
    for (int k = 0; k < 6; k++) sa->gear[k] = mm->actuator_gear[6 * a + k] * mm->actuator_gainprm[mjNGAIN * a];
    sa->ctrllimited = mm->actuator_ctrllimited[a];
    memcpy(sa->ctrlrange, mm->actuator_ctrlrange + 2 * a, 16);
  }
  physLog log;
  memset(&log, 0, sizeof(log));
  physModel* m = phys_compile(s, &log);
  if (!m) printf("compile: %s\n", log.error);
  phys_spec_free(s);
  return m;
}

// max |a - b| / max |b|
static double relerr(const double* a, const double* b, int n) {
  double e = 0, s = 0;
  for (int i = 0; i < n; i++) {
    e = fmax(e, fabs(a[i] - b[i]));
    s = fmax(s, fabs(b[i]));
  }
  return e / fmax(s, 1e-300);
}

// random quaternions for ball/free joints, other coordinates around qpos0
static void random_state(const mjModel* mm, mjData* md, physRng* r) {
  for (int i = 0; i < mm->nq; i++) md->qpos[i] = mm->qpos0[i] + phys_rng_range(r, -0.5, 0.5);
  for (int j = 0; j < mm->njnt; j++) {
    int t = mm->jnt_type[j], qa = mm->jnt_qposadr[j] + (t == mjJNT_FREE ? 3 : 0);
    if (t == mjJNT_FREE || t == mjJNT_BALL) {
      for (int k = 0; k < 4; k++) md->qpos[qa + k] = phys_rng_range(r, -1, 1);
      mju_normalize4(md->qpos + qa);
    }
  }
  for (int i = 0; i < mm->nv; i++) md->qvel[i] = phys_rng_range(r, -2, 2);
  for (int i = 0; i < mm->nu; i++) md->ctrl[i] = phys_rng_range(r, -1.2, 1.2);
}

static void check_file(const char* file) {
  char err[1000];
  mjModel* mm = mj_loadXML(file, NULL, err, sizeof(err));
  CHECK_MSG(mm != NULL, "%s: %s", file, err);
  if (!mm) return;
  mm->opt.disableflags |= mjDSBL_CONTACT | mjDSBL_CONSTRAINT;
  mjData* md = mj_makeData(mm);
  physModel* m = convert(mm);
  CHECK(m != NULL);
  if (!m) return;
  physData* d = phys_make_data(m);
  physRng r;
  phys_rng_seed(&r, 1);
  int nv = mm->nv;
  double *M = malloc(sizeof(double) * nv * nv), *tau = malloc(sizeof(double) * nv), *qacc = malloc(sizeof(double) * nv);
  double worst[5] = {0};
  for (int trial = 0; trial < 20; trial++) {
    random_state(mm, md, &r);
    mj_forward(mm, md);
    memcpy(d->qpos, md->qpos, sizeof(double) * mm->nq);
    memcpy(d->qvel, md->qvel, sizeof(double) * nv);
    memcpy(d->ctrl, md->ctrl, sizeof(double) * mm->nu);
    phys_kinematics(m, d);
    phys_com_pos(m, d);
    phys_com_vel(m, d);
    phys_crb(m, d);
    phys_bias_forces(m, d);
    phys_passive(m, d);
    phys_actuation(m, d);
    mj_fullM(mm, M, md->qM);
    for (int i = 0; i < nv; i++) tau[i] = d->qfrc_passive[i] + d->qfrc_actuator[i];
    phys_aba(m, d, tau, NULL, qacc);
    double e[5] = {relerr(d->qM, M, nv * nv), relerr(d->qfrc_bias, md->qfrc_bias, nv),
                   relerr(d->qfrc_passive, md->qfrc_passive, nv), relerr(d->qfrc_actuator, md->qfrc_actuator, nv),
                   relerr(qacc, md->qacc, nv)};
    for (int k = 0; k < 5; k++) worst[k] = fmax(worst[k], e[k]);
  }
  printf("%s nv %d: rel err M %.2e bias %.2e passive %.2e actuator %.2e qacc %.2e\n", file, nv, worst[0], worst[1],
         worst[2], worst[3], worst[4]);
  CHECK_MSG(worst[0] < 1e-12, "%s: M", file);
  CHECK_MSG(worst[1] < 1e-12, "%s: qfrc_bias", file);
  CHECK_MSG(worst[2] < 1e-12, "%s: qfrc_passive", file);
  CHECK_MSG(worst[3] < 1e-12, "%s: qfrc_actuator", file);
  CHECK_MSG(worst[4] < 1e-10, "%s: qacc", file);
  free(M);
  free(tau);
  free(qacc);
  phys_free_data(d);
  phys_free_model(m);
  mj_deleteData(md);
  mj_deleteModel(mm);
}

int main(void) {
  check_file("/usr/share/mujoco/model/humanoid/humanoid.xml");
  check_file("models/arm7.xml");
  check_file("tests/data/mixed.xml");
  check_file("tests/data/chain3.xml");
  check_file("tests/data/freebody.xml");
  return test_done();
}
