// test_mjcf_sensor.c - MJCF <sensor> (src/model/mjcf_sensor.c) and the compiled sensor table (compile.c): each
// supported type's object, size and address; refused types, reference frames, missing or wrong objects with
// file:line: <element>.
#include <string.h>

#include "mjcf_text.h"

#define SENSOR_MODEL(sensors)                                                                                  \
  "<mujoco>\n<worldbody>\n<body name='b'><joint name='h'/><joint name='ball' type='ball'/><geom name='g' "      \
  "size='.1'/><site name='s' type='box' size='.1 .2 .3'/><site name='c' type='capsule' size='.1 .2'/></body>\n" \
  "</worldbody>\n<actuator><motor name='a' joint='h'/></actuator>\n<sensor>\n" sensors "\n</sensor>\n</mujoco>\n"

// the table: types, objects, dims, addresses, names, noise, cutoff; site types and sizes
static void test_table(void) {
  physLog log = {0};
  physModel* m = load_text(SENSOR_MODEL("<jointpos name='q' joint='h' noise='0.5'/><framequat objtype='geom' objname='g'/>"
                                        "<touch site='s' cutoff='3'/><actuatorfrc actuator='a'/><subtreecom body='world'/>"
                                        "<framelinvel objtype='xbody' objname='b'/>"), &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  if (!m) return;
  CHECK(m->nsensor == 6 && m->nsensordata == 1 + 4 + 1 + 1 + 3 + 3);
  const int type[] = {PHYS_SENS_JOINTPOS, PHYS_SENS_FRAMEQUAT, PHYS_SENS_TOUCH, PHYS_SENS_ACTUATORFRC,
                      PHYS_SENS_SUBTREECOM, PHYS_SENS_FRAMELINVEL};
  const int obj[] = {PHYS_OBJ_JOINT, PHYS_OBJ_GEOM, PHYS_OBJ_SITE, PHYS_OBJ_ACTUATOR, PHYS_OBJ_BODY, PHYS_OBJ_XBODY};
  const int id[] = {0, 0, 0, 0, 0, 1}, adr[] = {0, 1, 5, 6, 7, 10};
  for (int i = 0; i < 6; i++)
    CHECK_MSG(m->sensor_type[i] == type[i] && m->sensor_objtype[i] == obj[i] && m->sensor_objid[i] == id[i] &&
              m->sensor_adr[i] == adr[i], "sensor %d", i);
  CHECK(!strcmp(phys_id2name(m, "sensor", 0), "q") && phys_name2id(m, "sensor", "q") == 0);
  CHECK(m->sensor_noise[0] == 0.5 && m->sensor_cutoff[2] == 3 && m->sensor_cutoff[0] == 0);
  CHECK(m->site_type[0] == PHYS_SITE_BOX && m->site_size[1] == 0.2 && m->site_size[2] == 0.3);
  CHECK(m->site_type[1] == PHYS_SITE_CAPSULE && m->site_size[3] == 0.1 && m->site_size[5] == 0.005);
  phys_free_model(m);
}

// refused: other sensor types, reference frames, cameras, missing attributes and objects, wrong joints and zones
static void test_errors(void) {
  EXPECT_ERROR(SENSOR_MODEL("<magnetometer site='s'/>"), PHYS_ERR_MODEL, "model.xml:7: <magnetometer>",
               "<magnetometer> sensors are not supported");
  EXPECT_ERROR(SENSOR_MODEL("<jointpos joint='h'/>\n<tendonpos name='t' tendon='x'/>"), PHYS_ERR_MODEL,
               "model.xml:8: <tendonpos name='t'>", "not supported");
  EXPECT_ERROR(SENSOR_MODEL("<thermometer/>"), PHYS_ERR_MODEL, "unknown sensor element <thermometer>");
  EXPECT_ERROR(SENSOR_MODEL("<framepos objtype='site' objname='s' reftype='body' refname='b'/>"), PHYS_ERR_MODEL,
               "<framepos>", "reference frame");
  EXPECT_ERROR(SENSOR_MODEL("<framepos objtype='camera' objname='s'/>"), PHYS_ERR_MODEL, "on cameras");
  EXPECT_ERROR(SENSOR_MODEL("<framepos objname='s'/>"), PHYS_ERR_MODEL, "'objtype' is required");
  EXPECT_ERROR(SENSOR_MODEL("<framepos objtype='joint' objname='h'/>"), PHYS_ERR_VALUE, "objtype");
  EXPECT_ERROR(SENSOR_MODEL("<gyro/>"), PHYS_ERR_MODEL, "<gyro>", "attribute 'site' is required");
  expect_compile_error(SENSOR_MODEL("<gyro name='imu' site='nope'/>"), PHYS_ERR_MODEL,
                       "model.xml:7: <gyro name='imu'>: site 'nope' not found");
  expect_compile_error(SENSOR_MODEL("<jointvel joint='ball'/>"), PHYS_ERR_MODEL, "joint 'ball' is not a hinge or slide");
  expect_compile_error(SENSOR_MODEL("<touch site='c'/>"), PHYS_ERR_MODEL, "must be a sphere, ellipsoid or box site");
  EXPECT_ERROR(SENSOR_MODEL("<jointpos joint='h' noise='-1'/>"), PHYS_ERR_VALUE, "noise");
  expect_compile_error(SENSOR_MODEL("<jointpos name='x' joint='h'/><jointvel name='x' joint='h'/>"), PHYS_ERR_MODEL,
                       "duplicate name");
}

int main(void) {
  mjcf_text_begin("test_mjcf_sensor");
  test_table();
  test_errors();
  return mjcf_text_end();
}
