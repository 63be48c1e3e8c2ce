// grad_models.h - models, random states, tangent-space perturbations and matrix comparisons shared by the
// tests of src/grad.
//
// Finite differences are central. The two-point stencil (f(x+h) - f(x-h)) / 2h has truncation error
// h^2 |f'''| / 6 and rounding error about eps |f| / h (eps = 1.1e-16, |f| the scale of f's rounding): with
// h = 1e-6 about 1e-10 |f|. The four-point stencil (-f(x+2h) + 8 f(x+h) - 8 f(x-h) + f(x-2h)) / 12h has
// truncation h^4 |f^(5)| / 30 and rounding about 1.5 eps |f| / h: with h = 1e-3 (rad, m, rad/s, m/s, control
// units) 3e-14 |f^(5)| + 2e-13 |f|, so the tests that build their own references use it (GM_H4). Measured on
// the humanoid's step, the error against the exact zeros of A (translation invariance) is 3e-9, 2e-10 and
// 3e-11 at h = 1e-5, 1e-4 and 1e-3: rounding dominates down to h = 1e-3 (it is amplified inside the
// dynamics by the conditioning of M), so h = 1e-3 is the best of these. Entries are compared relative to
// max(|entry|, GM_FLOOR * scale), scale = max(largest entry of the block, the function's own scale |f|):
// rounding noise of a difference quotient is a fraction of |f|, not of each entry, so entries far below the
// block's scale are held to that scale. The analytic derivatives then agree to 1e-11..4e-7 relative while a
// missing or wrong term is of the order of the entry itself: the tolerance GM_RTOL = 1e-6 cannot hide one.
#ifndef PHYS_GRAD_MODELS_H
#define PHYS_GRAD_MODELS_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dyn/dyn_models.h"
#include "grad.h"
#include "physid.h"
#include "rng.h"
#include "rot.h"
#include "test.h"

#define GM_H 1e-6       // two-point central-difference step (see above)
#define GM_H4 1e-3      // four-point central-difference step (see above)
#define GM_RTOL 1e-6    // relative tolerance of analytic against central differences in smooth states
#define GM_FLOOR 1e-4   // entries are compared relative to max(|entry|, GM_FLOOR * block max)
#define GM_DOT_TOL 1e-12  // dot-product test, relative to sum |y_i J_ij x_j|

#define GM_HUMANOID "/usr/share/mujoco/model/humanoid/humanoid.xml"

// load an MJCF file or exit; extra disable flags or'ed in
static inline physModel* gm_load(const char* path, int disable) {
  physLog log;
  memset(&log, 0, sizeof(log));
  physModel* m = phys_load(path, NULL, &log);
  if (!m) {
    fprintf(stderr, "cannot load %s: %s\n", path, log.error);
    exit(2);
  }
  m->opt.disableflags |= disable;
  return m;
}

// random state: hinge/slide within their ranges (or qpos0 +- 1), unit quaternions, free positions within
// 1 m, qvel uniform in [-vs, vs], ctrl uniform within ctrlrange (or [-1, 1])
static inline void gm_random_state(const physModel* m, physData* d, physRng* r, double vs) {
  for (int j = 0; j < m->njnt; j++) {
    double* q = d->qpos + m->jnt_qposadr[j];
    switch (m->jnt_type[j]) {
      case PHYS_JNT_FREE:
        for (int i = 0; i < 3; i++) q[i] = phys_rng_range(r, -1, 1);
        tm_rand_quat(r, q + 3);
        break;
      case PHYS_JNT_BALL:
        tm_rand_quat(r, q);
        break;
      default: {
        const double* rg = m->jnt_range + 2 * j;
        double q0 = m->qpos0[m->jnt_qposadr[j]];
        q[0] = m->jnt_limited[j] ? phys_rng_range(r, rg[0] + 0.05 * (rg[1] - rg[0]), rg[1] - 0.05 * (rg[1] - rg[0]))
                                 : q0 + phys_rng_range(r, -1, 1);
        break;
      }
    }
  }
  for (int i = 0; i < m->nv; i++) d->qvel[i] = phys_rng_range(r, -vs, vs);
  for (int a = 0; a < m->nu; a++) {
    const double* rg = m->actuator_ctrlrange + 2 * a;
    d->ctrl[a] = m->actuator_ctrllimited[a] ? phys_rng_range(r, 0.9 * rg[0] + 0.1 * rg[1], 0.1 * rg[0] + 0.9 * rg[1])
                                            : phys_rng_range(r, -1, 1);
  }
}

// res = q (+) h e_j (tangent coordinate j moved by h), nq; scratch-free (allocates a small vector)
static inline void gm_perturb(const physModel* m, double* res, const double* q, int j, double h) {
  double* e = calloc((size_t)m->nv, sizeof(double));
  memcpy(res, q, sizeof(double) * (size_t)m->nq);
  e[j] = 1;
  phys_integrate_pos(m, res, e, h);
  free(e);
}

// largest |entry| of a (n values)
static inline double gm_maxabs(const double* a, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s = fmax(s, fabs(a[i]));
  return s;
}

// largest |a - b| / max(|b|, GM_FLOOR * max(max|b|, fscale)) over rows x cols (fscale: the scale of the
// differentiated function's values); prints the worst entry on failure and checks against rtol
static inline double gm_compare(const char* what, const double* a, const double* b, int rows, int cols,
                                double fscale, double rtol) {
  int n = rows * cols, worst = -1;
  double bmax = gm_maxabs(b, n), scale = fmax(bmax, fscale), err = 0;
  for (int i = 0; i < n; i++) {
    double s = fmax(fmax(fabs(b[i]), GM_FLOOR * scale), 1e-300);
    double e = fabs(a[i] - b[i]) / s;
    if (!(e <= err)) {
      err = e;
      worst = i;
    }
  }
  if (worst >= 0 && !(err <= rtol))
    fprintf(stderr, "  %s: worst entry (%d, %d): analytic %.12g, reference %.12g\n", what, worst / cols,
            worst % cols, a[worst], b[worst]);
  CHECK_MSG(err <= rtol, "%s: relative error %.3g > %.3g (block max %.3g, scale %.3g)", what, err, rtol, bmax,
            scale);
  return err;
}

// four-point central difference from f(x+2h), f(x+h), f(x-h), f(x-2h)
static inline double gm_fd4(double f2, double f1, double fm1, double fm2, double h) {
  return (-f2 + 8 * f1 - 8 * fm1 + fm2) / (12 * h);
}

// y' J x and sum |y_i J_ij x_j| for J (rows x cols)
static inline double gm_bilinear(const double* J, const double* y, const double* x, int rows, int cols,
                                 double* scale) {
  double s = 0, t = 0;
  for (int i = 0; i < rows; i++)
    for (int j = 0; j < cols; j++) {
      double v = y[i] * J[(size_t)i * cols + j] * x[j];
      s += v;
      t += fabs(v);
    }
  if (scale) *scale = t;
  return s;
}

// uniform random vector in [-1, 1]^n
static inline void gm_rand_vec(physRng* r, double* x, int n) {
  for (int i = 0; i < n; i++) x[i] = phys_rng_range(r, -1, 1);
}

#endif  // PHYS_GRAD_MODELS_H
