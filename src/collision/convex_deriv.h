// convex_deriv.h - derivatives of the contact geometry of the convex routines (convex.c): plane-mesh and
// the GJK/EPA pairs of meshes with spheres, capsules, boxes and meshes, and the face manifolds of cylinders
// (against capsules, cylinders, boxes, meshes). Used by primitive_deriv.c's dispatch (phys_primitive_deriv
// is the public entry point); same columns and rows.
//
// Contacts (convex.h): a plane-mesh contact is a hull vertex; a GJK/EPA contact is either a point of a face
// manifold (the incident feature clipped against the reference face's side planes: an incident vertex, an
// incident edge crossing a side plane, or a reference vertex's edge line crossing the incident face) with
// the reference face's normal, or the single point of the distance result, whose closest features are
// the final GJK simplex or EPA face: its support points are vertices of the shapes (box corners,
// mesh hull vertices, a sphere's centre, a capsule's segment ends) that move with their geoms, and the
// witness points are the affine projection of the origin onto those vertices' Minkowski differences
// (vertex-face, edge-edge, vertex-edge, vertex-vertex). The features are held fixed: read from the contact's
// record (physContact.feature and witness: the hull vertex; the reference face, incident feature and clipped
// point's number; the simplex's support vertices), the distance run again only for a cylinder's manifold (its rim
// polygon's angle is the distance normal's) and for contacts without a record, matched then by value.
// Cylinders: an incident cap (the PHYS_CYL_NRIM-gon whose first vertex is the rim point extreme along the
// normal) or side segment turns with the reference face's normal (which the contact normal is, up to EPA's
// tolerance: convex.c's points carry that ~1e-11 m noise); a cap as the reference face is held at its
// current angle (its vertices only bound the clipping).
// Not differentiated (-1): single witness points on curved supports (cylinder rims and sides, ellipsoids:
// the support slides on the surface), ellipsoid pairs, meshes without hull faces in a manifold, the EPA
// fallback of flat differences.
#ifndef PHYS_CONVEX_DERIV_H
#define PHYS_CONVEX_DERIV_H

#include "dual.h"

// plane (geom 0) - mesh (geom 1): the hull vertex the target contact records (its feature), -1 without one
int phys_dconvex_plane(vd_t* pos, vd_t* n, sd_t* dist, const dualCtx* x, int con);

// the GJK/EPA pairs above (geom 0's type <= geom 1's): a clipped point of a manifold of boxes, meshes and capsules
// read from the target's record (its reference face, incident feature and number among the clipped points:
// convex.h), without running the distance again; any other contact of phys_collide_convex_convex (cylinder
// manifolds, single witness points) found by running the distance and matching the target's value
int phys_dconvex_pair(vd_t* pos, vd_t* n, sd_t* dist, const dualCtx* x, int con);

// phys_dconvex_pair for every contact of the pair function's output out (nout): contact k's values and
// Jacobians in pos[k], n[k], dist[k], rc[k] = what phys_dconvex_pair returns for target out[k] (0 or -1),
// the same numbers bit for bit; for the targets not recorded as clipped points the distance, the features and
// the clipping are evaluated once for all (x's target is not used). Returns -1 (their rc -1) if that distance
// fails, else 0
int phys_dconvex_pair_all(vd_t* pos, vd_t* n, sd_t* dist, int* rc, const dualCtx* x, const physContact* out,
                          int nout);

#endif  // PHYS_CONVEX_DERIV_H
