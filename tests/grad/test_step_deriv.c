// test_step_deriv.c - Jacobians and reverse mode of the contact-free step (src/grad/step_deriv.c):
//  1. analytic: the pendulum's A = [[1 + dt^2 k, dt], [dt k, 1]] with k = da/dq = -m g l cos q / I; a free
//     body at rest without gravity has A = [[E, dt E], [0, E]], B empty;
//  2. phys_step_jacobian against its twin phys_step_jacobian_fd: the twin's central differences at steps h
//     and 2h combined as (4 J_h - J_2h) / 3, which is the four-point central stencil (grad_models.h), with
//     h = 1e-3: relative 1e-6 per block (q+, v+ rows; q, v, u columns) at random states of the pendulum, the
//     double pendulum, a free tumbling asymmetric body, mixed.xml (every joint type, springs, tendon motor),
//     tendons_fixed.xml (fixed tendons: springs, dampers, motors; a spatial tendon),
//     two random trees (one with PHYS_DSBL_EULERDAMP), MuJoCo's humanoid in the air (contacts and limits
//     disabled), tests/data/actuator_site.xml (site actuators, force limits), tests/data/slider_crank_deriv.xml
//     (slider-crank transmissions on a floating base, gains affine in their length); random qfrc_applied and
//     xfrc_applied;
//  3. phys_step_vjp by the dot-product test y'(A x) = (A'y)'x and y'(B u) = (B'y)'u to 1e-12;
//  4. d->qacc is the step's own acceleration; contacts or active limits (constrained step) leave the
//     contact list (warm start) untouched; a ball followed by another joint of its body PHYS_ERR_MODEL
//     (activations: test_act_deriv.c);
//  5. tendons wrapping geoms (tests/data/tendons_wrap.xml: spheres, cylinders, side sites, a helix, a pulley;
//     springs, dampers, motors on wrapped tendons) as in 2 and 3.
#include "grad_models.h"

#define NSTATE 3

// the four-point reference from the twin at h and 2h: (4 J_h - J_2h) / 3
static void twin_fd4(const physModel* m, physData* d, double* A, double* B, double* tmpA, double* tmpB) {
  int n2 = 2 * m->nv, nu = m->nu;
  CHECK(phys_step_jacobian_fd(m, d, GM_H4, A, B) == PHYS_OK);
  CHECK(phys_step_jacobian_fd(m, d, 2 * GM_H4, tmpA, tmpB) == PHYS_OK);
  for (int i = 0; i < n2 * n2; i++) A[i] = (4 * A[i] - tmpA[i]) / 3;
  for (int i = 0; i < n2 * nu; i++) B[i] = (4 * B[i] - tmpB[i]) / 3;
}

// block (r0, c0) of size nr x nc of M (ld columns) into out
static void block(double* out, const double* M, int ld, int r0, int c0, int nr, int nc) {
  for (int i = 0; i < nr; i++)
    for (int j = 0; j < nc; j++) out[i * nc + j] = M[(size_t)(r0 + i) * ld + c0 + j];
}

// compare the blocks of A and B; returns the worst relative error
static double compare_blocks(const char* name, int s, const physModel* m, const double* A, const double* Af,
                             const double* B, const double* Bf, double fscale) {
  int nv = m->nv, nu = m->nu, n2 = 2 * nv;
  double *x = malloc(sizeof(double) * nv * (nv + nu + 1)), *y = malloc(sizeof(double) * nv * (nv + nu + 1));
  const char* rows[2] = {"q+", "v+"};
  const char* cols[3] = {"q", "v", "u"};
  double worst = 0;
  char what[160];
  for (int r = 0; r < 2; r++) {
    for (int c = 0; c < 3; c++) {
      int nc = c < 2 ? nv : nu;
      if (nc == 0) continue;
      if (c < 2) {
        block(x, A, n2, r * nv, c * nv, nv, nv);
        block(y, Af, n2, r * nv, c * nv, nv, nv);
      } else {
        block(x, B, nu, r * nv, 0, nv, nu);
        block(y, Bf, nu, r * nv, 0, nv, nu);
      }
      snprintf(what, sizeof what, "%s state %d d%s/d%s", name, s, rows[r], cols[c]);
      worst = fmax(worst, gm_compare(what, x, y, nv, nc, fscale, GM_RTOL));
    }
  }
  free(x), free(y);
  return worst;
}

// dot-product tests of phys_step_vjp against A and B
static void check_vjp(const physModel* m, physData* d, const double* A, const double* B, physRng* r) {
  int nv = m->nv, nu = m->nu, n2 = 2 * nv;
  double *y = malloc(sizeof(double) * n2), *x = malloc(sizeof(double) * n2), *u = malloc(sizeof(double) * (nu + 1));
  double *xb = malloc(sizeof(double) * n2), *ub = malloc(sizeof(double) * (nu + 1));
  gm_rand_vec(r, y, n2);
  gm_rand_vec(r, x, n2);
  gm_rand_vec(r, u, nu);
  CHECK(phys_step_vjp(m, d, y, xb, ub) == PHYS_OK);
  double sa, sb, lhs = gm_bilinear(A, y, x, n2, n2, &sa), rhs = 0;
  for (int i = 0; i < n2; i++) rhs += xb[i] * x[i];
  CHECK_MSG(fabs(lhs - rhs) <= GM_DOT_TOL * sa, "vjp x: %.17g vs %.17g (scale %.3g)", lhs, rhs, sa);
  if (nu) {
    lhs = gm_bilinear(B, y, u, n2, nu, &sb);
    rhs = 0;
    for (int i = 0; i < nu; i++) rhs += ub[i] * u[i];
    CHECK_MSG(fabs(lhs - rhs) <= GM_DOT_TOL * sb, "vjp u: %.17g vs %.17g (scale %.3g)", lhs, rhs, sb);
  }
  free(y), free(x), free(u), free(xb), free(ub);
}

// every check at NSTATE random states
static void check_model(const char* name, const physModel* m, uint64_t seed, double vs) {
  int nv = m->nv, nu = m->nu, n2 = 2 * nv;
  physData* d = phys_make_data(m);
  physRng r;
  phys_rng_seed(&r, seed);
  size_t na = (size_t)n2 * n2, nb = (size_t)n2 * nu + 1;
  double *A = malloc(sizeof(double) * na), *Af = malloc(sizeof(double) * na), *At = malloc(sizeof(double) * na);
  double *B = malloc(sizeof(double) * nb), *Bf = malloc(sizeof(double) * nb), *Bt = malloc(sizeof(double) * nb);
  double *qacc = malloc(sizeof(double) * nv), worst = 0;
  for (int s = 0; s < NSTATE; s++) {
    gm_random_state(m, d, &r, vs);
    gm_rand_vec(&r, d->qfrc_applied, nv);
    for (int b = 1; b < m->nbody; b++) gm_rand_vec(&r, d->xfrc_applied + 6 * b, 6);
    CHECK(phys_step_jacobian(m, d, A, B) == PHYS_OK);
    memcpy(qacc, d->qacc, sizeof(double) * nv);
    twin_fd4(m, d, Af, Bf, At, Bt);
    // rounding of x+ scales with |q|, |v| and the velocity change dt |a|
    double fscale = fmax(fmax(1, gm_maxabs(d->qpos, m->nq)), gm_maxabs(d->qvel, nv));
    fscale = fmax(fscale, m->opt.timestep * gm_maxabs(qacc, nv));
    worst = fmax(worst, compare_blocks(name, s, m, A, Af, B, Bf, fscale));
    check_vjp(m, d, A, B, &r);
    // the acceleration reported is the step's
    phys_step(m, d);
    for (int i = 0; i < nv; i++) CHECK_REL(qacc[i], d->qacc[i], 1e-9, 1e-9);
  }
  printf("%-16s nv %2d nu %2d dt %g: max rel err of A, B against the four-point twin %.2e\n", name, nv, nu,
         m->opt.timestep, worst);
  free(A), free(Af), free(At), free(B), free(Bf), free(Bt), free(qacc);
  phys_free_data(d);
}

// pendulum: a = -m g l sin(q) / I (I = 1.01), so A = [[1 + dt^2 k, dt], [dt k, 1]], k = -m g l cos(q) / I
static void check_pendulum(void) {
  physModel* m = gm_load("tests/data/pendulum.xml", 0);
  physData* d = phys_make_data(m);
  double A[4], dt = m->opt.timestep, q = 0.4, k = -9.81 * cos(q) / 1.01;
  d->qpos[0] = q;
  d->qvel[0] = -1.3;
  CHECK(phys_step_jacobian(m, d, A, NULL) == PHYS_OK);
  CHECK_REL(A[0], 1 + dt * dt * k, 1e-12, 1e-12);
  CHECK_REL(A[1], dt, 1e-12, 1e-12);
  CHECK_REL(A[2], dt * k, 1e-12, 1e-12);
  CHECK_REL(A[3], 1, 1e-12, 1e-12);
  CHECK_REL(d->qacc[0], -9.81 * sin(q) / 1.01, 1e-12, 1e-12);
  phys_free_data(d);
  phys_free_model(m);
}

// free body at rest without gravity: x+ = (q + dt v+, v + 0): A = [[E, dt E], [0, E]] exactly
static void check_free_rest(void) {
  physModel* m = gm_load("tests/data/freebody.xml", 0);
  physData* d = phys_make_data(m);
  double A[144], dt = m->opt.timestep;
  phys_reset_data(m, d);
  CHECK(phys_step_jacobian(m, d, A, NULL) == PHYS_OK);
  for (int i = 0; i < 12; i++)
    for (int j = 0; j < 12; j++) {
      double ref = (i == j) + (i < 6 && j == i + 6) * dt;
      CHECK_NEAR(A[i * 12 + j], ref, 1e-15);
    }
  phys_free_data(d);
  phys_free_model(m);
}

// contacts and active limits (lcp here) go to the constrained step's derivatives (tested in
// test_step_contact_deriv.c), and the contact list is left as it was
static void check_refusals(void) {
  physModel* m = gm_load("tests/data/mixed.xml", PHYS_DSBL_CONTACT);
  physData* d = phys_make_data(m);
  double* A = malloc(sizeof(double) * 4 * m->nv * m->nv);
  int slide = m->jnt_qposadr[phys_name2id(m, "joint", "slide")];
  phys_reset_data(m, d);
  d->qpos[slide] = 0.35;   // beyond the range [-0.2, 0.3]
  CHECK(phys_step_jacobian(m, d, A, NULL) == PHYS_OK);
  m->opt.disableflags |= PHYS_DSBL_LIMIT;
  CHECK(phys_step_jacobian(m, d, A, NULL) == PHYS_OK);
  free(A);
  phys_free_data(d);
  phys_free_model(m);

  // a box resting on the floor: one step so that contacts (and their impulses) are in d->contact
  m = gm_load("tests/data/box.xml", 0);
  d = phys_make_data(m);
  A = malloc(sizeof(double) * 4 * m->nv * m->nv);
  if (m->nkey) phys_reset_keyframe(m, d, 0);
  for (int i = 0; i < 20; i++) phys_step(m, d);
  int ncon = d->ncon;
  physContact c0 = d->contact[0];
  CHECK(ncon > 0);
  CHECK(phys_step_jacobian(m, d, A, NULL) == PHYS_OK);
  double xb[24] = {0}, y[24] = {0};
  CHECK(phys_step_vjp(m, d, y, xb, NULL) == PHYS_OK);
  CHECK(d->ncon == ncon);
  CHECK(memcmp(&c0, d->contact, sizeof c0) == 0);
  free(A);
  phys_free_data(d);
  phys_free_model(m);

  // a ball followed by a hinge on one body: the ball's axes (its body's frame) are not its tangent directions
  physRng r;
  phys_rng_seed(&r, 9);
  physSpec* s = phys_spec_new();
  int b = tm_body(s, &r, 0, 0, 0, 1);
  tm_joint(s, &r, b, PHYS_JNT_BALL);
  tm_joint(s, &r, b, PHYS_JNT_HINGE);
  m = tm_compile(s);
  d = phys_make_data(m);
  A = malloc(sizeof(double) * 4 * m->nv * m->nv);
  CHECK(phys_step_jacobian(m, d, A, NULL) == PHYS_ERR_MODEL);
  free(A);
  phys_free_data(d);
  phys_free_model(m);

}

int main(void) {
  check_pendulum();
  check_free_rest();
  check_refusals();
  physModel* m = gm_load("tests/data/pendulum.xml", 0);
  check_model("pendulum", m, 1, 3);
  phys_free_model(m);
  m = gm_load("tests/data/double_pendulum.xml", 0);
  check_model("double_pendulum", m, 2, 3);
  phys_free_model(m);
  m = gm_load("tests/data/freebody.xml", 0);
  check_model("freebody", m, 3, 3);
  phys_free_model(m);
  m = gm_load("tests/data/mixed.xml", PHYS_DSBL_CONTACT);
  check_model("mixed", m, 4, 2);
  phys_free_model(m);
  m = gm_load("tests/data/tendons_fixed.xml", 0);
  check_model("tendons_fixed", m, 8, 3);
  phys_free_model(m);
  m = gm_load("tests/data/tendons_wrap.xml", 0);
  check_model("tendons_wrap", m, 9, 2);
  phys_free_model(m);
  m = tm_tree(51, 1);
  check_model("tree (free)", m, 5, 2);
  phys_free_model(m);
  m = tm_tree(52, 0);
  m->opt.disableflags |= PHYS_DSBL_EULERDAMP;
  check_model("tree (eulerdamp)", m, 6, 2);
  phys_free_model(m);
  m = gm_load(GM_HUMANOID, PHYS_DSBL_CONTACT | PHYS_DSBL_LIMIT);
  check_model("humanoid (air)", m, 7, 1);
  phys_free_model(m);
  m = gm_load("tests/data/actuator_site.xml", 0);   // site actuators, force-limited motor and servo
  check_model("actuator_site", m, 8, 3);
  phys_free_model(m);
  m = gm_load("tests/data/slider_crank_deriv.xml", PHYS_DSBL_CONTACT);   // slider-cranks (issue 15)
  check_model("slider_crank", m, 10, 2);
  phys_free_model(m);
  return test_done();
}
