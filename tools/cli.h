// cli.h - shared pieces of the physid command-line tool: exit codes, model loading, the command table.
#ifndef PHYS_CLI_H
#define PHYS_CLI_H

#include <stdio.h>
#include <sys/types.h>

#include "args.h"
#include "physid.h"

enum {
  CLI_EXIT_OK = 0,
  CLI_EXIT_INPUT = 1,       // bad input file, numerical failure, I/O error
  CLI_EXIT_USAGE = 2        // bad command line
};

// parse a subcommand's arguments; returns -1 to go on, else the exit code (help printed: 0, usage: 2)
int cli_parse(const char** pos, const argCommand* cmd, int argc, char** argv);
// the model-loading options every command takes besides --floating (one command runs per process):
// --actuate (URDF motors) and --add FILE (repeatable: files composed with MODEL into one world)
typedef struct cliModelArgs_ {
  int actuate;
  argList add;
  const char* residual;     // --residual FILE: a residual acceleration network (src/model/mlp_io.h)
  argList vertices;         // geoms loaded with a learned shape (a command's vertices:GEOM parameters; not an option)
} cliModelArgs;
extern cliModelArgs cli_model;
#define CLI_MODEL_OPTIONS                                                                                    \
  {"--actuate", ARG_FLAG, &cli_model.actuate, "",                                                           \
   "URDF: a motor on every revolute, continuous and prismatic joint (ctrlrange from <limit effort>)", 0, 0, 0}, \
  {"--add", ARG_LIST, &cli_model.add, "FILE", "compose another MJCF or URDF file into the world of MODEL", 0, 0, 0}, \
  {"--residual", ARG_STRING, &cli_model.residual, "FILE", "add the residual acceleration network of FILE (JSON, " \
   "docs/identification.md) to the model's dynamics", 0, 0, 0}
// load a model (URDF root floating if asked; --actuate and --add from cli_model); prints loader warnings and,
// on failure, the error
physModel* cli_load_model(const char* filename, int floating);
// 1 if m's residual network (if any) fits m as it now is (sizes, contact model not penalty); else 0 and the
// message (commands that change m's options after loading check again)
int cli_residual_fits(const physModel* m);
// the step options that simulate and the gradient commands take: a timestep dt (if > 0), contacts off (nocontact),
// the contact model (if >= 0, physContactModel order); then the residual network checked against m as it now
// is. 1, or 0 with the message (the caller frees m)
int cli_step_options(physModel* m, double dt, int nocontact, int contact);
// --integrator (issue 16 item 4: implicit; issue 17 item 1: pbd) and the pbd integrator's options: the commands
// that step take them
typedef struct cliIntegratorArgs_ {
  int integrator;           // -1: the model's; else the physIntegrator (the choice's index: 0 euler, 1 implicit, 2 pbd)
  int substeps, iterations; // 0: the model's (pbd_substeps, pbd_iterations)
  int jacobi;               // --pbd-jacobi
  double compliance;        // -1: the model's pbd_compliance
} cliIntegratorArgs;
extern cliIntegratorArgs cli_integrator;
#define CLI_INTEGRATOR_OPTIONS                                                                               \
  {"--integrator", ARG_CHOICE, &cli_integrator.integrator, "euler|implicit|pbd",                            \
   "time integrator: semi-implicit Euler (default), implicit (backward Euler linearized on the joint and "   \
   "tendon springs and dampers: stiff cables) or position-based dynamics in maximal coordinates", 0, 0, 0},  \
  {"--pbd-substeps", ARG_INT, &cli_integrator.substeps, "N", "pbd: substeps per step (default 20)", 1, 1e6, 0}, \
  {"--pbd-iterations", ARG_INT, &cli_integrator.iterations, "N",                                             \
   "pbd: constraint sweeps per substep (default 1)", 1, 1e6, 0},                                            \
  {"--pbd-jacobi", ARG_FLAG, &cli_integrator.jacobi, "",                                                     \
   "pbd: Jacobi sweeps (corrections averaged per body) instead of Gauss-Seidel", 0, 0, 0},                  \
  {"--pbd-compliance", ARG_DOUBLE, &cli_integrator.compliance, "ALPHA",                                      \
   "pbd: XPBD compliance of the joints, m/N and rad/(N m) (default 0: rigid)", 0, 1e6, 0}
// apply --integrator and the pbd options to m (before phys_make_data). -1 on success; else the exit code after a
// message: 2 for a pbd option without --integrator pbd, 1 for a model the pbd integrator does not support (model
// names the file). derivatives: 1 in the commands that need the step's derivatives (every integrator has them)
int cli_integrator_options(physModel* m, const char* command, const char* model, int derivatives);
// the commands that need the step's derivatives (jacobian, gradcheck, identify), before loading the model: -1, or
// 2 after the message for a pbd option without --integrator pbd
int cli_integrator_derivatives(const char* command);
// --ctrl-value: exactly m->nu finite numbers separated by commas into u (at most 64 actuators); 0 and a
// message otherwise
int cli_parse_controls(double* u, const physModel* m, const char* text);
// print "physid: <message>" to stderr (printf-style)
void cli_error(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
// 1 once cli_parse has seen the command's --quiet flag: warnings and progress are not printed (errors are)
extern int cli_quiet;
// print "warning: <message>" to stderr unless cli_quiet (printf-style)
void cli_warning(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
// a library call's warnings in log (up to PHYS_MAXWARN, then how many more), through cli_warning
void cli_log_warnings(const physLog* log);

// an output file (output.c): checked before any work (cli_output_check, cli_output_conflicts), opened when its
// data are ready (cli_output_open), written through f, then cli_output_commit (or, for several outputs that
// stand or fall together, cli_outputs_commit). See output.c for what each kind of path gets.
enum {
  CLI_OUT_STDOUT = 0,       // "-", no path, or the file stdout already writes to
  CLI_OUT_DIRECT,           // a character device or FIFO: written as it is, never created or replaced
  CLI_OUT_REPLACE           // a regular file or a new name: temporary beside the real target, then rename
};
typedef struct cliOutput_ {
  FILE* f;                  // the open stream (cli_output_open .. finish), else NULL
  const char* option;       // the option for messages ("--out")
  const char* path;         // as given (NULL: stdout)
  int kind;                 // CLI_OUT_*
  int exists;               // the target exists: dev, ino identify it (else dev, ino are its folder's)
  dev_t dev;
  ino_t ino;
  mode_t mode;              // an existing regular target's permissions (kept); a device's st_mode
  uid_t uid;                // an existing regular target's owner (kept when run as root)
  gid_t gid;
  char target[4096];        // the real path a rename replaces (links resolved), or the device / FIFO path
  char tmp[4096];           // the temporary ".NAME.physid-PID-XXXXXX" beside target ("" if none)
} cliOutput;

// resolve and check an output path before any work: its folder exists and takes files, it is not a folder, a
// dangling link, a block device or a socket; nothing is created. 0 and a message on failure. path NULL or
// "-": stdout
int cli_output_check(cliOutput* o, const char* option, const char* path);
// 1 and a message if two of the n checked outputs are the same file (device+inode; a new file: folder + name),
// or an output is one of the inputs (an existing file, or a data file of an input folder: .csv, .npy)
int cli_output_conflicts(const cliOutput* o, int n, const char* const* input, int ninput);
// open a checked output when the data are ready: stdout, the device / FIFO, or a new temporary (leftovers of
// dead runs for the same target are removed first); 0 and a message on failure
int cli_output_open(cliOutput* o);
// flush, check every error, fsync a temporary and close; 0, a message and the temporary removed on failure
int cli_output_finish(cliOutput* o);
// rename a finished temporary over its target (nothing for stdout, devices, FIFOs); 0 and a message on failure
int cli_output_rename(cliOutput* o);
// finish then rename one output
int cli_output_commit(cliOutput* o);
// finish every output still open, then rename them all only if all finished; else remove every temporary
int cli_outputs_commit(cliOutput* o, int n);
// close an open output and remove its temporary (an error path)
void cli_output_abort(cliOutput* o);
// remove every live temporary (async-signal-safe: SIGINT/SIGTERM handlers call it)
void cli_output_remove_temporaries(void);
// write s as a JSON string (RFC 8259: quotes, backslash and control characters escaped; NULL as "")
void cli_json_string(FILE* f, const char* s);
// flush and close stdout at exit; 0 on a write error (ENOSPC...), with a message if report
int cli_stdout_close(int report);

// the processes of mpirun (tools/mpi.c, issue 21)
typedef struct physFitComm_ physFitComm;
// start MPI if mpirun launched this process (process 0 prints and writes; the others are silent); -1 to go on,
// else the exit code after the message (launched by mpirun, but built without MPI)
int cli_mpi_start(int* argc, char*** argv);
// -1 if command may run on this many processes (one, or identify and sweep), else 2 after the message
int cli_mpi_check(const char* command);
// the fit's exchange among the processes (NULL: one process)
const physFitComm* cli_mpi_comm(void);
int cli_mpi_rank(void);
// end MPI (if started); a run that failed (code not 0) on several processes aborts the whole job
void cli_mpi_end(int code);
// threads a command uses by default: the cores this process may run on (sched_getaffinity), divided among the
// processes mpirun started on this machine, 1 to 16
int cli_default_threads(void);

// subcommands: argv[0] is the subcommand name; return the exit code
int cli_info(int argc, char** argv);
int cli_simulate(int argc, char** argv);
int cli_view(int argc, char** argv);
int cli_jacobian(int argc, char** argv);
int cli_gradcheck(int argc, char** argv);
int cli_identify(int argc, char** argv);
int cli_evaluate(int argc, char** argv);
int cli_sweep(int argc, char** argv);
int cli_optimize(int argc, char** argv);
int cli_mpc(int argc, char** argv);

#endif  // PHYS_CLI_H
