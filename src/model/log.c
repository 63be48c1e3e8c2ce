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

// the library's version, compiled in (the header a program was built with has its own PHYS_VERSION)
const char* phys_version(void) { return PHYS_VERSION; }

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

// count a warning of kind; the first of a new kind (among the first PHYS_MAXWARN kinds) keeps its text
static void add_warning(physLog* log, const char* kind, const char* fmt, va_list ap) {
  log->nwarning++;
  int n = log->nkind < PHYS_MAXWARN ? log->nkind : PHYS_MAXWARN;
  for (int k = 0; k < n; k++) {
    if (log->kind[k] == kind || !strcmp(log->kind[k], kind)) {
      log->count[k]++;
      return;
    }
  }
  if (log->nkind < PHYS_MAXWARN) {
    vsnprintf(log->warning[n], sizeof(log->warning[0]), fmt, ap);
    log->kind[n] = kind;
    log->count[n] = 1;
  }
  log->nkind++;   // kinds past PHYS_MAXWARN are counted, not told apart (each counts as new)
}

// record a warning; its format is its kind
void phys_warning(physLog* log, const char* fmt, ...) {
  if (!log) return;
  va_list ap;
  va_start(ap, fmt);
  add_warning(log, fmt, fmt, ap);
  va_end(ap);
}

// record a warning of the given kind
void phys_warning_kind(physLog* log, const char* kind, const char* fmt, ...) {
  if (!log) return;
  va_list ap;
  va_start(ap, fmt);
  add_warning(log, kind ? kind : fmt, fmt, ap);
  va_end(ap);
}

// one line per kept kind with its repeat count, then the rest in one line
int phys_log_print_warnings(const physLog* log, FILE* out) {
  if (!log || log->quiet || !out) return 0;
  int n = log->nkind < PHYS_MAXWARN ? log->nkind : PHYS_MAXWARN, kept = 0;
  for (int k = 0; k < n; k++) {
    kept += log->count[k];
    if (log->count[k] > 1) {
      fprintf(out, "warning: %s (and %d more like it)\n", log->warning[k], log->count[k] - 1);
    } else {
      fprintf(out, "warning: %s\n", log->warning[k]);
    }
  }
  if (log->nwarning > kept) {
    fprintf(out, "warning: ... and %d more warnings of other kinds\n", log->nwarning - kept);
    return n + 1;
  }
  return n;
}

// forget the warnings
void phys_log_clear_warnings(physLog* log) {
  if (!log) return;
  log->nwarning = 0;
  log->nkind = 0;
  memset(log->count, 0, sizeof(log->count));
  memset(log->kind, 0, sizeof(log->kind));
}
