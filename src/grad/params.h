// params.h - the parameter table: named physical parameters theta of a model that the step can be
// differentiated with respect to (param_deriv.c) and that identification fits (DESIGN.md section 4).
//
// A table is built from specs "KIND:NAME" (the names physid identify --param takes). Kinds, target and size:
//   mass:BODY        1   body_mass; the centre of mass and the rotational inertia about it stay fixed
//   com:BODY         3   body_ipos (body frame); mass and the rotational inertia about the com stay fixed
//   inertia:BODY     10  all ten inertial parameters through the log-Cholesky map below (mass, com, inertia)
//   damping:NAME     1   joint damping (every dof of the joint), or a spring's damping if NAME is a spring
//   armature:JOINT   1   armature of every dof of the joint
//   stiffness:NAME   1   joint stiffness, or a spring's stiffness if NAME is a spring
//   restlength:SPRING 1  spring rest length
//   gravity          3   opt.gravity (NAME empty or "world")
//   gear:ACTUATOR    1, 3 or 6  actuator_gear: 1 for hinge/slide/spring targets, 3 ball, 6 free
//   friction:GEOM    1   geom_friction[0], the sliding coefficient; >= 0. Contact only: zero contact-free derivative
//   torsion:GEOM     1   geom_friction[1], the torsional coefficient (m) of condim >= 4 contacts; >= 0. Likewise
//   rolling:GEOM     1   geom_friction[2], the rolling coefficient (m) of condim 6 contacts; >= 0. Likewise. Both
//                        differentiated under penalty (penalty_deriv.c), lcp, cone and ccp (step_contact_angular.c)
//   restitution:GEOM 1   geom_restitution, in [0, 1] (contact only: likewise)
//   size:GEOM        phys_geom_nsize(type): sphere 1 (radius), capsule 2 (radius, half-length), box 3 (half
//                        sizes); > 0; geom_rbound follows. The body's mass and inertia stay as compiled (fit
//                        them with inertia:BODY). Contact only: zero contact-free derivative
//   pos:BODY         3   body_pos, the placement of the body (and of its joints) in the parent frame: link
//                        lengths. Moves the body's subtree rigidly, like a slide joint at the body frame along
//                        the parent's axes (sites and springs included). Refused for a body with a free
//                        joint (its placement is qpos)
//   penalty:stiffness 1  opt.penalty_stiffness (> 0), penalty:damping 1 opt.penalty_damping (>= 0); NAME is
//                        "stiffness" or "damping". Contact only: zero contact-free derivative
//   gain:ACTUATOR    1   actuator_gainprm[0], MuJoCo's gainprm[0]: force = (gain + g1 L + g2 Ldot) ctrl + bias
//                        + b1 L + b2 Ldot. Alone: the servo terms g1, g2, b1, b2 stay (a position servo's
//                        bias1 = -kp does not follow; fit kp:ACTUATOR for that)
//   bias:ACTUATOR    1   actuator_biasprm[0], the constant term of the force (a torque offset)
//   kp:ACTUATOR      1   a position servo's stiffness (MuJoCo <position kp>): gainprm[0] = kp and biasprm[1] =
//                        -kp together; >= 0; refused unless the actuator is one (biasprm[1] = -gainprm[0] != 0)
//   kv:ACTUATOR      1   a velocity servo's gain (<velocity kv>): gainprm[0] = kv, biasprm[2] = -kv; likewise
//                        The actuator kinds act on joint and spring (tendon) actuators, not on rest-length ones.
//   vertices:GEOM    3N  the N vertices (x, y, z in the geom frame) of a learned mesh: its collision shape is their
//                        convex hull, remade by phys_hull_rebuild at every phys_param_set (vertices off the hull
//                        have zero derivatives). The geom must be loaded as learned (physLoadOptions.vertex_geoms:
//                        a box becomes its 8 corners). The body's mass and inertia stay (fit inertia9:BODY).
//                        Contact only; derivatives for contacts with planes (the contact is a hull vertex)
//   timeconst:ACTUATOR 1 the time constant tau = dynprm[0] of an actuator with dyntype="filter" (act_dot = (ctrl -
//                        act) / tau; MuJoCo's name for it: the timeconst attribute of later versions' <position> and
//                        <velocity>); > 0; refused for other actuators. It moves act+ only (act_deriv.h), so its
//                        derivative reaches (q, v) one step later, through the activation
//   inertia9:BODY    9   the log-Cholesky parameters but alpha (d1, d2, d3, s12, s23, s13, t1, t2, t3): alpha =
//                        log(m)/2 is held at the model's mass, so every value is a consistent body of that mass
//                        (paper 004: the mass is unobservable without measured forces)
//   height:GEOM      1   a plane geom's offset along its own normal: n . geom_pos, n the plane's normal in its body
//                        frame (geom_quat's z axis); setting it moves geom_pos along n (the table's height; issue 14,
//                        s29). Contact only: zero contact-free derivative; the contact derivatives move the plane
//                        alone (its other geoms on the same body stay)
//   polycoef:EQ      5   the polynomial c0..c4 of a joint or tendon coupling (MJCF <equality><joint|tendon polycoef>,
//                        y - y0 = c0 + c1 x + ... + c4 x^4, x = x - x0): gear ratios, offsets, cam profiles; EQ the
//                        <equality> element's name. Refused for connect and weld. Differentiated in every contact
//                        model (the hard rows of lcp, cone, ccp at contact-free states; penalty's springs anywhere)
//   solref:EQ        2   the equality's solref (timeconst, dampratio), or (-stiffness, -damping): penalty's spring
//                        and damper (phys_equality_spring); the hard rows of lcp, cone and ccp ignore it (zero
//                        derivative). phys_param_set refuses solref[0] = 0 and a dampratio <= 0 with timeconst > 0
//                        (a damping > 0 with -stiffness); a timeconst below 2 dt acts as 2 dt (zero derivative)
// Input kinds (param_inputs.c): transforms of the recorded inputs of a data set, u_eff(t) = g u(t - D) + b per
// channel, the values held in the table (t->input), not in the model:
//   delay:CHANNEL    1   D >= 0 in seconds (fractional: each step receives the held recording averaged over
//                        its delayed window, param_inputs.c)
//   inputgain:CHANNEL 1  g (default 1)
//   inputbias:CHANNEL 1  b (default 0), in the channel's unit
//   CHANNEL: an actuator's name or pattern (its control), "ctrl:ACTUATOR" likewise, "uI" (control column I),
//   "tauI" (applied force of dof I), "qfrc:JOINT" (every dof of the joint, one shared value).
// A body may appear with inertia or with mass/com, not both; an actuator with one of gain, kp, kv; a spec may
// appear once. phys_param_set refuses (PHYS_ERR_VALUE) non-finite values, masses, sizes, time constants and
// penalty stiffness <= 0, negative friction, penalty damping, kp and kv, and restitution outside [0, 1].
//
// Log-Cholesky parametrization (Rucker & Wensing 2022, "Smooth parameterization of rigid-body inertia"):
// the pseudo-inertia J = [[S, h], [h', m]] (4x4), S = tr(Ibar)/2 E - Ibar, h = m c, Ibar = rotational inertia
// about the body origin, is positive definite iff the body is physically consistent (m > 0, inertia about
// the com positive definite and satisfying the triangle inequalities strictly). J = U U' with
//   U = exp(alpha) [[exp(d1), s12, s13, t1], [0, exp(d2), s23, t2], [0, 0, exp(d3), t3], [0, 0, 0, 1]],
//   theta = (alpha, d1, d2, d3, s12, s23, s13, t1, t2, t3),
// so every theta in R^10 is a consistent body. The inverse: the upper-triangular factor U of J = U U'
// (Cholesky from the bottom-right corner), alpha = log U44, d_i = log(U_ii / U44), s_ij = U_ij / U44,
// t_i = U_i4 / U44. From J back: m = J44, m c = J[0:3, 3], Ibar = tr(S) E - S.
#ifndef PHYS_PARAMS_H
#define PHYS_PARAMS_H

#include "physid.h"
#include "physid/params.h"

typedef enum physParamKind_ {
  PHYS_PAR_MASS = 0,
  PHYS_PAR_COM,
  PHYS_PAR_INERTIA,
  PHYS_PAR_DAMPING,           // joint damping
  PHYS_PAR_ARMATURE,
  PHYS_PAR_STIFFNESS,         // joint stiffness
  PHYS_PAR_GRAVITY,
  PHYS_PAR_GEAR,
  PHYS_PAR_SPRING_STIFFNESS,
  PHYS_PAR_SPRING_DAMPING,
  PHYS_PAR_SPRING_RESTLENGTH,
  PHYS_PAR_FRICTION,
  PHYS_PAR_RESTITUTION,
  PHYS_PAR_SIZE,              // geom_size entries that enter collision (phys_geom_nsize)
  PHYS_PAR_POS,               // body_pos: the joint placement in the parent (link lengths)
  PHYS_PAR_PENALTY_STIFFNESS, // opt.penalty_stiffness ("penalty:stiffness")
  PHYS_PAR_PENALTY_DAMPING,   // opt.penalty_damping ("penalty:damping")
  PHYS_PAR_FRICTIONLOSS,      // joint frictionloss (dof_frictionloss of all the joint's dofs)
  PHYS_PAR_GAIN,              // actuator_gainprm[0] ("gain:ACTUATOR")
  PHYS_PAR_BIAS,              // actuator_biasprm[0] ("bias:ACTUATOR")
  PHYS_PAR_KP,                // a position servo's kp: gainprm[0] = kp, biasprm[1] = -kp ("kp:ACTUATOR")
  PHYS_PAR_KV,                // a velocity servo's kv: gainprm[0] = kv, biasprm[2] = -kv ("kv:ACTUATOR")
  PHYS_PAR_INPUT_DELAY,       // delay of a recorded input channel, s ("delay:CHANNEL"; param_inputs.c)
  PHYS_PAR_INPUT_GAIN,        // its gain ("inputgain:CHANNEL")
  PHYS_PAR_INPUT_BIAS,        // its offset ("inputbias:CHANNEL")
  // issue 14 item 2
  PHYS_PAR_VERTICES,          // a learned mesh's vertices, geom frame ("vertices:GEOM"; model/vertices.c)
  PHYS_PAR_INERTIA9,          // log-Cholesky inertia with the mass held ("inertia9:BODY")
  // issue 15 item 2
  PHYS_PAR_TIMECONST,         // a filter actuator's time constant dynprm[0], a muscle's two dynprm[0..1]
                              // ("timeconst:ACTUATOR")
  // issue 14 (s29): the floor's height
  PHYS_PAR_HEIGHT,            // a plane's offset along its normal ("height:GEOM")
  // issue 15 item 2 (s30): the equality constraints' own data
  PHYS_PAR_POLYCOEF,          // a joint or tendon coupling's polynomial eq_data[0..4] ("polycoef:EQ")
  PHYS_PAR_SOLREF,            // an equality's solref, penalty's spring and damper ("solref:EQ")
  // issue 16 (s31): torsional and rolling friction
  PHYS_PAR_TORSION,           // geom_friction[1] ("torsion:GEOM")
  PHYS_PAR_ROLLING,           // geom_friction[2] ("rolling:GEOM")
  // issue 15 (s32): muscles
  PHYS_PAR_MUSCLE_FORCE,      // a muscle's peak force F (prm[2] of its gain and bias; "force:ACTUATOR")
  PHYS_NPARKIND
} physParamKind;

// physParam, physParamTable: include/physid/params.h (public)

// 1 if kind sets a body's inertial parameters (mass, com, inertia, inertia9)
int phys_param_is_inertial(int kind);
// 1 if kind is torsion or rolling (issue 16: contact only, differentiated under penalty)
static inline int phys_param_is_angular(int kind) { return kind == PHYS_PAR_TORSION || kind == PHYS_PAR_ROLLING; }
// 1 if kind is an input kind (delay, inputgain, inputbias)
int phys_param_is_input(int kind);
// the inputs of step `sub` after sample s of a recording (T samples at times tm; ctrl T x nu and qfrc T x nv,
// either NULL), the step [t0, t0 + h) with t0 = tm[s] + sub h, h = m->opt.timestep, as it receives them under
// t's input kinds (param_inputs.c): ctrl_out (nu, written if ctrl) and qfrc_out (nv, written if qfrc) =
// g avg + b per channel, avg the held recording averaged over [t0 - D, t0 + h - D] (the sample itself when the
// window lies in one hold interval, as with D = 0; a channel without input kinds: the sample s as is); sens
// (t->n, may be NULL) = d u_eff / d theta of each input entry (0 for the others): delay g d avg/dD, inputgain
// avg, inputbias 1
void phys_param_input_hold(const physParamTable* t, const physModel* m, const double* tm, int T, int s, int sub,
                           const double* ctrl, const double* qfrc, double* ctrl_out, double* qfrc_out,
                           double* sens);

// build t from nspec specs "KIND:NAME". NAME may be a shell-style pattern (fnmatch: *, ?, [...]) for the kinds
// mass, com, inertia, damping, armature, stiffness, restlength, gear, gain, bias, kp and kv: every named object
// that matches is one
// entry and all of them share one theta block (tied parameters; gear: the matches must have the same size).
// A pattern that matches nothing is the unknown-name error; contact kinds (friction, restitution, size, pos)
// refuse patterns (PHYS_ERR_ARG). On error PHYS_ERR_ARG with a message in log listing the valid
// kinds or names. t is zeroed first; free with phys_param_table_free (also after a failed build).
physStatus phys_param_table_build(physParamTable* t, const physModel* m, const char* const* spec, int nspec,
                                  physLog* log);
void phys_param_table_free(physParamTable* t);
// the first entry of spec i (NULL if i is out of range)
const physParam* phys_param_spec_entry(const physParamTable* t, int i);

// theta (ntheta) from the model (a tied spec: the first match's value)
void phys_param_get(const physParamTable* t, const physModel* m, double* theta);
// write theta into the model (inertia: body_mass, body_ipos, body_iquat, body_inertia by eigen-decomposition;
// body_subtreemass is updated); PHYS_ERR_VALUE if a value is not finite or a mass is not positive
physStatus phys_param_set(const physParamTable* t, physModel* m, const double* theta);
// lower and upper bounds of each theta (either may be NULL; -HUGE_VAL/HUGE_VAL when unbounded)
void phys_param_bounds(const physParamTable* t, double* lower, double* upper);

// log-Cholesky map: pi (10 inertial parameters about the body origin, phys_inertial_params's layout)
// from theta (10), and dpi/dtheta (10 x 10 row-major, may be NULL)
void phys_logchol_to_pi(double pi[10], double dpi[100], const double theta[10]);
// its inverse; returns 0 (theta untouched) if the pseudo-inertia of pi is not positive definite
int phys_pi_to_logchol(double theta[10], const double pi[10]);
// dpi/dtheta (10 x size, row-major) of an inertial entry (mass, com, inertia) at the model's values
void phys_param_dpi(const physModel* m, const physParam* p, double* dpi);

// the contact-free step's parameter Jacobian (param_deriv.c), x = (q tangent, v) as grad.h:
// P = dx+/dtheta (2nv x ntheta, row-major). Same conditions and status as phys_step_jacobian; the state is
// not advanced. Contact-only parameters (friction, restitution) have zero columns.
physStatus phys_step_param_jacobian(const physModel* m, physData* d, const physParamTable* t, double* P);
// reverse mode: theta_bar = P' xbar_next (ntheta)
physStatus phys_step_param_vjp(const physModel* m, physData* d, const physParamTable* t,
                               const double* xbar_next, double* theta_bar);
// R = d(RNEA(q, v, qacc) + (armature + dt b) qacc - f)/dtheta (nv x ntheta, row-major) at d's kinematics and
// forces and the acceleration qacc (param_forces.c; the contact-free step's R at its acceleration, the
// constrained step's at a+ and at any other qacc, the penalty step's at each solve's)
void phys_param_forces(const physModel* m, physData* d, const physParamTable* t, const double* qacc, double* R);
// theta_bar = -R(qacc)' lambda (ntheta) for a force adjoint lambda (nv)
void phys_param_forces_vjp(const physModel* m, physData* d, const physParamTable* t, const double* qacc,
                           const double* lambda, double* theta_bar);

#endif  // PHYS_PARAMS_H
