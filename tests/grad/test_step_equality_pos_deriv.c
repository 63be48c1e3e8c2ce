// test_step_equality_pos_deriv.c - the step's derivatives with equality rows and a contact or limit under position
// correction (src/grad/step_equality_pos_deriv.c; lcp, cone, ccp):
//   - tests/data/equality_contact_deriv.xml (a box with a box welded on top of it, and two hinges coupled by a
//     quadratic joint equality, the first limited): the welded pair pressed PD_DEPTH into the floor and the
//     limited hinge PD_DEPTH past its upper bound, so both the contacts and the limit row are position-corrected
//     and the correction is projected through the weld and the coupling. Resting, landing and (lcp) spinning:
//     A, B against four-point central differences (phys_step_jacobian_fd at PD_H and 2 PD_H), P (masses, hinge
//     damping, motor gear, the coupling's polycoef) against four-point differences of phys_step, to PD_TOL
//     relative; the VJPs' dot-product tests;
//   - the derivatives' vpos (the M~-smallest solution of the clamped rows and J_e vpos = 0) equals the step's own
//     (no kink rows here). Without vpos's configuration terms A errs by 20, without its parameter terms P by
//     4.8e-2, and with the free mechanism's correction (no J_e rows in C) A by 20 and vpos by 0.124 m/s: the
//     checks see each;
//   - refused with a message: a geometry parameter (size) at such a state.
#include "fd_check.h"
#include "step_equality_deriv.h"
#include "step_equality_pos_deriv.h"
#include "step_contact_deriv.h"
#include "step_record.h"

#define PD_H 1e-6      // difference step: far below the 1 mm penetration (no row changes its state)
#define PD_TOL 1e-5    // relative (GM_FLOOR of the block), analytic against those differences
#define PD_DEPTH 1e-3  // the boxes' penetration and the hinge's excess over its bound: deep in the correction

// the pair PD_DEPTH into the floor moving with vertical velocity vz, spin wz; the limited hinge PD_DEPTH past its
// upper bound; warm start empty; time 1 (a penetration at time 0 raises phys_step's initial-state warning, which
// the difference twin reports as a failure)
static void deep_state(const physModel* m, physData* d, double vz, double wz) {
  phys_reset_data(m, d);
  d->time = 1;
  for (int j = 0; j < m->njnt; j++) {
    int qa = m->jnt_qposadr[j], da = m->jnt_dofadr[j];
    if (m->jnt_type[j] == PHYS_JNT_FREE) {
      d->qpos[qa + 2] -= PD_DEPTH;
      d->qvel[da + 2] = vz, d->qvel[da + 5] = wz;
    }
    if (m->jnt_type[j] == PHYS_JNT_HINGE && m->jnt_limited[j]) d->qpos[qa] = m->jnt_range[2 * j + 1] + PD_DEPTH;
  }
}

// A, B, P against differences and the VJPs' dot tests at one deep state
static void check_deep(int cm, const char* what, double vz, double wz, physRng* rng) {
  physModel* m = gm_load(PHYS_SOURCE_DIR "/tests/data/equality_contact_deriv.xml", 0);
  m->opt.contact = cm;
  m->opt.solver_tolerance = 1e-12;
  physData* d = phys_make_data(m);
  static const char* const spec[] = {"mass:base", "mass:top", "damping:h1", "gear:push", "polycoef:couple"};
  physParamTable t;
  physLog log = {0};
  CHECK_MSG(phys_param_table_build(&t, m, spec, 5, &log) == PHYS_OK, "%s", log.error);
  int nv = m->nv, n2 = 2 * nv, nu = m->nu;
  double *A = calloc(n2 * n2, 8), *Af = calloc(n2 * n2, 8), *B = calloc(n2 * nu + 1, 8), *Bf = calloc(n2 * nu + 1, 8);
  double *y = calloc(n2, 8), *x = calloc(n2 + nu, 8), *xb = calloc(n2, 8), *ub = calloc(nu + 1, 8);
  deep_state(m, d, vz, wz);
  gm_rand_vec(rng, d->ctrl, nu);
  physStepRecord rec;
  CHECK(phys_step_linearize(m, d, &rec) == PHYS_OK);
  CHECK_MSG(rec.kind == PHYS_STEP_CONSTRAINED_EQ && rec.eq && rec.eq->pos, "%s: kind %d", what, rec.kind);
  phys_step_record_free(d, &rec);
  physStatus st = phys_step_jacobian(m, d, A, B);
  CHECK_MSG(st == PHYS_OK, "%s (model %d): status %d: %s", what, cm, st, d->lastwarning);
  fd4_jacobian(m, d, PD_H, Af, Bf);
  double ea = gm_compare("A", A, Af, n2, n2, 1, PD_TOL), eb = gm_compare("B", B, Bf, n2, nu, 1, PD_TOL);
  gm_rand_vec(rng, y, n2), gm_rand_vec(rng, x, n2 + nu);
  CHECK(phys_step_vjp(m, d, y, xb, ub) == PHYS_OK);
  fd_dot_check("vjp x", A, y, x, xb, n2, n2);
  fd_dot_check("vjp u", B, y, x + n2, ub, n2, nu);
  double ep = fd_check_p("P", m, d, &t, rng, 1, PD_TOL);
  printf("equality_contact_deriv.xml %s, %g deep (contact model %d): A %.3g, B %.3g, P (%d columns) %.3g vs "
         "differences\n", what, PD_DEPTH, cm, ea, eb, t.ntheta, ep);
  free(A), free(Af), free(B), free(Bf), free(y), free(x), free(xb), free(ub);
  phys_param_table_free(&t);
  phys_free_data(d);
  phys_free_model(m);
}

// the derivatives' vpos is the step's ((q+ (-) q)/dt - v+ on the hinges and the translations), and a size
// parameter is refused
static void check_point_and_refusal(void) {
  physModel* m = gm_load(PHYS_SOURCE_DIR "/tests/data/equality_contact_deriv.xml", 0);
  physData* d = phys_make_data(m);
  int nv = m->nv, nq = m->nq;
  double q0[64], v0[32], dq[32];
  deep_state(m, d, 0, 0);
  memcpy(q0, d->qpos, sizeof(double) * nq), memcpy(v0, d->qvel, sizeof(double) * nv);
  physStepRecord rec;
  CHECK(phys_step_linearize(m, d, &rec) == PHYS_OK);
  CHECK(rec.kind == PHYS_STEP_CONSTRAINED_EQ && rec.eq && rec.eq->pos);
  double vp[32];
  if (rec.eq && rec.eq->pos) memcpy(vp, phys_equality_pos_vpos(rec.eq->pos), sizeof(double) * nv);
  phys_step_record_free(d, &rec);
  phys_step(m, d);
  phys_difference_pos(m, dq, 1, q0, d->qpos);
  double worst = 0, big = 0;
  for (int j = 0; j < m->njnt; j++) {   // scalar dofs and free translations: q+ - q = dt (v+ + vpos) exactly
    int da = m->jnt_dofadr[j], k = m->jnt_type[j] == PHYS_JNT_FREE ? 3 : 1;
    for (int i = da; i < da + k; i++) {
      double vpos = dq[i] / m->opt.timestep - d->qvel[i];
      worst = fmax(worst, fabs(vpos - vp[i])), big = fmax(big, fabs(vpos));
    }
  }
  printf("vpos: step's vs the derivatives' %.3g (largest %.3g m/s)\n", worst, big);
  CHECK_MSG(big > 0.05 && worst < 1e-9 * big, "vpos %g of %g", worst, big);
  memcpy(d->qpos, q0, sizeof(double) * nq), memcpy(d->qvel, v0, sizeof(double) * nv);
  d->ncon = d->ncon_prev = 0;
  physParamTable t;
  physLog log = {0};
  const char* spec[1] = {"size:base"};
  CHECK_MSG(phys_param_table_build(&t, m, spec, 1, &log) == PHYS_OK, "%s", log.error);
  double* P = calloc(2 * nv * t.ntheta, 8);
  CHECK(phys_step_param_jacobian(m, d, &t, P) == PHYS_ERR_MODEL);
  CHECK_MSG(strstr(d->lastwarning, "under position correction together with parameters that move the geometry"),
            "%s", d->lastwarning);
  free(P);
  phys_param_table_free(&t);
  phys_free_data(d);
  phys_free_model(m);
}

// on the kink: the pair and the hinge settled by the correction (400 steps from the deep state) sit within
// PHYS_CONTACT_SLOP_TOL of the slop, where the step stops correcting and the derivatives take the correcting side
// (step_contact_deriv.c's kink convention, its rows added to the constrained position problem): the directional
// derivative A dx along dx pressing every such row deeper (the base lowered, the hinge pushed past its bound)
// against the difference of phys_step between h and 2h along dx (h = 1e-7), and the VJP's dot test
static void check_kink(int cm, physRng* rng) {
  physModel* m = gm_load(PHYS_SOURCE_DIR "/tests/data/equality_contact_deriv.xml", 0);
  m->opt.contact = cm;
  m->opt.solver_tolerance = 1e-12;
  physData* d = phys_make_data(m);
  int nv = m->nv, nq = m->nq, n2 = 2 * nv;
  double *A = calloc(n2 * n2, 8), q0[64], v0[32], q1[64], v1[32], dx[32], ad[64], fd[64], y[64], xb[64];
  deep_state(m, d, 0, 0);
  for (int k = 0; k < 400; k++) phys_step(m, d);
  CHECK_MSG(phys_constrained_step_kinks(m, d) > 0, "no row on the kink (model %d)", cm);
  physStatus st = phys_step_jacobian(m, d, A, NULL);
  CHECK_MSG(st == PHYS_OK, "kink (model %d): %s", cm, d->lastwarning);
  memset(dx, 0, sizeof dx);
  dx[m->jnt_dofadr[phys_name2id(m, "joint", "h1")]] = 1;
  for (int j = 0; j < m->njnt; j++)
    if (m->jnt_type[j] == PHYS_JNT_FREE && m->jnt_bodyid[j] == phys_name2id(m, "body", "base"))
      dx[m->jnt_dofadr[j] + 2] = -1;
  for (int i = 0; i < n2; i++) {
    ad[i] = 0;
    for (int c = 0; c < nv; c++) ad[i] += A[i * n2 + c] * dx[c];
  }
  memcpy(q0, d->qpos, sizeof(double) * nq), memcpy(v0, d->qvel, sizeof(double) * nv);
  // the difference between the states h and 2h along dx, both on the correcting side (the state itself sits up
  // to PHYS_CONTACT_SLOP_TOL inside the slop, which the step corrects all at once when pushed: a difference from
  // it would count that jump); each step warm-starts from the previous one's contacts: the same v+ and vpos
  double t0 = d->time, h = 1e-7;
  for (int k = 1; k <= 2; k++) {
    memcpy(d->qpos, q0, sizeof(double) * nq), memcpy(d->qvel, v0, sizeof(double) * nv), d->time = t0;
    phys_integrate_pos(m, d->qpos, dx, k * h);
    phys_step(m, d);
    if (k == 1) memcpy(q1, d->qpos, sizeof(double) * nq), memcpy(v1, d->qvel, sizeof(double) * nv);
  }
  phys_difference_pos(m, fd, 1, q1, d->qpos);
  for (int i = 0; i < nv; i++) fd[i] /= h, fd[nv + i] = (d->qvel[i] - v1[i]) / h;
  memcpy(d->qpos, q0, sizeof(double) * nq), memcpy(d->qvel, v0, sizeof(double) * nv), d->time = t0;
  double e = gm_compare("A dx (kink)", ad, fd, n2, 1, 1, 1e-5);
  gm_rand_vec(rng, y, n2), gm_rand_vec(rng, dx, n2);
  CHECK(phys_step_vjp(m, d, y, xb, NULL) == PHYS_OK);
  fd_dot_check("vjp x (kink)", A, y, dx, xb, n2, n2);
  printf("on the kink (contact model %d, %d rows): A dx vs the one-sided difference %.3g\n", cm,
         phys_constrained_step_kinks(m, d), e);
  free(A);
  phys_free_data(d);
  phys_free_model(m);
}

int main(void) {
  physRng rng;
  phys_rng_seed(&rng, 20261128u);
  for (int cm = PHYS_CONTACT_LCP; cm <= PHYS_CONTACT_CCP; cm++) {
    check_deep(cm, "resting", 0, 0, &rng);
    check_deep(cm, "landing", -0.3, 0, &rng);
  }
  check_deep(PHYS_CONTACT_LCP, "spinning", 0, 1.5, &rng);
  for (int cm = PHYS_CONTACT_LCP; cm <= PHYS_CONTACT_CCP; cm++) check_kink(cm, &rng);
  check_point_and_refusal();
  return test_done();
}
