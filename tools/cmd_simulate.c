// cmd_simulate.c - `physid simulate MODEL --steps N ...`: roll a model forward and write its trajectory CSV.
//
// The output file is written to a temporary file in the same folder and renamed into place only when the
// whole run succeeded: an error, a numerical warning in a step, or SIGINT/SIGTERM leave no output file.
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
} simArgs;

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

// controls for the next step: zero, or uniform in ctrlrange ([-1, 1] when not limited)
static void set_controls(const physModel* m, physData* d, int mode, physRng* rng) {
  for (int i = 0; i < m->nu; i++) {
    if (mode == CTRL_ZERO) {
      d->ctrl[i] = 0;
    } else if (m->actuator_ctrllimited[i]) {
      d->ctrl[i] = phys_rng_range(rng, m->actuator_ctrlrange[2 * i], m->actuator_ctrlrange[2 * i + 1]);
    } else {
      d->ctrl[i] = phys_rng_range(rng, -1, 1);
    }
  }
}

// index of the first non-finite value of x (n), -1 if all are finite
static int first_nonfinite(const double* x, int n) {
  for (int i = 0; i < n; i++) {
    if (!isfinite(x[i])) return i;
  }
  return -1;
}

// one step; a numerical warning or a non-finite state is an error naming the step and time
static int step_checked(const physModel* m, physData* d, const simArgs* a, int k) {
  int nwarning = d->nwarning;
  double t = d->time;
  phys_step(m, d);
  if (d->nwarning > nwarning) {
    cli_error("%s: step %d (t = %.17g): %s", a->model, k, t, d->lastwarning);
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

// the step loop: row 0 is the initial state, row k the state after step k; stops on a signal
static int run_steps(cliOutput* o, const physModel* m, physData* d, const simArgs* a) {
  physRng rng;
  phys_rng_seed(&rng, (uint64_t)a->seed);
  int ok = phys_traj_write_header(o->f, m) == PHYS_OK &&
           phys_traj_write_row(o->f, m, d->time, d->qpos, d->qvel) == PHYS_OK;
  for (int k = 1; ok && k <= a->steps && !g_signal; k++) {
    set_controls(m, d, a->ctrl, &rng);
    ok = step_checked(m, d, a, k);
    if (ok && phys_traj_write_row(o->f, m, d->time, d->qpos, d->qvel) != PHYS_OK) {
      cli_error("%s: write error: %s", o->path ? o->tmp : "stdout", strerror(errno));
      ok = 0;
    }
  }
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

// catch SIGINT and SIGTERM (on: our handler, off: the default action)
static void catch_signals(int on) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on ? on_signal : SIG_DFL;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
}

// open the output, run, commit or clean up; an interrupted run re-raises its signal after cleaning up
static int simulate(const physModel* m, physData* d, const simArgs* a) {
  cliOutput o;
  memset(&o, 0, sizeof o);
  catch_signals(1);
  if (!cli_output_open(&o, a->out)) return CLI_EXIT_INPUT;
  double t0 = d->time, start = wall_seconds();
  int ok = run_steps(&o, m, d, a);
  double wall = wall_seconds() - start;
  if (!ok) cli_output_abort(&o);
  else ok = cli_output_commit(&o);
  if (g_signal) {
    cli_error("interrupted%s%s", a->out ? "; nothing written to " : "", a->out ? a->out : "");
    catch_signals(0);
    raise(g_signal);
    return 128 + g_signal;
  }
  if (ok && !a->quiet) print_summary(m, d, a, t0, wall);
  return ok ? CLI_EXIT_OK : CLI_EXIT_INPUT;
}

// physid simulate
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
      {"--quiet", ARG_FLAG, &a.quiet, "", "no summary line on stderr", 0, 0, 0},
  };
  const argCommand cmd = {"simulate",
                          "Simulate a model from its keyframe 0 (or qpos0, or --init) and write the trajectory "
                          "as CSV:\nheader t,q0..q{nq-1},v0..v{nv-1}, values as %.17g, N+1 rows.",
                          "MODEL", 1, opt, sizeof opt / sizeof opt[0],
                          "physid simulate arm7.xml --steps 1000 --ctrl random --seed 3 --out arm7.csv"};
  const char* pos[ARGS_MAXPOS];
  int code = cli_parse(pos, &cmd, argc, argv);
  if (code >= 0) return code;
  a.model = pos[0];
  physModel* m = cli_load_model(a.model, a.floating);
  if (!m) return CLI_EXIT_INPUT;
  if (a.dt > 0) m->opt.timestep = a.dt;
  if (a.nocontact) m->opt.disableflags |= PHYS_DSBL_CONTACT;
  if (a.contact >= 0) m->opt.contact = a.contact;   // choices in physContactModel order
  physData* d = phys_make_data(m);
  code = CLI_EXIT_INPUT;
  if (!d) cli_error("%s: out of memory allocating the simulation data", a.model);
  else if (init_state(m, d, a.init)) code = simulate(m, d, &a);
  phys_free_data(d);
  phys_free_model(m);
  return code;
}
