// metrics.h - paper 004's parameter metrics: geometry (volume of the symmetric difference of convex hulls, by
// Qhull), friction and inertia errors of a model against the true one. Evaluation only (allocates; not for a
// step, a VJP or a rollout).
#ifndef PHYS_SYSID_METRICS_H
#define PHYS_SYSID_METRICS_H

#include "physid.h"

// volume (m^3) of the convex hull of the n points p (3 n doubles) into *vol: 0 when they span no volume (fewer
// than 4 points, or all coplanar); PHYS_ERR_VALUE for a non-finite point, PHYS_ERR_NOMEM, PHYS_ERR_NUMERIC if
// Qhull fails otherwise
physStatus phys_hull_volume(const double* p, int n, double* vol, physLog* log);

// volume of the intersection of the convex hulls of a (na points) and b (nb points); 0 when they do not overlap
// or either spans no volume. The intersection's vertices lie on the edges of one hull inside the other: every
// edge of each hull (of its triangulated facets) is clipped to the other's halfspaces and the hull of the clipped
// segments' end points is measured.
physStatus phys_hull_intersection_volume(const double* a, int na, const double* b, int nb, double* vol,
                                         physLog* log);

// vol(A) + vol(B) - 2 vol(A n B): the volume of the symmetric difference of the convex hulls A of a and B of b
physStatus phys_hull_symdiff_volume(const double* a, int na, const double* b, int nb, double* vol, physLog* log);

// the points whose convex hull is body b's collision geometry, in the body frame: the 8 corners of every
// colliding box and the vertices of every colliding mesh (geoms with contype or conaffinity). Returns their
// number (at most max are written to p, 3 per point; call with max 0 to count), 0 if the body has no colliding
// geom, -1 if one of them is not a polytope (sphere, capsule, cylinder, ellipsoid, plane; its id in *geom).
int phys_body_hull_points(const physModel* m, int b, double* p, int max, int* geom);

// body b's inertial parameters theta = (m, c_x, c_y, c_z, I_xx, I_yy, I_zz, I_xy, I_xz, I_yz): mass, centre of
// mass in the body frame, and the inertia tensor about the centre of mass in the body frame (tensor entries)
void phys_body_inertial_params(const physModel* m, int b, double theta[10]);

// inertia error |(theta_hat - theta) / rho|_2 with rho = (m, l, l, l, m l^2 (6 times)) of the true parameters
// theta; l > 0 the characteristic length, l <= 0: the true body's sqrt(tr(I) / (3 m))
double phys_inertia_error(const double theta_hat[10], const double theta[10], double l);

// one body's errors against the truth (NAN where not defined)
typedef struct physBodyErrors_ {
  int body;                 // body id (the same in both models)
  double volume_error;      // |A xor B| / |B| (A learned, B true geometry); NAN: no polytope or no geometry
  double symdiff;           // |A xor B| (m^3)
  double true_volume;       // |B| (m^3)
  double friction_error;    // mean over the body's pairs with the world's geoms of |mu_hat - mu| / mu
  double inertia_error;     // phys_inertia_error
} physBodyErrors;

typedef struct physParamErrors_ {
  int nbody;                // bodies compared: every body but the world (body 0)
  physBodyErrors* body;     // nbody (malloc'ed; phys_param_errors_free)
  double volume_error;      // means over the bodies where each is defined (NAN: none)
  double friction_error;
  double inertia_error;
  int nvolume, nfriction;   // how many bodies entered each mean (inertia: every body with mass)
  int ninertia;
} physParamErrors;

// paper 004's parameter errors of model against truth, the same bodies and geoms (counts and names checked,
// PHYS_ERR_MODEL naming the first difference); l as in phys_inertia_error. Friction of a geom pair is the
// larger of the two geoms' sliding coefficients (physid's rule without a <pair>).
physStatus phys_param_errors(const physModel* model, const physModel* truth, double l, physParamErrors* e,
                             physLog* log);
void phys_param_errors_free(physParamErrors* e);

#endif
