// optimize.h - the task file of `physid optimize` and `physid mpc` (cmd_optimize.c reads it, cmd_mpc.c reuses
// the reader), the planning call every method plugs into (opt_plan), and the HTML page of both
// (optimize_html.c); the methods beside DDP: single shooting "lbfgsb", "adam" (optimize_shooting.c,
// src/control/shooting.h) and stochastic search "random", "cem", "mppi" (optimize_sampling.c,
// src/control/sampling.h), each reading its own "options" object.
#ifndef PHYS_OPTIMIZE_H
#define PHYS_OPTIMIZE_H

#include <cjson/cJSON.h>

#include "cli.h"
#include "control.h"
#include "ms.h"
#include "sampling.h"
#include "shooting.h"

// a method's settings read from the task's "method" and "options"
typedef struct optMethod_ {
  const char* name;         // the method as named in the task
  int sampling;             // 1: random, cem, mppi; 0: lbfgsb, adam
  int maxiter;              // iterations (p->maxiter)
  double tol;               // < 0: the problem's default
  int complementarity;      // lbfgsb, adam, ddp: the complementarity-aware lcp gradient (PHYS_GRAD_COMPLEMENTARITY)
  physShootOptions shoot;
  physSampleOptions sample;
} optMethod;

// one key of an "options" object: its kind and range; value and given are set by opt_read_keys
enum { OPT_NUMBER = 0, OPT_INTEGER, OPT_BOOL };
typedef struct optKey_ {
  const char* name;
  int kind;
  double lo, hi;            // the range of a number or an integer
  double value;             // the value read (a bool: 0 or 1)
  int given;                // 1 if the key is present
} optKey;

// read object o (the task's "options") against keys: 0 and a message "FILE: options: unknown key 'k' (valid
// for METHOD: ...)" or "FILE: options.k: expected ..." otherwise
int opt_read_keys(const char* file, const char* method, const cJSON* o, optKey* keys, int nkeys);

// 1 if name is one of these methods, with *mo set to its defaults
int opt_shooting_method(optMethod* mo, const char* name);
int opt_sampling_method(optMethod* mo, const char* name);
// the method's "options" (o may be NULL: the defaults); 0 and a message naming the key otherwise
int opt_shooting_options(optMethod* mo, const char* file, const cJSON* o);
int opt_sampling_options(optMethod* mo, const char* file, const cJSON* o);
// solve p from d's state by the method (complementarity: the caller sets PHYS_GRAD_COMPLEMENTARITY in the
// model's gradflags); the status and message of the solver
physStatus opt_method_solve(const optMethod* mo, physData* d, physControlProblem* p, physLog* log);
// the method's options added to the result JSON r as "options"
void opt_method_result(cJSON* r, const optMethod* mo);
// the sampling methods' part of the two (optimize_sampling.c)
physStatus opt_sampling_solve(const optMethod* mo, physData* d, physControlProblem* p, physLog* log);
void opt_sampling_result(cJSON* r, const optMethod* mo);

#define OPT_PATH 4096
#define OPT_PLOT_MAX 12   // state coordinates plotted on the HTML page

enum { OUT_CONTROLS = 0, OUT_TRAJECTORY, OUT_RESULT, OUT_HTML, OUT_N };
extern const char* const g_out_key[OUT_N];

// the task's settings that need no model
typedef struct optTask_ {
  const char* file;         // the task file as given
  char dir[OPT_PATH];       // its folder ("" for the current one)
  cJSON* root;
  char model[OPT_PATH];
  char add[ARGS_MAXLIST][OPT_PATH];
  double dt;                // 0: the model's
  int integrator;           // "integrator": -1 the model's, else physIntegrator ("euler", "implicit"; issue 16 item 4)
  int T;
  int maxiter;              // 0: the default
  double tol;               // < 0: the default
  int reg_state;            // ddp: "regularization": "state" (1) or "control" (0, the default)
  double mu_max;            // ddp: "mu_max" (0: the default)
  int stall;                // ddp: "stall" K (0: off)
  double stall_tol;         // ddp: "stall_tol" (< 0: the default)
  char method[16];          // "ddp"
  char out[OUT_N][OPT_PATH];
  int has_out[OUT_N];
  int quiet;
  int plot[OPT_PLOT_MAX];   // state columns (qpos, then qvel) of the HTML page (opt_read_plot)
  int nplot;
  int replay;               // "replay": true: the HTML page embeds the 3-D player of the motion (tools/view.h)
  optMethod meth;           // the method beside ddp (meth.name NULL: ddp)
  int ms;                   // "method": "ms": multiple shooting (optimize_ms.c)
  physMsOptions ms_opt;
  physMsResult* ms_res;     // where opt_plan leaves ms's result (NULL: not kept)
  // "design" (optimize_design.c): the parameter table, theta (the initial value in, the best out), theta0 (the
  // initial value), the bounds, the sampling methods' spread (one allocation from theta); held: 1 where the
  // bounds are equal (design.held)
  int has_design;
  physParamTable design;
  double *theta, *theta0, *theta_lo, *theta_hi, *theta_sigma;
  unsigned char* held;
} optTask;

// t <- the task file parsed (t->file, dir, root; the rest zero, tol -1); 0 and a message if unreadable or not
// a JSON object
int opt_task_load(optTask* t, const char* file);
// the first pass: the keys that need no model, plus the command's own top-level keys extra (read by it)
int opt_task_top(optTask* t, const char* const* extra, int nextra);
// the second pass once the model is loaded: init into d, ctrlrange, cost and options into p
int opt_task_model(const optTask* t, const physModel* m, physData* d, physControlProblem* p);
// the task's model (dt applied), its data and problem, read by opt_task_model and opt_read_plot; 0 and a
// message on failure (free what was made with opt_task_free either way)
int opt_task_problem(optTask* t, physModel** m, physData** d, physControlProblem** p);
void opt_task_free(optTask* t, physModel* m, physData* d, physControlProblem* p);
// commit the open outputs together if ok, else remove them all with a message; returns 1 if committed
int opt_outputs_finish(const optTask* t, cliOutput* o, int ok);
// check the outputs before any work: each path usable, none the same file as another or an input
int opt_check_outputs(optTask* t, cliOutput* o);
// plan from d's state by the task's method, warm-started from p->U (the one call every method plugs into):
// on return p->U, p->X, p->cost, p->iter[0..niter], p->niter, p->stop and d back at its state
physStatus opt_plan(const optTask* t, physControlProblem* p, physData* d, physDdpProgress progress, void* ctx,
                    physLog* log);
// work counters per iteration for the result JSON (`steps`, `linearizations`: d->nstep and d->nlinearize,
// cumulative from the solve's start): opt_count_begin before a solve on d with room for n iterations; each
// gradient method's progress callback calls opt_count_mark(k) (nothing recorded without a begin). The
// sampling methods roll out on copies of d, so they record none (their work is samples x horizon steps).
int opt_count_begin(physData* d, int n);
void opt_count_mark(int k);
void opt_count_end(void);
// the task's "design" list (optimize_design.c; optimize only): the table built on m, theta from the model and
// the entries' init, bounds from the kind's and the entries', all into p (p->design, design_model = m, theta,
// bounds); 1 without a design; 0 and a message naming design[i] otherwise (also for a method other than lbfgsb
// and adam). opt_design_result adds "design": [{"param", "initial", "value"}] to the result JSON r;
// opt_design_free frees what opt_read_design made.
int opt_read_design(optTask* t, physModel* m, physControlProblem* p);
void opt_design_result(cJSON* r, const optTask* t);
void opt_design_free(optTask* t);
// the controls CSV: t,u0..u{nu-1}, row k the controls U[k] held from times[k] (T rows)
int opt_write_controls(FILE* f, const physModel* m, const double* U, int T, const double* times);

// task-file values (every error names the task file and the JSON path where)
int task_path(char out[OPT_PATH], const optTask* t, const char* path, const char* where);
int task_string(const char** s, const cJSON* v, const optTask* t, const char* where);
int task_number(double* x, const cJSON* v, double lo, double hi, int integral, const optTask* t, const char* where);
int task_keys(const cJSON* o, const char* const* valid, int nvalid, const optTask* t, const char* where);

// the HTML page (optimize_html.c): what it plots
typedef struct optPage_ {
  const char* command;      // "optimize" or "mpc"
  const char* title;        // the task file
  const double* iter_cost;  // cost per iteration (optimize) or planned cost per replan (mpc), n_iter values
  int n_iter;
  const char* iter_label;   // x axis of the cost plot ("iteration", "replan")
  const double* times;      // T + 1 times
  const double* U;          // T x nu controls
  const double* X;          // (T + 1) x (nq + nv) states
  int T;
  const char* const* rows;  // summary table: n_rows (name, value) pairs
  int n_rows;
  int replay;               // 1: the 3-D player of the motion X (tools/view.h) after the plots
} optPage;
// the "plot" key into t->plot: the state coordinates ("q0", "v1": trajectory CSV names) to plot; default the
// first 6 positions and velocities; and the "replay" key (true / false) into t->replay, three.js checked then.
// 0 and a message naming plot[i] if a name is not one of m's, or on a bad replay.
int opt_read_plot(optTask* t, const physModel* m);
// write the self-contained page (inline SVG, no external resources; with pg->replay the 3-D player's scripts
// inlined); sel: state columns
int opt_write_html(FILE* f, const physModel* m, const optPage* pg, const int* sel, int nsel);

#endif  // PHYS_OPTIMIZE_H
