// test_output.c - the output files of the physid tool (tools/output.c, compiled into this test): what each kind
// of path gets (a new or regular file: a hidden temporary renamed over it, permissions kept; a symbolic link:
// followed, never replaced; a character device or a FIFO: written as it is, still a device afterwards; a folder,
// a dangling link, a block device, a missing folder: refused before anything is created), write errors
// (/dev/full: ENOSPC), the same file twice (device+inode, other spellings, links, a file in an input folder),
// several outputs that stand or fall together, leftovers of dead processes, and the signal cleanup (the
// handlers' call, and the default handler output.c installs where a command has none).
#include "output.c"

#include <stdarg.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

#include "test.h"

static char g_dir[128];       // scratch folder
static char g_msg[2048];      // the last cli_error message

// the tool's error printer, captured here
void cli_error(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(g_msg, sizeof g_msg, fmt, ap);
  va_end(ap);
}

// path of a file in the scratch folder (16 rotating buffers)
static const char* sp(const char* name) {
  static char buf[16][512];
  static int k = 0;
  k = (k + 1) % 16;
  snprintf(buf[k], sizeof buf[k], "%s/%s", g_dir, name);
  return buf[k];
}

// write text to a scratch file
static void put(const char* name, const char* text) {
  FILE* f = fopen(sp(name), "w");
  fputs(text, f);
  fclose(f);
}

// the content of a file ("" if unreadable) into buf
static const char* content(const char* p, char* buf, size_t n) {
  FILE* f = fopen(p, "r");
  size_t k = f ? fread(buf, 1, n - 1, f) : 0;
  if (f) fclose(f);
  buf[k] = 0;
  return buf;
}

// 1 if the message holds frag (prints it otherwise)
static int said(const char* frag) {
  if (strstr(g_msg, frag)) return 1;
  fprintf(stderr, "  message '%s' lacks '%s'\n", g_msg, frag);
  return 0;
}

// entries of the scratch folder whose names start with prefix
static int count(const char* prefix) {
  DIR* d = opendir(g_dir);
  int n = 0;
  for (struct dirent* e; d && (e = readdir(d));) n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
  if (d) closedir(d);
  return n;
}

// check, open, write text and commit one output; 1 on success (g_msg holds the error otherwise)
static int write_one(const char* path, const char* text) {
  cliOutput o;
  g_msg[0] = 0;
  if (!cli_output_check(&o, "--out", path) || !cli_output_open(&o)) return 0;
  fputs(text, o.f);
  return cli_output_commit(&o);
}

// a new file and a regular file: temporary ".NAME.physid-PID-XXXXXX" beside it only while open, then renamed;
// an existing file keeps its permissions; nothing is created by the check
static void test_regular(void) {
  cliOutput o;
  CHECK(cli_output_check(&o, "--out", sp("new.csv")) && o.kind == CLI_OUT_REPLACE && !o.exists);
  CHECK(count("") == 2);   // "." and "..": the check created nothing
  CHECK(cli_output_open(&o));
  char want[64];
  snprintf(want, sizeof want, ".new.csv.physid-%ld-", (long)getpid());
  CHECK(count(want) == 1 && strstr(o.tmp, want));
  fputs("abc\n", o.f);
  CHECK(cli_output_commit(&o));
  CHECK(count(".new.csv.physid-") == 0);
  char buf[64];
  CHECK(strcmp(content(sp("new.csv"), buf, sizeof buf), "abc\n") == 0);
  struct stat st;
  mode_t mask = umask(0);
  umask(mask);
  CHECK(stat(sp("new.csv"), &st) == 0 && (st.st_mode & 0777) == (0666 & ~mask));
  chmod(sp("new.csv"), 0640);
  CHECK(write_one(sp("new.csv"), "def\n"));
  CHECK(stat(sp("new.csv"), &st) == 0 && (st.st_mode & 0777) == 0640);
  CHECK(strcmp(content(sp("new.csv"), buf, sizeof buf), "def\n") == 0);
  // an aborted output leaves nothing and does not touch the target
  CHECK(cli_output_check(&o, "--out", sp("new.csv")) && cli_output_open(&o));
  fputs("partial", o.f);
  cli_output_abort(&o);
  CHECK(count(".new.csv.physid-") == 0 && strcmp(content(sp("new.csv"), buf, sizeof buf), "def\n") == 0);
}

// a symbolic link to a regular file stays a link, its target gets the data (the temporary lives in the target's
// folder); a link to a device writes the device; a dangling link is refused and left alone
static void test_links(void) {
  mkdir(sp("real"), 0755);
  put("real/t.csv", "old\n");
  symlink("real/t.csv", sp("link.csv"));
  CHECK(write_one(sp("link.csv"), "new\n"));
  struct stat st;
  char buf[64];
  CHECK(lstat(sp("link.csv"), &st) == 0 && S_ISLNK(st.st_mode));
  CHECK(strcmp(content(sp("real/t.csv"), buf, sizeof buf), "new\n") == 0);
  cliOutput o;
  CHECK(cli_output_check(&o, "--out", sp("link.csv")) && cli_output_open(&o));
  CHECK(strstr(o.tmp, "/real/.t.csv.physid-") != NULL);
  cli_output_abort(&o);
  symlink("/dev/null", sp("null.link"));
  int was = stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode);
  CHECK(write_one(sp("null.link"), "discarded\n"));
  CHECK(lstat(sp("null.link"), &st) == 0 && S_ISLNK(st.st_mode));
  CHECK(!was || (stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode)));
  symlink("nowhere/x.csv", sp("dangling"));
  CHECK(!cli_output_check(&o, "--out", sp("dangling")));
  CHECK(said("a symbolic link to a missing file"));
  CHECK(lstat(sp("dangling"), &st) == 0 && S_ISLNK(st.st_mode) && count("nowhere") == 0);
}

// character devices and FIFOs are written as they are: /dev/null stays a device, /dev/full fails with ENOSPC
// (on the flush: exit 1 in the tool), a device node made here stays one, a FIFO's reader gets the data
static void test_devices(void) {
  struct stat st;
  // /dev/null: a device before the run stays one (another process on this machine may have broken it already)
  int was = stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode);
  CHECK(write_one("/dev/null", "x\n"));
  CHECK(!was || (stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode) && major(st.st_rdev) == 1 &&
                 minor(st.st_rdev) == 3));
  if (!was) fprintf(stderr, "note: /dev/null is not a device on this machine; checked on a device node made here\n");
  CHECK(!write_one("/dev/full", "x\n"));
  CHECK(said("--out /dev/full: write error: No space left on device"));
  CHECK(stat("/dev/full", &st) == 0 && S_ISCHR(st.st_mode));
  CHECK(mknod(sp("mynull"), S_IFCHR | 0666, makedev(1, 3)) == 0);   // root: a null device of our own
  CHECK(write_one(sp("mynull"), "x\n"));
  CHECK(stat(sp("mynull"), &st) == 0 && S_ISCHR(st.st_mode));
  symlink("mynull", sp("mynull.link"));
  CHECK(write_one(sp("mynull.link"), "x\n"));
  CHECK(stat(sp("mynull"), &st) == 0 && S_ISCHR(st.st_mode) && lstat(sp("mynull.link"), &st) == 0 &&
        S_ISLNK(st.st_mode));
  CHECK(mkfifo(sp("fifo"), 0600) == 0);
  int rd = open(sp("fifo"), O_RDONLY | O_NONBLOCK);   // a reader, so that opening for writing does not block
  cliOutput o;
  CHECK(cli_output_check(&o, "--out", sp("fifo")) && o.kind == CLI_OUT_DIRECT && cli_output_open(&o));
  fputs("through the pipe\n", o.f);
  CHECK(cli_output_commit(&o));
  char buf[64] = "";
  ssize_t k = read(rd, buf, sizeof buf - 1);
  buf[k > 0 ? k : 0] = 0;
  CHECK(strcmp(buf, "through the pipe\n") == 0);
  close(rd);
  CHECK(stat(sp("fifo"), &st) == 0 && S_ISFIFO(st.st_mode));
  // "-" is stdout
  CHECK(cli_output_check(&o, "--out", "-") && o.kind == CLI_OUT_STDOUT);
  // a block device is refused without being opened
  if (mknod(sp("blk"), S_IFBLK | 0600, makedev(7, 200)) == 0) {
    CHECK(!cli_output_check(&o, "--out", sp("blk")) && said("is a block device"));
  }
}

// refused before anything is created: a folder, a path ending in '/', a missing folder, a file as a folder
static void test_refused(void) {
  cliOutput o;
  CHECK(!cli_output_check(&o, "--report", g_dir) && said("is a folder"));
  CHECK(!cli_output_check(&o, "--out", sp("missing/x.csv")) && said("missing: No such file or directory"));
  put("plain", "x");
  CHECK(!cli_output_check(&o, "--out", sp("plain/x.csv")) && said("Not a directory"));
  CHECK(!cli_output_check(&o, "--out", sp("real/")) && said("is a folder"));
}

// the same file twice: an output that is an input (also through another spelling, a hard link, a symbolic
// link, or a data file inside an input folder), two outputs at the same place (also both new)
static void test_conflicts(void) {
  put("model.xml", "<mujoco/>");
  mkdir(sp("real"), 0755);
  mkdir(sp("data"), 0755);
  put("data/a.csv", "t\n");
  put("data/notes.txt", "not data\n");
  link(sp("model.xml"), sp("hard.xml"));
  symlink("model.xml", sp("soft.xml"));
  const char* in[2] = {sp("model.xml"), sp("data")};
  char input0[512], input1[512];
  snprintf(input0, sizeof input0, "%s", in[0]);
  snprintf(input1, sizeof input1, "%s", in[1]);
  const char* input[2] = {input0, input1};
  const char* same[] = {"model.xml", "./model.xml", "data/../model.xml", "hard.xml", "soft.xml", "data/a.csv"};
  for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) {
    cliOutput o;
    CHECK(cli_output_check(&o, "--out", sp(same[i])));
    g_msg[0] = 0;
    CHECK_MSG(cli_output_conflicts(&o, 1, input, 2) && said("the same file as the input"), "%s", same[i]);
  }
  cliOutput o[3];
  CHECK(cli_output_check(o, "--out", sp("data/notes.txt")) && !cli_output_conflicts(o, 1, input, 2));
  CHECK(cli_output_check(o, "--out", sp("r.json")) && cli_output_check(o + 1, "--report", sp("./real/../r.json")));
  CHECK(cli_output_check(o + 2, "--write-model", NULL));
  CHECK(cli_output_conflicts(o, 3, input, 2) && said("--report") && said("the same file as --out"));
  CHECK(cli_output_check(o + 1, "--report", sp("r.html")) && !cli_output_conflicts(o, 3, input, 2));
  CHECK(cli_output_check(o, "--out", sp("hard.xml")) && cli_output_check(o + 1, "--report", sp("soft.xml")));
  CHECK(cli_output_conflicts(o, 2, NULL, 0) && said("the same file as --out"));
  CHECK(mknod(sp("null2"), S_IFCHR | 0666, makedev(1, 3)) == 0);
  CHECK(cli_output_check(o, "--out", sp("null2")) && cli_output_check(o + 1, "--report", sp("null2")));
  CHECK(!cli_output_conflicts(o, 2, NULL, 0));   // one device may take several outputs
  unlink(sp("null2"));
  CHECK(cli_output_check(o, "--out", "-") && cli_output_check(o + 1, "--report", "-"));
  CHECK(cli_output_conflicts(o, 2, NULL, 0) && said("the same file as --out -"));
  CHECK(count(".") == 2);   // "." and "..": no temporary anywhere
  rmdir(sp("real"));
}

// several outputs: one fails (/dev/full), so none is renamed and every temporary is removed
static void test_all_or_none(void) {
  cliOutput o[3];
  CHECK(cli_output_check(o, "--out", sp("all.json")) && cli_output_check(o + 1, "--report", "/dev/full"));
  CHECK(cli_output_check(o + 2, "--write-model", sp("all.xml")));
  for (int i = 0; i < 3; i++) {
    CHECK(cli_output_open(o + i));
    fprintf(o[i].f, "output %d\n", i);
  }
  CHECK(!cli_outputs_commit(o, 3) && said("/dev/full: write error: No space left on device"));
  CHECK(count("all.") == 0 && count(".all.") == 0);
  CHECK(cli_output_check(o + 1, "--report", sp("all.html")));
  for (int i = 0; i < 3; i++) CHECK(cli_output_open(o + i) && fprintf(o[i].f, "output %d\n", i) > 0);
  CHECK(cli_outputs_commit(o, 3) && count("all.") == 3 && count(".all.") == 0);
}

// leftovers: a temporary of a process that no longer exists is removed by the next run writing the same target;
// a live process's temporary and another target's leftover are kept; the signal cleanup removes live ones
static void test_leftovers(void) {
  pid_t dead = fork();
  if (dead == 0) _exit(0);
  waitpid(dead, NULL, 0);
  char a[128], b[128], c[128];
  snprintf(a, sizeof a, ".out.csv.physid-%ld-AbC123", (long)dead);
  snprintf(b, sizeof b, ".out.csv.physid-%ld-XyZ789", (long)getppid());
  snprintf(c, sizeof c, ".other.csv.physid-%ld-AbC123", (long)dead);
  put(a, "stale");
  put(b, "live");
  put(c, "stale, another target");
  CHECK(write_one(sp("out.csv"), "fresh\n"));
  CHECK(access(sp(a), F_OK) != 0 && access(sp(b), F_OK) == 0 && access(sp(c), F_OK) == 0);
  cliOutput o;
  CHECK(cli_output_check(&o, "--out", sp("sig.csv")) && cli_output_open(&o));
  CHECK(count(".sig.csv.physid-") == 1);
  cli_output_remove_temporaries();
  CHECK(count(".sig.csv.physid-") == 0 && access(sp("sig.csv"), F_OK) != 0);
  fclose(o.f);
  unlink(sp(b));
  unlink(sp(c));
}

// a command without a signal handler of its own (jacobian, evaluate): SIGTERM or SIGINT while a temporary exists
// removes it, and the process still dies of the signal
static void test_signal_default(void) {
  const int sig[2] = {SIGTERM, SIGINT};
  for (int i = 0; i < 2; i++) {
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
      signal(sig[i], SIG_DFL);
      cliOutput o;
      if (!cli_output_check(&o, "--json", sp("sig.json")) || !cli_output_open(&o)) _exit(3);
      fputs("partial", o.f);
      fflush(o.f);
      raise(sig[i]);
      _exit(4);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK_MSG(WIFSIGNALED(status) && WTERMSIG(status) == sig[i], "status %d", status);
    CHECK(count(".sig.json.physid-") == 0 && access(sp("sig.json"), F_OK) != 0);
  }
}

// a target that changes kind between the check and the open is refused
static void test_changed(void) {
  cliOutput o;
  CHECK(cli_output_check(&o, "--out", sp("later")));
  mkdir(sp("later"), 0755);
  CHECK(!cli_output_open(&o) && said("is a folder"));
  rmdir(sp("later"));
  CHECK(cli_output_check(&o, "--out", "/dev/full") && o.kind == CLI_OUT_DIRECT);
  CHECK(cli_output_open(&o) && cli_output_commit(&o));   // nothing written: nothing to fail
}

int main(void) {
  snprintf(g_dir, sizeof g_dir, "/tmp/test_output_XXXXXX");
  if (!mkdtemp(g_dir)) return 1;
  test_regular();
  test_links();
  test_devices();
  test_refused();
  char sub[64];
  memcpy(sub, g_dir, sizeof sub);
  strcat(g_dir, "/c");   // an empty folder for the tests that count entries
  mkdir(g_dir, 0755);
  test_conflicts();
  test_all_or_none();
  test_leftovers();
  test_signal_default();
  test_changed();
  char cmd[160];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", sub);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", sub);
  return test_done();
}
