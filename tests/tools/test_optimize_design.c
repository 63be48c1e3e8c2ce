// test_optimize_design.c - `physid optimize` with a "design" list (tools/optimize_design.c) run as a user would
// (env PHYS_BIN): a straight arm without actuators whose second link's length alone is free (l1 held by equal
// bounds) is lengthened to put its tip on a target: the analytic optimum l2 = 2.35 - 1.5 = 0.85, written to the
// result JSON with the initial value, the held components unchanged; the design arm of tests/data tracks its
// circling target (a point term relative to a body, "ref_body") and the cost falls; the same by the sampling
// methods (CEM to 0.85 within 1e-3; MPPI lowers the tracking cost, 1 and 2 threads alike); bad design lists, methods
// and reference points exit 1 with a message naming the task file and the JSON path, and write nothing.
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sh_run.h"
#include "test.h"
#include "optimize_run.h"

static const char* const g_arm =
    "<mujoco model=\"arm\">\n  <option timestep=\"0.01\" gravity=\"0 0 -9.81\"/>\n  <worldbody>\n"
    "    <body name=\"link1\">\n      <joint name=\"j1\" type=\"hinge\" axis=\"0 0 1\"/>\n"
    "      <inertial pos=\"0.5 0 0\" mass=\"1\" diaginertia=\"1e-2 1e-2 1e-2\"/>\n"
    "      <body name=\"link2\" pos=\"1.5 0 0\">\n        <joint name=\"j2\" type=\"hinge\" axis=\"0 0 1\"/>\n"
    "        <body name=\"tip\" pos=\"0.5 0 0\">\n"
    "          <inertial pos=\"0 0 0\" mass=\"1\" diaginertia=\"1e-4 1e-4 1e-4\"/>\n"
    "        </body>\n      </body>\n    </body>\n  </worldbody>\n</mujoco>\n";

// the result JSON of the scratch folder's file name (NULL if it does not parse)
static cJSON* result(const char* name) {
  char* text = slurp(path(name));
  cJSON* j = cJSON_Parse(text);
  free(text);
  return j;
}

// component k of design entry i's "value" (or "initial") in result r
static double design_value(const cJSON* r, int i, const char* key, int k) {
  const cJSON* e = cJSON_GetArrayItem(cJSON_GetObjectItem(r, "design"), i);
  const cJSON* v = cJSON_GetArrayItem(cJSON_GetObjectItem(e, key), k);
  return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

// the straight arm at rest, final tip target (2.35, 0, 0), l1 held at 1.5, l2 in [0.05, 3] from 0.5
static void test_link_length(void) {
  put("task.json", "{\"model\": \"arm.xml\", \"horizon\": 20, \"method\": \"lbfgsb\",\n"
                   " \"design\": [{\"param\": \"pos:link2\", \"lower\": [1.5, 0, 0], \"upper\": [1.5, 0, 0]},\n"
                   "            {\"param\": \"pos:tip\", \"init\": [0.5, 0, 0], \"lower\": [0.05, 0, 0], "
                   "\"upper\": [3, 0, 0]}],\n"
                   " \"cost\": {\"final\": [{\"body\": \"tip\", \"pos\": [2.35, 0, 0], \"weight\": 1}]},\n"
                   " \"options\": {\"tol\": 1e-14},\n"
                   " \"out\": {\"result\": \"r.json\", \"trajectory\": \"x.csv\"}}\n");
  shRun r = optimize("task.json");
  CHECK_MSG(r.code == 0, "%s", r.err);
  run_free(&r);
  cJSON* j = result("r.json");
  CHECK(j != NULL);
  if (!j) return;
  double l2 = design_value(j, 1, "value", 0), J = cJSON_GetObjectItem(j, "final_cost")->valuedouble;
  printf("link length: l2 %.12g (optimum 0.85), final cost %.3g\n", l2, J);
  CHECK(fabs(l2 - 0.85) < 1e-7);
  CHECK(J < 1e-14);
  CHECK(design_value(j, 1, "initial", 0) == 0.5 && design_value(j, 0, "value", 0) == 1.5);
  CHECK(design_value(j, 1, "value", 1) == 0 && design_value(j, 1, "value", 2) == 0);
  CHECK(strcmp(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "design"), 1), "param")->valuestring,
               "pos:tip") == 0);
  cJSON_Delete(j);
}

// the design arm tracks its circling target (running term on ee - target), lengths along x free
static void test_tracking(void) {
  put("track.json", "{\"model\": \"design_arm.xml\", \"horizon\": 150, \"method\": \"lbfgsb\",\n"
                    " \"init\": {\"qpos\": [0, 0, 0.3, 0], \"qvel\": [0, 0, 0, 1.88]}, \"ctrlrange\": [[0, 0]],\n"
                    " \"design\": [{\"param\": \"pos:elbow\", \"init\": [2.2, 0, 0],\n"
                    "             \"lower\": [0.5, 0, 0], \"upper\": [3, 0, 0]},\n"
                    "            {\"param\": \"pos:tip\", \"init\": [0.1, 0, 0],\n"
                    "             \"lower\": [0.05, 0, 0], \"upper\": [2, 0, 0]}],\n"
                    " \"cost\": {\"running\": [{\"site\": \"ee\", \"ref_body\": \"target\", \"pos\": [0, 0, 0], "
                    "\"weight\": 1}]},\n"
                    " \"out\": {\"result\": \"t.json\"}}\n");
  shRun r = optimize("track.json");
  CHECK_MSG(r.code == 0, "%s", r.err);
  run_free(&r);
  cJSON* j = result("t.json");
  CHECK(j != NULL);
  if (!j) return;
  double J0 = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "cost"), 0)->valuedouble;
  double J = cJSON_GetObjectItem(j, "final_cost")->valuedouble;
  printf("tracking: cost %.6g -> %.6g, l1 %.6g, l2 %.6g\n", J0, J, design_value(j, 0, "value", 0),
         design_value(j, 1, "value", 0));
  CHECK(J < 0.2 * J0);   // measured 0.0866 -> 0.0077
  cJSON_Delete(j);
}

// the sampling methods (issue 17): CEM samples the second link's length of the straight arm beside its (held)
// controls and reaches the analytic optimum 0.85 within 1e-3; the design arm's tracking cost falls under MPPI
// (the lengths sampled, "sigma" given); 1 and 2 threads write the same result
static void test_sampled(void) {
  put("cem.json", "{\"model\": \"arm.xml\", \"horizon\": 20, \"method\": \"cem\",\n"
                  " \"design\": [{\"param\": \"pos:link2\", \"lower\": [1.5, 0, 0], \"upper\": [1.5, 0, 0]},\n"
                  "            {\"param\": \"pos:tip\", \"lower\": [0.05, 0, 0], \"upper\": [3, 0, 0]}],\n"
                  " \"cost\": {\"final\": [{\"body\": \"tip\", \"pos\": [2.35, 0, 0], \"weight\": 1}]},\n"
                  " \"options\": {\"samples\": 32, \"iterations\": 30, \"elite\": 0.25, \"seed\": 3},\n"
                  " \"out\": {\"result\": \"c.json\"}}\n");
  shRun r = optimize("cem.json");
  CHECK_MSG(r.code == 0, "%s", r.err);
  run_free(&r);
  cJSON* j = result("c.json");
  CHECK(j != NULL);
  if (!j) return;
  double l2 = design_value(j, 1, "value", 0), J = cJSON_GetObjectItem(j, "final_cost")->valuedouble;
  printf("cem: l2 %.9g (optimum 0.85), final cost %.3g\n", l2, J);
  CHECK(fabs(l2 - 0.85) < 1e-3);
  CHECK(design_value(j, 0, "value", 0) == 1.5 && design_value(j, 1, "value", 1) == 0);
  cJSON_Delete(j);
  for (int threads = 1; threads <= 2; threads++) {
    char text[1024];
    snprintf(text, sizeof text,
             "{\"model\": \"design_arm.xml\", \"horizon\": 150, \"method\": \"mppi\",\n"
             " \"init\": {\"qpos\": [0, 0, 0.3, 0], \"qvel\": [0, 0, 0, 1.88]}, \"ctrlrange\": [[0, 0]],\n"
             " \"design\": [{\"param\": \"pos:elbow\", \"init\": [2.2, 0, 0], \"lower\": [0.5, 0, 0],\n"
             "             \"upper\": [3, 0, 0], \"sigma\": [0.1, 0, 0]},\n"
             "            {\"param\": \"pos:tip\", \"init\": [0.1, 0, 0], \"lower\": [0.05, 0, 0],\n"
             "             \"upper\": [2, 0, 0], \"sigma\": 0.1}],\n"
             " \"cost\": {\"running\": [{\"site\": \"ee\", \"ref_body\": \"target\", \"pos\": [0, 0, 0], "
             "\"weight\": 1}]},\n"
             " \"options\": {\"samples\": 16, \"iterations\": 10, \"lambda\": 0.001, \"threads\": %d},\n"
             " \"out\": {\"result\": \"m%d.json\"}}\n", threads, threads);
    put("mppi.json", text);
    r = optimize("mppi.json");
    CHECK_MSG(r.code == 0, "%s", r.err);
    run_free(&r);
  }
  cJSON *a = result("m1.json"), *b = result("m2.json");
  CHECK(a && b);
  if (!a || !b) return;
  double J0 = cJSON_GetArrayItem(cJSON_GetObjectItem(a, "cost"), 0)->valuedouble;
  J = cJSON_GetObjectItem(a, "final_cost")->valuedouble;
  printf("mppi tracking: cost %.6g -> %.6g, l1 %.6g, l2 %.6g\n", J0, J, design_value(a, 0, "value", 0),
         design_value(a, 1, "value", 0));
  CHECK(J < 0.5 * J0);
  CHECK(J == cJSON_GetObjectItem(b, "final_cost")->valuedouble);
  CHECK(design_value(a, 1, "value", 0) == design_value(b, 1, "value", 0));
  cJSON_Delete(a), cJSON_Delete(b);
}

// bad design lists, methods and reference points: exit 1, the message, no output
static void test_errors(void) {
  static const char* const c[][3] = {
      {"lbfgsb", "[{\"param\": \"pos:nosuch\"}]", "design: "},
      {"ddp", "[{\"param\": \"pos:tip\"}]", "design: only the gradient methods"},
      {"ms", "[{\"param\": \"pos:tip\"}]", "design: only the gradient methods"},
      {"lbfgsb", "[{\"param\": \"pos:tip\", \"sigma\": 0.1}]", "design[0]: unknown key 'sigma'"},
      {"cem", "[{\"param\": \"pos:tip\", \"sigma\": [0.1, -1, 0]}]", "design[0].sigma: component 1: -1; expected"},
      {"lbfgsb", "{\"param\": \"pos:tip\"}", "design: expected an array"},
      {"lbfgsb", "[{\"param\": 3}]", "design[0].param: expected a parameter"},
      {"lbfgsb", "[{\"param\": \"pos:tip\", \"lower\": [1, 0, 0]}]", "design[0]: component 0: the initial value 0.5"},
      {"lbfgsb", "[{\"param\": \"pos:tip\", \"init\": [1, 2]}]", "design[0].init: expected a finite number or an "
                                                                 "array of 3"},
      {"lbfgsb", "[{\"param\": \"pos:tip\", \"step\": 1}]", "design[0]: unknown key 'step'"},
      {"lbfgsb", "[{\"param\": \"delay:u0\"}]", "design: "},
  };
  for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
    char text[1024];
    snprintf(text, sizeof text,
             "{\"model\": \"arm.xml\", \"horizon\": 10, \"method\": \"%s\", \"design\": %s,\n"
             " \"cost\": {\"final\": [{\"body\": \"tip\", \"pos\": [2, 0, 0], \"weight\": 1}]},\n"
             " \"out\": {\"result\": \"bad.json\"}}\n", c[i][0], c[i][1]);
    put("bad_task.json", text);
    shRun r = optimize("bad_task.json");
    CHECK_MSG(r.code == 1, "case %zu: exit %d", i, r.code);
    CHECK(has(r.err, c[i][2]));
    CHECK(has(r.err, "bad_task.json: "));
    CHECK(access(path("bad.json"), F_OK) != 0);
    run_free(&r);
  }
  // a velocity term on a point the design moves; an unknown reference; no design and no actuators
  static const char* const d[][2] = {
      {"\"design\": [{\"param\": \"pos:tip\"}], \"cost\": {\"final\": [{\"body\": \"tip\", \"vel\": [0, 0, 0], "
       "\"weight\": 1}]}", "moves the point of a velocity term"},
      {"\"design\": [{\"param\": \"pos:tip\"}], \"cost\": {\"final\": [{\"body\": \"tip\", \"ref_site\": \"x\", "
       "\"pos\": [0, 0, 0], \"weight\": 1}]}", "cost.final[0].ref_site: no site 'x'"},
      {"\"cost\": {\"final\": [{\"body\": \"tip\", \"pos\": [0, 0, 0], \"weight\": 1}]}", "has no actuators"},
  };
  for (size_t i = 0; i < sizeof d / sizeof d[0]; i++) {
    char text[1024];
    snprintf(text, sizeof text,
             "{\"model\": \"arm.xml\", \"horizon\": 10, \"method\": \"lbfgsb\", %s, \"out\": {\"result\": "
             "\"bad.json\"}}\n", d[i][0]);
    put("bad_task.json", text);
    shRun r = optimize("bad_task.json");
    CHECK_MSG(r.code == 1, "case %zu: exit %d", i, r.code);
    CHECK(has(r.err, d[i][1]));
    CHECK(access(path("bad.json"), F_OK) != 0);
    run_free(&r);
  }
}

int main(void) {
  g_bin = getenv("PHYS_BIN");
  CHECK_MSG(g_bin != NULL && access(g_bin, X_OK) == 0, "PHYS_BIN not set or not executable");
  if (!g_bin) return test_done();
  snprintf(g_dir, sizeof g_dir, "/tmp/test_optimize_design_XXXXXX");
  if (!mkdtemp(g_dir)) return 1;
  put("arm.xml", g_arm);
  char* model = slurp("tests/data/design_arm.xml");
  put("design_arm.xml", model);
  free(model);
  test_link_length();
  test_tracking();
  test_sampled();
  test_errors();
  remove_scratch();
  return test_done();
}
