// fuzz_dataset.h - the identify data harnesses (fuzz_data_csv.c, fuzz_data_npy.c): the input is one data
// file read by phys_dataset_load (src/sysid/dataset.c) against tests/data/elbow/elbow.urdf with a floating
// root (a free joint and the hinge `theta`: every column naming rule of dataset.c applies).
#ifndef PHYS_FUZZ_DATASET_H
#define PHYS_FUZZ_DATASET_H

#include "fuzz.h"
#include "sysid.h"

// load the bytes as data file `name` (the reader sniffs the .npy magic whatever the name)
static void fuzz_dataset_input(const char* name, const uint8_t* data, size_t size) {
  static physModel* m = NULL;
  if (!m) {
    physLoadOptions lopt = {.urdf_floating = 1};
    m = fuzz_source_model("tests/data/elbow/elbow.urdf", &lopt);
  }
  char path[4400];
  fuzz_write(path, sizeof path, name, data, size);
  const char* paths[1] = {path};
  physDataOptions opt;
  memset(&opt, 0, sizeof opt);
  physLog log;
  memset(&log, 0, sizeof log);
  physDataset ds;
  fuzz_verbose("phys_dataset_load", phys_dataset_load(&ds, m, paths, 1, &opt, &log), log.error);
  phys_dataset_free(&ds);
}

#endif  // PHYS_FUZZ_DATASET_H
