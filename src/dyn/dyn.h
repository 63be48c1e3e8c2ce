// dyn.h - internal helpers of the dynamics layer shared by src/dyn, later layers and tests.
//
// Spatial quantities (cdof, cinert, cvel, cdof_dot) are world-aligned and taken about the WORLD ORIGIN
// (see src/math/spatial.h for the packing). Call order: phys_kinematics, phys_com_pos, phys_com_vel,
// then any of phys_crb, phys_bias_forces, phys_rnea, phys_aba, phys_regressor, phys_passive, phys_actuation.
#ifndef PHYS_DYN_H
#define PHYS_DYN_H

#include "physid.h"

// phys_com_vel's body velocities (cvel, 6 nbody) and dof-axis rates (cdof_dot, 6 nv) for any qvel (nv) from the
// axes cdof (6 nv); with a configuration tangent dq as qvel: each body's twist and each axis's derivative along dq
void phys_com_vel_of(const physModel* m, const double* cdof, const double* qvel, double* cvel, double* cdof_dot);

// last dof of body or of its nearest ancestor that has dofs (-1 if none): start of a dof_parentid walk
int phys_body_lastdof(const physModel* m, int body);
// the dofs of the chains that start at dofs a and b (either -1: none), their union (the dofs above a common
// ancestor once), descending into s (capacity nv): ancestor-closed, the dofs a row between two bodies (from
// phys_body_lastdof) can reach and its half-solve through the tree factor fills. Returns their number
int phys_chain_union(const physModel* m, int a, int b, int* s);

// the 10 inertial parameters of body about its body origin in the body frame:
// (m, m*c (3), I (xx yy zz xy xz yz)), c = body_ipos, I = R diag(body_inertia) R' + m(|c|^2 E - c c')
void phys_inertial_params(const physModel* m, int body, double pi[10]);

// jacobians of site s's position (jacp) and of its rotation (jacr), 3 x nv each (either may be NULL)
void phys_jac_site(const physModel* m, const physData* d, int s, double* jacp, double* jacr);
// jacobian of body's centre of mass (3 x nv)
void phys_jac_com(const physModel* m, const physData* d, int body, double* jacp);
// qfrc += J(point)' force + Jr' torque for a world force/torque applied at a world point of body
// (torque may be NULL)
void phys_apply_force(const physModel* m, const physData* d, double* qfrc, int body, const double point[3],
                      const double force[3], const double torque[3]);
// velocity of a world point attached to body: v = v_O + w x point (from cvel)
void phys_point_velocity(double res[3], const physData* d, int body, const double point[3]);

// length of spring s along its site path (sum of segment lengths; a fixed tendon's sum coef q), its rate
// of change (NULL to skip; needs cvel) and, if qfrc is not NULL, qfrc += -tension * dL/dq' (tension > 0 pulls the sites together)
double phys_spring_eval(const physModel* m, const physData* d, int s, double* velocity, double tension,
                        double* qfrc);

// actuator a's scalar force (passive.c, MuJoCo's affine gain and bias): with c its input (its control clamped
// to ctrlrange, or its activation act[actadr] for an actuator with dynamics) and L = gear[0] qpos, Ldot =
// gear[0] qvel of its hinge or slide joint (0 for other targets, where compile refuses g1, g2, b1, b2):
// force = (g0 + g1 L + g2 Ldot) c + b0 + b1 L + b2 Ldot, clamped to forcerange when forcelimited. The terms
// its derivatives need go to *t (may be NULL): c, slope = dc/dctrl (0 outside the range, 0 with dynamics),
// gain = g0 + g1 L + g2 Ldot, dL = dforce/dL = g1 c + b1, dLdot = dforce/dLdot = g2 c + b2 (both 0 unless g1,
// g2, b1 or b2 is nonzero), fslope = 0 when the force is clamped (slope, dL, dLdot then 0 too) else 1, dact =
// dforce/dact (gain fslope with dynamics, else 0). A muscle (gain or bias type muscle; muscle.c) fills them
// likewise with L, Ldot its length and rate (phys_actuator_length: gear[0] times its tendon's or hinge's;
// dL = dLdot = 0 where these do not move, on sites and ball or free joints), gain = its gain at (L, Ldot), dL =
// dgain/dL c + dbias/dL, dLdot = dgain/dLdot c, and dpeak = dforce/dF of its peak force F (muscle.c's
// phys_muscle_gain_deriv and phys_muscle_bias_deriv). A slider-crank's are all 0 (no derivatives: refused).
typedef struct physActuatorTerms_ {
  double c, slope, gain, dL, dLdot, fslope, dact, dpeak;
} physActuatorTerms;
double phys_actuator_force(const physModel* m, const physData* d, int a, physActuatorTerms* t);
// world force and torque (3 each) of site actuator a (PHYS_TRN_SITE) at force f: the site's rotation times
// gear[0..2] f and gear[3..5] f (MuJoCo's mjTRN_SITE wrench)
void phys_site_wrench(const physModel* m, const physData* d, int a, double f, double force[3], double torque[3]);
// moment (nv, overwritten) of site actuator a through the gear vector gear (6; the model's: actuator_gear + 6 a):
// the generalized force of a unit actuator force, Jp' R gear[0..2] + Jr' R gear[3..5] at the site
void phys_site_moment(const physModel* m, const physData* d, int a, const double gear[6], double* moment);

// world position *pos, rotation *mat and body of a sensor's frame object (physObjType body: the inertial frame,
// xbody: the body frame, geom, site; sensor.c)
void phys_object_frame(const physModel* m, const physData* d, int objtype, int id, const double** pos,
                       const double** mat, int* body);
// its world orientation as MuJoCo's framequat: the body quaternion times the object's local one
void phys_object_quat(const physModel* m, const physData* d, int objtype, int id, double q[4]);
// phys_sensor with the contacts con[0..ncon) (a step's list before d->ncon is set; phys_sensor: d's own)
void phys_sensor_list(const physModel* m, physData* d, const physContact* con, int ncon);

// MuJoCo 2.2.2's muscles (muscle.c; issue 15 items 2 and 6): with the 9 parameters prm = (range[2], force,
// scale, lmin, lmax, vmax, fpmax, fvmax), the peak force F = force, or scale / acc0 when force < 0, the optimal
// length L0 = (lr[1] - lr[0]) / (range[1] - range[0]), the normalized length l = range[0] + (len - lr[0]) / L0
// and velocity v = vel / (L0 vmax): gain = -F FL(l) FV(v) (mju_muscleGain), bias = -F FP(l) (mju_muscleBias),
// act_dot = (clip(ctrl, 0, 1) - act) / tau with tau = prm[0] (0.5 + 1.5 a) when the clipped ctrl exceeds act,
// else prm[1] / (0.5 + 1.5 a), a = clip(act, 0, 1) (mju_muscleDynamics)
double phys_muscle_gain(double len, double vel, const double lr[2], double acc0, const double prm[9]);
double phys_muscle_bias(double len, const double lr[2], double acc0, const double prm[9]);
double phys_muscle_dynamics(double ctrl, double act, const double prm[2]);
// the same with their exact derivatives (NULL to skip; the kinks' one-sided values are the branch the value
// takes, muscle.c states each): gain's dgain/dlen, dgain/dvel and dgain/dF (F the peak force); bias's
// dbias/dlen and dbias/dF; the dynamics' dact_dot/dctrl, dact_dot/dact and dact_dot/dprm[0..1]
double phys_muscle_gain_deriv(double len, double vel, const double lr[2], double acc0, const double prm[9],
                              double* dlen, double* dvel, double* dforce);
double phys_muscle_bias_deriv(double len, const double lr[2], double acc0, const double prm[9], double* dlen,
                              double* dforce);
double phys_muscle_dynamics_deriv(double ctrl, double act, const double prm[2], double* dctrl, double* dact,
                                  double dprm[2]);
// the peak force F of actuator a's muscle gain (prm[2], or prm[3] / acc0 when prm[2] < 0)
double phys_muscle_peak(const physModel* m, int a);
// slider-crank actuator a (PHYS_TRN_SLIDERCRANK) at d's kinematics: its length (gear[0] times MuJoCo 2.2.2's
// a'v - sqrt((a'v)^2 + r^2 - v'v)); its rate into *vel (may be NULL; needs cvel); qfrc += moment' f (may be NULL)
double phys_slidercrank(const physModel* m, const physData* d, int a, double f, double* qfrc, double* vel);
// actuator a's length and rate (*vel): gear[0] times a hinge's or slide's position, a tendon's length or the
// slider-crank's; 0 for other transmissions
double phys_actuator_length(const physModel* m, const physData* d, int a, double* vel);
// 1 if actuator a has muscle dynamics, gain or bias
int phys_actuator_muscle(const physModel* m, int a);
// the force of actuator a at input c (clamped ctrl or act) with MuJoCo 2.2.2's gain and bias of its length and
// velocity (muscle or affine), clamped to forcerange when forcelimited: phys_actuator_force for muscles and
// slider-cranks
double phys_actuator_force_length(const physModel* m, const physData* d, int a, double c);
// the same with its terms (physActuatorTerms' gain, dL, dLdot, fslope, dpeak; c and slope the caller's)
double phys_actuator_force_length_terms(const physModel* m, const physData* d, int a, double c, physActuatorTerms* t);
// the muscles' constants at compile time (model arrays): actuator_lengthrange where lower >= upper (physid: the
// least and greatest length over the corners of the ranges of the joints the length depends on; MuJoCo 2.2.2
// simulates the model pushed each way, mj_setLengthRange) and actuator_acc0 = |M^-1 moment| at qpos0 (mj_setConst).
// Returns -1, or the actuator whose lengthrange cannot be computed with *joint the joint without a range (-2 out
// of memory, -3 M not positive definite)
int phys_actuator_setconst(physModel* m, int* joint);

#endif  // PHYS_DYN_H
