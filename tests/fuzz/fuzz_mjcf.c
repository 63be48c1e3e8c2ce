// fuzz_mjcf.c - libFuzzer harness of the MJCF loader: the input is model.xml (phys_load), see fuzz_model.h.
#include "fuzz_model.h"

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz_model_input("model.xml", data, size);
  return 0;
}
