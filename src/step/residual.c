// residual.c - the residual acceleration stage of the step (residual.h): the state's features and the
// network's output at d's state.
#include "residual.h"

#include <stdio.h>
#include <string.h>

#include "arena.h"
#include "rot.h"

int phys_residual_nfeature(const physModel* m) {
  int n = m->nv;
  for (int j = 0; j < m->njnt; j++) {
    int t = m->jnt_type[j];
    n += t == PHYS_JNT_FREE ? 12 : t == PHYS_JNT_BALL ? 9 : 1;
  }
  return n;
}

void phys_residual_features(const physModel* m, const double* qpos, const double* qvel, double* phi) {
  int k = 0;
  for (int j = 0; j < m->njnt; j++) {
    const double* q = qpos + m->jnt_qposadr[j];
    int t = m->jnt_type[j];
    if (t == PHYS_JNT_FREE) {
      memcpy(phi + k, q, 3 * sizeof(double));
      phys_quat2mat(phi + k + 3, q + 3);
      k += 12;
    } else if (t == PHYS_JNT_BALL) {
      phys_quat2mat(phi + k, q);
      k += 9;
    } else {
      phi[k++] = q[0];
    }
  }
  memcpy(phi + k, qvel, sizeof(double) * (size_t)m->nv);
}

void phys_residual_acc(const physModel* m, physData* d, double* r) {
  const physMlp* n = m->residual;
  if (!n) {
    memset(r, 0, sizeof(double) * (size_t)m->nv);
    return;
  }
  size_t mark = phys_stack_mark(d);
  double* phi = phys_stack_alloc(d, (size_t)n->size[0]);
  double* act = phys_stack_alloc(d, (size_t)phys_mlp_nact(n) + 1);
  phys_residual_features(m, d->qpos, d->qvel, phi);
  phys_mlp_forward(n, phi, r, act);
  phys_stack_free(d, mark);
}

const char* phys_residual_check(const physModel* m, const physMlp* n, char* err, size_t errlen) {
  if (!n) return NULL;
  if (m->opt.contact == PHYS_CONTACT_PENALTY) {
    snprintf(err, errlen, "a residual network needs contact lcp, cone or ccp (penalty contacts are implicit in v+)");
    return err;
  }
  int nf = phys_residual_nfeature(m);
  if (n->size[0] != nf || n->size[n->nlayer] != m->nv) {
    snprintf(err, errlen, "residual network maps %d inputs to %d outputs; the model needs %d (state features) to %d (nv)",
             n->size[0], n->size[n->nlayer], nf, m->nv);
    return err;
  }
  return NULL;
}
