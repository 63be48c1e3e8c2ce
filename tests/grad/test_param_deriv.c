// test_param_deriv.c - P = dx+/dtheta of the contact-free step and its reverse mode:
//   - against four-point central differences of phys_step over every parameter, each set through the table
//     (six-point stencil, theta_j + k h_j for k = +-1, +-2, +-3, h_j = 1e-2 of the parameter's natural scale,
//     see PD_H and fd_step), compared column by column with gm_compare at GM_RTOL = 1e-6 relative to
//     max(|entry|, 1e-4 max(column max, |x| max(1, GM_H4 / h_j))): the rounding noise of a quotient with step
//     h_j is eps |x| / h_j, which grad_models.h's floor 1e-4 |x| covers for h = GM_H4 = 1e-3;
//   - dot-product test <xbar, P thdot> = <P' xbar, thdot> to 1e-12 relative to sum |xbar_i P_ij thdot_j|;
//   - analytic: the pendulum's armature column dv+/darmature = -dt a / (I + armature);
//   - contact-only parameters (friction, restitution, size, penalty stiffness and damping) have exactly zero
//     columns;
//   - body placements pos:BODY (link lengths) on the double pendulum (with random xfrc), on mixed.xml (a
//     spring and its motor across the moved subtrees) and on every humanoid body but the free torso;
//   - tied parameters (a pattern, params.h): P's column of "damping:j*" equals the sum of the seven
//     "damping:jK" columns (and "armature:j[246]" of three) to 1e-13 relative, at rest and moving, and against
//     central differences and the dot-product test through check_model; on the jumpworm in contact (every
//     contact model) the tied columns of damping, mass, gear and bias equal the summed ones to 1e-10 relative;
//   - actuator gain, bias, kp and kv (tests/data/actuators.xml's servos and affine <general>; the motors of
//     mixed.xml, one on a spring; tests/data/actuator_site.xml's site actuators and force-limited motor and
//     servo, with their gears) against the differences and the dot-product test;
//   - fixed tendons (tests/data/tendons_fixed.xml): every tendon's stiffness, damping and rest length, the
//     gears, gains and biases of the motors on them, every inertia and joint parameter, placements;
//   - wrapped spatial tendons (tests/data/tendons_wrap.xml): the same without placements, which are refused;
// on the pendulum, tests/data/mixed.xml (every joint type, springs, motors on joints and on a spring, random
// xfrc_applied so that the com's force point moves with com and inertia; with implicit and explicit damping)
// and MuJoCo's humanoid in the air (contacts and limits disabled, every body's inertia, every joint, every gear).
#include "grad_models.h"
#include "params.h"

// state to restore before each perturbed step
typedef struct {
  double *qpos, *qvel, time;
} saved;

// one step of m from s with theta set, result (q+ (-) q0n, v+ - v0n) in res (2nv)
static void step_at(physModel* m, physData* d, const physParamTable* t, const double* theta, const saved* s,
                    const double* q0n, const double* v0n, double* res) {
  CHECK(phys_param_set(t, m, theta) == PHYS_OK);
  memcpy(d->qpos, s->qpos, sizeof(double) * m->nq);
  memcpy(d->qvel, s->qvel, sizeof(double) * m->nv);
  d->time = s->time;
  phys_step(m, d);
  phys_difference_pos(m, res, 1, q0n, d->qpos);
  for (int i = 0; i < m->nv; i++) res[m->nv + i] = d->qvel[i] - v0n[i];
}

// The reference: six-point central differences with relative step PD_H = 1e-2. Truncation is
// h^6 |f^(7)| / 140, about 1e-14 relative for a parameter moved by 1e-2 of its scale, and rounding about
// 1.8 eps |x| / h. Measured worst errors with PARAM_H_FACTOR = 0.5, 1, 2 (steps 5e-3, 1e-2, 2e-2): 2.4e-6
// (humanoid, rounding), 5.8e-7, 9.6e-7 (com truncation): the step 1e-2 sits between the two. The four-point stencil of grad_models.h at h = 1e-3 of the scale could not separate the
// two here: parameters like the armature of an ankle (0.006) or the s, t of a slender link's log-Cholesky
// point are small, so steps relative to them are small and rounding (amplified by the conditioning of M~)
// reached 1e-6; measured with the four-point stencil, the error was not monotone in h (noise). With the
// six-point stencil at 1e-2 the worst error is quoted by the test's output line.
#define PD_H 1e-2
static double hfactor = 1;   // PARAM_H_FACTOR scales the steps (to check convergence by hand)

// difference step of theta_j: PD_H times the scale of its entry (the largest |value| among the entry's
// components, 1 if all are zero), so that a com of a few cm or an armature of 0.01 moves by 1e-2 of itself
static double fd_step(const physParamTable* t, const double* th, int j) {
  for (int e = 0; e < t->n; e++) {
    const physParam* p = t->param + e;
    if (j < p->adr || j >= p->adr + p->size) continue;
    double s = 0;
    if (p->kind == PHYS_PAR_INERTIA) {
      // log-Cholesky: alpha and d_i are logarithms (absolute steps); s_ij and t_i are measured against the
      // norm of their row of U / exp(alpha) (rows: (exp(d1), s12, s13, t1), (exp(d2), s23, t2), (exp(d3), t3))
      const double* c = th + p->adr;
      static const int row[10] = {-1, -1, -1, -1, 0, 1, 0, 0, 1, 2};
      int i = j - p->adr, r = row[i];
      if (r < 0) return hfactor * PD_H;
      double n2 = r == 0 ? exp(2 * c[1]) + c[4] * c[4] + c[6] * c[6] + c[7] * c[7]
                         : (r == 1 ? exp(2 * c[2]) + c[5] * c[5] + c[8] * c[8] : exp(2 * c[3]) + c[9] * c[9]);
      return hfactor * PD_H * sqrt(n2);
    }
    for (int i = 0; i < p->size; i++) s = fmax(s, fabs(th[p->adr + i]));
    return hfactor * PD_H * (s > 0 ? s : 1);
  }
  return hfactor * PD_H;
}

// Pf (2nv x nt) by four-point central differences over theta; the model and state are restored
static void param_fd(physModel* m, physData* d, const physParamTable* t, double* Pf) {
  int nv = m->nv, n2 = 2 * nv, nt = t->ntheta;
  saved s = {malloc(sizeof(double) * m->nq), malloc(sizeof(double) * nv), d->time};
  memcpy(s.qpos, d->qpos, sizeof(double) * m->nq);
  memcpy(s.qvel, d->qvel, sizeof(double) * nv);
  double *th0 = malloc(sizeof(double) * nt), *th = malloc(sizeof(double) * nt);
  double *q0n = malloc(sizeof(double) * m->nq), *v0n = malloc(sizeof(double) * nv);
  double* r = malloc(sizeof(double) * 6 * n2);
  phys_param_get(t, m, th0);
  phys_step(m, d);
  memcpy(q0n, d->qpos, sizeof(double) * m->nq);
  memcpy(v0n, d->qvel, sizeof(double) * nv);
  // six-point central stencil f' = (45 (f1 - f-1) - 9 (f2 - f-2) + (f3 - f-3)) / 60h + O(h^6)
  static const double off[6] = {1, -1, 2, -2, 3, -3}, w[3] = {45, -9, 1};
  for (int j = 0; j < nt; j++) {
    double h = fd_step(t, th0, j);
    for (int k = 0; k < 6; k++) {
      memcpy(th, th0, sizeof(double) * nt);
      th[j] += off[k] * h;
      step_at(m, d, t, th, &s, q0n, v0n, r + k * n2);
    }
    for (int i = 0; i < n2; i++) {
      double acc = 0;
      for (int k = 0; k < 3; k++) acc += w[k] * (r[2 * k * n2 + i] - r[(2 * k + 1) * n2 + i]);
      Pf[(size_t)i * nt + j] = acc / (60 * h);
    }
  }
  CHECK(phys_param_set(t, m, th0) == PHYS_OK);
  memcpy(d->qpos, s.qpos, sizeof(double) * m->nq);
  memcpy(d->qvel, s.qvel, sizeof(double) * nv);
  d->time = s.time;
  free(s.qpos);
  free(s.qvel);
  free(th0);
  free(th);
  free(q0n);
  free(v0n);
  free(r);
}

// P against differences and the VJP's dot-product test at nstate random states; returns the worst error
static double check_model(const char* name, physModel* m, const char* const* spec, int nspec, int nstate,
                          double vs, int xfrc) {
  physLog log;
  memset(&log, 0, sizeof(log));
  physParamTable t;
  if (phys_param_table_build(&t, m, spec, nspec, &log) != PHYS_OK) {
    CHECK_MSG(0, "%s: %s", name, log.error);
    return INFINITY;
  }
  int nv = m->nv, n2 = 2 * nv, nt = t.ntheta;
  physData* d = phys_make_data(m);
  // the model as the table writes it (inertia through the eigen-decomposition), so that every step of the
  // differences, which all set theta, runs the same model as the analytic Jacobian
  double* thc = malloc(sizeof(double) * nt);
  phys_param_get(&t, m, thc);
  CHECK(phys_param_set(&t, m, thc) == PHYS_OK);
  double *P = malloc(sizeof(double) * n2 * nt), *Pf = malloc(sizeof(double) * n2 * nt);
  double *colA = malloc(sizeof(double) * n2), *colF = malloc(sizeof(double) * n2);
  double *xb = malloc(sizeof(double) * n2), *tb = malloc(sizeof(double) * nt), *td = malloc(sizeof(double) * nt);
  double worst = 0, worst_dot = 0;
  physRng r;
  phys_rng_seed(&r, 11);
  for (int s = 0; s < nstate; s++) {
    gm_random_state(m, d, &r, vs);
    if (m->njnt && m->jnt_type[0] == PHYS_JNT_FREE) d->qpos[2] += 3;   // in the air
    gm_rand_vec(&r, d->qfrc_applied, nv);
    if (xfrc)
      for (int b = 1; b < m->nbody; b++) gm_rand_vec(&r, d->xfrc_applied + 6 * b, 6);
    double t0 = d->time, q0 = d->qpos[0];
    physStatus st = phys_step_param_jacobian(m, d, &t, P);
    CHECK_MSG(st == PHYS_OK, "%s: status %d", name, st);
    if (st != PHYS_OK) break;
    CHECK(d->time == t0 && d->qpos[0] == q0);   // not advanced
    double fscale = fmax(fmax(1, gm_maxabs(d->qpos, m->nq)), gm_maxabs(d->qvel, nv));
    fscale = fmax(fscale, m->opt.timestep * gm_maxabs(d->qacc, nv));
    param_fd(m, d, &t, Pf);
    for (int e = 0; e < t.n; e++)
      for (int i = 0; i < t.param[e].size; i++) {
        int j = t.param[e].adr + i;
        char what[256];
        snprintf(what, sizeof(what), "%s state %d %s[%d]", name, s, t.param[e].name, i);
        for (int k = 0; k < n2; k++) colA[k] = P[(size_t)k * nt + j], colF[k] = Pf[(size_t)k * nt + j];
        int kd = t.param[e].kind;
        if (kd == PHYS_PAR_FRICTION || kd == PHYS_PAR_RESTITUTION || kd == PHYS_PAR_SIZE ||
            kd == PHYS_PAR_PENALTY_STIFFNESS || kd == PHYS_PAR_PENALTY_DAMPING) {
          CHECK_MSG(gm_maxabs(colA, n2) == 0 && gm_maxabs(colF, n2) <= 1e-20, "%s: %g %g", what, gm_maxabs(colA, n2), gm_maxabs(colF, n2));
          continue;
        }
        // rounding noise of the quotient is eps |f| / h_j: gm_compare's floor (GM_FLOOR times the function's
        // scale, grad_models.h) is calibrated for h = GM_H4, so a column differenced with h_j < GM_H4 holds
        // fscale GM_H4 / h_j; larger steps keep grad_models.h's floor
        double hj = fd_step(&t, thc, j);
        worst = fmax(worst, gm_compare(what, colA, colF, n2, 1, fscale * fmax(1, GM_H4 / hj), GM_RTOL));
      }
    // dot-product test
    for (int k = 0; k < 3; k++) {
      gm_rand_vec(&r, xb, n2);
      gm_rand_vec(&r, td, nt);
      CHECK(phys_step_param_vjp(m, d, &t, xb, tb) == PHYS_OK);
      double scale, lhs = gm_bilinear(P, xb, td, n2, nt, &scale), rhs = 0;
      for (int j = 0; j < nt; j++) rhs += tb[j] * td[j];
      worst_dot = fmax(worst_dot, fabs(lhs - rhs) / scale);
      CHECK_MSG(fabs(lhs - rhs) <= GM_DOT_TOL * scale, "%s: dot test %.17g vs %.17g (scale %.3g)", name, lhs, rhs, scale);
    }
  }
  printf("%s: ntheta %d, max rel err vs 6-point FD %.3g, dot test %.3g\n", name, nt, worst, worst_dot);
  free(P);
  free(Pf);
  free(colA);
  free(colF);
  free(xb);
  free(tb);
  free(td);
  free(thc);
  phys_free_data(d);
  phys_param_table_free(&t);
  return worst;
}

// pendulum at rest at angle q: dv+/darmature = -dt a / (I + armature), I = 1.01, a = qacc of the step
static void check_pendulum_armature(void) {
  physModel* m = gm_load("tests/data/pendulum.xml", 0);
  physData* d = phys_make_data(m);
  physLog log;
  memset(&log, 0, sizeof(log));
  physParamTable t;
  const char* spec[1] = {"armature:swing"};
  CHECK(phys_param_table_build(&t, m, spec, 1, &log) == PHYS_OK);
  d->qpos[0] = 0.4;
  double P[2];
  CHECK(phys_step_param_jacobian(m, d, &t, P) == PHYS_OK);
  double dt = m->opt.timestep, a = d->qacc[0];
  CHECK_REL(a, -9.81 * sin(0.4) / 1.01, 1e-12, 0);
  CHECK_REL(P[1], -dt * a / 1.01, 1e-12, 0);
  CHECK_REL(P[0], dt * P[1], 1e-12, 0);
  phys_param_table_free(&t);
  phys_free_data(d);
  phys_free_model(m);
}

// with contacts (lcp) P and theta_bar come from the constrained step's derivatives (test_step_contact_deriv.c):
// friction then has a nonzero column
static void check_refusal(void) {
  physModel* m = gm_load("tests/data/box.xml", 0);
  physData* d = phys_make_data(m);
  if (m->nkey) phys_reset_keyframe(m, d, 0);
  for (int i = 0; i < 20; i++) phys_step(m, d);
  CHECK(d->ncon > 0);
  physLog log;
  memset(&log, 0, sizeof(log));
  physParamTable t;
  const char* spec[2] = {"gravity", "friction:floor"};
  if (phys_param_table_build(&t, m, spec, 1, &log) == PHYS_OK) {
    double P[64] = {0}, xb[24] = {0}, tb[3] = {7, 7, 7};
    CHECK(phys_step_param_jacobian(m, d, &t, P) == PHYS_OK);
    CHECK(phys_step_param_vjp(m, d, &t, xb, tb) == PHYS_OK);
    CHECK(tb[0] == 0 && tb[2] == 0);   // xbar = 0
  } else {
    CHECK_MSG(0, "%s", log.error);
  }
  phys_param_table_free(&t);
  phys_free_data(d);
  phys_free_model(m);
}

// P of one table at d's state (caller frees)
static double* param_jacobian(const physModel* m, physData* d, const char* const* spec, int n, int* nt) {
  physLog log = {0};
  physParamTable t;
  double* P = NULL;
  if (phys_param_table_build(&t, m, spec, n, &log) == PHYS_OK) {
    *nt = t.ntheta;
    P = calloc((size_t)(2 * m->nv * t.ntheta), sizeof(double));
    CHECK(phys_step_param_jacobian(m, d, &t, P) == PHYS_OK);
  } else {
    CHECK_MSG(0, "%s", log.error);
  }
  phys_param_table_free(&t);
  return P;
}

// arm7 (contact-free): the tied columns are the sums of the separate ones, at rest and moving; then
// differences and the dot-product test of the tied table
static void check_tied(void) {
  physModel* m = gm_load("models/arm7.xml", PHYS_DSBL_CONTACT | PHYS_DSBL_LIMIT);
  physData* d = phys_make_data(m);
  const char* tied[] = {"damping:j*", "armature:j[246]"};
  const char* sep[] = {"damping:j1", "damping:j2", "damping:j3", "damping:j4", "damping:j5", "damping:j6",
                       "damping:j7", "armature:j2", "armature:j4", "armature:j6"};
  physRng r;
  phys_rng_seed(&r, 5);
  for (int s = 0; s < 2; s++) {
    if (s) gm_random_state(m, d, &r, 2);
    for (int a = 0; a < m->nu; a++) d->ctrl[a] = s ? 10 * (a % 3 - 1) : 0;
    int nt = 0, ns = 0;
    double *Pt = param_jacobian(m, d, tied, 2, &nt), *Ps = param_jacobian(m, d, sep, 10, &ns);
    CHECK(nt == 2 && ns == 10);
    double worst = 0, scale = 0;
    for (int k = 0; Pt && Ps && k < 2 * m->nv; k++) {
      double sd = 0, sa = 0;
      for (int j = 0; j < 7; j++) sd += Ps[k * 10 + j];
      for (int j = 7; j < 10; j++) sa += Ps[k * 10 + j];
      worst = fmax(worst, fmax(fabs(Pt[k * 2] - sd), fabs(Pt[k * 2 + 1] - sa)));
      scale = fmax(scale, fmax(fabs(sd), fabs(sa)));
    }
    CHECK_MSG(scale > 0 && worst <= 1e-13 * scale, "tied vs summed columns: %g of %g", worst, scale);
    printf("arm7 tied (%s): max |tied - sum of columns| %.3g of %.3g\n", s ? "moving" : "at rest", worst, scale);
    free(Pt);
    free(Ps);
  }
  phys_free_data(d);
  check_model("arm7 tied", m, tied, 2, 3, 2, 1);
  phys_free_model(m);
}

// the SUPERball tensegrity's cables (issue 16; examples/tensegrity/superball_nodyn.xml: actuators without
// dynamics, contacts off): "stiffness:*", "damping:*", "restlength:*" tie the 24 spatial tendons (the rods' free
// joints are unnamed, so the patterns match tendons only); each tied column equals the sum of the 24 separate
// ones to 1e-13 relative to the sum of their magnitudes (rods moved off the
// symmetric pose), and the tied table with a rod mass and the tied gains agrees with differences and the
// dot-product test
static void check_superball_cables(void) {
  physModel* m = gm_load("examples/tensegrity/superball_nodyn.xml", PHYS_DSBL_CONTACT | PHYS_DSBL_LIMIT);
  physData* d = phys_make_data(m);
  physRng r;
  phys_rng_seed(&r, 16);
  for (int i = 0; i < m->nv; i++) d->qvel[i] = phys_rng_range(&r, -0.5, 0.5);
  for (int j = 0; j < m->njnt; j++)   // the rods moved by up to 2 cm off the symmetric pose
    for (int i = 0; i < 3; i++) d->qpos[m->jnt_qposadr[j] + i] += phys_rng_range(&r, -0.02, 0.02);
  for (int a = 0; a < m->nu; a++) d->ctrl[a] = phys_rng_range(&r, -0.5, 0.5);
  static const char* kinds[3] = {"stiffness", "damping", "restlength"};
  for (int k = 0; k < 3; k++) {
    char tied[64], *sep[24];
    snprintf(tied, sizeof tied, "%s:*", kinds[k]);
    for (int c = 0; c < 24; c++) {
      sep[c] = malloc(64);
      snprintf(sep[c], 64, "%s:c%d", kinds[k], c);
    }
    const char* tp = tied;
    int nt = 0, ns = 0;
    double *Pt = param_jacobian(m, d, &tp, 1, &nt), *Ps = param_jacobian(m, d, (const char* const*)sep, 24, &ns);
    CHECK(nt == 1 && ns == 24);
    double worst = 0, scale = 0;
    for (int i = 0; Pt && Ps && i < 2 * m->nv; i++) {
      double sum = 0;
      double mag = 0;   // the scale: the sum of magnitudes (the 24 columns cancel in part)
      for (int c = 0; c < 24; c++) sum += Ps[i * 24 + c], mag += fabs(Ps[i * 24 + c]);
      worst = fmax(worst, fabs(Pt[i] - sum));
      scale = fmax(scale, mag);
    }
    CHECK_MSG(scale > 0 && worst <= 1e-13 * scale, "superball %s: tied vs summed columns: %g of %g", tied, worst, scale);
    printf("superball %s: max |tied - sum of 24 columns| %.3g of %.3g\n", tied, worst, scale);
    free(Pt);
    free(Ps);
    for (int c = 0; c < 24; c++) free(sep[c]);
  }
  phys_free_data(d);
  const char* spec[] = {"stiffness:*", "damping:*", "restlength:*", "mass:r1", "gain:*"};
  check_model("superball cables", m, spec, 5, 2, 1, 0);
  phys_free_model(m);
}

// the jumpworm lying on its floor, every contact model: the tied columns (hinge damping, link masses, motor
// gears) are the sums of the separate ones through the constrained step's Jacobian
static void check_tied_contact(void) {
  const char* tied[] = {"damping:*_hinge", "mass:*", "gear:*", "bias:*"};
  const char* sep[] = {"damping:tail_hinge", "damping:head_hinge", "mass:middle", "mass:tail", "mass:head",
                       "gear:tail", "gear:head", "bias:tail", "bias:head"};
  const int group[9] = {0, 0, 1, 1, 1, 2, 2, 3, 3};
  for (int cm = PHYS_CONTACT_LCP; cm <= PHYS_CONTACT_PENALTY; cm++) {
    physModel* m = gm_load("models/jumpworm.xml", 0);
    m->opt.contact = cm;
    physData* d = phys_make_data(m);
    phys_reset_keyframe(m, d, 0);
    d->ctrl[0] = 0.3, d->ctrl[1] = -0.2;
    for (int i = 0; i < 5; i++) phys_step(m, d);
    CHECK_MSG(d->ncon > 0, "jumpworm contact model %d: no contact", cm);
    int nt = 0, ns = 0, n2 = 2 * m->nv;
    double *Pt = param_jacobian(m, d, tied, 4, &nt), *Ps = param_jacobian(m, d, sep, 9, &ns);
    CHECK(nt == 4 && ns == 9);
    double worst = 0, scale = 0;
    for (int k = 0; Pt && Ps && k < n2; k++)
      for (int g = 0; g < 4; g++) {
        double sum = 0;
        for (int j = 0; j < 9; j++) sum += group[j] == g ? Ps[k * 9 + j] : 0;
        worst = fmax(worst, fabs(Pt[k * 4 + g] - sum));
        scale = fmax(scale, fabs(sum));
      }
    CHECK_MSG(scale > 0 && worst <= 1e-10 * scale, "contact model %d: tied vs summed %g of %g", cm, worst, scale);
    printf("jumpworm tied, contact model %d, %d contacts: max |tied - sum of columns| %.3g of %.3g\n", cm,
           d->ncon, worst, scale);
    free(Pt);
    free(Ps);
    phys_free_data(d);
    phys_free_model(m);
  }
}

// every named body's inertia, every joint's damping/armature/stiffness, gravity, every actuator's gear, every
// spring's stiffness/damping/rest length (named objects only), and extra specs (caller frees with free_specs)
static int all_specs(const physModel* m, char*** out, const char* const* extra, int nextra) {
  int cap = 10 * (m->nbody + m->njnt + m->nu + m->nspring) + nextra + 4, n = 0;
  char** s = malloc(sizeof(char*) * cap);
  for (int b = 1; b < m->nbody; b++) {
    if (!phys_id2name(m, "body", b)[0]) continue;
    s[n] = malloc(160);
    snprintf(s[n++], 160, "inertia:%s", phys_id2name(m, "body", b));
  }
  static const char* jk[3] = {"damping", "armature", "stiffness"};
  for (int j = 0; j < m->njnt; j++)
    for (int k = 0; k < 3 && phys_id2name(m, "joint", j)[0]; k++) {
      s[n] = malloc(160);
      snprintf(s[n++], 160, "%s:%s", jk[k], phys_id2name(m, "joint", j));
    }
  s[n] = malloc(160);
  snprintf(s[n++], 160, "gravity");
  for (int a = 0; a < m->nu; a++) {
    if (!phys_id2name(m, "actuator", a)[0]) continue;
    s[n] = malloc(160);
    snprintf(s[n++], 160, "gear:%s", phys_id2name(m, "actuator", a));
  }
  static const char* sk[3] = {"stiffness", "damping", "restlength"};
  for (int sp = 0; sp < m->nspring; sp++)
    for (int k = 0; k < 3 && phys_id2name(m, "spring", sp)[0]; k++) {
      s[n] = malloc(160);
      snprintf(s[n++], 160, "%s:%s", sk[k], phys_id2name(m, "spring", sp));
    }
  for (int i = 0; i < nextra; i++) {
    s[n] = malloc(160);
    snprintf(s[n++], 160, "%s", extra[i]);
  }
  *out = s;
  return n;
}

// free all_specs's list
static void free_specs(char** s, int n) {
  for (int i = 0; i < n; i++) free(s[i]);
  free(s);
}

// every zero armature and damping made positive (0.1 of the dof's inertia at qpos0, and 0.05): at zero the
// step is not differentiable in them (damping: phys_step integrates implicitly only if some damping is
// positive; armature: a zero-inertia dof would go singular on the negative side)
static void positive_armature_damping(physModel* m) {
  physData* d = phys_make_data(m);
  CHECK(phys_step_jacobian(m, d, NULL, NULL) == PHYS_OK);   // leaves qM at qpos0
  for (int k = 0; k < m->nv; k++) {
    CHECK(d->qM[(size_t)k * m->nv + k] > 0);
    if (m->dof_armature[k] == 0) m->dof_armature[k] = 0.1 * d->qM[(size_t)k * m->nv + k];
    if (m->dof_damping[k] == 0) m->dof_damping[k] = 0.05;
  }
  phys_free_data(d);
}

int main(void) {
  const char* hf = getenv("PARAM_H_FACTOR");
  if (hf) hfactor = atof(hf);
  check_pendulum_armature();
  check_refusal();
  check_tied();
  check_tied_contact();

  physModel* m = gm_load("tests/data/pendulum.xml", 0);
  positive_armature_damping(m);
  const char* pen1[] = {"mass:bob", "com:bob", "damping:swing", "armature:swing", "stiffness:swing", "gravity"};
  check_model("pendulum mass/com", m, pen1, 6, 3, 3, 0);
  char** s;
  int n = all_specs(m, &s, NULL, 0);
  check_model("pendulum inertia", m, (const char* const*)s, n, 3, 3, 0);
  free_specs(s, n);
  phys_free_model(m);

  m = gm_load("tests/data/mixed.xml", 0);
  positive_armature_damping(m);
  n = all_specs(m, &s, NULL, 0);
  check_model("mixed inertia", m, (const char* const*)s, n, 3, 2, 1);
  free_specs(s, n);
  const char* mix2[] = {"mass:base", "com:base", "mass:arm", "com:arm", "mass:slider", "com:slider",
                        "mass:tip", "com:tip", "gravity"};
  check_model("mixed mass/com", m, mix2, 9, 3, 2, 1);
  // placements: the spring from the world anchor to the tip's site straddles every subtree; its motor pulls
  const char* mix3[] = {"pos:arm", "pos:slider", "pos:tip", "gravity", "stiffness:spring"};
  check_model("mixed pos", m, mix3, 5, 3, 2, 1);
  m->opt.disableflags |= PHYS_DSBL_EULERDAMP;
  n = all_specs(m, &s, NULL, 0);
  check_model("mixed explicit damping", m, (const char* const*)s, n, 2, 2, 1);
  free_specs(s, n);
  phys_free_model(m);

  // actuator gain, bias, kp, kv (tests/data/actuators.xml: a motor, position and velocity servos, an affine
  // <general>, a fixed-gain <general>) beside their gears; on mixed.xml the motor on the spring
  m = gm_load("tests/data/actuators.xml", 0);
  const char* act[] = {"gain:push", "bias:push", "kp:shoulder", "kv:elbow", "gain:wrist", "bias:wrist",
                       "gear:wrist", "gear:shoulder", "bias:elbow", "gain:assist", "mass:l2"};
  check_model("actuators gain/bias", m, act, 11, 3, 2, 0);
  phys_free_model(m);
  // site transmissions (6 gear entries each) and force limits (tests/data/actuator_site.xml)
  m = gm_load("tests/data/actuator_site.xml", 0);
  const char* site[] = {"gear:tipwrench", "gain:tipwrench", "gear:thrust", "bias:thrust", "gain:thrust",
                        "kp:servo", "gear:capped", "gain:capped", "mass:l3"};
  check_model("actuator_site", m, site, 9, 3, 2, 0);
  phys_free_model(m);
  m = gm_load("tests/data/mixed.xml", 0);
  char** as;
  int na = 0;
  as = malloc(sizeof(char*) * (size_t)(2 * m->nu + 1));
  for (int a = 0; a < m->nu; a++) {
    if (m->actuator_trntype[a] == PHYS_TRN_RESTLENGTH || !phys_id2name(m, "actuator", a)[0]) continue;
    m->actuator_gainprm[3 * a] = 1.2, m->actuator_biasprm[3 * a] = 0.3;
    for (int k = 0; k < 2; k++) {
      as[na] = malloc(160);
      snprintf(as[na++], 160, "%s:%s", k ? "bias" : "gain", phys_id2name(m, "actuator", a));
    }
  }
  check_model("mixed gain/bias", m, (const char* const*)as, na, 3, 2, 1);
  free_specs(as, na);
  phys_free_model(m);

  // fixed tendons: every tendon's stiffness, damping and rest length, the gears, gains and biases of the
  // actuators on them, placements (the spatial tendon moves with pos:l2, the fixed ones do not)
  m = gm_load("tests/data/tendons_fixed.xml", 0);
  positive_armature_damping(m);
  const char* ten[] = {"gain:pull", "gain:twist", "bias:twist", "pos:l2", "pos:l3"};
  n = all_specs(m, &s, ten, 5);
  check_model("tendons_fixed", m, (const char* const*)s, n, 3, 2, 1);
  free_specs(s, n);
  phys_free_model(m);

  // wrapped spatial tendons: every tendon's stiffness, damping and rest length, the motors' gears, every inertia
  // and joint parameter; a placement that moves a wrapped tendon's site or geom is refused (PHYS_ERR_ARG)
  m = gm_load("tests/data/tendons_wrap.xml", 0);
  positive_armature_damping(m);
  n = all_specs(m, &s, NULL, 0);
  check_model("tendons_wrap", m, (const char* const*)s, n, 3, 2, 1);
  free_specs(s, n);
  {
    physLog wl;
    physParamTable wt;
    memset(&wl, 0, sizeof(wl));
    static const char* const wpos[] = {"pos:fore"};
    CHECK(phys_param_table_build(&wt, m, wpos, 1, &wl) == PHYS_ERR_ARG && strstr(wl.error, "wraps a geom"));
    phys_param_table_free(&wt);   // also after a failed build (params.h)
  }
  phys_free_model(m);

  m = gm_load("tests/data/double_pendulum.xml", 0);
  const char* dp[] = {"pos:link1", "pos:link2", "mass:link2", "gravity"};
  check_model("double pendulum pos", m, dp, 4, 4, 3, 1);
  phys_free_model(m);
  check_superball_cables();

  m = gm_load(GM_HUMANOID, PHYS_DSBL_CONTACT | PHYS_DSBL_LIMIT);
  positive_armature_damping(m);
  m->geom_restitution[phys_name2id(m, "geom", "floor")] = 0.5;   // inside [0, 1] on both sides of the stencil
  const char* hx[] = {"friction:floor", "restitution:floor", "size:head", "size:torso", "penalty:stiffness",
                      "penalty:damping"};
  n = all_specs(m, &s, hx, 6);
  check_model("humanoid in the air", m, (const char* const*)s, n, 2, 2, 1);
  free_specs(s, n);
  // every body placement but the free torso's
  char** ps = malloc(sizeof(char*) * (size_t)m->nbody);
  int np = 0;
  for (int b = 2; b < m->nbody; b++) {
    ps[np] = malloc(160);
    snprintf(ps[np++], 160, "pos:%s", phys_id2name(m, "body", b));
  }
  check_model("humanoid pos", m, (const char* const*)ps, np, 3, 2, 1);
  free_specs(ps, np);
  phys_free_model(m);
  return test_done();
}
