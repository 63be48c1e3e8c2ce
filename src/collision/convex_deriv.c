// convex_deriv.c - Jacobians of the contact geometry of the convex routines (see convex_deriv.h): convex.c's
// decisions (which vertex, which reference face and incident feature, which clipped point, which support points
// form the final simplex, which smooth patch holds a witness point) are read from the contact's record; the side
// planes that cut are found on the values (the clipping's arithmetic path); the contact is re-evaluated on dual
// values (dual.h) with those features held fixed, a witness point on a smooth patch through its equations
// (witness.h). Neither the distance nor the pair function is run again; a contact without a record is refused.
// The caller (primitive_deriv.c) checks that the result reproduces the contact to roundoff.
#include "convex_deriv.h"

#include <float.h>

#include "convex.h"
#include "primitive_deriv.h"
#include "rot.h"
#include "witness.h"

// a direction fixed in geom i (local vl): R vl (value as phys_mat_vec3), d/dw_i = -[R vl]x
static vd_t in_dir(const dualCtx* x, int i, const double vl[3]) {
  vd_t r;
  memset(&r, 0, sizeof(r));
  const double* R = x->d->geom_xmat + 9 * x->g[i];
  for (int j = 0; j < 3; j++) r.v[j] = R[3 * j] * vl[0] + R[3 * j + 1] * vl[1] + R[3 * j + 2] * vl[2];
  rot_jac(&r, i);
  return r;
}

// world axes of geom i
static void axes(vd_t ax[3], const dualCtx* x, int i) {
  for (int k = 0; k < 3; k++) ax[k] = in_axis(x, i, k);
}

// geom-frame point xl (dual, sizes inside) of geom i in world: c + R xl
static vd_t local_point(const dualCtx* x, int i, const vd_t* xl) {
  vd_t ax[3], c = in_centre(x, i);
  axes(ax, x, i);
  vd_t t = dual_rotate(ax, xl);
  return vd_add(t, &c);
}

//---------------------------------------------------------------------------------------------------------
// plane-mesh: contact = hull vertex p, dist = n.(p - p0), pos = p - n dist/2 (phys_collide_convex_plane)

int phys_dconvex_plane(vd_t* pos, vd_t* n, sd_t* dist, const dualCtx* x, int con) {
  (void)con;
  physConvex c;
  phys_convex_init(&c, x->m, x->d, x->g[1]);
  if (c.type != PHYS_GEOM_MESH || c.nhull <= 0 || !x->tfeat) return -1;
  int f = x->tfeat[1], i = PHYS_FEATURE_INDEX(f);   // the hull vertex the contact records (physid.h)
  if (PHYS_FEATURE_KIND(f) != PHYS_FEAT_VERTEX || i < 0 || i >= c.nhull) return -1;
  int bv = c.hull ? c.hull[i] : i;
  vd_t P = in_point(x, 1, c.vert + 3 * bv), P0 = in_centre(x, 0);
  *n = in_axis(x, 0, 2);
  vd_t e = vd_sub(P, &P0);
  *dist = vd_dot(n, &e);
  *pos = vd_axpy(P, sd_lscl(-0.5, *dist), n);
  return 0;
}

//---------------------------------------------------------------------------------------------------------
// the single witness point of the distance result

// weights of the point of the affine hull of W[0..k) nearest to the origin: k = 2: t = -W0.E/E.E with
// E = W1 - W0; k = 3: the 2 x 2 normal equations of min |W0 + l1 E1 + l2 E2|^2; l0 = 1 - sum of the others
static int affine_weights(sd_t lam[3], const vd_t* W, int k) {
  if (k == 1) {
    lam[0] = sd_const(1);
    return 0;
  }
  vd_t E1 = vd_sub(W[1], &W[0]);
  if (k == 2) {
    sd_t ee = vd_dot(&E1, &E1);
    if (!(ee.v > 0)) return -1;
    lam[1] = sd_scl(sd_div(vd_dot(&W[0], &E1), ee), -1);
    lam[0] = sd_sub(sd_const(1), lam[1]);
    return 0;
  }
  vd_t E2 = vd_sub(W[2], &W[0]);
  sd_t g11 = vd_dot(&E1, &E1), g12 = vd_dot(&E1, &E2), g22 = vd_dot(&E2, &E2);
  sd_t b1 = sd_scl(vd_dot(&E1, &W[0]), -1), b2 = sd_scl(vd_dot(&E2, &W[0]), -1);
  sd_t det = sd_sub(sd_mul(g11, g22), sd_mul(g12, g12));
  if (!(det.v > 1e-12 * g11.v * g22.v)) return -1;  // collinear simplex
  lam[1] = sd_div(sd_sub(sd_mul(b1, g22), sd_mul(b2, g12)), det);
  lam[2] = sd_div(sd_sub(sd_mul(g11, b2), sd_mul(g12, b1)), det);
  lam[0] = sd_sub(sd_sub(sd_const(1), lam[1]), lam[2]);
  return 0;
}

// the single point of phys_convex_manifold: witness points p1 = sum l_i a_i, p2 = sum l_i b_i of the final
// simplex (a_i, b_i support vertices, W_i = a_i - b_i). Separated: l from the affine projection of the
// origin, n = (p2 - p1)/|p2 - p1|, dist = |p2 - p1|. Penetrating (EPA face): n the face's unit normal
// (oriented as the result's), depth = n.W_0, l the barycentric weights of depth n in the face, dist =
// -depth (nr: the result's normal). Then the radii of cores: p1 += r1 n, p2 -= r2 n, dist -= r1 + r2;
// pos = (p1 + p2)/2. A[i], B[i]: the k support vertices (cores ca, cb)
static int d_witness_points(vd_t* pos, vd_t* n, sd_t* dist, const dualCtx* x, int ca_core, int cb_core,
                            const vd_t* A, const vd_t* B, int k, int penetrating, const double nr[3]) {
  if (k < 1 || k > 3 || (penetrating && k != 3)) return -1;
  vd_t W[3];
  for (int i = 0; i < k; i++) W[i] = vd_sub(A[i], &B[i]);
  sd_t lam[3];
  if (!penetrating) {
    if (affine_weights(lam, W, k)) return -1;
  } else {
    vd_t E1 = vd_sub(W[1], &W[0]), E2 = vd_sub(W[2], &W[0]), N = vd_cross(&E1, &E2);
    if (!(vd_norm(&N).v > 0)) return -1;
    N = vd_unit(&N);
    if (phys_dot3(N.v, nr) < 0) N = vd_lscl(-1, N);
    sd_t depth = vd_dot(&N, &W[0]);
    vd_t p = vd_scl(depth, &N), v2 = vd_sub(p, &W[0]);
    sd_t d00 = vd_dot(&E1, &E1), d01 = vd_dot(&E1, &E2), d11 = vd_dot(&E2, &E2);
    sd_t d20 = vd_dot(&v2, &E1), d21 = vd_dot(&v2, &E2), den = sd_sub(sd_mul(d00, d11), sd_mul(d01, d01));
    if (!(den.v > 0)) return -1;
    lam[1] = sd_div(sd_sub(sd_mul(d11, d20), sd_mul(d01, d21)), den);
    lam[2] = sd_div(sd_sub(sd_mul(d00, d21), sd_mul(d01, d20)), den);
    lam[0] = sd_sub(sd_sub(sd_const(1), lam[1]), lam[2]);
    for (int i = 0; i < 3; i++)
      if (lam[i].v < 0) return -1;  // the projection left the face: convex.c clamped it
    *n = N;
    *dist = sd_scl(depth, -1);
  }
  vd_t p1 = vd_scl(lam[0], &A[0]), p2 = vd_scl(lam[0], &B[0]);
  for (int i = 1; i < k; i++) p1 = vd_axpy(p1, lam[i], &A[i]), p2 = vd_axpy(p2, lam[i], &B[i]);
  if (!penetrating) {
    vd_t v = vd_sub(p2, &p1);
    *dist = vd_norm(&v);
    if (!(dist->v > 0)) return -1;
    *n = vd_unit(&v);
  }
  if (ca_core) {
    sd_t ra = in_size(x, 0, 0);
    p1 = vd_axpy(p1, ra, n);
    *dist = sd_sub(*dist, ra);
  }
  if (cb_core) {
    sd_t rb = in_size(x, 1, 0);
    p2 = vd_axpy(p2, sd_scl(rb, -1), n);
    *dist = sd_sub(*dist, rb);
  }
  *pos = vd_lscl(0.5, vd_add(p1, &p2));
  return 0;
}

// vertex id (physContact.witness) of geom i's (core) shape c as a point moving with the geom (a sphere's centre, a
// capsule's end c +- h a, a box corner c + R (+-s_k), a mesh hull vertex); -1 if there is no such vertex
static int vertex_dual(vd_t* P, const dualCtx* x, int i, const physConvex* c, int core, int id) {
  switch (c->type) {
    case PHYS_GEOM_SPHERE:
      if (!core || id != 0) return -1;
      *P = in_centre(x, i);
      return 0;
    case PHYS_GEOM_CAPSULE: {
      if (!core || id < 0 || id > 1) return -1;
      vd_t a = in_axis(x, i, 2);
      *P = vd_axpy(in_centre(x, i), sd_lscl(id ? 1 : -1, in_size(x, i, 1)), &a);
      return 0;
    }
    case PHYS_GEOM_BOX: {
      if (id < 0 || id > 7) return -1;
      vd_t v;
      for (int k = 0; k < 3; k++) vd_set(&v, k, sd_lscl((id >> k) & 1 ? 1 : -1, in_size(x, i, k)));
      *P = local_point(x, i, &v);
      return 0;
    }
    case PHYS_GEOM_MESH:
      if (id < 0 || id >= c->nhull) return -1;
      *P = in_point(x, i, c->vert + 3 * (c->hull ? c->hull[id] : id));
      return 0;
    default: return -1;
  }
}

// side g of a witness point on a smooth patch as the target records it (witness.h), its geometry as duals: a
// cylinder's rim (EDGE c), side (SURFACE) or cap (FACE c), an ellipsoid's SURFACE, or the distinct support vertices
// the witness record names; -1 when the record does not fit the shape
static int witness_side(physWitnessSide* w, const dualCtx* x, int g, const physConvex* c, int core) {
  const physContact* t = x->tc;
  int f = t->feature[g], kind = PHYS_FEATURE_KIND(f), id = PHYS_FEATURE_INDEX(f);
  memset(w, 0, sizeof(*w));
  w->sigma = g ? -1 : 1;
  w->radius = core ? in_size(x, g, 0) : sd_const(0);
  w->c = in_centre(x, g);
  axes(w->ax, x, g);
  for (int k = 0; k < phys_geom_nsize(c->type); k++) w->s[k] = in_size(x, g, k);
  if (c->type == PHYS_GEOM_ELLIPSOID) {
    w->kind = PHYS_WS_ELLIPSOID;
    return kind == PHYS_FEAT_SURFACE && id == 0 ? 0 : -1;
  }
  if (c->type == PHYS_GEOM_CYLINDER) {
    w->kind = kind == PHYS_FEAT_EDGE ? PHYS_WS_RIM : kind == PHYS_FEAT_FACE ? PHYS_WS_CAP : PHYS_WS_SIDE;
    w->cap = id ? 1 : -1;
    return kind == PHYS_FEAT_SURFACE ? (id == 0 ? 0 : -1) : (kind == PHYS_FEAT_EDGE || kind == PHYS_FEAT_FACE) &&
           id <= 1 ? 0 : -1;
  }
  w->kind = PHYS_WS_POINTS;
  for (int i = 0; i < 3 && t->witness[g][i] >= 0; i++) {
    int seen = 0;
    for (int j = 0; j < i; j++) seen |= t->witness[g][j] == t->witness[g][i];
    if (!seen && vertex_dual(&w->P[w->np++], x, g, c, core, t->witness[g][i])) return -1;
  }
  return w->np > 0 ? 0 : -1;
}

// the witness point as the target records it (physContact.witness: the support vertices, PHYS_FEATF_INSIDE for
// EPA; or the smooth patches), differentiated without running the distance again: on vertices the EPA face's
// normal oriented as the target's; on a smooth patch by its equations at the target (witness.h). 0 or -1; 1 when
// the target records none
static int drecorded_witness(vd_t* pos, vd_t* n, sd_t* dist, const dualCtx* x, const physConvex* ab) {
  const physContact* t = x->tc;
  if (!t || !(PHYS_FEATURE_FLAGS(t->feature[0]) & PHYS_FEATURE_FLAGS(t->feature[1]) & PHYS_FEATF_WITNESS)) return 1;
  int core[2] = {ab[0].radius > 0 && !(ab[1].radius > 0), ab[1].radius > 0 && !(ab[0].radius > 0)}, k = 0;
  if (t->witness[0][0] < 0 || t->witness[1][0] < 0) {   // a smooth patch
    physWitnessSide w[2];
    double z[PHYS_WITNESS_MAXZ];
    for (int g = 0; g < 2; g++)
      if (witness_side(&w[g], x, g, ab + g, core[g])) return -1;
    phys_witness_start(z, w, t->pos, t->frame, t->dist);
    return phys_witness_contact(pos, n, dist, w, z, 1e-9 * (1 + ab[0].scale + ab[1].scale));
  }
  vd_t P[2][3];
  while (k < 3 && t->witness[0][k] >= 0) k++;
  for (int i = 0; i < k; i++)
    for (int g = 0; g < 2; g++)
      if (vertex_dual(&P[g][i], x, g, ab + g, core[g], t->witness[g][i])) return -1;
  int pen = PHYS_FEATURE_FLAGS(t->feature[0]) & PHYS_FEATF_INSIDE;
  return d_witness_points(pos, n, dist, x, core[0], core[1], P[0], P[1], k, pen, t->frame);
}

//---------------------------------------------------------------------------------------------------------
// face manifolds

// a feature with dual points: 1 point (not differentiated), 2 a segment, >= 3 a face polygon
typedef struct {
  int n;
  vd_t p[PHYS_FEATURE_MAX];
  vd_t normal;              // face: outward unit normal
} dFeature;

// box face k on side s (feature_box's face): corners counterclockwise about s e_k: xl_k = s s_k, xl_i = +-s_i,
// xl_j = +-s_j
static void dfeature_box_face(dFeature* f, const dualCtx* x, int i, int k, double s) {
  int a = (k + 1) % 3, b = (k + 2) % 3;
  static const double ci[4] = {1, -1, -1, 1}, cj[4] = {1, 1, -1, -1};
  for (int q = 0; q < 4; q++) {
    int qq = s > 0 ? q : 3 - q;
    vd_t xl;
    vd_set(&xl, k, sd_lscl(s, in_size(x, i, k)));
    vd_set(&xl, a, sd_lscl(ci[qq], in_size(x, i, a)));
    vd_set(&xl, b, sd_lscl(cj[qq], in_size(x, i, b)));
    f->p[q] = local_point(x, i, &xl);
  }
  f->n = 4;
  f->normal = vd_lscl(s, in_axis(x, i, k));
}

// mesh hull face `face` (feature_mesh's face, same subsampling)
static void dfeature_mesh_face(dFeature* f, const dualCtx* x, int i, const physConvex* c, int face) {
  int nv = c->facenum[face];
  const int* fv = c->facevert + c->faceadr[face];
  f->n = nv < PHYS_FEATURE_MAX ? nv : PHYS_FEATURE_MAX;
  for (int q = 0; q < f->n; q++) f->p[q] = in_point(x, i, c->vert + 3 * fv[(int)((long)q * nv / f->n)]);
  f->normal = in_dir(x, i, c->facenormal + 4 * face);
}

// cylinder (feature_cylinder) seen from the unit world direction udir (its local dl = R' udir, rho =
// |(dl_0, dl_1)|, (cos phi0, sin phi0) = (dl_0, dl_1)/rho): its cap (cap = +-1: the +-h cap) as the
// PHYS_CYL_NRIM-gon of rim points at phi0 + s 2 pi q / N (s = cap), z = s h, normal s a; else (cap 0) its side
// as the segment (r cos phi0, r sin phi0, +-h), normal R (cos phi0, sin phi0, 0). The first rim point, the
// one extreme along udir, turns with udir; with udir NULL, or udir within 1e-6 rad of the axis (where its
// direction is arbitrary), phi0 is held at its recorded value and the rim turns with the body (a cap as the
// reference face: its vertices only bound the clipping)
static void dfeature_cylinder(dFeature* f, const dualCtx* x, int i, int cap, double phi0, const vd_t* udir) {
  vd_t ax[3], dl;
  axes(ax, x, i);
  sd_t co, si, r = in_size(x, i, 0), h = in_size(x, i, 1);
  int turn = 0;
  if (udir) {  // the angle's derivative from udir, its value recorded (convex.c's normal's: EPA leaves it
               // ~1e-11 off the face normal, which would move the rim points by 1e-11/rho)
    dl = dual_unrotate(ax, udir);
    sd_t d0 = vd_get(&dl, 0), d1 = vd_get(&dl, 1), rho = sd_sqrt(sd_add(sd_mul(d0, d0), sd_mul(d1, d1)));
    if (rho.v > 1e-6) co = sd_div(d0, rho), si = sd_div(d1, rho), co.v = cos(phi0), si.v = sin(phi0), turn = 1;
  }
  if (!turn) co = sd_const(cos(phi0)), si = sd_const(sin(phi0));
  double s = cap;
  if (cap) {
    for (int q = 0; q < PHYS_CYL_NRIM; q++) {
      double k = s * 2 * 3.14159265358979323846 * q / PHYS_CYL_NRIM, ck = cos(k), sk = sin(k);
      vd_t xl;  // (r cos(phi0 + k), r sin(phi0 + k), s h)
      vd_set(&xl, 0, sd_mul(r, sd_sub(sd_scl(co, ck), sd_scl(si, sk))));
      vd_set(&xl, 1, sd_mul(r, sd_add(sd_scl(si, ck), sd_scl(co, sk))));
      vd_set(&xl, 2, sd_lscl(s, h));
      f->p[q] = local_point(x, i, &xl);
    }
    f->n = PHYS_CYL_NRIM;
    f->normal = vd_lscl(s, ax[2]);
    return;
  }
  for (int q = 0; q < 2; q++) {
    vd_t xl;
    vd_set(&xl, 0, sd_mul(r, co));
    vd_set(&xl, 1, sd_mul(r, si));
    vd_set(&xl, 2, sd_lscl(q ? -1 : 1, h));
    f->p[q] = local_point(x, i, &xl);
  }
  f->n = 2;
  vd_t nl;
  vd_set(&nl, 0, co), vd_set(&nl, 1, si), vd_set(&nl, 2, sd_const(0));
  f->normal = dual_rotate(ax, &nl);
}

// a capsule's incident segment (convex_feature's): its end spheres' extreme points c +- h a + r udir along the unit
// direction udir (dual), which turns with the reference face's normal
static void dfeature_capsule(dFeature* f, const dualCtx* x, int i, const vd_t* udir) {
  vd_t cc = in_centre(x, i), a = in_axis(x, i, 2);
  sd_t h = in_size(x, i, 1), r = in_size(x, i, 0);
  for (int q = 0; q < 2; q++) {
    vd_t e = vd_axpy(cc, sd_lscl(q ? -1 : 1, h), &a);
    f->p[q] = vd_axpy(e, r, udir);
  }
  f->n = 2;
}

// a node of the manifold's clipping (values): an incident point (a < 0, point b) or the crossing of the
// segment from node a to node b with side plane `plane`, at a + t (b - a), t = da / (da - db)
typedef struct {
  double p[3];
  int a, b, plane;
} clipNode;

#define CLIP_NODES (PHYS_FEATURE_MAX * 9)  // incident points + crossings (a convex polygon: <= 2 per plane)

// the clipping's state: nodes, the current polygon (node ids), the reference face's side planes
typedef struct {
  clipNode nd[CLIP_NODES];
  int nn, poly[PHYS_CLIP_MAX], np;
} clipState;

// a crossing node at a + t (b - a); -1 when the node pool is full
static int add_crossing(clipState* c, int a, int b, double t, int plane) {
  if (c->nn >= CLIP_NODES) return -1;
  clipNode* q = c->nd + c->nn;
  double e[3];
  phys_sub3(e, c->nd[b].p, c->nd[a].p);
  phys_addscl3(q->p, c->nd[a].p, e, t);
  q->a = a, q->b = b, q->plane = plane;
  return c->nn++;
}

// one side plane s.x <= off on values, as clip_contacts does it: polygon (clip_plane), segment
// (clip_segment) or point; returns -1 if the node pool overflows
static int clip_step(clipState* c, const double s[3], double off, int plane) {
  int* p = c->poly;
  if (c->np >= 3) {
    int out[PHYS_CLIP_MAX], m = 0;
    for (int i = 0; i < c->np; i++) {
      int a = p[i], b = p[(i + 1) % c->np];
      double da = phys_dot3(s, c->nd[a].p) - off, db = phys_dot3(s, c->nd[b].p) - off;
      if (da <= 0) out[m++] = a;
      if ((da < 0 && db > 0) || (da > 0 && db < 0))
        if ((out[m++] = add_crossing(c, a, b, da / (da - db), plane)) < 0) return -1;
      if (m >= PHYS_CLIP_MAX - 1) break;
    }
    memcpy(p, out, sizeof(int) * (size_t)m);
    c->np = m;
  } else if (c->np == 2) {
    double d0 = phys_dot3(s, c->nd[p[0]].p) - off, d1 = phys_dot3(s, c->nd[p[1]].p) - off;
    if (d0 > 0 && d1 > 0) {
      c->np = 0;
    } else if (d0 > 0 || d1 > 0) {
      int q = add_crossing(c, p[0], p[1], d0 / (d0 - d1), plane);
      if (q < 0) return -1;
      p[d0 > 0 ? 0 : 1] = q;
    }
  } else if (c->np == 1 && phys_dot3(s, c->nd[p[0]].p) > off) {
    c->np = 0;
  }
  return 0;
}

// side plane i of the reference face: s = (r_i+1 - r_i) x f, off = s.r_i
static void side_plane(vd_t* s, sd_t* off, const dFeature* ref, int i) {
  vd_t e = vd_sub(ref->p[(i + 1) % ref->n], &ref->p[i]);
  *s = vd_cross(&e, &ref->normal);
  *off = vd_dot(s, &ref->p[i]);
}

// memo of node duals (shared parents are evaluated once; a full memo just recomputes)
#define MEMO_MAX 48
typedef struct {
  int id[MEMO_MAX], n;
  vd_t v[MEMO_MAX];
} nodeMemo;

// dual of node id: an incident point, or a + t (b - a) with t = da / (da - db), d = s.x - off
static vd_t node_dual(const clipState* c, int id, const dFeature* ref, const dFeature* inc, nodeMemo* memo) {
  const clipNode* q = c->nd + id;
  if (q->a < 0) return inc->p[q->b];
  for (int i = 0; i < memo->n; i++)
    if (memo->id[i] == id) return memo->v[i];
  vd_t a = node_dual(c, q->a, ref, inc, memo), b = node_dual(c, q->b, ref, inc, memo), s;
  sd_t off;
  side_plane(&s, &off, ref, q->plane);
  sd_t da = sd_sub(vd_dot(&s, &a), off), db = sd_sub(vd_dot(&s, &b), off);
  vd_t e = vd_sub(b, &a), r = vd_axpy(a, sd_div(da, sd_sub(da, db)), &e);
  if (memo->n < MEMO_MAX) memo->id[memo->n] = id, memo->v[memo->n++] = r;
  return r;
}

// clip_contacts on values: the incident feature inc clipped by the side planes s = (r_i+1 - r_i) x f of the
// reference face ref, each point's origin recorded; -1 if the node pool overflows
static int clip_values(clipState* c, const dFeature* ref, const dFeature* inc) {
  c->nn = c->np = inc->n;
  for (int i = 0; i < inc->n; i++) {
    memcpy(c->nd[i].p, inc->p[i].v, sizeof(c->nd[i].p));
    c->nd[i].a = -1, c->nd[i].b = i, c->poly[i] = i;
  }
  const double* f = ref->normal.v;
  for (int i = 0; i < ref->n && c->np > 0; i++) {
    double e[3], s[3];
    phys_sub3(e, ref->p[(i + 1) % ref->n].v, ref->p[i].v);
    phys_cross3(s, e, f);
    if (clip_step(c, s, phys_dot3(s, ref->p[i].v), i)) return -1;
  }
  return 0;
}

// the contact at clipped node id on duals: p = node_dual(id), dist = f.(p - r_0), pos = p - f dist/2,
// n = sign f
static void clip_dual(vd_t* pos, vd_t* n, sd_t* dist, const clipState* c, int id, const dFeature* ref,
                      const dFeature* inc, double sign, nodeMemo* memo) {
  vd_t p = node_dual(c, id, ref, inc, memo), e = vd_sub(p, &ref->p[0]);
  *dist = vd_dot(&ref->normal, &e);
  *pos = vd_axpy(p, sd_lscl(-0.5, *dist), &ref->normal);
  *n = vd_lscl(sign, ref->normal);
}

//---------------------------------------------------------------------------------------------------------
// GJK/EPA pairs (phys_collide_convex_convex): the recorded manifold point or witness point

// the features of geom i a clipped manifold point records (convex.h): its face (a box's FACE 2k + side, a mesh
// hull face), a cylinder's cap (FACE) or side (SURFACE), or, incident, a capsule's segment (its end spheres'
// extreme points along udir = minus the reference face's normal): 0; a cylinder's rim polygon starts at its recorded
// angle (physContact.featangle); -1 when the record does not fit
static int drecorded_feature(dFeature* f, const dualCtx* x, int i, const physConvex* c, int feat, const vd_t* udir) {
  int id = PHYS_CONVEX_CLIP_ID(feat), kind = PHYS_FEATURE_KIND(feat);
  if (c->type == PHYS_GEOM_CYLINDER) {
    if (!(kind == PHYS_FEAT_FACE && id <= 1) && !(kind == PHYS_FEAT_SURFACE && id == 0)) return -1;
    dfeature_cylinder(f, x, i, kind == PHYS_FEAT_SURFACE ? 0 : id ? 1 : -1, x->tc->featangle[i], udir);
    return 0;
  }
  if (c->type == PHYS_GEOM_BOX && kind == PHYS_FEAT_FACE && id < 6) {
    dfeature_box_face(f, x, i, id / 2, id % 2 ? 1 : -1);
    return 0;
  }
  if (c->type == PHYS_GEOM_MESH && kind == PHYS_FEAT_FACE && id < c->nface) {
    dfeature_mesh_face(f, x, i, c, id);
    return 0;
  }
  if (c->type == PHYS_GEOM_CAPSULE && kind == PHYS_FEAT_EDGE && udir) {
    dfeature_capsule(f, x, i, udir);
    return 0;
  }
  return -1;
}

// the recorded features of a clipped manifold point, their clipping on values and the node duals, kept for the
// next target of the same pair: the points a pair's manifold clips share their reference face and incident
// feature (only the point's number differs), so those are differentiated once per pair, not once per point
typedef struct {
  int valid, key[5];    // r, the reference's kind and id, the incident's kind and id (without the point's number)
  double angle[2];      // the cylinders' recorded angles (physContact.featangle)
  int st;               // 0: f, c ready; else -1 (the features do not fit the geometry)
  dFeature f[2];
  clipState c;
  nodeMemo memo;        // node duals of c (shared by the targets: the same values as evaluated per target)
} recClip;

// the features a target's record names (reference geom r), clipped on values into rc: 0, or -1 when they do not
// fit the geometry, cannot form a manifold or the clipping overflows
static int recorded_clip_build(recClip* rc, const dualCtx* x, const physConvex* ab, int r) {
  dFeature* f = rc->f;
  rc->memo.n = 0;
  int rr = drecorded_feature(&f[r], x, r, ab + r, x->tfeat[r], NULL);
  if (rr) return rr;
  vd_t u = vd_lscl(-1, f[r].normal);
  int ri = drecorded_feature(&f[1 - r], x, 1 - r, ab + 1 - r, x->tfeat[1 - r], &u);
  if (ri) return ri;
  if (f[r].n < 3 || f[1 - r].n < 2) return -1;
  return clip_values(&rc->c, &f[r], &f[1 - r]) ? -1 : 0;
}

// the side of cylinder or capsule i as a line contact records it (a cylinder's SURFACE 0, a capsule's EDGE 0, at
// the recorded angle), taken along the unit direction udir: 0, or -1 when the record does not fit the geom
static int dline_side(dFeature* f, const dualCtx* x, int i, const physConvex* c, int feat, const vd_t* udir) {
  int kind = PHYS_FEATURE_KIND(feat);
  if (PHYS_CONVEX_CLIP_ID(feat) != 0) return -1;
  if (c->type == PHYS_GEOM_CYLINDER && kind == PHYS_FEAT_SURFACE)
    dfeature_cylinder(f, x, i, 0, x->tc->featangle[i], udir);
  else if (c->type == PHYS_GEOM_CAPSULE && kind == PHYS_FEAT_EDGE)
    dfeature_capsule(f, x, i, udir);
  else
    return -1;
  return 0;
}

// a line contact of parallel sides (convex.c's line_contacts) as the target records it: geom 0's side (REF) and
// geom 1's side (INC) along the normal m = the unit part of c_1 - c_0 perpendicular to geom 0's axis, the overlap
// of geom 1's side projected on geom 0's (t in [max(0, min(t0, t1)), min(l_a, max(t0, t1))], the bounds chosen by
// value), its end pt (0 low, 1 high): pa on geom 0's side, qb on geom 1's at the same t, pos their midpoint, dist
// (qb - pa).m. 0, or -1 when the record does not fit
static int dline_contact(vd_t* pos, vd_t* n, sd_t* dist, const dualCtx* x, const physConvex* ab, int pt) {
  vd_t a = in_axis(x, 0, 2), c0 = in_centre(x, 0), c1 = in_centre(x, 1), e = vd_sub(c1, &c0);
  vd_t m = vd_axpy(e, sd_lscl(-1, vd_dot(&e, &a)), &a);
  m = vd_unit(&m);
  vd_t mm = vd_lscl(-1, m);
  dFeature f[2];
  if (pt < 0 || pt > 1 || dline_side(&f[0], x, 0, &ab[0], x->tfeat[0], &m) ||
      dline_side(&f[1], x, 1, &ab[1], x->tfeat[1], &mm))
    return -1;
  vd_t ua = vd_sub(f[0].p[1], &f[0].p[0]), ub = vd_sub(f[1].p[1], &f[1].p[0]);
  sd_t la = vd_norm(&ua);
  ua = vd_unit(&ua);
  vd_t e0 = vd_sub(f[1].p[0], &f[0].p[0]), e1 = vd_sub(f[1].p[1], &f[0].p[0]);
  sd_t t0 = vd_dot(&e0, &ua), t1 = vd_dot(&e1, &ua);
  sd_t lo = t0.v < t1.v ? t0 : t1, hi = t0.v < t1.v ? t1 : t0;
  sd_t t = pt ? (hi.v < la.v ? hi : la) : (lo.v > 0 ? lo : sd_const(0));
  vd_t pa = vd_axpy(f[0].p[0], t, &ua);
  vd_t qb = vd_axpy(f[1].p[0], sd_div(sd_sub(t, t0), sd_sub(t1, t0)), &ub);
  vd_t d = vd_sub(qb, &pa);
  *dist = vd_dot(&d, &m);
  *pos = vd_lscl(0.5, vd_add(pa, &qb));
  *n = m;
  return 0;
}

// a clipped manifold point as the target records it (reference face, incident feature, the point's number among
// the clipped points in physContact.clip, with a cylinder its rim polygon's angle in featangle: convex.h), or a line
// contact of parallel sides (a side as the reference: dline_contact), differentiated without running the distance
// again: 0; 1 when the target is no clipped point; -1 when the record
// names a feature or point the geometry does not have. rc keeps the features and clipping across the targets of
// one pair (valid = 0 before the first)
static int drecorded_clip(vd_t* pos, vd_t* n, sd_t* dist, const dualCtx* x, const physConvex* ab, recClip* rc) {
  if (!x->tfeat || !x->tc) return 1;
  int fl0 = PHYS_FEATURE_FLAGS(x->tfeat[0]), fl1 = PHYS_FEATURE_FLAGS(x->tfeat[1]);
  int r = fl0 & PHYS_FEATF_REF ? 0 : fl1 & PHYS_FEATF_REF ? 1 : -1;
  if (r < 0 || !(PHYS_FEATURE_FLAGS(x->tfeat[1 - r]) & PHYS_FEATF_INC)) return 1;
  int kr = PHYS_FEATURE_KIND(x->tfeat[r]);
  if (kr == PHYS_FEAT_SURFACE || kr == PHYS_FEAT_EDGE)   // a side, not a face: a line contact (geom 0's side REF)
    return r == 0 ? dline_contact(pos, n, dist, x, ab, x->tc->clip) : -1;
  int key[5] = {r, PHYS_FEATURE_KIND(x->tfeat[r]), PHYS_CONVEX_CLIP_ID(x->tfeat[r]),
                PHYS_FEATURE_KIND(x->tfeat[1 - r]), PHYS_CONVEX_CLIP_ID(x->tfeat[1 - r])};
  const double* ang = x->tc->featangle;
  if (!rc->valid || memcmp(rc->angle, ang, sizeof(rc->angle)) || memcmp(rc->key, key, sizeof(key))) {
    rc->valid = 1;
    memcpy(rc->angle, ang, sizeof(rc->angle));
    memcpy(rc->key, key, sizeof(key));
    rc->st = recorded_clip_build(rc, x, ab, r);
  }
  if (rc->st) return -1;
  int pt = x->tc->clip;
  if (pt < 0 || pt >= rc->c.np) return -1;
  clip_dual(pos, n, dist, &rc->c, rc->c.poly[pt], &rc->f[r], &rc->f[1 - r], r ? -1 : 1, &rc->memo);
  return 0;
}

// the target's recorded clipped point or witness point (rc shared across one pair's targets): 0, or -1 when it
// records neither or its record does not fit
static int drecorded(vd_t* pos, vd_t* n, sd_t* dist, const dualCtx* x, const physConvex* ab, recClip* rc) {
  int rec = drecorded_clip(pos, n, dist, x, ab, rc);
  if (rec > 0) rec = drecorded_witness(pos, n, dist, x, ab);
  return rec > 0 ? -1 : rec;
}

int phys_dconvex_pair(vd_t* pos, vd_t* n, sd_t* dist, const dualCtx* x, int con) {
  (void)con;
  physConvex ab[2];
  phys_convex_init(&ab[0], x->m, x->d, x->g[0]);
  phys_convex_init(&ab[1], x->m, x->d, x->g[1]);
  recClip rcl;
  rcl.valid = 0;
  return drecorded(pos, n, dist, x, ab, &rcl);
}

// phys_dconvex_pair for every target out[k] at once: the recorded features shared by the targets naming them
// (their clipping and node duals evaluated once per pair)
int phys_dconvex_pair_all(vd_t* pos, vd_t* n, sd_t* dist, int* rc, const dualCtx* x, const physContact* out,
                          int nout) {
  physConvex ab[2];
  phys_convex_init(&ab[0], x->m, x->d, x->g[0]);
  phys_convex_init(&ab[1], x->m, x->d, x->g[1]);
  recClip rcl;
  rcl.valid = 0;
  for (int k = 0; k < nout; k++) {
    dualCtx xk = *x;
    xk.tpos = out[k].pos, xk.tdist = out[k].dist, xk.tfeat = out[k].feature, xk.tc = out + k;
    rc[k] = drecorded(pos + k, n + k, dist + k, &xk, ab, &rcl);
  }
  return 0;
}
