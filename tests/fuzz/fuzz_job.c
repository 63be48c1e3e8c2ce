// fuzz_job.c - libFuzzer harness of identify's JSON job file: the input is job.json, read by id_read_job
// (tools/cmd_identify.c) exactly as `physid identify --job job.json` reads its settings; nothing is loaded or
// written (the fuzzer's model, data and output names stay strings).
#include "fuzz.h"
#include "identify.h"

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  char path[4400];
  fuzz_write(path, sizeof path, "job.json", data, size);
  id_read_job(path);
  return 0;
}
