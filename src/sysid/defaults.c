// defaults.c - identify's data-dependent defaults (sysid.h, issue 12 item 5): the substeps that honour the
// model's <option timestep>, the loss that is not biased by differenced velocities, and the check of one-step
// velocity residuals for differencing noise.
//
// Why kstep on positions when the data have no velocity columns. Motion capture records poses; a velocity
// v_k = (q_k - q_{k-1}) / h carries the positions' noise divided by h (1 mm at 100 Hz: 0.14 m/s). The one-step
// loss starts every prediction from such a velocity (an errors-in-variables problem) and is biased: a cube sliding
// in MuJoCo with friction 0.3 comes out +117 % (tests/sysid/test_oracle_fit.c). Multiple shooting over 30 samples
// on positions only amortizes the noisy start: +0.12 % (10 samples: +14 %; one rollout from the extrapolated
// first velocity: -8.9 %).
//
// Velocity columns that are differenced positions. Motion-capture exports often carry velocities, but as backward
// differences of the poses (the ContactNets cube: its source says so; its columns deviate from the differences by
// 0.15 of the differences' change per sample, lightly smoothed). They hold no information the positions do not,
// and one-step prediction from them is biased like that from physid's own differences: the real cube's friction
// 0.229 from 12 tosses and 0.176 from 100, outside each other's intervals, but kstep on positions 0.182 and 0.187.
// A simulator at one step per sample writes velocities that are exactly the backward differences of its positions
// too (semi-implicit Euler: q_{k+1} = q_k (+) h v_{k+1}, so (q_{k+1} (-) q_k) / h = v_{k+1} in every joint type,
// as physid simulate and MuJoCo integrate), so equality cannot tell them apart. It need not: such velocities are
// the positions' differences either way, and kstep on positions is right both without noise (the truth is still a
// zero-residual fit) and with it. Measured velocities (a tachometer, or a simulator's state sampled every n > 1
// steps) deviate from the differences: by (n - 1) / 2n of their change per sample for a smooth motion (0.4 at
// n = 5), by sqrt(1/3) for exact velocities beside white position noise; they stay on onestep. The threshold 0.2
// lies between; --velocities differenced|measured declares it instead.
//
// Differencing noise in one-step residuals. With white position noise n_k, differenced velocities and the
// one-step prediction x_{k+1} = step(x_k), the position residual is e_q ~ n_{k+1} - 2 n_k + n_{k-1} and the
// velocity residual h e_v the same second difference: their correlation is ~1 and the lag-1 autocorrelation of
// e_v is -2/3. Recorded velocities with their own noise give a correlation far below 1 (the two noises are
// independent), and model error gives residuals that are smooth in time (lag-1 autocorrelation near +1).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "rng.h"
#include "sysid.h"

#define DIFF_HORIZON 30           // kstep's horizon on differenced data (the mocap cube: 10 gives +14 %, 30 +0.12 %)
#define SUBSTEP_TOL 0.01          // sample interval / timestep within 1 % of an integer counts as that integer
#define NOISE_CORR 0.8            // differencing noise: correlation of e_q with h e_v above this
#define NOISE_LAG1 (-0.3)         // and the lag-1 autocorrelation of e_v below this

// sysid.h
int phys_dataset_differenced(const physModel* m, const physDataset* ds) {
  if (!m || !ds || ds->ntraj < 1) return 0;
  for (int k = 0; k < ds->ntraj; k++)
    if (ds->traj[k].has_qvel) return 0;
  return 1;
}

// one trajectory's sums for phys_dataset_backward_weight, with x = b_k - b_{k+1}, y = v_k - b_{k+1} over
// 1 <= k <= T - 2: sxy[i] += x y, sxx[i] += x^2 (b, bnext: nv scratch values each)
static void backward_sums(const physModel* m, const physTrajectory* tr, double* sxy, double* sxx, double* b,
                          double* bnext) {
  int nq = m->nq, nv = m->nv;
  for (int k = 1; k < tr->T; k++) {
    double dt = tr->time[k] - tr->time[k - 1];
    phys_difference_pos(m, bnext, dt, tr->qpos + (size_t)(k - 1) * nq, tr->qpos + (size_t)k * nq);
    phys_wrap_continuous(bnext, m, dt);
    for (int i = 0; k > 1 && i < nv; i++) {   // b holds b_{k-1}, bnext b_k: the pair of sample k - 1
      double x = b[i] - bnext[i], y = tr->qvel[(size_t)(k - 1) * nv + i] - bnext[i];
      sxy[i] += x * y, sxx[i] += x * x;
    }
    for (int i = 0; i < nv; i++) b[i] = bnext[i];
  }
}

// sysid.h
double phys_dataset_backward_weight(const physModel* m, const physDataset* ds) {
  if (!m || !ds || ds->nv != m->nv || ds->nq != m->nq || m->nv < 1) return NAN;
  double* buf = calloc(4 * (size_t)m->nv, sizeof(double));
  if (!buf) return NAN;
  double *sxy = buf, *sxx = buf + m->nv, sum = 0;
  int used = 0;
  for (int k = 0; k < ds->ntraj; k++)
    if (ds->traj[k].has_qvel) backward_sums(m, &ds->traj[k], sxy, sxx, buf + 2 * m->nv, buf + 3 * m->nv);
  for (int i = 0; i < m->nv; i++) {
    if (!ds->obs_q[i] || !ds->obs_v[i] || !(sxx[i] > 0)) continue;
    sum += sxy[i] / sxx[i], used++;
  }
  free(buf);
  return used ? sum / used : NAN;
}

// sysid.h
int phys_fit_default_substeps(double dt_obs, double timestep, char* why, size_t nwhy) {
  double ratio = dt_obs / timestep;
  if (!(ratio > 0) || !isfinite(ratio)) {
    snprintf(why, nwhy, "substeps: 1 (sample interval %g s, model timestep %g s)", dt_obs, timestep);
    return 1;
  }
  if (ratio > 1e6) {   // --substeps' own limit
    snprintf(why, nwhy, "substeps: 1000000 (the sample interval %.6g s is %.4g model timesteps of %.6g s: capped; "
             "--substeps S to override)", dt_obs, ratio, timestep);
    return 1000000;
  }
  long n = lround(ratio);
  if (n >= 1 && fabs(ratio - (double)n) <= SUBSTEP_TOL * ratio) {
    snprintf(why, nwhy, "substeps: %ld (the sample interval %.6g s is %ld model timestep%s of %.6g s; --substeps S "
             "to override)", n, dt_obs, n, n > 1 ? "s" : "", timestep);
    return (int)n;
  }
  if (ratio < 1) {
    snprintf(why, nwhy, "substeps: 1 (the sample interval %.6g s is shorter than the model timestep %.6g s: one "
             "step of %.6g s per sample; --substeps S to override)", dt_obs, timestep, dt_obs);
    return 1;
  }
  n = (long)ceil(ratio - SUBSTEP_TOL * ratio);
  snprintf(why, nwhy, "substeps: %ld (the sample interval %.6g s is %.4g model timesteps of %.6g s, not a whole "
           "number: %ld steps of %.6g s per sample, the nearest not longer than the model's; --substeps S to "
           "override)", n, dt_obs, ratio, timestep, n, dt_obs / (double)n);
  return (int)n;
}

// whether the velocities are differenced positions (phys_fit_data_defaults) and why, in reason
static int velocities_differenced(const physModel* m, const physDataset* ds, int vel, char* reason, size_t n) {
  if (phys_dataset_differenced(m, ds)) {
    snprintf(reason, n, "the data have no velocity columns: velocities differenced from positions make one-step "
             "prediction biased; --loss onestep to override");
    return 1;
  }
  if (vel == PHYS_VEL_DIFFERENCED) {
    snprintf(reason, n, "--velocities differenced: velocities differenced from positions make one-step prediction "
             "biased; --loss onestep to override");
    return 1;
  }
  if (vel == PHYS_VEL_MEASURED) {
    snprintf(reason, n, "--velocities measured; --loss kstep|rollout to override");
    return 0;
  }
  double alpha = phys_dataset_backward_weight(m, ds);
  int diff = fabs(alpha - 1) < PHYS_BACKWARD_TOL;
  if (isnan(alpha))
    snprintf(reason, n, "the data record velocities; --loss kstep|rollout to override");
  else if (diff)
    snprintf(reason, n, "the velocity columns are backward differences of the positions: as a blend of the backward "
             "and forward differences they weigh the backward one %.3f, within %g of 1 (measured velocities: 0.5 to "
             "0.75 in a smooth motion); velocities differenced from noisy positions make one-step prediction biased; "
             "--velocities measured or --loss onestep to override", alpha, PHYS_BACKWARD_TOL);
  else
    snprintf(reason, n, "the velocity columns are measured: as a blend of the backward and forward differences of "
             "the positions they weigh the backward one %.3f, not within %g of 1 (differenced velocities: 1); "
             "--velocities differenced or --loss kstep|rollout to override", alpha, PHYS_BACKWARD_TOL);
  return diff;
}

// sysid.h
void phys_fit_data_defaults(physFitOptions* opt, const physModel* m, const physDataset* ds, unsigned given, int vel,
                            char* why, size_t nwhy) {
  char sub[512] = "", loss[768] = "", reason[512];
  if (!(given & PHYS_GIVEN_SUBSTEPS))
    opt->substeps = phys_fit_default_substeps(ds->dt_obs, m->opt.timestep, sub, sizeof sub);
  if (!(given & PHYS_GIVEN_LOSS)) {
    if (velocities_differenced(m, ds, vel, reason, sizeof reason)) {
      opt->loss = PHYS_LOSS_KSTEP;
      if (!(given & PHYS_GIVEN_HORIZON)) opt->horizon = DIFF_HORIZON;
      if (!(given & PHYS_GIVEN_WEIGHTS)) opt->w_vel = 0;
      snprintf(loss, sizeof loss, "loss: kstep, horizon %d%s (%s)", opt->horizon,
               (given & PHYS_GIVEN_WEIGHTS) ? "" : ", on positions (velocity weight 0)", reason);
    } else {
      opt->loss = PHYS_LOSS_ONESTEP;
      snprintf(loss, sizeof loss, "loss: onestep (%s)", reason);
    }
  }
  snprintf(why, nwhy, "%s%s%s", sub, sub[0] && loss[0] ? "\n" : "", loss);
}

// sysid.h
void phys_fit_start_default(physFitOptions* opt, const physModel* m, const physDataset* ds, int mode, int vel,
                            char* why, size_t nwhy) {
  char reason[512];
  if (mode == PHYS_START_ON || mode == PHYS_START_OFF) {
    opt->fit_start = mode == PHYS_START_ON;
    snprintf(why, nwhy, "segment starts: %s (--fit-start %s)", opt->fit_start ? "fitted" : "the recorded samples",
             opt->fit_start ? "on" : "off");
    return;
  }
  // auto: a line only when the starts are fitted (a run from the recorded samples, e.g. every onestep run, is the
  // usual case and needs no word)
  if (nwhy) why[0] = 0;
  opt->fit_start = opt->loss == PHYS_LOSS_KSTEP && opt->w_vel == 0 && velocities_differenced(m, ds, vel, reason,
                                                                                            sizeof reason)
                       ? PHYS_FIT_START_STAGED : 0;
  if (opt->fit_start)
    snprintf(why, nwhy, "segment starts: fitted, position and velocity per segment, tied to the sample, after a first "
             "fit from the recorded samples (kstep on positions with differenced velocities: a start from the noisy "
             "sample biases the fit, and fitted starts alone can stop behind a contact-timing jump; --fit-start "
             "on|off to override)");
}

// correlation of a and b over n values and lag-1 autocorrelation of b (NaN if degenerate)
static void pair_stats(const double* a, const double* b, int n, double* corr, double* lag1) {
  double sab = 0, saa = 0, sbb = 0, sl = 0;
  for (int k = 0; k < n; k++) {
    sab += a[k] * b[k], saa += a[k] * a[k], sbb += b[k] * b[k];
    if (k > 0) sl += b[k] * b[k - 1];
  }
  *corr = saa > 0 && sbb > 0 ? sab / sqrt(saa * sbb) : NAN;
  *lag1 = sbb > 0 ? sl / sbb : NAN;
}

// the one-step residual series of coordinate pairs (position tangent i, velocity i) over all trajectories:
// eq[c * N + s], hev[c * N + s] (N = samples after the first of every trajectory, s in trajectory order; one
// zero at each trajectory's first residual keeps the lag-1 sums within a trajectory; a trajectory whose
// prediction raised a simulation warning, such as an inexact contact solve, is all zeros); returns N or -1
static int residual_series(const physModel* m, const physDataset* ds, const physFitOptions* o1, const int* pair,
                           int npair, double* eq, double* hev, int N, physLog* log) {
  int nq = m->nq, nv = m->nv, s = 0, Tmax = 0, nok = 0;
  for (int k = 0; k < ds->ntraj; k++) Tmax = ds->traj[k].T > Tmax ? ds->traj[k].T : Tmax;
  double* buf = malloc(sizeof(double) * ((size_t)Tmax * (size_t)(nq + nv) + (size_t)nv));
  if (!buf) return phys_error(log, PHYS_ERR_NOMEM, "differencing check: out of memory"), -1;
  double *qp = buf, *vp = buf + (size_t)Tmax * nq, *e = vp + (size_t)Tmax * nv;
  for (int k = 0; k < ds->ntraj; k++) {
    const physTrajectory* tr = &ds->traj[k];
    if (tr->T < 2) continue;
    physLog tlog = {0};
    int ok = phys_fit_predict(m, ds, k, o1, qp, vp, &tlog) == PHYS_OK;   // a step warning: the trajectory is left out
    nok += ok;
    for (int t = 1; t < tr->T; t++, s++) {
      if (ok) phys_difference_pos(m, e, 1.0, qp + (size_t)t * nq, tr->qpos + (size_t)t * nq);
      for (int c = 0; c < npair; c++) {
        int i = pair[c], use = ok && t > 1;
        eq[(size_t)c * N + s] = use ? e[i] : 0;
        hev[(size_t)c * N + s] = use ? ds->dt_obs * (tr->qvel[(size_t)t * nv + i] - vp[(size_t)t * nv + i]) : 0;
      }
    }
  }
  free(buf);
  if (nok == 0) return phys_error(log, PHYS_ERR_NUMERIC, "differencing check: every one-step prediction raised a "
                                  "simulation warning"), -1;
  return s;
}

// sysid.h
physStatus phys_fit_differencing_noise(const physModel* m, const physDataset* ds, const physFitOptions* opt,
                                       double* corr, double* lag1, int* npair, physLog* log) {
  *corr = *lag1 = NAN;
  *npair = 0;
  if (!m || !ds || !opt || ds->nv != m->nv || ds->nq != m->nq)
    return phys_error(log, PHYS_ERR_ARG, "differencing check: missing or mismatched arguments");
  int N = 0, np = 0;
  for (int k = 0; k < ds->ntraj; k++) N += ds->traj[k].T > 1 ? ds->traj[k].T - 1 : 0;
  int* pair = malloc(sizeof(int) * (size_t)(m->nv > 0 ? m->nv : 1));
  double* eq = pair ? malloc(sizeof(double) * 2 * (size_t)(N > 0 ? N : 1) * (size_t)(m->nv > 0 ? m->nv : 1)) : NULL;
  if (!eq) {
    free(pair);
    return phys_error(log, PHYS_ERR_NOMEM, "differencing check: out of memory");
  }
  for (int i = 0; i < m->nv; i++)
    if (ds->obs_q[i] && ds->obs_v[i]) pair[np++] = i;
  double* hev = eq + (size_t)N * (size_t)(np > 0 ? np : 1);
  physFitOptions o1 = *opt;
  o1.loss = PHYS_LOSS_ONESTEP;
  physStatus st = PHYS_OK;
  if (np > 0 && N > 2 && residual_series(m, ds, &o1, pair, np, eq, hev, N, log) < 0) st = PHYS_ERR_NUMERIC;
  if (st == PHYS_OK && np > 0 && N > 2) {
    double sc = 0, sl = 0;
    int used = 0;
    for (int c = 0; c < np; c++) {   // the mean over coordinates of each one's statistics
      double cc, ll;
      pair_stats(eq + (size_t)c * N, hev + (size_t)c * N, N, &cc, &ll);
      if (isnan(cc) || isnan(ll)) continue;
      sc += cc, sl += ll, used++;
    }
    if (used > 0) *corr = sc / used, *lag1 = sl / used;
    *npair = used;
  }
  free(eq);
  free(pair);
  return st;
}

// sysid.h
int phys_fit_differencing_suspect(double corr, double lag1) {
  return corr > NOISE_CORR && lag1 < NOISE_LAG1;
}

// sysid.h
physStatus phys_fit_probe(physModel* m, const physParamTable* t, const double* theta0, const double* lower,
                          const double* upper, const physDataset* ds, const physFitOptions* opt,
                          const physFitResult* res, int nprobe, double* theta_best, double* loss_best, physLog* log) {
  *loss_best = NAN;
  if (!m || !t || !theta0 || !lower || !upper || !ds || !opt || !res || !res->theta || nprobe < 0 || !theta_best)
    return phys_error(log, PHYS_ERR_ARG, "probe: missing arguments");
  int n = res->ntheta;
  double* th = malloc(sizeof(double) * (size_t)n);
  if (!th) return phys_error(log, PHYS_ERR_NOMEM, "probe: out of memory");
  physRng rng;
  phys_rng_seed(&rng, opt->seed ^ 0x9e3779b97f4a7c15ULL);   // draws of their own, not the multi-start's
  physFitOptions o = *opt;
  o.prior = 0, o.verbose = 0;
  for (int p = 0; p < nprobe; p++) {
    phys_fit_draw_start(th, theta0, lower, upper, n, &rng);
    physLog plog = {0};
    double loss;   // (summed as the fit sums it: shared among opt->comm's processes)
    if (phys_fit_loss(m, t, th, NULL, ds, &o, &loss, &plog) != PHYS_OK) continue;   // a probe that fails
    if (isfinite(loss) && (isnan(*loss_best) || loss < *loss_best)) {
      *loss_best = loss;
      for (int i = 0; i < n; i++) theta_best[i] = th[i];
    }
  }
  free(th);
  return phys_param_set(t, m, res->theta);
}
