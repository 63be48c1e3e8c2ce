// test_scene_momentum.c - momentum is conserved in every collision and no collision gains energy (eps <= 1),
// for every contact model (issue 3, item 3).
// Scene: tests/data/contact/momentum.xml, no gravity: a ball (eps 0.5) hits a cube off-centre, the cube then
// hits a spinning cube rotated 45 degrees (edge first), all with friction 0.6. Cubes and balls have
// isotropic inertia and their centre of mass at the body origin, so free flight keeps each body's angular
// momentum exactly also in the discrete step, and any change of the total comes from the contacts.
// The contact impulses are equal and opposite at one point: they conserve linear and angular momentum.
// The drift correction (split impulse, contact.h) then moves positions by dr without touching velocities:
// that keeps linear momentum and the system's centre of mass, but changes the angular momentum about the
// origin by exactly sum_i m_i dr_i x v_i + I_i (R+_i - R~_i) w_i (the correction also turns a body, R+
// instead of R~ = R exp(dt w), and a body-frame w then points elsewhere in the world; I_i is a scalar for
// these bodies). The test checks that this accounts for all of the change, and reports its size.
#include "rot.h"
#include "scene.h"

#define SCENE "tests/data/contact/momentum.xml"

// one contact model: 1 s of collisions
static void test_model(int contact) {
  physModel* m = scene_load(SCENE, contact);
  if (!m) return;
  const char* name = scene_name(contact);
  physData* d = phys_make_data(m);
  phys_reset_data(m, d);
  int ball = scene_body(m, "ball"), cube1 = scene_body(m, "cube1"), cube2 = scene_body(m, "cube2");
  d->qvel[scene_vadr(m, ball)] = 2;            // towards cube 1
  d->qvel[scene_vadr(m, cube2)] = -0.5;        // towards cube 1
  d->qvel[scene_vadr(m, cube2) + 5] = 3;       // spinning about its z axis
  phys_forward(m, d);
  double e0 = scene_energy(m, d), gain = 0, p0[3], L0[3], p[3], L[3], perr = 0, vmax = 2.5;
  scene_momentum(p0, L0, m, d);
  int touched[3] = {0, 0, 0}, n = (int)lround(1.0 / m->opt.timestep);
  double Lcorr[3] = {0, 0, 0}, Lpos = 0, xold[3 * 8], qold[4 * 8];
  for (int i = 0; i < n; i++) {
    for (int b = 1; b < m->nbody && b < 8; b++) {
      memcpy(xold + 3 * b, d->qpos + m->jnt_qposadr[m->body_jntadr[b]], 3 * sizeof(double));
      memcpy(qold + 4 * b, d->qpos + m->jnt_qposadr[m->body_jntadr[b]] + 3, 4 * sizeof(double));
    }
    phys_step(m, d);
    // dr = x+ - x - dt v+: the position correction of each body; dL = m dr x v+
    for (int b = 1; b < m->nbody && b < 8; b++) {
      const double* x = d->qpos + m->jnt_qposadr[m->body_jntadr[b]];
      const double* v = d->qvel + m->jnt_dofadr[m->body_jntadr[b]];
      double dr[3], mass = m->body_mass[b];
      for (int k = 0; k < 3; k++) dr[k] = x[k] - xold[3 * b + k] - m->opt.timestep * v[k];
      Lcorr[0] += mass * (dr[1] * v[2] - dr[2] * v[1]);
      Lcorr[1] += mass * (dr[2] * v[0] - dr[0] * v[2]);
      Lcorr[2] += mass * (dr[0] * v[1] - dr[1] * v[0]);
      Lpos = fmax(Lpos, sqrt(dr[0] * dr[0] + dr[1] * dr[1] + dr[2] * dr[2]));
      // rotation: I (R+ w_b - R~ w_b), R~ from the quaternion integrated without the correction
      double qt[4], wp[3], wt[3];
      memcpy(qt, qold + 4 * b, sizeof(qt));
      phys_quat_integrate(qt, v + 3, m->opt.timestep);
      phys_quat_rotate(wp, x + 3, v + 3);
      phys_quat_rotate(wt, qt, v + 3);
      for (int k = 0; k < 3; k++) Lcorr[k] += m->body_inertia[3 * b] * (wp[k] - wt[k]);
    }
    for (int c = 0; c < d->ncon; c++) {
      int b0 = m->geom_bodyid[d->contact[c].geom[0]], b1 = m->geom_bodyid[d->contact[c].geom[1]];
      if ((b0 == ball && b1 == cube1) || (b1 == ball && b0 == cube1)) touched[0] = 1;
      if ((b0 == cube2 && b1 == cube1) || (b1 == cube2 && b0 == cube1)) touched[1] = 1;
    }
    gain = fmax(gain, scene_energy(m, d) - e0);
    phys_kinematics(m, d);
    scene_momentum(p, L, m, d);
    for (int k = 0; k < 3; k++) perr = fmax(perr, fmax(fabs(p[k] - p0[k]), fabs(L[k] - L0[k] - Lcorr[k])));
  }
  double v[3], w[3];
  scene_com_vel(v, w, m, d, cube1);
  touched[2] = fabs(w[0]) + fabs(w[1]) + fabs(w[2]) > 0.1;   // the off-centre hits spun cube 1
  printf("%-7s collisions ball-cube %d cube-cube %d, cube 1 spin %.3f rad/s, momentum error %.1e (angular "
         "momentum moved by the position correction %.1e, largest correction %.1e m), energy %.4f -> %.4f J "
         "(largest gain %.1e)\n", name, touched[0], touched[1], sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]), perr,
         sqrt(Lcorr[0] * Lcorr[0] + Lcorr[1] * Lcorr[1] + Lcorr[2] * Lcorr[2]), Lpos, e0, scene_energy(m, d), gain);
  CHECK(scene_finite(m, d));
  CHECK_MSG(touched[0] && touched[1] && touched[2], "%s: the collisions did not happen", name);
  // linear momentum, and angular momentum less the position correction's share: every contact applies
  // equal and opposite impulses at one point, so both are conserved to rounding, about 1e-16 of |p| = 1.9 a
  // step over 1000 steps: 1e-9 is generous
  CHECK_MSG(perr <= 1e-9, "%s: momentum changed by %g", name, perr);
  // energy: eps <= 1 everywhere, so no collision may add energy. Rigid models: 1e-6 J for solver
  // tolerances. Penalty (its springs' energy counted, scene_energy): semi-implicit Euler's sampled energy
  // differs from its conserved modified energy by dt/2 * v.F while a contact pushes, F_max <= v sqrt(k m_e)
  // + d v at the closing speed v <= 2.5 m/s, m_e <= 1 kg (the pairs' reduced masses are 0.48 and 0.6 kg)
  double dt = m->opt.timestep, k = m->opt.penalty_stiffness, c = m->opt.penalty_damping;
  double tol = contact == PHYS_CONTACT_PENALTY ? 0.5 * dt * vmax * (vmax * sqrt(k * 1.0) + c * vmax) : 1e-6;
  CHECK_MSG(gain <= tol, "%s: energy grew by %g J (tol %g)", name, gain, tol);
  phys_free_data(d);
  phys_free_model(m);
}

int main(void) {
  for (int c = 0; c < PHYS_NCONTACTMODEL; c++) test_model(c);
  return test_done();
}
