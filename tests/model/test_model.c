// test_model.c - one-buffer layout: arrays do not overlap and have the sizes the field table states.
#include <string.h>

#include "model.h"
#include "test.h"

int main(void) {
  physModel sz;
  memset(&sz, 0, sizeof(sz));
  sz.nq = 7, sz.nv = 6, sz.nbody = 2, sz.njnt = 1, sz.ngeom = 3, sz.nu = 2, sz.na = 1, sz.nkey = 2, sz.nnames = 10;
  physModel* m = phys_model_alloc(&sz);
  CHECK(m != NULL);
  // fill each array in table order with its index; nothing written later may overwrite earlier arrays
  int idx = 0;
#define FILL(type, name, n, mult)                                                 \
  for (size_t i = 0; i < (size_t)m->n * (size_t)(mult); i++) m->name[i] = (type)idx; \
  idx++;
  const int nq = m->nq, nv = m->nv, nu = m->nu, na = m->na;
  PHYS_MODEL_ARRAYS(FILL)
  idx = 0;
  int ok = 1;
#define VERIFY(type, name, n, mult)                                               \
  for (size_t i = 0; i < (size_t)m->n * (size_t)(mult); i++) ok &= m->name[i] == (type)idx; \
  idx++;
  PHYS_MODEL_ARRAYS(VERIFY)
  (void)nq, (void)nv, (void)nu, (void)na;
  CHECK(ok);
  CHECK((char*)m->names + m->nnames <= (char*)m->buffer + m->nbuffer);
  phys_free_model(m);
  return test_done();
}
