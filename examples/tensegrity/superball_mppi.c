// superball_mppi.c - the SUPERball rolls along +x under MPPI, planned on one engine and executed in MuJoCo
// (issue 16 item 6, paper 002 Fig. 8).
//
// superball_mppi physid|mujoco PLAN_MODEL TRUTH_MODEL [options]
//   --controls N   controls of 0.1 s executed (default 50: 5 s)
//   --samples N    MPPI samples per iteration (default 40)
//   --iters N      MPPI iterations per control (default 5)
//   --knots N      the planning horizon in controls of 0.1 s (default 10: 1 s)
//   --sigma S      sampling spread in control units (default 1)   --bound B   controls in [-B, B] (default 2)
//   --lambda L     MPPI's temperature in cost units (default 0.1)  --seed S    (default 1)
//   --set SPEC=V   physid plan: set a parameter of params.h (e.g. 'stiffness:*=9999.8'; repeatable)
//   --random SEED  physid plan: every --set parameter (at its set or model value) scaled by a factor uniform in
//                  [0.5, 1.2] drawn from SEED (a model with random parameters; 1.2: cable damping above 1.3x the
//                  truth makes the 1 ms Euler step unstable, docs/tensegrity.md)
//
// The executed world is TRUTH_MODEL in MuJoCo 2.2.2 (the ground truth), from its initial pose at rest. Every
// 0.1 s the planner reads MuJoCo's state (qpos, qvel and, for filter actuators, act), plans N knots of 24 cable controls (each held for 0.1 s,
// zero-order hold, as the data's controls) and MuJoCo executes the first knot for 0.1 s. The planner is the
// same MPPI for both engines (physid's sampling.c samples one control per model step, which for a 1 s horizon
// at 1 ms would be 24,000 independent entries; here each sample is knots x 24 values): iteration k draws
// sample i > 0 as clamp(mean + sigma z) with z standard normal from phys_sampling_stream(seed', k, i) (seed'
// = seed + 1000 x the control's index), sample 0 is the mean, each sample is rolled out for knots x 0.1 s on
// the planning engine (PLAN_MODEL in physid, or in MuJoCo), the mean becomes the exp(-(J_i - min J) / lambda)
// weighted mean, and after the last iteration the cheapest sequence evaluated (the last mean included) is the
// plan, as phys_sampling_solve does; the next control's mean starts from the plan shifted by one knot (last
// knot repeated). Cost of a sample: sum over its knots of |c_xy(t) - r(t)|^2 (m^2) at the knot's end, c_xy the
// horizontal centre of the six rods (their mean: equal masses), r(t) = c_xy(0) + (1 m/s t, 0) the reference
// rolling along +x from the run's start; a non-finite rollout costs +inf.
// Prints one line per control (time, the CoM, the cost) on stderr and, on stdout, one markdown row:
//   | planner | final CoM x, y (m) | mean velocity along x (m/s) | distance to the reference at the end (m) |
#include <math.h>
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "params.h"
#include "physid.h"
#include "rng.h"
#include "sampling.h"

enum { HOLD = 100, MAXSET = 16 };

typedef struct {
  int controls, samples, iters, knots, seed;
  double sigma, bound, lambda;
} mppiOptions;

// the planning engine: physid (m, d) or MuJoCo (mm, md), and the run's reference start
typedef struct {
  physModel* m;
  physData* d;
  mjModel* mm;
  mjData* md;
  int nq, nv, nu, na;
  double c0[2];   // the reference's start (the CoM's x, y when the run began)
  double t0;      // the plan's start time from the run's start
} planner;

// the mean of the free joints' x, y (the rods' centres) of qpos under the joints of either engine
static void centre_xy(int njnt, const int* type, const int* adr, int free_type, const double* qpos, double* c) {
  int n = 0;
  c[0] = c[1] = 0;
  for (int j = 0; j < njnt; j++)
    if (type[j] == free_type) c[0] += qpos[adr[j]], c[1] += qpos[adr[j] + 1], n++;
  if (n) c[0] /= n, c[1] /= n;
}

// the squared distance of the CoM (x, y) at time t (from the run's start) to the reference
static double knot_cost(const planner* p, const double* c, double t) {
  double dx = c[0] - (p->c0[0] + t), dy = c[1] - p->c0[1];
  return dx * dx + dy * dy;
}

// the cost of the knots x nu controls U rolled out from (q, v, act) on the planning engine (+inf if not finite)
static double rollout(planner* p, const double* q, const double* v, const double* act, const double* U, int knots) {
  double J = 0, c[2];
  if (p->m) {
    phys_reset_data(p->m, p->d);
    memcpy(p->d->qpos, q, sizeof(double) * p->nq);
    memcpy(p->d->qvel, v, sizeof(double) * p->nv);
    if (p->na) memcpy(p->d->act, act, sizeof(double) * p->na);
  } else {
    mj_resetData(p->mm, p->md);
    mju_copy(p->md->qpos, q, p->nq);
    mju_copy(p->md->qvel, v, p->nv);
    mju_copy(p->md->act, act, p->na);
  }
  for (int k = 0; k < knots; k++) {
    const double* u = U + (size_t)k * p->nu;
    if (p->m) {
      memcpy(p->d->ctrl, u, sizeof(double) * p->nu);
      for (int s = 0; s < HOLD; s++) phys_step(p->m, p->d);
      centre_xy(p->m->njnt, p->m->jnt_type, p->m->jnt_qposadr, PHYS_JNT_FREE, p->d->qpos, c);
    } else {
      mju_copy(p->md->ctrl, u, p->nu);
      for (int s = 0; s < HOLD; s++) mj_step(p->mm, p->md);
      centre_xy(p->mm->njnt, p->mm->jnt_type, p->mm->jnt_qposadr, mjJNT_FREE, p->md->qpos, c);
    }
    J += knot_cost(p, c, p->t0 + 0.1 * (k + 1));
  }
  return isfinite(J) ? J : INFINITY;
}

// a standard normal draw from rng (Box-Muller, cosine branch)
static double gauss(physRng* rng) {
  double a = 1.0 - phys_rng_uniform(rng), b = phys_rng_uniform(rng);
  return sqrt(-2.0 * log(a)) * cos(2 * M_PI * b);
}

// MPPI from (q, v, act): mean (knots x nu) in, the plan out (the cheapest sequence evaluated); its cost
static double mppi(planner* p, const mppiOptions* o, uint64_t seed, const double* q, const double* v,
                   const double* act, double* mean, double* U, double* J) {
  int n = o->knots * p->nu;
  double best = rollout(p, q, v, act, mean, o->knots), *plan = U + (size_t)o->samples * n;
  memcpy(plan, mean, sizeof(double) * n);
  for (int k = 1; k <= o->iters; k++) {
    for (int i = 0; i < o->samples; i++) {
      double* u = U + (size_t)i * n;
      physRng rng;
      phys_sampling_stream(&rng, seed, k, i);
      for (int e = 0; e < n; e++)
        u[e] = i ? fmin(fmax(mean[e] + o->sigma * gauss(&rng), -o->bound), o->bound) : mean[e];
      J[i] = rollout(p, q, v, act, u, o->knots);
    }
    double minJ = INFINITY, wsum = 0;
    for (int i = 0; i < o->samples; i++) minJ = fmin(minJ, J[i]);
    for (int i = 0; i < o->samples; i++) {
      if (J[i] < best) best = J[i], memcpy(plan, U + (size_t)i * n, sizeof(double) * n);
      wsum += isfinite(J[i]) ? exp(-(J[i] - minJ) / o->lambda) : 0;
    }
    if (!(wsum > 0)) continue;
    memset(mean, 0, sizeof(double) * n);
    for (int i = 0; i < o->samples; i++)
      for (int e = 0; isfinite(J[i]) && e < n; e++) mean[e] += exp(-(J[i] - minJ) / o->lambda) / wsum * U[(size_t)i * n + e];
  }
  double Jm = rollout(p, q, v, act, mean, o->knots);
  if (Jm < best) best = Jm, memcpy(plan, mean, sizeof(double) * n);
  return best;
}

// the physid planning model: PLAN_MODEL with the --set values, scaled by --random's factors; NULL on error
static physModel* physid_model(const char* path, char** set, int nset, long random) {
  physLog log = {0};
  physModel* m = phys_load(path, NULL, &log);
  if (!m) {
    fprintf(stderr, "superball_mppi: %s\n", log.error);
    return NULL;
  }
  const char* spec[MAXSET];
  double val[MAXSET];
  for (int i = 0; i < nset; i++) {
    char* eq = strrchr(set[i], '=');
    val[i] = eq ? atof(eq + 1) : NAN;
    if (eq) *eq = 0;
    spec[i] = set[i];
  }
  physParamTable t;
  if (nset && phys_param_table_build(&t, m, spec, nset, &log) != PHYS_OK) {
    fprintf(stderr, "superball_mppi: %s\n", log.error);
    phys_free_model(m);
    return NULL;
  }
  if (nset) {
    double theta[4 * MAXSET];
    phys_param_get(&t, m, theta);
    physRng rng;
    phys_rng_seed(&rng, (uint64_t)random);
    for (int i = 0; i < nset; i++) {
      int a = phys_param_spec_entry(&t, i)->adr;
      if (!isnan(val[i])) theta[a] = val[i];
      if (random >= 0) theta[a] *= phys_rng_range(&rng, 0.5, 1.2);
      fprintf(stderr, "superball_mppi: plan with %s = %.9g\n", spec[i], theta[a]);
    }
    physStatus st = phys_param_set(&t, m, theta);
    phys_param_table_free(&t);
    if (st != PHYS_OK) {
      fprintf(stderr, "superball_mppi: the parameters are not a model\n");
      phys_free_model(m);
      return NULL;
    }
  }
  return m;
}

// reads the options after the three arguments; 0 on a bad one
static int parse(int argc, char** argv, mppiOptions* o, char** set, int* nset, long* random) {
  for (int a = 4; a < argc; a += 2) {
    if (a + 1 >= argc) return 0;
    const char *k = argv[a], *v = argv[a + 1];
    if (!strcmp(k, "--controls")) o->controls = atoi(v);
    else if (!strcmp(k, "--samples")) o->samples = atoi(v);
    else if (!strcmp(k, "--iters")) o->iters = atoi(v);
    else if (!strcmp(k, "--knots")) o->knots = atoi(v);
    else if (!strcmp(k, "--seed")) o->seed = atoi(v);
    else if (!strcmp(k, "--sigma")) o->sigma = atof(v);
    else if (!strcmp(k, "--bound")) o->bound = atof(v);
    else if (!strcmp(k, "--lambda")) o->lambda = atof(v);
    else if (!strcmp(k, "--random")) *random = atol(v);
    else if (!strcmp(k, "--set") && *nset < MAXSET) set[(*nset)++] = argv[a + 1];
    else return 0;
  }
  return o->controls > 0 && o->samples > 0 && o->iters >= 0 && o->knots > 0 && o->sigma >= 0 && o->bound > 0 &&
         o->lambda > 0;
}

int main(int argc, char** argv) {
  mppiOptions o = {50, 40, 5, 10, 1, 1.0, 2.0, 0.1};
  char* set[MAXSET];
  int nset = 0;
  long random = -1;
  if (argc < 4 || (strcmp(argv[1], "physid") && strcmp(argv[1], "mujoco")) ||
      !parse(argc, argv, &o, set, &nset, &random)) {
    fprintf(stderr, "usage: superball_mppi physid|mujoco PLAN_MODEL TRUTH_MODEL [--controls N] [--samples N] "
                    "[--iters N] [--knots N] [--sigma S] [--bound B] [--lambda L] [--seed S] [--set SPEC=V] "
                    "[--random SEED]\n");
    return 2;
  }
  char err[1000] = "";
  mjModel* truth = mj_loadXML(argv[3], NULL, err, sizeof err);
  if (!truth) {
    fprintf(stderr, "superball_mppi: %s: %s\n", argv[3], err);
    return 1;
  }
  mjData* world = mj_makeData(truth);
  planner p = {0};
  if (!strcmp(argv[1], "physid")) {
    if (!(p.m = physid_model(argv[2], set, nset, random))) return 1;
    p.d = phys_make_data(p.m);
    p.nq = p.m->nq, p.nv = p.m->nv, p.nu = p.m->nu, p.na = p.m->na;
  } else {
    if (!(p.mm = mj_loadXML(argv[2], NULL, err, sizeof err))) {
      fprintf(stderr, "superball_mppi: %s: %s\n", argv[2], err);
      return 1;
    }
    p.md = mj_makeData(p.mm);
    p.nq = p.mm->nq, p.nv = p.mm->nv, p.nu = p.mm->nu, p.na = p.mm->na;
  }
  if (p.nq != truth->nq || p.nv != truth->nv || p.nu != truth->nu || p.na != truth->na) {
    fprintf(stderr, "superball_mppi: the planning model's sizes differ from the truth's\n");
    return 1;
  }
  int n = o.knots * p.nu;
  double *mean = calloc((size_t)n, sizeof(double)), *U = malloc(sizeof(double) * (size_t)(o.samples + 1) * n);
  double* J = malloc(sizeof(double) * (size_t)o.samples), c[2];
  centre_xy(truth->njnt, truth->jnt_type, truth->jnt_qposadr, mjJNT_FREE, world->qpos, p.c0);
  for (int s = 0; s < o.controls; s++) {
    p.t0 = 0.1 * s;
    double cost = mppi(&p, &o, (uint64_t)o.seed + 1000u * (uint64_t)s, world->qpos, world->qvel, world->act, mean, U,
                       J);
    const double* plan = U + (size_t)o.samples * n;
    mju_copy(world->ctrl, plan, p.nu);
    for (int k = 0; k < HOLD; k++) mj_step(truth, world);
    memmove(mean, plan + p.nu, sizeof(double) * (size_t)(n - p.nu));   // shift the plan by one knot
    memcpy(mean + n - p.nu, plan + n - p.nu, sizeof(double) * p.nu);
    centre_xy(truth->njnt, truth->jnt_type, truth->jnt_qposadr, mjJNT_FREE, world->qpos, c);
    fprintf(stderr, "t %.1f  com %.4f %.4f  plan cost %.4g\n", 0.1 * (s + 1), c[0], c[1], cost);
  }
  double T = 0.1 * o.controls, dx = c[0] - (p.c0[0] + T), dy = c[1] - p.c0[1];
  printf("| %s | %.3f, %.3f | %.3f | %.3f |\n", argv[1], c[0] - p.c0[0], c[1] - p.c0[1], (c[0] - p.c0[0]) / T,
         sqrt(dx * dx + dy * dy));
  free(mean), free(U), free(J);
  if (p.m) phys_free_data(p.d), phys_free_model(p.m);
  if (p.mm) mj_deleteData(p.md), mj_deleteModel(p.mm);
  mj_deleteData(world);
  mj_deleteModel(truth);
  return 0;
}
