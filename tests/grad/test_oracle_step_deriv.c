// test_oracle_step_deriv.c - MuJoCo 2.2.2's mjd_transitionFD as the oracle of phys_step_jacobian.
//
// Same model in both engines, MuJoCo with its constraint solver, contacts and limits disabled (physid with
// contacts and limits disabled: the same unconstrained step, tests/step/test_oracle_dyn.c), the same random
// states (qpos, qvel, ctrl, qfrc_applied, xfrc_applied). MuJoCo's A and B (centered differences in the same
// tangent coordinates, mj_differentiatePos) at eps = h and 2h are combined as (4 J_h - J_2h) / 3, the
// four-point stencil of grad_models.h (h = 1e-3), and physid's analytic A, B must equal them to 1e-6 relative
// per block (both engines' steps agree to about 1e-9; the stencil's error is below 1e-8 of the scale).
// Models: MuJoCo's humanoid in the air, mixed.xml, the double pendulum, the free tumbling body.
#include <mujoco/mujoco.h>

#include "grad_models.h"

#define NSTATE 3

// MuJoCo's A, B by Richardson-combined centered differences at h and 2h
static void mujoco_ab(const mjModel* mm, mjData* md, double* A, double* B) {
  int n2 = 2 * mm->nv, nu = mm->nu;
  double* A2 = malloc(sizeof(double) * n2 * n2);
  double* B2 = malloc(sizeof(double) * (n2 * nu + 1));
  mjd_transitionFD(mm, md, GM_H4, 1, A, B, NULL, NULL);
  mjd_transitionFD(mm, md, 2 * GM_H4, 1, A2, B2, NULL, NULL);
  for (int i = 0; i < n2 * n2; i++) A[i] = (4 * A[i] - A2[i]) / 3;
  for (int i = 0; i < n2 * nu; i++) B[i] = (4 * B[i] - B2[i]) / 3;
  free(A2);
  free(B2);
}

// rows r0.. of M (ld columns), block nr x nc from column c0, into out
static void block(double* out, const double* M, int ld, int r0, int c0, int nr, int nc) {
  for (int i = 0; i < nr; i++)
    for (int j = 0; j < nc; j++) out[i * nc + j] = M[(size_t)(r0 + i) * ld + c0 + j];
}

// load both engines and compare at NSTATE random states
static void check_model(const char* name, const char* path, uint64_t seed, double vs) {
  char err[1024] = "";
  mjModel* mm = mj_loadXML(path, NULL, err, sizeof err);
  CHECK_MSG(mm != NULL, "%s: MuJoCo: %s", path, err);
  if (!mm) return;
  mm->opt.disableflags |= mjDSBL_CONSTRAINT | mjDSBL_CONTACT | mjDSBL_LIMIT;
  physModel* pm = gm_load(path, PHYS_DSBL_CONTACT | PHYS_DSBL_LIMIT);
  int nv = pm->nv, nu = pm->nu, n2 = 2 * nv;
  CHECK(mm->nv == nv && mm->nq == pm->nq && mm->nu == nu && mm->na == 0 && mm->nbody == pm->nbody);
  if (mm->nv != nv || mm->nu != nu || mm->na != 0 || mm->nbody != pm->nbody) {
    mj_deleteModel(mm);
    phys_free_model(pm);
    return;
  }
  physData* pd = phys_make_data(pm);
  mjData* md = mj_makeData(mm);
  physRng r;
  phys_rng_seed(&r, seed);
  double *A = malloc(sizeof(double) * n2 * n2), *Am = malloc(sizeof(double) * n2 * n2);
  double *B = malloc(sizeof(double) * (n2 * nu + 1)), *Bm = malloc(sizeof(double) * (n2 * nu + 1));
  double *x = malloc(sizeof(double) * n2 * (n2 + nu)), *y = malloc(sizeof(double) * n2 * (n2 + nu)), worst = 0;
  for (int s = 0; s < NSTATE; s++) {
    gm_random_state(pm, pd, &r, vs);
    gm_rand_vec(&r, pd->qfrc_applied, nv);
    for (int b = 1; b < pm->nbody; b++) gm_rand_vec(&r, pd->xfrc_applied + 6 * b, 6);
    mju_copy(md->qpos, pd->qpos, pm->nq);
    mju_copy(md->qvel, pd->qvel, nv);
    mju_copy(md->ctrl, pd->ctrl, nu);
    mju_copy(md->qfrc_applied, pd->qfrc_applied, nv);
    mju_copy(md->xfrc_applied, pd->xfrc_applied, 6 * pm->nbody);
    CHECK(phys_step_jacobian(pm, pd, A, B) == PHYS_OK);
    mujoco_ab(mm, md, Am, Bm);
    double fscale = fmax(fmax(1, gm_maxabs(pd->qpos, pm->nq)), gm_maxabs(pd->qvel, nv));
    fscale = fmax(fscale, pm->opt.timestep * gm_maxabs(pd->qacc, nv));
    const char* rows[2] = {"q+", "v+"};
    const char* cols[3] = {"q", "v", "u"};
    for (int rr = 0; rr < 2; rr++)
      for (int c = 0; c < 3; c++) {
        int nc = c < 2 ? nv : nu;
        if (nc == 0) continue;
        if (c < 2) {
          block(x, A, n2, rr * nv, c * nv, nv, nv);
          block(y, Am, n2, rr * nv, c * nv, nv, nv);
        } else {
          block(x, B, nu, rr * nv, 0, nv, nu);
          block(y, Bm, nu, rr * nv, 0, nv, nu);
        }
        char what[160];
        snprintf(what, sizeof what, "%s state %d d%s/d%s vs MuJoCo", name, s, rows[rr], cols[c]);
        worst = fmax(worst, gm_compare(what, x, y, nv, nc, fscale, GM_RTOL));
      }
  }
  printf("%-16s nv %2d nu %2d: max rel err of physid's analytic A, B against mjd_transitionFD %.2e\n", name, nv,
         nu, worst);
  free(A), free(Am), free(B), free(Bm), free(x), free(y);
  phys_free_data(pd);
  mj_deleteData(md);
  phys_free_model(pm);
  mj_deleteModel(mm);
}

int main(void) {
  check_model("humanoid (air)", GM_HUMANOID, 1, 1);
  check_model("mixed", "tests/data/mixed.xml", 2, 2);
  check_model("double_pendulum", "tests/data/double_pendulum.xml", 3, 3);
  check_model("freebody", "tests/data/freebody.xml", 4, 3);
  return test_done();
}
