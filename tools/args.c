// args.c - table-driven long-option parser shared by the physid subcommands.
#include "args.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

// the option of cmd whose name matches arg up to '=' or its end; NULL if none
static const argOption* find_option(const argCommand* cmd, const char* arg, size_t len) {
  for (int i = 0; i < cmd->nopt; i++) {
    const char* name = cmd->opt[i].name;
    if (strlen(name) == len && strncmp(name, arg, len) == 0) return cmd->opt + i;
  }
  return NULL;
}

// index of value in the '|'-separated list choices; -1 if absent
static int choice_index(const char* choices, const char* value) {
  size_t len = strlen(value);
  int index = 0;
  for (const char* c = choices; *c; index++) {
    size_t n = strcspn(c, "|");
    if (n == len && strncmp(c, value, n) == 0) return index;
    c += n + (c[n] == '|');
  }
  return -1;
}

// 1 if x lies in the option's range (or the option has none)
static int in_range(const argOption* o, double x) {
  return o->min >= o->max || (x >= o->min && x <= o->max);
}

// convert value for option o and store it; 0 and a message on failure
static int store_value(char* err, size_t nerr, const argCommand* cmd, const argOption* o,
                       const char* value) {
  char* end = NULL;
  errno = 0;
  if (o->type == ARG_STRING) {
    *(const char**)o->dest = value;
    return 1;
  }
  if (o->type == ARG_LIST) {
    argList* list = o->dest;
    int ok = list->n < ARGS_MAXLIST;
    if (ok) list->item[list->n++] = value;
    else snprintf(err, nerr, "%s: %s given more than %d times", cmd->name, o->name, ARGS_MAXLIST);
    return ok;
  }
  if (o->type == ARG_CHOICE) {
    int k = choice_index(o->metavar, value);
    if (k >= 0) *(int*)o->dest = k;
    else snprintf(err, nerr, "%s: %s must be one of %s, not '%s'", cmd->name, o->name, o->metavar, value);
    return k >= 0;
  }
  if (o->type == ARG_INT) {
    long x = strtol(value, &end, 10);
    int ok = *value && !*end && errno == 0 && x >= INT_MIN && x <= INT_MAX && in_range(o, (double)x);
    if (ok) *(int*)o->dest = (int)x;
    else snprintf(err, nerr, "%s: %s expects an integer in [%.0f, %.0f], not '%s'", cmd->name, o->name,
                  o->min < o->max ? o->min : (double)INT_MIN, o->min < o->max ? o->max : (double)INT_MAX,
                  value);
    return ok;
  }
  double x = strtod(value, &end);
  int ok = *value && !*end && isfinite(x) && in_range(o, x);
  if (ok) *(double*)o->dest = x;
  else if (o->min < o->max) snprintf(err, nerr, "%s: %s expects a number in [%g, %g], not '%s'", cmd->name,
                                     o->name, o->min, o->max, value);
  else snprintf(err, nerr, "%s: %s expects a finite number, not '%s'", cmd->name, o->name, value);
  return ok;
}

// handle argv[*i], an option; may consume argv[*i + 1] as its value; 0 and a message on failure
static int parse_option(char* err, size_t nerr, int* seen, const argCommand* cmd, int argc, char** argv,
                        int* i) {
  const char* arg = argv[*i];
  const char* eq = strchr(arg, '=');
  const argOption* o = find_option(cmd, arg, eq ? (size_t)(eq - arg) : strlen(arg));
  if (!o) {
    snprintf(err, nerr, "%s: unknown option '%s'", cmd->name, arg);
    return 0;
  }
  seen[o - cmd->opt] = 1;
  if (o->type == ARG_FLAG) {
    if (eq) snprintf(err, nerr, "%s: %s takes no value", cmd->name, o->name);
    else *(int*)o->dest = 1;
    return !eq;
  }
  if (!eq && *i + 1 >= argc) {
    snprintf(err, nerr, "%s: %s needs a value (%s)", cmd->name, o->name, o->metavar);
    return 0;
  }
  return store_value(err, nerr, cmd, o, eq ? eq + 1 : argv[++*i]);
}

// the first required option not seen; NULL if all are present
static const argOption* missing_required(const argCommand* cmd, const int* seen) {
  for (int i = 0; i < cmd->nopt; i++) {
    if (cmd->opt[i].required && !seen[i]) return cmd->opt + i;
  }
  return NULL;
}

// walk argv: options, positionals, `--`; then check counts and required options
argResult args_parse(const char** pos, char* err, size_t nerr, const argCommand* cmd, int argc,
                     char** argv) {
  int seen[64] = {0}, npos = 0, options_done = 0;
  if (cmd->nopt > 64) {
    snprintf(err, nerr, "%s: too many options in the command table", cmd->name);
    return ARGS_USAGE;
  }
  for (int i = 1; i < argc; i++) {
    const char* arg = argv[i];
    if (!options_done && (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0)) return ARGS_HELP;
    if (!options_done && strcmp(arg, "--") == 0) {
      options_done = 1;
    } else if (!options_done && arg[0] == '-' && arg[1]) {
      if (!parse_option(err, nerr, seen, cmd, argc, argv, &i)) return ARGS_USAGE;
    } else if ((cmd->npos < 0 || npos < cmd->npos) && npos < ARGS_MAXPOS - 1) {
      pos[npos++] = arg;
    } else if (cmd->npos < 0) {
      snprintf(err, nerr, "%s: more than %d arguments", cmd->name, ARGS_MAXPOS - 1);
      return ARGS_USAGE;
    } else {
      snprintf(err, nerr, "%s: unexpected argument '%s'", cmd->name, arg);
      return ARGS_USAGE;
    }
  }
  pos[npos] = NULL;
  if (npos < cmd->npos) {
    snprintf(err, nerr, "%s: missing argument %s", cmd->name, cmd->positional);
    return ARGS_USAGE;
  }
  const argOption* o = missing_required(cmd, seen);
  if (o) snprintf(err, nerr, "%s: missing required option %s %s", cmd->name, o->name, o->metavar);
  return o ? ARGS_USAGE : ARGS_OK;
}

// usage line, summary, option table (name and metavar padded to one column), example
void args_help(FILE* f, const argCommand* cmd) {
  fprintf(f, "usage: physid %s %s [options]\n\n%s\n\noptions:\n", cmd->name, cmd->positional, cmd->summary);
  for (int i = 0; i < cmd->nopt; i++) {
    const argOption* o = cmd->opt + i;
    char left[64];
    snprintf(left, sizeof left, "%s%s%s", o->name, o->type == ARG_FLAG ? "" : " ",
             o->type == ARG_FLAG ? "" : o->metavar);
    fprintf(f, "  %-26s %s%s%s\n", left, o->help, o->type == ARG_LIST ? " (repeatable)" : "",
            o->required ? " (required)" : "");
  }
  fprintf(f, "  %-26s %s\n", "-h, --help", "show this help and exit");
  if (cmd->example) fprintf(f, "\nexample:\n  %s\n", cmd->example);
}
