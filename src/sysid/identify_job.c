// identify_job.c - phys_identify (include/physid/identify.h): `physid identify`'s sequence of library calls for
// one job (tools/cmd_identify.c runs the same calls with its options, files and printing around them).
#include <stdlib.h>
#include <string.h>

#include "params.h"
#include "physid/identify.h"
#include "sysid.h"

static const char* const g_loss_kind[] = {"onestep", "kstep", "rollout", "violation"};

// the physLossKind of a name, -1 if none
static int loss_from_name(const char* name) {
  for (int i = 0; i < 4; i++)
    if (!strcmp(name, g_loss_kind[i])) return i;
  return -1;
}

// identify's options: the library defaults, the job's settings, then the data-dependent defaults for the rest
static void job_options(physFitOptions* opt, const physModel* m, const physDataset* ds, const physIdentifyJob* job,
                        int loss) {
  phys_fit_defaults(opt);
  if (loss >= 0) opt->loss = loss;
  if (job->horizon > 0) opt->horizon = job->horizon;
  if (job->max_iter > 0) opt->max_iter = job->max_iter;
  opt->verbose = job->verbose;
  unsigned given = (loss >= 0 ? PHYS_GIVEN_LOSS : 0) | (job->horizon > 0 ? PHYS_GIVEN_HORIZON : 0);
  if (opt->loss == PHYS_LOSS_VIOLATION) given |= PHYS_GIVEN_SUBSTEPS;   // one transition per sample interval
  char why[1600];
  phys_fit_data_defaults(opt, m, ds, given, PHYS_VEL_AUTO, why, sizeof why);
  phys_fit_start_default(opt, m, ds, PHYS_START_AUTO, PHYS_VEL_AUTO, why, sizeof why);
}

// res from the fit's result: theta, theta0 and the default method's standard errors in one allocation
static physStatus copy_result(physIdentifyResult* out, const physFitResult* res, const double* theta0,
                              const physFitOptions* opt, physLog* log) {
  size_t n = (size_t)res->ntheta;
  out->theta = malloc(sizeof(double) * (3 * n + 1));
  if (!out->theta) return phys_error(log, PHYS_ERR_NOMEM, "phys_identify: out of memory");
  out->ntheta = res->ntheta;
  out->theta0 = out->theta + n;
  out->stderr_ = out->theta + 2 * n;
  memcpy(out->theta, res->theta, sizeof(double) * n);
  memcpy(out->theta0, theta0, sizeof(double) * n);
  memcpy(out->stderr_, res->method == PHYS_SE_CLUSTER ? res->se_cluster : res->stderr_, sizeof(double) * n);
  out->loss0 = res->loss0;
  out->loss = res->loss;
  out->nres = res->nres;
  out->iterations = res->iterations;
  out->stop = phys_fit_stop_name(res->stop);
  out->loss_kind = g_loss_kind[opt->loss];
  return PHYS_OK;
}

physStatus phys_identify(physModel* m, const physIdentifyJob* job, physIdentifyResult* res, physLog* log) {
  if (res) memset(res, 0, sizeof *res);
  if (!m || !job || !res || job->ndata < 1 || !job->data || job->nparam < 1 || !job->params)
    return phys_error(log, PHYS_ERR_ARG, "phys_identify: a model, data and parameters are needed");
  int loss = job->loss ? loss_from_name(job->loss) : -1;
  if (job->loss && loss < 0)
    return phys_error(log, PHYS_ERR_ARG, "phys_identify: unknown loss '%s' (onestep|kstep|rollout|violation)",
                      job->loss);
  physParamTable t;
  physStatus s = phys_param_table_build(&t, m, job->params, job->nparam, log);
  physDataset ds = {0};
  physFitResult fit = {0};
  double* theta0 = NULL;
  if (s == PHYS_OK && !(theta0 = malloc(sizeof(double) * (3 * (size_t)t.ntheta + 1))))
    s = phys_error(log, PHYS_ERR_NOMEM, "phys_identify: out of memory");
  if (s == PHYS_OK) {
    double *lower = theta0 + t.ntheta, *upper = lower + t.ntheta;
    if (job->theta0) memcpy(theta0, job->theta0, sizeof(double) * (size_t)t.ntheta);
    else phys_param_get(&t, m, theta0);
    phys_param_bounds(&t, lower, upper);
    physDataOptions dopt = {0};
    s = phys_dataset_load(&ds, m, job->data, job->ndata, &dopt, log);
    physFitOptions opt;
    if (s == PHYS_OK) {
      job_options(&opt, m, &ds, job, loss);
      s = phys_fit(m, &t, theta0, lower, upper, &ds, &opt, &fit, log);
    }
    if (s == PHYS_OK) s = copy_result(res, &fit, theta0, &opt, log);
  }
  phys_fit_result_free(&fit);
  phys_dataset_free(&ds);
  free(theta0);
  phys_param_table_free(&t);
  return s;
}

void phys_identify_result_free(physIdentifyResult* res) {
  if (!res) return;
  free(res->theta);
  memset(res, 0, sizeof *res);
}
