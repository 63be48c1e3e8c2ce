// step_record.h - what one phys_step does at a state, recorded once for its derivatives.
//
// phys_step_linearize runs the step's stages at d's state without integrating and records the kind of step
// it is (smooth; constrained, with the model's solver; penalty) with the quantities its derivatives read:
// the smooth step's factor of M~ and acceleration; the constrained step's stage (contacts with the features
// that produced them, J, G, g, the solver's solution and row states, the position problem), its warm-start
// input, M~'s factor and (lcp) the solver's local structure. Every derivative of the step (phys_step_jacobian, phys_step_vjp(_lambda),
// phys_step_point, phys_step_param_jacobian, phys_step_param_vjp, the rollout's reverse pass, the fit's
// sensitivity step) linearizes once and dispatches once on rec->kind through phys_step_record_jacobian or
// phys_step_record_vjp, which also apply the time-of-impact correction (toi.h) where the kind has it.
//
// The record lives in d's arena above the mark it takes (no malloc) and reads d's kinematic workspace, which
// it leaves at the state: it is valid until phys_step_record_free or until d's state changes. What the
// linearization factors or partitions is built once and kept in the record: M~'s factor (rec->L, not d->qLD,
// which the next stage run on d overwrites) and lcp's local structures (the labels' partition and the clamped
// system's pseudo-inverse of the velocity and position problems), which the derivatives' many reverse
// passes (P's size columns: 2nv of them) read instead of rebuilding. The step's
// hot path is not touched (phys_step fills nothing: the contact-free humanoid step stays 59.4k instructions);
// the record belongs to grad because only the derivatives need it (Y = M~^-1 J', the kink's position
// problem, the lcp's local structure are built by the linearization, never by the forward step).
#ifndef PHYS_STEP_RECORD_H
#define PHYS_STEP_RECORD_H

#include "contact.h"
#include "frictionloss_deriv.h"
#include "params.h"
#include "physid.h"

// the kind of step phys_step takes at a state (src/step/step.c)
typedef enum physStepKind_ {
  PHYS_STEP_SMOOTH = 0,    // no contact or active joint limit: a = M~^-1 (f - c), v+ = v + dt a
  PHYS_STEP_CONSTRAINED,   // lcp, cone or ccp with contacts or limits: the solver's impulse (step_contact_deriv.h)
  PHYS_STEP_PENALTY,       // penalty contact with contacts or limit springs (penalty_deriv.h)
  PHYS_STEP_IMPLICIT,      // PHYS_INT_IMPLICIT without active constraints: H a = tau - c - dt K v (implicit_deriv.c)
  PHYS_STEP_CONSTRAINED_EQ, // lcp, cone or ccp with equality rows and contacts or limits (step_equality_deriv.h)
  PHYS_STEP_PBD            // PHYS_INT_PBD: the position-based step, differentiated on complex numbers (pbd_deriv.c)
} physStepKind;

// the constrained step's linearization point (step_contact_deriv.c), opaque here
typedef struct contactPoint_ physConstrainedPoint;

typedef struct physStepRecord_ {
  physStepKind kind;
  int solver;                 // PHYS_CONTACT_* of m (the constrained step's solver)
  double* L;                  // implicit: the dense Cholesky factor of H = M + dt D + dt^2 K (chol.h; nv x nv)
                              // smooth and constrained: the tree factor of M~ = M + dt B at the state (nv x nv,
                              // factor.h's storage), which every derivative reads (never d->qLD)
  double* qacc;               // implicit: a = H^-1 (tau - c - dt K v) (nv); smooth: a = M~^-1 (f - c) (nv), with frictionloss rows the step's a+ = (v+ - v)/dt
  physFrictionPoint* fp;      // smooth: the frictionloss rows' solution (frictionloss_deriv.h), NULL without rows
  physConstrainedPoint* cp;   // constrained: the stage, contacts, row states, warm start, lcp's local structures
                              // (step_contact_deriv.h)
  struct physEqualityPoint_* eq;   // smooth or constrained_eq with equality rows (issue 15 item 1,
                              // step_equality_deriv.h): the rows, impulses and v+; smooth: qacc is then the step's
                              // (v+ - v)/dt; constrained_eq: cp is the point of the model without its rows. NULL
                              // without rows
  physWarmStart warm;         // the step's warm-start input (d's own list, or the one phys_step_linearize_warm got)
  size_t mark;                // d's arena mark before the record
} physStepRecord;

// linearize the step at d's state into rec (arena memory; release with phys_step_record_free even on
// error). PHYS_ERR_MODEL if a ball joint is not the last joint of its body, !phys_grad_actuators_ok(m) or
// the implicit integrator meets activations or equality rows,
// PHYS_ERR_NUMERIC (a counted warning) if M~ is not positive definite. d's state is left as it was, and so
// are its contact lists (the next step's warm start, read only: a constrained record holds the stage's detected contacts in arena memory);
// kinematics, qM, qfrc_bias, qfrc_passive, qfrc_actuator and qacc (the step's acceleration) are at the state.
physStatus phys_step_linearize(const physModel* m, physData* d, physStepRecord* rec);
// the same for the step from the warm-start input warm (read only, kept by pointer in rec; NULL: d's own list)
// instead of d->contact: a caller holding a state's list elsewhere (the rollout's records) linearizes the step
// phys_step_warm(warm) takes without loading the list into d
physStatus phys_step_linearize_warm(const physModel* m, physData* d, const physWarmStart* warm,
                                    physStepRecord* rec);
// release rec's arena memory
void phys_step_record_free(physData* d, physStepRecord* rec);

// A = dx+/dx (2nv x 2nv), B = dx+/du (2nv x nu), P = dx+/dtheta (2nv x t->ntheta) at rec (any may be NULL;
// t may be NULL without P), each with the time-of-impact correction when m->opt.gradflags has PHYS_GRAD_TOI
// and the kind is constrained. Status as the kinds' routines (grad.h, step_contact_deriv.h, penalty_deriv.h).
physStatus phys_step_record_jacobian(const physModel* m, physData* d, const physStepRecord* rec,
                                     const physParamTable* t, double* A, double* B, double* P);
// reverse mode at rec: xbar = A' xbar_next (2nv), ubar = B' xbar_next (nu), theta_bar = P' xbar_next
// (t->ntheta); any output may be NULL. lambda (nv, may be NULL; smooth kind without equality rows only, else left untouched):
// the smooth step's force adjoint M~^-1 dt (vbar+ + dt D' qbar+).
physStatus phys_step_record_vjp(const physModel* m, physData* d, const physStepRecord* rec,
                                const physParamTable* t, const double* xbar_next, double* xbar, double* ubar,
                                double* theta_bar, double* lambda);

// the smooth kind's derivatives at (L, qacc) (step_deriv.c, param_deriv.c), for the dispatch
physStatus phys_smooth_step_point(const physModel* m, physData* d, int kinematics_done, double* L,
                                  double* qacc);
// (fp: the frictionloss rows' projection, NULL without rows)
// vnew (nv) = v + dt (qacc + r): the smooth step's v+ at d's state, r the residual network's acceleration
void phys_smooth_step_vnew(const physModel* m, physData* d, const double* qacc, double* vnew);
void phys_smooth_step_jacobian(const physModel* m, physData* d, const double* L, const double* qacc,
                               const physFrictionPoint* fp, double* A, double* B);
// X (2nv x ncol) = d(q+, v+) / d(ncol generalized force columns F), F (nv x ncol) in X's v+ rows on entry
void phys_smooth_step_force_jacobian(const physModel* m, physData* d, const double* L, const double* qacc,
                                     const physFrictionPoint* fp, double* X, int ncol);
void phys_smooth_step_vjp(const physModel* m, physData* d, const double* L, const double* qacc,
                          const physFrictionPoint* fp, const double* xbar_next, double* xbar, double* ubar,
                          double* lambda);
void phys_smooth_step_param_jacobian(const physModel* m, physData* d, const double* L, const double* qacc,
                                     const physFrictionPoint* fp, const physParamTable* t, double* P);

// G_q = df/dq - dRNEA/dq, G_v = df/dv - dRNEA/dv at a = qacc (nv x nv each; f: passive, actuator, applied forces)
void phys_step_force_deriv(const physModel* m, physData* d, const double* qacc, double* Gq, double* Gv);
// X (2nv x ncol): the v+ rows V on entry, the q+ rows dt D V (+ E on the first nv columns if q_cols) at v+ = vnew
void phys_step_position_rows(const physModel* m, physData* d, const double* vnew, double* X, int ncol, int q_cols);

// the implicit kind (implicit_deriv.c): the point (H's factor into L, a into qacc; d's kinematics at the state
// if kinematics_done), A, B and P, and the reverse mode (the dense Jacobians transposed; lambda not written).
// PHYS_ERR_MODEL with a residual network or (P) pos:BODY parameters on a model with springs; PHYS_ERR_NUMERIC
// (a counted warning) if H is not positive definite
physStatus phys_implicit_step_point(const physModel* m, physData* d, int kinematics_done, double* L, double* qacc);
physStatus phys_implicit_step_jacobian(const physModel* m, physData* d, const double* L, const double* qacc,
                                       const physParamTable* t, double* A, double* B, double* P);
physStatus phys_implicit_step_vjp(const physModel* m, physData* d, const double* L, const double* qacc,
                                  const physParamTable* t, const double* xbar_next, double* xbar, double* ubar,
                                  double* theta_bar);

// the pbd kind (pbd_deriv.c): A, B, P at d's state (any may be NULL, P needs t) by one complex step per column,
// and the reverse mode (those Jacobians transposed). PHYS_ERR_MODEL (a data warning) for a parameter kind other
// than mass, damping, stiffness and friction; PHYS_ERR_ARG for a contact whose geometry has no derivative
// (contact_deriv.h); PHYS_ERR_NUMERIC if the step's inertia or velocity system is singular
physStatus phys_pbd_step_jacobian(const physModel* m, physData* d, const physParamTable* t, double* A, double* B,
                                  double* P);
physStatus phys_pbd_step_vjp(const physModel* m, physData* d, const physParamTable* t, const double* xbar_next,
                             double* xbar, double* ubar, double* theta_bar);

#endif  // PHYS_STEP_RECORD_H
