// output.c - the output files of the physid tool (--out, --report, --write-model, --json).
//
// An output path is checked before any work (cli_output_check, cli_output_conflicts) and opened only when its
// data are ready (cli_output_open). What is written depends on what the path is:
//   - "-" or the process's own stdout: stdout;
//   - a character device or a FIFO (also through symbolic links): opened for writing as it is, never
//     created, truncated or replaced (/dev/null stays a device);
//   - a regular file or a new name: a hidden temporary ".NAME.physid-PID-XXXXXX" in the folder of the real
//     target (a symbolic link is followed, never replaced), fsync'ed and renamed over the target only when the
//     whole output was written;
//   - anything else (a folder, a dangling link, a block device, a socket, a missing folder): an error.
// Every write, flush and close is checked (ENOSPC is an error). Temporaries are removed on error and by
// cli_output_remove_temporaries (async-signal-safe, for SIGINT/SIGTERM handlers); leftovers of a killed run
// are removed by a later run that writes the same target once their process no longer exists.
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "sysid.h"

#define OUT_MAXTMP 16          // temporaries alive at once (identify has 3 outputs, a checkpoint makes 4)
#define OUT_NAMEPART 200       // bytes of the target's name kept in a temporary's name (NAME_MAX is 255)

// the live temporaries, for the signal handlers: a path is in use while its flag is set
static char g_tmp[OUT_MAXTMP][PATH_MAX];
static volatile sig_atomic_t g_tmp_used[OUT_MAXTMP];

//---------------------------------------------------------------------------------------------------------
// the temporary registry

// SIGINT/SIGTERM with no handler of the command's own: remove the temporaries, then die of the signal
static void on_fatal_signal(int sig) {
  cli_output_remove_temporaries();
  signal(sig, SIG_DFL);
  raise(sig);
}

// give SIGINT and SIGTERM on_fatal_signal where they still have their default action (simulate and identify
// install their own, which call cli_output_remove_temporaries or abort the outputs)
static void install_cleanup(void) {
  const int sig[2] = {SIGINT, SIGTERM};
  for (int i = 0; i < 2; i++) {
    struct sigaction old, sa;
    if (sigaction(sig[i], NULL, &old) != 0 || old.sa_handler != SIG_DFL) continue;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_fatal_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(sig[i], &sa, NULL);
  }
}

// register a temporary path; its slot, -1 if the registry is full (the file is then not removed on a signal)
static int tmp_register(const char* path) {
  install_cleanup();
  for (int i = 0; i < OUT_MAXTMP; i++) {
    if (g_tmp_used[i]) continue;
    snprintf(g_tmp[i], sizeof g_tmp[i], "%s", path);
    g_tmp_used[i] = 1;
    return i;
  }
  return -1;
}

// forget a temporary (renamed or removed)
static void tmp_unregister(const char* path) {
  for (int i = 0; i < OUT_MAXTMP; i++) {
    if (g_tmp_used[i] && strcmp(g_tmp[i], path) == 0) g_tmp_used[i] = 0;
  }
}

void cli_output_remove_temporaries(void) {
  for (int i = 0; i < OUT_MAXTMP; i++) {
    if (g_tmp_used[i]) unlink(g_tmp[i]);
    g_tmp_used[i] = 0;
  }
}

//---------------------------------------------------------------------------------------------------------
// resolving a path

// split path into its folder (into dir, "." if none) and its last component (pointer into path); 0 if the
// path ends in '/' or its last component is "." or ".."
static int split_path(char dir[PATH_MAX], const char** name, const char* path) {
  const char* slash = strrchr(path, '/');
  *name = slash ? slash + 1 : path;
  if (!**name || !strcmp(*name, ".") || !strcmp(*name, "..")) return 0;
  size_t n = slash ? (size_t)(slash - path) : 0;
  if (slash && n == 0) n = 1;   // "/name": the root folder
  if (n >= PATH_MAX) return 0;
  if (slash) memcpy(dir, path, n);
  else dir[n++] = '.';
  dir[n] = 0;
  return 1;
}

// a new output: the real folder must exist and be writable; target = real folder + "/" + name
static int resolve_new(cliOutput* o) {
  char dir[PATH_MAX], real[PATH_MAX];
  const char* name;
  if (!split_path(dir, &name, o->path)) {
    cli_error("%s %s: not a file name", o->option, o->path);
    return 0;
  }
  struct stat st;
  if (!realpath(dir, real) || stat(real, &st) != 0) {
    cli_error("%s %s: folder %s: %s", o->option, o->path, dir, strerror(errno));
    return 0;
  }
  if (!S_ISDIR(st.st_mode)) {
    cli_error("%s %s: %s is not a folder", o->option, o->path, dir);
    return 0;
  }
  if (snprintf(o->target, sizeof o->target, "%s/%s", strcmp(real, "/") ? real : "", name) >= (int)sizeof o->target) {
    cli_error("%s %s: path too long", o->option, o->path);
    return 0;
  }
  o->dev = st.st_dev;   // a new file is known by its folder and its name
  o->ino = st.st_ino;
  return 1;
}

// an existing regular file (possibly through links): target = its real path
static int resolve_regular(cliOutput* o, const struct stat* st) {
  if (!realpath(o->path, o->target)) {
    cli_error("%s %s: %s", o->option, o->path, strerror(errno));
    return 0;
  }
  o->exists = 1;
  o->dev = st->st_dev;
  o->ino = st->st_ino;
  o->mode = st->st_mode & 07777;
  o->uid = st->st_uid;
  o->gid = st->st_gid;
  return 1;
}

// what an existing path is, for messages
static const char* kind_name(mode_t mode) {
  return S_ISDIR(mode) ? "a folder" : S_ISBLK(mode) ? "a block device" : S_ISSOCK(mode) ? "a socket" : "not a file";
}

// 1 if st is the file the process's stdout writes to
static int is_stdout(const struct stat* st) {
  struct stat so;
  return fstat(STDOUT_FILENO, &so) == 0 && so.st_dev == st->st_dev && so.st_ino == st->st_ino;
}

// classify and resolve path into o (no file is created or opened)
static int resolve(cliOutput* o) {
  struct stat lst, st;
  if (!strcmp(o->path, "-")) return 1;
  if (lstat(o->path, &lst) != 0) {
    if (errno == ENOENT) return o->kind = CLI_OUT_REPLACE, resolve_new(o);
    cli_error("%s %s: %s", o->option, o->path, strerror(errno));
    return 0;
  }
  if (stat(o->path, &st) != 0) {
    cli_error("%s %s: %s%s", o->option, o->path, S_ISLNK(lst.st_mode) && errno == ENOENT ?
              "a symbolic link to a missing file (not followed: create the target or remove the link): " : "",
              strerror(errno));
    return 0;
  }
  if (S_ISREG(st.st_mode) && is_stdout(&st)) return 1;   // e.g. --out /dev/stdout > file
  if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
    o->kind = CLI_OUT_DIRECT;
    o->exists = 1;
    o->dev = st.st_dev;
    o->ino = st.st_ino;
    o->mode = st.st_mode;   // with the file type: same_output lets a character device take several outputs
    snprintf(o->target, sizeof o->target, "%s", o->path);
    return 1;
  }
  if (S_ISREG(st.st_mode)) return o->kind = CLI_OUT_REPLACE, resolve_regular(o, &st);
  cli_error("%s %s: is %s; physid writes regular files, character devices (/dev/null) and FIFOs", o->option,
            o->path, kind_name(st.st_mode));
  return 0;
}

// the folder of a resolved target must take a new file (root passes unless the file system is read-only)
static int check_writable(const cliOutput* o) {
  char dir[PATH_MAX];
  const char* name;
  int ok = o->kind == CLI_OUT_DIRECT ? access(o->target, W_OK) == 0
                                     : split_path(dir, &name, o->target) && access(dir, W_OK | X_OK) == 0;
  if (!ok) cli_error("%s %s: cannot write %s: %s", o->option, o->path, o->kind == CLI_OUT_DIRECT ? "it" : "in its "
                     "folder", strerror(errno));
  return ok;
}

int cli_output_check(cliOutput* o, const char* option, const char* path) {
  memset(o, 0, sizeof *o);
  o->option = option;
  o->path = path;
  o->kind = CLI_OUT_STDOUT;
  if (!path) return 1;
  return resolve(o) && (o->kind == CLI_OUT_STDOUT || check_writable(o));
}

//---------------------------------------------------------------------------------------------------------
// the same file twice

// 1 if a and b write to the same place: both stdout, the same existing file, or the same new name in the same
// folder; a character device may take several outputs (/dev/null twice is fine)
static int same_output(const cliOutput* a, const cliOutput* b) {
  if (a->kind == CLI_OUT_STDOUT || b->kind == CLI_OUT_STDOUT) return a->kind == b->kind;
  if (a->exists != b->exists || a->dev != b->dev || a->ino != b->ino) return 0;
  if (a->kind == CLI_OUT_DIRECT) return !S_ISCHR(a->mode);
  return a->exists || strcmp(strrchr(a->target, '/'), strrchr(b->target, '/')) == 0;
}

// 1 if an existing output is the file st, or one of the data files the folder st gives (phys_dataset_file_name)
static int output_is_input(const cliOutput* o, const char* input, const struct stat* st) {
  if (!o->exists) return 0;
  if (o->dev == st->st_dev && o->ino == st->st_ino) return 1;
  if (!S_ISDIR(st->st_mode)) return 0;
  DIR* d = opendir(input);
  int same = 0;
  for (struct dirent* e; d && !same && (e = readdir(d));) {
    char p[PATH_MAX];
    struct stat es;
    if (!phys_dataset_file_name(e->d_name) || snprintf(p, sizeof p, "%s/%s", input, e->d_name) >= (int)sizeof p ||
        stat(p, &es) != 0)
      continue;
    same = S_ISREG(es.st_mode) && es.st_dev == o->dev && es.st_ino == o->ino;
  }
  if (d) closedir(d);
  return same;
}

// the command's --actuate and --add (cli.h); here, so that what links output.c alone has them
cliModelArgs cli_model;

// (the --add model files of cli_model are inputs too)
int cli_output_conflicts(const cliOutput* o, int n, const char* const* input, int ninput) {
  for (int i = 0; i < n; i++) {
    if (!o[i].path) continue;
    for (int j = 0; j < i; j++) {
      if (o[j].path && same_output(o + i, o + j)) {
        cli_error("%s %s: the same file as %s %s", o[i].option, o[i].path, o[j].option, o[j].path);
        return 1;
      }
    }
    for (int k = 0; k < ninput + cli_model.add.n; k++) {   // the inputs, then the --add model files
      const char* in = k < ninput ? input[k] : cli_model.add.item[k - ninput];
      struct stat st;
      if (in && stat(in, &st) == 0 && output_is_input(o + i, in, &st)) {
        cli_error("%s %s: the same file as the input %s%s", o[i].option, o[i].path, in,
                  S_ISDIR(st.st_mode) ? " (a data file in that folder)" : "");
        return 1;
      }
    }
  }
  return 0;
}

//---------------------------------------------------------------------------------------------------------
// leftovers and temporaries

// the start of a temporary's name for target name: ".NAME.physid-" (NAME cut to OUT_NAMEPART bytes)
static void tmp_prefix(char* buf, size_t n, const char* name) {
  snprintf(buf, n, ".%.*s.physid-", OUT_NAMEPART, name);
}

// remove the temporaries of target left in dir by processes that no longer exist (SIGKILL, OOM, a crash)
static void remove_leftovers(const char* dir, const char* name) {
  char prefix[NAME_MAX + 1];
  tmp_prefix(prefix, sizeof prefix, name);
  size_t np = strlen(prefix);
  DIR* d = opendir(dir);
  for (struct dirent* e; d && (e = readdir(d));) {
    char* end;
    if (strncmp(e->d_name, prefix, np) != 0) continue;
    long pid = strtol(e->d_name + np, &end, 10);
    if (pid <= 0 || end[0] != '-' || strlen(end) != 7 || pid == (long)getpid()) continue;
    if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue;   // alive, or not ours to judge
    char p[PATH_MAX];
    struct stat st;
    if (snprintf(p, sizeof p, "%s/%s", dir, e->d_name) < (int)sizeof p && lstat(p, &st) == 0 && S_ISREG(st.st_mode))
      unlink(p);
  }
  if (d) closedir(d);
}

// create the temporary beside o->target with the target's permissions (a new file: 0666 less the umask)
static int make_temporary(cliOutput* o) {
  char dir[PATH_MAX], prefix[NAME_MAX + 1];
  const char* name;
  split_path(dir, &name, o->target);
  remove_leftovers(dir, name);
  tmp_prefix(prefix, sizeof prefix, name);
  if (snprintf(o->tmp, sizeof o->tmp, "%s/%s%ld-XXXXXX", strcmp(dir, "/") ? dir : "", prefix, (long)getpid()) >=
      (int)sizeof o->tmp) {
    cli_error("%s %s: path too long", o->option, o->path);
    return -1;
  }
  int fd = mkstemp(o->tmp);
  if (fd < 0) {
    cli_error("%s %s: cannot create a temporary file in %s: %s", o->option, o->path, dir, strerror(errno));
    o->tmp[0] = 0;
    return -1;
  }
  tmp_register(o->tmp);
  mode_t mask = umask(0);
  umask(mask);
  if (fchmod(fd, o->exists ? o->mode : 0666 & ~mask) != 0) {
    cli_error("%s %s: %s", o->option, o->tmp, strerror(errno));
    close(fd);
    return -1;
  }
  if (o->exists && geteuid() == 0 && fchown(fd, o->uid, o->gid) != 0) {
    cli_error("%s %s: %s", o->option, o->tmp, strerror(errno));
    close(fd);
    return -1;
  }
  return fd;
}

//---------------------------------------------------------------------------------------------------------
// open, finish, rename

int cli_output_open(cliOutput* o) {
  if (o->kind == CLI_OUT_STDOUT) {
    o->f = stdout;
    return 1;
  }
  cliOutput now;   // the path again: the same device or FIFO, or still a regular file or new name at the same place
  if (!cli_output_check(&now, o->option, o->path)) return 0;
  if (now.kind != o->kind || (o->kind == CLI_OUT_DIRECT ? now.dev != o->dev || now.ino != o->ino
                                                         : strcmp(now.target, o->target) != 0)) {
    cli_error("%s %s: changed during the run; nothing written", o->option, o->path);
    return 0;
  }
  *o = now;
  int fd = o->kind == CLI_OUT_DIRECT ? open(o->target, O_WRONLY | O_NOCTTY | O_CLOEXEC) : make_temporary(o);
  if (fd < 0 && o->kind == CLI_OUT_DIRECT) cli_error("%s %s: %s", o->option, o->path, strerror(errno));
  if (fd >= 0 && !(o->f = fdopen(fd, "w"))) {
    cli_error("%s %s: %s", o->option, o->path, strerror(errno));
    close(fd);
  }
  if (!o->f && o->tmp[0]) {
    unlink(o->tmp);
    tmp_unregister(o->tmp);
    o->tmp[0] = 0;
  }
  return o->f != NULL;
}

void cli_output_abort(cliOutput* o) {
  if (o->f && o->f != stdout) fclose(o->f);
  o->f = NULL;
  if (o->tmp[0]) {
    unlink(o->tmp);
    tmp_unregister(o->tmp);
    o->tmp[0] = 0;
  }
}

// flush f, check its error flag, fsync it (sync) and close it (unless stdout); 0 on failure, *err the errno when
// known (0: an earlier buffered write failed, its errno lost)
static int stream_end(FILE* f, int sync, int* err) {
  errno = 0;
  int ok = fflush(f) == 0;
  *err = ok ? 0 : errno;
  if (ok && ferror(f)) ok = 0;
  // the data on disk before the rename (a file system that cannot sync, EINVAL / ENOTSUP, is no error)
  if (ok && sync && fsync(fileno(f)) != 0 && errno != EINVAL && errno != ENOTSUP) ok = 0, *err = errno;
  if (f != stdout && fclose(f) != 0 && ok) ok = 0, *err = errno;
  return ok;
}

// "write error: REASON" or "write error" when the reason is lost
static const char* write_error(char* buf, size_t n, int err) {
  snprintf(buf, n, "write error%s%s", err ? ": " : "", err ? strerror(err) : "");
  return buf;
}

int cli_output_finish(cliOutput* o) {
  if (!o->f) return 0;
  int err, ok = stream_end(o->f, o->tmp[0] != 0, &err);
  o->f = NULL;
  if (ok) return 1;
  char msg[256];
  cli_error("%s %s: %s", o->option, o->path ? o->path : "-", write_error(msg, sizeof msg, err));
  cli_output_abort(o);
  return 0;
}

int cli_output_rename(cliOutput* o) {
  if (!o->tmp[0]) return 1;
  int ok = rename(o->tmp, o->target) == 0;
  if (!ok) {
    cli_error("%s %s: cannot rename %s to it: %s", o->option, o->path, o->tmp, strerror(errno));
    unlink(o->tmp);
  }
  tmp_unregister(o->tmp);
  o->tmp[0] = 0;
  return ok;
}

int cli_output_commit(cliOutput* o) {
  return cli_output_finish(o) && cli_output_rename(o);
}

int cli_outputs_commit(cliOutput* o, int n) {
  int ok = 1;
  for (int i = 0; i < n; i++) {
    if (o[i].f && !cli_output_finish(o + i)) ok = 0;
  }
  for (int i = 0; i < n; i++) {
    if (!ok) cli_output_abort(o + i);
    else if (o[i].path && !cli_output_rename(o + i)) ok = 0;
  }
  return ok;
}

void cli_json_string(FILE* f, const char* s) {
  fputc('"', f);
  for (const unsigned char* c = (const unsigned char*)(s ? s : ""); *c; c++) {
    if (*c == '"' || *c == '\\') fprintf(f, "\\%c", *c);
    else if (*c < 0x20) fprintf(f, "\\u%04x", *c);
    else fputc(*c, f);
  }
  fputc('"', f);
}

int cli_stdout_close(int report) {
  int err, ok = stream_end(stdout, 0, &err);
  if (fclose(stdout) != 0 && ok) ok = 0, err = errno;
  char msg[256];
  if (!ok && report) cli_error("stdout: %s", write_error(msg, sizeof msg, err));
  return ok;
}
