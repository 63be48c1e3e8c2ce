// test_witness.c - the witness point on smooth patches (src/collision/witness.c) on its own, against closed-form
// answers. Each case puts a curved feature - a cylinder's rim (either cap), its curved side, its cap (either), an
// ellipsoid - on geom 0 or geom 1 in a turned pose, and a vertex (or a sphere's centre, a core of radius 0.05) on
// the other, at the point x + (core distance) n of the feature's support point x along a chosen normal n, so the
// solution z = (n, core distance, the feature's flat parameters) is known exactly; separated and penetrating.
//  1. the residual of the support-map equations at that z is below 1e-13 (phys_witness_contact accepts it at that
//     tolerance) and the contact it gives is the one built (pos, n, dist to 1e-14); any one unknown moved by 1e-9
//     is refused at the same tolerance;
//  2. Newton (phys_witness_solve) from z moved by up to 1e-3 in every unknown, and from phys_witness_start at the
//     contact moved by 1e-6 (GJK/EPA's error on a curved support), converges to z (1e-12);
//  3. the Jacobian by the implicit function theorem: d dist / d(vertex) is the unit normal (+n on geom 1, -n on
//     geom 0; the distance of a point to a convex set), the centre's the opposite, and dpos, dn, ddist in the
//     vertex, the feature's centre and its sizes against central differences of the solve (1e-7);
//  4. a wrong patch is rejected: each case's z, started for another kind of feature (rim <-> side <-> cap,
//     ellipsoid -> rim; the other cap), does not satisfy that feature's equations (phys_witness_contact -1), and
//     solves that leave their patch fail: the rim's case solved as the side (the point beyond the side's end) or as
//     the other cap's rim (a cap facing away from the normal), a vertex beyond an edge's end (a weight above 1).
#include "rng.h"
#include "rot.h"
#include "test.h"
#include "witness.h"

#define NCASE 16

// one case: the two sides, the exact unknowns z and the contact they give
typedef struct {
  const char* what;
  physWitnessSide w[2];
  int curved;        // the side holding the curved feature (0 or 1); the other holds the vertex
  double z[PHYS_WITNESS_MAXZ];
  double pos[3], n[3], dist;
} witnessCase;

// a turned pose: the rotation about (1, 2, -0.5) by 0.7 rad
static void turned(double R[9]) {
  double a[3] = {1, 2, -0.5}, q[4];
  phys_normalize3(a);
  phys_axisangle2quat(q, a, 0.7);
  phys_quat2mat(R, q);
}

// the local support point of a feature along the local direction ml (unit): rim (r u, cap h), side (r u, lam_0),
// cap (lam_0, lam_1, cap h), ellipsoid S^2 ml / |S ml|; u = ml's horizontal part, normalized
static void local_support(double xl[3], int kind, double cap, const double s[3], const double ml[3],
                          const double* lam) {
  double h = hypot(ml[0], ml[1]);
  if (kind == PHYS_WS_ELLIPSOID) {
    double q = sqrt(s[0] * s[0] * ml[0] * ml[0] + s[1] * s[1] * ml[1] * ml[1] + s[2] * s[2] * ml[2] * ml[2]);
    for (int k = 0; k < 3; k++) xl[k] = s[k] * s[k] * ml[k] / q;
  } else if (kind == PHYS_WS_CAP) {
    xl[0] = lam[0], xl[1] = lam[1], xl[2] = cap * s[1];
  } else {
    xl[0] = s[0] * ml[0] / h, xl[1] = s[0] * ml[1] / h, xl[2] = kind == PHYS_WS_RIM ? cap * s[1] : lam[0];
  }
}

// flat parameters of a feature: side 1, cap 2, else 0
static int nflat_of(int kind) { return kind == PHYS_WS_SIDE ? 1 : kind == PHYS_WS_CAP ? 2 : 0; }

// the case: feature `kind` (cap) with sizes s at centre c turned by R on side `curved`, the normal n (world, geom 0
// to geom 1, unit, in the feature's normal cone), the flat parameters lam, the core distance zd, and a vertex
// (radius: 0 a point, else a sphere's centre) on the other side
static void make_case(witnessCase* t, const char* what, int kind, double cap, const double s[3], const double c[3],
                      const double R[9], int curved, const double n[3], const double* lam, double zd,
                      double radius) {
  memset(t, 0, sizeof *t);
  t->what = what, t->curved = curved;
  physWitnessSide* f = &t->w[curved];
  physWitnessSide* v = &t->w[!curved];
  f->kind = kind, f->cap = cap, f->sigma = curved ? -1 : 1, f->np = 0;
  f->c = vd_const(c);
  for (int k = 0; k < 3; k++) {
    double a[3] = {R[k], R[3 + k], R[6 + k]};
    f->ax[k] = vd_const(a);
    f->s[k] = sd_const(s[k]);
  }
  f->radius = sd_const(0);
  // x = c + R xl(R' sigma n); the vertex at x + zd n (feature on geom 0) or x - zd n (on geom 1)
  double m[3], ml[3], xl[3], x[3], P[3];
  for (int k = 0; k < 3; k++) m[k] = f->sigma * n[k];
  phys_matT_vec3(ml, R, m);
  local_support(xl, kind, cap, s, ml, lam);
  phys_mat_vec3(x, R, xl);
  for (int k = 0; k < 3; k++) x[k] += c[k], P[k] = x[k] + (curved ? -zd : zd) * n[k];
  v->kind = PHYS_WS_POINTS, v->np = 1, v->sigma = curved ? 1 : -1;
  v->P[0] = vd_const(P);
  v->radius = sd_const(radius);
  for (int k = 0; k < 3; k++) t->z[k] = n[k];
  t->z[3] = zd;
  for (int k = 0; k < nflat_of(kind); k++) t->z[4 + k] = lam[k];
  // the contact: the surface points x_g -+ r_g n (here the vertex's radius), their midpoint
  for (int k = 0; k < 3; k++) {
    double p0 = curved ? P[k] + radius * n[k] : x[k], p1 = curved ? x[k] : P[k] - radius * n[k];
    t->pos[k] = 0.5 * (p0 + p1), t->n[k] = n[k];
  }
  t->dist = zd - radius;
}

// the unit vector R (a, b, c) / |(a, b, c)|
static void turned_dir(double n[3], const double R[9], double a, double b, double c) {
  double l[3] = {a, b, c};
  phys_normalize3(l);
  phys_mat_vec3(n, R, l);
}

// the cases: every feature on either side, separated and penetrating
static int make_cases(witnessCase* t) {
  double R[9], c[3] = {0.3, -0.2, 0.5}, cyl[3] = {0.4, 0.25, 0}, ell[3] = {0.5, 0.3, 0.2}, n[3];
  turned(R);
  int k = 0;
  for (int curved = 0; curved < 2; curved++) {
    double sg = curved ? -1 : 1;   // the feature's outward direction is sg n
    // rim of the +h and the -h cap
    turned_dir(n, R, sg * 0.6, sg * -0.3, sg * 0.5);
    make_case(t + k++, curved ? "rim +h on geom 1" : "rim +h on geom 0", PHYS_WS_RIM, 1, cyl, c, R, curved, n, NULL,
              0.3, 0);
    turned_dir(n, R, sg * -0.2, sg * 0.7, sg * -0.6);
    make_case(t + k++, curved ? "rim -h on geom 1, penetrating" : "rim -h on geom 0, penetrating", PHYS_WS_RIM, -1,
              cyl, c, R, curved, n, NULL, -0.02, 0.05);
    // side at height 0.1, separated and penetrating
    double ls[1] = {0.1};
    turned_dir(n, R, sg * 0.8, sg * 0.6, 0);
    make_case(t + k++, curved ? "side on geom 1" : "side on geom 0", PHYS_WS_SIDE, 0, cyl, c, R, curved, n, ls, 0.2,
              0.05);
    double ls2[1] = {-0.2};
    turned_dir(n, R, sg * -0.3, sg * 0.4, 0);
    make_case(t + k++, curved ? "side on geom 1, penetrating" : "side on geom 0, penetrating", PHYS_WS_SIDE, 0, cyl,
              c, R, curved, n, ls2, -0.01, 0);
    // cap +h at (0.1, -0.15), cap -h penetrating
    double lc[2] = {0.1, -0.15};
    turned_dir(n, R, 0, 0, sg);
    make_case(t + k++, curved ? "cap +h on geom 1" : "cap +h on geom 0", PHYS_WS_CAP, 1, cyl, c, R, curved, n, lc,
              0.25, 0);
    double lc2[2] = {-0.2, 0.05};
    turned_dir(n, R, 0, 0, -sg);
    make_case(t + k++, curved ? "cap -h on geom 1, penetrating" : "cap -h on geom 0, penetrating", PHYS_WS_CAP, -1,
              cyl, c, R, curved, n, lc2, -0.015, 0.05);
    // ellipsoid, separated and penetrating
    turned_dir(n, R, sg * 0.3, sg * -0.5, sg * 0.8);
    make_case(t + k++, curved ? "ellipsoid on geom 1" : "ellipsoid on geom 0", PHYS_WS_ELLIPSOID, 0, ell, c, R,
              curved, n, NULL, 0.4, 0);
    turned_dir(n, R, sg * -0.7, sg * 0.2, sg * 0.1);
    make_case(t + k++, curved ? "ellipsoid on geom 1, penetrating" : "ellipsoid on geom 0, penetrating",
              PHYS_WS_ELLIPSOID, 0, ell, c, R, curved, n, NULL, -0.03, 0.05);
  }
  return k;
}

//---------------------------------------------------------------------------------------------------------
// checks

// max |a - b| over n values
static double maxdiff(const double* a, const double* b, int n) {
  double e = 0;
  for (int i = 0; i < n; i++) e = fmax(e, fabs(a[i] - b[i]));
  return e;
}

// 1: the residual at the exact z, and 1e-9 off it
static void check_residual(const witnessCase* t) {
  int nz = phys_witness_nz(t->w);
  vd_t pos, n;
  sd_t dist;
  CHECK_MSG(phys_witness_contact(&pos, &n, &dist, t->w, t->z, 1e-13) == 0, "%s: residual above 1e-13", t->what);
  CHECK_MSG(maxdiff(pos.v, t->pos, 3) <= 1e-14 && maxdiff(n.v, t->n, 3) <= 1e-14 && fabs(dist.v - t->dist) <= 1e-14,
            "%s: contact off by %.3g %.3g %.3g", t->what, maxdiff(pos.v, t->pos, 3), maxdiff(n.v, t->n, 3),
            fabs(dist.v - t->dist));
  double p2[3], n2[3], d2;
  phys_witness_values(p2, n2, &d2, t->w, t->z);
  CHECK_MSG(maxdiff(p2, t->pos, 3) <= 1e-14 && fabs(d2 - t->dist) <= 1e-14, "%s: values", t->what);
  for (int i = 0; i < nz; i++) {
    double z[PHYS_WITNESS_MAXZ];
    memcpy(z, t->z, sizeof z);
    z[i] += 1e-9;
    CHECK_MSG(phys_witness_contact(&pos, &n, &dist, t->w, z, 1e-13) == -1, "%s: z[%d] + 1e-9 accepted", t->what, i);
  }
}

// 2: Newton from a perturbed z and from a perturbed contact
static void check_newton(const witnessCase* t, physRng* rng) {
  int nz = phys_witness_nz(t->w);
  double z[PHYS_WITNESS_MAXZ] = {0};
  for (int i = 0; i < nz; i++) z[i] = t->z[i] + phys_rng_range(rng, -1e-3, 1e-3);
  CHECK_MSG(phys_witness_solve(z, t->w, 1) == 0, "%s: Newton from z + 1e-3 failed", t->what);
  CHECK_MSG(maxdiff(z, t->z, nz) <= 1e-12, "%s: Newton from z + 1e-3 off by %.3g", t->what, maxdiff(z, t->z, nz));
  double pos[3], n[3], dist = t->dist + phys_rng_range(rng, -1e-6, 1e-6);
  for (int k = 0; k < 3; k++)
    pos[k] = t->pos[k] + phys_rng_range(rng, -1e-6, 1e-6), n[k] = t->n[k] + phys_rng_range(rng, -1e-6, 1e-6);
  phys_normalize3(n);
  memset(z, 0, sizeof z);
  phys_witness_start(z, t->w, pos, n, dist);
  CHECK_MSG(maxdiff(z, t->z, nz) <= 1e-5, "%s: start off by %.3g", t->what, maxdiff(z, t->z, nz));
  CHECK_MSG(phys_witness_solve(z, t->w, 1) == 0, "%s: Newton from the contact + 1e-6 failed", t->what);
  CHECK_MSG(maxdiff(z, t->z, nz) <= 1e-12, "%s: Newton from the contact + 1e-6 off by %.3g", t->what,
            maxdiff(z, t->z, nz));
}

// the inputs of the derivative check: 0..2 the vertex, 3..5 the feature's centre, 6..8 its sizes (9 columns)
#define NIN 9

// w with input i moved by h (values only)
static void moved(physWitnessSide w[2], const witnessCase* t, int i, double h) {
  memcpy(w, t->w, sizeof t->w);
  physWitnessSide *f = &w[t->curved], *v = &w[!t->curved];
  if (i < 3) v->P[0].v[i] += h;
  else if (i < 6) f->c.v[i - 3] += h;
  else f->s[i - 6].v += h;
}

// 3: the Jacobian by the implicit function theorem against the closed form and central differences
static void check_jacobian(const witnessCase* t) {
  physWitnessSide w[2];
  memcpy(w, t->w, sizeof w);
  physWitnessSide *f = &w[t->curved], *v = &w[!t->curved];
  for (int k = 0; k < 3; k++) v->P[0].J[k][k] = 1, f->c.J[k][3 + k] = 1, f->s[k].J[6 + k] = 1;
  vd_t pos, n;
  sd_t dist;
  CHECK_MSG(phys_witness_contact(&pos, &n, &dist, w, t->z, 1e-13) == 0, "%s: Jacobian refused", t->what);
  double sv = t->curved ? -1 : 1;   // d dist / d vertex = +n on geom 1, -n on geom 0
  for (int k = 0; k < 3; k++) {
    CHECK_MSG(fabs(dist.J[k] - sv * t->n[k]) <= 1e-13, "%s: ddist/dvertex_%d = %.17g, n %.17g", t->what, k, dist.J[k],
              sv * t->n[k]);
    CHECK_MSG(fabs(dist.J[3 + k] + sv * t->n[k]) <= 1e-13, "%s: ddist/dcentre_%d = %.17g", t->what, k, dist.J[3 + k]);
  }
  double h = 1e-6, worst = 0;
  for (int i = 0; i < NIN; i++) {
    double out[2][7];
    for (int sgn = 0; sgn < 2; sgn++) {
      physWitnessSide wm[2];
      moved(wm, t, i, sgn ? h : -h);
      double z[PHYS_WITNESS_MAXZ];
      memcpy(z, t->z, sizeof z);
      CHECK_MSG(phys_witness_solve(z, wm, 1) == 0, "%s: solve at input %d moved", t->what, i);
      phys_witness_values(out[sgn], out[sgn] + 3, out[sgn] + 6, wm, z);
    }
    for (int k = 0; k < 7; k++) {
      double fd = (out[1][k] - out[0][k]) / (2 * h), an = k < 3 ? pos.J[k][i] : k < 6 ? n.J[k - 3][i] : dist.J[i];
      worst = fmax(worst, fabs(fd - an));
    }
  }
  CHECK_MSG(worst <= 1e-7, "%s: Jacobian vs central differences %.3g", t->what, worst);
}

// 4: z's contact given to another kind of feature (the same geometry) does not satisfy its equations
static void check_wrong_patch(const witnessCase* t, int kind, double cap) {
  physWitnessSide w[2];
  memcpy(w, t->w, sizeof w);
  w[t->curved].kind = kind, w[t->curved].cap = cap;
  double z[PHYS_WITNESS_MAXZ] = {0};
  phys_witness_start(z, w, t->pos, t->n, t->dist);
  vd_t pos, n;
  sd_t dist;
  CHECK_MSG(phys_witness_contact(&pos, &n, &dist, w, z, 1e-9) == -1, "%s: accepted as kind %d cap %g", t->what, kind,
            cap);
}

// 4: solves that leave their patch
static void check_off_patch(const witnessCase* rim) {
  // the rim's case as the side: its solution puts the point above the side's end (h)
  physWitnessSide w[2];
  memcpy(w, rim->w, sizeof w);
  w[rim->curved].kind = PHYS_WS_SIDE;
  double z[PHYS_WITNESS_MAXZ] = {0};
  phys_witness_start(z, w, rim->pos, rim->n, rim->dist);
  CHECK_MSG(phys_witness_solve(z, w, 1) == -1, "%s: solved as the side", rim->what);
  // as the other cap's rim, from (1e-6 off) the solution of its equations, the line from that rim's point below
  // the vertex to the vertex: the equations hold there, but that cap faces away from the normal
  memcpy(w, rim->w, sizeof w);
  physWitnessSide* f = &w[rim->curved];
  f->cap = -f->cap;
  double R[9], Pl[3], xl[3], x[3], s[3] = {f->s[0].v, f->s[1].v, 0}, P[3];
  for (int k = 0; k < 3; k++) R[3 * k] = f->ax[0].v[k], R[3 * k + 1] = f->ax[1].v[k], R[3 * k + 2] = f->ax[2].v[k];
  phys_sub3(P, w[!rim->curved].P[0].v, f->c.v);
  phys_matT_vec3(Pl, R, P);
  Pl[2] = f->cap;
  phys_normalize3(Pl);
  local_support(xl, PHYS_WS_RIM, f->cap, s, Pl, NULL);
  phys_mat_vec3(x, R, xl);
  for (int k = 0; k < 3; k++) x[k] += f->c.v[k], z[k] = (rim->curved ? -1 : 1) * (w[!rim->curved].P[0].v[k] - x[k]);
  z[3] = phys_normalize3(z);
  double zs[PHYS_WITNESS_MAXZ];
  for (int k = 0; k < 4; k++) zs[k] = z[k] + 1e-6;
  CHECK_MSG(phys_witness_solve(zs, w, 1) == -1, "%s: solved as the other cap's rim", rim->what);
  CHECK_MSG(maxdiff(zs, z, 4) <= 1e-12, "%s: the other cap's rim: Newton off its solution by %.3g", rim->what,
            maxdiff(zs, z, 4));
  // a vertex (geom 1) at (0.5, 0.3, 2) against the edge (0, 0, 0)-(1, 0, 0) of geom 0: the nearest point of the
  // edge's line is inside it (accepted, n = (0, 0.3, 2)/|.|); at (1.5, 0.3, 2) beyond its end (rejected)
  for (int beyond = 0; beyond < 2; beyond++) {
    memset(w, 0, sizeof w);
    double a[3] = {0, 0, 0}, b[3] = {1, 0, 0}, P[3] = {beyond ? 1.5 : 0.5, 0.3, 2}, pos[3], n[3] = {0, 0.3, 2};
    w[0].kind = w[1].kind = PHYS_WS_POINTS, w[0].np = 2, w[1].np = 1, w[0].sigma = 1, w[1].sigma = -1;
    w[0].P[0] = vd_const(a), w[0].P[1] = vd_const(b), w[1].P[0] = vd_const(P);
    double dist = phys_normalize3(n);
    for (int k = 0; k < 3; k++) pos[k] = P[k] - 0.5 * dist * n[k];
    memset(z, 0, sizeof z);
    phys_witness_start(z, w, pos, n, dist);
    CHECK_MSG(phys_witness_solve(z, w, 1) == (beyond ? -1 : 0), "edge, vertex %s its end", beyond ? "beyond" : "before");
    if (!beyond) CHECK_NEAR(z[4], 0.5, 1e-15);
  }
}

int main(void) {
  witnessCase t[NCASE];
  int nc = make_cases(t);
  CHECK(nc == NCASE);
  physRng rng;
  phys_rng_seed(&rng, 11);
  for (int i = 0; i < nc; i++) {
    check_residual(t + i);
    check_newton(t + i, &rng);
    check_jacobian(t + i);
    // another kind of feature at the same place: rim -> side, side -> cap, cap -> rim, ellipsoid -> rim; the
    // other cap of a rim or a cap
    int kind = t[i].w[t[i].curved].kind;
    double cap = t[i].w[t[i].curved].cap;
    int other = kind == PHYS_WS_RIM ? PHYS_WS_SIDE : kind == PHYS_WS_SIDE ? PHYS_WS_CAP : PHYS_WS_RIM;
    check_wrong_patch(t + i, other, kind == PHYS_WS_SIDE ? 1 : cap == 0 ? 1 : cap);
    if (kind == PHYS_WS_RIM || kind == PHYS_WS_CAP) check_wrong_patch(t + i, kind, -cap);
  }
  check_off_patch(&t[0]);
  check_off_patch(&t[8]);
  return test_done();
}
