// test_step.c - src/step/step.c: position integration and its inverse, forward dynamics with applied
// forces, the semi-implicit Euler step with implicit damping, rejection of non-finite states, energy, actuator
// activations in the state.
// Reference values are computed here by hand from the definitions (closed forms, independent quaternion
// arithmetic); MuJoCo comparisons are in test_oracle_dyn.c.
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "physid.h"
#include "step.h"
#include "test.h"

//---------------------------------------------------------------------------------------------------------
// helpers

static uint64_t rng_state = 12345;

// uniform in [lo, hi) (splitmix64)
static double rng_range(double lo, double hi) {
  uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return lo + (hi - lo) * (double)(z >> 11) * 0x1.0p-53;
}

// load a test model or fail loudly
static physModel* load(const char* path) {
  physLog log;
  memset(&log, 0, sizeof(log));
  physModel* m = phys_load_mjcf(path, &log);
  CHECK_MSG(m != NULL, "%s: %s", path, log.error);
  return m;
}

// res = a*b (Hamilton product, w first), written out independently of src/math
static void qmul(double res[4], const double a[4], const double b[4]) {
  res[0] = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3];
  res[1] = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2];
  res[2] = a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1];
  res[3] = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0];
}

// random unit quaternion (not uniform; enough here)
static void rand_quat(double q[4]) {
  double n = 0;
  for (int i = 0; i < 4; i++) {
    q[i] = rng_range(-1, 1);
    n += q[i] * q[i];
  }
  for (int i = 0; i < 4; i++) {
    q[i] /= sqrt(n);
  }
}

// res = R v for a row-major 3x3 R; resT = R' v
static void matvec(double res[3], const double R[9], const double v[3]) {
  for (int i = 0; i < 3; i++) {
    res[i] = R[3 * i] * v[0] + R[3 * i + 1] * v[1] + R[3 * i + 2] * v[2];
  }
}
static void matTvec(double res[3], const double R[9], const double v[3]) {
  for (int i = 0; i < 3; i++) {
    res[i] = R[i] * v[0] + R[3 + i] * v[1] + R[6 + i] * v[2];
  }
}
static void cross(double res[3], const double a[3], const double b[3]) {
  res[0] = a[1] * b[2] - a[2] * b[1];
  res[1] = a[2] * b[0] - a[0] * b[2];
  res[2] = a[0] * b[1] - a[1] * b[0];
}

//---------------------------------------------------------------------------------------------------------
// integrate / difference

// q+ per joint type against hand-written formulas; difference inverts integrate; shortest rotation
static void test_integrate_difference(void) {
  physModel* m = load("tests/data/mixed.xml");
  if (!m) {
    return;
  }
  int nq = m->nq, nv = m->nv;
  double q[32], q2[32], v[32], v2[32], dt = 0.01;
  for (int trial = 0; trial < 20; trial++) {
    // random configuration and velocity (|v dt| < pi so the log map inverts the exponential)
    for (int i = 0; i < nq; i++) {
      q[i] = rng_range(-1, 1);
    }
    for (int i = 0; i < nv; i++) {
      v[i] = rng_range(-50, 50);
    }
    for (int j = 0; j < m->njnt; j++) {
      int pa = m->jnt_qposadr[j];
      if (m->jnt_type[j] == PHYS_JNT_FREE) {
        rand_quat(q + pa + 3);
      } else if (m->jnt_type[j] == PHYS_JNT_BALL) {
        rand_quat(q + pa);
      }
    }
    memcpy(q2, q, sizeof(double) * nq);
    phys_integrate_pos(m, q2, v, dt);

    // expected: hinge/slide/free position q + dt v; quaternions q * (cos(|w|dt/2), sin(|w|dt/2) w/|w|)
    for (int j = 0; j < m->njnt; j++) {
      int pa = m->jnt_qposadr[j], va = m->jnt_dofadr[j], type = m->jnt_type[j];
      int nlin = type == PHYS_JNT_FREE ? 3 : (type == PHYS_JNT_BALL ? 0 : 1);
      for (int i = 0; i < nlin; i++) {
        CHECK_NEAR(q2[pa + i], q[pa + i] + dt * v[va + i], 1e-15);
      }
      if (type == PHYS_JNT_FREE || type == PHYS_JNT_BALL) {
        const double* w = v + va + nlin;
        double th = sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]) * dt, e[4], qe[4];
        double s = sin(th / 2) / (th / dt);
        e[0] = cos(th / 2);
        e[1] = s * w[0];
        e[2] = s * w[1];
        e[3] = s * w[2];
        qmul(qe, q + pa + nlin, e);
        for (int i = 0; i < 4; i++) {
          CHECK_NEAR(q2[pa + nlin + i], qe[i], 1e-14);
        }
      }
    }

    // difference inverts integrate; flipping the sign of a quaternion changes nothing
    phys_difference_pos(m, v2, dt, q, q2);
    for (int i = 0; i < nv; i++) {
      CHECK_REL(v2[i], v[i], 1e-11, 1.0);
    }
    for (int j = 0; j < m->njnt; j++) {
      if (m->jnt_type[j] == PHYS_JNT_BALL) {
        for (int i = 0; i < 4; i++) {
          q2[m->jnt_qposadr[j] + i] *= -1;
        }
      }
    }
    phys_difference_pos(m, v2, dt, q, q2);
    for (int i = 0; i < nv; i++) {
      CHECK_REL(v2[i], v[i], 1e-11, 1.0);
    }
  }
  phys_free_model(m);
}

//---------------------------------------------------------------------------------------------------------
// forward

// free body at rest without gravity, wrench (F, T) at the com: a_com = F/m, alpha_world = I_w^-1 T;
// free-joint qacc is (acceleration of the body origin = a_com - alpha x r, body-frame alpha)
static void test_forward_xfrc(void) {
  physModel* m = load("tests/data/freebody.xml");
  if (!m) {
    return;
  }
  physData* d = phys_make_data(m);
  double F[3] = {0.3, -1.2, 0.7}, T[3] = {0.4, 0.1, -0.9};
  rand_quat(d->qpos + 3);
  memcpy(d->xfrc_applied + 6, F, sizeof(F));
  memcpy(d->xfrc_applied + 9, T, sizeof(T));
  phys_forward(m, d);

  // alpha_world = Ri diag(1/I) Ri' T with Ri = ximat (principal frame in the world)
  double mass = m->body_mass[1], t[3], alpha[3], alpha_b[3], r[3], axr[3];
  const double* I = m->body_inertia + 3;
  matTvec(t, d->ximat + 9, T);
  for (int i = 0; i < 3; i++) {
    t[i] /= I[i];
  }
  matvec(alpha, d->ximat + 9, t);
  matTvec(alpha_b, d->xmat + 9, alpha);
  for (int i = 0; i < 3; i++) {
    r[i] = d->xipos[3 + i] - d->xpos[3 + i];
  }
  cross(axr, alpha, r);
  for (int i = 0; i < 3; i++) {
    CHECK_NEAR(d->qacc[i], F[i] / mass - axr[i], 1e-13);
    CHECK_NEAR(d->qacc[3 + i], alpha_b[i], 1e-13);
  }

  // qfrc_applied enters like xfrc: M qacc = qfrc_applied - c (here c = 0, v = 0)
  memset(d->xfrc_applied, 0, sizeof(double) * 6 * m->nbody);
  for (int i = 0; i < 6; i++) {
    d->qfrc_applied[i] = rng_range(-1, 1);
  }
  phys_forward(m, d);
  for (int i = 0; i < 6; i++) {
    double Ma = 0;
    for (int k = 0; k < 6; k++) {
      Ma += d->qM[6 * i + k] * d->qacc[k];
    }
    CHECK_NEAR(Ma, d->qfrc_applied[i], 1e-13);
  }
  phys_free_data(d);
  phys_free_model(m);
}

// at a random state of the mixed model: M qacc = passive + actuator + applied - bias (no xfrc)
static void test_forward_residual(void) {
  physModel* m = load("tests/data/mixed.xml");
  if (!m) {
    return;
  }
  physData* d = phys_make_data(m);
  int nv = m->nv;
  for (int i = 0; i < nv; i++) {
    d->qvel[i] = rng_range(-2, 2);
    d->qfrc_applied[i] = rng_range(-1, 1);
  }
  for (int i = 0; i < m->nu; i++) {
    d->ctrl[i] = rng_range(-1, 1);
  }
  rand_quat(d->qpos + 3);
  rand_quat(d->qpos + 7);
  phys_forward(m, d);
  double scale = 0;
  for (int i = 0; i < nv; i++) {
    scale = fmax(scale, fabs(d->qfrc_bias[i]) + fabs(d->qfrc_passive[i]) + fabs(d->qfrc_actuator[i]) + 1);
  }
  for (int i = 0; i < nv; i++) {
    double Ma = 0;
    for (int k = 0; k < nv; k++) {
      Ma += d->qM[nv * i + k] * d->qacc[k];
    }
    double f = d->qfrc_passive[i] + d->qfrc_actuator[i] + d->qfrc_applied[i] - d->qfrc_bias[i];
    CHECK_NEAR(Ma, f, 1e-12 * scale);
  }
  phys_free_data(d);
  phys_free_model(m);
}

//---------------------------------------------------------------------------------------------------------
// step

// spring-mass (m = 2, k = 50, b = 3, x_s = 0.1): one step by hand, implicit and explicit damping
static void test_step_damping(void) {
  physModel* m = load("tests/data/springmass.xml");
  if (!m) {
    return;
  }
  physData* d = phys_make_data(m);
  double mass = 2, k = 50, b = 3, xs = 0.1, dt = m->opt.timestep;
  CHECK_NEAR(m->body_mass[1], mass, 0);
  CHECK_NEAR(m->dof_damping[0], b, 0);
  CHECK_NEAR(m->jnt_stiffness[0], k, 0);
  for (int flag = 0; flag < 2; flag++) {
    m->opt.disableflags = flag ? PHYS_DSBL_EULERDAMP : 0;
    double x0 = 0.37, v0 = -1.3, f = -k * (x0 - xs) - b * v0;
    d->qpos[0] = x0;
    d->qvel[0] = v0;
    d->time = 0;
    size_t mark = phys_stack_mark(d);
    phys_step(m, d);
    CHECK(phys_stack_mark(d) == mark);
    // implicit: a = f/(m + dt b); explicit: a = f/m; v1 = v0 + dt a; x1 = x0 + dt v1
    double a = flag ? f / mass : f / (mass + dt * b), v1 = v0 + dt * a, x1 = x0 + dt * v1;
    CHECK_NEAR(d->qvel[0], v1, 1e-15);
    CHECK_NEAR(d->qpos[0], x1, 1e-15);
    CHECK_NEAR(d->qacc[0], a, 1e-13);  // qacc is the acceleration the step used (phys_forward: undamped)
    CHECK_NEAR(d->time, dt, 0);
  }

  // a stiff damper (dt b / m = 5 > 2): implicit decays monotonically, explicit diverges
  m->dof_damping[0] = 5 * mass / dt;
  m->jnt_stiffness[0] = 0;
  for (int flag = 0; flag < 2; flag++) {
    m->opt.disableflags = flag ? PHYS_DSBL_EULERDAMP : 0;
    d->qvel[0] = 1;
    int monotone = 1;
    for (int s = 0; s < 50; s++) {
      double v = d->qvel[0];
      phys_step(m, d);
      monotone = monotone && d->qvel[0] >= 0 && d->qvel[0] < v;
    }
    if (flag) {
      CHECK(fabs(d->qvel[0]) > 1e10);  // |1 - dt b/m|^50 = 4^50
    } else {
      CHECK(monotone);
      CHECK(d->qvel[0] < 1e-30);       // (1/(1 + 5))^50 = 1.2e-39
    }
  }
  phys_free_data(d);
  phys_free_model(m);
}

// a non-finite new state is rejected: state and time restored, one warning per rejected step
static void test_step_nonfinite(void) {
  physModel* m = load("tests/data/mixed.xml");
  if (!m) {
    return;
  }
  physData* d = phys_make_data(m);
  phys_reset_data(m, d);
  d->qvel[7] = 0.3;
  phys_step(m, d);
  double qpos[32], qvel[32], t = d->time;
  memcpy(qpos, d->qpos, sizeof(double) * m->nq);
  memcpy(qvel, d->qvel, sizeof(double) * m->nv);
  int nw = d->nwarning;
  d->qfrc_applied[2] = NAN;
  size_t mark = phys_stack_mark(d);
  phys_step(m, d);
  CHECK(phys_stack_mark(d) == mark);
  CHECK(d->nwarning == nw + 1);
  CHECK(strlen(d->lastwarning) > 0);
  CHECK(memcmp(qpos, d->qpos, sizeof(double) * m->nq) == 0);
  CHECK(memcmp(qvel, d->qvel, sizeof(double) * m->nv) == 0);
  CHECK(d->time == t);
  d->qfrc_applied[2] = INFINITY;  // infinite force: non-finite acceleration
  phys_step(m, d);
  CHECK(d->nwarning == nw + 2);
  CHECK(memcmp(qvel, d->qvel, sizeof(double) * m->nv) == 0);
  d->qfrc_applied[2] = 0;       // recovers
  phys_step(m, d);
  CHECK(d->nwarning == nw + 2);
  CHECK(d->time > t);
  phys_free_data(d);
  phys_free_model(m);
}

//---------------------------------------------------------------------------------------------------------
// energy

// closed forms: pendulum U = m g (2 - cos th), T = 0.5 I w^2 (I = 1.01); spring U = 0.5 k (x - xs)^2;
// free body T = 0.5 m |v_com|^2 + 0.5 w' I w
static void test_energy(void) {
  physModel* m = load("tests/data/pendulum.xml");
  physData* d = m ? phys_make_data(m) : NULL;
  double e[2];
  if (d) {
    d->qpos[0] = 0.7;
    d->qvel[0] = -1.9;
    phys_energy(m, d, e);
    CHECK_NEAR(e[0], 9.81 * (2 - cos(0.7)), 1e-13);
    CHECK_NEAR(e[1], 0.5 * 1.01 * 1.9 * 1.9, 1e-13);
    m->opt.disableflags = PHYS_DSBL_GRAVITY;
    phys_energy(m, d, e);
    CHECK_NEAR(e[0], 0, 0);
    phys_free_data(d);
    phys_free_model(m);
  }
  m = load("tests/data/springmass.xml");
  d = m ? phys_make_data(m) : NULL;
  if (d) {
    d->qpos[0] = -0.4;
    d->qvel[0] = 0.8;
    phys_energy(m, d, e);
    CHECK_NEAR(e[0], 0.5 * 50 * 0.5 * 0.5, 1e-13);
    CHECK_NEAR(e[1], 0.5 * 2 * 0.8 * 0.8, 1e-13);
    phys_free_data(d);
    phys_free_model(m);
  }
  m = load("tests/data/freebody.xml");
  d = m ? phys_make_data(m) : NULL;
  if (d) {
    rand_quat(d->qpos + 3);
    for (int i = 0; i < 6; i++) {
      d->qvel[i] = rng_range(-2, 2);
    }
    phys_energy(m, d, e);
    // v_com = v + R (w_b x c); rotational part with I_b = Ri diag(I) Ri' (Ri = ximat in body axes)
    double w[3], c[3], wc[3], vc[3], vcom[3], wi[3];
    matvec(w, d->xmat + 9, d->qvel + 3);             // world angular velocity
    for (int i = 0; i < 3; i++) {
      c[i] = d->xipos[3 + i] - d->xpos[3 + i];
    }
    cross(wc, w, c);
    for (int i = 0; i < 3; i++) {
      vcom[i] = d->qvel[i] + wc[i];
    }
    matTvec(wi, d->ximat + 9, w);                    // angular velocity in principal axes
    double T = 0;
    for (int i = 0; i < 3; i++) {
      vc[i] = vcom[i];
      T += 0.5 * m->body_mass[1] * vc[i] * vc[i] + 0.5 * m->body_inertia[3 + i] * wi[i] * wi[i];
    }
    CHECK_NEAR(e[1], T, 1e-13);
    CHECK_NEAR(e[0], 0, 0);  // no gravity, no springs
    phys_free_data(d);
    phys_free_model(m);
  }
}

// springmass (m = 2, k = 50, omega = 5) undamped from x - x_s = 0.4 at rest, with PHYS_ENBL_ENERGY
static physData* energy_start(physModel* m, double dt, int flags) {
  m->dof_damping[0] = 0;
  m->opt.timestep = dt;
  m->opt.enableflags = flags;
  physData* d = phys_make_data(m);
  d->qpos[0] = 0.5;
  return d;
}

// the step's energy check (issue 10 item 12): semi-implicit Euler on the oscillator changes the energy by
// (omega dt)^2 (T+ - U) per step, at omega dt = 0.005 at most 2.5e-5 of the kinetic energy: no warning in
// 2000 steps. At omega dt = 2.5 (dt 0.5 s) it is unstable: the first step takes E from 0.5 k 0.4^2 = 4 J to
// 0.5 m 5^2 + 0.5 k 2.1^2 = 135.25 J, counted at the second step's start with the first step's time. Not
// counted: without the flag, with an applied force (work input), when the state was set between the steps;
// phys_reset_data clears the counts
static void test_energy_check(void) {
  physModel* m = load("tests/data/springmass.xml");
  if (!m) return;
  physData* d = energy_start(m, 0.001, PHYS_ENBL_ENERGY);
  for (int i = 0; i < 2000; i++) phys_step(m, d);
  CHECK(d->nwarning == 0 && d->warning_count[PHYS_WARN_ENERGY] == 0);
  phys_free_data(d);

  d = energy_start(m, 0.5, PHYS_ENBL_ENERGY);
  phys_step(m, d);
  CHECK_NEAR(d->qvel[0], -5, 1e-15);
  CHECK(d->warning_count[PHYS_WARN_ENERGY] == 0);   // checked at the next step's start
  phys_step(m, d);
  CHECK(d->nwarning == 1 && d->warning_count[PHYS_WARN_ENERGY] == 1 && d->warning_time[PHYS_WARN_ENERGY] == 0);
  CHECK_MSG(strstr(d->warning_first[PHYS_WARN_ENERGY], "phys_step: energy rose by 131 J (from 4 J) in the step at "
                                                       "time 0 without work input"), "%s", d->warning_first[PHYS_WARN_ENERGY]);
  CHECK(!strcmp(phys_warning_name(PHYS_WARN_ENERGY), "energy gain"));
  phys_reset_data(m, d);
  CHECK(d->nwarning == 0 && d->warning_count[PHYS_WARN_ENERGY] == 0 && d->warning_first[PHYS_WARN_ENERGY][0] == 0);
  phys_free_data(d);

  for (int c = 0; c < 3; c++) {
    d = energy_start(m, 0.5, c == 0 ? 0 : PHYS_ENBL_ENERGY);
    if (c == 1) d->qfrc_applied[0] = 1e-9;
    phys_step(m, d);
    if (c == 2) d->qvel[0] = -5.5;   // set between the steps
    phys_step(m, d);
    CHECK_MSG(d->warning_count[PHYS_WARN_ENERGY] == 0, "case %d", c);
    phys_free_data(d);
  }
  phys_free_model(m);
}

// phys_state_save / phys_state_load: the record is (qpos, qvel, time) in that order, nq + nv + 1 doubles; a
// load after steps gives back exactly the saved state and touches nothing else of d (ctrl, qacc), and the
// steps from the loaded state repeat the first ones bit for bit
static void test_state_save_load(void) {
  physModel* m = load("tests/data/mixed.xml");
  if (!m) return;
  physData* d = phys_make_data(m);
  int nq = m->nq, nv = m->nv;
  CHECK(phys_state_size(m) == (size_t)(nq + nv + 1) && nq > nv);
  for (int i = 0; i < nv; i++) d->qvel[i] = rng_range(-1, 1);
  for (int i = 0; i < m->nu; i++) d->ctrl[i] = rng_range(-1, 1);
  d->time = 0.25;
  double x[64], y[64], after[64];
  CHECK(nq + nv + 1 <= 64);
  if (nq + nv + 1 > 64) return;
  phys_state_save(m, d, x);
  CHECK(memcmp(x, d->qpos, sizeof(double) * (size_t)nq) == 0);
  CHECK(memcmp(x + nq, d->qvel, sizeof(double) * (size_t)nv) == 0);
  CHECK(x[nq + nv] == 0.25);
  for (int t = 0; t < 3; t++) phys_step(m, d);
  phys_state_save(m, d, after);
  double qacc0 = d->qacc[0], ctrl0 = m->nu > 0 ? d->ctrl[0] : 0;
  phys_state_load(m, d, x);
  phys_state_save(m, d, y);
  CHECK(memcmp(x, y, sizeof(double) * (size_t)(nq + nv + 1)) == 0);
  CHECK(d->qacc[0] == qacc0 && (m->nu == 0 || d->ctrl[0] == ctrl0));
  for (int t = 0; t < 3; t++) phys_step(m, d);
  phys_state_save(m, d, y);
  CHECK(memcmp(after, y, sizeof(double) * (size_t)(nq + nv + 1)) == 0);
  phys_free_data(d);
  phys_free_model(m);
}

// actuator dynamics (tests/data/actuator_dynamics.xml: actuators 2..7 with act 0..5): one step advances act by
// dt act_dot from the step's start (integrator: ctrl; filter: (clamped ctrl - act) / tau), clamped to actrange;
// the force uses the act at the start (filt: 3 act, clamped to [-1.5, 2]; cyl2 on the same joint: 0); the state record carries act; a
// rejected step restores it
static void test_step_act(void) {
  physModel* m = load("tests/data/actuator_dynamics.xml");
  if (!m) return;
  physData* d = phys_make_data(m);
  int nq = m->nq, nv = m->nv, na = m->na;
  CHECK(na == 6 && phys_state_size(m) == (size_t)(nq + nv + na + 1));
  double dt = m->opt.timestep, act0[6] = {0.39, 0.9, -0.2, 0.1, 0, 0}, ctrl[6] = {0, 0, 5, 0.7, -3, 0.4};
  memcpy(d->act, act0, sizeof act0);
  memcpy(d->ctrl, ctrl, sizeof ctrl);
  phys_forward(m, d);
  CHECK(d->act_dot[0] == 5 && fabs(d->act_dot[1] - (0.7 - 0.9) / 0.05) < 1e-14);
  CHECK(fabs(d->act_dot[2] - (-1 + 0.2) / 0.05) < 1e-14);   // servo: ctrl -3 clamped to -1
  // the filter's force 3 * 0.9 = 2.7 clamped to 2 on j1 (dof 1)
  CHECK(fabs(d->qfrc_actuator[1] - 2) < 1e-15);
  double x[64], y[64];
  phys_state_save(m, d, x);
  CHECK(memcmp(x + nq + nv, act0, sizeof act0) == 0 && x[nq + nv + na] == d->time);
  phys_step(m, d);
  CHECK(d->act[0] == 0.4);   // 0.39 + 0.002 * 5 = 0.4 is the range's upper end (clamped: 0.40 exactly)
  CHECK(fabs(d->act[1] - (0.9 + dt * (0.7 - 0.9) / 0.05)) < 1e-15);
  CHECK(fabs(d->act[3] - (0.1 + dt * (0.4 - 0.1) / 0.05)) < 1e-15);
  phys_step(m, d);
  CHECK(d->act[0] == 0.4);   // held at the range's end
  phys_state_save(m, d, y);
  phys_state_load(m, d, x);
  CHECK(memcmp(d->act, act0, sizeof act0) == 0);
  int nw = d->nwarning;
  d->ctrl[5] = NAN;          // a non-finite activation rate: the step is rejected, act restored
  phys_step(m, d);
  CHECK(d->nwarning == nw + 1 && memcmp(d->act, act0, sizeof act0) == 0);
  phys_free_data(d);
  phys_free_model(m);
}

// the energy check counts a nonzero activation as a work input: a filter's force after its control went to 0
// (actuator_dynamics.xml's 'thrust' at act 1 pushing the free puck from rest, no gravity, ctrl 0) raises no
// energy warning
static void test_energy_act(void) {
  physModel* m = load("tests/data/actuator_dynamics.xml");
  if (!m) return;
  m->opt.enableflags |= PHYS_ENBL_ENERGY;
  m->opt.gravity[2] = 0;
  physData* d = phys_make_data(m);
  d->act[m->actuator_actadr[phys_name2id(m, "actuator", "thrust")]] = 1;
  for (int i = 0; i < 50; i++) phys_step(m, d);
  CHECK_MSG(d->warning_count[PHYS_WARN_ENERGY] == 0, "%s", d->warning_first[PHYS_WARN_ENERGY]);
  phys_free_data(d);
  phys_free_model(m);
}

int main(void) {
  test_step_act();
  test_energy_act();
  test_state_save_load();
  test_energy_check();
  test_integrate_difference();
  test_forward_xfrc();
  test_forward_residual();
  test_step_damping();
  test_step_nonfinite();
  test_energy();
  return test_done();
}
