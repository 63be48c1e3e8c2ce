// equality.c - residuals and Jacobians of equality constraints (equality.h), as MuJoCo 2.2.2's
// mj_instantiateEquality defines them, so physid's rows are MuJoCo's efc rows of type mjCNSTR_EQUALITY
// (tests/dyn/test_oracle_equality.c compares them entry by entry).
#include <string.h>

#include "dyn.h"
#include "equality.h"
#include "rot.h"

int phys_equality_dim(const physModel* m, int e) {
  switch (m->eq_type[e]) {
    case PHYS_EQ_CONNECT: return 3;
    case PHYS_EQ_WELD: return 6;
    default: return 1;
  }
}

int phys_equality_rows(const physModel* m) {
  int n = 0;
  if (m->opt.disableflags & PHYS_DSBL_EQUALITY) return 0;
  for (int e = 0; e < m->neq; e++)
    if (m->eq_active[e]) n += phys_equality_dim(m, e);
  return n;
}

// world point p = xpos_b + xmat_b a of body b's local point a
static void body_point(const physData* d, int b, const double a[3], double p[3]) {
  const double* R = d->xmat + 9 * b;
  for (int i = 0; i < 3; i++) p[i] = d->xpos[3 * b + i] + R[3 * i] * a[0] + R[3 * i + 1] * a[1] + R[3 * i + 2] * a[2];
}

// Jp += sign jacp(b, p), Jr += sign jacr(b) (3 x nv each, either may be NULL): body b's dof chain
static void add_jac(const physModel* m, const physData* d, int b, const double p[3], double sign, double* Jp,
                    double* Jr) {
  int nv = m->nv;
  for (int j = phys_body_lastdof(m, b); j >= 0; j = m->dof_parentid[j]) {
    const double* cd = d->cdof + 6 * j;
    double c[3];
    phys_cross3(c, cd, p);
    for (int i = 0; i < 3; i++) {
      if (Jp) Jp[i * nv + j] += sign * (cd[3 + i] + c[i]);
      if (Jr) Jr[i * nv + j] += sign * cd[i];
    }
  }
}

// the position rows: r = p1 - p2, J = jacp(b1, p1) - jacp(b2, p2); Jr (may be NULL) += jacr(b1) - jacr(b2)
static void point_rows(const physModel* m, const physData* d, int b1, const double* p1, int b2, const double* p2,
                       double* r, double* J, double* Jr) {
  add_jac(m, d, b1, p1, 1, J, Jr);
  add_jac(m, d, b2, p2, -1, J, Jr);
  for (int i = 0; i < 3; i++) r[i] = p1[i] - p2[i];
}

// connect: p1 = body1's point data[0..2], p2 = body2's point data[3..5]
static void connect_rows(const physModel* m, const physData* d, int e, double* r, double* J) {
  const double* data = m->eq_data + PHYS_EQ_NDATA * e;
  int b1 = m->eq_obj1id[e], b2 = m->eq_obj2id[e];
  double p1[3], p2[3];
  body_point(d, b1, data, p1);
  body_point(d, b2, data + 3, p2);
  point_rows(m, d, b1, p1, b2, p2, r, J, NULL);
}

// weld: position rows as connect with p1 = body1's point data[3..5], p2 = body2's point data[0..2]; rotation
// rows r = s vec(qe), qe = conj(q2) q1 rel (rel = data[6..9], s = torquescale data[10]); with the world angular
// velocities w1, w2, dqe/dt = 1/2 conj(q2) [0, w1 - w2] q1 rel, so column k of J is s/2 vec(conj(q2) [0, w_k]
// q1 rel), w_k = column k of jacr(b1) - jacr(b2) (J's rows 3..5 hold those first)
static void weld_rows(const physModel* m, const physData* d, int e, double* r, double* J) {
  const double* data = m->eq_data + PHYS_EQ_NDATA * e;
  int nv = m->nv, b1 = m->eq_obj1id[e], b2 = m->eq_obj2id[e];
  double p1[3], p2[3], q1r[4], c2[4], qe[4], s = data[10];
  body_point(d, b1, data + 3, p1);
  body_point(d, b2, data, p2);
  point_rows(m, d, b1, p1, b2, p2, r, J, J + 3 * nv);
  phys_quat_mul(q1r, d->xquat + 4 * b1, data + 6);
  phys_quat_conj(c2, d->xquat + 4 * b2);
  phys_quat_mul(qe, c2, q1r);
  for (int i = 0; i < 3; i++) r[3 + i] = s * qe[1 + i];
  double* Jr = J + 3 * nv;
  for (int k = 0; k < nv; k++) {
    double w[4] = {0, Jr[k], Jr[nv + k], Jr[2 * nv + k]}, a[4];
    if (w[1] == 0 && w[2] == 0 && w[3] == 0) continue;
    phys_quat_mul(a, c2, w);
    phys_quat_mul(a, a, q1r);
    for (int i = 0; i < 3; i++) Jr[i * nv + k] = 0.5 * s * a[1 + i];
  }
}

// joint: r = (q1 - q1_0) - sum_k c_k x^k, x = q2 - q2_0 (no joint2: r = q1 - q1_0 - c_0); J: 1 at joint1's
// dof, -sum_k k c_k x^(k-1) at joint2's
static void joint_rows(const physModel* m, const physData* d, int e, double* r, double* J) {
  const double* c = m->eq_data + PHYS_EQ_NDATA * e;
  int j1 = m->eq_obj1id[e], j2 = m->eq_obj2id[e];
  int a1 = m->jnt_qposadr[j1];
  double y = d->qpos[a1] - m->qpos0[a1];
  J[m->jnt_dofadr[j1]] = 1;
  if (j2 < 0) {
    r[0] = y - c[0];
    return;
  }
  int a2 = m->jnt_qposadr[j2];
  double x = d->qpos[a2] - m->qpos0[a2];
  r[0] = y - (c[0] + x * (c[1] + x * (c[2] + x * (c[3] + x * c[4]))));
  J[m->jnt_dofadr[j2]] -= c[1] + x * (2 * c[2] + x * (3 * c[3] + x * 4 * c[4]));
}

// fixed tendon s's length minus its length at qpos0 (MuJoCo's ten_length - tendon_length0) and, J != NULL,
// J += scale times its moment dL/dq (the coefficients at the joints' dofs)
static double fixed_tendon(const physModel* m, const physData* d, int s, double scale, double* J) {
  const int* jnt = m->spring_site + m->spring_adr[s];
  const double* coef = m->spring_prm + m->spring_adr[s];
  double len = 0, len0 = 0;
  for (int k = 0; k < m->spring_num[s]; k++) {
    int qa = m->jnt_qposadr[jnt[k]];
    len += coef[k] * d->qpos[qa];
    len0 += coef[k] * m->qpos0[qa];
    if (J) J[m->jnt_dofadr[jnt[k]]] += scale * coef[k];
  }
  return len - len0;
}

// tendon (issue 15 item 2; fixed tendons, phys_compile refuses spatial ones): as joint with the tendons'
// lengths, r = (L1 - L1_0) - sum_k c_k x^k, x = L2 - L2_0 (no tendon2: r = L1 - L1_0 - c_0);
// J = dL1/dq - (sum_k k c_k x^(k-1)) dL2/dq (MuJoCo 2.2.2's mj_instantiateEquality)
static void tendon_rows(const physModel* m, const physData* d, int e, double* r, double* J) {
  const double* c = m->eq_data + PHYS_EQ_NDATA * e;
  int t1 = m->eq_obj1id[e], t2 = m->eq_obj2id[e];
  double y = fixed_tendon(m, d, t1, 1, J);
  if (t2 < 0) {
    r[0] = y - c[0];
    return;
  }
  double x = fixed_tendon(m, d, t2, 0, NULL);
  r[0] = y - (c[0] + x * (c[1] + x * (c[2] + x * (c[3] + x * c[4]))));
  fixed_tendon(m, d, t2, -(c[1] + x * (2 * c[2] + x * (3 * c[3] + x * 4 * c[4]))), J);
}

// the row functions by physEqType (a new row kind adds its function here)
static const physEqRowFn EQ_ROWS[] = {[PHYS_EQ_CONNECT] = connect_rows, [PHYS_EQ_WELD] = weld_rows,
                                      [PHYS_EQ_JOINT] = joint_rows, [PHYS_EQ_TENDON] = tendon_rows};

int phys_equality_eval(const physModel* m, const physData* d, double* r, double* J) {
  int n = 0, nv = m->nv;
  if (m->opt.disableflags & PHYS_DSBL_EQUALITY) return 0;
  for (int e = 0; e < m->neq; e++) {
    if (!m->eq_active[e]) continue;
    int dim = phys_equality_dim(m, e);
    memset(J + (size_t)n * nv, 0, sizeof(double) * (size_t)dim * nv);
    physEqRowFn fn = EQ_ROWS[m->eq_type[e]];
    if (fn) fn(m, d, e, r + n, J + (size_t)n * nv);
    n += dim;
  }
  return n;
}
