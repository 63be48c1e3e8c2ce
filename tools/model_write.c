// model_write.c - `physid identify --write-model`: the model file with the identified values, edited as an
// XML document (libxml2: no network, no entity expansion) so that everything else in it stays as written.
//
// Values come from the compiled model m (which holds the fit), written with "%.17g" so they load back
// exactly: MJCF geom friction (all three coefficients) and size (a fromto capsule/cylinder keeps its axis and
// midpoint and gets the new half-length), <custom><numeric name="physid:restitution:GEOM">, joint damping /
// armature / stiffness / frictionloss, tendon stiffness / damping / springlength, a body's <inertial pos quat mass
// diaginertia> (the principal frame, replacing any other form; compiler inertiafromgeom="true" becomes
// "auto" so that it is read), body pos, option gravity, actuator gear, actuator gain/bias/kp/kv (kp, kv of a
// <position>, <velocity>; else the element becomes <general gaintype="affine" gainprm biastype="affine"
// biasprm>), physid:penalty. URDF: a link's
// <inertial> (origin at the centre of mass, the full inertia tensor in the link frame), a joint's
// <dynamics damping friction> (frictionloss); other kinds have no URDF form and are refused. The input kinds
// (delay, inputgain, inputbias) describe the data, not the model: they are not written. Elements pulled in by MJCF <include>
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

// the integrator the fit ran with (issue 16): MuJoCo's <option integrator> set to "Euler" when it names another
// (physid ran semi-implicit Euler or its own implicit step, which is not MuJoCo's: MuJoCo 2.2.2's implicit treats
// only the velocity terms implicitly), and physid's own value in <custom><text name="physid:integrator">,
// written for implicit and pbd, removed for euler (the default)
static void mjcf_integrator(xmlNode* root, const physModel* m) {
  static const char* const NAMES[] = {"euler", "implicit", "pbd"};
  int physid = m->opt.integrator != PHYS_INT_EULER;
  xmlNode* opt = child(root, "option", physid, 1);
  xmlChar* v = opt ? xmlGetProp(opt, (const xmlChar*)"integrator") : NULL;
  if (opt && (physid || (v && strcmp((const char*)v, "Euler") != 0)))
    xmlSetProp(opt, (const xmlChar*)"integrator", (const xmlChar*)"Euler");
  xmlFree(v);
  xmlNode* custom = child(root, "custom", physid, 0);
  xmlNode* text = NULL;
  for (xmlNode* c = custom ? custom->children : NULL; c && !text; c = c->next)
    if (is_elem(c, "text") && has_attr(c, "name", "physid:integrator")) text = c;
  if (!physid) {
    if (text) xmlUnlinkNode(text), xmlFreeNode(text);
    return;
  }
  if (!text) {
    text = xmlNewChild(custom, NULL, (const xmlChar*)"text", NULL);
    xmlSetProp(text, (const xmlChar*)"name", (const xmlChar*)"physid:integrator");
  }
  xmlSetProp(text, (const xmlChar*)"data", (const xmlChar*)NAMES[m->opt.integrator]);
}

// the element of a parameter's object, or NULL with a message
static xmlNode* mjcf_target(xmlNode* root, const physModel* m, const physParam* p, char* err, size_t nerr) {
  const char* kind = "body";
  const char* tags = "body";
  switch (p->kind) {
    case PHYS_PAR_FRICTION: case PHYS_PAR_TORSION: case PHYS_PAR_ROLLING:
    case PHYS_PAR_SIZE: case PHYS_PAR_VERTICES: case PHYS_PAR_HEIGHT:
      kind = "geom", tags = "geom"; break;
    case PHYS_PAR_DAMPING: case PHYS_PAR_ARMATURE: case PHYS_PAR_STIFFNESS: case PHYS_PAR_FRICTIONLOSS:
      kind = "joint", tags = "joint|freejoint"; break;
    case PHYS_PAR_SPRING_STIFFNESS: case PHYS_PAR_SPRING_DAMPING: case PHYS_PAR_SPRING_RESTLENGTH:
      kind = "spring", tags = "spatial|fixed"; break;
    case PHYS_PAR_GEAR: case PHYS_PAR_GAIN: case PHYS_PAR_BIAS: case PHYS_PAR_KP: case PHYS_PAR_KV:
    case PHYS_PAR_TIMECONST: case PHYS_PAR_MUSCLE_FORCE:
      kind = "actuator", tags = "motor|general|position|velocity|cylinder|muscle"; break;
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

// an actuator's gain and bias: kp of a <position> and kv of a <velocity> as themselves, else the element
// becomes a <general> with affine gain and bias (gainprm, biasprm: MuJoCo's meaning of the three values)
static void mjcf_actuator_gain(xmlNode* n, const physModel* m, const physParam* p) {
  int a = p->id;
  if ((p->kind == PHYS_PAR_KP && is_elem(n, "position")) || (p->kind == PHYS_PAR_KV && is_elem(n, "velocity"))) {
    set_numbers(n, p->kind == PHYS_PAR_KP ? "kp" : "kv", m->actuator_gainprm + 3 * a, 1);
    return;
  }
  xmlNodeSetName(n, (const xmlChar*)"general");
  xmlUnsetProp(n, (const xmlChar*)"kp");
  xmlUnsetProp(n, (const xmlChar*)"kv");
  xmlSetProp(n, (const xmlChar*)"gaintype", (const xmlChar*)"affine");
  set_numbers(n, "gainprm", m->actuator_gainprm + 3 * a, 3);
  xmlSetProp(n, (const xmlChar*)"biastype", (const xmlChar*)"affine");
  set_numbers(n, "biasprm", m->actuator_biasprm + 3 * a, 3);
}

// issue 14 item 2: attribute key of n = the count values x ("%.17g" doubles, or ints when xi), any length
static int set_long_list(xmlNode* n, const char* key, const double* x, const int* xi, int count) {
  char* buf = malloc(32 * (size_t)count + 1);
  if (!buf) return 0;
  size_t len = 0;
  buf[0] = 0;
  for (int i = 0; i < count; i++)
    len += (size_t)(xi ? sprintf(buf + len, "%s%d", i ? " " : "", xi[i]) : sprintf(buf + len, "%s%.17g", i ? " " : "", x[i]));
  xmlSetProp(n, (const xmlChar*)key, (const xmlChar*)buf);
  free(buf);
  return 1;
}

// a learned shape (vertices:GEOM) as an inline mesh: <mesh name vertex face> with every vertex and the hull's
// polygons as triangle fans (closed and outward: the mass properties physid reads from faces; a vertex inside the
// hull is in no face), the geom a mesh geom of it, and the body's <inertial> as compiled (the identified model's
// mass properties did not follow the shape). The mesh element replaces a file mesh's (its scale dropped: the
// vertices are scaled) or is added for a box
static int mjcf_vertices(xmlNode* root, xmlNode* geom, const physModel* m, const physParam* p, char* err,
                         size_t nerr) {
  int g = p->id, mid = m->geom_dataid[g], b = m->geom_bodyid[g];
  const char* mname = phys_id2name(m, "mesh", mid);
  const char* bname = phys_id2name(m, "body", b);
  xmlNode* body = *bname ? find_named(root, "body", bname) : NULL;
  if (!body) {
    snprintf(err, nerr, "--write-model: %s: its body is not a named <body> of the model file (its <inertial> must "
             "be written)", p->name);
    return 0;
  }
  xmlNode* mesh = find_named(root, "mesh", mname);
  if (!mesh) {
    mesh = xmlNewChild(child(root, "asset", 1, 1), NULL, (const xmlChar*)"mesh", NULL);
    xmlSetProp(mesh, (const xmlChar*)"name", (const xmlChar*)mname);
  }
  const char* drop[6] = {"file", "scale", "refpos", "refquat", "smoothnormal", "class"};
  for (int k = 0; k < 6; k++) xmlUnsetProp(mesh, (const xmlChar*)drop[k]);
  int ntri = 0, f0 = m->mesh_hullfaceadr[mid], nf = m->mesh_hullfacenum[mid];
  for (int f = f0; f < f0 + nf; f++) ntri += m->hull_facenum[f] - 2;
  int* tri = malloc(sizeof(int) * 3 * (size_t)(ntri ? ntri : 1));
  int ok = tri != NULL, t = 0;
  for (int f = f0; ok && f < f0 + nf; f++) {
    const int* fv = m->hull_facevert + m->hull_faceadr[f];
    for (int k = 1; k + 1 < m->hull_facenum[f]; k++, t++) tri[3 * t] = fv[0], tri[3 * t + 1] = fv[k], tri[3 * t + 2] = fv[k + 1];
  }
  ok = ok && set_long_list(mesh, "vertex", m->mesh_vert + 3 * m->mesh_vertadr[mid], NULL, 3 * m->mesh_vertnum[mid]) &&
       set_long_list(mesh, "face", NULL, tri, 3 * ntri);
  free(tri);
  if (!ok) {
    snprintf(err, nerr, "--write-model: %s: out of memory", p->name);
    return 0;
  }
  xmlSetProp(geom, (const xmlChar*)"type", (const xmlChar*)"mesh");
  xmlSetProp(geom, (const xmlChar*)"mesh", (const xmlChar*)mname);
  xmlUnsetProp(geom, (const xmlChar*)"size");
  mjcf_inertial(body, root, m, b);
  return 1;
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
  if (p->kind == PHYS_PAR_POLYCOEF || p->kind == PHYS_PAR_SOLREF) {   // issue 15 item 2: an <equality> child
    const char* name = phys_id2name(m, "equality", id);
    xmlNode* e = *name ? find_named(child(root, "equality", 0, 0), "connect|weld|joint|tendon", name) : NULL;
    if (!e) {
      snprintf(err, nerr, "--write-model: %s: no <equality> element named '%s' in the model file itself", p->name, name);
      return 0;
    }
    if (p->kind == PHYS_PAR_POLYCOEF) set_numbers(e, "polycoef", m->eq_data + PHYS_EQ_NDATA * id, 5);
    else set_numbers(e, "solref", m->eq_solref + 2 * id, 2);
    return 1;
  }
  xmlNode* n = mjcf_target(root, m, p, err, nerr);
  if (!n) return 0;
  int dof = p->kind == PHYS_PAR_DAMPING || p->kind == PHYS_PAR_ARMATURE || p->kind == PHYS_PAR_FRICTIONLOSS
                ? m->jnt_dofadr[id] : 0;
  switch (p->kind) {
    case PHYS_PAR_FRICTION:
    case PHYS_PAR_TORSION:
    case PHYS_PAR_ROLLING: set_numbers(n, "friction", m->geom_friction + 3 * id, 3); break;
    case PHYS_PAR_SIZE: mjcf_size(n, m, id, p->size); break;
    case PHYS_PAR_DAMPING: set_numbers(n, "damping", m->dof_damping + dof, 1); break;
    case PHYS_PAR_ARMATURE: set_numbers(n, "armature", m->dof_armature + dof, 1); break;
    case PHYS_PAR_FRICTIONLOSS: set_numbers(n, "frictionloss", m->dof_frictionloss + dof, 1); break;
    case PHYS_PAR_STIFFNESS: set_numbers(n, "stiffness", m->jnt_stiffness + id, 1); break;
    case PHYS_PAR_SPRING_STIFFNESS: set_numbers(n, "stiffness", m->spring_stiffness + id, 1); break;
    case PHYS_PAR_SPRING_DAMPING: set_numbers(n, "damping", m->spring_damping + id, 1); break;
    case PHYS_PAR_SPRING_RESTLENGTH: set_numbers(n, "springlength", m->spring_restlength + id, 1); break;
    case PHYS_PAR_GEAR: set_numbers(n, "gear", m->actuator_gear + 6 * id, 6); break;
    case PHYS_PAR_GAIN: case PHYS_PAR_BIAS: case PHYS_PAR_KP: case PHYS_PAR_KV: mjcf_actuator_gain(n, m, p); break;
    case PHYS_PAR_TIMECONST:   // a filter: <cylinder timeconst>, a <muscle>'s two, else <general dynprm> (all three)
      if (is_elem(n, "muscle"))
        set_numbers(n, "timeconst", m->actuator_dynprm + 3 * id, 2);
      else
        set_numbers(n, is_elem(n, "cylinder") ? "timeconst" : "dynprm", m->actuator_dynprm + 3 * id,
                    is_elem(n, "cylinder") ? 1 : 3);
      break;
    case PHYS_PAR_MUSCLE_FORCE:   // <muscle force>, else <general gainprm> (and biasprm: a muscle bias), all nine
      if (is_elem(n, "muscle")) {
        set_numbers(n, "force", m->actuator_muscleprm + 18 * id + 2, 1);
      } else {
        set_numbers(n, "gainprm", m->actuator_muscleprm + 18 * id, 9);
        if (m->actuator_biastype[id] == PHYS_GAIN_MUSCLE) set_numbers(n, "biasprm", m->actuator_muscleprm + 18 * id + 9, 9);
      }
      break;
    case PHYS_PAR_POS: set_numbers(n, "pos", m->body_pos + 3 * id, 3); break;
    case PHYS_PAR_HEIGHT: set_numbers(n, "pos", m->geom_pos + 3 * id, 3); break;   // (a plane: its body frame's)
    case PHYS_PAR_MASS: case PHYS_PAR_COM: case PHYS_PAR_INERTIA: case PHYS_PAR_INERTIA9: mjcf_inertial(n, root, m, id); break;
    case PHYS_PAR_VERTICES: return mjcf_vertices(root, n, m, p, err, nerr);
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
  if (phys_param_is_inertial(kind)) {
    const char* name = phys_id2name(m, "body", p->id);
    xmlNode* link = find_named(root, "link", name);
    if (!link) snprintf(err, nerr, "--write-model: %s: no <link name='%s'> in the URDF file", p->name, name);
    else urdf_inertial(link, m, p->id);
    return link != NULL;
  }
  if (kind == PHYS_PAR_DAMPING || kind == PHYS_PAR_FRICTIONLOSS) {
    const char* name = phys_id2name(m, "joint", p->id);
    xmlNode* joint = find_named(root, "joint", name);
    int dof = m->jnt_dofadr[p->id];
    if (!joint) snprintf(err, nerr, "--write-model: %s: no <joint name='%s'> in the URDF file", p->name, name);
    else if (kind == PHYS_PAR_DAMPING) set_numbers(child(joint, "dynamics", 1, 0), "damping", m->dof_damping + dof, 1);
    else set_numbers(child(joint, "dynamics", 1, 0), "friction", m->dof_frictionloss + dof, 1);
    return joint != NULL;
  }
  snprintf(err, nerr, "--write-model: %s: URDF has no place for this kind (mass, com, inertia, joint damping and "
           "frictionloss can be written; use an MJCF model for the others)", p->name);
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
    if (phys_param_is_input(t->param[i].kind)) continue;   // the data's input transforms, not the model's
    ok = urdf ? urdf_param(root, m, t->param + i, err, nerr) : mjcf_param(root, m, t->param + i, err, nerr);
  }
  if (ok && !urdf) mjcf_integrator(root, m);
  if (ok && f && xmlDocFormatDump(f, doc, 0) < 0) {
    snprintf(err, nerr, "--write-model: cannot write the model");
    ok = 0;
  }
  xmlFreeDoc(doc);
  return ok;
}

//---------------------------------------------------------------------------------------------------------
// a composed world (--add): the whole model as one MJCF file, written from the compiled model m

// print "%.17g" numbers separated by spaces
static void put_numbers(FILE* f, const double* x, int n) {
  for (int i = 0; i < n; i++) fprintf(f, "%s%.17g", i ? " " : "", x[i]);
}

// XML-escaped text of s (names may hold & < > ")
static void put_text(FILE* f, const char* s) {
  for (; *s; s++) {
    switch (*s) {
      case '&': fputs("&amp;", f); break;
      case '<': fputs("&lt;", f); break;
      case '>': fputs("&gt;", f); break;
      case '"': fputs("&quot;", f); break;
      default: fputc(*s, f);
    }
  }
}

// ` key="numbers"`
static void put_attr(FILE* f, const char* key, const double* x, int n) {
  fprintf(f, " %s=\"", key);
  put_numbers(f, x, n);
  fputc('"', f);
}

// ` name="NAME"` when the object is named
static void put_name(FILE* f, const physModel* m, const char* kind, int id) {
  const char* name = phys_id2name(m, kind, id);
  if (!*name) return;
  fputs(" name=\"", f);
  put_text(f, name);
  fputc('"', f);
}

static const char* const WORLD_GEOM_TYPE[PHYS_NGEOMTYPE] = {"plane", "sphere", "capsule", "ellipsoid", "cylinder",
                                                            "box", "mesh"};
static const char* const WORLD_JOINT_TYPE[4] = {"free", "ball", "slide", "hinge"};

// what a composed world must not hold to be written (meshes, unnamed referenced objects); 0 and a message
// the name of sensor i's object ("" if unnamed; the world body is "world")
static const char* sensor_object_name(const physModel* m, int i) {
  static const char* const KIND[] = {"", "body", "body", "joint", "geom", "site", "actuator"};
  int id = m->sensor_objid[i], type = m->sensor_objtype[i];
  if ((type == PHYS_OBJ_BODY || type == PHYS_OBJ_XBODY) && id == 0) return "world";
  return phys_id2name(m, KIND[type], id);
}

static int world_writable(const physModel* m, char* err, size_t nerr) {
  const char* what = NULL;
  const char* who = "";
  if (m->nmesh > 0) what = "mesh geoms (their vertices are not written into one MJCF file yet)";
  for (int i = 0; !what && i < m->nexclude; i++) {
    int b = !*phys_id2name(m, "body", m->exclude_body1[i]) ? m->exclude_body1[i] : m->exclude_body2[i];
    if (!*phys_id2name(m, "body", b)) what = "an <exclude> of an unnamed body";
  }
  for (int i = 0; !what && i < m->nu; i++) {
    const char* kind = m->actuator_trntype[i] == PHYS_TRN_JOINT ? "joint" : "spring";
    if (!*phys_id2name(m, kind, m->actuator_trnid[i])) what = "an actuator on an unnamed joint or tendon";
  }
  for (int i = 0; !what && i < m->nsensor; i++) {
    if (!*sensor_object_name(m, i)) what = "a sensor on an unnamed object";
  }
  if (!what && m->neq > 0) what = "equality constraints (not written into a composed world yet)";
  for (int i = 0; !what && i < m->nu; i++)   // issue 15 items 2, 6
    if (m->actuator_trntype[i] == PHYS_TRN_SLIDERCRANK || m->actuator_trntype[i] == PHYS_TRN_BODY ||
        m->actuator_dyntype[i] == PHYS_DYN_MUSCLE ||
        m->actuator_gaintype[i] != PHYS_GAIN_AFFINE || m->actuator_biastype[i] != PHYS_GAIN_AFFINE)
      what = "muscles, slider-crank or adhesion actuators (not written into a composed world yet)";
  for (int k = 0; !what && k < m->nspringsite; k++) {
    int t = m->spring_objtype[k], geom = t == PHYS_WRAP_SPHERE || t == PHYS_WRAP_CYLINDER;
    if (t == PHYS_WRAP_JOINT && !*phys_id2name(m, "joint", m->spring_site[k])) what = "a fixed tendon on an unnamed joint";
    if (t == PHYS_WRAP_SITE && !*phys_id2name(m, "site", m->spring_site[k])) what = "a tendon through an unnamed site";
    if (geom && (!*phys_id2name(m, "geom", m->spring_site[k]) ||
                 (m->spring_prm[k] >= 0 && !*phys_id2name(m, "site", (int)m->spring_prm[k]))))
      what = "a tendon wrapping an unnamed geom or with an unnamed side site";
  }
  for (int i = 0; !what && i < m->npair; i++) {
    if (!*phys_id2name(m, "geom", m->pair_geom1[i]) || !*phys_id2name(m, "geom", m->pair_geom2[i]))
      what = "a contact pair of an unnamed geom";
    double e = fmax(m->geom_restitution[m->pair_geom1[i]], m->geom_restitution[m->pair_geom2[i]]);
    if (!what && m->pair_restitution[i] != e) what = "a contact pair with its own restitution (no MJCF form without a pair name)";
  }
  for (int g = 0; !what && g < m->ngeom; g++) {
    if (m->geom_restitution[g] != 0 && !*phys_id2name(m, "geom", g)) what = "an unnamed geom with a restitution";
  }
  for (int b = 1; !what && b < m->nbody; b++) {
    if (m->body_dofnum[b] > 0 && !(m->body_mass[b] > 1e-15)) {
      what = "a moving body without mass (a URDF link whose mass is below it: MuJoCo's MJCF rule refuses it)";
      who = phys_id2name(m, "body", b);
    }
  }
  if (what) snprintf(err, nerr, "--write-model: the composed world cannot be written as one MJCF file: it has %s%s%s",
                     what, *who ? ": " : "", who);
  return what == NULL;
}

// <option> and the physid settings of <custom>
static void world_options(FILE* f, const physModel* m) {
  const physOption* o = &m->opt;
  fprintf(f, "  <compiler angle=\"radian\" inertiafromgeom=\"false\"/>\n  <option");
  put_attr(f, "timestep", &o->timestep, 1);
  put_attr(f, "gravity", o->gravity, 3);
  fprintf(f, ">\n    <flag");
  // the disabled ones only (every flag's default is enabled): MuJoCo 2.2.2, which has no eulerdamp flag, then
  // loads the file unless it is disabled (`physid mpc`'s MuJoCo plant loads such a file)
  static const char* const NAMES[] = {"contact", "limit", "gravity", "passive", "eulerdamp", "actuation", "equality"};
  static const int BITS[] = {PHYS_DSBL_CONTACT, PHYS_DSBL_LIMIT, PHYS_DSBL_GRAVITY, PHYS_DSBL_PASSIVE,
                             PHYS_DSBL_EULERDAMP, PHYS_DSBL_ACTUATION, PHYS_DSBL_EQUALITY};
  for (int i = 0; i < 7; i++)
    if (o->disableflags & BITS[i]) fprintf(f, " %s=\"disable\"", NAMES[i]);
  if (o->enableflags & PHYS_ENBL_SENSORNOISE) fprintf(f, " sensornoise=\"enable\"");
  fprintf(f, "/>\n  </option>\n");
  if (m->nconmax > 0) fprintf(f, "  <size nconmax=\"%d\"/>\n", m->nconmax);
  fprintf(f, "  <custom>\n    <text name=\"physid:contact\" data=\"%s\"/>\n", phys_contact_name(o->contact));
  static const char* const INTEGRATOR[] = {"euler", "implicit", "pbd"};
  if (o->integrator != PHYS_INT_EULER)   // physid's own (the <option> has MuJoCo's default, Euler)
    fprintf(f, "    <text name=\"physid:integrator\" data=\"%s\"/>\n", INTEGRATOR[o->integrator]);
  if (o->gradflags) {
    fprintf(f, "    <text name=\"physid:grad\" data=\"%s%s%s\"/>\n", o->gradflags & PHYS_GRAD_TOI ? "toi" : "",
            o->gradflags == (PHYS_GRAD_TOI | PHYS_GRAD_COMPLEMENTARITY) ? " " : "",
            o->gradflags & PHYS_GRAD_COMPLEMENTARITY ? "complementarity" : "");
  }
  fprintf(f, "    <numeric name=\"physid:baumgarte\"");
  put_attr(f, "data", &o->baumgarte, 1);
  double pen[3] = {o->penalty_stiffness, o->penalty_damping, o->penalty_vslip};
  fprintf(f, "/>\n    <numeric name=\"physid:penalty\"");
  put_attr(f, "data", pen, 3);
  double sol[2] = {o->solver_iterations, o->solver_tolerance};
  fprintf(f, "/>\n    <numeric name=\"physid:solver\"");
  put_attr(f, "data", sol, 2);
  fprintf(f, "/>\n");
  int nrest = 0;
  for (int i = 0; i < m->nu; i++) nrest += m->actuator_trntype[i] == PHYS_TRN_RESTLENGTH;
  if (nrest) {
    fprintf(f, "    <text name=\"physid:restlength\" data=\"");
    for (int i = 0, k = 0; i < m->nu; i++) {
      if (m->actuator_trntype[i] != PHYS_TRN_RESTLENGTH) continue;
      fprintf(f, "%s", k++ ? " " : "");
      put_text(f, phys_id2name(m, "actuator", i));
    }
    fprintf(f, "\"/>\n");
  }
  for (int g = 0; g < m->ngeom; g++) {
    if (m->geom_restitution[g] == 0) continue;
    fprintf(f, "    <numeric name=\"physid:restitution:");
    put_text(f, phys_id2name(m, "geom", g));
    fputc('"', f);
    put_attr(f, "data", m->geom_restitution + g, 1);
    fprintf(f, "/>\n");
  }
  fprintf(f, "  </custom>\n");
}

// one geom of the model as a <geom> line at the indent
static void world_geom(FILE* f, const physModel* m, int g, int indent) {
  fprintf(f, "%*s<geom", indent, "");
  put_name(f, m, "geom", g);
  int t = m->geom_type[g];
  fprintf(f, " type=\"%s\"", WORLD_GEOM_TYPE[t]);
  put_attr(f, "size", m->geom_size + 3 * g, 3);
  put_attr(f, "pos", m->geom_pos + 3 * g, 3);
  put_attr(f, "quat", m->geom_quat + 4 * g, 4);
  put_attr(f, "friction", m->geom_friction + 3 * g, 3);
  put_attr(f, "margin", m->geom_margin + g, 1);
  put_attr(f, "rgba", m->geom_rgba + 4 * g, 4);
  fprintf(f, " contype=\"%d\" conaffinity=\"%d\" condim=\"%d\"/>\n", m->geom_contype[g], m->geom_conaffinity[g],
          m->geom_condim[g]);
}

// body b with its inertial, joints, geoms, sites and child bodies, at the indent
static void world_body(FILE* f, const physModel* m, int b, int indent) {
  if (b > 0) {
    fprintf(f, "%*s<body", indent, "");
    put_name(f, m, "body", b);
    put_attr(f, "pos", m->body_pos + 3 * b, 3);
    put_attr(f, "quat", m->body_quat + 4 * b, 4);
    fprintf(f, ">\n");
    indent += 2;
    if (m->body_mass[b] > 0 || m->body_inertia[3 * b] > 0) {
      fprintf(f, "%*s<inertial", indent, "");
      put_attr(f, "pos", m->body_ipos + 3 * b, 3);
      put_attr(f, "quat", m->body_iquat + 4 * b, 4);
      put_attr(f, "mass", m->body_mass + b, 1);
      put_attr(f, "diaginertia", m->body_inertia + 3 * b, 3);
      fprintf(f, "/>\n");
    }
  }
  for (int j = m->body_jntadr[b]; j >= 0 && j < m->body_jntadr[b] + m->body_jntnum[b]; j++) {
    int t = m->jnt_type[j], q = m->jnt_qposadr[j], d = m->jnt_dofadr[j];
    fprintf(f, "%*s<joint", indent, "");
    put_name(f, m, "joint", j);
    fprintf(f, " type=\"%s\"", WORLD_JOINT_TYPE[t]);
    if (t != PHYS_JNT_FREE) {
      put_attr(f, "pos", m->jnt_pos + 3 * j, 3);
      if (t != PHYS_JNT_BALL) put_attr(f, "axis", m->jnt_axis + 3 * j, 3);
      fprintf(f, " limited=\"%s\"", m->jnt_limited[j] ? "true" : "false");
      if (m->jnt_limited[j]) put_attr(f, "range", m->jnt_range + 2 * j, 2);
      if (t != PHYS_JNT_BALL) {
        put_attr(f, "ref", m->qpos0 + q, 1);
        put_attr(f, "springref", m->qpos_spring + q, 1);
      }
      put_attr(f, "stiffness", m->jnt_stiffness + j, 1);
    }
    put_attr(f, "damping", m->dof_damping + d, 1);
    put_attr(f, "armature", m->dof_armature + d, 1);
    if (m->dof_frictionloss[d] > 0) put_attr(f, "frictionloss", m->dof_frictionloss + d, 1);
    fprintf(f, "/>\n");
  }
  for (int g = 0; g < m->ngeom; g++)
    if (m->geom_bodyid[g] == b) world_geom(f, m, g, indent);
  for (int s = 0; s < m->nsite; s++) {
    if (m->site_bodyid[s] != b) continue;
    fprintf(f, "%*s<site", indent, "");
    put_name(f, m, "site", s);
    put_attr(f, "pos", m->site_pos + 3 * s, 3);
    put_attr(f, "quat", m->site_quat + 4 * s, 4);
    static const char* const SITE_TYPE[] = {"sphere", "capsule", "ellipsoid", "cylinder", "box"};
    fprintf(f, " type=\"%s\"", SITE_TYPE[m->site_type[s]]);
    put_attr(f, "size", m->site_size + 3 * s, 3);
    fprintf(f, "/>\n");
  }
  for (int c = b + 1; c < m->nbody; c++)
    if (m->body_parentid[c] == b) world_body(f, m, c, indent);
  if (b > 0) fprintf(f, "%*s</body>\n", indent - 2, "");
}

// one entry of a tendon's path: <joint joint coef>, <site site>, <geom geom sidesite>, <pulley divisor>
static void world_path_entry(FILE* f, const physModel* m, int k) {
  static const char* const TAG[] = {"site", "joint", "pulley", "geom", "geom"};
  static const char* const KIND[] = {"site", "joint", "", "geom", "geom"};
  int t = m->spring_objtype[k];
  fprintf(f, "      <%s", TAG[t]);
  if (t != PHYS_WRAP_PULLEY) {
    fprintf(f, " %s=\"", TAG[t]);
    put_text(f, phys_id2name(m, KIND[t], m->spring_site[k]));
    fputc('"', f);
  }
  if (t == PHYS_WRAP_JOINT) put_attr(f, "coef", m->spring_prm + k, 1);
  if (t == PHYS_WRAP_PULLEY) put_attr(f, "divisor", m->spring_prm + k, 1);
  if ((t == PHYS_WRAP_SPHERE || t == PHYS_WRAP_CYLINDER) && m->spring_prm[k] >= 0) {
    fprintf(f, " sidesite=\"");
    put_text(f, phys_id2name(m, "site", (int)m->spring_prm[k]));
    fputc('"', f);
  }
  fprintf(f, "/>\n");
}

// <tendon>: fixed and spatial tendons with their paths
static void world_tendons(FILE* f, const physModel* m) {
  if (m->nspring) fprintf(f, "  <tendon>\n");
  for (int i = 0; i < m->nspring; i++) {
    int fixed = m->spring_type[i] == PHYS_SPRING_FIXED;
    fprintf(f, "    <%s", fixed ? "fixed" : "spatial");
    put_name(f, m, "spring", i);
    put_attr(f, "stiffness", m->spring_stiffness + i, 1);
    put_attr(f, "damping", m->spring_damping + i, 1);
    put_attr(f, "springlength", m->spring_restlength + i, 1);
    if (m->spring_frictionloss[i] > 0) put_attr(f, "frictionloss", m->spring_frictionloss + i, 1);
    if (m->spring_limited[i]) {
      fprintf(f, " limited=\"true\"");
      put_attr(f, "range", m->spring_range + 2 * i, 2);
    }
    fprintf(f, ">\n");
    for (int k = m->spring_adr[i]; k < m->spring_adr[i] + m->spring_num[i]; k++) world_path_entry(f, m, k);
    fprintf(f, "    </%s>\n", fixed ? "fixed" : "spatial");
  }
  if (m->nspring) fprintf(f, "  </tendon>\n");
}

// <actuator>: motors, or general actuators with their dynamics, gain, bias and limits
static void world_actuators(FILE* f, const physModel* m) {
  if (m->nu) fprintf(f, "  <actuator>\n");
  for (int i = 0; i < m->nu; i++) {
    static const char* const DYN[] = {"none", "integrator", "filter"};
    int trn = m->actuator_trntype[i], dyn = m->actuator_dyntype[i];
    const char* attr = trn == PHYS_TRN_JOINT ? "joint" : (trn == PHYS_TRN_SITE ? "site" : "tendon");
    const double *g = m->actuator_gainprm + 3 * i, *b = m->actuator_biasprm + 3 * i;
    int motor = dyn == PHYS_DYN_NONE && g[0] == 1 && g[1] == 0 && g[2] == 0 && b[0] == 0 && b[1] == 0 && b[2] == 0;
    fprintf(f, "    <%s", motor ? "motor" : "general");
    put_name(f, m, "actuator", i);
    fprintf(f, " %s=\"", attr);
    put_text(f, phys_id2name(m, trn == PHYS_TRN_JOINT ? "joint" : (trn == PHYS_TRN_SITE ? "site" : "spring"),
                             m->actuator_trnid[i]));
    fputc('"', f);
    put_attr(f, "gear", m->actuator_gear + 6 * i, 6);
    if (!motor) {
      if (dyn != PHYS_DYN_NONE) {
        fprintf(f, " dyntype=\"%s\"", DYN[dyn]);
        put_attr(f, "dynprm", m->actuator_dynprm + 3 * i, 3);
      }
      fprintf(f, " gaintype=\"affine\"");
      put_attr(f, "gainprm", g, 3);
      fprintf(f, " biastype=\"affine\"");
      put_attr(f, "biasprm", b, 3);
    }
    fprintf(f, " ctrllimited=\"%s\"", m->actuator_ctrllimited[i] ? "true" : "false");
    if (m->actuator_ctrllimited[i]) put_attr(f, "ctrlrange", m->actuator_ctrlrange + 2 * i, 2);
    if (m->actuator_forcelimited[i]) {
      fprintf(f, " forcelimited=\"true\"");
      put_attr(f, "forcerange", m->actuator_forcerange + 2 * i, 2);
    }
    if (m->actuator_actlimited[i]) {
      fprintf(f, " actlimited=\"true\"");
      put_attr(f, "actrange", m->actuator_actrange + 2 * i, 2);
    }
    fprintf(f, "/>\n");
  }
  if (m->nu) fprintf(f, "  </actuator>\n");
}

// <sensor>: the object by its attribute (frame sensors: objtype and objname), noise and cutoff
static void world_sensors(FILE* f, const physModel* m) {
  if (m->nsensor) fprintf(f, "  <sensor>\n");
  for (int i = 0; i < m->nsensor; i++) {
    static const char* const ATTR[] = {"", "body", "body", "joint", "geom", "site", "actuator"};
    static const char* const OBJ[] = {"", "body", "xbody", "joint", "geom", "site", "actuator"};
    int type = m->sensor_type[i], ot = m->sensor_objtype[i];
    int frame = type == PHYS_SENS_FRAMEPOS || type == PHYS_SENS_FRAMEQUAT || type == PHYS_SENS_FRAMELINVEL ||
                type == PHYS_SENS_FRAMEANGVEL;
    fprintf(f, "    <%s", phys_sensor_name(type));
    put_name(f, m, "sensor", i);
    if (frame) fprintf(f, " objtype=\"%s\" objname=\"", OBJ[ot]);
    else fprintf(f, " %s=\"", ATTR[ot]);
    put_text(f, sensor_object_name(m, i));
    fputc('"', f);
    put_attr(f, "noise", m->sensor_noise + i, 1);
    put_attr(f, "cutoff", m->sensor_cutoff + i, 1);
    fprintf(f, "/>\n");
  }
  if (m->nsensor) fprintf(f, "  </sensor>\n");
}

// <contact>: pairs and exclusions
static void world_contacts(FILE* f, const physModel* m) {
  if (m->npair || m->nexclude) fprintf(f, "  <contact>\n");
  for (int i = 0; i < m->npair; i++) {
    fprintf(f, "    <pair geom1=\"");
    put_text(f, phys_id2name(m, "geom", m->pair_geom1[i]));
    fprintf(f, "\" geom2=\"");
    put_text(f, phys_id2name(m, "geom", m->pair_geom2[i]));
    fputc('"', f);
    double fr[5] = {m->pair_friction[i], m->pair_friction[i], 0.005, 0.0001, 0.0001};
    put_attr(f, "friction", fr, 5);
    put_attr(f, "margin", m->pair_margin + i, 1);
    fprintf(f, "/>\n");
  }
  for (int i = 0; i < m->nexclude; i++) {
    fprintf(f, "    <exclude body1=\"");
    put_text(f, phys_id2name(m, "body", m->exclude_body1[i]));
    fprintf(f, "\" body2=\"");
    put_text(f, phys_id2name(m, "body", m->exclude_body2[i]));
    fprintf(f, "\"/>\n");
  }
  if (m->npair || m->nexclude) fprintf(f, "  </contact>\n");
}

// <keyframe>: every key with time, qpos, qvel, ctrl and act
static void world_keys(FILE* f, const physModel* m) {
  if (m->nkey) fprintf(f, "  <keyframe>\n");
  for (int k = 0; k < m->nkey; k++) {
    fprintf(f, "    <key");
    put_name(f, m, "key", k);
    put_attr(f, "time", m->key_time + k, 1);
    put_attr(f, "qpos", m->key_qpos + (size_t)k * m->nq, m->nq);
    if (m->nv) put_attr(f, "qvel", m->key_qvel + (size_t)k * m->nv, m->nv);
    if (m->nu) put_attr(f, "ctrl", m->key_ctrl + (size_t)k * m->nu, m->nu);
    if (m->na) put_attr(f, "act", m->key_act + (size_t)k * m->na, m->na);
    fprintf(f, "/>\n");
  }
  if (m->nkey) fprintf(f, "  </keyframe>\n");
}

// tendons, actuators, sensors, contact pairs and excludes, keyframes
static void world_lists(FILE* f, const physModel* m) {
  world_tendons(f, m);
  world_actuators(f, m);
  world_sensors(f, m);
  world_contacts(f, m);
  world_keys(f, m);
}

int id_write_world(FILE* f, const physModel* m, char* err, size_t nerr) {
  if (!world_writable(m, err, nerr)) return 0;
  if (!f) return 1;
  fprintf(f, "<!-- written by physid identify write-model: a composed world (a model and its added files) as one "
          "MJCF file, with the identified values -->\n<mujoco model=\"");
  put_text(f, m->modelname);
  fprintf(f, "\">\n");
  world_options(f, m);
  fprintf(f, "  <worldbody>\n");
  world_body(f, m, 0, 4);
  fprintf(f, "  </worldbody>\n");
  world_lists(f, m);
  fprintf(f, "</mujoco>\n");
  if (ferror(f)) {
    snprintf(err, nerr, "--write-model: cannot write the model");
    return 0;
  }
  return 1;
}
