// test_trajio.c - trajectory CSV: exact round trip (activation columns act0.. included), strict validation with
// file:line:column messages,
// quaternion checks, the input limits (only regular files and FIFOs, lines of at most 1 MiB, no NUL byte, a
// row limit, "out of memory" when an allocation fails). The model is built by hand (free joint 'root' +
// hinge 'elbow' + ball 'wrist').
#include "trajio.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"
#include "test_fifo.h"

// hand-made model: free (q 0..6, v 0..5), hinge (q 7, v 6), ball (q 8..11, v 7..9): nq 12, nv 10
static int g_type[3] = {PHYS_JNT_FREE, PHYS_JNT_HINGE, PHYS_JNT_BALL};
static int g_qadr[3] = {0, 7, 8};
static int g_name[3] = {0, 5, 11};
static char g_names[] = "root\0elbow\0wrist";
static char g_dir[64];

// the hand-made model
static physModel make_model(void) {
  physModel m;
  memset(&m, 0, sizeof m);
  m.nq = 12;
  m.nv = 10;
  m.njnt = 3;
  m.jnt_type = g_type;
  m.jnt_qposadr = g_qadr;
  m.jnt_name = g_name;
  m.names = g_names;
  m.nnames = sizeof g_names;
  return m;
}

// path of a file in the test folder
static const char* path(const char* name) {
  static char buf[256];
  snprintf(buf, sizeof buf, "%s/%s", g_dir, name);
  return buf;
}

// write text to a file in the test folder and return its path
static const char* write_file(const char* name, const char* text) {
  const char* p = path(name);
  FILE* f = fopen(p, "w");
  fputs(text, f);
  fclose(f);
  return p;
}

// a valid state row for the model (unit quaternions), as text without the time column
static const char* state_text(void) {
  return "1,2,3,1,0,0,0,0.5,0.5,0.5,0.5,0.5,0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9,1.0";
}

static const char* header = "t,q0,q1,q2,q3,q4,q5,q6,q7,q8,q9,q10,q11,v0,v1,v2,v3,v4,v5,v6,v7,v8,v9\n";

// 1 if the log's error contains every given fragment (up to 3; NULL ends)
static int msg_has(const physLog* log, const char* a, const char* b, const char* c) {
  const char* frag[3] = {a, b, c};
  for (int i = 0; i < 3; i++) {
    if (frag[i] && !strstr(log->error, frag[i])) {
      fprintf(stderr, "  message '%s' lacks '%s'\n", log->error, frag[i]);
      return 0;
    }
  }
  return 1;
}

// read a file's single trajectory and return the status, the log filled
static physStatus read_text(physLog* log, const char* name, const char* text, int flags) {
  physModel m = make_model();
  physTraj t;
  memset(log, 0, sizeof *log);
  physStatus s = phys_traj_read(&t, &m, write_file(name, text), flags, log);
  phys_traj_free(&t);
  return s;
}

// write 5 rows of awkward doubles and read them back bit for bit
static void test_round_trip(void) {
  physModel m = make_model();
  double special[] = {0.1, -0.0, 5e-324, DBL_MAX, -DBL_MIN, 1.0 / 3.0, 2.0 / 3.0 * 1e-300, 123456789.123};
  double t[5], q[5][12], v[5][10];
  unsigned x = 12345;
  for (int r = 0; r < 5; r++) {
    t[r] = r * 0.002 + 1.0 / 7.0;
    for (int i = 0; i < 12; i++) {
      x = x * 1103515245u + 12345u;
      q[r][i] = ((double)(x >> 8) / (1 << 24) - 0.5) * 1e3 / (i + 1);
    }
    for (int i = 0; i < 10; i++) v[r][i] = special[(r + i) % 8];
    // unit quaternions (normalized in double: read back untouched)
    double n1 = sqrt(q[r][3] * q[r][3] + q[r][4] * q[r][4] + q[r][5] * q[r][5] + q[r][6] * q[r][6]);
    double n2 = sqrt(q[r][8] * q[r][8] + q[r][9] * q[r][9] + q[r][10] * q[r][10] + q[r][11] * q[r][11]);
    for (int k = 0; k < 4; k++) q[r][3 + k] /= n1, q[r][8 + k] /= n2;
  }
  FILE* f = fopen(path("rt.csv"), "w");
  CHECK(phys_traj_write_header(f, &m) == PHYS_OK);
  for (int r = 0; r < 5; r++) CHECK(phys_traj_write_row(f, &m, t[r], q[r], v[r]) == PHYS_OK);
  fclose(f);

  physLog log = {0};
  physTraj tr;
  CHECK(phys_traj_read(&tr, &m, path("rt.csv"), 0, &log) == PHYS_OK);
  CHECK(tr.nrow == 5 && tr.has_time == 1 && tr.nq == 12 && tr.nv == 10);
  CHECK(tr.nrow == 5 && tr.line[0] == 2 && tr.line[4] == 6);
  int same = tr.nrow == 5;
  for (int r = 0; same && r < 5; r++) {
    same = memcmp(&tr.time[r], &t[r], sizeof(double)) == 0 &&
           memcmp(tr.qpos + 12 * r, q[r], sizeof q[r]) == 0 &&
           memcmp(tr.qvel + 10 * r, v[r], sizeof v[r]) == 0;
  }
  CHECK(same);
  CHECK(tr.nrow == 5 && signbit(tr.qvel[1]));   // -0.0 keeps its sign (row 0, v1 = special[1])
  phys_traj_free(&tr);
  CHECK(tr.qpos == NULL && tr.nrow == 0);
}

// header problems: wrong name, wrong count, missing t, empty file, header only
static void test_header_errors(void) {
  physLog log;
  char text[512];
  snprintf(text, sizeof text, "t,q0,q1,x,q3,q4,q5,q6,q7,q8,q9,q10,q11,v0,v1,v2,v3,v4,v5,v6,v7,v8,v9\n"
                              "0,%s\n", state_text());
  CHECK(read_text(&log, "h1.csv", text, 0) == PHYS_ERR_PARSE);
  CHECK(msg_has(&log, "h1.csv:1:", "'x'", "expected 'q2'"));

  snprintf(text, sizeof text, "t,q0,q1\n0,1,2\n");
  CHECK(read_text(&log, "h2.csv", text, 0) == PHYS_ERR_SIZE);
  CHECK(msg_has(&log, "h2.csv:1:", "expected 23 columns", "found 3"));
  CHECK(msg_has(&log, "t,q0..q11,v0..v9", "nq=12, nv=10", NULL));

  // without the time column: an error for trajectories, fine for init states
  snprintf(text, sizeof text, "q0,q1,q2,q3,q4,q5,q6,q7,q8,q9,q10,q11,v0,v1,v2,v3,v4,v5,v6,v7,v8,v9\n%s\n",
           state_text());
  CHECK(read_text(&log, "h3.csv", text, 0) == PHYS_ERR_SIZE);
  CHECK(msg_has(&log, "h3.csv:1:", "expected 23 columns", "found 22"));
  CHECK(read_text(&log, "h3.csv", text, PHYS_TRAJ_TIME_OPTIONAL) == PHYS_OK);

  CHECK(read_text(&log, "empty.csv", "", 0) == PHYS_ERR_PARSE);
  CHECK(msg_has(&log, "empty.csv:", "empty file", NULL));
  CHECK(read_text(&log, "honly.csv", header, 0) == PHYS_ERR_PARSE);
  CHECK(msg_has(&log, "honly.csv:", "no data rows", NULL));

  physModel m = make_model();
  physTraj t;
  memset(&log, 0, sizeof log);
  CHECK(phys_traj_read(&t, &m, path("does-not-exist.csv"), 0, &log) == PHYS_ERR_IO);
  CHECK(msg_has(&log, "does-not-exist.csv", "cannot open", NULL));
}

// a data row whose field `col` (0-based, t is 0) is replaced by `value`; returns the file text
static const char* row_with(char* text, size_t n, int col, const char* value) {
  char row[256];
  snprintf(row, sizeof row, "0.5,%s", state_text());
  char* fields[32];
  int nf = 0;
  for (char* tok = strtok(row, ","); tok; tok = strtok(NULL, ",")) fields[nf++] = tok;
  size_t len = (size_t)snprintf(text, n, "%s0,%s\n", header, state_text());
  for (int i = 0; i < nf; i++) {
    len += (size_t)snprintf(text + len, n - len, "%s%s", i ? "," : "", i == col ? value : fields[i]);
  }
  snprintf(text + len, n - len, "\n");
  return text;
}

// values: NaN, inf, overflow, garbage, empty; each names file:line and the column
static void test_value_errors(void) {
  physLog log;
  char text[1024];
  CHECK(read_text(&log, "nan.csv", row_with(text, sizeof text, 4, "nan"), 0) == PHYS_ERR_VALUE);
  CHECK(msg_has(&log, "nan.csv:3:", "column 'q3'", "not finite"));
  CHECK(read_text(&log, "inf.csv", row_with(text, sizeof text, 14, "-inf"), 0) == PHYS_ERR_VALUE);
  CHECK(msg_has(&log, "inf.csv:3:", "column 'v1'", "not finite"));
  CHECK(read_text(&log, "big.csv", row_with(text, sizeof text, 0, "1e999"), 0) == PHYS_ERR_VALUE);
  CHECK(msg_has(&log, "big.csv:3:", "column 't'", NULL));
  CHECK(read_text(&log, "abc.csv", row_with(text, sizeof text, 8, "0.5abc"), 0) == PHYS_ERR_PARSE);
  CHECK(msg_has(&log, "abc.csv:3:", "column 'q7'", "'0.5abc' is not a number"));
  CHECK(read_text(&log, "sp.csv", row_with(text, sizeof text, 8, " 0.25 "), 0) == PHYS_OK);

  // an empty field: two commas in a row (strtok in row_with cannot make it; write by hand)
  snprintf(text, sizeof text, "%s0,1,2,,1,0,0,0,0.5,0.5,0.5,0.5,0.5,0,0,0,0,0,0,0,0,0,0\n", header);
  CHECK(read_text(&log, "emptyval.csv", text, 0) == PHYS_ERR_PARSE);
  CHECK(msg_has(&log, "emptyval.csv:2:", "column 'q2'", "empty value"));

  // short row on line 3
  snprintf(text, sizeof text, "%s0,%s\n0,1,2\n", header, state_text());
  CHECK(read_text(&log, "short.csv", text, 0) == PHYS_ERR_SIZE);
  CHECK(msg_has(&log, "short.csv:3:", "expected 23 columns", "found 3"));
}

// blank lines, CRLF line ends, byte-order mark
static void test_layout_tolerance(void) {
  physLog log;
  char text[1024];
  snprintf(text, sizeof text, "%s0,%s\n\n0,%s\n", header, state_text(), state_text());
  CHECK(read_text(&log, "blank.csv", text, 0) == PHYS_ERR_PARSE);
  CHECK(msg_has(&log, "blank.csv:3:", "blank line", NULL));
  snprintf(text, sizeof text, "%s0,%s\n\n  \n", header, state_text());
  CHECK(read_text(&log, "trail.csv", text, 0) == PHYS_OK);
  snprintf(text, sizeof text, "\xEF\xBB\xBFt,q0,q1,q2,q3,q4,q5,q6,q7,q8,q9,q10,q11,v0,v1,v2,v3,v4,v5,v6,v7,"
                              "v8,v9\r\n0,%s\r\n", state_text());
  physModel m = make_model();
  physTraj t;
  memset(&log, 0, sizeof log);
  CHECK(phys_traj_read(&t, &m, write_file("crlf.csv", text), 0, &log) == PHYS_OK);
  CHECK(t.nrow == 1 && t.qvel[9] == 1.0);
  phys_traj_free(&t);
}

// one-row init states: t optional, exactly one row
static void test_read_state(void) {
  physModel m = make_model();
  physLog log = {0};
  double time = -1, q[12], v[10];
  char text[1024];
  snprintf(text, sizeof text, "q0,q1,q2,q3,q4,q5,q6,q7,q8,q9,q10,q11,v0,v1,v2,v3,v4,v5,v6,v7,v8,v9\n%s\n",
           state_text());
  CHECK(phys_traj_read_state(&time, q, v, &m, write_file("init1.csv", text), &log) == PHYS_OK);
  CHECK(time == 0 && q[0] == 1 && q[7] == 0.5 && v[0] == 0.1 && v[9] == 1.0);
  snprintf(text, sizeof text, "%s2.5,%s\n", header, state_text());
  CHECK(phys_traj_read_state(&time, q, v, &m, write_file("init2.csv", text), &log) == PHYS_OK);
  CHECK(time == 2.5);
  snprintf(text, sizeof text, "%s0,%s\n1,%s\n", header, state_text(), state_text());
  memset(&log, 0, sizeof log);
  CHECK(phys_traj_read_state(&time, q, v, &m, write_file("init3.csv", text), &log) == PHYS_ERR_SIZE);
  CHECK(msg_has(&log, "init3.csv:3:", "exactly one state row", "found 2"));
}

// quaternions: off by more than 1e-6 rejected naming the joint; within, normalized
static void test_quaternions(void) {
  physModel m = make_model();
  physLog log = {0};
  double q[12] = {0, 0, 0, 1.1, 0, 0, 0, 0, 1, 0, 0, 0};
  CHECK(phys_traj_check_quat(q, &m, "f.csv", 7, &log) == PHYS_ERR_VALUE);
  CHECK(msg_has(&log, "f.csv:7:", "joint 'root' (free)", "q3..q6"));
  q[3] = 1;
  q[8] = 0.5;
  memset(&log, 0, sizeof log);    // the log keeps the first error: a fresh one per failing call
  CHECK(phys_traj_check_quat(q, &m, "f.csv", 8, &log) == PHYS_ERR_VALUE);
  CHECK(msg_has(&log, "f.csv:8:", "joint 'wrist' (ball)", "q8..q11"));
  q[8] = 1 + 9e-7;       // within tolerance: normalized
  q[3] = 0.6 * (1 - 9e-7);
  q[4] = 0.8 * (1 - 9e-7);
  CHECK(phys_traj_check_quat(q, &m, "f.csv", 9, &log) == PHYS_OK);
  CHECK_NEAR(q[3], 0.6, 1e-15);
  CHECK_NEAR(q[4], 0.8, 1e-15);
  CHECK(q[8] == 1.0);
  q[8] = 1 + 1.1e-6;
  CHECK(phys_traj_check_quat(q, &m, "f.csv", 9, &log) == PHYS_ERR_VALUE);
  q[8] = NAN;
  CHECK(phys_traj_check_quat(q, &m, "f.csv", 9, &log) == PHYS_ERR_VALUE);

  // the same through a file: row 2 bad
  char text[1024];
  snprintf(text, sizeof text, "%s0,%s\n0,1,2,3,2,0,0,0,0.5,0.5,0.5,0.5,0.5,0,0,0,0,0,0,0,0,0,0\n", header,
           state_text());
  CHECK(read_text(&log, "quat.csv", text, 0) == PHYS_ERR_VALUE);
  CHECK(msg_has(&log, "quat.csv:3:", "joint 'root'", "norm 2"));
}

//---------------------------------------------------------------------------------------------------------
// input limits

// a device, a folder: refused by name and kind before anything is read; a FIFO is read like a file
static void test_input_kinds(void) {
  physModel m = make_model();
  physLog log = {0};
  physTraj t;
  CHECK(phys_traj_read(&t, &m, "/dev/zero", 0, &log) == PHYS_ERR_IO);
  CHECK(msg_has(&log, "/dev/zero: is a character device", "only regular files and FIFOs are read", NULL));
  memset(&log, 0, sizeof log);
  CHECK(phys_traj_read(&t, &m, g_dir, 0, &log) == PHYS_ERR_IO);
  CHECK(msg_has(&log, g_dir, ": is a folder", NULL));
  char text[1024];
  snprintf(text, sizeof text, "%s0.5,%s\n1.5,%s\n", header, state_text(), state_text());
  pid_t pid = test_fifo_feed(path("fifo.csv"), text, strlen(text));
  CHECK(pid > 0);
  memset(&log, 0, sizeof log);
  CHECK_MSG(phys_traj_read(&t, &m, path("fifo.csv"), 0, &log) == PHYS_OK, "%s", log.error);
  CHECK(t.nrow == 2 && t.time[0] == 0.5 && t.time[1] == 1.5 && t.qvel[9] == 1.0);
  phys_traj_free(&t);
  waitpid(pid, NULL, 0);
  unlink(path("fifo.csv"));
}

// a line longer than PHYS_LINE_MAX (a file of one endless line, e.g. without newlines) and a NUL byte (a binary
// or UTF-16 file) are errors naming file:line; a line of exactly PHYS_LINE_MAX bytes is read
static void test_line_limits(void) {
  physLog log;
  size_t n = PHYS_LINE_MAX + 2;
  char* text = malloc(strlen(header) + n + 2);
  strcpy(text, header);
  memset(text + strlen(header), '0', n);
  strcpy(text + strlen(header) + n, "\n");
  CHECK(read_text(&log, "long.csv", text, 0) == PHYS_ERR_SIZE);
  CHECK(msg_has(&log, "long.csv:2: line longer than 1048576 bytes", NULL, NULL));
  // exactly PHYS_LINE_MAX bytes: read (and then refused as a row with 1 column, not as too long)
  text[strlen(header) + PHYS_LINE_MAX] = '\n';
  text[strlen(header) + PHYS_LINE_MAX + 1] = 0;
  CHECK(read_text(&log, "max.csv", text, 0) == PHYS_ERR_SIZE);
  CHECK(msg_has(&log, "max.csv:2: expected 23 columns", "found 1", NULL));
  free(text);
  FILE* f = fopen(path("nul.csv"), "wb");
  fputs(header, f);
  fwrite("0,1\0,2\n", 1, 7, f);
  fclose(f);
  physModel m = make_model();
  physTraj t;
  memset(&log, 0, sizeof log);
  CHECK(phys_traj_read(&t, &m, path("nul.csv"), 0, &log) == PHYS_ERR_PARSE);
  CHECK(msg_has(&log, "nul.csv:2: NUL byte at column 4", NULL, NULL));
}

// the row limit (lowered on the reader to 3): the 4th data row is an error naming its line
static void test_row_limit(void) {
  physModel m = make_model();
  physLog log = {0};
  char text[4096];
  int len = snprintf(text, sizeof text, "%s", header);
  for (int k = 0; k < 4; k++) len += snprintf(text + len, sizeof text - (size_t)len, "%d,%s\n", k, state_text());
  FILE* f = fopen(write_file("rows.csv", text), "r");
  physLineReader r;
  phys_line_init(&r, f, "rows.csv");
  CHECK(r.max_rows == PHYS_TRAJ_MAXROWS && PHYS_TRAJ_MAXROWS == 10000000);
  r.max_rows = 3;
  physTraj t;
  CHECK(phys_line_next(&r, &log) == 1);
  CHECK(phys_traj_read_lines(&t, &m, &r, 0, &log) == PHYS_ERR_SIZE);
  CHECK(msg_has(&log, "rows.csv:5: more than 3 data rows", NULL, NULL));
  CHECK(t.nrow == 0 && t.time == NULL);
  phys_line_free(&r);
  fclose(f);
}

// an allocation failure while reading a line says "out of memory" (it was reported as "empty file"): a child
// process whose address space is capped just above its use reads a file whose first line is 900 kB long
#if defined(__SANITIZE_ADDRESS__)
#define TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TEST_ASAN 1
#endif
#endif
static void test_out_of_memory(void) {
#ifdef TEST_ASAN
  fprintf(stderr, "note: AddressSanitizer build: its allocator aborts instead of failing under RLIMIT_AS; the "
          "out-of-memory case runs in the release build\n");
  return;
#endif
  size_t n = 900000;
  char* text = malloc(n + 2);
  memset(text, 't', n);
  strcpy(text + n, "\n");
  write_file("huge_header.csv", text);
  free(text);
  int fd[2];
  CHECK(pipe(fd) == 0);
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    close(fd[0]);
    long pages = 0;
    FILE* sm = fopen("/proc/self/statm", "r");
    if (!sm || fscanf(sm, "%ld", &pages) != 1) _exit(2);
    fclose(sm);
    struct rlimit lim = {(rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + (64u << 10), RLIM_INFINITY};
    lim.rlim_max = lim.rlim_cur;
    if (setrlimit(RLIMIT_AS, &lim) != 0) _exit(3);
    physModel m = make_model();
    physLog log = {0};
    physTraj t;
    physStatus s = phys_traj_read(&t, &m, path("huge_header.csv"), 0, &log);
    dprintf(fd[1], "%d %s", (int)s, log.error);
    _exit(0);
  }
  close(fd[1]);
  char msg[1024] = "";
  ssize_t k = read(fd[0], msg, sizeof msg - 1);
  msg[k > 0 ? k : 0] = 0;
  close(fd[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
  CHECK_MSG(atoi(msg) == PHYS_ERR_NOMEM && strstr(msg, "huge_header.csv:1: out of memory reading the line"), "%s", msg);
  CHECK_MSG(!strstr(msg, "empty file"), "%s", msg);
}

// activations (issue 15 item 2): with na = 2 the columns act0, act1 after the inputs round-trip bit for bit,
// phys_traj_read_state_act reads them (0 without them), a file without them reads (na 0), a misnamed one is refused
static void test_act_columns(void) {
  physModel m = make_model();
  m.na = 2, m.nu = 1;
  double q[12], v[10], u[1] = {0.25}, act[2] = {1.0 / 3.0, -5e-324}, a2[2] = {7, 7}, time = -1;
  memset(v, 0, sizeof v);
  memset(q, 0, sizeof q);
  q[3] = q[8] = 1;
  FILE* f = fopen(path("act.csv"), "w");
  CHECK(phys_traj_write_header_s(f, &m, 1, 0, 1, 0) == PHYS_OK);
  CHECK(phys_traj_write_row_s(f, &m, 0.5, q, v, u, NULL, act, NULL) == PHYS_OK);
  fclose(f);
  physLog log = {0};
  physTraj tr;
  CHECK(phys_traj_read(&tr, &m, path("act.csv"), 0, &log) == PHYS_OK);
  CHECK(tr.nrow == 1 && tr.na == 2 && tr.nu == 1 && memcmp(tr.act, act, sizeof act) == 0 && tr.ctrl[0] == 0.25);
  phys_traj_free(&tr);
  CHECK(phys_traj_read_state_act(&time, q, v, a2, NULL, NULL, &m, path("act.csv"), &log) == PHYS_OK);
  CHECK(time == 0.5 && memcmp(a2, act, sizeof act) == 0);
  char text[1024];
  snprintf(text, sizeof text, "%s0,%s\n", header, state_text());
  CHECK(phys_traj_read_state_act(&time, q, v, a2, NULL, NULL, &m, write_file("noact.csv", text), &log) == PHYS_OK);
  CHECK(a2[0] == 0 && a2[1] == 0);
  snprintf(text, sizeof text, "t,q0,q1,q2,q3,q4,q5,q6,q7,q8,q9,q10,q11,v0,v1,v2,v3,v4,v5,v6,v7,v8,v9,act0,act2\n0,%s,0,0\n",
           state_text());
  memset(&log, 0, sizeof log);
  CHECK(phys_traj_read(&tr, &m, write_file("badact.csv", text), 0, &log) == PHYS_ERR_PARSE);
  CHECK(msg_has(&log, "badact.csv:1:", "header column 25 is 'act2'", "expected 'act1'"));
}

int main(void) {
  snprintf(g_dir, sizeof g_dir, "/tmp/test_trajio_XXXXXX");
  if (!mkdtemp(g_dir)) return 1;
  test_round_trip();
  test_header_errors();
  test_value_errors();
  test_layout_tolerance();
  test_read_state();
  test_act_columns();
  test_quaternions();
  test_out_of_memory();   // before the tests that allocate and free large blocks (free heap would serve it)
  test_input_kinds();
  test_line_limits();
  test_row_limit();
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g_dir);
  return test_done();
}
