// sensor_deriv.c - d sensor / d state for the position- and velocity-stage sensors (sensor_deriv.h).
//
// Along tangent coordinate j (grad.h) every body after dof j moves rigidly by the world motion cdof_j = (w_j, u_j):
// a point p of such a body moves by u_j + w_j x p (the point Jacobian's column), its frame turns by w_j, and the
// axes of the dofs after j turn with it (cdof_k -> cdof_k + eps cdof_j x cdof_k). So the body's velocity
// cvel_b = sum_k cdof_k v_k over its dofs k changes by cdof_j x S_j, S_j = sum over the dofs k of b after j of
// cdof_k v_k. From these:
//   position p:        dp/dq_j = u_j + w_j x p                        dp/dv = 0
//   quaternion q:      dq/dq_j = 0.5 (0, w_j) * q
//   velocity at p:     d(u + w x p)/dq_j = du + dw x p + w x dp/dq_j    d/dv_j = u_j + w_j x p
//   angular velocity:  dw/dq_j = (cdof_j x S_j)_ang                    d/dv_j = w_j
//   in the site frame: d(R'x)/dq_j = R'(dx/dq_j - w_j x x)            (R turns by w_j)
// Checked against central differences in tests/grad/test_sensor_deriv.c.
#include <string.h>

#include "dyn.h"
#include "grad.h"
#include "rot.h"
#include "sensor_deriv.h"
#include "spatial.h"

int phys_sensor_has_deriv(int type) {
  switch (type) {
    case PHYS_SENS_JOINTPOS:
    case PHYS_SENS_JOINTVEL:
    case PHYS_SENS_FRAMEPOS:
    case PHYS_SENS_FRAMEQUAT:
    case PHYS_SENS_FRAMELINVEL:
    case PHYS_SENS_FRAMEANGVEL:
    case PHYS_SENS_GYRO:
    case PHYS_SENS_VELOCIMETER:
    case PHYS_SENS_SUBTREECOM: return 1;
    default: return 0;
  }
}

// 1 if dof k is after dof j (grad.h: j is k or an ancestor of k, or both are in one group)
static int dof_after(const physModel* m, int k, int j) {
  if (phys_dof_group(m, k) == phys_dof_group(m, j)) return 1;
  for (int a = k; a >= 0; a = m->dof_parentid[a])
    if (a == j) return 1;
  return 0;
}

// column j of the Jacobian of world point p on a body after dof j: u_j + w_j x p
static void point_col(const physData* d, int j, const double p[3], double res[3]) {
  const double* c = d->cdof + 6 * j;
  phys_cross3(res, c, p);
  for (int k = 0; k < 3; k++) res[k] += c[3 + k];
}

// d cvel_b / dq_j = cdof_j x S_j (S_j: the sum of cdof_k v_k over b's dofs k after j)
static void dvel_col(const physModel* m, const physData* d, int b, int j, double res[6]) {
  double S[6] = {0, 0, 0, 0, 0, 0};
  for (int k = phys_body_lastdof(m, b); k >= 0; k = m->dof_parentid[k])
    if (dof_after(m, k, j))
      for (int c = 0; c < 6; c++) S[c] += d->cdof[6 * k + c] * d->qvel[k];
  phys_cross_motion(res, d->cdof + 6 * j, S);
}

// H's rows for the world velocity quantity of a frame (ang: angular, else linear at p), optionally in the frame R
static void velocity_rows(const physModel* m, const physData* d, int b, const double p[3], const double* R, int ang,
                          double* H) {
  int nv = m->nv;
  const double* v = d->cvel + 6 * b;
  double x[3];   // the quantity in world coordinates
  phys_cross3(x, v, p);
  for (int k = 0; k < 3; k++) x[k] = ang ? v[k] : v[3 + k] + x[k];
  for (int j = phys_body_lastdof(m, b); j >= 0; j = m->dof_parentid[j]) {
    double dv[6], dq[3], dvj[3], jp[3], t[3];
    dvel_col(m, d, b, j, dv);
    point_col(d, j, p, jp);
    if (ang) {
      phys_copy3(dq, dv);
      phys_copy3(dvj, d->cdof + 6 * j);
    } else {
      phys_cross3(dq, dv, p);                 // du + dw x p + w x dp
      phys_cross3(t, v, jp);
      for (int k = 0; k < 3; k++) dq[k] += dv[3 + k] + t[k];
      phys_copy3(dvj, jp);
    }
    if (R) {                                  // R'(dx - w_j x x), R' dx/dv
      phys_cross3(t, d->cdof + 6 * j, x);
      for (int k = 0; k < 3; k++) t[k] = dq[k] - t[k];
      phys_matT_vec3(dq, R, t);
      phys_matT_vec3(t, R, dvj);
      phys_copy3(dvj, t);
    }
    for (int k = 0; k < 3; k++) H[k * 2 * nv + j] = dq[k], H[k * 2 * nv + nv + j] = dvj[k];
  }
}

// H's rows of a world point p of body b (3 x 2nv), added with weight w
static void point_rows(const physModel* m, const physData* d, int b, const double p[3], double w, double* H) {
  int nv = m->nv;
  for (int j = phys_body_lastdof(m, b); j >= 0; j = m->dof_parentid[j]) {
    double jp[3];
    point_col(d, j, p, jp);
    for (int k = 0; k < 3; k++) H[k * 2 * nv + j] += w * jp[k];
  }
}

// H's rows of subtreecom of body b: the mass-weighted point rows of the subtree's centres of mass
static void subtree_rows(const physModel* m, const physData* d, int b, double* H) {
  double mass = m->body_subtreemass[b];
  if (mass < 1e-15) {
    point_rows(m, d, b, d->xipos + 3 * b, 1, H);
    return;
  }
  for (int k = b; k < m->nbody; k++) {
    int in = 0;
    for (int a = k; a >= b && !in; a = a > 0 ? m->body_parentid[a] : -1) in = a == b;
    if (in && m->body_mass[k] > 0) point_rows(m, d, k, d->xipos + 3 * k, m->body_mass[k] / mass, H);
  }
}

// H's rows of framequat: dq/dq_j = 0.5 (0, w_j) * q
static void quat_rows(const physModel* m, const physData* d, int objtype, int id, int b, double* H) {
  int nv = m->nv;
  double q[4];
  phys_object_quat(m, d, objtype, id, q);
  for (int j = phys_body_lastdof(m, b); j >= 0; j = m->dof_parentid[j]) {
    const double* w = d->cdof + 6 * j;
    double wq[4] = {0, 0.5 * w[0], 0.5 * w[1], 0.5 * w[2]}, dq[4];
    phys_quat_mul(dq, wq, q);
    for (int k = 0; k < 4; k++) H[k * 2 * nv + j] = dq[k];
  }
}

physStatus phys_sensor_deriv(const physModel* m, physData* d, int i, double* H) {
  if (i < 0 || i >= m->nsensor || !phys_sensor_has_deriv(m->sensor_type[i])) return PHYS_ERR_ARG;
  int type = m->sensor_type[i], objtype = m->sensor_objtype[i], id = m->sensor_objid[i], dim = m->sensor_dim[i];
  int nv = m->nv, b = 0;
  const double *p = NULL, *R = NULL;
  memset(H, 0, sizeof(double) * (size_t)dim * 2 * (size_t)nv);
  if (objtype != PHYS_OBJ_JOINT && objtype != PHYS_OBJ_ACTUATOR) phys_object_frame(m, d, objtype, id, &p, &R, &b);
  switch (type) {
    case PHYS_SENS_JOINTPOS: H[m->jnt_dofadr[id]] = 1; break;
    case PHYS_SENS_JOINTVEL: H[nv + m->jnt_dofadr[id]] = 1; break;
    case PHYS_SENS_FRAMEPOS: point_rows(m, d, b, p, 1, H); break;
    case PHYS_SENS_FRAMEQUAT: quat_rows(m, d, objtype, id, b, H); break;
    case PHYS_SENS_SUBTREECOM: subtree_rows(m, d, id, H); break;
    case PHYS_SENS_FRAMELINVEL: velocity_rows(m, d, b, p, NULL, 0, H); break;
    case PHYS_SENS_FRAMEANGVEL: velocity_rows(m, d, b, p, NULL, 1, H); break;
    case PHYS_SENS_GYRO: velocity_rows(m, d, b, p, R, 1, H); break;
    case PHYS_SENS_VELOCIMETER: velocity_rows(m, d, b, p, R, 0, H); break;
    default: break;
  }
  // a value clamped at its cutoff does not move (framequat has no cutoff)
  double c = m->sensor_cutoff[i];
  for (int k = 0; c > 0 && type != PHYS_SENS_FRAMEQUAT && k < dim; k++) {
    double x = d->sensordata[m->sensor_adr[i] + k];
    if (x >= c || x <= -c) memset(H + (size_t)k * 2 * nv, 0, sizeof(double) * 2 * (size_t)nv);
  }
  return PHYS_OK;
}
