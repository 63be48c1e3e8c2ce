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

int phys_control_design_ok(physControlProblem* p, const char* who, physLog* log) {
  if (!p->design) return 1;
  if (p->design_model != p->m || !p->theta || !p->theta_lo || !p->theta_hi) {
    phys_error(log, PHYS_ERR_ARG, "%s: a design needs design_model = m, theta and its bounds", who);
    return 0;
  }
  for (int i = 0; i < p->design->ntheta; i++) {
    if (!(p->theta_lo[i] <= p->theta_hi[i]) || !isfinite(p->theta[i])) {
      phys_error(log, PHYS_ERR_ARG, "%s: design value %d: %g or its bounds [%g, %g] infeasible", who, i, p->theta[i],
                 p->theta_lo[i], p->theta_hi[i]);
      return 0;
    }
    p->theta[i] = fmin(fmax(p->theta[i], p->theta_lo[i]), p->theta_hi[i]);
  }
  return 1;
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
  double* gtheta;           // ntheta: the design's explicit gradient of the loss (design_terms), or NULL
  int next;                 // the next step whose explicit gradient is added (the forward pass visits t = 0..T
                            // once in order; the reverse pass revisits t < T, which must not add it again)
} shootLoss;

// 1 if body b is body a or in a's subtree (b = -1: no body, 0)
static int in_subtree(const physModel* m, int b, int a) {
  while (b > 0 && b != a) b = m->body_parentid[b];
  return b == a;
}

// the bodies of a point term's point (*bp) and of its reference point (*br, -1 without one)
static void point_bodies(const physModel* m, const physPointCost* pc, int* bp, int* br) {
  *bp = pc->body ? pc->site : m->site_bodyid[pc->site];
  *br = !pc->has_ref ? -1 : pc->refbody ? pc->ref : m->site_bodyid[pc->ref];
}

// gtheta += scale dl/dtheta|explicit of c's point terms at d's kinematics (phys_state_cost ran at the state):
// a pos:B design parameter moves every point of B's subtree by R_parent(B) dtheta (params.h), so a position
// term's residual e = p - p_ref - target moves by +-R_parent dtheta and dl = w e . de. Velocity terms on a
// moved point are refused before a solve (phys_shooting_solve)
static void design_terms(const physModel* m, const physData* d, const physStateCost* c, const physParamTable* t,
                         double scale, double* gtheta) {
  for (int i = 0; i < t->n; i++) {
    const physParam* e = t->param + i;
    if (e->kind != PHYS_PAR_POS) continue;
    const double* R = d->xmat + 9 * m->body_parentid[e->id];
    for (int k = 0; k < c->npoint; k++) {
      const physPointCost* pc = c->point + k;
      int bp, br;
      point_bodies(m, pc, &bp, &br);
      double sign = in_subtree(m, bp, e->id) - in_subtree(m, br, e->id);
      if (sign == 0 || pc->vel) continue;
      const double* p = pc->body ? d->xpos + 3 * pc->site : d->site_xpos + 3 * pc->site;
      const double* pr = pc->refbody ? d->xpos + 3 * pc->ref : d->site_xpos + 3 * pc->ref;
      for (int a = 0; a < 3; a++) {   // dl/dtheta_a = sum_i w_i e_i R_ia (sign)
        double s = 0;
        for (int r = 0; r < 3; r++)
          s += pc->w[r] * (p[r] - (pc->has_ref ? pr[r] : 0) - pc->target[r]) * R[3 * r + a];
        gtheta[e->adr + a] += scale * sign * s;
      }
    }
  }
}

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
  if (s->gtheta && t == s->next && c->npoint > 0) design_terms(m, s->d, c, p->design, scale, s->gtheta);
  if (t == s->next) s->next++;
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

// the design's length (0 without design parameters) and the unknowns: T nu controls, then the design
static int design_n(const physControlProblem* p) {
  return p->design ? p->design->ntheta : 0;
}
static size_t nvar(const physControlProblem* p) {
  return (size_t)p->T * p->nu + (size_t)design_n(p);
}

// the rollout gradient's part of the workspace
static size_t rollout_part(const physControlProblem* p) {
  return phys_rollout_worksize(p->m, p->T, grad_interval(p), design_n(p));
}

size_t phys_control_grad_worksize(const physControlProblem* p) {
  const physModel* m = p->m;
  return rollout_part(p) + phys_rollout_record_size(m) + 4 * (size_t)m->nv + 2 * (size_t)design_n(p);
}

// the design theta (design_n values) into the model; 0 if phys_param_set refuses a value
static int set_design(const physControlProblem* p, const double* theta) {
  return !p->design || phys_param_set(p->design, p->design_model, theta) == PHYS_OK;
}

// one forward pass and one reverse pass (phys_rollout_grad): its summed loss is J (state_loss); a rejected
// rollout (PHYS_ERR_NUMERIC with J = +inf: a step rejected, a state, the cost or the gradient not finite) is
// J = +inf with status PHYS_OK, as phys_control_rollout's value for it; any other failure is the status
double phys_control_grad(physControlProblem* p, physData* d, const double* U, double* G, double* work,
                         physStatus* status, physLog* log) {
  const physModel* m = p->m;
  int nth = design_n(p);
  size_t nU = (size_t)p->T * p->nu;
  double* rec = work + rollout_part(p);
  double* scratch = rec + phys_rollout_record_size(m);
  double *thetabar = scratch + 4 * m->nv, *gtheta = thetabar + nth;
  if (status) *status = PHYS_OK;
  if (!set_design(p, U + nU)) return INFINITY;   // a value its kind refuses (a mass <= 0): rejected
  memset(gtheta, 0, sizeof(double) * (size_t)nth);
  shootLoss s = {p, U, d, scratch, nth ? gtheta : NULL, 0};
  double J = INFINITY;
  physLog quiet;   // a rejected rollout is an answer (J = +inf), not an error of the caller's
  memset(&quiet, 0, sizeof quiet);
  physStatus st = phys_rollout_grad(m, d, p->design, p->T, grad_interval(p), U, state_loss, &s, work, &J, NULL, G,
                                    nth ? thetabar : NULL, &quiet);
  if (st == PHYS_ERR_NUMERIC && J == INFINITY) return INFINITY;
  if (st != PHYS_OK) {
    if (status) *status = phys_error(log, st, "%s", quiet.error);
    return INFINITY;
  }
  control_grad(p, U, G);
  for (int i = 0; i < nth; i++) G[nU + i] = thetabar[i] + gtheta[i];   // dynamics (P' xbar) + explicit
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
  double *x, *G, *best, *lo, *hi;   // nvar each: the unknowns (controls, then design), gradient, best, bounds
  double *m1, *m2, *trial;  // Adam's moments and trial unknowns (nvar each)
  double* wa;               // L-BFGS-B's work array
  int* iwa;                 // 3n, then nbd (n)
  double bestcost;
  void* base;
} shootWork;

// one allocation for everything; 0 if out of memory
static int work_alloc(const physControlProblem* p, shootWork* w) {
  size_t n = nvar(p), nU = (size_t)p->T * p->nu, ng = phys_control_grad_worksize(p);
  double* s = calloc(ng + 8 * n + lbfgsb_nwa(n) + 2 * n + 1, sizeof(double));   // iwa: 4n ints <= 2n doubles
  if (!(w->base = s)) return 0;
  w->grad = s, s += ng;
  double** slot[] = {&w->x, &w->G, &w->best, &w->lo, &w->hi, &w->m1, &w->m2, &w->trial};
  for (int i = 0; i < 8; i++) *slot[i] = s, s += n;
  w->wa = s, s += lbfgsb_nwa(n);
  w->iwa = (int*)s;
  for (size_t i = 0; i < nU; i++) w->lo[i] = p->lo[i % p->nu], w->hi[i] = p->hi[i % p->nu];
  for (size_t i = nU; i < n; i++) w->lo[i] = p->theta_lo[i - nU], w->hi[i] = p->theta_hi[i - nU];
  memcpy(w->x, p->U, sizeof(double) * nU);
  if (n > nU) memcpy(w->x + nU, p->theta, sizeof(double) * (n - nU));
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
    memcpy(w->best, U, sizeof(double) * nvar(p));
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
  int n = (int)nvar(p), mc = SHOOT_LBFGSB_M, iprint = -1, lsave[4] = {0}, isave[44] = {0};
  int k = 0;   // the next iteration to record (0: the first evaluation)
  int* nbd = w->iwa + 3 * n;
  double dsave[29] = {0}, f = 0, factr = p->tol / 2.220446049250313e-16, pgtol = 0, start = phys_control_clock();
  char task[60], csave[60];
  memset(task, ' ', 60), memcpy(task, "START", 5), memset(csave, ' ', 60);
  for (int i = 0; i < n; i++) nbd[i] = isfinite(w->lo[i]) ? (isfinite(w->hi[i]) ? 2 : 1) : isfinite(w->hi[i]) ? 3 : 0;
  p->stop = PHYS_DDP_MAXITER;
  for (;;) {
    setulb_(&n, &mc, w->x, w->lo, w->hi, nbd, &f, w->G, &factr, &pgtol, w->wa, w->iwa, task, &iprint, csave,
            lsave, isave, dsave, 60, 60);
    if (strncmp(task, "FG", 2) == 0) {
      physStatus st;
      f = phys_control_grad(p, d, w->x, w->G, w->grad, &st, log);
      if (st != PHYS_OK) return st;
      if (!isfinite(f)) {   // a rejected trial point: a huge value makes the line search back off
        f = 1e300;
        memset(w->G, 0, sizeof(double) * (size_t)n);
      }
      keep_best(p, w, w->x, f);
      if (k == 0) {   // the first evaluation: iteration 0
        record(p, 0, w->bestcost, projected_gradient(w, w->x, (size_t)n), 0, start, progress, ctx);
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
  size_t n = nvar(p);
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
  size_t n = nvar(p);
  double start = phys_control_clock(), lr = o->lr, lastbest;
  physStatus st;
  double J = phys_control_grad(p, d, w->x, w->G, w->grad, &st, log);
  if (st != PHYS_OK) return st;
  keep_best(p, w, w->x, J);
  record(p, 0, w->bestcost, projected_gradient(w, w->x, n), lr, start, progress, ctx);
  lastbest = w->bestcost;
  p->stop = PHYS_DDP_MAXITER;
  for (int k = 1, since = 0; k <= p->maxiter; k++) {
    start = phys_control_clock();
    if (projected_gradient(w, w->x, n) == 0) {
      p->stop = PHYS_DDP_GRADIENT;
      break;
    }
    adam_step(p, o, w, w->x, k, lr);
    double Jt = phys_control_grad(p, d, w->trial, w->G, w->grad, &st, log);
    if (st != PHYS_OK) return st;
    if (isfinite(Jt)) memcpy(w->x, w->trial, sizeof(double) * n), J = Jt;
    else lr *= 0.5, J = phys_control_grad(p, d, w->x, w->G, w->grad, &st, log);   // rejected: G back at U
    keep_best(p, w, w->x, J);
    record(p, k, w->bestcost, projected_gradient(w, w->x, n), lr, start, progress, ctx);
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

// a design's checks: its model is the problem's, its arrays given, its bounds feasible (theta clamped into
// them), and no velocity term on a point a pos: parameter moves (its explicit derivative is not built); 0 and a
// message in log otherwise
static int design_ok(physControlProblem* p, physLog* log) {
  const physParamTable* t = p->design;
  if (!phys_control_design_ok(p, "shooting", log)) return 0;
  if (!t) return 1;
  const physStateCost* c[2] = {&p->run, &p->fin};
  for (int i = 0; i < t->n; i++)
    for (int l = 0; l < 2 && t->param[i].kind == PHYS_PAR_POS; l++)
      for (int k = 0; k < c[l]->npoint; k++) {
        const physPointCost* pc = c[l]->point + k;
        int bp, br;
        point_bodies(p->m, pc, &bp, &br);
        if (pc->vel && (in_subtree(p->m, bp, t->param[i].id) || in_subtree(p->m, br, t->param[i].id)))
          return phys_error(log, PHYS_ERR_ARG, "shooting: design '%s' moves the point of a velocity term (%s list, "
                            "term %d): its derivative in the design is not built", t->param[i].name,
                            l ? "final" : "running", k), 0;
      }
  return 1;
}

physStatus phys_shooting_solve(physControlProblem* p, physData* d, const physShootOptions* o,
                               physDdpProgress progress, void* ctx, physLog* log) {
  const physModel* m = p->m;
  if (!phys_control_bounds_ok(p, o->method == PHYS_SHOOT_ADAM ? "adam" : "lbfgsb", log)) return PHYS_ERR_ARG;
  phys_control_clamp(p, p->U);
  if (!design_ok(p, log)) return PHYS_ERR_ARG;
  shootWork w;
  if (!work_alloc(p, &w)) return phys_error(log, PHYS_ERR_NOMEM, "shooting: out of memory");
  size_t nU = (size_t)p->T * p->nu;
  double* x0 = w.grad + rollout_part(p);   // the gradient's own record
  phys_rollout_save_state(m, d, x0);
  w.bestcost = INFINITY;
  memcpy(w.best, w.x, sizeof(double) * nvar(p));
  double J0 = set_design(p, w.x + nU) ? phys_control_rollout(p, d, p->U, NULL) : INFINITY;
  phys_rollout_load_state(m, d, x0);
  physStatus st = PHYS_OK;
  if (!isfinite(J0))
    st = phys_error(log, PHYS_ERR_NUMERIC, "shooting: the initial guess's rollout is not finite (%s)",
                    d->nwarning ? d->lastwarning : "cost");
  else if (o->method == PHYS_SHOOT_ADAM) st = run_adam(p, d, o, &w, progress, ctx, log);
  else st = run_lbfgsb(p, d, &w, progress, ctx, log);
  // the best controls and design, and their rollout
  phys_rollout_save_state(m, d, x0);
  memcpy(p->U, w.best, sizeof(double) * nU);
  if (p->design) memcpy(p->theta, w.best + nU, sizeof(double) * (size_t)design_n(p));
  p->cost = set_design(p, p->theta) ? phys_control_rollout(p, d, p->U, p->X) : INFINITY;
  phys_rollout_load_state(m, d, x0);
  free(w.base);
  return st;
}
