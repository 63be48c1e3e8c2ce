// wrap_deriv.c - derivatives of phys_wrap's tangent points (wrap.h) by forward mode on complex numbers: the
// geometry of wrap_core.h runs on double complex once per input direction e_j, with p + i h e_j in, and
// d loc / d p_j = Im(loc) / h, exact to rounding (no difference is taken; h only has to keep h^2 below
// rounding). The branches (which way round, straight or wrapped) follow the real parts: the derivative of the
// path the primal takes.
#include "wrap.h"

#include <complex.h>

#define WREAL double complex
#define W_SQRT csqrt
#define W_ACOS cacos
#define W_HYPOT(a, b) csqrt((a) * (a) + (b) * (b))
#define W_RE(x) creal(x)
#include "wrap_core.h"

#define WRAP_STEP 1e-20   // the complex step (relative to lengths of order 1e-3 .. 1e3 m: h^2 is far below rounding)

int phys_wrap_deriv(double D[36], const double p0[3], const double p1[3], const double* side, double r,
                    int cylinder) {
  double complex s[3], loc[6];
  for (int i = 0; i < 3 && side; i++) s[i] = side[i];
  for (int j = 0; j < 6; j++) {
    double complex p[2][3];
    for (int i = 0; i < 3; i++) p[0][i] = p0[i], p[1][i] = p1[i];
    p[j / 3][j % 3] += WRAP_STEP * _Complex_I;
    if (creal(wrap_local(loc, p, side ? s : NULL, r, cylinder)) < 0) return 0;
    for (int k = 0; k < 6; k++) D[6 * k + j] = cimag(loc[k]) / WRAP_STEP;
  }
  return 1;
}
