// test_mjcf_actuator.c - MJCF <tendon>, <actuator> and <keyframe> (src/model/mjcf_actuator.c): spatial tendons,
// motors and fixed-gain general actuators with their defaults and limits, keys; errors with file:line: <element>.
#include <string.h>

#include "mjcf_text.h"

// bad tendons, actuators and keys
static void test_errors(void) {
#define MJT(body, tail) "<mujoco>\n<worldbody>\n" body "\n</worldbody>\n" tail "</mujoco>\n"
  EXPECT_ERROR("<mujoco><worldbody><body><joint name='j'/><geom size='1'/></body></worldbody>\n"
               "<actuator><motor joint='j' ctrlrange='-1 1'/></actuator></mujoco>",
               PHYS_ERR_MODEL, "model.xml:2: <motor>", "ctrllimited");
  // tendons and actuators
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
  EXPECT_ERROR("<mujoco><actuator><motor/></actuator></mujoco>", PHYS_ERR_MODEL, "exactly one of 'joint' and 'tendon'");
  EXPECT_ERROR("<mujoco><actuator><motor joint='a' tendon='b'/></actuator></mujoco>", PHYS_ERR_MODEL, "exactly one");
  EXPECT_ERROR("<mujoco><keyframe><key qpos='1 x'/></keyframe></mujoco>", PHYS_ERR_PARSE, "'x' is not a number");
#undef MJT
}

// the model of the value tests: a slider with two sites, a spatial tendon between them, a fixed tendon
static const char* ACT_MODEL =
    "<mujoco>\n"
    "  <default>\n"
    "    <motor gear='4' ctrllimited='true' ctrlrange='-1 1'/>\n"
    "    <tendon stiffness='50'/>\n"
    "    <default class='strong'><general gear='10'/><tendon damping='3'/></default>\n"
    "  </default>\n"
    "  <worldbody>\n"
    "    <site name='top' pos='0 0 1'/>\n"
    "    <body><joint name='z' type='slide' axis='0 0 1'/><geom size='.1'/><site name='tip'/></body>\n"
    "  </worldbody>\n"
    "  <tendon>\n"
    "    <spatial name='cable' class='strong' springlength='.7'><site site='top'/><site site='tip'/></spatial>\n"
    "    <fixed name='fx'><joint joint='z' coef='1'/></fixed>\n"
    "  </tendon>\n"
    "  <actuator>\n"
    "%s"
    "  </actuator>\n"
    "  <keyframe><key name='rest' qvel='0.5' ctrl='1 -1'/><key time='2'/></keyframe>\n"
    "</mujoco>\n";

// motors and general actuators with their default classes (the gain folded into the gear), a tendon's
// values from its classes, keyframe vectors, and the actuators that are skipped with a warning
static void test_values(void) {
  char text[4096];
  physLog log;
  snprintf(text, sizeof(text), ACT_MODEL,
           "    <motor name='m' joint='z'/>\n"
           "    <general name='g' class='strong' tendon='cable' gainprm='2.5' ctrllimited='false'/>\n"
           "    <general joint='z' dyntype='filter'/>\n"
           "    <motor tendon='fx'/>\n"
           "    <motor site='top'/>\n"
           "    <motor joint='z' forcelimited='true'/>\n"
           "    <velocity joint='z'/>\n");
  physSpec* s = parse_text(text, &log);
  CHECK_MSG(s != NULL, "%s", log.error);
  if (!s) return;
  CHECK(s->nspring == 1 && s->spring[0].stiffness == 50 && s->spring[0].damping == 3);
  CHECK(s->spring[0].restlength == .7 && s->spring[0].nsite == 2 && s->spring[0].site[0] == 0);
  CHECK(s->nactuator == 3);   // m, g and the forcelimited motor
  if (s->nactuator == 3) {
    const physSpecActuator* a = s->actuator;
    CHECK(!strcmp(a[0].name, "m") && a[0].trntype == PHYS_TRN_JOINT && !strcmp(a[0].target, "z"));
    CHECK(a[0].gear[0] == 4 && a[0].ctrllimited && a[0].ctrlrange[0] == -1 && a[0].ctrlrange[1] == 1);
    CHECK(a[0].line == 16);
    CHECK(a[1].trntype == PHYS_TRN_SPRING && !strcmp(a[1].target, "cable"));
    CHECK(a[1].gear[0] == 25 && !a[1].ctrllimited);   // gear 10 of class strong times gainprm 2.5
    CHECK(a[2].gear[0] == 4);
  }
  CHECK(s->nkey == 2 && !strcmp(s->key[0].name, "rest") && s->key[0].nqvel == 1 && s->key[0].qvel[0] == .5);
  CHECK(s->nkey == 2 && s->key[0].nctrl == 2 && s->key[0].ctrl[1] == -1 && s->key[0].nqpos == 0);
  CHECK(s->nkey == 2 && s->key[1].time == 2 && s->key[1].qpos == NULL && s->key[1].ctrl == NULL);
  CHECK(has_warning(&log, "model.xml:13: <fixed name='fx'>: fixed tendons are not supported"));
  CHECK(has_warning(&log, "model.xml:18: <general>: only fixed-gain <general> actuators"));
  CHECK(has_warning(&log, "model.xml:19: <motor>: actuator on the ignored fixed tendon 'fx'"));
  CHECK(has_warning(&log, "model.xml:20: <motor>: actuators on a site are not supported"));
  CHECK(has_warning(&log, "model.xml:21: <motor>: forcelimited is not supported"));
  CHECK(has_warning(&log, "model.xml:22: <velocity>: <velocity> actuators are not supported"));
  CHECK(log.nwarning == 6);
  phys_spec_free(s);
}

int main(void) {
  mjcf_text_begin("test_mjcf_actuator");
  test_values();
  test_errors();
  return mjcf_text_end();
}
