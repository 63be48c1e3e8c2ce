// bench_fit_eval.c - the cost of one evaluation of identify's loss per trajectory (issue 21 item 4, the cost model
// in docs/performance.md, *Identification on many processes*): on the first NFILES recorded trajectories of DATA,
// identify's fit of the cube (kstep over 10 samples, weights 1000/m, 100/rad, velocities 0, lcp, the sample interval
// over the model's timestep as substeps; one thread), the median over ROUNDS of the CPU time of an evaluation with
// the residual Jacobian (phys_fit_residuals with J: what an accepted Levenberg-Marquardt step evaluates) and of one
// without it (phys_fit_loss: a trial step), each divided by the trajectories; and the residual rows per trajectory.
// Not a test: scripts/cost_model_mpi.sh turns these figures into the model's predictions.
//
// usage: bench_fit_eval MODEL DATA NFILES PARAMS [ROUNDS]   (PARAMS: comma-separated specs; ROUNDS default 5)
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "physid.h"
#include "params.h"
#include "sysid.h"

#define MAXP 16
#define MAXROUNDS 101

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);   // (CPU time: one thread; wall time on a shared machine drifts)
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

// the median of x (n, sorted in place)
static double median(double* x, int n) {
  qsort(x, (size_t)n, sizeof(double), cmp);
  return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

int main(int argc, char** argv) {
  if (argc != 5 && argc != 6) {
    fprintf(stderr, "usage: bench_fit_eval MODEL DATA NFILES PARAMS [ROUNDS]\n");
    return 2;
  }
  int rounds = argc == 6 ? atoi(argv[5]) : 5;
  if (rounds < 1 || rounds > MAXROUNDS) rounds = 5;
  physLog log = {0};
  physModel* m = phys_load(argv[1], NULL, &log);
  if (!m) {
    fprintf(stderr, "bench_fit_eval: %s\n", log.error);
    return 1;
  }
  m->opt.contact = PHYS_CONTACT_LCP;
  char pbuf[1024], *spec[MAXP];
  snprintf(pbuf, sizeof pbuf, "%s", argv[4]);
  int np = 0;
  for (char* tok = strtok(pbuf, ","); tok && np < MAXP; tok = strtok(NULL, ",")) spec[np++] = tok;
  physParamTable t;
  physDataset ds;
  const char* data[1] = {argv[2]};
  physDataOptions dopt = {0};
  dopt.max_files = atoi(argv[3]);
  if (phys_param_table_build(&t, m, (const char**)spec, np, &log) != PHYS_OK ||
      phys_dataset_load(&ds, m, data, 1, &dopt, &log) != PHYS_OK) {
    fprintf(stderr, "bench_fit_eval: %s\n", log.error);
    return 1;
  }
  physFitOptions opt;
  phys_fit_defaults(&opt);
  opt.loss = PHYS_LOSS_KSTEP, opt.horizon = 10, opt.w_pos = 1000, opt.w_rot = 100, opt.w_vel = 0;
  opt.substeps = phys_fit_default_substeps(ds.dt_obs, m->opt.timestep, NULL, 0);
  double theta[MAXP * 16], tj[MAXROUNDS], tf[MAXROUNDS], loss = 0;
  phys_param_get(&t, m, theta);
  int nres = phys_fit_nres(m, &t, &ds, &opt, &log), n = t.ntheta;
  double* r = nres > 0 ? malloc(sizeof(double) * (size_t)nres * (1 + (size_t)n)) : NULL;
  int ok = r != NULL;
  for (int k = 0; ok && k < rounds; k++) {
    double t0 = now();
    ok = phys_fit_residuals(m, &t, theta, NULL, &ds, &opt, r, r + nres, &log) == PHYS_OK;
    double t1 = now();
    ok = ok && phys_fit_loss(m, &t, theta, NULL, &ds, &opt, &loss, &log) == PHYS_OK;
    tj[k] = t1 - t0, tf[k] = now() - t1;
  }
  if (!ok) {
    fprintf(stderr, "bench_fit_eval: %s\n", log.error[0] ? log.error : "out of memory");
    return 1;
  }
  int G = ds.ntraj;
  printf("trajectories %d\nparameters %d\nrows_per_trajectory %.6g\nsubsteps %d\nloss %.9g\n", G, n,
         (double)nres / G, opt.substeps, loss);
  printf("eval_jacobian_us_per_trajectory %.6g\neval_loss_us_per_trajectory %.6g\n", 1e6 * median(tj, rounds) / G,
         1e6 * median(tf, rounds) / G);
  free(r);
  phys_dataset_free(&ds);
  phys_param_table_free(&t);
  phys_free_model(m);
  return 0;
}
