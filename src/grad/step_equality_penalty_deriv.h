// step_equality_penalty_deriv.h - derivatives of penalty's equality spring-dampers (issue 15 item 1; the primal is
// src/step/step_equality.c phys_equality_penalty_assemble): the equality part of each solve's residual in the
// penalty step's tape (penalty_deriv.c), with respect to q, v and the parameters.
//
// Under penalty every active constraint e (rows b, J_b = dr_b/dq) is a spring-damper acting through its
// constraint-space inertia Lambda_b = G_b^+, G_b = J_b M~^-1 J_b' (M~ = M + dt B): solve k of the step's linearly
// implicit system gains, in its residual Res_k(a_k) (penalty_deriv.c),
//   E(q, v, a_k, theta) = sum_b J_b' Lambda_b y_b,   y_b = k_b r_b + c_b J_b x,   x = v + dt a_k,
// k_b, c_b = dt k_b + b_b from the constraint's solref (phys_equality_spring); H_k holds dt J' Lambda C J, the a_k
// part. Differentiated at a fixed rank of each G_b (the pseudo-inverse's derivative at constant rank,
//   dG^+ = -G^+ dG G^+ + G^+ G^+ dG (I - G G^+) + (I - G^+ G) dG G^+ G^+ for symmetric G,
// so a planar mechanism's connect, whose out-of-plane row has no lever, is covered), with
//   dG_ij = dJ_i Y_j + Y_i' dJ_j' - Y_i' dM~ Y_j,   Y = M~^-1 J' (the rows' curvature dJ from equality_deriv.h;
//   d(M~ Y_j) along q from phys_rnea_mass_deriv / _vjp, along theta R(Y_j) - R(0) of params.h),
// and the rows' own parameters (polycoef:EQ in r and J, solref:EQ in k and b; params.h).
#ifndef PHYS_STEP_EQUALITY_PENALTY_DERIV_H
#define PHYS_STEP_EQUALITY_PENALTY_DERIV_H

#include "params.h"
#include "physid.h"
#include "step.h"

// penalty's equality rows at a state (arena memory of the caller's mark)
typedef struct physEqPenaltyPoint_ {
  physEqualityRows er;   // J, r, WJ = M~^-1 J' (nv x ne) at the state
  int nb;                // constraints (blocks of rows)
  int* badr;             // nb: first row of each block
  int* bdim;             // nb: its rows
  int* beq;              // nb: its equality id
  double* kk;            // ne: the spring k of each row's constraint
  double* cc;            // ne: c = dt k + b
  double* G;             // ne x ne block-diagonal J M~^-1 J' (each block as the step forms it)
  double* L;             // ne x ne block-diagonal Lambda (each block's pseudo-inverse)
  double* D;             // ne x nv x nv: d(M(q) Y_j)/dq (forward mode; phys_equality_penalty_prepare), or NULL
} physEqPenaltyPoint;

// the point at d's kinematics (phys_kinematics, phys_com_pos, qM) through qLD, the factor of M~ (NULL without
// active rows)
physEqPenaltyPoint* phys_equality_penalty_point(const physModel* m, physData* d, const double* qLD);
// forward mode's matrices D (arena memory of the caller's mark)
void phys_equality_penalty_prepare(const physModel* m, physData* d, physEqPenaltyPoint* ep);
// r (nv) -= dE along (dq, dv) at a_k (all but the dt H_e da_k part); needs ep->D
void phys_equality_penalty_jvp(const physModel* m, physData* d, const physEqPenaltyPoint* ep, const double* ak,
                               const double* dq, const double* dv, double* r);
// reverse mode at a_k for the adjoint lam (nv): qbar -= (dE/dq)' lam, vbar -= (dE/dv)' lam and, t and tbar not
// NULL, tbar -= (dE/dtheta)' lam
void phys_equality_penalty_vjp(const physModel* m, physData* d, const physEqPenaltyPoint* ep,
                               const physParamTable* t, const double* ak, const double* lam, double* qbar,
                               double* vbar, double* tbar);

#endif  // PHYS_STEP_EQUALITY_PENALTY_DERIV_H
