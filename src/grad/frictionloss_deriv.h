// frictionloss_deriv.h - derivatives of a step whose only constraints are joint frictionloss rows (lcp, cone,
// ccp; src/contact/frictionloss.c), as a correction of the smooth step's (step_deriv.c, param_deriv.c).
//
// At the solution every row is sliding (lambda_k = s_k F_k dt, s_k = +-1: a constant generalized force s_k F_k
// on dof k) or sticking (v+_k = 0). So the step is the smooth step with the force f + E_B s F + E_S tau_S, where
// the sticking forces tau_S keep E_S' v+ = 0. Linearized at the step's own acceleration a+ (RNEA's derivatives
// at a+ are those of M~ a + c at the actual forces), dv+ = dv_smooth + K dtau_S with K = dt M~^-1 E_S, and
// E_S' dv+ = 0 fixes dtau_S: dv+ = Pi dv_smooth,  Pi = I - K K_SS^-1 E_S'  (K_SS = E_S' K, positive definite).
// The v+ rows of A, B and P are projected by Pi (the q+ rows follow from them), the reverse mode projects the
// velocity adjoint by Pi' = I - E_S K_SS^-1 K'. A sliding row's bound moves its force: dv+/dF_k = Pi dt M~^-1
// e_k s_k, i.e. R's column -s_k e_k (param_deriv.c's P = -dt M~^-1 R). A dof with F_k = 0 has no row; its
// frictionloss's right derivative is that of a row sliding against the motion, s_k = -sign(v+_k) (0 at rest: a
// small bound holds a dof that does not move). A sticking row's bound does not enter (interior).
// Under penalty the friction is a viscous force -C v+ with C = F / s,
// s = max(|v|, v_slip), implicit as the joint damping (src/contact/penalty.c): the smooth step with M~ + dt C
// (step_deriv.c's point) and the force's own derivatives, df/dv = -C - C'(v) v+ on the diagonal (C' = -F sign(v)
// / v^2 above v_slip, 0 below) and -df/dF = v+ / s (R's column); no projection. With penalty contacts or limit
// springs the same terms enter each of the penalty step's solves (penalty_deriv.c, at that solve's v+).
// Tendon frictionloss rows (issue 15 item 3; lcp, cone, ccp): a row's column is the tendon's moment r(q) = dL/dq
// instead of e_k, so E_S above holds r_a for a sticking tendon row, and two terms in q follow from r's own
// derivative K_r = d r/dq (phys_spring_hessian; 0 for a fixed tendon): the rows' forces (lambda_i/dt) r_i(q) add
// Fq = sum_i (lambda_i/dt) K_ri to df/dq (sliding and sticking rows alike), and a sticking row's condition
// r_a(q)' v+ = 0 moves with q: r_a' dv+ = -C_a dq, C_a = v+' K_ra, so dv+ = Pi dv_smooth - K K_SS^-1 C dq on A's
// q columns (phys_friction_q_term), qbar -= C' K_SS^-1 K' w in reverse (w the v+ adjoint before Pi').
#ifndef PHYS_FRICTIONLOSS_DERIV_H
#define PHYS_FRICTIONLOSS_DERIV_H

#include "contact.h"
#include "params.h"
#include "physid.h"

typedef struct physFrictionPoint_ {
  physFrictionRows fr;   // the rows at the state and their solution
  int ns;                // sticking rows
  int* sdof;             // ns: their dofs (-1: a tendon's row, its column in ES)
  double* K;             // nv x ns: dt M~^-1 E_S
  double* Kss;           // ns x ns: Cholesky factor of E_S' K
  double* ES;            // nv x ns: the sticking rows' columns E_S (e_dof or a tendon's moment dL/dq)
  double* Fq;            // nv x nv: d(sum_i lambda_i/dt r_i(q))/dq, the tendon rows' forces (NULL: fixed tendons)
  double* Cq;            // ns x nv: d(r_a(q)' v+)/dq at fixed v+ of the sticking rows (NULL as Fq)
  int* sign;             // nv: s_k of a sliding row, 0 sticking or no row
  double* dfdv;          // penalty: nv, the friction force's diagonal df/dv = -C - C' v+ (NULL: rows)
  double* rcol;          // penalty: nv, R's entry -df/dF = v+ / s of each dof (NULL: rows)
} physFrictionPoint;

// the rows at d's state with the factor L of M~ (nv x nv, factor.h) and the smooth acceleration qacc (nv),
// which becomes the step's a+ = (v+ - v)/dt (also into d->qacc). Arena memory of the caller's mark; NULL when
// m has no frictionloss row.
physFrictionPoint* phys_friction_point(const physModel* m, physData* d, const double* L, double* qacc);
// the penalty model's point at d's state and the step's acceleration qacc (phys_smooth_step_point's, with the
// friction in M~ and f); arena memory of the caller's mark
physFrictionPoint* phys_friction_point_penalty(const physModel* m, physData* d, const double* qacc);
// Gv (nv x nv, df/dv - dtau/dv) += the penalty friction's df/dv (nothing for rows or fp NULL)
void phys_friction_dfdv(const physModel* m, const physFrictionPoint* fp, double* Gv);
// v_bar += (df/dv)' lambda for the penalty friction (nothing for rows or fp NULL)
void phys_friction_dfdv_vjp(const physModel* m, const physFrictionPoint* fp, const double* lambda, double* vbar);
// the constrained step's rows fr (solved with contact or limit rows, src/step/step.c) as a point for the
// parameter columns: signs of the sliding rows (0 on sticking ones: their bound does not enter), no projection;
// NULL (and nothing allocated) if fr has no rows. Sliding rows are constant forces +-F_k on their dofs, which
// the constrained step's derivatives take in through a+ and v+; sticking rows' forces follow the state by the
// implicit function of E_S' v+ = 0 (step_contact_point.h cpStick).
physFrictionPoint* phys_friction_point_sliding(const physModel* m, physData* d, const physFrictionRows* fr);
// V (nv x ncol, row stride ld: dv+ along ncol directions) <- Pi V (its sticking rows exactly 0)
void phys_friction_project(const physModel* m, physData* d, const physFrictionPoint* fp, double* V, int ncol,
                           int ld);
// w (nv, a velocity adjoint) <- Pi' w
void phys_friction_project_t(const physModel* m, physData* d, const physFrictionPoint* fp, double* w);
// Gq (nv x nv) += Fq; qbar (nv) += Fq' lambda (tendon rows' forces; nothing without spatial tendon rows)
void phys_friction_dfdq(const physModel* m, const physFrictionPoint* fp, double* Gq);
void phys_friction_dfdq_vjp(const physModel* m, const physFrictionPoint* fp, const double* lambda, double* qbar);
// V (nv x ld, the v+ rows after phys_friction_project): its first nv columns (d/dq) -= K K_SS^-1 C; and the
// reverse, qbar (nv) -= C' K_SS^-1 K' w for the v+ adjoint w before phys_friction_project_t (nothing if no Cq)
void phys_friction_q_term(const physModel* m, physData* d, const physFrictionPoint* fp, double* V, int ld);
void phys_friction_q_term_t(const physModel* m, physData* d, const physFrictionPoint* fp, const double* w,
                            double* qbar);
// PHYS_OK unless t has a pos:BODY entry and m a spatial tendon with frictionloss (its rows' moment moves with the
// bodies' placements: not built): then PHYS_ERR_ARG with the message in d->lastwarning (not counted)
physStatus phys_friction_param_check(const physModel* m, physData* d, const physParamTable* t);
// 1 if t has a frictionloss entry
int phys_friction_in_table(const physParamTable* t);
// R (nv x t->ntheta) += the frictionloss entries' columns: -s_k e_k (rows), v+_k / s e_k (penalty); fp may be
// NULL (no rows); vnew = v+
void phys_friction_param_columns(const physModel* m, const physFrictionPoint* fp, const physParamTable* t,
                                 const double* vnew, double* R);
// theta_bar -= R's entries times lambda_k summed over each frictionloss entry's dofs (lambda = M~^-1 dt Pi' w)
void phys_friction_param_vjp(const physModel* m, const physFrictionPoint* fp, const physParamTable* t,
                             const double* vnew, const double* lambda, double* theta_bar);

#endif  // PHYS_FRICTIONLOSS_DERIV_H
