// load.c - phys_load: pick the model reader from the file extension, or from the root element.
#include <libxml/xmlreader.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "mjcf.h"
#include "physid.h"
#include "spec.h"

// 1 if s ends with suffix, ignoring case
static int has_ext(const char* s, const char* suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && strcasecmp(s + n - m, suffix) == 0;
}

// name of the document's root element into root (n bytes), read as a stream up to that element only;
// network access and entity expansion stay off. Returns 0 if the file has no readable root element.
static int sniff_root(const char* filename, char* root, size_t n) {
  xmlInitParser();
  xmlTextReader* r = xmlReaderForFile(filename, NULL, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
  if (!r) return 0;
  int found = 0;
  while (!found && xmlTextReaderRead(r) == 1) {
    if (xmlTextReaderNodeType(r) == XML_READER_TYPE_ELEMENT) {
      const xmlChar* name = xmlTextReaderConstLocalName(r);
      snprintf(root, n, "%s", name ? (const char*)name : "");
      found = 1;
    }
  }
  xmlFreeTextReader(r);
  return found;
}

// parse an MJCF file with the options (strict_mesh) and compile it
static physModel* load_mjcf(const char* filename, const physLoadOptions* opt, physLog* log) {
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
  FILE* fp = fopen(filename, "rb");
  if (!fp) return phys_error(log, PHYS_ERR_IO, "%s: cannot open file", filename), NULL;
  fclose(fp);
  char root[128];
  if (!sniff_root(filename, root, sizeof(root))) {
    return phys_error(log, PHYS_ERR_PARSE, "%s: not an XML model file (no root element)", filename), NULL;
  }
  if (!strcmp(root, "robot")) return phys_load_urdf(filename, opt, log);
  if (!strcmp(root, "mujoco")) return load_mjcf(filename, opt, log);
  return phys_error(log, PHYS_ERR_PARSE,
                    "%s: unknown model format: root element <%s> (expected <robot> for URDF or <mujoco> for "
                    "MJCF)", filename, root), NULL;
}
