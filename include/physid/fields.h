// physid/fields.h - the model's and data's arrays and sizes by name (issue 18: what a language binding needs to
// see physModel and physData without knowing their C layout, which changes from version to version).
//
// Names are the fields of physModel and physData in physid.h (PHYS_MODEL_ARRAYS, PHYS_DATA_ARRAYS): "qpos",
// "qvel", "ctrl", "act", "body_mass", ... Each array is rows x cols, row-major, rows the size it is counted in
// (nq, nbody, ...) and cols its multiplier: physModel.body_pos is nbody x 3. The pointer stays valid until the
// model or data is freed (arrays never move). Also physData's "time" (1 x 1 double), "warning_count" (1 x PHYS_NWARNKIND int, the
// numerical warnings of each physWarning kind counted since phys_make_data / phys_reset_data) and "lastwarning"
// (1 x 256 char, its last text), and physModel's "timestep" (1 x 1) and "gravity" (1 x 3).
#ifndef PHYSID_FIELDS_H
#define PHYSID_FIELDS_H

#include "../physid.h"

#ifdef __cplusplus
extern "C" {
#endif

// element types of a field
typedef enum physFieldType_ {
  PHYS_FIELD_DOUBLE = 0,
  PHYS_FIELD_INT,
  PHYS_FIELD_CHAR,          // bytes (the model's names)
  PHYS_FIELD_CONTACT        // physContact records (physData's contact lists)
} physFieldType;

// the model's size `name` ("nq", "nv", "nu", "na", "nbody", ..., the int sizes at the top of physModel); -1 if
// there is no such size
int phys_model_size(const physModel* m, const char* name);
// physModel's array `name`: its address, and in *type, *rows, *cols (any may be NULL) its element type
// (physFieldType) and shape; NULL (outputs untouched) if there is no such array
void* phys_model_field(const physModel* m, const char* name, int* type, int* rows, int* cols);
// physData's array `name` likewise
void* phys_data_field(physData* d, const char* name, int* type, int* rows, int* cols);
// the i-th name of physModel's arrays (i = 0, 1, ...; NULL past the last) or physData's (data 1): to list them
const char* phys_field_name(int data, int i);

#ifdef __cplusplus
}
#endif
#endif  // PHYSID_FIELDS_H
