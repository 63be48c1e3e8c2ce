// test_mjcf.c - the MJCF reader on small models written to a temp folder: the document: defaults and classes,
// built-in defaults, compiler/option/size, all sections read in order, includes, gzip, hostile XML, loading.
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "mjcf_text.h"

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
  CHECK(s->nspring == 2 && s->spring[0].nsite == 2 && s->spring[0].site[0] == 0 && s->spring[0].site[1] == 1);
  CHECK(s->spring[0].stiffness == 10 && s->spring[0].damping == 2 && s->spring[0].restlength == .4);
  CHECK(s->spring[0].type == PHYS_SPRING_PATH && s->spring[1].type == PHYS_SPRING_FIXED);
  CHECK(s->spring[1].nsite == 1 && s->spring[1].site[0] == 0 && s->spring[1].prm[0] == 1);  // joint root
  CHECK(s->nactuator == 5);
  if (s->nactuator == 5) {
    CHECK(s->actuator[0].trntype == PHYS_TRN_SPRING && !strcmp(s->actuator[0].target, "sp"));
    CHECK(s->actuator[0].gear[0] == 2 && s->actuator[0].gainprm[0] == 1 && s->actuator[0].biasprm[0] == 0);
    CHECK(s->actuator[1].gear[0] == 1 && s->actuator[1].gear[5] == 2 && s->actuator[1].gainprm[0] == 3);
    CHECK(s->actuator[2].gainprm[0] == 1 && s->actuator[2].biasprm[1] == 0);   // affine bias, all zero
    CHECK(s->actuator[3].gainprm[0] == 1 && s->actuator[3].biasprm[1] == -1);  // position: kp 1
  }
  CHECK(s->nkey == 1 && s->key[0].time == 1.5 && s->key[0].nqpos == 7 && s->key[0].nctrl == 2);
  CHECK(s->key[0].qpos && s->key[0].qpos[3] == 1 && s->key[0].nqvel == 0);
  CHECK(!strcmp(s->key[0].name, "k"));
  // warnings: integrator, unknown element (with file:line); the fixed tendon (on a free joint: refused by
  // phys_compile, test_mjcf_tendon.c) and its motor are read
  CHECK(has_warning(&log, "integrator 'RK4'"));
  CHECK(has_warning(&log, "model.xml:15: <frobnicate>: unknown element"));
  CHECK(s->nactuator == 5 && s->actuator[4].trntype == PHYS_TRN_SPRING && !strcmp(s->actuator[4].target, "fx"));
  CHECK(!has_warning(&log, "<exclude>"));   // read into the spec (contact filtering)
  CHECK(s->nexclude == 1 && !strcmp(s->exclude[0].body1, "world") && !strcmp(s->exclude[0].body2, "b"));
  CHECK(log.nwarning == 2);
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

// the errors of the sections mjcf.c reads (<compiler>, <option>, <default>), each with file:line: <element>
static void test_errors(void) {
  EXPECT_ERROR("<mujoco><compiler coordinate='global'/></mujoco>", PHYS_ERR_MODEL, "global", "not supported");
  EXPECT_ERROR("<mujoco><compiler angle='gradian'/></mujoco>", PHYS_ERR_VALUE, "expected one of: radian, degree");
  EXPECT_ERROR("<mujoco><compiler eulerseq='xyw'/></mujoco>", PHYS_ERR_VALUE, "eulerseq");
  EXPECT_ERROR("<mujoco><option timestep='0'/></mujoco>", PHYS_ERR_VALUE, "timestep must be > 0");
  EXPECT_ERROR("<mujoco><option gravity='0 0'/></mujoco>", PHYS_ERR_SIZE, "gravity");
  EXPECT_ERROR("<mujoco><option><flag gravity='off'/></option></mujoco>", PHYS_ERR_VALUE, "disable, enable");
  EXPECT_ERROR("<mujoco><default><default><geom/></default></default></mujoco>", PHYS_ERR_MODEL, "needs a class");
  EXPECT_ERROR("<mujoco><default><default class='x'/><default class='x'/></default></mujoco>", PHYS_ERR_MODEL,
               "defined twice");
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

int main(void) {
  mjcf_text_begin("test_mjcf");
  test_defaults();
  test_builtin_defaults();
  test_sections();
  test_gzip_and_include();
  test_hostile_xml();
  test_errors();
  test_load();
  return mjcf_text_end();
}
