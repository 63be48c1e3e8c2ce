// fit.c - identification of physical parameters theta from trajectories (sysid.h): residuals on simulated
// predictions, their Jacobians by forward sensitivities of the step, bounded Levenberg-Marquardt, L-BFGS-B,
// Adam, multi-start and the statistics of the best fit.
//
// Segments. Every loss is a set of segments: a segment starts at an observed sample x_s (the state is set
// to it, the contact lists emptied so no warm start leaks between segments) and is simulated for h
// observation intervals of `substeps` steps each (dt = ds->dt_obs / substeps); each of the h predictions
// is compared with its observation. ONESTEP: h = 1 from every sample; KSTEP: h = horizon from samples
// 0, horizon, 2 horizon, ... (stride = horizon: multiple shooting with disjoint segments, the last one
// shorter); ROLLOUT: h = T - 1 from sample 0. So every sample but a trajectory's first has exactly one
// residual block and KSTEP with horizon 1 is ONESTEP.
//
// Inputs: recorded controls (tr->ctrl) and applied joint forces (tr->qfrc, into d->qfrc_applied) hold from their
// sample to the next (zero-order hold) at every substep of that interval; without recorded controls opt->ctrl
// (nu, NULL: zero) is held during every segment (a known push, paper 000 Fig. 4b). Both are known: they enter
// the step's forces, not theta, so the sensitivities keep their form (A does not depend on them). The table's
// input kinds (delay, inputgain, inputbias; param_inputs.c) transform the recorded channels interval by
// interval; their sensitivities d u_eff / d theta reach P through each worker's copy of the table (t.insens).
//
// Continuous joints: a hinge without limits compares angles modulo 2 pi: its residual is the difference wrapped
// into (-pi, pi] (phys_wrap_angle), its derivative unchanged.
//
// Residuals of one observation: e = x_obs (-) x_pred in grad.h's tangent coordinates (phys_difference_pos:
// free translation p_obs - p_pred, rotation log(q_pred^-1 q_obs) in the body frame, hinge and slide the
// difference), velocities v_obs - v_pred; r_i = w_i e_i for the observed coordinates with a nonzero weight:
// w_pos for free translations and slides (metres), w_rot for rotations and hinges (radians), w_vel for
// velocities. The prior adds sqrt(prior) (theta - theta0). Loss = 0.5 |r|^2.
//
// Jacobians. S_t = dx_t/dtheta (2nv x ntheta) from S = 0 at the segment's start, S_{t+1} = A_t S_t + P_t
// (phys_step_jacobian, phys_step_param_jacobian), and dr/dtheta = w de/dx_pred S with de/dx_pred = -I except
// rotations: d log(Exp(-delta) Exp(phi)) / d delta = -Jl(phi)^-1 = -Jr(-phi)^-1.
//
// Segment start states (opt->fit_start; issue 12 item 5). A segment starts at an observed sample. With positions
// carrying noise sigma_q and velocities differenced from them, its start velocity carries sqrt(2) sigma_q / dt_obs,
// which kstep on positions propagates over the whole horizon (a pendulum at 500 Hz with 1 mm noise: 0.7 rad/s,
// damping 8.6 for 0.3), and its start position's noise shifts every prediction of the segment alike (fitting the
// velocity alone still left that pendulum's damping +10 % high: the shared offset and the velocity it induces are
// correlated, an errors-in-variables bias). With fit_start each segment starts from x_rec (+) delta, delta (nvf
// values) offsetting the position and velocity of every dof observed in position (phys_fit_start_layout), an
// unknown of its own tied to the sample by the rows -wtie delta: wtie = w_q for a position (the start sample is one
// more observation of it) and w_q dt_obs / sqrt(2) for a velocity (a backward difference of positions whose noise
// is 1/w_q). Only the segment's residuals depend on its delta, so the joint Jacobian is block-sparse
// ([J_theta | one block Jd per segment]); the deltas are eliminated segment by segment by variable projection: at
// every theta each segment's delta is fitted from 0 by Gauss-Newton (the simulations carry the nvf columns of delta
// only; each step halved up to FIT_VMAX_HALF times until the segment's loss falls; at most FIT_VMAX_IT steps, until
// one promises less than FIT_VSTOP of the segment's loss), and the optimizers see the residuals there and (one more
// simulation there with the parameters' columns) the reduced Jacobian
// J_red = (I - Jd (Jd'Jd)^-1 Jd') J_theta (Kaufman's; the gradient J_red' r = J_theta' r is exact at the segment's
// optimum, where Jd' r = 0). J_red'J_red is the Schur complement of the delta blocks in the joint J'J, so the
// statistics below give the physical parameters' marginal covariance; the residual variance's degrees of freedom
// are nres - ntheta - (the deltas' count). The cost is linear in the segments: nvf more sensitivity columns
// S_d = dx/d delta = A_t ... A_0 E (E = d x_start / d delta: unit columns, a rotation's block the right Jacobian of
// Exp), chained by the exact step Jacobians A = dx+/dx that a rollout's gradient chains in src/grad/rollout.c (here
// forward: nvf is small), a few simulations of each segment per evaluation (each with its linearizations) and an
// nvf x nvf Cholesky; LM's system keeps its ntheta x ntheta size. Every evaluation starts each segment's delta at 0
// whatever earlier evaluations found, so results do not depend on the history (checkpoints, threads). (Starting
// from the previous evaluation's delta was tried: 1.6x fewer simulations, but the real cube's fit moved from friction
// 0.1646 to 0.1620 and its loss rose 2 %: a segment's delta loss has several minima, and from a different start
// the steps stop in another, its loss up to 2x apart either way.) What is saved instead keeps every bit: a trial
// delta is simulated without its sensitivities (most trials are rejected; the accepted one is simulated again
// with them), and LM's Jacobian evaluation at the point its trial just evaluated takes each segment's delta from
// that trial (pb->dtrial) instead of repeating the same steps from 0.
// phys_fit_predict starts each segment from the recorded sample.
//
// Optimizers. Levenberg-Marquardt is written here because Debian has no C LM with bounds (MINPACK's lmder
// and cminpack are unbounded, levmar's bounded variant is not packaged): a projected / active-set LM, step
// (J'J + lambda D) delta = -J'r on the free coordinates (a coordinate at a bound whose gradient pushes out
// is held), projected onto the bounds, D = running max of diag(J'J) (More's scaling), Nielsen's damping
// update from the ratio of actual to predicted decrease; it stops when an accepted step lowers the loss by
// less than tol (relative) or changes no coordinate by more than 1e-12 relative (noise-free data reach
// rounding there), when lambda exceeds 1e30, or after max_iter trial steps. L-BFGS-B 3.0 (liblbfgsb's Fortran setulb_, reverse
// communication) and Adam work on the summed loss and its gradient J'r.
//
// Threads: opt->threads workers (at most 16 and one per trajectory) share the trajectories of each
// evaluation (trajectory k to worker k mod nworker), each with its own physData; the model is only read
// while they run. Every segment starts from its sample with empty contact lists, so residuals, Jacobians,
// the fit and its messages are bit-identical for any thread count (time_forward/gradient add the workers').
// Processes (opt->comm, sysid.h: MPI through the CLI): process p simulates the trajectories [k0, k1) whose first
// residual row lies in [p ndata / size, (p + 1) ndata / size) (its threads share them as above); after each
// evaluation the processes agree on the failure and the first step warning (the lowest trajectory's, as the
// threads) and exchange sums (*Reduction*), so every process continues with the same loss, J'r and J'J as one
// process would: the fit is bit-identical for any number of processes and threads. A process holds the residual
// and Jacobian rows of its own trajectories only (and each of its segments' fitted start offset: the same process
// simulates the same segments at every evaluation).
//
// Reduction. What the optimizers and the statistics need of an evaluation is the loss 0.5 r'r, the gradient J'r,
// J'J (LM, the statistics) and the cluster-robust meat sum_k g_k g_k' (g_k = J_k' r_k of trajectory k): sums over
// trajectories. Each trajectory's r_k'r_k, g_k and J_k'J_k are summed over its rows in row order by the worker that
// simulated it (its slot); the slots are summed by a binary tree fixed by the trajectory count G alone (node
// [lo, hi) = node [lo, mid) + node [mid, hi), mid = lo + (hi - lo) / 2; a leaf is one trajectory), then the prior
// rows are added. A process computes the largest nodes that lie within its trajectories (at most about
// 2 log2(G)), every process's nodes are gathered (allgatherv of 1 + p + p^2 numbers per node, p = ntheta; with the
// meat 1 + p + 2p^2, once per fit) and every process completes the tree from them, the same additions in the same
// order whatever the number of processes: one process computes the root alone, with the same additions. (Pairwise
// summation is also more accurate than the running sum over rows it replaced in s30: O(log G) rounding growth.)
//
// Memory: allocated once per fit (the tables, a physData and scratch per worker, the optimizer's arrays, the
// reduction's slots, nodes and scratch; r and J hold this process's rows and the prior's, not every process's);
// the step and Jacobian calls take their scratch from each physData's arena.
#include <lapacke.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "arena.h"
#include "checkpoint.h"
#include "sensor_deriv.h"
#include "chol.h"
#include "grad.h"
#include "rng.h"
#include "rot.h"
#include "step_record.h"
#include "sysid.h"
#include "violation.h"

//---------------------------------------------------------------------------------------------------------
// defaults

// the defaults documented in sysid.h
void phys_fit_defaults(physFitOptions* opt) {
  memset(opt, 0, sizeof(*opt));
  opt->loss = PHYS_LOSS_ONESTEP;
  opt->horizon = 10;
  opt->substeps = 1;
  opt->w_pos = 1 / 1e-3;
  opt->w_rot = 1 / 1e-2;
  opt->w_vel = 1 / 1e-1;
  opt->prior = 0;
  opt->viol_comp = 1;   // (s29: examples/ccn/validate.sh's choice, with the velocity metric)
  opt->viol_diss = 1e-1;
  opt->viol_pen = 1e2;
  opt->viol_metric = 1;
  opt->optimizer = PHYS_OPT_LM;
  opt->max_iter = 100;
  opt->tol = 1e-10;
  opt->stall_iters = 5;
  opt->stall_tol = 1e-6;
  opt->lr = 1e-2;
  opt->starts = 1;
  opt->seed = 1;
  opt->verbose = 0;
  opt->threads = 1;
  opt->fit_start = 0;
}

//---------------------------------------------------------------------------------------------------------
// the problem: model, data, residual layout and work arrays

#define FIT_MAXTHREADS 16

struct fitProblem_;

// one thread's simulation: its data, scratch, errors and step warnings of the current evaluation
typedef struct fitWorker_ {
  struct fitProblem_* pb;
  int index;                // trajectories index, index + nworker, ...
  physData* d;
  double *S, *S2, *A, *P, *e, *G;
  // start states (nvf > 0): S_v = dx/d delta (2nv x nvf) and its product, the segment's trial residuals (h nsel),
  // trial and best Jd (h nsel x nvf), best and trial delta, step, gradient, Jd'Jd + diag(wtie^2), its solve; dcur:
  // the delta of the segment being simulated
  double *Sv, *Sv2, *rt, *Jvt, *Jvb, *vb, *vt, *dv, *gv, *Mv, *Xv;
  const double* dcur;
  void* buf;                // the scratch's allocation
  physLog log;              // its error in the current evaluation
  physStatus status;
  int fail_k;               // trajectory that failed (ntraj: none)
  int nsimwarn, warn_k, warn_s;   // step warnings of the evaluation, where the first was
  int trial;                // 1: a start offset's trial simulation (its warnings are counted when it is taken)
  char simwarn[256];
  double time_forward, time_gradient;   // CPU seconds of this worker's thread (worker_run)
  double wall_forward, wall_gradient;   // wall seconds inside its steps and derivatives (the split of the above)
  double *r, *J;            // the evaluation's outputs
  double *Hs, *es;          // observed sensors: d value / d state (nsens x 2nv) and y_obs - value (nsens) at the
                            // current observation
  physParamTable t;         // the problem's table with this worker's input sensitivities (t.insens: t.n)
  double* insens;
} fitWorker;

typedef struct fitProblem_ {
  physModel* m;
  const physParamTable* t;
  const physDataset* ds;
  const physFitOptions* opt;
  const double* theta0;     // prior centre (NULL without prior)
  physLog* log;
  int nx, ntheta;           // 2nv, parameters
  int nxs;                  // the sensitivities' state: 2nv + na (act's rows: issue 15 item 2)
  int nsel;                 // residual coordinates per observation
  int nsens;                // of them sensor values (the last ones)
  int* sel;                 // nsel tangent indices in [0, 2nv), then sensor values 2nv + index in sensordata
  double* wsel;             // nsel weights
  int* rotgrp;              // nv: first dof of the rotation group of a q coordinate, -1 if not a rotation
  int* resadr;              // ntraj: first residual of each trajectory
  int* resn;                // ntraj: its residuals (data rows, then the start states' tie rows)
  int nvf;                  // start state coordinates fitted per segment (0: fit_start off)
  int* xsel;                // nvf tangent state coordinates in [0, 2nv): positions, then velocities
  double* wtie;             // nvf tie weights
  int hmax;                 // the longest segment
  int nnuis;                // start state unknowns of all segments
  int* nuisadr;             // ntraj: first start state unknown of each trajectory (its segments' deltas in order)
  double* dtrial;           // nnuis: each segment's delta at the last evaluation (one slot per segment, written only
                            // by its trajectory's worker)
  int reuse_starts;         // 1: the evaluation is at the point of the last one: its deltas are taken, not fitted
  int ndata, nres;          // data residuals (with the tie rows), all residuals (with the prior rows)
  double sqrt_prior;
  void* buf;                // allocation of sel, wsel, rotgrp, resadr, resn, xsel, wtie
  int nworker;              // threads (opt->threads, at most FIT_MAXTHREADS and ntraj)
  fitWorker worker[FIT_MAXTHREADS];
  int neval;
  int nsimwarn;             // warnings of simulation steps that were not rejected, over the fit
  char simwarn[256];        // the first of them
  struct fitCkpt_* ck;      // the checkpoint written after every iteration (NULL: none)
  int k0, k1;               // this process's trajectories (opt->comm; all without)
  int nproc, rank;          // processes (1 without opt->comm) and this one
  int* kstart;              // nproc + 1: process p's trajectories are [kstart[p], kstart[p + 1])
  int* nnode;               // nproc + 1: the tree nodes each process reduces (*Reduction*), then their total
  int* cur;                 // nproc: the first node of each process, then the next one to combine
  size_t* part;             // count and displ (nproc each) of the exchanges
  struct fitOutcome_* outs; // the processes' outcomes of an evaluation (nproc)
  int* outi;                // their counts (5 nproc: comm_outcome)
  int want;                 // what the current evaluation reduces (fitReduce)
  double* slot;             // (k1 - k0) x (1 + n + n^2): each own trajectory's sum r'r, J'r, J'J (*Reduction*)
  double* nodes;            // nnode[nproc] x red_width(RED_STATS): the tree nodes of every process
  double* tmp;              // (tree depth + 2) x red_width(RED_STATS): the tree's scratch
  double* red;              // red_width(RED_STATS): the evaluation's reduced r'r, J'r, J'J (and sum g_k g_k')
  int rows;                 // 1: the processes also exchange their residual and Jacobian rows (phys_fit_residuals)
  int row0, nown;           // the first data row of this process's trajectories and their count (all: 0, ndata)
  int off, nheld;           // the evaluation's arrays r, J: data row i at i - off, nheld data rows, then the prior rows
                            // (own rows: off row0, nheld nown; with pb->rows every row: 0, ndata)
  double* vmetric;          // nv: the violation loss's velocity metric (opt->viol_metric), from the model as given;
                            // NULL: energy units
  double* vsol;             // the violation loss's inner solutions of the last residual-only evaluation, one slot of
                            // phys_violation_solsize per transition of own trajectories (NULL: none, or viol_resolve)
  size_t* vsoladr;          // ntraj: the first slot of each trajectory (own ones)
  int vsol_ok;              // 1: vsol holds every own transition's solution at the point of the last evaluation
  int vsol_reuse;           // 1: the current evaluation takes them (with J, at that point: pb->reuse_starts)
} fitProblem;

// an evaluation's outcome on one process (the processes exchange it: fit.c's header)
typedef struct fitOutcome_ {
  int status, fail_k;       // the failure of the lowest trajectory (PHYS_OK and ntraj: none) and its message
  int nsimwarn, warn_k, warn_s;   // step warnings, and where the first was (trajectory, sample)
  char error[PHYS_MSGLEN];
  char simwarn[256];
} fitOutcome;

// wall seconds (a monotonic clock read in user space: cheap enough around every step; the thread CPU clock is a
// system call, which around every step of a short segment cost more than the step)
static double now_sec(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

// CPU seconds of the calling thread (time_forward, time_gradient: each worker's simulation and derivatives in
// its own thread, summed over the workers; a wall clock there would count a thread's waits for a core too, and
// with n threads their sum exceeds the fit's wall time up to n-fold): read once per worker_run, its CPU time
// split between forward and gradient in proportion to the wall time inside each (wall_forward, wall_gradient)
static double thread_cpu_sec(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

// observation interval of k: the segment length h of the loss (sysid.h's segments) for a trajectory of T
static int segment_len(const physFitOptions* opt, int T) {
  if (opt->loss == PHYS_LOSS_ONESTEP || opt->loss == PHYS_LOSS_VIOLATION) return 1;
  if (opt->loss == PHYS_LOSS_KSTEP) return opt->horizon;
  return T - 1 > 0 ? T - 1 : 1;
}

// segments of a trajectory of T samples
static int segment_count(const physFitOptions* opt, int T) {
  int h = segment_len(opt, T);
  return T > 1 ? (T - 1 + h - 1) / h : 0;
}

// weight of tangent coordinate i of x = (q tangent, v): w_pos (free translation, slide), w_rot (rotation,
// hinge), w_vel (velocities)
static double coord_weight(const physModel* m, const physFitOptions* opt, int i) {
  if (i >= m->nv) return opt->w_vel;
  int j = m->dof_jntid[i], type = m->jnt_type[j];
  if (type == PHYS_JNT_FREE) return i - m->jnt_dofadr[j] < 3 ? opt->w_pos : opt->w_rot;
  if (type == PHYS_JNT_SLIDE) return opt->w_pos;
  return opt->w_rot;
}

// the start state coordinates fitted per segment and their tie weights (sysid.h)
int phys_fit_start_layout(const physModel* m, const physDataset* ds, const physFitOptions* opt, int* xsel,
                              double* wtie) {
  if (!m || !ds || !opt || !opt->fit_start || ds->nv != m->nv || !ds->obs_q) return 0;
  int n = 0, nv = m->nv;
  for (int pass = 0; pass < 2; pass++)   // positions, then velocities
    for (int i = 0; i < nv; i++) {
      double w = coord_weight(m, opt, i);
      if (!ds->obs_q[i] || !(w > 0)) continue;
      if (xsel) xsel[n] = i + pass * nv;
      if (wtie) wtie[n] = pass ? w * ds->dt_obs / sqrt(2.0) : w;
      n++;
    }
  return n;
}

// rotation group of q tangent coordinate i: first dof of its 3 rotation dofs, -1 for translations/hinges
static int rot_group(const physModel* m, int i) {
  int j = m->dof_jntid[i], type = m->jnt_type[j], a = m->jnt_dofadr[j];
  if (type == PHYS_JNT_BALL) return a;
  if (type == PHYS_JNT_FREE && i - a >= 3) return a + 3;
  return -1;
}

// the violation loss's conditions (violation.h): every coordinate observed, one step per sample, weights >= 0,
// the model's pairs and the parameters supported; nsel <- nv + 2 residuals per transition
static physStatus violation_layout(const physModel* m, const physParamTable* t, const physDataset* ds,
                                   const physFitOptions* opt, int* nsel, physLog* log) {
  for (int i = 0; i < m->nv; i++)
    if (!ds->obs_q[i] || !ds->obs_v[i])
      return phys_error(log, PHYS_ERR_ARG, "fit: the violation loss needs every position and velocity observed "
                        "(dof %d is not)", i);
  if (opt->substeps != 1)
    return phys_error(log, PHYS_ERR_ARG, "fit: the violation loss compares consecutive samples (dt = the sample "
                      "spacing): substeps must be 1, not %d", opt->substeps);
  if (!(opt->viol_comp >= 0 && opt->viol_diss >= 0 && opt->viol_pen >= 0))
    return phys_error(log, PHYS_ERR_ARG, "fit: violation weights must be >= 0");
  physStatus st = phys_violation_check(m, t, log);
  if (st != PHYS_OK) return st;
  *nsel = m->nv + 2;
  return PHYS_OK;
}

// the sensor of sensordata value a
static int sensor_of(const physModel* m, int a) {
  int i = 0;
  while (i + 1 < m->nsensor && m->sensor_adr[i + 1] <= a) i++;
  return i;
}

// the observed sensor values (ds->obs_s) the fit puts residuals on: *nsens of them. Refused: sensors without a state
// derivative (sensor_deriv.h: acceleration stage, actuatorfrc, touch), the violation loss, and parameters that
// move a sensor's frame directly (mass, com, inertia, pos: their derivative of the sensor value at a fixed state is
// not implemented) with any sensor other than jointpos and jointvel
static physStatus sensor_layout(const physModel* m, const physParamTable* t, const physDataset* ds,
                                const physFitOptions* opt, int* nsens, physLog* log) {
  *nsens = 0;
  if (!ds->obs_s) return PHYS_OK;
  if (ds->nsens != m->nsensordata)
    return phys_error(log, PHYS_ERR_SIZE, "fit: dataset has %d sensor values, the model %d", ds->nsens, m->nsensordata);
  int frame = 0;
  for (int a = 0; a < ds->nsens; a++) {
    if (!ds->obs_s[a]) continue;
    int i = sensor_of(m, a), type = m->sensor_type[i];
    if (!phys_sensor_has_deriv(type))
      return phys_error(log, PHYS_ERR_ARG, "fit: sensor '%s' (%s) cannot be observed: identification from sensors "
                        "takes jointpos, jointvel, framepos, framequat, framelinvel, frameangvel, gyro, velocimeter "
                        "and subtreecom (a state derivative exists for these)", phys_id2name(m, "sensor", i),
                        phys_sensor_name(type));
    frame |= type != PHYS_SENS_JOINTPOS && type != PHYS_SENS_JOINTVEL;
    (*nsens)++;
  }
  if (*nsens && opt->loss == PHYS_LOSS_VIOLATION)
    return phys_error(log, PHYS_ERR_ARG, "fit: the violation loss has no sensor residuals; use onestep, kstep or rollout");
  for (int e = 0; frame && e < t->n; e++) {
    int k = t->param[e].kind;
    if (phys_param_is_inertial(k) || k == PHYS_PAR_POS)
      return phys_error(log, PHYS_ERR_ARG, "fit: param '%s' moves the sensors' frames at a fixed state, a "
                        "derivative not implemented: observe jointpos/jointvel sensors only, or states",
                        t->param[e].name);
  }
  return PHYS_OK;
}

// validate the options and the dataset, and count the residuals; nres = 0 on error (message in log)
static physStatus layout(const physModel* m, const physParamTable* t, const physDataset* ds,
                         const physFitOptions* opt, int* nsel, int* ndata, physLog* log) {
  *nsel = *ndata = 0;
  if (!opt || !ds || !t) return phys_error(log, PHYS_ERR_ARG, "fit: missing options, dataset or parameters");
  if (ds->nq != m->nq || ds->nv != m->nv)
    return phys_error(log, PHYS_ERR_SIZE, "fit: dataset has nq %d, nv %d; the model %d, %d", ds->nq, ds->nv,
                      m->nq, m->nv);
  if (opt->loss < PHYS_LOSS_ONESTEP || opt->loss > PHYS_LOSS_VIOLATION)
    return phys_error(log, PHYS_ERR_ARG, "fit: unknown loss kind %d", opt->loss);
  if (opt->loss == PHYS_LOSS_KSTEP && opt->horizon < 1)
    return phys_error(log, PHYS_ERR_ARG, "fit: horizon %d < 1", opt->horizon);
  if (opt->substeps < 1) return phys_error(log, PHYS_ERR_ARG, "fit: substeps %d < 1", opt->substeps);
  if (!(ds->dt_obs > 0) || !isfinite(ds->dt_obs))
    return phys_error(log, PHYS_ERR_ARG, "fit: dataset's sample spacing %g is not positive", ds->dt_obs);
  if (!(opt->w_pos >= 0 && opt->w_rot >= 0 && opt->w_vel >= 0 && opt->prior >= 0))
    return phys_error(log, PHYS_ERR_ARG, "fit: weights and prior must be >= 0");
  if (opt->loss == PHYS_LOSS_VIOLATION && opt->fit_start)
    return phys_error(log, PHYS_ERR_ARG, "fit: the violation loss simulates no segments: fitted segment starts "
                      "(--fit-start on) do not apply to it");
  if (opt->loss == PHYS_LOSS_VIOLATION && m->na > 0)   // (its residuals are (q, v) forces: issue 15 item 2)
    return phys_error(log, PHYS_ERR_MODEL, "fit: the violation loss does not model actuator activations (the model "
                      "has %d, MuJoCo's act); use --loss kstep or onestep", m->na);
  if (opt->loss == PHYS_LOSS_VIOLATION) {
    physStatus st = violation_layout(m, t, ds, opt, nsel, log);
    if (st != PHYS_OK) return st;
  } else {
    for (int i = 0; i < 2 * m->nv; i++) {
      int observed = i < m->nv ? ds->obs_q[i] : ds->obs_v[i - m->nv];
      if (observed && coord_weight(m, opt, i) > 0) (*nsel)++;
    }
  }
  int nsens = 0;
  physStatus sst = sensor_layout(m, t, ds, opt, &nsens, log);
  if (sst != PHYS_OK) return sst;
  *nsel += nsens;
  int nobs = 0, nvf = phys_fit_start_layout(m, ds, opt, NULL, NULL);
  for (int k = 0; k < ds->ntraj; k++)
    if (ds->traj[k].T > 1) nobs += ds->traj[k].T - 1;
  *ndata = nobs * *nsel;
  if (*ndata == 0)
    return phys_error(log, PHYS_ERR_ARG,
                      "fit: no residuals (no trajectory with 2 samples, or no observed coordinate with a weight)");
  for (int k = 0; k < ds->ntraj; k++) *ndata += segment_count(opt, ds->traj[k].T) * nvf;
  for (int e = 0; e < t->n; e++) {
    const physParam* p = t->param + e;
    if (!phys_param_is_input(p->kind)) continue;
    int force = p->id >= m->nu;
    if (force ? !ds->has_qfrc : !ds->has_ctrl)
      return phys_error(log, PHYS_ERR_ARG, "fit: param '%s' transforms recorded %s, but the data carry none "
                        "(columns %s)", p->name, force ? "applied forces" : "controls",
                        force ? "tau0.. or qfrc:JOINT" : "u0.. or ctrl:ACTUATOR");
  }
  return PHYS_OK;
}

// one warning if a sample interval differs from dt_obs by more than 1% (the fit simulates dt_obs / substeps
// per interval whatever the recorded times say)
static void warn_spacing(const physDataset* ds, physLog* log) {
  for (int k = 0; k < ds->ntraj; k++) {
    const physTrajectory* tr = &ds->traj[k];
    for (int j = 0; j + 1 < tr->T; j++) {
      double dt = tr->time[j + 1] - tr->time[j];
      if (fabs(dt - ds->dt_obs) > 0.01 * ds->dt_obs) {
        phys_warning(log, "fit: %s: samples %d-%d are %.6g s apart, not %.6g s (dt_obs); every interval is simulated as %.6g s",
                     tr->source, j, j + 1, dt, ds->dt_obs, ds->dt_obs);
        return;
      }
    }
  }
}

// one worker's data and scratch (one allocation)
static int worker_init(fitWorker* w, fitProblem* pb, int index) {
  const physModel* m = pb->m;
  int nx = pb->nx, nxs = pb->nxs, nth = pb->ntheta, nvf = pb->nvf;
  size_t nr = nvf ? (size_t)pb->hmax * pb->nsel : 0;   // a segment's data rows (fitted start states only)
  size_t ns = (size_t)m->nsensordata;
  size_t nd = 3 * (size_t)nxs * nth + (size_t)nxs * nxs + nx + 9 + (size_t)pb->t->n + ns * (size_t)nx + ns;
  size_t nds = 2 * (size_t)nxs * nvf + nr * (1 + 2 * (size_t)nvf) + 4 * (size_t)nvf + (size_t)nvf * nvf +
               (size_t)nvf * nth;
  char* buf = calloc(1, (nd + nds) * sizeof(double) + 64);
  w->pb = pb, w->index = index, w->buf = buf;
  w->d = phys_make_data(m);
  if (!buf || !w->d) return 0;
  double* p = (double*)buf;
  w->S = p, p += (size_t)nxs * nth;   // (S, S2, P, A, Sv, Sv2: the nxs = 2nv + na state of the step derivatives)
  w->S2 = p, p += (size_t)nxs * nth;
  w->P = p, p += (size_t)nxs * nth;
  w->A = p, p += (size_t)nxs * nxs;
  w->e = p, p += nx;
  w->insens = p, p += pb->t->n;
  w->G = p, p += 9;
  w->Hs = p, p += ns * (size_t)nx;
  w->es = p, p += ns;
  w->Sv = p, p += (size_t)nxs * nvf;
  w->Sv2 = p, p += (size_t)nxs * nvf;
  w->rt = p, p += nr;
  w->Jvt = p, p += nr * nvf;
  w->Jvb = p, p += nr * nvf;
  w->vb = p, p += nvf;
  w->vt = p, p += nvf;
  w->dv = p, p += nvf;
  w->gv = p, p += nvf;
  w->Mv = p, p += (size_t)nvf * nvf;
  w->Xv = p;
  w->t = *pb->t;
  w->t.insens = w->insens;
  return 1;
}

// what an evaluation reduces over the trajectories (fit.c's *Reduction*): the loss r'r; and J'r; and J'J; and the
// cluster-robust meat sum_k g_k g_k' (g_k = J_k' r_k)
enum { RED_LOSS = 0, RED_GRAD, RED_NORMAL, RED_STATS };

// doubles of a reduction of want for n parameters: r'r, J'r (n), J'J (n x n), sum g_k g_k' (n x n)
static size_t red_width(int n, int want) {
  size_t nn = (size_t)n * n;
  return want == RED_LOSS ? 1 : want == RED_GRAD ? 1 + (size_t)n : want == RED_NORMAL ? 1 + n + nn : 1 + n + 2 * nn;
}

// the process whose trajectories hold the tree node [lo, hi) whole; -1 if it spans two
static int node_owner(const fitProblem* pb, int lo, int hi) {
  int a = 0, b = pb->nproc - 1;   // the last p with kstart[p] <= lo: its range holds lo (kstart[nproc] = ntraj)
  while (a < b) {
    int c = (a + b + 1) / 2;
    if (pb->kstart[c] <= lo) a = c;
    else b = c - 1;
  }
  return hi <= pb->kstart[a + 1] ? a : -1;
}

// the maximal tree nodes inside [lo, hi) owned whole by a process, counted per owner into cnt (nproc)
static void tree_count(const fitProblem* pb, int lo, int hi, int* cnt) {
  int p = node_owner(pb, lo, hi);
  if (p >= 0) {
    cnt[p]++;
    return;
  }
  int mid = lo + (hi - lo) / 2;
  tree_count(pb, lo, mid, cnt);
  tree_count(pb, mid, hi, cnt);
}

// pb->nproc, rank, kstart (process p: the trajectories whose first residual row lies in [p ndata / size,
// (p + 1) ndata / size), the last process the rest), k0, k1, the tree nodes per process and the exchange's
// arrays (allocated once); 0 when out of memory
// pb->vsol and pb->vsoladr for this process's trajectories (k0, k1: comm_ranges); 0 if out of memory
static int violation_sol_alloc(fitProblem* pb) {
  size_t n = 0, per = (size_t)phys_violation_solsize(pb->m);
  pb->vsoladr = malloc(sizeof(size_t) * (size_t)(pb->ds->ntraj > 0 ? pb->ds->ntraj : 1));
  if (!pb->vsoladr) return 0;
  for (int k = 0; k < pb->ds->ntraj; k++) {
    pb->vsoladr[k] = n;
    if (k >= pb->k0 && k < pb->k1 && pb->ds->traj[k].T > 1) n += (size_t)(pb->ds->traj[k].T - 1) * per;
  }
  pb->vsol = malloc(sizeof(double) * (n > 0 ? n : 1));
  pb->vsol_ok = 0;
  return pb->vsol != NULL;
}

static int comm_ranges(fitProblem* pb) {
  const physFitComm* c = pb->opt->comm;
  int P = c && c->size > 1 ? c->size : 1, n = pb->ds->ntraj;
  pb->nproc = P, pb->rank = P > 1 ? c->rank : 0;
  pb->kstart = malloc(sizeof(int) * (3 * ((size_t)P + 1) + 5 * (size_t)P));
  pb->part = malloc(sizeof(size_t) * 2 * (size_t)P);
  pb->outs = malloc(sizeof(fitOutcome) * (size_t)P);
  if (!pb->kstart || !pb->part || !pb->outs) return 0;
  pb->nnode = pb->kstart + P + 1, pb->cur = pb->nnode + P + 1, pb->outi = pb->cur + P + 1;
  for (int p = 0, k = 0; p <= P; p++) {
    size_t lo = (size_t)pb->ndata * (size_t)p / (size_t)P;
    while (k < n && (size_t)pb->resadr[k] < lo) k++;
    pb->kstart[p] = p == 0 ? 0 : p == P ? n : k;
  }
  pb->k0 = pb->kstart[pb->rank], pb->k1 = pb->kstart[pb->rank + 1];
  pb->row0 = pb->k0 < n ? pb->resadr[pb->k0] : pb->ndata;
  pb->nown = (pb->k1 < n ? pb->resadr[pb->k1] : pb->ndata) - pb->row0;
  memset(pb->nnode, 0, sizeof(int) * ((size_t)P + 1));
  if (n > 0) tree_count(pb, 0, n, pb->nnode);
  for (int p = 0; p < P; p++) pb->nnode[P] += pb->nnode[p];
  int depth = 2;
  for (int m = 1; m < n; m *= 2) depth++;
  size_t w = red_width(pb->ntheta, RED_STATS);
  pb->slot = calloc((size_t)(pb->k1 - pb->k0) * red_width(pb->ntheta, RED_NORMAL) + 1, sizeof(double));
  pb->nodes = malloc(sizeof(double) * ((size_t)pb->nnode[P] * w + 1));
  pb->tmp = malloc(sizeof(double) * (size_t)(depth + 2) * w);
  pb->red = calloc(w, sizeof(double));
  return pb->slot && pb->nodes && pb->tmp && pb->red;
}

// every process's part of buf to every process: process p's trajectories [k0, k1) own the entries
// [adr[k0], adr[k1]) (adr[ntraj] read as total) times width doubles; 0 if the exchange failed
static int comm_share(fitProblem* pb, double* buf, const int* adr, int total, size_t width) {
  const physFitComm* c = pb->opt->comm;
  size_t *cnt = pb->part, *dsp = pb->part + pb->nproc;
  int n = pb->ds->ntraj;
  for (int p = 0; p < pb->nproc; p++) {
    int k0 = pb->kstart[p], k1 = pb->kstart[p + 1];
    size_t a = (size_t)(k0 < n ? adr[k0] : total), b = (size_t)(k1 < n ? adr[k1] : total);
    dsp[p] = a * width, cnt[p] = (b - a) * width;
  }
  return c->allgatherv(c->ctx, buf, cnt, dsp);
}

// allocate and fill the problem (its tables, then one data and scratch per worker); the model's timestep
// becomes dt_obs / substeps
static physStatus problem_init(fitProblem* pb, physModel* m, const physParamTable* t, const double* theta0,
                               const physDataset* ds, const physFitOptions* opt, physLog* log) {
  memset(pb, 0, sizeof(*pb));
  int nsel, ndata;
  physStatus st = layout(m, t, ds, opt, &nsel, &ndata, log);
  if (st != PHYS_OK) return st;
  int nv = m->nv, nx = 2 * nv, nth = t->ntheta;
  pb->m = m, pb->t = t, pb->ds = ds, pb->opt = opt, pb->log = log, pb->theta0 = theta0;
  pb->nx = nx, pb->ntheta = nth, pb->nsel = nsel, pb->ndata = ndata;
  pb->nxs = nx + m->na;
  pb->sqrt_prior = sqrt(opt->prior);
  pb->nres = ndata + (opt->prior > 0 ? nth : 0);
  pb->nworker = opt->threads < 1 ? 1 : opt->threads > FIT_MAXTHREADS ? FIT_MAXTHREADS : opt->threads;
  if (pb->nworker > ds->ntraj) pb->nworker = ds->ntraj > 0 ? ds->ntraj : 1;
  pb->nvf = phys_fit_start_layout(m, ds, opt, NULL, NULL);
  for (int k = 0; k < ds->ntraj; k++) {
    int T = ds->traj[k].T, h = segment_len(opt, T);
    if (T > 1) pb->hmax = h < T - 1 ? (h > pb->hmax ? h : pb->hmax) : (T - 1 > pb->hmax ? T - 1 : pb->hmax);
    pb->nnuis += segment_count(opt, T) * pb->nvf;
  }
  char* buf = calloc(1, ((size_t)nsel + 2 * (size_t)nv + (size_t)pb->nnuis) * sizeof(double) +
                        ((size_t)nsel + 3 * (size_t)nv + 3 * (size_t)ds->ntraj) * sizeof(int) + 64);
  pb->buf = buf;
  int ok = buf != NULL;
  for (int i = 0; i < pb->nworker; i++) ok = worker_init(&pb->worker[i], pb, i) && ok;
  if (!ok) return phys_error(log, PHYS_ERR_NOMEM, "fit: out of memory for %d residuals", pb->nres);
  pb->wsel = (double*)buf;
  pb->wtie = pb->wsel + nsel;
  pb->dtrial = pb->wtie + 2 * nv;
  int* iw = (int*)(pb->dtrial + pb->nnuis);
  pb->sel = iw, iw += nsel;
  pb->rotgrp = iw, iw += nv;
  pb->resadr = iw, iw += ds->ntraj;
  pb->resn = iw, iw += ds->ntraj;
  pb->nuisadr = iw, iw += ds->ntraj;
  pb->xsel = iw;
  phys_fit_start_layout(m, ds, opt, pb->xsel, pb->wtie);
  // selected coordinates and weights (none for the violation loss: its residuals are its own)
  int n = 0;
  for (int i = 0; i < nx && opt->loss != PHYS_LOSS_VIOLATION; i++) {
    int observed = i < nv ? ds->obs_q[i] : ds->obs_v[i - nv];
    double wi = coord_weight(m, opt, i);
    if (observed && wi > 0) pb->sel[n] = i, pb->wsel[n++] = wi;
  }
  // observed sensor values, weighted 1/noise (the sensor's noise attribute; 1 when it has none)
  for (int a = 0; ds->obs_s && a < ds->nsens && opt->loss != PHYS_LOSS_VIOLATION; a++) {
    if (!ds->obs_s[a]) continue;
    double sd = m->sensor_noise[sensor_of(m, a)];
    pb->sel[n] = nx + a, pb->wsel[n++] = sd > 0 ? 1 / sd : 1;
    pb->nsens++;
  }
  for (int i = 0; i < nv; i++) pb->rotgrp[i] = rot_group(m, i);
  for (int k = 0, a = 0, u = 0; k < ds->ntraj; k++) {
    int T = ds->traj[k].T;
    pb->nuisadr[k] = u;
    u += segment_count(opt, T) * pb->nvf;
    pb->resadr[k] = a;
    pb->resn[k] = T > 1 ? (T - 1) * nsel + segment_count(opt, T) * pb->nvf : 0;
    a += pb->resn[k];
  }
  if (opt->loss == PHYS_LOSS_VIOLATION && opt->viol_metric) {   // fixed at the model as given (violation.h)
    pb->vmetric = malloc(sizeof(double) * (size_t)nv);
    if (!pb->vmetric) return phys_error(log, PHYS_ERR_NOMEM, "fit: out of memory for the velocity metric");
    phys_violation_metric(m, pb->worker[0].d, pb->vmetric);
  }
  if (!comm_ranges(pb)) return phys_error(log, PHYS_ERR_NOMEM, "fit: out of memory");
  if (opt->loss == PHYS_LOSS_VIOLATION && !opt->viol_resolve && !violation_sol_alloc(pb))
    return phys_error(log, PHYS_ERR_NOMEM, "fit: out of memory for the violation loss's inner solutions");
  m->opt.timestep = ds->dt_obs / opt->substeps;
  warn_spacing(ds, log);
  return PHYS_OK;
}

// free the problem's work and data
static void problem_free(fitProblem* pb) {
  for (int i = 0; i < FIT_MAXTHREADS; i++) {
    phys_free_data(pb->worker[i].d);
    free(pb->worker[i].buf);
    pb->worker[i].d = NULL;
    pb->worker[i].buf = NULL;
  }
  free(pb->buf);
  pb->buf = NULL;
  free(pb->vmetric);
  pb->vmetric = NULL;
  free(pb->vsol);
  free(pb->vsoladr);
  pb->vsol = NULL, pb->vsoladr = NULL;
  free(pb->kstart);
  free(pb->part);
  free(pb->outs);
  free(pb->slot);
  free(pb->nodes);
  free(pb->tmp);
  free(pb->red);
  pb->kstart = NULL, pb->part = NULL, pb->outs = NULL;
  pb->slot = pb->nodes = pb->tmp = pb->red = NULL;
}

// CPU seconds spent by the workers in simulation and in derivatives
static void problem_times(const fitProblem* pb, double* fwd, double* grad) {
  *fwd = *grad = 0;
  for (int i = 0; i < pb->nworker; i++) *fwd += pb->worker[i].time_forward, *grad += pb->worker[i].time_gradient;
}

//---------------------------------------------------------------------------------------------------------
// small dense helpers

// inverse of a 3x3 matrix by cofactors: res = M^-1
static void inv3(double res[9], const double a[9]) {
  double c0 = a[4] * a[8] - a[5] * a[7], c1 = a[5] * a[6] - a[3] * a[8], c2 = a[3] * a[7] - a[4] * a[6];
  double det = a[0] * c0 + a[1] * c1 + a[2] * c2, s = 1 / det;
  res[0] = c0 * s, res[1] = (a[2] * a[7] - a[1] * a[8]) * s, res[2] = (a[1] * a[5] - a[2] * a[4]) * s;
  res[3] = c1 * s, res[4] = (a[0] * a[8] - a[2] * a[6]) * s, res[5] = (a[2] * a[3] - a[0] * a[5]) * s;
  res[6] = c2 * s, res[7] = (a[1] * a[6] - a[0] * a[7]) * s, res[8] = (a[0] * a[4] - a[1] * a[3]) * s;
}

// C = A B with A (n x n), B (n x p), all row-major; C may not alias
static void matmul(double* C, const double* A, const double* B, int n, int p) {
  for (int i = 0; i < n; i++) {
    double* c = C + (size_t)i * p;
    memset(c, 0, sizeof(double) * (size_t)p);
    for (int k = 0; k < n; k++) {
      double a = A[(size_t)i * n + k];
      if (a == 0) continue;
      const double* b = B + (size_t)k * p;
      for (int j = 0; j < p; j++) c[j] += a * b[j];
    }
  }
}

// 0.5 |r|^2
static double half_sq(const double* r, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += r[i] * r[i];
  return 0.5 * s;
}

//---------------------------------------------------------------------------------------------------------
// residuals and Jacobians

// J (nsel x nth) = w de/dx_pred S for a sensitivity S (2nv x nth) at the residual wk->e of obs_residual
static void obs_jacobian(fitWorker* wk, const double* S, int nth, double* J) {
  const fitProblem* pb = wk->pb;
  int nv = pb->m->nv;
  const double* e = wk->e;
  int lastgrp = -1;
  for (int s = 0; s < pb->nsel; s++) {
    int i = pb->sel[s], g = i < nv ? pb->rotgrp[i] : -1;   // (i >= 2nv: a sensor value)
    double* row = J + (size_t)s * nth;
    double w = pb->wsel[s];
    if (i >= pb->nx) {
      // a sensor value: de/dx = -H's row
      const double* H = wk->Hs + (size_t)(i - pb->nx) * pb->nx;
      for (int c = 0; c < nth; c++) {
        double v = 0;
        for (int x = 0; x < pb->nx; x++) v += H[x] * S[(size_t)x * nth + c];
        row[c] = -w * v;
      }
      continue;
    }
    if (g < 0) {
      // de_i/dx = -e_i'
      const double* Si = S + (size_t)i * nth;
      for (int c = 0; c < nth; c++) row[c] = -w * Si[c];
      continue;
    }
    // de_rot/dx_rot = -Jr(-phi)^-1, phi = e[g..g+3)
    if (g != lastgrp) {
      double mphi[3] = {-e[g], -e[g + 1], -e[g + 2]}, Jr[9];
      phys_so3_jacobians(Jr, NULL, mphi);
      inv3(wk->G, Jr);
      lastgrp = g;
    }
    const double* Grow = wk->G + 3 * (i - g);
    for (int c = 0; c < nth; c++) {
      double v = 0;
      for (int k = 0; k < 3; k++) v += Grow[k] * S[(size_t)(g + k) * nth + c];
      row[c] = -w * v;
    }
  }
}

// the observed sensors at d's state: es = y_obs - value, with J their derivatives Hs (sensor_deriv.h)
static void obs_sensors(fitWorker* wk, const double* sobs, int with_jac) {
  const fitProblem* pb = wk->pb;
  const physModel* m = pb->m;
  physData* d = wk->d;
  phys_kinematics(m, d);
  phys_com_pos(m, d);
  phys_com_vel(m, d);
  phys_sensor(m, d);
  int last = -1;
  for (int s = pb->nsel - pb->nsens; s < pb->nsel; s++) {
    int a = pb->sel[s] - pb->nx, i = sensor_of(m, a);
    wk->es[a] = sobs[a] - d->sensordata[a];
    if (with_jac && i != last) phys_sensor_deriv(m, d, i, wk->Hs + (size_t)m->sensor_adr[i] * pb->nx);
    last = i;
  }
}

// r (nsel) = w (x_obs (-) x_pred) at d's state, then w (y_obs - sensor) for the observed sensors (sobs: the sample's
// sensor values); with J, J (nsel x ntheta) = w de/dx_pred S; with Jv, Jv (nsel x nvf) = w de/dx_pred S_v (the start
// offsets')
static void obs_residual(fitWorker* wk, const double* qobs, const double* vobs, const double* sobs, double* r,
                         double* J, double* Jv) {
  const fitProblem* pb = wk->pb;
  const physModel* m = pb->m;
  physData* d = wk->d;
  int nv = m->nv;
  double* e = wk->e;
  phys_difference_pos(m, e, 1.0, d->qpos, qobs);
  for (int j = 0; j < m->njnt; j++)
    if (m->jnt_type[j] == PHYS_JNT_HINGE && !m->jnt_limited[j]) e[m->jnt_dofadr[j]] = phys_wrap_angle(e[m->jnt_dofadr[j]]);
  for (int i = 0; i < nv; i++) e[nv + i] = vobs[i] - d->qvel[i];
  if (pb->nsens) obs_sensors(wk, sobs, J || Jv);
  for (int s = 0; s < pb->nsel; s++)
    r[s] = pb->wsel[s] * (pb->sel[s] < pb->nx ? e[pb->sel[s]] : wk->es[pb->sel[s] - pb->nx]);
  if (J) obs_jacobian(wk, wk->S, pb->ntheta, J);
  if (Jv) obs_jacobian(wk, wk->Sv, pb->nvf, Jv);
}

// the inputs held from sample s of tr to the next: its recorded controls (else ctrl, NULL: zero) and its recorded
// applied joint forces (else zero); recorded channels go through the input kinds of t (NULL: none), with their
// sensitivities into sens (t->n, may be NULL; phys_param_input_hold)
static void set_inputs(const physModel* m, physData* d, const physTrajectory* tr, int s, const double* ctrl,
                       const physParamTable* t, double* sens) {
  for (int i = 0; i < m->nu; i++) d->ctrl[i] = tr->ctrl ? tr->ctrl[(size_t)s * m->nu + i] : ctrl ? ctrl[i] : 0;
  for (int i = 0; i < m->nv; i++) d->qfrc_applied[i] = tr->qfrc ? tr->qfrc[(size_t)s * m->nv + i] : 0;
  if (t && t->input)
    phys_param_input_hold(t, m, tr->time, tr->T, s, 0, tr->ctrl, tr->qfrc, d->ctrl, d->qfrc_applied, sens);
}

// the inputs of substep sub > 0 of the interval after sample s: they change only under input kinds
// (phys_param_input_hold: a delayed window)
static void set_substep_inputs(const physModel* m, physData* d, const physTrajectory* tr, int s, int sub,
                               const physParamTable* t, double* sens) {
  if (t && t->input && sub > 0)
    phys_param_input_hold(t, m, tr->time, tr->T, s, sub, tr->ctrl, tr->qfrc, d->ctrl, d->qfrc_applied, sens);
}

// d's state <- sample s of trajectory tr (act: its act columns, 0 without), its contact list empty (the next step starts cold: no warm start),
// the inputs of sample s (set_inputs)
static void set_sample(const physModel* m, physData* d, const physTrajectory* tr, int s, const double* ctrl,
                       const physParamTable* t, double* sens) {
  memcpy(d->qpos, tr->qpos + (size_t)s * m->nq, sizeof(double) * (size_t)m->nq);
  memcpy(d->qvel, tr->qvel + (size_t)s * m->nv, sizeof(double) * (size_t)m->nv);
  if (m->na > 0 && tr->act) memcpy(d->act, tr->act + (size_t)s * m->na, sizeof(double) * (size_t)m->na);
  else if (m->na > 0) memset(d->act, 0, sizeof(double) * (size_t)m->na);   // (no act columns: MuJoCo's initial 0)
  set_inputs(m, d, tr, s, ctrl, t, sens);
  d->time = tr->time[s];
  d->ncon = 0;
}

// the worker's data at sample s of trajectory tr
static void load_sample(fitWorker* wk, const physTrajectory* tr, int s) {
  set_sample(wk->pb->m, wk->d, tr, s, wk->pb->opt->ctrl, &wk->t, wk->insens);
}

// A and P (either NULL: not computed) at d's state from one linearization of the step (step_record.h)
static physStatus linearize(fitWorker* wk, double* A, double* P) {
  const fitProblem* pb = wk->pb;
  physStepRecord rec;
  physStatus st = phys_step_linearize(pb->m, wk->d, &rec);
  if (st == PHYS_OK) st = phys_step_record_jacobian(pb->m, wk->d, &rec, &wk->t, A, NULL, P);
  phys_step_record_free(wk->d, &rec);
  return st;
}

// linearize under an arena guard (arena.h): an exhausted arena returns PHYS_ERR_NOMEM
static physStatus linearize_guarded(fitWorker* wk, double* A, double* P) {
  PHYS_ARENA_CALL(wk->d, "fit: step derivative", linearize(wk, A, P));
}

// E (nxs x nvf) = d x_start / d delta in the tangent coordinates at x_start = x_rec (+) delta (delta = wk->dcur):
// unit columns, except a rotation's block Jr(delta_rot), the right Jacobian of Exp (rot.h); act rows 0 (the
// starts' offsets are (q, v))
static void start_tangent(const fitWorker* wk, double* E) {
  const fitProblem* pb = wk->pb;
  int nvf = pb->nvf, nv = pb->m->nv;
  memset(E, 0, sizeof(double) * (size_t)pb->nxs * nvf);
  for (int c = 0; c < nvf; c++) E[(size_t)pb->xsel[c] * nvf + c] = 1;
  for (int c = 0; c + 2 < nvf; c++) {
    int i = pb->xsel[c], g = i < nv ? pb->rotgrp[i] : -1;
    if (g != i || pb->xsel[c + 1] != g + 1 || pb->xsel[c + 2] != g + 2) continue;   // the first dof of a group
    double Jr[9];
    phys_so3_jacobians(Jr, NULL, wk->dcur + c);
    for (int a = 0; a < 3; a++)
      for (int b = 0; b < 3; b++) E[(size_t)(g + a) * nvf + c + b] = Jr[3 * a + b];
  }
}

// with ws, S <- A S + P at d's state, or S <- P at a segment's first step (S = 0); with wv, the start states'
// S_v <- A S_v, or S_v <- A E at the first step (E = d x_start / d delta, start_tangent: S_v = dx/d delta is the
// product of the step Jacobians). A (computed only when needed) and P from one linearization of the step,
// dispatched once on its kind (step_record.h; with the time-of-impact correction where the step's Jacobians have
// it). d's contact lists, the next phys_step's warm start, are left as they are
static physStatus sens_step(fitWorker* wk, int k, int s, int first, int ws, int wv) {
  const fitProblem* pb = wk->pb;
  physData* d = wk->d;
  int nx = pb->nxs, nth = pb->ntheta, nvf = pb->nvf;   // (the step derivatives' state: 2nv + na)
  double* A = wv || (ws && !first) ? wk->A : NULL;
  physStatus st = linearize_guarded(wk, A, ws ? wk->P : NULL);
  if (st != PHYS_OK)
    return phys_error(&wk->log, st, "fit: the step derivative failed on trajectory %d (%s) after sample %d, time %.9g: %s (%s)",
                      k, pb->ds->traj[k].source, s, d->time, phys_status_str(st), d->lastwarning);
  if (ws && first) {
    memcpy(wk->S, wk->P, sizeof(double) * (size_t)nx * nth);
  } else if (ws) {
    matmul(wk->S2, wk->A, wk->S, nx, nth);
    for (size_t i = 0; i < (size_t)nx * nth; i++) wk->S[i] = wk->S2[i] + wk->P[i];
  }
  if (wv && first) {
    start_tangent(wk, wk->Sv2);
    matmul(wk->Sv, wk->A, wk->Sv2, nx, nvf);
  } else if (wv) {
    matmul(wk->Sv2, wk->A, wk->Sv, nx, nvf);
    memcpy(wk->Sv, wk->Sv2, sizeof(double) * (size_t)nx * nvf);
  }
  return PHYS_OK;
}

// one phys_step; PHYS_ERR_NUMERIC if it was rejected (non-finite state or singular matrix: phys_step then
// restores the state and the time). Other warnings of the step (a contact solver's inexact solution) are
// counted and reported once at the end of the fit: those of the simulations whose results an evaluation takes
// (not of a start offset's trials: the one taken is simulated again with its sensitivities).
static physStatus fwd_step(fitWorker* wk, int k, int s) {
  physData* d = wk->d;
  int nw = d->nwarning;
  double t0 = d->time;
  phys_step(wk->pb->m, d);
  if (d->nwarning != nw && d->time == t0)
    return phys_error(&wk->log, PHYS_ERR_NUMERIC, "fit: simulation failed on trajectory %d (%s) after sample %d, time %.9g: %s",
                      k, wk->pb->ds->traj[k].source, s, d->time, d->lastwarning);
  if (d->nwarning != nw && !wk->trial && wk->nsimwarn++ == 0) {
    wk->warn_k = k, wk->warn_s = s;
    snprintf(wk->simwarn, sizeof(wk->simwarn), "trajectory %d after sample %d: %.200s", k, s, d->lastwarning);
  }
  return PHYS_OK;
}

// a segment's start x_rec (+) delta in place (qpos, qvel: the sample's): the fitted coordinates (pb->xsel) offset by
// delta (nvf), positions by phys_integrate_pos (e: nv scratch), velocities added
static void offset_start(const fitProblem* pb, const double* delta, double* qpos, double* qvel, double* e) {
  const physModel* m = pb->m;
  int nv = m->nv, npos = 0;
  memset(e, 0, sizeof(double) * (size_t)nv);
  for (int c = 0; c < pb->nvf; c++) {
    int i = pb->xsel[c];
    if (i < nv) e[i] = delta[c], npos++;
    else qvel[i - nv] += delta[c];
  }
  if (npos) phys_integrate_pos(m, qpos, e, 1.0);
}

// simulate the segment of trajectory k from sample s over h observations: residuals r (h x nsel), with J their
// Jacobian (h nsel x ntheta); with delta (nvf) from x_rec (+) delta (the fitted coordinates offset: positions by
// phys_integrate_pos, velocities added) instead of the sample x_rec, and with Jv the residuals' Jacobian in delta
// (h nsel x nvf)
static physStatus segment(fitWorker* wk, int k, int s, int h, const double* delta, double* r, double* J,
                          double* Jv) {
  const fitProblem* pb = wk->pb;
  const physTrajectory* tr = &pb->ds->traj[k];
  const physModel* m = pb->m;
  int nth = pb->ntheta, nsel = pb->nsel, nvf = pb->nvf;
  load_sample(wk, tr, s);
  wk->dcur = delta;
  if (delta) offset_start(pb, delta, wk->d->qpos, wk->d->qvel, wk->e);
  for (int j = 1; j <= h; j++) {
    if (j > 1) set_inputs(m, wk->d, tr, s + j - 1, pb->opt->ctrl, &wk->t, wk->insens);   // the hold of sample s + j - 1
    for (int sub = 0; sub < pb->opt->substeps; sub++) {
      set_substep_inputs(m, wk->d, tr, s + j - 1, sub, &wk->t, wk->insens);
      if (J || Jv) {
        double t0 = now_sec();
        physStatus st = sens_step(wk, k, s + j - 1, j == 1 && sub == 0, J != NULL, Jv != NULL);
        wk->wall_gradient += now_sec() - t0;
        if (st != PHYS_OK) return st;
      }
      double t0 = now_sec();
      physStatus st = fwd_step(wk, k, s + j - 1);
      wk->wall_forward += now_sec() - t0;
      if (st != PHYS_OK) return st;
    }
    int o = s + j;
    obs_residual(wk, tr->qpos + (size_t)o * m->nq, tr->qvel + (size_t)o * m->nv,
                 tr->sens ? tr->sens + (size_t)o * pb->ds->nsens : NULL, r + (size_t)(j - 1) * nsel,
                 J ? J + (size_t)(j - 1) * nsel * nth : NULL, Jv ? Jv + (size_t)(j - 1) * nsel * nvf : NULL);
  }
  return PHYS_OK;
}

#define FIT_VMAX_IT 8       // Gauss-Newton steps of a segment's start offset per evaluation
#define FIT_VMAX_HALF 4     // halvings of a step that does not lower the segment's loss
#define FIT_VSTOP 1e-6      // a step promising less than this of the segment's loss ends its fit (the real cube:
                            // 1e-9 gives the same fit to 3e-4 in friction at twice the time; a chord method, Jd kept
                            // from delta = 0, was 5x faster but left the loss 6 % higher: contact segments are
                            // too nonlinear for it)

// the segment's loss 0.5 |r|^2 + 0.5 |wtie delta|^2 at start offset delta (nvf), r its nr data residuals
static double seg_loss(const fitProblem* pb, const double* r, int nr, const double* delta) {
  double l = half_sq(r, nr);
  for (int c = 0; c < pb->nvf; c++) {
    double t = pb->wtie[c] * delta[c];
    l += 0.5 * t * t;
  }
  return l;
}

// the Gauss-Newton system of the segment's start offset delta: Mv = Jv'Jv + diag(wtie^2) factored (Cholesky),
// gv = Jv'r + wtie^2 delta (the tie rows -wtie delta); 0 if Mv is not positive definite
static int vsystem(fitWorker* wk, const double* Jv, const double* r, int nr, const double* delta) {
  const fitProblem* pb = wk->pb;
  int nvf = pb->nvf;
  for (int a = 0; a < nvf; a++) {
    double w2 = pb->wtie[a] * pb->wtie[a], g = w2 * delta[a];
    for (int i = 0; i < nr; i++) g += Jv[(size_t)i * nvf + a] * r[i];
    wk->gv[a] = g;
    for (int b = 0; b <= a; b++) {
      double x = a == b ? w2 : 0;
      for (int i = 0; i < nr; i++) x += Jv[(size_t)i * nvf + a] * Jv[(size_t)i * nvf + b];
      wk->Mv[a * nvf + b] = wk->Mv[b * nvf + a] = x;
    }
  }
  return phys_chol_factor(wk->Mv, nvf, 0) == nvf;
}

// Gauss-Newton steps of the segment's start offset from wk->vb (r, wk->Jvb: its residuals and their Jacobian in
// delta there; on return the best delta's, r and wk->Jvb consistent with wk->vb)
static void segment_start_steps(fitWorker* wk, int k, int s, int h, double* r) {
  const fitProblem* pb = wk->pb;
  int nvf = pb->nvf, nr = h * pb->nsel;
  double best = seg_loss(pb, r, nr, wk->vb);
  for (int it = 0; it < FIT_VMAX_IT; it++) {
    if (!vsystem(wk, wk->Jvb, r, nr, wk->vb)) break;
    phys_chol_solve(wk->dv, wk->Mv, wk->gv, nvf);   // dv = Md^-1 g: the step is -dv
    double pred = 0;
    for (int c = 0; c < nvf; c++) pred += 0.5 * wk->gv[c] * wk->dv[c];
    if (!(pred > FIT_VSTOP * best)) break;
    int accepted = 0;
    for (int half = 0, scale = 1; half <= FIT_VMAX_HALF && !accepted; half++, scale *= 2) {
      for (int c = 0; c < nvf; c++) wk->vt[c] = wk->vb[c] - wk->dv[c] / scale;
      wk->trial = 1;
      physStatus st = segment(wk, k, s, h, wk->vt, wk->rt, NULL, NULL);
      wk->trial = 0;
      if (st != PHYS_OK) {
        memset(&wk->log, 0, sizeof(wk->log));   // a trial that cannot be simulated: halve the step
        continue;
      }
      double l = seg_loss(pb, wk->rt, nr, wk->vt);
      if (!(l < best)) continue;
      // accepted: again with the sensitivities (the same residuals: they do not change the simulation; if they
      // cannot be computed, the trial fails as one that cannot be simulated)
      if (segment(wk, k, s, h, wk->vt, wk->rt, NULL, wk->Jvt) != PHYS_OK) {
        memset(&wk->log, 0, sizeof(wk->log));
        continue;
      }
      accepted = 1, best = l;
      memcpy(wk->vb, wk->vt, sizeof(double) * (size_t)nvf);
      memcpy(r, wk->rt, sizeof(double) * (size_t)nr);
      memcpy(wk->Jvb, wk->Jvt, sizeof(double) * (size_t)nr * nvf);
    }
    if (!accepted) break;
  }
}

// the segment with its start state fitted (the header's *Segment start states*): delta from 0 by Gauss-Newton
// steps in delta alone (each halved up to FIT_VMAX_HALF times until the segment's loss falls; a trial simulated
// without sensitivities, the accepted one again with them); the best delta into dslot (nvf), r (h nsel) and rtie
// (nvf) there; with reuse, delta = dslot (the last evaluation's, at the same theta) without steps. With J, one
// more simulation there with J and Jd, and the reduced Jacobian J - Jd X of the data rows and wtie X of the tie
// rows (Jtie, nvf x ntheta), X = Md^-1 Jd'J. A trial delta whose simulation fails is halved; a failure at the
// recorded sample is the segment's error
static physStatus segment_start_fit(fitWorker* wk, int k, int s, int h, double* dslot, int reuse, double* r,
                                    double* J, double* rtie, double* Jtie) {
  const fitProblem* pb = wk->pb;
  int nvf = pb->nvf, nth = pb->ntheta, nr = h * pb->nsel;
  physStatus st;
  if (reuse) {
    memcpy(wk->vb, dslot, sizeof(double) * (size_t)nvf);
  } else {
    memset(wk->vb, 0, sizeof(double) * (size_t)nvf);
    if ((st = segment(wk, k, s, h, wk->vb, r, NULL, wk->Jvb)) != PHYS_OK) return st;
    segment_start_steps(wk, k, s, h, r);
    memcpy(dslot, wk->vb, sizeof(double) * (size_t)nvf);
  }
  for (int c = 0; c < nvf; c++) rtie[c] = -pb->wtie[c] * wk->vb[c];
  if (!J) return PHYS_OK;
  // variable projection at the best delta: J and Jd there (the same r), X = Md^-1 Jd'J
  if ((st = segment(wk, k, s, h, wk->vb, r, J, wk->Jvb)) != PHYS_OK) return st;
  if (!vsystem(wk, wk->Jvb, r, nr, wk->vb))
    return phys_error(&wk->log, PHYS_ERR_NUMERIC, "fit: trajectory %d (%s), segment from sample %d: the start "
                      "state's normal matrix is singular", k, pb->ds->traj[k].source, s);
  for (int a = 0; a < nvf; a++)
    for (int c = 0; c < nth; c++) {
      double x = 0;
      for (int i = 0; i < nr; i++) x += wk->Jvb[(size_t)i * nvf + a] * J[(size_t)i * nth + c];
      wk->Xv[(size_t)c * nvf + a] = x;   // column c of Jv'J, stored as row c
    }
  phys_chol_solve_multi(wk->Xv, wk->Mv, wk->Xv, nvf, nth);   // row c of Xv: X[:, c]
  for (int i = 0; i < nr; i++)
    for (int c = 0; c < nth; c++) {
      double x = 0;
      for (int a = 0; a < nvf; a++) x += wk->Jvb[(size_t)i * nvf + a] * wk->Xv[(size_t)c * nvf + a];
      J[(size_t)i * nth + c] -= x;
    }
  for (int a = 0; a < nvf; a++)   // the tie rows: 0 - (-wtie) X
    for (int c = 0; c < nth; c++) Jtie[(size_t)a * nth + c] = pb->wtie[a] * wk->Xv[(size_t)c * nvf + a];
  return PHYS_OK;
}

// the violation loss's residuals of trajectory k (nsel = nv + 2 per transition s -> s + 1): d at sample s + 1
// with the inputs held from sample s. The inner solutions: a residual-only evaluation writes them into pb->vsol;
// the evaluation with J at the same point (pb->reuse_starts: LM's accepted trial) takes them from there
static physStatus violation_traj(fitWorker* wk, int k, double* r, double* J) {
  const fitProblem* pb = wk->pb;
  const physTrajectory* tr = &pb->ds->traj[k];
  const physModel* m = pb->m;
  int nth = pb->ntheta, nsel = pb->nsel;
  physViolationWeights w;
  phys_violation_defaults(&w);
  w.comp = pb->opt->viol_comp, w.diss = pb->opt->viol_diss, w.pen = pb->opt->viol_pen;
  w.envelope = pb->opt->viol_envelope;
  w.metric = pb->vmetric;
  for (int s = 0; s + 1 < tr->T; s++) {
    set_sample(m, wk->d, tr, s + 1, pb->opt->ctrl, &wk->t, wk->insens);
    set_inputs(m, wk->d, tr, s, pb->opt->ctrl, &wk->t, wk->insens);
    double t0 = now_sec();
    double* sol = pb->vsol ? pb->vsol + pb->vsoladr[k] + (size_t)s * phys_violation_solsize(m) : NULL;
    int reuse = J && pb->vsol_reuse;
    physStatus st = phys_violation_residuals_sol(m, wk->d, &wk->t, tr->qvel + (size_t)s * m->nv, pb->ds->dt_obs, &w,
                                                 r + (size_t)s * nsel, J ? J + (size_t)s * nsel * nth : NULL, NULL,
                                                 NULL, sol, reuse);
    *(J ? &wk->wall_gradient : &wk->wall_forward) += now_sec() - t0;
    if (st != PHYS_OK)
      return phys_error(&wk->log, st, "fit: violation loss: trajectory %d (%s), transition %d -> %d: %s", k,
                        tr->source, s, s + 1, st == PHYS_ERR_NOMEM ? "scratch arena exhausted" :
                        "the mass matrix is not positive definite or the inner solve failed");
  }
  return PHYS_OK;
}

// the sums of rows [a, e) of r and J (n columns) as want asks (fitReduce) into out: r'r, J'r, J'J in row order
// (zero entries of J skipped)
static void rows_partial(const double* r, const double* J, size_t a, size_t e, int n, int want, double* out) {
  memset(out, 0, sizeof(double) * red_width(n, want < RED_NORMAL ? want : RED_NORMAL));
  double *g = out + 1, *H = g + n;
  for (size_t k = a; k < e; k++) {
    out[0] += r[k] * r[k];
    const double* row = J ? J + k * (size_t)n : NULL;
    for (int i = 0; row && want >= RED_GRAD && i < n; i++) {
      if (row[i] == 0) continue;
      g[i] += row[i] * r[k];
      if (want >= RED_NORMAL)
        for (int j = 0; j < n; j++) H[(size_t)i * n + j] += row[i] * row[j];
    }
  }
}

// a leaf of the tree: own trajectory k's slot as want asks, with RED_STATS g_k g_k' after it
static void tree_leaf(const fitProblem* pb, int k, int want, double* out) {
  int n = pb->ntheta;
  const double* sl = pb->slot + (size_t)(k - pb->k0) * red_width(n, RED_NORMAL);
  memcpy(out, sl, sizeof(double) * red_width(n, want < RED_NORMAL ? want : RED_NORMAL));
  if (want < RED_STATS) return;
  double* M = out + red_width(n, RED_NORMAL);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) M[(size_t)i * n + j] = sl[1 + i] * sl[1 + j];
}

// the tree's sum over own trajectories [lo, hi) into out: a leaf's slot, else left half + right half (the halves
// split at lo + (hi - lo) / 2: the tree depends on the trajectory count alone); depth: the node's, for its scratch
static void tree_local(const fitProblem* pb, int lo, int hi, int depth, int want, double* out) {
  if (hi - lo == 1) {
    tree_leaf(pb, lo, want, out);
    return;
  }
  size_t w = red_width(pb->ntheta, want);
  int mid = lo + (hi - lo) / 2;
  double* right = pb->tmp + (size_t)depth * red_width(pb->ntheta, RED_STATS);
  tree_local(pb, lo, mid, depth + 1, want, out);
  tree_local(pb, mid, hi, depth + 1, want, right);
  for (size_t i = 0; i < w; i++) out[i] += right[i];
}

// this process's maximal whole nodes of [lo, hi), in tree order, into *out (advanced)
static void tree_collect(const fitProblem* pb, int lo, int hi, int depth, int want, double** out) {
  int p = node_owner(pb, lo, hi);
  if (p >= 0) {
    if (p == pb->rank) tree_local(pb, lo, hi, depth, want, *out), *out += red_width(pb->ntheta, want);
    return;
  }
  int mid = lo + (hi - lo) / 2;
  tree_collect(pb, lo, mid, depth + 1, want, out);
  tree_collect(pb, mid, hi, depth + 1, want, out);
}

// the tree's sum of [lo, hi) from every process's nodes (pb->nodes, process p's from node nnode[0] + ... +
// nnode[p - 1]; cur[p]: its next) into out
static void tree_combine(const fitProblem* pb, int lo, int hi, int depth, int want, int* cur, double* out) {
  size_t w = red_width(pb->ntheta, want);
  int p = node_owner(pb, lo, hi);
  if (p >= 0) {
    memcpy(out, pb->nodes + (size_t)cur[p]++ * w, sizeof(double) * w);
    return;
  }
  int mid = lo + (hi - lo) / 2;
  double* right = pb->tmp + (size_t)depth * red_width(pb->ntheta, RED_STATS);
  tree_combine(pb, lo, mid, depth + 1, want, cur, out);
  tree_combine(pb, mid, hi, depth + 1, want, cur, right);
  for (size_t i = 0; i < w; i++) out[i] += right[i];
}

// the evaluation's reduction into pb->red (fit.c's *Reduction*): every process's nodes of the fixed tree over the
// trajectories, exchanged, combined up the same tree, then the prior rows [ndata, nres) of r and J added; the same
// bits for any number of processes and threads. 0 if the exchange failed
static int reduce(fitProblem* pb, const double* r, const double* J) {
  int P = pb->nproc, n = pb->ntheta, G = pb->ds->ntraj, want = pb->want;
  size_t w = red_width(n, want);
  int* c = pb->cur;
  for (int p = 0, a = 0; p < P; p++) c[p] = a, a += pb->nnode[p];
  double* mine = pb->nodes + (size_t)c[pb->rank] * w;
  tree_collect(pb, 0, G, 1, want, &mine);
  if (P > 1) {
    size_t *cnt = pb->part, *dsp = pb->part + P;
    for (int p = 0; p < P; p++) cnt[p] = (size_t)pb->nnode[p] * w, dsp[p] = (size_t)c[p] * w;
    const physFitComm* cm = pb->opt->comm;
    if (!cm->allgatherv(cm->ctx, pb->nodes, cnt, dsp)) return 0;
  }
  tree_combine(pb, 0, G, 1, want, c, pb->red);
  if (pb->nres > pb->ndata) {   // the prior rows
    double* pr = pb->tmp;
    rows_partial(r, J, (size_t)pb->nheld, (size_t)(pb->nheld + n), n, want, pr);
    for (size_t i = 0; i < red_width(n, want < RED_NORMAL ? want : RED_NORMAL); i++) pb->red[i] += pr[i];
  }
  return 1;
}

// own trajectory k's sums r'r, J'r, J'J over its rows (data and tie rows) as the evaluation wants, into its slot
static void traj_slot(const fitProblem* pb, int k, const double* r, const double* J) {
  size_t a = (size_t)(pb->resadr[k] - pb->off);
  rows_partial(r, J, a, a + (size_t)pb->resn[k], pb->ntheta, pb->want,
               pb->slot + (size_t)(k - pb->k0) * red_width(pb->ntheta, RED_NORMAL));
}

// a worker's share of an evaluation: trajectories index, index + nworker, ... (stops at its first failure)
static void* worker_trajs(void* arg) {
  fitWorker* wk = arg;
  const fitProblem* pb = wk->pb;
  const physDataset* ds = pb->ds;
  int nth = pb->ntheta, nsel = pb->nsel;
  for (int k = pb->k0 + wk->index; k < pb->k1; k += pb->nworker) {
    if (pb->opt->loss == PHYS_LOSS_VIOLATION) {
      size_t a = (size_t)(pb->resadr[k] - pb->off);
      physStatus st = ds->traj[k].T > 1 ? violation_traj(wk, k, wk->r + a, wk->J ? wk->J + a * nth : NULL) : PHYS_OK;
      if (st != PHYS_OK) {
        wk->status = st, wk->fail_k = k;
        return NULL;
      }
      traj_slot(pb, k, wk->r, wk->J);
      continue;
    }
    int T = ds->traj[k].T, h = segment_len(pb->opt, T);
    size_t tie = (size_t)(pb->resadr[k] - pb->off) + (size_t)(T - 1) * nsel;   // the tie rows of the fitted starts
    size_t u = (size_t)pb->nuisadr[k];                              // and their unknowns
    for (int s = 0; s + 1 < T; s += h, tie += (size_t)pb->nvf, u += (size_t)pb->nvf) {
      int hh = s + h < T ? h : T - 1 - s;
      size_t a = (size_t)(pb->resadr[k] - pb->off) + (size_t)s * nsel;
      physStatus st = pb->nvf ? segment_start_fit(wk, k, s, hh, pb->dtrial + u, pb->reuse_starts, wk->r + a,
                                                  wk->J ? wk->J + a * nth : NULL, wk->r + tie,
                                                  wk->J ? wk->J + tie * nth : NULL)
                              : segment(wk, k, s, hh, NULL, wk->r + a, wk->J ? wk->J + a * nth : NULL, NULL);
      if (st != PHYS_OK) {
        wk->status = st, wk->fail_k = k;
        return NULL;
      }
    }
    traj_slot(pb, k, wk->r, wk->J);
  }
  return NULL;
}

// worker_trajs with the thread's CPU time added to time_forward and time_gradient, split as the wall time inside
// the steps and derivatives was (the rest of the run: residuals and bookkeeping, split the same way)
static void* worker_run(void* arg) {
  fitWorker* wk = arg;
  double c0 = thread_cpu_sec(), f0 = wk->wall_forward, g0 = wk->wall_gradient;
  worker_trajs(wk);
  double c = thread_cpu_sec() - c0, f = wk->wall_forward - f0, g = wk->wall_gradient - g0;
  if (f + g > 0) wk->time_forward += c * f / (f + g), wk->time_gradient += c * g / (f + g);
  return NULL;
}

// this process's outcome of the evaluation from its workers': the failure of the lowest trajectory, the step
// warnings and the first of them (lowest trajectory, then sample)
static void outcome_local(const fitProblem* pb, fitOutcome* o) {
  memset(o, 0, sizeof(*o));
  o->status = PHYS_OK, o->fail_k = pb->ds->ntraj;
  const fitWorker* first = NULL;
  for (int i = 0; i < pb->nworker; i++) {
    const fitWorker* wk = &pb->worker[i];
    o->nsimwarn += wk->nsimwarn;
    if (wk->nsimwarn &&
        (!first || wk->warn_k < first->warn_k || (wk->warn_k == first->warn_k && wk->warn_s < first->warn_s)))
      first = wk;
    if (wk->status != PHYS_OK && wk->fail_k < o->fail_k) {
      o->status = wk->status, o->fail_k = wk->fail_k;
      memcpy(o->error, wk->log.error, sizeof o->error);
    }
  }
  if (first) {
    o->warn_k = first->warn_k, o->warn_s = first->warn_s;
    memcpy(o->simwarn, first->simwarn, sizeof(o->simwarn));
  }
}

// the processes' outcomes merged into *o (the same on every process): the failure of the lowest trajectory, the
// warnings summed, the first warning of the lowest process that had one (processes hold increasing trajectories).
// The counts (5 ints a process) are exchanged first; the messages only when there is a failure, or warnings and
// the fit has kept none yet (evaluate keeps the first). 0 if the exchange failed
static int comm_outcome(fitProblem* pb, fitOutcome* o) {
  const physFitComm* c = pb->opt->comm;
  int mine[5] = {o->status, o->fail_k, o->nsimwarn, o->warn_k, o->warn_s}, *all = pb->outi, msg = 0, first = -1;
  if (!c->allgather(c->ctx, mine, all, sizeof mine)) return 0;
  o->nsimwarn = 0;
  for (int p = 0; p < c->size; p++) {
    const int* q = all + 5 * p;
    if (q[2] && first < 0) first = p;
    o->nsimwarn += q[2];
    msg |= q[0] != PHYS_OK || (q[2] && pb->nsimwarn == 0);
  }
  if (msg && !c->allgather(c->ctx, o, pb->outs, sizeof(*o))) return 0;
  if (first >= 0) {
    o->warn_k = all[5 * first + 3], o->warn_s = all[5 * first + 4];
    if (msg) memcpy(o->simwarn, pb->outs[first].simwarn, sizeof(o->simwarn));
  }
  for (int p = 0; p < c->size; p++)
    if (all[5 * p] != PHYS_OK && all[5 * p + 1] < o->fail_k) {   // (msg is set: the messages were exchanged)
      o->status = all[5 * p], o->fail_k = all[5 * p + 1];
      memcpy(o->error, pb->outs[p].error, sizeof(o->error));
    }
  return 1;
}

// the residuals r (nres) at theta and their Jacobian J (nres x ntheta, may be NULL), and want's reduction of
// them into pb->red (fitReduce; J needed from RED_GRAD); theta is written into the model first. Trajectories are
// shared among the workers (threads) and the processes; every segment starts from its sample with empty contact
// lists, and the reduction follows a tree fixed by the trajectories, so pb->red is the same, bit for bit, for any
// number of threads and processes, and so are the error (the lowest failing trajectory) and the first step
// warning (lowest trajectory, sample). r and J hold this process's rows (its trajectories') and the prior rows;
// with pb->rows every process's.
static physStatus evaluate(fitProblem* pb, const double* theta, double* r, double* J, int want) {
  physStatus st = phys_param_set(pb->t, pb->m, theta);
  if (st != PHYS_OK) return phys_error(pb->log, st, "fit: theta is not a valid model (phys_param_set)");
  pb->neval++;
  int nw = pb->nworker, nth = pb->ntheta;
  for (int i = 0; i < nw; i++) {
    fitWorker* wk = &pb->worker[i];
    memset(&wk->log, 0, sizeof(wk->log));
    wk->status = PHYS_OK, wk->fail_k = pb->ds->ntraj, wk->nsimwarn = 0, wk->r = r, wk->J = J;
  }
  pb->want = J ? want : RED_LOSS;
  pb->off = pb->rows ? 0 : pb->row0, pb->nheld = pb->rows ? pb->ndata : pb->nown;
  pb->vsol_reuse = J && pb->reuse_starts && pb->vsol_ok, pb->vsol_ok = 0;   // (set again when every solve succeeded)
  pthread_t th[FIT_MAXTHREADS];
  int started[FIT_MAXTHREADS] = {0};
  for (int i = 1; i < nw; i++) started[i] = pthread_create(&th[i], NULL, worker_run, &pb->worker[i]) == 0;
  for (int i = 1; i < nw; i++)
    if (!started[i]) worker_run(&pb->worker[i]);   // no thread: run it here
  worker_run(&pb->worker[0]);
  for (int i = 1; i < nw; i++)
    if (started[i]) pthread_join(th[i], NULL);
  // merge: step warnings, then the failure of the lowest trajectory (of every process's)
  fitOutcome out;
  outcome_local(pb, &out);
  int shared = pb->nproc > 1;
  if (shared && !comm_outcome(pb, &out))
    return phys_error(pb->log, PHYS_ERR_IO, "fit: the processes could not exchange an evaluation's outcome");
  if (out.nsimwarn && pb->nsimwarn == 0) memcpy(pb->simwarn, out.simwarn, sizeof(pb->simwarn));
  pb->nsimwarn += out.nsimwarn;
  if (out.status != PHYS_OK) return phys_error(pb->log, out.status, "%s", out.error);
  pb->vsol_ok = pb->vsol != NULL;
  // pb->rows: every process's rows, Jacobian rows and segment start offsets to every process
  if (shared && pb->rows && !(comm_share(pb, r, pb->resadr, pb->ndata, 1) &&
                  (!J || comm_share(pb, J, pb->resadr, pb->ndata, (size_t)nth)) &&
                  (!pb->nvf || comm_share(pb, pb->dtrial, pb->nuisadr, pb->nnuis, 1))))
    return phys_error(pb->log, PHYS_ERR_IO, "fit: the processes could not exchange their residuals");
  // prior rows sqrt(prior) (theta - theta0)
  if (pb->nres > pb->ndata) {
    for (int i = 0; i < nth; i++) {
      r[pb->nheld + i] = pb->sqrt_prior * (theta[i] - pb->theta0[i]);
      if (J) {
        double* row = J + (size_t)(pb->nheld + i) * nth;
        memset(row, 0, sizeof(double) * (size_t)nth);
        row[i] = pb->sqrt_prior;
      }
    }
  }
  if (!reduce(pb, r, J))
    return phys_error(pb->log, PHYS_ERR_IO, "fit: the processes could not exchange their sums");
  return PHYS_OK;
}

//---------------------------------------------------------------------------------------------------------
// optimizers: each runs from theta (in/out) within [lo, hi], records its history, returns its iterations

typedef struct fitRun_ {
  double *theta, *r, *J, *g, *H, *D, *Hf, *gf, *step, *trial, *mom, *vel, *best;
  int *free_;
  double* wa;               // L-BFGS-B: work array (lbfgsb_nwa(n) doubles) and iwa (3n ints, then nbd: n ints)
  int* iwa;
  double* loss_hist;        // max_iter + 1
  double* theta_hist;       // (max_iter + 1) x ntheta
  int iterations;
  double loss;
  int stop;                 // physFitStop
  physOptState o;           // what an iteration leaves for the next besides the arrays (checkpointed)
  int resumed;              // 1: o and the arrays were read from a checkpoint, the optimizer continues from them
} fitRun;

// the checkpoint of a fit: its file, the state's table (pointing at the run's arrays and the result's best
// start) and the multi-start bookkeeping it saves with each iteration
typedef struct fitCkpt_ {
  const char* path;
  physFitState st;
  const physRng* rng;       // the draws after the current start's
  const double* best_loss;  // best loss of the finished starts
  const physFitResult* res; // their best start's iterations, loss0, start
  int failed;               // a checkpoint could not be written or the hook stopped the fit: the fit ends
} fitCkpt;

// evaluate without touching the caller's log (a trial point may fail: the optimizer backs off)
static physStatus eval_quiet(fitProblem* pb, const double* theta, double* r, double* J, int want) {
  physLog scratch = {0}, *keep = pb->log;
  pb->log = &scratch;
  physStatus st = evaluate(pb, theta, r, J, want);
  pb->log = keep;
  return st;
}

// the last evaluation's loss 0.5 r'r, and its J'r into g and J'J into H (each may be NULL) from pb->red
static double reduced(const fitProblem* pb, double* g, double* H) {
  int n = pb->ntheta;
  if (g) memcpy(g, pb->red + 1, sizeof(double) * (size_t)n);
  if (H) memcpy(H, pb->red + 1 + n, sizeof(double) * (size_t)n * n);
  return 0.5 * pb->red[0];
}

// loss at a trial point (HUGE_VAL if theta is not a valid model or the simulation fails there: the
// optimizer backs off); residuals into r; the caller's log is not touched
static double trial_loss(fitProblem* pb, const double* theta, double* r) {
  return eval_quiet(pb, theta, r, NULL, RED_LOSS) == PHYS_OK ? reduced(pb, NULL, NULL) : HUGE_VAL;
}

// record iteration it's loss and theta
static void record(fitProblem* pb, fitRun* run, int it, double loss, const double* theta) {
  run->o.nhist = it + 1;
  run->loss_hist[it] = loss;
  memcpy(run->theta_hist + (size_t)it * pb->ntheta, theta, sizeof(double) * (size_t)pb->ntheta);
}

// one progress line on stderr
static void progress(const fitProblem* pb, const char* name, int start, int it, double loss, double extra,
                     const double* theta) {
  if (!pb->opt->verbose) return;
  static const char* label[] = {"lambda", "pgnorm", "lr"};
  fprintf(stderr, "fit %s start %d iter %4d loss %.9e %s %.3g theta", name, start, it, loss,
          label[pb->opt->optimizer], extra);
  for (int i = 0; i < pb->ntheta && i < 8; i++) fprintf(stderr, " %.9g", theta[i]);
  fprintf(stderr, pb->ntheta > 8 ? " ...\n" : "\n");
}

// write the state after an iteration of start `start` (no checkpoint: nothing), then call the test hook with
// the last recorded iteration; PHYS_ERR_IO if it could not be written, PHYS_ERR_ARG if the hook stopped the fit
static physStatus checkpoint(fitProblem* pb, fitRun* run, int start) {
  fitCkpt* ck = pb->ck;
  if (!ck) return PHYS_OK;
  physFitState* st = &ck->st;
  st->start = start;
  memcpy(st->rng, ck->rng->s, sizeof(st->rng));
  st->best_loss = *ck->best_loss;
  st->best_start = ck->res->start;
  st->best_iterations = *ck->best_loss < HUGE_VAL ? ck->res->iterations : -1;
  st->best_stop = ck->res->stop;
  st->best_loss0 = ck->res->loss0;
  st->run = run->o;
  st->nsimwarn = pb->nsimwarn;
  memcpy(st->simwarn, pb->simwarn, sizeof(st->simwarn));
  problem_times(pb, &st->time_forward, &st->time_gradient);
  const physFitComm* c = pb->opt->comm;   // one file: the first process writes it
  physStatus s = c && c->rank > 0 ? PHYS_OK : phys_ckpt_save(ck->path, st, pb->log);
  ck->failed = s != PHYS_OK;
  if (s != PHYS_OK) return s;
  const physFitOptions* o = pb->opt;
  if (o->on_checkpoint && (ck->failed = o->on_checkpoint(o->on_checkpoint_ctx, start, run->o.nhist - 1)))
    return phys_error(pb->log, PHYS_ERR_ARG, "fit: stopped after the checkpoint of start %d, iteration %d", start,
                      run->o.nhist - 1);
  return PHYS_OK;
}

// theta <- clamp(theta, lo, hi)
static void project(double* theta, const double* lo, const double* hi, int n) {
  for (int i = 0; i < n; i++) theta[i] = fmin(fmax(theta[i], lo[i]), hi[i]);
}

// LM's free set into run->free_: coordinates not at a bound with the gradient pushing outwards; returns its size
static int lm_free_set(fitRun* run, const double* th, const double* lo, const double* hi, int n) {
  int nf = 0;
  for (int i = 0; i < n; i++) {
    int held = (th[i] <= lo[i] && run->g[i] > 0) || (th[i] >= hi[i] && run->g[i] < 0);
    if (!held) run->free_[nf++] = i;
  }
  return nf;
}

// LM's trial point: (H_FF + lambda D_F) delta_F = -g_F (D floored at 1e-12 dmax), theta+ = P(theta + delta)
// into run->trial, the projected step into run->step, the model's predicted decrease
// pred = -(g' s + s' H s / 2) and the largest relative change smax; 0 if the damped system is not positive
// definite
static int lm_trial(fitRun* run, const double* th, const double* lo, const double* hi, int n, int nf,
                    double lambda, double dmax, double* pred, double* smax) {
  for (int a = 0; a < nf; a++) {
    int i = run->free_[a];
    for (int b = 0; b < nf; b++) run->Hf[a * nf + b] = run->H[(size_t)i * n + run->free_[b]];
    run->Hf[a * nf + a] += lambda * fmax(run->D[i], 1e-12 * dmax + 1e-300);
    run->gf[a] = -run->g[i];
  }
  if (phys_chol_factor(run->Hf, nf, 0) != nf) return 0;
  phys_chol_solve(run->gf, run->Hf, run->gf, nf);
  for (int a = 0; a < nf; a++) run->step[run->free_[a]] = run->gf[a];
  *smax = 0;
  for (int i = 0; i < n; i++) {
    run->trial[i] = fmin(fmax(th[i] + run->step[i], lo[i]), hi[i]);
    run->step[i] = run->trial[i] - th[i];
    *smax = fmax(*smax, fabs(run->step[i]) / (fabs(th[i]) + 1e-300));
  }
  *pred = 0;
  for (int i = 0; i < n; i++) {
    double hs = 0;
    for (int j = 0; j < n; j++) hs += run->H[(size_t)i * n + j] * run->step[j];
    *pred -= run->g[i] * run->step[i] + 0.5 * run->step[i] * hs;
  }
  return 1;
}

// LM's first point (not on a resumed run): r, J at theta, loss = |r|^2 reduced with H = J'J, g = J'r; lambda = 1e-3,
// nu = 2, D = diag(H); recorded, reported and checkpointed as iteration 0
static physStatus lm_begin(fitProblem* pb, fitRun* run, int start) {
  int n = pb->ntheta;
  double* th = run->theta;
  physStatus st = evaluate(pb, th, run->r, run->J, RED_NORMAL);
  if (st != PHYS_OK) return st;
  run->o.cur = reduced(pb, run->g, run->H), run->o.lambda = 1e-3, run->o.nu = 2, run->o.iter = 0;
  run->o.lastbest = run->o.cur, run->o.since = 0;
  for (int i = 0; i < n; i++) run->D[i] = run->H[(size_t)i * n + i];
  run->o.loss0 = run->o.cur;
  record(pb, run, 0, run->o.cur, th);
  progress(pb, "lm", start, 0, run->o.cur, run->o.lambda, th);
  return checkpoint(pb, run, start);
}

// bounded Levenberg-Marquardt (the header's comment): free set F = coordinates not held at a bound,
// (H_FF + lambda D_F) delta_F = -g_F, theta+ = P(theta + delta), accepted when the loss decreases. An
// iteration leaves theta, its loss, H = J'J and g = J'r there, D, lambda and nu (checkpointed; a resumed
// run starts from them)
static physStatus run_lm(fitProblem* pb, fitRun* run, const double* lo, const double* hi, int start) {
  int n = pb->ntheta, maxit = pb->opt->max_iter;
  double* th = run->theta;
  physStatus st;
  if (!run->resumed && (st = lm_begin(pb, run, start)) != PHYS_OK) return st;
  run->resumed = 0;
  double loss = run->o.cur, lambda = run->o.lambda, nu = run->o.nu, lastbest = run->o.lastbest;
  int it = run->o.iter, since = run->o.since, nstall = pb->opt->stall_iters;
  run->stop = it >= maxit ? PHYS_STOP_MAXITER : PHYS_STOP_CONVERGED;
  while (it < maxit && loss > 0) {
    it++;
    // scaling D = max over iterations of diag(J'J), floored so that null columns stay regular
    double dmax = 0;
    for (int i = 0; i < n; i++) {
      run->D[i] = fmax(run->D[i], run->H[(size_t)i * n + i]);
      dmax = fmax(dmax, run->D[i]);
    }
    int nf = lm_free_set(run, th, lo, hi, n);
    int stop = 0, accepted = 0;
    double predrel = HUGE_VAL;   // the trial step's predicted decrease relative to the loss
    memset(run->step, 0, sizeof(double) * (size_t)n);
    if (nf == 0) stop = 1;
    if (!stop) {
      double pred, smax;
      if (lm_trial(run, th, lo, hi, n, nf, lambda, dmax, &pred, &smax)) {
        predrel = pred / loss;
        if (smax < 1e-15) {
          stop = 1;   // the step no longer changes theta
        } else {
          double lnew = trial_loss(pb, run->trial, run->trial + n);
          if (lnew < loss) {
            double rho = pred > 0 ? (loss - lnew) / pred : 0, rel = (loss - lnew) / loss;
            memcpy(th, run->trial, sizeof(double) * (size_t)n);
            pb->reuse_starts = 1;   // J at the trial point: its segment starts as the trial fitted them
            st = evaluate(pb, th, run->r, run->J, RED_NORMAL);
            pb->reuse_starts = 0;
            if (st != PHYS_OK) return st;
            loss = reduced(pb, run->g, run->H);
            double f = 2 * rho - 1;
            lambda *= fmax(1.0 / 3, 1 - f * f * f);
            nu = 2;
            accepted = 1;
            if (rel < pb->opt->tol || smax < 1e-12) stop = 1;
          }
        }
      }
    }
    if (!accepted && !stop) {
      lambda *= nu;
      nu *= 2;
      if (lambda > 1e30) stop = 2;
    }
    // stalled: stall_iters iterations without a relative decrease of stall_tol since lastbest, and the last
    // trial step (at the grown lambda) itself promises less than that
    if (loss < lastbest * (1 - pb->opt->stall_tol)) lastbest = loss, since = 0;
    else since++;
    if (!stop && nstall > 0 && since >= nstall && predrel < pb->opt->stall_tol) stop = 2;
    record(pb, run, it, loss, th);
    progress(pb, "lm", start, it, loss, lambda, th);
    run->stop = stop == 2 ? PHYS_STOP_STALLED : stop ? PHYS_STOP_CONVERGED : it >= maxit ? PHYS_STOP_MAXITER
                                                                                        : PHYS_STOP_CONVERGED;
    if (stop) break;
    run->o.iter = it, run->o.cur = loss, run->o.lambda = lambda, run->o.nu = nu;
    run->o.lastbest = lastbest, run->o.since = since;
    if ((st = checkpoint(pb, run, start)) != PHYS_OK) return st;
  }
  run->iterations = it;
  run->loss = loss;
  return PHYS_OK;
}

// the Fortran routine of L-BFGS-B 3.0 (liblbfgsb): reverse communication through task (60 characters);
// gfortran passes the lengths of task and csave as hidden trailing arguments
extern void setulb_(const int* n, const int* m, double* x, const double* l, const double* u, const int* nbd,
                    double* f, double* g, const double* factr, const double* pgtol, double* wa, int* iwa,
                    char* task, const int* iprint, char* csave, int* lsave, int* isave, double* dsave,
                    size_t task_len, size_t csave_len);

#define LBFGSB_M 10

// set a Fortran character*60 variable
static void ftask(char task[60], const char* s) {
  size_t n = strlen(s);
  memset(task, ' ', 60);
  memcpy(task, s, n < 60 ? n : 60);
}

// L-BFGS-B on loss(theta) with gradient J'r; one iteration per new iterate ("NEW_X"). Between calls setulb's
// whole state is in x = theta, f, g, wa, iwa, task, csave, lsave, isave and dsave (it keeps nothing else;
// dsave(6..10) are CPU timers it only prints), so a checkpoint of these and of the best iterate, at NEW_X and
// after the first evaluation (iteration 0), continues the same sequence of calls
static physStatus run_lbfgsb(fitProblem* pb, fitRun* run, const double* lo, const double* hi, int start) {
  int n = pb->ntheta, mcorr = LBFGSB_M, iprint = -1;
  double *wa = run->wa, *g = run->g;
  int* iwa = run->iwa;
  int* nbd = iwa + 3 * n;
  for (int i = 0; i < n; i++) {
    int fl = isfinite(lo[i]), fu = isfinite(hi[i]);
    nbd[i] = fl && fu ? 2 : fl ? 1 : fu ? 3 : 0;
  }
  double factr = pb->opt->tol / 2.220446049250313e-16, pgtol = 0;
  double* th = run->theta;
  physOptState* o = &run->o;
  int first = !run->resumed;
  if (!run->resumed) {
    ftask(o->task, "START");
    memset(o->csave, ' ', 60);
    memset(o->lsave, 0, sizeof(o->lsave));
    memset(o->isave, 0, sizeof(o->isave));
    memset(o->dsave, 0, sizeof(o->dsave));
    o->iter = 0, o->f = 0, o->cur = HUGE_VAL;
  }
  run->resumed = 0;
  for (;;) {
    setulb_(&n, &mcorr, th, lo, hi, nbd, &o->f, g, &factr, &pgtol, wa, iwa, o->task, &iprint, o->csave,
            o->lsave, o->isave, o->dsave, 60, 60);
    if (strncmp(o->task, "FG", 2) == 0) {
      physStatus st = first ? evaluate(pb, th, run->r, run->J, RED_GRAD) : eval_quiet(pb, th, run->r, run->J, RED_GRAD);
      if (st == PHYS_OK) {
        o->f = reduced(pb, g, NULL);
      } else if (first) {
        return st;
      } else {
        // an invalid trial point: a huge loss makes the line search back off
        o->f = 1e300;
        for (int i = 0; i < n; i++) g[i] = 0;
      }
      if (first) {
        o->loss0 = o->cur = o->f;
        memcpy(run->best, th, sizeof(double) * (size_t)n);
        record(pb, run, 0, o->f, th);
        progress(pb, "lbfgsb", start, 0, o->f, 0, th);
        first = 0;
        if ((st = checkpoint(pb, run, start)) != PHYS_OK) return st;   // iteration 0: f and g for setulb
      }
      if (o->f < o->cur) o->cur = o->f, memcpy(run->best, th, sizeof(double) * (size_t)n);
      continue;
    }
    if (strncmp(o->task, "NEW_X", 5) == 0) {
      o->iter++;
      record(pb, run, o->iter, o->cur, run->best);
      progress(pb, "lbfgsb", start, o->iter, o->cur, o->dsave[12], run->best);   // dsave(13): |proj. gradient|
      if (o->iter >= pb->opt->max_iter || o->cur == 0) break;
      physStatus st = checkpoint(pb, run, start);
      if (st != PHYS_OK) return st;
      continue;
    }
    break;   // CONVERGENCE, ABNORMAL_TERMINATION_IN_LNSRCH, ERROR
  }
  if (pb->opt->verbose) fprintf(stderr, "fit lbfgsb start %d: %.60s\n", start, o->task);
  memcpy(th, run->best, sizeof(double) * (size_t)n);
  run->iterations = o->iter;
  run->loss = o->cur;
  return PHYS_OK;
}

// Adam (Kingma & Ba) on loss(theta): m = b1 m + (1-b1) g, v = b2 v + (1-b2) g^2, theta -= lr_t scale
// mhat / (sqrt(vhat) + eps), projected; scale = the bound's width or |theta0| (1 if 0); constant lr (a
// decay 1/(1 + 10 t/max_iter) was tried: 100x slower along the pendulum's damping-mass valley). Returns the
// best iterate; stops after max_iter, when the best loss has not improved by a relative tol in 100
// iterations, or when an iterate cannot be simulated (run->stop PHYS_STOP_SIMFAIL and a warning with the
// error: Adam has no step to reject, and its step lr * width can leave the model's valid set inside wide
// bounds). An iteration leaves the updated theta, the moments, b1^t, b2^t, the best iterate and the
// stopping counters (checkpointed; a resumed run starts from them).
static physStatus run_adam(fitProblem* pb, fitRun* run, const double* lo, const double* hi, int start) {
  const double b1 = 0.9, b2 = 0.999, eps = 1e-12;
  int n = pb->ntheta, maxit = pb->opt->max_iter;
  double* th = run->theta;
  if (!run->resumed) {
    for (int i = 0; i < n; i++) {
      double w = hi[i] - lo[i];
      run->D[i] = isfinite(w) && w > 0 ? w : (th[i] != 0 ? fabs(th[i]) : 1);
      run->mom[i] = run->vel[i] = 0;
    }
    run->o.cur = HUGE_VAL, run->o.b1t = run->o.b2t = 1, run->o.iter = run->o.since = 0, run->o.lastbest = HUGE_VAL;
  }
  run->resumed = 0;
  double best = run->o.cur, b1t = run->o.b1t, b2t = run->o.b2t, lastbest = run->o.lastbest;
  int it = run->o.iter, since = run->o.since;
  run->stop = PHYS_STOP_CONVERGED;
  for (;;) {
    physLog scratch = {0}, *keep = pb->log;
    if (it > 0) pb->log = &scratch;   // a later iterate's error is reported as a warning below
    physStatus st = evaluate(pb, th, run->r, run->J, RED_GRAD);
    pb->log = keep;
    if (st != PHYS_OK) {
      if (it == 0) return st;
      phys_warning(pb->log, "fit: adam start %d stopped at iteration %d: its iterate cannot be simulated (%.80s); "
                   "result: the best before it (step: lr x bound width; narrow the bounds or lower --lr)", start, it,
                   scratch.error);
      run->stop = PHYS_STOP_SIMFAIL;
      it--;   // the failed iterate is not an iteration of the result (the history ends before it)
      break;
    }
    double loss = reduced(pb, run->g, NULL);
    if (loss < best) best = loss, memcpy(run->best, th, sizeof(double) * (size_t)n);
    if (it == 0) run->o.loss0 = loss;
    double lr = pb->opt->lr;
    record(pb, run, it, best, run->best);
    progress(pb, "adam", start, it, loss, lr, th);
    if (best < lastbest * (1 - pb->opt->tol)) lastbest = best, since = 0;
    else since++;
    if (it >= maxit || best == 0 || since >= 100) {
      if (it >= maxit) run->stop = PHYS_STOP_MAXITER;
      break;
    }
    it++;
    b1t *= b1, b2t *= b2;
    for (int i = 0; i < n; i++) {
      run->mom[i] = b1 * run->mom[i] + (1 - b1) * run->g[i];
      run->vel[i] = b2 * run->vel[i] + (1 - b2) * run->g[i] * run->g[i];
      double mh = run->mom[i] / (1 - b1t), vh = run->vel[i] / (1 - b2t);
      th[i] -= lr * run->D[i] * mh / (sqrt(vh) + eps);
    }
    project(th, lo, hi, n);
    physOptState* o = &run->o;
    o->cur = best, o->b1t = b1t, o->b2t = b2t, o->lastbest = lastbest, o->iter = it, o->since = since;
    if ((st = checkpoint(pb, run, start)) != PHYS_OK) return st;
  }
  memcpy(th, run->best, sizeof(double) * (size_t)n);
  run->iterations = it;
  run->loss = best;
  return PHYS_OK;
}

//---------------------------------------------------------------------------------------------------------
// multi-start draws and statistics

// start s >= 1: uniform in [lo, hi] when both are finite; log-uniform in [theta0/10, 10 theta0] (within the
// bounds) for a positive theta0 with lo >= 0 and no upper bound; otherwise theta0 + U(-1, 1) max(|theta0|, 1)
// clamped to the bounds (sysid.h)
void phys_fit_draw_start(double* th, const double* theta0, const double* lo, const double* hi, int n,
                         physRng* rng) {
  for (int i = 0; i < n; i++) {
    double u = phys_rng_uniform(rng);
    if (isfinite(lo[i]) && isfinite(hi[i])) {
      th[i] = lo[i] + u * (hi[i] - lo[i]);
    } else if (lo[i] >= 0 && theta0[i] > 0) {
      double a = log(fmax(theta0[i] / 10, lo[i])), b = log(fmin(theta0[i] * 10, hi[i]));
      th[i] = exp(a + u * (b - a));
    } else {
      th[i] = theta0[i] + (2 * u - 1) * fmax(fabs(theta0[i]), 1);
    }
  }
  project(th, lo, hi, n);
}

// the cluster-robust covariance by trajectory (issue 12 item 6): with Hp = (J'J)^+ and u_g = J_g' r_g the
// score of trajectory g (its data rows and start state tie rows; the prior rows are no data),
// cov = G/(G-1) Hp M Hp, M = sum_g u_g u_g' (the evaluation's RED_STATS reduction); cov NaN when G < 2
static void cluster_cov(const fitProblem* pb, const double* M, const double* Hp, int G, double* cov) {
  int n = pb->ntheta;
  if (G < 2) {
    for (int i = 0; i < n * n; i++) cov[i] = NAN;
    return;
  }
  double c = (double)G / (G - 1);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      double x = 0;
      for (int k = 0; k < n; k++)
        for (int l = 0; l < n; l++) x += Hp[(size_t)i * n + k] * M[(size_t)k * n + l] * Hp[(size_t)l * n + j];
      cov[(size_t)i * n + j] = c * x;
    }
}

// correlation of a covariance: 1 on the diagonal, 0 beside a component whose variance is 0 or not finite
static void correlation(double* corr, const double* cov, int n) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      double a = cov[(size_t)i * n + i], b = cov[(size_t)j * n + j];
      corr[(size_t)i * n + j] = i == j ? 1 : (a > 0 && b > 0 ? cov[(size_t)i * n + j] / sqrt(a * b) : 0);
    }
}

// statistics at the fit: eigen-decomposition of H = J'J (dsyev), Hp = H^+ (eigenvalues < 1e-8 max dropped),
// the iid covariance s^2 Hp and the cluster-robust one (J, r: residual Jacobian and residuals at the fit),
// standard errors, the default method, the correlation of its covariance, null directions (sign: largest
// component positive). M: the trajectories' sum of g_k g_k' (cluster_cov). ev (n), V (n x n), scratch (n x n + n)
// are work space
static physStatus statistics(fitProblem* pb, physFitResult* res, const double* H, const double* M, double loss,
                             double* ev, double* V, double* scratch) {
  int n = pb->ntheta;
  memcpy(V, H, sizeof(double) * (size_t)n * n);
  lapack_int info = LAPACKE_dsyev(LAPACK_ROW_MAJOR, 'V', 'U', n, V, n, ev);
  if (info != 0) return phys_error(pb->log, PHYS_ERR_NUMERIC, "fit: eigen-decomposition of J'J failed (%d)", (int)info);
  double emax = 0;
  for (int k = 0; k < n; k++) emax = fmax(emax, ev[k]);
  int dof = pb->nres - n - pb->nnuis;   // the fitted start states are unknowns too
  double s2 = dof > 0 ? 2 * loss / dof : NAN;
  double* Hp = scratch;
  memset(Hp, 0, sizeof(double) * (size_t)n * n);
  int nnull = 0;
  for (int k = 0; k < n; k++) {
    if (!(ev[k] >= 1e-8 * emax) || emax == 0) {
      nnull++;
      continue;
    }
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) Hp[(size_t)i * n + j] += V[(size_t)i * n + k] * V[(size_t)j * n + k] / ev[k];
  }
  for (int i = 0; i < n * n; i++) res->cov_iid[i] = s2 * Hp[i];
  for (int i = 0; i < n; i++) res->stderr_[i] = sqrt(res->cov_iid[(size_t)i * n + i]);
  res->ngroups = 0;
  for (int k = 0; k < pb->ds->ntraj; k++) res->ngroups += pb->ds->traj[k].T > 1;
  cluster_cov(pb, M, Hp, res->ngroups, res->cov_cluster);
  for (int i = 0; i < n; i++) res->se_cluster[i] = sqrt(res->cov_cluster[(size_t)i * n + i]);
  res->method = res->ngroups >= 2 ? PHYS_SE_CLUSTER : PHYS_SE_IID;
  correlation(res->corr, res->method == PHYS_SE_CLUSTER ? res->cov_cluster : res->cov_iid, n);
  res->nnull = nnull;
  res->null_dirs = nnull ? malloc(sizeof(double) * (size_t)nnull * n) : NULL;
  if (nnull && !res->null_dirs) return phys_error(pb->log, PHYS_ERR_NOMEM, "fit: out of memory");
  for (int k = 0, a = 0; k < n; k++) {
    if (ev[k] >= 1e-8 * emax && emax > 0) continue;
    int imax = 0;
    for (int i = 0; i < n; i++)
      if (fabs(V[(size_t)i * n + k]) > fabs(V[(size_t)imax * n + k])) imax = i;
    double sgn = V[(size_t)imax * n + k] < 0 ? -1 : 1;
    for (int i = 0; i < n; i++) res->null_dirs[(size_t)a * n + i] = sgn * V[(size_t)i * n + k];
    a++;
  }
  return PHYS_OK;
}

//---------------------------------------------------------------------------------------------------------
// public API

// free what phys_fit allocated
const char* phys_fit_stop_name(int stop) {
  return stop == PHYS_STOP_STALLED ? "stalled" : stop == PHYS_STOP_MAXITER ? "max_iter"
         : stop == PHYS_STOP_SIMFAIL ? "sim_failed" : "converged";
}

// the starts disagree: a start (of those run in this process, from s0) that ended at a loss more than 0.1 %
// above the best is another basin of the loss (or a stall on a kink); a warning names how many, the worst and
// its loss ratio, since a single start from there would have given a wrong answer without a word
static void warn_starts(const double* sloss, int nstart, int s0, int best, double loss, physLog* log) {
  int nbad = 0, worst = -1;
  for (int s = s0; s < nstart; s++) {
    if (!(sloss[s] > loss * 1.001 && sloss[s] - loss > 1e-300)) continue;
    nbad++;
    if (worst < 0 || sloss[s] > sloss[worst]) worst = s;
  }
  if (nbad)
    phys_warning(log, "fit: the starts disagree: %d of %d ended above the best loss (start %d: %.4g, %.3g times start "
                 "%d's %.6g): several basins or kinks; the best is kept, check it with more starts or a sweep", nbad,
                 nstart - s0, worst, sloss[worst], sloss[worst] / loss, best, loss);
}

void phys_fit_result_free(physFitResult* res) {
  if (!res) return;
  free(res->theta);
  free(res->stderr_);
  free(res->corr);
  free(res->cov_iid);
  free(res->cov_cluster);
  free(res->se_cluster);
  free(res->boot_theta);
  free(res->se_boot);
  free(res->cov_boot);
  free(res->loss_hist);
  free(res->theta_hist);
  free(res->null_dirs);
  free(res->stage_theta);
  memset(res, 0, sizeof(*res));
}

// bounds: lower <= theta0 <= upper, lower <= upper, no NaN
static physStatus check_bounds(const physParamTable* t, const double* theta0, const double* lo,
                               const double* hi, physLog* log) {
  for (int i = 0; i < t->ntheta; i++) {
    const char* name = "?";
    for (int p = 0; p < t->n; p++)
      if (i >= t->param[p].adr && i < t->param[p].adr + t->param[p].size) name = t->param[p].name;
    if (isnan(lo[i]) || isnan(hi[i]) || !isfinite(theta0[i]))
      return phys_error(log, PHYS_ERR_ARG, "fit: %s: theta0 %g, bounds [%g, %g] must be numbers", name,
                        theta0[i], lo[i], hi[i]);
    if (lo[i] > hi[i])
      return phys_error(log, PHYS_ERR_ARG, "fit: %s: lower bound %g > upper bound %g", name, lo[i], hi[i]);
    if (theta0[i] < lo[i] || theta0[i] > hi[i])
      return phys_error(log, PHYS_ERR_ARG, "fit: %s: initial value %g outside its bounds [%g, %g]", name,
                        theta0[i], lo[i], hi[i]);
  }
  return PHYS_OK;
}

// the residual count of the loss (data rows and prior rows); 0 with a message in log if the options or
// the dataset are invalid
int phys_fit_nres(const physModel* m, const physParamTable* t, const physDataset* ds, const physFitOptions* opt,
                  physLog* log) {
  int nsel, ndata;
  if (layout(m, t, ds, opt, &nsel, &ndata, log) != PHYS_OK) return 0;
  return ndata + (opt->prior > 0 ? t->ntheta : 0);
}

// residuals and Jacobian at theta (sysid.h)
physStatus phys_fit_residuals(physModel* m, const physParamTable* t, const double* theta, const double* theta0,
                              const physDataset* ds, const physFitOptions* opt, double* r, double* J,
                              physLog* log) {
  if (opt && opt->prior > 0 && !theta0) return phys_error(log, PHYS_ERR_ARG, "fit: a prior needs theta0");
  double dt = m->opt.timestep;
  fitProblem pb;
  physStatus st = problem_init(&pb, m, t, theta0, ds, opt, log);
  pb.rows = 1;   // every process returns every row
  if (st == PHYS_OK) st = evaluate(&pb, theta, r, J, RED_LOSS);
  problem_free(&pb);
  m->opt.timestep = dt;
  return st;
}

// the loss as the fit reduces it (sysid.h)
physStatus phys_fit_loss(physModel* m, const physParamTable* t, const double* theta, const double* theta0,
                         const physDataset* ds, const physFitOptions* opt, double* loss, physLog* log) {
  if (opt && opt->prior > 0 && !theta0) return phys_error(log, PHYS_ERR_ARG, "fit: a prior needs theta0");
  if (!loss) return phys_error(log, PHYS_ERR_ARG, "fit: no loss output");
  double dt = m->opt.timestep;
  fitProblem pb;
  physStatus st = problem_init(&pb, m, t, theta0, ds, opt, log);
  size_t nr = (size_t)(pb.nown + pb.nres - pb.ndata);   // this process's rows and the prior's
  double* r = st == PHYS_OK ? malloc(sizeof(double) * (nr + 1)) : NULL;
  if (st == PHYS_OK && !r) st = phys_error(log, PHYS_ERR_NOMEM, "fit: out of memory for %d residuals", pb.nres);
  if (st == PHYS_OK) st = evaluate(&pb, theta, r, NULL, RED_LOSS);
  if (st == PHYS_OK) *loss = reduced(&pb, NULL, NULL);
  free(r);
  problem_free(&pb);
  m->opt.timestep = dt;
  return st;
}

// one segment's residuals at a given start offset and their Jacobian in it (sysid.h)
physStatus phys_fit_segment_start_jac(physModel* m, const physParamTable* t, const double* theta, const physDataset* ds,
                                 const physFitOptions* opt, int k, int s, const double* delta, double* r, double* Jv,
                                 physLog* log) {
  if (!opt || !opt->fit_start || !ds || k < 0 || k >= ds->ntraj || !delta || !r)
    return phys_error(log, PHYS_ERR_ARG, "fit: segment_start_jac needs fit_start, a trajectory, a start offset and r");
  int T = ds->traj[k].T, h = segment_len(opt, T);
  if (s < 0 || s % h != 0 || s + 1 >= T)
    return phys_error(log, PHYS_ERR_ARG, "fit: sample %d does not start a segment of trajectory %d", s, k);
  double dt = m->opt.timestep;
  fitProblem pb;
  physStatus st = problem_init(&pb, m, t, NULL, ds, opt, log);
  if (st == PHYS_OK && (st = phys_param_set(t, m, theta)) != PHYS_OK)
    phys_error(log, st, "fit: theta is not a valid model");
  if (st == PHYS_OK) {
    fitWorker* wk = &pb.worker[0];
    st = segment(wk, k, s, s + h < T ? h : T - 1 - s, delta, r, NULL, Jv);
    if (st != PHYS_OK) phys_error(log, st, "%s", wk->log.error);
  }
  problem_free(&pb);
  m->opt.timestep = dt;
  return st;
}

// 1 if isave(1..16) hold what setulb's START writes there for n parameters: m n, m^2, 4 m^2 and the 1-based
// offsets of its 13 partitions of wa (ws, wy: m n; sy, ss, wt: m^2; wn, snd: 4 m^2; z, r, d, t, xp: n; wa).
// setulb indexes wa by them: a checkpoint whose offsets differ is refused, whatever its hash says
static int lbfgsb_offsets_ok(const int* isave, int n) {
  const int m = LBFGSB_M, len[12] = {m * n, m * n, m * m, m * m, m * m, 4 * m * m, 4 * m * m, n, n, n, n, n};
  if (isave[0] != m * n || isave[1] != m * m || isave[2] != 4 * m * m || isave[3] != 1) return 0;
  for (int k = 0; k < 12; k++)
    if (isave[4 + k] != isave[3 + k] + len[k]) return 0;
  return 1;
}

// doubles of L-BFGS-B's work array for n parameters
static size_t lbfgsb_nwa(int n) {
  return (2 * LBFGSB_M + 5) * (size_t)n + 11 * LBFGSB_M * LBFGSB_M + 8 * LBFGSB_M;
}

// the run's arrays (one allocation); NULL if out of memory
static void* run_alloc(fitRun* run, int n, int nres, int maxit) {
  size_t nwa = lbfgsb_nwa(n);
  size_t nd = (size_t)nres * n + 2 * (size_t)nres + 12 * (size_t)n + 2 * (size_t)n * n +
              (size_t)(maxit + 1) * (n + 1) + nwa + (size_t)n;
  double* w = calloc(nd * sizeof(double) + (5 * (size_t)n + 8) * sizeof(int), 1);
  if (!w) return NULL;
  void* base = w;
  run->r = w, w += nres;
  run->J = w, w += (size_t)nres * n;
  run->theta = w, w += n;
  run->g = w, w += n;
  run->H = w, w += (size_t)n * n;
  run->Hf = w, w += (size_t)n * n;
  run->D = w, w += n;
  run->gf = w, w += n;
  run->step = w, w += n;
  run->trial = w, w += n + nres;   // trial theta, then its residuals
  run->mom = w, w += n;
  run->vel = w, w += n;
  run->best = w, w += n;
  run->loss_hist = w, w += maxit + 1;
  run->theta_hist = w, w += (size_t)(maxit + 1) * n;
  run->wa = w, w += nwa;
  w += n;
  run->free_ = (int*)w;
  run->iwa = run->free_ + n;
  return base;
}

// the checkpoint's key and state table (pointing at the run's arrays and the result's best start); with
// opt->resume and an existing file, read it and restore the run, the best finished start, the draws, the
// warning count and times, and set *s0 to the start in progress. A fresh start checks that the file may be
// replaced (checkpoint.h). key: phys_ckpt_key of the inputs as phys_fit received them.
static physStatus ckpt_begin(fitCkpt* ck, fitProblem* pb, fitRun* run, physFitResult* res, physRng* rng,
                             double* best_loss, const uint64_t* key, int nstart, int* s0) {
  const physFitOptions* opt = pb->opt;
  int n = pb->ntheta;
  memset(ck, 0, sizeof(*ck));
  ck->path = opt->checkpoint, ck->rng = rng, ck->best_loss = best_loss, ck->res = res;
  physFitState* st = &ck->st;
  physStatus s;
  memcpy(st->key, key, sizeof(st->key));
  st->ntheta = n, st->max_iter = opt->max_iter, st->optimizer = opt->optimizer;
  st->nwa = (int)lbfgsb_nwa(n), st->niwa = 3 * n;
  st->best_theta = res->theta, st->best_loss_hist = res->loss_hist, st->best_theta_hist = res->theta_hist;
  st->theta = run->theta, st->loss_hist = run->loss_hist, st->theta_hist = run->theta_hist;
  st->D = run->D, st->H = run->H, st->g = run->g, st->wa = run->wa, st->iwa = run->iwa, st->best = run->best;
  st->mom = run->mom, st->vel = run->vel;
  pb->ck = ck;
  int found = 0;
  if (opt->resume && (s = phys_ckpt_load(ck->path, st, &found, pb->log)) != PHYS_OK) return s;
  // the first process alone tries the file (it alone writes it: the others' trial temporaries raced with its own)
  const physFitComm* c = opt->comm;
  if ((!c || c->rank == 0) && (s = phys_ckpt_check_target(ck->path, pb->log)) != PHYS_OK) return s;
  if (!found) {
    if (opt->resume && opt->verbose) fprintf(stderr, "fit: no checkpoint %s yet: starting fresh\n", ck->path);
    return PHYS_OK;
  }
  if (st->start >= nstart)
    return phys_error(pb->log, PHYS_ERR_PARSE, "%s: corrupt checkpoint: start %d of %d", ck->path, st->start, nstart);
  if (opt->optimizer == PHYS_OPT_LBFGSB && !lbfgsb_offsets_ok(st->run.isave, n))
    return phys_error(pb->log, PHYS_ERR_PARSE, "%s: corrupt checkpoint: L-BFGS-B's work-array offsets", ck->path);
  run->resumed = 1;
  run->o = st->run;
  memcpy(rng->s, st->rng, sizeof(rng->s));
  if (st->best_iterations >= 0) {
    *best_loss = st->best_loss;
    res->loss0 = st->best_loss0;
    res->iterations = st->best_iterations;
    res->niter_hist = st->best_iterations + 1;
    res->start = st->best_start;
    res->stop = st->best_stop;
  }
  pb->nsimwarn = st->nsimwarn;
  memcpy(pb->simwarn, st->simwarn, sizeof(pb->simwarn));
  pb->simwarn[sizeof(pb->simwarn) - 1] = 0;
  pb->worker[0].time_forward += st->time_forward;
  pb->worker[0].time_gradient += st->time_gradient;
  res->resumed = 1, res->resumed_start = st->start, res->resumed_iter = st->run.nhist - 1;
  *s0 = st->start;
  if (opt->verbose)
    fprintf(stderr, "fit: resuming from %s: start %d, iteration %d\n", ck->path, st->start, st->run.nhist - 1);
  return PHYS_OK;
}

// the checkpoint key of a fit's inputs as phys_fit receives them (bounds: the given ones, else the table's; lo and
// hi are n-long scratch)
static void fit_key(uint64_t key[PHYS_CKPT_NKEY], const physModel* m, const physParamTable* t, const double* theta0,
                    const double* lower, const double* upper, const physDataset* ds, const physFitOptions* opt,
                    double* lo, double* hi) {
  int n = t->ntheta;
  phys_param_bounds(t, lo, hi);
  if (lower) memcpy(lo, lower, sizeof(double) * (size_t)n);
  if (upper) memcpy(hi, upper, sizeof(double) * (size_t)n);
  physFitOptions okey = *opt;
  okey.max_iter = opt->max_iter > 0 ? opt->max_iter : 1;
  phys_ckpt_key(key, m, t, theta0, lo, hi, ds, &okey);
}

// a fit's starts: start 0 from first, then draws around theta0 in [lo, hi] from rng; each one's final loss into
// sloss (NaN: skipped), the best loss so far
typedef struct fitStarts_ {
  int nstart;
  double* sloss;
  double* best_loss;
  const double *first, *theta0, *lo, *hi;
  physRng* rng;
} fitStarts;

// start s's theta into run->theta (the next draw for s >= 1) and its history cleared
static void start_point(fitRun* run, const fitStarts* fs, int s, int n, int maxit) {
  if (s == 0) memcpy(run->theta, fs->first, sizeof(double) * (size_t)n);
  else phys_fit_draw_start(run->theta, fs->theta0, fs->lo, fs->hi, n, fs->rng);
  memset(run->loss_hist, 0, sizeof(double) * (size_t)(maxit + 1));
}

// the optimizer of start s from run->theta
static physStatus run_start(fitProblem* pb, fitRun* run, const fitStarts* fs, int s) {
  int opt = pb->opt->optimizer;
  physStatus st = opt == PHYS_OPT_LM       ? run_lm(pb, run, fs->lo, fs->hi, s)
                  : opt == PHYS_OPT_LBFGSB ? run_lbfgsb(pb, run, fs->lo, fs->hi, s)
                                           : run_adam(pb, run, fs->lo, fs->hi, s);
  if (opt == PHYS_OPT_LBFGSB) run->stop = run->iterations >= pb->opt->max_iter ? PHYS_STOP_MAXITER : PHYS_STOP_CONVERGED;
  return st;
}

// start s ended at loss with theta, its histories (iters + 1 entries), loss0 and stop: its loss into sloss[s],
// and into res when below the best so far (ties: the earlier start)
static void keep_start(physFitResult* res, const fitStarts* fs, int s, int n, double loss, const double* theta,
                       const double* lh, const double* th, int iters, double loss0, int stop) {
  fs->sloss[s] = loss;
  if (!(loss < *fs->best_loss)) return;
  *fs->best_loss = loss;
  memcpy(res->theta, theta, sizeof(double) * (size_t)n);
  memcpy(res->loss_hist, lh, sizeof(double) * (size_t)(iters + 1));
  memcpy(res->theta_hist, th, sizeof(double) * (size_t)(iters + 1) * n);
  res->loss0 = loss0, res->iterations = iters, res->niter_hist = iters + 1, res->start = s, res->stop = stop;
}

// a drawn start that cannot be simulated is skipped: its error leaves the log
static void skip_start(const fitProblem* pb, int s, physLog* log) {
  if (pb->opt->verbose) fprintf(stderr, "fit: start %d skipped: %s\n", s, log->error);
  log->status = PHYS_OK;
  log->error[0] = 0;
}

// the starts s0.. one after another, each evaluation shared among the processes (a resumed run continues start s0)
static physStatus run_starts(fitProblem* pb, fitRun* run, int s0, const fitStarts* fs, physFitResult* res) {
  int n = pb->ntheta;
  for (int s = s0; s < fs->nstart; s++) {
    if (!run->resumed) start_point(run, fs, s, n, pb->opt->max_iter);
    physStatus st = run_start(pb, run, fs, s);
    if (st != PHYS_OK && s > 0 && !(pb->ck && pb->ck->failed)) {
      skip_start(pb, s, pb->log);
      continue;
    }
    if (st != PHYS_OK) return st;
    keep_start(res, fs, s, n, run->loss, run->theta, run->loss_hist, run->theta_hist, run->iterations, run->o.loss0,
               run->stop);
  }
  return PHYS_OK;
}

// nitem items of w doubles each in contiguous blocks over P processes, process p's [p nitem / P, (p + 1) nitem / P):
// its count (part[p]) and displacement (part[P + p]) in doubles
static void block_parts(size_t* part, int P, int nitem, size_t w) {
  for (int p = 0; p < P; p++) {
    long long a = (long long)nitem * p / P, b = (long long)nitem * (p + 1) / P;
    part[P + p] = (size_t)a * w, part[p] = (size_t)(b - a) * w;
  }
}

// a start's record in run_starts_spread's exchange: status, loss, iterations, stop, loss0, step warnings, the
// simulation and derivative times, theta, the histories, the first warning (256 bytes)
#define FIT_REC_HEAD 8
static size_t start_rec_len(int n, int maxit) {
  return FIT_REC_HEAD + (size_t)n + (size_t)(maxit + 1) * (1 + (size_t)n) + 256 / sizeof(double);
}

// run start s on this process (pb holds every trajectory) into its record
static void start_record(fitProblem* pb, fitRun* run, const fitStarts* fs, int s, double* rec) {
  int n = pb->ntheta, maxit = pb->opt->max_iter;
  double tf0, tg0, tf1, tg1;
  problem_times(pb, &tf0, &tg0);
  pb->nsimwarn = 0, pb->simwarn[0] = 0;
  physStatus st = run_start(pb, run, fs, s);
  if (st != PHYS_OK && s > 0) skip_start(pb, s, pb->log);   // (start 0's error stays in the log)
  problem_times(pb, &tf1, &tg1);
  double head[FIT_REC_HEAD] = {st, run->loss, run->iterations, run->stop, run->o.loss0, pb->nsimwarn, tf1 - tf0,
                               tg1 - tg0};
  memcpy(rec, head, sizeof head);
  double* p = rec + FIT_REC_HEAD;
  memcpy(p, run->theta, sizeof(double) * (size_t)n), p += n;
  memcpy(p, run->loss_hist, sizeof(double) * (size_t)(maxit + 1)), p += maxit + 1;
  memcpy(p, run->theta_hist, sizeof(double) * (size_t)(maxit + 1) * n), p += (size_t)(maxit + 1) * n;
  memcpy(p, pb->simwarn, 256);
}

// the starts spread over the processes of c (fit_once: several processes, no checkpoint, at least one start per
// process): process p runs starts [p nstart / P, (p + 1) nstart / P) whole on every trajectory (the draws replayed
// by every process), the starts' records are gathered and taken in start order as run_starts takes them (the
// warnings counted and the first one kept in that order): the same result as one process
static physStatus run_starts_spread(fitProblem* pb, fitRun* run, const physFitComm* c, const fitStarts* fs,
                                    physFitResult* res) {
  int n = pb->ntheta, maxit = pb->opt->max_iter, ns = fs->nstart, P = c->size;
  size_t w = start_rec_len(n, maxit);
  double* rec = calloc((size_t)ns * w, sizeof(double));
  size_t* part = malloc(sizeof(size_t) * 2 * (size_t)P);
  if (!rec || !part) {
    free(rec), free(part);
    return phys_error(pb->log, PHYS_ERR_NOMEM, "fit: out of memory for the starts' records");
  }
  block_parts(part, P, ns, w);
  int a = (int)(part[P + c->rank] / w), b = a + (int)(part[c->rank] / w);
  for (int s = 0; s < b; s++) {
    start_point(run, fs, s, n, maxit);   // (every draw, to reach this process's)
    if (s >= a) start_record(pb, run, fs, s, rec + (size_t)s * w);
  }
  physStatus st = c->allgatherv(c->ctx, rec, part, part + P) ? PHYS_OK
                  : phys_error(pb->log, PHYS_ERR_IO, "fit: the processes could not exchange their starts");
  pb->nsimwarn = 0;
  for (int s = 0; st == PHYS_OK && s < ns; s++) {
    const double* r = rec + (size_t)s * w;
    const double *th = r + FIT_REC_HEAD, *lh = th + n, *thh = lh + maxit + 1;
    if ((int)r[5] && !pb->nsimwarn) memcpy(pb->simwarn, thh + (size_t)(maxit + 1) * n, sizeof pb->simwarn - 1);
    pb->nsimwarn += (int)r[5];
    if (s < a || s >= b) pb->worker[0].time_forward += r[6], pb->worker[0].time_gradient += r[7];   // others'
    if ((int)r[0] == PHYS_OK) keep_start(res, fs, s, n, r[1], th, lh, thh, (int)r[2], r[4], (int)r[3]);
    else if (s == 0)   // (skipped when s > 0: start_record)
      st = a == 0 ? (physStatus)(int)r[0] : phys_error(pb->log, (physStatus)(int)r[0], "fit: start 0 failed on process 0");
  }
  free(rec);
  free(part);
  return st;
}

// a result's arrays for n parameters and maxit iterations (zeroed); 0 if out of memory
static int result_alloc(physFitResult* res, int n, int maxit) {
  res->theta = calloc((size_t)n, sizeof(double));
  res->stderr_ = calloc((size_t)n, sizeof(double));
  res->corr = calloc((size_t)n * n, sizeof(double));
  res->cov_iid = calloc((size_t)n * n, sizeof(double));
  res->cov_cluster = calloc((size_t)n * n, sizeof(double));
  res->se_cluster = calloc((size_t)n, sizeof(double));
  res->loss_hist = calloc((size_t)maxit + 1, sizeof(double));
  res->theta_hist = calloc((size_t)(maxit + 1) * n, sizeof(double));
  return res->theta && res->stderr_ && res->corr && res->cov_iid && res->cov_cluster && res->se_cluster &&
         res->loss_hist && res->theta_hist;
}

// statistics at the best fit res->theta: r, J there, loss = |r|^2 reduced with H = J'J (H and g reused as
// scratch: eigenvalues in g, eigenvectors in Hf)
static physStatus best_statistics(fitProblem* pb, fitRun* run, physFitResult* res, physLog* log) {
  int n = pb->ntheta;
  physStatus st = evaluate(pb, res->theta, run->r, run->J, RED_STATS);
  if (st != PHYS_OK) return st;
  res->ntheta = n;
  res->nres = pb->nres;
  res->loss = reduced(pb, NULL, run->H);
  double* scratch = malloc(sizeof(double) * ((size_t)n * n + n));
  st = scratch ? statistics(pb, res, run->H, pb->red + 1 + n + (size_t)n * n, res->loss, run->g, run->Hf, scratch)
               : phys_error(log, PHYS_ERR_NOMEM, "fit: out of memory");
  free(scratch);
  return st;
}

// one fit (phys_fit's, one stage of a staged one): start 0 from first (NULL: theta0; theta0 stays the prior's
// centre and the draws' centre), the checkpoint keyed by kkey (NULL: the key of these inputs)
static physStatus fit_once(physModel* m, const physParamTable* t, const double* theta0, const double* first,
                           const double* lower, const double* upper, const physDataset* ds, const physFitOptions* opt,
                           const uint64_t* kkey, physFitResult* res, physLog* log) {
  physLog dummy = {0};
  if (!log) log = &dummy;
  if (!res) return phys_error(log, PHYS_ERR_ARG, "fit: no result");
  memset(res, 0, sizeof(*res));
  if (!m || !t || !theta0 || !ds || !opt || t->ntheta < 1)
    return phys_error(log, PHYS_ERR_ARG, "fit: missing model, parameters, theta0, dataset or options");
  int n = t->ntheta, maxit = opt->max_iter > 0 ? opt->max_iter : 1;
  if (opt->optimizer < PHYS_OPT_LM || opt->optimizer > PHYS_OPT_ADAM)
    return phys_error(log, PHYS_ERR_ARG, "fit: unknown optimizer %d", opt->optimizer);
  // bounds: the given ones, else the parameter table's
  double* bnd = malloc(sizeof(double) * 2 * (size_t)n);
  if (!bnd) return phys_error(log, PHYS_ERR_NOMEM, "fit: out of memory");
  double *lo = bnd, *hi = bnd + n;
  phys_param_bounds(t, lo, hi);
  if (lower) memcpy(lo, lower, sizeof(double) * (size_t)n);
  if (upper) memcpy(hi, upper, sizeof(double) * (size_t)n);
  physStatus st = check_bounds(t, theta0, lo, hi, log);
  // the checkpoint's key: the inputs as given (the model before the fit changes its timestep and theta)
  uint64_t key[PHYS_CKPT_NKEY];
  if (st == PHYS_OK && opt->checkpoint) {
    if (kkey) memcpy(key, kkey, sizeof key);
    else fit_key(key, m, t, theta0, lower, upper, ds, opt, lo, hi);
  }
  // multi-start on several processes without a checkpoint: each start whole on one process (run_starts_spread)
  const physFitComm* c = opt->comm;
  int nstart = opt->starts > 0 ? opt->starts : 1, s0 = 0;
  int spread = c && c->size > 1 && !opt->checkpoint && nstart >= c->size;
  physFitOptions o2 = *opt;
  o2.max_iter = maxit;
  if (spread) o2.comm = NULL;   // every process holds every trajectory
  double dt = m->opt.timestep;
  fitProblem pb;
  memset(&pb, 0, sizeof(pb));
  if (st == PHYS_OK) st = problem_init(&pb, m, t, theta0, ds, &o2, log);
  fitRun run;
  memset(&run, 0, sizeof(run));
  void* runbuf = NULL;
  double* sloss = st == PHYS_OK ? malloc(sizeof(double) * (size_t)nstart) : NULL;   // each start's final loss
  if (st == PHYS_OK) runbuf = run_alloc(&run, n, pb.nown + pb.nres - pb.ndata, maxit);   // own rows, the prior's
  if (st == PHYS_OK && (!runbuf || !sloss || !result_alloc(res, n, maxit)))
    st = phys_error(log, PHYS_ERR_NOMEM, "fit: out of memory for %d residuals x %d parameters", pb.nres, n);
  for (int s = 0; sloss && s < nstart; s++) sloss[s] = NAN;
  // the starts: theta0, then starts-1 draws
  physRng rng;
  phys_rng_seed(&rng, opt->seed);
  double best_loss = HUGE_VAL;
  fitCkpt ck;
  if (st == PHYS_OK && opt->checkpoint)
    st = ckpt_begin(&ck, &pb, &run, res, &rng, &best_loss, key, nstart, &s0);
  fitStarts fs = {nstart, sloss, &best_loss, first ? first : theta0, theta0, lo, hi, &rng};
  if (st == PHYS_OK) st = spread ? run_starts_spread(&pb, &run, c, &fs, res) : run_starts(&pb, &run, s0, &fs, res);
  if (st == PHYS_OK) st = best_statistics(&pb, &run, res, log);
  if (pb.nsimwarn)
    phys_warning(log, "fit: %d simulation steps raised warnings, first %s", pb.nsimwarn, pb.simwarn);
  if (st == PHYS_OK) warn_starts(sloss, nstart, s0, res->start, res->loss, log);
  problem_times(&pb, &res->time_forward, &res->time_gradient);
  m->opt.timestep = dt;
  if (st == PHYS_OK) st = phys_param_set(t, m, res->theta);
  else if (pb.buf) phys_param_set(t, m, theta0);   // a failed fit leaves the model at theta0
  problem_free(&pb);
  free(sloss);
  free(runbuf);
  free(bnd);
  if (st != PHYS_OK) phys_fit_result_free(res);
  return st;
}

// the loss at theta with opt (a fresh evaluation; HUGE_VAL if it fails), m left at theta
static double loss_at(physModel* m, const physParamTable* t, const double* theta, const double* theta0,
                      const physDataset* ds, const physFitOptions* opt) {
  physLog lq = {0};
  double loss;
  return phys_fit_loss(m, t, theta, theta0, ds, opt, &loss, &lq) == PHYS_OK ? loss : HUGE_VAL;
}

// the staged fit (opt->fit_start == PHYS_FIT_START_STAGED; sysid.h, fit.c's *Segment start states*): stage 1 fits
// opt's loss with every segment from its recorded sample, stage 2 the one-step loss (same weights, recorded samples),
// each with opt's starts and without a checkpoint (a resume repeats them, bit for bit); stage 3 fits opt's loss with
// the segment starts fitted, one start from whichever of the two answers has the lower stage-3 loss, with opt's
// checkpoint keyed by opt as given. res is stage 3's (its loss0 the stage-3 loss at theta0) with the first stages'
// figures in its stage_ fields and all stages' times
static physStatus fit_staged(physModel* m, const physParamTable* t, const double* theta0, const double* lower,
                             const double* upper, const physDataset* ds, const physFitOptions* opt,
                             physFitResult* res, physLog* log) {
  static const char* const what[2] = {"segments from their recorded samples", "onestep from the recorded samples"};
  if (!m || !t || !theta0 || !ds || !res || t->ntheta < 1)   // fit_once's message
    return fit_once(m, t, theta0, NULL, lower, upper, ds, opt, NULL, res, log);
  int n = t->ntheta;
  physFitOptions o[2] = {*opt, *opt}, o3 = *opt;
  for (int k = 0; k < 2; k++) o[k].fit_start = 0, o[k].checkpoint = NULL, o[k].resume = 0, o[k].on_checkpoint = NULL;
  o[1].loss = PHYS_LOSS_ONESTEP;
  o3.fit_start = 1, o3.starts = 1;
  physFitResult r[2];
  memset(r, 0, sizeof r);
  physStatus st = PHYS_OK;
  // the checkpoint's key: the inputs as given (before stage 1 moves the model's theta)
  uint64_t key[PHYS_CKPT_NKEY];
  double* bnd = opt->checkpoint ? malloc(sizeof(double) * 2 * (size_t)n) : NULL;
  if (bnd) fit_key(key, m, t, theta0, lower, upper, ds, opt, bnd, bnd + n);
  else if (opt->checkpoint) st = phys_error(log, PHYS_ERR_NOMEM, "fit: out of memory");
  free(bnd);
  double fitted[2] = {HUGE_VAL, HUGE_VAL}, tf = 0, tg = 0;
  for (int k = 0; k < 2 && st == PHYS_OK; k++) {
    if (opt->verbose) fprintf(stderr, "fit: stage %d of 3: %s\n", k + 1, what[k]);
    st = fit_once(m, t, theta0, NULL, lower, upper, ds, &o[k], NULL, &r[k], log);
    if (st != PHYS_OK) break;
    fitted[k] = loss_at(m, t, r[k].theta, theta0, ds, &o3);
    tf += r[k].time_forward, tg += r[k].time_gradient;
  }
  int from = fitted[1] < fitted[0];   // ties: stage 1's (opt's loss)
  if (st == PHYS_OK) {
    if (opt->verbose)
      fprintf(stderr, "fit: stage 3 of 3: segment starts fitted, from stage %d's answer (loss %.6g there, %.6g at "
              "stage %d's)\n", from + 1, fitted[from], fitted[!from], !from + 1);
    st = fit_once(m, t, theta0, r[from].theta, lower, upper, ds, &o3, key, res, log);
  }
  if (st == PHYS_OK && !(res->stage_theta = malloc(sizeof(double) * 2 * (size_t)n)))
    st = phys_error(log, PHYS_ERR_NOMEM, "fit: out of memory");
  if (st == PHYS_OK) {
    res->stages = 3, res->stage_from = from + 1;
    res->loss0 = loss_at(m, t, theta0, theta0, ds, &o3);   // at theta0, as a one-stage fit's
    phys_param_set(t, m, res->theta);                     // (valid: stage 3's answer)
    for (int k = 0; k < 2; k++) {
      memcpy(res->stage_theta + (size_t)k * n, r[k].theta, sizeof(double) * (size_t)n);
      res->stage_loss0[k] = r[k].loss0, res->stage_loss[k] = r[k].loss, res->stage_fitted[k] = fitted[k];
      res->stage_iterations[k] = r[k].iterations, res->stage_stop[k] = r[k].stop, res->stage_start[k] = r[k].start;
    }
    res->time_forward += tf, res->time_gradient += tg;
  } else if (res->theta) {
    phys_fit_result_free(res);
  }
  phys_fit_result_free(&r[0]);
  phys_fit_result_free(&r[1]);
  return st;
}

// the fit (sysid.h)
physStatus phys_fit(physModel* m, const physParamTable* t, const double* theta0, const double* lower,
                    const double* upper, const physDataset* ds, const physFitOptions* opt, physFitResult* res,
                    physLog* log) {
  if (opt && opt->fit_start == PHYS_FIT_START_STAGED) return fit_staged(m, t, theta0, lower, upper, ds, opt, res, log);
  physStatus st = fit_once(m, t, theta0, NULL, lower, upper, ds, opt, NULL, res, log);
  if (st == PHYS_OK) res->stages = 1;
  return st;
}

// segments of the loss over the dataset (sysid.h)
int phys_fit_nsegments(const physDataset* ds, const physFitOptions* opt) {
  int n = 0;
  for (int k = 0; ds && opt && k < ds->ntraj; k++) n += segment_count(opt, ds->traj[k].T);
  return n;
}

// the fitted segment starts at theta, from the loss's own evaluation (sysid.h)
physStatus phys_fit_segment_starts(physModel* m, const physParamTable* t, const double* theta, const physDataset* ds,
                                   const physFitOptions* opt, double* qstart, double* vstart, double* loss,
                                   physLog* log) {
  physLog dummy = {0};
  if (!log) log = &dummy;
  if (!m || !opt || !opt->fit_start || !qstart || !vstart)
    return phys_error(log, PHYS_ERR_ARG, "fit: segment_starts needs a model, fit_start and the outputs");
  double dt = m->opt.timestep;
  fitProblem pb;
  physStatus st = problem_init(&pb, m, t, NULL, ds, opt, log);
  double* r = st == PHYS_OK ? malloc(sizeof(double) * (size_t)pb.nres) : NULL;
  if (st == PHYS_OK && !r) st = phys_error(log, PHYS_ERR_NOMEM, "fit: out of memory");
  pb.rows = 1;   // every process holds every segment's delta
  if (st == PHYS_OK) st = evaluate(&pb, theta, r, NULL, RED_LOSS);   // every segment's delta into pb.dtrial, as a fit's
  if (st == PHYS_OK && loss) *loss = reduced(&pb, NULL, NULL);
  int nq = m->nq, nv = m->nv;
  for (int k = 0, j = 0; st == PHYS_OK && k < ds->ntraj; k++) {
    const physTrajectory* tr = &ds->traj[k];
    int h = segment_len(opt, tr->T);
    for (int s = 0, c = 0; s + 1 < tr->T; s += h, c++, j++) {
      memcpy(qstart + (size_t)j * nq, tr->qpos + (size_t)s * nq, sizeof(double) * (size_t)nq);
      memcpy(vstart + (size_t)j * nv, tr->qvel + (size_t)s * nv, sizeof(double) * (size_t)nv);
      offset_start(&pb, pb.dtrial + pb.nuisadr[k] + (size_t)c * pb.nvf, qstart + (size_t)j * nq,
                   vstart + (size_t)j * nv, pb.worker[0].e);
    }
  }
  free(r);
  problem_free(&pb);
  m->opt.timestep = dt;
  return st;
}

// predictions for trajectory k as the loss sees them (sysid.h); the model is copied when the loss's dt
// differs from its timestep
physStatus phys_fit_predict(const physModel* m, const physDataset* ds, int k, const physFitOptions* opt,
                            double* qpos, double* qvel, physLog* log) {
  return phys_fit_predict_from(m, ds, k, opt, NULL, NULL, qpos, qvel, NULL, log);
}

// the same from given segment starts (sysid.h)
physStatus phys_fit_predict_from(const physModel* m, const physDataset* ds, int k, const physFitOptions* opt,
                                 const double* qstart, const double* vstart, double* qpos, double* qvel, int* nwarn,
                                 physLog* log) {
  if (!m || !ds || !opt || !qpos || !qvel || k < 0 || k >= ds->ntraj)
    return phys_error(log, PHYS_ERR_ARG, "fit_predict: bad arguments (trajectory %d of %d)", k, ds ? ds->ntraj : 0);
  if (ds->nq != m->nq || ds->nv != m->nv || opt->substeps < 1 || !(ds->dt_obs > 0))
    return phys_error(log, PHYS_ERR_ARG, "fit_predict: dataset, model or options do not match");
  physModel* mc = phys_copy_model(m);
  if (!mc) return phys_error(log, PHYS_ERR_NOMEM, "fit_predict: out of memory");
  mc->opt.timestep = ds->dt_obs / opt->substeps;
  physData* d = phys_make_data(mc);
  if (!d) {
    phys_free_model(mc);
    return phys_error(log, PHYS_ERR_NOMEM, "fit_predict: out of memory");
  }
  const physTrajectory* tr = &ds->traj[k];
  int T = tr->T, nq = m->nq, nv = m->nv, h = segment_len(opt, T);
  physStatus st = PHYS_OK;
  if (T > 0) {
    memcpy(qpos, tr->qpos, sizeof(double) * (size_t)nq);
    memcpy(qvel, tr->qvel, sizeof(double) * (size_t)nv);
  }
  for (int s = 0, c = 0; st == PHYS_OK && s + 1 < T; s += h, c++) {
    set_sample(mc, d, tr, s, opt->ctrl, opt->inputs, NULL);
    if (qstart) {   // the given start of segment c
      memcpy(d->qpos, qstart + (size_t)c * nq, sizeof(double) * (size_t)nq);
      memcpy(d->qvel, vstart + (size_t)c * nv, sizeof(double) * (size_t)nv);
    }
    for (int j = 1; j <= h && s + j < T; j++) {
      if (j > 1) set_inputs(mc, d, tr, s + j - 1, opt->ctrl, opt->inputs, NULL);
      for (int sub = 0; sub < opt->substeps; sub++) {
        set_substep_inputs(mc, d, tr, s + j - 1, sub, opt->inputs, NULL);
        int nw = d->nwarning;
        double t0 = d->time;
        phys_step(mc, d);
        if (d->nwarning != nw && nwarn && d->time != t0) {   // accepted with a warning (an inexact solve): counted
          (*nwarn)++;
          continue;
        }
        if (d->nwarning != nw) {
          st = phys_error(log, PHYS_ERR_NUMERIC, "fit_predict: simulation failed on trajectory %d after sample %d: %s",
                          k, s + j - 1, d->lastwarning);
          break;
        }
      }
      memcpy(qpos + (size_t)(s + j) * nq, d->qpos, sizeof(double) * (size_t)nq);
      memcpy(qvel + (size_t)(s + j) * nv, d->qvel, sizeof(double) * (size_t)nv);
    }
  }
  phys_free_data(d);
  phys_free_model(mc);
  return st;
}

//---------------------------------------------------------------------------------------------------------
// uncertainty: intervals and the trajectory bootstrap (issue 12 item 6)

// 97.5% quantile of Student's t (sysid.h): a table to 30 degrees of freedom, then the Cornish-Fisher
// expansion in 1/dof (error < 1e-4 there)
double phys_t975(int dof) {
  static const double tab[30] = {12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622, 2.2281,
                                 2.2010,  2.1788, 2.1604, 2.1448, 2.1314, 2.1199, 2.1098, 2.1009, 2.0930, 2.0860,
                                 2.0796,  2.0739, 2.0687, 2.0639, 2.0595, 2.0555, 2.0518, 2.0484, 2.0452, 2.0423};
  const double z = 1.959963984540054;
  if (dof <= 0) return z;
  if (dof <= 30) return tab[dof - 1];
  double z3 = z * z * z, z5 = z3 * z * z, v = dof;
  return z + (z3 + z) / (4 * v) + (5 * z5 + 16 * z3 + 3 * z) / (96 * v * v);
}

static int cmp_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

// the p-quantile (0..1) of sorted x (n >= 1), linear interpolation between order statistics
static double quantile_sorted(const double* x, int n, double p) {
  double h = p * (n - 1);
  int k = (int)floor(h);
  if (k >= n - 1) return x[n - 1];
  return x[k] + (h - k) * (x[k + 1] - x[k]);
}

// 95% interval of component i by method (sysid.h)
void phys_fit_interval(const physFitResult* res, int method, int i, double* lo, double* hi) {
  *lo = *hi = NAN;
  double v = res->theta[i];
  if (method == PHYS_SE_IID) {
    *lo = v - phys_t975(0) * res->stderr_[i], *hi = v + phys_t975(0) * res->stderr_[i];
  } else if (method == PHYS_SE_CLUSTER && res->ngroups >= 2 && res->se_cluster) {
    double c = phys_t975(res->ngroups - 1);
    *lo = v - c * res->se_cluster[i], *hi = v + c * res->se_cluster[i];
  } else if (method == PHYS_SE_BOOTSTRAP && res->nboot_ok > 0) {
    int nb = res->nboot_ok, n = res->ntheta;
    double* x = malloc(sizeof(double) * (size_t)nb);
    if (!x) return;
    for (int b = 0; b < nb; b++) x[b] = res->boot_theta[(size_t)b * n + i];
    qsort(x, (size_t)nb, sizeof(double), cmp_double);
    *lo = quantile_sorted(x, nb, 0.025), *hi = quantile_sorted(x, nb, 0.975);
    free(x);
  }
}

// mean-centred covariance of the nb x n rows of X into cov (n x n), their standard deviations into se
// (NaN with fewer than 2 rows)
static void sample_cov(const double* X, int nb, int n, double* cov, double* se) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      double mi = 0, mj = 0, c = 0;
      for (int b = 0; b < nb; b++) mi += X[(size_t)b * n + i] / nb, mj += X[(size_t)b * n + j] / nb;
      for (int b = 0; b < nb; b++) c += (X[(size_t)b * n + i] - mi) * (X[(size_t)b * n + j] - mj);
      cov[(size_t)i * n + j] = nb > 1 ? c / (nb - 1) : NAN;
    }
  for (int i = 0; i < n; i++) se[i] = sqrt(cov[(size_t)i * n + i]);
}

// the trajectory bootstrap (sysid.h)
physStatus phys_fit_bootstrap(physModel* m, const physParamTable* t, const double* lower, const double* upper,
                              const physDataset* ds, const physFitOptions* opt, int nboot, uint64_t seed,
                              physFitResult* res, physLog* log) {
  physLog dummy = {0};
  if (!log) log = &dummy;
  if (!res || !res->theta || nboot < 0 || !ds || ds->ntraj < 1 || !t || !opt)
    return phys_error(log, PHYS_ERR_ARG, "bootstrap: needs a fit result, a dataset and nboot >= 0");
  int n = res->ntheta, G = ds->ntraj;
  free(res->boot_theta), free(res->se_boot), free(res->cov_boot);
  res->nboot = nboot, res->nboot_ok = 0;
  res->boot_theta = malloc(sizeof(double) * ((size_t)nboot * n + 1));
  res->se_boot = malloc(sizeof(double) * (size_t)n);
  res->cov_boot = malloc(sizeof(double) * (size_t)n * n);
  physTrajectory* traj = malloc(sizeof(physTrajectory) * (size_t)G);
  if (!res->boot_theta || !res->se_boot || !res->cov_boot || !traj) {
    free(traj);
    return phys_error(log, PHYS_ERR_NOMEM, "bootstrap: out of memory");
  }
  physDataset rs = *ds;   // the same samples, trajectories drawn with replacement (shallow copies)
  rs.traj = traj;
  physFitOptions o = *opt;
  o.starts = 1, o.verbose = 0, o.checkpoint = NULL, o.resume = 0, o.on_checkpoint = NULL;
  if (o.fit_start) o.fit_start = 1;   // a staged fit's refits start at its answer: its last stage only
  // several processes: refit b whole on the process of block b (o.comm NULL: every trajectory), gathered below
  const physFitComm* c = opt->comm && opt->comm->size > 1 ? opt->comm : NULL;
  int P = c ? c->size : 1, me = c ? c->rank : 0;
  o.comm = NULL;
  double* rec = calloc((size_t)nboot * (n + 1) + 1, sizeof(double));   // per refit: 1 if it succeeded, theta
  size_t* part = malloc(sizeof(size_t) * 2 * (size_t)P);
  physStatus st = rec && part ? PHYS_OK : phys_error(log, PHYS_ERR_NOMEM, "bootstrap: out of memory");
  if (st == PHYS_OK) block_parts(part, P, nboot, (size_t)n + 1);
  int b0 = st == PHYS_OK ? (int)(part[P + me] / (n + 1)) : 0, b1 = st == PHYS_OK ? b0 + (int)(part[me] / (n + 1)) : 0;
  physRng rng;
  phys_rng_seed(&rng, seed);
  for (int b = 0; b < b1; b++) {   // (every resample drawn, to reach this process's)
    for (int g = 0; g < G; g++) traj[g] = ds->traj[phys_rng_next(&rng) % (uint64_t)G];
    physFitResult rb;
    physLog lb = {0};
    if (b >= b0 && phys_fit(m, t, res->theta, lower, upper, &rs, &o, &rb, &lb) == PHYS_OK) {
      rec[(size_t)b * (n + 1)] = 1;
      memcpy(rec + (size_t)b * (n + 1) + 1, rb.theta, sizeof(double) * (size_t)n);
      phys_fit_result_free(&rb);
    }
  }
  if (st == PHYS_OK && c && !c->allgatherv(c->ctx, rec, part, part + P))
    st = phys_error(log, PHYS_ERR_IO, "bootstrap: the processes could not exchange their refits");
  for (int b = 0; st == PHYS_OK && b < nboot; b++)
    if (rec[(size_t)b * (n + 1)] == 1)
      memcpy(res->boot_theta + (size_t)res->nboot_ok++ * n, rec + (size_t)b * (n + 1) + 1, sizeof(double) * (size_t)n);
  free(traj);
  free(rec);
  free(part);
  if (st != PHYS_OK) return st;
  sample_cov(res->boot_theta, res->nboot_ok, n, res->cov_boot, res->se_boot);
  st = phys_param_set(t, m, res->theta);
  return st == PHYS_OK ? PHYS_OK : phys_error(log, st, "bootstrap: the fit's theta is not a valid model");
}
