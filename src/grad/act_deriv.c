// act_deriv.c - the contact-free step's Jacobians with actuator activations in the state (act_deriv.h).
//
// The step (src/step/step.c, MuJoCo 2.2.2's mj_Euler) uses the current act in the force and then sets
// act+ = clamp(act + dt act_dot(ctrl, act)), so with x = (q, v, act):
//   d(q+, v+)/d(q, v, u) = the smooth step's A, B at the current act (the force's dependence on q and v through
//     its affine gain and bias included; its control slope is 0 for an actuator with dynamics),
//   d(q+, v+)/dact = the smooth step's response to the force columns dqfrc_actuator/dact,
//   dact+/dact, dact+/du: the act update's own derivatives (act_deriv.h), dact+/d(q, v) = 0.
#include "act_deriv.h"

#include <string.h>

#include "collision.h"
#include "contact.h"
#include "dyn.h"
#include "grad.h"
#include "step_record.h"

// the act rows: dact+/dact (na x na diagonal, into A's rows 2nv.. at column 2nv..) and dact+/du (into B's rows
// 2nv..), 0 where the updated activation is clamped to actrange
static void act_rows(const physModel* m, const physData* d, double* A, double* B) {
  int nv = m->nv, na = m->na, nu = m->nu, nx = 2 * nv + na;
  double dt = m->opt.timestep;
  for (int a = 0; a < nu; a++) {
    int k = m->actuator_actadr[a];
    if (k < 0) continue;
    double c = d->ctrl[a], slope = 1, x = d->act[k] + dt * d->act_dot[k];
    if (m->actuator_ctrllimited[a]) {
      const double* r = m->actuator_ctrlrange + 2 * a;
      if (c < r[0] || c > r[1]) slope = 0;
    }
    double keep = 1, tau = m->actuator_dynprm[3 * a], rate = 1;   // rate: dact_dot/dctrl (-dact_dot/dact)
    if (m->actuator_actlimited[a]) {
      const double* r = m->actuator_actrange + 2 * a;
      if (x < r[0] || x > r[1]) keep = 0;
    }
    if (m->actuator_dyntype[a] == PHYS_DYN_FILTER) rate = 1 / (tau > 1e-15 ? tau : 1e-15);
    int filter = m->actuator_dyntype[a] == PHYS_DYN_FILTER;
    if (m->opt.disableflags & PHYS_DSBL_ACTUATION) rate = 0, filter = 0;   // act_dot = 0: act held
    if (A) A[(size_t)(2 * nv + k) * nx + 2 * nv + k] = keep * (1 - (filter ? dt * rate : 0));
    if (B) B[(size_t)(2 * nv + k) * nu + a] = keep * dt * rate * slope;
  }
}

// the (q, v) rows: the smooth step's A, B (2nv wide) spread into the nx-wide A, and the act columns; 0 if the
// arena cannot hold the 2nv x (2nv + na) scratch (a counted warning)
static int state_rows(const physModel* m, physData* d, const double* L, const double* qacc, double* A, double* B) {
  int nv = m->nv, na = m->na, n2 = 2 * nv, nx = n2 + na;
  size_t mark = phys_stack_mark(d);
  double* A2 = A ? phys_stack_alloc(d, (size_t)n2 * n2) : NULL;
  double* X = A ? phys_stack_alloc(d, (size_t)n2 * na) : NULL;
  if (A && (!A2 || !X)) {
    phys_stack_free(d, mark);
    return 0;
  }
  phys_smooth_step_jacobian(m, d, L, qacc, NULL, A2, B);   // B: (q+, v+) rows are B's first 2nv rows
  if (A) {
    memset(X, 0, sizeof(double) * (size_t)n2 * na);
    phys_actuation_act_deriv(m, d, X + (size_t)nv * na);
    phys_smooth_step_force_jacobian(m, d, L, qacc, NULL, X, na);
    for (int i = 0; i < n2; i++) {
      memcpy(A + (size_t)i * nx, A2 + (size_t)i * n2, sizeof(double) * (size_t)n2);
      memcpy(A + (size_t)i * nx + n2, X + (size_t)i * na, sizeof(double) * (size_t)na);
    }
  }
  phys_stack_free(d, mark);
  return 1;
}

physStatus phys_step_act_jacobian(const physModel* m, physData* d, double* A, double* B) {
  int nv = m->nv, na = m->na, nu = m->nu, nx = 2 * nv + na;
  if (!phys_grad_balls_last(m) || m->residual || !phys_grad_muscles_ok(m)) return PHYS_ERR_MODEL;
  phys_kinematics(m, d);
  if (phys_frictionloss_count(m) > 0 || phys_constraint_nlimit(m, d) > 0 ||
      (!(m->opt.disableflags & PHYS_DSBL_CONTACT) && phys_collision_count(m, d) > 0))
    return PHYS_ERR_ARG;
  size_t mark = phys_stack_mark(d);
  double* L = phys_stack_alloc(d, (size_t)nv * nv);
  double* qacc = phys_stack_alloc(d, (size_t)nv);
  physStatus st = L && qacc ? phys_smooth_step_point(m, d, 1, L, qacc) : PHYS_ERR_NOMEM;
  if (st == PHYS_OK) {
    if (A) memset(A, 0, sizeof(double) * (size_t)nx * nx);
    if (B) memset(B, 0, sizeof(double) * (size_t)nx * nu);
    if (!state_rows(m, d, L, qacc, A, nu > 0 ? B : NULL)) st = PHYS_ERR_NOMEM;
    else act_rows(m, d, A, nu > 0 ? B : NULL);
  }
  phys_stack_free(d, mark);
  return st;
}

// dact+/dtau (na): a filter's act+ = act + dt (c - act) / tau: -dt (c - act) / tau^2 for tau > 1e-15 (the
// clamp max(tau, 1e-15) has derivative 0 below), 0 when act+ is clamped; other actuators 0
void phys_step_act_timeconst(const physModel* m, physData* d, double* dtau) {
  int na = m->na;
  double dt = m->opt.timestep;
  memset(dtau, 0, sizeof(double) * (size_t)na);
  if (m->opt.disableflags & PHYS_DSBL_ACTUATION) return;
  phys_kinematics(m, d);
  phys_com_pos(m, d);
  phys_com_vel(m, d);
  phys_actuation(m, d);   // act_dot at d's state
  for (int a = 0; a < m->nu; a++) {
    int k = m->actuator_actadr[a];
    double tau = m->actuator_dynprm[3 * a];
    if (k < 0 || m->actuator_dyntype[a] != PHYS_DYN_FILTER || !(tau > 1e-15)) continue;
    double x = d->act[k] + dt * d->act_dot[k];
    const double* r = m->actuator_actrange + 2 * a;
    if (m->actuator_actlimited[a] && (x < r[0] || x > r[1])) continue;
    dtau[k] = -dt * d->act_dot[k] / tau;   // act_dot = (c - act) / tau
  }
}
