// test_identify_job.c - phys_identify (include/physid/identify.h) against `physid identify` on the same job:
// the same values to the printed digits (the double pendulum's link mass from a simulated swing, started at
// 0.8; the arm's shared damping from random controls), and its errors.
#include <string.h>

#include "../tools/sh_run.h"
#include "physid/identify.h"
#include "test.h"

// result.json's "value" of the first parameter (NAN if absent)
static double json_value(const char* text) {
  const char* p = strstr(text, "\"value\":");
  return p ? strtod(p + 8, NULL) : NAN;
}

// phys_identify and the CLI on one model, data file and spec started at init: the same value and stop
static void compare(const char* model, const char* data, const char* spec, double init, double truth) {
  char args[1024];
  snprintf(args, sizeof args, "identify %s %s --param %s:init=%.17g --out %s --quiet", model, data, spec, init,
           path("result.json"));
  shRun r = run(args);
  CHECK_MSG(r.code == 0, "%s", r.err);
  char* json = slurp(path("result.json"));
  physLog log = {0};
  physModel* m = phys_load(model, NULL, &log);
  const char* params[] = {spec};
  physIdentifyJob job = {&data, 1, params, 1, &init, NULL, 0, 0, 0};
  physIdentifyResult res;
  physStatus s = phys_identify(m, &job, &res, &log);
  CHECK_MSG(s == PHYS_OK, "%s", log.error);
  if (s == PHYS_OK) {
    CHECK_REL(res.theta[0], json_value(json), 0, 0);   // the same bits: %.17g round-trips
    CHECK_REL(res.theta[0], truth, 1e-6, 0);
    CHECK(res.ntheta == 1 && res.theta0[0] == init && res.loss < res.loss0 && res.iterations > 0);
    char stop[64];
    snprintf(stop, sizeof stop, "\"stop\":\t\"%s\"", res.stop);
    CHECK_MSG(strstr(json, stop) != NULL, "%s not in result.json", stop);
  }
  phys_identify_result_free(&res);
  CHECK(res.theta == NULL);
  phys_free_model(m);
  free(json);
  run_free(&r);
}

// bad jobs: a message and no result
static void test_errors(const char* data) {
  physLog log = {0};
  physModel* m = phys_load("tests/data/double_pendulum.xml", NULL, &log);
  physIdentifyResult res;
  const char* bad[] = {"damping:nosuch"};
  physIdentifyJob job = {&data, 1, bad, 1, NULL, NULL, 0, 0, 0};
  CHECK(phys_identify(m, &job, &res, &log) == PHYS_ERR_ARG && strstr(log.error, "nosuch") && !res.theta);
  const char* good[] = {"mass:link1"};
  job.params = good;
  job.loss = "twostep";
  log = (physLog){0};   // the first error of a log wins
  CHECK(phys_identify(m, &job, &res, &log) == PHYS_ERR_ARG && strstr(log.error, "unknown loss 'twostep'"));
  job.loss = NULL;
  const char* missing = path("missing.csv");
  job.data = &missing;
  log = (physLog){0};
  CHECK(phys_identify(m, &job, &res, &log) != PHYS_OK && strstr(log.error, "missing.csv") && !res.theta);
  job.ndata = 0;
  CHECK(phys_identify(m, &job, &res, &log) == PHYS_ERR_ARG);
  CHECK(phys_identify(m, NULL, &res, &log) == PHYS_ERR_ARG);
  phys_free_model(m);
}

int main(void) {
  (void)put;   // sh_run.h's, unused here
  g_bin = getenv("PHYS_BIN");
  if (!g_bin) {
    fprintf(stderr, "PHYS_BIN not set\n");
    return 1;
  }
  strcpy(g_dir, "/tmp/physid_identify_job_XXXXXX");
  if (!mkdtemp(g_dir)) return 1;
  char swing[256], arm[256];
  snprintf(swing, sizeof swing, "%s", path("swing.csv"));
  snprintf(arm, sizeof arm, "%s", path("arm.csv"));
  char args[1024];
  snprintf(args, sizeof args, "simulate tests/data/double_pendulum.xml --steps 200 --out %s --quiet", swing);
  shRun r = run(args);
  CHECK_MSG(r.code == 0, "%s", r.err);
  run_free(&r);
  snprintf(args, sizeof args, "simulate models/arm7.xml --steps 100 --ctrl random --seed 3 --out %s --quiet", arm);
  r = run(args);
  CHECK_MSG(r.code == 0, "%s", r.err);
  run_free(&r);
  compare("tests/data/double_pendulum.xml", swing, "mass:link1", 0.8, 1.0);
  compare("models/arm7.xml", arm, "damping:j*", 0.3, 0.5);
  test_errors(swing);
  remove_scratch();
  return test_done();
}
