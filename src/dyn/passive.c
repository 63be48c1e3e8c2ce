// passive.c - passive generalized forces (joint springs, dof damping, point-to-point springs along site
// paths) and actuator generalized forces, with MuJoCo 2.2.2 semantics.
#include <string.h>

#include "dyn.h"
#include "model.h"
#include "rot.h"

//---------------------------------------------------------------------------------------------------------
// springs along site paths

// fixed tendon s: L = sum_k c_k q(j_k), Ldot = sum_k c_k qdot(j_k), qfrc(j_k) += -tension c_k
static double fixed_eval(const physModel* m, const physData* d, int s, double* velocity, double tension,
                         double* qfrc) {
  const int* jnt = m->spring_site + m->spring_adr[s];
  const double* coef = m->spring_prm + m->spring_adr[s];
  double length = 0, ldot = 0;
  for (int k = 0; k < m->spring_num[s]; k++) {
    int qa = m->jnt_qposadr[jnt[k]], da = m->jnt_dofadr[jnt[k]];
    length += coef[k] * d->qpos[qa];
    ldot += coef[k] * d->qvel[da];
    if (qfrc && tension != 0) qfrc[da] -= tension * coef[k];
  }
  if (velocity) *velocity = ldot;
  return length;
}

// path (phys_tendon_path: sites and wrap tangent points x_k, gap weights w_k): L = sum_k w_k |x_{k+1} - x_k|
// + arcs;  dL/dx_k = w_{k-1} u_{k-1} - w_k u_k with u_k the unit vector from point k to k+1 (tangent points held
// on their geom's body: the arcs' own change is second order);  Ldot = sum_k dL/dx_k . v_k;  qfrc += sum_k J_k'
// (-tension dL/dx_k). A path through sites only gives the same bits as the per-site sums (w = 1). Fixed:
// fixed_eval.
double phys_spring_eval(const physModel* m, const physData* d, int s, double* velocity, double tension,
                        double* qfrc) {
  if (m->spring_type[s] == PHYS_SPRING_FIXED) return fixed_eval(m, d, s, velocity, tension, qfrc);
  physTendonPath p;
  phys_tendon_path(m, s, d->site_xpos, d->geom_xpos, d->geom_xmat, &p);
  double length = 0, ldot = 0, uprev[3] = {0, 0, 0}, wprev = 0;
  for (int k = 0; k < p.npoint; k++) {
    const double* x = p.x[k];
    double u[3] = {0, 0, 0}, w = p.w[k];
    if (w != 0) {
      for (int i = 0; i < 3; i++) u[i] = p.x[k + 1][i] - x[i];
      double len = phys_normalize3(u);  // a zero-length segment contributes no direction
      length += w * len;
    }
    double g[3] = {wprev * uprev[0] - w * u[0], wprev * uprev[1] - w * u[1], wprev * uprev[2] - w * u[2]};  // dL/dx_k
    int body = p.body[k];
    if (velocity) {
      double v[3];
      phys_point_velocity(v, d, body, x);
      ldot += phys_dot3(g, v);
    }
    if (qfrc && tension != 0) {
      double f[3] = {-tension * g[0], -tension * g[1], -tension * g[2]};
      phys_apply_force(m, d, qfrc, body, x, f, NULL);
    }
    phys_copy3(uprev, u);
    wprev = w;
  }
  if (velocity) *velocity = ldot;
  return length + p.arcs;
}

// clamped control of actuator a
static double actuator_ctrl(const physModel* m, const physData* d, int a) {
  double c = d->ctrl[a];
  if (m->actuator_ctrllimited[a]) {
    const double* r = m->actuator_ctrlrange + 2 * a;
    c = c < r[0] ? r[0] : (c > r[1] ? r[1] : c);
  }
  return c;
}

//---------------------------------------------------------------------------------------------------------
// passive forces

// joint springs: hinge/slide -k (q - q_spring); ball -k log(q_spring^-1 q) (body-frame rotation vector,
// as MuJoCo's mju_subQuat); free: -k (p - p_spring) on the translation, the ball rule on the rotation
static void joint_springs(const physModel* m, physData* d) {
  for (int j = 0; j < m->njnt; j++) {
    double k = m->jnt_stiffness[j];
    if (k == 0) continue;
    int qa = m->jnt_qposadr[j], da = m->jnt_dofadr[j];
    const double* q = d->qpos + qa;
    const double* q0 = m->qpos_spring + qa;
    double* f = d->qfrc_passive + da;
    switch (m->jnt_type[j]) {
      case PHYS_JNT_FREE:
        for (int i = 0; i < 3; i++) f[i] -= k * (q[i] - q0[i]);
        q += 3;
        q0 += 3;
        f += 3;
        // fall through
      case PHYS_JNT_BALL: {
        double qn[4] = {q[0], q[1], q[2], q[3]}, q0c[4], dq[4], dif[3];
        phys_quat_normalize(qn);
        phys_quat_conj(q0c, q0);
        phys_quat_mul(dq, q0c, qn);
        phys_quat_log(dif, dq);
        for (int i = 0; i < 3; i++) f[i] -= k * dif[i];
        break;
      }
      default:
        f[0] -= k * (q[0] - q0[0]);
        break;
    }
  }
}

// qfrc_passive = joint springs - damping*qvel + springs along paths; spring_length/velocity always,
// spring_force = k (L - L0) + b Ldot (a tension; MuJoCo tendon springs act in both directions) with
// L0 = spring_restlength + sum of gear[0]*ctrl over PHYS_TRN_RESTLENGTH actuators of the spring
void phys_passive(const physModel* m, physData* d) {
  int disabled = m->opt.disableflags & PHYS_DSBL_PASSIVE;
  memset(d->qfrc_passive, 0, sizeof(double) * (size_t)m->nv);
  for (int s = 0; s < m->nspring; s++) {
    d->spring_length[s] = phys_spring_eval(m, d, s, d->spring_velocity + s, 0, NULL);
    d->spring_force[s] = 0;
  }
  if (disabled) return;

  joint_springs(m, d);
  for (int j = 0; j < m->nv; j++) d->qfrc_passive[j] -= m->dof_damping[j] * d->qvel[j];

  // rest lengths moved by actuators, accumulated in spring_force temporarily as -delta L0
  if (!(m->opt.disableflags & PHYS_DSBL_ACTUATION))
    for (int a = 0; a < m->nu; a++)
      if (m->actuator_trntype[a] == PHYS_TRN_RESTLENGTH)
        d->spring_force[m->actuator_trnid[a]] -= m->actuator_gear[6 * a] * actuator_ctrl(m, d, a);

  for (int s = 0; s < m->nspring; s++) {
    double L0 = m->spring_restlength[s] - d->spring_force[s];
    double t = m->spring_stiffness[s] * (d->spring_length[s] - L0) + m->spring_damping[s] * d->spring_velocity[s];
    d->spring_force[s] = t;
    if (t != 0) phys_spring_eval(m, d, s, NULL, t, d->qfrc_passive);
  }
}

//---------------------------------------------------------------------------------------------------------
// actuation

// a muscle's or slider-crank's force (phys_actuator_force_length) and its terms (dyn.h): the input c = act (slope 0) or the
// clamped control; dL = dLdot = 0 where the length does not move (site, ball or free joint: length 0)
static double muscle_force(const physModel* m, const physData* d, int a, physActuatorTerms* t) {
  int adr = m->actuator_actadr[a], type = m->actuator_trntype[a], id = m->actuator_trnid[a];
  double c = adr >= 0 ? d->act[adr] : actuator_ctrl(m, d, a), slope = adr >= 0 ? 0 : 1;
  if (adr < 0 && m->actuator_ctrllimited[a]) {
    const double* r = m->actuator_ctrlrange + 2 * a;
    if (d->ctrl[a] < r[0] || d->ctrl[a] > r[1]) slope = 0;
  }
  physActuatorTerms x = {0};
  double f = phys_actuator_force_length_terms(m, d, a, c, &x);
  int moves = type == PHYS_TRN_SPRING || type == PHYS_TRN_SLIDERCRANK ||
              (type == PHYS_TRN_JOINT && (m->jnt_type[id] == PHYS_JNT_HINGE || m->jnt_type[id] == PHYS_JNT_SLIDE));
  if (!moves) x.dL = x.dLdot = 0;
  x.c = c, x.slope = slope * x.fslope, x.dact = adr >= 0 ? x.gain * x.fslope : 0;
  if (t) *t = x;
  return f;
}

// actuator a's force (dyn.h); the length terms only when g1, g2, b1 or b2 is nonzero, so a motor's force is
// its clamped control bit for bit (1 c + 0); the input is the activation for actuators with dynamics; the
// force clamped to forcerange when forcelimited (then every derivative 0)
double phys_actuator_force(const physModel* m, const physData* d, int a, physActuatorTerms* t) {
  const double *g = m->actuator_gainprm + 3 * a, *b = m->actuator_biasprm + 3 * a;
  int adr = m->actuator_actadr[a];
  double c = adr >= 0 ? d->act[adr] : d->ctrl[a], slope = 1, gain = g[0], bias = b[0], dL = 0, dLdot = 0;
  if (phys_actuator_muscle(m, a) || m->actuator_trntype[a] == PHYS_TRN_SLIDERCRANK) return muscle_force(m, d, a, t);
  if (adr >= 0) {
    slope = 0;   // d force / d ctrl: through the activation only
  } else if (m->actuator_ctrllimited[a]) {
    const double* r = m->actuator_ctrlrange + 2 * a;
    if (c < r[0] || c > r[1]) slope = 0;
    c = c < r[0] ? r[0] : (c > r[1] ? r[1] : c);
  }
  if (g[1] != 0 || g[2] != 0 || b[1] != 0 || b[2] != 0) {
    int j = m->actuator_trnid[a];
    double gear = m->actuator_gear[6 * a];
    double L = gear * d->qpos[m->jnt_qposadr[j]], Ldot = gear * d->qvel[m->jnt_dofadr[j]];
    gain += g[1] * L + g[2] * Ldot;
    bias += b[1] * L + b[2] * Ldot;
    dL = g[1] * c + b[1];
    dLdot = g[2] * c + b[2];
  }
  double f = gain * c + bias, fslope = 1;
  if (m->actuator_forcelimited[a]) {
    const double* r = m->actuator_forcerange + 2 * a;
    if (f < r[0] || f > r[1]) fslope = 0, slope = 0, dL = 0, dLdot = 0;
    f = f < r[0] ? r[0] : (f > r[1] ? r[1] : f);
  }
  if (t) *t = (physActuatorTerms){c, slope, gain, dL, dLdot, fslope, adr >= 0 ? gain * fslope : 0, 0};
  return f;
}

// act_dot of actuator a with dynamics (MuJoCo 2.2.2's mj_fwdActuation): ctrl clamped to ctrlrange when
// ctrllimited, then integrator ctrl, filter (ctrl - act) / max(tau, 1e-15)
static double actuator_act_dot(const physModel* m, const physData* d, int a) {
  double c = actuator_ctrl(m, d, a);
  if (m->actuator_dyntype[a] == PHYS_DYN_INTEGRATOR) return c;
  if (m->actuator_dyntype[a] == PHYS_DYN_MUSCLE)
    return phys_muscle_dynamics(c, d->act[m->actuator_actadr[a]], m->actuator_dynprm + 3 * a);
  double tau = m->actuator_dynprm[3 * a];
  return (c - d->act[m->actuator_actadr[a]]) / (tau > 1e-15 ? tau : 1e-15);
}

// world force and torque of site actuator a (PHYS_TRN_SITE) of force f through the gear vector gear: R
// gear[0..2] f and R gear[3..5] f with R the site's rotation
static void site_wrench_gear(const physModel* m, const physData* d, int a, const double gear[6], double f,
                             double force[3], double torque[3]) {
  const double* R = d->site_xmat + 9 * m->actuator_trnid[a];
  for (int i = 0; i < 3; i++) {
    force[i] = (R[3 * i] * gear[0] + R[3 * i + 1] * gear[1] + R[3 * i + 2] * gear[2]) * f;
    torque[i] = (R[3 * i] * gear[3] + R[3 * i + 1] * gear[4] + R[3 * i + 2] * gear[5]) * f;
  }
}

// phys_site_wrench (dyn.h) through the model's gear
void phys_site_wrench(const physModel* m, const physData* d, int a, double f, double force[3], double torque[3]) {
  site_wrench_gear(m, d, a, m->actuator_gear + 6 * a, f, force, torque);
}

// moment (nv) of site actuator a with the gear vector gear (6): the generalized force of a unit actuator force
void phys_site_moment(const physModel* m, const physData* d, int a, const double gear[6], double* moment) {
  int s = m->actuator_trnid[a];
  double force[3], torque[3];
  memset(moment, 0, sizeof(double) * (size_t)m->nv);
  site_wrench_gear(m, d, a, gear, 1, force, torque);
  phys_apply_force(m, d, moment, m->site_bodyid[s], d->site_xpos + 3 * s, force, torque);
}

// qfrc_actuator = sum_a moment_a' force_a (phys_actuator_force): joint hinge/slide gear[0]; ball gear[0..2]
// and free gear[0..5] on the joint's dofs; spring: force gear[0]*force on the path length (MuJoCo's tendon
// motor: qfrc = J_L' f, positive f lengthens the spring, i.e. tension -f); site: the wrench phys_site_wrench
// at the site; restlength actuators act in phys_passive, adhesion (body) actuators in the step once its contacts
// are known (src/contact/adhesion.c). act_dot of the actuators with dynamics (0 with actuation disabled)
void phys_actuation(const physModel* m, physData* d) {
  memset(d->qfrc_actuator, 0, sizeof(double) * (size_t)m->nv);
  if (m->na) memset(d->act_dot, 0, sizeof(double) * (size_t)m->na);
  if (m->opt.disableflags & PHYS_DSBL_ACTUATION) return;
  for (int a = 0; a < m->nu; a++) {
    if (m->actuator_actadr[a] >= 0) d->act_dot[m->actuator_actadr[a]] = actuator_act_dot(m, d, a);
    if (m->actuator_trntype[a] == PHYS_TRN_RESTLENGTH || m->actuator_trntype[a] == PHYS_TRN_BODY) continue;
    double c = phys_actuator_force(m, d, a, NULL);
    const double* gear = m->actuator_gear + 6 * a;
    int id = m->actuator_trnid[a];
    if (m->actuator_trntype[a] == PHYS_TRN_JOINT) {
      int type = m->jnt_type[id], da = m->jnt_dofadr[id];
      int n = type == PHYS_JNT_FREE ? 6 : (type == PHYS_JNT_BALL ? 3 : 1);
      for (int k = 0; k < n; k++) d->qfrc_actuator[da + k] += gear[k] * c;
    } else if (m->actuator_trntype[a] == PHYS_TRN_SITE) {
      double force[3], torque[3];
      phys_site_wrench(m, d, a, c, force, torque);
      phys_apply_force(m, d, d->qfrc_actuator, m->site_bodyid[id], d->site_xpos + 3 * id, force, torque);
    } else if (m->actuator_trntype[a] == PHYS_TRN_SLIDERCRANK) {
      phys_slidercrank(m, d, a, c, d->qfrc_actuator, NULL);
    } else {
      phys_spring_eval(m, d, id, NULL, -gear[0] * c, d->qfrc_actuator);
    }
  }
}
