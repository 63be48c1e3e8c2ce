// cmd_sweep.c - `physid sweep MODEL DATA --param KIND:NAME:min=A:max=B --points N`: the loss identify would
// minimize, along one scalar parameter, every other parameter at the model's values (mujoco.sysid's
// sweep_parameter). Model, data and loss options are identify's (cmd_identify.c: id_merge_settings,
// id_prepare, id_load_data); the loss at each point is phys_fit_loss' 0.5 |r|^2, the fit's sum (under mpirun each
// process simulates its share of the trajectories and the processes exchange sums: fit.c's *Reduction*). The points are
// A + (B - A) k / (N - 1), k = 0..N-1 (both ends included), or with --log geometric from A to B (A > 0).
// --channels adds the loss of each residual channel present (positions, rotations, velocities: the weights
// of the other channels and the prior set to 0; they add up to the loss without the prior, except with fitted
// segment starts: each channel's evaluation fits them to its own residuals). Output: CSV
// "value,loss[,loss_pos,loss_rot,loss_vel]" (--out, default stdout) and an HTML report with the plot (--report); both are
// checked before any work and written only when every point was computed (tools/output.c).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "identify.h"

// the sweep's range and points, from the one --param and the options
typedef struct swRange_ {
  double lo, hi;
  int n, logx;
  int channels;             // --channels: also the loss of each residual channel
  int nch, ch[3], nres[3];  // the channels present (0 positions, 1 rotations, 2 velocities), their residuals
} swRange;

static const char* const g_channel[3] = {"loss_pos", "loss_rot", "loss_vel"};

// the options of channel c alone: the other weights and the prior 0 (the predictions do not depend on them,
// so the channels' losses add up to the loss without the prior)
static physFitOptions channel_options(const physFitOptions* o, int c) {
  physFitOptions oc = *o;
  oc.w_pos = c == 0 ? o->w_pos : 0;
  oc.w_rot = c == 1 ? o->w_rot : 0;
  oc.w_vel = c == 2 ? o->w_vel : 0;
  oc.prior = 0;
  return oc;
}

// a number in text up to the next ':' (strtod), 0 if it is not one finite number
static int spec_number(double* x, const char* text) {
  char* end;
  *x = strtod(text, &end);
  return end != text && (*end == 0 || *end == ':') && isfinite(*x);
}

// the one --param KIND:NAME:min=A:max=B: the range into g and the bare KIND:NAME into name (the parameter
// is set up at the model's value and the kind's bounds); -1 or the exit code (2, a bad command line)
static int sweep_spec(swRange* g, char* name, size_t nname, const idArgs* a) {
  const char* o[4];
  if (a->nspec != 1) {
    cli_error("sweep: give exactly one --param KIND:NAME:min=A:max=B (got %d)", a->nspec);
    return CLI_EXIT_USAGE;
  }
  if (!id_split_spec(name, nname, o, a->spec[0])) {
    cli_error("sweep: param '%.100s...': too long", a->spec[0]);
    return CLI_EXIT_USAGE;
  }
  if (!o[1] || !o[2]) {
    cli_error("sweep: param '%s': give the range as min=A:max=B", a->spec[0]);
    return CLI_EXIT_USAGE;
  }
  if (!spec_number(&g->lo, o[1]) || !spec_number(&g->hi, o[2])) {
    cli_error("sweep: param '%s': min and max must be finite numbers", a->spec[0]);
    return CLI_EXIT_USAGE;
  }
  if (!(g->lo < g->hi)) {
    cli_error("sweep: param '%s': min %g must be below max %g", a->spec[0], g->lo, g->hi);
    return CLI_EXIT_USAGE;
  }
  if (g->logx && !(g->lo > 0)) {
    cli_error("sweep: --log needs min > 0 (param '%s' has min %g)", a->spec[0], g->lo);
    return CLI_EXIT_USAGE;
  }
  return -1;
}

// the range against the parameter set up by id_prepare: one value, inside the kind's bounds; -1 or the exit code
static int check_range(const idRun* r, const swRange* g, const char* spec) {
  if (r->table.ntheta != 1) {
    cli_error("sweep: param '%s' has %d values; a sweep takes a scalar parameter", spec, r->table.ntheta);
    return CLI_EXIT_USAGE;
  }
  if (g->lo < r->lower[0] || g->hi > r->upper[0]) {
    cli_error("sweep: param '%s': the range [%g, %g] leaves the parameter's bounds [%g, %g]", spec, g->lo, g->hi,
              r->lower[0], r->upper[0]);
    return CLI_EXIT_USAGE;
  }
  return -1;
}

// point k of n: linear from lo to hi, or geometric (logx); both ends exact
static double sweep_point(const swRange* g, int k) {
  if (k == 0) return g->lo;
  if (k == g->n - 1) return g->hi;
  double t = (double)k / (g->n - 1);
  return g->logx ? exp(log(g->lo) + t * (log(g->hi) - log(g->lo))) : g->lo + (g->hi - g->lo) * k / (g->n - 1);
}

// the loss 0.5 |r|^2 of options o at theta x into *loss; 0 and a message on failure
static int point_loss(idRun* r, const physFitOptions* o, const double* x, double* loss) {
  physLog log = {0};
  physStatus s = phys_fit_loss(r->m, &r->table, x, r->theta0, &r->ds, o, loss, &log);
  cli_log_warnings(&log);
  if (s != PHYS_OK) {
    cli_error("sweep: at %s = %g: %s", r->label[0], x[0], log.error[0] ? log.error : phys_status_str(s));
    return 0;
  }
  return 1;
}

// --channels: the channels with residuals (an observed coordinate with a nonzero weight) into g
static void find_channels(swRange* g, const idRun* r) {
  g->nch = 0;
  for (int c = 0; g->channels && c < 3; c++) {
    physLog log = {0};
    physFitOptions oc = channel_options(&r->fit, c);
    int n = phys_fit_nres(r->m, &r->table, &r->ds, &oc, &log);
    if (n > 0) g->ch[g->nch] = c, g->nres[g->nch++] = n;
  }
}

// the loss 0.5 |r|^2 at every point into loss (theta0 is the prior's centre), and with --channels each
// channel's into loss[n (1 + j) + k]; 0 and a message on failure
static int sweep_losses(idRun* r, const swRange* g, double* x, double* loss) {
  int ok = 1;
  for (int k = 0; ok && k < g->n; k++) {
    x[k] = sweep_point(g, k);
    ok = point_loss(r, &r->fit, x + k, loss + k);
    for (int j = 0; ok && j < g->nch; j++) {
      physFitOptions oc = channel_options(&r->fit, g->ch[j]);
      ok = point_loss(r, &oc, x + k, loss + (size_t)g->n * (1 + j) + k);
    }
  }
  return ok;
}

// the CSV and the report into their checked outputs, renamed into place only when both were written
static int write_sweep(cliOutput o[2], const idRun* r, const swRange* g, const double* x, const double* loss) {
  char err[PHYS_MSGLEN] = "";
  int ok = cli_output_open(o) && fputs("value,loss", o->f) >= 0;
  for (int j = 0; ok && j < g->nch; j++) ok = fprintf(o->f, ",%s", g_channel[g->ch[j]]) > 0;
  ok = ok && fputc('\n', o->f) != EOF;
  for (int k = 0; ok && k < g->n; k++) {
    ok = fprintf(o->f, "%.17g,%.17g", x[k], loss[k]) > 0;
    for (int j = 0; ok && j < g->nch; j++) ok = fprintf(o->f, ",%.17g", loss[(size_t)g->n * (1 + j) + k]) > 0;
    ok = ok && fputc('\n', o->f) != EOF;
  }
  if (!ok && !err[0] && o->f) cli_error("%s: write error", o->path ? o->path : "stdout");
  if (ok && o[1].path) {
    ok = cli_output_open(o + 1) && id_write_sweep_report(o[1].f, r, r->label[0], x, loss, g->n, g->logx, err,
                                                          sizeof err);
    if (!ok && err[0]) cli_error("%s", err);
  }
  if (!ok) {
    cli_output_abort(o);
    cli_output_abort(o + 1);
    return 0;
  }
  return cli_outputs_commit(o, 2);
}

// the option table and the command
int cli_sweep(int argc, char** argv) {
  idArgs a;
  id_args_init(&a, "sweep");
  swRange g;
  memset(&g, 0, sizeof g);
  const char* out = NULL;
  const argOption opt[] = {
      {"--param", ARG_LIST, &a.param, "KIND:NAME:min=A:max=B", "the parameter and its range", 0, 0, 0},
      {"--points", ARG_INT, &g.n, "N", "points, both ends included (default 21)", 2, 1e6, 0},
      {"--log", ARG_FLAG, &g.logx, "", "geometric spacing (min > 0)", 0, 0, 0},
      {"--channels", ARG_FLAG, &g.channels, "", "also the loss of each channel: loss_pos, loss_rot, loss_vel (one "
       "more evaluation per channel)", 0, 0, 0},
      ID_DATA_OPTIONS,
      {"--out", ARG_STRING, &out, "FILE.csv", "write the CSV value,loss here (default stdout)", 0, 0, 0},
      {"--report", ARG_STRING, &a.report, "FILE.html", "write an HTML report with the plot", 0, 0, 0},
      {"--quiet", ARG_FLAG, &a.quiet, "", "no progress and no warnings on stderr (errors still print)", 0, 0, 0},
  };
  const argCommand cmd = {"sweep",
                          "The loss identify minimizes along one parameter (the others at the model's values) "
                          "as CSV value,loss.\nTakes identify's data and loss options.",
                          "MODEL DATA...", -1, opt, sizeof opt / sizeof opt[0],
                          "physid sweep models/cube.xml data/cube_toss --param friction:cube:min=0.05:max=0.6 "
                          "--points 12 --out sweep.csv"};
  int code = cli_parse(a.pos, &cmd, argc, argv);
  if (code >= 0) return code;
  if (g.n == 0) g.n = 21;
  idRun r;
  memset(&r, 0, sizeof r);
  char name[1024];
  code = id_merge_settings(&a);
  r.model_path = a.model;
  const char* spec = a.nspec ? a.spec[0] : "";
  if (code < 0) code = sweep_spec(&g, name, sizeof name, &a);
  if (code < 0) {
    a.spec[0] = name;   // set up at the model's value and the kind's bounds
    code = id_prepare(&r, &a);
  }
  if (code < 0) code = check_range(&r, &g, spec);
  if (code < 0) {
    cliOutput o[2];
    const char* input[ID_MAXDATA + 1];
    int n = 0;
    input[n++] = a.model;
    for (int k = 0; k < a.ndata; k++) input[n++] = a.data[k];
    double* buf = malloc(sizeof(double) * 5 * (size_t)g.n);   // x, loss, up to 3 channels
    code = CLI_EXIT_INPUT;
    if (!buf) cli_error("sweep: out of memory");
    else if (cli_output_check(o, "--out", out) && cli_output_check(o + 1, "--report", a.report) &&
             !cli_output_conflicts(o, 2, input, n) && id_load_data(&r, &a) && (find_channels(&g, &r), 1) &&
             sweep_losses(&r, &g, buf, buf + g.n) &&
             (cli_mpi_rank() > 0 || write_sweep(o, &r, &g, buf, buf + g.n)))   // mpirun: process 0 writes
      code = CLI_EXIT_OK;
    free(buf);
  }
  id_cleanup(&r, &a);
  return code;
}
