// test_collision.c - the collision driver: contact frames, dispatch, MJCF filtering (weld, parent-child,
// contype/conaffinity, exclude, explicit pairs), the broad phase against an O(n^2) loop on random scenes,
// materials of a pair, nconmax overflow, determinism, no arena left in use, and the cost on the humanoid.
#include <math.h>
#include <string.h>
#include <time.h>

#include "collision.h"
#include "rng.h"
#include "rot.h"
#include "spec.h"
#include "test.h"

//---------------------------------------------------------------------------------------------------------
// frames and dispatch

static void test_frame(void) {
  physRng rng;
  phys_rng_seed(&rng, 1);
  double f[9];
  phys_contact_frame(f, (double[3]){0, 0, 1});
  CHECK(f[3] == 1 && f[4] == 0 && f[5] == 0);  // ground contact: t1 = x, t2 = y
  CHECK(f[6] == 0 && f[7] == 1 && f[8] == 0);
  for (int it = 0; it < 1000; it++) {
    double n[3];
    for (int k = 0; k < 3; k++) n[k] = phys_rng_range(&rng, -1, 1);
    if (it < 6) n[0] = n[1] = n[2] = 0, n[it / 2] = it % 2 ? -1 : 1;  // the axes
    phys_normalize3(n);
    phys_contact_frame(f, n);
    double cr[3];
    phys_cross3(cr, f, f + 3);
    CHECK_NEAR(phys_norm3(f + 3), 1, 1e-14);
    CHECK_NEAR(phys_dot3(f, f + 3), 0, 1e-14);
    for (int k = 0; k < 3; k++) CHECK_NEAR(cr[k], f[6 + k], 1e-14);  // right-handed: t2 = n x t1
    for (int k = 0; k < 3; k++) CHECK(f[k] == n[k]);
  }
}

static void test_dispatch(void) {
  int swap;
  CHECK(phys_collide_fn(PHYS_GEOM_PLANE, PHYS_GEOM_PLANE, &swap) == NULL);
  CHECK(phys_collide_fn(PHYS_GEOM_BOX, PHYS_GEOM_PLANE, &swap) != NULL && swap == 1);
  CHECK(phys_collide_fn(PHYS_GEOM_PLANE, PHYS_GEOM_BOX, &swap) != NULL && swap == 0);
  CHECK(phys_collide_fn(PHYS_GEOM_PLANE, PHYS_GEOM_BOX, &swap) == phys_collide_fn(PHYS_GEOM_BOX, PHYS_GEOM_PLANE, &swap));
  CHECK(phys_collide_fn(-1, 0, &swap) == NULL && phys_collide_fn(0, PHYS_NGEOMTYPE, &swap) == NULL);
  // every closed-form pair of this layer is registered
  int prim[][2] = {{0, 1}, {0, 2}, {0, 3}, {0, 4}, {0, 5}, {1, 1}, {1, 2}, {1, 4}, {1, 5}, {2, 2}, {2, 5}, {5, 5}};
  for (size_t i = 0; i < sizeof(prim) / sizeof(prim[0]); i++) CHECK(phys_collide_fn(prim[i][0], prim[i][1], &swap));
}

//---------------------------------------------------------------------------------------------------------
// filtering

// body with one sphere geom of radius r at the body origin; joint type jt (-1: none)
static int add_body(physSpec* s, int parent, int jt, const double pos[3], double r, const char* name) {
  int b = phys_spec_add_body(s, parent);
  snprintf(s->body[b].name, PHYS_NAMELEN, "%s", name);
  memcpy(s->body[b].pos, pos, sizeof(double) * 3);
  if (jt >= 0) {
    int j = phys_spec_add_joint(s, b, jt);
    s->joint[j].axis[2] = 1;
    snprintf(s->joint[j].name, PHYS_NAMELEN, "j%s", name);
  }
  int g = phys_spec_add_geom(s, b, PHYS_GEOM_SPHERE);
  s->geom[g].size[0] = r;
  snprintf(s->geom[g].name, PHYS_NAMELEN, "%s", name);
  return b;
}

static physModel* compile_or_die(physSpec* s) {
  physLog log = {0};
  physModel* m = phys_compile(s, &log);
  if (!m) {
    fprintf(stderr, "compile: %s\n", log.error);
    exit(1);
  }
  return m;
}

// the filter model: world {floor, wall}, a (free) > b (hinge) > c (welded to b) > f (hinge); d static on the
// world; e free; all spheres of radius 1 near the origin (so every pair overlaps)
static physSpec* filter_spec(void) {
  physSpec* s = phys_spec_new();
  int g = phys_spec_add_geom(s, 0, PHYS_GEOM_PLANE);
  snprintf(s->geom[g].name, PHYS_NAMELEN, "floor");
  g = phys_spec_add_geom(s, 0, PHYS_GEOM_BOX);
  s->geom[g].size[0] = s->geom[g].size[1] = s->geom[g].size[2] = 1;
  snprintf(s->geom[g].name, PHYS_NAMELEN, "wall");
  double o[3] = {0, 0, 0.5};
  int a = add_body(s, 0, PHYS_JNT_FREE, o, 1, "a");
  int b = add_body(s, a, PHYS_JNT_HINGE, (double[3]){0, 0, 0.1}, 1, "b");
  int c = add_body(s, b, -1, (double[3]){0, 0, 0.1}, 1, "c");
  add_body(s, c, PHYS_JNT_HINGE, (double[3]){0, 0, 0.1}, 1, "f");
  add_body(s, 0, -1, (double[3]){0.1, 0, 0.5}, 1, "d");
  add_body(s, 0, PHYS_JNT_FREE, (double[3]){0, 0.1, 0.5}, 1, "e");
  return s;
}

static void test_filter(void) {
  physSpec* s = filter_spec();
  physModel* m = compile_or_die(s);
  // geoms: floor 0, wall 1, a 2, b 3, c 4, f 5, d 6, e 7
  const char* names[8] = {"floor", "wall", "a", "b", "c", "f", "d", "e"};
  for (int i = 0; i < 8; i++) CHECK(phys_name2id(m, "geom", names[i]) == i);
  // expected filter (symmetric): static-static 0; parent-child by weld body; world exempt
  int expect[8][8] = {0};
  int yes[][2] = {{0, 2}, {0, 3}, {0, 4}, {0, 5}, {0, 7}, {1, 2}, {1, 3}, {1, 4}, {1, 5}, {1, 7}, {2, 5}, {2, 6},
                  {2, 7}, {3, 6}, {3, 7}, {4, 6}, {4, 7}, {5, 6}, {5, 7}, {6, 7}};
  for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) expect[yes[i][0]][yes[i][1]] = expect[yes[i][1]][yes[i][0]] = 1;
  for (int i = 0; i < 8; i++)
    for (int j = 0; j < 8; j++)
      if (i != j) CHECK_MSG(phys_collision_filter(m, i, j) == expect[i][j], "filter(%s, %s)", names[i], names[j]);
  // contype/conaffinity: (ct1 & ca2) || (ct2 & ca1)
  m->geom_contype[7] = 2, m->geom_conaffinity[7] = 2;
  CHECK(!phys_collision_filter(m, 2, 7) && !phys_collision_filter(m, 7, 2));
  m->geom_conaffinity[7] = 1;  // e's affinity meets a's type
  CHECK(phys_collision_filter(m, 2, 7) && phys_collision_filter(m, 7, 2));
  m->geom_contype[2] = 0, m->geom_conaffinity[2] = 2;  // a: type 0, affinity 2 meets e's type 2
  CHECK(phys_collision_filter(m, 2, 7));
  m->geom_conaffinity[2] = 0;
  CHECK(!phys_collision_filter(m, 2, 7));
  phys_free_model(m);

  // exclude a-e, explicit pair floor-d (both static, normally filtered) with its own material, explicit pair
  // b-e (the body pair's other geoms are then left to the pair)
  int ex = phys_spec_add_exclude(s);
  snprintf(s->exclude[ex].body1, PHYS_NAMELEN, "e");
  snprintf(s->exclude[ex].body2, PHYS_NAMELEN, "a");
  int p = phys_spec_add_pair(s);
  snprintf(s->pair[p].geom1, PHYS_NAMELEN, "d");
  snprintf(s->pair[p].geom2, PHYS_NAMELEN, "floor");
  s->pair[p].friction = 0.3, s->pair[p].restitution = 0.4, s->pair[p].margin = 0.01;
  // a second geom on b, to see the b-e dynamic contacts replaced by the explicit pair
  int g2 = phys_spec_add_geom(s, 2, PHYS_GEOM_SPHERE);  // body b
  s->geom[g2].size[0] = 1;
  snprintf(s->geom[g2].name, PHYS_NAMELEN, "b2");
  p = phys_spec_add_pair(s);
  snprintf(s->pair[p].geom1, PHYS_NAMELEN, "b");
  snprintf(s->pair[p].geom2, PHYS_NAMELEN, "e");
  s->geom[7].friction[0] = 0.9;  // geom a keeps 1.0; friction of a pair = max
  s->geom[2].restitution = 0.25;
  m = compile_or_die(s);
  phys_spec_free(s);
  physData* d = phys_make_data(m);
  phys_kinematics(m, d);
  int ga = phys_name2id(m, "geom", "a"), gb = phys_name2id(m, "geom", "b"), gd = phys_name2id(m, "geom", "d");
  int ge = phys_name2id(m, "geom", "e"), gf = phys_name2id(m, "geom", "floor");
  CHECK(!phys_collision_filter(m, ga, ge) && !phys_collision_filter(m, ge, ga));
  phys_collision(m, d);
  int seen_pair0 = 0, seen_pair1 = 0, be_dynamic = 0, ae = 0;
  int b2 = phys_name2id(m, "geom", "b2");
  for (int i = 0; i < d->ncon; i++) {
    const physContact* c = d->contact + i;
    if (c->pair == 0) {
      seen_pair0++;
      CHECK(c->geom[0] == gd && c->geom[1] == gf);  // the pair's order: normal from d to the floor
      CHECK_NEAR(c->frame[2], -1, 1e-12);
      CHECK(c->mu == 0.3 && c->restitution == 0.4);
    }
    if (c->pair == 1) {
      seen_pair1++;
      CHECK(c->geom[0] == gb && c->geom[1] == ge);
    }
    if (c->pair < 0) {
      CHECK(c->geom[0] < c->geom[1]);
      int g1 = c->geom[0], gg = c->geom[1];
      if ((g1 == gb || g1 == b2 || gg == gb || gg == b2) && (gg == ge || g1 == ge)) be_dynamic++;
      if ((g1 == ga && gg == ge) || (g1 == ge && gg == ga)) ae++;
      CHECK(c->mu == fmax(m->geom_friction[3 * g1], m->geom_friction[3 * gg]));
      CHECK(c->restitution == fmax(m->geom_restitution[g1], m->geom_restitution[gg]));
      CHECK(phys_collision_filter(m, g1, gg));
    }
    CHECK(c->efc_adr == -1);
  }
  CHECK(seen_pair0 == 1 && seen_pair1 == 1 && be_dynamic == 0 && ae == 0);
  // contacts from the pairs come first, in model order
  CHECK(d->ncon >= 2 && d->contact[0].pair == 0 && d->contact[1].pair == 1);
  // d is static at height 0.5 with radius 1: depth 0.5 below the floor
  CHECK_NEAR(d->contact[0].dist, -0.5, 1e-12);
  // disabled contacts: nothing
  m->opt.disableflags |= PHYS_DSBL_CONTACT;
  phys_collision(m, d);
  CHECK(d->ncon == 0);
  phys_free_data(d);
  phys_free_model(m);
}

//---------------------------------------------------------------------------------------------------------
// broad phase against O(n^2)

// n free bodies with one geom each (types cycling through sphere, capsule, box, cylinder, ellipsoid), a floor
// and two static boxes; some geoms with a margin
static physModel* random_scene(int n, int nconmax, physRng* rng) {
  physSpec* s = phys_spec_new();
  s->nconmax = nconmax;
  phys_spec_add_geom(s, 0, PHYS_GEOM_PLANE);
  for (int i = 0; i < 2; i++) {
    int g = phys_spec_add_geom(s, 0, PHYS_GEOM_BOX);
    s->geom[g].size[0] = 0.3, s->geom[g].size[1] = 0.2, s->geom[g].size[2] = 0.4;
    s->geom[g].pos[0] = i ? 0.5 : -0.5;
    s->geom[g].pos[2] = 0.4;
  }
  static const int types[5] = {PHYS_GEOM_SPHERE, PHYS_GEOM_CAPSULE, PHYS_GEOM_BOX, PHYS_GEOM_CYLINDER,
                               PHYS_GEOM_ELLIPSOID};
  for (int i = 0; i < n; i++) {
    int b = phys_spec_add_body(s, 0);
    phys_spec_add_joint(s, b, PHYS_JNT_FREE);
    int g = phys_spec_add_geom(s, b, types[i % 5]);
    for (int k = 0; k < 3; k++) s->geom[g].size[k] = phys_rng_range(rng, 0.03, 0.12);
    if (i % 7 == 0) s->geom[g].margin = 0.02;
    if (i % 11 == 0) s->geom[g].contype = 2;  // collides only with affinity-2 geoms (none but itself)
  }
  physModel* m = compile_or_die(s);
  phys_spec_free(s);
  return m;
}

// random positions in a box of the given half size above the floor, random orientations
static void random_state(const physModel* m, physData* d, physRng* rng, double half) {
  for (int j = 0; j < m->njnt; j++) {
    double* q = d->qpos + m->jnt_qposadr[j];
    q[0] = phys_rng_range(rng, -half, half), q[1] = phys_rng_range(rng, -half, half);
    q[2] = phys_rng_range(rng, -0.05, 2 * half);
    for (int k = 3; k < 7; k++) q[k] = phys_rng_range(rng, -1, 1);
    phys_quat_normalize(q + 3);
  }
  phys_kinematics(m, d);
}

// the O(n^2) reference: all g1 < g2 through the filter, narrow phase with the larger margin
static int brute_force(const physModel* m, const physData* d, physContact* out, int cap) {
  int n = 0, swap;
  physContact tmp[PHYS_MAXPAIRCON];
  for (int g1 = 0; g1 < m->ngeom; g1++)
    for (int g2 = g1 + 1; g2 < m->ngeom; g2++) {
      if (!phys_collision_filter(m, g1, g2) || !phys_collide_fn(m->geom_type[g1], m->geom_type[g2], &swap)) continue;
      int k = phys_collide_geoms(m, d, g1, g2, fmax(m->geom_margin[g1], m->geom_margin[g2]), tmp);
      for (int i = 0; i < k && n < cap; i++) out[n++] = tmp[i];
    }
  return n;
}

static void test_broadphase(void) {
  physRng rng;
  phys_rng_seed(&rng, 7);
  physModel* m = random_scene(200, 2000, &rng);
  physData* d = phys_make_data(m);
  static physContact ref[4000];
  int total = 0, tested = 0;
  for (int it = 0; it < 6; it++) {
    random_state(m, d, &rng, it < 3 ? 1.0 : 0.5);
    size_t mark = phys_stack_mark(d);
    phys_collision(m, d);
    CHECK(phys_stack_mark(d) == mark);
    int n = brute_force(m, d, ref, 4000);
    CHECK_MSG(d->ncon == n, "broad phase %d contacts, O(n^2) %d", d->ncon, n);
    int same = d->ncon == n;
    for (int i = 0; i < n && same; i++) {
      const physContact *a = d->contact + i, *b = ref + i;
      same = a->geom[0] == b->geom[0] && a->geom[1] == b->geom[1] && a->dist == b->dist &&
             !memcmp(a->pos, b->pos, sizeof(a->pos)) && !memcmp(a->frame, b->frame, sizeof(a->frame));
    }
    CHECK(same);
    CHECK(d->ncon_dropped == 0);
    total += n, tested++;
    // determinism: a second call gives the same bytes
    static physContact first[2000];
    int n1 = d->ncon;
    memcpy(first, d->contact, sizeof(physContact) * (size_t)n1);
    phys_collision(m, d);
    CHECK(d->ncon == n1 && !memcmp(first, d->contact, sizeof(physContact) * (size_t)n1));
    // phys_collision_count: the same number, the list left as it was (here: an emptied one)
    d->ncon = 0;
    CHECK(phys_collision_count(m, d) == n1);
    CHECK(d->ncon == 0 && d->ncon_dropped == 0 && phys_stack_mark(d) == mark);
  }
  printf("broad phase: %d scenes of 203 geoms, %d contacts, same list as O(n^2)\n", tested, total);
  CHECK(total > 100);
  phys_free_data(d);
  phys_free_model(m);

  // overflow: nconmax = 10 keeps the first 10 of the full list, counts the rest, warns once
  phys_rng_seed(&rng, 7);
  m = random_scene(200, 10, &rng);
  d = phys_make_data(m);
  random_state(m, d, &rng, 0.5);
  int n = brute_force(m, d, ref, 4000);
  int warn0 = d->nwarning;
  phys_collision(m, d);
  CHECK(n > 10);
  CHECK(d->ncon == 10 && d->ncon_dropped == n - 10);
  CHECK(d->nwarning == warn0 + 1 && strstr(d->lastwarning, "nconmax") != NULL);
  for (int i = 0; i < 10; i++) CHECK(d->contact[i].geom[0] == ref[i].geom[0] && d->contact[i].dist == ref[i].dist);
  phys_free_data(d);
  phys_free_model(m);
}

//---------------------------------------------------------------------------------------------------------
// cost on the humanoid lying on the floor

static void test_humanoid_cost(void) {
  physLog log = {0};
  physModel* m = phys_load("/usr/share/mujoco/model/humanoid/humanoid.xml", NULL, &log);
  CHECK(m != NULL);
  if (!m) return;
  physData* d = phys_make_data(m);
  // lying on its back: root rotated -90 degrees about y, pelvis 0.1 above the floor
  double q[4];
  phys_axisangle2quat(q, (double[3]){0, 1, 0}, -M_PI / 2);
  d->qpos[2] = 0.1;
  memcpy(d->qpos + 3, q, sizeof(q));
  phys_kinematics(m, d);
  phys_collision(m, d);
  CHECK(d->ncon >= 4);
  int nrep = 20000;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int i = 0; i < nrep; i++) phys_collision(m, d);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double us = ((double)(t1.tv_sec - t0.tv_sec) * 1e6 + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-3) / nrep;
  printf("humanoid lying on the floor: %d geoms, %d contacts, %.2f us per phys_collision\n", m->ngeom, d->ncon, us);
  phys_free_data(d);
  phys_free_model(m);
}

// URDF robots do not collide with themselves by default (PHYS_DSBL_SELFCOLLISION): Atlas standing, whose
// neighbouring collision meshes overlap, has no self contacts; with urdf_self_collision they appear
static void test_urdf_self_collision(void) {
  const char* atlas = "/usr/share/doc/dart/data/sdf/atlas/atlas_v3_no_head.urdf";
  for (int self = 0; self < 2; self++) {
    physLoadOptions opt = {.urdf_floating = 1, .urdf_self_collision = self};
    physLog log = {0};
    physModel* m = phys_load(atlas, &opt, &log);
    CHECK_MSG(m != NULL, "%s", log.error);
    if (!m) return;
    CHECK(((m->opt.disableflags & PHYS_DSBL_SELFCOLLISION) != 0) == !self);
    physData* d = phys_make_data(m);
    phys_kinematics(m, d);
    phys_collision(m, d);
    // the robot floats in the air: every contact is a self contact
    CHECK_MSG(self ? d->ncon > 0 : d->ncon == 0, "self-collision %d: %d contacts", self, d->ncon);
    phys_free_data(d);
    phys_free_model(m);
  }
}

// a contact's friction: the larger of the geoms' sliding friction, 0 when the larger condim is 1
static void test_condim(void) {
  for (int k = 0; k < 3; k++) {
    physSpec* s = phys_spec_new();
    int g = phys_spec_add_geom(s, 0, PHYS_GEOM_PLANE);
    s->geom[g].friction[0] = 0.3;
    s->geom[g].condim = k == 0 ? 1 : 3;
    int b = add_body(s, 0, PHYS_JNT_FREE, (double[3]){0, 0, 0.5}, 1, "ball");
    s->geom[s->ngeom - 1].friction[0] = 0.7;
    s->geom[s->ngeom - 1].condim = k == 2 ? 3 : 1;
    (void)b;
    physModel* m = compile_or_die(s);
    physData* d = phys_make_data(m);
    phys_kinematics(m, d);
    phys_collision(m, d);
    CHECK(d->ncon == 1);
    // condim (1,1): frictionless; (3,1) and (3,3): max friction 0.7
    if (d->ncon == 1) CHECK(d->contact[0].mu == (k == 0 ? 0 : 0.7));
    phys_free_data(d);
    phys_free_model(m);
    phys_spec_free(s);
  }
}

// the broad phase's batch is a size of the model (phys_arena_pairkeys), not of the arena's free space: with
// exactly its high-water mark free the contacts are the same bytes; with less (outside a guarded call) no
// contacts and a warning, never a narrow phase in another order (it used to shrink the batch to the free space)
static void test_free_space(void) {
  physRng rng;
  phys_rng_seed(&rng, 11);
  physModel* m = random_scene(120, 2000, &rng);
  physData* d = phys_make_data(m);
  random_state(m, d, &rng, 0.5);
  static physContact ref[2000];
  d->pstack_max = 0;
  phys_collision(m, d);
  int n = d->ncon;
  size_t need = d->pstack_max;
  CHECK(n > 50 && d->nwarning == 0);
  memcpy(ref, d->contact, sizeof(physContact) * (size_t)n);
  for (int k = 0; k < 2; k++) {
    d->pstack = ((d->nstack - need) & ~(size_t)7) + 8 * (size_t)k;   // k = 0: the need free (< 8 to spare)
    size_t held = d->pstack;
    int nw = d->nwarning;
    phys_collision(m, d);
    CHECK(d->pstack == held);
    if (k == 0) CHECK(d->ncon == n && !memcmp(ref, d->contact, sizeof(physContact) * (size_t)n) && d->nwarning == nw);
    else
      CHECK_MSG(d->ncon == 0 && d->nwarning == nw + 1 && strstr(d->lastwarning, "scratch arena exhausted"),
                "%d contacts, %s", d->ncon, d->lastwarning);
  }
  d->pstack = 0;
  phys_free_data(d);
  phys_free_model(m);
}

int main(void) {
  test_condim();
  test_urdf_self_collision();
  test_frame();
  test_dispatch();
  test_filter();
  test_broadphase();
  test_free_space();
  test_humanoid_cost();
  return test_done();
}
