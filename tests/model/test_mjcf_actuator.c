// test_mjcf_actuator.c - MJCF <actuator> and <keyframe> (src/model/mjcf_actuator.c): motors and fixed-gain
// general actuators on joints and tendons with their defaults and limits, dampers and intvelocity servos, keys;
// errors with file:line: <element>.
#include <math.h>
#include <string.h>

#include "mjcf_text.h"

#define PI 3.14159265358979323846

// bad tendons, actuators and keys
static void test_errors(void) {
  EXPECT_ERROR("<mujoco><worldbody><body><joint name='j'/><geom size='1'/></body></worldbody>\n"
               "<actuator><motor joint='j' ctrlrange='-1 1'/></actuator></mujoco>",
               PHYS_ERR_MODEL, "model.xml:2: <motor>", "ctrllimited");
  // actuators (tendons: test_mjcf_tendon.c)
  EXPECT_ERROR("<mujoco><actuator><motor/></actuator></mujoco>", PHYS_ERR_MODEL,
               "exactly one of 'joint', 'tendon', 'site' and 'cranksite'");
  // transmissions physid does not build, limits without a range (MuJoCo 2.2.2 refuses those too)
  EXPECT_ERROR("<mujoco><actuator>\n<motor jointinparent='j'/></actuator></mujoco>", PHYS_ERR_MODEL,
               "model.xml:2: <motor>", "'jointinparent' transmission are not supported");
  EXPECT_ERROR("<mujoco><actuator>\n<general cranksite='c'/></actuator></mujoco>", PHYS_ERR_MODEL,
               "model.xml:2: <general>", "a slider-crank transmission (cranksite) needs a 'slidersite'");
  EXPECT_ERROR("<mujoco><actuator>\n<general cranksite='c' slidersite='s'/></actuator></mujoco>", PHYS_ERR_VALUE,
               "model.xml:2: <general>", "a slider-crank needs cranklength > 0");
  expect_compile_error("<mujoco><worldbody><site name='c'/></worldbody><actuator>\n<general cranksite='c' "
                       "slidersite='s' cranklength='1'/></actuator></mujoco>", PHYS_ERR_MODEL, "slidersite 's' not found");
  EXPECT_ERROR("<mujoco><actuator>\n<general site='s' refsite='r'/></actuator></mujoco>", PHYS_ERR_MODEL,
               "model.xml:2: <general>", "site transmissions with a 'refsite' (a reference frame) are not supported");
  EXPECT_ERROR("<mujoco><actuator>\n<general body='b'/></actuator></mujoco>", PHYS_ERR_MODEL,
               "model.xml:2: <general>", "'body' transmission are not supported");
  EXPECT_ERROR("<mujoco><actuator>\n<motor joint='j' forcelimited='true'/></actuator></mujoco>", PHYS_ERR_VALUE,
               "model.xml:2: <motor>", "forcerange [0, 0]: the lower limit must be below the upper");
  EXPECT_ERROR("<mujoco><actuator>\n<general joint='j' dyntype='integrator' actrange='-1 1'/></actuator></mujoco>",
               PHYS_ERR_MODEL, "model.xml:2: <general>", "'actrange' given without 'actlimited'");
  EXPECT_ERROR("<mujoco><actuator>\n<general joint='j' dyntype='filterexact'/></actuator></mujoco>", PHYS_ERR_VALUE,
               "model.xml:2: <general>", "filterexact");
  EXPECT_ERROR("<mujoco><actuator>\n<general joint='j' gaintype='user'/></actuator></mujoco>", PHYS_ERR_MODEL,
               "model.xml:2: <general>", "gaintype 'user' is not supported");
  EXPECT_ERROR("<mujoco><actuator>\n<general joint='j' biastype='user'/></actuator></mujoco>", PHYS_ERR_MODEL,
               "model.xml:2: <general>", "biastype 'user' is not supported");
  EXPECT_ERROR("<mujoco><default><general dyntype='user'/></default><actuator>\n<general joint='j'/></actuator>"
               "</mujoco>", PHYS_ERR_MODEL, "model.xml:2: <general>", "dyntype 'user' is not supported");
  // muscles: on a site or a ball joint (no length), a length over an unlimited joint without lengthrange
  expect_compile_error("<mujoco><worldbody><body><joint name='j' type='ball'/><geom size='1'/></body></worldbody>"
                       "<actuator>\n<muscle joint='j'/></actuator></mujoco>", PHYS_ERR_MODEL, "muscles act on hinge and slide");
  expect_compile_error("<mujoco><worldbody><body><joint name='j' limited='true' range='0 1'/><geom size='1'/></body>"
                       "</worldbody><actuator>\n<muscle name='m' joint='j' range='1 0.5'/></actuator></mujoco>",
                       PHYS_ERR_VALUE, "actuator 'm': a muscle needs range[0] < range[1]");
  expect_compile_error("<mujoco><worldbody><body><joint name='j' limited='true' range='0 1'/><geom size='1'/></body>"
                       "</worldbody><actuator>\n<muscle name='m' joint='j' fvmax='0'/></actuator></mujoco>",
                       PHYS_ERR_VALUE, "actuator 'm': a muscle needs scale, vmax, fpmax and fvmax > 0");
  expect_compile_error("<mujoco><worldbody><body><joint name='j' limited='true' range='0 1'/><geom size='1'/></body>"
                       "</worldbody><actuator>\n<muscle name='m' joint='j' lmax='0.9'/></actuator></mujoco>",
                       PHYS_ERR_VALUE, "actuator 'm': a muscle needs lmin < 1 < lmax");
  expect_compile_error("<mujoco><worldbody><body><joint/><geom size='1'/><site name='s'/></body></worldbody><actuator>\n"
                       "<muscle site='s'/></actuator></mujoco>", PHYS_ERR_MODEL, "muscles act on hinge and slide");
  expect_compile_error("<mujoco><worldbody><body><joint name='j'/><geom size='1'/></body></worldbody><actuator>\n"
                       "<muscle name='m' joint='j'/></actuator></mujoco>", PHYS_ERR_MODEL,
                       "model.xml:2: actuator 'm': give the muscle a 'lengthrange': its length depends on joint 'j', "
                       "which has no range");
  // <adhesion> as MuJoCo 2.2.2's reader and schema have it (its messages: "required attribute missing: 'ctrlrange'",
  // "adhesion control range cannot be negative", "unrecognized attribute: 'gear'")
  EXPECT_ERROR("<mujoco><actuator>\n<adhesion body='b' gain='5'/></actuator></mujoco>", PHYS_ERR_MODEL,
               "model.xml:2: <adhesion>", "an <adhesion> needs its own 'ctrlrange'");
  EXPECT_ERROR("<mujoco><actuator>\n<adhesion body='b' ctrlrange='-1 1'/></actuator></mujoco>", PHYS_ERR_VALUE,
               "model.xml:2: <adhesion>", "adhesion control range cannot be negative (ctrlrange -1 1)");
  EXPECT_ERROR("<mujoco><actuator>\n<adhesion body='b' ctrlrange='0 1' gear='2'/></actuator></mujoco>", PHYS_ERR_MODEL,
               "model.xml:2: <adhesion>", "'gear' is not an attribute of <adhesion> in MuJoCo 2.2.2");
  EXPECT_ERROR("<mujoco><actuator>\n<adhesion joint='j' ctrlrange='0 1'/></actuator></mujoco>", PHYS_ERR_MODEL,
               "model.xml:2: <adhesion>", "an <adhesion> acts on a 'body'");
  expect_compile_error("<mujoco><actuator>\n<adhesion name='a' body='nobody' ctrlrange='0 1'/></actuator></mujoco>",
                       PHYS_ERR_MODEL, "actuator 'a': body 'nobody' not found");
  // <damper> and <intvelocity> as MuJoCo 2.2.2's reader and schema have them (test_oracle_mjcf: the same refusals)
  EXPECT_ERROR("<mujoco><actuator>\n<damper joint='j' kv='-1' ctrlrange='0 1'/></actuator></mujoco>", PHYS_ERR_VALUE,
               "model.xml:2: <damper>", "damping coefficient cannot be negative (kv -1)");
  EXPECT_ERROR("<mujoco><actuator>\n<damper joint='j' kv='1' ctrlrange='-1 1'/></actuator></mujoco>", PHYS_ERR_VALUE,
               "model.xml:2: <damper>", "damper control range cannot be negative (ctrlrange -1 1)");
  EXPECT_ERROR("<mujoco><default><damper ctrlrange='0 1'/></default><actuator>\n<damper joint='j' kv='1'/>"
               "</actuator></mujoco>", PHYS_ERR_MODEL, "model.xml:2: <damper>", "a <damper> needs its own 'ctrlrange'");
  EXPECT_ERROR("<mujoco><actuator>\n<damper joint='j' kv='1' ctrlrange='0 1' ctrllimited='true'/></actuator></mujoco>",
               PHYS_ERR_MODEL, "model.xml:2: <damper>", "'ctrllimited' is not an attribute of <damper> in MuJoCo 2.2.2");
  EXPECT_ERROR("<mujoco><actuator>\n<intvelocity joint='j' kp='1' actrange='-1 1' actlimited='true'/></actuator>"
               "</mujoco>", PHYS_ERR_MODEL, "model.xml:2: <intvelocity>", "'actlimited' is not an attribute");
  EXPECT_ERROR("<mujoco><actuator>\n<intvelocity joint='j' kp='1' actrange='-1 1' kv='2'/></actuator></mujoco>",
               PHYS_ERR_MODEL, "model.xml:2: <intvelocity>", "its servo has kp only");
  expect_compile_error("<mujoco><worldbody><body><joint name='j'/><geom size='1'/></body></worldbody><actuator>\n"
                       "<intvelocity joint='j' kp='1'/></actuator></mujoco>", PHYS_ERR_VALUE,
                       "forcerange and actrange need lower < upper");
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
           "    <general joint='z' dyntype='filter' dynprm='0.2 7' actlimited='true' actrange='-1 2'/>\n"
           "    <motor tendon='fx'/>\n"
           "    <motor site='top'/>\n"
           "    <motor joint='z' forcelimited='true' forcerange='-2 3'/>\n"
           "    <velocity joint='z'/>\n");
  physSpec* s = parse_text(text, &log);
  CHECK_MSG(s != NULL, "%s", log.error);
  if (!s) return;
  CHECK(s->nspring == 2 && s->spring[0].stiffness == 50 && s->spring[0].damping == 3);
  CHECK(s->spring[0].restlength == .7 && s->spring[0].nsite == 2 && s->spring[0].site[0] == 0);
  CHECK(s->nactuator == 7);   // m, g, the filter, the motor on the fixed tendon, the site motor, the forcelimited
                              // motor and the velocity servo
  if (s->nactuator == 7) {
    const physSpecActuator* a = s->actuator;
    CHECK(!strcmp(a[0].name, "m") && a[0].trntype == PHYS_TRN_JOINT && !strcmp(a[0].target, "z"));
    CHECK(a[0].gear[0] == 4 && a[0].ctrllimited && a[0].ctrlrange[0] == -1 && a[0].ctrlrange[1] == 1);
    CHECK(a[0].line == 16);
    CHECK(a[1].trntype == PHYS_TRN_SPRING && !strcmp(a[1].target, "cable"));
    CHECK(a[1].gear[0] == 10 && a[1].gainprm[0] == 2.5 && !a[1].ctrllimited);   // gear of class strong
    CHECK(a[2].dyntype == PHYS_DYN_FILTER && a[2].dynprm[0] == 0.2 && a[2].dynprm[1] == 7 && a[2].dynprm[2] == 0);
    CHECK(a[2].actlimited && a[2].actrange[0] == -1 && a[2].actrange[1] == 2 && !a[2].forcelimited);
    CHECK(a[3].trntype == PHYS_TRN_SPRING && !strcmp(a[3].target, "fx") && a[3].gear[0] == 4);
    CHECK(a[4].trntype == PHYS_TRN_SITE && !strcmp(a[4].target, "top") && a[4].gear[0] == 4);
    CHECK(a[4].dyntype == PHYS_DYN_NONE && a[4].dynprm[0] == 1);   // MuJoCo's default dynprm
    CHECK(a[5].forcelimited && a[5].forcerange[0] == -2 && a[5].forcerange[1] == 3 && a[5].gear[0] == 4);
    CHECK(a[6].gainprm[0] == 1 && a[6].biasprm[0] == 0 && a[6].biasprm[1] == 0 && a[6].biasprm[2] == -1);
  }
  CHECK(s->nkey == 2 && !strcmp(s->key[0].name, "rest") && s->key[0].nqvel == 1 && s->key[0].qvel[0] == .5);
  CHECK(s->nkey == 2 && s->key[0].nctrl == 2 && s->key[0].ctrl[1] == -1 && s->key[0].nqpos == 0);
  CHECK(s->nkey == 2 && s->key[1].time == 2 && s->key[1].qpos == NULL && s->key[1].ctrl == NULL);
  CHECK(!has_warning(&log, "fixed tendon"));
  CHECK(log.nwarning == 0);
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

// the compiler's checks of actuator dynamics and site transmissions, naming file, line and actuator: MuJoCo
// 2.2.2's order (actuators without dynamics first), a negative filter time constant (MuJoCo takes it and
// diverges), an unknown site; a good model's sizes: na and the activation addresses
static void test_dynamics_compile(void) {
  const char* body = "<mujoco><worldbody><body><joint name='j' type='slide'/><geom size='1'/><site name='s'/></body>"
                     "</worldbody>\n<actuator>%s</actuator></mujoco>";
  static const struct { const char* act; const char* msg; } BAD[] = {
      {"<general name='f' joint='j' dyntype='filter'/><motor name='m' joint='j'/>",
       "model.xml:2: actuator 'm': actuators without dynamics must come before those with dynamics"},
      {"<general name='f' joint='j' dyntype='filter' dynprm='-0.1'/>",
       "model.xml:2: actuator 'f': the filter's time constant dynprm[0] = -0.1 is negative"},
      {"<motor name='w' site='nosite'/>", "model.xml:2: actuator 'w': site 'nosite' not found"},
      {"<position name='p' site='s'/>", "model.xml:2: actuator 'p'"},
  };
  char text[1024];
  physLog log;
  for (size_t i = 0; i < sizeof(BAD) / sizeof(BAD[0]); i++) {
    snprintf(text, sizeof(text), body, BAD[i].act);
    physModel* m = load_text(text, &log);
    CHECK_MSG(m == NULL && strstr(log.error, BAD[i].msg), "%s: %s", BAD[i].act, log.error);
    phys_free_model(m);
  }
  snprintf(text, sizeof(text), body,
           "<motor joint='j' forcelimited='true' forcerange='-1 1'/><motor site='s' gear='1 2 3 4 5 6'/>"
           "<general joint='j' dyntype='integrator'/><general joint='j' dyntype='filter' dynprm='0.3'/>");
  physModel* m = load_text(text, &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  if (m) {
    CHECK(m->nu == 4 && m->na == 2 && m->actuator_actadr[0] == -1 && m->actuator_actadr[1] == -1);
    CHECK(m->actuator_actadr[2] == 0 && m->actuator_actadr[3] == 1 && m->actuator_dynprm[9] == 0.3);
    CHECK(m->actuator_trntype[1] == PHYS_TRN_SITE && m->actuator_trnid[1] == 0 && m->actuator_gear[11] == 6);
    CHECK(m->actuator_forcelimited[0] && m->actuator_forcerange[1] == 1);
    physData* d = phys_make_data(m);
    CHECK(d != NULL && d->na == 2);
    phys_free_data(d);
  }
  phys_free_model(m);
  // keyframe activations: one per actuator with dynamics, set by phys_reset_keyframe
  const char* keyed = "<mujoco><worldbody><body><joint name='j' type='slide'/><geom size='1'/></body></worldbody>"
                      "<actuator><motor joint='j'/><general joint='j' dyntype='integrator'/>"
                      "<general joint='j' dyntype='filter'/></actuator><keyframe>\n<key act='%s'/></keyframe></mujoco>";
  snprintf(text, sizeof(text), keyed, "0.25 -0.5");
  m = load_text(text, &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  if (m) {
    physData* d = phys_make_data(m);
    CHECK(m->nkey == 1 && m->key_act[0] == 0.25 && m->key_act[1] == -0.5);
    CHECK(phys_reset_keyframe(m, d, 0) == PHYS_OK && d->act[0] == 0.25 && d->act[1] == -0.5);
    phys_free_data(d);
  }
  phys_free_model(m);
  // <damper kv ctrlrange>: affine gain (0, 0, -kv), no bias, ctrllimited; <intvelocity kp actrange>: integrator,
  // gain kp, bias (0, -kp, 0), actlimited; a default class's kv does not reach an element without its own (2.2.2's
  // reader clears the gain and reads the element's kv: gain 0, as MuJoCo loads tests/data/actuator_damper.xml)
  m = load_text("<mujoco><default><default class='b'><damper kv='0.8' ctrlrange='0 1'/></default></default>"
                "<worldbody><body><joint name='j' type='slide'/><geom size='1'/></body></worldbody><actuator>"
                "<damper joint='j' class='b' ctrlrange='0 2' kv='3'/><damper joint='j' class='b' ctrlrange='0 1'/>"
                "<intvelocity joint='j' kp='15' actrange='-0.6 0.8'/></actuator></mujoco>", &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  if (m) {
    const double *g = m->actuator_gainprm, *b = m->actuator_biasprm;
    CHECK(m->nu == 3 && m->na == 1 && m->actuator_actadr[0] == -1 && m->actuator_actadr[2] == 0);
    CHECK(g[0] == 0 && g[1] == 0 && g[2] == -3 && b[0] == 0 && b[1] == 0 && b[2] == 0 && g[5] == 0);
    CHECK(m->actuator_ctrllimited[0] && m->actuator_ctrlrange[0] == 0 && m->actuator_ctrlrange[1] == 2);
    CHECK(m->actuator_dyntype[2] == PHYS_DYN_INTEGRATOR && g[6] == 15 && b[6] == 0 && b[7] == -15 && b[8] == 0);
    CHECK(m->actuator_actlimited[2] && m->actuator_actrange[4] == -0.6 && m->actuator_actrange[5] == 0.8);
    CHECK(!m->actuator_ctrllimited[2]);
  }
  phys_free_model(m);
  snprintf(text, sizeof(text), keyed, "0.25");
  m = load_text(text, &log);
  CHECK_MSG(m == NULL && log.status == PHYS_ERR_SIZE && strstr(log.error, "model.xml:2: <key name=''>: act needs 2 "
            "values, one per actuator with dynamics (got 1)"), "%s", log.error);
  phys_free_model(m);
}

// (a <muscle> in a default class edits the class's one actuator default, as in MuJoCo: every actuator of the
// class becomes a muscle; MuJoCo 2.2.2 then refuses a <general> of the class without a muscle range)
// <muscle> with MuJoCo 2.2.2's defaults (timeconst 0.01 0.04, range 0.75 1.05, force -1, scale 200, lmin 0.5,
// lmax 1.6, vmax 1.5, fpmax 1.3, fvmax 1.2) where the global defaults stand, its own attributes and a class's
// over them, lengthrange read (and computed from the joint's range when absent: gear times the range), a
// <general> with muscle types taking gainprm/biasprm as given; a slider-crank's sites and crank length
static void test_muscle_values(void) {
  physLog log;
  physModel* m = load_text("<mujoco><default><default class='m'><muscle scale='100' timeconst='0.02 0.04'/>"
                           "</default></default>"
                           "<worldbody><body><joint name='j' limited='true' range='-1 2'/><geom size='1'/><site name='c' pos='1 0 0'/>"
                           "</body><site name='s'/></worldbody>\n<actuator>"
                           "<general name='sc' cranksite='c' slidersite='s' cranklength='.5' gainprm='7'/>"
                           "<muscle name='a' joint='j' gear='2' ctrllimited='true' ctrlrange='0 1'/>"
                           "<muscle name='b' class='m' joint='j' lmax='1.4' lengthrange='0.1 0.3'/>"
                           "<general name='g' joint='j' dyntype='muscle' gaintype='muscle' biastype='muscle' "
                           "dynprm='.03 .05' gainprm='.7 1.1 50 10 .4 1.5 2 1.2 1.3' biasprm='.7 1.1 60 20 .4 1.7 2 1.4 1.3' "
                           "lengthrange='-1 1'/></actuator></mujoco>", &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  if (!m) return;
  static const double A[9] = {0.75, 1.05, -1, 200, 0.5, 1.6, 1.5, 1.3, 1.2}, G[9] = {0.7, 1.1, 50, 10, 0.4, 1.5, 2, 1.2, 1.3};
  CHECK(m->nu == 4 && m->na == 3 && m->actuator_dyntype[1] == PHYS_DYN_MUSCLE && m->actuator_gaintype[1] == PHYS_GAIN_MUSCLE &&
        m->actuator_biastype[1] == PHYS_GAIN_MUSCLE && m->actuator_ctrllimited[1] && m->actuator_ctrlrange[3] == 1);
  CHECK(m->actuator_dynprm[3] == 0.01 && m->actuator_dynprm[4] == 0.04 && m->actuator_dynprm[6] == 0.02 &&
        m->actuator_dynprm[7] == 0.04 && m->actuator_dynprm[9] == 0.03 && m->actuator_dynprm[10] == 0.05);
  for (int i = 0; i < 9; i++) {
    CHECK(m->actuator_muscleprm[18 + i] == A[i] && m->actuator_muscleprm[27 + i] == A[i]);
    CHECK(m->actuator_muscleprm[36 + i] == (i == 3 ? 100 : (i == 5 ? 1.4 : A[i])));
    CHECK(m->actuator_muscleprm[54 + i] == G[i]);
    CHECK(m->actuator_muscleprm[63 + i] == (i == 2 ? 60 : (i == 3 ? 20 : (i == 5 ? 1.7 : (i == 7 ? 1.4 : G[i])))));
  }
  CHECK_NEAR(m->actuator_lengthrange[2], -2 * PI / 180, 1e-15);   // gear 2 times the range (degrees)
  CHECK_NEAR(m->actuator_lengthrange[3], 4 * PI / 180, 1e-15);
  CHECK(m->actuator_lengthrange[4] == 0.1 && m->actuator_lengthrange[5] == 0.3);
  // acc0 as MuJoCo 2.2.2's (0.0011936620731892152, 0.00059683103659460759; the broken crank's moment is 0)
  CHECK(fabs(m->actuator_acc0[1] - 0.0011936620731892152) <= 1e-15 && m->actuator_acc0[0] == 0);
  CHECK(fabs(m->actuator_acc0[2] - 0.00059683103659460759) <= 1e-15);
  CHECK(m->actuator_trntype[0] == PHYS_TRN_SLIDERCRANK && m->actuator_trnid[0] == 1 && m->actuator_trnid2[0] == 0 &&
        m->actuator_cranklength[0] == 0.5 && m->actuator_gainprm[0] == 7 && m->actuator_dyntype[0] == PHYS_DYN_NONE);
  phys_free_model(m);
}

int main(void) {
  mjcf_text_begin("test_mjcf_actuator");
  test_muscle_values();
  test_dynamics_compile();
  test_values();
  test_affine_targets();
  test_errors();
  return mjcf_text_end();
}
