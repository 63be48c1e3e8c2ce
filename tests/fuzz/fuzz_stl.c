// fuzz_stl.c - libFuzzer harness of the STL reader (binary and ASCII): the input is mesh.stl, see fuzz_mesh.h.
#include "fuzz_mesh.h"

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz_mesh_input("mesh.stl", data, size);
  return 0;
}
