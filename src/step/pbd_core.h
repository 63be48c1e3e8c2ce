// pbd_core.h - the arithmetic of the position-based step (pbd.c), written once for two number types: pbd.c
// includes it with pbdReal = double (the step), src/grad/pbd_deriv.c with pbdReal = double complex (its
// derivatives by the complex step: the same operations on x + i h dx give f(x) + i h f'(x) dx exactly to
// rounding for h = 1e-30, since every product of two imaginary parts vanishes). The includer defines, before
// including this file:
//   pbdReal                  the number type
//   PBD_DATA                 the state's type: fields qpos, qvel, xpos, xquat, xmat, xipos, ximat,
//                            qfrc_actuator, qfrc_applied, xfrc_applied as pbdReal arrays (physData for double)
//   r_cross3 ... r_chol_solve the vector, quaternion and Cholesky helpers of rot.h and chol.h on pbdReal
//   r_fabs, r_fmin, r_fmax, r_atan2, RE(x)   the scalar functions and the real part (branches read RE)
//   PBD_JAC(m, d, point, body, jacp, jacr)   phys_jac on PBD_DATA
//   PBD_KINEMATICS(m, d)     phys_kinematics and phys_com_pos on PBD_DATA
//   PBD_MASS(c, b), PBD_DAMPING(c, dof), PBD_STIFFNESS(c, j)   the model's body mass, dof damping, joint
//                            stiffness (the derivative adds its parameter directions, c->seed)
//   PBD_CONTACT(c, k, i, pos, n, dist, mu)   contact k (number i of the step's list): point, normal, distance
//                            and friction as pbdReal
//   PBD_BODY_POS(c, d, b, res)   body b's placement body_pos as pbdReal (the derivative: with pos:BODY's tangent)
//   PBD_SPRING(c, s, k, b, L0)   spring s's stiffness, damping and rest length as pbdReal
// Everything is static: each includer gets its own copy of the functions. The comments of pbd.c's header say
// what the step computes.
#ifndef PHYS_PBD_CORE_H
#define PHYS_PBD_CORE_H

// a rigid body of the PBD step (a body with joints and its welded descendants)
typedef struct pbdBody_ {
  pbdReal p[3], q[4];        // centre of mass (world) and orientation of the root body frame (w first)
  pbdReal c[3];              // centre of mass in the root body frame
  pbdReal v[3], w[3];        // centre of mass velocity, angular velocity (world)
  pbdReal pp[3], qp[4];      // pose at the substep's start
  pbdReal f[3], t[3];        // the step's constant force and torque (world, about the centre of mass)
  pbdReal fs[3], ts[3];      // the substep's joint spring force and torque
  pbdReal I[9], Iinv[9];     // inertia about the centre of mass and its inverse, root body frame
  pbdReal R[9];              // rotation matrix of q (kept current)
  pbdReal minv;              // inverse mass
  int body;                 // physid body id of the root
} pbdBody;

// a joint constraint between its body (child) and the frame F its body hangs from in the parent body
typedef struct pbdJoint_ {
  int jnt, type;            // physid joint id and type
  int child, parent;        // PBD body indices (parent -1: the world or a body welded to it)
  pbdReal fpos[3];           // F's origin relative to the parent's centre of mass, parent root frame (world if -1)
  pbdReal fquat[4];          // F's orientation in the parent root frame (world if -1)
  pbdReal q0;                // the joint's hinge/slide coordinate at the step's start (unwrapping)
  pbdReal lam_pos[3], lam_ang[3];  // XPBD multipliers of the substep (one per row)
} pbdJoint;

// a contact constraint between the bodies of its two geoms
typedef struct pbdContact_ {
  int src;                  // its index in the step's contact list
  int b0, b1;               // PBD bodies of geom 0 and geom 1 (-1: world)
  pbdReal r0[3], r1[3];      // the surface points relative to the centre of mass, root frame (world if -1)
  pbdReal n[3];              // normal from geom 0 to geom 1 (world, fixed over the step)
  pbdReal mu, e;             // friction and restitution
  pbdReal lam_n;             // normal multiplier of the substep
  pbdReal vn_pre;            // normal velocity at the substep's start (restitution)
  pbdReal impulse;           // normal impulse summed over the substeps (N s)
} pbdContact;

// a spring (a spatial tendon through sites, pbd.c): an XPBD constraint on its length, compliance 1/k with
// damping b, and its limit; its sites are entries adr.. adr+n-1 of the step's site arrays (tbody, tr)
typedef struct pbdTendon_ {
  int s, adr, n;            // physid spring id, its first path entry (spring_site), its number of sites
  pbdReal k, b, L0;          // stiffness, damping, rest length (0, 0 with the passive forces disabled)
  pbdReal lam;               // XPBD multiplier of the substep
  pbdReal Lp;                // length at the substep's start
} pbdTendon;

// the step's state: bodies, joints, springs, contacts and the Jacobi accumulators
typedef struct pbdCtx_ {
  const physModel* m;
  pbdBody* body;
  int nb;
  pbdJoint* joint;
  int nj;
  pbdContact* con;
  int nc;
  pbdTendon* ten;
  int nt;
  int* tbody;               // the PBD body of each spring path site (-1: world; nspringsite)
  pbdReal* tr;               // the site relative to that body's centre of mass, root frame (world if -1; 3 each)
  pbdReal h;                 // substep
  pbdReal compliance;        // joint compliance (alpha)
  int jacobi;               // 1: corrections accumulated (acc: dx 3, dtheta 3, count 1 per body)
  pbdReal* acc;
  const void* seed;         // the derivative's directions in the parameters (pbd_deriv.c; NULL in the step)
} pbdCtx;



//---------------------------------------------------------------------------------------------------------
// small rigid-body helpers

// res = x (n model numbers) as the step's numbers
static void loadn(pbdReal* res, const double* x, int n) {
  for (int i = 0; i < n; i++) res[i] = x[i];
}
static void load3(pbdReal res[3], const double x[3]) { loadn(res, x, 3); }

// res = A v for a row-major 3x3 A
static void mat3_vec(pbdReal res[3], const pbdReal A[9], const pbdReal v[3]) { r_mat_vec3(res, A, v); }

// inverse of a symmetric positive definite 3x3 matrix by cofactors; 0 if singular
static int inv3(pbdReal res[9], const pbdReal A[9]) {
  pbdReal c0 = A[4] * A[8] - A[5] * A[7], c1 = A[5] * A[6] - A[3] * A[8], c2 = A[3] * A[7] - A[4] * A[6];
  pbdReal det = A[0] * c0 + A[1] * c1 + A[2] * c2;
  if (!(RE(det) > 0)) return 0;
  res[0] = c0 / det, res[1] = (A[2] * A[7] - A[1] * A[8]) / det, res[2] = (A[1] * A[5] - A[2] * A[4]) / det;
  res[3] = c1 / det, res[4] = (A[0] * A[8] - A[2] * A[6]) / det, res[5] = (A[2] * A[3] - A[0] * A[5]) / det;
  res[6] = c2 / det, res[7] = (A[1] * A[6] - A[0] * A[7]) / det, res[8] = (A[0] * A[4] - A[1] * A[3]) / det;
  return 1;
}

// world point of the offset r (relative to the centre of mass, root frame) of body k; k < 0: r itself (world)
static void body_point(pbdReal res[3], const pbdCtx* c, int k, const pbdReal r[3]) {
  if (k < 0) {
    r_copy3(res, r);
    return;
  }
  const pbdBody* B = c->body + k;
  mat3_vec(res, B->R, r);
  for (int i = 0; i < 3; i++) res[i] += B->p[i];
}

// res = I_world^-1 x = R Iinv R' x of body k
static void inv_inertia_mul(pbdReal res[3], const pbdBody* B, const pbdReal x[3]) {
  pbdReal a[3], b[3];
  r_matT_vec3(a, B->R, x);
  mat3_vec(b, B->Iinv, a);
  mat3_vec(res, B->R, b);
}

// generalized inverse mass of body k for a correction along unit n at arm r (world): 1/m + (r x n)' I^-1 (r x n);
// angular (r NULL): n' I^-1 n. 0 for the world
static pbdReal gen_inv_mass(const pbdCtx* c, int k, const pbdReal r[3], const pbdReal n[3]) {
  if (k < 0) return 0;
  const pbdBody* B = c->body + k;
  pbdReal a[3], b[3];
  if (r) r_cross3(a, r, n);
  else r_copy3(a, n);
  inv_inertia_mul(b, B, a);
  return (r ? B->minv : 0) + r_dot3(a, b);
}

// rotate body B by the small rotation vector dth (world): q += 0.5 (0, dth) q, normalized
static void rotate_body(pbdBody* B, const pbdReal dth[3]) {
  pbdReal w[4] = {0, dth[0], dth[1], dth[2]}, dq[4];
  r_quat_mul(dq, w, B->q);
  for (int i = 0; i < 4; i++) B->q[i] += 0.5 * dq[i];
  r_quat_normalize(B->q);
  r_quat2mat(B->R, B->q);
}

// move body k by dx and rotate it by dth (Gauss-Seidel), or add both to its Jacobi accumulator
static void correct_body(pbdCtx* c, int k, const pbdReal dx[3], const pbdReal dth[3]) {
  if (k < 0) return;
  if (c->jacobi) {
    pbdReal* a = c->acc + 7 * k;
    for (int i = 0; i < 3; i++) a[i] += dx[i], a[3 + i] += dth[i];
    a[6] += 1;
    return;
  }
  pbdBody* B = c->body + k;
  for (int i = 0; i < 3; i++) B->p[i] += dx[i];
  rotate_body(B, dth);
}

// apply the positional impulse s*P at arm r (world) to body k: dx = s P / m, dth = s I^-1 (r x P)
static void apply_positional(pbdCtx* c, int k, const pbdReal r[3], const pbdReal P[3], pbdReal s) {
  if (k < 0) return;
  const pbdBody* B = c->body + k;
  pbdReal dx[3], rp[3], dth[3];
  for (int i = 0; i < 3; i++) dx[i] = s * P[i] * B->minv;
  r_cross3(rp, r, P);
  inv_inertia_mul(dth, B, rp);
  for (int i = 0; i < 3; i++) dth[i] *= s;
  correct_body(c, k, dx, dth);
}

// XPBD block constraint of n rows (1..3) along the orthonormal directions t[0..n) (world): positional (arms r1,
// r2) drives the components t_i.e of e = a1 - a2 to 0; angular (r1 = r2 = NULL) turns body k1 by -e relative
// to k2 in the span of t. The rows are solved together, (K + at 1) dl = -t.e - at lam with K_ij the
// generalized inverse mass t_i' W t_j (positional: (1/m1 + 1/m2) d_ij + sum (r x t_i)' I^-1 (r x t_j); angular:
// sum t_i' I^-1 t_j), so a joint's rows need no iterations among themselves; lam (n) is updated
static void solve_block(pbdCtx* c, int k1, const pbdReal* r1, int k2, const pbdReal* r2, const pbdReal t[][3], int n,
                        const pbdReal e[3], pbdReal alpha, pbdReal* lam) {
  pbdReal K[9], rhs[3], dl[3], at = alpha / (c->h * c->h), u[3][3][2];
  for (int i = 0; i < n; i++) {
    // u[i][.][s] = I_s^-1 (r_s x t_i) (positional) or I_s^-1 t_i (angular) for the two bodies
    for (int s = 0; s < 2; s++) {
      int k = s ? k2 : k1;
      const pbdReal* r = s ? r2 : r1;
      pbdReal a[3], b[3] = {0, 0, 0};
      if (r) r_cross3(a, r, t[i]);
      else r_copy3(a, t[i]);
      if (k >= 0) inv_inertia_mul(b, c->body + k, a);
      for (int l = 0; l < 3; l++) u[i][l][s] = b[l];
    }
  }
  pbdReal minv = (r1 && k1 >= 0 ? c->body[k1].minv : 0) + (r2 && k2 >= 0 ? c->body[k2].minv : 0);
  for (int i = 0; i < n; i++) {
    for (int j = 0; j < n; j++) {
      pbdReal sum = (i == j) ? minv + at : 0;
      for (int s = 0; s < 2; s++) {
        const pbdReal* r = s ? r2 : r1;
        pbdReal a[3];
        if (r) r_cross3(a, r, t[i]);
        else r_copy3(a, t[i]);
        for (int l = 0; l < 3; l++) sum += a[l] * u[j][l][s];
      }
      K[n * i + j] = sum;
    }
    rhs[i] = -r_dot3(t[i], e) - at * lam[i];
  }
  if (r_chol_factor(K, n, 1e-300) != n) return;
  r_chol_solve(dl, K, rhs, n);
  pbdReal P[3] = {0, 0, 0};
  for (int i = 0; i < n; i++) {
    lam[i] += dl[i];
    for (int l = 0; l < 3; l++) P[l] += dl[i] * t[i][l];
  }
  if (r1) {
    apply_positional(c, k1, r1, P, 1);
    apply_positional(c, k2, r2, P, -1);
    return;
  }
  pbdReal dth[3], zero[3] = {0, 0, 0};
  for (int s = 0; s < 2; s++) {
    int k = s ? k2 : k1;
    if (k < 0) continue;
    inv_inertia_mul(dth, c->body + k, P);
    for (int i = 0; i < 3; i++) dth[i] *= s ? -1 : 1;
    correct_body(c, k, zero, dth);
  }
}

// XPBD positional constraint driving e = a1 - a2 to 0 along its own direction (a1 on body k1 at arm r1, a2 on
// k2 at r2, world arms): solve_block's one row; returns the multiplier increment (<= 0)
static pbdReal solve_positional(pbdCtx* c, int k1, const pbdReal r1[3], int k2, const pbdReal r2[3], const pbdReal e[3],
                               pbdReal alpha, pbdReal* lam) {
  pbdReal C = r_norm3(e), lam0 = *lam;
  if (RE(C) < 1e-15) return 0;
  const pbdReal t[1][3] = {{e[0] / C, e[1] / C, e[2] / C}};
  solve_block(c, k1, r1, k2, r2, t, 1, e, alpha, lam);
  return *lam - lam0;
}

// XPBD angular constraint: body k1 must turn by -e relative to k2 (e a rotation vector, world): one row
static void solve_angular(pbdCtx* c, int k1, int k2, const pbdReal e[3], pbdReal alpha, pbdReal* lam) {
  pbdReal th = r_norm3(e);
  if (RE(th) < 1e-15) return;
  const pbdReal t[1][3] = {{e[0] / th, e[1] / th, e[2] / th}};
  solve_block(c, k1, NULL, k2, NULL, t, 1, e, alpha, lam);
}

// two unit vectors completing the unit a to an orthonormal basis
static void perp_basis(const pbdReal a[3], pbdReal t[2][3]) {
  pbdReal x[3] = {1, 0, 0};
  if (RE(r_fabs(a[0])) > 0.6) x[0] = 0, x[1] = 1;
  r_cross3(t[0], a, x);
  r_normalize3(t[0]);
  r_cross3(t[1], a, t[0]);
}

static const pbdReal AXES[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};

//---------------------------------------------------------------------------------------------------------
// joint frames and coordinates

// world pose of joint J's parent frame F: origin fo, orientation fq
static void frame_world(const pbdCtx* c, const pbdJoint* J, pbdReal fo[3], pbdReal fq[4]) {
  body_point(fo, c, J->parent, J->fpos);
  if (J->parent < 0) memcpy(fq, J->fquat, 4 * sizeof(pbdReal));
  else r_quat_mul(fq, c->body[J->parent].q, J->fquat);
}

// world origin of the child's body frame: p - R c
static void child_origin(pbdReal o[3], const pbdBody* B) {
  pbdReal rc[3];
  mat3_vec(rc, B->R, B->c);
  r_sub3(o, B->p, rc);
}

// hinge/slide coordinate of J at the current poses (the joint's qpos: ref + angle or displacement), the hinge
// angle unwrapped next to J->q0; also the world axis (F's) in axis
static pbdReal joint_coord(const pbdCtx* c, const pbdJoint* J, pbdReal axis[3]) {
  const physModel* m = c->m;
  const pbdBody* B = c->body + J->child;
  pbdReal fo[3], fq[4], ja[3], ref = m->qpos0[m->jnt_qposadr[J->jnt]];
  frame_world(c, J, fo, fq);
  load3(ja, m->jnt_axis + 3 * J->jnt);
  r_quat_rotate(axis, fq, ja);
  if (J->type == PHYS_JNT_SLIDE) {
    pbdReal o[3], dlt[3];
    child_origin(o, B);
    r_sub3(dlt, o, fo);
    return ref + r_dot3(dlt, axis);
  }
  pbdReal fc[4], rel[4];
  r_quat_conj(fc, fq);
  r_quat_mul(rel, fc, B->q);
  pbdReal ang = 2 * r_atan2(r_dot3(rel + 1, ja), rel[0]);
  return J->q0 + r_wrap_angle(ref + ang - J->q0);
}

// the world arms of a slide joint: r1 from the child's centre of mass to its origin, r2 from the parent's centre
// of mass (world origin for -1) to the origin's foot on the axis; e = the origin's offset perpendicular to the axis
static void slide_arms(const pbdCtx* c, const pbdJoint* J, pbdReal r1[3], pbdReal r2[3], pbdReal e[3], pbdReal* s) {
  const pbdBody* B = c->body + J->child;
  pbdReal fo[3], fq[4], axis[3], o[3], dlt[3], foot[3], ja[3];
  frame_world(c, J, fo, fq);
  load3(ja, c->m->jnt_axis + 3 * J->jnt);
  r_quat_rotate(axis, fq, ja);
  child_origin(o, B);
  r_sub3(dlt, o, fo);
  *s = r_dot3(dlt, axis);
  for (int i = 0; i < 3; i++) foot[i] = fo[i] + *s * axis[i], e[i] = o[i] - foot[i];
  r_sub3(r1, o, B->p);
  if (J->parent < 0) r_copy3(r2, foot);
  else r_sub3(r2, foot, c->body[J->parent].p);
}

// one sweep's corrections of joint J: positional and angular parts, then its limit
static void solve_joint(pbdCtx* c, pbdJoint* J, int limits) {
  const physModel* m = c->m;
  const pbdBody* B = c->body + J->child;
  int j = J->jnt;
  pbdReal fo[3], fq[4], e[3], r1[3], r2[3], zero = 0, ja[3], jp[3];
  if (J->type == PHYS_JNT_FREE) return;
  load3(ja, m->jnt_axis + 3 * j);
  load3(jp, m->jnt_pos + 3 * j);
  frame_world(c, J, fo, fq);
  if (J->type == PHYS_JNT_HINGE) {
    // axis alignment: the child's axis a1 onto F's a2 (turning the child by a1 x a2 = -e), the two rows
    // perpendicular to a2 (the rotation about the axis stays free)
    pbdReal a1[3], a2[3], t[2][3];
    r_quat_rotate(a1, B->q, ja);
    r_quat_rotate(a2, fq, ja);
    r_cross3(e, a2, a1);
    perp_basis(a2, t);
    solve_block(c, J->child, NULL, J->parent, NULL, (const pbdReal(*)[3])t, 2, e, c->compliance, J->lam_ang);
  } else if (J->type == PHYS_JNT_SLIDE) {
    // orientation lock: the child's frame onto F's, e = the rotation vector of q_child * conj(q_F), 3 rows
    pbdReal fc[4], err[4];
    r_quat_conj(fc, fq);
    r_quat_mul(err, B->q, fc);
    pbdReal sg = RE(err[0]) < 0 ? -2 : 2;
    for (int i = 0; i < 3; i++) e[i] = sg * err[1 + i];
    solve_block(c, J->child, NULL, J->parent, NULL, AXES, 3, e, c->compliance, J->lam_ang);
  }
  if (J->type == PHYS_JNT_SLIDE) {
    // the child's origin onto the axis: the two rows perpendicular to it
    pbdReal s, axis[3], t[2][3];
    slide_arms(c, J, r1, r2, e, &s);
    r_quat_rotate(axis, fq, ja);
    perp_basis(axis, t);
    solve_block(c, J->child, r1, J->parent, r2, (const pbdReal(*)[3])t, 2, e, c->compliance, J->lam_pos);
  } else {
    // anchor coincidence: the anchor on the child (jnt_pos in its frame) onto the anchor on F, 3 rows
    pbdReal a1[3], a2[3], t[3];
    r_sub3(t, jp, B->c);
    mat3_vec(r1, B->R, t);
    for (int i = 0; i < 3; i++) a1[i] = B->p[i] + r1[i];
    r_quat_rotate(t, fq, jp);
    for (int i = 0; i < 3; i++) a2[i] = fo[i] + t[i];
    if (J->parent < 0) r_copy3(r2, a2);
    else r_sub3(r2, a2, c->body[J->parent].p);
    r_sub3(e, a1, a2);
    solve_block(c, J->child, r1, J->parent, r2, AXES, 3, e, c->compliance, J->lam_pos);
  }
  if (!limits || !m->jnt_limited[j]) return;
  // limits: the coordinate back to its range (rigid inequality)
  pbdReal axis[3], x = joint_coord(c, J, axis), lo = m->jnt_range[2 * j], hi = m->jnt_range[2 * j + 1];
  pbdReal over = RE(x) < RE(lo) ? x - lo : (RE(x) > RE(hi) ? x - hi : 0);
  if (over == 0) return;
  for (int i = 0; i < 3; i++) e[i] = over * axis[i];
  if (J->type == PHYS_JNT_HINGE) {
    solve_angular(c, J->child, J->parent, e, 0, &zero);
  } else {
    pbdReal s, eperp[3];
    slide_arms(c, J, r1, r2, eperp, &s);
    solve_positional(c, J->child, r1, J->parent, r2, e, 0, &zero);
  }
}

//---------------------------------------------------------------------------------------------------------
// springs (spatial tendons through sites)

#define PBD_TMAX PHYS_TENDON_MAXPOINT

// the world points of tendon T's sites at the current poses into pt; returns its length sum |pt_i+1 - pt_i|
static pbdReal tendon_points(const pbdCtx* c, const pbdTendon* T, pbdReal pt[][3]) {
  pbdReal L = 0, dl[3];
  for (int i = 0; i < T->n; i++) {
    body_point(pt[i], c, c->tbody[T->adr + i], c->tr + 3 * (T->adr + i));
    if (i == 0) continue;
    r_sub3(dl, pt[i], pt[i - 1]);
    L += r_norm3(dl);
  }
  return L;
}

// 1 if site i of T is the first of T's sites on its body (that body's slot) and on a body
static int tendon_slot(const pbdCtx* c, const pbdTendon* T, int i) {
  const int* bd = c->tbody + T->adr;
  if (bd[i] < 0) return 0;
  for (int j = 0; j < i; j++)
    if (bd[j] == bd[i]) return 0;
  return 1;
}

// T's length gradient per body: dL/dp_j = u_j-1 - u_j at site j (u_j the unit vector from site j to j + 1), summed
// into the slot of its body as the force F = sum dL/dp_j and torque tq = sum arm_j x dL/dp_j (arm from the
// centre of mass); returns the generalized inverse mass w = sum over slots F'F / m + tq' I^-1 tq
static pbdReal tendon_gradient(const pbdCtx* c, const pbdTendon* T, pbdReal pt[][3], pbdReal F[][3], pbdReal tq[][3]) {
  int n = T->n;
  const int* bd = c->tbody + T->adr;
  pbdReal u[PBD_TMAX][3], w = 0;
  for (int i = 0; i + 1 < n; i++) {
    r_sub3(u[i], pt[i + 1], pt[i]);
    pbdReal l = r_norm3(u[i]);
    for (int k = 0; k < 3; k++) u[i][k] = RE(l) > 0 ? u[i][k] / l : 0;
  }
  for (int i = 0; i < n; i++)
    for (int k = 0; k < 3; k++) F[i][k] = tq[i][k] = 0;
  for (int j = 0; j < n; j++) {
    if (bd[j] < 0) continue;
    int i = 0;
    while (bd[i] != bd[j]) i++;   // the slot
    pbdReal g[3], arm[3], t[3];
    for (int k = 0; k < 3; k++) g[k] = (j > 0 ? u[j - 1][k] : 0) - (j + 1 < n ? u[j][k] : 0);
    r_sub3(arm, pt[j], c->body[bd[j]].p);
    r_cross3(t, arm, g);
    for (int k = 0; k < 3; k++) F[i][k] += g[k], tq[i][k] += t[k];
  }
  for (int i = 0; i < n; i++) {
    if (!tendon_slot(c, T, i)) continue;
    const pbdBody* B = c->body + bd[i];
    pbdReal it[3];
    inv_inertia_mul(it, B, tq[i]);
    w += B->minv * r_dot3(F[i], F[i]) + r_dot3(tq[i], it);
  }
  return w;
}

// move T's bodies by the multiplier increment dl along the gradient: dx = dl F / m, dth = dl I^-1 tq per slot
static void tendon_move(pbdCtx* c, const pbdTendon* T, pbdReal F[][3], pbdReal tq[][3], pbdReal dl) {
  for (int i = 0; i < T->n; i++) {
    if (!tendon_slot(c, T, i)) continue;
    int k = c->tbody[T->adr + i];
    const pbdBody* B = c->body + k;
    pbdReal dx[3], dth[3];
    inv_inertia_mul(dth, B, tq[i]);
    for (int l = 0; l < 3; l++) dx[l] = dl * B->minv * F[i][l], dth[l] *= dl;
    correct_body(c, k, dx, dth);
  }
}

// one sweep's corrections of spring T: the XPBD row of C = L - L0 with compliance 1/k and damping b (Macklin et
// al. 2016's damped form, both sides times k so that k = 0 stays finite):
//   dl = -(k C + lam / h^2 + (b / h) (L - Lp)) / ((k + b / h) w + 1 / h^2),
// then its limit (a rigid one-sided row back to the range, as the joints')
static void solve_tendon(pbdCtx* c, pbdTendon* T, int limits) {
  pbdReal pt[PBD_TMAX][3], F[PBD_TMAX][3], tq[PBD_TMAX][3], h = c->h, L = tendon_points(c, T, pt);
  const physModel* m = c->m;
  if (RE(T->k) != 0 || RE(T->b) != 0) {
    pbdReal w = tendon_gradient(c, T, pt, F, tq);
    if (RE(w) > 0) {
      pbdReal dl = -(T->k * (L - T->L0) + T->lam / (h * h) + T->b / h * (L - T->Lp)) /
                   ((T->k + T->b / h) * w + 1 / (h * h));
      T->lam += dl;
      tendon_move(c, T, F, tq, dl);
      if (c->jacobi == 0) L = tendon_points(c, T, pt);
    }
  }
  if (!limits || !m->spring_limited[T->s]) return;
  double lo = m->spring_range[2 * T->s], hi = m->spring_range[2 * T->s + 1];
  pbdReal over = RE(L) < lo ? L - lo : (RE(L) > hi ? L - hi : 0);
  if (over == 0) return;
  pbdReal w = tendon_gradient(c, T, pt, F, tq);
  if (RE(w) > 0) tendon_move(c, T, F, tq, -over / w);
}

//---------------------------------------------------------------------------------------------------------
// contacts

// world arm of contact point r of body k (k < 0: the world point itself) and the point
static void contact_point(const pbdCtx* c, int k, const pbdReal r[3], pbdReal arm[3], pbdReal pt[3]) {
  body_point(pt, c, k, r);
  if (k < 0) r_copy3(arm, pt);
  else r_sub3(arm, pt, c->body[k].p);
}

// the same point at the substep's start pose
static void contact_point_prev(const pbdCtx* c, int k, const pbdReal r[3], pbdReal pt[3]) {
  if (k < 0) {
    r_copy3(pt, r);
    return;
  }
  const pbdBody* B = c->body + k;
  pbdReal R[9];
  r_quat2mat(R, B->qp);
  mat3_vec(pt, R, r);
  for (int i = 0; i < 3; i++) pt[i] += B->pp[i];
}

// one sweep's corrections of contact C: penetration along n, then static friction on the tangential drift
static void solve_contact(pbdCtx* c, pbdContact* C) {
  pbdReal a0[3], a1[3], p0[3], p1[3], dp[3], e[3];
  contact_point(c, C->b0, C->r0, a0, p0);
  contact_point(c, C->b1, C->r1, a1, p1);
  r_sub3(dp, p1, p0);
  pbdReal d = r_dot3(dp, C->n);
  if (RE(d) >= 0) return;
  pbdReal lam = 0;
  for (int i = 0; i < 3; i++) e[i] = d * C->n[i];
  C->lam_n -= solve_positional(c, C->b1, a1, C->b0, a0, e, 0, &lam);
  // static friction: undo the points' relative tangential motion over the substep while the multiplier it takes
  // stays within mu lam_n
  pbdReal q0[3], q1[3], drift[3];
  contact_point(c, C->b0, C->r0, a0, p0);
  contact_point(c, C->b1, C->r1, a1, p1);
  contact_point_prev(c, C->b0, C->r0, q0);
  contact_point_prev(c, C->b1, C->r1, q1);
  for (int i = 0; i < 3; i++) drift[i] = (p1[i] - q1[i]) - (p0[i] - q0[i]);
  pbdReal dn = r_dot3(drift, C->n);
  for (int i = 0; i < 3; i++) drift[i] -= dn * C->n[i];
  pbdReal len = r_norm3(drift);
  if (RE(len) < 1e-15) return;
  pbdReal t[3] = {drift[0] / len, drift[1] / len, drift[2] / len};
  pbdReal w = gen_inv_mass(c, C->b1, a1, t) + gen_inv_mass(c, C->b0, a0, t);
  if (RE(w) <= 0 || RE(len / w) >= RE(C->mu * C->lam_n)) return;
  lam = 0;
  solve_positional(c, C->b1, a1, C->b0, a0, drift, 0, &lam);
}

// velocity of the point at arm r (world) of body k (0 for the world)
static void point_velocity(pbdReal res[3], const pbdCtx* c, int k, const pbdReal r[3]) {
  if (k < 0) {
    res[0] = res[1] = res[2] = 0;
    return;
  }
  const pbdBody* B = c->body + k;
  r_cross3(res, B->w, r);
  for (int i = 0; i < 3; i++) res[i] += B->v[i];
}

// relative velocity of contact C's points (geom 1's minus geom 0's) and the world arms
static void contact_velocity(const pbdCtx* c, const pbdContact* C, pbdReal vrel[3], pbdReal a0[3], pbdReal a1[3]) {
  pbdReal p[3], v0[3], v1[3];
  contact_point(c, C->b0, C->r0, a0, p);
  contact_point(c, C->b1, C->r1, a1, p);
  point_velocity(v0, c, C->b0, a0);
  point_velocity(v1, c, C->b1, a1);
  r_sub3(vrel, v1, v0);
}

// velocity impulse P at arm r on body k with sign s: v += s P / m, w += s I^-1 (r x P)
static void apply_velocity_impulse(pbdCtx* c, int k, const pbdReal r[3], const pbdReal P[3], pbdReal s) {
  if (k < 0) return;
  pbdBody* B = c->body + k;
  pbdReal rp[3], dw[3];
  r_cross3(rp, r, P);
  inv_inertia_mul(dw, B, rp);
  for (int i = 0; i < 3; i++) B->v[i] += s * P[i] * B->minv, B->w[i] += s * dw[i];
}

// the velocity pass of an active contact: dynamic friction, a tangential impulse of at most mu times the
// substep's normal impulse lam_n / h (= h mu |f_n|, f_n = lam_n / h^2) against the sliding velocity, and
// restitution, the normal velocity set to max(-e vn_pre, 0) (e = 0 below 2 |g| h). Impulses, not velocity
// changes, are bounded: the bound on the velocity change is the impulse times the pair's generalized inverse mass
static void contact_velocity_pass(pbdCtx* c, pbdContact* C, pbdReal gmag) {
  if (RE(C->lam_n) <= 0) return;
  pbdReal vrel[3], a0[3], a1[3], vt[3];
  contact_velocity(c, C, vrel, a0, a1);
  pbdReal vn = r_dot3(vrel, C->n);
  for (int i = 0; i < 3; i++) vt[i] = vrel[i] - vn * C->n[i];
  pbdReal vtn = r_norm3(vt), h = c->h;
  if (RE(vtn) > 1e-15) {
    pbdReal t[3] = {vt[0] / vtn, vt[1] / vtn, vt[2] / vtn};
    pbdReal w = gen_inv_mass(c, C->b1, a1, t) + gen_inv_mass(c, C->b0, a0, t);
    if (RE(w) > 0) {
      pbdReal imp = r_fmin(C->mu * C->lam_n / h, vtn / w);
      pbdReal P[3] = {-imp * t[0], -imp * t[1], -imp * t[2]};
      apply_velocity_impulse(c, C->b1, a1, P, 1);
      apply_velocity_impulse(c, C->b0, a0, P, -1);
      contact_velocity(c, C, vrel, a0, a1);
      vn = r_dot3(vrel, C->n);
    }
  }
  pbdReal e = RE(r_fabs(C->vn_pre)) <= RE(2 * gmag * h) ? 0 : C->e;
  pbdReal dvn = r_fmax(-e * C->vn_pre, 0) - vn;
  pbdReal w = gen_inv_mass(c, C->b1, a1, C->n) + gen_inv_mass(c, C->b0, a0, C->n);
  if (RE(w) <= 0 || dvn == 0) return;
  pbdReal P[3] = {dvn / w * C->n[0], dvn / w * C->n[1], dvn / w * C->n[2]};
  apply_velocity_impulse(c, C->b1, a1, P, 1);
  apply_velocity_impulse(c, C->b0, a0, P, -1);
}

//---------------------------------------------------------------------------------------------------------
// forces

// add the force f (world) at the world point x to body k's substep (sub) or constant (!sub) force and torque
static void add_force(pbdCtx* c, int k, const pbdReal f[3], const pbdReal x[3], int sub) {
  if (k < 0) return;
  pbdBody* B = c->body + k;
  pbdReal r[3], t[3];
  r_sub3(r, x, B->p);
  r_cross3(t, r, f);
  pbdReal* F = sub ? B->fs : B->f;
  pbdReal* T = sub ? B->ts : B->t;
  for (int i = 0; i < 3; i++) F[i] += f[i], T[i] += t[i];
}

// add the torque t (world) to body k
static void add_torque(pbdCtx* c, int k, const pbdReal t[3], int sub) {
  if (k < 0) return;
  pbdReal* T = sub ? c->body[k].ts : c->body[k].t;
  for (int i = 0; i < 3; i++) T[i] += t[i];
}

// the generalized force gf (the joint's dofs) of joint J as forces and torques on its child and parent (equal and
// opposite): hinge torque gf*axis; slide force gf*axis at the child's centre of mass; ball torque R_child gf;
// free force gf[0..2] at the child's origin and torque R_child gf[3..5]
static void joint_wrench(pbdCtx* c, const pbdJoint* J, const pbdReal* gf, int sub) {
  const pbdBody* B = c->body + J->child;
  pbdReal axis[3], t[3], f[3], o[3];
  if (J->type == PHYS_JNT_HINGE || J->type == PHYS_JNT_SLIDE) {
    joint_coord(c, J, axis);
    for (int i = 0; i < 3; i++) t[i] = gf[0] * axis[i], f[i] = -t[i];
    if (J->type == PHYS_JNT_HINGE) {
      add_torque(c, J->child, t, sub);
      add_torque(c, J->parent, f, sub);
    } else {
      add_force(c, J->child, t, B->p, sub);
      add_force(c, J->parent, f, B->p, sub);
    }
    return;
  }
  const pbdReal* tl = gf + (J->type == PHYS_JNT_FREE ? 3 : 0);
  mat3_vec(t, B->R, tl);
  add_torque(c, J->child, t, sub);
  if (J->type == PHYS_JNT_BALL) {
    for (int i = 0; i < 3; i++) f[i] = -t[i];
    add_torque(c, J->parent, f, sub);
    return;
  }
  child_origin(o, B);
  add_force(c, J->child, gf, o, sub);
}

// the substep's joint springs of hinge and slide joints: -k (x - x_spring) (explicit; damping: joint_damping)
static void joint_springs(pbdCtx* c) {
  const physModel* m = c->m;
  for (int k = 0; k < c->nb; k++) memset(c->body[k].fs, 0, 6 * sizeof(pbdReal));
  if (m->opt.disableflags & PHYS_DSBL_PASSIVE) return;
  for (int i = 0; i < c->nj; i++) {
    const pbdJoint* J = c->joint + i;
    int j = J->jnt;
    pbdReal kst = PBD_STIFFNESS(c, j), axis[3];
    if ((J->type != PHYS_JNT_HINGE && J->type != PHYS_JNT_SLIDE) || kst == 0) continue;
    pbdReal gf = -kst * (joint_coord(c, J, axis) - m->qpos_spring[m->jnt_qposadr[j]]);
    joint_wrench(c, J, &gf, 1);
  }
}

//---------------------------------------------------------------------------------------------------------
// (q, v) -> maximal coordinates

// composite mass, centre of mass and inertia of every PBD body from d's kinematics (phys_kinematics done), plus
// armature; 0 if an inertia is singular
static int build_bodies(pbdCtx* c, PBD_DATA* d, int* idx) {
  const physModel* m = c->m;
  c->nb = 0;
  idx[0] = -1;
  for (int b = 1; b < m->nbody; b++) {
    idx[b] = m->body_jntnum[b] > 0 ? c->nb++ : -1;
  }
  memset(c->body, 0, sizeof(pbdBody) * (size_t)c->nb);
  pbdReal* Iw = c->acc;   // scratch: world inertia about the world origin parts (9 per body), then reused
  memset(Iw, 0, 9 * sizeof(pbdReal) * (size_t)c->nb);
  for (int b = 1; b < m->nbody; b++) {
    int g = m->body_weldid[b];
    if (g <= 0) continue;
    pbdBody* B = c->body + idx[g];
    B->body = g;
    pbdReal mb = PBD_MASS(c, b), Ib[9] = {0}, A[9], R[9];
    const pbdReal* xi = d->xipos + 3 * b;
    const pbdReal* Rm = d->ximat + 9 * b;
    B->minv += mb;  // mass summed here, inverted below
    for (int i = 0; i < 3; i++) B->p[i] += mb * xi[i];
    // rotational inertia about the world origin: R diag(I) R' + m (|x|^2 1 - x x')
    for (int i = 0; i < 3; i++) Ib[4 * i] = m->body_inertia[3 * b + i];
    r_mat_mul3(A, Rm, Ib);
    for (int i = 0; i < 3; i++)
      for (int k = 0; k < 3; k++) R[3 * i + k] = Rm[3 * k + i];
    r_mat_mul3(Ib, A, R);
    pbdReal x2 = r_dot3(xi, xi);
    pbdReal* I = Iw + 9 * idx[g];
    for (int i = 0; i < 3; i++)
      for (int k = 0; k < 3; k++) I[3 * i + k] += Ib[3 * i + k] + mb * ((i == k) * x2 - xi[i] * xi[k]);
  }
  for (int k = 0; k < c->nb; k++) {
    pbdBody* B = c->body + k;
    pbdReal M = B->minv, *I = Iw + 9 * k, Ic[9], tmp[9], R[9];
    if (!(RE(M) > 0)) return 0;
    for (int i = 0; i < 3; i++) B->p[i] /= M;
    // parallel axis to the centre of mass, then into the root body frame: R' Ic R
    for (int i = 0; i < 3; i++)
      for (int l = 0; l < 3; l++)
        Ic[3 * i + l] = I[3 * i + l] - M * ((i == l) * r_dot3(B->p, B->p) - B->p[i] * B->p[l]);
    int b = B->body;
    memcpy(B->q, d->xquat + 4 * b, 4 * sizeof(pbdReal));
    memcpy(B->R, d->xmat + 9 * b, 9 * sizeof(pbdReal));
    for (int i = 0; i < 3; i++)
      for (int l = 0; l < 3; l++) R[3 * i + l] = B->R[3 * l + i];
    r_mat_mul3(tmp, R, Ic);
    r_mat_mul3(B->I, tmp, B->R);
    pbdReal rel[3];
    r_sub3(rel, B->p, d->xpos + 3 * b);
    r_matT_vec3(B->c, B->R, rel);
    // armature: hinge a axis axis', ball a 1, free a 1 on its rotation (body frame)
    int j = m->body_jntadr[b], dof = m->jnt_dofadr[j], t = m->jnt_type[j];
    if (t == PHYS_JNT_HINGE) {
      const double* ax = m->jnt_axis + 3 * j;
      for (int i = 0; i < 3; i++)
        for (int l = 0; l < 3; l++) B->I[3 * i + l] += m->dof_armature[dof] * ax[i] * ax[l];
    } else if (t == PHYS_JNT_BALL || t == PHYS_JNT_FREE) {
      int d0 = dof + (t == PHYS_JNT_FREE ? 3 : 0);
      for (int i = 0; i < 3; i++) B->I[4 * i] += m->dof_armature[d0 + i];
    }
    B->minv = 1 / M;
    if (!inv3(B->Iinv, B->I)) return 0;
  }
  return 1;
}

// the centre of mass Jacobians of body k at d's kinematics into jacp, jacr (3 x nv each)
static void body_jacobian(const pbdCtx* c, const PBD_DATA* d, int k, pbdReal* jacp, pbdReal* jacr) {
  PBD_JAC(c->m, d, c->body[k].p, c->body[k].body, jacp, jacr);
}

// maximal velocities from qvel: v = Jp qvel, w = Jr qvel at each centre of mass
static void body_velocities(pbdCtx* c, PBD_DATA* d, pbdReal* jacp, pbdReal* jacr) {
  int nv = c->m->nv;
  for (int k = 0; k < c->nb; k++) {
    pbdBody* B = c->body + k;
    body_jacobian(c, d, k, jacp, jacr);
    for (int i = 0; i < 3; i++) {
      pbdReal sv = 0, sw = 0;
      for (int l = 0; l < nv; l++) sv += jacp[i * nv + l] * d->qvel[l], sw += jacr[i * nv + l] * d->qvel[l];
      B->v[i] = sv, B->w[i] = sw;
    }
  }
}

// the joints: child, parent and F in the parent's root frame relative to its centre of mass (world for -1)
static void build_joints(pbdCtx* c, const PBD_DATA* d, const int* idx) {
  const physModel* m = c->m;
  c->nj = 0;
  for (int b = 1; b < m->nbody; b++) {
    if (m->body_jntnum[b] == 0) continue;
    pbdJoint* J = c->joint + c->nj++;
    int j = m->body_jntadr[b], p = m->body_parentid[b], g = m->body_weldid[p];
    J->jnt = j, J->type = m->jnt_type[j], J->child = idx[b], J->parent = g > 0 ? idx[g] : -1;
    J->q0 = d->qpos[m->jnt_qposadr[j]];
    // F in the world: x_p + R_p body_pos, quat_p body_quat
    pbdReal fo[3], fq[4];
    pbdReal bp[3], bq[4];
    PBD_BODY_POS(c, d, b, bp);
    loadn(bq, m->body_quat + 4 * b, 4);
    r_mat_vec3(fo, d->xmat + 9 * p, bp);
    for (int i = 0; i < 3; i++) fo[i] += d->xpos[3 * p + i];
    r_quat_mul(fq, d->xquat + 4 * p, bq);
    if (J->parent < 0) {
      r_copy3(J->fpos, fo);
      memcpy(J->fquat, fq, sizeof(fq));
    } else {
      const pbdBody* P = c->body + J->parent;
      pbdReal rel[3], pc[4];
      r_sub3(rel, fo, P->p);
      r_matT_vec3(J->fpos, P->R, rel);
      r_quat_conj(pc, P->q);
      r_quat_mul(J->fquat, pc, fq);
    }
  }
}

// the step's constant forces: actuators and qfrc_applied through the joints, xfrc_applied at the bodies'
// centres of mass (world force and torque)
static void constant_forces(pbdCtx* c, const PBD_DATA* d, const int* idx) {
  const physModel* m = c->m;
  pbdReal gf[6];
  for (int i = 0; i < c->nj; i++) {
    const pbdJoint* J = c->joint + i;
    int dof = m->jnt_dofadr[J->jnt], n = J->type == PHYS_JNT_FREE ? 6 : (J->type == PHYS_JNT_BALL ? 3 : 1);
    int any = 0;
    for (int l = 0; l < n; l++) gf[l] = d->qfrc_actuator[dof + l] + d->qfrc_applied[dof + l], any |= gf[l] != 0;
    if (any) joint_wrench(c, J, gf, 0);
  }
  for (int b = 1; b < m->nbody; b++) {
    int g = m->body_weldid[b];
    if (g <= 0) continue;
    const pbdReal* f = d->xfrc_applied + 6 * b;
    add_force(c, idx[g], f, d->xipos + 3 * b, 0);
    add_torque(c, idx[g], f + 3, 0);
  }
}

// the springs: their path sites in their PBD bodies' root frames (world for -1) at d's kinematics, stiffness,
// damping (0 with the passive forces disabled: a limit still acts) and rest length
static void build_tendons(pbdCtx* c, const PBD_DATA* d, const int* idx) {
  const physModel* m = c->m;
  int passive = !(m->opt.disableflags & PHYS_DSBL_PASSIVE);
  c->nt = m->nspring;
  for (int s = 0; s < m->nspring; s++) {
    pbdTendon* T = c->ten + s;
    pbdReal k, b;
    T->s = s, T->adr = m->spring_adr[s], T->n = m->spring_num[s];
    PBD_SPRING(c, s, k, b, T->L0);
    T->k = passive ? k : 0, T->b = passive ? b : 0, T->lam = 0, T->Lp = 0;
    for (int i = 0; i < T->n; i++) {
      int site = m->spring_site[T->adr + i], body = m->site_bodyid[site], g = m->body_weldid[body];
      int k2 = g > 0 ? idx[g] : -1;
      pbdReal sp[3], pt[3], rel[3], *r = c->tr + 3 * (T->adr + i);
      load3(sp, m->site_pos + 3 * site);
      r_mat_vec3(pt, d->xmat + 9 * body, sp);
      for (int l = 0; l < 3; l++) pt[l] += d->xpos[3 * body + l];
      c->tbody[T->adr + i] = k2;
      if (k2 < 0) {
        r_copy3(r, pt);
        continue;
      }
      r_sub3(rel, pt, c->body[k2].p);
      r_matT_vec3(r, c->body[k2].R, rel);
    }
  }
}

// the contacts of cl as PBD contacts: surface points p0 = pos - dist/2 n, p1 = pos + dist/2 n in their bodies
static void build_contacts(pbdCtx* c, const physContactList* cl, const int* idx) {
  const physModel* m = c->m;
  c->nc = 0;
  for (int i = 0; i < cl->n; i++) {
    const physContact* k = cl->con + i;
    pbdContact* C = c->con + c->nc++;
    memset(C, 0, sizeof(*C));
    int g0 = m->body_weldid[m->geom_bodyid[k->geom[0]]], g1 = m->body_weldid[m->geom_bodyid[k->geom[1]]];
    if (g0 == g1) {   // two geoms of one rigid body (or both on the world): nothing to solve
      c->nc--;
      continue;
    }
    C->src = i;
    C->b0 = g0 > 0 ? idx[g0] : -1, C->b1 = g1 > 0 ? idx[g1] : -1;
    pbdReal pos[3], dist;
    PBD_CONTACT(c, k, i, pos, C->n, dist, C->mu);
    C->e = k->restitution;
    for (int s = 0; s < 2; s++) {
      pbdReal pt[3], rel[3];
      int b = s ? C->b1 : C->b0;
      pbdReal* r = s ? C->r1 : C->r0;
      for (int l = 0; l < 3; l++) pt[l] = pos[l] + (s ? 0.5 : -0.5) * dist * C->n[l];
      if (b < 0) {
        r_copy3(r, pt);
        continue;
      }
      r_sub3(rel, pt, c->body[b].p);
      r_matT_vec3(r, c->body[b].R, rel);
    }
  }
}

//---------------------------------------------------------------------------------------------------------
// substeps

// joint damping of hinge and slide joints as an implicit velocity update over h (stable for any b h): the
// relative rate x' = axis.(w1 - w2) (hinge) or axis.(v at the child's origin - v at its foot) (slide) becomes
// x' / (1 + b h W), W the pair's generalized inverse inertia along the axis, by an equal and opposite impulse
static void joint_damping(pbdCtx* c) {
  const physModel* m = c->m;
  if (m->opt.disableflags & PHYS_DSBL_PASSIVE) return;
  for (int i = 0; i < c->nj; i++) {
    const pbdJoint* J = c->joint + i;
    pbdReal b = PBD_DAMPING(c, m->jnt_dofadr[J->jnt]);
    if ((J->type != PHYS_JNT_HINGE && J->type != PHYS_JNT_SLIDE) || b == 0) continue;
    pbdReal axis[3], v1[3], v2[3], r1[3], r2[3], e[3], s, W;
    joint_coord(c, J, axis);
    if (J->type == PHYS_JNT_HINGE) {
      r_copy3(v1, c->body[J->child].w);
      if (J->parent >= 0) r_copy3(v2, c->body[J->parent].w);
      else v2[0] = v2[1] = v2[2] = 0;
      W = gen_inv_mass(c, J->child, NULL, axis) + gen_inv_mass(c, J->parent, NULL, axis);
    } else {
      slide_arms(c, J, r1, r2, e, &s);
      point_velocity(v1, c, J->child, r1);
      point_velocity(v2, c, J->parent, r2);
      W = gen_inv_mass(c, J->child, r1, axis) + gen_inv_mass(c, J->parent, r2, axis);
    }
    pbdReal rate = r_dot3(v1, axis) - r_dot3(v2, axis), h = c->h;
    pbdReal imp = -b * h * rate / (1 + b * h * W);   // impulse along the axis (torque or force times h)
    pbdReal P[3] = {imp * axis[0], imp * axis[1], imp * axis[2]};
    if (J->type == PHYS_JNT_HINGE) {
      for (int k = 0; k < 2; k++) {
        int bk = k ? J->parent : J->child;
        if (bk < 0) continue;
        pbdReal dw[3];
        inv_inertia_mul(dw, c->body + bk, P);
        for (int l = 0; l < 3; l++) c->body[bk].w[l] += (k ? -1 : 1) * dw[l];
      }
    } else {
      apply_velocity_impulse(c, J->child, r1, P, 1);
      apply_velocity_impulse(c, J->parent, r2, P, -1);
    }
  }
}

// the velocities over h: v += h (g + f/m), w += h I^-1 (t - w x I w)
static void predict_velocities(pbdCtx* c, const pbdReal grav[3]) {
  pbdReal h = c->h;
  for (int k = 0; k < c->nb; k++) {
    pbdBody* B = c->body + k;
    pbdReal Iw[3], wl[3], gyro[3], tq[3], dw[3];
    for (int i = 0; i < 3; i++) B->v[i] += h * (grav[i] + B->minv * (B->f[i] + B->fs[i]));
    r_matT_vec3(wl, B->R, B->w);
    mat3_vec(tq, B->I, wl);
    mat3_vec(Iw, B->R, tq);
    r_cross3(gyro, B->w, Iw);
    for (int i = 0; i < 3; i++) tq[i] = B->t[i] + B->ts[i] - gyro[i];
    inv_inertia_mul(dw, B, tq);
    for (int i = 0; i < 3; i++) B->w[i] += h * dw[i];
  }
}

// the poses over h from the velocities, the substep's start pose kept
static void predict_poses(pbdCtx* c) {
  pbdReal h = c->h;
  for (int k = 0; k < c->nb; k++) {
    pbdBody* B = c->body + k;
    r_copy3(B->pp, B->p);
    memcpy(B->qp, B->q, sizeof(B->q));
    for (int i = 0; i < 3; i++) B->p[i] += h * B->v[i];
    pbdReal hw[3] = {h * B->w[0], h * B->w[1], h * B->w[2]};
    rotate_body(B, hw);
  }
}

// apply the Jacobi accumulators: every body moved by its summed correction times one relaxation factor for all,
// 1 / (the most constraints touching one body). A common factor keeps the mass metric, so the sweeps converge to
// the same mass-weighted projection as Gauss-Seidel; averaging per body (each by its own count) would not: it
// weighs the bodies with many constraints as heavier (measured on the pbdReal pendulum: 10% off in velocity)
static void apply_jacobi(pbdCtx* c) {
  pbdReal most = 0;
  for (int k = 0; k < c->nb; k++) most = r_fmax(most, c->acc[7 * k + 6]);
  for (int k = 0; k < c->nb; k++) {
    pbdReal* a = c->acc + 7 * k;
    if (RE(a[6]) > 0) {
      pbdBody* B = c->body + k;
      pbdReal dth[3];
      for (int i = 0; i < 3; i++) B->p[i] += a[i] / most, dth[i] = a[3 + i] / most;
      rotate_body(B, dth);
    }
    memset(a, 0, 7 * sizeof(pbdReal));
  }
}

// velocities from the substep's pose change: v = (p - pp)/h, w = 2 vec(q conj(qp))/h (shorter way)
static void update_velocities(pbdCtx* c) {
  for (int k = 0; k < c->nb; k++) {
    pbdBody* B = c->body + k;
    pbdReal qc[4], dq[4];
    for (int i = 0; i < 3; i++) B->v[i] = (B->p[i] - B->pp[i]) / c->h;
    r_quat_conj(qc, B->qp);
    r_quat_mul(dq, B->q, qc);
    pbdReal s = (RE(dq[0]) < 0 ? -2 : 2) / c->h;
    for (int i = 0; i < 3; i++) B->w[i] = s * dq[1 + i];
  }
}

// one substep: predict, iterate the constraints (joints, springs, contacts), velocities, contact velocity pass
static void substep(pbdCtx* c, const pbdReal grav[3], int iterations, int limits) {
  pbdReal gmag = r_norm3(grav);
  for (int i = 0; i < c->nc; i++) {
    pbdContact* C = c->con + i;
    pbdReal vrel[3], a0[3], a1[3];
    contact_velocity(c, C, vrel, a0, a1);
    C->vn_pre = r_dot3(vrel, C->n);
    C->lam_n = 0;
  }
  for (int i = 0; i < c->nj; i++) memset(c->joint[i].lam_pos, 0, 6 * sizeof(pbdReal));
  for (int i = 0; i < c->nt; i++) {
    pbdReal pt[PBD_TMAX][3];
    c->ten[i].lam = 0, c->ten[i].Lp = tendon_points(c, c->ten + i, pt);
  }
  joint_springs(c);
  predict_velocities(c, grav);
  joint_damping(c);
  predict_poses(c);
  for (int it = 0; it < iterations; it++) {
    for (int i = 0; i < c->nj; i++) solve_joint(c, c->joint + i, limits);
    for (int i = 0; i < c->nt; i++) solve_tendon(c, c->ten + i, limits);
    for (int i = 0; i < c->nc; i++) solve_contact(c, c->con + i);
    if (c->jacobi) apply_jacobi(c);
  }
  update_velocities(c);
  for (int i = 0; i < c->nc; i++) {
    contact_velocity_pass(c, c->con + i, gmag);
    c->con[i].impulse += c->con[i].lam_n / c->h;
  }
}

//---------------------------------------------------------------------------------------------------------
// maximal coordinates -> (q, v)

// qpos of every joint from the bodies' relative poses
static void joint_positions(const pbdCtx* c, PBD_DATA* d) {
  const physModel* m = c->m;
  for (int i = 0; i < c->nj; i++) {
    const pbdJoint* J = c->joint + i;
    const pbdBody* B = c->body + J->child;
    pbdReal* q = d->qpos + m->jnt_qposadr[J->jnt], axis[3];
    if (J->type == PHYS_JNT_HINGE || J->type == PHYS_JNT_SLIDE) {
      q[0] = joint_coord(c, J, axis);
      continue;
    }
    pbdReal rel[4], fo[3], fq[4], fc[4];
    if (J->type == PHYS_JNT_FREE) {
      child_origin(q, B);
      memcpy(rel, B->q, sizeof(rel));
    } else {
      frame_world(c, J, fo, fq);
      r_quat_conj(fc, fq);
      r_quat_mul(rel, fc, B->q);
    }
    pbdReal* qq = q + (J->type == PHYS_JNT_FREE ? 3 : 0);
    pbdReal sg = RE(rel[0] * qq[0] + rel[1] * qq[1] + rel[2] * qq[2] + rel[3] * qq[3]) < 0 ? -1 : 1;
    for (int l = 0; l < 4; l++) qq[l] = sg * rel[l];
  }
}

// qvel by the kinetic-energy least squares of the maximal velocities at d's new kinematics:
// (sum_k Jp' m Jp + Jr' I_w Jr) v = sum_k Jp' m vcom + Jr' I_w w; 0 if the matrix is singular
static int joint_velocities(pbdCtx* c, PBD_DATA* d, pbdReal* A, pbdReal* rhs, pbdReal* jacp, pbdReal* jacr) {
  int nv = c->m->nv;
  memset(A, 0, sizeof(pbdReal) * (size_t)nv * (size_t)nv);
  memset(rhs, 0, sizeof(pbdReal) * (size_t)nv);
  for (int k = 0; k < c->nb; k++) {
    pbdBody* B = c->body + k;
    pbdReal Iw[9], tmp[9], Rt[9];
    // the body's pose at the new kinematics is the PBD pose (same q): jacobians at its centre of mass
    for (int i = 0; i < 3; i++)
      for (int l = 0; l < 3; l++) Rt[3 * i + l] = B->R[3 * l + i];
    r_mat_mul3(tmp, B->R, B->I);
    r_mat_mul3(Iw, tmp, Rt);
    body_jacobian(c, d, k, jacp, jacr);
    pbdReal M = 1 / B->minv, Iwv[3];
    mat3_vec(Iwv, Iw, B->w);
    for (int a = 0; a < nv; a++) {
      pbdReal IJ[3];
      for (int i = 0; i < 3; i++)
        IJ[i] = Iw[3 * i] * jacr[a] + Iw[3 * i + 1] * jacr[nv + a] + Iw[3 * i + 2] * jacr[2 * nv + a];
      for (int b2 = 0; b2 < nv; b2++) {
        pbdReal s = 0;
        for (int i = 0; i < 3; i++) s += M * jacp[i * nv + a] * jacp[i * nv + b2] + IJ[i] * jacr[i * nv + b2];
        A[a * nv + b2] += s;
      }
      for (int i = 0; i < 3; i++) rhs[a] += M * jacp[i * nv + a] * B->v[i] + jacr[i * nv + a] * Iwv[i];
    }
  }
  if (r_chol_factor(A, nv, 1e-300) != nv) return 0;
  r_chol_solve(d->qvel, A, rhs, nv);
  return 1;
}


//---------------------------------------------------------------------------------------------------------
// the step from the start state to the new (q, v)

// the body's pose back into the kinematics the jacobians read: the PBD body's root frame equals d's xpos/xquat
// after the kinematics at the new qpos (the joints reproduce the relative poses up to the constraint error);
// the centres of mass are refreshed from d so the jacobians are taken at consistent points
static void refresh_com(pbdCtx* c, const PBD_DATA* d) {
  for (int k = 0; k < c->nb; k++) {
    pbdBody* B = c->body + k;
    int b = B->body;
    memcpy(B->R, d->xmat + 9 * b, 9 * sizeof(pbdReal));
    memcpy(B->q, d->xquat + 4 * b, 4 * sizeof(pbdReal));
    mat3_vec(B->p, B->R, B->c);
    for (int i = 0; i < 3; i++) B->p[i] += d->xpos[3 * b + i];
  }
}

// the step from d's start state, its kinematics, actuator forces and the contacts cl (detected at it) done:
// maximal coordinates, the substeps, then qpos and qvel of d (PBD_KINEMATICS at the new qpos); c's arrays and
// acc (9 nbody) allocated, idx (nbody), jacp, jacr (3 nv), A (nv nv), rhs (nv) scratch. 0 if an inertia or the
// velocity system is singular
static int pbd_advance(pbdCtx* c, PBD_DATA* d, const physContactList* cl, int* idx, pbdReal* jacp, pbdReal* jacr,
                       pbdReal* A, pbdReal* rhs, int substeps, int iterations) {
  const physModel* m = c->m;
  if (!build_bodies(c, d, idx)) return 0;
  memset(c->acc, 0, 9 * sizeof(pbdReal) * (size_t)m->nbody);
  body_velocities(c, d, jacp, jacr);
  build_joints(c, d, idx);
  build_tendons(c, d, idx);
  constant_forces(c, d, idx);
  build_contacts(c, cl, idx);
  pbdReal grav[3] = {0, 0, 0};
  if (!(m->opt.disableflags & PHYS_DSBL_GRAVITY)) load3(grav, m->opt.gravity);
  int limits = !(m->opt.disableflags & PHYS_DSBL_LIMIT);
  for (int s = 0; s < substeps; s++) substep(c, grav, iterations, limits);
  // back to (q, v)
  joint_positions(c, d);
  PBD_KINEMATICS(m, d);
  refresh_com(c, d);
  return joint_velocities(c, d, A, rhs, jacp, jacr);
}

#endif  // PHYS_PBD_CORE_H
