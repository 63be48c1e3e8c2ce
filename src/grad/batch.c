// batch.c - steps, step VJPs and rollouts of many independent rows in one call (physid/derivatives.h, batches).
//
// Row b runs on work[b % nwork], worker w taking rows w, w + nwork, ... in order on its own thread (worker 0 on
// the caller's). A row's start is a function of its inputs alone (row_load: its state and controls, time 0, no
// warm start), so its numbers do not depend on which worker ran it or on what that Data did before: the result
// is the same, bit for bit, for every nwork. Errors: each worker stops at its first failing row; the call
// reports the smallest failing row over the workers, which is the first failing row overall (every worker ran
// all its rows before its own failure), whatever nwork.
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "arena.h"
#include "physid/derivatives.h"
#include "step_record.h"

typedef enum { BATCH_STEP, BATCH_VJP, BATCH_VJP_QPOS, BATCH_ROLLOUT } batchOp;

// the call's inputs and outputs (row b's slices are taken in run_row)
typedef struct batchJob_ {
  const physModel* m;
  const physParamTable* t;
  batchOp op;
  int nb, T, nwork;
  const double *x, *u, *xbar_next, *xnext_in;   // xnext_in: the next states (BATCH_VJP_QPOS)
  double *xnext, *xbar, *ubar, *thetabar;
} batchJob;

// one worker: its Data, its first failing row (nb if none), the status and message of that row
typedef struct batchWorker_ {
  const batchJob* job;
  physData* d;
  int id, row;
  physStatus st;
  char msg[320];
} batchWorker;

// d at row state x = (qpos, qvel, act) with controls u (NULL: zero), time 0, no warm start (ncon = 0: the
// step's previous contact list is empty); nothing else a step reads changes between steps (rollout.h)
static void row_load(const physModel* m, physData* d, const double* x, const double* u) {
  memcpy(d->qpos, x, sizeof(double) * (size_t)m->nq);
  memcpy(d->qvel, x + m->nq, sizeof(double) * (size_t)m->nv);
  if (m->na) memcpy(d->act, x + m->nq + m->nv, sizeof(double) * (size_t)m->na);
  if (m->nu) {
    if (u) memcpy(d->ctrl, u, sizeof(double) * (size_t)m->nu);
    else memset(d->ctrl, 0, sizeof(double) * (size_t)m->nu);
  }
  d->time = 0;
  d->ncon = 0;
}

// x <- d's (qpos, qvel, act)
static void row_save(const physModel* m, const physData* d, double* x) {
  memcpy(x, d->qpos, sizeof(double) * (size_t)m->nq);
  memcpy(x + m->nq, d->qvel, sizeof(double) * (size_t)m->nv);
  if (m->na) memcpy(x + m->nq + m->nv, d->act, sizeof(double) * (size_t)m->na);
}

// one phys_step; PHYS_ERR_NUMERIC (message in w) if it was rejected
static physStatus row_step(batchWorker* w, int b, int s) {
  physData* d = w->d;
  int before = d->warning_count[PHYS_WARN_REJECTED];
  phys_step(w->job->m, d);
  if (d->warning_count[PHYS_WARN_REJECTED] == before) return PHYS_OK;
  snprintf(w->msg, sizeof w->msg, "row %d: step %d rejected (%s)", b, s, d->lastwarning);
  return PHYS_ERR_NUMERIC;
}

// xbar, ubar, theta_bar of one step from one linearization (phys_step_vjp and phys_step_param_vjp each make
// the same one: step_record.c)
static physStatus vjp_all(const physModel* m, physData* d, const physParamTable* t, const double* xbar_next,
                          double* xbar, double* ubar, double* theta_bar) {
  physStepRecord rec;
  physStatus st = phys_step_linearize(m, d, &rec);
  const physParamTable* tt = t && t->ntheta && theta_bar ? t : NULL;   // no table: no parameter terms computed
  if (st == PHYS_OK) st = phys_step_record_vjp(m, d, &rec, tt, xbar_next, xbar, ubar, tt ? theta_bar : NULL, NULL);
  phys_step_record_free(d, &rec);
  return st;
}

// the same under an arena guard (arena.h): an exhausted arena returns PHYS_ERR_NOMEM
static physStatus vjp_guarded(const physModel* m, physData* d, const physParamTable* t, const double* xbar_next,
                              double* xbar, double* ubar, double* theta_bar) {
  PHYS_ARENA_CALL(d, "phys_step_vjp_batch", vjp_all(m, d, t, xbar_next, xbar, ubar, theta_bar));
}

//---------------------------------------------------------------------------------------------------------
// cotangents between qpos and the tangent coordinates (physid/derivatives.h): a hinge, slide or free translation
// is its own tangent coordinate; a quaternion q = (w, x, y, z) moves as q' = q exp(dq / 2), so dqpos = L(q)[:, 1:]
// dq / 2 with L(q) p = q p, L(q)[:, 1:] = [-x -y -z; w -z y; z w -x; -y x w]

// one quaternion q's cotangents: g (3) = L(q)[:, 1:]' b / 2 (to the tangent), or b (4) = 2 L(q)[:, 1:] g (to qpos)
static void quat_bar(const double* q, const double* in, double* out, int to_tangent) {
  if (to_tangent) {
    out[0] = 0.5 * (-q[1] * in[0] + q[0] * in[1] + q[3] * in[2] - q[2] * in[3]);
    out[1] = 0.5 * (-q[2] * in[0] - q[3] * in[1] + q[0] * in[2] + q[1] * in[3]);
    out[2] = 0.5 * (-q[3] * in[0] + q[2] * in[1] - q[1] * in[2] + q[0] * in[3]);
    return;
  }
  out[0] = 2 * (-q[1] * in[0] - q[2] * in[1] - q[3] * in[2]);
  out[1] = 2 * (q[0] * in[0] - q[3] * in[1] + q[2] * in[2]);
  out[2] = 2 * (q[3] * in[0] + q[0] * in[1] - q[1] * in[2]);
  out[3] = 2 * (-q[2] * in[0] + q[1] * in[1] + q[0] * in[2]);
}

// the cotangent map of every joint at qpos: to the tangent (in qbar, out g) or to qpos (in g, out qbar)
static void cotangent_map(const physModel* m, const double* qpos, const double* in, double* out, int to_tangent) {
  for (int j = 0; j < m->njnt; j++) {
    int qa = m->jnt_qposadr[j], da = m->jnt_dofadr[j], type = m->jnt_type[j];
    int nlin = type == PHYS_JNT_FREE ? 3 : type == PHYS_JNT_BALL ? 0 : 1;   // coordinates that are their own
    for (int i = 0; i < nlin; i++) {
      if (to_tangent) out[da + i] = in[qa + i];
      else out[qa + i] = in[da + i];
    }
    if (type == PHYS_JNT_FREE || type == PHYS_JNT_BALL)
      quat_bar(qpos + qa + nlin, in + (to_tangent ? qa : da) + nlin, out + (to_tangent ? da : qa) + nlin, to_tangent);
  }
}

// g (nv) = (dqpos/dtangent)' qbar
void phys_qpos_bar_to_tangent(const physModel* m, const double* qpos, const double* qbar, double* g) {
  cotangent_map(m, qpos, qbar, g, 1);
}

// qbar (nq) = (dtangent/dqpos)' g for unit quaternions
void phys_tangent_bar_to_qpos(const physModel* m, const double* qpos, const double* g, double* qbar) {
  cotangent_map(m, qpos, g, qbar, 0);
}

// one step's VJP in qpos coordinates at d (loaded at x): yb (nq + nv + na), the cotangent of xnext, mapped to the
// tangent at xnext, the VJP, the result mapped back at x into out (nq + nv + na); the tangent cotangents in d's arena
static physStatus vjp_qpos(const physModel* m, physData* d, const physParamTable* t, const double* x,
                           const double* xnext, const double* yb, double* out, double* ubar, double* thetabar) {
  size_t nx = (size_t)(2 * m->nv + m->na);
  size_t mark = phys_stack_mark(d);
  double* xbn = phys_stack_alloc(d, 2 * nx);
  if (!xbn) return PHYS_ERR_NOMEM;
  double* xb = xbn + nx;
  phys_qpos_bar_to_tangent(m, xnext, yb, xbn);
  memcpy(xbn + m->nv, yb + m->nq, sizeof(double) * (nx - (size_t)m->nv));
  physStatus st = vjp_guarded(m, d, t, xbn, xb, ubar, thetabar);
  if (st == PHYS_OK) {
    phys_tangent_bar_to_qpos(m, x, xb, out);
    memcpy(out + m->nq, xb + m->nv, sizeof(double) * (nx - (size_t)m->nv));
  }
  phys_stack_free(d, mark);
  return st;
}

// row b's VJP in qpos coordinates
static physStatus row_vjp_qpos(batchWorker* w, int b) {
  const batchJob* j = w->job;
  const physModel* m = j->m;
  size_t ns = (size_t)(m->nq + m->nv + m->na), nth = j->t ? j->t->ntheta : 0;
  return vjp_qpos(m, w->d, j->t, j->x + b * ns, j->xnext_in + b * ns, j->xbar_next + b * ns, j->xbar + b * ns,
                  j->ubar ? j->ubar + b * (size_t)m->nu : NULL, j->thetabar ? j->thetabar + b * nth : NULL);
}

// row b of the job on worker w
static physStatus run_row(batchWorker* w, int b) {
  const batchJob* j = w->job;
  const physModel* m = j->m;
  size_t ns = (size_t)(m->nq + m->nv + m->na), nx = (size_t)(2 * m->nv + m->na), nu = (size_t)m->nu;
  size_t nth = j->t ? (size_t)j->t->ntheta : 0, T = (size_t)j->T;
  const double* u = j->u ? j->u + (size_t)b * nu * (j->op == BATCH_ROLLOUT ? T : 1) : NULL;
  row_load(m, w->d, j->x + (size_t)b * ns, u);
  if (j->op == BATCH_STEP) {
    physStatus st = row_step(w, b, 0);
    if (st == PHYS_OK) row_save(m, w->d, j->xnext + (size_t)b * ns);
    return st;
  }
  if (j->op == BATCH_VJP_QPOS) {
    physStatus st = row_vjp_qpos(w, b);
    if (st != PHYS_OK) snprintf(w->msg, sizeof w->msg, "row %d: %s", b, phys_status_str(st));
    return st;
  }
  if (j->op == BATCH_VJP) {
    physStatus st = vjp_guarded(m, w->d, j->t, j->xbar_next + (size_t)b * nx, j->xbar ? j->xbar + b * nx : NULL,
                                j->ubar ? j->ubar + b * nu : NULL, j->thetabar ? j->thetabar + b * nth : NULL);
    if (st != PHYS_OK) snprintf(w->msg, sizeof w->msg, "row %d: %s", b, phys_status_str(st));
    return st;
  }
  double* xs = j->xnext + (size_t)b * (T + 1) * ns;   // rollout: x_0 .. x_T
  row_save(m, w->d, xs);
  for (size_t s = 0; s < T; s++) {
    if (u && s > 0) memcpy(w->d->ctrl, u + s * nu, sizeof(double) * nu);
    physStatus st = row_step(w, b, (int)s);
    if (st != PHYS_OK) return st;
    row_save(m, w->d, xs + (s + 1) * ns);
  }
  return PHYS_OK;
}

// a worker's rows in order, up to its first failure
static void* run_worker(void* arg) {
  batchWorker* w = (batchWorker*)arg;
  for (int b = w->id; b < w->job->nb; b += w->job->nwork) {
    physStatus st = run_row(w, b);
    if (st != PHYS_OK) {
      w->row = b;
      w->st = st;
      break;
    }
  }
  return NULL;
}

// the job on nwork workers (threads 1.. started here, worker 0 on this thread); the first failing row's error
static physStatus run_job(batchJob* j, physData** work, const char* who, physLog* log) {
  if (!j->m || !work || j->nwork < 1 || j->nwork > PHYS_BATCH_MAXTHREADS || j->nb < 0 || j->T < 0 ||
      (j->nb > 0 && !j->x) || (j->op != BATCH_VJP && j->op != BATCH_VJP_QPOS && j->nb > 0 && !j->xnext) ||
      (j->op == BATCH_VJP && j->nb > 0 && !j->xbar_next) ||
      (j->op == BATCH_VJP_QPOS && j->nb > 0 && (!j->xbar_next || !j->xnext_in || !j->xbar)))
    return phys_error(log, PHYS_ERR_ARG, "%s: bad arguments (nwork %d, nb %d, T %d, or a NULL array)", who,
                      j->nwork, j->nb, j->T);
  for (int i = 0; i < j->nwork; i++)
    if (!work[i]) return phys_error(log, PHYS_ERR_ARG, "%s: work[%d] is NULL", who, i);
  batchWorker w[PHYS_BATCH_MAXTHREADS];
  pthread_t th[PHYS_BATCH_MAXTHREADS];
  int started[PHYS_BATCH_MAXTHREADS] = {0};
  for (int i = 0; i < j->nwork; i++) w[i] = (batchWorker){j, work[i], i, j->nb, PHYS_OK, ""};
  for (int i = 1; i < j->nwork && i < j->nb; i++) started[i] = pthread_create(&th[i], NULL, run_worker, &w[i]) == 0;
  for (int i = 1; i < j->nwork && i < j->nb; i++)   // a thread that could not start: its rows here
    if (!started[i]) run_worker(&w[i]);
  run_worker(&w[0]);
  for (int i = 1; i < j->nwork; i++)
    if (started[i]) pthread_join(th[i], NULL);
  int first = 0;
  for (int i = 1; i < j->nwork; i++)
    if (w[i].row < w[first].row) first = i;
  if (w[first].row == j->nb) return PHYS_OK;
  return phys_error(log, w[first].st, "%s: %s", who, w[first].msg);
}

physStatus phys_step_batch(const physModel* m, physData** work, int nwork, int nb, const double* x,
                           const double* u, double* xnext, physLog* log) {
  batchJob j = {m, NULL, BATCH_STEP, nb, 0, nwork, x, u, NULL, NULL, xnext, NULL, NULL, NULL};
  return run_job(&j, work, "phys_step_batch", log);
}

physStatus phys_step_vjp_batch(const physModel* m, physData** work, int nwork, const physParamTable* t, int nb,
                               const double* x, const double* u, const double* xbar_next, double* xbar,
                               double* ubar, double* thetabar, physLog* log) {
  batchJob j = {m, t, BATCH_VJP, nb, 0, nwork, x, u, xbar_next, NULL, NULL, xbar, ubar, thetabar};
  return run_job(&j, work, "phys_step_vjp_batch", log);
}

physStatus phys_step_vjp_batch_qpos(const physModel* m, physData** work, int nwork, const physParamTable* t, int nb,
                                    const double* x, const double* u, const double* xnext, const double* ybar,
                                    double* xbar, double* ubar, double* thetabar, physLog* log) {
  batchJob j = {m, t, BATCH_VJP_QPOS, nb, 0, nwork, x, u, ybar, xnext, NULL, xbar, ubar, thetabar};
  return run_job(&j, work, "phys_step_vjp_batch_qpos", log);
}

physStatus phys_rollout_batch(const physModel* m, physData** work, int nwork, int nb, int T, const double* x,
                              const double* u, double* xs, physLog* log) {
  batchJob j = {m, NULL, BATCH_ROLLOUT, nb, T, nwork, x, u, NULL, NULL, xs, NULL, NULL, NULL};
  return run_job(&j, work, "phys_rollout_batch", log);
}

physStatus phys_rollout_states(const physModel* m, physData* d, int T, const double* u, double* xs, physLog* log) {
  if (!m || !d || T < 0 || !xs)
    return phys_error(log, PHYS_ERR_ARG, "phys_rollout_states: bad arguments (T %d, or a NULL pointer)", T);
  size_t ns = (size_t)(m->nq + m->nv + m->na), nu = (size_t)m->nu;
  row_save(m, d, xs);
  for (int s = 0; s < T; s++) {   // x_{s+1} = step(x_s, u_s)
    if (u && nu) memcpy(d->ctrl, u + (size_t)s * nu, sizeof(double) * nu);
    int before = d->warning_count[PHYS_WARN_REJECTED];
    phys_step(m, d);
    if (d->warning_count[PHYS_WARN_REJECTED] != before)
      return phys_error(log, PHYS_ERR_NUMERIC, "step %d rejected (%s)", s, d->lastwarning);
    row_save(m, d, xs + (size_t)(s + 1) * ns);
  }
  return PHYS_OK;
}

// the chain of phys_rollout_states_vjp (derivatives.h), from the last step back: c_T = ybar_T, c_s = ybar_s +
// VJP_s(c_{s+1}) (step s linearized at x_s as a row), ubar_s = B_s' c_{s+1}, thetabar = sum_s P_s' c_{s+1}
static physStatus states_vjp(const physModel* m, physData* d, const physParamTable* t, int T, const double* xs,
                             const double* u, const double* ybar, double* xbar0, double* ubar, double* thetabar) {
  size_t ns = (size_t)(m->nq + m->nv + m->na), nu = (size_t)m->nu, nth = t ? (size_t)t->ntheta : 0;
  size_t mark = phys_stack_mark(d);
  double* c = phys_stack_alloc(d, 2 * ns + nth + (size_t)m->nv);   // c_{s+1}, VJP_s(c_{s+1}), step s's theta
  double *next = c + ns, *ths = c + 2 * ns, *g = ths + nth;           // cotangent, x_0's in the tangent
  memcpy(c, ybar + (size_t)T * ns, sizeof(double) * ns);
  if (thetabar) memset(thetabar, 0, sizeof(double) * nth);
  physStatus st = PHYS_OK;
  for (int s = T - 1; s >= 0 && st == PHYS_OK; s--) {
    row_load(m, d, xs + (size_t)s * ns, u ? u + (size_t)s * nu : NULL);
    st = vjp_qpos(m, d, t, xs + (size_t)s * ns, xs + (size_t)(s + 1) * ns, c, next,
                  ubar ? ubar + (size_t)s * nu : NULL, thetabar ? ths : NULL);
    for (size_t i = 0; i < ns; i++) c[i] = next[i] + ybar[(size_t)s * ns + i];
    for (size_t i = 0; thetabar && i < nth; i++) thetabar[i] += ths[i];
  }
  if (st == PHYS_OK) {   // x_0's qpos cotangent in the tangent plane: (I - q q') c for a quaternion q (both maps)
    phys_qpos_bar_to_tangent(m, xs, c, g);
    phys_tangent_bar_to_qpos(m, xs, g, xbar0);
    memcpy(xbar0 + m->nq, c + m->nq, sizeof(double) * (ns - (size_t)m->nq));
  }
  phys_stack_free(d, mark);
  return st;
}

static physStatus states_vjp_guarded(const physModel* m, physData* d, const physParamTable* t, int T,
                                     const double* xs, const double* u, const double* ybar, double* xbar0,
                                     double* ubar, double* thetabar) {
  PHYS_ARENA_CALL(d, "phys_rollout_states_vjp", states_vjp(m, d, t, T, xs, u, ybar, xbar0, ubar, thetabar));
}

physStatus phys_rollout_states_vjp(const physModel* m, physData* d, const physParamTable* t, int T,
                                   const double* xs, const double* u, const double* ybar, double* xbar0,
                                   double* ubar, double* thetabar, physLog* log) {
  if (!m || !d || T < 0 || !xs || !ybar || !xbar0)
    return phys_error(log, PHYS_ERR_ARG, "phys_rollout_states_vjp: bad arguments (T %d, or a NULL pointer)", T);
  physStatus st = states_vjp_guarded(m, d, t, T, xs, u, ybar, xbar0, ubar, thetabar);
  if (st != PHYS_OK) return phys_error(log, st, "phys_rollout_states_vjp: %s", phys_status_str(st));
  return PHYS_OK;
}
