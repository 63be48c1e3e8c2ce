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
// record (physContact.feature, witness, clip and featangle: the hull vertex; the reference face, incident feature
// and clipped point's number, with a cylinder its rim polygon's angle; the simplex's support vertices or
// the smooth patch); the distance is never run again and a contact without a record is refused.
// Cylinders: an incident cap (the PHYS_CYL_NRIM-gon whose first vertex is the rim point extreme along the
// normal) or side segment turns with the reference face's normal (which the contact normal is, up to EPA's
// tolerance: convex.c's points carry that ~1e-11 m noise); a cap as the reference face is held at its
// current angle (its vertices only bound the clipping).
// A single witness point on a smooth patch (a cylinder's rim, side or cap, an ellipsoid) is differentiated through
// its equations at the recorded patches (witness.h: the implicit function theorem).
// Not differentiated (-1): the points of parallel cylinder or capsule sides (no record), the EPA fallback of flat
// differences, contacts whose record does not reproduce them.
#ifndef PHYS_CONVEX_DERIV_H
#define PHYS_CONVEX_DERIV_H

#include "dual.h"

// plane (geom 0) - mesh (geom 1): the hull vertex the target contact records (its feature), -1 without one
int phys_dconvex_plane(vd_t* pos, vd_t* n, sd_t* dist, const dualCtx* x, int con);

// the GJK/EPA pairs above (geom 0's type <= geom 1's): a clipped point of a manifold read from the target's record
// (its reference face, incident feature, number among the clipped points and a cylinder's featangle: convex.h),
// or its single witness point (support vertices or smooth patches), without running the distance again; -1 when
// the target records neither
int phys_dconvex_pair(vd_t* pos, vd_t* n, sd_t* dist, const dualCtx* x, int con);

// phys_dconvex_pair for every contact of the pair function's output out (nout): contact k's values and
// Jacobians in pos[k], n[k], dist[k], rc[k] = what phys_dconvex_pair returns for target out[k] (0 or -1),
// the same numbers bit for bit; the recorded features and their clipping are evaluated once for the targets
// naming the same ones (x's target is not used). Returns 0
int phys_dconvex_pair_all(vd_t* pos, vd_t* n, sd_t* dist, int* rc, const dualCtx* x, const physContact* out,
                          int nout);

#endif  // PHYS_CONVEX_DERIV_H
