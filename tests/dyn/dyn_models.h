// dyn_models.h - test models built with the spec API and random states for the tests of src/dyn.
#ifndef PHYS_DYN_MODELS_H
#define PHYS_DYN_MODELS_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dyn/dyn.h"
#include "spatial.h"
#include "physid.h"
#include "rng.h"
#include "rot.h"
#include "spec.h"

// random unit quaternion (not uniform; good enough for tests)
static inline void tm_rand_quat(physRng* r, double q[4]) {
  for (int i = 0; i < 4; i++) q[i] = phys_rng_range(r, -1, 1);
  phys_quat_normalize(q);
}

// random vector in [-s, s]^3
static inline void tm_rand3(physRng* r, double v[3], double s) {
  for (int i = 0; i < 3; i++) v[i] = phys_rng_range(r, -s, s);
}

// body with explicit random inertial properties (mass in [0.5, 2], principal moments satisfy the
// triangle inequality)
static inline int tm_body(physSpec* s, physRng* r, int parent, double px, double py, double pz) {
  int b = phys_spec_add_body(s, parent);
  physSpecBody* sb = s->body + b;
  snprintf(sb->name, sizeof(sb->name), "b%d", b);
  sb->pos[0] = px;
  sb->pos[1] = py;
  sb->pos[2] = pz;
  tm_rand_quat(r, sb->quat);
  sb->has_inertial = 1;
  sb->mass = phys_rng_range(r, 0.5, 2);
  tm_rand3(r, sb->ipos, 0.2);
  tm_rand_quat(r, sb->iquat);
  double a = phys_rng_range(r, 0.01, 0.05), bb = phys_rng_range(r, 0.01, 0.05);
  sb->inertia[0] = a;
  sb->inertia[1] = bb;
  sb->inertia[2] = phys_rng_range(r, fabs(a - bb) + 0.001, a + bb);
  return b;
}

// joint with random anchor and axis, named j<index>
static inline int tm_joint(physSpec* s, physRng* r, int body, int type) {
  int j = phys_spec_add_joint(s, body, type);
  physSpecJoint* sj = s->joint + j;
  snprintf(sj->name, sizeof(sj->name), "j%d", j);
  if (type != PHYS_JNT_FREE) tm_rand3(r, sj->pos, 0.1);
  tm_rand3(r, sj->axis, 1);
  sj->ref = type == PHYS_JNT_HINGE || type == PHYS_JNT_SLIDE ? phys_rng_range(r, -0.3, 0.3) : 0;
  return j;
}

// compile or die
static inline physModel* tm_compile(physSpec* s) {
  physLog log;
  memset(&log, 0, sizeof(log));
  physModel* m = phys_compile(s, &log);
  if (!m) {
    fprintf(stderr, "compile failed: %s\n", log.error);
    exit(2);
  }
  phys_spec_free(s);
  return m;
}

// single pendulum: hinge about y at the origin, point-like bob of mass 1.5 at distance 0.7 below
static inline physModel* tm_pendulum(void) {
  physSpec* s = phys_spec_new();
  int b = phys_spec_add_body(s, 0);
  physSpecBody* sb = s->body + b;
  sb->has_inertial = 1;
  sb->mass = 1.5;
  sb->ipos[2] = -0.7;
  sb->inertia[0] = sb->inertia[1] = sb->inertia[2] = 1e-3;
  int j = phys_spec_add_joint(s, b, PHYS_JNT_HINGE);
  s->joint[j].axis[0] = 0;
  s->joint[j].axis[1] = 1;
  s->joint[j].axis[2] = 0;
  return tm_compile(s);
}

// double pendulum with random inertias, hinges with random axes/anchors
static inline physModel* tm_double_pendulum(uint64_t seed) {
  physRng r;
  phys_rng_seed(&r, seed);
  physSpec* s = phys_spec_new();
  int b1 = tm_body(s, &r, 0, 0, 0, 1);
  tm_joint(s, &r, b1, PHYS_JNT_HINGE);
  int b2 = tm_body(s, &r, b1, 0.1, 0.05, -0.5);
  tm_joint(s, &r, b2, PHYS_JNT_HINGE);
  return tm_compile(s);
}

// humanoid-like tree: free root; a 2-hinge abdomen; two legs with 3-hinge thighs (different anchors),
// a slide shin and a ball foot; an arm with a ball shoulder and a hinge elbow; a body without joints.
// Random inertias, placements, axes; joint stiffness, damping, armature; sites, two springs, actuators.
static inline physModel* tm_tree(uint64_t seed, int with_free) {
  physRng r;
  phys_rng_seed(&r, seed);
  physSpec* s = phys_spec_new();
  int root = tm_body(s, &r, 0, 0.1, -0.2, 1.2);
  if (with_free) tm_joint(s, &r, root, PHYS_JNT_FREE);
  int abd = tm_body(s, &r, root, 0, 0, -0.3);
  tm_joint(s, &r, abd, PHYS_JNT_HINGE);
  tm_joint(s, &r, abd, PHYS_JNT_HINGE);
  for (int leg = 0; leg < 2; leg++) {
    int th = tm_body(s, &r, abd, 0, leg ? 0.1 : -0.1, -0.2);
    for (int k = 0; k < 3; k++) tm_joint(s, &r, th, PHYS_JNT_HINGE);
    int shin = tm_body(s, &r, th, 0, 0.01, -0.4);
    tm_joint(s, &r, shin, PHYS_JNT_SLIDE);
    int foot = tm_body(s, &r, shin, 0.05, 0, -0.4);
    tm_joint(s, &r, foot, PHYS_JNT_BALL);
    int site = phys_spec_add_site(s, foot);
    snprintf(s->site[site].name, PHYS_NAMELEN, "foot%d", leg);
    tm_rand3(&r, s->site[site].pos, 0.1);
  }
  int arm = tm_body(s, &r, root, 0.2, 0.2, 0.1);
  tm_joint(s, &r, arm, PHYS_JNT_BALL);
  int fore = tm_body(s, &r, arm, 0.3, 0, 0);
  tm_joint(s, &r, fore, PHYS_JNT_HINGE);
  int hand = tm_body(s, &r, fore, 0.25, 0, 0);  // welded, no joint
  int site = phys_spec_add_site(s, hand);
  snprintf(s->site[site].name, PHYS_NAMELEN, "hand");
  tm_rand3(&r, s->site[site].pos, 0.1);
  site = phys_spec_add_site(s, 0);
  snprintf(s->site[site].name, PHYS_NAMELEN, "world");
  s->site[site].pos[2] = 2;
  site = phys_spec_add_site(s, root);
  snprintf(s->site[site].name, PHYS_NAMELEN, "root");
  tm_rand3(&r, s->site[site].pos, 0.1);

  // joint springs, dampers, armature
  for (int j = 0; j < s->njoint; j++) {
    s->joint[j].stiffness = phys_rng_range(&r, 0.5, 5);
    s->joint[j].damping = phys_rng_range(&r, 0.1, 1);
    s->joint[j].armature = phys_rng_range(&r, 0.01, 0.1);
    s->joint[j].springref = phys_rng_range(&r, -0.3, 0.3);
  }
  // springs: world -> hand; foot0 -> root -> foot1 (3-site path)
  int sp = phys_spec_add_spring(s);
  snprintf(s->spring[sp].name, PHYS_NAMELEN, "s0");
  s->spring[sp].nsite = 2;
  s->spring[sp].site[0] = 3;  // world
  s->spring[sp].site[1] = 2;  // hand
  s->spring[sp].stiffness = 20;
  s->spring[sp].damping = 0.7;
  s->spring[sp].restlength = 0.5;
  sp = phys_spec_add_spring(s);
  snprintf(s->spring[sp].name, PHYS_NAMELEN, "s1");
  s->spring[sp].nsite = 3;
  s->spring[sp].site[0] = 0;
  s->spring[sp].site[1] = 4;
  s->spring[sp].site[2] = 1;
  s->spring[sp].stiffness = 15;
  s->spring[sp].damping = 0.4;
  s->spring[sp].restlength = 0.8;
  // actuators: motors on the first joint of each type (free gear 6-D, ball gear 3-D), a motor on spring
  // s0 and a rest-length actuator on spring s1; controls limited to [-1, 1]
  for (int t = PHYS_JNT_FREE; t <= PHYS_JNT_HINGE; t++) {
    int j = 0;
    while (j < s->njoint && s->joint[j].type != t) j++;
    if (j == s->njoint) continue;
    int a = phys_spec_add_actuator(s);
    snprintf(s->actuator[a].target, PHYS_NAMELEN, "%s", s->joint[j].name);
    snprintf(s->actuator[a].name, PHYS_NAMELEN, "a%d", a);
    for (int k = 0; k < 6; k++) s->actuator[a].gear[k] = phys_rng_range(&r, 0.5, 2);
    s->actuator[a].ctrllimited = 1;
    s->actuator[a].ctrlrange[0] = -1;
    s->actuator[a].ctrlrange[1] = 1;
  }
  for (int k = 0; k < 2; k++) {
    int a = phys_spec_add_actuator(s);
    snprintf(s->actuator[a].name, PHYS_NAMELEN, "a%d", a);
    snprintf(s->actuator[a].target, PHYS_NAMELEN, "s%d", k);
    s->actuator[a].trntype = k ? PHYS_TRN_RESTLENGTH : PHYS_TRN_SPRING;
    s->actuator[a].gear[0] = k ? 0.3 : 2.5;
    s->actuator[a].ctrllimited = 1;
    s->actuator[a].ctrlrange[0] = -1;
    s->actuator[a].ctrlrange[1] = 1;
  }
  return tm_compile(s);
}

// hinge/slide tree (no quaternions: Lagrange's equations in plain coordinates); multi-hinge bodies
static inline physModel* tm_hinge_tree(uint64_t seed) {
  physRng r;
  phys_rng_seed(&r, seed);
  physSpec* s = phys_spec_new();
  int root = tm_body(s, &r, 0, 0, 0, 1);
  tm_joint(s, &r, root, PHYS_JNT_SLIDE);
  tm_joint(s, &r, root, PHYS_JNT_HINGE);
  int a = tm_body(s, &r, root, 0.1, 0, -0.3);
  for (int k = 0; k < 3; k++) tm_joint(s, &r, a, PHYS_JNT_HINGE);
  int b = tm_body(s, &r, a, 0, 0.2, -0.3);
  tm_joint(s, &r, b, PHYS_JNT_HINGE);
  tm_joint(s, &r, b, PHYS_JNT_SLIDE);
  int c = tm_body(s, &r, root, 0.2, -0.1, 0);
  tm_joint(s, &r, c, PHYS_JNT_HINGE);
  tm_body(s, &r, c, 0.2, 0, 0);  // welded
  for (int j = 0; j < s->njoint; j++) s->joint[j].armature = phys_rng_range(&r, 0.01, 0.1);
  return tm_compile(s);
}

// random state: qpos around qpos0 (quaternions random), qvel in [-v, v]
static inline void tm_rand_state(const physModel* m, physData* d, physRng* r, double v) {
  for (int j = 0; j < m->njnt; j++) {
    double* q = d->qpos + m->jnt_qposadr[j];
    const double* q0 = m->qpos0 + m->jnt_qposadr[j];
    switch (m->jnt_type[j]) {
      case PHYS_JNT_FREE:
        for (int i = 0; i < 3; i++) q[i] = q0[i] + phys_rng_range(r, -0.5, 0.5);
        tm_rand_quat(r, q + 3);
        break;
      case PHYS_JNT_BALL:
        tm_rand_quat(r, q);
        break;
      default:
        q[0] = q0[0] + phys_rng_range(r, -1, 1);
    }
  }
  for (int i = 0; i < m->nv; i++) d->qvel[i] = phys_rng_range(r, -v, v);
}

// run the position and velocity stages
static inline void tm_forward_kin(const physModel* m, physData* d) {
  phys_kinematics(m, d);
  phys_com_pos(m, d);
  phys_com_vel(m, d);
}

#endif  // PHYS_DYN_MODELS_H
