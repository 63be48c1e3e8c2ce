// bench_table2.c - paper 001's Table II on this machine: all step Jacobians (A = dx+/dx, B = dx+/du, which
// hold Nimble's five: dq+/dq, dq+/dv, dv+/dq, dv+/dv, dv+/dtau) analytically (phys_step_jacobian) against
// central finite differences of the same engine (phys_step_jacobian_fd: 2 (2 nv + nu) steps), with one step
// and the one-step VJP (phys_step_vjp) for scale, on the paper's four scenes in contact, all with lcp:
//   atlas        Atlas v3 (dart-doc atlas_v3_no_head.urdf, floating) on ground.urdf, Nimble's set-up (gravity
//                -y, root turned -pi/2 about x, dt 1 ms), as bench_contact.c: 10 steps into the fall
//   half_cheetah the OpenAI half cheetah (dart-doc mjcf, dt 10 ms), settled 200 steps on the floor
//   catapult     models/catapult.xml (5 DoF, ball against the paddle and on the floor), 5 steps
//   jump_worm    models/jumpworm.xml (5 DoF, lying on its two feet), 5 steps
// plus MuJoCo's humanoid in the air (contacts and limits off in both engines), where the same tasks run
// beside MuJoCo 2.2.2's mjd_transitionFD (forward and centered) and mj_step. Beside the table, the task
// param_size: the lcp parameter Jacobian P = dx+/dtheta (phys_step_param_jacobian) with size:GEOM of every named
// geom (not a plane) in the saved state's contacts, whose columns take 2nv reverse passes at one linearization.
//
// usage: bench_table2 [--root DIR] [--samples N] [--rounds R] [--scene NAME] [--only TASK] [--contact MODEL]
//   MODEL: lcp (default, the table's), cone or ccp: the physid scenes' contact model (cone's and ccp's
//   Jacobian and VJP on the same scenes, docs/performance.md); DIR: the source tree (models/; default "." or $PHYS_SOURCE); tasks: step jacobian fd vjp mj_step
//   mj_fd_forward mj_fd_centered param_size. Prints per scene one INFO line (nv, nu, contacts, the status of the analytic
//   Jacobian, its largest difference from the central differences away from mode switches, the number of
//   input columns at a switch) and per task
//   RESULT<TAB>scene<TAB>task<TAB>median_us=..<TAB>min_us=..
// Each scene settles once; its state (time, qpos, qvel, ctrl, both contact lists: lcp's warm start) is
// restored before every sample, so every sample is the same step. Medians over samples; rounds interleave
// the tasks. Instructions: every task runs in a noinline measured_* function; run under
//   valgrind --tool=callgrind --toggle-collect='measured_*' bench_table2 --scene S --only T --samples N
// and divide the total by N (scripts/bench_grad.sh does, and writes bench/results/table2.md).
// Timing is information, never a pass/fail test.
#include <math.h>
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "grad.h"
#include "params.h"
#include "physid.h"
#include "spec.h"
#include "urdf.h"

#define FD_EPS 1e-6   // central-difference step (MuJoCo's customary value; bench_grad.c's)
#define ATLAS_DIR "/usr/share/doc/dart/data/sdf/atlas/"
#define CHEETAH "/usr/share/doc/dart/data/mjcf/openai/half_cheetah.xml.gz"
#define HUMANOID "/usr/share/mujoco/model/humanoid/humanoid.xml"

enum { SC_ATLAS = 0, SC_CHEETAH, SC_CATAPULT, SC_WORM, SC_HUMANOID, NSCENE };
static const char* g_scene[NSCENE] = {"atlas", "half_cheetah", "catapult", "jump_worm", "humanoid_air"};
static const int g_settle[NSCENE] = {10, 200, 5, 5, 0};
static int g_contact = PHYS_CONTACT_LCP;   // the physid scenes' contact model (--contact)

enum { T_STEP = 0, T_JAC, T_FD, T_VJP, T_PSIZE, T_MJ_STEP, T_MJ_FD_FWD, T_MJ_FD_CEN, NTASK };
static const char* g_task[NTASK] = {"step",    "jacobian",      "fd",           "vjp", "param_size",
                                    "mj_step", "mj_fd_forward", "mj_fd_centered"};

// one scene: physid (and MuJoCo for the humanoid), its saved state, outputs
typedef struct benchScene_ {
  physModel* pm;
  physData* pd;
  mjModel* mm;
  mjData* md;
  double time, *qpos, *qvel, *ctrl;
  int ncon, ncon_prev;
  physContact *con, *con_prev;
  double *A, *B, *A2, *B2, *ybar, *xbar, *ubar;
  physStatus jac_status;
  physParamTable tab;        // size:GEOM of the contacts' named geoms (param_size; ntheta 0: none)
  double* P;
} benchScene;

//---------------------------------------------------------------------------------------------------------
// measured calls (noinline: callgrind targets)

__attribute__((noinline)) void measured_step(const physModel* m, physData* d) { phys_step(m, d); }
__attribute__((noinline)) physStatus measured_jacobian(const physModel* m, physData* d, double* A, double* B) {
  return phys_step_jacobian(m, d, A, B);
}
__attribute__((noinline)) void measured_fd(const physModel* m, physData* d, double* A, double* B) {
  phys_step_jacobian_fd(m, d, FD_EPS, A, B);
}
__attribute__((noinline)) void measured_vjp(const physModel* m, physData* d, const double* y, double* xb, double* ub) {
  phys_step_vjp(m, d, y, xb, ub);
}
__attribute__((noinline)) physStatus measured_param_size(const physModel* m, physData* d, const physParamTable* t,
                                                          double* P) {
  return phys_step_param_jacobian(m, d, t, P);
}
__attribute__((noinline)) void measured_mj_step(const mjModel* m, mjData* d) { mj_step(m, d); }
__attribute__((noinline)) void measured_mj_fd_forward(const mjModel* m, mjData* d, double* A, double* B) {
  mjd_transitionFD(m, d, FD_EPS, 0, A, B, NULL, NULL);
}
__attribute__((noinline)) void measured_mj_fd_centered(const mjModel* m, mjData* d, double* A, double* B) {
  mjd_transitionFD(m, d, FD_EPS, 1, A, B, NULL, NULL);
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
// scenes

// Atlas on the ground through the spec API (both URDFs, the ground attached to the world), Nimble's gravity
// and dt; NULL on failure
static physModel* load_atlas(void) {
  physLog log;
  memset(&log, 0, sizeof log);
  physLoadOptions opt = {.urdf_floating = 1, .strict_mesh = 0};
  physSpec* atlas = phys_parse_urdf(ATLAS_DIR "atlas_v3_no_head.urdf", &opt, &log);
  physSpec* ground = phys_parse_urdf(ATLAS_DIR "ground.urdf", NULL, &log);
  physModel* m = NULL;
  if (atlas && ground && phys_spec_attach(atlas, ground, 0) == PHYS_OK) {
    atlas->opt.timestep = 0.001;
    atlas->opt.gravity[0] = atlas->opt.gravity[2] = 0;
    atlas->opt.gravity[1] = -9.81;
    m = phys_compile(atlas, &log);
  }
  if (!m) fprintf(stderr, "bench_table2: Atlas: %s\n", log.error);
  phys_spec_free(atlas);
  phys_spec_free(ground);
  return m;
}

// load scene sc's physid model (and MuJoCo's for the humanoid); 0 on failure
static int load_scene(benchScene* s, int sc, const char* root) {
  physLog log;
  memset(&log, 0, sizeof log);
  char file[1024];
  if (sc == SC_CATAPULT || sc == SC_WORM)
    snprintf(file, sizeof file, "%s/models/%s.xml", root, sc == SC_CATAPULT ? "catapult" : "jumpworm");
  else snprintf(file, sizeof file, "%s", sc == SC_CHEETAH ? CHEETAH : HUMANOID);
  s->pm = sc == SC_ATLAS ? load_atlas() : phys_load(file, NULL, &log);
  if (!s->pm) {
    if (sc != SC_ATLAS) fprintf(stderr, "bench_table2: %s: %s\n", file, log.error);
    return 0;
  }
  s->pm->opt.contact = g_contact;
  if (sc == SC_HUMANOID) {
    char err[1000] = "";
    s->mm = mj_loadXML(HUMANOID, NULL, err, sizeof err);
    if (!s->mm) {
      fprintf(stderr, "bench_table2: MuJoCo: %s\n", err);
      return 0;
    }
    s->pm->opt.disableflags |= PHYS_DSBL_CONTACT | PHYS_DSBL_LIMIT;
    s->mm->opt.disableflags |= mjDSBL_CONSTRAINT | mjDSBL_CONTACT | mjDSBL_LIMIT;
    s->md = mj_makeData(s->mm);
  }
  s->pd = phys_make_data(s->pm);
  return s->pd != NULL;
}

// s->tab: size:GEOM for every named geom other than a plane in the saved state's contacts that the table takes
// (their order), and P
static void size_table(benchScene* s) {
  const physModel* m = s->pm;
  const char* spec[16];
  char buf[16][128];
  int n = 0;
  physLog log;
  memset(&log, 0, sizeof log);
  for (int c = 0; c < s->ncon; c++)
    for (int k = 0; k < 2; k++) {
      int g = s->con[c].geom[k], dup = 0;
      const char* name = phys_id2name(m, "geom", g);
      if (m->geom_type[g] == PHYS_GEOM_PLANE || !name[0] || n == 16) continue;
      snprintf(buf[n], sizeof buf[n], "size:%s", name);
      for (int j = 0; j < n; j++) dup |= !strcmp(buf[j], buf[n]);
      spec[n] = buf[n];
      if (dup || phys_param_table_build(&s->tab, m, spec + n, 1, &log) != PHYS_OK) continue;   // (a kind it refuses)
      phys_param_table_free(&s->tab);
      n++;
    }
  memset(&s->tab, 0, sizeof s->tab);
  if (n > 0 && phys_param_table_build(&s->tab, m, spec, n, &log) != PHYS_OK) memset(&s->tab, 0, sizeof s->tab);
  s->P = malloc(sizeof(double) * (size_t)(2 * m->nv * s->tab.ntheta + 1));
}

// the scene's state: keyframe 0 or qpos0 (Atlas turned -pi/2 about x; the humanoid lifted 1 m with a smooth
// velocity pattern and controls, as bench_grad.c), then g_settle steps; saved with the contact lists
static void settle_scene(benchScene* s, int sc) {
  const physModel* m = s->pm;
  physData* d = s->pd;
  if (m->nkey) phys_reset_keyframe(m, d, 0);
  else phys_reset_data(m, d);
  if (sc == SC_ATLAS) {
    d->qpos[3] = cos(-M_PI / 4);
    d->qpos[4] = sin(-M_PI / 4);
    d->qpos[5] = d->qpos[6] = 0;
  }
  if (sc == SC_HUMANOID) {
    d->qpos[2] += 1;
    for (int i = 0; i < m->nv; i++) d->qvel[i] = 0.5 * sin(1.3 * i + 0.2);
    for (int a = 0; a < m->nu; a++) d->ctrl[a] = 0.3 * cos(0.7 * a);
  }
  for (int i = 0; i < g_settle[sc]; i++) phys_step(m, d);
  int nq = m->nq, nv = m->nv, nu = m->nu, nc = m->nconmax > 0 ? m->nconmax : 1, n2 = 2 * nv;
  s->qpos = malloc(sizeof(double) * (size_t)nq);
  s->qvel = malloc(sizeof(double) * (size_t)nv);
  s->ctrl = malloc(sizeof(double) * (size_t)(nu + 1));
  s->con = malloc(sizeof(physContact) * (size_t)nc);
  s->con_prev = malloc(sizeof(physContact) * (size_t)nc);
  s->time = d->time;
  s->ncon = d->ncon;
  s->ncon_prev = d->ncon_prev;
  memcpy(s->qpos, d->qpos, sizeof(double) * (size_t)nq);
  memcpy(s->qvel, d->qvel, sizeof(double) * (size_t)nv);
  memcpy(s->ctrl, d->ctrl, sizeof(double) * (size_t)nu);
  memcpy(s->con, d->contact, sizeof(physContact) * (size_t)d->ncon);
  memcpy(s->con_prev, d->contact_prev, sizeof(physContact) * (size_t)d->ncon_prev);
  s->A = malloc(sizeof(double) * (size_t)n2 * n2);
  s->A2 = malloc(sizeof(double) * (size_t)n2 * n2);
  s->B = malloc(sizeof(double) * (size_t)(n2 * nu + 1));
  s->B2 = malloc(sizeof(double) * (size_t)(n2 * nu + 1));
  s->ybar = malloc(sizeof(double) * (size_t)n2);
  s->xbar = malloc(sizeof(double) * (size_t)n2);
  s->ubar = malloc(sizeof(double) * (size_t)(nu + 1));
  for (int i = 0; i < n2; i++) s->ybar[i] = cos(0.37 * i);
  size_table(s);
}

// restore the saved state (both engines)
static void restore(benchScene* s) {
  const physModel* m = s->pm;
  physData* d = s->pd;
  d->time = s->time;
  d->ncon = s->ncon;
  d->ncon_prev = s->ncon_prev;
  memcpy(d->qpos, s->qpos, sizeof(double) * (size_t)m->nq);
  memcpy(d->qvel, s->qvel, sizeof(double) * (size_t)m->nv);
  memcpy(d->ctrl, s->ctrl, sizeof(double) * (size_t)m->nu);
  memcpy(d->contact, s->con, sizeof(physContact) * (size_t)s->ncon);
  memcpy(d->contact_prev, s->con_prev, sizeof(physContact) * (size_t)s->ncon_prev);
  if (s->md) {
    s->md->time = s->time;
    mju_copy(s->md->qpos, s->qpos, m->nq);
    mju_copy(s->md->qvel, s->qvel, m->nv);
    mju_copy(s->md->ctrl, s->ctrl, m->nu);
  }
}

// contacts of the saved state's step, the analytic Jacobians' status and their largest entrywise difference
// from the central differences, relative to max(|entry|, 1e-3 max |entry|), over the input columns where the
// central differences at eps and 2 eps agree to 1e-4 (the others straddle a contact's mode switch and are
// counted instead); information only
static void info_line(benchScene* s, int sc) {
  int n2 = 2 * s->pm->nv, nu = s->pm->nu, nswitch = 0;
  restore(s);
  phys_step(s->pm, s->pd);
  int ncon = s->pd->ncon;
  restore(s);
  s->jac_status = phys_step_jacobian(s->pm, s->pd, s->A, s->B);
  double* F = malloc(sizeof(double) * (size_t)n2 * (n2 + nu));    // [A B] at eps, then at 2 eps
  double* F2 = malloc(sizeof(double) * (size_t)n2 * (n2 + nu));
  restore(s);
  phys_step_jacobian_fd(s->pm, s->pd, FD_EPS, s->A2, s->B2);
  for (int i = 0; i < n2; i++) {
    memcpy(F + (size_t)i * (n2 + nu), s->A2 + (size_t)i * n2, sizeof(double) * (size_t)n2);
    memcpy(F + (size_t)i * (n2 + nu) + n2, s->B2 + (size_t)i * nu, sizeof(double) * (size_t)nu);
  }
  restore(s);
  phys_step_jacobian_fd(s->pm, s->pd, 2 * FD_EPS, s->A2, s->B2);
  for (int i = 0; i < n2; i++) {
    memcpy(F2 + (size_t)i * (n2 + nu), s->A2 + (size_t)i * n2, sizeof(double) * (size_t)n2);
    memcpy(F2 + (size_t)i * (n2 + nu) + n2, s->B2 + (size_t)i * nu, sizeof(double) * (size_t)nu);
  }
  double big = 0, err = 0;
  for (int i = 0; i < n2 * (n2 + nu); i++) big = fmax(big, fabs(F[i]));
  for (int j = 0; j < n2 + nu; j++) {
    double sw = 0, e = 0;
    for (int i = 0; i < n2; i++) {
      size_t k = (size_t)i * (n2 + nu) + j;
      double x = j < n2 ? s->A[(size_t)i * n2 + j] : s->B[(size_t)i * nu + j - n2], sc_ = fmax(fabs(F[k]), 1e-3 * big);
      sw = fmax(sw, fabs(F[k] - F2[k]) / sc_);
      e = fmax(e, fabs(x - F[k]) / sc_);
    }
    if (sw > 1e-4) nswitch++;
    else err = fmax(err, e);
  }
  free(F);
  free(F2);
  restore(s);
  physStatus pst = s->tab.ntheta > 0 ? phys_step_param_jacobian(s->pm, s->pd, &s->tab, s->P) : PHYS_ERR_ARG;
  printf("INFO\t%s\tnv=%d\tnu=%d\tncon=%d\tdt=%g\tjacobian=%s\tmaxrel_vs_fd=%.3g\tswitch_columns=%d/%d"
         "\tsize_geoms=%d\tsize_theta=%d\tparam_size=%s\n",
         g_scene[sc], s->pm->nv, nu, ncon, s->pm->opt.timestep, s->jac_status == PHYS_OK ? "ok" : "refused",
         s->jac_status == PHYS_OK ? err : NAN, nswitch, n2 + nu, s->tab.n, s->tab.ntheta,
         s->tab.ntheta == 0 ? "none" : (pst == PHYS_OK ? "ok" : "refused"));
}

// one sample of task t
static void run_task(benchScene* s, int t) {
  switch (t) {
    case T_STEP: measured_step(s->pm, s->pd); break;
    case T_JAC: measured_jacobian(s->pm, s->pd, s->A, s->B); break;
    case T_FD: measured_fd(s->pm, s->pd, s->A2, s->B2); break;
    case T_VJP: measured_vjp(s->pm, s->pd, s->ybar, s->xbar, s->ubar); break;
    case T_PSIZE: measured_param_size(s->pm, s->pd, &s->tab, s->P); break;
    case T_MJ_STEP: measured_mj_step(s->mm, s->md); break;
    case T_MJ_FD_FWD: measured_mj_fd_forward(s->mm, s->md, s->A2, s->B2); break;
    default: measured_mj_fd_centered(s->mm, s->md, s->A2, s->B2); break;
  }
}

// free a scene
static void free_scene(benchScene* s) {
  phys_free_data(s->pd);
  phys_free_model(s->pm);
  if (s->md) mj_deleteData(s->md);
  if (s->mm) mj_deleteModel(s->mm);
  free(s->qpos), free(s->qvel), free(s->ctrl), free(s->con), free(s->con_prev);
  free(s->A), free(s->A2), free(s->B), free(s->B2), free(s->ybar), free(s->xbar), free(s->ubar), free(s->P);
  phys_param_table_free(&s->tab);
}

//---------------------------------------------------------------------------------------------------------

// time the tasks of one scene: rounds x samples, medians
static void bench_scene(benchScene* s, int sc, int samples, int rounds, int only) {
  double* t_us[NTASK] = {0};
  int n[NTASK] = {0};
  for (int t = 0; t < NTASK; t++) t_us[t] = malloc(sizeof(double) * (size_t)(samples * rounds));
  for (int r = 0; r < rounds; r++)
    for (int t = 0; t < NTASK; t++) {
      if ((only >= 0 && t != only) || (t >= T_MJ_STEP && !s->mm) || (t == T_PSIZE && s->tab.ntheta == 0)) continue;
      for (int k = 0; k < samples; k++) {
        restore(s);
        double t0 = now_us();
        run_task(s, t);
        t_us[t][n[t]++] = now_us() - t0;
      }
    }
  for (int t = 0; t < NTASK; t++) {
    if (n[t]) {
      qsort(t_us[t], (size_t)n[t], sizeof(double), cmp_double);
      printf("RESULT\t%s\t%s\tmedian_us=%.3f\tmin_us=%.3f\tsamples=%d\n", g_scene[sc], g_task[t], t_us[t][n[t] / 2],
             t_us[t][0], n[t]);
    }
    free(t_us[t]);
  }
}

int main(int argc, char** argv) {
  int samples = 50, rounds = 3, only = -1, scene = -1;
  const char* root = getenv("PHYS_SOURCE") ? getenv("PHYS_SOURCE") : ".";
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--samples") && i + 1 < argc) samples = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) rounds = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--root") && i + 1 < argc) root = argv[++i];
    else if (!strcmp(argv[i], "--only") && i + 1 < argc) {
      const char* name = argv[++i];
      for (int t = 0; t < NTASK; t++)
        if (!strcmp(name, g_task[t])) only = t;
      if (only < 0) return fprintf(stderr, "bench_table2: unknown task %s\n", name), 2;
    } else if (!strcmp(argv[i], "--scene") && i + 1 < argc) {
      const char* name = argv[++i];
      for (int k = 0; k < NSCENE; k++)
        if (!strcmp(name, g_scene[k])) scene = k;
      if (scene < 0) return fprintf(stderr, "bench_table2: unknown scene %s\n", name), 2;
    } else if (!strcmp(argv[i], "--contact") && i + 1 < argc) {
      const char* name = argv[++i];
      if (!strcmp(name, "lcp")) g_contact = PHYS_CONTACT_LCP;
      else if (!strcmp(name, "cone")) g_contact = PHYS_CONTACT_CONE;
      else if (!strcmp(name, "ccp")) g_contact = PHYS_CONTACT_CCP;
      else return fprintf(stderr, "bench_table2: unknown contact model %s (lcp, cone, ccp)\n", name), 2;
    } else {
      fprintf(stderr, "usage: bench_table2 [--root DIR] [--samples N] [--rounds R] [--scene NAME] [--only TASK] "
                      "[--contact MODEL]\n");
      return 2;
    }
  }
  if (samples <= 0 || rounds <= 0) return 2;
  printf("# physid %s, MuJoCo %s; %d rounds x %d samples; central differences eps %g\n", PHYS_VERSION,
         mj_versionString(), rounds, samples, FD_EPS);
  int status = 0;
  for (int sc = 0; sc < NSCENE; sc++) {
    if (scene >= 0 && sc != scene) continue;
    benchScene s;
    memset(&s, 0, sizeof s);
    if (!load_scene(&s, sc, root)) {
      status = 1;
      free_scene(&s);
      continue;
    }
    settle_scene(&s, sc);
    if (only < 0) info_line(&s, sc);
    bench_scene(&s, sc, samples, rounds, only);
    free_scene(&s);
  }
  return status;
}
