// test_compile.c - spec -> model: addresses, qpos0, inertia from geoms, mass scaling, validation errors.
#include <math.h>
#include <string.h>

#include "rot.h"
#include "spec.h"
#include "test.h"

// a free body with two spheres: combined com and inertia by the parallel-axis theorem, by hand
static void test_two_spheres(void) {
  physSpec* s = phys_spec_new();
  strcpy(s->filename, "two_spheres");
  int b = phys_spec_add_body(s, 0);
  strcpy(s->body[b].name, "dumbbell");
  s->body[b].pos[2] = 1;
  phys_spec_add_joint(s, b, PHYS_JNT_FREE);
  int g1 = phys_spec_add_geom(s, b, PHYS_GEOM_SPHERE), g2 = phys_spec_add_geom(s, b, PHYS_GEOM_SPHERE);
  s->geom[g1].size[0] = 0.1;
  s->geom[g1].pos[0] = -0.5;
  s->geom[g2].size[0] = 0.1;
  s->geom[g2].pos[0] = 0.5;
  s->geom[g2].mass = 3;
  physLog log = {0};
  physModel* m = phys_compile(s, &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  if (m) {
    double m1 = 1000 * 4.0 / 3.0 * M_PI * 1e-3, m2 = 3, M = m1 + m2;
    double cx = (-0.5 * m1 + 0.5 * m2) / M;
    CHECK_REL(m->body_mass[1], M, 1e-14, 0);
    double com[3], z[3] = {0, 0, 0};
    phys_quat_rotate(com, m->body_iquat + 4, z);
    CHECK_NEAR(m->body_ipos[3], cx, 1e-14);
    // about the com: axial moment from the spheres only, transverse with the offsets
    double Iax = 0.4 * (m1 + m2) * 0.01;
    double Itr = Iax + m1 * (0.5 + cx) * (0.5 + cx) + m2 * (0.5 - cx) * (0.5 - cx);
    CHECK_REL(m->body_inertia[3], Itr, 1e-12, 0);
    CHECK_REL(m->body_inertia[4], Itr, 1e-12, 0);
    CHECK_REL(m->body_inertia[5], Iax, 1e-12, 0);
    // the smallest principal axis is the body x axis
    double ex[3] = {0, 0, 1}, ax[3];
    phys_quat_rotate(ax, m->body_iquat + 4, ex);
    CHECK_NEAR(fabs(ax[0]), 1, 1e-12);
    // free joint: qpos0 = body pose, nq 7 nv 6
    CHECK(m->nq == 7 && m->nv == 6 && m->njnt == 1);
    CHECK(m->qpos0[2] == 1 && m->qpos0[3] == 1);
    CHECK(m->dof_parentid[0] == -1 && m->dof_parentid[5] == 4);
    CHECK(phys_name2id(m, "body", "dumbbell") == 1);
    CHECK(strcmp(phys_id2name(m, "body", 0), "world") == 0);
    phys_free_model(m);
  }
  // settotalmass scales mass and inertia by the same factor
  s->settotalmass = 2 * (1000 * 4.0 / 3.0 * M_PI * 1e-3 + 3);
  m = phys_compile(s, &log);
  CHECK(m && fabs(m->body_mass[1] - s->settotalmass) < 1e-12);
  phys_free_model(m);
  phys_spec_free(s);
}

// MuJoCo's capsule: cylinder + two hemispheres shifted to the ends; volume pi r^2 (4/3 r + 2h)
static void test_primitive_inertia(void) {
  physSpecGeom g;
  memset(&g, 0, sizeof(g));
  double mass, com[3], I[6];
  g.type = PHYS_GEOM_BOX;
  g.size[0] = 0.1, g.size[1] = 0.2, g.size[2] = 0.3;
  g.density = 1000;
  g.mass = -1;
  CHECK(phys_geom_inertia(&g, NULL, &mass, com, I) == PHYS_OK);
  CHECK_REL(mass, 1000 * 0.2 * 0.4 * 0.6, 1e-14, 0);
  CHECK_REL(I[0], mass * (0.4 * 0.4 + 0.6 * 0.6) / 12, 1e-14, 0);
  g.type = PHYS_GEOM_CYLINDER;
  g.size[0] = 0.1, g.size[1] = 0.5;
  CHECK(phys_geom_inertia(&g, NULL, &mass, com, I) == PHYS_OK);
  CHECK_REL(mass, 1000 * M_PI * 0.01 * 1.0, 1e-14, 0);
  CHECK_REL(I[2], mass * 0.01 / 2, 1e-14, 0);
  CHECK_REL(I[0], mass * (3 * 0.01 + 1.0) / 12, 1e-14, 0);
  g.type = PHYS_GEOM_CAPSULE;
  CHECK(phys_geom_inertia(&g, NULL, &mass, com, I) == PHYS_OK);
  CHECK_REL(mass, 1000 * M_PI * 0.01 * (4.0 / 3.0 * 0.1 + 1.0), 1e-14, 0);
  // in the limit of a very short capsule it is a sphere
  g.size[1] = 1e-9;
  CHECK(phys_geom_inertia(&g, NULL, &mass, com, I) == PHYS_OK);
  CHECK_REL(I[0], 0.4 * mass * 0.01, 1e-7, 0);
  CHECK_REL(I[2], 0.4 * mass * 0.01, 1e-7, 0);
  g.type = PHYS_GEOM_SPHERE;
  g.size[0] = 0;
  CHECK(phys_geom_inertia(&g, NULL, &mass, com, I) != PHYS_OK);
}

// a one-body hinge model whose spec the error tests then break one field at a time
static physSpec* hinge_spec(void) {
  physSpec* s = phys_spec_new();
  strcpy(s->filename, "hinge.xml");
  int b = phys_spec_add_body(s, 0);
  strcpy(s->body[b].name, "link");
  s->body[b].line = 5;
  int j = phys_spec_add_joint(s, b, PHYS_JNT_HINGE);
  strcpy(s->joint[j].name, "j");
  s->joint[j].line = 6;
  int g = phys_spec_add_geom(s, b, PHYS_GEOM_SPHERE);
  s->geom[g].size[0] = 0.1;
  s->geom[g].pos[0] = 1;
  s->geom[g].line = 7;
  int a = phys_spec_add_actuator(s);
  strcpy(s->actuator[a].target, "j");
  s->actuator[a].line = 9;
  return s;
}

static void expect_error(physSpec* s, const char* needle) {
  physLog log = {0};
  physModel* m = phys_compile(s, &log);
  CHECK_MSG(m == NULL && log.status != PHYS_OK && strstr(log.error, needle), "expected '%s', got '%s'", needle,
            log.error);
  phys_free_model(m);
  phys_spec_free(s);
}

static void test_errors(void) {
  physSpec* s = hinge_spec();
  physLog log = {0};
  physModel* m = phys_compile(s, &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  phys_free_model(m);
  phys_spec_free(s);

  s = hinge_spec();
  s->inertiafromgeom = 0;
  s->body[1].has_inertial = 1;
  s->body[1].mass = -1;
  expect_error(s, "hinge.xml:5: body 'link': mass -1 is negative");

  s = hinge_spec();
  s->inertiafromgeom = 0;
  s->body[1].has_inertial = 1;
  s->body[1].mass = 0;
  expect_error(s, "hinge.xml:5: body 'link': it moves (has joints) but its mass 0 or a principal moment");

  s = hinge_spec();
  s->inertiafromgeom = 0;
  s->body[1].has_inertial = 1;
  s->body[1].mass = 1;
  s->body[1].inertia[0] = 1, s->body[1].inertia[1] = 0.1, s->body[1].inertia[2] = 0.1;
  expect_error(s, "hinge.xml:5: body 'link': inertia (1 0.1 0.1) is not physical");

  s = hinge_spec();
  s->geom[0].size[0] = -0.1;
  expect_error(s, "hinge.xml:7: <geom name=''>: size[0] = -0.1 must be positive");

  s = hinge_spec();
  s->geom[0].restitution = 1.5;
  expect_error(s, "restitution 1.5 outside [0, 1]");

  s = hinge_spec();
  s->joint[0].axis[2] = 0;
  expect_error(s, "hinge.xml:6: joint 'j': axis has zero length");

  s = hinge_spec();
  s->joint[0].damping = NAN;
  expect_error(s, "joint 'j': values must be finite");

  s = hinge_spec();
  strcpy(s->actuator[0].target, "nope");
  expect_error(s, "hinge.xml:9: actuator '': joint 'nope' not found");

  s = hinge_spec();
  int c = phys_spec_add_body(s, 1);
  phys_spec_add_joint(s, c, PHYS_JNT_FREE);
  phys_spec_add_geom(s, c, PHYS_GEOM_SPHERE);
  s->geom[1].size[0] = 0.1;
  expect_error(s, "a free joint can only be used on a child of the world");

  s = hinge_spec();
  int k = phys_spec_add_key(s);
  s->key[k].qpos = calloc(2, sizeof(double));
  s->key[k].nqpos = 2;
  expect_error(s, "qpos/qvel/ctrl need 1/1/1 values (got 2/0/0)");

  s = hinge_spec();
  s->opt.timestep = 0;
  expect_error(s, "option timestep 0 must be positive");
}

// a spec: world - body 1 (free joint, given mass and principal inertia, line 3) - optional child 2
// (line 4, joint `childjoint`: -1 none = welded, else its type) with mass m2 and inertia I2 at (1, 0, 0)
static physSpec* inertia_spec(double m1, const double I1[3], int childjoint, double m2, const double I2[3]) {
  physSpec* s = phys_spec_new();
  strcpy(s->filename, "m.xml");
  s->inertiafromgeom = 0;
  int b = phys_spec_add_body(s, 0);
  phys_spec_add_joint(s, b, PHYS_JNT_FREE);
  s->body[b].line = 3;
  s->body[b].has_inertial = 1;
  s->body[b].mass = m1;
  memcpy(s->body[b].inertia, I1, 3 * sizeof(double));
  if (I2) {
    int c = phys_spec_add_body(s, b);
    s->body[c].line = 4;
    s->body[c].pos[0] = 1;
    if (childjoint >= 0) phys_spec_add_joint(s, c, childjoint);
    s->body[c].has_inertial = 1;
    s->body[c].mass = m2;
    memcpy(s->body[c].inertia, I2, 3 * sizeof(double));
  }
  return s;
}

// 1 if the spec compiles (the spec is freed)
static int compiles(physSpec* s, physLog* log) {
  memset(log, 0, sizeof(*log));
  physModel* m = phys_compile(s, log);
  phys_free_model(m);
  phys_spec_free(s);
  return m != NULL;
}

// a moving body needs mass and rotational inertia (MuJoCo 2.2.2's rule, confirmed against mj_loadXML with
// the same cases in test_oracle_mjcf): before, a free body of mass 1 and inertia 0 loaded and every step failed
static void test_moving_inertia(void) {
  const double zero[3] = {0, 0, 0}, one[3] = {1, 1, 1}, flat[3] = {1, 1, 0}, tiny[3] = {1e-16, 1e-16, 1e-16},
               small[3] = {1e-14, 1e-14, 1e-14};
  physLog log;
  CHECK(!compiles(inertia_spec(1, zero, -1, 0, NULL), &log));
  CHECK_MSG(strstr(log.error, "m.xml:3: body '': it moves (has joints) but its mass 1 or a principal moment of "
                              "inertia (0 0 0) is not larger than 1e-15"), "%s", log.error);
  CHECK(!compiles(inertia_spec(1, flat, -1, 0, NULL), &log));    // one zero moment
  CHECK(!compiles(inertia_spec(1, tiny, -1, 0, NULL), &log));    // below mjMINVAL
  CHECK(!compiles(inertia_spec(1e-16, one, -1, 0, NULL), &log));
  CHECK(compiles(inertia_spec(1, small, -1, 0, NULL), &log));    // above mjMINVAL
  CHECK(compiles(inertia_spec(1, zero, -1, 1, one), &log));      // a welded child carries it
  CHECK(compiles(inertia_spec(0, zero, -1, 1, one), &log));
  CHECK(!compiles(inertia_spec(1, zero, -1, 1, zero), &log));    // welded point masses: MuJoCo refuses
  CHECK(!compiles(inertia_spec(0, zero, PHYS_JNT_HINGE, 1, one), &log));   // a jointed child does not count
  CHECK(strstr(log.error, "m.xml:3: body ''"));
  // URDF: a massless link above a link with mass and inertia is accepted; a lone point mass is not
  physSpec* s = inertia_spec(0, zero, PHYS_JNT_HINGE, 1, one);
  s->urdf = 1;
  CHECK_MSG(compiles(s, &log), "%s", log.error);
  s = inertia_spec(1, zero, PHYS_JNT_HINGE, 1, zero);
  s->urdf = 1;
  CHECK(!compiles(s, &log) && strstr(log.error, "m.xml:3: link ''") && strstr(log.error, "<inertial>"));
}

// names are unique per kind; the message names both lines (MuJoCo: "repeated name in <kind> array")
static void test_duplicate_names(void) {
  physLog log;
  physSpec* s = hinge_spec();
  int b = phys_spec_add_body(s, 0);
  strcpy(s->body[b].name, "link");
  s->body[b].line = 12;
  CHECK(!compiles(s, &log));
  CHECK_MSG(strstr(log.error, "hinge.xml:12: body 'link': duplicate name: the body at line 5 has it too"), "%s",
            log.error);

  s = hinge_spec();
  b = phys_spec_add_body(s, 0);
  strcpy(s->body[b].name, "world");
  s->body[b].line = 8;
  CHECK(!compiles(s, &log) && strstr(log.error, "hinge.xml:8: body 'world': duplicate name: the world body"));

  s = hinge_spec();
  int j = phys_spec_add_joint(s, 1, PHYS_JNT_SLIDE);
  strcpy(s->joint[j].name, "j");
  s->joint[j].line = 11;
  CHECK(!compiles(s, &log));
  CHECK_MSG(strstr(log.error, "hinge.xml:11: joint 'j': duplicate name: the joint at line 6 has it too"), "%s",
            log.error);

  // each kind, and two unnamed elements or one name in two kinds are fine
  static const char* const kinds[] = {"geom", "site", "tendon", "actuator", "key", "pair"};
  for (int k = 0; k < 6; k++) {
    s = hinge_spec();
    char* name[2];
    int* line[2];
    for (int i = 0; i < 2; i++) {
      int id;
      switch (k) {
        case 0: id = phys_spec_add_geom(s, 1, PHYS_GEOM_SPHERE); s->geom[id].size[0] = 0.1;
                name[i] = s->geom[id].name; line[i] = &s->geom[id].line; break;
        case 1: id = phys_spec_add_site(s, 1); name[i] = s->site[id].name; line[i] = &s->site[id].line; break;
        case 2: id = phys_spec_add_spring(s); name[i] = s->spring[id].name; line[i] = &s->spring[id].line; break;
        case 3: id = phys_spec_add_actuator(s); strcpy(s->actuator[id].target, "j");
                name[i] = s->actuator[id].name; line[i] = &s->actuator[id].line; break;
        case 4: id = phys_spec_add_key(s); name[i] = s->key[id].name; line[i] = &s->key[id].line; break;
        default: id = phys_spec_add_pair(s); name[i] = s->pair[id].name; line[i] = &s->pair[id].line; break;
      }
      strcpy(name[i], "x");
      *line[i] = 20 + i;
    }
    char want[128];
    snprintf(want, sizeof(want), "hinge.xml:21: %s 'x': duplicate name: the %s at line 20 has it too", kinds[k],
             kinds[k]);
    CHECK(!compiles(s, &log));
    CHECK_MSG(strstr(log.error, want), "%s: %s", kinds[k], log.error);
  }
  s = hinge_spec();
  phys_spec_add_site(s, 1);
  phys_spec_add_site(s, 1);   // two unnamed sites
  int si = phys_spec_add_site(s, 1);
  strcpy(s->site[si].name, "link");   // a site named like a body
  CHECK_MSG(compiles(s, &log), "%s", log.error);
}

// geoms, joints and sites are numbered body by body even when a parent's come after a child in the file
static void test_ordering(void) {
  physSpec* s = phys_spec_new();
  int a = phys_spec_add_body(s, 0), b = phys_spec_add_body(s, a);
  phys_spec_add_joint(s, b, PHYS_JNT_SLIDE);
  phys_spec_add_geom(s, b, PHYS_GEOM_SPHERE);
  phys_spec_add_joint(s, a, PHYS_JNT_HINGE);
  phys_spec_add_geom(s, a, PHYS_GEOM_BOX);
  int s0 = phys_spec_add_site(s, b), s1 = phys_spec_add_site(s, a);
  s->site[s1].pos[0] = 1;
  int sp = phys_spec_add_spring(s);
  s->spring[sp].site[0] = s0;
  s->spring[sp].site[1] = s1;
  s->spring[sp].nsite = 2;
  s->geom[0].size[0] = 0.1;
  for (int k = 0; k < 3; k++) s->geom[1].size[k] = 0.1;
  physLog log = {0};
  physModel* m = phys_compile(s, &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  if (m) {
    CHECK(m->geom_bodyid[0] == a && m->geom_type[0] == PHYS_GEOM_BOX);
    CHECK(m->jnt_type[0] == PHYS_JNT_HINGE && m->jnt_bodyid[0] == a);
    CHECK(m->dof_parentid[1] == 0);
    CHECK(m->site_bodyid[0] == a && m->spring_site[0] == 1 && m->spring_site[1] == 0);
    CHECK_NEAR(m->spring_restlength[0], 1, 1e-15);  // length at qpos0
    phys_free_model(m);
  }
  phys_spec_free(s);
}

// geoms in groups above 5 carry no mass (MJCF inertiagrouprange "0 5")
static void test_group_mass(void) {
  physSpec* s = phys_spec_new();
  int b = phys_spec_add_body(s, 0);
  phys_spec_add_joint(s, b, PHYS_JNT_SLIDE);
  int g1 = phys_spec_add_geom(s, b, PHYS_GEOM_SPHERE), g2 = phys_spec_add_geom(s, b, PHYS_GEOM_SPHERE);
  s->geom[g1].size[0] = s->geom[g2].size[0] = 0.1;
  s->geom[g1].mass = 2;
  s->geom[g2].mass = 5;
  s->geom[g2].group = 6;
  physLog log = {0};
  physModel* m = phys_compile(s, &log);
  CHECK(m && m->body_mass[1] == 2);
  phys_free_model(m);
  s->geom[g2].group = 5;
  m = phys_compile(s, &log);
  CHECK(m && m->body_mass[1] == 7);
  phys_free_model(m);
  phys_spec_free(s);
}

// a free 0.1 m cube of the given mass (line 5 of box.xml) with contact model `contact`, timestep dt
static physSpec* box_spec(double mass, int contact, double dt) {
  physSpec* s = phys_spec_new();
  strcpy(s->filename, "box.xml");
  s->opt.contact = contact;
  s->opt.timestep = dt;
  int b = phys_spec_add_body(s, 0);
  strcpy(s->body[b].name, "box");
  s->body[b].line = 5;
  phys_spec_add_joint(s, b, PHYS_JNT_FREE);
  int g = phys_spec_add_geom(s, b, PHYS_GEOM_BOX);
  s->geom[g].size[0] = s->geom[g].size[1] = s->geom[g].size[2] = 0.05;
  s->geom[g].mass = mass;
  return s;
}

// compile box_spec's model; returns the number of loader warnings and the first in first (or "")
static int box_warnings(double mass, int contact, double dt, char* first, size_t n) {
  physSpec* s = box_spec(mass, contact, dt);
  physLog log = {0};
  physModel* m = phys_compile(s, &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  snprintf(first, n, "%s", log.nwarning ? log.warning[0] : "");
  phys_free_model(m);
  phys_spec_free(s);
  return log.nwarning;
}

// penalty contact (issue 10 item 12): a stiffness the step cannot integrate, and one too soft to hold a
// body's weight, are load-time warnings naming the body and the bound. The 1 kg cube's smallest effective
// mass at a contact (a corner, r = sqrt(3) 0.05 m from its centre, I = m 0.02 / 12) is
// m_e = 1 / (1 + r^2 / I) = 1 / 5.5 kg; with k_c = 1e4, dt = 10 ms: k_c dt^2 = 1 kg > 2 m_e, the bound
// dt < sqrt(2 m_e / k_c) = 6.03 ms. At 2 ms, or under lcp, nothing. 10,000 kg compress a contact spring by
// m g / k_c = 9.81 m, beyond the cube's reach r = 0.0866 m.
static void test_penalty_check(void) {
  char w[256];
  CHECK(box_warnings(1, PHYS_CONTACT_PENALTY, 0.01, w, sizeof w) == 1);
  CHECK_MSG(!strcmp(w, "box.xml:5: penalty contact: body 'box' needs dt < 0.00603 s or k_c < 3.64e+03 N/m (k_c dt^2 "
                      "= 1 kg > 2 m_e = 0.364 kg, m_e its least effective mass at a contact); its contacts are "
                      "damped to stay stable"), "%s", w);
  CHECK(box_warnings(1, PHYS_CONTACT_PENALTY, 0.002, w, sizeof w) == 0);
  CHECK(box_warnings(1, PHYS_CONTACT_LCP, 0.01, w, sizeof w) == 0);
  CHECK(box_warnings(1e4, PHYS_CONTACT_PENALTY, 0.002, w, sizeof w) == 1);
  CHECK_MSG(!strcmp(w, "box.xml:5: penalty contact: body 'box' needs k_c > 1.13e+06 N/m: its weight (10000 kg) "
                      "compresses one contact spring by m g / k_c = 9.81 m, more than its size 0.0866 m: it sinks "
                      "through"), "%s", w);
  // the API call on the compiled model says the same, naming the file without a line
  physSpec* s = box_spec(1, PHYS_CONTACT_LCP, 0.01);
  physLog log = {0};
  physModel* m = phys_compile(s, &log);
  strcpy(m->filename, "box.xml");
  m->opt.contact = PHYS_CONTACT_PENALTY;
  phys_penalty_check(m, &log);
  CHECK_MSG(log.nwarning == 1 && strstr(log.warning[0], "box.xml: penalty contact: body 'box' needs dt < 0.00603 s"), "%s",
            log.warning[0]);
  phys_free_model(m);
  phys_spec_free(s);
}

int main(void) {
  test_penalty_check();
  test_group_mass();
  test_two_spheres();
  test_primitive_inertia();
  test_errors();
  test_moving_inertia();
  test_duplicate_names();
  test_ordering();
  return test_done();
}
