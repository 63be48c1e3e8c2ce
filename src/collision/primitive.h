// primitive.h - narrow phase between primitive shapes, each pair in closed form (no iterative solver).
//
// Every function has the physCollideFn signature (collision.h): called with geom types t1 <= t2 in the
// order of its name, it writes at most PHYS_MAXPAIRCON contacts with dist <= margin into out (pos,
// frame, dist only) and returns their count. The normal (frame row 0) points from g1 to g2.
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

// closest points of segments p0 + s*u (s in [0,1]) and q0 + t*w (t in [0,1]); minimizes
// |p0 + s u - q0 - t w|^2; parallel segments take the smallest feasible s (deterministic)
void phys_segment_closest(double* s, double* t, const double p0[3], const double u[3], const double q0[3],
                          const double w[3]);

#endif  // PHYS_PRIMITIVE_H
