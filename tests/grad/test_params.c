// test_params.c - the parameter table: names and sizes, get/set round trips, the log-Cholesky map (inverse,
// derivative against central differences, physical consistency of every image), bounds, and the errors
// for invalid names (which list the valid ones); tied specs (patterns: entries, shared theta, get/set, errors);
// inertia9 (the mass held) and vertices (a learned shape: loading, set, refusals).
#include "grad_models.h"
#include "params.h"

#include <unistd.h>

// the table over every kind on tests/data/mixed.xml (the humanoid adds geom kinds below)
static const char* mixed_specs[] = {"inertia:base",  "mass:arm",          "com:arm",        "inertia:slider",
                                    "com:tip",       "damping:ball",      "armature:ball",  "stiffness:ball",
                                    "damping:slide", "armature:slide",    "stiffness:hinge", "gravity",
                                    "gear:m_slide",  "gear:m_spring",     "stiffness:spring", "damping:spring",
                                    "restlength:spring"};
#define NMIXED ((int)(sizeof(mixed_specs) / sizeof(mixed_specs[0])))

// the check that a body is physically consistent: mass > 0, principal moments > 0 and
// the triangle inequalities I1 + I2 >= I3 (all permutations)
static int consistent(const physModel* m, int b) {
  const double* I = m->body_inertia + 3 * b;
  return m->body_mass[b] > 0 && I[0] > 0 && I[1] > 0 && I[2] > 0 && I[0] + I[1] >= I[2] * (1 - 1e-12) &&
         I[0] + I[2] >= I[1] * (1 - 1e-12) && I[1] + I[2] >= I[0] * (1 - 1e-12);
}

// names, sizes, addresses and the kinds that damping/stiffness resolve to
static void check_build(void) {
  physModel* m = gm_load("tests/data/mixed.xml", 0);
  physLog log;
  memset(&log, 0, sizeof(log));
  physParamTable t;
  CHECK(phys_param_table_build(&t, m, mixed_specs, NMIXED, &log) == PHYS_OK);
  CHECK(t.n == NMIXED);
  CHECK(t.ntheta == 10 + 1 + 3 + 10 + 3 + 1 + 1 + 1 + 1 + 1 + 1 + 3 + 1 + 1 + 1 + 1 + 1);
  CHECK(t.param[0].kind == PHYS_PAR_INERTIA && t.param[0].size == 10 && t.param[0].adr == 0);
  CHECK(t.param[1].kind == PHYS_PAR_MASS && t.param[1].adr == 10);
  CHECK(t.param[11].kind == PHYS_PAR_GRAVITY && t.param[11].size == 3 && t.param[11].id == -1);
  CHECK(t.param[14].kind == PHYS_PAR_SPRING_STIFFNESS && t.param[14].id == phys_name2id(m, "spring", "spring"));
  CHECK(t.param[15].kind == PHYS_PAR_SPRING_DAMPING);
  CHECK(t.param[16].kind == PHYS_PAR_SPRING_RESTLENGTH);
  CHECK(t.param[5].kind == PHYS_PAR_DAMPING && t.param[5].id == phys_name2id(m, "joint", "ball"));
  CHECK(!strcmp(t.param[3].name, "inertia:slider"));

  // get reads the model's values
  double* th = malloc(sizeof(double) * (size_t)t.ntheta);
  phys_param_get(&t, m, th);
  CHECK(th[10] == m->body_mass[phys_name2id(m, "body", "arm")]);
  CHECK(th[t.param[5].adr] == 0.3);      // damping:ball
  CHECK(th[t.param[6].adr] == 0.02);     // armature:ball
  CHECK(th[t.param[10].adr] == 3);       // stiffness:hinge
  CHECK(th[t.param[11].adr] == 0.3 && th[t.param[11].adr + 1] == -0.2 && th[t.param[11].adr + 2] == -9.81);
  CHECK(th[t.param[12].adr] == 2);       // gear:m_slide
  CHECK(th[t.param[14].adr] == 40 && th[t.param[15].adr] == 1.5 && th[t.param[16].adr] == 0.1);

  // bounds
  double* lo = malloc(sizeof(double) * (size_t)t.ntheta);
  double* hi = malloc(sizeof(double) * (size_t)t.ntheta);
  phys_param_bounds(&t, lo, hi);
  CHECK(lo[10] == 0 && hi[10] == HUGE_VAL);            // mass
  CHECK(lo[0] == -HUGE_VAL && hi[0] == HUGE_VAL);      // log-Cholesky: unbounded
  CHECK(lo[t.param[11].adr] == -HUGE_VAL);            // gravity
  CHECK(lo[t.param[5].adr] == 0);                      // damping
  free(lo);
  free(hi);
  free(th);
  phys_param_table_free(&t);
  phys_free_model(m);
}

// get -> set -> get is the identity, set writes every kind (a changed theta reads back), inertial bodies
// written from 10 parameters reproduce them through phys_inertial_params, and stay consistent
static void check_roundtrip(void) {
  physModel* m = gm_load("tests/data/mixed.xml", 0);
  physLog log;
  memset(&log, 0, sizeof(log));
  physParamTable t;
  CHECK(phys_param_table_build(&t, m, mixed_specs, NMIXED, &log) == PHYS_OK);
  int n = t.ntheta;
  double *th0 = malloc(sizeof(double) * n), *th1 = malloc(sizeof(double) * n), *th2 = malloc(sizeof(double) * n);
  phys_param_get(&t, m, th0);
  double pi_base[10], pi_after[10];
  phys_inertial_params(m, 1, pi_base);
  CHECK(phys_param_set(&t, m, th0) == PHYS_OK);
  phys_param_get(&t, m, th1);
  double err = 0;
  for (int i = 0; i < n; i++) err = fmax(err, fabs(th1[i] - th0[i]) / fmax(1, fabs(th0[i])));
  CHECK_MSG(err < 1e-12, "get-set-get error %.3g", err);
  phys_inertial_params(m, 1, pi_after);
  for (int i = 0; i < 10; i++) CHECK_REL(pi_after[i], pi_base[i], 1e-12, 1e-12);

  // a random theta: set then get returns it (log-Cholesky coordinates included)
  physRng r;
  phys_rng_seed(&r, 5);
  for (int trial = 0; trial < 20; trial++) {
    for (int i = 0; i < n; i++) th1[i] = th0[i] * (1 + 0.3 * phys_rng_range(&r, -1, 1)) + 0.1 * phys_rng_range(&r, -1, 1);
    for (int e = 0; e < t.n; e++)   // keep masses and nonnegative kinds in their bounds
      if (t.param[e].kind != PHYS_PAR_INERTIA && t.param[e].kind != PHYS_PAR_COM && t.param[e].kind != PHYS_PAR_GRAVITY &&
          t.param[e].kind != PHYS_PAR_GEAR)
        th1[t.param[e].adr] = fabs(th1[t.param[e].adr]) + 1e-3;
    CHECK(phys_param_set(&t, m, th1) == PHYS_OK);
    phys_param_get(&t, m, th2);
    err = 0;
    for (int i = 0; i < n; i++) err = fmax(err, fabs(th2[i] - th1[i]) / fmax(1, fabs(th1[i])));
    CHECK_MSG(err < 1e-10, "trial %d: set-get error %.3g", trial, err);
    for (int b = 1; b < m->nbody; b++) CHECK(consistent(m, b));
    // the inertial parameters of an inertia body equal the log-Cholesky image of its theta
    double pi[10];
    phys_logchol_to_pi(pi, NULL, th1);
    phys_inertial_params(m, 1, pi_after);
    for (int i = 0; i < 10; i++) CHECK_REL(pi_after[i], pi[i], 1e-10, 1e-12);
    // subtree mass follows
    double tot = 0;
    for (int b = 1; b < m->nbody; b++) tot += m->body_mass[b];
    CHECK_REL(m->body_subtreemass[0], tot, 1e-14, 0);
  }
  // invalid values are refused
  th1[10] = -1;
  CHECK(phys_param_set(&t, m, th1) == PHYS_ERR_VALUE);
  th1[10] = NAN;
  CHECK(phys_param_set(&t, m, th1) == PHYS_ERR_VALUE);
  free(th0);
  free(th1);
  free(th2);
  phys_param_table_free(&t);
  phys_free_model(m);
}

// the log-Cholesky map: pi(theta) against the closed form for theta = (alpha, 0...): U = e^alpha E,
// J = e^(2 alpha) E: m = e^2a, c = 0, S = e^2a E, Ibar = tr(S) E - S = 2 e^2a E; the inverse; dpi/dtheta
// against central differences (h = 1e-6: truncation h^2 |pi'''| ~ 1e-12, rounding 1e-16/1e-6 = 1e-10 relative)
static void check_logchol(void) {
  double th[10] = {0.3, 0, 0, 0, 0, 0, 0, 0, 0, 0}, pi[10], dpi[100], back[10];
  phys_logchol_to_pi(pi, NULL, th);
  double e2 = exp(0.6);
  CHECK_REL(pi[0], e2, 1e-15, 0);
  for (int i = 1; i < 4; i++) CHECK_NEAR(pi[i], 0, 1e-15);
  for (int i = 4; i < 7; i++) CHECK_REL(pi[i], 2 * e2, 1e-15, 0);
  for (int i = 7; i < 10; i++) CHECK_NEAR(pi[i], 0, 1e-15);

  physRng r;
  phys_rng_seed(&r, 3);
  for (int trial = 0; trial < 50; trial++) {
    gm_rand_vec(&r, th, 10);
    phys_logchol_to_pi(pi, dpi, th);
    CHECK(phys_pi_to_logchol(back, pi));
    for (int i = 0; i < 10; i++) CHECK_NEAR(back[i], th[i], 1e-10);
    // physical consistency of the image: m > 0 and the inertia about the com positive definite with the
    // triangle inequalities, via the eigenvalues of Ic = Ibar - m S(c)
    double c[3] = {pi[1] / pi[0], pi[2] / pi[0], pi[3] / pi[0]}, S[10], zero[6] = {0}, Ic[9], ev[3], q[4];
    phys_inert_from_com(S, pi[0], c, zero);
    static const int idx[9] = {0, 3, 4, 3, 1, 5, 4, 5, 2};
    for (int k = 0; k < 9; k++) Ic[k] = pi[4 + idx[k]] - S[4 + idx[k]];
    phys_eig3(ev, q, Ic);
    CHECK(pi[0] > 0 && ev[2] > 0 && ev[1] + ev[2] >= ev[0] * (1 - 1e-12));
    // derivative
    double err = 0;
    for (int k = 0; k < 10; k++) {
      double tp[10], tm[10], pp[10], pm[10];
      memcpy(tp, th, sizeof(tp));
      memcpy(tm, th, sizeof(tm));
      tp[k] += 1e-6;
      tm[k] -= 1e-6;
      phys_logchol_to_pi(pp, NULL, tp);
      phys_logchol_to_pi(pm, NULL, tm);
      double scale = gm_maxabs(pi, 10);
      for (int i = 0; i < 10; i++) err = fmax(err, fabs((pp[i] - pm[i]) / 2e-6 - dpi[10 * i + k]) / scale);
    }
    CHECK_MSG(err < 1e-8, "trial %d: dpi/dtheta error %.3g", trial, err);
  }
  // an inconsistent body has no log-Cholesky point: m c with |c| large and tiny inertia
  double bad[10] = {1, 0, 0, 0, 1e-3, 1e-3, 1e-3, 0, 0, 0};
  bad[4] = 5;   // Ixx > Iyy + Izz about the origin with c = 0: triangle inequality violated
  CHECK(!phys_pi_to_logchol(back, bad));
}

// invalid specs give PHYS_ERR_ARG and a message that lists the valid names
static void check_errors(void) {
  physModel* m = gm_load("tests/data/mixed.xml", 0);
  physLog log;
  physParamTable t;
  struct {
    const char* spec;
    const char* expect[3];
  } cases[] = {
      {"mass:nosuch", {"mass:nosuch", "no body named 'nosuch'", "base, arm, slider, tip"}},
      {"bogus:arm", {"unknown kind 'bogus'", "mass, com, inertia", "restitution"}},
      {"damping:nosuch", {"no joint or spring", "ball, slide, hinge", "springs: spring"}},
      {"gear:nosuch", {"no actuator", "m_slide, m_hinge, m_spring", NULL}},
      {"restlength:ball", {"no spring named 'ball'", "valid: spring", NULL}},
      {"mass:world", {"no body", NULL, NULL}},
      {"gravity:arm", {"gravity takes no name", NULL, NULL}},
      {"penalty:foo", {"unknown penalty parameter 'foo'", "penalty:stiffness, penalty:damping", NULL}},
      {"size:nosuch", {"no geom named 'nosuch'", NULL, NULL}},
      {"pos:world", {"no body named 'world'", "base, arm", NULL}},
      {"damping:x*", {"no joint or spring matches 'x*'", "ball, slide, hinge", "springs: spring"}},
      {"mass:w*", {"no body matches 'w*'", "base, arm", NULL}},   // the world never matches
      {"friction:*", {"friction takes one name, not a pattern", NULL, NULL}},
      {"pos:*", {"pos takes one name, not a pattern", NULL, NULL}},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    memset(&log, 0, sizeof(log));
    const char* spec[1] = {cases[i].spec};
    CHECK(phys_param_table_build(&t, m, spec, 1, &log) == PHYS_ERR_ARG);
    for (int k = 0; k < 3; k++)
      if (cases[i].expect[k]) CHECK_MSG(strstr(log.error, cases[i].expect[k]), "'%s' lacks '%s'", log.error, cases[i].expect[k]);
    phys_param_table_free(&t);
  }
  // overlaps: inertia and mass of one body, a repeated spec
  const char* ov[2] = {"inertia:arm", "mass:arm"};
  memset(&log, 0, sizeof(log));
  CHECK(phys_param_table_build(&t, m, ov, 2, &log) == PHYS_ERR_ARG);
  CHECK(strstr(log.error, "overlaps") != NULL);
  phys_param_table_free(&t);
  const char* ovp[2] = {"inertia:tip", "mass:[at]*"};   // a pattern's match overlaps
  memset(&log, 0, sizeof(log));
  CHECK(phys_param_table_build(&t, m, ovp, 2, &log) == PHYS_ERR_ARG);
  CHECK(strstr(log.error, "'mass:[at]*': overlaps 'inertia:tip'") != NULL);
  phys_param_table_free(&t);
  const char* rep[2] = {"damping:slide", "damping:slide"};
  CHECK(phys_param_table_build(&t, m, rep, 2, &log) == PHYS_ERR_ARG);
  phys_param_table_free(&t);
  // pos of a body whose subtree holds some of a spring's sites: a table entry like any other
  const char* ps[1] = {"pos:arm"};
  memset(&log, 0, sizeof(log));
  CHECK_MSG(phys_param_table_build(&t, m, ps, 1, &log) == PHYS_OK, "%s", log.error);
  CHECK(t.ntheta == 3 && t.param[0].kind == PHYS_PAR_POS);
  phys_param_table_free(&t);
  const char* ok[2] = {"mass:arm", "com:arm"};
  CHECK(phys_param_table_build(&t, m, ok, 2, &log) == PHYS_OK);
  phys_param_table_free(&t);
  phys_free_model(m);
}

// tied specs on mixed.xml: one entry per match sharing one theta block, set writes the shared value into
// every match (the ball joint's three dofs too), get reads the first match's, spec_entry finds each spec
static void check_tied_table(void) {
  physModel* m = gm_load("tests/data/mixed.xml", 0);
  physLog log = {0};
  physParamTable t;
  const char* spec[3] = {"damping:[bsh]*", "mass:[at]*", "gravity"};   // not the free root
  CHECK_MSG(phys_param_table_build(&t, m, spec, 3, &log) == PHYS_OK, "%s", log.error);
  int ball = phys_name2id(m, "joint", "ball"), slide = phys_name2id(m, "joint", "slide");
  int hinge = phys_name2id(m, "joint", "hinge"), arm = phys_name2id(m, "body", "arm");
  int tip = phys_name2id(m, "body", "tip");
  CHECK(t.n == 6 && t.ntheta == 5);
  const int kind[6] = {PHYS_PAR_DAMPING, PHYS_PAR_DAMPING, PHYS_PAR_DAMPING, PHYS_PAR_MASS, PHYS_PAR_MASS,
                       PHYS_PAR_GRAVITY};
  const int id[6] = {ball, slide, hinge, arm, tip, -1}, adr[6] = {0, 0, 0, 1, 1, 2}, tied[6] = {0, 1, 1, 0, 1, 0};
  for (int e = 0; e < t.n && t.n == 6; e++) {
    const physParam* p = t.param + e;
    CHECK_MSG(p->kind == kind[e] && p->id == id[e] && p->adr == adr[e] && p->tied == tied[e] &&
              p->spec == (e < 3 ? 0 : e < 5 ? 1 : 2), "entry %d: kind %d id %d adr %d tied %d spec %d", e,
              p->kind, p->id, p->adr, p->tied, p->spec);
    CHECK(!strcmp(p->name, spec[p->spec]));
  }
  CHECK(phys_param_spec_entry(&t, 1) == t.param + 3 && phys_param_spec_entry(&t, 3) == NULL);
  // get: the first match's value
  int da = m->jnt_dofadr[ball];
  m->dof_damping[da] = 0.25;
  m->dof_damping[m->jnt_dofadr[slide]] = 9;
  double th[5];
  phys_param_get(&t, m, th);
  CHECK(th[0] == 0.25 && th[1] == m->body_mass[arm]);
  // set: every match
  const double in[5] = {0.7, 2.5, 0, 0, -3};
  CHECK(phys_param_set(&t, m, in) == PHYS_OK);
  for (int k = 0; k < 3; k++) CHECK(m->dof_damping[da + k] == 0.7);
  CHECK(m->dof_damping[m->jnt_dofadr[slide]] == 0.7 && m->dof_damping[m->jnt_dofadr[hinge]] == 0.7);
  CHECK(m->body_mass[arm] == 2.5 && m->body_mass[tip] == 2.5 && m->body_mass[phys_name2id(m, "body", "base")] != 2.5);
  CHECK(m->body_subtreemass[arm] >= 5);   // the subtree sums follow (tip lies under arm)
  phys_param_table_free(&t);
  phys_free_model(m);
}

// a tied gear needs one size: motors on a ball joint (3) and a hinge (1) matched by one pattern are refused
static void check_tied_gear_sizes(void) {
  char path[] = "/tmp/physid_test_params_XXXXXX";
  int fd = mkstemp(path);
  FILE* f = fd >= 0 ? fdopen(fd, "w") : NULL;
  CHECK(f != NULL);
  if (!f) return;
  fputs("<mujoco><worldbody><body name='a'><joint name='b' type='ball'/><geom size='.1'/><body name='c' pos='0 0 1'>"
        "<joint name='h'/><geom size='.1'/></body></body></worldbody><actuator><motor name='mb' joint='b'/>"
        "<motor name='mh' joint='h'/></actuator></mujoco>\n", f);
  fclose(f);
  physModel* m = gm_load(path, 0);
  unlink(path);
  physLog log = {0};
  physParamTable t;
  const char* spec[1] = {"gear:m*"};
  CHECK(phys_param_table_build(&t, m, spec, 1, &log) == PHYS_ERR_ARG);
  CHECK_MSG(strstr(log.error, "param 'gear:m*': matches actuators of different sizes ('mb' 3, 'mh' 1)"), "%s", log.error);
  phys_param_table_free(&t);
  phys_free_model(m);
}

// geom kinds and gear sizes on the humanoid: friction (1: the sliding coefficient only) and restitution (1)
// round-trip, free-joint gear
static void check_humanoid(void) {
  physModel* m = gm_load(GM_HUMANOID, 0);
  physLog log;
  memset(&log, 0, sizeof(log));
  physParamTable t;
  const char* spec[3] = {"friction:floor", "restitution:floor", "inertia:torso"};
  CHECK(phys_param_table_build(&t, m, spec, 3, &log) == PHYS_OK);
  CHECK(t.ntheta == 12 && t.param[0].size == 1 && t.param[1].adr == 1);
  double th[12], th2[12];
  phys_param_get(&t, m, th);
  int g = phys_name2id(m, "geom", "floor");
  double tors = m->geom_friction[3 * g + 1], roll = m->geom_friction[3 * g + 2];
  CHECK(th[0] == m->geom_friction[3 * g] && th[1] == m->geom_restitution[g]);
  th[0] = 0.7;
  th[1] = 0.4;
  CHECK(phys_param_set(&t, m, th) == PHYS_OK);
  CHECK(m->geom_friction[3 * g] == 0.7 && m->geom_restitution[g] == 0.4);
  CHECK(m->geom_friction[3 * g + 1] == tors && m->geom_friction[3 * g + 2] == roll);   // untouched
  phys_param_get(&t, m, th2);
  for (int i = 0; i < 12; i++) CHECK_NEAR(th2[i], th[i], 1e-12 * fmax(1, fabs(th[i])));
  double lo[12], hi[12];
  phys_param_bounds(&t, lo, hi);
  CHECK(lo[1] == 0 && hi[1] == 1 && lo[0] == 0 && hi[0] == HUGE_VAL);
  // out of range values are refused
  th2[0] = -0.1;
  CHECK(phys_param_set(&t, m, th2) == PHYS_ERR_VALUE);
  th2[0] = 0.5;
  th2[1] = 1.5;
  CHECK(phys_param_set(&t, m, th2) == PHYS_ERR_VALUE);
  phys_param_table_free(&t);
  phys_free_model(m);
}

// size (sphere 1, capsule 2, box 3 numbers; geom_rbound follows), pos (body_pos, 3) and the penalty
// parameters: sizes, get/set, bounds, refused values
static void check_size_pos_penalty(void) {
  physModel* m = gm_load(GM_HUMANOID, 0);
  physLog log;
  memset(&log, 0, sizeof(log));
  physParamTable t;
  const char* spec[5] = {"size:torso", "pos:lower_waist", "penalty:stiffness", "penalty:damping", "size:head"};
  CHECK_MSG(phys_param_table_build(&t, m, spec, 5, &log) == PHYS_OK, "%s", log.error);
  int gt = phys_name2id(m, "geom", "torso"), gh = phys_name2id(m, "geom", "head"), b = phys_name2id(m, "body", "lower_waist");
  CHECK(m->geom_type[gt] == PHYS_GEOM_CAPSULE && m->geom_type[gh] == PHYS_GEOM_SPHERE);
  CHECK(t.ntheta == 2 + 3 + 1 + 1 + 1);
  CHECK(t.param[0].kind == PHYS_PAR_SIZE && t.param[0].size == 2 && t.param[1].kind == PHYS_PAR_POS);
  CHECK(t.param[2].kind == PHYS_PAR_PENALTY_STIFFNESS && t.param[3].kind == PHYS_PAR_PENALTY_DAMPING);
  CHECK(t.param[2].id == -1 && t.param[4].size == 1 && t.param[4].adr == 7);
  double th[8];
  phys_param_get(&t, m, th);
  CHECK(th[0] == m->geom_size[3 * gt] && th[1] == m->geom_size[3 * gt + 1]);
  CHECK(th[2] == m->body_pos[3 * b] && th[3] == m->body_pos[3 * b + 1] && th[4] == m->body_pos[3 * b + 2]);
  CHECK(th[5] == m->opt.penalty_stiffness && th[6] == m->opt.penalty_damping && th[7] == m->geom_size[3 * gh]);
  double set[8] = {0.08, 0.1, 0.01, -0.02, -0.3, 2e4, 50, 0.12};
  CHECK(phys_param_set(&t, m, set) == PHYS_OK);
  CHECK(m->geom_size[3 * gt] == 0.08 && m->geom_size[3 * gt + 1] == 0.1 && m->geom_rbound[gt] == 0.08 + 0.1);
  CHECK(m->geom_size[3 * gh] == 0.12 && m->geom_rbound[gh] == 0.12);
  CHECK(m->body_pos[3 * b] == 0.01 && m->body_pos[3 * b + 1] == -0.02 && m->body_pos[3 * b + 2] == -0.3);
  CHECK(m->opt.penalty_stiffness == 2e4 && m->opt.penalty_damping == 50);
  phys_param_get(&t, m, th);
  for (int i = 0; i < 8; i++) CHECK(th[i] == set[i]);
  double lo[8], hi[8];
  phys_param_bounds(&t, lo, hi);
  CHECK(lo[0] == 0 && lo[1] == 0 && lo[2] == -HUGE_VAL && lo[5] == 0 && lo[6] == 0 && hi[5] == HUGE_VAL);
  // zero or negative sizes and stiffness, negative damping
  const int bad_i[4] = {0, 1, 5, 6};
  const double bad_v[4] = {0, -0.1, 0, -1};
  for (int k = 0; k < 4; k++) {
    memcpy(th, set, sizeof(th));
    th[bad_i[k]] = bad_v[k];
    CHECK_MSG(phys_param_set(&t, m, th) == PHYS_ERR_VALUE, "value %g at %d accepted", bad_v[k], bad_i[k]);
  }
  phys_param_table_free(&t);
  // a box has 3 sizes
  physModel* mb = gm_load("tests/data/contact/box_plane.xml", 0);
  int gb = -1;
  for (int g = 0; g < mb->ngeom; g++)
    if (mb->geom_type[g] == PHYS_GEOM_BOX && phys_id2name(mb, "geom", g)[0]) gb = g;
  CHECK(gb >= 0);
  if (gb >= 0) {
    char sp[200];
    snprintf(sp, sizeof(sp), "size:%s", phys_id2name(mb, "geom", gb));
    const char* bs[1] = {sp};
    CHECK(phys_param_table_build(&t, mb, bs, 1, &log) == PHYS_OK);
    CHECK(t.ntheta == 3);
    double bx[3] = {0.3, 0.2, 0.1};
    CHECK(phys_param_set(&t, mb, bx) == PHYS_OK);
    CHECK_REL(mb->geom_rbound[gb], sqrt(0.09 + 0.04 + 0.01), 1e-15, 0);
    phys_param_table_free(&t);
  }
  phys_free_model(mb);
  phys_free_model(m);
}

// a plane has no size parameter, a free body's placement is its state; the messages say so
static void check_refused_geometry(void) {
  physModel* m = gm_load(GM_HUMANOID, 0);
  physLog log;
  physParamTable t;
  const char* s1[1] = {"size:floor"};
  memset(&log, 0, sizeof(log));
  CHECK(phys_param_table_build(&t, m, s1, 1, &log) == PHYS_ERR_ARG);
  CHECK_MSG(strstr(log.error, "geom 'floor' is a plane") && strstr(log.error, "sphere (1), capsule (2) and box (3)"),
            "%s", log.error);
  phys_param_table_free(&t);
  const char* s2[1] = {"pos:torso"};
  memset(&log, 0, sizeof(log));
  CHECK(phys_param_table_build(&t, m, s2, 1, &log) == PHYS_ERR_ARG);
  CHECK_MSG(strstr(log.error, "body 'torso' has a free joint"), "%s", log.error);
  phys_param_table_free(&t);
  phys_free_model(m);
}

// size:GEOM keeps the bounding radius the compiler's (issue 11: params.c had its own copy, which gave an
// ellipsoid |size| instead of its largest semi-axis): an ellipsoid and a cylinder resized through the table
// get the geom_rbound a model compiled with those sizes has
static void check_size_rbound(void) {
  static const char* const xml =
      "<mujoco>\n"
      "  <worldbody>\n"
      "    <geom name='floor' type='plane' size='5 5 .1'/>\n"
      "    <body name='e' pos='0 0 1'><freejoint/><geom name='egg' type='ellipsoid' size='%g .2 .1'/></body>\n"
      "    <body name='c' pos='1 0 1'><freejoint/><geom name='can' type='cylinder' size='%g .2'/></body>\n"
      "  </worldbody>\n"
      "</mujoco>\n";
  char buf[1024], path[] = "/tmp/test_params_XXXXXX.xml";
  physModel* m[2];
  for (int k = 0; k < 2; k++) {
    snprintf(buf, sizeof buf, xml, k ? 0.45 : 0.3, k ? 0.45 : 0.3);
    int fd = mkstemps(path, 4);
    CHECK(fd >= 0);
    FILE* f = fdopen(fd, "w");
    fputs(buf, f);
    fclose(f);
    m[k] = gm_load(path, 0);
    unlink(path);
    memcpy(path + strlen(path) - 10, "XXXXXX", 6);
  }
  const char* spec[] = {"size:egg", "size:can"};
  physParamTable t;
  physLog log = {0};
  CHECK(phys_param_table_build(&t, m[0], spec, 2, &log) == PHYS_OK);
  double th[8];
  phys_param_get(&t, m[0], th);
  th[t.param[0].adr] = 0.45;
  th[t.param[1].adr] = 0.45;
  CHECK(phys_param_set(&t, m[0], th) == PHYS_OK);
  for (int g = 0; g < m[0]->ngeom; g++)
    CHECK_MSG(m[0]->geom_rbound[g] == m[1]->geom_rbound[g], "geom %d: rbound %.17g after size:, %.17g compiled", g,
              m[0]->geom_rbound[g], m[1]->geom_rbound[g]);
  phys_param_table_free(&t);
  phys_free_model(m[0]);
  phys_free_model(m[1]);
}

// actuator kinds: get/set of gain, bias, kp (the tie biasprm[1] = -kp), kv; refusals: kp on a velocity servo
// or a motor, gain beside kp on one actuator, negative kp; the error names the actuator and the fix
static void check_actuator_kinds(void) {
  physModel* m = gm_load("tests/data/actuators.xml", 0);
  physLog log;
  physParamTable t;
  const char* ok[] = {"gain:push", "bias:push", "kp:shoulder", "kv:elbow", "bias:elbow", "gain:wr*"};
  memset(&log, 0, sizeof(log));
  CHECK_MSG(phys_param_table_build(&t, m, ok, 6, &log) == PHYS_OK, "%s", log.error);
  double th[6], lo[6], hi[6];
  phys_param_get(&t, m, th);
  CHECK(th[0] == 1 && th[1] == 0 && th[2] == 30 && th[3] == 3 && th[4] == 0 && th[5] == 4);
  phys_param_bounds(&t, lo, hi);
  CHECK(lo[0] == -HUGE_VAL && lo[1] == -HUGE_VAL && lo[2] == 0 && lo[3] == 0 && hi[2] == HUGE_VAL);
  double nt[6] = {0.8, 0.1, 12, 1.5, -0.2, 2};
  CHECK(phys_param_set(&t, m, nt) == PHYS_OK);
  int sh = phys_name2id(m, "actuator", "shoulder"), el = phys_name2id(m, "actuator", "elbow");
  CHECK(m->actuator_gainprm[3 * sh] == 12 && m->actuator_biasprm[3 * sh + 1] == -12);
  CHECK(m->actuator_gainprm[3 * el] == 1.5 && m->actuator_biasprm[3 * el + 2] == -1.5 && m->actuator_biasprm[3 * el] == -0.2);
  CHECK(m->actuator_gainprm[0] == 0.8 && m->actuator_biasprm[0] == 0.1);
  nt[2] = -1;
  CHECK(phys_param_set(&t, m, nt) == PHYS_ERR_VALUE);
  phys_param_table_free(&t);
  struct { const char* spec[2]; int n; const char* frag[2]; } bad[] = {
      {{"kp:elbow"}, 1, {"actuator 'elbow' is not a position servo", "fit gain:elbow and bias:elbow"}},
      {{"kv:push"}, 1, {"actuator 'push' is not a velocity servo", NULL}},
      {{"kp:shoulder", "gain:shoulder"}, 2, {"overlaps 'kp:shoulder'", "gain, kp and kv are its gainprm[0]"}},
      {{"gain:nosuch"}, 1, {"no actuator named 'nosuch'", "push, shoulder"}},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    memset(&log, 0, sizeof(log));
    CHECK(phys_param_table_build(&t, m, bad[i].spec, bad[i].n, &log) == PHYS_ERR_ARG);
    for (int k = 0; k < 2 && bad[i].frag[k]; k++) CHECK_MSG(strstr(log.error, bad[i].frag[k]), "%s", log.error);
    phys_param_table_free(&t);
  }
  phys_free_model(m);
}

// issue 14 item 2: inertia9:BODY (log-Cholesky without alpha) holds the mass bit for bit while the com and the
// rotational inertia move (every value a consistent body); its 9 dpi columns are the full map's columns 1..9; it
// overlaps inertia and mass on the same body
static void check_inertia9(void) {
  physModel* m = gm_load("models/cube.xml", 0);
  int b = phys_name2id(m, "body", "cube");
  double mass = m->body_mass[b];
  const char* spec[1] = {"inertia9:cube"};
  physParamTable t, tf;
  physLog log = {0};
  CHECK(phys_param_table_build(&t, m, spec, 1, &log) == PHYS_OK && t.ntheta == 9);
  const char* full[1] = {"inertia:cube"};
  CHECK(phys_param_table_build(&tf, m, full, 1, &log) == PHYS_OK);
  double th[9], thf[10], dpi9[90], dpi[100];
  phys_param_get(&t, m, th);
  phys_param_get(&tf, m, thf);
  for (int i = 0; i < 9; i++) CHECK(th[i] == thf[1 + i]);
  phys_param_dpi(m, t.param, dpi9);
  phys_param_dpi(m, tf.param, dpi);
  for (int r = 0; r < 10; r++)
    for (int k = 0; k < 9; k++) CHECK(dpi9[9 * r + k] == dpi[10 * r + 1 + k]);
  physRng rng;
  phys_rng_seed(&rng, 9);
  double th0[9];
  memcpy(th0, th, sizeof th0);
  for (int trial = 0; trial < 20; trial++) {   // (set-get as check_roundtrip: 1e-10 relative)
    for (int i = 0; i < 9; i++) th[i] = th0[i] + 0.3 * (2 * phys_rng_uniform(&rng) - 1);
    CHECK(phys_param_set(&t, m, th) == PHYS_OK);
    CHECK(m->body_mass[b] == mass && consistent(m, b));
    double back[9];
    phys_param_get(&t, m, back);
    for (int i = 0; i < 9; i++) CHECK_REL(back[i], th[i], 1e-10, 1e-10);
  }
  CHECK(fabs(m->body_ipos[3 * b]) > 1e-3);   // the com moved
  phys_param_table_free(&t);
  phys_param_table_free(&tf);
  const char* both[2] = {"inertia9:cube", "mass:cube"};
  memset(&log, 0, sizeof log);
  CHECK(phys_param_table_build(&t, m, both, 2, &log) == PHYS_ERR_ARG);
  CHECK_MSG(strstr(log.error, "overlaps 'inertia9:cube' (a body takes inertia, inertia9 or mass/com)"), "%s",
            log.error);
  phys_param_table_free(&t);
  phys_free_model(m);
}

// vertices:GEOM needs the geom loaded with a learned shape (physLoadOptions.vertex_geoms); loaded so, its 24
// values are the box's corners, and phys_param_set moves them, remakes the hull and the bounding radius; coplanar
// vertices are refused (PHYS_ERR_VALUE)
static void check_vertices(void) {
  physModel* m = gm_load("models/cube.xml", 0);
  const char* spec[1] = {"vertices:cube"};
  physParamTable t;
  physLog log = {0};
  CHECK(phys_param_table_build(&t, m, spec, 1, &log) == PHYS_ERR_ARG);
  CHECK_MSG(strstr(log.error, "param 'vertices:cube': geom 'cube' (a box) was not loaded with a learned shape"), "%s",
            log.error);
  phys_param_table_free(&t);
  phys_free_model(m);
  const char* geoms[1] = {"cube"};
  physLoadOptions opt = {0};
  opt.vertex_geoms = geoms, opt.nvertex_geoms = 1;
  m = phys_load("models/cube.xml", &opt, &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  if (!m) return;
  int g = phys_name2id(m, "geom", "cube");
  CHECK(phys_param_table_build(&t, m, spec, 1, &log) == PHYS_OK && t.ntheta == 24);
  double th[24];
  phys_param_get(&t, m, th);
  for (int c = 0; c < 8; c++)
    for (int k = 0; k < 3; k++) CHECK(th[3 * c + k] == ((c >> k & 1) ? 0.0524 : -0.0524));
  th[21] = th[22] = th[23] = 0.1;   // corner 7 pulled out
  CHECK(phys_param_set(&t, m, th) == PHYS_OK);
  CHECK_REL(m->geom_rbound[g], sqrt(0.03), 1e-15, 0);
  CHECK(m->mesh_hullnum[m->geom_dataid[g]] == 8);
  for (int c = 0; c < 8; c++) th[3 * c + 2] = 0;   // all on z = 0
  CHECK(phys_param_set(&t, m, th) == PHYS_ERR_VALUE);
  phys_param_table_free(&t);
  phys_free_model(m);
}

int main(void) {
  check_actuator_kinds();
  check_build();
  check_roundtrip();
  check_logchol();
  check_errors();
  check_tied_table();
  check_tied_gear_sizes();
  check_humanoid();
  check_size_pos_penalty();
  check_refused_geometry();
  check_size_rbound();
  check_inertia9();
  check_vertices();
  return test_done();
}
