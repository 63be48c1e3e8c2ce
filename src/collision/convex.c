// convex.c - collision of convex shapes without a closed-form pair routine: support functions, GJK
// distance, EPA penetration, contact manifolds by face clipping (see convex.h for conventions and caps).
#include "convex.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "rot.h"
#include "witness.h"

#define GJK_REL_TOL 1e-11     // GJK converged when |v|^2 - v.w <= GJK_REL_TOL |v|^2
#define GJK_ABS_TOL 1e-10     // origin inside when |v| <= GJK_ABS_TOL * scale
#define EPA_TOL 1e-10         // EPA converged when the support gap <= EPA_TOL * scale
#define CAP_COS 0.70710678118654752  // a cylinder shows its cap (not its side) if |dir_z| >= cos 45 deg
#define PARALLEL_COS (1 - 1e-4)      // two side segments are parallel (line contact) above this cosine

//---------------------------------------------------------------------------------------------------------
// small vector helpers

// a . b
static inline double dot3(const double a[3], const double b[3]) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

// r = a x b (r aliases neither)
static inline void cross3(double r[3], const double a[3], const double b[3]) {
  r[0] = a[1] * b[2] - a[2] * b[1];
  r[1] = a[2] * b[0] - a[0] * b[2];
  r[2] = a[0] * b[1] - a[1] * b[0];
}

// world point of a local point: x = pos + R x_local
static inline void local2world(double r[3], const physConvex* c, const double xl[3]) {
  phys_mat_vec3(r, c->mat, xl);
  for (int k = 0; k < 3; k++) r[k] += c->pos[k];
}

// one contact: pos, normal (frame row 0, tangents from phys_contact_frame), dist; features not recorded
static void write_contact(physContact* c, const double pos[3], const double n[3], double dist) {
  phys_copy3(c->pos, pos);
  phys_contact_frame(c->frame, n);
  c->dist = dist;
  c->feature[0] = c->feature[1] = PHYS_FEATURE(PHYS_FEAT_UNKNOWN, 0);
  memset(c->witness, -1, sizeof(c->witness));
  c->clip = -1;
  c->featangle[0] = c->featangle[1] = 0;
}

//---------------------------------------------------------------------------------------------------------
// shapes and support functions

void phys_convex_init(physConvex* c, const physModel* m, const physData* d, int g) {
  memset(c, 0, sizeof(*c));
  c->type = m->geom_type[g];
  memcpy(c->size, m->geom_size + 3 * g, sizeof(c->size));
  phys_copy3(c->pos, d->geom_xpos + 3 * g);
  memcpy(c->mat, d->geom_xmat + 9 * g, sizeof(c->mat));
  if (c->type == PHYS_GEOM_SPHERE || c->type == PHYS_GEOM_CAPSULE) c->radius = c->size[0];
  if (c->type == PHYS_GEOM_MESH) {
    int id = m->geom_dataid[g];
    c->vert = m->mesh_vert + 3 * m->mesh_vertadr[id];
    if (m->mesh_hullnum[id] > 0) {
      c->hull = m->hull_vert + m->mesh_hulladr[id];
      c->nhull = m->mesh_hullnum[id];
      int f0 = m->mesh_hullfaceadr[id];
      c->facenormal = m->hull_facenormal + 4 * f0;
      c->faceadr = m->hull_faceadr + f0;
      c->facenum = m->hull_facenum + f0;
      c->facevert = m->hull_facevert;
      c->nface = m->mesh_hullfacenum[id];
    } else {
      c->nhull = m->mesh_vertnum[id];  // no hull: support over every vertex, single-point contacts
    }
  }
  c->scale = m->geom_rbound[g] > 0 ? m->geom_rbound[g] : phys_norm3(c->size);
}

// support point in the geom frame for a local direction d: argmax_x d.x (of the core when c->core);
// sign ties (d_i = 0) take the + side
static void support_local(double r[3], const physConvex* c, const double d[3]) {
  const double* s = c->size;
  double len = phys_norm3(d);
  switch (c->type) {
    case PHYS_GEOM_SPHERE:  // r * d / |d|
      r[0] = r[1] = r[2] = 0;
      if (!c->core) {
        if (len > 0) phys_addscl3(r, r, d, s[0] / len);
        else r[0] = s[0];
      }
      return;
    case PHYS_GEOM_CAPSULE:  // +-h e_z + r d / |d|
      r[0] = r[1] = 0;
      r[2] = d[2] >= 0 ? s[1] : -s[1];
      if (!c->core) {
        if (len > 0) phys_addscl3(r, r, d, s[0] / len);
        else r[0] = s[0];
      }
      return;
    case PHYS_GEOM_ELLIPSOID: {  // x_i = a_i^2 d_i / sqrt(sum a_j^2 d_j^2)
      double q = sqrt(s[0] * s[0] * d[0] * d[0] + s[1] * s[1] * d[1] * d[1] + s[2] * s[2] * d[2] * d[2]);
      if (q > 0) {
        for (int k = 0; k < 3; k++) r[k] = s[k] * s[k] * d[k] / q;
      } else {
        r[0] = s[0];
        r[1] = r[2] = 0;
      }
      return;
    }
    case PHYS_GEOM_CYLINDER: {  // rim point r (d_x, d_y) / |d_xy| at z = +-h
      double rho = sqrt(d[0] * d[0] + d[1] * d[1]);
      r[0] = rho > 0 ? s[0] * d[0] / rho : s[0];
      r[1] = rho > 0 ? s[0] * d[1] / rho : 0;
      r[2] = d[2] >= 0 ? s[1] : -s[1];
      return;
    }
    case PHYS_GEOM_BOX:  // sign(d_i) s_i
      for (int k = 0; k < 3; k++) r[k] = d[k] >= 0 ? s[k] : -s[k];
      return;
    case PHYS_GEOM_MESH: {  // the hull vertex maximizing d.v (first of equals)
      double best = -DBL_MAX;
      int bi = 0;
      for (int i = 0; i < c->nhull; i++) {
        int v = c->hull ? c->hull[i] : i;
        double p = dot3(d, c->vert + 3 * v);
        if (p > best) {
          best = p;
          bi = v;
        }
      }
      phys_copy3(r, c->vert + 3 * bi);
      return;
    }
    default:
      r[0] = r[1] = r[2] = 0;
      return;
  }
}

void phys_convex_support(double res[3], const physConvex* c, const double dir[3]) {
  double dl[3], sl[3];
  phys_matT_vec3(dl, c->mat, dir);
  support_local(sl, c, dl);
  local2world(res, c, sl);
}

//---------------------------------------------------------------------------------------------------------
// GJK: closest point of the Minkowski difference C = A - B to the origin

// a vertex of C with the support points of A and B it came from: w = a - b
typedef struct gjkVert_ {
  double w[3], a[3], b[3];
} gjkVert;

// w = s_A(d) - s_B(-d)
static void mink_support(gjkVert* v, const physConvex* a, const physConvex* b, const double d[3]) {
  double nd[3] = {-d[0], -d[1], -d[2]};
  phys_convex_support(v->a, a, d);
  phys_convex_support(v->b, b, nd);
  phys_sub3(v->w, v->a, v->b);
}

// closest point of segment (p, q) to the origin: t = clamp(-p.(q-p) / |q-p|^2, 0, 1);
// writes the kept vertices (of ids ip, iq) and weights, returns their count
static int closest_segment(int idx[2], double lam[2], const double p[3], const double q[3], int ip, int iq) {
  double e[3];
  phys_sub3(e, q, p);
  double ee = dot3(e, e), t = ee > 0 ? -dot3(p, e) / ee : 0;
  if (t <= 0) {
    idx[0] = ip, lam[0] = 1;
    return 1;
  }
  if (t >= 1) {
    idx[0] = iq, lam[0] = 1;
    return 1;
  }
  idx[0] = ip, idx[1] = iq, lam[0] = 1 - t, lam[1] = t;
  return 2;
}

// squared norm of sum lam_i w_i over the listed vertices
static double combo_norm2(const gjkVert* s, const int* idx, const double* lam, int n) {
  double v[3] = {0, 0, 0};
  for (int i = 0; i < n; i++) phys_addscl3(v, v, s[idx[i]].w, lam[i]);
  return dot3(v, v);
}

// closest point of triangle (a, b, c) = s[ids] to the origin by its Voronoi regions (vertex, edge,
// interior; Ericson, Real-Time Collision Detection 5.1.5 with p = 0); degenerate triangles use the
// best edge. Writes the kept vertex ids and weights, returns their count.
static int closest_triangle(int idx[3], double lam[3], const gjkVert* s, const int ids[3]) {
  const double *a = s[ids[0]].w, *b = s[ids[1]].w, *c = s[ids[2]].w;
  double ab[3], ac[3];
  phys_sub3(ab, b, a);
  phys_sub3(ac, c, a);
  double d1 = -dot3(ab, a), d2 = -dot3(ac, a);  // ab.(0 - a), ac.(0 - a)
  if (d1 <= 0 && d2 <= 0) return idx[0] = ids[0], lam[0] = 1, 1;
  double d3 = -dot3(ab, b), d4 = -dot3(ac, b);
  if (d3 >= 0 && d4 <= d3) return idx[0] = ids[1], lam[0] = 1, 1;
  double d5 = -dot3(ab, c), d6 = -dot3(ac, c);
  if (d6 >= 0 && d5 <= d6) return idx[0] = ids[2], lam[0] = 1, 1;
  double vc = d1 * d4 - d3 * d2, vb = d5 * d2 - d1 * d6, va = d3 * d6 - d5 * d4;
  double sum = va + vb + vc;
  double area2 = 0;  // |ab x ac|^2 = sum * (positive factor) for a proper triangle
  {
    double n[3];
    cross3(n, ab, ac);
    area2 = dot3(n, n);
  }
  if (!(area2 > 1e-24 * dot3(ab, ab) * dot3(ac, ac)) || !(sum > 0)) {
    // degenerate (collinear): the best of the three edges
    int bi[2], bn = 0, ti[2];
    double bl[2], tl[2], best = DBL_MAX;
    const int e[3][2] = {{0, 1}, {1, 2}, {0, 2}};
    for (int k = 0; k < 3; k++) {
      int tn = closest_segment(ti, tl, s[ids[e[k][0]]].w, s[ids[e[k][1]]].w, ids[e[k][0]], ids[e[k][1]]);
      double nn = combo_norm2(s, ti, tl, tn);
      if (nn < best) best = nn, bn = tn, memcpy(bi, ti, sizeof(bi)), memcpy(bl, tl, sizeof(bl));
    }
    for (int k = 0; k < bn; k++) idx[k] = bi[k], lam[k] = bl[k];
    return bn;
  }
  if (vc <= 0 && d1 >= 0 && d3 <= 0) {  // edge ab: t = d1 / (d1 - d3)
    double t = d1 / (d1 - d3);
    return idx[0] = ids[0], idx[1] = ids[1], lam[0] = 1 - t, lam[1] = t, 2;
  }
  if (vb <= 0 && d2 >= 0 && d6 <= 0) {  // edge ac: t = d2 / (d2 - d6)
    double t = d2 / (d2 - d6);
    return idx[0] = ids[0], idx[1] = ids[2], lam[0] = 1 - t, lam[1] = t, 2;
  }
  if (va <= 0 && d4 - d3 >= 0 && d5 - d6 >= 0) {  // edge bc: t = (d4 - d3) / ((d4 - d3) + (d5 - d6))
    double t = (d4 - d3) / ((d4 - d3) + (d5 - d6));
    return idx[0] = ids[1], idx[1] = ids[2], lam[0] = 1 - t, lam[1] = t, 2;
  }
  // interior: barycentric (va, vb, vc) / (va + vb + vc)
  idx[0] = ids[0], idx[1] = ids[1], idx[2] = ids[2];
  lam[0] = va / sum, lam[1] = vb / sum, lam[2] = vc / sum;
  return 3;
}

// closest point of the simplex s[0..*n) to the origin; s is reduced in place to the vertices with a
// positive weight, lam gets their weights and v the point; returns 1 if the origin is inside a proper
// tetrahedron (s then unchanged)
static int simplex_closest(gjkVert s[4], int* n, double lam[4], double v[3]) {
  int idx[4] = {0, 1, 2, 3}, cnt = 1;
  lam[0] = 1;
  if (*n == 2) {
    cnt = closest_segment(idx, lam, s[0].w, s[1].w, 0, 1);
  } else if (*n == 3) {
    cnt = closest_triangle(idx, lam, s, idx);
  } else if (*n == 4) {
    // faces (i, j, k) with opposite vertex l: the origin is outside a face if it lies on the other side
    // of the face's plane than l: sign(n.(0 - a)) != sign(n.(l - a)), n = (b - a) x (c - a)
    static const int face[4][4] = {{0, 1, 2, 3}, {0, 1, 3, 2}, {0, 2, 3, 1}, {1, 2, 3, 0}};
    double best = DBL_MAX;
    int outside = 0;
    for (int f = 0; f < 4; f++) {
      double e1[3], e2[3], nf[3], dl[3];
      phys_sub3(e1, s[face[f][1]].w, s[face[f][0]].w);
      phys_sub3(e2, s[face[f][2]].w, s[face[f][0]].w);
      cross3(nf, e1, e2);
      phys_sub3(dl, s[face[f][3]].w, s[face[f][0]].w);
      double sl = dot3(nf, dl), so = -dot3(nf, s[face[f][0]].w);
      if (sl != 0 && sl * so >= 0) continue;  // origin on l's side of this face (or on the face plane)
      outside = 1;
      int ti[3], ids[3] = {face[f][0], face[f][1], face[f][2]};
      double tl[3];
      int tn = closest_triangle(ti, tl, s, ids);
      double nn = combo_norm2(s, ti, tl, tn);
      if (nn < best) {
        best = nn;
        cnt = tn;
        memcpy(idx, ti, sizeof(ti));
        memcpy(lam, tl, sizeof(tl));
      }
    }
    if (!outside) {
      v[0] = v[1] = v[2] = 0;
      return 1;
    }
  }
  gjkVert tmp[4];
  for (int i = 0; i < cnt; i++) tmp[i] = s[idx[i]];
  v[0] = v[1] = v[2] = 0;
  for (int i = 0; i < cnt; i++) {
    s[i] = tmp[i];
    phys_addscl3(v, v, s[i].w, lam[i]);
  }
  *n = cnt;
  return 0;
}

enum { GJK_FAR = 0, GJK_SEPARATED, GJK_OVERLAP };

// GJK distance between a and b; cut: the distance beyond which we stop (GJK_FAR); on GJK_SEPARATED the
// final simplex s[0..*n) with weights lam (closest point sum lam_i w_i); on GJK_OVERLAP s holds a
// simplex whose hull contains the origin (to tolerance) for EPA. *iter counts support calls.
static int gjk(gjkVert s[4], int* n, double lam[4], int* iter, const physConvex* a, const physConvex* b, double cut,
               double scale) {
  double d[3], v[3];
  phys_sub3(d, b->pos, a->pos);
  if (dot3(d, d) == 0) d[0] = 1;
  mink_support(s, a, b, d);
  *n = 1;
  lam[0] = 1;
  phys_copy3(v, s[0].w);
  for (*iter = 1; *iter < PHYS_GJK_MAXITER; (*iter)++) {
    double vv = dot3(v, v);
    if (vv <= GJK_ABS_TOL * GJK_ABS_TOL * scale * scale) return GJK_OVERLAP;
    double nv[3] = {-v[0], -v[1], -v[2]};
    gjkVert w;
    mink_support(&w, a, b, nv);
    // lower bound of the distance: v.w / |v|
    double vw = dot3(v, w.w);
    if (vw > 0 && vw * vw > cut * cut * vv) return GJK_FAR;
    if (vv - vw <= GJK_REL_TOL * vv) return GJK_SEPARATED;
    for (int i = 0; i < *n; i++) {
      double e[3];
      phys_sub3(e, w.w, s[i].w);
      if (dot3(e, e) <= 1e-28 * scale * scale) return GJK_SEPARATED;  // no new vertex: converged
    }
    gjkVert save[4];
    double savelam[4];
    int nsave = *n;
    memcpy(save, s, sizeof(save));
    memcpy(savelam, lam, sizeof(savelam));
    s[(*n)++] = w;
    if (simplex_closest(s, n, lam, v)) return GJK_OVERLAP;
    if (dot3(v, v) >= vv) {  // no progress (rounding): keep the previous simplex
      memcpy(s, save, sizeof(save));
      memcpy(lam, savelam, sizeof(savelam));
      *n = nsave;
      return GJK_SEPARATED;
    }
  }
  return GJK_SEPARATED;
}

//---------------------------------------------------------------------------------------------------------
// EPA: the face of C = A - B nearest to the origin inside it

typedef struct epaFace_ {
  int v[3];                 // vertex ids, counterclockwise seen from outside
  double n[3];              // outward unit normal (0 if the face has no area)
  double dist;              // n . v0: distance of the face's plane from the origin (DBL_MAX: no area)
} epaFace;

// set a face's vertices, normal and distance; orientation made outward with the interior point ctr
static void epa_face(epaFace* f, const gjkVert* v, int i, int j, int k, const double ctr[3]) {
  double e1[3], e2[3], n[3], dc[3];
  phys_sub3(e1, v[j].w, v[i].w);
  phys_sub3(e2, v[k].w, v[i].w);
  cross3(n, e1, e2);
  phys_sub3(dc, ctr, v[i].w);
  if (dot3(n, dc) > 0) {  // points inward: flip the winding
    int t = j;
    j = k, k = t;
    n[0] = -n[0], n[1] = -n[1], n[2] = -n[2];
  }
  f->v[0] = i, f->v[1] = j, f->v[2] = k;
  double len = phys_norm3(n);
  if (len > 0) {
    for (int q = 0; q < 3; q++) f->n[q] = n[q] / len;
    f->dist = dot3(f->n, v[i].w);
  } else {
    f->n[0] = f->n[1] = f->n[2] = 0;
    f->dist = DBL_MAX;
  }
}

// distance of point w from the line through p along unit u (|u| = 1)
static double line_dist(const double w[3], const double p[3], const double u[3]) {
  double e[3];
  phys_sub3(e, w, p);
  phys_addscl3(e, e, u, -dot3(e, u));
  return phys_norm3(e);
}

// a tetrahedron of C vertices containing the origin, grown from the GJK simplex s[0..n) (origin in its
// hull): missing dimensions are filled with supports along axes / normals. Returns 4, or 0 if C is flat
// around the origin.
static int epa_tetra(gjkVert v[4], const gjkVert* s, int n, const physConvex* a, const physConvex* b,
                     double tol) {
  for (int i = 0; i < 4; i++) v[i] = s[i < n ? i : 0];
  if (n == 4) {  // a flat tetrahedron is treated as its first triangle
    double e1[3], e2[3], e3[3], c[3];
    phys_sub3(e1, v[1].w, v[0].w);
    phys_sub3(e2, v[2].w, v[0].w);
    phys_sub3(e3, v[3].w, v[0].w);
    cross3(c, e1, e2);
    if (fabs(dot3(c, e3)) > tol * tol * tol) return 4;
    n = 3;
  }
  if (n == 1) {  // a second vertex: the support along an axis farthest from v0
    double best = 0;
    for (int k = 0; k < 6; k++) {
      double d[3] = {0, 0, 0};
      d[k / 2] = k % 2 ? -1 : 1;
      gjkVert w;
      mink_support(&w, a, b, d);
      double e[3];
      phys_sub3(e, w.w, v[0].w);
      double l = phys_norm3(e);
      if (l > best) best = l, v[1] = w;
    }
    if (best <= tol) return 0;
    n = 2;
  }
  if (n == 2) {  // a third vertex off the line: supports along 4 directions perpendicular to it
    double u[3], e[3] = {0, 0, 0}, p1[3], p2[3];
    phys_sub3(u, v[1].w, v[0].w);
    phys_normalize3(u);
    int k = fabs(u[0]) < fabs(u[1]) ? (fabs(u[0]) < fabs(u[2]) ? 0 : 2) : (fabs(u[1]) < fabs(u[2]) ? 1 : 2);
    e[k] = 1;
    phys_addscl3(p1, e, u, -dot3(e, u));
    phys_normalize3(p1);
    cross3(p2, u, p1);
    const double* dirs[2] = {p1, p2};
    double best = 0;
    for (int q = 0; q < 4; q++) {
      double d[3];
      phys_addscl3(d, (double[3]){0, 0, 0}, dirs[q / 2], q % 2 ? -1 : 1);
      gjkVert w;
      mink_support(&w, a, b, d);
      double l = line_dist(w.w, v[0].w, u);
      if (l > best) best = l, v[2] = w;
    }
    if (best <= tol) return 0;
  }
  // a fourth vertex off the plane: the farther of the supports along +-normal
  double e1[3], e2[3], nn[3], nneg[3];
  phys_sub3(e1, v[1].w, v[0].w);
  phys_sub3(e2, v[2].w, v[0].w);
  cross3(nn, e1, e2);
  if (phys_normalize3(nn) <= 0) return 0;
  nneg[0] = -nn[0], nneg[1] = -nn[1], nneg[2] = -nn[2];
  gjkVert wp, wn;
  mink_support(&wp, a, b, nn);
  mink_support(&wn, a, b, nneg);
  double hp = dot3(nn, wp.w) - dot3(nn, v[0].w), hn = dot3(nn, v[0].w) - dot3(nn, wn.w);
  if (fmax(hp, hn) <= tol) return 0;
  v[3] = hp >= hn ? wp : wn;
  return 4;
}

// barycentric weights of the projection of p onto triangle (a, b, c), clamped to >= 0 and normalized
static void tri_bary(double lam[3], const double p[3], const double a[3], const double b[3], const double c[3]) {
  double v0[3], v1[3], v2[3];
  phys_sub3(v0, b, a);
  phys_sub3(v1, c, a);
  phys_sub3(v2, p, a);
  double d00 = dot3(v0, v0), d01 = dot3(v0, v1), d11 = dot3(v1, v1), d20 = dot3(v2, v0), d21 = dot3(v2, v1);
  double den = d00 * d11 - d01 * d01;
  if (den > 0) {
    lam[1] = (d11 * d20 - d01 * d21) / den;
    lam[2] = (d00 * d21 - d01 * d20) / den;
    lam[0] = 1 - lam[1] - lam[2];
  } else {
    lam[0] = 1, lam[1] = lam[2] = 0;
  }
  double sum = 0;
  for (int k = 0; k < 3; k++) sum += lam[k] = fmax(lam[k], 0);
  for (int k = 0; k < 3; k++) lam[k] = sum > 0 ? lam[k] / sum : 1.0 / 3;
}

// EPA from the GJK simplex: fills r's core-level result (normal, depth in r->dist as -depth, witness
// points on the cores in p1/p2, face in s1/s2/bary); returns 0 if C is flat (no volume)
static int epa(physGjkResult* r, const gjkVert* s, int ns, const physConvex* a, const physConvex* b, double scale) {
  gjkVert vert[PHYS_EPA_MAXVERT];
  epaFace face[PHYS_EPA_MAXFACE];
  int edge[3 * PHYS_EPA_MAXFACE][2];
  char vis[PHYS_EPA_MAXFACE];
  double tol = EPA_TOL * scale;
  if (epa_tetra(vert, s, ns, a, b, tol) != 4) return 0;
  int nv = 4, nf = 0;
  double ctr[3] = {0, 0, 0};
  for (int i = 0; i < 4; i++) phys_addscl3(ctr, ctr, vert[i].w, 0.25);
  static const int tet[4][3] = {{0, 1, 2}, {0, 1, 3}, {0, 2, 3}, {1, 2, 3}};
  for (int f = 0; f < 4; f++) epa_face(face + nf++, vert, tet[f][0], tet[f][1], tet[f][2], ctr);
  int best = 0;
  for (int it = 0;; it++) {
    best = 0;
    for (int f = 1; f < nf; f++)
      if (face[f].dist < face[best].dist) best = f;
    r->iter++;
    if (it >= PHYS_EPA_MAXITER || nv >= PHYS_EPA_MAXVERT || face[best].dist == DBL_MAX) break;
    gjkVert w;
    mink_support(&w, a, b, face[best].n);
    if (dot3(face[best].n, w.w) - face[best].dist <= tol) break;  // the face is on C's boundary
    // faces seen from w are removed; their unshared edges (the horizon) are joined to w
    int ne = 0, nvis = 0;
    for (int f = 0; f < nf; f++) {
      double e[3];
      phys_sub3(e, w.w, vert[face[f].v[0]].w);
      vis[f] = f == best || dot3(face[f].n, e) > 1e-14 * scale;
      if (!vis[f]) continue;
      nvis++;
      for (int k = 0; k < 3; k++) {
        int i = face[f].v[k], j = face[f].v[(k + 1) % 3], found = -1;
        for (int q = 0; q < ne; q++)
          if (edge[q][0] == j && edge[q][1] == i) found = q;
        if (found >= 0) {
          edge[found][0] = edge[ne - 1][0], edge[found][1] = edge[ne - 1][1], ne--;
        } else {
          edge[ne][0] = i, edge[ne][1] = j, ne++;
        }
      }
    }
    if (nf - nvis + ne > PHYS_EPA_MAXFACE) break;  // out of faces (F <= 2V - 4 within the caps; guarded)
    int keep = 0;
    for (int f = 0; f < nf; f++)
      if (!vis[f]) face[keep++] = face[f];
    nf = keep;
    vert[nv] = w;
    for (int q = 0; q < ne; q++) epa_face(face + nf++, vert, edge[q][0], edge[q][1], nv, ctr);
    nv++;
  }
  // result: the nearest face; the origin's projection dist * n in barycentric coordinates
  const epaFace* f = face + best;
  double p[3], lam[3];
  phys_addscl3(p, (double[3]){0, 0, 0}, f->n, f->dist);
  tri_bary(lam, p, vert[f->v[0]].w, vert[f->v[1]].w, vert[f->v[2]].w);
  r->nsimplex = 3;
  r->p1[0] = r->p1[1] = r->p1[2] = r->p2[0] = r->p2[1] = r->p2[2] = 0;
  for (int k = 0; k < 3; k++) {
    phys_copy3(r->s1[k], vert[f->v[k]].a);
    phys_copy3(r->s2[k], vert[f->v[k]].b);
    r->bary[k] = lam[k];
    phys_addscl3(r->p1, r->p1, vert[f->v[k]].a, lam[k]);
    phys_addscl3(r->p2, r->p2, vert[f->v[k]].b, lam[k]);
  }
  r->bary[3] = 0;
  phys_copy3(r->normal, f->n);
  r->dist = -f->dist;
  r->penetrating = 1;
  return 1;
}

int phys_convex_distance(physGjkResult* r, const physConvex* a, const physConvex* b, double cutoff) {
  memset(r, 0, sizeof(*r));
  // cores when exactly one shape has a radius (polytopal difference); full shapes otherwise
  physConvex ca = *a, cb = *b;
  ca.core = a->radius > 0 && !(b->radius > 0);
  cb.core = b->radius > 0 && !(a->radius > 0);
  double ra = ca.core ? a->radius : 0, rb = cb.core ? b->radius : 0;
  double scale = fmax(a->scale + b->scale, 1e-12);
  gjkVert s[4];
  double lam[4];
  int n, iter;
  int st = gjk(s, &n, lam, &iter, &ca, &cb, fmax(cutoff, 0) + ra + rb, scale);
  r->iter = iter;
  if (st == GJK_FAR) return 0;
  if (st == GJK_SEPARATED) {
    // v = pA - pB (cores), normal = -v / |v|
    double pa[3] = {0, 0, 0}, pb[3] = {0, 0, 0}, v[3];
    for (int i = 0; i < n; i++) {
      phys_addscl3(pa, pa, s[i].a, lam[i]);
      phys_addscl3(pb, pb, s[i].b, lam[i]);
      phys_copy3(r->s1[i], s[i].a);
      phys_copy3(r->s2[i], s[i].b);
      r->bary[i] = lam[i];
    }
    r->nsimplex = n;
    phys_sub3(v, pb, pa);
    double len = phys_norm3(v);
    if (len > 0) {
      for (int k = 0; k < 3; k++) r->normal[k] = v[k] / len;
      r->dist = len;
      phys_copy3(r->p1, pa);
      phys_copy3(r->p2, pb);
    } else {
      st = GJK_OVERLAP;
    }
  }
  if (st == GJK_OVERLAP && !epa(r, s, n, &ca, &cb, scale)) {
    // C has no volume around the origin (touching flat shapes): zero distance along the centre line
    double v[3];
    phys_sub3(v, b->pos, a->pos);
    if (phys_normalize3(v) <= 0) v[0] = 1, v[1] = v[2] = 0;
    phys_copy3(r->normal, v);
    r->dist = 0;
    double pa[3] = {0, 0, 0}, pb[3] = {0, 0, 0};
    for (int i = 0; i < n; i++) phys_addscl3(pa, pa, s[i].a, lam[i]), phys_addscl3(pb, pb, s[i].b, lam[i]);
    phys_copy3(r->p1, pa);
    phys_copy3(r->p2, pb);
    r->penetrating = 1;
  }
  // add the radii: surfaces at core points +- r n
  phys_addscl3(r->p1, r->p1, r->normal, ra);
  phys_addscl3(r->p2, r->p2, r->normal, -rb);
  r->dist -= ra + rb;
  return r->dist <= cutoff;
}

//---------------------------------------------------------------------------------------------------------
// features: what a shape shows in a direction (a face polygon, a segment or a point)

typedef struct convexFeature_ {
  int n;                                // 1: point, 2: segment, >= 3: face polygon
  double p[PHYS_FEATURE_MAX][3];        // world points on the surface (faces counterclockwise seen from outside)
  double normal[3];                     // face: outward unit normal (world)
  int feat;                             // what it is (physid.h): a box's or mesh's FACE, a cylinder's cap (FACE)
                                        // or side (SURFACE), a capsule's segment (EDGE 0); UNKNOWN for a point
  double angle;                         // a cylinder: the angle of its first rim point / side segment, else 0
} convexFeature;

// box face most aligned with local direction d: axis k = argmax |d_k|, corners counterclockwise about
// the outward normal s e_k in the right-handed basis (e_i, e_j, e_k), (i, j, k) cyclic
static void feature_box(convexFeature* f, const physConvex* c, const double d[3]) {
  int k = fabs(d[0]) >= fabs(d[1]) ? (fabs(d[0]) >= fabs(d[2]) ? 0 : 2) : (fabs(d[1]) >= fabs(d[2]) ? 1 : 2);
  int i = (k + 1) % 3, j = (k + 2) % 3;
  double s = d[k] >= 0 ? 1 : -1;
  static const double ci[4] = {1, -1, -1, 1}, cj[4] = {1, 1, -1, -1};
  for (int q = 0; q < 4; q++) {
    int qq = s > 0 ? q : 3 - q;
    double xl[3];
    xl[k] = s * c->size[k];
    xl[i] = ci[qq] * c->size[i];
    xl[j] = cj[qq] * c->size[j];
    local2world(f->p[q], c, xl);
  }
  f->n = 4;
  f->feat = PHYS_FEATURE(PHYS_FEAT_FACE, 2 * k + (s > 0));
  double nl[3] = {0, 0, 0};
  nl[k] = s;
  phys_mat_vec3(f->normal, c->mat, nl);
}

// mesh hull face most aligned with local direction d (faces of more than PHYS_FEATURE_MAX vertices
// subsampled evenly); the support point if the mesh has no hull faces
static void feature_mesh(convexFeature* f, const physConvex* c, const double d[3]) {
  if (c->nface == 0) {
    double sl[3];
    support_local(sl, c, d);
    local2world(f->p[0], c, sl);
    f->n = 1;
    return;
  }
  int best = 0;
  double bd = -DBL_MAX;
  for (int q = 0; q < c->nface; q++) {
    double p = dot3(c->facenormal + 4 * q, d);
    if (p > bd) bd = p, best = q;
  }
  int nv = c->facenum[best];
  const int* fv = c->facevert + c->faceadr[best];
  f->n = nv < PHYS_FEATURE_MAX ? nv : PHYS_FEATURE_MAX;
  for (int q = 0; q < f->n; q++) local2world(f->p[q], c, c->vert + 3 * fv[(int)((long)q * nv / f->n)]);
  phys_mat_vec3(f->normal, c->mat, c->facenormal + 4 * best);
  f->feat = PHYS_FEATURE(PHYS_FEAT_FACE, best);
}

// cylinder: its cap (|d_z| >= cos 45 deg) as a PHYS_CYL_NRIM-gon whose first vertex is the rim point
// extreme along d, else its side as the segment joining the two rims' extreme points
static void feature_cylinder(convexFeature* f, const physConvex* c, const double d[3]) {
  double r = c->size[0], h = c->size[1];
  double rho = sqrt(d[0] * d[0] + d[1] * d[1]);
  double phi0 = rho > 0 ? atan2(d[1], d[0]) : 0, nd = phys_norm3(d);
  double s = d[2] >= 0 ? 1 : -1;
  f->angle = phi0;
  if (nd > 0 && fabs(d[2]) >= CAP_COS * nd) {
    // angles phi0 + s 2 pi q / N: counterclockwise about the outward normal s e_z
    for (int q = 0; q < PHYS_CYL_NRIM; q++) {
      double phi = phi0 + s * 2 * 3.14159265358979323846 * q / PHYS_CYL_NRIM;
      double xl[3] = {r * cos(phi), r * sin(phi), s * h};
      local2world(f->p[q], c, xl);
    }
    f->n = PHYS_CYL_NRIM;
    f->feat = PHYS_FEATURE(PHYS_FEAT_FACE, s > 0);
    double nl[3] = {0, 0, s};
    phys_mat_vec3(f->normal, c->mat, nl);
    return;
  }
  double u[2] = {cos(phi0), sin(phi0)};
  double x0[3] = {r * u[0], r * u[1], h}, x1[3] = {r * u[0], r * u[1], -h};
  local2world(f->p[0], c, x0);
  local2world(f->p[1], c, x1);
  f->n = 2;
  f->feat = PHYS_FEATURE(PHYS_FEAT_SURFACE, 0);
  double nl[3] = {u[0], u[1], 0};
  phys_mat_vec3(f->normal, c->mat, nl);
}

// the feature of c facing world direction dir
static void convex_feature(convexFeature* f, const physConvex* c, const double dir[3]) {
  double d[3];
  phys_matT_vec3(d, c->mat, dir);
  memset(f->normal, 0, sizeof(f->normal));
  f->feat = PHYS_FEATURE(PHYS_FEAT_UNKNOWN, 0);
  f->angle = 0;
  switch (c->type) {
    case PHYS_GEOM_BOX:
      feature_box(f, c, d);
      return;
    case PHYS_GEOM_MESH:
      feature_mesh(f, c, d);
      return;
    case PHYS_GEOM_CYLINDER:
      feature_cylinder(f, c, d);
      return;
    case PHYS_GEOM_CAPSULE: {  // both end spheres' extreme points: +-h e_z + r d / |d|
      double nd = phys_norm3(d);
      for (int q = 0; q < 2; q++) {
        double xl[3] = {0, 0, q ? -c->size[1] : c->size[1]};
        if (nd > 0) phys_addscl3(xl, xl, d, c->size[0] / nd);
        local2world(f->p[q], c, xl);
      }
      f->n = 2;
      f->feat = PHYS_FEATURE(PHYS_FEAT_EDGE, 0);
      return;
    }
    default: {  // sphere, ellipsoid: the support point
      physConvex full = *c;
      full.core = 0;
      double sl[3];
      support_local(sl, &full, d);
      local2world(f->p[0], c, sl);
      f->n = 1;
      return;
    }
  }
}

//---------------------------------------------------------------------------------------------------------
// contact reduction: the deepest point, the farthest from it, the largest triangle, the largest added area

// point i of a candidate set and its distance (DBL_MAX: not a candidate)
typedef void (*pointFn)(double p[3], double* dist, const void* ctx, int i);

// candidates stored in arrays
typedef struct pointArray_ {
  const double (*p)[3];
  const double* dist;
} pointArray;

// pointFn of a pointArray
static void array_point(double p[3], double* dist, const void* ctx, int i) {
  const pointArray* a = ctx;
  phys_copy3(p, a->p[i]);
  *dist = a->dist[i];
}

// indices of at most 4 of n candidates: i0 = argmin dist, i1 = argmax |p - p0|, i2 = argmax
// |(p1 - p0) x (p - p0)|, i3 = argmax of the area p adds outside triangle (p0, p1, p2); a point joins
// only if it adds more than a tolerance (len: length scale). Returns the count.
static int reduce4(int sel[4], pointFn get, const void* ctx, int n, double len) {
  double p[3], dist, q[4][3], best = DBL_MAX;
  int cnt = 0;
  sel[0] = -1;
  for (int i = 0; i < n; i++) {
    get(p, &dist, ctx, i);
    if (dist < best) best = dist, sel[0] = i, phys_copy3(q[0], p);
  }
  if (sel[0] < 0 || best == DBL_MAX) return 0;
  cnt = 1;
  double tol = 1e-9 * len;
  for (int stage = 1; stage < 4; stage++) {
    double bv = 0, e01[3], e02[3], nrm[3] = {0, 0, 0};
    int bi = -1;
    if (stage >= 2) phys_sub3(e01, q[1], q[0]);
    if (stage == 3) {
      phys_sub3(e02, q[2], q[0]);
      cross3(nrm, e01, e02);
    }
    for (int i = 0; i < n; i++) {
      get(p, &dist, ctx, i);
      if (dist == DBL_MAX) continue;
      double e[3], v = 0;
      phys_sub3(e, p, q[0]);
      if (stage == 1) {
        v = phys_norm3(e);  // distance from p0
      } else if (stage == 2) {
        double cr[3];
        cross3(cr, e01, e);
        v = phys_norm3(cr) / fmax(phys_norm3(e01), 1e-300);  // distance from the line p0 p1
      } else {
        // outside edge (a, b) of the triangle if ((b - a) x (p - a)) . nrm < 0; added area ~ -that
        for (int k = 0; k < 3; k++) {
          double ab[3], ap[3], cr[3];
          phys_sub3(ab, q[(k + 1) % 3], q[k]);
          phys_sub3(ap, p, q[k]);
          cross3(cr, ab, ap);
          double s = -dot3(cr, nrm) / fmax(phys_norm3(nrm) * phys_norm3(ab), 1e-300);  // distance outside
          if (s > v) v = s;
        }
      }
      if (v > bv) bv = v, bi = i;
    }
    if (bi < 0 || bv <= tol) break;
    sel[cnt] = bi;
    get(q[cnt], &dist, ctx, bi);
    cnt++;
  }
  return cnt;
}

//---------------------------------------------------------------------------------------------------------
// manifolds

// Sutherland-Hodgman: keep the part of convex polygon p[0..n) with s.x <= off; returns the new count
static int clip_plane(double out[][3], const double (*p)[3], int n, const double s[3], double off) {
  int m = 0;
  for (int i = 0; i < n; i++) {
    const double* a = p[i];
    const double* b = p[(i + 1) % n];
    double da = dot3(s, a) - off, db = dot3(s, b) - off;
    if (da <= 0) phys_copy3(out[m++], a);
    if ((da < 0 && db > 0) || (da > 0 && db < 0)) {  // the edge crosses the plane at t = da / (da - db)
      double e[3];
      phys_sub3(e, b, a);
      phys_addscl3(out[m++], a, e, da / (da - db));
    }
    if (m >= PHYS_CLIP_MAX - 1) break;  // cannot happen for convex inputs within the caps; guarded
  }
  return m;
}

// keep the part of segment p[0], p[1] with s.x <= off; returns 2, or 0 if nothing is left
static int clip_segment(double p[2][3], const double s[3], double off) {
  double d0 = dot3(s, p[0]) - off, d1 = dot3(s, p[1]) - off;
  if (d0 > 0 && d1 > 0) return 0;
  double e[3];
  phys_sub3(e, p[1], p[0]);
  if (d0 > 0) phys_addscl3(p[0], p[0], e, d0 / (d0 - d1));
  else if (d1 > 0) phys_addscl3(p[1], p[0], e, d0 / (d0 - d1));
  return 2;
}

// the features (physid.h) of point number i of a clipped manifold: the reference face flagged PHYS_FEATF_REF, the
// incident feature flagged PHYS_FEATF_INC, i in c->clip; UNKNOWN when the ids do not fit (beyond
// PHYS_FEATURE_INDEX_MAX)
static void clip_features(physContact* c, int sign, const convexFeature* ref, const convexFeature* inc, int i) {
  int ir = PHYS_FEATURE_INDEX(ref->feat), ii = PHYS_FEATURE_INDEX(inc->feat);
  int* fref = &c->feature[sign > 0 ? 0 : 1];
  int* finc = &c->feature[sign > 0 ? 1 : 0];
  if (ir > PHYS_FEATURE_INDEX_MAX || ii > PHYS_FEATURE_INDEX_MAX || PHYS_FEATURE_KIND(inc->feat) == PHYS_FEAT_UNKNOWN) {
    *fref = *finc = PHYS_FEATURE(PHYS_FEAT_UNKNOWN, 0);
    return;
  }
  *fref = PHYS_FEATURE_FLAGGED(PHYS_FEATURE_KIND(ref->feat), ir, PHYS_FEATF_REF);
  *finc = PHYS_FEATURE_FLAGGED(PHYS_FEATURE_KIND(inc->feat), ii, PHYS_FEATF_INC);
  c->clip = i;
}

// clip the incident feature (points on the other shape) against the side planes of reference face ref
// (normal f); each point's separation sep = f.(p - r0); sign = +1 if ref belongs to shape 1 (normal
// from 1 to 2 = f), -1 if to shape 2 (normal = -f). Contacts at p - sep/2 f, within margin, reduced to 4;
// their features (clip_features) name the reference face, the incident feature and the point's number among
// the clipped points.
static int clip_contacts(physContact* out, const convexFeature* ref, const convexFeature* inc, int sign,
                         double margin, double len) {
  double poly[PHYS_CLIP_MAX][3], tmp[PHYS_CLIP_MAX][3], sep[PHYS_CLIP_MAX];
  int np = inc->n;
  memcpy(poly, inc->p, sizeof(double) * 3 * (size_t)np);
  const double* f = ref->normal;
  for (int i = 0; i < ref->n && np > 0; i++) {
    // side plane of edge r_i -> r_i+1: outward normal s = (r_i+1 - r_i) x f (counterclockwise polygon)
    double e[3], s[3];
    phys_sub3(e, ref->p[(i + 1) % ref->n], ref->p[i]);
    cross3(s, e, f);
    double off = dot3(s, ref->p[i]);
    if (np >= 3) {
      np = clip_plane(tmp, (const double(*)[3])poly, np, s, off);
      memcpy(poly, tmp, sizeof(double) * 3 * (size_t)np);
    } else if (np == 2) {
      np = clip_segment(poly, s, off);
    } else if (dot3(s, poly[0]) > off) {
      np = 0;
    }
  }
  for (int i = 0; i < np; i++) {
    double e[3];
    phys_sub3(e, poly[i], ref->p[0]);
    sep[i] = dot3(f, e);
    if (sep[i] > margin) sep[i] = DBL_MAX;
  }
  pointArray arr = {(const double(*)[3])poly, sep};
  int sel[4];
  int cnt = reduce4(sel, array_point, &arr, np, len);
  double n[3] = {sign * f[0], sign * f[1], sign * f[2]};
  for (int k = 0; k < cnt; k++) {
    double pos[3];
    phys_addscl3(pos, poly[sel[k]], f, -0.5 * sep[sel[k]]);
    write_contact(out + k, pos, n, sep[sel[k]]);
    clip_features(out + k, sign, ref, inc, sel[k]);
  }
  return cnt;
}

// line contact of two parallel segments a (shape 1) and b (shape 2) along normal n: the overlap of
// their projections on a's line, distance (q_b - p_a).n at each end; 0 if not parallel or no overlap
static int segment_contacts(physContact* out, const convexFeature* a, const convexFeature* b, const double n[3],
                            double margin) {
  double ua[3], ub[3];
  phys_sub3(ua, a->p[1], a->p[0]);
  phys_sub3(ub, b->p[1], b->p[0]);
  double la = phys_normalize3(ua), lb = phys_norm3(ub);
  if (!(la > 0) || !(lb > 0)) return 0;
  if (fabs(dot3(ua, ub)) < PARALLEL_COS * lb || fabs(dot3(ua, n)) > 0.1) return 0;
  double e0[3], e1[3];
  phys_sub3(e0, b->p[0], a->p[0]);
  phys_sub3(e1, b->p[1], a->p[0]);
  double t0 = dot3(e0, ua), t1 = dot3(e1, ua);
  double lo = fmax(0, fmin(t0, t1)), hi = fmin(la, fmax(t0, t1));
  if (!(hi - lo > 1e-9 * la)) return 0;
  int cnt = 0;
  double ts[2] = {lo, hi};
  for (int k = 0; k < 2; k++) {
    double pa[3], qb[3], e[3], pos[3];
    phys_addscl3(pa, a->p[0], ua, ts[k]);
    phys_addscl3(qb, b->p[0], ub, (ts[k] - t0) / (t1 - t0));
    phys_sub3(e, qb, pa);
    double dist = dot3(e, n);
    if (dist > margin) continue;
    for (int q = 0; q < 3; q++) pos[q] = 0.5 * (pa[q] + qb[q]);
    write_contact(out + cnt, pos, n, dist);
    out[cnt++].clip = k;   // the overlap's end: 0 low, 1 high (line_contacts keeps it with the features)
  }
  return cnt;
}

// the line contact of parallel sides (segment_contacts) along its own normal m: perpendicular to a's axis, from
// a's axis towards b's centre (a point of b's axis), so that it turns smoothly with the tilt (GJK's normal n has a
// kink at exactly parallel sides), as a face manifold uses its reference face's normal; the sides are taken again
// along m. n is kept when m is not within 0.9 of n (b's centre near a's axis: deep penetration): then the points
// record no feature. Else each records a's side (a cylinder's SURFACE 0, a capsule's EDGE 0) flagged PHYS_FEATF_REF,
// b's flagged PHYS_FEATF_INC, the overlap's end (0 low, 1 high along a's p[0] -> p[1]) in clip and the cylinders'
// side angles in featangle (convex_deriv.c differentiates them)
static int line_contacts(physContact* out, const physConvex* a, const physConvex* b, convexFeature* fa,
                         convexFeature* fb, const double n[3], double margin) {
  double ax[3] = {a->mat[2], a->mat[5], a->mat[8]}, e[3], m[3];
  phys_sub3(e, b->pos, a->pos);
  phys_addscl3(m, e, ax, -dot3(e, ax));
  int own = 0;
  if (phys_normalize3(m) > 0 && dot3(m, n) >= 0.9) {
    double mm[3] = {-m[0], -m[1], -m[2]};
    convexFeature ga, gb;
    convex_feature(&ga, a, m);
    convex_feature(&gb, b, mm);
    if (ga.n == 2 && gb.n == 2) {
      *fa = ga, *fb = gb;
      n = m, own = 1;
    }
  }
  int cnt = segment_contacts(out, fa, fb, n, margin);
  for (int k = 0; k < cnt; k++) {
    if (!own) {
      out[k].clip = -1;
      continue;
    }
    out[k].feature[0] = PHYS_FEATURE_FLAGGED(PHYS_FEATURE_KIND(fa->feat), 0, PHYS_FEATF_REF);
    out[k].feature[1] = PHYS_FEATURE_FLAGGED(PHYS_FEATURE_KIND(fb->feat), 0, PHYS_FEATF_INC);
    out[k].featangle[0] = fa->angle, out[k].featangle[1] = fb->angle;
  }
  return cnt;
}

// the id (physContact.witness) of the vertex of shape c (its core when core) at world point s: a sphere's centre 0,
// a capsule's segment end 0 / 1 (-h / +h), a box's corner numbered as its VERTEX, a mesh's hull vertex number
// (the nearest); -1 when c has no vertices (curved) or none is within 1e-9 of s
static int vertex_id(const physConvex* c, int core, const double s[3]) {
  double t[3], xl[3], q[3] = {0, 0, 0};
  phys_sub3(t, s, c->pos);
  phys_matT_vec3(xl, c->mat, t);
  int id = -1;
  switch (c->type) {
    case PHYS_GEOM_SPHERE: id = core ? 0 : -1; break;
    case PHYS_GEOM_CAPSULE:
      if (core) id = xl[2] >= 0, q[2] = id ? c->size[1] : -c->size[1];
      break;
    case PHYS_GEOM_BOX:
      id = 0;
      for (int k = 0; k < 3; k++) id |= (xl[k] >= 0) << k, q[k] = xl[k] >= 0 ? c->size[k] : -c->size[k];
      break;
    case PHYS_GEOM_MESH: {
      double best = INFINITY;
      for (int i = 0; i < c->nhull; i++) {
        const double* v = c->vert + 3 * (c->hull ? c->hull[i] : i);
        double e[3];
        phys_sub3(e, v, xl);
        if (dot3(e, e) < best) best = dot3(e, e), id = i, phys_copy3(q, v);
      }
      break;
    }
    default: break;
  }
  for (int k = 0; k < 3 && id >= 0; k++)
    if (!(fabs(q[k] - xl[k]) <= 1e-9 * (1 + c->scale))) id = -1;
  return id;
}

// the features of the single witness point of result r (physid.h): the support vertices of the final simplex or
// EPA face on both shapes (cores as the distance used them), flagged PHYS_FEATF_WITNESS (and PHYS_FEATF_INSIDE
// when penetrating); -1 (c untouched) when a support point is no vertex
static int witness_features(physContact* c, const physConvex* a, const physConvex* b, const physGjkResult* r) {
  int core[2] = {a->radius > 0 && !(b->radius > 0), b->radius > 0 && !(a->radius > 0)}, k = r->nsimplex, ids[2][3];
  if (k < 1 || k > 3) return -1;
  for (int i = 0; i < k; i++) {
    ids[0][i] = vertex_id(a, core[0], r->s1[i]), ids[1][i] = vertex_id(b, core[1], r->s2[i]);
    if (ids[0][i] < 0 || ids[1][i] < 0) return -1;
  }
  for (int g = 0; g < 2; g++) {
    int nd = 1;
    for (int i = 1; i < k; i++) nd += ids[g][i] != ids[g][0] && (i < 2 || ids[g][i] != ids[g][1]);
    int kind = nd == 1 ? PHYS_FEAT_VERTEX : nd == 2 ? PHYS_FEAT_EDGE : PHYS_FEAT_FACE;
    int fl = PHYS_FEATF_WITNESS | (r->penetrating ? PHYS_FEATF_INSIDE : 0);
    c->feature[g] = PHYS_FEATURE_FLAGGED(kind, ids[g][0], fl);
    for (int i = 0; i < 3; i++) c->witness[g][i] = i < k ? ids[g][i] : -1;
  }
  return 0;
}

// the smooth patches (witness.h) a witness point on shape c may lie on, the one its support points s[0..k) suggest
// first (a cylinder's side when they are on both caps, else the rim of their cap), with their feature codes
// (physid.h): an ellipsoid's surface; a cylinder's side, rims and caps; 0 (none) for other shapes
static int smooth_candidates(int kind[5], double cap[5], int feat[5], const physConvex* c, const double (*s)[3],
                             int k) {
  if (c->type == PHYS_GEOM_ELLIPSOID) {
    kind[0] = PHYS_WS_ELLIPSOID, cap[0] = 0, feat[0] = PHYS_FEATURE(PHYS_FEAT_SURFACE, 0);
    return 1;
  }
  if (c->type != PHYS_GEOM_CYLINDER) return 0;
  int up = 0, down = 0;
  for (int i = 0; i < k; i++) {
    double e[3];
    phys_sub3(e, s[i], c->pos);
    double zl = c->mat[2] * e[0] + c->mat[5] * e[1] + c->mat[8] * e[2];
    up += zl > 0, down += zl <= 0;
  }
  double c0 = up >= down ? 1 : -1;
  const int order[5][2] = {{PHYS_WS_SIDE, 0}, {PHYS_WS_RIM, 1}, {PHYS_WS_RIM, -1}, {PHYS_WS_CAP, 1}, {PHYS_WS_CAP, -1}};
  int first = up && down ? 0 : c0 > 0 ? 1 : 2, n = 0;
  for (int q = 0; q < 5; q++) {
    int o = q == 0 ? first : q <= first ? q - 1 : q;
    kind[n] = order[o][0], cap[n] = order[o][1];
    feat[n] = order[o][0] == PHYS_WS_SIDE ? PHYS_FEATURE(PHYS_FEAT_SURFACE, 0)
              : PHYS_FEATURE(order[o][0] == PHYS_WS_RIM ? PHYS_FEAT_EDGE : PHYS_FEAT_FACE, order[o][1] > 0);
    n++;
  }
  return n;
}

// side g of a witness point as constants (witness.h): the shape's pose and sizes, its core's radius
static void side_init(physWitnessSide* w, const physConvex* c, int g, int core) {
  memset(w, 0, sizeof(*w));
  w->sigma = g ? -1 : 1;
  w->radius = sd_const(core ? c->radius : 0);
  w->c = vd_const(c->pos);
  for (int k = 0; k < 3; k++) {
    double col[3] = {c->mat[k], c->mat[3 + k], c->mat[6 + k]};
    w->ax[k] = vd_const(col), w->s[k] = sd_const(c->size[k]);
  }
}

// the distinct support vertices s[0..k) of shape c (its core when core): their ids (vertex_id, ascending) and world
// points; their count, or -1 when one is no vertex
static int distinct_vertices(int ids[3], double P[3][3], const physConvex* c, int core, const double (*s)[3], int k) {
  int nd = 0;
  for (int i = 0; i < k; i++) {
    int id = vertex_id(c, core, s[i]), at = nd;
    if (id < 0) return -1;
    for (int j = 0; j < nd; j++) at = ids[j] == id ? -1 : at;
    if (at < 0) continue;
    while (at > 0 && ids[at - 1] > id) ids[at] = ids[at - 1], phys_copy3(P[at], P[at - 1]), at--;
    ids[at] = id, phys_copy3(P[at], s[i]), nd++;
  }
  return nd;
}

// whether x (side g's point of the solution, normal n) is the support of the vertices P[0..nd) along sigma n (to
// tol): none of them further out
static int supports(const double x[3], const double n[3], double sigma, const double (*P)[3], int nd, double tol) {
  for (int i = 0; i < nd; i++) {
    double e[3];
    phys_sub3(e, P[i], x);
    if (!(sigma * phys_dot3(n, e) <= tol)) return 0;
  }
  return 1;
}

// a candidate of a side of the witness point: a smooth patch (kind, cap) or a subset (bit mask) of the vertices
typedef struct {
  int kind, mask, feat;
  double cap;
} sideCand;

// the candidates of side g: the smooth patches of its shape (smooth_candidates), else every non-empty subset of its
// distinct support vertices, all of them first (a spurious vertex of the simplex, of weight ~0, dropped in the
// smaller ones); their count, -1 when a
// support point is neither
static int side_candidates(sideCand* cand, int ids[3], double P[3][3], int* nd, const physConvex* c, int core,
                           const double (*s)[3], int k) {
  int kind[5], feat[5];
  double cap[5];
  int n = smooth_candidates(kind, cap, feat, c, s, k);
  *nd = 0;
  for (int q = 0; q < n; q++) cand[q] = (sideCand){kind[q], 0, feat[q], cap[q]};
  if (n) return n;
  if ((*nd = distinct_vertices(ids, P, c, core, s, k)) < 0) return -1;
  for (int mask = (1 << *nd) - 1; mask >= 1; mask--) cand[n++] = (sideCand){PHYS_WS_POINTS, mask, 0, 0};
  return n;
}

// side g of candidate q as constants: the shape's pose and sizes, the core's radius, the patch or the vertex subset
// (feature VERTEX, EDGE or FACE by its size, its first id the index; ids of the subset in wid, -1 after)
static void side_build(physWitnessSide* w, sideCand* q, int wid[3], const physConvex* c, int g, int core,
                       const int ids[3], const double (*P)[3], int nd) {
  side_init(w, c, g, core);
  w->kind = q->kind, w->cap = q->cap;
  for (int i = 0; i < 3; i++) wid[i] = -1;
  if (q->kind != PHYS_WS_POINTS) return;
  for (int i = 0; i < nd; i++)
    if (q->mask >> i & 1) wid[w->np] = ids[i], w->P[w->np++] = vd_const(P[i]);
  q->feat = PHYS_FEATURE(w->np == 1 ? PHYS_FEAT_VERTEX : w->np == 2 ? PHYS_FEAT_EDGE : PHYS_FEAT_FACE, wid[0]);
}

// the single witness point of result r when a side of it is a smooth patch (witness.h): solved exactly for each
// pair of candidates (side_candidates), the solution kept that stays on its patches, whose vertex sides are the
// support of all their simplex vertices, with the distance nearest r's (the first within 1e-8 of the shapes' size,
// GJK's accuracy, ends the search; else the nearest within 1e-3 of the size, the normal
// within 0.99); written to c with its features (a smooth side's patch, witness -1; a vertex side's subset, its ids
// ascending in witness); -1 (c untouched) when there is none
static int smooth_witness(physContact* c, const physConvex* a, const physConvex* b, const physGjkResult* r) {
  int core[2] = {a->radius > 0 && !(b->radius > 0), b->radius > 0 && !(a->radius > 0)}, k = r->nsimplex;
  if (k < 1 || k > 3) return -1;
  const physConvex* sh[2] = {a, b};
  const double(*s[2])[3] = {(const double(*)[3])r->s1, (const double(*)[3])r->s2};
  sideCand cand[2][7];
  int nc[2], nd[2], ids[2][3];
  double P[2][3][3];
  for (int g = 0; g < 2; g++)
    if ((nc[g] = side_candidates(cand[g], ids[g], P[g], &nd[g], sh[g], core[g], s[g], k)) < 0) return -1;
  if (cand[0][0].kind == PHYS_WS_POINTS && cand[1][0].kind == PHYS_WS_POINTS) return -1;
  double scale = a->scale + b->scale, best = 1e-3 * (1 + scale), tol = 1e-9 * (1 + scale), mid[3];
  double z[PHYS_WITNESS_MAXZ], bp[3] = {0, 0, 0}, bn[3] = {0, 0, 1}, bd = 0, X[3], N[3], D;
  int bf[2] = {0, 0}, bw[2][3], wid[2][3], done = 0;
  for (int q = 0; q < 3; q++) mid[q] = 0.5 * (r->p1[q] + r->p2[q]);
  for (int i = 0; i < nc[0] && !done; i++)
    for (int j = 0; j < nc[1] && !done; j++) {
      physWitnessSide ws[2];
      side_build(&ws[0], &cand[0][i], wid[0], a, 0, core[0], ids[0], (const double(*)[3])P[0], nd[0]);
      side_build(&ws[1], &cand[1][j], wid[1], b, 1, core[1], ids[1], (const double(*)[3])P[1], nd[1]);
      phys_witness_start(z, ws, mid, r->normal, r->dist);
      if (phys_witness_solve(z, ws, scale)) continue;
      phys_witness_values(X, N, &D, ws, z);
      // each side's core point x_g = pos -+ (dist/2 + r_g) n supports its simplex vertices
      int ok = 1;
      for (int g = 0; g < 2 && ok; g++) {
        double x[3], sg = g ? 1 : -1;
        for (int q = 0; q < 3; q++) x[q] = X[q] + sg * (0.5 * D + ws[g].radius.v) * N[q];
        ok = supports(x, N, g ? -1 : 1, (const double(*)[3])P[g], nd[g], tol);
      }
      double gap = fabs(D - r->dist);
      if (!ok || !(gap < best) || !(phys_dot3(N, r->normal) >= 0.99)) continue;
      best = gap, bd = D, bf[0] = cand[0][i].feat, bf[1] = cand[1][j].feat;
      phys_copy3(bp, X), phys_copy3(bn, N);
      memcpy(bw, wid, sizeof(bw));
      done = gap <= 1e-8 * (1 + scale);   // GJK's distance to its accuracy: this is the patch
    }
  if (best == 1e-3 * (1 + scale)) return -1;
  write_contact(c, bp, bn, bd);
  int fl = PHYS_FEATF_WITNESS | (r->penetrating ? PHYS_FEATF_INSIDE : 0);
  for (int g = 0; g < 2; g++) {
    c->feature[g] = PHYS_FEATURE_FLAGGED(PHYS_FEATURE_KIND(bf[g]), PHYS_FEATURE_INDEX(bf[g]), fl);
    memcpy(c->witness[g], bw[g], sizeof(bw[g]));
  }
  return 0;
}

int phys_convex_manifold(physContact* out, const physConvex* a, const physConvex* b, const physGjkResult* r,
                         double margin) {
  if (!(r->dist <= margin)) return 0;
  const double* n = r->normal;
  double nn[3] = {-n[0], -n[1], -n[2]};
  double len = a->scale + b->scale;
  convexFeature fa, fb;
  convex_feature(&fa, a, n);
  convex_feature(&fb, b, nn);
  // the reference face: a face of either shape whose normal is (within PHYS_FACE_COS) the contact normal
  double ala = fa.n >= 3 ? dot3(fa.normal, n) : -2, alb = fb.n >= 3 ? dot3(fb.normal, nn) : -2;
  int cnt = 0;
  if (ala >= PHYS_FACE_COS && fb.n >= 2 && (ala >= alb || fa.n < 2))
    cnt = clip_contacts(out, &fa, &fb, 1, margin, len);
  else if (alb >= PHYS_FACE_COS && fa.n >= 2)
    cnt = clip_contacts(out, &fb, &fa, -1, margin, len);
  // a cylinder's feature depends on the direction n (its rim polygon's angle): recorded for the derivative
  for (int k = 0; k < cnt; k++) out[k].featangle[0] = fa.angle, out[k].featangle[1] = fb.angle;
  if (cnt > 0) return cnt;
  if (fa.n == 2 && fb.n == 2) cnt = line_contacts(out, a, b, &fa, &fb, n, margin);
  if (cnt > 0) return cnt;
  // one point midway between the witness points
  double pos[3];
  for (int k = 0; k < 3; k++) pos[k] = 0.5 * (r->p1[k] + r->p2[k]);
  write_contact(out, pos, n, r->dist);
  if (witness_features(out, a, b, r)) smooth_witness(out, a, b, r);
  return 1;
}

//---------------------------------------------------------------------------------------------------------
// pair functions

// candidates of a plane contact: world vertices of a mesh hull, or 8 rim points of a cylinder
typedef struct planeCand_ {
  const physConvex* c;
  const double* n;          // plane normal (world)
  const double* p0;         // plane point
  double margin;
  double rim[8][3];         // cylinder rim points (local)
} planeCand;

// pointFn of a plane candidate: world point, its distance n.(p - p0) (DBL_MAX beyond the margin)
static void plane_point(double p[3], double* dist, const void* ctx, int i) {
  const planeCand* pc = ctx;
  const physConvex* c = pc->c;
  if (c->type == PHYS_GEOM_MESH) local2world(p, c, c->vert + 3 * (c->hull ? c->hull[i] : i));
  else local2world(p, c, pc->rim[i]);
  double e[3];
  phys_sub3(e, p, pc->p0);
  *dist = dot3(pc->n, e);
  if (*dist > pc->margin) *dist = DBL_MAX;
}

int phys_collide_convex_plane(const physModel* m, const physData* d, int g1, int g2, double margin, physContact* out) {
  const double* pm = d->geom_xmat + 9 * g1;
  double n[3] = {pm[2], pm[5], pm[8]};  // plane normal: its local z axis
  physConvex c;
  phys_convex_init(&c, m, d, g2);
  planeCand pc = {&c, n, d->geom_xpos + 3 * g1, margin, {{0}}};
  int ncand = 0;
  if (c.type == PHYS_GEOM_MESH) {
    ncand = c.nhull;
  } else if (c.type == PHYS_GEOM_CYLINDER) {
    // rim points of both caps at +-u, +-v: u the rim direction deepest along -n, v = e_z x u
    double nl[3], u[2] = {1, 0};
    phys_matT_vec3(nl, c.mat, n);
    double rho = sqrt(nl[0] * nl[0] + nl[1] * nl[1]);
    if (rho > 1e-12) u[0] = -nl[0] / rho, u[1] = -nl[1] / rho;
    double v[2] = {-u[1], u[0]}, r = c.size[0], h = c.size[1];
    for (int cap = 0; cap < 2; cap++)
      for (int q = 0; q < 4; q++) {
        double* x = pc.rim[4 * cap + q];
        const double* dir = q < 2 ? u : v;
        double sg = q % 2 ? -1 : 1;
        x[0] = sg * r * dir[0];
        x[1] = sg * r * dir[1];
        x[2] = cap ? h : -h;
      }
    // the cap deeper along -n first (z = -h when n_z > 0 locally): deterministic ties
    if (nl[2] < 0) {
      double t[4][3];
      memcpy(t, pc.rim, sizeof(t));
      memcpy(pc.rim, pc.rim[4], sizeof(t));
      memcpy(pc.rim[4], t, sizeof(t));
    }
    ncand = 8;
  } else {
    // any other convex shape: its support point along -n
    double nn[3] = {-n[0], -n[1], -n[2]}, p[3], e[3], pos[3];
    phys_convex_support(p, &c, nn);
    phys_sub3(e, p, pc.p0);
    double dist = dot3(n, e);
    if (dist > margin) return 0;
    phys_addscl3(pos, p, n, -0.5 * dist);
    write_contact(out, pos, n, dist);
    return 1;
  }
  int sel[4];
  int cnt = reduce4(sel, plane_point, &pc, ncand, c.scale);
  for (int k = 0; k < cnt; k++) {
    double p[3], dist, pos[3];
    plane_point(p, &dist, &pc, sel[k]);
    phys_addscl3(pos, p, n, -0.5 * dist);
    write_contact(out + k, pos, n, dist);
    if (c.type == PHYS_GEOM_MESH)   // the plane's face and the hull vertex (physid.h)
      out[k].feature[0] = PHYS_FEATURE(PHYS_FEAT_FACE, 0), out[k].feature[1] = PHYS_FEATURE(PHYS_FEAT_VERTEX, sel[k]);
  }
  return cnt;
}

physCollideFn phys_convex_collide_fn(int t1, int t2) {
  if (t1 < 0 || t2 < 0 || t1 >= PHYS_NGEOMTYPE || t2 >= PHYS_NGEOMTYPE || t2 == PHYS_GEOM_PLANE) return NULL;
  return t1 == PHYS_GEOM_PLANE ? phys_collide_convex_plane : phys_collide_convex_convex;
}

int phys_collide_convex_convex(const physModel* m, const physData* d, int g1, int g2, double margin,
                               physContact* out) {
  if (m->geom_type[g1] == PHYS_GEOM_PLANE || m->geom_type[g2] == PHYS_GEOM_PLANE) return 0;
  physConvex a, b;
  phys_convex_init(&a, m, d, g1);
  phys_convex_init(&b, m, d, g2);
  physGjkResult r;
  if (!phys_convex_distance(&r, &a, &b, margin)) return 0;
  return phys_convex_manifold(out, &a, &b, &r, margin);
}
