// cli.h - shared pieces of the physid command-line tool: exit codes, model loading, the command table.
#ifndef PHYS_CLI_H
#define PHYS_CLI_H

#include <stdio.h>

#include "args.h"
#include "physid.h"

enum {
  CLI_EXIT_OK = 0,
  CLI_EXIT_INPUT = 1,       // bad input file, numerical failure, I/O error
  CLI_EXIT_USAGE = 2        // bad command line
};

// parse a subcommand's arguments; returns -1 to go on, else the exit code (help printed: 0, usage: 2)
int cli_parse(const char** pos, const argCommand* cmd, int argc, char** argv);
// load a model (URDF root floating if asked); prints loader warnings and, on failure, the error
physModel* cli_load_model(const char* filename, int floating);
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

// an output destination (output.c): stdout, or a temporary file beside path renamed to path on success
typedef struct cliOutput_ {
  FILE* f;
  const char* path;         // final path (NULL for stdout)
  char tmp[4096];           // temporary file in the same folder
} cliOutput;

// open stdout (path NULL) or a new temporary "<path>.tmpXXXXXX"; 0 and a message on failure
int cli_output_open(cliOutput* o, const char* path);
// drop the temporary file (nothing to do for stdout)
void cli_output_abort(cliOutput* o);
// flush and close, then rename the temporary file into place; 0 and a message on failure
int cli_output_commit(cliOutput* o);

// subcommands: argv[0] is the subcommand name; return the exit code
int cli_info(int argc, char** argv);
int cli_simulate(int argc, char** argv);
int cli_jacobian(int argc, char** argv);
int cli_gradcheck(int argc, char** argv);
int cli_identify(int argc, char** argv);
int cli_evaluate(int argc, char** argv);

#endif  // PHYS_CLI_H
