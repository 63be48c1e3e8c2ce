// crb.c - joint-space inertia matrix by the composite rigid body algorithm.
#include <string.h>

#include "physid.h"
#include "spatial.h"

// crb_b = cinert_b + sum of the children's crb (world-aligned about the origin, so a plain sum);
// M_ij = cdof_i . (crb_body(j) cdof_j) for i = j and every ancestor dof i of j; M_jj += armature_j.
// Only those entries (and their mirrors) are written: the others are 0 from the data's allocation and reset
// (phys_make_data, phys_reset_data) and nothing else writes qM, so the nv^2 matrix is not cleared each call.
void phys_crb(const physModel* m, physData* d) {
  int nv = m->nv;
  size_t mark = phys_stack_mark(d);
  double* crb = phys_stack_alloc(d, 10 * (size_t)m->nbody);
  memcpy(crb, d->cinert, 10 * sizeof(double) * (size_t)m->nbody);
  for (int b = m->nbody - 1; b > 0; b--) {
    int p = m->body_parentid[b];
    if (p > 0)
      for (int k = 0; k < 10; k++) crb[10 * p + k] += crb[10 * b + k];
  }

  for (int j = 0; j < nv; j++) {
    double f[6];
    phys_inert_mul(f, crb + 10 * m->dof_bodyid[j], d->cdof + 6 * j);
    for (int i = j; i >= 0; i = m->dof_parentid[i]) {
      double v = phys_dot6(d->cdof + 6 * i, f);
      d->qM[(size_t)i * nv + j] = v;
      d->qM[(size_t)j * nv + i] = v;
    }
    d->qM[(size_t)j * nv + j] += m->dof_armature[j];
  }
  phys_stack_free(d, mark);
}
