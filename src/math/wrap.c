// wrap.c - a tendon's path around a sphere or a cylinder (wrap.h); the geometry in the geom's frame is
// wrap_core.h's, on double.
#include "wrap.h"

#include "rot.h"

#define WREAL double
#define W_SQRT sqrt
#define W_ACOS acos
#define W_HYPOT hypot
#define W_RE(x) (x)
#include "wrap_core.h"

double phys_wrap(double t[6], const double x0[3], const double x1[3], const double pos[3], const double mat[9],
                 double r, int cylinder, const double* side) {
  double p[2][3], s[3], loc[6];
  // the points (and the side point) in the geom frame: mat' (x - pos)
  for (int i = 0; i < 3; i++) {
    p[0][i] = (x0[0] - pos[0]) * mat[i] + (x0[1] - pos[1]) * mat[3 + i] + (x0[2] - pos[2]) * mat[6 + i];
    p[1][i] = (x1[0] - pos[0]) * mat[i] + (x1[1] - pos[1]) * mat[3 + i] + (x1[2] - pos[2]) * mat[6 + i];
    if (side) s[i] = (side[0] - pos[0]) * mat[i] + (side[1] - pos[1]) * mat[3 + i] + (side[2] - pos[2]) * mat[6 + i];
  }
  double len = wrap_local(loc, p, side ? s : NULL, r, cylinder);
  if (len < 0) return -1;
  for (int k = 0; k < 2; k++)
    for (int i = 0; i < 3; i++)
      t[3 * k + i] = pos[i] + mat[3 * i] * loc[3 * k] + mat[3 * i + 1] * loc[3 * k + 1] + mat[3 * i + 2] * loc[3 * k + 2];
  return len;
}
