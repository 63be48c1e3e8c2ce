// bench_superball.c - the SUPERball tensegrity's step and step gradient (issue 16 item 7): physid against
// MuJoCo 2.2.2's mj_step on the same model and state, in one run.
//
// usage: bench_superball [--root DIR] [--samples N] [--only TASK]   (N calls per task, default 5)
// Scenes (models from the source tree DIR, default "."):
//   air:   models/superball_fixed.xml (rod r0 welded, no floor: the non-contact set), at the state MuJoCo
//          reaches after 1 s from rest under constant controls 0.3 (so the cables move);
//   floor: models/superball.xml lying on the floor, the state MuJoCo reaches after 1 s from rest (controls 0):
//          MuJoCo with its condim 6 (sliding, torsional, rolling friction 1); physid with lcp and penalty
//          (its contacts are sliding friction only).
// Tasks: air_mj_step air_phys_step air_phys_jacobian air_phys_vjp
//        floor_mj_step floor_phys_step_lcp floor_phys_step_penalty floor_phys_jacobian_lcp
//        floor_phys_jacobian_penalty floor_phys_vjp_penalty
// The steps run the filter-actuator models (act in the state, as the data); the Jacobians (A = dx+/dx,
// B = dx+/du, x = (q, v)) and VJPs run the same models with actuators without dynamics
// (examples/tensegrity/superball*_nodyn.xml), because physid's step derivatives refuse activations until
// issue 15's act Jacobians land. Each sample restores the state (and physid's contact warm start, MuJoCo's
// qacc_warmstart). Instructions, not wall time: every task runs in a noinline measured_* function
// (valgrind --tool=callgrind --toggle-collect='measured_*', divide by the samples; scripts/bench_superball.sh).
#include <math.h>
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grad.h"
#include "physid.h"

// one physid scene: the model, its data, the state every sample starts from (with the contact warm start)
typedef struct {
  physModel* m;
  physData* d;
  double *qpos, *qvel, *act, *A, *B, *y, *xb, *ub;
  physContact* con;
  int ncon;
} physScene;

// MuJoCo's scene: model, data and the saved state
typedef struct {
  mjModel* m;
  mjData* d;
  double *qpos, *qvel, *act, *warm;
} mjScene;

__attribute__((noinline)) void measured_mj_step(mjScene* s) { mj_step(s->m, s->d); }
__attribute__((noinline)) void measured_phys_step(physScene* s) { phys_step(s->m, s->d); }
__attribute__((noinline)) void measured_phys_jacobian(physScene* s) { phys_step_jacobian(s->m, s->d, s->A, s->B); }
__attribute__((noinline)) void measured_phys_vjp(physScene* s) { phys_step_vjp(s->m, s->d, s->y, s->xb, s->ub); }

// a copy of n doubles
static double* dup(const double* x, int n) {
  double* y = malloc(sizeof(double) * (size_t)(n + 1));
  memcpy(y, x, sizeof(double) * (size_t)n);
  return y;
}

// MuJoCo's scene: file loaded, 1000 steps from rest at constant controls u; the reached state saved
static int mj_scene(mjScene* s, const char* file, double u) {
  char err[1000] = "";
  s->m = mj_loadXML(file, NULL, err, sizeof err);
  if (!s->m) {
    fprintf(stderr, "bench_superball: MuJoCo cannot load %s: %s\n", file, err);
    return 0;
  }
  s->d = mj_makeData(s->m);
  for (int i = 0; i < s->m->nu; i++) s->d->ctrl[i] = u;
  for (int k = 0; k < 1000; k++) mj_step(s->m, s->d);
  s->qpos = dup(s->d->qpos, s->m->nq);
  s->qvel = dup(s->d->qvel, s->m->nv);
  s->act = dup(s->d->act, s->m->na);
  s->warm = dup(s->d->qacc_warmstart, s->m->nv);
  return 1;
}

// MuJoCo's saved state restored
static void mj_restore(mjScene* s) {
  memcpy(s->d->qpos, s->qpos, sizeof(double) * (size_t)s->m->nq);
  memcpy(s->d->qvel, s->qvel, sizeof(double) * (size_t)s->m->nv);
  memcpy(s->d->act, s->act, sizeof(double) * (size_t)s->m->na);
  memcpy(s->d->qacc_warmstart, s->warm, sizeof(double) * (size_t)s->m->nv);
  s->d->time = 1;
}

// physid's scene: file loaded with contact model cm at MuJoCo's state (qpos, qvel, act when both have it) and
// controls u; one step finds the contacts, which become the warm start of every sample
static int phys_scene(physScene* s, const char* file, int cm, const mjScene* ref, double u) {
  physLog log = {0};
  s->m = phys_load(file, NULL, &log);
  if (!s->m) {
    fprintf(stderr, "bench_superball: physid cannot load %s: %s\n", file, log.error);
    return 0;
  }
  s->m->opt.contact = cm;
  s->d = phys_make_data(s->m);
  int nq = s->m->nq, nv = s->m->nv, nu = s->m->nu, n2 = 2 * nv;
  memcpy(s->d->qpos, ref->qpos, sizeof(double) * (size_t)nq);
  memcpy(s->d->qvel, ref->qvel, sizeof(double) * (size_t)nv);
  if (s->m->na == ref->m->na) memcpy(s->d->act, ref->act, sizeof(double) * (size_t)s->m->na);
  for (int i = 0; i < nu; i++) s->d->ctrl[i] = u;
  s->qpos = dup(s->d->qpos, nq);
  s->qvel = dup(s->d->qvel, nv);
  s->act = dup(s->d->act, s->m->na);
  phys_step(s->m, s->d);
  s->con = malloc(sizeof(physContact) * (size_t)(s->m->nconmax + 1));
  memcpy(s->con, s->d->contact, sizeof(physContact) * (size_t)s->d->ncon);
  s->ncon = s->d->ncon;
  s->A = malloc(sizeof(double) * (size_t)n2 * n2);
  s->B = malloc(sizeof(double) * (size_t)(n2 * nu + 1));
  s->y = malloc(sizeof(double) * (size_t)n2);
  s->xb = malloc(sizeof(double) * (size_t)n2);
  s->ub = malloc(sizeof(double) * (size_t)(nu + 1));
  for (int i = 0; i < n2; i++) s->y[i] = cos(0.37 * i);
  return 1;
}

// physid's saved state and warm start restored
static void phys_restore(physScene* s) {
  physData* d = s->d;
  d->time = 1;
  memcpy(d->qpos, s->qpos, sizeof(double) * (size_t)s->m->nq);
  memcpy(d->qvel, s->qvel, sizeof(double) * (size_t)s->m->nv);
  memcpy(d->act, s->act, sizeof(double) * (size_t)s->m->na);
  memcpy(d->contact, s->con, sizeof(physContact) * (size_t)s->ncon);
  d->ncon = s->ncon;
  d->ncon_prev = 0;
}

enum { AIR_MJ, AIR_STEP, AIR_JAC, AIR_VJP, FL_MJ, FL_LCP, FL_PEN, FL_JAC_LCP, FL_JAC_PEN, FL_VJP_PEN, NTASK };
static const char* TASK[NTASK] = {"air_mj_step", "air_phys_step", "air_phys_jacobian", "air_phys_vjp",
                                  "floor_mj_step", "floor_phys_step_lcp", "floor_phys_step_penalty",
                                  "floor_phys_jacobian_lcp", "floor_phys_jacobian_penalty",
                                  "floor_phys_vjp_penalty"};

int main(int argc, char** argv) {
  const char* root = ".";
  const char* only = NULL;
  int nsample = 5;
  for (int a = 1; a + 1 < argc; a += 2) {
    if (!strcmp(argv[a], "--root")) root = argv[a + 1];
    else if (!strcmp(argv[a], "--samples")) nsample = atoi(argv[a + 1]);
    else if (!strcmp(argv[a], "--only")) only = argv[a + 1];
  }
  char f[6][4096];
  const char* rel[6] = {"models/superball_fixed.xml", "examples/tensegrity/superball_fixed_nodyn.xml",
                        "models/superball.xml", "examples/tensegrity/superball_nodyn.xml"};
  for (int i = 0; i < 4; i++) snprintf(f[i], sizeof f[i], "%s/%s", root, rel[i]);
  mjScene mair, mfl;
  physScene air, airg, lcp, pen, lcpg, peng;
  if (!mj_scene(&mair, f[0], 0.3) || !mj_scene(&mfl, f[2], 0) || !phys_scene(&air, f[0], PHYS_CONTACT_LCP, &mair, 0.3) ||
      !phys_scene(&airg, f[1], PHYS_CONTACT_LCP, &mair, 0.3) || !phys_scene(&lcp, f[2], PHYS_CONTACT_LCP, &mfl, 0) ||
      !phys_scene(&pen, f[2], PHYS_CONTACT_PENALTY, &mfl, 0) || !phys_scene(&lcpg, f[3], PHYS_CONTACT_LCP, &mfl, 0) ||
      !phys_scene(&peng, f[3], PHYS_CONTACT_PENALTY, &mfl, 0))
    return 1;
  printf("# SUPERball: nq %d nv %d nu %d; on the floor MuJoCo %d contacts, physid lcp %d, penalty %d\n", mfl.m->nq,
         mfl.m->nv, mfl.m->nu, mfl.d->ncon, lcp.ncon, pen.ncon);
  for (int k = 0; k < NTASK; k++) {
    if (only && strcmp(only, TASK[k])) continue;
    for (int s = 0; s < nsample; s++) {
      physScene* ps = k == AIR_STEP ? &air : k == AIR_JAC || k == AIR_VJP ? &airg : k == FL_LCP ? &lcp
                      : k == FL_PEN ? &pen : k == FL_JAC_LCP ? &lcpg : &peng;
      mjScene* ms = k == AIR_MJ ? &mair : &mfl;
      if (k == AIR_MJ || k == FL_MJ) mj_restore(ms);
      else phys_restore(ps);
      if (k == AIR_MJ || k == FL_MJ) measured_mj_step(ms);
      else if (k == AIR_STEP || k == FL_LCP || k == FL_PEN) measured_phys_step(ps);
      else if (k == AIR_VJP || k == FL_VJP_PEN) measured_phys_vjp(ps);
      else measured_phys_jacobian(ps);
    }
    printf("RAN\t%s\t%d calls\n", TASK[k], nsample);
  }
  return 0;
}
