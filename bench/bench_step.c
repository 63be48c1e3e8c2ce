// bench_step.c - microseconds per step of physid phys_step and MuJoCo 2.2.2 mj_step, side by side.
//
// usage: bench_step [--samples N] [--rounds R] [--only ENGINE] MODEL.xml...
//   engines: physid (contact disabled), mujoco-nocontact (mjDSBL_CONTACT), mujoco-contact (collision on;
//   the bench reports how many contacts are active). Before each sample the state (time, qpos, qvel, ctrl,
//   and MuJoCo's warm start) is restored, so every sample is the same step; the median over samples is
//   reported, rounds interleave the engines so machine drift hits all of them alike.
// Instruction counts: run under `valgrind --tool=callgrind --toggle-collect='measured_*'` with --only and
// divide the inclusive count of measured_phys_step / measured_mj_step by the samples (scripts/bench.sh).
// Timing is information, never a pass/fail test.
#include <math.h>
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "physid.h"

enum { ENG_PHYS = 0, ENG_MJ_NOCON, ENG_MJ_CON, NENGINE };
static const char* g_engine[NENGINE] = {"physid", "mujoco-nocontact", "mujoco-contact"};

// the step state saved once and restored before each sample
typedef struct benchState_ {
  double time;
  double* qpos;
  double* qvel;
  double* ctrl;
  double* warm;             // MuJoCo qacc_warmstart (NULL for physid)
} benchState;

// one engine on one model
typedef struct benchRun_ {
  physModel* pm;
  physData* pd;
  mjModel* mm;
  mjData* md;
  benchState s;
  double* sample;           // microseconds per sample, all rounds
  int nsample;
} benchRun;

// settings from the command line
typedef struct benchArgs_ {
  int samples;              // per round
  int rounds;
  int only;                 // engine index, -1 for all
} benchArgs;

//---------------------------------------------------------------------------------------------------------
// measured calls (noinline: callgrind --toggle-collect targets)

__attribute__((noinline)) void measured_phys_step(const physModel* m, physData* d) {
  phys_step(m, d);
}

__attribute__((noinline)) void measured_mj_step(const mjModel* m, mjData* d) {
  mj_step(m, d);
}

// monotonic clock in microseconds
static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec * 1e-3;
}

// ascending order of doubles for qsort
static int cmp_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

//---------------------------------------------------------------------------------------------------------
// state save/restore

// allocate the saved state and copy x = (time, qpos, qvel, ctrl[, warm]) into it
static void state_save(benchState* s, double time, const double* qpos, int nq, const double* qvel, int nv,
                       const double* ctrl, int nu, const double* warm) {
  s->time = time;
  s->qpos = malloc(sizeof(double) * (size_t)(nq + 1));
  s->qvel = malloc(sizeof(double) * (size_t)(nv + 1));
  s->ctrl = malloc(sizeof(double) * (size_t)(nu + 1));
  s->warm = warm ? malloc(sizeof(double) * (size_t)(nv + 1)) : NULL;
  memcpy(s->qpos, qpos, sizeof(double) * (size_t)nq);
  memcpy(s->qvel, qvel, sizeof(double) * (size_t)nv);
  memcpy(s->ctrl, ctrl, sizeof(double) * (size_t)nu);
  if (warm) memcpy(s->warm, warm, sizeof(double) * (size_t)nv);
}

// restore the saved state into the engine's data
static void state_load(benchRun* r) {
  const benchState* s = &r->s;
  if (r->pd) {
    r->pd->time = s->time;
    memcpy(r->pd->qpos, s->qpos, sizeof(double) * (size_t)r->pm->nq);
    memcpy(r->pd->qvel, s->qvel, sizeof(double) * (size_t)r->pm->nv);
    memcpy(r->pd->ctrl, s->ctrl, sizeof(double) * (size_t)r->pm->nu);
  } else {
    r->md->time = s->time;
    mju_copy(r->md->qpos, s->qpos, r->mm->nq);
    mju_copy(r->md->qvel, s->qvel, r->mm->nv);
    mju_copy(r->md->ctrl, s->ctrl, r->mm->nu);
    mju_copy(r->md->qacc_warmstart, s->warm, r->mm->nv);
  }
}

//---------------------------------------------------------------------------------------------------------
// set-up

// physid on a model, contact disabled, from keyframe 0 (or qpos0 at rest); 0 on load failure
static int setup_phys(benchRun* r, const char* file, int nsample) {
  physLog log;
  memset(&log, 0, sizeof log);
  r->pm = phys_load(file, NULL, &log);
  if (!r->pm) {
    fprintf(stderr, "bench_step: physid cannot load %s: %s\n", file, log.error);
    return 0;
  }
  if (log.nwarning) fprintf(stderr, "bench_step: physid: %d loader warnings on %s (first: %s)\n",
                            log.nwarning, file, log.warning[0]);
  r->pm->opt.disableflags |= PHYS_DSBL_CONTACT;
  r->pd = phys_make_data(r->pm);
  if (r->pm->nkey) phys_reset_keyframe(r->pm, r->pd, 0);
  else phys_reset_data(r->pm, r->pd);
  state_save(&r->s, r->pd->time, r->pd->qpos, r->pm->nq, r->pd->qvel, r->pm->nv, r->pd->ctrl, r->pm->nu,
             NULL);
  r->sample = malloc(sizeof(double) * (size_t)nsample);
  return 1;
}

// MuJoCo on a model (contacts disabled or not), from keyframe 0 (or qpos0 at rest); 0 on failure
static int setup_mj(benchRun* r, const char* file, int contact, int nsample) {
  char err[1000] = "";
  r->mm = mj_loadXML(file, NULL, err, sizeof err);
  if (!r->mm) {
    fprintf(stderr, "bench_step: MuJoCo cannot load %s: %s\n", file, err);
    return 0;
  }
  if (!contact) r->mm->opt.disableflags |= mjDSBL_CONTACT;
  r->md = mj_makeData(r->mm);
  if (r->mm->nkey) mj_resetDataKeyframe(r->mm, r->md, 0);
  state_save(&r->s, r->md->time, r->md->qpos, r->mm->nq, r->md->qvel, r->mm->nv, r->md->ctrl, r->mm->nu,
             r->md->qacc_warmstart);
  r->sample = malloc(sizeof(double) * (size_t)nsample);
  return 1;
}

// release an engine run
static void run_free(benchRun* r) {
  phys_free_data(r->pd);
  phys_free_model(r->pm);
  if (r->md) mj_deleteData(r->md);
  if (r->mm) mj_deleteModel(r->mm);
  free(r->s.qpos), free(r->s.qvel), free(r->s.ctrl), free(r->s.warm), free(r->sample);
}

//---------------------------------------------------------------------------------------------------------
// measurement

// n samples of one restored step each, appended to r->sample
static void measure(benchRun* r, int n) {
  for (int i = 0; i < n; i++) {
    state_load(r);
    double t0 = now_us();
    if (r->pd) measured_phys_step(r->pm, r->pd);
    else measured_mj_step(r->mm, r->md);
    r->sample[r->nsample++] = now_us() - t0;
  }
}

// max |qvel_physid - qvel_mujoco| after one step from the same state (a sanity check, printed only)
static double step_difference(benchRun* p, benchRun* m) {
  if (!p->pd || !m->md || p->pm->nv != m->mm->nv) return NAN;
  state_load(p);
  state_load(m);
  phys_step(p->pm, p->pd);
  mj_step(m->mm, m->md);
  double diff = 0;
  for (int i = 0; i < p->pm->nv; i++) diff = fmax(diff, fabs(p->pd->qvel[i] - m->md->qvel[i]));
  return diff;
}

// one result line: model, engine, sizes, active contacts, median and min microseconds
static void report(const char* model, int e, benchRun* r) {
  qsort(r->sample, (size_t)r->nsample, sizeof(double), cmp_double);
  int nv = r->pm ? r->pm->nv : r->mm->nv, ncon = -1;
  if (r->md) {
    state_load(r);
    mj_forward(r->mm, r->md);
    ncon = r->md->ncon;
  }
  printf("RESULT\t%s\t%s\tnv=%d\tncon=%d\tmedian_us=%.3f\tmin_us=%.3f\tsamples=%d\n", model, g_engine[e], nv,
         ncon, r->sample[r->nsample / 2], r->sample[0], r->nsample);
}

// all engines on one model: set up, interleaved rounds, report
static void bench_model(const char* file, const benchArgs* a) {
  const char* name = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
  benchRun run[NENGINE];
  int ok[NENGINE] = {0}, total = a->samples * a->rounds;
  memset(run, 0, sizeof run);
  for (int e = 0; e < NENGINE; e++) {
    if (a->only >= 0 && a->only != e) continue;
    ok[e] = e == ENG_PHYS ? setup_phys(&run[e], file, total) : setup_mj(&run[e], file, e == ENG_MJ_CON, total);
  }
  if (ok[ENG_PHYS] && ok[ENG_MJ_NOCON]) {
    printf("# %s: max |qvel physid - qvel mujoco-nocontact| after one step: %.3g\n", name,
           step_difference(&run[ENG_PHYS], &run[ENG_MJ_NOCON]));
  }
  for (int k = 0; k < a->rounds; k++) {
    for (int e = 0; e < NENGINE; e++) {
      if (ok[e]) measure(&run[e], a->samples);
    }
  }
  for (int e = 0; e < NENGINE; e++) {
    if (ok[e]) report(name, e, &run[e]);
    run_free(&run[e]);
  }
}

// index of an engine name, -1 if unknown
static int engine_index(const char* name) {
  for (int e = 0; e < NENGINE; e++) {
    if (strcmp(name, g_engine[e]) == 0) return e;
  }
  return -1;
}

// parse the options; returns the index of the first model argument, -1 on a usage error
static int parse_args(benchArgs* a, int argc, char** argv) {
  int i = 1;
  for (; i < argc && strncmp(argv[i], "--", 2) == 0; i += 2) {
    if (i + 1 >= argc) return -1;
    if (strcmp(argv[i], "--samples") == 0) a->samples = atoi(argv[i + 1]);
    else if (strcmp(argv[i], "--rounds") == 0) a->rounds = atoi(argv[i + 1]);
    else if (strcmp(argv[i], "--only") == 0 && (a->only = engine_index(argv[i + 1])) >= 0) continue;
    else return -1;
  }
  return i < argc && a->samples > 0 && a->rounds > 0 ? i : -1;
}

int main(int argc, char** argv) {
  benchArgs a = {2000, 3, -1};
  int first = parse_args(&a, argc, argv);
  if (first < 0) {
    fprintf(stderr, "usage: bench_step [--samples N] [--rounds R] [--only physid|mujoco-nocontact|"
                    "mujoco-contact] MODEL.xml...\n");
    return 2;
  }
  printf("# physid %s vs MuJoCo %s; %d rounds x %d samples, state restored before each sample\n",
         PHYS_VERSION, mj_versionString(), a.rounds, a.samples);
  for (int i = first; i < argc; i++) bench_model(argv[i], &a);
  return 0;
}
