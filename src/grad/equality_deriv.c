// equality_deriv.c - the equality rows' derivatives along a configuration tangent (equality_deriv.h).
//
// Along dq every body b moves with the twist t_b = sum over its dof chain of cdof_k dq_k (world-aligned, about
// the origin) and every dof axis turns as cdof_j' = t ×m cdof_j, t the twist of the frame the axis is attached
// to: phys_com_vel's sums with dq as the velocity (phys_com_vel_of). A point p of body b moves dp = t_lin +
// t_ang × p; body b's orientation dxquat = 1/2 [0, t_ang] xquat. The rows of src/dyn/equality.c are built from
// these, so their derivatives follow term by term.
#include <string.h>

#include "dyn.h"
#include "equality.h"
#include "equality_deriv.h"
#include "rot.h"

// the configuration's motion along dq: body twists (6 nbody) and dof-axis derivatives (6 nv)
typedef struct eqMotion_ {
  const double* twist;
  const double* dcdof;
} eqMotion;

// world point p = xpos_b + xmat_b a of body b's local point a and its motion dp along the tangent
static void point_motion(const physData* d, const eqMotion* mo, int b, const double a[3], double p[3], double dp[3]) {
  const double* R = d->xmat + 9 * b;
  const double* t = mo->twist + 6 * b;
  for (int i = 0; i < 3; i++) p[i] = d->xpos[3 * b + i] + R[3 * i] * a[0] + R[3 * i + 1] * a[1] + R[3 * i + 2] * a[2];
  phys_cross3(dp, t, p);
  for (int i = 0; i < 3; i++) dp[i] += t[3 + i];
}

// dJp += sign d(jacp(b, p)), dJr += sign d(jacr(b)) (3 x nv each, either may be NULL): each column cd_lin + cd_ang
// × p of body b's chain changes by dcd_lin + dcd_ang × p + cd_ang × dp (equality.c add_jac's derivative)
static void add_djac(const physModel* m, const physData* d, const eqMotion* mo, int b, const double p[3],
                     const double dp[3], double sign, double* dJp, double* dJr) {
  int nv = m->nv;
  for (int j = phys_body_lastdof(m, b); j >= 0; j = m->dof_parentid[j]) {
    const double *cd = d->cdof + 6 * j, *dcd = mo->dcdof + 6 * j;
    double c1[3], c2[3];
    phys_cross3(c1, dcd, p);
    phys_cross3(c2, cd, dp);
    for (int i = 0; i < 3; i++) {
      if (dJp) dJp[i * nv + j] += sign * (dcd[3 + i] + c1[i] + c2[i]);
      if (dJr) dJr[i * nv + j] += sign * dcd[i];
    }
  }
}

// connect and weld's position rows: d(jacp(b1, p1) - jacp(b2, p2)) for body1's local point a1 and body2's a2;
// dJr (may be NULL) += d(jacr(b1) - jacr(b2))
static void point_drows(const physModel* m, const physData* d, const eqMotion* mo, int b1, const double* a1, int b2,
                        const double* a2, double* dJ, double* dJr) {
  double p[3], dp[3];
  point_motion(d, mo, b1, a1, p, dp);
  add_djac(m, d, mo, b1, p, dp, 1, dJ, dJr);
  point_motion(d, mo, b2, a2, p, dp);
  add_djac(m, d, mo, b2, p, dp, -1, dJ, dJr);
}

static void connect_drows(const physModel* m, const physData* d, const eqMotion* mo, int e, double* dJ) {
  const double* data = m->eq_data + PHYS_EQ_NDATA * e;
  point_drows(m, d, mo, m->eq_obj1id[e], data, m->eq_obj2id[e], data + 3, dJ, NULL);
}

// w += sign times column k of jacr(b) (body b's dof chain's angular axes)
static void add_jacr_column(const physModel* m, const physData* d, int b, int k, double sign, double w[3]) {
  for (int j = phys_body_lastdof(m, b); j >= k && j >= 0; j = m->dof_parentid[j])
    if (j == k)
      for (int i = 0; i < 3; i++) w[i] += sign * d->cdof[6 * j + i];
}

// weld: rotation column k is s/2 vec(c2 [0, w_k] q1r), c2 = conj(q2), q1r = q1 rel, w_k = column k of jacr(b1) -
// jacr(b2); with dq_b = 1/2 [0, t_b,ang] q_b its derivative is s/2 vec(dc2 [0, w_k] q1r + c2 [0, dw_k] q1r +
// c2 [0, w_k] dq1r), dc2 = conj(dq2), dq1r = 1/2 [0, t_b1,ang] q1r
static void weld_drows(const physModel* m, const physData* d, const eqMotion* mo, int e, double* dJ) {
  const double* data = m->eq_data + PHYS_EQ_NDATA * e;
  int nv = m->nv, b1 = m->eq_obj1id[e], b2 = m->eq_obj2id[e];
  double* dJr = dJ + 3 * nv;
  point_drows(m, d, mo, b1, data + 3, b2, data, dJ, dJr);   // dJr holds d(jacr(b1) - jacr(b2)) first
  double q1r[4], c2[4], dq1r[4], dq2[4], dc2[4], s = data[10];
  const double *t1 = mo->twist + 6 * b1, *t2 = mo->twist + 6 * b2;
  phys_quat_mul(q1r, d->xquat + 4 * b1, data + 6);
  phys_quat_conj(c2, d->xquat + 4 * b2);
  double w1[4] = {0, 0.5 * t1[0], 0.5 * t1[1], 0.5 * t1[2]}, w2[4] = {0, 0.5 * t2[0], 0.5 * t2[1], 0.5 * t2[2]};
  phys_quat_mul(dq1r, w1, q1r);
  phys_quat_mul(dq2, w2, d->xquat + 4 * b2);
  phys_quat_conj(dc2, dq2);
  for (int k = 0; k < nv; k++) {
    double w[4] = {0, 0, 0, 0}, dw[4] = {0, dJr[k], dJr[nv + k], dJr[2 * nv + k]}, a[4], b[4], c[4];
    add_jacr_column(m, d, b1, k, 1, w + 1);
    add_jacr_column(m, d, b2, k, -1, w + 1);
    phys_quat_mul(a, dc2, w);   // dc2 [0, w] q1r
    phys_quat_mul(a, a, q1r);
    phys_quat_mul(b, c2, dw);   // c2 [0, dw] q1r
    phys_quat_mul(b, b, q1r);
    phys_quat_mul(c, c2, w);    // c2 [0, w] dq1r
    phys_quat_mul(c, c, dq1r);
    for (int i = 0; i < 3; i++) dJr[i * nv + k] = 0.5 * s * (a[1 + i] + b[1 + i] + c[1 + i]);
  }
}

// -(2 c2 + 6 c3 x + 12 c4 x^2): the derivative of the coupling's slope -(c1 + 2 c2 x + 3 c3 x^2 + 4 c4 x^3)
static double coupling_curvature(const double* c, double x) {
  return -(2 * c[2] + x * (6 * c[3] + x * 12 * c[4]));
}

// joint: J's entry at joint2's dof changes by its slope's derivative times dx (dx = dq at joint2's dof)
static void joint_drows(const physModel* m, const physData* d, const double* dq, int e, double* dJ) {
  const double* c = m->eq_data + PHYS_EQ_NDATA * e;
  int j2 = m->eq_obj2id[e];
  if (j2 < 0) return;
  int a2 = m->jnt_qposadr[j2], v2 = m->jnt_dofadr[j2];
  dJ[v2] += coupling_curvature(c, d->qpos[a2] - m->qpos0[a2]) * dq[v2];
}

// fixed tendon s's length minus its qpos0 length and its rate along dq (coefficients at the joints' dofs)
static double tendon_length(const physModel* m, const physData* d, int s, const double* dq, double* rate) {
  const int* jnt = m->spring_site + m->spring_adr[s];
  const double* coef = m->spring_prm + m->spring_adr[s];
  double len = 0;
  *rate = 0;
  for (int k = 0; k < m->spring_num[s]; k++) {
    int qa = m->jnt_qposadr[jnt[k]];
    len += coef[k] * (d->qpos[qa] - m->qpos0[qa]);
    *rate += coef[k] * dq[m->jnt_dofadr[jnt[k]]];
  }
  return len;
}

// tendon: J = dL1/dq + slope(x) dL2/dq with constant moments, so dJ = slope'(x) dx dL2/dq, dx = dL2/dq dq
static void tendon_drows(const physModel* m, const physData* d, const double* dq, int e, double* dJ) {
  const double* c = m->eq_data + PHYS_EQ_NDATA * e;
  int t2 = m->eq_obj2id[e];
  if (t2 < 0) return;
  double dx, x = tendon_length(m, d, t2, dq, &dx);
  double f = coupling_curvature(c, x) * dx;
  const int* jnt = m->spring_site + m->spring_adr[t2];
  const double* coef = m->spring_prm + m->spring_adr[t2];
  for (int k = 0; k < m->spring_num[t2]; k++) dJ[m->jnt_dofadr[jnt[k]]] += f * coef[k];
}

void phys_equality_jvp(const physModel* m, physData* d, const double* dq, double* dr, double* dJ) {
  int nv = m->nv, ne = phys_equality_rows(m), row = 0;
  memset(dJ, 0, sizeof(double) * (size_t)ne * nv);
  if (ne == 0) return;
  size_t mark = phys_stack_mark(d);
  double* twist = phys_stack_alloc(d, 6 * (size_t)m->nbody);
  double* dcdof = phys_stack_alloc(d, 6 * (size_t)nv + 1);
  phys_com_vel_of(m, d->cdof, dq, twist, dcdof);
  eqMotion mo = {twist, dcdof};
  for (int e = 0; e < m->neq; e++) {
    if (!m->eq_active[e]) continue;
    double* dJe = dJ + (size_t)row * nv;
    switch (m->eq_type[e]) {
      case PHYS_EQ_CONNECT: connect_drows(m, d, &mo, e, dJe); break;
      case PHYS_EQ_WELD: weld_drows(m, d, &mo, e, dJe); break;
      case PHYS_EQ_JOINT: joint_drows(m, d, dq, e, dJe); break;
      default: tendon_drows(m, d, dq, e, dJe); break;
    }
    row += phys_equality_dim(m, e);
  }
  if (dr) {
    double* r = phys_stack_alloc(d, (size_t)ne);
    double* J = phys_stack_alloc(d, (size_t)ne * nv);
    phys_equality_eval(m, d, r, J);
    for (int i = 0; i < ne; i++) {
      double s = 0;
      for (int k = 0; k < nv; k++) s += J[(size_t)i * nv + k] * dq[k];
      dr[i] = s;
    }
  }
  phys_stack_free(d, mark);
}

// K (ne x nv, transpose 0) = column k dJ(e_k) x, or T (nv x nv, transpose 1) = column k dJ(e_k)' x, or (transpose
// 2, x the weights B: ne x nv) the gradient K (nv) with K_k = <dJ(e_k), B>
static void curvature(const physModel* m, physData* d, const double* x, int transpose, double* K) {
  int nv = m->nv, ne = phys_equality_rows(m);
  if (ne == 0) return;
  size_t mark = phys_stack_mark(d);
  double* e = phys_stack_alloc(d, (size_t)nv);
  double* dJ = phys_stack_alloc(d, (size_t)ne * nv);
  memset(e, 0, sizeof(double) * (size_t)nv);
  for (int k = 0; k < nv; k++) {
    e[k] = 1;
    phys_equality_jvp(m, d, e, NULL, dJ);
    e[k] = 0;
    if (transpose == 2) {
      double s = 0;
      for (size_t i = 0; i < (size_t)ne * nv; i++) s += dJ[i] * x[i];
      K[k] = s;
      continue;
    }
    for (int i = 0; i < (transpose ? nv : ne); i++) {
      double s = 0;
      if (transpose)
        for (int l = 0; l < ne; l++) s += dJ[(size_t)l * nv + i] * x[l];
      else
        for (int l = 0; l < nv; l++) s += dJ[(size_t)i * nv + l] * x[l];
      K[(size_t)i * nv + k] = s;
    }
  }
  phys_stack_free(d, mark);
}

int phys_equality_polycoef_deriv(const physModel* m, const physData* d, int e, int c, double* dr, double* dJ) {
  int row = 0;
  memset(dJ, 0, sizeof(double) * (size_t)m->nv);
  *dr = 0;
  if ((m->opt.disableflags & PHYS_DSBL_EQUALITY) || !m->eq_active[e]) return -1;
  for (int k = 0; k < e; k++)
    if (m->eq_active[k]) row += phys_equality_dim(m, k);
  int o2 = m->eq_obj2id[e];
  if (o2 < 0) {   // r = y - c0
    *dr = c == 0 ? -1 : 0;
    return row;
  }
  // r = y - sum_k c_k x^k: dr/dc = -x^c; J's x part -(sum_k k c_k x^(k-1)) dx/dq: dJ/dc = -c x^(c-1) dx/dq
  double x, xm = 1, rate;   // xm = x^(c-1)
  if (m->eq_type[e] == PHYS_EQ_JOINT) x = d->qpos[m->jnt_qposadr[o2]] - m->qpos0[m->jnt_qposadr[o2]];
  else x = tendon_length(m, d, o2, dJ, &rate);   // (dJ as a zero direction: rate unused)
  if (c == 0) {
    *dr = -1;
    return row;
  }
  for (int k = 1; k < c; k++) xm *= x;
  *dr = -xm * x;
  double s = -c * xm;
  if (m->eq_type[e] == PHYS_EQ_JOINT) {
    dJ[m->jnt_dofadr[o2]] = s;
    return row;
  }
  const int* jnt = m->spring_site + m->spring_adr[o2];
  const double* coef = m->spring_prm + m->spring_adr[o2];
  for (int k = 0; k < m->spring_num[o2]; k++) dJ[m->jnt_dofadr[jnt[k]]] += s * coef[k];
  return row;
}

// 1 if body a is b or below b
static int in_subtree(const physModel* m, int a, int b) {
  for (; a > 0; a = m->body_parentid[a])
    if (a == b) return 1;
  return a == b;
}

int phys_equality_moved_by_body(const physModel* m, int b) {
  if (phys_equality_rows(m) == 0) return 0;
  for (int e = 0; e < m->neq; e++)
    if (m->eq_active[e] && (m->eq_type[e] == PHYS_EQ_CONNECT || m->eq_type[e] == PHYS_EQ_WELD) &&
        (in_subtree(m, m->eq_obj1id[e], b) || in_subtree(m, m->eq_obj2id[e], b)))
      return 1;
  return 0;
}

void phys_equality_curvature(const physModel* m, physData* d, const double* x, double* K) { curvature(m, d, x, 0, K); }

void phys_equality_curvature_t(const physModel* m, physData* d, const double* lambda, double* T) {
  curvature(m, d, lambda, 1, T);
}

void phys_equality_curvature_w(const physModel* m, physData* d, const double* B, double* g) {
  curvature(m, d, B, 2, g);
}
