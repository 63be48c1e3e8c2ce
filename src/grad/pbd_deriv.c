// pbd_deriv.c - Jacobians and reverse mode of the position-based step (PHYS_INT_PBD, issue 17 item 2;
// src/step/pbd.c, pbd_core.h), a step-record kind of its own (step_record.h: PHYS_STEP_PBD).
//
// The step is differentiated exactly as it computes, substeps, constraint sweeps (Gauss-Seidel or Jacobi),
// limits, springs, damping, contacts with static and dynamic friction and the (q, v) back-conversion included,
// by forward mode on complex numbers: pbd_core.h's arithmetic runs once per input direction dx on
// x + i H dx (H = 1e-30), and Im(step) / H is the directional derivative, exact to rounding (no difference is
// taken: a product of two imaginary parts is H^2 = 1e-60 relative and vanishes, so every operation propagates
// the tangent as forward-mode AD does; the branches read the real parts, so the derivative is the one of the
// branch the step takes). The inputs and their tangents:
//  - q: hinge and slide values + i H dq; ball and free rotations q (x) (1, i H dq/2) (grad.h's tangent: the
//    body-frame rotation vector); free translations + i H dq; the kinematics (xpos, xquat, xmat, xipos, ximat,
//    cdof) recomputed on complex numbers (ckinematics below: the operations of dyn/kinematics.c and com.c);
//  - v: + i H dv;
//  - the actuator forces: + i H (df/dq dq + df/dv dv + df/du du) (phys_actuation_deriv at the start state);
//  - the contacts (detected once at the start state, as the step): pos, normal and dist + i H (their geometry
//    derivative along dq, phys_constraint_geom_jvp, the features held), friction + i H dmu;
//  - parameters (params.h): mass:BODY (body_mass), damping:JOINT (dof_damping), stiffness:JOINT (jnt_stiffness),
//    friction:GEOM (the contact's mu where that geom's friction is the pair's; explicit <pair>s have none),
//    stiffness, damping and restlength of a spring, pos:BODY (body_pos + i H e_k, one column per component: the
//    complex kinematics, the joint frames and the sites move with it; the contacts' geometry along the subtree's
//    translation, phys_constraint_geom_pos_jvp); other kinds are refused (PHYS_ERR_MODEL with a data warning).
// The outputs' tangents: q+ as grad.h's tangent of the complex qpos (2 vec(conj(q) (x) dq) for rotations), v+
// directly. A has 2nv columns, B nu, P ntheta: one complex step each (about 4 steps' cost per column; a
// component the table marks held, params.h, is skipped: its column 0). The
// reverse mode takes the same columns and returns their products with the cotangent (xbar_k = column_k . xbar+).
// Scratch from d's arena (phys_pbd_arena_need covers the complex copy); nothing allocates.
#include <complex.h>
#include <math.h>
#include <string.h>

#include "arena.h"
#include "collision.h"
#include "contact.h"
#include "contact_deriv.h"
#include "dyn.h"
#include "grad.h"
#include "model.h"
#include "params.h"
#include "pbd.h"
#include "rot.h"
#include "step_record.h"

#undef I   // (complex.h's imaginary unit: pbd_core.h names inertias I; _Complex_I is used here)

typedef double complex pbdReal;

#define PBD_H 1e-30   // the imaginary step

#define RE(x) creal(x)

static void loadn(pbdReal* res, const double* x, int n);   // (pbd_core.h)

// the state on complex numbers: the fields pbd_core.h reads (PBD_DATA), plus the joints' axes and anchors and
// the dofs' cdof of the complex kinematics
typedef struct pbdCData_ {
  pbdReal *qpos, *qvel, *xpos, *xquat, *xmat, *xipos, *ximat;
  pbdReal *qfrc_actuator, *qfrc_applied, *xfrc_applied;
  pbdReal *xaxis, *xanchor, *cdof;
  pbdReal* body_pos;         // the placements (pos:BODY's tangent seeded)
} pbdCData;

// the parameter directions of one column: body mass, dof damping, joint stiffness, geom friction, body placement
// (3 per body) and spring stiffness, damping and rest length tangents (NULL: none), and the contacts' tangents
// (7 per contact of the step's list: pos, normal, dist; NULL: none)
typedef struct pbdSeed_ {
  const double *mass, *damping, *stiffness, *friction, *bpos, *sk, *sb, *sl, *contact;
} pbdSeed;

#define SEED(c) ((const pbdSeed*)(c)->seed)
#define SEEDED(arr, k) ((arr) ? (arr)[k] * PBD_H * _Complex_I : 0)

//---------------------------------------------------------------------------------------------------------
// rot.h and chol.h on complex numbers (the same formulas)

static pbdReal r_dot3(const pbdReal a[3], const pbdReal b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
static pbdReal r_norm3(const pbdReal a[3]) { return csqrt(r_dot3(a, a)); }
static void r_copy3(pbdReal r[3], const pbdReal a[3]) { r[0] = a[0], r[1] = a[1], r[2] = a[2]; }
static void r_sub3(pbdReal r[3], const pbdReal a[3], const pbdReal b[3]) {
  r[0] = a[0] - b[0], r[1] = a[1] - b[1], r[2] = a[2] - b[2];
}
static void r_cross3(pbdReal r[3], const pbdReal a[3], const pbdReal b[3]) {
  pbdReal t[3] = {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
  r_copy3(r, t);
}
static pbdReal r_normalize3(pbdReal a[3]) {
  pbdReal n = r_norm3(a);
  if (RE(n) > 0) a[0] /= n, a[1] /= n, a[2] /= n;
  return n;
}
// res = A v, res = A' v (row-major 3 x 3)
static void r_mat_vec3(pbdReal r[3], const pbdReal A[9], const pbdReal v[3]) {
  pbdReal t[3];
  for (int i = 0; i < 3; i++) t[i] = A[3 * i] * v[0] + A[3 * i + 1] * v[1] + A[3 * i + 2] * v[2];
  r_copy3(r, t);
}
static void r_matT_vec3(pbdReal r[3], const pbdReal A[9], const pbdReal v[3]) {
  pbdReal t[3];
  for (int i = 0; i < 3; i++) t[i] = A[i] * v[0] + A[3 + i] * v[1] + A[6 + i] * v[2];
  r_copy3(r, t);
}
static void r_mat_mul3(pbdReal r[9], const pbdReal a[9], const pbdReal b[9]) {
  pbdReal t[9];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) t[3 * i + j] = a[3 * i] * b[j] + a[3 * i + 1] * b[3 + j] + a[3 * i + 2] * b[6 + j];
  memcpy(r, t, sizeof(t));
}
static void r_quat_mul(pbdReal r[4], const pbdReal a[4], const pbdReal b[4]) {
  pbdReal t[4] = {a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
                  a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
                  a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
                  a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0]};
  memcpy(r, t, sizeof(t));
}
static void r_quat_conj(pbdReal r[4], const pbdReal q[4]) { r[0] = q[0], r[1] = -q[1], r[2] = -q[2], r[3] = -q[3]; }
// q v q* = v + 2w (u x v) + 2 u x (u x v)
static void r_quat_rotate(pbdReal r[3], const pbdReal q[4], const pbdReal v[3]) {
  pbdReal t[3], s[3];
  r_cross3(t, q + 1, v);
  for (int i = 0; i < 3; i++) t[i] *= 2;
  r_cross3(s, q + 1, t);
  pbdReal o[3] = {v[0] + q[0] * t[0] + s[0], v[1] + q[0] * t[1] + s[1], v[2] + q[0] * t[2] + s[2]};
  r_copy3(r, o);
}
static pbdReal r_quat_normalize(pbdReal q[4]) {
  pbdReal n = csqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  if (RE(n) > 0) {
    for (int i = 0; i < 4; i++) q[i] /= n;
  } else {
    q[0] = 1, q[1] = q[2] = q[3] = 0;
  }
  return n;
}
static void r_quat2mat(pbdReal r[9], const pbdReal q[4]) {
  pbdReal w = q[0], x = q[1], y = q[2], z = q[3];
  r[0] = w * w + x * x - y * y - z * z, r[1] = 2 * (x * y - w * z), r[2] = 2 * (x * z + w * y);
  r[3] = 2 * (x * y + w * z), r[4] = w * w - x * x + y * y - z * z, r[5] = 2 * (y * z - w * x);
  r[6] = 2 * (x * z - w * y), r[7] = 2 * (y * z + w * x), r[8] = w * w - x * x - y * y + z * z;
}
// x shifted by the multiple of 2 pi that phys_wrap_angle takes off its real part
static pbdReal r_wrap_angle(pbdReal x) { return x + (phys_wrap_angle(RE(x)) - RE(x)); }
// Cholesky factor in place (row-major lower), the pivots' real parts above mindiag; the rank reached
static int r_chol_factor(pbdReal* A, int n, double mindiag) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j <= i; j++) {
      pbdReal s = A[(size_t)i * n + j];
      for (int k = 0; k < j; k++) s -= A[(size_t)i * n + k] * A[(size_t)j * n + k];
      if (j < i) {
        A[(size_t)i * n + j] = s / A[(size_t)j * n + j];
      } else {
        if (!(RE(s) > mindiag)) return i;
        A[(size_t)i * n + i] = csqrt(s);
      }
    }
  return n;
}
// x = (L L')^-1 b
static void r_chol_solve(pbdReal* x, const pbdReal* L, const pbdReal* b, int n) {
  for (int i = 0; i < n; i++) {
    pbdReal s = b[i];
    for (int k = 0; k < i; k++) s -= L[(size_t)i * n + k] * x[k];
    x[i] = s / L[(size_t)i * n + i];
  }
  for (int i = n - 1; i >= 0; i--) {
    pbdReal s = x[i];
    for (int k = i + 1; k < n; k++) s -= L[(size_t)k * n + i] * x[k];
    x[i] = s / L[(size_t)i * n + i];
  }
}
// |x|, min, max by the real parts; atan2 with its derivative (x dy - y dx) / (x^2 + y^2)
static pbdReal r_fabs(pbdReal x) { return RE(x) < 0 ? -x : x; }
static pbdReal r_fmin(pbdReal a, pbdReal b) { return RE(b) < RE(a) ? b : a; }
static pbdReal r_fmax(pbdReal a, pbdReal b) { return RE(b) > RE(a) ? b : a; }
static pbdReal r_atan2(pbdReal y, pbdReal x) {
  double yr = RE(y), xr = RE(x);
  return atan2(yr, xr) + _Complex_I * ((xr * cimag(y) - yr * cimag(x)) / (xr * xr + yr * yr));
}

//---------------------------------------------------------------------------------------------------------
// kinematics on complex numbers (dyn/kinematics.c, com.c, jac.c: the same frames)

// body b's frame (MuJoCo's composition): xpos = xpos_p + R_p body_pos, xquat = xquat_p body_quat, then each
// joint: free sets (xpos, xquat) = q; slide xpos += (q - qpos0) axis; hinge and ball xquat *= ql and
// xpos = anchor - xquat jnt_pos; joint axes xaxis = xquat jnt_axis, anchors xanchor = xpos + xquat jnt_pos
static void cbody_frame(const physModel* m, pbdCData* d, int b) {
  pbdReal *xpos = d->xpos + 3 * b, *xquat = d->xquat + 4 * b, bp[3], bq[4];
  int p = m->body_parentid[b];
  r_copy3(bp, d->body_pos + 3 * b);
  loadn(bq, m->body_quat + 4 * b, 4);
  r_mat_vec3(xpos, d->xmat + 9 * p, bp);
  for (int i = 0; i < 3; i++) xpos[i] += d->xpos[3 * p + i];
  r_quat_mul(xquat, d->xquat + 4 * p, bq);
  for (int j = m->body_jntadr[b]; j < m->body_jntadr[b] + m->body_jntnum[b]; j++) {
    int type = m->jnt_type[j], qa = m->jnt_qposadr[j];
    pbdReal *xa = d->xaxis + 3 * j, *xo = d->xanchor + 3 * j, *q = d->qpos + qa, ja[3], jp[3], ql[4], v[3];
    loadn(ja, m->jnt_axis + 3 * j, 3);
    loadn(jp, m->jnt_pos + 3 * j, 3);
    if (type == PHYS_JNT_FREE) {
      r_copy3(xpos, q);
      memcpy(xquat, q + 3, 4 * sizeof(pbdReal));
      r_quat_normalize(xquat);
      r_copy3(xo, xpos);
      r_copy3(xa, ja);
      continue;
    }
    r_quat_rotate(xa, xquat, ja);
    r_quat_rotate(xo, xquat, jp);
    for (int i = 0; i < 3; i++) xo[i] += xpos[i];
    if (type == PHYS_JNT_SLIDE) {
      for (int i = 0; i < 3; i++) xpos[i] += (q[0] - m->qpos0[qa]) * xa[i];
      continue;
    }
    if (type == PHYS_JNT_BALL) {
      memcpy(ql, q, sizeof(ql));
      r_quat_normalize(ql);
    } else {
      pbdReal a = 0.5 * (q[0] - m->qpos0[qa]), s = csin(a);
      r_normalize3(ja);
      ql[0] = ccos(a), ql[1] = s * ja[0], ql[2] = s * ja[1], ql[3] = s * ja[2];
    }
    r_quat_mul(xquat, xquat, ql);
    r_quat_rotate(v, xquat, jp);
    for (int i = 0; i < 3; i++) xpos[i] = xo[i] - v[i];
  }
  r_quat_normalize(xquat);
  r_quat2mat(d->xmat + 9 * b, xquat);
}

// inertial frames: xipos = xpos + R body_ipos, ximat = mat(xquat body_iquat)
static void cinertial_frames(const physModel* m, pbdCData* d) {
  for (int b = 0; b < m->nbody; b++) {
    pbdReal ip[3], iq[4], q[4];
    loadn(ip, m->body_ipos + 3 * b, 3);
    loadn(iq, m->body_iquat + 4 * b, 4);
    r_mat_vec3(d->xipos + 3 * b, d->xmat + 9 * b, ip);
    for (int i = 0; i < 3; i++) d->xipos[3 * b + i] += d->xpos[3 * b + i];
    r_quat_mul(q, d->xquat + 4 * b, iq);
    r_quat2mat(d->ximat + 9 * b, q);
  }
}

// cdof: slide (0, axis); hinge (axis, anchor x axis); free translations (0, e_i); ball and free rotations the
// body's final axes a_k (columns of R) as (a_k, anchor x a_k)
static void ccdof(const physModel* m, pbdCData* d) {
  for (int j = 0; j < m->njnt; j++) {
    pbdReal* cd = d->cdof + 6 * m->jnt_dofadr[j];
    const pbdReal *xa = d->xaxis + 3 * j, *xo = d->xanchor + 3 * j, *R = d->xmat + 9 * m->jnt_bodyid[j];
    int t = m->jnt_type[j];
    if (t == PHYS_JNT_SLIDE) {
      cd[0] = cd[1] = cd[2] = 0;
      r_copy3(cd + 3, xa);
      continue;
    }
    if (t == PHYS_JNT_HINGE) {
      r_copy3(cd, xa);
      r_cross3(cd + 3, xo, xa);
      continue;
    }
    if (t == PHYS_JNT_FREE) {
      memset(cd, 0, 18 * sizeof(pbdReal));
      cd[3] = cd[10] = cd[17] = 1;
      cd += 18;
    }
    for (int k = 0; k < 3; k++) {
      pbdReal a[3] = {R[k], R[3 + k], R[6 + k]};
      r_copy3(cd + 6 * k, a);
      r_cross3(cd + 6 * k + 3, xo, a);
    }
  }
}

// body frames (world at the identity, then each body after its parent), inertial frames, cdof
static void ckinematics(const physModel* m, pbdCData* d) {
  memset(d->xpos, 0, 3 * sizeof(pbdReal));
  d->xquat[0] = 1, d->xquat[1] = d->xquat[2] = d->xquat[3] = 0;
  r_quat2mat(d->xmat, d->xquat);
  for (int b = 1; b < m->nbody; b++) cbody_frame(m, d, b);
  cinertial_frames(m, d);
  ccdof(m, d);
}

// phys_jac on the complex kinematics: jacr_j = cdof_ang, jacp_j = cdof_lin + cdof_ang x point along the chain
static void cjac(const physModel* m, const pbdCData* d, const pbdReal point[3], int body, pbdReal* jacp,
                 pbdReal* jacr) {
  int nv = m->nv;
  memset(jacp, 0, 3 * sizeof(pbdReal) * (size_t)nv);
  memset(jacr, 0, 3 * sizeof(pbdReal) * (size_t)nv);
  for (int j = phys_body_lastdof(m, body); j >= 0; j = m->dof_parentid[j]) {
    const pbdReal* cd = d->cdof + 6 * j;
    pbdReal t[3];
    r_cross3(t, cd, point);
    for (int i = 0; i < 3; i++) jacr[i * nv + j] = cd[i], jacp[i * nv + j] = cd[3 + i] + t[i];
  }
}

// the step's contact k (number i) with its tangents (SEED(c)->contact: 7 per contact) and friction's
struct pbdCtx_;
static void ccontact(const struct pbdCtx_* c, const physContact* k, int i, pbdReal pos[3], pbdReal n[3], pbdReal* dist,
                     pbdReal* mu);

#define PBD_DATA pbdCData
#define PBD_JAC cjac
#define PBD_KINEMATICS(m, d) ckinematics(m, d)
#define PBD_MASS(c, b) ((c)->m->body_mass[b] + SEEDED(SEED(c)->mass, b))
#define PBD_DAMPING(c, dof) ((c)->m->dof_damping[dof] + SEEDED(SEED(c)->damping, dof))
#define PBD_STIFFNESS(c, j) ((c)->m->jnt_stiffness[j] + SEEDED(SEED(c)->stiffness, j))
#define PBD_CONTACT(c, k, i, pos_, n_, dist_, mu_) ccontact(c, k, i, pos_, n_, &(dist_), &(mu_))
#define PBD_BODY_POS(c, d, b, res) r_copy3(res, (d)->body_pos + 3 * (b))
#define PBD_SPRING(c, s, k_, b_, L0_)                                                     \
  ((k_) = (c)->m->spring_stiffness[s] + SEEDED(SEED(c)->sk, s),                          \
   (b_) = (c)->m->spring_damping[s] + SEEDED(SEED(c)->sb, s),                            \
   (L0_) = (c)->m->spring_restlength[s] + SEEDED(SEED(c)->sl, s))

#include "pbd_core.h"

static void ccontact(const struct pbdCtx_* c, const physContact* k, int i, pbdReal pos[3], pbdReal n[3], pbdReal* dist,
                     pbdReal* mu) {
  const pbdSeed* s = SEED(c);
  const double* t = s->contact ? s->contact + 7 * i : NULL;
  for (int l = 0; l < 3; l++) pos[l] = k->pos[l] + (t ? t[l] * PBD_H * _Complex_I : 0);
  for (int l = 0; l < 3; l++) n[l] = k->frame[l] + (t ? t[3 + l] * PBD_H * _Complex_I : 0);
  *dist = k->dist + (t ? t[6] * PBD_H * _Complex_I : 0);
  *mu = k->mu;
  if (!s->friction) return;
  // the pair's friction is the larger geom friction (collision.c): its geom's direction, one geom on a tie
  const physModel* m = c->m;
  int g0 = k->geom[0], g1 = k->geom[1];
  double f0 = m->geom_friction[3 * g0], f1 = m->geom_friction[3 * g1];
  if (k->mu == f0 || k->mu == f1) *mu += s->friction[k->mu == f0 && f0 >= f1 ? g0 : g1] * PBD_H * _Complex_I;
}

//---------------------------------------------------------------------------------------------------------
// the columns

#define PBD_NDOUBLE(T) ((sizeof(T) + sizeof(double) - 1) / sizeof(double))

// n complex numbers from d's arena
static pbdReal* calloc_c(physData* d, size_t n) { return (pbdReal*)phys_stack_alloc(d, 2 * n + 2); }

// what the columns share, computed once at d's state: the contacts (as the step detects them), the actuator
// force derivatives and the contacts' geometry derivatives (7 ncon per tangent direction, nv directions)
typedef struct pbdPoint_ {
  physContactList cl;
  double *Fq, *Fv, *Fu;     // d qfrc_actuator / d(q, v, u): nv x nv, nv x nv, nv x nu
  double* Dc;               // nv x 7 ncon
} pbdPoint;

// the point at d's state (the step's own start: kinematics, actuation, detection); PHYS_ERR_ARG (message in
// d's warning) if a contact's geometry has no derivative
static physStatus point_at(const physModel* m, physData* d, pbdPoint* pt) {
  int nv = m->nv, nu = m->nu;
  phys_kinematics(m, d);
  phys_com_pos(m, d);
  phys_com_vel(m, d);
  phys_actuation(m, d);
  pt->cl = phys_contact_list_arena(d);
  if (!(m->opt.disableflags & PHYS_DSBL_CONTACT)) phys_collision_into(m, d, &pt->cl);
  pt->cl.nlimit = 0;
  pt->Fq = phys_stack_alloc(d, (size_t)nv * nv + 1);
  pt->Fv = phys_stack_alloc(d, (size_t)nv * nv + 1);
  pt->Fu = phys_stack_alloc(d, (size_t)nv * nu + 1);
  memset(pt->Fq, 0, sizeof(double) * (size_t)nv * nv);
  memset(pt->Fv, 0, sizeof(double) * (size_t)nv * nv);
  memset(pt->Fu, 0, sizeof(double) * (size_t)nv * nu);
  phys_actuation_deriv(m, d, pt->Fq, pt->Fv, pt->Fu);
  int nc = pt->cl.n;
  pt->Dc = NULL;
  if (nc == 0) return PHYS_OK;
  pt->Dc = phys_stack_alloc(d, (size_t)nv * 7 * nc);
  double* e = phys_stack_alloc(d, (size_t)nv);
  physConstraintProblem p;
  memset(&p, 0, sizeof p);
  p.nc = nc, p.con = pt->cl.con, p.n = 3 * nc, p.nv = nv;
  for (int k = 0; k < nv; k++) {
    memset(e, 0, sizeof(double) * (size_t)nv);
    e[k] = 1;
    physStatus st = phys_constraint_geom_jvp(m, d, &p, e, pt->Dc + (size_t)k * 7 * nc);
    if (st != PHYS_OK) return st;
  }
  return PHYS_OK;
}

// qpos (+) i H dq (grad.h's tangent: rotations q (x) exp(i H dq / 2) = q + i H q (x) (0, dq) / 2 to first order)
static void seed_qpos(const physModel* m, const double* qpos, const double* dq, pbdReal* q) {
  for (int i = 0; i < m->nq; i++) q[i] = qpos[i];
  if (!dq) return;
  for (int j = 0; j < m->njnt; j++) {
    int qa = m->jnt_qposadr[j], da = m->jnt_dofadr[j], t = m->jnt_type[j];
    if (t == PHYS_JNT_HINGE || t == PHYS_JNT_SLIDE) {
      q[qa] += dq[da] * PBD_H * _Complex_I;
      continue;
    }
    if (t == PHYS_JNT_FREE) {
      for (int i = 0; i < 3; i++) q[qa + i] += dq[da + i] * PBD_H * _Complex_I;
      qa += 3, da += 3;
    }
    const double* q0 = qpos + qa;
    double w[4] = {0, 0.5 * dq[da], 0.5 * dq[da + 1], 0.5 * dq[da + 2]}, r[4];
    phys_quat_mul(r, q0, w);
    for (int i = 0; i < 4; i++) q[qa + i] += r[i] * PBD_H * _Complex_I;
  }
}

// the tangent (nv) of the complex qpos q: Im / H, rotations 2 vec(conj(Re q) (x) Im q) / H
static void tangent_qpos(const physModel* m, const pbdReal* q, double* dq) {
  for (int j = 0; j < m->njnt; j++) {
    int qa = m->jnt_qposadr[j], da = m->jnt_dofadr[j], t = m->jnt_type[j];
    if (t == PHYS_JNT_HINGE || t == PHYS_JNT_SLIDE) {
      dq[da] = cimag(q[qa]) / PBD_H;
      continue;
    }
    if (t == PHYS_JNT_FREE) {
      for (int i = 0; i < 3; i++) dq[da + i] = cimag(q[qa + i]) / PBD_H;
      qa += 3, da += 3;
    }
    double qr[4], qi[4], qc[4], r[4];
    for (int i = 0; i < 4; i++) qr[i] = creal(q[qa + i]), qi[i] = cimag(q[qa + i]) / PBD_H;
    phys_quat_conj(qc, qr);
    phys_quat_mul(r, qc, qi);
    for (int i = 0; i < 3; i++) dq[da + i] = 2 * r[1 + i];
  }
}

// one column: the step from d's state along (dq, dv) (NULL: 0) with the actuator force tangent df (nv, NULL: 0)
// and the parameter and contact directions s, out (2nv) = d(q+, v+); 0 if the step's systems are singular
static int column(const physModel* m, physData* d, const pbdPoint* pt, const double* dq, const double* dv,
                  const double* df, const pbdSeed* s, double* out) {
  int nv = m->nv, nb = m->nbody;
  size_t mark = phys_stack_mark(d);
  pbdCData cd;
  cd.qpos = calloc_c(d, (size_t)m->nq);
  cd.qvel = calloc_c(d, (size_t)nv);
  cd.xpos = calloc_c(d, 3 * (size_t)nb);
  cd.xquat = calloc_c(d, 4 * (size_t)nb);
  cd.xmat = calloc_c(d, 9 * (size_t)nb);
  cd.xipos = calloc_c(d, 3 * (size_t)nb);
  cd.ximat = calloc_c(d, 9 * (size_t)nb);
  cd.qfrc_actuator = calloc_c(d, (size_t)nv);
  cd.qfrc_applied = calloc_c(d, (size_t)nv);
  cd.xfrc_applied = calloc_c(d, 6 * (size_t)nb);
  cd.xaxis = calloc_c(d, 3 * (size_t)m->njnt);
  cd.xanchor = calloc_c(d, 3 * (size_t)m->njnt);
  cd.cdof = calloc_c(d, 6 * (size_t)nv);
  cd.body_pos = calloc_c(d, 3 * (size_t)nb);
  for (int i = 0; i < 3 * nb; i++) cd.body_pos[i] = m->body_pos[i] + (s->bpos ? s->bpos[i] * PBD_H * _Complex_I : 0);
  seed_qpos(m, d->qpos, dq, cd.qpos);
  for (int i = 0; i < nv; i++) {
    cd.qvel[i] = d->qvel[i] + (dv ? dv[i] * PBD_H * _Complex_I : 0);
    cd.qfrc_actuator[i] = d->qfrc_actuator[i] + (df ? df[i] * PBD_H * _Complex_I : 0);
    cd.qfrc_applied[i] = d->qfrc_applied[i];
  }
  for (int i = 0; i < 6 * nb; i++) cd.xfrc_applied[i] = d->xfrc_applied[i];
  ckinematics(m, &cd);

  pbdCtx c;
  memset(&c, 0, sizeof c);
  c.m = m;
  c.seed = s;
  c.body = (pbdBody*)phys_stack_alloc(d, (size_t)nb * PBD_NDOUBLE(pbdBody));
  c.joint = (pbdJoint*)phys_stack_alloc(d, (size_t)m->njnt * PBD_NDOUBLE(pbdJoint) + 1);
  c.con = (pbdContact*)phys_stack_alloc(d, (size_t)m->nconmax * PBD_NDOUBLE(pbdContact) + 1);
  c.ten = (pbdTendon*)phys_stack_alloc(d, (size_t)m->nspring * PBD_NDOUBLE(pbdTendon) + 1);
  c.tbody = (int*)phys_stack_alloc(d, (size_t)m->nspringsite + 1);
  c.tr = calloc_c(d, 3 * (size_t)m->nspringsite);
  c.acc = calloc_c(d, 9 * (size_t)nb);
  int* idx = (int*)phys_stack_alloc(d, (size_t)nb);
  pbdReal* jacp = calloc_c(d, 3 * (size_t)nv);
  pbdReal* jacr = calloc_c(d, 3 * (size_t)nv);
  pbdReal* A = calloc_c(d, (size_t)nv * nv);
  pbdReal* rhs = calloc_c(d, (size_t)nv);
  int substeps = m->opt.pbd_substeps > 0 ? m->opt.pbd_substeps : 1;
  int iterations = m->opt.pbd_iterations > 0 ? m->opt.pbd_iterations : 1;
  c.h = m->opt.timestep / substeps;
  c.compliance = m->opt.pbd_compliance;
  c.jacobi = m->opt.pbd_jacobi;
  int ok = pbd_advance(&c, &cd, &pt->cl, idx, jacp, jacr, A, rhs, substeps, iterations);
  if (ok) {
    tangent_qpos(m, cd.qpos, out);
    for (int i = 0; i < nv; i++) out[nv + i] = cimag(cd.qvel[i]) / PBD_H;
  }
  phys_stack_free(d, mark);
  return ok;
}

// the contacts' tangents (7 per contact of pt) when body b's placement moves along its component k: its subtree
// translates along the parent's axis k
static physStatus pos_contacts(const physModel* m, physData* d, const pbdPoint* pt, int b, int k, double* out) {
  physConstraintProblem p;
  double tr[3];
  memset(&p, 0, sizeof p);
  p.nc = pt->cl.n, p.con = pt->cl.con, p.n = 3 * p.nc, p.nv = m->nv;
  phys_body_pos_direction(tr, m, d, b, k);
  return phys_constraint_geom_pos_jvp(m, d, &p, b, tr, out);
}

// add the parameter direction of component k of table entry p (params.h) to s, its directions in dir (pbd_dir_size
// numbers, zeroed by the caller: the kinds' arrays, then the contacts' tangents); PHYS_ERR_MODEL (a data warning)
// for a kind the pbd derivatives do not cover
static size_t pbd_dir_size(const physModel* m, int nc) {
  return (size_t)(4 * m->nbody + m->nv + m->njnt + m->ngeom + 3 * m->nspring + 7 * nc) + 1;
}
static physStatus param_seed(const physModel* m, physData* d, const pbdPoint* pt, const physParam* p, int k,
                             double* dir, pbdSeed* s) {
  int nb = m->nbody, nv = m->nv, nj = m->njnt, ns = m->nspring;
  double *mass = dir, *damp = dir + nb, *stiff = damp + nv, *fric = stiff + nj, *bpos = fric + m->ngeom;
  double *sk = bpos + 3 * nb, *sb = sk + ns, *sl = sb + ns, *con = sl + ns;
  switch (p->kind) {
    case PHYS_PAR_MASS: mass[p->id] = 1, s->mass = mass; return PHYS_OK;
    case PHYS_PAR_STIFFNESS: stiff[p->id] = 1, s->stiffness = stiff; return PHYS_OK;
    case PHYS_PAR_FRICTION: fric[p->id] = 1, s->friction = fric; return PHYS_OK;
    case PHYS_PAR_SPRING_STIFFNESS: sk[p->id] = 1, s->sk = sk; return PHYS_OK;
    case PHYS_PAR_SPRING_DAMPING: sb[p->id] = 1, s->sb = sb; return PHYS_OK;
    case PHYS_PAR_SPRING_RESTLENGTH: sl[p->id] = 1, s->sl = sl; return PHYS_OK;
    case PHYS_PAR_DAMPING: {
      int t = m->jnt_type[p->id], n = t == PHYS_JNT_FREE ? 6 : (t == PHYS_JNT_BALL ? 3 : 1);
      for (int i = 0; i < n; i++) damp[m->jnt_dofadr[p->id] + i] = 1;
      s->damping = damp;
      return PHYS_OK;
    }
    case PHYS_PAR_POS: {
      bpos[3 * p->id + k] = 1, s->bpos = bpos;
      if (pt->cl.n == 0) return PHYS_OK;
      s->contact = con;
      return pos_contacts(m, d, pt, p->id, k, con);
    }
  }
  phys_data_warning(d, "phys_step derivatives: the pbd step's derivatives cover the parameters mass, damping, "
                    "stiffness, friction, restlength and pos; not %s", p->name);
  return PHYS_ERR_MODEL;
}

// column k of X (rows x ncol, row-major; may be NULL) = out, and y[k] = out . x (y, x may be NULL): the column
// stored for the Jacobians, its product with the cotangent for the reverse mode
static void use_column(double* X, double* y, const double* x, int ncol, int k, const double* out, int rows) {
  if (X)
    for (int r = 0; r < rows; r++) X[(size_t)r * ncol + k] = out[r];
  if (!y) return;
  y[k] = 0;
  for (int r = 0; r < rows; r++) y[k] += out[r] * x[r];
}

// A, B, P of the pbd step at d's state (step_record.h; any may be NULL) and, with xbar_next, the reverse mode
// xbar = A' xbar_next, ubar = B' xbar_next, theta_bar = P' xbar_next (any may be NULL), column by column
static physStatus pbd_jacobian(const physModel* m, physData* d, const physParamTable* t, double* A, double* B,
                               double* P, const double* xbar_next, double* xbar, double* ubar, double* theta_bar) {
  int nv = m->nv, nu = m->nu, n2 = 2 * nv;
  pbdPoint pt;
  physStatus st = point_at(m, d, &pt);
  if (st != PHYS_OK) return st;
  double* out = phys_stack_alloc(d, (size_t)n2);
  double* e = phys_stack_alloc(d, (size_t)nv);
  double* df = phys_stack_alloc(d, (size_t)nv);
  double* dir = phys_stack_alloc(d, pbd_dir_size(m, pt.cl.n));
  int nc = pt.cl.n, ok = 1;
  pbdSeed s0;
  memset(&s0, 0, sizeof s0);
  for (int k = 0; (A || xbar) && ok && k < n2; k++) {   // q tangents, then v
    int j = k % nv;
    const double* F = k < nv ? pt.Fq : pt.Fv;
    memset(e, 0, sizeof(double) * (size_t)nv);
    e[j] = 1;
    for (int i = 0; i < nv; i++) df[i] = F[(size_t)i * nv + j];
    pbdSeed s = s0;
    if (k < nv && nc > 0) s.contact = pt.Dc + (size_t)j * 7 * nc;
    ok = column(m, d, &pt, k < nv ? e : NULL, k < nv ? NULL : e, df, &s, out);
    if (ok) use_column(A, xbar, xbar_next, n2, k, out, n2);
  }
  for (int k = 0; (B || ubar) && ok && k < nu; k++) {
    for (int i = 0; i < nv; i++) df[i] = pt.Fu[(size_t)i * nu + k];
    ok = column(m, d, &pt, NULL, NULL, df, &s0, out);
    if (ok) use_column(B, ubar, xbar_next, nu, k, out, n2);
  }
  // column a of P: every entry with a number at a seeded together (tied entries share theta; pos: has 3 numbers);
  // a held component's column is not computed (0)
  for (int a = 0; (P || theta_bar) && t && ok && st == PHYS_OK && a < t->ntheta; a++) {
    if (t->held && t->held[a]) {
      use_column(P, theta_bar, xbar_next, t->ntheta, a, memset(out, 0, sizeof(double) * (size_t)n2), n2);
      continue;
    }
    pbdSeed s;
    memset(&s, 0, sizeof s);
    memset(dir, 0, sizeof(double) * pbd_dir_size(m, nc));
    for (int e2 = 0; e2 < t->n && st == PHYS_OK; e2++) {
      const physParam* p = t->param + e2;
      if (a >= p->adr && a < p->adr + p->size) st = param_seed(m, d, &pt, p, a - p->adr, dir, &s);
    }
    if (st == PHYS_OK) ok = column(m, d, &pt, NULL, NULL, NULL, &s, out);
    if (st == PHYS_OK && ok) use_column(P, theta_bar, xbar_next, t->ntheta, a, out, n2);
  }
  if (st == PHYS_OK && !ok) {
    phys_data_warning(d, "phys_step_jacobian: pbd: singular body inertia or velocity system at time %g", d->time);
    st = PHYS_ERR_NUMERIC;
  }
  return st;
}

physStatus phys_pbd_step_jacobian(const physModel* m, physData* d, const physParamTable* t, double* A, double* B,
                                  double* P) {
  size_t mark = phys_stack_mark(d);
  physStatus st = pbd_jacobian(m, d, t, A, B, P, NULL, NULL, NULL, NULL);
  phys_stack_free(d, mark);
  return st;
}

physStatus phys_pbd_step_vjp(const physModel* m, physData* d, const physParamTable* t, const double* xbar_next,
                             double* xbar, double* ubar, double* theta_bar) {
  size_t mark = phys_stack_mark(d);
  physStatus st = pbd_jacobian(m, d, t, NULL, NULL, NULL, xbar_next, xbar, m->nu > 0 ? ubar : NULL,
                               t && t->ntheta > 0 ? theta_bar : NULL);
  phys_stack_free(d, mark);
  return st;
}
