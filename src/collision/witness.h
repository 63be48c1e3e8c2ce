// witness.h - the single witness point of the GJK/EPA pairs (convex.c) when a side of it is a smooth patch: a
// cylinder's rim circle, its curved side or its cap, an ellipsoid's surface (the other side a vertex, an edge or a
// face of a polytope or of a sphere's / capsule's core, or another smooth patch).
//
// GJK/EPA stop on their tolerances, which on a curved support leave the witness point ~1e-6 of the shape's size
// off (the distance converges quadratically, the point only linearly); the point is solved exactly here, and
// differentiated, from the equations of the recorded patches. Unknowns z = (n (3), dist, lam_0 (k_0), lam_1 (k_1)):
//   x_0(n, lam_0) - x_1(n, lam_1) + dist n = 0,   (n.n - 1)/2 = 0,   n . e = 0 for every flat direction e of a side,
// n the normal from geom 0 to geom 1 (the pair function's order), dist the distance of the cores, x_g the (core)
// point of side g: its support point along sigma_g n (sigma_0 = +1, sigma_1 = -1) on the smooth part plus lam_g
// along its flat directions:
//  - POINTS (polytope vertices P_0..P_{np-1}, the distinct support vertices of the simplex): x = P_0 + sum_k
//    lam_k (P_k - P_0), flat directions P_k - P_0;
//  - RIM of cap c (c = +-1): x = centre + R (r u, c h), u = (m_x, m_y)/|(m_x, m_y)|, m = R' sigma n;
//  - SIDE: x = centre + R (r u, lam), flat direction the axis;  CAP c: x = centre + R (lam_0, lam_1, c h), flat
//    directions the local x and y axes;
//  - ELLIPSOID (half axes s): x = centre + R S^2 m / |S m|, m = R' sigma n.
// Both for points (x on the surface of each side) and penetrations (EPA: the same equations with dist < 0). The
// contact: p_0 = x_0 + r_0 n, p_1 = x_1 - r_1 n (r_g the radius of a core), pos = (p_0 + p_1)/2, dist - r_0 - r_1.
// Its Jacobian in the inputs of dual.h by the implicit function theorem: dz = -F_z^-1 F_theta.
#ifndef PHYS_WITNESS_H
#define PHYS_WITNESS_H

#include "convex.h"
#include "dual.h"

enum { PHYS_WS_POINTS = 0, PHYS_WS_RIM, PHYS_WS_SIDE, PHYS_WS_CAP, PHYS_WS_ELLIPSOID };

#define PHYS_WITNESS_MAXZ 8   // 4 + at most 2 flat directions per side

// one side of the witness point, its geometry as duals (constants when only values are needed)
typedef struct {
  int kind;       // PHYS_WS_*
  int np;         // POINTS: distinct vertices (1..3)
  double cap;     // RIM, CAP: +1 the +h cap, -1 the -h cap
  double sigma;   // +1 geom 0 (its support along n), -1 geom 1 (along -n)
  vd_t P[3];      // POINTS: the vertices (world)
  vd_t c, ax[3];  // centre and world axes (RIM, SIDE, CAP, ELLIPSOID)
  sd_t s[3];      // sizes (cylinder r, h; ellipsoid half axes)
  sd_t radius;    // the radius of a core (a sphere's centre, a capsule's segment), else 0
} physWitnessSide;

// the number of unknowns of the two sides (4 + their flat directions)
int phys_witness_nz(const physWitnessSide w[2]);

// the start of the solve from a contact (pos, normal n from geom 0 to geom 1, dist, as convex.c writes it): n,
// the core distance, the flat parameters of each side's point x_g = pos -+ (dist/2 + r_g) n by least squares
void phys_witness_start(double* z, const physWitnessSide w[2], const double pos[3], const double n[3], double dist);

// Newton's method on the equations from z (values; w's Jacobians are not read): 0 when converged (max |F| <=
// 1e-12 (1 + scale)), -1 when it did not, a patch degenerated (a rim point on the axis) or the solution left a
// side's patch (a parameter outside its vertices, segment or cap)
int phys_witness_solve(double* z, const physWitnessSide w[2], double scale);

// the contact's values at z (pos, the unit normal n, dist), without Jacobians
void phys_witness_values(double pos[3], double n[3], double* dist, const physWitnessSide w[2], const double* z);

// the contact (pos, n, dist) at the solution z, with its Jacobian in the inputs w's duals carry (dual.h): -1
// when z is no solution (max |F| > tol: the patches do not produce that contact) or F_z is singular
int phys_witness_contact(vd_t* pos, vd_t* n, sd_t* dist, const physWitnessSide w[2], const double* z, double tol);

#endif  // PHYS_WITNESS_H
