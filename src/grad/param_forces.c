// param_forces.c - R = d(RNEA(q, v, a) + (armature + dt b) a - f)/dtheta, the parameters' generalized force
// columns at a given acceleration a (params.h phys_param_forces), shared by the contact-free step's parameter
// derivatives (param_deriv.c), the constrained step's (step_contact_deriv.c) and the penalty step's
// (penalty_deriv.c). It calls only the dynamics layer and params.c: nothing of the step's derivatives.
//
// M~ a + c = f with M~ = M + diag(armature) + dt diag(b) (implicit damping b), i.e.
//   RNEA(q, v, a; pi, g) + (armature + dt b) a - f(q, v, u; theta) = 0.
// Differentiating at fixed (q, v, u):  M~ da/dtheta = -R,  R = d RNEA/dtheta + (darmature + dt db) a - df/dtheta:
//   inertial parameters: dRNEA/dpi_b = Y_b (the regressor at the step's a) times dpi_b/dtheta (params.c), and
//     an applied xfrc at the com moves with it: df_j/dc = cdof_ang_j . ((R_b dc) x F_b);
//   joint damping b (all dofs of the joint): f = -b v, so R = v + dt a (dt a only with implicit damping);
//   armature: R = a;  joint stiffness: f = -k (q (-) q_spring), R = q (-) q_spring;
//   gravity: RNEA's gravity term -sum_b m_b Jcom_b' g, R_i = -sum_b m_b Jcom_b(i, :)';
//   gear: joint motor f = gear F (F = phys_actuator_force: (g0 + g1 L + g2 Ldot) c + b0 + b1 L + b2 Ldot, c the
//     clamped control, L = gear q), R = -F - gear dF/dgear; spring motor f = -gear F u, R = F u, with
//     u = -dL/dq' the generalized force of a unit tension; rest-length actuator t = k (L - L0 - gear c) + ...;
//   gain, bias, kp, kv (actuator_columns): f = gear F, R = -gear dF/dtheta (spring: gear dF/dtheta u);
//   springs: f = t u, t = k (L - L0) + b Ldot, so R = -(dt/dtheta) u: k -> L - L0, b -> Ldot, L0 -> -k;
//   body placement pos:BODY (body_pos, parent frame): moving it by dz along the parent's axis e_i moves the
//     subtree of the body rigidly by t = R_parent e_i, as a slide joint z at the body frame with zero velocity
//     and acceleration would (Carpentier & Mansard, rnea_deriv.c's notation, all about the world origin):
//     S_z = (0, t), u = S_z x v_p, psi = S_z x a_p - u x v_p (v_p, a_p the parent's velocity and acceleration,
//     a_0 = -g), per body c of the subtree g_c = -I_c psi - B_c u with B_c u = I_c (u x v_c) + u x* (I_c v_c)
//     + v_c x* (I_c u), G = subtree sums of g; then dtau_k/dz = S_k . G_body(k) for dofs k in the subtree and
//     S_k . (S_z x* F_b + G_b) for dofs k above the body (F_b the subtree's RNEA force). An xfrc applied at
//     a com in the subtree moves with it: df_k/dz = w_k . (t x sum F_c) for k above, 0 inside (rigid); a
//     spring (tension T, f = -T sum_s J_s' g_s, g_s = dL/dx_s = u_{s-1} - u_s over its sites x_s) whose sites
//     x_s in the subtree move by t: dL/dz = sum g_s . t, du_s/dz = (E - u_s u_s') (t_{s+1} - t_s) / l_s,
//     their velocities by w_p x t, dLdot/dz = sum dg_s . v_s + g_s . (w_p x t), their Jacobian columns of
//     dofs k above by w_k x t, so R = T' sum J_s' g_s + T (sum J_s' dg_s + (w_k . (t x g_s))_k),
//     T' = k dL/dz + b dLdot/dz (motor tensions do not depend on z);
//   friction, restitution, size, penalty stiffness and damping: 0 (contact only);
//   input kinds (delay, inputgain, inputbias of a recorded channel): R = -(df/du_channel) du_eff/dtheta, the
//     sensitivity given by the caller in t->insens (param_inputs.c; without it 0).
#include <math.h>
#include <string.h>

#include "dyn.h"
#include "grad.h"
#include "model.h"
#include "params.h"
#include "rot.h"
#include "spatial.h"

//---------------------------------------------------------------------------------------------------------
// R = d(RNEA + (armature + dt b) a - f)/dtheta, nv x ntheta row-major

// clamped control of actuator a (phys_actuation's rule)
static double clamped_ctrl(const physModel* m, const physData* d, int a) {
  double c = d->ctrl[a];
  if (m->actuator_ctrllimited[a]) {
    const double* r = m->actuator_ctrlrange + 2 * a;
    c = c < r[0] ? r[0] : (c > r[1] ? r[1] : c);
  }
  return c;
}

// R[:, col] -= s u for spring sp, u = generalized force of a unit tension (-dL/dq'); tmp nv scratch
static void spring_column(const physModel* m, physData* d, int sp, double s, double* R, int ld, int col,
                          double* tmp) {
  memset(tmp, 0, sizeof(double) * (size_t)m->nv);
  phys_spring_eval(m, d, sp, NULL, 1, tmp);
  for (int k = 0; k < m->nv; k++) R[(size_t)k * ld + col] -= s * tmp[k];
}

// rest length L0 of spring sp as phys_passive: restlength + sum of gear*ctrl of its restlength actuators
static double spring_rest(const physModel* m, const physData* d, int sp) {
  double L0 = m->spring_restlength[sp];
  if (!(m->opt.disableflags & PHYS_DSBL_ACTUATION))
    for (int a = 0; a < m->nu; a++)
      if (m->actuator_trntype[a] == PHYS_TRN_RESTLENGTH && m->actuator_trnid[a] == sp)
        L0 += m->actuator_gear[6 * a] * clamped_ctrl(m, d, a);
  return L0;
}

// q (-) q_spring of joint j per dof (hinge/slide difference; ball log(q_spring^-1 q); free both)
static void spring_offset(const physModel* m, const physData* d, int j, double* off) {
  const double *q = d->qpos + m->jnt_qposadr[j], *q0 = m->qpos_spring + m->jnt_qposadr[j];
  int type = m->jnt_type[j];
  if (type == PHYS_JNT_HINGE || type == PHYS_JNT_SLIDE) {
    off[0] = q[0] - q0[0];
    return;
  }
  if (type == PHYS_JNT_FREE) {
    for (int i = 0; i < 3; i++) off[i] = q[i] - q0[i];
    q += 3, q0 += 3, off += 3;
  }
  double qn[4] = {q[0], q[1], q[2], q[3]}, q0c[4], dq[4];
  phys_quat_normalize(qn);
  phys_quat_conj(q0c, q0);
  phys_quat_mul(dq, q0c, qn);
  phys_quat_log(off, dq);
}

// inertial entry (mass, com, inertia of body b): R[:, cols] = Y_b dpi/dtheta, minus the change of the
// generalized force of an xfrc applied at the moving com
static void inertial_columns(const physModel* m, physData* d, const physParam* p, const double* Y, double* R,
                             int ld) {
  int b = p->id, n = p->size, ny = 10 * (m->nbody - 1);
  double dpi[100];
  phys_param_dpi(m, p, dpi);
  for (int k = 0; k < m->nv; k++) {
    const double* y = Y + (size_t)k * ny + 10 * (b - 1);
    for (int i = 0; i < n; i++) {
      double s = 0;
      for (int e = 0; e < 10; e++) s += y[e] * dpi[e * n + i];
      R[(size_t)k * ld + p->adr + i] += s;
    }
  }
  const double* F = d->xfrc_applied + 6 * b;
  if (F[0] == 0 && F[1] == 0 && F[2] == 0) return;
  // dc/dtheta = (d(m c)/dtheta - c dm/dtheta) / m in the body frame, rotated to the world
  const double *c = m->body_ipos + 3 * b, *Rb = d->xmat + 9 * b;
  for (int i = 0; i < n; i++) {
    double dcl[3], dcw[3], t[3];
    for (int r = 0; r < 3; r++) dcl[r] = (dpi[(1 + r) * n + i] - c[r] * dpi[i]) / m->body_mass[b];
    phys_mat_vec3(dcw, Rb, dcl);
    phys_cross3(t, dcw, F);
    for (int k = phys_body_lastdof(m, b); k >= 0; k = m->dof_parentid[k])
      R[(size_t)k * ld + p->adr + i] -= phys_dot3(d->cdof + 6 * k, t);
  }
}

// gravity: R[:, col+i] = -sum_b m_b Jcom_b(i, :)'
static void gravity_columns(const physModel* m, physData* d, const physParam* p, double* R, int ld) {
  if (m->opt.disableflags & PHYS_DSBL_GRAVITY) return;
  int nv = m->nv;
  size_t mark = phys_stack_mark(d);
  double* jac = phys_stack_alloc(d, 3 * (size_t)nv);
  for (int b = 1; b < m->nbody; b++) {
    phys_jac_com(m, d, b, jac);
    for (int i = 0; i < 3; i++)
      for (int k = 0; k < nv; k++) R[(size_t)k * ld + p->adr + i] -= m->body_mass[b] * jac[(size_t)i * nv + k];
  }
  phys_stack_free(d, mark);
}

// gear of actuator a (force f = phys_actuator_force): joint actuator R[da+k, col+k] = -f, on a hinge or
// slide minus also gear (dL q + dLdot qdot) (L = gear q); spring actuator R = f u; rest length R = -k c u; site
// actuator (6 entries) R[:, col+k] = -f moment(e_k); slider-crank R = -(f + dL L + dLdot Ldot) JL
static void gear_columns(const physModel* m, physData* d, const physParam* p, double* R, int ld, double* tmp) {
  int a = p->id, id = m->actuator_trnid[a];
  if (m->opt.disableflags & PHYS_DSBL_ACTUATION) return;
  if (m->actuator_trntype[a] == PHYS_TRN_RESTLENGTH) {
    if (!(m->opt.disableflags & PHYS_DSBL_PASSIVE))
      spring_column(m, d, id, -m->spring_stiffness[id] * clamped_ctrl(m, d, a), R, ld, p->adr, tmp);
    return;
  }
  physActuatorTerms t;
  double f = phys_actuator_force(m, d, a, &t);
  if (m->actuator_trntype[a] == PHYS_TRN_JOINT) {
    int da = m->jnt_dofadr[id];
    if (t.dL != 0 || t.dLdot != 0)
      f += m->actuator_gear[6 * a] * (t.dL * d->qpos[m->jnt_qposadr[id]] + t.dLdot * d->qvel[da]);
    for (int k = 0; k < p->size; k++) R[(size_t)(da + k) * ld + p->adr + k] -= f;
  } else if (m->actuator_trntype[a] == PHYS_TRN_SLIDERCRANK) {   // qfrc = gear JL f(gear l, gear ldot)
    double vel, L = phys_actuator_length(m, d, a, &vel);
    phys_slidercrank_geometry(m, d, a, tmp, NULL, NULL);
    for (int i = 0; i < m->nv; i++) R[(size_t)i * ld + p->adr] -= (f + t.dL * L + t.dLdot * vel) * tmp[i];
  } else if (m->actuator_trntype[a] == PHYS_TRN_SITE) {
    for (int k = 0; k < 6; k++) {   // qfrc = f moment(gear), linear in gear: column k = f moment(e_k)
      double e[6] = {0, 0, 0, 0, 0, 0};
      e[k] = 1;
      phys_site_moment(m, d, a, e, tmp);
      for (int i = 0; i < m->nv; i++) R[(size_t)i * ld + p->adr + k] -= f * tmp[i];
    }
  } else {
    spring_column(m, d, id, -f, R, ld, p->adr, tmp);
  }
}

// gain, bias, kp, kv or a muscle's peak force of actuator a: R = -gear df/dtheta on a joint's dofs, gear
// df/dtheta u on a spring, -gear JL df/dtheta on a slider-crank, with df/dgain = c (the clamped control),
// df/dbias = 1, df/dkp = c - L, df/dkv = c - Ldot (L = gear q, Ldot = gear qdot of its hinge or slide; a
// slider-crank's length and rate), df/dF = the muscle's dpeak, all 0 where the force is clamped to forcerange
static void actuator_columns(const physModel* m, physData* d, const physParam* p, double* R, int ld, double* tmp) {
  int a = p->id, id = m->actuator_trnid[a];
  if (m->opt.disableflags & PHYS_DSBL_ACTUATION) return;
  physActuatorTerms t;
  phys_actuator_force(m, d, a, &t);
  const double* gear = m->actuator_gear + 6 * a;
  double s = p->kind == PHYS_PAR_BIAS ? 1 : t.c;
  if (p->kind == PHYS_PAR_MUSCLE_FORCE) s = t.dpeak;   // (fslope in already)
  int crank = m->actuator_trntype[a] == PHYS_TRN_SLIDERCRANK;
  double vel = 0, L = crank ? phys_actuator_length(m, d, a, &vel) : 0;
  if (p->kind == PHYS_PAR_KP) s -= crank ? L : gear[0] * d->qpos[m->jnt_qposadr[id]];
  if (p->kind == PHYS_PAR_KV) s -= crank ? vel : gear[0] * d->qvel[m->jnt_dofadr[id]];
  s *= t.fslope;   // a force clamped to forcerange does not move
  if (m->actuator_trntype[a] == PHYS_TRN_JOINT) {
    int type = m->jnt_type[id], da = m->jnt_dofadr[id];
    int n = type == PHYS_JNT_FREE ? 6 : (type == PHYS_JNT_BALL ? 3 : 1);
    for (int k = 0; k < n; k++) R[(size_t)(da + k) * ld + p->adr] -= gear[k] * s;
  } else if (m->actuator_trntype[a] == PHYS_TRN_SPRING) {
    spring_column(m, d, id, -gear[0] * s, R, ld, p->adr, tmp);
  } else if (m->actuator_trntype[a] == PHYS_TRN_SITE) {
    phys_site_moment(m, d, a, gear, tmp);
    for (int i = 0; i < m->nv; i++) R[(size_t)i * ld + p->adr] -= tmp[i] * s;
  } else if (crank) {   // the moment gear JL
    phys_slidercrank_geometry(m, d, a, tmp, NULL, NULL);
    for (int i = 0; i < m->nv; i++) R[(size_t)i * ld + p->adr] -= gear[0] * tmp[i] * s;
  }
}

// an input entry's column (param_inputs.c): s = t->insens[e] = d u_eff/dtheta; a control channel a: R = -s df/du_a
// (joint: gear gain slope on the dofs; spring: gear gain slope u; rest length: -k gear slope u), an applied
// force on dof i: R_i = -s
static void input_column(const physModel* m, physData* d, const physParam* p, double s, double* R, int ld,
                         double* tmp) {
  if (s == 0) return;
  if (p->id >= m->nu) {
    R[(size_t)(p->id - m->nu) * ld + p->adr] -= s;
    return;
  }
  int a = p->id, id = m->actuator_trnid[a];
  if (m->opt.disableflags & PHYS_DSBL_ACTUATION) return;
  physActuatorTerms at;
  phys_actuator_force(m, d, a, &at);
  const double* gear = m->actuator_gear + 6 * a;
  if (m->actuator_trntype[a] == PHYS_TRN_JOINT) {
    int type = m->jnt_type[id], da = m->jnt_dofadr[id];
    int n = type == PHYS_JNT_FREE ? 6 : (type == PHYS_JNT_BALL ? 3 : 1);
    for (int k = 0; k < n; k++) R[(size_t)(da + k) * ld + p->adr] -= gear[k] * at.gain * at.slope * s;
  } else if (m->actuator_trntype[a] == PHYS_TRN_SPRING) {
    spring_column(m, d, id, -gear[0] * at.gain * at.slope * s, R, ld, p->adr, tmp);
  } else if (m->actuator_trntype[a] == PHYS_TRN_SITE) {
    phys_site_moment(m, d, a, gear, tmp);
    for (int i = 0; i < m->nv; i++) R[(size_t)i * ld + p->adr] -= tmp[i] * at.gain * at.slope * s;
  } else if (m->actuator_trntype[a] == PHYS_TRN_SLIDERCRANK) {
    phys_slidercrank_geometry(m, d, a, tmp, NULL, NULL);
    for (int i = 0; i < m->nv; i++) R[(size_t)i * ld + p->adr] -= gear[0] * tmp[i] * at.gain * at.slope * s;
  } else if (!(m->opt.disableflags & PHYS_DSBL_PASSIVE)) {
    spring_column(m, d, id, -m->spring_stiffness[id] * gear[0] * at.slope * s, R, ld, p->adr, tmp);
  }
}

// accelerations a_c = a_parent + sum_k (Sdot_k qd_k + S_k qdd_k) of every body (a_0 = -g) at the
// acceleration qacc, and the subtree sums F of f_c = I_c a_c + v_c x* (I_c v_c) (nbody x 6 each)
static void rnea_forces(const physModel* m, const physData* d, const double* qacc, double* acc, double* F) {
  memset(acc, 0, 6 * sizeof(double));
  memset(F, 0, 6 * sizeof(double));
  if (!(m->opt.disableflags & PHYS_DSBL_GRAVITY))
    for (int i = 0; i < 3; i++) acc[3 + i] = -m->opt.gravity[i];
  for (int b = 1; b < m->nbody; b++) {
    double *a = acc + 6 * b, h[6], t[6];
    memcpy(a, acc + 6 * m->body_parentid[b], 6 * sizeof(double));
    for (int k = m->body_dofadr[b]; k < m->body_dofadr[b] + m->body_dofnum[b]; k++)
      for (int i = 0; i < 6; i++) a[i] += d->cdof_dot[6 * k + i] * d->qvel[k] + d->cdof[6 * k + i] * qacc[k];
    const double *I = d->cinert + 10 * b, *v = d->cvel + 6 * b;
    phys_inert_mul(F + 6 * b, I, a);
    phys_inert_mul(h, I, v);
    phys_cross_force(t, v, h);
    for (int i = 0; i < 6; i++) F[6 * b + i] += t[i];
  }
  for (int b = m->nbody - 1; b > 0; b--)
    for (int i = 0; i < 6; i++) F[6 * m->body_parentid[b] + i] += F[6 * b + i];
}

// g_c = -I psi - (I (u x v) + u x* (I v) + v x* (I u)) of one body (inertia I, velocity v)
static void pos_body_term(double g[6], const double I[10], const double v[6], const double u[6],
                          const double psi[6]) {
  double t[6], h[6];
  phys_inert_mul(g, I, psi);
  phys_cross_motion(t, u, v);
  phys_inert_mul(h, I, t);
  for (int i = 0; i < 6; i++) g[i] = -g[i] - h[i];
  phys_inert_mul(h, I, v);
  phys_cross_force(t, u, h);
  for (int i = 0; i < 6; i++) g[i] -= t[i];
  phys_inert_mul(h, I, u);
  phys_cross_force(t, v, h);
  for (int i = 0; i < 6; i++) g[i] -= t[i];
}

// tension of spring sp in the step: the passive k (L - L0) + b Ldot (d->spring_force) and its motors' -gear f
static double spring_tension(const physModel* m, const physData* d, int sp) {
  double T = m->opt.disableflags & PHYS_DSBL_PASSIVE ? 0 : d->spring_force[sp];
  if (!(m->opt.disableflags & PHYS_DSBL_ACTUATION))
    for (int a = 0; a < m->nu; a++)
      if (m->actuator_trntype[a] == PHYS_TRN_SPRING && m->actuator_trnid[a] == sp)
        T -= m->actuator_gear[6 * a] * phys_actuator_force(m, d, a, NULL);
  return T;
}

// R[:, col] += -d f_spring / dz of spring sp when the subtree (ins) of a body with parent pp moves by t;
// ugen, tmp nv scratch. A fixed tendon does not depend on body positions.
static void pos_spring_column(const physModel* m, physData* d, int sp, const int* ins, int pp, const double t[3],
                              double* R, int ld, int col, double* ugen, double* tmp) {
  if (m->spring_type[sp] == PHYS_SPRING_FIXED) return;
  physTendonPath p;   // sites (wrapped geoms: tendon_deriv.h), segment weights w (pulleys)
  phys_tendon_path(m, sp, d->site_xpos, d->geom_xpos, d->geom_xmat, &p);
  int n = p.npoint, any = 0;
  for (int k = 0; k < n; k++) any |= ins[p.body[k]];
  if (!any) return;
  double T = spring_tension(m, d, sp), wxt[3], uprev[3] = {0, 0, 0}, duprev[3] = {0, 0, 0}, dL = 0, dLdot = 0;
  double wprev = 0;
  phys_cross3(wxt, d->cvel + 6 * pp, t);
  memset(tmp, 0, sizeof(double) * (size_t)m->nv);
  for (int k = 0; k < n; k++) {
    int body = p.body[k], in = ins[body];
    const double* x = p.x[k];
    double u[3] = {0, 0, 0}, du[3] = {0, 0, 0}, g[3], dg[3], v[3], w = p.w[k];
    if (w != 0) {
      // du/dz = (E - u u') (t_{k+1} - t_k) / l
      const double* xn = p.x[k + 1];
      for (int i = 0; i < 3; i++) u[i] = xn[i] - x[i];
      double len = phys_normalize3(u), s = ins[p.body[k + 1]] - in;
      if (len > 0 && s != 0) {
        double ut = phys_dot3(u, t);
        for (int i = 0; i < 3; i++) du[i] = s * (t[i] - u[i] * ut) / len;
      }
    }
    for (int i = 0; i < 3; i++) g[i] = wprev * uprev[i] - w * u[i], dg[i] = wprev * duprev[i] - w * du[i];
    phys_point_velocity(v, d, body, x);
    dL += in * phys_dot3(g, t);
    dLdot += phys_dot3(dg, v) + in * phys_dot3(g, wxt);
    phys_apply_force(m, d, tmp, body, x, dg, NULL);   // sum J_s' dg_s
    if (in && T != 0) {
      // the Jacobian columns of dofs above the body turn: T w_k . (t x g)
      double txg[3];
      phys_cross3(txg, t, g);
      for (int j = phys_body_lastdof(m, pp); j >= 0; j = m->dof_parentid[j])
        R[(size_t)j * ld + col] += T * phys_dot3(d->cdof + 6 * j, txg);
    }
    phys_copy3(uprev, u);
    phys_copy3(duprev, du);
    wprev = w;
  }
  double Tp = m->opt.disableflags & PHYS_DSBL_PASSIVE ? 0 : m->spring_stiffness[sp] * dL + m->spring_damping[sp] * dLdot;
  memset(ugen, 0, sizeof(double) * (size_t)m->nv);
  phys_spring_eval(m, d, sp, NULL, -1, ugen);   // ugen = sum J_s' g_s = dL/dq
  for (int j = 0; j < m->nv; j++) R[(size_t)j * ld + col] += Tp * ugen[j] + T * tmp[j];
}

// pos:BODY columns of R = d(RNEA - f)/dz (three columns, z along the parent's axes); acc, F from
// rnea_forces; G (nbody x 6), ins (nbody), ugen and tmp (nv) scratch
static void pos_columns(const physModel* m, physData* d, const physParam* p, const double* acc, const double* F,
                        double* G, int* ins, double* ugen, double* tmp, double* R, int ld) {
  int b = p->id, pp = m->body_parentid[b];
  for (int c = 0; c < m->nbody; c++) ins[c] = c == b || (c > b && ins[m->body_parentid[c]]);
  double Fx[3] = {0, 0, 0};
  for (int c = b; c < m->nbody; c++)
    if (ins[c])
      for (int r = 0; r < 3; r++) Fx[r] += d->xfrc_applied[6 * c + r];
  for (int i = 0; i < 3; i++) {
    int col = p->adr + i;
    // S_z = (0, t), t = R_parent e_i; u = S_z x v_p; psi = S_z x a_p - u x v_p
    double Sz[6] = {0, 0, 0, d->xmat[9 * pp + i], d->xmat[9 * pp + 3 + i], d->xmat[9 * pp + 6 + i]};
    double u[6], psi[6], t[6], y[6], tf[3];
    phys_cross_motion(u, Sz, d->cvel + 6 * pp);
    phys_cross_motion(psi, Sz, acc + 6 * pp);
    phys_cross_motion(t, u, d->cvel + 6 * pp);
    for (int r = 0; r < 6; r++) psi[r] -= t[r];
    // G = subtree sums of g_c
    for (int c = b; c < m->nbody; c++)
      if (ins[c]) pos_body_term(G + 6 * c, d->cinert + 10 * c, d->cvel + 6 * c, u, psi);
    for (int c = m->nbody - 1; c > b; c--)
      if (ins[c])
        for (int r = 0; r < 6; r++) G[6 * m->body_parentid[c] + r] += G[6 * c + r];
    // dofs inside the subtree: S_k . G_body(k)
    for (int k = 0; k < m->nv; k++)
      if (ins[m->dof_bodyid[k]]) R[(size_t)k * ld + col] += phys_dot6(d->cdof + 6 * k, G + 6 * m->dof_bodyid[k]);
    // dofs above: S_k . (S_z x* F_b + G_b) - w_k . (t x Fx)
    phys_cross_force(y, Sz, F + 6 * b);
    for (int r = 0; r < 6; r++) y[r] += G[6 * b + r];
    phys_cross3(tf, Sz + 3, Fx);
    for (int k = phys_body_lastdof(m, pp); k >= 0; k = m->dof_parentid[k])
      R[(size_t)k * ld + col] += phys_dot6(d->cdof + 6 * k, y) - phys_dot3(d->cdof + 6 * k, tf);
    for (int sp = 0; sp < m->nspring; sp++) pos_spring_column(m, d, sp, ins, pp, Sz + 3, R, ld, col, ugen, tmp);
  }
}

// one entry's columns of R (zeroed by the caller)
static void entry_columns(const physModel* m, physData* d, const physParam* p, const double* qacc,
                          const double* Y, double* R, int ld, double* tmp) {
  int passive = !(m->opt.disableflags & PHYS_DSBL_PASSIVE);
  // damping enters M~ unless PHYS_DSBL_EULERDAMP (not step.h's phys_implicit_damping, which is also 0 when every
  // damping is 0: there the step is explicit only because dt 0 a = 0, and raising a damping from 0 makes it
  // implicit, so dR/db keeps dt a)
  int implicit = !(m->opt.disableflags & PHYS_DSBL_EULERDAMP);
  double dt = m->opt.timestep;
  int col = p->adr, da = 0, nd = 0;
  if (p->kind == PHYS_PAR_DAMPING || p->kind == PHYS_PAR_ARMATURE || p->kind == PHYS_PAR_STIFFNESS) {
    int type = m->jnt_type[p->id];
    da = m->jnt_dofadr[p->id];
    nd = type == PHYS_JNT_FREE ? 6 : (type == PHYS_JNT_BALL ? 3 : 1);
  }
  switch (p->kind) {
    case PHYS_PAR_MASS:
    case PHYS_PAR_COM:
    case PHYS_PAR_INERTIA:
    case PHYS_PAR_INERTIA9: inertial_columns(m, d, p, Y, R, ld); break;
    case PHYS_PAR_DAMPING:
      for (int k = da; k < da + nd; k++)
        R[(size_t)k * ld + col] += (passive ? d->qvel[k] : 0) + (implicit ? dt * qacc[k] : 0);
      break;
    case PHYS_PAR_ARMATURE:
      for (int k = da; k < da + nd; k++) R[(size_t)k * ld + col] += qacc[k];
      break;
    case PHYS_PAR_STIFFNESS:
      if (passive) {
        double off[6];
        spring_offset(m, d, p->id, off);
        for (int k = 0; k < nd; k++) R[(size_t)(da + k) * ld + col] += off[k];
      }
      break;
    case PHYS_PAR_GRAVITY: gravity_columns(m, d, p, R, ld); break;
    case PHYS_PAR_GEAR: gear_columns(m, d, p, R, ld, tmp); break;
    case PHYS_PAR_GAIN:
    case PHYS_PAR_BIAS:
    case PHYS_PAR_KP:
    case PHYS_PAR_KV:
    case PHYS_PAR_MUSCLE_FORCE: actuator_columns(m, d, p, R, ld, tmp); break;
    case PHYS_PAR_SPRING_STIFFNESS:
      if (passive) spring_column(m, d, p->id, d->spring_length[p->id] - spring_rest(m, d, p->id), R, ld, col, tmp);
      break;
    case PHYS_PAR_SPRING_DAMPING:
      if (passive) spring_column(m, d, p->id, d->spring_velocity[p->id], R, ld, col, tmp);
      break;
    case PHYS_PAR_SPRING_RESTLENGTH:
      if (passive) spring_column(m, d, p->id, -m->spring_stiffness[p->id], R, ld, col, tmp);
      break;
    default: break;   // pos: pos_columns; friction, restitution, size, penalty: contact only
  }
}

// R (params.h) at qacc, d's kinematics and forces; scratch from d's arena
void phys_param_forces(const physModel* m, physData* d, const physParamTable* t, const double* qacc, double* R) {
  int nv = m->nv, nt = t->ntheta;
  size_t mark = phys_stack_mark(d);
  double* tmp = phys_stack_alloc(d, (size_t)nv);
  double* Y = NULL;
  for (int e = 0; e < t->n; e++)
    if (phys_param_is_inertial(t->param[e].kind) && !Y) {
      Y = phys_stack_alloc(d, (size_t)nv * 10 * (size_t)(m->nbody - 1));
      phys_regressor(m, d, qacc, Y);
    }
  memset(R, 0, sizeof(double) * (size_t)nv * (size_t)nt);
  for (int e = 0; e < t->n; e++) {
    if (phys_param_is_input(t->param[e].kind)) {
      if (t->insens) input_column(m, d, t->param + e, t->insens[e], R, nt, tmp);
    } else {
      entry_columns(m, d, t->param + e, qacc, Y, R, nt, tmp);
    }
  }
  double *acc = NULL, *F = NULL, *G = NULL, *ugen = NULL;
  int* ins = NULL;
  for (int e = 0; e < t->n; e++) {
    if (t->param[e].kind != PHYS_PAR_POS) continue;
    if (!acc) {
      size_t nb = (size_t)m->nbody;
      acc = phys_stack_alloc(d, 6 * nb);
      F = phys_stack_alloc(d, 6 * nb);
      G = phys_stack_alloc(d, 6 * nb);
      ins = (int*)phys_stack_alloc(d, nb);
      ugen = phys_stack_alloc(d, (size_t)nv);
      rnea_forces(m, d, qacc, acc, F);
    }
    pos_columns(m, d, t->param + e, acc, F, G, ins, ugen, tmp, R, nt);
  }
  phys_stack_free(d, mark);
}

// theta_bar = -R' lambda (R nv x nt row-major)
static void minus_rt_lambda(const double* R, const double* lambda, int nv, int nt, double* theta_bar) {
  for (int c = 0; c < nt; c++) {
    double s = 0;
    for (int k = 0; k < nv; k++) s += R[(size_t)k * nt + c] * lambda[k];
    theta_bar[c] = -s;
  }
}

// theta_bar = -R(qacc)' lambda (params.h)
void phys_param_forces_vjp(const physModel* m, physData* d, const physParamTable* t, const double* qacc,
                           const double* lambda, double* theta_bar) {
  int nv = m->nv, nt = t->ntheta;
  if (nt == 0) return;
  size_t mark = phys_stack_mark(d);
  double* R = phys_stack_alloc(d, (size_t)nv * nt);
  phys_param_forces(m, d, t, qacc, R);
  minus_rt_lambda(R, lambda, nv, nt, theta_bar);
  phys_stack_free(d, mark);
}
