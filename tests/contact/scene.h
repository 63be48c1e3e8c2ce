// scene.h - helpers of the contact validation scenes (tests/contact/test_scene_*.c): load a scene from
// tests/data/contact, choose the contact model through the API, step, and measure bodies, momentum, energy.
#ifndef PHYS_TEST_SCENE_H
#define PHYS_TEST_SCENE_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collision.h"
#include "physid.h"
#include "test.h"

#define SCENE_G 9.81   // |gravity| of every scene (MJCF default)

// load a model (path relative to the source tree: tests run there, or $PHYS_SOURCE) with the contact model
// `contact`; NULL (and a failed check) if it does not load
static inline physModel* scene_load(const char* path, int contact) {
  char file[1024];
  const char* src = getenv("PHYS_SOURCE");
  if (path[0] == '/' || !src) snprintf(file, sizeof file, "%s", path);
  else snprintf(file, sizeof file, "%s/%s", src, path);
  physLog log;
  memset(&log, 0, sizeof log);
  physModel* m = phys_load(file, NULL, &log);
  CHECK_MSG(m != NULL, "cannot load %s: %s", file, log.error);
  if (m) m->opt.contact = contact;
  return m;
}

// 1 if qpos and qvel are finite
static inline int scene_finite(const physModel* m, const physData* d) {
  for (int i = 0; i < m->nq; i++)
    if (!isfinite(d->qpos[i])) return 0;
  for (int i = 0; i < m->nv; i++)
    if (!isfinite(d->qvel[i])) return 0;
  return 1;
}

// total mechanical energy: potential (gravity, springs) + kinetic, and for the penalty model the energy
// stored in its contact springs, sum 0.5 k_c min(dist, 0)^2 over the contacts at the current positions
// (it turns back into motion: without it a box rising off its compressed springs would seem to gain energy).
// For penalty this re-runs collision detection, which only changes d->contact (penalty has no warm start).
static inline double scene_energy(const physModel* m, physData* d) {
  double e[2], spring = 0;
  phys_energy(m, d, e);
  if (m->opt.contact == PHYS_CONTACT_PENALTY && !(m->opt.disableflags & PHYS_DSBL_CONTACT)) {
    phys_kinematics(m, d);
    phys_collision(m, d);
    for (int i = 0; i < d->ncon; i++) {
      double x = fmin(d->contact[i].dist, 0.0);
      spring += 0.5 * m->opt.penalty_stiffness * x * x;
    }
  }
  return e[0] + e[1] + spring;
}

// qpos / qvel address of the free joint of body b
static inline int scene_qadr(const physModel* m, int b) { return m->jnt_qposadr[m->body_jntadr[b]]; }
static inline int scene_vadr(const physModel* m, int b) { return m->jnt_dofadr[m->body_jntadr[b]]; }

// body id by name, checked
static inline int scene_body(const physModel* m, const char* name) {
  int b = phys_name2id(m, "body", name);
  CHECK_MSG(b > 0, "no body '%s'", name);
  return b > 0 ? b : 1;
}

// world velocity of the centre of mass of free body b: v_origin + (R w_body) x (xipos - xpos)
// (needs kinematics)
static inline void scene_com_vel(double v[3], double w[3], const physModel* m, const physData* d, int b) {
  const double* qv = d->qvel + scene_vadr(m, b);
  const double* R = d->xmat + 9 * b;
  for (int i = 0; i < 3; i++) w[i] = R[3 * i] * qv[3] + R[3 * i + 1] * qv[4] + R[3 * i + 2] * qv[5];
  double r[3] = {d->xipos[3 * b] - d->xpos[3 * b], d->xipos[3 * b + 1] - d->xpos[3 * b + 1],
                 d->xipos[3 * b + 2] - d->xpos[3 * b + 2]};
  v[0] = qv[0] + w[1] * r[2] - w[2] * r[1];
  v[1] = qv[1] + w[2] * r[0] - w[0] * r[2];
  v[2] = qv[2] + w[0] * r[1] - w[1] * r[0];
}

// linear momentum p = sum m v_com and angular momentum about the world origin
// L = sum m xipos x v_com + R_i I R_i' w of all free bodies (needs kinematics)
static inline void scene_momentum(double p[3], double L[3], const physModel* m, const physData* d) {
  memset(p, 0, 3 * sizeof(double));
  memset(L, 0, 3 * sizeof(double));
  for (int b = 1; b < m->nbody; b++) {
    if (m->body_jntnum[b] != 1 || m->jnt_type[m->body_jntadr[b]] != PHYS_JNT_FREE) continue;
    double v[3], w[3], mass = m->body_mass[b];
    scene_com_vel(v, w, m, d, b);
    const double* c = d->xipos + 3 * b;
    const double* Ri = d->ximat + 9 * b;
    const double* I = m->body_inertia + 3 * b;
    double wl[3], Iw[3];   // w in the principal frame, then back: R I R' w
    for (int i = 0; i < 3; i++) wl[i] = Ri[i] * w[0] + Ri[3 + i] * w[1] + Ri[6 + i] * w[2];
    for (int i = 0; i < 3; i++) Iw[i] = I[i] * wl[i];
    for (int i = 0; i < 3; i++) {
      p[i] += mass * v[i];
      L[i] += Ri[3 * i] * Iw[0] + Ri[3 * i + 1] * Iw[1] + Ri[3 * i + 2] * Iw[2];
    }
    L[0] += mass * (c[1] * v[2] - c[2] * v[1]);
    L[1] += mass * (c[2] * v[0] - c[0] * v[2]);
    L[2] += mass * (c[0] * v[1] - c[1] * v[0]);
  }
}

// the contact frame's first tangent for a plane with normal +z: phys_contact_frame decides the pyramid's
// axes of lcp, so the tests read them from a contact rather than assuming x and y.
// Returns the angle of tangent 1 in the xy plane (atan2(t1y, t1x)); 0 (and a failed check) without contact.
static inline double scene_tangent_angle(const physData* d) {
  CHECK_MSG(d->ncon > 0, "no contact to read the tangent frame from");
  if (d->ncon == 0) return 0;
  const double* f = d->contact[0].frame;
  CHECK_NEAR(fabs(f[2]), 1, 1e-12);   // normal along z
  CHECK_NEAR(f[5], 0, 1e-12);         // tangent 1 in the plane
  return atan2(f[4], f[3]);
}

// names of the contact models, for messages
static inline const char* scene_name(int contact) { return phys_contact_name(contact); }

#endif  // PHYS_TEST_SCENE_H
