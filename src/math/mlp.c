// mlp.c - the multilayer perceptron of mlp.h: forward pass, input JVP, reverse mode w.r.t. input and weights,
// one sample by cblas_dgemv and cblas_dger, a batch by cblas_dgemm.
#include "mlp.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

physMlp* phys_mlp_alloc(int nlayer, const int* size, physMlpAct act, char* err, size_t errlen) {
  if (nlayer < 1 || nlayer > PHYS_MLP_MAXLAYER) {
    snprintf(err, errlen, "network: %d layers (1 to %d)", nlayer, PHYS_MLP_MAXLAYER);
    return NULL;
  }
  if (act != PHYS_MLP_RELU && act != PHYS_MLP_TANH) {
    snprintf(err, errlen, "network: unknown activation %d", (int)act);
    return NULL;
  }
  long np = 0;
  for (int l = 0; l <= nlayer; l++) {
    if (size[l] < 1 || size[l] > PHYS_MLP_MAXWIDTH) {
      snprintf(err, errlen, "network: layer width %d (1 to %d)", size[l], PHYS_MLP_MAXWIDTH);
      return NULL;
    }
    if (l > 0) np += (long)size[l] * (size[l - 1] + 1);
  }
  physMlp* n = calloc(1, sizeof(physMlp));
  double* w = calloc((size_t)np, sizeof(double));
  if (!n || !w) {
    free(n);
    free(w);
    snprintf(err, errlen, "network: out of memory (%ld weights)", np);
    return NULL;
  }
  n->nlayer = nlayer;
  memcpy(n->size, size, sizeof(int) * (size_t)(nlayer + 1));
  n->act = act;
  n->nparam = (int)np;
  n->w = w;
  return n;
}

void phys_mlp_free(physMlp* n) {
  if (!n) return;
  free(n->w);
  free(n);
}

physMlp* phys_mlp_copy(const physMlp* n) {
  char err[128];
  physMlp* c = phys_mlp_alloc(n->nlayer, n->size, n->act, err, sizeof(err));
  if (c) memcpy(c->w, n->w, sizeof(double) * (size_t)n->nparam);
  return c;
}

const char* phys_mlp_act_name(physMlpAct a) { return a == PHYS_MLP_TANH ? "tanh" : "relu"; }

int phys_mlp_act_parse(const char* name) {
  if (!strcmp(name, "relu")) return PHYS_MLP_RELU;
  if (!strcmp(name, "tanh")) return PHYS_MLP_TANH;
  return -1;
}

int phys_mlp_woff(const physMlp* n, int l) {
  int off = 0;
  for (int k = 0; k < l; k++) off += n->size[k + 1] * (n->size[k] + 1);
  return off;
}

int phys_mlp_boff(const physMlp* n, int l) { return phys_mlp_woff(n, l) + n->size[l + 1] * n->size[l]; }

void phys_mlp_randomize(physMlp* n, physRng* rng, double out_scale) {
  for (int l = 0; l < n->nlayer; l++) {
    double s = 1 / sqrt((double)n->size[l]) * (l == n->nlayer - 1 ? out_scale : 1);
    double* w = n->w + phys_mlp_woff(n, l);
    int cnt = n->size[l + 1] * (n->size[l] + 1);   // W_l and b_l are contiguous
    for (int i = 0; i < cnt; i++) w[i] = phys_rng_range(rng, -s, s);
  }
}

int phys_mlp_nact(const physMlp* n) {
  int s = 0;
  for (int l = 1; l < n->nlayer; l++) s += n->size[l];
  return s;
}

int phys_mlp_nwork(const physMlp* n) {
  int w = 0;
  for (int l = 0; l <= n->nlayer; l++) w = n->size[l] > w ? n->size[l] : w;
  return 2 * w;
}

// h = act(h) in place (n values)
static void activate(physMlpAct a, double* h, int n) {
  if (a == PHYS_MLP_TANH) {
    for (int i = 0; i < n; i++) h[i] = tanh(h[i]);
  } else {
    for (int i = 0; i < n; i++) h[i] = h[i] > 0 ? h[i] : 0;
  }
}

// g *= act'(z) at the layer output h = act(z) (n values)
static void scale_by_slope(physMlpAct a, const double* h, double* g, int n) {
  if (a == PHYS_MLP_TANH) {
    for (int i = 0; i < n; i++) g[i] *= 1 - h[i] * h[i];
  } else {
    for (int i = 0; i < n; i++) g[i] = h[i] > 0 ? g[i] : 0;
  }
}

// out = W_l in + b_l for one sample
static void layer_affine(const physMlp* n, int l, const double* in, double* out) {
  int r = n->size[l + 1], c = n->size[l];
  memcpy(out, n->w + phys_mlp_boff(n, l), sizeof(double) * (size_t)r);
  cblas_dgemv(CblasRowMajor, CblasNoTrans, r, c, 1.0, n->w + phys_mlp_woff(n, l), c, in, 1, 1.0, out, 1);
}

void phys_mlp_forward(const physMlp* n, const double* x, double* y, double* act) {
  const double* in = x;
  double* h = act;
  for (int l = 0; l < n->nlayer; l++) {
    int last = l == n->nlayer - 1;
    double* out = last ? y : h;
    layer_affine(n, l, in, out);
    if (!last) {
      activate(n->act, out, n->size[l + 1]);
      in = out;
      h += n->size[l + 1];
    }
  }
}

// the hidden activations h_l (l >= 1) of one sample inside act
static const double* hidden(const physMlp* n, const double* act, int l) {
  int off = 0;
  for (int k = 1; k < l; k++) off += n->size[k];
  return act + off;
}

void phys_mlp_jvp(const physMlp* n, const double* act, const double* xdot, double* ydot, double* work) {
  int half = phys_mlp_nwork(n) / 2;
  double *a = work, *b = work + half;
  memcpy(a, xdot, sizeof(double) * (size_t)n->size[0]);
  for (int l = 0; l < n->nlayer; l++) {
    int r = n->size[l + 1], c = n->size[l], last = l == n->nlayer - 1;
    double* out = last ? ydot : b;
    cblas_dgemv(CblasRowMajor, CblasNoTrans, r, c, 1.0, n->w + phys_mlp_woff(n, l), c, a, 1, 0.0, out, 1);
    if (!last) {
      scale_by_slope(n->act, hidden(n, act, l + 1), out, r);
      double* t = a;
      a = b, b = t;
    }
  }
}

void phys_mlp_vjp(const physMlp* n, const double* x, const double* act, const double* ybar, double* xbar,
                  double* wbar, double* work) {
  int half = phys_mlp_nwork(n) / 2;
  double *g = work, *gp = work + half;   // the adjoint of layer l's output, of its input
  memcpy(g, ybar, sizeof(double) * (size_t)n->size[n->nlayer]);
  for (int l = n->nlayer - 1; l >= 0; l--) {
    int r = n->size[l + 1], c = n->size[l];
    const double* in = l == 0 ? x : hidden(n, act, l);
    const double* W = n->w + phys_mlp_woff(n, l);
    if (wbar) {
      // dW_l += g in', db_l += g
      cblas_dger(CblasRowMajor, r, c, 1.0, g, 1, in, 1, wbar + phys_mlp_woff(n, l), c);
      double* bb = wbar + phys_mlp_boff(n, l);
      for (int i = 0; i < r; i++) bb[i] += g[i];
    }
    if (l == 0) {
      if (xbar) cblas_dgemv(CblasRowMajor, CblasTrans, r, c, 1.0, W, c, g, 1, 0.0, xbar, 1);
      break;
    }
    cblas_dgemv(CblasRowMajor, CblasTrans, r, c, 1.0, W, c, g, 1, 0.0, gp, 1);
    scale_by_slope(n->act, in, gp, c);
    double* t = g;
    g = gp, gp = t;
  }
}

// the block of layer l's activations (l >= 1) of a batch of nb inside act
static const double* hidden_batch(const physMlp* n, int nb, const double* act, int l) {
  return act + (size_t)nb * (size_t)(hidden(n, act, l) - act);
}

void phys_mlp_forward_batch(const physMlp* n, int nb, const double* X, double* Y, double* act) {
  const double* in = X;
  for (int l = 0; l < n->nlayer; l++) {
    int r = n->size[l + 1], c = n->size[l], last = l == n->nlayer - 1;
    double* out = last ? Y : (double*)hidden_batch(n, nb, act, l + 1);
    const double* b = n->w + phys_mlp_boff(n, l);
    for (int s = 0; s < nb; s++) memcpy(out + (size_t)s * r, b, sizeof(double) * (size_t)r);
    // out (nb x r) += in (nb x c) W_l' (c x r)
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, nb, r, c, 1.0, in, c, n->w + phys_mlp_woff(n, l), c,
                1.0, out, r);
    if (!last) {
      activate(n->act, out, nb * r);
      in = out;
    }
  }
}

void phys_mlp_vjp_batch(const physMlp* n, int nb, const double* X, const double* act, const double* Ybar,
                        double* Xbar, double* wbar, double* work) {
  size_t half = (size_t)nb * (size_t)(phys_mlp_nwork(n) / 2);
  double *G = work, *Gp = work + half;
  memcpy(G, Ybar, sizeof(double) * (size_t)nb * (size_t)n->size[n->nlayer]);
  for (int l = n->nlayer - 1; l >= 0; l--) {
    int r = n->size[l + 1], c = n->size[l];
    const double* in = l == 0 ? X : hidden_batch(n, nb, act, l);
    const double* W = n->w + phys_mlp_woff(n, l);
    if (wbar) {
      // dW_l (r x c) += G' (r x nb) in (nb x c); db_l += the column sums of G
      cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, r, c, nb, 1.0, G, r, in, c, 1.0,
                  wbar + phys_mlp_woff(n, l), c);
      double* bb = wbar + phys_mlp_boff(n, l);
      for (int s = 0; s < nb; s++)
        for (int i = 0; i < r; i++) bb[i] += G[(size_t)s * r + i];
    }
    if (l == 0 && !Xbar) break;
    // Gp (nb x c) = G (nb x r) W_l (r x c)
    double* dst = l == 0 ? Xbar : Gp;
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, nb, c, r, 1.0, G, r, W, c, 0.0, dst, c);
    if (l == 0) break;
    scale_by_slope(n->act, in, Gp, nb * c);
    double* t = G;
    G = Gp, Gp = t;
  }
}
