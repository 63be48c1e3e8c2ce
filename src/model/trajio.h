// trajio.h - trajectory CSV files: one row per time sample, header `t,q0..q{nq-1},v0..v{nv-1}`, optionally
// followed by recorded inputs: the controls `u0..u{nu-1}` (all of the model's actuators) and then the applied
// joint forces `tau0..tau{nv-1}` (each value holds from its sample to the next), then, for a model with
// actuator activations, optionally its activations `act0..act{na-1}` (MuJoCo's act, in actuator order among the
// actuators with dynamics: the state's third part; issue 15 item 2).
//
// Writing uses "%.17g", so a written file reads back bit for bit. Reading validates strictly: header names
// and column count against the model, every value a finite number, quaternions of free and ball joints of
// unit norm within PHYS_TRAJ_QUAT_TOL (then normalized). Errors name the file, the line and the column.
#ifndef PHYS_TRAJIO_H
#define PHYS_TRAJIO_H

#include <stdio.h>

#include "physid.h"

#define PHYS_TRAJ_QUAT_TOL 1e-6     // largest accepted | |quat| - 1 | in a file
#define PHYS_LINE_MAX (1 << 20)     // longest accepted line of a CSV file: 1 MiB (its terminator excluded)
#define PHYS_TRAJ_MAXROWS 10000000  // most data rows (samples) of one file, CSV or .npy

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
  int nu, ntau;             // input columns the file had: nu = the model's nu or 0, ntau = nv or 0
  double* ctrl;             // controls u (NULL without)                              (nrow x nu)
  double* qfrc;             // applied joint forces tau (NULL without)                (nrow x nv)
  int na;                   // activation columns act0..act{na-1} the file had: the model's na or 0
  double* act;              // activations (NULL without; issue 15 item 2)            (nrow x na)
} physTraj;

// open an input file for reading: only a regular file or a FIFO (a device such as /dev/zero, a folder, a
// socket is refused with a message naming what it is); PHYS_ERR_IO and *f NULL on failure
physStatus phys_input_open(FILE** f, const char* filename, physLog* log);

// a text file read line by line, every line bounded by PHYS_LINE_MAX
typedef struct physLineReader_ {
  FILE* f;                  // the stream (not owned)
  const char* filename;     // for messages
  char* buf;                // the current line, nul-terminated, without "\n" / "\r\n" (and a UTF-8 BOM on line 1)
  size_t cap;
  int lineno;               // 1-based number of the current line
  int max_rows;             // data rows a reader of this file accepts (PHYS_TRAJ_MAXROWS; a test may lower it)
  physStatus status;        // why the last phys_line_next returned -1
} physLineReader;

// a reader over an open stream (nothing read yet)
void phys_line_init(physLineReader* r, FILE* f, const char* filename);
// the next line into r->buf: 1, 0 at end of file, -1 with an error in log (a line longer than PHYS_LINE_MAX, a
// NUL byte (a binary or UTF-16 file), out of memory, a read error), each naming file:line
int phys_line_next(physLineReader* r, physLog* log);
// release the line buffer (the stream is the caller's)
void phys_line_free(physLineReader* r);
// cut the next comma-separated field at *cursor (nul-terminated, spaces and tabs trimmed); advance past the comma
char* phys_csv_field(char** cursor);

// read every row of a trajectory CSV checked against model m; on error traj is empty and log says why
physStatus phys_traj_read(physTraj* traj, const physModel* m, const char* filename, int flags,
                          physLog* log);
// the same from a reader whose current line is the file's first (the header): the caller read it to
// recognise the layout; the rows are read to the end of the stream (at most r->max_rows)
physStatus phys_traj_read_lines(physTraj* traj, const physModel* m, physLineReader* r, int flags, physLog* log);
void phys_traj_free(physTraj* traj);

// read a file holding exactly one state row (`t` optional; time 0 if absent) into time, qpos, qvel
physStatus phys_traj_read_state(double* time, double* qpos, double* qvel, const physModel* m,
                                const char* filename, physLog* log);

// the same, with the row's inputs: ctrl (nu) and qfrc (nv) get its u / tau columns, zero when the file has none
// (either may be NULL: not wanted)
// the same with the row's activations: act (na) gets its act columns, zero when the file has none (may be NULL)
physStatus phys_traj_read_state_act(double* time, double* qpos, double* qvel, double* act, double* ctrl,
                                    double* qfrc, const physModel* m, const char* filename, physLog* log);
physStatus phys_traj_read_state_inputs(double* time, double* qpos, double* qvel, double* ctrl, double* qfrc,
                                       const physModel* m, const char* filename, physLog* log);

// check that each free/ball quaternion in qpos has unit norm within PHYS_TRAJ_QUAT_TOL and normalize it;
// filename and line are used in the message only
physStatus phys_traj_check_quat(double* qpos, const physModel* m, const char* filename, int line,
                                physLog* log);

// write the header line `t,q0,...,v0,...` (PHYS_ERR_IO if the stream fails)
physStatus phys_traj_write_header(FILE* f, const physModel* m);
// write one row with "%.17g" (exact round trip)
physStatus phys_traj_write_row(FILE* f, const physModel* m, double time, const double* qpos,
                               const double* qvel);
// the same with the recorded inputs: header `...,u0,..,u{nu-1}` when with_ctrl, `...,tau0,..,tau{nv-1}` when
// with_qfrc; rows with ctrl (nu) and qfrc (nv), each NULL: not written
physStatus phys_traj_write_header_u(FILE* f, const physModel* m, int with_ctrl, int with_qfrc);
physStatus phys_traj_write_row_u(FILE* f, const physModel* m, double time, const double* qpos, const double* qvel,
                                 const double* ctrl, const double* qfrc);

// the same with the activations act0..act{na-1} (with_act; rows: act, na values, NULL: none) and the sensor columns
// last (with_sensors; rows: sensordata, nsensordata values, NULL: none), named by phys_sensor_column
physStatus phys_traj_write_header_s(FILE* f, const physModel* m, int with_ctrl, int with_qfrc, int with_act,
                                    int with_sensors);
physStatus phys_traj_write_row_s(FILE* f, const physModel* m, double time, const double* qpos, const double* qvel,
                                 const double* ctrl, const double* qfrc, const double* act, const double* sensordata);
// column name of value k of sensor i into buf: `sensor:NAME` for a one-value sensor, `sensor:NAME:k` otherwise
// (NAME: the sensor's index when it has no name)
const char* phys_sensor_column(const physModel* m, int i, int k, char* buf, size_t n);

#endif  // PHYS_TRAJIO_H
