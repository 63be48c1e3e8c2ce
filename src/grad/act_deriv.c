// act_deriv.c - the step's derivatives with actuator activations in the state (act_deriv.h): the kind's
// (q, v) derivatives with the actuators' input columns taken as their activations' (d->grad_act_input), spread
// into the (q, v, act) layout, and the act update's own rows.
#include "act_deriv.h"

#include <string.h>

#include "dyn.h"
#include "params.h"

// the act update of actuator a with activation k at d's state: *keep = 0 when act+ is clamped to actrange (1
// otherwise), *rate = dact_dot/dctrl before the control clamp (integrator 1, filter 1 / max(tau, 1e-15)),
// *slope = the control clamp's slope; returns dact+/dact (1 - dt rate for a filter, 1 for an integrator, times
// keep). Actuation disabled: act_dot = 0, so act+ = act (rate 0).
static double act_update(const physModel* m, const physData* d, int a, int k, double* rate, double* slope) {
  double dt = m->opt.timestep, c = d->ctrl[a], x = d->act[k] + dt * d->act_dot[k], keep = 1;
  int filter = m->actuator_dyntype[a] == PHYS_DYN_FILTER;
  double tau = m->actuator_dynprm[3 * a];
  *slope = 1;
  if (m->actuator_ctrllimited[a]) {
    const double* r = m->actuator_ctrlrange + 2 * a;
    if (c < r[0] || c > r[1]) *slope = 0;
  }
  if (m->actuator_actlimited[a]) {
    const double* r = m->actuator_actrange + 2 * a;
    if (x < r[0] || x > r[1]) keep = 0;
  }
  if (m->opt.disableflags & PHYS_DSBL_ACTUATION) {
    *rate = 0;
    return keep;
  }
  if (m->actuator_dyntype[a] == PHYS_DYN_MUSCLE) {   // act_dot(c, act) of muscle.c: its own slopes
    double dc, dact, cl = c;
    if (m->actuator_ctrllimited[a]) {
      const double* r = m->actuator_ctrlrange + 2 * a;
      cl = c < r[0] ? r[0] : (c > r[1] ? r[1] : c);
    }
    phys_muscle_dynamics_deriv(cl, d->act[k], m->actuator_dynprm + 3 * a, &dc, &dact, NULL);
    *rate = keep * dc;
    return keep * (1 + dt * dact);
  }
  double inv = filter ? 1 / (tau > 1e-15 ? tau : 1e-15) : 1;
  *rate = keep * inv;
  return keep * (1 - (filter ? dt * inv : 0));
}

// dact+/dtheta of entry p (timeconst of a filter; every other kind 0) into column adr of the act rows (ld) of P
static void act_param_rows(const physModel* m, const physData* d, const physParamTable* t, double* P, int ld) {
  int nv = m->nv;
  for (int e = 0; e < t->n; e++) {
    const physParam* p = t->param + e;
    if (p->kind != PHYS_PAR_TIMECONST) continue;
    int k = m->actuator_actadr[p->id];
    double dtau[2];
    phys_step_act_timeconst(m, d, p->id, dtau);
    for (int i = 0; i < p->size; i++) P[(size_t)(2 * nv + k) * ld + p->adr + i] += dtau[i];
  }
}

// A's and B's act rows at d's state (the rows zeroed by the caller)
static void act_rows(const physModel* m, const physData* d, double* A, double* B) {
  int nv = m->nv, nu = m->nu, nx = 2 * nv + m->na;
  double dt = m->opt.timestep;
  for (int a = 0; a < nu; a++) {
    int k = m->actuator_actadr[a];
    if (k < 0) continue;
    double rate, slope, da = act_update(m, d, a, k, &rate, &slope);
    if (A) A[(size_t)(2 * nv + k) * nx + 2 * nv + k] = da;
    if (B) B[(size_t)(2 * nv + k) * nu + a] = dt * rate * slope;
  }
}

// rows 0..2nv of X (stride n2 on entry, nx after), moved in place to the wider stride with the new columns 0
static void widen_rows(double* X, int rows, int n2, int nx) {
  for (int i = rows - 1; i >= 0; i--) {
    memmove(X + (size_t)i * nx, X + (size_t)i * n2, sizeof(double) * (size_t)n2);
    memset(X + (size_t)i * nx + n2, 0, sizeof(double) * (size_t)(nx - n2));
  }
}

physStatus phys_act_record_jacobian(const physModel* m, physData* d, const physStepRecord* rec,
                                    const physParamTable* t, double* A, double* B, double* P, physKindJacobian kind,
                                    void* ctx) {
  int nv = m->nv, na = m->na, nu = m->nu, n2 = 2 * nv, nx = n2 + na, nt = P && t ? t->ntheta : 0;
  size_t mark = phys_stack_mark(d);
  double* Bx = B ? B : (A && nu > 0 ? phys_stack_alloc(d, (size_t)n2 * nu) : NULL);
  if (A && nu > 0 && !Bx) return PHYS_ERR_NOMEM;
  d->grad_act_input = 1;   // B's column of an actuator with dynamics: d(q+, v+)/d its act
  physStatus st = kind(m, d, rec, t, A, nu > 0 ? Bx : NULL, P, ctx);
  d->grad_act_input = 0;
  if (st == PHYS_OK) {
    if (A) {
      widen_rows(A, n2, n2, nx);
      memset(A + (size_t)n2 * nx, 0, sizeof(double) * (size_t)na * nx);
      for (int a = 0; a < nu; a++) {
        int k = m->actuator_actadr[a];
        for (int i = 0; k >= 0 && i < n2; i++) A[(size_t)i * nx + n2 + k] = Bx[(size_t)i * nu + a];
      }
    }
    if (B) {
      for (int a = 0; a < nu; a++)
        for (int i = 0; m->actuator_actadr[a] >= 0 && i < n2; i++) B[(size_t)i * nu + a] = 0;
      memset(B + (size_t)n2 * nu, 0, sizeof(double) * (size_t)na * nu);
    }
    act_rows(m, d, A, B);
    if (nt > 0) {
      memset(P + (size_t)n2 * nt, 0, sizeof(double) * (size_t)na * nt);
      act_param_rows(m, d, t, P, nt);
    }
  }
  phys_stack_free(d, mark);
  return st;
}

physStatus phys_act_record_vjp(const physModel* m, physData* d, const physStepRecord* rec, const physParamTable* t,
                               const double* xbar_next, double* xbar, double* ubar, double* theta_bar,
                               double* lambda, physKindVjp kind) {
  int nv = m->nv, na = m->na, nu = m->nu, n2 = 2 * nv;
  size_t mark = phys_stack_mark(d);
  double* ub = nu > 0 ? phys_stack_alloc(d, (size_t)nu) : NULL;
  if (nu > 0 && !ub) return PHYS_ERR_NOMEM;
  d->grad_act_input = 1;   // ub's entry of an actuator with dynamics: d<xbar_next, (q+, v+)>/d its act
  physStatus st = kind(m, d, rec, t, xbar_next, xbar, ub, theta_bar, lambda);
  d->grad_act_input = 0;
  if (st == PHYS_OK) {
    const double* abn = xbar_next + n2;
    if (xbar) memset(xbar + n2, 0, sizeof(double) * (size_t)na);
    for (int a = 0; a < nu; a++) {
      int k = m->actuator_actadr[a];
      double u = ub[a];
      if (k >= 0) {
        double rate, slope, da = act_update(m, d, a, k, &rate, &slope);
        if (xbar) xbar[n2 + k] = u + da * abn[k];
        u = m->opt.timestep * rate * slope * abn[k];
      }
      if (ubar) ubar[a] = u;
    }
    if (theta_bar && t) {
      for (int e = 0; e < t->n; e++) {
        const physParam* p = t->param + e;
        if (p->kind != PHYS_PAR_TIMECONST) continue;
        double dtau[2];
        phys_step_act_timeconst(m, d, p->id, dtau);
        for (int i = 0; i < p->size; i++) theta_bar[p->adr + i] += dtau[i] * abn[m->actuator_actadr[p->id]];
      }
    }
  }
  phys_stack_free(d, mark);
  return st;
}

// dact+/dtau of actuator a (a filter: act+ = act + dt (c - act) / tau, so -dt act_dot / tau for tau > 1e-15 (the
// clamp max(tau, 1e-15) has derivative 0 below); a muscle: dt dact_dot/dprm[0..1] of its activation and
// deactivation time constants (muscle.c); 0 when act+ is clamped, for other actuators, with actuation disabled)
void phys_step_act_timeconst(const physModel* m, const physData* d, int a, double dtau[2]) {
  int k = m->actuator_actadr[a], muscle = m->actuator_dyntype[a] == PHYS_DYN_MUSCLE;
  double tau = m->actuator_dynprm[3 * a], dt = m->opt.timestep;
  dtau[0] = dtau[1] = 0;
  if (k < 0 || (m->actuator_dyntype[a] != PHYS_DYN_FILTER && !muscle) || (!muscle && !(tau > 1e-15)) ||
      (m->opt.disableflags & PHYS_DSBL_ACTUATION))
    return;
  double x = d->act[k] + dt * d->act_dot[k];
  const double* r = m->actuator_actrange + 2 * a;
  if (m->actuator_actlimited[a] && (x < r[0] || x > r[1])) return;
  if (!muscle) {
    dtau[0] = -dt * d->act_dot[k] / tau;
    return;
  }
  double c = d->ctrl[a];
  if (m->actuator_ctrllimited[a]) {
    const double* cr = m->actuator_ctrlrange + 2 * a;
    c = c < cr[0] ? cr[0] : (c > cr[1] ? cr[1] : c);
  }
  phys_muscle_dynamics_deriv(c, d->act[k], m->actuator_dynprm + 3 * a, NULL, NULL, dtau);
  dtau[0] *= dt, dtau[1] *= dt;
}
