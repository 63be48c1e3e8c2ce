// cmd_mpc.c - `physid mpc TASK.json`: model-predictive control, a receding-horizon loop around the planner of
// `physid optimize` (optimize.h). The task file is optimize's (the same reader: model, horizon, init, bounds,
// cost, method and options, out) plus "steps" (steps executed), "replan" (K: the plan is recomputed every K
// steps), "plant" ("physid" or "mujoco": what the controls are applied to) and "plant_model" (the plant's own
// model file: a plant that differs from the planner's model).
//
// Loop: the planner starts from the plant's state (qpos, qvel, time; a physid plant's contact list too), plans
// over the horizon by the task's method from the warm start (the last plan shifted by the steps executed, its
// last control held), the plant executes the plan's first K controls, and so on until "steps" steps are done.
// The physid plant steps by phys_step as `simulate --ctrl-file` does (its trajectory replays bit for bit); the
// MuJoCo plant is MuJoCo 2.2.2 (libmujoco.so.2.2.2, opened at run time: physid does not link it) on the world
// physid read from the same files (add files included), written as one MJCF text that MuJoCo loads from memory,
// state (qpos, qvel) and controls (ctrl) in the same layout. Outputs (all or none): the executed
// controls and the plant's trajectory as CSV, a result JSON (the executed trajectory's cost under the task's
// cost, per replan: iterations, solve time, planned cost, why it stopped), the HTML page.
#include <cjson/cJSON.h>
#include <dlfcn.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "identify.h"
#include "optimize.h"
#include "trajio.h"

#if __has_include(<mujoco/mujoco.h>)
#include <mujoco/mujoco.h>
#define MPC_HAVE_MUJOCO 1
#else
#define MPC_HAVE_MUJOCO 0
#endif

enum { PLANT_PHYSID = 0, PLANT_MUJOCO };

// the loop's settings (the task's mpc keys)
typedef struct mpcArgs_ {
  int steps;                // steps executed
  int replan;               // K: steps executed per plan
  int plant;                // PLANT_*
  char plant_model[OPT_PATH];   // "" : the task's model
} mpcArgs;

// the plant: physid (m, d) or MuJoCo (mjm, mjd through the functions opened at run time); qpos, qvel, ctrl,
// time point into its state
typedef struct mpcPlant_ {
  int kind;
  physModel* m;             // physid: its own model (the planner's model reloaded, or plant_model)
  physData* d;
  void* lib;                // MuJoCo: dlopen handle, model, data and functions
  void* mjm;
  void* mjd;
  void (*step)(const void*, void*);
  void (*delete_data)(void*);
  void (*delete_model)(void*);
  double *qpos, *qvel, *ctrl, *time;
  int nq, nv, nu;
} mpcPlant;

// what one replan did
typedef struct mpcReplan_ {
  int step;                 // the plant step it started at
  int iterations;           // the planner's iterations
  double seconds;           // its wall time
  double cost;              // the plan's cost over the horizon
  int stop;                 // why the planner stopped (physDdpStop)
} mpcReplan;

static const char* const g_plant_name[] = {"physid", "mujoco"};
static const char* const g_stop_name[] = {"cost", "feedforward", "maxiter", "mu", "gradient", "linesearch", "stall"};

// monotonic wall clock in seconds
static double wall_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

//---------------------------------------------------------------------------------------------------------
// the task's mpc keys

// steps (required), replan (default 1, at most the horizon), plant (default physid), plant_model
static int read_mpc(const optTask* t, mpcArgs* a) {
  const cJSON* r = t->root;
  const cJSON* v = cJSON_GetObjectItemCaseSensitive(r, "steps");
  double x;
  if (!v) {
    cli_error("%s: steps: missing (the number of steps the plant executes)", t->file);
    return 0;
  }
  if (!task_number(&x, v, 1, 1e7, 1, t, "steps")) return 0;
  a->steps = (int)x;
  a->replan = 1;
  if ((v = cJSON_GetObjectItemCaseSensitive(r, "replan"))) {
    if (!task_number(&x, v, 1, t->T, 1, t, "replan")) return 0;
    a->replan = (int)x;
  }
  a->plant = PLANT_PHYSID;
  if ((v = cJSON_GetObjectItemCaseSensitive(r, "plant"))) {
    if (!cJSON_IsString(v) || (strcmp(v->valuestring, "physid") && strcmp(v->valuestring, "mujoco"))) {
      cli_error("%s: plant: expected \"physid\" or \"mujoco\"", t->file);
      return 0;
    }
    a->plant = strcmp(v->valuestring, "mujoco") == 0 ? PLANT_MUJOCO : PLANT_PHYSID;
  }
  const char* s;
  if ((v = cJSON_GetObjectItemCaseSensitive(r, "plant_model")) &&
      (!task_string(&s, v, t, "plant_model") || !task_path(a->plant_model, t, s, "plant_model")))
    return 0;
  return 1;
}

//---------------------------------------------------------------------------------------------------------
// the plant

// 0 and a message unless the plant's sizes are the planner's
static int plant_sizes_ok(const optTask* t, const mpcPlant* pl, const physModel* m, const char* file) {
  if (pl->nq == m->nq && pl->nv == m->nv && pl->nu == m->nu) return 1;
  cli_error("%s: plant_model: %s has nq %d, nv %d, nu %d; the planner's model '%s' has %d, %d, %d", t->file, file,
            pl->nq, pl->nv, pl->nu, m->modelname, m->nq, m->nv, m->nu);
  return 0;
}

// the physid plant: the plant model (or the task's model again) at the planner's initial state
static int plant_open_physid(mpcPlant* pl, const optTask* t, const mpcArgs* a, const physModel* m,
                             const physData* d) {
  const char* file = a->plant_model[0] ? a->plant_model : t->model;
  pl->m = cli_load_model(file, 0);
  if (!pl->m) return 0;
  if (t->dt > 0) pl->m->opt.timestep = t->dt;
  pl->nq = pl->m->nq, pl->nv = pl->m->nv, pl->nu = pl->m->nu;
  if (!plant_sizes_ok(t, pl, m, file)) return 0;
  pl->d = phys_make_data(pl->m);
  if (!pl->d) {
    cli_error("%s: out of memory for the plant", t->file);
    return 0;
  }
  pl->qpos = pl->d->qpos, pl->qvel = pl->d->qvel, pl->ctrl = pl->d->ctrl, pl->time = &pl->d->time;
  memcpy(pl->qpos, d->qpos, sizeof(double) * (size_t)m->nq);
  memcpy(pl->qvel, d->qvel, sizeof(double) * (size_t)m->nv);
  return 1;
}

#if MPC_HAVE_MUJOCO
// the MuJoCo plant's world as one MJCF text (malloc'd, *n bytes): the plant's file and the task's add files read
// by physid's own readers (every file they refer to confined to its model folder: a reference outside is refused
// there, naming the file, line and element) and written by id_write_world with nothing it refers to; NULL and a
// message if physid refuses the files or the world has no one-file form (mesh geoms)
static char* plant_world_text(const optTask* t, const char* file, size_t* n) {
  physModel* w = cli_load_model(file, 0);
  if (!w) return NULL;
  char* text = NULL;
  char err[PHYS_MSGLEN];
  FILE* f = open_memstream(&text, n);
  int ok = f && id_write_world(f, w, err, sizeof err);
  if (f && fclose(f) != 0) ok = 0;
  phys_free_model(w);
  if (!ok) {
    const char* why = strstr(err, "it has ");
    cli_error("%s: plant: the MuJoCo plant is given the world physid read from %s%s as one MJCF file, and %s",
              t->file, file, cli_model.add.n ? " and the add files" : "",
              !f ? "there is no memory for it" : why ? why : err);
    free(text);
    return NULL;
  }
  return text;
}

// MuJoCo's model of the text (n bytes) through a virtual file system holding only it, so that MuJoCo opens no
// file (mj_loadXML looks in the VFS first, then on disk; the text refers to no file); NULL and a message
static mjModel* plant_load_text(const mpcPlant* pl, const optTask* t, const char* file, const char* text, size_t n) {
  void (*vfs_default)(mjVFS*) = (void (*)(mjVFS*))dlsym(pl->lib, "mj_defaultVFS");
  int (*vfs_file)(mjVFS*, const char*, int) = (int (*)(mjVFS*, const char*, int))dlsym(pl->lib, "mj_makeEmptyFileVFS");
  void (*vfs_delete)(mjVFS*) = (void (*)(mjVFS*))dlsym(pl->lib, "mj_deleteVFS");
  mjModel* (*load)(const char*, const mjVFS*, char*, int) = (mjModel * (*)(const char*, const mjVFS*, char*, int))
      dlsym(pl->lib, "mj_loadXML");
  if (!vfs_default || !vfs_file || !vfs_delete || !load) {
    cli_error("%s: plant: libmujoco.so.2.2.2 lacks a function of MuJoCo 2.2.2's API", t->file);
    return NULL;
  }
  static const char* const name = "physid_plant_world.xml";
  mjVFS* vfs = malloc(sizeof *vfs);
  if (!vfs || n > INT_MAX) {
    free(vfs);
    cli_error("%s: plant: out of memory for MuJoCo's virtual file system", t->file);
    return NULL;
  }
  vfs_default(vfs);
  mjModel* mm = NULL;
  char err[1000] = "";
  if (vfs_file(vfs, name, (int)n) != 0) snprintf(err, sizeof err, "cannot make its virtual file");
  else {
    memcpy(vfs->filedata[0], text, n);
    mm = load(name, vfs, err, sizeof err);
  }
  vfs_delete(vfs);
  free(vfs);
  if (!mm) cli_error("%s: plant: MuJoCo cannot load %s: %s", t->file, file, err);
  return mm;
}

// the MuJoCo plant: libmujoco.so.2.2.2 opened now, the world physid read (plant_world_text) loaded, the
// planner's initial state
static int plant_open_mujoco(mpcPlant* pl, const optTask* t, const mpcArgs* a, const physModel* m,
                             const physData* d) {
  const char* file = a->plant_model[0] ? a->plant_model : t->model;
  size_t n = 0;
  char* text = plant_world_text(t, file, &n);
  if (!text) return 0;
  pl->lib = dlopen("libmujoco.so.2.2.2", RTLD_NOW | RTLD_LOCAL);
  if (!pl->lib) {
    free(text);
    cli_error("%s: plant: cannot open MuJoCo 2.2.2 (libmujoco.so.2.2.2): %s", t->file, dlerror());
    return 0;
  }
  mjData* (*make)(const mjModel*) = (mjData * (*)(const mjModel*)) dlsym(pl->lib, "mj_makeData");
  void (*forward)(const mjModel*, mjData*) = (void (*)(const mjModel*, mjData*))dlsym(pl->lib, "mj_forward");
  pl->step = (void (*)(const void*, void*))dlsym(pl->lib, "mj_step");
  pl->delete_data = (void (*)(void*))dlsym(pl->lib, "mj_deleteData");
  pl->delete_model = (void (*)(void*))dlsym(pl->lib, "mj_deleteModel");
  if (!make || !forward || !pl->step || !pl->delete_data || !pl->delete_model) {
    free(text);
    cli_error("%s: plant: libmujoco.so.2.2.2 lacks a function of MuJoCo 2.2.2's API", t->file);
    return 0;
  }
  mjModel* mm = plant_load_text(pl, t, file, text, n);
  free(text);
  if (!mm) return 0;
  pl->mjm = mm;
  if (t->dt > 0) mm->opt.timestep = t->dt;
  pl->nq = mm->nq, pl->nv = mm->nv, pl->nu = mm->nu;
  if (!plant_sizes_ok(t, pl, m, file)) return 0;
  mjData* md = make(mm);
  if (!md) {
    cli_error("%s: plant: MuJoCo cannot make its data", t->file);
    return 0;
  }
  pl->mjd = md;
  pl->qpos = md->qpos, pl->qvel = md->qvel, pl->ctrl = md->ctrl, pl->time = &md->time;
  memcpy(pl->qpos, d->qpos, sizeof(double) * (size_t)m->nq);
  memcpy(pl->qvel, d->qvel, sizeof(double) * (size_t)m->nv);
  forward(mm, md);
  return 1;
}
#endif

// open the plant of the task
static int plant_open(mpcPlant* pl, const optTask* t, const mpcArgs* a, const physModel* m, const physData* d) {
  memset(pl, 0, sizeof *pl);
  pl->kind = a->plant;
  if (a->plant == PLANT_PHYSID) return plant_open_physid(pl, t, a, m, d);
#if MPC_HAVE_MUJOCO
  return plant_open_mujoco(pl, t, a, m, d);
#else
  cli_error("%s: plant: this physid was built without MuJoCo's headers: only \"physid\"", t->file);
  return 0;
#endif
}

static void plant_close(mpcPlant* pl) {
  phys_free_data(pl->d);
  phys_free_model(pl->m);
  if (pl->mjd) pl->delete_data(pl->mjd);
  if (pl->mjm) pl->delete_model(pl->mjm);
  if (pl->lib) dlclose(pl->lib);
}

// one plant step at the controls u; 0 and a message naming the step if physid rejected it or a state is not
// finite
static int plant_step(mpcPlant* pl, const optTask* t, const double* u, int k) {
  memcpy(pl->ctrl, u, sizeof(double) * (size_t)pl->nu);
  if (pl->kind == PLANT_PHYSID) {
    int rejected = pl->d->warning_count[PHYS_WARN_REJECTED];
    phys_step(pl->m, pl->d);
    if (pl->d->warning_count[PHYS_WARN_REJECTED] > rejected) {
      cli_error("%s: plant step %d: %s", t->file, k, pl->d->lastwarning);
      return 0;
    }
  } else {
    pl->step(pl->mjm, pl->mjd);
  }
  for (int i = 0; i < pl->nq + pl->nv; i++)
    if (!isfinite(i < pl->nq ? pl->qpos[i] : pl->qvel[i - pl->nq])) {
      cli_error("%s: plant step %d: the state is not finite", t->file, k);
      return 0;
    }
  return 1;
}

// the planner's data d <- the plant's state (qpos, qvel, time; a physid plant's contact list when the
// models have the same geoms)
static void plant_sync(const mpcPlant* pl, const physModel* m, physData* d) {
  memcpy(d->qpos, pl->qpos, sizeof(double) * (size_t)m->nq);
  memcpy(d->qvel, pl->qvel, sizeof(double) * (size_t)m->nv);
  d->time = *pl->time;
  d->ncon = 0;
  if (pl->kind == PLANT_PHYSID && pl->m->ngeom == m->ngeom && pl->d->ncon <= m->nconmax) {
    d->ncon = pl->d->ncon;
    memcpy(d->contact, pl->d->contact, sizeof(physContact) * (size_t)pl->d->ncon);
  }
}

//---------------------------------------------------------------------------------------------------------
// the loop

// the run: the executed controls (steps x nu), the plant's states ((steps + 1) x (nq + nv)) and times, replans
typedef struct mpcRun_ {
  double *U, *X, *times;
  mpcReplan* rep;
  int nrep;
  double cost;              // the executed trajectory's cost
  double seconds;           // planning time in all
} mpcRun;

// row k of the run <- the plant's state
static void record_state(mpcRun* r, const mpcPlant* pl, int k) {
  double* x = r->X + (size_t)k * (pl->nq + pl->nv);
  memcpy(x, pl->qpos, sizeof(double) * (size_t)pl->nq);
  memcpy(x + pl->nq, pl->qvel, sizeof(double) * (size_t)pl->nv);
  r->times[k] = *pl->time;
}

// the warm start of the next plan: U shifted by n steps (n <= T), the last control held over the tail
static void shift_plan(physControlProblem* p, int n) {
  size_t nu = (size_t)p->nu, keep = (size_t)(p->T - n);
  memmove(p->U, p->U + n * nu, sizeof(double) * keep * nu);
  const double* last = p->U + (keep ? keep - 1 : (size_t)p->T - 1) * nu;
  for (size_t k = keep; k < (size_t)p->T; k++) memmove(p->U + k * nu, last, sizeof(double) * nu);
}

// the cost of the executed run under the task's cost (the planner's model at the plant's states), with d as
// scratch: sum dt (running terms + control terms) + final terms
static double executed_cost(const physControlProblem* p, physData* d, const mpcRun* r, int steps) {
  const physModel* m = p->m;
  int ns = m->nq + m->nv, nu = p->nu;
  double J = 0;
  for (int k = 0; k <= steps; k++) {
    const double* x = r->X + (size_t)k * ns;
    memcpy(d->qpos, x, sizeof(double) * (size_t)m->nq);
    memcpy(d->qvel, x + m->nq, sizeof(double) * (size_t)m->nv);
    if (k == steps) {
      J += phys_state_cost(m, d, &p->fin, NULL, NULL);
      break;
    }
    const double *u = r->U + (size_t)k * nu, *up = k ? u - nu : p->uprev;
    double l = phys_state_cost(m, d, &p->run, NULL, NULL);
    for (int j = 0; j < nu; j++) l += 0.5 * p->wu[j] * u[j] * u[j] + 0.5 * p->wdu[j] * (u[j] - up[j]) * (u[j] - up[j]);
    J += m->opt.timestep * l;
  }
  return J;
}

// plan from the plant's state, execute the first K controls, shift; until steps are done
static int run_loop(const optTask* t, const mpcArgs* a, physControlProblem* p, physData* d, mpcPlant* pl,
                    mpcRun* r) {
  int nu = p->nu;
  double* uprev0 = r->U + (size_t)a->steps * nu;   // the task's uprev, kept (room after U)
  memcpy(uprev0, p->uprev, sizeof(double) * (size_t)nu);
  record_state(r, pl, 0);
  for (int s = 0; s < a->steps;) {
    plant_sync(pl, p->m, d);
    if (s > 0) memcpy(p->uprev, r->U + (size_t)(s - 1) * nu, sizeof(double) * (size_t)nu);
    physLog log;
    memset(&log, 0, sizeof log);
    double t0 = wall_seconds();
    if (opt_plan(t, p, d, NULL, NULL, &log) != PHYS_OK) {
      cli_error("%s: the plan at step %d (t = %.17g): %s", t->file, s, d->time, log.error);
      return 0;
    }
    mpcReplan* rp = r->rep + r->nrep++;
    *rp = (mpcReplan){s, p->niter, wall_seconds() - t0, p->cost, (int)p->stop};
    r->seconds += rp->seconds;
    int n = a->steps - s < a->replan ? a->steps - s : a->replan;
    for (int i = 0; i < n; i++, s++) {
      memcpy(r->U + (size_t)s * nu, p->U + (size_t)i * nu, sizeof(double) * (size_t)nu);
      if (!plant_step(pl, t, r->U + (size_t)s * nu, s)) return 0;
      record_state(r, pl, s + 1);
    }
    if (!cli_quiet)
      fprintf(stderr, "mpc: step %d/%d  t %.4g  iterations %d (stop: %s)  planned cost %.6g  %.3f ms\n", s, a->steps,
              *pl->time, rp->iterations, g_stop_name[rp->stop], rp->cost, 1e3 * rp->seconds);
    shift_plan(p, n);
  }
  memcpy(p->uprev, uprev0, sizeof(double) * (size_t)nu);
  r->cost = executed_cost(p, d, r, a->steps);
  return 1;
}

//---------------------------------------------------------------------------------------------------------
// outputs

// the plant's trajectory CSV as simulate writes it: row k the state before step k with the controls held
// from it; the last row keeps the last controls
static int write_trajectory(FILE* f, const physModel* m, const mpcRun* r, int steps) {
  int ok = phys_traj_write_header_u(f, m, m->nu > 0, 0) == PHYS_OK, ns = m->nq + m->nv;
  for (int k = 0; k <= steps && ok; k++) {
    const double* x = r->X + (size_t)k * ns;
    const double* u = r->U + (size_t)(k < steps ? k : steps - 1) * m->nu;
    ok = phys_traj_write_row_u(f, m, r->times[k], x, x + m->nq, m->nu > 0 ? u : NULL, NULL) == PHYS_OK;
  }
  return ok;
}

// an array of n numbers x[k * stride] (ints when ints) added to o as key
static void add_array(cJSON* o, const char* key, const void* base, int n, size_t stride, int ints) {
  cJSON* a = cJSON_CreateArray();
  for (int k = 0; k < n; k++) {
    const char* p = (const char*)base + (size_t)k * stride;
    cJSON_AddItemToArray(a, cJSON_CreateNumber(ints ? *(const int*)p : *(const double*)p));
  }
  cJSON_AddItemToObject(o, key, a);
}

// the result JSON: settings, the executed cost, bound violation, final state, per replan its step,
// iterations, solve time, planned cost and why the planner stopped
static int write_result(FILE* f, const optTask* t, const mpcArgs* a, const physControlProblem* p, const mpcRun* r) {
  const physModel* m = p->m;
  cJSON* o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "method", t->method[0] ? t->method : "ddp");
  cJSON_AddStringToObject(o, "plant", g_plant_name[a->plant]);
  cJSON_AddNumberToObject(o, "horizon", p->T);
  cJSON_AddNumberToObject(o, "replan", a->replan);
  cJSON_AddNumberToObject(o, "steps", a->steps);
  cJSON_AddNumberToObject(o, "dt", m->opt.timestep);
  cJSON_AddNumberToObject(o, "cost", r->cost);
  double viol = 0;
  for (int k = 0; k < a->steps; k++)
    for (int j = 0; j < m->nu; j++) {
      double u = r->U[(size_t)k * m->nu + j];
      viol = fmax(viol, fmax(p->lo[j] - u, u - p->hi[j]));
    }
  cJSON_AddNumberToObject(o, "violation", viol);
  const double* xN = r->X + (size_t)a->steps * (m->nq + m->nv);
  add_array(o, "final_qpos", xN, m->nq, sizeof(double), 0);
  add_array(o, "final_qvel", xN + m->nq, m->nv, sizeof(double), 0);
  cJSON_AddNumberToObject(o, "replans", r->nrep);
  cJSON_AddNumberToObject(o, "seconds", r->seconds);
  add_array(o, "replan_step", &r->rep[0].step, r->nrep, sizeof(mpcReplan), 1);
  add_array(o, "replan_iterations", &r->rep[0].iterations, r->nrep, sizeof(mpcReplan), 1);
  add_array(o, "replan_seconds", &r->rep[0].seconds, r->nrep, sizeof(mpcReplan), 0);
  add_array(o, "replan_cost", &r->rep[0].cost, r->nrep, sizeof(mpcReplan), 0);
  cJSON* stop = cJSON_CreateArray();
  for (int k = 0; k < r->nrep; k++) cJSON_AddItemToArray(stop, cJSON_CreateString(g_stop_name[r->rep[k].stop]));
  cJSON_AddItemToObject(o, "replan_stop", stop);
  char* s = cJSON_Print(o);
  int ok = s && fputs(s, f) >= 0 && fputc('\n', f) != EOF;
  free(s);
  cJSON_Delete(o);
  return ok;
}

// the HTML page: planned cost per replan, the executed controls and the plant's chosen state coordinates
static int write_html(FILE* f, const optTask* t, const mpcArgs* a, const physModel* m, const mpcRun* r) {
  double* cost = malloc(sizeof(double) * (size_t)r->nrep);
  if (!cost) return 0;
  int iters = 0;
  for (int k = 0; k < r->nrep; k++) cost[k] = r->rep[k].cost, iters += r->rep[k].iterations;
  char v[4][96];
  snprintf(v[0], sizeof v[0], "%s, horizon %d, dt %g s, replan every %d steps", t->method[0] ? t->method : "ddp",
           t->T, m->opt.timestep, a->replan);
  snprintf(v[1], sizeof v[1], "%s, %d steps", g_plant_name[a->plant], a->steps);
  snprintf(v[2], sizeof v[2], "%d replans, %d iterations, %.3f s", r->nrep, iters, r->seconds);
  snprintf(v[3], sizeof v[3], "%.9g", r->cost);
  const char* rows[] = {"method", v[0], "plant", v[1], "planning", v[2], "executed cost", v[3]};
  optPage pg = {"mpc", t->file, cost, r->nrep, "replan", r->times, r->U, r->X, a->steps, rows, 4, t->replay};
  int ok = opt_write_html(f, m, &pg, t->plot, t->nplot);
  free(cost);
  return ok;
}

// write every output (all or none)
static int write_outputs(const optTask* t, const mpcArgs* a, cliOutput* o, const physControlProblem* p,
                         const mpcRun* r) {
  const physModel* m = p->m;
  int ok = 1;
  for (int k = 0; k < OUT_N && ok; k++) ok = !t->has_out[k] || cli_output_open(&o[k]);
  ok = ok && (!t->has_out[OUT_CONTROLS] || opt_write_controls(o[OUT_CONTROLS].f, m, r->U, a->steps, r->times));
  ok = ok && (!t->has_out[OUT_TRAJECTORY] || write_trajectory(o[OUT_TRAJECTORY].f, m, r, a->steps));
  ok = ok && (!t->has_out[OUT_RESULT] || write_result(o[OUT_RESULT].f, t, a, p, r));
  ok = ok && (!t->has_out[OUT_HTML] || write_html(o[OUT_HTML].f, t, a, m, r));
  return opt_outputs_finish(t, o, ok);
}

// run the loop and write the outputs
static int mpc(const optTask* t, const mpcArgs* a, cliOutput* o, physControlProblem* p, physData* d) {
  const physModel* m = p->m;
  int ns = m->nq + m->nv, nrep = (a->steps + a->replan - 1) / a->replan;
  mpcRun r;
  memset(&r, 0, sizeof r);
  r.U = malloc(sizeof(double) * ((size_t)a->steps + 1) * (size_t)(m->nu ? m->nu : 1));
  r.X = malloc(sizeof(double) * ((size_t)a->steps + 1) * (size_t)ns);
  r.times = malloc(sizeof(double) * ((size_t)a->steps + 1));
  r.rep = malloc(sizeof(mpcReplan) * (size_t)nrep);
  mpcPlant pl;
  memset(&pl, 0, sizeof pl);
  int ok = r.U && r.X && r.times && r.rep;
  if (!ok) cli_error("%s: out of memory for %d steps", t->file, a->steps);
  ok = ok && plant_open(&pl, t, a, m, d);
  if (ok && !cli_quiet)
    fprintf(stderr, "mpc: %s plant, horizon %d, replan every %d steps, %d steps\n", g_plant_name[a->plant], t->T,
            a->replan, a->steps);
  ok = ok && run_loop(t, a, p, d, &pl, &r);
  if (ok && !cli_quiet)
    fprintf(stderr, "mpc: %d replans, %.3f s planning, executed cost %.9g\n", r.nrep, r.seconds, r.cost);
  ok = ok && write_outputs(t, a, o, p, &r);
  plant_close(&pl);
  free(r.U);
  free(r.X);
  free(r.times);
  free(r.rep);
  return ok ? CLI_EXIT_OK : CLI_EXIT_INPUT;
}

// the plant model is an input too: no output may be it
static int check_plant_output(const optTask* t, const mpcArgs* a, const cliOutput* o) {
  if (!a->plant_model[0]) return 1;
  const char* input[1] = {a->plant_model};
  cliOutput chk[OUT_N];
  int n = 0;
  for (int k = 0; k < OUT_N; k++)
    if (t->has_out[k]) chk[n++] = o[k];
  return !cli_output_conflicts(chk, n, input, 1);
}

// physid mpc
int cli_mpc(int argc, char** argv) {
  optTask t;
  memset(&t, 0, sizeof t);
  const argOption opt[] = {
      {"--quiet", ARG_FLAG, &t.quiet, "", "no progress lines and no warnings on stderr (errors still print)", 0, 0,
       0},
  };
  const argCommand cmd = {"mpc",
                          "Model-predictive control: plan over the task's horizon (as optimize), apply the first "
                          "\"replan\" controls\nto the plant (physid, or MuJoCo 2.2.2), re-plan warm-started from "
                          "the plant's state, for \"steps\"\nsteps; writes the executed controls CSV, the plant's "
                          "trajectory CSV, a result JSON and an HTML page\n(docs/cli.md).",
                          "TASK.json", 1, opt, sizeof opt / sizeof opt[0], "physid mpc hold.json"};
  const char* pos[ARGS_MAXPOS];
  int code = cli_parse(pos, &cmd, argc, argv);
  if (code >= 0) return code;
  if (!opt_task_load(&t, pos[0])) return CLI_EXIT_INPUT;
  cliOutput o[OUT_N];
  memset(o, 0, sizeof o);
  code = CLI_EXIT_INPUT;
  physModel* m = NULL;
  physData* d = NULL;
  physControlProblem* p = NULL;
  mpcArgs a;
  memset(&a, 0, sizeof a);
  static const char* const extra[] = {"plot", "replay", "steps", "replan", "plant", "plant_model"};
  if (cJSON_GetObjectItemCaseSensitive(t.root, "design"))   // (docs/control.md, design parameters: why not)
    cli_error("%s: design: not in mpc (a design is one value of the robot for the whole run, while mpc re-plans the "
              "controls of the plant as it is): choose it with `physid optimize` and write it into the model",
              t.file);
  else if (opt_task_top(&t, extra, 6) && read_mpc(&t, &a) && opt_check_outputs(&t, o) && check_plant_output(&t, &a, o) &&
      opt_task_problem(&t, &m, &d, &p))
    code = mpc(&t, &a, o, p, d);
  opt_task_free(&t, m, d, p);
  return code;
}
