// fuzz_traj.c - libFuzzer harness of the trajectory CSV reader (src/model/trajio.c) against
// tests/data/mixed.xml (free, ball, slide and hinge joints: quaternion checks): the input is state.csv, read
// as `physid simulate --init` reads it (phys_traj_read_state) and as a whole trajectory (phys_traj_read).
#include "fuzz.h"
#include "trajio.h"

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static physModel* m = NULL;
  static double *qpos, *qvel;
  if (!m) {
    m = fuzz_source_model("tests/data/mixed.xml", NULL);
    qpos = calloc((size_t)m->nq, sizeof(double));
    qvel = calloc((size_t)m->nv, sizeof(double));
  }
  char path[4400];
  fuzz_write(path, sizeof path, "state.csv", data, size);
  physLog log;
  memset(&log, 0, sizeof log);
  double time;
  fuzz_verbose("phys_traj_read_state", phys_traj_read_state(&time, qpos, qvel, m, path, &log), log.error);
  physTraj traj;
  memset(&log, 0, sizeof log);
  physStatus st = phys_traj_read(&traj, m, path, PHYS_TRAJ_TIME_OPTIONAL, &log);
  fuzz_verbose("phys_traj_read", st, log.error);
  if (st == PHYS_OK) phys_traj_free(&traj);
  return 0;
}
