// test_data.c - data allocation, reset, keyframes and the scratch arena.
#include <string.h>

#include "spec.h"
#include "test.h"

int main(void) {
  physSpec* s = phys_spec_new();
  int b = phys_spec_add_body(s, 0);
  phys_spec_add_joint(s, b, PHYS_JNT_BALL);
  int j = phys_spec_add_joint(s, b, PHYS_JNT_HINGE);
  s->joint[j].ref = 0.25;
  int g = phys_spec_add_geom(s, b, PHYS_GEOM_SPHERE);
  s->geom[g].size[0] = 0.1;
  int k = phys_spec_add_key(s);
  s->key[k].time = 2;
  s->key[k].qpos = calloc(5, sizeof(double));
  s->key[k].nqpos = 5;
  s->key[k].qpos[0] = 1;
  s->key[k].qpos[4] = -1;
  physLog log = {0};
  physModel* m = phys_compile(s, &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  phys_spec_free(s);
  if (!m) return test_done();
  physData* d = phys_make_data(m);
  CHECK(d != NULL);
  // reset puts qpos0 (identity quaternion, hinge ref) and zero velocity
  CHECK(d->qpos[0] == 1 && d->qpos[4] == 0.25 && d->qvel[3] == 0);
  CHECK(phys_reset_keyframe(m, d, 0) == PHYS_OK);
  CHECK(d->time == 2 && d->qpos[4] == -1);
  CHECK(phys_reset_keyframe(m, d, 1) == PHYS_ERR_ARG);
  // arena: aligned blocks, mark/free restores, distinct blocks do not overlap
  size_t mark = phys_stack_mark(d);
  double* a = phys_stack_alloc(d, 3);
  double* c = phys_stack_alloc(d, 5);
  CHECK(((size_t)(c - d->stack)) % 8 == 0 && c >= a + 3);
  phys_stack_free(d, mark);
  CHECK(phys_stack_mark(d) == mark);
  CHECK(phys_stack_alloc(d, 1) == a);
  phys_stack_free(d, mark);
  phys_data_warning(d, "bad %d", 1);
  CHECK(d->nwarning == 1 && strcmp(d->lastwarning, "bad 1") == 0);
  phys_reset_data(m, d);
  CHECK(d->nwarning == 0);
  phys_free_data(d);
  physModel* m2 = phys_copy_model(m);
  CHECK(m2 && m2->nbuffer == m->nbuffer && memcmp(m2->buffer, m->buffer, m->nbuffer) == 0 && m2->qpos0 != m->qpos0);
  phys_free_model(m2);
  phys_free_model(m);
  return test_done();
}
