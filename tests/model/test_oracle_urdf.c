// test_oracle_urdf.c - URDF frames against MuJoCo 2.2.2's own URDF importer.
//
// MuJoCo reads URDF with fusestatic: the root link and links on fixed joints are merged into their
// parents, so bodies differ; joints do not. At the reference configuration every joint's world anchor
// and axis must agree, and the total mass must agree up to the root link's mass (fused into MuJoCo's
// world). This checks the rpy composition along whole chains (Atlas's shoulders are rotated).
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "physid.h"
#include "test.h"

// inertia tensor R(q) diag(I) R(q)' in the body frame, from a principal frame quaternion (w x y z)
static void tensor(double J[9], const double q[4], const double I[3]) {
  double w = q[0], x = q[1], y = q[2], z = q[3];
  double R[9] = {1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y),
                 2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
                 2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)};
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) J[3 * i + j] = R[3 * i] * I[0] * R[3 * j] + R[3 * i + 1] * I[1] * R[3 * j + 1] +
                                               R[3 * i + 2] * I[2] * R[3 * j + 2];
}

// the URDF file loaded by MuJoCo and by physid, positions computed at the reference configuration; 0 (and
// nothing to free) if either fails
static int load_both(const char* file, mjModel** mm, mjData** md, physModel** m, physData** d) {
  char err[1000] = "";
  *mm = mj_loadXML(file, NULL, err, sizeof(err));
  CHECK_MSG(*mm != NULL, "MuJoCo: %s", err);
  physLog log = {0};
  *m = phys_load_urdf(file, NULL, &log);
  CHECK_MSG(*m != NULL, "%s", log.error);
  if (!*mm || !*m) {
    if (*mm) mj_deleteModel(*mm);
    phys_free_model(*m);
    return 0;
  }
  *md = mj_makeData(*mm);
  mj_forward(*mm, *md);
  *d = phys_make_data(*m);
  phys_kinematics(*m, *d);
  return 1;
}

// compare joint anchors/axes by name and the total mass; root_mass: mass of the root link
// min_rotated: joints whose world axis must be oblique (so that the test depends on the rotations)
static void compare(const char* file, double root_mass, int njnt_expected, int min_rotated) {
  mjModel* mm;
  mjData* md;
  physModel* m;
  physData* d;
  if (!load_both(file, &mm, &md, &m, &d)) return;

  CHECK(m->njnt == njnt_expected && mm->njnt == njnt_expected);
  CHECK(m->nv == mm->nv);
  int matched = 0, nrotated = 0;
  double worst = 0;
  for (int j = 0; j < m->njnt; j++) {
    const char* name = m->names + m->jnt_name[j];
    int k = mj_name2id(mm, mjOBJ_JOINT, name);
    CHECK_MSG(k >= 0, "%s: joint %s not in MuJoCo's model", file, name);
    if (k < 0) continue;
    matched++;
    CHECK(mm->jnt_type[k] == (m->jnt_type[j] == PHYS_JNT_HINGE ? mjJNT_HINGE : mjJNT_SLIDE));
    CHECK(mm->jnt_limited[k] == m->jnt_limited[j]);
    for (int c = 0; c < 3; c++) {
      worst = fmax(worst, fabs(d->xanchor[3 * j + c] - md->xanchor[3 * k + c]));
      worst = fmax(worst, fabs(d->xaxis[3 * j + c] - md->xaxis[3 * k + c]));
    }
    double amax = fmax(fabs(d->xaxis[3 * j]), fmax(fabs(d->xaxis[3 * j + 1]), fabs(d->xaxis[3 * j + 2])));
    nrotated += amax < 0.999;   // world axis not along x, y or z: the rpy chain matters
    if (m->jnt_limited[j]) {
      CHECK_NEAR(m->jnt_range[2 * j], mm->jnt_range[2 * k], 1e-12);
      CHECK_NEAR(m->jnt_range[2 * j + 1], mm->jnt_range[2 * k + 1], 1e-12);
    }
    CHECK_NEAR(m->dof_damping[m->jnt_dofadr[j]], mm->dof_damping[mm->jnt_dofadr[k]], 1e-12);
  }
  CHECK(matched == m->njnt);
  CHECK_MSG(nrotated >= min_rotated, "%s: %d oblique axes", file, nrotated);
  // MuJoCo stores URDF numbers as double; both parse the same text: agreement to rounding
  CHECK_MSG(worst < 1e-12, "%s: worst anchor/axis difference %g", file, worst);
  printf("%s: %d joints (%d oblique), worst anchor/axis difference %.3g\n", file, matched, nrotated, worst);

  // inertial frames of moving bodies that MuJoCo did not fuse anything into (no fixed children)
  int ninertia = 0;
  for (int b = 1; b < m->nbody; b++) {
    int fused = 0;
    for (int c = 1; c < m->nbody; c++) fused |= m->body_parentid[c] == b && m->body_jntnum[c] == 0;
    int k = mj_name2id(mm, mjOBJ_BODY, m->names + m->body_name[b]);
    if (fused || m->body_jntnum[b] == 0 || k < 0) continue;
    ninertia++;
    CHECK_NEAR(m->body_mass[b], mm->body_mass[k], 1e-12);
    double J1[9], J2[9];
    tensor(J1, m->body_iquat + 4 * b, m->body_inertia + 3 * b);
    tensor(J2, mm->body_iquat + 4 * k, mm->body_inertia + 3 * k);
    for (int c = 0; c < 3; c++) CHECK_NEAR(m->body_ipos[3 * b + c], mm->body_ipos[3 * k + c], 1e-12);
    // MuJoCo 2.2.2's iterative eigensolver returns the tensor to ~5e-9 of its trace (measured), while
    // physid reproduces the file's numbers to rounding (checked in test_urdf): compare at MuJoCo's precision
    for (int c = 0; c < 9; c++) CHECK_NEAR(J1[c], J2[c], 1e-7 * (J2[0] + J2[4] + J2[8]));
  }
  CHECK(ninertia > 0);

  double mass = 0, mjmass = 0;
  for (int b = 0; b < m->nbody; b++) mass += m->body_mass[b];
  for (int b = 0; b < mm->nbody; b++) mjmass += mm->body_mass[b];
  CHECK_NEAR(mass - root_mass, mjmass, 1e-9);

  phys_free_data(d);
  phys_free_model(m);
  mj_deleteData(md);
  mj_deleteModel(mm);
}

#define LINK(n) "<link name='" n "'><inertial><origin xyz='0.1 0 0.05' rpy='0.2 0.1 0'/><mass value='1'/>" \
                "<inertia ixx='0.1' iyy='0.2' izz='0.25' ixy='0.01' ixz='0' iyz='0'/></inertial></link>\n"

// a chain whose every joint origin is rotated: base -> a (revolute) -> b (continuous) -> c (prismatic)
static const char* chain =
    "<robot name='chain'>\n" LINK("base") LINK("a") LINK("b") LINK("c")
    "<joint name='ja' type='revolute'><parent link='base'/><child link='a'/>\n"
    "  <origin xyz='0.1 0.2 0.3' rpy='0.5 -0.4 1.2'/><axis xyz='0 1 1'/><limit lower='-1' upper='1'/></joint>\n"
    "<joint name='jb' type='continuous'><parent link='a'/><child link='b'/>\n"
    "  <origin xyz='0.4 -0.1 0.2' rpy='-1.1 0.7 0.3'/><axis xyz='1 0 0'/></joint>\n"
    "<joint name='jc' type='prismatic'><parent link='b'/><child link='c'/>\n"
    "  <origin xyz='0 0 0.5' rpy='2.5 1.3 -2.9'/><axis xyz='0.3 -0.2 0.9'/><limit lower='0' upper='0.4'/></joint>\n"
    "</robot>\n";

// collision geoms against MuJoCo 2.2.2's URDF import: the same geoms (matched one to one by type, size and world
// pose, after MuJoCo fuses the root link into the world and fixed links into their parents), and MuJoCo 2.2.2
// leaves every one unnamed, <collision name> included: physid's names (the <collision name>, else LINK, LINK_1,
// ...) are its own rule, checked here against the file's link names
static const char* names_robot =
    "<robot name='n'>\n"
    "  <link name='base'><inertial><mass value='1'/><inertia ixx='1' iyy='1' izz='1' ixy='0' ixz='0' iyz='0'/>"
    "</inertial><collision><geometry><box size='.1 .2 .3'/></geometry></collision></link>\n"
    "  <link name='arm'><inertial><mass value='1'/><inertia ixx='1' iyy='1' izz='1' ixy='0' ixz='0' iyz='0'/></inertial>\n"
    "    <collision><origin xyz='0 0 .1'/><geometry><box size='.1 .1 .1'/></geometry></collision>\n"
    "    <collision name='tip'><origin xyz='0 0 .3'/><geometry><sphere radius='.1'/></geometry></collision>\n"
    "    <collision><origin xyz='0 .1 .2' rpy='.3 0 0'/><geometry><cylinder radius='.05' length='.2'/></geometry></collision></link>\n"
    "  <link name='hand'><collision><origin xyz='.1 0 0'/><geometry><sphere radius='.04'/></geometry></collision></link>\n"
    "  <joint name='j1' type='revolute'><origin xyz='0 0 .5'/><parent link='base'/><child link='arm'/><axis xyz='0 1 0'/>"
    "<limit lower='-1' upper='1' effort='5' velocity='1'/></joint>\n"
    "  <joint name='j2' type='fixed'><origin xyz='0 0 .4'/><parent link='arm'/><child link='hand'/></joint>\n"
    "</robot>\n";

static void test_geom_names(const char* path) {
  mjModel* mm;
  mjData* md;
  physModel* m;
  physData* d;
  if (!load_both(path, &mm, &md, &m, &d)) return;
  CHECK(m->ngeom == 5 && mm->ngeom == 5);
  const char* want[5] = {"base", "arm", "tip", "arm_2", "hand"};
  static const int mjtype[PHYS_NGEOMTYPE] = {mjGEOM_PLANE, mjGEOM_SPHERE, mjGEOM_CAPSULE, mjGEOM_ELLIPSOID,
                                             mjGEOM_CYLINDER, mjGEOM_BOX, mjGEOM_MESH};
  int matched = 0;
  for (int k = 0; k < mm->ngeom; k++) CHECK_MSG(mj_id2name(mm, mjOBJ_GEOM, k) == NULL, "MuJoCo named geom %d", k);
  for (int g = 0; g < m->ngeom && g < 5; g++) {
    CHECK_MSG(!strcmp(phys_id2name(m, "geom", g), want[g]), "geom %d '%s'", g, phys_id2name(m, "geom", g));
    for (int k = 0; k < mm->ngeom; k++) {
      double dist = 0;
      for (int c = 0; c < 3; c++) dist = fmax(dist, fabs(d->geom_xpos[3 * g + c] - md->geom_xpos[3 * k + c]));
      for (int c = 0; c < 9; c++) dist = fmax(dist, fabs(d->geom_xmat[9 * g + c] - md->geom_xmat[9 * k + c]));
      for (int c = 0; c < 3; c++) dist = fmax(dist, fabs(m->geom_size[3 * g + c] - mm->geom_size[3 * k + c]));
      if (dist < 1e-12 && mjtype[m->geom_type[g]] == mm->geom_type[k]) matched++;
    }
  }
  CHECK_MSG(matched == 5, "%d of 5 geoms matched MuJoCo's", matched);
  printf("%s: %d collision geoms as MuJoCo's (unnamed there), named base arm tip arm_2 hand\n", path, matched);
  phys_free_data(d);
  phys_free_model(m);
  mj_deleteData(md);
  mj_deleteModel(mm);
}

int main(void) {
  char dir[] = "/tmp/physid_oracle_urdf_XXXXXX", path[64];
  if (!mkdtemp(dir)) return 1;
  snprintf(path, sizeof(path), "%s/chain.urdf", dir);
  FILE* f = fopen(path, "w");
  fputs(chain, f);
  fclose(f);
  compare(path, 1, 3, 3);
  remove(path);
  snprintf(path, sizeof(path), "%s/names.urdf", dir);
  f = fopen(path, "w");
  fputs(names_robot, f);
  fclose(f);
  test_geom_names(path);
  remove(path);
  rmdir(dir);
  compare("/usr/share/doc/dart/data/sdf/atlas/atlas_v3_no_head.urdf", 17.882, 27, 2);   // root: pelvis
  compare("tests/data/elbow/elbow.urdf", 0.37, 1, 0);                       // root: elbow_1
  return test_done();
}
