// sysid.h - system identification (DESIGN.md section 5): recorded trajectories (dataset.c), the
// fit of physical parameters theta (the parameter table of src/grad/params.h) to them by losses on
// simulated predictions with analytical residual Jacobians (fit.c), and the fit's statistics.
//
// Layer: sysid uses grad (params.h, grad.h, rollout.h), step and model; tools/cmd_identify.c drives it.
#ifndef PHYS_SYSID_H
#define PHYS_SYSID_H

#include <stdint.h>

#include "params.h"
#include "physid.h"

//---------------------------------------------------------------------------------------------------------
// data (dataset.c)

// one recorded trajectory: T samples of the model's full state, in the model's layout
typedef struct physTrajectory_ {
  char source[512];         // file it came from
  int T;                    // samples
  double* time;             // T times (s), increasing
  double* qpos;             // T x nq (quaternions normalized on load)
  double* qvel;             // T x nv (a free joint: linear world, angular body, as MuJoCo)
  int has_qvel;             // 0 if the file had no velocity columns (then qvel is differenced positions)
  double* ctrl;             // T x nu recorded controls (NULL: none); sample k's holds from t_k to t_{k+1}
  double* qfrc;             // T x nv recorded applied joint forces (NULL: none), held likewise
  double* sens;             // T x nsens recorded sensor values (columns sensor:NAME[:k]; NULL: none), each at its
                            // sample's state as d->sensordata (0 where a value was not recorded)
  double* act;              // T x na recorded activations (columns act0..act{na-1}, `physid simulate`'s layout;
                            // NULL: none, the fit then starts every segment at act 0; issue 15 item 2)
} physTrajectory;

// a set of trajectories of one model; which state coordinates were observed (tangent layout, grad.h)
typedef struct physDataset_ {
  int ntraj;
  physTrajectory* traj;
  int nq, nv;
  unsigned char* obs_q;     // nv flags: tangent coordinate i of q observed (a free joint: 3 + 3, a ball 3)
  unsigned char* obs_v;     // nv flags: velocity coordinate i observed
  double dt_obs;            // median spacing of the samples (s)
  int has_ctrl, has_qfrc;   // every trajectory carries controls / joint forces (all files of a set agree)
  int nu;                   // the model's actuators (columns of traj[k].ctrl)
  int nsens;                // the model's sensor values (nsensordata: columns of traj[k].sens)
  unsigned char* obs_s;     // nsens flags: sensor value observed (NULL without sensor columns)
} physDataset;

typedef struct physDataOptions_ {
  const char* const* map;   // nmap column mappings "COLUMN=q:JOINT[:i]" or "COLUMN=v:JOINT[:i]", may be NULL
  int nmap;
  const char* observe;      // NULL (all columns present) or a comma list "q:JOINT,v:JOINT,...,sensor:NAME,..."
                            // restricting them (dataset.c: with sensor items the state columns stay as start
                            // values but are observed only when listed)
  int max_files;            // 0: all files of a folder; else the first max_files in name order
  int first_file;           // skip this many files of a folder first (name order; for held-out splits)
} physDataOptions;

// load trajectories from files (CSV as `physid simulate` writes: t,q0..,v0..; CSV with named columns, e.g.
// the toss files px,py,pz,qw,qx,qy,qz,vx,vy,vz,wx_body,wy_body,wz_body[,theta,theta_dot]; .npy arrays of
// shape (T, 1+nq+nv)) or folders of them (files in name order). Errors (PHYS_ERR_IO, PHYS_ERR_PARSE,
// PHYS_ERR_VALUE, PHYS_ERR_SIZE, PHYS_ERR_ARG with file:line:column in log): unreadable file, empty folder,
// columns that do not match the model (the message lists what was expected), NaN or infinite values, times
// not increasing, files observing different coordinates, bad map/observe entries. The column naming rules,
// the observe syntax and how absent coordinates are filled are in dataset.c's header comment.
// first_file and max_files apply to the list of all files of all paths, in order.
// ds is zeroed first; free with phys_dataset_free (also after a failed load).
physStatus phys_dataset_load(physDataset* ds, const physModel* m, const char* const* paths, int npath,
                             const physDataOptions* opt, physLog* log);
void phys_dataset_free(physDataset* ds);
// 1 if a folder entry's name is one phys_dataset_load reads from a folder: not hidden, ending in .csv or .npy
int phys_dataset_file_name(const char* name);
// a velocity difference over dt of a continuous joint (hinge without limits) recorded wrapped into (-pi, pi]:
// vdiff[dof] = wrap(vdiff[dof] dt) / dt for each such joint (nv values in place)
void phys_wrap_continuous(double* vdiff, const physModel* m, double dt);

//---------------------------------------------------------------------------------------------------------
// the fit (fit.c)

typedef enum physLossKind_ {
  PHYS_LOSS_ONESTEP = 0,    // x_{k+1} vs step^s(x_k) from every observed sample (paper 000)
  PHYS_LOSS_KSTEP,          // multiple shooting: from every sample, `horizon` observations ahead
  PHYS_LOSS_ROLLOUT,        // one rollout per trajectory from its first sample (recurrent, paper 002)
  PHYS_LOSS_VIOLATION       // paper 004's violation-based implicit loss per transition (violation.h); no simulation
} physLossKind;

typedef enum physOptimizer_ {
  PHYS_OPT_LM = 0,          // bounded Levenberg-Marquardt on the residuals (default)
  PHYS_OPT_LBFGSB,          // L-BFGS-B on the summed loss (liblbfgsb, Nocedal and Morales 3.0)
  PHYS_OPT_ADAM             // Adam on the summed loss
} physOptimizer;

// a fit's evaluations shared among processes (issue 21; the CLI's MPI layer, tools/mpi.c, provides one): every
// process runs the same fit on the whole dataset; each simulates a contiguous range of trajectories (split by
// residual rows) and sums its trajectories' r'r, J'r and J'J; the processes exchange these sums as nodes of a
// binary tree over the trajectories that does not depend on the number of processes (fit.c, *Reduction*: at most
// about 2 log2(G) nodes of 1 + p + p^2 numbers per process and evaluation), so every process holds the same
// loss, gradient and normal equations and takes every decision of the fit on the same numbers: the result is that
// of one process, bit for bit, for any number of processes and threads. phys_fit_residuals alone exchanges rows
// (it returns them all). The library itself does not depend on MPI.
typedef struct physFitComm_ {
  int rank, size;           // this process, of size (size 1: nothing is exchanged)
  void* ctx;                // the callbacks' context
  // every process's nbytes bytes of mine, in process order, into all (size * nbytes); 0 on failure
  int (*allgather)(void* ctx, const void* mine, void* all, size_t nbytes);
  // buf holds doubles: process p's part is [displ[p], displ[p] + count[p]); each process has filled its own part;
  // afterwards every process holds every part, in place; 0 on failure
  int (*allgatherv)(void* ctx, double* buf, const size_t* count, const size_t* displ);
} physFitComm;

typedef struct physFitOptions_ {
  int loss;                 // physLossKind
  int horizon;              // observations per shooting segment (KSTEP; default 10)
  int substeps;             // simulation steps per observation interval (default 1; dt = dt_obs/substeps)
  double w_pos;             // weight of position residuals (m^-1; default 1/1e-3)
  double w_rot;             // weight of orientation residuals (quaternion log, rad^-1; default 1/1e-2)
  double w_vel;             // weight of velocity residuals (s/m; default 1/1e-1; 0 ignores velocities)
  double prior;             // weight of the prior (theta - theta0)' (theta - theta0) (default 0)
  double viol_comp, viol_diss, viol_pen;   // VIOLATION's weights (violation.h; defaults 1, 0.1, 100 since s29)
  int viol_envelope;        // VIOLATION: 1 = LM's Jacobian holds lambda* fixed (violation.h weights.envelope); 0 default
  int viol_metric;          // VIOLATION: 0 the dynamics term in energy units (paper 004); 1 (default since s29) the
                            // velocity error weighted by the start model's fixed diag(M~) at qpos0 (violation.h)
  int viol_resolve;         // VIOLATION: 0 (default) LM's Jacobian at an accepted trial point takes the trial's inner
                            // solutions (phys_violation_residuals_sol: the same fit, bit for bit, without solving
                            // every transition twice); 1 solves them again (tests, benchmarks)
  int optimizer;            // physOptimizer
  int max_iter;             // iterations (default 100; Adam default 500)
  double tol;               // relative loss decrease that ends the fit (default 1e-10)
  int stall_iters;          // LM: stop ("stalled") when the loss fell by less than stall_tol (relative) over
  double stall_tol;         // stall_iters iterations (default 5 and 1e-6; stall_iters 0: never)
  double lr;                // Adam's learning rate (default 1e-2, in units of each bound's width or theta)
  int starts;               // multi-start: the given theta0 then starts-1 draws in the bounds (default 1)
  uint64_t seed;            // multi-start draws (default 1)
  int verbose;              // 1: one progress line per iteration on stderr
  int threads;              // threads sharing the trajectories (default 1; results bit-identical for any count)
  int fit_start;            // 1: fit each segment's start position and velocity (the dofs observed in position) as
                            // nuisance unknowns tied to the sample, eliminated per segment (fit.c, *Segment start
                            // states*); 0 (default): every segment starts from its recorded sample;
                            // PHYS_FIT_START_STAGED (2): first fits from the recorded samples with the loss and
                            // with onestep (every start of `starts`), then one with the starts fitted from the
                            // better answer (identify's default: the fitted starts alone stop in local minima
                            // behind contact-timing jumps of the kstep loss; fit.c, *Segment start states*)
  const double* ctrl;       // nu controls held during every trajectory (a known push; NULL: zero)
  const physParamTable* inputs;   // phys_fit_predict only: the table whose input kinds (delay, inputgain,
                            // inputbias) transform the recorded inputs (NULL: none; phys_fit uses its own table)
  // resumable fits (checkpoint.h has the format and what must match)
  const char* checkpoint;   // write the optimizer's state to this file after every iteration (NULL: none)
  int resume;               // 1: continue from `checkpoint` if it exists (else start fresh, saying so when
                            // verbose); 0: start fresh and overwrite it
  int (*on_checkpoint)(void* ctx, int start, int iter);   // called after the state of iteration `iter` of
                            // start `start` was written; nonzero ends the fit with PHYS_ERR_ARG (tests: a kill)
  void* on_checkpoint_ctx;
  const physFitComm* comm;  // NULL: one process (above); with size > 1 only rank 0 writes the checkpoint, and with
                            // starts >= size and no checkpoint each start runs whole on one process (the results
                            // gathered; phys_fit_bootstrap spreads its refits so too): the same result
} physFitOptions;

// physFitOptions.fit_start: the staged fit (issue 12; fit.c, *Segment start states*)
#define PHYS_FIT_START_STAGED 2

// defaults above
void phys_fit_defaults(physFitOptions* opt);

// why an optimizer stopped: converged (the loss fell by less than tol in an accepted step, the step no longer
// changes theta, every coordinate held at a bound, or zero loss), stalled (LM: less than stall_tol over
// stall_iters iterations, or lambda beyond 1e30), max_iter reached, or sim_failed (Adam: its next iterate is not
// a model that can be simulated; the result is the best iterate before it, and a warning names the error)
typedef enum physFitStop_ { PHYS_STOP_CONVERGED = 0, PHYS_STOP_STALLED, PHYS_STOP_MAXITER, PHYS_STOP_SIMFAIL } physFitStop;
// "converged", "stalled", "max_iter", "sim_failed"
const char* phys_fit_stop_name(int stop);
// how the uncertainty of theta is estimated (issue 12 item 6; docs/cli.md, *Uncertainty*)
typedef enum physSeMethod_ {
  PHYS_SE_IID = 0,          // s^2 (J'J)^+: residuals independent with one variance (no model error)
  PHYS_SE_CLUSTER,          // cluster-robust sandwich by trajectory, intervals with Student's t, G - 1 dof
  PHYS_SE_BOOTSTRAP         // refits on trajectories resampled with replacement, percentile intervals
} physSeMethod;

typedef struct physFitResult_ {
  int ntheta;
  double* theta;            // ntheta: the best fit
  double* stderr_;          // ntheta: 'iid' standard errors sqrt(diag(s^2 (J'J)^+)), s^2 = 2 loss / (nres - ntheta)
  double* corr;             // ntheta x ntheta correlation matrix of the default method's covariance (row-major)
  int ngroups;              // trajectories with residuals: the clusters G
  double* cov_iid;          // ntheta x ntheta: s^2 (J'J)^+
  double* cov_cluster;      // ntheta x ntheta: G/(G-1) (J'J)^+ (sum_g J_g' r_g r_g' J_g) (J'J)^+ (NaN if G < 2)
  double* se_cluster;       // ntheta: sqrt(diag(cov_cluster))
  int method;               // physSeMethod of the default intervals: CLUSTER when G >= 2, else IID
  // phys_fit_bootstrap's (nboot = 0 without it)
  int nboot, nboot_ok;      // resamples asked for, refits that succeeded
  double* boot_theta;       // nboot_ok x ntheta refitted values
  double* se_boot;          // ntheta: their standard deviations
  double* cov_boot;         // ntheta x ntheta: their covariance
  double loss0, loss;       // loss at theta0 (of the best start) and at the fit: 0.5 sum r^2
  int nres;                 // residuals
  int iterations;           // of the best start
  int start;                // index of the best start
  int stop;                 // why the best start stopped (physFitStop)
  int niter_hist;           // entries of the histories
  double* loss_hist;        // loss per iteration of the best start (max_iter + 1)
  double* theta_hist;       // theta per iteration ((max_iter + 1) x ntheta)
  int nnull;                // unidentifiable directions: eigenvectors of J'J with eigenvalue < 1e-8 * max
  double* null_dirs;        // nnull x ntheta
  double time_forward, time_gradient;   // CPU s in simulation and in derivatives (summed: threads, processes)
  int resumed;              // 1: the fit continued from a checkpoint written after iteration resumed_iter
  int resumed_start, resumed_iter;      // of start resumed_start
  // a staged fit (opt->fit_start PHYS_FIT_START_STAGED): the fields above are its last stage's (stage 3: the segment
  // starts fitted, one start from an earlier stage's answer; loss0 its loss at theta0 all the same, the times all
  // stages'), these its first two stages'
  // (recorded segment starts; stage 1 opt's loss, stage 2 onestep); stages 1 otherwise (stage_theta NULL)
  int stages;
  int stage_from;           // stage 3 started from the answer of this stage (1 or 2): the one with the lower
                            // stage-3 loss
  double* stage_theta;      // 2 x ntheta: the answers of stages 1 and 2
  double stage_loss0[2], stage_loss[2];   // each one's own loss at theta0 and at its answer
  double stage_fitted[2];   // stage 3's loss (starts fitted) at each answer
  int stage_iterations[2], stage_stop[2], stage_start[2];   // of each one's best start
} physFitResult;

// fit theta (table t, starting at theta0 within [lower, upper]) to ds: m is modified during the fit and
// holds the best theta on return. Errors: PHYS_ERR_ARG (bounds with lower > upper, theta0 outside them,
// sizes), the status of a failed step derivative (message names trajectory and time).
// With opt->checkpoint the state after every iteration is written to that file (atomically); with
// opt->resume the fit continues from it and returns the same result, bit for bit, as a fit that was never
// stopped (times aside). Checkpoint errors: PHYS_ERR_IO (cannot write; a target that is not a new name, an
// empty file or a checkpoint), PHYS_ERR_PARSE (not a checkpoint, corrupt), PHYS_ERR_ARG (another fit's).
physStatus phys_fit(physModel* m, const physParamTable* t, const double* theta0, const double* lower,
                    const double* upper, const physDataset* ds, const physFitOptions* opt, physFitResult* res,
                    physLog* log);
void phys_fit_result_free(physFitResult* res);

// the 95% interval [lo, hi] of component i by method (physSeMethod): IID theta +- 1.96 se, CLUSTER theta +-
// t_{0.975, G-1} se_cluster, BOOTSTRAP the 2.5 and 97.5 percentiles of the refits (linear interpolation). NaN
// when the method has no estimate (CLUSTER with G < 2, BOOTSTRAP without refits). Not clipped to the bounds.
void phys_fit_interval(const physFitResult* res, int method, int i, double* lo, double* hi);
// 97.5% quantile of Student's t with dof degrees of freedom (1.959964 for dof <= 0: the normal's)
double phys_t975(int dof);

// the trajectory bootstrap: nboot refits of theta, each on ds->ntraj trajectories drawn with replacement from
// ds (phys_rng seeded with seed; resample b's draws follow b-1's), each starting at res->theta with opt's
// loss, optimizer and iterations (one start, no checkpoint, silent). Fills res->nboot, nboot_ok, boot_theta,
// se_boot, cov_boot; a refit that fails is skipped (counted). Deterministic for a seed and any opt->threads.
// m holds res->theta on return. Errors: PHYS_ERR_ARG (nboot < 0, no result), PHYS_ERR_NOMEM.
physStatus phys_fit_bootstrap(physModel* m, const physParamTable* t, const double* lower, const double* upper,
                              const physDataset* ds, const physFitOptions* opt, int nboot, uint64_t seed,
                              physFitResult* res, physLog* log);

// the residuals of the loss at theta (written into m, which keeps it; theta0 is the prior's centre, may be
// NULL without a prior) and their Jacobian J = dr/dtheta (nres x ntheta row-major, may be NULL): what
// phys_fit minimizes, for tests and reports. phys_fit_nres gives nres (0, message in log, if the options or
// the dataset do not fit the model). Layout (fit.c): trajectory by trajectory, sample 1..T-1, per sample the
// observed tangent coordinates with a nonzero weight in order (q tangent, then v), with opt->fit_start then
// the trajectory's tie rows (phys_fit_start_layout), then the ntheta prior rows. With opt->fit_start the
// residuals are those at each segment's best start state and J is the reduced (variable projection) Jacobian,
// dr/dtheta with the start states re-fitted: J'J is the Schur complement of the joint problem.
// KSTEP uses disjoint segments (stride = horizon); slides are weighted by w_pos, hinges by w_rot; the fit runs
// at dt = dt_obs / substeps and restores m->opt.timestep. In the result, stderr_ is NaN when nres <= ntheta;
// corr has 1 on its diagonal and 0 beside a parameter whose variance is 0 (in the null space); each null
// direction is unit with its largest component positive. A step warning that did not reject the step (an
// inexact contact solve) is counted and reported once as a warning in log.
int phys_fit_nres(const physModel* m, const physParamTable* t, const physDataset* ds, const physFitOptions* opt,
                  physLog* log);
physStatus phys_fit_residuals(physModel* m, const physParamTable* t, const double* theta, const double* theta0,
                              const physDataset* ds, const physFitOptions* opt, double* r, double* J,
                              physLog* log);
// the loss 0.5 r'r at theta as phys_fit sums it (fit.c, *Reduction*: by trajectories, then a fixed binary tree over
// them, then the prior rows), bit for bit the fit's loss there for any number of threads and processes (opt->comm:
// each process simulates its share and only the sums are exchanged); m is left at theta
physStatus phys_fit_loss(physModel* m, const physParamTable* t, const double* theta, const double* theta0,
                         const physDataset* ds, const physFitOptions* opt, double* loss, physLog* log);

// with opt->fit_start: nvf, the start state coordinates fitted per segment (the tangent position coordinates
// observed with a nonzero weight, then the same dofs' velocities), their indices in the tangent state [0, 2nv)
// (xsel, 2nv, may be NULL) and tie weights (wtie, 2nv, may be NULL): the position weight w_q for a position, and
// w_q dt_obs / sqrt(2) for a velocity, the inverse standard deviation of a backward difference of positions whose
// noise is 1/w_q (w_q: w_pos or w_rot). Each segment of a trajectory has nvf tie rows -wtie delta (delta: the
// fitted offset of its start from the sample) after the trajectory's data rows, segment by segment. 0 without
// fit_start.
int phys_fit_start_layout(const physModel* m, const physDataset* ds, const physFitOptions* opt, int* xsel,
                              double* wtie);

// with opt->fit_start, the data residuals r (h nsel) of the segment of trajectory k from sample s (a multiple of the
// segment length) simulated from its sample offset by delta (nvf, phys_fit_start_layout's coordinates), and with
// Jd their Jacobian in delta (h nsel x nvf): the block the fit eliminates (tests). m is left at theta.
physStatus phys_fit_segment_start_jac(physModel* m, const physParamTable* t, const double* theta, const physDataset* ds,
                                 const physFitOptions* opt, int k, int s, const double* delta, double* r, double* Jd,
                                 physLog* log);

// the fit's predictions for trajectory k, as the loss sees them: for ONESTEP/KSTEP each predicted sample from
// its segment's start, for ROLLOUT the rollout; qpos (T x nq), qvel (T x nv) caller-owned. Every segment starts
// from its recorded sample; a step warning fails the prediction (PHYS_ERR_NUMERIC)
physStatus phys_fit_predict(const physModel* m, const physDataset* ds, int k, const physFitOptions* opt,
                            double* qpos, double* qvel, physLog* log);
// the same with segment c of the trajectory started from qstart[c] (nq), vstart[c] (nv) (NULL: the samples; the
// trajectory's block of phys_fit_segment_starts' output); with nwarn, a step accepted with a warning (an inexact
// contact solve) is counted into *nwarn instead of failing the prediction (a rejected step still fails)
physStatus phys_fit_predict_from(const physModel* m, const physDataset* ds, int k, const physFitOptions* opt,
                                 const double* qstart, const double* vstart, double* qpos, double* qvel, int* nwarn,
                                 physLog* log);
// the segments of opt's loss over ds (sysid.h's layout: KSTEP ceil((T - 1) / horizon) per trajectory, ONESTEP
// T - 1, ROLLOUT 1; none for T < 2)
int phys_fit_nsegments(const physDataset* ds, const physFitOptions* opt);
// with opt->fit_start: the start state of every segment (phys_fit_nsegments of them, trajectory by trajectory) as
// phys_fit's evaluation at theta fits it, x_rec (+) delta (the same evaluation as phys_fit_residuals': delta
// fitted from 0), into qstart (nseg x nq) and vstart (nseg x nv), and that evaluation's loss into *loss (may be
// NULL): phys_fit's final loss when theta is its answer. m is left at theta. Errors: phys_fit_residuals'
physStatus phys_fit_segment_starts(physModel* m, const physParamTable* t, const double* theta, const physDataset* ds,
                                   const physFitOptions* opt, double* qstart, double* vstart, double* loss,
                                   physLog* log);

//---------------------------------------------------------------------------------------------------------
// identify's data-dependent defaults (defaults.c; issue 12 item 5)

// 1 if no trajectory of ds has velocity columns: every velocity is a backward difference of the positions
int phys_dataset_differenced(const physModel* m, const physDataset* ds);
// whether recorded velocity columns are backward differences of the positions b_k = (q_k (-) q_{k-1}) /
// (t_k - t_{k-1}) (continuous hinges wrapped) or measured at the sample times: per coordinate observed in position
// and velocity, the least-squares alpha of v_k ~ alpha b_k + (1 - alpha) b_{k+1} over the trajectories with
// velocity columns (samples 1..T-2), averaged over the coordinates that move (NaN when none). 1 for backward
// differences, noisy or not, and for a semi-implicit Euler simulation at one step per sample (physid simulate,
// MuJoCo); (n + 1) / 2n for instantaneous velocities of a smooth motion sampled every n steps; 1/2 for exact or
// noisy measured velocities beside white position noise and for central differences; 0 for forward differences.
double phys_dataset_backward_weight(const physModel* m, const physDataset* ds);
// a weight within this of 1 counts the velocity columns as differenced positions (the real cube: 0.92)
#define PHYS_BACKWARD_TOL 0.2
// how identify treats velocity columns (--velocities): decide by phys_dataset_backward_weight, or as declared
typedef enum physVelocitySource_ { PHYS_VEL_AUTO = 0, PHYS_VEL_DIFFERENCED, PHYS_VEL_MEASURED } physVelocitySource;
// the simulation steps per sample that honour the model's timestep: round(dt_obs / timestep) when that is within
// 1 % of a whole number >= 1; else the nearest whole number of steps not longer than the timestep (ceil), or 1
// when the samples are closer than one timestep; at most 1e6. why (nwhy bytes) gets "substeps: N (reason; ...)".
int phys_fit_default_substeps(double dt_obs, double timestep, char* why, size_t nwhy);
// which options the user gave (phys_fit_data_defaults leaves them alone)
enum { PHYS_GIVEN_LOSS = 1, PHYS_GIVEN_SUBSTEPS = 2, PHYS_GIVEN_WEIGHTS = 4, PHYS_GIVEN_HORIZON = 8 };
// the defaults that depend on the data, for the options not in `given`: substeps by
// phys_fit_default_substeps; the loss KSTEP with horizon 30 (unless given) and velocity weight 0 (unless weights
// are given) when the velocities are differenced positions: no velocity columns, velocity columns declared
// differenced (vel = PHYS_VEL_DIFFERENCED), or with vel = PHYS_VEL_AUTO columns whose
// phys_dataset_backward_weight is within PHYS_BACKWARD_TOL of 1; else ONESTEP. why gets one line per
// choice ("substeps: ...", "loss: ...") with the reason.
void phys_fit_data_defaults(physFitOptions* opt, const physModel* m, const physDataset* ds, unsigned given, int vel,
                            char* why, size_t nwhy);
// whether each kstep segment's start state is fitted (--fit-start): decided by the loss and the data, or as given
typedef enum physFitStartMode_ { PHYS_START_AUTO = 0, PHYS_START_ON, PHYS_START_OFF } physFitStartMode;
// sets opt->fit_start for mode (physFitStartMode) after phys_fit_data_defaults: AUTO is PHYS_FIT_START_STAGED when the
// loss is KSTEP on positions (velocity weight 0) and the velocities are differenced positions (the test
// phys_fit_data_defaults makes, with vel), else 0; ON (1) and OFF (0) as given. why (nwhy bytes) gets "segment starts: ..." with the reason when the
// starts are fitted or the mode was given (ON, OFF), else "".
void phys_fit_start_default(physFitOptions* opt, const physModel* m, const physDataset* ds, int mode, int vel,
                            char* why, size_t nwhy);
// whether one-step velocity residuals look like differencing noise (defaults.c's header): at m's parameters,
// the one-step predictions with opt's substeps and inputs; per coordinate observed in position and velocity,
// the correlation of the position residual e_q with dt_obs * e_v and the lag-1 autocorrelation of e_v (within
// trajectories), averaged over those coordinates (npair; NaN and 0 when none). Differenced white position noise
// gives ~1 and -2/3; phys_fit_differencing_suspect(corr, lag1) is corr > 0.8 and lag1 < -0.3.
physStatus phys_fit_differencing_noise(const physModel* m, const physDataset* ds, const physFitOptions* opt,
                                       double* corr, double* lag1, int* npair, physLog* log);
int phys_fit_differencing_suspect(double corr, double lag1);
// a multi-start draw of n values (fit.c; rng: phys_rng from rng.h): uniform in [lo, hi] when both are finite;
// log-uniform in [theta0/10, 10 theta0] (within the bounds) for a positive theta0 with lo >= 0 and no upper bound;
// otherwise theta0 + U(-1, 1) max(|theta0|, 1) clamped to the bounds
struct physRng_;
void phys_fit_draw_start(double* th, const double* theta0, const double* lo, const double* hi, int n,
                         struct physRng_* rng);
// a cheap check that a one-start fit did not end in another basin (issue 12 item 5): the loss (without the prior)
// at nprobe points drawn as the multi-start draws them about theta0 (phys_fit_draw_start; phys_rng seeded from
// opt->seed, deterministic, not the multi-start's draws); theta_best (ntheta) and loss_best get the lowest
// (loss_best NaN when every probe failed or nprobe is 0). A probe below res->loss proves the fit is not the global
// minimum. m holds res->theta on return. Errors: PHYS_ERR_ARG, PHYS_ERR_NOMEM, phys_param_set's.
physStatus phys_fit_probe(physModel* m, const physParamTable* t, const double* theta0, const double* lower,
                          const double* upper, const physDataset* ds, const physFitOptions* opt,
                          const physFitResult* res, int nprobe, double* theta_best, double* loss_best, physLog* log);

// issue 16 item 4: paper 002's progressive training (Alg. 1; progressive.c). Epochs of opt->max_iter Adam
// iterations (phys_fit with one start; each epoch starts from the last one's answer): stage 1 with the implicit
// integrator (PHYS_INT_IMPLICIT) at 1 substep per observation interval (the largest step) and learning rate lr0;
// whenever the validation loss does not fall below (1 - rtol) times the previous epoch's, the substeps double (the step halves)
// up to opt->substeps (the model's step), after that the learning rate halves; the stage ends when it is below
// lr_min. Stage 2: semi-implicit Euler at opt->substeps from lr0, halving on each rise, until below lr_min. Each
// stage runs at most max_epochs epochs. The validation loss is 0.5 |r|^2 of valid (NULL: train) at the epoch's
// answer under its integrator and step. res gets the last epoch's fit (its theta the answer; m holds it, with
// m->opt.integrator as on entry); hist (2 max_epochs entries, may be NULL) one entry per epoch, *nhist their count.
// PHYS_ERR_ARG with a prior (opt->prior > 0) or non-positive settings; else phys_fit's errors.
typedef struct physProgressiveOptions_ {
  double lr0;               // initial learning rate of both stages (paper: 0.1)
  double lr_min;            // a stage ends when its learning rate falls below (paper: 1e-4)
  int max_epochs;           // per stage
  double rtol;              // the validation loss "falls" when below (1 - rtol) times the previous epoch's (1e-3)
} physProgressiveOptions;
typedef struct physProgressiveEpoch_ {
  int stage;                // 1 implicit, 2 semi-implicit Euler
  int substeps;             // steps per observation interval (dt = dt_obs / substeps)
  double lr;                // learning rate
  double train, valid;      // training loss (the epoch's best iterate) and validation loss
} physProgressiveEpoch;
physStatus phys_fit_progressive(physModel* m, const physParamTable* t, const double* theta0, const double* lower,
                                const double* upper, const physDataset* train, const physDataset* valid,
                                const physFitOptions* opt, const physProgressiveOptions* popt, physFitResult* res,
                                physProgressiveEpoch* hist, int* nhist, physLog* log);

#endif  // PHYS_SYSID_H
