// test_mjcf_actuator.c - MJCF <actuator> and <keyframe> (src/model/mjcf_actuator.c): motors and fixed-gain
// general actuators on joints and tendons with their defaults and limits, keys; errors with file:line: <element>.
#include <string.h>

#include "mjcf_text.h"

// bad tendons, actuators and keys
static void test_errors(void) {
  EXPECT_ERROR("<mujoco><worldbody><body><joint name='j'/><geom size='1'/></body></worldbody>\n"
               "<actuator><motor joint='j' ctrlrange='-1 1'/></actuator></mujoco>",
               PHYS_ERR_MODEL, "model.xml:2: <motor>", "ctrllimited");
  // actuators (tendons: test_mjcf_tendon.c)
  EXPECT_ERROR("<mujoco><actuator><motor/></actuator></mujoco>", PHYS_ERR_MODEL, "exactly one of 'joint' and 'tendon'");
  EXPECT_ERROR("<mujoco><actuator><motor joint='a' tendon='b'/></actuator></mujoco>", PHYS_ERR_MODEL, "exactly one");
  EXPECT_ERROR("<mujoco><keyframe><key qpos='1 x'/></keyframe></mujoco>", PHYS_ERR_PARSE, "'x' is not a number");
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

// motors and general actuators with their default classes (the gain kept apart from the gear), a tendon's
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
           "    <velocity joint='z'/>\n"
           "    <general joint='z' gaintype='muscle'/>\n");
  physSpec* s = parse_text(text, &log);
  CHECK_MSG(s != NULL, "%s", log.error);
  if (!s) return;
  CHECK(s->nspring == 2 && s->spring[0].stiffness == 50 && s->spring[0].damping == 3);
  CHECK(s->spring[0].restlength == .7 && s->spring[0].nsite == 2 && s->spring[0].site[0] == 0);
  CHECK(s->nactuator == 5);   // m, g, the motor on the fixed tendon, the forcelimited motor, the velocity servo
  if (s->nactuator == 5) {
    const physSpecActuator* a = s->actuator;
    CHECK(!strcmp(a[0].name, "m") && a[0].trntype == PHYS_TRN_JOINT && !strcmp(a[0].target, "z"));
    CHECK(a[0].gear[0] == 4 && a[0].ctrllimited && a[0].ctrlrange[0] == -1 && a[0].ctrlrange[1] == 1);
    CHECK(a[0].line == 16);
    CHECK(a[1].trntype == PHYS_TRN_SPRING && !strcmp(a[1].target, "cable"));
    CHECK(a[1].gear[0] == 10 && a[1].gainprm[0] == 2.5 && !a[1].ctrllimited);   // gear of class strong
    CHECK(a[2].trntype == PHYS_TRN_SPRING && !strcmp(a[2].target, "fx") && a[2].gear[0] == 4);
    CHECK(a[3].gear[0] == 4);
    CHECK(a[4].gainprm[0] == 1 && a[4].biasprm[0] == 0 && a[4].biasprm[1] == 0 && a[4].biasprm[2] == -1);
  }
  CHECK(s->nkey == 2 && !strcmp(s->key[0].name, "rest") && s->key[0].nqvel == 1 && s->key[0].qvel[0] == .5);
  CHECK(s->nkey == 2 && s->key[0].nctrl == 2 && s->key[0].ctrl[1] == -1 && s->key[0].nqpos == 0);
  CHECK(s->nkey == 2 && s->key[1].time == 2 && s->key[1].qpos == NULL && s->key[1].ctrl == NULL);
  CHECK(!has_warning(&log, "fixed tendon"));
  CHECK(has_warning(&log, "model.xml:18: <general>: only actuators without dynamics and with fixed or affine"));
  CHECK(has_warning(&log, "model.xml:20: <motor>: actuators on a site are not supported"));
  CHECK(has_warning(&log, "model.xml:21: <motor>: forcelimited is not supported"));
  CHECK(log.nwarning == 4);   // the muscle gain (line 23) is a second warning of line 18's kind
  phys_spec_free(s);
}

// a position or velocity servo and an affine <general> depend on the joint's position or velocity: on a
// hinge or slide only (the model is refused elsewhere, naming file, line and actuator); a rest-length
// actuator takes a fixed gain (folded into its gear) and no bias
static void test_affine_targets(void) {
  physLog log;
  physModel* m = load_text("<mujoco><worldbody><body><freejoint name='f'/><geom size='1'/></body></worldbody>\n"
                           "<actuator><position name='p' joint='f'/></actuator></mujoco>", &log);
  CHECK(m == NULL && log.status == PHYS_ERR_MODEL);
  CHECK_MSG(strstr(log.error, "model.xml:2: actuator 'p'") && strstr(log.error, "hinge and slide joints only"),
            "%s", log.error);
  phys_free_model(m);
  m = load_text("<mujoco><worldbody><body><freejoint name='f'/><geom size='1'/></body></worldbody>\n"
                "<actuator><general name='g' joint='f' gainprm='2' biastype='affine' biasprm='0.5'/></actuator>"
                "</mujoco>", &log);   // a constant bias acts on any target
  CHECK_MSG(m != NULL, "%s", log.error);
  if (m) CHECK(m->actuator_gainprm[0] == 2 && m->actuator_biasprm[0] == 0.5 && m->actuator_gear[0] == 1);
  phys_free_model(m);
  const char* rest = "<mujoco><worldbody><site name='a'/><body><joint type='slide'/><geom size='1'/><site name='b'/>"
                     "</body></worldbody><tendon><spatial name='t'><site site='a'/><site site='b'/></spatial>"
                     "</tendon>\n<actuator><general name='r' tendon='t' gear='2' gainprm='3' %s/></actuator>"
                     "<custom><text name='physid:restlength' data='r'/></custom></mujoco>";
  char text[1024];
  snprintf(text, sizeof(text), rest, "");
  m = load_text(text, &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  if (m) CHECK(m->actuator_trntype[0] == PHYS_TRN_RESTLENGTH && m->actuator_gear[0] == 6 && m->actuator_gainprm[0] == 1);
  phys_free_model(m);
  snprintf(text, sizeof(text), rest, "biastype='affine' biasprm='1'");
  m = load_text(text, &log);
  CHECK(m == NULL && log.status == PHYS_ERR_MODEL && strstr(log.error, "a rest-length actuator takes a fixed gain"));
  phys_free_model(m);
}

int main(void) {
  mjcf_text_begin("test_mjcf_actuator");
  test_values();
  test_affine_targets();
  test_errors();
  return mjcf_text_end();
}
