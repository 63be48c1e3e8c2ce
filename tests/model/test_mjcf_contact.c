// test_mjcf_contact.c - the MJCF reader's contact settings: physid's <custom> extensions (contact model,
// Baumgarte, penalty, solver, per-geom and per-pair restitution), <contact><pair>/<exclude>, <size nconmax>,
// through phys_load_mjcf into the compiled model; the rest-length actuators of physid:restlength; physid's own
// integrator (physid:integrator); and every bad value as a file:line error (src/model/mjcf_contact.c).
// (tests/model/test_oracle_mjcf_contact.c checks that MuJoCo 2.2.2 loads the same file.)
#include <string.h>

#include "mjcf_text.h"

// the model of the tests: %s is placed in <custom>, the second %s in <contact>
static const char* MODEL =
    "<mujoco model='contact'>\n"
    "  <size nconmax='37'/>\n"
    "  <worldbody>\n"
    "    <geom name='floor' type='plane' size='5 5 .1' friction='0.7'/>\n"
    "    <body name='a' pos='0 0 1'>\n"
    "      <freejoint/>\n"
    "      <geom name='ball' type='sphere' size='.1' friction='0.4'/>\n"
    "    </body>\n"
    "    <body name='b' pos='0 0 2'>\n"
    "      <freejoint/>\n"
    "      <geom name='box' type='box' size='.1 .1 .1' margin='0.002' friction='0.3'/>\n"
    "    </body>\n"
    "  </worldbody>\n"
    "  <contact>\n"
    "%s"
    "  </contact>\n"
    "  <custom>\n"
    "%s"
    "  </custom>\n"
    "</mujoco>\n";

// the full extension set (also the file of the MuJoCo oracle test)
static const char* PAIRS =
    "    <pair name='p1' geom1='ball' geom2='box' friction='0.9 0.9 0.005 0.0001 0.0001' margin='0.01'/>\n"
    "    <pair geom1='floor' geom2='box'/>\n"
    "    <exclude body1='a' body2='b'/>\n";
static const char* CUSTOM =
    "    <text name='physid:contact' data='cone'/>\n"
    "    <numeric name='physid:baumgarte' data='0.3'/>\n"
    "    <numeric name='physid:penalty' data='2e4 50 0.01'/>\n"
    "    <numeric name='physid:solver' data='250 1e-8'/>\n"
    "    <numeric name='physid:restitution:ball' data='0.8'/>\n"
    "    <numeric name='physid:restitution:floor' data='0.25'/>\n"
    "    <numeric name='physid:pair_restitution:p1' data='0.5'/>\n"
    "    <numeric name='user_data' data='1 2 3'/>\n";

static void test_values(void) {
  char text[4096];
  physLog log;
  snprintf(text, sizeof text, MODEL, PAIRS, CUSTOM);
  physModel* m = load_text(text, &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  if (!m) return;
  CHECK_MSG(log.nwarning == 0, "%d warnings: %s", log.nwarning, log.warning[0]);
  CHECK(m->opt.contact == PHYS_CONTACT_CONE);
  CHECK(m->opt.baumgarte == 0.3);
  CHECK(m->opt.penalty_stiffness == 2e4 && m->opt.penalty_damping == 50 && m->opt.penalty_vslip == 0.01);
  CHECK(m->opt.solver_iterations == 250 && m->opt.solver_tolerance == 1e-8);
  CHECK(m->nconmax == 37);
  int ball = phys_name2id(m, "geom", "ball"), box = phys_name2id(m, "geom", "box");
  int floor = phys_name2id(m, "geom", "floor");
  CHECK(m->geom_restitution[ball] == 0.8 && m->geom_restitution[floor] == 0.25 && m->geom_restitution[box] == 0);
  CHECK(m->npair == 2 && m->nexclude == 1);
  if (m->npair == 2) {
    // p1: friction, margin and restitution given; the second pair has MJCF's pair defaults (friction 1,
    // margin 0, as MuJoCo 2.2.2) and the geoms' larger restitution
    CHECK(m->pair_geom1[0] == ball && m->pair_geom2[0] == box);
    CHECK(m->pair_friction[0] == 0.9 && m->pair_margin[0] == 0.01 && m->pair_restitution[0] == 0.5);
    CHECK(m->pair_geom1[1] == floor && m->pair_geom2[1] == box);
    CHECK(m->pair_friction[1] == 1 && m->pair_margin[1] == 0 && m->pair_restitution[1] == 0.25);
  }
  if (m->nexclude == 1) {
    CHECK(m->exclude_body1[0] == phys_name2id(m, "body", "a"));
    CHECK(m->exclude_body2[0] == phys_name2id(m, "body", "b"));
  }
  phys_free_model(m);

  // defaults: lcp, beta 0.2, k_c 1e4, d_c 1e2, v_slip 1e-3, 100 iterations, 1e-10; partial lists
  snprintf(text, sizeof text, MODEL, "",
           "<numeric name='physid:penalty' data='3e3'/><numeric name='physid:solver' data='7'/>\n"
           "<text name='physid:contact' data=' penalty '/>\n");
  m = load_text(text, &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  if (!m) return;
  CHECK(m->opt.contact == PHYS_CONTACT_PENALTY && m->opt.baumgarte == 0.2);
  CHECK(m->opt.penalty_stiffness == 3e3 && m->opt.penalty_damping == 1e2 && m->opt.penalty_vslip == 1e-3);
  CHECK(m->opt.solver_iterations == 7 && m->opt.solver_tolerance == 1e-10);
  CHECK(m->npair == 0 && m->nexclude == 0);
  phys_free_model(m);
  for (int k = 0; k < PHYS_NCONTACTMODEL; k++) {
    char custom[128];
    snprintf(custom, sizeof custom, "<text name='physid:contact' data='%s'/>\n", phys_contact_name(k));
    snprintf(text, sizeof text, MODEL, "", custom);
    m = load_text(text, &log);
    CHECK(m != NULL && m->opt.contact == k);
    phys_free_model(m);
  }
}

// text must fail to load with status st and a message containing frag
static void expect_error(const char* pairs, const char* custom, physStatus st, const char* frag) {
  char text[4096];
  physLog log;
  snprintf(text, sizeof text, MODEL, pairs, custom);
  physModel* m = load_text(text, &log);
  CHECK_MSG(m == NULL, "should fail: %s %s", pairs, custom);
  CHECK_MSG(log.status == st, "status %d, expected %d: %s", log.status, st, log.error);
  CHECK_MSG(strstr(log.error, frag) != NULL, "message '%s' lacks '%s'", log.error, frag);
  phys_free_model(m);
}

static void test_errors(void) {
  // line 17 is the first line of <custom>, 15 the first of <contact>
  expect_error("", "<text name='physid:contact' data='soft'/>\n", PHYS_ERR_VALUE,
               "model.xml:17: <text name='physid:contact'>: unknown contact model 'soft'");
  expect_error("", "<text name='physid:contact' data='lcp cone'/>\n", PHYS_ERR_VALUE, "unknown contact model");
  expect_error("", "<numeric name='physid:contact' data='1'/>\n", PHYS_ERR_MODEL, "must be a <text> element");
  expect_error("", "<numeric name='physid:restitution:ball' data='1.5'/>\n", PHYS_ERR_VALUE,
               "model.xml:17: <numeric name='physid:restitution:ball'>: restitution 1.5 outside [0, 1]");
  expect_error("", "<numeric name='physid:restitution:ball' data='-0.1'/>\n", PHYS_ERR_VALUE, "outside [0, 1]");
  expect_error("", "<numeric name='physid:restitution:nosuch' data='0.5'/>\n", PHYS_ERR_MODEL,
               "geom 'nosuch' not found");
  expect_error("", "<numeric name='physid:restitution:' data='0.5'/>\n", PHYS_ERR_MODEL, "geom '' not found");
  expect_error("", "<numeric name='physid:restitution:ball' data='0.5 0.5'/>\n", PHYS_ERR_SIZE, "more than 1 value");
  expect_error("", "<numeric name='physid:restitution:ball' data='x'/>\n", PHYS_ERR_PARSE, "'x' is not a number");
  expect_error("", "<numeric name='physid:pair_restitution:p9' data='0.5'/>\n", PHYS_ERR_MODEL, "pair 'p9' not found");
  expect_error("<pair name='p' geom1='ball' geom2='box'/>\n", "<numeric name='physid:pair_restitution:p' data='2'/>\n",
               PHYS_ERR_VALUE, "restitution 2 outside [0, 1]");
  expect_error("", "<numeric name='physid:baumgarte' data='1.2'/>\n", PHYS_ERR_VALUE, "baumgarte 1.2 outside [0, 1]");
  expect_error("", "<numeric name='physid:baumgarte' data=''/>\n", PHYS_ERR_SIZE, "needs 1 to 1 values, found 0");
  expect_error("", "<numeric name='physid:penalty' data='-1'/>\n", PHYS_ERR_VALUE, "penalty stiffness");
  expect_error("", "<numeric name='physid:penalty' data='1 2 0'/>\n", PHYS_ERR_VALUE, "v_slip > 0");
  expect_error("", "<numeric name='physid:penalty' data='1 2 3 4'/>\n", PHYS_ERR_SIZE, "more than 3 values");
  expect_error("", "<numeric name='physid:solver' data='0'/>\n", PHYS_ERR_VALUE, "iterations must be an integer >= 1");
  expect_error("", "<numeric name='physid:solver' data='2.5'/>\n", PHYS_ERR_VALUE, "iterations");
  expect_error("", "<numeric name='physid:solver' data='10 -1'/>\n", PHYS_ERR_VALUE, "tolerance >= 0");
  // pairs and excludes
  expect_error("<pair geom1='ball' geom2='box' friction='-0.5'/>\n", "", PHYS_ERR_VALUE,
               "model.xml:15: <pair>: friction must be >= 0, got -0.5");
  expect_error("<pair geom1='ball' geom2='box' margin='-1'/>\n", "", PHYS_ERR_VALUE, "margin must be >= 0");
  expect_error("<pair geom1='ball'/>\n", "", PHYS_ERR_MODEL, "model.xml:15: <pair>: attributes 'geom1' and 'geom2' are required");
  expect_error("<pair geom1='ball' geom2='nosuch'/>\n", "", PHYS_ERR_MODEL, "model.xml:15: <pair>");
  expect_error("<exclude body1='a'/>\n", "", PHYS_ERR_MODEL, "attributes 'body1' and 'body2' are required");
  expect_error("<exclude body1='a' body2='zz'/>\n", "", PHYS_ERR_MODEL, "model.xml:15: <exclude>");
  // a negative geom friction is refused by the geom reader
  physLog log;
  physModel* m = load_text("<mujoco><worldbody><geom size='1' friction='-1'/></worldbody></mujoco>", &log);
  CHECK(m == NULL && strstr(log.error, "friction must be >= 0"));
  // nconmax
  m = load_text("<mujoco><size nconmax='0'/><worldbody/></mujoco>", &log);
  CHECK(m == NULL && strstr(log.error, "nconmax must be -1"));
  m = load_text("<mujoco><size nconmax='-1'/><worldbody><geom size='1'/></worldbody></mujoco>", &log);
  CHECK(m != NULL && m->nconmax >= 64);
  phys_free_model(m);
  // unknown physid keys stay warnings; <pair> anisotropic friction warns
  char text[4096];
  snprintf(text, sizeof text, MODEL, "<pair geom1='ball' geom2='box' friction='0.5 0.6'/>\n",
           "<numeric name='physid:frobnicate' data='1'/>\n");
  m = load_text(text, &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  CHECK(log.nwarning == 2 && strstr(log.warning[0], "anisotropic") && strstr(log.warning[1], "physid:frobnicate"));
  CHECK(m && m->pair_friction[0] == 0.5);
  phys_free_model(m);
}

// physid extensions in <custom>: rest-length actuators on tendon motors; errors name the element
static void test_extensions(void) {
  static const char* const MODEL =
      "<mujoco>\n"
      "  <worldbody>\n"
      "    <site name='anchor' pos='0 0 1'/>\n"
      "    <body name='mass' pos='0 0 0.5'><joint name='z' type='slide' axis='0 0 1'/>\n"
      "      <geom type='sphere' size='0.05' mass='1'/><site name='tip'/></body>\n"
      "  </worldbody>\n"
      "  <tendon><spatial name='cable' stiffness='100' springlength='0.4'>\n"
      "    <site site='anchor'/><site site='tip'/></spatial></tendon>\n"
      "  <actuator><motor name='winch' tendon='cable' gear='0.1'/><motor name='push' joint='z'/></actuator>\n"
      "  <custom>%s</custom>\n"
      "</mujoco>\n";
  char text[2048];
  physLog log;
  snprintf(text, sizeof(text), MODEL, "<text name='physid:restlength' data=' winch '/><numeric name='user' data='1'/>");
  physSpec* s = parse_text(text, &log);
  CHECK_MSG(s != NULL, "%s", log.error);
  if (s) {
    CHECK(s->actuator[0].trntype == PHYS_TRN_RESTLENGTH && s->actuator[1].trntype == PHYS_TRN_JOINT);
    CHECK(log.nwarning == 0);
    // L0 = 0.4 + 0.1*ctrl; at rest L = 0.5: tension k (L - L0) lifts the mass: qfrc = k (L - L0)
    physModel* m = phys_compile(s, &log);
    CHECK_MSG(m != NULL, "%s", log.error);
    if (m) {
      physData* d = phys_make_data(m);
      d->ctrl[0] = 0.5;
      phys_forward(m, d);
      CHECK_NEAR(d->qfrc_passive[0], 100 * (0.5 - 0.45), 1e-12);
      CHECK_NEAR(d->qfrc_actuator[0], 0, 0);
      phys_free_data(d);
      phys_free_model(m);
    }
    phys_spec_free(s);
  }
  snprintf(text, sizeof(text), MODEL, "<text name='physid:restlength' data='push'/>");
  EXPECT_ERROR(text, PHYS_ERR_MODEL, "model.xml:10: <text name='physid:restlength'>", "'push' acts on a joint");
  snprintf(text, sizeof(text), MODEL, "<text name='physid:restlength' data='nope'/>");
  EXPECT_ERROR(text, PHYS_ERR_MODEL, "actuator 'nope' not found");
  snprintf(text, sizeof(text), MODEL, "<numeric name='physid:restlength' data='1'/>");
  EXPECT_ERROR(text, PHYS_ERR_MODEL, "must be a <text> element");
  snprintf(text, sizeof(text), MODEL, "<text name='physid:nosuch' data='x'/>");
  s = parse_text(text, &log);
  CHECK(s != NULL && has_warning(&log, "unknown physid extension 'physid:nosuch'"));
  phys_spec_free(s);
}

// physid:integrator (issue 16: identify --write-model writes it): each word sets opt.integrator, also when the
// <custom> precedes an <option integrator='Euler'> (MuJoCo's attribute does not reset physid's own); no
// value, or a word other than euler|implicit|pbd, is a file:line error
static void test_integrator(void) {
  static const char* const WORDS[3] = {"euler", "implicit", "pbd"};
  char text[1024];
  physLog log;
  for (int k = 0; k < 3; k++) {
    snprintf(text, sizeof text,
             "<mujoco>\n  <custom><text name='physid:integrator' data=' %s '/></custom>\n"
             "  <option integrator='Euler' timestep='0.002'/>\n"
             "  <worldbody><body><freejoint/><geom type='sphere' size='0.1'/></body></worldbody>\n</mujoco>\n",
             WORDS[k]);
    physModel* m = load_text(text, &log);
    CHECK_MSG(m != NULL, "%s", log.error);
    CHECK_MSG(m && (int)m->opt.integrator == k && log.nwarning == 0, "%s: integrator %d", WORDS[k],
              m ? (int)m->opt.integrator : -1);
    phys_free_model(m);
  }
  expect_error("", "<text name='physid:integrator' data='rk4'/>\n", PHYS_ERR_VALUE,
               "model.xml:17: <text name='physid:integrator'>: unknown integrator 'rk4' (euler, implicit or pbd)");
  expect_error("", "<text name='physid:integrator' data='implicit euler'/>\n", PHYS_ERR_VALUE, "unknown integrator");
  expect_error("", "<numeric name='physid:integrator' data='1'/>\n", PHYS_ERR_MODEL, "must be a <text> element");
}

int main(void) {
  mjcf_text_begin("test_mjcf_contact");
  test_integrator();
  test_values();
  test_errors();
  test_extensions();
  return mjcf_text_end();
}
