// test_pbd_deriv.c - derivatives of the position-based step (src/grad/pbd_deriv.c, PHYS_INT_PBD, issue 17 item 2):
//  1. A and B against four-point central differences of phys_step (phys_step_jacobian_fd at h and 2h, combined)
//     to PBD_RTOL = 1e-5 relative (entries held to 1e-4 of the block's scale): the double pendulum (motors;
//     Gauss-Seidel 1 and 4 iterations, Jacobi 4) and arm7 at random states, tests/data/pbd_joints.xml (slide,
//     limited hinge, ball, sprung and damped hinge) at a random state and with the slider and a hinge hitting
//     their limits inside the step, the cube on one corner sliding (dynamic friction, restitution) and held by
//     static friction. The derivatives are exact to rounding (complex step); the tolerance is the references'
//     noise: the step's rounding is amplified by 1/h_substep (v = dx / h), so the differences' error on arm7 is
//     4e-5, 2.7e-6, 1.4e-6, 1.6e-6 at h = 1e-4, 1e-3, 3e-3, 1e-2 (rounding-dominated below 3e-3); near a limit or
//     contact switch h must stay below the distance to it (the limits 1.5e-4 away: h = 1e-5, 3.2e-6; the corner
//     2.5e-6 away: h = 1e-6, 1.4e-6; at h = 1e-5 the sticking corner's differences cross it: 4.9e-3);
//  2. the reverse mode by the dot-product test y'(A x) = (A'y)'x, y'(B u) = (B'y)'u, y'(P th) = (P'y)'th (1e-12);
//  3. P for mass, damping, stiffness and friction against four-point differences of phys_step under phys_param_set
//     (steps 1e-3 of each value) to 1e-6; a kind the pbd derivatives do not cover is refused (PHYS_ERR_MODEL);
//  3b. the springs (tests/data/pbd_tendon.xml: a sprung, damped tendon over three sites, a rope with a length
//     limit): A, B at a random state (the rope slack) and with the rope stretched past its limit; P of the
//     spring's stiffness, damping and rest length and of the placements pos:upper, pos:lower, pos:tip (3 columns
//     each) and a tied damping:j* (one number for both joints); pos:tip with the ball sliding on the floor (its
//     contact's geometry moves with the placement);
//  3c. a held mask (params.h) zeroes the held components' P columns and VJP entries, the others unchanged;
//  4. a 40-step rollout's gradient (phys_rollout_grad) of the double pendulum with a damping parameter against
//     central differences of its loss.
#include "fd_check.h"
#include "rollout.h"

// the references' steps and tolerance (header): 3e-3 on smooth states, smaller near a limit's or contact's switch
#define SMOOTH_H 3e-3
#define KINK_H 1e-5      // the limits: 1.5e-4 from a switch
#define CONTACT_H 1e-6   // the corner: each substep ends it on the floor, g h_substep^2 = 2.5e-6 m from the switch
#define BALL_H 4e-6      // the ball pressed 2e-5 m into the floor per substep; at 1e-6 and 5e-7 the references
                         // straddle the analytic value (rounding: 1.3e-5, 1.7e-5 off), at 4e-6 2.3e-6
#define PBD_RTOL 1e-5

// the pbd options of m
static void pbd_options(physModel* m, double dt, int substeps, int iterations, int jacobi) {
  m->opt.integrator = PHYS_INT_PBD;
  m->opt.timestep = dt;
  m->opt.pbd_substeps = substeps;
  m->opt.pbd_iterations = iterations;
  m->opt.pbd_jacobi = jacobi;
}

// data of m at a random state (gm_random_state, velocities scale 1) from the seed
static physData* random_data(const physModel* m, uint64_t seed) {
  physData* d = phys_make_data(m);
  physRng r;
  phys_rng_seed(&r, seed);
  gm_random_state(m, d, &r, 1);
  return d;
}

// A, B of the pbd step at d's state against four-point differences (GM_RTOL) and their VJPs by the dot-product
// test; returns the worst relative error
static double check_ab(const char* name, const physModel* m, physData* d, double fd_h, uint64_t seed) {
  int n2 = 2 * m->nv, nu = m->nu;
  double *A = malloc(sizeof(double) * n2 * n2), *Af = malloc(sizeof(double) * n2 * n2);
  double *B = malloc(sizeof(double) * (n2 * nu + 1)), *Bf = malloc(sizeof(double) * (n2 * nu + 1));
  double *y = malloc(sizeof(double) * n2), *x = malloc(sizeof(double) * n2), *xb = malloc(sizeof(double) * n2);
  double *u = malloc(sizeof(double) * (nu + 1)), *ub = malloc(sizeof(double) * (nu + 1));
  CHECK_MSG(phys_step_jacobian(m, d, A, B) == PHYS_OK, "%s: %s", name, d->lastwarning);
  fd4_jacobian(m, d, fd_h, Af, Bf);
  double worst = gm_compare(name, A, Af, n2, n2, 1, PBD_RTOL);
  if (nu > 0) worst = fmax(worst, gm_compare(name, B, Bf, n2, nu, 1, PBD_RTOL));
  physRng r;
  phys_rng_seed(&r, seed);
  gm_rand_vec(&r, y, n2);
  gm_rand_vec(&r, x, n2);
  gm_rand_vec(&r, u, nu);
  CHECK(phys_step_vjp(m, d, y, xb, ub) == PHYS_OK);
  fd_dot_check("vjp A", A, y, x, xb, n2, n2);
  if (nu > 0) fd_dot_check("vjp B", B, y, u, ub, n2, nu);
  printf("%-34s pbd: A, B against four-point differences, max rel err %.2e\n", name, worst);
  free(A), free(Af), free(B), free(Bf), free(y), free(x), free(xb), free(u), free(ub);
  return worst;
}

// A, B at 3 random states of the double pendulum (Gauss-Seidel 1 and 4 iterations, Jacobi 4) and of arm7
static void test_ab_chains(void) {
  physModel* m = gm_load("tests/data/double_pendulum.xml", 0);
  static const int cfg[3][3] = {{20, 1, 0}, {10, 4, 0}, {10, 4, 1}};
  for (int c = 0; c < 3; c++) {
    pbd_options(m, 0.01, cfg[c][0], cfg[c][1], cfg[c][2]);
    physData* d = phys_make_data(m);
    physRng r;
    phys_rng_seed(&r, 11 + c);
    for (int k = 0; k < 3; k++) {
      gm_random_state(m, d, &r, 2);
      char name[80];
      snprintf(name, sizeof name, "double pendulum %s %d it, state %d", cfg[c][2] ? "jacobi" : "gs", cfg[c][1], k);
      check_ab(name, m, d, SMOOTH_H, 100 + k);
    }
    phys_free_data(d);
  }
  phys_free_model(m);
  m = gm_load("models/arm7.xml", 0);
  pbd_options(m, 0.005, 8, 2, 0);
  physData* d = phys_make_data(m);
  physRng r;
  phys_rng_seed(&r, 7);
  gm_random_state(m, d, &r, 1);
  check_ab("arm7 gs 2 it", m, d, SMOOTH_H, 5);
  phys_free_data(d);
  phys_free_model(m);
}

// the joints of tests/data/pbd_joints.xml (slide with its limit, a limited hinge, a ball, a sprung and damped
// hinge) at a random state, then with the slider and the hinge driven into their limits during the step
static void test_ab_joints(void) {
  physModel* m = gm_load("tests/data/pbd_joints.xml", 0);
  pbd_options(m, 0.002, 10, 2, 0);
  physData* d = random_data(m, 3);
  check_ab("pbd_joints random state", m, d, SMOOTH_H, 9);
  int vs = m->jnt_dofadr[phys_name2id(m, "joint", "slide")], vh = m->jnt_dofadr[phys_name2id(m, "joint", "hinge")];
  int qs = m->jnt_qposadr[phys_name2id(m, "joint", "slide")], qh = m->jnt_qposadr[phys_name2id(m, "joint", "hinge")];
  // the slider crosses -0.5 half-way through substep 4 of 10, the hinge 0.2 half-way through substep 5: the
  // substeps' coordinates stay 2e-4 m and 1.5e-4 rad from the limits, far beyond the differences' steps
  d->qpos[qs] = -0.4986, d->qvel[vs] = -2;
  d->qpos[qh] = 0.19865, d->qvel[vh] = 1.5;
  check_ab("pbd_joints limits hit in the step", m, d, KINK_H, 10);
  phys_free_data(d);
  phys_free_model(m);
}

// the cube (free joint, box on the plane, mu 0.18, restitution 0.125) tilted onto one corner, that corner 1 mm
// deep and moving down at 0.1 m/s: sliding at 0.5 m/s (dynamic friction), then pushed at 1 mm/s (static
// friction holds the corner). (A cube resting flat sits on the step's kink: its corners end each substep
// exactly on the floor, where the contact row switches off; no difference quotient is a derivative there.)
static void cube_on_corner(const physModel* m, physData* d, double vx) {
  double q[4], qx[4] = {cos(0.2), sin(0.2), 0, 0}, qy[4] = {cos(0.15), 0, sin(0.15), 0}, R[9], a = 0.0524, low = 1;
  phys_quat_mul(q, qx, qy);
  phys_quat2mat(R, q);
  for (int k = 0; k < 8; k++)
    low = fmin(low, (k & 1 ? a : -a) * R[6] + (k & 2 ? a : -a) * R[7] + (k & 4 ? a : -a) * R[8]);
  phys_reset_data(m, d);
  d->qpos[0] = 0, d->qpos[1] = 0, d->qpos[2] = -low - 1e-3;
  memcpy(d->qpos + 3, q, sizeof q);
  memset(d->qvel, 0, sizeof(double) * 6);
  d->qvel[0] = vx, d->qvel[2] = -0.1;
}

static void test_ab_cube(void) {
  physModel* m = gm_load("models/cube.xml", 0);
  pbd_options(m, 0.005, 10, 1, 0);
  physData* d = phys_make_data(m);
  cube_on_corner(m, d, 0.5);
  check_ab("cube sliding on a corner", m, d, CONTACT_H, 21);
  cube_on_corner(m, d, 1e-3);
  check_ab("cube sticking on a corner", m, d, CONTACT_H, 22);
  phys_free_data(d);
  phys_free_model(m);
}

// P against four-point differences over theta (steps 1e-3 of each value, at least 1e-3 absolute; habs > 0: steps
// habs) and P's VJP at d's state
static void check_p(const char* name, physModel* m, physData* d, const char* const* spec, int nspec, double habs) {
  physLog log;
  memset(&log, 0, sizeof(log));
  physParamTable t;
  CHECK_MSG(phys_param_table_build(&t, m, spec, nspec, &log) == PHYS_OK, "%s", log.error);
  physRng r;
  phys_rng_seed(&r, 77);
  double worst = fd_check_p(name, m, d, &t, &r, habs > 0 ? -habs : 1, PBD_RTOL);
  printf("%-34s pbd: P (%d parameters) against four-point differences, max rel err %.2e\n", name, t.ntheta, worst);
  phys_param_table_free(&t);
}

// P of mass, damping and stiffness on pbd_joints, mass and friction on the sliding cube; gravity is refused
static void test_p(void) {
  physModel* m = gm_load("tests/data/pbd_joints.xml", 0);
  pbd_options(m, 0.002, 10, 2, 0);
  physData* d = phys_make_data(m);
  physRng r;
  phys_rng_seed(&r, 5);
  gm_random_state(m, d, &r, 1);
  const char* spec[] = {"mass:arm", "mass:ballpend", "damping:sprung", "stiffness:sprung", "mass:slider"};
  check_p("pbd_joints", m, d, spec, 5, 0);
  physLog log;
  memset(&log, 0, sizeof(log));
  physParamTable t;
  const char* grav[] = {"gravity"};
  CHECK_MSG(phys_param_table_build(&t, m, grav, 1, &log) == PHYS_OK, "%s", log.error);
  double P[64];
  CHECK(2 * m->nv * t.ntheta <= 64);
  CHECK(phys_step_param_jacobian(m, d, &t, P) == PHYS_ERR_MODEL);
  CHECK_MSG(strstr(d->lastwarning, "mass, damping, stiffness, friction, restlength and pos; not gravity") != NULL, "%s", d->lastwarning);
  phys_param_table_free(&t);
  phys_free_data(d);
  phys_free_model(m);
  m = gm_load("models/cube.xml", 0);
  pbd_options(m, 0.005, 10, 1, 0);
  d = phys_make_data(m);
  cube_on_corner(m, d, 0.5);
  const char* cspec[] = {"mass:cube", "friction:cube"};
  check_p("cube sliding", m, d, cspec, 2, 0);
  phys_free_data(d);
  phys_free_model(m);
}

// the springs and placements of pbd_tendon.xml: A, B and P at a random state with the rope slack, A and B with the
// rope stretched past its limit, and P of pos:tip with the ball 1 mm into the floor sliding (the upper link
// lowered to 0.609 m; differences at BALL_H: every substep ends the ball on the floor)
static void test_tendon(void) {
  physModel* m = gm_load("tests/data/pbd_tendon.xml", 0);
  pbd_options(m, 0.002, 10, 2, 0);
  physData* d = random_data(m, 13);
  d->qpos[1] = 0.3;   // (the rope slack)
  check_ab("pbd_tendon random state", m, d, SMOOTH_H, 31);
  const char* spec[] = {"stiffness:spring", "damping:spring", "restlength:spring", "pos:upper", "pos:lower",
                        "pos:tip", "damping:j*"};
  check_p("pbd_tendon springs, placements", m, d, spec, 7, 0);
  d->qpos[0] = 0.2, d->qpos[1] = -0.9, d->qvel[0] = 0.1, d->qvel[1] = 0.2;
  phys_kinematics(m, d), phys_com_pos(m, d), phys_com_vel(m, d), phys_passive(m, d);
  double over = d->spring_length[1] - 0.56;
  printf("rope %.4f m past its limit\n", over);
  check_ab("pbd_tendon rope stretched", m, d, KINK_H, 32);
  phys_free_data(d);
  m->body_pos[3 * phys_name2id(m, "body", "upper") + 2] = 0.609;
  d = phys_make_data(m);
  d->qvel[0] = 0.2;   // the ball sliding at 0.11 m/s and pressed down at 0.1 m/s: every substep in contact
  const char* cspec[] = {"pos:tip", "pos:lower", "stiffness:spring"};
  check_p("pbd_tendon ball sliding", m, d, cspec, 3, BALL_H);
  phys_free_data(d);
  phys_free_model(m);
}

// loss: sum_t |q_t - 0.1|^2 / 2 over the hinge angles, with its gradient
static double pos_loss(void* ctx, int t, const double* qpos, const double* qvel, double* g_q, double* g_v) {
  const physModel* m = ctx;
  (void)t, (void)qvel;
  double l = 0;
  memset(g_v, 0, sizeof(double) * m->nv);
  for (int i = 0; i < m->nv; i++) {
    double e = qpos[i] - 0.1;
    l += 0.5 * e * e;
    g_q[i] = e;
  }
  return l;
}

// phys_rollout_grad through 40 pbd steps of the double pendulum with damping (motor torques applied): dL/dtheta
// (damping and mass) and dL/dx_0 against central differences of phys_rollout
static void test_rollout(void) {
  physModel* m = gm_load("tests/data/double_pendulum.xml", 0);
  pbd_options(m, 0.01, 10, 2, 0);
  m->dof_damping[0] = 0.2, m->dof_damping[1] = 0.1;
  int T = 40, nv = m->nv;
  physLog log;
  memset(&log, 0, sizeof(log));
  physParamTable t;
  const char* spec[] = {"damping:shoulder", "mass:link2"};
  CHECK(phys_param_table_build(&t, m, spec, 2, &log) == PHYS_OK);
  physData* d = phys_make_data(m);
  double* u = calloc((size_t)T * m->nu + 1, sizeof(double));
  for (int s = 0; s < T; s++) u[2 * s] = 2 * sin(0.3 * s), u[2 * s + 1] = cos(0.2 * s);
  int kc = phys_rollout_interval(T, 0);
  double* work = malloc(sizeof(double) * phys_rollout_worksize(m, T, kc, t.ntheta));
  double L, xb[4], tb[2];
  phys_reset_data(m, d);
  d->qpos[0] = 0.5, d->qpos[1] = -0.3, d->qvel[0] = 0.4;
  double* x0 = malloc(sizeof(double) * phys_state_size(m));
  phys_state_save(m, d, x0);
  CHECK_MSG(phys_rollout_grad(m, d, &t, T, kc, u, pos_loss, m, work, &L, xb, NULL, tb, &log) == PHYS_OK, "%s",
            log.error);
  double worst = fd_check_rollout_theta(m, d, &t, T, u, pos_loss, m, x0, tb, 0);
  for (int i = 0; i < 2 * nv; i++) {
    double h = 1e-5, f[2];
    for (int k = 0; k < 2; k++) {
      phys_state_load(m, d, x0);
      if (i < nv) d->qpos[i] += k ? -h : h;
      else d->qvel[i - nv] += k ? -h : h;
      f[k] = phys_rollout(m, d, T, u, pos_loss, m);
    }
    double fd = (f[0] - f[1]) / (2 * h);
    worst = fmax(worst, fabs(fd - xb[i]) / fabs(fd));
    CHECK_REL(xb[i], fd, 1e-5, 1e-8);
  }
  printf("double pendulum pbd rollout of %d steps at dt %g: loss %.6g, gradient (x_0, damping, mass) vs central "
         "differences max rel err %.2e\n", T, m->opt.timestep, L, worst);
  free(u), free(work), free(x0);
  phys_param_table_free(&t);
  phys_free_data(d);
  phys_free_model(m);
}

// held components (params.h's held mask): P's held columns and theta_bar's held entries are 0 and the others the
// same bits as without the mask (pbd_tendon, pos:upper and pos:tip with their y, z held, the spring's stiffness)
static void test_held(void) {
  physModel* m = gm_load("tests/data/pbd_tendon.xml", 0);
  pbd_options(m, 0.002, 10, 2, 0);
  physData* d = random_data(m, 13);
  const char* spec[] = {"pos:upper", "pos:tip", "stiffness:spring"};
  physLog log;
  memset(&log, 0, sizeof(log));
  physParamTable t;
  CHECK_MSG(phys_param_table_build(&t, m, spec, 3, &log) == PHYS_OK, "%s", log.error);
  int n2 = 2 * m->nv, nth = t.ntheta;
  CHECK(nth == 7 && n2 * nth <= 256);
  double P[2][256], y[64], tb[2][8];
  for (int i = 0; i < n2; i++) y[i] = 0.3 + 0.1 * i;
  unsigned char held[7] = {0, 1, 1, 0, 1, 1, 0};
  for (int k = 0; k < 2; k++) {
    t.held = k ? held : NULL;
    CHECK(phys_step_param_jacobian(m, d, &t, P[k]) == PHYS_OK);
    CHECK(phys_step_param_vjp(m, d, &t, y, tb[k]) == PHYS_OK);
  }
  int same = 1;
  for (int a = 0; a < nth; a++) {
    same = same && tb[1][a] == (held[a] ? 0 : tb[0][a]);
    for (int r = 0; r < n2; r++) same = same && P[1][r * nth + a] == (held[a] ? 0 : P[0][r * nth + a]);
  }
  CHECK(same);
  printf("held components: P and theta_bar of the 3 free of 7 unchanged, the held 0: %s\n", same ? "yes" : "no");
  t.held = NULL;
  phys_param_table_free(&t);
  phys_free_data(d);
  phys_free_model(m);
}

int main(void) {
  test_held();
  test_ab_chains();
  test_ab_joints();
  test_ab_cube();
  test_p();
  test_tendon();
  test_rollout();
  return test_done();
}
