// rne.c - inverse dynamics by the recursive Newton-Euler algorithm (world-aligned spatial vectors).
#include <string.h>

#include "physid.h"
#include "spatial.h"

// tau = M(q) qacc + c(q, v) (no armature, no passive forces); qacc may be NULL (zero).
// Gravity enters as a fictitious acceleration of the world: cacc_0 = (0, -g).
//   cacc_b = cacc_parent + sum_j (cdof_dot_j qvel_j + cdof_j qacc_j)
//   cfrc_b = cinert_b cacc_b + cvel_b x* (cinert_b cvel_b), summed into the parent
//   tau_j  = cdof_j . cfrc_body(j)
void phys_rnea(const physModel* m, physData* d, const double* qacc, double* tau) {
  int nbody = m->nbody;
  size_t mark = phys_stack_mark(d);
  double* cacc = phys_stack_alloc(d, 6 * (size_t)nbody);
  double* cfrc = phys_stack_alloc(d, 6 * (size_t)nbody);

  memset(cacc, 0, 6 * sizeof(double));
  if (!(m->opt.disableflags & PHYS_DSBL_GRAVITY))
    for (int i = 0; i < 3; i++) cacc[3 + i] = -m->opt.gravity[i];

  // forward pass: accelerations and body forces
  for (int b = 1; b < nbody; b++) {
    double* a = cacc + 6 * b;
    double *f = cfrc + 6 * b, t[6], h[6];
    memcpy(a, cacc + 6 * m->body_parentid[b], 6 * sizeof(double));
    int da = m->body_dofadr[b], nd = m->body_dofnum[b];
    for (int j = da; j < da + nd; j++) {
      const double *cd = d->cdof + 6 * j, *cdd = d->cdof_dot + 6 * j;
      double qv = d->qvel[j], qa = qacc ? qacc[j] : 0;
      for (int i = 0; i < 6; i++) a[i] += cdd[i] * qv + cd[i] * qa;
    }
    const double* I = d->cinert + 10 * b;
    const double* v = d->cvel + 6 * b;
    phys_inert_mul(f, I, a);
    phys_inert_mul(h, I, v);
    phys_cross_force(t, v, h);
    for (int i = 0; i < 6; i++) f[i] += t[i];
  }

  // backward pass: subtree forces, projected on the dofs
  for (int b = nbody - 1; b > 0; b--) {
    int p = m->body_parentid[b];
    const double* f = cfrc + 6 * b;
    int da = m->body_dofadr[b], nd = m->body_dofnum[b];
    for (int j = da; j < da + nd; j++) tau[j] = phys_dot6(d->cdof + 6 * j, f);
    if (p > 0)
      for (int i = 0; i < 6; i++) cfrc[6 * p + i] += f[i];
  }
  phys_stack_free(d, mark);
}

// qfrc_bias = c(q, v) = rnea(qacc = 0)
void phys_bias_forces(const physModel* m, physData* d) { phys_rnea(m, d, NULL, d->qfrc_bias); }
