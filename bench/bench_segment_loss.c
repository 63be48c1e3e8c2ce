// bench_segment_loss.c - the kstep loss split by segment (issue 12; docs/identification.md, *Defaults from the data*):
// at parameter values THETA, identify's loss for data with differenced velocities (kstep, horizon 30, on positions:
// weights 1000, 100, 0) with the segment starts at the recorded samples and fitted (phys_fit_residuals, opt.fit_start
// 0 and 1), summed per segment: the total, the K largest segments and the rest. With THETA_TO and N, the largest
// segment's loss (both ways) at N + 1 points on the line from THETA to THETA_TO. Not a test: it prints the figures
// the manual quotes (scripts/segment_loss.sh runs it on the exact simulated tosses).
//
// usage: bench_segment_loss MODEL DATA PARAMS THETA [THETA_TO N]
//   PARAMS  comma-separated parameter specs (friction:cube,restitution:cube)
//   THETA   comma-separated values, one per parameter value
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "physid.h"
#include "params.h"
#include "sysid.h"

#define MAXP 16   // parameters
#define TOP 3     // largest segments printed

// split s at commas into at most max pieces (s is modified); returns the count
static int split(char* s, char** out, int max) {
  int n = 0;
  for (char* tok = strtok(s, ","); tok && n < max; tok = strtok(NULL, ",")) out[n++] = tok;
  return n;
}

// comma-separated numbers into x; returns the count
static int numbers(const char* text, double* x, int max) {
  char buf[1024], *piece[MAXP];
  snprintf(buf, sizeof buf, "%s", text);
  int n = split(buf, piece, max);
  for (int i = 0; i < n; i++) x[i] = strtod(piece[i], NULL);
  return n;
}

// the loss of every segment (seg, ds's segments in order: trajectory by trajectory, from sample 0) at theta with
// fit_start; the segment count, -1 on error (message printed)
static int segment_losses(physModel* m, const physParamTable* t, const physDataset* ds, const double* theta,
                          int fit_start, double* seg, int maxseg) {
  physFitOptions opt;
  phys_fit_defaults(&opt);
  opt.loss = PHYS_LOSS_KSTEP, opt.horizon = 30, opt.w_vel = 0, opt.fit_start = fit_start;
  physLog log = {0};
  int nres = phys_fit_nres(m, t, ds, &opt, &log);
  double* r = nres > 0 ? malloc(sizeof(double) * (size_t)nres) : NULL;
  if (!r || phys_fit_residuals(m, t, theta, NULL, ds, &opt, r, NULL, &log) != PHYS_OK) {
    fprintf(stderr, "bench_segment_loss: %s\n", log.error);
    free(r);
    return -1;
  }
  // rows: per trajectory (T - 1) nsel data rows (sample s in segment (s - 1) / h), then nseg nvf tie rows
  int nvf = phys_fit_start_layout(m, ds, &opt, NULL, NULL), ntrans = 0, nties = 0;
  for (int k = 0; k < ds->ntraj; k++) {
    int T = ds->traj[k].T;
    ntrans += T - 1, nties += (T - 1 + opt.horizon - 1) / opt.horizon * nvf;
  }
  int nsel = (nres - nties) / ntrans, nseg = 0, row = 0;
  for (int k = 0; k < ds->ntraj; k++) {
    int T = ds->traj[k].T, ns = (T - 1 + opt.horizon - 1) / opt.horizon;
    if (nseg + ns > maxseg) break;
    for (int j = 0; j < ns; j++) seg[nseg + j] = 0;
    for (int s = 1; s < T; s++)
      for (int i = 0; i < nsel; i++, row++) seg[nseg + (s - 1) / opt.horizon] += 0.5 * r[row] * r[row];
    for (int j = 0; j < ns; j++)
      for (int i = 0; i < nvf; i++, row++) seg[nseg + j] += 0.5 * r[row] * r[row];
    nseg += ns;
  }
  free(r);
  return nseg;
}

// trajectory and first sample of segment j (horizon 30)
static void segment_name(const physDataset* ds, int j, int* k, int* s) {
  for (*k = 0; *k < ds->ntraj; (*k)++) {
    int ns = (ds->traj[*k].T - 1 + 29) / 30;
    if (j < ns) break;
    j -= ns;
  }
  *s = 30 * j;
}

// the split at theta with the starts at the samples (0) or fitted (1); the largest segment's index
static int print_split(physModel* m, const physParamTable* t, const physDataset* ds, const double* theta,
                       int fit_start, double* seg, int maxseg) {
  int nseg = segment_losses(m, t, ds, theta, fit_start, seg, maxseg);
  if (nseg < 0) return -1;
  double total = 0;
  for (int j = 0; j < nseg; j++) total += seg[j];
  printf("starts %s: loss %.6g over %d segments;", fit_start ? "fitted" : "at the samples", total, nseg);
  int top[TOP];
  double rest;
  for (int q = 0; q < TOP && q < nseg; q++) {
    top[q] = -1;
    for (int j = 0; j < nseg; j++) {
      int used = 0;
      for (int p = 0; p < q; p++) used |= top[p] == j;
      if (!used && (top[q] < 0 || seg[j] > seg[top[q]])) top[q] = j;
    }
    int k, s;
    segment_name(ds, top[q], &k, &s);
    printf(" trajectory %d from sample %d: %.6g;", k, s, seg[top[q]]);
  }
  rest = 0;   // summed, not subtracted (rounding)
  for (int j = 0; j < nseg; j++) {
    int used = 0;
    for (int q = 0; q < TOP && q < nseg; q++) used |= top[q] == j;
    if (!used) rest += seg[j];
  }
  printf(" the other %d: %.6g\n", nseg - TOP, rest);
  return top[0];
}

int main(int argc, char** argv) {
  if (argc != 5 && argc != 7) {
    fprintf(stderr, "usage: bench_segment_loss MODEL DATA PARAMS THETA [THETA_TO N]\n");
    return 2;
  }
  physLog log = {0};
  physModel* m = phys_load(argv[1], NULL, &log);
  if (!m) {
    fprintf(stderr, "bench_segment_loss: %s\n", log.error);
    return 1;
  }
  char pbuf[1024], *spec[MAXP];
  snprintf(pbuf, sizeof pbuf, "%s", argv[3]);
  int np = split(pbuf, spec, MAXP);
  physParamTable t;
  physDataset ds;
  const char* data[1] = {argv[2]};
  physDataOptions dopt = {0};
  if (phys_param_table_build(&t, m, (const char**)spec, np, &log) != PHYS_OK ||
      phys_dataset_load(&ds, m, data, 1, &dopt, &log) != PHYS_OK) {
    fprintf(stderr, "bench_segment_loss: %s\n", log.error);
    return 1;
  }
  double theta[MAXP], to[MAXP], th[MAXP];
  if (numbers(argv[4], theta, MAXP) != t.ntheta || (argc == 7 && numbers(argv[5], to, MAXP) != t.ntheta)) {
    fprintf(stderr, "bench_segment_loss: THETA and THETA_TO need %d values\n", t.ntheta);
    return 2;
  }
  enum { MAXSEG = 1 << 16 };
  static double seg[MAXSEG];
  printf("theta %s\n", argv[4]);
  print_split(m, &t, &ds, theta, 0, seg, MAXSEG);
  int worst = print_split(m, &t, &ds, theta, 1, seg, MAXSEG);
  if (argc == 7 && worst >= 0) {
    int n = atoi(argv[6]), k, s;
    segment_name(&ds, worst, &k, &s);
    printf("trajectory %d from sample %d on the line to %s (fraction: loss with the starts at the samples, fitted):\n",
           k, s, argv[5]);
    for (int i = 0; i <= n; i++) {
      double f = n > 0 ? (double)i / n : 0, l[2];
      for (int p = 0; p < t.ntheta; p++) th[p] = theta[p] + f * (to[p] - theta[p]);
      for (int fs = 0; fs < 2; fs++) l[fs] = segment_losses(m, &t, &ds, th, fs, seg, MAXSEG) > worst ? seg[worst] : NAN;
      printf("  %.4f: %.6g, %.6g\n", f, l[0], l[1]);
    }
  }
  phys_dataset_free(&ds);
  phys_param_table_free(&t);
  phys_free_model(m);
  return 0;
}
