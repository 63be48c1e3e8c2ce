// test_mjcf_tendon.c - MJCF <tendon> (src/model/mjcf_tendon.c): spatial tendons through sites and fixed
// tendons through joints with coefficients, their default classes, the compiled springs (joint ids,
// coefficients, the rest length at springref), length limits and frictionloss, and errors with
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
  // wraps: sphere or cylinder geoms, existing side sites, pulleys with a divisor > 0
  EXPECT_ERROR(MJT("<site name='a'/><site name='b'/><geom name='g' type='box' size='1 1 1'/>",
                   "<tendon><spatial><site site='a'/><geom geom='g'/><site site='b'/></spatial></tendon>"),
               PHYS_ERR_MODEL, "<geom>", "wraps sphere and cylinder geoms only");
  EXPECT_ERROR(MJT("<site name='a'/><site name='b'/><geom name='g' size='1'/>",
                   "<tendon><spatial><site site='a'/><geom geom='g' sidesite='c'/><site site='b'/></spatial></tendon>"),
               PHYS_ERR_MODEL, "unknown site 'c'");
  EXPECT_ERROR(MJT("<site name='a'/><site name='b'/>",
                   "<tendon><spatial><site site='a'/><geom geom='g'/><site site='b'/></spatial></tendon>"),
               PHYS_ERR_MODEL, "unknown geom 'g'");
  EXPECT_ERROR(MJT("<site name='a'/><site name='b'/>",
                   "<tendon><spatial><site site='a'/><site site='b'/><pulley/><site site='a'/><site site='b'/></spatial></tendon>"),
               PHYS_ERR_MODEL, "<pulley>", "attribute 'divisor' is required");
  EXPECT_ERROR(MJT("<site name='a'/><site name='b'/>",
                   "<tendon><spatial><site site='a'/><site site='b'/><pulley divisor='0'/><site site='a'/><site site='b'/></spatial></tendon>"),
               PHYS_ERR_MODEL, "divisor must be > 0");
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
  // length limits (issue 15 item 3): lower below upper, limited given with range (no autolimits)
  EXPECT_ERROR(MJT(ARM, "<tendon>\n<fixed limited='true' range='1 0'><joint joint='h' coef='1'/></fixed></tendon>"),
               PHYS_ERR_VALUE, "model.xml:6: <fixed>", "range [1, 0]: the lower limit must be below the upper");
  EXPECT_ERROR(MJT(ARM, "<tendon><fixed range='0 1'><joint joint='h' coef='1'/></fixed></tendon>"), PHYS_ERR_MODEL,
               "'range' given without 'limited'");
  EXPECT_ERROR(MJT(ARM, "<tendon><fixed frictionloss='-1'><joint joint='h' coef='1'/></fixed></tendon>"),
               PHYS_ERR_VALUE, "frictionloss");
  EXPECT_ERROR(MJT(ARM, "<tendon>\n<fixed name='f'/></tendon>"), PHYS_ERR_MODEL, "model.xml:6: <fixed name='f'>",
               "at least 1 joint");
  EXPECT_ERROR(MJT(ARM, "<tendon><fixed><joint joint='h' coef='x'/></fixed></tendon>"), PHYS_ERR_PARSE,
               "'x' is not a number");
  // the path's rules (MuJoCo 2.2.2's): refused by phys_compile, naming the tendon's file and line
  static const char* const PATHS[][2] = {
      {"<site site='a'/><geom geom='g'/><geom geom='g'/><site site='b'/>", "entry 1: a wrapped geom must be between two sites"},
      {"<site site='a'/><site site='b'/><pulley divisor='2'/>", "entry 2: a path cannot begin or end with a pulley"},
      {"<site site='a'/><pulley divisor='2'/><site site='b'/><site site='a'/>", "entry 0: each site needs a neighbour"},
  };
  char text[1024];
  physLog log;
  for (int i = 0; i < 3; i++) {
    snprintf(text, sizeof text, MJT("<site name='a'/><site name='b' pos='1 0 0'/><geom name='g' size='.1'/>",
                                    "<tendon>\n<spatial name='p'>%s</spatial></tendon>"), PATHS[i][0]);
    physModel* m = load_text(text, &log);
    CHECK(m == NULL && log.status == PHYS_ERR_MODEL);
    CHECK_MSG(strstr(log.error, "model.xml:6") && strstr(log.error, "tendon 'p'") && strstr(log.error, PATHS[i][1]),
              "%s", log.error);
    phys_free_model(m);
  }
  // a ball joint: refused by phys_compile, naming the tendon's file and line
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
    CHECK(f[0].prm[0] == 2 && f[0].prm[1] == -0.5 && f[0].stiffness == 2 && f[0].damping == 3);
    CHECK(f[0].restlength == -1 && f[0].line == 13);
    CHECK(f[1].type == PHYS_SPRING_FIXED && f[1].stiffness == 50 && f[1].restlength == .3 && f[1].prm[0] == 4);
    CHECK(f[2].type == PHYS_SPRING_PATH && f[2].nsite == 2);
    CHECK(f[1].limited == 1 && f[1].range[0] == 0 && f[1].range[1] == 1 && f[0].limited == 0 && f[2].limited == 0);
  }
  CHECK(s->nspring == 3 && s->spring[1].frictionloss == .1 && s->spring[0].frictionloss == 0);
  CHECK(log.nwarning == 0);
  phys_spec_free(s);

  physModel* m = load_text(TEN_MODEL, &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  if (!m) return;
  CHECK(m->nspring == 3 && m->nspringsite == 5);
  CHECK(m->spring_type[0] == PHYS_SPRING_FIXED && m->spring_type[2] == PHYS_SPRING_PATH);
  CHECK(m->spring_limited[1] == 1 && m->spring_range[2] == 0 && m->spring_range[3] == 1);   // issue 15 item 3
  CHECK(m->spring_limited[0] == 0 && m->spring_limited[2] == 0);
  CHECK(m->spring_frictionloss[1] == .1 && m->spring_frictionloss[0] == 0 && m->spring_frictionloss[2] == 0);
  CHECK(m->spring_site[0] == 1 && m->spring_site[1] == 0 && m->spring_prm[0] == 2 && m->spring_prm[1] == -0.5);
  CHECK(m->spring_prm[3] == 0 && m->spring_prm[4] == 0);   // sites
  CHECK(m->spring_objtype[0] == PHYS_WRAP_JOINT && m->spring_objtype[3] == PHYS_WRAP_SITE);
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

// a path with wrapped geoms (a sphere with a side site, a cylinder) and a pulley: entries, their types and
// parameters, in the spec and in the compiled model (geom and site indices after MuJoCo's body order)
static void test_wraps(void) {
  physLog log;
  const char* text = MJT("<site name='a' pos='-1 0 0'/><geom name='ball' size='.1'/>"
                         "<body><joint axis='0 0 1'/><site name='b' pos='1 0 0'/><site name='side' pos='0 1 0'/>"
                         "<geom name='drum' type='cylinder' size='.1 .1'/></body>",
                         "<tendon><spatial name='w'><site site='a'/><geom geom='ball' sidesite='side'/><site site='b'/>"
                         "<pulley divisor='3'/><site site='b'/><geom geom='drum'/><site site='a'/></spatial></tendon>");
  physSpec* s = parse_text(text, &log);
  CHECK_MSG(s != NULL, "%s", log.error);
  if (s) {
    const physSpecSpring* sp = s->spring;
    CHECK(s->nspring == 1 && sp->nsite == 7 && sp->type == PHYS_SPRING_PATH);
    CHECK(sp->objtype[1] == PHYS_WRAP_SPHERE && sp->site[1] == 0 && sp->prm[1] == 2);   // side site 'side'
    CHECK(sp->objtype[3] == PHYS_WRAP_PULLEY && sp->prm[3] == 3 && sp->site[3] == -1);
    CHECK(sp->objtype[5] == PHYS_WRAP_CYLINDER && sp->site[5] == 1 && sp->prm[5] == -1);
  }
  phys_spec_free(s);
  physModel* m = load_text(text, &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  if (!m) return;
  CHECK(m->nspringsite == 7 && m->spring_objtype[1] == PHYS_WRAP_SPHERE && m->spring_prm[3] == 3);
  CHECK(m->spring_site[5] == 1 && m->spring_objtype[5] == PHYS_WRAP_CYLINDER && m->spring_prm[1] == 2);
  // at qpos0: a (-1, 0, 0) to b (1, 0, 0) round the ball of radius 0.1 on the side of (0, 1, 0):
  // 2 sqrt(1 - 0.01) + 0.1 (pi - 2 acos(0.1)); then b to a round the drum, divided by 3
  double half = 2 * sqrt(1 - 0.01) + 0.1 * (M_PI - 2 * acos(0.1));
  CHECK_NEAR(m->spring_restlength[0], half + half / 3, 1e-14);
  phys_free_model(m);
}

int main(void) {
  mjcf_text_begin("test_mjcf_tendon");
  test_values();
  test_wraps();
  test_errors();
  return mjcf_text_end();
}
