// metrics.c - paper 004's parameter metrics (metrics.h): volume of the symmetric difference of two convex hulls
// by Qhull (reentrant libqhull_r, as src/model/hull.c), friction and inertia errors against a true model.
#include "metrics.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libqhull_r/qhull_ra.h>

#include "hull.h"
#include "rot.h"

//---------------------------------------------------------------------------------------------------------
// convex hulls

// a convex hull as Qhull returns it, triangulated (Qt): its facets' halfspaces and its triangles' edges
typedef struct convexSet_ {
  double vol;        // volume (0: flat)
  int nplane;        // facets: n.x + d <= 0 inside, n unit
  double* plane;     // 4 nplane
  int nedge;         // triangle edges (each shared edge twice: harmless, the clipped points repeat)
  double* edge;      // 6 nedge: the two end points
} convexSet;

static void convex_free(convexSet* c) {
  free(c->plane);
  free(c->edge);
  memset(c, 0, sizeof *c);
}

// copy the facets and triangle edges of Qhull's current hull into c; 0 if out of memory
static int convex_extract(convexSet* c, qhT* qh) {
  facetT* facet;
  int nf = 0;
  FORALLfacets nf++;
  c->plane = malloc(sizeof(double) * 4 * (size_t)nf);
  c->edge = malloc(sizeof(double) * 18 * (size_t)nf);
  if (!c->plane || !c->edge) return 0;
  FORALLfacets {
    double* pl = c->plane + 4 * c->nplane++;
    for (int k = 0; k < 3; k++) pl[k] = facet->normal[k];
    pl[3] = facet->offset;
    vertexT* v[3];
    int n = 0;
    vertexT *vertex, **vertexp;
    FOREACHvertex_(facet->vertices) if (n < 3) v[n++] = vertex;
    for (int i = 0; i < n && n == 3; i++) {   // triangulated: three vertices, three edges
      double* e = c->edge + 6 * c->nedge++;
      memcpy(e, v[i]->point, sizeof(double) * 3);
      memcpy(e + 3, v[(i + 1) % 3]->point, sizeof(double) * 3);
    }
  }
  return 1;
}

typedef struct {
  convexSet* c;
  int want_faces;
} convexVisit;

// phys_qhull_run's visitor: the volume, and the facets and edges when wanted (0 out of memory)
static int convex_visit(qhT* qh, void* ctx) {
  convexVisit* v = ctx;
  qh_getarea(qh, qh->facet_list);
  v->c->vol = qh->totvol;
  return !v->want_faces || convex_extract(v->c, qh);
}

// the hull of the n points p into c (with its facets and edges when want_faces); c->vol = 0 and no facets
// when they span no volume
static physStatus convex_build(convexSet* c, const double* p, int n, int want_faces, physLog* log) {
  memset(c, 0, sizeof *c);
  for (int i = 0; i < 3 * n; i++)
    if (!isfinite(p[i])) return phys_error(log, PHYS_ERR_VALUE, "convex hull: point %d is not finite", i / 3);
  if (n < 4) return PHYS_OK;
  char msg[1024];
  convexVisit v = {c, want_faces};
  int ok = 1;
  int code = phys_qhull_run(p, n, "qhull Qt", convex_visit, &v, &ok, msg, sizeof msg);   // Qt: triangles
  physStatus st = PHYS_OK;
  if (code < 0 || (code == 0 && !ok)) {
    st = phys_error(log, PHYS_ERR_NOMEM, "convex hull: out of memory (%d points)", n);
  } else if (code != 0 && code != qh_ERRsingular && code != qh_ERRprec) {   // flat input: volume 0; else fails
    st = phys_error(log, code == qh_ERRmem ? PHYS_ERR_NOMEM : PHYS_ERR_NUMERIC, "convex hull of %d points: Qhull: %s",
                    n, msg[0] ? msg : "error");
  }
  if (st != PHYS_OK) convex_free(c);
  return st;
}

physStatus phys_hull_volume(const double* p, int n, double* vol, physLog* log) {
  convexSet c;
  physStatus st = convex_build(&c, p, n, 0, log);
  *vol = c.vol;
  convex_free(&c);
  return st;
}

// clip the segment e (6 doubles) to the halfspaces of c pushed out by tol; appends the end points of what
// remains to out (count *n) and returns 1, or 0 when nothing remains
static int clip_segment(const double e[6], const convexSet* c, double tol, double* out, int* n) {
  double t0 = 0, t1 = 1;
  for (int f = 0; f < c->nplane; f++) {
    const double* pl = c->plane + 4 * f;
    double f0 = pl[0] * e[0] + pl[1] * e[1] + pl[2] * e[2] + pl[3] - tol;
    double f1 = pl[0] * e[3] + pl[1] * e[4] + pl[2] * e[5] + pl[3] - tol;
    if (f0 > 0 && f1 > 0) return 0;
    if (f0 <= 0 && f1 <= 0) continue;
    double t = f0 / (f0 - f1);   // where the segment crosses the plane
    if (f0 > 0) t0 = t > t0 ? t : t0;
    else t1 = t < t1 ? t : t1;
    if (t0 > t1) return 0;
  }
  for (int k = 0; k < 3; k++) {
    out[3 * *n + k] = e[k] + t0 * (e[3 + k] - e[k]);
    out[3 * *n + 3 + k] = e[k] + t1 * (e[3 + k] - e[k]);
  }
  *n += 2;
  return 1;
}

// largest |coordinate| of n points: the scale of the clipping tolerance
static double points_scale(const double* p, int n) {
  double s = 0;
  for (int i = 0; i < 3 * n; i++) s = fabs(p[i]) > s ? fabs(p[i]) : s;
  return s;
}

physStatus phys_hull_intersection_volume(const double* a, int na, const double* b, int nb, double* vol,
                                         physLog* log) {
  *vol = 0;
  convexSet A, B;
  physStatus st = convex_build(&A, a, na, 1, log);
  if (st != PHYS_OK) return st;
  if ((st = convex_build(&B, b, nb, 1, log)) != PHYS_OK) {
    convex_free(&A);
    return st;
  }
  double* pts = NULL;
  if (A.vol > 0 && B.vol > 0) {
    // a point counts as inside a facet within 1e-14 of the coordinates' scale (Qhull's roundoff, ~50 ulps):
    // an edge on a face of the other hull stays in; the volume grows by at most tol times the surface
    double sa = points_scale(a, na), sb = points_scale(b, nb);
    double tol = 1e-14 * (sa > sb ? sa : sb);
    pts = malloc(sizeof(double) * 6 * (size_t)(A.nedge + B.nedge));
    if (!pts) {
      st = phys_error(log, PHYS_ERR_NOMEM, "hull intersection: out of memory");
    } else {
      int n = 0;
      for (int i = 0; i < A.nedge; i++) clip_segment(A.edge + 6 * i, &B, tol, pts, &n);
      for (int i = 0; i < B.nedge; i++) clip_segment(B.edge + 6 * i, &A, tol, pts, &n);
      st = phys_hull_volume(pts, n, vol, log);
    }
  }
  free(pts);
  convex_free(&A);
  convex_free(&B);
  return st;
}

physStatus phys_hull_symdiff_volume(const double* a, int na, const double* b, int nb, double* vol, physLog* log) {
  double va, vb, vab;
  physStatus st;
  if ((st = phys_hull_volume(a, na, &va, log)) != PHYS_OK) return st;
  if ((st = phys_hull_volume(b, nb, &vb, log)) != PHYS_OK) return st;
  if ((st = phys_hull_intersection_volume(a, na, b, nb, &vab, log)) != PHYS_OK) return st;
  *vol = fmax(va + vb - 2 * vab, 0);   // roundoff can leave a tiny negative for equal hulls
  return PHYS_OK;
}

//---------------------------------------------------------------------------------------------------------
// body geometry and inertia

// 1 if geom g takes part in collisions: contype or conaffinity nonzero, or named by a <pair>
static int geom_collides(const physModel* m, int g) {
  if (m->geom_contype[g] || m->geom_conaffinity[g]) return 1;
  for (int p = 0; p < m->npair; p++)
    if (m->pair_geom1[p] == g || m->pair_geom2[p] == g) return 1;
  return 0;
}

// append the point x (geom frame) of geom g, in the body frame, to p if there is room
static void put_point(const physModel* m, int g, const double x[3], double* p, int max, int* n) {
  if (*n < max) {
    double r[3];
    phys_quat_rotate(r, m->geom_quat + 4 * g, x);
    for (int k = 0; k < 3; k++) p[3 * *n + k] = r[k] + m->geom_pos[3 * g + k];
  }
  (*n)++;
}

int phys_body_hull_points(const physModel* m, int b, double* p, int max, int* geom) {
  int n = 0;
  for (int g = 0; g < m->ngeom; g++) {
    if (m->geom_bodyid[g] != b || !geom_collides(m, g)) continue;
    const double* s = m->geom_size + 3 * g;
    if (m->geom_type[g] == PHYS_GEOM_BOX) {
      for (int c = 0; c < 8; c++) {
        double x[3] = {c & 1 ? s[0] : -s[0], c & 2 ? s[1] : -s[1], c & 4 ? s[2] : -s[2]};
        put_point(m, g, x, p, max, &n);
      }
    } else if (m->geom_type[g] == PHYS_GEOM_MESH) {
      int id = m->geom_dataid[g];
      for (int v = 0; v < m->mesh_vertnum[id]; v++)
        put_point(m, g, m->mesh_vert + 3 * (m->mesh_vertadr[id] + v), p, max, &n);
    } else {
      if (geom) *geom = g;
      return -1;
    }
  }
  return n;
}

void phys_body_inertial_params(const physModel* m, int b, double th[10]) {
  double R[9], I[9] = {0};
  phys_quat2mat(R, m->body_iquat + 4 * b);
  // I = R diag(inertia) R'
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      for (int k = 0; k < 3; k++) I[3 * i + j] += R[3 * i + k] * m->body_inertia[3 * b + k] * R[3 * j + k];
  th[0] = m->body_mass[b];
  for (int k = 0; k < 3; k++) th[1 + k] = m->body_ipos[3 * b + k];
  th[4] = I[0], th[5] = I[4], th[6] = I[8];
  th[7] = I[1], th[8] = I[2], th[9] = I[5];
}

double phys_inertia_error(const double th_hat[10], const double th[10], double l) {
  double m = th[0];
  if (l <= 0) l = sqrt((th[4] + th[5] + th[6]) / (3 * m));
  double rho[10] = {m, l, l, l};
  for (int k = 4; k < 10; k++) rho[k] = m * l * l;
  double s = 0;
  for (int k = 0; k < 10; k++) s += (th_hat[k] - th[k]) / rho[k] * ((th_hat[k] - th[k]) / rho[k]);
  return sqrt(s);
}

//---------------------------------------------------------------------------------------------------------
// errors against a true model

// "name" of an object or "#id"
static const char* obj_name(const physModel* m, const char* kind, int id, char* buf, size_t n) {
  const char* s = phys_id2name(m, kind, id);
  if (s && s[0]) return s;
  snprintf(buf, n, "#%d", id);
  return buf;
}

// PHYS_OK if model and truth have the same bodies (names) and geoms (bodies, types), else the first difference
static physStatus same_structure(const physModel* m, const physModel* t, physLog* log) {
  char b1[32], b2[32];
  if (m->nbody != t->nbody)
    return phys_error(log, PHYS_ERR_MODEL, "truth model: %d bodies, the model %d: they must describe the same bodies",
                      t->nbody, m->nbody);
  if (m->ngeom != t->ngeom)
    return phys_error(log, PHYS_ERR_MODEL, "truth model: %d geoms, the model %d: they must describe the same geoms",
                      t->ngeom, m->ngeom);
  for (int b = 1; b < m->nbody; b++) {
    const char *nm = obj_name(m, "body", b, b1, sizeof b1), *nt = obj_name(t, "body", b, b2, sizeof b2);
    if (strcmp(nm, nt) != 0)
      return phys_error(log, PHYS_ERR_MODEL, "truth model: body %d is '%s', in the model '%s'", b, nt, nm);
  }
  for (int g = 0; g < m->ngeom; g++)
    if (m->geom_bodyid[g] != t->geom_bodyid[g])
      return phys_error(log, PHYS_ERR_MODEL, "truth model: geom %s is on body %d, in the model on body %d",
                        obj_name(t, "geom", g, b1, sizeof b1), t->geom_bodyid[g], m->geom_bodyid[g]);
  return PHYS_OK;
}

// sliding friction of the geom pair (g1, g2) if they may touch (an explicit <pair>'s, else the larger of the
// geoms' when contype/conaffinity allow it), -1 if they never collide
static double pair_friction(const physModel* m, int g1, int g2) {
  for (int p = 0; p < m->npair; p++)
    if ((m->pair_geom1[p] == g1 && m->pair_geom2[p] == g2) || (m->pair_geom1[p] == g2 && m->pair_geom2[p] == g1))
      return m->pair_friction[p];
  if (!(m->geom_contype[g1] & m->geom_conaffinity[g2]) && !(m->geom_contype[g2] & m->geom_conaffinity[g1])) return -1;
  return fmax(m->geom_friction[3 * g1], m->geom_friction[3 * g2]);
}

// mean over body b's geom pairs with the world's geoms of |mu_hat - mu| / mu (|mu_hat - mu| where mu = 0);
// NAN without such a pair
static double friction_error(const physModel* m, const physModel* t, int b) {
  double s = 0;
  int n = 0;
  for (int g = 0; g < t->ngeom; g++) {
    if (t->geom_bodyid[g] != b) continue;
    for (int w = 0; w < t->ngeom; w++) {
      if (t->geom_bodyid[w] != 0) continue;
      double mu = pair_friction(t, g, w), mh = pair_friction(m, g, w);
      if (mu < 0) continue;
      if (mh < 0) mh = 0;
      s += mu > 0 ? fabs(mh - mu) / mu : fabs(mh - mu);
      n++;
    }
  }
  return n ? s / n : NAN;
}

// body b's geometry errors into e (NAN when either body has no polytope geometry)
static physStatus volume_error(const physModel* m, const physModel* t, int b, physBodyErrors* e, physLog* log) {
  e->volume_error = e->symdiff = e->true_volume = NAN;
  int ga = -1, gb = -1;
  int na = phys_body_hull_points(m, b, NULL, 0, &ga), nb = phys_body_hull_points(t, b, NULL, 0, &gb);
  if (na <= 0 || nb <= 0) return PHYS_OK;
  double* a = malloc(sizeof(double) * 3 * (size_t)(na + nb));
  if (!a) return phys_error(log, PHYS_ERR_NOMEM, "volume error: out of memory");
  double* p = a + 3 * na;
  phys_body_hull_points(m, b, a, na, NULL);
  phys_body_hull_points(t, b, p, nb, NULL);
  physStatus st = phys_hull_volume(p, nb, &e->true_volume, log);
  if (st == PHYS_OK) st = phys_hull_symdiff_volume(a, na, p, nb, &e->symdiff, log);
  if (st == PHYS_OK && e->true_volume > 0) e->volume_error = e->symdiff / e->true_volume;
  free(a);
  return st;
}

// add x to the mean *s (count *n) unless NAN
static void add_mean(double* s, int* n, double x) {
  if (isnan(x)) return;
  *s += x;
  (*n)++;
}

physStatus phys_param_errors(const physModel* model, const physModel* truth, double l, physParamErrors* e,
                             physLog* log) {
  memset(e, 0, sizeof *e);
  physStatus st = same_structure(model, truth, log);
  if (st != PHYS_OK) return st;
  e->nbody = truth->nbody - 1;
  e->body = calloc((size_t)(e->nbody > 0 ? e->nbody : 1), sizeof(physBodyErrors));
  if (!e->body) return phys_error(log, PHYS_ERR_NOMEM, "parameter errors: out of memory");
  double sv = 0, sf = 0, si = 0;
  for (int b = 1; b < truth->nbody; b++) {
    physBodyErrors* be = e->body + b - 1;
    be->body = b;
    if ((st = volume_error(model, truth, b, be, log)) != PHYS_OK) {
      phys_param_errors_free(e);
      return st;
    }
    be->friction_error = friction_error(model, truth, b);
    be->inertia_error = NAN;
    if (truth->body_mass[b] > 0) {
      double th[10], thh[10];
      phys_body_inertial_params(truth, b, th);
      phys_body_inertial_params(model, b, thh);
      be->inertia_error = phys_inertia_error(thh, th, l);
    }
    add_mean(&sv, &e->nvolume, be->volume_error);
    add_mean(&sf, &e->nfriction, be->friction_error);
    add_mean(&si, &e->ninertia, be->inertia_error);
  }
  e->volume_error = e->nvolume ? sv / e->nvolume : NAN;
  e->friction_error = e->nfriction ? sf / e->nfriction : NAN;
  e->inertia_error = e->ninertia ? si / e->ninertia : NAN;
  return PHYS_OK;
}

void phys_param_errors_free(physParamErrors* e) {
  free(e->body);
  memset(e, 0, sizeof *e);
}
