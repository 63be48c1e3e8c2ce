// trajio.h - trajectory CSV files: one row per time sample, header `t,q0..q{nq-1},v0..v{nv-1}`.
//
// Writing uses "%.17g", so a written file reads back bit for bit. Reading validates strictly: header names
// and column count against the model, every value a finite number, quaternions of free and ball joints of
// unit norm within PHYS_TRAJ_QUAT_TOL (then normalized). Errors name the file, the line and the column.
#ifndef PHYS_TRAJIO_H
#define PHYS_TRAJIO_H

#include <stdio.h>

#include "physid.h"

#define PHYS_TRAJ_QUAT_TOL 1e-6     // largest accepted | |quat| - 1 | in a file

// read flags
enum {
  PHYS_TRAJ_TIME_OPTIONAL = 1 << 0  // the `t` column may be absent (time is then 0)
};

// a trajectory read from a file (owned arrays; free with phys_traj_free)
typedef struct physTraj_ {
  int nrow;                 // number of samples
  int nq, nv;               // sizes of the model it was read against
  int has_time;             // 1 if the file had a `t` column
  int* line;                // source line of each row                              (nrow x 1)
  double* time;             // time of each row (0 if the file has no `t` column)     (nrow x 1)
  double* qpos;             // positions                                            (nrow x nq)
  double* qvel;             // velocities                                           (nrow x nv)
} physTraj;

// read every row of a trajectory CSV checked against model m; on error traj is empty and log says why
physStatus phys_traj_read(physTraj* traj, const physModel* m, const char* filename, int flags,
                          physLog* log);
void phys_traj_free(physTraj* traj);

// read a file holding exactly one state row (`t` optional; time 0 if absent) into time, qpos, qvel
physStatus phys_traj_read_state(double* time, double* qpos, double* qvel, const physModel* m,
                                const char* filename, physLog* log);

// check that each free/ball quaternion in qpos has unit norm within PHYS_TRAJ_QUAT_TOL and normalize it;
// filename and line are used in the message only
physStatus phys_traj_check_quat(double* qpos, const physModel* m, const char* filename, int line,
                                physLog* log);

// write the header line `t,q0,...,v0,...` (PHYS_ERR_IO if the stream fails)
physStatus phys_traj_write_header(FILE* f, const physModel* m);
// write one row with "%.17g" (exact round trip)
physStatus phys_traj_write_row(FILE* f, const physModel* m, double time, const double* qpos,
                               const double* qvel);

#endif  // PHYS_TRAJIO_H
