// step_deriv.c - Jacobians and reverse mode of one contact-free phys_step (the smooth kind of step_record.h,
// whose dispatch calls them), and the finite-difference twin of the step's Jacobians.
//
// The step without active constraints (src/step/step.c, MuJoCo 2.2.2's mj_Euler):
//   f  = qfrc_passive + qfrc_actuator + qfrc_applied + J' xfrc_applied,   c = qfrc_bias      (at q, v, u)
//   a  = M~^-1 (f - c),   M~ = M + dt B   (B = diag(dof_damping); implicit damping unless PHYS_DSBL_EULERDAMP)
//   v+ = v + dt a,        q+ = q (+) dt v+
// Since M~ a + c = RNEA(q, v, a) + (armature + dt B) a, with constant armature and B,
//   da = M~^-1 (df - dRNEA|_a),   i.e. da/dq = M~^-1 (df/dq - dtau/dq),  da/dv = M~^-1 (df/dv - dtau/dv),
//   da/du = M~^-1 df/du   (Carpentier & Mansard: the derivative of ABA is -M^-1 times that of RNEA).
// Integration on the configuration manifold: a ball (or free rotation) moves as R+ = R Exp(phi), phi = dt w+.
// With R' = R Exp(dq) and w+' = w+ + dw+: R' Exp(phi') = R+ Exp(Exp(phi)' dq + Jr(phi) dt dw+), so in tangent
// coordinates  dq+ = E dq + dt D dv+  with E = blockdiag(1, Exp(phi)'), D = blockdiag(1, Jr(phi)) per group,
//   Jr(phi) = E3 - (1 - cos t)/t^2 [phi] + (t - sin t)/t^3 [phi]^2,   Exp(phi)' = E3 - sin t/t [phi] + (1 - cos t)/t^2 [phi]^2
// (t = |phi|; hinge, slide and free translation: 1 and 1). Hence, with x = (q tangent, v):
//   A = [[E + dt D V_q, dt D V_v], [V_q, V_v]],  B = [[dt D V_u], [V_u]],
//   V_q = dt da/dq,  V_v = E_nv + dt da/dv,  V_u = dt da/du.
// M~ is factored on the kinematic tree (src/dyn/factor.h) and solved for all columns of A (then of B) in one
// pass over the factor (solve_rows).
#include <math.h>
#include <string.h>

#include "collision.h"
#include "contact.h"
#include "dyn.h"
#include "factor.h"
#include "grad.h"
#include "rot.h"
#include "step.h"
#include "residual.h"
#include "residual_deriv.h"
#include "step_record.h"

//---------------------------------------------------------------------------------------------------------
// the linearization point

// the smooth step's point (step_record.h) at d's state, which has no constraints (the record's kind): kinematics
// (unless done), qM, qfrc_bias, passive and actuator forces; the factor L of M~ (nv x nv) and a = M~^-1 (f - c)
// into qacc (nv). PHYS_ERR_NUMERIC (and a counted warning) if M~ is not positive definite.
physStatus phys_smooth_step_point(const physModel* m, physData* d, int kinematics_done, double* L, double* qacc) {
  int nv = m->nv;
  if (!kinematics_done) phys_kinematics(m, d);
  phys_com_pos(m, d);
  phys_com_vel(m, d);
  phys_crb(m, d);
  phys_bias_forces(m, d);
  phys_passive(m, d);
  phys_actuation(m, d);

  // M~ = qM + dt B (implicit damping) on the tree, a = M~^-1 (f - c); penalty's frictionloss adds dt C to M~
  // and -C v to f (src/contact/penalty.c, as the step)
  size_t mark = phys_stack_mark(d);
  double* add = phys_stack_alloc(d, (size_t)nv);
  double* ffl = phys_stack_alloc(d, (size_t)nv);
  phys_implicit_damping_add(m, add);   // (step.h: the step's own test)
  memset(ffl, 0, sizeof(double) * (size_t)nv);
  int pfl = m->opt.contact == PHYS_CONTACT_PENALTY && m->nfrictionloss > 0;
  if (pfl) phys_penalty_frictionloss(m, d, ffl, add);
  int ok = phys_factor_m(m, L, d->qM, add) == nv;
  if (!ok) {
    phys_stack_free(d, mark);
    phys_data_warning(d, "phys_step_jacobian: M + dt B not positive definite at time %g", d->time);
    return PHYS_ERR_NUMERIC;
  }
  double* f = qacc;
  for (int i = 0; i < nv; i++) f[i] = d->qfrc_passive[i] + d->qfrc_actuator[i] + d->qfrc_applied[i] + ffl[i];
  phys_stack_free(d, mark);
  for (int b = 1; b < m->nbody; b++) {
    const double* x = d->xfrc_applied + 6 * b;
    if (x[0] != 0 || x[1] != 0 || x[2] != 0 || x[3] != 0 || x[4] != 0 || x[5] != 0)
      phys_apply_force(m, d, f, b, d->xipos + 3 * b, x, x + 3);
  }
  for (int i = 0; i < nv; i++) f[i] -= d->qfrc_bias[i];
  phys_solve_m(m, L, qacc, f);
  memcpy(d->qacc, qacc, sizeof(double) * (size_t)nv);   // (the documented output: the step's acceleration)
  return PHYS_OK;
}

//---------------------------------------------------------------------------------------------------------
// integration on SO(3)

// per dof: rot[k] = index of its rotation group's 3x3 blocks in Jr/Et (-1: scalar dof with E = D = 1)
static void integration_blocks(const physModel* m, const double* vnew, int* rot, double* Jr, double* Et) {
  double dt = m->opt.timestep;
  int nb = 0;
  for (int j = 0; j < m->njnt; j++) {
    int da = m->jnt_dofadr[j], type = m->jnt_type[j];
    if (type == PHYS_JNT_HINGE || type == PHYS_JNT_SLIDE) {
      rot[da] = -1;
      continue;
    }
    if (type == PHYS_JNT_FREE) {
      rot[da] = rot[da + 1] = rot[da + 2] = -1;
      da += 3;
    }
    double phi[3] = {dt * vnew[da], dt * vnew[da + 1], dt * vnew[da + 2]};
    phys_so3_jacobians(Jr + 9 * nb, Et + 9 * nb, phi);
    rot[da] = rot[da + 1] = rot[da + 2] = nb++;
  }
}

// y = D x (transpose 0) or D' x (transpose 1) with the per-group blocks in J (Jr or Et); y may not alias x
static void apply_blocks(const physModel* m, const int* rot, const double* J, const double* x, double* y,
                         int transpose) {
  for (int k = 0; k < m->nv; k++) {
    if (rot[k] < 0) {
      y[k] = x[k];
      continue;
    }
    const double* B = J + 9 * rot[k];
    int g = phys_dof_group(m, k), r = k - g;
    y[k] = 0;
    for (int c = 0; c < 3; c++) y[k] += (transpose ? B[3 * c + r] : B[3 * r + c]) * x[g + c];
  }
}

//---------------------------------------------------------------------------------------------------------
// Jacobians

// y -= a x over n contiguous values (rows of different right-hand sides never alias); unrolled by four so
// that the compiler pairs the independent updates into vector instructions at -O2
static inline void row_axpy(double* restrict y, const double* restrict x, double a, int n) {
  int c = 0;
  for (; c + 4 <= n; c += 4) {
    y[c] -= a * x[c];
    y[c + 1] -= a * x[c + 1];
    y[c + 2] -= a * x[c + 2];
    y[c + 3] -= a * x[c + 3];
  }
  for (; c < n; c++) y[c] -= a * x[c];
}

// X <- M~^-1 X for the nv x ncol block X (row stride ld) with the tree factor L of M~ = L' D L
// (factor.h's storage: L_ki at [k*nv + i] for the ancestors i of k, D_k on the diagonal), all columns at once:
//   L' Y = X: leaves first, Y_i -= L_ki Y_k for the ancestors i of k;   Y_k /= D_k;
//   L Z = Y: root first, Z_k -= L_ki Z_i for the ancestors i of k.
// Row operations over contiguous columns: one pass over the factor for every right-hand side.
static void solve_rows(const physModel* m, const double* L, double* X, int ncol, int ld) {
  int nv = m->nv;
  const int* parent = m->dof_parentid;
  for (int k = nv - 1; k >= 0; k--)
    for (int i = parent[k]; i >= 0; i = parent[i])
      row_axpy(X + (size_t)i * ld, X + (size_t)k * ld, L[(size_t)k * nv + i], ncol);
  for (int k = 0; k < nv; k++) {
    double* Xk = X + (size_t)k * ld;
    double dinv = 1 / L[(size_t)k * nv + k];
    for (int c = 0; c < ncol; c++) Xk[c] *= dinv;
    for (int i = parent[k]; i >= 0; i = parent[i]) row_axpy(Xk, X + (size_t)i * ld, L[(size_t)k * nv + i], ncol);
  }
}

// the q+ rows (nv x ncol, stride ld) from the v+ rows V: Q = dt D V, D = Jr(phi) on rotation groups, 1 else
static void position_rows(const physModel* m, const int* rot, const double* Jr, const double* V, double* Q,
                          int ncol, int ld) {
  double dt = m->opt.timestep;
  for (int k = 0; k < m->nv; k++) {
    double* Qk = Q + (size_t)k * ld;
    if (rot[k] < 0) {
      const double* Vk = V + (size_t)k * ld;
      for (int c = 0; c < ncol; c++) Qk[c] = dt * Vk[c];
      continue;
    }
    int g = phys_dof_group(m, k), r = k - g;
    const double *J = Jr + 9 * rot[k], *V0 = V + (size_t)g * ld, *V1 = V0 + ld, *V2 = V1 + ld;
    double j0 = dt * J[3 * r], j1 = dt * J[3 * r + 1], j2 = dt * J[3 * r + 2];
    for (int c = 0; c < ncol; c++) Qk[c] = j0 * V0[c] + j1 * V1[c] + j2 * V2[c];
  }
}

// G_q = df/dq - dtau/dq, G_v = df/dv - dtau/dv (nv x nv each) at a = qacc: f the passive, actuator and applied
// forces, tau = RNEA(q, v, a) (step_record.h)
void phys_step_force_deriv(const physModel* m, physData* d, const double* qacc, double* Gq, double* Gv) {
  size_t nn = (size_t)m->nv * m->nv;
  phys_rnea_deriv(m, d, qacc, Gq, Gv, NULL);
  for (size_t i = 0; i < nn; i++) Gq[i] = -Gq[i], Gv[i] = -Gv[i];
  phys_passive_deriv(m, d, Gq, Gv, NULL);
  phys_actuation_deriv(m, d, Gq, Gv, NULL);
  phys_xfrc_deriv(m, d, Gq);
}

// A: the v+ rows hold [G_q | G_v] (nv x 2nv), solved in place to da/dq, da/dv, then V_q = dt da/dq,
// V_v = E + dt da/dv; the q+ rows = dt D V plus E on the q columns (Exp(phi)' blocks, 1 on scalar dofs)
static void jacobian_a(const physModel* m, physData* d, const double* L, const double* qacc,
                       const physFrictionPoint* fp, const int* rot, const double* Jr, const double* Et, double* A) {
  int nv = m->nv, n2 = 2 * nv;
  double dt = m->opt.timestep;
  size_t mark = phys_stack_mark(d), nn = (size_t)nv * nv;
  double* Gq = phys_stack_alloc(d, nn);
  double* Gv = phys_stack_alloc(d, nn);
  phys_step_force_deriv(m, d, qacc, Gq, Gv);
  phys_friction_dfdv(m, fp, Gv);
  phys_friction_dfdq(m, fp, Gq);   // (tendon frictionloss rows' forces along r(q))
  double* V = A + (size_t)nv * n2;
  for (int i = 0; i < nv; i++) {
    memcpy(V + (size_t)i * n2, Gq + (size_t)i * nv, sizeof(double) * (size_t)nv);
    memcpy(V + (size_t)i * n2 + nv, Gv + (size_t)i * nv, sizeof(double) * (size_t)nv);
  }
  phys_stack_free(d, mark);
  solve_rows(m, L, V, n2, n2);
  phys_residual_jacobian_add(m, d, 1, V, n2);   // da/dx += dr/dx (the residual network; none: nothing)
  for (int i = 0; i < nv; i++) {
    double* Vi = V + (size_t)i * n2;
    for (int c = 0; c < n2; c++) Vi[c] *= dt;
    Vi[nv + i] += 1;
  }
  phys_friction_project(m, d, fp, V, n2, n2);
  phys_friction_q_term(m, d, fp, V, n2);   // (sticking tendon rows' r(q)' v+ = 0 moves with q)
  position_rows(m, rot, Jr, V, A, n2, n2);
  for (int k = 0; k < nv; k++) {
    if (rot[k] < 0) {
      A[(size_t)k * n2 + k] += 1;
      continue;
    }
    int g = phys_dof_group(m, k), r = k - g;
    for (int c = 0; c < 3; c++) A[(size_t)k * n2 + g + c] += Et[9 * rot[k] + 3 * r + c];
  }
}

// X (2nv x ncol, row-major): the v+ rows hold V = dv+/d(inputs) on entry; the q+ rows become dt D V, plus E on
// the first nv columns when q_cols (the columns of the state's q tangent: A's), D and E at v+ = vnew
// (step_record.h; the implicit step's Jacobians, implicit_deriv.c)
void phys_step_position_rows(const physModel* m, physData* d, const double* vnew, double* X, int ncol, int q_cols) {
  int nv = m->nv;
  size_t mark = phys_stack_mark(d);
  double* Jr = phys_stack_alloc(d, 9 * (size_t)nv);
  double* Et = phys_stack_alloc(d, 9 * (size_t)nv);
  int* rot = (int*)phys_stack_alloc(d, (size_t)nv);
  integration_blocks(m, vnew, rot, Jr, Et);
  position_rows(m, rot, Jr, X + (size_t)nv * ncol, X, ncol, ncol);
  for (int k = 0; k < nv && q_cols; k++) {
    if (rot[k] < 0) {
      X[(size_t)k * ncol + k] += 1;
      continue;
    }
    int g = phys_dof_group(m, k), r = k - g;
    for (int c = 0; c < 3; c++) X[(size_t)k * ncol + g + c] += Et[9 * rot[k] + 3 * r + c];
  }
  phys_stack_free(d, mark);
}

// the integration blocks at the smooth step's v+ (integration_blocks), in arena memory of the caller's mark
typedef struct stepBlocks_ {
  int* rot;
  double *Jr, *Et;
} stepBlocks;

static stepBlocks step_blocks(const physModel* m, physData* d, const double* qacc) {
  int nv = m->nv;
  double* vnew = phys_stack_alloc(d, (size_t)nv);
  stepBlocks b;
  b.Jr = phys_stack_alloc(d, 9 * (size_t)nv);
  b.Et = phys_stack_alloc(d, 9 * (size_t)nv);
  b.rot = (int*)phys_stack_alloc(d, (size_t)nv);
  phys_smooth_step_vnew(m, d, qacc, vnew);
  integration_blocks(m, vnew, b.rot, b.Jr, b.Et);
  return b;
}

// X (2nv x ncol) = d(q+, v+) / d(generalized force columns): the v+ rows hold the columns (nv x ncol) on entry,
// solved in place, V = dt M~^-1 F; the q+ rows = dt D V
static void force_columns(const physModel* m, physData* d, const double* L, const physFrictionPoint* fp,
                          const int* rot, const double* Jr, double* X, int ncol) {
  int nv = m->nv;
  double dt = m->opt.timestep;
  double* V = X + (size_t)nv * ncol;
  solve_rows(m, L, V, ncol, ncol);
  for (size_t i = 0; i < (size_t)nv * ncol; i++) V[i] *= dt;
  phys_friction_project(m, d, fp, V, ncol, ncol);
  position_rows(m, rot, Jr, V, X, ncol, ncol);
}

// B: the v+ rows hold df/du (nv x nu), solved in place, V_u = dt da/du; the q+ rows = dt D V_u
static void jacobian_b(const physModel* m, physData* d, const double* L, const physFrictionPoint* fp,
                       const int* rot, const double* Jr, double* B) {
  int nv = m->nv, nu = m->nu;
  double* V = B + (size_t)nv * nu;
  memset(V, 0, sizeof(double) * (size_t)nv * nu);
  phys_passive_deriv(m, d, NULL, NULL, V);
  phys_actuation_deriv(m, d, NULL, NULL, V);
  force_columns(m, d, L, fp, rot, Jr, B, nu);
}

// d(q+, v+) / d(force columns) of the smooth step at (L, qacc) (step_record.h)
void phys_smooth_step_force_jacobian(const physModel* m, physData* d, const double* L, const double* qacc,
                                     const physFrictionPoint* fp, double* X, int ncol) {
  size_t mark = phys_stack_mark(d);
  stepBlocks b = step_blocks(m, d, qacc);
  force_columns(m, d, L, fp, b.rot, b.Jr, X, ncol);
  phys_stack_free(d, mark);
}

// vnew = v + dt (qacc + r) at d's state: the smooth step's v+ (r the residual network's acceleration, none: 0)
void phys_smooth_step_vnew(const physModel* m, physData* d, const double* qacc, double* vnew) {
  int nv = m->nv;
  double dt = m->opt.timestep;
  phys_residual_acc(m, d, vnew);
  for (int i = 0; i < nv; i++) vnew[i] = d->qvel[i] + dt * (qacc[i] + vnew[i]);
}

// A and B of the smooth step at (L, qacc) (step_record.h)
void phys_smooth_step_jacobian(const physModel* m, physData* d, const double* L, const double* qacc,
                               const physFrictionPoint* fp, double* A, double* B) {
  size_t mark = phys_stack_mark(d);
  stepBlocks b = step_blocks(m, d, qacc);
  if (A) jacobian_a(m, d, L, qacc, fp, b.rot, b.Jr, b.Et, A);
  if (B && m->nu > 0) jacobian_b(m, d, L, fp, b.rot, b.Jr, B);
  phys_stack_free(d, mark);
}

//---------------------------------------------------------------------------------------------------------
// reverse mode

// the smooth step's reverse mode at (L, qacc) (step_record.h); lambda (nv) receives the force adjoint.
// qbar+ = xbar_next[0:nv], vbar+ = xbar_next[nv:2nv]:
//   qbar = E' qbar+,  w = Pi' (vbar+ + dt D' qbar+) (Pi: frictionloss_deriv.h, I without rows),  vbar = w,  lambda = M~^-1 (dt w),
//   qbar += (df/dq)' lambda - dtau/dq' lambda,  vbar += (df/dv)' lambda - dtau/dv' lambda,  ubar = (df/du)' lambda
void phys_smooth_step_vjp(const physModel* m, physData* d, const double* L, const double* qacc,
                          const physFrictionPoint* fp, const double* xbar_next, double* xbar, double* ubar,
                          double* lambda) {
  int nv = m->nv, nu = m->nu;
  double dt = m->opt.timestep;
  size_t mark = phys_stack_mark(d);
  double* w = phys_stack_alloc(d, (size_t)nv);
  double* lam = phys_stack_alloc(d, (size_t)nv);
  double* qb = phys_stack_alloc(d, (size_t)nv);
  double* vb = phys_stack_alloc(d, (size_t)nv);
  stepBlocks b = step_blocks(m, d, qacc);

  const double *qbn = xbar_next, *vbn = xbar_next + nv;
  apply_blocks(m, b.rot, b.Jr, qbn, w, 1);
  for (int i = 0; i < nv; i++) w[i] = vbn[i] + dt * w[i];
  memset(qb, 0, sizeof(double) * (size_t)nv);
  phys_friction_q_term_t(m, d, fp, w, qb);   // (sticking tendon rows: qbar -= C' K_SS^-1 K' w, added below)
  phys_friction_project_t(m, d, fp, w);      // (frictionloss rows: w <- Pi' w)
  for (int i = 0; i < nv; i++) lam[i] = dt * w[i];
  phys_solve_m(m, L, lam, lam);
  memcpy(lambda, lam, sizeof(double) * (size_t)nv);

  double *xq = NULL, *xv = NULL, *ub = ubar && nu > 0 ? ubar : NULL;
  if (xbar) {
    xq = xbar;
    xv = xbar + nv;
    apply_blocks(m, b.rot, b.Et, qbn, xq, 1);
    memcpy(xv, w, sizeof(double) * (size_t)nv);
    if (fp && fp->Cq)
      for (int i = 0; i < nv; i++) xq[i] += qb[i];
    phys_rnea_vjp(m, d, qacc, lam, qb, vb, NULL);
    for (int i = 0; i < nv; i++) xq[i] -= qb[i], xv[i] -= vb[i];
  }
  // the other forces in reverse mode: (df/dq)' lambda, (df/dv)' lambda, (df/du)' lambda
  if (ub) memset(ub, 0, sizeof(double) * (size_t)nu);
  phys_passive_vjp(m, d, lam, xq, xv, ub);
  phys_friction_dfdv_vjp(m, fp, lam, xv);
  phys_friction_dfdq_vjp(m, fp, lam, xq);
  phys_actuation_vjp(m, d, lam, xq, xv, ub);
  if (xq) phys_xfrc_vjp(m, d, lam, xq);
  // the residual network's acceleration: rbar = dt w, into qbar and vbar
  if (xbar && m->residual) {
    for (int i = 0; i < nv; i++) lam[i] = dt * w[i];
    phys_residual_vjp(m, d, lam, xq, xv, NULL);
  }
  phys_stack_free(d, mark);
}

//---------------------------------------------------------------------------------------------------------
// finite-difference twin

// the state the perturbed steps advance and the differences restore; the caller's contact list d->contact is
// every perturbed step's warm-start input, read only (the steps' own contacts go to arena memory, out;
// d->contact_prev is not touched)
typedef struct stepSave_ {
  int nwarning;
  double *x, *ctrl;   // x: qpos, qvel, time (phys_state_save, step.h)
  physContactList out;
} stepSave;

// save d's state into arena memory (caller marks/frees)
static void save_state(const physModel* m, physData* d, stepSave* s) {
  s->nwarning = d->nwarning;
  s->x = phys_stack_alloc(d, phys_state_size(m));
  s->ctrl = phys_stack_alloc(d, (size_t)m->nu + 1);
  s->out = phys_contact_list_arena(d);
  phys_state_save(m, d, s->x);
  memcpy(s->ctrl, d->ctrl, sizeof(double) * (size_t)m->nu);
}

// restore d's state from s (warnings are not restored: the caller compares the count)
static void load_state(const physModel* m, physData* d, const stepSave* s) {
  phys_state_load(m, d, s->x);
  memcpy(d->ctrl, s->ctrl, sizeof(double) * (size_t)m->nu);
}

// phys_step from the caller's contact list as the warm start (the step the differences take), its contacts
// into s->out
static void step_from(const physModel* m, physData* d, stepSave* s) {
  physWarmStart warm = {d->ncon, d->contact};
  phys_step_warm(m, d, NULL, &warm, &s->out);
}

// one perturbed step from s: input coordinate j of kind k (0 q tangent, 1 v, 2 ctrl, 3 act) moved by h; res
// (nx) = (q+ (-) q+_0, v+ - v+_0, act+ - act+_0) against the nominal result (q0n, v0n: v+_0 then act+_0)
static void perturbed_step(const physModel* m, physData* d, stepSave* s, int k, int j, double h,
                           const double* q0n, const double* v0n, double* e, double* res) {
  int nv = m->nv;
  load_state(m, d, s);
  if (k == 0) {
    memset(e, 0, sizeof(double) * (size_t)nv);
    e[j] = 1;
    phys_integrate_pos(m, d->qpos, e, h);
  } else if (k == 1) {
    d->qvel[j] += h;
  } else if (k == 2) {
    d->ctrl[j] += h;
  } else {
    d->act[j] += h;
  }
  step_from(m, d, s);
  phys_difference_pos(m, res, 1, q0n, d->qpos);
  for (int i = 0; i < nv; i++) res[nv + i] = d->qvel[i] - v0n[i];
  for (int i = 0; i < m->na; i++) res[2 * nv + i] = d->act[i] - v0n[nv + i];
}

physStatus phys_step_jacobian_fd(const physModel* m, physData* d, double eps, double* A, double* B) {
  int nv = m->nv, nu = m->nu, na = m->na, n2 = 2 * nv + na;   // (n2: nx with activations)
  size_t mark = phys_stack_mark(d);
  stepSave s;
  save_state(m, d, &s);
  double* q0n = phys_stack_alloc(d, (size_t)m->nq);
  double* v0n = phys_stack_alloc(d, (size_t)nv + (size_t)na);
  double* e = phys_stack_alloc(d, (size_t)nv);
  double* rp = phys_stack_alloc(d, (size_t)n2);
  double* rm = phys_stack_alloc(d, (size_t)n2);

  // nominal step
  step_from(m, d, &s);
  memcpy(q0n, d->qpos, sizeof(double) * (size_t)m->nq);
  memcpy(v0n, d->qvel, sizeof(double) * (size_t)nv);
  if (na > 0) memcpy(v0n + nv, d->act, sizeof(double) * (size_t)na);

  // central differences: column = (x+(x + eps e) - x+(x - eps e)) / 2 eps, in the tangent space at x+_0
  for (int k = 0; k < 4; k++) {
    double* M = k == 2 ? B : A;
    int ncol = k < 2 ? nv : (k == 2 ? nu : na), ld = k == 2 ? nu : n2, off = k == 1 ? nv : (k == 3 ? 2 * nv : 0);
    if (!M) continue;
    for (int j = 0; j < ncol; j++) {
      perturbed_step(m, d, &s, k, j, eps, q0n, v0n, e, rp);
      perturbed_step(m, d, &s, k, j, -eps, q0n, v0n, e, rm);
      for (int i = 0; i < n2; i++) M[(size_t)i * ld + off + j] = (rp[i] - rm[i]) / (2 * eps);
    }
  }
  int warned = d->nwarning != s.nwarning;
  load_state(m, d, &s);
  phys_stack_free(d, mark);
  return warned ? PHYS_ERR_NUMERIC : PHYS_OK;
}
