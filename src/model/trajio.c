// trajio.c - trajectory CSV reading (strict validation) and writing (exact "%.17g" round trip).
#include "trajio.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

// column layout of a file: optional t, then nq positions, nv velocities, then the optional recorded inputs:
// nu controls u0..u{nu-1} and ntau applied joint forces tau0..tau{nv-1} (0 when the file has none), then the
// optional activations act0..act{na-1} (issue 15 item 2; 0 when the file has none)
typedef struct trajLayout_ {
  int has_time;
  int nq, nv;
  int nu, ntau;
  int mnu;                  // the model's actuators (for messages)
  int na, mna;              // activation columns of the file (0 or the model's mna)
} trajLayout;

//---------------------------------------------------------------------------------------------------------
// small helpers

// number of columns of a layout
static int layout_ncol(const trajLayout* L) {
  return L->has_time + L->nq + L->nv + L->nu + L->ntau + L->na;
}

// name of column c of a layout: "t", "q<i>" or "v<i>"
static void column_name(char name[32], const trajLayout* L, int c) {
  int i = c - L->has_time;
  if (i < 0) {
    snprintf(name, 32, "t");
  } else if (i < L->nq) {
    snprintf(name, 32, "q%d", i);
  } else if (i < L->nq + L->nv) {
    snprintf(name, 32, "v%d", i - L->nq);
  } else if (i < L->nq + L->nv + L->nu) {
    snprintf(name, 32, "u%d", i - L->nq - L->nv);
  } else if (i < L->nq + L->nv + L->nu + L->ntau) {
    snprintf(name, 32, "tau%d", i - L->nq - L->nv - L->nu);
  } else {
    snprintf(name, 32, "act%d", i - L->nq - L->nv - L->nu - L->ntau);
  }
}

// the expected header as text for messages, e.g. "t,q0..q6,v0..v6"
static void layout_describe(char* text, size_t n, const trajLayout* L) {
  char q[32] = "", v[32] = "";
  if (L->nq) snprintf(q, sizeof q, "q0..q%d", L->nq - 1);
  if (L->nv) snprintf(v, sizeof v, "v0..v%d", L->nv - 1);
  snprintf(text, n, "%s%s%s%s%s", L->has_time ? "t" : "", L->has_time && L->nq ? "," : "", q,
           (L->has_time || L->nq) && L->nv ? "," : "", v);
  size_t len = strlen(text);
  if (L->nu && len < n) snprintf(text + len, n - len, ",u0..u%d", L->nu - 1);
  len = strlen(text);
  if (L->ntau && len < n) snprintf(text + len, n - len, ",tau0..tau%d", L->ntau - 1);
  len = strlen(text);
  if (L->na && len < n) snprintf(text + len, n - len, ",act0..act%d", L->na - 1);
}

//---------------------------------------------------------------------------------------------------------
// input files and bounded lines

// what a non-regular file is, for messages
static const char* file_kind(mode_t mode) {
  return S_ISDIR(mode) ? "a folder" : S_ISCHR(mode) ? "a character device" : S_ISBLK(mode) ? "a block device"
         : S_ISSOCK(mode) ? "a socket" : "not a regular file";
}

physStatus phys_input_open(FILE** f, const char* filename, physLog* log) {
  struct stat st;
  *f = NULL;
  if (stat(filename, &st) != 0) return phys_error(log, PHYS_ERR_IO, "%s: cannot open: %s", filename, strerror(errno));
  if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode)) {
    return phys_error(log, PHYS_ERR_IO, "%s: is %s; only regular files and FIFOs are read", filename,
                      file_kind(st.st_mode));
  }
  if (!(*f = fopen(filename, "rb"))) {
    return phys_error(log, PHYS_ERR_IO, "%s: cannot open: %s", filename, strerror(errno));
  }
  if (fstat(fileno(*f), &st) != 0 || (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode))) {   // replaced meanwhile
    fclose(*f);
    *f = NULL;
    return phys_error(log, PHYS_ERR_IO, "%s: is %s; only regular files and FIFOs are read", filename,
                      file_kind(st.st_mode));
  }
  return PHYS_OK;
}

void phys_line_init(physLineReader* r, FILE* f, const char* filename) {
  memset(r, 0, sizeof *r);
  r->f = f;
  r->filename = filename;
  r->max_rows = PHYS_TRAJ_MAXROWS;
}

void phys_line_free(physLineReader* r) {
  free(r->buf);
  r->buf = NULL;
  r->cap = 0;
}

// append byte c at position len of r->buf, growing it (capacity doubling); 0 when out of memory
static int line_put(physLineReader* r, size_t len, int c) {
  if (len + 1 >= r->cap) {
    size_t n = r->cap ? 2 * r->cap : 256;
    char* p = realloc(r->buf, n);
    if (!p) return 0;
    r->buf = p;
    r->cap = n;
  }
  r->buf[len] = (char)c;
  return 1;
}

// the bytes of the next line into r->buf (no terminator): its length, -1 at end of file, -2 on an error (log)
static long line_read(physLineReader* r, physLog* log) {
  size_t len = 0;
  int c = EOF, line = r->lineno + 1;
  physStatus s = PHYS_OK;
  flockfile(r->f);
  while (s == PHYS_OK && (c = getc_unlocked(r->f)) != EOF && c != '\n') {
    if (len >= PHYS_LINE_MAX) {
      s = phys_error(log, PHYS_ERR_SIZE, "%s:%d: line longer than %d bytes (not a CSV file?)", r->filename, line,
                     PHYS_LINE_MAX);
    } else if (c == 0) {
      s = phys_error(log, PHYS_ERR_PARSE, "%s:%d: NUL byte at column %zu (a binary or UTF-16 file?)", r->filename,
                     line, len + 1);
    } else if (!line_put(r, len++, c)) {
      s = phys_error(log, PHYS_ERR_NOMEM, "%s:%d: out of memory reading the line", r->filename, line);
    }
  }
  funlockfile(r->f);
  if (s == PHYS_OK && ferror(r->f)) {
    s = phys_error(log, PHYS_ERR_IO, "%s:%d: read error: %s", r->filename, line, strerror(errno));
  }
  if (s == PHYS_OK && c == EOF && len == 0) return -1;
  if (s == PHYS_OK && !line_put(r, len, 0)) {
    s = phys_error(log, PHYS_ERR_NOMEM, "%s:%d: out of memory reading the line", r->filename, line);
  }
  r->status = s;
  return s == PHYS_OK ? (long)len : -2;
}

int phys_line_next(physLineReader* r, physLog* log) {
  long len = line_read(r, log);
  if (len < 0) return len == -1 ? 0 : -1;
  r->lineno++;
  while (len > 0 && r->buf[len - 1] == '\r') r->buf[--len] = 0;
  if (r->lineno == 1 && len >= 3 && memcmp(r->buf, "\xEF\xBB\xBF", 3) == 0) {
    memmove(r->buf, r->buf + 3, (size_t)len - 2);
  }
  return 1;
}

// 1 if the line holds only spaces and tabs
static int line_blank(const char* s) {
  return s[strspn(s, " \t")] == 0;
}

// number of comma-separated fields in a line
static int count_fields(const char* s) {
  int n = 1;
  for (; *s; s++) n += (*s == ',');
  return n;
}

char* phys_csv_field(char** cursor) {
  char* start = *cursor;
  char* comma = strchr(start, ',');
  *cursor = comma ? comma + 1 : start + strlen(start);
  if (comma) *comma = 0;
  start += strspn(start, " \t");
  char* end = start + strlen(start);
  while (end > start && (end[-1] == ' ' || end[-1] == '\t')) *--end = 0;
  return start;
}

//---------------------------------------------------------------------------------------------------------
// header and rows

// check a column count against the layout: "file:line: expected N columns (...), found M"
static physStatus check_ncol(const physLineReader* r, const trajLayout* L, int found, physLog* log) {
  if (found == layout_ncol(L)) return PHYS_OK;
  char text[160];
  layout_describe(text, sizeof text, L);
  return phys_error(log, PHYS_ERR_SIZE, "%s:%d: expected %d columns (%s for nq=%d, nv=%d, nu=%d%s), found %d",
                    r->filename, r->lineno, layout_ncol(L), text, L->nq, L->nv, L->mnu,
                    L->nu || L->ntau ? "" : "; recorded inputs may follow: u0..u{nu-1} then tau0..tau{nv-1}", found);
}

// the name of field c (0-based) of a header line into out (empty if the line has fewer fields)
static void header_field(char out[32], const char* line, int c) {
  for (int k = 0; k < c && line; k++) {
    line = strchr(line, ',');
    if (line) line++;
  }
  out[0] = 0;
  if (!line) return;
  line += strspn(line, " \t");
  size_t n = strcspn(line, ", \t");
  if (n < 32) memcpy(out, line, n), out[n] = 0;
}

// which input groups follow the state columns: u0.. (the model's nu controls) then tau0.. (nv forces), then
// the activations act0.. (the model's na), recognised by the first name after the state; the count and every name are checked by the caller
static void header_inputs(trajLayout* L, const char* line, int mnu) {
  char name[32];
  int base = L->has_time + L->nq + L->nv;
  header_field(name, line, base);
  if (mnu > 0 && strcmp(name, "u0") == 0) {
    L->nu = mnu;
    header_field(name, line, base + mnu);
  }
  if (L->nv > 0 && strcmp(name, "tau0") == 0) {
    L->ntau = L->nv;
    header_field(name, line, base + L->nu + L->nv);
  }
  if (L->mna > 0 && strcmp(name, "act0") == 0) L->na = L->mna;
}

// parse the header (the reader's current line): decide whether `t` is present and which recorded inputs follow
// the state, then check the count and every name
static physStatus parse_header(trajLayout* L, physLineReader* r, int flags, physLog* log) {
  char first[32];
  header_field(first, r->buf, 0);
  L->has_time = strcmp(first, "t") == 0 || !(flags & PHYS_TRAJ_TIME_OPTIONAL);
  header_inputs(L, r->buf, L->mnu);
  char* cursor = r->buf;
  int nfield = count_fields(r->buf);
  char* first_cut = phys_csv_field(&cursor);
  physStatus s = check_ncol(r, L, nfield, log);
  if (s != PHYS_OK) return s;
  for (int c = 0; c < nfield; c++) {
    const char* found = c == 0 ? first_cut : phys_csv_field(&cursor);
    char want[32];
    column_name(want, L, c);
    if (strcmp(found, want) != 0) {
      return phys_error(log, PHYS_ERR_PARSE, "%s:%d: header column %d is '%.40s', expected '%s'",
                        r->filename, r->lineno, c + 1, found, want);
    }
  }
  return PHYS_OK;
}

// parse one finite number from a field; the message names file:line and the column
static physStatus parse_value(double* value, const char* field, const physLineReader* r,
                              const trajLayout* L, int c, physLog* log) {
  char name[32];
  column_name(name, L, c);
  if (!*field) {
    return phys_error(log, PHYS_ERR_PARSE, "%s:%d: column '%s': empty value", r->filename, r->lineno,
                      name);
  }
  char* end;
  errno = 0;
  *value = strtod(field, &end);
  if (*end) {
    return phys_error(log, PHYS_ERR_PARSE, "%s:%d: column '%s': '%.40s' is not a number", r->filename,
                      r->lineno, name, field);
  }
  if (!isfinite(*value)) {
    return phys_error(log, PHYS_ERR_VALUE, "%s:%d: column '%s': value '%.40s' is not finite",
                      r->filename, r->lineno, name, field);
  }
  return PHYS_OK;
}

// parse the current line as a data row into time (0 without a t column), qpos, qvel, the inputs (ctrl: L->nu
// values, qfrc: L->ntau values) and the activations (act: L->na values)
static physStatus parse_row(double* time, double* qpos, double* qvel, double* ctrl, double* qfrc, double* act,
                            physLineReader* r, const trajLayout* L, physLog* log) {
  physStatus s = check_ncol(r, L, count_fields(r->buf), log);
  char* cursor = r->buf;
  *time = 0;
  for (int c = 0; s == PHYS_OK && c < layout_ncol(L); c++) {
    int i = c - L->has_time, iu = i - L->nq - L->nv, ia = iu - L->nu - L->ntau;
    double* dst = i < 0 ? time : i < L->nq ? qpos + i : iu < 0 ? qvel + (i - L->nq)
                  : iu < L->nu ? ctrl + iu : ia < 0 ? qfrc + (iu - L->nu) : act + ia;
    s = parse_value(dst, phys_csv_field(&cursor), r, L, c, log);
  }
  return s;
}

//---------------------------------------------------------------------------------------------------------
// trajectory storage

// make room for one more row (capacity doubling); PHYS_ERR_SIZE past r->max_rows, PHYS_ERR_NOMEM on failure
static physStatus traj_reserve(physTraj* t, int* cap, const physLineReader* r, physLog* log) {
  if (t->nrow >= r->max_rows) {
    return phys_error(log, PHYS_ERR_SIZE, "%s:%d: more than %d data rows (the limit of one file)", r->filename,
                      r->lineno, r->max_rows);
  }
  if (t->nrow < *cap) return PHYS_OK;
  const char* filename = r->filename;
  size_t n = *cap ? 2 * (size_t)*cap : 64;
  size_t qsize = (size_t)(t->nq ? t->nq : 1) * sizeof(double);
  size_t vsize = (size_t)(t->nv ? t->nv : 1) * sizeof(double);
  void* p;
  if ((p = realloc(t->line, n * sizeof(int)))) t->line = p;
  if (p && (p = realloc(t->time, n * sizeof(double)))) t->time = p;
  if (p && (p = realloc(t->qpos, n * qsize))) t->qpos = p;
  if (p && (p = realloc(t->qvel, n * vsize))) t->qvel = p;
  if (p && t->nu && (p = realloc(t->ctrl, n * (size_t)t->nu * sizeof(double)))) t->ctrl = p;
  if (p && t->ntau && (p = realloc(t->qfrc, n * vsize))) t->qfrc = p;
  if (p && t->na && (p = realloc(t->act, n * (size_t)t->na * sizeof(double)))) t->act = p;
  if (!p) return phys_error(log, PHYS_ERR_NOMEM, "%s: out of memory at %d rows", filename, t->nrow);
  *cap = (int)n;
  return PHYS_OK;
}

// release the arrays of a trajectory and zero it
void phys_traj_free(physTraj* traj) {
  free(traj->line);
  free(traj->time);
  free(traj->qpos);
  free(traj->qvel);
  free(traj->ctrl);
  free(traj->qfrc);
  free(traj->act);
  memset(traj, 0, sizeof *traj);
}

// read all data rows after the header; blank lines are allowed only at the end of the file
static physStatus read_rows(physTraj* t, physLineReader* r, const trajLayout* L, const physModel* m,
                            physLog* log) {
  int cap = 0, blank = 0;
  int more;
  while ((more = phys_line_next(r, log)) > 0) {
    if (line_blank(r->buf)) {
      if (!blank) blank = r->lineno;
      continue;
    }
    if (blank) {
      return phys_error(log, PHYS_ERR_PARSE, "%s:%d: blank line inside the data", r->filename, blank);
    }
    physStatus s = traj_reserve(t, &cap, r, log);
    if (s == PHYS_OK) {
      s = parse_row(t->time + t->nrow, t->qpos + (size_t)t->nrow * t->nq, t->qvel + (size_t)t->nrow * t->nv,
                    t->nu ? t->ctrl + (size_t)t->nrow * t->nu : NULL,
                    t->ntau ? t->qfrc + (size_t)t->nrow * t->ntau : NULL,
                    t->na ? t->act + (size_t)t->nrow * t->na : NULL, r, L, log);
    }
    if (s == PHYS_OK) s = phys_traj_check_quat(t->qpos + (size_t)t->nrow * t->nq, m, r->filename,
                                                r->lineno, log);
    if (s != PHYS_OK) return s;
    t->line[t->nrow++] = r->lineno;
  }
  if (more < 0) return r->status;
  if (!t->nrow) return phys_error(log, PHYS_ERR_PARSE, "%s: no data rows after the header", r->filename);
  return PHYS_OK;
}

physStatus phys_traj_read_lines(physTraj* traj, const physModel* m, physLineReader* r, int flags, physLog* log) {
  memset(traj, 0, sizeof *traj);
  traj->nq = m->nq;
  traj->nv = m->nv;
  trajLayout L = {1, m->nq, m->nv, 0, 0, m->nu, 0, m->na};
  physStatus s = parse_header(&L, r, flags, log);
  traj->nu = L.nu;
  traj->ntau = L.ntau;
  traj->na = L.na;
  if (s == PHYS_OK) s = read_rows(traj, r, &L, m, log);
  traj->has_time = L.has_time;
  if (s != PHYS_OK) phys_traj_free(traj);
  return s;
}

// read a trajectory CSV: open (a regular file or a FIFO), header, rows; traj is empty on any error
physStatus phys_traj_read(physTraj* traj, const physModel* m, const char* filename, int flags,
                          physLog* log) {
  memset(traj, 0, sizeof *traj);
  FILE* f;
  physStatus s = phys_input_open(&f, filename, log);
  if (s != PHYS_OK) return s;
  physLineReader r;
  phys_line_init(&r, f, filename);
  int first = phys_line_next(&r, log);
  if (first == 0) {
    s = phys_error(log, PHYS_ERR_PARSE, "%s: empty file (expected a header line 't,q0,...,v0,...')", filename);
  } else if (first < 0) {
    s = r.status;
  } else {
    s = phys_traj_read_lines(traj, m, &r, flags, log);
  }
  phys_line_free(&r);
  fclose(f);
  return s;
}

// read exactly one state row (t optional), its inputs into ctrl / qfrc and its activations into act when given
// (else zero)
physStatus phys_traj_read_state_act(double* time, double* qpos, double* qvel, double* act, double* ctrl,
                                    double* qfrc, const physModel* m, const char* filename, physLog* log) {
  physTraj t;
  physStatus s = phys_traj_read(&t, m, filename, PHYS_TRAJ_TIME_OPTIONAL, log);
  if (s != PHYS_OK) return s;
  if (t.nrow != 1) {
    s = phys_error(log, PHYS_ERR_SIZE, "%s:%d: expected exactly one state row, found %d rows", filename,
                   t.line[1], t.nrow);
  } else {
    *time = t.time[0];
    if (m->nq) memcpy(qpos, t.qpos, (size_t)m->nq * sizeof(double));
    if (m->nv) memcpy(qvel, t.qvel, (size_t)m->nv * sizeof(double));
    for (int i = 0; ctrl && i < m->nu; i++) ctrl[i] = t.nu ? t.ctrl[i] : 0;
    for (int i = 0; qfrc && i < m->nv; i++) qfrc[i] = t.ntau ? t.qfrc[i] : 0;
    for (int i = 0; act && i < m->na; i++) act[i] = t.na ? t.act[i] : 0;
  }
  phys_traj_free(&t);
  return s;
}

physStatus phys_traj_read_state_inputs(double* time, double* qpos, double* qvel, double* ctrl, double* qfrc,
                                       const physModel* m, const char* filename, physLog* log) {
  return phys_traj_read_state_act(time, qpos, qvel, NULL, ctrl, qfrc, m, filename, log);
}

physStatus phys_traj_read_state(double* time, double* qpos, double* qvel, const physModel* m,
                                const char* filename, physLog* log) {
  return phys_traj_read_state_inputs(time, qpos, qvel, NULL, NULL, m, filename, log);
}

//---------------------------------------------------------------------------------------------------------
// quaternions

// name of joint j for messages ("joint 3" if unnamed)
static void joint_label(char label[160], const physModel* m, int j) {
  int adr = m->jnt_name ? m->jnt_name[j] : -1;
  if (adr >= 0 && adr < m->nnames && m->names[adr]) {
    snprintf(label, 160, "joint '%.128s'", m->names + adr);
  } else {
    snprintf(label, 160, "joint %d", j);
  }
}

// check |q| - 1 within tolerance, then q <- q/|q|; a norm already 1 to rounding (4 eps) is left
// untouched so that states written by a simulation read back bit for bit
physStatus phys_traj_check_quat(double* qpos, const physModel* m, const char* filename, int line,
                                physLog* log) {
  for (int j = 0; j < m->njnt; j++) {
    int type = m->jnt_type[j];
    if (type != PHYS_JNT_FREE && type != PHYS_JNT_BALL) continue;
    int adr = m->jnt_qposadr[j] + (type == PHYS_JNT_FREE ? 3 : 0);
    double* q = qpos + adr;
    double norm = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    if (!(fabs(norm - 1) <= PHYS_TRAJ_QUAT_TOL)) {
      char label[160];
      joint_label(label, m, j);
      return phys_error(log, PHYS_ERR_VALUE,
                        "%s:%d: %s (%s): quaternion q%d..q%d has norm %.17g, must be 1 within %g",
                        filename, line, label, type == PHYS_JNT_FREE ? "free" : "ball", adr, adr + 3,
                        norm, PHYS_TRAJ_QUAT_TOL);
    }
    if (fabs(norm - 1) > 4 * DBL_EPSILON) {
      for (int k = 0; k < 4; k++) q[k] /= norm;
    }
  }
  return PHYS_OK;
}

//---------------------------------------------------------------------------------------------------------
// writing

// header: t,q0,...,q{nq-1},v0,...,v{nv-1}[,u0,...,u{nu-1}][,tau0,...,tau{nv-1}]
physStatus phys_traj_write_header_u(FILE* f, const physModel* m, int with_ctrl, int with_qfrc) {
  return phys_traj_write_header_s(f, m, with_ctrl, with_qfrc, 0, 0);
}

// column name of value k of sensor i: sensor:NAME (one value) or sensor:NAME:k, NAME its index when unnamed
const char* phys_sensor_column(const physModel* m, int i, int k, char* buf, size_t n) {
  const char* name = phys_id2name(m, "sensor", i);
  char idx[16];
  if (!name[0]) snprintf(idx, sizeof(idx), "%d", i), name = idx;
  if (m->sensor_dim[i] == 1) snprintf(buf, n, "sensor:%s", name);
  else snprintf(buf, n, "sensor:%s:%d", name, k);
  return buf;
}

physStatus phys_traj_write_header_s(FILE* f, const physModel* m, int with_ctrl, int with_qfrc, int with_act,
                                    int with_sensors) {
  fputc('t', f);
  for (int i = 0; i < m->nq; i++) fprintf(f, ",q%d", i);
  for (int i = 0; i < m->nv; i++) fprintf(f, ",v%d", i);
  for (int i = 0; with_ctrl && i < m->nu; i++) fprintf(f, ",u%d", i);
  for (int i = 0; with_qfrc && i < m->nv; i++) fprintf(f, ",tau%d", i);
  for (int i = 0; with_act && i < m->na; i++) fprintf(f, ",act%d", i);
  for (int i = 0; with_sensors && i < m->nsensor; i++) {
    char col[192];
    for (int k = 0; k < m->sensor_dim[i]; k++) fprintf(f, ",%s", phys_sensor_column(m, i, k, col, sizeof(col)));
  }
  fputc('\n', f);
  return ferror(f) ? PHYS_ERR_IO : PHYS_OK;
}

physStatus phys_traj_write_header(FILE* f, const physModel* m) {
  return phys_traj_write_header_u(f, m, 0, 0);
}

// one row: time, qpos, qvel (and ctrl, qfrc unless NULL) as "%.17g" (17 significant digits identify a double uniquely)
physStatus phys_traj_write_row_u(FILE* f, const physModel* m, double time, const double* qpos, const double* qvel,
                                 const double* ctrl, const double* qfrc) {
  return phys_traj_write_row_s(f, m, time, qpos, qvel, ctrl, qfrc, NULL, NULL);
}

physStatus phys_traj_write_row_s(FILE* f, const physModel* m, double time, const double* qpos, const double* qvel,
                                 const double* ctrl, const double* qfrc, const double* act, const double* sensordata) {
  fprintf(f, "%.17g", time);
  for (int i = 0; i < m->nq; i++) fprintf(f, ",%.17g", qpos[i]);
  for (int i = 0; i < m->nv; i++) fprintf(f, ",%.17g", qvel[i]);
  for (int i = 0; ctrl && i < m->nu; i++) fprintf(f, ",%.17g", ctrl[i]);
  for (int i = 0; qfrc && i < m->nv; i++) fprintf(f, ",%.17g", qfrc[i]);
  for (int i = 0; act && i < m->na; i++) fprintf(f, ",%.17g", act[i]);
  for (int i = 0; sensordata && i < m->nsensordata; i++) fprintf(f, ",%.17g", sensordata[i]);
  fputc('\n', f);
  return ferror(f) ? PHYS_ERR_IO : PHYS_OK;
}

physStatus phys_traj_write_row(FILE* f, const physModel* m, double time, const double* qpos,
                               const double* qvel) {
  return phys_traj_write_row_u(f, m, time, qpos, qvel, NULL, NULL);
}
