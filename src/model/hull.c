// hull.c - convex hulls of meshes at model compile time (Qhull, reentrant libqhull_r).
#include "hull.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libqhull_r/qhull_ra.h>

//---------------------------------------------------------------------------------------------------------
// one mesh's hull in malloc'ed arrays (compile time only)

typedef struct hullTmp_ {
  int nvert;              // hull vertices
  int* vert;              // their indices within the mesh
  int nface;              // hull faces (merged coplanar polygons)
  double* normal;         // nface x 4: outward unit normal, offset
  int* faceadr;           // nface: first entry in facevert
  int* facenum;           // nface: number of vertices of the face
  int nfacevert;          // entries in facevert
  int* facevert;          // face polygons, counterclockwise seen from outside
} hullTmp;

// release the arrays of a hullTmp
static void hull_tmp_free(hullTmp* h) {
  free(h->vert);
  free(h->normal);
  free(h->faceadr);
  free(h->facenum);
  free(h->facevert);
  memset(h, 0, sizeof(*h));
}

// "file:line: " of a mesh (its <mesh> element) for messages
static const char* mesh_where(const physSpec* s, const physSpecMesh* sm, char* buf, size_t n) {
  return phys_spec_where(s, sm->fileid, sm->line, buf, n);
}

// 1 if a geom that may collide uses mesh i: contype or conaffinity nonzero, or named in a <pair>
static int mesh_needs_hull(const physSpec* s, int i) {
  for (int g = 0; g < s->ngeom; g++) {
    const physSpecGeom* sg = s->geom + g;
    if (sg->type != PHYS_GEOM_MESH || sg->mesh != i) continue;
    if (sg->contype || sg->conaffinity) return 1;
    for (int p = 0; p < s->npair; p++)
      if (sg->name[0] && (strcmp(s->pair[p].geom1, sg->name) == 0 || strcmp(s->pair[p].geom2, sg->name) == 0))
        return 1;
  }
  return 0;
}

//---------------------------------------------------------------------------------------------------------
// polygon geometry

// plane of a polygon (vertex ids idx[0..n) into vert): Newell's normal
//   n = sum_i (v_i - v_{i+1}) x (v_i + v_{i+1}) / 2 (components as below), normalized,
// offset b = mean_i n.v_i; returns 0 (plane untouched) if the polygon has no area
static int polygon_plane(double plane[4], const double* vert, const int* idx, int n) {
  double nn[3] = {0, 0, 0}, c[3] = {0, 0, 0};
  for (int i = 0; i < n; i++) {
    const double* a = vert + 3 * idx[i];
    const double* b = vert + 3 * idx[(i + 1) % n];
    nn[0] += (a[1] - b[1]) * (a[2] + b[2]);
    nn[1] += (a[2] - b[2]) * (a[0] + b[0]);
    nn[2] += (a[0] - b[0]) * (a[1] + b[1]);
    for (int k = 0; k < 3; k++) c[k] += a[k] / n;
  }
  double len = sqrt(nn[0] * nn[0] + nn[1] * nn[1] + nn[2] * nn[2]);
  if (!(len > 0)) return 0;
  for (int k = 0; k < 3; k++) plane[k] = nn[k] / len;
  plane[3] = plane[0] * c[0] + plane[1] * c[1] + plane[2] * c[2];
  return 1;
}

// an angle and a vertex id, for sorting a face's vertices around its normal
typedef struct angleId_ {
  double angle;
  int id;
} angleId;

// qsort order: increasing angle, then id (deterministic)
static int angle_cmp(const void* a, const void* b) {
  const angleId* x = a;
  const angleId* y = b;
  if (x->angle != y->angle) return x->angle < y->angle ? -1 : 1;
  return (x->id > y->id) - (x->id < y->id);
}

// sort ids[0..n) counterclockwise about the outward normal nrm: angle = atan2((p-c).v, (p-c).u) in the
// right-handed basis (u, v = n x u, n), c the centroid; tmp holds n entries
static void order_ccw(int* ids, int n, const double* vert, const double nrm[3], angleId* tmp) {
  double c[3] = {0, 0, 0}, u[3], v[3];
  for (int i = 0; i < n; i++)
    for (int k = 0; k < 3; k++) c[k] += vert[3 * ids[i] + k] / n;
  // u: the axis least aligned with n, made orthogonal to it
  int a = fabs(nrm[0]) < fabs(nrm[1]) ? (fabs(nrm[0]) < fabs(nrm[2]) ? 0 : 2) : (fabs(nrm[1]) < fabs(nrm[2]) ? 1 : 2);
  double e[3] = {0, 0, 0};
  e[a] = 1;
  double d = e[0] * nrm[0] + e[1] * nrm[1] + e[2] * nrm[2];
  for (int k = 0; k < 3; k++) u[k] = e[k] - d * nrm[k];
  double lu = sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
  for (int k = 0; k < 3; k++) u[k] /= lu;
  v[0] = nrm[1] * u[2] - nrm[2] * u[1];
  v[1] = nrm[2] * u[0] - nrm[0] * u[2];
  v[2] = nrm[0] * u[1] - nrm[1] * u[0];
  for (int i = 0; i < n; i++) {
    const double* p = vert + 3 * ids[i];
    double r[3] = {p[0] - c[0], p[1] - c[1], p[2] - c[2]};
    tmp[i].angle = atan2(r[0] * v[0] + r[1] * v[1] + r[2] * v[2], r[0] * u[0] + r[1] * u[1] + r[2] * u[2]);
    tmp[i].id = ids[i];
  }
  qsort(tmp, (size_t)n, sizeof(angleId), angle_cmp);
  for (int i = 0; i < n; i++) ids[i] = tmp[i].id;
}

//---------------------------------------------------------------------------------------------------------
// Qhull

// copy Qhull's facets and vertices into h (ids = point ids = vertex indices within the mesh);
// returns 0 on allocation failure
static int hull_extract(hullTmp* h, qhT* qh, const double* vert) {
  facetT* facet;
  vertexT *vertex, **vertexp;
  h->nvert = qh->num_vertices;
  h->nface = 0;
  h->nfacevert = 0;
  int maxfv = 0;
  FORALLfacets {
    int n = qh_setsize(qh, facet->vertices);
    h->nface++;
    h->nfacevert += n;
    if (n > maxfv) maxfv = n;
  }
  h->vert = malloc(sizeof(int) * (size_t)(h->nvert ? h->nvert : 1));
  h->normal = malloc(sizeof(double) * 4 * (size_t)(h->nface ? h->nface : 1));
  h->faceadr = malloc(sizeof(int) * (size_t)(h->nface ? h->nface : 1));
  h->facenum = malloc(sizeof(int) * (size_t)(h->nface ? h->nface : 1));
  h->facevert = malloc(sizeof(int) * (size_t)(h->nfacevert ? h->nfacevert : 1));
  angleId* tmp = malloc(sizeof(angleId) * (size_t)(maxfv ? maxfv : 1));
  if (!h->vert || !h->normal || !h->faceadr || !h->facenum || !h->facevert || !tmp) {
    free(tmp);
    return 0;
  }
  int nv = 0;
  FORALLvertices h->vert[nv++] = qh_pointid(qh, vertex->point);
  h->nvert = nv;
  int f = 0, adr = 0;
  FORALLfacets {
    h->faceadr[f] = adr;
    int n = 0;
    FOREACHvertex_(facet->vertices) h->facevert[adr + n++] = qh_pointid(qh, vertex->point);
    h->facenum[f] = n;
    order_ccw(h->facevert + adr, n, vert, facet->normal, tmp);
    // Newell's plane of the ordered polygon; Qhull's hyperplane (n.x + offset = 0) if it has no area
    double* pl = h->normal + 4 * f;
    if (!polygon_plane(pl, vert, h->facevert + adr, n)) {
      for (int k = 0; k < 3; k++) pl[k] = facet->normal[k];
      pl[3] = -facet->offset;
    }
    adr += n;
    f++;
  }
  free(tmp);
  return 1;
}

int phys_qhull_run(const double* p, int n, const char* cmd, int (*visit)(struct qhT* qh, void* ctx), void* ctx,
                   int* visited, char* msg, size_t cap) {
  msg[0] = 0;
  coordT* pts = malloc(sizeof(coordT) * 3 * (size_t)n);
  qhT* qh = malloc(sizeof(qhT));
  char* command = strdup(cmd);   // qh_new_qhull takes a writable string
  if (!pts || !qh || !command) {
    free(pts);
    free(qh);
    free(command);
    return -1;
  }
  memcpy(pts, p, sizeof(coordT) * 3 * (size_t)n);
  FILE* err = fmemopen(msg, cap - 1, "w");   // Qhull's messages: the first line is quoted in our errors
  QHULL_LIB_CHECK
  qh_zero(qh, err ? err : stderr);
  int code = qh_new_qhull(qh, 3, n, pts, False, command, NULL, err ? err : stderr);
  if (code == 0) *visited = visit(qh, ctx);
  int curlong, totlong;
  qh_freeqhull(qh, !qh_ALL);
  qh_memfreeshort(qh, &curlong, &totlong);
  if (err) fclose(err);
  free(command);
  free(qh);
  free(pts);
  char* nl = strchr(msg, '\n');
  if (nl) *nl = 0;
  return code;
}

typedef struct {
  hullTmp* h;
  const double* vert;
} hullVisit;

// phys_qhull_run's visitor: the hull's faces into h (hull_extract: 1, or 0 out of memory)
static int hull_visit(qhT* qh, void* ctx) {
  hullVisit* v = ctx;
  return hull_extract(v->h, qh, v->vert);
}

// the hull of the nvert points vert (3 each) into h: 0, 1 when Qhull fails (its first message line in msg), -1
// out of memory
static int hull_run(hullTmp* h, const double* vert, int nvert, char* msg, size_t cap) {
  memset(h, 0, sizeof(*h));
  hullVisit v = {h, vert};
  int ok = 0;
  // default options: coplanar facets merged (C-0), no output
  int code = phys_qhull_run(vert, nvert, "qhull", hull_visit, &v, &ok, msg, cap);
  if (code != 0 || !ok) hull_tmp_free(h);
  return code < 0 ? -1 : code != 0 ? 1 : (ok ? 0 : -1);
}

// the hull of mesh i of s into h; an error names the mesh when it spans no volume
static physStatus hull_build(hullTmp* h, const physSpec* s, int i, physLog* log) {
  const physSpecMesh* sm = s->mesh + i;
  char at[700];
  memset(h, 0, sizeof(*h));
  mesh_where(s, sm, at, sizeof(at));
  if (sm->nvert < 4)
    return phys_error(log, PHYS_ERR_MODEL, "%smesh '%s' (%s): %d vertices cannot span a convex hull (need 4 not "
                      "coplanar)", at, sm->name, sm->file, sm->nvert);
  char msg[2048];
  int rc = hull_run(h, sm->vert, sm->nvert, msg, sizeof(msg));
  if (rc > 0)
    return phys_error(log, PHYS_ERR_MODEL,
                      "%smesh '%s' (%s): its vertices span no volume (all coplanar or collinear): no convex hull "
                      "(Qhull: %s)", at, sm->name, sm->file, msg[0] ? msg : "error");
  if (rc < 0)
    return phys_error(log, PHYS_ERR_NOMEM, "%smesh '%s': out of memory computing its convex hull", at, sm->name);
  return PHYS_OK;
}

// the hull regions' sizes of a mesh of nvert vertices whose hull is h: h's own, or for a learned mesh the largest
// hull of nvert points (every point a vertex: 2 nvert - 4 triangles, 3 vertices each)
static void hull_region(const hullTmp* h, int learn, int nvert, int* nv, int* nf, int* nfv) {
  *nv = learn ? nvert : h->nvert;
  *nf = learn ? 2 * nvert - 4 : h->nface;
  *nfv = learn ? 6 * nvert - 12 : h->nfacevert;
}

//---------------------------------------------------------------------------------------------------------
// API

physStatus phys_hull_sizes(const physSpec* s, physModel* sz, physLog* log) {
  sz->nhullvert = sz->nhullface = sz->nhullfacevert = 0;
  for (int i = 0; i < s->nmesh; i++) {
    if (!mesh_needs_hull(s, i)) continue;
    hullTmp h;
    physStatus st = hull_build(&h, s, i, log);
    if (st != PHYS_OK) return st;
    int rv, rf, rfv;
    hull_region(&h, s->mesh[i].learn, s->mesh[i].nvert, &rv, &rf, &rfv);
    sz->nhullvert += rv;
    sz->nhullface += rf;
    sz->nhullfacevert += rfv;
    hull_tmp_free(&h);
  }
  return PHYS_OK;
}

// a counted warning when mesh i is not convex: some vertex lies inside its hull, farther than 1e-6 of the
// hull's size from every face plane (n.x - b < -tol for all faces); such a mesh collides as its hull
static void warn_nonconvex(const physSpec* s, int i, const double* plane, int nface, physLog* log) {
  const physSpecMesh* sm = s->mesh + i;
  double size = 0;
  for (int v = 0; v < sm->nvert; v++)
    for (int k = 0; k < 3; k++) size = fmax(size, fabs(sm->vert[3 * v + k]));
  double tol = 1e-6 * size;
  int inside = 0;
  for (int v = 0; v < sm->nvert; v++) {
    const double* x = sm->vert + 3 * v;
    double dmax = -INFINITY;
    for (int f = 0; f < nface; f++) {
      const double* p = plane + 4 * f;
      dmax = fmax(dmax, p[0] * x[0] + p[1] * x[1] + p[2] * x[2] - p[3]);
    }
    inside += dmax < -tol;
  }
  if (inside) {
    char at[700];
    phys_warning(log, "%smesh '%s' is not convex (%d of %d vertices inside its convex hull): it collides as its hull",
                 mesh_where(s, sm, at, sizeof(at)), sm->name, inside, sm->nvert);
  }
}

// h as mesh i's hull in m's arrays at vertex entry va, face fa and face-vertex entry fva
static void hull_store(physModel* m, int i, const hullTmp* h, int va, int fa, int fva) {
  m->mesh_hullnum[i] = h->nvert;
  m->mesh_hullfacenum[i] = h->nface;
  memcpy(m->hull_vert + va, h->vert, sizeof(int) * (size_t)h->nvert);
  memcpy(m->hull_facenormal + 4 * fa, h->normal, sizeof(double) * 4 * (size_t)h->nface);
  memcpy(m->hull_facevert + fva, h->facevert, sizeof(int) * (size_t)h->nfacevert);
  for (int f = 0; f < h->nface; f++) {
    m->hull_faceadr[fa + f] = fva + h->faceadr[f];
    m->hull_facenum[fa + f] = h->facenum[f];
  }
}

physStatus phys_hull_compile(const physSpec* s, physModel* m, physLog* log) {
  int va = 0, fa = 0, fva = 0;
  for (int i = 0; i < s->nmesh; i++) {
    m->mesh_hulladr[i] = va;
    m->mesh_hullfaceadr[i] = fa;
    m->mesh_hullnum[i] = m->mesh_hullfacenum[i] = m->mesh_hullcap[i] = 0;
    if (!mesh_needs_hull(s, i)) continue;
    hullTmp h;
    physStatus st = hull_build(&h, s, i, log);
    if (st != PHYS_OK) return st;
    int rv, rf, rfv;
    hull_region(&h, s->mesh[i].learn, s->mesh[i].nvert, &rv, &rf, &rfv);
    if (s->mesh[i].learn) m->mesh_hullcap[i] = s->mesh[i].nvert;
    if (va + rv > m->nhullvert || fa + rf > m->nhullface || fva + rfv > m->nhullfacevert) {
      hull_tmp_free(&h);
      return phys_error(log, PHYS_ERR_MODEL, "%s: mesh '%s': hull sizes differ from phys_hull_sizes (a bug)",
                        s->filename, s->mesh[i].name);
    }
    hull_store(m, i, &h, va, fa, fva);
    warn_nonconvex(s, i, h.normal, h.nface, log);
    va += rv;
    fa += rf;
    fva += rfv;
    hull_tmp_free(&h);
  }
  return PHYS_OK;
}

void phys_hull_normals(physModel* m, int mesh) {
  const double* vert = m->mesh_vert + 3 * m->mesh_vertadr[mesh];
  for (int f = m->mesh_hullfaceadr[mesh]; f < m->mesh_hullfaceadr[mesh] + m->mesh_hullfacenum[mesh]; f++)
    polygon_plane(m->hull_facenormal + 4 * f, vert, m->hull_facevert + m->hull_faceadr[f], m->hull_facenum[f]);
}

// the facevert region of mesh i starts at its first face's entry (a hull has at least 4 faces)
physStatus phys_hull_rebuild(physModel* m, int mesh, physLog* log) {
  int cap = mesh >= 0 && mesh < m->nmesh ? m->mesh_hullcap[mesh] : 0;
  if (cap < 4)
    return phys_error(log, PHYS_ERR_ARG, "phys_hull_rebuild: mesh %d has no reserved hull (not loaded as learned)",
                      mesh);
  const double* vert = m->mesh_vert + 3 * (size_t)m->mesh_vertadr[mesh];
  hullTmp h;
  char msg[2048];
  int rc = hull_run(&h, vert, m->mesh_vertnum[mesh], msg, sizeof(msg));
  if (rc)
    return phys_error(log, rc > 0 ? PHYS_ERR_VALUE : PHYS_ERR_NOMEM, "mesh '%s': %s", phys_id2name(m, "mesh", mesh),
                      rc > 0 ? "its vertices span no volume (all coplanar or collinear): no convex hull"
                             : "out of memory computing its convex hull");
  int rv, rf, rfv;
  hull_region(&h, 1, cap, &rv, &rf, &rfv);
  if (h.nvert > rv || h.nface > rf || h.nfacevert > rfv) {   // (cannot happen: the largest hull of cap points)
    hull_tmp_free(&h);
    return phys_error(log, PHYS_ERR_MODEL, "mesh '%s': its hull exceeds the reserved regions (a bug)",
                      phys_id2name(m, "mesh", mesh));
  }
  int fa = m->mesh_hullfaceadr[mesh];
  hull_store(m, mesh, &h, m->mesh_hulladr[mesh], fa, m->hull_faceadr[fa]);
  hull_tmp_free(&h);
  return PHYS_OK;
}
