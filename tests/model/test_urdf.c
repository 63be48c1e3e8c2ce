// test_urdf.c - URDF loading: real robots (Atlas, Baxter, the elbow), frames and inertias checked against
// independently built rotations, mesh path resolution, and malformed files.
#include "urdf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mesh_assimp.h"
#include "test.h"

#define ATLAS "/usr/share/doc/dart/data/sdf/atlas/atlas_v3_no_head.urdf"
#define GROUND "/usr/share/doc/dart/data/sdf/atlas/ground.urdf"
#define BAXTER "tests/data/baxter/baxter.urdf"
#define ELBOW "tests/data/elbow/elbow.urdf"
#define DAE_CUBE "tests/data/dae/cube.dae"
#define DAE_LINK "tests/data/dae/cube_link.urdf"

static char dir[256];

//---------------------------------------------------------------------------------------------------------
// independent helpers (no library code)

// whole file as a string with <!-- --> comments blanked out
static char* read_uncommented(const char* path) {
  FILE* f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  rewind(f);
  char* s = malloc((size_t)n + 1);
  if (fread(s, 1, (size_t)n, f) != (size_t)n) n = 0;
  s[n] = 0;
  fclose(f);
  for (char* p = strstr(s, "<!--"); p; p = strstr(p, "<!--")) {
    char* e = strstr(p, "-->");
    char* end = e ? e + 3 : s + n;
    memset(p, ' ', (size_t)(end - p));
    p = end;
  }
  return s;
}

// sum of value="..." of every <mass> element outside comments
static double scan_mass(const char* path, int* count) {
  char* s = read_uncommented(path);
  double sum = 0;
  *count = 0;
  for (char* p = strstr(s, "<mass"); p; p = strstr(p + 1, "<mass")) {
    char* v = strstr(p, "value=\"");
    sum += atof(v + 7);
    (*count)++;
  }
  free(s);
  return sum;
}

// occurrences of tag outside comments
static int scan_count(const char* path, const char* tag) {
  char* s = read_uncommented(path);
  int n = 0;
  for (char* p = strstr(s, tag); p; p = strstr(p + 1, tag)) n++;
  free(s);
  return n;
}

// number of <collision> blocks (outside comments) whose geometry is a <mesh>, and of all <collision>s
static int scan_collision_meshes(const char* path, int* ncollision) {
  char* s = read_uncommented(path);
  int nmesh = 0;
  *ncollision = 0;
  for (char* p = strstr(s, "<collision>"); p; p = strstr(p + 1, "<collision>")) {
    char* e = strstr(p, "</collision>");
    char* m = strstr(p, "<mesh");
    nmesh += m && m < e;
    (*ncollision)++;
  }
  free(s);
  return nmesh;
}

// elementary rotations and the product Rz(y) Ry(p) Rx(r), row-major
static void rot_axis(double R[9], int axis, double a) {
  double c = cos(a), s = sin(a);
  memset(R, 0, 9 * sizeof(double));
  int i = (axis + 1) % 3, j = (axis + 2) % 3;
  R[4 * axis] = 1;
  R[3 * i + i] = c;
  R[3 * j + j] = c;
  R[3 * j + i] = s;
  R[3 * i + j] = -s;
}
static void matmul(double C[9], const double A[9], const double B[9]) {
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) C[3 * i + j] = A[3 * i] * B[j] + A[3 * i + 1] * B[3 + j] + A[3 * i + 2] * B[6 + j];
}
static void rpy_matrix(double R[9], double r, double p, double y) {
  double X[9], Y[9], Z[9], T[9];
  rot_axis(X, 0, r);
  rot_axis(Y, 1, p);
  rot_axis(Z, 2, y);
  matmul(T, Y, X);
  matmul(R, Z, T);
}

// rotation matrix of a unit quaternion (w x y z)
static void quat_matrix(double R[9], const double q[4]) {
  double w = q[0], x = q[1], y = q[2], z = q[3];
  double M[9] = {1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y),
                 2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
                 2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)};
  memcpy(R, M, sizeof(M));
}

// R diag(d) R'
static void rotate_diag(double out[9], const double R[9], const double d[3]) {
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) out[3 * i + j] = R[3 * i] * d[0] * R[3 * j] + R[3 * i + 1] * d[1] * R[3 * j + 1] +
                                                 R[3 * i + 2] * d[2] * R[3 * j + 2];
}

// write text to dir/name (creating subfolders a/b given in name must exist)
static const char* write_text(const char* name, const char* text) {
  static char buf[8][512];
  static int k = 0;
  k = (k + 1) % 8;
  snprintf(buf[k], sizeof(buf[k]), "%s/%s", dir, name);
  FILE* f = fopen(buf[k], "wb");
  fputs(text, f);
  fclose(f);
  return buf[k];
}

// a ROS-like package folder in the temp folder: root, root/urdf, root/meshes
static void make_package(const char* root) {
  static const char* const sub[] = {"", "/urdf", "/meshes"};
  for (int i = 0; i < 3; i++) {
    char p[600];
    snprintf(p, sizeof(p), "%s/%s%s", dir, root, sub[i]);
    mkdir(p, 0700);
  }
}

// id of a named object, by linear search over the model's names (independent of phys_name2id)
static int find(const physModel* m, const int* nameadr, int n, const char* name) {
  for (int i = 0; i < n; i++) {
    if (nameadr[i] >= 0 && !strcmp(m->names + nameadr[i], name)) return i;
  }
  return -1;
}

//---------------------------------------------------------------------------------------------------------
// real robots

// Atlas: 35 links, 27 revolute + 6 fixed joints; with a free root nq 34, nv 33
static void test_atlas(void) {
  physLoadOptions opt = {.urdf_floating = 1};
  physLog log = {0};
  physModel* m = phys_load_urdf(ATLAS, &opt, &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  if (!m) return;
  int nmass, ncol;
  double mass = scan_mass(ATLAS, &nmass);
  int ncolmesh = scan_collision_meshes(ATLAS, &ncol);
  int nlink = scan_count(ATLAS, "<link ");
  CHECK(nlink == 34 && nmass == 31);   // also counted by a python regex scan when the test was written
  CHECK(m->nq == 34);
  CHECK(m->nv == 33);
  CHECK(m->nbody == nlink + 1);
  CHECK(m->njnt == 28);
  CHECK(m->jnt_type[0] == PHYS_JNT_FREE && m->jnt_bodyid[0] == 1);
  // the only warnings: 27 meshes that are not convex collide as their hulls (hull.c), one kind: printed as one
  // line with its count (before: 16 lines and "... and 11 more warnings")
  CHECK_MSG(log.nwarning == 27 && log.nkind == 1 && log.count[0] == 27, "%d warnings, %d kinds", log.nwarning,
            log.nkind);
  CHECK_MSG(strstr(log.warning[0], "atlas_v3_no_head.urdf:") && strstr(log.warning[0], ": mesh 'pelvis' is not convex"),
            "%s", log.warning[0]);
  FILE* out = tmpfile();
  CHECK(phys_log_print_warnings(&log, out) == 1);
  char line[1024] = "";
  rewind(out);
  CHECK(fgets(line, sizeof(line), out) && strstr(line, "warning: ") == line &&
        strstr(line, "it collides as its hull (and 26 more like it)\n") && !fgets(line, sizeof(line), out));
  fclose(out);
  CHECK(m->ngeom == ncol && ncol == ncolmesh && ncol == 29);
  CHECK(m->nmesh == 28);   // r_lleg.stl is a symlink to l_lleg.stl: one shared mesh
  for (int g = 0; g < m->ngeom; g++) CHECK(m->geom_type[g] == PHYS_GEOM_MESH && m->geom_dataid[g] >= 0);
  double total = 0;
  for (int b = 0; b < m->nbody; b++) total += m->body_mass[b];
  CHECK_NEAR(total, mass, 1e-9);
  CHECK_NEAR(mass, 146.554, 1e-9);   // sum of the file's 31 <mass> values outside comments
  for (int b = 1; b < m->nbody; b++) CHECK(m->body_parentid[b] < b);   // parent before child

  // back_bkx: origin 0 0 0.05, axis x, limit [-0.698132, 0.698132], damping 0.1
  int j = find(m, m->jnt_name, m->njnt, "back_bkx");
  CHECK(j > 0);
  if (j > 0) {
    int b = m->jnt_bodyid[j];
    CHECK(!strcmp(m->names + m->body_name[b], "utorso"));
    CHECK(!strcmp(m->names + m->body_name[m->body_parentid[b]], "mtorso"));
    CHECK_NEAR(m->body_pos[3 * b + 2], 0.05, 1e-15);
    CHECK_NEAR(m->jnt_axis[3 * j], 1, 1e-15);
    CHECK(m->jnt_limited[j] == 1);
    CHECK_NEAR(m->jnt_range[2 * j], -0.698132, 1e-15);
    CHECK_NEAR(m->jnt_range[2 * j + 1], 0.698132, 1e-15);
    CHECK_NEAR(m->dof_damping[m->jnt_dofadr[j]], 0.1, 1e-15);
    CHECK_NEAR(m->body_mass[b], 52.007, 1e-12);
  }

  // utorso's full inertia (ixx 1.466 ixy 0.00362 ixz 0.336 iyy 1.51 iyz 0.001 izz 1.3, no rotation) is
  // reproduced from the compiled principal moments and frame to rounding
  int ut = find(m, m->body_name, m->nbody, "utorso");
  CHECK(ut > 0);
  if (ut > 0) {
    double R[9], J[9];
    const double file[9] = {1.466, 0.00362, 0.336, 0.00362, 1.51, 0.001, 0.336, 0.001, 1.3};
    quat_matrix(R, m->body_iquat + 4 * ut);
    rotate_diag(J, R, m->body_inertia + 3 * ut);
    for (int k = 0; k < 9; k++) CHECK_NEAR(J[k], file[k], 1e-13);
    CHECK_NEAR(m->body_ipos[3 * ut], -0.0923, 1e-15);
  }

  // the camera frame: joint rpy="1.57079633 0 -1.30899694" against Rz Ry Rx built here
  int b = find(m, m->body_name, m->nbody, "r_situational_awareness_camera_link");
  CHECK(b > 0);
  if (b > 0) {
    double R[9], Q[9];
    rpy_matrix(R, 1.57079633, 0, -1.30899694);
    quat_matrix(Q, m->body_quat + 4 * b);
    for (int k = 0; k < 9; k++) CHECK_NEAR(Q[k], R[k], 1e-12);
    CHECK_NEAR(m->body_pos[3 * b], 0.216409, 1e-15);
    CHECK(m->body_jntnum[b] == 0);   // fixed joint: body kept, no joint
  }
  phys_free_model(m);

  // welded root: 27 hinges
  memset(&log, 0, sizeof(log));
  opt.urdf_floating = 0;
  m = phys_load_urdf(ATLAS, &opt, &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  if (m) {
    CHECK(m->nq == 27 && m->nv == 27 && m->njnt == 27 && m->nbody == 35);
    phys_free_model(m);
  }
}

// ground.urdf: a root link called "world" is the world body; the ground is welded to it
static void test_ground(void) {
  physLog log = {0};
  physModel* m = phys_load_urdf(GROUND, NULL, &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  if (!m) return;
  CHECK(m->nbody == 2 && m->njnt == 0 && m->nq == 0 && m->ngeom == 1);
  CHECK(!strcmp(m->modelname, "ground_skeleton"));
  CHECK(m->geom_type[0] == PHYS_GEOM_BOX && m->geom_bodyid[0] == 1);
  CHECK_NEAR(m->geom_size[0], 12.5, 1e-15);
  CHECK_NEAR(m->geom_size[1], 0.025, 1e-15);
  CHECK_NEAR(m->geom_size[2], 12.5, 1e-15);
  CHECK_NEAR(m->geom_pos[1], -0.95, 1e-15);
  CHECK(m->geom_contype[0] == 1 && m->geom_conaffinity[0] == 1 && m->geom_condim[0] == 3);
  CHECK(m->geom_friction[0] == 1 && m->geom_friction[1] == 0.005 && m->geom_friction[2] == 0.0001);
  CHECK_NEAR(m->body_mass[1], 1, 0);
  phys_free_model(m);
}

// Baxter: every collision mesh is a missing .DAE: one warning each, geoms dropped; strict_mesh fails
static void test_baxter(void) {
  int ncol, nmass;
  int ndae = scan_collision_meshes(BAXTER, &ncol);
  double mass = scan_mass(BAXTER, &nmass);
  physLog log = {0};
  physModel* m = phys_load_urdf(BAXTER, NULL, &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  if (!m) return;
  CHECK(ndae > 0);
  CHECK_MSG(log.nwarning == ndae, "%d warnings, %d collision meshes", log.nwarning, ndae);
  CHECK(m->ngeom == ncol - ndae);
  CHECK(m->nmesh == 0);
  CHECK(strstr(log.warning[0], "baxter.urdf:") && strstr(log.warning[0], "link 'torso'") &&
        strstr(log.warning[0], "base_link_collision.DAE"));
  double total = 0;
  for (int b = 0; b < m->nbody; b++) total += m->body_mass[b];
  CHECK_REL(total, mass, 1e-12, 1);
  int j = find(m, m->jnt_name, m->njnt, "left_s0");
  CHECK(j >= 0);
  if (j >= 0) CHECK_NEAR(m->dof_damping[m->jnt_dofadr[j]], 0.7, 1e-15);
  phys_free_model(m);

  physLoadOptions strict = {.strict_mesh = 1};
  memset(&log, 0, sizeof(log));
  m = phys_load_urdf(BAXTER, &strict, &log);
  CHECK(m == NULL);
  CHECK(log.status == PHYS_ERR_IO);
  CHECK_MSG(strstr(log.error, "baxter.urdf:") && strstr(log.error, ".DAE"), "%s", log.error);
}

// the elbow of the toss data set with a floating base: free joint + hinge about y
static void test_elbow(void) {
  physLoadOptions opt = {.urdf_floating = 1};
  physLog log = {0};
  physModel* m = phys_load_urdf(ELBOW, &opt, &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  if (!m) return;
  CHECK(log.nwarning == 0);   // drake:* elements are ignored silently
  CHECK(m->nq == 8 && m->nv == 7 && m->nbody == 3 && m->njnt == 2);
  CHECK(m->jnt_type[0] == PHYS_JNT_FREE && m->jnt_type[1] == PHYS_JNT_HINGE);
  CHECK(m->jnt_limited[1] == 0);
  CHECK_NEAR(m->jnt_axis[3], 0, 0);
  CHECK_NEAR(m->jnt_axis[4], 1, 0);
  CHECK_NEAR(m->jnt_axis[5], 0, 0);
  CHECK_NEAR(m->body_ipos[6], 0.035, 1e-15);
  CHECK_NEAR(m->body_ipos[7], 0, 0);
  CHECK_NEAR(m->body_pos[6], -0.035, 1e-15);
  CHECK_NEAR(m->body_pos[7], 0.06, 1e-15);
  CHECK_NEAR(m->body_mass[1], 0.37, 0);
  CHECK_NEAR(m->body_mass[2], 0.37, 0);
  for (int k = 0; k < 3; k++) CHECK_NEAR(m->body_inertia[6 + k], 0.0006167, 1e-15);
  CHECK(m->ngeom == 2);
  CHECK_NEAR(m->geom_size[0], 0.05, 1e-15);
  CHECK_NEAR(m->geom_size[1], 0.025, 1e-15);
  CHECK_NEAR(m->geom_pos[3], 0.035, 1e-15);
  phys_free_model(m);
}

//---------------------------------------------------------------------------------------------------------
// frames, inertias, joint types, tree order and mesh paths on a hand-written robot

static const char* frames_urdf =
    "<?xml version='1.0'?>\n"
    "<robot name='frames' xmlns:xacro='http://www.ros.org/wiki/xacro'>\n"
    "  <material name='red'><color rgba='1 0 0 1'/></material>\n"
    "  <link name='wheel'>\n"
    "    <inertial><mass value='0.5'/><inertia ixx='0.1' iyy='0.1' izz='0.1' ixy='0' ixz='0' iyz='0'/></inertial>\n"
    "  </link>\n"
    "  <link name='slider'>\n"
    "    <inertial><mass value='1'/><inertia ixx='0.1' iyy='0.1' izz='0.1' ixy='0' ixz='0' iyz='0'/></inertial>\n"
    "  </link>\n"
    "  <link name='arm'>\n"
    "    <inertial>\n"
    "      <origin xyz='0.1 0.2 0.3' rpy='0.4 0.5 0.6'/>\n"
    "      <mass value='2'/>\n"
    "      <inertia ixx='1' iyy='2' izz='2.5' ixy='0' ixz='0' iyz='0'/>\n"
    "    </inertial>\n"
    "    <visual><geometry><mesh filename='package://mypkg/meshes/visual_only.dae'/></geometry></visual>\n"
    "    <collision name='shaft'><origin xyz='0 0 0.5' rpy='0 1.5707963267948966 0'/>\n"
    "      <geometry><cylinder radius='0.1' length='1'/></geometry></collision>\n"
    "    <collision><geometry><mesh filename='package://mypkg/meshes/cube.stl' scale='2 2 2'/></geometry>\n"
    "    </collision>\n"
    "    <collision><geometry><mesh filename='package://mypkg/meshes/cube.obj'/></geometry></collision>\n"
    "    <collision><geometry><mesh filename='package://mypkg/meshes/cube.stl' scale='2 2 2'/></geometry>\n"
    "    </collision>\n"
    "    <collision><geometry><sphere radius='0.2'/></geometry></collision>\n"
    "    <xacro:property name='foo' value='1'/>\n"
    "  </link>\n"
    "  <link name='base'/>\n"
    "  <joint name='w' type='continuous'>\n"
    "    <parent link='base'/><child link='wheel'/><axis xyz='0 1 0'/>\n"
    "  </joint>\n"
    "  <joint name='j' type='revolute'>\n"
    "    <origin xyz='1 2 3' rpy='0.3 -0.7 1.1'/>\n"
    "    <axis xyz='0 0 2'/>\n"
    "    <parent link='base'/><child link='arm'/>\n"
    "    <limit lower='-1' upper='2' effort='10' velocity='3'/>\n"
    "    <dynamics damping='0.5' friction='0.1'/>\n"
    "  </joint>\n"
    "  <joint name='s' type='prismatic'>\n"
    "    <parent link='arm'/><child link='slider'/>\n"
    "    <limit lower='0' upper='0.3' effort='10' velocity='3'/>\n"
    "  </joint>\n"
    "  <gazebo reference='arm'><mu1>0.9</mu1></gazebo>\n"
    "  <transmission name='t'><type>transmission_interface/SimpleTransmission</type></transmission>\n"
    "</robot>\n";

// write the unit cube as ASCII STL and OBJ into dir/mypkg/meshes
static void write_cubes(void) {
  static const int q[6][4] = {{0, 3, 2, 1}, {4, 5, 6, 7}, {0, 1, 5, 4}, {2, 3, 7, 6}, {1, 2, 6, 5}, {0, 4, 7, 3}};
  char obj[2048] = "", stl[8192] = "solid c\n";
  // corners in the order of q: (0,0,0) (1,0,0) (1,1,0) (0,1,0) and the same at z = 1
  static const int cv[8][3] = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}, {0, 0, 1}, {1, 0, 1}, {1, 1, 1}, {0, 1, 1}};
  for (int i = 0; i < 8; i++) {
    char line[64];
    snprintf(line, sizeof(line), "v %d %d %d\n", cv[i][0], cv[i][1], cv[i][2]);
    strcat(obj, line);
  }
  for (int f = 0; f < 6; f++) {
    char line[64];
    snprintf(line, sizeof(line), "f %d %d %d %d\n", q[f][0] + 1, q[f][1] + 1, q[f][2] + 1, q[f][3] + 1);
    strcat(obj, line);
    for (int t = 0; t < 2; t++) {
      int idx[3] = {q[f][0], q[f][t + 1], q[f][t + 2]};
      strcat(stl, "facet normal 0 0 0\nouter loop\n");
      for (int k = 0; k < 3; k++) {
        snprintf(line, sizeof(line), "vertex %d %d %d\n", cv[idx[k]][0], cv[idx[k]][1], cv[idx[k]][2]);
        strcat(stl, line);
      }
      strcat(stl, "endloop\nendfacet\n");
    }
  }
  strcat(stl, "endsolid c\n");
  write_text("mypkg/meshes/cube.obj", obj);
  write_text("mypkg/meshes/cube.stl", stl);
}

static void test_frames(void) {
  make_package("mypkg");
  write_cubes();
  const char* path = write_text("mypkg/urdf/frames.urdf", frames_urdf);

  physLog log = {0};
  physModel* m = phys_load_urdf(path, NULL, &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  if (!m) return;

  // depth-first order with children in joint order: base, wheel (joint w comes first), arm, slider
  static const char* order[5] = {"world", "base", "wheel", "arm", "slider"};
  static const int parent[5] = {-1, 0, 1, 1, 3};
  CHECK(m->nbody == 5);
  for (int b = 1; b < 5 && b < m->nbody; b++) {
    CHECK_MSG(!strcmp(m->names + m->body_name[b], order[b]), "body %d is %s", b, m->names + m->body_name[b]);
    CHECK(m->body_parentid[b] == parent[b]);
  }
  int arm = find(m, m->body_name, m->nbody, "arm");
  int jw = find(m, m->jnt_name, m->njnt, "w"), jj = find(m, m->jnt_name, m->njnt, "j");
  int js = find(m, m->jnt_name, m->njnt, "s");
  CHECK(arm == 3 && jw >= 0 && jj >= 0 && js >= 0);
  if (arm != 3 || jw < 0 || jj < 0 || js < 0) return;

  // joints: revolute -> limited hinge, prismatic -> limited slide (default axis x), continuous -> hinge
  CHECK(m->njnt == 3 && m->nq == 3 && m->nv == 3);
  CHECK(m->jnt_type[jj] == PHYS_JNT_HINGE && m->jnt_limited[jj] == 1 && m->jnt_bodyid[jj] == arm);
  CHECK(m->jnt_type[js] == PHYS_JNT_SLIDE && m->jnt_limited[js] == 1);
  CHECK(m->jnt_type[jw] == PHYS_JNT_HINGE && m->jnt_limited[jw] == 0);
  CHECK_NEAR(m->jnt_axis[3 * jj + 2], 1, 1e-15);   // 0 0 2 normalized
  CHECK_NEAR(m->jnt_axis[3 * js], 1, 0);           // slide: default x
  CHECK_NEAR(m->jnt_axis[3 * jw + 1], 1, 0);       // wheel: y
  CHECK_NEAR(m->jnt_range[2 * jj], -1, 0);
  CHECK_NEAR(m->jnt_range[2 * jj + 1], 2, 0);
  CHECK_NEAR(m->jnt_range[2 * js + 1], 0.3, 0);
  CHECK_NEAR(m->dof_damping[m->jnt_dofadr[jj]], 0.5, 0);

  // the joint frame: pos 1 2 3, rotation Rz(1.1) Ry(-0.7) Rx(0.3)
  double R[9], Q[9];
  rpy_matrix(R, 0.3, -0.7, 1.1);
  quat_matrix(Q, m->body_quat + 4 * arm);
  for (int k = 0; k < 9; k++) CHECK_NEAR(Q[k], R[k], 1e-14);
  for (int k = 0; k < 3; k++) CHECK_NEAR(m->body_pos[3 * arm + k], k + 1, 0);

  // inertia: R(iquat) diag(body_inertia) R(iquat)' = R(rpy) diag(1, 2, 2.5) R(rpy)'
  double Ri[9], Jm[9], Jf[9];
  const double d[3] = {1, 2, 2.5};
  rpy_matrix(R, 0.4, 0.5, 0.6);
  rotate_diag(Jf, R, d);
  quat_matrix(Ri, m->body_iquat + 4 * arm);
  rotate_diag(Jm, Ri, m->body_inertia + 3 * arm);
  for (int k = 0; k < 9; k++) CHECK_NEAR(Jm[k], Jf[k], 1e-12);
  CHECK_NEAR(m->body_mass[arm], 2, 0);
  CHECK_NEAR(m->body_ipos[3 * arm], 0.1, 0);
  CHECK_NEAR(m->body_mass[1], 0, 0);   // base: no <inertial>

  // geoms of arm: cylinder, cube.stl x2 (one shared mesh), cube.obj, sphere; two refused paths
  CHECK(m->ngeom == 5);
  CHECK(m->nmesh == 2);
  CHECK(m->geom_type[0] == PHYS_GEOM_CYLINDER);
  CHECK_NEAR(m->geom_size[0], 0.1, 0);
  CHECK_NEAR(m->geom_size[1], 0.5, 0);
  CHECK_NEAR(m->geom_pos[2], 0.5, 0);
  CHECK_NEAR(m->geom_quat[0], sqrt(0.5), 1e-15);
  CHECK_NEAR(m->geom_quat[2], sqrt(0.5), 1e-15);
  CHECK(!strcmp(m->names + m->geom_name[0], "shaft"));
  CHECK(m->geom_type[1] == PHYS_GEOM_MESH && m->geom_type[2] == PHYS_GEOM_MESH && m->geom_type[3] == PHYS_GEOM_MESH);
  CHECK(m->geom_dataid[1] == m->geom_dataid[3] && m->geom_dataid[1] != m->geom_dataid[2]);
  CHECK(m->geom_type[4] == PHYS_GEOM_SPHERE);
  CHECK_NEAR(m->geom_size[12], 0.2, 0);
  int stl = m->geom_dataid[1], obj = m->geom_dataid[2];
  CHECK(m->mesh_vertnum[stl] == 8 && m->mesh_facenum[stl] == 12 && m->mesh_facenum[obj] == 12);
  double vmax = 0;
  for (int v = 0; v < m->mesh_vertnum[stl]; v++) {
    for (int k = 0; k < 3; k++) vmax = fmax(vmax, m->mesh_vert[3 * (m->mesh_vertadr[stl] + v) + k]);
  }
  CHECK_NEAR(vmax, 2, 0);   // scale 2

  // dynamics friction is the joint's frictionloss (as MuJoCo's URDF import), without a warning (paths leaving
  // the folder are errors: test_mesh_paths)
  CHECK_MSG(log.nwarning == 0, "%d warnings", log.nwarning);
  CHECK(m->dof_frictionloss[m->jnt_dofadr[phys_name2id(m, "joint", "j")]] == 0.1);
  phys_free_model(m);

  // with urdf_floating the massless root 'base' gets a free joint: its subtree has mass, so it is accepted
  physLoadOptions fl = {.urdf_floating = 1};
  memset(&log, 0, sizeof(log));
  physSpec* s = phys_parse_urdf(path, &fl, &log);
  CHECK_MSG(s != NULL, "%s", log.error);
  if (s) {
    CHECK(s->njoint == 4 && s->joint[0].type == PHYS_JNT_FREE && s->joint[0].body == 1);
    phys_spec_free(s);
  }
}

//---------------------------------------------------------------------------------------------------------
// mesh paths: the model folder rule (as MJCF), with real files and symbolic links

// a robot with one link whose collision mesh is filename; loads it and returns the status (message in log)
static physStatus load_mesh_robot(const char* filename, int strict, physLog* log) {
  char text[1024];
  snprintf(text, sizeof(text),
           "<robot name='r'>\n<link name='a'>\n<inertial><mass value='1'/>"
           "<inertia ixx='1' iyy='1' izz='1' ixy='0' ixz='0' iyz='0'/></inertial>\n"
           "<collision><geometry><mesh filename='%s'/></geometry></collision>\n</link>\n</robot>\n",
           filename);
  const char* path = write_text("paths/pkg/urdf/r.urdf", text);
  physLoadOptions opt = {.strict_mesh = strict};
  memset(log, 0, sizeof(*log));
  physModel* m = phys_load_urdf(path, &opt, log);
  int nmesh = m ? m->nmesh : -1;
  phys_free_model(m);
  if (log->status == PHYS_OK && nmesh != 1) return PHYS_ERR_MODEL;   // loaded but the mesh was dropped
  return log->status;
}

static void test_mesh_paths(void) {
  char p[600], q[600];
  snprintf(p, sizeof(p), "%s/paths", dir);
  mkdir(p, 0700);
  make_package("paths/pkg");
  const char* tet = "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n";
  write_text("paths/outside.obj", tet);          // exists, outside the package and the URDF's folder
  write_text("paths/pkg/meshes/tet.obj", tet);   // inside the package pkg
  write_text("paths/pkg/urdf/in.obj", tet);      // next to the URDF
  snprintf(p, sizeof(p), "%s/paths/outside.obj", dir);
  snprintf(q, sizeof(q), "%s/paths/pkg/urdf/link.obj", dir);
  CHECK(symlink(p, q) == 0);                      // a link out of the folder
  snprintf(q, sizeof(q), "%s/paths/pkg/urdf/inlink.obj", dir);
  CHECK(symlink("in.obj", q) == 0);               // a link inside it
  snprintf(p, sizeof(p), "%s/paths", dir);
  snprintf(q, sizeof(q), "%s/paths/pkg/urdf/up", dir);
  CHECK(symlink(p, q) == 0);                      // a folder link out of it

  // refused, with or without strict_mesh: an error at the <mesh>'s line naming the link and the path
  char abs_out[600], url_out[620], abs_in[600], url_in[620];
  snprintf(abs_out, sizeof(abs_out), "%s/paths/outside.obj", dir);
  snprintf(url_out, sizeof(url_out), "file://%s", abs_out);
  const char* refused[] = {"package://../outside.obj", "package://pkg/../outside.obj", "../../outside.obj",
                           "../meshes/tet.obj", abs_out, url_out, "link.obj", "up/outside.obj",
                           "package://pkg//etc/hostname.obj", "package:///outside.obj"};
  for (int i = 0; i < (int)(sizeof(refused) / sizeof(refused[0])); i++) {
    for (int strict = 0; strict < 2; strict++) {
      physLog log;
      physStatus st = load_mesh_robot(refused[i], strict, &log);
      CHECK_MSG(st == PHYS_ERR_ARG, "'%s' (strict %d): status %d: %s", refused[i], strict, st, log.error);
      CHECK_MSG(strstr(log.error, "r.urdf:4: link 'a': mesh '") && strstr(log.error, refused[i]) &&
                strstr(log.error, "outside the model folder"), "'%s': %s", refused[i], log.error);
    }
  }

  // accepted: next to the URDF (as written, through a link inside, absolute, file://), in the package
  snprintf(abs_in, sizeof(abs_in), "%s/paths/pkg/urdf/in.obj", dir);
  snprintf(url_in, sizeof(url_in), "file://%s", abs_in);
  const char* ok[] = {"in.obj", "./in.obj", "inlink.obj", abs_in, url_in, "package://pkg/meshes/tet.obj",
                      "package://other/in.obj"};
  for (int i = 0; i < (int)(sizeof(ok) / sizeof(ok[0])); i++) {
    physLog log;
    physStatus st = load_mesh_robot(ok[i], 1, &log);
    CHECK_MSG(st == PHYS_OK, "'%s': status %d: %s", ok[i], st, log.error);
  }

  // a package whose folder has another name (a clone): found by its package.xml; still nothing outside it
  make_package("paths/clone");
  write_text("paths/clone/package.xml", "<package><name>mypkg</name></package>\n");
  write_text("paths/clone/meshes/tet.obj", tet);
  {
    physLog clog = {0};
    const char* robot = write_text("paths/clone/urdf/c.urdf",
        "<robot name='r'>\n<link name='a'>\n<inertial><mass value='1'/>"
        "<inertia ixx='1' iyy='1' izz='1' ixy='0' ixz='0' iyz='0'/></inertial>\n"
        "<collision><geometry><mesh filename='package://mypkg/meshes/tet.obj'/></geometry></collision>\n"
        "<collision><geometry><mesh filename='package://mypkg/../outside.obj'/></geometry></collision>\n"
        "</link>\n</robot>\n");
    physModel* cm = phys_load_urdf(robot, NULL, &clog);
    CHECK_MSG(cm == NULL && clog.nwarning == 0 &&   // line 4 found (no "not found" warning), line 5 refused
              strstr(clog.error, "c.urdf:5: link 'a': mesh 'package://mypkg/../outside.obj' resolves outside"),
              "%d warnings: %s", clog.nwarning, clog.error);
    phys_free_model(cm);
  }

  // a missing file inside the folder stays a warning (geom dropped) without strict_mesh, an I/O error with it
  physLog log;
  CHECK(load_mesh_robot("nothere.obj", 0, &log) == PHYS_ERR_MODEL && log.nwarning == 1 &&
        strstr(log.warning[0], "nothere.obj") && strstr(log.warning[0], "not found"));
  CHECK(load_mesh_robot("nothere.obj", 1, &log) == PHYS_ERR_IO && strstr(log.error, "r.urdf:4: link 'a'"));
}

//---------------------------------------------------------------------------------------------------------
// malformed files

// a robot with one revolute joint; the pieces are substituted by the cases below
static void expect_fail(const char* name, const char* text, physStatus st, const char* w1, const char* w2) {
  const char* path = write_text(name, text);
  physLog log = {0};
  physModel* m = phys_load_urdf(path, NULL, &log);
  CHECK_MSG(m == NULL, "%s loaded", name);
  if (m) phys_free_model(m);
  CHECK_MSG(log.status == st, "%s: status %d, expected %d: %s", name, log.status, st, log.error);
  CHECK_MSG(strstr(log.error, path) != NULL, "%s: message does not name the file: %s", name, log.error);
  CHECK_MSG(!w1 || strstr(log.error, w1), "%s: '%s' lacks '%s'", name, log.error, w1);
  CHECK_MSG(!w2 || strstr(log.error, w2), "%s: '%s' lacks '%s'", name, log.error, w2);
}

#define LINK(n) "<link name='" n "'><inertial><mass value='1'/>" \
                "<inertia ixx='1' iyy='1' izz='1' ixy='0' ixz='0' iyz='0'/></inertial></link>\n"
#define JOINT(n, p, c) "<joint name='" n "' type='continuous'><parent link='" p "'/><child link='" c "'/></joint>\n"

static void test_malformed(void) {
  expect_fail("truncated.urdf", "<robot name='r'>\n" LINK("a") "<link name='b'>\n<inertial>\n", PHYS_ERR_PARSE,
              ":5: malformed XML", "inertial");
  expect_fail("notrobot.urdf", "<mujoco/>\n", PHYS_ERR_PARSE, "<mujoco>", "<robot>");
  expect_fail("nolink.urdf", "<robot name='r'/>\n", PHYS_ERR_MODEL, "no <link>", NULL);
  expect_fail("missing.urdf", "<robot name='r'>\n" LINK("a") JOINT("j", "a", "ghost") "</robot>\n", PHYS_ERR_MODEL,
              ":3: joint 'j'", "child link 'ghost' does not exist");
  expect_fail("tworoots.urdf", "<robot name='r'>\n" LINK("a") LINK("b") "</robot>\n", PHYS_ERR_MODEL,
              ":3: link 'b'", "root");
  expect_fail("cycle.urdf",
              "<robot name='r'>\n" LINK("root") LINK("a") LINK("b") JOINT("j0", "root", "a") JOINT("j1", "b", "b")
              "</robot>\n", PHYS_ERR_MODEL, "joint 'j1'", "its own parent");
  expect_fail("loop.urdf",
              "<robot name='r'>\n" LINK("root") LINK("a") LINK("b") JOINT("j0", "root", "a") JOINT("j1", "a", "b")
              JOINT("j2", "b", "a") "</robot>\n", PHYS_ERR_MODEL, "two parents", "'j0' and 'j2'");
  expect_fail("loop2.urdf",
              "<robot name='r'>\n" LINK("root") LINK("a") LINK("b") JOINT("j1", "a", "b") JOINT("j2", "b", "a")
              "</robot>\n", PHYS_ERR_MODEL, "loop", NULL);
  expect_fail("dup.urdf", "<robot name='r'>\n" LINK("a") LINK("a") "</robot>\n", PHYS_ERR_MODEL, ":3: link 'a'",
              "duplicate link name: the link at line 2 has it too");
  expect_fail("dupjoint.urdf",
              "<robot name='r'>\n" LINK("a") LINK("b") LINK("c") JOINT("j", "a", "b") JOINT("j", "b", "c") "</robot>\n",
              PHYS_ERR_MODEL, ":6: joint 'j'", "duplicate joint name: the joint at line 5 has it too");
  // a free root with mass but no rotational inertia (before: loaded, then every step failed)
  expect_fail("pointroot.urdf",
              "<robot name='r'>\n<link name='a'><inertial><mass value='1'/>"
              "<inertia ixx='0' iyy='0' izz='0' ixy='0' ixz='0' iyz='0'/></inertial></link>\n"
              "<link name='world'/>\n<joint name='f' type='floating'><parent link='world'/><child link='a'/></joint>\n</robot>\n",
              PHYS_ERR_MODEL, ":2: link 'a'", "principal moment of inertia (0 0 0)");
  expect_fail("negmass.urdf",
              "<robot name='r'>\n<link name='a'><inertial>\n<mass value='-2'/>"
              "<inertia ixx='1' iyy='1' izz='1' ixy='0' ixz='0' iyz='0'/></inertial></link>\n</robot>\n",
              PHYS_ERR_VALUE, ":3: link 'a'", "negative mass");
  expect_fail("nan.urdf",
              "<robot name='r'>\n" LINK("a") LINK("b")
              "<joint name='j' type='continuous'><parent link='a'/><child link='b'/>\n"
              "<origin xyz='0 NaN 0'/></joint>\n</robot>\n",
              PHYS_ERR_VALUE, ":5: joint 'j'", "not finite");
  expect_fail("short.urdf",
              "<robot name='r'>\n" LINK("a") LINK("b")
              "<joint name='j' type='continuous'><parent link='a'/><child link='b'/>\n"
              "<origin rpy='0 1'/></joint>\n</robot>\n",
              PHYS_ERR_SIZE, ":5: joint 'j'", "expected 3 numbers");
  expect_fail("planar.urdf",
              "<robot name='r'>\n" LINK("a") LINK("b")
              "<joint name='p' type='planar'><parent link='a'/><child link='b'/></joint>\n</robot>\n",
              PHYS_ERR_MODEL, ":4: joint 'p'", "not supported");
  expect_fail("nolimit.urdf",
              "<robot name='r'>\n" LINK("a") LINK("b")
              "<joint name='h' type='revolute'><parent link='a'/><child link='b'/></joint>\n</robot>\n",
              PHYS_ERR_MODEL, "joint 'h'", "<limit>");
  expect_fail("badlimit.urdf",
              "<robot name='r'>\n" LINK("a") LINK("b")
              "<joint name='h' type='prismatic'><parent link='a'/><child link='b'/>\n"
              "<limit lower='1' upper='-1'/></joint>\n</robot>\n",
              PHYS_ERR_VALUE, ":5: joint 'h'", "lower");
  expect_fail("zeroaxis.urdf",
              "<robot name='r'>\n" LINK("a") LINK("b")
              "<joint name='h' type='continuous'><parent link='a'/><child link='b'/>\n"
              "<axis xyz='0 0 0'/></joint>\n</robot>\n",
              PHYS_ERR_VALUE, ":5: joint 'h'", "zero length");
  expect_fail("massless.urdf",
              "<robot name='r'>\n" LINK("a") "<link name='tip'/>\n" JOINT("j", "a", "tip") "</robot>\n",
              PHYS_ERR_MODEL, ":3: link 'tip'", "its mass 0 or a principal moment");
  expect_fail("badbox.urdf",
              "<robot name='r'>\n<link name='a'>\n<collision><geometry><box size='1 -1 1'/></geometry></collision>\n"
              "</link>\n</robot>\n",
              PHYS_ERR_VALUE, ":3: link 'a'", "positive");
  expect_fail("badmesh.urdf",
              "<robot name='r'>\n<link name='a'>\n<collision><geometry><mesh filename='bad.obj'/></geometry>"
              "</collision>\n</link>\n</robot>\n",
              PHYS_ERR_VALUE, ":3: link 'a': mesh", "bad.obj:2:");
  expect_fail("notype.urdf",
              "<robot name='r'>\n" LINK("a") LINK("b")
              "<joint name='j'><parent link='a'/><child link='b'/></joint>\n</robot>\n",
              PHYS_ERR_PARSE, ":4: joint 'j'", "type");
  expect_fail("noinertia.urdf", "<robot name='r'>\n<link name='a'>\n<inertial><mass value='1'/></inertial>\n"
              "</link>\n</robot>\n", PHYS_ERR_PARSE, ":3: link 'a'", "<inertia>");

  // a DTD could declare entities: refused, as in MJCF (before: parsed, the entity left unexpanded)
  expect_fail("xxe.urdf",
              "<?xml version='1.0'?>\n<!DOCTYPE robot [<!ENTITY e SYSTEM 'file:///etc/passwd'>]>\n"
              "<robot name='&e;'>\n" LINK("a") "</robot>\n",
              PHYS_ERR_PARSE, "xxe.urdf:2: <!DOCTYPE> declarations are not allowed", NULL);
  physLog log = {0};
  CHECK(phys_parse_urdf("/nonexistent/robot.urdf", NULL, &log) == NULL);
}

// libxml2 prints nothing: its errors and warnings reach the log with file:line (before, a folder named
// x.urdf printed "I/O error : Is a directory" to stderr)
static void test_quiet_libxml(void) {
  char errfile[600], sub[600];
  snprintf(errfile, sizeof(errfile), "%s/stderr.txt", dir);
  snprintf(sub, sizeof(sub), "%s/folder.urdf", dir);
  mkdir(sub, 0700);
  fflush(stderr);
  int saved = dup(2);
  FILE* ef = fopen(errfile, "w");
  dup2(fileno(ef), 2);
  fclose(ef);

  physLog log = {0};
  CHECK(phys_load_urdf(sub, NULL, &log) == NULL && log.status == PHYS_ERR_IO && strstr(log.error, "not a regular file"));
  memset(&log, 0, sizeof(log));
  CHECK(phys_load(sub, NULL, &log) == NULL && log.status == PHYS_ERR_IO);
  const char* enc = write_text("enc.urdf", "<?xml version='1.0' encoding='bogus'?>\n<robot name='r'>" LINK("a") "</robot>\n");
  memset(&log, 0, sizeof(log));
  CHECK(phys_load_urdf(enc, NULL, &log) == NULL && strstr(log.error, "enc.urdf:1: malformed XML"));
  // a libxml2 warning is a physid warning with file and line; the model still loads
  const char* ns = write_text("ns.urdf", "<?xml version='1.1'?>\n<robot name='r'>\n" LINK("a") "</robot>\n");
  memset(&log, 0, sizeof(log));
  physModel* m = phys_load_urdf(ns, NULL, &log);
  CHECK_MSG(m != NULL && log.nwarning == 1 && strstr(log.warning[0], "ns.urdf:1: XML warning: Unsupported version '1.1'"),
            "%d warnings: %s", log.nwarning, log.warning[0]);
  phys_free_model(m);
  // found by its root element: the same warning once (the sniffing read keeps its warnings to itself)
  const char* ns2 = write_text("ns_robot", "<?xml version='1.1'?>\n<robot name='r'>\n" LINK("a") "</robot>\n");
  memset(&log, 0, sizeof(log));
  m = phys_load(ns2, NULL, &log);
  CHECK_MSG(m != NULL && log.nwarning == 1, "%d warnings", log.nwarning);
  phys_free_model(m);
  memset(&log, 0, sizeof(log));
  CHECK(phys_load(write_text("junk_robot", "<robot\n<link"), NULL, &log) == NULL &&
        strstr(log.error, "junk_robot:2: malformed XML") && strstr(log.error, "not an XML model file"));

  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  struct stat st;
  CHECK_MSG(stat(errfile, &st) == 0 && st.st_size == 0, "libxml2 printed to stderr (%s)", errfile);
}


// a robot for the geom names and motors: a base, link a (three collisions, one named, one dropped mesh), link
// a_1 (its generated name clashes with a's second collision), link b (collision named 'b'), fixed link c
static const char* names_urdf =
    "<robot name='n'>\n"                                                                         // 1
    "  <link name='base'><inertial><mass value='1'/><inertia ixx='1' iyy='1' izz='1' ixy='0' ixz='0' iyz='0'/>"
    "</inertial><collision><geometry><box size='.1 .1 .1'/></geometry></collision></link>\n"      // 2
    "  <link name='a'><inertial><mass value='1'/><inertia ixx='1' iyy='1' izz='1' ixy='0' ixz='0' iyz='0'/></inertial>\n"  // 3
    "    <collision><geometry><mesh filename='missing.stl'/></geometry></collision>\n"          // 4
    "    <collision><geometry><box size='.1 .1 .1'/></geometry></collision>\n"                   // 5
    "    <collision name='tip'><geometry><sphere radius='.1'/></geometry></collision>\n"         // 6
    "    <collision><geometry><sphere radius='.2'/></geometry></collision></link>\n"             // 7
    "  <link name='a_1'><inertial><mass value='1'/><inertia ixx='1' iyy='1' izz='1' ixy='0' ixz='0' iyz='0'/>"
    "</inertial><collision><geometry><box size='.1 .1 .1'/></geometry></collision></link>\n"      // 8
    "  <link name='b'><inertial><mass value='1'/><inertia ixx='1' iyy='1' izz='1' ixy='0' ixz='0' iyz='0'/></inertial>\n" // 9
    "    <collision name='b'><geometry><box size='.1 .1 .1'/></geometry></collision></link>\n"   // 10
    "  <link name='c'><collision><geometry><box size='.1 .1 .1'/></geometry></collision></link>\n" // 11
    "  <joint name='j1' type='revolute'><parent link='base'/><child link='a'/><axis xyz='0 0 1'/>"
    "<limit lower='-1' upper='1' effort='5' velocity='1'/></joint>\n"                             // 12
    "  <joint name='j2' type='continuous'><parent link='a'/><child link='b'/><axis xyz='0 1 0'/></joint>\n"  // 13
    "  <joint name='j3' type='fixed'><parent link='b'/><child link='c'/></joint>\n"              // 14
    "  <joint name='j4' type='prismatic'><parent link='base'/><child link='a_1'/>"
    "<limit lower='0' upper='1' effort='-40' velocity='1'/></joint>\n"                            // 15
    "  <joint name='j5' type='continuous'><parent link='b'/><child link='d'/><limit effort='0' velocity='1'/></joint>\n" // 16
    "  <link name='d'><inertial><mass value='1'/><inertia ixx='1' iyy='1' izz='1' ixy='0' ixz='0' iyz='0'/></inertial></link>\n"
    "</robot>\n";

// URDF collision geoms are named: the <collision name>, else LINK for a link's first collision and LINK_K for
// its (K+1)-th, counting every collision (the dropped mesh too); a name taken stays off with a warning naming
// both lines (before: only <collision name> was used, so friction:LINK did not exist)
static void test_geom_names(void) {
  physLog log = {0};
  physModel* m = phys_load_urdf(write_text("names.urdf", names_urdf), NULL, &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  if (!m) return;
  // geoms in link order base, a (3 kept), b, c (welded below b), a_1
  CHECK(m->ngeom == 7);
  const char* want[7] = {"base", "a_1", "tip", "a_3", "b", "c", ""};
  for (int g = 0; g < m->ngeom && g < 7; g++) {
    CHECK_MSG(!strcmp(phys_id2name(m, "geom", g), want[g]), "geom %d: '%s', want '%s'", g, phys_id2name(m, "geom", g), want[g]);
  }
  CHECK(phys_name2id(m, "geom", "a") < 0);   // the dropped mesh was a's first collision
  int found = 0;
  for (int i = 0; i < PHYS_MAXWARN && i < log.nwarning; i++)
    found |= strstr(log.warning[i], "names.urdf:8: collision: geom name 'a_1' (generated from its link) is taken by "
                                    "the collision at line 5") != NULL;
  CHECK_MSG(found, "%d warnings, first: %s", log.nwarning, log.warning[0]);
  phys_free_model(m);
}

// --actuate: a motor per revolute, continuous and prismatic joint, in joint order, named after it, gear 1,
// ctrlrange [-|effort|, |effort|]; no <limit> or effort 0: not control-limited
static void test_actuate(void) {
  physLog log = {0};
  physLoadOptions opt = {.urdf_actuate = 1};
  const char* file = write_text("names.urdf", names_urdf);
  physModel* m = phys_load(file, &opt, &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  if (!m) return;
  CHECK(m->nu == 4 && m->njnt == 4);
  const char* name[4] = {"j1", "j2", "j5", "j4"};
  const int limited[4] = {1, 0, 0, 1};
  const double range[4] = {5, 0, 0, 40};
  for (int i = 0; i < m->nu && i < 4; i++) {
    CHECK_MSG(!strcmp(phys_id2name(m, "actuator", i), name[i]), "actuator %d is '%s'", i, phys_id2name(m, "actuator", i));
    CHECK(m->actuator_trntype[i] == PHYS_TRN_JOINT && m->actuator_trnid[i] == phys_name2id(m, "joint", name[i]));
    CHECK(m->actuator_gear[6 * i] == 1 && m->actuator_ctrllimited[i] == limited[i]);
    CHECK(m->actuator_ctrlrange[2 * i] == -range[i] && m->actuator_ctrlrange[2 * i + 1] == range[i]);
  }
  phys_free_model(m);
  // without the option: no motors
  m = phys_load(file, NULL, &log);
  CHECK(m && m->nu == 0);
  phys_free_model(m);
}

// copy the file at src to dir/name (binary); 0 on failure
static int copy_file(const char* src, const char* name) {
  char dst[600];
  snprintf(dst, sizeof(dst), "%s/%s", dir, name);
  FILE* in = fopen(src, "rb");
  FILE* out = fopen(dst, "wb");
  int ok = in && out;
  char buf[4096];
  size_t n;
  while (ok && (n = fread(buf, 1, sizeof(buf), in)) > 0) ok = fwrite(buf, 1, n, out) == n;
  if (in) fclose(in);
  if (out) fclose(out);
  return ok;
}

// a Collada collision mesh (tests/data/dae/cube.dae: a 10 cm cube in centimetres, node at (10, 0, 20) cm, Z_UP)
// loads as a mesh geom of 8 vertices; the link's mass and inertia are the URDF's, not the mesh's
static void test_dae(void) {
  physLog log = {0};
  physModel* m = phys_load_urdf(DAE_LINK, NULL, &log);
  if (!phys_mesh_scene_supported()) {   // a build without libassimp: the geom is dropped with a warning
    CHECK_MSG(m && log.nwarning == 1 && strstr(log.warning[0], "is DAE and this build has no libassimp"), "%s",
              log.nwarning ? log.warning[0] : log.error);
    phys_free_model(m);
    return;
  }
  CHECK_MSG(m != NULL && log.nwarning == 0, "%s", log.nwarning ? log.warning[0] : log.error);
  if (!m) return;
  CHECK(m->nmesh == 1 && m->ngeom == 1);
  if (m->nmesh == 1 && m->ngeom == 1) {
    CHECK(m->mesh_vertnum[0] == 8 && m->geom_type[0] == PHYS_GEOM_MESH && m->geom_dataid[0] == 0);
    // the mesh's extent: 0.1 m on every axis (unit 0.01 applied), centred at the node's (0.1, 0, 0.2) m
    double lo[3] = {1e9, 1e9, 1e9}, hi[3] = {-1e9, -1e9, -1e9};
    for (int v = 0; v < m->mesh_vertnum[0]; v++) {
      const double* x = m->mesh_vert + 3 * (m->mesh_vertadr[0] + v);
      for (int k = 0; k < 3; k++) lo[k] = x[k] < lo[k] ? x[k] : lo[k], hi[k] = x[k] > hi[k] ? x[k] : hi[k];
    }
    for (int k = 0; k < 3; k++) CHECK_NEAR(hi[k] - lo[k], 0.1, 1e-7);   // float coordinates in libassimp
    const double centre[3] = {0.1, 0, 0.2};
    for (int k = 0; k < 3; k++) CHECK_NEAR(m->geom_pos[k] + 0.5 * (lo[k] + hi[k]), centre[k], 1e-7);
  }
  int b = find(m, m->body_name, m->nbody, "box");
  CHECK(b > 0);
  if (b > 0) {
    CHECK(m->body_mass[b] == 1);
    for (int k = 0; k < 3; k++) CHECK_NEAR(m->body_inertia[3 * b + k], 0.001667, 1e-15);
  }
  phys_free_model(m);
}

// Collada paths follow the model-folder rule too: a .dae outside the URDF's folder or package is refused
// (an error, with or without strict_mesh), one inside it loads
static void test_dae_paths(void) {
  if (!phys_mesh_scene_supported()) return;
  CHECK(copy_file(DAE_CUBE, "paths/outside.dae") && copy_file(DAE_CUBE, "paths/pkg/meshes/cube.dae"));
  const char* refused[] = {"package://../outside.dae", "package://pkg/../outside.dae", "../../outside.dae"};
  for (int i = 0; i < 3; i++) {
    for (int strict = 0; strict < 2; strict++) {
      physLog log;
      physStatus st = load_mesh_robot(refused[i], strict, &log);
      CHECK_MSG(st == PHYS_ERR_ARG && strstr(log.error, "r.urdf:4: link 'a': mesh '") &&
                strstr(log.error, refused[i]) && strstr(log.error, "outside the model folder"),
                "'%s' (strict %d): status %d: %s", refused[i], strict, st, log.error);
    }
  }
  physLog log;
  physStatus st = load_mesh_robot("package://pkg/meshes/cube.dae", 1, &log);
  CHECK_MSG(st == PHYS_OK, "status %d: %s", st, log.error);
  // a file that is not Collada: an error naming the URDF's line and the mesh file
  write_text("paths/pkg/meshes/bad.dae", "<COLLADA><library_geometries><geometry><mesh><source>");
  st = load_mesh_robot("package://pkg/meshes/bad.dae", 0, &log);
  CHECK_MSG(st == PHYS_ERR_PARSE && strstr(log.error, "r.urdf:4: link 'a': mesh: ") &&
            strstr(log.error, "bad.dae: not a readable Collada file"), "status %d: %s", st, log.error);
}

// Baxter in its ROS package layout with stand-in collision meshes (the repository has no Baxter DAE files:
// the torso's and the pedestal's collision meshes are tests/data/dae/cube.dae under their URDF names): no
// warning, both meshes loaded; the left arm collides through the URDF's own cylinders, and its masses and
// inertias are the URDF's
static void test_baxter_meshes(void) {
  if (!phys_mesh_scene_supported()) return;
  const char* folders[] = {"bx", "bx/baxter_description", "bx/baxter_description/urdf",
                           "bx/baxter_description/meshes", "bx/baxter_description/meshes/torso",
                           "bx/baxter_description/meshes/base"};
  for (int i = 0; i < 6; i++) {
    char p[600];
    snprintf(p, sizeof(p), "%s/%s", dir, folders[i]);
    mkdir(p, 0700);
  }
  CHECK(copy_file(BAXTER, "bx/baxter_description/urdf/baxter.urdf"));
  CHECK(copy_file(DAE_CUBE, "bx/baxter_description/meshes/torso/base_link_collision.DAE"));
  CHECK(copy_file(DAE_CUBE, "bx/baxter_description/meshes/base/pedestal_link_collision.DAE"));
  char path[600];
  snprintf(path, sizeof(path), "%s/bx/baxter_description/urdf/baxter.urdf", dir);
  int ncol;
  scan_collision_meshes(BAXTER, &ncol);
  physLog log = {0};
  physModel* m = phys_load_urdf(path, NULL, &log);
  CHECK_MSG(m != NULL && log.nwarning == 0, "%s", log.nwarning ? log.warning[0] : log.error);
  if (!m) return;
  CHECK(m->ngeom == ncol && m->nmesh == 2);
  for (int i = 0; i < m->nmesh; i++) CHECK(m->mesh_vertnum[i] == 8);
  CHECK(find(m, m->geom_name, m->ngeom, "torso") >= 0 && find(m, m->geom_name, m->ngeom, "pedestal") >= 0);

  // the left arm: cylinder radius and half length, mass, and the inertia's trace (invariant under the
  // principal axes) as written in the URDF
  static const struct { const char* link; double radius, halflen, mass, trace; } arm[] = {
      {"left_upper_shoulder", 0.06, 0.1361, 5.70044, 0.04709102262 + 0.03766976455 + 0.03595988478},
      {"left_hand", 0.04, 0.0232, 0.19125, -1},
  };
  for (int i = 0; i < 2; i++) {
    int g = find(m, m->geom_name, m->ngeom, arm[i].link), b = find(m, m->body_name, m->nbody, arm[i].link);
    CHECK_MSG(g >= 0 && b > 0, "%s", arm[i].link);
    if (g < 0 || b <= 0) continue;
    CHECK(m->geom_type[g] == PHYS_GEOM_CYLINDER && m->geom_bodyid[g] == b);
    CHECK_NEAR(m->geom_size[3 * g], arm[i].radius, 1e-15);
    CHECK_NEAR(m->geom_size[3 * g + 1], arm[i].halflen, 1e-15);
    CHECK(m->body_mass[b] == arm[i].mass);
    if (arm[i].trace > 0) {
      const double* I = m->body_inertia + 3 * b;
      CHECK_NEAR(I[0] + I[1] + I[2], arm[i].trace, 1e-14);
    }
  }
  phys_free_model(m);
}

int main(void) {
  snprintf(dir, sizeof(dir), "/tmp/physid_test_urdf_XXXXXX");
  if (!mkdtemp(dir)) return 1;
  write_text("bad.obj", "v 0 0 0\nf 1 2 3\n");
  test_atlas();
  test_ground();
  test_baxter();
  test_elbow();
  test_frames();
  test_mesh_paths();
  test_dae();
  test_dae_paths();
  test_baxter_meshes();
  test_malformed();
  test_quiet_libxml();
  test_geom_names();
  test_actuate();
  char cmd[300];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
  return test_done();
}
