// contact_deriv.h - derivatives of the constraint problem's geometry: how the rows J of
// the contacts and joint limits (src/contact/assemble.c) and their distances change with the configuration
// q (tangent coordinates, grad.h) and with geom sizes.
//
// Row r of contact i (r = 0 normal, 1, 2 tangents; frame rows F_r of the contact):
//   J_r(q) = F_r(q)' (J_point(b1, p(q)) - J_point(b0, p(q))),  b0, b1 the bodies of geom[0], geom[1],
//   J_point(b, p)[:, j] = cdof_lin_j + cdof_ang_j x p  (j on b's chain),
// with (p, n, dist) of the contact functions of both geoms' world poses (collision/primitive_deriv.h), the
// poses functions of q (a geom moves rigidly with its body: twist = the body's spatial motion per dq), the
// tangents F_1, F_2 functions of n through phys_contact_frame (collision.h), and cdof_j of q (grad.h: moving
// dof k turns the axes of the dofs after it). The features (which corner, which end) are held fixed: at a
// feature switch these are the derivatives of the current feature. Likewise phys_contact_frame changes its
// reference axis at |n_x| = 0.8, where the tangent rows jump: the derivatives are those of the current branch.
// Limit rows are constant (+-e_dof); their dist is q - lo or hi - q.
//
// The problem p is the one phys_constraint_assemble built at d's current kinematics from the contacts p->con
// (a detection's list, p->nc of them; the rows' order as in contact.h). Scratch from d's arena; nothing
// allocates.
// Every contact's pair function is re-run at the current poses (contact_deriv.c says how a contact is found
// again); errors return PHYS_ERR_ARG with the message in d->lastwarning (not counted in d->nwarning), and
// the outputs are then unspecified.
#ifndef PHYS_CONTACT_DERIV_H
#define PHYS_CONTACT_DERIV_H

#include "contact.h"
#include "params.h"
#include "physid.h"

// forward mode along the tangent direction dq (nv): any output may be NULL
//   dJ_beta  (n)  = (dJ/dq . dq) beta            (beta nv, needed if dJ_beta)
//   dJt_alpha (nv) = (dJ/dq . dq)' alpha          (alpha n, needed if dJt_alpha)
//   ddist    (n)  = d dist / dq . dq on normal and limit rows (0 on tangent rows)
// PHYS_ERR_ARG if a contact's pair has no geometry derivative (the message names the geom types).
physStatus phys_constraint_jvp(const physModel* m, physData* d, const physConstraintProblem* p, const double* dq,
                               const double* alpha, const double* beta, double* dJ_beta, double* dJt_alpha,
                               double* ddist);

// the same for every tangent direction at once, as matrices (row-major; any may be NULL), with the geometry
// computed once (phys_constraint_jvp along e_k gives column k):
//   dJb_dq (n x nv) = d(J beta)/dq,   dJta_dq (nv x nv) = d(J' alpha)/dq,   ddist_dq (n x nv) = d dist/dq
// Cost O(ncon * geometry + nv * (nv + ncon * depth)), depth the longest chain of a contact's bodies.
physStatus phys_constraint_jacobian(const physModel* m, physData* d, const physConstraintProblem* p,
                                    const double* alpha, const double* beta, double* dJb_dq, double* dJta_dq,
                                    double* ddist_dq);

// the whole matrix dJ = (dJ/dq . dq) (n x nv, row-major; limit rows 0) along dq, the geometry computed once:
// for products with many vectors (dG = dJ Y' + Y dJ' of the Delassus matrix). O(ncon * (geometry + depth)).
physStatus phys_constraint_dJ(const physModel* m, physData* d, const physConstraintProblem* p, const double* dq,
                              double* dJ);

// reverse mode: q_bar (nv) += grad_q [ alpha' J(q) beta + gamma' dist(q) ], with alpha, gamma (n) and
// beta (nv); alpha/beta or gamma may be NULL (that term is absent). gamma's tangent entries are ignored.
physStatus phys_constraint_vjp(const physModel* m, physData* d, const physConstraintProblem* p, const double* alpha,
                               const double* beta, const double* gamma, double* q_bar);
// the same for a general weight matrix A (n x nv, row-major; may be NULL): q_bar += grad_q [ <A, J(q)> +
// gamma' dist(q) ], <A, J> = sum_rj A_rj J_rj (A = alpha beta' is phys_constraint_vjp). One call for a sum of
// many products, e.g. <G_bar, dG> = <(G_bar + G_bar') Y, dJ> of the Delassus matrix.
physStatus phys_constraint_vjp_matrix(const physModel* m, physData* d, const physConstraintProblem* p,
                                      const double* A, const double* gamma, double* q_bar);

// the same two quantities' gradient with respect to the sizes of geom g (phys_geom_nsize(type) numbers,
// collision/primitive_deriv.h): size_bar (nsize) += grad_size [ alpha' J beta + gamma' dist ]
physStatus phys_constraint_size_vjp(const physModel* m, physData* d, const physConstraintProblem* p, int g,
                                    const double* alpha, const double* beta, const double* gamma, double* size_bar);
physStatus phys_constraint_size_vjp_matrix(const physModel* m, physData* d, const physConstraintProblem* p, int g,
                                           const double* A, const double* gamma, double* size_bar);

// the angular rows of p's contacts (issue 16; contact.h phys_contact_angular_jac: A_r = F_r (J_rot(b1) -
// J_rot(b0)), 3 per contact, all three whatever the contact's friction): their derivative through the frame's
// normal and the turning dof axes, the features held as above.
// dA (3 nc x nv) = dA/dq . dq along the tangent dq, and dJ (may be NULL) as phys_constraint_dJ, from one
// computation of the geometry (dA may be NULL: phys_constraint_dJ)
physStatus phys_angular_dJ(const physModel* m, physData* d, const physConstraintProblem* p, const double* dq,
                           double* dJ, double* dA);
// q_bar (nv) += grad_q <W, A(q)> for a weight matrix W (3 nc x nv; NULL: nothing)
physStatus phys_angular_vjp_matrix(const physModel* m, physData* d, const physConstraintProblem* p, const double* W,
                                   double* q_bar);

// the contacts' geometry derivatives (each pair function re-run and differentiated) computed once for many
// directions: arena memory of the caller's mark, valid while d's kinematics and contacts stay; NULL and *st on
// failure (as phys_constraint_dJ). phys_constraint_dJ_geom is phys_constraint_dJ from it, bit for bit.
typedef struct physConstraintGeom_ physConstraintGeom;
physConstraintGeom* phys_constraint_geom(const physModel* m, physData* d, const physConstraintProblem* p,
                                         physStatus* st);
// phys_constraint_jacobian from it (g NULL: computed), bit for bit
physStatus phys_constraint_jacobian_geom(const physModel* m, physData* d, const physConstraintProblem* p,
                                         const physConstraintGeom* g, const double* alpha, const double* beta,
                                         double* dJb_dq, double* dJta_dq, double* ddist_dq);
physStatus phys_constraint_dJ_geom(const physModel* m, physData* d, const physConstraintProblem* p,
                                   const physConstraintGeom* g, const double* dq, double* dJ);

// dJ (n x nv) and ddist (n) when body's placement (body_pos, params.h pos:BODY) moves by the world translation
// t: its subtree translates rigidly by t (dof axes and geoms), like a slide joint in front of its joints.
// A welded body (no joint of its own) moves its geoms and its subtree alike.
physStatus phys_constraint_pos_dJ(const physModel* m, physData* d, const physConstraintProblem* p,
                                  const physConstraintGeom* g, int body, const double t[3], double* dJ,
                                  double* ddist);

// dJ (n x nv) and ddist (n) when geom alone moves by the world translation t (height:GEOM, issue 14 s29): only
// the contacts of geom change (its body's other geoms and every dof frame stay)
physStatus phys_constraint_geom_shift_dJ(const physModel* m, physData* d, const physConstraintProblem* p,
                                        const physConstraintGeom* g, int geom, const double t[3], double* dJ,
                                        double* ddist);
// dJ and ddist along component k of a placement entry pr: pos:BODY (phys_body_pos_direction, then
// phys_constraint_pos_dJ) or height:GEOM (the plane moves along its world normal; k = 0)
physStatus phys_constraint_place_dJ(const physModel* m, physData* d, const physConstraintProblem* p,
                                    const physConstraintGeom* g, const physParam* pr, int k, double* dJ,
                                    double* ddist);

// the world translation of body b's subtree per unit of its body_pos component k (pos:BODY, parent frame):
// column k of the parent's rotation
void phys_body_pos_direction(double tr[3], const physModel* m, const physData* d, int b, int k);

// theta_bar += grad_theta [<W, J> + gamma' dist] over the geometric entries of the parameter table t (params.h):
// size:GEOM by phys_constraint_size_vjp_matrix, pos:BODY and height:GEOM by phys_constraint_place_dJ (the
// other kinds do not move the contact geometry). W (n x nv) or gamma (n) may be NULL. Every model's reverse
// mode (constrained and penalty) adds its geometric terms to the parameters through this one call.
physStatus phys_constraint_param_vjp_matrix(const physModel* m, physData* d, const physConstraintProblem* p,
                                            const physParamTable* t, const double* W, const double* gamma,
                                            double* theta_bar);

// the contacts' geometry along the tangent dq: out (7 per contact of p->con, p->nc of them) = (d pos, d normal,
// d dist), the features held (issue 17 item 2: the pbd step's contact points, pbd_deriv.c); PHYS_ERR_ARG as
// phys_constraint_dJ
physStatus phys_constraint_geom_jvp(const physModel* m, physData* d, const physConstraintProblem* p, const double* dq,
                                    double* out);
// the same when body's subtree translates along t (world: a pos:BODY direction, phys_body_pos_direction), the
// other bodies held (pbd_deriv.c's placement columns)
physStatus phys_constraint_geom_pos_jvp(const physModel* m, physData* d, const physConstraintProblem* p, int body,
                                        const double t[3], double* out);

#endif  // PHYS_CONTACT_DERIV_H
