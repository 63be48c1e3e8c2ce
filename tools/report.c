// report.c - `physid identify --report FILE.html`: one self-contained page (inline SVG and CSS, no scripts,
// no external resources), deterministic for a given fit (no times or dates): settings, parameter table,
// loss per iteration (log scale), parameter traces, correlation heat map, observed vs predicted positions
// and orientations (rotation vectors) of up to three trajectories (phys_fit_predict: what the loss compares).
// With --replay the page also holds a 3-D replay (tools/view.c: three.js inlined, scripts) of the first trajectory
// (--replay-trajectories: of the chosen ones, a scene each): observed, the identified model's rollout and the
// initial model's.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "identify.h"
#include "rot.h"
#include "svgplot.h"
#include "view.h"

#define REPORT_NTRAJ 3            // trajectories plotted
#define REPORT_NTRACE 16          // parameter traces plotted

static const char* const loss_name[4] = {"onestep", "kstep", "rollout", "violation"};
static const char* const opt_name[3] = {"lm", "lbfgsb", "adam"};

//---------------------------------------------------------------------------------------------------------
// sections

// the title "physid COMMAND: MODEL" and the settings rows (data, loss, contact) of an open table
static void section_settings(FILE* f, const idRun* run, const char* command) {
  fprintf(f, "<h1>physid %s: ", command);
  html_text(f, run->model_path);
  fputs("</h1>\n<table class='kv'>\n<tr><th>data</th><td>", f);
  fprintf(f, "%d trajectories, first ", run->ds.ntraj);
  html_text(f, run->ds.ntraj ? run->ds.traj[0].source : "");
  fprintf(f, "; observation interval %.6g s</td></tr>\n", run->ds.dt_obs);
  fprintf(f, "<tr><th>loss</th><td>%s (horizon %d%s), %d substeps, weights pos %g rot %g vel %g, prior %g</td></tr>\n",
          loss_name[run->fit.loss], run->fit.horizon,
          run->fit.fit_start == PHYS_FIT_START_STAGED ? ", segment starts fitted after two stages from the recorded samples"
          : run->fit.fit_start ? ", segment starts fitted" : "",
          run->fit.substeps, run->fit.w_pos, run->fit.w_rot, run->fit.w_vel, run->fit.prior);
  fprintf(f, "<tr><th>contact</th><td>%s</td></tr>\n", phys_contact_name(run->m->opt.contact));
}

// settings and summary numbers
static void section_summary(FILE* f, const idRun* run) {
  const physFitResult* res = &run->res;
  section_settings(f, run, "identify");
  if (res->stages == 3)   // the staged fit (sysid.h): stages 1 and 2 from the recorded samples, 3 from the better
    fprintf(f, "<tr><th>optimizer</th><td>%s, %d start(s); stage 1 (segments from the recorded samples) %d "
            "iterations, loss %.6g &rarr; %.6g; stage 2 (onestep) %d iterations, loss %.6g &rarr; %.6g; stage 3 "
            "(segment starts fitted) from stage %d's answer, %d iterations</td></tr>\n",
            opt_name[run->fit.optimizer], run->fit.starts, res->stage_iterations[0], res->stage_loss0[0],
            res->stage_loss[0], res->stage_iterations[1], res->stage_loss0[1], res->stage_loss[1], res->stage_from,
            res->iterations);
  else
    fprintf(f, "<tr><th>optimizer</th><td>%s, %d start(s), best start %d, %d iterations</td></tr>\n",
            opt_name[run->fit.optimizer], run->fit.starts, res->start, res->iterations);
  fprintf(f, "<tr><th>loss</th><td>%.6g &rarr; %.6g (%d residuals)</td></tr>\n</table>\n", res->loss0, res->loss,
          res->nres);
}

// the parameter table: init, value, the default method's stderr and 95% interval, the iid stderr (and the
// bootstrap's interval), bounds; then which method the intervals are
static void section_params(FILE* f, const idRun* run) {
  const physFitResult* res = &run->res;
  fprintf(f, "<h2>Parameters</h2>\n<table class='grid'><tr><th>parameter</th><th>initial</th><th>identified</th>"
          "<th>std. error</th><th>95%% low</th><th>95%% high</th><th>iid std. error</th>%s<th>min</th><th>max</th>"
          "</tr>\n", res->nboot ? "<th>bootstrap 95% low</th><th>bootstrap 95% high</th>" : "");
  for (int i = 0; i < run->res.ntheta; i++) {
    fputs("<tr><td class='name'>", f);
    html_text(f, run->label[i]);
    fputs("</td>", f);
    cell_number(f, run->theta0[i]);
    cell_number(f, run->res.theta[i]);
    cell_number(f, run->se[i]);
    cell_number(f, run->ci_lo[i]);
    cell_number(f, run->ci_hi[i]);
    cell_number(f, res->stderr_[i]);
    if (res->nboot) {
      double lo, hi;
      phys_fit_interval(res, PHYS_SE_BOOTSTRAP, i, &lo, &hi);
      cell_number(f, lo);
      cell_number(f, hi);
    }
    cell_number(f, run->lower[i]);
    cell_number(f, run->upper[i]);
    fputs("</tr>\n", f);
  }
  fputs("</table>\n", f);
  if (res->method == PHYS_SE_CLUSTER)
    fprintf(f, "<p>95%% intervals: cluster-robust (sandwich) covariance by trajectory, %d trajectories, Student t "
            "with %d dof%s.</p>\n", res->ngroups, res->ngroups - 1,
            res->ngroups < 10 ? " (few trajectories: less reliable below 10)" : "");
  else
    fputs("<p class='warn'>95% intervals: iid, s&sup2;(J'J)<sup>-1</sup> (one trajectory: model error is not "
          "measured).</p>\n", f);
  if (res->nboot)
    fprintf(f, "<p>Bootstrap: %d of %d refits on trajectories resampled with replacement (seed %llu), percentile "
            "intervals.</p>\n", res->nboot_ok, res->nboot, (unsigned long long)run->fit.seed);
  for (int k = 0; k < run->res.nnull; k++) {
    fputs("<p class='warn'>Unidentifiable direction (near-null eigenvector of J'J):", f);
    for (int i = 0; i < run->res.ntheta; i++) {
      double c = run->res.null_dirs[(size_t)k * run->res.ntheta + i];
      if (fabs(c) < 0.05) continue;
      fprintf(f, " %+.3f&middot;", c);
      html_text(f, run->label[i]);
    }
    fputs("</p>\n", f);
  }
}

// loss per iteration (log scale) and the parameter traces
static void section_history(FILE* f, const idRun* run) {
  const physFitResult* res = &run->res;
  int n = res->niter_hist, nt = res->ntheta;
  double* it = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
  for (int k = 0; k < n; k++) it[k] = k;
  fputs("<h2>Convergence</h2>\n<div class='row'>\n", f);
  svgSeries loss = {it, res->loss_hist, n, 1, svg_palette[1], 0};
  svg_plot(f, "loss per iteration (log scale)", "iteration", &loss, 1, 1);
  for (int i = 0; i < nt && i < REPORT_NTRACE; i++) {
    svgSeries s = {it, res->theta_hist + i, n, nt, svg_palette[i % 6], 0};
    svg_plot(f, run->label[i], "iteration", &s, 1, 0);
  }
  fputs("</div>\n", f);
  free(it);
}

// the correlation matrix as a heat map (red +1, white 0, blue -1) with the values
static void section_correlation(FILE* f, const idRun* run) {
  int n = run->res.ntheta, c = n <= 8 ? 56 : n <= 20 ? 28 : 12, left = 180;
  fputs("<h2>Correlation of the estimates</h2>\n", f);
  fprintf(f, "<svg xmlns='http://www.w3.org/2000/svg' width='%d' height='%d' font-size='10'>\n", left + n * c + 10,
          n * c + 10);
  for (int i = 0; i < n; i++) {
    fprintf(f, "<text x='%d' y='%d' text-anchor='end'>", left - 6, i * c + c / 2 + 4);
    html_text(f, run->label[i]);
    fputs("</text>\n", f);
    for (int j = 0; j < n; j++) {
      double r = run->res.corr[(size_t)i * n + j];
      if (!isfinite(r)) r = 0;
      int a = (int)lround(255 * (1 - fmin(fabs(r), 1)));
      fprintf(f, "<rect x='%d' y='%d' width='%d' height='%d' fill='rgb(%d,%d,%d)' stroke='#fff'/>", left + j * c,
              i * c, c, c, r >= 0 ? 255 : a, a, r >= 0 ? a : 255);
      if (c >= 28) fprintf(f, "<text x='%d' y='%d' text-anchor='middle'>%.2f</text>", left + j * c + c / 2,
                           i * c + c / 2 + 4, run->res.corr[(size_t)i * n + j]);
      fputc('\n', f);
    }
  }
  fputs("</svg>\n", f);
}

// observed (solid), predicted as the loss does (dashed) and, if roll is not NULL, the rollout from the first
// sample (dotted) of one joint's coordinates in one plot; obs, pred, roll are T x ncomp
static void joint_plot(FILE* f, const idRun* run, int k, int j, const double* obs, const double* pred,
                       const double* roll, int ncomp, const char* what) {
  const physTrajectory* tr = run->ds.traj + k;
  svgSeries s[9];
  int ns = 0;
  for (int c = 0; c < ncomp && c < 3; c++) {
    s[ns++] = (svgSeries){tr->time, obs + c, tr->T, ncomp, svg_palette[c % 6], 0};
    s[ns++] = (svgSeries){tr->time, pred + c, tr->T, ncomp, svg_palette[c % 6], 1};
    if (roll) s[ns++] = (svgSeries){tr->time, roll + c, tr->T, ncomp, svg_palette[c % 6], 2};
  }
  char title[400];
  snprintf(title, sizeof title, "trajectory %d, joint '%.100s': %s", k, phys_id2name(run->m, "joint", j), what);
  svg_plot(f, title, "time (s)", s, ns, 0);
}

// per-sample coordinates of a joint into out (T x ncomp): positions, or the rotation vector log(q)
static void joint_series(double* out, const double* qpos, int T, int nq, int adr, int ncomp, int rotation) {
  for (int t = 0; t < T; t++) {
    const double* q = qpos + (size_t)t * nq + adr;
    if (rotation) phys_quat_log(out + 3 * t, q);
    else memcpy(out + (size_t)t * ncomp, q, sizeof(double) * (size_t)ncomp);
  }
}

// the plots of one trajectory: every observed joint's positions and orientations; scratch holds 3 x (T x 3)
static void trajectory_plots(FILE* f, const idRun* run, int k, const double* pred, const double* roll,
                             double* scratch) {
  const physModel* m = run->m;
  const physTrajectory* tr = run->ds.traj + k;
  double *a = scratch, *b = scratch + 3 * (size_t)tr->T, *c = scratch + 6 * (size_t)tr->T;
  for (int j = 0; j < m->njnt; j++) {
    int type = m->jnt_type[j], qa = m->jnt_qposadr[j], da = m->jnt_dofadr[j];
    int has_pos = type == PHYS_JNT_FREE && run->ds.obs_q[da];
    int has_rot = (type == PHYS_JNT_FREE && run->ds.obs_q[da + 3]) || (type == PHYS_JNT_BALL && run->ds.obs_q[da]);
    int scalar = (type == PHYS_JNT_HINGE || type == PHYS_JNT_SLIDE) && run->ds.obs_q[da];
    for (int rot = 0; rot < 2; rot++) {
      if (rot ? !has_rot : !(has_pos || scalar)) continue;
      int adr = qa + (rot && type == PHYS_JNT_FREE ? 3 : 0), n = scalar ? 1 : 3;
      joint_series(a, tr->qpos, tr->T, m->nq, adr, n, rot);
      joint_series(b, pred, tr->T, m->nq, adr, n, rot);
      if (roll) joint_series(c, roll, tr->T, m->nq, adr, n, rot);
      const char* what = rot ? "rotation vector x y z (rad)" : !scalar ? "position x y z (m)"
                         : type == PHYS_JNT_HINGE ? "angle (rad)" : "position (m)";
      joint_plot(f, run, k, j, a, b, roll ? c : NULL, n, what);
    }
  }
}

// a prediction of trajectory k with the fit's options but the given loss into qpos; a failed simulation is a
// note on the page (the arrays are still filled: the simulation goes on after a warning), not an error
static void predict(FILE* f, const idRun* run, int k, int loss, double* qpos, double* qvel) {
  physFitOptions opt = run->fit;
  opt.loss = loss;
  physLog log = {0};
  if (phys_fit_predict(run->m, &run->ds, k, &opt, qpos, qvel, &log) == PHYS_OK) return;
  fprintf(f, "<p class='warn'>%s prediction of trajectory %d: ", loss == PHYS_LOSS_ROLLOUT ? "rollout" : "loss", k);
  html_text(f, log.error);
  fputs("</p>\n", f);
}

// observed vs predicted for the first REPORT_NTRAJ trajectories
static int section_trajectories(FILE* f, const idRun* run, char* err, size_t nerr) {
  int rollout = run->fit.loss != PHYS_LOSS_ROLLOUT;
  fprintf(f, "<h2>Observed (solid) vs predicted (dashed)%s</h2>\n<p>Components x, y, z in <span "
          "style='color:#d62728'>red</span>, <span style='color:#1f77b4'>blue</span>, <span style='color:#2ca02c'>"
          "green</span>; dashed: the predictions the loss compares (from each segment's observed start)%s.</p>\n"
          "<div class='row'>\n", rollout ? " and rolled out (dotted)" : "",
          rollout ? "; dotted: one rollout of the identified model from the first sample" : "");
  int ok = 1;
  for (int k = 0; ok && k < run->ds.ntraj && k < REPORT_NTRAJ; k++) {
    size_t T = (size_t)run->ds.traj[k].T, nq = (size_t)(run->m->nq ? run->m->nq : 1);
    double* qpos = malloc(sizeof(double) * T * (2 * nq + 9));   // loss prediction, rollout, 3 series
    double* qvel = malloc(sizeof(double) * T * (size_t)(run->m->nv ? run->m->nv : 1));
    ok = qpos && qvel;
    if (!ok) snprintf(err, nerr, "--report: out of memory");
    if (ok) predict(f, run, k, run->fit.loss, qpos, qvel);
    if (ok && rollout) predict(f, run, k, PHYS_LOSS_ROLLOUT, qpos + T * nq, qvel);
    if (ok) trajectory_plots(f, run, k, qpos, rollout ? qpos + T * nq : NULL, qpos + 2 * T * nq);
    free(qpos);
    free(qvel);
  }
  fputs("</div>\n", f);
  return ok;
}

// --replay: each replayed trajectory observed, rolled out by the identified model and by the initial one (m set to
// theta0 for those rollouts, then back to the fit's answer) into qpos (per trajectory k: T_k x nq identified, then
// T_k x nq initial, at off[i])
static int replay_rollouts(FILE* f, const idRun* run, double* qpos, const size_t* off, double* qvel) {
  size_t nq = (size_t)run->m->nq;
  for (int i = 0; i < run->nreplay; i++) predict(f, run, run->replay_idx[i], PHYS_LOSS_ROLLOUT, qpos + off[i], qvel);
  if (phys_param_set(&run->table, run->m, run->theta0) != PHYS_OK) return 0;
  for (int i = 0; i < run->nreplay; i++) {
    int k = run->replay_idx[i];
    predict(f, run, k, PHYS_LOSS_ROLLOUT, qpos + off[i] + (size_t)run->ds.traj[k].T * nq, qvel);
  }
  return phys_param_set(&run->table, run->m, run->res.theta) == PHYS_OK;
}

// --replay: the 3-D player with one scene per replayed trajectory (a selector when there are several): observed,
// the identified model's rollout and the initial model's
static int section_replay(FILE* f, const idRun* run, char* err, size_t nerr) {
  size_t nq = (size_t)run->m->nq, nv = (size_t)(run->m->nv ? run->m->nv : 1), off[ID_MAXREPLAY + 1] = {0}, tmax = 1;
  for (int i = 0; i < run->nreplay; i++) {
    size_t T = (size_t)run->ds.traj[run->replay_idx[i]].T;
    off[i + 1] = off[i] + 2 * T * nq;
    if (T > tmax) tmax = T;
  }
  double* qpos = malloc(sizeof(double) * (off[run->nreplay] ? off[run->nreplay] : 1));
  double* qvel = malloc(sizeof(double) * tmax * nv);
  viewTrajectory* v = calloc((size_t)(3 * run->nreplay + 1), sizeof *v);
  char(*group)[560] = calloc((size_t)run->nreplay + 1, sizeof *group);
  char* three = NULL;
  int ok = qpos && qvel && v && group && view_read_three(&three, NULL);
  if (!ok) snprintf(err, nerr, "--replay: %s", qpos && qvel && v && group ? "three.js not readable" : "out of memory");
  if (ok) {
    fputs("<h2>Replay: observed, identified and initial model</h2>\n", f);
    ok = replay_rollouts(f, run, qpos, off, qvel);
    if (!ok) snprintf(err, nerr, "--replay: cannot set the parameters");
  }
  for (int i = 0; ok && i < run->nreplay; i++) {
    const physTrajectory* tr = run->ds.traj + run->replay_idx[i];
    const double* q = qpos + off[i];
    snprintf(group[i], sizeof group[i], "trajectory %d: %s", run->replay_idx[i], tr->source);
    v[3 * i] = (viewTrajectory){"observed", tr->T, tr->time, tr->qpos, tr->qvel, tr->ctrl, tr->qfrc, group[i]};
    v[3 * i + 1] = (viewTrajectory){"identified model, rolled out", tr->T, tr->time, q, NULL, tr->ctrl, tr->qfrc,
                                    group[i]};
    v[3 * i + 2] = (viewTrajectory){"initial model, rolled out", tr->T, tr->time, q + (size_t)tr->T * nq, NULL,
                                    tr->ctrl, tr->qfrc, group[i]};
  }
  if (ok) {
    viewOptions opt = {60, 0, NULL, NULL};
    ok = view_write_player(f, run->m, v, 3 * run->nreplay, &opt, three);
    if (!ok) snprintf(err, nerr, "--replay: out of memory");
  }
  free(three);
  free(group);
  free(v);
  free(qpos);
  free(qvel);
  return ok;
}

// the whole page
int id_write_report(FILE* f, const idRun* run, char* err, size_t nerr) {
  page_head(f, "identify");
  section_summary(f, run);
  section_params(f, run);
  section_history(f, run);
  section_correlation(f, run);
  int ok = section_trajectories(f, run, err, nerr);
  if (ok && run->replay && run->ds.ntraj > 0) ok = section_replay(f, run, err, nerr);
  fputs("</body></html>\n", f);
  return ok;
}

// sweep's page (identify.h): the settings, the loss along the parameter (log x axis when logx: log10 of the
// values) and the table of points with the smallest marked
int id_write_sweep_report(FILE* f, const idRun* run, const char* label, const double* x, const double* y, int n,
                          int logx, char* err, size_t nerr) {
  double* lx = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
  if (!lx) {
    snprintf(err, nerr, "--report: out of memory");
    return 0;
  }
  int best = 0;
  for (int k = 0; k < n; k++) {
    lx[k] = logx ? log10(x[k]) : x[k];
    if (y[k] < y[best] || (isnan(y[best]) && !isnan(y[k]))) best = k;
  }
  page_head(f, "sweep");
  section_settings(f, run, "sweep");
  fprintf(f, "<tr><th>smallest loss</th><td>%.6g at ", y[best]);
  html_text(f, label);
  fprintf(f, " = %.6g (point %d of %d)</td></tr>\n</table>\n<h2>Loss along the parameter</h2>\n", x[best], best + 1, n);
  char xlabel[256];
  snprintf(xlabel, sizeof xlabel, "%s%.200s%s", logx ? "log10 " : "", label, "");
  svgSeries s = {lx, y, n, 1, svg_palette[1], 0};
  svg_plot(f, "loss", xlabel, &s, 1, 0);
  fputs("<table class='grid'><tr><th>value</th><th>loss</th></tr>\n", f);
  for (int k = 0; k < n; k++) {
    fprintf(f, "<tr%s>", k == best ? " class='warn'" : "");
    cell_number(f, x[k]);
    cell_number(f, y[k]);
    fputs("</tr>\n", f);
  }
  fputs("</table>\n</body></html>\n", f);
  free(lx);
  return 1;
}
