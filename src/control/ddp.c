// ddp.c - control-limited iLQR on the step Jacobians (control.h)
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "chol.h"
#include "control.h"
#include "grad.h"
#include "rollout.h"
#include "rot.h"
#include "shooting.h"
#include "spatial.h"

#define PHYS_POINT_SCRATCH 18   // point_derivs' scratch per dof: two Jacobians (3 nv), G and G_ref (6 nv)

//---------------------------------------------------------------------------------------------------------
// the problem and its workspace

// the workspace's arrays, carved from p->work in this order (phys_control_make)
typedef struct ddpWork_ {
  double *A, *B;            // T x (nx x nx), T x (nx x nu): the augmented step Jacobians
  double *K, *k;            // T x (nu x nx), T x nu: feedback and feedforward
  double *Xn, *Un;          // trial states and controls of the line search
  double *x0;               // qpos, qvel, time of the initial state
  double* con0;             // its contact list (nconmax physContact)
  double *Vx, *Vxx, *Qx, *Qu, *Qxx, *Quu, *Qux, *Hreg, *VA, *VB, *Lff, *qp, *lo, *hi, *dx, *r;
  double *Kc, *Quxc;        // nu x nx: the feedback's and Qux's free rows, compacted (backward)
  double* Qr;               // nu x nx: Qux + mu B' A, the state regularization's (backward)
  double *Gp, *Hp;          // the point terms' gradient ((T+1) x 2nv) and Gauss-Newton Hessian ((T+1) x 2nv x
                            // 2nv) at each state of the linearization: p->pointwork (NULL until needed)
  double* jac;              // the point terms' Jacobians' scratch (PHYS_POINT_SCRATCH nv)
  int* free;                // nu: rows of the box QP not at a bound
  int ncon0;
} ddpWork;

// doubles of the contact list of nconmax contacts
static size_t contact_doubles(const physModel* m) {
  return (sizeof(physContact) * (size_t)m->nconmax + sizeof(double) - 1) / sizeof(double);
}

// carve the workspace from base (NULL: only count); returns the doubles used
static size_t carve(const physModel* m, int T, double* base, ddpWork* w) {
  size_t nx = (size_t)(2 * m->nv + m->nu), nu = (size_t)m->nu, ns = (size_t)(m->nq + m->nv), n = 0;
  double** slot[] = {&w->A, &w->B, &w->K, &w->k, &w->Xn, &w->Un, &w->x0, &w->con0, &w->Vx, &w->Vxx, &w->Qx,
                     &w->Qu, &w->Qxx, &w->Quu, &w->Qux, &w->Hreg, &w->VA, &w->VB, &w->Lff, &w->qp, &w->lo,
                     &w->hi, &w->dx, &w->r, &w->jac, &w->Kc, &w->Quxc, &w->Qr};
  size_t size[] = {T * nx * nx, T * nx * nu, T * nu * nx, T * nu, (T + 1) * ns, T * nu, ns + 1,
                   contact_doubles(m), nx, nx * nx, nx, nu, nx * nx, nu * nu, nu * nx, nu * nu, nx * nx, nx * nu,
                   nu * nu, 3 * nu, nu, nu, nx, (size_t)m->nv, PHYS_POINT_SCRATCH * (size_t)m->nv, nu * nx, nu * nx,
                   nu * nx};
  for (size_t i = 0; i < sizeof size / sizeof size[0]; i++) {
    if (base) *slot[i] = base + n;
    n += size[i];
  }
  if (base) w->free = (int*)(base + n);
  n += (nu * sizeof(int) + sizeof(double) - 1) / sizeof(double);
  return n;
}

// doubles of the point terms' store: gradient and Gauss-Newton Hessian at each of the T + 1 states
static size_t point_doubles(const physControlProblem* p) {
  size_t n2 = 2 * (size_t)p->nv;
  return (size_t)(p->T + 1) * (n2 + n2 * n2);
}

// w <- p's workspace (the point terms' store when it exists, else NULL)
static void workspace(const physControlProblem* p, ddpWork* w) {
  carve(p->m, p->T, p->work, w);
  w->Gp = p->pointwork;
  w->Hp = p->pointwork ? p->pointwork + (size_t)(p->T + 1) * 2 * p->nv : NULL;
}

physControlProblem* phys_control_make(const physModel* m, int T, int maxiter) {
  if (!m || T < 1 || maxiter < 0) return NULL;
  if (maxiter == 0) maxiter = 200;
  int nq = m->nq, nv = m->nv, nu = m->nu;
  ddpWork w;
  size_t nwork = carve(m, T, NULL, &w);
  // the problem's own arrays: lo, hi, wu, wdu, uprev (nu each), run and fin (nq + 3 nv each), U, X, iter
  size_t nown = 5 * (size_t)nu + 2 * (size_t)(nq + 3 * nv) + (size_t)T * nu + (size_t)(T + 1) * (nq + nv) +
                (size_t)(maxiter + 1) * (sizeof(physDdpIter) / sizeof(double) + 1);
  physControlProblem* p = calloc(1, sizeof *p + sizeof(double) * (nown + nwork));
  if (!p) return NULL;
  double* s = (double*)(p + 1);
  p->m = m, p->T = T, p->nu = nu, p->nv = nv, p->nx = 2 * nv + nu;
  p->lo = s, s += nu;
  p->hi = s, s += nu;
  p->wu = s, s += nu;
  p->wdu = s, s += nu;
  p->uprev = s, s += nu;
  physStateCost* c[2] = {&p->run, &p->fin};
  for (int i = 0; i < 2; i++) {
    c[i]->qref = s, s += nq;
    c[i]->vref = s, s += nv;
    c[i]->wq = s, s += nv;
    c[i]->wv = s, s += nv;
    memcpy(c[i]->qref, m->qpos0, sizeof(double) * (size_t)nq);
  }
  p->U = s, s += (size_t)T * nu;
  p->X = s, s += (size_t)(T + 1) * (nq + nv);
  p->iter = (physDdpIter*)s, s += (size_t)(maxiter + 1) * (sizeof(physDdpIter) / sizeof(double) + 1);
  p->work = s, p->nwork = nwork;
  for (int j = 0; j < nu; j++) {
    int lim = m->actuator_ctrllimited[j];
    p->lo[j] = lim ? m->actuator_ctrlrange[2 * j] : -INFINITY;
    p->hi[j] = lim ? m->actuator_ctrlrange[2 * j + 1] : INFINITY;
  }
  p->maxiter = maxiter;
  p->tol = 1e-9;
  p->mu_min = 1e-6;
  p->mu_max = 1e10;
  p->stall_tol = 1e-6;
  return p;
}

void phys_control_free(physControlProblem* p) {
  if (p) free(p->pointwork);
  if (p) free(p->awarework);
  free(p);
}

//---------------------------------------------------------------------------------------------------------
// cost

// the qpos terms of c on the rotation groups (a ball, a free joint's last 3 dofs) differentiated exactly: for
// r = q (-) qref and W = diag(wq) on the group, moving q to q (+) delta = q Exp(delta) moves r by Jr^-1(r) delta
// (phys_so3_jr_inv), so the group's gradient rows of g become Jr^-1(r)' W r and the Gauss-Newton Hessian block
// of H (leading dimension ldh, may be NULL) gains Jr^-1(r)' W Jr^-1(r) - W (state_cost put W there). Groups
// without weight are left as they are
static void rotation_terms(const physModel* m, const physStateCost* c, const double* r, double* g, double* H,
                           size_t ldh) {
  for (int j = 0; j < m->njnt; j++) {
    int a = m->jnt_dofadr[j] + (m->jnt_type[j] == PHYS_JNT_FREE ? 3 : 0);
    if (!(m->jnt_type[j] == PHYS_JNT_BALL || m->jnt_type[j] == PHYS_JNT_FREE)) continue;
    const double* w = c->wq + a;
    if (w[0] == 0 && w[1] == 0 && w[2] == 0) continue;
    double Ji[9], wr[3] = {w[0] * r[a], w[1] * r[a + 1], w[2] * r[a + 2]};
    phys_so3_jr_inv(Ji, r + a);
    for (int i = 0; i < 3; i++) g[a + i] = Ji[0 * 3 + i] * wr[0] + Ji[1 * 3 + i] * wr[1] + Ji[2 * 3 + i] * wr[2];
    for (int i = 0; i < 3 && H; i++)
      for (int k = 0; k < 3; k++) {
        double s = w[0] * Ji[0 * 3 + i] * Ji[0 * 3 + k] + w[1] * Ji[1 * 3 + i] * Ji[1 * 3 + k] +
                   w[2] * Ji[2 * 3 + i] * Ji[2 * 3 + k];
        H[(size_t)(a + i) * ldh + a + k] += s - (i == k ? w[i] : 0);
      }
  }
}

// the state terms of c at (q, v): value; g (2nv, may be NULL) <- the gradient in tangent coordinates; H (may
// be NULL unless g is not, leading dimension ldh) += their Gauss-Newton Hessian (the weights; on a rotation
// group Jr^-1' W Jr^-1); r (nv) scratch
static double state_cost(const physModel* m, const physStateCost* c, const double* q, const double* v, double* g,
                         double* H, size_t ldh, double* r) {
  int nv = m->nv;
  double J = 0;
  phys_difference_pos(m, r, 1.0, c->qref, q);
  for (int i = 0; i < nv; i++) {
    double e = v[i] - c->vref[i];
    J += 0.5 * c->wq[i] * r[i] * r[i] + 0.5 * c->wv[i] * e * e;
    if (g) g[i] = c->wq[i] * r[i], g[nv + i] = c->wv[i] * e;
  }
  for (int i = 0; i < nv && H; i++) H[(size_t)i * ldh + i] += c->wq[i], H[(size_t)(nv + i) * ldh + nv + i] += c->wv[i];
  if (g) rotation_terms(m, c, r, g, H, ldh);
  return J;
}

// 1 if c has a velocity term (it needs cdof at the state)
static int has_velocity_term(const physStateCost* c) {
  for (int k = 0; k < c->npoint; k++)
    if (c->point[k].vel) return 1;
  return 0;
}

// the world point of a term (ref 0) or of its reference point (ref 1) at d's kinematics: the site's position or
// the body's frame origin; *body its body
static const double* point_pos(const physModel* m, const physData* d, const physPointCost* pc, int ref, int* body) {
  int isbody = ref ? pc->refbody : pc->body, id = ref ? pc->ref : pc->site;
  *body = isbody ? id : m->site_bodyid[id];
  return isbody ? d->xpos + 3 * id : d->site_xpos + 3 * id;
}

// the linear velocity vp of the world point p of body b at d's cdof and qvel, and if G is not NULL its
// derivative G (3 x 2nv, row-major: d/dq in the tangent, then d/dqd) given jacp (3 x nv, p's Jacobian).
// V_b = (w, V_O) = sum S_k qd_k over the dofs on b's path, vp = V_O + w x p; moving dof j moves everything
// after it by S_j, so dV_b/dq_j = S_j x (V_b - vpre_j) (vpre_j: the velocity before j's group) and p by jacp_j:
// dvp/dq_j = dV_O + dw x p + w x jacp_j; dvp/dqd_j = jacp_j.
static void point_velocity(const physModel* m, const physData* d, int b, const double p[3], const double* jacp,
                           double vp[3], double* G) {
  int nv = m->nv;
  while (b > 0 && m->body_dofnum[b] == 0) b = m->body_parentid[b];
  int k = b > 0 ? m->body_dofadr[b] + m->body_dofnum[b] - 1 : -1;
  double after[6] = {0, 0, 0, 0, 0, 0};   // the velocity of the dofs from the current group on: V_b - vpre
  if (G) memset(G, 0, sizeof(double) * 6 * (size_t)nv);
  // from the leaf up, a group at a time: every dof of a group sees the velocity from its group's start on
  while (k >= 0) {
    int g0 = phys_dof_group(m, k);
    for (int j = g0; j <= k; j++)
      for (int i = 0; i < 6; i++) after[i] += d->cdof[6 * j + i] * d->qvel[j];
    for (int j = g0; j <= k && G; j++) {
      double dV[6], c[3];
      phys_cross_motion(dV, d->cdof + 6 * j, after);
      phys_cross3(c, dV, p);
      for (int i = 0; i < 3; i++) G[(size_t)i * 2 * nv + j] = dV[3 + i] + c[i];
    }
    k = m->dof_parentid[g0];
  }
  phys_cross3(vp, after, p);   // after = V_b now
  for (int i = 0; i < 3; i++) vp[i] += after[3 + i];
  for (int j = 0; j < nv && G; j++) {
    double jc[3] = {jacp[j], jacp[nv + j], jacp[2 * nv + j]}, c[3];
    phys_cross3(c, after, jc);
    for (int i = 0; i < 3; i++) {
      G[(size_t)i * 2 * nv + j] += c[i];
      G[(size_t)i * 2 * nv + nv + j] = jc[i];
    }
  }
}

// the point of term pc (ref 0) or of its reference (ref 1) at d's kinematics: its position or linear velocity y
// and, if G is not NULL, y's derivative G (3 x 2nv: [jacp, 0] for a position, point_velocity's for a velocity);
// jac: 3 nv scratch
static void point_value(const physModel* m, const physData* d, const physPointCost* pc, int ref, double y[3],
                        double* G, double* jac) {
  int b, nv = m->nv;
  const double* p = point_pos(m, d, pc, ref, &b);
  if (G) phys_jac(m, d, p, b, jac, NULL);
  if (pc->vel) {
    point_velocity(m, d, b, p, G ? jac : NULL, y, G);
    return;
  }
  phys_copy3(y, p);
  if (!G) return;
  memset(G, 0, sizeof(double) * 6 * (size_t)nv);
  for (int i = 0; i < 3; i++) memcpy(G + (size_t)i * 2 * nv, jac + (size_t)i * nv, sizeof(double) * (size_t)nv);
}

// the residual e = y - y_ref - target of term pc (y_ref = 0 without a reference) and, if G is not NULL, its
// derivative G = G_y - G_ref (3 x 2nv); scratch 12 nv doubles
static void point_residual(const physModel* m, const physData* d, const physPointCost* pc, double e[3], double* G,
                           double* scratch) {
  size_t n6 = 6 * (size_t)m->nv;
  double yr[3] = {0, 0, 0}, *Gr = G ? scratch + 3 * m->nv : NULL;
  point_value(m, d, pc, 0, e, G, scratch);
  if (pc->has_ref) {
    point_value(m, d, pc, 1, yr, Gr, scratch);
    for (size_t a = 0; a < n6 && G; a++) G[a] -= Gr[a];
  }
  for (int i = 0; i < 3; i++) e[i] -= yr[i] + pc->target[i];
}

// the point terms of c at d's kinematics (and cdof if c has a velocity term): value
static double point_cost(const physModel* m, const physStateCost* c, const physData* d) {
  double J = 0;
  for (int k = 0; k < c->npoint; k++) {
    double e[3];
    point_residual(m, d, c->point + k, e, NULL, NULL);
    for (int i = 0; i < 3; i++) J += 0.5 * c->point[k].w[i] * e[i] * e[i];
  }
  return J;
}

// the point terms' gradient g (2nv) and, if H is not NULL, their Gauss-Newton Hessian H (2nv x 2nv) at d's
// kinematics and cdof (phys_kinematics and phys_com_pos at the state); scratch PHYS_POINT_SCRATCH nv doubles
static void point_derivs(const physModel* m, const physStateCost* c, const physData* d, double* g, double* H,
                         double* scratch) {
  int nv = m->nv, n2 = 2 * nv;
  double* G = scratch + 12 * nv;
  memset(g, 0, sizeof(double) * (size_t)n2);
  if (H) memset(H, 0, sizeof(double) * (size_t)n2 * n2);
  for (int k = 0; k < c->npoint; k++) {
    const physPointCost* pc = c->point + k;
    double e[3];
    point_residual(m, d, pc, e, G, scratch);
    for (int i = 0; i < 3; i++) {
      double w = pc->w[i];
      if (w == 0) continue;
      const double* Gi = G + (size_t)i * n2;
      for (int a = 0; a < n2; a++) {
        g[a] += w * e[i] * Gi[a];
        if (H)
          for (int bb = 0; bb < n2; bb++) H[(size_t)a * n2 + bb] += w * Gi[a] * Gi[bb];
      }
    }
  }
}

// the state terms of c at d's state (qpos, qvel), point terms included (kinematics, and cdof for a velocity
// term, run when there are any)
static double state_cost_at(const physModel* m, const physStateCost* c, physData* d, double* r) {
  double J = state_cost(m, c, d->qpos, d->qvel, NULL, NULL, 0, r);
  if (c->npoint > 0) {
    phys_kinematics(m, d);
    if (has_velocity_term(c)) phys_com_pos(m, d);
    J += point_cost(m, c, d);
  }
  return J;
}

double phys_state_cost(const physModel* m, physData* d, const physStateCost* c, double* g, double* H) {
  int nv = m->nv, n2 = 2 * nv;
  size_t mark = phys_stack_mark(d);
  double* r = phys_stack_alloc(d, (size_t)nv + PHYS_POINT_SCRATCH * (size_t)nv + (size_t)n2 + (size_t)n2 * n2);
  if (!r) return NAN;
  double *scratch = r + nv, *gp = scratch + PHYS_POINT_SCRATCH * nv, *Hp = gp + n2;
  if (g && H) memset(H, 0, sizeof(double) * (size_t)n2 * n2);
  double J = state_cost(m, c, d->qpos, d->qvel, g, g ? H : NULL, (size_t)n2, r);
  if (c->npoint > 0) {
    phys_kinematics(m, d);
    phys_com_pos(m, d);
    J += point_cost(m, c, d);
  }
  if (g && c->npoint > 0) {
    point_derivs(m, c, d, gp, H ? Hp : NULL, scratch);   // (the gradient alone: single shooting's loss)
    for (int a = 0; a < n2; a++) g[a] += gp[a];
  }
  for (int a = 0; a < n2 * n2 && g && H && c->npoint > 0; a++) H[a] += Hp[a];
  phys_stack_free(d, mark);
  return J;
}

// the control terms of step t at u with the previous control up: value
static double control_cost(const physControlProblem* p, const double* u, const double* up) {
  double J = 0;
  for (int j = 0; j < p->nu; j++) {
    double du = u[j] - up[j];
    J += 0.5 * p->wu[j] * u[j] * u[j] + 0.5 * p->wdu[j] * du * du;
  }
  return J;
}

// the control before step t of the controls U
static const double* prev_control(const physControlProblem* p, const double* U, int t) {
  return t == 0 ? p->uprev : U + (size_t)(t - 1) * p->nu;
}

//---------------------------------------------------------------------------------------------------------
// rollouts

// d <- the initial state kept in w (qpos, qvel, time, contact list)
static void load_initial(const physModel* m, physData* d, const ddpWork* w) {
  memcpy(d->qpos, w->x0, sizeof(double) * (size_t)m->nq);
  memcpy(d->qvel, w->x0 + m->nq, sizeof(double) * (size_t)m->nv);
  d->time = w->x0[m->nq + m->nv];
  d->ncon = w->ncon0;
  memcpy(d->contact, w->con0, sizeof(physContact) * (size_t)w->ncon0);
}

// w <- d's state as the initial state
static void save_initial(const physModel* m, const physData* d, ddpWork* w) {
  memcpy(w->x0, d->qpos, sizeof(double) * (size_t)m->nq);
  memcpy(w->x0 + m->nq, d->qvel, sizeof(double) * (size_t)m->nv);
  w->x0[m->nq + m->nv] = d->time;
  w->ncon0 = d->ncon;
  memcpy(w->con0, d->contact, sizeof(physContact) * (size_t)d->ncon);
}

// 1 if the n values are finite
static int all_finite(const double* x, int n) {
  for (int i = 0; i < n; i++)
    if (!isfinite(x[i])) return 0;
  return 1;
}

// one step of the rollout at ctrl u, state written to Xrow (qpos, qvel); 0 if rejected or not finite
static int rollout_step(const physModel* m, physData* d, const double* u, double* Xrow) {
  int rejected = d->warning_count[PHYS_WARN_REJECTED];
  if (m->nu > 0) memcpy(d->ctrl, u, sizeof(double) * (size_t)m->nu);
  phys_step(m, d);
  if (d->warning_count[PHYS_WARN_REJECTED] > rejected) return 0;
  memcpy(Xrow, d->qpos, sizeof(double) * (size_t)m->nq);
  memcpy(Xrow + m->nq, d->qvel, sizeof(double) * (size_t)m->nv);
  return all_finite(Xrow, m->nq + m->nv);
}

// the rollout's cost sum_t dt (l(x_t) + l_u(u_t, u_{t-1})) + l_f(x_T) from d's state, the states into X (may be
// NULL); +inf if a step is rejected or a state, a term or the sum is not finite. p is only read (the sampling
// methods' threads share it); the state terms are phys_state_cost's (arena scratch, freed per call)
double phys_control_rollout(const physControlProblem* p, physData* d, const double* U, double* X) {
  const physModel* m = p->m;
  int ns = m->nq + m->nv;
  if (X) {
    memcpy(X, d->qpos, sizeof(double) * (size_t)m->nq);
    memcpy(X + m->nq, d->qvel, sizeof(double) * (size_t)m->nv);
  }
  double J = 0;
  for (int t = 0; t < p->T; t++) {
    const double* u = U + (size_t)t * p->nu;
    J += m->opt.timestep * (phys_state_cost(m, d, &p->run, NULL, NULL) + control_cost(p, u, prev_control(p, U, t)));
    int rejected = d->warning_count[PHYS_WARN_REJECTED];
    if (m->nu > 0) memcpy(d->ctrl, u, sizeof(double) * (size_t)m->nu);
    phys_step(m, d);
    if (d->warning_count[PHYS_WARN_REJECTED] > rejected || !all_finite(d->qpos, m->nq) ||
        !all_finite(d->qvel, m->nv))
      return INFINITY;
    if (X) {
      memcpy(X + (size_t)(t + 1) * ns, d->qpos, sizeof(double) * (size_t)m->nq);
      memcpy(X + (size_t)(t + 1) * ns + m->nq, d->qvel, sizeof(double) * (size_t)m->nv);
    }
  }
  J += phys_state_cost(m, d, &p->fin, NULL, NULL);
  return isfinite(J) ? J : INFINITY;
}

double phys_control_violation(const physControlProblem* p, const double* U) {
  double v = 0;
  for (int t = 0; t < p->T; t++)
    for (int j = 0; j < p->nu; j++) {
      double u = U[(size_t)t * p->nu + j];
      v = fmax(v, fmax(p->lo[j] - u, u - p->hi[j]));
    }
  return v;
}

// step t's augmented Jacobians A~ = [A 0; 0 0], B~ = [B; I] from A (2nv x 2nv) and B (2nv x nu)
static void set_jacobian(const physControlProblem* p, ddpWork* w, int t, const double* A, const double* B) {
  int nu = p->nu, nx = p->nx, n2 = 2 * p->nv;
  double *At = w->A + (size_t)t * nx * nx, *Bt = w->B + (size_t)t * nx * nu;
  memset(At, 0, sizeof(double) * (size_t)nx * nx);
  memset(Bt, 0, sizeof(double) * (size_t)nx * nu);
  for (int i = 0; i < n2; i++) {
    memcpy(At + (size_t)i * nx, A + (size_t)i * n2, sizeof(double) * (size_t)n2);
    memcpy(Bt + (size_t)i * nu, B + (size_t)i * nu, sizeof(double) * (size_t)nu);
  }
  for (int j = 0; j < nu; j++) Bt[(size_t)(n2 + j) * nu + j] = 1;
}

//---------------------------------------------------------------------------------------------------------
// complementarity-aware DDP: the step records the backward pass relinearizes from

// 1 if the solve is complementarity-aware (the model's flag, lcp)
static int aware(const physControlProblem* p) {
  return (p->m->opt.gradflags & PHYS_GRAD_COMPLEMENTARITY) && p->m->opt.contact == PHYS_CONTACT_LCP;
}

// step t's state record (phys_rollout_save_state: qpos, qvel, time, the warm-start list) in p->awarework;
// the T flags (1: the step had constraints) follow the T records
static double* aware_record(const physControlProblem* p, int t) {
  return p->awarework + (size_t)t * phys_rollout_record_size(p->m);
}
static double* aware_flag(const physControlProblem* p, int t) { return aware_record(p, p->T) + t; }

// p->awarework, once: 0 if out of memory
static int aware_alloc(physControlProblem* p) {
  if (!p->awarework) p->awarework = calloc((size_t)p->T * (phys_rollout_record_size(p->m) + 1), sizeof(double));
  return p->awarework != NULL;
}

// step t's A~, B~ for the value gradient V_x(t+1) (w->Vx's first 2nv entries): the step relinearized from its
// record with the labels the complementarity-aware reverse mode picks for that cotangent
// (phys_step_jacobian_aware); steps without constraints keep the linearization's Jacobians
static physStatus aware_jacobian(const physControlProblem* p, physData* d, ddpWork* w, int t) {
  const physModel* m = p->m;
  if (*aware_flag(p, t) == 0) return PHYS_OK;
  int n2 = 2 * m->nv, nu = p->nu;
  size_t mark = phys_stack_mark(d);
  double* A = phys_stack_alloc(d, (size_t)n2 * (n2 + nu));
  if (!A) return PHYS_ERR_NOMEM;
  phys_rollout_load_state(m, d, aware_record(p, t));
  if (nu > 0) memcpy(d->ctrl, p->U + (size_t)t * nu, sizeof(double) * (size_t)nu);
  physStatus st = phys_step_jacobian_aware(m, d, w->Vx, A, A + (size_t)n2 * n2, NULL);
  if (st == PHYS_OK) set_jacobian(p, w, t, A, A + (size_t)n2 * n2);
  phys_stack_free(d, mark);
  return st;
}

// the augmented Jacobians of every step along (X, U) from the initial state: A~ = [A 0; 0 0], B~ = [B; I]
// (the new state's last nu coordinates are the control just applied). Replays the steps (bit-identical to
// the rollout that produced X). Complementarity-aware: also each step's record and whether it had
// constraints (its contacts or limit rows), for the backward pass
static physStatus linearize(physControlProblem* p, physData* d, ddpWork* w, physLog* log) {
  const physModel* m = p->m;
  int nv = m->nv, nu = p->nu, n2 = 2 * nv;
  if (aware(p) && !aware_alloc(p))
    return phys_error(log, PHYS_ERR_NOMEM, "ddp: out of memory for the steps' records (complementarity)");
  if ((p->run.npoint > 0 || p->fin.npoint > 0) && !p->pointwork) {   // the point terms' store, once
    p->pointwork = calloc(point_doubles(p), sizeof(double));
    if (!p->pointwork)
      return phys_error(log, PHYS_ERR_NOMEM, "ddp: out of memory for the point terms' Hessians (%zu doubles)",
                        point_doubles(p));
    w->Gp = p->pointwork, w->Hp = p->pointwork + (size_t)(p->T + 1) * n2;
  }
  size_t mark = phys_stack_mark(d);
  double* A = phys_stack_alloc(d, (size_t)n2 * (n2 + nu));
  if (!A) return phys_error(log, PHYS_ERR_NOMEM, "ddp: arena exhausted: %s", d->lastwarning);
  double* B = A + (size_t)n2 * n2;
  load_initial(m, d, w);
  physStatus st = PHYS_OK;
  for (int t = 0; t < p->T && st == PHYS_OK; t++) {
    const double* u = p->U + (size_t)t * nu;
    if (nu > 0) memcpy(d->ctrl, u, sizeof(double) * (size_t)nu);
    if (aware(p)) phys_rollout_save_state(m, d, aware_record(p, t));
    st = phys_step_jacobian(m, d, A, B);
    if (st != PHYS_OK) {
      phys_error(log, st, "ddp: the step Jacobian at step %d failed: %s", t, d->lastwarning);
      break;
    }
    set_jacobian(p, w, t, A, B);
    if (p->run.npoint > 0)   // the Jacobian left kinematics and cdof at the state
      point_derivs(m, &p->run, d, w->Gp + (size_t)t * n2, w->Hp + (size_t)t * n2 * n2, w->jac);
    phys_step(m, d);
    if (aware(p)) *aware_flag(p, t) = d->ncon + d->nlimit > 0;
  }
  if (st == PHYS_OK && p->fin.npoint > 0) {
    phys_kinematics(m, d);
    phys_com_pos(m, d);
    point_derivs(m, &p->fin, d, w->Gp + (size_t)p->T * n2, w->Hp + (size_t)p->T * n2 * n2, w->jac);
  }
  phys_stack_free(d, mark);
  return st;
}

//---------------------------------------------------------------------------------------------------------
// the box QP

// 1/2 x' H x + g' x
static double qp_value(int n, const double* H, const double* g, const double* x) {
  double f = 0;
  for (int i = 0; i < n; i++) {
    double hx = 0;
    for (int j = 0; j < n; j++) hx += H[i * n + j] * x[j];
    f += x[i] * (0.5 * hx + g[i]);
  }
  return f;
}

// gr <- H x + g
static void qp_grad(int n, const double* H, const double* g, const double* x, double* gr) {
  for (int i = 0; i < n; i++) {
    double s = g[i];
    for (int j = 0; j < n; j++) s += H[i * n + j] * x[j];
    gr[i] = s;
  }
}

// free[i] <- 0 where x sits at a bound its gradient pushes against; returns the number of free rows and
// whether the set changed (*changed)
static int qp_free_set(int n, const double* x, const double* gr, const double* lo, const double* hi, int* free,
                       int* changed) {
  int nf = 0;
  for (int i = 0; i < n; i++) {
    int f = !((x[i] <= lo[i] && gr[i] > 0) || (x[i] >= hi[i] && gr[i] < 0));
    if (f != free[i]) *changed = 1;
    free[i] = f;
    nf += f;
  }
  return nf;
}

// Lff <- the Cholesky factor of H on the free rows (nf x nf); 0 if not positive definite
static int qp_factor(int n, const double* H, const int* free, int nf, double* Lff) {
  int a = 0;
  for (int i = 0; i < n; i++) {
    if (!free[i]) continue;
    int b = 0;
    for (int j = 0; j < n; j++)
      if (free[j]) Lff[a * nf + b++] = H[i * n + j];
    a++;
  }
  return phys_chol_factor(Lff, nf, 0.0) == nf;
}

int phys_box_qp(int n, const double* H, const double* g, const double* lo, const double* hi, double* x, int* free,
                double* Lff, double* scratch) {
  double *gr = scratch, *dir = scratch + n, *xt = scratch + 2 * n;
  for (int i = 0; i < n; i++) x[i] = fmin(fmax(x[i], lo[i]), hi[i]), free[i] = -1;
  double f = qp_value(n, H, g, x);
  int nf = 0;
  for (int it = 0; it < 100; it++) {
    int changed = it == 0;
    qp_grad(n, H, g, x, gr);
    nf = qp_free_set(n, x, gr, lo, hi, free, &changed);
    if (nf == 0) break;
    if (changed && !qp_factor(n, H, free, nf, Lff)) return -1;
    // the Newton direction on the free rows: dir_f = -H_ff^-1 gr_f, 0 on the clamped rows
    double gnorm = 0, sdotg = 0;
    int a = 0;
    for (int i = 0; i < n; i++)
      if (free[i]) dir[a++] = gr[i], gnorm = fmax(gnorm, fabs(gr[i]));
    if (gnorm < 1e-13) break;
    phys_chol_solve(dir, Lff, dir, nf);
    for (int i = n - 1; i >= 0; i--) dir[i] = free[i] ? -dir[--a] : 0;
    for (int i = 0; i < n; i++) sdotg += dir[i] * gr[i];
    if (!(sdotg < 0)) break;
    // projected backtracking (Armijo, 0.1 of the linear decrease)
    double step = 1, ft = f;
    for (; step > 1e-20; step *= 0.6) {
      for (int i = 0; i < n; i++) xt[i] = fmin(fmax(x[i] + step * dir[i], lo[i]), hi[i]);
      ft = qp_value(n, H, g, xt);
      if (ft - f <= 0.1 * step * sdotg) break;
    }
    if (step <= 1e-20) break;
    memcpy(x, xt, sizeof(double) * (size_t)n);
    double df = f - ft;
    f = ft;
    if (df <= 1e-15 * fabs(f)) break;
  }
  // the free set and factor at the solution
  int changed = 1;
  qp_grad(n, H, g, x, gr);
  nf = qp_free_set(n, x, gr, lo, hi, free, &changed);
  if (nf > 0 && !qp_factor(n, H, free, nf, Lff)) return -1;
  return nf;
}

//---------------------------------------------------------------------------------------------------------
// backward pass

// y[0..n) += a x[0..n), four at a time (each element's arithmetic as the plain loop's; the compiler pairs
// them into vector operations)
static void axpy(int n, double a, const double* x, double* y) {
  int j = 0;
  for (; j + 3 < n; j += 4) {
    double y0 = y[j] + a * x[j], y1 = y[j + 1] + a * x[j + 1];
    double y2 = y[j + 2] + a * x[j + 2], y3 = y[j + 3] + a * x[j + 3];
    y[j] = y0, y[j + 1] = y1, y[j + 2] = y2, y[j + 3] = y3;
  }
  for (; j < n; j++) y[j] += a * x[j];
}

// y (r) += X' v for X (k x r, row stride ldx), v (k): each y_i sums over l in order
static void gemv_t(int k, int r, const double* X, int ldx, const double* v, double* y) {
  for (int l = 0; l < k; l++)
    if (v[l] != 0) axpy(r, v[l], X + (size_t)l * ldx, y);
}

// The backward pass's matrix products run on one kernel: C (+)= X Y with X's entries addressed by two strides
// (X(i, l) = X[i xi + l xl]: X itself or a transpose, no copy) and Y, C row-major. C is cut into 4 x 4 blocks
// whose 16 sums stay in registers (two doubles per vector: SSE2, the x86-64 baseline, so the same code on
// every x86-64 machine; NEON on arm64) while l runs over the inner dimension. Each entry of C still sums its
// products one at a time in the order l = 0, 1, ..., k-1 from its start value, exactly as a plain triple loop
// with the same start: no reassociation, no fused multiply-add (ISO C11 mode: the compiler does not contract),
// so the results are the same bits on every machine and for any build of the kernel.
typedef double v2d __attribute__((vector_size(16)));

static inline v2d load2(const double* p) {
  v2d v;
  memcpy(&v, p, sizeof v);
  return v;
}

static inline void store2(double* p, v2d v) {
  memcpy(p, &v, sizeof v);
}

// one full 4 x 4 block of C (leading dimension ldc) += sum over l < k of X(i, l) Y(l, j)
static void block44(int k, const double* X, size_t xi, size_t xl, const double* Y, size_t ldy, double* C,
                    size_t ldc) {
  double *C1 = C + ldc, *C2 = C1 + ldc, *C3 = C2 + ldc;
  v2d c00 = load2(C), c01 = load2(C + 2), c10 = load2(C1), c11 = load2(C1 + 2);
  v2d c20 = load2(C2), c21 = load2(C2 + 2), c30 = load2(C3), c31 = load2(C3 + 2);
  for (int l = 0; l < k; l++) {
    const double *y = Y + (size_t)l * ldy, *x = X + (size_t)l * xl;
    v2d y0 = load2(y), y1 = load2(y + 2), a;
    a = (v2d){x[0], x[0]};
    c00 += a * y0, c01 += a * y1;
    a = (v2d){x[xi], x[xi]};
    c10 += a * y0, c11 += a * y1;
    a = (v2d){x[2 * xi], x[2 * xi]};
    c20 += a * y0, c21 += a * y1;
    a = (v2d){x[3 * xi], x[3 * xi]};
    c30 += a * y0, c31 += a * y1;
  }
  store2(C, c00), store2(C + 2, c01), store2(C1, c10), store2(C1 + 2, c11);
  store2(C2, c20), store2(C2 + 2, c21), store2(C3, c30), store2(C3 + 2, c31);
}

// the edge blocks, with the same order of sums: 4 rows x 2 columns
static void block42(int k, const double* X, size_t xi, size_t xl, const double* Y, size_t ldy, double* C,
                    size_t ldc) {
  double *C1 = C + ldc, *C2 = C1 + ldc, *C3 = C2 + ldc;
  v2d c0 = load2(C), c1 = load2(C1), c2 = load2(C2), c3 = load2(C3);
  for (int l = 0; l < k; l++) {
    const double *x = X + (size_t)l * xl;
    v2d y = load2(Y + (size_t)l * ldy);
    c0 += (v2d){x[0], x[0]} * y, c1 += (v2d){x[xi], x[xi]} * y;
    c2 += (v2d){x[2 * xi], x[2 * xi]} * y, c3 += (v2d){x[3 * xi], x[3 * xi]} * y;
  }
  store2(C, c0), store2(C1, c1), store2(C2, c2), store2(C3, c3);
}

// one row of C: 4 columns (jb 4) or 2 (jb 2)
static void block1(int jb, int k, const double* X, size_t xl, const double* Y, size_t ldy, double* C) {
  v2d c0 = load2(C), c1 = jb == 4 ? load2(C + 2) : (v2d){0, 0};
  for (int l = 0; l < k; l++) {
    const double* y = Y + (size_t)l * ldy;
    v2d a = (v2d){X[(size_t)l * xl], X[(size_t)l * xl]};
    c0 += a * load2(y);
    if (jb == 4) c1 += a * load2(y + 2);
  }
  store2(C, c0);
  if (jb == 4) store2(C + 2, c1);
}

// one column of ib rows of C, entry by entry
static void block_col(int ib, int k, const double* X, size_t xi, size_t xl, const double* Y, size_t ldy,
                      double* C, size_t ldc) {
  for (int i = 0; i < ib; i++) {
    double s = C[(size_t)i * ldc];
    for (int l = 0; l < k; l++) s += X[(size_t)i * xi + (size_t)l * xl] * Y[(size_t)l * ldy];
    C[(size_t)i * ldc] = s;
  }
}

// the block of C at rows i0.. (ib of them, up to 4) and columns j0.. (jb, up to 4)
static void block(int ib, int jb, int k, const double* X, size_t xi, size_t xl, const double* Y, size_t ldy,
                  double* C, size_t ldc) {
  if (ib == 4 && jb == 4) {
    block44(k, X, xi, xl, Y, ldy, C, ldc);
    return;
  }
  int j = 0;
  if (ib == 4)
    for (; j + 2 <= jb; j += 2) block42(k, X, xi, xl, Y + j, ldy, C + j, ldc);
  else
    for (int i = 0; i < ib; i++) {
      int jj = jb >= 4 ? 4 : jb >= 2 ? 2 : 0;
      if (jj) block1(jj, k, X + (size_t)i * xi, xl, Y, ldy, C + (size_t)i * ldc);
      j = jj;
    }
  if (j < jb) block_col(ib, k, X, xi, xl, Y + j, ldy, C + j, ldc);
}

// C (r x c, leading dimension ldc) += X Y (add) or = X Y, X(i, l) = X[i xi + l xl] (r x k), Y (k x c, row
// stride ldy). upper: C is square and symmetric: only the blocks that hold entries on or above the diagonal
// (j >= i) are formed; the entries below it are left as they were (mirror_upper fills them)
static void gemm(int r, int c, int k, const double* X, size_t xi, size_t xl, const double* Y, size_t ldy,
                 double* C, size_t ldc, int add, int upper) {
  if (!add)
    for (int i = 0; i < r; i++) memset(C + (size_t)i * ldc, 0, sizeof(double) * (size_t)c);
  for (int i0 = 0; i0 < r; i0 += 4) {
    int ib = r - i0 < 4 ? r - i0 : 4;
    for (int j0 = upper ? i0 : 0; j0 < c; j0 += 4)
      block(ib, c - j0 < 4 ? c - j0 : 4, k, X + (size_t)i0 * xi, xi, xl, Y + j0, ldy, C + (size_t)i0 * ldc + j0,
            ldc);
  }
}

// the n x n block of C (leading dimension ldc): the entries below the diagonal <- those above it
static void mirror_upper(int n, double* C, size_t ldc) {
  for (int i = 1; i < n; i++)
    for (int j = 0; j < i; j++) C[(size_t)i * ldc + j] = C[(size_t)j * ldc + i];
}

// the cost's derivatives at step t (t = T: final) added into Qx (nx), Qxx (nx x nx) and, for t < T, Qu, Quu,
// Qux (set, not added: the caller adds the value function's terms after)
static void cost_derivs(const physControlProblem* p, ddpWork* w, int t, double* lx, double* lxx, double* lu,
                        double* luu, double* lux) {
  const physModel* m = p->m;
  int nv = m->nv, nu = p->nu, nx = p->nx, ns = m->nq + nv, n2 = 2 * nv;
  const physStateCost* c = t == p->T ? &p->fin : &p->run;
  const double* x = p->X + (size_t)t * ns;
  memset(lx, 0, sizeof(double) * (size_t)nx);
  memset(lxx, 0, sizeof(double) * (size_t)nx * nx);
  state_cost(m, c, x, x + m->nq, lx, lxx, (size_t)nx, w->r);
  if (c->npoint > 0 && w->Gp) {   // the point terms at the linearization (linearize)
    const double *g = w->Gp + (size_t)t * n2, *H = w->Hp + (size_t)t * n2 * n2;
    for (int a = 0; a < n2; a++) {
      lx[a] += g[a];
      for (int b = 0; b < n2; b++) lxx[(size_t)a * nx + b] += H[(size_t)a * n2 + b];
    }
  }
  if (t == p->T) return;
  // the running terms are integrated over the step: l_t dt
  double h = m->opt.timestep;
  for (int i = 0; i < nx; i++) lx[i] *= h;
  for (int i = 0; i < nx * nx; i++) lxx[i] *= h;
  const double* u = p->U + (size_t)t * nu;
  const double* up = prev_control(p, p->U, t);
  memset(luu, 0, sizeof(double) * (size_t)nu * nu);
  memset(lux, 0, sizeof(double) * (size_t)nu * nx);
  for (int j = 0; j < nu; j++) {
    double du = u[j] - up[j];
    lu[j] = h * (p->wu[j] * u[j] + p->wdu[j] * du);
    luu[(size_t)j * nu + j] = h * (p->wu[j] + p->wdu[j]);
    if (t > 0) {   // u_{-1} = uprev is fixed: no state coordinate at t = 0 carries it
      lx[n2 + j] = -h * p->wdu[j] * du;
      lxx[(size_t)(n2 + j) * nx + n2 + j] = h * p->wdu[j];
      lux[(size_t)j * nx + n2 + j] = -h * p->wdu[j];
    }
  }
}

// Q's derivatives at step t from the value function's (Vx, Vxx) of step t+1, added to the cost's terms in Qx,
// Qxx, Qu, Quu, Qux: Qx += A' Vx, Qu += B' Vx, Qxx += A' (Vxx A), Quu += B' (Vxx B), Qux += B' (Vxx A), on
// the blocks that are not zero (backward's structure). Qxx's and Quu's products form their upper triangles
// only (A' (Vxx A) is symmetric: its lower triangle, formed separately, would differ only by rounding); Quu is
// then mirrored (the box QP reads it whole), Qxx's lower triangle is left stale (value_update reads its upper
// triangle only).
static void q_derivs(const physControlProblem* p, ddpWork* w, int t, int na) {
  int nu = p->nu, nx = p->nx, n2 = 2 * p->nv;
  const double *A = w->A + (size_t)t * nx * nx, *B = w->B + (size_t)t * nx * nu;
  gemv_t(n2, n2, A, nx, w->Vx, w->Qx);
  gemv_t(nx, nu, B, nu, w->Vx, w->Qu);
  gemm(na, n2, n2, w->Vxx, nx, 1, A, nx, w->VA, nx, 0, 0);      // Vxx A (na x n2)
  gemm(na, nu, na, w->Vxx, nx, 1, B, nu, w->VB, nu, 0, 0);      // Vxx B (na x nu)
  gemm(n2, n2, n2, A, 1, nx, w->VA, nx, w->Qxx, nx, 1, 1);      // + A' Vxx A, upper triangle
  gemm(nu, nu, na, B, 1, nu, w->VB, nu, w->Quu, nu, 1, 1);      // + B' Vxx B, upper triangle
  gemm(nu, n2, na, B, 1, nu, w->VA, nx, w->Qux, nx, 1, 0);      // + B' Vxx A
  mirror_upper(nu, w->Quu, (size_t)nu);
}

// the feedback of step t on the nf free rows of the box QP (w->free, Cholesky factor w->Lff of its regularized
// Hessian H_ff): K_f = -H_ff^-1 Qs_f (Qs = Qux, or the state regularization's Qux + mu B' A), K's clamped
// rows 0. All na columns are solved at once, row by row (the forward and back substitutions of
// phys_chol_solve, each column's arithmetic in its order). Leaves the free rows compacted for value_update:
// Quxc = Qux_f, Kc = K_f (nf x na, leading dimension nx).
static void feedback(const physControlProblem* p, ddpWork* w, int t, int na, int nf, const double* Qs) {
  int nu = p->nu, nx = p->nx;
  double *K = w->K + (size_t)t * nu * nx, *Z = w->Kc, *L = w->Lff;
  memset(K, 0, sizeof(double) * (size_t)nu * nx);
  for (int j = 0, a = 0; j < nu; j++)
    if (w->free[j]) {
      memcpy(w->Quxc + (size_t)a * nx, w->Qux + (size_t)j * nx, sizeof(double) * (size_t)na);
      memcpy(Z + (size_t)a * nx, Qs + (size_t)j * nx, sizeof(double) * (size_t)na), a++;
    }
  for (int a = 0; a < nf; a++) {   // L Y = Qux_f
    double* Za = Z + (size_t)a * nx;
    for (int b = 0; b < a; b++) axpy(na, -L[a * nf + b], Z + (size_t)b * nx, Za);
    for (int c = 0; c < na; c++) Za[c] /= L[a * nf + a];
  }
  for (int a = nf - 1; a >= 0; a--) {   // L' X = Y
    double* Za = Z + (size_t)a * nx;
    for (int b = a + 1; b < nf; b++) axpy(na, -L[b * nf + a], Z + (size_t)b * nx, Za);
    for (int c = 0; c < na; c++) Za[c] /= L[a * nf + a];
  }
  for (int a = 0; a < nf; a++)   // K_f = -X
    for (int c = 0; c < na; c++) Z[(size_t)a * nx + c] = -Z[(size_t)a * nx + c];
  for (int j = 0, a = 0; j < nu; j++)
    if (w->free[j]) memcpy(K + (size_t)j * nx, Z + (size_t)(a++) * nx, sizeof(double) * (size_t)na);
}

// the regularized Hessian of step t's box QP into Hreg, and the matrix its feedback solves with (returned):
// control regularization (Tassa, Erez, Todorov 2012): Hreg = Quu + mu I, Qux unchanged; state regularization
// (p->reg_state, their eq. 10, as if Vxx were Vxx + mu I): Hreg = Quu + mu B~' B~ = Quu + mu (B' B + I),
// Qux + mu B~' A~ = Qux + mu B' A (in w->Qr). With the state's, the feedback does not vanish as mu grows: it
// holds the new trajectory near the old one (fewer contact changes in the line search's rollouts)
static const double* regularize(const physControlProblem* p, ddpWork* w, int t, double mu) {
  int nu = p->nu, nx = p->nx, n2 = 2 * p->nv;
  memcpy(w->Hreg, w->Quu, sizeof(double) * (size_t)nu * nu);
  for (int j = 0; j < nu; j++) w->Hreg[j * nu + j] += mu;
  if (!p->reg_state || mu == 0) return w->Qux;
  const double *A = w->A + (size_t)t * nx * nx, *B = w->B + (size_t)t * nx * nu;
  gemm(nu, nu, n2, B, 1, (size_t)nu, B, (size_t)nu, w->VB, (size_t)nu, 0, 1);   // B' B, upper (VB is free)
  mirror_upper(nu, w->VB, (size_t)nu);
  for (int i = 0; i < nu * nu; i++) w->Hreg[i] += mu * w->VB[i];
  gemm(nu, n2, n2, B, 1, (size_t)nu, A, (size_t)nx, w->Qr, (size_t)nx, 0, 0);   // B' A
  for (int j = 0; j < nu; j++)
    for (int c = 0; c < nx; c++) {
      double* q = w->Qr + (size_t)j * nx + c;
      *q = w->Qux[(size_t)j * nx + c] + (c < n2 ? mu * *q : 0);
    }
  return w->Qr;
}

// the value function of step t from Q's derivatives and the gains: Vx = Qx + K' (Quu k + Qu) + Qux' k,
// Vxx = Qxx + K' (Quu K + Qux) + Qux' K (K's clamped rows are zero: the products run over the nf free rows,
// compacted by feedback). Vxx's products form its upper triangle, then mirror it: Vxx is exactly symmetric.
// qk = Quu k + Qu (nu).
static void value_update(const physControlProblem* p, ddpWork* w, int t, int na, int nf, const double* qk) {
  int nu = p->nu, nx = p->nx;
  const double *K = w->K + (size_t)t * nu * nx, *k = w->k + (size_t)t * nu;
  double *Quuf = w->Hreg, *W = w->VB;   // (both free by now)
  memcpy(w->Vx, w->Qx, sizeof(double) * (size_t)nx);
  gemv_t(nu, na, K, nx, qk, w->Vx);
  gemv_t(nu, na, w->Qux, nx, k, w->Vx);
  for (int i = 0, a = 0; i < nu; i++) {   // Quu_ff
    if (!w->free[i]) continue;
    for (int j = 0, b = 0; j < nu; j++)
      if (w->free[j]) Quuf[a * nf + b++] = w->Quu[i * nu + j];
    a++;
  }
  gemm(nf, na, nf, Quuf, (size_t)nf, 1, w->Kc, nx, W, nx, 0, 0);   // W = Quu_ff K_f + Qux_f
  for (int a = 0; a < nf; a++) axpy(na, 1.0, w->Quxc + (size_t)a * nx, W + (size_t)a * nx);
  memcpy(w->Vxx, w->Qxx, sizeof(double) * (size_t)nx * nx);
  gemm(na, na, nf, w->Kc, 1, nx, W, nx, w->Vxx, nx, 1, 1);         // + K' (Quu K + Qux), upper
  gemm(na, na, nf, w->Quxc, 1, nx, w->Kc, nx, w->Vxx, nx, 1, 1);   // + Qux' K, upper
  mirror_upper(na, w->Vxx, (size_t)nx);
}

// the backward pass at regularization mu: K, k for every step and the expected decrease terms dV[0] = sum
// k' Qu, dV[1] = sum 1/2 k' Quu k; *ff the mean feedforward size. 0 if some Quu_ff + mu I is not positive
// definite (the caller raises mu). d non-NULL and complementarity-aware: each constrained step's Jacobians are
// first retaken for the value gradient of step t+1 (aware_jacobian; d is left at some step's state); -1 and
// *st if one fails.
//
// Structure: A~ = [A 0; 0 0] is zero outside its 2nv x 2nv block, so Vxx A~ and A~' (Vxx A~) are formed on
// that block only. Without a rate term (every wdu 0) the previous control's coordinates carry no cost and no
// dynamics: their rows and columns of Vx, Vxx, Qx, Qxx, Qux and K stay zero, and everything runs on the first
// na = 2nv coordinates (else na = nx). The symmetric products (Qxx, Quu, Vxx) form one triangle; the
// feedback's solves and the value function's products run on the free rows only. Every entry sums its
// products in the order of the plain dense formulas (tests/control/test_ddp.c keeps them as the reference:
// equal to 1e-12 relative; the triangles differ from the dense products' other triangle by rounding only).
static int backward(physControlProblem* p, physData* d, ddpWork* w, double mu, double dV[2], double* ff,
                    physStatus* st) {
  int nu = p->nu, nx = p->nx, na = 2 * p->nv, relabel = d && aware(p) && p->awarework;
  for (int j = 0; j < nu; j++)
    if (p->wdu[j] != 0) na = nx;
  double* lux = w->VB;   // lux (nu x nx) is copied to Qux before VB is needed
  dV[0] = dV[1] = 0, *ff = 0;
  cost_derivs(p, w, p->T, w->Vx, w->Vxx, NULL, NULL, NULL);
  for (int t = p->T - 1; t >= 0; t--) {
    double* k = w->k + (size_t)t * nu;
    if (relabel && (*st = aware_jacobian(p, d, w, t)) != PHYS_OK) return -1;
    cost_derivs(p, w, t, w->Qx, w->Qxx, w->Qu, w->Quu, lux);
    memcpy(w->Qux, lux, sizeof(double) * (size_t)nu * nx);
    q_derivs(p, w, t, na);
    // the feedforward: the box QP on the regularized Quu within the bounds shifted by u_t
    const double* u = p->U + (size_t)t * nu;
    const double* Qs = regularize(p, w, t, mu);
    for (int j = 0; j < nu; j++) w->lo[j] = p->lo[j] - u[j], w->hi[j] = p->hi[j] - u[j];
    int nf = phys_box_qp(nu, w->Hreg, w->Qu, w->lo, w->hi, k, w->free, w->Lff, w->qp);
    if (nf < 0) return 0;
    feedback(p, w, t, na, nf, Qs);
    // the expected decrease and the feedforward's size
    double kmax = 0;
    for (int j = 0; j < nu; j++) {
      double qk = 0;
      for (int i = 0; i < nu; i++) qk += w->Quu[j * nu + i] * k[i];
      dV[0] += k[j] * w->Qu[j];
      dV[1] += 0.5 * k[j] * qk;
      w->qp[j] = qk + w->Qu[j];   // Quu k + Qu
      kmax = fmax(kmax, fabs(k[j]) / (1 + fabs(u[j])));
    }
    *ff += kmax / p->T;
    value_update(p, w, t, na, nf, w->qp);
  }
  return 1;
}

//---------------------------------------------------------------------------------------------------------
// forward pass

// un <- the control law of step t at the trial state xn (qpos, qvel) after the trial controls Un (rows < t):
// clamp(u_t + alpha k_t + K_t dx), dx = (qn (-) q_t, vn - v_t, un_{t-1} - u_{t-1})
static void policy(const physControlProblem* p, ddpWork* w, int t, double alpha, const double* xn,
                   const double* Un, double* un) {
  const physModel* m = p->m;
  int nq = m->nq, nv = m->nv, nu = p->nu, nx = p->nx;
  const double *x = p->X + (size_t)t * (nq + nv), *u = p->U + (size_t)t * nu;
  const double *K = w->K + (size_t)t * nu * nx, *k = w->k + (size_t)t * nu;
  phys_difference_pos(m, w->dx, 1.0, x, xn);
  for (int i = 0; i < nv; i++) w->dx[nv + i] = xn[nq + i] - x[nq + i];
  const double *upn = prev_control(p, Un, t), *up = prev_control(p, p->U, t);
  for (int j = 0; j < nu; j++) w->dx[2 * nv + j] = upn[j] - up[j];
  for (int j = 0; j < nu; j++) {
    double s = u[j] + alpha * k[j];
    for (int i = 0; i < nx; i++) s += K[(size_t)j * nx + i] * w->dx[i];
    un[j] = fmin(fmax(s, p->lo[j]), p->hi[j]);
  }
}

// the rollout of u = clamp(U + alpha k + K dx) into (Xn, Un): its cost, +inf if not finite
static double forward(physControlProblem* p, physData* d, ddpWork* w, double alpha) {
  const physModel* m = p->m;
  int nu = p->nu, ns = m->nq + m->nv;
  load_initial(m, d, w);
  memcpy(w->Xn, w->x0, sizeof(double) * (size_t)ns);
  double J = 0;
  for (int t = 0; t < p->T; t++) {
    double* un = w->Un + (size_t)t * nu;
    policy(p, w, t, alpha, w->Xn + (size_t)t * ns, w->Un, un);
    const double* upn = prev_control(p, w->Un, t);
    J += m->opt.timestep * (state_cost_at(m, &p->run, d, w->r) + control_cost(p, un, upn));   // d is at xn
    if (!rollout_step(m, d, un, w->Xn + (size_t)(t + 1) * ns)) return INFINITY;
  }
  J += state_cost_at(m, &p->fin, d, w->r);
  return isfinite(J) ? J : INFINITY;
}

//---------------------------------------------------------------------------------------------------------
// the solver

// monotonic wall clock in seconds
static double wall_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

// mu after a failure (raise) or a success (lower), Tassa, Erez and Todorov (2012): the factor delta grows
// geometrically from 2
static void mu_update(const physControlProblem* p, double* mu, double* delta, int raise) {
  if (raise) {
    *delta = fmax(2.0, *delta * 2.0);
    *mu = fmax(p->mu_min, *mu * *delta);
  } else {
    *delta = fmin(0.5, *delta / 2.0);
    *mu = *mu * *delta > p->mu_min ? *mu * *delta : 0;
  }
}

// 0 and a message if a bound is infeasible
static int bounds_ok(const physControlProblem* p, physLog* log) {
  for (int j = 0; j < p->nu; j++) {
    if (!(p->lo[j] <= p->hi[j]) || p->lo[j] == INFINITY || p->hi[j] == -INFINITY) {
      phys_error(log, PHYS_ERR_ARG, "ddp: control %d: infeasible bounds [%g, %g]", j, p->lo[j], p->hi[j]);
      return 0;
    }
  }
  return 1;
}

// an accepted trial of one iteration: its cost, the model's expected decrease, the step alpha, the feedforward
// size ff
typedef struct {
  double alpha, expected, cost, ff;
  int accepted;
} ddpTrial;

// one iteration's search (Tassa, Erez and Todorov 2012): backward passes with mu raised until one succeeds and a
// line search over alpha = 10^(-0.3 i), i = 0..10, finds a decrease of at least 1e-4 of the expected one; mu is
// raised after each failure. Returns -1 with tr->accepted set, or the stop (PHYS_DDP_MU, PHYS_DDP_FEEDFORWARD);
// *st is set (and a message logged) when the complementarity-aware Jacobian fails
static int try_step(physControlProblem* p, physData* d, ddpWork* w, double* mu, double* delta, ddpTrial* tr,
                    physStatus* st, physLog* log) {
  double dV[2];
  int stop = -1;
  while (!tr->accepted && stop < 0) {
    int b = backward(p, d, w, *mu, dV, &tr->ff, st);
    if (b < 0) {
      phys_error(log, *st, "ddp: the complementarity-aware step Jacobian failed: %s", d->lastwarning);
      return -1;
    }
    if (!b) {
      mu_update(p, mu, delta, 1);
      if (*mu > p->mu_max) stop = PHYS_DDP_MU;
      continue;
    }
    if (tr->ff < p->tol) return PHYS_DDP_FEEDFORWARD;
    for (int i = 0; i <= 10 && !tr->accepted; i++) {
      tr->alpha = pow(10.0, -0.3 * i);
      tr->expected = -(tr->alpha * dV[0] + tr->alpha * tr->alpha * dV[1]);
      tr->cost = forward(p, d, w, tr->alpha);
      double z = tr->expected > 0 ? (p->cost - tr->cost) / tr->expected : (tr->cost < p->cost ? 1 : -1);
      tr->accepted = tr->cost < p->cost && z > 1e-4;
    }
    if (!tr->accepted) {
      mu_update(p, mu, delta, 1);
      if (*mu > p->mu_max) stop = PHYS_DDP_MU;
    }
  }
  return stop;
}

physStatus phys_ddp_solve(physControlProblem* p, physData* d, physDdpProgress progress, void* ctx, physLog* log) {
  const physModel* m = p->m;
  int nu = p->nu, ns = m->nq + m->nv;
  if (!bounds_ok(p, log)) return PHYS_ERR_ARG;
  if (!phys_control_state_ok(p, "ddp", log)) return PHYS_ERR_MODEL;
  ddpWork w;
  workspace(p, &w);
  save_initial(m, d, &w);
  for (int t = 0; t < p->T; t++)
    for (int j = 0; j < nu; j++) {
      double* u = p->U + (size_t)t * nu + j;
      *u = fmin(fmax(*u, p->lo[j]), p->hi[j]);
    }
  memset(w.k, 0, sizeof(double) * (size_t)p->T * nu);
  double start = wall_seconds();
  p->cost = phys_control_rollout(p, d, p->U, p->X);
  load_initial(m, d, &w);
  if (!isfinite(p->cost))
    return phys_error(log, PHYS_ERR_NUMERIC, "ddp: the initial guess's rollout is not finite (%s)",
                      d->nwarning ? d->lastwarning : "cost");
  p->niter = 0;
  p->iter[0] = (physDdpIter){p->cost, 0, 0, 0, 0, wall_seconds() - start};
  if (progress) progress(ctx, 0, &p->iter[0]);
  double mu = 0, delta = 1;
  p->stop = PHYS_DDP_MAXITER;
  physStatus st = PHYS_OK;
  while (p->niter < p->maxiter) {
    start = wall_seconds();
    st = linearize(p, d, &w, log);
    if (st != PHYS_OK) break;
    ddpTrial tr = {0, 0, INFINITY, 0, 0};
    int stop = try_step(p, d, &w, &mu, &delta, &tr, &st, log);
    load_initial(m, d, &w);
    if (st != PHYS_OK) break;
    if (stop >= 0) {
      p->stop = (physDdpStop)stop;
      break;
    }
    double Jn = tr.cost, expected = tr.expected, alpha = tr.alpha, ff = tr.ff;
    double dJ = p->cost - Jn;
    memcpy(p->U, w.Un, sizeof(double) * (size_t)p->T * nu);
    memcpy(p->X, w.Xn, sizeof(double) * (size_t)(p->T + 1) * ns);
    p->cost = Jn;
    mu_update(p, &mu, &delta, 0);
    p->niter++;
    p->iter[p->niter] = (physDdpIter){Jn, expected, alpha, mu, ff, wall_seconds() - start};
    if (progress) progress(ctx, p->niter, &p->iter[p->niter]);
    if (dJ < p->tol * fabs(p->cost)) {
      p->stop = PHYS_DDP_COST;
      break;
    }
    if (p->stall > 0 && p->niter >= p->stall) {   // the cost over the last stall iterations
      double J0 = p->iter[p->niter - p->stall].cost;
      if (J0 - Jn < p->stall_tol * fabs(J0)) {
        p->stop = PHYS_DDP_STALL;
        break;
      }
    }
  }
  load_initial(m, d, &w);
  return st;
}

//---------------------------------------------------------------------------------------------------------
// the cost's pieces for the other methods (control.h)

double phys_control_effort(const physControlProblem* p, const double* u, const double* uprev) {
  return control_cost(p, u, uprev);
}

//---------------------------------------------------------------------------------------------------------
// the solver's parts (control.h): one iteration from outside, for benchmarks and external dynamics

physStatus phys_ddp_linearize(physControlProblem* p, physData* d, physLog* log) {
  if (!phys_control_state_ok(p, "ddp", log)) return PHYS_ERR_MODEL;
  ddpWork w;
  workspace(p, &w);
  save_initial(p->m, d, &w);
  physStatus st = linearize(p, d, &w, log);
  load_initial(p->m, d, &w);
  return st;
}

void phys_ddp_set_jacobian(physControlProblem* p, int t, const double* A, const double* B) {
  ddpWork w;
  workspace(p, &w);
  set_jacobian(p, &w, t, A, B);
}

int phys_ddp_backward(physControlProblem* p, double mu, double dV[2], double* ff) {
  ddpWork w;
  workspace(p, &w);
  physStatus st = PHYS_OK;
  return backward(p, NULL, &w, mu, dV, ff, &st);
}

double phys_ddp_forward(physControlProblem* p, physData* d, double alpha, double* Un, double* Xn) {
  ddpWork w;
  workspace(p, &w);
  save_initial(p->m, d, &w);
  double J = forward(p, d, &w, alpha);
  load_initial(p->m, d, &w);
  if (Un) memcpy(Un, w.Un, sizeof(double) * (size_t)p->T * p->nu);
  if (Xn) memcpy(Xn, w.Xn, sizeof(double) * (size_t)(p->T + 1) * (p->m->nq + p->m->nv));
  return J;
}

void phys_ddp_policy(physControlProblem* p, int t, double alpha, const double* xn, const double* Un, double* un) {
  ddpWork w;
  workspace(p, &w);
  policy(p, &w, t, alpha, xn, Un, un);
}

void phys_ddp_gains(const physControlProblem* p, int t, double* K, double* k) {
  ddpWork w;
  workspace(p, &w);
  if (K) memcpy(K, w.K + (size_t)t * p->nu * p->nx, sizeof(double) * (size_t)p->nu * p->nx);
  if (k) memcpy(k, w.k + (size_t)t * p->nu, sizeof(double) * (size_t)p->nu);
}

double phys_control_stage_cost(physControlProblem* p, int t, const double* q, const double* v, const double* U) {
  ddpWork w;
  workspace(p, &w);
  if (t == p->T) return state_cost(p->m, &p->fin, q, v, NULL, NULL, 0, w.r);
  const double* u = U + (size_t)t * p->nu;
  return p->m->opt.timestep *
         (state_cost(p->m, &p->run, q, v, NULL, NULL, 0, w.r) + control_cost(p, u, prev_control(p, U, t)));
}
