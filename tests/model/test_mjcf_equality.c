// test_mjcf_equality.c - the MJCF <equality> reader (src/model/mjcf_equality.c) and its compile step
// (src/model/compile_equality.c): attributes and defaults classes into eq_* (MuJoCo 2.2.2's values are
// checked in tests/dyn/test_oracle_equality.c), and every refusal with its file:line and element.
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dyn.h"
#include "equality.h"
#include "mjcf_text.h"

#define EQ_MODEL(eq)                                                                                          \
  "<mujoco>\n"                                                                                                \
  "  <default><equality solref='0.01 0.5'/><default class='c'><equality active='false' solimp='.8 .9 .01 .5 2'/>" \
  "</default></default>\n"                                                                                    \
  "  <worldbody><body name='a'><joint name='h' type='hinge'/><joint name='s' type='slide'/><geom size='.1'/>\n" \
  "    <body name='b' pos='1 0 0'><joint name='ball' type='ball'/><geom size='.1'/></body></body></worldbody>\n" \
  "  <equality>\n"                                                                                            \
  "    " eq "\n"                                                                                               \
  "  </equality>\n"                                                                                           \
  "</mujoco>\n"

// values: types, objects (body2 defaults to the world, joint2 to none), defaults classes, torquescale, polycoef
static void test_values(void) {
  physLog log;
  physModel* m = load_text(EQ_MODEL("<connect body1='b' anchor='1 2 3'/><weld class='c' body1='a' body2='b' "
                                    "torquescale='3' solref='-100 -10'/><joint joint1='h' joint2='s' polycoef='1 2 3 4 5'/>"
                                    "<joint joint1='s'/>"),
                           &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  if (!m) return;
  CHECK(m->neq == 4);
  CHECK(m->eq_type[0] == PHYS_EQ_CONNECT && m->eq_obj1id[0] == 2 && m->eq_obj2id[0] == 0 && m->eq_active[0] == 1);
  CHECK(m->eq_data[0] == 1 && m->eq_data[1] == 2 && m->eq_data[2] == 3);
  // the anchor in the world's frame at qpos0: b is at (1, 0, 0)
  CHECK(fabs(m->eq_data[3] - 2) < 1e-15 && fabs(m->eq_data[4] - 2) < 1e-15 && fabs(m->eq_data[5] - 3) < 1e-15);
  CHECK(m->eq_solref[0] == 0.01 && m->eq_solref[1] == 0.5 && m->eq_solimp[0] == 0.9);
  const double* w = m->eq_data + PHYS_EQ_NDATA;
  CHECK(m->eq_type[1] == PHYS_EQ_WELD && m->eq_obj1id[1] == 1 && m->eq_obj2id[1] == 2 && m->eq_active[1] == 0);
  CHECK(m->eq_solref[2] == -100 && m->eq_solref[3] == -10 && m->eq_solimp[5] == 0.8 && w[10] == 3);
  CHECK(fabs(w[3] - 1) < 1e-15 && w[4] == 0 && w[5] == 0 && w[6] == 1 && w[7] == 0);   // b 1 m along a's x
  CHECK(m->eq_type[2] == PHYS_EQ_JOINT && m->eq_obj1id[2] == 0 && m->eq_obj2id[2] == 1);
  for (int k = 0; k < 5; k++) CHECK(m->eq_data[2 * PHYS_EQ_NDATA + k] == k + 1);
  CHECK(m->eq_obj2id[3] == -1 && m->eq_data[3 * PHYS_EQ_NDATA + 1] == 1);   // polycoef default 0 1 0 0 0
  CHECK(!(m->opt.disableflags & PHYS_DSBL_EQUALITY));
  phys_free_model(m);
  m = load_text("<mujoco><option><flag equality='disable'/></option><worldbody/></mujoco>", &log);
  CHECK(m && (m->opt.disableflags & PHYS_DSBL_EQUALITY));
  phys_free_model(m);
}

// a model with two fixed tendons (f1 on h, f2 on s and h) and a spatial one (p), one equality eq
#define TEN_MODEL(eq)                                                                                         \
  "<mujoco>\n"                                                                                                \
  "  <worldbody><body name='a'><joint name='h' type='hinge' ref='0.5'/><joint name='s' type='slide'/>\n"       \
  "    <geom size='.1'/><site name='s1'/></body><site name='s0' pos='0 0 1'/></worldbody>\n"                   \
  "  <tendon><fixed name='f1'><joint joint='h' coef='2'/></fixed><spatial name='p'><site site='s0'/>"         \
  "<site site='s1'/></spatial><fixed name='f2'><joint joint='s' coef='1'/><joint joint='h' coef='-1'/></fixed></tendon>\n" \
  "  <equality>\n"                                                                                            \
  "    " eq "\n"                                                                                               \
  "  </equality>\n"                                                                                           \
  "</mujoco>\n"

// tendon equalities (issue 15 item 2): spring ids, polycoef (default 0 1 0 0 0), no tendon2 = -1; the row at qpos0
// is 0 although the tendon's length there is not (h's ref 0.5 degrees), and moves with the lengths' changes
static void test_tendon(void) {
  physLog log;
  physModel* m = load_text(TEN_MODEL("<tendon tendon1='f2' tendon2='f1' polycoef='0 3 1 0 0'/><tendon tendon1='f1'/>"),
                           &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  if (!m) return;
  CHECK(m->neq == 2 && m->eq_type[0] == PHYS_EQ_TENDON && m->eq_obj1id[0] == 2 && m->eq_obj2id[0] == 0);
  CHECK(m->eq_obj1id[1] == 0 && m->eq_obj2id[1] == -1 && m->eq_data[PHYS_EQ_NDATA + 1] == 1);
  CHECK(m->eq_data[1] == 3 && m->eq_data[2] == 1);
  physData* d = phys_make_data(m);
  double r[2], J[4];
  CHECK(fabs(m->qpos0[0] - 0.5 * M_PI / 180) < 1e-17);
  d->qpos[0] = m->qpos0[0] + 0.1;   // h: f1 changes by 0.2, f2 by -0.1
  d->qpos[1] = 0.3;         // s: f2 by +0.3
  phys_kinematics(m, d);
  phys_com_pos(m, d);
  CHECK(phys_equality_eval(m, d, r, J) == 2);
  // r0 = (0.3 - 0.1) - (3 x + x^2), x = 0.2; J0 = dL2/dq - (3 + 2 x) dL1/dq = (-1, 1) - 3.4 (2, 0)
  CHECK_MSG(fabs(r[0] - (0.2 - 0.6 - 0.04)) < 1e-15, "r0 %.17g", r[0]);
  CHECK_MSG(fabs(J[0] - (-1 - 6.8)) < 1e-14 && J[1] == 1, "J0 %.17g %.17g", J[0], J[1]);
  CHECK_MSG(fabs(r[1] - 0.2) < 1e-15 && J[2] == 2 && J[3] == 0, "r1 %.17g J1 %g %g", r[1], J[2], J[3]);
  phys_free_data(d);
  phys_free_model(m);
  EXPECT_ERROR(TEN_MODEL("<tendon tendon2='f1'/>"), PHYS_ERR_MODEL, "model.xml:6: <tendon>",
               "attribute 'tendon1' is required");
  expect_compile_error(TEN_MODEL("<tendon tendon1='f1' tendon2='nope'/>"), PHYS_ERR_MODEL,
                       "model.xml:6: <tendon>: tendon 'nope' not found");
  expect_compile_error(TEN_MODEL("<tendon tendon1='p'/>"), PHYS_ERR_MODEL,
                       "model.xml:6: <tendon>: tendon 'p' is spatial: tendon equalities are supported between fixed "
                       "tendons only");
}

// refused: distance equalities, missing attributes and objects, ball joints, one body twice
static void test_errors(void) {
  EXPECT_ERROR(EQ_MODEL("<distance geom1='x' geom2='y'/>"), PHYS_ERR_MODEL, "model.xml:6: <distance>",
               "distance equality constraints are not supported (connect, weld, joint and tendon are)");
  EXPECT_ERROR(EQ_MODEL("<connect body1='b'/>"), PHYS_ERR_MODEL, "<connect>", "attribute 'anchor' is required");
  EXPECT_ERROR(EQ_MODEL("<weld body2='b'/>"), PHYS_ERR_MODEL, "<weld>", "attribute 'body1' is required");
  EXPECT_ERROR(EQ_MODEL("<joint joint2='h'/>"), PHYS_ERR_MODEL, "<joint>", "attribute 'joint1' is required");
  EXPECT_ERROR(EQ_MODEL("<weld body1='a' torquescale='-1'/>"), PHYS_ERR_VALUE, "torquescale must be >= 0");
  EXPECT_ERROR(EQ_MODEL("<connect body1='a' anchor='0 0'/>"), PHYS_ERR_SIZE, "anchor");
  EXPECT_ERROR(EQ_MODEL("<weld body1='a' active='maybe'/>"), PHYS_ERR_VALUE, "active");
  expect_compile_error(EQ_MODEL("<connect body1='nope' anchor='0 0 0'/>"), PHYS_ERR_MODEL,
                       "model.xml:6: <connect>: body 'nope' not found");
  expect_compile_error(EQ_MODEL("<weld body1='a' body2='a'/>"), PHYS_ERR_MODEL, "body1 and body2 are the same body");
  expect_compile_error(EQ_MODEL("<joint joint1='ball'/>"), PHYS_ERR_MODEL, "joint 'ball' must be a hinge or a slide");
  expect_compile_error(EQ_MODEL("<joint joint1='h' joint2='x'/>"), PHYS_ERR_MODEL, "joint 'x' not found");
  expect_compile_error(EQ_MODEL("<weld body1='a' solref='0 1'/>"), PHYS_ERR_VALUE, "solref[0] must be nonzero");
  expect_compile_error(EQ_MODEL("<joint name='k' joint1='h'/><weld name='k' body1='a'/>"), PHYS_ERR_MODEL,
                       "equality 'k': duplicate name");
}

// names (issue 15 item 2: parameters name equalities): phys_name2id/phys_id2name of kind "equality"
static void test_names(void) {
  physLog log;
  physModel* m = load_text(EQ_MODEL("<connect body1='b' anchor='1 2 3'/><joint name='gearing' joint1='h' joint2='s'/>"),
                           &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  if (!m) return;
  CHECK(phys_name2id(m, "equality", "gearing") == 1 && phys_name2id(m, "equality", "nope") == -1);
  CHECK(!strcmp(phys_id2name(m, "equality", 1), "gearing") && !strcmp(phys_id2name(m, "equality", 0), ""));
  phys_free_model(m);
}

int main(void) {
  mjcf_text_begin("test_mjcf_equality");
  test_values();
  test_tendon();
  test_errors();
  test_names();
  return mjcf_text_end();
}
