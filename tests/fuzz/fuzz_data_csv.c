// fuzz_data_csv.c - libFuzzer harness of identify's CSV data reader (named columns, or simulate's t,q..,v..):
// the input is data.csv, see fuzz_dataset.h.
#include "fuzz_dataset.h"

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz_dataset_input("data.csv", data, size);
  return 0;
}
