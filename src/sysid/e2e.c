// e2e.c - the end-to-end baseline of e2e.h: minibatch Adam on the next-velocity loss, and its rollout step.
#include "e2e.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "residual.h"
#include "rng.h"

void phys_e2e_defaults(physE2eOptions* o) {
  memset(o, 0, sizeof(*o));
  o->epochs = 100;
  o->batch = 256;
  o->lr = 1e-3;
  o->seed = 1;
}

physMlp* phys_e2e_alloc(const physModel* m, int nhidden, int width, uint64_t seed, char* err, size_t errlen) {
  int size[PHYS_MLP_MAXLAYER + 1];
  if (nhidden < 0 || nhidden + 1 > PHYS_MLP_MAXLAYER) {
    snprintf(err, errlen, "end-to-end network: %d hidden layers (0 to %d)", nhidden, PHYS_MLP_MAXLAYER - 1);
    return NULL;
  }
  size[0] = phys_residual_nfeature(m);
  for (int l = 1; l <= nhidden; l++) size[l] = width;
  size[nhidden + 1] = m->nv;
  physMlp* n = phys_mlp_alloc(nhidden + 1, size, PHYS_MLP_TANH, err, errlen);
  if (!n) return NULL;
  physRng r;
  phys_rng_seed(&r, seed);
  phys_mlp_randomize(n, &r, 1);
  return n;
}

// the transitions of ds as (trajectory, sample) pairs in order; count returned (*idx malloc'd, NULL on no memory)
static int transitions(const physDataset* ds, int** idx) {
  int n = 0;
  for (int k = 0; k < ds->ntraj; k++) n += ds->traj[k].T > 1 ? ds->traj[k].T - 1 : 0;
  *idx = malloc(sizeof(int) * 2 * (size_t)(n + 1));
  if (!*idx) return 0;
  int c = 0;
  for (int k = 0; k < ds->ntraj; k++)
    for (int s = 0; s + 1 < ds->traj[k].T; s++) (*idx)[2 * c] = k, (*idx)[2 * c + 1] = s, c++;
  return n;
}

// rows of X (features) and V (next velocities) of the transitions order[b0 .. b0+nb)
static void batch_rows(const physModel* m, const physDataset* ds, const int* idx, const int* order, int b0, int nb,
                       int nf, double* X, double* V) {
  for (int i = 0; i < nb; i++) {
    int c = order ? order[b0 + i] : b0 + i, k = idx[2 * c], s = idx[2 * c + 1];
    const physTrajectory* tr = ds->traj + k;
    phys_residual_features(m, tr->qpos + (size_t)s * m->nq, tr->qvel + (size_t)s * m->nv, X + (size_t)i * nf);
    memcpy(V + (size_t)i * m->nv, tr->qvel + (size_t)(s + 1) * m->nv, sizeof(double) * (size_t)m->nv);
  }
}

// the work of a batch of nb: X, Y, V, activations, Ybar, backward scratch
typedef struct e2eWork_ {
  double *X, *Y, *V, *act, *Yb, *work;
} e2eWork;

static int work_alloc(e2eWork* w, const physMlp* n, int nb) {
  size_t b = (size_t)nb;
  w->X = malloc(sizeof(double) * b * (size_t)n->size[0]);
  w->Y = malloc(sizeof(double) * b * (size_t)n->size[n->nlayer]);
  w->V = malloc(sizeof(double) * b * (size_t)n->size[n->nlayer]);
  w->Yb = malloc(sizeof(double) * b * (size_t)n->size[n->nlayer]);
  w->act = malloc(sizeof(double) * (b * (size_t)phys_mlp_nact(n) + 1));
  w->work = malloc(sizeof(double) * b * (size_t)phys_mlp_nwork(n));
  return w->X && w->Y && w->V && w->Yb && w->act && w->work;
}

static void work_free(e2eWork* w) { free(w->X), free(w->Y), free(w->V), free(w->Yb), free(w->act), free(w->work); }

// sum over the batch of 1/2 |Y - V|^2; Yb = (Y - V) scale
static double batch_loss(const physMlp* n, int nb, e2eWork* w, double scale) {
  int ny = n->size[n->nlayer];
  double s = 0;
  for (size_t i = 0; i < (size_t)nb * ny; i++) {
    double e = w->Y[i] - w->V[i];
    s += 0.5 * e * e;
    w->Yb[i] = e * scale;
  }
  return s;
}

double phys_e2e_loss(const physModel* m, const physMlp* n, const physDataset* ds) {
  int* idx;
  int N = transitions(ds, &idx), B = 256;
  e2eWork w;
  double L = 0;
  if (idx && N > 0 && work_alloc(&w, n, B)) {
    for (int b0 = 0; b0 < N; b0 += B) {
      int nb = N - b0 < B ? N - b0 : B;
      batch_rows(m, ds, idx, NULL, b0, nb, n->size[0], w.X, w.V);
      phys_mlp_forward_batch(n, nb, w.X, w.Y, w.act);
      L += batch_loss(n, nb, &w, 0);
    }
    work_free(&w);
  } else {
    L = NAN;
  }
  free(idx);
  return L / N;
}

physStatus phys_e2e_train(const physModel* m, physMlp* n, const physDataset* ds, const physE2eOptions* o,
                          double* hist, physLog* log) {
  if (n->size[0] != phys_residual_nfeature(m) || n->size[n->nlayer] != m->nv)
    return phys_error(log, PHYS_ERR_SIZE, "end-to-end network: maps %d to %d values; the model needs %d to %d",
                      n->size[0], n->size[n->nlayer], phys_residual_nfeature(m), m->nv);
  int* idx;
  int N = transitions(ds, &idx), B = o->batch > 0 ? o->batch : 256, np = n->nparam;
  if (N <= 0) {
    free(idx);
    return phys_error(log, PHYS_ERR_SIZE, "end-to-end training: the data have no transition");
  }
  e2eWork w;
  int* order = malloc(sizeof(int) * (size_t)N);
  double* buf = calloc(3 * (size_t)np, sizeof(double));
  int ok = order && buf && idx && work_alloc(&w, n, B);
  if (!ok) {
    free(idx), free(order), free(buf);
    return phys_error(log, PHYS_ERR_NOMEM, "end-to-end training: out of memory");
  }
  double *g = buf, *mo = buf + np, *ve = buf + 2 * (size_t)np;
  physRng rng;
  phys_rng_seed(&rng, o->seed);
  for (int i = 0; i < N; i++) order[i] = i;
  if (hist) hist[0] = phys_e2e_loss(m, n, ds);
  int it = 0;
  for (int ep = 1; ep <= o->epochs; ep++) {
    for (int i = N - 1; i > 0; i--) {   // Fisher-Yates from the seeded generator
      int j = (int)(phys_rng_next(&rng) % (uint64_t)(i + 1)), t = order[i];
      order[i] = order[j], order[j] = t;
    }
    for (int b0 = 0; b0 < N; b0 += B) {
      int nb = N - b0 < B ? N - b0 : B;
      batch_rows(m, ds, idx, order, b0, nb, n->size[0], w.X, w.V);
      phys_mlp_forward_batch(n, nb, w.X, w.Y, w.act);
      batch_loss(n, nb, &w, 1.0 / nb);
      memset(g, 0, sizeof(double) * (size_t)np);
      phys_mlp_vjp_batch(n, nb, w.X, w.act, w.Yb, NULL, g, w.work);
      // Adam
      it++;
      double c1 = 1 - pow(0.9, it), c2 = 1 - pow(0.999, it);
      for (int i = 0; i < np; i++) {
        mo[i] = 0.9 * mo[i] + 0.1 * g[i];
        ve[i] = 0.999 * ve[i] + 0.001 * g[i] * g[i];
        n->w[i] -= o->lr * (mo[i] / c1) / (sqrt(ve[i] / c2) + 1e-8);
      }
    }
    if (hist || o->verbose) {
      double L = phys_e2e_loss(m, n, ds);
      if (hist) hist[ep] = L;
      if (o->verbose && ep % 10 == 0) fprintf(stderr, "physid: end-to-end: epoch %d loss %.9g\n", ep, L);
    }
  }
  work_free(&w);
  free(idx), free(order), free(buf);
  return PHYS_OK;
}

int phys_e2e_nwork(const physModel* m, const physMlp* n) { return n->size[0] + phys_mlp_nact(n) + m->nv + 1; }

void phys_e2e_step(const physModel* m, const physMlp* n, double dt, double* qpos, double* qvel, double* work) {
  double *phi = work, *act = work + n->size[0], *v = act + phys_mlp_nact(n);
  phys_residual_features(m, qpos, qvel, phi);
  phys_mlp_forward(n, phi, v, act);
  memcpy(qvel, v, sizeof(double) * (size_t)m->nv);
  phys_integrate_pos(m, qpos, qvel, dt);
}
