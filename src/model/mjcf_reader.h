// mjcf_reader.h - private to the MJCF reader (src/model/mjcf*.c): its state, the attribute readers that
// follow MuJoCo's default classes, messages at an element, and the section readers of each file.
//
//   mjcf.c           the document: includes, messages and paths, <compiler> <option> <size> <default>,
//                    the sections in MuJoCo's order, phys_parse_mjcf
//   mjcf_attr.c      attribute values through default classes: numbers, vectors, keywords, names,
//                    limits, orientations
//   mjcf_asset.c     <asset>: meshes
//   mjcf_body.c      <worldbody>: bodies, inertials, joints, geoms, sites
//   mjcf_tendon.c    <tendon> (spatial through sites, fixed)
//   mjcf_actuator.c  <actuator> (motor, general), <keyframe>
//   mjcf_contact.c   <contact> (pair, exclude) and physid's <custom> extension keys
//   mjcf_sensor.c    <sensor>
//   mjcf_equality.c  <equality> (connect, weld, joint; tendon refused)
//
// Every reader takes the reader state and one element, writes into the spec c->s and returns PHYS_OK or
// the status of an error recorded in c->log as "file:line: <element name='..'>: reason".
#ifndef PHYS_MJCF_READER_H
#define PHYS_MJCF_READER_H

#include <limits.h>

#include <libxml/tree.h>

#include "mjcf.h"

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

#define MJCF_DEG2RAD (3.14159265358979323846 / 180.0)   // compiler angle="degree"
#define MJCF_EPS 1e-10                                   // smallest axis / direction norm accepted

//---------------------------------------------------------------------------------------------------------
// reader state

// kinds of elements that default classes hold
enum { K_NONE = -1, K_JOINT = 0, K_GEOM, K_SITE, K_ACTUATOR, K_TENDON, K_MESH, K_EQUALITY, K_MATERIAL, NKIND };

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
  xmlNode** material;         // the <asset><material> elements (colours of the geoms that reference them)
  int nmaterial, capmaterial;
} mjcfCtx;

// add a copy of str; 0 on allocation failure
int mjcf_strlist_add(strList* l, const char* str);
// 1 if str is in the list
int mjcf_strlist_has(const strList* l, const char* str);

//---------------------------------------------------------------------------------------------------------
// elements, messages and paths (mjcf.c)

// 1 if el is an element named name
int mjcf_is_elem(const xmlNode* el, const char* name);
// text of attribute name of el (entity-free: DTDs are refused), "" if empty, NULL if absent
const char* mjcf_attr_text(const xmlNode* el, const char* name);
// the spec's index of the file el came from (an <include>d file, or 0 for the main file and on no memory)
int mjcf_elem_fileid(mjcfCtx* c, const xmlNode* el);
// append a new element to the spec's list `list` (phys_spec_add_<add>), point `out` at it and set its source line
// and file from el (the prologue of every element parser); out of memory: returns PHYS_ERR_NOMEM with the message
// from the enclosing function
#define MJCF_ADD(c, el, add, list, out)                                                                     \
  do {                                                                                                     \
    int id_ = phys_spec_add_##add((c)->s);                                                                 \
    if (id_ < 0) return phys_error((c)->log, PHYS_ERR_NOMEM, "out of memory");                             \
    (out) = (c)->s->list + id_;                                                                            \
    (out)->line = (int)xmlGetLineNo(el);                                                                   \
    (out)->fileid = mjcf_elem_fileid((c), (el));                                                           \
  } while (0)
// record an error "file:line: <element name='..'>: what" in c->log; returns st
__attribute__((format(printf, 4, 5))) physStatus mjcf_elem_error(mjcfCtx* c, const xmlNode* el,
                                                                 physStatus st, const char* fmt, ...);
// record a warning at an element (aggregated by fmt)
__attribute__((format(printf, 3, 4))) void mjcf_elem_warning(mjcfCtx* c, const xmlNode* el, const char* fmt,
                                                             ...);
// warning for an element this reader does not know
void mjcf_unknown_element(mjcfCtx* c, const xmlNode* el);
// real path of file (relative to c->dir/sub, or absolute) into out, by the model-folder rule of path.h.
// Returns PHYS_ERR_IO (file missing: errno kept) or PHYS_ERR_ARG (outside the folder) with a message.
physStatus mjcf_resolve_path(mjcfCtx* c, const xmlNode* el, const char* sub, const char* file,
                             char out[PATH_MAX]);

//---------------------------------------------------------------------------------------------------------
// attribute values (mjcf_attr.c); "own or default" = the element's attribute, else its default classes'

extern const char* const MJCF_BOOL_WORDS[];      // false true
extern const char* const MJCF_LIMITED_WORDS[];   // false true auto

// value of attribute name for e (own or default); *where = the element holding it; NULL if none
const char* mjcf_find_attr(const mjcfCtx* c, const mjcfElem* e, const char* name, const xmlNode** where);
// number of whitespace-separated tokens in text
int mjcf_count_tokens(const char* text);
// parse up to max finite numbers of attribute attr (text, written on element where) into out; *n = how many
physStatus mjcf_parse_numbers(mjcfCtx* c, const xmlNode* where, const char* attr, const char* text,
                              double* out, int max, int* n);
// exactly n numbers (n <= 16) of attribute name (own or default), if present; *found = 0/1 (may be NULL)
physStatus mjcf_get_vec(mjcfCtx* c, const mjcfElem* e, const char* name, int n, double* out, int* found);
// one number (own or default)
physStatus mjcf_get_real(mjcfCtx* c, const mjcfElem* e, const char* name, double* out, int* found);
// one number that must be >= 0 (own or default)
physStatus mjcf_get_nonneg(mjcfCtx* c, const mjcfElem* e, const char* name, double* out);
// MuJoCo's partial vectors (size, friction, gear, gainprm; max <= 16): each level of defaults and then the
// element overwrite their first values only; *nset = the most values any level gave
physStatus mjcf_get_partial(mjcfCtx* c, const mjcfElem* e, const char* name, int max, double* out,
                            int* nset);
// an integer (own or default)
physStatus mjcf_get_int(mjcfCtx* c, const mjcfElem* e, const char* name, int* out, int* found);
// one of the NULL-terminated words (own or default): its index into *out
physStatus mjcf_get_keyword(mjcfCtx* c, const mjcfElem* e, const char* name, const char* const* words,
                            int* out, int* found);
// attribute attr of el itself (no defaults) copied into a spec name field, checking its length
physStatus mjcf_get_name(mjcfCtx* c, xmlNode* el, const char* attr, char out[PHYS_NAMELEN]);
// attributes lname (limited: false/true/auto) and rname (range) by MuJoCo 2.2.2's limit rule
physStatus mjcf_get_limited(mjcfCtx* c, const mjcfElem* e, const char* lname, const char* rname,
                            double range[2], int* limited);
// the default class of an element: its attribute attr ("class"), else the inherited childclass
physStatus mjcf_elem_class(mjcfCtx* c, xmlNode* el, const char* attr, int inherited, int* cls);
// 1 if the element has any of the attributes (NULL-terminated list) itself
int mjcf_has_any_attr(const xmlNode* el, const char* const* names);
// the rgba (own or default; MuJoCo's default 1 1 1 1) of the <asset><material> called name, for the element user
// that references it; PHYS_ERR_MODEL naming user if there is no such material
physStatus mjcf_material_rgba(mjcfCtx* c, const xmlNode* user, const char* name, double rgba[4]);
// orientation of e (quat, axisangle, euler, xyaxes or zaxis; own, else the nearest default's): identity if
// none. *given = 1 if any was found (may be NULL).
physStatus mjcf_get_orient(mjcfCtx* c, const mjcfElem* e, double q[4], int* given);

//---------------------------------------------------------------------------------------------------------
// sections (each reads one top-level element and its children)

// index of the mesh named name, -1 if none (mjcf_asset.c)
int mjcf_find_mesh(const physSpec* s, const char* name);
physStatus mjcf_parse_asset(mjcfCtx* c, xmlNode* el);       // mjcf_asset.c
physStatus mjcf_parse_worldbody(mjcfCtx* c, xmlNode* el);   // mjcf_body.c
physStatus mjcf_parse_tendon(mjcfCtx* c, xmlNode* el);      // mjcf_tendon.c
physStatus mjcf_parse_actuator(mjcfCtx* c, xmlNode* el);    // mjcf_actuator.c
physStatus mjcf_parse_keyframe(mjcfCtx* c, xmlNode* el);    // mjcf_actuator.c
physStatus mjcf_parse_sensor(mjcfCtx* c, xmlNode* el);      // mjcf_sensor.c
physStatus mjcf_parse_contact(mjcfCtx* c, xmlNode* el);     // mjcf_contact.c
physStatus mjcf_parse_custom(mjcfCtx* c, xmlNode* el);      // mjcf_contact.c
physStatus mjcf_parse_equality(mjcfCtx* c, xmlNode* el);    // mjcf_equality.c

#endif  // PHYS_MJCF_READER_H
