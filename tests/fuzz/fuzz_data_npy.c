// fuzz_data_npy.c - libFuzzer harness of identify's .npy data reader: the input is data.npy, see
// fuzz_dataset.h (inputs without the magic fall to the CSV reader, as they would in identify).
#include "fuzz_dataset.h"

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz_dataset_input("data.npy", data, size);
  return 0;
}
