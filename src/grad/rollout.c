// rollout.c - rollout gradient with checkpointing (rollout.h)
#include "rollout.h"

#include <math.h>
#include <string.h>

#include "arena.h"
#include "contact.h"
#include "grad.h"
#include "step.h"
#include "step_record.h"

//---------------------------------------------------------------------------------------------------------
// sizes

// states held with interval k: ceil(T/k) checkpoints + k segment states
int phys_rollout_nstate(int T, int k) {
  if (T < 1 || k < 1) return 0;
  if (k > T) k = T;
  return (T + k - 1) / k + k;
}

// k = ceil(sqrt(T)) without a budget, else the smallest k with ceil(T/k) + k <= budget (-1 if none)
int phys_rollout_interval(int T, int budget) {
  if (T < 1) return -1;
  if (budget <= 0) {
    int k = (int)ceil(sqrt((double)T));
    while (k > 1 && (k - 1) * (k - 1) >= T) k--;   // guard against sqrt rounding up
    while (k * k < T) k++;
    return k;
  }
  for (int k = 1; k <= T; k++)
    if (phys_rollout_nstate(T, k) <= budget) return k;
  return -1;
}

// doubles of one state record: qpos, qvel, act, time (phys_state_save, step.h), ncon, the contact list (warm
// start) of nconmax contacts
static size_t record_size(const physModel* m) {
  size_t con = (sizeof(physContact) * (size_t)m->nconmax + sizeof(double) - 1) / sizeof(double);
  return phys_state_size(m) + 1 + con;
}

// the differentiated state's size: 2nv, with activations 2nv + na (grad.h)
static int state_dim(const physModel* m) { return 2 * m->nv + m->na; }

// doubles: nstate state records, then xbar, xnext, g (nx = 2nv + na each), theta scratch (ntheta)
size_t phys_rollout_worksize(const physModel* m, int T, int k, int ntheta) {
  if (k == 0) k = phys_rollout_interval(T, 0);   // as phys_rollout_grad: 0 is the default interval
  size_t ns = (size_t)phys_rollout_nstate(T, k);
  return ns * record_size(m) + 3 * (size_t)state_dim(m) + (size_t)(ntheta > 0 ? ntheta : 0);
}

//---------------------------------------------------------------------------------------------------------
// state records: qpos (nq), qvel (nv), act (na), time (1), ncon (1), contacts (nconmax physContact, record_size):
// phys_step reads the last step's contacts as its warm-start input (physWarmStart, contact.h), so a
// recomputation from a record reproduces the forward pass bit for bit only with them. They are the state's
// own list, kept beside qpos and qvel and passed to the steps (phys_step_warm) and their linearizations
// (phys_step_linearize_warm) explicitly: the rollout never writes d's contact lists (x_0's is d->contact, read
// only; each step's contacts go to one of two arena lists, steps.cur and steps.next)

// record <- d's qpos, qvel, time and the state's contact list w: its count and its w->n contacts; the room
// past them (up to nconmax) is not written (load_state reads only the count's contacts)
static void save_state(const physModel* m, const physData* d, const physWarmStart* w, double* rec) {
  size_t ns = phys_state_size(m);
  phys_state_save(m, d, rec);
  rec[ns] = w->n;
  if (w->n > 0) memcpy(rec + ns + 1, w->con, sizeof(physContact) * (size_t)w->n);
}

// d's qpos, qvel, time <- record; returns the record's contact list (the next step's warm start, read in place)
static physWarmStart load_state(const physModel* m, physData* d, const double* rec) {
  size_t ns = phys_state_size(m);
  phys_state_load(m, d, rec);
  return (physWarmStart){(int)rec[ns], (const physContact*)(rec + ns + 1)};
}

// the steps of a pass: the current state's contact list w and two arena lists the steps write by turns
typedef struct rolloutSteps_ {
  physWarmStart w;
  physContactList list[2];
  int next;                 // the list the next step writes
} rolloutSteps;

// one phys_step from w (phys_step_warm: bit for bit phys_step from a state whose list is w), its contacts
// into the other list, which becomes w
static void step_listed(const physModel* m, physData* d, rolloutSteps* s) {
  physContactList* out = s->list + s->next;
  phys_step_warm(m, d, NULL, &s->w, out);
  s->w = (physWarmStart){out->n, out->con};
  s->next ^= 1;
}

size_t phys_rollout_record_size(const physModel* m) {
  return record_size(m);
}
// (d's own list d->contact saved and loaded with the state: these move a state into and out of d)
void phys_rollout_save_state(const physModel* m, const physData* d, double* rec) {
  physWarmStart w = {d->ncon, d->contact};
  save_state(m, d, &w, rec);
}
void phys_rollout_load_state(const physModel* m, physData* d, const double* rec) {
  physWarmStart w = load_state(m, d, rec);
  d->ncon = w.n;
  memcpy(d->contact, w.con, sizeof(physContact) * (size_t)w.n);
}

// ctrl <- u_t
static void set_ctrl(const physModel* m, physData* d, const double* u, int t) {
  if (m->nu > 0) memcpy(d->ctrl, u + (size_t)t * m->nu, sizeof(double) * (size_t)m->nu);
}

// the loss of a rollout: terms of (qpos, qvel) (f, phys_rollout_grad), of (qpos, qvel, act) (fa,
// phys_rollout_grad_act), or the states' inner products with given cotangents (qbar, phys_rollout_vjp)
typedef struct rolloutLoss_ {
  physLossFn f;
  physLossActFn fa;
  void* ctx;
  const double *qbar, *vbar, *abar;   // (T+1) x nq, nv, na (abar may be NULL)
} rolloutLoss;

// l_t = qbar_t . qpos + vbar_t . qvel + abar_t . act and its gradient in tangent coordinates (g_q =
// (dqpos/dtangent)' qbar_t)
static double cotangent_loss(const physModel* m, const rolloutLoss* lo, int t, const physData* d, double* g) {
  const double* qb = lo->qbar + (size_t)t * m->nq;
  const double* vb = lo->vbar + (size_t)t * m->nv;
  double l = 0;
  for (int i = 0; i < m->nq; i++) l += qb[i] * d->qpos[i];
  for (int i = 0; i < m->nv; i++) l += vb[i] * d->qvel[i], g[m->nv + i] = vb[i];
  for (int i = 0; lo->abar && i < m->na; i++)
    l += lo->abar[(size_t)t * m->na + i] * d->act[i], g[2 * m->nv + i] = lo->abar[(size_t)t * m->na + i];
  phys_qpos_bar_to_tangent(m, d->qpos, qb, g);   // (physid/derivatives.h, batch.c)
  return l;
}

// l_t at d's state with its gradient g = (g_q, g_v, g_act) (nx, zeroed first; g_act stays 0 for a loss of
// (qpos, qvel))
static double eval_loss(const physModel* m, const physData* d, const rolloutLoss* lo, int t, double* g) {
  memset(g, 0, sizeof(double) * (size_t)state_dim(m));
  if (lo->qbar) return cotangent_loss(m, lo, t, d, g);
  if (lo->fa) return lo->fa(lo->ctx, t, d->qpos, d->qvel, d->act, g, g + m->nv, g + 2 * m->nv);
  return lo->f(lo->ctx, t, d->qpos, d->qvel, g, g + m->nv);
}

//---------------------------------------------------------------------------------------------------------
// forward

// L = sum_t l_t(x_t) along the plain rollout; d ends at x_T
double phys_rollout(const physModel* m, physData* d, int T, const double* u, physLossFn loss, void* ctx) {
  rolloutLoss lo = {loss, NULL, ctx, NULL, NULL, NULL};
  size_t mark = phys_stack_mark(d);
  double* g = phys_stack_alloc(d, (size_t)state_dim(m) + 1);
  double L = 0;
  for (int t = 0; t < T; t++) {
    L += eval_loss(m, d, &lo, t, g);
    set_ctrl(m, d, u, t);
    phys_step(m, d);
  }
  L += eval_loss(m, d, &lo, T, g);
  phys_stack_free(d, mark);
  return L;
}

// the first of the n values that is not finite, or -1
static int first_nonfinite(const double* x, int n) {
  for (int i = 0; i < n; i++)
    if (!isfinite(x[i])) return i;
  return -1;
}

// one step of the gradient's forward pass (every contact model's step is differentiated: step_contact_deriv.h,
// penalty_deriv.h), checked as phys_control_rollout checks its steps: PHYS_ERR_NUMERIC with a message naming
// step t if phys_step rejected it (its warning's text) or left a state coordinate not finite
static physStatus checked_step(const physModel* m, physData* d, const double* u, int t, rolloutSteps* s,
                               physLog* log) {
  int rejected = d->warning_count[PHYS_WARN_REJECTED];
  set_ctrl(m, d, u, t);
  step_listed(m, d, s);
  if (d->warning_count[PHYS_WARN_REJECTED] > rejected)
    return phys_error(log, PHYS_ERR_NUMERIC, "phys_rollout_grad: step %d rejected (%s)", t, d->lastwarning);
  int iq = first_nonfinite(d->qpos, m->nq), iv = first_nonfinite(d->qvel, m->nv);
  if (iq >= 0 || iv >= 0)
    return phys_error(log, PHYS_ERR_NUMERIC, "phys_rollout_grad: step %d: %s[%d] is not finite", t,
                      iq >= 0 ? "qpos" : "qvel", iq >= 0 ? iq : iv);
  return PHYS_OK;
}

// l_t added to the forward pass's sum L: PHYS_ERR_NUMERIC naming t if l_t or the sum is not finite
static physStatus checked_loss(const physModel* m, const physData* d, const rolloutLoss* lo, int t, double* g,
                               double* L, physLog* log) {
  double l = eval_loss(m, d, lo, t, g);
  *L += l;
  if (!isfinite(l)) return phys_error(log, PHYS_ERR_NUMERIC, "phys_rollout_grad: the loss at step %d is %g", t, l);
  if (!isfinite(*L))
    return phys_error(log, PHYS_ERR_NUMERIC, "phys_rollout_grad: the summed loss overflows at step %d", t);
  return PHYS_OK;
}

//---------------------------------------------------------------------------------------------------------
// reverse

// one reverse step at x_t (seg record) with control u_t: ubar_t = B' xnext, thetabar += P' xnext,
// xbar = A' xnext + dl_t/dx_t (g scratch, tb ntheta scratch)
static physStatus reverse_step(const physModel* m, physData* d, const physParamTable* tab, const double* rec,
                               const double* u, int t, const rolloutLoss* lo, const double* xnext,
                               double* xbar, double* g, double* tb, double* ubar, double* thetabar) {
  int nx = state_dim(m);
  physWarmStart w = load_state(m, d, rec);
  set_ctrl(m, d, u, t);
  int params = tab && tab->ntheta > 0 && thetabar;
  // one linearization, one dispatch on its kind: xbar, ubar and thetabar together (step_record.h)
  physStepRecord sr;
  physStatus st = phys_step_linearize_warm(m, d, &w, &sr);
  if (st == PHYS_OK)
    st = phys_step_record_vjp(m, d, &sr, params ? tab : NULL, xnext, xbar, ubar ? ubar + (size_t)t * m->nu : NULL,
                              params ? tb : NULL, NULL);
  phys_step_record_free(d, &sr);
  if (st != PHYS_OK) return st;
  if (params)
    for (int i = 0; i < tab->ntheta; i++) thetabar[i] += tb[i];
  eval_loss(m, d, lo, t, g);
  for (int i = 0; i < nx; i++) xbar[i] += g[i];
  return PHYS_OK;
}

// the whole gradient: forward with checkpoints, then segments last to first (recompute, reverse)
static physStatus rollout_grad(const physModel* m, physData* d, const physParamTable* tab, int T, int k,
                               const double* u, const rolloutLoss* lo, double* work, double* total,
                               double* xbar0, double* ubar, double* thetabar, physLog* log) {
  if (!d || T < 1 || k < 0 || k > T || !(lo->f || lo->fa || (lo->qbar && lo->vbar)) || !work || (m->nu > 0 && !u))
    return phys_error(log, PHYS_ERR_ARG, "phys_rollout_grad: bad arguments (T %d, k %d)", T, k);
  if (k == 0) k = phys_rollout_interval(T, 0);
  int nx = state_dim(m), nu = m->nu, nrec = (int)record_size(m), nchk = (T + k - 1) / k;
  int ntheta = tab ? tab->ntheta : 0;

  // workspace layout: checkpoints, segment buffer, xbar, xnext, g (nx each), theta scratch
  double* chk = work;
  double* seg = chk + (size_t)nchk * nrec;
  double* xbar = seg + (size_t)k * nrec;
  double* xnext = xbar + nx;
  double* g = xnext + nx;
  double* tb = g + nx;

  // forward from x_0's list d->contact: loss and checkpoints x_0, x_k, ... (x_0 first: an exhausted arena
  // returns to it, phys_rollout_grad); the last segment's states go to the segment buffer as well, which the
  // reverse pass reads first: that segment is not recomputed (k - 1 steps fewer)
  rolloutSteps steps = {{d->ncon, d->contact}, {{0}}, 0};
  save_state(m, d, &steps.w, chk);
  steps.list[0] = phys_contact_list_arena(d);
  steps.list[1] = phys_contact_list_arena(d);
  double L = 0;
  physStatus st = PHYS_OK;
  int tlast = (nchk - 1) * k;
  for (int t = 0; t < T && st == PHYS_OK; t++) {
    if (t > 0 && t % k == 0) save_state(m, d, &steps.w, chk + (size_t)(t / k) * nrec);
    if (t >= tlast) save_state(m, d, &steps.w, seg + (size_t)(t - tlast) * nrec);
    st = checked_loss(m, d, lo, t, g, &L, log);
    if (st == PHYS_OK) st = checked_step(m, d, u, t, &steps, log);
  }
  if (st == PHYS_OK) st = checked_loss(m, d, lo, T, xnext, &L, log);   // xnext = dl_T/dx_T
  if (total) *total = st == PHYS_OK ? L : INFINITY;   // a rejected rollout: +inf, as phys_control_rollout's
  if (st != PHYS_OK) {
    load_state(m, d, chk);
    return st;
  }
  if (ubar && nu > 0) memset(ubar, 0, sizeof(double) * (size_t)T * nu);
  if (thetabar && ntheta > 0) memset(thetabar, 0, sizeof(double) * (size_t)ntheta);

  // backward: segment s covers steps s*k .. min(T, (s+1)k) - 1, recomputed from its checkpoint (the last one
  // is in the buffer already)
  for (int s = nchk - 1; s >= 0; s--) {
    int t0 = s * k, t1 = t0 + k < T ? t0 + k : T;
    if (s < nchk - 1) steps.w = load_state(m, d, chk + (size_t)s * nrec);
    for (int t = t0; t < t1 && s < nchk - 1; t++) {
      save_state(m, d, &steps.w, seg + (size_t)(t - t0) * nrec);
      if (t + 1 < t1) {
        set_ctrl(m, d, u, t);
        step_listed(m, d, &steps);
      }
    }
    for (int t = t1 - 1; t >= t0; t--) {
      st = reverse_step(m, d, tab, seg + (size_t)(t - t0) * nrec, u, t, lo, xnext, xbar, g, tb, ubar, thetabar);
      if (st != PHYS_OK) {
        load_state(m, d, chk);
        return phys_error(log, st, "phys_rollout_grad: the VJP of step %d failed (status %d)", t, (int)st);
      }
      int ix = first_nonfinite(xbar, nx), iu = ubar && nu > 0 ? first_nonfinite(ubar + (size_t)t * nu, nu) : -1;
      if (ix >= 0 || iu >= 0) {   // the loss is finite but its gradient overflows: rejected as well
        load_state(m, d, chk);
        if (total) *total = INFINITY;
        return phys_error(log, PHYS_ERR_NUMERIC, "phys_rollout_grad: step %d: the gradient %s[%d] is not finite", t,
                          ix >= 0 ? "dL/dx" : "dL/du", ix >= 0 ? ix : iu);
      }
      memcpy(xnext, xbar, sizeof(double) * (size_t)nx);
    }
  }
  if (xbar0) memcpy(xbar0, xnext, sizeof(double) * (size_t)nx);
  load_state(m, d, chk);
  set_ctrl(m, d, u, 0);
  return PHYS_OK;
}

// under an arena guard (arena.h): an exhausted arena returns PHYS_ERR_NOMEM (d back at x_0, message in log)
static physStatus rollout_grad_guarded(const physModel* m, physData* d, const physParamTable* tab, int T, int k,
                                       const double* u, const rolloutLoss* lo, double* work, double* total,
                                       double* xbar0, double* ubar, double* thetabar, physLog* log) {
  if (!d) return rollout_grad(m, d, tab, T, k, u, lo, work, total, xbar0, ubar, thetabar, log);   // refused
  physArenaGuard g;
  phys_arena_enter(d, &g);
  if (setjmp(g.env)) {
    physStatus st = phys_arena_failed(d, &g, PHYS_WARN_OTHER, "phys_rollout_grad");
    load_state(m, d, work);   // the first checkpoint: x_0
    return phys_error(log, st, "%s", d->lastwarning);
  }
  size_t mark = phys_stack_mark(d);
  physStatus st = rollout_grad(m, d, tab, T, k, u, lo, work, total, xbar0, ubar, thetabar, log);
  phys_stack_free(d, mark);
  phys_arena_leave(d, &g);
  return st;
}

physStatus phys_rollout_grad(const physModel* m, physData* d, const physParamTable* tab, int T, int k,
                             const double* u, physLossFn loss, void* ctx, double* work, double* total,
                             double* xbar0, double* ubar, double* thetabar, physLog* log) {
  rolloutLoss lo = {loss, NULL, ctx, NULL, NULL, NULL};
  return rollout_grad_guarded(m, d, tab, T, k, u, &lo, work, total, xbar0, ubar, thetabar, log);
}

physStatus phys_rollout_grad_act(const physModel* m, physData* d, const physParamTable* tab, int T, int k,
                                 const double* u, physLossActFn loss, void* ctx, double* work, double* total,
                                 double* xbar0, double* ubar, double* thetabar, physLog* log) {
  rolloutLoss lo = {NULL, loss, ctx, NULL, NULL, NULL};
  return rollout_grad_guarded(m, d, tab, T, k, u, &lo, work, total, xbar0, ubar, thetabar, log);
}

physStatus phys_rollout_vjp(const physModel* m, physData* d, const physParamTable* tab, int T, int k,
                            const double* u, const double* qbar, const double* vbar, const double* abar,
                            double* work, double* xbar0, double* ubar, double* thetabar, physLog* log) {
  rolloutLoss lo = {NULL, NULL, NULL, qbar, vbar, abar};
  return rollout_grad_guarded(m, d, tab, T, k, u, &lo, work, NULL, xbar0, ubar, thetabar, log);
}
