// log.c - status messages, error and warning recording.
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "physid.h"

static const char* const status_text[PHYS_NSTATUS] = {
    "ok",
    "invalid argument",
    "input/output error",
    "parse error",
    "invalid model",
    "invalid value",
    "wrong size",
    "out of memory",
    "numerical failure",
};

// text of a status code
const char* phys_status_str(physStatus s) {
  if (s < 0 || s >= PHYS_NSTATUS) return "unknown status";
  return status_text[s];
}

// record an error; the first error wins so the root cause is reported, not its consequences
physStatus phys_error(physLog* log, physStatus s, const char* fmt, ...) {
  if (log && log->status == PHYS_OK) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(log->error, sizeof(log->error), fmt, ap);
    va_end(ap);
    log->status = s;
  }
  return s;
}

// record a warning: count all, keep the text of the first PHYS_MAXWARN
void phys_warning(physLog* log, const char* fmt, ...) {
  if (!log) return;
  if (log->nwarning < PHYS_MAXWARN) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(log->warning[log->nwarning], sizeof(log->warning[0]), fmt, ap);
    va_end(ap);
  }
  log->nwarning++;
}
