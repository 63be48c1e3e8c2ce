// test_step_contact.c - the constrained step of src/step/step.c with a small reference solver written here
// (projected Gauss-Seidel on the friction pyramid, run to convergence), so that the step is tested
// independently of the lcp/cone/ccp solvers: a ball dropped on a plane stops (eps = 0) or rebounds to
// eps^2 of its height, a pendulum stops at its joint limit (also with contacts disabled), the penalty model
// rests at depth m g / k_c, an interpenetrating start is a counted warning and no NaN, impulses and the
// warm-start list are stored, the warm-start input is explicit (phys_step_warm is phys_step from a copy of
// d->contact, d->contact_prev untouched), and without active constraints the step is the unconstrained one bit
// for bit.
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "contact.h"
#include "step.h"
#include "test.h"

//---------------------------------------------------------------------------------------------------------
// reference solver: projected Gauss-Seidel, normal rows lambda >= 0, tangents in [-mu lambda_n, mu lambda_n],
// limit rows lambda >= 0; sweeps until no impulse changes by more than 1e-14 (relative)

static physStatus ref_solver(const physModel* m, physData* d, const physConstraintProblem* p,
                             physConstraintSolution* sol) {
  (void)m;
  (void)d;
  int n = p->n;
  for (int r = 0; r < n; r++) sol->lambda[r] = 0;
  int it;
  for (it = 0; it < 100000; it++) {
    double change = 0, scale = 1e-300;
    for (int r = 0; r < n; r++) {
      // w_r = (G lambda + g)_r; lambda_r <- proj(lambda_r - w_r / G_rr)
      double w = p->g[r];
      for (int k = 0; k < n; k++) w += p->G[r * n + k] * sol->lambda[k];
      double x = sol->lambda[r] - w / p->G[r * n + r], lo = 0, hi = INFINITY;
      if (r < 3 * p->nc && r % 3) {
        double bound = p->mu[r / 3] * sol->lambda[r - r % 3];
        lo = -bound;
        hi = bound;
      }
      x = x < lo ? lo : (x > hi ? hi : x);
      change = fmax(change, fabs(x - sol->lambda[r]));
      scale = fmax(scale, fabs(x));
      sol->lambda[r] = x;
    }
    if (change <= 1e-14 * scale) break;
  }
  for (int r = 0; r < n; r++) sol->state[r] = sol->lambda[r] != 0 ? PHYS_ROW_CLAMPING : PHYS_ROW_SEPARATING;
  sol->iterations = it + 1;
  sol->residual = 0;
  return PHYS_OK;
}

//---------------------------------------------------------------------------------------------------------
// models

// a ball (radius 0.1 m, 1 kg) above a plane; %s: <custom> content
static const char* BALL =
    "<mujoco model='ball'>\n"
    "  <option timestep='0.001'/>\n"
    "  <worldbody>\n"
    "    <geom name='floor' type='plane' size='5 5 .1' friction='0.5'/>\n"
    "    <body name='ball' pos='0 0 0.6'>\n"
    "      <freejoint/>\n"
    "      <geom name='ball' type='sphere' size='0.1' mass='1'/>\n"
    "    </body>\n"
    "  </worldbody>\n"
    "  <custom>%s</custom>\n"
    "</mujoco>\n";

// a 1 kg point-like pendulum at 0.5 m on a hinge about y limited to [-0.3, 0.3] rad; it falls towards +q
static const char* PENDULUM =
    "<mujoco model='pendulum'>\n"
    "  <compiler angle='radian'/>\n"
    "  <option timestep='0.001'/>\n"
    "  <worldbody>\n"
    "    <body name='arm'>\n"
    "      <joint name='hinge' type='hinge' axis='0 1 0' limited='true' range='-0.3 0.3'/>\n"
    "      <geom type='sphere' size='0.02' pos='0.5 0 0' mass='1' contype='0' conaffinity='0'/>\n"
    "    </body>\n"
    "  </worldbody>\n"
    "</mujoco>\n";

// write text (with %s replaced by arg) to a temporary file and load it
static physModel* load_text(const char* text, const char* arg) {
  char path[] = "/tmp/test_step_contact_XXXXXX.xml", buf[4096];
  int fd = mkstemps(path, 4);
  CHECK(fd >= 0);
  if (fd < 0) return NULL;
  FILE* f = fdopen(fd, "w");
  snprintf(buf, sizeof buf, text, arg);
  fputs(buf, f);
  fclose(f);
  physLog log;
  memset(&log, 0, sizeof log);
  physModel* m = phys_load_mjcf(path, &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  unlink(path);
  return m;
}

//---------------------------------------------------------------------------------------------------------
// ball on a plane

// drop the ball from bottom height h (m) for T seconds; the apex after the first contact, the last state
static void drop(const physModel* m, physData* d, double h, double T, double* apex) {
  phys_reset_data(m, d);
  d->qpos[2] = 0.1 + h;
  int touched = 0;
  *apex = 0;
  for (int s = 0; s < (int)(T / m->opt.timestep + 0.5); s++) {
    phys_step_solver(m, d, ref_solver);
    touched |= d->ncon > 0;
    if (touched) *apex = fmax(*apex, d->qpos[2] - 0.1);
  }
}

static void test_ball(void) {
  double apex;
  // eps = 0: no rebound; rests at r with velocity 0, lambda_n = m g dt, qfrc_constraint = m g
  physModel* m = load_text(BALL, "");
  if (!m) return;
  physData* d = phys_make_data(m);
  drop(m, d, 0.5, 1.5, &apex);
  printf("ball eps 0: apex after contact %.3g m, rest height %.9f, v %.2g, lambda_n %.9g\n", apex,
         d->qpos[2], d->qvel[2], d->contact[0].lambda[0]);
  CHECK(apex < 1e-3);
  CHECK_NEAR(d->qpos[2], 0.1, 1e-4);
  CHECK(fabs(d->qvel[2]) < 1e-6 && fabs(d->qvel[0]) < 1e-12 && fabs(d->qvel[1]) < 1e-12);
  CHECK(d->ncon == 1 && d->ncon_prev == 1 && d->contact_prev[0].geom[1] == d->contact[0].geom[1]);
  CHECK_REL(d->contact[0].lambda[0], 9.81 * m->opt.timestep, 1e-4, 0);
  CHECK_REL(d->qfrc_constraint[2], 9.81, 1e-4, 0);
  CHECK(d->contact[0].state[0] == PHYS_ROW_CLAMPING && d->contact[0].efc_adr == 0);
  CHECK(d->solver_iter > 0 && d->nwarning == 0 && d->pstack == 0);
  phys_free_data(d);
  phys_free_model(m);

  // eps = 0.8 (the larger of the geoms'): apex eps^2 h within 2%
  m = load_text(BALL, "<numeric name='physid:restitution:ball' data='0.8'/>");
  if (!m) return;
  d = phys_make_data(m);
  drop(m, d, 0.5, 1.0, &apex);
  printf("ball eps 0.8: apex %.5f m, eps^2 h = %.5f\n", apex, 0.64 * 0.5);
  CHECK_REL(apex, 0.64 * 0.5, 0.02, 0);
  phys_free_data(d);
  phys_free_model(m);
}

//---------------------------------------------------------------------------------------------------------
// pendulum at its joint limit

static void test_limit(void) {
  physModel* m = load_text(PENDULUM, "");
  if (!m) return;
  physData* d = phys_make_data(m);
  for (int pass = 0; pass < 2; pass++) {
    // pass 1: contacts disabled, limits still act
    if (pass) m->opt.disableflags |= PHYS_DSBL_CONTACT;
    phys_reset_data(m, d);
    double qmax = -1, vimpact = 0;
    for (int s = 0; s < 2000; s++) {
      double v = d->qvel[0];
      phys_step_solver(m, d, ref_solver);
      if (d->nlimit && !vimpact) vimpact = v;
      qmax = fmax(qmax, d->qpos[0]);
    }
    printf("pendulum: impact %.4f rad/s, overshoot %.3g rad, final q %.9f, v %.2g\n", vimpact, qmax - 0.3,
           d->qpos[0], d->qvel[0]);
    CHECK(vimpact > 1);
    // overshoot at most one step of the impact velocity (plus gravity's share)
    CHECK(qmax - 0.3 < vimpact * m->opt.timestep * 1.1);
    CHECK_NEAR(d->qpos[0], 0.3, 1e-4);
    CHECK(fabs(d->qvel[0]) < 1e-3);
    CHECK(d->ncon == 0 && d->nwarning == 0);
  }
  // penalty limit, stiff enough that explicit Euler would diverge (omega dt = sqrt(k/I) dt = 6): the step
  // integrates it implicitly and the pendulum rests at 0.3 + m g l cos(0.3) / k
  m->opt.disableflags &= ~PHYS_DSBL_CONTACT;
  m->opt.contact = PHYS_CONTACT_PENALTY;
  m->opt.penalty_stiffness = 1e7;
  m->opt.penalty_damping = 1e3;
  phys_reset_data(m, d);
  for (int s = 0; s < 3000; s++) phys_step(m, d);
  double qrest = 0.3 + 9.81 * 0.5 * cos(0.3) / 1e7;
  printf("penalty limit: final q %.12f, want %.12f, v %.2g\n", d->qpos[0], qrest, d->qvel[0]);
  CHECK(d->nwarning == 0 && d->nlimit == 1);
  CHECK_NEAR(d->qpos[0], qrest, 1e-11);
  m->opt.contact = PHYS_CONTACT_LCP;
  // limits disabled: it swings through
  m->opt.disableflags |= PHYS_DSBL_LIMIT;
  phys_reset_data(m, d);
  double qmax = -1;
  for (int s = 0; s < 2000; s++) {
    phys_step_solver(m, d, ref_solver);
    qmax = fmax(qmax, d->qpos[0]);
  }
  CHECK(qmax > 1.5);
  phys_free_data(d);
  phys_free_model(m);
}

//---------------------------------------------------------------------------------------------------------
// penalty model through phys_step; interpenetrating start; the unconstrained fast path

static void test_penalty(void) {
  physModel* m = load_text(BALL, "<text name='physid:contact' data='penalty'/>");
  if (!m) return;
  physData* d = phys_make_data(m);
  double apex;
  drop(m, d, 0.05, 3.0, &apex);
  double depth = 0.1 - d->qpos[2], want = 9.81 / m->opt.penalty_stiffness;
  printf("penalty: rest depth %.9g, m g / k_c = %.9g\n", depth, want);
  CHECK_REL(depth, want, 1e-6, 0);
  CHECK_REL(d->qfrc_constraint[2], 9.81, 1e-6, 0);
  CHECK(d->nwarning == 0);
  phys_free_data(d);
  phys_free_model(m);
}

static void test_interpenetration(void) {
  physModel* m = load_text(BALL, "");
  if (!m) return;
  physData* d = phys_make_data(m);
  phys_reset_data(m, d);
  d->qpos[2] = 0.05;   // 5 cm into the floor
  phys_step_solver(m, d, ref_solver);
  CHECK(d->nwarning == 1 && strstr(d->lastwarning, "interpenetrates"));
  // pushed out at beta*depth/dt = 10 m/s (velocity-level stabilization), it flies 5 m up and lands
  double zmax = 0;
  for (int s = 0; s < 6000; s++) {
    phys_step_solver(m, d, ref_solver);
    zmax = fmax(zmax, d->qpos[2]);
  }
  printf("interpenetrating start: thrown up to %.3g m, final height %.6f\n", zmax, d->qpos[2]);
  CHECK(d->nwarning == 1);
  CHECK(isfinite(d->qpos[2]) && fabs(d->qpos[2] - 0.1) < 1e-4 && fabs(d->qvel[2]) < 1e-6);
  phys_free_data(d);
  phys_free_model(m);
}

static void test_fast_path(void) {
  physModel* m = load_text(BALL, "");
  if (!m) return;
  physData* a = phys_make_data(m);
  physData* b = phys_make_data(m);
  phys_reset_data(m, a);
  phys_reset_data(m, b);
  a->qpos[2] = b->qpos[2] = 5;
  a->qvel[3] = b->qvel[3] = 1.5;   // spinning in flight
  a->qvel[0] = b->qvel[0] = 0.3;
  for (int i = 0; i < m->nv * m->nv; i++) a->qM[i] = NAN;
  for (int s = 0; s < 200; s++) {
    phys_step(m, a);                               // contacts enabled, none found
    m->opt.disableflags |= PHYS_DSBL_CONTACT;
    phys_step(m, b);
    m->opt.disableflags &= ~PHYS_DSBL_CONTACT;
  }
  CHECK(memcmp(a->qpos, b->qpos, sizeof(double) * (size_t)m->nq) == 0);
  CHECK(memcmp(a->qvel, b->qvel, sizeof(double) * (size_t)m->nv) == 0);
  CHECK(memcmp(a->qacc, b->qacc, sizeof(double) * (size_t)m->nv) == 0);
  CHECK(isnan(a->qM[0]));   // no mass matrix on the unconstrained path
  CHECK(a->ncon == 0 && a->qfrc_constraint[2] == 0);
  phys_free_data(a);
  phys_free_data(b);
  phys_free_model(m);
}

//---------------------------------------------------------------------------------------------------------
// the warm-start input (physWarmStart, step.h): phys_step_warm from a copy of d->contact is phys_step bit for
// bit and neither reads nor writes d->contact_prev; the warm start is used (a cold start takes more sweeps)

// one step from (q0, v0, t0, the contact list c0 of n0 contacts) with the warm start w (NULL: phys_step);
// the result into q1, v1, c1 (nconmax contacts); returns the solver's iterations
static int step_from(const physModel* m, physData* d, const double* q0, const double* v0, double t0,
                     const physContact* c0, int n0, const physWarmStart* w, double* q1, double* v1, physContact* c1) {
  memcpy(d->qpos, q0, sizeof(double) * (size_t)m->nq);
  memcpy(d->qvel, v0, sizeof(double) * (size_t)m->nv);
  memcpy(d->contact, c0, sizeof(physContact) * (size_t)n0);
  d->ncon = n0, d->time = t0;
  if (w) phys_step_warm(m, d, NULL, w, NULL);
  else phys_step(m, d);
  memcpy(q1, d->qpos, sizeof(double) * (size_t)m->nq);
  memcpy(v1, d->qvel, sizeof(double) * (size_t)m->nv);
  memcpy(c1, d->contact, sizeof(physContact) * (size_t)d->ncon);
  return d->solver_iter;
}

static void test_warm_input(void) {
  physLog log;
  memset(&log, 0, sizeof log);
  physModel* m = phys_load_mjcf("tests/data/contact/box_plane.xml", &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  if (!m) return;
  m->opt.contact = PHYS_CONTACT_CONE;   // (an iterative solver: its sweeps show the warm start)
  physData* d = phys_make_data(m);
  for (int s = 0; s < 300; s++) phys_step(m, d);   // the box settles on its four corners
  int nq = m->nq, nv = m->nv, n0 = d->ncon, cap = m->nconmax + 1;
  CHECK(n0 == 4);
  double q0[7], v0[6], qa[7], va[6], qb[7], vb[6], qc[7], vc[6], t0 = d->time;
  physContact *c0 = calloc((size_t)cap, sizeof(physContact)), *ca = calloc((size_t)cap, sizeof(physContact)),
              *cb = calloc((size_t)cap, sizeof(physContact)), *cc = calloc((size_t)cap, sizeof(physContact)),
              *sentinel = malloc(sizeof(physContact) * (size_t)cap);
  CHECK(nq == 7 && nv == 6);
  memcpy(q0, d->qpos, sizeof q0), memcpy(v0, d->qvel, sizeof v0), memcpy(c0, d->contact, sizeof(physContact) * (size_t)n0);
  int ia = step_from(m, d, q0, v0, t0, c0, n0, NULL, qa, va, ca);
  // d->contact_prev filled with a pattern the step must neither read nor change
  memset(sentinel, 0x5a, sizeof(physContact) * (size_t)m->nconmax);
  memcpy(d->contact_prev, sentinel, sizeof(physContact) * (size_t)m->nconmax);
  d->ncon_prev = 3;
  physWarmStart warm = {n0, c0}, cold = {0, NULL};
  int ib = step_from(m, d, q0, v0, t0, c0, n0, &warm, qb, vb, cb);
  CHECK(memcmp(qa, qb, sizeof qa) == 0 && memcmp(va, vb, sizeof va) == 0 && ia == ib);
  CHECK(d->ncon == n0 && memcmp(ca, cb, sizeof(physContact) * (size_t)n0) == 0);
  CHECK(d->ncon_prev == 3 && memcmp(d->contact_prev, sentinel, sizeof(physContact) * (size_t)m->nconmax) == 0);
  int ic = step_from(m, d, q0, v0, t0, c0, n0, &cold, qc, vc, cc);
  printf("warm start: resting box, cone sweeps warm %d, cold %d\n", ib, ic);
  CHECK(ic > ib);
  CHECK(d->nwarning == 0 && d->pstack == 0);
  free(c0), free(ca), free(cb), free(cc), free(sentinel);
  phys_free_data(d);
  phys_free_model(m);
}

int main(void) {
  test_warm_input();
  test_ball();
  test_limit();
  test_penalty();
  test_interpenetration();
  test_fast_path();
  return test_done();
}
