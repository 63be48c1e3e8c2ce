// bench_implicit.c - the implicit integrator (issue 16 item 4) against semi-implicit Euler and MuJoCo 2.2.2:
// instructions per step and the largest stable timestep on a stiff spring.
//
// usage: bench_implicit steps ENGINE MODEL.xml N    run N steps of MODEL (from rest with qvel = 0.1 on every dof,
//                                                   restored before each step) in one engine: physid-euler,
//                                                   physid-implicit, mujoco-euler, mujoco-implicit (MuJoCo's
//                                                   implicit-in-velocity integrator); count with callgrind
//                                                   --toggle-collect='measured_*' (scripts/bench_implicit.sh)
//        bench_implicit stable MODEL.xml                the largest stable timestep of each engine on MODEL (a
//                                                   one-dof spring: tests/data/springmass.xml with its stiffness
//                                                   and damping replaced, see the script), by bisection over dt in
//                                                   [1e-5, 1]: stable when 2000 steps from x - xs = 0.1 at rest
//                                                   keep |x - xs| <= 1 and finite (ten times the start; see
//                                                   stable() below)
// Nothing here passes or fails; the figures go to docs/performance.md through the script.
#include <math.h>
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "physid.h"

enum { ENG_EULER = 0, ENG_IMPLICIT, ENG_MJ_EULER, ENG_MJ_IMPLICIT, NENG };
static const char* g_name[NENG] = {"physid-euler", "physid-implicit", "mujoco-euler", "mujoco-implicit"};

__attribute__((noinline)) void measured_phys_step(const physModel* m, physData* d) { phys_step(m, d); }
__attribute__((noinline)) void measured_mj_step(const mjModel* m, mjData* d) { mj_step(m, d); }

// both engines' models of path (NULL on failure, a message printed)
typedef struct engines_ {
  physModel* pm;
  physData* pd;
  mjModel* mm;
  mjData* md;
} engines;

static int load(engines* e, const char* path) {
  char err[1024];
  physLog log;
  memset(&log, 0, sizeof log);
  e->pm = phys_load_mjcf(path, &log);
  e->mm = mj_loadXML(path, NULL, err, sizeof err);
  if (!e->pm || !e->mm) {
    fprintf(stderr, "bench_implicit: %s: %s %s\n", path, log.error, err);
    return 0;
  }
  e->pd = phys_make_data(e->pm);
  e->md = mj_makeData(e->mm);
  return 1;
}

// one step of engine k from (q, v) (nq, nv) at timestep dt; the new first coordinate and velocity into x, v1
static void step_from(engines* e, int k, const double* q, const double* v, double dt) {
  if (k <= ENG_IMPLICIT) {
    e->pm->opt.integrator = k == ENG_IMPLICIT ? PHYS_INT_IMPLICIT : PHYS_INT_EULER;
    e->pm->opt.timestep = dt;
    memcpy(e->pd->qpos, q, sizeof(double) * (size_t)e->pm->nq);
    memcpy(e->pd->qvel, v, sizeof(double) * (size_t)e->pm->nv);
    measured_phys_step(e->pm, e->pd);
  } else {
    e->mm->opt.integrator = k == ENG_MJ_IMPLICIT ? mjINT_IMPLICIT : mjINT_EULER;
    e->mm->opt.timestep = dt;
    memcpy(e->md->qpos, q, sizeof(double) * (size_t)e->mm->nq);
    memcpy(e->md->qvel, v, sizeof(double) * (size_t)e->mm->nv);
    measured_mj_step(e->mm, e->md);
  }
}

// 1 if 2000 steps of engine k at dt from x - xs = 0.1 at rest keep |x - xs| <= 1 (bounded: semi-implicit Euler
// overshoots the start by 1/sqrt(1 - (omega dt/2)^2) below its limit omega dt = 2, and grows without bound above)
static int stable(engines* e, int k, double dt) {
  double xs = e->pm->qpos_spring[0], q = xs + 0.1, v = 0;
  for (int s = 0; s < 2000; s++) {
    step_from(e, k, &q, &v, dt);
    q = k <= ENG_IMPLICIT ? e->pd->qpos[0] : e->md->qpos[0];
    v = k <= ENG_IMPLICIT ? e->pd->qvel[0] : e->md->qvel[0];
    if (!isfinite(q) || fabs(q - xs) > 1) return 0;
  }
  return 1;
}

int main(int argc, char** argv) {
  engines e;
  if (argc == 5 && !strcmp(argv[1], "steps")) {
    int k = -1, n = atoi(argv[4]);
    for (int i = 0; i < NENG; i++)
      if (!strcmp(argv[2], g_name[i])) k = i;
    if (k < 0 || n < 1 || !load(&e, argv[3])) return 2;
    int nq = e.pm->nq, nv = e.pm->nv;
    double* q = malloc(sizeof(double) * (size_t)nq);
    double* v = malloc(sizeof(double) * (size_t)nv);
    memcpy(q, e.pm->qpos0, sizeof(double) * (size_t)nq);
    for (int i = 0; i < nv; i++) v[i] = 0.1;
    for (int s = 0; s < n; s++) step_from(&e, k, q, v, e.pm->opt.timestep);
    printf("%s %s: %d steps\n", g_name[k], argv[3], n);
    return 0;
  }
  if (argc == 3 && !strcmp(argv[1], "stable")) {
    if (!load(&e, argv[2]) || e.pm->nv != 1) return 2;
    for (int k = 0; k < NENG; k++) {
      double lo = 1e-5, hi = 1;
      if (!stable(&e, k, lo)) {
        printf("%s: unstable at dt = %g\n", g_name[k], lo);
        continue;
      }
      if (stable(&e, k, hi)) {
        printf("%s: stable up to dt = 1 (the range's end)\n", g_name[k]);
        continue;
      }
      for (int it = 0; it < 40; it++) {
        double mid = sqrt(lo * hi);
        if (stable(&e, k, mid)) lo = mid;
        else hi = mid;
      }
      printf("%s: largest stable dt %.4g s\n", g_name[k], lo);
    }
    return 0;
  }
  fprintf(stderr, "usage: bench_implicit steps ENGINE MODEL.xml N | bench_implicit stable MODEL.xml\n");
  return 2;
}
