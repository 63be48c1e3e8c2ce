// primitive_deriv.c - Jacobians of the contact geometry of primitive pairs (see primitive_deriv.h), and the
// dispatch to convex_deriv.c for the pairs of the convex routines.
//
// Method: every pair formula of primitive.c is re-evaluated on values that carry their Jacobian with
// respect to the NCOL inputs (dual.h: forward-mode differentiation written out by hand, exact to roundoff):
//  - a geom centre c: dc = dt, so dc/dt = I;
//  - a local axis k in world, a = R e_k: under R -> exp([dw]x) R, da = dw x a = -[a]x dw, so da/dw = -[a]x;
//  - a size s_j: ds/ds_j = 1.
// The contact point definition is the one of primitive.c: pos midway between the surface points, normal
// from g1 to g2, dist the signed surface distance. The feature (capsule end, box corner, clamped or interior
// closest point, separating axis, clipped point) is the one the contact records (physContact.feature), held
// fixed; what is still decided on the values is listed in primitive_deriv.h. Every result is checked against
// the contact the pair function wrote (the target: pos, normal, dist to 1e-9 of the geoms' size).
#include "primitive_deriv.h"

#include <math.h>
#include <string.h>

#include "convex_deriv.h"
#include "dual.h"
#include "primitive.h"
#include "rot.h"

_Static_assert(NCOL == PHYS_PRIMITIVE_DERIV_MAXCOL, "dual.h's columns are the most of any pair");

//---------------------------------------------------------------------------------------------------------
// the target contact: its value (checked against the derivative's) and its recorded features

// mismatch of a value (pos, dist) with the target: max-norm of the differences
static double target_gap(const dualCtx* x, const double pos[3], double dist) {
  double e = fabs(dist - x->tdist);
  for (int k = 0; k < 3; k++) e = fmax(e, fabs(pos[k] - x->tpos[k]));
  return e;
}

// the target's stored feature of geom i (physid.h), UNKNOWN when none was given
static int tfeat(const dualCtx* x, int i) { return x->tfeat ? x->tfeat[i] : PHYS_FEATURE(PHYS_FEAT_UNKNOWN, 0); }

// the clamping of a segment parameter that a capsule feature records (physid.h: VERTEX 0 / 1 at the -h / +h end):
// 0 or 1, -1 free (EDGE)
static int seg_clamp(int f) {
  return PHYS_FEATURE_KIND(f) == PHYS_FEAT_VERTEX ? (PHYS_FEATURE_INDEX(f) ? 1 : 0) : -1;
}

// the sign (+-1) of a box's local axis at the box feature f (physid.h: a corner, an edge not along it, the face of
// that axis), 0 when f does not fix it
static double box_feat_sign(int f, int axis) {
  int i = PHYS_FEATURE_INDEX(f), bit = -1;
  switch (PHYS_FEATURE_KIND(f)) {
    case PHYS_FEAT_VERTEX: bit = (i >> axis) & 1; break;
    case PHYS_FEAT_EDGE:
      if (axis == (i / 4 + 1) % 3) bit = i & 1;
      if (axis == (i / 4 + 2) % 3) bit = (i >> 1) & 1;
      break;
    case PHYS_FEAT_FACE: if (i / 2 == axis) bit = i & 1; break;
    default: break;
  }
  return bit < 0 ? 0 : bit ? 1 : -1;
}

//---------------------------------------------------------------------------------------------------------
// pairs: each fills pos, n, dist and returns 0, or -1 when the contact does not exist / is degenerate

// sphere pair (c1, r1), (c2, r2) as primitive.c: n = (c2 - c1)/|c2 - c1|, dist = |c2 - c1| - r1 - r2,
// pos = c1 + n (r1 + dist/2)
static int d_sphere_pair(vd_t* pos, vd_t* n, sd_t* dist, const vd_t* c1, sd_t r1, const vd_t* c2, sd_t r2) {
  vd_t dc = vd_sub(*c2, c1);
  sd_t len2 = vd_dot(&dc, &dc);
  if (!(len2.v > 1e-20)) return -1;
  sd_t len = sd_sqrt(len2);
  *n = vd_scl(sd_div(sd_const(1), len), &dc);
  *dist = sd_sub(sd_sub(len, r1), r2);
  *pos = vd_axpy(*c1, sd_add(r1, sd_scl(*dist, 0.5)), n);
  return 0;
}

// plane-sphere: n = R1 e_z, dist = (c - p0).n - r, pos = c - n (r + dist/2)
static int d_plane_sphere(vd_t* pos, vd_t* n, sd_t* dist, const dualCtx* x, int con) {
  if (con != 0) return -1;
  vd_t p0 = in_centre(x, 0), c = in_centre(x, 1);
  *n = in_axis(x, 0, 2);
  sd_t r = in_size(x, 1, 0);
  vd_t t = vd_sub(c, &p0);
  *dist = sd_sub(vd_dot(&t, n), r);
  *pos = vd_axpy(c, sd_scl(sd_add(r, sd_scl(*dist, 0.5)), -1), n);
  return 0;
}

// sphere-sphere
static int d_sphere_sphere(vd_t* pos, vd_t* n, sd_t* dist, const dualCtx* x, int con) {
  if (con != 0) return -1;
  vd_t c1 = in_centre(x, 0), c2 = in_centre(x, 1);
  return d_sphere_pair(pos, n, dist, &c1, in_size(x, 0, 0), &c2, in_size(x, 1, 0));
}

// plane-capsule: end e = c +- h a, dist = (c - p0).n - r +- h a.n, pos = e - n (r + dist/2); the end the
// contact records (VERTEX 1: +h, VERTEX 0: -h)
static int d_plane_capsule(vd_t* pos, vd_t* n, sd_t* dist, const dualCtx* x, int con) {
  (void)con;
  int end = seg_clamp(tfeat(x, 1));
  if (end < 0) return -1;
  vd_t p0 = in_centre(x, 0), c = in_centre(x, 1), a = in_axis(x, 1, 2);
  *n = in_axis(x, 0, 2);
  sd_t r = in_size(x, 1, 0), h = in_size(x, 1, 1);
  vd_t t = vd_sub(c, &p0);
  sd_t hc = sd_sub(vd_dot(&t, n), r), ha = sd_mul(h, vd_dot(&a, n));
  double sg = end ? 1 : -1;
  *dist = sd_add(hc, sd_scl(ha, sg));
  vd_t e = vd_axpy(c, sd_scl(h, sg), &a);
  *pos = vd_axpy(e, sd_scl(sd_add(r, sd_scl(*dist, 0.5)), -1), n);
  return 0;
}

// sphere-capsule: q = c2 + clamp(a.(c1 - c2), -h, h) a, then the sphere pair (c1, r1), (q, r2); the clamping
// is the capsule feature the contact records (VERTEX 1: +h, VERTEX 0: -h, EDGE 0: none)
static int d_sphere_capsule(vd_t* pos, vd_t* n, sd_t* dist, const dualCtx* x, int con) {
  int f = tfeat(x, 1), end = seg_clamp(f);
  if (con != 0 || (end < 0 && f != PHYS_FEATURE(PHYS_FEAT_EDGE, 0))) return -1;
  vd_t c1 = in_centre(x, 0), c2 = in_centre(x, 1), a = in_axis(x, 1, 2);
  sd_t h = in_size(x, 1, 1);
  vd_t t = vd_sub(c1, &c2);
  sd_t pr = vd_dot(&a, &t);
  if (end >= 0) pr = end ? h : sd_scl(h, -1);
  vd_t q = vd_axpy(c2, pr, &a);
  return d_sphere_pair(pos, n, dist, &c1, in_size(x, 0, 0), &q, in_size(x, 1, 0));
}

// closest points P = p0 + S u, Q = q0 + T w of two segments (s, t in [0,1]) with the parameters' clamping sc, tc
// given (0 or 1: clamped there, -1: free); with r = p0 - q0, a = u.u, b = u.w, c = u.r, e = w.w, f = w.r:
// both free s = (b f - c e)/(a e - b^2), t = (b s + f)/e; s clamped t = (b s + f)/e; t clamped
// s = (b t - c)/a; both clamped constant. -1 for point segments and for both free on parallel segments.
static int d_segment_fixed(vd_t* P, vd_t* Q, const vd_t* p0, const vd_t* u, const vd_t* q0, const vd_t* w, int sc,
                           int tc) {
  vd_t r = vd_sub(*p0, q0);
  sd_t A = vd_dot(u, u), B = vd_dot(u, w), C = vd_dot(u, &r), E = vd_dot(w, w), F = vd_dot(w, &r);
  sd_t den = sd_sub(sd_mul(A, E), sd_mul(B, B));
  int sfree = sc < 0, tfree = tc < 0;
  if (!(A.v > 0 && E.v > 0) || (sfree && tfree && !(den.v > 0))) return -1;  // point segments; parallel
  // segments have s clamped at 0 (phys_segment_closest), so both parameters are free only when den > 0
  sd_t S = sd_const(sc > 0), T = sd_const(tc > 0);
  if (sfree && tfree) {
    S = sd_div(sd_sub(sd_mul(B, F), sd_mul(C, E)), den);
    T = sd_div(sd_add(sd_mul(B, S), F), E);
  } else if (tfree) {
    T = sd_div(sd_add(sd_mul(B, S), F), E);
  } else if (sfree) {
    S = sd_div(sd_sub(sd_mul(B, T), C), A);
  }
  *P = vd_axpy(*p0, S, u);
  *Q = vd_axpy(*q0, T, w);
  return 0;
}

// d_segment_fixed at the clamping phys_segment_closest finds from the values (box-box and capsule-box edge axes,
// capsule-box's segment against a box edge: their features name the edges, not where on them the closest
// points lie)
static int d_segment_closest(vd_t* P, vd_t* Q, const vd_t* p0, const vd_t* u, const vd_t* q0, const vd_t* w) {
  double s, t;
  phys_segment_closest(&s, &t, p0->v, u->v, q0->v, w->v);
  return d_segment_fixed(P, Q, p0, u, q0, w, s > 0 && s < 1 ? -1 : s >= 1, t > 0 && t < 1 ? -1 : t >= 1);
}

// plane-box: corner i at x = c + sum_k (+-s_k) a_k, dist = (x - p0).n, pos = x - n dist/2; the corner is the
// target's stored feature (the box's VERTEX i, physid.h), -1 without it
static int d_plane_box(vd_t* pos, vd_t* n, sd_t* dist, const dualCtx* x, int con) {
  (void)con;
  if (!x->tfeat || PHYS_FEATURE_KIND(x->tfeat[1]) != PHYS_FEAT_VERTEX) return -1;
  int ib = PHYS_FEATURE_INDEX(x->tfeat[1]);
  vd_t P0 = in_centre(x, 0), xw = in_centre(x, 1), ax[3];
  *n = in_axis(x, 0, 2);
  for (int k = 0; k < 3; k++) ax[k] = in_axis(x, 1, k);
  for (int k = 0; k < 3; k++) xw = vd_axpy(xw, sd_scl(in_size(x, 1, k), (ib >> k) & 1 ? 1 : -1), &ax[k]);
  vd_t t = vd_sub(xw, &P0);
  *dist = vd_dot(&t, n);
  *pos = vd_axpy(xw, sd_scl(*dist, -0.5), n);
  return 0;
}

//---------------------------------------------------------------------------------------------------------
// capsule-capsule

// second contact of nearly parallel capsules (phys_collide_capsule_capsule): P2 = p0 + s2 u on seg 1 with s2 the
// contact's recorded feature of seg 1 (an end: 0 or 1; EDGE 3 / 4: facing seg 2's end q0 / q0 + w, s2 = sa = (q0 -
// p0).u/u.u or sb = (q0 + w - p0).u/u.u), Q2 = q0 + t2 w, t2 = (P2 - q0).w/w.w clamped as seg 2's feature records;
// then the sphere pair
static int d_capsule_second(vd_t* pos, vd_t* n, sd_t* dist, const dualCtx* x, const vd_t* p0, const vd_t* u,
                            const vd_t* q0, const vd_t* w) {
  int f1 = tfeat(x, 0), i1 = PHYS_FEATURE_INDEX(f1), tc = seg_clamp(tfeat(x, 1));
  sd_t uu = vd_dot(u, u), s2;
  if (PHYS_FEATURE_KIND(f1) == PHYS_FEAT_VERTEX) {
    s2 = sd_const(i1 ? 1 : 0);
  } else if (PHYS_FEATURE_KIND(f1) == PHYS_FEAT_EDGE && (i1 == 3 || i1 == 4)) {
    vd_t t0 = vd_sub(*q0, p0), t1 = vd_add(t0, w);
    s2 = sd_div(vd_dot(i1 == 3 ? &t0 : &t1, u), uu);
  } else {
    return -1;
  }
  vd_t P2 = vd_axpy(*p0, s2, u), tq = vd_sub(P2, q0);
  sd_t tt = tc < 0 ? sd_div(vd_dot(&tq, w), vd_dot(w, w)) : sd_const(tc);
  vd_t Q2 = vd_axpy(*q0, tt, w);
  return d_sphere_pair(pos, n, dist, &P2, in_size(x, 0, 0), &Q2, in_size(x, 1, 0));
}

// capsule-capsule: segments p0 + s u, q0 + t w (p0 = c1 - h1 a1, u = 2 h1 a1, likewise for geom 2); contact 0:
// the closest points P, Q at the clamping both capsules' features record (d_segment_fixed), then the sphere pair
// at P, Q; contact 1 (nearly parallel capsules): the second contact (d_capsule_second)
static int d_capsule_capsule(vd_t* pos, vd_t* n, sd_t* dist, const dualCtx* x, int con) {
  vd_t c1 = in_centre(x, 0), c2 = in_centre(x, 1), a1 = in_axis(x, 0, 2), a2 = in_axis(x, 1, 2);
  sd_t h1 = in_size(x, 0, 1), h2 = in_size(x, 1, 1);
  vd_t p0 = vd_axpy(c1, sd_scl(h1, -1), &a1), q0 = vd_axpy(c2, sd_scl(h2, -1), &a2);
  vd_t u = vd_scl(sd_scl(h1, 2), &a1), w = vd_scl(sd_scl(h2, 2), &a2), P, Q;
  if (con == 1) return d_capsule_second(pos, n, dist, x, &p0, &u, &q0, &w);
  if (con != 0 || d_segment_fixed(&P, &Q, &p0, &u, &q0, &w, seg_clamp(tfeat(x, 0)), seg_clamp(tfeat(x, 1))))
    return -1;
  return d_sphere_pair(pos, n, dist, &P, in_size(x, 0, 0), &Q, in_size(x, 1, 0));
}

//---------------------------------------------------------------------------------------------------------
// box pairs

// world axes of box geom i
static void box_axes(vd_t ax[3], const dualCtx* x, int i) {
  for (int k = 0; k < 3; k++) ax[k] = in_axis(x, i, k);
}

// a point of the clipped incident polygon in the reference face's coordinates (k1, k2)
typedef struct {
  sd_t p[2];
} pt2_t;

// a node of the clipping (values): an incident corner (a < 0, corner b) or the crossing of the segment from
// node a to node b with the side line side * x[dim] = lim (box_face_contacts' Sutherland-Hodgman steps)
typedef struct {
  double p[2], side;
  int a, b, dim;
  int l[2];   // the lines defining it (phys_box_clip_features' numbering)
} clipNode;

#define CLIP_NODES (4 + 4 * (PHYS_MAXPAIRCON + 1))

// the line two nodes lie on: the one of their two defining lines they share (-1: none)
static int common_line(const int a[2], const int b[2]) {
  return a[0] == b[0] || a[0] == b[1] ? a[0] : a[1] == b[0] || a[1] == b[1] ? a[1] : -1;
}

// one Sutherland-Hodgman step on node values: keep side * x[dim] <= lim, crossings at p + t (q - p),
// t = dp / (dp - dq), appended as new nodes; returns the new count
static int clip_nodes(int* out, const int* in, int n, clipNode* nd, int* nn, int dim, double side, double lim) {
  int k = 0;
  for (int i = 0; i < n; i++) {
    const double *p = nd[in[i]].p, *q = nd[in[(i + 1) % n]].p;
    double dp = side * p[dim] - lim, dq = side * q[dim] - lim;
    if (dp <= 0) out[k++] = in[i];
    if ((dp < 0 && dq > 0) || (dp > 0 && dq < 0)) {
      double t = dp / (dp - dq);
      clipNode* c = nd + (*nn);
      c->p[0] = p[0] + t * (q[0] - p[0]);
      c->p[1] = p[1] + t * (q[1] - p[1]);
      c->a = in[i], c->b = in[(i + 1) % n], c->dim = dim, c->side = side;
      c->l[0] = common_line(nd[in[i]].l, nd[in[(i + 1) % n]].l), c->l[1] = 4 + 2 * dim + (side > 0);
      out[k++] = (*nn)++;
    }
  }
  return k;
}

// dual of node id (memoized): a corner, or p + t (q - p) with t = dp / (dp - dq), dp = side p[dim] - lim
static pt2_t node_dual(const clipNode* nd, int id, pt2_t* memo, char* done, const pt2_t* corner, const sd_t lim[2]) {
  if (done[id]) return memo[id];
  const clipNode* c = nd + id;
  pt2_t r;
  if (c->a < 0) {
    r = corner[c->b];
  } else {
    pt2_t p = node_dual(nd, c->a, memo, done, corner, lim), q = node_dual(nd, c->b, memo, done, corner, lim);
    sd_t dp = sd_sub(sd_lscl(c->side, p.p[c->dim]), lim[c->dim]), dq = sd_sub(sd_lscl(c->side, q.p[c->dim]), lim[c->dim]);
    sd_t t = sd_div(dp, sd_sub(dp, dq));
    for (int j = 0; j < 2; j++) r.p[j] = sd_add(p.p[j], sd_mul(t, sd_sub(q.p[j], p.p[j])));
  }
  memo[id] = r, done[id] = 1;
  return r;
}

// box-box face contact (box_face_contacts) as the contact records it: reference box r, face k, outward normal
// nref = sigma ax_k, incident box's face mi on side tau; the incident face's corners in the reference frame,
// clipped to the face rectangle (on values, each point's defining lines kept); the point whose features
// (phys_box_clip_features) are the recorded ones x (on the incident face plane x_k = h0 + g1 x_k1 + g2 x_k2)
// gives dist = sigma x_k - s_k, pos = c_r + R_r x - nref dist/2; n = nref from g1 to g2 (-nref when r = 1)
static int d_box_face(vd_t* pos, vd_t* n, sd_t* dist, const dualCtx* x, int r, int k, double sigma, int mi,
                      double tau) {
  int ic = 1 - r;
  vd_t rax[3], iax[3], rc = in_centre(x, r), icc = in_centre(x, ic);
  box_axes(rax, x, r);
  box_axes(iax, x, ic);
  sd_t rs[3], is[3];
  for (int j = 0; j < 3; j++) rs[j] = in_size(x, r, j), is[j] = in_size(x, ic, j);
  *n = vd_lscl(r == 0 ? sigma : -sigma, rax[k]);
  vd_t nref = vd_lscl(sigma, rax[k]);
  int i1 = (mi + 1) % 3, i2 = (mi + 2) % 3, k1 = (k + 1) % 3, k2 = (k + 2) % 3;
  static const double S1[4] = {1, -1, -1, 1}, S2[4] = {1, 1, -1, -1};
  pt2_t poly[4];
  sd_t hk[4];
  for (int v = 0; v < 4; v++) {  // xl = R_r'(c_i + tau s_m ax_m +- s_i1 ax_i1 +- s_i2 ax_i2 - c_r)
    vd_t w = vd_axpy(icc, sd_lscl(tau, is[mi]), &iax[mi]);
    w = vd_axpy(w, sd_lscl(S1[v], is[i1]), &iax[i1]);
    w = vd_axpy(w, sd_lscl(S2[v], is[i2]), &iax[i2]);
    w = vd_sub(w, &rc);
    vd_t xl = dual_unrotate(rax, &w);
    poly[v].p[0] = vd_get(&xl, k1), poly[v].p[1] = vd_get(&xl, k2), hk[v] = vd_get(&xl, k);
  }
  // incident plane x_k = h0 + g1 x_k1 + g2 x_k2 through corners 0, 1, 3
  sd_t g1 = sd_const(0), g2 = sd_const(0);
  sd_t a1 = sd_sub(poly[1].p[0], poly[0].p[0]), a2 = sd_sub(poly[1].p[1], poly[0].p[1]);
  sd_t b1 = sd_sub(poly[3].p[0], poly[0].p[0]), b2 = sd_sub(poly[3].p[1], poly[0].p[1]);
  sd_t det = sd_sub(sd_mul(a1, b2), sd_mul(a2, b1)), dh1 = sd_sub(hk[1], hk[0]), dh3 = sd_sub(hk[3], hk[0]);
  if (fabs(det.v) > 1e-14 * (fabs(a1.v * b2.v) + fabs(a2.v * b1.v)) && det.v != 0) {
    g1 = sd_div(sd_sub(sd_mul(dh1, b2), sd_mul(dh3, a2)), det);
    g2 = sd_div(sd_sub(sd_mul(a1, dh3), sd_mul(b1, dh1)), det);
  }
  sd_t h0 = sd_sub(sd_sub(hk[0], sd_mul(g1, poly[0].p[0])), sd_mul(g2, poly[0].p[1]));
  // clipping on values with each point's origin recorded; only the matching point is differentiated
  clipNode nd[CLIP_NODES];
  int ia[PHYS_MAXPAIRCON + 1] = {0, 1, 2, 3}, ib[PHYS_MAXPAIRCON + 1], nn = 4;
  for (int v = 0; v < 4; v++) {
    nd[v].p[0] = poly[v].p[0].v, nd[v].p[1] = poly[v].p[1].v, nd[v].a = -1, nd[v].b = v;
    nd[v].l[0] = (v + 3) % 4, nd[v].l[1] = v;
  }
  int np = clip_nodes(ib, ia, 4, nd, &nn, 0, 1, rs[k1].v);
  np = clip_nodes(ia, ib, np, nd, &nn, 0, -1, rs[k1].v);
  np = clip_nodes(ib, ia, np, nd, &nn, 1, 1, rs[k2].v);
  np = clip_nodes(ia, ib, np, nd, &nn, 1, -1, rs[k2].v);
  if (np > PHYS_MAXPAIRCON) np = PHYS_MAXPAIRCON;
  // the point with the recorded features
  int best = -1;
  for (int v = 0; v < np && best < 0; v++) {
    int f[2];
    phys_box_clip_features(&f[r], &f[ic], nd[ia[v]].l, k, sigma, mi, tau);
    if (f[0] == x->tfeat[0] && f[1] == x->tfeat[1] && PHYS_FEATURE_KIND(f[0]) != PHYS_FEAT_UNKNOWN) best = v;
  }
  if (best < 0) return -1;
  pt2_t memo[CLIP_NODES];
  char done[CLIP_NODES] = {0};
  const sd_t lim[2] = {rs[k1], rs[k2]};
  pt2_t pb = node_dual(nd, ia[best], memo, done, poly, lim);
  vd_t xl;
  vd_set(&xl, k1, pb.p[0]);
  vd_set(&xl, k2, pb.p[1]);
  vd_set(&xl, k, sd_add(sd_add(h0, sd_mul(g1, pb.p[0])), sd_mul(g2, pb.p[1])));
  *dist = sd_sub(sd_lscl(sigma, vd_get(&xl, k)), rs[k]);
  vd_t t = dual_rotate(rax, &xl), w = vd_add(rc, &t);
  *pos = vd_axpy(w, sd_lscl(-0.5, *dist), &nref);
  return 0;
}

// box-box edge contact between the edges the contact records, A's along A_i at the signs sa_k (k != i) and B's
// along B_j at the signs sb_k (physid.h): P0 + s u, Q0 + t w, P0 = c_A - s_i A_i + sum_{k != i} s_k sa_k A_k,
// Q0 = c_B - s_j B_j + sum_{k != j} s_k sb_k B_k, u = 2 s_i A_i, w = 2 s_j B_j, n = +-L, L = A_i x B_j / |A_i x B_j|,
// the sign making sgn(A_k.n) = sa_k on A's axis k != i most aligned with L; closest points P, Q
// (d_segment_closest), dist = (Q - P).n, pos = (P + Q)/2
static int d_box_edge(vd_t* pos, vd_t* n, sd_t* dist, const dualCtx* x, int fa, int fb) {
  vd_t A[3], B[3], cA = in_centre(x, 0), cB = in_centre(x, 1);
  box_axes(A, x, 0);
  box_axes(B, x, 1);
  sd_t sA[3], sB[3];
  for (int j = 0; j < 3; j++) sA[j] = in_size(x, 0, j), sB[j] = in_size(x, 1, j);
  int ei = PHYS_FEATURE_INDEX(fa) / 4, ej = PHYS_FEATURE_INDEX(fb) / 4, kl = (ei + 1) % 3;
  if (ei > 2 || ej > 2) return -1;
  vd_t L = vd_cross(&A[ei], &B[ej]);
  L = vd_unit(&L);
  if (fabs(vd_dot(&A[(ei + 2) % 3], &L).v) > fabs(vd_dot(&A[kl], &L).v)) kl = (ei + 2) % 3;
  *n = vd_lscl(box_feat_sign(fa, kl) * (vd_dot(&A[kl], &L).v >= 0 ? 1 : -1), L);
  vd_t t = vd_scl(sA[ei], &A[ei]), p0 = vd_sub(cA, &t);
  t = vd_scl(sB[ej], &B[ej]);
  vd_t q0 = vd_sub(cB, &t);
  vd_t u = vd_scl(sd_lscl(2, sA[ei]), &A[ei]), w = vd_scl(sd_lscl(2, sB[ej]), &B[ej]);
  for (int k = 0; k < 3; k++) {
    if (k != ei) p0 = vd_axpy(p0, sd_scl(sA[k], box_feat_sign(fa, k)), &A[k]);
    if (k != ej) q0 = vd_axpy(q0, sd_scl(sd_scl(sB[k], -1), -box_feat_sign(fb, k)), &B[k]);
  }
  vd_t P, Q;
  if (d_segment_closest(&P, &Q, &p0, &u, &q0, &w)) return -1;
  vd_t dv = vd_sub(Q, &P);
  *dist = vd_dot(&dv, n);
  *pos = vd_lscl(0.5, vd_add(P, &Q));
  return 0;
}

// box-box as the contact records it: a clipped point of a face manifold (one box's feature flagged as the
// reference face's, the other's as the incident face's, with their axes and sides) or an edge-axis contact (two
// edges without flags)
static int d_box_box(vd_t* pos, vd_t* n, sd_t* dist, const dualCtx* x, int con) {
  (void)con;
  int f0 = tfeat(x, 0), f1 = tfeat(x, 1), fl0 = PHYS_FEATURE_FLAGS(f0), fl1 = PHYS_FEATURE_FLAGS(f1);
  if (!((fl0 | fl1) & (PHYS_FEATF_REF | PHYS_FEATF_INC))) {
    if (PHYS_FEATURE_KIND(f0) != PHYS_FEAT_EDGE || PHYS_FEATURE_KIND(f1) != PHYS_FEAT_EDGE) return -1;
    return d_box_edge(pos, n, dist, x, f0, f1);
  }
  int r = fl0 & PHYS_FEATF_REF ? 0 : 1, fr = r ? f1 : f0, fi = r ? f0 : f1;
  if (!(PHYS_FEATURE_FLAGS(fi) & PHYS_FEATF_INC)) return -1;
  int k = PHYS_FEATURE_AXIS(fr), mi = PHYS_FEATURE_AXIS(fi);
  double sigma = box_feat_sign(fr, k), tau = box_feat_sign(fi, mi);
  if (k > 2 || mi > 2 || !sigma || !tau) return -1;
  return d_box_face(pos, n, dist, x, r, k, sigma, mi, tau);
}

// sphere (g1) against a box or cylinder (g2) given the local point x of the sphere centre, the surface
// point q and the unit direction m (local, from the box to the sphere), gap the signed distance of the
// centre from the surface: n = -R m, dist = gap - r1, pos = midway of (c1 - R m r1) and c2 + R q
static void d_sphere_local(vd_t* pos, vd_t* n, sd_t* dist, const dualCtx* x, const vd_t ax[3], const vd_t* q,
                           const vd_t* ml, sd_t gap) {
  vd_t c1 = in_centre(x, 0), c2 = in_centre(x, 1);
  sd_t r1 = in_size(x, 0, 0);
  *dist = sd_sub(gap, r1);
  vd_t mw = dual_rotate(ax, ml), qr = dual_rotate(ax, q);
  vd_t qw = vd_add(c2, &qr), s1 = vd_axpy(c1, sd_scl(r1, -1), &mw);
  *pos = vd_lscl(0.5, vd_add(s1, &qw));
  *n = vd_lscl(-1, mw);
}

// sphere centre in geom 2's frame: x = R2'(c1 - c2)
static vd_t d_local_centre(const dualCtx* x, const vd_t ax[3]) {
  vd_t c1 = in_centre(x, 0), c2 = in_centre(x, 1);
  vd_t t = vd_sub(c1, &c2);
  return dual_unrotate(ax, &t);
}

// sphere-box (phys_collide_sphere_box) at the box feature the contact records: outside (the sphere's centre not
// flagged inside) q = x with the coordinates the feature fixes (a corner's 3, an edge's 2, a face's 1) at +-s,
// m = (x - q)/|x - q|, gap = |x - q|; inside its face k, m = sgn e_k, q = x with q_k = sgn s_k, gap = |x_k| - s_k
static int d_sphere_box(vd_t* pos, vd_t* n, sd_t* dist, const dualCtx* x, int con) {
  int fb = tfeat(x, 1), inside = PHYS_FEATURE_FLAGS(tfeat(x, 0)) & PHYS_FEATF_INSIDE;
  if (con != 0 || PHYS_FEATURE_KIND(fb) < PHYS_FEAT_FACE || (inside && PHYS_FEATURE_KIND(fb) != PHYS_FEAT_FACE))
    return -1;
  vd_t ax[3];
  box_axes(ax, x, 1);
  vd_t xl = d_local_centre(x, ax), q = xl, ml;
  sd_t s[3], gap;
  for (int k = 0; k < 3; k++) {
    s[k] = in_size(x, 1, k);
    double sg = box_feat_sign(fb, k);
    if (!inside && sg) vd_set(&q, k, sd_lscl(sg, s[k]));
  }
  if (!inside) {
    ml = vd_sub(xl, &q);
    gap = vd_norm(&ml);
    if (!(gap.v > 0)) return -1;
    ml = vd_unit(&ml);
  } else {
    int k = PHYS_FEATURE_INDEX(fb) / 2;
    double sg = box_feat_sign(fb, k), e[3] = {0, 0, 0};
    e[k] = sg;
    ml = vd_const(e);
    vd_set(&q, k, sd_lscl(sg, s[k]));
    gap = sd_scl(sd_sub(s[k], sd_abs(vd_get(&xl, k))), -1);
  }
  d_sphere_local(pos, n, dist, x, ax, &q, &ml, gap);
  return 0;
}

// sphere-cylinder (phys_collide_sphere_cylinder), rho = |(x0, x1)|: outside q = (min(rho, r)/rho (x0, x1),
// clamp(x2, -h, h)), m = (x - q)/|x - q|, gap = |x - q|; inside through the cap (m = sgn(x2) e_z,
// q = (x0, x1, sgn(x2) h), gap = |x2| - h) or the side (m = (x0, x1, 0)/rho, q = (r m0, r m1, x2),
// gap = rho - r), whichever is shallower; the case is the cylinder's feature the contact records (rim: both
// clamped, side: the radius, cap: the height) and whether the sphere's centre is flagged inside
static int d_sphere_cylinder(vd_t* pos, vd_t* n, sd_t* dist, const dualCtx* x, int con) {
  int fc = tfeat(x, 1), kind = PHYS_FEATURE_KIND(fc), inside = PHYS_FEATURE_FLAGS(tfeat(x, 0)) & PHYS_FEATF_INSIDE;
  double csg = PHYS_FEATURE_INDEX(fc) ? 1 : -1;   // the cap's side
  if (con != 0 || kind < PHYS_FEAT_SURFACE || kind > PHYS_FEAT_EDGE || (inside && kind == PHYS_FEAT_EDGE)) return -1;
  vd_t ax[3];
  box_axes(ax, x, 1);
  vd_t xl = d_local_centre(x, ax), q = xl, ml;
  sd_t r = in_size(x, 1, 0), h = in_size(x, 1, 1), gap;
  sd_t x0 = vd_get(&xl, 0), x1 = vd_get(&xl, 1), x2 = vd_get(&xl, 2);
  sd_t rho = sd_sqrt(sd_add(sd_mul(x0, x0), sd_mul(x1, x1)));
  if (!inside) {
    if (kind != PHYS_FEAT_FACE) {   // the radius clamped (side, rim)
      sd_t k = sd_div(r, rho);
      vd_set(&q, 0, sd_mul(k, x0)), vd_set(&q, 1, sd_mul(k, x1));
    }
    if (kind != PHYS_FEAT_SURFACE) vd_set(&q, 2, csg < 0 ? sd_scl(h, -1) : h);   // the height clamped (cap, rim)
    ml = vd_sub(xl, &q);
    gap = vd_norm(&ml);
    if (!(gap.v > 0)) return -1;
    ml = vd_unit(&ml);
  } else {
    sd_t dside = sd_sub(r, rho), dcap = sd_sub(h, sd_abs(x2));
    if (kind == PHYS_FEAT_FACE) {
      double sg = csg, e[3] = {0, 0, sg};
      ml = vd_const(e);
      vd_set(&q, 2, sd_lscl(sg, h));
      gap = sd_scl(dcap, -1);
    } else {
      if (!(rho.v > 1e-12 * (r.v + 1))) return -1;  // on the axis: the side direction is arbitrary
      ml = vd_const((double[3]){0, 0, 0});
      vd_set(&ml, 0, sd_div(x0, rho)), vd_set(&ml, 1, sd_div(x1, rho));
      vd_set(&q, 0, sd_mul(r, vd_get(&ml, 0))), vd_set(&q, 1, sd_mul(r, vd_get(&ml, 1)));
      gap = sd_scl(dside, -1);
    }
  }
  d_sphere_local(pos, n, dist, x, ax, &q, &ml, gap);
  return 0;
}

//---------------------------------------------------------------------------------------------------------
// capsule-box (phys_collide_capsule_box), in the box frame: segment e0 + t u (t in [0,1]), e0, e1 = R'(c1
// -+ h a - c2), u = e1 - e0, capsule radius r, box |x| <= s

// the capsule's segment in the box frame and the box sizes
typedef struct {
  vd_t ax[3], e0, e1, u;
  sd_t s[3], r;
} capBox;

static void capbox_init(capBox* b, const dualCtx* x) {
  vd_t c1 = in_centre(x, 0), c2 = in_centre(x, 1), a = in_axis(x, 0, 2);
  sd_t h = in_size(x, 0, 1);
  box_axes(b->ax, x, 1);
  for (int k = 0; k < 3; k++) b->s[k] = in_size(x, 1, k);
  b->r = in_size(x, 0, 0);
  vd_t w0 = vd_axpy(c1, sd_scl(h, -1), &a), w1 = vd_axpy(c1, h, &a);
  w0 = vd_sub(w0, &c2), w1 = vd_sub(w1, &c2);
  b->e0 = dual_unrotate(b->ax, &w0);
  b->e1 = dual_unrotate(b->ax, &w1);
  b->u = vd_sub(b->e1, &b->e0);
}

// one contact from box-frame points p (segment), q (box) and the unit m from box to capsule (box frame):
// pos = c2 + R (p - m r + q)/2, n = -R m (capsule_box_point)
static void capbox_point(vd_t* pos, vd_t* n, const dualCtx* x, const capBox* b, const vd_t* p, const vd_t* q,
                         const vd_t* ml) {
  vd_t pl = vd_axpy(*p, sd_scl(b->r, -1), ml);
  pl = vd_lscl(0.5, vd_add(pl, q));
  vd_t c2 = in_centre(x, 1), t = dual_rotate(b->ax, &pl), mw = dual_rotate(b->ax, ml);
  *pos = vd_add(c2, &t);
  *n = vd_lscl(-1, mw);
}

// Liang-Barsky (clip_slab) on dual bounds: keep t where lo <= x0 + t dx <= hi
static int d_clip_slab(sd_t* t0, sd_t* t1, sd_t x0, sd_t dx, sd_t lo, sd_t hi) {
  if (dx.v == 0) return x0.v >= lo.v && x0.v <= hi.v && t0->v <= t1->v;
  sd_t ta = sd_div(sd_sub(lo, x0), dx), tb = sd_div(sd_sub(hi, x0), dx);
  if (ta.v > tb.v) {
    sd_t tmp = ta;
    ta = tb, tb = tmp;
  }
  if (ta.v > t0->v) *t0 = ta;
  if (tb.v < t1->v) *t1 = tb;
  return t0->v <= t1->v;
}

// face contacts on face k (outward sigma e_k) (capsule_box_face): the segment clipped to |x_j| <= s_j
// (j != k) (which side plane clips is decided on the values); the clipped end x (end 0: t0, 1: t1):
// dist = sigma x_k - s_k - r, pos = c2 + R (x - m (r + dist/2)), m = sigma e_k
static int capbox_face(vd_t* pos, vd_t* n, sd_t* dist, const dualCtx* x, const capBox* b, int k, double sigma,
                       int end) {
  sd_t t0 = sd_const(0), t1 = sd_const(1);
  for (int j = 0; j < 3; j++) {
    sd_t sj = b->s[j];
    if (j != k && !d_clip_slab(&t0, &t1, vd_get(&b->e0, j), vd_get(&b->u, j), sd_scl(sj, -1), sj)) return -1;
  }
  double e[3] = {0, 0, 0};
  e[k] = sigma;
  vd_t ml = vd_const(e), c2 = in_centre(x, 1), mw = dual_rotate(b->ax, &ml);
  vd_t xp = vd_axpy(b->e0, end == 0 ? t0 : t1, &b->u);
  *dist = sd_sub(sd_sub(sd_lscl(sigma, vd_get(&xp, k)), b->s[k]), b->r);
  vd_t pl = vd_axpy(xp, sd_scl(sd_add(b->r, sd_lscl(0.5, *dist)), -1), &ml);
  vd_t t = dual_rotate(b->ax, &pl);
  *pos = vd_add(c2, &t);
  *n = vd_lscl(-1, mw);
  return 0;
}

// closest points of the segment and the box edge along axis k at the corner signs (c & 1, c & 2) of the
// other two axes (segment_box_closest's edge), held at phys_segment_closest's clamping
static int capbox_edge_closest(vd_t* p, vd_t* q, const capBox* b, int k, const double sg[3]) {
  vd_t q0, w = vd_const((double[3]){0, 0, 0});
  for (int j = 0; j < 3; j++) vd_set(&q0, j, j == k ? sd_scl(b->s[j], -1) : sd_lscl(sg[j], b->s[j]));
  vd_set(&w, k, sd_lscl(2, b->s[k]));
  return d_segment_closest(p, q, &b->e0, &b->u, &q0, &w);
}

// capsule-box as the contact records it (box feature fb, capsule feature fc, flagged inside when the segment meets
// the box): a box face - a face contact (capbox_face, the clipped end fc names); outside, a segment end against
// the box feature its clamped coordinates give (q = the end with those coordinates at +-s_j) or the segment's
// closest point to a box edge (capbox_edge_closest), m = (p - q)/|p - q|, dist = |p - q| - r; inside, the edge
// axis L = u x e_k / |u x e_k| of the box edge along e_k at x_j = s_j sg_j (j != k), m = +-L (the sign making
// sgn(m_j) = sg_j on the larger of L's components), dist = -overlap - r, overlap = min(ext - min(pa, pb),
// max(pa, pb) + ext) on m's side, ext = sum_j s_j |L_j|, pa = e0.L, pb = e1.L
static int d_capsule_box(vd_t* pos, vd_t* n, sd_t* dist, const dualCtx* x, int con) {
  (void)con;
  int fc = tfeat(x, 0), fb = tfeat(x, 1), kc = PHYS_FEATURE_KIND(fc), ic = PHYS_FEATURE_INDEX(fc);
  int inside = PHYS_FEATURE_FLAGS(fc) & PHYS_FEATF_INSIDE, kb = PHYS_FEATURE_INDEX(fb) / 4;
  capBox b;
  capbox_init(&b, x);
  if (PHYS_FEATURE_KIND(fb) == PHYS_FEAT_FACE) {
    int k = PHYS_FEATURE_INDEX(fb) / 2;
    if (k > 2 || !(kc == PHYS_FEAT_VERTEX || (kc == PHYS_FEAT_EDGE && (ic == 1 || ic == 2)))) return -1;
    return capbox_face(pos, n, dist, x, &b, k, box_feat_sign(fb, k), kc == PHYS_FEAT_VERTEX ? ic : ic - 1);
  }
  double sg[3];
  for (int j = 0; j < 3; j++) sg[j] = box_feat_sign(fb, j);
  if (!inside) {
    vd_t p, q;
    if (kc == PHYS_FEAT_VERTEX && PHYS_FEATURE_KIND(fb) >= PHYS_FEAT_EDGE) {   // an end against a corner or edge
      p = q = ic ? b.e1 : b.e0;
      for (int j = 0; j < 3; j++)
        if (sg[j]) vd_set(&q, j, sd_lscl(sg[j], b.s[j]));
    } else if (PHYS_FEATURE_KIND(fb) == PHYS_FEAT_EDGE && kb < 3) {   // the segment against an edge
      sg[kb] = -1;
      if (capbox_edge_closest(&p, &q, &b, kb, sg)) return -1;
    } else {
      return -1;
    }
    vd_t ml = vd_sub(p, &q);
    sd_t gap = vd_norm(&ml);
    if (!(gap.v > 0)) return -1;
    ml = vd_unit(&ml);
    *dist = sd_sub(gap, b.r);
    capbox_point(pos, n, x, &b, &p, &q, &ml);
    return 0;
  }
  if (PHYS_FEATURE_KIND(fb) != PHYS_FEAT_EDGE || kb > 2) return -1;
  // the edge axis on duals: L = u x e_k / |u x e_k|, m = sg L, overlap o
  vd_t ek = vd_const((double[3]){kb == 0, kb == 1, kb == 2}), L = vd_cross(&b.u, &ek);
  L = vd_unit(&L);
  int jl = fabs(L.v[(kb + 2) % 3]) > fabs(L.v[(kb + 1) % 3]) ? (kb + 2) % 3 : (kb + 1) % 3;
  double sgbest = sg[jl] * (L.v[jl] >= 0 ? 1 : -1);
  sd_t ext = sd_const(0);
  for (int j = 0; j < 3; j++) ext = sd_add(ext, sd_mul(b.s[j], sd_abs(vd_get(&L, j))));
  sd_t pa = vd_dot(&b.e0, &L), pb = vd_dot(&b.e1, &L);
  sd_t o = sgbest > 0 ? sd_sub(ext, pa.v <= pb.v ? pa : pb) : sd_add(pa.v >= pb.v ? pa : pb, ext);
  vd_t ml = vd_lscl(sgbest, L), p, q;
  sg[kb] = -1;
  if (capbox_edge_closest(&p, &q, &b, kb, sg)) return -1;
  *dist = sd_sub(sd_scl(o, -1), b.r);
  capbox_point(pos, n, x, &b, &p, &q, &ml);
  return 0;
}

//---------------------------------------------------------------------------------------------------------
// plane pairs of curved shapes

// plane-ellipsoid (phys_collide_plane_ellipsoid): n_l = R' n, sn = |S n_l|, dist = (c - p0).n - sn,
// x_l = -S^2 n_l / sn, pos = c + R x_l - n dist/2
static int d_plane_ellipsoid(vd_t* pos, vd_t* n, sd_t* dist, const dualCtx* x, int con) {
  if (con != 0) return -1;
  vd_t ax[3], p0 = in_centre(x, 0), c = in_centre(x, 1);
  box_axes(ax, x, 1);
  *n = in_axis(x, 0, 2);
  vd_t nl = dual_unrotate(ax, n), xl;
  sd_t s[3], sn = sd_const(0);
  for (int k = 0; k < 3; k++) {
    s[k] = in_size(x, 1, k);
    sd_t nk = vd_get(&nl, k);
    sd_t term = sd_mul(sd_mul(sd_mul(s[k], s[k]), nk), nk);
    sn = k == 0 ? term : sd_add(sn, term);
  }
  sn = sd_sqrt(sn);
  if (!(sn.v > 0)) return -1;
  vd_t t = vd_sub(c, &p0);
  *dist = sd_sub(vd_dot(&t, n), sn);
  for (int k = 0; k < 3; k++) vd_set(&xl, k, sd_div(sd_scl(sd_mul(sd_mul(s[k], s[k]), vd_get(&nl, k)), -1), sn));
  vd_t xr = dual_rotate(ax, &xl), q = vd_add(c, &xr);
  *pos = vd_axpy(q, sd_lscl(-0.5, *dist), n);
  return 0;
}

// plane-cylinder (phys_collide_plane_cylinder): u = -(n - (n.a) a)/|n - (n.a) a| (R e_x when the axis is
// along n; within 1e-6 rad of upright u turns with the body instead of with the tilt, whose direction is
// arbitrary there), v = a x u; the rim point the contact records (physid.h: EDGE c + 2 q, the cap c's centre
// c +- h a and the rim direction q: u, v, -u, -v) x = centre + r dir; dist = (x - p0).n, pos = x - n dist/2
static int d_plane_cylinder(vd_t* pos, vd_t* n, sd_t* dist, const dualCtx* x, int con) {
  (void)con;
  int f = tfeat(x, 1), cap = PHYS_FEATURE_INDEX(f) & 1, q = PHYS_FEATURE_INDEX(f) >> 1;
  if (PHYS_FEATURE_KIND(f) != PHYS_FEAT_EDGE || q > 3) return -1;
  vd_t p0 = in_centre(x, 0), c = in_centre(x, 1), a = in_axis(x, 1, 2), u;
  *n = in_axis(x, 0, 2);
  sd_t r = in_size(x, 1, 0), h = in_size(x, 1, 1);
  sd_t an = vd_dot(&a, n);
  u = vd_axpy(*n, sd_scl(an, -1), &a);
  double un = vd_norm(&u).v;
  if (un > 1e-6) {
    u = vd_unit(&u);
    u = vd_lscl(-1, u);
  } else {  // standing within 1e-6 rad of upright: u (its value as primitive.c's) held, turning with the body
    double uv[3];
    for (int k = 0; k < 3; k++) uv[k] = un > 1e-12 ? -(u.v[k] / un) : x->d->geom_xmat[9 * x->g[1] + 3 * k];
    u = vd_const(uv);
    rot_jac(&u, 1);
  }
  vd_t v = vd_cross(&a, &u);
  vd_t centre = vd_axpy(c, sd_lscl(cap ? 1 : -1, h), &a);
  vd_t xp = vd_axpy(centre, sd_lscl(q < 2 ? 1 : -1, r), q % 2 ? &v : &u);
  vd_t t = vd_sub(xp, &p0);
  *dist = vd_dot(&t, n);
  *pos = vd_axpy(xp, sd_lscl(-0.5, *dist), n);
  return 0;
}

//---------------------------------------------------------------------------------------------------------
// public

// sizes that enter the collision geometry
int phys_geom_nsize(int type) {
  switch (type) {
    case PHYS_GEOM_SPHERE: return 1;
    case PHYS_GEOM_CAPSULE: return 2;
    case PHYS_GEOM_CYLINDER: return 2;
    case PHYS_GEOM_ELLIPSOID: return 3;
    case PHYS_GEOM_BOX: return 3;
    default: return 0;
  }
}

// 12 pose columns plus both geoms' sizes
int phys_primitive_deriv_ncol(const physModel* m, int g1, int g2) {
  return 12 + phys_geom_nsize(m->geom_type[g1]) + phys_geom_nsize(m->geom_type[g2]);
}

// a pair's derivative: fills pos, n, dist of contact con (index pairs) or of the target (candidate pairs)
typedef int (*derivFn)(vd_t* pos, vd_t* n, sd_t* dist, const dualCtx* x, int con);

// the derivative of the type pair t1 <= t2, NULL if unsupported
static derivFn deriv_fn(int t1, int t2) {
  static const derivFn TABLE[PHYS_NGEOMTYPE][PHYS_NGEOMTYPE] = {
      [PHYS_GEOM_PLANE] = {[PHYS_GEOM_SPHERE] = d_plane_sphere,
                           [PHYS_GEOM_CAPSULE] = d_plane_capsule,
                           [PHYS_GEOM_ELLIPSOID] = d_plane_ellipsoid,
                           [PHYS_GEOM_CYLINDER] = d_plane_cylinder,
                           [PHYS_GEOM_BOX] = d_plane_box,
                           [PHYS_GEOM_MESH] = phys_dconvex_plane},
      [PHYS_GEOM_SPHERE] = {[PHYS_GEOM_SPHERE] = d_sphere_sphere,
                            [PHYS_GEOM_CAPSULE] = d_sphere_capsule,
                            [PHYS_GEOM_ELLIPSOID] = phys_dconvex_pair,
                            [PHYS_GEOM_CYLINDER] = d_sphere_cylinder,
                            [PHYS_GEOM_BOX] = d_sphere_box,
                            [PHYS_GEOM_MESH] = phys_dconvex_pair},
      [PHYS_GEOM_CAPSULE] = {[PHYS_GEOM_CAPSULE] = d_capsule_capsule,
                             [PHYS_GEOM_ELLIPSOID] = phys_dconvex_pair,
                             [PHYS_GEOM_CYLINDER] = phys_dconvex_pair,
                             [PHYS_GEOM_BOX] = d_capsule_box,
                             [PHYS_GEOM_MESH] = phys_dconvex_pair},
      [PHYS_GEOM_ELLIPSOID] = {[PHYS_GEOM_ELLIPSOID] = phys_dconvex_pair,
                               [PHYS_GEOM_CYLINDER] = phys_dconvex_pair,
                               [PHYS_GEOM_BOX] = phys_dconvex_pair,
                               [PHYS_GEOM_MESH] = phys_dconvex_pair},
      [PHYS_GEOM_CYLINDER] = {[PHYS_GEOM_CYLINDER] = phys_dconvex_pair,
                              [PHYS_GEOM_BOX] = phys_dconvex_pair,
                              [PHYS_GEOM_MESH] = phys_dconvex_pair},
      [PHYS_GEOM_BOX] = {[PHYS_GEOM_BOX] = d_box_box, [PHYS_GEOM_MESH] = phys_dconvex_pair},
      [PHYS_GEOM_MESH] = {[PHYS_GEOM_MESH] = phys_dconvex_pair},
  };
  if (t1 < 0 || t2 < t1 || t2 >= PHYS_NGEOMTYPE) return NULL;
  return TABLE[t1][t2];
}

// the pair function's contact con at the margin is the target; the derivative's value must reproduce it
// (pos, dist and normal to 1e-9 of the geoms' size), else the feature was not identified and -1 is returned
int phys_primitive_deriv_margin(double* jac, const physModel* m, const physData* d, int g1, int g2, int con,
                                double margin) {
  int t1 = m->geom_type[g1], t2 = m->geom_type[g2], swap;
  physCollideFn fn = phys_collide_fn(t1, t2, &swap);
  if (!deriv_fn(t1, t2) || !fn || swap || con < 0 || con >= PHYS_MAXPAIRCON) return -1;
  physContact out[PHYS_MAXPAIRCON];
  return phys_primitive_deriv_out(jac, m, d, g1, g2, con, out, fn(m, d, g1, g2, margin, out));
}

// the derivative's value (pos, n, dist) checked against the target contact c (to 1e-9 of the geoms' size),
// then its Jacobian into jac (7 x ncol); -1 (jac untouched) if it does not reproduce c
static int deriv_store(double* jac, const physModel* m, const dualCtx* x, const vd_t* pos, const vd_t* n,
                       const sd_t* dist, const physContact* c) {
  int g1 = x->g[0], g2 = x->g[1];
  double tol = 1e-9 * (1 + m->geom_rbound[g1] + m->geom_rbound[g2]), e = target_gap(x, pos->v, dist->v);
  for (int k = 0; k < 3; k++) e = fmax(e, fabs(n->v[k] - c->frame[k]));
  if (!(e <= tol)) return -1;
  int ncol = phys_primitive_deriv_ncol(m, g1, g2);
  for (int j = 0; j < ncol; j++) {
    for (int k = 0; k < 3; k++) jac[k * ncol + j] = pos->J[k][j], jac[(3 + k) * ncol + j] = n->J[k][j];
    jac[6 * ncol + j] = dist->J[j];
  }
  return 0;
}

int phys_primitive_deriv_out(double* jac, const physModel* m, const physData* d, int g1, int g2, int con,
                             const physContact* out, int nout) {
  int t1 = m->geom_type[g1], t2 = m->geom_type[g2], swap;
  derivFn f = deriv_fn(t1, t2);
  physCollideFn fn = phys_collide_fn(t1, t2, &swap);
  if (!f || !fn || swap || con < 0 || con >= nout) return -1;
  dualCtx x = {m, d, {g1, g2}, {12, 12 + phys_geom_nsize(t1)}, out[con].pos, out[con].dist, out[con].feature,
               out + con};
  vd_t pos, n;
  sd_t dist;
  if (f(&pos, &n, &dist, &x, con)) return -1;
  return deriv_store(jac, m, &x, &pos, &n, &dist, out + con);
}

// GJK/EPA pairs: phys_dconvex_pair_all's values and Jacobians, each checked as phys_primitive_deriv_out
// checks it; every other pair contact by contact
int phys_primitive_deriv_all(double* jac, int* rc, const physModel* m, const physData* d, int g1, int g2,
                             const physContact* out, int nout) {
  int t1 = m->geom_type[g1], t2 = m->geom_type[g2], swap, ncol = phys_primitive_deriv_ncol(m, g1, g2), bad = 0;
  physCollideFn fn = phys_collide_fn(t1, t2, &swap);
  if (deriv_fn(t1, t2) != phys_dconvex_pair || !fn || swap || nout > PHYS_MAXPAIRCON) {
    for (int k = 0; k < nout; k++)
      bad |= rc[k] = phys_primitive_deriv_out(jac + 7 * ncol * k, m, d, g1, g2, k, out, nout);
    return bad ? -1 : 0;
  }
  vd_t pos[PHYS_MAXPAIRCON], n[PHYS_MAXPAIRCON];
  sd_t dist[PHYS_MAXPAIRCON];
  dualCtx x = {m, d, {g1, g2}, {12, 12 + phys_geom_nsize(t1)}, NULL, 0, NULL, NULL};
  phys_dconvex_pair_all(pos, n, dist, rc, &x, out, nout);
  for (int k = 0; k < nout; k++) {
    x.tpos = out[k].pos, x.tdist = out[k].dist, x.tfeat = out[k].feature, x.tc = out + k;
    if (!rc[k]) rc[k] = deriv_store(jac + 7 * ncol * k, m, &x, pos + k, n + k, dist + k, out + k);
    bad |= rc[k];
  }
  return bad ? -1 : 0;
}

// every candidate the pair function can emit (unbounded margin)
int phys_primitive_deriv(double* jac, const physModel* m, const physData* d, int g1, int g2, int con) {
  return phys_primitive_deriv_margin(jac, m, d, g1, g2, con, INFINITY);
}
