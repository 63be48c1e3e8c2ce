// test_mjcf.c - the MJCF reader on small models written to a temp folder: values, defaults, orientations,
// includes, gzip, and every class of input error with its file:line: <element> message.
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "mjcf.h"
#include "physid.h"
#include "spec.h"
#include "test.h"

static char dir[256];
static char path[512];

// write text to dir/name; returns the full path (static buffer)
static const char* put(const char* name, const char* text) {
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  FILE* f = fopen(path, "w");
  if (!f) {
    perror(path);
    exit(1);
  }
  fputs(text, f);
  fclose(f);
  return path;
}

// parse text as dir/model.xml; the spec (NULL on error) and the log
static physSpec* parse_text(const char* text, physLog* log) {
  memset(log, 0, sizeof(*log));
  return phys_parse_mjcf(put("model.xml", text), log);
}

// text must fail with status st and a message containing each of the fragments (NULL-terminated)
#define EXPECT_ERROR(text, st, ...)                                                                        \
  do {                                                                                                     \
    physLog log_;                                                                                          \
    physSpec* s_ = parse_text(text, &log_);                                                                \
    CHECK_MSG(s_ == NULL, "parse should fail: %s", text);                                                 \
    CHECK_MSG(log_.status == (st), "status %d (%s), expected %d; message: %s", log_.status,                \
              phys_status_str(log_.status), (int)(st), log_.error);                                       \
    const char* frags_[] = {__VA_ARGS__, NULL};                                                           \
    for (int i_ = 0; frags_[i_]; i_++) {                                                                   \
      CHECK_MSG(strstr(log_.error, frags_[i_]) != NULL, "message '%s' lacks '%s'", log_.error, frags_[i_]); \
    }                                                                                                      \
    phys_spec_free(s_);                                                                                    \
  } while (0)

// 1 if any warning contains frag
static int has_warning(const physLog* log, const char* frag) {
  for (int i = 0; i < log->nwarning && i < PHYS_MAXWARN; i++) {
    if (strstr(log->warning[i], frag)) return 1;
  }
  return 0;
}

// |a - b| <= tol for 4 values, either sign (quaternions)
static int quat_near(const double* a, double w, double x, double y, double z, double tol) {
  double b[4] = {w, x, y, z}, dp = 0, dm = 0;
  for (int i = 0; i < 4; i++) {
    dp = fmax(dp, fabs(a[i] - b[i]));
    dm = fmax(dm, fabs(a[i] + b[i]));
  }
  return fmin(dp, dm) <= tol;
}

//---------------------------------------------------------------------------------------------------------
// values and MuJoCo semantics

// defaults: nested classes, childclass inherited by descendants, class= overrides, partial vectors
static void test_defaults(void) {
  physLog log;
  physSpec* s = parse_text(
      "<mujoco model='defaults'>\n"
      "  <default>\n"
      "    <geom size='.1 .2 .3' friction='.5'/>\n"
      "    <joint damping='1'/>\n"
      "    <default class='a'>\n"
      "      <joint damping='2' stiffness='3'/>\n"
      "      <geom type='box' rgba='1 0 0 1'/>\n"
      "      <default class='b'>\n"
      "        <joint stiffness='4' type='slide'/>\n"
      "        <geom size='.7'/>\n"
      "      </default>\n"
      "    </default>\n"
      "  </default>\n"
      "  <worldbody>\n"
      "    <body name='p' childclass='a'>\n"
      "      <joint name='j0'/>\n"
      "      <geom name='g0'/>\n"
      "      <body name='c'>\n"
      "        <joint name='j1' class='b'/>\n"
      "        <geom name='g1' class='b' friction='.9 .01'/>\n"
      "        <geom name='g2' class='main' type='sphere'/>\n"
      "      </body>\n"
      "    </body>\n"
      "  </worldbody>\n"
      "</mujoco>\n",
      &log);
  CHECK_MSG(s != NULL, "%s", log.error);
  if (!s) return;
  CHECK(!strcmp(s->modelname, "defaults"));
  CHECK(s->njoint == 2 && s->ngeom == 3 && s->nbody == 3);
  // j0: class a (from childclass): damping 2, stiffness 3, hinge
  CHECK(s->joint[0].damping == 2 && s->joint[0].stiffness == 3 && s->joint[0].type == PHYS_JNT_HINGE);
  // j1: class b: damping 2 (from a), stiffness 4, slide
  CHECK(s->joint[1].damping == 2 && s->joint[1].stiffness == 4 && s->joint[1].type == PHYS_JNT_SLIDE);
  // g0: box from a, size from main, friction .5 then MuJoCo's defaults for the other two, red
  CHECK(s->geom[0].type == PHYS_GEOM_BOX);
  CHECK(s->geom[0].size[0] == .1 && s->geom[0].size[1] == .2 && s->geom[0].size[2] == .3);
  CHECK(s->geom[0].friction[0] == .5 && s->geom[0].friction[1] == .005 && s->geom[0].friction[2] == .0001);
  CHECK(s->geom[0].rgba[0] == 1 && s->geom[0].rgba[1] == 0);
  // g1: class b overwrites only size[0] (partial vector), friction partially overwritten
  CHECK(s->geom[1].size[0] == .7 && s->geom[1].size[1] == .2 && s->geom[1].size[2] == .3);
  CHECK(s->geom[1].friction[0] == .9 && s->geom[1].friction[1] == .01 && s->geom[1].friction[2] == .0001);
  // g2: class main explicitly: MuJoCo's grey
  CHECK(s->geom[2].type == PHYS_GEOM_SPHERE && s->geom[2].rgba[0] == .5);
  CHECK(s->geom[2].body == 2 && s->geom[0].body == 1);
  CHECK(log.nwarning == 0);
  phys_spec_free(s);
}

// MuJoCo's geom, joint and option defaults when nothing is given
static void test_builtin_defaults(void) {
  physLog log;
  physSpec* s = parse_text(
      "<mujoco><worldbody><body><joint/><geom size='1'/></body></worldbody></mujoco>", &log);
  CHECK_MSG(s != NULL, "%s", log.error);
  if (!s) return;
  const physSpecGeom* g = s->geom;
  CHECK(g->type == PHYS_GEOM_SPHERE && g->density == 1000 && g->mass < 0);
  CHECK(g->friction[0] == 1 && g->friction[1] == 0.005 && g->friction[2] == 0.0001);
  CHECK(g->contype == 1 && g->conaffinity == 1 && g->condim == 3 && g->restitution == 0);
  CHECK(g->rgba[0] == .5 && g->rgba[1] == .5 && g->rgba[2] == .5 && g->rgba[3] == 1);
  CHECK(s->joint[0].type == PHYS_JNT_HINGE && s->joint[0].axis[2] == 1 && s->joint[0].limited == 0);
  CHECK(s->opt.timestep == 0.002 && s->opt.gravity[2] == -9.81 && s->opt.disableflags == 0);
  CHECK(s->inertiafromgeom == 2);
  CHECK(!strcmp(s->modelname, "MuJoCo Model"));
  phys_spec_free(s);
}

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
      "  <actuator><motor joint='h' ctrllimited='true' ctrlrange='-1 2' gear='5'/></actuator>\n"
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
  CHECK(s->nactuator == 1 && s->actuator[0].ctrllimited && s->actuator[0].ctrlrange[1] == 2);
  CHECK(s->actuator[0].gear[0] == 5 && s->actuator[0].trntype == PHYS_TRN_JOINT);
  CHECK(!strcmp(s->actuator[0].target, "h"));
  phys_spec_free(s);

  // MuJoCo 2.2.2: a range without limited is an error unless compiler autolimits is on
  EXPECT_ERROR("<mujoco><worldbody><body>\n<joint name='j' range='-1 1'/><geom size='1'/>\n"
               "</body></worldbody></mujoco>",
               PHYS_ERR_MODEL, "model.xml:2: <joint name='j'>", "autolimits");
  EXPECT_ERROR("<mujoco><worldbody><body><joint name='j'/><geom size='1'/></body></worldbody>\n"
               "<actuator><motor joint='j' ctrlrange='-1 1'/></actuator></mujoco>",
               PHYS_ERR_MODEL, "model.xml:2: <motor>", "ctrllimited");
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

// options, flags, compiler settings, keyframes, tendons, actuators, warnings for unsupported parts
static void test_sections(void) {
  physLog log;
  physSpec* s = parse_text(
      "<mujoco>\n"
      "  <compiler inertiafromgeom='false' settotalmass='7' boundmass='0.1' boundinertia='0.01'/>\n"
      "  <option timestep='0.01' gravity='0 0 -1' integrator='RK4'>\n"
      "    <flag gravity='disable' contact='disable' limit='enable' warmstart='disable'/>\n"
      "  </option>\n"
      "  <visual/><statistic/><size/><custom/><sensor/>\n"
      "  <worldbody>\n"
      "    <site name='a' pos='0 0 1'/>\n"
      "    <camera/><light/>\n"
      "    <body name='b' pos='1 2 3'>\n"
      "      <inertial pos='0 0 .1' mass='2' diaginertia='.1 .2 .3' euler='0 0 90'/>\n"
      "      <freejoint name='root'/>\n"
      "      <geom size='.1' mass='3' contype='2' conaffinity='4' condim='6' margin='.01' group='2'/>\n"
      "      <site name='c' pos='0 0 .5'/>\n"
      "      <frobnicate/>\n"
      "    </body>\n"
      "  </worldbody>\n"
      "  <tendon>\n"
      "    <spatial name='sp' stiffness='10' damping='2' springlength='.4'>\n"
      "      <site site='a'/><site site='c'/>\n"
      "    </spatial>\n"
      "    <fixed name='fx'><joint joint='root' coef='1'/></fixed>\n"
      "  </tendon>\n"
      "  <actuator>\n"
      "    <motor tendon='sp' gear='2'/>\n"
      "    <general joint='root' gainprm='3' gear='1 0 0 0 0 2'/>\n"
      "    <general joint='root' biastype='affine'/>\n"
      "    <position joint='root'/>\n"
      "    <motor tendon='fx'/>\n"
      "  </actuator>\n"
      "  <contact><exclude body1='world' body2='b'/></contact>\n"
      "  <keyframe><key name='k' time='1.5' qpos='0 0 1 1 0 0 0' ctrl='1 2'/></keyframe>\n"
      "</mujoco>\n",
      &log);
  CHECK_MSG(s != NULL, "%s", log.error);
  if (!s) return;
  CHECK(s->opt.timestep == 0.01 && s->opt.gravity[2] == -1 && s->opt.integrator == PHYS_INT_EULER);
  CHECK(s->opt.disableflags == (PHYS_DSBL_GRAVITY | PHYS_DSBL_CONTACT));
  CHECK(s->inertiafromgeom == 0 && s->settotalmass == 7 && s->boundmass == 0.1 && s->boundinertia == 0.01);
  const physSpecBody* b = s->body + 1;
  CHECK(b->has_inertial && b->mass == 2 && b->ipos[2] == .1 && b->inertia[2] == .3 && !b->has_fullinertia);
  CHECK(quat_near(b->iquat, sqrt(0.5), 0, 0, sqrt(0.5), 1e-15));
  CHECK(b->pos[0] == 1 && b->pos[1] == 2 && b->pos[2] == 3);
  CHECK(s->njoint == 1 && s->joint[0].type == PHYS_JNT_FREE && !strcmp(s->joint[0].name, "root"));
  const physSpecGeom* g = s->geom;
  CHECK(g->mass == 3 && g->contype == 2 && g->conaffinity == 4 && g->condim == 6 && g->margin == .01);
  CHECK(g->group == 2);
  CHECK(s->nsite == 2 && s->site[0].body == 0 && s->site[1].body == 1);
  CHECK(s->nspring == 1 && s->spring[0].nsite == 2 && s->spring[0].site[0] == 0 && s->spring[0].site[1] == 1);
  CHECK(s->spring[0].stiffness == 10 && s->spring[0].damping == 2 && s->spring[0].restlength == .4);
  CHECK(s->nactuator == 2);
  if (s->nactuator == 2) {
    CHECK(s->actuator[0].trntype == PHYS_TRN_SPRING && !strcmp(s->actuator[0].target, "sp"));
    CHECK(s->actuator[0].gear[0] == 2);
    CHECK(s->actuator[1].gear[0] == 3 && s->actuator[1].gear[5] == 6);   // gain folded into the gear
  }
  CHECK(s->nkey == 1 && s->key[0].time == 1.5 && s->key[0].nqpos == 7 && s->key[0].nctrl == 2);
  CHECK(s->key[0].qpos && s->key[0].qpos[3] == 1 && s->key[0].nqvel == 0);
  CHECK(!strcmp(s->key[0].name, "k"));
  // warnings: integrator, unknown element (with file:line), fixed tendon, unsupported actuators
  CHECK(has_warning(&log, "integrator 'RK4'"));
  CHECK(has_warning(&log, "model.xml:15: <frobnicate>: unknown element"));
  CHECK(has_warning(&log, "fixed tendons"));
  CHECK(has_warning(&log, "biastype") || has_warning(&log, "fixed-gain"));
  CHECK(has_warning(&log, "<position> actuators"));
  CHECK(has_warning(&log, "ignored fixed tendon 'fx'"));
  CHECK(!has_warning(&log, "<exclude>"));   // read into the spec (contact filtering)
  CHECK(s->nexclude == 1 && !strcmp(s->exclude[0].body1, "world") && !strcmp(s->exclude[0].body2, "b"));
  CHECK(log.nwarning == 6);
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

//---------------------------------------------------------------------------------------------------------
// files: gzip, includes, meshes, hostile XML

// a gzip file holding text
static const char* put_gz(const char* name, const char* text) {
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  gzFile f = gzopen(path, "wb");
  gzputs(f, text);
  gzclose(f);
  return path;
}

static void test_gzip_and_include(void) {
  physLog log = {0};
  physSpec* s = phys_parse_mjcf(put_gz("zipped.xml.gz", "<mujoco model='zipped'><worldbody>\n"
                                       "<body><joint/><geom size='.5'/></body></worldbody></mujoco>"),
                                &log);
  CHECK_MSG(s != NULL, "%s", log.error);
  if (s) CHECK(!strcmp(s->modelname, "zipped") && s->geom[0].size[0] == .5);
  phys_spec_free(s);

  // an include inside <worldbody> and one at the top level (defaults + actuators), from a subfolder
  char sub[300];
  snprintf(sub, sizeof(sub), "%s/parts", dir);
  mkdir(sub, 0755);
  put("parts/arm.xml", "<mujoco><body name='arm'><joint name='j' class='c'/><geom size='.1'/>\n"
                       "<geom size='1 2'/></body></mujoco>");
  put("parts/top.xml", "<mujoco><default><default class='c'><joint damping='7'/></default></default>\n"
                       "<actuator><motor joint='j'/></actuator></mujoco>");
  s = parse_text("<mujoco>\n<include file='parts/top.xml'/>\n<worldbody>\n<include file='parts/arm.xml'/>\n"
                 "</worldbody></mujoco>",
                 &log);
  CHECK_MSG(s != NULL, "%s", log.error);
  if (s) {
    CHECK(s->nbody == 2 && !strcmp(s->body[1].name, "arm") && s->joint[0].damping == 7);
    CHECK(s->nactuator == 1);
  }
  phys_spec_free(s);

  // compile-time errors name the included file an element came from (before: the main file with the
  // included file's line): a name used in two files, a file included twice, a moving body without inertia
  physModel* m = phys_load_mjcf(put("model.xml", "<mujoco>\n<include file='parts/top.xml'/>\n<worldbody>\n"
                                                 "<body name='arm'><geom size='.1'/></body>\n"
                                                 "<include file='parts/arm.xml'/>\n</worldbody></mujoco>"), &log);
  char want[700];
  snprintf(want, sizeof(want), "%s/parts/arm.xml:1: body 'arm': duplicate name: the body at %s/model.xml:4 has it too",
           dir, dir);
  CHECK_MSG(m == NULL && strstr(log.error, want), "%s", log.error);
  memset(&log, 0, sizeof(log));
  m = phys_load_mjcf(put("model.xml", "<mujoco>\n<include file='parts/top.xml'/>\n<worldbody>\n"
                                      "<include file='parts/arm.xml'/>\n<include file='parts/arm.xml'/>\n"
                                      "</worldbody></mujoco>"), &log);
  snprintf(want, sizeof(want), "%s/parts/arm.xml:1: body 'arm': duplicate name: the body at line 1 has it too", dir);
  CHECK_MSG(m == NULL && strstr(log.error, want), "%s", log.error);
  put("parts/point.xml", "<mujoco>\n<body name='p'><freejoint/>\n<inertial pos='0 0 0' mass='1' diaginertia='0 0 0'/>"
                         "</body></mujoco>");
  memset(&log, 0, sizeof(log));
  m = phys_load_mjcf(put("model.xml", "<mujoco>\n<worldbody>\n<include file='parts/point.xml'/>\n</worldbody></mujoco>"),
                     &log);
  snprintf(want, sizeof(want), "%s/parts/point.xml:2: body 'p': it moves", dir);
  CHECK_MSG(m == NULL && strstr(log.error, want), "%s", log.error);

  // errors inside an included file name that file and its line
  put("parts/bad.xml", "<mujoco>\n<body>\n<geom name='g' type='box' size='1'/>\n</body></mujoco>");
  EXPECT_ERROR("<mujoco><worldbody><include file='parts/bad.xml'/></worldbody></mujoco>", PHYS_ERR_SIZE,
               "parts/bad.xml:3: <geom name='g'>: size needs 3 values for box, found 1");
  // never outside the model's folder, never a missing file, never recursion
  EXPECT_ERROR("<mujoco><include file='../escape.xml'/></mujoco>", PHYS_ERR_ARG, "outside the model folder");
  EXPECT_ERROR("<mujoco><include file='/etc/hostname'/></mujoco>", PHYS_ERR_ARG, "outside the model folder");
  EXPECT_ERROR("<mujoco>\n<include file='nothere.xml'/></mujoco>", PHYS_ERR_IO, "model.xml:2: <include>",
               "nothere.xml");
  char link[300];
  snprintf(link, sizeof(link), "%s/etclink", dir);
  CHECK(symlink("/etc", link) == 0);   // a symbolic link out of the folder is refused too
  EXPECT_ERROR("<mujoco><include file='etclink/hostname'/></mujoco>", PHYS_ERR_ARG, "outside the model folder");
  s = parse_text("<mujoco><include file='parts/top.xml'/>"
                 "<worldbody><include file='./parts/../parts//arm.xml'/></worldbody></mujoco>", &log);
  CHECK_MSG(s != NULL, "%s", log.error);
  phys_spec_free(s);
  put("loop.xml", "<mujoco><include file='loop.xml'/></mujoco>");
  EXPECT_ERROR("<mujoco><include file='loop.xml'/></mujoco>", PHYS_ERR_MODEL, "recursive");
  put("notmj.xml", "<robot/>");
  EXPECT_ERROR("<mujoco><include file='notmj.xml'/></mujoco>", PHYS_ERR_MODEL, "<mujoco> root");
}

// an OBJ tetrahedron as a mesh asset (meshdir, scale, name from the file), a missing file (warning and
// geom dropped; strict_mesh: error), a mesh outside the folder
static void test_meshes(void) {
  char sub[300];
  snprintf(sub, sizeof(sub), "%s/meshes", dir);
  mkdir(sub, 0755);
  put("meshes/tet.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n");
  physLog log;
  const char* model =
      "<mujoco><compiler meshdir='meshes'/>\n"
      "<asset><mesh file='tet.obj' scale='2 2 2'/><mesh name='gone' file='missing.stl'/></asset>\n"
      "<worldbody><body><freejoint/>\n"
      "<geom type='mesh' mesh='tet'/><geom type='mesh' mesh='gone'/>\n"
      "</body></worldbody></mujoco>";
  physSpec* s = parse_text(model, &log);
  CHECK_MSG(s != NULL, "%s", log.error);
  if (s) {
    CHECK(s->nmesh == 1 && !strcmp(s->mesh[0].name, "tet") && s->mesh[0].nvert == 4 && s->mesh[0].nface == 4);
    CHECK(s->mesh[0].nvert == 4 && s->mesh[0].vert[3] == 2);   // scaled
    CHECK(s->ngeom == 1 && s->geom[0].type == PHYS_GEOM_MESH && s->geom[0].mesh == 0);
    CHECK(has_warning(&log, "missing.stl") && has_warning(&log, "model.xml:4: <geom>: geom dropped"));
  }
  phys_spec_free(s);
  physLoadOptions opt = {.strict_mesh = 1};
  memset(&log, 0, sizeof(log));
  s = phys_parse_mjcf_opt(put("model.xml", model), &opt, &log);
  CHECK(s == NULL && log.status == PHYS_ERR_IO && strstr(log.error, "model.xml:2: <mesh name='gone'>"));
  phys_spec_free(s);
  // a broken mesh file: the error names the model's <mesh> line and the mesh file's line (before: only the mesh)
  put("meshes/bad.obj", "v 0 0 0\nf 1 2 3\n");
  EXPECT_ERROR("<mujoco><compiler meshdir='meshes'/>\n<asset><mesh name='b' file='bad.obj'/></asset></mujoco>",
               PHYS_ERR_VALUE, "model.xml:2: <mesh name='b'>: mesh: ", "meshes/bad.obj:2: face index '2' out of range");
  EXPECT_ERROR("<mujoco><asset><mesh file='../../../../../../etc/passwd'/></asset></mujoco>", PHYS_ERR_ARG,
               "outside the model folder");
  EXPECT_ERROR("<mujoco><worldbody><geom type='mesh' mesh='nope'/></worldbody></mujoco>", PHYS_ERR_MODEL,
               "unknown mesh 'nope'");
  EXPECT_ERROR("<mujoco><worldbody><geom type='mesh'/></worldbody></mujoco>", PHYS_ERR_MODEL, "needs attribute 'mesh'");
}

// malformed XML, DTDs and entities, non-MJCF roots, missing files; libxml2 must print nothing
static void test_hostile_xml(void) {
  // route stderr to a file to prove libxml2 stays quiet
  char errfile[300];
  snprintf(errfile, sizeof(errfile), "%s/stderr.txt", dir);
  fflush(stderr);
  int saved = dup(2);
  int fd = open(errfile, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  dup2(fd, 2);
  close(fd);

  EXPECT_ERROR("<mujoco>\n<worldbody>\n<body>\n</worldbody>\n</mujoco>\n", PHYS_ERR_PARSE,
               "model.xml:4: malformed XML", "mismatch");
  EXPECT_ERROR("<mujoco>\n<worldbody a='1' a='2'/></mujoco>", PHYS_ERR_PARSE, "model.xml:2: malformed XML");
  EXPECT_ERROR("", PHYS_ERR_PARSE, "model.xml");
  EXPECT_ERROR("<?xml version='1.0'?>\n<!DOCTYPE lolz [<!ENTITY lol 'lol'><!ENTITY lol2 '&lol;&lol;&lol;'>]>\n"
               "<mujoco model='&lol2;'/>\n",
               PHYS_ERR_PARSE, "model.xml:2", "DOCTYPE");
  EXPECT_ERROR("<?xml version='1.0'?>\n<!DOCTYPE m [<!ENTITY xxe SYSTEM 'file:///etc/passwd'>]>\n"
               "<mujoco model='&xxe;'/>\n",
               PHYS_ERR_PARSE, "DOCTYPE");
  EXPECT_ERROR("<mujoco model='&undefined;'/>", PHYS_ERR_PARSE, "malformed XML");
  EXPECT_ERROR("<robot name='r'/>", PHYS_ERR_MODEL, "model.xml:1: <robot name='r'>", "root element must be <mujoco>");

  physLog log = {0};
  snprintf(path, sizeof(path), "%s/does_not_exist.xml", dir);
  CHECK(phys_parse_mjcf(path, &log) == NULL && log.status == PHYS_ERR_IO);
  CHECK(strstr(log.error, "does_not_exist.xml") != NULL);
  memset(&log, 0, sizeof(log));
  CHECK(phys_parse_mjcf(dir, &log) == NULL && log.status == PHYS_ERR_IO);
  memset(&log, 0, sizeof(log));
  CHECK(phys_parse_mjcf(NULL, &log) == NULL && log.status == PHYS_ERR_ARG);
  // a corrupt gzip stream
  snprintf(path, sizeof(path), "%s/corrupt.xml.gz", dir);
  FILE* f = fopen(path, "wb");
  const unsigned char junk[] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 0xff, 0xff, 0xff, 0xff, 0x12};
  fwrite(junk, 1, sizeof(junk), f);
  fclose(f);
  memset(&log, 0, sizeof(log));
  CHECK(phys_parse_mjcf(path, &log) == NULL && log.status == PHYS_ERR_PARSE);

  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  struct stat st;
  CHECK_MSG(stat(errfile, &st) == 0 && st.st_size == 0, "the reader printed to stderr (%s)", errfile);
}

// every validation the reader owns, each with file:line: <element name>: reason
static void test_errors(void) {
#define MJ(body) "<mujoco>\n<worldbody>\n" body "\n</worldbody>\n</mujoco>\n"
#define MJT(body, tail) "<mujoco>\n<worldbody>\n" body "\n</worldbody>\n" tail "</mujoco>\n"
  EXPECT_ERROR(MJ("<geom name='foo' type='sphere'/>"), PHYS_ERR_SIZE,
               "model.xml:3: <geom name='foo'>: size needs 1 value for sphere, found 0");
  EXPECT_ERROR(MJ("<geom name='c' type='capsule' size='.1'/>"), PHYS_ERR_SIZE, "size needs 2 values for capsule");
  EXPECT_ERROR(MJ("<geom type='sphere' size='-1'/>"), PHYS_ERR_VALUE, "model.xml:3: <geom>", "positive");
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
  EXPECT_ERROR(MJ("<geom size='1' type='hfield'/>"), PHYS_ERR_MODEL, "'hfield' is not supported");
  EXPECT_ERROR(MJ("<geom size='1' fromto='0 0 0 0 0 1'/>"), PHYS_ERR_MODEL, "fromto needs a capsule");
  EXPECT_ERROR(MJ("<geom type='capsule' size='1' fromto='1 1 1 1 1 1'/>"), PHYS_ERR_VALUE, "coincide");
  EXPECT_ERROR(MJ("<geom size='1' condim='2'/>"), PHYS_ERR_VALUE, "condim must be 1, 3, 4 or 6");
  EXPECT_ERROR(MJ("<geom size='1' contype='1.5'/>"), PHYS_ERR_PARSE, "not an integer");
  EXPECT_ERROR(MJ("<geom size='1' mass='-1'/>"), PHYS_ERR_VALUE, "mass must be >= 0");
  EXPECT_ERROR(MJ("<geom size='1' quat='1 0 0 0' euler='0 0 0'/>"), PHYS_ERR_MODEL, "more than one orientation");
  EXPECT_ERROR(MJ("<geom size='1' quat='0 0 0 0'/>"), PHYS_ERR_VALUE, "quat is zero");
  EXPECT_ERROR(MJ("<geom size='1' zaxis='0 0 0'/>"), PHYS_ERR_VALUE, "zaxis is zero");
  EXPECT_ERROR(MJ("<geom size='1' xyaxes='1 0 0 2 0 0'/>"), PHYS_ERR_VALUE, "xyaxes");
  EXPECT_ERROR(MJ("<geom size='1' class='nope'/>"), PHYS_ERR_MODEL, "unknown default class 'nope'");
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
  EXPECT_ERROR("<mujoco><compiler coordinate='global'/></mujoco>", PHYS_ERR_MODEL, "global", "not supported");
  EXPECT_ERROR("<mujoco><compiler angle='gradian'/></mujoco>", PHYS_ERR_VALUE, "expected one of: radian, degree");
  EXPECT_ERROR("<mujoco><compiler eulerseq='xyw'/></mujoco>", PHYS_ERR_VALUE, "eulerseq");
  EXPECT_ERROR("<mujoco><option timestep='0'/></mujoco>", PHYS_ERR_VALUE, "timestep must be > 0");
  EXPECT_ERROR("<mujoco><option gravity='0 0'/></mujoco>", PHYS_ERR_SIZE, "gravity");
  EXPECT_ERROR("<mujoco><option><flag gravity='off'/></option></mujoco>", PHYS_ERR_VALUE, "disable, enable");
  EXPECT_ERROR("<mujoco><default><default><geom/></default></default></mujoco>", PHYS_ERR_MODEL, "needs a class");
  EXPECT_ERROR("<mujoco><default><default class='x'/><default class='x'/></default></mujoco>", PHYS_ERR_MODEL,
               "defined twice");
  // defaults: a bad value is reported where it is written (the default's line)
  EXPECT_ERROR("<mujoco>\n<default>\n<geom size='x'/>\n</default>\n<worldbody><geom/></worldbody></mujoco>",
               PHYS_ERR_PARSE, "model.xml:3: <geom>: attribute 'size': 'x' is not a number");
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
  // names longer than the spec holds
  char longname[400];
  snprintf(longname, sizeof(longname), MJ("<geom size='1' name='%0200d'/>"), 7);
  EXPECT_ERROR(longname, PHYS_ERR_VALUE, "longer than 127 characters");
#undef MJ
#undef MJT
}

// phys_load_mjcf: parse and compile; the compiler's errors (actuator targets) come through
static void test_load(void) {
  physLog log = {0};
  physModel* m = phys_load_mjcf("tests/data/double_pendulum.xml", &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  if (m) {
    CHECK(m->nq == 2 && m->nv == 2 && m->nbody == 3 && m->nu == 2 && m->nkey == 1);
    CHECK(m->body_mass[1] == 1 && m->body_mass[2] == 0.5);
    CHECK(m->key_qpos[0] == 0.5 && m->key_qpos[1] == -0.3);
    CHECK(phys_name2id(m, "joint", "elbow") == 1 && phys_name2id(m, "site", "tip") == 0);
  }
  phys_free_model(m);
  memset(&log, 0, sizeof(log));
  m = phys_load_mjcf(put("model.xml", "<mujoco><worldbody><body><joint/><geom size='1'/></body></worldbody>\n"
                                      "<actuator><motor name='m' joint='missing'/></actuator></mujoco>"),
                     &log);
  CHECK(m == NULL && log.status != PHYS_OK && strstr(log.error, "missing"));
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

int main(void) {
  snprintf(dir, sizeof(dir), "/tmp/physid_test_mjcf_XXXXXX");
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    return 1;
  }
  test_defaults();
  test_builtin_defaults();
  test_orientations();
  test_units_and_limits();
  test_sections();
  test_ordering();
  test_gzip_and_include();
  test_meshes();
  test_hostile_xml();
  test_errors();
  test_load();
  test_extensions();
  char cmd[300];
  if (getenv("KEEP")) return test_done();
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
  return test_done();
}
