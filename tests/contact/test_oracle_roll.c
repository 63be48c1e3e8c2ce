// test_oracle_roll.c - torsional and rolling friction (issue 16, condim 6) under every contact model (penalty's
// regularized law, lcp's, cone's and ccp's rows: src/contact/angular.c) against MuJoCo 2.2.2 (mj_step, Euler, elliptic cone, Newton solver): a sphere (r 0.1 m, 1 kg, friction "1 0.02 0.01") settled on
// a plane, then (a) spun about the vertical at 20 rad/s for 0.3 s, (b) rolled at 1 m/s (w = v / r) for 0.5 s.
// MuJoCo's contact is soft, and its elliptic cone regularizes each friction dimension by R_0 mu_0^2 / (mu_i^2
// impratio): its torsional and rolling rows transmit less than mu f_n, and no solref makes them exact (measured,
// stiff solref '0.002 1', solimp d = 0.9999: spin deceleration 48.62 rad/s^2 against the Coulomb law's
// mu_spin m g / I = 49.05; MuJoCo's defaults 0.02 / 0.9: 48.97; impratio 10, 100, 1000: 48.72, 47.88, 48.65).
// physid's penalty law is the regularized Coulomb law on the angular slip (docs/contact.md, tests/contact/
// test_scene_roll.c: 49.048). Measured gaps at the stiff solref, impratio 1: spin 0.131 rad/s after 0.3 s (0.9 %
// of MuJoCo's spin drop of 14.59 rad/s), speed 0.0079 m/s after 0.5 s of rolling (2.3 % of MuJoCo's drop 0.345);
// MuJoCo's own change to its default solref is 0.106 rad/s and 0.0031 m/s. Asserted: the gaps below 2 % and 4 %
// of MuJoCo's drop (before issue 16 physid kept the spin: a gap of 100 %), and below 1.5x MuJoCo's own deviation
// from the Coulomb law's answer (what its softness moves). lcp, cone and ccp solve the rows hard: their gaps are
// MuJoCo's deviation from the Coulomb law itself (printed).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mujoco/mujoco.h>

#include "../model/mjcf_text.h"

static const char* SPHERE =
    "<mujoco><option timestep='0.001' cone='elliptic' impratio='%s' iterations='100' tolerance='1e-12'/>"
    "<default><geom solref='%s' solimp='%s'/></default><worldbody>"
    "<geom name='floor' type='plane' size='20 20 .1' friction='1 0 0'/>"
    "<body name='ball' pos='0 0 0.1'><freejoint/>"
    "<geom name='ball' type='sphere' size='0.1' mass='1' friction='1 0.02 0.01' condim='6'/>"
    "</body></worldbody></mujoco>";

#define SETTLE 300

// settle for SETTLE steps, set (v_x, w_y, w_z), run n steps: out[0] = w_z, out[1] = v_x at the end, MuJoCo
// (mj = 1) or physid (mj = 0) under contact model `contact`
static void run(const char* solref, const char* solimp, int mj, int contact, double vx, double wy, double wz, int n,
                double out[2]) {
  char text[2000], err[1000] = "";
  snprintf(text, sizeof text, SPHERE, "1", solref, solimp);
  const char* file = put("roll.xml", text);
  if (mj) {
    mjModel* mm = mj_loadXML(file, NULL, err, sizeof err);
    CHECK_MSG(mm != NULL, "MuJoCo: %s", err);
    if (!mm) exit(1);
    mjData* md = mj_makeData(mm);
    for (int i = 0; i < SETTLE; i++) mj_step(mm, md);
    md->qvel[0] = vx, md->qvel[4] = wy, md->qvel[5] = wz;
    for (int i = 0; i < n; i++) mj_step(mm, md);
    out[0] = md->qvel[5], out[1] = md->qvel[0];
    mj_deleteData(md);
    mj_deleteModel(mm);
    return;
  }
  physLog log;
  memset(&log, 0, sizeof log);
  physModel* m = phys_load(file, NULL, &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  if (!m) exit(1);
  m->opt.contact = contact;
  physData* d = phys_make_data(m);
  for (int i = 0; i < SETTLE; i++) phys_step(m, d);
  d->qvel[0] = vx, d->qvel[4] = wy, d->qvel[5] = wz;
  for (int i = 0; i < n; i++) phys_step(m, d);
  out[0] = d->qvel[5], out[1] = d->qvel[0];
  phys_free_data(d);
  phys_free_model(m);
}

// the spin (a) and rolling (b) gaps of physid under contact model c against MuJoCo at the stiff solref
static void compare(int c) {
  const char *stiff = "0.002 1", *stiffimp = "0.9999 0.9999 0.001", *soft = "0.02 1", *softimp = "0.9 0.95 0.001";
  const char* name = c == PHYS_CONTACT_PENALTY ? "penalty" : (c == PHYS_CONTACT_LCP ? "lcp" : (c == PHYS_CONTACT_CONE ? "cone" : "ccp"));
  double ph[2], mj[2], mjs[2];
  // (a) spin 20 rad/s for 0.3 s (analytic: 20 - 0.3 mu_spin m g / I = 5.285 rad/s)
  run(stiff, stiffimp, 0, c, 0, 0, 20, 300, ph);
  run(stiff, stiffimp, 1, c, 0, 0, 20, 300, mj);
  run(soft, softimp, 1, c, 0, 0, 20, 300, mjs);
  double gap = fabs(ph[0] - mj[0]), softness = fabs(mjs[0] - mj[0]);
  printf("%s: spin after 0.3 s: physid %.6f, MuJoCo %.6f (soft %.6f), analytic %.6f rad/s; gap %.3g (%.2f %% of "
         "MuJoCo's drop), MuJoCo's softness %.3g\n", name, ph[0], mj[0], mjs[0], 20 - 0.3 * 0.02 * 9.81 / 0.004, gap,
         100 * gap / (20 - mj[0]), softness);
  double coulomb = 20 - 0.3 * 0.02 * 9.81 / 0.004;
  CHECK_MSG(gap < 0.02 * (20 - mj[0]) && gap < 1.5 * fabs(mj[0] - coulomb), "%s: spin gap %.3g (softness %.3g)", name,
            gap, softness);
  // (b) roll 1 m/s for 0.5 s (analytic: 1 - 0.5 * 5 mu_roll g / (7 r) = 0.64964 m/s)
  run(stiff, stiffimp, 0, c, 1, 10, 0, 500, ph);
  run(stiff, stiffimp, 1, c, 1, 10, 0, 500, mj);
  run(soft, softimp, 1, c, 1, 10, 0, 500, mjs);
  gap = fabs(ph[1] - mj[1]), softness = fabs(mjs[1] - mj[1]);
  printf("%s: rolling after 0.5 s: physid %.6f, MuJoCo %.6f (soft %.6f), analytic %.6f m/s; gap %.3g (%.2f %% of "
         "MuJoCo's drop), MuJoCo's softness %.3g\n", name, ph[1], mj[1], mjs[1], 1 - 0.5 * 5 * 0.01 * 9.81 / 0.7, gap,
         100 * gap / (1 - mj[1]), softness);
  coulomb = 1 - 0.5 * 5 * 0.01 * 9.81 / 0.7;
  CHECK_MSG(gap < 0.04 * (1 - mj[1]) && gap < 1.5 * fabs(mj[1] - coulomb), "%s: rolling gap %.3g (softness %.3g)",
            name, gap, softness);
}

int main(void) {
  mjcf_text_begin("oracle_roll");
  const int models[4] = {PHYS_CONTACT_PENALTY, PHYS_CONTACT_LCP, PHYS_CONTACT_CONE, PHYS_CONTACT_CCP};
  for (int k = 0; k < 4; k++) compare(models[k]);
  return mjcf_text_end();
}
