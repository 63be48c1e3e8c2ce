// test_cmd_view.c - `physid view` run as a user would (env PHYS_BIN), and its page opened in a real browser:
// headless Chromium (Debian's chromium, installed by scripts/setup.sh) loads the page with "#selftest", which renders
// t = 0 and the end and writes how many pixels differ from the background and between the two pictures, and the
// script errors it caught (tools/view_page.js). A box thrown onto a plane: no errors, geoms drawn, the picture
// changes; the same box at rest: the picture does not change (the check can fail); every geom type drawn without
// errors; identify's report and optimize's page with their replays. The page needs no network (no external
// address), the predicted rollout of the model that made the data equals the data, the same inputs give the same
// bytes, a label with markup is escaped, a 10 s humanoid page is under 2 MB, and bad input exits non-zero with a
// message and no page.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sh_run.h"
#include "test.h"

// a 10 cm box thrown sideways and spinning above a plane (keyframe), and the same box resting on it
static const char* const g_box =
    "<mujoco model=\"box\">\n"
    "  <option timestep=\"0.005\"/>\n"
    "  <worldbody>\n"
    "    <geom name=\"floor\" type=\"plane\" size=\"0 0 1\" rgba=\"0.8 0.8 0.8 1\"/>\n"
    "    <body name=\"box\" pos=\"0 0 0.05\">\n"
    "      <freejoint/>\n"
    "      <geom type=\"box\" size=\"0.05 0.05 0.05\" mass=\"0.5\" rgba=\"0.2 0.4 0.8 1\"/>\n"
    "    </body>\n"
    "  </worldbody>\n"
    "  <keyframe><key qpos=\"0 0 %s 1 0 0 0\" qvel=\"%s\"/></keyframe>\n"
    "</mujoco>\n";

// 1 if s contains frag; prints a piece of s otherwise
static int has(const char* s, const char* frag) {
  if (strstr(s, frag)) return 1;
  fprintf(stderr, "  text lacks '%s':\n---\n%.2000s---\n", frag, s);
  return 0;
}

// run "physid ARGS", which must succeed (its stderr printed otherwise)
static void run_ok(const char* args) {
  shRun r = run(args);
  CHECK(r.code == 0);
  if (r.code != 0) fprintf(stderr, "  physid %s:\n%s", args, r.err);
  run_free(&r);
}

// write the box model (start height z, velocity v) as name and simulate `steps` steps into data; the model's path
static const char* box_data(const char* name, const char* z, const char* v, int steps, const char* data) {
  char text[2048], args[1024];
  snprintf(text, sizeof text, g_box, z, v);
  const char* model = put(name, text);
  static char keep[4][256];
  static int k = 0;
  k = (k + 1) % 4;
  snprintf(keep[k], sizeof keep[k], "%s", model);
  snprintf(args, sizeof args, "simulate %s --steps %d --quiet --out '%s'", keep[k], steps, path(data));
  run_ok(args);
  return keep[k];
}

// the self-test line of page opened in headless Chromium with the fragment "#selftest" + extra ("&g=1": the
// second scene): pixels, drawn, changed, errors; *groups the scenes the page has (when not NULL); 0 if the browser
// did not run or the page wrote no line
static int browse_at(const char* page, const char* extra, long* pixels, long* drawn, long* changed, long* errors,
                     long* groups) {
  char cmd[2048];
  if (system("command -v chromium > /dev/null") != 0) {
    fprintf(stderr, "  chromium not found: scripts/setup.sh installs Debian's chromium\n");
    return 0;
  }
  // --no-sandbox: the tests may run as root; swiftshader: WebGL without a GPU
  snprintf(cmd, sizeof cmd,
           "timeout 120 chromium --headless=new --no-sandbox --disable-gpu --use-angle=swiftshader "
           "--enable-unsafe-swiftshader --window-size=800,700 --virtual-time-budget=5000 --dump-dom "
           "'file://%s#selftest%s' > '%s' 2> '%s'",
           page, extra, path("dom.html"), path("chromium.err"));
  int st = system(cmd);
  char* dom = slurp(path("dom.html"));
  const char* line = strstr(dom, "<pre id=\"physid-selftest\">pixels ");
  int n = line ? sscanf(line + 26, "pixels %ld drawn %ld changed %ld errors %ld", pixels, drawn, changed, errors) : 0;
  const char* g = line ? strstr(line, " groups ") : NULL;
  if (groups && (!g || sscanf(g, " groups %ld", groups) != 1)) n = 0;
  if (n != 4) {
    char* err = slurp(path("chromium.err"));
    fprintf(stderr, "  no self-test line from chromium (status %d); stderr:\n%.3000s\n", st, err);
    free(err);
  }
  free(dom);
  return n == 4;
}

// browse_at with "#selftest": the first scene
static int browse(const char* page, long* pixels, long* drawn, long* changed, long* errors) {
  return browse_at(page, "", pixels, drawn, changed, errors, NULL);
}

// the page of a thrown box with its rollout and contacts: no network, labels, rollout = data, deterministic bytes;
// in the browser: no errors, drawn, changing
static void test_thrown_box(void) {
  char args[1024];
  const char* model = box_data("box.xml", "0.3", "0.5 0 1 3 2 1", 200, "toss.csv");
  snprintf(args, sizeof args, "view %s %s --rollout --contacts --out %s", model, path("toss.csv"), path("view.html"));
  run_ok(args);
  char* page = slurp(path("view.html"));
  CHECK(has(page, "<!DOCTYPE html>") && has(page, "window.PHYSID_VIEW = {"));
  CHECK(has(page, "label:\"observed: toss.csv\"") && has(page, "label:\"predicted: toss.csv\""));
  CHECK(strstr(page, "src=\"http") == NULL && strstr(page, "<link") == NULL && strstr(page, "import(") == NULL);
  // the model rolled out from the data's first sample with the data's timestep is the data: identical poses
  const char* p1 = strstr(page, ",pose:[");
  const char* p2 = p1 ? strstr(p1 + 1, ",pose:[") : NULL;
  CHECK(p1 && p2);
  if (p1 && p2) {
    size_t n1 = strcspn(p1 + 7, "]"), n2 = strcspn(p2 + 7, "]");
    CHECK(n1 == n2 && n1 > 1000 && strncmp(p1 + 7, p2 + 7, n1) == 0);
  }
  CHECK(has(page, ",contacts:[[") && has(page, "forcescale:"));
  // the same command again: the same bytes
  snprintf(args, sizeof args, "view %s %s --rollout --contacts --out %s", model, path("toss.csv"), path("view2.html"));
  run_ok(args);
  char* page2 = slurp(path("view2.html"));
  CHECK(strcmp(page, page2) == 0);
  free(page2);
  free(page);
  long pixels = 0, drawn = 0, changed = 0, errors = -1;
  CHECK(browse(path("view.html"), &pixels, &drawn, &changed, &errors));
  CHECK(errors == 0);
  CHECK(pixels >= 100000 && drawn > pixels / 10);   // the plane and the box
  CHECK(changed > 200);                              // the box moved
  fprintf(stderr, "  thrown box: %ld pixels, %ld drawn, %ld changed, %ld errors\n", pixels, drawn, changed, errors);
}

// identify --report --replay: the report embeds the player (observed, identified, initial); --replay alone: exit 2
static void test_identify_replay(void) {
  char args[1024];
  snprintf(args, sizeof args, "identify %s %s --param friction:floor --iters 3 --quiet --report %s --replay",
           path("box.xml"), path("toss.csv"), path("report.html"));
  run_ok(args);
  char* page = slurp(path("report.html"));
  CHECK(has(page, "<h2>Replay: observed, identified and initial model</h2>") && has(page, "window.PHYSID_VIEW = {"));
  CHECK(has(page, "label:\"identified model, rolled out\"") && has(page, "label:\"initial model, rolled out\""));
  free(page);
  long pixels = 0, drawn = 0, changed = 0, errors = -1;
  CHECK(browse(path("report.html"), &pixels, &drawn, &changed, &errors));
  CHECK(errors == 0 && drawn > pixels / 10 && changed > 200);
  snprintf(args, sizeof args, "identify %s %s --param friction:floor --replay", path("box.xml"), path("toss.csv"));
  shRun r = run(args);
  CHECK(r.code == 2 && has(r.err, "--replay embeds a replay in the report: give --report FILE.html"));
  run_free(&r);
}

// --replay-trajectories: one scene per chosen trajectory, in the order given, with a selector; the box at rest
// (trajectory 1, the first scene) does not move, the thrown box (trajectory 0, the second scene) does: the scene
// shown is the one selected. Bad lists: exit 2 before any work, an index past the data: exit 1
static void test_identify_replay_several(void) {
  char args[1024];
  box_data("rest4.xml", "0.05", "0 0 0 0 0 0", 200, "rest4.csv");
  snprintf(args, sizeof args, "identify %s %s %s --param friction:floor --iters 2 --quiet --report %s "
           "--replay-trajectories 1,0", path("box.xml"), path("toss.csv"), path("rest4.csv"), path("report2.html"));
  run_ok(args);
  char* page = slurp(path("report2.html"));
  char scenes[1024];
  snprintf(scenes, sizeof scenes, "groups:[\"trajectory 1: %s\",\"trajectory 0: %s\"]", path("rest4.csv"),
           path("toss.csv"));
  CHECK(has(page, scenes) && has(page, "label:\"initial model, rolled out\",group:1,"));
  free(page);
  long pixels = 0, drawn = 0, changed = -1, errors = -1, groups = 0;
  CHECK(browse_at(path("report2.html"), "", &pixels, &drawn, &changed, &errors, &groups));
  CHECK(errors == 0 && groups == 2 && drawn > pixels / 10 && changed == 0);
  fprintf(stderr, "  replay scene 1 (at rest): %ld drawn, %ld changed, %ld errors\n", drawn, changed, errors);
  CHECK(browse_at(path("report2.html"), "&g=1", &pixels, &drawn, &changed, &errors, &groups));
  CHECK(errors == 0 && groups == 2 && drawn > pixels / 10 && changed > 200);
  fprintf(stderr, "  replay scene 2 (thrown): %ld drawn, %ld changed, %ld errors\n", drawn, changed, errors);
  static const char* const bad[] = {"1,x", "-1", "", "0,,1"};
  for (int i = 0; i < 4; i++) {
    snprintf(args, sizeof args, "identify %s %s --param friction:floor --report %s --replay-trajectories '%s'",
             path("box.xml"), path("toss.csv"), path("bad.html"), bad[i]);
    shRun r = run(args);
    CHECK(r.code == 2 && has(r.err, "--replay-trajectories") && access(path("bad.html"), F_OK) != 0);
    run_free(&r);
  }
  snprintf(args, sizeof args, "identify %s %s --param friction:floor --report %s --replay-trajectories 0,1",
           path("box.xml"), path("toss.csv"), path("bad.html"));
  shRun r = run(args);
  CHECK(r.code == 1 && has(r.err, "trajectory 1: the data hold 1 (indices 0 to 0)") && access(path("bad.html"), F_OK) != 0);
  run_free(&r);
  // view --rollout of two files: a scene per file, each the observed trajectory then its prediction
  snprintf(args, sizeof args, "view %s %s %s --rollout --out %s", path("box.xml"), path("toss.csv"), path("rest4.csv"),
           path("two.html"));
  run_ok(args);
  page = slurp(path("two.html"));
  CHECK(has(page, "groups:[\"toss.csv\",\"rest4.csv\"]"));
  const char* o0 = strstr(page, "label:\"observed: toss.csv\",group:0,");
  const char* p0 = strstr(page, "label:\"predicted: toss.csv\",group:0,");
  const char* o1 = strstr(page, "label:\"observed: rest4.csv\",group:1,");
  const char* p1 = strstr(page, "label:\"predicted: rest4.csv\",group:1,");
  CHECK(o0 && p0 && o1 && p1 && o0 < p0 && p0 < o1 && o1 < p1);
  free(page);
}

// optimize's page with "replay": true embeds the player of the planned motion; a replay that is not a boolean: exit 1
static void test_optimize_replay(void) {
  char cwd[1024], task[2048], args[1024];
  if (!getcwd(cwd, sizeof cwd)) return;
  const char* fmt =
      "{\"model\": \"%s/models/cartpole.xml\", \"horizon\": 100, \"method\": \"ddp\",\n"
      " \"init\": {\"qpos\": [0, 0], \"qvel\": [0, 0]},\n"
      " \"cost\": {\"final\": [{\"qpos\": [0, 3.14159265], \"weight\": 100}], \"control\": 1e-3},\n"
      " \"options\": {\"maxiter\": 20}, \"replay\": %s, \"out\": {\"html\": \"%s\"}}\n";
  snprintf(task, sizeof task, fmt, cwd, "true", path("plan.html"));
  snprintf(args, sizeof args, "optimize %s --quiet", put("plan.json", task));
  run_ok(args);
  char* page = slurp(path("plan.html"));
  CHECK(has(page, "<h2>Replay</h2>") && has(page, "label:\"planned\""));
  free(page);
  long pixels = 0, drawn = 0, changed = 0, errors = -1;
  CHECK(browse(path("plan.html"), &pixels, &drawn, &changed, &errors));
  CHECK(errors == 0 && drawn > 1000 && changed > 100);
  snprintf(task, sizeof task, fmt, cwd, "1", path("plan2.html"));
  snprintf(args, sizeof args, "optimize %s --quiet", put("plan2.json", task));
  shRun r = run(args);
  CHECK(r.code == 1 && has(r.err, "replay: expected true or false") && access(path("plan2.html"), F_OK) != 0);
  run_free(&r);
}

// every geom type (plane, mesh, ellipsoid, cylinder, capsule, sphere) falling: drawn without script errors
static void test_all_geoms(void) {
  const char* model = put("shapes.xml",
      "<mujoco model=\"shapes\">\n"
      "  <asset><mesh name=\"tet\" vertex=\"0 0 0  0.1 0 0  0 0.1 0  0 0 0.1\" face=\"0 2 1  0 1 3  0 3 2  1 2 3\"/></asset>\n"
      "  <worldbody>\n"
      "    <geom type=\"plane\" size=\"1 1 0.1\"/>\n"
      "    <body pos=\"0 0 0.3\"><freejoint/><geom type=\"mesh\" mesh=\"tet\" rgba=\"0.9 0.3 0.2 1\"/>\n"
      "      <geom type=\"ellipsoid\" size=\"0.03 0.05 0.02\" pos=\"0.2 0 0\"/>\n"
      "      <geom type=\"cylinder\" size=\"0.02 0.05\" pos=\"-0.2 0 0\"/>\n"
      "      <geom type=\"capsule\" size=\"0.02 0.05\" pos=\"0 0.2 0\"/>\n"
      "      <geom type=\"sphere\" size=\"0.03\" pos=\"0 -0.2 0\"/></body>\n"
      "  </worldbody>\n"
      "</mujoco>\n");
  char keep[300], args[1024];
  snprintf(keep, sizeof keep, "%s", model);
  snprintf(args, sizeof args, "simulate %s --steps 150 --quiet --out %s", keep, path("shapes.csv"));
  run_ok(args);
  snprintf(args, sizeof args, "view %s %s --contacts --out %s", keep, path("shapes.csv"), path("shapes.html"));
  run_ok(args);
  char* page = slurp(path("shapes.html"));
  static const char* const type[] = {"plane", "mesh", "ellipsoid", "cylinder", "capsule", "sphere"};
  for (int i = 0; i < 6; i++) {
    char frag[64];
    snprintf(frag, sizeof frag, "type:\"%s\"", type[i]);
    CHECK(has(page, frag));
  }
  CHECK(has(page, "meshes:[{vert:[0,0,0,0.1,0,0,0,0.1,0,0,0,0.1],face:[0,2,1,0,1,3,0,3,2,1,2,3]}]"));
  free(page);
  long pixels = 0, drawn = 0, changed = 0, errors = -1;
  CHECK(browse(path("shapes.html"), &pixels, &drawn, &changed, &errors));
  CHECK(errors == 0 && drawn > pixels / 10 && changed > 200);
}

// a box at rest: drawn, but the picture at the end is the picture at t = 0
static void test_box_at_rest(void) {
  char args[1024];
  const char* model = box_data("rest.xml", "0.05", "0 0 0 0 0 0", 100, "rest.csv");
  snprintf(args, sizeof args, "view %s %s --out %s", model, path("rest.csv"), path("rest.html"));
  run_ok(args);
  long pixels = 0, drawn = 0, changed = -1, errors = -1;
  CHECK(browse(path("rest.html"), &pixels, &drawn, &changed, &errors));
  CHECK(errors == 0 && drawn > pixels / 10 && changed == 0);
  fprintf(stderr, "  box at rest: %ld pixels, %ld drawn, %ld changed, %ld errors\n", pixels, drawn, changed, errors);
}

// a trajectory file named with markup: escaped in the script, the page still runs
static void test_escaped_label(void) {
  char args[1024];
  const char* model = box_data("box3.xml", "0.3", "0 0 0 0 0 0", 50, "a<b>&.csv");
  snprintf(args, sizeof args, "view %s '%s' --title '</title><script>' --out %s", model, path("a<b>&.csv"),
           path("label.html"));
  run_ok(args);
  char* page = slurp(path("label.html"));
  CHECK(has(page, "label:\"a\\u003cb\\u003e\\u0026.csv\"") && strstr(page, "a<b>") == NULL);
  CHECK(has(page, "<title>&lt;/title&gt;&lt;script&gt;</title>"));
  free(page);
}

// a 10 s humanoid trajectory (2000 steps of 5 ms) makes a page of at most 2 MB
static void test_humanoid_size(void) {
  const char* humanoid = "/usr/share/mujoco/model/humanoid/humanoid.xml";
  char args[1024];
  snprintf(args, sizeof args, "simulate %s --steps 2000 --quiet --out %s", humanoid, path("humanoid.csv"));
  run_ok(args);
  snprintf(args, sizeof args, "view %s %s --contacts --quiet --out %s", humanoid, path("humanoid.csv"),
           path("humanoid.html"));
  run_ok(args);
  struct stat st;
  CHECK(stat(path("humanoid.html"), &st) == 0 && st.st_size > 900000 && st.st_size <= 2000000);
  fprintf(stderr, "  humanoid 10 s page: %ld bytes\n", (long)st.st_size);
}

// the command line's errors (exit 2) and bad input (exit 1): a message, no page
static void test_errors(void) {
  const char* model = box_data("box4.xml", "0.3", "0 0 0 0 0 0", 20, "short.csv");
  char args[1024];
  struct {
    const char* fmt;
    int code;
    const char* msg;
  } c[] = {
      {"view %s %s", 2, "--out FILE is required"},
      {"view %s --out %s", 2, "expected MODEL and at least one DATA"},
      {"view %s tests/data/no_such_file.csv --out %s", 1, "no_such_file.csv"},
      {"view %s %s --three /nonexistent --out %s", 1, "cannot read /nonexistent/three.min.js"},
      {"view tests/data/pendulum.xml %s --out %s", 1, "short.csv"},
  };
  for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
    unlink(path("bad.html"));
    if (i == 0) snprintf(args, sizeof args, c[i].fmt, model, path("short.csv"));
    else if (i == 1) snprintf(args, sizeof args, c[i].fmt, model, path("bad.html"));
    else if (i == 2) snprintf(args, sizeof args, c[i].fmt, model, path("bad.html"));
    else if (i == 3) snprintf(args, sizeof args, c[i].fmt, model, path("short.csv"), path("bad.html"));
    else snprintf(args, sizeof args, c[i].fmt, path("short.csv"), path("bad.html"));
    shRun r = run(args);
    CHECK(r.code == c[i].code);
    CHECK(has(r.err, c[i].msg));
    CHECK(access(path("bad.html"), F_OK) != 0);
    run_free(&r);
  }
  // the page may not replace its input
  snprintf(args, sizeof args, "view %s %s --out %s", model, path("short.csv"), path("short.csv"));
  shRun r = run(args);
  CHECK(r.code == 1);
  char* data = slurp(path("short.csv"));
  CHECK(strncmp(data, "t,q0", 4) == 0);
  free(data);
  run_free(&r);
}

int main(void) {
  g_bin = getenv("PHYS_BIN");
  CHECK_MSG(g_bin != NULL && access(g_bin, X_OK) == 0, "PHYS_BIN not set or not executable");
  if (!g_bin) return test_done();
  snprintf(g_dir, sizeof g_dir, "/tmp/test_cmd_view_XXXXXX");
  if (!mkdtemp(g_dir)) return 1;
  test_thrown_box();
  test_identify_replay();
  test_identify_replay_several();
  test_optimize_replay();
  test_all_geoms();
  test_box_at_rest();
  test_escaped_label();
  test_humanoid_size();
  test_errors();
  remove_scratch();
  return test_done();
}
