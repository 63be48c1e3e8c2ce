// test_mjcf_attr.c - MJCF attribute values (src/model/mjcf_attr.c): orientation specifiers and units, numbers,
// vectors, integers, keywords, default classes and names, each bad value with its file:line: <element> message.
#include <string.h>

#include "mjcf_text.h"

// orientation specifiers in degrees and radians, eulerseq, fromto (MuJoCo: z along from - to)
static void test_orientations(void) {
  const double h = sqrt(0.5);
  physLog log;
  physSpec* s = parse_text(
      "<mujoco>\n"
      "  <worldbody>\n"
      "    <body name='e' euler='90 0 0'><geom size='1'/></body>\n"
      "    <body name='aa' axisangle='0 0 2 90'><geom size='1'/></body>\n"
      "    <body name='xy' xyaxes='0 1 0 -1 0 0'><geom size='1'/></body>\n"
      "    <body name='z' zaxis='1 0 0'><geom size='1'/></body>\n"
      "    <body name='q' quat='2 0 0 0'><geom size='1'/></body>\n"
      "    <body name='f'>\n"
      "      <geom type='capsule' fromto='0 0 0 0 0 -1' size='.1'/>\n"
      "      <geom type='cylinder' fromto='1 0 0 0 0 0' size='.1'/>\n"
      "      <geom type='box' fromto='0 0 1 0 0 3' size='.1 .5 .5'/>\n"
      "      <site name='s' euler='0 0 90'/>\n"
      "    </body>\n"
      "  </worldbody>\n"
      "</mujoco>\n",
      &log);
  CHECK_MSG(s != NULL, "%s", log.error);
  if (!s) return;
  CHECK(quat_near(s->body[1].quat, h, h, 0, 0, 1e-15));   // 90 deg about x
  CHECK(quat_near(s->body[2].quat, h, 0, 0, h, 1e-15));   // 90 deg about z (axis not unit)
  CHECK(quat_near(s->body[3].quat, h, 0, 0, h, 1e-15));   // x -> y: 90 deg about z
  CHECK(quat_near(s->body[4].quat, h, 0, h, 0, 1e-15));   // z -> x: 90 deg about y
  CHECK(quat_near(s->body[5].quat, 1, 0, 0, 0, 0));       // normalized
  const physSpecGeom* g = s->geom + 5;
  CHECK(g[0].pos[2] == -0.5 && g[0].size[1] == 0.5 && quat_near(g[0].quat, 1, 0, 0, 0, 1e-15));
  CHECK(g[1].pos[0] == 0.5 && g[1].size[1] == 0.5 && quat_near(g[1].quat, h, 0, h, 0, 1e-15));
  CHECK(g[2].pos[2] == 2 && g[2].size[1] == .1 && g[2].size[2] == 1);   // box: size[1] = size[0]
  CHECK(quat_near(g[2].quat, 0, 1, 0, 0, 1e-15));   // from - to = -z: turned over about x
  CHECK(quat_near(s->site[0].quat, h, 0, 0, h, 1e-15));
  phys_spec_free(s);

  // radians and an extrinsic sequence: XYZ applies x then y then z about fixed axes, q = qz qy qx
  s = parse_text(
      "<mujoco><compiler angle='radian' eulerseq='XYZ'/>\n"
      "  <worldbody>\n"
      "    <body euler='1.5707963267948966 0 1.5707963267948966'><geom size='1'/></body>\n"
      "    <body><joint range='-1 1' limited='true' ref='0.5'/><geom size='1'/></body>\n"
      "  </worldbody></mujoco>\n",
      &log);
  CHECK_MSG(s != NULL, "%s", log.error);
  if (!s) return;
  CHECK(quat_near(s->body[1].quat, 0.5, 0.5, 0.5, 0.5, 1e-15));   // qz(90) qx(90)
  CHECK(s->joint[0].range[0] == -1 && s->joint[0].range[1] == 1 && s->joint[0].ref == 0.5);
  phys_spec_free(s);
}

// bad attribute values: numbers, counts, keywords, integers, orientations, classes, name lengths
static void test_errors(void) {
#define MJ(body) "<mujoco>\n<worldbody>\n" body "\n</worldbody>\n</mujoco>\n"
  EXPECT_ERROR(MJ("<geom size='1' pos='1 abc 3'/>"), PHYS_ERR_PARSE, "model.xml:3: <geom>",
               "attribute 'pos': 'abc' is not a number");
  EXPECT_ERROR(MJ("<geom size='1' pos='1,2,3'/>"), PHYS_ERR_PARSE, "'1,2,3' is not a number");
  EXPECT_ERROR(MJ("<geom size='1' pos='nan 0 0'/>"), PHYS_ERR_VALUE, "not finite");
  EXPECT_ERROR(MJ("<geom size='1' pos='0 0 -inf'/>"), PHYS_ERR_VALUE, "not finite");
  EXPECT_ERROR(MJ("<geom size='1' pos='0 0 1e999'/>"), PHYS_ERR_VALUE, "not finite");
  EXPECT_ERROR(MJ("<geom size='1' pos='1 2 3 4'/>"), PHYS_ERR_SIZE, "attribute 'pos' has more than 3 values");
  EXPECT_ERROR(MJ("<geom size='1' pos='1 2'/>"), PHYS_ERR_SIZE, "attribute 'pos' needs 3 values, found 2");
  EXPECT_ERROR(MJ("<geom size='1 2 3 4'/>"), PHYS_ERR_SIZE, "'size' has more than 3 values");
  EXPECT_ERROR(MJ("<geom size='1' type='blob'/>"), PHYS_ERR_VALUE, "attribute 'type' is 'blob'; expected one of");
  EXPECT_ERROR(MJ("<geom size='1' contype='1.5'/>"), PHYS_ERR_PARSE, "not an integer");
  EXPECT_ERROR(MJ("<geom size='1' quat='1 0 0 0' euler='0 0 0'/>"), PHYS_ERR_MODEL, "more than one orientation");
  EXPECT_ERROR(MJ("<geom size='1' quat='0 0 0 0'/>"), PHYS_ERR_VALUE, "quat is zero");
  EXPECT_ERROR(MJ("<geom size='1' zaxis='0 0 0'/>"), PHYS_ERR_VALUE, "zaxis is zero");
  EXPECT_ERROR(MJ("<geom size='1' xyaxes='1 0 0 2 0 0'/>"), PHYS_ERR_VALUE, "xyaxes");
  EXPECT_ERROR(MJ("<geom size='1' class='nope'/>"), PHYS_ERR_MODEL, "unknown default class 'nope'");
  // defaults: a bad value is reported where it is written (the default's line)
  EXPECT_ERROR("<mujoco>\n<default>\n<geom size='x'/>\n</default>\n<worldbody><geom/></worldbody></mujoco>",
               PHYS_ERR_PARSE, "model.xml:3: <geom>: attribute 'size': 'x' is not a number");
  // names longer than the spec holds
  char longname[400];
  snprintf(longname, sizeof(longname), MJ("<geom size='1' name='%0200d'/>"), 7);
  EXPECT_ERROR(longname, PHYS_ERR_VALUE, "longer than 127 characters");
#undef MJ
}

// values through default classes: keywords, integers, limits and orientations from the nearest class that
// gives them; an element's own orientation replaces the default's whole (not combined with it)
static void test_class_values(void) {
  const double h = sqrt(0.5);
  physLog log;
  physSpec* s = parse_text(
      "<mujoco>\n"
      "  <default>\n"
      "    <geom condim='4' zaxis='1 0 0'/>\n"
      "    <joint type='slide' limited='true'/>\n"
      "    <default class='a'>\n"
      "      <joint range='-1 2'/>\n"
      "      <geom contype='3'/>\n"
      "    </default>\n"
      "  </default>\n"
      "  <worldbody>\n"
      "    <body childclass='a'>\n"
      "      <joint name='j'/>\n"
      "      <geom name='inherits' size='1'/>\n"
      "      <geom name='own' size='1' euler='0 0 90' condim='1'/>\n"
      "      <geom name='main' class='main' size='1' quat='1 0 0 0'/>\n"
      "    </body>\n"
      "  </worldbody>\n"
      "</mujoco>\n",
      &log);
  CHECK_MSG(s != NULL, "%s", log.error);
  if (!s) return;
  CHECK(s->joint[0].type == PHYS_JNT_SLIDE && s->joint[0].limited == 1);   // keyword and limited from main
  CHECK(s->joint[0].range[0] == -1 && s->joint[0].range[1] == 2);          // slide: no degree conversion
  CHECK(s->geom[0].condim == 4 && s->geom[0].contype == 3);                // main's and a's integers
  CHECK(quat_near(s->geom[0].quat, h, 0, h, 0, 1e-15));                     // main's zaxis: z -> x
  CHECK(s->geom[1].condim == 1 && quat_near(s->geom[1].quat, h, 0, 0, h, 1e-15));   // own euler only
  CHECK(s->geom[2].contype == 1 && quat_near(s->geom[2].quat, 1, 0, 0, 0, 0));     // class main: contype 1
  CHECK(log.nwarning == 0);
  phys_spec_free(s);
}

int main(void) {
  mjcf_text_begin("test_mjcf_attr");
  test_orientations();
  test_class_values();
  test_errors();
  return mjcf_text_end();
}
