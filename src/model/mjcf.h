// mjcf.h - MJCF (MuJoCo XML) reader: file -> physSpec, following MuJoCo 2.2.2's semantics.
//
// Reads .xml and .xml.gz with libxml2 (network access, DTDs and entity declarations refused; at most
// PHYS_MJCF_MAXBYTES of uncompressed XML). Resolves default classes, childclass, angle units,
// orientation alternatives (quat, axisangle, euler + eulerseq, xyaxes, zaxis, fromto) and <include>
// (resolved in the model's folder, never outside it). Every error names file:line: <element name='..'>.
// Supported: see the table in mjcf.c; unknown elements give a warning, unknown attributes are ignored.
#ifndef PHYS_MJCF_H
#define PHYS_MJCF_H

#include "physid.h"
#include "spec.h"
#include "xmlread.h"

#define PHYS_MJCF_MAXBYTES PHYS_XML_MAXBYTES   // refuse XML files (after gunzip) larger than 256 MB
#define PHYS_MJCF_MAXINCLUDE 64           // at most this many <include> expansions per model
#define PHYS_MJCF_MAXDEPTH 256            // body nesting depth limit

// parse an MJCF file into a new spec (NULL on error: log->error names file, line and element).
// opt may be NULL; opt->strict_mesh makes a missing mesh file an error (default: warning, its geoms
// are dropped).
physSpec* phys_parse_mjcf_opt(const char* filename, const physLoadOptions* opt, physLog* log);

// phys_parse_mjcf_opt with default options
physSpec* phys_parse_mjcf(const char* filename, physLog* log);

#endif  // PHYS_MJCF_H
