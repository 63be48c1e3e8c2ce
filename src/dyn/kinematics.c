// kinematics.c - forward kinematics: body, inertial, geom and site frames in the world, composed as
// MuJoCo does (body frame = parent * (body_pos, body_quat), then the body's joints in order).
#include <string.h>

#include "physid.h"
#include "rot.h"

// world pose (pos, quat, mat) of a frame given in body b's frame by (lpos, lquat)
static void local2global(double xpos[3], double xmat[9], const physData* d, int b, const double lpos[3],
                         const double lquat[4]) {
  double q[4];
  phys_mat_vec3(xpos, d->xmat + 9 * b, lpos);
  for (int i = 0; i < 3; i++) xpos[i] += d->xpos[3 * b + i];
  phys_quat_mul(q, d->xquat + 4 * b, lquat);
  phys_quat2mat(xmat, q);
}

// apply the joints of body b to (xpos, xquat) in order, recording each joint's xanchor and xaxis before
// the joint moves the frame:
//   slide: x += (q - q0) axis;  hinge: quat *= aa(axis, q - q0);  ball: quat *= q (normalized);
//   hinge/ball keep the anchor fixed: x = anchor - quat*jnt_pos
static void apply_joints(const physModel* m, physData* d, int b, double xpos[3], double xquat[4]) {
  int j0 = m->body_jntadr[b], nj = m->body_jntnum[b];
  for (int j = j0; j < j0 + nj; j++) {
    int type = m->jnt_type[j], qa = m->jnt_qposadr[j];
    double* xanchor = d->xanchor + 3 * j;
    double* xaxis = d->xaxis + 3 * j;
    const double* q = d->qpos + qa;
    if (type == PHYS_JNT_FREE) {
      // world pose straight from qpos; MuJoCo records the body origin and the unrotated axis
      phys_copy3(xpos, q);
      memcpy(xquat, q + 3, 4 * sizeof(double));
      phys_quat_normalize(xquat);
      phys_copy3(xanchor, xpos);
      phys_copy3(xaxis, m->jnt_axis + 3 * j);
      continue;
    }
    phys_quat_rotate(xaxis, xquat, m->jnt_axis + 3 * j);
    phys_quat_rotate(xanchor, xquat, m->jnt_pos + 3 * j);
    for (int i = 0; i < 3; i++) xanchor[i] += xpos[i];
    if (type == PHYS_JNT_SLIDE) {
      double s = q[0] - m->qpos0[qa];
      for (int i = 0; i < 3; i++) xpos[i] += s * xaxis[i];
    } else {
      double qloc[4], v[3];
      if (type == PHYS_JNT_BALL) {
        memcpy(qloc, q, sizeof(qloc));
        phys_quat_normalize(qloc);
      } else {
        phys_axisangle2quat(qloc, m->jnt_axis + 3 * j, q[0] - m->qpos0[qa]);
      }
      phys_quat_mul(xquat, xquat, qloc);
      phys_quat_rotate(v, xquat, m->jnt_pos + 3 * j);
      for (int i = 0; i < 3; i++) xpos[i] = xanchor[i] - v[i];
    }
  }
}

// body frames, joint anchors/axes, inertial frames, then geom and site frames
void phys_kinematics(const physModel* m, physData* d) {
  // world body
  memset(d->xpos, 0, 3 * sizeof(double));
  phys_quat_identity(d->xquat);
  phys_quat2mat(d->xmat, d->xquat);

  for (int b = 1; b < m->nbody; b++) {
    double* xpos = d->xpos + 3 * b;
    double* xquat = d->xquat + 4 * b;
    int p = m->body_parentid[b];

    // fixed placement in the parent: x = x_p + R_p body_pos, quat = quat_p * body_quat
    phys_mat_vec3(xpos, d->xmat + 9 * p, m->body_pos + 3 * b);
    for (int i = 0; i < 3; i++) xpos[i] += d->xpos[3 * p + i];
    phys_quat_mul(xquat, d->xquat + 4 * p, m->body_quat + 4 * b);

    apply_joints(m, d, b, xpos, xquat);
    phys_quat_normalize(xquat);
    phys_quat2mat(d->xmat + 9 * b, xquat);
  }

  // inertial frames (world body included: its ipos is zero)
  for (int b = 0; b < m->nbody; b++)
    local2global(d->xipos + 3 * b, d->ximat + 9 * b, d, b, m->body_ipos + 3 * b, m->body_iquat + 4 * b);
  for (int g = 0; g < m->ngeom; g++)
    local2global(d->geom_xpos + 3 * g, d->geom_xmat + 9 * g, d, m->geom_bodyid[g], m->geom_pos + 3 * g,
                 m->geom_quat + 4 * g);
  for (int s = 0; s < m->nsite; s++)
    local2global(d->site_xpos + 3 * s, d->site_xmat + 9 * s, d, m->site_bodyid[s], m->site_pos + 3 * s,
                 m->site_quat + 4 * s);
}
