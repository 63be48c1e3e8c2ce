// load.c - phys_load: pick the model reader from the file extension, or from the root element.
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "mjcf.h"
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

// parse an MJCF file with the options (strict_mesh) and compile it; the URDF-only options are warned about
static physModel* load_mjcf(const char* filename, const physLoadOptions* opt, physLog* log) {
  if (opt && opt->urdf_floating) {
    phys_warning(log, "%s: --floating (urdf_floating) applies to URDF only: ignored for this MJCF model (give "
                 "the root body a <freejoint/>)", filename);
  }
  if (opt && opt->urdf_self_collision) {
    phys_warning(log, "%s: urdf_self_collision applies to URDF only: ignored for this MJCF model", filename);
  }
  physSpec* s = phys_parse_mjcf_opt(filename, opt, log);
  if (!s) return NULL;
  physModel* m = phys_compile(s, log);
  phys_spec_free(s);
  return m;
}

// load a model: .urdf -> URDF; .xml, .mjcf, .xml.gz -> MJCF; otherwise by the root element
// (<robot> URDF, <mujoco> MJCF)
physModel* phys_load(const char* filename, const physLoadOptions* opt, physLog* log) {
  if (!filename) return phys_error(log, PHYS_ERR_ARG, "phys_load: NULL filename"), NULL;
  if (has_ext(filename, ".urdf")) return phys_load_urdf(filename, opt, log);
  if (has_ext(filename, ".xml") || has_ext(filename, ".mjcf") || has_ext(filename, ".xml.gz")) {
    return load_mjcf(filename, opt, log);
  }
  char root[128];
  if (!sniff_root(filename, root, sizeof(root), log)) return NULL;
  if (!strcmp(root, "robot")) return phys_load_urdf(filename, opt, log);
  if (!strcmp(root, "mujoco")) return load_mjcf(filename, opt, log);
  return phys_error(log, PHYS_ERR_PARSE,
                    "%s: unknown model format: root element <%s> (expected <robot> for URDF or <mujoco> for "
                    "MJCF)", filename, root), NULL;
}
