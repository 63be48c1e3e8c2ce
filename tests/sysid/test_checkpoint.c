// test_checkpoint.c - resumable fits (src/sysid/checkpoint.c and phys_fit's use of it): a fit stopped right
// after the checkpoint of any iteration (the library's hook, in process) and resumed gives the result of the
// fit that was never stopped, bit for bit, for LM, L-BFGS-B and Adam, with one and two starts, also when it is
// stopped twice; a checkpoint of another fit (model, data, parameters, options) or a corrupt one is a clear
// error that changes nothing; the target rules (never a non-checkpoint file, a link); SIGKILL of a process
// writing checkpoints at random instants always leaves the old or the new file, never a torn one.
// Data: the cube of models/cube.xml and the first file of data/cube_toss (the tests run in the source folder).
#define _GNU_SOURCE   // memmem
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "checkpoint.h"
#include "params.h"
#include "physid.h"
#include "sysid.h"
#include "test.h"

static char g_dir[64];   // scratch folder

// path of a file in the scratch folder (one of 8 rotating buffers)
static const char* scratch(const char* name) {
  static char buf[8][256];
  static int k = 0;
  k = (k + 1) % 8;
  snprintf(buf[k], sizeof buf[k], "%s/%s", g_dir, name);
  return buf[k];
}

// the bytes of a file (malloc'd) and their count; NULL if unreadable
static unsigned char* file_bytes(const char* p, size_t* n) {
  FILE* f = fopen(p, "rb");
  *n = 0;
  if (!f) return NULL;
  unsigned char* s = malloc(1 << 24);
  *n = fread(s, 1, 1 << 24, f);
  fclose(f);
  return s;
}

// write n bytes to a file
static void put_bytes(const char* p, const void* data, size_t n) {
  FILE* f = fopen(p, "wb");
  CHECK(f != NULL);
  if (!f) return;
  CHECK(fwrite(data, 1, n, f) == n);
  fclose(f);
}

// 1 if the two files hold the same bytes
static int same_file_bytes(const char* a, const char* b) {
  size_t na, nb;
  unsigned char *x = file_bytes(a, &na), *y = file_bytes(b, &nb);
  int same = x && y && na == nb && memcmp(x, y, na) == 0;
  free(x);
  free(y);
  return same;
}

// 1 if two checkpoint files are equal byte for byte but for the times and the file's hash: the fit's two
// times and L-BFGS-B's CPU timers dsave(6..10), which setulb keeps only to print them
static int same_but_times(const char* a, const char* b) {
  size_t na, nb;
  unsigned char *x = file_bytes(a, &na), *y = file_bytes(b, &nb);
  int same = x && y && na == nb && na > 8;
  const struct {
    const char* name;
    int first, n;
  } times[3] = {{"time_forward", 0, 1}, {"time_gradient", 0, 1}, {"dsave", 5, 5}};
  for (int k = 0; same && k < 3; k++) {
    unsigned char* p = memmem(x, na, times[k].name, strlen(times[k].name) + 1);
    size_t at = p ? (size_t)(p - x) + 40 + 8 * (size_t)times[k].first : na;   // name[24] type pad count, values
    same = at + 8 * (size_t)times[k].n <= na;
    if (same) memset(x + at, 0, 8 * (size_t)times[k].n), memset(y + at, 0, 8 * (size_t)times[k].n);
  }
  same = same && memcmp(x, y, na - 8) == 0;
  free(x);
  free(y);
  return same;
}

//---------------------------------------------------------------------------------------------------------
// the fit: cube friction and restitution from one toss

typedef struct fixture_ {
  physModel* m;             // as loaded; every fit runs on a copy
  physParamTable t;
  physDataset ds;
  double theta0[2];
} fixture;

// the model, the two parameters at the model's values, the first `files` files of data/cube_toss
static int fixture_load(fixture* fx, int files) {
  memset(fx, 0, sizeof(*fx));
  physLog log = {0};
  fx->m = phys_load("models/cube.xml", NULL, &log);
  CHECK_MSG(fx->m != NULL, "%s", log.error);
  if (!fx->m) return 0;
  const char* spec[] = {"friction:cube", "restitution:cube"};
  CHECK(phys_param_table_build(&fx->t, fx->m, spec, 2, &log) == PHYS_OK);
  phys_param_get(&fx->t, fx->m, fx->theta0);
  const char* data[] = {"data/cube_toss"};
  physDataOptions dopt = {0};
  dopt.max_files = files;
  physStatus st = phys_dataset_load(&fx->ds, fx->m, data, 1, &dopt, &log);
  CHECK_MSG(st == PHYS_OK, "%s", log.error);
  return st == PHYS_OK;
}

static void fixture_free(fixture* fx) {
  phys_dataset_free(&fx->ds);
  phys_param_table_free(&fx->t);
  phys_free_model(fx->m);
}

// the fit options of the tests: optimizer o, `starts` starts, Adam capped at 40 iterations
static void options(physFitOptions* opt, int o, int starts) {
  phys_fit_defaults(opt);
  opt->optimizer = o;
  opt->starts = starts;
  opt->seed = 7;
  if (o == PHYS_OPT_ADAM) opt->max_iter = 40;
}

// phys_fit on a copy of the fixture's model (so that every fit starts from the same model)
static physStatus fit(const fixture* fx, const double* theta0, const physFitOptions* opt, physFitResult* res,
                      physLog* log) {
  physModel* m = phys_copy_model(fx->m);
  physStatus st = phys_fit(m, &fx->t, theta0 ? theta0 : fx->theta0, NULL, NULL, &fx->ds, opt, res, log);
  phys_free_model(m);
  return st;
}

// the hook: records every checkpoint (start, iteration) and stops the fit after the one at stop_*
typedef struct hookLog_ {
  int n, start[4096], iter[4096];
  int stop_start, stop_iter;
} hookLog;

static int hook(void* ctx, int start, int iter) {
  hookLog* h = ctx;
  if (h->n < 4096) h->start[h->n] = start, h->iter[h->n] = iter, h->n++;
  return start == h->stop_start && iter == h->stop_iter;
}

// a fresh fit of base (resume off) writing checkpoint ck, stopped by the hook after iteration kit of start ks;
// its status (PHYS_ERR_ARG when it stopped there); h (may be NULL) gets the checkpoints written
static physStatus stop_at(const fixture* fx, const physFitOptions* base, const char* ck, int ks, int kit,
                          hookLog* h, physLog* log) {
  physFitOptions opt = *base;
  hookLog mine = {0};
  if (!h) h = &mine;
  memset(h, 0, sizeof(*h));
  h->stop_start = ks, h->stop_iter = kit;
  opt.checkpoint = ck;
  opt.resume = 0;
  opt.on_checkpoint = hook;
  opt.on_checkpoint_ctx = h;
  physFitResult res;
  unlink(ck);
  return fit(fx, NULL, &opt, &res, log);
}

// n doubles equal bit for bit
static int same_bits(const double* a, const double* b, size_t n) {
  return (n == 0) || (a && b && memcmp(a, b, sizeof(double) * n) == 0);
}

// two results equal bit for bit, the times and the resume fields aside
static int same_result(const physFitResult* a, const physFitResult* b) {
  size_t n = (size_t)a->ntheta;
  return a->ntheta == b->ntheta && a->nres == b->nres && a->iterations == b->iterations && a->start == b->start &&
         a->niter_hist == b->niter_hist && a->nnull == b->nnull && same_bits(&a->loss0, &b->loss0, 1) &&
         same_bits(&a->loss, &b->loss, 1) && same_bits(a->theta, b->theta, n) &&
         same_bits(a->stderr_, b->stderr_, n) && same_bits(a->corr, b->corr, n * n) &&
         same_bits(a->loss_hist, b->loss_hist, (size_t)a->niter_hist) &&
         same_bits(a->theta_hist, b->theta_hist, (size_t)a->niter_hist * n) &&
         same_bits(a->null_dirs, b->null_dirs, (size_t)a->nnull * n);
}

//---------------------------------------------------------------------------------------------------------
// tests

static const char* opt_name[] = {"lm", "lbfgsb", "adam"};

// stop after checkpoint k (through the hook), resume, compare with the uninterrupted fit (its result, and
// its last checkpoint refck: the state of the last start, the draws, ...); returns 1 if equal
static int stop_and_resume(const fixture* fx, const physFitOptions* base, const physFitResult* ref,
                           const char* refck, int ks, int kit, const char* ck) {
  hookLog h;
  physLog log = {0};
  physStatus st = stop_at(fx, base, ck, ks, kit, &h, &log);
  CHECK_MSG(st == PHYS_ERR_ARG && strstr(log.error, "stopped after the checkpoint"), "%s start %d iter %d: %d %s",
            opt_name[base->optimizer], ks, kit, st, log.error);
  CHECK(h.n > 0 && h.start[h.n - 1] == ks && h.iter[h.n - 1] == kit);
  physFitOptions opt = *base;
  physFitResult res;
  opt.checkpoint = ck;
  opt.resume = 1;
  memset(&log, 0, sizeof(log));
  st = fit(fx, NULL, &opt, &res, &log);
  CHECK_MSG(st == PHYS_OK, "%s", log.error);
  if (st != PHYS_OK) return 0;
  int same = same_result(&res, ref) && same_but_times(ck, refck);
  CHECK_MSG(same, "%s starts %d: stopped at start %d iteration %d, resumed: theta %.17g %.17g (%d iterations) vs "
            "%.17g %.17g (%d)", opt_name[opt.optimizer], opt.starts, ks, kit, res.theta[0], res.theta[1],
            res.iterations, ref->theta[0], ref->theta[1], ref->iterations);
  CHECK(res.resumed == 1 && res.resumed_start == ks && res.resumed_iter == kit);
  CHECK(res.time_forward > 0 && res.time_gradient > 0);
  phys_fit_result_free(&res);
  return same;
}

// for every optimizer with 1 and 3 starts: a fit that writes checkpoints gives the plain fit's result; stopped
// after any checkpoint (LM, L-BFGS-B: every one; Adam: the first, second, middle, last and the first of each
// start) and resumed, it gives it again, bit for bit; stopped twice (resumed with a second stop later) too.
// Three starts: a resume in start 1 must continue the draws for start 2.
static void test_resume_points(const fixture* fx) {
  const char* ck = scratch("fit.ckpt");
  const char* refck = scratch("ref.ckpt");
  for (int o = 0; o < 3; o++)
    for (int starts = 1; starts <= 3; starts += 2) {
      physFitOptions base;
      options(&base, o, starts);
      physFitResult ref, res;
      physLog log = {0};
      physStatus st = fit(fx, NULL, &base, &ref, &log);
      CHECK_MSG(st == PHYS_OK, "%s", log.error);
      if (st != PHYS_OK) continue;
      CHECK(ref.resumed == 0);
      // with checkpoints, never stopped: the same result, one checkpoint per iteration
      physFitOptions opt = base;
      hookLog h = {0};
      h.stop_start = -1;
      opt.checkpoint = ck;
      opt.on_checkpoint = hook;
      opt.on_checkpoint_ctx = &h;
      unlink(ck);
      st = fit(fx, NULL, &opt, &res, &log);
      CHECK_MSG(st == PHYS_OK, "%s", log.error);
      if (st != PHYS_OK) continue;
      CHECK(same_result(&res, &ref));
      phys_fit_result_free(&res);
      CHECK(rename(ck, refck) == 0);
      CHECK_MSG(h.n >= 4, "%s: %d checkpoints", opt_name[o], h.n);
      for (int i = 1; i < h.n; i++)   // iterations in order, start after start
        CHECK(h.start[i] > h.start[i - 1] || (h.start[i] == h.start[i - 1] && h.iter[i] == h.iter[i - 1] + 1));
      int pick[4096], npick = 0, nsame = 0;
      for (int i = 0; i < h.n; i++)
        if (o != PHYS_OPT_ADAM || i <= 1 || i == h.n / 2 || i == h.n - 1 || h.start[i] != h.start[i - 1])
          pick[npick++] = i;
      CHECK(h.start[h.n - 1] == starts - 1);
      for (int p = 0; p < npick; p++)
        nsame += stop_and_resume(fx, &base, &ref, refck, h.start[pick[p]], h.iter[pick[p]], ck);
      // stopped twice: after checkpoint 1, then (resumed) after the middle one
      hookLog h2 = {0};
      h2.stop_start = h.start[1], h2.stop_iter = h.iter[1];
      opt.on_checkpoint_ctx = &h2;
      unlink(ck);
      CHECK(fit(fx, NULL, &opt, &res, &log) == PHYS_ERR_ARG);
      h2.stop_start = h.start[h.n / 2], h2.stop_iter = h.iter[h.n / 2];
      opt.resume = 1;
      CHECK(fit(fx, NULL, &opt, &res, &log) == PHYS_ERR_ARG);
      opt.on_checkpoint = NULL;
      memset(&log, 0, sizeof(log));
      st = fit(fx, NULL, &opt, &res, &log);
      CHECK_MSG(st == PHYS_OK, "%s", log.error);
      if (st == PHYS_OK) {
        CHECK(same_result(&res, &ref) && same_but_times(ck, refck) && res.resumed_iter == h.iter[h.n / 2]);
        phys_fit_result_free(&res);
      }
      printf("%-6s starts %d: %d iterations, %d checkpoints; stopped and resumed at %d points: %d bit-identical\n",
             opt_name[o], starts, ref.iterations, h.n, npick, nsame);
      phys_fit_result_free(&ref);
    }
}

// a checkpoint of another fit: each difference (options, data, parameters, model) is PHYS_ERR_ARG naming the
// file and what differs, and the checkpoint stays as it was; a thread count does not matter (resumed with 2
// threads: the same result); the reader leaves the caller's state untouched on error
static void test_mismatch(fixture* fx) {
  const char* ck = scratch("other.ckpt");
  const char* copy = scratch("other.copy");
  physFitOptions base, opt;
  options(&base, PHYS_OPT_LM, 1);
  physFitResult ref, res;
  physLog log = {0};
  CHECK(fit(fx, NULL, &base, &ref, &log) == PHYS_OK);
  CHECK(stop_at(fx, &base, ck, 0, 2, NULL, &log) == PHYS_ERR_ARG);
  opt = base;
  opt.checkpoint = ck;
  size_t n;
  unsigned char* bytes = file_bytes(ck, &n);
  put_bytes(copy, bytes, n);
  free(bytes);
  opt.resume = 1;
  // options
  physFitOptions o2 = opt;
  o2.tol = 1e-9;
  memset(&log, 0, sizeof(log));
  CHECK(fit(fx, NULL, &o2, &res, &log) == PHYS_ERR_ARG);
  CHECK_MSG(strstr(log.error, ck) && strstr(log.error, "different fit options"), "%s", log.error);
  // parameters: another initial value
  double th[2] = {fx->theta0[0] * 1.5, fx->theta0[1]};
  memset(&log, 0, sizeof(log));
  CHECK(fit(fx, th, &opt, &res, &log) == PHYS_ERR_ARG);
  CHECK_MSG(strstr(log.error, "different parameters (names, initial values or bounds)"), "%s", log.error);
  // model: another contact model
  fx->m->opt.contact = PHYS_CONTACT_CONE;
  memset(&log, 0, sizeof(log));
  CHECK(fit(fx, NULL, &opt, &res, &log) == PHYS_ERR_ARG);
  CHECK_MSG(strstr(log.error, "different model"), "%s", log.error);
  fx->m->opt.contact = PHYS_CONTACT_LCP;
  // data: one sample moved by 1e-12 m
  fx->ds.traj[0].qpos[7 * 20 + 2] += 1e-12;
  memset(&log, 0, sizeof(log));
  CHECK(fit(fx, NULL, &opt, &res, &log) == PHYS_ERR_ARG);
  CHECK_MSG(strstr(log.error, "different data") && strstr(log.error, "--resume"), "%s", log.error);
  fx->ds.traj[0].qpos[7 * 20 + 2] -= 1e-12;
  // data: recorded joint forces on trajectory 0 (issue 12), one of them 1e-9 N
  physTrajectory* tr0 = &fx->ds.traj[0];
  tr0->qfrc = calloc((size_t)tr0->T * fx->ds.nv, sizeof(double));
  tr0->qfrc[5 * fx->ds.nv + 2] = 1e-9;
  memset(&log, 0, sizeof(log));
  CHECK(fit(fx, NULL, &opt, &res, &log) == PHYS_ERR_ARG);
  CHECK_MSG(strstr(log.error, "different data"), "%s", log.error);
  free(tr0->qfrc);
  tr0->qfrc = NULL;
  CHECK(same_file_bytes(ck, copy));
  // threads do not change the result: resuming with 2 is valid and gives the same bits
  opt.threads = 2;
  memset(&log, 0, sizeof(log));
  CHECK(fit(fx, NULL, &opt, &res, &log) == PHYS_OK);
  CHECK(res.resumed && same_result(&res, &ref));
  phys_fit_result_free(&res);
  phys_fit_result_free(&ref);
}

// corrupt files: one byte changed, truncated, not a checkpoint, another version, empty, L-BFGS-B work-array
// offsets that setulb did not write (hash recomputed: setulb would index wa by them): PHYS_ERR_PARSE naming
// the file, and the caller's state untouched
static void test_corrupt(const fixture* fx) {
  const char* ck = scratch("c.ckpt");
  physFitOptions opt;
  options(&opt, PHYS_OPT_LBFGSB, 1);
  physFitResult res;
  physLog log = {0};
  CHECK(stop_at(fx, &opt, ck, 0, 2, NULL, &log) == PHYS_ERR_ARG);
  opt.checkpoint = ck;
  size_t n;
  unsigned char* good = file_bytes(ck, &n);
  CHECK(good && n > 1000);
  if (!good) return;
  opt.resume = 1;
  struct {
    const char* what;
    size_t at, len;
    int flip;
    const char* msg;
  } cases[] = {{"a byte of a double changed", n / 2, n, 1, "corrupt checkpoint"},
               {"the last byte changed", n - 1, n, 1, "corrupt checkpoint"},
               {"truncated", 0, n / 2, 0, "corrupt checkpoint"},
               {"20 bytes", 0, 20, 0, "not a physid checkpoint"},
               {"empty", 0, 0, 0, "not a physid checkpoint"},
               {"the magic changed", 3, n, 1, "not a physid checkpoint"}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    unsigned char* b = malloc(n);
    memcpy(b, good, n);
    if (cases[c].flip) b[cases[c].at] ^= 0x10;
    put_bytes(ck, b, cases[c].len);
    memset(&log, 0, sizeof(log));
    physStatus st = fit(fx, NULL, &opt, &res, &log);
    CHECK_MSG(st == PHYS_ERR_PARSE && strstr(log.error, ck) && strstr(log.error, cases[c].msg), "%s: %d %s",
              cases[c].what, st, log.error);
    free(b);
  }
  // another version, and L-BFGS-B's offset of wy into wa (isave(5)) moved, each with a valid hash
  for (int c = 0; c < 2; c++) {
    unsigned char* b = malloc(n);
    memcpy(b, good, n);
    unsigned char* isave = memmem(b, n, "isave", 6);
    CHECK(isave != NULL);
    if (c == 0) b[8] = 9;
    else if (isave) isave[40 + 4 * 4] += 1;   // name[24] type pad count, then the ints
    uint64_t hsh = 0xcbf29ce484222325ull;     // FNV-1a over the bytes before the hash
    for (size_t i = 0; i + 8 < n; i++) hsh = (hsh ^ b[i]) * 0x100000001b3ull;
    memcpy(b + n - 8, &hsh, 8);
    put_bytes(ck, b, n);
    memset(&log, 0, sizeof(log));
    CHECK(fit(fx, NULL, &opt, &res, &log) == PHYS_ERR_PARSE);
    CHECK_MSG(strstr(log.error, c == 0 ? "checkpoint version 9, this physid reads version 2"
                                       : "corrupt checkpoint: L-BFGS-B's work-array offsets"), "%s", log.error);
    free(b);
  }
  // the reader: a corrupt file leaves the caller's state as it was
  put_bytes(ck, good, n - 1);
  physFitState st;
  memset(&st, 0, sizeof(st));
  double arr[4] = {1, 2, 3, 4};
  st.ntheta = 2, st.theta = arr, st.run.iter = 77;
  int found = -1;
  memset(&log, 0, sizeof(log));
  CHECK(phys_ckpt_load(ck, &st, &found, &log) == PHYS_ERR_PARSE && found == 1);
  CHECK(st.run.iter == 77 && arr[0] == 1 && arr[3] == 4);
  free(good);
}

// the target: a file that is not a checkpoint (here a copy of the model) is never replaced by a fresh fit,
// nor is a symlink (its target untouched); a missing checkpoint with resume is a fresh start (the plain
// result, not resumed); a leftover temporary (regular file) is replaced and gone after the write, one that is
// a symlink is an error that leaves its target alone
static void test_target(const fixture* fx) {
  physFitOptions opt;
  options(&opt, PHYS_OPT_LM, 1);
  physFitResult ref, res;
  physLog log = {0};
  CHECK(fit(fx, NULL, &opt, &ref, &log) == PHYS_OK);
  const char* model = scratch("model.xml");
  size_t n;
  unsigned char* xml = file_bytes("models/cube.xml", &n);
  put_bytes(model, xml, n);
  opt.checkpoint = model;
  for (int resume = 0; resume < 2; resume++) {
    opt.resume = resume;
    memset(&log, 0, sizeof(log));
    physStatus st = fit(fx, NULL, &opt, &res, &log);
    CHECK_MSG(st == (resume ? PHYS_ERR_PARSE : PHYS_ERR_IO) && strstr(log.error, model) &&
              strstr(log.error, resume ? "not a physid checkpoint" : "is not a physid checkpoint: refusing"),
              "%d %s", st, log.error);
  }
  CHECK(same_file_bytes(model, "models/cube.xml"));
  // a symlink to it
  const char* link = scratch("link.ckpt");
  unlink(link);
  CHECK(symlink(model, link) == 0);
  opt.checkpoint = link;
  opt.resume = 0;
  memset(&log, 0, sizeof(log));
  CHECK(fit(fx, NULL, &opt, &res, &log) == PHYS_ERR_IO);
  CHECK_MSG(strstr(log.error, "not a regular file"), "%s", log.error);
  CHECK(same_file_bytes(model, "models/cube.xml"));
  // resume without a checkpoint: a fresh fit
  const char* ck = scratch("fresh.ckpt");
  unlink(ck);
  opt.checkpoint = ck;
  opt.resume = 1;
  CHECK(fit(fx, NULL, &opt, &res, &log) == PHYS_OK);
  CHECK(res.resumed == 0 && same_result(&res, &ref));
  phys_fit_result_free(&res);
  char tmp[300];
  snprintf(tmp, sizeof tmp, "%s.physid-tmp", ck);
  struct stat sb;
  CHECK(stat(ck, &sb) == 0 && S_ISREG(sb.st_mode) && lstat(tmp, &sb) != 0);
  // a leftover temporary: replaced
  put_bytes(tmp, "leftover", 8);
  opt.resume = 0;
  CHECK(fit(fx, NULL, &opt, &res, &log) == PHYS_OK);
  phys_fit_result_free(&res);
  CHECK(lstat(tmp, &sb) != 0 && errno == ENOENT);
  // a leftover that is a symlink: an error, the link's target untouched
  CHECK(symlink(model, tmp) == 0);
  memset(&log, 0, sizeof(log));
  CHECK(fit(fx, NULL, &opt, &res, &log) == PHYS_ERR_IO);
  CHECK_MSG(strstr(log.error, "is not a regular file"), "%s", log.error);
  CHECK(same_file_bytes(model, "models/cube.xml"));
  unlink(tmp);
  free(xml);
  phys_fit_result_free(&ref);
}

// the hook of test_write_fails: after checkpoint (start 1, iteration 1) its folder is renamed away
typedef struct moveAway_ {
  char from[300], to[300];
  int moved;
} moveAway;

static int move_folder(void* ctx, int start, int iter) {
  moveAway* mv = ctx;
  if (start == 1 && iter == 1 && !mv->moved) mv->moved = rename(mv->from, mv->to) == 0;
  return 0;
}

// a checkpoint that cannot be written during the fit (its folder vanished after start 1's iteration 1) ends the
// fit with PHYS_ERR_IO naming the file, in a drawn start too (not skipped as a start that cannot be simulated)
static void test_write_fails(const fixture* fx) {
  moveAway mv = {{0}, {0}, 0};
  snprintf(mv.from, sizeof mv.from, "%s", scratch("sub"));
  snprintf(mv.to, sizeof mv.to, "%s", scratch("sub.moved"));
  CHECK(mkdir(mv.from, 0755) == 0);
  char ck[320];
  snprintf(ck, sizeof ck, "%s/w.ckpt", mv.from);
  physFitOptions opt;
  options(&opt, PHYS_OPT_LM, 2);
  opt.checkpoint = ck;
  opt.on_checkpoint = move_folder;
  opt.on_checkpoint_ctx = &mv;
  physFitResult res;
  physLog log = {0};
  physStatus st = fit(fx, NULL, &opt, &res, &log);
  CHECK(mv.moved);
  CHECK_MSG(st == PHYS_ERR_IO && strstr(log.error, "w.ckpt: checkpoint: cannot create"), "%d %s", st, log.error);
  if (st == PHYS_OK) phys_fit_result_free(&res);
}

#define STATE_FIXED 46   // doubles of make_state's arrays besides wa (2 parameters, 3 iterations, 8 ints)

// a state of ntheta 2 whose wa (nwa doubles) and every scalar depend on v: version v of the file
static void make_state(physFitState* st, double* arrays, int nwa, int v) {
  memset(st, 0, sizeof(*st));
  st->key[0] = 11, st->key[3] = 44;
  st->ntheta = 2, st->max_iter = 3, st->nwa = nwa, st->niwa = 8, st->best_iterations = 3;
  st->run.iter = v, st->run.nhist = 4, st->run.cur = 0.1 * v;
  double* p = arrays;
  st->theta = p, p += 2;
  st->loss_hist = p, p += 4;
  st->theta_hist = p, p += 8;
  st->D = p, p += 2;
  st->H = p, p += 4;
  st->g = p, p += 2;
  st->best = p, p += 2;
  st->mom = p, p += 2;
  st->vel = p, p += 2;
  st->best_theta = p, p += 2;
  st->best_loss_hist = p, p += 4;
  st->best_theta_hist = p, p += 8;
  st->iwa = (int*)p, p += 4;
  st->wa = p;
  for (int i = 0; i < STATE_FIXED + nwa; i++) arrays[i] = v + i * 1e-3;
}

// a child writes versions 1, 2, 1, 2, ... of a 2 MB checkpoint as fast as it can; killed (SIGKILL) at 12
// random instants after its first write, the file always loads and is exactly one of the two versions, and
// the temporary is the only other file left
static void test_kill_while_writing(void) {
  const char* ck = scratch("kill.ckpt");
  const int nwa = 1 << 18;
  double* a = calloc(STATE_FIXED + (size_t)nwa, sizeof(double));
  size_t len = STATE_FIXED + (size_t)nwa;
  double* want[2] = {calloc(len, sizeof(double)), calloc(len, sizeof(double))};
  physFitState st;
  for (int v = 0; v < 2; v++) make_state(&st, want[v], nwa, v + 1);
  srand(12345);
  int nold = 0, nnew = 0;
  for (int trial = 0; trial < 12; trial++) {
    unlink(ck);
    int fds[2];
    CHECK(pipe(fds) == 0);
    pid_t pid = fork();
    if (pid == 0) {
      close(fds[0]);
      physLog log = {0};
      for (int k = 0;; k++) {
        make_state(&st, a, nwa, 1 + k % 2);
        if (phys_ckpt_save(ck, &st, &log) != PHYS_OK) _exit(3);
        if (k == 0 && write(fds[1], "x", 1) != 1) _exit(4);
      }
    }
    close(fds[1]);
    char c;
    CHECK(read(fds[0], &c, 1) == 1);
    close(fds[0]);
    struct timespec ts = {0, (long)(rand() % 30000) * 1000};
    nanosleep(&ts, NULL);
    kill(pid, SIGKILL);
    int status;
    waitpid(pid, &status, 0);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    physFitState got;
    make_state(&got, a, nwa, 0);   // the reader needs the sizes and the arrays; the key must match
    memset(a, 0, sizeof(double) * (STATE_FIXED + (size_t)nwa));
    int found = 0;
    physLog log = {0};
    physStatus s = phys_ckpt_load(ck, &got, &found, &log);
    CHECK_MSG(s == PHYS_OK && found, "trial %d: %s", trial, log.error);
    int v = got.run.iter;
    CHECK_MSG((v == 1 || v == 2) && memcmp(a, want[v - 1], sizeof(double) * (STATE_FIXED + (size_t)nwa)) == 0,
              "trial %d: version %d", trial, v);
    nold += v == 1, nnew += v == 2;
  }
  printf("SIGKILL while writing a 2 MB checkpoint, 12 instants: version 1 %d times, version 2 %d times, never torn\n",
         nold, nnew);
  free(a);
  free(want[0]);
  free(want[1]);
}

int main(void) {
  // tmpfs when there is one: the ~1500 checkpoints' fsyncs then cost nothing (a disk's took 20 s)
  struct stat sb;
  int shm = stat("/dev/shm", &sb) == 0 && S_ISDIR(sb.st_mode) && access("/dev/shm", W_OK) == 0;
  const char* base = shm ? "/dev/shm" : "/tmp";
  snprintf(g_dir, sizeof g_dir, "%s/test_checkpoint_XXXXXX", base);
  if (!mkdtemp(g_dir)) return 1;
  fixture fx;
  if (fixture_load(&fx, 1)) {
    test_resume_points(&fx);
    test_mismatch(&fx);
    test_corrupt(&fx);
    test_target(&fx);
    test_write_fails(&fx);
  }
  fixture_free(&fx);
  test_kill_while_writing();
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g_dir);
  return test_done();
}
