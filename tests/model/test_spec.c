// test_spec.c - new elements start at MJCF's defaults; lists grow past their first capacity.
#include <string.h>

#include "spec.h"
#include "test.h"

int main(void) {
  physSpec* s = phys_spec_new();
  CHECK(s->nbody == 1 && strcmp(s->body[0].name, "world") == 0 && s->body[0].parent == -1);
  CHECK(s->opt.timestep == 0.002 && s->opt.gravity[2] == -9.81);
  int g = phys_spec_add_geom(s, 0, PHYS_GEOM_PLANE);
  CHECK(s->geom[g].friction[0] == 1 && s->geom[g].friction[1] == 0.005 && s->geom[g].friction[2] == 0.0001);
  CHECK(s->geom[g].density == 1000 && s->geom[g].mass < 0 && s->geom[g].condim == 3 && s->geom[g].mesh == -1);
  int j = phys_spec_add_joint(s, 0, PHYS_JNT_HINGE);
  CHECK(s->joint[j].axis[2] == 1 && s->joint[j].axis[0] == 0);
  int a = phys_spec_add_actuator(s);
  CHECK(s->actuator[a].gear[0] == 1 && s->actuator[a].gear[1] == 0);
  int sp = phys_spec_add_spring(s);
  CHECK(s->spring[sp].restlength < 0);
  for (int i = 0; i < 100; i++) phys_spec_add_body(s, i);
  CHECK(s->nbody == 101 && s->body[100].parent == 99 && s->body[100].quat[0] == 1);
  phys_spec_free(s);
  return test_done();
}
