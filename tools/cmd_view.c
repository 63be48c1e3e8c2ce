// cmd_view.c - `physid view MODEL DATA... --out view.html`: a 3-D replay of trajectories in one self-contained HTML
// page (tools/view.c: three.js from Debian's libjs-three inlined, no network). DATA are trajectory files or folders
// as `physid identify` reads them (src/sysid/dataset.c), each file one trajectory; the first in the model's colours,
// the others as ghosts with a legend. --rollout adds, for every trajectory, the model's own rollout from its first
// sample under its recorded inputs (observed against predicted; with several files, a scene per file and a
// selector). --contacts adds each frame's contact points and
// the forces of one model step from there.
//
// --out is checked before anything is read (tools/output.c) and written through a temporary renamed into place
// only when the page is whole: a bad input leaves no file.
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "sysid.h"
#include "view.h"

typedef struct viewArgs_ {
  const char* out;
  int rollout;
  int substeps;             // 0: the sample interval over the model's timestep (identify's default)
  int contacts;
  double fps;
  const char* title;
  const char* three;
  int floating;
  int quiet;
} viewArgs;

// the legend text of trajectory k of ds: "SOURCE" (the file name without its folder), prefixed
static void label(char* buf, size_t n, const char* prefix, const physTrajectory* tr) {
  const char* slash = strrchr(tr->source, '/');
  snprintf(buf, n, "%s%s", prefix, slash ? slash + 1 : tr->source);
}

// the model's rollout from tr's first sample under its recorded inputs, `substeps` steps per sample interval, into
// qpos (T x nq); 0 and a message if a step is rejected (non-finite state)
static int roll_out(physModel* m, physData* d, const physTrajectory* tr, int substeps, double* qpos) {
  phys_reset_data(m, d);
  memcpy(d->qpos, tr->qpos, sizeof(double) * (size_t)m->nq);
  memcpy(d->qvel, tr->qvel, sizeof(double) * (size_t)m->nv);
  if (tr->act) memcpy(d->act, tr->act, sizeof(double) * (size_t)m->na);
  d->time = tr->time[0];
  memcpy(qpos, d->qpos, sizeof(double) * (size_t)m->nq);
  for (int k = 1; k < tr->T; k++) {
    int S = substeps > 0 ? substeps : (int)fmax(1, round((tr->time[k] - tr->time[k - 1]) / m->opt.timestep));
    double dt = m->opt.timestep;
    m->opt.timestep = (tr->time[k] - tr->time[k - 1]) / S;
    if (tr->ctrl) memcpy(d->ctrl, tr->ctrl + (size_t)(k - 1) * m->nu, sizeof(double) * (size_t)m->nu);
    if (tr->qfrc) memcpy(d->qfrc_applied, tr->qfrc + (size_t)(k - 1) * m->nv, sizeof(double) * (size_t)m->nv);
    for (int s = 0; s < S; s++) {
      double t0 = d->time;
      phys_step(m, d);
      if (d->time == t0) {
        m->opt.timestep = dt;
        cli_error("%s: rollout rejected a step at sample %d (t = %.9g): %s", tr->source, k, tr->time[k],
                  d->lastwarning);
        return 0;
      }
    }
    m->opt.timestep = dt;
    memcpy(qpos + (size_t)k * m->nq, d->qpos, sizeof(double) * (size_t)m->nq);
  }
  return 1;
}

// the trajectories to draw: every recorded one; with --rollout each followed by its prediction, and with several
// recorded ones each pair a scene of its own (the page's selector, named after the file); labels in lab (640
// bytes each), predicted positions in pred. 0 and a message on failure
static int gather(viewTrajectory* v, char (*lab)[640], double** pred, physModel* m, const physDataset* ds,
                  const viewArgs* a) {
  int n = ds->ntraj, per = a->rollout ? 2 : 1;
  for (int k = 0; k < n; k++) {
    const physTrajectory* tr = ds->traj + k;
    label(lab[per * k], sizeof lab[per * k], a->rollout ? "observed: " : "", tr);
    const char* scene = a->rollout && n > 1 ? lab[per * k] + strlen("observed: ") : NULL;
    v[per * k] = (viewTrajectory){lab[per * k], tr->T, tr->time, tr->qpos, tr->qvel, tr->ctrl, tr->qfrc, scene};
  }
  if (!a->rollout) return 1;
  physData* d = phys_make_data(m);
  if (!d) {
    cli_error("out of memory");
    return 0;
  }
  int ok = 1;
  for (int k = 0; k < n && ok; k++) {
    const physTrajectory* tr = ds->traj + k;
    pred[k] = malloc(sizeof(double) * (size_t)tr->T * (size_t)m->nq);
    ok = pred[k] && roll_out(m, d, tr, a->substeps, pred[k]);
    if (!pred[k]) cli_error("out of memory");
    label(lab[2 * k + 1], sizeof lab[2 * k + 1], "predicted: ", tr);
    v[2 * k + 1] = (viewTrajectory){lab[2 * k + 1], tr->T, tr->time, pred[k], NULL, tr->ctrl, tr->qfrc, v[2 * k].group};
  }
  phys_free_data(d);
  return ok;
}

// load, gather and write the page to o; 1 on success
static int run(const viewArgs* a, const char* const* data, int ndata, cliOutput* o, physModel* m) {
  physDataset ds;
  physLog log;
  memset(&log, 0, sizeof log);
  if (phys_dataset_load(&ds, m, data, ndata, NULL, &log) != PHYS_OK) {
    cli_error("%s", log.error);
    phys_dataset_free(&ds);
    return 0;
  }
  int n = ds.ntraj * (a->rollout ? 2 : 1), ok = 0;
  viewTrajectory* v = calloc((size_t)n, sizeof *v);
  char(*lab)[640] = calloc((size_t)n, sizeof *lab);
  double** pred = calloc((size_t)ds.ntraj, sizeof *pred);
  char* three = NULL;
  if (!v || !lab || !pred) cli_error("out of memory");
  else if (gather(v, lab, pred, m, &ds, a) && view_read_three(&three, a->three) && cli_output_open(o)) {
    viewOptions opt = {a->fps, a->contacts, a->title, a->three};
    ok = view_write_page(o->f, m, v, n, &opt, three);
    ok = ok ? cli_output_commit(o) : (cli_output_abort(o), 0);
  }
  for (int k = 0; pred && k < ds.ntraj; k++) free(pred[k]);
  free(pred), free(lab), free(v), free(three);
  phys_dataset_free(&ds);
  return ok;
}

int cli_view(int argc, char** argv) {
  viewArgs a = {0};
  a.fps = 60;
  const argOption opt[] = {
      {"--out", ARG_STRING, &a.out, "FILE", "the HTML page to write (required)", 0, 0, 0},
      {"--rollout", ARG_FLAG, &a.rollout, "", "also play MODEL's rollout from each trajectory's first sample under "
       "its recorded inputs (observed against predicted)", 0, 0, 0},
      {"--substeps", ARG_INT, &a.substeps, "S", "--rollout: steps per sample interval (default: the interval over "
       "the model's timestep)", 1, 1e6, 0},
      {"--contacts", ARG_FLAG, &a.contacts, "", "draw each frame's contact points and the forces of one model step "
       "from it", 0, 0, 0},
      {"--fps", ARG_DOUBLE, &a.fps, "N", "frames per second kept in the page (default 60; fewer: a smaller page)",
       1, 1e4, 0},
      {"--title", ARG_STRING, &a.title, "TEXT", "page title (default: the model's name)", 0, 0, 0},
      {"--three", ARG_STRING, &a.three, "DIR", "folder of three.min.js and examples/js/controls/OrbitControls.js "
       "(default " VIEW_THREE_DIR ", Debian's libjs-three)", 0, 0, 0},
      {"--floating", ARG_FLAG, &a.floating, "", "URDF: give the root link a free joint", 0, 0, 0},
      CLI_MODEL_OPTIONS,
      {"--quiet", ARG_FLAG, &a.quiet, "", "no warnings on stderr (errors still print)", 0, 0, 0},
  };
  const argCommand cmd = {"view",
                          "Write a 3-D replay of trajectories of MODEL (CSV or .npy files or folders, as identify "
                          "reads them) as one\nself-contained HTML page: play, pause, speed, timeline, orbit camera, "
                          "follow; the first trajectory in the\nmodel's colours, the others as ghosts with a legend.",
                          "MODEL DATA...", -1, opt, sizeof opt / sizeof opt[0],
                          "physid view models/cube.xml toss.csv --rollout --contacts --out view.html"};
  const char* pos[ARGS_MAXPOS];
  int code = cli_parse(pos, &cmd, argc, argv);
  if (code >= 0) return code;
  int npos = 0;
  while (pos[npos]) npos++;
  if (npos < 2 || !a.out) {
    cli_error("%s (see 'physid view --help')", npos < 2 ? "expected MODEL and at least one DATA file or folder"
                                                        : "--out FILE is required");
    return CLI_EXIT_USAGE;
  }
  cliOutput o;
  if (!cli_output_check(&o, "--out", a.out) || cli_output_conflicts(&o, 1, pos, npos)) return CLI_EXIT_INPUT;
  physModel* m = cli_load_model(pos[0], a.floating);
  if (!m) return CLI_EXIT_INPUT;
  int ok = run(&a, pos + 1, npos - 1, &o, m);
  phys_free_model(m);
  return ok ? CLI_EXIT_OK : CLI_EXIT_INPUT;
}
