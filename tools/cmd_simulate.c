// cmd_simulate.c - `physid simulate MODEL --steps N ...`: roll a model forward and write its trajectory CSV.
//
// --out is checked before the model is read (tools/output.c: not an input, a folder that takes files) and
// opened once the model and the initial state are read; a regular file is written to a temporary beside it
// and renamed into place only when the whole run succeeded: an error (a step rejected or a non-finite state;
// with --strict any step warning), or SIGINT/SIGTERM leave no output file. Step warnings that do not stop the
// run (an initial overlap, a contact solve short of its tolerance, an energy gain, ...) are counted by kind in
// physData and reported at the end, one line per kind with its count and first step (not with --quiet).
//
// Inputs: a model with actuators gets the columns u0..u{nu-1} after the state: row k's controls are those held
// from row k to row k+1 (zero-order hold; the last row repeats the last ones), so `simulate | identify` sees what
// drove the motion. --ctrl random draws new controls once per written row (every K steps with --every K).
// --ctrl-file replays a data file's recorded inputs (controls, and joint forces into qfrc_applied, then also
// written as tau0..): each row's values hold from its time to the next row's (the last row's to the end).
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "rng.h"
#include "sysid.h"
#include "trajio.h"

enum { CTRL_ZERO = 0, CTRL_RANDOM };

// command-line settings of a run
typedef struct simArgs_ {
  const char* model;
  int steps;
  double dt;                // 0: the model's timestep
  int ctrl;                 // CTRL_ZERO or CTRL_RANDOM
  int seed;
  int nocontact;
  int contact;              // physContactModel, -1: the model's
  const char* init;         // NULL: keyframe 0 if any, else qpos0 and zero velocity
  const char* out;          // NULL: stdout
  int floating;
  int quiet;
  int strict;               // stop at the first step warning
  int every;                // write every k-th state (default 1)
  double noise;             // standard deviation of the noise on written translations (m; 0: none)
  const char* ctrl_value;   // NULL, or nu comma-separated constant controls
  const char* ctrl_file;    // NULL, or a data file whose recorded inputs are replayed
  int sensors;              // --sensors: the model's sensors as sensor:NAME columns
} simArgs;

// the recorded inputs of --ctrl-file (one trajectory of a dataset) and where the replay is
typedef struct simReplay_ {
  physDataset ds;
  int row;                  // the row whose inputs hold now
} simReplay;

static volatile sig_atomic_t g_signal = 0;

// record the signal; the step loop checks it and cleans up
static void on_signal(int sig) {
  g_signal = sig;
}

//---------------------------------------------------------------------------------------------------------
// simulation

// the initial state: --init file, else keyframe 0, else qpos0 and zero velocity
static int init_state(const physModel* m, physData* d, const char* init) {
  if (!init) {
    if (m->nkey > 0) phys_reset_keyframe(m, d, 0);
    else phys_reset_data(m, d);
    return 1;
  }
  physLog log;
  memset(&log, 0, sizeof log);
  phys_reset_data(m, d);
  if (phys_traj_read_state(&d->time, d->qpos, d->qvel, m, init, &log) == PHYS_OK) return 1;
  cli_error("%s", log.error);
  return 0;
}

// controls for the next step: constant (--ctrl-value, parsed into cval), zero, or uniform in ctrlrange
// ([-1, 1] when not limited)
static void set_controls(const physModel* m, physData* d, int mode, const double* cval, physRng* rng) {
  for (int i = 0; i < m->nu; i++) {
    if (cval) {
      d->ctrl[i] = cval[i];
    } else if (mode == CTRL_ZERO) {
      d->ctrl[i] = 0;
    } else if (m->actuator_ctrllimited[i]) {
      d->ctrl[i] = phys_rng_range(rng, m->actuator_ctrlrange[2 * i], m->actuator_ctrlrange[2 * i + 1]);
    } else {
      d->ctrl[i] = phys_rng_range(rng, -1, 1);
    }
  }
}

// load --ctrl-file: one file (any data format) that records controls or joint forces; 0 and a message otherwise
static int replay_load(simReplay* rp, const physModel* m, const char* file) {
  physLog log;
  memset(&log, 0, sizeof log);
  if (phys_dataset_load(&rp->ds, m, &file, 1, NULL, &log) != PHYS_OK) {
    cli_error("--ctrl-file %s", log.error);
    return 0;
  }
  if (rp->ds.ntraj != 1) {
    cli_error("--ctrl-file %s: a folder of %d files; give one file", file, rp->ds.ntraj);
    return 0;
  }
  if (!rp->ds.has_ctrl && !rp->ds.has_qfrc) {
    if (m->nu > 0)
      cli_error("--ctrl-file %s: no recorded inputs: expected the controls u0..u%d (or ctrl:ACTUATOR) and/or the "
                "joint forces tau0..tau%d (or qfrc:JOINT)", file, m->nu - 1, m->nv - 1);
    else
      cli_error("--ctrl-file %s: no recorded inputs: model '%s' has no actuators; expected the joint forces "
                "tau0..tau%d (or qfrc:JOINT)", file, m->modelname, m->nv - 1);
    return 0;
  }
  return 1;
}

// the inputs held at time t: those of the last row whose time is <= t (to a millionth of a step: times written
// with %.17g and times summed step by step agree that far); before the first row, the first row's
static void replay_inputs(simReplay* rp, const physModel* m, physData* d) {
  const physTrajectory* tr = rp->ds.traj;
  double tol = 1e-6 * m->opt.timestep;
  while (rp->row + 1 < tr->T && tr->time[rp->row + 1] <= d->time + tol) rp->row++;
  if (tr->ctrl) memcpy(d->ctrl, tr->ctrl + (size_t)rp->row * m->nu, sizeof(double) * (size_t)m->nu);
  if (tr->qfrc) memcpy(d->qfrc_applied, tr->qfrc + (size_t)rp->row * m->nv, sizeof(double) * (size_t)m->nv);
}

// index of the first non-finite value of x (n), -1 if all are finite
static int first_nonfinite(const double* x, int n) {
  for (int i = 0; i < n; i++) {
    if (!isfinite(x[i])) return i;
  }
  return -1;
}

// one step; a rejected step (the state restored: a non-finite result, a matrix not positive definite), a
// non-finite state or, with --strict, any step warning is an error naming the step and time; other warnings
// are counted in d (the summary lists them)
static int step_checked(const physModel* m, physData* d, const simArgs* a, int k) {
  int nwarning = d->nwarning, rejected = d->warning_count[PHYS_WARN_REJECTED];
  double t = d->time;
  phys_step(m, d);
  if (d->warning_count[PHYS_WARN_REJECTED] > rejected) {
    cli_error("%s: step %d (t = %.17g): %s", a->model, k, t, d->lastwarning);
    return 0;
  }
  if (a->strict && d->nwarning > nwarning) {
    // the run's first warnings: each kind raised in this step still holds its first text
    for (int kind = 0; kind < PHYS_NWARNKIND; kind++)
      if (d->warning_count[kind] > 0)
        cli_error("%s: step %d (t = %.17g): %s", a->model, k, t, d->warning_first[kind]);
    return 0;
  }
  int iq = first_nonfinite(d->qpos, m->nq), iv = first_nonfinite(d->qvel, m->nv);
  if (iq >= 0 || iv >= 0) {
    cli_error("%s: step %d (t = %.17g): non-finite %s[%d]", a->model, k, t, iq >= 0 ? "qpos" : "qvel",
              iq >= 0 ? iq : iv);
    return 0;
  }
  return 1;
}

// a standard normal deviate (Box-Muller on two uniforms in (0, 1])
static double normal_deviate(physRng* rng) {
  double u1 = 1 - phys_rng_uniform(rng), u2 = phys_rng_uniform(rng);
  return sqrt(-2 * log(u1)) * cos(2 * 3.14159265358979323846 * u2);
}

// the row written for a state: with --noise, translations (free-joint positions, slide joints) get white
// noise of standard deviation sigma and the velocities become backward differences of the written
// positions (qvel = (q_k (-) q_{k-1}) / dt_row, as recorded motion-capture data; the first row keeps the
// true velocity); prev holds the last written qpos (updated)
static void noisy_row(const physModel* m, double* qpos, double* qvel, double* prev, int first, double dt_row,
                      double sigma, physRng* rng) {
  for (int j = 0; j < m->njnt; j++) {
    int pa = m->jnt_qposadr[j], type = m->jnt_type[j];
    int ntr = type == PHYS_JNT_FREE ? 3 : (type == PHYS_JNT_SLIDE ? 1 : 0);
    for (int i = 0; i < ntr; i++) qpos[pa + i] += sigma * normal_deviate(rng);
  }
  if (!first) phys_difference_pos(m, qvel, dt_row, prev, qpos);
  memcpy(prev, qpos, sizeof(double) * (size_t)m->nq);
}

// --sensors: the sensors of the row's state, as MuJoCo's sensordata after mj_step from it: the step from d's
// state taken on the copy `probe` (d untouched; the same step the run takes next, bit for bit), with the
// sensors' noise (sensor_noise, stream seed + 2) when the model enables sensornoise
static const double* probe_sensors(const physModel* m, const physData* d, physData* probe, uint64_t* nstate) {
  physData keep = *probe;
  *probe = *d;
#define KEEP_PTR(type, name, n, mult) probe->name = keep.name;
  PHYS_DATA_ARRAYS(KEEP_PTR)
#undef KEEP_PTR
  probe->stack = keep.stack, probe->buffer = keep.buffer, probe->arena_guard = NULL;
  probe->pstack = 0;
  memcpy(probe->buffer, d->buffer, d->nbuffer - d->nstack * sizeof(double));
  phys_step(m, probe);
  if (m->opt.enableflags & PHYS_ENBL_SENSORNOISE) phys_sensor_noise(m, probe->sensordata, probe->sensordata, nstate);
  return probe->sensordata;
}

// write the state as a row (through noisy_row with --noise) with the controls held from it (when nu > 0), the
// replayed joint forces (with a --ctrl-file that has them) and the sensors (probe not NULL: --sensors); scratch
// q, v, prev (nq, nv, nq)
static int write_state(FILE* f, const physModel* m, const physData* d, const simArgs* a, int first, int with_qfrc,
                       double* q, double* v, double* prev, physRng* nrng, physData* probe, uint64_t* sstate) {
  memcpy(q, d->qpos, sizeof(double) * (size_t)m->nq);
  memcpy(v, d->qvel, sizeof(double) * (size_t)m->nv);
  if (a->noise > 0) noisy_row(m, q, v, prev, first, a->every * m->opt.timestep, a->noise, nrng);
  const double* sens = probe ? probe_sensors(m, d, probe, sstate) : NULL;
  return phys_traj_write_row_s(f, m, d->time, q, v, m->nu > 0 ? d->ctrl : NULL, with_qfrc ? d->qfrc_applied : NULL,
                               sens) == PHYS_OK;
}

// the inputs of the interval that starts at step k (1-based): the replayed file's at the current time, else
// --ctrl-value or zero, else (random) new draws at the start of each written interval
static void next_inputs(simReplay* rp, const physModel* m, physData* d, const simArgs* a, const double* cval,
                        physRng* rng, int k) {
  if (rp) replay_inputs(rp, m, d);
  else if ((k - 1) % a->every == 0) set_controls(m, d, a->ctrl, cval, rng);
}

// the step loop: row 0 is the initial state, then the state after every `every` steps; stops on a signal.
// The control draws and the noise draws use separate streams (seed, seed + 1). A row is written after the
// inputs of the interval it starts are set, so its u columns are the controls held until the next row.
static int run_steps(cliOutput* o, const physModel* m, physData* d, const simArgs* a, const double* cval,
                     simReplay* rp) {
  physRng rng, nrng;
  phys_rng_seed(&rng, (uint64_t)a->seed);
  phys_rng_seed(&nrng, (uint64_t)a->seed + 1);
  uint64_t sstate = (uint64_t)a->seed + 2;
  double* q = malloc(sizeof(double) * (size_t)(2 * m->nq + m->nv + 1));
  physData* probe = a->sensors ? phys_make_data(m) : NULL;
  if (!q || (a->sensors && !probe)) {
    cli_error("%s: out of memory", a->model);
    free(q);
    phys_free_data(probe);
    return 0;
  }
  double *v = q + m->nq, *prev = v + m->nv;
  int wq = rp && rp->ds.has_qfrc;
  if (a->steps > 0) next_inputs(rp, m, d, a, cval, &rng, 1);
  int ok = phys_traj_write_header_s(o->f, m, m->nu > 0, wq, a->sensors) == PHYS_OK &&
           write_state(o->f, m, d, a, 1, wq, q, v, prev, &nrng, probe, &sstate);
  for (int k = 1; ok && k <= a->steps && !g_signal; k++) {
    ok = step_checked(m, d, a, k);
    if (ok && k < a->steps) next_inputs(rp, m, d, a, cval, &rng, k + 1);   // before the row that starts it
    if (ok && k % a->every == 0 && !write_state(o->f, m, d, a, 0, wq, q, v, prev, &nrng, probe, &sstate)) {
      cli_error("%s %s: write error: %s", o->option, o->path ? o->path : "-", strerror(errno));
      ok = 0;
    }
  }
  free(q);
  phys_free_data(probe);
  return ok && !g_signal;
}

// monotonic wall clock in seconds
static double wall_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

// summary line on stderr: steps, simulated and wall time, final energy
static void print_summary(const physModel* m, physData* d, const simArgs* a, double t0, double wall) {
  double energy[2];
  phys_energy(m, d, energy);
  fprintf(stderr, "physid: simulate: %d steps of %g s, t = %.9g .. %.9g s; wall %.3f ms (%.2f us/step); "
                  "energy %.9g (potential %.9g, kinetic %.9g)\n",
          a->steps, m->opt.timestep, t0, d->time, 1e3 * wall, a->steps ? 1e6 * wall / a->steps : 0.0,
          energy[0] + energy[1], energy[0], energy[1]);
}

// one line per kind of step warning raised in the run: count, first step (from the kind's first time) and
// its first message; t0 the initial time
static void print_step_warnings(const physModel* m, const physData* d, double t0) {
  for (int kind = 0; kind < PHYS_NWARNKIND; kind++) {
    int n = d->warning_count[kind];
    if (n == 0) continue;
    double tw = d->warning_time[kind];
    long step = lround((tw - t0) / m->opt.timestep) + 1;
    cli_warning("simulate: %d step warning%s '%s', first at step %ld (t = %.9g): %s", n, n > 1 ? "s" : "",
                phys_warning_name(kind), step, tw, d->warning_first[kind]);
  }
}

// catch SIGINT and SIGTERM (on: our handler, off: the default action)
static void catch_signals(int on) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on ? on_signal : SIG_DFL;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
}

// open the (checked) output, run, commit or clean up; an interrupted run re-raises its signal after cleaning up
static int simulate(cliOutput* o, const physModel* m, physData* d, const simArgs* a, const double* cval,
                    simReplay* rp) {
  catch_signals(1);
  int ok = cli_output_open(o);
  double t0 = d->time, start = wall_seconds();
  ok = ok && run_steps(o, m, d, a, cval, rp);
  double wall = wall_seconds() - start;
  if (!ok || g_signal) ok = 0, cli_output_abort(o);
  else ok = cli_output_commit(o);
  if (g_signal) {
    cli_error("interrupted%s%s", !ok && a->out ? "; nothing written to " : "", !ok && a->out ? a->out : "");
    catch_signals(0);
    raise(g_signal);
    return 128 + g_signal;
  }
  if (ok) print_step_warnings(m, d, t0);
  if (ok && !a->quiet) print_summary(m, d, a, t0, wall);
  return ok ? CLI_EXIT_OK : CLI_EXIT_INPUT;
}

// physid simulate
// the model simulate runs: MODEL (--floating) with --dt, --no-contact, --contact, the energy check on, its
// sensors (--sensors) and residual network checked, the --ctrl-value controls parsed into cval; NULL and the exit
// code in *code (an error printed) when one fails
static physModel* simulated_model(const simArgs* a, double cval[64], int* code) {
  *code = CLI_EXIT_INPUT;
  physModel* m = cli_load_model(a->model, a->floating);
  if (!m) return NULL;
  if (a->sensors && m->nsensor == 0) {
    cli_error("--sensors: model '%s' has no sensors (MJCF <sensor>)", a->model);
    phys_free_model(m);
    return NULL;
  }
  *code = CLI_EXIT_USAGE;
  if (a->ctrl_value && !cli_parse_controls(cval, m, a->ctrl_value)) {
    phys_free_model(m);
    return NULL;
  }
  if (!cli_step_options(m, a->dt, a->nocontact, a->contact)) {
    phys_free_model(m);
    return NULL;
  }
  cli_integrator_options(m, "simulate", a->model, 0);
  m->opt.enableflags |= PHYS_ENBL_ENERGY;               // count steps that gain energy without work input
  if (a->contact >= 0 || a->dt > 0 || a->nocontact) {   // the loader checked penalty at the file's options
    physLog log;
    memset(&log, 0, sizeof log);
    phys_penalty_check(m, &log);
    cli_log_warnings(&log);
  }
  return m;
}

int cli_simulate(int argc, char** argv) {
  simArgs a = {0};
  a.contact = -1;
  const argOption opt[] = {
      {"--steps", ARG_INT, &a.steps, "N", "number of steps (N+1 rows with the initial state)", 0, 1e9, 1},
      {"--dt", ARG_DOUBLE, &a.dt, "DT", "timestep in seconds (default: the model's)", 1e-9, 1, 0},
      {"--ctrl", ARG_CHOICE, &a.ctrl, "zero|random", "controls: zero (default) or uniform in ctrlrange",
       0, 0, 0},
      {"--seed", ARG_INT, &a.seed, "S", "seed of --ctrl random (default 0)", 0, 2147483647, 0},
      {"--no-contact", ARG_FLAG, &a.nocontact, "", "disable contacts (PHYS_DSBL_CONTACT)", 0, 0, 0},
      {"--contact", ARG_CHOICE, &a.contact, "lcp|cone|ccp|penalty",
       "contact model (default: the model's physid:contact, else lcp)", 0, 0, 0},
      {"--init", ARG_STRING, &a.init, "FILE", "initial state: CSV with one row (t column optional)", 0, 0, 0},
      {"--out", ARG_STRING, &a.out, "FILE", "write the trajectory here (default: stdout)", 0, 0, 0},
      {"--floating", ARG_FLAG, &a.floating, "", "URDF: give the root link a free joint", 0, 0, 0},
      CLI_MODEL_OPTIONS,
      CLI_INTEGRATOR_OPTIONS,
      {"--quiet", ARG_FLAG, &a.quiet, "", "no summary line and no warnings on stderr (errors still print)", 0, 0,
       0},
      {"--strict", ARG_FLAG, &a.strict, "", "stop at the first step warning (exit 1, no output)", 0, 0, 0},
      {"--every", ARG_INT, &a.every, "K", "write the state every K steps (default 1; N must be a multiple)", 1,
       1e9, 0},
      {"--noise", ARG_DOUBLE, &a.noise, "SIGMA", "white noise (m) on written translations; velocities become "
       "backward differences of the written positions (as motion capture)", 0, 1, 0},
      {"--ctrl-value", ARG_STRING, &a.ctrl_value, "U0,U1,..", "constant controls, one per actuator", 0, 0, 0},
      {"--ctrl-file", ARG_STRING, &a.ctrl_file, "FILE", "replay the controls (u0.. or ctrl:ACTUATOR) and joint "
       "forces (tau0.. or qfrc:JOINT) a data file records, each held from its time to the next row's", 0, 0, 0},
      {"--sensors", ARG_FLAG, &a.sensors, "", "add the model's sensors (MJCF <sensor>) as columns sensor:NAME "
       "(sensor:NAME:k for k = 0.. of a multi-value one), at each row's state as MuJoCo's sensordata after mj_step "
       "from it; Gaussian noise of each sensor's noise attribute when the model enables sensornoise", 0, 0, 0},
  };
  const argCommand cmd = {"simulate",
                          "Simulate a model from its keyframe 0 (or qpos0, or --init) and write the trajectory "
                          "as CSV:\nheader t,q0..q{nq-1},v0..v{nv-1} (then u0..u{nu-1}: the controls held from each row to the next), "
                          "values as %.17g, N+1 rows.",
                          "MODEL", 1, opt, sizeof opt / sizeof opt[0],
                          "physid simulate arm7.xml --steps 1000 --ctrl random --seed 3 --out arm7.csv"};
  const char* pos[ARGS_MAXPOS];
  int code = cli_parse(pos, &cmd, argc, argv);
  if (code >= 0) return code;
  a.model = pos[0];
  if (a.every == 0) a.every = 1;
  if (a.steps % a.every) {
    cli_error("--steps %d is not a multiple of --every %d", a.steps, a.every);
    return CLI_EXIT_USAGE;
  }
  if (a.ctrl_file && (a.ctrl_value || a.ctrl)) {
    cli_error("--ctrl-file replays recorded inputs: it excludes %s", a.ctrl_value ? "--ctrl-value" : "--ctrl random");
    return CLI_EXIT_USAGE;
  }
  cliOutput o;
  const char* input[3] = {a.model, a.init, a.ctrl_file};
  if (!cli_output_check(&o, "--out", a.out) || cli_output_conflicts(&o, 1, input, 3)) return CLI_EXIT_INPUT;
  double cval[64];
  physModel* m = simulated_model(&a, cval, &code);
  if (!m) return code;
  physData* d = phys_make_data(m);
  simReplay rp;
  memset(&rp, 0, sizeof rp);
  code = CLI_EXIT_INPUT;
  if (!d) cli_error("%s: out of memory allocating the simulation data", a.model);
  else if (init_state(m, d, a.init) && (!a.ctrl_file || replay_load(&rp, m, a.ctrl_file)))
    code = simulate(&o, m, d, &a, a.ctrl_value ? cval : NULL, a.ctrl_file ? &rp : NULL);
  phys_dataset_free(&rp.ds);
  phys_free_data(d);
  phys_free_model(m);
  return code;
}
