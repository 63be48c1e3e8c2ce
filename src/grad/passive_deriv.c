// passive_deriv.c - derivatives of the generalized forces that are not inertial: joint springs and dampers,
// springs along site paths (passive tension and the actuators on them), joint motors and the applied world
// forces xfrc_applied, with respect to q (tangent coordinates, grad.h), qvel and ctrl.
//
// Second derivatives of a point: for a point p on body b and dofs i, j on b's chain, the Jacobian column is
// c_i(p) = v_i + w_i x p (cdof_i = (w_i, v_i)). Moving tangent coordinate j moves p by c_j(p) and, when i is
// after j (grad.h), turns cdof_i by cdof_j x cdof_i; both give
//   d c_i / d q_j = w_j x c_i(p)   (i after j),      d c_i / d q_j = w_i x c_j(p)   (j after i, i not after j),
// and the rotation Jacobian columns w_i: d w_i / d q_j = w_j x w_i (i after j), 0 otherwise.
#include <math.h>
#include <string.h>

#include "dyn.h"
#include "grad.h"
#include "model.h"
#include "rot.h"
#include "spatial.h"
#include "tendon_deriv.h"

//---------------------------------------------------------------------------------------------------------
// second derivatives of points and rotations

// H[i*nv + j] += s F . d c_i(p) / d q_j over the chain dofs i, j of body (p a world point of body)
static void point_hessian(const physModel* m, const physData* d, int body, const double p[3],
                          const double F[3], double s, double* H) {
  int nv = m->nv;
  for (int i = phys_body_lastdof(m, body); i >= 0; i = m->dof_parentid[i]) {
    const double *Si = d->cdof + 6 * i, *wi = Si;
    double ci[3], t[3];
    phys_cross3(t, wi, p);
    for (int r = 0; r < 3; r++) ci[r] = Si[3 + r] + t[r];
    int gi = phys_dof_group(m, i);
    for (int j = i; j >= 0; j = m->dof_parentid[j]) {
      const double *Sj = d->cdof + 6 * j, *wj = Sj;
      // i after j: F . (w_j x c_i) = c_i . (F x w_j)
      phys_cross3(t, wj, ci);
      double h = s * phys_dot3(F, t);
      H[(size_t)i * nv + j] += h;
      if (j == i) continue;
      if (phys_dof_group(m, j) == gi) {
        // j after i as well: F . (w_i x c_j)
        double cj[3];
        phys_cross3(t, wj, p);
        for (int r = 0; r < 3; r++) cj[r] = Sj[3 + r] + t[r];
        phys_cross3(t, wi, cj);
        H[(size_t)j * nv + i] += s * phys_dot3(F, t);
      } else {
        // j not after i: d c_j / d q_i = w_j x c_i(p), the same number
        H[(size_t)j * nv + i] += h;
      }
    }
  }
}

// H[i*nv + j] += s T . d w_i / d q_j over the chain dofs of body (w_i the rotation Jacobian columns)
static void rotation_hessian(const physModel* m, const physData* d, int body, const double T[3], double s,
                             double* H) {
  int nv = m->nv;
  for (int i = phys_body_lastdof(m, body); i >= 0; i = m->dof_parentid[i]) {
    const double* wi = d->cdof + 6 * i;
    int gi = phys_dof_group(m, i);
    for (int j = m->dof_parentid[i]; j >= 0; j = m->dof_parentid[j]) {
      const double* wj = d->cdof + 6 * j;
      double t[3];
      phys_cross3(t, wj, wi);
      double h = s * phys_dot3(T, t);
      H[(size_t)i * nv + j] += h;
      if (phys_dof_group(m, j) == gi) H[(size_t)j * nv + i] -= h;   // T . (w_i x w_j) = -h
    }
  }
}

//---------------------------------------------------------------------------------------------------------
// out[j] += s sum_i x_i F . d c_i(p) / d q_j: x' H for point_hessian's H, without forming it
static void point_hessian_vjp(const physModel* m, const physData* d, int body, const double p[3],
                              const double F[3], double s, const double* x, double* out) {
  for (int i = phys_body_lastdof(m, body); i >= 0; i = m->dof_parentid[i]) {
    const double *Si = d->cdof + 6 * i, *wi = Si;
    double ci[3], t[3];
    phys_cross3(t, wi, p);
    for (int r = 0; r < 3; r++) ci[r] = Si[3 + r] + t[r];
    int gi = phys_dof_group(m, i);
    for (int j = i; j >= 0; j = m->dof_parentid[j]) {
      const double *Sj = d->cdof + 6 * j, *wj = Sj;
      // H_ij = s F . (w_j x c_i) (i after j)
      phys_cross3(t, wj, ci);
      double h = s * phys_dot3(F, t);
      out[j] += x[i] * h;
      if (j == i) continue;
      if (phys_dof_group(m, j) == gi) {
        // H_ji = s F . (w_i x c_j) (j after i as well)
        double cj[3];
        phys_cross3(t, wj, p);
        for (int r = 0; r < 3; r++) cj[r] = Sj[3 + r] + t[r];
        phys_cross3(t, wi, cj);
        out[i] += x[j] * s * phys_dot3(F, t);
      } else {
        out[i] += x[j] * h;   // H_ji = H_ij (j not after i)
      }
    }
  }
}

// out[j] += s sum_i x_i T . d w_i / d q_j: x' H for rotation_hessian's H, without forming it
static void rotation_hessian_vjp(const physModel* m, const physData* d, int body, const double T[3], double s,
                                 const double* x, double* out) {
  for (int i = phys_body_lastdof(m, body); i >= 0; i = m->dof_parentid[i]) {
    const double* wi = d->cdof + 6 * i;
    int gi = phys_dof_group(m, i);
    for (int j = m->dof_parentid[i]; j >= 0; j = m->dof_parentid[j]) {
      const double* wj = d->cdof + 6 * j;
      double t[3];
      phys_cross3(t, wj, wi);
      double h = s * phys_dot3(T, t);
      out[j] += x[i] * h;
      if (phys_dof_group(m, j) == gi) out[i] -= x[j] * h;   // H_ji = T . (w_i x w_j) = -h
    }
  }
}

//---------------------------------------------------------------------------------------------------------
// springs along site paths

// the clamped control of actuator a and its slope dclamp/dctrl (0 outside ctrlrange)
static double ctrl_clamped(const physModel* m, const physData* d, int a, double* slope) {
  double c = d->ctrl[a];
  *slope = 1;
  if (m->actuator_ctrllimited[a]) {
    const double* r = m->actuator_ctrlrange + 2 * a;
    if (c < r[0] || c > r[1]) *slope = 0;
    c = c < r[0] ? r[0] : (c > r[1] ? r[1] : c);
  }
  return c;
}

// fixed tendon s, linear in q: L = sum c_k q(j_k), JL = c_k at the joints' dofs, dLdot = 0, K = 0 (the
// caller's); returns L
static double fixed_geometry(const physModel* m, const physData* d, int s, double* JL, double* dLdot) {
  memset(JL, 0, sizeof(double) * (size_t)m->nv);
  if (dLdot) memset(dLdot, 0, sizeof(double) * (size_t)m->nv);
  for (int k = 0; k < m->spring_num[s]; k++) {
    int j = m->spring_site[m->spring_adr[s] + k];
    JL[m->jnt_dofadr[j]] += m->spring_prm[m->spring_adr[s] + k];
  }
  return phys_spring_eval(m, d, s, NULL, 0, NULL);
}

// geometry of spring s to second order, segments d = x_b - x_a (x on bodies; phys_tendon_path) of weight w
// (1 / the divisor of their pulley branch), l = |d|, u = d/l, P = (E - u u')/l, J_d = J(x_b) - J(x_a) (3 x nv):
//   L = sum w l,  JL = dL/dq = sum w u' J_d,  K = d(JL')/dq = sum w (J_d' P J_d + u . dJ_d/dq)   (nv x nv),
//   dLdot = d(JL v)/dq = sum w ((J_d v)' P J_d + v' (u . dJ_d/dq))   (nv; NULL to skip)
// plus, where an end is a tangent point of a wrapped geom, its sliding terms (tendon_deriv.h)
// (a path through sites only: w = 1, the per-site-pair sums)
// Returns L. Scratch: 21 nv + nv^2 from d's arena. A fixed tendon: fixed_geometry.
static double spring_geometry(const physModel* m, physData* d, int s, double* JL, double* K, double* dLdot) {
  if (m->spring_type[s] == PHYS_SPRING_FIXED) {
    memset(K, 0, sizeof(double) * (size_t)m->nv * m->nv);
    return fixed_geometry(m, d, s, JL, dLdot);
  }
  int nv = m->nv;
  physTendonPath p;
  phys_tendon_path(m, s, d->site_xpos, d->geom_xpos, d->geom_xmat, &p);
  size_t mark = phys_stack_mark(d), nn = (size_t)nv * nv;
  double* Ja = phys_stack_alloc(d, 3 * (size_t)nv);
  double* Jd = phys_stack_alloc(d, 3 * (size_t)nv);
  double* Hs = phys_stack_alloc(d, nn);
  double L = 0;
  memset(JL, 0, sizeof(double) * (size_t)nv);
  memset(K, 0, sizeof(double) * nn);
  memset(Hs, 0, sizeof(double) * nn);
  if (dLdot) memset(dLdot, 0, sizeof(double) * (size_t)nv);
  for (int k = 0; k + 1 < p.npoint; k++) {
    double w = p.w[k];   // the segment's weight: 1 / its pulley branch's divisor (0: no segment)
    if (w == 0) continue;
    int ba = p.body[k], bb = p.body[k + 1];
    const double *xa = p.x[k], *xb = p.x[k + 1];
    double u[3] = {xb[0] - xa[0], xb[1] - xa[1], xb[2] - xa[2]};
    double l = phys_normalize3(u);
    L += w * l;
    if (l == 0) continue;   // a zero-length segment has no direction (phys_spring_eval skips it too)
    phys_jac(m, d, xa, ba, Ja, NULL);
    phys_jac(m, d, xb, bb, Jd, NULL);
    for (int i = 0; i < 3 * nv; i++) Jd[i] -= Ja[i];
    // P J_d (3 x nv) into Ja, ddot = J_d v
    double dd[3] = {0, 0, 0};
    for (int r = 0; r < 3; r++)
      for (int j = 0; j < nv; j++) dd[r] += Jd[r * nv + j] * d->qvel[j];
    for (int j = 0; j < nv; j++) {
      double c[3] = {Jd[j], Jd[nv + j], Jd[2 * nv + j]}, uc = phys_dot3(u, c);
      for (int r = 0; r < 3; r++) Ja[r * nv + j] = (c[r] - u[r] * uc) / l;
    }
    for (int i = 0; i < nv; i++) {
      double ci[3] = {Jd[i], Jd[nv + i], Jd[2 * nv + i]};
      JL[i] += w * phys_dot3(u, ci);
      if (ci[0] == 0 && ci[1] == 0 && ci[2] == 0) continue;
      for (int j = 0; j < nv; j++)
        K[(size_t)i * nv + j] += w * (ci[0] * Ja[j] + ci[1] * Ja[nv + j] + ci[2] * Ja[2 * nv + j]);
    }
    if (dLdot)
      for (int j = 0; j < nv; j++) dLdot[j] += w * (dd[0] * Ja[j] + dd[1] * Ja[nv + j] + dd[2] * Ja[2 * nv + j]);
    // tangent points sliding on their geom (tendon_deriv.h): K += G' S, dLdot += S' (G v)
    phys_tendon_slide_add(m, d, s, &p, k, u, w, Ja, K, NULL, NULL, dLdot ? d->qvel : NULL, dLdot);
    // u . dJ_d/dq = H_u(x_b) - H_u(x_a)
    point_hessian(m, d, bb, xb, u, w, Hs);
    point_hessian(m, d, ba, xa, u, -w, Hs);
  }
  for (size_t i = 0; i < nn; i++) K[i] += Hs[i];
  if (dLdot)
    for (int i = 0; i < nv; i++) {
      if (d->qvel[i] == 0) continue;
      for (int j = 0; j < nv; j++) dLdot[j] += d->qvel[i] * Hs[(size_t)i * nv + j];
    }
  phys_stack_free(d, mark);
  return L + p.arcs;   // the wrapped arcs (rigid with their geoms: no first-order term of their own)
}

// spring_geometry without dLdot (grad.h): L, JL (nv) and K = d(JL')/dq (nv x nv) of spring s
double phys_spring_hessian(const physModel* m, physData* d, int s, double* JL, double* K) {
  return spring_geometry(m, d, s, JL, K, NULL);
}

// spring_geometry's quantities as products, no nv x nv matrix: L, JL, Kx = K' x (nv) and dLdot (nv; NULL to
// skip), per segment  K' x = sum (J_d x)' P J_d + x' (u . dJ_d/dq)  (J_d' P J_d is symmetric).
// Returns L. Scratch: 21 nv from d's arena. A fixed tendon: fixed_geometry, Kx = 0.
static double spring_geometry_vjp(const physModel* m, physData* d, int s, const double* x, double* JL,
                                  double* Kx, double* dLdot) {
  if (m->spring_type[s] == PHYS_SPRING_FIXED) {
    memset(Kx, 0, sizeof(double) * (size_t)m->nv);
    return fixed_geometry(m, d, s, JL, dLdot);
  }
  int nv = m->nv;
  physTendonPath p;
  phys_tendon_path(m, s, d->site_xpos, d->geom_xpos, d->geom_xmat, &p);
  size_t mark = phys_stack_mark(d);
  double* Ja = phys_stack_alloc(d, 3 * (size_t)nv);
  double* Jd = phys_stack_alloc(d, 3 * (size_t)nv);
  double L = 0;
  memset(JL, 0, sizeof(double) * (size_t)nv);
  memset(Kx, 0, sizeof(double) * (size_t)nv);
  if (dLdot) memset(dLdot, 0, sizeof(double) * (size_t)nv);
  for (int k = 0; k + 1 < p.npoint; k++) {
    double w = p.w[k];   // as spring_geometry
    if (w == 0) continue;
    int ba = p.body[k], bb = p.body[k + 1];
    const double *xa = p.x[k], *xb = p.x[k + 1];
    double u[3] = {xb[0] - xa[0], xb[1] - xa[1], xb[2] - xa[2]};
    double l = phys_normalize3(u);
    L += w * l;
    if (l == 0) continue;   // no direction (as spring_geometry)
    phys_jac(m, d, xa, ba, Ja, NULL);
    phys_jac(m, d, xb, bb, Jd, NULL);
    for (int i = 0; i < 3 * nv; i++) Jd[i] -= Ja[i];
    // dd = J_d v, dx = J_d x; P J_d (3 x nv) into Ja
    double dd[3] = {0, 0, 0}, dx[3] = {0, 0, 0};
    for (int r = 0; r < 3; r++)
      for (int j = 0; j < nv; j++) {
        dd[r] += Jd[r * nv + j] * d->qvel[j];
        dx[r] += Jd[r * nv + j] * x[j];
      }
    for (int j = 0; j < nv; j++) {
      double c[3] = {Jd[j], Jd[nv + j], Jd[2 * nv + j]}, uc = phys_dot3(u, c);
      JL[j] += w * uc;
      for (int r = 0; r < 3; r++) Ja[r * nv + j] = (c[r] - u[r] * uc) / l;
      Kx[j] += w * (dx[0] * Ja[j] + dx[1] * Ja[nv + j] + dx[2] * Ja[2 * nv + j]);
      if (dLdot) dLdot[j] += w * (dd[0] * Ja[j] + dd[1] * Ja[nv + j] + dd[2] * Ja[2 * nv + j]);
    }
    // tangent points sliding on their geom (tendon_deriv.h): S' (G x), S' (G v)
    phys_tendon_slide_add(m, d, s, &p, k, u, w, Ja, NULL, x, Kx, dLdot ? d->qvel : NULL, dLdot);
    // x' (u . dJ_d/dq) and v' (u . dJ_d/dq) with u . dJ_d/dq = H_u(x_b) - H_u(x_a)
    point_hessian_vjp(m, d, bb, xb, u, w, x, Kx);
    point_hessian_vjp(m, d, ba, xa, u, -w, x, Kx);
    if (dLdot) {
      point_hessian_vjp(m, d, bb, xb, u, w, d->qvel, dLdot);
      point_hessian_vjp(m, d, ba, xa, u, -w, d->qvel, dLdot);
    }
  }
  phys_stack_free(d, mark);
  return L + p.arcs;
}

// the generalized force f = -t JL' of a tension t (t may depend on q, v, u):
// df/dq += -JL' dt/dq - t K, expressed by the caller's parts
static void add_outer(double* D, const double* a, const double* b, double s, int rows, int cols) {
  for (int i = 0; i < rows; i++) {
    if (a[i] == 0) continue;
    for (int j = 0; j < cols; j++) D[(size_t)i * cols + j] += s * a[i] * b[j];
  }
}

//---------------------------------------------------------------------------------------------------------
// passive forces

// joint springs: hinge/slide and free translation -k (q - q_spring): d/dq = -k; ball and free rotation
// -k phi, phi = log(q_spring^-1 q): with q' = q exp(dq/2), phi' = phi + Jr^-1(phi) dq, so d/dq = -k Jr^-1(phi),
// Jr^-1(phi) = E + [phi]/2 + (1/th^2 - (1 + cos th) / (2 th sin th)) [phi]^2, th = |phi|.
// Ji = Jr^-1(phi) (3x3 row-major) of the ball (or free rotation) whose quaternion is at qpos[qa]
static void ball_spring_block(const physModel* m, const physData* d, int qa, double Ji[9]) {
  double qn[4], q0c[4], dq[4], phi[3];
  memcpy(qn, d->qpos + qa, sizeof(qn));
  phys_quat_normalize(qn);
  phys_quat_conj(q0c, m->qpos_spring + qa);
  phys_quat_mul(dq, q0c, qn);
  phys_quat_log(phi, dq);
  double th2 = phys_dot3(phi, phi), th = sqrt(th2);
  double c2 = th < 1e-4 ? 1.0 / 12 + th2 / 720 : 1 / th2 - (1 + cos(th)) / (2 * th * sin(th));
  const double hx[9] = {0, -phi[2], phi[1], phi[2], 0, -phi[0], -phi[1], phi[0], 0};
  for (int r = 0; r < 3; r++)
    for (int c = 0; c < 3; c++)
      Ji[3 * r + c] = (r == c) + c2 * (phi[r] * phi[c] - (r == c) * th2) + 0.5 * hx[3 * r + c];
}

// joint springs: d/dq of every joint's spring force (above), added to dfdq (nv x nv)
static void joint_spring_deriv(const physModel* m, const physData* d, double* dfdq) {
  int nv = m->nv;
  for (int j = 0; j < m->njnt; j++) {
    double k = m->jnt_stiffness[j];
    if (k == 0) continue;
    int qa = m->jnt_qposadr[j], da = m->jnt_dofadr[j], type = m->jnt_type[j];
    if (type == PHYS_JNT_HINGE || type == PHYS_JNT_SLIDE) {
      dfdq[(size_t)da * nv + da] -= k;
      continue;
    }
    if (type == PHYS_JNT_FREE) {
      for (int i = 0; i < 3; i++) dfdq[(size_t)(da + i) * nv + da + i] -= k;
      qa += 3;
      da += 3;
    }
    double Ji[9];
    ball_spring_block(m, d, qa, Ji);
    for (int r = 0; r < 3; r++)
      for (int c = 0; c < 3; c++) dfdq[(size_t)(da + r) * nv + da + c] -= k * Ji[3 * r + c];
  }
}

// reverse mode of the joint springs: q_bar += (df/dq)' f_bar, per joint (a scalar or a 3x3 block)
static void joint_spring_vjp(const physModel* m, const physData* d, const double* f_bar, double* q_bar) {
  for (int j = 0; j < m->njnt; j++) {
    double k = m->jnt_stiffness[j];
    if (k == 0) continue;
    int qa = m->jnt_qposadr[j], da = m->jnt_dofadr[j], type = m->jnt_type[j];
    if (type == PHYS_JNT_HINGE || type == PHYS_JNT_SLIDE) {
      q_bar[da] -= k * f_bar[da];
      continue;
    }
    if (type == PHYS_JNT_FREE) {
      for (int i = 0; i < 3; i++) q_bar[da + i] -= k * f_bar[da + i];
      qa += 3;
      da += 3;
    }
    double Ji[9];
    ball_spring_block(m, d, qa, Ji);
    for (int c = 0; c < 3; c++)
      for (int r = 0; r < 3; r++) q_bar[da + c] -= k * Ji[3 * r + c] * f_bar[da + r];
  }
}

// d qfrc_passive: joint springs (q), dampers -b v (v), spring tensions t = k (L - L0) + b Ldot along the
// paths, f = -t JL' (q, v, and ctrl through the rest lengths L0 = restlength + gear ctrl)
void phys_passive_deriv(const physModel* m, physData* d, double* dfdq, double* dfdv, double* dfdu) {
  int nv = m->nv, nu = m->nu;
  if (m->opt.disableflags & PHYS_DSBL_PASSIVE) return;
  if (dfdq) joint_spring_deriv(m, d, dfdq);
  if (dfdv)
    for (int i = 0; i < nv; i++) dfdv[(size_t)i * nv + i] -= m->dof_damping[i];
  if (m->nspring == 0) return;

  size_t mark = phys_stack_mark(d);
  double* JL = phys_stack_alloc(d, (size_t)nv);
  double* dLdot = phys_stack_alloc(d, (size_t)nv);
  double* K = phys_stack_alloc(d, (size_t)nv * nv);
  double* g = phys_stack_alloc(d, (size_t)nv);
  int act = !(m->opt.disableflags & PHYS_DSBL_ACTUATION);
  for (int s = 0; s < m->nspring; s++) {
    double k = m->spring_stiffness[s], b = m->spring_damping[s];
    double L = spring_geometry(m, d, s, JL, K, dLdot), L0 = m->spring_restlength[s];
    for (int a = 0; act && a < nu; a++) {
      if (m->actuator_trntype[a] != PHYS_TRN_RESTLENGTH || m->actuator_trnid[a] != s) continue;
      double slope, c = ctrl_clamped(m, d, a, &slope);
      L0 += m->actuator_gear[6 * a] * c;
      // df/du = -JL' dt/du = JL' k gear slope
      if (dfdu)
        for (int i = 0; i < nv; i++) dfdu[(size_t)i * nu + a] += JL[i] * k * m->actuator_gear[6 * a] * slope;
    }
    double ldot = 0;
    for (int i = 0; i < nv; i++) ldot += JL[i] * d->qvel[i];
    double t = k * (L - L0) + b * ldot;
    // df/dq = -JL' (k JL + b dLdot) - t K;  df/dv = -b JL' JL
    if (dfdq) {
      for (int j = 0; j < nv; j++) g[j] = k * JL[j] + b * dLdot[j];
      add_outer(dfdq, JL, g, -1, nv, nv);
      for (size_t i = 0; i < (size_t)nv * nv; i++) dfdq[i] -= t * K[i];
    }
    if (dfdv) add_outer(dfdv, JL, JL, -b, nv, nv);
  }
  phys_stack_free(d, mark);
}

// reverse mode of phys_passive, the transpose of phys_passive_deriv applied to f_bar without forming it:
// q_bar += (df/dq)' f_bar, v_bar += (df/dv)' f_bar, u_bar += (df/du)' f_bar; per spring, with s = JL f_bar,
//   q_bar += -(k JL + b dLdot)' s - t K' f_bar,   v_bar += -b JL' s,   u_bar_a += k gear_a slope_a s
void phys_passive_vjp(const physModel* m, physData* d, const double* f_bar, double* q_bar, double* v_bar,
                      double* u_bar) {
  int nv = m->nv, nu = m->nu;
  if (m->opt.disableflags & PHYS_DSBL_PASSIVE) return;
  if (q_bar) joint_spring_vjp(m, d, f_bar, q_bar);
  if (v_bar)
    for (int i = 0; i < nv; i++) v_bar[i] -= m->dof_damping[i] * f_bar[i];
  if (m->nspring == 0) return;

  size_t mark = phys_stack_mark(d);
  double* JL = phys_stack_alloc(d, (size_t)nv);
  double* dLdot = phys_stack_alloc(d, (size_t)nv);
  double* Kf = phys_stack_alloc(d, (size_t)nv);
  int act = !(m->opt.disableflags & PHYS_DSBL_ACTUATION);
  for (int s = 0; s < m->nspring; s++) {
    double k = m->spring_stiffness[s], b = m->spring_damping[s];
    double L = spring_geometry_vjp(m, d, s, f_bar, JL, Kf, q_bar ? dLdot : NULL);
    double L0 = m->spring_restlength[s];
    double sf = 0, ldot = 0;
    for (int i = 0; i < nv; i++) {
      sf += JL[i] * f_bar[i];
      ldot += JL[i] * d->qvel[i];
    }
    for (int a = 0; act && a < nu; a++) {
      if (m->actuator_trntype[a] != PHYS_TRN_RESTLENGTH || m->actuator_trnid[a] != s) continue;
      double slope, c = ctrl_clamped(m, d, a, &slope);
      L0 += m->actuator_gear[6 * a] * c;
      if (u_bar) u_bar[a] += k * m->actuator_gear[6 * a] * slope * sf;
    }
    double t = k * (L - L0) + b * ldot;
    if (q_bar)
      for (int j = 0; j < nv; j++) q_bar[j] -= (k * JL[j] + b * dLdot[j]) * sf + t * Kf[j];
    if (v_bar)
      for (int j = 0; j < nv; j++) v_bar[j] -= b * JL[j] * sf;
  }
  phys_stack_free(d, mark);
}

//---------------------------------------------------------------------------------------------------------
// actuation

// d qfrc / dq of a site actuator's wrench F (force), T (torque) at site s: with F, T fixed in the world the
// point and rotation Hessians; the wrench turns with the site's frame, dF/dq_j = w_j x F (w_j the rotation
// Jacobian column of chain dof j), adding c_i . (w_j x F) + w_i . (w_j x T) (c_i the site point's column)
static void site_wrench_deriv(const physModel* m, physData* d, int s, const double F[3], const double T[3],
                              double* dfdq) {
  int nv = m->nv, body = m->site_bodyid[s];
  const double* p = d->site_xpos + 3 * s;
  point_hessian(m, d, body, p, F, 1, dfdq);
  rotation_hessian(m, d, body, T, 1, dfdq);
  for (int i = phys_body_lastdof(m, body); i >= 0; i = m->dof_parentid[i]) {
    const double* wi = d->cdof + 6 * i;
    double ci[3], t[3];
    phys_cross3(t, wi, p);
    for (int r = 0; r < 3; r++) ci[r] = wi[3 + r] + t[r];
    for (int j = phys_body_lastdof(m, body); j >= 0; j = m->dof_parentid[j]) {
      const double* wj = d->cdof + 6 * j;
      double tf[3], tt[3];
      phys_cross3(tf, wj, F);
      phys_cross3(tt, wj, T);
      dfdq[(size_t)i * nv + j] += phys_dot3(ci, tf) + phys_dot3(wi, tt);
    }
  }
}

// reverse mode of site_wrench_deriv: q_bar += dfdq' f_bar; the turning term is w_j . (F x P + T x W) with
// P = Jp f_bar, W = Jr f_bar
static void site_wrench_vjp(const physModel* m, physData* d, int s, const double F[3], const double T[3],
                            const double* f_bar, double* q_bar) {
  int body = m->site_bodyid[s];
  const double* p = d->site_xpos + 3 * s;
  point_hessian_vjp(m, d, body, p, F, 1, f_bar, q_bar);
  rotation_hessian_vjp(m, d, body, T, 1, f_bar, q_bar);
  double P[3] = {0, 0, 0}, W[3] = {0, 0, 0}, t[3], g[3], h[3];
  for (int i = phys_body_lastdof(m, body); i >= 0; i = m->dof_parentid[i]) {
    const double* wi = d->cdof + 6 * i;
    phys_cross3(t, wi, p);
    for (int r = 0; r < 3; r++) {
      P[r] += f_bar[i] * (wi[3 + r] + t[r]);
      W[r] += f_bar[i] * wi[r];
    }
  }
  phys_cross3(g, F, P);
  phys_cross3(h, T, W);
  for (int r = 0; r < 3; r++) g[r] += h[r];
  for (int j = phys_body_lastdof(m, body); j >= 0; j = m->dof_parentid[j]) q_bar[j] += phys_dot3(d->cdof + 6 * j, g);
}

// the slider-crank length l(z) (phys_slidercrank without its gear) as a function of z = (a, v), a the slider
// site's z axis, v = crank site - slider site: g = dl/dz and H = d2l/dz2 (6 x 6). With b = a'v, s = sqrt(det),
// det = b^2 + r^2 - v'v, beta = 1 - b/s, gamma = (v'v - r^2)/s^3 (l = b - s, g = (beta v, beta a + v/s)):
//   H_aa = gamma v v',  H_av = beta I + gamma v a' - (b/s^3) v v',
//   H_vv = gamma a a' - (b/s^3)(a v' + v a') + I/s + v v'/s^3;
// a broken crank (det <= 0: l = a'v) has H_aa = H_vv = 0, H_av = I. At det -> 0+ the terms grow as 1/s^3 (the
// crank at its dead point: the moment is unbounded there; det = 0 itself takes the broken branch, as 2.2.2)
static void slidercrank_local(const physModel* m, const physData* d, int a, double g[6], double H[36]) {
  int crank = m->actuator_trnid[a], slider = m->actuator_trnid2[a];
  const double *pc = d->site_xpos + 3 * crank, *ps = d->site_xpos + 3 * slider, *R = d->site_xmat + 9 * slider;
  double ax[3] = {R[2], R[5], R[8]}, v[3] = {pc[0] - ps[0], pc[1] - ps[1], pc[2] - ps[2]}, r = m->actuator_cranklength[a];
  double b = phys_dot3(ax, v), vv = phys_dot3(v, v), det = b * b + r * r - vv;
  memset(H, 0, sizeof(double) * 36);
  if (det <= 0) {
    for (int i = 0; i < 3; i++) g[i] = v[i], g[3 + i] = ax[i], H[i * 6 + 3 + i] = H[(3 + i) * 6 + i] = 1;
    return;
  }
  double sd = sqrt(det), s3 = sd * det, beta = 1 - b / sd, gamma = (vv - r * r) / s3, c = b / s3;
  for (int i = 0; i < 3; i++) {
    g[i] = beta * v[i], g[3 + i] = beta * ax[i] + v[i] / sd;
    for (int j = 0; j < 3; j++) {
      double hav = (i == j ? beta : 0) + gamma * v[i] * ax[j] - c * v[i] * v[j];
      H[i * 6 + j] = gamma * v[i] * v[j];
      H[i * 6 + 3 + j] = hav, H[(3 + j) * 6 + i] = hav;
      H[(3 + i) * 6 + 3 + j] = gamma * ax[i] * ax[j] - c * (ax[i] * v[j] + v[i] * ax[j]) + (i == j ? 1 / sd : 0) +
                               v[i] * v[j] / s3;
    }
  }
}

// Jz (6 x nv) = dz/dq of slider-crank a: the a rows w_j x a over the slider body's chain, the v rows
// c_j(crank site) over the crank body's chain minus c_j(slider site) over the slider body's
static void slidercrank_jz(const physModel* m, const physData* d, int a, double* Jz) {
  int nv = m->nv, crank = m->actuator_trnid[a], slider = m->actuator_trnid2[a];
  const double *pc = d->site_xpos + 3 * crank, *ps = d->site_xpos + 3 * slider, *R = d->site_xmat + 9 * slider;
  double ax[3] = {R[2], R[5], R[8]}, t[3];
  memset(Jz, 0, sizeof(double) * 6 * (size_t)nv);
  for (int j = phys_body_lastdof(m, m->site_bodyid[crank]); j >= 0; j = m->dof_parentid[j]) {
    phys_cross3(t, d->cdof + 6 * j, pc);
    for (int r = 0; r < 3; r++) Jz[(size_t)(3 + r) * nv + j] += d->cdof[6 * j + 3 + r] + t[r];
  }
  for (int j = phys_body_lastdof(m, m->site_bodyid[slider]); j >= 0; j = m->dof_parentid[j]) {
    phys_cross3(t, d->cdof + 6 * j, ps);
    for (int r = 0; r < 3; r++) Jz[(size_t)(3 + r) * nv + j] -= d->cdof[6 * j + 3 + r] + t[r];
    phys_cross3(t, d->cdof + 6 * j, ax);
    for (int r = 0; r < 3; r++) Jz[(size_t)r * nv + j] = t[r];
  }
}

// out = K' x (nv, overwritten) for phys_slidercrank_geometry's K at g, H, Jz: Jz' H (Jz x) (H symmetric), the
// fixed-g Hessians' transposes, and the axis' turn sum_i x_i dl/da . (w_i x (w_j x a)) = w_j . (a x (dl/da x W)),
// W = sum_i x_i w_i over the slider body's chain
static void slidercrank_kx(const physModel* m, const physData* d, int a, const double g[6], const double H[36],
                           const double* Jz, const double* x, double* out) {
  int nv = m->nv, crank = m->actuator_trnid[a], slider = m->actuator_trnid2[a], bs = m->site_bodyid[slider];
  const double* R = d->site_xmat + 9 * slider;
  double ax[3] = {R[2], R[5], R[8]}, zx[6] = {0}, hz[6] = {0}, T[3], W[3] = {0, 0, 0}, t[3], u[3];
  for (int k = 0; k < 6; k++)
    for (int i = 0; i < nv; i++) zx[k] += Jz[(size_t)k * nv + i] * x[i];
  for (int k = 0; k < 6; k++)
    for (int l = 0; l < 6; l++) hz[k] += H[k * 6 + l] * zx[l];
  for (int j = 0; j < nv; j++) {
    out[j] = 0;
    for (int k = 0; k < 6; k++) out[j] += Jz[(size_t)k * nv + j] * hz[k];
  }
  point_hessian_vjp(m, d, m->site_bodyid[crank], d->site_xpos + 3 * crank, g + 3, 1, x, out);
  point_hessian_vjp(m, d, bs, d->site_xpos + 3 * slider, g + 3, -1, x, out);
  phys_cross3(T, ax, g);
  rotation_hessian_vjp(m, d, bs, T, 1, x, out);
  for (int i = phys_body_lastdof(m, bs); i >= 0; i = m->dof_parentid[i])
    for (int r = 0; r < 3; r++) W[r] += x[i] * d->cdof[6 * i + r];
  phys_cross3(t, g, W);
  phys_cross3(u, ax, t);
  for (int j = phys_body_lastdof(m, bs); j >= 0; j = m->dof_parentid[j]) out[j] += phys_dot3(d->cdof + 6 * j, u);
}

// slider-crank actuator a's geometry as spring_geometry's (without the gear; grad.h): JL = dl/dq = Jz' g (the
// moment over gear) and, unless NULL, K = dJL/dq = Jz' H Jz + sum_k g_k d2z_k/dq2, the second part the fixed-g
// Hessians: dl/dv . d(c_i(pc) - c_i(ps))/dq_j (point_hessian), (a x dl/da) . dw_i/dq_j (rotation_hessian) and
// the axis' turn dl/da . (w_i x (w_j x a)) (i, j on the slider body's chain); dLd = d(JL . qvel)/dq = K' qvel
void phys_slidercrank_geometry(const physModel* m, physData* d, int a, double* JL, double* K, double* dLd) {
  int nv = m->nv, crank = m->actuator_trnid[a], slider = m->actuator_trnid2[a];
  int bc = m->site_bodyid[crank], bs = m->site_bodyid[slider];
  size_t mark = phys_stack_mark(d);
  double* Jz = phys_stack_alloc(d, 6 * (size_t)nv);
  double g[6], H[36], HJ[6], T[3], ax[3] = {d->site_xmat[9 * slider + 2], d->site_xmat[9 * slider + 5],
                                            d->site_xmat[9 * slider + 8]};
  slidercrank_local(m, d, a, g, H);
  slidercrank_jz(m, d, a, Jz);
  for (int i = 0; i < nv; i++) {
    JL[i] = 0;
    for (int k = 0; k < 6; k++) JL[i] += Jz[(size_t)k * nv + i] * g[k];
  }
  if (K) {
    memset(K, 0, sizeof(double) * (size_t)nv * nv);
    for (int j = 0; j < nv; j++) {   // column j of Jz' H Jz
      for (int k = 0; k < 6; k++) {
        HJ[k] = 0;
        for (int l = 0; l < 6; l++) HJ[k] += H[k * 6 + l] * Jz[(size_t)l * nv + j];
      }
      for (int i = 0; i < nv; i++)
        for (int k = 0; k < 6; k++) K[(size_t)i * nv + j] += Jz[(size_t)k * nv + i] * HJ[k];
    }
    point_hessian(m, d, bc, d->site_xpos + 3 * crank, g + 3, 1, K);
    point_hessian(m, d, bs, d->site_xpos + 3 * slider, g + 3, -1, K);
    phys_cross3(T, ax, g);
    rotation_hessian(m, d, bs, T, 1, K);
    for (int i = phys_body_lastdof(m, bs); i >= 0; i = m->dof_parentid[i])
      for (int j = phys_body_lastdof(m, bs); j >= 0; j = m->dof_parentid[j]) {
        double wa[3], t[3];
        phys_cross3(wa, d->cdof + 6 * j, ax);
        phys_cross3(t, d->cdof + 6 * i, wa);
        K[(size_t)i * nv + j] += phys_dot3(g, t);
      }
  }
  if (dLd) slidercrank_kx(m, d, a, g, H, Jz, d->qvel, dLd);
  phys_stack_free(d, mark);
}

// phys_slidercrank_geometry's reverse mode: JL and Kx = K' x (nv; no nv x nv matrix), dLd = K' qvel (NULL to skip)
static void slidercrank_geometry_vjp(const physModel* m, physData* d, int a, const double* x, double* JL,
                                     double* Kx, double* dLd) {
  int nv = m->nv;
  size_t mark = phys_stack_mark(d);
  double* Jz = phys_stack_alloc(d, 6 * (size_t)nv);
  double g[6], H[36];
  slidercrank_local(m, d, a, g, H);
  slidercrank_jz(m, d, a, Jz);
  for (int i = 0; i < nv; i++) {
    JL[i] = 0;
    for (int k = 0; k < 6; k++) JL[i] += Jz[(size_t)k * nv + i] * g[k];
  }
  slidercrank_kx(m, d, a, g, H, Jz, x, Kx);
  if (dLd) slidercrank_kx(m, d, a, g, H, Jz, d->qvel, dLd);
  phys_stack_free(d, mark);
}

// d force / d input of actuator a is t->gain t->slope; while d->grad_act_input is set (act_deriv.h) an actuator
// with dynamics takes its activation as the input: gain = dforce/dact, slope 1
static void input_terms(const physModel* m, const physData* d, int a, physActuatorTerms* t) {
  if (d->grad_act_input && m->actuator_actadr[a] >= 0) t->gain = t->dact, t->slope = 1;
}

// an actuator on a spring whose force moves with its length L = g Ls and rate Ldot = g Lsdot (a muscle;
// phys_actuator_force's dL, dLdot): f_gen = g JL' f, so beyond the g f K term
//   d f_gen / dq += g^2 JL (dL JL + dLdot dLd)',  d f_gen / dv += g^2 dLdot JL JL'   (dLd = d(JL v)/dq)
static void spring_length_terms(int nv, double g, const physActuatorTerms* t, const double* JL, const double* dLd,
                                double* dfdq, double* dfdv) {
  for (int i = 0; i < nv; i++) {
    double gi = g * g * JL[i];
    if (gi == 0) continue;
    for (int j = 0; j < nv; j++) {
      if (dfdq) dfdq[(size_t)i * nv + j] += gi * (t->dL * JL[j] + t->dLdot * dLd[j]);
      if (dfdv) dfdv[(size_t)i * nv + j] += gi * t->dLdot * JL[j];
    }
  }
}

// d qfrc_actuator with f = force (phys_actuator_force: (g0 + g1 L + g2 Ldot) c + b0 + b1 L + b2 Ldot):
// joint actuators gear f on the joint's dofs: df/du = gear gain slope, and on a hinge or slide with
// L = gear q, Ldot = gear qdot: df/dq = gear^2 dL, df/dv = gear^2 dLdot; actuators on springs f_gen = JL'
// gear f (tension -gear f, f = gain c + b0): df/du = JL' gear gain slope, df/dq = gear f K; on sites f_gen =
// moment f (phys_site_moment): df/du = moment gain slope, df/dq = site_wrench_deriv
void phys_actuation_deriv(const physModel* m, physData* d, double* dfdq, double* dfdv, double* dfdu) {
  int nv = m->nv, nu = m->nu;
  if (m->opt.disableflags & PHYS_DSBL_ACTUATION) return;
  size_t mark = phys_stack_mark(d);
  double* JL = phys_stack_alloc(d, (size_t)nv);
  double* K = phys_stack_alloc(d, (size_t)nv * nv);
  double* dLd = phys_stack_alloc(d, (size_t)nv);
  for (int a = 0; a < nu; a++) {
    if (m->actuator_trntype[a] == PHYS_TRN_RESTLENGTH) continue;
    physActuatorTerms t;
    double f = phys_actuator_force(m, d, a, &t);
    input_terms(m, d, a, &t);
    const double* gear = m->actuator_gear + 6 * a;
    int id = m->actuator_trnid[a];
    if (m->actuator_trntype[a] == PHYS_TRN_JOINT) {
      int type = m->jnt_type[id], da = m->jnt_dofadr[id];
      int n = type == PHYS_JNT_FREE ? 6 : (type == PHYS_JNT_BALL ? 3 : 1);
      if (dfdu)
        for (int k = 0; k < n; k++) dfdu[(size_t)(da + k) * nu + a] += gear[k] * t.gain * t.slope;
      if (dfdq) dfdq[(size_t)da * nv + da] += gear[0] * gear[0] * t.dL;
      if (dfdv) dfdv[(size_t)da * nv + da] += gear[0] * gear[0] * t.dLdot;
    } else if (m->actuator_trntype[a] == PHYS_TRN_SITE) {
      if (dfdu) {
        phys_site_moment(m, d, a, gear, JL);
        for (int i = 0; i < nv; i++) dfdu[(size_t)i * nu + a] += JL[i] * t.gain * t.slope;
      }
      double F[3], T[3];
      phys_site_wrench(m, d, a, f, F, T);
      if (dfdq) site_wrench_deriv(m, d, id, F, T, dfdq);
    } else {
      if (m->actuator_trntype[a] == PHYS_TRN_SLIDERCRANK)   // f_gen = gear JL f as on a spring
        phys_slidercrank_geometry(m, d, a, JL, K, t.dL != 0 || t.dLdot != 0 ? dLd : NULL);
      else
        spring_geometry(m, d, id, JL, K, t.dL != 0 || t.dLdot != 0 ? dLd : NULL);
      if (dfdu)
        for (int i = 0; i < nv; i++) dfdu[(size_t)i * nu + a] += JL[i] * gear[0] * t.gain * t.slope;
      if (dfdq)
        for (size_t i = 0; i < (size_t)nv * nv; i++) dfdq[i] += gear[0] * f * K[i];
      if (t.dL != 0 || t.dLdot != 0) spring_length_terms(nv, gear[0], &t, JL, dLd, dfdq, dfdv);
    }
  }
  phys_stack_free(d, mark);
}

// reverse mode of phys_actuation: the transpose of phys_actuation_deriv applied to f_bar
void phys_actuation_vjp(const physModel* m, physData* d, const double* f_bar, double* q_bar, double* v_bar,
                        double* u_bar) {
  int nv = m->nv, nu = m->nu;
  if (m->opt.disableflags & PHYS_DSBL_ACTUATION) return;
  size_t mark = phys_stack_mark(d);
  double* JL = phys_stack_alloc(d, (size_t)nv);
  double* Kf = phys_stack_alloc(d, (size_t)nv);
  double* dLd = phys_stack_alloc(d, (size_t)nv);
  for (int a = 0; a < nu; a++) {
    if (m->actuator_trntype[a] == PHYS_TRN_RESTLENGTH) continue;
    physActuatorTerms t;
    double f = phys_actuator_force(m, d, a, &t);
    input_terms(m, d, a, &t);
    const double* gear = m->actuator_gear + 6 * a;
    int id = m->actuator_trnid[a];
    if (m->actuator_trntype[a] == PHYS_TRN_JOINT) {
      int type = m->jnt_type[id], da = m->jnt_dofadr[id];
      int n = type == PHYS_JNT_FREE ? 6 : (type == PHYS_JNT_BALL ? 3 : 1);
      if (u_bar)
        for (int k = 0; k < n; k++) u_bar[a] += gear[k] * t.gain * t.slope * f_bar[da + k];
      if (q_bar) q_bar[da] += gear[0] * gear[0] * t.dL * f_bar[da];
      if (v_bar) v_bar[da] += gear[0] * gear[0] * t.dLdot * f_bar[da];
    } else if (m->actuator_trntype[a] == PHYS_TRN_SITE) {
      if (u_bar) {
        phys_site_moment(m, d, a, gear, JL);
        for (int i = 0; i < nv; i++) u_bar[a] += JL[i] * t.gain * t.slope * f_bar[i];
      }
      double F[3], T[3];
      phys_site_wrench(m, d, a, f, F, T);
      if (q_bar) site_wrench_vjp(m, d, id, F, T, f_bar, q_bar);
    } else {
      int moves = t.dL != 0 || t.dLdot != 0;
      if (m->actuator_trntype[a] == PHYS_TRN_SLIDERCRANK)
        slidercrank_geometry_vjp(m, d, a, f_bar, JL, Kf, moves ? dLd : NULL);
      else
        spring_geometry_vjp(m, d, id, f_bar, JL, Kf, moves ? dLd : NULL);
      if (u_bar)
        for (int i = 0; i < nv; i++) u_bar[a] += JL[i] * gear[0] * t.gain * t.slope * f_bar[i];
      if (q_bar)
        for (int i = 0; i < nv; i++) q_bar[i] += gear[0] * f * Kf[i];
      // the length terms' transpose: s = JL . f_bar, q_bar += g^2 s (dL JL + dLdot dLd), v_bar += g^2 dLdot s JL
      double sf = 0, g2 = gear[0] * gear[0];
      for (int i = 0; moves && i < nv; i++) sf += JL[i] * f_bar[i];
      for (int i = 0; moves && i < nv; i++) {
        if (q_bar) q_bar[i] += g2 * sf * (t.dL * JL[i] + t.dLdot * dLd[i]);
        if (v_bar) v_bar[i] += g2 * sf * t.dLdot * JL[i];
      }
    }
  }
  phys_stack_free(d, mark);
}

//---------------------------------------------------------------------------------------------------------
// applied forces

// d/dq of sum_b Jp(xipos_b)' F_b + Jr_b' T_b: the point's and the rotation's second derivatives
void phys_xfrc_deriv(const physModel* m, physData* d, double* dfdq) {
  for (int b = 1; b < m->nbody; b++) {
    const double* f = d->xfrc_applied + 6 * b;
    if (f[0] == 0 && f[1] == 0 && f[2] == 0 && f[3] == 0 && f[4] == 0 && f[5] == 0) continue;
    point_hessian(m, d, b, d->xipos + 3 * b, f, 1, dfdq);
    rotation_hessian(m, d, b, f + 3, 1, dfdq);
  }
}

// reverse mode of the applied forces: q_bar += (d (sum_b J_b' xfrc_applied_b) / dq)' f_bar
void phys_xfrc_vjp(const physModel* m, physData* d, const double* f_bar, double* q_bar) {
  for (int b = 1; b < m->nbody; b++) {
    const double* f = d->xfrc_applied + 6 * b;
    if (f[0] == 0 && f[1] == 0 && f[2] == 0 && f[3] == 0 && f[4] == 0 && f[5] == 0) continue;
    point_hessian_vjp(m, d, b, d->xipos + 3 * b, f, 1, f_bar, q_bar);
    rotation_hessian_vjp(m, d, b, f + 3, 1, f_bar, q_bar);
  }
}

