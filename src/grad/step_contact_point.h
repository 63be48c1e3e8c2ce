// step_contact_point.h - the constrained step's linearization point and the kernels its derivatives share,
// private to the three files of the constrained step's derivatives (step_contact_deriv.h): the point and the
// entry points (step_contact_deriv.c), forward mode (step_contact_jvp.c), reverse mode (step_contact_vjp.c); the
// equality rows' position update (step_equality_pos_deriv.c) uses its SO(3) blocks only.
#ifndef PHYS_STEP_CONTACT_POINT_H
#define PHYS_STEP_CONTACT_POINT_H

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "collision.h"
#include "contact.h"
#include "contact_deriv.h"
#include "dyn.h"
#include "factor.h"
#include "grad.h"
#include "params.h"
#include "rot.h"
#include "step.h"
#include "step_contact_deriv.h"
#include "step_record.h"

// the linearization point: the step's stage (its contacts in det), Y, the bias branches
typedef struct contactPoint_ {
  physStepStage st;
  int nv, n, nc;
  double* Y;                 // n x nv: row c = W J_c'
  int* yr;                   // 2n: Y_c is 0 off the dofs yr[2c] .. yr[2c + 1] - 1 (its row's trees, rows_solve)
  double* vsum;              // nv: v+ + vpos, the velocity of the position update
  double* vn;                // nc: J_n v before the step
  int* bias;                 // nc: PHYS_BIAS_* (contact.h)
  double* ts;                // nc: the margin impacts' time shift sigma (phys_toi_shift; 0: none)
  double* lpe;               // n: lambda_p + s o lambda, s = -sigma_i/dt on contact i's rows: vpos = W J' lpe
  int nimp;                  // margin impacts (t* > 0): vpos moves with a position correction or one of these
  double* Jr;                // 9 per rotation group: Jr(phi)
  double* Et;                // 9 per rotation group: Exp(phi)'
  int* rot;                  // nv: rotation group block of each dof, -1 scalar
  double* acc;               // nv: the step's a+ = (v+ - v)/dt
  double* L;                 // nv x nv: the factor of M~ at the state (factor.h's storage; the stage's d->qLD,
                             // kept: d->qLD belongs to whatever runs next on d)
  physContactList det;       // the contacts the stage detected, with their impulses (st.p.con; arena memory)
  physConstraintGeom* geom;  // the contacts' geometry derivatives, once (NULL: unsupported, refused later)
  physLcpLocal *lcp, *lcp_pos;  // lcp's local structure of the main problem (model lcp, else NULL) and of the
                             // position problem (npos > 0, any model: it is lcp), built once by the
                             // linearization; a Jacobian works on copies with its products' constants
  physCcpLocal* ccp;         // cone's or ccp's local structure of the main problem (model cone or ccp, else NULL),
                             // built once by the linearization; a Jacobian running directions forward works on
                             // a copy with the forward factor
  int nkink;                 // rows on the position correction's kink (kink_position_problem)
  // products mode (lcp with its local structures): dG enters only as dG z_k for three vectors per problem
  // (phys_solve_lcp_jvp_prod) and its diagonal, so neither dG nor the n x n x nv mass terms are formed
  int prod;
  double *zv, *uv;           // 3 x n: the main problem's z_k;  3 x nv: u_k = Y' z_k
  double *zp, *up;           // the same for the position problem (NULL without one)
  struct cpAngular_* ang;    // torsional and rolling friction rows' terms of a Jacobian call (NULL: none)
} contactPoint;

//---------------------------------------------------------------------------------------------------------
// small kernels

// a . b over n values
static inline double dotn(const double* a, const double* b, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}

// y = J x (n rows of J, nv columns)
static inline void mul_j(double* y, const double* J, const double* x, int n, int nv) {
  for (int r = 0; r < n; r++) y[r] = dotn(J + (size_t)r * nv, x, nv);
}

// y (+)= J' x (n rows of J); add 0 overwrites. Four rows per pass over y (rows with x_r = 0 skipped)
static inline void mul_jt(double* y, const double* J, const double* x, int n, int nv, int add) {
  if (!add) memset(y, 0, sizeof(double) * (size_t)nv);
  int rows[4], k = 0;
  for (int r = 0; r <= n; r++) {
    if (r < n && x[r] != 0) rows[k++] = r;
    if (k == 4 || (r == n && k > 0)) {
      for (int t = k; t < 4; t++) rows[t] = rows[0];
      double x0 = x[rows[0]], x1 = k > 1 ? x[rows[1]] : 0, x2 = k > 2 ? x[rows[2]] : 0, x3 = k > 3 ? x[rows[3]] : 0;
      const double *J0 = J + (size_t)rows[0] * nv, *J1 = J + (size_t)rows[1] * nv, *J2 = J + (size_t)rows[2] * nv,
                   *J3 = J + (size_t)rows[3] * nv;
      for (int i = 0; i < nv; i++) y[i] += J0[i] * x0 + J1[i] * x1 + J2[i] * x2 + J3[i] * x3;
      k = 0;
    }
  }
}

// 1 if x (n) is all zeros
static inline int all_zero(const double* x, int n) {
  for (int i = 0; i < n; i++)
    if (x[i] != 0) return 0;
  return 1;
}

// n ints from d's arena
static inline int* arena_ints(physData* d, int n) { return (int*)phys_stack_alloc(d, (size_t)n / 2 + 1); }

// n doubles from d's arena, zeroed
static inline double* arena_zeros(physData* d, int n) {
  double* x = phys_stack_alloc(d, (size_t)n + 1);
  memset(x, 0, sizeof(double) * ((size_t)n + 1));
  return x;
}

// rot (nv: rotation group of each dof, -1 scalar), Jr and Et (9 per group) at phi = dt vsum of each ball or free
// rotation (step_contact_deriv.c; also the equality rows' position update, step_equality_pos_deriv.c)
void phys_cp_tangent_blocks(const physModel* m, const double* vsum, int* rot, double* Jr, double* Et);

// y = B x or B' x (transpose) with B the per-group blocks blk (Jr or Et), 1 on scalar dofs; y != x
static inline void apply_blocks(const physModel* m, const int* rot, const double* blk, const double* x, double* y,
                         int transpose) {
  for (int k = 0; k < m->nv; k++) {
    if (rot[k] < 0) {
      y[k] = x[k];
      continue;
    }
    const double* B = blk + 9 * rot[k];
    int g = phys_dof_group(m, k), r = k - g;
    y[k] = 0;
    for (int c = 0; c < 3; c++) y[k] += (transpose ? B[3 * c + r] : B[3 * r + c]) * x[g + c];
  }
}

// the joint frictionloss rows that stick at cp's solution (frictionloss_deriv.h): their forces tau_S (one per
// sticking dof) are unknowns of the step that keep E_S' v+ = 0. With the step's other derivatives taken at
// tau_S fixed (contact_jvp; the forces enter through a+), T = dx+/dtau_S and H = E_S' dv+/dtau_S, the implicit
// function gives dtau_S = -H^-1 E_S' dv+|tau_S and dx+ = (I - T H^-1 E_S') dx+|tau_S (E_S' on x+'s v+ rows)
typedef struct cpStick_ {
  int ns;                    // sticking rows (0: nothing to correct)
  int full;                  // 1 if H has full rank (then the sticking v+ rows are exactly 0)
  int* dof;                  // ns: their dofs
  double* T;                 // 2nv x ns: dx+/dtau_S
  double* Hi;                // ns x ns: H^-1 (pivots below 1e-12 of H's largest entry dropped: a row whose
                             // load the contacts already carry)
} cpStick;
// sf for cp, taken in d's entered state (tab: the solvers' tables of the Jacobian call or NULL; arena memory of the caller's mark)
physStatus phys_cp_stick_build(const physModel* m, physData* d, const contactPoint* cp, const void* tab,
                               cpStick* sf);
// the columns of X (2nv x ncol: dx+ at tau_S fixed) <- (I - T H^-1 E_S') X
void phys_cp_stick_columns(physData* d, const cpStick* sf, int nv, double* X, int ncol);
// an adjoint of x+ (2nv) <- (I - T H^-1 E_S')' xb
void phys_cp_stick_adjoint(physData* d, const cpStick* sf, int nv, double* xb);

// Hi (n x n) = a generalized inverse of H by elimination with complete pivoting (A: n x n scratch, piv: 2n ints,
// b: n scratch): pivots below 1e-12 of H's largest entry end it (rank r), the rest of the solution is 0; with
// full rank Hi = H^-1. Returns r.
int phys_cp_trunc_inverse(const double* H, int n, double* Hi, double* A, int* piv, double* b);

// the contacts' torsional and rolling friction rows at cp's solution (issue 16; step_contact_angular.c has the
// equations): the angular rows' impulses lambda_a (and the sticking dof rows' forces) are unknowns z of the step,
// whose other derivatives are taken at z fixed (contact_jvp, the rows' moments A(q)' lambda_a entering as the
// force dA' lambda_a / dt); each unknown has one linear condition on (dx+, dlambda_n, dz) - a sticking row
// A_i dv+ + dA_i v+ = 0, a row on its box bound dlambda_i = s_i (mu_i dlambda_n + dmu_i lambda_n), a rolling
// disk on its rim the same along its direction plus the turn of the direction with the slip - so with
// T = dx+/dz, N = dlambda_n/dz and H the conditions on (T, N, I): dz = H^+ (c0 - C(dx+|z, dlambda_n|z)),
// dx+ = dx+|z + T dz
enum { CP_ANG_STICK, CP_ANG_BOX, CP_ANG_DISK };
typedef struct cpAngular_ {
  int nz;                    // unknowns: the nd sticking dof rows' forces, the nr tendon rows' impulses, then the
                             // na angular rows' impulses
  int nd, nr, na, n0;        // n0: the first angular row's index among the friction rows
  int* dof;                  // nd: the sticking dof rows' dofs
  int* rkind;                // nr: CP_ANG_STICK (a sticking tendon row) or CP_ANG_BOX (sliding: +-F dt held)
  double* R;                 // nr x nv: the tendon rows (their moments dL/dq)
  int *kind, *axis;          // na: CP_ANG_*; the row's axis (0 torsion, 1, 2 rolling; phys_angular_axes)
  double* A;                 // na x nv: the rows
  double* w;                 // na: row velocities A v+
  double* s;                 // na: box: the bound's sign; disk: the impulse's direction component
  double* lamn;              // na: the normal impulse of the row's contact
  double* Fq;                // nv x nv: column j = dA(e_j)' lambda_a / dt (the rows' moments turning with q)
  double* C0q;               // nz x nv: the conditions' constants along e_j (-dA v+ terms)
  double* T;                 // 2nv x nz: dx+/dz
  double* N;                 // nz x nc: row b = dlambda_n/dz_b
  double* Hi;                // nz x nz: H^+ (pivots below 1e-12 of H's largest entry dropped)
  double* N0;                // nc per column: the columns' dlambda_n at z fixed, written by contact_jvp
  double* Fp;                // nv x nt: P's columns' one-sided forces (phys_cp_angular_param; NULL: none)
} cpAngular;
// ca at cp (fr->nfa > 0 or tendon rows; tab: the solvers' tables of the Jacobian call or NULL; arena memory of the caller's
// mark): the rows' labels, Fq, C0q, T, N, Hi
physStatus phys_cp_angular_build(const physModel* m, physData* d, const contactPoint* cp, const void* tab,
                                 cpAngular* ca);
// the columns of X (2nv x ncol: dx+ at z fixed, their dlambda_n in ca->N0, nc per column) corrected:
// X += T H^+ (c0 - C(X, N0)), c0 (nz x ld0: the constants of columns 0..ld0-1, the others' 0; NULL: 0)
void phys_cp_angular_columns(physData* d, const contactPoint* cp, const cpAngular* ca, double* X, int ncol,
                             const double* c0, int ld0);
// P's theta columns' terms (t's torsion: and rolling: entries; ca->nz > 0): C0p (nz x nt) the rows' dmu
// constants and Fp (nv x nt) the one-sided force of a row whose coefficient is 0 (its impulse s lambda_n dmu);
// PHYS_ERR_ARG (message in d->lastwarning) for a geometric parameter (pos:, height:, size:, vertices:), whose
// derivative of the rows' frame is not built
physStatus phys_cp_angular_param(const physModel* m, physData* d, const contactPoint* cp, const cpAngular* ca,
                                 const physParamTable* t, double* C0p, double* Fp);
// (dq+, dv+) of the step along the generalized force r (nv) at z fixed, its dlambda_n into dln (nc; may be
// NULL): contact_jvp (step_contact_jvp.c)
physStatus phys_cp_force_jvp(const physModel* m, physData* d, const contactPoint* cp, const void* tab,
                             const double* r, double* dqn, double* dvn, double* dln);
// the reverse mode with angular rows, through the Jacobians (step_contact_angular.c): xbar = A' xb, ubar =
// B' xb, theta_bar = P' xb, force_bar = F' xb (F = dx+/dforce at a+); any output may be NULL
physStatus phys_cp_angular_vjp(const physModel* m, physData* d, physConstrainedPoint* cp, const physParamTable* t,
                               const double* xb, double* xbar, double* ubar, double* theta_bar, double* force_bar);
// phys_constrained_jacobian_at with F = dx+/dforce (2nv x nv; may be NULL; angular rows only)
physStatus phys_cp_jacobian_force(const physModel* m, physData* d, physConstrainedPoint* cpp,
                                  const physParamTable* t, double* A, double* B, double* P, double* F);

// dlambda = solver_jvp(dg, dG, dmu) of the model's solver at cp's main problem (step_contact_jvp.c; cone and
// ccp on cp's local structure)
physStatus phys_cp_solver_jvp(const physModel* m, physData* d, const contactPoint* cp, const double* dg,
                              const double* dG, const double* dmu, double* dl);
// the solver's reverse mode at cp's main problem (step_contact_vjp.c; cone and ccp on cp's local structure)
physStatus phys_cp_solver_vjp(const physModel* m, physData* d, const contactPoint* cp, const double* lb, double* gb,
                              double* Gb, double* mub);

// P's size columns (the PHYS_PAR_SIZE entries of t; P 2nv x t->ntheta, its other columns untouched) by 2nv
// reverse passes at the point cp, which the Jacobian was taken at (step_contact_vjp.c)
physStatus phys_cp_size_rows(const physModel* m, physData* d, contactPoint* cp, const physParamTable* t,
                             double* P);

#endif  // PHYS_STEP_CONTACT_POINT_H
