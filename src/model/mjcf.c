// mjcf.c - MJCF reader: a libxml2 DOM into a physSpec, with MuJoCo 2.2.2's defaults and conventions.
//
// Supported (everything else: a warning for unknown elements, silence for known-but-irrelevant ones):
//   <mujoco model>  <include file>  <compiler angle eulerseq inertiafromgeom coordinate(local)
//   settotalmass boundmass boundinertia meshdir autolimits>  <option timestep gravity integrator(Euler)>
//   <flag contact limit gravity passive eulerdamp actuation>  <default class> (joint geom site motor
//   general tendon mesh)  <asset><mesh name file scale>  <worldbody><body name pos orientation childclass>
//   <inertial> <joint> <freejoint> <geom> <site>  <tendon><spatial> with <site> only  <actuator><motor>
//   and fixed-gain <general>  <keyframe><key>  <size nconmax>  <contact><pair name geom1 geom2 friction
//   margin> <exclude body1 body2>  <custom> physid extensions (contact model and options, restitution).
// Sections are read in MuJoCo's order (compiler, option, default, asset, worldbody, ..., tendon,
// actuator, keyframe) whatever their order in the file; several sections of one kind are read in turn.
// Body ids are depth-first in file order; a body's joints, geoms and sites come before its children's.
#include "mjcf.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "mesh.h"
#include "path.h"
#include "rot.h"
#include "xmlread.h"

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

static const double DEG2RAD = 3.14159265358979323846 / 180.0;
static const double MJCF_EPS = 1e-10;   // smallest axis / direction norm accepted

//---------------------------------------------------------------------------------------------------------
// reader state

// kinds of elements that default classes hold
enum { K_NONE = -1, K_JOINT = 0, K_GEOM, K_SITE, K_ACTUATOR, K_TENDON, K_MESH, NKIND };

// one default class: its parent and its default elements of each kind, in file order
typedef struct mjcfClass_ {
  const char* name;
  int parent;                 // -1 for "main"
  xmlNode** node[NKIND];
  int nnode[NKIND];
  int capnode[NKIND];
} mjcfClass;

// an element with the default class its missing attributes come from (kind K_NONE: no defaults)
typedef struct mjcfElem_ {
  xmlNode* el;
  int kind;
  int cls;
} mjcfElem;

// a growable list of owned strings
typedef struct strList_ {
  char** item;
  int n, cap;
} strList;

typedef struct mjcfCtx_ {
  physSpec* s;
  physLog* log;
  int strict_mesh;
  const char* filename;       // main file, as given
  char dir[PATH_MAX];         // model folder (real path): includes and meshes must stay inside
  char meshdir[PATH_MAX];     // compiler meshdir (relative to dir, or absolute inside it)
  int degree;                 // compiler angle="degree"
  char eulerseq[4];
  int autolimits;
  mjcfClass* cls;             // default classes, 0 = main
  int ncls, capcls;
  strList files;              // included file names (element nodes point to them in _private)
  int ninclude;
  strList missing_mesh;       // meshes whose file is missing (their geoms are dropped)
  strList ignored_tendon;     // fixed tendons (ignored; actuators on them too)
} mjcfCtx;

// add a copy of str; 0 on allocation failure
static int strlist_add(strList* l, const char* str) {
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
static int strlist_has(const strList* l, const char* str) {
  for (int i = 0; i < l->n; i++) {
    if (!strcmp(l->item[i], str)) return 1;
  }
  return 0;
}

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
static int elem_fileid(mjcfCtx* c, const xmlNode* el) {
  int id = el && el->_private ? phys_spec_add_file(c->s, (const char*)el->_private) : 0;
  return id > 0 ? id : 0;
}

// 1 if el is an element named name
static int is_elem(const xmlNode* el, const char* name) {
  return el && el->type == XML_ELEMENT_NODE && !strcmp((const char*)el->name, name);
}

// text of attribute name of el (entity-free: DTDs are refused), "" if empty, NULL if absent
static const char* attr_text(const xmlNode* el, const char* name) {
  xmlAttr* a = xmlHasProp(el, (const xmlChar*)name);
  if (!a || a->type != XML_ATTRIBUTE_NODE) return NULL;
  if (!a->children) return "";
  return (const char*)a->children->content;
}

// "file:line: <geom name='foo'>" into buf
static void describe(char* buf, size_t n, const mjcfCtx* c, const xmlNode* el) {
  const char* name = el ? attr_text(el, "name") : NULL;
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
__attribute__((format(printf, 4, 5))) static physStatus elem_error(mjcfCtx* c, const xmlNode* el,
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
__attribute__((format(printf, 3, 4))) static void elem_warning(mjcfCtx* c, const xmlNode* el,
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
static void unknown_element(mjcfCtx* c, const xmlNode* el) {
  elem_warning(c, el, "unknown element, ignored");
}

//---------------------------------------------------------------------------------------------------------
// paths: everything the model refers to must resolve inside the model's folder

// real path of file (relative to dir/sub, or absolute) into out, by the model-folder rule of path.h.
// Returns PHYS_ERR_IO (file missing: errno kept) or PHYS_ERR_ARG (outside the folder) with a message.
static physStatus resolve_path(mjcfCtx* c, const xmlNode* el, const char* sub, const char* file,
                               char out[PATH_MAX]) {
  physPathResult r = phys_path_resolve(c->dir, sub, file, out);
  if (r == PHYS_PATH_TOOLONG) return elem_error(c, el, PHYS_ERR_ARG, "path '%.200s' is too long", file);
  if (r == PHYS_PATH_MISSING) {
    int err = errno;
    physStatus st = elem_error(c, el, PHYS_ERR_IO, "cannot open '%.300s': %s", file, strerror(err));
    errno = err;
    return st;
  }
  if (r == PHYS_PATH_OUTSIDE) {
    return elem_error(c, el, PHYS_ERR_ARG, "'%.200s' resolves outside the model folder '%.200s'", file,
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
  const char* file = attr_text(inc, "file");
  if (!file || !file[0]) return elem_error(c, inc, PHYS_ERR_MODEL, "attribute 'file' is required");
  if (++c->ninclude > PHYS_MJCF_MAXINCLUDE) {
    return elem_error(c, inc, PHYS_ERR_MODEL, "more than %d includes (recursive include?)",
                      PHYS_MJCF_MAXINCLUDE);
  }
  char path[PATH_MAX];
  physStatus st = resolve_path(c, inc, NULL, file, path);
  if (st) return st;
  if (!strlist_add(&c->files, path)) return phys_error(c->log, PHYS_ERR_NOMEM, "out of memory");
  char* shown = c->files.item[c->files.n - 1];
  xmlDoc* doc = phys_xml_read(path, shown, c->log);
  if (!doc) return c->log ? c->log->status : PHYS_ERR_PARSE;
  xmlNode* root = xmlDocGetRootElement(doc);
  if (!is_elem(root, "mujoco")) {
    xmlFreeDoc(doc);
    return elem_error(c, inc, PHYS_ERR_MODEL, "included file '%.200s' must have a <mujoco> root", file);
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
    if (is_elem(n, "include")) {
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
// attributes through default classes

// value of attribute name for e: its own, else the nearest default (class, then its ancestors;
// later defaults of one class win); *where = the element holding it
static const char* find_attr(const mjcfCtx* c, const mjcfElem* e, const char* name, const xmlNode** where) {
  const char* v = attr_text(e->el, name);
  if (v) {
    *where = e->el;
    return v;
  }
  if (e->kind == K_NONE) return NULL;
  for (int k = e->cls; k >= 0; k = c->cls[k].parent) {
    const mjcfClass* d = c->cls + k;
    for (int i = d->nnode[e->kind] - 1; i >= 0; i--) {
      if ((v = attr_text(d->node[e->kind][i], name))) {
        *where = d->node[e->kind][i];
        return v;
      }
    }
  }
  return NULL;
}

// number of whitespace-separated tokens in text
static int count_tokens(const char* text) {
  int n = 0;
  for (const char* p = text; *p;) {
    while (*p && isspace((unsigned char)*p)) p++;
    if (!*p) break;
    n++;
    while (*p && !isspace((unsigned char)*p)) p++;
  }
  return n;
}

// parse up to max finite numbers of attribute attr (text) into out; *n = how many
static physStatus parse_numbers(mjcfCtx* c, const xmlNode* where, const char* attr, const char* text,
                                double* out, int max, int* n) {
  const char* p = text;
  *n = 0;
  for (;;) {
    while (*p && isspace((unsigned char)*p)) p++;
    if (!*p) return PHYS_OK;
    if (*n == max) {
      return elem_error(c, where, PHYS_ERR_SIZE, "attribute '%s' has more than %d value%s", attr, max,
                        max == 1 ? "" : "s");
    }
    char* end;
    double v = strtod(p, &end);
    if (end == p || (*end && !isspace((unsigned char)*end))) {
      int len = 0;
      while (p[len] && !isspace((unsigned char)p[len]) && len < 40) len++;
      return elem_error(c, where, PHYS_ERR_PARSE, "attribute '%s': '%.*s' is not a number", attr, len, p);
    }
    if (!isfinite(v)) {
      return elem_error(c, where, PHYS_ERR_VALUE, "attribute '%s': value %.*s is not finite", attr,
                        (int)(end - p > 40 ? 40 : end - p), p);
    }
    out[(*n)++] = v;
    p = end;
  }
}

// exactly n numbers of attribute name (own or default), if present; *found = 0/1 (may be NULL)
static physStatus get_vec(mjcfCtx* c, const mjcfElem* e, const char* name, int n, double* out,
                          int* found) {
  const xmlNode* where = NULL;
  const char* text = find_attr(c, e, name, &where);
  if (found) *found = 0;
  if (!text) return PHYS_OK;
  double tmp[16];
  int cnt;
  physStatus st = parse_numbers(c, where, name, text, tmp, n, &cnt);
  if (st) return st;
  if (cnt != n) {
    return elem_error(c, where, PHYS_ERR_SIZE, "attribute '%s' needs %d value%s, found %d", name, n,
                      n == 1 ? "" : "s", cnt);
  }
  memcpy(out, tmp, (size_t)n * sizeof(double));
  if (found) *found = 1;
  return PHYS_OK;
}

// one number
static physStatus get_real(mjcfCtx* c, const mjcfElem* e, const char* name, double* out, int* found) {
  return get_vec(c, e, name, 1, out, found);
}

// one number that must be >= 0
static physStatus get_nonneg(mjcfCtx* c, const mjcfElem* e, const char* name, double* out) {
  int found;
  physStatus st = get_real(c, e, name, out, &found);
  if (st || !found || *out >= 0) return st;
  return elem_error(c, e->el, PHYS_ERR_VALUE, "%s must be >= 0, got %g", name, *out);
}

// MuJoCo's partial vectors (size, friction, gear, gainprm): each level of defaults and then the element
// overwrite their first values only; *nset = the most values any level gave
static physStatus get_partial(mjcfCtx* c, const mjcfElem* e, const char* name, int max, double* out,
                              int* nset) {
  int chain[PHYS_MJCF_MAXDEPTH], nchain = 0;
  for (int k = (e->kind == K_NONE ? -1 : e->cls); k >= 0 && nchain < PHYS_MJCF_MAXDEPTH;
       k = c->cls[k].parent) {
    chain[nchain++] = k;
  }
  *nset = 0;
  double tmp[16];
  int cnt;
  for (int i = nchain - 1; i >= -1; i--) {   // root class first, the element (i = -1) last
    int nnode = i >= 0 ? c->cls[chain[i]].nnode[e->kind] : 1;
    for (int j = 0; j < nnode; j++) {
      const xmlNode* el = i >= 0 ? c->cls[chain[i]].node[e->kind][j] : e->el;
      const char* text = attr_text(el, name);
      if (!text) continue;
      physStatus st = parse_numbers(c, el, name, text, tmp, max, &cnt);
      if (st) return st;
      memcpy(out, tmp, (size_t)cnt * sizeof(double));
      if (cnt > *nset) *nset = cnt;
    }
  }
  return PHYS_OK;
}

// an integer
static physStatus get_int(mjcfCtx* c, const mjcfElem* e, const char* name, int* out, int* found) {
  const xmlNode* where = NULL;
  const char* text = find_attr(c, e, name, &where);
  if (found) *found = 0;
  if (!text) return PHYS_OK;
  char* end;
  errno = 0;
  long v = strtol(text, &end, 10);
  while (*end && isspace((unsigned char)*end)) end++;
  if (end == text || *end || errno || v < INT_MIN || v > INT_MAX) {
    return elem_error(c, where, PHYS_ERR_PARSE, "attribute '%s': '%.40s' is not an integer", name, text);
  }
  *out = (int)v;
  if (found) *found = 1;
  return PHYS_OK;
}

// one of the NULL-terminated words (index into *out)
static physStatus get_keyword(mjcfCtx* c, const mjcfElem* e, const char* name, const char* const* words,
                              int* out, int* found) {
  const xmlNode* where = NULL;
  const char* text = find_attr(c, e, name, &where);
  if (found) *found = 0;
  if (!text) return PHYS_OK;
  for (int i = 0; words[i]; i++) {
    if (!strcmp(text, words[i])) {
      *out = i;
      if (found) *found = 1;
      return PHYS_OK;
    }
  }
  char list[256] = "";
  for (int i = 0; words[i]; i++) {
    size_t n = strlen(list);
    snprintf(list + n, sizeof(list) - n, "%s%s", i ? ", " : "", words[i]);
  }
  return elem_error(c, where, PHYS_ERR_VALUE, "attribute '%s' is '%.40s'; expected one of: %s", name, text,
                    list);
}

static const char* const BOOL_WORDS[] = {"false", "true", NULL};
static const char* const LIMITED_WORDS[] = {"false", "true", "auto", NULL};

// copy a name attribute into a spec name field, checking its length
static physStatus get_name(mjcfCtx* c, xmlNode* el, const char* attr, char out[PHYS_NAMELEN]) {
  const char* text = attr_text(el, attr);
  if (!text) return PHYS_OK;
  if (strlen(text) >= PHYS_NAMELEN) {
    return elem_error(c, el, PHYS_ERR_VALUE, "attribute '%s' is longer than %d characters", attr,
                      PHYS_NAMELEN - 1);
  }
  strcpy(out, text);
  return PHYS_OK;
}

// MuJoCo 2.2.2's limit rule: limited="true"/"false", or "auto" (the default): with compiler autolimits
// a nonzero range means limited; without it a nonzero range is an error (MuJoCo refuses such models).
// With limited, range[0] < range[1] is required.
static physStatus get_limited(mjcfCtx* c, const mjcfElem* e, const char* lname, const char* rname,
                              double range[2], int* limited) {
  int mode = 2, found;
  physStatus st = get_keyword(c, e, lname, LIMITED_WORDS, &mode, NULL);
  if (!st) st = get_vec(c, e, rname, 2, range, &found);
  if (st) return st;
  int rangeset = range[0] != 0 || range[1] != 0;
  if (mode == 2) {
    if (rangeset && !c->autolimits) {
      return elem_error(c, e->el, PHYS_ERR_MODEL,
                        "'%s' given without '%s': set %s=\"true\" or \"false\", or <compiler "
                        "autolimits=\"true\"> (MuJoCo 2.2.2 refuses this too)",
                        rname, lname, lname);
    }
    mode = rangeset;
  }
  *limited = mode;
  if (mode && !(range[0] < range[1])) {
    return elem_error(c, e->el, PHYS_ERR_VALUE, "%s [%g, %g]: the lower limit must be below the upper",
                      rname, range[0], range[1]);
  }
  return PHYS_OK;
}

// the default class of an element: its class attribute, else the inherited childclass
static physStatus elem_class(mjcfCtx* c, xmlNode* el, const char* attr, int inherited, int* cls) {
  const char* name = attr_text(el, attr);
  *cls = inherited;
  if (!name) return PHYS_OK;
  for (int k = 0; k < c->ncls; k++) {
    if (!strcmp(c->cls[k].name, name)) {
      *cls = k;
      return PHYS_OK;
    }
  }
  return elem_error(c, el, PHYS_ERR_MODEL, "unknown default class '%.64s'", name);
}

// 1 if the element has any of the attributes (NULL-terminated list) itself
static int has_any_attr(const xmlNode* el, const char* const* names) {
  for (int i = 0; names[i]; i++) {
    if (attr_text(el, names[i])) return 1;
  }
  return 0;
}

//---------------------------------------------------------------------------------------------------------
// orientation: quat (normalized) or one alternative, angles in the compiler's unit

static const char* const ORIENT_WORDS[] = {"quat", "axisangle", "euler", "xyaxes", "zaxis", NULL};

// orientation given on one element (defaults lookups excluded); *n = number of specifiers found
static physStatus orient_of_node(mjcfCtx* c, xmlNode* node, double q[4], int* n) {
  mjcfElem e = {node, K_NONE, 0};
  double v[6];
  int found;
  physStatus st;
  double deg = c->degree ? DEG2RAD : 1;
  *n = 0;
  if ((st = get_vec(c, &e, "quat", 4, v, &found))) return st;
  if (found) {
    if (phys_norm3(v + 1) == 0 && v[0] == 0) {
      return elem_error(c, node, PHYS_ERR_VALUE, "quat is zero");
    }
    memcpy(q, v, sizeof(double) * 4);
    phys_quat_normalize(q);
    (*n)++;
  }
  if ((st = get_vec(c, &e, "axisangle", 4, v, &found))) return st;
  if (found) {
    if (phys_norm3(v) < MJCF_EPS) return elem_error(c, node, PHYS_ERR_VALUE, "axisangle axis is zero");
    phys_axisangle2quat(q, v, v[3] * deg);
    (*n)++;
  }
  if ((st = get_vec(c, &e, "euler", 3, v, &found))) return st;
  if (found) {
    double a[3] = {v[0] * deg, v[1] * deg, v[2] * deg};
    if (!phys_euler2quat(q, a, c->eulerseq)) {
      return elem_error(c, node, PHYS_ERR_VALUE, "invalid eulerseq '%s'", c->eulerseq);
    }
    (*n)++;
  }
  if ((st = get_vec(c, &e, "xyaxes", 6, v, &found))) return st;
  if (found) {
    if (!phys_xyaxes2quat(q, v)) {
      return elem_error(c, node, PHYS_ERR_VALUE, "xyaxes are zero or parallel");
    }
    (*n)++;
  }
  if ((st = get_vec(c, &e, "zaxis", 3, v, &found))) return st;
  if (found) {
    if (phys_norm3(v) < MJCF_EPS) return elem_error(c, node, PHYS_ERR_VALUE, "zaxis is zero");
    phys_quat_zaxis(q, v);
    (*n)++;
  }
  if (*n > 1) {
    return elem_error(c, node, PHYS_ERR_MODEL,
                      "more than one orientation given (quat, axisangle, euler, xyaxes, zaxis: use one)");
  }
  return PHYS_OK;
}

// orientation of e: from the element, else from its nearest default that gives one (MuJoCo: an
// element's own specifier replaces the default's); identity if none. *given = 1 if any was found.
static physStatus get_orient(mjcfCtx* c, const mjcfElem* e, double q[4], int* given) {
  int n;
  phys_quat_identity(q);
  physStatus st = orient_of_node(c, e->el, q, &n);
  if (given) *given = n;
  if (st || n || e->kind == K_NONE) return st;
  for (int k = e->cls; k >= 0; k = c->cls[k].parent) {
    const mjcfClass* d = c->cls + k;
    for (int i = d->nnode[e->kind] - 1; i >= 0; i--) {
      if (!has_any_attr(d->node[e->kind][i], ORIENT_WORDS)) continue;
      st = orient_of_node(c, d->node[e->kind][i], q, &n);
      if (given) *given = n;
      return st;
    }
  }
  return PHYS_OK;
}

//---------------------------------------------------------------------------------------------------------
// <compiler>, <option>

// <compiler>: units, euler sequence, inertia options, mesh folder
static physStatus parse_compiler(mjcfCtx* c, xmlNode* el) {
  static const char* const ANGLE[] = {"radian", "degree", NULL};
  static const char* const COORD[] = {"local", "global", NULL};
  static const char* const IFG[] = {"false", "true", "auto", NULL};
  mjcfElem e = {el, K_NONE, 0};
  physStatus st;
  int v, found;
  if ((st = get_keyword(c, &e, "angle", ANGLE, &c->degree, NULL))) return st;
  if ((st = get_keyword(c, &e, "coordinate", COORD, &v, &found))) return st;
  if (found && v == 1) {
    return elem_error(c, el, PHYS_ERR_MODEL, "coordinate=\"global\" is not supported (use local frames)");
  }
  if ((st = get_keyword(c, &e, "inertiafromgeom", IFG, &c->s->inertiafromgeom, NULL))) return st;
  if ((st = get_keyword(c, &e, "autolimits", BOOL_WORDS, &c->autolimits, NULL))) return st;
  const char* seq = attr_text(el, "eulerseq");
  if (seq) {
    int ok = strlen(seq) == 3;
    for (int i = 0; ok && i < 3; i++) ok = strchr("xyzXYZ", seq[i]) != NULL;
    if (!ok) return elem_error(c, el, PHYS_ERR_VALUE, "eulerseq '%.20s' must be 3 of x y z X Y Z", seq);
    strcpy(c->eulerseq, seq);
  }
  double x;
  if ((st = get_real(c, &e, "settotalmass", &x, &found))) return st;
  if (found) c->s->settotalmass = x;
  if ((st = get_nonneg(c, &e, "boundmass", &c->s->boundmass))) return st;
  if ((st = get_nonneg(c, &e, "boundinertia", &c->s->boundinertia))) return st;
  const char* meshdir = attr_text(el, "meshdir");
  if (meshdir) {
    if (strlen(meshdir) >= sizeof(c->meshdir)) return elem_error(c, el, PHYS_ERR_VALUE, "meshdir too long");
    strcpy(c->meshdir, meshdir);
  }
  if ((st = get_keyword(c, &e, "balanceinertia", BOOL_WORDS, &v, &found))) return st;
  if (found && v) elem_warning(c, el, "balanceinertia is not supported; ignored");
  double igr[2] = {0, 5};
  if ((st = get_vec(c, &e, "inertiagrouprange", 2, igr, NULL))) return st;
  if (igr[0] != 0 || igr[1] != 5) elem_warning(c, el, "inertiagrouprange is not supported; ignored");
  if ((st = get_keyword(c, &e, "discardvisual", BOOL_WORDS, &v, &found))) return st;
  if (found && v) elem_warning(c, el, "discardvisual is not supported; visual geoms are kept");
  return PHYS_OK;
}

// <flag>: the disable flags physid knows (others are MuJoCo solver flags, ignored)
static physStatus parse_flag(mjcfCtx* c, xmlNode* el) {
  static const char* const NAMES[] = {"contact", "limit", "gravity", "passive", "eulerdamp", "actuation",
                                      NULL};
  static const int BITS[] = {PHYS_DSBL_CONTACT, PHYS_DSBL_LIMIT,     PHYS_DSBL_GRAVITY,
                             PHYS_DSBL_PASSIVE, PHYS_DSBL_EULERDAMP, PHYS_DSBL_ACTUATION};
  static const char* const VALUES[] = {"disable", "enable", NULL};
  mjcfElem e = {el, K_NONE, 0};
  for (xmlAttr* a = el->properties; a; a = a->next) {
    int v, found;
    physStatus st = get_keyword(c, &e, (const char*)a->name, VALUES, &v, &found);
    if (st) return st;
    for (int i = 0; NAMES[i]; i++) {
      if (strcmp((const char*)a->name, NAMES[i])) continue;
      if (v == 0) {
        c->s->opt.disableflags |= BITS[i];
      } else {
        c->s->opt.disableflags &= ~BITS[i];
      }
    }
  }
  return PHYS_OK;
}

// <option>: time step, gravity, integrator, flags
static physStatus parse_option(mjcfCtx* c, xmlNode* el) {
  static const char* const INTEGRATOR[] = {"Euler", "RK4", "implicit", "implicitfast", NULL};
  mjcfElem e = {el, K_NONE, 0};
  physStatus st;
  int found, v;
  double x[3];
  if ((st = get_real(c, &e, "timestep", x, &found))) return st;
  if (found && !(x[0] > 0)) return elem_error(c, el, PHYS_ERR_VALUE, "timestep must be > 0, got %g", x[0]);
  if (found) c->s->opt.timestep = x[0];
  if ((st = get_vec(c, &e, "gravity", 3, c->s->opt.gravity, NULL))) return st;
  if ((st = get_keyword(c, &e, "integrator", INTEGRATOR, &v, &found))) return st;
  if (found && v != 0) {
    elem_warning(c, el, "integrator '%s' is not supported; using semi-implicit Euler", INTEGRATOR[v]);
  }
  c->s->opt.integrator = PHYS_INT_EULER;
  const char* const FLUID[] = {"density", "viscosity", NULL};
  for (int i = 0; FLUID[i]; i++) {
    if ((st = get_real(c, &e, FLUID[i], x, &found))) return st;
    if (found && x[0] != 0) elem_warning(c, el, "%s (fluid forces) is not supported; ignored", FLUID[i]);
  }
  for (xmlNode* ch = el->children; ch; ch = ch->next) {
    if (ch->type != XML_ELEMENT_NODE) continue;
    if (is_elem(ch, "flag")) {
      if ((st = parse_flag(c, ch))) return st;
    } else {
      unknown_element(c, ch);
    }
  }
  return PHYS_OK;
}

//---------------------------------------------------------------------------------------------------------
// <default>

// kind of a default element; K_NONE for ignored or unknown names (*known = 0 for unknown)
static int default_kind(const char* name, int* known) {
  static const char* const KINDS[NKIND][3] = {{"joint", NULL, NULL}, {"geom", NULL, NULL},
                                              {"site", NULL, NULL},  {"motor", "general", NULL},
                                              {"tendon", NULL, NULL}, {"mesh", NULL, NULL}};
  static const char* const IGNORED[] = {"camera",   "light",    "material", "pair",     "equality",
                                        "position", "velocity", "cylinder", "muscle",   "adhesion",
                                        "damper",   "intvelocity", "texture", "hfield", "skin", NULL};
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
  const char* name = attr_text(el, "class");
  int id = 0;
  physStatus st;
  if (depth > PHYS_MJCF_MAXDEPTH) return elem_error(c, el, PHYS_ERR_MODEL, "defaults nested too deeply");
  if (parent < 0) {
    if (name && strcmp(name, "main")) {
      return elem_error(c, el, PHYS_ERR_MODEL, "the top-level <default> is class 'main', not '%.64s'", name);
    }
  } else {
    if (!name || !name[0]) return elem_error(c, el, PHYS_ERR_MODEL, "a nested <default> needs a class");
    for (int k = 0; k < c->ncls; k++) {
      if (!strcmp(c->cls[k].name, name)) {
        return elem_error(c, el, PHYS_ERR_MODEL, "default class '%.64s' defined twice", name);
      }
    }
    if ((st = class_new(c, name, parent, &id))) return st;
  }
  for (xmlNode* ch = el->children; ch; ch = ch->next) {
    if (ch->type != XML_ELEMENT_NODE) continue;
    if (is_elem(ch, "default")) {
      if ((st = parse_default(c, ch, id, depth + 1))) return st;
      continue;
    }
    int known, kind = default_kind((const char*)ch->name, &known);
    if (kind != K_NONE) {
      if ((st = class_add_node(c, id, kind, ch))) return st;
    } else if (!known) {
      unknown_element(c, ch);
    }
  }
  return PHYS_OK;
}

//---------------------------------------------------------------------------------------------------------
// <asset>: meshes

// index of the mesh named name, -1 if none
static int find_mesh(const physSpec* s, const char* name) {
  for (int i = 0; i < s->nmesh; i++) {
    if (!strcmp(s->mesh[i].name, name)) return i;
  }
  return -1;
}

// <mesh name file scale>: loaded now (the name defaults to the file name without folder and extension)
static physStatus parse_mesh(mjcfCtx* c, xmlNode* el) {
  int cls;
  physStatus st = elem_class(c, el, "class", 0, &cls);
  if (st) return st;
  mjcfElem e = {el, K_MESH, cls};
  const char* file = attr_text(el, "file");
  if (!file || !file[0]) {
    if (attr_text(el, "vertex")) {
      return elem_error(c, el, PHYS_ERR_MODEL, "inline mesh data (vertex=) is not supported; use a file");
    }
    return elem_error(c, el, PHYS_ERR_MODEL, "attribute 'file' is required");
  }
  char name[PHYS_NAMELEN] = "";
  if ((st = get_name(c, el, "name", name))) return st;
  if (!name[0]) {   // file name without folder and extension
    const char* base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
    snprintf(name, sizeof(name), "%s", base);
    char* dot = strrchr(name, '.');
    if (dot && dot != name) *dot = 0;
  }
  if (find_mesh(c->s, name) >= 0 || strlist_has(&c->missing_mesh, name)) {
    return elem_error(c, el, PHYS_ERR_MODEL, "mesh name '%s' used twice", name);
  }
  double scale[3] = {1, 1, 1};
  if ((st = get_vec(c, &e, "scale", 3, scale, NULL))) return st;

  char path[PATH_MAX];
  physLog tmp = {0};
  physLog* keep = c->log;
  c->log = &tmp;   // a missing file is only a warning unless strict_mesh: decide after resolving
  st = resolve_path(c, el, c->meshdir, file, path);
  int missing = st == PHYS_ERR_IO && errno == ENOENT;
  c->log = keep;
  if (st && !(missing && !c->strict_mesh)) return phys_error(c->log, st, "%s", tmp.error);
  if (st) {
    phys_warning(c->log, "%.200s; its geoms are dropped", tmp.error);
    if (!strlist_add(&c->missing_mesh, name)) return phys_error(c->log, PHYS_ERR_NOMEM, "out of memory");
    return PHYS_OK;
  }
  int i = phys_spec_add_mesh(c->s);
  if (i < 0) return phys_error(c->log, PHYS_ERR_NOMEM, "out of memory");
  physSpecMesh* m = c->s->mesh + i;
  strcpy(m->name, name);
  m->line = (int)xmlGetLineNo(el);
  m->fileid = elem_fileid(c, el);
  physLog mlog = {0};   // the mesh file's own error, then where the model uses it
  if ((st = phys_mesh_load(path, scale, m, &mlog))) return elem_error(c, el, st, "mesh: %s", mlog.error);
  return PHYS_OK;
}

// <asset>: meshes; textures, materials, skins are for rendering
static physStatus parse_asset(mjcfCtx* c, xmlNode* el) {
  for (xmlNode* ch = el->children; ch; ch = ch->next) {
    if (ch->type != XML_ELEMENT_NODE) continue;
    if (is_elem(ch, "mesh")) {
      physStatus st = parse_mesh(c, ch);
      if (st) return st;
    } else if (!is_elem(ch, "texture") && !is_elem(ch, "material") && !is_elem(ch, "skin") &&
               !is_elem(ch, "hfield")) {
      unknown_element(c, ch);
    }
  }
  return PHYS_OK;
}

//---------------------------------------------------------------------------------------------------------
// bodies and what they hold

// <inertial pos orientation mass diaginertia|fullinertia>
static physStatus parse_inertial(mjcfCtx* c, xmlNode* el, physSpecBody* b) {
  mjcfElem e = {el, K_NONE, 0};
  physStatus st;
  int found, fdiag, ffull, norient;
  double quat[4];
  if ((st = get_vec(c, &e, "pos", 3, b->ipos, &found))) return st;
  if (!found) return elem_error(c, el, PHYS_ERR_MODEL, "attribute 'pos' is required");
  if ((st = get_real(c, &e, "mass", &b->mass, &found))) return st;
  if (!found) return elem_error(c, el, PHYS_ERR_MODEL, "attribute 'mass' is required");
  if (!(b->mass >= 0)) return elem_error(c, el, PHYS_ERR_VALUE, "mass must be >= 0, got %g", b->mass);
  if ((st = get_vec(c, &e, "diaginertia", 3, b->inertia, &fdiag))) return st;
  if ((st = get_vec(c, &e, "fullinertia", 6, b->fullinertia, &ffull))) return st;
  if ((st = get_orient(c, &e, quat, &norient))) return st;
  if (fdiag == ffull) {
    return elem_error(c, el, PHYS_ERR_MODEL, "give exactly one of 'diaginertia' and 'fullinertia'");
  }
  if (ffull && norient) {
    return elem_error(c, el, PHYS_ERR_MODEL, "fullinertia fixes the inertial frame: remove the orientation");
  }
  for (int i = 0; fdiag && i < 3; i++) {
    if (b->inertia[i] < 0) return elem_error(c, el, PHYS_ERR_VALUE, "diaginertia must be >= 0");
  }
  b->has_inertial = 1;
  b->has_fullinertia = ffull;
  memcpy(b->iquat, quat, sizeof(quat));
  return PHYS_OK;
}

// <joint> (free = 0: a hinge/slide/ball/free joint with defaults) or <freejoint> (no defaults)
static physStatus parse_joint(mjcfCtx* c, xmlNode* el, int body, int childclass, int free) {
  static const char* const TYPES[] = {"free", "ball", "slide", "hinge", NULL};   // = physJointType
  int cls = 0, type = PHYS_JNT_HINGE, found;
  physStatus st = free ? PHYS_OK : elem_class(c, el, "class", childclass, &cls);
  if (st) return st;
  mjcfElem e = {el, free ? K_NONE : K_JOINT, cls};
  if (free) {
    type = PHYS_JNT_FREE;
  } else if ((st = get_keyword(c, &e, "type", TYPES, &type, NULL))) {
    return st;
  }
  int id = phys_spec_add_joint(c->s, body, type);
  if (id < 0) return phys_error(c->log, PHYS_ERR_NOMEM, "out of memory");
  physSpecJoint* j = c->s->joint + id;
  j->line = (int)xmlGetLineNo(el);
  j->fileid = elem_fileid(c, el);
  if ((st = get_name(c, el, "name", j->name))) return st;
  if (free) return PHYS_OK;

  double deg = c->degree ? DEG2RAD : 1;
  double angular = type == PHYS_JNT_HINGE ? deg : 1;   // ref and springref: angles for hinges
  if ((st = get_vec(c, &e, "pos", 3, j->pos, NULL))) return st;
  if ((st = get_vec(c, &e, "axis", 3, j->axis, NULL))) return st;
  if (phys_norm3(j->axis) < MJCF_EPS) return elem_error(c, el, PHYS_ERR_VALUE, "axis is zero");
  if ((st = get_real(c, &e, "ref", &j->ref, NULL))) return st;
  if ((st = get_real(c, &e, "springref", &j->springref, NULL))) return st;
  j->ref *= angular;
  j->springref *= angular;
  if ((st = get_nonneg(c, &e, "stiffness", &j->stiffness))) return st;
  if ((st = get_nonneg(c, &e, "damping", &j->damping))) return st;
  if ((st = get_nonneg(c, &e, "armature", &j->armature))) return st;
  if ((st = get_limited(c, &e, "limited", "range", j->range, &j->limited))) return st;
  if (type == PHYS_JNT_HINGE || type == PHYS_JNT_BALL) {   // MuJoCo converts only when limited; we always
    j->range[0] *= deg;
    j->range[1] *= deg;
  }
  double fl = 0;
  if ((st = get_real(c, &e, "frictionloss", &fl, &found))) return st;
  if (fl != 0) elem_warning(c, el, "frictionloss is not supported; ignored");
  return PHYS_OK;
}

// number of sizes each geom type needs (without fromto)
static int geom_nsize(int type) {
  switch (type) {
    case PHYS_GEOM_SPHERE: return 1;
    case PHYS_GEOM_CAPSULE: case PHYS_GEOM_CYLINDER: return 2;
    case PHYS_GEOM_ELLIPSOID: case PHYS_GEOM_BOX: return 3;
    default: return 0;
  }
}

// fromto: pos = midpoint, z axis along from - to (MuJoCo's sign), half length into size[1] (capsule,
// cylinder) or size[2] with size[1] = size[0] (box, ellipsoid)
static physStatus apply_fromto(mjcfCtx* c, xmlNode* el, const double ft[6], physSpecGeom* g) {
  double vec[3] = {ft[0] - ft[3], ft[1] - ft[4], ft[2] - ft[5]};
  double len = phys_norm3(vec);
  if (len < MJCF_EPS) return elem_error(c, el, PHYS_ERR_VALUE, "fromto points coincide");
  for (int i = 0; i < 3; i++) g->pos[i] = 0.5 * (ft[i] + ft[i + 3]);
  phys_quat_zaxis(g->quat, vec);
  if (g->type == PHYS_GEOM_CAPSULE || g->type == PHYS_GEOM_CYLINDER) {
    g->size[1] = 0.5 * len;
  } else {
    g->size[1] = g->size[0];
    g->size[2] = 0.5 * len;
  }
  return PHYS_OK;
}

// geom type, mesh reference and sizes; *drop = 1 if the geom's mesh file was missing
static physStatus geom_shape(mjcfCtx* c, const mjcfElem* e, physSpecGeom* g, int* drop) {
  static const char* const TYPES[] = {"plane", "hfield", "sphere", "capsule", "ellipsoid", "cylinder",
                                      "box", "mesh", "sdf", NULL};
  static const int MAP[] = {PHYS_GEOM_PLANE, -1, PHYS_GEOM_SPHERE, PHYS_GEOM_CAPSULE, PHYS_GEOM_ELLIPSOID,
                            PHYS_GEOM_CYLINDER, PHYS_GEOM_BOX, PHYS_GEOM_MESH, -1};
  int t = 2, nsize, found;
  double ft[6];
  physStatus st = get_keyword(c, e, "type", TYPES, &t, NULL);
  if (st) return st;
  if (MAP[t] < 0) return elem_error(c, e->el, PHYS_ERR_MODEL, "geom type '%s' is not supported", TYPES[t]);
  g->type = MAP[t];
  const xmlNode* where;
  const char* mesh = find_attr(c, e, "mesh", &where);
  *drop = 0;
  if (g->type == PHYS_GEOM_MESH) {
    if (!mesh) return elem_error(c, e->el, PHYS_ERR_MODEL, "a mesh geom needs attribute 'mesh'");
    g->mesh = find_mesh(c->s, mesh);
    if (g->mesh < 0 && strlist_has(&c->missing_mesh, mesh)) {
      elem_warning(c, e->el, "geom dropped: the file of mesh '%.64s' is missing", mesh);
      *drop = 1;
      return PHYS_OK;
    }
    if (g->mesh < 0) return elem_error(c, e->el, PHYS_ERR_MODEL, "unknown mesh '%.64s'", mesh);
  } else if (mesh) {
    return elem_error(c, e->el, PHYS_ERR_MODEL,
                      "mesh='%.64s' on a %s geom (fitting a primitive to a mesh) is not supported", mesh,
                      TYPES[t]);
  }
  if ((st = get_partial(c, e, "size", 3, g->size, &nsize))) return st;
  if ((st = get_vec(c, e, "fromto", 6, ft, &found))) return st;
  int need = geom_nsize(g->type);
  if (found) {
    if (need < 2) {
      return elem_error(c, e->el, PHYS_ERR_MODEL, "fromto needs a capsule, cylinder, box or ellipsoid, not a %s",
                        TYPES[t]);
    }
    need = 1;
  }
  if (nsize < need) {
    return elem_error(c, e->el, PHYS_ERR_SIZE, "size needs %d value%s for %s, found %d", need,
                      need == 1 ? "" : "s", TYPES[t], nsize);
  }
  for (int i = 0; i < need; i++) {
    if (!(g->size[i] > 0)) {
      return elem_error(c, e->el, PHYS_ERR_VALUE, "size[%d] = %g must be positive for %s", i, g->size[i],
                        TYPES[t]);
    }
  }
  if (found) return apply_fromto(c, e->el, ft, g);
  if ((st = get_vec(c, e, "pos", 3, g->pos, NULL))) return st;
  return get_orient(c, e, g->quat, NULL);
}

// <geom>: shape, frame, contact and mass properties
static physStatus parse_geom(mjcfCtx* c, xmlNode* el, int body, int childclass) {
  int cls, drop = 0, nset;
  physStatus st = elem_class(c, el, "class", childclass, &cls);
  if (st) return st;
  mjcfElem e = {el, K_GEOM, cls};
  int id = phys_spec_add_geom(c->s, body, PHYS_GEOM_SPHERE);
  if (id < 0) return phys_error(c->log, PHYS_ERR_NOMEM, "out of memory");
  physSpecGeom* g = c->s->geom + id;
  g->line = (int)xmlGetLineNo(el);
  g->fileid = elem_fileid(c, el);
  if ((st = get_name(c, el, "name", g->name))) return st;
  if ((st = geom_shape(c, &e, g, &drop))) return st;
  if (drop) {
    c->s->ngeom--;
    return PHYS_OK;
  }
  if ((st = get_partial(c, &e, "friction", 3, g->friction, &nset))) return st;
  for (int i = 0; i < 3; i++) {
    if (g->friction[i] < 0) return elem_error(c, el, PHYS_ERR_VALUE, "friction must be >= 0");
  }
  int found, condim = g->condim;
  double mass;
  if ((st = get_nonneg(c, &e, "density", &g->density))) return st;
  if ((st = get_real(c, &e, "mass", &mass, &found))) return st;
  if (found && mass < 0) return elem_error(c, el, PHYS_ERR_VALUE, "mass must be >= 0, got %g", mass);
  if (found) g->mass = mass;
  if ((st = get_int(c, &e, "contype", &g->contype, NULL))) return st;
  if ((st = get_int(c, &e, "conaffinity", &g->conaffinity, NULL))) return st;
  if ((st = get_int(c, &e, "condim", &condim, NULL))) return st;
  if (condim != 1 && condim != 3 && condim != 4 && condim != 6) {
    return elem_error(c, el, PHYS_ERR_VALUE, "condim must be 1, 3, 4 or 6, got %d", condim);
  }
  g->condim = condim;
  if ((st = get_nonneg(c, &e, "margin", &g->margin))) return st;
  if ((st = get_vec(c, &e, "rgba", 4, g->rgba, NULL))) return st;
  return get_int(c, &e, "group", &g->group, NULL);
}

// <site name pos orientation>
static physStatus parse_site(mjcfCtx* c, xmlNode* el, int body, int childclass) {
  int cls;
  physStatus st = elem_class(c, el, "class", childclass, &cls);
  if (st) return st;
  mjcfElem e = {el, K_SITE, cls};
  int id = phys_spec_add_site(c->s, body);
  if (id < 0) return phys_error(c->log, PHYS_ERR_NOMEM, "out of memory");
  physSpecSite* site = c->s->site + id;
  site->line = (int)xmlGetLineNo(el);
  site->fileid = elem_fileid(c, el);
  if ((st = get_name(c, el, "name", site->name))) return st;
  if ((st = get_vec(c, &e, "pos", 3, site->pos, NULL))) return st;
  return get_orient(c, &e, site->quat, NULL);
}

// elements inside a body that matter only for rendering or are MuJoCo extensions we skip silently
static int body_child_ignored(const xmlNode* ch) {
  return is_elem(ch, "camera") || is_elem(ch, "light");
}

// the joints, geoms, sites and inertial of one body (body 0: the world), not its child bodies
static physStatus parse_body_items(mjcfCtx* c, xmlNode* el, int body, int childclass) {
  physStatus st = PHYS_OK;
  int ninertial = 0, world = body == 0;
  for (xmlNode* ch = el->children; ch && !st; ch = ch->next) {
    if (ch->type != XML_ELEMENT_NODE || is_elem(ch, "body") || body_child_ignored(ch)) continue;
    int isjoint = is_elem(ch, "joint"), isfree = is_elem(ch, "freejoint");
    if ((isjoint || isfree || is_elem(ch, "inertial")) && world) {
      st = elem_error(c, ch, PHYS_ERR_MODEL, "not allowed in the world body");
    } else if (isjoint || isfree) {
      st = parse_joint(c, ch, body, childclass, isfree);
    } else if (is_elem(ch, "inertial")) {
      st = ++ninertial > 1 ? elem_error(c, ch, PHYS_ERR_MODEL, "a body has at most one <inertial>")
                           : parse_inertial(c, ch, c->s->body + body);
    } else if (is_elem(ch, "geom")) {
      st = parse_geom(c, ch, body, childclass);
    } else if (is_elem(ch, "site")) {
      st = parse_site(c, ch, body, childclass);
    } else if (is_elem(ch, "composite")) {
      elem_warning(c, ch, "composite objects are not supported; ignored");
    } else {
      unknown_element(c, ch);
    }
  }
  return st;
}

// a free joint must be the only joint of a child of the world
static physStatus check_free_joint(mjcfCtx* c, xmlNode* el, int body, int jnt0) {
  const physSpec* s = c->s;
  int nfree = 0;
  for (int j = jnt0; j < s->njoint; j++) nfree += s->joint[j].type == PHYS_JNT_FREE;
  if (!nfree) return PHYS_OK;
  if (nfree > 1 || s->njoint - jnt0 > 1) {
    return elem_error(c, el, PHYS_ERR_MODEL, "a free joint must be the only joint of its body");
  }
  if (s->body[body].parent != 0) {
    return elem_error(c, el, PHYS_ERR_MODEL, "a free joint is only allowed on a child of the world body");
  }
  return PHYS_OK;
}

// <body name pos orientation childclass> and its subtree, depth first in file order
static physStatus parse_body(mjcfCtx* c, xmlNode* el, int parent, int childclass, int depth) {
  if (depth > PHYS_MJCF_MAXDEPTH) return elem_error(c, el, PHYS_ERR_MODEL, "bodies nested too deeply");
  int id = phys_spec_add_body(c->s, parent);
  if (id < 0) return phys_error(c->log, PHYS_ERR_NOMEM, "out of memory");
  physSpecBody* b = c->s->body + id;
  mjcfElem e = {el, K_NONE, 0};
  int v, found;
  b->line = (int)xmlGetLineNo(el);
  b->fileid = elem_fileid(c, el);
  physStatus st = get_name(c, el, "name", b->name);
  if (!st) st = get_vec(c, &e, "pos", 3, b->pos, NULL);
  if (!st) st = get_orient(c, &e, b->quat, NULL);
  if (!st) st = elem_class(c, el, "childclass", childclass, &childclass);
  if (!st) st = get_keyword(c, &e, "mocap", BOOL_WORDS, &v, &found);
  if (st) return st;
  if (found && v) elem_warning(c, el, "mocap bodies are not supported; treated as a fixed body");

  int jnt0 = c->s->njoint;
  if ((st = parse_body_items(c, el, id, childclass))) return st;
  if ((st = check_free_joint(c, el, id, jnt0))) return st;
  for (xmlNode* ch = el->children; ch; ch = ch->next) {
    if (is_elem(ch, "body") && (st = parse_body(c, ch, id, childclass, depth + 1))) return st;
  }
  return PHYS_OK;
}

// <worldbody>: its own geoms and sites, then its bodies
static physStatus parse_worldbody(mjcfCtx* c, xmlNode* el) {
  physStatus st = parse_body_items(c, el, 0, 0);
  for (xmlNode* ch = el->children; ch && !st; ch = ch->next) {
    if (is_elem(ch, "body")) st = parse_body(c, ch, 0, 0, 1);
  }
  return st;
}

//---------------------------------------------------------------------------------------------------------
// <tendon>, <actuator>, <keyframe>

// index of the site named name; -1 if none, -2 if several
static int find_site(const physSpec* s, const char* name) {
  int id = -1;
  for (int i = 0; i < s->nsite; i++) {
    if (strcmp(s->site[i].name, name)) continue;
    if (id >= 0) return -2;
    id = i;
  }
  return id;
}

// <spatial> through sites only: a point-to-point spring path
static physStatus parse_spatial(mjcfCtx* c, xmlNode* el) {
  int cls, limited, found;
  double range[2] = {0, 0}, fl = 0;
  physStatus st = elem_class(c, el, "class", 0, &cls);
  if (st) return st;
  mjcfElem e = {el, K_TENDON, cls};
  int id = phys_spec_add_spring(c->s);
  if (id < 0) return phys_error(c->log, PHYS_ERR_NOMEM, "out of memory");
  physSpecSpring* sp = c->s->spring + id;
  sp->line = (int)xmlGetLineNo(el);
  sp->fileid = elem_fileid(c, el);
  if ((st = get_name(c, el, "name", sp->name))) return st;
  if ((st = get_nonneg(c, &e, "stiffness", &sp->stiffness))) return st;
  if ((st = get_nonneg(c, &e, "damping", &sp->damping))) return st;
  if ((st = get_real(c, &e, "springlength", &sp->restlength, NULL))) return st;
  if ((st = get_limited(c, &e, "limited", "range", range, &limited))) return st;
  if (limited) elem_warning(c, el, "tendon length limits are not supported; ignored");
  if ((st = get_real(c, &e, "frictionloss", &fl, &found))) return st;
  if (fl != 0) elem_warning(c, el, "frictionloss is not supported; ignored");
  for (xmlNode* ch = el->children; ch; ch = ch->next) {
    if (ch->type != XML_ELEMENT_NODE) continue;
    if (is_elem(ch, "geom") || is_elem(ch, "pulley")) {
      return elem_error(c, ch, PHYS_ERR_MODEL, "spatial tendons through <%s> are not supported (sites only)",
                        (const char*)ch->name);
    }
    if (!is_elem(ch, "site")) {
      unknown_element(c, ch);
      continue;
    }
    const char* name = attr_text(ch, "site");
    if (!name) return elem_error(c, ch, PHYS_ERR_MODEL, "attribute 'site' is required");
    int site = find_site(c->s, name);
    if (site == -1) return elem_error(c, ch, PHYS_ERR_MODEL, "unknown site '%.64s'", name);
    if (site == -2) return elem_error(c, ch, PHYS_ERR_MODEL, "site name '%.64s' is not unique", name);
    if (sp->nsite == (int)(sizeof(sp->site) / sizeof(sp->site[0]))) {
      return elem_error(c, ch, PHYS_ERR_SIZE, "a spatial tendon has at most %d sites",
                        (int)(sizeof(sp->site) / sizeof(sp->site[0])));
    }
    sp->site[sp->nsite++] = site;
  }
  if (sp->nsite < 2) return elem_error(c, el, PHYS_ERR_MODEL, "a spatial tendon needs at least 2 sites");
  return PHYS_OK;
}

// <tendon>: spatial tendons become springs; fixed tendons are ignored with a warning
static physStatus parse_tendon(mjcfCtx* c, xmlNode* el) {
  for (xmlNode* ch = el->children; ch; ch = ch->next) {
    if (ch->type != XML_ELEMENT_NODE) continue;
    if (is_elem(ch, "spatial")) {
      physStatus st = parse_spatial(c, ch);
      if (st) return st;
    } else if (is_elem(ch, "fixed")) {
      elem_warning(c, ch, "fixed tendons are not supported; ignored (with actuators on them)");
      const char* name = attr_text(ch, "name");
      if (name && !strlist_add(&c->ignored_tendon, name)) {
        return phys_error(c->log, PHYS_ERR_NOMEM, "out of memory");
      }
    } else {
      unknown_element(c, ch);
    }
  }
  return PHYS_OK;
}

// <general>: only force = gain*ctrl with a fixed gain and no bias or dynamics; *ok = 0 otherwise.
// The gain is folded into the gear: generalized force = gear * gainprm[0] * ctrl.
static physStatus general_gain(mjcfCtx* c, const mjcfElem* e, double* gain, int* ok) {
  static const char* const DYN[] = {"none", "integrator", "filter", "muscle", "user", NULL};
  static const char* const GAIN[] = {"fixed", "affine", "muscle", "user", NULL};
  static const char* const BIAS[] = {"none", "affine", "muscle", "user", NULL};
  int dyn = 0, gt = 0, bias = 0, n;
  double prm[10] = {1, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  physStatus st = get_keyword(c, e, "dyntype", DYN, &dyn, NULL);
  if (!st) st = get_keyword(c, e, "gaintype", GAIN, &gt, NULL);
  if (!st) st = get_keyword(c, e, "biastype", BIAS, &bias, NULL);
  if (!st) st = get_partial(c, e, "gainprm", 10, prm, &n);
  if (st) return st;
  *ok = dyn == 0 && gt == 0 && bias == 0;
  if (!*ok) {
    elem_warning(c, e->el, "only fixed-gain <general> actuators without bias or dynamics are supported; "
                 "ignored");
  }
  *gain = prm[0];
  return PHYS_OK;
}

// <motor> or <general> (general = 1) on a joint or a spatial tendon
static physStatus parse_motor(mjcfCtx* c, xmlNode* el, int general) {
  static const char* const TARGETS[] = {"joint", "tendon", "site", "jointinparent", "body", "cranksite"};
  int cls, ntarget = 0, which = -1, ok = 1, n, v, found;
  double gain = 1;
  physStatus st = elem_class(c, el, "class", 0, &cls);
  if (st) return st;
  mjcfElem e = {el, K_ACTUATOR, cls};
  for (int i = 0; i < 6; i++) {
    if (attr_text(el, TARGETS[i])) {
      ntarget++;
      which = i;
    }
  }
  if (ntarget != 1) return elem_error(c, el, PHYS_ERR_MODEL, "needs exactly one of 'joint' and 'tendon'");
  const char* target = attr_text(el, TARGETS[which]);
  if (which >= 2) {
    elem_warning(c, el, "actuators on a %s are not supported; ignored", TARGETS[which]);
    return PHYS_OK;
  }
  if (which == 1 && strlist_has(&c->ignored_tendon, target)) {
    elem_warning(c, el, "actuator on the ignored fixed tendon '%.64s'; ignored", target);
    return PHYS_OK;
  }
  if (general && ((st = general_gain(c, &e, &gain, &ok)) || !ok)) return st;
  int id = phys_spec_add_actuator(c->s);
  if (id < 0) return phys_error(c->log, PHYS_ERR_NOMEM, "out of memory");
  physSpecActuator* a = c->s->actuator + id;
  a->line = (int)xmlGetLineNo(el);
  a->fileid = elem_fileid(c, el);
  if ((st = get_name(c, el, "name", a->name))) return st;
  if ((st = get_name(c, el, TARGETS[which], a->target))) return st;
  a->trntype = which == 0 ? PHYS_TRN_JOINT : PHYS_TRN_SPRING;
  if ((st = get_partial(c, &e, "gear", 6, a->gear, &n))) return st;
  for (int i = 0; i < 6; i++) a->gear[i] *= gain;
  if ((st = get_limited(c, &e, "ctrllimited", "ctrlrange", a->ctrlrange, &a->ctrllimited))) return st;
  if ((st = get_keyword(c, &e, "forcelimited", LIMITED_WORDS, &v, &found))) return st;
  if (found && v == 1) elem_warning(c, el, "forcelimited is not supported; ignored");
  return PHYS_OK;
}

// <actuator>
static physStatus parse_actuator(mjcfCtx* c, xmlNode* el) {
  static const char* const UNSUPPORTED[] = {"position", "velocity", "cylinder", "muscle", "adhesion",
                                            "damper", "intvelocity", NULL};
  for (xmlNode* ch = el->children; ch; ch = ch->next) {
    if (ch->type != XML_ELEMENT_NODE) continue;
    int motor = is_elem(ch, "motor"), general = is_elem(ch, "general"), known = 0;
    if (motor || general) {
      physStatus st = parse_motor(c, ch, general);
      if (st) return st;
      continue;
    }
    for (int i = 0; UNSUPPORTED[i]; i++) known |= is_elem(ch, UNSUPPORTED[i]);
    if (known) {
      elem_warning(c, ch, "<%s> actuators are not supported; ignored", (const char*)ch->name);
    } else {
      unknown_element(c, ch);
    }
  }
  return PHYS_OK;
}

// a variable-length list of numbers (keyframe vectors) into a new array
static physStatus get_list(mjcfCtx* c, xmlNode* el, const char* name, double** out, int* n) {
  const char* text = attr_text(el, name);
  *out = NULL;
  *n = 0;
  if (!text) return PHYS_OK;
  int cnt = count_tokens(text);
  if (!cnt) return PHYS_OK;
  *out = malloc((size_t)cnt * sizeof(double));
  if (!*out) return phys_error(c->log, PHYS_ERR_NOMEM, "out of memory");
  return parse_numbers(c, el, name, text, *out, cnt, n);
}

// <key name time qpos qvel ctrl>; sizes are checked by phys_compile
static physStatus parse_key(mjcfCtx* c, xmlNode* el) {
  mjcfElem e = {el, K_NONE, 0};
  int id = phys_spec_add_key(c->s);
  if (id < 0) return phys_error(c->log, PHYS_ERR_NOMEM, "out of memory");
  physSpecKey* k = c->s->key + id;
  k->line = (int)xmlGetLineNo(el);
  k->fileid = elem_fileid(c, el);
  physStatus st = get_name(c, el, "name", k->name);
  if (!st) st = get_real(c, &e, "time", &k->time, NULL);
  if (!st) st = get_list(c, el, "qpos", &k->qpos, &k->nqpos);
  if (!st) st = get_list(c, el, "qvel", &k->qvel, &k->nqvel);
  if (!st) st = get_list(c, el, "ctrl", &k->ctrl, &k->nctrl);
  if (st) return st;
  static const char* const OTHER[] = {"act", "mocap_pos", "mocap_quat", NULL};
  if (has_any_attr(el, OTHER)) elem_warning(c, el, "act and mocap values are not supported; ignored");
  return PHYS_OK;
}

// <keyframe>
static physStatus parse_keyframe(mjcfCtx* c, xmlNode* el) {
  for (xmlNode* ch = el->children; ch; ch = ch->next) {
    if (ch->type != XML_ELEMENT_NODE) continue;
    if (is_elem(ch, "key")) {
      physStatus st = parse_key(c, ch);
      if (st) return st;
    } else {
      unknown_element(c, ch);
    }
  }
  return PHYS_OK;
}

// <pair geom1 geom2 name friction margin>: an explicit contact pair. Unset friction and margin are MJCF's
// pair defaults 1 and 0, not the geoms' (MuJoCo 2.2.2 does so; tests/model/test_oracle_mjcf_contact.c);
// restitution, which MJCF lacks, comes from the geoms (phys_compile) unless physid:pair_restitution sets it.
// Of MJCF's five friction values physid uses the first (isotropic sliding friction). <default><pair>
// classes are not read.
static physStatus parse_pair(mjcfCtx* c, xmlNode* el) {
  mjcfElem e = {el, K_NONE, 0};
  int id = phys_spec_add_pair(c->s);
  if (id < 0) return phys_error(c->log, PHYS_ERR_NOMEM, "out of memory");
  physSpecPair* p = c->s->pair + id;
  p->line = (int)xmlGetLineNo(el);
  p->fileid = elem_fileid(c, el);
  physStatus st;
  if ((st = get_name(c, el, "name", p->name))) return st;
  if (!attr_text(el, "geom1") || !attr_text(el, "geom2"))
    return elem_error(c, el, PHYS_ERR_MODEL, "attributes 'geom1' and 'geom2' are required");
  if ((st = get_name(c, el, "geom1", p->geom1)) || (st = get_name(c, el, "geom2", p->geom2))) return st;
  double fr[5] = {1, 1, 0.005, 0.0001, 0.0001};
  p->friction = 1;
  p->margin = 0;
  int nset;
  if ((st = get_partial(c, &e, "friction", 5, fr, &nset))) return st;
  if (nset > 0) {
    for (int i = 0; i < nset; i++)
      if (fr[i] < 0) return elem_error(c, el, PHYS_ERR_VALUE, "friction must be >= 0, got %g", fr[i]);
    if (nset > 1 && fr[1] != fr[0])
      elem_warning(c, el, "anisotropic friction is not supported; using the first value %g", fr[0]);
    p->friction = fr[0];
  }
  int found;
  double margin;
  if ((st = get_real(c, &e, "margin", &margin, &found))) return st;
  if (found && !(margin >= 0)) return elem_error(c, el, PHYS_ERR_VALUE, "margin must be >= 0, got %g", margin);
  if (found) p->margin = margin;
  return PHYS_OK;
}

// <exclude body1 body2>: no contacts between the geoms of these two bodies
static physStatus parse_exclude(mjcfCtx* c, xmlNode* el) {
  int id = phys_spec_add_exclude(c->s);
  if (id < 0) return phys_error(c->log, PHYS_ERR_NOMEM, "out of memory");
  physSpecExclude* x = c->s->exclude + id;
  x->line = (int)xmlGetLineNo(el);
  x->fileid = elem_fileid(c, el);
  if (!attr_text(el, "body1") || !attr_text(el, "body2"))
    return elem_error(c, el, PHYS_ERR_MODEL, "attributes 'body1' and 'body2' are required");
  physStatus st = get_name(c, el, "body1", x->body1);
  return st ? st : get_name(c, el, "body2", x->body2);
}

// <contact>: explicit pairs and excluded body pairs (resolved by phys_compile)
static physStatus parse_contact(mjcfCtx* c, xmlNode* el) {
  for (xmlNode* ch = el->children; ch; ch = ch->next) {
    if (ch->type != XML_ELEMENT_NODE) continue;
    physStatus st = PHYS_OK;
    if (is_elem(ch, "pair")) {
      st = parse_pair(c, ch);
    } else if (is_elem(ch, "exclude")) {
      st = parse_exclude(c, ch);
    } else {
      unknown_element(c, ch);
    }
    if (st) return st;
  }
  return PHYS_OK;
}

// <size nconmax>: contact capacity (-1: physid's default from the geoms); other sizes are MuJoCo's
static physStatus parse_size(mjcfCtx* c, xmlNode* el) {
  mjcfElem e = {el, K_NONE, 0};
  int n, found;
  physStatus st = get_int(c, &e, "nconmax", &n, &found);
  if (st || !found) return st;
  if (n < -1 || n == 0 || n > 1000000)
    return elem_error(c, el, PHYS_ERR_VALUE, "nconmax must be -1 (default) or in [1, 1000000], got %d", n);
  c->s->nconmax = n > 0 ? n : 0;
  return PHYS_OK;
}

// <equality>: constraints physid does not model yet
static physStatus parse_ignored_section(mjcfCtx* c, xmlNode* el) {
  for (xmlNode* ch = el->children; ch; ch = ch->next) {
    if (ch->type != XML_ELEMENT_NODE) continue;
    elem_warning(c, ch, "<%s> in <%s> is not supported; ignored", (const char*)ch->name,
                 (const char*)el->name);
  }
  return PHYS_OK;
}

//---------------------------------------------------------------------------------------------------------
// the model

typedef physStatus (*sectionFn)(mjcfCtx* c, xmlNode* el);

//---------------------------------------------------------------------------------------------------------
// physid extensions, carried in <custom> so that MuJoCo 2.2.2 still loads the file:
//   <custom><text name="physid:restlength" data="act1 act2"/></custom>
//   <text name="physid:contact" data="lcp|cone|ccp|penalty"/>      contact model (default lcp)
//   <text name="physid:grad" data="toi complementarity"/>           gradient options (opt.gradflags)
//   <numeric name="physid:baumgarte" data="0.2"/>                   drift stabilization in [0, 1]
//   <numeric name="physid:penalty" data="k_c d_lim v_slip"/>        penalty model (1 to 3 values; d_lim: joint limits)
//   <numeric name="physid:solver" data="iterations tolerance"/>     iterative solvers (1 or 2 values)
//   <numeric name="physid:restitution:GEOM" data="0.5"/>            restitution of a geom, in [0, 1]
//   <numeric name="physid:pair_restitution:PAIR" data="0.5"/>       restitution of a <contact><pair>
// Unknown physid: keys are warnings; other custom data is the user's and is ignored.

// physid:restlength: the named tendon motors set their spring's rest length, L0 = springlength + gear*ctrl,
// instead of pulling along it (actuated cables of tensegrity robots)
static physStatus ext_restlength(mjcfCtx* c, xmlNode* el, const char* data) {
  char name[PHYS_NAMELEN];
  const char* p = data;
  while (*p) {
    while (*p == ' ' || *p == '\t' || *p == '\n') p++;
    size_t n = strcspn(p, " \t\n");
    if (n == 0) break;
    if (n >= sizeof(name)) return elem_error(c, el, PHYS_ERR_VALUE, "actuator name too long");
    memcpy(name, p, n);
    name[n] = 0;
    p += n;
    int found = 0;
    for (int a = 0; a < c->s->nactuator; a++) {
      physSpecActuator* act = c->s->actuator + a;
      if (strcmp(act->name, name) != 0) continue;
      if (act->trntype == PHYS_TRN_JOINT)
        return elem_error(c, el, PHYS_ERR_MODEL, "actuator '%s' acts on a joint; a rest-length actuator needs a tendon", name);
      act->trntype = PHYS_TRN_RESTLENGTH;
      found = 1;
    }
    if (!found) return elem_error(c, el, PHYS_ERR_MODEL, "actuator '%s' not found", name);
  }
  return PHYS_OK;
}

// the numbers of a <numeric> extension: between nmin and nmax values into out, *n = how many
static physStatus ext_numbers(mjcfCtx* c, xmlNode* el, const char* data, double* out, int nmin, int nmax,
                              int* n) {
  physStatus st = parse_numbers(c, el, "data", data, out, nmax, n);
  if (st) return st;
  if (*n < nmin)
    return elem_error(c, el, PHYS_ERR_SIZE, "'data' needs %d to %d values, found %d", nmin, nmax, *n);
  return PHYS_OK;
}

// physid:contact: the contact model, lcp | cone | ccp | penalty
static physStatus ext_contact(mjcfCtx* c, xmlNode* el, const char* data) {
  char word[32];
  size_t a = strspn(data, " \t\n"), len = strcspn(data + a, " \t\n");
  int model = -1;
  if (len < sizeof(word) && data[a + len + strspn(data + a + len, " \t\n")] == 0) {
    memcpy(word, data + a, len);
    word[len] = 0;
    model = phys_contact_from_name(word);
  }
  if (model < 0)
    return elem_error(c, el, PHYS_ERR_VALUE, "unknown contact model '%.40s' (lcp, cone, ccp or penalty)", data);
  c->s->opt.contact = model;
  return PHYS_OK;
}

// physid:grad: gradient options, words "toi" and "complementarity" (opt.gradflags: PHYS_GRAD_TOI,
// PHYS_GRAD_COMPLEMENTARITY); an empty list clears them
static physStatus ext_grad(mjcfCtx* c, xmlNode* el, const char* data) {
  int flags = 0;
  for (const char* p = data + strspn(data, " \t\n"); *p; p += strspn(p, " \t\n")) {
    size_t len = strcspn(p, " \t\n");
    if (len == 3 && !strncmp(p, "toi", 3)) {
      flags |= PHYS_GRAD_TOI;
    } else if (len == 15 && !strncmp(p, "complementarity", 15)) {
      flags |= PHYS_GRAD_COMPLEMENTARITY;
    } else {
      return elem_error(c, el, PHYS_ERR_VALUE, "unknown gradient option '%.*s' (toi, complementarity)",
                        (int)(len < 40 ? len : 40), p);
    }
    p += len;
  }
  c->s->opt.gradflags = flags;
  return PHYS_OK;
}

// physid:baumgarte: drift stabilization beta in [0, 1]
static physStatus ext_baumgarte(mjcfCtx* c, xmlNode* el, const char* data) {
  double x;
  int n;
  physStatus st = ext_numbers(c, el, data, &x, 1, 1, &n);
  if (st) return st;
  if (!(x >= 0 && x <= 1)) return elem_error(c, el, PHYS_ERR_VALUE, "baumgarte %g outside [0, 1]", x);
  c->s->opt.baumgarte = x;
  return PHYS_OK;
}

// physid:penalty: "k_c [d_c [v_slip]]": stiffness >= 0, damping >= 0, slip velocity > 0
static physStatus ext_penalty(mjcfCtx* c, xmlNode* el, const char* data) {
  double x[3];
  int n;
  physStatus st = ext_numbers(c, el, data, x, 1, 3, &n);
  if (st) return st;
  if (!(x[0] >= 0) || (n > 1 && !(x[1] >= 0)) || (n > 2 && !(x[2] > 0)))
    return elem_error(c, el, PHYS_ERR_VALUE, "penalty stiffness and damping must be >= 0, v_slip > 0");
  double* dst[3] = {&c->s->opt.penalty_stiffness, &c->s->opt.penalty_damping, &c->s->opt.penalty_vslip};
  for (int i = 0; i < n; i++) *dst[i] = x[i];
  return PHYS_OK;
}

// physid:solver: "iterations [tolerance]" of the iterative solvers: an integer >= 1, a tolerance >= 0
static physStatus ext_solver(mjcfCtx* c, xmlNode* el, const char* data) {
  double x[2];
  int n;
  physStatus st = ext_numbers(c, el, data, x, 1, 2, &n);
  if (st) return st;
  if (!(x[0] >= 1 && x[0] <= 1e9 && x[0] == floor(x[0])) || (n > 1 && !(x[1] >= 0)))
    return elem_error(c, el, PHYS_ERR_VALUE, "solver iterations must be an integer >= 1, tolerance >= 0");
  c->s->opt.solver_iterations = (int)x[0];
  if (n > 1) c->s->opt.solver_tolerance = x[1];
  return PHYS_OK;
}

// a restitution value: one number in [0, 1]
static physStatus ext_restitution_value(mjcfCtx* c, xmlNode* el, const char* data, double* out) {
  int n;
  physStatus st = ext_numbers(c, el, data, out, 1, 1, &n);
  if (st) return st;
  if (!(*out >= 0 && *out <= 1)) return elem_error(c, el, PHYS_ERR_VALUE, "restitution %g outside [0, 1]", *out);
  return PHYS_OK;
}

// the element name after an extension's key prefix ("" if absent)
static const char* ext_suffix(const xmlNode* el, const char* prefix) {
  const char* name = attr_text(el, "name");
  size_t n = strlen(prefix);
  if (!name || strncmp(name, prefix, n) != 0) return "";
  return name + n;
}

// physid:restitution:GEOM: restitution of the named geom (every geom of that name)
static physStatus ext_restitution(mjcfCtx* c, xmlNode* el, const char* data) {
  const char* name = ext_suffix(el, "physid:restitution:");
  double x;
  physStatus st = ext_restitution_value(c, el, data, &x);
  if (st) return st;
  int found = 0;
  for (int g = 0; g < c->s->ngeom; g++) {
    if (strcmp(c->s->geom[g].name, name) != 0) continue;
    c->s->geom[g].restitution = x;
    found = 1;
  }
  if (!found || !name[0]) return elem_error(c, el, PHYS_ERR_MODEL, "geom '%.64s' not found", name);
  return PHYS_OK;
}

// physid:pair_restitution:PAIR: restitution of the named <contact><pair>
static physStatus ext_pair_restitution(mjcfCtx* c, xmlNode* el, const char* data) {
  const char* name = ext_suffix(el, "physid:pair_restitution:");
  double x;
  physStatus st = ext_restitution_value(c, el, data, &x);
  if (st) return st;
  int found = 0;
  for (int i = 0; i < c->s->npair; i++) {
    if (strcmp(c->s->pair[i].name, name) != 0) continue;
    c->s->pair[i].restitution = x;
    found = 1;
  }
  if (!found || !name[0]) return elem_error(c, el, PHYS_ERR_MODEL, "pair '%.64s' not found", name);
  return PHYS_OK;
}

typedef physStatus (*extensionFn)(mjcfCtx* c, xmlNode* el, const char* data);

static const struct {
  const char* key;
  const char* element;   // "text" or "numeric"
  int prefix;            // 1: the key is a prefix followed by an element's name
  extensionFn fn;
} EXTENSIONS[] = {
    {"physid:restlength", "text", 0, ext_restlength},
    {"physid:contact", "text", 0, ext_contact},
    {"physid:grad", "text", 0, ext_grad},
    {"physid:baumgarte", "numeric", 0, ext_baumgarte},
    {"physid:penalty", "numeric", 0, ext_penalty},
    {"physid:solver", "numeric", 0, ext_solver},
    {"physid:restitution:", "numeric", 1, ext_restitution},
    {"physid:pair_restitution:", "numeric", 1, ext_pair_restitution},
};

// <custom>: physid's extension keys
static physStatus parse_custom(mjcfCtx* c, xmlNode* el) {
  for (xmlNode* ch = el->children; ch; ch = ch->next) {
    if (ch->type != XML_ELEMENT_NODE) continue;
    const char* name = attr_text(ch, "name");
    if (!name || strncmp(name, "physid:", 7) != 0) continue;
    const char* data = attr_text(ch, "data");
    int known = 0;
    for (size_t i = 0; i < sizeof(EXTENSIONS) / sizeof(EXTENSIONS[0]); i++) {
      if (EXTENSIONS[i].prefix ? strncmp(name, EXTENSIONS[i].key, strlen(EXTENSIONS[i].key)) != 0
                               : strcmp(name, EXTENSIONS[i].key) != 0)
        continue;
      known = 1;
      if (!is_elem(ch, EXTENSIONS[i].element))
        return elem_error(c, ch, PHYS_ERR_MODEL, "'%s' must be a <%s> element", name, EXTENSIONS[i].element);
      physStatus st = EXTENSIONS[i].fn(c, ch, data ? data : "");
      if (st) return st;
    }
    if (!known) elem_warning(c, ch, "unknown physid extension '%.64s', ignored", name);
  }
  return PHYS_OK;
}

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
    {"compiler", parse_compiler}, {"option", parse_option},     {"size", parse_size},
    {"default", parse_top_default}, {"visual", parse_nothing},
    {"statistic", parse_nothing}, {"asset", parse_asset},       {"worldbody", parse_worldbody},
    {"contact", parse_contact}, {"equality", parse_ignored_section}, {"tendon", parse_tendon},
    {"actuator", parse_actuator}, {"sensor", parse_nothing},    {"keyframe", parse_keyframe},
    {"custom", parse_custom},   // last: physid extensions refer to actuators and geoms
};
#define NSECTION ((int)(sizeof(SECTIONS) / sizeof(SECTIONS[0])))

// read the <mujoco> root: warn about unknown sections, then read the known ones in order
static physStatus parse_root(mjcfCtx* c, xmlNode* root) {
  if (!is_elem(root, "mujoco")) {
    return elem_error(c, root, PHYS_ERR_MODEL, "the root element must be <mujoco>");
  }
  physStatus st = get_name(c, root, "model", c->s->modelname);
  if (st) return st;
  if (!c->s->modelname[0]) strcpy(c->s->modelname, "MuJoCo Model");
  for (xmlNode* ch = root->children; ch; ch = ch->next) {
    if (ch->type != XML_ELEMENT_NODE) continue;
    int known = 0;
    for (int i = 0; i < NSECTION; i++) known |= is_elem(ch, SECTIONS[i].name);
    if (!known) unknown_element(c, ch);
  }
  for (int i = 0; i < NSECTION; i++) {
    for (xmlNode* ch = root->children; ch; ch = ch->next) {
      if (is_elem(ch, SECTIONS[i].name) && (st = SECTIONS[i].fn(c, ch))) return st;
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
  strlist_free(&c->ignored_tendon);
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
