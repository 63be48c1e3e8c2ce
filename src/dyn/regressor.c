// regressor.c - joint-torque regressor: inverse dynamics is linear in each body's 10 inertial parameters
// pi_b = (m, m c (3), I (xx yy zz xy xz yz)) about the body origin in the body frame: tau = Y pi.
#include <string.h>

#include "dyn.h"
#include "rot.h"
#include "spatial.h"

// pi = (m, m c, R diag(inertia) R' + m(|c|^2 E - c c')), R = mat(iquat), c = ipos
void phys_inertial_params(const physModel* m, int body, double pi[10]) {
  double R[9], Ic[6];
  phys_quat2mat(R, m->body_iquat + 4 * body);
  phys_sym3_rot_diag(Ic, R, m->body_inertia + 3 * body);
  phys_inert_from_com(pi, m->body_mass[body], m->body_ipos + 3 * body, Ic);
}

// body accelerations as in phys_rnea: cacc_b = cacc_parent + sum_j cdof_dot_j qvel_j + cdof_j qacc_j
static void body_accelerations(const physModel* m, const physData* d, const double* qacc, double* cacc) {
  memset(cacc, 0, 6 * sizeof(double));
  if (!(m->opt.disableflags & PHYS_DSBL_GRAVITY))
    for (int i = 0; i < 3; i++) cacc[3 + i] = -m->opt.gravity[i];
  for (int b = 1; b < m->nbody; b++) {
    double* a = cacc + 6 * b;
    memcpy(a, cacc + 6 * m->body_parentid[b], 6 * sizeof(double));
    int da = m->body_dofadr[b], nd = m->body_dofnum[b];
    for (int j = da; j < da + nd; j++)
      for (int i = 0; i < 6; i++)
        a[i] += d->cdof_dot[6 * j + i] * d->qvel[j] + d->cdof[6 * j + i] * (qacc ? qacc[j] : 0);
  }
}

// world force columns F (10 x 6) of body b: in body coordinates f_B = I(e_k) a_B + v_B x* (I(e_k) v_B)
// (a packed inertia in the body frame has exactly the layout of pi), then mapped to the world
static void body_force_columns(const physData* d, int b, const double* cacc, double F[60]) {
  const double *R = d->xmat + 9 * b, *p = d->xpos + 3 * b;
  double aB[6], vB[6];
  phys_motion_to_local(aB, R, p, cacc + 6 * b);
  phys_motion_to_local(vB, R, p, d->cvel + 6 * b);
  for (int k = 0; k < 10; k++) {
    double e[10] = {0}, f[6], h[6], t[6];
    e[k] = 1;
    phys_inert_mul(f, e, aB);
    phys_inert_mul(h, e, vB);
    phys_cross_force(t, vB, h);
    for (int i = 0; i < 6; i++) f[i] += t[i];
    phys_force_to_world(F + 6 * k, R, p, f);
  }
}

// Y (nv x 10(nbody-1), row-major): Y[j, 10(b-1)+k] = cdof_j . F_b,k for every dof j on b's chain
void phys_regressor(const physModel* m, physData* d, const double* qacc, double* Y) {
  int ncol = 10 * (m->nbody - 1);
  size_t mark = phys_stack_mark(d);
  double* cacc = phys_stack_alloc(d, 6 * (size_t)m->nbody);
  memset(Y, 0, sizeof(double) * (size_t)m->nv * ncol);
  body_accelerations(m, d, qacc, cacc);
  for (int b = 1; b < m->nbody; b++) {
    double F[60];
    body_force_columns(d, b, cacc, F);
    for (int j = phys_body_lastdof(m, b); j >= 0; j = m->dof_parentid[j]) {
      double* y = Y + (size_t)j * ncol + 10 * (b - 1);
      for (int k = 0; k < 10; k++) y[k] = phys_dot6(d->cdof + 6 * j, F + 6 * k);
    }
  }
  phys_stack_free(d, mark);
}
