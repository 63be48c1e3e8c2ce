// test_docs.c - every shell example of the README and the manual (docs/*.md) runs as written (issue 18 item 6).
//
// In a fenced block, a line "$ CMD" (continued by a trailing backslash) is a command; the lines after it, up to
// the next "$ " or the fence's end, are the output the page shows. The commands of one page run in order, in
// one scratch folder that stands for the repository's root (models/, tests/, data/, examples/, docs/, scripts/
// and bench/ link to the source tree; ../shared to the source tree's ../shared when there is one), with the
// physid under test first on PATH. A command passes when
//  - its exit code is the one its comment names ("# exit N", "# ...: exit N"), else 0, and
//  - every line the page shows for it appears in its output (stdout and stderr), blanks collapsed, every
//    duration masked (a number followed by s, ms, us, min or h: wall and CPU times) and every other number as
//    written (the figures are deterministic: a page whose figures drifted from what the code prints fails); in a
//    shown line "..." stands for any text, a shown line "..." or a "# " comment is not compared.
// The files a page uses but does not make are given on the page: "<!-- file: NAME -->" before a fenced block
// writes that block to NAME in the scratch folder (HTML comments do not render), and "$ cat NAME" of a file
// that does not exist yet writes the lines shown as NAME before it runs.
// A command that needs what this machine does not have (a path under /usr/share or ../shared that is absent)
// is reported as not run, with the path; nothing else is skipped.
//
//   tools_test_docs [PAGE.md ...]   (default: README.md and docs/*.md; PHYS_BIN names the physid binary)
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"

#ifndef PHYS_SOURCE_DIR
#define PHYS_SOURCE_DIR "."
#endif

enum { MAXCMD = 8192, MAXOUT = 65536 };

static const char* g_bin;        // the physid binary
static char g_bindir[4096];      // its folder (first on PATH)
static char g_root[128];         // this page's scratch folder (mkdtemp)
static char g_repo[160];         // g_root/repo: the commands' working folder
static int g_ran, g_skipped;     // commands run, commands not run (a missing system path)

// the whole content of a file (malloc'd, NULL if unreadable)
static char* read_all(const char* path) {
  FILE* f = fopen(path, "rb");
  if (!f) return NULL;
  size_t n = 0, cap = 1 << 16;
  char* s = malloc(cap);
  size_t k;
  while ((k = fread(s + n, 1, cap - n - 1, f)) > 0) {
    n += k;
    if (n + 1 >= cap) s = realloc(s, cap *= 2);
  }
  fclose(f);
  s[n] = 0;
  return s;
}

static void write_file(const char* dir, const char* name, const char* text) {
  char p[4400];
  snprintf(p, sizeof p, "%s/%s", dir, name);
  FILE* f = fopen(p, "w");
  CHECK(f != NULL);
  if (f) {
    fputs(text, f);
    fclose(f);
  }
}

// a fresh scratch folder for one page: ROOT/repo with links to the source tree's folders
static void make_scratch(void) {
  snprintf(g_root, sizeof g_root, "/tmp/physid_docs_XXXXXX");
  if (!mkdtemp(g_root)) {
    fprintf(stderr, "mkdtemp: %s\n", strerror(errno));
    exit(1);
  }
  snprintf(g_repo, sizeof g_repo, "%s/repo", g_root);
  CHECK(mkdir(g_repo, 0755) == 0);
  static const char* linked[] = {"models", "tests", "data", "examples", "docs", "scripts", "bench"};
  char src[4400], dst[4400];
  for (size_t i = 0; i < sizeof linked / sizeof *linked; i++) {
    snprintf(src, sizeof src, "%s/%s", PHYS_SOURCE_DIR, linked[i]);
    snprintf(dst, sizeof dst, "%s/%s", g_repo, linked[i]);
    CHECK(symlink(src, dst) == 0);
  }
  snprintf(src, sizeof src, "%s/../shared", PHYS_SOURCE_DIR);
  snprintf(dst, sizeof dst, "%s/shared", g_root);
  struct stat st;
  if (stat(src, &st) == 0) CHECK(symlink(src, dst) == 0);
}

static void remove_scratch(void) {
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_root);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g_root);
}

// the exit code a command's comment names ("exit N" after " #"), else 0
static int expected_code(const char* cmd) {
  const char* c = strstr(cmd, " #");
  const char* e = c ? strstr(c, "exit ") : NULL;
  return e && isdigit((unsigned char)e[5]) ? atoi(e + 5) : 0;
}

// the first path in cmd under /usr/share or ../shared that does not exist (into miss), else 0
static int missing_path(const char* cmd, char* miss, size_t n) {
  static const char* roots[] = {"/usr/share/", "../shared/"};
  for (size_t r = 0; r < 2; r++) {
    for (const char* p = strstr(cmd, roots[r]); p; p = strstr(p + 1, roots[r])) {
      size_t k = strcspn(p, " \t\n'\"|;)");
      char path[1024], full[1200];
      snprintf(path, sizeof path, "%.*s", (int)k, p);
      snprintf(full, sizeof full, "%s%s%s", r ? g_repo : "", r ? "/" : "", path);
      struct stat st;
      if (stat(full, &st) != 0) {
        snprintf(miss, n, "%s", path);
        return 1;
      }
    }
  }
  return 0;
}

// 1 if the text at s (after blanks) is a unit of time: "s", "ms", "us", "us/step", "min", "h" as a whole word
static int time_unit(const char* s) {
  while (*s == ' ') s++;
  static const char* units[] = {"us/step", "ms", "us", "min", "s", "h"};
  for (size_t i = 0; i < sizeof units / sizeof *units; i++) {
    size_t k = strlen(units[i]);
    if (!strncmp(s, units[i], k) && !isalnum((unsigned char)s[k])) return 1;
  }
  return 0;
}

// s with every duration masked to '#' (a number followed by a unit of time: wall and CPU times differ from run
// to run; every other number is deterministic and compared as written) and runs of blanks collapsed, into out
static void normalize(const char* s, char* out, size_t n) {
  size_t k = 0;
  while (*s && k + 2 < n) {
    int starts = isdigit((unsigned char)*s) ||
                 ((*s == '-' || *s == '.') && isdigit((unsigned char)s[1]));
    if (starts && (k == 0 || !isalnum((unsigned char)out[k - 1]))) {
      char* end;
      strtod(s, &end);
      if (end > s) {
        if (time_unit(end)) out[k++] = '#';
        else
          while (s < end && k + 2 < n) out[k++] = *s++;
        s = end;
        continue;
      }
    }
    if (*s == ' ' || *s == '\t') {
      if (k == 0 || out[k - 1] != ' ') out[k++] = ' ';
      while (*s == ' ' || *s == '\t') s++;
      continue;
    }
    out[k++] = *s++;
  }
  while (k > 0 && out[k - 1] == ' ') k--;
  out[k] = 0;
}

// 1 if line b matches the shown line a (both normalized): equal, where each "..." of a stands for any text
static int line_matches(const char* a, const char* b) {
  const char* e = strstr(a, "...");
  if (!e) return !strcmp(a, b);
  size_t k = (size_t)(e - a);
  if (strncmp(a, b, k)) return 0;   // the text before the first "..." starts b
  for (const char* t = b + k;; t++) {   // the rest of a matches some tail of b
    if (line_matches(e + 3, t)) return 1;
    if (!*t) return 0;
  }
}

// 1 if the shown line is one of the output's lines, numbers masked and blanks collapsed; a shown line that is
// only "..." or a "# " comment (the page's note between commands) is not compared
static int shown_in_output(const char* shown, const char* output) {
  static char a[MAXOUT], b[MAXOUT];
  normalize(shown, a, sizeof a);
  const char* pa = a[0] == ' ' ? a + 1 : a;
  if (!pa[0] || !strcmp(pa, "...") || !strncmp(pa, "# ", 2)) return 1;
  for (const char* l = output; *l;) {
    size_t k = strcspn(l, "\n");
    char line[MAXOUT];
    snprintf(line, sizeof line, "%.*s", (int)k, l);
    normalize(line, b, sizeof b);
    if (line_matches(pa, b[0] == ' ' ? b + 1 : b)) return 1;
    l += k + (l[k] == '\n');
  }
  return 0;
}

// "cat NAME" of a file that does not exist yet: the shown lines become NAME
static void cat_fixture(const char* cmd, const char* shown) {
  char name[256];
  if (sscanf(cmd, "cat %255s", name) != 1 || strchr(cmd, '|') || strchr(cmd, '>')) return;
  char p[4400];
  snprintf(p, sizeof p, "%s/%s", g_repo, name);
  if (access(p, F_OK) == 0) return;
  write_file(g_repo, name, shown);
}

// run one command of page:line in the scratch folder; check its exit code and shown lines
static void run_command(const char* page, int line, const char* cmd, const char* shown) {
  char miss[1024];
  if (missing_path(cmd, miss, sizeof miss)) {
    printf("  %s:%d: not run: %s is not on this machine\n", page, line, miss);
    g_skipped++;
    return;
  }
  cat_fixture(cmd, shown);
  write_file(g_repo, ".cmd", cmd);
  char sh[9000];
  snprintf(sh, sizeof sh, "cd '%s' && PATH='%s':\"$PATH\" timeout 900 sh ./.cmd > .docout 2>&1", g_repo, g_bindir);
  int st = system(sh);
  int code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  char p[4400];
  snprintf(p, sizeof p, "%s/.docout", g_repo);
  char* out = read_all(p);
  if (!out) out = calloc(1, 1);
  int want = expected_code(cmd);
  g_ran++;
  int ok = code == want;
  if (!ok) printf("FAIL %s:%d: exit %d, the page says %d: %s\n", page, line, code, want, cmd);
  for (const char* l = shown; *l;) {
    size_t k = strcspn(l, "\n");
    char s[MAXOUT];
    snprintf(s, sizeof s, "%.*s", (int)k, l);
    if (!shown_in_output(s, out)) {
      printf("FAIL %s:%d: shown line not in the output: %s\n", page, line, s);
      ok = 0;
    }
    l += k + (l[k] == '\n');
  }
  if (!ok) printf("---- output of %s:%d ----\n%s----\n", page, line, out);
  CHECK(ok);
  free(out);
}

// the text of the next fenced block's lines from *pp (after its opening fence), up to its closing fence
static char* fence_body(char** lines, int nlines, int* i) {
  size_t cap = 1 << 12, n = 0;
  char* s = calloc(cap, 1);
  for ((*i)++; *i < nlines && strncmp(lines[*i], "```", 3); (*i)++) {
    size_t k = strlen(lines[*i]);
    while (n + k + 2 >= cap) s = realloc(s, cap *= 2);
    memcpy(s + n, lines[*i], k);
    n += k;
    s[n++] = '\n';
    s[n] = 0;
  }
  return s;
}

// every example of one page, in order, in one scratch folder
static void run_page(const char* page) {
  char path[4400];
  snprintf(path, sizeof path, "%s/%s", PHYS_SOURCE_DIR, page);
  char* text = read_all(path);
  CHECK(text != NULL);
  if (!text) return;
  int nlines = 0, cap = 1024;
  char** lines = malloc(sizeof(char*) * cap);
  for (char* l = strtok(text, "\n"); l; l = strtok(NULL, "\n")) {
    if (nlines == cap) lines = realloc(lines, sizeof(char*) * (cap *= 2));
    lines[nlines++] = l;
  }
  // (strtok drops empty lines: a shown output's blank lines are not compared anyway)
  make_scratch();
  char fixture[256] = "";
  for (int i = 0; i < nlines; i++) {
    if (sscanf(lines[i], "<!-- file: %255s -->", fixture) == 1) continue;
    if (strncmp(lines[i], "```", 3)) continue;
    int open = i;
    char* body = fence_body(lines, nlines, &i);
    if (fixture[0]) {
      write_file(g_repo, fixture, body);
      fixture[0] = 0;
      free(body);
      continue;
    }
    // the commands of this block: "$ " lines (with continuations) and the lines shown after each
    char* b = body;
    int bline = open + 1;
    while (*b) {
      if (strncmp(b, "$ ", 2)) {   // text before the first command (not a shell block, or a prompt-less line)
        b += strcspn(b, "\n");
        b += *b == '\n';
        bline++;
        continue;
      }
      int cline = bline + 1;
      char cmd[MAXCMD] = "";
      b += 2;
      for (;;) {   // the command, with its backslash continuations
        size_t k = strcspn(b, "\n");
        strncat(cmd, b, k < MAXCMD - strlen(cmd) - 2 ? k : MAXCMD - strlen(cmd) - 2);
        int more = k > 0 && b[k - 1] == '\\';
        b += k + (b[k] == '\n');
        bline++;
        if (!more || !*b) break;
        strcat(cmd, "\n");
      }
      char shown[MAXOUT] = "";
      while (*b && strncmp(b, "$ ", 2)) {
        size_t k = strcspn(b, "\n");
        if (strlen(shown) + k + 2 < sizeof shown) {
          strncat(shown, b, k);
          strcat(shown, "\n");
        }
        b += k + (b[k] == '\n');
        bline++;
      }
      run_command(page, cline, cmd, shown);
    }
    free(body);
  }
  remove_scratch();
  free(lines);
  free(text);
}

static int by_name(const struct dirent** a, const struct dirent** b) { return strcmp((*a)->d_name, (*b)->d_name); }
static int is_md(const struct dirent* e) {
  size_t k = strlen(e->d_name);
  return k > 3 && !strcmp(e->d_name + k - 3, ".md");
}

int main(int argc, char** argv) {
  g_bin = getenv("PHYS_BIN");
  if (!g_bin) {
    fprintf(stderr, "PHYS_BIN is not set (the physid binary)\n");
    return 1;
  }
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s", g_bin);
  if (!realpath(dirname(tmp), g_bindir)) {
    fprintf(stderr, "%s: %s\n", g_bin, strerror(errno));
    return 1;
  }
  if (argc > 1) {
    for (int i = 1; i < argc; i++) run_page(argv[i]);
  } else {
    run_page("README.md");
    char docs[4400];
    snprintf(docs, sizeof docs, "%s/docs", PHYS_SOURCE_DIR);
    struct dirent** e;
    int n = scandir(docs, &e, is_md, by_name);
    CHECK(n > 0);
    for (int i = 0; i < n; i++) {
      char page[600];
      snprintf(page, sizeof page, "docs/%s", e[i]->d_name);
      run_page(page);
      free(e[i]);
    }
    free(e);
  }
  printf("%d commands run, %d not run (missing on this machine)\n", g_ran, g_skipped);
  CHECK(g_ran > 0);
  return test_done();
}
