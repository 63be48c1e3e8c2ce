// act_deriv.h - the step's derivatives with actuator activations in the state (issue 15 item 2):
// x = (q tangent, v, act), 2nv + na numbers, for every kind of step (smooth, constrained with lcp, cone or ccp,
// penalty). The step (src/step/step.c, MuJoCo 2.2.2's mj_Euler) uses the current act in the actuator force and
// then sets act+ = clamp(act + dt act_dot(ctrl, act)), so
//   d(q+, v+)/dact = the step's response to the force columns dqfrc_actuator/dact: an actuator with dynamics
//     enters (q+, v+) exactly as a control enters an actuator without (its moment times dforce/dinput), so the
//     kind's own B computes these columns while d->grad_act_input is set (passive_deriv.c: the input column of
//     an actuator with dynamics is then its activation's) and they are moved to A's act columns;
//   d(q+, v+)/dctrl = 0 for an actuator with dynamics;
//   dact+/dact = 1 (integrator) or 1 - dt / max(tau, 1e-15) (filter), dact+/dctrl = dt (integrator) or
//     dt / max(tau, 1e-15) (filter) times the control clamp's slope, all 0 when act+ is clamped to actrange
//     (actlimited: the kink's one-sided value is the clamped side's, 0); dact+/d(q, v) = 0;
//   dact+/dtheta: the time constant dynprm[0] of a filter (timeconst:ACTUATOR, params.h) -dt act_dot / tau.
// A muscle (dyntype muscle, src/dyn/muscle.c): dact+/dact = 1 + dt dact_dot/dact, dact+/dctrl = dt
// dact_dot/dctrl (the kinks' one-sided values muscle.c states), timeconst:ACTUATOR its two time constants.
// step_record.c calls these two for a model with na > 0 around its dispatch on the kind.
#ifndef PHYS_ACT_DERIV_H
#define PHYS_ACT_DERIV_H

#include "params.h"
#include "physid.h"
#include "step_record.h"

// the kind's dispatch the two wrap: (q, v) rows, x = (q, v) (2nv) and its A, B, P of step_record.h
typedef physStatus (*physKindJacobian)(const physModel* m, physData* d, const physStepRecord* rec,
                                       const physParamTable* t, double* A, double* B, double* P, void* ctx);
typedef physStatus (*physKindVjp)(const physModel* m, physData* d, const physStepRecord* rec,
                                  const physParamTable* t, const double* xbar_next, double* xbar, double* ubar,
                                  double* theta_bar, double* lambda);

// A (nx x nx), B (nx x nu), P (nx x ntheta), nx = 2nv + na, at rec (any may be NULL; P needs t) from the
// kind's (q, v) derivatives (kind with ctx) and the act update's; status the kind's, PHYS_ERR_NOMEM if d's
// arena cannot hold B's 2nv x nu scratch when B is NULL
physStatus phys_act_record_jacobian(const physModel* m, physData* d, const physStepRecord* rec,
                                    const physParamTable* t, double* A, double* B, double* P, physKindJacobian kind,
                                    void* ctx);
// reverse mode at rec with xbar_next (nx): xbar (nx), ubar (nu), theta_bar (ntheta), lambda (nv, the kind's)
physStatus phys_act_record_vjp(const physModel* m, physData* d, const physStepRecord* rec, const physParamTable* t,
                               const double* xbar_next, double* xbar, double* ubar, double* theta_bar,
                               double* lambda, physKindVjp kind);
// dact+/dtau of actuator a's activation in one step at d's state: a filter's -dt (clamped ctrl - act) / tau^2
// into dtau[0]; a muscle's dt dact_dot/dprm of its two time constants (activation, deactivation) into dtau[0..1]
// (0 when act+ is clamped to actrange, for other actuators and with actuation disabled). Reads d->act_dot
// (phys_actuation at d's state: every linearization runs it).
void phys_step_act_timeconst(const physModel* m, const physData* d, int a, double dtau[2]);

#endif  // PHYS_ACT_DERIV_H
