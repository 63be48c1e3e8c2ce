// geom_deriv_check.h - checks shared by the contact-geometry derivative tests (test_primitive_deriv.c,
// test_convex_deriv.c): the pair functions evaluated under pose twists of geom_xpos / geom_xmat and size
// changes, fourth-order central differences, rigid-motion invariance, swapped geoms. The including test
// defines M, D (its model and data) before including this file.
#ifndef PHYS_GEOM_DERIV_CHECK_H
#define PHYS_GEOM_DERIV_CHECK_H

#include <math.h>
#include <string.h>

#include "collision.h"
#include "primitive_deriv.h"
#include "rng.h"
#include "rot.h"
#include "test.h"

static physRng RNG;
static double MARGIN = 100;  // detection margin of the pair functions in eval
static double WORST = 0;  // worst FD mismatch |an - fd| / max(|an|, |fd|, 1e-3)

static double FDSTEP = 1e-5;     // finite-difference step (larger for pair functions with EPA-level noise)
static double RIGID_TOL = 1e-12; // rigid-motion check (absolute; larger where the pair function is noisier)
#define RTOL 1e-6
// entries are compared relative to max(|an|, |fd|, FLOOR): Jacobian entries are O(1) (unit-scale poses and
// sizes), and the pair functions' own roundoff (~1e-14 through the closest-point solve and the rotation
// composition) divided by the step gives ~1e-9 absolute noise in the difference quotient, so entries
// below 1e-2 are checked to 1e-8 absolute
static double FLOOR = 1e-2;

// random unit quaternion
static inline void rand_quat(double q[4]) {
  for (int k = 0; k < 4; k++) q[k] = phys_rng_range(&RNG, -1, 1);
  phys_quat_normalize(q);
}

// geom g: type, sizes, random rotation, position pos
static inline void set_geom(int g, int type, double s0, double s1, double s2, const double pos[3]) {
  double q[4];
  rand_quat(q);
  M->geom_type[g] = type;
  M->geom_size[3 * g] = s0, M->geom_size[3 * g + 1] = s1, M->geom_size[3 * g + 2] = s2;
  memcpy(D->geom_xpos + 3 * g, pos, sizeof(double) * 3);
  phys_quat2mat(D->geom_xmat + 9 * g, q);
}

// apply the twist dt, dw to geom g: xpos += dt, xmat = exp([dw]x) xmat
static inline void twist(int g, const double dt[3], const double dw[3]) {
  double q[4], Rq[9], R[9], ang = phys_norm3(dw), ax[3];
  for (int k = 0; k < 3; k++) D->geom_xpos[3 * g + k] += dt[k];
  if (ang == 0) return;
  for (int k = 0; k < 3; k++) ax[k] = dw[k] / ang;
  phys_axisangle2quat(q, ax, ang);
  phys_quat2mat(Rq, q);
  phys_mat_mul3(R, Rq, D->geom_xmat + 9 * g);
  memcpy(D->geom_xmat + 9 * g, R, sizeof(R));
}

// output (pos, n, dist) of contact con of the pair function; returns the contact count
static inline int eval(double y[7], physCollideFn fn, int g1, int g2, int con) {
  physContact c[PHYS_MAXPAIRCON];
  int nc = fn(M, D, g1, g2, MARGIN, c);
  if (con >= nc) return nc;
  memcpy(y, c[con].pos, sizeof(double) * 3);
  memcpy(y + 3, c[con].frame, sizeof(double) * 3);
  y[6] = c[con].dist;
  return nc;
}

// perturb input column j of the pair (g1, g2) by eps (poses: twist, sizes: model)
static inline void perturb(int g1, int g2, int j, double eps) {
  int ns1 = phys_geom_nsize(M->geom_type[g1]);
  if (j < 12) {
    double dt[3] = {0, 0, 0}, dw[3] = {0, 0, 0};
    if (j % 6 < 3) dt[j % 3] = eps;
    else dw[j % 3] = eps;
    twist(j < 6 ? g1 : g2, dt, dw);
  } else if (j < 12 + ns1) {
    M->geom_size[3 * g1 + j - 12] += eps;
  } else {
    M->geom_size[3 * g2 + j - 12 - ns1] += eps;
  }
}

// the inputs of a pair (poses and sizes of both geoms), kept to be put back after a perturbation
typedef struct {
  int g[2];
  double xpos[2][3], xmat[2][9], size[2][3];
} pairInputs;

static inline void inputs_save(pairInputs* s, int g1, int g2) {
  s->g[0] = g1, s->g[1] = g2;
  for (int i = 0; i < 2; i++) {
    memcpy(s->xpos[i], D->geom_xpos + 3 * s->g[i], sizeof(s->xpos[i]));
    memcpy(s->xmat[i], D->geom_xmat + 9 * s->g[i], sizeof(s->xmat[i]));
    memcpy(s->size[i], M->geom_size + 3 * s->g[i], sizeof(s->size[i]));
  }
}

static inline void inputs_restore(const pairInputs* s) {
  for (int i = 0; i < 2; i++) {
    memcpy(D->geom_xpos + 3 * s->g[i], s->xpos[i], sizeof(s->xpos[i]));
    memcpy(D->geom_xmat + 9 * s->g[i], s->xmat[i], sizeof(s->xmat[i]));
    memcpy(M->geom_size + 3 * s->g[i], s->size[i], sizeof(s->size[i]));
  }
}

// output of contact con with input column j perturbed by eps (restored afterwards); returns the count
static inline int eval_at(double y[7], physCollideFn fn, int g1, int g2, int con, int j, double eps) {
  pairInputs keep;
  inputs_save(&keep, g1, g2);
  perturb(g1, g2, j, eps);
  int nc = eval(y, fn, g1, g2, con);
  inputs_restore(&keep);
  return nc;
}

// compare the Jacobian of contact con with the fourth-order central difference of the pair function:
// f' = (8 (f(h) - f(-h)) - (f(2h) - f(-2h))) / (12 h), truncation O(h^4), roundoff ~ eps_mach / h
static inline void check_fd(physCollideFn fn, int g1, int g2, int con) {
  int ncol = phys_primitive_deriv_ncol(M, g1, g2);
  double jac[7 * 18], y0[7], y[4][7];
  const double step[4] = {FDSTEP, -FDSTEP, 2 * FDSTEP, -2 * FDSTEP};
  CHECK(phys_primitive_deriv(jac, M, D, g1, g2, con) == 0);
  int nc0 = eval(y0, fn, g1, g2, con);
  for (int j = 0; j < ncol; j++) {
    for (int k = 0; k < 4; k++) CHECK(eval_at(y[k], fn, g1, g2, con, j, step[k]) == nc0);
    for (int i = 0; i < 7; i++) {
      double fd = (8 * (y[0][i] - y[1][i]) - (y[2][i] - y[3][i])) / (12 * FDSTEP), an = jac[i * ncol + j];
      double e = fabs(an - fd) / fmax(fmax(fabs(an), fabs(fd)), FLOOR);
      if (e > WORST) WORST = e;
      CHECK_REL(an, fd, RTOL, FLOOR);
    }
  }
}

// rigid motion of both geoms by the world twist (v, w) about the origin: geom i gets dt = v + w x c_i,
// dw = w; then dpos = v + w x pos, dn = w x n, ddist = 0
static inline void check_rigid(int g1, int g2, int con) {
  int ncol = phys_primitive_deriv_ncol(M, g1, g2);
  double jac[7 * 18], pos[3], n[3];
  CHECK(phys_primitive_deriv(jac, M, D, g1, g2, con) == 0);
  physCollideFn fn;
  int swap;
  fn = phys_collide_fn(M->geom_type[g1], M->geom_type[g2], &swap);
  double y[7];
  eval(y, fn, g1, g2, con);
  memcpy(pos, y, sizeof(pos)), memcpy(n, y + 3, sizeof(n));
  for (int trial = 0; trial < 3; trial++) {
    double v[3], w[3], x[18] = {0}, dy[7] = {0};
    for (int k = 0; k < 3; k++) v[k] = phys_rng_range(&RNG, -1, 1), w[k] = phys_rng_range(&RNG, -1, 1);
    for (int i = 0; i < 2; i++) {
      double wc[3];
      phys_cross3(wc, w, D->geom_xpos + 3 * (i == 0 ? g1 : g2));
      for (int k = 0; k < 3; k++) x[6 * i + k] = v[k] + wc[k], x[6 * i + 3 + k] = w[k];
    }
    for (int i = 0; i < 7; i++)
      for (int j = 0; j < ncol; j++) dy[i] += jac[i * ncol + j] * x[j];
    double wp[3], wn[3];
    phys_cross3(wp, w, pos), phys_cross3(wn, w, n);
    for (int k = 0; k < 3; k++) {
      CHECK_NEAR(dy[k], v[k] + wp[k], RIGID_TOL);
      CHECK_NEAR(dy[3 + k], wn[k], RIGID_TOL);
    }
    CHECK_NEAR(dy[6], 0, RIGID_TOL);
  }
}

// swapped use of a same-type pair: pos and dist rows equal with pose/size blocks exchanged, n rows negated
static inline void check_swap(int g1, int g2) {
  int ncol = phys_primitive_deriv_ncol(M, g1, g2), ns = phys_geom_nsize(M->geom_type[g1]);
  double ja[7 * 18], jb[7 * 18];
  CHECK(phys_primitive_deriv(ja, M, D, g1, g2, 0) == 0);
  CHECK(phys_primitive_deriv(jb, M, D, g2, g1, 0) == 0);
  for (int i = 0; i < 7; i++)
    for (int j = 0; j < ncol; j++) {
      int js = j < 6 ? j + 6 : j < 12 ? j - 6 : j < 12 + ns ? j + ns : j - ns;
      double sg = (i >= 3 && i < 6) ? -1 : 1;
      CHECK_NEAR(jb[i * ncol + js], sg * ja[i * ncol + j], 1e-12);
    }
}

// a random point in [-r, r]^3
static inline void rand_pt(double p[3], double r) {
  for (int k = 0; k < 3; k++) p[k] = phys_rng_range(&RNG, -r, r);
}

// fourth-order central difference of column j of contact con with step h (restores the inputs)
static inline void fd_col(double fd[7], physCollideFn fn, int g1, int g2, int con, int j, double h, int* ok) {
  double y[4][7];
  const double step[4] = {h, -h, 2 * h, -2 * h};
  double y0[7];
  int nc0 = eval(y0, fn, g1, g2, con);
  for (int k = 0; k < 4; k++) *ok &= eval_at(y[k], fn, g1, g2, con, j, step[k]) == nc0;
  for (int i = 0; i < 7; i++) fd[i] = (8 * (y[0][i] - y[1][i]) - (y[2][i] - y[3][i])) / (12 * h);
}

// check_fd for pairs whose feature can switch anywhere (manifolds, SAT axes): the pair function is first
// required to be smooth over the stencil (the same count, and the difference quotients with steps h and h/2
// agreeing to 1e-8 absolute + 1e-8 relative: a feature switch inside the stencil gives an O(1) change of
// slope); returns 1 if the contact was compared, 0 if it was skipped as next to a switch. The test for
// smoothness uses the pair function only, never the analytic Jacobian.
static inline int check_fd_smooth(physCollideFn fn, int g1, int g2, int con) {
  int ncol = phys_primitive_deriv_ncol(M, g1, g2), ok = 1;
  double jac[7 * 18], fd[18][7], fd2[7];
  for (int j = 0; j < ncol && ok; j++) {
    fd_col(fd[j], fn, g1, g2, con, j, FDSTEP, &ok);
    fd_col(fd2, fn, g1, g2, con, j, FDSTEP / 2, &ok);
    for (int i = 0; i < 7; i++) ok &= fabs(fd[j][i] - fd2[i]) <= 1e-8 * (1 + fabs(fd2[i]));
  }
  if (!ok) return 0;
  int rc = phys_primitive_deriv_margin(jac, M, D, g1, g2, con, MARGIN);
  CHECK_MSG(rc == 0, "geoms %d-%d contact %d: no derivative", g1, g2, con);
  if (rc) return 1;
  for (int j = 0; j < ncol; j++)
    for (int i = 0; i < 7; i++) {
      double an = jac[i * ncol + j], e = fabs(an - fd[j][i]) / fmax(fmax(fabs(an), fabs(fd[j][i])), FLOOR);
      if (e > WORST) WORST = e;
      CHECK_REL(an, fd[j][i], RTOL, FLOOR);
    }
  return 1;
}

// random rotation of geom g by at most ang radians about a random axis (applied in world)
static inline void tilt(int g, double ang) {
  double w[3], dt[3] = {0, 0, 0};
  rand_pt(w, 1);
  double len = phys_norm3(w);
  for (int k = 0; k < 3; k++) w[k] *= phys_rng_range(&RNG, 0, ang) / len;
  twist(g, dt, w);
}


// phys_primitive_deriv_all against phys_primitive_deriv_out for every contact of the pair's output at MARGIN:
// the same return per contact, the same Jacobian bit for bit where it is 0, the block untouched where it is
// -1, and -1 overall iff a contact is refused; counts the pairs (ALL_PAIRS), the contacts with a Jacobian
// (ALL_CON) and the pairs with several (ALL_MULTI)
static int ALL_PAIRS = 0, ALL_CON = 0, ALL_MULTI = 0;
static inline void check_all(physCollideFn fn, int g1, int g2) {
  physContact out[PHYS_MAXPAIRCON];
  int nout = fn(M, D, g1, g2, MARGIN, out), ncol = phys_primitive_deriv_ncol(M, g1, g2), rc[PHYS_MAXPAIRCON];
  int bad = 0, nok = 0;
  double all[PHYS_MAXPAIRCON * 7 * 18], one[7 * 18];
  for (int i = 0; i < PHYS_MAXPAIRCON * 7 * 18; i++) all[i] = 12345;
  int r = phys_primitive_deriv_all(all, rc, M, D, g1, g2, out, nout);
  for (int k = 0; k < nout; k++) {
    int r1 = phys_primitive_deriv_out(one, M, D, g1, g2, k, out, nout);
    CHECK_MSG(rc[k] == r1, "geoms %d-%d contact %d of %d: rc %d, per contact %d", g1, g2, k, nout, rc[k], r1);
    bad |= r1;
    if (r1 == 0) {
      nok++;
      CHECK_MSG(memcmp(all + 7 * ncol * k, one, sizeof(double) * 7 * ncol) == 0,
                "geoms %d-%d contact %d of %d: Jacobians differ", g1, g2, k, nout);
    } else {
      CHECK(all[7 * ncol * k] == 12345 && all[7 * ncol * (k + 1) - 1] == 12345);
    }
  }
  CHECK(r == (bad ? -1 : 0));
  ALL_PAIRS++, ALL_CON += nok, ALL_MULTI += nok > 1;
}


#endif  // PHYS_GEOM_DERIV_CHECK_H
