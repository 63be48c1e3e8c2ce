// test_oracle_step_equality.c - the step with equality constraints (src/step/step_equality.c) against MuJoCo
// 2.2.2, which solves them softly. tests/data/equality.xml (connect, weld with anchor and torquescale, joint
// quartic, weld to the world with relpose; contact-free) runs 1 s (1000 steps) from rest under gravity in every
// physid contact model and in MuJoCo (solref 0.002 1, solimp 0.9999).
// tests/data/fourbar.xml (a planar four-bar closed by a connect: one dof, not chaotic) and
// tests/data/equality_tendon.xml (fixed-tendon equalities, issue 15 item 2) likewise. Printed: each
// constraint's largest violation in both engines, the distance |qpos - MuJoCo| at 0.1 s and 1 s, and MuJoCo's
// own spread (dmax 0.999 vs 0.9999; solref 0.003 vs 0.002). Asserted (check_figures): physid's hard models are
// closer to MuJoCo than MuJoCo at solref 0.003 is to itself at 0.002, with violations below 1e-3.
#include <mujoco/mujoco.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dyn.h"
#include "equality.h"
#include "physid.h"
#include "test.h"

static const char* MODEL = PHYS_SOURCE_DIR "/tests/data/equality.xml";
static const char* FOURBAR = PHYS_SOURCE_DIR "/tests/data/fourbar.xml";
static const char* TENDON = PHYS_SOURCE_DIR "/tests/data/equality_tendon.xml";
static const char* file = NULL;   // the model run
#define T 1000

// the moving start: every dof's velocity set
static void start_state(int nq, int nv, const double* qpos0, double* qpos, double* qvel) {
  memcpy(qpos, qpos0, sizeof(double) * (size_t)nq);
  memset(qvel, 0, sizeof(double) * (size_t)nv);   // at rest: qpos0 satisfies every constraint
}

// largest |r| of each active constraint at d's state (kinematics run here) into viol (neq)
static void violations(const physModel* m, physData* d, double* viol) {
  double r[64], J[64 * 32];
  phys_kinematics(m, d);
  phys_com_pos(m, d);
  phys_equality_eval(m, d, r, J);
  int row = 0;
  for (int e = 0; e < m->neq; e++) {
    if (!m->eq_active[e]) continue;
    for (int a = 0; a < phys_equality_dim(m, e); a++, row++) viol[e] = fmax(viol[e], fabs(r[row]));
  }
}

// MuJoCo's violation: the same residuals at its state
static void mj_violations(const physModel* m, physData* d, const mjtNum* qpos, double* viol) {
  memcpy(d->qpos, qpos, sizeof(double) * (size_t)m->nq);
  violations(m, d, viol);
}

// MuJoCo's 1 s run at impedance dmax (solimp[0..1]) into traj (T+1 states' qpos); violations into viol
static void run_mujoco(const physModel* m, physData* pd, double dmax, double tc, double* traj, double* viol) {
  char err[512];
  mjModel* mm = mj_loadXML(file, NULL, err, sizeof(err));
  CHECK_MSG(mm != NULL, "mujoco: %s", err);
  if (!mm) return;
  for (int e = 0; e < mm->neq; e++) mm->eq_solimp[5 * e] = mm->eq_solimp[5 * e + 1] = dmax, mm->eq_solref[2 * e] = tc;
  mjData* md = mj_makeData(mm);
  start_state(mm->nq, mm->nv, mm->qpos0, md->qpos, md->qvel);
  for (int t = 0; t <= T; t++) {
    memcpy(traj + (size_t)t * mm->nq, md->qpos, sizeof(double) * (size_t)mm->nq);
    mj_violations(m, pd, md->qpos, viol);
    if (t < T) mj_step(mm, md);
  }
  mj_deleteData(md);
  mj_deleteModel(mm);
}

// physid's 1 s run in contact model cm into traj; violations into viol
static void run_physid(physModel* m, int cm, double* traj, double* viol) {
  m->opt.contact = cm;
  physData* d = phys_make_data(m);
  physData* v = phys_make_data(m);
  start_state(m->nq, m->nv, m->qpos0, d->qpos, d->qvel);
  for (int t = 0; t <= T; t++) {
    memcpy(traj + (size_t)t * m->nq, d->qpos, sizeof(double) * (size_t)m->nq);
    memcpy(v->qpos, d->qpos, sizeof(double) * (size_t)m->nq);
    violations(m, v, viol);
    if (t < T) phys_step(m, d);
  }
  int nwarn = 0;
  for (int k = 0; k < PHYS_NWARNKIND; k++) nwarn += d->warning_count[k];
  CHECK_MSG(nwarn == 0, "model %d: %d warnings", cm, nwarn);
  phys_free_data(v);
  phys_free_data(d);
}

// largest |qpos difference| over the first tend steps
static double traj_diff(const physModel* m, const double* a, const double* b, int tend) {
  double e = 0;
  for (int t = 0; t <= tend; t++)
    for (int i = 0; i < m->nq; i++) e = fmax(e, fabs(a[(size_t)t * m->nq + i] - b[(size_t)t * m->nq + i]));
  return e;
}

// the violation over time: largest |r| over the constraints at t = 0.1, 0.25, 0.5, 0.75, 1 s of a stored run
static void print_violation_series(const physModel* m, physData* pd, const double* traj, const char* who) {
  static const int AT[] = {100, 250, 500, 750, 1000};
  printf("    %s violation at t = 0.1, 0.25, 0.5, 0.75, 1 s:", who);
  for (int k = 0; k < 5; k++) {
    double v[16] = {0}, w = 0;
    mj_violations(m, pd, traj + (size_t)AT[k] * m->nq, v);
    for (int e = 0; e < m->neq; e++) w = fmax(w, v[e]);
    printf(" %.2e", w);
  }
  printf("\n");
}

// the figures of one model: physid's largest violation per contact model (over the constraints) and its
// distance to MuJoCo (dmax 0.9999, solref 0.002) at 0.1 s and 1 s; MuJoCo's own distances for softer settings
typedef struct runFigures_ {
  double viol[4], diff01[4], diff1[4];   // per physid contact model
  double mj_viol, mj_dmax01, mj_dmax1, mj_tc01, mj_tc1;   // MuJoCo vs MuJoCo at dmax 0.999 / solref 0.003
} runFigures;

static runFigures compare_model(const char* path) {
  runFigures f = {0};
  physLog log = {0};
  file = path;
  physModel* m = phys_load_mjcf(path, &log);
  CHECK_MSG(m != NULL, "load: %s", log.error);
  if (!m) return f;
  static double ref[(T + 1) * 64], soft[(T + 1) * 64], slow[(T + 1) * 64], ph[(T + 1) * 64];
  double vr[8] = {0}, vs[8] = {0}, vt[8] = {0};
  physData* pd = phys_make_data(m);
  run_mujoco(m, pd, 0.9999, 0.002, ref, vr);
  run_mujoco(m, pd, 0.999, 0.002, soft, vs);
  run_mujoco(m, pd, 0.9999, 0.003, slow, vt);
  for (int e = 0; e < m->neq; e++) f.mj_viol = fmax(f.mj_viol, vr[e]);
  f.mj_dmax01 = traj_diff(m, soft, ref, 100), f.mj_dmax1 = traj_diff(m, soft, ref, T);
  f.mj_tc01 = traj_diff(m, slow, ref, 100), f.mj_tc1 = traj_diff(m, slow, ref, T);
  printf("%s, 1 s at dt 1 ms from rest under gravity\n", path);
  printf("  MuJoCo 2.2.2 (solref 0.002 1, solimp 0.9999): violation per constraint");
  for (int e = 0; e < m->neq; e++) printf(" %.3g", vr[e]);
  printf("\n");
  print_violation_series(m, pd, ref, "MuJoCo        ");
  printf("  MuJoCo's own spread: dmax 0.999 vs 0.9999 |dqpos| %.3g (0.1 s) %.3g (1 s); solref 0.003 vs 0.002 %.3g "
         "(0.1 s) %.3g (1 s)\n", f.mj_dmax01, f.mj_dmax1, f.mj_tc01, f.mj_tc1);
  static const char* const NAMES[] = {"lcp", "cone", "ccp", "penalty"};
  for (int cm = 0; cm < 4; cm++) {
    double v[8] = {0};
    run_physid(m, cm, ph, v);
    for (int e = 0; e < m->neq; e++) f.viol[cm] = fmax(f.viol[cm], v[e]);
    f.diff01[cm] = traj_diff(m, ph, ref, 100), f.diff1[cm] = traj_diff(m, ph, ref, T);
    printf("  physid %-7s: violation per constraint", NAMES[cm]);
    for (int e = 0; e < m->neq; e++) printf(" %.3g", v[e]);
    printf("; |qpos - MuJoCo| %.3g (0.1 s) %.3g (1 s)\n", f.diff01[cm], f.diff1[cm]);
    print_violation_series(m, pd, ph, NAMES[cm]);
  }
  phys_free_data(pd);
  phys_free_model(m);
  return f;
}

// the assertions on one model's figures: lcp, cone and ccp are one path without contacts (bit-identical runs);
// their violation stays below 1e-3 and their distance to MuJoCo below MuJoCo's own change from solref 0.002 to
// 0.003 (at 0.1 s and 1 s): the disagreement is smaller than what MuJoCo's softness setting moves. Penalty's
// springs are soft in their own way: within twice that change at 1 s (penalty_distance), violation below 5e-3.
// equality_tendon.xml is not held to penalty's distance: there MuJoCo's solref change moves 2.7e-4 while
// penalty's softer spring on the one-row t3 constraint (violation 1.25e-3, MuJoCo's 1.8e-7) puts it 1.35e-3 away
// (lcp/cone/ccp 3.3e-5): penalty's softness, not the tendon rows (which equal MuJoCo's, test_oracle_equality).
static void check_figures(const runFigures* f, int penalty_distance) {
  for (int cm = 0; cm < 3; cm++) {
    CHECK(f->diff1[cm] == f->diff1[0] && f->viol[cm] == f->viol[0]);
    CHECK_MSG(f->viol[cm] < 1e-3, "violation %g", f->viol[cm]);
    CHECK_MSG(f->diff01[cm] < f->mj_tc01 && f->diff1[cm] < f->mj_tc1, "model %d: %g %g (MuJoCo's spread %g %g)", cm,
              f->diff01[cm], f->diff1[cm], f->mj_tc01, f->mj_tc1);
  }
  CHECK_MSG(f->viol[3] < 5e-3, "penalty violation %g", f->viol[3]);
  CHECK_MSG(!penalty_distance || f->diff1[3] < 2 * f->mj_tc1, "penalty: %g (MuJoCo's spread %g)", f->diff1[3], f->mj_tc1);
}

int main(void) {
  runFigures a = compare_model(MODEL), b = compare_model(FOURBAR), c = compare_model(TENDON);
  check_figures(&a, 1);
  check_figures(&b, 1);
  check_figures(&c, 0);
  return test_done();
}
