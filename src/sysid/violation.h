// violation.h - paper 004's violation-based implicit loss (ContactNets, Pfrommer, Halm, Posa 2020, as used by
// Bianchini, Halm, Posa 2023 "CCN"; DESIGN.md section 5): for one observed transition (q, v) -> (q+, v+) the
// contact impulses are not simulated but inferred, as the minimizer of a convex penalty on the violation of the
// dynamics, of complementarity and of maximum dissipation; the loss is that minimum.
//
// At the next sample (q+, v+), with dt the sample spacing, qacc = (v+ - v) / dt and the model's contact
// candidates i (below) with signed distance phi_i, friction mu_i, world frame (n_i, t1_i, t2_i) and contact
// Jacobian rows J_i = [n_i; mu_i t1_i; mu_i t2_i]' Jrel(p_i) (friction folded in, so the cone is the unit one):
//
//   F      = RNEA(q+, v+, qacc) + (armature + dt b) qacc - f(q+, v+, u)      generalized force that the
//            contacts must supply over the step, M~ = M + diag(armature + dt b) as the step's (param_forces.c)
//   L(θ)   = min over lambda (3 per candidate, lambda_n_i >= |lambda_t_i|) of
//              1/2 (dt F - J' lambda)' M~^-1 (dt F - J' lambda)      dynamics in energy units (paper eq. 11-12)
//            + w_comp sum_i lambda_n_i max(phi_i, 0)^2 / dt            complementarity (dair_pll's form)
//            + w_diss sum_i (lambda_n_i |s_i|_e + lambda_t_i . s_i)    maximum dissipation, s_i = mu_i Jt_i v+
//            + eps/2 |lambda|^2                                          a tie-break (unique minimizer)
//            + w_pen sum_i min(phi_i, 0)^2                               penetration (independent of lambda)
//   |s|_e  = sqrt(|s|^2 + e^2) - e, e = 1e-9 m/s (smooth at s = 0)
//
// The loss is written as residuals for least squares, L = 1/2 |r|^2 with nv + 2 rows per transition:
//   r_pred = L_M^-1 (dt F - J' lambda*) (M~ = L_M L_M'), r_c = sqrt(2 (comp + diss + eps term)), r_pen =
//   sqrt(2 w_pen) |min(phi, 0)|, and their Jacobian of the reduced residual r(theta, lambda*(theta)): lambda*'s
//   derivative by implicit differentiation of the inner problem's optimality conditions in the active set of its
//   solution (each cone zero, inside, or on its surface: the polish's unknowns z, dz = -H_zz^-1 d(grad_z)/dtheta),
//   so J_r is exact for r_pred and r_pen away from active-set changes, and r_c's row is d(r_c^2/2)/dtheta / r_c (0
//   when r_c = 0). J_r' r is the exact gradient of L either way (the envelope theorem: the cone does not depend
//   on theta because friction is folded into J); with weights.envelope = 1 the Jacobian holds lambda* fixed (the
//   envelope Jacobian, before session 27), whose J'J over-estimates L's curvature (the Gauss-Newton model of
//   F(theta, lambda*), not of min over lambda of F, whose Hessian is a Schur complement).
//
// The velocity metric (weights.metric = W, fixed; phys_violation_metric): the dynamics term becomes
//   1/2 |P M~^-1 (dt F - J' lambda)|^2,  P = diag(sqrt(W))
// the velocity error of the transition weighted by a FIXED W instead of by M~ itself (dair_pll's
// "inertia-agnostic" loss variations). The energy term 1/2 e' M~ e (e = M~^-1 (dt F - J' lambda) the velocity
// error) vanishes as the rotational inertia goes to zero with the mass held: in flight e = the measured change of
// the angular velocity (noise), whose cost 1/2 dw' I dw is linear in I, so the energy loss has its infimum at zero
// inertia whenever the flight transitions are noisy (docs/identification.md). With W fixed the flight term does not
// depend on the inertia. The residual r_pred = P M~^-1 (dt F - J' lambda), Y = P M~^-1 J'; the rest unchanged.
//
// Contact candidates (the paper's: every corner of a box with its signed distance, touching or not): for each
// pair that phys_collision_filter admits between a plane and a box (8 corners), a sphere (1 point), a capsule
// (its 2 end spheres) or a mesh (the vertices of its convex hull, model.h's hull_vert), the points p_i on the
// non-plane geom closest to the plane; then for each admitted pair of two convex polytopes (a box, or a mesh with
// a hull), each one's vertices against the other's faces: phi = the largest n_f . x - b_f over the faces f (a
// box's 6, the hull's hull_facenormal), normal n_f of that face (exact inside and where the vertex faces one face;
// beyond an edge or a corner it under-estimates the distance and the loss has a kink where the face changes; edge
// against edge contact is not a candidate). Other pairs that can collide are refused (phys_violation_check).
//
// Parameters (phys_violation_check refuses the others with a message): the force kinds of params.h (mass, com,
// inertia, damping, armature, stiffness, gravity, gear, springs, gain, bias, kp, kv) through phys_param_forces;
// friction:GEOM (mu_i, MJCF's max rule as phys_contact_material_moves); size:GEOM of a box, sphere or capsule
// with candidates (a box's sizes move its corners and, against another polytope, its faces). Not: restitution (the loss's contact model is inelastic, as the paper's), penalty:*, pos:BODY,
// input kinds.
#ifndef PHYS_VIOLATION_H
#define PHYS_VIOLATION_H

#include "params.h"
#include "physid.h"

typedef struct physViolationWeights_ {
  double comp;    // w_comp, 1/(m s) x ... (dair_pll's complementarity term, units J per N s of impulse per m^2/s)
  double diss;    // w_diss (dimensionless: lambda . s is energy)
  double pen;     // w_pen (J/m^2)
  double eps;     // the tie-break eps (1/kg, the unit of M^-1)
  int envelope;   // 1: the residuals' Jacobian holds lambda* fixed; 0 (default): with dlambda*/dtheta (above)
  const double* metric;   // NULL (default): the dynamics term in energy units (M~^-1, above); else nv weights
                          // W_k > 0 (kg, kg m^2), held fixed: the velocity-space term 1/2 |dv_err|_W^2 (below)
} physViolationWeights;

// the default weights: comp 1, diss 0.1, pen 100, eps 1e-6 kg^-1 (s29: chosen on a validation split of the real cube
// tosses, examples/ccn/validate.sh, with the velocity metric, physFitOptions.viol_metric's default; paper 004's
// Table 2 reads 0.001, 0.1, 100 in our reading, whose comp 0.001 collapses the inertia: docs/identification.md).
// metric NULL here (the energy form): the velocity metric needs the model (phys_violation_metric)
void phys_violation_defaults(physViolationWeights* w);

// the velocity metric W (nv) of model m as loaded: the diagonal of M~ = M + diag(armature) at qpos0 (for a free
// body its mass, then its inertia's diagonal in the world frame at qpos0; for a chain, the joints' diagonal
// entries of the general mass matrix). Overwrites d's state and kinematics.
void phys_violation_metric(const physModel* m, physData* d, double* W);

// the model's contact candidates (0 when none); 8 per plane-box pair, 1 per plane-sphere, 2 per plane-capsule,
// the hull's vertex count per plane-mesh, the two vertex counts per pair of polytopes (box-box 16)
int phys_violation_ncand(const physModel* m);

// PHYS_OK if the loss can be evaluated for model m and table t: the only colliding pairs are planes against
// boxes, spheres, capsules and meshes with a hull, and boxes and such meshes against each other, no explicit <pair>, and every parameter kind is supported (see
// above); else PHYS_ERR_ARG with a message naming the pair or the parameter
physStatus phys_violation_check(const physModel* m, const physParamTable* t, physLog* log);

// what one transition's inner problem found (may be NULL)
typedef struct physViolationInfo_ {
  double loss;        // 1/2 |r|^2 of the transition
  int ncand;          // candidates (3 ncand impulses)
  int newton;         // Newton steps of the barrier solve
  double gap;         // its certified duality gap (phys_violation_socp), in the objective's units (J)
} physViolationInfo;

// residuals r (nv + 2) of one transition and, if J is not NULL, their Jacobian (nv + 2) x t->ntheta (row-major)
// as described above. d holds the next sample: qpos = q+, qvel = v+, and the interval's inputs (ctrl,
// qfrc_applied; xfrc_applied must be zero); vprev = v (nv); dt > 0. lambda (3 ncand, may be NULL) gets the
// inferred impulses (contact-major: n, t1, t2, N s; the tangential ones scaled by 1/mu as above). Scratch from
// d's arena, no allocation; deterministic. Errors: PHYS_ERR_NUMERIC (M~ not positive definite, the inner solve
// failed), PHYS_ERR_NOMEM (arena). Call phys_violation_check first.
physStatus phys_violation_residuals(const physModel* m, physData* d, const physParamTable* t, const double* vprev,
                                    double dt, const physViolationWeights* w, double* r, double* J, double* lambda,
                                    physViolationInfo* info);

// phys_violation_residuals with the inner problem's solution kept: sol (phys_violation_solsize(m) doubles: the
// impulses, the cones' classes, the certified gap, the barrier's steps); reuse 0 solves and writes the solution
// into sol; reuse 1 takes it from sol, written by an earlier call for the same model values, sample, inputs, dt
// and weights (the caller's promise: nothing checks it), and does not solve: r, J, lambda and info are then the
// same, bit for bit, as a call that solves (the Jacobian after a residual-only call at the same point: LM's
// accepted trial, fit.c). sol NULL: phys_violation_residuals
physStatus phys_violation_residuals_sol(const physModel* m, physData* d, const physParamTable* t,
                                        const double* vprev, double dt, const physViolationWeights* w, double* r,
                                        double* J, double* lambda, physViolationInfo* info, double* sol, int reuse);

// doubles of phys_violation_residuals_sol's sol for model m: 4 per candidate, 2 more
int phys_violation_solsize(const physModel* m);

// lambda* (3 ncand, as phys_violation_residuals') and its derivative dlambda (3 ncand x t->ntheta, row-major) by
// implicit differentiation in the active set of lambda* (above); dlambda is zero where that set is degenerate
// (its Hessian not positive definite) or no cone is active. Same arguments and errors as phys_violation_residuals.
physStatus phys_violation_dlambda(const physModel* m, physData* d, const physParamTable* t, const double* vprev,
                                  double dt, const physViolationWeights* w, double* lambda, double* dlambda);

// the inner problem alone, for tests: min 1/2 |Y x|^2 + eps/2 |x|^2 + g'x over nc unit Lorentz cones (x
// contact-major, n = 3 nc; Y k x n row-major, k may be 0; eps > 0); x (n) gets the minimizer. A primal
// log-barrier method, Newton steps by Woodbury on the k rows of Y (violation.c), t raised 16x until the duality
// gap bound 2 nc / t is below tol (absolute, in the objective's units) or rounding stops the centring; then an
// active-set polish (each cone zero, inside or on its surface; Newton's method in those coordinates), kept if its
// certified gap is smaller. gap gets the certified gap of the returned x: f(x) - min f <= x'y + |y - u|^2/(2 eps),
// u = Qx + g, y its projection onto the cones. Scratch from d's arena. Returns the barrier's Newton steps, or -1
// if a Newton system was not positive definite at the first centring.
int phys_violation_socp(physData* d, const double* Y, int k, double eps, const double* g, int nc, double tol,
                        double* x, double* gap);

#endif  // PHYS_VIOLATION_H
