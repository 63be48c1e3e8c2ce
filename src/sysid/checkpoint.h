// checkpoint.h - the fit's resumable state on disk: phys_fit (fit.c) writes it after every
// iteration when physFitOptions.checkpoint is set and continues from it with physFitOptions.resume.
//
// Layer: sysid (fit.c fills and restores the state; this file only stores it, checks it and hashes the inputs).
#ifndef PHYS_CHECKPOINT_H
#define PHYS_CHECKPOINT_H

#include <stdint.h>

#include "params.h"
#include "physid.h"
#include "sysid.h"

#define PHYS_CKPT_VERSION 2   // 2: best_stop
#define PHYS_CKPT_NKEY 4   // the hashes of what must match: model, data, parameters, options

// an optimizer's scalar state after an iteration (fit.c's run keeps it so; the arrays are beside it)
typedef struct physOptState_ {
  int iter, nhist;          // the optimizer's counter, history rows recorded
  double loss0, cur;        // loss at the start's theta0; LM: the loss at theta, L-BFGS-B, Adam: the best loss
  double lambda, nu;        // LM: damping and its growth factor
  double f;                 // L-BFGS-B: the loss at theta, and setulb's reverse-communication state
  char task[60], csave[60];
  int lsave[4], isave[44];
  double dsave[29];
  double b1t, b2t, lastbest;   // Adam: b1^t, b2^t, the best loss at the last improvement by tol,
  int since;                // and the iterations since then
} physOptState;

// everything a fit needs to continue after an iteration as if it had not stopped. The arrays belong to the
// caller (fit.c's work arrays); the sizes say how long they are and must match on load.
typedef struct physFitState_ {
  uint64_t key[PHYS_CKPT_NKEY];   // phys_ckpt_key of the fit's inputs
  // sizes
  int ntheta, max_iter, optimizer, nwa, niwa;
  // multi-start: the start in progress, the draw generator after its draw, the best finished start
  int start;
  uint64_t rng[4];
  int best_start, best_iterations;   // best_iterations -1: no start finished yet
  int best_stop;                     // physFitStop of the best finished start
  double best_loss, best_loss0;
  double *best_theta, *best_loss_hist, *best_theta_hist;   // ntheta, max_iter+1, (max_iter+1) x ntheta
  // the start in progress: scalars, history (run.nhist rows), theta and the optimizers' arrays
  physOptState run;
  double *theta, *loss_hist, *theta_hist;
  double *D, *H, *g;        // ntheta (LM scaling, Adam's scale), ntheta^2, ntheta (L-BFGS-B's gradient too)
  double *wa, *best;        // L-BFGS-B's work array (nwa), the best iterate (L-BFGS-B, Adam: ntheta)
  int* iwa;                 // L-BFGS-B (niwa)
  double *mom, *vel;        // Adam's moments (ntheta)
  // counted step warnings and times so far
  int nsimwarn;
  char simwarn[256];
  double time_forward, time_gradient;
} physFitState;

// the hashes (64-bit FNV-1a) of what a resume must match: [0] the model as phys_fit receives it (sizes,
// options, every array: also the values of the identified parameters it holds), [1] the data (samples, observed coordinates, dt), [2] the parameter table,
// theta0 and the bounds, [3] every fit option that changes the result (not verbose, threads, checkpoint)
void phys_ckpt_key(uint64_t key[PHYS_CKPT_NKEY], const physModel* m, const physParamTable* t,
                   const double* theta0, const double* lo, const double* hi, const physDataset* ds,
                   const physFitOptions* opt);

// refuse a target that a checkpoint may not replace: PHYS_ERR_IO unless path is a new name or a regular
// file (not a symlink) that is empty or a physid checkpoint (so a model or data file is never overwritten),
// and its temporary (below) can be created in its folder (created and removed: a missing or read-only folder
// is an error before the fit)
physStatus phys_ckpt_check_target(const char* path, physLog* log);

// write st to path atomically: PATH.physid-tmp beside it (a leftover regular file of that name is
// replaced), fsync, rename over path, fsync the folder; a kill at any instant leaves the old or the new
// file. PHYS_ERR_IO with the file and the system's reason.
physStatus phys_ckpt_save(const char* path, const physFitState* st, physLog* log);

// read path into st, whose sizes, key and arrays the caller has set: *found 0 (PHYS_OK) if path does not
// exist; PHYS_ERR_PARSE for a file that is not a checkpoint, is truncated or corrupt (checksum), of another
// version or byte order; PHYS_ERR_ARG when it was written for another fit (the message names what differs:
// model, data, parameters, options). st is modified only on success.
physStatus phys_ckpt_load(const char* path, physFitState* st, int* found, physLog* log);

#endif  // PHYS_CHECKPOINT_H
