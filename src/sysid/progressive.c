// progressive.c - paper 002's progressive training (Alg. 1; issue 16 item 4): Adam epochs with the implicit
// integrator at a large step and a large learning rate, the step halved whenever the validation loss stops
// falling until it reaches the model's own, then the learning rate halved until it falls below lr_min; then the
// same with semi-implicit Euler at the model's step from the initial learning rate again, halving it on each rise
// of the validation loss (sysid.h phys_fit_progressive has the interface).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "params.h"
#include "physid.h"
#include "sysid.h"

// 0.5 |r|^2 of ds at theta under opt (the fit's loss without a prior), NAN if the simulation failed
static double dataset_loss(physModel* m, const physParamTable* t, const double* theta, const physDataset* ds,
                           const physFitOptions* opt) {
  physLog log = {0};
  int n = phys_fit_nres(m, t, ds, opt, &log);
  if (n <= 0) return NAN;
  double* r = malloc(sizeof(double) * (size_t)n);
  if (!r) return NAN;
  double l = NAN;
  if (phys_fit_residuals(m, t, theta, theta, ds, opt, r, NULL, &log) == PHYS_OK) {
    l = 0;
    for (int i = 0; i < n; i++) l += 0.5 * r[i] * r[i];
  }
  free(r);
  return l;
}

// one epoch: max_iter Adam iterations from theta (updated to the epoch's best iterate) at integrator integ,
// substeps s and learning rate lr; *train gets the training loss there, the validation loss is returned
static physStatus epoch(physModel* m, const physParamTable* t, double* theta, const double* lower, const double* upper,
                        const physDataset* train, const physDataset* valid, const physFitOptions* base, int integ,
                        int s, double lr, double* tloss, double* vloss, physFitResult* res, physLog* log) {
  physFitOptions o = *base;
  o.optimizer = PHYS_OPT_ADAM;
  o.substeps = s;
  o.lr = lr;
  o.starts = 1;
  o.checkpoint = NULL;
  m->opt.integrator = integ;
  phys_fit_result_free(res);
  physStatus st = phys_fit(m, t, theta, lower, upper, train, &o, res, log);
  if (st != PHYS_OK) return st;
  memcpy(theta, res->theta, sizeof(double) * (size_t)t->ntheta);
  *tloss = res->loss;
  *vloss = dataset_loss(m, t, theta, valid ? valid : train, &o);
  return PHYS_OK;
}

physStatus phys_fit_progressive(physModel* m, const physParamTable* t, const double* theta0, const double* lower,
                                const double* upper, const physDataset* train, const physDataset* valid,
                                const physFitOptions* opt, const physProgressiveOptions* popt, physFitResult* res,
                                physProgressiveEpoch* hist, int* nhist, physLog* log) {
  int nt = t->ntheta, sfinal = opt->substeps, integ0 = m->opt.integrator;
  if (sfinal < 1 || popt->lr0 <= 0 || !(popt->lr_min > 0) || popt->max_epochs < 1 || !(popt->rtol >= 0 && popt->rtol < 1))
    return phys_error(log, PHYS_ERR_ARG, "progressive training: substeps %d, lr %g, lr_min %g, max_epochs %d must be "
                      "positive, rtol %g in [0, 1)", sfinal, popt->lr0, popt->lr_min, popt->max_epochs, popt->rtol);
  if (opt->prior > 0)
    return phys_error(log, PHYS_ERR_ARG, "progressive training: no prior (each epoch starts from the last one's answer)");
  double* theta = malloc(sizeof(double) * (size_t)(nt + 1));
  if (!theta) return phys_error(log, PHYS_ERR_NOMEM, "progressive training: out of memory");
  memcpy(theta, theta0, sizeof(double) * (size_t)nt);
  memset(res, 0, sizeof(*res));
  physStatus st = PHYS_OK;
  int n = 0;
  double prev = INFINITY;
  // stage 1: implicit, substeps 1, 2, 4, ... up to sfinal, then the learning rate halves (Alg. 1 lines 2-11)
  int s = 1;
  double lr = popt->lr0;
  for (int e = 0; e < popt->max_epochs && lr >= popt->lr_min && st == PHYS_OK; e++) {
    double tl, vl;
    st = epoch(m, t, theta, lower, upper, train, valid, opt, PHYS_INT_IMPLICIT, s, lr, &tl, &vl, res, log);
    if (st != PHYS_OK) break;
    if (hist && n < popt->max_epochs * 2) hist[n] = (physProgressiveEpoch){1, s, lr, tl, vl};
    n++;
    if (!(vl < (1 - popt->rtol) * prev)) {
      if (s < sfinal) s = 2 * s < sfinal ? 2 * s : sfinal;
      else lr /= 2;
    }
    prev = vl;
  }
  // stage 2: semi-implicit Euler at the model's step from lr0, halving on each rise (lines 12-20)
  lr = popt->lr0;
  prev = INFINITY;
  for (int e = 0; e < popt->max_epochs && lr >= popt->lr_min && st == PHYS_OK; e++) {
    double tl, vl;
    st = epoch(m, t, theta, lower, upper, train, valid, opt, PHYS_INT_EULER, sfinal, lr, &tl, &vl, res, log);
    if (st != PHYS_OK) break;
    if (hist && n < popt->max_epochs * 2) hist[n] = (physProgressiveEpoch){2, sfinal, lr, tl, vl};
    n++;
    if (!(vl < (1 - popt->rtol) * prev)) lr /= 2;
    prev = vl;
  }
  m->opt.integrator = integ0;
  if (st == PHYS_OK) st = phys_param_set(t, m, theta);
  free(theta);
  if (nhist) *nhist = n;
  return st;
}
