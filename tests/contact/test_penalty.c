// test_penalty.c - src/contact/penalty.c: the restitution law of the clamped spring-damper and its inverse
// (against RK4 integration of the impact), the contact linearization (normal spring-damper with the damping
// from restitution and the Delassus diagonal, regularized Coulomb friction below and above v_slip, release
// of pulling contacts, no force out of contact), the implicit terms and their solve (a viscous contact's
// tangential velocity shrinks by 1 / (1 + dt C w) whatever dt C w), one-sided joint-limit springs, and a ball
// resting on a plane at depth m g / k_c (a hand-made sphere-plane contact each step, independent of collision
// and of the step).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chol.h"
#include "collision.h"
#include "contact.h"
#include "dyn.h"
#include "factor.h"
#include "test.h"

static const char* MODEL =
    "<mujoco model='pen'>\n"
    "  <compiler angle='radian'/>\n"
    "  <option timestep='0.001'/>\n"
    "  <worldbody>\n"
    "    <geom name='floor' type='plane' size='5 5 .1'/>\n"
    "    <body name='ball' pos='0 0 0.1'>\n"
    "      <freejoint/>\n"
    "      <geom name='ball' type='sphere' size='0.1' mass='1.5'/>\n"
    "    </body>\n"
    "    <body name='arm' pos='0 0 2'>\n"
    "      <joint name='hinge' type='hinge' axis='0 1 0' limited='true' range='-0.5 0.5'/>\n"
    "      <geom name='arm' type='capsule' fromto='0 0 0 0.5 0 0' size='0.05' contype='0' conaffinity='0'/>\n"
    "    </body>\n"
    "  </worldbody>\n"
    "</mujoco>\n";

// write MODEL to a temporary file and load it
static physModel* load_model(void) {
  char path[] = "/tmp/test_penalty_XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  if (fd < 0) return NULL;
  FILE* f = fdopen(fd, "w");
  fputs(MODEL, f);
  fclose(f);
  char file[64];
  snprintf(file, sizeof file, "%s.xml", path);
  rename(path, file);
  physLog log;
  memset(&log, 0, sizeof log);
  physModel* m = phys_load_mjcf(file, &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  unlink(file);
  return m;
}

// kinematics and velocities at the current state
static void kin(const physModel* m, physData* d) {
  phys_kinematics(m, d);
  phys_com_pos(m, d);
  phys_com_vel(m, d);
}

// the floor-ball contact from the ball's height: normal +z, point midway, dist = z - r
static void ball_contact(const physModel* m, physData* d, double mu) {
  int ball = phys_name2id(m, "body", "ball");
  physContact* c = d->contact;
  memset(c, 0, sizeof *c);
  c->geom[0] = phys_name2id(m, "geom", "floor");
  c->geom[1] = phys_name2id(m, "geom", "ball");
  double z = d->xpos[3 * ball + 2], frame[9] = {0, 0, 1, 1, 0, 0, 0, 1, 0};
  memcpy(c->frame, frame, sizeof frame);
  c->pos[0] = d->xpos[3 * ball];
  c->pos[1] = d->xpos[3 * ball + 1];
  c->pos[2] = 0.5 * (z - 0.1);
  c->dist = z - 0.1;
  c->mu = mu;
  c->pair = -1;
  d->ncon = 1;
}

// the ball's state: height z, velocity (vx, 0, vz), no rotation; kinematics, M~ = M factored into d->qLD
// (no joint damping here), the floor contact with friction mu and restitution eps
static void ball_state(const physModel* m, physData* d, double z, double vx, double vz, double mu, double eps) {
  memset(d->qvel, 0, sizeof(double) * (size_t)m->nv);
  memcpy(d->qpos, m->qpos0, sizeof(double) * (size_t)m->nq);
  d->qpos[2] = z;
  d->qvel[0] = vx;
  d->qvel[2] = vz;
  kin(m, d);
  phys_crb(m, d);
  phys_bias_forces(m, d);
  CHECK(phys_factor_m(m, d->qLD, d->qM, NULL) == m->nv);
  ball_contact(m, d, mu);
  d->contact[0].restitution = eps;
}

//---------------------------------------------------------------------------------------------------------
// restitution of the clamped spring-damper

// exit speed of the impact x'' = -max(0, x + 2 zeta x') (w = 1) entered at x = 0, x' = 1, by RK4 (h = 1e-4)
static double impact_rk4(double zeta) {
  double x = 0, v = 1, h = 1e-4;
#define FORCE(X, V) fmax(0.0, (X) + 2 * zeta * (V))
  for (int i = 0; i < 1000000 && x >= 0; i++) {
    double k1x = v, k1v = -FORCE(x, v);
    double k2x = v + 0.5 * h * k1v, k2v = -FORCE(x + 0.5 * h * k1x, k2x);
    double k3x = v + 0.5 * h * k2v, k3v = -FORCE(x + 0.5 * h * k2x, k3x);
    double k4x = v + h * k3v, k4v = -FORCE(x + h * k3x, k4x);
#undef FORCE
    x += h / 6 * (k1x + 2 * k2x + 2 * k3x + k4x);
    v += h / 6 * (k1v + 2 * k2v + 2 * k3v + k4v);
  }
  return -v;   // after the force vanished the speed is constant: the exit speed
}

static void test_restitution(void) {
  // the closed form against the integrated impact, under-, critically and overdamped; the force's kink
  // where the clamp starts limits RK4 to O(h^2) there: 1e-6
  const double zetas[] = {0, 0.05, 0.3, 0.7, 0.99, 1, 1.01, 1.5, 4};
  for (size_t i = 0; i < sizeof zetas / sizeof zetas[0]; i++) {
    double e = phys_penalty_restitution(zetas[i]), ref = impact_rk4(zetas[i]);
    printf("penalty: zeta %.2f eps %.6f (RK4 %.6f)\n", zetas[i], e, ref);
    CHECK_NEAR(e, ref, 1e-6);
  }
  CHECK_NEAR(phys_penalty_restitution(1), exp(-2.0), 1e-15);
  // livelier than the unclamped law exp(-pi zeta / sqrt(1 - zeta^2)) (the clamp ends the contact early)
  CHECK(phys_penalty_restitution(0.3) > exp(-M_PI * 0.3 / sqrt(1 - 0.09)) + 0.05);
  // the inverse, and its ends
  const double eps[] = {1e-4, 0.01, 0.1, exp(-2.0), 0.2, 0.5, 0.8, 0.99};
  for (size_t i = 0; i < sizeof eps / sizeof eps[0]; i++)
    CHECK_REL(phys_penalty_restitution(phys_penalty_zeta(eps[i])), eps[i], 1e-10, 0);
  CHECK(phys_penalty_zeta(1) == 0 && isinf(phys_penalty_zeta(0)));
  CHECK_NEAR(phys_penalty_zeta(exp(-2.0)), 1, 1e-9);
}

//---------------------------------------------------------------------------------------------------------
// the contact linearization

static void test_law(physModel* m, physData* d) {
  double k = m->opt.penalty_stiffness, vs = m->opt.penalty_vslip, mu = 0.4, mass = 1.5, dt = m->opt.timestep;
  int nv = m->nv;
  double J[3 * 16], rhs[16], H[16 * 16], jacp[3 * 16];
  physPenaltyContact pc;
  CHECK(k == 1e4 && vs == 1e-3 && nv <= 16);
  // the ball's contact point lies below its centre along the normal: m_e = m exactly, and
  // d = 2 zeta sqrt(k m) with zeta = PHYS_PENALTY_ZETA_MAX for restitution 0, zeta(eps) otherwise
  double d0 = 2 * PHYS_PENALTY_ZETA_MAX * sqrt(k * mass), d5 = 2 * phys_penalty_zeta(0.5) * sqrt(k * mass);

  // penetration 1 cm, approaching at 0.5 m/s, sliding at 2 m/s: f_n = k 0.01 + d 0.5, C = mu f_n / 2
  ball_state(m, d, 0.09, 2, -0.5, mu, 0);
  phys_penalty_contacts(m, d, d->contact, d->ncon, d->qLD, &pc, J);
  double fn = k * 0.01 + d0 * 0.5;
  CHECK(pc.active == 1);
  CHECK_NEAR(pc.spring, k * 0.01, 1e-9);
  CHECK_REL(pc.damping, d0, 1e-12, 0);
  CHECK_REL(pc.C, mu * fn / 2, 1e-12, 0);
  // rows: frame rows times J_rel = J(pos) (the floor is the world)
  phys_jac(m, d, d->contact[0].pos, 1, jacp, NULL);
  for (int i = 0; i < nv; i++) {
    CHECK_NEAR(J[i], jacp[2 * nv + i], 1e-15);        // normal +z
    CHECK_NEAR(J[nv + i], jacp[i], 1e-15);            // tangent 1 +x
    CHECK_NEAR(J[2 * nv + i], jacp[nv + i], 1e-15);   // tangent 2 +y
  }
  // assembled: rhs = J' (f_n, -C v_t); H += dt (d J_n' J_n + C J_t' J_t) in the lower triangle
  memset(rhs, 0, sizeof rhs);
  memset(H, 0, sizeof H);
  phys_penalty_assemble(m, d, d->ncon, &pc, J, rhs, H);
  double F[3] = {-mu * fn, 0, fn};   // world: friction -mu f_n along x, normal along z
  for (int i = 0; i < nv; i++) {
    CHECK_NEAR(rhs[i], jacp[i] * F[0] + jacp[nv + i] * F[1] + jacp[2 * nv + i] * F[2], 1e-9);
    for (int j = 0; j <= i; j++) {
      double want = dt * (d0 * J[i] * J[j] + pc.C * (J[nv + i] * J[nv + j] + J[2 * nv + i] * J[2 * nv + j]));
      CHECK_NEAR(H[i * nv + j], want, 1e-12);
    }
  }
  CHECK(fabs(rhs[4]) > 1);   // friction below the centre tilts the ball about y
  // the forces at a velocity: finish gives qfrc = J' F and lambda = F dt (frame)
  memset(rhs, 0, sizeof rhs);
  phys_penalty_finish(m, d->contact, d->ncon, &pc, J, d->qvel, rhs);
  CHECK_NEAR(d->contact[0].lambda[0], fn * dt, 1e-12);
  CHECK_NEAR(d->contact[0].lambda[1], -mu * fn * dt, 1e-12);
  CHECK_NEAR(d->contact[0].lambda[2], 0, 1e-15);
  CHECK_NEAR(rhs[2], fn, 1e-9);

  // restitution 0.5: the damping of zeta(0.5); restitution 1: none
  ball_state(m, d, 0.09, 0, -0.5, mu, 0.5);
  phys_penalty_contacts(m, d, d->contact, d->ncon, d->qLD, &pc, J);
  CHECK_REL(pc.damping, d5, 1e-12, 0);
  ball_state(m, d, 0.09, 0, -0.5, mu, 1);
  phys_penalty_contacts(m, d, d->contact, d->ncon, d->qLD, &pc, J);
  CHECK(pc.damping == 0 && pc.active);

  // slow slip (|v_t| = vs/4): viscous, C = mu f_n / v_slip
  ball_state(m, d, 0.09, 0.25 * vs, 0, mu, 0);
  phys_penalty_contacts(m, d, d->contact, d->ncon, d->qLD, &pc, J);
  CHECK_REL(pc.C, mu * k * 0.01 / vs, 1e-12, 0);

  // separating fast: k 0.01 - d 2 < 0 is no force at all (no adhesion, no friction); update releases a
  // contact whose force would pull at the new velocity, and keeps C at the new f_n and v_t otherwise
  ball_state(m, d, 0.09, 1, 2, mu, 0);
  phys_penalty_contacts(m, d, d->contact, d->ncon, d->qLD, &pc, J);
  CHECK(!pc.active && pc.C == 0);
  ball_state(m, d, 0.09, 0, 0, mu, 0);
  phys_penalty_contacts(m, d, d->contact, d->ncon, d->qLD, &pc, J);
  CHECK(pc.active);
  double vnew[16] = {0};
  vnew[2] = 2 * k * 0.01 / d0;   // f_n(v+) = k 0.01 - d v+ < 0
  CHECK(phys_penalty_update(m, d->contact, d->ncon, &pc, J, vnew) == 2 && !pc.active);
  ball_state(m, d, 0.09, 0, 0, mu, 0);
  phys_penalty_contacts(m, d, d->contact, d->ncon, d->qLD, &pc, J);
  vnew[2] = 0.25 * k * 0.01 / d0;
  vnew[0] = 0.1;
  CHECK(phys_penalty_update(m, d->contact, d->ncon, &pc, J, vnew) == 1 && pc.active);
  CHECK_REL(pc.C, mu * 0.75 * k * 0.01 / 0.1, 1e-12, 0);
  // out of contact (dist > 0, even approaching): inactive
  ball_state(m, d, 0.1001, 0, -1, mu, 0);
  phys_penalty_contacts(m, d, d->contact, d->ncon, d->qLD, &pc, J);
  CHECK(!pc.active);
}

// the implicit solve of one viscous contact: (M + dt C J_t' J_t) a = -C J_t' v_t gives the contact's new
// tangential velocity v_t / (1 + dt C w), w = J_t M^-1 J_t' (Sherman-Morrison), even for dt C w = 1e3
// where explicit friction would reverse and grow the slip
static void test_implicit_friction(physModel* m, physData* d) {
  int nv = m->nv;
  double J[3 * 16], rhs[16], x[16], vt0 = 0.5 * m->opt.penalty_vslip, dt = m->opt.timestep;
  physPenaltyContact pc;
  ball_state(m, d, 0.1 - 1e-3, vt0, 0, 0.5, 0);
  phys_penalty_contacts(m, d, d->contact, d->ncon, d->qLD, &pc, J);
  pc.spring = 0;    // tangential part only (the normal rows would not change v_t: J_n M^-1 J_t' = 0 here)
  pc.damping = 0;
  pc.C *= 1e3 / (dt * pc.C * 1.0);   // dt C = 1e3 (with w ~ 1 / kg)
  phys_solve_m(m, d->qLD, x, J + nv);
  double w = 0;
  for (int i = 0; i < nv; i++) w += J[nv + i] * x[i];
  memcpy(d->qLD, d->qM, sizeof(double) * (size_t)nv * (size_t)nv);
  memset(rhs, 0, sizeof rhs);
  phys_penalty_assemble(m, d, d->ncon, &pc, J, rhs, d->qLD);
  CHECK(phys_chol_factor(d->qLD, nv, 0) == nv);
  phys_chol_solve(rhs, d->qLD, rhs, nv);
  double vt = 0;
  for (int i = 0; i < nv; i++) vt += J[nv + i] * (d->qvel[i] + dt * rhs[i]);
  printf("penalty: implicit friction dt C w = %.0f: v_t %.3g -> %.6g (want %.6g)\n", dt * pc.C * w, vt0, vt,
         vt0 / (1 + dt * pc.C * w));
  CHECK(dt * pc.C * w > 100);
  CHECK_REL(vt, vt0 / (1 + dt * pc.C * w), 1e-9, 0);
  CHECK(vt > 0);
}

//---------------------------------------------------------------------------------------------------------
// joint limits

static void test_limits(physModel* m, physData* d) {
  double k = m->opt.penalty_stiffness, c = m->opt.penalty_damping, dt = m->opt.timestep, qfrc[16];
  int nv = m->nv, jh = phys_name2id(m, "joint", "hinge"), dh = m->jnt_dofadr[jh];
  // hinge 0.1 beyond its upper limit moving on at 0.2 rad/s: f = -(k 0.1 + c 0.2) on the dof
  memcpy(d->qpos, m->qpos0, sizeof(double) * (size_t)m->nq);
  memset(d->qvel, 0, sizeof(double) * (size_t)nv);
  d->qpos[m->jnt_qposadr[jh]] = 0.6;
  d->qvel[dh] = 0.2;
  memset(qfrc, 0, sizeof qfrc);
  CHECK(phys_penalty_limits(m, d, qfrc, NULL) == 1);
  CHECK_NEAR(qfrc[dh], -(k * 0.1 + c * 0.2), 1e-9);
  // lower limit, returning fast: clamped to 0; inside the range: 0; limits disabled: 0
  d->qpos[m->jnt_qposadr[jh]] = -0.51;
  d->qvel[dh] = 5;
  memset(qfrc, 0, sizeof qfrc);
  CHECK(phys_penalty_limits(m, d, qfrc, NULL) == 0);
  CHECK(qfrc[dh] == 0);
  d->qvel[dh] = -0.1;
  phys_penalty_limits(m, d, qfrc, NULL);
  CHECK_NEAR(qfrc[dh], k * 0.01 + c * 0.1, 1e-9);
  memset(qfrc, 0, sizeof qfrc);
  m->opt.disableflags |= PHYS_DSBL_LIMIT;
  phys_penalty_limits(m, d, qfrc, NULL);
  CHECK(qfrc[dh] == 0);
  m->opt.disableflags &= ~PHYS_DSBL_LIMIT;
  // implicit form: qfrc += f - dt k v, add += dt d + dt^2 k; the count of active limits
  double add[16] = {0};
  memset(qfrc, 0, sizeof qfrc);
  CHECK(phys_penalty_limits(m, d, qfrc, add) == 1);
  CHECK_NEAR(qfrc[dh], k * 0.01 + c * 0.1 - dt * k * (-0.1), 1e-9);
  CHECK_NEAR(add[dh], dt * c + dt * dt * k, 1e-15);
  CHECK(add[0] == 0 && qfrc[0] == 0);
  d->qpos[m->jnt_qposadr[jh]] = 0.3;
  memset(qfrc, 0, sizeof qfrc);
  CHECK(phys_penalty_limits(m, d, qfrc, NULL) == 0 && qfrc[dh] == 0);
}

//---------------------------------------------------------------------------------------------------------
// a ball dropped on the plane settles at depth m g / k_c

// one linearly implicit step with a hand-made contact: v+ = v + dt (M + dt(d J_n'J_n + C J_t'J_t))^-1 rhs
static void settle_step(const physModel* m, physData* d, double eps) {
  int nv = m->nv;
  double J[3 * 16], rhs[16];
  physPenaltyContact pc;
  ball_state(m, d, d->qpos[2], d->qvel[0], d->qvel[2], 0.5, eps);
  phys_penalty_contacts(m, d, d->contact, d->ncon, d->qLD, &pc, J);
  memcpy(d->qLD, d->qM, sizeof(double) * (size_t)nv * (size_t)nv);
  for (int i = 0; i < nv; i++) rhs[i] = -d->qfrc_bias[i];
  phys_penalty_assemble(m, d, d->ncon, &pc, J, rhs, d->qLD);
  CHECK(phys_chol_factor(d->qLD, nv, 0) == nv);
  phys_chol_solve(rhs, d->qLD, rhs, nv);
  // semi-implicit Euler of the ball's translation (it does not spin: no tangential motion)
  for (int i = 0; i < 3; i++) {
    d->qvel[i] += m->opt.timestep * rhs[i];
    d->qpos[i] += m->opt.timestep * d->qvel[i];
  }
}

static void test_settle(const physModel* m, physData* d) {
  double mass = 1.5, g = 9.81, k = m->opt.penalty_stiffness;
  const double eps[] = {0, 0.5};
  for (int e = 0; e < 2; e++) {
    double minz = 1;
    memcpy(d->qpos, m->qpos0, sizeof(double) * (size_t)m->nq);
    memset(d->qvel, 0, sizeof(double) * (size_t)m->nv);
    d->qpos[2] = 0.15;   // 5 cm drop
    for (int s = 0; s < 3000; s++) {
      settle_step(m, d, eps[e]);
      minz = fmin(minz, d->qpos[2]);
    }
    double depth = 0.1 - d->qpos[2];
    printf("penalty eps %.1f: settled depth %.9g, m g / k_c = %.9g, deepest %.4g, |v| %.2g\n", eps[e], depth,
           mass * g / k, 0.1 - minz, fabs(d->qvel[2]));
    CHECK_REL(depth, mass * g / k, 1e-6, 0);
    CHECK(fabs(d->qvel[2]) < 1e-8 && fabs(d->qvel[0]) == 0 && fabs(d->qvel[4]) == 0);
    // the impact went deeper than the rest depth and less than the undamped spring's energy bound
    CHECK(0.1 - minz > mass * g / k && 0.1 - minz < sqrt(2 * mass * g * 0.05 / k) + 2 * mass * g / k);
  }
}

// phys_penalty_damping: d = max(2 zeta sqrt(k / w), k dt - 2 / (w dt)). At the floor (k dt^2 > 2 m_e) the
// one-contact step matrix [[1 - a, dt b], [-a / dt, b]] (a = k dt^2 / (m + dt d), b = m / (m + dt d)) has
// trace 0, so both eigenvalues have modulus sqrt(b) < 1; above it the restitution's value. Partials against
// central differences on both branches
static void test_damping_floor(void) {
  double k = 1e4, dt = 0.01, me = 1 / 5.5, w = 1 / me;
  double d = phys_penalty_damping(0.2, k, w, dt, NULL, NULL, NULL);
  CHECK_NEAR(d, k * dt - 2 * me / dt, 1e-12);
  double a = k * dt * dt / (me + dt * d), b = me / (me + dt * d);
  CHECK_NEAR(1 - a + b, 0, 1e-12);
  CHECK_NEAR(phys_penalty_damping(0.2, k, w, 0.001, NULL, NULL, NULL), 2 * 0.2 * sqrt(k * me), 1e-12);
  for (int br = 0; br < 2; br++) {
    double z = 0.2, h = 1e-6, dk, dw, dz, st = br ? 0.001 : dt;
    phys_penalty_damping(z, k, w, st, &dk, &dw, &dz);
    double fk = (phys_penalty_damping(z, k * (1 + h), w, st, NULL, NULL, NULL) -
                 phys_penalty_damping(z, k * (1 - h), w, st, NULL, NULL, NULL)) / (2 * h * k);
    double fw = (phys_penalty_damping(z, k, w * (1 + h), st, NULL, NULL, NULL) -
                 phys_penalty_damping(z, k, w * (1 - h), st, NULL, NULL, NULL)) / (2 * h * w);
    double fz = (phys_penalty_damping(z + h, k, w, st, NULL, NULL, NULL) -
                 phys_penalty_damping(z - h, k, w, st, NULL, NULL, NULL)) / (2 * h);
    CHECK_REL(dk, fk, 1e-7, 1e-9);
    CHECK_REL(dw, fw, 1e-7, 1e-9);
    CHECK_REL(dz, fz, 1e-7, 1e-9);
  }
}

//---------------------------------------------------------------------------------------------------------
// the step matrix's elimination tree (phys_penalty_etree)

// tests/data/contact/islands.xml (box a: dofs 0-5, boxes b1 6-11 and b2 12-17, sphere c 18-23) with b2 on b1
// and c on a, each 1 mm deep (a and b1 1 mm into the floor): two islands of coupled trees, {a, c} not contiguous in the dof order. The
// step's H = M~ + sum J' W J from the real contacts (phys_penalty_contacts, phys_penalty_assemble) factored
// and solved on the dense pattern and along the elimination tree: the same numbers (the dense factor's
// entries off the tree's ancestors are exact zeros), with 2 x 78 factor entries instead of 300
static void test_etree(void) {
  const char* src = getenv("PHYS_SOURCE");
  char file[1024];
  snprintf(file, sizeof file, "%s/tests/data/contact/islands.xml", src ? src : ".");
  physLog log;
  memset(&log, 0, sizeof log);
  physModel* m = phys_load(file, NULL, &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  if (!m) return;
  m->opt.contact = PHYS_CONTACT_PENALTY;
  physData* d = phys_make_data(m);
  int nv = m->nv, par[24], tree[24];
  CHECK(nv == 24);
  const double z[4] = {0.099, 0.099, 0.298, 0.1};   // a, b1, b2, c (x at 0, 1, 1, 0)
  for (int b = 0; b < 4; b++) d->qpos[7 * b + 2] = z[b];
  d->qpos[7 * 3] = 0, d->qpos[7 * 3 + 2] = 0.298;   // c on a
  kin(m, d);
  phys_crb(m, d);
  phys_bias_forces(m, d);
  CHECK(phys_factor_m(m, d->qLD, d->qM, NULL) == nv);
  phys_collision(m, d);
  int nc = d->ncon;
  CHECK(nc >= 4 && !phys_penalty_tree(m, d->contact, nc));
  phys_penalty_etree(m, d, d->contact, nc, par);
  // roots: one per island; a's and c's dofs in one tree, b1's and b2's in the other
  int nroot = 0;
  for (int k = 0; k < nv; k++) {
    CHECK(par[k] < k);
    nroot += par[k] < 0;
    int r = k;
    while (par[r] >= 0) r = par[r];
    tree[k] = r;
  }
  CHECK(nroot == 2 && tree[0] == 0 && tree[23] == 0 && tree[5] == 0 && tree[6] == 6 && tree[17] == 6);
  // the floor's contacts alone: the kinematic tree's own pattern
  int nfloor = 0;
  physContact floor[32];
  for (int i = 0; i < nc && nfloor < 32; i++)
    if (m->geom_bodyid[d->contact[i].geom[0]] == 0) floor[nfloor++] = d->contact[i];
  CHECK(phys_penalty_tree(m, floor, nfloor));
  phys_penalty_etree(m, d, floor, nfloor, tree);
  CHECK(!memcmp(tree, m->dof_parentid, sizeof(int) * (size_t)nv));

  // H on the dense pattern and along the tree: factors and solutions equal
  physPenaltyContact pc[32];
  double J[3 * 32 * 24], H[2][24 * 24], x[2][24];
  CHECK(nc <= 32);
  phys_penalty_contacts(m, d, d->contact, nc, d->qLD, pc, J);
  for (int v = 0; v < 2; v++) {
    memcpy(H[v], d->qM, sizeof H[v]);
    for (int i = 0; i < nv; i++) x[v][i] = sin(1.0 + i);
    phys_penalty_assemble(m, d, nc, pc, J, x[v], H[v]);
    CHECK(phys_ldl_factor(H[v], v ? par : NULL, nv) == nv);
    phys_ldl_solve(x[v], H[v], v ? par : NULL, x[v], nv);
  }
  int npattern = 0;
  for (int k = 0; k < nv; k++) {
    for (int i = 0; i <= k; i++) {
      int anc = i == k;
      for (int j = par[k]; j >= 0 && !anc; j = par[j]) anc = j == i;
      npattern += anc;
      if (anc) CHECK_MSG(H[0][k * nv + i] == H[1][k * nv + i], "factor (%d, %d): %.17g vs %.17g", k, i,
                         H[0][k * nv + i], H[1][k * nv + i]);
      else CHECK_MSG(H[0][k * nv + i] == 0, "dense factor (%d, %d) = %g off the tree", k, i, H[0][k * nv + i]);
    }
    CHECK(x[0][k] == x[1][k] && isfinite(x[0][k]));
  }
  CHECK(npattern == 2 * 78);
  CHECK(d->pstack == 0);
  phys_free_data(d);
  phys_free_model(m);
}

int main(void) {
  test_etree();
  test_damping_floor();
  test_restitution();
  physModel* m = load_model();
  if (!m) return test_done();
  physData* d = phys_make_data(m);
  test_law(m, d);
  test_implicit_friction(m, d);
  test_limits(m, d);
  test_settle(m, d);
  CHECK(d->pstack == 0);
  phys_free_data(d);
  phys_free_model(m);
  return test_done();
}
