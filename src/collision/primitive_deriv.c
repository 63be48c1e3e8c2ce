// primitive_deriv.c - Jacobians of the contact geometry of primitive pairs (see primitive_deriv.h).
//
// Method: every pair formula of primitive.c is re-evaluated on values that carry their Jacobian with
// respect to the NCOL inputs (forward-mode differentiation written out by hand, exact to roundoff):
//  - a geom centre c: dc = dt, so dc/dt = I;
//  - a local axis k in world, a = R e_k: under R -> exp([dw]x) R, da = dw x a = -[a]x dw, so da/dw = -[a]x;
//  - a size s_j: ds/ds_j = 1.
// The contact point definition is the one of primitive.c: pos midway between the surface points, normal
// from g1 to g2, dist the signed surface distance. The feature (capsule end, box corner, clamped or interior
// closest point) is chosen from the current values exactly as primitive.c chooses it, then held fixed.
#include "primitive_deriv.h"

#include <math.h>
#include <string.h>

#include "primitive.h"

#define NCOL 18  // 12 pose columns + at most 3 + 3 sizes

// a scalar and its gradient row
typedef struct {
  double v, J[NCOL];
} sd_t;

// a 3-vector and its 3 x NCOL Jacobian
typedef struct {
  double v[3], J[3][NCOL];
} vd_t;

//---------------------------------------------------------------------------------------------------------
// arithmetic on values with Jacobians

// constant scalar
static sd_t sd_const(double v) {
  sd_t r;
  memset(&r, 0, sizeof(r));
  r.v = v;
  return r;
}

// a + b
static sd_t sd_add(sd_t a, sd_t b) {
  for (int j = 0; j < NCOL; j++) a.J[j] += b.J[j];
  a.v += b.v;
  return a;
}

// a - b
static sd_t sd_sub(sd_t a, sd_t b) {
  for (int j = 0; j < NCOL; j++) a.J[j] -= b.J[j];
  a.v -= b.v;
  return a;
}

// a * b: d(ab) = b da + a db
static sd_t sd_mul(sd_t a, sd_t b) {
  sd_t r;
  r.v = a.v * b.v;
  for (int j = 0; j < NCOL; j++) r.J[j] = b.v * a.J[j] + a.v * b.J[j];
  return r;
}

// a * k for a constant k
static sd_t sd_scl(sd_t a, double k) {
  a.v *= k;
  for (int j = 0; j < NCOL; j++) a.J[j] *= k;
  return a;
}

// a / b: d(a/b) = (da - (a/b) db)/b
static sd_t sd_div(sd_t a, sd_t b) {
  sd_t r;
  r.v = a.v / b.v;
  for (int j = 0; j < NCOL; j++) r.J[j] = (a.J[j] - r.v * b.J[j]) / b.v;
  return r;
}

// sqrt(a): d sqrt(a) = da / (2 sqrt(a))
static sd_t sd_sqrt(sd_t a) {
  sd_t r;
  r.v = sqrt(a.v);
  for (int j = 0; j < NCOL; j++) r.J[j] = a.J[j] / (2 * r.v);
  return r;
}

// a + b
static vd_t vd_add(vd_t a, const vd_t* b) {
  for (int k = 0; k < 3; k++) {
    a.v[k] += b->v[k];
    for (int j = 0; j < NCOL; j++) a.J[k][j] += b->J[k][j];
  }
  return a;
}

// a - b
static vd_t vd_sub(vd_t a, const vd_t* b) {
  for (int k = 0; k < 3; k++) {
    a.v[k] -= b->v[k];
    for (int j = 0; j < NCOL; j++) a.J[k][j] -= b->J[k][j];
  }
  return a;
}

// s b (scalar with Jacobian): d(s b) = b ds + s db
static vd_t vd_scl(sd_t s, const vd_t* b) {
  vd_t r;
  for (int k = 0; k < 3; k++) {
    r.v[k] = s.v * b->v[k];
    for (int j = 0; j < NCOL; j++) r.J[k][j] = b->v[k] * s.J[j] + s.v * b->J[k][j];
  }
  return r;
}

// a + s b
static vd_t vd_axpy(vd_t a, sd_t s, const vd_t* b) {
  vd_t t = vd_scl(s, b);
  return vd_add(a, &t);
}

// a . b: d(a.b) = b' da + a' db
static sd_t vd_dot(const vd_t* a, const vd_t* b) {
  sd_t r;
  r.v = a->v[0] * b->v[0] + a->v[1] * b->v[1] + a->v[2] * b->v[2];
  for (int j = 0; j < NCOL; j++) {
    r.J[j] = 0;
    for (int k = 0; k < 3; k++) r.J[j] += b->v[k] * a->J[k][j] + a->v[k] * b->J[k][j];
  }
  return r;
}

//---------------------------------------------------------------------------------------------------------
// inputs

// column offsets: pose of geom i (0 or 1) at 6 i, its sizes at 12 (+ nsize1 for geom 1)
typedef struct {
  const physModel* m;
  const physData* d;
  int g[2], sizecol[2];
} ctx_t;

// centre of geom i: dc/dt_i = I
static vd_t in_centre(const ctx_t* x, int i) {
  vd_t r;
  memset(&r, 0, sizeof(r));
  for (int k = 0; k < 3; k++) {
    r.v[k] = x->d->geom_xpos[3 * x->g[i] + k];
    r.J[k][6 * i + k] = 1;
  }
  return r;
}

// local axis k of geom i in world, a = R e_k: da/dw_i = -[a]x
static vd_t in_axis(const ctx_t* x, int i, int k) {
  vd_t r;
  memset(&r, 0, sizeof(r));
  const double* R = x->d->geom_xmat + 9 * x->g[i];
  for (int j = 0; j < 3; j++) r.v[j] = R[3 * j + k];
  double* a = r.v;
  int w = 6 * i + 3;
  // -[a]x = [[0, a2, -a1], [-a2, 0, a0], [a1, -a0, 0]]
  r.J[0][w + 1] = a[2], r.J[0][w + 2] = -a[1];
  r.J[1][w + 0] = -a[2], r.J[1][w + 2] = a[0];
  r.J[2][w + 0] = a[1], r.J[2][w + 1] = -a[0];
  return r;
}

// size j of geom i
static sd_t in_size(const ctx_t* x, int i, int j) {
  sd_t r = sd_const(x->m->geom_size[3 * x->g[i] + j]);
  r.J[x->sizecol[i] + j] = 1;
  return r;
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
static int d_plane_sphere(vd_t* pos, vd_t* n, sd_t* dist, const ctx_t* x, int con) {
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
static int d_sphere_sphere(vd_t* pos, vd_t* n, sd_t* dist, const ctx_t* x, int con) {
  if (con != 0) return -1;
  vd_t c1 = in_centre(x, 0), c2 = in_centre(x, 1);
  return d_sphere_pair(pos, n, dist, &c1, in_size(x, 0, 0), &c2, in_size(x, 1, 0));
}

// plane-capsule: end e = c +- h a, dist = (c - p0).n - r +- h a.n, pos = e - n (r + dist/2); contact `con`
// is the con-th deepest end (stable order: the +h end first on ties), as primitive.c emits them
static int d_plane_capsule(vd_t* pos, vd_t* n, sd_t* dist, const ctx_t* x, int con) {
  vd_t p0 = in_centre(x, 0), c = in_centre(x, 1), a = in_axis(x, 1, 2);
  *n = in_axis(x, 0, 2);
  sd_t r = in_size(x, 1, 0), h = in_size(x, 1, 1);
  int nend = h.v > 0 ? 2 : 1;
  if (con < 0 || con >= nend) return -1;
  vd_t t = vd_sub(c, &p0);
  sd_t hc = sd_sub(vd_dot(&t, n), r), ha = sd_mul(h, vd_dot(&a, n));
  int first = (nend == 2 && hc.v - ha.v < hc.v + ha.v) ? 1 : 0;  // end 1 (-h) strictly deeper goes first
  int end = con == 0 ? first : 1 - first;
  double sg = end == 0 ? 1 : -1;
  *dist = sd_add(hc, sd_scl(ha, sg));
  vd_t e = vd_axpy(c, sd_scl(h, sg), &a);
  *pos = vd_axpy(e, sd_scl(sd_add(r, sd_scl(*dist, 0.5)), -1), n);
  return 0;
}

// sphere-capsule: q = c2 + clamp(a.(c1 - c2), -h, h) a, then the sphere pair (c1, r1), (q, r2)
static int d_sphere_capsule(vd_t* pos, vd_t* n, sd_t* dist, const ctx_t* x, int con) {
  if (con != 0) return -1;
  vd_t c1 = in_centre(x, 0), c2 = in_centre(x, 1), a = in_axis(x, 1, 2);
  sd_t h = in_size(x, 1, 1);
  vd_t t = vd_sub(c1, &c2);
  sd_t pr = vd_dot(&a, &t);
  if (pr.v > h.v) pr = h;
  if (pr.v < -h.v) pr = sd_scl(h, -1);
  vd_t q = vd_axpy(c2, pr, &a);
  return d_sphere_pair(pos, n, dist, &c1, in_size(x, 0, 0), &q, in_size(x, 1, 0));
}

// capsule-capsule, first contact: segments p0 + s u, q0 + t w (p0 = c1 - h1 a1, u = 2 h1 a1, likewise
// for geom 2); s, t from phys_segment_closest, then with r = p0 - q0, a = u.u, b = u.w, c = u.r, e = w.w,
// f = w.r: both interior s = (b f - c e)/(a e - b^2), t = (b s + f)/e; s clamped t = (b s + f)/e;
// t clamped s = (b t - c)/a; both clamped constant. Then the sphere pair at P = p0 + s u, Q = q0 + t w.
static int d_capsule_capsule(vd_t* pos, vd_t* n, sd_t* dist, const ctx_t* x, int con) {
  if (con != 0) return -1;
  vd_t c1 = in_centre(x, 0), c2 = in_centre(x, 1), a1 = in_axis(x, 0, 2), a2 = in_axis(x, 1, 2);
  sd_t h1 = in_size(x, 0, 1), h2 = in_size(x, 1, 1);
  vd_t p0 = vd_axpy(c1, sd_scl(h1, -1), &a1), q0 = vd_axpy(c2, sd_scl(h2, -1), &a2);
  vd_t u = vd_scl(sd_scl(h1, 2), &a1), w = vd_scl(sd_scl(h2, 2), &a2);
  double s, t;
  phys_segment_closest(&s, &t, p0.v, u.v, q0.v, w.v);
  vd_t r = vd_sub(p0, &q0);
  sd_t A = vd_dot(&u, &u), B = vd_dot(&u, &w), C = vd_dot(&u, &r), E = vd_dot(&w, &w), F = vd_dot(&w, &r);
  sd_t den = sd_sub(sd_mul(A, E), sd_mul(B, B));
  if (!(A.v > 0 && E.v > 0 && den.v > 1e-12 * A.v * E.v)) return -1;  // parallel or point segments
  int sfree = s > 0 && s < 1, tfree = t > 0 && t < 1;
  sd_t S = sd_const(s), T = sd_const(t);
  if (sfree && tfree) {
    S = sd_div(sd_sub(sd_mul(B, F), sd_mul(C, E)), den);
    T = sd_div(sd_add(sd_mul(B, S), F), E);
  } else if (tfree) {
    T = sd_div(sd_add(sd_mul(B, S), F), E);
  } else if (sfree) {
    S = sd_div(sd_sub(sd_mul(B, T), C), A);
  }
  vd_t P = vd_axpy(p0, S, &u), Q = vd_axpy(q0, T, &w);
  return d_sphere_pair(pos, n, dist, &P, in_size(x, 0, 0), &Q, in_size(x, 1, 0));
}

// plane-box: corner i at x = c + sum_k (+-s_k) a_k, dist = (x - p0).n, pos = x - n dist/2; contact `con`
// is the con-th deepest corner (stable order on ties, corner index i as in primitive.c)
static int d_plane_box(vd_t* pos, vd_t* n, sd_t* dist, const ctx_t* x, int con) {
  if (con < 0 || con >= 4) return -1;
  vd_t p0 = in_centre(x, 0), c = in_centre(x, 1), ax[3];
  *n = in_axis(x, 0, 2);
  for (int k = 0; k < 3; k++) ax[k] = in_axis(x, 1, k);
  const double *R = x->d->geom_xmat + 9 * x->g[1], *sz = x->m->geom_size + 3 * x->g[1];
  double h[8];
  int order[8];
  for (int i = 0; i < 8; i++) {  // corner heights, values only
    double xl[3] = {(i & 1) ? sz[0] : -sz[0], (i & 2) ? sz[1] : -sz[1], (i & 4) ? sz[2] : -sz[2]};
    h[i] = 0;
    for (int j = 0; j < 3; j++) {
      double xw = c.v[j] - p0.v[j] + R[3 * j] * xl[0] + R[3 * j + 1] * xl[1] + R[3 * j + 2] * xl[2];
      h[i] += xw * n->v[j];
    }
    int j = i - 1;  // stable insertion by height
    while (j >= 0 && h[order[j]] > h[i]) {
      order[j + 1] = order[j];
      j--;
    }
    order[j + 1] = i;
  }
  int i = order[con];
  vd_t xw = c;
  for (int k = 0; k < 3; k++) xw = vd_axpy(xw, sd_scl(in_size(x, 1, k), (i >> k) & 1 ? 1 : -1), &ax[k]);
  vd_t t = vd_sub(xw, &p0);
  *dist = vd_dot(&t, n);
  *pos = vd_axpy(xw, sd_scl(*dist, -0.5), n);
  return 0;
}

//---------------------------------------------------------------------------------------------------------
// public

// sizes that enter the collision geometry
int phys_geom_nsize(int type) {
  switch (type) {
    case PHYS_GEOM_SPHERE: return 1;
    case PHYS_GEOM_CAPSULE: return 2;
    case PHYS_GEOM_BOX: return 3;
    default: return 0;
  }
}

// 12 pose columns plus both geoms' sizes
int phys_primitive_deriv_ncol(const physModel* m, int g1, int g2) {
  return 12 + phys_geom_nsize(m->geom_type[g1]) + phys_geom_nsize(m->geom_type[g2]);
}

// dispatch on the type pair, then copy pos, n, dist rows into the 7 x ncol matrix
int phys_primitive_deriv(double* jac, const physModel* m, const physData* d, int g1, int g2, int con) {
  int t1 = m->geom_type[g1], t2 = m->geom_type[g2];
  ctx_t x = {m, d, {g1, g2}, {12, 12 + phys_geom_nsize(t1)}};
  vd_t pos, n;
  sd_t dist;
  int rc = -1;
  if (t1 == PHYS_GEOM_PLANE && t2 == PHYS_GEOM_SPHERE) rc = d_plane_sphere(&pos, &n, &dist, &x, con);
  else if (t1 == PHYS_GEOM_SPHERE && t2 == PHYS_GEOM_SPHERE) rc = d_sphere_sphere(&pos, &n, &dist, &x, con);
  else if (t1 == PHYS_GEOM_PLANE && t2 == PHYS_GEOM_CAPSULE) rc = d_plane_capsule(&pos, &n, &dist, &x, con);
  else if (t1 == PHYS_GEOM_SPHERE && t2 == PHYS_GEOM_CAPSULE) rc = d_sphere_capsule(&pos, &n, &dist, &x, con);
  else if (t1 == PHYS_GEOM_CAPSULE && t2 == PHYS_GEOM_CAPSULE) rc = d_capsule_capsule(&pos, &n, &dist, &x, con);
  else if (t1 == PHYS_GEOM_PLANE && t2 == PHYS_GEOM_BOX) rc = d_plane_box(&pos, &n, &dist, &x, con);
  if (rc) return -1;
  int ncol = phys_primitive_deriv_ncol(m, g1, g2);
  for (int j = 0; j < ncol; j++) {
    for (int k = 0; k < 3; k++) jac[k * ncol + j] = pos.J[k][j], jac[(3 + k) * ncol + j] = n.J[k][j];
    jac[6 * ncol + j] = dist.J[j];
  }
  return 0;
}
