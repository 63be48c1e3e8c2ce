// mjcf.c - MJCF reader: a libxml2 DOM into a physSpec, with MuJoCo 2.2.2's defaults and conventions.
//
// Supported (everything else: a warning for unknown elements, silence for known-but-irrelevant ones):
//   <mujoco model>  <include file>  <compiler angle eulerseq inertiafromgeom coordinate(local)
//   settotalmass boundmass boundinertia meshdir autolimits>  <option timestep gravity integrator(Euler)>
//   <flag contact limit gravity passive eulerdamp actuation equality sensornoise>  <default class> (joint geom site
//   motor general position velocity tendon mesh equality)  <asset><mesh name file scale>  <worldbody><body name pos orientation childclass>
//   <inertial> <joint> <freejoint> <geom> <site>  <tendon><spatial> through sites, <fixed>  <actuator><motor>
//   <position> <velocity> <general> (fixed/affine gain and bias, no dynamics)  <sensor> (mjcf_sensor.c)  <keyframe><key>  <size nconmax>  <contact><pair name geom1 geom2 friction
//   margin> <exclude body1 body2>  <equality><connect> <weld> <joint> (mjcf_equality.c)  <custom> physid extensions
//   (contact model and options, restitution).
// Sections are read in MuJoCo's order (compiler, option, default, asset, worldbody, ..., tendon,
// actuator, keyframe) whatever their order in the file; several sections of one kind are read in turn.
// Body ids are depth-first in file order; a body's joints, geoms and sites come before its children's.
//
// This file: the document (reading, <include>, the sections in order), messages at an element, paths,
// and the sections that set the reader's state: <compiler>, <option>, <size>, <default>. The other
// sections are read in mjcf_asset.c, mjcf_body.c, mjcf_actuator.c, mjcf_contact.c, mjcf_sensor.c and
// mjcf_equality.c (mjcf_reader.h).
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "mjcf_reader.h"
#include "path.h"
#include "xmlread.h"

//---------------------------------------------------------------------------------------------------------
// reader state

// add a copy of str; 0 on allocation failure
int mjcf_strlist_add(strList* l, const char* str) {
  if (l->n == l->cap) {
    int cap = l->cap ? 2 * l->cap : 8;
    char** p = realloc(l->item, (size_t)cap * sizeof(char*));
    if (!p) return 0;
    l->item = p;
    l->cap = cap;
  }
  size_t len = strlen(str) + 1;
  char* copy = malloc(len);
  if (!copy) return 0;
  memcpy(copy, str, len);
  l->item[l->n++] = copy;
  return 1;
}

// 1 if str is in the list
int mjcf_strlist_has(const strList* l, const char* str) {
  for (int i = 0; i < l->n; i++) {
    if (!strcmp(l->item[i], str)) return 1;
  }
  return 0;
}

// free the strings and the list
static void strlist_free(strList* l) {
  for (int i = 0; i < l->n; i++) free(l->item[i]);
  free(l->item);
  memset(l, 0, sizeof(*l));
}

//---------------------------------------------------------------------------------------------------------
// messages: "file:line: <element name='x'>: what is wrong"

// file an element came from (nodes moved in by <include> carry their file in _private)
static const char* node_file(const mjcfCtx* c, const xmlNode* el) {
  return (el && el->_private) ? (const char*)el->_private : c->filename;
}

// the spec's index of the file el came from (an <include>d file, or 0 for the main file and on no memory)
int mjcf_elem_fileid(mjcfCtx* c, const xmlNode* el) {
  int id = el && el->_private ? phys_spec_add_file(c->s, (const char*)el->_private) : 0;
  return id > 0 ? id : 0;
}

// 1 if el is an element named name
int mjcf_is_elem(const xmlNode* el, const char* name) {
  return el && el->type == XML_ELEMENT_NODE && !strcmp((const char*)el->name, name);
}

// text of attribute name of el (entity-free: DTDs are refused), "" if empty, NULL if absent
const char* mjcf_attr_text(const xmlNode* el, const char* name) {
  xmlAttr* a = xmlHasProp(el, (const xmlChar*)name);
  if (!a || a->type != XML_ATTRIBUTE_NODE) return NULL;
  if (!a->children) return "";
  return (const char*)a->children->content;
}

// "file:line: <geom name='foo'>" into buf
static void describe(char* buf, size_t n, const mjcfCtx* c, const xmlNode* el) {
  const char* name = el ? mjcf_attr_text(el, "name") : NULL;
  if (!el) {
    snprintf(buf, n, "%s", c->filename);
  } else if (name && name[0]) {
    snprintf(buf, n, "%s:%ld: <%s name='%.64s'>", node_file(c, el), xmlGetLineNo(el), (const char*)el->name,
             name);
  } else {
    snprintf(buf, n, "%s:%ld: <%s>", node_file(c, el), xmlGetLineNo(el), (const char*)el->name);
  }
}

// record an error at an element; returns st
__attribute__((format(printf, 4, 5))) physStatus mjcf_elem_error(mjcfCtx* c, const xmlNode* el,
                                                                 physStatus st, const char* fmt, ...) {
  char where[PHYS_MSGLEN / 2], what[PHYS_MSGLEN / 2];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof(what), fmt, ap);
  va_end(ap);
  describe(where, sizeof(where), c, el);
  return phys_error(c->log, st, "%s: %s", where, what);
}

// record a warning at an element
__attribute__((format(printf, 3, 4))) void mjcf_elem_warning(mjcfCtx* c, const xmlNode* el,
                                                             const char* fmt, ...) {
  char where[PHYS_MSGLEN / 2], what[PHYS_MSGLEN / 2];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof(what), fmt, ap);
  va_end(ap);
  describe(where, sizeof(where), c, el);
  phys_warning_kind(c->log, fmt, "%s: %s", where, what);
}

// warning for an element this reader does not know
void mjcf_unknown_element(mjcfCtx* c, const xmlNode* el) {
  mjcf_elem_warning(c, el, "unknown element, ignored");
}

//---------------------------------------------------------------------------------------------------------
// paths: everything the model refers to must resolve inside the model's folder

// real path of file (relative to dir/sub, or absolute) into out, by the model-folder rule of path.h.
// Returns PHYS_ERR_IO (file missing: errno kept) or PHYS_ERR_ARG (outside the folder) with a message.
physStatus mjcf_resolve_path(mjcfCtx* c, const xmlNode* el, const char* sub, const char* file,
                             char out[PATH_MAX]) {
  physPathResult r = phys_path_resolve(c->dir, sub, file, out);
  if (r == PHYS_PATH_TOOLONG) return mjcf_elem_error(c, el, PHYS_ERR_ARG, "path '%.200s' is too long", file);
  if (r == PHYS_PATH_MISSING) {
    int err = errno;
    physStatus st = mjcf_elem_error(c, el, PHYS_ERR_IO, "cannot open '%.300s': %s", file, strerror(err));
    errno = err;
    return st;
  }
  if (r == PHYS_PATH_OUTSIDE) {
    return mjcf_elem_error(c, el, PHYS_ERR_ARG, "'%.200s' resolves outside the model folder '%.200s'", file,
                           c->dir);
  }
  return PHYS_OK;
}

//---------------------------------------------------------------------------------------------------------
// <include file>: replaced by the children of the included file's <mujoco> root

// record file as the origin of every element below el that has none yet
static void mark_file(xmlNode* el, char* file) {
  for (xmlNode* n = el; n; n = n->next) {
    if (n->type != XML_ELEMENT_NODE) continue;
    if (!n->_private) n->_private = file;
    mark_file(n->children, file);
  }
}

// expand one <include> element; *next = first element put in its place (so nested includes expand)
static physStatus include_file(mjcfCtx* c, xmlNode* inc, xmlNode** next) {
  const char* file = mjcf_attr_text(inc, "file");
  if (!file || !file[0]) return mjcf_elem_error(c, inc, PHYS_ERR_MODEL, "attribute 'file' is required");
  if (++c->ninclude > PHYS_MJCF_MAXINCLUDE) {
    return mjcf_elem_error(c, inc, PHYS_ERR_MODEL, "more than %d includes (recursive include?)",
                           PHYS_MJCF_MAXINCLUDE);
  }
  char path[PATH_MAX];
  physStatus st = mjcf_resolve_path(c, inc, NULL, file, path);
  if (st) return st;
  if (!mjcf_strlist_add(&c->files, path)) return phys_error(c->log, PHYS_ERR_NOMEM, "out of memory");
  char* shown = c->files.item[c->files.n - 1];
  xmlDoc* doc = phys_xml_read(path, shown, c->log);
  if (!doc) return c->log ? c->log->status : PHYS_ERR_PARSE;
  xmlNode* root = xmlDocGetRootElement(doc);
  if (!mjcf_is_elem(root, "mujoco")) {
    xmlFreeDoc(doc);
    return mjcf_elem_error(c, inc, PHYS_ERR_MODEL, "included file '%.200s' must have a <mujoco> root", file);
  }
  mark_file(root->children, shown);

  // move the root's element children before the include element (comments and text stay behind)
  xmlNode* first = NULL;
  for (xmlNode* ch = root->children; ch;) {
    xmlNode* after = ch->next;
    if (ch->type == XML_ELEMENT_NODE) {
      xmlUnlinkNode(ch);
      xmlAddPrevSibling(inc, ch);
      if (!first) first = ch;
    }
    ch = after;
  }
  xmlFreeDoc(doc);
  *next = first ? first : inc->next;
  xmlUnlinkNode(inc);
  xmlFreeNode(inc);
  return PHYS_OK;
}

// expand every <include> below parent, depth first
static physStatus expand_includes(mjcfCtx* c, xmlNode* parent) {
  for (xmlNode* n = parent->children; n;) {
    xmlNode* next = n->next;
    if (mjcf_is_elem(n, "include")) {
      physStatus st = include_file(c, n, &next);
      if (st) return st;
    } else if (n->type == XML_ELEMENT_NODE) {
      physStatus st = expand_includes(c, n);
      if (st) return st;
    }
    n = next;
  }
  return PHYS_OK;
}

//---------------------------------------------------------------------------------------------------------
// <compiler>, <option>

// <compiler angle coordinate inertiafromgeom autolimits eulerseq settotalmass boundmass boundinertia
// meshdir> into the reader state and the spec; balanceinertia, inertiagrouprange and discardvisual are
// warned about when set
static physStatus parse_compiler(mjcfCtx* c, xmlNode* el) {
  static const char* const ANGLE[] = {"radian", "degree", NULL};
  static const char* const COORD[] = {"local", "global", NULL};
  static const char* const IFG[] = {"false", "true", "auto", NULL};
  mjcfElem e = {el, K_NONE, 0};
  physStatus st;
  int v, found;
  if ((st = mjcf_get_keyword(c, &e, "angle", ANGLE, &c->degree, NULL))) return st;
  if ((st = mjcf_get_keyword(c, &e, "coordinate", COORD, &v, &found))) return st;
  if (found && v == 1) {
    return mjcf_elem_error(c, el, PHYS_ERR_MODEL, "coordinate=\"global\" is not supported (use local frames)");
  }
  if ((st = mjcf_get_keyword(c, &e, "inertiafromgeom", IFG, &c->s->inertiafromgeom, NULL))) return st;
  if ((st = mjcf_get_keyword(c, &e, "autolimits", MJCF_BOOL_WORDS, &c->autolimits, NULL))) return st;
  const char* seq = mjcf_attr_text(el, "eulerseq");
  if (seq) {
    int ok = strlen(seq) == 3;
    for (int i = 0; ok && i < 3; i++) ok = strchr("xyzXYZ", seq[i]) != NULL;
    if (!ok) return mjcf_elem_error(c, el, PHYS_ERR_VALUE, "eulerseq '%.20s' must be 3 of x y z X Y Z", seq);
    strcpy(c->eulerseq, seq);
  }
  double x;
  if ((st = mjcf_get_real(c, &e, "settotalmass", &x, &found))) return st;
  if (found) c->s->settotalmass = x;
  if ((st = mjcf_get_nonneg(c, &e, "boundmass", &c->s->boundmass))) return st;
  if ((st = mjcf_get_nonneg(c, &e, "boundinertia", &c->s->boundinertia))) return st;
  const char* meshdir = mjcf_attr_text(el, "meshdir");
  if (meshdir) {
    if (strlen(meshdir) >= sizeof(c->meshdir)) return mjcf_elem_error(c, el, PHYS_ERR_VALUE, "meshdir too long");
    strcpy(c->meshdir, meshdir);
  }
  if ((st = mjcf_get_keyword(c, &e, "balanceinertia", MJCF_BOOL_WORDS, &v, &found))) return st;
  if (found && v) mjcf_elem_warning(c, el, "balanceinertia is not supported; ignored");
  double igr[2] = {0, 5};
  if ((st = mjcf_get_vec(c, &e, "inertiagrouprange", 2, igr, NULL))) return st;
  if (igr[0] != 0 || igr[1] != 5) mjcf_elem_warning(c, el, "inertiagrouprange is not supported; ignored");
  if ((st = mjcf_get_keyword(c, &e, "discardvisual", MJCF_BOOL_WORDS, &v, &found))) return st;
  if (found && v) mjcf_elem_warning(c, el, "discardvisual is not supported; visual geoms are kept");
  return PHYS_OK;
}

// <flag>: the disable flags physid knows and the enable flag sensornoise (others are MuJoCo solver flags, ignored)
static physStatus parse_flag(mjcfCtx* c, xmlNode* el) {
  static const char* const NAMES[] = {"contact", "limit", "gravity", "passive", "eulerdamp", "actuation",
                                      "equality", NULL};
  static const int BITS[] = {PHYS_DSBL_CONTACT, PHYS_DSBL_LIMIT,     PHYS_DSBL_GRAVITY,
                             PHYS_DSBL_PASSIVE, PHYS_DSBL_EULERDAMP, PHYS_DSBL_ACTUATION, PHYS_DSBL_EQUALITY};
  static const char* const VALUES[] = {"disable", "enable", NULL};
  mjcfElem e = {el, K_NONE, 0};
  for (xmlAttr* a = el->properties; a; a = a->next) {
    int v, found;
    physStatus st = mjcf_get_keyword(c, &e, (const char*)a->name, VALUES, &v, &found);
    if (st) return st;
    for (int i = 0; NAMES[i]; i++) {
      if (strcmp((const char*)a->name, NAMES[i])) continue;
      if (v == 0) {
        c->s->opt.disableflags |= BITS[i];
      } else {
        c->s->opt.disableflags &= ~BITS[i];
      }
    }
    if (!strcmp((const char*)a->name, "sensornoise")) {   // an enable flag: noise on written sensor values
      if (v == 1) c->s->opt.enableflags |= PHYS_ENBL_SENSORNOISE;
      else c->s->opt.enableflags &= ~PHYS_ENBL_SENSORNOISE;
    }
  }
  return PHYS_OK;
}

// <option timestep gravity integrator density viscosity> and its <flag>s (only semi-implicit Euler: other
// integrators and fluid forces are warned about)
static physStatus parse_option(mjcfCtx* c, xmlNode* el) {
  static const char* const INTEGRATOR[] = {"Euler", "RK4", "implicit", "implicitfast", NULL};
  mjcfElem e = {el, K_NONE, 0};
  physStatus st;
  int found, v;
  double x[3];
  if ((st = mjcf_get_real(c, &e, "timestep", x, &found))) return st;
  if (found && !(x[0] > 0)) return mjcf_elem_error(c, el, PHYS_ERR_VALUE, "timestep must be > 0, got %g", x[0]);
  if (found) c->s->opt.timestep = x[0];
  if ((st = mjcf_get_vec(c, &e, "gravity", 3, c->s->opt.gravity, NULL))) return st;
  if ((st = mjcf_get_keyword(c, &e, "integrator", INTEGRATOR, &v, &found))) return st;
  if (found && v != 0) {
    mjcf_elem_warning(c, el, "integrator '%s' is not supported; using semi-implicit Euler", INTEGRATOR[v]);
  }
  c->s->opt.integrator = PHYS_INT_EULER;
  const char* const FLUID[] = {"density", "viscosity", NULL};
  for (int i = 0; FLUID[i]; i++) {
    if ((st = mjcf_get_real(c, &e, FLUID[i], x, &found))) return st;
    if (found && x[0] != 0) mjcf_elem_warning(c, el, "%s (fluid forces) is not supported; ignored", FLUID[i]);
  }
  for (xmlNode* ch = el->children; ch; ch = ch->next) {
    if (ch->type != XML_ELEMENT_NODE) continue;
    if (mjcf_is_elem(ch, "flag")) {
      if ((st = parse_flag(c, ch))) return st;
    } else {
      mjcf_unknown_element(c, ch);
    }
  }
  return PHYS_OK;
}

//---------------------------------------------------------------------------------------------------------
// <default>

// kind of a default element; K_NONE for ignored or unknown names (*known = 0 for unknown)
static int default_kind(const char* name, int* known) {
  static const char* const KINDS[NKIND][10] = {{"joint", NULL}, {"geom", NULL}, {"site", NULL},
                                               {"motor", "general", "position", "velocity", "cylinder", "muscle",
                                                "damper", "intvelocity", "adhesion", NULL},
                                              {"tendon", NULL}, {"mesh", NULL}, {"equality", NULL},
                                              {"material", NULL}};
  static const char* const IGNORED[] = {"camera", "light", "pair", "texture", "hfield", "skin", NULL};
  *known = 1;
  for (int k = 0; k < NKIND; k++) {
    for (int i = 0; KINDS[k][i]; i++) {
      if (!strcmp(name, KINDS[k][i])) return k;
    }
  }
  for (int i = 0; IGNORED[i]; i++) {
    if (!strcmp(name, IGNORED[i])) return K_NONE;
  }
  *known = 0;
  return K_NONE;
}

// append a default element of kind to class k
static physStatus class_add_node(mjcfCtx* c, int k, int kind, xmlNode* node) {
  mjcfClass* d = c->cls + k;
  if (d->nnode[kind] == d->capnode[kind]) {
    int cap = d->capnode[kind] ? 2 * d->capnode[kind] : 4;
    xmlNode** p = realloc(d->node[kind], (size_t)cap * sizeof(xmlNode*));
    if (!p) return phys_error(c->log, PHYS_ERR_NOMEM, "out of memory");
    d->node[kind] = p;
    d->capnode[kind] = cap;
  }
  d->node[kind][d->nnode[kind]++] = node;
  return PHYS_OK;
}

// a new default class; *id = its index
static physStatus class_new(mjcfCtx* c, const char* name, int parent, int* id) {
  if (c->ncls == c->capcls) {
    int cap = c->capcls ? 2 * c->capcls : 8;
    mjcfClass* p = realloc(c->cls, (size_t)cap * sizeof(mjcfClass));
    if (!p) return phys_error(c->log, PHYS_ERR_NOMEM, "out of memory");
    c->cls = p;
    c->capcls = cap;
  }
  mjcfClass* d = c->cls + c->ncls;
  memset(d, 0, sizeof(*d));
  d->name = name;
  d->parent = parent;
  *id = c->ncls++;
  return PHYS_OK;
}

// <default> (parent < 0: a top-level one, which is the class "main") and its nested classes
static physStatus parse_default(mjcfCtx* c, xmlNode* el, int parent, int depth) {
  const char* name = mjcf_attr_text(el, "class");
  int id = 0;
  physStatus st;
  if (depth > PHYS_MJCF_MAXDEPTH) return mjcf_elem_error(c, el, PHYS_ERR_MODEL, "defaults nested too deeply");
  if (parent < 0) {
    if (name && strcmp(name, "main")) {
      return mjcf_elem_error(c, el, PHYS_ERR_MODEL, "the top-level <default> is class 'main', not '%.64s'", name);
    }
  } else {
    if (!name || !name[0]) return mjcf_elem_error(c, el, PHYS_ERR_MODEL, "a nested <default> needs a class");
    for (int k = 0; k < c->ncls; k++) {
      if (!strcmp(c->cls[k].name, name)) {
        return mjcf_elem_error(c, el, PHYS_ERR_MODEL, "default class '%.64s' defined twice", name);
      }
    }
    if ((st = class_new(c, name, parent, &id))) return st;
  }
  for (xmlNode* ch = el->children; ch; ch = ch->next) {
    if (ch->type != XML_ELEMENT_NODE) continue;
    if (mjcf_is_elem(ch, "default")) {
      if ((st = parse_default(c, ch, id, depth + 1))) return st;
      continue;
    }
    int known, kind = default_kind((const char*)ch->name, &known);
    if (kind != K_NONE) {
      if ((st = class_add_node(c, id, kind, ch))) return st;
    } else if (!known) {
      mjcf_unknown_element(c, ch);
    }
  }
  return PHYS_OK;
}

// <size nconmax>: contact capacity (-1: physid's default from the geoms); other sizes are MuJoCo's
static physStatus parse_size(mjcfCtx* c, xmlNode* el) {
  mjcfElem e = {el, K_NONE, 0};
  int n, found;
  physStatus st = mjcf_get_int(c, &e, "nconmax", &n, &found);
  if (st || !found) return st;
  if (n < -1 || n == 0 || n > 1000000)
    return mjcf_elem_error(c, el, PHYS_ERR_VALUE, "nconmax must be -1 (default) or in [1, 1000000], got %d", n);
  c->s->nconmax = n > 0 ? n : 0;
  return PHYS_OK;
}

//---------------------------------------------------------------------------------------------------------
// the model

typedef physStatus (*sectionFn)(mjcfCtx* c, xmlNode* el);

// <default> at the top level is the class "main"
static physStatus parse_top_default(mjcfCtx* c, xmlNode* el) { return parse_default(c, el, -1, 0); }

// a section that is read and has no effect here
static physStatus parse_nothing(mjcfCtx* c, xmlNode* el) {
  (void)c;
  (void)el;
  return PHYS_OK;
}

// the sections in MuJoCo's reading order
static const struct {
  const char* name;
  sectionFn fn;
} SECTIONS[] = {
    {"compiler", parse_compiler},
    {"option", parse_option},
    {"size", parse_size},
    {"default", parse_top_default},
    {"visual", parse_nothing},
    {"statistic", parse_nothing},
    {"asset", mjcf_parse_asset},           // mjcf_asset.c
    {"worldbody", mjcf_parse_worldbody},   // mjcf_body.c
    {"contact", mjcf_parse_contact},       // mjcf_contact.c
    {"equality", mjcf_parse_equality},     // mjcf_equality.c
    {"tendon", mjcf_parse_tendon},         // mjcf_tendon.c
    {"actuator", mjcf_parse_actuator},     // mjcf_actuator.c
    {"sensor", mjcf_parse_sensor},       // mjcf_sensor.c
    {"keyframe", mjcf_parse_keyframe},     // mjcf_actuator.c
    {"custom", mjcf_parse_custom},         // mjcf_contact.c; last: physid extensions name actuators and geoms
};
#define NSECTION ((int)(sizeof(SECTIONS) / sizeof(SECTIONS[0])))

// read the <mujoco> root: warn about unknown sections, then read the known ones in order
static physStatus parse_root(mjcfCtx* c, xmlNode* root) {
  if (!mjcf_is_elem(root, "mujoco")) {
    return mjcf_elem_error(c, root, PHYS_ERR_MODEL, "the root element must be <mujoco>");
  }
  physStatus st = mjcf_get_name(c, root, "model", c->s->modelname);
  if (st) return st;
  if (!c->s->modelname[0]) strcpy(c->s->modelname, "MuJoCo Model");
  for (xmlNode* ch = root->children; ch; ch = ch->next) {
    if (ch->type != XML_ELEMENT_NODE) continue;
    int known = 0;
    for (int i = 0; i < NSECTION; i++) known |= mjcf_is_elem(ch, SECTIONS[i].name);
    if (!known) mjcf_unknown_element(c, ch);
  }
  for (int i = 0; i < NSECTION; i++) {
    for (xmlNode* ch = root->children; ch; ch = ch->next) {
      if (mjcf_is_elem(ch, SECTIONS[i].name) && (st = SECTIONS[i].fn(c, ch))) return st;
    }
  }
  return PHYS_OK;
}

// reader state for filename: folder, main class, compiler defaults
static physStatus ctx_init(mjcfCtx* c, const char* filename, const physLoadOptions* opt, physLog* log) {
  memset(c, 0, sizeof(*c));
  c->log = log;
  c->filename = filename;
  c->strict_mesh = opt ? opt->strict_mesh : 0;
  c->degree = 1;
  strcpy(c->eulerseq, "xyz");
  char real[PATH_MAX];
  if (!realpath(filename, real)) {
    return phys_error(log, PHYS_ERR_IO, "%s: cannot open file: %s", filename, strerror(errno));
  }
  char* slash = strrchr(real, '/');
  if (slash == real) {
    strcpy(c->dir, "/");
  } else {
    *slash = 0;
    strcpy(c->dir, real);
  }
  int id;
  physStatus st = class_new(c, "main", -1, &id);
  if (st) return st;
  c->s = phys_spec_new();
  if (!c->s) return phys_error(log, PHYS_ERR_NOMEM, "out of memory");
  if (strlen(filename) >= sizeof(c->s->filename)) {
    return phys_error(log, PHYS_ERR_ARG, "%.200s...: file name too long", filename);
  }
  strcpy(c->s->filename, filename);
  return PHYS_OK;
}

// free the reader state (not the spec)
static void ctx_free(mjcfCtx* c) {
  for (int k = 0; k < c->ncls; k++) {
    for (int i = 0; i < NKIND; i++) free(c->cls[k].node[i]);
  }
  free(c->cls);
  strlist_free(&c->files);
  strlist_free(&c->missing_mesh);
  free(c->material);
}

physSpec* phys_parse_mjcf_opt(const char* filename, const physLoadOptions* opt, physLog* log) {
  if (!filename) {
    phys_error(log, PHYS_ERR_ARG, "phys_parse_mjcf: filename is NULL");
    return NULL;
  }
  xmlInitParser();
  mjcfCtx c;
  xmlDoc* doc = NULL;
  physStatus st = ctx_init(&c, filename, opt, log);
  if (!st) {
    doc = phys_xml_read(filename, filename, log);
    st = doc ? PHYS_OK : (log && log->status ? log->status : PHYS_ERR_PARSE);
  }
  if (!st) st = expand_includes(&c, xmlDocGetRootElement(doc));
  if (!st) st = parse_root(&c, xmlDocGetRootElement(doc));
  if (doc) xmlFreeDoc(doc);   // frees the nodes moved in by includes; then their file names
  ctx_free(&c);
  if (st) {
    phys_spec_free(c.s);
    return NULL;
  }
  return c.s;
}

physSpec* phys_parse_mjcf(const char* filename, physLog* log) {
  return phys_parse_mjcf_opt(filename, NULL, log);
}

physModel* phys_load_mjcf(const char* filename, physLog* log) {
  physSpec* s = phys_parse_mjcf(filename, log);
  if (!s) return NULL;
  physModel* m = phys_compile(s, log);
  phys_spec_free(s);
  return m;
}
