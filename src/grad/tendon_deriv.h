// tendon_deriv.h - second-order terms of a spatial tendon's path where it wraps a geom (issue 15 item 3;
// src/model/tendon.c, src/math/wrap.h): the tangent points slide on the geom as the sites move relative to it.
// The length's first derivative holds them fixed on the geom's body (their tangency: phys_spring_eval); the
// derivative of that moment arm JL does not: passive_deriv.c's spring_geometry adds these terms to its
// K = d(JL')/dq (the part with the points held fixed).
#ifndef PHYS_TENDON_DERIV_H
#define PHYS_TENDON_DERIV_H

#include "model.h"
#include "physid.h"

// The sliding terms of segment (k, k+1) of spring s's path p at d's kinematics: u its unit vector, w its weight,
// PJd = P J_d (3 x nv, P = (E - u u') / l, J_d = J(x_{k+1}) - J(x_k), the points held on their bodies). For each
// end e that is a tangent point (sign -1 the start, +1 the end) with sliding velocity S_e (3 x nv,
// phys_tendon_slide) and its body's rotation Jacobian Jw_e:
//   G_e = sign w (P J_d + [u x] Jw_e)   (3 x nv),   K += sum_e G_e' S_e   (K nv x nv, NULL to skip)
//   Kx += sum_e S_e' (G_e x)  (the product K_extra' x; x and Kx NULL to skip), and the same for v into Kv.
// Does nothing when neither end is a tangent point. Scratch 9 nv from d's arena.
void phys_tendon_slide_add(const physModel* m, physData* d, int s, const physTendonPath* p, int k,
                           const double u[3], double w, const double* PJd, double* K, const double* x, double* Kx,
                           const double* v, double* Kv);

// S (3 x nv): the velocity, relative to its geom's body B, of tangent point k of spring s's path p per unit
// tangent coordinate:  t = pos + R loc(p0, p1), p_e = R' (x_e - pos)  give
//   S = R sum_e D_e R' (J(x_e) - J_B(x_e)),  D_e = d loc / d p_e (phys_wrap_deriv), x_e the sites before and
// after the geom, J_B(x) the Jacobian of the point x moving with B. Scratch 6 nv from d's arena. Returns 0
// (S zero) if the point is a site or the path no longer wraps there.
int phys_tendon_slide(const physModel* m, physData* d, int s, const physTendonPath* p, int k, double* S);

#endif  // PHYS_TENDON_DERIV_H
