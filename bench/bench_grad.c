// bench_grad.c - cost of the step Jacobians A = dx+/dx, B = dx+/du of MuJoCo's humanoid in the air (contacts
// and limits disabled): physid analytic (phys_step_jacobian) and its reverse mode (phys_step_vjp) against
// physid's central finite differences (phys_step_jacobian_fd) and MuJoCo 2.2.2's mjd_transitionFD (forward
// and centered), with one step of each engine for scale, in the same run. Issue 4's goal: the analytic A, B
// in at most 0.1x the instructions of MuJoCo's forward differences.
//
// usage: bench_grad [--samples N] [--rounds R] [--only TASK] [MODEL.xml]   (default: the humanoid)
//   tasks: phys_step phys_jacobian phys_vjp phys_fd mj_step mj_fd_forward mj_fd_centered
//          box_step box_jacobian box_vjp floor_step floor_jacobian floor_vjp
// Before each sample the state is restored; the median over samples is reported; rounds interleave the tasks.
// Instructions: every task runs in a noinline measured_* function, so one callgrind run counts them all:
//   valgrind --tool=callgrind --callgrind-out-file=cg.out bench_grad --samples 20 --rounds 1
//   callgrind_annotate --inclusive=yes cg.out | grep measured_    (divide by the samples)
// Constrained steps (physid only, lcp; step_contact_deriv.c): box_* the cube sliding on the plane
// (tests/data/contact/box_plane.xml, run from the source tree), floor_* the humanoid lying on the floor, each
// restored with its warm start before every sample.
// Timing is information, never a pass/fail test.
#include <math.h>
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "grad.h"
#include "physid.h"

#define FD_EPS 1e-6   // finite-difference step of both engines (MuJoCo's customary value)

enum { T_PHYS_STEP = 0, T_PHYS_JAC, T_PHYS_VJP, T_PHYS_FD, T_MJ_STEP, T_MJ_FD_FWD, T_MJ_FD_CEN,
       T_BOX_STEP, T_BOX_JAC, T_BOX_VJP, T_FLOOR_STEP, T_FLOOR_JAC, T_FLOOR_VJP, NTASK };
static const char* g_task[NTASK] = {"phys_step", "phys_jacobian", "phys_vjp", "phys_fd",
                                    "mj_step", "mj_fd_forward", "mj_fd_centered",
                                    "box_step", "box_jacobian", "box_vjp",
                                    "floor_step", "floor_jacobian", "floor_vjp"};

// a constrained step (lcp) of physid alone: the model, the state with its warm start, the outputs
typedef struct contactScene_ {
  physModel* m;
  physData* d;
  double *qpos, *qvel, *A, *B, *y, *xb, *ub;
  physContact* con;   // d->contact at the saved state (the step's warm start)
  int ncon;
} contactScene;

// both engines on one model, the saved state and the outputs
typedef struct benchGrad_ {
  physModel* pm;
  physData* pd;
  mjModel* mm;
  mjData* md;
  double *qpos, *qvel, *ctrl;   // the state every sample starts from
  double *A, *B, *xbar, *ubar, *ybar;
  double* sample[NTASK];
  int nsample[NTASK];
  contactScene box, floor;   // the cube sliding on the plane, the humanoid lying on the floor
} benchGrad;

//---------------------------------------------------------------------------------------------------------
// measured calls (noinline: callgrind targets)

__attribute__((noinline)) void measured_phys_step(const physModel* m, physData* d) { phys_step(m, d); }
__attribute__((noinline)) void measured_phys_jacobian(const physModel* m, physData* d, double* A, double* B) {
  phys_step_jacobian(m, d, A, B);
}
__attribute__((noinline)) void measured_phys_vjp(const physModel* m, physData* d, const double* y, double* xb,
                                                 double* ub) {
  phys_step_vjp(m, d, y, xb, ub);
}
__attribute__((noinline)) void measured_phys_fd(const physModel* m, physData* d, double* A, double* B) {
  phys_step_jacobian_fd(m, d, FD_EPS, A, B);
}
__attribute__((noinline)) void measured_mj_step(const mjModel* m, mjData* d) { mj_step(m, d); }
__attribute__((noinline)) void measured_mj_fd_forward(const mjModel* m, mjData* d, double* A, double* B) {
  mjd_transitionFD(m, d, FD_EPS, 0, A, B, NULL, NULL);
}
__attribute__((noinline)) void measured_mj_fd_centered(const mjModel* m, mjData* d, double* A, double* B) {
  mjd_transitionFD(m, d, FD_EPS, 1, A, B, NULL, NULL);
}

// the constrained step, its A, B (dispatched by phys_step_jacobian) and its VJP, one function per scene
__attribute__((noinline)) void measured_box_step(contactScene* c) { phys_step(c->m, c->d); }
__attribute__((noinline)) void measured_box_jacobian(contactScene* c) { phys_step_jacobian(c->m, c->d, c->A, c->B); }
__attribute__((noinline)) void measured_box_vjp(contactScene* c) { phys_step_vjp(c->m, c->d, c->y, c->xb, c->ub); }
__attribute__((noinline)) void measured_floor_step(contactScene* c) { phys_step(c->m, c->d); }
__attribute__((noinline)) void measured_floor_jacobian(contactScene* c) {
  phys_step_jacobian(c->m, c->d, c->A, c->B);
}
__attribute__((noinline)) void measured_floor_vjp(contactScene* c) {
  phys_step_vjp(c->m, c->d, c->y, c->xb, c->ub);
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
// set-up

// load both engines, contacts and limits off, and a fixed state: qpos0 lifted into the air, a smooth
// velocity pattern, controls within range; 0 on failure
static int setup(benchGrad* g, const char* file, int nsample) {
  physLog log;
  char err[1000] = "";
  memset(&log, 0, sizeof log);
  g->pm = phys_load(file, NULL, &log);
  g->mm = mj_loadXML(file, NULL, err, sizeof err);
  if (!g->pm || !g->mm) {
    fprintf(stderr, "bench_grad: cannot load %s: %s%s\n", file, log.error, err);
    return 0;
  }
  g->pm->opt.disableflags |= PHYS_DSBL_CONTACT | PHYS_DSBL_LIMIT;
  g->mm->opt.disableflags |= mjDSBL_CONSTRAINT | mjDSBL_CONTACT | mjDSBL_LIMIT;
  g->pd = phys_make_data(g->pm);
  g->md = mj_makeData(g->mm);
  int nq = g->pm->nq, nv = g->pm->nv, nu = g->pm->nu, n2 = 2 * nv;
  g->qpos = malloc(sizeof(double) * nq);
  g->qvel = malloc(sizeof(double) * nv);
  g->ctrl = malloc(sizeof(double) * (nu + 1));
  memcpy(g->qpos, g->pm->qpos0, sizeof(double) * nq);
  if (g->pm->njnt && g->pm->jnt_type[0] == PHYS_JNT_FREE) g->qpos[2] += 1;   // in the air
  for (int i = 0; i < nv; i++) g->qvel[i] = 0.5 * sin(1.3 * i + 0.2);
  for (int a = 0; a < nu; a++) g->ctrl[a] = 0.3 * cos(0.7 * a);
  g->A = malloc(sizeof(double) * n2 * n2);
  g->B = malloc(sizeof(double) * (n2 * nu + 1));
  g->xbar = malloc(sizeof(double) * n2);
  g->ubar = malloc(sizeof(double) * (nu + 1));
  g->ybar = malloc(sizeof(double) * n2);
  for (int i = 0; i < n2; i++) g->ybar[i] = cos(0.37 * i);
  for (int t = 0; t < NTASK; t++) g->sample[t] = malloc(sizeof(double) * nsample);
  return 1;
}

// a contact scene with lcp: the cube (tests/data/contact/box_plane.xml) 3e-5 deep sliding at (1, 0.3) m/s
// after one step, or the humanoid dropped on its back from 0.25 m one step after its first contact;
// 0 on failure
static int contact_setup(contactScene* c, const char* file, int humanoid) {
  physLog log;
  memset(&log, 0, sizeof log);
  c->m = phys_load(file, NULL, &log);
  if (!c->m) {
    fprintf(stderr, "bench_grad: cannot load %s: %s\n", file, log.error);
    return 0;
  }
  physModel* m = c->m;
  m->opt.contact = PHYS_CONTACT_LCP;
  c->d = phys_make_data(m);
  physData* d = c->d;
  int nq = m->nq, nv = m->nv, nu = m->nu, n2 = 2 * nv;
  phys_reset_data(m, d);
  if (humanoid) {
    double a = -M_PI / 4;   // quaternion of -pi/2 about y
    d->qpos[3] = cos(a), d->qpos[4] = 0, d->qpos[5] = sin(a), d->qpos[6] = 0;
    d->qpos[2] = 0.25;
    for (int i = 0; i < 400 && d->ncon == 0; i++) phys_step(m, d);
  } else {
    d->qpos[2] = 0.1 - 3e-5;
    d->qvel[0] = 1, d->qvel[1] = 0.3;
  }
  phys_step(m, d);
  c->qpos = malloc(sizeof(double) * nq);
  c->qvel = malloc(sizeof(double) * nv);
  c->con = malloc(sizeof(physContact) * (size_t)(m->nconmax + 1));
  memcpy(c->qpos, d->qpos, sizeof(double) * nq);
  memcpy(c->qvel, d->qvel, sizeof(double) * nv);
  memcpy(c->con, d->contact, sizeof(physContact) * (size_t)d->ncon);
  c->ncon = d->ncon;
  c->A = malloc(sizeof(double) * n2 * n2);
  c->B = malloc(sizeof(double) * (n2 * nu + 1));
  c->y = malloc(sizeof(double) * n2);
  c->xb = malloc(sizeof(double) * n2);
  c->ub = malloc(sizeof(double) * (nu + 1));
  for (int i = 0; i < n2; i++) c->y[i] = cos(0.37 * i);
  return 1;
}

// the saved state and warm start of a contact scene
static void contact_restore(contactScene* c) {
  physData* d = c->d;
  d->time = 0.1;
  memcpy(d->qpos, c->qpos, sizeof(double) * c->m->nq);
  memcpy(d->qvel, c->qvel, sizeof(double) * c->m->nv);
  memcpy(d->contact, c->con, sizeof(physContact) * (size_t)c->ncon);
  d->ncon = c->ncon;
  d->ncon_prev = 0;
}

// restore the saved state in both engines
static void restore(benchGrad* g) {
  int nq = g->pm->nq, nv = g->pm->nv, nu = g->pm->nu;
  g->pd->time = 0;
  memcpy(g->pd->qpos, g->qpos, sizeof(double) * nq);
  memcpy(g->pd->qvel, g->qvel, sizeof(double) * nv);
  memcpy(g->pd->ctrl, g->ctrl, sizeof(double) * nu);
  g->md->time = 0;
  mju_copy(g->md->qpos, g->qpos, nq);
  mju_copy(g->md->qvel, g->qvel, nv);
  mju_copy(g->md->ctrl, g->ctrl, nu);
}

// one sample of task t
static void run_task(benchGrad* g, int t) {
  switch (t) {
    case T_PHYS_STEP: measured_phys_step(g->pm, g->pd); break;
    case T_PHYS_JAC: measured_phys_jacobian(g->pm, g->pd, g->A, g->B); break;
    case T_PHYS_VJP: measured_phys_vjp(g->pm, g->pd, g->ybar, g->xbar, g->ubar); break;
    case T_PHYS_FD: measured_phys_fd(g->pm, g->pd, g->A, g->B); break;
    case T_MJ_STEP: measured_mj_step(g->mm, g->md); break;
    case T_MJ_FD_FWD: measured_mj_fd_forward(g->mm, g->md, g->A, g->B); break;
    case T_MJ_FD_CEN: measured_mj_fd_centered(g->mm, g->md, g->A, g->B); break;
    case T_BOX_STEP: measured_box_step(&g->box); break;
    case T_BOX_JAC: measured_box_jacobian(&g->box); break;
    case T_BOX_VJP: measured_box_vjp(&g->box); break;
    case T_FLOOR_STEP: measured_floor_step(&g->floor); break;
    case T_FLOOR_JAC: measured_floor_jacobian(&g->floor); break;
    default: measured_floor_vjp(&g->floor); break;
  }
}

// largest |physid analytic - MuJoCo centered FD| over A and B (a sanity check, printed only)
static double agreement(benchGrad* g) {
  int n2 = 2 * g->pm->nv, nu = g->pm->nu;
  double* Am = malloc(sizeof(double) * n2 * n2);
  double* Bm = malloc(sizeof(double) * (n2 * nu + 1));
  restore(g);
  phys_step_jacobian(g->pm, g->pd, g->A, g->B);
  mjd_transitionFD(g->mm, g->md, FD_EPS, 1, Am, Bm, NULL, NULL);
  double e = 0;
  for (int i = 0; i < n2 * n2; i++) e = fmax(e, fabs(Am[i] - g->A[i]));
  for (int i = 0; i < n2 * nu; i++) e = fmax(e, fabs(Bm[i] - g->B[i]));
  free(Am);
  free(Bm);
  return e;
}

//---------------------------------------------------------------------------------------------------------

int main(int argc, char** argv) {
  int samples = 200, rounds = 3, only = -1;
  const char* file = "/usr/share/mujoco/model/humanoid/humanoid.xml";
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--samples") == 0 && i + 1 < argc) samples = atoi(argv[++i]);
    else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) rounds = atoi(argv[++i]);
    else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
      const char* name = argv[++i];
      for (int t = 0; t < NTASK; t++)
        if (strcmp(name, g_task[t]) == 0) only = t;
      if (only < 0) {
        fprintf(stderr, "bench_grad: unknown task %s\n", name);
        return 2;
      }
    } else if (argv[i][0] != '-') file = argv[i];
    else {
      fprintf(stderr, "usage: bench_grad [--samples N] [--rounds R] [--only TASK] [MODEL.xml]\n");
      return 2;
    }
  }
  if (samples <= 0 || rounds <= 0) return 2;
  benchGrad g;
  memset(&g, 0, sizeof g);
  if (!setup(&g, file, samples * rounds)) return 1;
  if (!contact_setup(&g.box, "tests/data/contact/box_plane.xml", 0)) return 1;
  if (!contact_setup(&g.floor, "/usr/share/mujoco/model/humanoid/humanoid.xml", 1)) return 1;
  printf("# contact scenes (lcp): cube on the plane %d contacts, humanoid on the floor %d contacts\n", g.box.ncon,
         g.floor.ncon);
  printf("# physid %s vs MuJoCo %s on %s: nv %d, nu %d, dt %g; %d rounds x %d samples\n", PHYS_VERSION,
         mj_versionString(), file, g.pm->nv, g.pm->nu, g.pm->opt.timestep, rounds, samples);
  if (only < 0) printf("# max |A, B physid analytic - MuJoCo centered FD (eps %g)|: %.3g\n", FD_EPS, agreement(&g));
  for (int r = 0; r < rounds; r++)
    for (int t = 0; t < NTASK; t++) {
      if (only >= 0 && t != only) continue;
      for (int s = 0; s < samples; s++) {
        restore(&g);
        contact_restore(&g.box);
        contact_restore(&g.floor);
        double t0 = now_us();
        run_task(&g, t);
        g.sample[t][g.nsample[t]++] = now_us() - t0;
      }
    }
  for (int t = 0; t < NTASK; t++) {
    if (!g.nsample[t]) continue;
    qsort(g.sample[t], (size_t)g.nsample[t], sizeof(double), cmp_double);
    printf("RESULT\t%s\tmedian_us=%.2f\tmin_us=%.2f\tsamples=%d\n", g_task[t], g.sample[t][g.nsample[t] / 2],
           g.sample[t][0], g.nsample[t]);
  }
  phys_free_data(g.pd);
  phys_free_model(g.pm);
  mj_deleteData(g.md);
  mj_deleteModel(g.mm);
  free(g.qpos), free(g.qvel), free(g.ctrl), free(g.A), free(g.B), free(g.xbar), free(g.ubar), free(g.ybar);
  for (int t = 0; t < NTASK; t++) free(g.sample[t]);
  return 0;
}
