// test_log.c - the first error wins; warnings are counted beyond the stored ones.
#include <string.h>

#include "physid.h"
#include "test.h"

int main(void) {
  physLog log = {0};
  CHECK(phys_error(&log, PHYS_ERR_PARSE, "a.xml:%d: first", 3) == PHYS_ERR_PARSE);
  phys_error(&log, PHYS_ERR_VALUE, "second");
  CHECK(log.status == PHYS_ERR_PARSE && strcmp(log.error, "a.xml:3: first") == 0);
  for (int i = 0; i < PHYS_MAXWARN + 5; i++) phys_warning(&log, "w%d", i);
  CHECK(log.nwarning == PHYS_MAXWARN + 5 && strcmp(log.warning[PHYS_MAXWARN - 1], "w15") == 0);
  CHECK(strcmp(phys_status_str(PHYS_OK), "ok") == 0);
  CHECK(strcmp(phys_status_str((physStatus)99), "unknown status") == 0);
  CHECK(phys_error(NULL, PHYS_ERR_IO, "no log") == PHYS_ERR_IO);
  return test_done();
}
