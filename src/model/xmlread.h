// xmlread.h - the one way physid reads an XML model file (MJCF, its includes, URDF) with libxml2.
//
// Plain or gzip files through zlib, at most PHYS_XML_MAXBYTES after decompression; regular files only;
// network access, DTD loading and entity expansion off and <!DOCTYPE> refused (models never need one;
// it could declare entities). libxml2 prints nothing: its errors and warnings go to the caller's physLog
// with file:line (the first error as the error, warnings as warnings), through a handler installed on
// the parser context and, for messages raised without one (I/O), on the calling thread only.
#ifndef PHYS_XMLREAD_H
#define PHYS_XMLREAD_H

#include <libxml/tree.h>

#include "physid.h"

#define PHYS_XML_MAXBYTES (256L << 20)   // refuse XML files (after gunzip) larger than 256 MB

// parse path into a DOM; shown is the file name used in messages. NULL on error (recorded in log:
// PHYS_ERR_IO missing or not a regular file, PHYS_ERR_SIZE too large, PHYS_ERR_PARSE malformed or DOCTYPE,
// PHYS_ERR_NOMEM). The caller frees the document with xmlFreeDoc.
xmlDoc* phys_xml_read(const char* path, const char* shown, physLog* log);

#endif  // PHYS_XMLREAD_H
