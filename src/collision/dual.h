// dual.h - values that carry their Jacobian with respect to the inputs of a contact-geometry derivative
// (primitive_deriv.c, convex_deriv.c): forward-mode differentiation written out by hand, exact to roundoff.
//
// Inputs (NCOL columns, primitive_deriv.h): the twists of both geoms [dt1, dw1, dt2, dw2] and their sizes:
//  - a geom centre c: dc = dt, so dc/dt = I;
//  - a local axis k in world, a = R e_k: under R -> exp([dw]x) R, da = dw x a = -[a]x dw, so da/dw = -[a]x;
//  - a point fixed in geom i, x = c + R x_l: dx/dt = I, dx/dw = -[R x_l]x;
//  - a size s_j: ds/ds_j = 1.
// Every operation computes its value with the same floating-point operations, in the same order, as the
// pair functions (primitive.c, convex.c) compute theirs, so the value half reproduces their decisions.
#ifndef PHYS_DUAL_H
#define PHYS_DUAL_H

#include <math.h>
#include <string.h>

#include "physid.h"

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
// scalars

// constant scalar
static inline sd_t sd_const(double v) {
  sd_t r;
  memset(&r, 0, sizeof(r));
  r.v = v;
  return r;
}

// a + b
static inline sd_t sd_add(sd_t a, sd_t b) {
  for (int j = 0; j < NCOL; j++) a.J[j] += b.J[j];
  a.v += b.v;
  return a;
}

// a - b
static inline sd_t sd_sub(sd_t a, sd_t b) {
  for (int j = 0; j < NCOL; j++) a.J[j] -= b.J[j];
  a.v -= b.v;
  return a;
}

// a * b: d(ab) = b da + a db
static inline sd_t sd_mul(sd_t a, sd_t b) {
  sd_t r;
  r.v = a.v * b.v;
  for (int j = 0; j < NCOL; j++) r.J[j] = b.v * a.J[j] + a.v * b.J[j];
  return r;
}

// a * k for a constant k
static inline sd_t sd_scl(sd_t a, double k) {
  a.v *= k;
  for (int j = 0; j < NCOL; j++) a.J[j] *= k;
  return a;
}

// k * a for a constant k (value k * a.v, the operand order of the primal k * x)
static inline sd_t sd_lscl(double k, sd_t a) {
  a.v = k * a.v;
  for (int j = 0; j < NCOL; j++) a.J[j] *= k;
  return a;
}

// a / b: d(a/b) = (da - (a/b) db)/b
static inline sd_t sd_div(sd_t a, sd_t b) {
  sd_t r;
  r.v = a.v / b.v;
  for (int j = 0; j < NCOL; j++) r.J[j] = (a.J[j] - r.v * b.J[j]) / b.v;
  return r;
}

// sqrt(a): d sqrt(a) = da / (2 sqrt(a))
static inline sd_t sd_sqrt(sd_t a) {
  sd_t r;
  r.v = sqrt(a.v);
  for (int j = 0; j < NCOL; j++) r.J[j] = a.J[j] / (2 * r.v);
  return r;
}

// |a| with the sign held at its current value: d|a| = sgn(a) da (sgn(0) = +1)
static inline sd_t sd_abs(sd_t a) { return a.v < 0 ? sd_scl(a, -1) : a; }

//---------------------------------------------------------------------------------------------------------
// 3-vectors

// constant vector
static inline vd_t vd_const(const double v[3]) {
  vd_t r;
  memset(&r, 0, sizeof(r));
  for (int k = 0; k < 3; k++) r.v[k] = v[k];
  return r;
}

// component k as a scalar
static inline sd_t vd_get(const vd_t* a, int k) {
  sd_t r;
  r.v = a->v[k];
  memcpy(r.J, a->J[k], sizeof(r.J));
  return r;
}

// set component k from a scalar
static inline void vd_set(vd_t* a, int k, sd_t s) {
  a->v[k] = s.v;
  memcpy(a->J[k], s.J, sizeof(s.J));
}

// a + b
static inline vd_t vd_add(vd_t a, const vd_t* b) {
  for (int k = 0; k < 3; k++) {
    a.v[k] += b->v[k];
    for (int j = 0; j < NCOL; j++) a.J[k][j] += b->J[k][j];
  }
  return a;
}

// a - b
static inline vd_t vd_sub(vd_t a, const vd_t* b) {
  for (int k = 0; k < 3; k++) {
    a.v[k] -= b->v[k];
    for (int j = 0; j < NCOL; j++) a.J[k][j] -= b->J[k][j];
  }
  return a;
}

// s b (scalar with Jacobian): d(s b) = b ds + s db
static inline vd_t vd_scl(sd_t s, const vd_t* b) {
  vd_t r;
  for (int k = 0; k < 3; k++) {
    r.v[k] = s.v * b->v[k];
    for (int j = 0; j < NCOL; j++) r.J[k][j] = b->v[k] * s.J[j] + s.v * b->J[k][j];
  }
  return r;
}

// b s (value b_k * s, the operand order of the primal b[k] * s)
static inline vd_t vd_rscl(const vd_t* b, sd_t s) {
  vd_t r;
  for (int k = 0; k < 3; k++) {
    r.v[k] = b->v[k] * s.v;
    for (int j = 0; j < NCOL; j++) r.J[k][j] = b->v[k] * s.J[j] + s.v * b->J[k][j];
  }
  return r;
}

// k a for a constant k (value k * a_k)
static inline vd_t vd_lscl(double k, vd_t a) {
  for (int i = 0; i < 3; i++) {
    a.v[i] = k * a.v[i];
    for (int j = 0; j < NCOL; j++) a.J[i][j] *= k;
  }
  return a;
}

// a + s b (value a_k + s * b_k, as phys_addscl3)
static inline vd_t vd_axpy(vd_t a, sd_t s, const vd_t* b) {
  vd_t t = vd_scl(s, b);
  return vd_add(a, &t);
}

// a . b: d(a.b) = b' da + a' db
static inline sd_t vd_dot(const vd_t* a, const vd_t* b) {
  sd_t r;
  r.v = a->v[0] * b->v[0] + a->v[1] * b->v[1] + a->v[2] * b->v[2];
  for (int j = 0; j < NCOL; j++) {
    r.J[j] = 0;
    for (int k = 0; k < 3; k++) r.J[j] += b->v[k] * a->J[k][j] + a->v[k] * b->J[k][j];
  }
  return r;
}

// a x b: d(a x b) = da x b + a x db
static inline vd_t vd_cross(const vd_t* a, const vd_t* b) {
  vd_t r;
  for (int k = 0; k < 3; k++) {
    int k1 = (k + 1) % 3, k2 = (k + 2) % 3;
    r.v[k] = a->v[k1] * b->v[k2] - a->v[k2] * b->v[k1];
    for (int j = 0; j < NCOL; j++)
      r.J[k][j] = a->J[k1][j] * b->v[k2] + a->v[k1] * b->J[k2][j] - a->J[k2][j] * b->v[k1] - a->v[k2] * b->J[k1][j];
  }
  return r;
}

// |a|
static inline sd_t vd_norm(const vd_t* a) { return sd_sqrt(vd_dot(a, a)); }

// a / |a| (value a_k / |a|, as the pair functions normalize)
static inline vd_t vd_unit(const vd_t* a) {
  sd_t len = vd_norm(a);
  vd_t r;
  for (int k = 0; k < 3; k++) vd_set(&r, k, sd_div(vd_get(a, k), len));
  return r;
}

//---------------------------------------------------------------------------------------------------------
// inputs

// the pair being differentiated: column offsets (pose of geom i at 6 i, its sizes at sizecol[i])
typedef struct {
  const physModel* m;
  const physData* d;
  int g[2], sizecol[2];
  const double* tpos;  // target contact: its pos (3) and dist, as the pair function wrote it
  double tdist;
  const int* tfeat;    // and its features (g[0]'s, g[1]'s: physid.h), NULL if not given
  const physContact* tc;   // the target contact itself (its normal and witness record), NULL if not given
} dualCtx;

// centre of geom i: dc/dt_i = I
static inline vd_t in_centre(const dualCtx* x, int i) {
  vd_t r;
  memset(&r, 0, sizeof(r));
  for (int k = 0; k < 3; k++) {
    r.v[k] = x->d->geom_xpos[3 * x->g[i] + k];
    r.J[k][6 * i + k] = 1;
  }
  return r;
}

// rows of da/dw_i = -[a]x for a vector a turning with geom i (columns 6 i + 3 ..)
static inline void rot_jac(vd_t* r, int i) {
  const double* a = r->v;
  int w = 6 * i + 3;
  // -[a]x = [[0, a2, -a1], [-a2, 0, a0], [a1, -a0, 0]]
  r->J[0][w + 1] += a[2], r->J[0][w + 2] += -a[1];
  r->J[1][w + 0] += -a[2], r->J[1][w + 2] += a[0];
  r->J[2][w + 0] += a[1], r->J[2][w + 1] += -a[0];
}

// local axis k of geom i in world, a = R e_k: da/dw_i = -[a]x
static inline vd_t in_axis(const dualCtx* x, int i, int k) {
  vd_t r;
  memset(&r, 0, sizeof(r));
  const double* R = x->d->geom_xmat + 9 * x->g[i];
  for (int j = 0; j < 3; j++) r.v[j] = R[3 * j + k];
  rot_jac(&r, i);
  return r;
}

// a point fixed in geom i (local xl, no size dependence): x = c + R xl (value as phys_mat_vec3 then + c),
// dx/dt_i = I, dx/dw_i = -[R xl]x
static inline vd_t in_point(const dualCtx* x, int i, const double xl[3]) {
  vd_t r;
  memset(&r, 0, sizeof(r));
  const double *R = x->d->geom_xmat + 9 * x->g[i], *c = x->d->geom_xpos + 3 * x->g[i];
  double t[3];
  for (int j = 0; j < 3; j++) t[j] = R[3 * j] * xl[0] + R[3 * j + 1] * xl[1] + R[3 * j + 2] * xl[2];
  memcpy(r.v, t, sizeof(t));
  rot_jac(&r, i);
  for (int j = 0; j < 3; j++) r.v[j] = t[j] + c[j], r.J[j][6 * i + j] = 1;
  return r;
}

// size j of geom i
static inline sd_t in_size(const dualCtx* x, int i, int j) {
  sd_t r = sd_const(x->m->geom_size[3 * x->g[i] + j]);
  r.J[x->sizecol[i] + j] = 1;
  return r;
}

// world vector of a geom-frame vector v given the world axes ax[3] of the geom: sum_k ax_k v_k (value as
// phys_mat_vec3: ax0 v0 + ax1 v1 + ax2 v2 per row)
static inline vd_t dual_rotate(const vd_t ax[3], const vd_t* v) {
  vd_t r;
  for (int k = 0; k < 3; k++) {
    sd_t s = sd_mul(vd_get(&ax[0], k), vd_get(v, 0));
    s = sd_add(s, sd_mul(vd_get(&ax[1], k), vd_get(v, 1)));
    s = sd_add(s, sd_mul(vd_get(&ax[2], k), vd_get(v, 2)));
    vd_set(&r, k, s);
  }
  return r;
}

// geom-frame vector of a world vector w: v_k = ax_k . w (value as phys_matT_vec3)
static inline vd_t dual_unrotate(const vd_t ax[3], const vd_t* w) {
  vd_t r;
  for (int k = 0; k < 3; k++) vd_set(&r, k, vd_dot(&ax[k], w));
  return r;
}

#endif  // PHYS_DUAL_H
