// residual.h - the residual acceleration network of the step (paper 004): r = N(phi(q, v)), nv outputs added to
// the continuous dynamics, a = M~^-1 (tau - c) + r, so the free velocity is v_f = v + dt a (m->residual, the
// network of src/math/mlp.h; NULL: none). phi, the network's input, is the state with every quaternion as its
// rotation matrix: per joint in order, free: position (3) and R (9, row-major); ball: R (9); hinge, slide: q (1);
// then all of v (nv). Its derivative w.r.t. q is taken in the step's tangent coordinates (R' = R Exp(dq) on a
// rotation, dq itself elsewhere).
#ifndef PHYS_RESIDUAL_H
#define PHYS_RESIDUAL_H

#include "mlp.h"
#include "physid.h"

// the number of inputs phi has for m
int phys_residual_nfeature(const physModel* m);
// phi (phys_residual_nfeature) of the state (qpos, qvel)
void phys_residual_features(const physModel* m, const double* qpos, const double* qvel, double* phi);
// r (nv) = the residual acceleration at d's state (0 without a network); scratch from d's arena, released
void phys_residual_acc(const physModel* m, physData* d, double* r);
// the network of m checked against m's sizes: NULL if it fits (or there is none), else a message
// (phys_residual_check writes into err, errlen and returns err)
const char* phys_residual_check(const physModel* m, const physMlp* n, char* err, size_t errlen);

#endif  // PHYS_RESIDUAL_H
