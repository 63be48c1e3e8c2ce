// tendon_rows_deriv.h - derivatives of the tendon limit rows (src/contact/tendon_rows.c, issue 15 item 3) with
// respect to the configuration q (tangent coordinates, grad.h), for contact_deriv.c and step_contact_deriv.c: the
// last rows of a problem's nl limit rows (after the joint limits) are the active tendon limits at d's state, row
// r = sign dL/dq (sign +1 lower, -1 upper), dist = sign (L - bound), so
//   d dist = r . dq,   dJ_r = sign K dq,   K = d(dL/dq)'/dq (phys_spring_hessian; a fixed tendon's K = 0).
// The problem p is phys_constraint_assemble's at d's kinematics. Scratch from d's arena.
#ifndef PHYS_TENDON_ROWS_DERIV_H
#define PHYS_TENDON_ROWS_DERIV_H

#include "contact.h"
#include "params.h"
#include "physid.h"

// the number of tendon limit rows of p (its last ones); the tendon and side of the k-th into ten, side (may be
// NULL; capacity 2 nspring)
int phys_tendon_rows_of(const physModel* m, const physData* d, const physConstraintProblem* p, int* ten, int* side);
// the dist of row r of p, a tendon limit row (phys_tendon_rows_of > 0 and r among the last of them)
double phys_tendon_rows_dist(const physModel* m, physData* d, const physConstraintProblem* p, int r);
// forward along dq: dJ_beta[r] = (dJ_r dq) . beta, dJt_alpha += alpha_r dJ_r dq, ddist[r] = r . dq, and dJ's rows
// (n x nv) = dJ_r dq; each output may be NULL
void phys_tendon_rows_jvp(const physModel* m, physData* d, const physConstraintProblem* p, const double* dq,
                          const double* alpha, const double* beta, double* dJ_beta, double* dJt_alpha, double* ddist,
                          double* dJ);
// every direction at once: dJb_dq rows (n x nv) = beta' dJ_r/dq, dJta_dq (nv x nv) += alpha_r dJ_r/dq, ddist_dq
// rows = r (each may be NULL)
void phys_tendon_rows_jacobian(const physModel* m, physData* d, const physConstraintProblem* p, const double* alpha,
                               const double* beta, double* dJb_dq, double* dJta_dq, double* ddist_dq);
// reverse: q_bar += grad_q [ sum_r (W_r . J_r) + gamma_r dist_r ] over the tendon rows, W_r = alpha_r beta (alpha,
// beta given) or A's row r (A given), gamma may be NULL
void phys_tendon_rows_vjp(const physModel* m, physData* d, const physConstraintProblem* p, const double* alpha,
                          const double* beta, const double* A, const double* gamma, double* q_bar);

// PHYS_OK unless t has a pos:BODY parameter and p an active limit row of a spatial tendon (its row and dist move
// with the placements of the bodies its sites ride on; that derivative is not built): then PHYS_ERR_ARG with the
// message in d->lastwarning (not counted)
physStatus phys_tendon_rows_param_check(const physModel* m, physData* d, const physConstraintProblem* p,
                                        const physParamTable* t);

#endif  // PHYS_TENDON_ROWS_DERIV_H
