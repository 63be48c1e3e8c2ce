// wrap.h - the path of a tendon around a sphere or a cylinder (issue 15 item 3), as MuJoCo 2.2.2 defines its
// spatial tendons' geom wrapping: pure geometry on world points and a geom frame.
#ifndef PHYS_WRAP_H
#define PHYS_WRAP_H

// The shortest path from world point x0 to x1 around a sphere (cylinder = 0) or an infinite cylinder along the
// geom's z axis (cylinder = 1) of radius r, centre pos, orientation mat (row-major, columns the geom's axes in
// the world). In the plane through the sphere's centre and both points (a cylinder: the projection on its xy
// plane) the path goes straight when it misses the circle or a point lies inside it; else it runs along the
// two tangents from the points and the arc between their tangent points. Of the two ways round, a side point
// (side: world point, or NULL) picks the one whose tangent points' mean direction is nearest its direction and
// forces the wrap when the straight path passes on the other side of the centre; without it the one whose
// tangent points are closer; a way whose tangents cross each other loses. A cylinder's path rises linearly along
// the unrolled plane path (a helix on the surface). Returns the length of the curved part and the tangent points
// (world) in t[0..2] (x0's) and t[3..5] (x1's), or -1 (t untouched) when the path is straight.
double phys_wrap(double t[6], const double x0[3], const double x1[3], const double pos[3], const double mat[9],
                 double r, int cylinder, const double* side);

// The tangent points' derivatives in the geom's frame (wrap_deriv.c): p0, p1 (and side, or NULL) the two points
// (and the side point) relative to the geom's centre along its axes, as phys_wrap takes them; D (6 x 6,
// row-major) = d loc / d (p0, p1), loc the tangent points in that frame (loc = mat' (t - pos)). The side point
// only picks the way round (its derivative is 0, except where the points are in line with a sphere's centre,
// the plane's degenerate case, whose derivative is not taken). Returns 1, or 0 (D undefined) for a straight path.
// Of the path's length only the tangent points move to first order: by their tangency the length's derivative
// holds them fixed (the envelope theorem; phys_spring_eval), so D is what second derivatives need.
int phys_wrap_deriv(double D[36], const double p0[3], const double p1[3], const double* side, double r,
                    int cylinder);

#endif
