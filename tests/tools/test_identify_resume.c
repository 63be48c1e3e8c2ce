// test_identify_resume.c - `physid identify --checkpoint FILE [--resume]` as a user runs it (env PHYS_BIN; the
// tests run in the source folder): killed with SIGKILL right after the checkpoint of an iteration (the CLI's
// test hook PHYSID_TEST_KILL_AFTER_ITER) for LM, L-BFGS-B and Adam, with one and two starts, then resumed
// with the same command: result.json is the uninterrupted run's, byte for byte but for "time"; one real
// SIGKILL sent at a moment the test does not choose (once the first checkpoint exists) and resumed: the same;
// the job file's keys; the command-line errors (exit 2) and bad checkpoints (exit 1, the file named, nothing
// changed); --resume without a checkpoint starts fresh and says so.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sh_run.h"
#include "result_cmp.h"
#include "test.h"

extern char** environ;

// the fit of every run: the cube's friction and restitution from the first toss
#define FIT "identify models/cube.xml data/cube_toss --files 1 --param friction:cube --param restitution:cube"

// the scratch path of name into buf (300 bytes: path()'s buffers rotate)
static void keep(char* buf, const char* name) {
  snprintf(buf, 300, "%s", path(name));
}

// 1 if the file exists
static int exists(const char* p) {
  struct stat sb;
  return lstat(p, &sb) == 0;
}

// run physid ARGS with the test hook set to KILL ("S:K"); 1 if it died of SIGKILL (sh reports 128 + 9, or
// passes the signal on)
static int run_killed(const char* kill_at, const char* args) {
  setenv("PHYSID_TEST_KILL_AFTER_ITER", kill_at, 1);
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "'%s' %s > '%s/.out' 2> '%s/.err'", g_bin, args, g_dir, g_dir);
  int st = system(cmd);
  unsetenv("PHYSID_TEST_KILL_AFTER_ITER");
  return (WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL) || (WIFEXITED(st) && WEXITSTATUS(st) == 128 + SIGKILL);
}

// for lm, lbfgsb, adam (40 iterations) with 1 and 2 starts: killed by the hook after iteration K of start S,
// resumed with the same command: exit 0, "resuming from CK: start S, iteration K" on stderr, result.json equal
// to the uninterrupted run's but for time; no result file was left by the killed run, no temporary by either
static void test_hook_kill(void) {
  // LM with identify's default on these data, the staged fit (stages 1 and 2 from the recorded samples with every
  // start, not checkpointed: a resume repeats them; stage 3 with the segment starts fitted, one start, checkpointed);
  // LM with the starts fitted from the first iteration (--fit-start on: every start checkpointed); the others from
  // the recorded starts (a third of the time)
  static const char* const opt[4] = {"lm", "lm --fit-start on", "lbfgsb --fit-start off",
                                     "adam --iters 40 --fit-start off"};
  static const char* const at[2][2] = {{"0:0", "0:3"}, {"0:2", "1:1"}};   // [starts - 1][point]
  char args[2048], want[512], tmp[320];
  char ck[300];
  keep(ck, "c.ckpt");
  char ref[300];
  keep(ref, "ref.json");
  char out[300];
  keep(out, "res.json");
  snprintf(tmp, sizeof tmp, "%s.physid-tmp", ck);
  int nsame = 0, nrun = 0;
  for (int o = 0; o < 4; o++)
    for (int starts = 1; starts <= 2; starts++) {
      const char* const* kill = at[o == 0 ? 0 : starts - 1];   // the staged fit's stage 3 has one start
      snprintf(args, sizeof args, FIT " --optimizer %s --starts %d --quiet --out '%s'", opt[o], starts, ref);
      shRun r = run(args);
      CHECK_MSG(r.code == 0, "%s", r.err);
      run_free(&r);
      for (int p = 0; p < 2; p++) {
#ifdef PHYS_TEST_SANITIZE
        // the sanitizer build (4-6x slower) kills each (optimizer, starts) at one of its two points, alternating:
        // every optimizer is still killed at both points and at every kind of point (the first iteration, a later
        // one, the second start); the release build kills at all of them
        if (p != (o + starts) % 2) continue;
#endif
        unlink(ck);
        unlink(out);
        snprintf(args, sizeof args, FIT " --optimizer %s --starts %d --checkpoint '%s' --out '%s'", opt[o], starts,
                 ck, out);
        CHECK_MSG(run_killed(kill[p], args), "%s starts %d kill at %s", opt[o], starts, kill[p]);
        CHECK(exists(ck) && !exists(out) && !exists(tmp));
        size_t len = strlen(args);
        snprintf(args + len, sizeof args - len, " --resume");
        r = run(args);
        int s, k;
        sscanf(kill[p], "%d:%d", &s, &k);
        snprintf(want, sizeof want, "fit: resuming from %s: start %d, iteration %d\n", ck, s, k);
        CHECK_MSG(r.code == 0 && strstr(r.err, want), "exit %d, stderr lacks '%s':\n%s", r.code, want, r.err);
        int same = same_result(ref, out);
        CHECK_MSG(same, "%s starts %d killed at %s", opt[o], starts, kill[p]);
        CHECK(!exists(tmp));
        nsame += same, nrun++;
        run_free(&r);
      }
    }
  printf("killed by the hook and resumed: %d of %d result.json identical but for time\n", nsame, nrun);
}

// 1 if the two files hold the same bytes
static int same_bytes(const char* a, const char* b) {
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "cmp -s '%s' '%s'", a, b);
  return system(cmd) == 0;
}

// one SIGKILL at a moment the test does not choose: Adam for 400 iterations (about 1 s) started in the
// background, killed 0.1 s after its first checkpoint appeared, then resumed: result.json as the uninterrupted
// run's but for time, the report and the written model byte for byte
static void test_real_kill(void) {
  char ck[300];
  keep(ck, "k.ckpt");
  char ref[300];
  keep(ref, "kref.json");
  char out[300];
  keep(out, "kres.json");
  char args[2048];
  char html[2][300], xml[2][300];
  keep(html[0], "kref.html");
  keep(html[1], "kres.html");
  keep(xml[0], "kref.xml");
  keep(xml[1], "kres.xml");
  // (the segment starts as recorded: 400 Adam iterations with fitted starts take minutes; the hook test above
  // resumes fits with fitted starts, identify's default on these data)
  snprintf(args, sizeof args, FIT " --optimizer adam --lr 1e-3 --iters 400 --fit-start off --quiet --out '%s' "
           "--report '%s' --write-model '%s'", ref, html[0], xml[0]);
  shRun r = run(args);
  CHECK_MSG(r.code == 0, "%s", r.err);
  run_free(&r);
  unlink(ck);
  char outs[300], errs[300];
  keep(outs, ".kout");
  keep(errs, ".kerr");
  const char* argv[] = {g_bin, "identify", "models/cube.xml", "data/cube_toss", "--files", "1", "--param",
                        "friction:cube", "--param", "restitution:cube", "--optimizer", "adam", "--lr", "1e-3",
                        "--iters", "400", "--fit-start", "off", "--checkpoint", ck, "--out", out, NULL};
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, outs, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, errs, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid;
  int ok = posix_spawn(&pid, g_bin, &fa, NULL, (char* const*)argv, environ) == 0;
  posix_spawn_file_actions_destroy(&fa);
  CHECK(ok);
  if (!ok) return;
  for (int i = 0; i < 2000 && !exists(ck); i++) {   // at most 20 s
    struct timespec ts = {0, 10000000};
    nanosleep(&ts, NULL);
  }
  CHECK(exists(ck));
  struct timespec ts = {0, 100000000};
  nanosleep(&ts, NULL);
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  CHECK_MSG(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "the fit was not killed (exit %d): it ended first",
            WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  CHECK(!exists(out));
  snprintf(args, sizeof args, FIT " --optimizer adam --lr 1e-3 --iters 400 --fit-start off --checkpoint '%s' "
           "--out '%s' --resume --report '%s' --write-model '%s'", ck, out, html[1], xml[1]);
  r = run(args);
  const char* at = strstr(r.err, "fit: resuming from ");
  int start = -1, iter = -1;
  if (at) at = strstr(at, ": start ");
  if (at) sscanf(at, ": start %d, iteration %d", &start, &iter);
  CHECK_MSG(r.code == 0 && start == 0 && iter >= 0 && iter < 399, "exit %d start %d iteration %d:\n%s", r.code,
            start, iter, r.err);
  int same = same_result(ref, out);
  CHECK(same);
  CHECK(same_bytes(html[0], html[1]) && same_bytes(xml[0], xml[1]));
  printf("SIGKILL 0.1 s after the first checkpoint, resumed from iteration %d of 400: result.json %s\n", iter,
         same ? "identical but for time" : "DIFFERENT");
  run_free(&r);
}

// the job file's keys "checkpoint" and "resume" act as the options; a non-boolean resume is an error
static void test_job(void) {
  char ck[300];
  keep(ck, "j.ckpt");
  char ref[300];
  keep(ref, "jref.json");
  char out[300];
  keep(out, "jres.json");
  char args[2048], job[2048];
  snprintf(args, sizeof args, FIT " --quiet --out '%s'", ref);
  shRun r = run(args);
  CHECK(r.code == 0);
  run_free(&r);
  snprintf(job, sizeof job, "{\"checkpoint\": \"%s\", \"out\": \"%s\"}", ck, out);
  snprintf(args, sizeof args, FIT " --job '%s'", put("j1.json", job));
  unlink(ck);
  CHECK(run_killed("0:2", args));
  snprintf(job, sizeof job, "{\"checkpoint\": \"%s\", \"resume\": true, \"out\": \"%s\"}", ck, out);
  snprintf(args, sizeof args, FIT " --job '%s'", put("j2.json", job));
  r = run(args);
  CHECK_MSG(r.code == 0 && strstr(r.err, "iteration 2\n"), "%s", r.err);
  CHECK(same_result(ref, out));
  run_free(&r);
  snprintf(args, sizeof args, FIT " --job '%s'", put("j3.json", "{\"checkpoint\": \"x\", \"resume\": \"yes\"}"));
  r = run(args);
  CHECK_MSG(r.code == 1 && strstr(r.err, "key 'resume': expected true or false"), "%d %s", r.code, r.err);
  run_free(&r);
}

// errors: --resume alone (exit 2); a checkpoint that is also an output and one in a missing folder (exit 1
// before the fit, as every output: tools/output.c); with --resume a corrupt file, a
// file that is not a checkpoint and another fit's checkpoint (other weights; exit 1, named, unchanged);
// without --resume a file that is not a checkpoint is never replaced; --resume with no file yet starts fresh
// and says so
static void test_errors(void) {
  char args[2048];
  char ck[300];
  keep(ck, "e.ckpt");
  shRun r = run(FIT " --resume");
  CHECK_MSG(r.code == 2 && strstr(r.err, "--resume needs --checkpoint FILE"), "%d %s", r.code, r.err);
  run_free(&r);
  snprintf(args, sizeof args, FIT " --checkpoint '%s' --out '%s'", ck, ck);
  r = run(args);
  CHECK_MSG(r.code == 1 && strstr(r.err, "--checkpoint") && strstr(r.err, "the same file as --out"), "%d %s", r.code,
            r.err);
  run_free(&r);
  // a folder that does not exist: an error before the fit
  snprintf(args, sizeof args, FIT " --quiet --checkpoint '%s/none/x.ckpt' --out '%s'", g_dir, path("n.json"));
  r = run(args);
  CHECK_MSG(r.code == 1 && strstr(r.err, "--checkpoint") && strstr(r.err, "none: No such file or directory"), "%d %s",
            r.code, r.err);
  CHECK(!exists(path("n.json")));
  run_free(&r);
  // a fresh start, then a checkpoint of another fit (another initial friction): refused, the file unchanged
  snprintf(args, sizeof args, FIT " --checkpoint '%s' --resume", ck);
  unlink(ck);
  r = run(args);
  CHECK_MSG(r.code == 0 && strstr(r.err, "yet: starting fresh"), "%s", r.err);
  run_free(&r);
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "cp '%s' '%s.copy'", ck, ck);
  CHECK(system(cmd) == 0);
  snprintf(args, sizeof args, FIT " --weights 1000,100,1 --quiet --checkpoint '%s' --resume", ck);
  r = run(args);
  CHECK_MSG(r.code == 1 && strstr(r.err, ck) && strstr(r.err, "another fit (different fit options)"), "%d %s", r.code,
            r.err);
  run_free(&r);
  snprintf(cmd, sizeof cmd, "cmp -s '%s' '%s.copy'", ck, ck);
  CHECK(system(cmd) == 0);
  // corrupt: the first 100 bytes only
  char* bytes = slurp(ck);
  FILE* f = fopen(path("t.ckpt"), "wb");
  fwrite(bytes, 1, 100, f);
  fclose(f);
  free(bytes);
  snprintf(args, sizeof args, FIT " --quiet --checkpoint '%s' --resume", path("t.ckpt"));
  r = run(args);
  CHECK_MSG(r.code == 1 && strstr(r.err, "t.ckpt: corrupt checkpoint"), "%d %s", r.code, r.err);
  run_free(&r);
  // the model itself as the checkpoint: refused with and without --resume, the model unchanged
  const char* model = put("m.xml", "<mujoco><worldbody/></mujoco>\n");
  for (int resume = 0; resume < 2; resume++) {
    snprintf(args, sizeof args, FIT " --quiet --checkpoint '%s'%s", model, resume ? " --resume" : "");
    r = run(args);
    CHECK_MSG(r.code == 1 && strstr(r.err, "m.xml") && strstr(r.err, "not a physid checkpoint"), "%d %s", r.code,
              r.err);
    run_free(&r);
  }
  char* m = slurp(model);
  CHECK(strcmp(m, "<mujoco><worldbody/></mujoco>\n") == 0);
  free(m);
}

int main(void) {
  g_bin = getenv("PHYS_BIN");
  CHECK_MSG(g_bin != NULL && access(g_bin, X_OK) == 0, "PHYS_BIN not set or not executable");
  if (!g_bin) return test_done();
  struct stat sb;   // tmpfs when there is one (no disk for the checkpoints' fsyncs)
  int shm = stat("/dev/shm", &sb) == 0 && S_ISDIR(sb.st_mode) && access("/dev/shm", W_OK) == 0;
  snprintf(g_dir, sizeof g_dir, "%s/test_identify_resume_XXXXXX", shm ? "/dev/shm" : "/tmp");
  if (!mkdtemp(g_dir)) return 1;
  test_errors();
  test_job();
  test_hook_kill();
  test_real_kill();
  remove_scratch();
  return test_done();
}
