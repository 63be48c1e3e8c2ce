// primitive_deriv.h - derivatives of the contact geometry of closed-form primitive pairs (paper 001,
// appendix C): for one contact written by a pair function of primitive.h, the Jacobian of
// (pos (3), normal (3), dist (1)) with respect to both geoms' world poses and their sizes.
//
// Columns (ncol = 12 + nsize(type1) + nsize(type2)): [dt1 (3), dw1 (3), dt2 (3), dw2 (3), size1, size2],
// where geom g moves by the twist (dt, dw): geom_xpos += dt, geom_xmat = exp([dw]x) geom_xmat (world
// rotation vector applied to the geom frame). nsize: plane 0, sphere 1, capsule 2, cylinder 2, ellipsoid 3,
// box 3, mesh 0 (its vertices are not parameters here).
// Rows: pos x, y, z, normal x, y, z (frame row 0), dist; the matrix is row-major 7 x ncol.
//
// Assumption: the contact keeps its classification under small perturbations (which end of a capsule,
// which box corner, which clamped / interior closest-point case, which vertex-face or edge-edge pair of a
// box-box contact); at a feature switch the pair function is only directionally differentiable and these
// are the derivatives of the current feature. Degenerate configurations (concentric spheres, parallel
// capsule axes) are not differentiated.
// The feature is the one the contact records (physContact.feature, physid.h), read, not decided again: plane-box's
// corner, plane-capsule's and sphere-capsule's end or side, plane-cylinder's rim point, sphere-box's and
// sphere-cylinder's corner / edge / rim / face / side and whether the centre is inside, capsule-capsule's clamped
// ends (and the second contact's end facing the other capsule's), capsule-box's face / edge / corner with the
// segment's end, prism exit or inside flag, box-box's edge pair (edge axis) or reference and incident features
// (face manifold: which clipped point), plane-mesh's hull vertex, the GJK/EPA pairs' manifold points, witness
// support vertices and smooth patches (convex_deriv.h). Still decided on the values: where a segment's
// closest point to a box edge is clamped (box-box and capsule-box edge axes, capsule-box segment-edge), which side
// plane clips capsule-box's segment and the clipping's arithmetic path of a box-box point (the same point, selected
// by its features). A wrong or missing feature gives -1.
// The contact is the one the pair function writes as number `con` at the given margin (the margin decides
// which points of a manifold survive the reduction to 4: box-box, meshes); the derivative's own value must
// reproduce that contact (pos, normal, dist to 1e-9 of the geoms' size), else -1.
#ifndef PHYS_PRIMITIVE_DERIV_H
#define PHYS_PRIMITIVE_DERIV_H

#include "physid.h"

// number of size parameters of a geom type that enter its collision geometry (0 for unsupported types)
int phys_geom_nsize(int type);

// most columns of any pair (two boxes or ellipsoids): 12 + 3 + 3
#define PHYS_PRIMITIVE_DERIV_MAXCOL 18

// columns of the Jacobian for the pair (g1, g2): 12 + nsize(type1) + nsize(type2)
int phys_primitive_deriv_ncol(const physModel* m, int g1, int g2);

// Jacobian (7 x ncol, row-major) of contact number `con` written by the pair function for (g1, g2) with
// detection margin `margin`, called in the pair function's order (type1 <= type2). Supported:
//  closed forms (primitive.c): plane-sphere, plane-capsule, plane-box, plane-cylinder, plane-ellipsoid,
//    sphere-sphere, sphere-capsule, sphere-cylinder, sphere-box, capsule-capsule (both contacts of nearly
//    parallel capsules), capsule-box, box-box (face: vertex-face, edge-edge and face-corner points of the
//    clipped polygon; edge: edge-edge);
//  convex routines (convex.c, see convex_deriv.h): plane-mesh; mesh against sphere, capsule, box, mesh;
//    face manifolds of cylinders against capsules, cylinders, boxes, meshes; single witness points on smooth
//    patches (cylinder rims, sides, caps; ellipsoids against spheres, capsules, ellipsoids, cylinders, boxes,
//    meshes).
// Not supported (-1): the two points of parallel cylinder or capsule sides of the GJK/EPA pairs. Returns 0, or
// -1 (unsupported pair, contact index out of range, degenerate geometry, feature not reproduced) leaving jac
// untouched.
int phys_primitive_deriv_margin(double* jac, const physModel* m, const physData* d, int g1, int g2, int con,
                                double margin);
// the same from the pair function's output out (nout contacts) at that margin, already computed: for the
// several contacts of one pair, the pair function runs once
int phys_primitive_deriv_out(double* jac, const physModel* m, const physData* d, int g1, int g2, int con,
                             const physContact* out, int nout);

// phys_primitive_deriv_out for every contact of out at once: contact k's Jacobian at jac + 7 ncol k (nout x 7 x
// ncol), rc[k] = phys_primitive_deriv_out's return for k (the same numbers bit for bit; a refused contact's
// block untouched). The pairs of the convex routines' GJK/EPA (meshes, cylinder manifolds) evaluate the
// recorded features and their clipping once for the pair; the others run contact by contact. Returns 0
// if every contact has its Jacobian, else -1
int phys_primitive_deriv_all(double* jac, int* rc, const physModel* m, const physData* d, int g1, int g2,
                             const physContact* out, int nout);

// the same with an unbounded margin (every candidate within reach); for pairs whose manifold is reduced to 4
// points (box-box, meshes) `con` then indexes a different list than at the pair's own margin
int phys_primitive_deriv(double* jac, const physModel* m, const physData* d, int g1, int g2, int con);

#endif  // PHYS_PRIMITIVE_DERIV_H
