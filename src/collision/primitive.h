// primitive.h - narrow phase between primitive shapes, each pair in closed form (no iterative solver).
//
// Every function has the physCollideFn signature (collision.h): called with geom types t1 <= t2 in the
// order of its name, it writes at most PHYS_MAXPAIRCON contacts with dist <= margin into out (pos,
// frame, dist and the features that produced each point, physid.h) and returns their count. The normal (frame row 0) points from g1 to g2.
// Shapes (geom_size, MJCF): sphere r; capsule r, half-length h along local z; ellipsoid radii a, b, c;
// cylinder r, half-height h along local z; box half-sizes; plane: the local z = 0 plane (infinite),
// normal = local z. The formulas are written out above each function so the gradient layer can
// differentiate point, normal and depth with respect to poses and sizes.
#ifndef PHYS_PRIMITIVE_H
#define PHYS_PRIMITIVE_H

#include "collision.h"

int phys_collide_plane_sphere(const physModel* m, const physData* d, int g1, int g2, double margin, physContact* out);
int phys_collide_plane_capsule(const physModel* m, const physData* d, int g1, int g2, double margin, physContact* out);
int phys_collide_plane_ellipsoid(const physModel* m, const physData* d, int g1, int g2, double margin, physContact* out);
int phys_collide_plane_cylinder(const physModel* m, const physData* d, int g1, int g2, double margin, physContact* out);
int phys_collide_plane_box(const physModel* m, const physData* d, int g1, int g2, double margin, physContact* out);
int phys_collide_sphere_sphere(const physModel* m, const physData* d, int g1, int g2, double margin, physContact* out);
int phys_collide_sphere_capsule(const physModel* m, const physData* d, int g1, int g2, double margin, physContact* out);
int phys_collide_sphere_cylinder(const physModel* m, const physData* d, int g1, int g2, double margin, physContact* out);
int phys_collide_sphere_box(const physModel* m, const physData* d, int g1, int g2, double margin, physContact* out);
int phys_collide_capsule_capsule(const physModel* m, const physData* d, int g1, int g2, double margin, physContact* out);
int phys_collide_capsule_box(const physModel* m, const physData* d, int g1, int g2, double margin, physContact* out);
int phys_collide_box_box(const physModel* m, const physData* d, int g1, int g2, double margin, physContact* out);

// box-box (phys_collide_box_box and its derivative): 1 if the edge axis of separation sedge replaces the face
// axis of separation sface, i.e. overlaps less by more than 5% of the face's overlap plus 1e-9 scale (scale:
// the sum of the two boxes' largest half-sizes). For boxes resting face to face the edge axes A_i x B_j,
// i != j, are the face normal up to rounding: without the absolute term a face contact at depth ~0 (resting,
// or lifted by 1e-17 m) flips to a one-point edge contact whenever rounding favours an edge axis, and a box
// stacked on another tips over its single corner.
static inline int phys_box_edge_wins(double sface, double sedge, double scale) {
  return sedge > sface + 0.05 * (sface < 0 ? -sface : sface) + 1e-9 * scale;
}

// box-box face manifolds (phys_collide_box_box and its derivative): the features (physid.h, flagged) of a point
// of the incident face (axis mi, outward side tau) clipped to reference face k (outward side sigma), defined by
// the lines l (0..3: the incident face's edge from its corner v to v + 1, corners (S1[v], S2[v]) = (+-, +-) on
// axes (mi+1, mi+2)%3 in the order (+,+), (-,+), (-,-), (+,-); 4 + 2 dim + (side > 0): the reference face's side
// x[(k + 1 + dim) % 3] = side s); UNKNOWN (flags kept) when a line is -1. fref, finc: of the reference, incident box
void phys_box_clip_features(int* fref, int* finc, const int l[2], int k, double sigma, int mi, double tau);

// closest points of segments p0 + s*u (s in [0,1]) and q0 + t*w (t in [0,1]); minimizes
// |p0 + s u - q0 - t w|^2; parallel segments take the smallest feasible s (deterministic)
void phys_segment_closest(double* s, double* t, const double p0[3], const double u[3], const double q0[3],
                          const double w[3]);

#endif  // PHYS_PRIMITIVE_H
