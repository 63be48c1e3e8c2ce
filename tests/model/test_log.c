// test_log.c - the first error wins; warnings are aggregated by kind, counted beyond the stored ones, printed
// one line per kind, silenced by quiet.
#include <stdio.h>
#include <string.h>

#include "physid.h"
#include "test.h"

int main(void) {
  physLog log = {0};
  CHECK(phys_error(&log, PHYS_ERR_PARSE, "a.xml:%d: first", 3) == PHYS_ERR_PARSE);
  phys_error(&log, PHYS_ERR_VALUE, "second");
  CHECK(log.status == PHYS_ERR_PARSE && strcmp(log.error, "a.xml:3: first") == 0);
  // one call site (one format): one kind, counted, the first text kept
  for (int i = 0; i < PHYS_MAXWARN + 5; i++) phys_warning(&log, "w%d", i);
  CHECK(log.nwarning == PHYS_MAXWARN + 5 && log.nkind == 1 && log.count[0] == PHYS_MAXWARN + 5);
  CHECK(strcmp(log.warning[0], "w0") == 0);
  // wrappers that format "file:line: " give their caller's format as the kind
  phys_warning_kind(&log, "unknown element %s", "a.xml:%d: unknown element %s", 4, "<x>");
  phys_warning_kind(&log, "unknown element %s", "a.xml:%d: unknown element %s", 9, "<y>");
  phys_warning_kind(&log, "bad mesh %s", "a.xml:%d: bad mesh %s", 5, "m");
  CHECK(log.nkind == 3 && log.count[1] == 2 && log.count[2] == 1 && !strcmp(log.warning[1], "a.xml:4: unknown element <x>"));
  // printed: one line per kind with the count of the others; kinds past PHYS_MAXWARN in one line
  char kinds[PHYS_MAXWARN + 3][32];
  for (int k = 0; k < PHYS_MAXWARN + 3; k++) {
    snprintf(kinds[k], sizeof(kinds[k]), "kind %d", k);
    phys_warning_kind(&log, kinds[k], "%s", kinds[k]);
  }
  FILE* f = tmpfile();
  CHECK(phys_log_print_warnings(&log, f) == PHYS_MAXWARN + 1);
  rewind(f);
  char line[PHYS_MAXWARN + 1][300];
  int n = 0;
  while (n < PHYS_MAXWARN + 1 && fgets(line[n], sizeof(line[0]), f)) n++;
  CHECK(n == PHYS_MAXWARN + 1 && !fgets(line[0], sizeof(line[0]), f));
  CHECK(!strcmp(line[0], "warning: w0 (and 20 more like it)\n"));
  CHECK(!strcmp(line[1], "warning: a.xml:4: unknown element <x> (and 1 more like it)\n"));
  CHECK(!strcmp(line[2], "warning: a.xml:5: bad mesh m\n"));
  CHECK(!strcmp(line[3], "warning: kind 0\n"));
  CHECK_MSG(!strcmp(line[PHYS_MAXWARN], "warning: ... and 6 more warnings of other kinds\n"), "%s", line[PHYS_MAXWARN]);
  fclose(f);
  // quiet: nothing printed, still counted; cleared: nothing left
  log.quiet = 1;
  f = tmpfile();
  CHECK(phys_log_print_warnings(&log, f) == 0 && ftell(f) == 0);
  fclose(f);
  CHECK(log.nwarning == PHYS_MAXWARN + 5 + 3 + PHYS_MAXWARN + 3);
  phys_log_clear_warnings(&log);
  CHECK(log.nwarning == 0 && log.nkind == 0 && log.quiet == 1 && log.status == PHYS_ERR_PARSE);
  phys_warning(&log, "again");
  CHECK(log.nkind == 1 && !strcmp(log.warning[0], "again"));
  CHECK(strcmp(phys_status_str(PHYS_OK), "ok") == 0);
  CHECK(strcmp(phys_status_str((physStatus)99), "unknown status") == 0);
  CHECK(strcmp(phys_version(), PHYS_VERSION) == 0);   // the library and the header it was built with agree
  CHECK(phys_error(NULL, PHYS_ERR_IO, "no log") == PHYS_ERR_IO);
  return test_done();
}
