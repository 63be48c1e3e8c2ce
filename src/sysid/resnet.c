// resnet.c - joint Adam training of theta and the residual network on the one-step prediction loss (resnet.h).
#include "resnet.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "chol.h"
#include "grad.h"
#include "mlp.h"
#include "residual.h"
#include "residual_deriv.h"
#include "rollout.h"
#include "rot.h"
#include "step.h"
#include "step_record.h"
#include "violation.h"

void phys_res_train_defaults(physResTrainOptions* o) {
  memset(o, 0, sizeof(*o));
  o->iters = 200;
  o->lr = 1e-3;
  o->lr_theta = 1e-2;
  o->reg_out = 1e-4;
  o->reg_w = 1e-8;
  o->vel_weight = -1;   // (the sample interval)
  o->substeps = 1;
}

// the workspace of one loss evaluation
typedef struct resWork_ {
  int S, nrec, n2;
  double* rec;     // S + 1 state records (phys_rollout_record_size each)
  double *xb, *xbn, *tb, *lam, *e, *r;
} resWork;

// d's state <- sample s of tr, contact list empty, its recorded inputs held
static void set_sample(const physModel* m, physData* d, const physTrajectory* tr, int s) {
  memcpy(d->qpos, tr->qpos + (size_t)s * m->nq, sizeof(double) * (size_t)m->nq);
  memcpy(d->qvel, tr->qvel + (size_t)s * m->nv, sizeof(double) * (size_t)m->nv);
  for (int i = 0; i < m->nu; i++) d->ctrl[i] = tr->ctrl ? tr->ctrl[(size_t)s * m->nu + i] : 0;
  for (int i = 0; i < m->nv; i++) d->qfrc_applied[i] = tr->qfrc ? tr->qfrc[(size_t)s * m->nv + i] : 0;
  d->time = tr->time[s];
  d->ncon = 0;
}

// qbar (nv) = d(1/2 |e_q|^2)/d(q_sim tangent) = Jr^-1(e)' e on every rotation group, e elsewhere
static void position_adjoint(const physModel* m, const double* e, double* qbar) {
  memcpy(qbar, e, sizeof(double) * (size_t)m->nv);
  for (int j = 0; j < m->njnt; j++) {
    int t = m->jnt_type[j], g = m->jnt_dofadr[j] + (t == PHYS_JNT_FREE ? 3 : 0);
    if (t != PHYS_JNT_FREE && t != PHYS_JNT_BALL) continue;
    double Ji[9];
    phys_so3_jr_inv(Ji, e + g);
    for (int a = 0; a < 3; a++) qbar[g + a] = Ji[a] * e[g] + Ji[3 + a] * e[g + 1] + Ji[6 + a] * e[g + 2];
  }
}

// one step's reverse mode at d's state (loaded from its record): xb = A' xbn, tb = P' xbn, gw += the weights'
static physStatus step_back(const physModel* m, physData* d, const physParamTable* t, resWork* w, double* gw) {
  physStepRecord rec;
  physStatus st = phys_step_linearize(m, d, &rec);
  if (st == PHYS_OK) st = phys_step_record_vjp(m, d, &rec, t, w->xbn, w->xb, NULL, w->tb, w->lam);
  if (st == PHYS_OK && gw) phys_residual_force_vjp(m, d, w->lam, NULL, NULL, gw);
  phys_step_record_free(d, &rec);
  return st;
}

static physStatus step_back_guarded(const physModel* m, physData* d, const physParamTable* t, resWork* w,
                                    double* gw) {
  PHYS_ARENA_CALL(d, "residual training: step derivative", step_back(m, d, t, w, gw));
}

// the output-norm term at d's state: returns |r|^2, gw += (d|r|^2/dw) scale
static physStatus out_norm(const physModel* m, physData* d, double scale, resWork* w, double* gw, double* r2) {
  phys_residual_acc(m, d, w->r);
  double s = 0;
  for (int i = 0; i < m->nv; i++) s += w->r[i] * w->r[i], w->r[i] *= 2 * scale;
  if (gw) phys_residual_vjp(m, d, w->r, NULL, NULL, gw);
  *r2 = s;
  return PHYS_OK;
}

static physStatus out_norm_guarded(const physModel* m, physData* d, double scale, resWork* w, double* gw,
                                   double* r2) {
  PHYS_ARENA_CALL(d, "residual training: output norm", out_norm(m, d, scale, w, gw, r2));
}

// one transition s -> s+1 of tr: its loss terms into *loss, gradients into gtheta, gw (either NULL)
static physStatus transition(physModel* m, physData* d, const physParamTable* t, const physTrajectory* tr, int s,
                             double inv_n, const physResTrainOptions* o, double vw, resWork* w, double* loss,
                             double* gtheta, double* gw) {
  int nv = m->nv, S = w->S, nt = t ? t->ntheta : 0;
  set_sample(m, d, tr, s);
  phys_rollout_save_state(m, d, w->rec);
  for (int k = 0; k < S; k++) {
    phys_step(m, d);
    phys_rollout_save_state(m, d, w->rec + (size_t)(k + 1) * w->nrec);
  }
  // e = (q_sim (-) q_obs, v_sim - v_obs)
  phys_difference_pos(m, w->e, 1, tr->qpos + (size_t)(s + 1) * m->nq, d->qpos);
  for (int i = 0; i < nv; i++) w->e[nv + i] = d->qvel[i] - tr->qvel[(size_t)(s + 1) * nv + i];
  double l = 0;
  for (int i = 0; i < nv; i++) l += w->e[i] * w->e[i] + vw * vw * w->e[nv + i] * w->e[nv + i];
  *loss += 0.5 * inv_n * l;
  physStatus st = PHYS_OK;
  if (m->residual && o->reg_out > 0) {
    phys_rollout_load_state(m, d, w->rec);
    double r2;
    st = out_norm_guarded(m, d, o->reg_out * inv_n, w, gw, &r2);
    *loss += o->reg_out * inv_n * r2;
  }
  if (!gtheta && !gw) return st;
  position_adjoint(m, w->e, w->xbn);
  for (int i = 0; i < nv; i++) w->xbn[i] *= inv_n, w->xbn[nv + i] = inv_n * vw * vw * w->e[nv + i];
  for (int k = S - 1; k >= 0 && st == PHYS_OK; k--) {
    phys_rollout_load_state(m, d, w->rec + (size_t)k * w->nrec);
    st = step_back_guarded(m, d, t, w, m->residual ? gw : NULL);
    if (gtheta)
      for (int i = 0; i < nt; i++) gtheta[i] += w->tb[i];
    memcpy(w->xbn, w->xb, sizeof(double) * (size_t)w->n2);
  }
  return st;
}

static void work_free(resWork* w) {
  free(w->rec), free(w->xb), free(w->xbn), free(w->tb), free(w->lam), free(w->e), free(w->r);
}

static int work_alloc(resWork* w, const physModel* m, const physParamTable* t, int S) {
  memset(w, 0, sizeof(*w));
  w->S = S, w->n2 = 2 * m->nv, w->nrec = (int)phys_rollout_record_size(m);
  w->rec = malloc(sizeof(double) * (size_t)w->nrec * (size_t)(S + 1));
  w->xb = malloc(sizeof(double) * (size_t)w->n2);
  w->xbn = malloc(sizeof(double) * (size_t)w->n2);
  w->tb = calloc((size_t)(t ? t->ntheta : 0) + 1, sizeof(double));
  w->lam = malloc(sizeof(double) * (size_t)m->nv);
  w->e = malloc(sizeof(double) * (size_t)w->n2);
  w->r = malloc(sizeof(double) * (size_t)m->nv);
  if (w->rec && w->xb && w->xbn && w->tb && w->lam && w->e && w->r) return 1;
  work_free(w);
  return 0;
}

physStatus phys_res_loss(physModel* m, physData* d, const physParamTable* t, const physDataset* ds,
                         const physResTrainOptions* o, double* loss, double* gtheta, double* gw) {
  int nt = t ? t->ntheta : 0, ntr = 0;
  const physMlp* n = m->residual;
  if (gtheta) memset(gtheta, 0, sizeof(double) * (size_t)nt);
  if (gw && n) memset(gw, 0, sizeof(double) * (size_t)n->nparam);
  for (int k = 0; k < ds->ntraj; k++) ntr += ds->traj[k].T - 1;
  *loss = 0;
  if (ntr <= 0) return PHYS_ERR_SIZE;
  if (m->na > 0) return PHYS_ERR_MODEL;   // (its records' adjoints are (q, v): activations not carried yet)
  resWork w;
  if (!work_alloc(&w, m, t, o->substeps > 0 ? o->substeps : 1)) return PHYS_ERR_NOMEM;
  double vw = o->vel_weight >= 0 ? o->vel_weight : ds->dt_obs;
  physStatus st = PHYS_OK;
  for (int k = 0; k < ds->ntraj && st == PHYS_OK; k++)
    for (int s = 0; s + 1 < ds->traj[k].T && st == PHYS_OK; s++)
      st = transition(m, d, t, ds->traj + k, s, 1.0 / ntr, o, vw, &w, loss, gtheta, n ? gw : NULL);
  if (n && o->reg_w > 0) {
    double s2 = 0;
    for (int i = 0; i < n->nparam; i++) s2 += n->w[i] * n->w[i];
    *loss += o->reg_w * s2;
    if (gw)
      for (int i = 0; i < n->nparam; i++) gw[i] += 2 * o->reg_w * n->w[i];
  }
  work_free(&w);
  return st;
}

// one Adam update of x (n) with gradient g, moments mo, ve, step lr, iteration it (1-based); bounds (NULL: none)
static void adam_update(double* x, const double* g, double* mo, double* ve, int n, double lr, int it,
                        const double* lo, const double* hi) {
  const double b1 = 0.9, b2 = 0.999, eps = 1e-8;
  double c1 = 1 - pow(b1, it), c2 = 1 - pow(b2, it);
  for (int i = 0; i < n; i++) {
    mo[i] = b1 * mo[i] + (1 - b1) * g[i];
    ve[i] = b2 * ve[i] + (1 - b2) * g[i] * g[i];
    x[i] -= lr * (mo[i] / c1) / (sqrt(ve[i] / c2) + eps);
    if (lo && x[i] < lo[i]) x[i] = lo[i];
    if (hi && x[i] > hi[i]) x[i] = hi[i];
  }
}

// a loss of this file with its data (ds and, for the violation loss, the weights)
typedef struct lossCtx_ {
  const physDataset* ds;
  const physViolationWeights* vw;   // NULL: the one-step loss
} lossCtx;

static physStatus eval_loss(physModel* m, physData* d, const physParamTable* t, const lossCtx* c,
                            const physResTrainOptions* o, double* loss, double* gt, double* gw) {
  return c->vw ? phys_res_violation_loss(m, d, t, c->ds, c->vw, o, loss, gt, gw)
               : phys_res_loss(m, d, t, c->ds, o, loss, gt, gw);
}

// Adam on the loss of c from theta and m's weights (phys_res_train's contract)
static physStatus adam_loop(physModel* m, const physParamTable* t, double* theta, const double* lower,
                            const double* upper, const lossCtx* c, const physResTrainOptions* o, double* hist,
                            physLog* log) {
  int nt = t ? t->ntheta : 0, nw = m->residual ? m->residual->nparam : 0;
  for (int i = 0; t && i < t->n; i++)
    if (phys_param_is_input(t->param[i].kind))
      return phys_error(log, PHYS_ERR_ARG, "residual training: input parameters (delay, inputgain, inputbias) are not supported");
  if (m->opt.contact == PHYS_CONTACT_PENALTY)
    return phys_error(log, PHYS_ERR_ARG, "residual training: contact penalty is not supported (lcp, cone, ccp)");
  if (nt > 0 && phys_param_set(t, m, theta) != PHYS_OK)
    return phys_error(log, PHYS_ERR_VALUE, "residual training: the start parameters are not valid");
  physData* d = phys_make_data(m);
  double* buf = calloc(3 * (size_t)(nt + nw) + 2, sizeof(double));
  if (!d || !buf) {
    phys_free_data(d);
    free(buf);
    return phys_error(log, PHYS_ERR_NOMEM, "residual training: out of memory");
  }
  double *g = buf, *mo = buf + nt + nw, *ve = buf + 2 * (size_t)(nt + nw);
  double loss = 0;
  physStatus st = PHYS_OK;
  for (int it = 0; it <= o->iters && st == PHYS_OK; it++) {
    st = eval_loss(m, d, t, c, o, &loss, nt ? g : NULL, nw ? g + nt : NULL);
    if (st != PHYS_OK) break;
    if (hist) hist[it] = loss;
    if (o->verbose && (it % 10 == 0 || it == o->iters)) fprintf(stderr, "physid: train: iteration %d loss %.9g\n", it, loss);
    if (it == o->iters) break;
    if (nt) {
      adam_update(theta, g, mo, ve, nt, o->lr_theta, it + 1, lower, upper);
      if (phys_param_set(t, m, theta) != PHYS_OK) st = PHYS_ERR_VALUE;
    }
    if (nw) adam_update(m->residual->w, g + nt, mo + nt, ve + nt, nw, o->lr, it + 1, NULL, NULL);
  }
  if (st != PHYS_OK) phys_error(log, st, "residual training: the loss failed at theta/weights of an iteration (status %d)", (int)st);
  phys_free_data(d);
  free(buf);
  return st;
}

physStatus phys_res_train(physModel* m, const physParamTable* t, double* theta, const double* lower,
                          const double* upper, const physDataset* ds, const physResTrainOptions* o, double* hist,
                          physLog* log) {
  lossCtx c = {ds, NULL};
  return adam_loop(m, t, theta, lower, upper, &c, o, hist, log);
}

//---------------------------------------------------------------------------------------------------------
// CCN-R

void phys_violation_residual_force(const physModel* m, physData* d, const double* Mt, double* F) {
  if (!m->residual) return;
  int nv = m->nv;
  size_t mark = phys_stack_mark(d);
  double* r = phys_stack_alloc(d, (size_t)nv);
  phys_residual_acc(m, d, r);
  for (int i = 0; i < nv; i++)
    for (int k = 0; k < nv; k++) F[i] -= Mt[(size_t)i * nv + k] * r[k];
  phys_stack_free(d, mark);
}

// gw += (dr/dw)' g at d's state: the network's force -M~ r in F moves r_pred by -dt L' r in the energy form
// (r_pred = L^-1 (dt F - J'lambda), M~ = L L' as the violation loss's qM + dt b), so g = -dt L rp; by -dt P r
// with the velocity metric W (r_pred = P M~^-1 (dt F - J'lambda), P = sqrt(W)), so g = -dt P rp
static physStatus violation_weights(const physModel* m, physData* d, double dt, const double* W, const double* rp,
                                    double* gw) {
  int nv = m->nv;
  size_t mark = phys_stack_mark(d);
  double* L = phys_stack_alloc(d, (size_t)nv * nv);
  double* g = phys_stack_alloc(d, (size_t)nv);
  phys_kinematics(m, d);
  if (W) {
    for (int i = 0; i < nv; i++) g[i] = -dt * sqrt(W[i]) * rp[i];
    phys_residual_vjp(m, d, g, NULL, NULL, gw);
    phys_stack_free(d, mark);
    return PHYS_OK;
  }
  int implicit = !(m->opt.disableflags & PHYS_DSBL_EULERDAMP);
  phys_crb(m, d);
  memcpy(L, d->qM, sizeof(double) * (size_t)nv * nv);
  for (int i = 0; i < nv; i++) L[(size_t)i * nv + i] += implicit ? dt * m->dof_damping[i] : 0;
  if (phys_chol_factor(L, nv, 0) != nv) return PHYS_ERR_NUMERIC;
  for (int i = 0; i < nv; i++) {
    double s = 0;
    for (int k = 0; k <= i; k++) s += L[(size_t)i * nv + k] * rp[k];
    g[i] = -dt * s;
  }
  phys_residual_vjp(m, d, g, NULL, NULL, gw);
  phys_stack_free(d, mark);
  return PHYS_OK;
}

static physStatus violation_weights_guarded(const physModel* m, physData* d, double dt, const double* W,
                                            const double* rp, double* gw) {
  PHYS_ARENA_CALL(d, "residual training: violation weights", violation_weights(m, d, dt, W, rp, gw));
}

physStatus phys_res_violation_loss(physModel* m, physData* d, const physParamTable* t, const physDataset* ds,
                                   const physViolationWeights* vw, const physResTrainOptions* o, double* loss,
                                   double* gtheta, double* gw) {
  int nv = m->nv, nt = t ? t->ntheta : 0, ntr = 0;
  const physMlp* n = m->residual;
  for (int k = 0; k < ds->ntraj; k++) ntr += ds->traj[k].T - 1;
  *loss = 0;
  if (gtheta) memset(gtheta, 0, sizeof(double) * (size_t)nt);
  if (gw && n) memset(gw, 0, sizeof(double) * (size_t)n->nparam);
  if (ntr <= 0) return PHYS_ERR_SIZE;
  if (m->na > 0) return PHYS_ERR_MODEL;   // (as phys_res_loss)
  double* r = malloc(sizeof(double) * (size_t)(nv + 2));
  double* J = malloc(sizeof(double) * (size_t)(nv + 2) * (size_t)(nt + 1));
  resWork w;
  if (!r || !J || !work_alloc(&w, m, t, 1)) {
    free(r), free(J);
    return PHYS_ERR_NOMEM;
  }
  double inv_n = 1.0 / ntr, dt = ds->dt_obs;
  physViolationWeights vwe = *vw;
  vwe.envelope = 1;   // only J'r is used, the same gradient without the impulses' derivative (violation.h)
  physStatus st = PHYS_OK;
  for (int k = 0; k < ds->ntraj && st == PHYS_OK; k++) {
    const physTrajectory* tr = ds->traj + k;
    for (int s = 0; s + 1 < tr->T && st == PHYS_OK; s++) {
      set_sample(m, d, tr, s + 1);
      for (int i = 0; i < m->nu; i++) d->ctrl[i] = tr->ctrl ? tr->ctrl[(size_t)s * m->nu + i] : 0;
      for (int i = 0; i < nv; i++) d->qfrc_applied[i] = tr->qfrc ? tr->qfrc[(size_t)s * nv + i] : 0;
      st = phys_violation_residuals(m, d, t, tr->qvel + (size_t)s * nv, dt, &vwe, r, gtheta ? J : NULL, NULL, NULL);
      if (st != PHYS_OK) break;
      double l = 0;
      for (int i = 0; i < nv + 2; i++) l += r[i] * r[i];
      *loss += 0.5 * inv_n * l;
      for (int j = 0; gtheta && j < nt; j++)
        for (int i = 0; i < nv + 2; i++) gtheta[j] += inv_n * J[(size_t)i * nt + j] * r[i];
      if (n && gw) {
        for (int i = 0; i < nv; i++) r[i] *= inv_n;
        st = violation_weights_guarded(m, d, dt, vw->metric, r, gw);
      }
      if (st == PHYS_OK && n && o->reg_out > 0) {
        double r2;
        st = out_norm_guarded(m, d, o->reg_out * inv_n, &w, gw, &r2);
        *loss += o->reg_out * inv_n * r2;
      }
    }
  }
  if (n && o->reg_w > 0) {
    double s2 = 0;
    for (int i = 0; i < n->nparam; i++) s2 += n->w[i] * n->w[i];
    *loss += o->reg_w * s2;
    if (gw)
      for (int i = 0; i < n->nparam; i++) gw[i] += 2 * o->reg_w * n->w[i];
  }
  free(r), free(J);
  work_free(&w);
  return st;
}

// 1 if kind enters the violation loss through the smooth force (params.h's force kinds)
static int force_kind(int kind) {
  return kind != PHYS_PAR_FRICTION && kind != PHYS_PAR_SIZE && kind != PHYS_PAR_VERTICES && kind != PHYS_PAR_HEIGHT &&
         !phys_param_is_angular(kind);
}

physStatus phys_res_train_violation(physModel* m, const physParamTable* t, double* theta, const double* lower,
                                    const double* upper, const physDataset* ds, const physViolationWeights* vw,
                                    const physResTrainOptions* o, double* hist, physLog* log) {
  physParamTable none = {0};
  physStatus st = phys_violation_check(m, t ? t : &none, log);
  if (st != PHYS_OK) return st;
  for (int i = 0; m->residual && t && i < t->n; i++)
    if (force_kind(t->param[i].kind))
      return phys_error(log, PHYS_ERR_ARG, "CCN-R: parameter '%s': with a residual network only friction and size "
                        "(the network's force M~ r has no theta derivative in the violation loss)", t->param[i].name);
  lossCtx c = {ds, vw};
  return adam_loop(m, t, theta, lower, upper, &c, o, hist, log);
}
