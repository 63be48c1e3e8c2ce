// act_deriv.h - the step's Jacobians with actuator activations in the state (issue 15 item 2): x = (q tangent,
// v, act) (2nv + na). The Jacobians and VJPs of grad.h keep x = (q, v) and refuse na > 0; this is the full
// Jacobian of a contact-free step of a model with activations.
#ifndef PHYS_ACT_DERIV_H
#define PHYS_ACT_DERIV_H

#include "physid.h"

// A = dx+/dx ((2nv + na) x (2nv + na)) and B = dx+/du ((2nv + na) x nu) of one phys_step at d's state (either
// may be NULL), x = (q tangent, v, act). The (q, v) block is phys_step_jacobian's at the current act; the act
// columns are dt M~^-1 dqfrc_actuator/dact carried through the integration (as B's control columns); the act
// rows are act+ = clamp(act + dt act_dot): dact+/dact = 1 (integrator) or 1 - dt / max(tau, 1e-15) (filter),
// dact+/dctrl = dt (integrator) or dt / max(tau, 1e-15) (filter) times the control clamp's slope, all 0 when
// act+ is clamped to actrange; dact+/d(q, v) = 0. Smooth steps only: PHYS_ERR_ARG with contacts, active joint
// limits or frictionloss rows, PHYS_ERR_MODEL with a residual network or a ball joint that is not the last
// joint of its body, PHYS_ERR_NUMERIC if M~ is not positive definite, PHYS_ERR_NOMEM if d's arena cannot hold
// the scratch (the arena is sized for phys_step_jacobian; this needs 2nv x (2nv + na) more). The state is not
// advanced.
physStatus phys_step_act_jacobian(const physModel* m, physData* d, double* A, double* B);
// dact+/dtau (na) of one step at d's state: the derivative of each filter's updated activation with respect to
// its time constant dynprm[0] (-dt (clamped ctrl - act) / tau^2; 0 when act+ is clamped to actrange, for
// integrators and with actuation disabled). The step's (q+, v+) do not depend on tau (the force uses the current
// act). Runs the kinematics and phys_actuation at d's state.
void phys_step_act_timeconst(const physModel* m, physData* d, double* dtau);

#endif  // PHYS_ACT_DERIV_H
