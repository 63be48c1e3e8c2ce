// fuzz_urdf.c - libFuzzer harness of the URDF loader: the input is model.urdf (phys_load), see fuzz_model.h.
#include "fuzz_model.h"

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz_model_input("model.urdf", data, size);
  return 0;
}
