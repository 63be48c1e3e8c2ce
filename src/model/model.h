// model.h - internal model helpers shared by the compiler and the loaders.
#ifndef PHYS_MODEL_H
#define PHYS_MODEL_H

#include "physid.h"

// allocate a model with the sizes (and options) of `sizes`; arrays zeroed
physModel* phys_model_alloc(const physModel* sizes);

// radius of geom g's bounding sphere about its frame at m's sizes (0: infinite, a plane): compile.c's, also
// after a parameter changes a size (src/grad/params.c)
double phys_geom_rbound(const physModel* m, int g);

// issue 15 item 3 (tendons): the point path of a spatial tendon. Points are its sites and, where it wraps a
// sphere or cylinder geom, the two tangent points (on the geom's body); the gap from point k to k+1 is a straight
// segment weighted w[k] (1 / divisor of its pulley branch) or, w[k] = 0, an arc or a pulley's branch point.
// L = sum_k w[k] |x[k+1] - x[k]| + arcs. At most two points per path entry.
#define PHYS_TENDON_MAXPOINT 128
typedef struct physTendonPath_ {
  int npoint;
  double x[PHYS_TENDON_MAXPOINT][3];   // world positions
  int body[PHYS_TENDON_MAXPOINT];      // the body each point moves with
  double w[PHYS_TENDON_MAXPOINT];      // weight of the gap to the next point (0: none)
  int wrap[PHYS_TENDON_MAXPOINT];      // a tangent point: 2 * (its geom's path entry) + (0: the first, 1: the
                                       // second); a site: -1 (the derivatives' sliding tangent points)
  double arcs;                         // the wrapped arcs' lengths, each divided by its branch's divisor
} physTendonPath;

// the path of spatial tendon s from world site and geom poses (a physData's, or the compiler's at qpos_spring)
void phys_tendon_path(const physModel* m, int s, const double* site_xpos, const double* geom_xpos,
                      const double* geom_xmat, physTendonPath* p);
// 1 if spring s is a path through sites only (no geom, no pulley)
int phys_tendon_plain(const physModel* m, int s);
// 1 if spring s wraps a sphere or cylinder geom (its step derivatives are not built)
int phys_tendon_wraps(const physModel* m, int s);

#endif  // PHYS_MODEL_H
