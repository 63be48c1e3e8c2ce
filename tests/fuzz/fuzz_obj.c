// fuzz_obj.c - libFuzzer harness of the Wavefront OBJ reader: the input is mesh.obj, see fuzz_mesh.h.
#include "fuzz_mesh.h"

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz_mesh_input("mesh.obj", data, size);
  return 0;
}
