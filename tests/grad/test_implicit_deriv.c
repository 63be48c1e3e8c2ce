// test_implicit_deriv.c - derivatives of the implicit step (src/grad/implicit_deriv.c, PHYS_INT_IMPLICIT):
//  1. the spring-mass (slide, m = 2, k, b): A = [[1 + dt^2 g_q, dt (1 + dt g_v)], [dt g_q, 1 + dt g_v]] with
//     g_q = -k / H, g_v = -(b + dt k) / H, H = m + dt b + dt^2 k, exactly (1e-12);
//  2. A and B against the step's four-point finite differences (phys_step_jacobian_fd at h and 2h, grad_models.h)
//     to GM_RTOL = 1e-6 at random states of tests/data/cables.xml (two free rods, four stiff spatial springs whose
//     u u' moves with q: the d^2 L terms of the solve's matrix; a motor on a cable) at dt = 0.01 (k dt^2/m = 2,
//     where Euler diverges) and of tests/data/mixed.xml (every joint type, joint springs and dampers, a spatial
//     spring, motors; contacts and limits off);
//  3. the reverse mode by the dot-product test y'(A x) = (A'y)'x, y'(B u) = (B'y)'u, y'(P th) = (P'y)'th to 1e-12;
//  4. P = dx+/dtheta for spring stiffness and damping, joint stiffness and damping, rest length, a mass and the
//     gear against four-point differences of phys_step under phys_param_set (steps 1e-3 of each value) to 1e-6;
//     pos:BODY on a model with springs is refused (PHYS_ERR_MODEL);
//  5. a rollout's gradient (phys_rollout_grad, 30 steps of the cables at dt = 0.01 with a cable motor) against
//     central differences of its loss: in a cable's stiffness and another's damping to 1e-5 relative, in v_0 to
//     1e-6 of the gradient's largest entry.
#include "fd_check.h"
#include "rollout.h"

static void test_springmass(void) {
  physModel* m = gm_load("tests/data/springmass.xml", 0);
  physData* d = phys_make_data(m);
  double A[4], dt = 0.01, k = 1e5, b = 3, mass = 2;
  m->opt.integrator = PHYS_INT_IMPLICIT;
  m->opt.timestep = dt;
  m->jnt_stiffness[0] = k;
  d->qpos[0] = 0.3;
  d->qvel[0] = -1;
  CHECK(phys_step_jacobian(m, d, A, NULL) == PHYS_OK);
  double H = mass + dt * b + dt * dt * k, gq = -k / H, gv = -(b + dt * k) / H;
  double ref[4] = {1 + dt * dt * gq, dt * (1 + dt * gv), dt * gq, 1 + dt * gv};
  for (int i = 0; i < 4; i++) CHECK_REL(A[i], ref[i], 1e-12, 1e-12);
  phys_free_data(d);
  phys_free_model(m);
}

// A, B against differences and the VJP at nstate random states
static void check_ab(const char* name, physModel* m, int nstate, double vs, uint64_t seed) {
  int nv = m->nv, nu = m->nu, n2 = 2 * nv;
  physData* d = phys_make_data(m);
  physRng r;
  phys_rng_seed(&r, seed);
  double *A = malloc(sizeof(double) * n2 * n2), *Af = malloc(sizeof(double) * n2 * n2);
  double *B = malloc(sizeof(double) * (n2 * nu + 1)), *Bf = malloc(sizeof(double) * (n2 * nu + 1));
  double *y = malloc(sizeof(double) * n2), *x = malloc(sizeof(double) * n2), *xb = malloc(sizeof(double) * n2);
  double *u = malloc(sizeof(double) * (nu + 1)), *ub = malloc(sizeof(double) * (nu + 1)), worst = 0;
  for (int s = 0; s < nstate; s++) {
    gm_random_state(m, d, &r, vs);
    gm_rand_vec(&r, d->qfrc_applied, nv);
    CHECK(phys_step_jacobian(m, d, A, B) == PHYS_OK);
    double fscale = fmax(fmax(1, gm_maxabs(d->qpos, m->nq)), gm_maxabs(d->qvel, nv));
    fscale = fmax(fscale, m->opt.timestep * gm_maxabs(d->qacc, nv));
    fd4_jacobian(m, d, GM_H4, Af, Bf);
    char what[96];
    snprintf(what, sizeof what, "%s state %d A", name, s);
    worst = fmax(worst, gm_compare(what, A, Af, n2, n2, fscale, GM_RTOL));
    if (nu) {
      snprintf(what, sizeof what, "%s state %d B", name, s);
      worst = fmax(worst, gm_compare(what, B, Bf, n2, nu, fscale, GM_RTOL));
    }
    gm_rand_vec(&r, y, n2);
    gm_rand_vec(&r, x, n2);
    gm_rand_vec(&r, u, nu);
    CHECK(phys_step_vjp(m, d, y, xb, ub) == PHYS_OK);
    fd_dot_check("vjp x", A, y, x, xb, n2, n2);
    if (nu) fd_dot_check("vjp u", B, y, u, ub, n2, nu);
  }
  printf("%-8s nv %2d nu %d dt %g implicit: max rel err of A, B against the four-point twin %.2e\n", name, nv, nu,
         m->opt.timestep, worst);
  free(A), free(Af), free(B), free(Bf), free(y), free(x), free(xb), free(u), free(ub);
  phys_free_data(d);
}

// P against four-point differences over theta (steps 1e-3 of each value) and P's VJP at one random state
static void check_p(const char* name, physModel* m, const char* const* spec, int nspec, uint64_t seed) {
  physLog log;
  memset(&log, 0, sizeof(log));
  physParamTable t;
  CHECK_MSG(phys_param_table_build(&t, m, spec, nspec, &log) == PHYS_OK, "%s", log.error);
  physData* d = phys_make_data(m);
  physRng r;
  phys_rng_seed(&r, seed);
  gm_random_state(m, d, &r, 1);
  double worst = fd_check_p(name, m, d, &t, &r, 1e-2, GM_RTOL);
  printf("%-8s implicit: P (%d parameters) against four-point differences, max rel err %.2e\n", name, t.ntheta,
         worst);
  phys_param_table_free(&t);
  phys_free_data(d);
}

// pos:BODY moves the springs (K, D): refused
static void check_pos_refused(physModel* m) {
  physLog log;
  memset(&log, 0, sizeof(log));
  physParamTable t;
  const char* spec[] = {"pos:rod2"};
  physStatus st = phys_param_table_build(&t, m, spec, 1, &log);
  if (st == PHYS_OK) {
    physData* d = phys_make_data(m);
    double P[48];
    CHECK(phys_step_param_jacobian(m, d, &t, P) == PHYS_ERR_MODEL);
    phys_free_data(d);
  } else {
    CHECK_MSG(strstr(log.error, "free") != NULL, "%s", log.error);   // (pos:BODY of a free body is refused first)
  }
  phys_param_table_free(&t);
}

// loss: sum_t |q_t - q_*|^2 / 2 over positions (q_* = 0.1 per coordinate) with its gradient
static double pos_loss(void* ctx, int t, const double* qpos, const double* qvel, double* g_q, double* g_v) {
  const physModel* m = ctx;
  (void)t, (void)qvel;
  double l = 0;
  // tangent gradient: translations only (the rotations' coordinates are quaternions; their loss is 0 here)
  memset(g_q, 0, sizeof(double) * m->nv);
  memset(g_v, 0, sizeof(double) * m->nv);
  for (int j = 0; j < m->njnt; j++) {
    int qa = m->jnt_qposadr[j], da = m->jnt_dofadr[j];
    for (int i = 0; i < 3; i++) {
      double e = qpos[qa + i] - 0.1;
      l += 0.5 * e * e;
      g_q[da + i] = e;
    }
  }
  return l;
}

// phys_rollout_grad through 30 implicit steps of the cables: dL/dtheta (c11's stiffness) and dL/dv_0 against
// central differences of phys_rollout
static void check_rollout(physModel* m) {
  int T = 30, nv = m->nv;
  physLog log;
  memset(&log, 0, sizeof(log));
  physParamTable t;
  const char* spec[] = {"stiffness:c11", "damping:c22"};
  CHECK(phys_param_table_build(&t, m, spec, 2, &log) == PHYS_OK);
  physData* d = phys_make_data(m);
  double* u = calloc((size_t)T * m->nu + 1, sizeof(double));
  for (int s = 0; s < T; s++) u[s] = 20 * sin(0.3 * s);
  int kc = phys_rollout_interval(T, 0);
  double* work = malloc(sizeof(double) * phys_rollout_worksize(m, T, kc, t.ntheta));
  double L, xb[24], tb[2];
  phys_reset_data(m, d);
  d->qvel[6] = 0.5, d->qvel[10] = 2;
  double* x0 = malloc(sizeof(double) * phys_state_size(m));
  phys_state_save(m, d, x0);
  CHECK(phys_rollout_grad(m, d, &t, T, kc, u, pos_loss, m, work, &L, xb, NULL, tb, &log) == PHYS_OK);
  double worst = fd_check_rollout_theta(m, d, &t, T, u, pos_loss, m, x0, tb, 1e-6);
  // v_0 coordinates (the rotations' entries are 1e-6 of the translations': compared at the gradient's scale, the
  // differences' rounding through 30 steps being about 1e-8 of it)
  double fdv[4], scale = 0;
  for (int i = nv; i < 2 * nv; i += 3) {
    double h = 1e-6, f[2];
    for (int k = 0; k < 2; k++) {
      phys_state_load(m, d, x0);
      d->qvel[i - nv] += k ? -h : h;
      f[k] = phys_rollout(m, d, T, u, pos_loss, m);
    }
    fdv[(i - nv) / 3] = (f[0] - f[1]) / (2 * h);
    scale = fmax(scale, fabs(fdv[(i - nv) / 3]));
  }
  for (int i = nv; i < 2 * nv; i += 3) {
    double err = fabs(fdv[(i - nv) / 3] - xb[i]) / scale;
    worst = fmax(worst, err);
    CHECK_MSG(err < 1e-6, "dL/dv_0[%d]: %.10g vs differences %.10g (scale %g)", i - nv, xb[i], fdv[(i - nv) / 3], scale);
  }
  printf("cables implicit rollout of %d steps at dt %g: loss %.6g, gradient vs central differences max rel err %.2e\n",
         T, m->opt.timestep, L, worst);
  free(u), free(work), free(x0);
  phys_param_table_free(&t);
  phys_free_data(d);
}

int main(void) {
  test_springmass();
  physModel* m = gm_load("tests/data/cables.xml", 0);
  m->opt.integrator = PHYS_INT_IMPLICIT;
  check_ab("cables", m, 3, 1, 11);
  const char* cspec[] = {"stiffness:c11", "damping:c12", "restlength:c21", "stiffness:c22", "mass:rod1", "gear:m11"};
  check_p("cables", m, cspec, 6, 12);
  check_pos_refused(m);
  check_rollout(m);
  phys_free_model(m);

  m = gm_load("tests/data/mixed.xml", PHYS_DSBL_CONTACT | PHYS_DSBL_LIMIT);
  m->opt.integrator = PHYS_INT_IMPLICIT;
  m->opt.timestep = 0.01;
  check_ab("mixed", m, 3, 1, 21);
  const char* mspec[] = {"stiffness:spring", "damping:spring", "stiffness:ball", "stiffness:slide", "damping:hinge",
                         "stiffness:hinge"};
  check_p("mixed", m, mspec, 6, 22);
  phys_free_model(m);
  return test_done();
}
