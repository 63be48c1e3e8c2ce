// param_inputs.c - the input kinds of the parameter table (params.h): per-channel transforms of recorded
// inputs, u_eff(t) = g u(t - D) + b, and their sensitivities d u_eff / d theta for the step's parameter
// columns (param_forces.c maps them through the channel's force: an actuator's gain times the clamp's slope
// times its moment arm, or the dof of an applied force).
//
// A recorded input holds from its sample to the next (zero-order hold, u(t) = u_j on [t_j, t_{j+1}), u_0 before
// the first sample). Delayed by a fractional D, u(t - D) switches inside a step, and sampled at the step's start
// it would be piecewise constant in D, with a zero derivative almost everywhere. So each step [t, t + h)
// receives the average of the held signal over its delayed window [t - D, t + h - D]: exact whenever the
// delayed switches fall on step boundaries, continuous and piecewise linear in D (a first-order hold of the
// input's integral), with d avg / dD = -(u(t + h - D) - u(t - D)) / h, the values just before those times
// (the derivative for a growing delay at a sample time). A window inside one hold interval gives the sample
// itself, bit for bit: with D = 0 (or gain and bias alone) the zero-order hold is unchanged.
#include <string.h>

#include "params.h"

// index of the hold interval holding time tau: the last j with tm[j] <= tau (0 before the first sample); left:
// the last j with tm[j] < tau instead (the interval just before a sample time)
static int hold_index(const double* tm, int T, double tau, int left) {
  int j = T - 1;
  while (j > 0 && (left ? tm[j] >= tau : tm[j] > tau)) j--;
  return j;
}

// average of the held column c of x (T x n at times tm) over [a, b] (b > a), *dslope = d avg / d shift of the
// window to earlier times by D: -(x(b-) - x(a-)) / (b - a)
static double window_average(const double* tm, const double* x, int T, int n, int c, double a, double b,
                             double* dshift) {
  int ja = hold_index(tm, T, a, 0), jb = hold_index(tm, T, b, 1);
  *dshift = -(x[(size_t)jb * n + c] - x[(size_t)hold_index(tm, T, a, 1) * n + c]) / (b - a);
  if (ja >= jb) return x[(size_t)ja * n + c];   // inside one interval: the sample itself
  double sum = 0;
  for (int j = ja; j <= jb; j++) {
    double lo = j == ja ? a : tm[j], hi = j == jb ? b : tm[j + 1];
    sum += x[(size_t)j * n + c] * (hi - lo);
  }
  return sum / (b - a);
}

// g, b, D of channel ch from t's input entries (1, 0, 0 without them); 0 if the channel has none
static int channel_transform(const physParamTable* t, int ch, double* g, double* b, double* D) {
  int any = 0;
  *g = 1, *b = 0, *D = 0;
  for (int e = 0; e < t->n; e++) {
    const physParam* p = t->param + e;
    if (!phys_param_is_input(p->kind) || p->id != ch) continue;
    double v = t->input[p->adr];
    if (p->kind == PHYS_PAR_INPUT_DELAY) *D = v;
    else if (p->kind == PHYS_PAR_INPUT_GAIN) *g = v;
    else *b = v;
    any = 1;
  }
  return any;
}

void phys_param_input_hold(const physParamTable* t, const physModel* m, const double* tm, int T, int s,
                           int sub, const double* ctrl, const double* qfrc, double* ctrl_out, double* qfrc_out,
                           double* sens) {
  int nu = m->nu, nv = m->nv;
  if (ctrl) memcpy(ctrl_out, ctrl + (size_t)s * nu, sizeof(double) * (size_t)nu);
  if (qfrc) memcpy(qfrc_out, qfrc + (size_t)s * nv, sizeof(double) * (size_t)nv);
  if (sens) memset(sens, 0, sizeof(double) * (size_t)t->n);
  if (!t->input) return;
  for (int e = 0; e < t->n; e++) {
    const physParam* p = t->param + e;
    if (!phys_param_is_input(p->kind)) continue;
    int ch = p->id, force = ch >= nu;
    const double* x = force ? qfrc : ctrl;
    if (!x) continue;   // no recorded channel of this kind: nothing to transform
    double g, b, D, dshift, h = m->opt.timestep, t0 = tm[s] + sub * h;
    channel_transform(t, ch, &g, &b, &D);
    int n = force ? nv : nu, c = force ? ch - nu : ch;
    double u = window_average(tm, x, T, n, c, t0 - D, t0 + h - D, &dshift);
    (force ? qfrc_out : ctrl_out)[c] = g * u + b;
    if (sens)
      sens[e] = p->kind == PHYS_PAR_INPUT_DELAY ? g * dshift : p->kind == PHYS_PAR_INPUT_GAIN ? u : 1;
  }
}
