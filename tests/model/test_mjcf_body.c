// test_mjcf_body.c - MJCF <worldbody> (src/model/mjcf_body.c): joint units and limits, body and element order,
// and every body, inertial, joint, geom error with its file:line: <element> message.
#include <string.h>

#include "mjcf_text.h"

// units: hinge and ball ranges, hinge ref/springref in degrees by default; slide values untouched
static void test_units_and_limits(void) {
  const double d2r = 3.14159265358979323846 / 180;
  physLog log;
  physSpec* s = parse_text(
      "<mujoco>\n"
      "  <worldbody><body>\n"
      "    <joint name='h' limited='true' range='-90 45' ref='30' springref='-60'/>\n"
      "    <joint name='s' type='slide' limited='true' range='-2 3' ref='0.5' springref='0.25'/>\n"
      "    <joint name='b' type='ball' limited='true' range='0 120'/>\n"
      "    <joint name='u' limited='false' range='-10 10'/>\n"
      "    <geom size='1'/>\n"
      "  </body></worldbody>\n"
      "</mujoco>\n",
      &log);
  CHECK_MSG(s != NULL, "%s", log.error);
  if (!s) return;
  CHECK_NEAR(s->joint[0].range[0], -90 * d2r, 1e-15);
  CHECK_NEAR(s->joint[0].range[1], 45 * d2r, 1e-15);
  CHECK_NEAR(s->joint[0].ref, 30 * d2r, 1e-15);
  CHECK_NEAR(s->joint[0].springref, -60 * d2r, 1e-15);
  CHECK(s->joint[1].range[0] == -2 && s->joint[1].range[1] == 3 && s->joint[1].ref == 0.5);
  CHECK(s->joint[1].springref == 0.25);
  CHECK_NEAR(s->joint[2].range[1], 120 * d2r, 1e-15);
  CHECK(s->joint[0].limited && s->joint[1].limited && s->joint[2].limited && !s->joint[3].limited);
  phys_spec_free(s);

  // MuJoCo 2.2.2: a range without limited is an error unless compiler autolimits is on
  EXPECT_ERROR("<mujoco><worldbody><body>\n<joint name='j' range='-1 1'/><geom size='1'/>\n"
               "</body></worldbody></mujoco>",
               PHYS_ERR_MODEL, "model.xml:2: <joint name='j'>", "autolimits");
  EXPECT_ERROR("<mujoco><worldbody><body>\n<joint limited='true' range='1 -1'/><geom size='1'/>\n"
               "</body></worldbody></mujoco>",
               PHYS_ERR_VALUE, "model.xml:2: <joint>", "lower limit");
  s = parse_text(
      "<mujoco><compiler autolimits='true'/><worldbody><body>\n"
      "<joint range='-1 1'/><joint/><geom size='1'/>\n"
      "</body></worldbody></mujoco>",
      &log);
  CHECK_MSG(s != NULL, "%s", log.error);
  if (s) CHECK(s->joint[0].limited == 1 && s->joint[1].limited == 0);
  phys_spec_free(s);
}

// body numbering is depth first; a body's joints/geoms come before its children's, whatever the order
static void test_ordering(void) {
  physLog log;
  physSpec* s = parse_text(
      "<mujoco><worldbody>\n"
      "  <body name='a'>\n"
      "    <body name='a1'><joint name='ja1'/><geom name='ga1' size='1'/>\n"
      "      <body name='a11'><joint name='ja11'/><geom size='1'/></body>\n"
      "    </body>\n"
      "    <joint name='ja'/><geom name='ga' size='1'/>\n"
      "    <body name='a2'><joint name='ja2'/><geom size='1'/></body>\n"
      "  </body>\n"
      "  <geom name='floor' type='plane' size='1 1 1'/>\n"
      "  <body name='b'><joint name='jb'/><geom size='1'/></body>\n"
      "</worldbody></mujoco>\n",
      &log);
  CHECK_MSG(s != NULL, "%s", log.error);
  if (!s) return;
  const char* bodies[] = {"world", "a", "a1", "a11", "a2", "b"};
  const char* joints[] = {"ja", "ja1", "ja11", "ja2", "jb"};
  CHECK(s->nbody == 6 && s->njoint == 5);
  for (int i = 0; i < 6 && i < s->nbody; i++) CHECK_MSG(!strcmp(s->body[i].name, bodies[i]), "body %d", i);
  for (int i = 0; i < 5 && i < s->njoint; i++) CHECK_MSG(!strcmp(s->joint[i].name, joints[i]), "joint %d", i);
  CHECK(s->body[3].parent == 2 && s->body[4].parent == 1 && s->body[5].parent == 0);
  CHECK(!strcmp(s->geom[0].name, "floor") && !strcmp(s->geom[1].name, "ga") && !strcmp(s->geom[2].name, "ga1"));
  phys_spec_free(s);
}

// bad bodies, inertials, joints and geoms
static void test_errors(void) {
#define MJ(body) "<mujoco>\n<worldbody>\n" body "\n</worldbody>\n</mujoco>\n"
  EXPECT_ERROR(MJ("<geom name='foo' type='sphere'/>"), PHYS_ERR_SIZE,
               "model.xml:3: <geom name='foo'>: size needs 1 value for sphere, found 0");
  EXPECT_ERROR(MJ("<geom name='c' type='capsule' size='.1'/>"), PHYS_ERR_SIZE, "size needs 2 values for capsule");
  EXPECT_ERROR(MJ("<geom type='sphere' size='-1'/>"), PHYS_ERR_VALUE, "model.xml:3: <geom>", "positive");
  EXPECT_ERROR(MJ("<geom size='1' type='hfield'/>"), PHYS_ERR_MODEL, "'hfield' is not supported");
  EXPECT_ERROR(MJ("<geom size='1' fromto='0 0 0 0 0 1'/>"), PHYS_ERR_MODEL, "fromto needs a capsule");
  EXPECT_ERROR(MJ("<geom type='capsule' size='1' fromto='1 1 1 1 1 1'/>"), PHYS_ERR_VALUE, "coincide");
  EXPECT_ERROR(MJ("<geom size='1' condim='2'/>"), PHYS_ERR_VALUE, "condim must be 1, 3, 4 or 6");
  EXPECT_ERROR(MJ("<geom size='1' mass='-1'/>"), PHYS_ERR_VALUE, "mass must be >= 0");
  EXPECT_ERROR(MJ("<joint/>"), PHYS_ERR_MODEL, "model.xml:3: <joint>: not allowed in the world body");
  EXPECT_ERROR(MJ("<body><joint type='twist'/><geom size='1'/></body>"), PHYS_ERR_VALUE,
               "attribute 'type' is 'twist'; expected one of: free, ball, slide, hinge");
  EXPECT_ERROR(MJ("<body><joint axis='0 0 0'/><geom size='1'/></body>"), PHYS_ERR_VALUE, "axis is zero");
  EXPECT_ERROR(MJ("<body><joint damping='-1'/><geom size='1'/></body>"), PHYS_ERR_VALUE, "damping must be >= 0");
  EXPECT_ERROR(MJ("<body name='b'><freejoint/><freejoint/><geom size='1'/></body>"), PHYS_ERR_MODEL,
               "model.xml:3: <body name='b'>: a free joint must be the only joint");
  EXPECT_ERROR(MJ("<body><freejoint/><joint/><geom size='1'/></body>"), PHYS_ERR_MODEL, "only joint");
  EXPECT_ERROR(MJ("<body><body name='inner'><freejoint/><geom size='1'/></body></body>"), PHYS_ERR_MODEL,
               "<body name='inner'>: a free joint is only allowed on a child of the world body");
  EXPECT_ERROR(MJ("<body><inertial mass='1' diaginertia='1 1 1'/></body>"), PHYS_ERR_MODEL, "'pos' is required");
  EXPECT_ERROR(MJ("<body><inertial pos='0 0 0' diaginertia='1 1 1'/></body>"), PHYS_ERR_MODEL, "'mass' is required");
  EXPECT_ERROR(MJ("<body><inertial pos='0 0 0' mass='1'/></body>"), PHYS_ERR_MODEL, "exactly one of");
  EXPECT_ERROR(MJ("<body><inertial pos='0 0 0' mass='1' fullinertia='1 1 1 0 0 0' euler='1 2 3'/></body>"),
               PHYS_ERR_MODEL, "fullinertia fixes the inertial frame");
  EXPECT_ERROR(MJ("<body><inertial pos='0 0 0' mass='1' diaginertia='1 1 1'/>"
                  "<inertial pos='0 0 0' mass='1' diaginertia='1 1 1'/></body>"),
               PHYS_ERR_MODEL, "at most one <inertial>");
#undef MJ
}

// inertial frames (diagonal with an orientation, full tensor), sites with class defaults, skipped and
// warned-about children of a body; a composite is refused (MuJoCo's expansion would change every size)
static void test_body_items(void) {
  physLog log;
  physSpec* s = parse_text(
      "<mujoco>\n"
      "  <default><default class='s'><site pos='0 0 2'/></default></default>\n"
      "  <worldbody>\n"
      "    <body name='a' pos='1 0 0' mocap='true'>\n"
      "      <inertial pos='0 0 .5' mass='3' fullinertia='1 2 3 .1 .2 .3'/>\n"
      "      <geom size='1'/>\n"
      "      <site name='s1' class='s'/>\n"
      "      <camera/><light/>\n"
      "    </body>\n"
      "    <body name='b' childclass='s'>\n"
      "      <inertial pos='0 0 0' mass='0' diaginertia='0 0 0'/>\n"
      "      <site name='s2'/><site name='s3' pos='1 1 1'/>\n"
      "    </body>\n"
      "  </worldbody>\n"
      "</mujoco>\n",
      &log);
  CHECK_MSG(s != NULL, "%s", log.error);
  if (!s) return;
  const physSpecBody* a = s->body + 1;
  CHECK(a->has_inertial && a->has_fullinertia && a->mass == 3 && a->ipos[2] == .5);
  CHECK(a->fullinertia[0] == 1 && a->fullinertia[3] == .1 && a->fullinertia[5] == .3);
  CHECK(quat_near(a->iquat, 1, 0, 0, 0, 0));
  CHECK(s->body[2].has_inertial && s->body[2].mass == 0 && !s->body[2].has_fullinertia);
  CHECK(s->nsite == 3 && s->site[0].body == 1 && s->site[0].pos[2] == 2);
  CHECK(s->site[1].body == 2 && s->site[1].pos[2] == 2);       // childclass s
  CHECK(s->site[2].pos[0] == 1 && s->site[2].pos[2] == 1);     // own pos replaces the default's
  CHECK(has_warning(&log, "model.xml:4: <body name='a'>: mocap bodies are not supported"));
  CHECK(log.nwarning == 1);   // cameras and lights are skipped silently
  phys_spec_free(s);
}

static void test_composite_refused(void) {
  physLog log;
  physSpec* s = parse_text("<mujoco><worldbody><body>\n<composite type='grid' count='2 2 1'/></body></worldbody>"
                           "</mujoco>", &log);
  CHECK(s == NULL && log.status == PHYS_ERR_MODEL);
  CHECK_MSG(strstr(log.error, "model.xml:2: <composite>: composite objects are not supported"), "%s", log.error);
  phys_spec_free(s);
}

int main(void) {
  mjcf_text_begin("test_mjcf_body");
  test_composite_refused();
  test_units_and_limits();
  test_ordering();
  test_body_items();
  test_errors();
  return mjcf_text_end();
}
