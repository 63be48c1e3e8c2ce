// optimize_sampling.c - `physid optimize` with method "random", "cem" or "mppi": stochastic search over the
// controls (src/control/sampling.h); its options, progress lines and result JSON (optimize.h).
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "optimize.h"

int opt_sampling_method(optMethod* mo, const char* name) {
  static const char* const names[] = {"random", "cem", "mppi"};
  int i = 0;
  while (i < 3 && strcmp(name, names[i]) != 0) i++;
  if (i == 3) return 0;
  memset(mo, 0, sizeof *mo);
  mo->name = names[i], mo->sampling = 1, mo->tol = -1;
  phys_sampling_defaults(&mo->sample);
  mo->sample.method = (physSampleMethod)i;
  mo->maxiter = mo->sample.iterations;
  return 1;
}

int opt_sampling_options(optMethod* mo, const char* file, const cJSON* o) {
  optKey k[] = {{"samples", OPT_INTEGER, 1, 1e6, 0, 0},          {"iterations", OPT_INTEGER, 1, 100000, 0, 0},
                {"sigma", OPT_NUMBER, 0, 1e300, 0, 0},            {"seed", OPT_INTEGER, 0, 9007199254740992.0, 0, 0},
                {"threads", OPT_INTEGER, 1, PHYS_SAMPLING_MAXTHREADS, 0, 0}, {"elite", OPT_NUMBER, 1e-300, 1, 0, 0},
                {"lambda", OPT_NUMBER, 1e-300, 1e300, 0, 0}, {"noise_beta", OPT_NUMBER, 0, 10, 0, 0},
                {"min_std", OPT_NUMBER, 0, 1e300, 0, 0}};
  physSampleOptions* s = &mo->sample;
  // the keys of the method: every method noise_beta; cem elite and min_std, mppi lambda
  optKey beta = k[7], floor = k[8];
  if (s->method == PHYS_SAMPLE_MPPI) k[5] = k[6];
  if (s->method == PHYS_SAMPLE_RANDOM) k[5] = beta;
  else k[6] = beta, k[7] = floor;
  int nk = s->method == PHYS_SAMPLE_RANDOM ? 6 : s->method == PHYS_SAMPLE_MPPI ? 7 : 8;
  if (!opt_read_keys(file, mo->name, o, k, nk)) return 0;
  const optKey* kb = s->method == PHYS_SAMPLE_RANDOM ? &k[5] : &k[6];
  if (kb->given) s->noise_beta = kb->value;
  if (nk == 8 && k[7].given) s->min_std = k[7].value;
  if (k[0].given) s->samples = (int)k[0].value;
  if (k[1].given) s->iterations = (int)k[1].value;
  if (k[2].given) s->sigma = k[2].value;
  if (k[3].given) s->seed = (uint64_t)k[3].value;
  if (k[4].given) s->threads = (int)k[4].value;
  if (nk >= 7 && k[5].given) *(s->method == PHYS_SAMPLE_CEM ? &s->elite : &s->lambda) = k[5].value;
  mo->maxiter = s->iterations;
  return 1;
}

// one progress line per iteration on stderr: the best cost, the iteration's mean finite sample cost and how
// many of its samples were finite
static void progress(void* ctx, int k, const physDdpIter* it) {
  const optMethod* mo = ctx;
  if (cli_quiet) return;
  fprintf(stderr, "optimize: %s iter %3d  cost %.9g  mean sample %.9g  finite %d/%d  %.3f ms\n", mo->name, k,
          it->cost, it->alpha, (int)it->feedforward, k ? mo->sample.samples : 1, 1e3 * it->seconds);
}

physStatus opt_sampling_solve(const optMethod* mo, physData* d, physControlProblem* p, physLog* log) {
  return phys_sampling_solve(p, d, &mo->sample, progress, (void*)mo, log);
}

void opt_sampling_result(cJSON* r, const optMethod* mo) {
  const physSampleOptions* s = &mo->sample;
  cJSON* o = cJSON_AddObjectToObject(r, "options");
  cJSON_AddNumberToObject(o, "samples", s->samples);
  cJSON_AddNumberToObject(o, "iterations", s->iterations);
  cJSON_AddNumberToObject(o, "sigma", s->sigma);
  if (s->method == PHYS_SAMPLE_CEM) cJSON_AddNumberToObject(o, "elite", s->elite);
  if (s->method == PHYS_SAMPLE_MPPI) cJSON_AddNumberToObject(o, "lambda", s->lambda);
  if (s->method == PHYS_SAMPLE_CEM) cJSON_AddNumberToObject(o, "min_std", s->min_std);
  cJSON_AddNumberToObject(o, "noise_beta", s->noise_beta);
  cJSON_AddNumberToObject(o, "seed", (double)s->seed);
  cJSON_AddNumberToObject(o, "threads", s->threads);
}
