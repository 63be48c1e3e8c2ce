// convex.h - collision of convex shapes without a closed-form pair routine (meshes, cylinders, ellipsoids):
// support functions, GJK distance, EPA penetration, and contact manifolds for flat contacts.
//
// Every shape is a "core" swept by a radius: a sphere is a point swept by r, a capsule a segment swept by
// r, every other shape its own core with radius 0. GJK and EPA run on the cores when exactly one shape
// has a radius (so sphere/capsule against a polytope stays polytopal and EPA is exact), on the full
// shapes otherwise. Caps (no malloc, fixed-size stack arrays, bounded loops):
//  - GJK: at most PHYS_GJK_MAXITER support calls; stops when |v|^2 - v.w <= 1e-11 |v|^2 (the distance is
//    then exact to ~5e-12 relative), when a lower bound v.w/|v| exceeds the cutoff, or when the origin
//    is inside (tetrahedron or |v| <= 1e-10 * scale, scale = sum of bounding radii).
//  - EPA: at most PHYS_EPA_MAXITER expansions (PHYS_EPA_MAXVERT vertices, PHYS_EPA_MAXFACE faces); stops
//    when the support gap n.w - dist <= 1e-10 * scale. Exact for polytopes whose difference converges
//    within the cap (box meshes, Atlas feet: measured 1e-16); for curved shapes (cylinder sides,
//    ellipsoids) and deep overlaps of fine meshes (two icospheres of 162/642 vertices overlapping by 0.45:
//    up to 7e-4) the depth is a lower bound accurate to the gap reached within the cap. A single witness point on
//    a smooth patch (cylinder rim, side or cap, ellipsoid) is then solved exactly (witness.h).
//  - mesh support: a linear scan of the hull vertices (Atlas parts: 12..141; 642 vertices: ~30 us a pair).
//  - manifolds: a face of one shape whose outward normal is within PHYS_FACE_COS of the contact normal is
//    the reference face; the other shape's feature facing it (a face polygon, a cylinder cap as a
//    PHYS_CYL_NRIM-gon whose first vertex is the deepest rim point, or a segment: cylinder side, capsule)
//    is clipped against the reference face's side planes (Sutherland-Hodgman, at most PHYS_CLIP_MAX
//    points), each point's distance measured along the face normal; points within margin are reduced
//    to at most 4 (the deepest, then the farthest from it, then the largest triangle, then the largest
//    added area). Parallel cylinder/capsule sides give a 2-point line contact; otherwise one point.
//  - the contact normal of a face contact is the face normal itself (d normal / d pose = rotation of the
//    face only, no dependence on the other shape: what the gradient layer expects of meshes).
#ifndef PHYS_CONVEX_H
#define PHYS_CONVEX_H

#include "collision.h"

#define PHYS_GJK_MAXITER 64          // GJK support calls
#define PHYS_EPA_MAXITER 64          // EPA expansions
#define PHYS_EPA_MAXVERT (4 + PHYS_EPA_MAXITER)        // EPA polytope vertices
#define PHYS_EPA_MAXFACE (2 * PHYS_EPA_MAXVERT)        // EPA polytope faces (Euler: F = 2V - 4)
#define PHYS_CYL_NRIM 16             // a cylinder cap in a manifold: a regular 16-gon inscribed in the rim
#define PHYS_FEATURE_MAX 32          // most vertices of a face feature (larger hull faces are subsampled)
#define PHYS_CLIP_MAX (2 * PHYS_FEATURE_MAX + 2)       // points of a clipped polygon
#define PHYS_FACE_COS (1 - 1e-6)     // a face is the reference face if its normal . contact normal >= this
// a clipped point of a manifold records (physid.h) the reference face (FACE id, flagged PHYS_FEATF_REF), the
// incident feature (flagged PHYS_FEATF_INC) and its number among the clipped points (before the reduction to 4) in
// physContact.clip; face ids beyond PHYS_FEATURE_INDEX_MAX (the 19 bits of a feature's index) record UNKNOWN
#define PHYS_FEATURE_INDEX_MAX ((1 << 19) - 1)
#define PHYS_CONVEX_CLIP_ID(f) PHYS_FEATURE_INDEX(f)     // the face / feature id

// a convex geom in world coordinates, with what its support function needs
typedef struct physConvex_ {
  int type;                 // physGeomType
  double size[3];           // geom_size
  double pos[3];            // world position
  double mat[9];            // world rotation, local -> world (row-major): x = pos + mat * x_local
  double radius;            // sphere/capsule: radius around the core; 0 otherwise
  int core;                 // 1: support() returns the core's support (radius removed)
  double scale;             // bounding radius (tolerances scale with it)
  const double* vert;       // mesh: its vertices (geom frame)
  const int* hull;          // mesh: hull vertex indices (into vert), or NULL: all nvert vertices
  int nhull;                // hull vertices (or all vertices)
  const double* facenormal; // mesh hull faces: n, offset (geom frame), or NULL: no faces
  const int* faceadr;       // first entry in facevert of each face
  const int* facenum;       // vertices of each face
  const int* facevert;      // face polygons (indices into vert), counterclockwise seen from outside
  int nface;                // hull faces
} physConvex;

// result of phys_convex_distance: signed distance, normal, witness points and the final simplex
// (GJK when separated, the EPA face when penetrating) with barycentric weights, for the gradient layer
typedef struct physGjkResult_ {
  double dist;              // signed distance between the surfaces (radii included; < 0: penetration)
  double normal[3];         // unit, from shape 1 towards shape 2
  double p1[3], p2[3];      // witness points on the surfaces of shape 1 and 2 (p2 - p1 = dist * normal)
  int nsimplex;             // vertices in the final simplex / EPA face (1..4)
  double s1[4][3], s2[4][3];// their support points on the (core) shapes 1 and 2
  double bary[4];           // barycentric weights: witness on core 1 = sum bary_i s1_i, same for 2
  int penetrating;          // 1 if EPA computed the result
  int iter;                 // GJK iterations + EPA expansions
} physGjkResult;

// the convex shape of geom g at the current geom_xpos / geom_xmat
void phys_convex_init(physConvex* c, const physModel* m, const physData* d, int g);

// world support point of c in direction dir (need not be unit): argmax_{x in c} dir.x; of the core
// when c->core; ties broken deterministically (a zero direction gives a valid point)
void phys_convex_support(double res[3], const physConvex* c, const double dir[3]);

// signed distance between two convex shapes by GJK (separated) or EPA (overlapping); returns 0 (r
// partly filled) if the shapes are farther apart than cutoff, 1 otherwise
int phys_convex_distance(physGjkResult* r, const physConvex* a, const physConvex* b, double cutoff);

// contacts (at most 4) between convex shapes a and b given their distance result r (manifold for flat
// contacts, see above); count returned, normals from a to b
int phys_convex_manifold(physContact* out, const physConvex* a, const physConvex* b, const physGjkResult* r,
                         double margin);

// physCollideFn pair functions:
// g1 a plane, g2 any convex geom: mesh (every hull vertex within margin, reduced to 4), cylinder (rim
// points of both caps, 2 for a cylinder on its side, 4 when flat), others (the support point)
int phys_collide_convex_plane(const physModel* m, const physData* d, int g1, int g2, double margin, physContact* out);
// g1, g2 any convex geoms (not planes): GJK/EPA, then the manifold
int phys_collide_convex_convex(const physModel* m, const physData* d, int g1, int g2, double margin, physContact* out);

// registration in collision.c's dispatch (used for pairs without a closed-form routine there):
// plane against any convex type -> phys_collide_convex_plane, two non-plane types ->
// phys_collide_convex_convex; NULL for plane-plane and invalid types (t1 <= t2)
#define PHYS_HAVE_CONVEX 1
physCollideFn phys_convex_collide_fn(int t1, int t2);

#endif  // PHYS_CONVEX_H
