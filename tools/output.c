// output.c - atomic output files of the physid tool: a temporary file beside the target, renamed into place
// only when the whole output was written (an error leaves no partial file).
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

// stdout, or a new temporary "<path>.tmpXXXXXX" with the permissions a plain fopen would give
int cli_output_open(cliOutput* o, const char* path) {
  o->path = path;
  o->f = stdout;
  if (!path) return 1;
  if (snprintf(o->tmp, sizeof o->tmp, "%s.tmpXXXXXX", path) >= (int)sizeof o->tmp) {
    cli_error("%s: path too long", path);
    return 0;
  }
  int fd = mkstemp(o->tmp);
  if (fd < 0) {
    cli_error("%s: cannot create a temporary file beside it: %s", path, strerror(errno));
    return 0;
  }
  mode_t mask = umask(0);
  umask(mask);
  o->f = fdopen(fd, "w");
  if (fchmod(fd, 0666 & ~mask) != 0 || !o->f) {
    cli_error("%s: %s", o->tmp, strerror(errno));
    if (o->f) fclose(o->f);
    else close(fd);
    unlink(o->tmp);
    return 0;
  }
  return 1;
}

// drop the temporary file (nothing to do for stdout)
void cli_output_abort(cliOutput* o) {
  if (!o->path) return;
  fclose(o->f);
  unlink(o->tmp);
}

// flush and close, then rename the temporary file into place
int cli_output_commit(cliOutput* o) {
  if (!o->path) {
    if (fflush(stdout) == 0) return 1;
    cli_error("error writing to stdout: %s", strerror(errno));
    return 0;
  }
  int ok = fflush(o->f) == 0 && !ferror(o->f);
  ok = (fclose(o->f) == 0) && ok;
  if (ok && rename(o->tmp, o->path) == 0) return 1;
  cli_error("%s: cannot write: %s", o->path, strerror(errno));
  unlink(o->tmp);
  return 0;
}

