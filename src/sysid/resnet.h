// resnet.h - joint training of a model's physical parameters theta and its residual acceleration network
// (src/step/residual.h) by Adam on the one-step prediction loss through the step (paper 004's DiffSim-R; with
// no network, DiffSim by Adam). For every observed transition x_s -> x_{s+1} of the data, the model steps S times
// from x_s (contact list cold, recorded controls and joint forces held), and
//   L = 1/N sum_s 1/2 (|e_q|^2 + w_v^2 |e_v|^2)  +  c_out 1/N sum_s |r(x_s)|^2  +  c_w |w|^2
// e_q = the tangent difference x_sim (-) x_obs of the positions (m, rad; a rotation's R_obs Exp(e) = R_sim),
// e_v the velocity difference, w_v (s) the velocity weight, N the number of transitions, r the network's output
// (output-norm regularization), w its weights (weight-norm regularization: paper 004's two terms).
// The gradient is exact: each transition's steps in reverse through phys_step_record_vjp (theta) and the force
// adjoint through phys_residual_force_vjp (weights), the rotation error through Jr^-1(e). One thread: the
// same data, options and start give bit-identical results.
#ifndef PHYS_RESNET_H
#define PHYS_RESNET_H

#include "params.h"
#include "physid.h"
#include "sysid.h"

typedef struct physResTrainOptions_ {
  int iters;           // Adam iterations over the whole data (default 200)
  double lr;           // Adam step of the weights (default 1e-3)
  double lr_theta;     // Adam step of theta, in the table's units (default 1e-2)
  double reg_out;      // c_out (default 1e-4)
  double reg_w;        // c_w (default 1e-8)
  double vel_weight;   // w_v in s (default: the sample interval)
  int substeps;        // steps per sample interval (default 1)
  int verbose;         // print the loss every 10 iterations to stderr
} physResTrainOptions;

void phys_res_train_defaults(physResTrainOptions* o);

// L and its gradients at m's current theta and weights: gtheta (t->ntheta, NULL: not wanted) and gw
// (m->residual->nparam, NULL or no network: not wanted). d is m's data (made after the network was attached)
physStatus phys_res_loss(physModel* m, physData* d, const physParamTable* t, const physDataset* ds,
                         const physResTrainOptions* o, double* loss, double* gtheta, double* gw);

// Adam from theta (t->ntheta, in and out, kept within lower/upper) and m's network weights (trained in place;
// none: theta alone); hist (o->iters + 1, may be NULL) receives the loss before each iteration and at the end.
// PHYS_ERR_ARG for tables with input kinds (delay, gain, bias of recorded inputs) or penalty contact.
physStatus phys_res_train(physModel* m, const physParamTable* t, double* theta, const double* lower,
                          const double* upper, const physDataset* ds, const physResTrainOptions* o, double* hist,
                          physLog* log);

#endif  // PHYS_RESNET_H
