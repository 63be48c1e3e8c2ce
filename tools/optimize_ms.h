// optimize_ms.h - `physid optimize` with "method": "ms" (multiple shooting, src/control/ms.h): its options,
// its solve with progress lines, its fields of the result JSON. cmd_optimize.c (opt_plan) dispatches here.
#ifndef PHYS_OPTIMIZE_MS_H
#define PHYS_OPTIMIZE_MS_H

#include <cjson/cJSON.h>

#include "ms.h"
#include "physid.h"

// the "options" object of method ms (at JSON path "options" of task file file): maxiter (1..100000, into
// *maxiter), tol (Ipopt's tol, into *tol), constr_tol, best_defect (0..1), print_level (0..12), history
// (1..1000), init ("rollout" or "ddp"), hessian ("lbfgs" or "gauss-newton") into opt, complementarity (true or
// false: the complementarity-aware constraint Jacobian, into *aware); 0 and a message naming the path on a bad or
// unknown key
int opt_ms_options(const char* file, const cJSON* o, physMsOptions* opt, int* maxiter, double* tol, int* aware);

// plan p from d's state by multiple shooting (progress lines on stderr unless quiet): phys_ms_solve's status
// and message; its result into res (may be NULL; res->defect_iter the caller's array of p->maxiter + 1 or NULL)
physStatus opt_ms_plan(const physMsOptions* opt, physMsResult* res, physControlProblem* p, physData* d,
                       physLog* log);
// the summary line of a solve on stderr (unless quiet)
void opt_ms_summary(const physControlProblem* p, const physMsResult* res);

// the result JSON's fields of a multiple-shooting solve: Ipopt's status, the objective, the max defect per
// iteration and at the solution, the steps the last aware Jacobian relabelled, the drift of the rollout, the
// iteration returned, the total time
void opt_ms_result(cJSON* r, const physControlProblem* p, const physMsResult* res);

#endif  // PHYS_OPTIMIZE_MS_H
