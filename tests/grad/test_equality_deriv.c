// test_equality_deriv.c - the equality rows' configuration derivatives (src/grad/equality_deriv.c):
// phys_equality_jvp's dr and dJ along random tangent directions against central differences of
// phys_equality_eval's r and J at q (+) ±h dq (phys_integrate_pos; h = 1e-5, relative to the entries' scale
// 1e-7), at random configurations of tests/data/equality.xml (connect onto a free box, weld of a free box with
// anchor and torquescale 2, quartic joint coupling, weld to the world), tests/data/fourbar.xml (planar connect:
// a rank-deficient row), tests/data/equality_contact.xml (connect to a free box, box welded to the world) and
// tests/data/equality_tendon.xml (fixed-tendon quartic); phys_equality_curvature K against dJ x (K dq = dJ(dq) x
// to 1e-13), and analytic values: a joint coupling's dJ is -(2 c2 + 6 c3 x + 12 c4 x^2) dx at joint2's dof.
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dyn.h"
#include "equality.h"
#include "equality_deriv.h"
#include "physid.h"
#include "test.h"

#define MAXR 32
#define MAXV 32

static unsigned seed = 2468u;
static double urand(void) {
  seed = seed * 1103515245u + 12345u;
  return ((seed >> 8) & 0xffff) / 65535.0 - 0.5;
}

// r and J at qpos
static void rows_at(const physModel* m, physData* d, const double* qpos, double* r, double* J) {
  memcpy(d->qpos, qpos, sizeof(double) * (size_t)m->nq);
  phys_kinematics(m, d);
  phys_com_pos(m, d);
  phys_equality_eval(m, d, r, J);
}

// a random configuration near qpos0 (quaternions moved on the sphere)
static void random_config(const physModel* m, double* qpos) {
  memcpy(qpos, m->qpos0, sizeof(double) * (size_t)m->nq);
  double v[MAXV];
  for (int k = 0; k < m->nv; k++) v[k] = 0.8 * urand();
  phys_integrate_pos(m, qpos, v, 1);
}

// worst relative error of dr, dJ against central differences over nconf configurations x 3 directions
static double check_file(const char* file, int nconf) {
  physLog log = {0};
  physModel* m = phys_load_mjcf(file, &log);
  CHECK_MSG(m != NULL, "load %s: %s", file, log.error);
  if (!m) return 1;
  physData* d = phys_make_data(m);
  int nv = m->nv, ne = phys_equality_rows(m);
  CHECK(ne > 0 && ne <= MAXR && nv <= MAXV);
  double q0[64], qp[64], qm[64], dq[MAXV], x[MAXV], rp[MAXR], rm[MAXR], dr[MAXR];
  static double Jp[MAXR * MAXV], Jm[MAXR * MAXV], dJ[MAXR * MAXV], K[MAXR * MAXV];
  double worst = 0, worstK = 0, h = 1e-5;
  for (int c = 0; c < nconf; c++) {
    random_config(m, q0);
    for (int t = 0; t < 3; t++) {
      for (int k = 0; k < nv; k++) dq[k] = urand(), x[k] = urand();
      memcpy(qp, q0, sizeof(double) * (size_t)m->nq);
      memcpy(qm, q0, sizeof(double) * (size_t)m->nq);
      phys_integrate_pos(m, qp, dq, h);
      phys_integrate_pos(m, qm, dq, -h);
      rows_at(m, d, qm, rm, Jm);
      rows_at(m, d, qp, rp, Jp);
      memcpy(d->qpos, q0, sizeof(double) * (size_t)m->nq);
      phys_kinematics(m, d);
      phys_com_pos(m, d);
      phys_equality_jvp(m, d, dq, dr, dJ);
      double scale = 1;
      for (int i = 0; i < ne * nv; i++) scale = fmax(scale, fabs(Jp[i]));
      for (int i = 0; i < ne; i++) worst = fmax(worst, fabs((rp[i] - rm[i]) / (2 * h) - dr[i]) / scale);
      for (int i = 0; i < ne * nv; i++) worst = fmax(worst, fabs((Jp[i] - Jm[i]) / (2 * h) - dJ[i]) / scale);
      phys_equality_curvature(m, d, x, K);   // K dq = dJ(dq) x
      for (int i = 0; i < ne; i++) {
        double a = 0, b = 0;
        for (int k = 0; k < nv; k++) a += K[i * nv + k] * dq[k], b += dJ[i * nv + k] * x[k];
        worstK = fmax(worstK, fabs(a - b) / fmax(1, fabs(b)));
      }
    }
  }
  printf("%s: %d rows, dr/dJ vs central differences %.3g (relative), K dq vs dJ x %.3g\n", file, ne, worst, worstK);
  CHECK_MSG(worst < 1e-7, "%s: %g", file, worst);
  CHECK_MSG(worstK < 1e-13, "%s: K %g", file, worstK);
  CHECK_MSG(d->pstack == 0, "arena not released");
  phys_free_data(d);
  phys_free_model(m);
  return worst;
}

// the joint coupling's analytic dJ: tests/data/equality.xml's third constraint (h1 = quartic of s1), one row
static void test_joint_value(void) {
  physLog log = {0};
  physModel* m = phys_load_mjcf(PHYS_SOURCE_DIR "/tests/data/equality.xml", &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  if (!m) return;
  physData* d = phys_make_data(m);
  int nv = m->nv, row = 3 + 6, j2 = m->eq_obj2id[2], a2 = m->jnt_qposadr[j2], v2 = m->jnt_dofadr[j2];
  CHECK(m->eq_type[2] == PHYS_EQ_JOINT);
  memcpy(d->qpos, m->qpos0, sizeof(double) * (size_t)m->nq);
  double xs = 0.3, dq[MAXV] = {0}, dJ[MAXR * MAXV];
  d->qpos[a2] += xs;
  dq[v2] = 2;
  phys_kinematics(m, d);
  phys_com_pos(m, d);
  phys_equality_jvp(m, d, dq, NULL, dJ);
  const double* c = m->eq_data + 2 * PHYS_EQ_NDATA;   // 0 0.5 0.3 -0.2 0.1
  double want = -(2 * c[2] + 6 * c[3] * xs + 12 * c[4] * xs * xs) * 2;
  CHECK_MSG(fabs(dJ[row * nv + v2] - want) < 1e-15, "%.17g / %.17g", dJ[row * nv + v2], want);
  for (int k = 0; k < nv; k++)
    if (k != v2) CHECK(dJ[row * nv + k] == 0);
  phys_free_data(d);
  phys_free_model(m);
}

int main(void) {
  check_file(PHYS_SOURCE_DIR "/tests/data/equality.xml", 10);
  check_file(PHYS_SOURCE_DIR "/tests/data/fourbar.xml", 10);
  check_file(PHYS_SOURCE_DIR "/tests/data/equality_contact.xml", 10);
  check_file(PHYS_SOURCE_DIR "/tests/data/equality_tendon.xml", 10);
  test_joint_value();
  return test_done();
}
