// shooting.c - single shooting on the rollout gradient: L-BFGS-B and Adam (shooting.h)
#include "shooting.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rollout.h"

void phys_shooting_defaults(physShootOptions* o) {
  *o = (physShootOptions){PHYS_SHOOT_LBFGSB, 0.05, 0.9, 0.999};
}

//---------------------------------------------------------------------------------------------------------
// helpers shared with sampling.c (shooting.h)

double phys_control_clock(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int phys_control_bounds_ok(const physControlProblem* p, const char* who, physLog* log) {
  for (int j = 0; j < p->nu; j++)
    if (!(p->lo[j] <= p->hi[j] && p->lo[j] < INFINITY && p->hi[j] > -INFINITY)) {
      phys_error(log, PHYS_ERR_ARG, "%s: control %d: infeasible bounds [%g, %g]", who, j, p->lo[j], p->hi[j]);
      return 0;
    }
  return 1;
}

int phys_control_state_ok(const physControlProblem* p, const char* who, physLog* log) {
  if (p->m->na == 0) return 1;
  phys_error(log, PHYS_ERR_MODEL, "%s: the model has actuators with dynamics (%d activations, MuJoCo's act): its "
             "linearization keeps the state (q, v); use the gradient (adam, lbfgsb) or sampling methods (mppi, cem)",
             who, p->m->na);
  return 0;
}

void phys_control_clamp(const physControlProblem* p, double* U) {
  for (size_t i = 0; i < (size_t)p->T * p->nu; i++) {
    int j = (int)(i % (size_t)p->nu);
    U[i] = fmin(fmax(U[i], p->lo[j]), p->hi[j]);
  }
}

//---------------------------------------------------------------------------------------------------------
// the gradient

// the loss callback's context: the problem, the controls, the data whose state the rollout holds, scratch
typedef struct shootLoss_ {
  const physControlProblem* p;
  const double* U;          // T x nu controls (their terms are in the value, not in the state gradient)
  physData* d;
  double* g;                // 2nv: the tangent gradient of the state terms (q, then v)
} shootLoss;

// the stage cost of J at d's state (= (qpos, qvel)), computed as phys_control_rollout computes it so the
// rollout's summed loss is J bit for bit: dt (l_t + c_t(u_t, u_{t-1})) for t < T, l_T at T; (g_q, g_v) the
// state terms' tangent gradient (phys_state_cost: the weighted residuals, site and body position and velocity
// terms by J' W e) times dt for t < T
static double state_loss(void* ctx, int t, const double* qpos, const double* qvel, double* g_q, double* g_v) {
  (void)qpos, (void)qvel;
  shootLoss* s = ctx;
  const physControlProblem* p = s->p;
  const physModel* m = p->m;
  const physStateCost* c = t < p->T ? &p->run : &p->fin;
  double scale = t < p->T ? m->opt.timestep : 1;
  double J = phys_state_cost(m, s->d, c, s->g, NULL);
  for (int i = 0; i < m->nv; i++) g_q[i] = scale * s->g[i], g_v[i] = scale * s->g[m->nv + i];
  if (t == p->T) return J;
  const double* u = s->U + (size_t)t * p->nu;
  return scale * (J + phys_control_effort(p, u, t > 0 ? u - p->nu : p->uprev));
}

// G += the control terms' gradient: dt (wu u_t + wdu (u_t - u_{t-1})) on u_t, -dt wdu (u_t - u_{t-1}) on u_{t-1}
static void control_grad(const physControlProblem* p, const double* U, double* G) {
  double dt = p->m->opt.timestep;
  for (int t = 0; t < p->T; t++)
    for (int j = 0; j < p->nu; j++) {
      size_t i = (size_t)t * p->nu + j;
      double up = t > 0 ? U[i - p->nu] : p->uprev[j], rate = dt * p->wdu[j] * (U[i] - up);
      G[i] += dt * p->wu[j] * U[i] + rate;
      if (t > 0) G[i - p->nu] -= rate;
    }
}

// the checkpoint interval of the gradient: ceil(sqrt(T))
static int grad_interval(const physControlProblem* p) {
  return phys_rollout_interval(p->T, 0);
}

size_t phys_control_grad_worksize(const physControlProblem* p) {
  const physModel* m = p->m;
  return phys_rollout_worksize(m, p->T, grad_interval(p), 0) + phys_rollout_record_size(m) + 4 * (size_t)m->nv;
}

// one forward pass and one reverse pass (phys_rollout_grad): its summed loss is J (state_loss); a rejected
// rollout (PHYS_ERR_NUMERIC with J = +inf: a step rejected, a state, the cost or the gradient not finite) is
// J = +inf with status PHYS_OK, as phys_control_rollout's value for it; any other failure is the status
double phys_control_grad(physControlProblem* p, physData* d, const double* U, double* G, double* work,
                         physStatus* status, physLog* log) {
  const physModel* m = p->m;
  double* rec = work + phys_rollout_worksize(m, p->T, grad_interval(p), 0);
  double* scratch = rec + phys_rollout_record_size(m);
  if (status) *status = PHYS_OK;
  shootLoss s = {p, U, d, scratch};
  double J = INFINITY;
  physLog quiet;   // a rejected rollout is an answer (J = +inf), not an error of the caller's
  memset(&quiet, 0, sizeof quiet);
  physStatus st = phys_rollout_grad(m, d, NULL, p->T, grad_interval(p), U, state_loss, &s, work, &J, NULL, G, NULL,
                                    &quiet);
  if (st == PHYS_ERR_NUMERIC && J == INFINITY) return INFINITY;
  if (st != PHYS_OK) {
    if (status) *status = phys_error(log, st, "%s", quiet.error);
    return INFINITY;
  }
  control_grad(p, U, G);
  return J;
}

//---------------------------------------------------------------------------------------------------------
// the solver's workspace

// L-BFGS-B's memory and the size of its work array for n unknowns
#define SHOOT_LBFGSB_M 10
static size_t lbfgsb_nwa(size_t n) {
  return (2 * SHOOT_LBFGSB_M + 5) * n + 11 * SHOOT_LBFGSB_M * SHOOT_LBFGSB_M + 8 * SHOOT_LBFGSB_M;
}

typedef struct shootWork_ {
  double* grad;             // phys_control_grad's workspace
  double *G, *best, *lo, *hi;   // T x nu each: gradient, best controls, per-entry bounds
  double *m1, *m2, *trial;  // Adam's moments and trial controls (T x nu each)
  double* wa;               // L-BFGS-B's work array
  int* iwa;                 // 3n, then nbd (n)
  double bestcost;
  void* base;
} shootWork;

// one allocation for everything; 0 if out of memory
static int work_alloc(const physControlProblem* p, shootWork* w) {
  size_t n = (size_t)p->T * p->nu, ng = phys_control_grad_worksize(p);
  double* s = calloc(ng + 7 * n + lbfgsb_nwa(n) + 2 * n + 1, sizeof(double));   // iwa: 4n ints <= 2n doubles
  if (!(w->base = s)) return 0;
  w->grad = s, s += ng;
  double** slot[] = {&w->G, &w->best, &w->lo, &w->hi, &w->m1, &w->m2, &w->trial};
  for (int i = 0; i < 7; i++) *slot[i] = s, s += n;
  w->wa = s, s += lbfgsb_nwa(n);
  w->iwa = (int*)s;
  for (size_t i = 0; i < n; i++) w->lo[i] = p->lo[i % p->nu], w->hi[i] = p->hi[i % p->nu];
  return 1;
}

// the largest |projected gradient| at U: G's entries, 0 where a bound blocks their descent direction
static double projected_gradient(const shootWork* w, const double* U, size_t n) {
  double g = 0;
  for (size_t i = 0; i < n; i++) {
    double gi = w->G[i];
    if ((U[i] <= w->lo[i] && gi > 0) || (U[i] >= w->hi[i] && gi < 0)) gi = 0;
    g = fmax(g, fabs(gi));
  }
  return g;
}

// record iteration k (its best cost, the projected gradient, Adam's lr) and report it
static void record(physControlProblem* p, int k, double cost, double pg, double lr, double start,
                   physDdpProgress progress, void* ctx) {
  p->niter = k;
  p->iter[k] = (physDdpIter){cost, 0, lr, 0, pg, phys_control_clock() - start};
  if (progress) progress(ctx, k, &p->iter[k]);
}

// keep U as the best so far if its cost J is lower
static void keep_best(const physControlProblem* p, shootWork* w, const double* U, double J) {
  if (J < w->bestcost) {
    w->bestcost = J;
    memcpy(w->best, U, sizeof(double) * (size_t)p->T * p->nu);
  }
}

//---------------------------------------------------------------------------------------------------------
// L-BFGS-B (liblbfgsb's Fortran setulb_, reverse communication; gfortran's hidden string lengths last)

extern void setulb_(const int* n, const int* m, double* x, const double* l, const double* u, const int* nbd,
                    double* f, double* g, const double* factr, const double* pgtol, double* wa, int* iwa,
                    char* task, const int* iprint, char* csave, int* lsave, int* isave, double* dsave,
                    size_t task_len, size_t csave_len);

// the stop reason of setulb's final task
static physDdpStop lbfgsb_stop(const char* task) {
  if (strncmp(task, "CONVERGENCE: NORM", 17) == 0) return PHYS_DDP_GRADIENT;
  if (strncmp(task, "CONVERGENCE", 11) == 0) return PHYS_DDP_COST;
  return PHYS_DDP_LINESEARCH;
}

static physStatus run_lbfgsb(physControlProblem* p, physData* d, shootWork* w, physDdpProgress progress,
                             void* ctx, physLog* log) {
  int n = p->T * p->nu, mc = SHOOT_LBFGSB_M, iprint = -1, lsave[4] = {0}, isave[44] = {0};
  int k = 0;   // the next iteration to record (0: the first evaluation)
  int* nbd = w->iwa + 3 * n;
  double dsave[29] = {0}, f = 0, factr = p->tol / 2.220446049250313e-16, pgtol = 0, start = phys_control_clock();
  char task[60], csave[60];
  memset(task, ' ', 60), memcpy(task, "START", 5), memset(csave, ' ', 60);
  for (int i = 0; i < n; i++) nbd[i] = isfinite(w->lo[i]) ? (isfinite(w->hi[i]) ? 2 : 1) : isfinite(w->hi[i]) ? 3 : 0;
  p->stop = PHYS_DDP_MAXITER;
  for (;;) {
    setulb_(&n, &mc, p->U, w->lo, w->hi, nbd, &f, w->G, &factr, &pgtol, w->wa, w->iwa, task, &iprint, csave,
            lsave, isave, dsave, 60, 60);
    if (strncmp(task, "FG", 2) == 0) {
      physStatus st;
      f = phys_control_grad(p, d, p->U, w->G, w->grad, &st, log);
      if (st != PHYS_OK) return st;
      if (!isfinite(f)) {   // a rejected trial point: a huge value makes the line search back off
        f = 1e300;
        memset(w->G, 0, sizeof(double) * (size_t)n);
      }
      keep_best(p, w, p->U, f);
      if (k == 0) {   // the first evaluation: iteration 0
        record(p, 0, w->bestcost, projected_gradient(w, p->U, (size_t)n), 0, start, progress, ctx);
        start = phys_control_clock();
        k = 1;
      }
      continue;
    }
    if (strncmp(task, "NEW_X", 5) == 0) {
      record(p, k, w->bestcost, dsave[12], 0, start, progress, ctx);   // dsave(13): |projected gradient|
      start = phys_control_clock();
      if (k++ >= p->maxiter) break;
      continue;
    }
    p->stop = lbfgsb_stop(task);
    break;
  }
  return PHYS_OK;
}

//---------------------------------------------------------------------------------------------------------
// Adam

// one Adam step from U (gradient w->G) into w->trial, iteration k >= 1
static void adam_step(const physControlProblem* p, const physShootOptions* o, shootWork* w, const double* U, int k,
                      double lr) {
  size_t n = (size_t)p->T * p->nu;
  double c1 = 1 - pow(o->beta1, k), c2 = 1 - pow(o->beta2, k);
  for (size_t i = 0; i < n; i++) {
    double g = w->G[i];
    w->m1[i] = o->beta1 * w->m1[i] + (1 - o->beta1) * g;
    w->m2[i] = o->beta2 * w->m2[i] + (1 - o->beta2) * g * g;
    double u = U[i] - lr * (w->m1[i] / c1) / (sqrt(w->m2[i] / c2) + 1e-8);
    w->trial[i] = fmin(fmax(u, w->lo[i]), w->hi[i]);
  }
}

static physStatus run_adam(physControlProblem* p, physData* d, const physShootOptions* o, shootWork* w,
                           physDdpProgress progress, void* ctx, physLog* log) {
  size_t n = (size_t)p->T * p->nu;
  double start = phys_control_clock(), lr = o->lr, lastbest;
  physStatus st;
  double J = phys_control_grad(p, d, p->U, w->G, w->grad, &st, log);
  if (st != PHYS_OK) return st;
  keep_best(p, w, p->U, J);
  record(p, 0, w->bestcost, projected_gradient(w, p->U, n), lr, start, progress, ctx);
  lastbest = w->bestcost;
  p->stop = PHYS_DDP_MAXITER;
  for (int k = 1, since = 0; k <= p->maxiter; k++) {
    start = phys_control_clock();
    if (projected_gradient(w, p->U, n) == 0) {
      p->stop = PHYS_DDP_GRADIENT;
      break;
    }
    adam_step(p, o, w, p->U, k, lr);
    double Jt = phys_control_grad(p, d, w->trial, w->G, w->grad, &st, log);
    if (st != PHYS_OK) return st;
    if (isfinite(Jt)) memcpy(p->U, w->trial, sizeof(double) * n), J = Jt;
    else lr *= 0.5, J = phys_control_grad(p, d, p->U, w->G, w->grad, &st, log);   // rejected: G back at U
    keep_best(p, w, p->U, J);
    record(p, k, w->bestcost, projected_gradient(w, p->U, n), lr, start, progress, ctx);
    if (w->bestcost < lastbest * (1 - p->tol)) lastbest = w->bestcost, since = 0;
    else if (++since >= 50) {
      p->stop = PHYS_DDP_COST;
      break;
    }
  }
  return PHYS_OK;
}

//---------------------------------------------------------------------------------------------------------
// the solver

physStatus phys_shooting_solve(physControlProblem* p, physData* d, const physShootOptions* o,
                               physDdpProgress progress, void* ctx, physLog* log) {
  const physModel* m = p->m;
  if (!phys_control_bounds_ok(p, o->method == PHYS_SHOOT_ADAM ? "adam" : "lbfgsb", log)) return PHYS_ERR_ARG;
  phys_control_clamp(p, p->U);
  shootWork w;
  if (!work_alloc(p, &w)) return phys_error(log, PHYS_ERR_NOMEM, "shooting: out of memory");
  double* x0 = w.grad + phys_rollout_worksize(m, p->T, grad_interval(p), 0);   // the gradient's own record
  phys_rollout_save_state(m, d, x0);
  w.bestcost = INFINITY;
  memcpy(w.best, p->U, sizeof(double) * (size_t)p->T * p->nu);
  double J0 = phys_control_rollout(p, d, p->U, NULL);
  phys_rollout_load_state(m, d, x0);
  physStatus st = PHYS_OK;
  if (!isfinite(J0))
    st = phys_error(log, PHYS_ERR_NUMERIC, "shooting: the initial guess's rollout is not finite (%s)",
                    d->nwarning ? d->lastwarning : "cost");
  else if (o->method == PHYS_SHOOT_ADAM) st = run_adam(p, d, o, &w, progress, ctx, log);
  else st = run_lbfgsb(p, d, &w, progress, ctx, log);
  // the best controls and their rollout
  phys_rollout_save_state(m, d, x0);
  memcpy(p->U, w.best, sizeof(double) * (size_t)p->T * p->nu);
  p->cost = phys_control_rollout(p, d, p->U, p->X);
  phys_rollout_load_state(m, d, x0);
  free(w.base);
  return st;
}
