// mesh.c - triangle mesh files (binary/ASCII STL, Wavefront OBJ, Collada through mesh_assimp.c) and exact
// mesh mass properties.
#include "mesh.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mesh_assimp.h"

//---------------------------------------------------------------------------------------------------------
// growable vertex / face buffers with hard caps

typedef struct meshBuf_ {
  double* vert;      // nvert x 3
  int nvert, capvert;
  int* face;         // nface x 3
  int nface, capface;
} meshBuf;

// free both arrays and reset the buffer
static void buf_free(meshBuf* b) {
  free(b->vert);
  free(b->face);
  memset(b, 0, sizeof(*b));
}

// grow an array of `cap` items of `itemsize` bytes to hold at least n items (doubling, capped at max)
static int grow(void** arr, int* cap, int n, size_t itemsize, int max) {
  if (n <= *cap) return 1;
  if (n > max) return 0;
  long long newcap = *cap ? 2LL * *cap : 64;
  if (newcap < n) newcap = n;
  if (newcap > max) newcap = max;
  void* p = realloc(*arr, (size_t)newcap * itemsize);
  if (!p) return 0;
  *arr = p;
  *cap = (int)newcap;
  return 1;
}

// append a vertex; 0 if the vertex cap is reached or allocation fails
static int buf_add_vert(meshBuf* b, const double v[3]) {
  if (!grow((void**)&b->vert, &b->capvert, b->nvert + 1, 3 * sizeof(double), PHYS_MESH_MAXVERT)) return 0;
  memcpy(b->vert + 3 * b->nvert++, v, 3 * sizeof(double));
  return 1;
}

// append a triangle; 0 if the face cap is reached or allocation fails
static int buf_add_face(meshBuf* b, int i0, int i1, int i2) {
  if (!grow((void**)&b->face, &b->capface, b->nface + 1, 3 * sizeof(int), PHYS_MESH_MAXFACE)) return 0;
  int* f = b->face + 3 * b->nface++;
  f[0] = i0;
  f[1] = i1;
  f[2] = i2;
  return 1;
}

//---------------------------------------------------------------------------------------------------------
// small helpers

// 1 if `s` ends with `suffix`, ignoring case
static int ends_with_nocase(const char* s, const char* suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && strcasecmp(s + n - m, suffix) == 0;
}

// parse one finite double from *p, advancing *p; 0 if there is no number or it is NaN/inf
static int parse_double(const char** p, double* x, int* notfinite) {
  char* end;
  *x = strtod(*p, &end);
  if (end == *p) return 0;
  *p = end;
  if (!isfinite(*x)) {
    *notfinite = 1;
    return 0;
  }
  return 1;
}

// skip spaces and tabs (and a trailing CR/LF) in a line
static const char* skip_space(const char* p) {
  while (*p && isspace((unsigned char)*p)) p++;
  return p;
}

// copy the next whitespace-delimited word of p into word (at most n-1 chars); returns the rest
static const char* next_word(const char* p, char* word, size_t n) {
  p = skip_space(p);
  size_t k = 0;
  while (*p && !isspace((unsigned char)*p)) {
    if (k + 1 < n) word[k++] = *p;
    p++;
  }
  word[k] = 0;
  return p;
}

// v <- diag(scale) v
static void scale_vert(double v[3], const double scale[3]) {
  v[0] *= scale[0];
  v[1] *= scale[1];
  v[2] *= scale[2];
}

// the next line of a text mesh into line (PHYS_MESH_MAXLINE bytes; "" at the end of the file); a longer
// line is an error at lineno (text meshes have short lines: this bounds memory, unlike getline)
static physStatus read_line(FILE* fp, char line[PHYS_MESH_MAXLINE], const char* path, int lineno, physLog* log) {
  line[0] = 0;
  if (!fgets(line, PHYS_MESH_MAXLINE, fp)) return PHYS_OK;
  size_t len = strlen(line);
  if (len == PHYS_MESH_MAXLINE - 1 && line[len - 1] != '\n' && !feof(fp)) {
    return phys_error(log, PHYS_ERR_PARSE, "%s:%d: line longer than %d bytes", path, lineno, PHYS_MESH_MAXLINE - 2);
  }
  if (len == 0) line[0] = '\n', line[1] = 0;   // a NUL byte first: an empty line, not the end
  return PHYS_OK;
}

//---------------------------------------------------------------------------------------------------------
// vertex merging: open-addressing hash on the exact bit pattern of the three coordinates

// hash of a vertex's 24 bytes (FNV-1a), with -0.0 folded onto +0.0 so they merge
static uint64_t vert_hash(const double v[3]) {
  uint64_t h = 1469598103934665603ULL;
  for (int k = 0; k < 3; k++) {
    double x = v[k] == 0 ? 0.0 : v[k];
    unsigned char bytes[sizeof(double)];
    memcpy(bytes, &x, sizeof(double));
    for (size_t i = 0; i < sizeof(double); i++) h = (h ^ bytes[i]) * 1099511628211ULL;
  }
  return h;
}

typedef struct vertMerge_ {
  meshBuf* out;      // unique vertices and faces
  int* slot;         // hash slots: vertex index or -1
  size_t nslot;      // power of 2, kept >= 2 * nvert
} vertMerge;

// (re)build the hash table with nslot slots from the vertices already in out; 0 if out of memory
static int merge_rehash(vertMerge* mg, size_t nslot) {
  int* slot = malloc(nslot * sizeof(int));
  if (!slot) return 0;
  for (size_t i = 0; i < nslot; i++) slot[i] = -1;
  for (int v = 0; v < mg->out->nvert; v++) {
    size_t s = (size_t)vert_hash(mg->out->vert + 3 * v) & (nslot - 1);
    while (slot[s] >= 0) s = (s + 1) & (nslot - 1);
    slot[s] = v;
  }
  free(mg->slot);
  mg->slot = slot;
  mg->nslot = nslot;
  return 1;
}

// index of vertex v in out, appending it if new; -1 if a cap is reached or allocation fails
static int merge_vert(vertMerge* mg, const double v[3]) {
  if (2 * ((size_t)mg->out->nvert + 1) > mg->nslot && !merge_rehash(mg, mg->nslot ? 2 * mg->nslot : 1024)) {
    return -1;
  }
  size_t s = (size_t)vert_hash(v) & (mg->nslot - 1);
  while (mg->slot[s] >= 0) {
    const double* u = mg->out->vert + 3 * mg->slot[s];
    if (u[0] == v[0] && u[1] == v[1] && u[2] == v[2]) return mg->slot[s];
    s = (s + 1) & (mg->nslot - 1);
  }
  if (!buf_add_vert(mg->out, v)) return -1;
  mg->slot[s] = mg->out->nvert - 1;
  return mg->slot[s];
}

// add the triangle (p0, p1, p2), merging its corners with the vertices seen so far
static physStatus merge_tri(vertMerge* mg, const double p[9], const char* path, physLog* log) {
  int id[3];
  for (int k = 0; k < 3; k++) {
    id[k] = merge_vert(mg, p + 3 * k);
    if (id[k] < 0) {
      return phys_error(log, PHYS_ERR_NOMEM, "%s: too many vertices (limit %d) or out of memory", path,
                        PHYS_MESH_MAXVERT);
    }
  }
  if (!buf_add_face(mg->out, id[0], id[1], id[2])) {
    return phys_error(log, PHYS_ERR_NOMEM, "%s: too many triangles (limit %d) or out of memory", path,
                      PHYS_MESH_MAXFACE);
  }
  return PHYS_OK;
}

//---------------------------------------------------------------------------------------------------------
// STL

// little-endian float at p
static double read_f32le(const unsigned char* p) {
  uint32_t u = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
  float f;
  memcpy(&f, &u, sizeof(f));
  return (double)f;
}

// binary STL body: ntri records of 50 bytes (normal 12, vertices 36, attribute 2) after the 84-byte header
static physStatus stl_binary(meshBuf* out, FILE* fp, uint32_t ntri, const double scale[3], const char* path,
                             physLog* log) {
  vertMerge mg = {.out = out};
  unsigned char rec[50];
  physStatus st = PHYS_OK;
  for (uint32_t t = 0; t < ntri && st == PHYS_OK; t++) {
    if (fread(rec, 1, 50, fp) != 50) {
      st = phys_error(log, PHYS_ERR_PARSE, "%s: truncated binary STL at triangle %u of %u", path, t, ntri);
      break;
    }
    double p[9];
    for (int k = 0; k < 9 && st == PHYS_OK; k++) {
      p[k] = read_f32le(rec + 12 + 4 * k);
      if (!isfinite(p[k])) {
        st = phys_error(log, PHYS_ERR_VALUE, "%s: triangle %u: vertex coordinate is not finite", path, t);
      }
    }
    if (st != PHYS_OK) break;
    for (int k = 0; k < 3; k++) scale_vert(p + 3 * k, scale);
    st = merge_tri(&mg, p, path, log);
  }
  free(mg.slot);
  return st;
}

// ASCII STL: solid / facet normal / outer loop / vertex x3 / endloop / endfacet / endsolid, line by line
static physStatus stl_ascii(meshBuf* out, FILE* fp, const double scale[3], const char* path, physLog* log) {
  vertMerge mg = {.out = out};
  double tri[9];        // corners of the current facet
  char line[PHYS_MESH_MAXLINE];
  int lineno = 0, inloop = 0, nloopvert = 0, loopline = 0, sawsolid = 0, sawend = 0;
  physStatus st = PHYS_OK;
  while (st == PHYS_OK && (st = read_line(fp, line, path, lineno + 1, log)) == PHYS_OK && line[0]) {
    lineno++;
    char word[32];
    const char* p = next_word(line, word, sizeof(word));
    if (!word[0]) continue;
    if (sawend) {
      st = phys_error(log, PHYS_ERR_PARSE, "%s:%d: text after 'endsolid'", path, lineno);
    } else if (!strcmp(word, "solid")) {
      if (sawsolid) st = phys_error(log, PHYS_ERR_PARSE, "%s:%d: second 'solid'", path, lineno);
      sawsolid = 1;
    } else if (!sawsolid) {
      st = phys_error(log, PHYS_ERR_PARSE, "%s:%d: ASCII STL must start with 'solid'", path, lineno);
    } else if (!strcmp(word, "outer")) {
      if (inloop) st = phys_error(log, PHYS_ERR_PARSE, "%s:%d: nested 'outer loop'", path, lineno);
      inloop = 1;
      nloopvert = 0;
      loopline = lineno;
    } else if (!strcmp(word, "vertex")) {
      double v[3];
      int bad = 0;
      for (int k = 0; k < 3 && st == PHYS_OK; k++) {
        if (!parse_double(&p, v + k, &bad)) {
          st = phys_error(log, bad ? PHYS_ERR_VALUE : PHYS_ERR_PARSE, "%s:%d: vertex needs 3 %snumbers",
                          path, lineno, bad ? "finite " : "");
        }
      }
      if (st == PHYS_OK && (!inloop || nloopvert >= 3)) {
        st = phys_error(log, PHYS_ERR_PARSE, "%s:%d: vertex outside a 3-vertex 'outer loop'", path, lineno);
      }
      if (st == PHYS_OK) {
        scale_vert(v, scale);
        memcpy(tri + 3 * nloopvert++, v, sizeof(v));
      }
    } else if (!strcmp(word, "endloop")) {
      if (!inloop || nloopvert != 3) {
        st = phys_error(log, PHYS_ERR_PARSE, "%s:%d: facet has %d vertices, expected 3", path, lineno,
                        nloopvert);
      } else {
        st = merge_tri(&mg, tri, path, log);
      }
      inloop = 0;
    } else if (!strcmp(word, "endsolid")) {
      if (inloop) st = phys_error(log, PHYS_ERR_PARSE, "%s:%d: 'endsolid' inside a facet", path, lineno);
      sawend = 1;
    } else if (strcmp(word, "facet") && strcmp(word, "endfacet")) {
      st = phys_error(log, PHYS_ERR_PARSE, "%s:%d: unexpected '%s' in ASCII STL", path, lineno, word);
    }
  }
  if (st == PHYS_OK && ferror(fp)) st = phys_error(log, PHYS_ERR_IO, "%s: read error", path);
  if (st == PHYS_OK && inloop) {
    st = phys_error(log, PHYS_ERR_PARSE, "%s:%d: truncated ASCII STL: facet opened at line %d never closed",
                    path, lineno, loopline);
  }
  if (st == PHYS_OK && !sawend) {
    st = phys_error(log, PHYS_ERR_PARSE, "%s:%d: truncated ASCII STL: no 'endsolid'", path, lineno);
  }
  free(mg.slot);
  return st;
}

// decide between binary and ASCII STL from the file size and the header, then read it
static physStatus stl_load(meshBuf* out, FILE* fp, long size, const double scale[3], const char* path,
                           physLog* log) {
  unsigned char head[84];
  size_t nhead = fread(head, 1, sizeof(head), fp);
  int solid = nhead >= 5 && !memcmp(head, "solid", 5);
  uint64_t expected = 0;
  uint32_t ntri = 0;
  if (nhead == sizeof(head)) {
    ntri = (uint32_t)head[80] | (uint32_t)head[81] << 8 | (uint32_t)head[82] << 16 | (uint32_t)head[83] << 24;
    expected = 84 + 50 * (uint64_t)ntri;
  }

  // binary when the size matches the triangle count exactly (binary headers may also start with "solid")
  if (nhead == sizeof(head) && expected == (uint64_t)size) {
    if (ntri == 0) return phys_error(log, PHYS_ERR_VALUE, "%s: empty mesh (binary STL with 0 triangles)", path);
    if (ntri > PHYS_MESH_MAXFACE) {
      return phys_error(log, PHYS_ERR_NOMEM, "%s: %u triangles exceed the limit %d", path, ntri,
                        PHYS_MESH_MAXFACE);
    }
    return stl_binary(out, fp, ntri, scale, path, log);
  }
  // ASCII needs "solid" and no control bytes in the first 84 (binary headers sometimes say "solid")
  int text = solid;
  for (size_t i = 0; i < nhead && text; i++) text = head[i] >= 9 && head[i] != 127;
  if (text) {
    rewind(fp);
    return stl_ascii(out, fp, scale, path, log);
  }
  if (nhead < sizeof(head)) {
    return phys_error(log, PHYS_ERR_PARSE, "%s: truncated binary STL: %ld bytes, header needs 84", path, size);
  }
  return phys_error(log, PHYS_ERR_PARSE,
                    "%s: truncated or corrupt binary STL: header says %u triangles (%llu bytes), file has %ld "
                    "bytes", path, ntri, (unsigned long long)expected, size);
}

//---------------------------------------------------------------------------------------------------------
// Wavefront OBJ

// parse one face corner "i", "i/j", "i//k" or "i/j/k" into a 0-based vertex index; nvert vertices so far.
// Valid: 1..nvert (absolute) and -nvert..-1 (relative to the end); 0, anything outside (also values
// strtoll clamps on overflow) and trailing junk are refused. Never negates i (INT64_MIN has no negation).
static int obj_index(const char* tok, int nvert, int* index) {
  char* end;
  errno = 0;
  long long i = strtoll(tok, &end, 10);
  if (end == tok || (*end && *end != '/') || errno == ERANGE) return 0;
  if (i >= 1 && i <= nvert) {
    *index = (int)(i - 1);
  } else if (i <= -1 && i >= -(long long)nvert) {
    *index = (int)(nvert + i);
  } else {
    return 0;
  }
  return 1;
}

// one "f" line: fan-triangulate the polygon (v0, vk, vk+1)
static physStatus obj_face(meshBuf* out, const char* p, const char* path, int lineno, physLog* log) {
  int first = -1, prev = -1, ncorner = 0;
  char tok[64];
  for (;;) {
    p = next_word(p, tok, sizeof(tok));
    if (!tok[0]) break;
    int id;
    if (!obj_index(tok, out->nvert, &id)) {
      return phys_error(log, PHYS_ERR_VALUE, "%s:%d: face index '%s' out of range or malformed (%d vertices "
                        "so far)", path, lineno, tok, out->nvert);
    }
    if (ncorner == 0) {
      first = id;
    } else if (ncorner >= 2 && !buf_add_face(out, first, prev, id)) {
      return phys_error(log, PHYS_ERR_NOMEM, "%s:%d: too many triangles (limit %d)", path, lineno,
                        PHYS_MESH_MAXFACE);
    }
    prev = id;
    ncorner++;
  }
  if (ncorner < 3) return phys_error(log, PHYS_ERR_PARSE, "%s:%d: face has %d vertices, needs 3", path,
                                     lineno, ncorner);
  return PHYS_OK;
}

// OBJ: "v x y z [w or r g b]" and "f ..." lines; every other statement (vt, vn, g, o, s, usemtl, #) ignored
static physStatus obj_load(meshBuf* out, FILE* fp, const double scale[3], const char* path, physLog* log) {
  char line[PHYS_MESH_MAXLINE];
  int lineno = 0;
  physStatus st = PHYS_OK;
  while (st == PHYS_OK && (st = read_line(fp, line, path, lineno + 1, log)) == PHYS_OK && line[0]) {
    lineno++;
    char word[16];
    const char* p = next_word(line, word, sizeof(word));
    if (!strcmp(word, "v")) {
      double v[3];
      int bad = 0;
      for (int k = 0; k < 3 && st == PHYS_OK; k++) {
        if (!parse_double(&p, v + k, &bad)) {
          st = phys_error(log, bad ? PHYS_ERR_VALUE : PHYS_ERR_PARSE, "%s:%d: vertex needs 3 %snumbers", path,
                          lineno, bad ? "finite " : "");
        }
      }
      if (st == PHYS_OK) {
        scale_vert(v, scale);
        if (!buf_add_vert(out, v)) {
          st = phys_error(log, PHYS_ERR_NOMEM, "%s:%d: too many vertices (limit %d)", path, lineno,
                          PHYS_MESH_MAXVERT);
        }
      }
    } else if (!strcmp(word, "f")) {
      st = obj_face(out, p, path, lineno, log);
    }
  }
  if (st == PHYS_OK && ferror(fp)) st = phys_error(log, PHYS_ERR_IO, "%s: read error", path);
  return st;
}

//---------------------------------------------------------------------------------------------------------
// Collada (mesh_assimp.c reads the scene; its triangles are scaled and merged here like STL's)

typedef struct daeLoad_ {
  vertMerge mg;
  const double* scale;
  const char* path;
  physLog* log;
} daeLoad;

// one triangle of the scene: scaled, its corners merged with the vertices seen so far
static physStatus dae_tri(void* ctx, const double p[9]) {
  daeLoad* d = ctx;
  double q[9];
  memcpy(q, p, sizeof(q));
  for (int k = 0; k < 3; k++) scale_vert(q + 3 * k, d->scale);
  return merge_tri(&d->mg, q, d->path, d->log);
}

// a Collada file (size bytes on fp) into out, scaled
static physStatus dae_load(meshBuf* out, FILE* fp, long size, const double scale[3], const char* path,
                           physLog* log) {
  daeLoad d = {.mg = {.out = out}, .scale = scale, .path = path, .log = log};
  physStatus st = phys_mesh_scene_read(fp, size, path, dae_tri, &d, log);
  free(d.mg.slot);
  return st;
}

//---------------------------------------------------------------------------------------------------------
// public entry

// open path for reading only if it is a regular file (a FIFO would block, a device never end, a folder
// read as garbage): opened non-blocking, checked with fstat on the open file; NULL with errno (EINVAL: not
// a regular file)
static FILE* open_regular(const char* path) {
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return NULL;
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    errno = EINVAL;
    return NULL;
  }
  FILE* fp = fdopen(fd, "rb");
  if (!fp) close(fd);
  return fp;
}

// load an STL, OBJ or DAE file (format from the extension) into out, scaled
physStatus phys_mesh_load(const char* path, const double scale[3], physSpecMesh* out, physLog* log) {
  static const double one[3] = {1, 1, 1};
  if (!path || !out) return phys_error(log, PHYS_ERR_ARG, "phys_mesh_load: NULL argument");
  if (!scale) scale = one;
  for (int k = 0; k < 3; k++) {
    if (!isfinite(scale[k]) || scale[k] == 0) {
      return phys_error(log, PHYS_ERR_VALUE, "%s: mesh scale must be finite and nonzero", path);
    }
  }
  int isstl = ends_with_nocase(path, ".stl"), isobj = ends_with_nocase(path, ".obj");
  int isdae = ends_with_nocase(path, ".dae");
  if (!isstl && !isobj && !isdae) {
    return phys_error(log, PHYS_ERR_ARG, "%s: unsupported mesh format (STL, OBJ and DAE are supported)", path);
  }
  FILE* fp = open_regular(path);
  if (!fp) {
    return phys_error(log, PHYS_ERR_IO, "%s: cannot open mesh file%s", path,
                      errno == EINVAL ? ": not a regular file" : "");
  }
  long size = -1;
  if (fseek(fp, 0, SEEK_END) == 0) size = ftell(fp);
  if (size < 0 || fseek(fp, 0, SEEK_SET) != 0) {
    fclose(fp);
    return phys_error(log, PHYS_ERR_IO, "%s: cannot read mesh file", path);
  }

  meshBuf b = {0};
  physStatus st = isstl   ? stl_load(&b, fp, size, scale, path, log)
                  : isobj ? obj_load(&b, fp, scale, path, log)
                          : dae_load(&b, fp, size, scale, path, log);
  fclose(fp);
  if (st == PHYS_OK && b.nface == 0) st = phys_error(log, PHYS_ERR_VALUE, "%s: empty mesh (no faces)", path);
  if (st != PHYS_OK) {
    buf_free(&b);
    return st;
  }

  // a mirroring scale (odd number of negative factors) flips the winding: restore outward orientation
  if (scale[0] * scale[1] * scale[2] < 0) {
    for (int f = 0; f < b.nface; f++) {
      int t = b.face[3 * f + 1];
      b.face[3 * f + 1] = b.face[3 * f + 2];
      b.face[3 * f + 2] = t;
    }
  }
  snprintf(out->file, sizeof(out->file), "%s", path);
  out->vert = b.vert;
  out->nvert = b.nvert;
  out->face = b.face;
  out->nface = b.nface;
  return PHYS_OK;
}

//---------------------------------------------------------------------------------------------------------
// mass properties

// compare two edge keys for qsort
static int cmp_u64(const void* a, const void* b) {
  uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;
  return x < y ? -1 : x > y;
}

// 1 if every directed edge i->j has a matching j->i (a closed, consistently oriented surface); -1 no memory
static int mesh_closed(const physSpecMesh* mesh) {
  size_t n = 3 * (size_t)mesh->nface, m = 0;
  uint64_t* key = malloc(n * sizeof(uint64_t));
  if (!key) return -1;
  for (int f = 0; f < mesh->nface; f++) {
    for (int k = 0; k < 3; k++) {
      uint64_t i = (uint64_t)mesh->face[3 * f + k], j = (uint64_t)mesh->face[3 * f + (k + 1) % 3];
      if (i == j) continue;   // degenerate edge of a collapsed triangle
      // key = (min, max, direction bit)
      key[m++] = i < j ? (i << 33 | j << 1) : (j << 33 | i << 1 | 1);
    }
  }
  qsort(key, m, sizeof(uint64_t), cmp_u64);
  int closed = 1;
  for (size_t a = 0; a < m && closed;) {
    size_t b = a;
    long balance = 0;
    while (b < m && key[b] >> 1 == key[a] >> 1) balance += (key[b++] & 1) ? -1 : 1;
    closed = balance == 0;
    a = b;
  }
  free(key);
  return closed;
}

// volume, com and inertia (about the com) of a closed mesh by signed tetrahedra from a reference point r:
// tetra (r, a, b, c) with d = det[a b c]: V = d/6, first moment V (a+b+c)/4,
// second moment C = d/120 (a a' + b b' + c c' + s s'), s = a+b+c (coordinates relative to r);
// about the com: C_com = C - V dc dc', I = tr(C_com) 1 - C_com
physStatus phys_mesh_inertia(const physSpecMesh* mesh, double* volume, double com[3], double inertia[6]) {
  if (!mesh || !mesh->vert || !mesh->face || mesh->nface <= 0 || mesh->nvert <= 0) return PHYS_ERR_ARG;
  for (int i = 0; i < 3 * mesh->nface; i++) {
    if (mesh->face[i] < 0 || mesh->face[i] >= mesh->nvert) return PHYS_ERR_ARG;
  }

  // reference point: the vertex mean (keeps the sums well conditioned far from the origin); bounding box
  double r[3] = {0, 0, 0}, lo[3], hi[3];
  for (int k = 0; k < 3; k++) lo[k] = hi[k] = mesh->vert[k];
  for (int i = 0; i < mesh->nvert; i++) {
    for (int k = 0; k < 3; k++) {
      double x = mesh->vert[3 * i + k];
      r[k] += x / mesh->nvert;
      lo[k] = fmin(lo[k], x);
      hi[k] = fmax(hi[k], x);
    }
  }

  int closed = mesh_closed(mesh);
  if (closed < 0) return PHYS_ERR_NOMEM;
  if (!closed) return PHYS_ERR_MODEL;

  double V = 0, S[3] = {0, 0, 0}, C[9] = {0};
  for (int f = 0; f < mesh->nface; f++) {
    double p[3][3], s[3];
    for (int k = 0; k < 3; k++) {
      for (int j = 0; j < 3; j++) p[k][j] = mesh->vert[3 * mesh->face[3 * f + k] + j] - r[j];
    }
    double d = p[0][0] * (p[1][1] * p[2][2] - p[1][2] * p[2][1]) -
               p[0][1] * (p[1][0] * p[2][2] - p[1][2] * p[2][0]) +
               p[0][2] * (p[1][0] * p[2][1] - p[1][1] * p[2][0]);
    for (int j = 0; j < 3; j++) s[j] = p[0][j] + p[1][j] + p[2][j];
    V += d / 6;
    for (int j = 0; j < 3; j++) S[j] += d / 24 * s[j];
    for (int a = 0; a < 3; a++) {
      for (int b = 0; b < 3; b++) {
        C[3 * a + b] += d / 120 * (p[0][a] * p[0][b] + p[1][a] * p[1][b] + p[2][a] * p[2][b] + s[a] * s[b]);
      }
    }
  }

  // zero or negative volume: flat or inside-out (relative to the bounding box)
  double ext = fmax(hi[0] - lo[0], fmax(hi[1] - lo[1], hi[2] - lo[2]));
  if (!(V > 1e-12 * ext * ext * ext) || !isfinite(V)) return PHYS_ERR_VALUE;

  double dc[3] = {S[0] / V, S[1] / V, S[2] / V};
  for (int a = 0; a < 3; a++) {
    for (int b = 0; b < 3; b++) C[3 * a + b] -= V * dc[a] * dc[b];
  }
  if (volume) *volume = V;
  if (com) {
    for (int k = 0; k < 3; k++) com[k] = r[k] + dc[k];
  }
  if (inertia) {
    inertia[0] = C[4] + C[8];
    inertia[1] = C[0] + C[8];
    inertia[2] = C[0] + C[4];
    inertia[3] = -C[1];
    inertia[4] = -C[2];
    inertia[5] = -C[5];
  }
  return PHYS_OK;
}
