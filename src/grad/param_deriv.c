// param_deriv.c - the parameter Jacobian P = dx+/dtheta of one contact-free phys_step and its reverse mode.
//
// The step (step_deriv.c): M~ a + c = f with M~ = M + diag(armature) + dt diag(b) (implicit damping b), i.e.
//   RNEA(q, v, a; pi, g) + (armature + dt b) a - f(q, v, u; theta) = 0.
// Differentiating at fixed (q, v, u):  M~ da/dtheta = -R,  R = d RNEA/dtheta + (darmature + dt db) a - df/dtheta:
//   inertial parameters: dRNEA/dpi_b = Y_b (the regressor at the step's a) times dpi_b/dtheta (params.c), and
//     an applied xfrc at the com moves with it: df_j/dc = cdof_ang_j . ((R_b dc) x F_b);
//   joint damping b (all dofs of the joint): f = -b v, so R = v + dt a (dt a only with implicit damping);
//   armature: R = a;  joint stiffness: f = -k (q (-) q_spring), R = q (-) q_spring;
//   gravity: RNEA's gravity term -sum_b m_b Jcom_b' g, R_i = -sum_b m_b Jcom_b(i, :)';
//   gear: joint motor f = gear c, R = -c (c the clamped control); spring motor f = -gear c u, R = c u, with
//     u = -dL/dq' the generalized force of a unit tension; rest-length actuator t = k (L - L0 - gear c) + ...;
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
//   frictionloss: R = -s_k e_k on the joint's dofs (frictionloss_deriv.h), and every column projected by Pi.
// Then v+ = v + dt a, q+ = q (+) dt v+:  P = [[dt D V], [V]],  V = dt da/dtheta = -dt M~^-1 R, with
// D = Jr(dt v+) on ball and free-rotation groups (1 elsewhere), as phys_step_jacobian's A.
// Reverse mode: theta_bar = P' xbar = -R' lambda, lambda = M~^-1 (dt w), w = vbar+ + dt D' qbar+.
#include <math.h>
#include <string.h>

#include "dyn.h"
#include "factor.h"
#include "grad.h"
#include "params.h"
#include "rot.h"
#include "step_record.h"

//---------------------------------------------------------------------------------------------------------
// integration

// y = D x (transpose 0) or D' x (1) for one vector (nv), D = Jr(dt vnew) on rotation groups; y != x
static void apply_d(const physModel* m, const double* vnew, const double* x, double* y, int transpose) {
  double dt = m->opt.timestep;
  memcpy(y, x, sizeof(double) * (size_t)m->nv);
  for (int j = 0; j < m->njnt; j++) {
    int type = m->jnt_type[j], g = m->jnt_dofadr[j] + (type == PHYS_JNT_FREE ? 3 : 0);
    if (type != PHYS_JNT_FREE && type != PHYS_JNT_BALL) continue;
    double phi[3] = {dt * vnew[g], dt * vnew[g + 1], dt * vnew[g + 2]}, Jr[9];
    phys_so3_jacobians(Jr, NULL, phi);
    for (int r = 0; r < 3; r++) {
      y[g + r] = 0;
      for (int c = 0; c < 3; c++) y[g + r] += (transpose ? Jr[3 * c + r] : Jr[3 * r + c]) * x[g + c];
    }
  }
}

//---------------------------------------------------------------------------------------------------------
// the smooth step's columns, and the entry points (through the step record)

// P of the smooth step at (L, qacc) (step_record.h): V = -dt M~^-1 R column by column, Q = dt D V
void phys_smooth_step_param_jacobian(const physModel* m, physData* d, const double* L, const double* qacc,
                                     const physFrictionPoint* fp, const physParamTable* t, double* P) {
  int nv = m->nv, nt = t->ntheta;
  double dt = m->opt.timestep;
  size_t mark = phys_stack_mark(d);
  double* V = P + (size_t)nv * nt;   // the v+ rows hold R, then V
  phys_param_forces(m, d, t, qacc, V);
  double* col = phys_stack_alloc(d, (size_t)nv);
  double* dcol = phys_stack_alloc(d, (size_t)nv);
  double* vnew = phys_stack_alloc(d, (size_t)nv);
  phys_smooth_step_vnew(m, d, qacc, vnew);
  if (phys_friction_in_table(t)) phys_friction_param_columns(m, fp, t, vnew, V);
  for (int c = 0; c < nt; c++) {
    for (int k = 0; k < nv; k++) col[k] = V[(size_t)k * nt + c];
    phys_solve_m(m, L, col, col);
    for (int k = 0; k < nv; k++) col[k] *= -dt;
    phys_friction_project(m, d, fp, col, 1, 1);
    apply_d(m, vnew, col, dcol, 0);
    for (int k = 0; k < nv; k++) {
      V[(size_t)k * nt + c] = col[k];
      P[(size_t)k * nt + c] = dt * dcol[k];
    }
  }
  phys_stack_free(d, mark);
}
