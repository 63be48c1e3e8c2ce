// tendon_rows.c - tendon length limits as constraint rows (issue 15 item 3): a limited tendon (MJCF <spatial> or
// <fixed> with limited="true" range="lo hi") whose length L leaves its range gets one one-sided row, as a joint
// limit does, with the tendon's moment dL/dq (MuJoCo's ten_J) for the joint's unit row:
//   lower side: dist = L - lo, row +dL/dq;   upper side: dist = hi - L, row -dL/dq;   active when dist <= 0
// (no tendon margin is modelled, as MuJoCo's default margin 0). lcp, cone and ccp take these rows after the joint
// limits (assemble.c: lambda >= 0, no friction, the same position correction on dist); penalty pushes with the
// limit spring f = k_c (-dist) - d_c (row . v) > 0 along the row (phys_penalty_tendon_limits). <flag limit=
// "disable"> turns them off with the joint limits.
// Tendon frictionloss (MJCF frictionloss on a tendon, F > 0): one row per tendon, its moment dL/dq, in the
// frictionloss rows (frictionloss.c: |lambda| <= F dt, maximal dissipation); penalty's regularized friction
// -F u / max(|u|, vslip) on its rate u = dL/dq . v (phys_penalty_tendon_frictionloss).
#include <math.h>
#include <string.h>

#include "contact.h"
#include "dyn.h"

// 1 if spring s has limit rows: a limited tendon, limits enabled
static int limited_tendon(const physModel* m, int s) {
  return !(m->opt.disableflags & PHYS_DSBL_LIMIT) && m->spring_limited[s];
}

// distance of tendon s of length L to its lower (side 0: L - lo) or upper (side 1: hi - L) limit
static double tendon_dist(const physModel* m, int s, int side, double L) {
  return side == 0 ? L - m->spring_range[2 * s] : m->spring_range[2 * s + 1] - L;
}

int phys_tendon_limits_active(const physModel* m, const physData* d, int* ten, int* side) {
  int n = 0;
  for (int s = 0; s < m->nspring; s++) {
    if (!limited_tendon(m, s)) continue;
    double L = phys_spring_eval(m, d, s, NULL, 0, NULL);
    for (int k = 0; k < 2; k++) {
      if (tendon_dist(m, s, k, L) > 0) continue;
      if (ten) ten[n] = s, side[n] = k;
      n++;
    }
  }
  return n;
}

double phys_tendon_limit_row(const physModel* m, const physData* d, int s, int side, double* row) {
  memset(row, 0, sizeof(double) * (size_t)m->nv);
  // tension -1: qfrc += J' dL/dx over the path's points (a fixed tendon: += coef at its dofs), i.e. dL/dq
  double L = phys_spring_eval(m, d, s, NULL, -1.0, row);
  if (side == 1)
    for (int j = 0; j < m->nv; j++) row[j] = -row[j];
  return tendon_dist(m, s, side, L);
}

// a . b for n-vectors
static double dot_n(const double* a, const double* b, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}

// a force f0 + (the implicit term -A r . a, a = (v+ - v)/dt) along row r (nv): qfrc += f0 r (vnew NULL), H (nv x
// nv) += A r r', and with vnew qfrc -= A r (r . a); qfrc, H may be NULL
static void implicit_row(const physModel* m, const physData* d, const double* r, double f0, double A, double* qfrc,
                         double* H, const double* vnew) {
  int nv = m->nv;
  if (H)
    for (int i = 0; i < nv; i++)
      for (int j = 0; j < nv; j++) H[i * nv + j] += A * r[i] * r[j];
  if (qfrc && vnew) {
    double ra = 0;
    for (int i = 0; i < nv; i++) ra += r[i] * (vnew[i] - d->qvel[i]) / m->opt.timestep;
    for (int i = 0; i < nv; i++) qfrc[i] -= A * ra * r[i];
  } else if (qfrc) {
    for (int i = 0; i < nv; i++) qfrc[i] += f0 * r[i];
  }
}

// Penalty's limit spring along row r of an active tendon limit, implicit as the joint limits' (penalty.c):
// f = -k_c dist - d_c (r . v) pushes when > 0; with dist+ = dist + dt r . v+ the force at the step's end is
// f+ = f - dt k_c (r . v) - (dt d_c + dt^2 k_c) r . a, a = (v+ - v)/dt. So the step adds (f - dt k_c r . v) r to
// the right-hand side (qfrc not NULL, vnew NULL), (dt d_c + dt^2 k_c) r r' to its matrix H (nv x nv, both
// triangles; H not NULL), and, once v+ is known (vnew not NULL), qfrc -= (dt d_c + dt^2 k_c) r (r . a): qfrc then
// holds f+ r. Returns the number of pushing rows (every pointer NULL: counts only). Scratch from d's arena.
int phys_penalty_tendon_limits(const physModel* m, physData* d, double* qfrc, double* H, const double* vnew) {
  int nt = phys_tendon_limits_active(m, d, NULL, NULL), nv = m->nv, n = 0;
  if (nt == 0) return 0;
  double k = m->opt.penalty_stiffness, c = m->opt.penalty_damping, dt = m->opt.timestep, A = dt * c + dt * dt * k;
  size_t mark = phys_stack_mark(d);
  int* ten = (int*)phys_stack_alloc(d, (size_t)nt);   // nt ints fit in as many doubles
  int* side = (int*)phys_stack_alloc(d, (size_t)nt);
  double* r = phys_stack_alloc(d, (size_t)nv);
  phys_tendon_limits_active(m, d, ten, side);
  for (int l = 0; l < nt; l++) {
    double dist = phys_tendon_limit_row(m, d, ten[l], side[l], r), rv = dot_n(r, d->qvel, nv);
    double f = -k * dist - c * rv;
    if (!(f > 0)) continue;
    n++;
    implicit_row(m, d, r, f - dt * k * rv, A, qfrc, H, vnew);
  }
  phys_stack_free(d, mark);
  return n;
}

int phys_tendon_frictionloss_rows(const physModel* m, const physData* d, double* R, double* F) {
  int n = 0;
  for (int s = 0; s < m->nspring; s++) {
    if (!(m->spring_frictionloss[s] > 0)) continue;
    if (R) phys_tendon_limit_row(m, d, s, 0, R + (size_t)n * m->nv);   // (side 0: +dL/dq)
    if (F) F[n] = m->spring_frictionloss[s];
    n++;
  }
  return n;
}

// Penalty's tendon frictionloss, the dofs' regularized rule (penalty.c) along the moment r: with the rate
// u = r . v and C = F / max(|u|, vslip) the force -C u+ at the step's end is -C u - dt C r . a, so the step adds
// -C u r to the right-hand side, dt C r r' to H, and once v+ is known qfrc -= dt C r (r . a) (implicit_row)
int phys_penalty_tendon_frictionloss(const physModel* m, physData* d, double* qfrc, double* H, const double* vnew) {
  int nt = phys_tendon_frictionloss_rows(m, d, NULL, NULL), nv = m->nv;
  if (nt == 0) return 0;
  double dt = m->opt.timestep, vs = m->opt.penalty_vslip;
  size_t mark = phys_stack_mark(d);
  double* R = phys_stack_alloc(d, (size_t)nt * nv);
  double* F = phys_stack_alloc(d, (size_t)nt);
  phys_tendon_frictionloss_rows(m, d, R, F);
  for (int l = 0; l < nt; l++) {
    const double* r = R + (size_t)l * nv;
    double u = dot_n(r, d->qvel, nv), C = F[l] / fmax(fabs(u), vs);
    implicit_row(m, d, r, -C * u, dt * C, qfrc, H, vnew);
  }
  phys_stack_free(d, mark);
  return nt;
}
