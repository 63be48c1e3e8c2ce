// pbd.c - the position-based step (PHYS_INT_PBD, issue 17 item 1): extended position-based dynamics (XPBD,
// Mueller et al. 2020, "Detailed rigid body simulation with extended position based dynamics") of the model's
// bodies in maximal coordinates.
//
// A step of dt from physid's state (q, v):
//  1. maximal coordinates: every body with joints is a rigid body (its welded descendants, bodies without
//     joints, merged into it: composite mass, centre of mass and inertia); its pose is the body frame from
//     phys_kinematics, its velocity the centre of mass's from the body Jacobians times v. Hinge armature is
//     the child's inertia a*axis*axis' about its axis, ball and free armature a*I (exact for a joint on the
//     world; otherwise the rotor's inertia counts the child's absolute rather than relative rotation).
//  2. contacts detected once at the start state (phys_collision_into within the pbd envelope, collision.c: the
//     distance the geoms can close over the step); their points are kept in the two bodies' frames and their
//     distance re-evaluated at every substep along the fixed normal.
//  3. substeps h = dt / pbd_substeps: the velocities predicted (gravity, the step's constant actuator, applied
//     and xfrc forces, the substep's joint springs; gyroscopic term), joint damping as an implicit velocity
//     update, the poses predicted, then pbd_iterations sweeps over the constraints (Gauss-Seidel: each
//     correction applied at once; Jacobi: the corrections of a sweep summed per body and relaxed by one factor,
//     1 / the most constraints touching one body), velocities from the pose change, then the contacts' dynamic
//     friction and restitution on the velocities.
//     Joints: hinge = anchor coincidence (3 rows) + axis alignment (the 2 rows across the axis); ball = anchor;
//     slide = relative orientation locked (3 rows) + the 2 rows across its axis; free: none. The rows of one
//     joint part are solved together as a block with XPBD compliance pbd_compliance (0: rigid) - Mueller's
//     one-direction form converges badly when a body's rotational and translational inverse masses differ
//     by orders (a point-mass pendulum). Limits of hinge and slide joints, contact normals: one-sided rows.
//     Springs (spatial tendons through sites): one row on the length L over the bodies of their sites, XPBD
//     compliance 1/k with Macklin et al. 2016's damping (pbd_core.h, solve_tendon), their range a rigid
//     one-sided row.
//     Static friction: a positional row on the tangential drift while its multiplier stays within mu times
//     the normal multiplier; dynamic friction: a tangential impulse of at most mu times the normal impulse
//     (one coefficient, the contact's mu, for both).
//  4. back to (q, v): joint coordinates from the relative pose of each body and its parent frame (hinge angle
//     unwrapped next to the step's start value, ball quaternion with the sign of the start value), then v the
//     kinetic-energy least squares of the maximal velocities: (sum J' W J) v = sum J' W (vcom, omega), W the
//     body's mass and inertia.
// Everything lives in the arena (phys_pbd_arena_need); nothing allocates.
#include "pbd.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "chol.h"
#include "model.h"
#include "rot.h"
#include "step.h"

// the step's numbers are doubles: pbd_core.h on the library's own helpers (pbd_deriv.c: on double complex)
typedef double pbdReal;
#define PBD_DATA physData
#define r_cross3 phys_cross3
#define r_dot3 phys_dot3
#define r_norm3 phys_norm3
#define r_sub3 phys_sub3
#define r_copy3 phys_copy3
#define r_normalize3 phys_normalize3
#define r_mat_vec3 phys_mat_vec3
#define r_matT_vec3 phys_matT_vec3
#define r_mat_mul3 phys_mat_mul3
#define r_quat_mul phys_quat_mul
#define r_quat_conj phys_quat_conj
#define r_quat_rotate phys_quat_rotate
#define r_quat_normalize phys_quat_normalize
#define r_quat2mat phys_quat2mat
#define r_wrap_angle phys_wrap_angle
#define r_chol_factor phys_chol_factor
#define r_chol_solve phys_chol_solve
#define r_fabs fabs
#define r_fmin fmin
#define r_fmax fmax
#define r_atan2 atan2
#define RE(x) (x)
#define PBD_JAC phys_jac
#define PBD_KINEMATICS(m, d) (phys_kinematics(m, d), phys_com_pos(m, d))   // (cdof, which phys_jac reads)
#define PBD_MASS(c, b) ((c)->m->body_mass[b])
#define PBD_DAMPING(c, dof) ((c)->m->dof_damping[dof])
#define PBD_STIFFNESS(c, j) ((c)->m->jnt_stiffness[j])
#define PBD_BODY_POS(c, d, b, res) load3(res, (c)->m->body_pos + 3 * (b))
#define PBD_SPRING(c, s, k_, b_, L0_) \
  ((k_) = (c)->m->spring_stiffness[s], (b_) = (c)->m->spring_damping[s], (L0_) = (c)->m->spring_restlength[s])
#define PBD_CONTACT(c, k, i, pos_, n_, dist_, mu_) \
  (phys_copy3(n_, (k)->frame), phys_copy3(pos_, (k)->pos), (dist_) = (k)->dist, (mu_) = (k)->mu)

#include "pbd_core.h"

#define PBD_NDOUBLE(T) ((sizeof(T) + sizeof(double) - 1) / sizeof(double))

//---------------------------------------------------------------------------------------------------------
// support

// mass of body b and its welded descendants (the bodies whose weldid is b): the PBD body's mass
static double weld_mass(const physModel* m, int b) {
  double mass = 0;
  for (int k = b; k < m->nbody; k++)
    if (m->body_weldid[k] == b) mass += m->body_mass[k];
  return mass;
}

// 1 if the PBD step supports m; else 0 and the reason in msg
int phys_pbd_supported(const physModel* m, char* msg, size_t n) {
  const char* what = NULL;
  const char* kind = NULL;   // "body" or "joint" when one object is the reason
  int id = -1;
  for (int b = 1; b < m->nbody && !what; b++) {
    if (m->body_jntnum[b] > 1) what = "a body with more than one joint", kind = "body", id = b;
    else if (m->body_jntnum[b] > 0 && !(weld_mass(m, b) > 0))
      what = "a body with joints and no mass (its own and its welded descendants')", kind = "body", id = b;
  }
  for (int j = 0; j < m->njnt && !what; j++) {
    int t = m->jnt_type[j], dof = m->jnt_dofadr[j], rot = t == PHYS_JNT_BALL || t == PHYS_JNT_FREE;
    int ndof = t == PHYS_JNT_FREE ? 6 : (t == PHYS_JNT_BALL ? 3 : 1), damped = 0;
    for (int i = 0; i < ndof; i++) damped |= m->dof_damping[dof + i] != 0;
    kind = "joint", id = j;
    if (rot && m->jnt_limited[j]) what = "limits on a ball or free joint";
    else if (rot && (m->jnt_stiffness[j] != 0 || damped)) what = "a spring or damping on a ball or free joint";
    else if (t == PHYS_JNT_SLIDE && m->dof_armature[dof] != 0) what = "armature on a slide joint";
    else if (t == PHYS_JNT_FREE && (m->dof_armature[dof] != 0 || m->dof_armature[dof + 1] != 0 ||
                                    m->dof_armature[dof + 2] != 0))
      what = "armature on a free joint's translation";
  }
  for (int s = 0; s < m->nspring && !what; s++) {
    kind = "spring", id = s;
    if (!phys_tendon_plain(m, s))
      what = m->spring_type[s] == PHYS_SPRING_FIXED ? "fixed tendons" : "tendons that wrap geoms or branch at pulleys";
    else if (m->spring_frictionloss[s] != 0) what = "tendon frictionloss";
  }
  for (int a = 0; a < m->nu && !what; a++) {
    kind = "actuator", id = a;
    if (m->actuator_trntype[a] == PHYS_TRN_SPRING || m->actuator_trntype[a] == PHYS_TRN_RESTLENGTH)
      what = "actuators on tendons";
    else if (m->actuator_trntype[a] == PHYS_TRN_BODY)
      what = "adhesion actuators";
  }
  if (!what) kind = NULL;
  if (!what && m->neq > 0) what = "equality constraints";
  if (!what && m->nfrictionloss > 0) what = "joint frictionloss";
  if (!what && m->na > 0) what = "actuators with dynamics (activations)";
  if (!what && m->nsensor > 0) what = "sensors";
  if (!what && m->residual) what = "a residual network";
  if (!what) return 1;
  if (kind) {
    const char* name = phys_id2name(m, kind, id);
    snprintf(msg, n, "the pbd integrator does not support %s yet (%s '%s', id %d)", what, kind, name, id);
  } else {
    snprintf(msg, n, "the pbd integrator does not support %s yet", what);
  }
  return 0;
}

size_t phys_pbd_arena_need(const physModel* m) {
  size_t nb = (size_t)m->nbody, nv = (size_t)m->nv, nc = (size_t)m->nconmax;
  size_t step = nb * PBD_NDOUBLE(pbdBody) + (size_t)m->njnt * PBD_NDOUBLE(pbdJoint) +
                (size_t)m->nspring * PBD_NDOUBLE(pbdTendon) + 4 * (size_t)m->nspringsite + 4 +
                nc * PBD_NDOUBLE(pbdContact) + 7 * nb + nb + nv * nv + 8 * nv + (size_t)m->nq + nv + 16;
  // the derivatives (src/grad/pbd_deriv.c): the step's arrays on complex numbers (twice the doubles), the
  // complex kinematics, their contact list, the actuator force and contact geometry derivatives, the columns'
  // parameter directions (pbd_dir_size) and a placement's subtree motion (6 nbody)
  size_t cdata = (size_t)m->nq + 3 * nv + 37 * nb + 6 * (size_t)m->njnt + 40;
  size_t point = nc * ((sizeof(physContact) + 7) / 8 + 7 * nv) + nv * (2 * nv + (size_t)m->nu + 4) + 4 * nb +
                 (size_t)m->ngeom + (size_t)m->njnt + 3 * (size_t)m->nspring + 7 * nc + 6 * nb + 16;
  return step + 2 * (step + cdata) + point;
}

//---------------------------------------------------------------------------------------------------------
// the step

int phys_pbd_step(const physModel* m, physData* d, physContactList* cl, double* volatile* qpos0,
                  double* volatile* qvel0) {
  char msg[200];
  if (!phys_pbd_supported(m, msg, sizeof msg)) {
    phys_data_warn(d, PHYS_WARN_REJECTED, "phys_step: %s; step rejected", msg);
    return 0;
  }
  int nq = m->nq, nv = m->nv;
  double dt = m->opt.timestep;
  size_t mark = phys_stack_mark(d);
  double* q0 = phys_stack_alloc(d, (size_t)nq);
  double* v0 = phys_stack_alloc(d, (size_t)nv);
  memcpy(q0, d->qpos, sizeof(double) * (size_t)nq);
  memcpy(v0, d->qvel, sizeof(double) * (size_t)nv);
  *qpos0 = q0, *qvel0 = v0;

  pbdCtx c;
  memset(&c, 0, sizeof c);
  c.m = m;
  c.body = (pbdBody*)phys_stack_alloc(d, (size_t)m->nbody * PBD_NDOUBLE(pbdBody));
  c.joint = (pbdJoint*)phys_stack_alloc(d, (size_t)m->njnt * PBD_NDOUBLE(pbdJoint) + 1);
  c.con = (pbdContact*)phys_stack_alloc(d, (size_t)m->nconmax * PBD_NDOUBLE(pbdContact) + 1);
  c.ten = (pbdTendon*)phys_stack_alloc(d, (size_t)m->nspring * PBD_NDOUBLE(pbdTendon) + 1);
  c.tbody = (int*)phys_stack_alloc(d, (size_t)m->nspringsite + 1);
  c.tr = phys_stack_alloc(d, 3 * (size_t)m->nspringsite + 1);
  c.acc = phys_stack_alloc(d, 9 * (size_t)m->nbody);
  int* idx = (int*)phys_stack_alloc(d, (size_t)m->nbody);
  double* jacp = phys_stack_alloc(d, 3 * (size_t)nv);
  double* jacr = phys_stack_alloc(d, 3 * (size_t)nv);
  double* A = phys_stack_alloc(d, (size_t)nv * (size_t)nv);
  double* rhs = phys_stack_alloc(d, (size_t)nv);
  int substeps = m->opt.pbd_substeps > 0 ? m->opt.pbd_substeps : 1;
  int iterations = m->opt.pbd_iterations > 0 ? m->opt.pbd_iterations : 1;
  c.h = dt / substeps;
  c.compliance = m->opt.pbd_compliance;
  c.jacobi = m->opt.pbd_jacobi;

  // start state: kinematics, actuator forces, contacts, maximal coordinates
  phys_kinematics(m, d);
  phys_com_pos(m, d);
  phys_com_vel(m, d);
  phys_actuation(m, d);
  cl->n = 0;
  if (!(m->opt.disableflags & PHYS_DSBL_CONTACT)) phys_collision_into(m, d, cl);
  cl->nlimit = 0;
  int ok = pbd_advance(&c, d, cl, idx, jacp, jacr, A, rhs, substeps, iterations);
  for (int i = 0; i < cl->n; i++) memset(cl->con[i].lambda, 0, sizeof(cl->con[i].lambda));
  for (int i = 0; ok && i < c.nc; i++) cl->con[c.con[i].src].lambda[0] = c.con[i].impulse;
  memset(d->qfrc_constraint, 0, sizeof(double) * (size_t)nv);
  int finite = ok;
  for (int i = 0; finite && i < nq; i++) finite = isfinite(d->qpos[i]);
  for (int i = 0; finite && i < nv; i++) finite = isfinite(d->qvel[i]);
  if (!finite) {
    memcpy(d->qpos, q0, sizeof(double) * (size_t)nq);
    memcpy(d->qvel, v0, sizeof(double) * (size_t)nv);
    phys_data_warn(d, PHYS_WARN_REJECTED, "phys_step: pbd: %s at time %g; step rejected, state restored",
                   ok ? "non-finite state" : "singular body inertia or velocity system", d->time);
    phys_stack_free(d, mark);
    return 0;
  }
  for (int i = 0; i < nv; i++) d->qacc[i] = (d->qvel[i] - v0[i]) / dt;
  d->time += dt;
  phys_stack_free(d, mark);
  return 1;
}
