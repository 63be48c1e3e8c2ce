// test_residual_deriv.c - derivatives of the step's residual acceleration network (src/grad/residual_deriv.c,
// and its terms in the smooth step's Jacobian and reverse mode, src/grad/step_deriv.c):
//  1. the features' tangent JVP against central differences of phi(q (+) h e_j) on mixed.xml (free, ball,
//     slide, hinge), and their VJP by the dot-product test;
//  2. phys_step_jacobian with a residual network against the four-point twin (tanh network on mixed.xml at
//     random states, the paper's 2 x 128 ReLU network on the free body: two-point h = 1e-5, ReLU being piecewise
//     linear); the residual's own share of A is not small (it would fail without the residual's terms);
//  3. phys_step_vjp by the dot-product test against A; phys_residual_vjp's weight gradient against central
//     differences, its state part against phys_residual_jacobian_add;
//  4. the weight gradient of one step (phys_step_vjp_lambda's force adjoint through phys_residual_force_vjp)
//     against central differences of phys_step, contact-free (mixed.xml) and sliding on the floor (ccp, lcp).
// (The constrained step's A and P with a network: test_step_contact_deriv.c, test_box_residual.)
#include "grad_models.h"
#include "mlp.h"
#include "residual.h"
#include "residual_deriv.h"
#include "step.h"

// the two-point step of the ReLU network's test: h^2 |f'''| / 6 and eps |f| / h both near 1e-11 (GM_H = 1e-6
// leaves 1e-10 rounding, 1e-6 of the GM_FLOOR-scaled entries); a pre-activation within h |grad| of 0 (a kink
// crossed) would show as an O(1) error, none at these seeded states
#define RELU_H 1e-5

// a network of the model's sizes (hidden widths w, w), randomized with its output layer scaled by out
static physMlp* attach(physModel* m, int w, physMlpAct act, double out, uint64_t seed) {
  int size[4] = {phys_residual_nfeature(m), w, w, m->nv};
  char err[128];
  physMlp* n = phys_mlp_alloc(3, size, act, err, sizeof(err));
  CHECK(n != NULL);
  physRng r;
  phys_rng_seed(&r, seed);
  phys_mlp_randomize(n, &r, out);
  CHECK(phys_residual_check(m, n, err, sizeof(err)) == NULL);
  m->residual = n;
  return n;
}

static void check_features(const physModel* m, physRng* r) {
  physData* d = phys_make_data(m);
  gm_random_state(m, d, r, 1);
  int nf = phys_residual_nfeature(m), nv = m->nv;
  double *phi_p = malloc(sizeof(double) * nf), *phi_m = malloc(sizeof(double) * nf);
  double *dphi = malloc(sizeof(double) * nf), *e = calloc(2 * nv, sizeof(double));
  double* qp = malloc(sizeof(double) * m->nq);
  double err = 0, h = GM_H;
  for (int j = 0; j < nv; j++) {
    e[j] = 1;
    phys_residual_features_jvp(m, d->qpos, e, e + nv, dphi);
    e[j] = 0;
    gm_perturb(m, qp, d->qpos, j, h);
    phys_residual_features(m, qp, d->qvel, phi_p);
    gm_perturb(m, qp, d->qpos, j, -h);
    phys_residual_features(m, qp, d->qvel, phi_m);
    for (int k = 0; k < nf; k++) err = fmax(err, fabs((phi_p[k] - phi_m[k]) / (2 * h) - dphi[k]));
  }
  CHECK_MSG(err <= 1e-9, "features' tangent JVP vs central differences: %.3g", err);
  // dot-product test over (dq, dv)
  double *x = malloc(sizeof(double) * 2 * nv), *y = malloc(sizeof(double) * nf), *xb = calloc(2 * nv, sizeof(double));
  gm_rand_vec(r, x, 2 * nv);
  gm_rand_vec(r, y, nf);
  phys_residual_features_jvp(m, d->qpos, x, x + nv, dphi);
  phys_residual_features_vjp(m, d->qpos, y, xb, xb + nv);
  double lhs = 0, rhs = 0;
  for (int k = 0; k < nf; k++) lhs += y[k] * dphi[k];
  for (int k = 0; k < 2 * nv; k++) rhs += xb[k] * x[k];
  CHECK_MSG(fabs(lhs - rhs) <= 1e-13 * (1 + fabs(lhs)), "features dot-product test: %.17g vs %.17g", lhs, rhs);
  free(phi_p), free(phi_m), free(dphi), free(e), free(qp), free(x), free(y), free(xb);
  phys_free_data(d);
}

// A against the twin (four-point at GM_H4 if four, else two-point at GM_H), the residual's share of A, and the
// VJP's dot-product test, at a random state
static void check_step(const char* name, physModel* m, physRng* r, int four) {
  int nv = m->nv, n2 = 2 * nv;
  physData* d = phys_make_data(m);
  gm_random_state(m, d, r, 1);
  double *A = malloc(sizeof(double) * n2 * n2), *Af = malloc(sizeof(double) * n2 * n2);
  double *T = malloc(sizeof(double) * n2 * n2), *A0 = malloc(sizeof(double) * n2 * n2);
  double* B = malloc(sizeof(double) * (n2 * m->nu + 1));
  CHECK(phys_step_jacobian(m, d, A, NULL) == PHYS_OK);
  if (four) {
    CHECK(phys_step_jacobian_fd(m, d, GM_H4, Af, NULL) == PHYS_OK);
    CHECK(phys_step_jacobian_fd(m, d, 2 * GM_H4, T, NULL) == PHYS_OK);
    for (int i = 0; i < n2 * n2; i++) Af[i] = (4 * Af[i] - T[i]) / 3;
  } else {
    CHECK(phys_step_jacobian_fd(m, d, RELU_H, Af, NULL) == PHYS_OK);
  }
  char what[96];
  snprintf(what, sizeof what, "%s: A with a residual network vs differences", name);
  gm_compare(what, A, Af, n2, n2, 1, GM_RTOL);
  // without the network, A differs by the residual's share (dt dr/dx in the v+ rows, order dt |dr/dx|)
  physMlp* n = m->residual;
  m->residual = NULL;
  CHECK(phys_step_jacobian(m, d, A0, NULL) == PHYS_OK);
  m->residual = n;
  double share = 0;
  for (int i = 0; i < n2 * n2; i++) share = fmax(share, fabs(A[i] - A0[i]));
  CHECK_MSG(share > 1e3 * GM_RTOL, "%s: the residual's share of A is %.3g", name, share);
  // dot-product test of phys_step_vjp
  double *x = malloc(sizeof(double) * n2), *y = malloc(sizeof(double) * n2), *xb = malloc(sizeof(double) * n2);
  gm_rand_vec(r, x, n2);
  gm_rand_vec(r, y, n2);
  CHECK(phys_step_vjp(m, d, y, xb, NULL) == PHYS_OK);
  double scale, lhs = gm_bilinear(A, y, x, n2, n2, &scale), rhs = 0;
  for (int i = 0; i < n2; i++) rhs += xb[i] * x[i];
  CHECK_MSG(fabs(lhs - rhs) <= GM_DOT_TOL * scale, "%s: step VJP dot-product test %.17g vs %.17g", name, lhs, rhs);
  free(A), free(Af), free(T), free(A0), free(B), free(x), free(y), free(xb);
  phys_free_data(d);
}

// phys_residual_vjp: weights against central differences of rbar' r (every 13th weight), state part against
// phys_residual_jacobian_add
static void check_residual_vjp(physModel* m, physRng* r) {
  int nv = m->nv;
  physMlp* n = m->residual;
  physData* d = phys_make_data(m);
  gm_random_state(m, d, r, 1);
  double *rb = malloc(sizeof(double) * nv), *rp = malloc(sizeof(double) * nv), *rm = malloc(sizeof(double) * nv);
  double* wb = calloc((size_t)n->nparam, sizeof(double));
  double *xb = calloc(2 * nv, sizeof(double)), *J = calloc((size_t)nv * 2 * nv, sizeof(double));
  gm_rand_vec(r, rb, nv);
  phys_residual_vjp(m, d, rb, xb, xb + nv, wb);
  double err = 0, h = GM_H;
  for (int k = 0; k < n->nparam; k += 13) {
    double w0 = n->w[k], sp = 0, sm = 0;
    n->w[k] = w0 + h;
    phys_residual_acc(m, d, rp);
    n->w[k] = w0 - h;
    phys_residual_acc(m, d, rm);
    n->w[k] = w0;
    for (int i = 0; i < nv; i++) sp += rb[i] * rp[i], sm += rb[i] * rm[i];
    err = fmax(err, fabs((sp - sm) / (2 * h) - wb[k]));
  }
  CHECK_MSG(err <= 1e-7, "residual weight gradient vs central differences: %.3g", err);
  phys_residual_jacobian_add(m, d, 1, J, 2 * nv);
  double e2 = 0;
  for (int c = 0; c < 2 * nv; c++) {
    double s = 0;
    for (int i = 0; i < nv; i++) s += rb[i] * J[(size_t)i * 2 * nv + c];
    e2 = fmax(e2, fabs(s - xb[c]));
  }
  CHECK_MSG(e2 <= 1e-12 * (1 + gm_maxabs(xb, 2 * nv)), "residual state VJP vs its Jacobian: %.3g", e2);
  free(rb), free(rp), free(rm), free(wb), free(xb), free(J);
  phys_free_data(d);
}

// the gradient of y' x+ w.r.t. the network's weights (phys_step_vjp_lambda's force adjoint through
// phys_residual_force_vjp) against central differences of phys_step over every 29th weight; contact: the cube
// sliding on the floor (resting depth 1e-4, v = (0.5, 0.2, 0), warm start restored before every step)
static void check_weights(const char* name, physModel* m, physRng* r, int contact) {
  int nv = m->nv, n2 = 2 * nv;
  physMlp* n = m->residual;
  physData* d = phys_make_data(m);
  if (contact) {
    d->qpos[2] = 0.0524 - 1e-4;
    d->qvel[0] = 0.5, d->qvel[1] = 0.2;
    phys_step(m, d);   // (the warm start: this step's contacts)
  } else {
    gm_random_state(m, d, r, 1);
  }
  int ncon = d->ncon;
  physContact* con = malloc(sizeof(physContact) * (size_t)(ncon + 1));
  memcpy(con, d->contact, sizeof(physContact) * (size_t)ncon);
  double *x0 = malloc(sizeof(double) * (phys_state_size(m))), *y = malloc(sizeof(double) * n2);
  double *lam = malloc(sizeof(double) * nv), *wb = calloc((size_t)n->nparam, sizeof(double));
  double *dq = malloc(sizeof(double) * nv), *qp = malloc(sizeof(double) * m->nq), *vp = malloc(sizeof(double) * nv);
  phys_state_save(m, d, x0);
  gm_rand_vec(r, y, n2);
  CHECK(phys_step_vjp_lambda(m, d, y, NULL, NULL, lam) == PHYS_OK);
  phys_residual_force_vjp(m, d, lam, NULL, NULL, wb);
  // the reference x+ (q+ by its tangent difference from the unperturbed step's)
  phys_step(m, d);
  if (contact) CHECK_MSG(d->ncon > 0, "%s: no contact", name);
  memcpy(qp, d->qpos, sizeof(double) * m->nq);
  memcpy(vp, d->qvel, sizeof(double) * nv);
  double err = 0, scale = 0, h = 1e-6;
  for (int k = 0; k < n->nparam; k += 29) {
    double w0 = n->w[k], f[2];
    for (int sgn = 0; sgn < 2; sgn++) {
      n->w[k] = w0 + (sgn ? -h : h);
      phys_state_load(m, d, x0);
      memcpy(d->contact, con, sizeof(physContact) * (size_t)ncon);
      d->ncon = ncon;
      phys_step(m, d);
      phys_difference_pos(m, dq, 1, qp, d->qpos);
      f[sgn] = 0;
      for (int i = 0; i < nv; i++) f[sgn] += y[i] * dq[i] + y[nv + i] * (d->qvel[i] - vp[i]);
    }
    n->w[k] = w0;
    err = fmax(err, fabs((f[0] - f[1]) / (2 * h) - wb[k]));
    scale = fmax(scale, fabs(wb[k]));
  }
  CHECK_MSG(scale > 1e-6 && err <= 1e-6 * scale, "%s: step weight gradient vs central differences %.3g (scale %.3g)",
            name, err, scale);
  printf("%-20s step weight gradient vs central differences %.2e (largest entry %.2e)\n", name, err, scale);
  free(con), free(x0), free(y), free(lam), free(wb), free(dq), free(qp), free(vp);
  phys_free_data(d);
}

int main(void) {
  physRng r;
  phys_rng_seed(&r, 14);
  physModel* mixed = gm_load("tests/data/mixed.xml", 0);
  check_features(mixed, &r);
  attach(mixed, 24, PHYS_MLP_TANH, 20, 3);
  for (int s = 0; s < 3; s++) check_step("mixed.xml, tanh 24 x 24", mixed, &r, 1);
  check_residual_vjp(mixed, &r);
  phys_free_model(mixed);

  // the paper's network (2 x 128, ReLU) on a free body
  physModel* fb = gm_load("tests/data/freebody.xml", 0);
  attach(fb, 128, PHYS_MLP_RELU, 20, 4);
  for (int s = 0; s < 3; s++) check_step("freebody.xml, ReLU 128 x 128", fb, &r, 0);
  check_residual_vjp(fb, &r);
  phys_free_model(fb);

  // the weight gradient of one step through the force adjoint, contact-free and in contact (ccp, lcp)
  physModel* mx = gm_load("tests/data/mixed.xml", 0);
  attach(mx, 24, PHYS_MLP_TANH, 20, 6);
  check_weights("mixed.xml", mx, &r, 0);
  phys_free_model(mx);
  for (int k = 0; k < 2; k++) {
    physModel* cube = gm_load("models/cube.xml", 0);
    cube->opt.contact = k ? PHYS_CONTACT_LCP : PHYS_CONTACT_CCP;
    cube->opt.solver_tolerance = 1e-12;
    attach(cube, 16, PHYS_MLP_TANH, 3, 7);
    check_weights(k ? "cube sliding, lcp" : "cube sliding, ccp", cube, &r, 1);
    phys_free_model(cube);
  }
  return test_done();
}
