// test_mlp.c - the network of mlp.h: forward pass against a plain loop over the layers, the input JVP against
// central differences, the reverse mode against the JVP (dot-product test) and the weight gradient against
// central differences; the batch passes against the one-sample passes; size errors.
#include <string.h>

#include "mlp.h"
#include "rng.h"
#include "test.h"

// y = the network at x by plain loops (the reference of the CBLAS passes)
static void forward_plain(const physMlp* n, const double* x, double* y) {
  double a[64], b[64];
  memcpy(a, x, sizeof(double) * (size_t)n->size[0]);
  for (int l = 0; l < n->nlayer; l++) {
    const double* W = n->w + phys_mlp_woff(n, l);
    const double* bb = n->w + phys_mlp_boff(n, l);
    for (int i = 0; i < n->size[l + 1]; i++) {
      double s = bb[i];
      for (int j = 0; j < n->size[l]; j++) s += W[i * n->size[l] + j] * a[j];
      if (l < n->nlayer - 1) s = n->act == PHYS_MLP_TANH ? tanh(s) : (s > 0 ? s : 0);
      b[i] = s;
    }
    memcpy(a, b, sizeof(double) * (size_t)n->size[l + 1]);
  }
  memcpy(y, a, sizeof(double) * (size_t)n->size[n->nlayer]);
}

static double dot(const double* a, const double* b, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}

static void check_net(physMlpAct act, int nlayer, const int* size, uint64_t seed) {
  char err[128];
  physMlp* n = phys_mlp_alloc(nlayer, size, act, err, sizeof(err));
  CHECK(n != NULL);
  if (!n) return;
  physRng r;
  phys_rng_seed(&r, seed);
  phys_mlp_randomize(n, &r, 1.0);
  int nx = size[0], ny = size[nlayer];
  double x[64], y[64], yp[64], ym[64], yref[64], act0[256], actp[256], work[128];
  double xdot[64], ydot[64], ybar[64], xbar[64];
  for (int i = 0; i < nx; i++) x[i] = phys_rng_range(&r, -1, 1);
  phys_mlp_forward(n, x, y, act0);
  forward_plain(n, x, yref);
  double e = 0;
  for (int i = 0; i < ny; i++) e = fmax(e, fabs(y[i] - yref[i]));
  CHECK_MSG(e <= 1e-14, "%s forward vs plain loops: %.3g", phys_mlp_act_name(act), e);

  // JVP vs central differences along a random direction
  for (int i = 0; i < nx; i++) xdot[i] = phys_rng_range(&r, -1, 1);
  phys_mlp_jvp(n, act0, xdot, ydot, work);
  double h = 1e-6, xp[64], xm[64];
  for (int i = 0; i < nx; i++) xp[i] = x[i] + h * xdot[i], xm[i] = x[i] - h * xdot[i];
  phys_mlp_forward(n, xp, yp, actp);
  phys_mlp_forward(n, xm, ym, actp);
  e = 0;
  double sc = 0;
  for (int i = 0; i < ny; i++) e = fmax(e, fabs((yp[i] - ym[i]) / (2 * h) - ydot[i])), sc = fmax(sc, fabs(ydot[i]));
  CHECK_MSG(e <= 1e-7 * (1 + sc), "%s JVP vs central differences: %.3g (scale %.3g)", phys_mlp_act_name(act), e, sc);

  // dot-product test <ybar, J xdot> = <J' ybar, xdot>
  for (int i = 0; i < ny; i++) ybar[i] = phys_rng_range(&r, -1, 1);
  double* wbar = calloc((size_t)n->nparam, sizeof(double));
  phys_mlp_vjp(n, x, act0, ybar, xbar, wbar, work);
  double lhs = dot(ybar, ydot, ny), rhs = dot(xbar, xdot, nx);
  CHECK_MSG(fabs(lhs - rhs) <= 1e-13 * (fabs(lhs) + 1), "%s dot-product test: %.17g vs %.17g", phys_mlp_act_name(act),
            lhs, rhs);

  // weight gradient of ybar'y vs central differences, every 7th weight
  double emax = 0;
  for (int k = 0; k < n->nparam; k += 7) {
    double w0 = n->w[k];
    n->w[k] = w0 + h;
    phys_mlp_forward(n, x, yp, actp);
    n->w[k] = w0 - h;
    phys_mlp_forward(n, x, ym, actp);
    n->w[k] = w0;
    double fd = (dot(ybar, yp, ny) - dot(ybar, ym, ny)) / (2 * h);
    emax = fmax(emax, fabs(fd - wbar[k]));
  }
  CHECK_MSG(emax <= 1e-7, "%s weight gradient vs central differences: %.3g", phys_mlp_act_name(act), emax);

  // a batch of 5 samples: forward and the summed reverse mode against the one-sample passes
  enum { NB = 5 };
  double X[NB * 64], Y[NB * 64], A[NB * 256], Yb[NB * 64], Xb[NB * 64], W[NB * 128];
  for (int i = 0; i < NB * nx; i++) X[i] = phys_rng_range(&r, -1, 1);
  for (int i = 0; i < NB * ny; i++) Yb[i] = phys_rng_range(&r, -1, 1);
  phys_mlp_forward_batch(n, NB, X, Y, A);
  double* wb1 = calloc((size_t)n->nparam, sizeof(double));
  double* wb2 = calloc((size_t)n->nparam, sizeof(double));
  phys_mlp_vjp_batch(n, NB, X, A, Yb, Xb, wb1, W);
  double ey = 0, ex = 0, ew = 0;
  for (int s = 0; s < NB; s++) {
    phys_mlp_forward(n, X + s * nx, y, act0);
    phys_mlp_vjp(n, X + s * nx, act0, Yb + s * ny, xbar, wb2, work);
    for (int i = 0; i < ny; i++) ey = fmax(ey, fabs(y[i] - Y[s * ny + i]));
    for (int i = 0; i < nx; i++) ex = fmax(ex, fabs(xbar[i] - Xb[s * nx + i]));
  }
  for (int k = 0; k < n->nparam; k++) ew = fmax(ew, fabs(wb1[k] - wb2[k]));
  CHECK_MSG(ey <= 1e-14 && ex <= 1e-14 && ew <= 1e-13, "%s batch vs single: y %.3g, xbar %.3g, wbar %.3g",
            phys_mlp_act_name(act), ey, ex, ew);
  free(wb1);
  free(wb2);
  free(wbar);
  phys_mlp_free(n);
}

int main(void) {
  int s3[4] = {7, 16, 12, 4}, s5[6] = {5, 9, 9, 9, 9, 3}, s1[2] = {6, 2};
  check_net(PHYS_MLP_RELU, 3, s3, 1);
  check_net(PHYS_MLP_TANH, 3, s3, 2);
  check_net(PHYS_MLP_TANH, 5, s5, 3);
  check_net(PHYS_MLP_RELU, 1, s1, 4);

  // the output layer scaled by 0: the zero function
  physRng r;
  phys_rng_seed(&r, 5);
  char err[128];
  physMlp* n = phys_mlp_alloc(3, s3, PHYS_MLP_RELU, err, sizeof(err));
  phys_mlp_randomize(n, &r, 0);
  double x[7] = {1, 2, 3, 4, 5, 6, 7}, y[4], act[28];
  phys_mlp_forward(n, x, y, act);
  CHECK(y[0] == 0 && y[1] == 0 && y[2] == 0 && y[3] == 0);
  CHECK(phys_mlp_nact(n) == 28 && phys_mlp_nwork(n) == 32 && n->nparam == 16 * 8 + 12 * 17 + 4 * 13);
  phys_mlp_free(n);

  // size errors
  int bad[3] = {4, 0, 2};
  CHECK(phys_mlp_alloc(2, bad, PHYS_MLP_RELU, err, sizeof(err)) == NULL);
  CHECK_MSG(strstr(err, "layer width 0") != NULL, "message: %s", err);
  CHECK(phys_mlp_alloc(0, bad, PHYS_MLP_RELU, err, sizeof(err)) == NULL);
  CHECK_MSG(strstr(err, "0 layers") != NULL, "message: %s", err);
  CHECK(phys_mlp_act_parse("tanh") == PHYS_MLP_TANH && phys_mlp_act_parse("relu") == PHYS_MLP_RELU);
  CHECK(phys_mlp_act_parse("sigmoid") == -1);
  return test_done();
}
