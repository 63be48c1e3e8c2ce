// convex_deriv.h - derivatives of the contact geometry of the convex routines (convex.c) for polytopes:
// plane-mesh and the GJK/EPA pairs of meshes with spheres, capsules, boxes and meshes. Used by
// primitive_deriv.c's dispatch (phys_primitive_deriv is the public entry point); same columns and rows.
//
// Contacts (convex.h): a plane-mesh contact is a hull vertex; a GJK/EPA contact is either a point of a face
// manifold (the incident feature clipped against the reference face's side planes: an incident vertex, an
// incident edge crossing a side plane, or a reference vertex's edge line crossing the incident face) with
// the reference face's normal, or the single point of the distance result, whose closest features are
// read off the final GJK simplex or EPA face: its support points are vertices of the shapes (box corners,
// mesh hull vertices, a sphere's centre, a capsule's segment ends) that move with their geoms, and the
// witness points are the affine projection of the origin onto those vertices' Minkowski differences
// (vertex-face, edge-edge, vertex-edge, vertex-vertex). The features are held fixed.
// Not differentiated (-1): cylinders and ellipsoids (their support points slide on a curved surface or a
// rim discretized along the normal), meshes without hull faces in a manifold, the EPA fallback of flat
// differences.
#ifndef PHYS_CONVEX_DERIV_H
#define PHYS_CONVEX_DERIV_H

#include "dual.h"

// plane (geom 0) - mesh (geom 1): the hull vertex matching the target contact
int phys_dconvex_plane(vd_t* pos, vd_t* n, sd_t* dist, const dualCtx* x, int con);

// sphere, capsule, box or mesh (geom 0) - mesh (geom 1): the contact of phys_collide_convex_convex
// matching the target
int phys_dconvex_pair(vd_t* pos, vd_t* n, sd_t* dist, const dualCtx* x, int con);

#endif  // PHYS_CONVEX_DERIV_H
