// optimize_run.h - shared pieces of the `physid optimize` method tests (test_optimize_shooting.c,
// test_optimize_sampling.c): running a task of the scratch folder, and the table of bad "options" objects
// each of which must exit 1 with its message and write nothing. Include after sh_run.h and test.h.
#ifndef PHYS_OPTIMIZE_RUN_H
#define PHYS_OPTIMIZE_RUN_H

#include <stdio.h>
#include <string.h>
#include <unistd.h>

// 1 if s contains frag; prints s otherwise
static int has(const char* s, const char* frag) {
  if (strstr(s, frag)) return 1;
  fprintf(stderr, "  text lacks '%s':\n---\n%s---\n", frag, s);
  return 0;
}

// examples/drone's task (drone.xml of the scratch folder resting on the ground, 100 steps, final height 1 m and
// vertical velocity 0, control effort 1e-3) by method with the "options" value, the result written to res: the
// task file's text into text (n bytes)
static inline void drone_task_text(char* text, size_t n, const char* method, const char* options, const char* res) {
  snprintf(text, n,
           "{\"model\": \"drone.xml\", \"horizon\": 100, \"method\": \"%s\", \"init\": {\"keyframe\": \"ground\"},\n"
           " \"cost\": {\"final\": [{\"qpos\": [0, 0, 1, 1, 0, 0, 0], \"weight\": [0, 0, 100, 0, 0, 0]},\n"
           "  {\"qvel\": [0, 0, 0, 0, 0, 0], \"weight\": [0, 0, 10, 0, 0, 0]}], \"control\": 1e-3},\n"
           " \"options\": %s,\n \"out\": {\"result\": \"%s\"}}\n", method, options, res);
}

// run the task file of the scratch folder (caller frees)
static shRun optimize(const char* task) {
  char args[512];
  snprintf(args, sizeof args, "optimize %s", path(task));
  return run(args);
}

// a bad options case: the method, its "options" value, the expected message
typedef struct badOptions_ {
  const char* method;
  const char* options;
  const char* message;
} badOptions;

// each case on a 10-step pendulum task: exit 1, "bad_task.json: " and the message on stderr, no result file
__attribute__((unused)) static void check_bad_options(const badOptions* c, int n) {
  for (int i = 0; i < n; i++) {
    char text[1024];
    snprintf(text, sizeof text,
             "{\"model\": \"pendulum.xml\", \"horizon\": 10, \"method\": \"%s\", \"options\": %s,\n"
             " \"out\": {\"result\": \"bad.json\"}}\n", c[i].method, c[i].options);
    put("bad_task.json", text);
    shRun r = optimize("bad_task.json");
    CHECK_MSG(r.code == 1, "case %d: exit %d", i, r.code);
    CHECK(has(r.err, c[i].message));
    CHECK(has(r.err, "bad_task.json: "));
    CHECK(access(path("bad.json"), F_OK) != 0);
    run_free(&r);
  }
}

#endif  // PHYS_OPTIMIZE_RUN_H
