// step_equality.c - equality constraint rows in the constrained step (issue 15 item 1; lcp, cone, ccp).
//
// The rows (src/dyn/equality.h) are bilateral and hard: J_e v+ = 0 with unbounded impulses. They are
// eliminated exactly from the contact problem before any solver sees it (the Schur complement of the KKT
// system's equality block): with W = M~^-1, G_ee = J_e W J_e' (P = G_ee^+, a pseudo-inverse: planar
// mechanisms have rows without a lever), G_ce = J W J_e' and g_e = J_e v_f + beta r / dt, the contact and limit
// rows get
//   G' = G - G_ce P G_ce',   g' = g - G_ce P g_e,
// the Delassus matrix of the contact rows in the constrained mechanism (positive semidefinite), so lcp's
// pivoting, cone's and ccp's ADMM solve the contacts of the mechanism unchanged. After the contact (and
// frictionloss) impulses, v+ <- v+ + W J_e' lambda_e with lambda_e = -P (J_e v+ + beta r / dt), which is the
// KKT solution's equality impulse (-P (g_e + G_ce' lambda_c)) when there are no frictionloss rows, and leaves
// J_e v+ = -beta r / dt to rounding in every case.
// Drift: Baumgarte in the velocity, J_e v+ = -beta r / dt (beta = opt.baumgarte, 0.2), as MuJoCo's reference
// acceleration does, not the contacts' split impulse: a velocity projection on the curved constraint manifold
// loses kinetic energy every step, and the split impulse, which moves q without touching v, never gives it
// back. On tests/data/fourbar.xml (1 s from rest, dt 1 ms) the split impulse ended 0.094 rad from MuJoCo
// (solref 0.002) with an error first order in dt (crank angle -0.2363, -0.2903, -0.3181 at dt 1, 0.5,
// 0.25 ms, MuJoCo -0.3305, -0.3391, -0.3429), Baumgarte -0.3298, -0.3390, -0.3429 (test_oracle_step_equality).
// The contacts' position problem runs in the constrained mechanism (its G is G') and its pseudo-impulses are
// projected, lambda_pe = -P J_e vpos, so the position correction keeps J_e vpos = 0.
#include <string.h>

#include "contact.h"
#include "equality.h"
#include "factor.h"
#include "step.h"

// the rows at d's kinematics through the factor qLD of M~ (arena memory of the caller's mark)
void phys_equality_assemble(const physModel* m, physData* d, const double* qLD, physEqualityRows* er) {
  int nv = m->nv, ne = er->ne = phys_equality_rows(m);
  er->J = phys_stack_alloc(d, (size_t)ne * nv + 1);
  er->r = phys_stack_alloc(d, (size_t)ne + 1);
  er->WJ = phys_stack_alloc(d, (size_t)nv * ne + 1);
  er->P = phys_stack_alloc(d, (size_t)ne * ne + 1);
  er->lambda = phys_stack_alloc(d, (size_t)ne + 1);
  er->lambda_pos = phys_stack_alloc(d, (size_t)ne + 1);
  phys_equality_eval(m, d, er->r, er->J);
  size_t mark = phys_stack_mark(d);
  double* col = phys_stack_alloc(d, (size_t)nv);
  double* G = phys_stack_alloc(d, (size_t)ne * ne + 1);
  for (int i = 0; i < ne; i++) {
    phys_solve_m(m, qLD, col, er->J + (size_t)i * nv);
    for (int k = 0; k < nv; k++) er->WJ[(size_t)k * ne + i] = col[k];
  }
  // G_ee = J_e W J_e', exactly symmetric
  for (int i = 0; i < ne; i++)
    for (int j = 0; j <= i; j++) {
      double s = 0;
      for (int k = 0; k < nv; k++) s += er->J[(size_t)i * nv + k] * er->WJ[(size_t)k * ne + j];
      G[(size_t)i * ne + j] = G[(size_t)j * ne + i] = s;
    }
  er->rank = phys_lcp_pinv(er->P, d, G, ne);
  memset(er->lambda, 0, sizeof(double) * ((size_t)ne + 1));
  memset(er->lambda_pos, 0, sizeof(double) * ((size_t)ne + 1));
  phys_stack_free(d, mark);
}

// x (ne) = -P (J_e v + b) (b may be NULL: 0)
static void equality_impulse(const physModel* m, const physEqualityRows* er, const double* v, const double* b,
                             double* x, double* w) {
  int nv = m->nv, ne = er->ne;
  for (int i = 0; i < ne; i++) {
    double s = b ? b[i] : 0;
    for (int k = 0; k < nv; k++) s += er->J[(size_t)i * nv + k] * v[k];
    w[i] = s;
  }
  for (int i = 0; i < ne; i++) {
    double s = 0;
    for (int j = 0; j < ne; j++) s -= er->P[(size_t)i * ne + j] * w[j];
    x[i] = s;
  }
}

// eliminate the rows er from the contact problem p (file comment): new G, g, gpos (arena memory of the
// caller's mark), npos recounted; vf the free velocity (g_e = J_e vf)
void phys_equality_eliminate(const physModel* m, physData* d, const physEqualityRows* er, const double* vf,
                             physConstraintProblem* p) {
  int nv = m->nv, ne = er->ne, n = p->n;
  double beta_dt = m->opt.baumgarte / m->opt.timestep;
  double* G = phys_stack_alloc(d, (size_t)n * n + 1);
  double* g = phys_stack_alloc(d, (size_t)n + 1);
  double* gpos = phys_stack_alloc(d, (size_t)n + 1);
  size_t mark = phys_stack_mark(d);
  double* Gce = phys_stack_alloc(d, (size_t)n * ne + 1);
  double* X = phys_stack_alloc(d, (size_t)n * ne + 1);
  double* ge = phys_stack_alloc(d, 2 * (size_t)ne + 1);
  double* gpe = ge + ne;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < ne; j++) {
      double s = 0;
      for (int k = 0; k < nv; k++) s += p->J[(size_t)i * nv + k] * er->WJ[(size_t)k * ne + j];
      Gce[(size_t)i * ne + j] = s;
    }
  for (int i = 0; i < n; i++)
    for (int j = 0; j < ne; j++) {
      double s = 0;
      for (int l = 0; l < ne; l++) s += Gce[(size_t)i * ne + l] * er->P[(size_t)l * ne + j];
      X[(size_t)i * ne + j] = s;
    }
  for (int j = 0; j < ne; j++) {
    double s = 0;
    for (int k = 0; k < nv; k++) s += er->J[(size_t)j * nv + k] * vf[k];
    ge[j] = s + beta_dt * er->r[j];
    gpe[j] = 0;
  }
  p->npos = 0;
  for (int i = 0; i < n; i++) {
    double sg = p->g[i], sp = p->gpos[i];
    for (int j = 0; j < ne; j++) sg -= X[(size_t)i * ne + j] * ge[j], sp -= X[(size_t)i * ne + j] * gpe[j];
    g[i] = sg, gpos[i] = sp;
    p->npos += sp < 0;
    for (int l = 0; l <= i; l++) {
      double s = p->G[(size_t)i * n + l];
      for (int j = 0; j < ne; j++) s -= X[(size_t)i * ne + j] * Gce[(size_t)l * ne + j];
      G[(size_t)i * n + l] = G[(size_t)l * n + i] = s;
    }
  }
  p->G = G, p->g = g, p->gpos = gpos;
  phys_stack_free(d, mark);
}

// v += W J_e' x (nv)
static void add_velocity(const physModel* m, const physEqualityRows* er, const double* x, double* v) {
  int nv = m->nv, ne = er->ne;
  for (int k = 0; k < nv; k++) {
    double s = 0;
    for (int i = 0; i < ne; i++) s += er->WJ[(size_t)k * ne + i] * x[i];
    v[k] += s;
  }
}

// the equality impulses after the contact and frictionloss impulses (file comment): lambda = -P (J_e v+ +
// beta r / dt), v+ += W J_e' lambda, qfrc += J_e' lambda / dt
void phys_equality_finish(const physModel* m, physData* d, physEqualityRows* er, double* vnew, double* qfrc) {
  int nv = m->nv, ne = er->ne;
  size_t mark = phys_stack_mark(d);
  double* w = phys_stack_alloc(d, 2 * (size_t)ne + 1);
  double* b = w + ne;
  double beta_dt = m->opt.baumgarte / m->opt.timestep;
  for (int i = 0; i < ne; i++) b[i] = beta_dt * er->r[i];
  equality_impulse(m, er, vnew, b, er->lambda, w);
  add_velocity(m, er, er->lambda, vnew);
  double idt = 1 / m->opt.timestep;
  for (int i = 0; i < ne; i++)
    for (int k = 0; k < nv; k++) qfrc[k] += er->J[(size_t)i * nv + k] * er->lambda[i] * idt;
  phys_stack_free(d, mark);
}

// the contacts' position pseudo-impulses projected on the constraints (file comment): lambda_p = -P J_e vpos,
// vpos += W J_e' lambda_p (nothing when vpos = 0)
void phys_equality_position(const physModel* m, physData* d, physEqualityRows* er, double* vpos) {
  int ne = er->ne, any = 0;
  for (int k = 0; k < m->nv; k++) any |= vpos[k] != 0;
  if (!any) return;
  size_t mark = phys_stack_mark(d);
  double* w = phys_stack_alloc(d, (size_t)ne + 1);
  equality_impulse(m, er, vpos, NULL, er->lambda_pos, w);
  add_velocity(m, er, er->lambda_pos, vpos);
  phys_stack_free(d, mark);
}

//---------------------------------------------------------------------------------------------------------
// penalty: a stiff spring-damper per row

// the spring k and damper b of constraint e as MuJoCo 2.2.2 reads solref (mj_makeImpedance) at its largest
// impedance d = solimp[1] (in (0, 0.9999]): solref = (timeconst, dampratio) > 0 gives k = 1/(d^2 tc^2 dr^2),
// b = 2/(d tc), tc at least 2 dt (MuJoCo's refsafe); solref = (-stiffness, -damping) gives k = stiffness/d^2,
// b = damping/d. Both are accelerations per unit residual (rate), as MuJoCo's reference acceleration
// -b dr/dt - k r: the constraint's force is Lambda_e (-k r - b dr/dt), Lambda_e = (J_e M~^-1 J_e')^+ its
// constraint-space inertia (the block of its own rows: a weld's translation and rotation rows together)
void phys_equality_spring(const physModel* m, int e, double* k, double* b) {
  const double* ref = m->eq_solref + 2 * e;
  double dmax = m->eq_solimp[5 * e + 1], dt = m->opt.timestep;
  if (!(dmax > 1e-4)) dmax = 1e-4;
  if (dmax > 0.9999) dmax = 0.9999;
  if (ref[0] > 0) {
    double tc = ref[0] > 2 * dt ? ref[0] : 2 * dt, dr = ref[1];
    *k = 1 / (dmax * dmax * tc * tc * dr * dr);
    *b = 2 / (dmax * tc);
  } else {
    *k = -ref[0] / (dmax * dmax);
    *b = -ref[1] / dmax;
  }
}

void phys_equality_block_inertia(const physModel* m, physData* d, const physEqualityRows* er, int row, int dim,
                                 double* Gb, double* Lb) {
  int nv = m->nv, ne = er->ne;
  const double* Jb = er->J + (size_t)row * nv;
  for (int i = 0; i < dim; i++)
    for (int j = 0; j < dim; j++) {
      double s = 0;
      for (int l = 0; l < nv; l++) s += Jb[(size_t)i * nv + l] * er->WJ[(size_t)l * ne + row + j];
      Gb[i * dim + j] = s;
    }
  for (int i = 0; i < dim; i++)   // exactly symmetric
    for (int j = 0; j < i; j++) Gb[i * dim + j] = Gb[j * dim + i] = 0.5 * (Gb[i * dim + j] + Gb[j * dim + i]);
  phys_lcp_pinv(Lb, d, Gb, dim);
}

// the penalty force at velocity v, f = Lambda (-k o r - c o J_e v) (ne; k, c per row: c = dt k + b, the
// spring's rate at v+ and the damper, linearly implicit), and with H not NULL H += dt J_e' Lambda C J_e (both
// triangles; Lambda block-diagonal per constraint, C = c I on each block: symmetric positive semidefinite)
static void penalty_force(const physModel* m, physData* d, const physEqualityRows* er, const double* v, double* f,
                          double* H) {
  int nv = m->nv, row = 0;
  double dt = m->opt.timestep;
  size_t mark = phys_stack_mark(d);
  double* Gb = phys_stack_alloc(d, 36);
  double* Lb = phys_stack_alloc(d, 36);
  double* y = phys_stack_alloc(d, 6);
  double* JL = phys_stack_alloc(d, 6 * (size_t)nv);
  for (int e = 0; e < m->neq; e++) {
    if (!m->eq_active[e]) continue;
    int dim = phys_equality_dim(m, e);
    double k, b;
    phys_equality_spring(m, e, &k, &b);
    double c = dt * k + b;
    const double* Jb = er->J + (size_t)row * nv;
    phys_equality_block_inertia(m, d, er, row, dim, Gb, Lb);
    for (int i = 0; i < dim; i++) {
      double s = 0;
      for (int l = 0; l < nv; l++) s += Jb[(size_t)i * nv + l] * v[l];
      y[i] = -k * er->r[row + i] - c * s;
    }
    for (int i = 0; i < dim; i++) {
      double s = 0;
      for (int j = 0; j < dim; j++) s += Lb[i * dim + j] * y[j];
      f[row + i] = s;
    }
    if (H) {
      // JL = Lambda_b J_b (dim x nv); H += dt c J_b' JL
      for (int i = 0; i < dim; i++)
        for (int l = 0; l < nv; l++) {
          double s = 0;
          for (int j = 0; j < dim; j++) s += Lb[i * dim + j] * Jb[(size_t)j * nv + l];
          JL[(size_t)i * nv + l] = s;
        }
      for (int i = 0; i < dim; i++)
        for (int a = 0; a < nv; a++) {
          double ja = dt * c * Jb[(size_t)i * nv + a];
          if (ja == 0) continue;
          for (int l = 0; l < nv; l++) H[(size_t)a * nv + l] += ja * JL[(size_t)i * nv + l];
        }
    }
    row += dim;
  }
  phys_stack_free(d, mark);
}

// penalty's equality forces in the linearly implicit step (step.c penalty_dense: H a = rhs, v+ = v + dt a):
// f(v+) = Lambda (-k o r - c o J_e v+) (penalty_force), so rhs += J_e' f(v), H += dt J_e' Lambda C J_e; v is
// d->qvel
void phys_equality_penalty_assemble(const physModel* m, physData* d, const physEqualityRows* er, double* rhs,
                                    double* H) {
  int nv = m->nv, ne = er->ne;
  size_t mark = phys_stack_mark(d);
  double* f = phys_stack_alloc(d, (size_t)ne + 1);
  penalty_force(m, d, er, d->qvel, f, H);
  for (int i = 0; i < ne; i++)
    for (int k = 0; k < nv; k++) rhs[k] += er->J[(size_t)i * nv + k] * f[i];
  phys_stack_free(d, mark);
}

// qfrc += J_e' f(v+), the equality forces at the new velocity; lambda (the rows' impulses) = dt f
void phys_equality_penalty_finish(const physModel* m, physData* d, physEqualityRows* er, const double* vnew,
                                  double* qfrc) {
  int nv = m->nv, ne = er->ne;
  penalty_force(m, d, er, vnew, er->lambda, NULL);
  for (int i = 0; i < ne; i++) {
    for (int k = 0; k < nv; k++) qfrc[k] += er->J[(size_t)i * nv + k] * er->lambda[i];
    er->lambda[i] *= m->opt.timestep;
  }
}
