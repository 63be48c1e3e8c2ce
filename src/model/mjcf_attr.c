// mjcf_attr.c - MJCF attribute values: an element's own attribute, else its default classes' (MuJoCo's
// rule: the element's class, then its ancestors up to "main"; of several defaults of one kind in a class
// the later wins), read as numbers, vectors, partial vectors, integers, keywords, names, limits and
// orientations, each with a file:line: <element> error naming the attribute.
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mjcf_reader.h"
#include "rot.h"

//---------------------------------------------------------------------------------------------------------
// attributes through default classes

// value of attribute name for e: its own, else the nearest default (class, then its ancestors;
// later defaults of one class win); *where = the element holding it
const char* mjcf_find_attr(const mjcfCtx* c, const mjcfElem* e, const char* name, const xmlNode** where) {
  const char* v = mjcf_attr_text(e->el, name);
  if (v) {
    *where = e->el;
    return v;
  }
  if (e->kind == K_NONE) return NULL;
  for (int k = e->cls; k >= 0; k = c->cls[k].parent) {
    const mjcfClass* d = c->cls + k;
    for (int i = d->nnode[e->kind] - 1; i >= 0; i--) {
      if ((v = mjcf_attr_text(d->node[e->kind][i], name))) {
        *where = d->node[e->kind][i];
        return v;
      }
    }
  }
  return NULL;
}

// number of whitespace-separated tokens in text
int mjcf_count_tokens(const char* text) {
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
physStatus mjcf_parse_numbers(mjcfCtx* c, const xmlNode* where, const char* attr, const char* text,
                              double* out, int max, int* n) {
  const char* p = text;
  *n = 0;
  for (;;) {
    while (*p && isspace((unsigned char)*p)) p++;
    if (!*p) return PHYS_OK;
    if (*n == max) {
      return mjcf_elem_error(c, where, PHYS_ERR_SIZE, "attribute '%s' has more than %d value%s", attr, max,
                             max == 1 ? "" : "s");
    }
    char* end;
    double v = strtod(p, &end);
    if (end == p || (*end && !isspace((unsigned char)*end))) {
      int len = 0;
      while (p[len] && !isspace((unsigned char)p[len]) && len < 40) len++;
      return mjcf_elem_error(c, where, PHYS_ERR_PARSE, "attribute '%s': '%.*s' is not a number", attr, len, p);
    }
    if (!isfinite(v)) {
      return mjcf_elem_error(c, where, PHYS_ERR_VALUE, "attribute '%s': value %.*s is not finite", attr,
                             (int)(end - p > 40 ? 40 : end - p), p);
    }
    out[(*n)++] = v;
    p = end;
  }
}

// exactly n numbers of attribute name (own or default), if present; *found = 0/1 (may be NULL)
physStatus mjcf_get_vec(mjcfCtx* c, const mjcfElem* e, const char* name, int n, double* out,
                        int* found) {
  const xmlNode* where = NULL;
  const char* text = mjcf_find_attr(c, e, name, &where);
  if (found) *found = 0;
  if (!text) return PHYS_OK;
  double tmp[16];
  int cnt;
  physStatus st = mjcf_parse_numbers(c, where, name, text, tmp, n, &cnt);
  if (st) return st;
  if (cnt != n) {
    return mjcf_elem_error(c, where, PHYS_ERR_SIZE, "attribute '%s' needs %d value%s, found %d", name, n,
                           n == 1 ? "" : "s", cnt);
  }
  memcpy(out, tmp, (size_t)n * sizeof(double));
  if (found) *found = 1;
  return PHYS_OK;
}

// one number
physStatus mjcf_get_real(mjcfCtx* c, const mjcfElem* e, const char* name, double* out, int* found) {
  return mjcf_get_vec(c, e, name, 1, out, found);
}

// one number that must be >= 0
physStatus mjcf_get_nonneg(mjcfCtx* c, const mjcfElem* e, const char* name, double* out) {
  int found;
  physStatus st = mjcf_get_real(c, e, name, out, &found);
  if (st || !found || *out >= 0) return st;
  return mjcf_elem_error(c, e->el, PHYS_ERR_VALUE, "%s must be >= 0, got %g", name, *out);
}

// MuJoCo's partial vectors (size, friction, gear, gainprm): each level of defaults and then the element
// overwrite their first values only; *nset = the most values any level gave
physStatus mjcf_get_partial(mjcfCtx* c, const mjcfElem* e, const char* name, int max, double* out,
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
      const char* text = mjcf_attr_text(el, name);
      if (!text) continue;
      physStatus st = mjcf_parse_numbers(c, el, name, text, tmp, max, &cnt);
      if (st) return st;
      memcpy(out, tmp, (size_t)cnt * sizeof(double));
      if (cnt > *nset) *nset = cnt;
    }
  }
  return PHYS_OK;
}

// an integer
physStatus mjcf_get_int(mjcfCtx* c, const mjcfElem* e, const char* name, int* out, int* found) {
  const xmlNode* where = NULL;
  const char* text = mjcf_find_attr(c, e, name, &where);
  if (found) *found = 0;
  if (!text) return PHYS_OK;
  char* end;
  errno = 0;
  long v = strtol(text, &end, 10);
  while (*end && isspace((unsigned char)*end)) end++;
  if (end == text || *end || errno || v < INT_MIN || v > INT_MAX) {
    return mjcf_elem_error(c, where, PHYS_ERR_PARSE, "attribute '%s': '%.40s' is not an integer", name, text);
  }
  *out = (int)v;
  if (found) *found = 1;
  return PHYS_OK;
}

// one of the NULL-terminated words (index into *out)
physStatus mjcf_get_keyword(mjcfCtx* c, const mjcfElem* e, const char* name, const char* const* words,
                            int* out, int* found) {
  const xmlNode* where = NULL;
  const char* text = mjcf_find_attr(c, e, name, &where);
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
  return mjcf_elem_error(c, where, PHYS_ERR_VALUE, "attribute '%s' is '%.40s'; expected one of: %s", name, text,
                         list);
}

const char* const MJCF_BOOL_WORDS[] = {"false", "true", NULL};
const char* const MJCF_LIMITED_WORDS[] = {"false", "true", "auto", NULL};

// copy a name attribute into a spec name field, checking its length
physStatus mjcf_get_name(mjcfCtx* c, xmlNode* el, const char* attr, char out[PHYS_NAMELEN]) {
  const char* text = mjcf_attr_text(el, attr);
  if (!text) return PHYS_OK;
  if (strlen(text) >= PHYS_NAMELEN) {
    return mjcf_elem_error(c, el, PHYS_ERR_VALUE, "attribute '%s' is longer than %d characters", attr,
                           PHYS_NAMELEN - 1);
  }
  strcpy(out, text);
  return PHYS_OK;
}

// MuJoCo 2.2.2's limit rule: limited="true"/"false", or "auto" (the default): with compiler autolimits
// a nonzero range means limited; without it a nonzero range is an error (MuJoCo refuses such models).
// With limited, range[0] < range[1] is required.
physStatus mjcf_get_limited(mjcfCtx* c, const mjcfElem* e, const char* lname, const char* rname,
                            double range[2], int* limited) {
  int mode = 2, found;
  physStatus st = mjcf_get_keyword(c, e, lname, MJCF_LIMITED_WORDS, &mode, NULL);
  if (!st) st = mjcf_get_vec(c, e, rname, 2, range, &found);
  if (st) return st;
  int rangeset = range[0] != 0 || range[1] != 0;
  if (mode == 2) {
    if (rangeset && !c->autolimits) {
      return mjcf_elem_error(c, e->el, PHYS_ERR_MODEL,
                             "'%s' given without '%s': set %s=\"true\" or \"false\", or <compiler "
                             "autolimits=\"true\"> (MuJoCo 2.2.2 refuses this too)",
                             rname, lname, lname);
    }
    mode = rangeset;
  }
  *limited = mode;
  if (mode && !(range[0] < range[1])) {
    return mjcf_elem_error(c, e->el, PHYS_ERR_VALUE, "%s [%g, %g]: the lower limit must be below the upper",
                           rname, range[0], range[1]);
  }
  return PHYS_OK;
}

// the default class of an element: its class attribute, else the inherited childclass
physStatus mjcf_elem_class(mjcfCtx* c, xmlNode* el, const char* attr, int inherited, int* cls) {
  const char* name = mjcf_attr_text(el, attr);
  *cls = inherited;
  if (!name) return PHYS_OK;
  for (int k = 0; k < c->ncls; k++) {
    if (!strcmp(c->cls[k].name, name)) {
      *cls = k;
      return PHYS_OK;
    }
  }
  return mjcf_elem_error(c, el, PHYS_ERR_MODEL, "unknown default class '%.64s'", name);
}

// 1 if the element has any of the attributes (NULL-terminated list) itself
int mjcf_has_any_attr(const xmlNode* el, const char* const* names) {
  for (int i = 0; names[i]; i++) {
    if (mjcf_attr_text(el, names[i])) return 1;
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
  double deg = c->degree ? MJCF_DEG2RAD : 1;
  *n = 0;
  if ((st = mjcf_get_vec(c, &e, "quat", 4, v, &found))) return st;
  if (found) {
    if (phys_norm3(v + 1) == 0 && v[0] == 0) {
      return mjcf_elem_error(c, node, PHYS_ERR_VALUE, "quat is zero");
    }
    memcpy(q, v, sizeof(double) * 4);
    phys_quat_normalize(q);
    (*n)++;
  }
  if ((st = mjcf_get_vec(c, &e, "axisangle", 4, v, &found))) return st;
  if (found) {
    if (phys_norm3(v) < MJCF_EPS) return mjcf_elem_error(c, node, PHYS_ERR_VALUE, "axisangle axis is zero");
    phys_axisangle2quat(q, v, v[3] * deg);
    (*n)++;
  }
  if ((st = mjcf_get_vec(c, &e, "euler", 3, v, &found))) return st;
  if (found) {
    double a[3] = {v[0] * deg, v[1] * deg, v[2] * deg};
    if (!phys_euler2quat(q, a, c->eulerseq)) {
      return mjcf_elem_error(c, node, PHYS_ERR_VALUE, "invalid eulerseq '%s'", c->eulerseq);
    }
    (*n)++;
  }
  if ((st = mjcf_get_vec(c, &e, "xyaxes", 6, v, &found))) return st;
  if (found) {
    if (!phys_xyaxes2quat(q, v)) {
      return mjcf_elem_error(c, node, PHYS_ERR_VALUE, "xyaxes are zero or parallel");
    }
    (*n)++;
  }
  if ((st = mjcf_get_vec(c, &e, "zaxis", 3, v, &found))) return st;
  if (found) {
    if (phys_norm3(v) < MJCF_EPS) return mjcf_elem_error(c, node, PHYS_ERR_VALUE, "zaxis is zero");
    phys_quat_zaxis(q, v);
    (*n)++;
  }
  if (*n > 1) {
    return mjcf_elem_error(c, node, PHYS_ERR_MODEL,
                           "more than one orientation given (quat, axisangle, euler, xyaxes, zaxis: use one)");
  }
  return PHYS_OK;
}

// orientation of e: from the element, else from its nearest default that gives one (MuJoCo: an
// element's own specifier replaces the default's); identity if none. *given = 1 if any was found.
physStatus mjcf_get_orient(mjcfCtx* c, const mjcfElem* e, double q[4], int* given) {
  int n;
  phys_quat_identity(q);
  physStatus st = orient_of_node(c, e->el, q, &n);
  if (given) *given = n;
  if (st || n || e->kind == K_NONE) return st;
  for (int k = e->cls; k >= 0; k = c->cls[k].parent) {
    const mjcfClass* d = c->cls + k;
    for (int i = d->nnode[e->kind] - 1; i >= 0; i--) {
      if (!mjcf_has_any_attr(d->node[e->kind][i], ORIENT_WORDS)) continue;
      st = orient_of_node(c, d->node[e->kind][i], q, &n);
      if (given) *given = n;
      return st;
    }
  }
  return PHYS_OK;
}
