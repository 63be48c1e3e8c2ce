// superball_com.c - the SUPERball's centre-of-mass error over whole trajectories (issue 16 item 5, paper 002).
//
// superball_com MODEL SUBSTEPS euler|implicit DATA.csv...
//
// Each DATA file is one trajectory at 10 Hz as examples/tensegrity/gen_superball writes it (t,q0..,v0..,u0..,
// and act0.. for a filter model; a MODEL with activations starts from the first row's act0.., one without
// ignores them).
// MODEL (an identified model, e.g. `identify --write-model`) runs from the file's first state with the recorded
// controls held (zero-order hold), SUBSTEPS steps of dt = (sample interval) / SUBSTEPS per interval, with the
// named integrator, over the whole trajectory (5 s), and at every sample it reaches the centre of mass of its
// moving rods is compared with the recorded one. The centre of mass is the mean of the free bodies' frame
// origins (the rods' centres): the CoM when the rods have equal masses, as in the ground truth and in every fit
// that ties the masses (`mass:r*`). Prints one markdown row:
//   | trajectories | mean CoM error (m) | mean at 5 s (m) | max (m) | mean CoM path (m) | mean error / path |
// the means over all compared samples (and, at the end, over trajectories); the path is the recorded CoM's path
// length summed over the samples. A rollout whose state turns non-finite counts as an error of +inf (printed
// "diverged").
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "physid.h"
#include "superball_csv.h"

// com (3) <- the mean of the free joints' positions in qpos (the rods' centres); the number of free joints
static int rod_centre(const physModel* m, const double* qpos, double* com) {
  int n = 0;
  com[0] = com[1] = com[2] = 0;
  for (int j = 0; j < m->njnt; j++) {
    if (m->jnt_type[j] != PHYS_JNT_FREE) continue;
    for (int i = 0; i < 3; i++) com[i] += qpos[m->jnt_qposadr[j] + i];
    n++;
  }
  for (int i = 0; n && i < 3; i++) com[i] /= n;
  return n;
}

typedef struct {
  double sum, end, max, path;   // summed error, summed error at the last sample, largest error, summed path
  int nsample, ntraj;
} comStats;

// rolls m from the first of nrow rows and adds its CoM errors at the rows 1..nrow-1 to s; 0 on success
static int one_trajectory(const physModel* m, physData* d, const double* rows, int nrow, int ncol, int substeps,
                          comStats* s) {
  int nq = m->nq, nv = m->nv, nu = m->nu;
  phys_reset_data(m, d);
  memcpy(d->qpos, rows + 1, sizeof(double) * (size_t)nq);
  memcpy(d->qvel, rows + 1 + nq, sizeof(double) * (size_t)nv);
  if (m->na) memcpy(d->act, rows + 1 + nq + nv + nu, sizeof(double) * (size_t)m->na);
  double c0[3], c1[3], cp[3], err = 0;
  rod_centre(m, rows + 1, cp);
  for (int k = 1; k < nrow; k++) {
    const double* prev = rows + (size_t)(k - 1) * ncol;
    memcpy(d->ctrl, prev + 1 + nq + nv, sizeof(double) * (size_t)nu);
    for (int t = 0; t < substeps; t++) phys_step(m, d);
    rod_centre(m, d->qpos, c0);
    rod_centre(m, rows + (size_t)k * ncol + 1, c1);
    err = sqrt((c0[0] - c1[0]) * (c0[0] - c1[0]) + (c0[1] - c1[1]) * (c0[1] - c1[1]) +
               (c0[2] - c1[2]) * (c0[2] - c1[2]));
    if (!isfinite(err)) err = INFINITY;
    s->path += sqrt((c1[0] - cp[0]) * (c1[0] - cp[0]) + (c1[1] - cp[1]) * (c1[1] - cp[1]) +
                    (c1[2] - cp[2]) * (c1[2] - cp[2]));
    memcpy(cp, c1, sizeof cp);
    s->sum += err, s->max = fmax(s->max, err), s->nsample++;
  }
  s->end += err, s->ntraj++;
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 5 || atoi(argv[2]) < 1 || (strcmp(argv[3], "euler") && strcmp(argv[3], "implicit"))) {
    fprintf(stderr, "usage: superball_com MODEL SUBSTEPS euler|implicit DATA.csv...\n");
    return 2;
  }
  physLog log = {0};
  physModel* m = phys_load(argv[1], NULL, &log);
  if (!m) {
    fprintf(stderr, "superball_com: %s\n", log.error);
    return 1;
  }
  m->opt.integrator = strcmp(argv[3], "euler") ? PHYS_INT_IMPLICIT : PHYS_INT_EULER;
  int substeps = atoi(argv[2]), ncol = 1 + m->nq + m->nv + m->nu + m->na, rc = 0;
  double* rows = malloc(sizeof(double) * (size_t)SUPERBALL_MAXROW * ncol);
  physData* d = phys_make_data(m);
  comStats s = {0};
  for (int f = 4; f < argc && !rc; f++) {
    int nrow = superball_read_rows(argv[f], ncol, rows);
    if (nrow < 2) {
      fprintf(stderr, "superball_com: %s: fewer than 2 rows of %d numbers\n", argv[f], ncol);
      rc = 1;
      break;
    }
    m->opt.timestep = (rows[ncol] - rows[0]) / substeps;
    rc = one_trajectory(m, d, rows, nrow, ncol, substeps, &s);
  }
  if (!rc) {
    if (isfinite(s.sum))
      printf("| %d | %.3g | %.3g | %.3g | %.3g | %.3g |\n", s.ntraj, s.sum / s.nsample, s.end / s.ntraj, s.max,
             s.path / s.ntraj, s.sum / s.nsample / (s.path / s.ntraj));
    else
      printf("| %d | diverged | diverged | diverged | %.3g | - |\n", s.ntraj, s.path / s.ntraj);
  }
  phys_free_data(d);
  phys_free_model(m);
  free(rows);
  return rc;
}
