// test_passive.c - passive forces as minus the gradient of the spring potential energy (finite
// differences along each dof), damping against finite-difference length rates, actuation.
#include "dyn/dyn_models.h"
#include "test.h"

// path length of spring s from the site positions
static double path_length(const physModel* m, const physData* d, int s) {
  double L = 0;
  for (int k = 0; k + 1 < m->spring_num[s]; k++) {
    const double* a = d->site_xpos + 3 * m->spring_site[m->spring_adr[s] + k];
    const double* b = d->site_xpos + 3 * m->spring_site[m->spring_adr[s] + k + 1];
    double v[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
    L += phys_norm3(v);
  }
  return L;
}

// clamped ctrl
static double ctrl_of(const physModel* m, const physData* d, int a) {
  return fmin(fmax(d->ctrl[a], m->actuator_ctrlrange[2 * a]), m->actuator_ctrlrange[2 * a + 1]);
}

// rest length of spring s including rest-length actuators
static double rest_length(const physModel* m, const physData* d, int s) {
  double L0 = m->spring_restlength[s];
  for (int a = 0; a < m->nu; a++)
    if (m->actuator_trntype[a] == PHYS_TRN_RESTLENGTH && m->actuator_trnid[a] == s)
      L0 += m->actuator_gear[6 * a] * ctrl_of(m, d, a);
  return L0;
}

// V = sum_joints 0.5 k |q - q_spring|^2 (ball/free rotation: rotation vector of q_spring^-1 q)
//   + sum_springs 0.5 k (L - L0)^2
static double energy(const physModel* m, physData* d, const double* qpos) {
  memcpy(d->qpos, qpos, sizeof(double) * m->nq);
  phys_kinematics(m, d);
  double V = 0;
  for (int j = 0; j < m->njnt; j++) {
    const double *q = qpos + m->jnt_qposadr[j], *q0 = m->qpos_spring + m->jnt_qposadr[j];
    double k = m->jnt_stiffness[j], e2 = 0;
    int t = m->jnt_type[j];
    if (t == PHYS_JNT_FREE) {
      for (int i = 0; i < 3; i++) e2 += (q[i] - q0[i]) * (q[i] - q0[i]);
      q += 3;
      q0 += 3;
    }
    if (t == PHYS_JNT_FREE || t == PHYS_JNT_BALL) {
      double c[4], dq[4], v[3], qn[4] = {q[0], q[1], q[2], q[3]};
      phys_quat_normalize(qn);
      phys_quat_conj(c, q0);
      phys_quat_mul(dq, c, qn);
      phys_quat_log(v, dq);
      e2 += phys_dot3(v, v);
    } else {
      e2 = (q[0] - q0[0]) * (q[0] - q0[0]);
    }
    V += 0.5 * k * e2;
  }
  for (int s = 0; s < m->nspring; s++) {
    double x = path_length(m, d, s) - rest_length(m, d, s);
    V += 0.5 * m->spring_stiffness[s] * x * x;
  }
  return V;
}

// dL_s/dq_j and the length rate along qvel by central differences
static void fd_lengths(const physModel* m, const physData* d, physData* w, double* dL, double* Ldot) {
  const double h = 1e-6;
  int nv = m->nv;
  double* e = calloc(nv + 1, sizeof(double));
  for (int j = 0; j <= nv; j++) {
    const double* dir = d->qvel;
    if (j < nv) {
      memset(e, 0, sizeof(double) * nv);
      e[j] = 1;
      dir = e;
    }
    double Lp[8], Lm[8];
    for (int sgn = 0; sgn < 2; sgn++) {
      memcpy(w->qpos, d->qpos, sizeof(double) * m->nq);
      phys_integrate_pos(m, w->qpos, dir, sgn ? -h : h);
      phys_kinematics(m, w);
      for (int s = 0; s < m->nspring; s++) (sgn ? Lm : Lp)[s] = path_length(m, w, s);
    }
    for (int s = 0; s < m->nspring; s++) {
      double g = (Lp[s] - Lm[s]) / (2 * h);
      if (j < nv) dL[s * nv + j] = g;
      else Ldot[s] = g;
    }
  }
  free(e);
}

static void test_springs(uint64_t seed, int with_free) {
  physRng r;
  phys_rng_seed(&r, seed);
  physModel* m = tm_tree(seed, with_free);
  physData *d = phys_make_data(m), *w = phys_make_data(m);
  int nv = m->nv;
  double* q = malloc(sizeof(double) * m->nq);
  double *e = calloc(nv, sizeof(double)), *dL = malloc(sizeof(double) * nv * m->nspring), Ldot[8];
  CHECK(m->nspring == 2 && m->nu >= 4);
  for (int trial = 0; trial < 3; trial++) {
    tm_rand_state(m, d, &r, 1);
    for (int a = 0; a < m->nu; a++) d->ctrl[a] = phys_rng_range(&r, -1.5, 1.5);
    // springs only (zero velocity): qfrc_passive == -dV/dq along each tangent direction
    memset(d->qvel, 0, sizeof(double) * nv);
    tm_forward_kin(m, d);
    phys_passive(m, d);
    double* f = malloc(sizeof(double) * nv);
    memcpy(f, d->qfrc_passive, sizeof(double) * nv);
    for (int s = 0; s < m->nspring; s++) CHECK_NEAR(d->spring_length[s], path_length(m, d, s), 1e-14);
    const double h = 1e-6;
    double err = 0, scale = 0;
    memcpy(q, d->qpos, sizeof(double) * m->nq);
    for (int j = 0; j < nv; j++) {
      memset(e, 0, sizeof(double) * nv);
      e[j] = 1;
      double qp[64], qm[64];
      memcpy(qp, q, sizeof(double) * m->nq);
      memcpy(qm, q, sizeof(double) * m->nq);
      phys_integrate_pos(m, qp, e, h);
      phys_integrate_pos(m, qm, e, -h);
      memcpy(w->ctrl, d->ctrl, sizeof(double) * m->nu);  // same controls for the rest lengths
      double g = (energy(m, w, qp) - energy(m, w, qm)) / (2 * h);
      err = fmax(err, fabs(f[j] + g));
      scale = fmax(scale, fabs(g));
    }
    CHECK_MSG(err < 1e-7 * fmax(1, scale), "seed %d trial %d: -dV/dq error %g (scale %g)", (int)seed, trial, err, scale);
    // velocity terms: with stiffness removed, qfrc = -b v - sum_s b_s Ldot_s dL_s/dq
    tm_rand_state(m, d, &r, 2);
    memcpy(d->qpos, q, sizeof(double) * m->nq);
    tm_forward_kin(m, d);
    physModel* m2 = phys_copy_model(m);
    memset(m2->jnt_stiffness, 0, sizeof(double) * m->njnt);
    memset(m2->spring_stiffness, 0, sizeof(double) * m->nspring);
    phys_passive(m2, d);
    fd_lengths(m, d, w, dL, Ldot);
    for (int s = 0; s < m->nspring; s++) {
      CHECK_NEAR(d->spring_velocity[s], Ldot[s], 1e-8);
      CHECK_NEAR(d->spring_force[s], m->spring_damping[s] * Ldot[s], 1e-8);
    }
    err = 0;
    for (int j = 0; j < nv; j++) {
      double ref = -m->dof_damping[j] * d->qvel[j];
      for (int s = 0; s < m->nspring; s++) ref -= m->spring_damping[s] * Ldot[s] * dL[s * nv + j];
      err = fmax(err, fabs(d->qfrc_passive[j] - ref));
    }
    CHECK_MSG(err < 1e-7, "damping error %g", err);
    // tension with stiffness and damping and a rest-length actuator
    phys_passive(m, d);
    for (int s = 0; s < m->nspring; s++)
      CHECK_NEAR(d->spring_force[s], m->spring_stiffness[s] * (path_length(m, d, s) - rest_length(m, d, s)) +
                                         m->spring_damping[s] * Ldot[s], 1e-7);
    // actuation: joint motors gear*ctrl on the joint's dofs, spring motor gear*ctrl*dL/dq
    phys_actuation(m, d);
    double* ref = calloc(nv, sizeof(double));
    for (int a = 0; a < m->nu; a++) {
      double c = ctrl_of(m, d, a);
      const double* gear = m->actuator_gear + 6 * a;
      int id = m->actuator_trnid[a];
      if (m->actuator_trntype[a] == PHYS_TRN_JOINT) {
        int t = m->jnt_type[id], n = t == PHYS_JNT_FREE ? 6 : t == PHYS_JNT_BALL ? 3 : 1;
        for (int k = 0; k < n; k++) ref[m->jnt_dofadr[id] + k] += gear[k] * c;
      } else if (m->actuator_trntype[a] == PHYS_TRN_SPRING) {
        for (int j = 0; j < nv; j++) ref[j] += gear[0] * c * dL[id * nv + j];
      }
    }
    err = 0;
    for (int j = 0; j < nv; j++) err = fmax(err, fabs(d->qfrc_actuator[j] - ref[j]));
    CHECK_MSG(err < 1e-7, "actuation error %g", err);
    // disable flags
    m->opt.disableflags = PHYS_DSBL_PASSIVE | PHYS_DSBL_ACTUATION;
    phys_passive(m, d);
    phys_actuation(m, d);
    for (int j = 0; j < nv; j++) CHECK(d->qfrc_passive[j] == 0 && d->qfrc_actuator[j] == 0);
    m->opt.disableflags = 0;
    free(ref);
    free(f);
    phys_free_model(m2);
  }
  free(q);
  free(e);
  free(dL);
  phys_free_data(d);
  phys_free_data(w);
  phys_free_model(m);
}

int main(void) {
  test_springs(1, 1);
  test_springs(2, 0);
  return test_done();
}
