// urdf.c - URDF reader (libxml2, network and entity expansion off) into a physSpec.
#define _XOPEN_SOURCE 700   // realpath
#include "urdf.h"

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "mesh.h"
#include "mesh_assimp.h"
#include "path.h"
#include "xmlread.h"

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

#define URDF_SEARCH_UP 3   // package://PKG/ looks for a folder named PKG this many folders above the file

typedef enum { U_FIXED = 0, U_REVOLUTE, U_CONTINUOUS, U_PRISMATIC, U_FLOATING } uJointType;

typedef struct uLink_ {
  char name[PHYS_NAMELEN];
  xmlNode* node;
  int pjoint;          // joint whose child this link is (-1: a root)
  int body;            // spec body (0 for a root link named "world")
  int childadr;        // first entry of this link's child joints in ctx.childjoint
  int nchild;
} uLink;

typedef struct uJoint_ {
  char name[PHYS_NAMELEN];
  xmlNode* node;
  int type;            // uJointType
  int parent, child;   // link indices
} uJoint;

typedef struct urdfCtx_ {
  const char* file;              // file name for messages
  char dir[PATH_MAX];            // canonical folder of the file: the model folder
  physLoadOptions opt;
  physLog* log;
  physSpec* s;
  uLink* link;
  int nlink;
  uJoint* joint;
  int njoint;
  int* childjoint;               // child joints of every link, grouped by parent (file order)
  double* meshscale;             // scale of each spec mesh, nmesh x 3 (to share identical meshes)
  struct uGeomName_* gname;      // the name each geom asks for (its own or generated), per spec geom
  int ngname;
} urdfCtx;

// the name a collision geom asks for: its <collision name>, else LINK or LINK_K (see name_geoms)
typedef struct uGeomName_ {
  char name[PHYS_NAMELEN];
  int own;             // 1: the <collision>'s own name attribute; 0: generated from the link
  int geom;            // spec geom index
} uGeomName;

//---------------------------------------------------------------------------------------------------------
// messages: "file:line: <kind> 'name': what is wrong"

// record an error located at node, attributed to the object (kind, name)
static physStatus uerr(urdfCtx* c, const xmlNode* node, const char* kind, const char* name, physStatus st,
                       const char* fmt, ...) __attribute__((format(printf, 6, 7)));
static physStatus uerr(urdfCtx* c, const xmlNode* node, const char* kind, const char* name, physStatus st,
                       const char* fmt, ...) {
  char msg[PHYS_MSGLEN];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  long line = node ? xmlGetLineNo(node) : 0;
  return phys_error(c->log, st, "%s:%ld: %s '%s': %s", c->file, line, kind, name, msg);
}

// record a warning located at node, attributed to the object (kind, name)
static void uwarn(urdfCtx* c, const xmlNode* node, const char* kind, const char* name, const char* fmt, ...)
    __attribute__((format(printf, 5, 6)));
static void uwarn(urdfCtx* c, const xmlNode* node, const char* kind, const char* name, const char* fmt, ...) {
  char msg[PHYS_MSGLEN];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  long line = node ? xmlGetLineNo(node) : 0;
  phys_warning_kind(c->log, fmt, "%s:%ld: %s '%s': %s", c->file, line, kind, name, msg);
}

//---------------------------------------------------------------------------------------------------------
// XML access: elements without a namespace only (drake:..., xacro:... and the like are foreign)

// 1 if node is a URDF element (no namespace) called name
static int is_elem(const xmlNode* node, const char* name) {
  return node->type == XML_ELEMENT_NODE && !node->ns && xmlStrEqual(node->name, BAD_CAST name);
}

// first URDF child element of node called name, or NULL
static xmlNode* child_elem(const xmlNode* node, const char* name) {
  for (xmlNode* ch = node->children; ch; ch = ch->next) {
    if (is_elem(ch, name)) return ch;
  }
  return NULL;
}

// copy attribute attr of node into buf (n bytes): 1 found, 0 missing, -1 longer than n-1 bytes
static int get_attr(const xmlNode* node, const char* attr, char* buf, size_t n) {
  xmlChar* v = xmlGetNoNsProp(node, BAD_CAST attr);
  if (!v) return 0;
  size_t len = strlen((const char*)v);
  int ok = len < n;
  if (ok) memcpy(buf, v, len + 1);
  xmlFree(v);
  return ok ? 1 : -1;
}

// read attribute attr of elem (an element inside object kind/name) as exactly n finite numbers;
// when missing use def, or fail if def is NULL
static physStatus get_vec(urdfCtx* c, const xmlNode* elem, const char* attr, int n, const double* def,
                          double* out, const char* kind, const char* name) {
  char buf[512];
  int got = get_attr(elem, attr, buf, sizeof(buf));
  if (got < 0) {
    return uerr(c, elem, kind, name, PHYS_ERR_PARSE, "<%s> attribute '%s' is too long", elem->name, attr);
  }
  if (got == 0) {
    if (!def) {
      return uerr(c, elem, kind, name, PHYS_ERR_PARSE, "<%s> needs attribute '%s'", elem->name, attr);
    }
    memcpy(out, def, (size_t)n * sizeof(double));
    return PHYS_OK;
  }
  const char* p = buf;
  for (int k = 0; k < n; k++) {
    char* end;
    out[k] = strtod(p, &end);
    if (end == p) {
      return uerr(c, elem, kind, name, PHYS_ERR_SIZE, "<%s> %s=\"%s\": expected %d number%s", elem->name,
                  attr, buf, n, n > 1 ? "s" : "");
    }
    if (!isfinite(out[k])) {
      return uerr(c, elem, kind, name, PHYS_ERR_VALUE, "<%s> %s=\"%s\": value %d is not finite", elem->name,
                  attr, buf, k + 1);
    }
    p = end;
  }
  while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
  if (*p) {
    return uerr(c, elem, kind, name, PHYS_ERR_SIZE, "<%s> %s=\"%s\": expected %d number%s", elem->name, attr,
                buf, n, n > 1 ? "s" : "");
  }
  return PHYS_OK;
}

//---------------------------------------------------------------------------------------------------------
// frames

// quaternion of URDF's fixed-axis roll-pitch-yaw: R = Rz(y) Ry(p) Rx(r), i.e. q = qz(y) qy(p) qx(r)
static void rpy2quat(double q[4], const double rpy[3]) {
  double cr = cos(rpy[0] / 2), sr = sin(rpy[0] / 2);
  double cp = cos(rpy[1] / 2), sp = sin(rpy[1] / 2);
  double cy = cos(rpy[2] / 2), sy = sin(rpy[2] / 2);
  q[0] = cy * cp * cr + sy * sp * sr;
  q[1] = cy * cp * sr - sy * sp * cr;
  q[2] = cy * sp * cr + sy * cp * sr;
  q[3] = sy * cp * cr - cy * sp * sr;
}

// read an optional <origin xyz rpy> child of node (object kind/name) into pos and quat (identity default)
static physStatus get_origin(urdfCtx* c, const xmlNode* node, double pos[3], double quat[4], const char* kind,
                             const char* name) {
  static const double zero[3] = {0, 0, 0};
  double rpy[3] = {0, 0, 0};
  pos[0] = pos[1] = pos[2] = 0;
  xmlNode* o = child_elem(node, "origin");
  if (o) {
    physStatus st = get_vec(c, o, "xyz", 3, zero, pos, kind, name);
    if (st == PHYS_OK) st = get_vec(c, o, "rpy", 3, zero, rpy, kind, name);
    if (st != PHYS_OK) return st;
  }
  rpy2quat(quat, rpy);
  return PHYS_OK;
}

//---------------------------------------------------------------------------------------------------------
// tree: links, joints, the root and a depth-first order

// compare two links (through pointers) by name
static int cmp_link(const void* a, const void* b) {
  return strcmp((*(const uLink* const*)a)->name, (*(const uLink* const*)b)->name);
}

// compare two joints (through pointers) by name
static int cmp_joint(const void* a, const void* b) {
  return strcmp((*(const uJoint* const*)a)->name, (*(const uJoint* const*)b)->name);
}

// index of the link called name in the sorted pointer table, -1 if none
static int find_link(const urdfCtx* c, uLink* const* sorted, const char* name) {
  uLink key;
  snprintf(key.name, sizeof(key.name), "%s", name);
  const uLink* pk = &key;
  uLink* const* hit = bsearch(&pk, sorted, (size_t)c->nlink, sizeof(uLink*), cmp_link);
  return hit ? (int)(*hit - c->link) : -1;
}

// read a required name attribute of an element of the given kind into name
static physStatus get_name(urdfCtx* c, const xmlNode* node, const char* kind, char name[PHYS_NAMELEN]) {
  int got = get_attr(node, "name", name, PHYS_NAMELEN);
  if (got == 0 || (got > 0 && !name[0])) {
    return uerr(c, node, kind, "", PHYS_ERR_PARSE, "<%s> needs a non-empty 'name'", kind);
  }
  if (got < 0) {
    return uerr(c, node, kind, "", PHYS_ERR_PARSE, "name longer than %d characters", PHYS_NAMELEN - 1);
  }
  return PHYS_OK;
}

// collect the <link> and <joint> elements of the robot, with unique names
static physStatus collect(urdfCtx* c, xmlNode* robot) {
  int nl = 0, nj = 0;
  for (xmlNode* n = robot->children; n; n = n->next) {
    nl += is_elem(n, "link");
    nj += is_elem(n, "joint");
    if (nl > PHYS_URDF_MAXLINK || nj > PHYS_URDF_MAXLINK) {
      return phys_error(c->log, PHYS_ERR_NOMEM, "%s: more than %d links or joints", c->file,
                        PHYS_URDF_MAXLINK);
    }
  }
  if (nl == 0) return phys_error(c->log, PHYS_ERR_MODEL, "%s: <robot> has no <link>", c->file);
  c->link = calloc((size_t)nl, sizeof(uLink));
  c->joint = calloc((size_t)(nj ? nj : 1), sizeof(uJoint));
  if (!c->link || !c->joint) return phys_error(c->log, PHYS_ERR_NOMEM, "%s: out of memory", c->file);
  for (xmlNode* n = robot->children; n; n = n->next) {
    physStatus st = PHYS_OK;
    if (is_elem(n, "link")) {
      uLink* l = c->link + c->nlink++;
      l->node = n;
      l->pjoint = -1;
      st = get_name(c, n, "link", l->name);
    } else if (is_elem(n, "joint")) {
      uJoint* j = c->joint + c->njoint++;
      j->node = n;
      st = get_name(c, n, "joint", j->name);
    }
    if (st != PHYS_OK) return st;
  }
  return PHYS_OK;
}

// joint type from its attribute; planar and unknown types are errors
static physStatus joint_type(urdfCtx* c, uJoint* j) {
  static const char* const names[] = {"fixed", "revolute", "continuous", "prismatic", "floating"};
  char type[32];
  int got = get_attr(j->node, "type", type, sizeof(type));
  if (got == 0) return uerr(c, j->node, "joint", j->name, PHYS_ERR_PARSE, "needs a 'type'");
  if (got > 0) {
    for (int k = 0; k < 5; k++) {
      if (!strcmp(type, names[k])) {
        j->type = k;
        return PHYS_OK;
      }
    }
    if (!strcmp(type, "planar")) {
      return uerr(c, j->node, "joint", j->name, PHYS_ERR_MODEL, "joint type 'planar' is not supported");
    }
  }
  return uerr(c, j->node, "joint", j->name, PHYS_ERR_MODEL, "unknown joint type '%s'", got > 0 ? type : "?");
}

// resolve one end (<parent> or <child>) of a joint to a link index
static physStatus joint_end(urdfCtx* c, uLink* const* sorted, const uJoint* j, const char* which, int* link) {
  xmlNode* e = child_elem(j->node, which);
  char name[PHYS_NAMELEN];
  int got = e ? get_attr(e, "link", name, sizeof(name)) : 0;
  if (got <= 0) return uerr(c, e ? e : j->node, "joint", j->name, PHYS_ERR_PARSE, "needs <%s link=\"...\">",
                            which);
  *link = find_link(c, sorted, name);
  if (*link < 0) {
    return uerr(c, e, "joint", j->name, PHYS_ERR_MODEL, "%s link '%s' does not exist", which, name);
  }
  return PHYS_OK;
}

// check names, resolve joints, and link every child to its parent joint
static physStatus build_tree(urdfCtx* c) {
  uLink** sl = malloc((size_t)c->nlink * sizeof(uLink*));
  uJoint** sj = malloc((size_t)(c->njoint ? c->njoint : 1) * sizeof(uJoint*));
  physStatus st = PHYS_OK;
  if (!sl || !sj) st = phys_error(c->log, PHYS_ERR_NOMEM, "%s: out of memory", c->file);

  // unique names: sort and compare neighbours
  for (int i = 0; st == PHYS_OK && i < c->nlink; i++) sl[i] = c->link + i;
  for (int i = 0; st == PHYS_OK && i < c->njoint; i++) sj[i] = c->joint + i;
  if (st == PHYS_OK) {
    qsort(sl, (size_t)c->nlink, sizeof(uLink*), cmp_link);
    qsort(sj, (size_t)c->njoint, sizeof(uJoint*), cmp_joint);
  }
  for (int i = 1; st == PHYS_OK && i < c->nlink; i++) {
    if (!strcmp(sl[i - 1]->name, sl[i]->name)) {
      const uLink *later = sl[i] > sl[i - 1] ? sl[i] : sl[i - 1], *first = later == sl[i] ? sl[i - 1] : sl[i];
      st = uerr(c, later->node, "link", later->name, PHYS_ERR_MODEL,
                "duplicate link name: the link at line %ld has it too", xmlGetLineNo(first->node));
    }
  }
  for (int i = 1; st == PHYS_OK && i < c->njoint; i++) {
    if (!strcmp(sj[i - 1]->name, sj[i]->name)) {
      const uJoint *later = sj[i] > sj[i - 1] ? sj[i] : sj[i - 1], *first = later == sj[i] ? sj[i - 1] : sj[i];
      st = uerr(c, later->node, "joint", later->name, PHYS_ERR_MODEL,
                "duplicate joint name: the joint at line %ld has it too", xmlGetLineNo(first->node));
    }
  }

  // joints: type, parent, child; a link has at most one parent joint
  for (int i = 0; st == PHYS_OK && i < c->njoint; i++) {
    uJoint* j = c->joint + i;
    st = joint_type(c, j);
    if (st == PHYS_OK) st = joint_end(c, sl, j, "parent", &j->parent);
    if (st == PHYS_OK) st = joint_end(c, sl, j, "child", &j->child);
    if (st != PHYS_OK) break;
    uLink* ch = c->link + j->child;
    if (j->parent == j->child) {
      st = uerr(c, j->node, "joint", j->name, PHYS_ERR_MODEL, "link '%s' is its own parent", ch->name);
    } else if (ch->pjoint >= 0) {
      st = uerr(c, j->node, "joint", j->name, PHYS_ERR_MODEL,
                "link '%s' has two parents (joints '%s' and '%s')", ch->name, c->joint[ch->pjoint].name,
                j->name);
    } else {
      ch->pjoint = i;
      c->link[j->parent].nchild++;
    }
  }
  free(sl);
  free(sj);
  if (st != PHYS_OK) return st;

  // child joints of each link in file order: prefix sums, then fill
  c->childjoint = malloc((size_t)(c->njoint ? c->njoint : 1) * sizeof(int));
  if (!c->childjoint) return phys_error(c->log, PHYS_ERR_NOMEM, "%s: out of memory", c->file);
  for (int i = 0, adr = 0; i < c->nlink; i++) {
    c->link[i].childadr = adr;
    adr += c->link[i].nchild;
    c->link[i].nchild = 0;
  }
  for (int i = 0; i < c->njoint; i++) {
    uLink* p = c->link + c->joint[i].parent;
    c->childjoint[p->childadr + p->nchild++] = i;
  }
  return PHYS_OK;
}

// the single root link (no parent joint); errors for none (a cycle) or several
static physStatus find_root(urdfCtx* c, int* root) {
  *root = -1;
  for (int i = 0; i < c->nlink; i++) {
    if (c->link[i].pjoint >= 0) continue;
    if (*root >= 0) {
      const uLink* a = c->link + *root;
      return uerr(c, c->link[i].node, "link", c->link[i].name, PHYS_ERR_MODEL,
                  "second root link (link '%s' at line %ld has no parent either): a URDF needs exactly one "
                  "root", a->name, xmlGetLineNo(a->node));
    }
    *root = i;
  }
  if (*root < 0) {
    return uerr(c, c->link[0].node, "link", c->link[0].name, PHYS_ERR_MODEL,
                "every link has a parent: the joints form a cycle");
  }
  return PHYS_OK;
}

// depth-first preorder of the links from root (parent before child, children in file order);
// links not reached lie on a cycle
static physStatus dfs_order(urdfCtx* c, int root, int* order) {
  int* stack = malloc((size_t)c->nlink * sizeof(int));
  if (!stack) return phys_error(c->log, PHYS_ERR_NOMEM, "%s: out of memory", c->file);
  int nstack = 0, norder = 0;
  stack[nstack++] = root;
  while (nstack) {
    int l = stack[--nstack];
    order[norder++] = l;
    const uLink* lk = c->link + l;
    for (int k = lk->nchild - 1; k >= 0; k--) stack[nstack++] = c->joint[c->childjoint[lk->childadr + k]].child;
  }
  free(stack);
  if (norder == c->nlink) return PHYS_OK;
  char* seen = calloc((size_t)c->nlink, 1);
  if (!seen) return phys_error(c->log, PHYS_ERR_NOMEM, "%s: out of memory", c->file);
  for (int i = 0; i < norder; i++) seen[order[i]] = 1;
  int l = 0;
  while (seen[l]) l++;
  free(seen);
  const uJoint* j = c->joint + c->link[l].pjoint;
  return uerr(c, c->link[l].node, "link", c->link[l].name, PHYS_ERR_MODEL,
              "not connected to the root: joint '%s' (line %ld) closes a kinematic loop", j->name,
              xmlGetLineNo(j->node));
}

//---------------------------------------------------------------------------------------------------------
// bodies and joints

// physLoadOptions.urdf_actuate: a motor on joint j (hinge or slide), named after it, gear 1, ctrlrange
// [-|effort|, |effort|] from its <limit effort> (lim may be NULL: a continuous joint without <limit>); no effort
// or effort 0: not control-limited (MuJoCo's reading of effort, there as the joint's actuator force range)
static physStatus make_motor(urdfCtx* c, const uJoint* j, const xmlNode* lim) {
  static const double zero = 0;
  double effort = 0;
  physStatus st = lim ? get_vec(c, lim, "effort", 1, &zero, &effort, "joint", j->name) : PHYS_OK;
  if (st != PHYS_OK) return st;
  int id = phys_spec_add_actuator(c->s);
  if (id < 0) return phys_error(c->log, PHYS_ERR_NOMEM, "%s: out of memory", c->file);
  physSpecActuator* a = c->s->actuator + id;
  snprintf(a->name, sizeof(a->name), "%s", j->name);
  snprintf(a->target, sizeof(a->target), "%s", j->name);
  a->trntype = PHYS_TRN_JOINT;
  a->gear[0] = 1;
  effort = fabs(effort);
  a->ctrllimited = effort > 0;
  a->ctrlrange[0] = a->ctrllimited ? -effort : 0;
  a->ctrlrange[1] = a->ctrllimited ? effort : 0;
  a->line = (int)xmlGetLineNo(j->node);
  return PHYS_OK;
}

// the moving joint of link l's body from its parent joint j: origin, type, axis, limits, dynamics
static physStatus make_joint(urdfCtx* c, const uJoint* j, int body) {
  physSpec* s = c->s;
  physSpecBody* b = s->body + body;
  physStatus st = get_origin(c, j->node, b->pos, b->quat, "joint", j->name);
  if (st != PHYS_OK || j->type == U_FIXED) return st;

  static const int jtype[] = {-1, PHYS_JNT_HINGE, PHYS_JNT_HINGE, PHYS_JNT_SLIDE, PHYS_JNT_FREE};
  int id = phys_spec_add_joint(s, body, jtype[j->type]);
  if (id < 0) return phys_error(c->log, PHYS_ERR_NOMEM, "%s: out of memory", c->file);
  physSpecJoint* jt = s->joint + id;
  snprintf(jt->name, sizeof(jt->name), "%s", j->name);
  jt->line = (int)xmlGetLineNo(j->node);
  if (j->type == U_FLOATING) return PHYS_OK;

  // axis in the joint (= child link) frame, default x, normalized
  static const double xaxis[3] = {1, 0, 0};
  xmlNode* ax = child_elem(j->node, "axis");
  double a[3] = {1, 0, 0};
  if (ax && (st = get_vec(c, ax, "xyz", 3, xaxis, a, "joint", j->name)) != PHYS_OK) return st;
  double na = sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
  if (!(na > 1e-12)) return uerr(c, ax, "joint", j->name, PHYS_ERR_VALUE, "<axis> has zero length");
  for (int k = 0; k < 3; k++) jt->axis[k] = a[k] / na;

  // limits: required for revolute and prismatic (as urdfdom); ignored for continuous
  static const double zero = 0;
  xmlNode* lim = child_elem(j->node, "limit");
  if (j->type != U_CONTINUOUS) {
    if (!lim) return uerr(c, j->node, "joint", j->name, PHYS_ERR_MODEL, "a %s joint needs <limit>",
                          j->type == U_REVOLUTE ? "revolute" : "prismatic");
    if ((st = get_vec(c, lim, "lower", 1, &zero, jt->range, "joint", j->name)) != PHYS_OK) return st;
    if ((st = get_vec(c, lim, "upper", 1, &zero, jt->range + 1, "joint", j->name)) != PHYS_OK) return st;
    if (jt->range[0] > jt->range[1]) {
      return uerr(c, lim, "joint", j->name, PHYS_ERR_VALUE, "<limit> lower %g > upper %g", jt->range[0],
                  jt->range[1]);
    }
    jt->limited = 1;
  }

  if (c->opt.urdf_actuate && (st = make_motor(c, j, lim)) != PHYS_OK) return st;

  // dynamics: viscous damping and dry friction (friction -> frictionloss, as MuJoCo's URDF import)
  xmlNode* dyn = child_elem(j->node, "dynamics");
  if (dyn) {
    if ((st = get_vec(c, dyn, "damping", 1, &zero, &jt->damping, "joint", j->name)) != PHYS_OK) return st;
    if ((st = get_vec(c, dyn, "friction", 1, &zero, &jt->frictionloss, "joint", j->name)) != PHYS_OK) return st;
    if (jt->damping < 0) return uerr(c, dyn, "joint", j->name, PHYS_ERR_VALUE, "negative damping");
    if (jt->frictionloss < 0) return uerr(c, dyn, "joint", j->name, PHYS_ERR_VALUE, "negative friction");
  }
  if (child_elem(j->node, "mimic")) {
    uwarn(c, child_elem(j->node, "mimic"), "joint", j->name, "<mimic> ignored: the joint moves freely");
  }
  return PHYS_OK;
}

// inertial of a link: origin, mass (>= 0), full inertia; no <inertial> means mass 0 (URDF semantics)
static physStatus make_inertial(urdfCtx* c, const uLink* l, physSpecBody* b) {
  b->has_inertial = 1;
  b->has_fullinertia = 1;
  xmlNode* in = child_elem(l->node, "inertial");
  if (!in) return PHYS_OK;
  physStatus st = get_origin(c, in, b->ipos, b->iquat, "link", l->name);
  if (st != PHYS_OK) return st;
  xmlNode* m = child_elem(in, "mass");
  if (!m) return uerr(c, in, "link", l->name, PHYS_ERR_PARSE, "<inertial> needs <mass>");
  if ((st = get_vec(c, m, "value", 1, NULL, &b->mass, "link", l->name)) != PHYS_OK) return st;
  if (b->mass < 0) return uerr(c, m, "link", l->name, PHYS_ERR_VALUE, "negative mass %g", b->mass);
  xmlNode* I = child_elem(in, "inertia");
  if (!I) return uerr(c, in, "link", l->name, PHYS_ERR_PARSE, "<inertial> needs <inertia>");
  static const char* const names[6] = {"ixx", "iyy", "izz", "ixy", "ixz", "iyz"};
  for (int k = 0; k < 6; k++) {
    if ((st = get_vec(c, I, names[k], 1, NULL, b->fullinertia + k, "link", l->name)) != PHYS_OK) return st;
  }
  for (int k = 0; k < 3; k++) b->inertia[k] = b->fullinertia[k];
  return PHYS_OK;
}

//---------------------------------------------------------------------------------------------------------
// mesh files

// copy the deepest `up`-th ancestor folder of dir into out ("/" at the top)
static void ancestor(char* out, size_t n, const char* dir, int up) {
  snprintf(out, n, "%s", dir);
  for (int k = 0; k < up; k++) {
    char* slash = strrchr(out, '/');
    if (!slash || slash == out) {
      snprintf(out, n, "/");
      return;
    }
    *slash = 0;
  }
}

// package folder of package:// PKG, the ROS package that holds the URDF: the URDF's folder or its nearest
// ancestor (up to URDF_SEARCH_UP above) named PKG (layout PKG/urdf/robot.urdf), else the nearest one that
// holds a package.xml (a package in a folder of another name), else the URDF's folder; 0 if PKG is not a
// folder name
static int package_folder(const urdfCtx* c, const char* pkg, size_t len, char out[PATH_MAX]) {
  if (len == 0 || (len == 1 && pkg[0] == '.') || (len == 2 && !strncmp(pkg, "..", 2))) return 0;
  for (int up = 0; up <= URDF_SEARCH_UP; up++) {
    ancestor(out, PATH_MAX, c->dir, up);
    const char* base = strrchr(out, '/');
    base = base ? base + 1 : out;
    if (strlen(base) == len && !strncmp(base, pkg, len)) return 1;
  }
  for (int up = 0; up <= URDF_SEARCH_UP; up++) {
    char manifest[PATH_MAX + 16];
    ancestor(out, PATH_MAX, c->dir, up);
    snprintf(manifest, sizeof(manifest), "%s/package.xml", out);
    if (access(manifest, F_OK) == 0) return 1;
  }
  snprintf(out, PATH_MAX, "%s", c->dir);
  return 1;
}

// resolve a mesh filename by the model-folder rule (path.h): package://PKG/rest inside PKG's folder,
// file:///abs and /abs and relative paths inside the URDF's folder
static physPathResult resolve_mesh(const urdfCtx* c, const char* uri, char out[PATH_MAX]) {
  if (!strncmp(uri, "package://", 10)) {
    const char* pkg = uri + 10;
    const char* rest = strchr(pkg, '/');
    char folder[PATH_MAX];
    if (!rest || !package_folder(c, pkg, (size_t)(rest - pkg), folder)) return PHYS_PATH_OUTSIDE;
    return phys_path_resolve(folder, NULL, rest + 1, out);
  }
  if (!strncmp(uri, "file://", 7)) return phys_path_resolve(c->dir, NULL, uri + 7, out);
  return phys_path_resolve(c->dir, NULL, uri, out);
}

// missing or unusable mesh: a warning (geom dropped), or an error with opt.strict_mesh
static physStatus mesh_problem(urdfCtx* c, const xmlNode* node, const char* link, const char* uri,
                               const char* what) {
  if (c->opt.strict_mesh) {
    return uerr(c, node, "link", link, PHYS_ERR_IO, "mesh '%s' %s", uri, what);
  }
  uwarn(c, node, "link", link, "mesh '%s' %s: collision geom dropped", uri, what);
  return PHYS_OK;
}

// spec mesh for a resolved file and scale, shared between geoms; loads it the first time; -1 on error
// (reported at node of link)
static int get_mesh(urdfCtx* c, const xmlNode* node, const char* link, const char* path,
                    const double scale[3]) {
  physSpec* s = c->s;
  for (int i = 0; i < s->nmesh; i++) {
    const double* sc = c->meshscale + 3 * i;
    if (!strcmp(s->mesh[i].file, path) && sc[0] == scale[0] && sc[1] == scale[1] && sc[2] == scale[2]) return i;
  }
  double* ms = realloc(c->meshscale, 3 * (size_t)(s->nmesh + 1) * sizeof(double));
  if (!ms) return phys_error(c->log, PHYS_ERR_NOMEM, "%s: out of memory", c->file), -1;
  c->meshscale = ms;
  int id = phys_spec_add_mesh(s);
  if (id < 0) return phys_error(c->log, PHYS_ERR_NOMEM, "%s: out of memory", c->file), -1;
  memcpy(ms + 3 * id, scale, 3 * sizeof(double));
  physSpecMesh* m = s->mesh + id;
  m->line = (int)xmlGetLineNo(node);   // the first <mesh> that uses the file, for compile-time messages
  physLog mlog = {0};
  if (phys_mesh_load(path, scale, m, &mlog) != PHYS_OK) {
    uerr(c, node, "link", link, mlog.status, "mesh: %s", mlog.error);
    return -1;
  }

  // name: the file's stem, made unique with the mesh index
  const char* base = strrchr(path, '/');
  base = base ? base + 1 : path;
  size_t len = strcspn(base, ".");
  if (len >= PHYS_NAMELEN - 12) len = PHYS_NAMELEN - 12;
  snprintf(m->name, sizeof(m->name), "%.*s", (int)len, base);
  for (int i = 0; i < id; i++) {
    if (!strcmp(s->mesh[i].name, m->name)) {
      snprintf(m->name, sizeof(m->name), "%.*s_%d", (int)len, base, id);
      break;
    }
  }
  return id;
}

// <mesh filename scale>: resolve, check the format, load; *mesh = -1 when the geom is dropped
static physStatus make_mesh(urdfCtx* c, const xmlNode* node, const char* link, int* mesh) {
  static const double one[3] = {1, 1, 1};
  char uri[1024], path[PATH_MAX];
  double scale[3];
  *mesh = -1;
  int got = get_attr(node, "filename", uri, sizeof(uri));
  if (got <= 0) return uerr(c, node, "link", link, PHYS_ERR_PARSE, "<mesh> needs a 'filename'");
  physStatus st = get_vec(c, node, "scale", 3, one, scale, "link", link);
  if (st != PHYS_OK) return st;
  size_t n = strlen(uri);
  int isdae = n > 4 && !strcasecmp(uri + n - 4, ".dae");
  int supported = n > 4 && (!strcasecmp(uri + n - 4, ".stl") || !strcasecmp(uri + n - 4, ".obj") ||
                            (isdae && phys_mesh_scene_supported()));
  if (!supported && isdae) return mesh_problem(c, node, link, uri, "is DAE and this build has no libassimp");
  if (!supported) return mesh_problem(c, node, link, uri, "is not STL, OBJ or DAE (unsupported format)");
  physPathResult r = resolve_mesh(c, uri, path);
  if (r == PHYS_PATH_OUTSIDE || r == PHYS_PATH_TOOLONG) {   // hostile, not a missing file: always an error
    return uerr(c, node, "link", link, PHYS_ERR_ARG, "mesh '%s' resolves outside the model folder (refused)",
                uri);
  }
  if (r == PHYS_PATH_MISSING) return mesh_problem(c, node, link, uri, "not found");
  *mesh = get_mesh(c, node, link, path, scale);
  return *mesh < 0 ? c->log->status : PHYS_OK;
}

// record the name geom id asks for: the <collision name> if it has one, else LINK for the link's first
// <collision> (k = 0) and LINK_k for its (k+1)-th (counting every <collision>, dropped ones too, so a missing
// mesh does not rename the others); a generated name too long for PHYS_NAMELEN leaves the geom unnamed
static physStatus want_geom_name(urdfCtx* c, const uLink* l, const xmlNode* col, int k, int id) {
  uGeomName* p = realloc(c->gname, (size_t)(c->ngname + 1) * sizeof(uGeomName));
  if (!p) return phys_error(c->log, PHYS_ERR_NOMEM, "%s: out of memory", c->file);
  c->gname = p;
  uGeomName* g = c->gname + c->ngname++;
  g->geom = id;
  g->own = get_attr(col, "name", g->name, sizeof(g->name)) > 0 && g->name[0];
  if (!g->own) {
    int n = k ? snprintf(g->name, sizeof(g->name), "%s_%d", l->name, k) : snprintf(g->name, sizeof(g->name), "%s", l->name);
    if (n >= (int)sizeof(g->name)) g->name[0] = 0;
  }
  return PHYS_OK;
}

// order geom names: by name, own names before generated ones, then by geom index
static int cmp_gname(const void* a, const void* b) {
  const uGeomName *x = a, *y = b;
  int d = strcmp(x->name, y->name);
  if (d) return d;
  if (x->own != y->own) return y->own - x->own;
  return (x->geom > y->geom) - (x->geom < y->geom);
}

// give every geom the name it asked for (want_geom_name), unique: of several geoms asking for one name, a
// <collision name> wins over a generated name, then the earlier geom; the others stay unnamed, with a warning
// naming both lines
static void name_geoms(urdfCtx* c) {
  if (c->ngname == 0) return;   // a robot without collisions (qsort's base may not be NULL)
  qsort(c->gname, (size_t)c->ngname, sizeof(uGeomName), cmp_gname);
  for (int i = 0; i < c->ngname; i++) {
    uGeomName* g = c->gname + i;
    if (!g->name[0]) continue;
    physSpecGeom* geom = c->s->geom + g->geom;
    int first = i;
    while (first > 0 && !strcmp(c->gname[first - 1].name, g->name)) first--;
    if (first == i) {
      snprintf(geom->name, sizeof(geom->name), "%s", g->name);
      continue;
    }
    const physSpecGeom* winner = c->s->geom + c->gname[first].geom;
    phys_warning_kind(c->log, "geom name taken",
                      "%s:%d: collision: geom name '%s' (%s) is taken by the collision at line %d: this geom "
                      "stays unnamed", c->file, geom->line, g->name, g->own ? "its name attribute" : "generated from its link",
                      winner->line);
  }
}

// one <collision> element (the link's k-th) of link l on body: a geom, or nothing when its mesh is dropped
static physStatus make_collision(urdfCtx* c, const uLink* l, const xmlNode* col, int k, int body) {
  double pos[3], quat[4], size[3] = {0, 0, 0};
  physStatus st = get_origin(c, col, pos, quat, "link", l->name);
  if (st != PHYS_OK) return st;
  xmlNode* geo = child_elem(col, "geometry");
  xmlNode* shape = NULL;
  for (xmlNode* ch = geo ? geo->children : NULL; ch && !shape; ch = ch->next) {
    if (ch->type == XML_ELEMENT_NODE && !ch->ns) shape = ch;
  }
  if (!shape) return uerr(c, col, "link", l->name, PHYS_ERR_PARSE, "<collision> needs <geometry> with a shape");

  int type = -1, mesh = -1;
  double v[3] = {0, 0, 0};
  if (is_elem(shape, "box")) {
    type = PHYS_GEOM_BOX;
    st = get_vec(c, shape, "size", 3, NULL, v, "link", l->name);
    for (int k = 0; k < 3; k++) size[k] = v[k] / 2;
  } else if (is_elem(shape, "sphere")) {
    type = PHYS_GEOM_SPHERE;
    st = get_vec(c, shape, "radius", 1, NULL, size, "link", l->name);
  } else if (is_elem(shape, "cylinder") || is_elem(shape, "capsule")) {
    type = is_elem(shape, "cylinder") ? PHYS_GEOM_CYLINDER : PHYS_GEOM_CAPSULE;
    st = get_vec(c, shape, "radius", 1, NULL, size, "link", l->name);
    if (st == PHYS_OK) st = get_vec(c, shape, "length", 1, NULL, v, "link", l->name);
    size[1] = v[0] / 2;
  } else if (is_elem(shape, "mesh")) {
    type = PHYS_GEOM_MESH;
    st = make_mesh(c, shape, l->name, &mesh);
    if (st != PHYS_OK || mesh < 0) return st;
  } else {
    uwarn(c, shape, "link", l->name, "unknown collision shape <%s>: geom dropped", shape->name);
    return PHYS_OK;
  }
  if (st != PHYS_OK) return st;
  int nsize = type == PHYS_GEOM_BOX ? 3 : type == PHYS_GEOM_SPHERE ? 1 : type == PHYS_GEOM_MESH ? 0 : 2;
  for (int k = 0; k < nsize; k++) {
    if (!(size[k] > 0)) return uerr(c, shape, "link", l->name, PHYS_ERR_VALUE, "<%s> size must be positive",
                                    shape->name);
  }

  int id = phys_spec_add_geom(c->s, body, type);
  if (id < 0) return phys_error(c->log, PHYS_ERR_NOMEM, "%s: out of memory", c->file);
  physSpecGeom* g = c->s->geom + id;
  memcpy(g->pos, pos, sizeof(pos));
  memcpy(g->quat, quat, sizeof(quat));
  memcpy(g->size, size, sizeof(size));
  g->mesh = mesh;
  g->contype = g->conaffinity = 1;
  g->condim = 3;
  g->friction[0] = 1;
  g->friction[1] = 0.005;
  g->friction[2] = 0.0001;
  g->line = (int)xmlGetLineNo(col);
  return want_geom_name(c, l, col, k, id);
}

// body of link l (parent body already made), its joint, inertial and collision geoms
static physStatus make_link(urdfCtx* c, uLink* l, int isroot) {
  physSpec* s = c->s;
  physStatus st = PHYS_OK;
  if (isroot && !strcmp(l->name, "world")) {
    // a root link called "world" is the world body itself
    l->body = 0;
    if (child_elem(l->node, "inertial")) uwarn(c, l->node, "link", l->name, "<inertial> of the world ignored");
  } else {
    int parent = isroot ? 0 : c->link[c->joint[l->pjoint].parent].body;
    l->body = phys_spec_add_body(s, parent);
    if (l->body < 0) return phys_error(c->log, PHYS_ERR_NOMEM, "%s: out of memory", c->file);
    physSpecBody* b = s->body + l->body;
    snprintf(b->name, sizeof(b->name), "%s", l->name);
    b->line = (int)xmlGetLineNo(l->node);
    b->urdf = 1;
    if (isroot && c->opt.urdf_floating) {
      int j = phys_spec_add_joint(s, l->body, PHYS_JNT_FREE);
      if (j < 0) return phys_error(c->log, PHYS_ERR_NOMEM, "%s: out of memory", c->file);
      snprintf(s->joint[j].name, sizeof(s->joint[j].name), "%.120s_root", l->name);
      s->joint[j].line = b->line;
    } else if (!isroot) {
      st = make_joint(c, c->joint + l->pjoint, l->body);
    }
    if (st == PHYS_OK) st = make_inertial(c, l, s->body + l->body);
  }
  int k = 0;
  for (xmlNode* ch = l->node->children; ch && st == PHYS_OK; ch = ch->next) {
    if (is_elem(ch, "collision")) st = make_collision(c, l, ch, k++, l->body);
  }
  return st;
}

//---------------------------------------------------------------------------------------------------------
// entry points

// folder of the file (canonical): the model folder
static physStatus set_folders(urdfCtx* c, const char* filename) {
  char full[PATH_MAX];
  if (!realpath(filename, full)) return phys_error(c->log, PHYS_ERR_IO, "%s: cannot open file", filename);
  ancestor(c->dir, sizeof(c->dir), full, 1);
  return PHYS_OK;
}

// fill c->s from the document's <robot>
static physStatus read_robot(urdfCtx* c, xmlDoc* doc) {
  xmlNode* robot = xmlDocGetRootElement(doc);
  if (!robot || !is_elem(robot, "robot")) {
    return phys_error(c->log, PHYS_ERR_PARSE, "%s:%ld: root element is <%s>, expected <robot>", c->file,
                      robot ? xmlGetLineNo(robot) : 0L, robot ? (const char*)robot->name : "none");
  }
  if (get_attr(robot, "name", c->s->modelname, sizeof(c->s->modelname)) < 0) c->s->modelname[0] = 0;
  physStatus st = collect(c, robot);
  if (st == PHYS_OK) st = build_tree(c);
  int root = -1;
  if (st == PHYS_OK) st = find_root(c, &root);
  int* order = st == PHYS_OK ? malloc((size_t)c->nlink * sizeof(int)) : NULL;
  if (st == PHYS_OK && !order) st = phys_error(c->log, PHYS_ERR_NOMEM, "%s: out of memory", c->file);
  if (st == PHYS_OK) st = dfs_order(c, root, order);
  for (int i = 0; st == PHYS_OK && i < c->nlink; i++) st = make_link(c, c->link + order[i], i == 0);
  if (st == PHYS_OK) name_geoms(c);
  free(order);
  return st;   // moving links without mass or inertia: phys_compile (spec->urdf)
}

// parse a URDF file into a new spec
physSpec* phys_parse_urdf(const char* filename, const physLoadOptions* opt, physLog* log) {
  physLog dummy = {0};
  if (!log) log = &dummy;
  if (!filename) return phys_error(log, PHYS_ERR_ARG, "phys_parse_urdf: NULL filename"), NULL;
  urdfCtx c = {.file = filename, .log = log};
  if (opt) c.opt = *opt;
  if (set_folders(&c, filename) != PHYS_OK) return NULL;
  xmlDoc* doc = phys_xml_read(filename, filename, log);
  if (!doc) return NULL;
  c.s = phys_spec_new();
  physStatus st = c.s ? PHYS_OK : phys_error(log, PHYS_ERR_NOMEM, "%s: out of memory", filename);
  if (st == PHYS_OK) {
    snprintf(c.s->filename, sizeof(c.s->filename), "%s", filename);
    c.s->inertiafromgeom = 0;   // URDF gives every link's inertia (or none: mass 0)
    c.s->urdf = 1;
    // a robot's links do not collide with each other unless asked (DART's default; Pinocchio needs
    // explicit pairs): URDF collision meshes of neighbouring links routinely overlap
    if (!c.opt.urdf_self_collision) c.s->opt.disableflags |= PHYS_DSBL_SELFCOLLISION;
    st = read_robot(&c, doc);
  }
  xmlFreeDoc(doc);
  free(c.link);
  free(c.joint);
  free(c.childjoint);
  free(c.meshscale);
  free(c.gname);
  if (st != PHYS_OK) {
    phys_spec_free(c.s);
    return NULL;
  }
  return c.s;
}

// parse and compile a URDF file
physModel* phys_load_urdf(const char* filename, const physLoadOptions* opt, physLog* log) {
  physSpec* s = phys_parse_urdf(filename, opt, log);
  if (!s) return NULL;
  physModel* m = phys_compile(s, log);
  phys_spec_free(s);
  return m;
}
