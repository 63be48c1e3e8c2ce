// args.h - a small table-driven parser for the subcommands of the physid tool.
//
// A command declares its positional arguments and a table of long options; args_parse fills the option
// destinations, checks types, ranges and required options, and args_help prints the --help text.
// Accepted forms: `--name value`, `--name=value`, flags `--name`, `--` ends the options, `-h`/`--help`.
#ifndef PHYS_ARGS_H
#define PHYS_ARGS_H

#include <stddef.h>
#include <stdio.h>

typedef enum argType_ {
  ARG_FLAG = 0,             // int* set to 1
  ARG_INT,                  // int*, within [min, max]
  ARG_DOUBLE,               // double*, finite, within [min, max]
  ARG_STRING,               // const char** (points into argv)
  ARG_CHOICE,               // int* index into the '|'-separated list in metavar
  ARG_LIST                  // argList*: a repeatable string option, every occurrence appended
} argType;

#define ARGS_MAXLIST 64

// the values of a repeatable option (ARG_LIST), in command-line order (point into argv)
typedef struct argList_ {
  const char* item[ARGS_MAXLIST];
  int n;
} argList;

typedef struct argOption_ {
  const char* name;         // long name with dashes: "--steps"
  argType type;
  void* dest;               // where the value goes (see argType)
  const char* metavar;      // "N", "FILE"; for ARG_CHOICE the choices "zero|random"
  const char* help;         // one line
  double min, max;          // range for ARG_INT and ARG_DOUBLE (ignored when min >= max)
  int required;             // 1: must be given
} argOption;

typedef struct argCommand_ {
  const char* name;         // "simulate"
  const char* summary;      // one line for `physid --help`
  const char* positional;   // synopsis of the positional arguments: "MODEL"
  int npos;                 // exact number of positional arguments; -1: any number up to ARGS_MAXPOS - 1
                            // (pos is NULL-terminated; the command checks the count)
  const argOption* opt;     // option table
  int nopt;
  const char* example;      // an example command line (may be NULL)
} argCommand;

typedef enum argResult_ {
  ARGS_OK = 0,
  ARGS_HELP,                // --help was given: print args_help and exit 0
  ARGS_USAGE                // usage error: message in err, exit 2
} argResult;

#define ARGS_MAXPOS 4096   // a shell glob of data files may be long

// parse argv[1..argc) (argv[0] is the subcommand name); positional arguments go to pos (ARGS_MAXPOS),
// followed by NULL when there is room
argResult args_parse(const char** pos, char* err, size_t nerr, const argCommand* cmd, int argc,
                     char** argv);
// print "usage: physid NAME ..." and the option table
void args_help(FILE* f, const argCommand* cmd);

#endif  // PHYS_ARGS_H
