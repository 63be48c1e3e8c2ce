// physid/identify.h - identification of physical parameters from recorded motion (public; issue 18 item 1):
// `physid identify MODEL DATA... --param KIND:NAME...` as one call. The data formats, losses, defaults and the
// statistics are those of the CLI (docs/cli.md, *physid identify*; docs/identification.md): the same library
// calls with the same data-dependent defaults, so a job gives the CLI's numbers for the same settings.
//
//   const char* data[] = {"data/cube_toss"};
//   const char* params[] = {"friction:cube", "restitution:cube"};
//   physIdentifyJob job = {data, 1, params, 2};           // everything else: identify's defaults
//   physIdentifyResult r;
//   if (phys_identify(m, &job, &r, &log) != PHYS_OK) ...   // log.error says what failed
//   ... r.theta[0], r.stderr_[0], r.loss ...;  phys_identify_result_free(&r);
#ifndef PHYSID_IDENTIFY_H
#define PHYSID_IDENTIFY_H

#include "../physid.h"

#ifdef __cplusplus
extern "C" {
#endif

// the settings of one identification; zero (NULL) fields take identify's defaults
typedef struct physIdentifyJob_ {
  const char* const* data;  // data files or folders of them (CSV as `physid simulate` writes, named columns, .npy)
  int ndata;
  const char* const* params;   // parameter specs "KIND:NAME" (physid/params.h; no ":init=" etc. suffixes)
  int nparam;
  const double* theta0;     // start values (ntheta; NULL: the model's)
  const char* loss;         // "onestep", "kstep", "rollout" or "violation" (NULL: from the data, as identify)
  int horizon;              // kstep segment length in samples (0: 10, or 30 with differenced velocities)
  int max_iter;             // optimizer iterations (0: 100)
  int verbose;              // 1: one progress line per iteration on stderr
} physIdentifyJob;

// what a fit found (arrays allocated by phys_identify; free with phys_identify_result_free)
typedef struct physIdentifyResult_ {
  int ntheta;
  double* theta;            // ntheta: the identified values (also written into the model)
  double* theta0;           // ntheta: the start values
  double* stderr_;          // ntheta: standard errors of identify's default method (cluster-robust by trajectory
                            // with 2 or more trajectories, else iid)
  double loss0, loss;       // the loss (1/2 sum of squared weighted residuals) at theta0 and at theta
  int nres;                 // residuals
  int iterations;           // optimizer iterations
  const char* stop;         // why it stopped: "converged", "stalled", "max_iter", "sim_failed"
  const char* loss_kind;    // the loss used ("onestep", ...)
} physIdentifyResult;

// fit the job's parameters of m to its data; m holds the identified values on return. Errors with log->error:
// PHYS_ERR_ARG (no data or parameters, an unknown loss or spec), the data loader's (file:line), the fit's
physStatus phys_identify(physModel* m, const physIdentifyJob* job, physIdentifyResult* res, physLog* log);
void phys_identify_result_free(physIdentifyResult* res);

#ifdef __cplusplus
}
#endif
#endif  // PHYSID_IDENTIFY_H
