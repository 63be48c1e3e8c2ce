// muscle.c - MuJoCo 2.2.2's muscles and slider-crank transmissions (issue 15 items 2 and 6): the muscle's
// activation dynamics, active force-length-velocity gain and passive force (piecewise quadratic curves of the
// length normalized by lengthrange), the slider-crank's length and moment, the actuator lengths and velocities
// these read, and the compile-time constants (acc0 and lengthrange, MuJoCo's mj_setConst / mj_setLengthRange).
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "chol.h"
#include "dyn.h"
#include "rot.h"

#define MINVAL 1e-15   // MuJoCo's mjMINVAL: every division by a parameter is guarded by it

static double clip(double x, double lo, double hi) { return x < lo ? lo : (x > hi ? hi : x); }

//---------------------------------------------------------------------------------------------------------
// the muscle curves (MuJoCo 2.2.2's mju_muscleGain, mju_muscleBias, mju_muscleDynamics)

// the active force-length curve at normalized length L and its slope dFL/dL into *slope: 1 at L = 1, two
// quadratic pieces on each side meeting at the midpoints a = (lmin + 1)/2 and b = (1 + lmax)/2, 0 at lmin and
// lmax and 0 beyond lmax. Below lmin MuJoCo 2.2.2 has no cut-off: its L <= 1 piece 1 - x^2/2 goes on, negative
// (so the muscle pushes there); measured with mju_muscleGain (tests/dyn/test_oracle_muscle.c) and kept, as
// physid follows 2.2.2. The curve is C1 except at lmin, where it jumps from -1 (left) to 0: the slope there is
// the right piece's (0, the branch the value takes)
static double gain_length(double L, double lmin, double lmax, double* slope) {
  *slope = 0;
  if (L > lmax) return 0;
  double a = 0.5 * (lmin + 1), b = 0.5 * (1 + lmax), x, w;
  if (L >= lmin && L <= a) {
    w = fmax(MINVAL, a - lmin), x = (L - lmin) / w;   // FL = x^2/2, dFL/dL = x / w
    *slope = x / w;
    return 0.5 * x * x;
  }
  if (L <= 1) {
    w = fmax(MINVAL, 1 - a), x = (1 - L) / w;   // FL = 1 - x^2/2, dFL/dL = x / w
    *slope = x / w;
    return 1 - 0.5 * x * x;
  }
  if (L <= b) {
    w = fmax(MINVAL, b - 1), x = (L - 1) / w;   // dFL/dL = -x / w
    *slope = -x / w;
    return 1 - 0.5 * x * x;
  }
  w = fmax(MINVAL, lmax - b), x = (lmax - L) / w;   // dFL/dL = -x / w
  *slope = -x / w;
  return 0.5 * x * x;
}

// the force-velocity curve at normalized velocity V with fvmax and its slope into *slope: 0 below -1, (V + 1)^2
// to 0, fvmax - (y - V)^2 / y to y = fvmax - 1, fvmax beyond (C1 everywhere)
static double gain_velocity(double V, double fvmax, double* slope) {
  double y = fvmax - 1, w = fmax(MINVAL, y);
  *slope = 0;
  if (V <= -1) return 0;
  if (V <= 0) {
    *slope = 2 * (V + 1);
    return (V + 1) * (V + 1);
  }
  if (V <= y) {
    *slope = 2 * (y - V) / w;
    return fvmax - (y - V) * (y - V) / w;
  }
  return fvmax;
}

// the peak force of a muscle: prm[2], or scale prm[3] / acc0 when prm[2] < 0
static double peak_force(double acc0, const double prm[9]) { return prm[2] < 0 ? prm[3] / fmax(MINVAL, acc0) : prm[2]; }

// the normalized length range[0] + (len - lengthrange[0]) / L0 with the optimal length L0 = (lengthrange[1] -
// lengthrange[0]) / (range[1] - range[0]) (into *L0)
static double normalized_length(double len, const double lr[2], const double prm[9], double* L0) {
  *L0 = (lr[1] - lr[0]) / fmax(MINVAL, prm[1] - prm[0]);
  return prm[0] + (len - lr[0]) / fmax(MINVAL, *L0);
}

// gain = -F FL(l) FV(v) with l = range[0] + (len - lr[0]) / L0 and v = vel / (L0 vmax) (the guards' MINVAL as
// MuJoCo's): dgain/dlen = -F FL'(l) FV / L0, dgain/dvel = -F FL FV'(v) / (L0 vmax), dgain/dF = -FL FV
double phys_muscle_gain_deriv(double len, double vel, const double lr[2], double acc0, const double prm[9],
                              double* dlen, double* dvel, double* dforce) {
  double L0, L = normalized_length(len, lr, prm, &L0), sl, sv, wl = fmax(MINVAL, L0), wv = fmax(MINVAL, L0 * prm[6]);
  double FL = gain_length(L, prm[4], prm[5], &sl), FV = gain_velocity(vel / wv, prm[8], &sv), F = peak_force(acc0, prm);
  if (dlen) *dlen = -F * sl * FV / wl;
  if (dvel) *dvel = -F * FL * sv / wv;
  if (dforce) *dforce = -FL * FV;
  return -F * FL * FV;
}

double phys_muscle_gain(double len, double vel, const double lr[2], double acc0, const double prm[9]) {
  return phys_muscle_gain_deriv(len, vel, lr, acc0, prm, NULL, NULL, NULL);
}

// bias = -F fpmax FP(l): 0 to l = 1, x^2/2 to b = (1 + lmax)/2, 1/2 + x beyond, x = (l - 1)/(b - 1) resp.
// (l - b)/(b - 1) (C1): dbias/dlen = -F fpmax FP'(l) / L0, dbias/dF = -fpmax FP
double phys_muscle_bias_deriv(double len, const double lr[2], double acc0, const double prm[9], double* dlen,
                              double* dforce) {
  double L0, L = normalized_length(len, lr, prm, &L0), b = 0.5 * (1 + prm[5]), F = peak_force(acc0, prm);
  double w = fmax(MINVAL, b - 1), x, FP, slope;
  if (L <= 1) {
    if (dlen) *dlen = 0;
    if (dforce) *dforce = 0;
    return 0;
  }
  if (L <= b) {
    x = (L - 1) / w, FP = 0.5 * x * x, slope = x / w;
    if (dlen) *dlen = -F * prm[7] * slope / fmax(MINVAL, L0);
    if (dforce) *dforce = -prm[7] * FP;
    return -F * prm[7] * 0.5 * x * x;   // (MuJoCo's order of products: bit for bit the primal of before)
  }
  x = (L - b) / w, FP = 0.5 + x, slope = 1 / w;
  if (dlen) *dlen = -F * prm[7] * slope / fmax(MINVAL, L0);
  if (dforce) *dforce = -prm[7] * FP;
  return -F * prm[7] * FP;
}

double phys_muscle_bias(double len, const double lr[2], double acc0, const double prm[9]) {
  return phys_muscle_bias_deriv(len, lr, acc0, prm, NULL, NULL);
}

// act_dot = (c - act) / tau, c = clip(ctrl, 0, 1), a = clip(act, 0, 1), tau = prm[0] s (c > act) or prm[1] / s
// (c <= act), s = 0.5 + 1.5 a, tau guarded by MINVAL: dact_dot/dctrl = c' / tau (c' = 1 on [0, 1], else 0),
// dact_dot/dact = -1/tau - act_dot tau'/tau (tau' = 1.5 prm[0] or -1.5 prm[1] / s^2 for act in [0, 1], else
// 0), dact_dot/dprm[k] = -act_dot (s or 1/s) / tau for the branch's k (0 for the other). At c = act act_dot is
// 0 on both branches but its slopes differ (the branches' 1/tau): the values are the deactivation branch's
// (c <= act), which the primal takes there
double phys_muscle_dynamics_deriv(double ctrl, double act, const double prm[2], double* dctrl, double* dact,
                                  double dprm[2]) {
  double c = clip(ctrl, 0, 1), a = clip(act, 0, 1), s = 0.5 + 1.5 * a, up = c > act;
  double tau = up ? prm[0] * s : prm[1] / s, w = fmax(MINVAL, tau), rate = (c - act) / w;
  double live = tau > MINVAL, inside = act >= 0 && act <= 1;
  double dtau = live && inside ? (up ? 1.5 * prm[0] : -1.5 * prm[1] / (s * s)) : 0;
  if (dctrl) *dctrl = ctrl >= 0 && ctrl <= 1 ? 1 / w : 0;
  if (dact) *dact = -1 / w - rate * dtau / w;
  if (dprm) {
    dprm[0] = up && live ? -rate * s / w : 0;
    dprm[1] = !up && live ? -rate / (s * w) : 0;
  }
  return rate;
}

double phys_muscle_dynamics(double ctrl, double act, const double prm[2]) {
  return phys_muscle_dynamics_deriv(ctrl, act, prm, NULL, NULL, NULL);
}

//---------------------------------------------------------------------------------------------------------
// the slider-crank transmission

// slider-crank actuator a at d's kinematics (and velocities when vel is not NULL): the length gear[0] (a'v -
// sqrt(det)), det = (a'v)^2 + r^2 - v'v, v = crank site - slider site, a = the slider site's z axis, r =
// cranklength (det <= 0, a broken crank: the length a'v with dL/da = v, dL/dv = a, as MuJoCo 2.2.2); its rate
// of change into *vel; with qfrc, qfrc += moment' f (the crank site pulled by dL/dv f, the slider by -dL/dv f
// and the torque a x dL/da f on the slider's body)
double phys_slidercrank(const physModel* m, const physData* d, int a, double f, double* qfrc, double* vel) {
  int crank = m->actuator_trnid[a], slider = m->actuator_trnid2[a];
  double r = m->actuator_cranklength[a], gear = m->actuator_gear[6 * a];
  const double *pc = d->site_xpos + 3 * crank, *ps = d->site_xpos + 3 * slider, *R = d->site_xmat + 9 * slider;
  double ax[3] = {R[2], R[5], R[8]}, v[3] = {pc[0] - ps[0], pc[1] - ps[1], pc[2] - ps[2]};
  double av = phys_dot3(ax, v), det = av * av + r * r - phys_dot3(v, v), len, dlda[3], dldv[3];
  if (det <= 0) {
    len = av;
    phys_copy3(dlda, v);
    phys_copy3(dldv, ax);
  } else {
    double sdet = sqrt(det);
    len = av - sdet;
    for (int i = 0; i < 3; i++) {
      dlda[i] = v[i] * (1 - av / sdet);
      dldv[i] = ax[i] * (1 - av / sdet) + v[i] / sdet;
    }
  }
  int bc = m->site_bodyid[crank], bs = m->site_bodyid[slider];
  if (vel) {   // dL/dt = dL/da . (w_s x a) + dL/dv . (v_crank - v_slider)
    double vc[3], vs[3], wa[3];
    phys_point_velocity(vc, d, bc, pc);
    phys_point_velocity(vs, d, bs, ps);
    phys_cross3(wa, d->cvel + 6 * bs, ax);
    *vel = gear * (phys_dot3(dlda, wa) + dldv[0] * (vc[0] - vs[0]) + dldv[1] * (vc[1] - vs[1]) + dldv[2] * (vc[2] - vs[2]));
  }
  if (qfrc && f != 0) {
    double F = gear * f, fc[3], fs[3], ts[3];
    phys_cross3(ts, ax, dlda);
    for (int i = 0; i < 3; i++) fc[i] = dldv[i] * F, fs[i] = -dldv[i] * F, ts[i] *= F;
    phys_apply_force(m, d, qfrc, bc, pc, fc, NULL);
    phys_apply_force(m, d, qfrc, bs, ps, fs, ts);
  }
  return gear * len;
}

//---------------------------------------------------------------------------------------------------------
// actuator length, velocity and force

// actuator a's length gear[0] x (joint position, tendon length or slider-crank length) and its rate into *vel
// (0 for sites and ball or free joints, as MuJoCo's site transmission without refsite)
double phys_actuator_length(const physModel* m, const physData* d, int a, double* vel) {
  int id = m->actuator_trnid[a];
  double gear = m->actuator_gear[6 * a];
  switch (m->actuator_trntype[a]) {
    case PHYS_TRN_JOINT:
      if (m->jnt_type[id] == PHYS_JNT_HINGE || m->jnt_type[id] == PHYS_JNT_SLIDE) {
        *vel = gear * d->qvel[m->jnt_dofadr[id]];
        return gear * d->qpos[m->jnt_qposadr[id]];
      }
      break;
    case PHYS_TRN_SPRING:
      *vel = gear * d->spring_velocity[id];
      return gear * d->spring_length[id];
    case PHYS_TRN_SLIDERCRANK: return phys_slidercrank(m, d, a, 0, NULL, vel);
    default: break;
  }
  *vel = 0;
  return 0;
}

int phys_actuator_muscle(const physModel* m, int a) {
  return m->actuator_gaintype[a] == PHYS_GAIN_MUSCLE || m->actuator_biastype[a] == PHYS_GAIN_MUSCLE ||
         m->actuator_dyntype[a] == PHYS_DYN_MUSCLE;
}

double phys_muscle_peak(const physModel* m, int a) {
  return peak_force(m->actuator_acc0[a], m->actuator_muscleprm + 18 * a);
}

// f = gain c + bias: dL = dgain/dL c + dbias/dL, dLdot = dgain/dLdot c + dbias/dLdot, dpeak = dgain/dF c +
// dbias/dF (muscle parts) with the affine parts' g1, g2, b1, b2; all 0 when f is clamped to forcerange
double phys_actuator_force_length_terms(const physModel* m, const physData* d, int a, double c, physActuatorTerms* t) {
  double vel, len = phys_actuator_length(m, d, a, &vel), gain, bias, gl, gv, gF = 0, bl, bv = 0, bF = 0;
  const double *g = m->actuator_gainprm + 3 * a, *b = m->actuator_biasprm + 3 * a;
  const double *lr = m->actuator_lengthrange + 2 * a, *prm = m->actuator_muscleprm + 18 * a, acc0 = m->actuator_acc0[a];
  if (m->actuator_gaintype[a] == PHYS_GAIN_MUSCLE)
    gain = phys_muscle_gain_deriv(len, vel, lr, acc0, prm, &gl, &gv, &gF);
  else
    gain = g[0] + g[1] * len + g[2] * vel, gl = g[1], gv = g[2];
  if (m->actuator_biastype[a] == PHYS_GAIN_MUSCLE)
    bias = phys_muscle_bias_deriv(len, lr, acc0, prm + 9, &bl, &bF);
  else
    bias = b[0] + b[1] * len + b[2] * vel, bl = b[1], bv = b[2];
  double f = gain * c + bias, fs = 1;
  if (m->actuator_forcelimited[a]) {
    const double* r = m->actuator_forcerange + 2 * a;
    if (f < r[0] || f > r[1]) fs = 0;
    f = clip(f, r[0], r[1]);
  }
  if (t) {
    t->gain = gain, t->fslope = fs;
    t->dL = fs * (gl * c + bl), t->dLdot = fs * (gv * c + bv), t->dpeak = fs * (gF * c + bF);
  }
  return f;
}

double phys_actuator_force_length(const physModel* m, const physData* d, int a, double c) {
  return phys_actuator_force_length_terms(m, d, a, c, NULL);
}

//---------------------------------------------------------------------------------------------------------
// compile-time constants

// 1 if joint j moves a body on the path from body b to the world
static int joint_moves(const physModel* m, int j, int b) {
  for (; b > 0; b = m->body_parentid[b])
    if (m->jnt_bodyid[j] == b) return 1;
  return 0;
}

// 1 if actuator a's length can depend on joint j: the joint itself, a fixed tendon's joint, or a joint above a
// body of a spatial tendon's sites and geoms or of a slider-crank's two sites
static int length_depends(const physModel* m, int a, int j) {
  int id = m->actuator_trnid[a];
  switch (m->actuator_trntype[a]) {
    case PHYS_TRN_JOINT: return id == j;
    case PHYS_TRN_SLIDERCRANK:
      return joint_moves(m, j, m->site_bodyid[id]) || joint_moves(m, j, m->site_bodyid[m->actuator_trnid2[a]]);
    case PHYS_TRN_SPRING:
      for (int k = m->spring_adr[id]; k < m->spring_adr[id] + m->spring_num[id]; k++) {
        int o = m->spring_site[k], t = m->spring_objtype[k];
        if (t == PHYS_WRAP_JOINT && o == j) return 1;
        if (t == PHYS_WRAP_SITE && joint_moves(m, j, m->site_bodyid[o])) return 1;
        if ((t == PHYS_WRAP_SPHERE || t == PHYS_WRAP_CYLINDER) && joint_moves(m, j, m->geom_bodyid[o])) return 1;
      }
      return 0;
    default: return 0;
  }
}

// actuator a's length range over the corners of the box of its joints' ranges (the joints it depends on, all
// limited hinges or slides; at most 16): lr[0] the least, lr[1] the greatest length; d's qpos is changed. -1 on
// success, else the joint that has no range
static int corner_range(const physModel* m, physData* d, int a, double lr[2]) {
  int joint[16], n = 0;
  for (int j = 0; j < m->njnt; j++) {
    if (!length_depends(m, a, j)) continue;
    if (!m->jnt_limited[j] || (m->jnt_type[j] != PHYS_JNT_HINGE && m->jnt_type[j] != PHYS_JNT_SLIDE) || n == 16) return j;
    joint[n++] = j;
  }
  lr[0] = INFINITY, lr[1] = -INFINITY;
  for (long corner = 0; corner < (1L << n); corner++) {
    memcpy(d->qpos, m->qpos0, sizeof(double) * (size_t)m->nq);
    for (int k = 0; k < n; k++) d->qpos[m->jnt_qposadr[joint[k]]] = m->jnt_range[2 * joint[k] + ((corner >> k) & 1)];
    memset(d->qvel, 0, sizeof(double) * (size_t)m->nv);
    phys_kinematics(m, d);
    phys_com_pos(m, d);
    phys_com_vel(m, d);
    phys_passive(m, d);
    double vel, len = phys_actuator_length(m, d, a, &vel);
    lr[0] = fmin(lr[0], len), lr[1] = fmax(lr[1], len);
  }
  return -1;
}

// actuator a's moment (nv, the generalized force of a unit actuator force) at d's kinematics
static void actuator_moment(const physModel* m, const physData* d, int a, double* moment) {
  int id = m->actuator_trnid[a];
  const double* gear = m->actuator_gear + 6 * a;
  memset(moment, 0, sizeof(double) * (size_t)m->nv);
  if (m->actuator_trntype[a] == PHYS_TRN_JOINT) {
    int type = m->jnt_type[id], n = type == PHYS_JNT_FREE ? 6 : (type == PHYS_JNT_BALL ? 3 : 1);
    for (int k = 0; k < n; k++) moment[m->jnt_dofadr[id] + k] = gear[k];
  } else if (m->actuator_trntype[a] == PHYS_TRN_SITE) {
    phys_site_moment(m, d, a, gear, moment);
  } else if (m->actuator_trntype[a] == PHYS_TRN_SPRING) {
    phys_spring_eval(m, d, id, NULL, -gear[0], moment);
  } else if (m->actuator_trntype[a] == PHYS_TRN_SLIDERCRANK) {
    phys_slidercrank(m, d, a, 1, moment, NULL);
  }
}

int phys_actuator_setconst(physModel* m, int* joint) {
  int any = 0;
  *joint = -1;
  for (int a = 0; a < m->nu; a++) any |= phys_actuator_muscle(m, a);
  if (!any) return -1;
  physData* d = phys_make_data(m);
  int nv = m->nv;
  double* work = malloc(sizeof(double) * ((size_t)nv * nv + 2 * (size_t)nv + 1));
  if (!d || !work) {
    phys_free_data(d);
    free(work);
    *joint = -2;
    return 0;
  }
  double *L = work, *moment = L + (size_t)nv * nv, *x = moment + nv;
  int bad = -1;
  for (int a = 0; a < m->nu && bad < 0; a++) {
    if (!phys_actuator_muscle(m, a)) continue;
    double* lr = m->actuator_lengthrange + 2 * a;
    if (!(lr[0] < lr[1]) && (*joint = corner_range(m, d, a, lr)) >= 0) bad = a;
  }
  // acc0 = |M^-1 moment| at qpos0 (MuJoCo's mj_setConst)
  memcpy(d->qpos, m->qpos0, sizeof(double) * (size_t)m->nq);
  memset(d->qvel, 0, sizeof(double) * (size_t)nv);
  phys_kinematics(m, d);
  phys_com_pos(m, d);
  phys_com_vel(m, d);
  phys_passive(m, d);
  phys_crb(m, d);
  memcpy(L, d->qM, sizeof(double) * (size_t)nv * nv);
  int ok = bad < 0 && phys_chol_factor(L, nv, 0) == nv;
  for (int a = 0; a < m->nu && ok; a++) {
    actuator_moment(m, d, a, moment);
    phys_chol_solve(x, L, moment, nv);
    double n2 = 0;
    for (int i = 0; i < nv; i++) n2 += x[i] * x[i];
    m->actuator_acc0[a] = sqrt(n2);
  }
  if (bad < 0 && !ok) *joint = -3, bad = 0;
  phys_free_data(d);
  free(work);
  return bad;
}
