// test_fields.c - the arrays and sizes by name (include/physid/fields.h): every listed name resolves to the
// struct's own pointer with its shape, the vectors (time, warning_count, lastwarning, timestep, gravity), and
// unknown names.
#include <string.h>

#include "model.h"
#include "physid/fields.h"
#include "test.h"

// the number of arrays in each field table
#define ONE(type, name, n, mult) +1
enum { NMODEL = 0 PHYS_MODEL_ARRAYS(ONE), NDATA = 0 PHYS_DATA_ARRAYS(ONE) };
#undef ONE

// every model and data array by its listed name: the struct's pointer, and shapes of a few known ones
static void test_arrays(const physModel* m, physData* d) {
  int type = -1, rows = -1, cols = -1, n = 0;
  for (const char* name; (name = phys_field_name(0, n)); n++)
    CHECK_MSG(phys_model_field(m, name, NULL, NULL, NULL) != NULL, "model field %s", name);
  CHECK(n == NMODEL);
  CHECK(phys_model_field(m, "body_pos", &type, &rows, &cols) == m->body_pos);
  CHECK(type == PHYS_FIELD_DOUBLE && rows == m->nbody && cols == 3);
  CHECK(phys_model_field(m, "jnt_type", &type, &rows, &cols) == m->jnt_type);
  CHECK(type == PHYS_FIELD_INT && rows == m->njnt && cols == 1);
  CHECK(phys_model_field(m, "names", &type, &rows, &cols) == m->names);
  CHECK(type == PHYS_FIELD_CHAR && rows == m->nnames && cols == 1);
  CHECK(phys_model_field(m, "key_qpos", &type, &rows, &cols) == m->key_qpos);
  CHECK(rows == m->nkey && cols == m->nq);
  int k = 0;
  for (const char* name; (name = phys_field_name(1, k)); k++)
    CHECK_MSG(phys_data_field(d, name, NULL, NULL, NULL) != NULL, "data field %s", name);
  CHECK(k == NDATA);
  CHECK(phys_data_field(d, "qpos", &type, &rows, &cols) == d->qpos);
  CHECK(type == PHYS_FIELD_DOUBLE && rows == m->nq && cols == 1);
  CHECK(phys_data_field(d, "qM", &type, &rows, &cols) == d->qM);
  CHECK(rows == m->nv && cols == m->nv);
  CHECK(phys_data_field(d, "contact", &type, &rows, &cols) == d->contact);
  CHECK(type == PHYS_FIELD_CONTACT && rows == m->nconmax && cols == 1);
  CHECK(phys_field_name(0, -1) == NULL && phys_field_name(0, n) == NULL && phys_field_name(1, k) == NULL);
}

// the vectors outside the field tables, the sizes, and names that do not exist
static void test_vectors(const physModel* m, physData* d) {
  int type = -1, rows = -1, cols = -1;
  CHECK(phys_data_field(d, "time", &type, &rows, &cols) == &d->time);
  CHECK(type == PHYS_FIELD_DOUBLE && rows == 1 && cols == 1);
  CHECK(phys_data_field(d, "warning_count", &type, &rows, &cols) == d->warning_count);
  CHECK(type == PHYS_FIELD_INT && rows == 1 && cols == PHYS_NWARNKIND);
  CHECK(phys_data_field(d, "lastwarning", &type, &rows, &cols) == d->lastwarning);
  CHECK(type == PHYS_FIELD_CHAR && cols == (int)sizeof d->lastwarning);
  CHECK(phys_model_field(m, "timestep", &type, &rows, &cols) == &m->opt.timestep);
  CHECK(phys_model_field(m, "gravity", &type, &rows, &cols) == m->opt.gravity && cols == 3);
  CHECK(phys_model_size(m, "nq") == m->nq && phys_model_size(m, "nv") == m->nv);
  CHECK(phys_model_size(m, "nconmax") == m->nconmax && phys_model_size(m, "nnames") == m->nnames);
  CHECK(phys_model_size(m, "nosuch") == -1 && phys_model_size(m, "qpos") == -1);
  type = 7, rows = 7, cols = 7;
  CHECK(phys_model_field(m, "nosuch", &type, &rows, &cols) == NULL && type == 7 && rows == 7 && cols == 7);
  CHECK(phys_data_field(d, "nosuch", &type, &rows, &cols) == NULL && type == 7);
  CHECK(phys_data_field(d, "", NULL, NULL, NULL) == NULL && phys_model_field(m, "qpos", NULL, NULL, NULL) == NULL);
}

int main(void) {
  physLog log = {0};
  physModel* m = phys_load("tests/data/double_pendulum.xml", NULL, &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  if (!m) return test_done();
  physData* d = phys_make_data(m);
  test_arrays(m, d);
  test_vectors(m, d);
  phys_free_data(d);
  phys_free_model(m);
  return test_done();
}
