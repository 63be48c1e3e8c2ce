// model.c - physModel allocation (one buffer), copy, free, name lookup.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mlp.h"
#include "model.h"

// bytes of the model's array buffer, each array aligned to 8 bytes
static size_t model_buffer_size(const physModel* m) {
  size_t size = 0;
#define PHYS_X_SIZE(type, name, n, mult) size += ((sizeof(type) * (size_t)(m->n) * (size_t)(mult) + 7) / 8) * 8;
  const int nq = m->nq, nv = m->nv, nu = m->nu, na = m->na;  // second sizes of key arrays
  (void)nq, (void)nv, (void)nu, (void)na;
  PHYS_MODEL_ARRAYS(PHYS_X_SIZE)
#undef PHYS_X_SIZE
  return size;
}

// point every array into m->buffer
static void model_set_pointers(physModel* m) {
  char* p = (char*)m->buffer;
#define PHYS_X_PTR(type, name, n, mult)                                          \
  m->name = (type*)p;                                                            \
  p += ((sizeof(type) * (size_t)(m->n) * (size_t)(mult) + 7) / 8) * 8;
  const int nq = m->nq, nv = m->nv, nu = m->nu, na = m->na;
  (void)nq, (void)nv, (void)nu, (void)na;
  PHYS_MODEL_ARRAYS(PHYS_X_PTR)
#undef PHYS_X_PTR
}

// allocate a model with the sizes in `sizes` (its arrays are ignored); all arrays zeroed
physModel* phys_model_alloc(const physModel* sizes) {
  physModel* m = calloc(1, sizeof(physModel));
  if (!m) return NULL;
  *m = *sizes;
  m->residual = NULL;
  m->nbuffer = model_buffer_size(m);
  m->buffer = calloc(1, m->nbuffer ? m->nbuffer : 8);
  if (!m->buffer) {
    free(m);
    return NULL;
  }
  model_set_pointers(m);
  return m;
}

void phys_free_model(physModel* m) {
  if (!m) return;
  phys_mlp_free(m->residual);
  free(m->buffer);
  free(m);
}

// deep copy: same sizes, same buffer contents
physModel* phys_copy_model(const physModel* src) {
  if (!src) return NULL;
  physModel* m = phys_model_alloc(src);
  if (!m) return NULL;
  memcpy(m->buffer, src->buffer, src->nbuffer);
  if (src->residual && !(m->residual = phys_mlp_copy(src->residual))) {
    phys_free_model(m);
    return NULL;
  }
  return m;
}

// name-address array and count of an object kind
static const int* kind_names(const physModel* m, const char* kind, int* n) {
  static const struct {
    const char* kind;
    size_t adr, count;
  } table[] = {
      {"body", offsetof(physModel, body_name), offsetof(physModel, nbody)},
      {"joint", offsetof(physModel, jnt_name), offsetof(physModel, njnt)},
      {"geom", offsetof(physModel, geom_name), offsetof(physModel, ngeom)},
      {"site", offsetof(physModel, site_name), offsetof(physModel, nsite)},
      {"spring", offsetof(physModel, spring_name), offsetof(physModel, nspring)},
      {"actuator", offsetof(physModel, actuator_name), offsetof(physModel, nu)},
      {"mesh", offsetof(physModel, mesh_name), offsetof(physModel, nmesh)},
      {"key", offsetof(physModel, key_name), offsetof(physModel, nkey)},
      {"sensor", offsetof(physModel, sensor_name), offsetof(physModel, nsensor)},
      {"equality", offsetof(physModel, eq_name), offsetof(physModel, neq)},
  };
  for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
    if (strcmp(kind, table[i].kind) == 0) {
      *n = *(const int*)((const char*)m + table[i].count);
      return *(int* const*)((const char*)m + table[i].adr);
    }
  }
  *n = 0;
  return NULL;
}

int phys_name2id(const physModel* m, const char* kind, const char* name) {
  int n;
  const int* adr = kind_names(m, kind, &n);
  if (!adr || !name) return -1;
  for (int i = 0; i < n; i++)
    if (adr[i] >= 0 && strcmp(m->names + adr[i], name) == 0) return i;
  return -1;
}

const char* phys_id2name(const physModel* m, const char* kind, int id) {
  int n;
  const int* adr = kind_names(m, kind, &n);
  if (!adr || id < 0 || id >= n || adr[id] < 0) return "";
  return m->names + adr[id];
}

//---------------------------------------------------------------------------------------------------------
// sensor types: MJCF names and sizes

static const struct {
  const char* name;
  int dim;
} SENSOR_TYPES[PHYS_NSENSTYPE] = {
    [PHYS_SENS_JOINTPOS] = {"jointpos", 1},         [PHYS_SENS_JOINTVEL] = {"jointvel", 1},
    [PHYS_SENS_ACTUATORFRC] = {"actuatorfrc", 1},   [PHYS_SENS_FRAMEPOS] = {"framepos", 3},
    [PHYS_SENS_FRAMEQUAT] = {"framequat", 4},       [PHYS_SENS_FRAMELINVEL] = {"framelinvel", 3},
    [PHYS_SENS_FRAMEANGVEL] = {"frameangvel", 3},   [PHYS_SENS_ACCELEROMETER] = {"accelerometer", 3},
    [PHYS_SENS_GYRO] = {"gyro", 3},                 [PHYS_SENS_VELOCIMETER] = {"velocimeter", 3},
    [PHYS_SENS_FORCE] = {"force", 3},               [PHYS_SENS_TORQUE] = {"torque", 3},
    [PHYS_SENS_TOUCH] = {"touch", 1},               [PHYS_SENS_SUBTREECOM] = {"subtreecom", 3},
};

const char* phys_sensor_name(int type) {
  return type >= 0 && type < PHYS_NSENSTYPE ? SENSOR_TYPES[type].name : "unknown";
}

int phys_sensor_from_name(const char* name) {
  for (int i = 0; name && i < PHYS_NSENSTYPE; i++)
    if (!strcmp(SENSOR_TYPES[i].name, name)) return i;
  return -1;
}

int phys_sensor_dim(int type) { return type >= 0 && type < PHYS_NSENSTYPE ? SENSOR_TYPES[type].dim : 0; }
