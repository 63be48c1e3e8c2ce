// checkpoint.c - the fit's resumable state on disk (checkpoint.h).
//
// Format (version 2; 2 added best_stop), native byte order, every double as its 8 raw bytes (exact):
//   "PHYSCKPT" | u32 version | u32 0x01020304 (byte order) | u32 number of records |
//   records: char name[24] (NUL-padded) | u32 type ('d' double, 'i' int32, 'u' uint64, 'c' char) | u32 0 |
//            u64 count | count values |
//   u64 FNV-1a hash of every byte before it.
// The records are the fields of physFitState under fixed names ("key" first); the histories hold only the
// rows recorded so far. A reader checks magic, version, byte order and hash before it believes a byte, then
// the key (what the fit was computed from), then that every record it needs is there with its size.
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "checkpoint.h"

#define CKPT_MAGIC "PHYSCKPT"
#define CKPT_BOM 0x01020304u
#define CKPT_NAMELEN 24
#define CKPT_MAXFIELD 64
#define CKPT_MAXSIZE ((size_t)1 << 31)   // larger files are refused before they are read

//---------------------------------------------------------------------------------------------------------
// hashing

// 64-bit FNV-1a of n bytes, continuing from h
static uint64_t fnv(uint64_t h, const void* p, size_t n) {
  const unsigned char* c = p;
  for (size_t i = 0; i < n; i++) h = (h ^ c[i]) * 0x100000001b3ull;
  return h;
}

#define FNV_INIT 0xcbf29ce484222325ull
#define HASH(h, x) ((h) = fnv((h), &(x), sizeof(x)))

// the model's sizes, options and arrays (the buffer holds every array, 8-byte padded and zero-filled)
static uint64_t key_model(const physModel* m) {
  uint64_t h = FNV_INIT;
  const int sizes[] = {m->nq, m->nv, m->nbody, m->njnt, m->ngeom, m->nsite, m->nspring, m->nspringsite, m->nu,
                       m->nmesh, m->nmeshvert, m->nmeshface, m->nhullvert, m->nhullface, m->nhullfacevert,
                       m->nkey, m->npair, m->nexclude, m->nconmax, m->nnames};
  HASH(h, sizes);
  // a new field may fill padding and leave the size alone: the lists below are checked by hand too
  _Static_assert(sizeof(physOption) == 120, "a field added to physOption must enter the checkpoint's key here");
  const physOption* o = &m->opt;   // every field
  const double od[] = {o->timestep, o->gravity[0], o->gravity[1], o->gravity[2], o->baumgarte, o->penalty_stiffness,
                       o->penalty_damping, o->penalty_vslip, o->solver_tolerance};
  const int oi[] = {o->integrator, o->disableflags, o->contact, o->solver_iterations, o->gradflags, o->enableflags};
  HASH(h, od);
  HASH(h, oi);
  if (o->integrator == PHYS_INT_PBD) {   // the pbd options (issue 17; other integrators' keys unchanged)
    const int op[] = {o->pbd_substeps, o->pbd_iterations, o->pbd_jacobi};
    HASH(h, op);
    HASH(h, o->pbd_compliance);
  }
  return fnv(h, m->buffer, m->nbuffer);
}

// the samples, observed coordinates and spacing (not the file names)
static uint64_t key_data(const physDataset* ds) {
  uint64_t h = FNV_INIT;
  HASH(h, ds->ntraj);
  HASH(h, ds->nq);
  HASH(h, ds->nv);
  HASH(h, ds->dt_obs);
  h = fnv(h, ds->obs_q, (size_t)ds->nv);
  h = fnv(h, ds->obs_v, (size_t)ds->nv);
  if (ds->obs_s) h = fnv(h, ds->obs_s, (size_t)ds->nsens);   // observed sensor values (none: hash as before)
  for (int k = 0; k < ds->ntraj; k++) {
    const physTrajectory* tr = &ds->traj[k];
    HASH(h, tr->T);
    h = fnv(h, tr->time, sizeof(double) * (size_t)tr->T);
    h = fnv(h, tr->qpos, sizeof(double) * (size_t)tr->T * ds->nq);
    h = fnv(h, tr->qvel, sizeof(double) * (size_t)tr->T * ds->nv);
    // recorded inputs (only when present: the keys of fits without them are unchanged)
    if (tr->ctrl) h = fnv(h, tr->ctrl, sizeof(double) * (size_t)tr->T * ds->nu);
    if (tr->qfrc) h = fnv(h, tr->qfrc, sizeof(double) * (size_t)tr->T * ds->nv);
  }
  return h;
}

// the parameter table, theta0 and the bounds
static uint64_t key_params(const physParamTable* t, const double* theta0, const double* lo, const double* hi) {
  uint64_t h = FNV_INIT;
  HASH(h, t->n);
  HASH(h, t->ntheta);
  for (int p = 0; p < t->n; p++) {
    const physParam* q = &t->param[p];
    const int v[4] = {q->kind, q->id, q->adr, q->size};
    HASH(h, v);
    h = fnv(h, q->name, strlen(q->name) + 1);
  }
  size_t n = sizeof(double) * (size_t)t->ntheta;
  h = fnv(h, theta0, n);
  h = fnv(h, lo, n);
  return fnv(h, hi, n);
}

// the options that change the result (the controls as nu values, NULL as zeros)
static uint64_t key_options(const physFitOptions* o, int nu) {
  uint64_t h = FNV_INIT;
  const int iv[7] = {o->loss, o->horizon, o->substeps, o->optimizer, o->max_iter, o->starts, o->stall_iters};
  const double dv[7] = {o->w_pos, o->w_rot, o->w_vel, o->prior, o->tol, o->lr, o->stall_tol};
  HASH(h, iv);
  HASH(h, dv);
  HASH(h, o->seed);
  if (o->fit_start) HASH(h, o->fit_start);   // (absent when off: the keys of earlier checkpoints stand)
  for (int i = 0; i < nu; i++) {
    double u = o->ctrl ? o->ctrl[i] : 0;
    HASH(h, u);
  }
  return h;
}

// the four hashes (checkpoint.h)
void phys_ckpt_key(uint64_t key[PHYS_CKPT_NKEY], const physModel* m, const physParamTable* t,
                   const double* theta0, const double* lo, const double* hi, const physDataset* ds,
                   const physFitOptions* opt) {
  key[0] = key_model(m);
  key[1] = key_data(ds);
  key[2] = key_params(t, theta0, lo, hi);
  key[3] = key_options(opt, m->nu);
}

//---------------------------------------------------------------------------------------------------------
// the records: one table of (name, type, count, address) for writing and reading alike

typedef struct ckField_ {
  const char* name;
  char type;
  size_t count;
  void* p;
} ckField;

// bytes of one value of a type
static size_t type_size(char type) {
  return type == 'c' ? 1 : type == 'i' ? 4 : 8;
}

// the scalars (everything that sizes the arrays comes first)
static int scalar_fields(ckField* f, physFitState* s) {
  int n = 0;
#define F(nm, ty, cnt, ptr) f[n++] = (ckField){nm, ty, cnt, ptr}
  F("key", 'u', PHYS_CKPT_NKEY, s->key);
  F("ntheta", 'i', 1, &s->ntheta);
  F("max_iter", 'i', 1, &s->max_iter);
  F("optimizer", 'i', 1, &s->optimizer);
  F("nwa", 'i', 1, &s->nwa);
  F("niwa", 'i', 1, &s->niwa);
  F("start", 'i', 1, &s->start);
  F("rng", 'u', 4, s->rng);
  F("best_start", 'i', 1, &s->best_start);
  F("best_iterations", 'i', 1, &s->best_iterations);
  F("best_stop", 'i', 1, &s->best_stop);
  F("best_loss", 'd', 1, &s->best_loss);
  F("best_loss0", 'd', 1, &s->best_loss0);
  F("iter", 'i', 1, &s->run.iter);
  F("nhist", 'i', 1, &s->run.nhist);
  F("loss0", 'd', 1, &s->run.loss0);
  F("cur", 'd', 1, &s->run.cur);
  F("lambda", 'd', 1, &s->run.lambda);
  F("nu", 'd', 1, &s->run.nu);
  F("f", 'd', 1, &s->run.f);
  F("task", 'c', 60, s->run.task);
  F("csave", 'c', 60, s->run.csave);
  F("lsave", 'i', 4, s->run.lsave);
  F("isave", 'i', 44, s->run.isave);
  F("dsave", 'd', 29, s->run.dsave);
  F("b1t", 'd', 1, &s->run.b1t);
  F("b2t", 'd', 1, &s->run.b2t);
  F("lastbest", 'd', 1, &s->run.lastbest);
  F("since", 'i', 1, &s->run.since);
  F("nsimwarn", 'i', 1, &s->nsimwarn);
  F("simwarn", 'c', sizeof s->simwarn, s->simwarn);
  F("time_forward", 'd', 1, &s->time_forward);
  F("time_gradient", 'd', 1, &s->time_gradient);
  return n;
}

// the arrays, of the lengths the scalars give (histories: the rows recorded); the counts are only meaningful
// once the scalars were checked (check_sizes)
static int array_fields(ckField* f, const physFitState* s) {
  int n = 0;
  size_t nt = (size_t)s->ntheta, nb = s->best_iterations >= 0 ? (size_t)s->best_iterations + 1 : 0;
  F("best_theta", 'd', nt, s->best_theta);
  F("best_loss_hist", 'd', nb, s->best_loss_hist);
  F("best_theta_hist", 'd', nb * nt, s->best_theta_hist);
  F("theta", 'd', nt, s->theta);
  F("loss_hist", 'd', (size_t)s->run.nhist, s->loss_hist);
  F("theta_hist", 'd', (size_t)s->run.nhist * nt, s->theta_hist);
  F("D", 'd', nt, s->D);
  F("H", 'd', nt * nt, s->H);
  F("g", 'd', nt, s->g);
  F("wa", 'd', (size_t)s->nwa, s->wa);
  F("iwa", 'i', (size_t)s->niwa, s->iwa);
  F("best", 'd', nt, s->best);
  F("mom", 'd', nt, s->mom);
  F("vel", 'd', nt, s->vel);
#undef F
  return n;
}

//---------------------------------------------------------------------------------------------------------
// writing

typedef struct ckBuf_ {
  unsigned char* p;
  size_t len, cap;
  int nomem;
} ckBuf;

// append n bytes
static void put(ckBuf* b, const void* data, size_t n) {
  if (b->nomem) return;
  if (b->len + n > b->cap) {
    size_t cap = 2 * (b->len + n) + 4096;
    unsigned char* p = realloc(b->p, cap);
    if (!p) {
      b->nomem = 1;
      return;
    }
    b->p = p, b->cap = cap;
  }
  memcpy(b->p + b->len, data, n);
  b->len += n;
}

// append one record
static void put_field(ckBuf* b, const ckField* f) {
  char name[CKPT_NAMELEN] = {0};
  strncpy(name, f->name, CKPT_NAMELEN - 1);
  uint32_t type = (uint32_t)f->type, pad = 0;
  uint64_t count = f->count;
  put(b, name, sizeof name);
  put(b, &type, 4);
  put(b, &pad, 4);
  put(b, &count, 8);
  if (f->count) put(b, f->p, f->count * type_size(f->type));
}

// the whole file's bytes: header, records, hash
static void serialize(ckBuf* b, const physFitState* st) {
  physFitState s = *st;   // the field table takes addresses; the arrays are the caller's
  ckField f[CKPT_MAXFIELD];
  int ns = scalar_fields(f, &s);
  int na = array_fields(f + ns, &s);
  uint32_t version = PHYS_CKPT_VERSION, bom = CKPT_BOM, nrec = (uint32_t)(ns + na);
  put(b, CKPT_MAGIC, 8);
  put(b, &version, 4);
  put(b, &bom, 4);
  put(b, &nrec, 4);
  for (int i = 0; i < ns + na; i++) put_field(b, &f[i]);
  uint64_t h = b->nomem ? 0 : fnv(FNV_INIT, b->p, b->len);
  put(b, &h, 8);
}

// write all n bytes to fd (retrying short writes and EINTR); 0 on failure with errno set
static int write_all(int fd, const unsigned char* p, size_t n) {
  while (n > 0) {
    ssize_t k = write(fd, p, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) {
      if (k == 0) errno = EIO;
      return 0;
    }
    p += k, n -= (size_t)k;
  }
  return 1;
}

// fsync the folder that holds path, so that the rename itself is durable (failure to open it is ignored:
// some file systems do not allow it)
static void sync_folder(const char* path) {
  char dir[PATH_MAX];
  const char* slash = strrchr(path, '/');
  if (!slash) snprintf(dir, sizeof dir, ".");
  else if (slash == path) snprintf(dir, sizeof dir, "/");
  else snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  fsync(fd);
  close(fd);
}

// the checkpoint's magic at the start of an open file: 1 yes, 0 no (shorter, or other bytes)
static int has_magic(int fd) {
  char head[8];
  ssize_t k = pread(fd, head, 8, 0);
  return k == 8 && memcmp(head, CKPT_MAGIC, 8) == 0;
}

// create PATH.physid-tmp for writing into tmp (PATH_MAX): a leftover of a killed run is removed first if it is
// a regular file, any other kind is refused (never followed); the descriptor, or -1 with a message in log
static int open_tmp(const char* path, char* tmp, physLog* log) {
  if (snprintf(tmp, PATH_MAX, "%s.physid-tmp", path) >= PATH_MAX) {
    phys_error(log, PHYS_ERR_IO, "%s: checkpoint: file name too long", path);
    return -1;
  }
  struct stat sb;
  if (lstat(tmp, &sb) == 0 && (!S_ISREG(sb.st_mode) || unlink(tmp) != 0)) {
    phys_error(log, PHYS_ERR_IO, "%s: checkpoint: its temporary %s exists and %s", path, tmp,
               S_ISREG(sb.st_mode) ? "cannot be removed" : "is not a regular file");
    return -1;
  }
  int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) phys_error(log, PHYS_ERR_IO, "%s: checkpoint: cannot create %s: %s", path, tmp, strerror(errno));
  return fd;
}

// a target the checkpoint may replace, in a folder where its temporary can be created (checkpoint.h)
physStatus phys_ckpt_check_target(const char* path, physLog* log) {
  struct stat sb;
  if (!path || !*path) return phys_error(log, PHYS_ERR_ARG, "checkpoint: no file name");
  int exists = lstat(path, &sb) == 0;
  if (!exists && errno != ENOENT) return phys_error(log, PHYS_ERR_IO, "%s: checkpoint: %s", path, strerror(errno));
  if (exists && !S_ISREG(sb.st_mode))
    return phys_error(log, PHYS_ERR_IO, "%s: checkpoint: not a regular file (a checkpoint replaces only a new "
                      "name or a regular file, never a link, device, FIFO or folder)", path);
  if (exists && sb.st_size > 0) {
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return phys_error(log, PHYS_ERR_IO, "%s: checkpoint: %s", path, strerror(errno));
    int ok = has_magic(fd);
    close(fd);
    if (!ok)
      return phys_error(log, PHYS_ERR_IO, "%s: exists and is not a physid checkpoint: refusing to overwrite it "
                        "(give --checkpoint a new file name)", path);
  }
  char tmp[PATH_MAX];
  int fd = open_tmp(path, tmp, log);
  if (fd < 0) return log->status;
  close(fd);
  unlink(tmp);
  return PHYS_OK;
}

// write the bytes to PATH.physid-tmp, fsync, rename over path, fsync the folder (checkpoint.h)
static physStatus write_atomic(const char* path, const ckBuf* b, physLog* log) {
  char tmp[PATH_MAX];
  int fd = open_tmp(path, tmp, log);
  if (fd < 0) return log->status;
  int ok = write_all(fd, b->p, b->len) && fsync(fd) == 0;
  int err = errno;
  if (close(fd) != 0 && ok) ok = 0, err = errno;
  if (ok && rename(tmp, path) != 0) ok = 0, err = errno;
  if (!ok) {
    unlink(tmp);
    return phys_error(log, PHYS_ERR_IO, "%s: checkpoint: cannot write it: %s", path, strerror(err));
  }
  sync_folder(path);
  return PHYS_OK;
}

// serialize and write atomically (checkpoint.h)
physStatus phys_ckpt_save(const char* path, const physFitState* st, physLog* log) {
  ckBuf b = {0};
  serialize(&b, st);
  physStatus s = b.nomem ? phys_error(log, PHYS_ERR_NOMEM, "%s: checkpoint: out of memory", path)
                         : write_atomic(path, &b, log);
  free(b.p);
  return s;
}

//---------------------------------------------------------------------------------------------------------
// reading

// the whole file (malloc'd) into *data, *len; PHYS_OK with *data NULL if it does not exist
static physStatus read_file(const char* path, unsigned char** data, size_t* len, physLog* log) {
  *data = NULL, *len = 0;
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT) return PHYS_OK;
  if (fd < 0) return phys_error(log, PHYS_ERR_IO, "%s: checkpoint: cannot open: %s", path, strerror(errno));
  struct stat sb;
  physStatus s = PHYS_OK;
  if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode))
    s = phys_error(log, PHYS_ERR_IO, "%s: checkpoint: not a regular file", path);
  else if ((size_t)sb.st_size > CKPT_MAXSIZE)
    s = phys_error(log, PHYS_ERR_PARSE, "%s: not a physid checkpoint (%lld bytes)", path, (long long)sb.st_size);
  else if (!(*data = malloc((size_t)sb.st_size + 1)))
    s = phys_error(log, PHYS_ERR_NOMEM, "%s: checkpoint: out of memory", path);
  size_t n = 0;
  while (s == PHYS_OK && n < (size_t)sb.st_size) {
    ssize_t k = read(fd, *data + n, (size_t)sb.st_size - n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0)
      s = phys_error(log, PHYS_ERR_IO, "%s: checkpoint: cannot read: %s", path, k ? strerror(errno) : "short read");
    else n += (size_t)k;
  }
  close(fd);
  if (s != PHYS_OK) {
    free(*data);
    *data = NULL;
  }
  *len = n;
  return s;
}

// the record named name in the file's records (after the header), NULL if absent; sets its count and payload
static const unsigned char* find_record(const unsigned char* p, size_t len, uint32_t nrec, const char* name,
                                        uint32_t* type, uint64_t* count) {
  size_t at = 20;
  for (uint32_t r = 0; r < nrec && at + CKPT_NAMELEN + 16 <= len; r++) {
    uint64_t cnt;
    uint32_t ty;
    memcpy(&ty, p + at + CKPT_NAMELEN, 4);
    memcpy(&cnt, p + at + CKPT_NAMELEN + 8, 8);
    size_t body = at + CKPT_NAMELEN + 16, size = type_size((char)ty);
    if (cnt > (len - body) / size) return NULL;   // runs past the end (the hash makes this a corrupt file)
    if (strncmp((const char*)p + at, name, CKPT_NAMELEN) == 0) {
      *type = ty, *count = cnt;
      return p + body;
    }
    at = body + cnt * size;
  }
  return NULL;
}

// check and copy the fields f[0..n) from the file into their addresses; 0 with a message on a missing
// record or one of another type or size
static int read_fields(const char* path, const unsigned char* p, size_t len, uint32_t nrec, const ckField* f,
                       int n, physLog* log) {
  for (int pass = 0; pass < 2; pass++)   // check all, then copy all
    for (int i = 0; i < n; i++) {
      uint32_t type;
      uint64_t count;
      const unsigned char* v = find_record(p, len, nrec, f[i].name, &type, &count);
      if (!v || type != (uint32_t)f[i].type || count != f[i].count) {
        phys_error(log, PHYS_ERR_PARSE, "%s: corrupt checkpoint: record '%s' %s", path, f[i].name,
                   !v ? "missing" : "of the wrong type or size");
        return 0;
      }
      if (pass == 1 && count) memcpy(f[i].p, v, count * type_size(f[i].type));
    }
  return 1;
}

// the scalars read into s must describe arrays of the caller's sizes and counters within them
static int check_sizes(const char* path, const physFitState* s, const physFitState* want, physLog* log) {
  if (s->ntheta == want->ntheta && s->max_iter == want->max_iter && s->optimizer == want->optimizer &&
      s->nwa == want->nwa && s->niwa == want->niwa && s->run.nhist >= 0 && s->run.nhist <= s->max_iter + 1 &&
      s->best_iterations >= -1 && s->best_iterations <= s->max_iter && s->start >= 0)
    return 1;
  phys_error(log, PHYS_ERR_PARSE, "%s: corrupt checkpoint: sizes (%d parameters, %d iterations) do not match the "
             "fit (%d, %d) or counters out of range", path, s->ntheta, s->max_iter, want->ntheta, want->max_iter);
  return 0;
}

// the key's components that differ, as "model, data" into buf
static void key_diff(char* buf, size_t n, const uint64_t* a, const uint64_t* b) {
  static const char* const what[PHYS_CKPT_NKEY] = {
      "model", "data", "parameters (names, initial values or bounds)", "fit options"};
  buf[0] = 0;
  for (int i = 0; i < PHYS_CKPT_NKEY; i++)
    if (a[i] != b[i]) snprintf(buf + strlen(buf), n - strlen(buf), "%s%s", buf[0] ? ", " : "", what[i]);
}

// header, hash, key and records of the file's bytes into st
static physStatus parse(const char* path, const unsigned char* p, size_t len, physFitState* st, physLog* log) {
  uint32_t version, bom, nrec;
  if (len < 28 || memcmp(p, CKPT_MAGIC, 8) != 0)
    return phys_error(log, PHYS_ERR_PARSE, "%s: not a physid checkpoint", path);
  memcpy(&version, p + 8, 4);
  memcpy(&bom, p + 12, 4);
  memcpy(&nrec, p + 16, 4);
  if (bom != CKPT_BOM)
    return phys_error(log, PHYS_ERR_PARSE, "%s: checkpoint written on a machine of another byte order", path);
  if (version != PHYS_CKPT_VERSION)
    return phys_error(log, PHYS_ERR_PARSE, "%s: checkpoint version %u, this physid reads version %d", path, version,
                      PHYS_CKPT_VERSION);
  uint64_t h;
  memcpy(&h, p + len - 8, 8);
  if (fnv(FNV_INIT, p, len - 8) != h)
    return phys_error(log, PHYS_ERR_PARSE, "%s: corrupt checkpoint (truncated or modified: its hash does not match)",
                      path);
  len -= 8;
  physFitState s = *st;
  ckField f[CKPT_MAXFIELD];
  if (!read_fields(path, p, len, nrec, f, scalar_fields(f, &s), log)) return log->status;
  char diff[256];
  key_diff(diff, sizeof diff, s.key, st->key);
  if (diff[0])
    return phys_error(log, PHYS_ERR_ARG, "%s: the checkpoint was written for another fit (different %s): remove it "
                      "or run without --resume", path, diff);
  if (!check_sizes(path, &s, st, log)) return log->status;
  if (!read_fields(path, p, len, nrec, f, array_fields(f, &s), log)) return log->status;
  *st = s;
  return PHYS_OK;
}

// read and check (checkpoint.h)
physStatus phys_ckpt_load(const char* path, physFitState* st, int* found, physLog* log) {
  unsigned char* p;
  size_t len;
  *found = 0;
  physStatus s = read_file(path, &p, &len, log);
  if (s != PHYS_OK || !p) return s;
  *found = 1;
  s = parse(path, p, len, st, log);
  free(p);
  return s;
}
