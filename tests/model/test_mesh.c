// test_mesh.c - STL/OBJ loading and exact mesh mass properties against analytic answers; malformed files.
#include "mesh.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"

static char dir[256];

// unit cube [0,1]^3: 8 corners, 6 outward quads (counter-clockwise seen from outside)
static const double cube_v[8][3] = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0},
                                    {0, 0, 1}, {1, 0, 1}, {1, 1, 1}, {0, 1, 1}};
static const int cube_q[6][4] = {{0, 3, 2, 1}, {4, 5, 6, 7}, {0, 1, 5, 4},
                                 {2, 3, 7, 6}, {1, 2, 6, 5}, {0, 4, 7, 3}};

// the cube's 12 triangles: quad (a b c d) -> (a b c), (a c d)
static void cube_tri(int t, int idx[3]) {
  const int* q = cube_q[t / 2];
  idx[0] = q[0];
  idx[1] = t % 2 ? q[2] : q[1];
  idx[2] = t % 2 ? q[3] : q[2];
}

// full path of a file in the temp folder
static const char* tmp(const char* name) {
  static char buf[4][512];
  static int k = 0;
  k = (k + 1) % 4;
  snprintf(buf[k], sizeof(buf[k]), "%s/%s", dir, name);
  return buf[k];
}

// write text to a temp file, return its path
static const char* write_text(const char* name, const char* text) {
  const char* p = tmp(name);
  FILE* f = fopen(p, "wb");
  fputs(text, f);
  fclose(f);
  return p;
}

// append a little-endian uint32 / float32
static void put_u32(FILE* f, uint32_t u) {
  unsigned char b[4] = {u & 255, (u >> 8) & 255, (u >> 16) & 255, u >> 24};
  fwrite(b, 1, 4, f);
}
static void put_f32(FILE* f, float x) {
  uint32_t u;
  memcpy(&u, &x, 4);
  put_u32(f, u);
}

// binary STL of the cube (header starts with "solid" to test size-based detection); ntri_header lies
// about the count when >= 0; nan_at puts a NaN in that triangle; cut drops bytes at the end
static const char* write_cube_binstl(const char* name, long ntri_header, int nan_at, int cut) {
  const char* p = tmp(name);
  FILE* f = fopen(p, "wb");
  char head[80] = "solid cube written as binary";
  fwrite(head, 1, 80, f);
  put_u32(f, ntri_header >= 0 ? (uint32_t)ntri_header : 12);
  for (int t = 0; t < 12; t++) {
    int idx[3];
    cube_tri(t, idx);
    for (int k = 0; k < 3; k++) put_f32(f, 0);   // normal (ignored)
    for (int k = 0; k < 3; k++) {
      for (int j = 0; j < 3; j++) put_f32(f, t == nan_at && k == 1 && j == 2 ? NAN : (float)cube_v[idx[k]][j]);
    }
    fputc(0, f);
    fputc(0, f);
  }
  fclose(f);
  if (cut) CHECK(truncate(p, 84 + 50 * 12 - cut) == 0);
  return p;
}

// ASCII STL of the cube
static const char* write_cube_asciistl(const char* name) {
  const char* p = tmp(name);
  FILE* f = fopen(p, "w");
  fprintf(f, "solid cube\n");
  for (int t = 0; t < 12; t++) {
    int idx[3];
    cube_tri(t, idx);
    fprintf(f, "  facet normal 0 0 0\n    outer loop\n");
    for (int k = 0; k < 3; k++) {
      fprintf(f, "      vertex %g %g %g\n", cube_v[idx[k]][0], cube_v[idx[k]][1], cube_v[idx[k]][2]);
    }
    fprintf(f, "    endloop\n  endfacet\n");
  }
  fprintf(f, "endsolid cube\n");
  fclose(f);
  return p;
}

// OBJ of the cube with quads, mixing the v, v/vt, v//vn, v/vt/vn and negative index forms
static const char* write_cube_obj(const char* name) {
  const char* p = tmp(name);
  FILE* f = fopen(p, "w");
  fprintf(f, "# cube\no cube\nmtllib none.mtl\n");
  for (int i = 0; i < 8; i++) fprintf(f, "v %g %g %g\n", cube_v[i][0], cube_v[i][1], cube_v[i][2]);
  fprintf(f, "vt 0 0\nvn 0 0 1\ns off\n");
  for (int q = 0; q < 6; q++) {
    fprintf(f, "f");
    for (int k = 0; k < 4; k++) {
      int i = cube_q[q][k] + 1;
      switch (q) {
        case 0: fprintf(f, " %d", i); break;
        case 1: fprintf(f, " %d/1", i); break;
        case 2: fprintf(f, " %d//1", i); break;
        case 3: fprintf(f, " %d/1/1", i); break;
        default: fprintf(f, " %d", i - 9); break;   // negative: -8 is the first vertex
      }
    }
    fprintf(f, "\n");
  }
  fclose(f);
  return p;
}

// check volume, com and inertia of a loaded mesh against a box of sides a at centre c
static void check_box(const physSpecMesh* m, const double a[3], const double c[3], double tol) {
  double vol, com[3], I[6];
  CHECK(phys_mesh_inertia(m, &vol, com, I) == PHYS_OK);
  double V = a[0] * a[1] * a[2];
  CHECK_REL(vol, V, tol, 1);
  for (int k = 0; k < 3; k++) CHECK_NEAR(com[k], c[k], tol * (1 + fabs(c[k])));
  // I_xx = V (b^2 + c^2) / 12 for a box of unit density
  CHECK_REL(I[0], V * (a[1] * a[1] + a[2] * a[2]) / 12, tol, 1e-12);
  CHECK_REL(I[1], V * (a[0] * a[0] + a[2] * a[2]) / 12, tol, 1e-12);
  CHECK_REL(I[2], V * (a[0] * a[0] + a[1] * a[1]) / 12, tol, 1e-12);
  for (int k = 3; k < 6; k++) CHECK_NEAR(I[k], 0, tol * V);
}

// load a file that must fail with status st and a message containing every one of the given words
static void expect_fail(const char* path, physStatus st, const char* w1, const char* w2) {
  physLog log = {0};
  physSpecMesh m = {0};
  physStatus got = phys_mesh_load(path, NULL, &m, &log);
  CHECK_MSG(got == st, "%s: status %d, expected %d (%s)", path, got, st, log.error);
  CHECK_MSG(strstr(log.error, path) != NULL, "message does not name the file: %s", log.error);
  CHECK_MSG(!w1 || strstr(log.error, w1), "message '%s' lacks '%s'", log.error, w1);
  CHECK_MSG(!w2 || strstr(log.error, w2), "message '%s' lacks '%s'", log.error, w2);
  CHECK(m.vert == NULL && m.face == NULL && m.nvert == 0 && m.nface == 0);
}

// the three cube files load to 8 vertices, 12 triangles, volume 1, inertia 1/6 about the centre
static void test_cube_files(void) {
  const char* files[3] = {write_cube_binstl("cube_bin.stl", -1, -1, 0), write_cube_asciistl("cube_ascii.STL"),
                          write_cube_obj("cube.obj")};
  const double one[3] = {1, 1, 1}, half[3] = {0.5, 0.5, 0.5};
  for (int i = 0; i < 3; i++) {
    physLog log = {0};
    physSpecMesh m = {0};
    CHECK_MSG(phys_mesh_load(files[i], NULL, &m, &log) == PHYS_OK, "%s: %s", files[i], log.error);
    CHECK(m.nvert == 8);   // STL's 36 facet corners merge to 8
    CHECK(m.nface == 12);
    CHECK(strcmp(m.file, files[i]) == 0);
    check_box(&m, one, half, 1e-12);
    double vol, I[6];
    CHECK(phys_mesh_inertia(&m, &vol, NULL, I) == PHYS_OK);
    CHECK_NEAR(I[0], 1.0 / 6, 1e-14);
    free(m.vert);
    free(m.face);
  }

  // scaled 2 x 3 x 4 box: volume 24, I_xx = 24 (9 + 16) / 12 = 50
  const double sc[3] = {2, 3, 4}, c[3] = {1, 1.5, 2};
  for (int i = 0; i < 3; i++) {
    physLog log = {0};
    physSpecMesh m = {0};
    CHECK(phys_mesh_load(files[i], sc, &m, &log) == PHYS_OK);
    check_box(&m, sc, c, 1e-12);
    double I[6];
    phys_mesh_inertia(&m, NULL, NULL, I);
    CHECK_NEAR(I[0], 50, 1e-11);
    free(m.vert);
    free(m.face);
  }

  // a mirroring scale keeps the mesh outward (volume > 0)
  const double mir[3] = {-1, 1, 1}, cm[3] = {-0.5, 0.5, 0.5};
  physLog log = {0};
  physSpecMesh m = {0};
  CHECK(phys_mesh_load(files[2], mir, &m, &log) == PHYS_OK);
  check_box(&m, one, cm, 1e-12);
  free(m.vert);
  free(m.face);
}

// a finely tessellated unit cube (n x n quads per side) as binary STL: 6 n^2 + 2 unique vertices after
// merging (exercises the growing vertex hash), 12 n^2 triangles, still volume 1 and inertia 1/6
static void test_fine_cube(void) {
  const int n = 40;
  const char* p = tmp("fine.stl");
  FILE* f = fopen(p, "wb");
  char head[80] = {0};
  fwrite(head, 1, 80, f);
  put_u32(f, 12 * n * n);
  for (int a = 0; a < 3; a++) {
    int b = (a + 1) % 3, c = (a + 2) % 3;
    for (int side = 0; side < 2; side++) {
      for (int i = 0; i < n; i++) {
        for (int j = 0; j < n; j++) {
          // corners (i,j) (i+1,j) (i+1,j+1) (i,j+1): normal e_b x e_c = e_a; flip on the side at 0
          int ci[4] = {i, i + 1, i + 1, i}, cj[4] = {j, j, j + 1, j + 1};
          int tris[2][3] = {{0, 1, 2}, {0, 2, 3}};
          for (int t = 0; t < 2; t++) {
            for (int k = 0; k < 3; k++) put_f32(f, 0);
            for (int k = 0; k < 3; k++) {
              int corner = tris[t][side ? k : 2 - k];
              float v[3];
              v[a] = (float)side;
              v[b] = (float)((double)ci[corner] / n);
              v[c] = (float)((double)cj[corner] / n);
              for (int d = 0; d < 3; d++) put_f32(f, v[d]);
            }
            fputc(0, f);
            fputc(0, f);
          }
        }
      }
    }
  }
  fclose(f);
  physLog log = {0};
  physSpecMesh m = {0};
  CHECK_MSG(phys_mesh_load(p, NULL, &m, &log) == PHYS_OK, "%s", log.error);
  CHECK(m.nvert == 6 * n * n + 2);
  CHECK(m.nface == 12 * n * n);
  const double one[3] = {1, 1, 1}, half[3] = {0.5, 0.5, 0.5};
  check_box(&m, one, half, 1e-12);
  free(m.vert);
  free(m.face);
}

// unit right tetrahedron (0, e1, e2, e3): V = 1/6, com = 1/4 (1,1,1); about the origin
// int x^2 = 1/60, int xy = 1/120, so about the com C_xx = 1/60 - V/16 = 1/160, C_xy = 1/120 - V/16 = -1/480:
// I_xx = 2/160 = 1/80, I_xy = -C_xy = 1/480
static void test_tetrahedron(void) {
  const char* p = write_text("tet.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n");
  physLog log = {0};
  physSpecMesh m = {0};
  CHECK(phys_mesh_load(p, NULL, &m, &log) == PHYS_OK);
  double vol, com[3], I[6];
  CHECK(phys_mesh_inertia(&m, &vol, com, I) == PHYS_OK);
  CHECK_NEAR(vol, 1.0 / 6, 1e-15);
  for (int k = 0; k < 3; k++) CHECK_NEAR(com[k], 0.25, 1e-15);
  for (int k = 0; k < 3; k++) CHECK_NEAR(I[k], 1.0 / 80, 1e-15);
  for (int k = 3; k < 6; k++) CHECK_NEAR(I[k], 1.0 / 480, 1e-15);

  // far from the origin: same inertia about the com (the sums must not lose precision)
  for (int i = 0; i < m.nvert; i++) {
    m.vert[3 * i] += 1000;
    m.vert[3 * i + 1] -= 2000;
    m.vert[3 * i + 2] += 500;
  }
  double I2[6], com2[3];
  CHECK(phys_mesh_inertia(&m, &vol, com2, I2) == PHYS_OK);
  CHECK_NEAR(com2[0], 1000.25, 1e-9);
  CHECK_NEAR(com2[1], -1999.75, 1e-9);
  for (int k = 0; k < 6; k++) CHECK_REL(I2[k], I[k], 1e-9, 0);

  // inside out (every face flipped): negative volume is refused
  for (int f = 0; f < m.nface; f++) {
    int t = m.face[3 * f + 1];
    m.face[3 * f + 1] = m.face[3 * f + 2];
    m.face[3 * f + 2] = t;
  }
  CHECK(phys_mesh_inertia(&m, &vol, com, I) == PHYS_ERR_VALUE);

  // one face flipped back: edges no longer pair up -> open/inconsistent
  int t = m.face[1];
  m.face[1] = m.face[2];
  m.face[2] = t;
  CHECK(phys_mesh_inertia(&m, &vol, com, I) == PHYS_ERR_MODEL);

  // open: drop the last face
  for (int f = 0; f < m.nface; f++) {   // restore the outward orientation first
    int u = m.face[3 * f + 1];
    m.face[3 * f + 1] = m.face[3 * f + 2];
    m.face[3 * f + 2] = u;
  }
  t = m.face[1];
  m.face[1] = m.face[2];
  m.face[2] = t;
  CHECK(phys_mesh_inertia(&m, &vol, com, I) == PHYS_OK);
  m.nface--;
  CHECK(phys_mesh_inertia(&m, &vol, com, I) == PHYS_ERR_MODEL);

  // a face index out of range
  m.nface++;
  m.face[0] = 99;
  CHECK(phys_mesh_inertia(&m, &vol, com, I) == PHYS_ERR_ARG);
  free(m.vert);
  free(m.face);

  // closed but flat: a triangle and its reverse -> zero volume
  p = write_text("flat.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\nf 1 3 2\n");
  memset(&m, 0, sizeof(m));
  CHECK(phys_mesh_load(p, NULL, &m, &log) == PHYS_OK);
  CHECK(phys_mesh_inertia(&m, &vol, com, I) == PHYS_ERR_VALUE);
  free(m.vert);
  free(m.face);
}

// malformed files: the right status, a message naming the file (and line), nothing allocated, no crash
static void test_malformed(void) {
  expect_fail(tmp("does_not_exist.stl"), PHYS_ERR_IO, "cannot open", NULL);
  expect_fail(write_text("cube.ply", "ply\n"), PHYS_ERR_ARG, "unsupported", NULL);
  {   // a line longer than 65536 bytes is an error at its line (before: getline grew without bound); 65536 is fine
    size_t n = 70000;
    char* text = malloc(2 * n + 200);
    char* p = text + sprintf(text, "v 0 0 0\n#");
    memset(p, 'x', 65535);   // "#" + 65535 x: a 65536-byte comment, the longest line accepted
    p += 65535;
    p += sprintf(p, "\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n#");
    physLog log = {0};
    physSpecMesh m = {0};
    CHECK_MSG(phys_mesh_load(write_text("longok.obj", text), NULL, &m, &log) == PHYS_OK && m.nface == 4, "%s",
              log.error);
    free(m.vert);
    free(m.face);
    memset(p, 'x', 65536);   // the last line: "#" + 65536 x, one byte too long
    strcpy(p + 65536, "\n");
    expect_fail(write_text("long.obj", text), PHYS_ERR_PARSE, ":10: line longer than 65536 bytes", NULL);
    memset(p, 'x', n);
    strcpy(p + n, "\n");
    expect_fail(write_text("long2.obj", text), PHYS_ERR_PARSE, ":10: line longer than 65536 bytes", NULL);
    free(text);
  }
  // not regular files: a FIFO (before: opening it blocked forever) and a folder (before: "truncated binary
  // STL: 9223372036854775807 bytes")
  CHECK(mkfifo(tmp("fifo.stl"), 0600) == 0);
  expect_fail(tmp("fifo.stl"), PHYS_ERR_IO, "not a regular file", NULL);
  CHECK(mkdir(tmp("folder.obj"), 0700) == 0);
  expect_fail(tmp("folder.obj"), PHYS_ERR_IO, "not a regular file", NULL);
  expect_fail(write_cube_binstl("cut.stl", -1, -1, 7), PHYS_ERR_PARSE, "truncated", "12 triangles");
  expect_fail(write_cube_binstl("huge.stl", 0xFFFFFFFFL, -1, 0), PHYS_ERR_PARSE, "4294967295", NULL);
  // 84 + 50 * 85899346 = 2^32 + 88: a 32-bit size computation would accept this 88-byte file
  expect_fail(write_cube_binstl("wrap.stl", 85899346L, -1, 684 - 88), PHYS_ERR_PARSE, "85899346", "88 bytes");
  expect_fail(write_cube_binstl("zero.stl", 0, -1, 600), PHYS_ERR_VALUE, "empty", NULL);
  expect_fail(write_cube_binstl("nan.stl", -1, 5, 0), PHYS_ERR_VALUE, "triangle 5", "not finite");
  expect_fail(write_text("empty.stl", ""), PHYS_ERR_PARSE, "truncated", NULL);
  expect_fail(write_text("nan_ascii.stl",
                         "solid x\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex nan 0 0\n"),
              PHYS_ERR_VALUE, ":5:", "finite");
  expect_fail(write_text("cut_ascii.stl", "solid x\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\n"),
              PHYS_ERR_PARSE, "truncated", "line 3");
  expect_fail(write_text("quad_ascii.stl",
                         "solid x\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nvertex 1 1 0\n"
                         "vertex 0 1 0\nendloop\nendfacet\nendsolid\n"),
              PHYS_ERR_PARSE, ":7:", NULL);
  expect_fail(write_text("noend_ascii.stl",
                         "solid x\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nvertex 1 1 0\n"
                         "endloop\nendfacet\n"),
              PHYS_ERR_PARSE, "endsolid", NULL);
  expect_fail(write_text("junk_ascii.stl", "solid x\nfacet normal 0 0 1\nbanana\n"), PHYS_ERR_PARSE, ":3:",
              "banana");
  expect_fail(write_text("range.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\n# comment\nf 1 2 4\n"), PHYS_ERR_VALUE, ":5:",
              "out of range");
  expect_fail(write_text("neg.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf -1 -2 -4\n"), PHYS_ERR_VALUE, ":4:", "-4");
  expect_fail(write_text("zero.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 0 1 2\n"), PHYS_ERR_VALUE, ":4:", NULL);
  // extreme indices: INT64_MIN (its negation overflows), past LONG/INT range, -4 past 4 vertices (issue 10)
  expect_fail(write_text("min64.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 2 -9223372036854775808\n"),
              PHYS_ERR_VALUE, ":5:", "-9223372036854775808");
  expect_fail(write_text("max64.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 2 9223372036854775807\n"),
              PHYS_ERR_VALUE, ":5:", "out of range");
  expect_fail(write_text("big.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 2 99999999999999999999999\n"),
              PHYS_ERR_VALUE, ":5:", "out of range");
  expect_fail(write_text("wrap32.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 2 4294967297\n"),
              PHYS_ERR_VALUE, ":5:", "out of range");
  expect_fail(write_text("neg5.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 2 -5\n"), PHYS_ERR_VALUE,
              ":5:", "-5");
  expect_fail(write_text("junkidx.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3x\n"), PHYS_ERR_VALUE, ":4:",
              "malformed");
  {   // the boundary cases that are valid: 4 and -4 with 4 vertices
    physLog log = {0};
    physSpecMesh m = {0};
    CHECK(phys_mesh_load(write_text("edge.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 -1 4\nf -4 2 3\n"),
                         NULL, &m, &log) == PHYS_OK);
    CHECK(m.nface == 2 && m.face && m.face[1] == 3 && m.face[2] == 3 && m.face[3] == 0);
    for (int i = 0; m.face && i < 3 * m.nface; i++) CHECK(m.face[i] >= 0 && m.face[i] < m.nvert);
    free(m.vert);
    free(m.face);
  }
  expect_fail(write_text("short_face.obj", "v 0 0 0\nv 1 0 0\nf 1 2\n"), PHYS_ERR_PARSE, ":3:", NULL);
  expect_fail(write_text("short_v.obj", "v 0 0\n"), PHYS_ERR_PARSE, ":1:", NULL);
  expect_fail(write_text("inf.obj", "v 0 0 0\nv 1 inf 0\nv 0 1 0\nf 1 2 3\n"), PHYS_ERR_VALUE, ":2:", "finite");
  expect_fail(write_text("verts_only.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\n"), PHYS_ERR_VALUE, "empty", NULL);

  // a zero or NaN scale is refused before reading
  physLog log = {0};
  physSpecMesh m = {0};
  const double bad[3] = {1, 0, 1};
  CHECK(phys_mesh_load(tmp("cube.obj"), bad, &m, &log) == PHYS_ERR_VALUE);
  CHECK(m.vert == NULL);
}

int main(void) {
  snprintf(dir, sizeof(dir), "/tmp/physid_test_mesh_XXXXXX");
  if (!mkdtemp(dir)) return 1;
  test_cube_files();
  test_fine_cube();
  test_tetrahedron();
  test_malformed();
  char cmd[300];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
  return test_done();
}
