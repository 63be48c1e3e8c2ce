// test_toi.c - the time-of-impact correction (src/grad/toi.c) and its MJCF switch:
//  1. <custom><text name="physid:grad" data="..."/> sets opt.gradflags ("toi", "complementarity", both, none)
//     and an unknown word is an error naming it;
//  2. issue 4's test: without gravity a ball moving at constant speed toward a plane bounces elastically
//     (eps = 1) once before T; over the rollout, d(d_T)/d(d_0) (the product of the step Jacobians) is -1 with
//     PHYS_GRAD_TOI, +1 without (the discrete engine's, equal to central differences of the rollout), for
//     lcp, cone and ccp; d(vz_T)/d(vz_0) = -1, d(vz_T)/d(z_0) = 0 and the tangential block stay those of the
//     reflection either way;
//  3. one bounce step with eps = 0.5: d(dist+)/d(dist) = -eps with the option (1 without); a step without
//     impact is not corrected (Delta = 0);
//  4. the corrected VJP is the corrected Jacobian's transpose (dot-product test, 1e-12): the Jacobian adds
//     Delta, the VJP Delta' y, each after its own contact derivative;
//  5. restitution: eps = 0.5, one bounce; with the option the chained step Jacobians give
//     d(dist_T)/d(eps) = |v| (T - t_c), the continuous impact time t_c = dist_0 / |v| (1e-9), without it
//     the discrete rollout's |v| (T - t_s) (t_s the start of the impact step; = central differences);
//     phys_rollout_grad with the option gives the same d(dist_T)/d(dist_0) = -eps and d(dist_T)/d(eps)
//     (its reverse pass applies the correction too).
// Items 2 and 5 run with the geoms' margin 0.05 (the impact step starts outside the plane) and 0 (it starts
// penetrating, with a position correction: the discrete rollout's d(dist_T)/d(dist_0) is 1 - beta, and the
// option must still give -eps: issue 10 item 15, it gave -eps - beta). Within the margin the step itself
// moves the ball by its time of impact (assemble.c phys_normal_bias, step.c toi_displacement): the discrete
// rollout, its central differences and its Jacobians give the continuous answers (-eps, |v| (T - t_c)) with
// or without the option, which leaves such a contact alone (no Delta: the term is not counted twice).
//  6. the option at restitution 0 (a touching approaching ball): d(dist+)/d(dist) = 0, and at 1e-9 within
//     1e-8 of it (it switched on at eps > 0 only: +1 at 0, -1e-9 just above).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "grad/grad_models.h"
#include "contact.h"
#include "params.h"
#include "rollout.h"
#include "toi.h"

// the ball: radius 0.1, no friction; %g: the geoms' margin (0.05: detected early, so that the impact step
// starts outside the plane; 0: the impact step starts penetrating, with a position correction), %s:
// physid:grad words, %g: restitution
static const char* const BALL =
    "<mujoco>\n"
    "  <option timestep='0.01' gravity='0 0 0'/>\n"
    "  <worldbody>\n"
    "    <geom name='floor' type='plane' size='5 5 .1' friction='0 0 0' margin='%g'/>\n"
    "    <body name='ball' pos='0 0 1'>\n"
    "      <freejoint/>\n"
    "      <geom name='ball' type='sphere' size='.1' mass='1' friction='0 0 0' margin='%g'/>\n"
    "    </body>\n"
    "  </worldbody>\n"
    "  <custom>\n"
    "    <text name='physid:grad' data='%s'/>\n"
    "    <numeric name='physid:restitution:ball' data='%g'/>\n"
    "  </custom>\n"
    "</mujoco>\n";

// margin of the geoms of the next load_ball
static double g_margin = 0.05;

// write the model with its grad words and restitution to a file and load it (NULL and the message in log)
static physModel* load_ball(const char* words, double eps, physLog* log) {
  char path[] = "/tmp/test_toi_XXXXXX", xml[2048];
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  if (fd < 0) exit(2);
  snprintf(xml, sizeof xml, BALL, g_margin, g_margin, words, eps);
  FILE* f = fdopen(fd, "w");
  fputs(xml, f);
  fclose(f);
  char file[64];
  snprintf(file, sizeof file, "%s.xml", path);
  rename(path, file);
  memset(log, 0, sizeof *log);
  physModel* m = phys_load(file, NULL, log);
  unlink(file);
  return m;
}

static void test_mjcf(void) {
  physLog log;
  const char* words[4] = {"toi", "complementarity", " toi  complementarity ", ""};
  int flags[4] = {PHYS_GRAD_TOI, PHYS_GRAD_COMPLEMENTARITY, PHYS_GRAD_TOI | PHYS_GRAD_COMPLEMENTARITY, 0};
  for (int i = 0; i < 4; i++) {
    physModel* m = load_ball(words[i], 1, &log);
    CHECK_MSG(m != NULL, "%s", log.error);
    if (m) CHECK_MSG(m->opt.gradflags == flags[i], "'%s': gradflags %d, expected %d", words[i], m->opt.gradflags, flags[i]);
    phys_free_model(m);
  }
  physModel* m = load_ball("toi bogus", 1, &log);
  CHECK(m == NULL);
  CHECK_MSG(strstr(log.error, "bogus") != NULL && strstr(log.error, "physid:grad") != NULL, "%s", log.error);
  phys_free_model(m);
}

// ball at height z0 (bottom z0 - 0.1) with velocity (vx, 0, vz), no rotation
static void set_ball(physData* d, double z0, double vx, double vz) {
  memset(d->qvel, 0, 6 * sizeof(double));
  d->qpos[0] = 0.1, d->qpos[1] = -0.2, d->qpos[2] = z0;
  d->qpos[3] = 1, d->qpos[4] = d->qpos[5] = d->qpos[6] = 0;
  d->qvel[0] = vx, d->qvel[2] = vz;
  d->ncon = d->ncon_prev = 0;
  d->time = 1;
}

// phys_toi_delta at d's state from its step record (the kind and the warm start: d's own list)
static int toi_delta(const physModel* m, physData* d, double* delta) {
  physStepRecord rec;
  int nb = phys_step_linearize(m, d, &rec) == PHYS_OK ? phys_toi_delta(m, d, &rec, delta) : -2;
  phys_step_record_free(d, &rec);
  return nb;
}

// C = product of the T step Jacobians from d's state (d advanced by T steps); returns the number of steps
// whose Delta was nonzero
static int rollout_jacobian(const physModel* m, physData* d, int T, double* C) {
  int n2 = 2 * m->nv, nb = 0;
  double* A = malloc(sizeof(double) * (size_t)n2 * n2);
  double* P = malloc(sizeof(double) * (size_t)n2 * n2);
  double* delta = malloc(sizeof(double) * (size_t)m->nv * m->nv);
  memset(C, 0, sizeof(double) * (size_t)n2 * n2);
  for (int i = 0; i < n2; i++) C[i * n2 + i] = 1;
  for (int t = 0; t < T; t++) {
    CHECK(phys_step_jacobian(m, d, A, NULL) == PHYS_OK);
    nb += toi_delta(m, d, delta) > 0;
    // C <- A C
    for (int i = 0; i < n2; i++)
      for (int j = 0; j < n2; j++) {
        double s = 0;
        for (int k = 0; k < n2; k++) s += A[i * n2 + k] * C[k * n2 + j];
        P[i * n2 + j] = s;
      }
    memcpy(C, P, sizeof(double) * (size_t)n2 * n2);
    phys_step(m, d);
  }
  free(A);
  free(P);
  free(delta);
  return nb;
}

// z_T after T steps from z0 (the rollout the differences differentiate)
static double final_z(const physModel* m, physData* d, double z0, int T) {
  set_ball(d, z0, 0.2, -1);
  for (int t = 0; t < T; t++) phys_step(m, d);
  return d->qpos[2];
}

static void test_bounce(void) {
  const char* names[3] = {"lcp", "cone", "ccp"};
  int models[3] = {PHYS_CONTACT_LCP, PHYS_CONTACT_CONE, PHYS_CONTACT_CCP};
  physLog log;
  for (int k = 0; k < 3; k++)
    for (int toi = 0; toi < 2; toi++) {
      physModel* m = load_ball(toi ? "toi" : "", 1, &log);
      CHECK_MSG(m != NULL, "%s", log.error);
      if (!m) continue;
      m->opt.contact = models[k];
      physData* d = phys_make_data(m);
      int n2 = 2 * m->nv, T = 50;
      double z0 = 0.1 + 0.255, h = 1e-4;
      // the discrete d(d_T)/d(d_0): margin 0: 1 less beta (the impact step starts penetrating, its split
      // impulse corrects the depth at rate beta); margin 0.05: -1, the step's own time-of-impact position
      double discrete = g_margin > 0 ? -1 : 1 - m->opt.baumgarte;
      double* C = malloc(sizeof(double) * (size_t)n2 * n2);
      set_ball(d, z0, 0.2, -1);
      int nb = rollout_jacobian(m, d, T, C);
      // continuous time: dist_T = |dist_0 + vz T| after the bounce: bottom at 0.5 - 0.255 = 0.245
      double zT = d->qpos[2];
      double fd = (final_z(m, d, z0 + h, T) - final_z(m, d, z0 - h, T)) / (2 * h);
      double dzz = C[2 * n2 + 2], dvv = C[(6 + 2) * n2 + 6 + 2], dvz = C[(6 + 2) * n2 + 2], dxx = C[0];
      printf("margin %g, %s, toi %d: bounce steps %d, z_T %.6f, d(d_T)/d(d_0) = %.15g (central differences %.15g), "
             "d(vz_T)/d(vz_0) %.15g\n", g_margin, names[k], toi, nb, zT, dzz, fd, dvv);
      CHECK_MSG(fabs(zT - 0.1 - 0.245) < 0.02, "%s: the ball did not bounce (z_T %g)", names[k], zT);
      CHECK_NEAR(dzz, toi ? -1.0 : discrete, 1e-9);
      CHECK_NEAR(fd, discrete, 1e-6);   // the discrete rollout itself
      CHECK_NEAR(dvv, -1.0, 1e-9);
      CHECK_NEAR(dvz, 0.0, 1e-9);
      CHECK_NEAR(dxx, 1.0, 1e-9);
      // margin 0: one step has a nonzero Delta (computed either way, applied only with the flag); within the
      // margin none (the step's own term)
      CHECK(nb == (g_margin > 0 ? 0 : 1));
      free(C);
      phys_free_data(d);
      phys_free_model(m);
    }
}

// one impact step with eps = 0.5: d(dist+)/d(dist) = -eps; a free step is not corrected; dot-product test
static void test_one_step(physRng* rng) {
  physLog log;
  physModel* m = load_ball("toi", 0.5, &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  if (!m) return;
  physData* d = phys_make_data(m);
  int nv = m->nv, n2 = 2 * nv;
  double* A = malloc(sizeof(double) * (size_t)n2 * n2);
  double* delta = malloc(sizeof(double) * (size_t)nv * nv);
  double *x = malloc(sizeof(double) * (size_t)n2), *y = malloc(sizeof(double) * (size_t)n2);
  double* xb = malloc(sizeof(double) * (size_t)n2);
  // the bottom 4 mm above the plane (within the margin), closing at 1 m/s: the impact is in this step and the
  // step's own derivatives give -eps without the option; the option adds nothing
  set_ball(d, 0.104, 0.3, -1);
  CHECK(toi_delta(m, d, delta) == 0);
  m->opt.gradflags = 0;
  CHECK(phys_step_jacobian(m, d, A, NULL) == PHYS_OK);
  CHECK_NEAR(A[2 * n2 + 2], -0.5, 1e-12);
  m->opt.gradflags = PHYS_GRAD_TOI;
  // the bottom on the plane (dist 0, touching): the option's Delta
  set_ball(d, 0.1, 0.3, -1);
  CHECK(toi_delta(m, d, delta) == 1);
  CHECK(phys_step_jacobian(m, d, A, NULL) == PHYS_OK);
  CHECK_NEAR(A[2 * n2 + 2], -0.5, 1e-12);
  CHECK_NEAR(A[0], 1.0, 1e-12);
  gm_rand_vec(rng, x, n2);
  gm_rand_vec(rng, y, n2);
  double scale, yAx = gm_bilinear(A, y, x, n2, n2, &scale);
  CHECK(phys_step_vjp(m, d, y, xb, NULL) == PHYS_OK);
  double s = 0;
  for (int i = 0; i < n2; i++) s += xb[i] * x[i];
  CHECK_NEAR(s, yAx, 1e-12 * scale);
  // without the option the discrete +1
  m->opt.gradflags = 0;
  CHECK(phys_step_jacobian(m, d, A, NULL) == PHYS_OK);
  CHECK_NEAR(A[2 * n2 + 2], 1.0, 1e-12);
  // far from the plane, and moving away inside the margin: nothing to correct
  set_ball(d, 0.5, 0.3, -1);
  CHECK(toi_delta(m, d, delta) == 0);
  set_ball(d, 0.13, 0.3, 1);
  CHECK(toi_delta(m, d, delta) == 0);
  CHECK(gm_maxabs(delta, nv * nv) == 0);
  free(A);
  free(delta);
  free(x);
  free(y);
  free(xb);
  phys_free_data(d);
  phys_free_model(m);
}

// loss of test_restitution: l_T = z_T (the ball's height; dist_T = z_T - 0.1), nothing before T
static double loss_height(void* ctx, int t, const double* qpos, const double* qvel, double* g_q, double* g_v) {
  (void)qvel;
  (void)g_v;
  if (t != *(int*)ctx) return 0;
  g_q[2] = 1;
  return qpos[2];
}

// d(z_T)/d(z_0) and d(z_T)/d(eps) by chaining the step Jacobians A, P (TOI as m's flag)
static void chain_restitution(physModel* m, physData* d, const physParamTable* t, int T, double* dz, double* de) {
  int n2 = 2 * m->nv;
  double* A = malloc(sizeof(double) * (size_t)n2 * n2);
  double* P = malloc(sizeof(double) * (size_t)n2);
  double* C = calloc((size_t)n2 * (n2 + 1), sizeof(double));   // [dx_t/dx_0 | dx_t/deps]
  double* N = malloc(sizeof(double) * (size_t)n2 * (n2 + 1));
  for (int i = 0; i < n2; i++) C[i * (n2 + 1) + i] = 1;
  for (int s = 0; s < T; s++) {
    CHECK(phys_step_jacobian(m, d, A, NULL) == PHYS_OK);
    CHECK(phys_step_param_jacobian(m, d, t, P) == PHYS_OK);
    // [C_x | C_e] <- [A C_x | A C_e + P]
    for (int i = 0; i < n2; i++)
      for (int j = 0; j <= n2; j++) {
        double v = j == n2 ? P[i] : 0;
        for (int k = 0; k < n2; k++) v += A[i * n2 + k] * C[k * (n2 + 1) + j];
        N[i * (n2 + 1) + j] = v;
      }
    memcpy(C, N, sizeof(double) * (size_t)n2 * (n2 + 1));
    phys_step(m, d);
  }
  *dz = C[2 * (n2 + 1) + 2];
  *de = C[2 * (n2 + 1) + n2];
  free(A);
  free(P);
  free(C);
  free(N);
}

static void test_restitution(void) {
  physLog log;
  const char* spec[] = {"restitution:ball"};
  int T = 50;
  double z0 = 0.1 + 0.255, vz = -1, dt = 0.01;
  for (int toi = 0; toi < 2; toi++) {
    physModel* m = load_ball(toi ? "toi" : "", 0.5, &log);
    CHECK_MSG(m != NULL, "%s", log.error);
    if (!m) continue;
    physData* d = phys_make_data(m);
    physParamTable t;
    CHECK(phys_param_table_build(&t, m, spec, 1, &log) == PHYS_OK);
    double dz, de;
    set_ball(d, z0, 0.2, vz);
    chain_restitution(m, d, &t, T, &dz, &de);
    // the impact step starts at t_s: the first step whose start is within |v| dt of contact (margin 0.05), or
    // the first that starts in contact (margin 0, then with a position correction: discrete d(d_T)/d(d_0) is
    // 1 - beta)
    double tc = (z0 - 0.1) / -vz, ts = (g_margin > 0 ? floor(tc / dt) : ceil(tc / dt)) * dt, h = 1e-6;
    double discrete = g_margin > 0 ? -0.5 : 1 - m->opt.baumgarte;   // (margin: the step's own term, test_bounce)
    double th[1] = {0.5 + h};
    CHECK(phys_param_set(&t, m, th) == PHYS_OK);
    double zp = final_z(m, d, z0, T);
    th[0] = 0.5 - h;
    CHECK(phys_param_set(&t, m, th) == PHYS_OK);
    double zm = final_z(m, d, z0, T);
    th[0] = 0.5;
    CHECK(phys_param_set(&t, m, th) == PHYS_OK);
    double fd = (zp - zm) / (2 * h);
    printf("margin %g, eps 0.5, toi %d: d(d_T)/d(d_0) = %.15g, d(d_T)/d(eps) = %.15g (continuous %.15g, discrete %.15g, "
           "central differences %.12g)\n", g_margin, toi, dz, de, -vz * (T * dt - tc), -vz * (T * dt - ts), fd);
    CHECK_NEAR(dz, toi ? -0.5 : discrete, 1e-9);
    // the restitution law's phi(v_z) = v_z + delta at impact speed (contact.h) scales the rebound speed
    double ph = phys_restitution_phi(vz, NULL);
    CHECK_NEAR(de, -ph * (T * dt - (toi || g_margin > 0 ? tc : ts)), 1e-9);
    CHECK_NEAR(fd, -ph * (T * dt - (g_margin > 0 ? tc : ts)), 1e-6);
    if (toi) {
      // the rollout gradient's reverse pass applies the correction too
      int k = phys_rollout_interval(T, 0);
      size_t nw = phys_rollout_worksize(m, T, k, t.ntheta);
      double* work = malloc(sizeof(double) * nw);
      double xbar0[12], tb[1], L;
      set_ball(d, z0, 0.2, vz);
      CHECK(phys_rollout_grad(m, d, &t, T, k, NULL, loss_height, &T, work, &L, xbar0, NULL, tb, &log) == PHYS_OK);
      printf("  phys_rollout_grad: d(d_T)/d(d_0) = %.15g, d(d_T)/d(eps) = %.15g\n", xbar0[2], tb[0]);
      CHECK_NEAR(xbar0[2], -0.5, 1e-9);
      CHECK_NEAR(tb[0], de, 1e-9);
      free(work);
    }
    phys_param_table_free(&t);
    phys_free_data(d);
    phys_free_model(m);
  }
}

// 6. the option at restitution 0 and 1e-9: the ball on the plane (dist 0) closing at 1 m/s; d(dist+)/d(dist)
// = -eps: 0 and -1e-9 (before, the option switched on at eps > 0 only: +1 at 0)
static void test_eps_zero(void) {
  physLog log;
  double a[2];
  for (int k = 0; k < 2; k++) {
    physModel* m = load_ball("toi", k ? 1e-9 : 0, &log);
    CHECK_MSG(m != NULL, "%s", log.error);
    if (!m) return;
    physData* d = phys_make_data(m);
    int n2 = 2 * m->nv;
    double* A = malloc(sizeof(double) * (size_t)n2 * n2);
    set_ball(d, 0.1, 0.3, -1);
    CHECK(phys_step_jacobian(m, d, A, NULL) == PHYS_OK);
    a[k] = A[2 * n2 + 2];
    free(A);
    phys_free_data(d);
    phys_free_model(m);
  }
  printf("toi at restitution 0: d(dist+)/d(dist) = %.12g, at 1e-9: %.12g\n", a[0], a[1]);
  CHECK_NEAR(a[0], 0, 1e-12);
  CHECK_NEAR(a[1], a[0], 1e-8);
}

int main(void) {
  physRng rng;
  phys_rng_seed(&rng, 11);
  test_mjcf();
  test_bounce();
  test_one_step(&rng);
  test_eps_zero();
  test_restitution();
  // the same without a margin: the impact step starts penetrating (issue 10 item 15: toi gave -1.2)
  g_margin = 0;
  test_bounce();
  test_restitution();
  return test_done();
}
