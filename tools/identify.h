// identify.h - the pieces of `physid identify` (cmd_identify.c): the identified model written back to its
// MJCF or URDF file (model_write.c) and the HTML report (report.c).
#ifndef PHYS_IDENTIFY_H
#define PHYS_IDENTIFY_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "args.h"
#include "cli.h"
#include "params.h"
#include "physid.h"
#include "sysid.h"

// the settings of identify and of the commands that load what it loads (sweep): -1 / 0 / NULL mean "not
// given" until the job file and the defaults fill them
#define ID_MAXDATA (ARGS_MAXPOS + 256)   // data paths (command line or job)
#define ID_MAXSPEC 256                   // --param entries (command line or job)

static const char* const g_loss_names = "onestep|kstep|rollout|violation";
static const char* const g_opt_names = "lm|lbfgsb|adam";
static const char* const g_contact_names = "lcp|cone|ccp|penalty";
static const char* const g_velocity_names = "auto|differenced|measured";   // physVelocitySource
static const char* const g_fit_start_names = "auto|on|off";                // physFitStartMode

typedef struct idArgs_ {
  const char* pos[ARGS_MAXPOS];
  argList param, map;
  int loss, horizon, substeps, optimizer, starts, seed, iters, contact, files, skip, floating, quiet;
  double prior, lr;
  const char *weights, *observe, *job, *out, *write_model, *report, *ctrl_value;
  const char* cmd;          // the command for messages ("identify", "sweep")
  const char* checkpoint;   // --checkpoint FILE: the optimizer's state after every iteration (src/sysid/checkpoint.h)
  int resume;               // --resume: continue from it
  int bootstrap;            // --bootstrap N: refits on resampled trajectories (0: none)
  int velocities;           // --velocities: physVelocitySource (-1: not given, auto)
  int fit_start;            // --fit-start: physFitStartMode (-1: not given, auto)
  int approach;             // --approach: idApproach (-1: not given; identify_approach.c)
  const char* network_out;  // --network-out FILE: the trained network (diffsim-r, end-to-end)
  const char* rreg;         // --residual-reg OUT,W: the network's output-norm and weight-norm weights (ccn-r, diffsim-r)
  int progressive;          // --progressive: paper 002's progressive training (issue 16 item 4; sysid.h)
  int validation;           // --validation N: its validation trajectories, the last N (-1: not given)
  int ctrl_job;             // 1: ctrl_value came from the job file (its messages name the file and the key)
  int netout_job;           // 1: network_out came from the job file (the same)
  int replay;               // --replay: the report embeds a 3-D replay of the first trajectory (issue 20 item 2)
  const char* replay_of;    // --replay-trajectories LIST: the trajectories replayed ("0,3" or "all"; implies --replay)
  int threads;              // --threads N: threads simulating the trajectories (0: not given, cli_default_threads)
  // merged
  const char* model;
  const char* data[ID_MAXDATA];
  int ndata;
  const char* spec[ID_MAXSPEC];
  int nspec;
  const char* maps[ID_MAXSPEC];
  int nmaps;
  double w[3];              // weights pos, rot, vel (NaN: default)
  const char* vweights;     // --violation-weights COMP,DISS,PEN (violation loss)
  double vw[3];             // its values (NaN: default)
  double rr[2];             // --residual-reg's values (NaN: default, physResTrainOptions')
  int vmetric;              // --violation-metric energy|velocity (0 / 1; -1: default energy)
  cJSON* json;              // the job file (owns the strings above that came from it)
  char* pool[ID_MAXSPEC];   // param strings built from the job's objects
  int npool;
} idArgs;

#define ID_MAXREPLAY 16    // trajectories one report replays (each a scene of the player: three rollouts)

// everything a run produced, for the result file, the written model and the report
typedef struct idRun_ {
  const char* model_path;   // the model file as given
  physModel* m;             // holds the identified values after the fit
  physParamTable table;
  double* theta0;           // initial values (ntheta)
  double* lower;            // bounds (ntheta; -HUGE_VAL / HUGE_VAL when unbounded)
  double* upper;
  char (*label)[192];       // one label per theta component: the spec, "spec[i]" when the entry has size > 1
  physDataset ds;
  physFitOptions fit;
  double ctrl[64];          // --ctrl-value: the controls held during every trajectory (fit.ctrl points here)
  physFitResult res;
  double *se, *ci_lo, *ci_hi;   // the default method's (res.method) standard errors and 95% intervals, clipped to
                            // the bounds (ntheta each; one allocation at se)
  double wall;              // wall time of the fit (s)
  int replay;               // --replay: the report embeds a 3-D replay (tools/view.c) of trajectories replay_idx:
                            // observed, the identified model's rollout and the initial model's, one scene each
  int replay_idx[ID_MAXREPLAY];
  int nreplay;              // how many (1: the first trajectory, when --replay-trajectories is not given)
} idRun;

// names of physSeMethod: result.json's "method", the report
static const char* const id_method_name[3] = {"iid", "cluster", "bootstrap"};

// --write-model: the model file src edited to hold m's values of every parameter of t, written to f (MJCF:
// geom friction/size, physid:restitution custom numerics, joint damping/armature/stiffness, tendon
// stiffness/damping/springlength, body <inertial> and pos, option gravity, actuator gear, physid:penalty;
// URDF: link <inertial>, joint <dynamics damping>). f NULL: check only that every parameter can be written
// (run before the fit). Returns 0 with a message in err on failure.
int id_write_model(FILE* f, const char* src, const physModel* m, const physParamTable* t, char* err, size_t nerr);

// --write-model of a composed world (--add): the whole model m (with the identified values) as one MJCF file
// written to f: bodies, inertials (principal frame), joints, geoms, sites, tendons, motors, pairs, excludes,
// keyframes, options and physid's <custom> settings, "%.17g". f NULL: check only that m can be written (no
// meshes, no unnamed object that another refers to, no massless moving body). Returns 0 with a message in err.
int id_write_world(FILE* f, const physModel* m, char* err, size_t nerr);

// --report: one self-contained HTML page (inline SVG, no external resources) with the settings,
// the parameter table, the loss per iteration (log scale), the parameter traces, the correlation heat map
// and observed vs predicted positions of up to three trajectories; with run->replay also the 3-D player
// (tools/view.h: three.js and the player's scripts inlined). Deterministic (no times or dates).
// Returns 0 with a message in err on failure.
int id_write_report(FILE* f, const idRun* run, char* err, size_t nerr);

// --approach (identify_approach.c): paper 004's Table 1. ccn and diffsim are identify's own fits with the
// options they name (id_approach_map sets them: --loss violation; --loss onestep --contact ccp --optimizer
// adam); ccn-r, diffsim-r (the same losses with a residual network, trained by Adam: id_run_residual) and
// end-to-end (id_run_e2e) train a network.
enum { ID_APP_CCN = 0, ID_APP_CCN_R, ID_APP_DIFFSIM, ID_APP_DIFFSIM_R, ID_APP_E2E };
#define ID_APPROACH_NAMES "ccn|ccn-r|diffsim|diffsim-r|end-to-end"
// the options of the approach a->approach set where not given (none given: only --network-out is refused);
// -1 to go on, else the exit code
int id_approach_map(idArgs* a);
// end-to-end: the whole command (model, data, training, --network-out); returns the exit code
int id_run_e2e(idArgs* a);
// ccn-r, diffsim-r after id_prepare: load the data, train theta and the residual network jointly, print, write
// --write-model and --network-out; returns the exit code
int id_run_residual(idRun* r, const idArgs* a);

// the settings of job file path alone, as `physid identify --job PATH` reads them before anything else (the
// entry of the fuzz harness tests/fuzz/fuzz_job.c): -1 if the job is complete (model, data and parameters),
// else the exit code identify gives with its message on stderr (1 bad job file, 2 something missing). Nothing
// is loaded or written.
int id_read_job(const char* path);
// shared by identify and sweep (cmd_identify.c). id_merge_settings: the positionals, then the job, then the
// checks that need no model; id_prepare: model, parameters (theta0, bounds, labels), fit options; id_load_data:
// the data (prints the summary line unless quiet); each returns -1 to go on (id_load_data: 1 / 0), else the exit
// code. id_cleanup frees a run and the settings. id_args_init sets every setting to "not given".
void id_args_init(idArgs* a, const char* cmd);
int id_merge_settings(idArgs* a);
int id_prepare(idRun* r, const idArgs* a);
int id_load_data(idRun* r, const idArgs* a);
void id_cleanup(idRun* r, idArgs* a);
// split "KIND:NAME[:init=V][:min=A][:max=B][:scale=S]" into KIND:NAME (buf) and the texts after init=, min=, max=,
// scale= (opts, NULL if absent; each runs to the next ':'); 0 if too long
int id_split_spec(char* buf, size_t nbuf, const char* opts[4], const char* text);

// the data and loss options identify and sweep share (an idArgs named a in scope)
#define ID_DATA_OPTIONS                                                                                        \
  {"--loss", ARG_CHOICE, &a.loss, "onestep|kstep|rollout|violation", "loss (default: kstep on positions if the "   \
   "velocities are differenced positions, else onestep; violation: paper 004's implicit loss)", 0, 0, 0},      \
  {"--velocities", ARG_CHOICE, &a.velocities, "auto|differenced|measured", "what the velocity columns are: the "  \
   "default loss follows (default auto: differenced if they deviate from the positions' backward differences by " \
   "less than 0.2 of their change per sample)", 0, 0, 0},                                                       \
  {"--fit-start", ARG_CHOICE, &a.fit_start, "auto|on|off", "fit each kstep segment's start position and velocity " \
   "(default auto: on for kstep on positions with differenced velocities)", 0, 0, 0},                            \
  {"--horizon", ARG_INT, &a.horizon, "K", "observations per kstep segment (default 10)", 1, 1e6, 0},           \
  {"--substeps", ARG_INT, &a.substeps, "S", "simulation steps per observation interval (default: "   \
   "interval / the model's timestep)", 1, 1e6, 0},                                                              \
  {"--weights", ARG_STRING, &a.weights, "POS,ROT,VEL", "residual weights, 1/m, 1/rad, s/m (default 1000,100,10)", \
   0, 0, 0},                                                                                                    \
  {"--violation-weights", ARG_STRING, &a.vweights, "COMP,DISS,PEN", "weights of the violation loss's "        \
   "complementarity, dissipation and penetration terms (default 1,0.1,100: examples/ccn/validate.sh)", 0, 0, 0}, \
  {"--violation-metric", ARG_CHOICE, &a.vmetric, "energy|velocity", "the violation loss's dynamics term: the "  \
   "velocity error in energy units, weighted by the model's own mass matrix (paper 004), or weighted by the "     \
   "start model's fixed diag(M) (default: its minimum is not pulled to zero inertia)", 0, 0, 0},                  \
  {"--prior", ARG_DOUBLE, &a.prior, "W", "prior: adds W/2 |theta - init|^2 to the loss (default 0)", 0, 1e300, 0}, \
  {"--contact", ARG_CHOICE, &a.contact, "lcp|cone|ccp|penalty", "contact model (default: the model's)", 0, 0, 0}, \
  {"--files", ARG_INT, &a.files, "N", "use the first N data files (name order)", 1, 1e8, 0},                  \
  {"--skip", ARG_INT, &a.skip, "N", "skip the first N data files (held-out splits)", 0, 1e8, 0},             \
  {"--map", ARG_LIST, &a.map, "COLUMN=q:JOINT[:i]", "map a CSV column to a joint coordinate (or v:JOINT)", 0, 0, 0}, \
  {"--ctrl-value", ARG_STRING, &a.ctrl_value, "U0,U1,..", "controls held during every trajectory (a known "     \
   "push), one per actuator (default 0)", 0, 0, 0},                                                             \
  {"--observe", ARG_STRING, &a.observe, "LIST", "use only these coordinates: q, v, q:JOINT[:i], v:JOINT[:i]; sensor[:NAME]: residuals on these sensors (columns sensor:NAME[:k]) instead of the states, which then only start the simulation", 0, 0, 0}, \
  {"--floating", ARG_FLAG, &a.floating, "", "URDF: give the root link a free joint", 0, 0, 0},                 \
  CLI_MODEL_OPTIONS,                                                                                           \
  CLI_INTEGRATOR_OPTIONS

// sweep's HTML report (report.c): the settings and the loss along the parameter (n points x, loss y)
int id_write_sweep_report(FILE* f, const idRun* run, const char* label, const double* x, const double* y, int n,
                          int logx, char* err, size_t nerr);

#endif  // PHYS_IDENTIFY_H
