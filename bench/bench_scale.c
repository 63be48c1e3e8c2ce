// bench_scale.c - issue 19's scaling benchmark: physid (lcp, cone, ccp, penalty) beside MuJoCo 2.2.2 on scenes
// with many contacts and many independent bodies, the step and physid's one-step VJP:
//   spheres10    bench/scenes/spheres10.xml: 10 spheres on a plane (one contact each, 10 free trees)
//   spheres50    bench/scenes/spheres50.xml: 50 spheres
//   boxes8       bench/scenes/boxes8.xml: a 2x2x2 pile of cubes (4 columns of 2, 1 cm apart)
//   boxes27      bench/scenes/boxes27.xml: a 3x3x3 pile (9 columns of 3)
//   humanoids22  /usr/share/mujoco/model/humanoid/22_humanoids.xml (libmujoco-samples), fallen on the floor
//   humanoid100  /usr/share/mujoco/model/humanoid100/humanoid100.xml: a humanoid and 100 free objects
// Every scene is measured in MuJoCo's settled pose: MuJoCo settles it (g_settle steps from qpos0, the sphere and
// box scenes dropped from 1 mm), physid starts from MuJoCo's state SHARED_STEPS steps before the end and steps
// from there (building its own warm start, the contact lists). The state after settling (time, qpos, qvel and
// the warm starts: physid's contact lists, MuJoCo's qacc_warmstart) is restored before each sample, so every
// sample is the same step. --prepare DIR settles in MuJoCo once and writes DIR/SCENE.state; --states DIR reads
// them (the callgrind runs: MuJoCo's settling of humanoid100 under valgrind would dominate them).
//
// usage: bench_scale [--root DIR] [--samples N] [--only ENGINE] [--task step|vjp] [--scene NAME]...
//                    [--prepare DIR | --states DIR]
//   DIR (root): the source tree (bench/scenes; default "." or $PHYS_SOURCE); ENGINE: lcp, cone, ccp, penalty or
//   mujoco; task vjp: physid's phys_step_vjp at the same state with the cotangent of ones (MuJoCo has none).
//   Prints RESULT<TAB>scene<TAB>engine<TAB>task<TAB>nv=..<TAB>ncon=..<TAB>median_us=..<TAB>iter=..<TAB>warnings=..
//   <TAB>status=..  (iter: the last solve's iterations; warnings: those counted over the physid run, MuJoCo's
//   mjWARN_BADQACC; status: ok, or why a VJP was refused). Instructions: run under valgrind --tool=callgrind
//   --toggle-collect='measured_*' --instr-atstart=no with --only, --task and one --scene (scripts/bench_scale.sh). Timing is
//   information, never a pass/fail test.
#include <math.h>
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "grad.h"
#include "physid.h"

#if defined(__has_include) && __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>   // instrumentation on only around the samples (valgrind --instr-atstart=no)
#else
#define CALLGRIND_START_INSTRUMENTATION
#define CALLGRIND_STOP_INSTRUMENTATION
#endif

enum { NSCENE = 6 };
static const char* g_scene[NSCENE] = {"spheres10", "spheres50", "boxes8", "boxes27", "humanoids22", "humanoid100"};
static const char* g_file[NSCENE] = {"bench/scenes/spheres10.xml", "bench/scenes/spheres50.xml",
                                     "bench/scenes/boxes8.xml", "bench/scenes/boxes27.xml",
                                     "/usr/share/mujoco/model/humanoid/22_humanoids.xml",
                                     "/usr/share/mujoco/model/humanoid100/humanoid100.xml"};
static const int g_settle[NSCENE] = {500, 500, 500, 500, 400, 400};   // MuJoCo steps (1 s, 1 s, 2 s, 2 s)
#define SHARED_STEPS 2   // physid takes MuJoCo's settled state this many steps early

enum { ENG_LCP = 0, ENG_CONE, ENG_CCP, ENG_PENALTY, ENG_MUJOCO, NENGINE };
static const char* g_engine[NENGINE] = {"lcp", "cone", "ccp", "penalty", "mujoco"};

// MuJoCo's settled scene: the state SHARED_STEPS early (a) and at the end (b, with its warm start)
typedef struct settled_ {
  int nq, nv;
  double ta, tb, *qa, *va, *qb, *vb, *warm;
} settled;

// one engine on one scene, with its saved state
typedef struct benchRun_ {
  physModel* pm;
  physData* pd;
  mjModel* mm;
  mjData* md;
  double time, *qpos, *qvel, *warm;   // saved state (warm: MuJoCo's qacc_warmstart)
  physContact *con, *con_prev;        // physid's contact lists
  int ncon, ncon_prev, nv;
  double *ybar, *xbar, *ubar;         // the VJP's cotangent and results
} benchRun;

//---------------------------------------------------------------------------------------------------------
// measured calls (noinline: callgrind --toggle-collect targets)

__attribute__((noinline)) void measured_phys_step(const physModel* m, physData* d) { phys_step(m, d); }

__attribute__((noinline)) physStatus measured_phys_vjp(const physModel* m, physData* d, const double* y, double* xb,
                                                       double* ub) {
  return phys_step_vjp(m, d, y, xb, ub);
}

__attribute__((noinline)) void measured_mj_step(const mjModel* m, mjData* d) { mj_step(m, d); }

// monotonic clock in microseconds
static double clock_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec * 1e-3;
}

// ascending doubles for qsort
static int by_value(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

// a new array of n doubles holding x (n may be 0)
static double* dup_array(const double* x, int n) {
  double* y = calloc((size_t)n + 1, sizeof(double));
  if (n) memcpy(y, x, sizeof(double) * (size_t)n);
  return y;
}

//---------------------------------------------------------------------------------------------------------
// MuJoCo's settled states (computed, or read from / written to DIR/SCENE.state as raw doubles)

static void settled_free(settled* s) {
  free(s->qa), free(s->va), free(s->qb), free(s->vb), free(s->warm);
  memset(s, 0, sizeof *s);
}

// the scene's file under root (absolute paths as they are)
static void scene_file(char* out, size_t n, const char* root, int sc) {
  if (g_file[sc][0] == '/') snprintf(out, n, "%s", g_file[sc]);
  else snprintf(out, n, "%s/%s", root, g_file[sc]);
}

// settle scene sc in MuJoCo into s; 0 on failure
static int settle_mj(settled* s, const char* root, int sc) {
  char err[1000] = "", file[1024];
  scene_file(file, sizeof file, root, sc);
  mjModel* mm = mj_loadXML(file, NULL, err, sizeof err);
  if (!mm) return fprintf(stderr, "bench_scale: MuJoCo cannot load %s: %s\n", file, err), 0;
  mjData* md = mj_makeData(mm);
  for (int i = 0; i < g_settle[sc]; i++) {
    if (i == g_settle[sc] - SHARED_STEPS) {
      s->ta = md->time;
      s->qa = dup_array(md->qpos, mm->nq);
      s->va = dup_array(md->qvel, mm->nv);
    }
    mj_step(mm, md);
  }
  s->nq = mm->nq, s->nv = mm->nv, s->tb = md->time;
  s->qb = dup_array(md->qpos, mm->nq);
  s->vb = dup_array(md->qvel, mm->nv);
  s->warm = dup_array(md->qacc_warmstart, mm->nv);
  mj_deleteData(md);
  mj_deleteModel(mm);
  return 1;
}

// write (save 1) or read (save 0) s as DIR/SCENE.state; 0 on failure
static int settled_file(settled* s, const char* dir, int sc, int save) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s.state", dir, g_scene[sc]);
  FILE* f = fopen(path, save ? "wb" : "rb");
  if (!f) return fprintf(stderr, "bench_scale: cannot open %s\n", path), 0;
  int ok = 1, size[2] = {s->nq, s->nv};
  ok &= (save ? fwrite(size, sizeof(int), 2, f) : fread(size, sizeof(int), 2, f)) == 2;
  if (!save && ok) {
    s->nq = size[0], s->nv = size[1];
    s->qa = calloc((size_t)s->nq + 1, sizeof(double)), s->qb = calloc((size_t)s->nq + 1, sizeof(double));
    s->va = calloc((size_t)s->nv + 1, sizeof(double)), s->vb = calloc((size_t)s->nv + 1, sizeof(double));
    s->warm = calloc((size_t)s->nv + 1, sizeof(double));
  }
  double* part[7] = {&s->ta, &s->tb, s->qa, s->va, s->qb, s->vb, s->warm};
  size_t len[7] = {1, 1, (size_t)s->nq, (size_t)s->nv, (size_t)s->nq, (size_t)s->nv, (size_t)s->nv};
  for (int k = 0; ok && k < 7; k++)
    ok &= (save ? fwrite(part[k], sizeof(double), len[k], f) : fread(part[k], sizeof(double), len[k], f)) == len[k];
  fclose(f);
  if (!ok) fprintf(stderr, "bench_scale: %s: short %s\n", path, save ? "write" : "read");
  return ok;
}

//---------------------------------------------------------------------------------------------------------
// set-up

// physid on scene sc under contact model `model` from MuJoCo's state s; 0 on failure
static int setup_phys(benchRun* r, const char* root, int sc, int model, const settled* s) {
  physLog log;
  memset(&log, 0, sizeof log);
  char file[1024];
  scene_file(file, sizeof file, root, sc);
  r->pm = phys_load(file, NULL, &log);
  if (!r->pm) return fprintf(stderr, "bench_scale: physid cannot load %s: %s\n", file, log.error), 0;
  if (r->pm->nq != s->nq || r->pm->nv != s->nv)
    return fprintf(stderr, "bench_scale: %s: physid's sizes differ from MuJoCo's\n", file), 0;
  r->pm->opt.contact = model;
  physData* d = r->pd = phys_make_data(r->pm);
  d->time = s->ta;
  memcpy(d->qpos, s->qa, sizeof(double) * (size_t)s->nq);
  memcpy(d->qvel, s->va, sizeof(double) * (size_t)s->nv);
  for (int i = 0; i < SHARED_STEPS; i++) phys_step(r->pm, d);
  r->nv = r->pm->nv;
  r->time = d->time;
  r->qpos = dup_array(d->qpos, r->pm->nq);
  r->qvel = dup_array(d->qvel, r->pm->nv);
  size_t ncm = (size_t)r->pm->nconmax + 1;
  r->con = malloc(sizeof(physContact) * ncm);
  r->con_prev = malloc(sizeof(physContact) * ncm);
  memcpy(r->con, d->contact, sizeof(physContact) * (size_t)d->ncon);
  memcpy(r->con_prev, d->contact_prev, sizeof(physContact) * (size_t)d->ncon_prev);
  r->ncon = d->ncon, r->ncon_prev = d->ncon_prev;
  int nx = 2 * r->nv + r->pm->na;
  r->ybar = malloc(sizeof(double) * (size_t)(nx + 1));
  for (int i = 0; i < nx; i++) r->ybar[i] = 1;
  r->xbar = malloc(sizeof(double) * (size_t)(nx + 1));
  r->ubar = malloc(sizeof(double) * (size_t)(r->pm->nu + 1));
  return 1;
}

// MuJoCo on scene sc at its settled state s; 0 on failure
static int setup_mj(benchRun* r, const char* root, int sc, const settled* s) {
  char err[1000] = "", file[1024];
  scene_file(file, sizeof file, root, sc);
  r->mm = mj_loadXML(file, NULL, err, sizeof err);
  if (!r->mm) return fprintf(stderr, "bench_scale: MuJoCo cannot load %s: %s\n", file, err), 0;
  r->md = mj_makeData(r->mm);
  r->nv = r->mm->nv;
  r->time = s->tb;
  r->qpos = dup_array(s->qb, s->nq);
  r->qvel = dup_array(s->vb, s->nv);
  r->warm = dup_array(s->warm, s->nv);
  return 1;
}

// restore the saved state
static void restore(benchRun* r) {
  if (r->pd) {
    physData* d = r->pd;
    d->time = r->time;
    memcpy(d->qpos, r->qpos, sizeof(double) * (size_t)r->pm->nq);
    memcpy(d->qvel, r->qvel, sizeof(double) * (size_t)r->pm->nv);
    memcpy(d->contact, r->con, sizeof(physContact) * (size_t)r->ncon);
    memcpy(d->contact_prev, r->con_prev, sizeof(physContact) * (size_t)r->ncon_prev);
    d->ncon = r->ncon, d->ncon_prev = r->ncon_prev;
  } else {
    r->md->time = r->time;
    mju_copy(r->md->qpos, r->qpos, r->mm->nq);
    mju_copy(r->md->qvel, r->qvel, r->mm->nv);
    mju_copy(r->md->qacc_warmstart, r->warm, r->mm->nv);
  }
}

static void run_free(benchRun* r) {
  if (r->pd) phys_free_data(r->pd);
  if (r->pm) phys_free_model(r->pm);
  if (r->md) mj_deleteData(r->md);
  if (r->mm) mj_deleteModel(r->mm);
  free(r->qpos), free(r->qvel), free(r->warm), free(r->con), free(r->con_prev);
  free(r->ybar), free(r->xbar), free(r->ubar);
  memset(r, 0, sizeof *r);
}

//---------------------------------------------------------------------------------------------------------
// measurement

// `samples` samples of the task (0 step, 1 vjp) on run r: prints its RESULT line
static void measure(benchRun* r, int sc, int e, int task, int samples) {
  double* t = malloc(sizeof(double) * (size_t)samples);
  physStatus st = PHYS_OK;
  int ncon = 0, iter = 0;
  CALLGRIND_START_INSTRUMENTATION;
  for (int i = 0; i < samples; i++) {
    restore(r);
    double t0 = clock_us();
    if (r->md) measured_mj_step(r->mm, r->md);
    else if (task == 0) measured_phys_step(r->pm, r->pd);
    else st = measured_phys_vjp(r->pm, r->pd, r->ybar, r->xbar, r->ubar);
    t[i] = clock_us() - t0;
    ncon = r->pd ? (task == 0 ? r->pd->ncon : r->ncon) : r->md->ncon;
    iter = r->pd ? r->pd->solver_iter : r->md->solver_iter;
  }
  CALLGRIND_STOP_INSTRUMENTATION;
  qsort(t, (size_t)samples, sizeof(double), by_value);
  int warn = r->pd ? r->pd->nwarning : r->md->warning[mjWARN_BADQACC].number;
  printf("RESULT\t%s\t%s\t%s\tnv=%d\tncon=%d\tmedian_us=%.3f\titer=%d\twarnings=%d\tstatus=%s\n", g_scene[sc],
         g_engine[e], task ? "vjp" : "step", r->nv, ncon, t[samples / 2], iter, warn,
         st == PHYS_OK ? "ok" : phys_status_str(st));
  if (r->pd && r->pd->nwarning)
    fprintf(stderr, "bench_scale: %s %s: %d warnings, last: %s\n", g_scene[sc], g_engine[e], r->pd->nwarning,
            r->pd->lastwarning);
  fflush(stdout);
  free(t);
}

// the scene's runs
static void bench_scene(int sc, const char* root, const char* states, int only, int task, int samples) {
  settled s;
  memset(&s, 0, sizeof s);
  if (!(states ? settled_file(&s, states, sc, 0) : settle_mj(&s, root, sc))) {
    settled_free(&s);
    return;
  }
  for (int e = 0; e < NENGINE; e++) {
    if ((only >= 0 && e != only) || (task == 1 && e == ENG_MUJOCO)) continue;
    benchRun r;
    memset(&r, 0, sizeof r);
    if (e == ENG_MUJOCO ? setup_mj(&r, root, sc, &s) : setup_phys(&r, root, sc, e, &s)) measure(&r, sc, e, task, samples);
    else printf("RESULT\t%s\t%s\t%s\tnv=-\tncon=-\tmedian_us=-\titer=-\twarnings=-\tstatus=setup\n", g_scene[sc],
                g_engine[e], task ? "vjp" : "step");
    run_free(&r);
  }
  settled_free(&s);
}

int main(int argc, char** argv) {
  const char* root = getenv("PHYS_SOURCE") ? getenv("PHYS_SOURCE") : ".";
  const char *states = NULL, *prepare = NULL;
  int samples = 20, only = -1, task = 0, want[NSCENE] = {0}, nwant = 0;
  for (int i = 1; i < argc; i++) {
    const char* a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : NULL;
    int k = -1;
    if (!v) return fprintf(stderr, "bench_scale: %s needs a value\n", a), 2;
    i++;
    if (!strcmp(a, "--root")) root = v;
    else if (!strcmp(a, "--samples")) samples = atoi(v);
    else if (!strcmp(a, "--states")) states = v;
    else if (!strcmp(a, "--prepare")) prepare = v;
    else if (!strcmp(a, "--task") && (!strcmp(v, "step") || !strcmp(v, "vjp"))) task = !strcmp(v, "vjp");
    else if (!strcmp(a, "--only")) {
      for (k = 0; k < NENGINE && strcmp(v, g_engine[k]); k++) {}
      if (k == NENGINE) return fprintf(stderr, "bench_scale: unknown engine '%s'\n", v), 2;
      only = k;
    } else if (!strcmp(a, "--scene")) {
      for (k = 0; k < NSCENE && strcmp(v, g_scene[k]); k++) {}
      if (k == NSCENE) return fprintf(stderr, "bench_scale: unknown scene '%s'\n", v), 2;
      want[k] = 1, nwant++;
    } else {
      return fprintf(stderr, "usage: bench_scale [--root DIR] [--samples N] [--only ENGINE] [--task step|vjp] "
                             "[--scene NAME]... [--prepare DIR | --states DIR]\n"), 2;
    }
  }
  if (samples < 1) return fprintf(stderr, "bench_scale: samples must be >= 1\n"), 2;
  for (int sc = 0; sc < NSCENE; sc++) {
    if (nwant && !want[sc]) continue;
    if (prepare) {
      settled s;
      memset(&s, 0, sizeof s);
      int ok = settle_mj(&s, root, sc) && settled_file(&s, prepare, sc, 1);
      settled_free(&s);
      if (!ok) return 1;
    } else {
      bench_scene(sc, root, states, only, task, samples);
    }
  }
  return 0;
}
