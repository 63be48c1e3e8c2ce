// witness.c - the witness point of the GJK/EPA pairs on smooth patches: its equations, their solution by Newton's
// method and its Jacobian by the implicit function theorem (see witness.h).
#include "witness.h"

#include <float.h>

#include "rot.h"

//---------------------------------------------------------------------------------------------------------
// a side's point

// flat directions of a side: POINTS np - 1, SIDE 1 (the axis), CAP 2 (local x, y), RIM and ELLIPSOID 0
static int nflat(const physWitnessSide* w) {
  switch (w->kind) {
    case PHYS_WS_POINTS: return w->np - 1;
    case PHYS_WS_SIDE: return 1;
    case PHYS_WS_CAP: return 2;
    default: return 0;
  }
}

// flat direction k of side w
static vd_t flat_dir(const physWitnessSide* w, int k) {
  if (w->kind == PHYS_WS_POINTS) return vd_sub(w->P[k + 1], &w->P[0]);
  return w->kind == PHYS_WS_SIDE ? w->ax[2] : w->ax[k];
}

// the (core) point of side w at normal n (from geom 0 to geom 1) and flat parameters lam (witness.h); *rho = the
// length of the rim direction's projection for RIM and SIDE (0: degenerate), 1 otherwise
static vd_t side_point(const physWitnessSide* w, const vd_t* n, const sd_t* lam, double* rho) {
  *rho = 1;
  if (w->kind == PHYS_WS_POINTS) {
    vd_t x = w->P[0];
    for (int k = 1; k < w->np; k++) {
      vd_t e = vd_sub(w->P[k], &w->P[0]);
      x = vd_axpy(x, lam[k - 1], &e);
    }
    return x;
  }
  vd_t m = vd_lscl(w->sigma, *n), ml = dual_unrotate(w->ax, &m), xl;
  if (w->kind == PHYS_WS_ELLIPSOID) {   // S^2 m / |S m|
    sd_t q = sd_const(0), s2[3];
    for (int k = 0; k < 3; k++) {
      s2[k] = sd_mul(w->s[k], w->s[k]);
      sd_t mk = vd_get(&ml, k);
      q = sd_add(q, sd_mul(s2[k], sd_mul(mk, mk)));
    }
    q = sd_sqrt(q);
    if (!(q.v > 0)) *rho = 0;
    for (int k = 0; k < 3; k++) vd_set(&xl, k, sd_div(sd_mul(s2[k], vd_get(&ml, k)), q));
  } else if (w->kind == PHYS_WS_CAP) {
    vd_set(&xl, 0, lam[0]), vd_set(&xl, 1, lam[1]), vd_set(&xl, 2, sd_lscl(w->cap, w->s[1]));
  } else {   // RIM, SIDE: r (m_x, m_y)/|(m_x, m_y)|, then c h or lam
    sd_t m0 = vd_get(&ml, 0), m1 = vd_get(&ml, 1), len = sd_sqrt(sd_add(sd_mul(m0, m0), sd_mul(m1, m1)));
    *rho = len.v;
    if (!(len.v > 0)) len = sd_const(1);
    vd_set(&xl, 0, sd_div(sd_mul(w->s[0], m0), len));
    vd_set(&xl, 1, sd_div(sd_mul(w->s[0], m1), len));
    vd_set(&xl, 2, w->kind == PHYS_WS_RIM ? sd_lscl(w->cap, w->s[1]) : lam[0]);
  }
  vd_t t = dual_rotate(w->ax, &xl);
  return vd_add(w->c, &t);
}

int phys_witness_nz(const physWitnessSide w[2]) { return 4 + nflat(&w[0]) + nflat(&w[1]); }

// F(z) (witness.h) into F[0..nz); -1 when a patch degenerates (a rim direction of length 0)
static int residual(sd_t* F, const physWitnessSide w[2], const sd_t* z) {
  vd_t n;
  for (int k = 0; k < 3; k++) vd_set(&n, k, z[k]);
  int k0 = nflat(&w[0]);
  double r0, r1;
  vd_t x0 = side_point(&w[0], &n, z + 4, &r0), x1 = side_point(&w[1], &n, z + 4 + k0, &r1);
  vd_t e = vd_sub(x0, &x1);
  e = vd_axpy(e, z[3], &n);
  for (int k = 0; k < 3; k++) F[k] = vd_get(&e, k);
  F[3] = sd_scl(sd_sub(vd_dot(&n, &n), sd_const(1)), 0.5);
  int i = 4;
  for (int g = 0; g < 2; g++)
    for (int k = 0; k < nflat(&w[g]); k++) {
      vd_t d = flat_dir(&w[g], k);
      F[i++] = vd_dot(&n, &d);
    }
  return r0 > 0 && r1 > 0 ? 0 : -1;
}

//---------------------------------------------------------------------------------------------------------
// values and linear algebra

// v = w with every Jacobian zero (the geometry as constants)
static void side_values(physWitnessSide v[2], const physWitnessSide w[2]) {
  for (int g = 0; g < 2; g++) {
    v[g] = w[g];
    for (int k = 0; k < 3; k++) {
      v[g].P[k] = vd_const(w[g].P[k].v), v[g].ax[k] = vd_const(w[g].ax[k].v), v[g].s[k] = sd_const(w[g].s[k].v);
    }
    v[g].c = vd_const(w[g].c.v), v[g].radius = sd_const(w[g].radius.v);
  }
}

// z as duals seeded in the columns 0..nz-1 (dF/dz in the Jacobians of F)
static void seed(sd_t* zd, const double* z, int nz) {
  for (int i = 0; i < nz; i++) zd[i] = sd_const(z[i]), zd[i].J[i] = 1;
}

// A X = B in place (A n x n row-major, B n x nb), Gaussian elimination with partial pivoting; -1 when a pivot is
// below 1e-14 of A's largest entry
static int lu_solve(double* A, double* B, int n, int nb) {
  double amax = 0;
  for (int i = 0; i < n * n; i++) amax = fmax(amax, fabs(A[i]));
  for (int c = 0; c < n; c++) {
    int p = c;
    for (int i = c + 1; i < n; i++)
      if (fabs(A[i * n + c]) > fabs(A[p * n + c])) p = i;
    if (!(fabs(A[p * n + c]) > 1e-14 * amax)) return -1;
    for (int j = 0; j < n && p != c; j++) {
      double t = A[c * n + j];
      A[c * n + j] = A[p * n + j], A[p * n + j] = t;
    }
    for (int j = 0; j < nb && p != c; j++) {
      double t = B[c * nb + j];
      B[c * nb + j] = B[p * nb + j], B[p * nb + j] = t;
    }
    for (int i = c + 1; i < n; i++) {
      double f = A[i * n + c] / A[c * n + c];
      for (int j = c; j < n; j++) A[i * n + j] -= f * A[c * n + j];
      for (int j = 0; j < nb; j++) B[i * nb + j] -= f * B[c * nb + j];
    }
  }
  for (int c = n - 1; c >= 0; c--)
    for (int j = 0; j < nb; j++) {
      double s = B[c * nb + j];
      for (int k = c + 1; k < n; k++) s -= A[c * n + k] * B[k * nb + j];
      B[c * nb + j] = s / A[c * n + c];
    }
  return 0;
}

// F(z) and F_z (nz x nz) on the values of v
static int residual_jacobian(double* F, double* A, const physWitnessSide v[2], const double* z, int nz) {
  sd_t zd[PHYS_WITNESS_MAXZ], Fd[PHYS_WITNESS_MAXZ];
  memset(zd, 0, sizeof(zd));
  seed(zd, z, nz);
  int rc = residual(Fd, v, zd);
  for (int i = 0; i < nz; i++) {
    F[i] = Fd[i].v;
    for (int j = 0; j < nz; j++) A[i * nz + j] = Fd[i].J[j];
  }
  return rc;
}

//---------------------------------------------------------------------------------------------------------
// public

void phys_witness_start(double* z, const physWitnessSide w[2], const double pos[3], const double n[3], double dist) {
  physWitnessSide v[2];
  side_values(v, w);
  double r[2] = {v[0].radius.v, v[1].radius.v};
  for (int k = 0; k < 3; k++) z[k] = n[k];
  z[3] = dist + r[0] + r[1];
  vd_t nd = vd_const(n);
  sd_t zero[2] = {sd_const(0), sd_const(0)};
  int at = 4;
  for (int g = 0; g < 2; g++) {
    int nf = nflat(&v[g]);
    if (!nf) continue;
    // x_g = pos -+ (dist/2 + r_g) n; lam = argmin |base + E lam - x_g| (normal equations, 1 or 2 unknowns)
    double x[3], s = g ? 1 : -1, e[2][3], rhs[2], G[4], rho;
    for (int k = 0; k < 3; k++) x[k] = pos[k] + s * (0.5 * dist + r[g]) * n[k];
    vd_t base = side_point(&v[g], &nd, zero, &rho);
    for (int q = 0; q < nf; q++) {
      vd_t d = flat_dir(&v[g], q);
      for (int k = 0; k < 3; k++) e[q][k] = d.v[k];
      double t[3];
      phys_sub3(t, x, base.v);
      rhs[q] = phys_dot3(e[q], t);
    }
    for (int a = 0; a < nf; a++)
      for (int b = 0; b < nf; b++) G[a * nf + b] = phys_dot3(e[a], e[b]);
    if (lu_solve(G, rhs, nf, 1)) rhs[0] = rhs[1] = 0;
    for (int q = 0; q < nf; q++) z[at + q] = rhs[q];
    at += nf;
  }
}

// whether the solution z keeps every side's point on its patch (to 1e-9 relative): barycentric weights of the
// vertices >= 0, the side's parameter within [-h, h], the cap's point within the rim, the rim's cap facing sigma n
static int on_patches(const physWitnessSide v[2], const double* z) {
  const double tol = 1e-9;
  int at = 4;
  for (int g = 0; g < 2; g++) {
    const physWitnessSide* w = v + g;
    const double* lam = z + at;
    at += nflat(w);
    if (w->kind == PHYS_WS_POINTS) {
      double sum = 0;
      for (int k = 0; k + 1 < w->np; k++) {
        if (!(lam[k] >= -tol)) return 0;
        sum += lam[k];
      }
      if (!(sum <= 1 + tol)) return 0;
    } else if (w->kind == PHYS_WS_SIDE) {
      if (!(fabs(lam[0]) <= w->s[1].v * (1 + tol))) return 0;
    } else if (w->kind == PHYS_WS_CAP) {
      if (!(lam[0] * lam[0] + lam[1] * lam[1] <= w->s[0].v * w->s[0].v * (1 + tol))) return 0;
    } else if (w->kind == PHYS_WS_RIM) {
      if (!(w->cap * w->sigma * phys_dot3(w->ax[2].v, z) > 0)) return 0;
    }
  }
  return 1;
}

int phys_witness_solve(double* z, const physWitnessSide w[2], double scale) {
  physWitnessSide v[2];
  side_values(v, w);
  int nz = phys_witness_nz(v);
  double F[PHYS_WITNESS_MAXZ], A[PHYS_WITNESS_MAXZ * PHYS_WITNESS_MAXZ], fmx = DBL_MAX;
  for (int it = 0; it < 30; it++) {
    if (residual_jacobian(F, A, v, z, nz)) return -1;
    double f = 0;
    for (int i = 0; i < nz; i++) f = fmax(f, fabs(F[i]));
    if (f <= 1e-15 * (1 + scale) || !(f < fmx)) {   // converged, or no more progress (roundoff)
      fmx = fmin(f, fmx);
      break;
    }
    fmx = f;
    for (int i = 0; i < nz; i++) F[i] = -F[i];
    if (lu_solve(A, F, nz, 1)) return -1;
    for (int i = 0; i < nz; i++) z[i] += F[i];
  }
  if (residual_jacobian(F, A, v, z, nz)) return -1;
  double f = 0;
  for (int i = 0; i < nz; i++) f = fmax(f, fabs(F[i]));
  return f <= 1e-12 * (1 + scale) && on_patches(v, z) ? 0 : -1;
}

void phys_witness_values(double pos[3], double n[3], double* dist, const physWitnessSide w[2], const double* z) {
  physWitnessSide v[2];
  side_values(v, w);
  sd_t zc[PHYS_WITNESS_MAXZ];
  memset(zc, 0, sizeof(zc));
  for (int i = 0; i < phys_witness_nz(v); i++) zc[i] = sd_const(z[i]);
  vd_t nd;
  double rho;
  for (int k = 0; k < 3; k++) vd_set(&nd, k, zc[k]), n[k] = z[k];
  vd_t p0 = side_point(&v[0], &nd, zc + 4, &rho), p1 = side_point(&v[1], &nd, zc + 4 + nflat(&v[0]), &rho);
  for (int k = 0; k < 3; k++)
    pos[k] = 0.5 * ((p0.v[k] + v[0].radius.v * z[k]) + (p1.v[k] - v[1].radius.v * z[k]));
  *dist = z[3] - v[0].radius.v - v[1].radius.v;
}

int phys_witness_contact(vd_t* pos, vd_t* n, sd_t* dist, const physWitnessSide w[2], const double* z, double tol) {
  physWitnessSide v[2];
  side_values(v, w);
  int nz = phys_witness_nz(v);
  double F[PHYS_WITNESS_MAXZ], A[PHYS_WITNESS_MAXZ * PHYS_WITNESS_MAXZ], B[PHYS_WITNESS_MAXZ * NCOL];
  if (residual_jacobian(F, A, v, z, nz)) return -1;
  for (int i = 0; i < nz; i++)
    if (!(fabs(F[i]) <= tol)) return -1;
  // F_theta: the geometry's duals at z held constant; dz = -F_z^-1 F_theta
  sd_t zc[PHYS_WITNESS_MAXZ], Ft[PHYS_WITNESS_MAXZ];
  memset(zc, 0, sizeof(zc));
  for (int i = 0; i < nz; i++) zc[i] = sd_const(z[i]);
  residual(Ft, w, zc);
  for (int i = 0; i < nz; i++)
    for (int j = 0; j < NCOL; j++) B[i * NCOL + j] = -Ft[i].J[j];
  if (lu_solve(A, B, nz, NCOL)) return -1;
  for (int i = 0; i < nz; i++) memcpy(zc[i].J, B + i * NCOL, sizeof(zc[i].J));
  // the contact at z, the Jacobians through z and directly: p_0 = x_0 + r_0 n, p_1 = x_1 - r_1 n
  double rho;
  for (int k = 0; k < 3; k++) vd_set(n, k, zc[k]);
  vd_t p0 = side_point(&w[0], n, zc + 4, &rho), p1 = side_point(&w[1], n, zc + 4 + nflat(&w[0]), &rho);
  p0 = vd_axpy(p0, w[0].radius, n);
  p1 = vd_axpy(p1, sd_scl(w[1].radius, -1), n);
  *dist = sd_sub(sd_sub(zc[3], w[0].radius), w[1].radius);
  *pos = vd_lscl(0.5, vd_add(p0, &p1));
  return 0;
}
