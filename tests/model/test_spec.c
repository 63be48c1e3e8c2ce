// test_spec.c - new elements start at MJCF's defaults; lists grow past their first capacity; phys_spec_attach
// merges two specs (indices remapped, meshes duplicated, the result compiles to the same bodies).
#include <stdlib.h>
#include <string.h>

#include "spec.h"
#include "test.h"

// a robot spec: a world geom, a free root with a tetrahedron mesh geom and a site, a hinged child with a
// site, a spring between the sites, an actuator, an exclude and a keyframe
static physSpec* robot_spec(void) {
  physSpec* s = phys_spec_new();
  int wg = phys_spec_add_geom(s, 0, PHYS_GEOM_BOX);
  strcpy(s->geom[wg].name, "robot_world_box");
  s->geom[wg].size[0] = s->geom[wg].size[1] = s->geom[wg].size[2] = 0.1;
  int root = phys_spec_add_body(s, 0), child = phys_spec_add_body(s, root);
  strcpy(s->body[root].name, "root");
  strcpy(s->body[child].name, "child");
  s->body[root].pos[2] = 1;
  s->body[child].pos[0] = 0.3;
  phys_spec_add_joint(s, root, PHYS_JNT_FREE);
  int h = phys_spec_add_joint(s, child, PHYS_JNT_HINGE);
  strcpy(s->joint[h].name, "elbow");
  int me = phys_spec_add_mesh(s);
  strcpy(s->mesh[me].name, "tet");
  static const double v[12] = {0, 0, 0, 0.2, 0, 0, 0, 0.2, 0, 0, 0, 0.2};
  static const int f[12] = {0, 2, 1, 0, 1, 3, 0, 3, 2, 1, 2, 3};
  s->mesh[me].vert = malloc(sizeof v);
  s->mesh[me].face = malloc(sizeof f);
  memcpy(s->mesh[me].vert, v, sizeof v);
  memcpy(s->mesh[me].face, f, sizeof f);
  s->mesh[me].nvert = s->mesh[me].nface = 4;
  int gm = phys_spec_add_geom(s, root, PHYS_GEOM_MESH);
  s->geom[gm].mesh = me;
  int gc = phys_spec_add_geom(s, child, PHYS_GEOM_SPHERE);
  s->geom[gc].size[0] = 0.05;
  int s1 = phys_spec_add_site(s, root), s2 = phys_spec_add_site(s, child);
  strcpy(s->site[s1].name, "a");
  strcpy(s->site[s2].name, "b");
  int sp = phys_spec_add_spring(s);
  strcpy(s->spring[sp].name, "cable");
  s->spring[sp].site[0] = s1;
  s->spring[sp].site[1] = s2;
  s->spring[sp].nsite = 2;
  s->spring[sp].stiffness = 10;
  int a = phys_spec_add_actuator(s);
  strcpy(s->actuator[a].name, "motor");
  strcpy(s->actuator[a].target, "elbow");
  int e = phys_spec_add_exclude(s);
  strcpy(s->exclude[e].body1, "root");
  strcpy(s->exclude[e].body2, "child");
  phys_spec_add_key(s);
  return s;
}

// phys_spec_attach: a floor spec with one body receives the robot at the world, then under its body
static void test_attach(void) {
  physSpec* dst = phys_spec_new();
  int fg = phys_spec_add_geom(dst, 0, PHYS_GEOM_PLANE);
  strcpy(dst->geom[fg].name, "floor");
  int post = phys_spec_add_body(dst, 0);
  strcpy(dst->body[post].name, "post");
  int pg = phys_spec_add_geom(dst, post, PHYS_GEOM_SPHERE);
  dst->geom[pg].size[0] = 0.1;
  physSpec* src = robot_spec();
  CHECK(phys_spec_attach(dst, dst, 0) == PHYS_ERR_ARG);
  CHECK(phys_spec_attach(dst, src, 5) == PHYS_ERR_ARG);
  CHECK(phys_spec_attach(dst, src, 0) == PHYS_OK);
  // bodies after dst's, parents remapped; world geom on dst's world; mesh duplicated
  CHECK(dst->nbody == 4 && strcmp(dst->body[2].name, "root") == 0 && dst->body[2].parent == 0);
  CHECK(strcmp(dst->body[3].name, "child") == 0 && dst->body[3].parent == 2);
  CHECK(dst->ngeom == 5 && dst->geom[2].body == 0 && dst->geom[3].body == 2 && dst->geom[4].body == 3);
  CHECK(dst->nmesh == 1 && dst->geom[3].mesh == 0 && dst->mesh[0].vert != src->mesh[0].vert);
  CHECK(dst->mesh[0].nvert == 4 && dst->mesh[0].vert[5] == 0 && dst->mesh[0].vert[3] == 0.2);
  CHECK(dst->njoint == 2 && dst->joint[0].body == 2 && dst->joint[1].body == 3);
  CHECK(dst->nsite == 2 && dst->site[0].body == 2 && dst->site[1].body == 3);
  CHECK(dst->nspring == 1 && dst->spring[0].site[0] == 0 && dst->spring[0].site[1] == 1);
  CHECK(dst->nactuator == 1 && dst->nexclude == 1 && dst->nkey == 0);
  // the merged spec compiles; the robot's bodies sit where they sit alone
  physLog log;
  memset(&log, 0, sizeof log);
  physModel* mm = phys_compile(dst, &log);
  physModel* ms = phys_compile(src, &log);
  CHECK_MSG(mm && ms, "%s", log.error);
  if (mm && ms) {
    CHECK(mm->nbody == 4 && mm->nq == ms->nq && mm->nv == ms->nv && mm->nspring == 1 && mm->nu == 1);
    physData *dm = phys_make_data(mm), *ds = phys_make_data(ms);
    phys_reset_data(mm, dm);
    phys_reset_data(ms, ds);
    dm->qvel[5] = ds->qvel[5] = 0.3;
    for (int i = 0; i < 50; i++) {
      phys_step(mm, dm);
      phys_step(ms, ds);
    }
    for (int i = 0; i < 6; i++) CHECK_NEAR(dm->xpos[3 * 2 + i], ds->xpos[3 * 1 + i], 1e-12);   // root, child
    CHECK_NEAR(mm->body_mass[2], ms->body_mass[1], 0);
    phys_free_data(dm);
    phys_free_data(ds);
  }
  phys_free_model(mm);
  phys_free_model(ms);
  phys_spec_free(dst);
  // under a body: a hinged robot hangs from the post; a free root there is refused by the compiler
  dst = phys_spec_new();
  post = phys_spec_add_body(dst, 0);
  phys_spec_add_joint(dst, post, PHYS_JNT_SLIDE);
  pg = phys_spec_add_geom(dst, post, PHYS_GEOM_SPHERE);
  dst->geom[pg].size[0] = 0.1;
  strcpy(dst->filename, "floor.xml");
  strcpy(src->filename, "robot.urdf");
  src->joint[0].line = 7;
  CHECK(phys_spec_attach(dst, src, post) == PHYS_OK);
  CHECK(dst->body[2].parent == post && dst->body[3].parent == 2 && dst->geom[1].body == post);
  // the attached elements keep their file for messages
  CHECK(dst->body[1].fileid == 0 && dst->body[2].fileid > 0 && !strcmp(dst->srcfile[dst->body[2].fileid], "robot.urdf") &&
        dst->joint[1].fileid == dst->body[2].fileid);
  memset(&log, 0, sizeof log);
  mm = phys_compile(dst, &log);
  CHECK_MSG(mm == NULL && log.status == PHYS_ERR_MODEL && strstr(log.error, "robot.urdf:7: joint"),
            "a free joint under a moving body compiled: %s", log.error);
  phys_free_model(mm);
  phys_spec_free(dst);
  phys_spec_free(src);
}

int main(void) {
  test_attach();
  physSpec* s = phys_spec_new();
  CHECK(s->nbody == 1 && strcmp(s->body[0].name, "world") == 0 && s->body[0].parent == -1);
  CHECK(s->opt.timestep == 0.002 && s->opt.gravity[2] == -9.81);
  int g = phys_spec_add_geom(s, 0, PHYS_GEOM_PLANE);
  CHECK(s->geom[g].friction[0] == 1 && s->geom[g].friction[1] == 0.005 && s->geom[g].friction[2] == 0.0001);
  CHECK(s->geom[g].density == 1000 && s->geom[g].mass < 0 && s->geom[g].condim == 3 && s->geom[g].mesh == -1);
  int j = phys_spec_add_joint(s, 0, PHYS_JNT_HINGE);
  CHECK(s->joint[j].axis[2] == 1 && s->joint[j].axis[0] == 0);
  int a = phys_spec_add_actuator(s);
  CHECK(s->actuator[a].gear[0] == 1 && s->actuator[a].gear[1] == 0);
  int sp = phys_spec_add_spring(s);
  CHECK(s->spring[sp].restlength < 0);
  for (int i = 0; i < 100; i++) phys_spec_add_body(s, i);
  CHECK(s->nbody == 101 && s->body[100].parent == 99 && s->body[100].quat[0] == 1);
  phys_spec_free(s);
  return test_done();
}
