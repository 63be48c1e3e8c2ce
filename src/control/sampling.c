// sampling.c - random shooting, CEM and MPPI with per-sample random streams and rollouts on a thread pool
// (sampling.h)
#include "sampling.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"
#include "rollout.h"
#include "shooting.h"

void phys_sampling_defaults(physSampleOptions* o) {
  *o = (physSampleOptions){PHYS_SAMPLE_RANDOM, 64, 50, 1.0, 0.1, 1.0, 0.0, 0.0, 0, 1, NULL};
}

// splitmix64 of seed, then of that hash mixed with k, then with i: the stream's seed
void phys_sampling_stream(physRng* rng, uint64_t seed, int k, int i) {
  uint64_t s = seed;
  s = phys_splitmix64(&s) ^ ((uint64_t)(uint32_t)k * 0xD1B54A32D192ED03ull);
  s = phys_splitmix64(&s) ^ ((uint64_t)(uint32_t)i * 0xA24BAED4963EE407ull);
  phys_rng_seed(rng, phys_splitmix64(&s));
}

// a standard normal draw (Box-Muller's cosine branch on two uniforms; 1 - u keeps the logarithm finite)
static double normal(physRng* rng) {
  double u1 = 1.0 - phys_rng_uniform(rng), u2 = phys_rng_uniform(rng);
  return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

void phys_sampling_trig(int T, double* trig) {
  for (int m = 0; m < T; m++) {
    double a = 6.283185307179586 * m / T;
    trig[m] = cos(a), trig[T + m] = sin(a);
  }
}

// the frequency k's amplitude before normalization: (max(k, 1) / T)^(-beta/2) (k = 0 takes the lowest frequency's)
static double noise_scale(int k, int T, double beta) {
  return pow((double)(k > 0 ? k : 1) / T, -0.5 * beta);
}

void phys_sampling_noise(physRng* rng, int T, double beta, const double* trig, double* x, int stride) {
  int K = T / 2;
  double var = 0;   // the variance of every x_t before scaling: sum of s_k^2 over the frequencies
  for (int k = 0; k <= K; k++) var += noise_scale(k, T, beta) * noise_scale(k, T, beta);
  double norm = 1.0 / sqrt(var);
  for (int t = 0; t < T; t++) x[(size_t)t * stride] = 0;
  for (int k = 0; k <= K; k++) {   // the cosine and sine terms of frequency k, summed into every x_t
    double s = noise_scale(k, T, beta) * norm, a = s * normal(rng);
    int sine = k > 0 && 2 * k != T;
    double b = sine ? s * normal(rng) : 0;
    for (int t = 0, m = 0; t < T; t++, m = (m + k) % T)   // m = k t mod T
      x[(size_t)t * stride] += a * trig[m] + b * trig[T + m];
  }
}

//---------------------------------------------------------------------------------------------------------
// the run: shared arrays, one worker per thread, a pool of threads for the whole solve

struct sampleRun_;
typedef struct sampleWorker_ {
  struct sampleRun_* run;
  int id;
  physData* d;              // the caller's d for worker 0, its own for the others: all a rollout writes
  physModel* model;         // with a design: the model its samples' designs are set into (worker 0: the
                            // caller's design_model; the others their own copy), else NULL
  const physControlProblem* prob;   // the problem its rollouts read: p, or with a design for a worker > 0 a
                                    // copy of p whose m is its model (run->probs)
  pthread_t th;             // workers 1..: their thread, started once (started = 1)
  int started;
} sampleWorker;

typedef struct sampleRun_ {
  const physSampleOptions* o;
  const physControlProblem* p;   // read only during the rollouts (bounds, cost terms, weights)
  int N, n, nthreads, k;    // samples, T x nu, threads, the iteration
  int nth, nvar;            // the design's length (0: none) and a sample's: n controls, then the design
  double* rec;              // the initial state (phys_rollout_save_state)
  double *mean, *S;         // nvar: the sampling mean and spread (controls, then design)
  double* trig;             // 2T: phys_sampling_trig's table (noise_beta > 0)
  double* U;                // N x nvar: the samples
  double* J;                // N: their costs
  double* best;             // nvar: the cheapest controls (and design) so far
  double* pair;             // N x 2: (cost, index) pairs, CEM's sort
  int* order;               // N: the elite's sample indices
  physControlProblem* probs;   // with a design and threads: the workers' copies of p (worker t at t - 1)
  sampleWorker w[PHYS_SAMPLING_MAXTHREADS];
  // the pool: the caller raises gen and broadcasts go (quit: leave); each started worker rolls out its share
  // of iteration gen, then lowers pending, the last one signals done. The mutex orders the caller's writes
  // (mean, S, k) before the workers' reads and the workers' J and U before the caller's reductions.
  pthread_mutex_t lock;
  pthread_cond_t go, done;
  unsigned gen;
  int pending, quit, pool;  // pool: lock and conditions initialized
  void* base;
} sampleRun;

// d's inputs held through the rollouts (applied forces) copied into a worker's data
static void copy_inputs(const physModel* m, const physData* d, physData* e) {
  memcpy(e->qfrc_applied, d->qfrc_applied, sizeof(double) * (size_t)m->nv);
  memcpy(e->xfrc_applied, d->xfrc_applied, sizeof(double) * 6 * (size_t)m->nbody);
}

// the pool's threads told to leave and joined, then everything freed
static void run_free(sampleRun* r) {
  if (r->pool) {
    pthread_mutex_lock(&r->lock);
    r->quit = 1;
    pthread_cond_broadcast(&r->go);
    pthread_mutex_unlock(&r->lock);
  }
  for (int t = 1; t < r->nthreads; t++)
    if (r->w[t].started) pthread_join(r->w[t].th, NULL);
  if (r->pool) {
    pthread_cond_destroy(&r->go);
    pthread_cond_destroy(&r->done);
    pthread_mutex_destroy(&r->lock);
  }
  for (int t = 1; t < r->nthreads; t++) phys_free_data(r->w[t].d), phys_free_model(r->w[t].model);
  free(r->probs);
  free(r->base);
}

// the arrays and the workers' data (no thread yet: pool_start); 0 if out of memory
static int run_alloc(sampleRun* r, physControlProblem* p, physData* d, const physSampleOptions* o) {
  const physModel* m = p->m;
  memset(r, 0, sizeof *r);
  r->o = o, r->p = p, r->N = o->samples, r->n = p->T * p->nu;
  r->nth = p->design ? p->design->ntheta : 0, r->nvar = r->n + r->nth;
  r->nthreads = o->threads < o->samples ? o->threads : o->samples;
  size_t n = (size_t)r->nvar, N = (size_t)r->N, nrec = phys_rollout_record_size(m);
  double* s = calloc(nrec + 3 * n + N * n + 4 * N + 2 * (size_t)p->T, sizeof(double));
  if (!(r->base = s)) return 0;
  r->rec = s, s += nrec;
  r->mean = s, s += n;
  r->S = s, s += n;
  r->best = s, s += n;
  r->U = s, s += N * n;
  r->J = s, s += N;
  r->pair = s, s += 2 * N;
  r->order = (int*)s, s += N;   // N ints in N doubles
  r->trig = s;
  phys_sampling_trig(p->T, r->trig);
  r->w[0] = (sampleWorker){.run = r, .id = 0, .d = d, .model = r->nth ? p->design_model : NULL, .prob = p};
  int ok = !r->nth || r->nthreads < 2 ||
           (r->probs = malloc(sizeof(physControlProblem) * (size_t)r->nthreads)) != NULL;
  for (int t = 1; t < r->nthreads; t++) {   // with a design each worker rolls out on its own copy of the model
    physModel* mt = r->nth && ok ? phys_copy_model(m) : NULL;
    r->w[t] = (sampleWorker){.run = r, .id = t, .d = phys_make_data(m), .model = mt, .prob = p};
    if (mt) {
      r->probs[t - 1] = *p, r->probs[t - 1].m = mt, r->probs[t - 1].design_model = mt;
      r->w[t].prob = r->probs + t - 1;
    }
    if (r->w[t].d) copy_inputs(m, d, r->w[t].d);
    ok = ok && r->w[t].d && (mt || !r->nth);
  }
  if (!ok) run_free(r);
  return ok;
}

//---------------------------------------------------------------------------------------------------------
// sampling and rollouts

// sample i of iteration k into r->U: the mean for i = 0, else clamp(mean + S o z) from its own stream (z white,
// entry by entry; or with noise_beta > 0 coloured along time, control by control); a design's entries after
// the controls, white, clamped into its bounds
static void draw(const sampleRun* r, const physControlProblem* p, int i) {
  double* u = r->U + (size_t)i * r->nvar;
  if (i == 0) {
    memcpy(u, r->mean, sizeof(double) * (size_t)r->nvar);
    return;
  }
  physRng rng;
  phys_sampling_stream(&rng, r->o->seed, r->k, i);
  int coloured = r->o->noise_beta > 0;
  if (coloured)
    for (int j = 0; j < p->nu; j++) phys_sampling_noise(&rng, p->T, r->o->noise_beta, r->trig, u + j, p->nu);
  for (int e = 0; e < r->n; e++) {
    int j = e % p->nu;
    double z = coloured ? u[e] : normal(&rng);
    u[e] = fmin(fmax(r->mean[e] + r->S[e] * z, p->lo[j]), p->hi[j]);
  }
  for (int e = r->n; e < r->nvar; e++)
    u[e] = fmin(fmax(r->mean[e] + r->S[e] * normal(&rng), p->theta_lo[e - r->n]), p->theta_hi[e - r->n]);
}

// the cost of sample u (controls, then the design) from w's data at the initial state: the design set into
// w's model first (a value phys_param_set refuses costs +inf)
static double sample_cost(const sampleRun* r, sampleWorker* w, const double* u, double* X) {
  phys_rollout_load_state(r->p->m, w->d, r->rec);
  if (r->nth && phys_param_set(r->p->design, w->model, u + r->n) != PHYS_OK) return INFINITY;
  return phys_control_rollout(w->prob, w->d, u, X);
}

// a worker's share of iteration r->k: samples id, id + nthreads, ... drawn and rolled out from the initial state
static void worker_share(sampleWorker* w) {
  sampleRun* r = w->run;
  for (int i = w->id; i < r->N; i += r->nthreads) {
    draw(r, r->p, i);
    r->J[i] = sample_cost(r, w, r->U + (size_t)i * r->nvar, NULL);
  }
}

// a pool thread: waits for each new iteration (gen), rolls out its share, reports it done; leaves on quit
static void* worker_loop(void* arg) {
  sampleWorker* w = arg;
  sampleRun* r = w->run;
  unsigned seen = 0;
  for (;;) {
    pthread_mutex_lock(&r->lock);
    while (r->gen == seen && !r->quit) pthread_cond_wait(&r->go, &r->lock);
    int quit = r->quit;
    seen = r->gen;
    pthread_mutex_unlock(&r->lock);
    if (quit) return NULL;
    worker_share(w);
    pthread_mutex_lock(&r->lock);
    if (--r->pending == 0) pthread_cond_signal(&r->done);
    pthread_mutex_unlock(&r->lock);
  }
}

// the pool for the whole solve: workers 1.. on their threads, once; a thread that cannot start leaves its share
// to the caller (rollouts); the pool's lock missing leaves every share to the caller
static void pool_start(sampleRun* r) {
  if (r->nthreads < 2) return;
  if (pthread_mutex_init(&r->lock, NULL) != 0) return;
  if (pthread_cond_init(&r->go, NULL) != 0) {
    pthread_mutex_destroy(&r->lock);
    return;
  }
  if (pthread_cond_init(&r->done, NULL) != 0) {
    pthread_cond_destroy(&r->go);
    pthread_mutex_destroy(&r->lock);
    return;
  }
  r->pool = 1;
  for (int t = 1; t < r->nthreads; t++)
    r->w[t].started = pthread_create(&r->w[t].th, NULL, worker_loop, &r->w[t]) == 0;
}

// every sample of iteration k on the workers (worker 0, and any worker whose thread did not start, on the
// caller's thread)
static void rollouts(sampleRun* r) {
  int nstarted = 0;
  for (int t = 1; t < r->nthreads; t++) nstarted += r->w[t].started;
  if (nstarted > 0) {
    pthread_mutex_lock(&r->lock);
    r->pending = nstarted;
    r->gen++;
    pthread_cond_broadcast(&r->go);
    pthread_mutex_unlock(&r->lock);
  }
  worker_share(&r->w[0]);
  for (int t = 1; t < r->nthreads; t++)
    if (!r->w[t].started) worker_share(&r->w[t]);
  if (nstarted > 0) {
    pthread_mutex_lock(&r->lock);
    while (r->pending > 0) pthread_cond_wait(&r->done, &r->lock);
    pthread_mutex_unlock(&r->lock);
  }
}

//---------------------------------------------------------------------------------------------------------
// updates (every one in sample order, on the caller's thread)

// the cheapest sample (the first of equal ones), its cost into *bestcost and r->best if below it; returns the
// number of finite samples and their mean cost in *mean
static int scan(sampleRun* r, double* bestcost, double* mean) {
  int nf = 0, ib = -1;
  double sum = 0;
  for (int i = 0; i < r->N; i++) {
    if (!isfinite(r->J[i])) continue;
    nf++, sum += r->J[i];
    if (r->J[i] < *bestcost) *bestcost = r->J[i], ib = i;
  }
  if (ib >= 0) memcpy(r->best, r->U + (size_t)ib * r->nvar, sizeof(double) * (size_t)r->nvar);
  *mean = nf ? sum / nf : INFINITY;
  return nf;
}

// CEM's order of (cost, index) pairs: by cost, then by sample index
static int by_cost(const void* a, const void* b) {
  const double *x = a, *y = b;
  return x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : (x[1] > y[1]) - (x[1] < y[1]);
}

// the mean and spread of the elite samples (their indices ascending in order[0..ne)), the controls' spread
// floored at min_std (a design's is not: min_std is in control units)
static void elite_update(sampleRun* r, int ne) {
  for (int e = 0; e < r->nvar; e++) {
    double mu = 0, var = 0;
    for (int a = 0; a < ne; a++) mu += r->U[(size_t)r->order[a] * r->nvar + e];
    mu /= ne;
    for (int a = 0; a < ne; a++) {
      double x = r->U[(size_t)r->order[a] * r->nvar + e] - mu;
      var += x * x;
    }
    r->mean[e] = mu, r->S[e] = e < r->n ? fmax(sqrt(var / ne), r->o->min_std) : sqrt(var / ne);
  }
}

// 1 if int a is below b (the elite's indices sorted ascending)
static int by_index(const void* a, const void* b) {
  return (*(const int*)a > *(const int*)b) - (*(const int*)a < *(const int*)b);
}

// CEM: the ceil(elite N) cheapest finite samples define the new mean and spread
static void cem_update(sampleRun* r, int nfinite) {
  int ne = (int)ceil(r->o->elite * r->N);
  if (ne > nfinite) ne = nfinite;
  if (ne < 1) return;
  for (int i = 0; i < r->N; i++) r->pair[2 * i] = r->J[i], r->pair[2 * i + 1] = i;
  qsort(r->pair, (size_t)r->N, 2 * sizeof(double), by_cost);
  for (int a = 0; a < ne; a++) r->order[a] = (int)r->pair[2 * a + 1];
  qsort(r->order, (size_t)ne, sizeof(int), by_index);   // sum the elite in sample order
  elite_update(r, ne);
}

// MPPI: the mean weighted by exp(-(J_i - min J) / lambda)
static void mppi_update(sampleRun* r, double minJ) {
  double wsum = 0;
  for (int i = 0; i < r->N; i++) wsum += isfinite(r->J[i]) ? exp(-(r->J[i] - minJ) / r->o->lambda) : 0;
  if (!(wsum > 0)) return;
  memset(r->mean, 0, sizeof(double) * (size_t)r->nvar);
  for (int i = 0; i < r->N; i++) {
    if (!isfinite(r->J[i])) continue;
    double w = exp(-(r->J[i] - minJ) / r->o->lambda) / wsum;
    const double* u = r->U + (size_t)i * r->nvar;
    for (int e = 0; e < r->nvar; e++) r->mean[e] += w * u[e];
  }
}

// the smallest finite sample cost (+inf if none)
static double min_cost(const sampleRun* r) {
  double c = INFINITY;
  for (int i = 0; i < r->N; i++) c = fmin(c, r->J[i]);
  return c;
}

//---------------------------------------------------------------------------------------------------------
// the solver

// 0 and a message if an option is out of range (design_sigma: for p's design)
static int options_ok(const physSampleOptions* o, const physControlProblem* p, physLog* log) {
  for (int c = 0; p->design && o->design_sigma && c < p->design->ntheta; c++)
    if (!isfinite(o->design_sigma[c])) {
      phys_error(log, PHYS_ERR_ARG, "sampling: design_sigma[%d] = %g: expected a finite value", c,
                 o->design_sigma[c]);
      return 0;
    }
  if (o->samples < 1 || o->iterations < 0 || !(o->sigma >= 0 && isfinite(o->sigma)) || !(o->elite > 0 && o->elite <= 1) ||
      !(o->lambda > 0 && isfinite(o->lambda)) || o->threads < 1 || o->threads > PHYS_SAMPLING_MAXTHREADS ||
      !(o->min_std >= 0 && isfinite(o->min_std)) || !(o->noise_beta >= 0 && o->noise_beta <= 10)) {
    phys_error(log, PHYS_ERR_ARG, "sampling: options out of range (samples %d, iterations %d, sigma %g, elite %g, "
               "lambda %g, threads %d, min_std %g, noise_beta %g)", o->samples, o->iterations, o->sigma, o->elite,
               o->lambda, o->threads, o->min_std, o->noise_beta);
    return 0;
  }
  return 1;
}

// one iteration k >= 1: draw and roll out, keep the best, update the mean (and CEM's spread)
static void iterate(sampleRun* r, double* bestcost, double* meancost, int* nfinite) {
  rollouts(r);
  *nfinite = scan(r, bestcost, meancost);
  if (r->o->method == PHYS_SAMPLE_RANDOM) memcpy(r->mean, r->best, sizeof(double) * (size_t)r->nvar);
  else if (r->o->method == PHYS_SAMPLE_CEM) cem_update(r, *nfinite);
  else mppi_update(r, min_cost(r));
}

// the starting mean and best, p->U then p->theta, and the spread: sigma on the controls, design_sigma on the
// design (NULL or a negative entry: 0.1 times the component's bound width, times max(|theta|, 1) where a bound
// is infinite)
static void run_start(sampleRun* r, const physControlProblem* p) {
  memcpy(r->mean, p->U, sizeof(double) * (size_t)r->n);
  if (r->nth) memcpy(r->mean + r->n, p->theta, sizeof(double) * (size_t)r->nth);
  memcpy(r->best, r->mean, sizeof(double) * (size_t)r->nvar);
  for (int e = 0; e < r->n; e++) r->S[e] = r->o->sigma;
  for (int c = 0; c < r->nth; c++) {
    double w = p->theta_hi[c] - p->theta_lo[c];
    double s0 = 0.1 * (isfinite(w) ? w : fmax(fabs(p->theta[c]), 1));
    r->S[r->n + c] = r->o->design_sigma && r->o->design_sigma[c] >= 0 ? r->o->design_sigma[c] : s0;
  }
}

physStatus phys_sampling_solve(physControlProblem* p, physData* d, const physSampleOptions* o,
                               physDdpProgress progress, void* ctx, physLog* log) {
  static const char* const name[] = {"random", "cem", "mppi"};
  if (!options_ok(o, p, log) || !phys_control_bounds_ok(p, name[o->method], log) ||
      !phys_control_design_ok(p, name[o->method], log))
    return PHYS_ERR_ARG;
  phys_control_clamp(p, p->U);
  sampleRun r;
  if (!run_alloc(&r, p, d, o)) return phys_error(log, PHYS_ERR_NOMEM, "%s: out of memory", name[o->method]);
  pool_start(&r);
  const physModel* m = p->m;
  double start = phys_control_clock();
  phys_rollout_save_state(m, d, r.rec);
  run_start(&r, p);
  double best = sample_cost(&r, &r.w[0], r.mean, NULL);
  phys_rollout_load_state(m, d, r.rec);
  if (!isfinite(best)) {
    run_free(&r);
    return phys_error(log, PHYS_ERR_NUMERIC, "%s: the initial guess's rollout is not finite (%s)", name[o->method],
                      d->nwarning ? d->lastwarning : "cost");
  }
  p->niter = 0;
  p->iter[0] = (physDdpIter){best, 0, best, 0, 1, phys_control_clock() - start};
  if (progress) progress(ctx, 0, &p->iter[0]);
  int niter = o->iterations < p->maxiter ? o->iterations : p->maxiter;
  for (r.k = 1; r.k <= niter; r.k++) {
    start = phys_control_clock();
    double meancost;
    int nfinite;
    iterate(&r, &best, &meancost, &nfinite);
    p->niter = r.k;
    p->iter[r.k] = (physDdpIter){best, 0, meancost, 0, nfinite, phys_control_clock() - start};
    if (progress) progress(ctx, r.k, &p->iter[r.k]);
  }
  // the last mean (not yet evaluated unless it is the best), then the best controls (and design: left in the
  // model) and their rollout
  double Jm = sample_cost(&r, &r.w[0], r.mean, NULL);
  if (Jm < best) best = Jm, memcpy(r.best, r.mean, sizeof(double) * (size_t)r.nvar);
  memcpy(p->U, r.best, sizeof(double) * (size_t)r.n);
  if (r.nth) memcpy(p->theta, r.best + r.n, sizeof(double) * (size_t)r.nth);
  p->cost = sample_cost(&r, &r.w[0], r.best, p->X);
  phys_rollout_load_state(m, d, r.rec);
  p->stop = PHYS_DDP_MAXITER;
  if (p->niter > 0) p->iter[p->niter].cost = p->cost;
  run_free(&r);
  return PHYS_OK;
}
