// compile.c - spec -> physModel: sizes, addresses, qpos0, inertia from geoms, validation.
#include <math.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "dyn.h"
#include "hull.h"
#include "mesh.h"
#include "model.h"
#include "rot.h"
#include "spec.h"

#define PHYS_PI 3.14159265358979323846


static const int jnt_nq[4] = {7, 4, 1, 1};   // free, ball, slide, hinge
static const int jnt_nv[4] = {6, 3, 1, 1};

// "file:line: " prefix for messages about element x (its own file: MJCF includes)
#define where(s, x, buf, n) phys_spec_where(s, (x).fileid, (x).line, buf, n)

static int finite_n(const double* x, int n) {
  for (int i = 0; i < n; i++)
    if (!isfinite(x[i])) return 0;
  return 1;
}

//---------------------------------------------------------------------------------------------------------
// geom mass properties (MuJoCo's formulas, so that models match MuJoCo's compiled inertia)

// volume of a primitive geom (mesh: from the mesh); < 0 on degenerate sizes
static double geom_volume(const physSpecGeom* g) {
  const double* sz = g->size;
  switch (g->type) {
    case PHYS_GEOM_SPHERE: return 4.0 / 3.0 * PHYS_PI * sz[0] * sz[0] * sz[0];
    case PHYS_GEOM_CAPSULE: return PHYS_PI * sz[0] * sz[0] * (4.0 / 3.0 * sz[0] + 2 * sz[1]);
    case PHYS_GEOM_CYLINDER: return PHYS_PI * sz[0] * sz[0] * 2 * sz[1];
    case PHYS_GEOM_ELLIPSOID: return 4.0 / 3.0 * PHYS_PI * sz[0] * sz[1] * sz[2];
    case PHYS_GEOM_BOX: return 8 * sz[0] * sz[1] * sz[2];
    default: return 0;
  }
}

// principal inertia of a primitive geom of mass m about its centre, in the geom frame
static void geom_primitive_inertia(const physSpecGeom* g, double m, double I[3]) {
  const double* sz = g->size;
  double r = sz[0], r2 = r * r;
  switch (g->type) {
    case PHYS_GEOM_SPHERE:  // I = 2/5 m r^2
      I[0] = I[1] = I[2] = 0.4 * m * r2;
      break;
    case PHYS_GEOM_CAPSULE: {
      // cylinder of height H plus two hemispheres, each shifted to the cylinder's ends (MuJoCo's model)
      double H = 2 * sz[1];
      double ms = m * 4 * r / (4 * r + 3 * H), mc = m - ms;
      double shift = ms * H * (3 * r + 2 * H) / 8;
      I[0] = I[1] = mc * (3 * r2 + H * H) / 12 + 0.4 * ms * r2 + shift;
      I[2] = mc * r2 / 2 + 0.4 * ms * r2;
      break;
    }
    case PHYS_GEOM_CYLINDER: {  // Ixx = m (3r^2 + H^2)/12, Izz = m r^2/2
      double H = 2 * sz[1];
      I[0] = I[1] = m * (3 * r2 + H * H) / 12;
      I[2] = m * r2 / 2;
      break;
    }
    case PHYS_GEOM_ELLIPSOID:  // Ixx = m (b^2 + c^2)/5
      I[0] = m * (sz[1] * sz[1] + sz[2] * sz[2]) / 5;
      I[1] = m * (sz[0] * sz[0] + sz[2] * sz[2]) / 5;
      I[2] = m * (sz[0] * sz[0] + sz[1] * sz[1]) / 5;
      break;
    case PHYS_GEOM_BOX:  // Ixx = m (b^2 + c^2)/3 with half sizes
      I[0] = m * (sz[1] * sz[1] + sz[2] * sz[2]) / 3;
      I[1] = m * (sz[0] * sz[0] + sz[2] * sz[2]) / 3;
      I[2] = m * (sz[0] * sz[0] + sz[1] * sz[1]) / 3;
      break;
    default:
      I[0] = I[1] = I[2] = 0;
  }
}

physStatus phys_geom_inertia(const physSpecGeom* g, const physSpecMesh* mesh, double* mass, double com[3],
                             double inertia[6]) {
  memset(com, 0, 3 * sizeof(double));
  memset(inertia, 0, 6 * sizeof(double));
  *mass = 0;
  if (g->type == PHYS_GEOM_PLANE) return PHYS_OK;  // planes are static: no mass
  if (g->type == PHYS_GEOM_MESH) {
    double vol, I1[6];
    if (!mesh) return PHYS_ERR_MODEL;
    physStatus st = phys_mesh_inertia(mesh, &vol, com, I1);
    if (st != PHYS_OK) return st;
    if (vol <= 0) return PHYS_ERR_MODEL;
    *mass = g->mass >= 0 ? g->mass : g->density * vol;
    for (int i = 0; i < 6; i++) inertia[i] = I1[i] * (*mass / vol);  // unit-density inertia scaled
    return PHYS_OK;
  }
  double vol = geom_volume(g);
  if (!(vol > 0)) return PHYS_ERR_VALUE;
  *mass = g->mass >= 0 ? g->mass : g->density * vol;
  double I[3];
  geom_primitive_inertia(g, *mass, I);
  inertia[0] = I[0];
  inertia[1] = I[1];
  inertia[2] = I[2];
  return PHYS_OK;
}

//---------------------------------------------------------------------------------------------------------
// body inertia

// full 3x3 tensor R diag(I) R' (or R I6 R') from a 6-vector (xx yy zz xy xz yz) and a frame quat
static void rotate_inertia(double out[9], const double I6[6], const double quat[4]) {
  double R[9], A[9] = {I6[0], I6[3], I6[4], I6[3], I6[1], I6[5], I6[4], I6[5], I6[2]}, T[9];
  phys_quat2mat(R, quat);
  phys_mat_mul3(T, R, A);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) out[3 * i + j] = T[3 * i] * R[3 * j] + T[3 * i + 1] * R[3 * j + 1] + T[3 * i + 2] * R[3 * j + 2];
}

// add a point-mass-shifted inertia: J += Ic + m (|d|^2 E - d d')
static void add_shifted(double J[9], const double Ic[9], double m, const double d[3]) {
  double dd = phys_dot3(d, d);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) J[3 * i + j] += Ic[3 * i + j] + m * ((i == j ? dd : 0) - d[i] * d[j]);
}

// body mass, com and inertia tensor (about the com, body frame) summed from its geoms
static physStatus body_from_geoms(const physSpec* s, int b, double* mass, double com[3], double J[9],
                                  physLog* log) {
  double gm[64], gc[64][3], gI[64][9];
  int ng = 0;
  char buf[600];
  *mass = 0;
  memset(com, 0, 3 * sizeof(double));
  memset(J, 0, 9 * sizeof(double));
  // pass 1: each geom's mass, com (body frame) and tensor (body axes, about its com)
  for (int i = 0; i < s->ngeom; i++) {
    const physSpecGeom* g = s->geom + i;
    // MJCF inertiagrouprange "0 5": geoms in groups above 5 (visual-only by convention) carry no mass
    if (g->body != b || g->type == PHYS_GEOM_PLANE || g->group < 0 || g->group > 5) continue;
    if (ng == 64) return phys_error(log, PHYS_ERR_MODEL, "%sbody '%s': more than 64 geoms", where(s, s->body[b], buf, sizeof(buf)), s->body[b].name);
    double m, c[3], I6[6];
    const physSpecMesh* mesh = g->mesh >= 0 && g->mesh < s->nmesh ? s->mesh + g->mesh : NULL;
    physStatus st = phys_geom_inertia(g, mesh, &m, c, I6);
    if (st != PHYS_OK)
      return phys_error(log, st, "%s<geom name='%s'>: cannot compute its mass: %s", where(s, *g, buf, sizeof(buf)),
                        g->name,
                        g->type != PHYS_GEOM_MESH ? "degenerate size"
                        : st == PHYS_ERR_MODEL    ? "the mesh is open or inside-out (give the body an <inertial>)"
                                                  : "the mesh has no volume or no valid faces");
    phys_quat_rotate(gc[ng], g->quat, c);
    for (int k = 0; k < 3; k++) gc[ng][k] += g->pos[k];
    rotate_inertia(gI[ng], I6, g->quat);
    gm[ng] = m;
    *mass += m;
    ng++;
  }
  if (*mass <= 0) return PHYS_OK;
  // pass 2: com = sum m_i c_i / m;  J = sum I_i + m_i (|d_i|^2 E - d_i d_i'),  d_i = c_i - com
  for (int i = 0; i < ng; i++)
    for (int k = 0; k < 3; k++) com[k] += gm[i] * gc[i][k] / *mass;
  for (int i = 0; i < ng; i++) {
    double d[3] = {gc[i][0] - com[0], gc[i][1] - com[1], gc[i][2] - com[2]};
    add_shifted(J, gI[i], gm[i], d);
  }
  return PHYS_OK;
}

// set the model's body mass, ipos, iquat, principal inertia from the spec
static physStatus compile_body_inertia(const physSpec* s, physModel* m, physLog* log) {
  char buf[600];
  for (int b = 1; b < s->nbody; b++) {
    const physSpecBody* sb = s->body + b;
    int rule = sb->inertiafromgeom ? sb->inertiafromgeom - 1 : s->inertiafromgeom;   // the body's file's
    int from_geoms = rule == 1 || (rule == 2 && !sb->has_inertial);
    double mass = 0, com[3] = {0, 0, 0}, J[9] = {0};
    if (from_geoms) {
      physStatus st = body_from_geoms(s, b, &mass, com, J, log);
      if (st != PHYS_OK) return st;
    } else if (sb->has_inertial) {
      mass = sb->mass;
      phys_copy3(com, sb->ipos);
      double I6[6] = {sb->inertia[0], sb->inertia[1], sb->inertia[2], 0, 0, 0};
      if (sb->has_fullinertia) memcpy(I6, sb->fullinertia, sizeof(I6));
      rotate_inertia(J, I6, sb->iquat);
    }
    if (!(mass >= 0) || !finite_n(com, 3) || !finite_n(J, 9))
      return phys_error(log, PHYS_ERR_VALUE, "%sbody '%s': mass %g is negative or not finite",
                        where(s, *sb, buf, sizeof(buf)), sb->name, mass);
    double I[3], q[4];
    phys_eig3(I, q, J);
    // triangle inequality of principal moments: each <= sum of the other two (physical rigid body)
    double tol = 1e-10 * (I[0] + I[1] + I[2]);
    if (I[2] < -tol || I[0] > I[1] + I[2] + tol)
      return phys_error(log, PHYS_ERR_VALUE,
                        "%sbody '%s': inertia (%g %g %g) is not physical: a principal moment exceeds the sum of "
                        "the other two or is negative",
                        where(s, *sb, buf, sizeof(buf)), sb->name, I[0], I[1], I[2]);
    m->body_mass[b] = mass;
    phys_copy3(m->body_ipos + 3 * b, com);
    phys_copy3(m->body_inertia + 3 * b, I);
    memcpy(m->body_iquat + 4 * b, q, sizeof(q));
  }
  phys_quat_identity(m->body_iquat);
  return PHYS_OK;
}

// MJCF compiler settotalmass / boundmass / boundinertia
static void scale_masses(const physSpec* s, physModel* m) {
  for (int b = 1; b < m->nbody; b++) {
    if (s->boundmass > 0 && m->body_mass[b] < s->boundmass) m->body_mass[b] = s->boundmass;
    for (int k = 0; k < 3; k++)
      if (s->boundinertia > 0 && m->body_inertia[3 * b + k] < s->boundinertia) m->body_inertia[3 * b + k] = s->boundinertia;
  }
  if (s->settotalmass > 0) {
    double total = 0;
    for (int b = 1; b < m->nbody; b++) total += m->body_mass[b];
    if (total > 0) {
      double f = s->settotalmass / total;
      for (int b = 1; b < m->nbody; b++) {
        m->body_mass[b] *= f;
        for (int k = 0; k < 3; k++) m->body_inertia[3 * b + k] *= f;
      }
    }
  }
}

//---------------------------------------------------------------------------------------------------------
// names

static int add_name(physModel* m, int* pos, const char* name) {
  if (!name[0]) return -1;
  int adr = *pos;
  size_t len = strlen(name) + 1;
  if (m->names) memcpy(m->names + adr, name, len);
  *pos += (int)len;
  return adr;
}

static int names_size(const physSpec* s) {
  int n = 0;
#define NAMESUM(list) \
  for (int i = 0; i < s->n##list; i++) n += s->list[i].name[0] ? (int)strlen(s->list[i].name) + 1 : 0;
  NAMESUM(body) NAMESUM(joint) NAMESUM(geom) NAMESUM(site) NAMESUM(spring) NAMESUM(actuator) NAMESUM(sensor) NAMESUM(mesh) NAMESUM(key) NAMESUM(equality)
#undef NAMESUM
  return n + 1;
}

//---------------------------------------------------------------------------------------------------------
// sizes and validation of the tree

static physStatus compile_sizes(const physSpec* s, physModel* sz, physLog* log) {
  char buf[600];
  memset(sz, 0, sizeof(*sz));
  sz->nbody = s->nbody;
  sz->njnt = s->njoint;
  sz->ngeom = s->ngeom;
  sz->nsite = s->nsite;
  sz->nspring = s->nspring;
  sz->nu = s->nactuator;
  for (int i = 0; i < s->nactuator; i++) sz->na += s->actuator[i].dyntype != PHYS_DYN_NONE;
  sz->nsensor = s->nsensor;
  for (int i = 0; i < s->nsensor; i++) sz->nsensordata += phys_sensor_dim(s->sensor[i].type);
  sz->nmesh = s->nmesh;
  sz->nkey = s->nkey;
  sz->npair = s->npair;
  sz->nexclude = s->nexclude;
  sz->neq = s->nequality;   // issue 15 item 1 (compile_equality.c)
  // contact capacity: MJCF <size nconmax>, else 8 per geom (a box face gives 4), in [64, 256]; the arena
  // holds dense problems of 3*nconmax rows (phys_arena_size: about 11 (3 nconmax)^2 doubles for lcp's
  // Jacobian chain, Atlas at nconmax 240: 59.5 MB)
  int ncon_default = 8 * s->ngeom < 64 ? 64 : 8 * s->ngeom > 256 ? 256 : 8 * s->ngeom;
  sz->nconmax = s->nconmax > 0 ? s->nconmax : ncon_default;
  for (int b = 1; b < s->nbody; b++)
    if (s->body[b].parent < 0 || s->body[b].parent >= b)
      return phys_error(log, PHYS_ERR_MODEL, "%sbody '%s': parent must come before the body",
                        where(s, s->body[b], buf, sizeof(buf)), s->body[b].name);
  for (int j = 0; j < s->njoint; j++) {
    const physSpecJoint* sj = s->joint + j;
    if (sj->body < 1 || sj->body >= s->nbody || sj->type < 0 || sj->type > PHYS_JNT_HINGE)
      return phys_error(log, PHYS_ERR_MODEL, "%sjoint '%s': invalid body or type",
                        where(s, *sj, buf, sizeof(buf)), sj->name);
    if (sj->type == PHYS_JNT_FREE && s->body[sj->body].parent != 0)
      return phys_error(log, PHYS_ERR_MODEL, "%sjoint '%s': a free joint can only be used on a child of the world",
                        where(s, *sj, buf, sizeof(buf)), sj->name);
    sz->nq += jnt_nq[sj->type];
    sz->nv += jnt_nv[sj->type];
  }
  for (int i = 0; i < s->nspring; i++) sz->nspringsite += s->spring[i].nsite;
  for (int i = 0; i < s->nmesh; i++) {
    sz->nmeshvert += s->mesh[i].nvert;
    sz->nmeshface += s->mesh[i].nface;
  }
  physStatus hst = phys_hull_sizes(s, sz, log);  // convex hulls of collidable meshes (qhull)
  if (hst != PHYS_OK) return hst;
  sz->nnames = names_size(s);
  sz->opt = s->opt;
  snprintf(sz->modelname, sizeof(sz->modelname), "%s", s->modelname);
  snprintf(sz->filename, sizeof(sz->filename), "%s", s->filename);
  return PHYS_OK;
}

//---------------------------------------------------------------------------------------------------------
// bodies and joints

static void compile_bodies(const physSpec* s, physModel* m, int* namepos) {
  for (int b = 0; b < s->nbody; b++) {
    const physSpecBody* sb = s->body + b;
    m->body_parentid[b] = sb->parent;
    m->body_rootid[b] = b == 0 ? 0 : (sb->parent == 0 ? b : m->body_rootid[sb->parent]);
    phys_copy3(m->body_pos + 3 * b, sb->pos);
    memcpy(m->body_quat + 4 * b, sb->quat, 4 * sizeof(double));
    phys_quat_normalize(m->body_quat + 4 * b);
    m->body_jntadr[b] = m->body_dofadr[b] = m->body_geomadr[b] = -1;
    m->body_weldid[b] = b;  // made final by compile_welds once joints are known
    m->body_name[b] = add_name(m, namepos, sb->name);
  }
  phys_quat_identity(m->body_quat);
}

// joint, dof and qpos0 arrays; dof_parentid chains through ancestors
static physStatus compile_joints(const physSpec* s, physModel* m, int* namepos, physLog* log) {
  char buf[600];
  int qadr = 0, vadr = 0;
  int* lastdof = calloc((size_t)m->nbody, sizeof(int));  // last dof of the path root..body
  if (!lastdof) return phys_error(log, PHYS_ERR_NOMEM, "out of memory");
  for (int b = 0; b < m->nbody; b++) lastdof[b] = b ? lastdof[m->body_parentid[b]] : -1;
  for (int j = 0; j < s->njoint; j++) {
    const physSpecJoint* sj = s->joint + j;
    int b = sj->body, t = sj->type;
    if (!finite_n(sj->pos, 3) || !finite_n(sj->axis, 3) || !finite_n(sj->range, 2) || !isfinite(sj->stiffness) ||
        !isfinite(sj->damping) || !isfinite(sj->armature) || !isfinite(sj->ref) || !isfinite(sj->springref) ||
        !isfinite(sj->frictionloss) || sj->stiffness < 0 || sj->damping < 0 || sj->armature < 0 || sj->frictionloss < 0) {
      free(lastdof);
      return phys_error(log, PHYS_ERR_VALUE, "%sjoint '%s': values must be finite; stiffness, damping, armature, frictionloss >= 0",
                        where(s, *sj, buf, sizeof(buf)), sj->name);
    }
    if (sj->limited && sj->range[0] > sj->range[1]) {
      free(lastdof);
      return phys_error(log, PHYS_ERR_VALUE, "%sjoint '%s': range lower %g > upper %g",
                        where(s, *sj, buf, sizeof(buf)), sj->name, sj->range[0], sj->range[1]);
    }
    m->jnt_type[j] = t;
    m->jnt_bodyid[j] = b;
    m->jnt_qposadr[j] = qadr;
    m->jnt_dofadr[j] = vadr;
    m->jnt_limited[j] = sj->limited;
    m->jnt_name[j] = add_name(m, namepos, sj->name);
    phys_copy3(m->jnt_pos + 3 * j, t == PHYS_JNT_FREE ? (double[3]){0, 0, 0} : sj->pos);
    phys_copy3(m->jnt_axis + 3 * j, sj->axis);
    if ((t == PHYS_JNT_HINGE || t == PHYS_JNT_SLIDE) && phys_normalize3(m->jnt_axis + 3 * j) < 1e-14) {
      free(lastdof);
      return phys_error(log, PHYS_ERR_VALUE, "%sjoint '%s': axis has zero length", where(s, *sj, buf, sizeof(buf)), sj->name);
    }
    m->jnt_stiffness[j] = sj->stiffness;
    m->jnt_range[2 * j] = sj->range[0];
    m->jnt_range[2 * j + 1] = sj->range[1];
    if (m->body_jntadr[b] < 0) m->body_jntadr[b] = j;
    m->body_jntnum[b]++;
    // qpos0 and spring reference
    double* q0 = m->qpos0 + qadr;
    double* qs = m->qpos_spring + qadr;
    if (t == PHYS_JNT_FREE) {
      phys_copy3(q0, m->body_pos + 3 * b);
      memcpy(q0 + 3, m->body_quat + 4 * b, 4 * sizeof(double));
      memcpy(qs, q0, 7 * sizeof(double));
    } else if (t == PHYS_JNT_BALL) {
      phys_quat_identity(q0);
      phys_quat_identity(qs);
    } else {
      q0[0] = sj->ref;
      qs[0] = sj->springref;
    }
    // dofs
    for (int k = 0; k < jnt_nv[t]; k++) {
      int d = vadr + k;
      m->dof_bodyid[d] = b;
      m->dof_jntid[d] = j;
      m->dof_parentid[d] = lastdof[b];
      m->dof_damping[d] = sj->damping;
      m->dof_armature[d] = sj->armature;
      m->dof_frictionloss[d] = sj->frictionloss;
      lastdof[b] = d;
      if (m->body_dofadr[b] < 0) m->body_dofadr[b] = d;
      m->body_dofnum[b]++;
    }
    // children created later inherit this body's last dof
    for (int c = b + 1; c < m->nbody; c++) lastdof[c] = lastdof[m->body_parentid[c]];
    qadr += jnt_nq[t];
    vadr += jnt_nv[t];
  }
  free(lastdof);
  for (int d = 0; d < m->nv; d++) m->nfrictionloss += m->dof_frictionloss[d] > 0;
  return PHYS_OK;
}

//---------------------------------------------------------------------------------------------------------
// geoms, sites, meshes

// radius of geom g's bounding sphere about its frame at its sizes (model.h; 0: infinite)
double phys_geom_rbound(const physModel* m, int g) {
  const double* sz = m->geom_size + 3 * g;
  switch (m->geom_type[g]) {
    case PHYS_GEOM_SPHERE: return sz[0];
    case PHYS_GEOM_CAPSULE: return sz[0] + sz[1];
    case PHYS_GEOM_CYLINDER: return sqrt(sz[0] * sz[0] + sz[1] * sz[1]);
    case PHYS_GEOM_ELLIPSOID: return fmax(sz[0], fmax(sz[1], sz[2]));
    case PHYS_GEOM_BOX: return phys_norm3(sz);
    case PHYS_GEOM_MESH: {
      int id = m->geom_dataid[g];
      double r = 0;
      for (int v = 0; v < m->mesh_vertnum[id]; v++) r = fmax(r, phys_norm3(m->mesh_vert + 3 * (m->mesh_vertadr[id] + v)));
      return r;
    }
    default: return 0;
  }
}

static const int geom_nsize[PHYS_NGEOMTYPE] = {0, 1, 2, 3, 2, 3, 0};

static physStatus compile_geoms(const physSpec* s, physModel* m, int* namepos, physLog* log) {
  char buf[600];
  for (int g = 0; g < s->ngeom; g++) {
    const physSpecGeom* sg = s->geom + g;
    const char* at = where(s, *sg, buf, sizeof(buf));
    if (sg->body < 0 || sg->body >= s->nbody || sg->type < 0 || sg->type >= PHYS_NGEOMTYPE)
      return phys_error(log, PHYS_ERR_MODEL, "%s<geom name='%s'>: invalid body or type", at, sg->name);
    for (int k = 0; k < geom_nsize[sg->type]; k++)
      if (!(sg->size[k] > 0) || !isfinite(sg->size[k]))
        return phys_error(log, PHYS_ERR_VALUE, "%s<geom name='%s'>: size[%d] = %g must be positive and finite", at,
                          sg->name, k, sg->size[k]);
    if (!finite_n(sg->pos, 3) || !finite_n(sg->quat, 4) || !finite_n(sg->friction, 3) || !isfinite(sg->margin))
      return phys_error(log, PHYS_ERR_VALUE, "%s<geom name='%s'>: values must be finite", at, sg->name);
    if (sg->friction[0] < 0 || sg->friction[1] < 0 || sg->friction[2] < 0)
      return phys_error(log, PHYS_ERR_VALUE, "%s<geom name='%s'>: friction must be >= 0", at, sg->name);
    if (!(sg->restitution >= 0 && sg->restitution <= 1))
      return phys_error(log, PHYS_ERR_VALUE, "%s<geom name='%s'>: restitution %g outside [0, 1]", at, sg->name, sg->restitution);
    if (sg->type == PHYS_GEOM_MESH && (sg->mesh < 0 || sg->mesh >= s->nmesh))
      return phys_error(log, PHYS_ERR_MODEL, "%s<geom name='%s'>: mesh geom without a mesh", at, sg->name);
    if (sg->type == PHYS_GEOM_PLANE && sg->body != 0 && s->body[sg->body].parent >= 0) {
      // planes are allowed on static bodies only: a body with no joints on its path to the world
      int b = sg->body, moving = 0;
      while (b > 0) {
        for (int j = 0; j < s->njoint; j++) moving |= s->joint[j].body == b;
        b = s->body[b].parent;
      }
      if (moving) return phys_error(log, PHYS_ERR_MODEL, "%s<geom name='%s'>: a plane must be static (not on a moving body)", at, sg->name);
    }
    int b = sg->body;
    m->geom_type[g] = sg->type;
    m->geom_bodyid[g] = b;
    m->geom_contype[g] = sg->contype;
    m->geom_conaffinity[g] = sg->conaffinity;
    m->geom_condim[g] = sg->condim;
    m->geom_dataid[g] = sg->type == PHYS_GEOM_MESH ? sg->mesh : -1;
    m->geom_name[g] = add_name(m, namepos, sg->name);
    phys_copy3(m->geom_pos + 3 * g, sg->pos);
    memcpy(m->geom_quat + 4 * g, sg->quat, 4 * sizeof(double));
    phys_quat_normalize(m->geom_quat + 4 * g);
    phys_copy3(m->geom_size + 3 * g, sg->size);
    phys_copy3(m->geom_friction + 3 * g, sg->friction);
    m->geom_restitution[g] = sg->restitution;
    m->geom_margin[g] = sg->margin;
    memcpy(m->geom_rgba + 4 * g, sg->rgba, 4 * sizeof(double));
    memcpy(m->geom_visrgba + 4 * g, phys_spec_geom_drawn_rgba(sg), 4 * sizeof(double));
    if (m->body_geomadr[b] < 0) m->body_geomadr[b] = g;
    m->body_geomnum[b]++;
  }
  return PHYS_OK;
}

static void compile_meshes(const physSpec* s, physModel* m, int* namepos) {
  int va = 0, fa = 0;
  for (int i = 0; i < s->nmesh; i++) {
    const physSpecMesh* sm = s->mesh + i;
    m->mesh_vertadr[i] = va;
    m->mesh_vertnum[i] = sm->nvert;
    m->mesh_faceadr[i] = fa;
    m->mesh_facenum[i] = sm->nface;
    m->mesh_name[i] = add_name(m, namepos, sm->name);
    if (sm->nvert) memcpy(m->mesh_vert + 3 * va, sm->vert, sizeof(double) * 3 * (size_t)sm->nvert);
    if (sm->nface) memcpy(m->mesh_face + 3 * fa, sm->face, sizeof(int) * 3 * (size_t)sm->nface);
    va += sm->nvert;
    fa += sm->nface;
  }
}

static physStatus compile_sites(const physSpec* s, physModel* m, int* namepos, physLog* log) {
  char buf[600];
  for (int i = 0; i < s->nsite; i++) {
    const physSpecSite* ss = s->site + i;
    if (ss->body < 0 || ss->body >= s->nbody || !finite_n(ss->pos, 3) || !finite_n(ss->quat, 4))
      return phys_error(log, PHYS_ERR_MODEL, "%s<site name='%s'>: invalid body or non-finite frame",
                        where(s, *ss, buf, sizeof(buf)), ss->name);
    m->site_bodyid[i] = ss->body;
    m->site_name[i] = add_name(m, namepos, ss->name);
    phys_copy3(m->site_pos + 3 * i, ss->pos);
    memcpy(m->site_quat + 4 * i, ss->quat, 4 * sizeof(double));
    phys_quat_normalize(m->site_quat + 4 * i);
    m->site_type[i] = ss->type;
    phys_copy3(m->site_size + 3 * i, ss->size);
  }
  return PHYS_OK;
}

//---------------------------------------------------------------------------------------------------------
// springs and actuators

// world position p (in: in body's frame) and orientation q (in: in body's frame; NULL to skip) at qpos_spring,
// where MuJoCo 2.2.2 measures a spring's default rest length (tendon_lengthspring when springlength < 0; checked
// in tests/model/test_oracle_mjcf.c). Body frames are body_pos/body_quat at qpos0; a body's joints then move a
// point p of its frame, last joint first: hinge p <- a + R(axis, qs - q0) (p - a) about the anchor a (q <- R q),
// slide p <- p + axis (qs - q0); ball and free joints have qpos_spring = qpos0 and do not move.
static void frame0(const physModel* m, int body, double p[3], double* q) {
  for (int b = body; b > 0; b = m->body_parentid[b]) {
    for (int j = m->body_jntadr[b] + m->body_jntnum[b] - 1; m->body_jntnum[b] > 0 && j >= m->body_jntadr[b]; j--) {
      int a = m->jnt_qposadr[j];
      double dq = m->qpos_spring[a] - m->qpos0[a], r[4], d[3];
      const double* anchor = m->jnt_pos + 3 * j;
      const double* axis = m->jnt_axis + 3 * j;
      if (dq == 0) continue;
      if (m->jnt_type[j] == PHYS_JNT_HINGE) {
        for (int k = 0; k < 3; k++) d[k] = p[k] - anchor[k];
        phys_axisangle2quat(r, axis, dq);
        phys_quat_rotate(d, r, d);
        for (int k = 0; k < 3; k++) p[k] = anchor[k] + d[k];
        if (q) phys_quat_mul(q, r, q);
      } else if (m->jnt_type[j] == PHYS_JNT_SLIDE) {
        for (int k = 0; k < 3; k++) p[k] += axis[k] * dq;
      }
    }
    phys_quat_rotate(p, m->body_quat + 4 * b, p);
    for (int k = 0; k < 3; k++) p[k] += m->body_pos[3 * b + k];
    if (q) phys_quat_mul(q, m->body_quat + 4 * b, q);
  }
}

// world position of a site at qpos_spring (frame0)
static void site_pos0(const physModel* m, int site, double out[3]) {
  phys_copy3(out, m->site_pos + 3 * site);
  frame0(m, m->site_bodyid[site], out, NULL);
}

// world frame of geom g at qpos_spring (frame0) as position and row-major rotation
static void geom_frame0(const physModel* m, int g, double pos[3], double mat[9]) {
  double q[4] = {m->geom_quat[4 * g], m->geom_quat[4 * g + 1], m->geom_quat[4 * g + 2], m->geom_quat[4 * g + 3]};
  phys_copy3(pos, m->geom_pos + 3 * g);
  frame0(m, m->geom_bodyid[g], pos, q);
  phys_quat2mat(mat, q);
}

static physStatus check_path(const physSpec* s, const physSpecSpring* sp, const char* at, physLog* log) {
  int nsite = 0, n = sp->nsite;
  const int* t = sp->objtype;
  for (int k = 0; k < n; k++) {
    int id = sp->site[k], site = t[k] == PHYS_WRAP_SITE, geom = t[k] == PHYS_WRAP_SPHERE || t[k] == PHYS_WRAP_CYLINDER;
    const char* bad = NULL;
    if (site && (id < 0 || id >= s->nsite)) bad = "invalid site";
    else if (geom && (id < 0 || id >= s->ngeom)) bad = "invalid geom";
    else if (geom && s->geom[id].type != (t[k] == PHYS_WRAP_SPHERE ? PHYS_GEOM_SPHERE : PHYS_GEOM_CYLINDER))
      bad = "a wrapped geom must be a sphere or a cylinder";
    else if (geom && (sp->prm[k] < -1 || sp->prm[k] >= s->nsite || sp->prm[k] != floor(sp->prm[k]))) bad = "invalid side site";
    else if (geom && (k == 0 || k == n - 1 || t[k - 1] != PHYS_WRAP_SITE || t[k + 1] != PHYS_WRAP_SITE))
      bad = "a wrapped geom must be between two sites";
    else if (t[k] == PHYS_WRAP_PULLEY && !(sp->prm[k] > 0 && isfinite(sp->prm[k]))) bad = "a pulley's divisor must be finite and > 0";
    else if (t[k] == PHYS_WRAP_PULLEY && (k == 0 || k == n - 1)) bad = "a path cannot begin or end with a pulley";
    else if (site && (k == 0 || t[k - 1] == PHYS_WRAP_PULLEY) && (k == n - 1 || t[k + 1] == PHYS_WRAP_PULLEY))
      bad = "each site needs a neighbour that is not a pulley";
    else if (!site && !geom && t[k] != PHYS_WRAP_PULLEY) bad = "invalid path entry";
    if (bad) return phys_error(log, PHYS_ERR_MODEL, "%stendon '%s': entry %d: %s", at, sp->name, k, bad);
    nsite += site;
  }
  if (nsite < 2) return phys_error(log, PHYS_ERR_MODEL, "%sspring '%s': needs at least 2 sites", at, sp->name);
  return PHYS_OK;
}

// rest lengths of the spatial tendons that wrap geoms or pass pulleys and have springlength < 0: the path
// length (phys_tendon_path) at qpos_spring, as MuJoCo 2.2.2's tendon_lengthspring
static physStatus wrapped_restlengths(const physSpec* s, physModel* m, physLog* log) {
  int any = 0;
  for (int i = 0; i < m->nspring; i++) any |= s->spring[i].restlength < 0 && m->spring_type[i] == PHYS_SPRING_PATH &&
                                            !phys_tendon_plain(m, i);
  if (!any) return PHYS_OK;
  double* sx = malloc(sizeof(double) * (3 * (size_t)m->nsite + 12 * (size_t)m->ngeom + 1));
  if (!sx) return phys_error(log, PHYS_ERR_NOMEM, "%s: out of memory", s->filename);
  double *gx = sx + 3 * m->nsite, *gm = gx + 3 * m->ngeom;
  for (int i = 0; i < m->nsite; i++) site_pos0(m, i, sx + 3 * i);
  for (int g = 0; g < m->ngeom; g++) geom_frame0(m, g, gx + 3 * g, gm + 9 * g);
  for (int i = 0; i < m->nspring; i++) {
    if (s->spring[i].restlength >= 0 || m->spring_type[i] != PHYS_SPRING_PATH || phys_tendon_plain(m, i)) continue;
    physTendonPath p;
    phys_tendon_path(m, i, sx, gx, gm, &p);
    double len = 0;
    for (int k = 0; k + 1 < p.npoint; k++) {
      double d[3] = {p.x[k + 1][0] - p.x[k][0], p.x[k + 1][1] - p.x[k][1], p.x[k + 1][2] - p.x[k][2]};
      len += p.w[k] * phys_norm3(d);
    }
    m->spring_restlength[i] = len + p.arcs;
  }
  free(sx);
  return PHYS_OK;
}

static physStatus compile_springs(const physSpec* s, physModel* m, int* namepos, physLog* log) {
  char buf[600];
  int adr = 0;
  for (int i = 0; i < s->nspring; i++) {
    const physSpecSpring* sp = s->spring + i;
    const char* at = where(s, *sp, buf, sizeof(buf));
    int fixed = sp->type == PHYS_SPRING_FIXED;
    if (sp->type != PHYS_SPRING_PATH && !fixed)
      return phys_error(log, PHYS_ERR_MODEL, "%sspring '%s': invalid type %d", at, sp->name, sp->type);
    if (sp->nsite < 2 - fixed)
      return phys_error(log, PHYS_ERR_MODEL, "%sspring '%s': needs at least %s", at, sp->name, fixed ? "1 joint" : "2 sites");
    if (!(sp->stiffness >= 0) || !(sp->damping >= 0) || !isfinite(sp->stiffness) || !isfinite(sp->damping) || !isfinite(sp->restlength))
      return phys_error(log, PHYS_ERR_VALUE, "%sspring '%s': stiffness and damping must be finite and >= 0", at, sp->name);
    m->spring_adr[i] = adr;
    m->spring_num[i] = sp->nsite;
    m->spring_name[i] = add_name(m, namepos, sp->name);
    m->spring_stiffness[i] = sp->stiffness;
    m->spring_damping[i] = sp->damping;
    m->spring_type[i] = sp->type;
    if (sp->limited && !(sp->range[0] < sp->range[1]))   // (finite: NaN and inf fail or are caught below)
      return phys_error(log, PHYS_ERR_VALUE, "%stendon '%s': a limited tendon needs range lower < upper", at, sp->name);
    if (sp->limited && !finite_n(sp->range, 2))
      return phys_error(log, PHYS_ERR_VALUE, "%stendon '%s': range must be finite", at, sp->name);
    if (!(sp->frictionloss >= 0) || !isfinite(sp->frictionloss))
      return phys_error(log, PHYS_ERR_VALUE, "%stendon '%s': frictionloss must be finite and >= 0", at, sp->name);
    m->spring_frictionloss[i] = sp->frictionloss;
    m->spring_limited[i] = sp->limited != 0;
    m->spring_range[2 * i] = sp->range[0], m->spring_range[2 * i + 1] = sp->range[1];
    double len = 0;
    if (fixed) {
      if (!finite_n(sp->prm, sp->nsite))
        return phys_error(log, PHYS_ERR_VALUE, "%sfixed tendon '%s': coef must be finite", at, sp->name);
      for (int k = 0; k < sp->nsite; k++) {
        int j = sp->site[k];
        if (j < 0 || j >= s->njoint || (s->joint[j].type != PHYS_JNT_HINGE && s->joint[j].type != PHYS_JNT_SLIDE))
          return phys_error(log, PHYS_ERR_MODEL, "%sfixed tendon '%s': its joints must be hinges or slides", at, sp->name);
        m->spring_site[adr + k] = j;
        m->spring_prm[adr + k] = sp->prm[k];
        len += sp->prm[k] * m->qpos_spring[m->jnt_qposadr[j]];
      }
    }
    if (!fixed) {
      physStatus st = check_path(s, sp, at, log);
      if (st != PHYS_OK) return st;
    }
    for (int k = 0; k < sp->nsite && !fixed; k++) {
      m->spring_site[adr + k] = sp->site[k];
      m->spring_objtype[adr + k] = sp->objtype[k];
      m->spring_prm[adr + k] = sp->objtype[k] == PHYS_WRAP_SITE ? 0 : sp->prm[k];
      if (k && sp->objtype[k] == PHYS_WRAP_SITE && sp->objtype[k - 1] == PHYS_WRAP_SITE) {
        double a[3], b[3];
        site_pos0(m, sp->site[k - 1], a);
        site_pos0(m, sp->site[k], b);
        double d[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
        len += phys_norm3(d);
      }
    }
    if (fixed)
      for (int k = 0; k < sp->nsite; k++) m->spring_objtype[adr + k] = PHYS_WRAP_JOINT;
    m->spring_restlength[i] = sp->restlength >= 0 ? sp->restlength : len;
    adr += sp->nsite;
  }
  return wrapped_restlengths(s, m, log);
}

static int find_named(const char* name, const void* list, int n, size_t stride);   // (sensors, below)

// actuator i's dynamics and limits (issue 15 item 2): its activation's index (the next of *na) when it has
// dynamics; refused: non-finite values, a negative filter time constant, a range with lower > upper
static physStatus actuator_dynamics(const physSpecActuator* a, const char* at, physModel* m, int i, int* na,
                                    physLog* log) {
  if (!finite_n(a->dynprm, 3) || !finite_n(a->forcerange, 2) || !finite_n(a->actrange, 2))
    return phys_error(log, PHYS_ERR_VALUE, "%sactuator '%s': dynprm, forcerange and actrange must be finite", at,
                      a->name);
  if (a->dyntype == PHYS_DYN_FILTER && a->dynprm[0] < 0)
    return phys_error(log, PHYS_ERR_VALUE, "%sactuator '%s': the filter's time constant dynprm[0] = %g is negative",
                      at, a->name, a->dynprm[0]);
  if ((a->forcelimited && a->forcerange[0] >= a->forcerange[1]) || (a->actlimited && a->actrange[0] >= a->actrange[1]))
    return phys_error(log, PHYS_ERR_VALUE, "%sactuator '%s': forcerange and actrange need lower < upper (MuJoCo 2.2.2: "
                      "\"invalid force range\", \"invalid activation range\")", at, a->name);
  if (a->dyntype == PHYS_DYN_NONE && *na > 0)
    return phys_error(log, PHYS_ERR_MODEL, "%sactuator '%s': actuators without dynamics must come before those with "
                      "dynamics (MuJoCo 2.2.2 refuses this order too)", at, a->name);
  if (a->dyntype != PHYS_DYN_NONE && a->trntype == PHYS_TRN_RESTLENGTH)
    return phys_error(log, PHYS_ERR_MODEL, "%sactuator '%s': a rest-length actuator has no dynamics", at, a->name);
  m->actuator_dyntype[i] = a->dyntype;
  m->actuator_actadr[i] = a->dyntype != PHYS_DYN_NONE ? (*na)++ : -1;
  m->actuator_forcelimited[i] = a->forcelimited;
  m->actuator_actlimited[i] = a->actlimited;
  memcpy(m->actuator_dynprm + 3 * i, a->dynprm, 3 * sizeof(double));
  memcpy(m->actuator_forcerange + 2 * i, a->forcerange, 2 * sizeof(double));
  memcpy(m->actuator_actrange + 2 * i, a->actrange, 2 * sizeof(double));
  return PHYS_OK;
}

// actuator i's muscle parameters, lengthrange and slider-crank (issue 15 items 2 and 6): gain and bias types and
// their parameters, the slider site resolved by name and the crank length; refused: non-finite values, a muscle on
// a site or on a ball or free joint (MuJoCo's length there is 0), a missing slider site
static physStatus actuator_muscle(const physSpec* s, const physSpecActuator* a, const char* at, physModel* m, int i,
                                  physLog* log) {
  if (!finite_n(a->musclegain, 9) || !finite_n(a->musclebias, 9) || !finite_n(a->lengthrange, 2) ||
      !isfinite(a->cranklength))
    return phys_error(log, PHYS_ERR_VALUE, "%sactuator '%s': the muscle parameters, lengthrange and cranklength must "
                      "be finite", at, a->name);
  int muscle = a->gaintype == PHYS_GAIN_MUSCLE || a->biastype == PHYS_GAIN_MUSCLE || a->dyntype == PHYS_DYN_MUSCLE;
  int id = a->trntype == PHYS_TRN_JOINT ? find_named(a->target, s->joint, s->njoint, sizeof(*s->joint)) : -1;
  if (muscle && (a->trntype == PHYS_TRN_SITE || (id >= 0 && s->joint[id].type != PHYS_JNT_HINGE &&
                                                 s->joint[id].type != PHYS_JNT_SLIDE)))
    return phys_error(log, PHYS_ERR_MODEL, "%sactuator '%s': muscles act on hinge and slide joints, tendons and "
                      "slider-cranks (their length is what the muscle's curves read)", at, a->name);
  for (int k = 0; k < 2; k++) {   // MuJoCo 2.2.2's checks of a muscle gain's and bias's parameters (it refuses these too)
    const double* p = k ? a->musclebias : a->musclegain;
    if ((k ? a->biastype : a->gaintype) != PHYS_GAIN_MUSCLE) continue;
    if (!(p[0] < p[1]))
      return phys_error(log, PHYS_ERR_VALUE, "%sactuator '%s': a muscle needs range[0] < range[1]", at, a->name);
    if (!(p[3] > 0 && p[6] > 0 && p[7] > 0 && p[8] > 0))
      return phys_error(log, PHYS_ERR_VALUE, "%sactuator '%s': a muscle needs scale, vmax, fpmax and fvmax > 0", at,
                        a->name);
    if (!(p[4] < 1 && p[5] > 1))
      return phys_error(log, PHYS_ERR_VALUE, "%sactuator '%s': a muscle needs lmin < 1 < lmax", at, a->name);
  }
  m->actuator_gaintype[i] = a->gaintype;
  m->actuator_biastype[i] = a->biastype;
  memcpy(m->actuator_muscleprm + 18 * i, a->musclegain, 9 * sizeof(double));
  memcpy(m->actuator_muscleprm + 18 * i + 9, a->musclebias, 9 * sizeof(double));
  memcpy(m->actuator_lengthrange + 2 * i, a->lengthrange, 2 * sizeof(double));
  m->actuator_trnid2[i] = -1;
  if (a->trntype != PHYS_TRN_SLIDERCRANK) return PHYS_OK;
  m->actuator_trnid2[i] = find_named(a->slider, s->site, s->nsite, sizeof(*s->site));
  m->actuator_cranklength[i] = a->cranklength;
  if (m->actuator_trnid2[i] < 0)
    return phys_error(log, PHYS_ERR_MODEL, "%sactuator '%s': slidersite '%s' not found", at, a->name, a->slider);
  return PHYS_OK;
}

// the muscles' lengthrange and acc0 (phys_actuator_setconst, at qpos0 once the model is complete); refused: a
// muscle without lengthrange whose length depends on a joint without a range
static physStatus compile_muscles(const physSpec* s, physModel* m, physLog* log) {
  char buf[600];
  int joint, a = phys_actuator_setconst(m, &joint);
  if (a < 0) return PHYS_OK;
  if (joint == -2) return phys_error(log, PHYS_ERR_NOMEM, "%s: out of memory", s->filename);
  const char* at = where(s, s->actuator[a], buf, sizeof(buf));
  if (joint == -3)
    return phys_error(log, PHYS_ERR_MODEL, "%sthe mass matrix at qpos0 is not positive definite: the muscles' acc0 "
                      "cannot be computed", at);
  return phys_error(log, PHYS_ERR_MODEL, "%sactuator '%s': give the muscle a 'lengthrange': its length depends on "
                    "joint '%s', which has no range (physid takes the length range over the corners of the joints' "
                    "ranges; MuJoCo 2.2.2 simulates the model, mj_setLengthRange)", at, s->actuator[a].name,
                    phys_id2name(m, "joint", joint) ? phys_id2name(m, "joint", joint) : "(unnamed)");
}

static physStatus compile_actuators(const physSpec* s, physModel* m, int* namepos, physLog* log) {
  char buf[600];
  int na = 0;
  physStatus st;
  for (int i = 0; i < s->nactuator; i++) {
    const physSpecActuator* a = s->actuator + i;
    const char* at = where(s, *a, buf, sizeof(buf));
    int id = -1;
    if (a->trntype == PHYS_TRN_JOINT) {
      for (int j = 0; j < s->njoint && id < 0; j++)
        if (strcmp(s->joint[j].name, a->target) == 0) id = j;
    } else if (a->trntype == PHYS_TRN_SITE || a->trntype == PHYS_TRN_SLIDERCRANK) {
      id = find_named(a->target, s->site, s->nsite, sizeof(*s->site));
    } else if (a->trntype == PHYS_TRN_BODY) {   // (adhesion; the world body 0 too, as MuJoCo)
      id = find_named(a->target, s->body, s->nbody, sizeof(*s->body));
    } else {
      for (int j = 0; j < s->nspring && id < 0; j++)
        if (strcmp(s->spring[j].name, a->target) == 0) id = j;
    }
    if (id < 0)
      return phys_error(log, PHYS_ERR_MODEL, "%sactuator '%s': %s '%s' not found", at, a->name,
                        a->trntype == PHYS_TRN_JOINT ? "joint" : (a->trntype == PHYS_TRN_SPRING ? "tendon" :
                        (a->trntype == PHYS_TRN_BODY ? "body" : "site")), a->target);
    if (!finite_n(a->gear, 6) || !finite_n(a->ctrlrange, 2) || (a->ctrllimited && a->ctrlrange[0] >= a->ctrlrange[1]))
      return phys_error(log, PHYS_ERR_VALUE, "%sactuator '%s': gear and ctrlrange must be finite, lower < upper (MuJoCo "
                        "2.2.2: \"invalid control range\")", at, a->name);
    if (!finite_n(a->gainprm, 3) || !finite_n(a->biasprm, 3))
      return phys_error(log, PHYS_ERR_VALUE, "%sactuator '%s': gainprm and biasprm must be finite", at, a->name);
    if ((st = actuator_muscle(s, a, at, m, i, log))) return st;
    if (a->trntype != PHYS_TRN_SLIDERCRANK &&
        (a->gainprm[1] != 0 || a->gainprm[2] != 0 || a->biasprm[1] != 0 || a->biasprm[2] != 0)) {
      int jt = a->trntype == PHYS_TRN_JOINT ? s->joint[id].type : -1;
      if (jt != PHYS_JNT_HINGE && jt != PHYS_JNT_SLIDE)
        return phys_error(log, PHYS_ERR_MODEL, "%sactuator '%s': a gain or bias that depends on the actuator's "
                          "length or velocity (gainprm[1..2], biasprm[1..2], position and velocity servos) is "
                          "supported on hinge and slide joints only", at, a->name);
    }
    if ((st = actuator_dynamics(a, at, m, i, &na, log))) return st;
    m->actuator_trntype[i] = a->trntype;
    m->actuator_trnid[i] = id;
    m->actuator_ctrllimited[i] = a->ctrllimited;
    m->actuator_name[i] = add_name(m, namepos, a->name);
    memcpy(m->actuator_gear + 6 * i, a->gear, 6 * sizeof(double));
    memcpy(m->actuator_ctrlrange + 2 * i, a->ctrlrange, 2 * sizeof(double));
    memcpy(m->actuator_gainprm + 3 * i, a->gainprm, 3 * sizeof(double));
    memcpy(m->actuator_biasprm + 3 * i, a->biasprm, 3 * sizeof(double));
  }
  return PHYS_OK;
}

//---------------------------------------------------------------------------------------------------------
// sensors

// index of the element named name in a spec list of n elements of size stride (name first in each); -1 if none
static int find_named(const char* name, const void* list, int n, size_t stride) {
  for (int i = 0; i < n; i++)
    if (strcmp((const char*)list + (size_t)i * stride, name) == 0) return i;
  return -1;
}

// the model id of a sensor's object (its objtype and target name); -1 if there is none of that name
static int sensor_object(const physSpec* s, const physSpecSensor* se) {
  switch (se->objtype) {
    case PHYS_OBJ_BODY:
    case PHYS_OBJ_XBODY: return find_named(se->target, s->body, s->nbody, sizeof(*s->body));
    case PHYS_OBJ_JOINT: return find_named(se->target, s->joint, s->njoint, sizeof(*s->joint));
    case PHYS_OBJ_GEOM: return find_named(se->target, s->geom, s->ngeom, sizeof(*s->geom));
    case PHYS_OBJ_SITE: return find_named(se->target, s->site, s->nsite, sizeof(*s->site));
    case PHYS_OBJ_ACTUATOR: return find_named(se->target, s->actuator, s->nactuator, sizeof(*s->actuator));
    default: return -1;
  }
}

// the sensor table: objects resolved by name, values laid out in order; joint sensors need a hinge or slide, a
// touch sensor a sphere, ellipsoid or box zone (the zones physid's ray test has)
static physStatus compile_sensors(const physSpec* s, physModel* m, int* namepos, physLog* log) {
  static const char* const OBJNAME[] = {"object", "body", "body", "joint", "geom", "site", "actuator"};
  char buf[600];
  int adr = 0;
  for (int i = 0; i < s->nsensor; i++) {
    const physSpecSensor* se = s->sensor + i;
    const char* at = where(s, *se, buf, sizeof(buf));
    const char* kind = phys_sensor_name(se->type);
    int id = sensor_object(s, se);
    if (id < 0)
      return phys_error(log, PHYS_ERR_MODEL, "%s<%s name='%s'>: %s '%s' not found", at, kind, se->name,
                        OBJNAME[se->objtype], se->target);
    if (se->objtype == PHYS_OBJ_JOINT && m->jnt_type[id] != PHYS_JNT_HINGE && m->jnt_type[id] != PHYS_JNT_SLIDE)
      return phys_error(log, PHYS_ERR_MODEL, "%s<%s name='%s'>: joint '%s' is not a hinge or slide joint", at,
                        kind, se->name, se->target);
    if (se->type == PHYS_SENS_TOUCH && m->site_type[id] != PHYS_SITE_SPHERE &&
        m->site_type[id] != PHYS_SITE_ELLIPSOID && m->site_type[id] != PHYS_SITE_BOX)
      return phys_error(log, PHYS_ERR_MODEL, "%s<%s name='%s'>: the zone of a touch sensor must be a sphere, "
                        "ellipsoid or box site (site '%s' is a capsule or cylinder)", at, kind, se->name, se->target);
    if (!(se->noise >= 0) || !(se->cutoff >= 0) || !isfinite(se->noise) || !isfinite(se->cutoff))
      return phys_error(log, PHYS_ERR_VALUE, "%s<%s name='%s'>: noise and cutoff must be finite and >= 0", at,
                        kind, se->name);
    m->sensor_type[i] = se->type;
    m->sensor_objtype[i] = se->objtype;
    m->sensor_objid[i] = id;
    m->sensor_dim[i] = phys_sensor_dim(se->type);
    m->sensor_adr[i] = adr;
    m->sensor_name[i] = add_name(m, namepos, se->name);
    m->sensor_cutoff[i] = se->cutoff;
    m->sensor_noise[i] = se->noise;
    adr += m->sensor_dim[i];
  }
  return PHYS_OK;
}

static physStatus compile_keys(const physSpec* s, physModel* m, int* namepos, physLog* log) {
  char buf[600];
  for (int k = 0; k < s->nkey; k++) {
    const physSpecKey* sk = s->key + k;
    const char* at = where(s, *sk, buf, sizeof(buf));
    if ((sk->qpos && sk->nqpos != m->nq) || (sk->qvel && sk->nqvel != m->nv) || (sk->ctrl && sk->nctrl != m->nu))
      return phys_error(log, PHYS_ERR_SIZE, "%s<key name='%s'>: qpos/qvel/ctrl need %d/%d/%d values (got %d/%d/%d)", at,
                        sk->name, m->nq, m->nv, m->nu, sk->nqpos, sk->nqvel, sk->nctrl);
    if (sk->act && sk->nact != m->na)
      return phys_error(log, PHYS_ERR_SIZE, "%s<key name='%s'>: act needs %d values, one per actuator with dynamics "
                        "(got %d)", at, sk->name, m->na, sk->nact);
    if (sk->act) memcpy(m->key_act + (size_t)k * m->na, sk->act, sizeof(double) * (size_t)m->na);
    m->key_time[k] = sk->time;
    m->key_name[k] = add_name(m, namepos, sk->name);
    double* q = m->key_qpos + (size_t)k * m->nq;
    memcpy(q, sk->qpos ? sk->qpos : m->qpos0, sizeof(double) * (size_t)m->nq);
    if (sk->qvel) memcpy(m->key_qvel + (size_t)k * m->nv, sk->qvel, sizeof(double) * (size_t)m->nv);
    if (sk->ctrl) memcpy(m->key_ctrl + (size_t)k * m->nu, sk->ctrl, sizeof(double) * (size_t)m->nu);
    if (!finite_n(q, m->nq) || !finite_n(m->key_qvel + (size_t)k * m->nv, m->nv) ||
        !finite_n(m->key_act + (size_t)k * m->na, m->na))
      return phys_error(log, PHYS_ERR_VALUE, "%s<key name='%s'>: values must be finite", at, sk->name);
  }
  return PHYS_OK;
}

// weld id: a body without dofs moves with its parent (world: 0)
static void compile_welds(physModel* m) {
  m->body_weldid[0] = 0;
  for (int b = 1; b < m->nbody; b++)
    m->body_weldid[b] = m->body_dofnum[b] > 0 ? b : m->body_weldid[m->body_parentid[b]];
}

// explicit contact pairs and excluded body pairs: resolve names, fill unset values from the geoms
static physStatus compile_pairs(const physSpec* s, physModel* m, physLog* log) {
  char buf[600];
  for (int i = 0; i < s->npair; i++) {
    const physSpecPair* p = s->pair + i;
    const char* at = where(s, *p, buf, sizeof(buf));
    int g1 = s->ngeom ? find_named(p->geom1, s->geom[0].name, s->ngeom, sizeof(physSpecGeom)) : -1;
    int g2 = s->ngeom ? find_named(p->geom2, s->geom[0].name, s->ngeom, sizeof(physSpecGeom)) : -1;
    if (g1 < 0 || g2 < 0 || g1 == g2)
      return phys_error(log, PHYS_ERR_MODEL, "%s<pair>: geoms '%s' and '%s' must exist and differ", at, p->geom1, p->geom2);
    if (!isfinite(p->friction) || !isfinite(p->restitution) || !isfinite(p->margin) || p->restitution > 1)
      return phys_error(log, PHYS_ERR_VALUE, "%s<pair>: friction, restitution (<= 1) and margin must be finite", at);
    m->pair_geom1[i] = g1;
    m->pair_geom2[i] = g2;
    m->pair_friction[i] = p->friction >= 0 ? p->friction : fmax(m->geom_friction[3 * g1], m->geom_friction[3 * g2]);
    m->pair_restitution[i] = p->restitution >= 0 ? p->restitution : fmax(m->geom_restitution[g1], m->geom_restitution[g2]);
    m->pair_margin[i] = p->margin >= 0 ? p->margin : fmax(m->geom_margin[g1], m->geom_margin[g2]);
  }
  for (int i = 0; i < s->nexclude; i++) {
    const physSpecExclude* e = s->exclude + i;
    int b1 = find_named(e->body1, s->body[0].name, s->nbody, sizeof(physSpecBody));
    int b2 = find_named(e->body2, s->body[0].name, s->nbody, sizeof(physSpecBody));
    if (b1 < 0 || b2 < 0)
      return phys_error(log, PHYS_ERR_MODEL, "%s<exclude>: bodies '%s' and '%s' must exist", where(s, *e, buf, sizeof(buf)),
                        e->body1, e->body2);
    m->exclude_body1[i] = b1;
    m->exclude_body2[i] = b2;
  }
  return PHYS_OK;
}

//---------------------------------------------------------------------------------------------------------
// whole-model checks

#define PHYS_MINVAL 1e-15   // MuJoCo's mjMINVAL: the smallest mass and principal moment of a moving body

// 1 if body b has a mass and all three principal moments larger than PHYS_MINVAL
static int has_mass_inertia(const physModel* m, int b) {
  const double* I = m->body_inertia + 3 * b;
  return m->body_mass[b] > PHYS_MINVAL && I[0] > PHYS_MINVAL && I[1] > PHYS_MINVAL && I[2] > PHYS_MINVAL;
}

// body_subtreemass, and: every moving body (one with joints) needs a mass and rotational inertia, or its
// rows of the mass matrix are singular and every step fails. MJCF: MuJoCo 2.2.2's rule (mass and the three
// principal moments > mjMINVAL = 1e-15, on the body itself or on a child welded to it: no joint). URDF:
// on the link or on any link below it (a massless link between two joints, common in URDF, is accepted).
static physStatus check_masses(const physSpec* s, physModel* m, physLog* log) {
  char buf[600];
  for (int b = m->nbody - 1; b >= 0; b--) {
    m->body_subtreemass[b] += m->body_mass[b];
    if (b > 0) m->body_subtreemass[m->body_parentid[b]] += m->body_subtreemass[b];
  }
  // ok[b]: b or (MJCF) a welded child / (URDF) any descendant has mass and inertia; children follow parents
  char* ok = calloc((size_t)m->nbody, 1);
  if (!ok) return phys_error(log, PHYS_ERR_NOMEM, "%s: out of memory", s->filename);
  for (int b = m->nbody - 1; b > 0; b--) {
    ok[b] |= (char)has_mass_inertia(m, b);
    int p = m->body_parentid[b];
    if (ok[b] && (s->urdf || s->body[b].urdf || (m->body_dofnum[b] == 0 && has_mass_inertia(m, b)))) ok[p] = 1;
  }
  physStatus st = PHYS_OK;
  for (int b = 1; b < m->nbody && st == PHYS_OK; b++) {
    if (m->body_dofnum[b] == 0 || ok[b]) continue;
    const double* I = m->body_inertia + 3 * b;
    int urdf = s->urdf || s->body[b].urdf;
    st = phys_error(log, PHYS_ERR_MODEL,
                    "%s%s '%s': it moves (has joints) but its mass %g or a principal moment of inertia (%g %g "
                    "%g) is not larger than 1e-15, and no %s has both%s",
                    where(s, s->body[b], buf, sizeof(buf)), urdf ? "link" : "body", s->body[b].name,
                    m->body_mass[b], I[0], I[1], I[2],
                    urdf ? "link below it" : "child body welded to it (MuJoCo's rule)",
                    urdf ? " (give it an <inertial> with a mass and a nonzero inertia)" : "");
  }
  free(ok);
  return st;
}

// a named element for the duplicate check
typedef struct namedElem_ {
  const char* name;
  int line, file, index;
} namedElem;

// order by name, then by position in the spec
static int cmp_named(const void* a, const void* b) {
  const namedElem *x = a, *y = b;
  int c = strcmp(x->name, y->name);
  return c ? c : (x->index > y->index) - (x->index < y->index);
}

// n elements of `size` bytes from base, each starting with its name and holding its line and file at
// line_off and file_off: no two non-empty names may be equal (MuJoCo 2.2.2: "repeated name in <kind> array");
// the error names the later element and the place of the first
static physStatus unique_names(const physSpec* s, const char* kind, const void* base, int n, size_t size,
                               size_t line_off, size_t file_off, physLog* log) {
  namedElem* e = malloc((size_t)(n + 1) * sizeof(namedElem));
  if (!e) return phys_error(log, PHYS_ERR_NOMEM, "%s: out of memory", s->filename);
  int k = 0;
  for (int i = 0; i < n; i++) {
    const char* item = (const char*)base + (size_t)i * size;
    if (item[0]) e[k++] = (namedElem){item, *(const int*)(item + line_off), *(const int*)(item + file_off), i};
  }
  qsort(e, (size_t)k, sizeof(namedElem), cmp_named);
  physStatus st = PHYS_OK;
  char buf[600];
  for (int i = 1; i < k && st == PHYS_OK; i++) {
    if (strcmp(e[i - 1].name, e[i].name)) continue;
    char other[600];
    if (e[i - 1].line > 0 && e[i - 1].file == e[i].file) {
      snprintf(other, sizeof(other), "the %s at line %d", kind, e[i - 1].line);
    } else if (e[i - 1].line > 0) {
      snprintf(other, sizeof(other), "the %s at %.500s", kind, phys_spec_where(s, e[i - 1].file, e[i - 1].line, buf, 520));
      other[strlen(other) - 2] = 0;   // the ": " of "file:line: "
    } else {
      snprintf(other, sizeof(other), "%s", base == s->body && e[i - 1].index == 0 ? "the world body" : "another");
    }
    st = phys_error(log, PHYS_ERR_MODEL, "%s%s '%s': duplicate name: %s has it too (names must be unique per kind)",
                    phys_spec_where(s, e[i].file, e[i].line, buf, sizeof(buf)), kind, e[i].name, other);
  }
  free(e);
  return st;
}

// names are unique within each kind (bodies, joints, geoms, sites, springs = tendons, actuators, meshes,
// keyframes, pairs), as MuJoCo 2.2.2 requires; the same name in two kinds is allowed, as there
static physStatus check_names(const physSpec* s, physLog* log) {
  const char* body = s->urdf ? "link" : "body";
#define UNIQUE(kind, list, T) \
  unique_names(s, kind, s->list, s->n##list, sizeof(T), offsetof(T, line), offsetof(T, fileid), log)
  physStatus st = UNIQUE(body, body, physSpecBody);
  if (st == PHYS_OK) st = UNIQUE("joint", joint, physSpecJoint);
  if (st == PHYS_OK) st = UNIQUE("geom", geom, physSpecGeom);
  if (st == PHYS_OK) st = UNIQUE("site", site, physSpecSite);
  if (st == PHYS_OK) st = UNIQUE("tendon", spring, physSpecSpring);
  if (st == PHYS_OK) st = UNIQUE("actuator", actuator, physSpecActuator);
  if (st == PHYS_OK) st = UNIQUE("sensor", sensor, physSpecSensor);
  if (st == PHYS_OK) st = UNIQUE("mesh", mesh, physSpecMesh);
  if (st == PHYS_OK) st = UNIQUE("key", key, physSpecKey);
  if (st == PHYS_OK) st = UNIQUE("pair", pair, physSpecPair);
  if (st == PHYS_OK) st = UNIQUE("equality", equality, physSpecEquality);
#undef UNIQUE
  return st;
}

static physStatus check_options(const physSpec* s, physLog* log) {
  if (!(s->opt.timestep > 0) || !isfinite(s->opt.timestep))
    return phys_error(log, PHYS_ERR_VALUE, "%s: option timestep %g must be positive", s->filename, s->opt.timestep);
  if (!finite_n(s->opt.gravity, 3))
    return phys_error(log, PHYS_ERR_VALUE, "%s: option gravity must be finite", s->filename);
  const physOption* o = &s->opt;
  if (o->contact < 0 || o->contact >= PHYS_NCONTACTMODEL)
    return phys_error(log, PHYS_ERR_VALUE, "%s: unknown contact model %d", s->filename, o->contact);
  if (!(o->baumgarte >= 0 && o->baumgarte <= 1))
    return phys_error(log, PHYS_ERR_VALUE, "%s: baumgarte %g outside [0, 1]", s->filename, o->baumgarte);
  if (!(o->penalty_stiffness >= 0) || !(o->penalty_damping >= 0) || !(o->penalty_vslip > 0) ||
      !isfinite(o->penalty_stiffness) || !isfinite(o->penalty_damping) || !isfinite(o->penalty_vslip))
    return phys_error(log, PHYS_ERR_VALUE, "%s: penalty stiffness, damping >= 0 and vslip > 0 must be finite", s->filename);
  if (o->solver_iterations < 1 || !(o->solver_tolerance >= 0))
    return phys_error(log, PHYS_ERR_VALUE, "%s: solver iterations >= 1 and tolerance >= 0 required", s->filename);
  return PHYS_OK;
}

//---------------------------------------------------------------------------------------------------------
// penalty contact: what the step can integrate (src/contact/penalty.c)
//
// The contact spring is explicit and its damper implicit: one contact of effective mass m_e is stable iff
// k_c dt^2 < 4 m_e + 2 dt d (penalty.c), and the step raises d to at least k_c dt - 2 m_e / dt, so a contact
// with k_c dt^2 > 2 m_e rebounds less than its restitution asks (undamped it would be unstable beyond 4 m_e).
// A body's smallest effective mass at a point of its geoms, moving freely, is
//   m_e = 1 / (1 / m + r^2 / I_min),   r = max over its geoms of |geom centre - com| + bounding radius,
// (the point's inverse mass 1/m + |r x n|^2 / I along the worst normal); joints only raise it. And a body
// whose weight on one contact compresses the spring beyond its geoms' size, m g / k_c > r, sinks through
// what it rests on (a stack adds the weights above). One warning per kind, naming the worst body.

// smallest effective mass of body b at a point of its geoms, and the largest reach r (0 if no geom collides)
static double body_contact_mass(const physModel* m, int b, double* reach) {
  double r = 0, Imin = fmin(m->body_inertia[3 * b], fmin(m->body_inertia[3 * b + 1], m->body_inertia[3 * b + 2]));
  int any = 0;
  for (int g = m->body_geomadr[b]; g >= 0 && g < m->body_geomadr[b] + m->body_geomnum[b]; g++) {
    if (!m->geom_contype[g] && !m->geom_conaffinity[g]) continue;
    const double* p = m->geom_pos + 3 * g;
    const double* c = m->body_ipos + 3 * b;
    double dx[3] = {p[0] - c[0], p[1] - c[1], p[2] - c[2]};
    r = fmax(r, phys_norm3(dx) + m->geom_rbound[g]);
    any = 1;
  }
  *reach = any ? r : 0;
  if (!any || !(m->body_mass[b] > 0)) return 0;
  return Imin > 0 ? 1 / (1 / m->body_mass[b] + r * r / Imin) : m->body_mass[b];
}

// the two penalty warnings for the model's options; prefix(b) names body b (file:line when s is known)
static void penalty_check(const physModel* m, const physSpec* s, physLog* log) {
  if (m->opt.contact != PHYS_CONTACT_PENALTY || (m->opt.disableflags & PHYS_DSBL_CONTACT)) return;
  double k = m->opt.penalty_stiffness, dt = m->opt.timestep, g = phys_norm3(m->opt.gravity);
  if (m->opt.disableflags & PHYS_DSBL_GRAVITY) g = 0;
  int bs = -1, bw = -1, ns = 0, nw = 0;
  double mes = INFINITY, worst = 0;
  for (int b = 1; b < m->nbody; b++) {
    double r, me = body_contact_mass(m, b, &r);
    if (m->body_dofnum[b] == 0 || r == 0 || me == 0) continue;
    if (k * dt * dt > 2 * me) {
      ns++;
      if (me < mes) mes = me, bs = b;
    }
    double sink = m->body_mass[b] * g / k;
    if (k > 0 && sink > r) {
      nw++;
      if (sink / r > worst) worst = sink / r, bw = b;
    }
  }
  char buf[600], more[64];
  if (bs >= 0) {
    more[0] = 0;
    if (ns > 1) snprintf(more, sizeof more, " (and %d other bodies)", ns - 1);
    const char* pre = s ? where(s, s->body[bs], buf, sizeof buf) : (snprintf(buf, sizeof buf, "%s: ", m->filename), buf);
    phys_warning(log, "%spenalty contact: body '%s'%s needs dt < %.3g s or k_c < %.3g N/m (k_c dt^2 = %.3g kg > 2 m_e "
                 "= %.3g kg, m_e its least effective mass at a contact); its contacts are damped to stay stable",
                 pre, phys_id2name(m, "body", bs), more, sqrt(2 * mes / k), 2 * mes / (dt * dt), k * dt * dt, 2 * mes);
  }
  if (bw >= 0) {
    double r, mass = m->body_mass[bw];
    body_contact_mass(m, bw, &r);
    const char* pre = s ? where(s, s->body[bw], buf, sizeof buf) : (snprintf(buf, sizeof buf, "%s: ", m->filename), buf);
    more[0] = 0;
    if (nw > 1) snprintf(more, sizeof more, " (and %d other bodies)", nw - 1);
    phys_warning(log, "%spenalty contact: body '%s'%s needs k_c > %.3g N/m: its weight (%.6g kg) compresses one "
                 "contact spring by m g / k_c = %.3g m, more than its size %.3g m: it sinks through", pre,
                 phys_id2name(m, "body", bw), more, mass * g / r, mass, mass * g / k, r);
  }
}

void phys_penalty_check(const physModel* m, physLog* log) {
  penalty_check(m, NULL, log);
}

// a shallow copy of the spec whose joints, geoms and sites are stably sorted by body (MuJoCo numbers them
// body by body, in body order, keeping file order within a body); spring site indices (joint indices of
// fixed tendons, geom indices and side sites of wraps) are remapped
static int sort_by_body(physSpec* t, const physSpec* s, int** tmp) {
  int* map = malloc(sizeof(int) * (size_t)(s->nsite + 1));
  int* jmap = malloc(sizeof(int) * (size_t)(s->njoint + 1));
  int* gmap = malloc(sizeof(int) * (size_t)(s->ngeom + 1));
  t->joint = malloc(sizeof(physSpecJoint) * (size_t)(s->njoint + 1));
  t->geom = malloc(sizeof(physSpecGeom) * (size_t)(s->ngeom + 1));
  t->site = malloc(sizeof(physSpecSite) * (size_t)(s->nsite + 1));
  t->spring = malloc(sizeof(physSpecSpring) * (size_t)(s->nspring + 1));
  tmp[0] = map;
  tmp[1] = jmap;
  tmp[2] = gmap;
  if (!map || !jmap || !gmap || !t->joint || !t->geom || !t->site || !t->spring) return 0;
  int nj = 0, ng = 0, ns = 0;
  for (int b = 0; b < s->nbody; b++) {
    for (int j = 0; j < s->njoint; j++)
      if (s->joint[j].body == b) {
        jmap[j] = nj;
        t->joint[nj++] = s->joint[j];
      }
    for (int g = 0; g < s->ngeom; g++)
      if (s->geom[g].body == b) {
        gmap[g] = ng;
        t->geom[ng++] = s->geom[g];
      }
    for (int i = 0; i < s->nsite; i++)
      if (s->site[i].body == b) {
        map[i] = ns;
        t->site[ns++] = s->site[i];
      }
  }
  // elements whose body is invalid go last, so validation reports them
  for (int j = 0; j < s->njoint; j++)
    if (s->joint[j].body < 0 || s->joint[j].body >= s->nbody) {
      jmap[j] = nj;
      t->joint[nj++] = s->joint[j];
    }
  for (int g = 0; g < s->ngeom; g++)
    if (s->geom[g].body < 0 || s->geom[g].body >= s->nbody) {
      gmap[g] = ng;
      t->geom[ng++] = s->geom[g];
    }
  for (int i = 0; i < s->nsite; i++)
    if (s->site[i].body < 0 || s->site[i].body >= s->nbody) {
      map[i] = ns;
      t->site[ns++] = s->site[i];
    }
  for (int i = 0; i < s->nspring; i++) {
    t->spring[i] = s->spring[i];
    for (int k = 0; k < s->spring[i].nsite; k++) {
      int id = s->spring[i].site[k], type = s->spring[i].objtype[k];
      if (s->spring[i].type == PHYS_SPRING_FIXED)
        t->spring[i].site[k] = id >= 0 && id < s->njoint ? jmap[id] : -1;
      else if (type == PHYS_WRAP_SITE)
        t->spring[i].site[k] = id >= 0 && id < s->nsite ? map[id] : -1;
      else if (type == PHYS_WRAP_SPHERE || type == PHYS_WRAP_CYLINDER) {
        t->spring[i].site[k] = id >= 0 && id < s->ngeom ? gmap[id] : -1;
        int side = (int)s->spring[i].prm[k];   // a side site's index (-1: none; invalid ones stay for check_path)
        if (side >= 0 && side < s->nsite && side == s->spring[i].prm[k]) t->spring[i].prm[k] = map[side];
      }
    }
  }
  return 1;
}

static void free_sorted(physSpec* t, int** tmp) {
  free(t->joint);
  free(t->geom);
  free(t->site);
  free(t->spring);
  free(tmp[0]);
  free(tmp[1]);
  free(tmp[2]);
}

static physModel* compile_sorted(const physSpec* s, physLog* log);

physModel* phys_compile(const physSpec* s, physLog* log) {
  physSpec t = *s;
  int* tmp[3] = {NULL, NULL, NULL};
  physModel* m = NULL;
  if (sort_by_body(&t, s, tmp))
    m = compile_sorted(&t, log);
  else
    phys_error(log, PHYS_ERR_NOMEM, "%s: out of memory", s->filename);
  free_sorted(&t, tmp);
  return m;
}

static physModel* compile_sorted(const physSpec* s, physLog* log) {
  physModel sizes;
  if (check_options(s, log) != PHYS_OK || check_names(s, log) != PHYS_OK || compile_sizes(s, &sizes, log) != PHYS_OK)
    return NULL;
  physModel* m = phys_model_alloc(&sizes);
  if (!m) {
    phys_error(log, PHYS_ERR_NOMEM, "%s: out of memory allocating the model", s->filename);
    return NULL;
  }
  int namepos = 1;  // names[0] = "" for unnamed objects
  compile_bodies(s, m, &namepos);
  compile_meshes(s, m, &namepos);
  physStatus st = compile_joints(s, m, &namepos, log);
  if (st == PHYS_OK) st = compile_geoms(s, m, &namepos, log);
  if (st == PHYS_OK) st = phys_hull_compile(s, m, log);
  if (st == PHYS_OK) st = compile_sites(s, m, &namepos, log);
  if (st == PHYS_OK) st = compile_springs(s, m, &namepos, log);
  if (st == PHYS_OK) st = compile_actuators(s, m, &namepos, log);
  if (st == PHYS_OK) st = compile_sensors(s, m, &namepos, log);
  if (st == PHYS_OK) st = compile_keys(s, m, &namepos, log);
  if (st == PHYS_OK) st = compile_pairs(s, m, log);
  if (st == PHYS_OK) st = phys_compile_equality(s, m, log);   // compile_equality.c
  for (int i = 0; st == PHYS_OK && i < s->nequality; i++) m->eq_name[i] = add_name(m, &namepos, s->equality[i].name);
  if (st == PHYS_OK) st = compile_body_inertia(s, m, log);
  if (st == PHYS_OK) {
    scale_masses(s, m);
    st = check_masses(s, m, log);
  }
  if (st != PHYS_OK) {
    phys_free_model(m);
    return NULL;
  }
  for (int g = 0; g < m->ngeom; g++) m->geom_rbound[g] = phys_geom_rbound(m, g);
  compile_welds(m);
  if (compile_muscles(s, m, log) != PHYS_OK) {
    phys_free_model(m);
    return NULL;
  }
  penalty_check(m, s, log);

  return m;
}
