// optimize.h - the task file of `physid optimize` and `physid mpc` (cmd_optimize.c reads it, cmd_mpc.c reuses
// the reader), the planning call every method plugs into (opt_plan), and the HTML page of both
// (optimize_html.c).
#ifndef PHYS_OPTIMIZE_H
#define PHYS_OPTIMIZE_H

#include <cjson/cJSON.h>

#include "cli.h"
#include "control.h"

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
  int T;
  int maxiter;              // 0: the default
  double tol;               // < 0: the default
  char method[16];          // "ddp"
  char out[OUT_N][OPT_PATH];
  int has_out[OUT_N];
  int quiet;
  int plot[OPT_PLOT_MAX];   // state columns (qpos, then qvel) of the HTML page (opt_read_plot)
  int nplot;
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
} optPage;
// the "plot" key into t->plot: the state coordinates ("q0", "v1": trajectory CSV names) to plot; default the
// first 6 positions and velocities. 0 and a message naming plot[i] if a name is not one of m's.
int opt_read_plot(optTask* t, const physModel* m);
// write the self-contained page (inline SVG, no scripts or external resources); sel: state columns
int opt_write_html(FILE* f, const physModel* m, const optPage* pg, const int* sel, int nsel);

#endif  // PHYS_OPTIMIZE_H
