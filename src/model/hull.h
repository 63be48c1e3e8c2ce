// hull.h - convex hulls of meshes at model compile time (Qhull, reentrant libqhull_r).
//
// A mesh's hull is stored in the model as vertex indices within the mesh (mesh_hulladr/mesh_hullnum,
// hull_vert) and faces: coplanar triangles merged into convex polygons (Qhull's default C-0 merging),
// each with its outward unit normal and offset (hull_facenormal: n, b with n.x <= b inside) and its
// vertices counterclockwise seen from outside (hull_faceadr/hull_facenum, hull_facevert). Only meshes
// that a collidable geom uses (contype or conaffinity nonzero, or named in a <pair>) get a hull; the
// others have mesh_hullnum = 0. Such a mesh must span a volume: fewer than 4 vertices or all vertices
// coplanar is a compile error naming the mesh. Open meshes are fine (the hull closes them).
#ifndef PHYS_HULL_H
#define PHYS_HULL_H

#include "physid.h"
#include "spec.h"

// sizes of the hulls of every mesh of s that needs one: sets sz->nhullvert, nhullface, nhullfacevert
physStatus phys_hull_sizes(const physSpec* s, physModel* sz, physLog* log);

// fill the hull arrays of m (allocated with the sizes of phys_hull_sizes; mesh_vert already filled)
physStatus phys_hull_compile(const physSpec* s, physModel* m, physLog* log);

// recompute the face normals and offsets of mesh `mesh`'s hull from the current mesh_vert (Newell's
// normal of each polygon, offset = mean of n.v over its vertices): call after changing vertices that
// keep the hull's combinatorics
void phys_hull_normals(physModel* m, int mesh);

// issue 14 item 2: remake mesh `mesh`'s hull (Qhull) from its current mesh_vert, its combinatorics included, in
// the regions the model reserved for it (mesh_hullcap > 0: a learned mesh, physSpecMesh.learn). Not for a step
// (Qhull allocates). PHYS_ERR_VALUE when the vertices span no volume, PHYS_ERR_ARG for a mesh without reserved
// regions; the hull is then unchanged
physStatus phys_hull_rebuild(physModel* m, int mesh, physLog* log);

// Qhull's lifecycle for every caller (hull.c's meshes, sysid/metrics.c's volumes): run Qhull with command cmd
// ("qhull ..." options) on the n points p (3 each); on success call visit(qh, ctx), which reads the hull while
// Qhull's state lives, and store its return in *visited (left untouched otherwise). Qhull's first message line goes
// to msg (cap bytes; "" when it printed nothing). Returns Qhull's exit code (0 success, qh_ERRsingular and
// qh_ERRprec for flat input, ...), or -1 when out of memory.
struct qhT;
int phys_qhull_run(const double* p, int n, const char* cmd, int (*visit)(struct qhT* qh, void* ctx), void* ctx,
                   int* visited, char* msg, size_t cap);

#endif  // PHYS_HULL_H
