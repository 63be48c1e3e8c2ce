// test_dataset.c - phys_dataset_load (src/sysid/dataset.c): simulated trajectories written as physid simulate's
// CSV and as .npy read back bit for bit; the bundled real cube tosses and an elbow toss in their named-column
// layout (values checked against the file's text, quaternions unit, velocities in MuJoCo's layout); folders in
// name order with skip/limit; observed subsets (positions only: velocities are the backward differences that
// equal the semi-implicit Euler step's velocities; one joint; --observe; --map); and every bad input with its
// message (file:line:column) and an empty data set afterwards; the input limits (devices refused, FIFOs read
// once, lines of at most 1 MiB, .npy sizes checked against the file before allocating).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "physid.h"
#include "sysid.h"
#include "test.h"
#include "test_fifo.h"
#include "trajio.h"

static char g_dir[64];            // scratch folder

// path of a file in the scratch folder (8 rotating buffers)
static const char* tmp_path(const char* name) {
  static char buf[8][512];
  static int k = 0;
  k = (k + 1) % 8;
  snprintf(buf[k], sizeof buf[k], "%s/%s", g_dir, name);
  return buf[k];
}

// write text to a scratch file; returns its path
static const char* write_text(const char* name, const char* text) {
  const char* p = tmp_path(name);
  FILE* f = fopen(p, "w");
  fputs(text, f);
  fclose(f);
  return p;
}

// load one path with options; returns the status, log filled
static physStatus load1(physDataset* ds, const physModel* m, const char* path, const physDataOptions* opt,
                        physLog* log) {
  memset(log, 0, sizeof *log);
  return phys_dataset_load(ds, m, &path, 1, opt, log);
}

// a simulated trajectory of n+1 samples from the model's keyframe 0 (or qpos0 with a push)
static void simulate(const physModel* m, int n, double* time, double* qpos, double* qvel) {
  physData* d = phys_make_data(m);
  if (m->nkey) phys_reset_keyframe(m, d, 0);
  for (int i = 0; i < m->nv && !m->nkey; i++) d->qvel[i] = 0.5 + 0.1 * i;
  for (int k = 0; k <= n; k++) {
    if (k) phys_step(m, d);
    time[k] = d->time;
    memcpy(qpos + (size_t)k * m->nq, d->qpos, sizeof(double) * (size_t)m->nq);
    memcpy(qvel + (size_t)k * m->nv, d->qvel, sizeof(double) * (size_t)m->nv);
  }
  phys_free_data(d);
}

// write a trajectory as physid simulate's CSV
static void write_csv(const char* p, const physModel* m, int T, const double* time, const double* qpos,
                      const double* qvel) {
  FILE* f = fopen(p, "w");
  phys_traj_write_header(f, m);
  for (int k = 0; k < T; k++) phys_traj_write_row(f, m, time[k], qpos + (size_t)k * m->nq, qvel + (size_t)k * m->nv);
  fclose(f);
}

// write a .npy file: version 1, header dict padded to a multiple of 64, then rows of ncol little-endian doubles
// (descr_raw: the dtype as it stands in the dict, e.g. "'<f8'" or "[('t', '<f8'), ...]")
static void write_npy_raw(const char* p, const char* descr_raw, const char* order, const char* shape,
                          const double* data, size_t nvalue) {
  char dict[2048];
  int len = snprintf(dict, sizeof dict, "{'descr': %s, 'fortran_order': %s, 'shape': %s, }", descr_raw, order, shape);
  int total = 10 + len + 1, pad = (64 - total % 64) % 64;
  FILE* f = fopen(p, "wb");
  fwrite("\x93NUMPY\x01\x00", 1, 8, f);
  unsigned short hl = (unsigned short)(len + pad + 1);
  fputc(hl & 0xff, f);
  fputc(hl >> 8, f);
  fwrite(dict, 1, (size_t)len, f);
  for (int i = 0; i < pad; i++) fputc(' ', f);
  fputc('\n', f);
  fwrite(data, sizeof(double), nvalue, f);   // this machine is little-endian (checked in main)
  fclose(f);
}

// a plain .npy of dtype descr (written between quotes)
static void write_npy(const char* p, const char* descr, const char* order, const char* shape, const double* data,
                      size_t nvalue) {
  char raw[64];
  snprintf(raw, sizeof raw, "'%s'", descr);
  write_npy_raw(p, raw, order, shape, data, nvalue);
}

// 1 if the two arrays are bit-identical
static int same(const double* a, const double* b, size_t n) {
  return memcmp(a, b, n * sizeof(double)) == 0;
}

//---------------------------------------------------------------------------------------------------------
// formats

// simulate-format CSV and .npy of the same trajectory: bit for bit, everything observed
static void test_simulate_csv_and_npy(void) {
  physLog log = {0};
  physModel* m = phys_load("tests/data/mixed.xml", NULL, &log);
  CHECK(m != NULL);
  if (!m) return;
  int T = 41, ncol = 1 + m->nq + m->nv;
  double *time = malloc(sizeof(double) * T), *qpos = malloc(sizeof(double) * T * m->nq);
  double *qvel = malloc(sizeof(double) * T * m->nv), *arr = malloc(sizeof(double) * T * ncol);
  simulate(m, T - 1, time, qpos, qvel);
  write_csv(tmp_path("mixed.csv"), m, T, time, qpos, qvel);
  for (int k = 0; k < T; k++) {
    arr[k * ncol] = time[k];
    memcpy(arr + k * ncol + 1, qpos + k * m->nq, sizeof(double) * m->nq);
    memcpy(arr + k * ncol + 1 + m->nq, qvel + k * m->nv, sizeof(double) * m->nv);
  }
  char shape[64];
  snprintf(shape, sizeof shape, "(%d, %d)", T, ncol);
  write_npy(tmp_path("mixed.npy"), "<f8", "False", shape, arr, (size_t)T * ncol);
  const char* names[2] = {"mixed.csv", "mixed.npy"};
  for (int f = 0; f < 2; f++) {
    physDataset ds;
    CHECK_MSG(load1(&ds, m, tmp_path(names[f]), NULL, &log) == PHYS_OK, "%s", log.error);
    CHECK(ds.ntraj == 1 && ds.nq == m->nq && ds.nv == m->nv);
    if (ds.ntraj == 1) {
      physTrajectory* t = ds.traj;
      CHECK(t->T == T && t->has_qvel == 1);
      CHECK(same(t->time, time, T) && same(t->qpos, qpos, (size_t)T * m->nq) && same(t->qvel, qvel, (size_t)T * m->nv));
      CHECK(strstr(t->source, names[f]) != NULL);
    }
    int all = 1;
    for (int i = 0; i < m->nv; i++) all &= ds.obs_q[i] && ds.obs_v[i];
    CHECK(all);
    CHECK_REL(ds.dt_obs, m->opt.timestep, 1e-12, 0);
    phys_dataset_free(&ds);
    CHECK(ds.traj == NULL && ds.ntraj == 0);
  }
  free(time), free(qpos), free(qvel), free(arr);
  phys_free_model(m);
}

// the first data row of a CSV file as numbers (up to 32)
static int first_row(double* x, const char* file) {
  FILE* f = fopen(file, "r");
  char line[4096];
  int n = 0;
  if (f && fgets(line, sizeof line, f) && fgets(line, sizeof line, f)) {
    for (char *save = NULL, *tok = strtok_r(line, ",\n", &save); tok && n < 32; tok = strtok_r(NULL, ",\n", &save))
      x[n++] = strtod(tok, NULL);
  }
  if (f) fclose(f);
  return n;
}

// the bundled cube tosses with models/cube.xml: px..wz_body are the free joint's qpos/qvel as they are
static void test_cube_tosses(void) {
  physLog log = {0};
  physModel* m = phys_load("models/cube.xml", NULL, &log);
  CHECK(m != NULL);
  if (!m) return;
  physDataset ds;
  CHECK_MSG(load1(&ds, m, "data/cube_toss", NULL, &log) == PHYS_OK, "%s", log.error);
  CHECK(ds.ntraj == 12);
  const int rows[12] = {111, 99, 104, 111, 90, 104, 101, 105, 98, 102, 105, 104};
  for (int k = 0; k < ds.ntraj && k < 12; k++) {
    char want[64];
    snprintf(want, sizeof want, "toss_%03d.csv", k);
    CHECK_MSG(strstr(ds.traj[k].source, want) != NULL, "%s", ds.traj[k].source);
    CHECK_MSG(ds.traj[k].T == rows[k], "%d: T %d", k, ds.traj[k].T);
    for (int s = 0; s < ds.traj[k].T; s++) {
      const double* q = ds.traj[k].qpos + 7 * s + 3;
      CHECK_NEAR(sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]), 1, 4e-16);
    }
  }
  // toss_000's first row: t, px, py, pz, qw, qx, qy, qz, vx, vy, vz, wx, wy, wz
  double x[32];
  CHECK(first_row(x, "data/cube_toss/toss_000.csv") == 14);
  if (ds.ntraj) {
    const physTrajectory* t = ds.traj;
    CHECK(t->time[0] == x[0] && t->qpos[0] == x[1] && t->qpos[1] == x[2] && t->qpos[2] == x[3]);
    double nq = sqrt(x[4] * x[4] + x[5] * x[5] + x[6] * x[6] + x[7] * x[7]);
    for (int i = 0; i < 4; i++) CHECK_NEAR(t->qpos[3 + i], x[4 + i] / nq, 1e-15);
    for (int i = 0; i < 6; i++) CHECK(t->qvel[i] == x[8 + i]);
    CHECK(t->has_qvel == 1);
  }
  CHECK_REL(ds.dt_obs, 1.0 / 148, 1e-6, 0);
  int all = 1;
  for (int i = 0; i < 6; i++) all &= ds.obs_q[i] && ds.obs_v[i];
  CHECK(all);
  phys_dataset_free(&ds);

  // --skip 3 --files 4: toss_003 .. toss_006; a file and a folder together
  physDataOptions opt = {0};
  opt.first_file = 3;
  opt.max_files = 4;
  CHECK_MSG(load1(&ds, m, "data/cube_toss", &opt, &log) == PHYS_OK, "%s", log.error);
  CHECK(ds.ntraj == 4 && strstr(ds.traj[0].source, "toss_003.csv") && strstr(ds.traj[3].source, "toss_006.csv"));
  phys_dataset_free(&ds);
  const char* two[2] = {"data/cube_toss/toss_011.csv", "data/cube_toss"};
  memset(&log, 0, sizeof log);
  CHECK(phys_dataset_load(&ds, m, two, 2, NULL, &log) == PHYS_OK);
  CHECK(ds.ntraj == 13 && strstr(ds.traj[0].source, "toss_011.csv") && strstr(ds.traj[1].source, "toss_000.csv"));
  phys_dataset_free(&ds);
  phys_free_model(m);
}

// an elbow toss with the elbow URDF (floating root): theta / theta_dot are the hinge, by rule 6 and by --map
static void test_elbow_toss(void) {
  physLog log = {0};
  physLoadOptions lo = {0};
  lo.urdf_floating = 1;
  physModel* m = phys_load("tests/data/elbow/elbow.urdf", &lo, &log);
  CHECK(m != NULL && m->nq == 8 && m->nv == 7);
  if (!m) return;
  double x[32];
  CHECK(first_row(x, "tests/data/elbow/toss_000.csv") == 16);
  physDataOptions opt = {0};
  const char* map[2] = {"theta=q:hinge_1_to_2", "theta_dot=v:hinge_1_to_2:0"};
  for (int pass = 0; pass < 2; pass++) {
    physDataset ds;
    opt.map = pass ? map : NULL;
    opt.nmap = pass ? 2 : 0;
    CHECK_MSG(load1(&ds, m, "tests/data/elbow/toss_000.csv", &opt, &log) == PHYS_OK, "%s", log.error);
    CHECK(ds.ntraj == 1 && ds.traj[0].T == 121);
    if (ds.ntraj) {
      const physTrajectory* t = ds.traj;
      CHECK(t->qpos[0] == x[1] && t->qpos[2] == x[3] && t->qpos[7] == x[8]);
      CHECK(t->qvel[0] == x[9] && t->qvel[5] == x[14] && t->qvel[6] == x[15]);
    }
    phys_dataset_free(&ds);
  }
  phys_free_model(m);
}

//---------------------------------------------------------------------------------------------------------
// observed subsets

// positions only: velocities are (q_k (-) q_{k-1}) / dt, which semi-implicit Euler makes equal to v_k
static void test_positions_only(void) {
  physLog log = {0};
  physModel* m = phys_load("tests/data/mixed.xml", NULL, &log);
  if (!m) return;
  int T = 31;
  double *time = malloc(sizeof(double) * T), *qpos = malloc(sizeof(double) * T * m->nq);
  double* qvel = malloc(sizeof(double) * T * m->nv);
  simulate(m, T - 1, time, qpos, qvel);
  // header t,q0..q{nq-1}: named columns (rule 4) without velocities
  FILE* f = fopen(tmp_path("pos.csv"), "w");
  fprintf(f, "t");
  for (int i = 0; i < m->nq; i++) fprintf(f, ",q%d", i);
  fprintf(f, "\n");
  for (int k = 0; k < T; k++) {
    fprintf(f, "%.17g", time[k]);
    for (int i = 0; i < m->nq; i++) fprintf(f, ",%.17g", qpos[k * m->nq + i]);
    fprintf(f, "\n");
  }
  fclose(f);
  write_csv(tmp_path("full.csv"), m, T, time, qpos, qvel);
  physDataOptions obs = {0};
  obs.observe = "q";
  const char* files[2] = {"pos.csv", "full.csv"};
  for (int pass = 0; pass < 2; pass++) {
    physDataset ds;
    CHECK_MSG(load1(&ds, m, tmp_path(files[pass]), pass ? &obs : NULL, &log) == PHYS_OK, "%s", log.error);
    if (!ds.ntraj) continue;
    const physTrajectory* t = ds.traj;
    CHECK(t->has_qvel == 0);
    int flags = 1;
    for (int i = 0; i < m->nv; i++) flags &= ds.obs_q[i] == 1 && ds.obs_v[i] == 0;
    CHECK(flags);
    CHECK(same(t->qpos, qpos, (size_t)T * m->nq));
    double worst = 0;
    for (int k = 1; k < T; k++)
      for (int i = 0; i < m->nv; i++) {
        double a = t->qvel[k * m->nv + i], b = qvel[k * m->nv + i];
        worst = fmax(worst, fabs(a - b) / fmax(fabs(b), 1e-2));
      }
    CHECK_MSG(worst < 1e-9, "differenced velocity vs simulated: %.3g", worst);
    // k = 0: the linear extrapolation 2 v_1 - v_2, off from the true v_0 by minus its second difference
    for (int i = 0; i < m->nv; i++) {
      CHECK(t->qvel[i] == 2 * t->qvel[m->nv + i] - t->qvel[2 * m->nv + i]);
      CHECK_NEAR(t->qvel[i] - qvel[i], -(qvel[2 * m->nv + i] - 2 * qvel[m->nv + i] + qvel[i]), 1e-9);
    }
    phys_dataset_free(&ds);
  }
  // one joint by name: columns t, slide, slide_dot (rule 5); observe keeps only the hinge of the full file
  f = fopen(tmp_path("slide.csv"), "w");
  int sq = m->jnt_qposadr[phys_name2id(m, "joint", "slide")], sv = m->jnt_dofadr[phys_name2id(m, "joint", "slide")];
  fprintf(f, "t,slide,slide_dot\n");
  for (int k = 0; k < T; k++) fprintf(f, "%.17g,%.17g,%.17g\n", time[k], qpos[k * m->nq + sq], qvel[k * m->nv + sv]);
  fclose(f);
  physDataset ds;
  CHECK_MSG(load1(&ds, m, tmp_path("slide.csv"), NULL, &log) == PHYS_OK, "%s", log.error);
  int flags = 1;
  for (int i = 0; i < m->nv; i++) flags &= ds.obs_q[i] == (i == sv) && ds.obs_v[i] == (i == sv);
  CHECK(flags);
  if (ds.ntraj) {
    CHECK(ds.traj[0].qpos[T / 2 * m->nq + sq] == qpos[T / 2 * m->nq + sq]);
    CHECK(ds.traj[0].qpos[T / 2 * m->nq + 0] == m->qpos0[0]);   // unobserved: qpos0
    CHECK(ds.traj[0].has_qvel == 1);
  }
  phys_dataset_free(&ds);
  int hq = m->jnt_qposadr[phys_name2id(m, "joint", "hinge")], hv = m->jnt_dofadr[phys_name2id(m, "joint", "hinge")];
  obs.observe = "q:hinge, v:root:2";
  CHECK_MSG(load1(&ds, m, tmp_path("full.csv"), &obs, &log) == PHYS_OK, "%s", log.error);
  int rq = m->jnt_dofadr[0];
  flags = 1;
  for (int i = 0; i < m->nv; i++) flags &= ds.obs_q[i] == (i == hv) && ds.obs_v[i] == (i == rq + 2);
  CHECK(flags);
  if (ds.ntraj) CHECK(ds.traj[0].qpos[5 * m->nq + hq] == qpos[5 * m->nq + hq] && ds.traj[0].qpos[5 * m->nq] == m->qpos0[0]);
  phys_dataset_free(&ds);
  // a ball joint's quaternion named "ball_qw".."ball_qz" (rule 5) and its velocity by --map
  f = fopen(tmp_path("ball.csv"), "w");
  int bq = m->jnt_qposadr[1], bv = m->jnt_dofadr[1];
  fprintf(f, "time,ball_qw,ball_qx,ball_qy,ball_qz,omega\n");
  for (int k = 0; k < T; k++) {
    const double* q = qpos + k * m->nq + bq;
    fprintf(f, "%.17g,%.17g,%.17g,%.17g,%.17g,%.17g\n", time[k], q[0], q[1], q[2], q[3], qvel[k * m->nv + bv + 1]);
  }
  fclose(f);
  const char* map[1] = {"omega=v:ball:1"};
  physDataOptions mo = {0};
  mo.map = map;
  mo.nmap = 1;
  CHECK_MSG(load1(&ds, m, tmp_path("ball.csv"), &mo, &log) == PHYS_OK, "%s", log.error);
  flags = 1;
  for (int i = 0; i < m->nv; i++) flags &= ds.obs_q[i] == (i >= bv && i < bv + 3) && ds.obs_v[i] == (i == bv + 1);
  CHECK(flags);
  if (ds.ntraj) CHECK(ds.traj[0].qvel[7 * m->nv + bv + 1] == qvel[7 * m->nv + bv + 1]);
  phys_dataset_free(&ds);
  free(time), free(qpos), free(qvel);
  phys_free_model(m);
}

//---------------------------------------------------------------------------------------------------------
// bad input

// expect a failure whose message contains every needle; the data set is left empty
static void expect_error(const physModel* m, const char* path, const physDataOptions* opt, const char* needle1,
                         const char* needle2) {
  physDataset ds;
  physLog log;
  physStatus s = load1(&ds, m, path, opt, &log);
  CHECK_MSG(s != PHYS_OK, "%s loaded", path);
  CHECK_MSG(strstr(log.error, needle1) != NULL, "'%s' not in: %s", needle1, log.error);
  if (needle2) CHECK_MSG(strstr(log.error, needle2) != NULL, "'%s' not in: %s", needle2, log.error);
  phys_dataset_free(&ds);
  CHECK(ds.ntraj == 0 && ds.traj == NULL);
}

// every bad file gives its message
static void test_bad_input(void) {
  physLog log = {0};
  physModel* m = phys_load("models/cube.xml", NULL, &log);
  if (!m) return;
  const char* hdr = "t,px,py,pz,qw,qx,qy,qz,vx,vy,vz,wx_body,wy_body,wz_body\n";
  const char* row0 = "0,0,0,0.1,1,0,0,0,0,0,0,0,0,0\n";
  char text[1024];
  snprintf(text, sizeof text, "%s%s0.01,0,0,0.1,1,0,0,0,nan,0,0,0,0,0\n", hdr, row0);
  expect_error(m, write_text("nan.csv", text), NULL, "nan.csv:3:9: column 'vx'", "not finite");
  snprintf(text, sizeof text, "%s%s0.01,0,0,0.1,1,0,0,0,,0,0,0,0,0\n", hdr, row0);
  expect_error(m, write_text("empty_value.csv", text), NULL, "empty_value.csv:3:9", "not a number");
  snprintf(text, sizeof text, "%s%s0,0,0,0.1,1,0,0,0,0,0,0,0,0,0\n", hdr, row0);
  expect_error(m, write_text("time.csv", text), NULL, "time.csv:3:1: time 0 does not increase", NULL);
  snprintf(text, sizeof text, "t,px,py,pz,qw,qx,qy,qz,vx,vy,vz,foo\n%s", row0);
  expect_error(m, write_text("unknown.csv", text), NULL, "unknown.csv:1:12: column 'foo' matches no coordinate",
               "px,py,pz,qw,qx,qy,qz,vx,vy,vz,wx_body,wy_body,wz_body (free joint 'cube')");
  snprintf(text, sizeof text, "t,px,py,pz,qw,qx\n0,0,0,0,1,0\n0.1,0,0,0,1,0\n");
  expect_error(m, write_text("quat.csv", text), NULL, "quat.csv:1: joint 'cube'", "2 of the 4 quaternion");
  snprintf(text, sizeof text, "px,py,pz\n0,0,0\n1,1,1\n");
  expect_error(m, write_text("notime.csv", text), NULL, "notime.csv:1: no time column", NULL);
  snprintf(text, sizeof text, "t,px,q0\n0,0,0\n1,1,1\n");
  expect_error(m, write_text("dup.csv", text), NULL, "dup.csv:1:3: column 'q0' gives q0, as column 2", NULL);
  snprintf(text, sizeof text, "%s%s0.01,0,0,0.1,1,0,0,0,0,0,0,0,0\n", hdr, row0);
  expect_error(m, write_text("short.csv", text), NULL, "short.csv:3: 13 columns, the header has 14", NULL);
  snprintf(text, sizeof text, "%s%s0.01,0,0,0.1,1,0.5,0,0,0,0,0,0,0,0\n", hdr, row0);
  expect_error(m, write_text("norm.csv", text), NULL, "norm.csv:3: joint 'cube' (free): quaternion", "norm");
  snprintf(text, sizeof text, "%s%s", hdr, row0);
  expect_error(m, write_text("one.csv", text), NULL, "one.csv: 1 sample; a trajectory needs at least 2", NULL);
  expect_error(m, write_text("header_only.csv", hdr), NULL, "header_only.csv: no data rows", NULL);
  expect_error(m, write_text("empty.csv", ""), NULL, "empty.csv: empty file", NULL);
  snprintf(text, sizeof text, "%s%s\n0.01,0,0,0.1,1,0,0,0,0,0,0,0,0,0\n", hdr, row0);
  expect_error(m, write_text("blank.csv", text), NULL, "blank.csv:3: blank line inside the data", NULL);
  expect_error(m, tmp_path("missing.csv"), NULL, "missing.csv: cannot open", NULL);
  // simulate format with a wrong column count goes through trajio's checks
  expect_error(m, write_text("simfmt.csv", "t,q0,q1,q2,q3,q4,q5,q6,v0,v1,v2,v3,v4,v5\n0,0,0,0,1,0,0,0,0,0,0,0,0,inf\n"
                             "1,0,0,0,1,0,0,0,0,0,0,0,0,0\n"), NULL, "simfmt.csv:2", "not finite");
  // an empty folder, a folder of files that disagree on what they observe
  mkdir(tmp_path("emptydir"), 0755);
  write_text("emptydir/notes.txt", "not data\n");
  expect_error(m, tmp_path("emptydir"), NULL, "emptydir: empty folder", NULL);
  mkdir(tmp_path("mixdir"), 0755);
  snprintf(text, sizeof text, "%s%s0.01,0,0,0.1,1,0,0,0,0,0,0,0,0,0\n", hdr, row0);
  write_text("mixdir/a.csv", text);
  write_text("mixdir/b.csv", "t,px,py,pz\n0,0,0,0\n0.01,0,0,0\n");
  expect_error(m, tmp_path("mixdir"), NULL, "b.csv: observes dq0 dq1 dq2, but", "a.csv observes dq0");
  // skipping everything
  physDataOptions opt = {0};
  opt.first_file = 5;
  expect_error(m, tmp_path("mixdir"), &opt, "skipping 5 files leaves none of the 2", NULL);
  // bad --map and --observe (checked before any file is read)
  const char* map[1] = {"x=q:nosuch"};
  physDataOptions mo = {0};
  mo.map = map;
  mo.nmap = 1;
  expect_error(m, tmp_path("mixdir"), &mo, "--map 'x=q:nosuch'", "JOINT one of: cube");
  map[0] = "x=v:cube:6";
  expect_error(m, tmp_path("mixdir"), &mo, "--map 'x=v:cube:6': joint 'cube' has 6 velocity coordinates", NULL);
  physDataOptions oo = {0};
  oo.observe = "q:cube,w";
  expect_error(m, tmp_path("mixdir"), &oo, "--observe item 'w'", NULL);
  // .npy: dtype, order, shape, version, truncation, NaN
  double data[3 * 14] = {0};
  for (int k = 0; k < 3; k++) data[14 * k] = 0.01 * k, data[14 * k + 4] = 1;
  write_npy(tmp_path("be.npy"), ">f8", "False", "(3, 14)", data, 42);
  expect_error(m, tmp_path("be.npy"), NULL, "be.npy: .npy dtype '>f8' is not supported", "'<f8'");
  write_npy(tmp_path("f4.npy"), "<f4", "False", "(3, 14)", data, 21);
  expect_error(m, tmp_path("f4.npy"), NULL, "dtype '<f4' is not supported", NULL);
  write_npy(tmp_path("fortran.npy"), "<f8", "True", "(3, 14)", data, 42);
  expect_error(m, tmp_path("fortran.npy"), NULL, "Fortran order is not supported", NULL);
  write_npy(tmp_path("shape.npy"), "<f8", "False", "(3, 13)", data, 39);
  expect_error(m, tmp_path("shape.npy"), NULL, "shape (3, 13): expected (T, 14) = (T, 1 + nq + nv)", NULL);
  write_npy(tmp_path("shape3.npy"), "<f8", "False", "(3, 7, 2)", data, 42);
  expect_error(m, tmp_path("shape3.npy"), NULL, "shape (3, 7, 2): expected 2-D", NULL);
  write_npy(tmp_path("trunc.npy"), "<f8", "False", "(3, 14)", data, 30);
  expect_error(m, tmp_path("trunc.npy"), NULL, "the .npy shape (3, 14) needs 336 bytes of data, the file has 240 "
               "(truncated)", NULL);
  write_npy(tmp_path("long.npy"), "<f8", "False", "(2, 14)", data, 42);
  expect_error(m, tmp_path("long.npy"), NULL, "needs 224 bytes of data, the file has 336 (data beyond the shape)", NULL);
  data[14 + 9] = NAN;
  write_npy(tmp_path("nan.npy"), "<f8", "False", "(3, 14)", data, 42);
  expect_error(m, tmp_path("nan.npy"), NULL, "nan.npy: row 2, column 10 ('v1'): value nan is not finite", NULL);
  write_text("fake.npy", "t,px\n");
  expect_error(m, tmp_path("fake.npy"), NULL, "fake.npy: not a .npy file", NULL);
  phys_free_model(m);
}

// the whole content of a file (malloc'd), its size in *n
static char* read_bytes(const char* p, size_t* n) {
  FILE* f = fopen(p, "rb");
  char* b = malloc(1 << 16);
  *n = f ? fread(b, 1, 1 << 16, f) : 0;
  if (f) fclose(f);
  return b;
}

// /dev/zero is refused at once (it made the reader grow past 1 GB); a line over 1 MiB and a .npy header or shape
// larger than the file are errors before any large allocation; FIFOs are read (once) in every format
static void test_input_limits(void) {
  physLog log = {0};
  physModel* m = phys_load("models/cube.xml", NULL, &log);
  if (!m) return;
  expect_error(m, "/dev/zero", NULL, "/dev/zero: is a character device; only regular files and FIFOs are read", NULL);
  size_t n = (1 << 20) + 10;
  char* text = malloc(n + 64);
  int h = snprintf(text, 64, "t,px,py,pz\n");
  memset(text + h, '1', n);
  strcpy(text + h + n, "\n");
  expect_error(m, write_text("longline.csv", text), NULL, "longline.csv:2: line longer than 1048576 bytes", NULL);
  free(text);
  // .npy: a header length past the end of the file; a shape of 10^7 rows in a file of 3
  FILE* f = fopen(tmp_path("bighead.npy"), "wb");
  fwrite("\x93NUMPY\x02\x00\xff\xff\x0f\x00{'descr'", 1, 21, f);
  fclose(f);
  expect_error(m, tmp_path("bighead.npy"), NULL, "bighead.npy: truncated .npy header: 1048575 bytes announced, the file has 21", NULL);
  f = fopen(tmp_path("farhead.npy"), "wb");
  fwrite("\x93NUMPY\x01\x00\x00\x10{'descr'", 1, 17, f);
  fclose(f);
  expect_error(m, tmp_path("farhead.npy"), NULL, "farhead.npy: truncated .npy header: 4096 bytes announced, the file "
               "has 17", NULL);
  double data[3 * 14] = {0};
  for (int k = 0; k < 3; k++) data[14 * k] = 0.01 * k, data[14 * k + 4] = 1;
  write_npy(tmp_path("bigshape.npy"), "<f8", "False", "(10000000, 14)", data, 42);
  expect_error(m, tmp_path("bigshape.npy"), NULL, "shape (10000000, 14) needs 1120000000 bytes of data, the file has 336",
               NULL);
  // FIFOs: a named CSV, physid simulate's CSV and a .npy, each read once from the pipe
  const char* named = "t,px,py,pz,qw,qx,qy,qz\n0,0,0,0.1,1,0,0,0\n0.01,0,0,0.2,1,0,0,0\n";
  const char* sim = "t,q0,q1,q2,q3,q4,q5,q6,v0,v1,v2,v3,v4,v5\n0,0,0,0.1,1,0,0,0,0,0,0,0,0,0\n"
                    "0.01,0,0,0.2,1,0,0,0,0,0,0,0,0,0\n";
  write_npy(tmp_path("good.npy"), "<f8", "False", "(3, 14)", data, 42);
  size_t nnpy;
  char* npy = read_bytes(tmp_path("good.npy"), &nnpy);
  const void* feed[3] = {named, sim, npy};
  size_t size[3] = {strlen(named), strlen(sim), nnpy};
  int rows[3] = {2, 2, 3};
  for (int c = 0; c < 3; c++) {
    pid_t pid = test_fifo_feed(tmp_path("pipe"), feed[c], size[c]);
    CHECK(pid > 0);
    physDataset ds;
    physStatus s = load1(&ds, m, tmp_path("pipe"), NULL, &log);
    CHECK_MSG(s == PHYS_OK, "FIFO case %d: %s", c, log.error);
    CHECK_MSG(s == PHYS_OK && ds.ntraj == 1 && ds.traj[0].T == rows[c], "FIFO case %d", c);
    if (s == PHYS_OK) CHECK(ds.traj[0].time[1] == 0.01 && ds.traj[0].qpos[7 + 2] == (c < 2 ? 0.2 : 0));
    phys_dataset_free(&ds);
    waitpid(pid, NULL, 0);
  }
  free(npy);
  phys_free_model(m);
}

//---------------------------------------------------------------------------------------------------------
// recorded inputs (issue 12 item 1)

// a 2-dof arm with two named motors: nq = nv = nu = 2
static const char* g_arm2 =
    "<mujoco model='arm2'><worldbody><body name='a'><joint name='j1' axis='0 1 0'/>"
    "<geom type='capsule' fromto='0 0 0 0 0 -.3' size='.03'/><body name='b' pos='0 0 -.3'>"
    "<joint name='j2' axis='0 1 0'/><geom type='capsule' fromto='0 0 0 0 0 -.3' size='.03'/></body></body>"
    "</worldbody><actuator><motor name='m1' joint='j1'/><motor name='m2' joint='j2'/></actuator></mujoco>";

// the inputs of trajectory 0 of ds against the expected u (T x 2; NULL: none) and tau (T x 2; NULL: none)
static void check_inputs(const physDataset* ds, const double* u, const double* tau, int T, const char* what) {
  CHECK_MSG(ds->ntraj == 1 && ds->traj[0].T == T, "%s", what);
  CHECK_MSG(ds->has_ctrl == (u != NULL) && ds->has_qfrc == (tau != NULL), "%s: has_ctrl %d has_qfrc %d", what,
            ds->has_ctrl, ds->has_qfrc);
  CHECK_MSG((ds->traj[0].ctrl != NULL) == (u != NULL) && (ds->traj[0].qfrc != NULL) == (tau != NULL), "%s", what);
  if (u && ds->traj[0].ctrl) CHECK_MSG(same(ds->traj[0].ctrl, u, (size_t)T * 2), "%s: controls", what);
  if (tau && ds->traj[0].qfrc) CHECK_MSG(same(ds->traj[0].qfrc, tau, (size_t)T * 2), "%s: joint forces", what);
}

// controls and joint forces from every format: simulate's CSV (u then tau after the state), named columns
// (u<i>, ctrl:ACTUATOR, tau<i>, qfrc:JOINT in any order), a plain .npy (u, then tau after the state) and a
// structured .npy (fields named as CSV columns); the values are read bit for bit
static void test_recorded_inputs(void) {
  physLog log = {0};
  physModel* m = phys_load(write_text("arm2.xml", g_arm2), NULL, &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  if (!m) return;
  const double u[6] = {0.5, -1.25, 3, 0.125, -2, 7}, tau[6] = {0.1, 0.2, -0.3, 0.4, 0.5, -0.6};
  physDataset ds;
  // simulate's layout with controls, with controls and joint forces
  CHECK_MSG(load1(&ds, m, write_text("in_u.csv", "t,q0,q1,v0,v1,u0,u1\n0,0,0,0,0,0.5,-1.25\n0.01,0,0,0,0,3,0.125\n"
                                     "0.02,0,0,0,0,-2,7\n"), NULL, &log) == PHYS_OK, "%s", log.error);
  check_inputs(&ds, u, NULL, 3, "simulate layout with u");
  phys_dataset_free(&ds);
  CHECK_MSG(load1(&ds, m, write_text("in_ut.csv", "t,q0,q1,v0,v1,u0,u1,tau0,tau1\n0,0,0,0,0,0.5,-1.25,0.1,0.2\n"
                                     "0.01,0,0,0,0,3,0.125,-0.3,0.4\n0.02,0,0,0,0,-2,7,0.5,-0.6\n"), NULL, &log) == PHYS_OK,
            "%s", log.error);
  check_inputs(&ds, u, tau, 3, "simulate layout with u and tau");
  phys_dataset_free(&ds);
  // named columns in any order, only joint forces
  CHECK_MSG(load1(&ds, m, write_text("in_named.csv", "qfrc:j2,j1,t,tau0,j2\n0.2,0,0,0.1,0\n0.4,0,0.01,-0.3,0\n"
                                     "-0.6,0,0.02,0.5,0\n"), NULL, &log) == PHYS_OK, "%s", log.error);
  check_inputs(&ds, NULL, tau, 3, "named tau");
  phys_dataset_free(&ds);
  CHECK_MSG(load1(&ds, m, write_text("in_named_u.csv", "t,ctrl:m2,j1,j2,u0\n0,-1.25,0,0,0.5\n0.01,0.125,0,0,3\n"
                                     "0.02,7,0,0,-2\n"), NULL, &log) == PHYS_OK, "%s", log.error);
  check_inputs(&ds, u, NULL, 3, "named ctrl");
  phys_dataset_free(&ds);
  // plain .npy: (T, 1 + nq + nv + nu) and (T, 1 + nq + nv + nu + nv)
  double rows[3 * 9];
  for (int k = 0; k < 3; k++) {
    double r[9] = {0.01 * k, 0, 0, 0, 0, u[2 * k], u[2 * k + 1], tau[2 * k], tau[2 * k + 1]};
    memcpy(rows + 9 * k, r, sizeof r);
  }
  write_npy(tmp_path("in_ut.npy"), "<f8", "False", "(3, 9)", rows, 27);
  CHECK_MSG(load1(&ds, m, tmp_path("in_ut.npy"), NULL, &log) == PHYS_OK, "%s", log.error);
  check_inputs(&ds, u, tau, 3, "plain npy with u and tau");
  phys_dataset_free(&ds);
  double rows_u[3 * 7];
  for (int k = 0; k < 3; k++) memcpy(rows_u + 7 * k, rows + 9 * k, 7 * sizeof(double));
  write_npy(tmp_path("in_u.npy"), "<f8", "False", "(3, 7)", rows_u, 21);
  CHECK_MSG(load1(&ds, m, tmp_path("in_u.npy"), NULL, &log) == PHYS_OK, "%s", log.error);
  check_inputs(&ds, u, NULL, 3, "plain npy with u");
  phys_dataset_free(&ds);
  // structured .npy: tau without u, named fields
  double srows[3 * 4];
  for (int k = 0; k < 3; k++) {
    double r[4] = {0.01 * k, 0.25, tau[2 * k + 1], tau[2 * k]};
    memcpy(srows + 4 * k, r, sizeof r);
  }
  write_npy_raw(tmp_path("in_s.npy"), "[('t', '<f8'), ('j1', '<f8'), ('qfrc:j2', '<f8'), ('tau0', '<f8')]", "False",
                "(3,)", srows, 12);
  CHECK_MSG(load1(&ds, m, tmp_path("in_s.npy"), NULL, &log) == PHYS_OK, "%s", log.error);
  check_inputs(&ds, NULL, tau, 3, "structured npy with tau");
  CHECK(ds.traj[0].qpos[0] == 0.25 && ds.obs_q[0] && !ds.obs_q[1]);
  phys_dataset_free(&ds);
  phys_free_model(m);
}

// missing or extra input columns name the expected ones; files that record different inputs; npy widths
static void test_recorded_inputs_bad(void) {
  physLog log = {0};
  physModel* m = phys_load(write_text("arm2.xml", g_arm2), NULL, &log);
  if (!m) return;
  physDataset ds;
  const struct { const char *name, *text, *frag1, *frag2; physStatus st; } cases[] = {
      {"in_miss_u.csv", "t,q0,q1,v0,v1,u0\n0,0,0,0,0,1\n0.01,0,0,0,0,1\n", "in_miss_u.csv:1: expected 7 columns",
       "t,q0..q1,v0..v1,u0..u1 for nq=2, nv=2, nu=2), found 6", PHYS_ERR_SIZE},
      {"in_extra_u.csv", "t,q0,q1,v0,v1,u0,u1,u2\n0,0,0,0,0,1,1,1\n", "in_extra_u.csv:1: expected 7 columns",
       "found 8", PHYS_ERR_SIZE},
      {"in_named_miss.csv", "t,j1,ctrl:m1\n0,0,1\n0.01,0,1\n", "in_named_miss.csv:1: the columns give 1 of the 2 controls",
       "missing: u1 (ctrl:m2)", PHYS_ERR_PARSE},
      {"in_named_tau.csv", "t,j1,qfrc:j2\n0,0,1\n0.01,0,1\n", "the columns give 1 of the 2 joint forces",
       "missing: tau0 (qfrc:j1)", PHYS_ERR_PARSE},
      {"in_named_extra.csv", "t,j1,u0,u1,u2\n0,0,1,1,1\n0.01,0,1,1,1\n", "column 'u2' matches no coordinate",
       "controls u0..u1 or ctrl:ACTUATOR", PHYS_ERR_PARSE},
      {"in_named_dup.csv", "t,j1,u0,u1,ctrl:m1\n0,0,1,1,1\n0.01,0,1,1,1\n", "column 'ctrl:m1' gives u0", "column 3",
       PHYS_ERR_PARSE},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    physStatus st = load1(&ds, m, write_text(cases[c].name, cases[c].text), NULL, &log);
    CHECK_MSG(st == cases[c].st && strstr(log.error, cases[c].frag1) && strstr(log.error, cases[c].frag2),
              "%s: status %d: %s", cases[c].name, st, log.error);
    CHECK(ds.ntraj == 0);
    phys_dataset_free(&ds);
  }
  // two files recording different inputs
  mkdir(tmp_path("mixed_inputs"), 0755);
  write_text("mixed_inputs/a.csv", "t,q0,q1,v0,v1,u0,u1\n0,0,0,0,0,1,1\n0.01,0,0,0,0,1,1\n");
  write_text("mixed_inputs/b.csv", "t,q0,q1,v0,v1\n0,0,0,0,0\n0.01,0,0,0,0\n");
  CHECK(load1(&ds, m, tmp_path("mixed_inputs"), NULL, &log) == PHYS_ERR_PARSE &&
        strstr(log.error, "b.csv: has no controls and no joint forces, but") &&
        strstr(log.error, "a.csv records controls"));
  phys_dataset_free(&ds);
  // a plain .npy of another width says which widths carry inputs
  double zero[3 * 6] = {0};
  zero[6] = 0.01;
  write_npy(tmp_path("in_w.npy"), "<f8", "False", "(3, 6)", zero, 18);
  CHECK(load1(&ds, m, tmp_path("in_w.npy"), NULL, &log) == PHYS_ERR_SIZE && strstr(log.error, "(T, 7) with the nu=2 "
        "controls, (T, 9) with controls and nv joint forces"));
  phys_dataset_free(&ds);
  write_npy_raw(tmp_path("in_sbad.npy"), "[('t', '<f8'), ('j1', '<i4')]", "False", "(3,)", zero, 6);
  CHECK(load1(&ds, m, tmp_path("in_sbad.npy"), NULL, &log) == PHYS_ERR_PARSE && strstr(log.error, "expected '<f8' fields"));
  phys_dataset_free(&ds);
  phys_free_model(m);
}

// a continuous joint recorded wrapped into (-pi, pi], positions only: the differenced velocity across the jump
// from 3.1 to -3.1 rad is the short way round, (2 pi - 6.2) / dt, not -6.2 / dt; a limited hinge keeps -6.2 / dt
static void test_wrapped_differences(void) {
  const double pi = 3.14159265358979323846;
  for (int limited = 0; limited < 2; limited++) {
    physLog log = {0};
    char xml[512];
    snprintf(xml, sizeof xml, "<mujoco><compiler angle='radian'/><worldbody><body><joint name='h' axis='0 0 1' %s/>"
             "<geom size='.1'/></body></worldbody></mujoco>", limited ? "limited='true' range='-10 10'" : "");
    physModel* m = phys_load(write_text("rotor.xml", xml), NULL, &log);
    CHECK_MSG(m != NULL, "%s", log.error);
    if (!m) return;
    physDataset ds;
    CHECK_MSG(load1(&ds, m, write_text("in_rotor.csv", "t,h\n0,3.0\n0.1,3.1\n0.2,-3.1\n"), NULL, &log) == PHYS_OK,
              "%s", log.error);
    if (ds.ntraj == 1) {
      double want = limited ? -62 : (2 * pi - 6.2) / 0.2 * 2;   // (2 pi - 6.2) / 0.1
      CHECK_NEAR(ds.traj[0].qvel[2], want, 1e-9);
      CHECK_NEAR(ds.traj[0].qvel[1], 1, 1e-9);
    }
    phys_dataset_free(&ds);
    phys_free_model(m);
  }
}

// activation columns (issue 15): "act<i>" and "act:ACTUATOR" in a named CSV and a structured .npy give the state's
// act part exactly (traj.act, T x na); without them traj.act is NULL; some but not all, or act:NAME of an actuator
// without dynamics, are refused naming the columns
static void test_act_columns(void) {
  physLog log = {0};
  physModel* m = phys_load("tests/data/actuator_damper.xml", NULL, &log);   // (na 2: 'servo' act0, 'track' act1)
  CHECK_MSG(m && m->na == 2, "%s", log.error);
  if (!m) return;
  physDataset ds;
  CHECK_MSG(load1(&ds, m, write_text("in_act.csv", "t,slide,j1,j2,act:track,act0\n0,0.1,0.2,0.3,-0.125,0.5\n"
                                     "0.01,0.1,0.2,0.3,0.25,-0.75\n"), NULL, &log) == PHYS_OK, "%s", log.error);
  const double want[4] = {0.5, -0.125, -0.75, 0.25};
  CHECK(ds.ntraj == 1 && ds.traj[0].act && same(ds.traj[0].act, want, 4));
  phys_dataset_free(&ds);
  double rows[2 * 4] = {0, 1, 0.5, -0.125, 0.01, 2, -0.75, 0.25};
  write_npy_raw(tmp_path("in_act.npy"), "[('t', '<f8'), ('q0', '<f8'), ('act0', '<f8'), ('act1', '<f8')]", "False",
                "(2,)", rows, 8);
  CHECK_MSG(load1(&ds, m, tmp_path("in_act.npy"), NULL, &log) == PHYS_OK, "%s", log.error);
  CHECK(ds.ntraj == 1 && ds.traj[0].act && same(ds.traj[0].act, want, 4));
  phys_dataset_free(&ds);
  // a plain .npy in simulate's order: t, qpos, qvel, ctrl (, tau), act; the activations exactly
  for (int with_tau = 0; with_tau < 2; with_tau++) {
    int base = 1 + m->nq + m->nv, ncol = base + m->nu + with_tau * m->nv + m->na;
    double* arr = calloc((size_t)2 * ncol, sizeof(double));
    char shape[64];
    for (int k = 0; k < 2; k++) {
      arr[k * ncol] = 0.01 * k;
      for (int c = 1; c < ncol - m->na; c++) arr[k * ncol + c] = 0.125 * c;   // (forces and controls: any value)
      for (int a = 0; a < m->na; a++) arr[k * ncol + ncol - m->na + a] = want[k * m->na + a];
    }
    snprintf(shape, sizeof shape, "(2, %d)", ncol);
    write_npy(tmp_path("in_act_plain.npy"), "<f8", "False", shape, arr, (size_t)2 * ncol);
    CHECK_MSG(load1(&ds, m, tmp_path("in_act_plain.npy"), NULL, &log) == PHYS_OK, "%s", log.error);
    CHECK_MSG(ds.ntraj == 1 && ds.traj[0].act && same(ds.traj[0].act, want, 4) && ds.traj[0].ctrl &&
              (with_tau ? ds.traj[0].qfrc != NULL : ds.traj[0].qfrc == NULL), "plain .npy act (forces %d)", with_tau);
    phys_dataset_free(&ds);
    free(arr);
  }
  CHECK(load1(&ds, m, write_text("in_noact.csv", "t,slide\n0,0\n0.01,0\n"), NULL, &log) == PHYS_OK);
  CHECK(ds.ntraj == 1 && ds.traj[0].act == NULL);
  phys_dataset_free(&ds);
  expect_error(m, write_text("in_act_some.csv", "t,slide,act:servo\n0,0,1\n0.01,0,1\n"),
               NULL, "in_act_some.csv:1: the columns give 1 of the 2 activations", "missing act1 (act:track)");
  expect_error(m, write_text("in_act_nodyn.csv", "t,slide,act:shock\n0,0,1\n0.01,0,1\n"), NULL,
               "column 'act:shock' matches no coordinate", "activations act0..act1 or act:ACTUATOR");
  expect_error(m, write_text("in_act_dup.csv", "t,slide,act0,act1,act:servo\n0,0,1,1,1\n0.01,0,1,1,1\n"), NULL,
               "column 'act:servo' gives act0", "column 3");
  phys_free_model(m);
}

int main(void) {
  double one = 1;
  unsigned char b[8];
  memcpy(b, &one, 8);
  if (b[7] != 0x3f) {
    printf("skipped: the .npy writer of this test assumes a little-endian machine\n");
    return 0;
  }
  snprintf(g_dir, sizeof g_dir, "/tmp/physid_test_dataset_XXXXXX");
  if (!mkdtemp(g_dir)) return 1;
  test_simulate_csv_and_npy();
  test_cube_tosses();
  test_elbow_toss();
  test_positions_only();
  test_bad_input();
  test_input_limits();
  test_recorded_inputs();
  test_recorded_inputs_bad();
  test_wrapped_differences();
  test_act_columns();
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", g_dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g_dir);
  return test_done();
}
