// test_sampling.c - random shooting, CEM and MPPI (src/control/sampling.c): the same seed gives bit-identical
// controls with 1, 2 and 3 threads (and another seed other controls), also for the drone with its contacts; MPPI and CEM reduce the pendulum
// swing-up's cost; random shooting finds the analytic minimum of a one-step problem; bad options are refused;
// a sample's cost is phys_control_rollout's bit for bit; coloured noise (noise_beta): the averaged periodogram
// of 400 generated sequences falls with the slope -beta (beta 1 and 2) and every entry has variance 1, and the
// solves with it are bit-identical for 1, 2 and 3 threads; CEM's spread floor (min_std): with a one-sample
// elite and no floor the spread is 0 after the first iteration and every later sample is the mean, with the
// floor the samples keep spreading. Activations (issue 15 item 2): MPPI on tests/data/actuator_dynamics.xml (na 6)
// lowers the cost, is bit-identical for 1 and 2 threads and leaves d at its state, act included. Design
// parameters (issue 17): the three methods sample a link length with the controls held, lower the cost (CEM to
// the analytic optimum within 1e-3), bit-identical for 1 and 3 threads.
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "params.h"
#include "rng.h"
#include "sampling.h"
#include "step.h"
#include "test.h"

static const char* const g_name[] = {"random", "cem", "mppi"};
static double g_beta = 0, g_min_std = 0;   // swing's noise_beta and min_std

// the swing-up of docs/cli.md on T steps with |u| <= 10 (CEM: sigma 4, elite 0.2; MPPI: sigma 2, lambda 1)
static physControlProblem* swing_problem(physModel* m, int T, int iterations) {
  physControlProblem* p = phys_control_make(m, T, iterations);
  p->fin.qref[0] = 3.14159265, p->fin.wq[0] = 100, p->fin.wv[0] = 10, p->wu[0] = 1e-3;
  p->lo[0] = -10, p->hi[0] = 10;
  return p;
}

// solve the swing-up with method, threads, seed; U (T) <- the controls; returns the final cost
static double swing(physSampleMethod method, int T, int samples, int iterations, int threads, uint64_t seed,
                    double* U, double* J0) {
  physModel* m = phys_load("models/pendulum_motor.xml", NULL, NULL);
  physData* d = phys_make_data(m);
  physControlProblem* p = swing_problem(m, T, iterations);
  physSampleOptions o;
  phys_sampling_defaults(&o);
  o.method = method, o.samples = samples, o.iterations = iterations, o.threads = threads, o.seed = seed;
  o.sigma = method == PHYS_SAMPLE_CEM ? 4 : 2, o.lambda = 1, o.elite = 0.2;
  o.noise_beta = g_beta, o.min_std = g_min_std;
  physLog log;
  memset(&log, 0, sizeof log);
  CHECK_MSG(phys_sampling_solve(p, d, &o, NULL, NULL, &log) == PHYS_OK, "%s", log.error);
  CHECK(d->qpos[0] == 0 && d->qvel[0] == 0 && d->time == 0);   // d back at its state
  CHECK(phys_control_violation(p, p->U) == 0);
  CHECK(p->niter == iterations);
  for (int k = 1; k <= p->niter; k++) CHECK(p->iter[k].cost <= p->iter[k - 1].cost);
  CHECK(p->cost == p->iter[p->niter].cost);
  memcpy(U, p->U, sizeof(double) * (size_t)T);
  *J0 = p->iter[0].cost;
  double J = p->cost;
  phys_control_free(p);
  phys_free_data(d);
  phys_free_model(m);
  return J;
}

// threads 1, 2, 3 give the same bits; seed 1 differs from seed 0
static void test_threads(void) {
  int T = 60;
  double U1[60], U2[60], U3[60], J0;
  for (int method = 0; method < 3; method++) {
    double J1 = swing((physSampleMethod)method, T, 24, 5, 1, 7, U1, &J0);
    double J2 = swing((physSampleMethod)method, T, 24, 5, 2, 7, U2, &J0);
    double J3 = swing((physSampleMethod)method, T, 24, 5, 3, 7, U3, &J0);
    CHECK_MSG(memcmp(U1, U2, sizeof U1) == 0 && J1 == J2, "%s: threads 1 and 2 differ", g_name[method]);
    CHECK_MSG(memcmp(U1, U3, sizeof U1) == 0 && J1 == J3, "%s: threads 1 and 3 differ", g_name[method]);
    swing((physSampleMethod)method, T, 24, 5, 2, 8, U2, &J0);
    CHECK_MSG(memcmp(U1, U2, sizeof U1) != 0, "%s: seeds 7 and 8 give the same controls", g_name[method]);
  }
}

// the drone on the ground (lcp contacts in every rollout), 40 steps to a height of 0.5 m, by MPPI: the controls
// (4 x 40) with 1 and 2 threads
static void drone_mppi(int threads, double* U, double* J) {
  physModel* m = phys_load("models/drone.xml", NULL, NULL);
  physData* d = phys_make_data(m);
  phys_reset_keyframe(m, d, 0);
  physControlProblem* p = phys_control_make(m, 40, 4);
  p->fin.qref[2] = 0.5, p->fin.wq[2] = 100;
  for (int i = 0; i < 160; i++) p->U[i] = 2;
  physSampleOptions o;
  phys_sampling_defaults(&o);
  o.method = PHYS_SAMPLE_MPPI, o.samples = 16, o.iterations = 4, o.threads = threads, o.seed = 3;
  CHECK(phys_sampling_solve(p, d, &o, NULL, NULL, NULL) == PHYS_OK);
  memcpy(U, p->U, sizeof(double) * 160);
  *J = p->cost;
  CHECK(p->cost < p->iter[0].cost);
  phys_control_free(p);
  phys_free_data(d);
  phys_free_model(m);
}

static void test_threads_contacts(void) {
  double U1[160], U2[160], J1, J2;
  drone_mppi(1, U1, &J1);
  drone_mppi(2, U2, &J2);
  CHECK(memcmp(U1, U2, sizeof U1) == 0 && J1 == J2);
}

// MPPI and CEM on the 2 s swing-up: a large cost reduction
static void test_swing_up(void) {
  double U[200], J0;
  for (int method = 1; method < 3; method++) {
    double J = swing((physSampleMethod)method, 200, 64, 60, 2, 0, U, &J0);
    printf("  %s: swing-up cost %.6g -> %.6g (64 samples x 60 iterations)\n", g_name[method], J0, J);
    CHECK(J < 0.1 * J0);
  }
}

// one step of the pendulum at angle 0 (no gravity torque): v1 = dt u / I, I = 1.01; cost 1/2 w (v1 - v*)^2
// + dt 1/2 wu u^2 has its minimum at u* = w a v* / (w a^2 + dt wu), a = dt / I
static void test_random_minimum(void) {
  physModel* m = phys_load("models/pendulum_motor.xml", NULL, NULL);
  physData* d = phys_make_data(m);
  physControlProblem* p = phys_control_make(m, 1, 40);
  double w = 1e4, vs = 0.02, wu = 0.5, dt = 0.01, a = dt / 1.01;
  p->fin.wv[0] = w, p->fin.vref[0] = vs, p->wu[0] = wu;
  p->lo[0] = -5, p->hi[0] = 5;
  double us = w * a * vs / (w * a * a + dt * wu);
  physSampleOptions o;
  phys_sampling_defaults(&o);
  o.samples = 32, o.iterations = 40, o.sigma = 1;
  CHECK(phys_sampling_solve(p, d, &o, NULL, NULL, NULL) == PHYS_OK);
  double Js = 0.5 * w * (a * us - vs) * (a * us - vs) + dt * 0.5 * wu * us * us;
  printf("  random: u %.6f (u* %.6f), cost %.9g (minimum %.9g)\n", p->U[0], us, p->cost, Js);
  CHECK(fabs(p->U[0] - us) < 1e-2);
  CHECK(p->cost >= Js && p->cost - Js < 1e-3 * Js);
  phys_control_free(p);
  phys_free_data(d);
  phys_free_model(m);
}

// a sample's cost is phys_control_rollout's, bit for bit (the threads roll out with their own copy of its
// arithmetic): one sample per iteration is the mean itself, so iteration 1's mean sample cost (.alpha) is the
// initial guess's cost; the pendulum with site position and velocity terms, effort and rate, and the drone
// falling onto the floor (lcp contacts), on 1 and 2 threads
static void test_sample_cost(void) {
  for (int scene = 0; scene < 2; scene++)
    for (int threads = 1; threads <= 2; threads++) {
      physModel* m = phys_load(scene ? "models/drone.xml" : "models/pendulum_motor.xml", NULL, NULL);
      physData* d = phys_make_data(m);
      int T = 30;
      physControlProblem* p = phys_control_make(m, T, 2);
      if (scene == 0) {
        int tip = phys_name2id(m, "site", "tip");
        p->run.wq[0] = 3, p->run.npoint = 1;
        p->run.point[0] = (physPointCost){tip, {0.2, -0.1, 0.4}, {1, 2, 3}, 0, 1, 0, 0, 0};
        p->fin.npoint = 1;
        p->fin.point[0] = (physPointCost){tip, {0.3, 0, 2.5}, {10, 1, 20}, 0, 0, 0, 0, 0};
        p->wu[0] = 0.1, p->wdu[0] = 5, p->uprev[0] = 0.7;
        for (int t = 0; t < T; t++) p->U[t] = 2 * sin(0.3 * t) + 1;
      } else {
        phys_reset_keyframe(m, d, 0);
        d->qpos[2] = 0.15;
        p->fin.qref[2] = 1.0, p->fin.wq[2] = 10, p->run.wv[2] = 0.1;
        for (int i = 0; i < 4 * T; i++) p->U[i] = 1.0 + 0.1 * (i % 4);
      }
      physSampleOptions o;
      phys_sampling_defaults(&o);
      o.samples = 1, o.iterations = 1, o.threads = threads;
      CHECK(phys_sampling_solve(p, d, &o, NULL, NULL, NULL) == PHYS_OK);
      CHECK(isfinite(p->iter[0].cost) && p->iter[1].feedforward == 1);
      CHECK_MSG(p->iter[1].alpha == p->iter[0].cost, "%s: sample cost %.17g, phys_control_rollout %.17g",
                scene ? "drone" : "pendulum", p->iter[1].alpha, p->iter[0].cost);
      phys_control_free(p);
      phys_free_data(d);
      phys_free_model(m);
    }
}

// the streams: a function of (seed, k, i) alone, different for neighbouring arguments
static void test_streams(void) {
  physRng a, b;
  phys_sampling_stream(&a, 3, 4, 5);
  phys_sampling_stream(&b, 3, 4, 5);
  CHECK(phys_rng_next(&a) == phys_rng_next(&b));
  uint64_t x[4];
  const int arg[4][3] = {{3, 4, 5}, {4, 4, 5}, {3, 5, 5}, {3, 4, 6}};
  for (int c = 0; c < 4; c++) {
    phys_sampling_stream(&a, (uint64_t)arg[c][0], arg[c][1], arg[c][2]);
    x[c] = phys_rng_next(&a);
  }
  CHECK(x[0] != x[1] && x[0] != x[2] && x[0] != x[3] && x[1] != x[2] && x[2] != x[3]);
}

// bad options and bounds: PHYS_ERR_ARG with a message, the controls untouched
static void test_bad(void) {
  physModel* m = phys_load("models/pendulum_motor.xml", NULL, NULL);
  physData* d = phys_make_data(m);
  physControlProblem* p = swing_problem(m, 10, 5);
  physSampleOptions o;
  physLog log;
  const char* field[] = {"samples", "elite", "lambda", "threads", "sigma", "min_std", "noise_beta"};
  for (int c = 0; c < 7; c++) {
    phys_sampling_defaults(&o);
    if (c == 0) o.samples = 0;
    if (c == 1) o.elite = 0;
    if (c == 2) o.lambda = 0;
    if (c == 3) o.threads = PHYS_SAMPLING_MAXTHREADS + 1;
    if (c == 4) o.sigma = NAN;
    if (c == 5) o.min_std = -1;
    if (c == 6) o.noise_beta = 10.5;
    memset(&log, 0, sizeof log);
    CHECK_MSG(phys_sampling_solve(p, d, &o, NULL, NULL, &log) == PHYS_ERR_ARG && strstr(log.error, "out of range"),
              "%s: %s", field[c], log.error);
  }
  phys_sampling_defaults(&o);
  p->lo[0] = 1, p->hi[0] = -1;
  memset(&log, 0, sizeof log);
  CHECK(phys_sampling_solve(p, d, &o, NULL, NULL, &log) == PHYS_ERR_ARG && strstr(log.error, "infeasible bounds"));
  phys_control_free(p);
  phys_free_data(d);
  phys_free_model(m);
}

// the averaged periodogram of 400 sequences of T = 128 at beta: the least-squares slope of log power against
// log frequency over k = 1..63, and the mean square of every entry
static void noise_spectrum(double beta, double* slope, double* var) {
  enum { T = 128, NSEQ = 400 };
  static double trig[2 * T], x[T], P[T / 2 + 1];
  phys_sampling_trig(T, trig);
  memset(P, 0, sizeof P);
  double sq = 0;
  for (int s = 0; s < NSEQ; s++) {
    physRng rng;
    phys_sampling_stream(&rng, 3, 1, s);
    phys_sampling_noise(&rng, T, beta, trig, x, 1);
    for (int t = 0; t < T; t++) sq += x[t] * x[t];
    for (int k = 1; k <= T / 2; k++) {
      double re = 0, im = 0;
      for (int t = 0; t < T; t++) re += x[t] * trig[k * t % T], im -= x[t] * trig[T + k * t % T];
      P[k] += (re * re + im * im) / NSEQ;
    }
  }
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  int n = T / 2 - 1;
  for (int k = 1; k < T / 2; k++) {
    double lx = log((double)k), ly = log(P[k]);
    sx += lx, sy += ly, sxx += lx * lx, sxy += lx * ly;
  }
  *slope = (n * sxy - sx * sy) / (n * sxx - sx * sx);
  *var = sq / (T * NSEQ);
}

static void test_noise(void) {
  double betas[2] = {1, 2};
  for (int b = 0; b < 2; b++) {
    double slope, var;
    noise_spectrum(betas[b], &slope, &var);
    printf("coloured noise beta %g: periodogram slope %.4f, variance %.4f\n", betas[b], slope, var);
    CHECK_MSG(fabs(slope + betas[b]) < 0.1, "beta %g: slope %g", betas[b], slope);
    CHECK_MSG(fabs(var - 1) < 0.05, "beta %g: variance %g", betas[b], var);
  }
  // the solves with coloured noise and the floor: the same bits on 1, 2 and 3 threads
  g_beta = 2, g_min_std = 0.3;
  int T = 60;
  double U1[60], U2[60], U3[60], U0[60], J0;
  for (int method = 0; method < 3; method++) {
    double J1 = swing((physSampleMethod)method, T, 24, 5, 1, 7, U1, &J0);
    double J2 = swing((physSampleMethod)method, T, 24, 5, 2, 7, U2, &J0);
    double J3 = swing((physSampleMethod)method, T, 24, 5, 3, 7, U3, &J0);
    CHECK_MSG(memcmp(U1, U2, sizeof U1) == 0 && J1 == J2, "%s coloured: threads 1 and 2 differ", g_name[method]);
    CHECK_MSG(memcmp(U1, U3, sizeof U1) == 0 && J1 == J3, "%s coloured: threads 1 and 3 differ", g_name[method]);
    g_beta = 0;
    swing((physSampleMethod)method, T, 24, 5, 1, 7, U0, &J0);   // white: other samples
    CHECK(memcmp(U0, U1, sizeof U1) != 0);
    g_beta = 2;
  }
  g_beta = 0, g_min_std = 0;
}

// CEM with a one-sample elite: each iteration's mean sample cost (iter[k].alpha) and best cost; the spread floor
// min_std
static void cem_single_elite(double min_std, double* alpha, double* cost) {
  physModel* m = phys_load("models/pendulum_motor.xml", NULL, NULL);
  physData* d = phys_make_data(m);
  physControlProblem* p = swing_problem(m, 20, 4);
  physSampleOptions o;
  phys_sampling_defaults(&o);
  o.method = PHYS_SAMPLE_CEM, o.samples = 16, o.iterations = 4, o.sigma = 2, o.elite = 1.0 / 16, o.min_std = min_std;
  CHECK(phys_sampling_solve(p, d, &o, NULL, NULL, NULL) == PHYS_OK);
  for (int k = 0; k <= 4; k++) alpha[k] = p->iter[k].alpha, cost[k] = p->iter[k].cost;
  phys_control_free(p);
  phys_free_data(d);
  phys_free_model(m);
}

static void test_min_std(void) {
  double a0[5], c0[5], a1[5], c1[5];
  cem_single_elite(0, a0, c0);
  cem_single_elite(0.5, a1, c1);
  CHECK(c0[1] == c1[1] && a0[1] == a1[1]);   // the first iteration samples at sigma either way
  for (int k = 2; k <= 4; k++) {
    CHECK_MSG(a0[k] == c0[1] && c0[k] == c0[1], "no floor, iteration %d: mean sample %g, best %g", k, a0[k], c0[k]);
    CHECK_MSG(a1[k] > c1[k], "floor 0.5, iteration %d: mean sample %g, best %g", k, a1[k], c1[k]);
  }
  printf("CEM, one-sample elite: no floor every later sample costs %.6g; floor 0.5: mean sample %.6g, best %.6g\n",
         c0[1], a1[4], c1[4]);
}

// MPPI on a model with activations from its keyframe (act set): every sample's rollout starts at the saved act
static void test_act(void) {
  physModel* m = phys_load("tests/data/actuator_dynamics.xml", NULL, NULL);
  physData* d = phys_make_data(m);
  m->opt.gravity[2] = 0;   // (the puck would fall away: the target is the arm's)
  double U[2][30 * 8], J[2];
  size_t ns = phys_state_size(m);
  double *x0 = malloc(sizeof(double) * ns), *x1 = malloc(sizeof(double) * ns);
  for (int k = 0; k < 2; k++) {
    physControlProblem* p = phys_control_make(m, 30, 20);
    p->run.qref[1] = 0.5, p->run.wq[1] = 5, p->fin.qref[1] = 0.5, p->fin.wq[1] = 50;
    phys_reset_keyframe(m, d, 0);
    phys_state_save(m, d, x0);
    double J0 = phys_control_rollout(p, d, p->U, NULL);
    phys_state_load(m, d, x0);
    physSampleOptions o;
    phys_sampling_defaults(&o);
    o.method = PHYS_SAMPLE_MPPI, o.iterations = 20, o.threads = k + 1;
    physLog log;
    memset(&log, 0, sizeof log);
    CHECK_MSG(phys_sampling_solve(p, d, &o, NULL, NULL, &log) == PHYS_OK, "%s", log.error);
    phys_state_save(m, d, x1);
    CHECK(m->na == 6 && memcmp(x0, x1, sizeof(double) * ns) == 0);   // d back at its state, act included
    CHECK(p->cost < J0);
    memcpy(U[k], p->U, sizeof U[k]);
    J[k] = p->cost;
    if (k == 0) printf("  activations (na %d): mppi cost %.6g -> %.6g\n", m->na, J0, p->cost);
    phys_control_free(p);
  }
  CHECK(memcmp(U[0], U[1], sizeof U[0]) == 0 && J[0] == J[1]);
  free(x0), free(x1);
  phys_free_data(d);
  phys_free_model(m);
}

// design parameters (issue 17): the arm of design_arm.xml without its tendons, straight and at rest, the control
// held at 0 by equal bounds, l1 held at 1.5 (lower = upper); a final term puts the tip at x = 2.35, so the
// optimum is l2 = 0.85 exactly (cost 0; shooting's test_design_solve). Each method samples l2 from 0.5 and
// lowers the cost; CEM ends within 1e-3 of 0.85; threads 1 and 3 give the same bits; the model holds the best
// design, whose rollout's cost is p->cost; a held component is never sampled
static void test_design(void) {
  physModel* m = phys_load("tests/data/design_arm.xml", NULL, NULL);
  physData* d = phys_make_data(m);
  int T = 20;
  for (int i = 0; i < m->nspring; i++) m->spring_stiffness[i] = 0, m->spring_damping[i] = 0;   // the arm alone
  const char* spec[] = {"pos:elbow", "pos:tip"};
  physParamTable tab;
  physLog log;
  memset(&log, 0, sizeof log);
  CHECK(phys_param_table_build(&tab, m, spec, 2, &log) == PHYS_OK);
  for (int method = 0; method < 3; method++) {
    double l2[2], J[2];
    for (int k = 0; k < 2; k++) {
      physControlProblem* p = phys_control_make(m, T, 30);
      p->fin.npoint = 1;
      p->fin.point[0] = (physPointCost){phys_name2id(m, "body", "tip"), {2.35, 0, 0}, {1, 1, 1}, 1, 0, 0, 0, 0};
      p->lo[0] = p->hi[0] = 0;
      double th[6] = {1.5, 0, 0, 0.5, 0, 0}, lo[6] = {1.5, 0, 0, 0.05, 0, 0}, hi[6] = {1.5, 0, 0, 3, 0, 0};
      p->design = &tab, p->design_model = m, p->theta = th, p->theta_lo = lo, p->theta_hi = hi;
      phys_reset_data(m, d);
      physSampleOptions o;
      phys_sampling_defaults(&o);
      o.method = (physSampleMethod)method, o.samples = 32, o.iterations = 30, o.threads = 1 + 2 * k, o.seed = 3;
      o.sigma = 0, o.elite = 0.25, o.lambda = 1e-4;
      CHECK_MSG(phys_sampling_solve(p, d, &o, NULL, NULL, &log) == PHYS_OK, "%s", log.error);
      CHECK(p->cost < 0.01 * p->iter[0].cost);
      CHECK(th[0] == 1.5 && th[1] == 0 && th[2] == 0 && th[4] == 0 && th[5] == 0);   // held components
      CHECK(m->body_pos[3 * phys_name2id(m, "body", "tip")] == th[3]);   // the model holds the best design
      CHECK(m->body_pos[3 * phys_name2id(m, "body", "elbow")] == 1.5);
      CHECK(d->qpos[0] == 0 && d->qvel[0] == 0 && d->time == 0);         // d back at its state
      CHECK(phys_control_rollout(p, d, p->U, NULL) == p->cost);          // the design in the model is the best
      for (int t = 0; t < T; t++) CHECK(p->U[t] == 0);
      if (method == PHYS_SAMPLE_CEM) CHECK(fabs(th[3] - 0.85) < 1e-3);
      if (k == 0) printf("  design (%s): l2 0.5 -> %.9g (optimum 0.85), cost %.3g -> %.3g\n", g_name[method], th[3],
                         p->iter[0].cost, p->cost);
      l2[k] = th[3], J[k] = p->cost;
      phys_control_free(p);
    }
    CHECK(l2[0] == l2[1] && J[0] == J[1]);   // 1 and 3 threads: the same bits
  }
  phys_param_table_free(&tab);
  phys_free_data(d);
  phys_free_model(m);
}

int main(void) {
  test_design();
  test_act();
  test_noise();
  test_min_std();
  test_streams();
  test_sample_cost();
  test_threads();
  test_threads_contacts();
  test_swing_up();
  test_random_minimum();
  test_bad();
  return test_done();
}
