// tendon_deriv.c - the sliding tangent points of a wrapped spatial tendon (tendon_deriv.h).
#include "tendon_deriv.h"

#include <string.h>

#include "rot.h"
#include "wrap.h"

int phys_tendon_slide(const physModel* m, physData* d, int s, const physTendonPath* p, int k, double* S) {
  int nv = m->nv, code = p->wrap[k];
  memset(S, 0, sizeof(double) * 3 * (size_t)nv);
  if (code < 0) return 0;
  int entry = m->spring_adr[s] + code / 2, end = code % 2, g = m->spring_site[entry];
  int side = (int)m->spring_prm[entry], site[2] = {m->spring_site[entry - 1], m->spring_site[entry + 1]};
  const double *pos = d->geom_xpos + 3 * g, *R = d->geom_xmat + 9 * g;
  double pl[2][3], sl[3], D[36];
  // the sites (and the side site) in the geom frame, as phys_wrap takes them: R' (x - pos)
  for (int i = 0; i < 3; i++) {
    for (int e = 0; e < 2; e++) {
      const double* x = d->site_xpos + 3 * site[e];
      pl[e][i] = (x[0] - pos[0]) * R[i] + (x[1] - pos[1]) * R[3 + i] + (x[2] - pos[2]) * R[6 + i];
    }
    if (side >= 0) {
      const double* x = d->site_xpos + 3 * side;
      sl[i] = (x[0] - pos[0]) * R[i] + (x[1] - pos[1]) * R[3 + i] + (x[2] - pos[2]) * R[6 + i];
    }
  }
  int cyl = m->spring_objtype[entry] == PHYS_WRAP_CYLINDER;
  if (!phys_wrap_deriv(D, pl[0], pl[1], side >= 0 ? sl : NULL, m->geom_size[3 * g], cyl)) return 0;
  size_t mark = phys_stack_mark(d);
  double* Jx = phys_stack_alloc(d, 3 * (size_t)nv);
  double* JB = phys_stack_alloc(d, 3 * (size_t)nv);
  int body = m->geom_bodyid[g];
  for (int e = 0; e < 2; e++) {
    const double* x = d->site_xpos + 3 * site[e];
    if (m->site_bodyid[site[e]] == body) continue;   // a site on the geom's body does not move relative to it
    phys_jac(m, d, x, m->site_bodyid[site[e]], Jx, NULL);
    phys_jac(m, d, x, body, JB, NULL);
    // M = R D_e R' (3 x 3), D_e the rows of this tangent point, the columns of site e
    double De[9], RD[9], M[9];
    for (int r = 0; r < 3; r++)
      for (int c = 0; c < 3; c++) De[3 * r + c] = D[6 * (3 * end + r) + 3 * e + c];
    for (int r = 0; r < 3; r++)
      for (int c = 0; c < 3; c++) RD[3 * r + c] = R[3 * r] * De[c] + R[3 * r + 1] * De[3 + c] + R[3 * r + 2] * De[6 + c];
    for (int r = 0; r < 3; r++)
      for (int c = 0; c < 3; c++) M[3 * r + c] = RD[3 * r] * R[3 * c] + RD[3 * r + 1] * R[3 * c + 1] + RD[3 * r + 2] * R[3 * c + 2];
    for (int j = 0; j < nv; j++) {
      double rel[3] = {Jx[j] - JB[j], Jx[nv + j] - JB[nv + j], Jx[2 * nv + j] - JB[2 * nv + j]};
      for (int r = 0; r < 3; r++) S[r * nv + j] += M[3 * r] * rel[0] + M[3 * r + 1] * rel[1] + M[3 * r + 2] * rel[2];
    }
  }
  phys_stack_free(d, mark);
  return 1;
}

// out[j] += (G y) . S_j over j (G, S 3 x nv)
static void add_product(const double* G, const double* S, const double* y, double* out, int nv) {
  double gy[3] = {0, 0, 0};
  for (int r = 0; r < 3; r++)
    for (int i = 0; i < nv; i++) gy[r] += G[r * nv + i] * y[i];
  for (int j = 0; j < nv; j++) out[j] += gy[0] * S[j] + gy[1] * S[nv + j] + gy[2] * S[2 * nv + j];
}

void phys_tendon_slide_add(const physModel* m, physData* d, int s, const physTendonPath* p, int k,
                           const double u[3], double w, const double* PJd, double* K, const double* x, double* Kx,
                           const double* v, double* Kv) {
  if (p->wrap[k] < 0 && p->wrap[k + 1] < 0) return;
  int nv = m->nv;
  size_t mark = phys_stack_mark(d);
  double* S = phys_stack_alloc(d, 3 * (size_t)nv);
  double* G = phys_stack_alloc(d, 3 * (size_t)nv);
  double* Jw = phys_stack_alloc(d, 3 * (size_t)nv);
  for (int e = 0; e < 2; e++) {
    if (!phys_tendon_slide(m, d, s, p, k + e, S)) continue;
    double sign = e ? w : -w;
    phys_jac(m, d, p->x[k + e], p->body[k + e], G, Jw);   // (G's value unused: overwritten below)
    for (int i = 0; i < nv; i++) {
      double wi[3] = {Jw[i], Jw[nv + i], Jw[2 * nv + i]}, uw[3];
      phys_cross3(uw, u, wi);
      for (int r = 0; r < 3; r++) G[r * nv + i] = sign * (PJd[r * nv + i] + uw[r]);
    }
    if (K)
      for (int i = 0; i < nv; i++) {
        double gi[3] = {G[i], G[nv + i], G[2 * nv + i]};
        if (gi[0] == 0 && gi[1] == 0 && gi[2] == 0) continue;
        for (int j = 0; j < nv; j++) K[(size_t)i * nv + j] += gi[0] * S[j] + gi[1] * S[nv + j] + gi[2] * S[2 * nv + j];
      }
    if (x && Kx) add_product(G, S, x, Kx, nv);
    if (v && Kv) add_product(G, S, v, Kv, nv);
  }
  phys_stack_free(d, mark);
}
