// test_oracle_equality.c - MuJoCo 2.2.2 as the oracle of the equality rows (src/dyn/equality.c) and of their
// model data (src/model/mjcf_equality.c, compile_equality.c): on tests/data/equality.xml (connect, weld with
// anchor and torquescale, joint quartic, weld to the world with relpose, an inactive connect) the sizes and
// eq_* arrays equal mjModel's (likewise tests/data/equality_tendon.xml: fixed-tendon equalities, one with a quartic
// of a second tendon and a joint ref, one without tendon2), and at random configurations the residuals and Jacobians equal MuJoCo's
// equality efc rows (efc_pos, efc_J) to 1e-12 (a weld's rotation residual is torquescale efc_pos: physid's J = dr/dq).
#include <mujoco/mujoco.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dyn.h"
#include "equality.h"
#include "physid.h"
#include "test.h"

static const char* MODEL = PHYS_SOURCE_DIR "/tests/data/equality.xml";
static const char* TENDON = PHYS_SOURCE_DIR "/tests/data/equality_tendon.xml";   // fixed-tendon equalities

// eq_type, objects, active, solref, solimp and data as mjModel's
static void check_model(const physModel* m, const mjModel* mm) {
  CHECK_MSG(m->neq == mm->neq, "neq %d/%d", m->neq, mm->neq);
  for (int e = 0; e < m->neq && e < mm->neq; e++) {
    CHECK_MSG(m->eq_type[e] == mm->eq_type[e] && m->eq_obj1id[e] == mm->eq_obj1id[e] &&
                  m->eq_active[e] == mm->eq_active[e],
              "eq %d: type %d/%d obj1 %d/%d", e, m->eq_type[e], mm->eq_type[e], m->eq_obj1id[e], mm->eq_obj1id[e]);
    int o2 = mm->eq_obj2id[e];
    if (m->eq_type[e] == PHYS_EQ_JOINT && o2 < 0) o2 = -1;
    CHECK_MSG(m->eq_obj2id[e] == o2, "eq %d: obj2 %d/%d", e, m->eq_obj2id[e], o2);
    for (int k = 0; k < 2; k++) CHECK(m->eq_solref[2 * e + k] == mm->eq_solref[2 * e + k]);
    for (int k = 0; k < 5; k++) CHECK(m->eq_solimp[5 * e + k] == mm->eq_solimp[5 * e + k]);
    for (int k = 0; k < PHYS_EQ_NDATA; k++)
      CHECK_MSG(fabs(m->eq_data[PHYS_EQ_NDATA * e + k] - mm->eq_data[mjNEQDATA * e + k]) < 1e-14,
                "eq %d data[%d] %.17g / %.17g", e, k, m->eq_data[PHYS_EQ_NDATA * e + k], mm->eq_data[mjNEQDATA * e + k]);
  }
}

// residuals and Jacobians at one configuration against MuJoCo's equality efc rows
static double compare_rows(const physModel* m, physData* d, const mjModel* mm, mjData* md) {
  int nv = m->nv;
  phys_kinematics(m, d);
  phys_com_pos(m, d);
  double r[64], J[64 * 32];
  int ne = phys_equality_eval(m, d, r, J);
  mj_forward(mm, md);
  int nfound = 0;
  double err = 0;
  for (int i = 0; i < md->nefc; i++) {
    if (md->efc_type[i] != mjCNSTR_EQUALITY) continue;
    if (nfound < ne) {
      // MuJoCo 2.2.2 scales a weld's rotation Jacobian rows by torquescale, not its residual; physid scales both
      // (J = dr/dq): the rotation residual is compared as torquescale efc_pos
      int id = md->efc_id[i], first = 0;
      while (md->efc_id[i - first] == id && i - first > 0 && md->efc_type[i - first - 1] == mjCNSTR_EQUALITY &&
             md->efc_id[i - first - 1] == id)
        first++;
      double scale = m->eq_type[id] == PHYS_EQ_WELD && first >= 3 ? m->eq_data[PHYS_EQ_NDATA * id + 10] : 1;
      double e0 = fabs(scale * md->efc_pos[i] - r[nfound]);
      for (int k = 0; k < nv; k++) e0 = fmax(e0, fabs(md->efc_J[(size_t)i * nv + k] - J[(size_t)nfound * nv + k]));
      if (e0 > 1e-12) printf("row %d (eq %d): difference %g\n", nfound, id, e0);
      err = fmax(err, e0);
    }
    nfound++;
  }
  CHECK_MSG(nfound == ne, "rows %d (MuJoCo %d)", ne, nfound);
  return err;
}

// model file's sizes and eq_* arrays, its number of rows (nrows) and its rows at 20 configurations against MuJoCo
static void check_file(const char* file, int nrows) {
  physLog log = {0};
  physModel* m = phys_load_mjcf(file, &log);
  CHECK_MSG(m != NULL, "load: %s", log.error);
  char err[512];
  mjModel* mm = mj_loadXML(file, NULL, err, sizeof(err));
  CHECK_MSG(mm != NULL, "mujoco: %s", err);
  if (!m || !mm) return;
  CHECK(m->nq == mm->nq && m->nv == mm->nv && m->nv <= 32);
  check_model(m, mm);
  CHECK(phys_equality_rows(m) == nrows);
  physData* d = phys_make_data(m);
  mjData* md = mj_makeData(mm);
  double worst = 0;
  unsigned s = 12345;
  for (int trial = 0; trial < 20; trial++) {
    for (int i = 0; i < m->nq; i++) {
      s = s * 1103515245u + 12345u;
      double u = ((s >> 8) & 0xffff) / 65535.0 - 0.5;
      d->qpos[i] = md->qpos[i] = m->qpos0[i] + (trial ? 0.6 * u : 0);
    }
    for (int j = 0; j < m->njnt; j++) {   // normalize the quaternions
      if (m->jnt_type[j] != PHYS_JNT_FREE) continue;
      double* q = d->qpos + m->jnt_qposadr[j] + 3;
      double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
      for (int k = 0; k < 4; k++) md->qpos[m->jnt_qposadr[j] + 3 + k] = q[k] /= n;
    }
    double e = compare_rows(m, d, mm, md);
    if (trial == 0) CHECK_MSG(e < 1e-12, "at qpos0: %g", e);
    worst = fmax(worst, e);
  }
  printf("%s: equality rows vs MuJoCo 2.2.2 at 20 configurations: largest difference %.3g\n", file, worst);
  CHECK_MSG(worst < 1e-12, "residual/Jacobian difference %g", worst);
  mj_deleteData(md);
  mj_deleteModel(mm);
  phys_free_data(d);
  phys_free_model(m);
}

int main(void) {
  check_file(MODEL, 3 + 6 + 1 + 6);
  check_file(TENDON, 1 + 1);
  return test_done();
}
