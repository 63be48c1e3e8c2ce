// bench_pbd.c - agreement of the pbd integrator (issue 17 item 3) with the Euler engine and MuJoCo 2.2.2 as its
// substeps grow, and the cost of a step (scripts/bench_pbd.sh writes bench/results/pbd_agreement.md).
//
// usage: bench_pbd [--no-armature] [--no-limit] [--T SECONDS] [--dt DT] MODEL
//          the agreement rows: from the start state (the model's keyframe 0, else qpos0 + 0.3 on every hinge and
//          slide joint, at rest), contacts off, T seconds (default 0.5) at the model's timestep (or DT): the pbd
//          step at 1, 2, ..., 64 substeps, the Euler engine and MuJoCo 2.2.2 (mj_step, Euler) at the model's timestep;
//          each one's largest joint error at T against the Euler engine and against MuJoCo at dt 1e-5 (the
//          references, first order: their own error is dt_ref/dt of the Euler engine's at dt). Tab-separated
//          RESULT lines.
//        bench_pbd --cost ENGINE [--no-armature] [--no-limit] [--dt DT] MODEL STEPS
//          STEPS steps of one engine through measured_step (callgrind --toggle-collect='measured_*' counts them):
//          pbd:N (N substeps), euler, mujoco; the derivatives (issue 17 item 6; measured_deriv, the state advanced by
//          an unmeasured step after each): pbdjac:N, eulerjac (phys_step_jacobian: A and B), pbdvjp:N, eulervjp
//          (phys_step_vjp of one cotangent), mujocofd (mjd_transitionFD, centred, eps 1e-6: A and B)
// --no-armature zeroes dof_armature in both engines (the pbd step's armature is approximate on a moving parent);
// --no-limit turns joint limits off in both.
// Timing and instruction counts are information, never pass/fail.
#include <math.h>
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grad.h"
#include "physid.h"

#define DT_REF 1e-5

// the command line
typedef struct pbdBenchArgs_ {
  const char* model;
  const char* cost;         // NULL: the agreement rows
  long steps;               // --cost
  double T;
  double dt;                // --dt (0: the model's timestep)
  int no_armature;
  int no_limit;             // --no-limit: joint limits off in both engines
} pbdBenchArgs;

// the start state into q, v (nq, nv): keyframe 0, else qpos0 + 0.3 on hinge and slide joints, at rest
static void start_state(const physModel* m, double* q, double* v) {
  memcpy(q, m->nkey ? m->key_qpos : m->qpos0, sizeof(double) * (size_t)m->nq);
  memset(v, 0, sizeof(double) * (size_t)m->nv);
  if (m->nkey) {
    memcpy(v, m->key_qvel, sizeof(double) * (size_t)m->nv);
    return;
  }
  for (int j = 0; j < m->njnt; j++)
    if (m->jnt_type[j] == PHYS_JNT_HINGE || m->jnt_type[j] == PHYS_JNT_SLIDE) q[m->jnt_qposadr[j]] += 0.3;
}

__attribute__((noinline)) void measured_phys_step(const physModel* m, physData* d) { phys_step(m, d); }

__attribute__((noinline)) void measured_mj_step(const mjModel* m, mjData* d) { mj_step(m, d); }

// one derivative of the step at d's state: A and B (vjp 0) or the reverse mode of the cotangent y (vjp 1)
__attribute__((noinline)) void measured_deriv(const physModel* m, physData* d, int vjp, double* A, double* B,
                                              const double* y) {
  if (vjp) phys_step_vjp(m, d, y, A, B);
  else phys_step_jacobian(m, d, A, B);
}

__attribute__((noinline)) void measured_mjd(const mjModel* m, mjData* d, mjtNum* A, mjtNum* B) {
  mjd_transitionFD(m, d, 1e-6, 1, A, B, NULL, NULL);
}

// the derivatives along n steps from the start state: physid's (integrator, substeps; vjp as measured_deriv), or
// MuJoCo's transitionFD when mm is given; each derivative followed by a step
static void run_deriv(physModel* m, mjModel* mm, int integrator, int substeps, int vjp, long n) {
  int n2 = 2 * m->nv, nu = m->nu;
  double* A = malloc(sizeof(double) * (size_t)(n2 * n2 + n2 * nu + n2 + 1));
  double *B = A + n2 * n2, *y = B + n2 * nu;
  for (int i = 0; i < n2; i++) y[i] = 1.0 / (i + 1);
  if (mm) {
    mm->opt.disableflags |= mjDSBL_CONTACT;
    mjData* md = mj_makeData(mm);
    start_state(m, md->qpos, md->qvel);
    for (long i = 0; i < n; i++) measured_mjd(mm, md, A, B), mj_step(mm, md);
    mj_deleteData(md);
    free(A);
    return;
  }
  m->opt.integrator = integrator;
  m->opt.pbd_substeps = substeps;
  physData* d = phys_make_data(m);
  start_state(m, d->qpos, d->qvel);
  for (long i = 0; i < n; i++) measured_deriv(m, d, vjp, A, B, y), phys_step(m, d);
  if (d->nwarning) fprintf(stderr, "bench_pbd: %d warnings (%s)\n", d->nwarning, d->lastwarning);
  phys_free_data(d);
  free(A);
}

// physid from the start state for n steps of dt under integrator (pbd: substeps); the end qpos into q
static void run_physid(physModel* m, int integrator, int substeps, double dt, long n, double* q) {
  m->opt.integrator = integrator;
  m->opt.pbd_substeps = substeps;
  m->opt.timestep = dt;
  physData* d = phys_make_data(m);
  start_state(m, d->qpos, d->qvel);
  for (long i = 0; i < n; i++) measured_phys_step(m, d);
  if (d->nwarning) fprintf(stderr, "bench_pbd: %d step warnings (%s)\n", d->nwarning, d->lastwarning);
  if (q) memcpy(q, d->qpos, sizeof(double) * (size_t)m->nq);
  phys_free_data(d);
}

// MuJoCo 2.2.2 from the same start state (contacts off) for n steps of dt; the end qpos into q
static void run_mujoco(mjModel* mm, const physModel* m, double dt, long n, double* q) {
  mm->opt.timestep = dt;
  mm->opt.disableflags |= mjDSBL_CONTACT;
  mjData* md = mj_makeData(mm);
  start_state(m, md->qpos, md->qvel);
  for (long i = 0; i < n; i++) measured_mj_step(mm, md);
  if (q) memcpy(q, md->qpos, sizeof(double) * (size_t)m->nq);
  mj_deleteData(md);
}

// largest |a - b| over the hinge and slide coordinates
static double joint_error(const physModel* m, const double* a, const double* b) {
  double e = 0;
  for (int j = 0; j < m->njnt; j++) {
    int k = m->jnt_qposadr[j];
    if (m->jnt_type[j] == PHYS_JNT_HINGE || m->jnt_type[j] == PHYS_JNT_SLIDE) e = fmax(e, fabs(a[k] - b[k]));
  }
  return e;
}

// the agreement rows of one model
static void agreement(physModel* m, mjModel* mm, const pbdBenchArgs* a) {
  double dt = m->opt.timestep, *qe = malloc(sizeof(double) * 4 * (size_t)m->nq);
  double *qm = qe + m->nq, *q = qm + m->nq, *qx = q + m->nq;
  long n = lround(a->T / dt);
  run_physid(m, PHYS_INT_EULER, 1, DT_REF, lround(a->T / DT_REF), qe);
  if (mm) run_mujoco(mm, m, DT_REF, lround(a->T / DT_REF), qm);
  printf("REFERENCE\tmodel=%s\tdt=%g\tT=%g\tnv=%d\tref_gap=%.3e\n", a->model, dt, a->T, m->nv,
         mm ? joint_error(m, qe, qm) : NAN);
  for (int sub = 1; sub <= 64; sub *= 2) {
    run_physid(m, PHYS_INT_PBD, sub, dt, n, q);
    printf("RESULT\tengine=pbd\tsubsteps=%d\terr_euler=%.3e\terr_mujoco=%.3e\n", sub, joint_error(m, q, qe),
           mm ? joint_error(m, q, qm) : NAN);
  }
  run_physid(m, PHYS_INT_EULER, 1, dt, n, q);
  if (mm) run_mujoco(mm, m, dt, n, qx);
  printf("RESULT\tengine=euler\tsubsteps=1\terr_euler=%.3e\terr_mujoco=%.3e\n", joint_error(m, q, qe),
         mm ? joint_error(m, q, qm) : NAN);
  if (mm)
    printf("RESULT\tengine=mujoco\tsubsteps=1\terr_euler=%.3e\terr_mujoco=%.3e\n", joint_error(m, qx, qe),
           joint_error(m, qx, qm));
  free(qe);
}

// --cost: STEPS steps of one engine
static int cost(physModel* m, mjModel* mm, const pbdBenchArgs* a) {
  double dt = m->opt.timestep;
  if (strncmp(a->cost, "pbd:", 4) == 0) run_physid(m, PHYS_INT_PBD, atoi(a->cost + 4), dt, a->steps, NULL);
  else if (strcmp(a->cost, "euler") == 0) run_physid(m, PHYS_INT_EULER, 1, dt, a->steps, NULL);
  else if (strcmp(a->cost, "mujoco") == 0 && mm) run_mujoco(mm, m, dt, a->steps, NULL);
  else if (strncmp(a->cost, "pbdjac:", 7) == 0) run_deriv(m, NULL, PHYS_INT_PBD, atoi(a->cost + 7), 0, a->steps);
  else if (strncmp(a->cost, "pbdvjp:", 7) == 0) run_deriv(m, NULL, PHYS_INT_PBD, atoi(a->cost + 7), 1, a->steps);
  else if (strcmp(a->cost, "eulerjac") == 0) run_deriv(m, NULL, PHYS_INT_EULER, 1, 0, a->steps);
  else if (strcmp(a->cost, "eulervjp") == 0) run_deriv(m, NULL, PHYS_INT_EULER, 1, 1, a->steps);
  else if (strcmp(a->cost, "mujocofd") == 0 && mm) run_deriv(m, mm, 0, 0, 0, a->steps);
  else return 2;
  return 0;
}

int main(int argc, char** argv) {
  pbdBenchArgs a = {NULL, NULL, 0, 0.5, 0, 0, 0};
  int k = 1;
  for (; k < argc && strncmp(argv[k], "--", 2) == 0; k++) {
    if (strcmp(argv[k], "--no-armature") == 0) a.no_armature = 1;
    else if (strcmp(argv[k], "--no-limit") == 0) a.no_limit = 1;
    else if (strcmp(argv[k], "--T") == 0 && k + 1 < argc) a.T = atof(argv[++k]);
    else if (strcmp(argv[k], "--dt") == 0 && k + 1 < argc) a.dt = atof(argv[++k]);
    else if (strcmp(argv[k], "--cost") == 0 && k + 1 < argc) a.cost = argv[++k];
    else break;
  }
  if (k >= argc || (a.cost && k + 1 >= argc)) {
    fprintf(stderr, "usage: bench_pbd [--no-armature] [--no-limit] [--T SECONDS] [--dt DT] MODEL\n"
                    "       bench_pbd --cost pbd:N|euler|mujoco|pbdjac:N|eulerjac|pbdvjp:N|eulervjp|mujocofd "
                    "[--no-armature] [--no-limit] [--dt DT] MODEL STEPS\n");
    return 2;
  }
  a.model = argv[k];
  if (a.cost) a.steps = atol(argv[k + 1]);
  physLog log;
  memset(&log, 0, sizeof log);
  log.quiet = 1;
  physModel* m = phys_load(a.model, NULL, &log);
  if (!m) {
    fprintf(stderr, "bench_pbd: %s\n", log.error);
    return 1;
  }
  m->opt.disableflags |= PHYS_DSBL_CONTACT;
  if (a.dt > 0) m->opt.timestep = a.dt;
  if (a.no_limit) m->opt.disableflags |= PHYS_DSBL_LIMIT;
  char err[1000] = "";
  mjModel* mm = mj_loadXML(a.model, NULL, err, sizeof err);
  if (!mm) fprintf(stderr, "bench_pbd: MuJoCo 2.2.2 does not load %s: %s\n", a.model, err);
  if (mm && (mm->nq != m->nq || mm->nv != m->nv)) {
    fprintf(stderr, "bench_pbd: MuJoCo's %s has nq %d, nv %d (physid: %d, %d): not compared\n", a.model, mm->nq,
            mm->nv, m->nq, m->nv);
    mj_deleteModel(mm);
    mm = NULL;
  }
  if (a.no_armature) {
    for (int i = 0; i < m->nv; i++) m->dof_armature[i] = 0;
    for (int i = 0; mm && i < mm->nv; i++) mm->dof_armature[i] = 0;
  }
  if (a.no_limit && mm) mm->opt.disableflags |= mjDSBL_LIMIT;
  int code = 0;
  if (a.cost) code = cost(m, mm, &a);
  else agreement(m, mm, &a);
  if (mm) mj_deleteModel(mm);
  phys_free_model(m);
  return code;
}
