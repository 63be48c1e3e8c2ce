// xmlread.c - XML model files into a libxml2 DOM, size-capped, with every libxml2 message in a physLog.
#include "xmlread.h"

#include <errno.h>
#include <libxml/parser.h>
#include <libxml/xmlerror.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

// one parse: the input stream and the messages seen so far
typedef struct xmlRead_ {
  gzFile f;
  long nread;
  int toolarge;
  const char* shown;          // file name for messages
  physLog* log;
  char error[PHYS_MSGLEN];    // first error, "file:line: ..."
} xmlRead;

// libxml2 read callback: gunzip (or copy) up to len bytes; -1 past PHYS_XML_MAXBYTES
static int read_cb(void* ctx, char* buf, int len) {
  xmlRead* in = ctx;
  int n = gzread(in->f, buf, (unsigned)len);
  if (n < 0) return -1;
  in->nread += n;
  if (in->nread > PHYS_XML_MAXBYTES) {
    in->toolarge = 1;
    return -1;
  }
  return n;
}

// libxml2 close callback
static int close_cb(void* ctx) {
  xmlRead* in = ctx;
  gzclose(in->f);
  in->f = NULL;
  return 0;
}

// record one libxml2 message: the first error is kept for the log's error, warnings go to the log now
static void record(xmlRead* in, const xmlError* e) {
  if (!e || e->level == XML_ERR_NONE) return;
  char msg[512];
  snprintf(msg, sizeof(msg), "%s", e->message ? e->message : "unknown error");
  size_t n = strlen(msg);
  while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == ' ')) msg[--n] = 0;
  if (e->level == XML_ERR_WARNING) {
    phys_warning(in->log, "%s:%d: XML warning: %s", in->shown, e->line, msg);
  } else if (!in->error[0]) {
    snprintf(in->error, sizeof(in->error), "%s:%d: malformed XML: %s", in->shown, e->line, msg);
  }
}

// handler on the parser context (user data: the context, whose _private is the parse)
static void context_error(void* ud, xmlErrorPtr e) {
  xmlParserCtxtPtr p = ud;
  record(p->_private, e);
}

// handler for this thread while the parse runs (messages raised without a context: I/O)
static void thread_error(void* ud, xmlErrorPtr e) { record(ud, e); }

// SAX hook: refuse <!DOCTYPE> (DTDs can declare entities)
static void refuse_doctype(void* ctx, const xmlChar* name, const xmlChar* extid, const xmlChar* sysid) {
  (void)name;
  (void)extid;
  (void)sysid;
  xmlParserCtxtPtr p = ctx;
  xmlRead* in = p->_private;
  if (!in->error[0]) {
    snprintf(in->error, sizeof(in->error), "%s:%d: <!DOCTYPE> declarations are not allowed in a model file",
             in->shown, p->input ? p->input->line : 0);
  }
  xmlStopParser(p);
}

// stat, open, parse with the handlers installed, restore the thread's handler, report
xmlDoc* phys_xml_read(const char* path, const char* shown, physLog* log) {
  struct stat st;
  if (stat(path, &st) != 0) {
    phys_error(log, PHYS_ERR_IO, "%s: cannot open file: %s", shown, strerror(errno));
    return NULL;
  }
  if (!S_ISREG(st.st_mode)) {
    phys_error(log, PHYS_ERR_IO, "%s: not a regular file", shown);
    return NULL;
  }
  xmlRead in = {.f = gzopen(path, "rb"), .shown = shown, .log = log};
  if (!in.f) {
    phys_error(log, PHYS_ERR_IO, "%s: cannot open file: %s", shown, strerror(errno));
    return NULL;
  }
  xmlInitParser();
  xmlParserCtxtPtr p = xmlNewParserCtxt();
  if (!p) {
    gzclose(in.f);
    phys_error(log, PHYS_ERR_NOMEM, "%s: out of memory creating the XML parser", shown);
    return NULL;
  }
  p->_private = &in;
  p->sax->internalSubset = refuse_doctype;
  p->sax->serror = context_error;

  xmlStructuredErrorFunc oldfunc = xmlStructuredError;
  void* oldctx = xmlStructuredErrorContext;
  xmlSetStructuredErrorFunc(&in, thread_error);
  int options = XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING | XML_PARSE_NODICT |
                XML_PARSE_BIG_LINES;   // no NOENT, no DTDLOAD: entities are never expanded or fetched
  xmlDoc* doc = xmlCtxtReadIO(p, read_cb, close_cb, &in, shown, NULL, options);
  xmlSetStructuredErrorFunc(oldctx, oldfunc);
  xmlFreeParserCtxt(p);

  if (in.toolarge) {
    phys_error(log, PHYS_ERR_SIZE, "%s: file larger than %ld bytes (after decompression)", shown,
               (long)PHYS_XML_MAXBYTES);
  } else if (in.error[0]) {
    phys_error(log, PHYS_ERR_PARSE, "%s", in.error);
  } else if (!doc || !xmlDocGetRootElement(doc)) {
    phys_error(log, PHYS_ERR_PARSE, "%s: malformed XML (no root element)", shown);
  } else {
    return doc;
  }
  if (doc) xmlFreeDoc(doc);
  return NULL;
}
