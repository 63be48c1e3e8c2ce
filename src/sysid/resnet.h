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
// (m->residual->nparam, NULL or no network: not wanted). d is m's data (made after the network was attached).
// PHYS_ERR_MODEL for a model with activations (na > 0; this one and the violation loss: not carried yet)
physStatus phys_res_loss(physModel* m, physData* d, const physParamTable* t, const physDataset* ds,
                         const physResTrainOptions* o, double* loss, double* gtheta, double* gw);

// Adam from theta (t->ntheta, in and out, kept within lower/upper) and m's network weights (trained in place;
// none: theta alone); hist (o->iters + 1, may be NULL) receives the loss before each iteration and at the end.
// PHYS_ERR_ARG for tables with input kinds (delay, gain, bias of recorded inputs) or penalty contact.
physStatus phys_res_train(physModel* m, const physParamTable* t, double* theta, const double* lower,
                          const double* upper, const physDataset* ds, const physResTrainOptions* o, double* hist,
                          physLog* log);

//---------------------------------------------------------------------------------------------------------
// CCN-R: the violation loss (violation.h) with the residual network in its dynamics term. The step's
// v+ = v + dt (M~^-1 (f - c) + r) + M~^-1 J' lambda makes the force the contacts must supply
// F = M~ qacc + c - f - M~ r; like the rest of the loss, r is taken at the next sample (q+, v+) (violation.h).
// The loss's residual r_pred = L^-1 (dt F - J' lambda*) (M~ = L L') gives, by the envelope theorem (lambda* held),
// d(1/2 |r_pred|^2)/dr = -dt L r_pred, so gw += (dr/dw)' (-dt L r_pred).

#include "violation.h"

// F (nv) -= Mt r(d's state), Mt = M~ (nv x nv, before its factorization); nothing without a network
// (src/sysid/violation.c's dynamics term calls it)
void phys_violation_residual_force(const physModel* m, physData* d, const double* Mt, double* F);

// the violation loss 1/N sum of the transitions' 1/2 |r|^2, plus the network's regularization as phys_res_loss,
// and its gradients gtheta (t->ntheta; the table's kinds without force kinds: friction, size) and gw
physStatus phys_res_violation_loss(physModel* m, physData* d, const physParamTable* t, const physDataset* ds,
                                   const physViolationWeights* vw, const physResTrainOptions* o, double* loss,
                                   double* gtheta, double* gw);
// Adam on phys_res_violation_loss as phys_res_train (CCN-R; without a network, CCN by Adam). PHYS_ERR_ARG for a
// force kind in t with a network (mass, com, inertia, damping, armature, ...: the -dM~/dtheta r term is not in
// the violation's Jacobian) or what phys_violation_check refuses
physStatus phys_res_train_violation(physModel* m, const physParamTable* t, double* theta, const double* lower,
                                    const double* upper, const physDataset* ds, const physViolationWeights* vw,
                                    const physResTrainOptions* o, double* hist, physLog* log);

#endif  // PHYS_RESNET_H
