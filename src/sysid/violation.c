// violation.c - paper 004's violation-based implicit loss for one transition (violation.h has the equations).
//
// Steps of phys_violation_residuals, all at the next sample (q+, v+):
//   1. the smooth dynamics: M~ (qM with armature, + dt diag(b)), its Cholesky factor L, the generalized force
//      F the contacts must supply (RNEA at qacc = (v+ - v)/dt minus the applied forces), r0 = L^-1 dt F;
//   2. the candidates (plane against box corners, sphere, capsule ends, mesh hull vertices; polytope vertices
//      against another polytope's faces): point, frame, phi, mu, and the derivatives of point and phi in the
//      geoms' sizes; their relative point and rotation Jacobians;
//   3. the inner problem: Y = L^-1 J' (nv x 3nc), Q = Y'Y + eps I, g = -Y'r0 + c with c the complementarity and
//      dissipation coefficients; min 1/2 x'Qx + g'x over the unit cones by a log-barrier method, polished by an
//      active-set Newton method (certified gap ~1e-11 of the loss);
//   4. residuals r_pred = r0 - Y lambda, r_c, r_pen and, if asked, their Jacobian: first with lambda fixed, then
//      (unless weights.envelope) lambda's derivative added through d(J'lambda) and d(r_c^2/2) (socp_sensitivity).
// Derivative of r_pred = L^-1 w (w = dt F - J' lambda) in theta: L^-1 dw - Phi(L^-1 dM~ L^-T) r_pred, where dL =
// L Phi(L^-1 dM~ L^-T) and Phi takes the lower triangle with half the diagonal; dw = dt R(qacc) - d(J' lambda);
// the columns of dM~ from phys_param_forces: dM~ e_k = R(e_k) - R(0) (the force is affine in the acceleration).
// Contact parameters move J and phi only: friction scales the tangent rows (d(J'lambda)/dmu = Jt' lambda_t,
// ds/dmu = Jt v+); a size moves a candidate point by dp (phi by n . dp), so the point Jacobian moves by
// -[dp]x Jr: d(J'lambda) = Jr'(dp x f) with f the candidate's world impulse, ds = mu T (omega x dp).
#include <math.h>
#include <string.h>

#include "arena.h"
#include "chol.h"
#include "collision.h"
#include "dyn.h"
#include "primitive_deriv.h"
#include "resnet.h"
#include "rot.h"
#include "violation.h"

#define VIOL_SLIDE_EPS 1e-9   // e of |s|_e (m/s)
#define VIOL_GAP_REL 1e-12    // the inner solve's duality gap target: relative to 1/2 |r0|^2 (the loss at lambda = 0)
#define VIOL_NEWTON_MAX 60    // Newton steps per centring before the solve stops at its last centre
#define VIOL_REFINE 1         // iterative refinements of each Newton direction
#define VIOL_GAP_ABS 1e-24    // and absolute (J), for transitions whose r0 vanishes (noise-free flight)

void phys_violation_defaults(physViolationWeights* w) {
  w->comp = 1;
  w->diss = 1e-1;
  w->pen = 1e2;
  w->eps = 1e-6;
  w->envelope = 0;
  w->metric = NULL;
}

//---------------------------------------------------------------------------------------------------------
// candidates

// candidate points of a plane against geom g (0: the pair is not one of ours): a box's 8 corners, a sphere's 1,
// a capsule's 2 end spheres, a mesh's convex-hull vertices (0 when the mesh has no hull)
static int cand_per_pair(const physModel* m, int g) {
  switch (m->geom_type[g]) {
    case PHYS_GEOM_BOX: return 8;
    case PHYS_GEOM_SPHERE: return 1;
    case PHYS_GEOM_CAPSULE: return 2;
    case PHYS_GEOM_MESH: return m->geom_dataid[g] >= 0 ? m->mesh_hullnum[m->geom_dataid[g]] : 0;
    default: return 0;
  }
}

// vertices of geom g as a convex polytope (a box's 8 corners, a mesh's hull vertices); 0 if g is not one
static int poly_nvert(const physModel* m, int g) {
  int t = m->geom_type[g];
  return t == PHYS_GEOM_BOX || t == PHYS_GEOM_MESH ? cand_per_pair(m, g) : 0;
}

// vertex j of mesh geom g's convex hull, in the geom frame
static const double* hull_vertex(const physModel* m, int g, int j) {
  int mid = m->geom_dataid[g];
  return m->mesh_vert + 3 * (size_t)(m->mesh_vertadr[mid] + m->hull_vert[m->mesh_hulladr[mid] + j]);
}

// 1 if geoms a, b can ever touch: the filter admits them and at least one is on a moving body
static int may_collide(const physModel* m, int a, int b) {
  if (m->geom_bodyid[a] == 0 && m->geom_bodyid[b] == 0) return 0;
  return phys_collision_filter(m, a, b);
}

// candidates of the pair a < b of two convex polytopes (box or hull mesh; 0 otherwise): b's vertices against a's
// faces, then a's against b's
static int poly_pair(const physModel* m, int a, int b) {
  if (!poly_nvert(m, a) || !poly_nvert(m, b) || !may_collide(m, a, b)) return 0;
  return poly_nvert(m, a) + poly_nvert(m, b);
}

int phys_violation_ncand(const physModel* m) {
  int n = 0;
  for (int p = 0; p < m->ngeom; p++) {
    if (m->geom_type[p] != PHYS_GEOM_PLANE) continue;
    for (int g = 0; g < m->ngeom; g++)
      if (g != p && may_collide(m, p, g)) n += cand_per_pair(m, g);
  }
  for (int a = 0; a < m->ngeom; a++)
    for (int b = a + 1; b < m->ngeom; b++) n += poly_pair(m, a, b);
  return n;
}

// one candidate at the current kinematics
typedef struct vCand_ {
  int plane, geom;          // the surface (a plane, or a polytope's faces: the normal from it) and the point's geom
  double p[3];              // point on geom's surface (closest to the plane; a vertex against a polytope), world
  double frame[9];          // n, t1, t2 (rows), world
  double phi, mu;
  int nsz;                  // sizes of geom that move it (a mesh: 3, its vertex's coordinates)
  int vert;                 // a mesh's candidate: its mesh vertex (vertices:GEOM's block 3 vert), else -1
  double dp[3][3];          // dp / dsize_k (a mesh: dp / dv_k, the geom's axis k)
  double dphi[3];           // dphi / dsize_k
  double dphis[3];          // dphi / dsize_k of the surface geom (a box's faces move with its half sizes)
} vCand;

// the point of vertex j of polytope geom g (a box corner or a hull vertex), world, and (a box) its size derivatives
static void vertex_point(const physModel* m, const physData* d, int g, int j, vCand* c) {
  const double* R = d->geom_xmat + 9 * g;
  const double* x = d->geom_xpos + 3 * g;
  const double* s = m->geom_size + 3 * g;
  if (m->geom_type[g] == PHYS_GEOM_BOX) {
    double sg[3] = {(j & 1) ? 1 : -1, (j & 2) ? 1 : -1, (j & 4) ? 1 : -1};
    for (int i = 0; i < 3; i++) {
      c->p[i] = x[i];
      for (int k = 0; k < 3; k++) c->p[i] += R[3 * i + k] * sg[k] * s[k];
    }
    for (int k = 0; k < 3; k++)
      for (int i = 0; i < 3; i++) c->dp[k][i] = sg[k] * R[3 * i + k];
  } else {   // hull vertex j: no size moves it; its own coordinates do (vertices:GEOM: dp/dv_k = R's column k)
    const double* v = hull_vertex(m, g, j);
    int mid = m->geom_dataid[g];
    c->vert = m->hull_vert[m->mesh_hulladr[mid] + j];
    c->nsz = 3;
    for (int i = 0; i < 3; i++) c->p[i] = x[i] + R[3 * i] * v[0] + R[3 * i + 1] * v[1] + R[3 * i + 2] * v[2];
    for (int k = 0; k < 3; k++)
      for (int i = 0; i < 3; i++) c->dp[k][i] = R[3 * i + k];
  }
}

// the signed distance of world point p to polytope geom s as the largest of its faces' n.x - b (exact inside and
// where p faces one face; below the distance beyond an edge or a vertex), that face's outward normal n (world)
// and the derivative of the distance in s's sizes (a box: -1 for its face's axis)
static double poly_distance(const physModel* m, const physData* d, int s, const double* p, double* n,
                            double* dphis) {
  const double* R = d->geom_xmat + 9 * s;
  const double* xs = d->geom_xpos + 3 * s;
  double x[3], nl[3] = {0, 0, 0}, best = -HUGE_VAL;
  for (int k = 0; k < 3; k++)
    x[k] = R[k] * (p[0] - xs[0]) + R[3 + k] * (p[1] - xs[1]) + R[6 + k] * (p[2] - xs[2]);
  if (m->geom_type[s] == PHYS_GEOM_BOX) {
    int axis = 0;
    for (int k = 0; k < 3; k++)
      for (int sg = 1; sg >= -1; sg -= 2) {
        double v = sg * x[k] - m->geom_size[3 * s + k];
        if (v > best) best = v, axis = k, nl[0] = nl[1] = nl[2] = 0, nl[k] = sg;
      }
    dphis[axis] = -1;
  } else {
    int mid = m->geom_dataid[s];
    for (int f = 0; f < m->mesh_hullfacenum[mid]; f++) {
      const double* h = m->hull_facenormal + 4 * (size_t)(m->mesh_hullfaceadr[mid] + f);
      double v = h[0] * x[0] + h[1] * x[1] + h[2] * x[2] - h[3];
      if (v > best) best = v, nl[0] = h[0], nl[1] = h[1], nl[2] = h[2];
    }
  }
  for (int i = 0; i < 3; i++) n[i] = R[3 * i] * nl[0] + R[3 * i + 1] * nl[1] + R[3 * i + 2] * nl[2];
  return best;
}

// candidate j (< cand_per_pair) of plane pl against geom g: point, signed distance and their size derivatives
static void cand_eval(const physModel* m, const physData* d, int pl, int g, int j, vCand* c) {
  const double* Rp = d->geom_xmat + 9 * pl;
  const double* R = d->geom_xmat + 9 * g;
  const double* x = d->geom_xpos + 3 * g;
  const double* s = m->geom_size + 3 * g;
  double n[3] = {Rp[2], Rp[5], Rp[8]};
  memset(c, 0, sizeof(*c));
  c->plane = pl, c->geom = g;
  phys_contact_frame(c->frame, n);
  c->mu = fmax(m->geom_friction[3 * pl], m->geom_friction[3 * g]);
  int type = m->geom_type[g];
  c->nsz = phys_geom_nsize(type);
  c->vert = -1;
  if (type == PHYS_GEOM_BOX || type == PHYS_GEOM_MESH) {
    vertex_point(m, d, g, j, c);
  } else {
    double ctr[3] = {x[0], x[1], x[2]};
    if (type == PHYS_GEOM_CAPSULE) {   // end j: centre +- half-length along the capsule's z axis
      double sg = j ? 1 : -1;
      for (int i = 0; i < 3; i++) ctr[i] += sg * s[1] * R[3 * i + 2], c->dp[1][i] = sg * R[3 * i + 2];
    }
    for (int i = 0; i < 3; i++) c->p[i] = ctr[i] - s[0] * n[i], c->dp[0][i] = -n[i];
  }
  double rel[3] = {c->p[0] - d->geom_xpos[3 * pl], c->p[1] - d->geom_xpos[3 * pl + 1], c->p[2] - d->geom_xpos[3 * pl + 2]};
  c->phi = phys_dot3(n, rel);
  for (int k = 0; k < c->nsz; k++) c->dphi[k] = phys_dot3(n, c->dp[k]);
}

// candidate j of polytope g's vertices against polytope s's faces
static void cand_eval_poly(const physModel* m, const physData* d, int s, int g, int j, vCand* c) {
  double n[3];
  memset(c, 0, sizeof(*c));
  c->plane = s, c->geom = g;
  c->mu = fmax(m->geom_friction[3 * s], m->geom_friction[3 * g]);
  c->nsz = phys_geom_nsize(m->geom_type[g]);
  c->vert = -1;
  vertex_point(m, d, g, j, c);
  c->phi = poly_distance(m, d, s, c->p, n, c->dphis);
  phys_contact_frame(c->frame, n);
  for (int k = 0; k < c->nsz; k++) c->dphi[k] = phys_dot3(n, c->dp[k]);
}

// all candidates into c (phys_violation_ncand of them): the plane pairs, then the polytope pairs
static int cand_all(const physModel* m, const physData* d, vCand* c) {
  int n = 0;
  for (int p = 0; p < m->ngeom; p++) {
    if (m->geom_type[p] != PHYS_GEOM_PLANE) continue;
    for (int g = 0; g < m->ngeom; g++) {
      if (g == p || !may_collide(m, p, g)) continue;
      for (int j = 0; j < cand_per_pair(m, g); j++) cand_eval(m, d, p, g, j, c + n++);
    }
  }
  for (int a = 0; a < m->ngeom; a++)
    for (int b = a + 1; b < m->ngeom; b++) {
      if (!poly_pair(m, a, b)) continue;
      for (int j = 0; j < poly_nvert(m, b); j++) cand_eval_poly(m, d, a, b, j, c + n++);
      for (int j = 0; j < poly_nvert(m, a); j++) cand_eval_poly(m, d, b, a, j, c + n++);
    }
  return n;
}

// relative point (3 x nv) and rotation (3 x nv) Jacobians of candidate c: geom's body minus the plane's
static void cand_jac(const physModel* m, physData* d, const vCand* c, double* jp, double* jr) {
  int nv = m->nv, b1 = m->geom_bodyid[c->geom], b0 = m->geom_bodyid[c->plane];
  phys_jac(m, d, c->p, b1, jp, jr);
  if (b0 == 0) return;
  size_t mark = phys_stack_mark(d);
  double* jp0 = phys_stack_alloc(d, 3 * (size_t)nv);
  double* jr0 = phys_stack_alloc(d, 3 * (size_t)nv);
  phys_jac(m, d, c->p, b0, jp0, jr0);
  for (int i = 0; i < 3 * nv; i++) jp[i] -= jp0[i], jr[i] -= jr0[i];
  phys_stack_free(d, mark);
}

//---------------------------------------------------------------------------------------------------------
// checks

// 1 if geom g is in a polytope pair (its vertices against the other's faces and the other way round)
static int in_poly_pair(const physModel* m, int g) {
  for (int p = 0; p < m->ngeom; p++)
    if (p != g && poly_pair(m, p < g ? p : g, p < g ? g : p)) return 1;
  return 0;
}

// 1 if geom g has candidates (a box, sphere, capsule or convex mesh some plane may touch) or is in a polytope
// pair (its vertices and faces)
static int has_cand(const physModel* m, int g) {
  for (int p = 0; p < m->ngeom; p++) {
    if (m->geom_type[p] == PHYS_GEOM_PLANE && p != g && may_collide(m, p, g) && cand_per_pair(m, g)) return 1;
    if (p != g && poly_pair(m, p < g ? p : g, p < g ? g : p)) return 1;
  }
  return 0;
}

// 1 if plane p has candidates: some geom with them that p may touch (height:GEOM)
static int plane_has_cand(const physModel* m, int p) {
  for (int g = 0; g < m->ngeom; g++)
    if (g != p && may_collide(m, p, g) && cand_per_pair(m, g)) return 1;
  return 0;
}

physStatus phys_violation_check(const physModel* m, const physParamTable* t, physLog* log) {
  if (m->npair > 0)
    return phys_error(log, PHYS_ERR_ARG, "violation loss: explicit <pair> elements are not supported (model has %d)",
                      m->npair);
  for (int a = 0; a < m->ngeom; a++)
    for (int b = a + 1; b < m->ngeom; b++) {
      if (!may_collide(m, a, b)) continue;
      int pa = m->geom_type[a] == PHYS_GEOM_PLANE, pb = m->geom_type[b] == PHYS_GEOM_PLANE;
      if (pa != pb && cand_per_pair(m, pa ? b : a)) continue;
      if (poly_pair(m, a, b)) continue;
      return phys_error(log, PHYS_ERR_ARG, "violation loss: geoms '%s' and '%s' may collide; only a plane against a "
                        "box, sphere, capsule or mesh with a convex hull, and a box or such a mesh against another, "
                        "are supported", phys_id2name(m, "geom", a), phys_id2name(m, "geom", b));
    }
  for (int e = 0; e < t->n; e++) {
    const physParam* p = t->param + e;
    int k = p->kind;
    if ((k == PHYS_PAR_SIZE || k == PHYS_PAR_VERTICES) && !has_cand(m, p->id))
      return phys_error(log, PHYS_ERR_ARG, "violation loss: param '%s': the geom has no contact candidates (a box, "
                        "sphere, capsule or mesh that a plane may touch, or a box that may touch a box or a convex "
                        "mesh)", p->name);
    if (k == PHYS_PAR_HEIGHT && !plane_has_cand(m, p->id))
      return phys_error(log, PHYS_ERR_ARG, "violation loss: param '%s': the plane may touch no box, sphere, capsule or "
                        "mesh with a hull (no contact candidates)", p->name);
    if (k == PHYS_PAR_VERTICES && in_poly_pair(m, p->id))
      return phys_error(log, PHYS_ERR_ARG, "violation loss: param '%s': the learned shape may touch a box or a mesh; "
                        "its candidates against other polytopes are not differentiated in its vertices (planes only)",
                        p->name);
    if (k == PHYS_PAR_RESTITUTION)
      return phys_error(log, PHYS_ERR_ARG, "violation loss: param '%s': restitution does not enter the violation loss "
                        "(its contact model is inelastic, as paper 004's); fit it with a prediction loss", p->name);
    if (k == PHYS_PAR_PENALTY_STIFFNESS || k == PHYS_PAR_PENALTY_DAMPING || k == PHYS_PAR_POS || phys_param_is_angular(k) ||
        k == PHYS_PAR_FRICTIONLOSS || phys_param_is_input(k))
      return phys_error(log, PHYS_ERR_ARG, "violation loss: param '%s' is not supported by the violation loss", p->name);
  }
  return PHYS_OK;
}

//---------------------------------------------------------------------------------------------------------
// the inner problem: min 1/2 x'Qx + g'x over unit Lorentz cones, by a primal log-barrier method

// The objective's Hessian is t (Y'Y + eps I) with Y (k x n) of few rows (k = nv): each Newton system is solved by
// Woodbury, (B + t Y'Y)^-1 = B^-1 - B^-1 Y' (I/t + Y B^-1 Y')^-1 Y B^-1, where B = H_b + t eps I is block diagonal
// and H_b, the barrier's Hessian of a cone at u = (a, b), is never formed: near the cone's surface it is a huge
// rank-one matrix plus a small definite part that rounding destroys. Its inverse is explicit and well computed,
// H_b^-1 = u u' - (dd/2) diag(1, -1, -1) with dd = a^2 - |b|^2 = (a - |b|)(a + |b|), and B^-1 = K (I + c K)^-1
// with K = H_b^-1, c = t eps (K and (I + cK)^-1 commute: B^-1 is symmetric).

// dd = a^2 - |b|^2 of a cone point, computed as (a - |b|)(a + |b|); <= 0 outside or on the cone
static double cone_dd(const double* u) {
  double nb = hypot(u[1], u[2]);
  return u[0] > nb ? (u[0] - nb) * (u[0] + nb) : 0;
}

// 1 if every cone of x (nc) holds its point strictly inside
static int cones_inside(const double* x, int nc) {
  for (int i = 0; i < nc; i++)
    if (!(cone_dd(x + 3 * i) > 0)) return 0;
  return 1;
}

// the blocks of cone u: B = H_b + c I and Binv = B^-1 (3 x 3 each), from H_b's eigen-decomposition (computed
// stably, so that both are positive definite to rounding): with u = (a, beta bh), |bh| = 1, beta >= 0 and bp the
// unit vector orthogonal to bh, H_b = 2 [v1 v1' / (a + beta)^2 + v2 v2' / (a - beta)^2 + v3 v3' / dd] with
// v1 = (1, -bh)/sqrt 2... (the eigenvectors of K = H_b^-1 = u u' - (dd/2) diag(1, -1, -1): v1 = (1, bh)/sqrt 2
// with K-eigenvalue (a + beta)^2 / 2, v2 = (1, -bh)/sqrt 2 with (a - beta)^2 / 2, v3 = (0, bp) with dd / 2)
static void cone_blocks(const double* u, double c, double* B, double* Binv) {
  double beta = hypot(u[1], u[2]), bh[2] = {1, 0};
  if (beta > 0) bh[0] = u[1] / beta, bh[1] = u[2] / beta;
  double s2 = sqrt(0.5);
  double v[3][3] = {{s2, s2 * bh[0], s2 * bh[1]}, {s2, -s2 * bh[0], -s2 * bh[1]}, {0, -bh[1], bh[0]}};
  double am = u[0] - beta, ap = u[0] + beta;
  double k[3] = {0.5 * ap * ap, 0.5 * am * am, 0.5 * am * ap};   // eigenvalues of K
  memset(B, 0, 9 * sizeof(double));
  memset(Binv, 0, 9 * sizeof(double));
  for (int e = 0; e < 3; e++) {
    double lb = 1 / k[e] + c, li = k[e] / (1 + c * k[e]);
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) B[3 * i + j] += lb * v[e][i] * v[e][j], Binv[3 * i + j] += li * v[e][i] * v[e][j];
  }
}

// y = blockdiag(M) x for 3 x 3 blocks M (nc of them)
static void block_apply(const double* M, const double* x, int nc, double* y) {
  for (int i = 0; i < nc; i++)
    for (int a = 0; a < 3; a++) {
      double v = 0;
      for (int b = 0; b < 3; b++) v += M[9 * i + 3 * a + b] * x[3 * i + b];
      y[3 * i + a] = v;
    }
}

// Newton system work at one point: blocks, W = B^-1 Y' (n x k), the factor of S = I/t + Y W (k x k)
typedef struct vNewton_ {
  const double* Y;
  int k, nc;
  double t;
  double *B, *Binv, *W, *S, *z, *yk, *hx, *yx;
} vNewton;

// factor the system at x; 0 if S is not positive definite
static int newton_factor(vNewton* nw, const double* x, double eps) {
  int n = 3 * nw->nc, k = nw->k;
  for (int i = 0; i < nw->nc; i++) cone_blocks(x + 3 * i, nw->t * eps, nw->B + 9 * i, nw->Binv + 9 * i);
  for (int r = 0; r < k; r++)
    for (int i = 0; i < nw->nc; i++)
      for (int a = 0; a < 3; a++) {
        double v = 0;
        for (int b = 0; b < 3; b++) v += nw->Binv[9 * i + 3 * a + b] * nw->Y[(size_t)r * n + 3 * i + b];
        nw->W[(size_t)(3 * i + a) * k + r] = v;
      }
  for (int r = 0; r < k; r++)
    for (int q = 0; q < k; q++) {
      double v = r == q ? 1 / nw->t : 0;
      for (int j = 0; j < n; j++) v += nw->Y[(size_t)r * n + j] * nw->W[(size_t)j * k + q];
      nw->S[r * k + q] = v;
    }
  return k == 0 || phys_chol_factor(nw->S, k, 0) == k;
}

// dx = (B + t Y'Y)^-1 rhs by Woodbury: B^-1 rhs - W S^-1 Y B^-1 rhs
static void newton_solve(vNewton* nw, const double* rhs, double* dx) {
  int n = 3 * nw->nc, k = nw->k;
  block_apply(nw->Binv, rhs, nw->nc, nw->z);
  for (int r = 0; r < k; r++) {
    double v = 0;
    for (int j = 0; j < n; j++) v += nw->Y[(size_t)r * n + j] * nw->z[j];
    nw->yk[r] = v;
  }
  if (k > 0) phys_chol_solve(nw->yk, nw->S, nw->yk, k);
  for (int j = 0; j < n; j++) {
    double v = nw->z[j];
    for (int r = 0; r < k; r++) v -= nw->W[(size_t)j * k + r] * nw->yk[r];
    dx[j] = v;
  }
}

// hx = (B + t Y'Y) x
static void newton_apply(vNewton* nw, const double* x) {
  int n = 3 * nw->nc, k = nw->k;
  block_apply(nw->B, x, nw->nc, nw->hx);
  for (int r = 0; r < k; r++) {
    double v = 0;
    for (int j = 0; j < n; j++) v += nw->Y[(size_t)r * n + j] * x[j];
    nw->yx[r] = v;
  }
  for (int j = 0; j < n; j++)
    for (int r = 0; r < k; r++) nw->hx[j] += nw->t * nw->Y[(size_t)r * n + j] * nw->yx[r];
}

// Newton steps on the barrier problem at t (damped Newton for a self-concordant function: the full step once
// the decrement's root < 1/4, else 1 / (1 + root); halved should rounding leave the cones) until the decrement
// is below 1e-12. Each direction is refined once against the system (Woodbury loses digits where t Y'Y dominates
// B) and the decrement is dx' H dx, a sum of positive terms. Returns the steps, or -1 if a system failed.
static int newton_center(const double* Y, int k, double eps, const double* g, int nc, double t, double* x,
                         double* work) {
  int n = 3 * nc, steps = 0;
  vNewton nw = {Y, k, nc, t, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
  double *grad = work, *dx = grad + n, *xt = dx + n, *res = xt + n, *cor = res + n;
  nw.B = cor + n, nw.Binv = nw.B + 9 * nc, nw.W = nw.Binv + 9 * nc, nw.S = nw.W + (size_t)n * k;
  nw.z = nw.S + (size_t)k * k, nw.hx = nw.z + n, nw.yk = nw.hx + n, nw.yx = nw.yk + k;
  double prev = HUGE_VAL;
  for (int it = 0; it < VIOL_NEWTON_MAX; it++) {
    for (int r = 0; r < k; r++) {
      double v = 0;
      for (int j = 0; j < n; j++) v += Y[(size_t)r * n + j] * x[j];
      nw.yx[r] = v;
    }
    for (int j = 0; j < n; j++) {
      double v = eps * x[j] + g[j];
      for (int r = 0; r < k; r++) v += Y[(size_t)r * n + j] * nw.yx[r];
      grad[j] = t * v;
    }
    for (int i = 0; i < nc; i++) {   // barrier gradient -(2a, -2b)/dd
      const double* u = x + 3 * i;
      double dd = cone_dd(u);
      grad[3 * i] -= 2 * u[0] / dd;
      grad[3 * i + 1] += 2 * u[1] / dd;
      grad[3 * i + 2] += 2 * u[2] / dd;
    }
    if (!newton_factor(&nw, x, eps)) return -1;
    for (int j = 0; j < n; j++) res[j] = -grad[j];
    newton_solve(&nw, res, dx);
    for (int ref = 0; ref < VIOL_REFINE; ref++) {
      newton_apply(&nw, dx);
      for (int j = 0; j < n; j++) res[j] = -grad[j] - nw.hx[j];
      newton_solve(&nw, res, cor);
      for (int j = 0; j < n; j++) dx[j] += cor[j];
    }
    newton_apply(&nw, dx);
    double dec = 0;
    for (int j = 0; j < n; j++) dec += dx[j] * nw.hx[j];
    steps++;
    if (!(dec >= 0)) return -1;
    // converged, or at rounding's floor: a small decrement that no longer halves per full step
    if (dec < 1e-12 || (dec < 1e-6 && dec > 0.5 * prev)) break;
    prev = dec;
    double a = dec < 0.0625 ? 1 : 1 / (1 + sqrt(dec));
    for (int ls = 0; ls < 60; ls++, a *= 0.5) {
      for (int j = 0; j < n; j++) xt[j] = x[j] + a * dx[j];
      if (cones_inside(xt, nc)) break;
    }
    memcpy(x, xt, sizeof(double) * (size_t)n);
    if (it == VIOL_NEWTON_MAX - 1) return -1;   // not centred: rounding has taken over
  }
  return steps;
}

// u = Q x + g = Y'(Y x) + eps x + g (n = 3 nc); yx (k) scratch
static void socp_grad(const double* Y, int k, double eps, const double* g, int n, const double* x, double* yx,
                      double* u) {
  for (int r = 0; r < k; r++) {
    double v = 0;
    for (int j = 0; j < n; j++) v += Y[(size_t)r * n + j] * x[j];
    yx[r] = v;
  }
  for (int j = 0; j < n; j++) {
    double v = eps * x[j] + g[j];
    for (int r = 0; r < k; r++) v += Y[(size_t)r * n + j] * yx[r];
    u[j] = v;
  }
}

// a certified duality gap of x (in the cones): f(x) - f* <= x'y + |y - u|^2 / (2 eps) with u = Qx + g and y its
// projection onto the (self-dual) cones. (The dual of min f over K is max over y in K of -1/2 (y - g)'Q^-1 (y - g);
// at y = u + delta the difference f(x) - dual(y) is x'y + 1/2 delta'Q^-1 delta, and Q >= eps I.) u is overwritten.
static double socp_cert_gap(const double* x, double* u, int nc, double eps) {
  double xy = 0, dd = 0;
  for (int i = 0; i < nc; i++) {
    double* z = u + 3 * i;
    double nb = hypot(z[1], z[2]), y[3] = {z[0], z[1], z[2]};
    if (nb > z[0]) {
      if (nb <= -z[0]) y[0] = y[1] = y[2] = 0;
      else {
        double a = 0.5 * (z[0] + nb);
        y[0] = a, y[1] = a * z[1] / nb, y[2] = a * z[2] / nb;
      }
    }
    for (int a = 0; a < 3; a++) xy += x[3 * i + a] * y[a], dd += (y[a] - z[a]) * (y[a] - z[a]);
  }
  return fmax(xy, 0) + dd / (2 * eps);
}

// The polish of the barrier's last centre (socp_polish): an active-set Newton method on the cones' classes,
// 0 zero (x_i = 0), 3 inside (x_i free) or 2 on the surface, x_i = r (1, cos a, sin a).
#define VIOL_POLISH_CLASS 1e-4    // zero: |x_i| below this of the solution's scale (and relatively below its u_i)
#define VIOL_POLISH_INSIDE 1e-3   // inside: x_n - |x_t| above this of x_n (the centres approach only active surfaces)
#define VIOL_POLISH_ROUNDS 4      // class changes tried

typedef struct vPolish_ {
  const double* Y;
  int k, nc, nz;
  double eps;
  const double* g;
  double *cls, *u, *yx, *z, *Jz, *YJ, *H, *gz;
  int* col0;
} vPolish;

// x (3 nc) and dx/dz (Jz) at the unknowns z of the classes
static void polish_point(vPolish* pp, double* x) {
  memset(x, 0, sizeof(double) * 3 * (size_t)pp->nc);
  memset(pp->Jz, 0, sizeof(double) * 3 * (size_t)pp->nz);
  for (int i = 0; i < pp->nc; i++) {
    int c = pp->col0[i];
    double *xi = x + 3 * i, *J = pp->Jz + 3 * c, *z = pp->z + c;
    if (pp->cls[i] == 3)
      for (int a = 0; a < 3; a++) xi[a] = z[a], J[3 * a + a] = 1;
    if (pp->cls[i] == 2) {
      double r = z[0], ca = cos(z[1]), sa = sin(z[1]);
      xi[0] = r, xi[1] = r * ca, xi[2] = r * sa;
      J[0] = 1, J[1] = ca, J[2] = sa, J[4] = -r * sa, J[5] = r * ca;
    }
  }
}

// at the classes' unknowns z: x (3 nc), u = Qx + g, the gradient gz = Jz'u and the lower triangle of the Hessian
// H = (Y Jz)'(Y Jz) + eps Jz'Jz + the surface's curvature u'd2x/dz2 (d2x/da2 = -r (0, cos a, sin a), d2x/dr da =
// (0, -sin a, cos a))
static void polish_hessian(vPolish* pp, double* x) {
  int n = 3 * pp->nc, k = pp->k, nz = pp->nz;
  polish_point(pp, x);
  socp_grad(pp->Y, k, pp->eps, pp->g, n, x, pp->yx, pp->u);
  for (int i = 0; i < pp->nc; i++)
    for (int q = 0; q < (int)pp->cls[i]; q++) {
      int c = pp->col0[i] + q;
      const double* J = pp->Jz + 3 * c;
      pp->gz[c] = J[0] * pp->u[3 * i] + J[1] * pp->u[3 * i + 1] + J[2] * pp->u[3 * i + 2];
      for (int r = 0; r < k; r++) {
        const double* y = pp->Y + (size_t)r * n + 3 * i;
        pp->YJ[(size_t)r * nz + c] = y[0] * J[0] + y[1] * J[1] + y[2] * J[2];
      }
    }
  for (int a = 0; a < nz; a++)
    for (int b = 0; b <= a; b++) {
      double v = 0;
      for (int r = 0; r < k; r++) v += pp->YJ[(size_t)r * nz + a] * pp->YJ[(size_t)r * nz + b];
      pp->H[(size_t)a * nz + b] = v;
    }
  for (int i = 0; i < pp->nc; i++) {
    int c = pp->col0[i], m = (int)pp->cls[i];
    for (int q = 0; q < m; q++)
      for (int p = 0; p <= q; p++) pp->H[(size_t)(c + q) * nz + c + p] += pp->eps * phys_dot3(pp->Jz + 3 * (c + q),
                                                                                            pp->Jz + 3 * (c + p));
    if (m == 2) {
      double ca = cos(pp->z[c + 1]), sa = sin(pp->z[c + 1]);
      const double* ui = pp->u + 3 * i;
      pp->H[(size_t)(c + 1) * nz + c + 1] -= pp->z[c] * (ca * ui[1] + sa * ui[2]);
      pp->H[(size_t)(c + 1) * nz + c] += -sa * ui[1] + ca * ui[2];
    }
  }
}

// one Newton step on f(x(z)) (polish_hessian); returns the step's largest entry relative to z's, or -1 if the
// Hessian is not positive definite
static double polish_newton(vPolish* pp, double* x) {
  int nz = pp->nz;
  polish_hessian(pp, x);
  if (phys_chol_factor(pp->H, nz, 0) != nz) return -1;
  phys_chol_solve(pp->gz, pp->H, pp->gz, nz);
  double step = 0, size = 0;
  for (int c = 0; c < nz; c++) pp->z[c] -= pp->gz[c], step = fmax(step, fabs(pp->gz[c])), size = fmax(size, fabs(pp->z[c]));
  return size > 0 ? step / size : 0;
}

// the unknowns of the classes from the point x0 (nz and col0 set)
static void polish_start(vPolish* pp, const double* x0) {
  int c = 0;
  for (int i = 0; i < pp->nc; i++) {
    const double* xi = x0 + 3 * i;
    pp->col0[i] = c;
    if (pp->cls[i] == 3) pp->z[c] = xi[0], pp->z[c + 1] = xi[1], pp->z[c + 2] = xi[2];
    if (pp->cls[i] == 2) pp->z[c] = 0.5 * (xi[0] + hypot(xi[1], xi[2])), pp->z[c + 1] = atan2(xi[2], xi[1]);
    c += (int)pp->cls[i];
  }
  pp->nz = c;
}

// after Newton: the point xp in the cones (a surface cone's x_n no smaller than its computed |x_t|); 1 if no class
// had to change, else the changes for the next round: a surface cone with r < 0 becomes zero, an inside cone
// that left the cone a surface one
static int polish_settle(vPolish* pp, double* xp) {
  int same = 1;
  for (int i = 0; i < pp->nc; i++) {
    double *xi = xp + 3 * i, *z = pp->z + pp->col0[i];
    if (pp->cls[i] == 2) {
      if (z[0] < 0) pp->cls[i] = 0, same = 0;
      xi[1] = z[0] * cos(z[1]), xi[2] = z[0] * sin(z[1]);
      xi[0] = fmax(z[0], hypot(xi[1], xi[2]));
    } else if (pp->cls[i] == 3 && !(cone_dd(xi) > 0)) {
      pp->cls[i] = 2, same = 0;
    }
  }
  return same;
}

// Polish of the barrier's last centre x (in/out; gap its certified gap, in/out): classes from x and u = Qx + g
// (the barrier's dual estimate), Newton's method in the classes' unknowns for up to 8 steps from x, the class
// changes of polish_settle and again (VIOL_POLISH_ROUNDS rounds); the polished point replaces x only if it lies
// in the cones with an unchanged class and its certified gap is smaller. qmax: the largest diagonal of Q.
static void socp_polish(physData* d, const double* Y, int k, double eps, const double* g, int nc, double qmax,
                        double* x, double* gap, double* cls) {
  int n = 3 * nc;
  size_t mark = phys_stack_mark(d);
  vPolish pp = {Y, k, nc, 0, eps, g, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
  pp.cls = phys_stack_alloc(d, (size_t)nc);
  pp.u = phys_stack_alloc(d, (size_t)n);
  pp.yx = phys_stack_alloc(d, (size_t)k + 1);
  pp.col0 = (int*)phys_stack_alloc(d, ((size_t)nc * sizeof(int) + 7) / 8);
  double* xp = phys_stack_alloc(d, (size_t)n);
  socp_grad(Y, k, eps, g, n, x, pp.yx, pp.u);
  double xs = 0, us = 0;
  for (int i = 0; i < nc; i++) xs = fmax(xs, phys_norm3(x + 3 * i)), us = fmax(us, phys_norm3(pp.u + 3 * i));
  xs = fmax(xs, us / qmax);   // no smaller than the unconstrained minimizer's scale (all cones zero in flight)
  for (int i = 0; i < nc && us > 0; i++) {
    const double* xi = x + 3 * i;
    double ax = phys_norm3(xi) / xs, au = phys_norm3(pp.u + 3 * i) / us;
    pp.cls[i] = ax < VIOL_POLISH_CLASS && ax < au ? 0 : xi[0] - hypot(xi[1], xi[2]) > VIOL_POLISH_INSIDE * xi[0] ? 3 : 2;
  }
  if (cls)   // the classes of x as kept: the centre's, replaced below by the polish's if its point is kept
    for (int i = 0; i < nc; i++) cls[i] = us > 0 ? pp.cls[i] : 0;
  size_t rmark = phys_stack_mark(d);
  for (int round = 0; round < VIOL_POLISH_ROUNDS && us > 0; round++) {
    phys_stack_free(d, rmark);   // the last round's unknowns; this round's sized by its classes
    int nz = 0;
    for (int i = 0; i < nc; i++) nz += (int)pp.cls[i];
    pp.z = phys_stack_alloc(d, (size_t)nz + 1);
    pp.Jz = phys_stack_alloc(d, 3 * (size_t)nz + 1);
    pp.YJ = phys_stack_alloc(d, (size_t)k * nz + 1);
    pp.H = phys_stack_alloc(d, (size_t)nz * nz + 1);
    pp.gz = phys_stack_alloc(d, (size_t)nz + 1);
    polish_start(&pp, x);
    double step = 1;
    for (int it = 0; it < 8 && step > 1e-15; it++) step = polish_newton(&pp, xp);
    if (step < 0) {   // not positive definite: the surface cone with the smallest r (likely a zero one) to zero
      int low = -1;
      for (int i = 0; i < nc; i++)
        if (pp.cls[i] == 2 && (low < 0 || phys_norm3(x + 3 * i) < phys_norm3(x + 3 * low))) low = i;
      if (low < 0) break;
      pp.cls[low] = 0;
      continue;
    }
    polish_point(&pp, xp);
    if (!polish_settle(&pp, xp)) continue;
    socp_grad(Y, k, eps, g, n, xp, pp.yx, pp.u);
    double gp = socp_cert_gap(xp, pp.u, nc, eps);
    if (gp < *gap) {
      memcpy(x, xp, sizeof(double) * (size_t)n), *gap = gp;
      if (cls) memcpy(cls, pp.cls, sizeof(double) * (size_t)nc);
      break;
    }
    // not better: the zero cones whose u_i is outside the (dual) cone are active, on the surface
    int moved = 0;
    for (int i = 0; i < nc; i++)
      if (pp.cls[i] == 0 && hypot(pp.u[3 * i + 1], pp.u[3 * i + 2]) > pp.u[3 * i]) pp.cls[i] = 2, moved = 1;
    if (!moved) break;
  }
  phys_stack_free(d, mark);
}

// phys_violation_socp, and (cls (nc) not NULL) the cones' classes at the returned x as the polish classes them
// (0 zero, 3 inside, 2 surface; all 0 when the minimizer is 0)
static int socp_solve(physData* d, const double* Y, int k, double eps, const double* g, int nc, double tol,
                      double* x, double* gap, double* cls) {
  int n = 3 * nc;
  if (cls) memset(cls, 0, sizeof(double) * (size_t)nc);
  double gmax = 0, qmax = eps;
  for (int j = 0; j < n; j++) {
    double q = eps;
    for (int r = 0; r < k; r++) q += Y[(size_t)r * n + j] * Y[(size_t)r * n + j];
    gmax = fmax(gmax, fabs(g[j])), qmax = fmax(qmax, q);
  }
  memset(x, 0, sizeof(double) * (size_t)n);
  *gap = 0;
  if (nc == 0 || gmax == 0) return 0;   // the minimizer is 0
  size_t mark = phys_stack_mark(d);
  double* work = phys_stack_alloc(d, (size_t)n * (8 + (size_t)k) + 18 * (size_t)nc + (size_t)k * (k + 2) + 1);
  // start on the cones' axes at the scale of the unconstrained minimizer, t balancing the two terms
  double x0 = gmax / qmax;
  for (int i = 0; i < nc; i++) x[3 * i] = x0;
  double t = 1 / (gmax * x0);
  double* xc = work + (size_t)n * (7 + (size_t)k) + 18 * (size_t)nc + (size_t)k * (k + 2);   // last centre
  int steps = 0;
  for (int outer = 0; outer < 400; outer++) {
    int s = newton_center(Y, k, eps, g, nc, t, x, work);
    if (s < 0) {   // keep the last centre and its gap (none yet: failure)
      if (outer == 0) steps = -1;
      memcpy(x, xc, sizeof(double) * (size_t)n);
      break;
    }
    steps += s;
    memcpy(xc, x, sizeof(double) * (size_t)n);
    *gap = 2.0 * nc / t;
    if (*gap <= tol) break;
    t *= 16;
  }
  if (steps >= 0) {   // the certified gap of the last centre, then the polish
    double* u = work;
    socp_grad(Y, k, eps, g, n, x, work + n, u);
    *gap = socp_cert_gap(x, u, nc, eps);
    socp_polish(d, Y, k, eps, g, nc, qmax, x, gap, cls);
  }
  phys_stack_free(d, mark);
  return steps;
}

int phys_violation_socp(physData* d, const double* Y, int k, double eps, const double* g, int nc, double tol,
                        double* x, double* gap) {
  return socp_solve(d, Y, k, eps, g, nc, tol, x, gap, NULL);
}

// The minimizer's derivative by implicit differentiation of the optimality conditions: with the cones in the
// classes cls (nc) of x, x* = x(z*) where the unknowns z* solve Jz'u(x(z), theta) = 0 (u = Qx + g), so dz =
// -H^-1 Jz' du and dx = Jz dz, H the polish's Hessian at x (polish_hessian) and du (n x nt, row-major) the
// derivative of u in theta at fixed x. dx (n x nt, row-major) gets dx*/dtheta; returns 1, or 0 with dx zero (the
// envelope's choice) when H is not positive definite (a degenerate active set) or no cone is active.
static int socp_sensitivity(physData* d, const double* Y, int k, double eps, const double* g, int nc,
                            const double* cls, const double* x, const double* du, int nt, double* dx) {
  int n = 3 * nc, nz = 0;
  memset(dx, 0, sizeof(double) * (size_t)n * nt);
  for (int i = 0; i < nc; i++) nz += (int)cls[i];
  if (nz == 0) return 0;
  size_t mark = phys_stack_mark(d);
  vPolish pp = {Y, k, nc, 0, eps, g, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
  pp.cls = phys_stack_alloc(d, (size_t)nc);
  memcpy(pp.cls, cls, sizeof(double) * (size_t)nc);
  pp.u = phys_stack_alloc(d, (size_t)n);
  pp.yx = phys_stack_alloc(d, (size_t)k + 1);
  pp.col0 = (int*)phys_stack_alloc(d, ((size_t)nc * sizeof(int) + 7) / 8);
  pp.z = phys_stack_alloc(d, (size_t)nz);
  pp.Jz = phys_stack_alloc(d, 3 * (size_t)nz);
  pp.YJ = phys_stack_alloc(d, (size_t)k * nz + 1);
  pp.H = phys_stack_alloc(d, (size_t)nz * nz);
  pp.gz = phys_stack_alloc(d, (size_t)nz);
  double* xp = phys_stack_alloc(d, (size_t)n);
  polish_start(&pp, x);
  polish_hessian(&pp, xp);
  int ok = phys_chol_factor(pp.H, nz, 0) == nz;
  for (int j = 0; j < nt && ok; j++) {
    for (int i = 0; i < nc; i++)
      for (int q = 0; q < (int)cls[i]; q++) {
        int c = pp.col0[i] + q;
        const double* J = pp.Jz + 3 * c;
        const double* u = du + (size_t)3 * i * nt + j;
        pp.gz[c] = J[0] * u[0] + J[1] * u[nt] + J[2] * u[2 * (size_t)nt];
      }
    phys_chol_solve(pp.gz, pp.H, pp.gz, nz);
    for (int i = 0; i < nc; i++)
      for (int q = 0; q < (int)cls[i]; q++) {
        int c = pp.col0[i] + q;
        for (int a = 0; a < 3; a++) dx[(size_t)(3 * i + a) * nt + j] -= pp.Jz[3 * c + a] * pp.gz[c];
      }
  }
  phys_stack_free(d, mark);
  return ok;
}

//---------------------------------------------------------------------------------------------------------
// one transition

// x = L^-1 b (L lower, n x n row-major); x may alias b
static void lsolve(const double* L, double* x, const double* b, int n) {
  for (int i = 0; i < n; i++) {
    double s = b[i];
    for (int k = 0; k < i; k++) s -= L[(size_t)i * n + k] * x[k];
    x[i] = s / L[(size_t)i * n + i];
  }
}

// x = L^-T b (L lower, n x n row-major); x may alias b
static void ltsolve(const double* L, double* x, const double* b, int n) {
  for (int i = n - 1; i >= 0; i--) {
    double s = b[i];
    for (int k = i + 1; k < n; k++) s -= L[(size_t)k * n + i] * x[k];
    x[i] = s / L[(size_t)i * n + i];
  }
}

// x = T b, the map of the dynamics residual (violation.h): L^-1 b (energy; P NULL) or P M~^-1 b = P L^-T L^-1 b
// (velocity metric, P = sqrt(W)); x may alias b
static void tmap(const double* L, const double* P, double* x, const double* b, int n) {
  lsolve(L, x, b, n);
  if (!P) return;
  ltsolve(L, x, x, n);
  for (int i = 0; i < n; i++) x[i] *= P[i];
}

// x = M~^-1 b = L^-T L^-1 b; x may alias b
static void msolve(const double* L, double* x, const double* b, int n) {
  lsolve(L, x, b, n);
  ltsolve(L, x, x, n);
}

// |s|_e = sqrt(|s|^2 + e^2) - e of a tangent vector s (2)
static double slide_norm(const double s[2]) {
  return sqrt(s[0] * s[0] + s[1] * s[1] + VIOL_SLIDE_EPS * VIOL_SLIDE_EPS) - VIOL_SLIDE_EPS;
}

// the smooth part: F (nv) and M~ (nv x nv) at d's state (q+, v+) and acceleration qacc; d's kinematics computed
static void smooth_force(const physModel* m, physData* d, const double* qacc, double dt, double* F, double* Mt) {
  int nv = m->nv;
  int implicit = !(m->opt.disableflags & PHYS_DSBL_EULERDAMP);
  phys_kinematics(m, d);
  phys_com_pos(m, d);
  phys_com_vel(m, d);
  phys_crb(m, d);
  phys_passive(m, d);
  phys_actuation(m, d);
  phys_rnea(m, d, qacc, F);
  memcpy(Mt, d->qM, sizeof(double) * (size_t)nv * nv);
  for (int i = 0; i < nv; i++) {
    double b = implicit ? dt * m->dof_damping[i] : 0;
    F[i] += (m->dof_armature[i] + b) * qacc[i] - d->qfrc_passive[i] - d->qfrc_actuator[i] - d->qfrc_applied[i];
    Mt[(size_t)i * nv + i] += b;
  }
}

void phys_violation_metric(const physModel* m, physData* d, double* W) {
  int nv = m->nv;
  memcpy(d->qpos, m->qpos0, sizeof(double) * (size_t)m->nq);
  memset(d->qvel, 0, sizeof(double) * (size_t)nv);
  phys_kinematics(m, d);
  phys_com_pos(m, d);
  phys_crb(m, d);
  for (int i = 0; i < nv; i++) W[i] = d->qM[(size_t)i * nv + i] + m->dof_armature[i];
}

// the parameters' effect on the smooth part: dwF = dt dF/dtheta at qacc (nv x nt) and dM~ (nv x nv x nt, entry
// [(i nv + k) nt + j] = dM~_ik / dtheta_j); zero when no parameter is a force kind
static void smooth_param(const physModel* m, physData* d, const physParamTable* t, const double* qacc, double dt,
                         double* dwF, double* dM) {
  int nv = m->nv, nt = t->ntheta, force = 0;
  for (int e = 0; e < t->n; e++)
    if (t->param[e].kind != PHYS_PAR_FRICTION && t->param[e].kind != PHYS_PAR_SIZE && !phys_param_is_angular(t->param[e].kind) &&
        t->param[e].kind != PHYS_PAR_VERTICES && t->param[e].kind != PHYS_PAR_HEIGHT)
      force = 1;
  memset(dwF, 0, sizeof(double) * (size_t)nv * nt);
  memset(dM, 0, sizeof(double) * (size_t)nv * nv * nt);
  if (!force) return;
  size_t mark = phys_stack_mark(d);
  double* R0 = phys_stack_alloc(d, (size_t)nv * nt);
  double* Rk = phys_stack_alloc(d, (size_t)nv * nt);
  double* a = phys_stack_alloc(d, (size_t)nv);
  phys_param_forces(m, d, t, qacc, dwF);
  for (int i = 0; i < nv * nt; i++) dwF[i] *= dt;
  memset(a, 0, sizeof(double) * (size_t)nv);
  phys_param_forces(m, d, t, a, R0);
  for (int k = 0; k < nv; k++) {
    a[k] = 1;
    phys_param_forces(m, d, t, a, Rk);
    a[k] = 0;
    for (int i = 0; i < nv; i++)
      for (int j = 0; j < nt; j++)
        dM[((size_t)i * nv + k) * nt + j] = Rk[(size_t)i * nt + j] - R0[(size_t)i * nt + j];
  }
  phys_stack_free(d, mark);
}

// the contact parameters' columns: dJl (nv x nt) += d(J' lambda)/dtheta, dxc (nt) += d(comp + diss)/dtheta,
// dpen (nt) += d(pen)/dtheta, for candidate c with impulse l (3), Jacobians jp, jr (3 x nv), slide s (2) and the
// unscaled tangent velocity st = T v+ (2). If dC is not NULL, for the minimizer's derivative: dC (3 x nt) gets the
// derivative of the candidate's coefficients c (g = -Y'r0 + c: comp and diss terms, lambda's coefficients) and
// dJa (3 x nt) that of its scaled rows J_i applied to the generalized vector va (nv), both zeroed first.
static void contact_param(const physModel* m, const physParamTable* t, const vCand* c, const double* l,
                          const double* jp, const double* jr, const double* vnext, const double s[2], const double st[2],
                          double dt, const physViolationWeights* w, double* dJl, double* dxc, double* dpen,
                          const double* va, double* dC, double* dJa) {
  int nv = m->nv, nt = t->ntheta;
  double oa[3] = {0, 0, 0};   // the rotation velocity of va
  if (dC) {
    memset(dC, 0, sizeof(double) * 3 * (size_t)nt);
    memset(dJa, 0, sizeof(double) * 3 * (size_t)nt);
    for (int i = 0; i < 3; i++)
      for (int k = 0; k < nv; k++) oa[i] += jr[i * nv + k] * va[k];
  }
  const double* n = c->frame;
  double sn = slide_norm(s), se = sn + VIOL_SLIDE_EPS;
  double phip = fmax(c->phi, 0), phim = fmin(c->phi, 0);
  for (int e = 0; e < t->n; e++) {
    const physParam* p = t->param + e;
    if (p->kind == PHYS_PAR_FRICTION) {
      physContact pc;
      memset(&pc, 0, sizeof(pc));
      pc.geom[0] = c->plane, pc.geom[1] = c->geom, pc.pair = -1, pc.mu = c->mu;
      if (!phys_contact_material_moves(m, &pc, p->id, 0)) continue;
      // J' lambda has mu (Jt' lambda_t): d/dmu = Jt' lambda_t; s = mu st: ds/dmu = st
      for (int k = 0; k < nv; k++) {
        double v = 0;
        for (int i = 0; i < 3; i++) v += (c->frame[3 + i] * l[1] + c->frame[6 + i] * l[2]) * jp[i * nv + k];
        dJl[(size_t)k * nt + p->adr] += v;
      }
      double dsn = (s[0] * st[0] + s[1] * st[1]) / se;
      dxc[p->adr] += w->diss * (l[0] * dsn + l[1] * st[0] + l[2] * st[1]);
      if (dC) {   // c = w_diss (|s|_e, s); the rows mu t_a' Jp: d/dmu = t_a' Jp
        dC[p->adr] += w->diss * dsn, dC[nt + p->adr] += w->diss * st[0], dC[2 * nt + p->adr] += w->diss * st[1];
        for (int a = 1; a < 3; a++) {
          double v = 0;
          for (int i = 0; i < 3; i++)
            for (int k = 0; k < nv; k++) v += c->frame[3 * a + i] * jp[i * nv + k] * va[k];
          dJa[a * nt + p->adr] += v;
        }
      }
    } else if (p->kind == PHYS_PAR_HEIGHT && p->id == c->plane) {   // the plane moves along n: dphi = -1, p stays
      dxc[p->adr] -= w->comp * 2 * phip * l[0] / dt;
      dpen[p->adr] -= w->pen * 2 * phim;
      if (dC) dC[p->adr] -= w->comp * 2 * phip / dt;
    } else if (p->kind == PHYS_PAR_SIZE && p->id == c->plane) {   // a box surface's faces: phi moves, p not
      for (int q = 0; q < 3; q++) {
        int col = p->adr + q;
        dxc[col] += w->comp * 2 * phip * c->dphis[q] * l[0] / dt;
        dpen[col] += w->pen * 2 * phim * c->dphis[q];
        if (dC) dC[col] += w->comp * 2 * phip * c->dphis[q] / dt;
      }
    } else if ((p->kind == PHYS_PAR_SIZE || (p->kind == PHYS_PAR_VERTICES && c->vert >= 0)) && p->id == c->geom) {
      double f[3], om[3] = {0, 0, 0};
      for (int i = 0; i < 3; i++) f[i] = n[i] * l[0] + c->mu * (c->frame[3 + i] * l[1] + c->frame[6 + i] * l[2]);
      for (int i = 0; i < 3; i++)
        for (int k = 0; k < nv; k++) om[i] += jr[i * nv + k] * vnext[k];
      for (int q = 0; q < c->nsz; q++) {
        int col = p->adr + (p->kind == PHYS_PAR_VERTICES ? 3 * c->vert : 0) + q;
        double dxf[3], odp[3];
        phys_cross3(dxf, c->dp[q], f);
        phys_cross3(odp, om, c->dp[q]);
        for (int k = 0; k < nv; k++) {
          double v = 0;
          for (int i = 0; i < 3; i++) v += jr[i * nv + k] * dxf[i];
          dJl[(size_t)k * nt + col] += v;
        }
        double ds[2] = {c->mu * phys_dot3(c->frame + 3, odp), c->mu * phys_dot3(c->frame + 6, odp)};
        double dsn = (s[0] * ds[0] + s[1] * ds[1]) / se;
        dxc[col] += w->comp * 2 * phip * c->dphi[q] * l[0] / dt + w->diss * (l[0] * dsn + l[1] * ds[0] + l[2] * ds[1]);
        dpen[col] += w->pen * 2 * phim * c->dphi[q];
        if (dC) {   // the point moves by dp: a row's velocity of va moves by frame_a . (omega_a x dp)
          double oadp[3];
          phys_cross3(oadp, oa, c->dp[q]);
          dC[col] += w->comp * 2 * phip * c->dphi[q] / dt + w->diss * dsn;
          dC[nt + col] += w->diss * ds[0], dC[2 * nt + col] += w->diss * ds[1];
          for (int a = 0; a < 3; a++) dJa[a * nt + col] += (a ? c->mu : 1) * phys_dot3(c->frame + 3 * a, oadp);
        }
      }
    }
  }
}

// the residual Jacobian (violation.h) from the pieces: rows nv of r_pred, then r_c, r_pen
static void residual_jacobian(int nv, int nt, const double* L, const double* P, const double* a, const double* rp,
                              const double* dwF, const double* dJl, const double* dM, const double* dxc,
                              const double* dpen, double rc, double rpen, double* J, double* tmp) {
  double* Z = tmp;              // nv x nv
  double* col = tmp + (size_t)nv * nv;   // nv
  for (int j = 0; j < nt && P; j++) {   // velocity metric: d(P M~^-1 w) = P M~^-1 (dw - dM~ a), a = M~^-1 w
    for (int i = 0; i < nv; i++) {
      double v = dwF[(size_t)i * nt + j] - dJl[(size_t)i * nt + j];
      for (int k = 0; k < nv; k++) v -= dM[((size_t)i * nv + k) * nt + j] * a[k];
      col[i] = v;
    }
    tmap(L, P, col, col, nv);
    for (int i = 0; i < nv; i++) J[(size_t)i * nt + j] = col[i];
    J[(size_t)nv * nt + j] = rc > 0 ? dxc[j] / rc : 0;
    J[(size_t)(nv + 1) * nt + j] = rpen > 0 ? dpen[j] / rpen : 0;
  }
  for (int j = 0; j < nt && !P; j++) {
    // L^-1 dw
    for (int i = 0; i < nv; i++) col[i] = dwF[(size_t)i * nt + j] - dJl[(size_t)i * nt + j];
    lsolve(L, col, col, nv);
    for (int i = 0; i < nv; i++) J[(size_t)i * nt + j] = col[i];
    // X = L^-1 dM L^-T: Z = L^-1 dM (columns), X = L^-1 Z' (dM symmetric: X' = X)
    for (int k = 0; k < nv; k++) {
      for (int i = 0; i < nv; i++) col[i] = dM[((size_t)i * nv + k) * nt + j];
      lsolve(L, col, col, nv);
      for (int i = 0; i < nv; i++) Z[(size_t)i * nv + k] = col[i];   // Z = L^-1 dM, column k
    }
    for (int k = 0; k < nv; k++) {   // X = (L^-1 Z')': its row k = L^-1 (row k of Z), written over that row
      lsolve(L, col, Z + (size_t)k * nv, nv);
      for (int i = 0; i < nv; i++) Z[(size_t)k * nv + i] = col[i];
    }
    // - Phi(X) r: lower triangle of X with half diagonal
    for (int i = 0; i < nv; i++) {
      double v = 0;
      for (int k = 0; k <= i; k++) v += (k == i ? 0.5 : 1) * Z[(size_t)k * nv + i] * rp[k];
      J[(size_t)i * nt + j] -= v;
    }
    J[(size_t)nv * nt + j] = rc > 0 ? dxc[j] / rc : 0;
    J[(size_t)(nv + 1) * nt + j] = rpen > 0 ? dpen[j] / rpen : 0;
  }
}

// the derivative of u = Qx + g (n x nt, row-major) in theta at fixed x, from the pieces of the fixed-lambda
// Jacobian: u = -J b + c + eps x with b = T'r (T the residual's map, tmap), w = dt F - J'x, a = M~^-1 w.
// Energy (P NULL): b = a, du = -dJ a - J da + dc, da = M~^-1 (dw - dM~ a), J M~^-1 = Y' L^-1. Velocity metric:
// b = M~^-1 P^2 a, db = M~^-1 (P^2 da - dM~ b), J M~^-1 = Y' P^-1. dJa, dC (n x nt): dJ b and dc
// (contact_param); dw = dwF - dJl; a, b (nv); col, col2 (nv) scratch.
static void inner_du(int nv, int n, int nt, const double* L, const double* P, const double* Y, const double* dwF,
                     const double* dJl, const double* dM, const double* a, const double* b, const double* dJa,
                     const double* dC, double* du, double* col) {
  for (int j = 0; j < nt; j++) {
    for (int i = 0; i < nv; i++) {
      double v = dwF[(size_t)i * nt + j] - dJl[(size_t)i * nt + j];
      for (int k = 0; k < nv; k++) v -= dM[((size_t)i * nv + k) * nt + j] * a[k];
      col[i] = v;
    }
    if (P) {   // col = P^-1 (P^2 M~^-1 (dw - dM~ a) - dM~ b)
      msolve(L, col, col, nv);
      for (int i = 0; i < nv; i++) {
        double v = P[i] * P[i] * col[i];
        for (int k = 0; k < nv; k++) v -= dM[((size_t)i * nv + k) * nt + j] * b[k];
        col[i] = v;
      }
      for (int i = 0; i < nv; i++) col[i] /= P[i];
    } else {
      lsolve(L, col, col, nv);
    }
    for (int e = 0; e < n; e++) {
      double v = dC[(size_t)e * nt + j] - dJa[(size_t)e * nt + j];
      for (int k = 0; k < nv; k++) v -= Y[(size_t)k * n + e] * col[k];
      du[(size_t)e * nt + j] = v;
    }
  }
}

// one transition's arrays, shared by its stages (all on d's arena)
typedef struct vTrans_ {
  int nv, nc, n;                   // dofs, candidates, n = 3 nc
  const double* vnext;             // v+ (d->qvel)
  double *qacc, *L, *P, *r0;       // (v+ - v) / dt; M~ factored (nv x nv); sqrt(W) or NULL (energy); T dt F
  vCand* c;                        // the candidates
  double *jp, *jr, *Y, *JT, *col;  // their Jacobians (3 nv each); Y = T J' and J' (nv x n); one column's scratch
  double *s, *g, *x, *cv, *cls;    // s and st per candidate (4); the inner problem's g, solution x, c; classes
} vTrans;

// the smooth part: qacc = (v+ - v) / dt, the force F and M~ (smooth_force) with the residual network's force
// (resnet.h; none: nothing), M~ = L L', P = sqrt(W) of the velocity metric (NULL: energy), r0 = T dt F
static physStatus trans_smooth(const physModel* m, physData* d, const double* vprev, double dt,
                               const physViolationWeights* w, vTrans* v) {
  int nv = v->nv;
  v->qacc = phys_stack_alloc(d, (size_t)nv);
  double* F = phys_stack_alloc(d, (size_t)nv);
  v->L = phys_stack_alloc(d, (size_t)nv * nv);
  for (int i = 0; i < nv; i++) v->qacc[i] = (v->vnext[i] - vprev[i]) / dt;
  smooth_force(m, d, v->qacc, dt, F, v->L);
  phys_violation_residual_force(m, d, v->L, F);
  if (phys_chol_factor(v->L, nv, 0) != nv) return PHYS_ERR_NUMERIC;
  v->P = NULL;
  if (w->metric) {
    v->P = phys_stack_alloc(d, (size_t)nv);
    for (int i = 0; i < nv; i++) v->P[i] = sqrt(w->metric[i]);
  }
  v->r0 = phys_stack_alloc(d, (size_t)nv);
  for (int i = 0; i < nv; i++) v->r0[i] = dt * F[i];
  tmap(v->L, v->P, v->r0, v->r0, nv);
  return PHYS_OK;
}

// candidates, their Jacobians and J' as Y = T J' (nv x n, column 3i+a = T (row a of J_i)'; T = L^-1 or P M~^-1;
// row a of J_i = scale_a frame_a' jp_i, scale 1 for the normal, mu for the tangents), the unscaled tangent
// velocities st = t_a . v_point and the slides s = mu st
static void trans_cands(const physModel* m, physData* d, vTrans* v) {
  int nv = v->nv, nc = v->nc, n = v->n;
  v->c = (vCand*)phys_stack_alloc(d, (sizeof(vCand) * (size_t)(nc > 0 ? nc : 1) + 7) / 8);
  cand_all(m, d, v->c);
  v->jp = phys_stack_alloc(d, 3 * (size_t)nv * (nc > 0 ? nc : 1));
  v->jr = phys_stack_alloc(d, 3 * (size_t)nv * (nc > 0 ? nc : 1));
  v->Y = phys_stack_alloc(d, (size_t)nv * (n > 0 ? n : 1));
  v->JT = phys_stack_alloc(d, (size_t)nv * (n > 0 ? n : 1));   // J' (nv x n)
  v->col = phys_stack_alloc(d, (size_t)nv);
  v->s = phys_stack_alloc(d, 4 * (size_t)(nc > 0 ? nc : 1));   // s (2) and st (2) per candidate
  const vCand* c = v->c;
  double *JT = v->JT, *Y = v->Y, *col = v->col, *s = v->s;
  for (int i = 0; i < nc; i++) {
    double* jpi = v->jp + 3 * (size_t)nv * i;
    double* jri = v->jr + 3 * (size_t)nv * i;
    cand_jac(m, d, c + i, jpi, jri);
    for (int a = 0; a < 3; a++) {
      double scale = a == 0 ? 1 : c[i].mu;
      for (int k = 0; k < nv; k++) {
        double val = 0;
        for (int q = 0; q < 3; q++) val += c[i].frame[3 * a + q] * jpi[q * nv + k];
        JT[(size_t)k * n + 3 * i + a] = scale * val;
        col[k] = scale * val;
      }
      tmap(v->L, v->P, col, col, nv);
      for (int k = 0; k < nv; k++) Y[(size_t)k * n + 3 * i + a] = col[k];
      if (a > 0) {   // unscaled tangent velocity st = t_a . v_point and the slide s = mu st
        double st = 0;
        for (int k = 0; k < nv; k++) {
          double val = 0;
          for (int q = 0; q < 3; q++) val += c[i].frame[3 * a + q] * jpi[q * nv + k];
          st += val * v->vnext[k];
        }
        s[4 * i + 2 + (a - 1)] = st;
        s[4 * i + (a - 1)] = c[i].mu * st;
      }
    }
  }
}

// the inner problem: Q = Y'Y + eps I, g = -Y' r0 + c, c the complementarity and dissipation coefficients
// (comp phi+^2 / dt + diss |s|, diss s); solved (socp_solve) into x (lambda, else the arena) to the gap
// VIOL_GAP_REL e0 / 2 + VIOL_GAP_ABS, e0 = |r0|^2; its Newton steps, < 0 if it failed. sol (NULL: none; else
// phys_violation_solsize doubles: x, the classes, the gap, the steps): reuse 0 writes the solution there, reuse 1
// takes it from there instead of solving (phys_violation_residuals_sol)
static int trans_inner(physData* d, double dt, const physViolationWeights* w, vTrans* v, double* lambda,
                       double* gap, double* sol, int reuse) {
  int nv = v->nv, nc = v->nc, n = v->n;
  v->g = phys_stack_alloc(d, (size_t)(n > 0 ? n : 1));
  v->x = lambda ? lambda : phys_stack_alloc(d, (size_t)(n > 0 ? n : 1));
  for (int a = 0; a < n; a++) {
    double val = 0;
    for (int k = 0; k < nv; k++) val -= v->Y[(size_t)k * n + a] * v->r0[k];
    v->g[a] = val;
  }
  v->cv = phys_stack_alloc(d, (size_t)(n > 0 ? n : 1));   // c, the comp and diss coefficients
  for (int i = 0; i < nc; i++) {
    double phip = fmax(v->c[i].phi, 0);
    const double* s = v->s + 4 * i;
    v->cv[3 * i] = w->comp * phip * phip / dt + w->diss * slide_norm(s);
    v->cv[3 * i + 1] = w->diss * s[0];
    v->cv[3 * i + 2] = w->diss * s[1];
    for (int a = 0; a < 3; a++) v->g[3 * i + a] += v->cv[3 * i + a];
  }
  double e0 = 0;
  for (int k = 0; k < nv; k++) e0 += v->r0[k] * v->r0[k];
  *gap = 0;
  v->cls = phys_stack_alloc(d, (size_t)(nc > 0 ? nc : 1));
  if (sol && reuse) {   // the solution of this very problem, solved by an earlier call
    memcpy(v->x, sol, sizeof(double) * (size_t)n);
    memcpy(v->cls, sol + n, sizeof(double) * (size_t)nc);
    *gap = sol[n + nc];
    return (int)sol[n + nc + 1];
  }
  int steps = socp_solve(d, v->Y, nv, w->eps, v->g, nc, VIOL_GAP_REL * 0.5 * e0 + VIOL_GAP_ABS, v->x, gap, v->cls);
  if (sol) {
    memcpy(sol, v->x, sizeof(double) * (size_t)n);
    memcpy(sol + n, v->cls, sizeof(double) * (size_t)nc);
    sol[n + nc] = *gap, sol[n + nc + 1] = steps;
  }
  return steps;
}

// the residuals: r = r0 - Y x (nv), r_c = sqrt(2 max(xc, 0)) with xc = c'x + eps |x|^2 / 2 (c at the
// candidates' phi+ and slides), r_pen = sqrt(2 sum pen phi-^2)
static void trans_residual(double dt, const physViolationWeights* w, const vTrans* v, double* r, double* rc,
                           double* rpen) {
  int nv = v->nv, nc = v->nc, n = v->n;
  double xc = 0, pen = 0;
  for (int k = 0; k < nv; k++) {
    double val = v->r0[k];
    for (int a = 0; a < n; a++) val -= v->Y[(size_t)k * n + a] * v->x[a];
    r[k] = val;
  }
  for (int i = 0; i < nc; i++) {
    const double *l = v->x + 3 * i, *s = v->s + 4 * i;
    double phip = fmax(v->c[i].phi, 0), phim = fmin(v->c[i].phi, 0);
    xc += w->comp * phip * phip / dt * l[0] + w->diss * (l[0] * slide_norm(s) + l[1] * s[0] + l[2] * s[1]);
    xc += 0.5 * w->eps * (l[0] * l[0] + l[1] * l[1] + l[2] * l[2]);
    pen += w->pen * phim * phim;
  }
  *rc = sqrt(2 * fmax(xc, 0)), *rpen = sqrt(2 * pen);
  r[nv] = *rc, r[nv + 1] = *rpen;
}

// dlambda*/dtheta into dx (n x nt) (implicit differentiation of the inner problem, socp_sensitivity), and
// without the envelope d(J'x) += J' dx, d(c'x + eps/2 |x|^2) += (c + eps x)' dx into dJl, dxc
static void trans_implicit(physData* d, int nt, const physViolationWeights* w, const vTrans* v, const double* dwF,
                           double* dJl, const double* dM, const double* va, const double* vb, const double* dJa,
                           const double* dC, double* dxc, double* dlambda) {
  int nv = v->nv, n = v->n;
  double* du = phys_stack_alloc(d, (size_t)n * nt);
  double* dx = dlambda ? dlambda : phys_stack_alloc(d, (size_t)n * nt);
  inner_du(nv, n, nt, v->L, v->P, v->Y, dwF, dJl, dM, va, vb, dJa, dC, du, v->col);
  socp_sensitivity(d, v->Y, nv, w->eps, v->g, v->nc, v->cls, v->x, du, nt, dx);
  for (int j = 0; j < nt && !w->envelope; j++) {
    for (int b = 0; b < n; b++) dxc[j] += (v->cv[b] + w->eps * v->x[b]) * dx[(size_t)b * nt + j];
    for (int k = 0; k < nv; k++) {
      double val = 0;
      for (int b = 0; b < n; b++) val += v->JT[(size_t)k * n + b] * dx[(size_t)b * nt + j];
      dJl[(size_t)k * nt + j] += val;
    }
  }
}

// the residuals' Jacobian J ((nv + 2) x nt) with lambda fixed (the envelope) or moving (implicit), and
// dlambda*/dtheta (when dlambda is not NULL); a = M~^-1 w: L^-T r, or r / P; b = T' r: a, or M~^-1 P r
static void trans_jacobian(const physModel* m, physData* d, const physParamTable* t, double dt,
                           const physViolationWeights* w, const vTrans* v, const double* r, double rc, double rpen,
                           double* J, double* dlambda) {
  int nv = v->nv, nc = v->nc, n = v->n, nt = t->ntheta;
  double* dwF = phys_stack_alloc(d, (size_t)nv * (nt > 0 ? nt : 1));
  double* dM = phys_stack_alloc(d, (size_t)nv * nv * (nt > 0 ? nt : 1));
  double* dJl = phys_stack_alloc(d, (size_t)nv * (nt > 0 ? nt : 1));
  double* dxc = phys_stack_alloc(d, (size_t)(nt > 0 ? nt : 1));
  double* dpen = phys_stack_alloc(d, (size_t)(nt > 0 ? nt : 1));
  double* tmp = phys_stack_alloc(d, (size_t)nv * nv + nv);
  smooth_param(m, d, t, v->qacc, dt, dwF, dM);
  memset(dJl, 0, sizeof(double) * (size_t)nv * nt);
  memset(dxc, 0, sizeof(double) * (size_t)nt);
  memset(dpen, 0, sizeof(double) * (size_t)nt);
  int implicit = dlambda || !w->envelope;
  double* va = phys_stack_alloc(d, (size_t)nv);
  double* vb = va;
  double* dC = implicit ? phys_stack_alloc(d, (size_t)n * nt + 1) : NULL;
  double* dJa = implicit ? phys_stack_alloc(d, (size_t)n * nt + 1) : NULL;
  if (v->P) {
    vb = phys_stack_alloc(d, (size_t)nv);
    for (int k = 0; k < nv; k++) va[k] = r[k] / v->P[k], vb[k] = v->P[k] * r[k];
    msolve(v->L, vb, vb, nv);
  } else {
    ltsolve(v->L, va, r, nv);
  }
  for (int i = 0; i < nc; i++)
    contact_param(m, t, v->c + i, v->x + 3 * i, v->jp + 3 * (size_t)nv * i, v->jr + 3 * (size_t)nv * i, v->vnext,
                  v->s + 4 * i, v->s + 4 * i + 2, dt, w, dJl, dxc, dpen, vb,
                  implicit ? dC + (size_t)3 * i * nt : NULL, implicit ? dJa + (size_t)3 * i * nt : NULL);
  if (implicit && n > 0 && nt > 0)   // dlambda*/dtheta, then the reduced residual's pieces (violation.h)
    trans_implicit(d, nt, w, v, dwF, dJl, dM, va, vb, dJa, dC, dxc, dlambda);
  if (J) residual_jacobian(nv, nt, v->L, v->P, va, r, dwF, dJl, dM, dxc, dpen, rc, rpen, J, tmp);
}

// one transition (v, v+): the smooth part, the candidates, the inner problem, the residuals r (nv + 2), the
// loss and counts into info; J and dlambda (either may be NULL) by trans_jacobian
static physStatus transition(const physModel* m, physData* d, const physParamTable* t, const double* vprev, double dt,
                             const physViolationWeights* w, double* r, double* J, double* lambda,
                             double* dlambda, physViolationInfo* info, double* sol, int reuse) {
  vTrans v;
  memset(&v, 0, sizeof(v));
  v.nv = m->nv, v.nc = phys_violation_ncand(m), v.n = 3 * v.nc, v.vnext = d->qvel;
  physStatus st = trans_smooth(m, d, vprev, dt, w, &v);
  if (st != PHYS_OK) return st;
  trans_cands(m, d, &v);
  double gap, rc, rpen;
  int steps = trans_inner(d, dt, w, &v, lambda, &gap, sol, reuse);
  if (steps < 0) return PHYS_ERR_NUMERIC;
  trans_residual(dt, w, &v, r, &rc, &rpen);
  if (info) {
    info->ncand = v.nc, info->newton = steps, info->gap = gap;
    info->loss = 0;
    for (int k = 0; k < v.nv + 2; k++) info->loss += 0.5 * r[k] * r[k];
  }
  if (J || dlambda) trans_jacobian(m, d, t, dt, w, &v, r, rc, rpen, J, dlambda);
  return PHYS_OK;
}

physStatus phys_violation_residuals(const physModel* m, physData* d, const physParamTable* t, const double* vprev,
                                    double dt, const physViolationWeights* w, double* r, double* J, double* lambda,
                                    physViolationInfo* info) {
  return phys_violation_residuals_sol(m, d, t, vprev, dt, w, r, J, lambda, info, NULL, 0);
}

int phys_violation_solsize(const physModel* m) {
  return 4 * phys_violation_ncand(m) + 2;
}

physStatus phys_violation_residuals_sol(const physModel* m, physData* d, const physParamTable* t,
                                        const double* vprev, double dt, const physViolationWeights* w, double* r,
                                        double* J, double* lambda, physViolationInfo* info, double* sol, int reuse) {
  physArenaGuard guard;
  phys_arena_enter(d, &guard);
  if (setjmp(guard.env)) return phys_arena_failed(d, &guard, PHYS_WARN_OTHER, "phys_violation_residuals");
  size_t mark = phys_stack_mark(d);
  physStatus st = transition(m, d, t, vprev, dt, w, r, J, lambda, NULL, info, sol, reuse);
  phys_stack_free(d, mark);
  phys_arena_leave(d, &guard);
  return st;
}

physStatus phys_violation_dlambda(const physModel* m, physData* d, const physParamTable* t, const double* vprev,
                                  double dt, const physViolationWeights* w, double* lambda, double* dlambda) {
  physArenaGuard guard;
  phys_arena_enter(d, &guard);
  if (setjmp(guard.env)) return phys_arena_failed(d, &guard, PHYS_WARN_OTHER, "phys_violation_dlambda");
  size_t mark = phys_stack_mark(d);
  double* r = phys_stack_alloc(d, (size_t)m->nv + 2);
  physStatus st = transition(m, d, t, vprev, dt, w, r, NULL, lambda, dlambda, NULL, NULL, 0);
  phys_stack_free(d, mark);
  phys_arena_leave(d, &guard);
  return st;
}
