// test_mjcf_tendon.c - MJCF <tendon> (src/model/mjcf_tendon.c): spatial tendons through sites and fixed
// tendons through joints with coefficients, their default classes, the compiled springs (joint ids,
// coefficients, the rest length at springref), warnings for limits and frictionloss, and errors with
// file:line: <element>.
#include <math.h>
#include <string.h>

#include "mjcf_text.h"

#define MJT(body, tail) "<mujoco>\n<worldbody>\n" body "\n</worldbody>\n" tail "</mujoco>\n"
#define ARM "<body><joint name='h' axis='0 1 0'/><geom size='.1'/><body><joint name='s' type='slide'/>" \
            "<joint name='b' type='ball'/><geom size='.1'/></body></body>"

// bad tendons
static void test_errors(void) {
  EXPECT_ERROR(MJT("<site name='a'/>", "<tendon><spatial name='t'><site site='a'/><site site='b'/></spatial></tendon>"),
               PHYS_ERR_MODEL, "unknown site 'b'");
  EXPECT_ERROR(MJT("<site name='a'/><site name='b'/>",
                   "<tendon><spatial><site site='a'/><geom geom='g'/><site site='b'/></spatial></tendon>"),
               PHYS_ERR_MODEL, "<geom>", "not supported (sites only)");
  EXPECT_ERROR(MJT("<site name='a'/>", "<tendon><spatial><site site='a'/></spatial></tendon>"), PHYS_ERR_MODEL,
               "at least 2 sites");
  EXPECT_ERROR(MJT("<site name='a'/><site name='a'/>",
                   "<tendon><spatial><site site='a'/><site site='a'/></spatial></tendon>"),
               PHYS_ERR_MODEL, "not unique");
  // fixed: MuJoCo requires coef; joints must exist and be unique; at least one joint
  EXPECT_ERROR(MJT(ARM, "<tendon>\n<fixed name='f'>\n<joint joint='h'/></fixed></tendon>"), PHYS_ERR_MODEL,
               "model.xml:7: <joint>", "attribute 'coef' is required");
  EXPECT_ERROR(MJT(ARM, "<tendon><fixed><joint joint='x' coef='1'/></fixed></tendon>"), PHYS_ERR_MODEL,
               "unknown joint 'x'");
  EXPECT_ERROR(MJT(ARM, "<tendon><fixed><joint coef='1'/></fixed></tendon>"), PHYS_ERR_MODEL,
               "attribute 'joint' is required");
  EXPECT_ERROR(MJT(ARM, "<tendon>\n<fixed name='f'/></tendon>"), PHYS_ERR_MODEL, "model.xml:6: <fixed name='f'>",
               "at least 1 joint");
  EXPECT_ERROR(MJT(ARM, "<tendon><fixed><joint joint='h' coef='x'/></fixed></tendon>"), PHYS_ERR_PARSE,
               "'x' is not a number");
  // a ball joint: refused by phys_compile, naming the tendon's file and line
  physLog log;
  physModel* m = load_text(MJT(ARM, "<tendon>\n<fixed name='f'><joint joint='b' coef='1'/></fixed></tendon>"), &log);
  CHECK(m == NULL && log.status == PHYS_ERR_MODEL);
  CHECK_MSG(strstr(log.error, "model.xml:6") && strstr(log.error, "fixed tendon 'f': its joints must be hinges or slides"),
            "%s", log.error);
  phys_free_model(m);
}

// the value tests' model: a hinge and a slide (with springrefs), two fixed tendons (one from a default class,
// one with its own springlength), a spatial tendon; an actuator on a fixed tendon
static const char* TEN_MODEL =
    "<mujoco>\n"
    "  <default>\n"
    "    <tendon stiffness='50'/>\n"
    "    <default class='soft'><tendon stiffness='2' damping='3'/></default>\n"
    "  </default>\n"
    "  <worldbody>\n"
    "    <site name='top' pos='0 0 1'/>\n"
    "    <body><joint name='h' axis='0 1 0' springref='30'/><geom size='.1'/>\n"
    "      <body><joint name='s' type='slide' springref='.2'/><geom size='.1'/><site name='tip'/></body>\n"
    "    </body>\n"
    "  </worldbody>\n"
    "  <tendon>\n"
    "    <fixed name='f1' class='soft'><joint joint='s' coef='2'/><joint joint='h' coef='-0.5'/></fixed>\n"
    "    <fixed name='f2' springlength='.3' limited='true' range='0 1' frictionloss='.1'>\n"
    "      <joint joint='h' coef='4'/>\n"
    "    </fixed>\n"
    "    <spatial name='cable'><site site='top'/><site site='tip'/></spatial>\n"
    "  </tendon>\n"
    "  <actuator><motor name='m' tendon='f1' gear='3'/></actuator>\n"
    "</mujoco>\n";

// the parsed spec and the compiled model
static void test_values(void) {
  physLog log;
  physSpec* s = parse_text(TEN_MODEL, &log);
  CHECK_MSG(s != NULL, "%s", log.error);
  if (!s) return;
  CHECK(s->nspring == 3);
  if (s->nspring == 3) {
    const physSpecSpring* f = s->spring;
    CHECK(f[0].type == PHYS_SPRING_FIXED && f[0].nsite == 2 && f[0].site[0] == 1 && f[0].site[1] == 0);
    CHECK(f[0].coef[0] == 2 && f[0].coef[1] == -0.5 && f[0].stiffness == 2 && f[0].damping == 3);
    CHECK(f[0].restlength == -1 && f[0].line == 13);
    CHECK(f[1].type == PHYS_SPRING_FIXED && f[1].stiffness == 50 && f[1].restlength == .3 && f[1].coef[0] == 4);
    CHECK(f[2].type == PHYS_SPRING_PATH && f[2].nsite == 2);
  }
  CHECK(has_warning(&log, "model.xml:14: <fixed name='f2'>: tendon length limits are not supported"));
  CHECK(has_warning(&log, "model.xml:14: <fixed name='f2'>: frictionloss is not supported"));
  CHECK(log.nwarning == 2);
  phys_spec_free(s);

  physModel* m = load_text(TEN_MODEL, &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  if (!m) return;
  CHECK(m->nspring == 3 && m->nspringsite == 5);
  CHECK(m->spring_type[0] == PHYS_SPRING_FIXED && m->spring_type[2] == PHYS_SPRING_PATH);
  CHECK(m->spring_site[0] == 1 && m->spring_site[1] == 0 && m->spring_coef[0] == 2 && m->spring_coef[1] == -0.5);
  CHECK(m->spring_coef[3] == 1 && m->spring_coef[4] == 1);   // path entries
  // rest length at springref: 2 (0.2) - 0.5 (30 degrees)
  CHECK_NEAR(m->spring_restlength[0], 0.4 - 0.5 * 30 * M_PI / 180, 1e-15);
  CHECK(m->spring_restlength[1] == .3);
  CHECK(m->nu == 1 && m->actuator_trntype[0] == PHYS_TRN_SPRING && m->actuator_trnid[0] == 0);
  // length, velocity and tension: L = 2 s - 0.5 h, Ldot likewise, t = k (L - L0) + b Ldot
  physData* d = phys_make_data(m);
  d->qpos[0] = 0.3, d->qpos[1] = -0.1, d->qvel[0] = 2, d->qvel[1] = 5;
  phys_forward(m, d);
  CHECK_NEAR(d->spring_length[0], 2 * -0.1 - 0.5 * 0.3, 1e-15);
  CHECK_NEAR(d->spring_velocity[0], 2 * 5 - 0.5 * 2, 1e-15);
  double t0 = 2 * (d->spring_length[0] - m->spring_restlength[0]) + 3 * d->spring_velocity[0];
  double t1 = 50 * (4 * 0.3 - 0.3);
  CHECK_NEAR(d->spring_force[0], t0, 1e-13);
  CHECK_NEAR(d->spring_force[1], t1, 1e-13);
  phys_free_data(d);
  phys_free_model(m);
}

int main(void) {
  mjcf_text_begin("test_mjcf_tendon");
  test_values();
  test_errors();
  return mjcf_text_end();
}
