// jac.c - Jacobians of body-attached points and rotations from cdof (world frame), and the transposed
// products that map world forces on bodies to generalized forces.
#include <string.h>

#include "dyn.h"
#include "rot.h"
#include "spatial.h"

// walk up from body until a body with dofs is found; its last dof starts the dof_parentid chain
int phys_body_lastdof(const physModel* m, int body) {
  while (body > 0 && m->body_dofnum[body] == 0) body = m->body_parentid[body];
  if (body <= 0) return -1;
  return m->body_dofadr[body] + m->body_dofnum[body] - 1;
}

// both chains descend (parents precede children): a merge of the two walks up
int phys_chain_union(const physModel* m, int a, int b, int* s) {
  int n = 0;
  while (a >= 0 || b >= 0) {
    int k = a > b ? a : b;
    s[n++] = k;
    if (a == k) a = m->dof_parentid[a];
    if (b == k) b = m->dof_parentid[b];
  }
  return n;
}

// for each dof j on the chain: jacr_j = cdof_ang, jacp_j = cdof_lin + cdof_ang x point
void phys_jac(const physModel* m, const physData* d, const double point[3], int body, double* jacp,
              double* jacr) {
  int nv = m->nv;
  if (jacp) memset(jacp, 0, 3 * sizeof(double) * (size_t)nv);
  if (jacr) memset(jacr, 0, 3 * sizeof(double) * (size_t)nv);
  for (int j = phys_body_lastdof(m, body); j >= 0; j = m->dof_parentid[j]) {
    const double* cd = d->cdof + 6 * j;
    if (jacr)
      for (int i = 0; i < 3; i++) jacr[i * nv + j] = cd[i];
    if (jacp) {
      double t[3];
      phys_cross3(t, cd, point);
      for (int i = 0; i < 3; i++) jacp[i * nv + j] = cd[3 + i] + t[i];
    }
  }
}

// site position and rotation jacobians
void phys_jac_site(const physModel* m, const physData* d, int s, double* jacp, double* jacr) {
  phys_jac(m, d, d->site_xpos + 3 * s, m->site_bodyid[s], jacp, jacr);
}

// centre-of-mass jacobian
void phys_jac_com(const physModel* m, const physData* d, int body, double* jacp) {
  phys_jac(m, d, d->xipos + 3 * body, body, jacp, NULL);
}

// qfrc_j += cdof_j . (point x force + torque, force) along the dof chain of body
void phys_apply_force(const physModel* m, const physData* d, double* qfrc, int body, const double point[3],
                      const double force[3], const double torque[3]) {
  double f[6];
  phys_cross3(f, point, force);
  if (torque)
    for (int i = 0; i < 3; i++) f[i] += torque[i];
  phys_copy3(f + 3, force);
  for (int j = phys_body_lastdof(m, body); j >= 0; j = m->dof_parentid[j])
    qfrc[j] += phys_dot6(d->cdof + 6 * j, f);
}

// v = v_O + w x point
void phys_point_velocity(double res[3], const physData* d, int body, const double point[3]) {
  const double* v = d->cvel + 6 * body;
  phys_cross3(res, v, point);
  for (int i = 0; i < 3; i++) res[i] += v[3 + i];
}
