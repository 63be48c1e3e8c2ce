// fields.c - physModel's and physData's arrays and sizes by name (include/physid/fields.h), from the field
// tables of physid.h: the bindings' view of the structs.
#include <string.h>

#include "physid/fields.h"

// the physFieldType of a C element type
#define FIELD_TYPE(type)                                                                              \
  _Generic((type*)0, double*: PHYS_FIELD_DOUBLE, int*: PHYS_FIELD_INT, char*: PHYS_FIELD_CHAR,       \
           default: PHYS_FIELD_CONTACT)

// the outputs of a found field
static void* field_out(void* p, int type, int rows, int cols, int* t, int* r, int* c) {
  if (t) *t = type;
  if (r) *r = rows;
  if (c) *c = cols;
  return p;
}

int phys_model_size(const physModel* m, const char* name) {
#define SIZE(n) \
  if (!strcmp(name, #n)) return m->n;
  SIZE(nq) SIZE(nv) SIZE(nbody) SIZE(njnt) SIZE(ngeom) SIZE(nsite) SIZE(nspring) SIZE(nspringsite) SIZE(nu)
  SIZE(na) SIZE(nmesh) SIZE(nmeshvert) SIZE(nmeshface) SIZE(nhullvert) SIZE(nhullface) SIZE(nhullfacevert)
  SIZE(nkey) SIZE(nsensor) SIZE(nsensordata) SIZE(npair) SIZE(nexclude) SIZE(neq) SIZE(nconmax)
  SIZE(nfrictionloss) SIZE(nnames)
#undef SIZE
  return -1;
}

void* phys_model_field(const physModel* m, const char* name, int* type, int* rows, int* cols) {
  if (!strcmp(name, "timestep")) return field_out((void*)&m->opt.timestep, PHYS_FIELD_DOUBLE, 1, 1, type, rows, cols);
  if (!strcmp(name, "gravity")) return field_out((void*)m->opt.gravity, PHYS_FIELD_DOUBLE, 1, 3, type, rows, cols);
  const int nq = m->nq, nv = m->nv, nu = m->nu, na = m->na;  // second sizes of the key arrays
  (void)nq, (void)nv, (void)nu, (void)na;
#define FIELD(type_, name_, n, mult) \
  if (!strcmp(name, #name_)) return field_out((void*)m->name_, FIELD_TYPE(type_), m->n, mult, type, rows, cols);
  PHYS_MODEL_ARRAYS(FIELD)
#undef FIELD
  return NULL;
}

void* phys_data_field(physData* d, const char* name, int* type, int* rows, int* cols) {
  if (!strcmp(name, "time")) return field_out(&d->time, PHYS_FIELD_DOUBLE, 1, 1, type, rows, cols);
  if (!strcmp(name, "warning_count"))
    return field_out(d->warning_count, PHYS_FIELD_INT, 1, PHYS_NWARNKIND, type, rows, cols);
  if (!strcmp(name, "lastwarning"))
    return field_out(d->lastwarning, PHYS_FIELD_CHAR, 1, (int)sizeof d->lastwarning, type, rows, cols);
  const int nv = d->nv;  // second size of qM
  (void)nv;
#define FIELD(type_, name_, n, mult) \
  if (!strcmp(name, #name_)) return field_out((void*)d->name_, FIELD_TYPE(type_), d->n, mult, type, rows, cols);
  PHYS_DATA_ARRAYS(FIELD)
#undef FIELD
  return NULL;
}

const char* phys_field_name(int data, int i) {
  static const char* const model_names[] = {
#define NAME(type, name, n, mult) #name,
      PHYS_MODEL_ARRAYS(NAME)
  };
  static const char* const data_names[] = {PHYS_DATA_ARRAYS(NAME)};
#undef NAME
  int n = data ? (int)(sizeof data_names / sizeof *data_names) : (int)(sizeof model_names / sizeof *model_names);
  if (i < 0 || i >= n) return NULL;
  return data ? data_names[i] : model_names[i];
}
