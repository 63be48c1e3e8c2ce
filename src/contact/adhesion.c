// adhesion.c - MuJoCo 2.2.2's adhesion actuators (<adhesion>, mjTRN_BODY; issue 15): actuator a of force f
// (phys_actuator_force: gain times the clamped control, forcelimited) pulls its body b = trnid along the normals of
// the contacts it takes part in. With C_b the contacts with a geom of b (every contact of the step's list: those
// inside a geom's margin too, as 2.2.2 counts its gap-inactive ones), n_c the normal (from geom[0] to geom[1])
// and J_c = n_c' (J(b1, p_c) - J(b0, p_c)) the normal row at the contact point p_c (b0, b1 the geoms' bodies):
//   moment_a = -(1/|C_b|) sum_{c in C_b} J_c,    qfrc_actuator += moment_a f    (0 without contacts),
// i.e. f/|C_b| pulls b0 along +n_c and b1 along -n_c at p_c: the two bodies towards each other. The moment
// depends on the contacts, so the step applies it after detection (src/step/step.c), and actuator_length is 0 (as
// MuJoCo). Derivatives are not built (the step derivatives refuse adhesion: grad.h).
#include <string.h>

#include "contact.h"
#include "dyn.h"

// 1 if m has an adhesion actuator (and actuation is enabled)
int phys_adhesion_any(const physModel* m) {
  if (m->opt.disableflags & PHYS_DSBL_ACTUATION) return 0;
  for (int a = 0; a < m->nu; a++)
    if (m->actuator_trntype[a] == PHYS_TRN_BODY) return 1;
  return 0;
}

// qfrc (nv) += the adhesion actuators' generalized forces at d's kinematics with the contacts con (n)
void phys_adhesion(const physModel* m, const physData* d, const physContact* con, int n, double* qfrc) {
  if (!phys_adhesion_any(m)) return;
  for (int a = 0; a < m->nu; a++) {
    if (m->actuator_trntype[a] != PHYS_TRN_BODY) continue;
    int b = m->actuator_trnid[a], cnt = 0;
    for (int i = 0; i < n; i++)
      cnt += m->geom_bodyid[con[i].geom[0]] == b || m->geom_bodyid[con[i].geom[1]] == b;
    double f = phys_actuator_force(m, d, a, NULL);
    if (cnt == 0 || f == 0) continue;
    for (int i = 0; i < n; i++) {
      int b0 = m->geom_bodyid[con[i].geom[0]], b1 = m->geom_bodyid[con[i].geom[1]];
      if (b0 != b && b1 != b) continue;
      double s = f / cnt, pull0[3], pull1[3];   // b0 along +n, b1 along -n
      for (int k = 0; k < 3; k++) pull0[k] = s * con[i].frame[k], pull1[k] = -pull0[k];
      phys_apply_force(m, d, qfrc, b0, con[i].pos, pull0, NULL);
      phys_apply_force(m, d, qfrc, b1, con[i].pos, pull1, NULL);
    }
  }
}
