// cmd_evaluate.c - `physid evaluate MODEL DATA`: how well a model predicts recorded trajectories.
//
// For every trajectory of DATA (a file or a folder, loaded as `physid identify` loads them: src/sysid), the
// model is rolled out from an observed sample for `horizon` observation intervals (0: from the first sample
// to the end) with `substeps` simulation steps per interval (timestep = interval / substeps; by default
// identify's: the sample interval over the model's timestep, src/sysid/defaults.c), and compared
// with the observations it passes: position error |p_pred - p_obs| (m) of every free joint, rotation error
// |log(R_pred' R_obs)| (degrees) of every free and ball joint, and the error of hinge (degrees) and slide (m)
// joints (a hinge without limits, a continuous joint, modulo 2 pi: the wrapped difference in (-pi, pi]). Recorded
// inputs (controls u, joint forces tau) hold from their sample to the next at every substep. Segments start at samples 0, horizon, 2 horizon, ... (each from the observed state, the contact list
// cleared: no warm start carries over). A step accepted with a warning (an inexact contact solve) is counted
// and the first one reported; a rejected step (non-finite state) ends the run with exit 1. These are the multi-step prediction metrics of paper 004 (CCN) on
// the tosses: the mean over all predicted samples and the error at the end of each segment, and paper 004's
// trajectory errors (per trajectory the mean over its predicted samples, then the mean over trajectories).
// --truth MODEL adds paper 004's parameter errors against the true model (src/sysid/metrics.c): volume error of
// each body's collision geometry (symmetric difference of convex hulls over the true volume), friction error
// and inertia error.
// Under mpirun (tools/mpi.c) the processes split the trajectories in blocks and exchange each trajectory's error
// sums, added in trajectory order as the plain binary adds them (eval_all): the same figures on any number of
// processes; process 0 prints and writes.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "metrics.h"
#include "e2e.h"
#include "mlp_io.h"
#include "residual.h"
#include "rot.h"
#include "sysid.h"

typedef struct evalArgs_ {
  int substeps;
  int horizon;
  int contact;              // -1: the model's
  int files, skip;
  const char* json;
  const char* truth;        // true model for the parameter errors (NULL: none)
  double length;            // inertia error's characteristic length (0: the true body's)
  int floating;
  int quiet;
  const char* e2e;          // --end-to-end FILE: roll out this network instead of the model (e2e.h)
  int start;                // --start: 0 recorded (each segment from its sample), 1 fitted (as identify fits them)
  double fit_loss;          // with --start fitted: identify's loss there (kstep on positions, starts fitted)
} evalArgs;

static physMlp* g_e2e;       // the --end-to-end network (NULL: the model)
static double* g_e2e_work;   // its rollout scratch

static int g_nwarn;          // steps accepted with a warning (inexact contact solves), over the run
static char g_warn[1024];    // the first of them
static char g_err[1024];     // why a rollout stopped (eval_traj)

// running sums of one error channel: mean over predicted samples and over segment ends
typedef struct evalSum_ {
  double sum, sum_end, max;
  long n, n_end;
  double traj_sum;          // sum over trajectories of their mean (paper 004's trajectory error)
  int ntraj;                // trajectories with samples in this channel
  double t_sum;             // this trajectory's running sum and count
  long t_n;
} evalSum;

enum { EV_POS = 0, EV_ROT, EV_HINGE, EV_SLIDE, EV_N };
static const char* g_ev_name[EV_N] = {"position_m", "rotation_deg", "hinge_deg", "slide_m"};

// add one error value (end: 1 at a segment's last sample)
static void ev_add(evalSum* s, double e, int end) {
  s->sum += e;
  s->n++;
  s->t_sum += e;
  s->t_n++;
  if (e > s->max) s->max = e;
  if (end) s->sum_end += e, s->n_end++;
}

// angle (rad) of R(qa)' R(qb) for unit quaternions qa, qb: 2 atan2(|vec(qa* qb)|, |w|)
static double quat_angle(const double qa[4], const double qb[4]) {
  double c[4], r[4];
  phys_quat_conj(c, qa);
  phys_quat_mul(r, c, qb);
  double s = sqrt(r[1] * r[1] + r[2] * r[2] + r[3] * r[3]);
  return 2 * atan2(s, fabs(r[0]));
}

// the errors of a predicted configuration q against the observed one o, accumulated per channel; only the
// coordinates the data observed (ds->obs_q, tangent layout: a free joint's 3 translations, then 3 rotations)
static void compare(evalSum* sums, const physModel* m, const physDataset* ds, const double* q, const double* o,
                    int end) {
  const double deg = 180 / 3.14159265358979323846;
  for (int j = 0; j < m->njnt; j++) {
    int a = m->jnt_qposadr[j], v = m->jnt_dofadr[j];
    const unsigned char* ob = ds->obs_q + v;
    switch (m->jnt_type[j]) {
      case PHYS_JNT_FREE: {
        double dp[3] = {0, 0, 0};
        for (int k = 0; k < 3; k++) dp[k] = ob[k] ? q[a + k] - o[a + k] : 0;
        if (ob[0] || ob[1] || ob[2]) ev_add(sums + EV_POS, sqrt(phys_dot3(dp, dp)), end);
        if (ob[3]) ev_add(sums + EV_ROT, deg * quat_angle(q + a + 3, o + a + 3), end);
        break;
      }
      case PHYS_JNT_BALL:
        if (ob[0]) ev_add(sums + EV_ROT, deg * quat_angle(q + a, o + a), end);
        break;
      case PHYS_JNT_HINGE:
        if (ob[0]) ev_add(sums + EV_HINGE, deg * fabs(m->jnt_limited[j] ? q[a] - o[a] : phys_wrap_angle(q[a] - o[a])), end);
        break;
      default:
        if (ob[0]) ev_add(sums + EV_SLIDE, fabs(q[a] - o[a]), end);
        break;
    }
  }
}

// end a trajectory: add its mean to each channel's mean over trajectories
static void ev_end_traj(evalSum* sums) {
  for (int c = 0; c < EV_N; c++) {
    evalSum* s = sums + c;
    if (s->t_n) s->traj_sum += s->t_sum / s->t_n, s->ntraj++;
    s->t_sum = 0, s->t_n = 0;
  }
}

// roll trajectory tr out segment by segment and accumulate its errors into sums; 0 and the message in g_err if a
// step fails (non-finite state)
static int eval_traj(evalSum* sums, physModel* m, physData* d, const physDataset* ds, int ti, const evalArgs* a) {
  const physTrajectory* tr = ds->traj + ti;
  int H = a->horizon > 0 ? a->horizon : tr->T - 1;
  for (int s0 = 0; s0 + 1 < tr->T; s0 += H) {
    // start from the observed sample s0, no warm start
    phys_reset_data(m, d);
    memcpy(d->qpos, tr->qpos + (size_t)s0 * m->nq, sizeof(double) * (size_t)m->nq);
    memcpy(d->qvel, tr->qvel + (size_t)s0 * m->nv, sizeof(double) * (size_t)m->nv);
    d->time = tr->time[s0];
    int last = s0 + H < tr->T - 1 ? s0 + H : tr->T - 1;
    for (int k = s0 + 1; k <= last; k++) {
      m->opt.timestep = (tr->time[k] - tr->time[k - 1]) / a->substeps;
      // the recorded inputs of sample k - 1 hold until sample k (zero without them)
      if (tr->ctrl) memcpy(d->ctrl, tr->ctrl + (size_t)(k - 1) * m->nu, sizeof(double) * (size_t)m->nu);
      if (tr->qfrc) memcpy(d->qfrc_applied, tr->qfrc + (size_t)(k - 1) * m->nv, sizeof(double) * (size_t)m->nv);
      if (g_e2e) {   // the end-to-end network: one prediction per sample interval, no physics
        phys_e2e_step(m, g_e2e, tr->time[k] - tr->time[k - 1], d->qpos, d->qvel, g_e2e_work);
        compare(sums, m, ds, d->qpos, tr->qpos + (size_t)k * m->nq, k == last);
        continue;
      }
      for (int s = 0; s < a->substeps; s++) {
        int nw = d->nwarning;
        double t0 = d->time;
        phys_step(m, d);
        if (d->nwarning == nw) continue;
        if (d->time == t0) {   // rejected (non-finite state, singular matrix): the rollout cannot go on
          snprintf(g_err, sizeof g_err, "%s: sample %d (t = %.9g): %s", tr->source, k, tr->time[k], d->lastwarning);
          return 0;
        }
        // accepted with a warning (an inexact contact solve): counted, the first one reported at the end
        if (g_nwarn++ == 0)
          snprintf(g_warn, sizeof g_warn, "%s: sample %d (t = %.9g): %s", tr->source, k, tr->time[k], d->lastwarning);
      }
      compare(sums, m, ds, d->qpos, tr->qpos + (size_t)k * m->nq, k == last);
    }
  }
  ev_end_traj(sums);
  return 1;
}

// a trajectory's record in eval_all's exchange: per channel its sum, sum at segment ends, max, samples, segment
// ends, mean (0 or 1 trajectories); then its step warnings and 1 if its rollout failed
#define EV_CH 7
#define EV_REC (EV_N * EV_CH + 2)

// trajectory sums s (one trajectory's) into rec, or rec folded into the running sums s (in trajectory order)
static void ev_record(double* rec, evalSum* s, int fold) {
  for (int c = 0; c < EV_N; c++, rec += EV_CH) {
    evalSum* e = s + c;
    if (!fold) {
      double x[EV_CH] = {e->sum, e->sum_end, e->max, (double)e->n, (double)e->n_end, e->traj_sum, e->ntraj};
      memcpy(rec, x, sizeof x);
      continue;
    }
    e->sum += rec[0], e->sum_end += rec[1], e->max = rec[2] > e->max ? rec[2] : e->max;
    e->n += (long)rec[3], e->n_end += (long)rec[4], e->traj_sum += rec[5], e->ntraj += (int)rec[6];
  }
}

// every trajectory's errors, each summed on its own, then the trajectories' sums added in trajectory order. Under
// mpirun process p rolls out the trajectories [p G / P, (p + 1) G / P) and the processes exchange their records and
// their first message (the error that stopped a rollout, else the first step warning): the figures, warnings and
// error are the same on any number of processes. 0 after a message (process 0 prints it)
static int eval_all(evalSum* sums, physModel* m, physData* d, const physDataset* ds, const evalArgs* a) {
  const physFitComm* c = cli_mpi_comm();
  int P = c ? c->size : 1, me = c ? c->rank : 0, G = ds->ntraj, ok = 1;
  double* rec = calloc((size_t)G * EV_REC + 1, sizeof(double));
  size_t* part = malloc(sizeof(size_t) * 2 * (size_t)P);
  char* msg = malloc(sizeof g_warn * ((size_t)P + 1));
  if (!rec || !part || !msg) {   // (no exchange: the other processes wait for the abort)
    free(rec), free(part), free(msg);
    cli_error("evaluate: out of memory");
    return 0;
  }
  for (int p = 0; p < P; p++) {
    long long k0 = (long long)G * p / P, k1 = (long long)G * (p + 1) / P;
    part[P + p] = (size_t)k0 * EV_REC, part[p] = (size_t)(k1 - k0) * EV_REC;
  }
  int k0 = (int)(part[P + me] / EV_REC), k1 = k0 + (int)(part[me] / EV_REC);
  for (int k = k0; ok && k < k1; k++) {
    evalSum one[EV_N];
    memset(one, 0, sizeof one);
    int w0 = g_nwarn;
    ok = eval_traj(one, m, d, ds, k, a);
    ev_record(rec + (size_t)k * EV_REC, one, 0);
    rec[(size_t)k * EV_REC + EV_N * EV_CH] = g_nwarn - w0, rec[(size_t)k * EV_REC + EV_N * EV_CH + 1] = !ok;
  }
  memcpy(msg + (size_t)P * sizeof g_warn, ok ? g_warn : g_err, sizeof g_warn);
  int shared = !c || (c->allgatherv(c->ctx, rec, part, part + P) &&
                      c->allgather(c->ctx, msg + (size_t)P * sizeof g_warn, msg, sizeof g_warn));
  if (!shared) cli_error("evaluate: the processes could not exchange their figures");
  if (!c) memcpy(msg, msg + sizeof g_warn, sizeof g_warn);
  g_nwarn = 0;
  ok = shared;
  for (int k = 0; ok && k < G; k++) {
    double* r = rec + (size_t)k * EV_REC;
    int p = 0;   // the trajectory's process
    while (p + 1 < P && part[P + p + 1] <= (size_t)k * EV_REC) p++;
    if (r[EV_N * EV_CH + 1] != 0) {
      cli_error("%s", msg + (size_t)p * sizeof g_warn);
      ok = 0;
    } else {
      if (r[EV_N * EV_CH] > 0 && !g_nwarn) memcpy(g_warn, msg + (size_t)p * sizeof g_warn, sizeof g_warn);
      g_nwarn += (int)r[EV_N * EV_CH];
      ev_record(r, sums, 1);
    }
  }
  free(rec), free(part), free(msg);
  return ok;
}

// --start fitted: every segment started as identify's fit starts it (issue 12): the loss identify fits for
// differenced velocities (kstep over the horizon, or one rollout per trajectory with horizon 0, on positions:
// weights 1000, 100, 0), its start offsets fitted by the fit's own evaluation (phys_fit_segment_starts), the
// predictions from there (phys_fit_predict_from: the fit's steps of dt_obs / substeps) compared as eval_traj
// compares; a->fit_loss gets that evaluation's loss. 0 after a message
static int eval_fitted(evalSum* sums, physModel* m, const physDataset* ds, evalArgs* a) {
  physFitOptions opt;
  phys_fit_defaults(&opt);
  opt.loss = a->horizon > 0 ? PHYS_LOSS_KSTEP : PHYS_LOSS_ROLLOUT;
  opt.horizon = a->horizon > 0 ? a->horizon : 1;
  opt.substeps = a->substeps, opt.w_vel = 0, opt.fit_start = 1;
  physParamTable t;
  physLog log;
  memset(&log, 0, sizeof log);
  if (phys_param_table_build(&t, m, NULL, 0, &log) != PHYS_OK) {
    cli_error("evaluate: %s", log.error);
    return 0;
  }
  int nseg = phys_fit_nsegments(ds, &opt), T = 0;
  for (int k = 0; k < ds->ntraj; k++) T = ds->traj[k].T > T ? ds->traj[k].T : T;
  double* qs = malloc(sizeof(double) * ((size_t)nseg * (m->nq + m->nv) + (size_t)T * (m->nq + m->nv) + 1));
  double *vs = qs + (size_t)nseg * m->nq, *qp = vs + (size_t)nseg * m->nv, *vp = qp + (size_t)T * m->nq;
  double theta[1] = {0};
  physStatus st = qs ? phys_fit_segment_starts(m, &t, theta, ds, &opt, qs, vs, &a->fit_loss, &log)
                     : phys_error(&log, PHYS_ERR_NOMEM, "evaluate: out of memory");
  for (int k = 0, j = 0; st == PHYS_OK && k < ds->ntraj; k++) {
    const physTrajectory* tr = ds->traj + k;
    st = phys_fit_predict_from(m, ds, k, &opt, qs + (size_t)j * m->nq, vs + (size_t)j * m->nv, qp, vp, &g_nwarn,
                               &log);
    int h = a->horizon > 0 ? a->horizon : tr->T - 1;
    for (int i = 1; st == PHYS_OK && i < tr->T; i++)
      compare(sums, m, ds, qp + (size_t)i * m->nq, tr->qpos + (size_t)i * m->nq, i % h == 0 || i == tr->T - 1);
    ev_end_traj(sums);
    j += tr->T > 1 ? (tr->T - 1 + h - 1) / h : 0;
  }
  if (st != PHYS_OK) cli_error("evaluate: %s", log.error);
  if (g_nwarn) snprintf(g_warn, sizeof g_warn, "in the predictions from the fitted starts");
  free(qs);
  phys_param_table_free(&t);
  return st == PHYS_OK;
}

// a metric for printing: "%12.6g" or "n/a"
static void print_metric(double x) {
  if (isnan(x)) printf(" %12s", "n/a");
  else printf(" %12.6g", x);
}

// a metric for JSON: %.17g or null
static void json_metric(FILE* f, const char* key, double x, const char* sep) {
  if (isnan(x)) fprintf(f, "\"%s\": null%s", key, sep);
  else fprintf(f, "\"%s\": %.17g%s", key, x, sep);
}

// the parameter errors against the truth: a table on stdout
static void print_param_errors(const physParamErrors* e, const physModel* m, const evalArgs* a) {
  printf("parameter errors against %s (paper 004: volume |A xor B|/|B|, friction |mu - mu*|/mu*, inertia "
         "|(theta - theta*)/rho|)\n", a->truth);
  printf("%-14s %12s %12s %12s %12s\n", "body", "volume", "symdiff_m3", "friction", "inertia");
  for (int i = 0; i < e->nbody; i++) {
    const physBodyErrors* b = e->body + i;
    const char* name = phys_id2name(m, "body", b->body);
    printf("%-14s", name && name[0] ? name : "(unnamed)");
    print_metric(b->volume_error);
    print_metric(b->symdiff);
    print_metric(b->friction_error);
    print_metric(b->inertia_error);
    printf("\n");
  }
  printf("%-14s", "mean");
  print_metric(e->volume_error);
  printf(" %12s", "");
  print_metric(e->friction_error);
  print_metric(e->inertia_error);
  printf("\n");
}

// the parameter errors as the JSON member "parameter_errors"
static void json_param_errors(FILE* f, const physParamErrors* e, const physModel* m, const evalArgs* a) {
  fprintf(f, ",\n  \"parameter_errors\": {\"truth\": ");
  cli_json_string(f, a->truth);
  fprintf(f, ", \"inertia_length\": %.17g, ", a->length);
  json_metric(f, "volume", e->volume_error, ", ");
  json_metric(f, "friction", e->friction_error, ", ");
  json_metric(f, "inertia", e->inertia_error, ",\n    \"bodies\": [");
  for (int i = 0; i < e->nbody; i++) {
    const physBodyErrors* b = e->body + i;
    const char* name = phys_id2name(m, "body", b->body);
    fprintf(f, "%s\n      {\"body\": ", i ? "," : "");
    cli_json_string(f, name);
    fprintf(f, ", ");
    json_metric(f, "volume", b->volume_error, ", ");
    json_metric(f, "symdiff_m3", b->symdiff, ", ");
    json_metric(f, "true_volume_m3", b->true_volume, ", ");
    json_metric(f, "friction", b->friction_error, ", ");
    json_metric(f, "inertia", b->inertia_error, "}");
  }
  fprintf(f, "]}");
}

// --end-to-end FILE into g_e2e (sizes checked against m); 0 and a message otherwise
static int load_e2e(const physModel* m, const char* path) {
  physLog log;
  memset(&log, 0, sizeof log);
  g_e2e = phys_mlp_read_json(path, "end-to-end", &log);
  if (!g_e2e) {
    cli_error("%s", log.error);
    return 0;
  }
  if (g_e2e->size[0] != phys_residual_nfeature(m) || g_e2e->size[g_e2e->nlayer] != m->nv) {
    cli_error("%s: the network maps %d to %d values; the model needs %d (state features) to %d (nv)", path,
              g_e2e->size[0], g_e2e->size[g_e2e->nlayer], phys_residual_nfeature(m), m->nv);
    return 0;
  }
  g_e2e_work = malloc(sizeof(double) * (size_t)phys_e2e_nwork(m, g_e2e));
  return g_e2e_work != NULL;
}

// the table on stdout, and the same as JSON into the (checked) output o if asked
static int report(cliOutput* o, const evalSum* sums, const physDataset* ds, const evalArgs* a, const char* model,
                  const physParamErrors* pe, const physModel* m) {
  char hz[32];
  snprintf(hz, sizeof hz, a->horizon > 0 ? "%d samples" : "full", a->horizon);
  printf("evaluate: %d trajectories, horizon %s, %d substep%s per sample (observed coordinates only)%s\n",
         ds->ntraj, hz, a->substeps, a->substeps > 1 ? "s" : "",
         a->start ? "; segment starts fitted as identify fits them" : "");
  if (a->start)
    printf("loss (identify's: %s on positions, weights 1000 100 0, segment starts fitted): %.9g\n",
           a->horizon > 0 ? "kstep" : "rollout", a->fit_loss);
  printf("%-14s %12s %12s %12s %12s %10s\n", "channel", "mean", "traj mean", "at end", "max", "samples");
  for (int c = 0; c < EV_N; c++) {
    const evalSum* s = sums + c;
    if (!s->n) continue;
    printf("%-14s %12.6g %12.6g %12.6g %12.6g %10ld\n", g_ev_name[c], s->sum / s->n, s->traj_sum / s->ntraj,
           s->n_end ? s->sum_end / s->n_end : 0, s->max, s->n);
  }
  if (pe) print_param_errors(pe, m, a);
  if (g_nwarn) cli_warning("evaluate: %d simulation steps raised warnings (accepted; first: %s)", g_nwarn, g_warn);
  if (!a->json) return 1;
  if (!cli_output_open(o)) return 0;
  fprintf(o->f, "{\n  \"model\": ");
  cli_json_string(o->f, model);
  fprintf(o->f, ",\n  \"trajectories\": %d,\n  \"horizon\": %d,\n  \"substeps\": %d", ds->ntraj, a->horizon,
          a->substeps);
  fprintf(o->f, ",\n  \"start\": \"%s\"", a->start ? "fitted" : "recorded");
  if (a->start) fprintf(o->f, ",\n  \"fit_loss\": %.17g", a->fit_loss);
  for (int c = 0; c < EV_N; c++) {
    const evalSum* s = sums + c;
    if (!s->n) continue;
    fprintf(o->f, ",\n  \"%s\": {\"mean\": %.17g, \"traj_mean\": %.17g, \"end\": %.17g, \"max\": %.17g, "
            "\"samples\": %ld, \"trajectories\": %d}", g_ev_name[c], s->sum / s->n, s->traj_sum / s->ntraj,
            s->n_end ? s->sum_end / s->n_end : 0, s->max, s->n, s->ntraj);
  }
  if (pe) json_param_errors(o->f, pe, m, a);
  fprintf(o->f, ",\n  \"step_warnings\": %d\n}\n", g_nwarn);
  return cli_output_commit(o);
}

// load the true model a->truth and compute the parameter errors of m against it into pe; 0 after a message
static int param_errors(physParamErrors* pe, const physModel* m, const evalArgs* a) {
  physModel* t = cli_load_model(a->truth, a->floating);
  if (!t) return 0;
  physLog log;
  memset(&log, 0, sizeof log);
  physStatus st = phys_param_errors(m, t, a->length, pe, &log);
  if (st != PHYS_OK) cli_error("%s: %s", a->truth, log.error);
  phys_free_model(t);
  return st == PHYS_OK;
}

// physid evaluate
// the model evaluate rolls out (MODEL with --floating, --contact, its residual network checked, the end-to-end
// network of --end-to-end loaded) and, with --truth, the parameter errors against the true model into pe; NULL
// and the exit code in *code (an error printed) when one fails
static physModel* evaluated_model(evalArgs* a, const char* path, physParamErrors* pe, int* code) {
  *code = CLI_EXIT_INPUT;
  physModel* m = cli_load_model(path, a->floating);
  if (!m) return NULL;
  int ok = !a->truth || param_errors(pe, m, a);
  if (ok && a->contact >= 0) m->opt.contact = a->contact;
  int icode = ok ? cli_integrator_options(m, "evaluate", path, 0) : -1;
  if (icode >= 0) {
    *code = icode;
    ok = 0;
  }
  if (ok && !cli_residual_fits(m)) {
    *code = CLI_EXIT_USAGE;
    ok = 0;
  }
  if (ok && a->e2e && a->start) {
    cli_error("evaluate: --start fitted fits the model's segment starts; --end-to-end rolls out a network");
    *code = CLI_EXIT_USAGE;
    ok = 0;
  }
  if (ok && a->e2e && !load_e2e(m, a->e2e)) ok = 0;
  if (ok) return m;
  phys_free_model(m);
  return NULL;
}

int cli_evaluate(int argc, char** argv) {
  evalArgs a = {0};
  a.contact = -1;
  const argOption opt[] = {
      {"--substeps", ARG_INT, &a.substeps, "S", "simulation steps per observation interval (default: sample "
       "interval / the model's timestep, as identify; printed)", 1, 1e6, 0},
      {"--horizon", ARG_INT, &a.horizon, "K", "observation intervals per rollout (default 0: the whole "
       "trajectory from its first sample)", 0, 1e9, 0},
      {"--contact", ARG_CHOICE, &a.contact, "lcp|cone|ccp|penalty", "contact model (default: the model's)", 0, 0,
       0},
      {"--files", ARG_INT, &a.files, "N", "use the first N files of a folder (default: all)", 0, 1e9, 0},
      {"--skip", ARG_INT, &a.skip, "N", "skip the first N files of a folder (held-out data)", 0, 1e9, 0},
      {"--json", ARG_STRING, &a.json, "FILE", "also write the figures as JSON", 0, 0, 0},
      {"--truth", ARG_STRING, &a.truth, "MODEL", "also report paper 004's parameter errors (volume, friction, "
       "inertia) against this true model (the same bodies and geoms)", 0, 0, 0},
      {"--inertia-length", ARG_DOUBLE, &a.length, "L", "inertia error's characteristic length in m (default: each "
       "true body's sqrt(tr I / 3 m))", 0, 1e9, 0},
      {"--floating", ARG_FLAG, &a.floating, "", "URDF: give the root link a free joint", 0, 0, 0},
      CLI_MODEL_OPTIONS,
      CLI_INTEGRATOR_OPTIONS,
      {"--quiet", ARG_FLAG, &a.quiet, "", "no warnings on stderr (errors still print)", 0, 0, 0},
      {"--end-to-end", ARG_STRING, &a.e2e, "FILE", "roll out the end-to-end network of FILE (identify --approach "
       "end-to-end --network-out) instead of the model's physics", 0, 0, 0},
      {"--start", ARG_CHOICE, &a.start, "recorded|fitted", "segment starts: the recorded samples (default) or "
       "fitted as identify fits them (kstep on positions; the loss printed)", 0, 0, 0},
  };
  const argCommand cmd = {"evaluate",
                          "Roll the model out from recorded states and report its prediction errors (position, "
                          "rotation, joints)\nagainst the recording: mean over predicted samples, at the end of "
                          "each rollout, and max.",
                          "MODEL DATA", 2, opt, sizeof opt / sizeof opt[0],
                          "physid evaluate models/cube.xml data/cube_toss --skip 8 --horizon 0"};
  const char* pos[ARGS_MAXPOS];
  int code = cli_parse(pos, &cmd, argc, argv);
  if (code >= 0) return code;
  cliOutput o;
  const char* inputs[3] = {pos[0], pos[1], a.truth};   // the outputs may not replace an input
  if (!cli_output_check(&o, "--json", a.json) || cli_output_conflicts(&o, 1, inputs, a.truth ? 3 : 2))
    return CLI_EXIT_INPUT;
  physParamErrors pe;
  memset(&pe, 0, sizeof pe);
  physModel* m = evaluated_model(&a, pos[0], &pe, &code);
  if (!m) return code;
  physDataset ds;
  physLog log;
  memset(&log, 0, sizeof log);
  physDataOptions dopt = {0};
  dopt.max_files = a.files;
  dopt.first_file = a.skip;
  const char* paths[1] = {pos[1]};
  physData* d = NULL;
  code = CLI_EXIT_INPUT;
  if (phys_dataset_load(&ds, m, paths, 1, &dopt, &log) != PHYS_OK) {
    cli_error("%s", log.error);
  } else if (!(d = phys_make_data(m))) {
    cli_error("%s: out of memory allocating the simulation data", pos[0]);
  } else {
    if (a.substeps == 0) {   // identify's data default: the model's timestep (src/sysid/defaults.c), printed
      char why[512];
      a.substeps = phys_fit_default_substeps(ds.dt_obs, m->opt.timestep, why, sizeof why);
      if (!a.quiet) fprintf(stderr, "physid: evaluate: %s\n", why);
    }
    evalSum sums[EV_N];
    memset(sums, 0, sizeof sums);
    int ok = 1;
    if (a.start) ok = eval_fitted(sums, m, &ds, &a);
    else ok = eval_all(sums, m, d, &ds, &a);
    if (ok && (cli_mpi_rank() > 0 || report(&o, sums, &ds, &a, pos[0], a.truth ? &pe : NULL, m)))   // process 0 writes
      code = CLI_EXIT_OK;
  }
  phys_param_errors_free(&pe);
  phys_free_data(d);
  phys_dataset_free(&ds);
  phys_free_model(m);
  phys_mlp_free(g_e2e);
  free(g_e2e_work);
  return code;
}
