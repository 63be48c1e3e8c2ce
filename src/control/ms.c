// ms.c - multiple shooting by Ipopt on the exact step Jacobians (ms.h)
#include <IpStdCInterface.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "grad.h"
#include "ms.h"
#include "rollout.h"
#include "rot.h"
#include "shooting.h"

// the solve's state, shared by Ipopt's callbacks
typedef struct msCtx_ {
  physControlProblem* p;
  physData* d;
  const physModel* m;
  int T, nu, nv, nq, n2, ns, nblk, nz, nc;
  int* rot;                 // nv: first dof of the dof's rotation group (ball, free rotation), -1 otherwise
  double *Xr, *S, *F, *D;   // reference and states ((T+1) x ns), steps (T x ns), constraints (T x n2)
  double *A, *B;            // T x (n2 x n2), T x (n2 x nu): the step Jacobians at (s_t, u_t)
  double* gs;               // (T+1) x n2: the state cost's gradient at s_t (tangent, running terms times dt)
  double* Hs;               // (T+1) x (2nv x 2nv): the state terms' Gauss-Newton Hessian at s_t (not times dt)
  double *zf, *zj;          // z of the last sweep, of the last sweep with Jacobians
  double *x0, *scratch, *M; // initial qpos, qvel, time; cost scratch; one row block (n2 x (n2 + nu))
  physContact* con0;
  int ncon0, have_f, have_j;
  double J;                 // objective at zf
  physStatus st;            // the first error of a sweep other than a rejected step
  physLog* log;
  physMsProgress progress;
  void* pctx;
  double* defect_iter;
  double tlast;
  double* zbest;            // the best feasible iterate (max |D| <= best_defect, lowest objective), its
  double best, best_defect; // objective (+inf: none yet) and the threshold
  int best_iter;
  int aware;                // complementarity-aware constraint Jacobian (m's gradflags PHYS_GRAD_COMPLEMENTARITY, lcp)
  double* rec;              // aware: T step records (phys_rollout_save_state) then T flags (the step had
                            // constraints), then the cotangent and the adjoint (2 x n2); NULL otherwise
  int relabelled;           // aware: steps whose labels the last Jacobian sweep changed
} msCtx;

// monotonic wall clock in seconds
static double ms_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

physMsOptions phys_ms_defaults(void) {
  return (physMsOptions){0, 1e-10, 0, 50, 0, 1e-8};
}

//---------------------------------------------------------------------------------------------------------
// SO(3) chart Jacobians

// rot[i] <- the first dof of dof i's rotation group (ball, or a free joint's last 3), -1 for the others
static void rotation_groups(const physModel* m, int* rot) {
  for (int i = 0; i < m->nv; i++) {
    int j = m->dof_jntid[i], a = m->jnt_dofadr[j], type = m->jnt_type[j];
    rot[i] = type == PHYS_JNT_BALL ? a : type == PHYS_JNT_FREE && i >= a + 3 ? a + 3 : -1;
  }
}

// nonzeros of the dx_{t+1} block of one row block: a rotation group's 3x3, one per other coordinate
static int next_block_nnz(const msCtx* c) {
  int n = c->nv;
  for (int i = 0; i < c->nv; i++)
    if (c->rot[i] == i) n += 6;
  return n + c->nv;
}

//---------------------------------------------------------------------------------------------------------
// the sweep: states, steps, constraints, cost (and the step Jacobians)

// index of u_t and of dx_t (t >= 1) in z
static size_t u_at(const msCtx* c, int t) {
  return (size_t)t * (c->nu + c->n2);
}
static size_t dx_at(const msCtx* c, int t) {
  return (size_t)(t - 1) * (c->nu + c->n2) + c->nu;
}

// S <- the states of z: s_0 = x_0, s_t = Xr_t (+) dx_t
static void states(msCtx* c, const double* z) {
  memcpy(c->S, c->x0, sizeof(double) * (size_t)c->ns);
  for (int t = 1; t <= c->T; t++) {
    double* s = c->S + (size_t)t * c->ns;
    const double *xr = c->Xr + (size_t)t * c->ns, *dx = z + dx_at(c, t);
    memcpy(s, xr, sizeof(double) * (size_t)c->ns);
    phys_integrate_pos(c->m, s, dx, 1.0);
    for (int i = 0; i < c->nv; i++) s[c->nq + i] += dx[c->nv + i];
  }
}

// d <- the initial state (qpos, qvel, time, contact list)
static void load_x0(msCtx* c) {
  const physModel* m = c->m;
  physData* d = c->d;
  memcpy(d->qpos, c->x0, sizeof(double) * (size_t)m->nq);
  memcpy(d->qvel, c->x0 + m->nq, sizeof(double) * (size_t)m->nv);
  d->time = c->x0[c->ns];
  d->ncon = c->ncon0;
  memcpy(d->contact, c->con0, sizeof(physContact) * (size_t)c->ncon0);
}

// the state terms of sc at d's state (= s_t) with their exact gradient times scale into g (n2), their
// Gauss-Newton Hessian into H (n2 x n2, not scaled)
static double state_terms(msCtx* c, const physStateCost* sc, double* g, double* H, double scale) {
  double J = phys_state_cost(c->m, c->d, sc, g, H);
  for (int i = 0; i < c->n2; i++) g[i] *= scale;
  return scale * J;
}

// complementarity-aware: step t's record (qpos, qvel, time, warm-start list) and its flag (1: constraints)
static double* aware_record(const msCtx* c, int t) {
  return c->rec + (size_t)t * phys_rollout_record_size(c->m);
}
static double* aware_flag(const msCtx* c, int t) { return aware_record(c, c->T) + t; }

// one step of the sweep from d's state at u_t into F_t (and A_t, B_t if jac); 0 if rejected or not finite
static int sweep_step(msCtx* c, int t, const double* u, int jac) {
  const physModel* m = c->m;
  physData* d = c->d;
  if (jac) {
    if (c->nu > 0) memcpy(d->ctrl, u, sizeof(double) * (size_t)c->nu);
    if (c->aware) phys_rollout_save_state(m, d, aware_record(c, t));
    physStatus st = phys_step_jacobian(m, d, c->A + (size_t)t * c->n2 * c->n2, c->B + (size_t)t * c->n2 * c->nu);
    if (st != PHYS_OK) {
      if (c->st == PHYS_OK && st != PHYS_ERR_NUMERIC)
        c->st = phys_error(c->log, st, "ms: the step Jacobian at step %d failed: %s", t, d->lastwarning);
      return 0;
    }
  }
  int rejected = d->warning_count[PHYS_WARN_REJECTED];
  if (c->nu > 0) memcpy(d->ctrl, u, sizeof(double) * (size_t)c->nu);
  phys_step(m, d);
  if (d->warning_count[PHYS_WARN_REJECTED] > rejected) return 0;
  if (jac && c->aware) *aware_flag(c, t) = d->ncon + d->nlimit > 0;
  double* f = c->F + (size_t)t * c->ns;
  memcpy(f, d->qpos, sizeof(double) * (size_t)m->nq);
  memcpy(f + m->nq, d->qvel, sizeof(double) * (size_t)m->nv);
  for (int i = 0; i < c->ns; i++)
    if (!isfinite(f[i])) return 0;
  return 1;
}

// c_t <- the cotangent of step t's output f_t, R_t' lambda_t, from w = dL/ds_{t+1} (gs_{t+1} + A_{t+1}' c_{t+1}):
// the multiplier lambda_t of D_t that makes the Lagrangian stationary in dx_{t+1},
// lambda_t = -N_t^-T E_{t+1}' w (N_t = Jr^-1(D_t) Jr(dx_{t+1}), E = Jr(dx_{t+1}); R_t = -Jl^-1(D_t)), so c_t = w
// off the rotations and Jr(D_t)^-1 Jr(D_t)' w on a rotation group (Jl^-T = Jr^-1, N^-T E' = Jr(D)')
static void aware_cotangent(const msCtx* c, int t, const double* w, double* ct) {
  memcpy(ct, w, sizeof(double) * (size_t)c->n2);
  const double* D = c->D + (size_t)t * c->n2;
  for (int a = 0; a < c->nv; a++) {
    if (c->rot[a] != a) continue;
    double Ji[9], Jr[9], v[3];
    phys_so3_jr_inv(Ji, D + a);
    phys_so3_jacobians(Jr, NULL, D + a);
    for (int i = 0; i < 3; i++) v[i] = Jr[0 * 3 + i] * w[a] + Jr[1 * 3 + i] * w[a + 1] + Jr[2 * 3 + i] * w[a + 2];
    for (int i = 0; i < 3; i++) ct[a + i] = Ji[i * 3] * v[0] + Ji[i * 3 + 1] * v[1] + Ji[i * 3 + 2] * v[2];
  }
}

// complementarity-aware constraint Jacobian: backward over the sweep just made, each constrained step's A_t, B_t
// retaken by phys_step_jacobian_aware for the cotangent c_t of aware_cotangent, the multipliers' estimate that
// solves the Lagrangian's stationarity in the states (exact at a KKT point, where it equals Ipopt's
// multipliers; at a defect-free point the costate of single shooting: the adjoint of the aware VJP). A function
// of z alone, so deterministic whatever Ipopt's call order. 0 (c->st set) if a Jacobian failed; d is left at
// some step's state
static int aware_jacobians(msCtx* c, const double* z) {
  const physModel* m = c->m;
  physData* d = c->d;
  int n2 = c->n2, nu = c->nu;
  double *ct = aware_flag(c, c->T), *w = ct + n2;
  memcpy(w, c->gs + (size_t)c->T * n2, sizeof(double) * (size_t)n2);
  c->relabelled = 0;
  for (int t = c->T - 1; t >= 0; t--) {
    aware_cotangent(c, t, w, ct);
    double *A = c->A + (size_t)t * n2 * n2, *B = c->B + (size_t)t * n2 * nu;
    if (*aware_flag(c, t) != 0) {
      phys_rollout_load_state(m, d, aware_record(c, t));
      if (nu > 0) memcpy(d->ctrl, z + u_at(c, t), sizeof(double) * (size_t)nu);
      int rel = 0;
      physStatus st = phys_step_jacobian_aware(m, d, ct, A, B, &rel);
      if (st != PHYS_OK) {
        if (c->st == PHYS_OK)
          c->st = phys_error(c->log, st, "ms: the complementarity-aware step Jacobian at step %d failed: %s", t,
                             d->lastwarning);
        return 0;
      }
      c->relabelled += rel;
    }
    for (int j = 0; j < n2; j++) {   // w <- gs_t + A_t' c_t
      double s = c->gs[(size_t)t * n2 + j];
      for (int i = 0; i < n2; i++) s += A[(size_t)i * n2 + j] * ct[i];
      w[j] = s;
    }
  }
  return 1;
}

// the sweep at z: S, F, D, the objective J and the state gradients gs, and with jac the step Jacobians
// (complementarity-aware: aware_jacobians); 0 if a step was rejected or a value is not finite. d is left at
// s_T (aware with jac: at a step's state).
static int sweep(msCtx* c, const double* z, int jac) {
  if (memcmp(z, c->zf, sizeof(double) * (size_t)c->nz) == 0 && c->have_f && (!jac || c->have_j)) return 1;
  const physModel* m = c->m;
  physControlProblem* p = c->p;
  physData* d = c->d;
  double dt = m->opt.timestep;
  c->have_f = c->have_j = 0;
  states(c, z);
  load_x0(c);
  double J = 0;
  for (int t = 0; t < c->T; t++) {
    const double* s = c->S + (size_t)t * c->ns;
    memcpy(d->qpos, s, sizeof(double) * (size_t)m->nq);
    memcpy(d->qvel, s + m->nq, sizeof(double) * (size_t)m->nv);
    const double *u = z + u_at(c, t), *up = t == 0 ? p->uprev : z + u_at(c, t - 1);
    J += state_terms(c, &p->run, c->gs + (size_t)t * c->n2, c->Hs + (size_t)t * c->n2 * c->n2, dt) +
         dt * phys_control_effort(p, u, up);
    if (!sweep_step(c, t, u, jac)) return 0;
  }
  const double* s = c->S + (size_t)c->T * c->ns;
  memcpy(d->qpos, s, sizeof(double) * (size_t)m->nq);
  memcpy(d->qvel, s + m->nq, sizeof(double) * (size_t)m->nv);
  J += state_terms(c, &p->fin, c->gs + (size_t)c->T * c->n2, c->Hs + (size_t)c->T * c->n2 * c->n2, 1.0);
  for (int t = 0; t < c->T; t++) {   // D_t = s_{t+1} (-) f_t
    const double *f = c->F + (size_t)t * c->ns, *sn = c->S + (size_t)(t + 1) * c->ns;
    double* D = c->D + (size_t)t * c->n2;
    phys_difference_pos(m, D, 1.0, f, sn);
    for (int i = 0; i < c->nv; i++) D[c->nv + i] = sn[c->nq + i] - f[c->nq + i];
  }
  if (!isfinite(J)) return 0;
  if (jac && c->aware && !aware_jacobians(c, z)) return 0;
  c->J = J;
  memcpy(c->zf, z, sizeof(double) * (size_t)c->nz);
  c->have_f = 1, c->have_j = jac;
  return 1;
}

//---------------------------------------------------------------------------------------------------------
// the derivatives

// grad <- dJ/dz at the last sweep's z
static void objective_gradient(const msCtx* c, const double* z, double* grad) {
  const physControlProblem* p = c->p;
  double dt = c->m->opt.timestep;
  for (int t = 0; t < c->T; t++) {
    const double *u = z + u_at(c, t), *up = t == 0 ? p->uprev : z + u_at(c, t - 1);
    const double* un = t + 1 < c->T ? z + u_at(c, t + 1) : NULL;
    double* g = grad + u_at(c, t);
    for (int j = 0; j < c->nu; j++) {
      g[j] = dt * (p->wu[j] * u[j] + p->wdu[j] * (u[j] - up[j]));
      if (un) g[j] -= dt * p->wdu[j] * (un[j] - u[j]);
    }
  }
  for (int t = 1; t <= c->T; t++) {   // dJ/ddx_t = E_t' gs_t, E_t = Jr(dx_t) on the rotation groups
    const double *gs = c->gs + (size_t)t * c->n2, *dx = z + dx_at(c, t);
    double* g = grad + dx_at(c, t);
    memcpy(g, gs, sizeof(double) * (size_t)c->n2);
    for (int a = 0; a < c->nv; a++) {
      if (c->rot[a] != a) continue;
      double Jr[9];
      phys_so3_jacobians(Jr, NULL, dx + a);
      for (int i = 0; i < 3; i++) g[a + i] = Jr[0 * 3 + i] * gs[a] + Jr[1 * 3 + i] * gs[a + 1] + Jr[2 * 3 + i] * gs[a + 2];
    }
  }
}

// c->M <- the row block t's derivative with respect to (dx_t, u_t): R (A_t E_t | B_t), R = -Jl^-1(D_t) on
// the rotation rows, -I elsewhere; E_t = Jr(dx_t) on the rotation columns (none at t = 0)
static void row_block(msCtx* c, const double* z, int t) {
  int n2 = c->n2, nu = c->nu, w = n2 + nu;
  const double *A = c->A + (size_t)t * n2 * n2, *B = c->B + (size_t)t * n2 * nu, *D = c->D + (size_t)t * n2;
  double* M = c->M;
  for (int i = 0; i < n2; i++) {
    memcpy(M + (size_t)i * w, A + (size_t)i * n2, sizeof(double) * (size_t)n2);
    memcpy(M + (size_t)i * w + n2, B + (size_t)i * nu, sizeof(double) * (size_t)nu);
  }
  for (int a = 0; a < c->nv && t > 0; a++) {   // columns: A E
    if (c->rot[a] != a) continue;
    double Jr[9];
    phys_so3_jacobians(Jr, NULL, z + dx_at(c, t) + a);
    for (int i = 0; i < n2; i++) {
      double* r = M + (size_t)i * w + a, v[3] = {r[0], r[1], r[2]};
      for (int k = 0; k < 3; k++) r[k] = v[0] * Jr[0 * 3 + k] + v[1] * Jr[1 * 3 + k] + v[2] * Jr[2 * 3 + k];
    }
  }
  for (int i = 0; i < n2 * w; i++) M[i] = -M[i];
  for (int a = 0; a < c->nv; a++) {   // rows: Jl^-1(D) = Jr^-1(-D)
    if (c->rot[a] != a) continue;
    double Ji[9], nD[3] = {-D[a], -D[a + 1], -D[a + 2]};
    phys_so3_jr_inv(Ji, nD);
    for (int k = 0; k < w; k++) {
      double v[3] = {M[(size_t)a * w + k], M[(size_t)(a + 1) * w + k], M[(size_t)(a + 2) * w + k]};
      for (int i = 0; i < 3; i++) M[(size_t)(a + i) * w + k] = Ji[i * 3] * v[0] + Ji[i * 3 + 1] * v[1] + Ji[i * 3 + 2] * v[2];
    }
  }
}

// the dx_{t+1} block's value at row i, column j of the group-diagonal pattern: Jr^-1(D) Jr(dx_{t+1}) on a
// rotation group, the identity elsewhere
static double next_block(const msCtx* c, const double* z, int t, int i, int j) {
  if (i >= c->nv || c->rot[i] < 0) return i == j;
  int a = c->rot[i];
  double Ji[9], Jr[9];
  phys_so3_jr_inv(Ji, c->D + (size_t)t * c->n2 + a);
  phys_so3_jacobians(Jr, NULL, z + dx_at(c, t + 1) + a);
  double s = 0;
  for (int k = 0; k < 3; k++) s += Ji[(i - a) * 3 + k] * Jr[k * 3 + (j - a)];
  return s;
}

// the sparse constraint Jacobian: its pattern (rows, cols) or, with z, its values in the same order. Row
// block t: for each row, u_t's columns, dx_t's (t > 0), then the row's entries of the dx_{t+1} block
static void jacobian(msCtx* c, const double* z, int* rows, int* cols, double* val) {
  int n2 = c->n2, nu = c->nu, w = n2 + nu;
  size_t k = 0;
  for (int t = 0; t < c->T; t++) {
    if (val) row_block(c, z, t);
    for (int i = 0; i < n2; i++) {
      int r = t * n2 + i;
      for (int j = 0; j < nu; j++, k++) {
        if (val) val[k] = c->M[(size_t)i * w + n2 + j];
        else rows[k] = r, cols[k] = (int)u_at(c, t) + j;
      }
      for (int j = 0; j < n2 && t > 0; j++, k++) {
        if (val) val[k] = c->M[(size_t)i * w + j];
        else rows[k] = r, cols[k] = (int)dx_at(c, t) + j;
      }
      for (int j = 0; j < n2; j++) {
        int in = i == j || (i < c->nv && j < c->nv && c->rot[i] >= 0 && c->rot[i] == c->rot[j]);
        if (!in) continue;
        if (val) val[k] = next_block(c, z, t, i, j);
        else rows[k] = r, cols[k] = (int)dx_at(c, t + 1) + j;
        k++;
      }
    }
  }
}

// the objective's Gauss-Newton Hessian at the last sweep (lower triangle): its pattern (rows, cols) or, with
// val, its values times of. Per step t: u_t's diagonal, u_t with u_{t-1} (the rate term, t > 0), then dx_{t+1}:
// the state terms' Gauss-Newton Hessian (phys_state_cost: the weights, Jr^-1' W Jr^-1 on the rotations, plus
// the point terms' J' W J; lower triangle)
static size_t gauss_newton(const msCtx* c, int* rows, int* cols, double* val, double of) {
  const physControlProblem* p = c->p;
  double dt = c->m->opt.timestep;
  int n2 = c->n2;
  size_t k = 0;
  for (int t = 0; t < c->T; t++) {
    int iu = (int)u_at(c, t), ix = (int)dx_at(c, t + 1);
    for (int j = 0; j < c->nu; j++, k++) {
      if (val) val[k] = of * dt * (p->wu[j] + p->wdu[j] + (t + 1 < c->T ? p->wdu[j] : 0));
      else if (rows) rows[k] = cols[k] = iu + j;
    }
    for (int j = 0; j < c->nu && t > 0; j++, k++) {
      if (val) val[k] = -of * dt * p->wdu[j];
      else if (rows) rows[k] = iu + j, cols[k] = (int)u_at(c, t - 1) + j;
    }
    double s = of * (t + 1 < c->T ? dt : 1.0);
    const double* H = c->Hs + (size_t)(t + 1) * n2 * n2;
    for (int i = 0; i < n2; i++)
      for (int j = 0; j <= i; j++, k++) {
        if (val) val[k] = s * H[(size_t)i * n2 + j];
        else if (rows) rows[k] = ix + i, cols[k] = ix + j;
      }
  }
  return k;
}

//---------------------------------------------------------------------------------------------------------
// Ipopt's callbacks

static Bool cb_f(Index n, Number* z, Bool new_x, Number* f, UserDataPtr u) {
  (void)n, (void)new_x;
  msCtx* c = u;
  if (!sweep(c, z, 0)) return FALSE;
  *f = c->J;
  return TRUE;
}

static Bool cb_grad_f(Index n, Number* z, Bool new_x, Number* g, UserDataPtr u) {
  (void)n, (void)new_x;
  msCtx* c = u;
  if (!sweep(c, z, 0)) return FALSE;
  objective_gradient(c, z, g);
  return TRUE;
}

static Bool cb_g(Index n, Number* z, Bool new_x, Index m, Number* g, UserDataPtr u) {
  (void)n, (void)new_x, (void)m;
  msCtx* c = u;
  if (!sweep(c, z, 0)) return FALSE;
  memcpy(g, c->D, sizeof(double) * (size_t)c->nc);
  return TRUE;
}

static Bool cb_jac_g(Index n, Number* z, Bool new_x, Index m, Index nele, Index* rows, Index* cols, Number* val,
                     UserDataPtr u) {
  (void)n, (void)new_x, (void)m, (void)nele;
  msCtx* c = u;
  if (!val) {
    jacobian(c, NULL, rows, cols, NULL);
    return TRUE;
  }
  if (!sweep(c, z, 1)) return FALSE;
  jacobian(c, z, NULL, NULL, val);
  return TRUE;
}

// the Gauss-Newton Hessian (the objective's, without the constraints' curvature; the lower triangle)
static Bool cb_h(Index n, Number* x, Bool new_x, Number of, Index m, Number* l, Bool new_l, Index nele, Index* r,
                 Index* cl, Number* v, UserDataPtr u) {
  (void)n, (void)new_x, (void)m, (void)l, (void)new_l, (void)nele;
  msCtx* c = u;
  if (v && !sweep(c, x, 0)) return FALSE;
  gauss_newton(c, r, cl, v, of);
  return TRUE;
}

// the iterate k into zbest if it is feasible (max |D| <= best_defect) and the best so far. Ipopt evaluates the
// objective's gradient and the Jacobian at the iterate before this callback, so the last sweep is the iterate
// when its objective is obj (otherwise the iterate is not recorded)
static void keep_best(msCtx* c, int k, double obj) {
  if (!c->have_f || c->J != obj || !(obj < c->best)) return;
  for (int i = 0; i < c->nc; i++)
    if (!(fabs(c->D[i]) <= c->best_defect)) return;
  memcpy(c->zbest, c->zf, sizeof(double) * (size_t)c->nz);
  c->best = obj, c->best_iter = k;
}

// one record per Ipopt iteration into p->iter (and the progress callback)
static Bool cb_iter(Index mode, Index k, Number obj, Number inf_pr, Number inf_du, Number mu, Number dnorm,
                    Number reg, Number alpha_du, Number alpha_pr, Index ls, UserDataPtr u) {
  (void)mode, (void)dnorm, (void)reg, (void)alpha_du, (void)ls;
  msCtx* c = u;
  physControlProblem* p = c->p;
  if (k > p->maxiter) return TRUE;
  double now = ms_seconds();
  p->iter[k] = (physDdpIter){obj, 0, alpha_pr, mu, inf_du, now - c->tlast};
  c->tlast = now;
  p->niter = k;
  if (c->defect_iter) c->defect_iter[k] = inf_pr;
  if (c->progress) c->progress(c->pctx, k, &p->iter[k], inf_pr);
  keep_best(c, k, obj);
  return TRUE;
}

//---------------------------------------------------------------------------------------------------------
// the solver

// the context's arrays in one allocation (NULL if out of memory); free(c->rot) frees them
static int ctx_make(msCtx* c, physControlProblem* p, physData* d) {
  const physModel* m = p->m;
  memset(c, 0, sizeof *c);
  c->p = p, c->d = d, c->m = m, c->T = p->T, c->nu = p->nu, c->nv = m->nv, c->nq = m->nq;
  c->n2 = 2 * m->nv, c->ns = m->nq + m->nv;
  c->nz = p->T * (c->nu + c->n2), c->nc = p->T * c->n2;
  size_t T = (size_t)p->T, ns = (size_t)c->ns, n2 = (size_t)c->n2, nu = (size_t)c->nu, nv = (size_t)c->nv;
  size_t nd = 3 * (T + 1) * ns + T * n2 + T * n2 * n2 + T * n2 * nu + (T + 1) * n2 + (T + 1) * n2 * n2 +
              2 * (size_t)c->nz + ns + 1 +
              nv * (nv + 5) + n2 * (n2 + nu) + (sizeof(physContact) * (size_t)m->nconmax) / sizeof(double) + 1;
  double* s = calloc(nd + nv, sizeof(double));
  if (!s) return 0;
  c->rot = (int*)(s + nd);
  double** slot[] = {&c->Xr, &c->S, &c->F, &c->D, &c->A, &c->B, &c->gs, &c->Hs, &c->zf, &c->zj, &c->x0, &c->scratch,
                     &c->M};
  size_t size[] = {(T + 1) * ns, (T + 1) * ns, (T + 1) * ns, T * n2, T * n2 * n2, T * n2 * nu, (T + 1) * n2,
                   (T + 1) * n2 * n2, (size_t)c->nz, (size_t)c->nz, ns + 1, nv * (nv + 5), n2 * (n2 + nu)};
  for (size_t i = 0; i < sizeof size / sizeof size[0]; i++) *slot[i] = s, s += size[i];
  c->con0 = (physContact*)s;
  rotation_groups(m, c->rot);
  c->nblk = next_block_nnz(c);
  c->aware = (m->opt.gradflags & PHYS_GRAD_COMPLEMENTARITY) && m->opt.contact == PHYS_CONTACT_LCP;
  if (c->aware && !(c->rec = calloc(T * (phys_rollout_record_size(m) + 1) + 2 * n2, sizeof(double)))) {
    free(c->Xr);
    return 0;
  }
  return 1;
}

// the context's allocations
static void ctx_free(msCtx* c) {
  free(c->Xr);
  free(c->rec);
}

// c <- d's state as the initial state
static void save_x0(msCtx* c) {
  const physData* d = c->d;
  memcpy(c->x0, d->qpos, sizeof(double) * (size_t)c->nq);
  memcpy(c->x0 + c->nq, d->qvel, sizeof(double) * (size_t)c->nv);
  c->x0[c->ns] = d->time;
  c->ncon0 = d->ncon;
  memcpy(c->con0, d->contact, sizeof(physContact) * (size_t)d->ncon);
}

physStatus phys_ms_constraints(physControlProblem* p, physData* d, const double* Xr, const double* z, double* D,
                               double* jac, double* J, double* grad, physLog* log) {
  if (!phys_control_state_ok(p, "ms", log)) return PHYS_ERR_MODEL;
  msCtx c;
  if (!ctx_make(&c, p, d)) return phys_error(log, PHYS_ERR_NOMEM, "ms: out of memory");
  c.log = log;
  save_x0(&c);
  memcpy(c.Xr, Xr, sizeof(double) * (size_t)(c.T + 1) * c.ns);
  physStatus st = PHYS_OK;
  if (!sweep(&c, z, jac != NULL)) {
    st = c.st != PHYS_OK ? c.st : phys_error(log, PHYS_ERR_NUMERIC, "ms: a step was rejected or is not finite");
  } else {
    memcpy(D, c.D, sizeof(double) * (size_t)c.nc);
    if (J) *J = c.J;
    if (grad) objective_gradient(&c, z, grad);
    if (jac) {
      size_t nnz = (size_t)c.T * (c.n2 * c.nu + c.nblk) + (size_t)(c.T - 1) * c.n2 * c.n2;
      int* rc = malloc(2 * sizeof(int) * nnz);
      double* val = malloc(sizeof(double) * nnz);
      if (!rc || !val) st = phys_error(log, PHYS_ERR_NOMEM, "ms: out of memory");
      else {
        jacobian(&c, NULL, rc, rc + nnz, NULL);
        jacobian(&c, z, NULL, NULL, val);
        memset(jac, 0, sizeof(double) * (size_t)c.nc * c.nz);
        for (size_t k = 0; k < nnz; k++) jac[(size_t)rc[k] * c.nz + rc[nnz + k]] = val[k];
      }
      free(rc);
      free(val);
    }
  }
  ctx_free(&c);
  return st;
}

// the name of Ipopt's status
static const char* status_name(int s) {
  switch (s) {
    case Solve_Succeeded: return "solved";
    case Solved_To_Acceptable_Level: return "acceptable";
    case Infeasible_Problem_Detected: return "infeasible";
    case Search_Direction_Becomes_Too_Small: return "small step";
    case Diverging_Iterates: return "diverging";
    case Maximum_Iterations_Exceeded: return "maxiter";
    case Restoration_Failed: return "restoration failed";
    case Error_In_Step_Computation: return "error in step computation";
    case Invalid_Number_Detected: return "invalid number";
    case Not_Enough_Degrees_Of_Freedom: return "not enough degrees of freedom";
    default: return "ipopt error";
  }
}

// the Ipopt problem of c with its options (NULL if Ipopt refused it)
static IpoptProblem make_problem(msCtx* c, const physMsOptions* opt) {
  physControlProblem* p = c->p;
  size_t nnz = (size_t)c->T * (c->n2 * c->nu + c->nblk) + (size_t)(c->T - 1) * c->n2 * c->n2;
  double *zl = malloc(sizeof(double) * (2 * (size_t)c->nz + 2 * (size_t)c->nc)), *zu = zl + c->nz;
  if (!zl) return NULL;
  double *gl = zu + c->nz, *gu = gl + c->nc;
  for (int t = 0; t < c->T; t++) {
    for (int j = 0; j < c->nu; j++) {
      zl[u_at(c, t) + j] = isfinite(p->lo[j]) ? p->lo[j] : -1e20;
      zu[u_at(c, t) + j] = isfinite(p->hi[j]) ? p->hi[j] : 1e20;
    }
    for (int i = 0; i < c->n2; i++) zl[dx_at(c, t + 1) + i] = -1e20, zu[dx_at(c, t + 1) + i] = 1e20;
  }
  memset(gl, 0, sizeof(double) * 2 * (size_t)c->nc);
  Index nh = opt->gauss_newton ? (Index)gauss_newton(c, NULL, NULL, NULL, 0) : 0;
  IpoptProblem nlp = CreateIpoptProblem(c->nz, zl, zu, c->nc, gl, gu, (Index)nnz, nh, 0, cb_f, cb_g, cb_grad_f,
                                        cb_jac_g, cb_h);
  free(zl);
  if (!nlp) return NULL;
  if (!opt->gauss_newton) AddIpoptStrOption(nlp, "hessian_approximation", "limited-memory");
  AddIpoptStrOption(nlp, "sb", "yes");
  AddIpoptIntOption(nlp, "limited_memory_max_history", opt->history);
  AddIpoptIntOption(nlp, "print_level", opt->print_level);
  AddIpoptIntOption(nlp, "max_iter", p->maxiter);
  AddIpoptNumOption(nlp, "tol", p->tol);
  AddIpoptNumOption(nlp, "constr_viol_tol", opt->constr_tol);
  AddIpoptNumOption(nlp, "acceptable_constr_viol_tol", opt->constr_tol);
  SetIntermediateCallback(nlp, cb_iter);
  return nlp;
}

// the initial guess: U clamped into the bounds, Xr its rollout (DDP's solution first with init_ddp)
static physStatus initial_guess(msCtx* c, const physMsOptions* opt, physMsResult* res) {
  physControlProblem* p = c->p;
  for (int t = 0; t < p->T; t++)
    for (int j = 0; j < p->nu; j++) {
      double* u = p->U + (size_t)t * p->nu + j;
      *u = fmin(fmax(*u, p->lo[j]), p->hi[j]);
    }
  if (opt->init_ddp) {
    physStatus st = phys_ddp_solve(p, c->d, NULL, NULL, c->log);
    if (st != PHYS_OK) return st;
    res->ddp_iterations = p->niter;
  }
  load_x0(c);
  double J = phys_control_rollout(p, c->d, p->U, c->Xr);
  load_x0(c);
  if (!isfinite(J))
    return phys_error(c->log, PHYS_ERR_NUMERIC, "ms: the initial guess's rollout is not finite (%s)",
                      c->d->nwarning ? c->d->lastwarning : "cost");
  return PHYS_OK;
}

// res's figures at the solution z: objective, max defect, bound violation; p->U, p->X, p->cost the rollout of
// the controls and res->drift its distance to the solution's states
static void finish(msCtx* c, const double* z, physMsResult* res) {
  physControlProblem* p = c->p;
  for (int t = 0; t < c->T; t++) memcpy(p->U + (size_t)t * c->nu, z + u_at(c, t), sizeof(double) * (size_t)c->nu);
  res->objective = NAN, res->defect = INFINITY;
  if (sweep(c, z, 0)) {
    res->objective = c->J, res->defect = 0;
    for (int i = 0; i < c->nc; i++) res->defect = fmax(res->defect, fabs(c->D[i]));
  }
  res->violation = phys_control_violation(p, p->U);
  load_x0(c);
  p->cost = phys_control_rollout(p, c->d, p->U, p->X);
  res->drift = 0;
  for (int t = 0; t <= c->T; t++) {
    const double *x = p->X + (size_t)t * c->ns, *s = c->S + (size_t)t * c->ns;
    phys_difference_pos(c->m, c->scratch, 1.0, s, x);
    for (int i = 0; i < c->nv; i++)
      res->drift = fmax(res->drift, fmax(fabs(c->scratch[i]), fabs(x[c->nq + i] - s[c->nq + i])));
  }
  load_x0(c);
}

physStatus phys_ms_solve(physControlProblem* p, physData* d, const physMsOptions* opt, physMsResult* res,
                         physMsProgress progress, void* ctx, physLog* log) {
  double start = ms_seconds();
  double* defect_iter = res->defect_iter;
  memset(res, 0, sizeof *res);
  res->defect_iter = defect_iter;
  res->status_name = "not run";
  for (int j = 0; j < p->nu; j++)
    if (!(p->lo[j] <= p->hi[j]) || p->lo[j] == INFINITY || p->hi[j] == -INFINITY)
      return phys_error(log, PHYS_ERR_ARG, "ms: control %d: infeasible bounds [%g, %g]", j, p->lo[j], p->hi[j]);
  if (!phys_control_state_ok(p, "ms", log)) return PHYS_ERR_MODEL;
  msCtx c;
  if (!ctx_make(&c, p, d)) return phys_error(log, PHYS_ERR_NOMEM, "ms: out of memory");
  c.log = log, c.progress = progress, c.pctx = ctx, c.defect_iter = defect_iter;
  save_x0(&c);
  physStatus st = initial_guess(&c, opt, res);
  double* z = st == PHYS_OK ? calloc(2 * (size_t)c.nz, sizeof(double)) : NULL;
  c.zbest = z ? z + c.nz : NULL, c.best = INFINITY, c.best_defect = opt->best_defect, c.best_iter = -1;
  IpoptProblem nlp = z ? make_problem(&c, opt) : NULL;
  if (st == PHYS_OK && !nlp) st = phys_error(log, PHYS_ERR_NOMEM, "ms: out of memory (Ipopt's problem)");
  if (st == PHYS_OK) {
    for (int t = 0; t < c.T; t++) memcpy(z + u_at(&c, t), p->U + (size_t)t * c.nu, sizeof(double) * (size_t)c.nu);
    p->niter = 0;
    c.tlast = ms_seconds();
    double obj = 0;
    int s = IpoptSolve(nlp, z, NULL, &obj, NULL, NULL, NULL, &c);
    res->status = s, res->status_name = status_name(s), res->relabelled = c.relabelled;
    p->stop = s == Solve_Succeeded || s == Solved_To_Acceptable_Level ? PHYS_DDP_COST : PHYS_DDP_MAXITER;
    if (c.st != PHYS_OK) st = c.st;
    else if (s <= Not_Enough_Degrees_Of_Freedom)
      st = phys_error(log, PHYS_ERR_NUMERIC, "ms: Ipopt stopped with status %d (%s)", s, status_name(s));
    else {
      // unsolved, with a worse or infeasible last iterate (Ipopt is not monotone, and contact makes the
      // defects only piecewise smooth): the best feasible iterate instead
      res->iterate = p->niter;
      int solved = p->stop == PHYS_DDP_COST;
      if (!solved && c.best_iter >= 0 && sweep(&c, z, 0)) {
        double dmax = 0;
        for (int i = 0; i < c.nc; i++) dmax = fmax(dmax, fabs(c.D[i]));
        if (!(dmax <= c.best_defect) || !(c.J <= c.best)) {
          memcpy(z, c.zbest, sizeof(double) * (size_t)c.nz);
          res->iterate = c.best_iter;
        }
      } else if (!solved && c.best_iter >= 0) {
        memcpy(z, c.zbest, sizeof(double) * (size_t)c.nz);
        res->iterate = c.best_iter;
      }
      finish(&c, z, res);
    }
  }
  if (nlp) FreeIpoptProblem(nlp);
  free(z);
  load_x0(&c);
  ctx_free(&c);
  res->seconds = ms_seconds() - start;
  return st;
}
