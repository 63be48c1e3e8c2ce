// grad.h - derivatives of the smooth dynamics and of the contact-free step (DESIGN.md sections 3-4).
//
// Tangent coordinates of the configuration (nv numbers, as mj_differentiatePos / phys_difference_pos):
// hinge and slide the joint value; ball and free rotation the body-frame rotation vector
// (q' = q * exp(dq/2), the exponential map phys_integrate_pos uses); free translation the world position.
// So q (+) eps*e_j = phys_integrate_pos(q, e_j, eps), and moving along tangent coordinate j moves every body
// after dof j rigidly by the world spatial motion cdof_j (to first order).
//
// Dof groups: a ball joint's 3 dofs, a free joint's 3 translations and its 3 rotations are groups, a hinge or
// a slide is a group of one. Dof k is "after" dof j when j is k or an ancestor of k along dof_parentid, or
// both are in one group: then moving j moves k's axis (cdof_k -> cdof_k + eps cdof_j x cdof_k; the axes of
// a ball are the columns of its body's frame, which every rotation of the ball turns). A ball (or free) joint
// must be the last joint of its body (MuJoCo's own assumption for cdof).
//
// Matrices are row-major, D[i*ncol + j] = d out_i / d in_j. Scratch comes from d's arena: nothing allocates.
// Every function needs phys_kinematics, phys_com_pos and phys_com_vel at the current state (the step
// functions run them themselves).
#ifndef PHYS_GRAD_H
#define PHYS_GRAD_H

#include "dyn.h"
#include "model.h"
#include "physid.h"
#include "physid/derivatives.h"   // the public declarations of this header's API (the compiler checks both agree)

//---------------------------------------------------------------------------------------------------------
// dof groups (rnea_deriv.c)

// first dof of k's group (k itself for hinge and slide)
int phys_dof_group(const physModel* m, int k);

//---------------------------------------------------------------------------------------------------------
// inverse dynamics (rnea_deriv.c): tau = RNEA(q, v, a) = M(q) a + c(q, v), gravity included, no armature

// dtau_dq, dtau_dv (nv x nv) of phys_rnea at qacc (NULL: zero); dtau_da = M without armature (nv x nv).
// Any output may be NULL. Carpentier & Mansard (2018) in world-aligned spatial algebra.
void phys_rnea_deriv(const physModel* m, physData* d, const double* qacc, double* dtau_dq, double* dtau_dv,
                     double* dtau_da);
// reverse mode of phys_rnea at qacc (NULL: zero): q_bar = dtau_dq' tau_bar, v_bar = dtau_dv' tau_bar,
// a_bar = M' tau_bar (nv each, any may be NULL); O(nv), no matrix formed
void phys_rnea_vjp(const physModel* m, physData* d, const double* qacc, const double* tau_bar, double* q_bar,
                   double* v_bar, double* a_bar);
// the mass matrix's derivative alone (no velocity, gravity or armature): dmx_dq (nv x nv) = d(M(q) x)/dq, and
// its reverse mode q_bar = d(bar' M(q) x)/dq (nv); the same passes as above at zero velocity, about half the cost
void phys_rnea_mass_deriv(const physModel* m, physData* d, const double* x, double* dmx_dq);
void phys_rnea_mass_vjp(const physModel* m, physData* d, const double* x, const double* bar, double* q_bar);
// g (nv) = d(x' M(q) x)/dq (= phys_rnea_mass_vjp(x, x)) from the kinetic energy's gradient: O(nbody), a fifth of
// the cost; the diagonal terms Y_r' dM Y_r of the Delassus matrix's derivative
void phys_rnea_mass_quad_grad(const physModel* m, physData* d, const double* x, double* g);
// the same on the bodies b0 .. b1 - 1, a union of whole trees, for x zero outside their dofs: g on their dofs
// only (the rest untouched; the values the whole pass gives there)
void phys_rnea_mass_quad_grad_bodies(const physModel* m, physData* d, const double* x, int b0, int b1, double* g);
// g (nv) += d<M(q), K>/dq = sum_kl K_kl dM_kl/dq for a symmetric K = sum_i c_i (a_i b_i' + b_i a_i') / 2 given
// as its nterm terms (A, B: nterm x nv, c: nterm; the first nquad are quadratic, b_i = a_i, and B's rows for
// them are not read): every quadratic and bilinear form of M in one pass per column over the bodies below it, K's entries
// read only where the pass needs them
void phys_rnea_mass_trace_grad(const physModel* m, physData* d, int nquad, int nterm, const double* A,
                                  const double* B, const double* c, double* g);

//---------------------------------------------------------------------------------------------------------
// generalized forces (passive_deriv.c): each ADDS its derivative to the given matrices (any may be NULL)

// d qfrc_passive / d(q, v, ctrl): joint springs and dampers, springs along site paths (with the rest
// lengths that PHYS_TRN_RESTLENGTH actuators move); dfdq, dfdv nv x nv, dfdu nv x nu. Works from the site
// positions and cvel alone (phys_passive need not have run).
void phys_passive_deriv(const physModel* m, physData* d, double* dfdq, double* dfdv, double* dfdu);
// d qfrc_actuator / d(q, v, ctrl): joint actuators (constant moment arms; a gain and bias affine in the
// hinge's or slide's position and velocity: position and velocity servos) and actuators on springs (moment
// arm dL/dq depends on q); dfdq, dfdv nv x nv, dfdu nv x nu. A clamped control (outside ctrlrange) has
// derivative 0.
void phys_actuation_deriv(const physModel* m, physData* d, double* dfdq, double* dfdv, double* dfdu);
// d (sum_b J_b' xfrc_applied_b) / dq, the applied world forces at the centres of mass and torques (nv x nv)
void phys_xfrc_deriv(const physModel* m, physData* d, double* dfdq);
// reverse modes of the three (no nv x nv matrix formed, O(nv) scratch): each ADDS the transposed derivative
// applied to f_bar (nv) to its outputs (any may be NULL): q_bar, v_bar (nv), u_bar (nu)
void phys_passive_vjp(const physModel* m, physData* d, const double* f_bar, double* q_bar, double* v_bar,
                      double* u_bar);
void phys_actuation_vjp(const physModel* m, physData* d, const double* f_bar, double* q_bar, double* v_bar,
                        double* u_bar);
void phys_xfrc_vjp(const physModel* m, physData* d, const double* f_bar, double* q_bar);

// spring s's length L (returned), JL = dL/dq (nv) and K = d(JL')/dq (nv x nv, K[i*nv + j] = d JL_i / d q_j) at
// d's kinematics (a wrapped path's tangent points sliding: tendon_deriv.h); scratch from d's arena
double phys_spring_hessian(const physModel* m, physData* d, int s, double* JL, double* K);

// 1 if every ball and free joint is the last joint of its body (the step derivatives' condition: cdof of a
// ball is its body's frame)
static inline int phys_grad_balls_last(const physModel* m) {
  for (int j = 0; j < m->njnt; j++) {
    int b = m->jnt_bodyid[j];
    if ((m->jnt_type[j] == PHYS_JNT_BALL || m->jnt_type[j] == PHYS_JNT_FREE) &&
        j != m->body_jntadr[b] + m->body_jntnum[b] - 1)
      return 0;
  }
  return 1;
}

// 1 if the step derivatives cover m's actuators: no rest-length actuator with dynamics (its input is ctrl
// while its activation integrates: act_deriv.h takes an actuator with dynamics's input column as its act's)
static inline int phys_grad_actuators_ok(const physModel* m) {
  for (int a = 0; a < m->nu; a++)
    if (m->actuator_trntype[a] == PHYS_TRN_RESTLENGTH && m->actuator_actadr[a] >= 0) return 0;
  return 1;
}

// slider-crank actuator a's length l (MuJoCo 2.2.2's, without the gear; muscle.c) to second order at d's
// kinematics (passive_deriv.c): JL = dl/dq (nv; the moment is gear JL), K = dJL/dq (nv x nv, row i = dof i;
// NULL to skip) and dLd = d(JL . qvel)/dq (nv; NULL to skip). A broken crank (det <= 0) takes l = a'v's
// derivatives; near det = 0+ they grow as det^(-3/2) (the dead point). Scratch 6 nv from d's arena
void phys_slidercrank_geometry(const physModel* m, physData* d, int a, double* JL, double* K, double* dLd);

//---------------------------------------------------------------------------------------------------------
// the contact-free step (step_deriv.c): x = (q tangent, v) (2nv), x+ = step(x, u). A model with actuator
// activations (na > 0: integrator and filter dynamics, issue 15 item 2) has x = (q tangent, v, act), nx = 2nv +
// na numbers, in every function below and in the rollout, parameter and control derivatives built on them
// (act_deriv.h: the act rows and columns); "2nv" below is then nx.

// A = dx+/dx (2nv x 2nv) and B = dx+/du (2nv x nu) of one phys_step at d's state (either may be NULL).
// With contacts or active joint limits and m->opt.contact lcp, cone or ccp the constrained step's derivatives
// (step_contact_deriv.h: d's contact lists only read, PHYS_ERR_ARG if a contact pair has no geometry derivative);
// penalty contact: penalty_deriv.h. PHYS_ERR_MODEL if a ball joint is not the last joint of its body,
// or !phys_grad_actuators_ok(m); PHYS_ERR_NUMERIC (a counted warning)
// if M + dt B is not positive definite. The state is not advanced; kinematics, qM, qfrc_bias, qfrc_passive,
// qfrc_actuator and qacc (the step's acceleration) are left at the state.
physStatus phys_step_jacobian(const physModel* m, physData* d, double* A, double* B);
// the complementarity-aware Jacobians for one cotangent xbar_next (2nv): with m->opt.gradflags
// PHYS_GRAD_COMPLEMENTARITY and lcp, A and B of the step with the contact labels the reverse mode picks for
// xbar_next (step_contact_deriv.h phys_constrained_aware_point), so that A' xbar_next and B' xbar_next equal
// phys_step_vjp's; *relabelled (may be NULL) 1 when those labels differ from the solver's. Otherwise (smooth or
// penalty step, another model, the flag off, the exact labels kept) phys_step_jacobian's A and B, bit for bit.
// Conditions and status as phys_step_jacobian. DDP's backward pass (src/control/ddp.c) feeds it the value
// gradient.
physStatus phys_step_jacobian_aware(const physModel* m, physData* d, const double* xbar_next, double* A, double* B,
                                    int* relabelled);
// reverse mode of the same step: given xbar_next = dL/dx+ (2nv), xbar = A' xbar_next (2nv) and
// ubar = B' xbar_next (nu); either output may be NULL. Same conditions and status as phys_step_jacobian.
physStatus phys_step_vjp(const physModel* m, physData* d, const double* xbar_next, double* xbar, double* ubar);
// phys_step_vjp that also returns lambda = M~^-1 dt (vbar+ + dt D' qbar+) (nv, may be NULL): the adjoint of
// the step's force, from which the parameter VJP follows without a second linearization
// (phys_step_param_vjp_at in params.h); d is left at the step's linearization point. For a constrained
// step lambda is the adjoint of the smooth force at a+ = (v+ - v)/dt only: its parameter VJP needs the
// contact terms too (phys_constrained_step_vjp with the table, step_contact_deriv.h); with equality rows
// (step_equality_deriv.h) lambda is left untouched
physStatus phys_step_vjp_lambda(const physModel* m, physData* d, const double* xbar_next, double* xbar,
                                double* ubar, double* lambda);
// the linearization point of the step at d's state: kinematics, qM, qfrc_bias, passive and actuator forces,
// d->qacc = M~^-1 (f - c) and L = the tree factor of M~ = M + dt B (nv x nv); the conditions and status of
// phys_step_jacobian (a constrained step, lcp/cone/ccp: d->qacc = (v+ - v)/dt, the step's acceleration)
physStatus phys_step_point(const physModel* m, physData* d, double* L);
// the finite-difference twin: A and B by central differences of phys_step with step eps in every tangent,
// velocity and control coordinate (either may be NULL). State and time are restored; the perturbed steps start
// from d's contact list (read only) and write their contacts to a list of their own;
// works with contacts too (then it differentiates whatever phys_step does). PHYS_ERR_NUMERIC if a
// perturbed step raised a warning.
physStatus phys_step_jacobian_fd(const physModel* m, physData* d, double eps, double* A, double* B);

#endif  // PHYS_GRAD_H
