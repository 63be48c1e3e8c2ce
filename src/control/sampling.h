// sampling.h - stochastic search over the controls (issue 13 item 1): random shooting, the cross-entropy
// method (CEM) and model-predictive path integral control (MPPI, Williams et al. 2017) on control.h's problem.
//
// Each iteration draws N control sequences around a mean Ubar (T x nu): sample 0 is Ubar itself, sample i > 0
// is U_i = clamp(Ubar + S o z_i) (z_i standard normal entries, S the per-entry spread, clamped into the
// bounds; with noise_beta > 0 each control's z_i along time is coloured, power-law noise, below), and rolls them
// out (phys_control_rollout; a rejected or non-finite rollout costs +inf). Then
//   random: Ubar <- the best sample (S = sigma fixed): a (1 + N) search around the best so far;
//   cem:    the elite = the ceil(elite N) cheapest samples (ties by sample index); Ubar <- their mean, S <-
//           max(their standard deviation per entry, min_std) (S starts at sigma; the floor min_std keeps the
//           search from collapsing onto one sequence, as iCEM and MuJoCo MPC's CEM do);
//   mppi:   weights w_i = exp(-(J_i - min J) / lambda); Ubar <- sum w_i U_i / sum w_i (S = sigma fixed).
// The result is the cheapest sequence evaluated (p->U, p->X, p->cost); p->iter[k].cost is that cost after
// iteration k (iteration 0: the initial guess), .alpha the iteration's mean sample cost over its finite
// samples, .feedforward the number of finite samples.
//
// Coloured noise (iCEM, Pinneri et al. 2020): with noise_beta = beta > 0, sample i's z along time for each
// control j is x_t = sum_k s_k (a_k cos(2 pi k t / T) + b_k sin(2 pi k t / T)), k = 0 .. floor(T/2) (no sine
// at k = 0 and at k = T/2), a_k, b_k standard normal, s_k proportional to (max(k, 1)/T)^(-beta/2) and scaled so
// that every x_t has variance 1: its power spectrum falls as 1/f^beta (beta = 0 would be white; 1 pink, 2
// brown: smoother controls, more of the spread at low frequency). beta = 0 draws the white z of before.
//
// Design parameters (p->design, control.h; issue 17): a sample is then the T x nu controls followed by the
// design theta (the table's values), sampled alongside them: sample i > 0 draws theta_i = clamp(mean_theta + S
// o z) (z white, after the controls' draws from the same stream) into [theta_lo, theta_hi]; its rollout runs
// after phys_param_set(theta_i) into the model of the worker (a value the kind refuses costs +inf). The spread
// starts at design_sigma (NULL or an entry < 0: 0.1 times the component's bound width, times max(|theta|, 1)
// where a bound is infinite; a held component, lo = hi, is not sampled); CEM updates it from the elite (min_std floors only the
// controls'), MPPI and random shooting move the design's mean as the controls'. With threads > 1 each extra
// worker rolls out on its own copy of the model (phys_copy_model, once per solve). On return p->theta and the
// model (design_model = m) hold the best sample's design. Nothing is differentiated: every kind of
// phys_param_set works, velocity terms on moved points included.
//
// Determinism: sample i of iteration k draws from its own xoshiro256** stream seeded from (seed, k, i)
// through splitmix64, whatever thread rolls it out; the rollouts run on `threads` threads (each its own
// physData, the problem shared read only; samples dealt round-robin), and every reduction (best, elite,
// weights, means) runs afterwards in sample order on the caller's thread: the result is bit-identical for a
// seed and any thread count. The threads are a pool started once per solve: the caller rolls out worker 0's
// share, the others wait on a condition variable for each iteration and are joined at the end.
//
// Memory: phys_sampling_solve allocates once (N x T x nu samples, one physData per extra thread: a rollout
// needs nothing else, not the DDP workspace of a problem copy); nothing allocates inside a rollout.
#ifndef PHYS_SAMPLING_H
#define PHYS_SAMPLING_H

#include <stdint.h>

#include "control.h"

#define PHYS_SAMPLING_MAXTHREADS 64

typedef enum physSampleMethod_ {
  PHYS_SAMPLE_RANDOM = 0,
  PHYS_SAMPLE_CEM,
  PHYS_SAMPLE_MPPI
} physSampleMethod;

typedef struct physSampleOptions_ {
  physSampleMethod method;
  int samples;              // N per iteration (default 64)
  int iterations;           // (default 50)
  double sigma;             // the sampling spread in control units (default 1)
  double elite;             // CEM's elite fraction (0, 1] (default 0.1)
  double lambda;            // MPPI's temperature (> 0, default 1, in cost units)
  double min_std;           // CEM's floor on the spread S in control units (>= 0, default 0: none)
  double noise_beta;        // the noise's power-law exponent along time, 0..10 (default 0: white)
  uint64_t seed;            // (default 0)
  int threads;              // rollout threads, 1..PHYS_SAMPLING_MAXTHREADS (default 1)
  const double* design_sigma;   // with a design: its initial spread, ntheta values in the design's units
                                // (default NULL; NULL or a negative entry: 0.1 times the bound width, below)
} physSampleOptions;

// the defaults above
void phys_sampling_defaults(physSampleOptions* o);

// the stream of sample i of iteration k: phys_rng_seed of splitmix64 mixing seed, k and i (rng.h)
struct physRng_;
void phys_sampling_stream(struct physRng_* rng, uint64_t seed, int k, int i);

// the table phys_sampling_noise reads for sequences of length T: cos and sin of 2 pi m / T, m = 0..T-1 (2T)
void phys_sampling_trig(int T, double* trig);
// x[t * stride], t = 0..T-1 <- one unit-variance sequence of power-law noise 1/f^beta (beta > 0, above) drawn
// from rng, with trig from phys_sampling_trig(T)
void phys_sampling_noise(struct physRng_* rng, int T, double beta, const double* trig, double* x, int stride);

// stochastic search from d's state and the initial mean p->U (clamped into the bounds); on return p->U, p->X,
// p->cost, p->iter[0..niter] (niter = iterations, at most p->maxiter), p->stop (maxiter); d back at its state.
// PHYS_ERR_ARG (message in log) for infeasible bounds or options out of range, PHYS_ERR_NUMERIC if the
// initial guess's rollout is not finite, PHYS_ERR_NOMEM.
physStatus phys_sampling_solve(physControlProblem* p, physData* d, const physSampleOptions* o,
                               physDdpProgress progress, void* ctx, physLog* log);

#endif  // PHYS_SAMPLING_H
