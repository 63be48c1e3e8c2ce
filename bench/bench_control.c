// bench_control.c - issue 13 item 5: one iteration of control-limited iLQR (src/control/ddp.c) on the exact
// step Jacobians, beside the same iLQR fed by MuJoCo 2.2.2's mjd_transitionFD (forward differences) and
// mj_step rollouts. Both engines run physid's own backward pass (phys_ddp_backward), control law
// (phys_ddp_policy) and cost (phys_control_stage_cost) on one physControlProblem each, so the only difference
// is where A, B and the rollouts come from. An iteration = linearize all T steps (the Jacobians along the
// trajectory and the steps that replay it) + the backward pass + the forward line search's rollouts.
//
// Scenes (both engines load the same file; the same initial state, timestep, horizon, cost, bounds):
//   half_cheetah  DART's copy of the OpenAI half cheetah (--cheetah FILE, uncompressed by the script), on the
//                 floor: physid's lcp contact against MuJoCo's soft contact (the model's own settings)
//   humanoid_air  MuJoCo's humanoid (/usr/share/mujoco/model/humanoid/humanoid.xml) lifted 1 m, contacts and
//                 limits off in both engines (as bench_table2.c)
//   atlas_air     Atlas v3 (dart-doc atlas_v3_no_head.urdf) with a free root and a motor on every joint
//                 (physid: urdf_floating, urdf_actuate; MuJoCo: its URDF import saved as MJCF, the free joint
//                 and the same motors added), contacts and limits off in both
//
// usage: bench_control --cheetah FILE [--scene NAME] [--horizon T] [--samples N]
// Prints per scene INFO lines (sizes, the line search's trials and costs per engine) and RESULT lines
// (median wall microseconds of each measured task). Instruction counts come from callgrind on the
// measured_* functions (scripts/bench_control.sh).
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <mujoco/mujoco.h>

#include "control.h"
#include "physid.h"

#define HUMANOID "/usr/share/mujoco/model/humanoid/humanoid.xml"
#define ATLAS_DIR "/usr/share/doc/dart/data/sdf/atlas/"
#define ATLAS_URDF ATLAS_DIR "atlas_v3_no_head.urdf"
#define FD_EPS 1e-6
#define NALPHA 11

enum { SC_CHEETAH = 0, SC_HUMANOID, SC_ATLAS, NSCENE };
static const char* g_scene[NSCENE] = {"half_cheetah", "humanoid_air", "atlas_air"};

// one scene in both engines, each with its own problem (engine 0 physid, 1 MuJoCo)
typedef struct ctlScene_ {
  physModel* pm;
  physData* pd;
  mjModel* mm;
  mjData* md;
  physControlProblem* p[2];
  double* x0;               // qpos, qvel of the initial state
  double *A, *B;            // MuJoCo's (2nv x 2nv), (2nv x nu)
  double *Xn, *Un;          // MuJoCo's trial rollout
  double mu[2];             // the backward pass's regularization that succeeded
  double alpha[2];          // the accepted step
  int trials[2];            // forward rollouts until accepted (NALPHA + 1: none accepted)
} ctlScene;

// the measured calls: callgrind counts inside measured_* (the volatile result keeps each a real call, not a
// tail jump)
static volatile double g_sink;

//---------------------------------------------------------------------------------------------------------
// MuJoCo's side: state, linearization, rollout

// MuJoCo's data at the initial state x0
static void mj_load_initial(const ctlScene* s) {
  mj_resetData(s->mm, s->md);
  memcpy(s->md->qpos, s->x0, sizeof(double) * (size_t)s->mm->nq);
  memcpy(s->md->qvel, s->x0 + s->mm->nq, sizeof(double) * (size_t)s->mm->nv);
}

// the state (qpos, qvel) of MuJoCo's data into row
static void mj_save_row(const ctlScene* s, double* row) {
  memcpy(row, s->md->qpos, sizeof(double) * (size_t)s->mm->nq);
  memcpy(row + s->mm->nq, s->md->qvel, sizeof(double) * (size_t)s->mm->nv);
}

// the rollout of p->U by mj_step into p->X and its cost (no measurement: it sets up the iteration)
static double mj_rollout(ctlScene* s) {
  physControlProblem* p = s->p[1];
  int nu = p->nu, ns = s->mm->nq + s->mm->nv;
  mj_load_initial(s);
  mj_save_row(s, p->X);
  double J = 0;
  for (int t = 0; t < p->T; t++) {
    J += phys_control_stage_cost(p, t, p->X + (size_t)t * ns, p->X + (size_t)t * ns + s->mm->nq, p->U);
    memcpy(s->md->ctrl, p->U + (size_t)t * nu, sizeof(double) * (size_t)nu);
    mj_step(s->mm, s->md);
    mj_save_row(s, p->X + (size_t)(t + 1) * ns);
  }
  return J + phys_control_stage_cost(p, p->T, p->X + (size_t)p->T * ns, p->X + (size_t)p->T * ns + s->mm->nq, p->U);
}

// every step's A, B by mjd_transitionFD (forward differences) along (X, U), replayed by mj_step from x0
__attribute__((noinline)) void measured_mj_linearize(ctlScene* s) {
  physControlProblem* p = s->p[1];
  int nu = p->nu;
  mj_load_initial(s);
  for (int t = 0; t < p->T; t++) {
    memcpy(s->md->ctrl, p->U + (size_t)t * nu, sizeof(double) * (size_t)nu);
    mjd_transitionFD(s->mm, s->md, FD_EPS, 0, s->A, s->B, NULL, NULL);
    phys_ddp_set_jacobian(p, t, s->A, s->B);
    mj_step(s->mm, s->md);
  }
}

// the line search's rollout at alpha by mj_step with physid's control law and cost; +inf if not finite
__attribute__((noinline)) double measured_mj_forward(ctlScene* s, double alpha) {
  physControlProblem* p = s->p[1];
  int nq = s->mm->nq, nu = p->nu, ns = nq + s->mm->nv;
  mj_load_initial(s);
  mj_save_row(s, s->Xn);
  double J = 0;
  for (int t = 0; t < p->T; t++) {
    const double* x = s->Xn + (size_t)t * ns;
    double* un = s->Un + (size_t)t * nu;
    phys_ddp_policy(p, t, alpha, x, s->Un, un);
    J += phys_control_stage_cost(p, t, x, x + nq, s->Un);
    memcpy(s->md->ctrl, un, sizeof(double) * (size_t)nu);
    mj_step(s->mm, s->md);
    mj_save_row(s, s->Xn + (size_t)(t + 1) * ns);
    for (int i = 0; i < ns; i++)
      if (!isfinite(s->Xn[(size_t)(t + 1) * ns + i])) return INFINITY;
  }
  const double* x = s->Xn + (size_t)p->T * ns;
  J += phys_control_stage_cost(p, p->T, x, x + nq, s->Un);
  g_sink = J;
  return isfinite(J) ? J : INFINITY;
}

//---------------------------------------------------------------------------------------------------------
// physid's side and the shared backward pass

__attribute__((noinline)) void measured_phys_linearize(ctlScene* s) {
  physLog log = {0};
  if (phys_ddp_linearize(s->p[0], s->pd, &log) != PHYS_OK) fprintf(stderr, "bench_control: %s\n", log.error);
}

__attribute__((noinline)) double measured_phys_forward(ctlScene* s, double alpha) {
  double J = phys_ddp_forward(s->p[0], s->pd, alpha, NULL, NULL);
  g_sink = J;
  return J;
}

// engine e's backward pass at its mu (the same code for both engines, measured apart)
static int backward(ctlScene* s, int e) {
  double dV[2], ff;
  return phys_ddp_backward(s->p[e], s->mu[e], dV, &ff);
}
__attribute__((noinline)) int measured_phys_backward(ctlScene* s) {
  int ok = backward(s, 0);
  g_sink = ok;
  return ok;
}
__attribute__((noinline)) int measured_mj_backward(ctlScene* s) {
  int ok = backward(s, 1);
  g_sink = ok;
  return ok;
}

// the smallest mu of the solver's sequence (0, 1e-6, then x4) at which engine e's backward pass succeeds,
// kept in s->mu[e]; its expected decrease terms in dV
static void find_mu(ctlScene* s, int e, double dV[2]) {
  double ff;
  for (double mu = 0; mu < 1e10; mu = mu == 0 ? 1e-6 : 4 * mu) {
    s->mu[e] = mu;
    if (phys_ddp_backward(s->p[e], mu, dV, &ff)) return;
  }
}

// engine e's rollout at alpha
static double forward(ctlScene* s, int e, double alpha) {
  return e == 0 ? measured_phys_forward(s, alpha) : measured_mj_forward(s, alpha);
}

// engine e's line search as phys_ddp_solve's: alpha = 10^(-0.3 i) until the cost falls by 1e-4 of the
// expected decrease; s->trials[e], s->alpha[e]; returns the accepted cost (the old one if none)
static double line_search(ctlScene* s, int e, const double dV[2], double J0) {
  for (int i = 0; i < NALPHA; i++) {
    double a = pow(10.0, -0.3 * i), expected = -(a * dV[0] + a * a * dV[1]);
    double Jn = forward(s, e, a);
    double z = expected > 0 ? (J0 - Jn) / expected : (Jn < J0 ? 1 : -1);
    if (Jn < J0 && z > 1e-4) {
      s->trials[e] = i + 1, s->alpha[e] = a;
      return Jn;
    }
  }
  s->trials[e] = NALPHA + 1, s->alpha[e] = 1;
  return J0;
}

//---------------------------------------------------------------------------------------------------------
// loading

// Atlas in MuJoCo: the URDF import saved as MJCF, with the mesh folder, the root link (the world body's
// content there) wrapped in a free body with physid's root inertia, and one motor per physid actuator (same
// joint, ctrlrange) spliced in; NULL on failure
static mjModel* mj_atlas(const physModel* pm, char* err, int nerr) {
  mjModel* u = mj_loadXML(ATLAS_URDF, NULL, err, nerr);
  if (!u) return NULL;
  char path[] = "/tmp/bench_control_XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) return mj_deleteModel(u), NULL;
  close(fd);
  mj_saveLastXML(path, u, err, nerr);
  mj_deleteModel(u);
  FILE* f = fopen(path, "rb");
  size_t cap = 1 << 22, n = 0;
  char* in = malloc(cap);
  char* out = malloc(2 * cap);
  if (f) n = fread(in, 1, cap - 1, f), fclose(f);
  in[n] = 0;
  char* c = strstr(in, "<compiler ");
  char* w = c ? strstr(c, "<worldbody>") : NULL;
  char* we = w ? strstr(w, "</worldbody>") : NULL;
  char* end = we ? strstr(we, "</mujoco>") : NULL;
  mjModel* m = NULL;
  if (end) {   // the root link is the world body's content: wrap it in a free body with physid's inertia
    const double *ip = pm->body_ipos + 3, *iq = pm->body_iquat + 4, *in3 = pm->body_inertia + 3;
    size_t o = 0;
    o += (size_t)sprintf(out + o, "%.*s<compiler meshdir=\"%s\" ", (int)(c - in), in, ATLAS_DIR);
    c += strlen("<compiler ");
    w += strlen("<worldbody>");
    o += (size_t)sprintf(out + o, "%.*s<body name=\"%s\"><freejoint/>", (int)(w - c), c, phys_id2name(pm, "body", 1));
    o += (size_t)sprintf(out + o, "<inertial pos=\"%.17g %.17g %.17g\" quat=\"%.17g %.17g %.17g %.17g\" mass=\"%.17g\" "
                         "diaginertia=\"%.17g %.17g %.17g\"/>", ip[0], ip[1], ip[2], iq[0], iq[1], iq[2], iq[3],
                         pm->body_mass[1], in3[0], in3[1], in3[2]);
    o += (size_t)sprintf(out + o, "%.*s</body>%.*s<actuator>\n", (int)(we - w), w, (int)(end - we), we);
    for (int j = 0; j < pm->nu; j++) {
      const char* jn = phys_id2name(pm, "joint", pm->actuator_trnid[j]);
      if (pm->actuator_ctrllimited[j])
        o += (size_t)sprintf(out + o, "<motor joint=\"%s\" ctrllimited=\"true\" ctrlrange=\"%.17g %.17g\"/>\n", jn,
                             pm->actuator_ctrlrange[2 * j], pm->actuator_ctrlrange[2 * j + 1]);
      else
        o += (size_t)sprintf(out + o, "<motor joint=\"%s\"/>\n", jn);
    }
    sprintf(out + o, "</actuator>\n%s", end);
    f = fopen(path, "wb");
    if (f) fputs(out, f), fclose(f);
    m = mj_loadXML(path, NULL, err, nerr);
  } else {
    snprintf(err, (size_t)nerr, "unexpected MJCF saved from the URDF");
  }
  remove(path);
  free(in);
  free(out);
  return m;
}

// load scene sc in both engines at the same timestep; 0 on failure
static int load_scene(ctlScene* s, int sc, const char* cheetah) {
  physLog log = {0};
  char err[1000] = "";
  if (sc == SC_ATLAS) {
    physLoadOptions opt = {0};
    opt.urdf_floating = 1, opt.urdf_actuate = 1;
    s->pm = phys_load(ATLAS_URDF, &opt, &log);
    if (s->pm) s->mm = mj_atlas(s->pm, err, sizeof err);
  } else {
    const char* file = sc == SC_CHEETAH ? cheetah : HUMANOID;
    s->pm = phys_load(file, NULL, &log);
    s->mm = mj_loadXML(file, NULL, err, sizeof err);
  }
  if (!s->pm || !s->mm) {
    fprintf(stderr, "bench_control: %s: %s%s\n", g_scene[sc], log.error, err);
    return 0;
  }
  if (s->pm->nq != s->mm->nq || s->pm->nv != s->mm->nv || s->pm->nu != s->mm->nu || s->mm->na != 0) {
    fprintf(stderr, "bench_control: %s: sizes differ (physid nq %d nv %d nu %d, MuJoCo nq %d nv %d nu %d na %d)\n",
            g_scene[sc], s->pm->nq, s->pm->nv, s->pm->nu, s->mm->nq, s->mm->nv, s->mm->nu, s->mm->na);
    return 0;
  }
  if (sc != SC_CHEETAH) {
    s->pm->opt.disableflags |= PHYS_DSBL_CONTACT | PHYS_DSBL_LIMIT;
    s->mm->opt.disableflags |= mjDSBL_CONSTRAINT | mjDSBL_CONTACT | mjDSBL_LIMIT;
  }
  s->mm->opt.timestep = s->pm->opt.timestep;
  s->pd = phys_make_data(s->pm);
  s->md = mj_makeData(s->mm);
  return s->pd && s->md;
}

// physid's data at the initial state: keyframe 0 or qpos0 at rest, the air scenes lifted 1 m, the cheetah
// settled 50 steps on the floor (its contact list kept as the warm start); time 0
static void phys_initial(ctlScene* s, int sc) {
  const physModel* m = s->pm;
  if (m->nkey) phys_reset_keyframe(m, s->pd, 0);
  else phys_reset_data(m, s->pd);
  if (sc != SC_CHEETAH) s->pd->qpos[2] += 1;
  for (int i = 0; sc == SC_CHEETAH && i < 50; i++) phys_step(m, s->pd);
  s->pd->time = 0;
}

// the initial state x0 (phys_initial) and the two problems: T steps, running cost 1/2 (|q (-) q0|^2 +
// 0.1 |v|^2 + 1e-3 |u|^2) dt, final 1/2 (10 |q (-) q0|^2 + |v|^2), the model's control bounds, controls 0
static int setup_problem(ctlScene* s, int sc, int T) {
  const physModel* m = s->pm;
  int nq = m->nq, nv = m->nv, nu = m->nu, ns = nq + nv;
  phys_initial(s, sc);
  s->x0 = malloc(sizeof(double) * (size_t)ns);
  memcpy(s->x0, s->pd->qpos, sizeof(double) * (size_t)nq);
  memcpy(s->x0 + nq, s->pd->qvel, sizeof(double) * (size_t)nv);
  s->A = malloc(sizeof(double) * 4 * (size_t)nv * nv);
  s->B = malloc(sizeof(double) * 2 * (size_t)nv * nu);
  s->Xn = malloc(sizeof(double) * (size_t)(T + 1) * ns);
  s->Un = malloc(sizeof(double) * (size_t)T * nu);
  for (int e = 0; e < 2; e++) {
    physControlProblem* p = s->p[e] = phys_control_make(m, T, 1);
    if (!p) return 0;
    for (int k = 0; k < 2; k++) {
      physStateCost* c = k ? &p->fin : &p->run;
      memcpy(c->qref, s->x0, sizeof(double) * (size_t)nq);
      for (int i = 0; i < nv; i++) c->wq[i] = k ? 10 : 1, c->wv[i] = k ? 1 : 0.1;
    }
    for (int j = 0; j < nu; j++) p->wu[j] = 1e-3;
  }
  return 1;
}

//---------------------------------------------------------------------------------------------------------
// measurement

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return 1e6 * (double)ts.tv_sec + 1e-3 * (double)ts.tv_nsec;
}

static int cmp_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

// median wall microseconds of n calls of task k (0 linearize, 1 backward, 2 forward at the accepted alpha)
// for engine e
static double median_us(ctlScene* s, int e, int k, int n) {
  double* t = malloc(sizeof(double) * (size_t)n);
  for (int i = 0; i < n; i++) {
    double t0 = now_us();
    if (k == 0) e == 0 ? measured_phys_linearize(s) : measured_mj_linearize(s);
    else if (k == 1) e == 0 ? measured_phys_backward(s) : measured_mj_backward(s);
    else forward(s, e, s->alpha[e]);
    t[i] = now_us() - t0;
  }
  qsort(t, (size_t)n, sizeof(double), cmp_double);
  double med = t[n / 2];
  free(t);
  return med;
}

// one iteration of each engine on scene sc: INFO and RESULT lines
static void run_scene(ctlScene* s, int sc, int samples) {
  static const char* eng[2] = {"physid", "mujoco"};
  static const char* task[3] = {"linearize", "backward", "forward"};
  const physModel* m = s->pm;
  for (int e = 0; e < 2; e++) {
    physControlProblem* p = s->p[e];
    double J0 = e == 0 ? phys_control_rollout(p, s->pd, p->U, p->X) : mj_rollout(s);
    if (e == 0) phys_initial(s, sc);   // the rollout left pd at x_T
    e == 0 ? measured_phys_linearize(s) : measured_mj_linearize(s);
    double dV[2];
    find_mu(s, e, dV);
    e == 0 ? measured_phys_backward(s) : measured_mj_backward(s);
    double Jn = line_search(s, e, dV, J0);
    printf("INFO\t%s\t%s\tnq=%d\tnv=%d\tnu=%d\tT=%d\tdt=%g\tncon0=%d\tcost0=%.6g\tcost1=%.6g\tmu=%g\talpha=%.3g\ttrials=%d\n",
           g_scene[sc], eng[e], m->nq, m->nv, m->nu, p->T, m->opt.timestep, e == 0 ? s->pd->ncon : s->md->ncon, J0,
           Jn, s->mu[e], s->alpha[e], s->trials[e]);
    for (int k = 0; k < 3; k++)
      printf("RESULT\t%s\t%s\t%s\tmedian_us=%.1f\n", g_scene[sc], eng[e], task[k], median_us(s, e, k, samples));
    fflush(stdout);
  }
}

int main(int argc, char** argv) {
  const char *cheetah = NULL, *only = NULL;
  int T = 50, samples = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--cheetah")) cheetah = argv[i + 1];
    else if (!strcmp(argv[i], "--scene")) only = argv[i + 1];
    else if (!strcmp(argv[i], "--horizon")) T = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--samples")) samples = atoi(argv[i + 1]);
  }
  if (T < 1 || samples < 1) {
    fprintf(stderr, "usage: bench_control --cheetah FILE [--scene NAME] [--horizon T] [--samples N]\n");
    return 2;
  }
  printf("# physid %s, MuJoCo %s; horizon %d; %d samples; mjd_transitionFD forward eps %g\n", PHYS_VERSION,
         mj_versionString(), T, samples, FD_EPS);
  for (int sc = 0; sc < NSCENE; sc++) {
    if ((only && strcmp(only, g_scene[sc])) || (sc == SC_CHEETAH && !cheetah)) continue;
    ctlScene s = {0};
    if (load_scene(&s, sc, cheetah) && setup_problem(&s, sc, T)) run_scene(&s, sc, samples);
    for (int e = 0; e < 2; e++) phys_control_free(s.p[e]);
    free(s.x0), free(s.A), free(s.B), free(s.Xn), free(s.Un);
    if (s.md) mj_deleteData(s.md);
    if (s.mm) mj_deleteModel(s.mm);
    phys_free_data(s.pd);
    phys_free_model(s.pm);
  }
  return 0;
}
