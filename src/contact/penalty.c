// penalty.c - penalty contact (paper 002): explicit spring-damper normal forces with regularized Coulomb
// friction, and joint limits as one-sided penalty springs. No solver: the forces join the applied forces
// and the step integrates them like any other (semi-implicit Euler).
//
// Contact (normal n from geom[0] to geom[1], tangents t1, t2; phi = dist, phi_dot = n . v_rel, v_rel the
// velocity of geom[1]'s material point at pos relative to geom[0]'s; force on geom[1], minus on geom[0]):
//   f_n = max(0, k_c*(-phi) - d_c*phi_dot)                      when phi < 0, else 0
//   f_t = -mu f_n v_t / max(|v_t|, v_slip)                       v_t = v_rel - (n . v_rel) n
// (regularized Coulomb: viscous below v_slip, |f_t| = mu f_n above). The max(0, .) keeps the damper from
// pulling the bodies together while they separate (no adhesion).
//
// Restitution comes only from d_c (m->opt.penalty_damping); per-geom restitution is not used by this model.
// For a contact of effective mass m_e with the clamp inactive, the spring-damper is a damped oscillator of
// damping ratio zeta = d_c/(2 sqrt(k_c m_e)) and the impact's coefficient of restitution is
//   eps = exp(-pi zeta / sqrt(1 - zeta^2))   (zeta < 1; eps = 0 for zeta >= 1),
// so d_c = -2 ln(eps) sqrt(k_c m_e / (pi^2 + ln(eps)^2)) gives a chosen eps for a chosen m_e (the clamp
// f_n >= 0 ends the contact slightly early, which makes the rebound a little livelier than eps).
//
// Joint limits (limited hinge and slide joints, PHYS_DSBL_LIMIT unset): with dist = q - lo (lower) or
// hi - q (upper), the one-sided spring f = max(0, k_c*(-dist) - d_c*dist_dot) for dist < 0 pushes the joint
// back into its range (same k_c, d_c, in N m/rad or N/m). The step integrates it implicitly
// (phys_penalty_limits with add): k_c = 1e4 N m/rad on a joint of inertia 0.01 kg m^2 has omega dt = 5 at
// dt = 5 ms, which explicit Euler cannot follow (MuJoCo's humanoid blew up).
//
// Stability: the spring is explicit; dt < 2/omega = 2 sqrt(m_e/k_c) is needed (dt = 2 ms, k_c = 1e4: m_e >
// 0.01 kg), and the friction damper mu f_n / v_slip must satisfy dt mu f_n/(v_slip m_e) < 2 to settle
// (mu g dt / 2 < v_slip for a body resting on its weight), else the tangential velocity chatters in a band
// of width about mu g dt without growing.
#include <math.h>

#include "contact.h"
#include "dyn.h"
#include "rot.h"

// world force on geom[1] of contact c (minus on geom[0]) from the velocities in cvel
static void contact_force(const physModel* m, const physData* d, const physContact* c, double force[3]) {
  force[0] = force[1] = force[2] = 0;
  if (!(c->dist < 0)) return;
  const double* n = c->frame;
  double v1[3], v0[3], vr[3], vt[3];
  phys_point_velocity(v1, d, m->geom_bodyid[c->geom[1]], c->pos);
  phys_point_velocity(v0, d, m->geom_bodyid[c->geom[0]], c->pos);
  for (int k = 0; k < 3; k++) vr[k] = v1[k] - v0[k];

  // f_n = max(0, -k_c phi - d_c phi_dot)
  double vn = phys_dot3(n, vr);
  double fn = -m->opt.penalty_stiffness * c->dist - m->opt.penalty_damping * vn;
  if (fn <= 0) return;

  // f_t = -mu f_n v_t / max(|v_t|, v_slip)
  for (int k = 0; k < 3; k++) vt[k] = vr[k] - vn * n[k];
  double speed = phys_norm3(vt), scale = c->mu * fn / fmax(speed, m->opt.penalty_vslip);
  for (int k = 0; k < 3; k++) force[k] = fn * n[k] - scale * vt[k];
}

// one-sided limit springs: for each limited hinge/slide dof with dist < 0 and a pushing force
// f = -k_c (q - q_lim) - d_c v > 0 (q_lim the violated bound): qfrc[dof] += f, and if add is not NULL the
// implicit (backward Euler) form of the spring-damper, exact for this diagonal joint-space force:
//   f(q+, v+) = f - dt k_c v - (dt d_c + dt^2 k_c) a   =>   qfrc += f - dt k_c v,  add += dt d_c + dt^2 k_c
// (add joins the articulated-body diagonal, as implicit joint damping). Returns the number of active limits.
int phys_penalty_limits(const physModel* m, const physData* d, double* qfrc, double* add) {
  if (m->opt.disableflags & PHYS_DSBL_LIMIT) return 0;
  double k = m->opt.penalty_stiffness, c = m->opt.penalty_damping, dt = m->opt.timestep;
  int n = 0;
  for (int j = 0; j < m->njnt; j++) {
    if (!m->jnt_limited[j] || (m->jnt_type[j] != PHYS_JNT_HINGE && m->jnt_type[j] != PHYS_JNT_SLIDE)) continue;
    int dof = m->jnt_dofadr[j];
    double q = d->qpos[m->jnt_qposadr[j]], v = d->qvel[dof];
    for (int side = 0; side < 2; side++) {
      // dist and its rate: lower q - lo (rate v), upper hi - q (rate -v)
      double sign = side == 0 ? 1.0 : -1.0;
      double dist = side == 0 ? q - m->jnt_range[2 * j] : m->jnt_range[2 * j + 1] - q;
      if (!(dist < 0)) continue;
      double f = -k * dist - c * sign * v;
      if (!(f > 0)) continue;
      n++;
      qfrc[dof] += sign * f;
      if (add) {
        qfrc[dof] -= dt * k * v;
        add[dof] += dt * c + dt * dt * k;
      }
    }
  }
  return n;
}

// qfrc += sum_contacts J_rel' F (needs kinematics, cvel and d->contact); stores each contact's impulse
// of the step (frame coordinates, F dt) in its lambda
void phys_penalty_contacts(const physModel* m, physData* d, double* qfrc) {
  for (int i = 0; i < d->ncon; i++) {
    physContact* c = d->contact + i;
    double F[3], mF[3];
    contact_force(m, d, c, F);
    phys_mat_vec3(c->lambda, c->frame, F);
    for (int k = 0; k < 3; k++) {
      c->lambda[k] *= m->opt.timestep;
      mF[k] = -F[k];
    }
    c->efc_adr = -1;
    if (F[0] == 0 && F[1] == 0 && F[2] == 0) continue;
    phys_apply_force(m, d, qfrc, m->geom_bodyid[c->geom[1]], c->pos, F, NULL);
    phys_apply_force(m, d, qfrc, m->geom_bodyid[c->geom[0]], c->pos, mF, NULL);
  }
}

// qfrc += contact forces + explicit limit forces
void phys_penalty_force(const physModel* m, physData* d, double* qfrc) {
  phys_penalty_contacts(m, d, qfrc);
  phys_penalty_limits(m, d, qfrc, NULL);
}
