// model_write.c - `physid identify --write-model`: the model file with the identified values, edited as an
// XML document (libxml2: no network, no entity expansion) so that everything else in it stays as written.
//
// Values come from the compiled model m (which holds the fit), written with "%.17g" so they load back
// exactly: MJCF geom friction (all three coefficients) and size (a fromto capsule/cylinder keeps its axis and
// midpoint and gets the new half-length), <custom><numeric name="physid:restitution:GEOM">, joint damping /
// armature / stiffness, tendon stiffness / damping / springlength, a body's <inertial pos quat mass
// diaginertia> (the principal frame, replacing any other form; compiler inertiafromgeom="true" becomes
// "auto" so that it is read), body pos, option gravity, actuator gear, physid:penalty. URDF: a link's
// <inertial> (origin at the centre of mass, the full inertia tensor in the link frame), a joint's
// <dynamics damping>; other kinds have no URDF form and are refused. Elements pulled in by MJCF <include>
// are not in the edited document: their parameters are refused with a message.
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "identify.h"
#include "rot.h"

//---------------------------------------------------------------------------------------------------------
// document helpers

// 1 if node is an element named tag
static int is_elem(const xmlNode* n, const char* tag) {
  return n && n->type == XML_ELEMENT_NODE && strcmp((const char*)n->name, tag) == 0;
}

// 1 if element n has attribute key equal to value
static int has_attr(xmlNode* n, const char* key, const char* value) {
  xmlChar* v = xmlGetProp(n, (const xmlChar*)key);
  int eq = v && strcmp((const char*)v, value) == 0;
  xmlFree(v);
  return eq;
}

// first element below root (depth first, <default> subtrees skipped) whose tag is in tags ('|' separated)
// and whose name is name; NULL if none
static xmlNode* find_named(xmlNode* root, const char* tags, const char* name) {
  for (xmlNode* n = root ? root->children : NULL; n; n = n->next) {
    if (n->type != XML_ELEMENT_NODE || is_elem(n, "default")) continue;
    size_t len = strlen((const char*)n->name);
    for (const char* t = tags; *t;) {
      size_t k = strcspn(t, "|");
      if (k == len && strncmp(t, (const char*)n->name, k) == 0 && has_attr(n, "name", name)) return n;
      t += k + (t[k] == '|');
    }
    xmlNode* found = find_named(n, tags, name);
    if (found) return found;
  }
  return NULL;
}

// first child element of n named tag, created (appended, or first if at_front) when create is set
static xmlNode* child(xmlNode* n, const char* tag, int create, int at_front) {
  for (xmlNode* c = n->children; c; c = c->next)
    if (is_elem(c, tag)) return c;
  if (!create) return NULL;
  xmlNode* c = xmlNewNode(NULL, (const xmlChar*)tag);
  xmlNode* first = n->children;
  while (first && first->type != XML_ELEMENT_NODE) first = first->next;
  if (at_front && first) xmlAddPrevSibling(first, c);
  else xmlAddChild(n, c);
  return c;
}

// set attribute key of n to the n values x, "%.17g" separated by spaces
static void set_numbers(xmlNode* n, const char* key, const double* x, int count) {
  char buf[64 * 12] = "";
  size_t len = 0;
  for (int i = 0; i < count && len < sizeof buf - 32; i++) {
    len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%.17g", i ? " " : "", x[i]);
  }
  xmlSetProp(n, (const xmlChar*)key, (const xmlChar*)buf);
}

// read up to count numbers of attribute key; returns how many were read
static int get_numbers(xmlNode* n, const char* key, double* x, int count) {
  xmlChar* v = xmlGetProp(n, (const xmlChar*)key);
  int k = 0;
  char* p = (char*)v;
  while (p && k < count) {
    char* end;
    x[k] = strtod(p, &end);
    if (end == p) break;
    k++;
    p = end;
  }
  xmlFree(v);
  return k;
}

// <custom><numeric name=key data=...>: created (with <custom>) when missing
static void set_custom_numeric(xmlNode* root, const char* key, const double* x, int count) {
  xmlNode* custom = child(root, "custom", 1, 0);
  xmlNode* num = NULL;
  for (xmlNode* c = custom->children; c && !num; c = c->next)
    if (is_elem(c, "numeric") && has_attr(c, "name", key)) num = c;
  if (!num) {
    num = xmlNewChild(custom, NULL, (const xmlChar*)"numeric", NULL);
    xmlSetProp(num, (const xmlChar*)"name", (const xmlChar*)key);
  }
  set_numbers(num, "data", x, count);
}

//---------------------------------------------------------------------------------------------------------
// MJCF

// the element of a parameter's object, or NULL with a message
static xmlNode* mjcf_target(xmlNode* root, const physModel* m, const physParam* p, char* err, size_t nerr) {
  const char* kind = "body";
  const char* tags = "body";
  switch (p->kind) {
    case PHYS_PAR_FRICTION: case PHYS_PAR_SIZE: kind = "geom", tags = "geom"; break;
    case PHYS_PAR_DAMPING: case PHYS_PAR_ARMATURE: case PHYS_PAR_STIFFNESS: kind = "joint", tags = "joint|freejoint"; break;
    case PHYS_PAR_SPRING_STIFFNESS: case PHYS_PAR_SPRING_DAMPING: case PHYS_PAR_SPRING_RESTLENGTH:
      kind = "spring", tags = "spatial"; break;
    case PHYS_PAR_GEAR: kind = "actuator", tags = "motor|general|position|velocity"; break;
    default: break;
  }
  const char* name = phys_id2name(m, kind, p->id);
  xmlNode* n = *name ? find_named(root, tags, name) : NULL;
  if (!n) snprintf(err, nerr, "--write-model: %s: no <%s name='%s'> in the model file itself (unnamed, or from an "
                   "<include>d file?)", p->name, tags, name);
  return n;
}

// <inertial pos quat mass diaginertia> of body b from the compiled model (principal frame)
static void mjcf_inertial(xmlNode* body, xmlNode* root, const physModel* m, int b) {
  xmlNode* in = child(body, "inertial", 1, 1);
  const char* drop[5] = {"fullinertia", "euler", "axisangle", "xyaxes", "zaxis"};
  for (int k = 0; k < 5; k++) xmlUnsetProp(in, (const xmlChar*)drop[k]);
  set_numbers(in, "pos", m->body_ipos + 3 * b, 3);
  set_numbers(in, "quat", m->body_iquat + 4 * b, 4);
  set_numbers(in, "mass", m->body_mass + b, 1);
  set_numbers(in, "diaginertia", m->body_inertia + 3 * b, 3);
  xmlNode* compiler = child(root, "compiler", 0, 0);
  if (compiler && has_attr(compiler, "inertiafromgeom", "true")) {
    xmlSetProp(compiler, (const xmlChar*)"inertiafromgeom", (const xmlChar*)"auto");
  }
}

// geom size; a fromto capsule/cylinder: radius in size, the half-length by moving the ends about the midpoint
static void mjcf_size(xmlNode* geom, const physModel* m, int g, int nsize) {
  double ft[6];
  const double* size = m->geom_size + 3 * g;
  if (nsize == 2 && get_numbers(geom, "fromto", ft, 6) == 6) {
    double mid[3], dir[3];
    for (int i = 0; i < 3; i++) mid[i] = 0.5 * (ft[i] + ft[3 + i]), dir[i] = ft[3 + i] - ft[i];
    phys_normalize3(dir);
    for (int i = 0; i < 3; i++) ft[i] = mid[i] - size[1] * dir[i], ft[3 + i] = mid[i] + size[1] * dir[i];
    set_numbers(geom, "fromto", ft, 6);
    nsize = 1;
  }
  set_numbers(geom, "size", size, nsize);
}

// one parameter into an MJCF document; 0 and a message if it cannot be written
static int mjcf_param(xmlNode* root, const physModel* m, const physParam* p, char* err, size_t nerr) {
  int id = p->id;
  if (p->kind == PHYS_PAR_GRAVITY) {
    set_numbers(child(root, "option", 1, 1), "gravity", m->opt.gravity, 3);
    return 1;
  }
  if (p->kind == PHYS_PAR_PENALTY_STIFFNESS || p->kind == PHYS_PAR_PENALTY_DAMPING) {
    double k[3] = {m->opt.penalty_stiffness, m->opt.penalty_damping, m->opt.penalty_vslip};
    set_custom_numeric(root, "physid:penalty", k, 3);
    return 1;
  }
  if (p->kind == PHYS_PAR_RESTITUTION) {
    char key[256];
    snprintf(key, sizeof key, "physid:restitution:%s", phys_id2name(m, "geom", id));
    set_custom_numeric(root, key, m->geom_restitution + id, 1);
    return 1;
  }
  xmlNode* n = mjcf_target(root, m, p, err, nerr);
  if (!n) return 0;
  int dof = p->kind == PHYS_PAR_DAMPING || p->kind == PHYS_PAR_ARMATURE ? m->jnt_dofadr[id] : 0;
  switch (p->kind) {
    case PHYS_PAR_FRICTION: set_numbers(n, "friction", m->geom_friction + 3 * id, 3); break;
    case PHYS_PAR_SIZE: mjcf_size(n, m, id, p->size); break;
    case PHYS_PAR_DAMPING: set_numbers(n, "damping", m->dof_damping + dof, 1); break;
    case PHYS_PAR_ARMATURE: set_numbers(n, "armature", m->dof_armature + dof, 1); break;
    case PHYS_PAR_STIFFNESS: set_numbers(n, "stiffness", m->jnt_stiffness + id, 1); break;
    case PHYS_PAR_SPRING_STIFFNESS: set_numbers(n, "stiffness", m->spring_stiffness + id, 1); break;
    case PHYS_PAR_SPRING_DAMPING: set_numbers(n, "damping", m->spring_damping + id, 1); break;
    case PHYS_PAR_SPRING_RESTLENGTH: set_numbers(n, "springlength", m->spring_restlength + id, 1); break;
    case PHYS_PAR_GEAR: set_numbers(n, "gear", m->actuator_gear + 6 * id, 6); break;
    case PHYS_PAR_POS: set_numbers(n, "pos", m->body_pos + 3 * id, 3); break;
    case PHYS_PAR_MASS: case PHYS_PAR_COM: case PHYS_PAR_INERTIA: mjcf_inertial(n, root, m, id); break;
    default: snprintf(err, nerr, "--write-model: %s: this kind cannot be written to MJCF", p->name); return 0;
  }
  return 1;
}

//---------------------------------------------------------------------------------------------------------
// URDF

// a link's <inertial>: origin at the com (rpy 0), mass, the inertia tensor about the com in the link frame
static void urdf_inertial(xmlNode* link, const physModel* m, int b) {
  xmlNode* in = child(link, "inertial", 1, 0);
  double R[9], I[9] = {0}, zero[3] = {0, 0, 0};
  phys_quat2mat(R, m->body_iquat + 4 * b);
  // I = R diag(inertia) R'
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      for (int k = 0; k < 3; k++) I[3 * i + j] += R[3 * i + k] * m->body_inertia[3 * b + k] * R[3 * j + k];
  xmlNode* origin = child(in, "origin", 1, 1);
  set_numbers(origin, "xyz", m->body_ipos + 3 * b, 3);
  set_numbers(origin, "rpy", zero, 3);
  set_numbers(child(in, "mass", 1, 0), "value", m->body_mass + b, 1);
  xmlNode* inertia = child(in, "inertia", 1, 0);
  const char* key[6] = {"ixx", "iyy", "izz", "ixy", "ixz", "iyz"};
  const int at[6] = {0, 4, 8, 1, 2, 5};
  for (int k = 0; k < 6; k++) set_numbers(inertia, key[k], I + at[k], 1);
}

// one parameter into a URDF document; 0 and a message if it has no URDF form
static int urdf_param(xmlNode* root, const physModel* m, const physParam* p, char* err, size_t nerr) {
  int kind = p->kind;
  if (kind == PHYS_PAR_MASS || kind == PHYS_PAR_COM || kind == PHYS_PAR_INERTIA) {
    const char* name = phys_id2name(m, "body", p->id);
    xmlNode* link = find_named(root, "link", name);
    if (!link) snprintf(err, nerr, "--write-model: %s: no <link name='%s'> in the URDF file", p->name, name);
    else urdf_inertial(link, m, p->id);
    return link != NULL;
  }
  if (kind == PHYS_PAR_DAMPING) {
    const char* name = phys_id2name(m, "joint", p->id);
    xmlNode* joint = find_named(root, "joint", name);
    if (!joint) snprintf(err, nerr, "--write-model: %s: no <joint name='%s'> in the URDF file", p->name, name);
    else set_numbers(child(joint, "dynamics", 1, 0), "damping", m->dof_damping + m->jnt_dofadr[p->id], 1);
    return joint != NULL;
  }
  snprintf(err, nerr, "--write-model: %s: URDF has no place for this kind (mass, com, inertia and joint damping "
           "can be written; use an MJCF model for the others)", p->name);
  return 0;
}

//---------------------------------------------------------------------------------------------------------
// entry point

// 1 if the file name ends in .urdf (any case)
static int is_urdf(const char* path) {
  size_t n = strlen(path);
  return n >= 5 && strcasecmp(path + n - 5, ".urdf") == 0;
}

// parse src, apply every parameter, save to f (f NULL: check only)
int id_write_model(FILE* f, const char* src, const physModel* m, const physParamTable* t, char* err, size_t nerr) {
  int urdf = is_urdf(src);
  xmlDoc* doc = xmlReadFile(src, NULL, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
  xmlNode* root = doc ? xmlDocGetRootElement(doc) : NULL;
  int ok = root && is_elem(root, urdf ? "robot" : "mujoco");
  if (!ok) snprintf(err, nerr, "--write-model: cannot read %s as %s", src, urdf ? "URDF" : "MJCF");
  for (int i = 0; ok && i < t->n; i++) {
    ok = urdf ? urdf_param(root, m, t->param + i, err, nerr) : mjcf_param(root, m, t->param + i, err, nerr);
  }
  if (ok && f && xmlDocFormatDump(f, doc, 0) < 0) {
    snprintf(err, nerr, "--write-model: cannot write the model");
    ok = 0;
  }
  xmlFreeDoc(doc);
  return ok;
}
