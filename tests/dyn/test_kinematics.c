// test_kinematics.c - forward kinematics: analytic pendulum, an independent 4x4-matrix composition of
// the joints, joint anchors/axes invariant under their own joint's motion, geom/site frames.
#include "dyn/dyn_models.h"
#include "test.h"

// 4x4 homogeneous transforms, row-major
static void T_mul(double res[16], const double A[16], const double B[16]) {
  double t[16];
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 4; j++) {
      t[4 * i + j] = 0;
      for (int k = 0; k < 4; k++) t[4 * i + j] += A[4 * i + k] * B[4 * k + j];
    }
  memcpy(res, t, sizeof(t));
}

// T = [R p; 0 1]
static void T_make(double T[16], const double R[9], const double p[3]) {
  memset(T, 0, 16 * sizeof(double));
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 3; j++) T[4 * i + j] = R ? R[3 * i + j] : (i == j);
    T[4 * i + 3] = p ? p[i] : 0;
  }
  T[15] = 1;
}

// Rodrigues: R = I + sin(t) K + (1 - cos(t)) K^2 for unit axis a (independent of the quaternion code)
static void rodrigues(double R[9], const double axis[3], double t) {
  double a[3] = {axis[0], axis[1], axis[2]};
  phys_normalize3(a);
  double K[9] = {0, -a[2], a[1], a[2], 0, -a[0], -a[1], a[0], 0}, K2[9];
  phys_mat_mul3(K2, K, K);
  for (int i = 0; i < 9; i++) R[i] = (i % 4 == 0) + sin(t) * K[i] + (1 - cos(t)) * K2[i];
}

// rotation about an anchor: Trans(p) R Trans(-p)
static void T_about(double T[16], const double R[9], const double p[3]) {
  double A[16], B[16], mp[3] = {-p[0], -p[1], -p[2]};
  T_make(A, NULL, p);
  T_make(B, R, NULL);
  T_mul(T, A, B);
  T_make(B, NULL, mp);
  T_mul(T, T, B);
}

// independent body poses by 4x4 products: T_b = T_parent * T(pos, quat) * prod_joints T_j
static void reference_poses(const physModel* m, const physData* d, double* T) {
  T_make(T, NULL, NULL);
  for (int b = 1; b < m->nbody; b++) {
    double R[9], L[16];
    phys_quat2mat(R, m->body_quat + 4 * b);
    T_make(L, R, m->body_pos + 3 * b);
    T_mul(T + 16 * b, T + 16 * m->body_parentid[b], L);
    for (int j = m->body_jntadr[b]; j >= 0 && j < m->body_jntadr[b] + m->body_jntnum[b]; j++) {
      const double* q = d->qpos + m->jnt_qposadr[j];
      double q0 = m->qpos0[m->jnt_qposadr[j]], J[16];
      switch (m->jnt_type[j]) {
        case PHYS_JNT_FREE: {
          double qn[4] = {q[3], q[4], q[5], q[6]};
          phys_quat_normalize(qn);
          phys_quat2mat(R, qn);
          T_make(T + 16 * b, R, q);
          continue;
        }
        case PHYS_JNT_BALL: {
          double qn[4] = {q[0], q[1], q[2], q[3]};
          phys_quat_normalize(qn);
          phys_quat2mat(R, qn);
          T_about(J, R, m->jnt_pos + 3 * j);
          break;
        }
        case PHYS_JNT_HINGE:
          rodrigues(R, m->jnt_axis + 3 * j, q[0] - q0);
          T_about(J, R, m->jnt_pos + 3 * j);
          break;
        default: {
          double p[3];
          for (int i = 0; i < 3; i++) p[i] = m->jnt_axis[3 * j + i] * (q[0] - q0);
          T_make(J, NULL, p);
        }
      }
      T_mul(T + 16 * b, T + 16 * b, J);
    }
  }
}

// pendulum: com at (-L sin t, 0, -L cos t) for a rotation t about +y
static void test_pendulum(void) {
  physModel* m = tm_pendulum();
  physData* d = phys_make_data(m);
  for (int k = 0; k < 5; k++) {
    double t = -1.3 + 0.7 * k;
    d->qpos[0] = t;
    phys_kinematics(m, d);
    CHECK_NEAR(d->xipos[3], -0.7 * sin(t), 1e-14);
    CHECK_NEAR(d->xipos[4], 0, 1e-14);
    CHECK_NEAR(d->xipos[5], -0.7 * cos(t), 1e-14);
  }
  phys_free_data(d);
  phys_free_model(m);
}

// tree with every joint type, several hinges per body: compare to the 4x4 composition
static void test_tree_reference(void) {
  physRng r;
  phys_rng_seed(&r, 7);
  physModel* m = tm_tree(11, 1);
  physData* d = phys_make_data(m);
  double* T = malloc(16 * sizeof(double) * (size_t)m->nbody);
  for (int trial = 0; trial < 20; trial++) {
    tm_rand_state(m, d, &r, 1);
    phys_kinematics(m, d);
    reference_poses(m, d, T);
    double err = 0;
    for (int b = 0; b < m->nbody; b++)
      for (int i = 0; i < 3; i++) {
        err = fmax(err, fabs(d->xpos[3 * b + i] - T[16 * b + 4 * i + 3]));
        for (int k = 0; k < 3; k++) err = fmax(err, fabs(d->xmat[9 * b + 3 * i + k] - T[16 * b + 4 * i + k]));
      }
    CHECK_MSG(err < 1e-13, "trial %d: pose error %g", trial, err);
    // quaternion and matrix agree
    for (int b = 0; b < m->nbody; b++) {
      double R[9];
      phys_quat2mat(R, d->xquat + 4 * b);
      for (int i = 0; i < 9; i++) CHECK_NEAR(R[i], d->xmat[9 * b + i], 1e-14);
    }
    // inertial, geom-free site frames: x = xpos + R local
    for (int s = 0; s < m->nsite; s++) {
      int b = m->site_bodyid[s];
      double x[3];
      phys_mat_vec3(x, d->xmat + 9 * b, m->site_pos + 3 * s);
      for (int i = 0; i < 3; i++) CHECK_NEAR(d->site_xpos[3 * s + i], x[i] + d->xpos[3 * b + i], 1e-14);
    }
    for (int b = 0; b < m->nbody; b++) {
      double x[3], Ri[9], R[9];
      phys_mat_vec3(x, d->xmat + 9 * b, m->body_ipos + 3 * b);
      phys_quat2mat(Ri, m->body_iquat + 4 * b);
      phys_mat_mul3(R, d->xmat + 9 * b, Ri);
      for (int i = 0; i < 3; i++) CHECK_NEAR(d->xipos[3 * b + i], x[i] + d->xpos[3 * b + i], 1e-14);
      for (int i = 0; i < 9; i++) CHECK_NEAR(d->ximat[9 * b + i], R[i], 1e-14);
    }
  }
  free(T);
  phys_free_data(d);
  phys_free_model(m);
}

// a hinge's anchor and axis do not move when that joint alone moves; a slide's axis is fixed
static void test_anchor_invariance(void) {
  physRng r;
  phys_rng_seed(&r, 3);
  physModel* m = tm_tree(5, 1);
  physData* d = phys_make_data(m);
  tm_rand_state(m, d, &r, 1);
  for (int j = 0; j < m->njnt; j++) {
    int t = m->jnt_type[j];
    if (t != PHYS_JNT_HINGE && t != PHYS_JNT_SLIDE) continue;
    phys_kinematics(m, d);
    double a0[3], x0[3], xb0[3];
    int b = m->jnt_bodyid[j];
    phys_copy3(a0, d->xanchor + 3 * j);
    phys_copy3(x0, d->xaxis + 3 * j);
    phys_copy3(xb0, d->xpos + 3 * b);
    d->qpos[m->jnt_qposadr[j]] += 0.4;
    phys_kinematics(m, d);
    double moved = 0;
    for (int i = 0; i < 3; i++) {
      CHECK_NEAR(d->xaxis[3 * j + i], x0[i], 1e-14);
      CHECK_NEAR(d->xanchor[3 * j + i], a0[i], 1e-14);
      moved += fabs(d->xpos[3 * b + i] - xb0[i]);
    }
    if (t == PHYS_JNT_SLIDE) CHECK_NEAR(moved, 0.4 * (fabs(x0[0]) + fabs(x0[1]) + fabs(x0[2])), 1e-13);
    d->qpos[m->jnt_qposadr[j]] -= 0.4;
  }
  phys_free_data(d);
  phys_free_model(m);
}

int main(void) {
  test_pendulum();
  test_tree_reference();
  test_anchor_invariance();
  return test_done();
}
