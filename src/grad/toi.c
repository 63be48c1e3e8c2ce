// toi.c - time-of-impact correction of the step Jacobian for elastic bounces (toi.h; paper 001 section VI
// and appendix E, paper 002 appendix VII).
//
// Discrete time resolves an impact at the start of the step: q+ = q + dt v', v' the post-impact velocity, so
// the closer a body starts to the surface, the closer it ends (d(dist+)/d(dist) = +1). In continuous time it
// ends farther. With the velocity constant between the step's start and the impact and after it (no other
// force within the step), a contact at distance d approaching at v_n = J_n v < 0 hits at t_c = -d / v_n and
// the impulse along J_n gives v' = v + W J_n' L with J_n v' = -eps v_n (written for min(v_n, 0); the code uses
// the smoothed law phi(v_n) of contact.h, eps -> eps phi(v_n)/v_n, 1 at impact speeds above 2 delta) (W = M~^-1, M~ = M + dt B, the step's
// effective mass), i.e. v' - v = -(1 + eps) v_n W J_n' / w, w = J_n W J_n'. Then
//   q+ = q + t_c v + (dt - t_c) v' = q + dt v' + (d / v_n) (v' - v) = q + dt v' - (1 + eps) d W J_n' / w:
// the same v+ = v' (so dv+/dx and dq+/dv are the discrete step's), plus a position term whose derivative
// through d(q) (dd/dq = J_n) is
//   Delta = d(q+)/dq - d(q+)/dq|discrete = -(1 + eps) W J_n' J_n / w,
// and in contact coordinates d(dist+)/d(dist) = 1 - (1 + eps) = -eps, the continuous-time answer. For nb
// contacts bouncing in one step, Delta = -W J_b' G_b^+ E J_b with G_b = J_b W J_b' and E = diag(1 + eps_b):
// exact for one contact and for contacts that hit together with one eps (a box landing flat: (1 + eps) times
// the W-orthogonal projector onto the motions that change their distances); otherwise the least-squares fit
// paper 001 appendix E describes, in closed form. On the configuration manifold the term joins the position
// update velocity, so Delta is premultiplied by D = Jr(phi) on rotation groups (phi = dt (v+ + vpos), grad.h).
// Position correction: a contact detected only once it penetrates (margin 0) starts the impact step at
// d < 0, and the step's split impulse (contact.h) moves q by dt vpos with d(dist+)/d(dist) = -beta from it
// (one contact: dt vpos = -beta (d + slop) W J_n' / w). Continuous time has no penetration to correct, so a
// bouncing contact's correction is removed with the discrete step: E's entry becomes 1 + eps - beta on those
// rows (phys_contact_corrected), and d(dist+)/d(dist) = 1 - beta - (1 + eps - beta) = -eps again (without this
// the elastic bounce gave -1.2 at margin 0, issue 10 item 15; exact when the corrected rows are the bouncing
// ones, as for one ball; other penetrating contacts keep their correction).
// The restitution eps_b enters the extra term too: d(q+)/d(eps_b) gains U_b = -D W J_b' G_b^+ e_b d_b (d_b the
// contact's distance at the step's start; one contact: -d W J_n' / w, so that over a rollout
// d(dist_T)/d(eps) = |v_n| (T - t_c) with the continuous impact time t_c), applied to the restitution:GEOM
// entry of the geom the pair's restitution comes from (the larger, both on ties; none for a <pair>'s).
//
// Bouncing contacts: touching (dist <= 0), pushing (lambda_n > 0) and approaching (v_n < 0), at any eps: at
// eps = 0 the term is -W J_n' J_n / w (d(dist+)/d(dist) = 0, a landing stops at the surface), the limit of
// eps -> 0+, so the Jacobian is continuous in eps at 0. A contact within the margin whose gap closes in the
// step (assemble.c phys_normal_bias's margin impact) is not one: the step itself moves it by its time of
// impact (step.c toi_displacement), and the step's derivatives carry that term. A resting contact also meets
// this (the discrete step makes it bounce by micro-impacts) and is corrected: the option is meant for
// bouncing scenes.
#include "toi.h"

#include <lapacke.h>
#include <math.h>
#include <string.h>

#include "collision.h"
#include "contact.h"
#include "dyn.h"
#include "factor.h"
#include "params.h"
#include "rot.h"
#include "step.h"
#include "step_record.h"

//---------------------------------------------------------------------------------------------------------
// the trial step

// the state the trial step advances and must restore (arena memory of the caller's mark); the caller's
// contact list is the trial step's warm-start input, read only: the trial step's contacts go to a list of
// its own (phys_step_warm), d->contact and d->contact_prev are not touched
typedef struct toiSave_ {
  int nwarning;
  double *x, *qacc, *qfrc;   // x: qpos, qvel, time (phys_state_save, step.h)
} toiSave;

// save d's state into s
static void save_state(const physModel* m, physData* d, toiSave* s) {
  s->nwarning = d->nwarning;
  s->x = phys_stack_alloc(d, phys_state_size(m));
  s->qacc = phys_stack_alloc(d, (size_t)m->nv);
  s->qfrc = phys_stack_alloc(d, (size_t)m->nv);
  phys_state_save(m, d, s->x);
  memcpy(s->qacc, d->qacc, sizeof(double) * (size_t)m->nv);
  memcpy(s->qfrc, d->qfrc_constraint, sizeof(double) * (size_t)m->nv);
}

// restore d from s
static void load_state(const physModel* m, physData* d, const toiSave* s) {
  d->nwarning = s->nwarning;
  phys_state_load(m, d, s->x);
  memcpy(d->qacc, s->qacc, sizeof(double) * (size_t)m->nv);
  memcpy(d->qfrc_constraint, s->qfrc, sizeof(double) * (size_t)m->nv);
}

//---------------------------------------------------------------------------------------------------------
// the correction

// normal row jn (nv) of contact c: frame row 0 times (J_point(body of geom[1]) - J_point(body of geom[0]))
// at c->pos (needs the step's kinematics); scratch jac (3 nv), tmp (3 nv)
static void normal_row(const physModel* m, const physData* d, const physContact* c, double* jn, double* jac,
                       double* tmp) {
  int nv = m->nv;
  phys_jac(m, d, c->pos, m->geom_bodyid[c->geom[1]], jac, NULL);
  phys_jac(m, d, c->pos, m->geom_bodyid[c->geom[0]], tmp, NULL);
  for (int j = 0; j < nv; j++)
    jn[j] = c->frame[0] * (jac[j] - tmp[j]) + c->frame[1] * (jac[nv + j] - tmp[nv + j]) +
            c->frame[2] * (jac[2 * nv + j] - tmp[2 * nv + j]);
}

// 1 if contact c bounces in the step (file comment): touching, pushing and approaching (v the pre-step velocity)
static int bounces(const physModel* m, const physContact* c, const double* jn, const double* v) {
  int nv = m->nv;
  double vn = 0;
  for (int j = 0; j < nv; j++) vn += jn[j] * v[j];
  return c->dist <= 0 && c->lambda[0] > 0 && vn < 0;
}

// G^+ (n x n, symmetric positive semidefinite, in place) by eigen-decomposition, eigenvalues below 1e-12 of
// the largest dropped; scratch V (n x n), ev (n). Returns 0 if the decomposition failed.
static int pinv_psd(double* G, int n, double* V, double* ev) {
  memcpy(V, G, sizeof(double) * (size_t)n * n);
  if (LAPACKE_dsyev(LAPACK_ROW_MAJOR, 'V', 'U', n, V, n, ev) != 0) return 0;
  double tol = 1e-12 * fmax(fabs(ev[n - 1]), 1e-300);
  // G^+ = V diag(1/ev) V' over the kept eigenvalues
  memset(G, 0, sizeof(double) * (size_t)n * n);
  for (int k = 0; k < n; k++) {
    if (!(ev[k] > tol)) continue;
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) G[i * n + j] += V[i * n + k] * V[j * n + k] / ev[k];
  }
  return 1;
}

// X (nv x ncol) <- D X: rows of the rotation groups premultiplied by Jr(dt vsum) (D in the file comment)
static void premultiply_cols(const physModel* m, const double* vsum, double* X, int ncol) {
  double dt = m->opt.timestep, tmp[3];
  for (int j = 0; j < m->njnt; j++) {
    int type = m->jnt_type[j], g = m->jnt_dofadr[j] + (type == PHYS_JNT_FREE ? 3 : 0);
    if (type != PHYS_JNT_FREE && type != PHYS_JNT_BALL) continue;
    double phi[3] = {dt * vsum[g], dt * vsum[g + 1], dt * vsum[g + 2]}, Jr[9];
    phys_so3_jacobians(Jr, NULL, phi);
    double *X0 = X + (size_t)g * ncol, *X1 = X0 + ncol, *X2 = X1 + ncol;
    for (int c = 0; c < ncol; c++) {
      for (int r = 0; r < 3; r++) tmp[r] = Jr[3 * r] * X0[c] + Jr[3 * r + 1] * X1[c] + Jr[3 * r + 2] * X2[c];
      X0[c] = tmp[0], X1[c] = tmp[1], X2[c] = tmp[2];
    }
  }
}

// the geoms whose restitution contact c's moves with (phys_contact_material_moves: the larger, both on a
// tie): out[0], out[1], -1 where not
static void restitution_geoms(int out[2], const physModel* m, const physContact* c) {
  for (int k = 0; k < 2; k++) out[k] = phys_contact_material_moves(m, c, c->geom[k], 1) ? c->geom[k] : -1;
}

// Delta = -D W J_b' G_b^+ E J_b (E less beta on corrected rows) from the trial step's contacts tr (with
// d->qfrc_constraint, v+ in d->qvel) and L, M~'s factor at the state (the record's); v the pre-step velocity, vsum the position update velocity; if U
// is not NULL, U (nb x nv, room for tr->n rows) = the columns U_b = -D W J_b' G_b^+ e_b d_b and geom (2 nb)
// their restitution geoms. Returns nb.
static int build_delta(const physModel* m, physData* d, const physContactList* tr, const double* L,
                       const double* v, const double* vsum, double* delta, double* U, int* geom) {
  int nv = m->nv, nc = tr->n, nb = 0;
  const physContact* con = tr->con;
  size_t mark = phys_stack_mark(d);
  double* Jb = phys_stack_alloc(d, (size_t)nc * nv + 1);
  double* eb = phys_stack_alloc(d, (size_t)nc + 1);
  double* db = phys_stack_alloc(d, (size_t)nc + 1);
  double* jac = phys_stack_alloc(d, 3 * (size_t)nv);
  double* tmp = phys_stack_alloc(d, 3 * (size_t)nv);
  for (int i = 0; i < nc; i++) {
    double* jn = Jb + (size_t)nb * nv;
    normal_row(m, d, con + i, jn, jac, tmp);
    if (!bounces(m, con + i, jn, v)) continue;
    // restitution law J_n v' = -eps phi(v_n) (contact.h): 1 + eps becomes 1 + eps phi(v_n)/v_n, d_b takes phi/v_n
    double vn = 0;
    for (int k = 0; k < nv; k++) vn += jn[k] * v[k];
    double rho = phys_restitution_phi(vn, NULL) / vn;
    if (geom) restitution_geoms(geom + 2 * nb, m, con + i), db[nb] = con[i].dist * rho;
    eb[nb++] = 1 + con[i].restitution * rho - (phys_contact_corrected(con[i].dist) ? m->opt.baumgarte : 0);
  }
  memset(delta, 0, sizeof(double) * (size_t)nv * nv);
  if (nb > 0) {
    double* Y = phys_stack_alloc(d, (size_t)nb * nv);   // row b = W J_b'
    double* G = phys_stack_alloc(d, (size_t)nb * nb);
    double* V = phys_stack_alloc(d, (size_t)nb * nb);
    double* ev = phys_stack_alloc(d, (size_t)nb);
    double* K = phys_stack_alloc(d, (size_t)nb * nv);
    for (int b = 0; b < nb; b++) phys_solve_m(m, L, Y + (size_t)b * nv, Jb + (size_t)b * nv);
    for (int a = 0; a < nb; a++)
      for (int b = 0; b < nb; b++) {
        double s = 0;
        for (int j = 0; j < nv; j++) s += Jb[(size_t)a * nv + j] * Y[(size_t)b * nv + j];
        G[a * nb + b] = s;
      }
    if (!pinv_psd(G, nb, V, ev)) nb = 0;
    // K = G^+ E J_b (nb x nv), Delta = -Y' K
    for (int a = 0; a < nb; a++)
      for (int j = 0; j < nv; j++) {
        double s = 0;
        for (int b = 0; b < nb; b++) s += G[a * nb + b] * eb[b] * Jb[(size_t)b * nv + j];
        K[(size_t)a * nv + j] = s;
      }
    for (int i = 0; i < nv; i++)
      for (int j = 0; j < nv; j++) {
        double s = 0;
        for (int a = 0; a < nb; a++) s += Y[(size_t)a * nv + i] * K[(size_t)a * nv + j];
        delta[(size_t)i * nv + j] = -s;
      }
    premultiply_cols(m, vsum, delta, nv);
    // U_b = -D Y' G^+ e_b d_b (the rows of U as D's columns: premultiply U' by D)
    if (U) {
      double* Ut = phys_stack_alloc(d, (size_t)nv * nb);
      for (int i = 0; i < nv; i++)
        for (int b = 0; b < nb; b++) {
          double s = 0;
          for (int a = 0; a < nb; a++) s += Y[(size_t)a * nv + i] * G[a * nb + b];
          Ut[(size_t)i * nb + b] = -s * db[b];
        }
      premultiply_cols(m, vsum, Ut, nb);
      for (int b = 0; b < nb; b++)
        for (int i = 0; i < nv; i++) U[(size_t)b * nv + i] = Ut[(size_t)i * nb + b];
    }
  }
  phys_stack_free(d, mark);
  return nb;
}

// the trial step (phys_step's, from rec's warm-start input, its contacts into arena memory) and build_delta (U,
// geom may be NULL; else room for d->nconmax rows); -1 if rejected. Only the constrained kind has the
// correction (the record decided the kind): any other gives 0 without a trial step
static int toi_trial(const physModel* m, physData* d, const physStepRecord* rec, double* delta, double* U,
                     int* geom) {
  int nv = m->nv;
  double dt = m->opt.timestep;
  memset(delta, 0, sizeof(double) * (size_t)nv * nv);
  if (rec->kind != PHYS_STEP_CONSTRAINED) return 0;
  size_t mark = phys_stack_mark(d);
  toiSave s;
  save_state(m, d, &s);
  double* vsum = phys_stack_alloc(d, (size_t)nv);
  int nwarn = d->nwarning;
  physContactList tr = phys_contact_list_arena(d);
  phys_step_warm(m, d, NULL, &rec->warm, &tr);
  int nb = -1;   // rejected step (M~ not positive definite or not finite)
  const double *q0 = s.x, *v0 = s.x + m->nq, t0 = s.x[m->nq + nv];   // the state before the trial step
  if (d->nwarning == nwarn || d->time != t0) {
    // the position update velocity (v+ + vpos) = (q+ (-) q) / dt
    phys_difference_pos(m, vsum, dt, q0, d->qpos);
    nb = build_delta(m, d, &tr, rec->L, v0, vsum, delta, U, geom);
  }
  load_state(m, d, &s);
  phys_stack_free(d, mark);
  return nb;
}

int phys_toi_delta(const physModel* m, physData* d, const physStepRecord* rec, double* delta) {
  return toi_trial(m, d, rec, delta, NULL, NULL);
}

physStatus phys_toi_jacobian(const physModel* m, physData* d, const physStepRecord* rec, double* A) {
  int nv = m->nv, n2 = 2 * nv;
  size_t mark = phys_stack_mark(d);
  double* delta = phys_stack_alloc(d, (size_t)nv * nv);
  int nb = toi_trial(m, d, rec, delta, NULL, NULL);
  if (nb > 0)
    for (int i = 0; i < nv; i++)
      for (int j = 0; j < nv; j++) A[(size_t)i * n2 + j] += delta[(size_t)i * nv + j];
  phys_stack_free(d, mark);
  return nb < 0 ? PHYS_ERR_NUMERIC : PHYS_OK;
}

physStatus phys_toi_vjp(const physModel* m, physData* d, const physStepRecord* rec, const double* xbar_next,
                        double* xbar) {
  int nv = m->nv;
  size_t mark = phys_stack_mark(d);
  double* delta = phys_stack_alloc(d, (size_t)nv * nv);
  int nb = toi_trial(m, d, rec, delta, NULL, NULL);
  // xbar_q += Delta' qbar+
  if (nb > 0)
    for (int j = 0; j < nv; j++) {
      double s = 0;
      for (int i = 0; i < nv; i++) s += delta[(size_t)i * nv + j] * xbar_next[i];
      xbar[j] += s;
    }
  phys_stack_free(d, mark);
  return nb < 0 ? PHYS_ERR_NUMERIC : PHYS_OK;
}

// column of t's restitution:GEOM entry for geom g, or -1
static int restitution_column(const physParamTable* t, int g) {
  for (int e = 0; g >= 0 && e < t->n; e++)
    if (t->param[e].kind == PHYS_PAR_RESTITUTION && t->param[e].id == g) return t->param[e].adr;
  return -1;
}

// the bouncing contacts' U_b and restitution columns: returns nb (-1 rejected); U (nconmax x nv), col (nconmax)
static int toi_columns(const physModel* m, physData* d, const physStepRecord* rec, const physParamTable* t,
                       double* U, int* col) {
  int nv = m->nv;
  size_t mark = phys_stack_mark(d);
  double* delta = phys_stack_alloc(d, (size_t)nv * nv);
  int nb = toi_trial(m, d, rec, delta, U, col);
  for (int b = 0; b < 2 * nb; b++) col[b] = restitution_column(t, col[b]);
  phys_stack_free(d, mark);
  return nb;
}

physStatus phys_toi_param_jacobian(const physModel* m, physData* d, const physStepRecord* rec,
                                   const physParamTable* t, double* P) {
  int nv = m->nv, nt = t->ntheta;
  size_t mark = phys_stack_mark(d);
  double* U = phys_stack_alloc(d, (size_t)d->nconmax * nv + 1);
  int* col = (int*)phys_stack_alloc(d, (size_t)d->nconmax + 1);   // 2 ints per bounce
  int nb = toi_columns(m, d, rec, t, U, col);
  // the q+ rows of P gain U_b in the column of eps_b
  for (int b = 0; b < 2 * nb; b++)
    if (col[b] >= 0)
      for (int i = 0; i < nv; i++) P[(size_t)i * nt + col[b]] += U[(size_t)(b / 2) * nv + i];
  phys_stack_free(d, mark);
  return nb < 0 ? PHYS_ERR_NUMERIC : PHYS_OK;
}

physStatus phys_toi_param_vjp(const physModel* m, physData* d, const physStepRecord* rec, const physParamTable* t,
                              const double* xbar_next, double* theta_bar) {
  int nv = m->nv;
  size_t mark = phys_stack_mark(d);
  double* U = phys_stack_alloc(d, (size_t)d->nconmax * nv + 1);
  int* col = (int*)phys_stack_alloc(d, (size_t)d->nconmax + 1);   // 2 ints per bounce
  int nb = toi_columns(m, d, rec, t, U, col);
  // theta_bar[eps_b] += U_b . qbar+
  for (int b = 0; b < 2 * nb; b++)
    if (col[b] >= 0)
      for (int i = 0; i < nv; i++) theta_bar[col[b]] += U[(size_t)(b / 2) * nv + i] * xbar_next[i];
  phys_stack_free(d, mark);
  return nb < 0 ? PHYS_ERR_NUMERIC : PHYS_OK;
}
