// test_mjcf_equality.c - the MJCF <equality> reader (src/model/mjcf_equality.c) and its compile step
// (src/model/compile_equality.c): attributes and defaults classes into eq_* (MuJoCo 2.2.2's values are
// checked in tests/dyn/test_oracle_equality.c), and every refusal with its file:line and element.
#include <math.h>
#include <stdio.h>
#include <string.h>

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

// refused: tendon and distance equalities, missing attributes and objects, ball joints, one body twice
static void test_errors(void) {
  EXPECT_ERROR(EQ_MODEL("<tendon tendon1='t'/>"), PHYS_ERR_MODEL, "model.xml:6: <tendon>",
               "tendon equality constraints are not supported");
  EXPECT_ERROR(EQ_MODEL("<distance geom1='x' geom2='y'/>"), PHYS_ERR_MODEL, "model.xml:6: <distance>", "not supported");
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
}

int main(void) {
  mjcf_text_begin("test_mjcf_equality");
  test_values();
  test_errors();
  return mjcf_text_end();
}
