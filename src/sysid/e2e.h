// e2e.h - paper 004's end-to-end baseline: a network (src/math/mlp.h; the paper's 4 hidden layers of 256, tanh)
// that predicts the next observed velocity from the observed state's features phi(x_s) (src/step/residual.h: the
// quaternions as rotation matrices), trained by Adam on L = 1/N sum_s 1/2 |N(phi(x_s)) - v_{s+1}|^2 in minibatches
// (cblas_dgemm), and rolled out as v_{s+1} = N(phi(x_s)), q_{s+1} = q_s (+) dt_obs v_{s+1} (the model's
// integration on the configuration manifold). No physics: the model file only gives the state layout.
#ifndef PHYS_E2E_H
#define PHYS_E2E_H

#include "mlp.h"
#include "physid.h"
#include "sysid.h"

typedef struct physE2eOptions_ {
  int epochs;         // passes over the data (default 100)
  int batch;          // minibatch size (default 256); the order is shuffled per epoch from seed
  double lr;          // Adam step (default 1e-3)
  uint64_t seed;      // the shuffles (default 1)
  int verbose;        // the loss per 10 epochs on stderr
} physE2eOptions;

void phys_e2e_defaults(physE2eOptions* o);
// a network of the paper's shape for m: phi(x) -> nv, hidden layers nhidden x width, tanh, weights drawn from seed
physMlp* phys_e2e_alloc(const physModel* m, int nhidden, int width, uint64_t seed, char* err, size_t errlen);
// L over every transition of ds at n's weights
double phys_e2e_loss(const physModel* m, const physMlp* n, const physDataset* ds);
// train n in place; hist (o->epochs + 1, may be NULL): L before the first epoch and after each.
// PHYS_ERR_SIZE if n does not map phi(x) to nv or ds has no transition; PHYS_ERR_NOMEM
physStatus phys_e2e_train(const physModel* m, physMlp* n, const physDataset* ds, const physE2eOptions* o,
                          double* hist, physLog* log);
// roll n out from (qpos, qvel) (nq, nv; advanced in place) by one sample interval dt
void phys_e2e_step(const physModel* m, const physMlp* n, double dt, double* qpos, double* qvel, double* work);
// doubles of phys_e2e_step's work
int phys_e2e_nwork(const physModel* m, const physMlp* n);

#endif  // PHYS_E2E_H
