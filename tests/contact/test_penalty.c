// test_penalty.c - src/contact/penalty.c: the penalty force law (normal spring-damper clamped at zero,
// regularized Coulomb friction below and above v_slip, no force out of contact), its mapping to
// generalized forces, one-sided joint-limit springs, and a ball resting on a plane settling at the depth
// m g / k_c (a hand-made sphere-plane contact each step, integrated with phys_aba, independent of collision).
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "contact.h"
#include "dyn.h"
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

// penalty qfrc for the ball at height z with velocity (vx, 0, vz), no rotation
static void ball_qfrc(const physModel* m, physData* d, double z, double vx, double vz, double* qfrc) {
  memset(d->qvel, 0, sizeof(double) * (size_t)m->nv);
  memcpy(d->qpos, m->qpos0, sizeof(double) * (size_t)m->nq);
  d->qpos[2] = z;
  d->qvel[0] = vx;
  d->qvel[2] = vz;
  kin(m, d);
  ball_contact(m, d, 0.4);
  memset(qfrc, 0, sizeof(double) * (size_t)m->nv);
  phys_penalty_force(m, d, qfrc);
}

//---------------------------------------------------------------------------------------------------------
// the force law

static void test_law(physModel* m, physData* d) {
  double k = m->opt.penalty_stiffness, c = m->opt.penalty_damping, vs = m->opt.penalty_vslip, mu = 0.4;
  double qfrc[16], jacp[3 * 16];
  int nv = m->nv;
  CHECK(k == 1e4 && c == 1e2 && vs == 1e-3);

  // penetration 1 cm, approaching at 0.5 m/s, sliding at 2 m/s: f_n = k 0.01 + c 0.5, f_t = -mu f_n
  ball_qfrc(m, d, 0.09, 2, -0.5, qfrc);
  double fn = k * 0.01 + c * 0.5;
  CHECK_NEAR(qfrc[0], -mu * fn, 1e-9);
  CHECK_NEAR(qfrc[1], 0, 1e-12);
  CHECK_NEAR(qfrc[2], fn, 1e-9);
  // the angular part is J_rot' (r x F): r = point - centre = (0, 0, -(0.1 + 0.01/2))
  phys_jac(m, d, d->contact[0].pos, 1, jacp, NULL);
  double F[3] = {-mu * fn, 0, fn};
  for (int i = 0; i < nv; i++) {
    double want = jacp[i] * F[0] + jacp[nv + i] * F[1] + jacp[2 * nv + i] * F[2];
    CHECK_NEAR(qfrc[i], want, 1e-9);
  }
  CHECK(fabs(qfrc[4]) > 1);   // friction below the centre tilts the ball about y
  // impulse of the step, frame coordinates
  CHECK_NEAR(d->contact[0].lambda[0], fn * m->opt.timestep, 1e-12);
  CHECK_NEAR(d->contact[0].lambda[1], -mu * fn * m->opt.timestep, 1e-12);

  // slow slip (|v_t| = vs/4): viscous, f_t = -mu f_n v_t / v_slip
  ball_qfrc(m, d, 0.09, 0.25 * vs, 0, qfrc);
  CHECK_NEAR(qfrc[2], k * 0.01, 1e-9);
  CHECK_NEAR(qfrc[0], -mu * k * 0.01 * 0.25, 1e-9);

  // separating fast: k 0.01 - c 2 < 0 is clamped to no force at all (no adhesion, no friction)
  ball_qfrc(m, d, 0.09, 1, 2, qfrc);
  for (int i = 0; i < nv; i++) CHECK(qfrc[i] == 0);
  // separating slowly: the damper reduces the force
  ball_qfrc(m, d, 0.09, 0, 0.3, qfrc);
  CHECK_NEAR(qfrc[2], k * 0.01 - c * 0.3, 1e-9);
  // out of contact (dist > 0, even approaching): nothing
  ball_qfrc(m, d, 0.1001, 0, -1, qfrc);
  for (int i = 0; i < nv; i++) CHECK(qfrc[i] == 0);

  // joint limit: hinge 0.1 beyond its upper limit moving on at 0.2 rad/s: f = -(k 0.1 + c 0.2) on the dof
  int jh = phys_name2id(m, "joint", "hinge"), dh = m->jnt_dofadr[jh];
  d->ncon = 0;
  memcpy(d->qpos, m->qpos0, sizeof(double) * (size_t)m->nq);
  memset(d->qvel, 0, sizeof(double) * (size_t)nv);
  d->qpos[m->jnt_qposadr[jh]] = 0.6;
  d->qvel[dh] = 0.2;
  memset(qfrc, 0, sizeof qfrc);
  phys_penalty_force(m, d, qfrc);
  CHECK_NEAR(qfrc[dh], -(k * 0.1 + c * 0.2), 1e-9);
  // lower limit, returning fast: clamped to 0; inside the range: 0; limits disabled: 0
  d->qpos[m->jnt_qposadr[jh]] = -0.51;
  d->qvel[dh] = 5;
  memset(qfrc, 0, sizeof qfrc);
  phys_penalty_force(m, d, qfrc);
  CHECK(qfrc[dh] == 0);
  d->qvel[dh] = -0.1;
  phys_penalty_force(m, d, qfrc);
  CHECK_NEAR(qfrc[dh], k * 0.01 + c * 0.1, 1e-9);
  memset(qfrc, 0, sizeof qfrc);
  m->opt.disableflags |= PHYS_DSBL_LIMIT;
  phys_penalty_force(m, d, qfrc);
  CHECK(qfrc[dh] == 0);
  m->opt.disableflags &= ~PHYS_DSBL_LIMIT;
  // implicit form: qfrc += f - dt k v, add += dt d + dt^2 k; the count of active limits
  double add[16] = {0}, dt = m->opt.timestep;
  memset(qfrc, 0, sizeof qfrc);
  CHECK(phys_penalty_limits(m, d, qfrc, add) == 1);
  CHECK_NEAR(qfrc[dh], k * 0.01 + c * 0.1 - dt * k * (-0.1), 1e-9);
  CHECK_NEAR(add[dh], dt * c + dt * dt * k, 1e-15);
  CHECK(add[0] == 0 && qfrc[0] == 0);
  d->qpos[m->jnt_qposadr[jh]] = 0.3;
  memset(qfrc, 0, sizeof qfrc);
  phys_penalty_force(m, d, qfrc);
  CHECK(qfrc[dh] == 0);
}

//---------------------------------------------------------------------------------------------------------
// a ball dropped on the plane settles at depth m g / k_c

static void test_settle(const physModel* m, physData* d) {
  int nv = m->nv;
  double dt = m->opt.timestep, mass = 1.5, g = 9.81, k = m->opt.penalty_stiffness;
  double tau[16], acc[16], minz = 1;
  memcpy(d->qpos, m->qpos0, sizeof(double) * (size_t)m->nq);
  memset(d->qvel, 0, sizeof(double) * (size_t)nv);
  d->qpos[2] = 0.15;   // 5 cm drop
  for (int s = 0; s < 3000; s++) {
    kin(m, d);
    ball_contact(m, d, 0.5);
    memset(tau, 0, sizeof tau);
    phys_penalty_force(m, d, tau);
    phys_aba(m, d, tau, NULL, acc);
    // semi-implicit Euler of the ball's translation (it does not spin: no tangential motion)
    for (int i = 0; i < 3; i++) {
      d->qvel[i] += dt * acc[i];
      d->qpos[i] += dt * d->qvel[i];
    }
    minz = fmin(minz, d->qpos[2]);
  }
  double depth = 0.1 - d->qpos[2];
  printf("penalty: settled depth %.9g, m g / k_c = %.9g, deepest %.4g, |v| %.2g\n", depth, mass * g / k,
         0.1 - minz, fabs(d->qvel[2]));
  CHECK_REL(depth, mass * g / k, 1e-6, 0);
  CHECK(fabs(d->qvel[2]) < 1e-8 && fabs(d->qvel[0]) == 0 && fabs(d->qvel[4]) == 0);
  // the impact went deeper than the rest depth and less than the energy bound sqrt(2 m g h / k)
  CHECK(0.1 - minz > mass * g / k && 0.1 - minz < sqrt(2 * mass * g * 0.05 / k) + 2 * mass * g / k);
}

int main(void) {
  physModel* m = load_model();
  if (!m) return test_done();
  physData* d = phys_make_data(m);
  test_law(m, d);
  test_settle(m, d);
  CHECK(d->pstack == 0);
  phys_free_data(d);
  phys_free_model(m);
  return test_done();
}
