// cmd_gradcheck.c - `physid gradcheck`: the analytic step Jacobians A = dx+/dx, B = dx+/du and
// P = dx+/dtheta against central differences of the same engine at N states, one table row per block.
//
// States. With contacts on, every state is in contact: a random drop from keyframe 0 (else qpos0) with
// random velocities (uniform in [-0.5, 0.5]) and random controls each step is simulated for a random
// number of steps (up to GC_HORIZON seconds), and the first state after it whose step has contacts is taken,
// warm starts included. A model that never touches anything falls back to random contact-free states (and
// says so). With --no-contact, random states: hinge/slide in the inner 90% of their ranges (or qpos0 +- 1),
// unit quaternions, free positions in [-1, 1]^3, qvel in [-1, 1], ctrl in the inner 80% of ctrlrange.
// Joint limits are disabled. A state in contact on a kink of the step (at_kink: a body at rest on the position
// correction's threshold, a flat box on a plane, a contact at the switch of its normal bias), where the
// analytic Jacobian is one side's, is replaced by another (counted, printed): the check is about derivatives
// where there are some. cone and ccp run with the solver tightened (tighten_solver: tolerance 1e-12, 1000
// iterations at least; printed), so that the differences are of converged solves and not of 1e-10 residuals.
//
// Reference. Smooth states (tolerance 1e-6, issue 4): A and B by the four-point central stencil at
// h = 1e-3 built from the finite-difference twin at h and 2h, (4 J_h - J_2h) / 3 (truncation h^4 |f^(5)| / 30,
// rounding about 1.5 eps |f| / h); P by the six-point stencil at 1e-2 of each parameter's scale
// (tests/grad/test_param_deriv.c explains the choice). In contact (tolerance 1e-4, issue 4): the same
// stencils at h = 1e-5 (A, B) and 1e-5 of the scale (P), so that the perturbed steps keep the contacts'
// modes. Where the two central differences at h and 2h of an input column disagree by more than 1e-5
// relative, the step is at a mode switch along that input (a contact that slides, sticks or lifts off on one
// side only: a box resting on four corners tilted either way), it has no derivative there, and the column
// is left out of the comparison (counted and printed); so is a parameter column whose one-sided quotients at
// h differ (a kink at theta itself, e.g. the max rule of a pair's friction at a tie). A state in contact
// whose derivatives the library
// refuses (PHYS_ERR_ARG: a geom pair or a contact model without derivatives) is replaced by another
// (counted, printed); GC_REFUSED refusals in a row end the check. So is a state where a perturbed step
// raised a warning (an iterative solver stopping short of its tolerance), whose differences are unreliable.
// Each entry's error is taken relative to max(|reference|, 1e-4 scale), scale = max(largest entry of the
// block, the scale of x+ itself: max(1, |q|, |v|, dt |a|)), since the rounding noise of a difference
// quotient is a fraction of |x+|, not of each entry (P columns differenced with a step h_j below 1e-3 of
// their scale hold fscale h / h_j, h the step of A and B, as in tests/grad/test_param_deriv.c).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_grad.h"
#include "equality.h"
#include "grad.h"
#include "rng.h"
#include "rot.h"
#include "step_contact_deriv.h"

#define GC_H 1e-3           // smooth states: finite-difference step of A, B (rad, m, rad/s, m/s, control units)
#define GC_HP 1e-2          // smooth states: relative step of the parameters (six-point stencil)
#define GC_H_CONTACT 1e-5   // in contact: step of A, B and relative step of the parameters (four-point)
#define GC_TOL 1e-6         // relative tolerance in smooth states
#define GC_H_PBD 3e-3       // pbd (issue 17), contact-free: step of A, B (the step's rounding, amplified by 1/substep)
#define GC_TOL_PBD 1e-4     // pbd: relative tolerance (the differences' noise; tests/grad/test_pbd_deriv.c)
#define GC_TOL_CONTACT 1e-4 // relative tolerance in contact
#define GC_SWITCH 1e-5      // in contact: J_h and J_2h further apart than this: a mode switch nearby
#define GC_KINK 1e-3        // in contact: one-sided quotients of a parameter further apart: a kink at theta
#define GC_FLOOR 1e-4       // entries are compared relative to max(|entry|, GC_FLOOR * scale)
#define GC_TRIES 400        // draws per state (contact-free states, states away from mode switches and kinks:
                            // a box sliding flat sits on the correction's kink in most of its states)
#define GC_REFUSED 10       // in contact: consecutive states whose derivatives the library refuses, at most
#define GC_HORIZON 2.0      // seconds of a drop
#define GC_KINK_STEP 1e-7   // in contact: a state's Jacobian is compared with those this far away (at_kink)
#define GC_SOLVER_TOL 1e-12 // cone and ccp: solver_tolerance of the check (at most; the default is 1e-10)
#define GC_SOLVER_ITER 1000 // cone and ccp: solver_iterations of the check (at least; the default is 100)
#define GC_MAXDROP 20000    // steps of a drop at most

//---------------------------------------------------------------------------------------------------------
// blocks

// one compared block: rows r0..r0+nr of the matrix with ld columns; columns c0..c0+nc, or for P the columns
// of the parameter entries of one kind
typedef struct gcBlock_ {
  char name[40];
  int mat;                  // 0 A, 1 B, 2 P
  int r0, nr, c0, nc;
  int kind;                 // P: the parameter kind
  double maxabs, maxrel;    // worst over the states
} gcBlock;

// the blocks --wrt asks for: dq+/dq, dq+/dv, dv+/dq, dv+/dv (state), dq+/du, dv+/du (ctrl), and dq+/dKIND,
// dv+/dKIND for every parameter kind in the table (params); with activations (na > 0, x = (q, v, act)) also the
// act rows and columns: dq+/dact .. dact+/dact, dact+/du, dact+/dKIND. Returns the count (at most GC_MAXBLK)
#define GC_MAXBLK (12 + 3 * PHYS_NPARKIND)
static int make_blocks(gcBlock* blk, const physModel* m, const gradWrt* w) {
  static const char* const part[3] = {"q", "v", "act"};
  int nv = m->nv, na = m->na, n = 0, ngrp = na > 0 ? 3 : 2;
  const int r0[3] = {0, nv, 2 * nv}, len[3] = {nv, nv, na};
  for (int ro = 0; ro < ngrp && w->state; ro++)   // A: rows (q+, v+, act+) x columns (q, v, act)
    for (int co = 0; co < ngrp; co++) {
      gcBlock b = {"", 0, r0[ro], len[ro], r0[co], len[co], -1, 0, 0};
      snprintf(b.name, sizeof b.name, "d%s+/d%s", part[ro], part[co]);
      blk[n++] = b;
    }
  for (int ro = 0; ro < ngrp && w->ctrl; ro++) {
    gcBlock b = {"", 1, r0[ro], len[ro], 0, m->nu, -1, 0, 0};
    snprintf(b.name, sizeof b.name, "d%s+/du", part[ro]);
    blk[n++] = b;
  }
  for (int kind = 0; kind < PHYS_NPARKIND; kind++) {
    const char* spec = NULL;
    for (int e = 0; e < w->table.n && !spec; e++)
      if (w->table.param[e].kind == kind) spec = w->table.param[e].name;
    if (!spec) continue;
    // the kind's name is the spec's prefix (spring kinds print as damping/stiffness of a spring)
    char kname[24];
    size_t kl = strcspn(spec, ":");
    snprintf(kname, sizeof kname, "%.*s%s", (int)(kl < 16 ? kl : 16), spec,
             kind == PHYS_PAR_SPRING_STIFFNESS || kind == PHYS_PAR_SPRING_DAMPING ? "(sp)" : "");
    for (int r = 0; r < ngrp; r++) {
      gcBlock b = {"", 2, r0[r], len[r], 0, 0, kind, 0, 0};
      snprintf(b.name, sizeof b.name, "d%s+/d%s", part[r], kname);
      blk[n++] = b;
    }
  }
  return n;
}

// 1 if column j of the matrix of block b belongs to it
static int in_block(const gcBlock* b, const physParamTable* t, int j) {
  if (b->mat < 2) return j >= b->c0 && j < b->c0 + b->nc;
  for (int e = 0; e < t->n; e++)
    if (j >= t->param[e].adr && j < t->param[e].adr + t->param[e].size) return t->param[e].kind == b->kind;
  return 0;
}

// fold one state's comparison of block b (analytic X against reference Y, ld columns; columns j with
// mask[j] == 0 left out) into its worst errors: abs = |X - Y|,
// rel = abs / max(|Y|, GC_FLOOR * max(max |Y| of the block, fscale * cscale[j]))
static void compare_block(gcBlock* b, const physParamTable* t, const double* X, const double* Y, int ld,
                          double fscale, const double* cscale, const double* mask) {
  double bmax = 0;
  for (int i = 0; i < b->nr; i++)
    for (int j = 0; j < ld; j++)
      if (in_block(b, t, j) && mask[j] != 0) bmax = fmax(bmax, fabs(Y[(size_t)(b->r0 + i) * ld + j]));
  for (int i = 0; i < b->nr; i++) {
    for (int j = 0; j < ld; j++) {
      if (!in_block(b, t, j) || mask[j] == 0) continue;
      size_t k = (size_t)(b->r0 + i) * ld + j;
      double scale = fmax(bmax, fscale * (cscale ? cscale[j] : 1));
      double e = fabs(X[k] - Y[k]), s = fmax(fmax(fabs(Y[k]), GC_FLOOR * scale), 1e-300);
      if (isnan(e)) e = INFINITY;   // a non-finite entry fails
      b->maxabs = fmax(b->maxabs, e);
      b->maxrel = fmax(b->maxrel, e / s);
    }
  }
}

//---------------------------------------------------------------------------------------------------------
// states

// a uniformly random unit quaternion: uniform in the unit 4-ball by rejection, normalized
static void random_quat(double* q, physRng* r) {
  double n2 = 0;
  do {
    n2 = 0;
    for (int i = 0; i < 4; i++) {
      q[i] = phys_rng_range(r, -1, 1);
      n2 += q[i] * q[i];
    }
  } while (n2 > 1 || n2 < 1e-6);
  double s = 1 / sqrt(n2);
  for (int i = 0; i < 4; i++) q[i] *= s;
}

// controls uniform in the inner 80% of ctrlrange (or [-1, 1])
static void random_ctrl(const physModel* m, physData* d, physRng* r) {
  for (int i = 0; i < m->nu; i++) {
    const double* rg = m->actuator_ctrlrange + 2 * i;
    d->ctrl[i] = m->actuator_ctrllimited[i] ? phys_rng_range(r, 0.9 * rg[0] + 0.1 * rg[1], 0.1 * rg[0] + 0.9 * rg[1])
                                            : phys_rng_range(r, -1, 1);
  }
}

// ball and free joints near qpos0 (a model with equality constraints, which qpos0 satisfies): free positions
// qpos0 + [-0.1, 0.1]^3, orientations qpos0's turned by a rotation vector in [-0.2, 0.2]^3 (body frame)
static void near_rotations(const physModel* m, physData* d, physRng* r) {
  for (int j = 0; j < m->njnt; j++) {
    int type = m->jnt_type[j], qa = m->jnt_qposadr[j];
    if (type != PHYS_JNT_FREE && type != PHYS_JNT_BALL) continue;
    double* q = d->qpos + qa;
    memcpy(q, m->qpos0 + qa, sizeof(double) * (type == PHYS_JNT_FREE ? 7 : 4));
    if (type == PHYS_JNT_FREE)
      for (int i = 0; i < 3; i++) q[i] += phys_rng_range(r, -0.1, 0.1);
    double w[3] = {phys_rng_range(r, -0.2, 0.2), phys_rng_range(r, -0.2, 0.2), phys_rng_range(r, -0.2, 0.2)};
    phys_quat_integrate(q + (type == PHYS_JNT_FREE ? 3 : 0), w, 1);
  }
}

// random state: hinge/slide within the inner 90% of their ranges (or qpos0 +- 1), unit quaternions, free
// positions in [-1, 1]^3 (with active equality constraints: near_rotations), qvel in [-1, 1], random controls
static void random_state(const physModel* m, physData* d, physRng* r) {
  phys_reset_data(m, d);
  for (int j = 0; j < m->njnt; j++) {
    double* q = d->qpos + m->jnt_qposadr[j];
    const double* rg = m->jnt_range + 2 * j;
    if (m->jnt_type[j] == PHYS_JNT_FREE) {
      for (int i = 0; i < 3; i++) q[i] = phys_rng_range(r, -1, 1);
      random_quat(q + 3, r);
    } else if (m->jnt_type[j] == PHYS_JNT_BALL) {
      random_quat(q, r);
    } else if (m->jnt_limited[j]) {
      q[0] = phys_rng_range(r, rg[0] + 0.05 * (rg[1] - rg[0]), rg[1] - 0.05 * (rg[1] - rg[0]));
    } else {
      q[0] = m->qpos0[m->jnt_qposadr[j]] + phys_rng_range(r, -1, 1);
    }
  }
  if (phys_equality_rows(m) > 0) near_rotations(m, d, r);   // (after the draws above: the same stream)
  for (int i = 0; i < m->nv; i++) d->qvel[i] = phys_rng_range(r, -1, 1);
  random_ctrl(m, d, r);
  for (int a = 0; a < m->nu; a++) {   // activations: the inner 80% of actrange (or [-0.5, 0.5])
    int k = m->actuator_actadr[a];
    const double* rg = m->actuator_actrange + 2 * a;
    if (k < 0) continue;
    d->act[k] = m->actuator_actlimited[a] ? phys_rng_range(r, 0.9 * rg[0] + 0.1 * rg[1], 0.1 * rg[0] + 0.9 * rg[1])
                                          : phys_rng_range(r, -0.5, 0.5);
  }
}

// a state in contact along a random drop (see the file comment), warm starts included: 1 found, 0 the drop
// met no contact after its random start, -1 it met no contact at all
static int drop_state(const physModel* m, physData* d, physRng* r, gradSave* sv) {
  phys_reset_data(m, d);
  if (m->nkey > 0) phys_reset_keyframe(m, d, 0);
  for (int i = 0; i < m->nv; i++) d->qvel[i] += phys_rng_range(r, -0.5, 0.5);
  int horizon = (int)fmin(GC_MAXDROP, ceil(GC_HORIZON / m->opt.timestep));
  int start = (int)phys_rng_range(r, 0, 0.75 * horizon), seen = 0;
  for (int i = 0; i < horizon; i++) {
    random_ctrl(m, d, r);
    grad_save(sv, m, d);
    int nwarn = d->nwarning;
    phys_step(m, d);
    if (d->ncon > 0) seen = 1;
    if (d->ncon > 0 && i >= start && d->nwarning == nwarn) {
      grad_restore(d, m, sv);
      return 1;
    }
  }
  return seen ? 0 : -1;
}

//---------------------------------------------------------------------------------------------------------
// parameter differences

// difference step of theta_j: rel times the scale of its entry (the largest |value| among its components,
// 1 if all are zero; log-Cholesky coordinates: absolute for alpha, d_i, scaled by their row of U otherwise)
static double param_step(const physParamTable* t, const double* th, int j, double rel) {
  for (int e = 0; e < t->n; e++) {
    const physParam* p = t->param + e;
    if (j < p->adr || j >= p->adr + p->size) continue;
    if (p->kind == PHYS_PAR_INERTIA) {
      static const int row[10] = {-1, -1, -1, -1, 0, 1, 0, 0, 1, 2};
      const double* c = th + p->adr;
      int r = row[j - p->adr];
      if (r < 0) return rel;
      double n2 = r == 0 ? exp(2 * c[1]) + c[4] * c[4] + c[6] * c[6] + c[7] * c[7]
                         : (r == 1 ? exp(2 * c[2]) + c[5] * c[5] + c[8] * c[8] : exp(2 * c[3]) + c[9] * c[9]);
      return rel * sqrt(n2);
    }
    double s = 0;
    for (int i = 0; i < p->size; i++) s = fmax(s, fabs(th[p->adr + i]));
    return rel * (s > 0 ? s : 1);
  }
  return rel;
}

// x+ of one step from the saved state with theta set, as (q+ (-) q0n, v+ - v0n, act+ - a0n) in res (nx =
// 2nv + na; v0n then a0n in one array); 0 if the model refused theta or the step warned
static int param_step_at(physModel* m, physData* d, const physParamTable* t, const double* th,
                         const gradSave* sv, const double* q0n, const double* v0n, double* res) {
  if (phys_param_set(t, m, th) != PHYS_OK) return 0;
  grad_restore(d, m, sv);
  int nwarn = d->nwarning;
  phys_step(m, d);
  phys_difference_pos(m, res, 1, q0n, d->qpos);
  for (int i = 0; i < m->nv; i++) res[m->nv + i] = d->qvel[i] - v0n[i];
  for (int i = 0; i < m->na; i++) res[2 * m->nv + i] = d->act[i] - v0n[m->nv + i];
  return d->nwarning == nwarn;
}

// Pf (nx x nt) by central differences over theta: the six-point stencil at rel (contact 0) or the two
// central quotients at h and 2h (contact 1: Pf = (4 P_h - P_2h) / 3, P2 = P_2h for the mode-switch test, and
// kink[j] = 1 where the one-sided quotients f(+h)/h and -f(-h)/h differ by more than GC_KINK relative to
// max(|P_h|, GC_FLOOR fscale max(1, GC_H_CONTACT / h_j)), the comparison's floor: the step has a kink at
// theta itself, e.g. the friction of a pair whose two geoms have the same coefficient (the max rule), where
// central differences give the mean of the two sides whatever h). hstep[j] receives h_j. The model and the
// state are restored. 0 if a step failed.
static int param_fd(physModel* m, physData* d, const physParamTable* t, int contact, double fscale, double* Pf,
                    double* P2, double* kink, double* hstep, gradSave* sv, double* work) {
  int nv = m->nv, n2 = 2 * nv + m->na, nt = t->ntheta, ok = 1;
  double *th0 = work, *th = th0 + nt, *q0n = th + nt, *v0n = q0n + m->nq, *r = v0n + nv + m->na;
  grad_save(sv, m, d);
  phys_param_get(t, m, th0);
  phys_step(m, d);
  memcpy(q0n, d->qpos, sizeof(double) * (size_t)m->nq);
  memcpy(v0n, d->qvel, sizeof(double) * (size_t)nv);
  memcpy(v0n + nv, d->act, sizeof(double) * (size_t)m->na);
  static const double off[6] = {1, -1, 2, -2, 3, -3}, w6[3] = {45, -9, 1};
  int npt = contact ? 4 : 6;
  for (int j = 0; j < nt && ok; j++) {
    double h = param_step(t, th0, j, contact ? GC_H_CONTACT : GC_HP);
    hstep[j] = h;
    for (int k = 0; k < npt && ok; k++) {
      memcpy(th, th0, sizeof(double) * (size_t)nt);
      th[j] += off[k] * h;
      ok = param_step_at(m, d, t, th, sv, q0n, v0n, r + (size_t)k * n2);
    }
    double floor = GC_FLOOR * fscale * fmax(1, GC_H_CONTACT / h);
    kink[j] = 0;
    for (int i = 0; i < n2 && ok; i++) {
      double *f = r + i, acc = 0;
      if (contact) {
        double fwd = f[0] / h, bwd = -f[n2] / h, mid = (fwd + bwd) / 2;
        if (!(fabs(fwd - bwd) <= GC_KINK * fmax(fabs(mid), floor))) kink[j] = 1;
        double p1 = (f[0] - f[n2]) / (2 * h), p2 = (f[2 * n2] - f[3 * n2]) / (4 * h);
        Pf[(size_t)i * nt + j] = (4 * p1 - p2) / 3;
        P2[(size_t)i * nt + j] = p2;
      } else {
        for (int k = 0; k < 3; k++) acc += w6[k] * (f[(size_t)2 * k * n2] - f[(size_t)(2 * k + 1) * n2]);
        Pf[(size_t)i * nt + j] = acc / (60 * h);
      }
    }
  }
  if (phys_param_set(t, m, th0) != PHYS_OK) ok = 0;
  grad_restore(d, m, sv);
  return ok;
}

//---------------------------------------------------------------------------------------------------------
// the check

// scratch of gradcheck: analytic A, B, P; references at h and 2h; per-column scales of P; saved states
typedef struct gcWork_ {
  double *A, *B, *P, *Ah, *Bh, *Ph, *A2, *B2, *P2, *hstep, *cscale, *pwork;
  double *maskA, *maskB, *maskP;   // 1: the column is compared, 0: at a mode switch
  double* kinkP;                   // 1: the step has a kink at theta_j (param_fd)
  gradSave sv, sv2;
} gcWork;

// largest |x_i| (n values), 0 if n = 0
static double maxabs(const double* x, size_t n) {
  double s = 0;
  for (size_t i = 0; i < n; i++) s = fmax(s, fabs(x[i]));
  return s;
}

// mask[j] = 1 if in column j (rows x cols) the quotients at h (X, already combined to the four-point value
// R = (4 X - Y) / 3, so X = (3 R + Y) / 4) and at 2h (Y) agree to GC_SWITCH relative to
// max(|Y|, GC_FLOOR fscale), else 0 (a mode switch along input j); returns the number of 0 columns
static int switch_columns(double* mask, const double* R, const double* Y, int rows, int cols, double fscale) {
  int n = 0;
  for (int j = 0; j < cols; j++) {
    mask[j] = 1;
    for (int i = 0; i < rows && mask[j] != 0; i++) {
      size_t k = (size_t)i * cols + j;
      double x = (3 * R[k] + Y[k]) / 4;
      if (!(fabs(x - Y[k]) <= GC_SWITCH * fmax(fabs(Y[k]), GC_FLOOR * fscale))) mask[j] = 0;
    }
    n += mask[j] == 0;
  }
  return n;
}

// the analytic Jacobians at d's state (the parts w asks for)
static physStatus analytic(const physModel* m, physData* d, const gradWrt* w, gcWork* k) {
  physStatus st = PHYS_OK;
  if (w->state || w->ctrl) st = phys_step_jacobian(m, d, w->state ? k->A : NULL, w->ctrl ? k->B : NULL);
  if (st == PHYS_OK && w->table.ntheta > 0) st = phys_step_param_jacobian(m, d, &w->table, k->P);
  return st;
}

// the references at d's state into Ah, Bh, Ph (A2, B2, P2: at 2h); 0 if a perturbed step failed or warned
// (message printed unless quiet)
static int reference(physModel* m, physData* d, const gradWrt* w, gcWork* k, int contact, int quiet,
                     double fscale, const char* where) {
  int n2 = 2 * m->nv + m->na, nu = m->nu;
  double h = contact ? GC_H_CONTACT : (m->opt.integrator == PHYS_INT_PBD ? GC_H_PBD : GC_H);
  if ((w->state || w->ctrl) && (phys_step_jacobian_fd(m, d, h, k->Ah, k->Bh) != PHYS_OK ||
                                phys_step_jacobian_fd(m, d, 2 * h, k->A2, k->B2) != PHYS_OK)) {
    if (!quiet) cli_error("%s: a perturbed step failed: %s", where, d->lastwarning);
    return 0;
  }
  for (size_t i = 0; i < (size_t)n2 * n2; i++) k->Ah[i] = (4 * k->Ah[i] - k->A2[i]) / 3;
  for (size_t i = 0; i < (size_t)n2 * nu; i++) k->Bh[i] = (4 * k->Bh[i] - k->B2[i]) / 3;
  if (w->table.ntheta > 0 &&
      !param_fd(m, d, &w->table, contact, fscale, k->Ph, k->P2, k->kinkP, k->hstep, &k->sv2, k->pwork)) {
    if (!quiet) cli_error("%s: a step with perturbed parameters failed or a parameter left its domain", where);
    return 0;
  }
  return 1;
}

// counts of one run
typedef struct gcCount_ {
  int contact;              // states are drawn in contact
  int ncol, nskip;          // input columns compared and left out at a mode switch, over the states
  int nrefused;             // states in contact replaced because the library refused their derivatives
  int nwarned;              // states in contact replaced because a perturbed step warned
  int nkink;                // states in contact replaced because they sit on a kink of the step
  double tol0;              // the model's solver tolerance and iterations (the check runs cone and ccp tighter)
  int iter0;
  int ncon;                 // contacts summed over the compared states
} gcCount;

// 1 if d's state (in contact) sits on a kink of the step, where it has no derivative and the analytic Jacobian
// is one side's (README, Derivatives), which along a direction that moves rows to different sides is no
// difference quotient at all: the library's count of rows on the position correction's kink (a body at
// rest: phys_constrained_step_kinks), or else the Jacobian A itself changing within GC_KINK_STEP: A at the
// state and at the state moved by +-u, u random with every coordinate up to GC_KINK_STEP (both signs: a row
// on a kink changes side along u or -u), differ by more than GC_KINK of max(1, |A|) (smooth: by about
// 1e-7 |dA/dx|): a contact exactly at the switch of its normal bias (ccp's envelope lands a body at
// distance 0: a corner rising takes the gap branch, one sinking the touching branch; the resting cube tilted
// either way loses half its tilt in a step, the touching branch keeps it all), a contact at the verge of
// sticking. Scratch: k's A2, Ah and pwork; the state is restored.
static int at_kink(const physModel* m, physData* d, physRng* r, gcWork* k) {
  int nv = m->nv, nx = 2 * nv + m->na;
  double *u = k->pwork, *du = u + 2 * nv;
  if (phys_constrained_step_kinks(m, d) > 0) return 1;
  grad_save(&k->sv2, m, d);
  int kink = phys_step_jacobian(m, d, k->A2, NULL) != PHYS_OK;
  double scale = fmax(1, maxabs(k->A2, (size_t)nx * nx));
  for (int i = 0; i < 2 * nv; i++) u[i] = phys_rng_range(r, -1, 1) * GC_KINK_STEP;
  for (int sign = -1; sign <= 1 && !kink; sign += 2) {
    for (int i = 0; i < nv; i++) du[i] = sign * u[i];
    phys_integrate_pos(m, d->qpos, du, 1);
    for (int i = 0; i < nv; i++) d->qvel[i] += sign * u[nv + i];
    kink = phys_step_jacobian(m, d, k->Ah, NULL) != PHYS_OK;
    grad_restore(d, m, &k->sv2);
    for (size_t i = 0; !kink && i < (size_t)nx * nx; i++) kink = !(fabs(k->Ah[i] - k->A2[i]) <= GC_KINK * scale);
  }
  return kink;
}

// draw one usable state (in contact, or random contact-free), take the analytic Jacobians and the reference;
// 1 ready, 0 failed (message printed)
static int draw(physModel* m, physData* d, physRng* r, const gradWrt* w, gcWork* k, gcCount* c,
                double* fscale, const char* where) {
  int n2 = 2 * m->nv + m->na, nu = m->nu, nt = w->table.ntheta, refused = 0;
  for (int t = 0; t < GC_TRIES; t++) {
    if (c->contact) {
      int got = drop_state(m, d, r, &k->sv);
      if (got < 0) {
        printf("note: %s: no contact in a %g s drop: random contact-free states instead\n", m->filename, GC_HORIZON);
        c->contact = 0;
        t = -1;
        continue;
      }
      if (got == 0) continue;
    } else {
      random_state(m, d, r);
    }
    physStatus st = analytic(m, d, w, k);
    if (st == PHYS_ERR_ARG && !c->contact) continue;   // a random state with contacts: draw again
    if (st == PHYS_ERR_ARG && ++refused < GC_REFUSED) {  // e.g. a geom pair without derivatives: another
      c->nrefused++;
      continue;
    }
    if (st != PHYS_OK) {
      grad_explain_status(m, d, st, where);
      return 0;
    }
    // rounding of x+ scales with |q|, |v| and the velocity change dt |a| (d->qacc: the step's acceleration)
    *fscale = fmax(fmax(1, maxabs(d->qpos, (size_t)m->nq)), maxabs(d->qvel, (size_t)m->nv));
    *fscale = fmax(*fscale, m->opt.timestep * maxabs(d->qacc, (size_t)m->nv));
    *fscale = fmax(*fscale, maxabs(d->act, (size_t)m->na));
    if (c->contact && at_kink(m, d, r, k)) {   // no derivative there: another state
      c->nkink++;
      continue;
    }
    if (!reference(m, d, w, k, c->contact, c->contact, *fscale, where)) {
      if (!c->contact) return 0;
      c->nwarned++;   // in contact: a perturbed step warned (a solver short of its tolerance): another state
      continue;
    }
    int ncol = (w->state ? n2 : 0) + (w->ctrl ? nu : 0) + nt;
    for (int j = 0; j < n2; j++) k->maskA[j] = 1;
    for (int j = 0; j < nu; j++) k->maskB[j] = 1;
    for (int j = 0; j < nt; j++) k->maskP[j] = 1;
    c->ncol += ncol;
    if (c->contact) {
      if (w->state) c->nskip += switch_columns(k->maskA, k->Ah, k->A2, n2, n2, *fscale);
      if (w->ctrl) c->nskip += switch_columns(k->maskB, k->Bh, k->B2, n2, nu, *fscale);
      c->nskip += switch_columns(k->maskP, k->Ph, k->P2, n2, nt, *fscale);
      for (int j = 0; j < nt; j++)
        if (k->maskP[j] != 0 && k->kinkP[j] != 0) k->maskP[j] = 0, c->nskip++;
      grad_save(&k->sv, m, d);
      phys_step(m, d);
      c->ncon += d->ncon;
      grad_restore(d, m, &k->sv);
    }
    return 1;
  }
  cli_error("%s: no usable state in %d draws (%s)", where, GC_TRIES,
            c->contact ? "the drops met no contact after their random start, or every state was on a kink of the "
                         "step or had a perturbed step that warned" : "every random state had contacts; "
            "try --no-contact");
  return 0;
}

// one state: analytic against reference in every block; 0 (message printed) if no usable state was found
static int check_state(gcBlock* blk, int nblk, physModel* m, physData* d, physRng* r, const gradWrt* w,
                       gcWork* k, gcCount* c, const char* where) {
  int n2 = 2 * m->nv + m->na, nt = w->table.ntheta;
  double fscale;
  if (!draw(m, d, r, w, k, c, &fscale, where)) return 0;
  // a P column differenced with a step h_j below A's and B's h holds fscale h / h_j (rounding eps |x| / h_j)
  for (int j = 0; j < nt; j++) k->cscale[j] = fmax(1, (c->contact ? GC_H_CONTACT : GC_H) / k->hstep[j]);
  for (int b = 0; b < nblk; b++) {
    if (blk[b].mat == 0) compare_block(blk + b, &w->table, k->A, k->Ah, n2, fscale, NULL, k->maskA);
    else if (blk[b].mat == 1) compare_block(blk + b, &w->table, k->B, k->Bh, m->nu, fscale, NULL, k->maskB);
    else compare_block(blk + b, &w->table, k->P, k->Ph, nt, fscale, k->cscale, k->maskP);
  }
  return 1;
}

// 1 if m's contact model solves iteratively (cone, ccp: stopped at opt.solver_tolerance)
static int iterative(const physModel* m) {
  return m->opt.contact == PHYS_CONTACT_CONE || m->opt.contact == PHYS_CONTACT_CCP;
}

// The check differences converged solves: a solve stopped at solver_tolerance (1e-10 by default) leaves that
// residual in x+, and a difference at h = 1e-5 turns it into 1e-5 of noise in the reference, the order of the
// check's own tolerance (1e-4 relative, with entries held to 1e-4 of their block). cone and ccp run at
// GC_SOLVER_TOL (or the model's, if tighter) and at least GC_SOLVER_ITER iterations: the drops, the analytic
// Jacobians and every perturbed step alike
static void tighten_solver(physModel* m) {
  if (!iterative(m)) return;
  m->opt.solver_tolerance = fmin(m->opt.solver_tolerance, GC_SOLVER_TOL);
  if (m->opt.solver_iterations < GC_SOLVER_ITER) m->opt.solver_iterations = GC_SOLVER_ITER;
}

// print the table; returns 1 if every block passes
static int print_table(const gcBlock* blk, int nblk, const physModel* m, const gradArgs* a, const gradWrt* w,
                       const gcCount* c) {
  int pbd = m->opt.integrator == PHYS_INT_PBD;
  double tol = c->contact ? GC_TOL_CONTACT : (pbd ? GC_TOL_PBD : GC_TOL);
  char nas[64] = "";
  if (m->na > 0) snprintf(nas, sizeof nas, "na %d (x = q, v, act), ", m->na);
  printf("gradcheck %s: nv %d, nu %d, %sntheta %d, dt %g, %d state%s %s, seed %d\n", a->model, m->nv, m->nu, nas,
         w->table.ntheta, m->opt.timestep, a->states, a->states == 1 ? "" : "s",
         c->contact ? "in contact" : "contact-free", a->seed);
  if (c->contact)
    printf("contact model %s, %d contacts in all; states replaced: %d refused by the library, %d with a "
           "perturbed step that warned, %d on a kink of the step; %d of %d input columns left out at a mode "
           "switch; differences at h = %g\n", phys_contact_name(m->opt.contact), c->ncon, c->nrefused, c->nwarned,
           c->nkink, c->nskip, c->ncol, GC_H_CONTACT);
  else
    printf("four-point central differences at h = %g (parameters: six-point at %g of their scale)\n",
           pbd ? GC_H_PBD : GC_H, GC_HP);
  if (c->contact && iterative(m))
    printf("solver tightened for the check: tolerance %g, %d iterations (the model's: %g, %d), so that the "
           "differences are of converged solves\n", m->opt.solver_tolerance, m->opt.solver_iterations, c->tol0,
           c->iter0);
  printf("%-18s %13s %13s %10s  %s\n", "block", "max abs err", "max rel err", "tolerance", "result");
  int npass = 0;
  for (int k = 0; k < nblk; k++) {
    int pass = blk[k].maxrel <= tol;
    npass += pass;
    printf("%-18s %13.3e %13.3e %10.0e  %s\n", blk[k].name, blk[k].maxabs, blk[k].maxrel, tol,
           pass ? "PASS" : "FAIL");
  }
  printf("%d of %d blocks pass\n", npass, nblk);
  return npass == nblk;
}

// allocate the scratch; 0 if out of memory
static int work_alloc(gcWork* k, const physModel* m, int nt) {
  size_t n2 = 2 * (size_t)m->nv + (size_t)m->na, na = n2 * n2 + 1, nb = n2 * (size_t)m->nu + 1;
  size_t np = n2 * (size_t)nt + 1, npw = 2 * (size_t)nt + (size_t)m->nq + n2 + 6 * n2 + 1;
  memset(k, 0, sizeof *k);
  double* buf = malloc(sizeof(double) * (3 * (na + nb + np) + 4 * ((size_t)nt + 1) + n2 + m->nu + 2 + npw));
  if (!buf) return 0;
  k->A = buf, k->Ah = k->A + na, k->A2 = k->Ah + na;
  k->B = k->A2 + na, k->Bh = k->B + nb, k->B2 = k->Bh + nb;
  k->P = k->B2 + nb, k->Ph = k->P + np, k->P2 = k->Ph + np;
  k->hstep = k->P2 + np, k->cscale = k->hstep + nt + 1, k->maskP = k->cscale + nt + 1;
  k->maskA = k->maskP + nt + 1, k->maskB = k->maskA + n2 + 1, k->kinkP = k->maskB + m->nu + 1;
  k->pwork = k->kinkP + nt + 1;
  return grad_save_alloc(&k->sv, m) && grad_save_alloc(&k->sv2, m);
}

// release the scratch
static void work_free(gcWork* k) {
  free(k->A);
  grad_save_free(&k->sv);
  grad_save_free(&k->sv2);
}

// every state, then the table
static int gradcheck(physModel* m, physData* d, const gradArgs* a, const gradWrt* w) {
  gcWork k;
  if (!work_alloc(&k, m, w->table.ntheta)) {
    work_free(&k);
    cli_error("%s: out of memory", a->model);
    return CLI_EXIT_INPUT;
  }
  // the model as the table writes it (inertia through the eigen-decomposition), so that every perturbed step
  // runs the same model as the analytic Jacobians
  if (w->table.ntheta > 0) {
    phys_param_get(&w->table, m, k.pwork);
    phys_param_set(&w->table, m, k.pwork);
  }
  gcBlock blk[GC_MAXBLK];
  int nblk = make_blocks(blk, m, w), ok = 1;
  gcCount c = {.contact = !(m->opt.disableflags & PHYS_DSBL_CONTACT), .tol0 = m->opt.solver_tolerance,
               .iter0 = m->opt.solver_iterations};
  tighten_solver(m);
  physRng r;
  phys_rng_seed(&r, (uint64_t)a->seed);
  char where[512];
  for (int s = 0; s < a->states && ok; s++) {
    snprintf(where, sizeof where, "%s: state %d", a->model, s);
    ok = check_state(blk, nblk, m, d, &r, w, &k, &c, where);
  }
  work_free(&k);
  if (!ok) return CLI_EXIT_INPUT;
  return print_table(blk, nblk, m, a, w, &c) ? CLI_EXIT_OK : CLI_EXIT_INPUT;
}

// physid gradcheck
int cli_gradcheck(int argc, char** argv) {
  gradArgs a = {0};
  a.states = 5;
  a.contact = -1;
  const argOption opt[] = {
      {"--states", ARG_INT, &a.states, "N", "number of states (default 5)", 1, 100000, 0},
      {"--seed", ARG_INT, &a.seed, "S", "seed of the states (default 0)", 0, 2147483647, 0},
      {"--wrt", ARG_STRING, &a.wrt, "LIST",
       "blocks, comma-separated: state, ctrl, params, param:KIND:NAME (default state,ctrl)", 0, 0, 0},
      {"--contact", ARG_CHOICE, &a.contact, "lcp|cone|ccp|penalty",
       "contact model (default: the model's physid:contact, else lcp)", 0, 0, 0},
      {"--dt", ARG_DOUBLE, &a.dt, "DT", "timestep in seconds (default: the model's)", 1e-9, 1, 0},
      {"--no-contact", ARG_FLAG, &a.nocontact, "", "disable contacts: random contact-free states", 0, 0, 0},
      {"--floating", ARG_FLAG, &a.floating, "", "URDF: give the root link a free joint", 0, 0, 0},
      CLI_MODEL_OPTIONS,
      CLI_INTEGRATOR_OPTIONS,
      {"--quiet", ARG_FLAG, &a.quiet, "", "no warnings on stderr (errors still print)", 0, 0, 0},
  };
  const argCommand cmd = {"gradcheck",
                          "Compare the analytic step Jacobians A = dx+/dx, B = dx+/du, P = dx+/dtheta with "
                          "central differences\nat N states (in contact along random drops unless "
                          "--no-contact), joint limits disabled; print per block\nthe largest absolute and "
                          "relative error, PASS/FAIL against 1e-6 (smooth) or 1e-4 (in contact).\nExit 0 if "
                          "every block passes, else 1.",
                          "MODEL", 1, opt, sizeof opt / sizeof opt[0],
                          "physid gradcheck /usr/share/mujoco/model/humanoid/humanoid.xml --no-contact --states 3"};
  const char* pos[ARGS_MAXPOS];
  int code = cli_parse(pos, &cmd, argc, argv);
  if (code >= 0) return code;
  if ((code = cli_integrator_derivatives("gradcheck")) >= 0) return code;
  a.model = pos[0];
  physModel* m = grad_load_model(&a);
  if (!m) return CLI_EXIT_INPUT;
  m->opt.disableflags |= PHYS_DSBL_LIMIT;
  gradWrt w;
  if (!grad_parse_wrt(&w, m, a.wrt ? a.wrt : (m->nu > 0 ? "state,ctrl" : "state"))) {
    grad_wrt_free(&w);
    phys_free_model(m);
    return CLI_EXIT_USAGE;
  }
  physData* d = phys_make_data(m);
  code = CLI_EXIT_INPUT;
  if (!d) cli_error("%s: out of memory allocating the simulation data", a.model);
  else code = gradcheck(m, d, &a, &w);
  phys_free_data(d);
  grad_wrt_free(&w);
  phys_free_model(m);
  return code;
}
