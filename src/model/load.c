// load.c - phys_load: pick the model reader from the file extension, or from the root element.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mjcf.h"
#include "urdf.h"
#include "physid.h"
#include "spec.h"
#include "xmlread.h"

// 1 if s ends with suffix, ignoring case
static int has_ext(const char* s, const char* suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && strcasecmp(s + n - m, suffix) == 0;
}

// name of the document's root element into root (n bytes), read by phys_xml_read; its error goes to log,
// its warnings do not (the reader that then parses the file raises them)
static int sniff_root(const char* filename, char* root, size_t n, physLog* log) {
  physLog tmp = {0};
  xmlDoc* doc = phys_xml_read(filename, filename, &tmp);
  if (!doc) {
    if (tmp.status == PHYS_ERR_PARSE) return phys_error(log, tmp.status, "%s (not an XML model file)", tmp.error), 0;
    return phys_error(log, tmp.status, "%s", tmp.error), 0;
  }
  snprintf(root, n, "%s", (const char*)xmlDocGetRootElement(doc)->name);
  xmlFreeDoc(doc);
  return 1;
}

// parse an MJCF file with the options (strict_mesh); the URDF-only options are warned about when warn is set
static physSpec* parse_mjcf(const char* filename, const physLoadOptions* opt, int warn, physLog* log) {
  if (warn && opt && opt->urdf_floating) {
    phys_warning(log, "%s: --floating (urdf_floating) applies to URDF only: ignored for this MJCF model (give "
                 "the root body a <freejoint/>)", filename);
  }
  if (warn && opt && opt->urdf_self_collision) {
    phys_warning(log, "%s: urdf_self_collision applies to URDF only: ignored for this MJCF model", filename);
  }
  if (warn && opt && opt->urdf_actuate) {
    phys_warning(log, "%s: --actuate (urdf_actuate) applies to URDF only: ignored for this MJCF model (its "
                 "<actuator> section is used)", filename);
  }
  return phys_parse_mjcf_opt(filename, opt, log);
}

// parse one model file into a spec: .urdf -> URDF; .xml, .mjcf, .xml.gz -> MJCF; otherwise by the root element
// (<robot> URDF, <mujoco> MJCF); warn: warn about URDF-only options given for an MJCF file
static physSpec* parse_file(const char* filename, const physLoadOptions* opt, int warn, physLog* log) {
  if (!filename) return phys_error(log, PHYS_ERR_ARG, "phys_load: NULL filename"), NULL;
  if (has_ext(filename, ".urdf")) return phys_parse_urdf(filename, opt, log);
  if (has_ext(filename, ".xml") || has_ext(filename, ".mjcf") || has_ext(filename, ".xml.gz")) {
    return parse_mjcf(filename, opt, warn, log);
  }
  char root[128];
  if (!sniff_root(filename, root, sizeof(root), log)) return NULL;
  if (!strcmp(root, "robot")) return phys_parse_urdf(filename, opt, log);
  if (!strcmp(root, "mujoco")) return parse_mjcf(filename, opt, warn, log);
  return phys_error(log, PHYS_ERR_PARSE,
                    "%s: unknown model format: root element <%s> (expected <robot> for URDF or <mujoco> for "
                    "MJCF)", filename, root), NULL;
}

//---------------------------------------------------------------------------------------------------------
// composing several files into one world

// warn when the added spec a sets another value of an option than the world w (which keeps its own);
// the self-collision bit is not an option of the file but URDF's convention (see trees_apart)
static void compare_options(const physSpec* w, const physSpec* a, physLog* log) {
  const physOption *x = &w->opt, *y = &a->opt;
  char what[256] = "";
  size_t n = 0;
#define DIFF(cond, name) \
  if ((cond) && n < sizeof(what) - 32) n += (size_t)snprintf(what + n, sizeof(what) - n, "%s%s", n ? ", " : "", name)
  DIFF(x->timestep != y->timestep, "timestep");
  DIFF(x->gravity[0] != y->gravity[0] || x->gravity[1] != y->gravity[1] || x->gravity[2] != y->gravity[2], "gravity");
  DIFF(x->integrator != y->integrator, "integrator");
  DIFF((x->disableflags & ~PHYS_DSBL_SELFCOLLISION) != (y->disableflags & ~PHYS_DSBL_SELFCOLLISION), "flags");
  DIFF(x->enableflags != y->enableflags, "enable flags");
  DIFF(x->contact != y->contact, "contact model");
  DIFF(x->baumgarte != y->baumgarte, "physid:baumgarte");
  DIFF(x->penalty_stiffness != y->penalty_stiffness || x->penalty_damping != y->penalty_damping ||
       x->penalty_vslip != y->penalty_vslip, "physid:penalty");
  DIFF(x->solver_iterations != y->solver_iterations || x->solver_tolerance != y->solver_tolerance, "physid:solver");
  DIFF(x->gradflags != y->gradflags, "physid:grad");
  DIFF(w->settotalmass != a->settotalmass || w->boundmass != a->boundmass || w->boundinertia != a->boundinertia,
       "compiler settotalmass/boundmass/boundinertia");
#undef DIFF
  if (n) {
    phys_warning_kind(log, "added file options", "%s: options differ from %s (%s): the world keeps those of %s, "
                      "the first model file", a->filename, w->filename, what, w->filename);
  }
}

// URDF's convention (links of one robot do not collide with each other unless urdf_self_collision) as
// <exclude> pairs, so that it stays with that file's trees in a world of several files: every pair of bodies
// of one tree (one child of the world and what hangs from it) that both carry geoms and are not parent and
// child (those never collide). Bodies from index `from` on. 0 on allocation failure
static int trees_apart(physSpec* s, int from, physLog* log) {
  int* root = malloc((size_t)s->nbody * sizeof(int));
  char* hasgeom = calloc((size_t)s->nbody, 1);
  int ok = root && hasgeom;
  for (int b = 0; ok && b < s->nbody; b++) root[b] = b == 0 || s->body[b].parent == 0 ? b : root[s->body[b].parent];
  for (int g = 0; ok && g < s->ngeom; g++) hasgeom[s->geom[g].body] = 1;
  for (int b1 = from; ok && b1 < s->nbody; b1++) {
    for (int b2 = b1 + 1; ok && b2 < s->nbody; b2++) {
      if (root[b1] != root[b2] || !hasgeom[b1] || !hasgeom[b2] || s->body[b2].parent == b1) continue;
      int e = phys_spec_add_exclude(s);
      if (e < 0) ok = 0;
      else {
        snprintf(s->exclude[e].body1, sizeof(s->exclude[e].body1), "%s", s->body[b1].name);
        snprintf(s->exclude[e].body2, sizeof(s->exclude[e].body2), "%s", s->body[b2].name);
        s->exclude[e].line = s->body[b2].line;
        s->exclude[e].fileid = s->body[b2].fileid;
      }
    }
  }
  free(root);
  free(hasgeom);
  if (!ok) phys_error(log, PHYS_ERR_NOMEM, "%s: out of memory", s->filename);
  return ok;
}

// qpos0 of joint j of spec s (MuJoCo's rule: a free joint its body's pos and quat, a ball the identity, a
// hinge or slide its ref) into q; returns the number of values
static int joint_qpos0(const physSpec* s, const physSpecJoint* j, double* q) {
  const physSpecBody* b = s->body + j->body;
  switch (j->type) {
    case PHYS_JNT_FREE:
      memcpy(q, b->pos, 3 * sizeof(double));
      memcpy(q + 3, b->quat, 4 * sizeof(double));
      return 7;
    case PHYS_JNT_BALL: q[0] = 1, q[1] = q[2] = q[3] = 0; return 4;
    default: q[0] = j->ref; return 1;
  }
}

// append the added spec a's share to every keyframe of the world w: a's qpos0 to qpos, zeros to qvel, ctrl and act
// (a's own keyframes describe a alone and are not used: a warning says so)
static int extend_keys(physSpec* w, const physSpec* a, physLog* log) {
  if (a->nkey > 0) {
    phys_warning_kind(log, "added file keyframes", "%s: its %d keyframe%s not used (the world's keyframes come from "
                      "%s, extended with this file's qpos0)", a->filename, a->nkey, a->nkey > 1 ? "s are" : " is",
                      w->filename);
  }
  int nq = 0, nv = 0;
  double* q0 = malloc((size_t)(7 * a->njoint + 1) * sizeof(double));
  if (!q0) return phys_error(log, PHYS_ERR_NOMEM, "%s: out of memory", a->filename), 0;
  for (int k = 0; k < a->njoint; k++) {
    int n = joint_qpos0(a, a->joint + k, q0 + nq);
    nq += n;
    nv += n == 7 ? 6 : n == 4 ? 3 : 1;
  }
  int ok = 1;
  for (int k = 0; ok && k < w->nkey; k++) {
    physSpecKey* key = w->key + k;
    if (key->qpos && nq) {
      double* p = realloc(key->qpos, (size_t)(key->nqpos + nq) * sizeof(double));
      if ((ok = p != NULL)) memcpy(p + key->nqpos, q0, (size_t)nq * sizeof(double)), key->qpos = p, key->nqpos += nq;
    }
    if (ok && key->qvel && nv) {
      double* p = realloc(key->qvel, (size_t)(key->nqvel + nv) * sizeof(double));
      if ((ok = p != NULL)) memset(p + key->nqvel, 0, (size_t)nv * sizeof(double)), key->qvel = p, key->nqvel += nv;
    }
    int nact = 0;   // a's activations, after the world's
    for (int i = 0; i < a->nactuator; i++) nact += a->actuator[i].dyntype != PHYS_DYN_NONE;
    if (ok && key->act && nact) {
      double* p = realloc(key->act, (size_t)(key->nact + nact) * sizeof(double));
      if ((ok = p != NULL)) memset(p + key->nact, 0, (size_t)nact * sizeof(double)), key->act = p, key->nact += nact;
    }
    if (ok && key->ctrl && a->nactuator) {
      double* p = realloc(key->ctrl, (size_t)(key->nctrl + a->nactuator) * sizeof(double));
      if ((ok = p != NULL)) {
        memset(p + key->nctrl, 0, (size_t)a->nactuator * sizeof(double));
        key->ctrl = p, key->nctrl += a->nactuator;
      }
    }
  }
  free(q0);
  if (!ok) phys_error(log, PHYS_ERR_NOMEM, "%s: out of memory", a->filename);
  return ok;
}

// a URDF's mesh names are made from file names: one that another file already uses gets the suffix _N
static void rename_urdf_meshes(const physSpec* w, physSpec* a) {
  if (!a->urdf) return;
  for (int i = 0; i < a->nmesh; i++) {
    for (int k = 0; k < w->nmesh; k++) {
      if (strcmp(a->mesh[i].name, w->mesh[k].name)) continue;
      char name[PHYS_NAMELEN];
      snprintf(name, sizeof(name), "%.100s_%d", a->mesh[i].name, w->nmesh + i);
      memcpy(a->mesh[i].name, name, sizeof(name));
      k = -1;   // check the new name from the start
    }
  }
}

// geoms grouped by body in body order, each body's in their order (MuJoCo's numbering; a body's geoms must be
// consecutive): an added file's world-body geoms come after the first file's bodies otherwise. 0 out of memory
static int group_geoms(physSpec* s, physLog* log) {
  physSpecGeom* sorted = malloc((size_t)(s->ngeom ? s->ngeom : 1) * sizeof(physSpecGeom));
  int* start = calloc((size_t)s->nbody + 1, sizeof(int));   // counting sort: first slot of each body
  int ok = sorted && start;
  for (int g = 0; ok && g < s->ngeom; g++) start[s->geom[g].body + 1]++;
  for (int b = 0; ok && b < s->nbody; b++) start[b + 1] += start[b];
  for (int g = 0; ok && g < s->ngeom; g++) sorted[start[s->geom[g].body]++] = s->geom[g];
  if (ok) memcpy(s->geom, sorted, (size_t)s->ngeom * sizeof(physSpecGeom));
  free(sorted);
  free(start);
  if (!ok) phys_error(log, PHYS_ERR_NOMEM, "%s: out of memory", s->filename);
  return ok;
}

// the rules of a file that a world of several files cannot hold spec-wide, kept on its bodies from index
// `from`: the compiler inertiafromgeom (MJCF auto, URDF false) and URDF's mass rule (urdf); the spec then
// follows MJCF's (its messages say "body")
static void keep_file_rules(physSpec* s, int from) {
  for (int b = from; b < s->nbody; b++) {
    s->body[b].inertiafromgeom = 1 + s->inertiafromgeom;
    s->body[b].urdf |= s->urdf;
  }
  s->urdf = 0;
}

// the world of MODEL and opt->add[0..nadd): MODEL's spec with every added file's bodies hung from its world
// body (phys_spec_attach), MODEL's options (a warning for an added file that sets others), MODEL's
// keyframes extended by the added files' qpos0; urdf_floating applies to MODEL only, the other options to
// every file. Each URDF file's no-self-collision convention becomes <exclude> pairs of its own trees.
physSpec* phys_parse_world(const char* filename, const physLoadOptions* opt, physLog* log) {
  physSpec* w = parse_file(filename, opt, 1, log);
  if (!w || !opt || opt->nadd <= 0 || !opt->add) return w;
  physLoadOptions sub = *opt;
  sub.urdf_floating = 0;
  sub.add = NULL;
  sub.nadd = 0;
  int ok = 1;
  keep_file_rules(w, 1);
  if (w->opt.disableflags & PHYS_DSBL_SELFCOLLISION) {
    ok = trees_apart(w, 1, log);
    w->opt.disableflags &= ~PHYS_DSBL_SELFCOLLISION;
  }
  for (int i = 0; ok && i < opt->nadd; i++) {
    physSpec* a = parse_file(opt->add[i], &sub, 0, log);
    if (!a) ok = 0;
    if (ok && (a->opt.disableflags & PHYS_DSBL_SELFCOLLISION)) ok = trees_apart(a, 1, log);
    if (ok) {
      if (!a->urdf) compare_options(w, a, log);   // a URDF file sets no options
      rename_urdf_meshes(w, a);
      ok = extend_keys(w, a, log);
      keep_file_rules(a, 1);
    }
    if (ok && phys_spec_attach(w, a, 0) != PHYS_OK) ok = 0, phys_error(log, PHYS_ERR_NOMEM, "%s: out of memory", a->filename);
    phys_spec_free(a);
  }
  if (ok) ok = group_geoms(w, log);
  if (!ok) {
    phys_spec_free(w);
    return NULL;
  }
  return w;
}

// load a model: the file (format by extension or root element) and, with opt->add, the files composed with it
physModel* phys_load(const char* filename, const physLoadOptions* opt, physLog* log) {
  physSpec* s = phys_parse_world(filename, opt, log);
  if (!s) return NULL;
  if (opt && opt->nvertex_geoms > 0 && phys_spec_learn_vertices(s, opt->vertex_geoms, opt->nvertex_geoms, log)) {
    phys_spec_free(s);
    return NULL;
  }
  physModel* m = phys_compile(s, log);
  phys_spec_free(s);
  return m;
}
