// test_oracle_frictionloss.c - joint frictionloss against MuJoCo 2.2.2 (mj_step, Euler, Newton solver).
//
// MuJoCo solves a friction row softly: its force is that of a row with regularizer R = (1 - d)/d A_ii (d the
// solimpfriction impedance, A_ii the row's inverse inertia) and a reference acceleration from solreffriction,
// so a "held" joint creeps and a sliding one feels slightly less than frictionloss. physid's row is hard
// (|f| <= frictionloss, exact sticking). With a stiff solreffriction='0.002 1' (MuJoCo raises the time
// constant to 2 dt) and solimpfriction d = 0.9999 the two agree to what the softness leaves, and the gap
// scales with 1 - d. Measured over 3 s at dt = 1 ms (lcp; without contacts cone and ccp solve the same rows
// by the same box solver):
//   pendulum sliding (frictionloss 0.5 N m, from 1 rad): max |dq| 1.0e-6 rad at d = 0.9999, 1.0e-4 rad at
//     d = 0.99 (x100 for 1 - d x100), 9.9e-3 rad with MuJoCo's defaults (solref 0.02 1, solimp 0.9 0.95);
//   pendulum held (frictionloss 5 N m > the 2.45 N m gravity torque at 1 rad): physid stays at 1 rad exactly,
//     MuJoCo creeps 4.6e-6 rad at d = 0.9999 (0.046 rad with its defaults);
//   a three-link arm (frictionloss 0.4, 0.3, 0.2; random piecewise-constant motor torques): max |dq| below
//     1e-4 rad (measured 1.4e-5) at d = 0.9999.
// Tolerances: 3e-6 rad for the pendulum (3x the measured gap), and the d = 0.99 gap at least 50x the
// d = 0.9999 one (softness, not a different friction law), held creep below 1e-5 rad in MuJoCo and 0 here.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mujoco/mujoco.h>

#include "../model/mjcf_text.h"

static const char* PENDULUM =
    "<mujoco><option timestep='0.001' iterations='200' tolerance='1e-14'/><worldbody><body>"
    "<joint name='h' axis='0 1 0' frictionloss='%g' solreffriction='0.002 1' solimpfriction='%g %g 0.001'/>"
    "<geom type='capsule' fromto='0 0 0 0.5 0 0' size='0.03' mass='1' contype='0' conaffinity='0'/>"
    "</body></worldbody></mujoco>";

static const char* ARM =
    "<mujoco><option timestep='0.001' iterations='200' tolerance='1e-14'/>"
    "<default><joint solreffriction='0.002 1' solimpfriction='0.9999 0.9999 0.001'/>"
    "<geom contype='0' conaffinity='0'/></default><worldbody>"
    "<body><joint name='j1' axis='0 1 0' frictionloss='0.4'/>"
    "<geom type='capsule' fromto='0 0 0 0.4 0 0' size='0.04' mass='1.5'/>"
    "<body pos='0.4 0 0'><joint name='j2' axis='0 1 0' damping='0.3' frictionloss='0.3'/>"
    "<geom type='capsule' fromto='0 0 0 0.3 0 0' size='0.03' mass='1'/>"
    "<body pos='0.3 0 0'><joint name='j3' axis='0 0 1' frictionloss='0.2'/>"
    "<geom type='capsule' fromto='0 0 0 0.2 0 0' size='0.02' mass='0.5'/></body></body></body></worldbody>"
    "<actuator><motor joint='j1'/><motor joint='j2'/><motor joint='j3'/></actuator></mujoco>";

// the largest |qpos| difference over nstep steps of both engines on the model text, from qpos0 = q0 (nq
// values), controls piecewise constant from a fixed sequence when the model has motors; *end_mj, *end_ph the
// final qpos[0] of each
static double run_both(const char* text, const double* q0, int nstep, double* end_mj, double* end_ph) {
  char err[1000] = "";
  const char* file = put("oracle.xml", text);
  mjModel* mm = mj_loadXML(file, NULL, err, sizeof err);
  CHECK_MSG(mm != NULL, "MuJoCo: %s", err);
  physLog log;
  memset(&log, 0, sizeof log);
  physModel* m = phys_load(file, NULL, &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  if (!mm || !m) exit(1);
  mjData* md = mj_makeData(mm);
  physData* d = phys_make_data(m);
  for (int i = 0; i < m->nq; i++) md->qpos[i] = d->qpos[i] = q0[i];
  double worst = 0;
  unsigned seed = 12345;
  for (int k = 0; k < nstep; k++) {
    if (k % 100 == 0)
      for (int a = 0; a < m->nu; a++) {
        seed = seed * 1103515245u + 12345u;
        md->ctrl[a] = d->ctrl[a] = 2.0 * ((seed >> 8) % 1000) / 1000.0 - 1.0;
      }
    mj_step(mm, md);
    phys_step(m, d);
    for (int i = 0; i < m->nq; i++) worst = fmax(worst, fabs(md->qpos[i] - d->qpos[i]));
  }
  *end_mj = md->qpos[0];
  *end_ph = d->qpos[0];
  mj_deleteData(md);
  mj_deleteModel(mm);
  phys_free_data(d);
  phys_free_model(m);
  return worst;
}

static void test_pendulum(void) {
  char text[2048];
  double q0 = 1.0, emj, eph;
  snprintf(text, sizeof text, PENDULUM, 0.5, 0.9999, 0.9999);
  double stiff = run_both(text, &q0, 3000, &emj, &eph);
  snprintf(text, sizeof text, PENDULUM, 0.5, 0.99, 0.99);
  double soft = run_both(text, &q0, 3000, &emj, &eph);
  printf("pendulum sliding: max |dq| %.3g rad at d = 0.9999, %.3g at d = 0.99\n", stiff, soft);
  CHECK_MSG(stiff < 3e-6, "pendulum: %g rad", stiff);
  CHECK_MSG(soft > 50 * stiff, "soft %g vs stiff %g", soft, stiff);

  snprintf(text, sizeof text, PENDULUM, 5.0, 0.9999, 0.9999);
  run_both(text, &q0, 3000, &emj, &eph);
  printf("pendulum held: MuJoCo creeps %.3g rad, physid %.3g rad\n", fabs(emj - q0), fabs(eph - q0));
  CHECK(eph == q0);
  CHECK_MSG(fabs(emj - q0) < 1e-5, "MuJoCo creep %g", emj - q0);
}

static void test_arm(void) {
  double q0[3] = {0.3, -0.5, 0.8}, emj, eph;
  double worst = run_both(ARM, q0, 3000, &emj, &eph);
  printf("three-link arm: max |dq| %.3g rad\n", worst);
  CHECK_MSG(worst < 1e-4, "arm: %g rad", worst);
}

int main(void) {
  mjcf_text_begin("oracle_frictionloss");
  test_pendulum();
  test_arm();
  return mjcf_text_end();
}
