// test_rnea_deriv.c - derivatives of inverse dynamics (src/grad/rnea_deriv.c):
//  1. analytic: a pendulum's dtau/dq = m g l cos(q) + (no velocity dependence), dtau_dv = 0;
//  2. dtau_dq, dtau_dv against four-point central differences of phys_rnea in tangent coordinates
//     (grad_models.h: h = 1e-3, relative 1e-6), dtau_da against qM - diag(armature) from phys_crb, at random states of the
//     pendulum, the double pendulum, a free tumbling asymmetric body, tests/data/mixed.xml, two random trees
//     (free root, multi-hinge bodies, slides, balls) and MuJoCo's humanoid;
//  3. phys_rnea_vjp by the dot-product test y'(J x) = (J'y)'x to 1e-12 for q, v and a;
//  4. the mass-matrix term alone (phys_rnea_mass_deriv, phys_rnea_mass_vjp): d(M x)/dq against four-point central
//     differences of (qM - diag(armature)) x from phys_crb, against dtau_dq(x) - dtau_dq(0), and its dot test;
//     the quadratic form's gradient d(x' M x)/dq (phys_rnea_mass_quad_grad) against phys_rnea_mass_vjp(x, x) and
//     the differences; d<M, K>/dq of a low-rank K (phys_rnea_mass_trace_grad) against the quadratic forms;
//  5. the quadratic form's gradient on one tree (phys_rnea_mass_quad_grad_bodies, the penalty VJP's mass term) for
//     x on that tree's dofs: bit for bit the whole pass's entries there, the others untouched, and the whole pass
//     exactly 0 outside the tree (what makes the restriction exact), on tests/data/equality.xml's five trees.
#include "grad_models.h"

#define NSTATE 4

// tau = RNEA(q, v, a) at d's state (kinematics first)
static void rnea_at(const physModel* m, physData* d, const double* qacc, double* tau) {
  phys_kinematics(m, d);
  phys_com_pos(m, d);
  phys_com_vel(m, d);
  phys_rnea(m, d, qacc, tau);
}

// four-point central differences of RNEA in tangent coordinates (dq) and velocities (dv), nv x nv each;
// returns the largest |tau| met (the function's scale)
static double rnea_fd(const physModel* m, physData* d, const double* qacc, double* dq, double* dv) {
  int nv = m->nv, nq = m->nq;
  const double step[4] = {2 * GM_H4, GM_H4, -GM_H4, -2 * GM_H4};
  double* q0 = malloc(sizeof(double) * nq);
  double* v0 = malloc(sizeof(double) * nv);
  double* t = malloc(sizeof(double) * 4 * nv);
  double fscale = 0;
  memcpy(q0, d->qpos, sizeof(double) * nq);
  memcpy(v0, d->qvel, sizeof(double) * nv);
  for (int j = 0; j < nv; j++) {
    for (int p = 0; p < 4; p++) {
      gm_perturb(m, d->qpos, q0, j, step[p]);
      rnea_at(m, d, qacc, t + p * nv);
    }
    fscale = fmax(fscale, gm_maxabs(t, 4 * nv));
    for (int i = 0; i < nv; i++) dq[i * nv + j] = gm_fd4(t[i], t[nv + i], t[2 * nv + i], t[3 * nv + i], GM_H4);
    memcpy(d->qpos, q0, sizeof(double) * nq);
    for (int p = 0; p < 4; p++) {
      d->qvel[j] = v0[j] + step[p];
      rnea_at(m, d, qacc, t + p * nv);
    }
    d->qvel[j] = v0[j];
    fscale = fmax(fscale, gm_maxabs(t, 4 * nv));
    for (int i = 0; i < nv; i++) dv[i * nv + j] = gm_fd4(t[i], t[nv + i], t[2 * nv + i], t[3 * nv + i], GM_H4);
  }
  rnea_at(m, d, qacc, t);
  free(q0);
  free(v0);
  free(t);
  return fscale;
}

// four-point central differences of M(q) x (phys_crb without armature) in tangent coordinates (nv x nv);
// returns the largest |M x| met
static double mass_fd(const physModel* m, physData* d, const double* x, double* dm) {
  int nv = m->nv, nq = m->nq;
  const double step[4] = {2 * GM_H4, GM_H4, -GM_H4, -2 * GM_H4};
  double* q0 = malloc(sizeof(double) * nq);
  double* t = malloc(sizeof(double) * 4 * nv);
  double fscale = 0;
  memcpy(q0, d->qpos, sizeof(double) * nq);
  for (int j = 0; j < nv; j++) {
    for (int p = 0; p < 4; p++) {
      gm_perturb(m, d->qpos, q0, j, step[p]);
      phys_kinematics(m, d);
      phys_com_pos(m, d);
      phys_crb(m, d);
      for (int i = 0; i < nv; i++) {
        double s = -m->dof_armature[i] * x[i];
        for (int k = 0; k < nv; k++) s += d->qM[(size_t)i * nv + k] * x[k];
        t[p * nv + i] = s;
      }
    }
    fscale = fmax(fscale, gm_maxabs(t, 4 * nv));
    for (int i = 0; i < nv; i++) dm[i * nv + j] = gm_fd4(t[i], t[nv + i], t[2 * nv + i], t[3 * nv + i], GM_H4);
  }
  memcpy(d->qpos, q0, sizeof(double) * nq);
  rnea_at(m, d, NULL, t);
  free(q0);
  free(t);
  return fscale;
}

// y'(J x) against (J'y)'x for one block
static void dot_test(const char* what, const double* J, const double* y, const double* x, const double* Jty,
                     int n) {
  double scale, lhs = gm_bilinear(J, y, x, n, n, &scale), rhs = 0;
  for (int i = 0; i < n; i++) rhs += Jty[i] * x[i];
  CHECK_MSG(fabs(lhs - rhs) <= GM_DOT_TOL * scale, "%s: dot-product test %.17g vs %.17g (scale %.3g)", what,
            lhs, rhs, scale);
}

// every check at NSTATE random states of one model
static void check_model(const char* name, const physModel* m, uint64_t seed) {
  int nv = m->nv;
  size_t nn = (size_t)nv * nv;
  physData* d = phys_make_data(m);
  physRng r;
  phys_rng_seed(&r, seed);
  double *dq = malloc(sizeof(double) * nn), *dv = malloc(sizeof(double) * nn), *da = malloc(sizeof(double) * nn);
  double *fq = malloc(sizeof(double) * nn), *fv = malloc(sizeof(double) * nn);
  double *qacc = malloc(sizeof(double) * nv), *y = malloc(sizeof(double) * nv), *x = malloc(sizeof(double) * nv);
  double *qb = malloc(sizeof(double) * nv), *vb = malloc(sizeof(double) * nv), *ab = malloc(sizeof(double) * nv);
  double eq = 0, ev = 0, ea = 0, em = 0;
  for (int s = 0; s < NSTATE; s++) {
    gm_random_state(m, d, &r, 2.0);
    gm_rand_vec(&r, qacc, nv);
    for (int i = 0; i < nv; i++) qacc[i] *= 5;
    double fscale = rnea_fd(m, d, qacc, fq, fv);
    phys_rnea_deriv(m, d, qacc, dq, dv, da);
    char what[128];
    snprintf(what, sizeof what, "%s state %d dtau_dq", name, s);
    eq = fmax(eq, gm_compare(what, dq, fq, nv, nv, fscale, GM_RTOL));
    snprintf(what, sizeof what, "%s state %d dtau_dv", name, s);
    ev = fmax(ev, gm_compare(what, dv, fv, nv, nv, fscale, GM_RTOL));
    // dtau_da = M without armature (phys_crb, independent code), to rounding
    phys_crb(m, d);
    for (int i = 0; i < nv; i++) d->qM[i * nv + i] -= m->dof_armature[i];
    snprintf(what, sizeof what, "%s state %d dtau_da", name, s);
    ea = fmax(ea, gm_compare(what, da, d->qM, nv, nv, 0, 1e-12));

    // reverse mode, with and without qacc
    gm_rand_vec(&r, y, nv);
    gm_rand_vec(&r, x, nv);
    phys_rnea_vjp(m, d, qacc, y, qb, vb, ab);
    dot_test("vjp q", dq, y, x, qb, nv);
    dot_test("vjp v", dv, y, x, vb, nv);
    dot_test("vjp a", da, y, x, ab, nv);
    phys_rnea_deriv(m, d, NULL, dq, dv, NULL);
    phys_rnea_vjp(m, d, NULL, y, qb, vb, NULL);
    dot_test("vjp q (qacc 0)", dq, y, x, qb, nv);
    dot_test("vjp v (qacc 0)", dv, y, x, vb, nv);

    // the mass term alone: d(M qacc)/dq = dtau_dq(qacc) - dtau_dq(0), and against differences of phys_crb
    phys_rnea_deriv(m, d, qacc, fq, NULL, NULL);
    for (size_t i = 0; i < nn; i++) fq[i] -= dq[i];
    phys_rnea_mass_deriv(m, d, qacc, da);
    snprintf(what, sizeof what, "%s state %d d(M a)/dq vs RNEA", name, s);
    gm_compare(what, da, fq, nv, nv, 0, 1e-10);
    double mscale = mass_fd(m, d, qacc, fq);
    snprintf(what, sizeof what, "%s state %d d(M a)/dq vs crb", name, s);
    em = fmax(em, gm_compare(what, da, fq, nv, nv, mscale, GM_RTOL));
    phys_rnea_mass_vjp(m, d, qacc, y, qb);
    dot_test("mass vjp", da, y, x, qb, nv);
    // d(a' M a)/dq = 2 a' d(M a)/dq ... = phys_rnea_mass_vjp(a, a), by the kinetic energy (independent code)
    phys_rnea_mass_vjp(m, d, qacc, qacc, qb);
    phys_rnea_mass_quad_grad(m, d, qacc, vb);
    snprintf(what, sizeof what, "%s state %d d(a' M a)/dq", name, s);
    gm_compare(what, vb, qb, 1, nv, 0, 1e-10);
    double asum = 0;   // the differences' scale: sum |a_i| times that of M a
    for (int i = 0; i < nv; i++) asum += fabs(qacc[i]);
    for (int j = 0; j < nv; j++) {   // and against the differences just taken: sum_i a_i d(M a)_i/dq_j
      double t = 0;
      for (int i = 0; i < nv; i++) t += qacc[i] * fq[(size_t)i * nv + j];
      ab[j] = t;
    }
    {   // <M, K> with K = 0.5 a a' - 2 y y' + (a x' + x a') as three low-rank terms (phys_rnea_mass_trace_grad)
        // against the quadratic forms, the bilinear part by polarization (<M, a x' + x a'> = 2 a'Mx =
        // (Q(a+x) - Q(a-x)) / 2)
      double *X3 = malloc(sizeof(double) * 4 * nv), w4[4] = {0.5, -2, 0.5, -0.5}, *gt = malloc(sizeof(double) * nv),
             *gq = malloc(sizeof(double) * nv);
      for (int i = 0; i < nv; i++)
        X3[i] = qacc[i], X3[nv + i] = y[i], X3[2 * nv + i] = qacc[i] + x[i], X3[3 * nv + i] = qacc[i] - x[i];
      for (int j = 0; j < nv; j++) gq[j] = 0;
      for (int t = 0; t < 4; t++) {
        phys_rnea_mass_quad_grad(m, d, X3 + (size_t)t * nv, gt);
        for (int j = 0; j < nv; j++) gq[j] += w4[t] * gt[j];
      }
      double gmax = 1e-300, emax;
      for (int j = 0; j < nv; j++) gmax = fmax(gmax, fabs(gq[j]));
      // the same K as three low-rank terms: a a' (0.5), y y' (-2), (a x' + x a')/2 (2); first as three general
      // terms, then with the first two declared quadratic (their B rows garbage: not read)
      double *A3 = malloc(sizeof(double) * 3 * nv), *B3 = malloc(sizeof(double) * 3 * nv), c3[3] = {0.5, -2, 2};
      for (int nq = 0; nq <= 2; nq += 2) {
        for (int i = 0; i < nv; i++) {
          A3[i] = qacc[i], A3[nv + i] = y[i], A3[2 * nv + i] = qacc[i], B3[2 * nv + i] = x[i];
          B3[i] = nq ? NAN : qacc[i], B3[nv + i] = nq ? NAN : y[i];
        }
        for (int j = 0; j < nv; j++) gt[j] = 0;
        phys_rnea_mass_trace_grad(m, d, nq, 3, A3, B3, c3, gt);
        emax = 0;
        for (int j = 0; j < nv; j++) emax = fmax(emax, fabs(gt[j] - gq[j]));
        CHECK_MSG(emax <= 1e-11 * gmax, "%s state %d: low-rank trace form (nq %d) off by %.3g (scale %.3g)", name, s,
                  nq, emax, gmax);
      }
      free(A3), free(B3), free(X3), free(gt), free(gq);
    }
    snprintf(what, sizeof what, "%s state %d d(a' M a)/dq vs crb", name, s);
    gm_compare(what, vb, ab, 1, nv, mscale * asum, GM_RTOL);
  }
  printf("%-16s nv %2d: max rel err dtau_dq %.2e, dtau_dv %.2e, dtau_da %.2e, d(M a)/dq %.2e\n", name, nv, eq,
         ev, ea, em);
  free(dq), free(dv), free(da), free(fq), free(fv), free(qacc), free(y), free(x), free(qb), free(vb), free(ab);
  phys_free_data(d);
}

// pendulum: tau = I qdd + m g l sin q, so dtau/dq = m g l cos q and dtau/dqd = 0
static void check_pendulum_analytic(void) {
  physModel* m = gm_load("tests/data/pendulum.xml", 0);
  physData* d = phys_make_data(m);
  double dq, dv, qacc = 0.7;
  d->qpos[0] = 0.3;
  d->qvel[0] = 1.9;
  phys_kinematics(m, d);
  phys_com_pos(m, d);
  phys_com_vel(m, d);
  phys_rnea_deriv(m, d, &qacc, &dq, &dv, NULL);
  CHECK_REL(dq, 1.0 * 9.81 * 1.0 * cos(0.3), 1e-12, 1e-12);
  CHECK_NEAR(dv, 0, 1e-12);
  phys_free_data(d);
  phys_free_model(m);
}

// 5: per tree r (a body of the world), x random on r's dofs and 0 elsewhere
static void check_quad_grad_trees(const char* file) {
  physModel* m = gm_load(file, 0);
  physData* d = phys_make_data(m);
  int nv = m->nv, ntree = 0;
  physRng r;
  phys_rng_seed(&r, 41);
  gm_random_state(m, d, &r, 2.0);
  phys_kinematics(m, d);
  phys_com_pos(m, d);
  double *x = malloc(sizeof(double) * nv), *g = malloc(sizeof(double) * nv), *h = malloc(sizeof(double) * nv);
  for (int b = 1; b < m->nbody; b++) {
    if (m->body_parentid[b] != 0) continue;
    int e = b + 1, bad = 0;
    while (e < m->nbody && m->body_rootid[e] == b) e++;
    int d0 = m->body_dofadr[b], d1 = m->body_dofadr[e - 1] + m->body_dofnum[e - 1];   // the tree's dofs
    gm_rand_vec(&r, x, nv);
    for (int i = 0; i < nv; i++) x[i] = i >= d0 && i < d1 ? x[i] : 0, h[i] = NAN;
    phys_rnea_mass_quad_grad(m, d, x, g);
    phys_rnea_mass_quad_grad_bodies(m, d, x, b, e, h);
    for (int i = 0; i < nv; i++)
      bad += i >= d0 && i < d1 ? memcmp(g + i, h + i, sizeof(double)) != 0 : !isnan(h[i]) || g[i] != 0;
    CHECK_MSG(bad == 0, "%s tree %d (bodies %d..%d, dofs %d..%d): %d entries differ", file, b, b, e - 1, d0, d1 - 1,
              bad);
    ntree++;
  }
  CHECK_MSG(ntree == 5, "%s: %d trees, expected 5", file, ntree);
  free(x), free(g), free(h);
  phys_free_data(d);
  phys_free_model(m);
}

int main(void) {
  check_quad_grad_trees("tests/data/equality.xml");
  check_pendulum_analytic();
  const char* files[][2] = {{"pendulum", "tests/data/pendulum.xml"},
                            {"double_pendulum", "tests/data/double_pendulum.xml"},
                            {"freebody", "tests/data/freebody.xml"},
                            {"mixed", "tests/data/mixed.xml"},
                            {"humanoid", GM_HUMANOID}};
  for (int i = 0; i < 5; i++) {
    physModel* m = gm_load(files[i][1], 0);
    check_model(files[i][0], m, 100 + i);
    phys_free_model(m);
  }
  // freebody with gravity (the tumbling body's own model has none)
  physModel* m = gm_load("tests/data/freebody.xml", 0);
  m->opt.gravity[2] = -9.81;
  check_model("freebody+g", m, 7);
  phys_free_model(m);
  for (int k = 0; k < 2; k++) {
    m = tm_tree(11 + k, 1 - k);
    check_model(k ? "tree (fixed)" : "tree (free)", m, 20 + k);
    phys_free_model(m);
  }
  m = tm_hinge_tree(5);
  check_model("hinge tree", m, 30);
  phys_free_model(m);
  return test_done();
}
