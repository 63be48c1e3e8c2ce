// mlp_io.c - the JSON network files of mlp_io.h (cJSON), checked element by element.
#include "mlp_io.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "model.h"

int phys_mlp_write_json(FILE* f, const physMlp* n, const char* role) {
  fprintf(f, "{\n  \"format\": \"physid-mlp\",\n  \"version\": 1,\n  \"role\": \"%s\",\n", role);
  fprintf(f, "  \"input\": \"state-rotmat\",\n  \"activation\": \"%s\",\n  \"sizes\": [", phys_mlp_act_name(n->act));
  for (int l = 0; l <= n->nlayer; l++) fprintf(f, "%s%d", l ? ", " : "", n->size[l]);
  fprintf(f, "],\n  \"layers\": [\n");
  for (int l = 0; l < n->nlayer; l++) {
    int r = n->size[l + 1], c = n->size[l];
    const double* W = n->w + phys_mlp_woff(n, l);
    const double* b = n->w + phys_mlp_boff(n, l);
    fprintf(f, "    {\"W\": [\n");
    for (int i = 0; i < r; i++) {
      fprintf(f, "      [");
      for (int j = 0; j < c; j++) fprintf(f, "%s%.17g", j ? ", " : "", W[(size_t)i * c + j]);
      fprintf(f, "]%s\n", i + 1 < r ? "," : "");
    }
    fprintf(f, "    ], \"b\": [");
    for (int i = 0; i < r; i++) fprintf(f, "%s%.17g", i ? ", " : "", b[i]);
    fprintf(f, "]}%s\n", l + 1 < n->nlayer ? "," : "");
  }
  fprintf(f, "  ]\n}\n");
  return !ferror(f);
}

// the regular file at path as a NUL-terminated string (caller frees); NULL and a message in log otherwise
static char* file_text(const char* path, physLog* log) {
  FILE* f = fopen(path, "rb");
  struct stat st;
  if (!f || fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
    phys_error(log, PHYS_ERR_IO, "%s: %s", path, f ? "not a regular file" : strerror(errno));
    if (f) fclose(f);
    return NULL;
  }
  if (st.st_size > PHYS_MLP_FILE_MAXBYTES) {
    fclose(f);
    phys_error(log, PHYS_ERR_NOMEM, "%s: %lld bytes, more than a network file may have (%ld)", path,
               (long long)st.st_size, PHYS_MLP_FILE_MAXBYTES);
    return NULL;
  }
  char* s = malloc((size_t)st.st_size + 1);
  size_t got = s ? fread(s, 1, (size_t)st.st_size, f) : 0;
  int bad = !s || ferror(f) || got != (size_t)st.st_size;
  fclose(f);
  if (bad) {
    phys_error(log, s ? PHYS_ERR_IO : PHYS_ERR_NOMEM, "%s: %s", path, s ? "read error" : "out of memory");
    free(s);
    return NULL;
  }
  s[got] = 0;
  return s;
}

// the string member key of o equal to want (want NULL: any known activation); 0 and a message otherwise
static int check_string(const cJSON* o, const char* key, const char* want, const char* path, physLog* log) {
  const cJSON* v = cJSON_GetObjectItemCaseSensitive(o, key);
  if (!cJSON_IsString(v)) {
    phys_error(log, PHYS_ERR_PARSE, "%s: \"%s\": missing or not a string", path, key);
    return 0;
  }
  if (want && strcmp(v->valuestring, want) != 0) {
    phys_error(log, PHYS_ERR_VALUE, "%s: \"%s\" is \"%.40s\", expected \"%s\"", path, key, v->valuestring, want);
    return 0;
  }
  return 1;
}

// n values of the JSON array a into x; 0 and a message naming the element otherwise
static int read_row(const cJSON* a, int n, double* x, const char* path, const char* what, physLog* log) {
  if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != n) {
    phys_error(log, PHYS_ERR_SIZE, "%s: %s: expected an array of %d numbers", path, what, n);
    return 0;
  }
  int i = 0;
  for (const cJSON* v = a->child; v; v = v->next, i++) {
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble)) {
      phys_error(log, PHYS_ERR_VALUE, "%s: %s[%d]: not a finite number", path, what, i);
      return 0;
    }
    x[i] = v->valuedouble;
  }
  return 1;
}

// the network of a parsed file (its header already checked); NULL and a message otherwise
static physMlp* read_net(const cJSON* root, const char* path, physLog* log) {
  const cJSON* act = cJSON_GetObjectItemCaseSensitive(root, "activation");
  const cJSON* sizes = cJSON_GetObjectItemCaseSensitive(root, "sizes");
  const cJSON* layers = cJSON_GetObjectItemCaseSensitive(root, "layers");
  int a = cJSON_IsString(act) ? phys_mlp_act_parse(act->valuestring) : -1;
  if (a < 0) {
    phys_error(log, PHYS_ERR_VALUE, "%s: \"activation\": expected \"relu\" or \"tanh\"", path);
    return NULL;
  }
  int ns = cJSON_IsArray(sizes) ? cJSON_GetArraySize(sizes) : 0;
  if (ns < 2 || ns > PHYS_MLP_MAXLAYER + 1) {
    phys_error(log, PHYS_ERR_SIZE, "%s: \"sizes\": expected an array of 2 to %d widths", path, PHYS_MLP_MAXLAYER + 1);
    return NULL;
  }
  int size[PHYS_MLP_MAXLAYER + 1], k = 0;
  for (const cJSON* v = sizes->child; v; v = v->next, k++) {
    if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) || v->valuedouble < 1 ||
        v->valuedouble > PHYS_MLP_MAXWIDTH) {
      phys_error(log, PHYS_ERR_VALUE, "%s: sizes[%d]: expected a width from 1 to %d", path, k, PHYS_MLP_MAXWIDTH);
      return NULL;
    }
    size[k] = (int)v->valuedouble;
  }
  if (!cJSON_IsArray(layers) || cJSON_GetArraySize(layers) != ns - 1) {
    phys_error(log, PHYS_ERR_SIZE, "%s: \"layers\": expected an array of %d layers (as \"sizes\")", path, ns - 1);
    return NULL;
  }
  char err[128], what[64];
  physMlp* n = phys_mlp_alloc(ns - 1, size, (physMlpAct)a, err, sizeof err);
  if (!n) {
    phys_error(log, PHYS_ERR_NOMEM, "%s: %s", path, err);
    return NULL;
  }
  int l = 0;
  for (const cJSON* L = layers->child; L; L = L->next, l++) {
    const cJSON* W = cJSON_GetObjectItemCaseSensitive(L, "W");
    int ok = cJSON_IsArray(W) && cJSON_GetArraySize(W) == size[l + 1];
    if (!ok) phys_error(log, PHYS_ERR_SIZE, "%s: layers[%d].W: expected %d rows", path, l, size[l + 1]);
    int i = 0;
    for (const cJSON* row = ok ? W->child : NULL; row && ok; row = row->next, i++) {
      snprintf(what, sizeof what, "layers[%d].W[%d]", l, i);
      ok = read_row(row, size[l], n->w + phys_mlp_woff(n, l) + (size_t)i * size[l], path, what, log);
    }
    snprintf(what, sizeof what, "layers[%d].b", l);
    if (!ok || !read_row(cJSON_GetObjectItemCaseSensitive(L, "b"), size[l + 1], n->w + phys_mlp_boff(n, l), path,
                         what, log)) {
      phys_mlp_free(n);
      return NULL;
    }
  }
  return n;
}

physMlp* phys_mlp_read_json(const char* path, const char* role, physLog* log) {
  char* text = file_text(path, log);
  if (!text) return NULL;
  cJSON* root = cJSON_Parse(text);
  physMlp* n = NULL;
  if (!root) {
    phys_error(log, PHYS_ERR_PARSE, "%s: not valid JSON (near byte %ld)", path,
               cJSON_GetErrorPtr() ? (long)(cJSON_GetErrorPtr() - text) : 0L);
  } else if (check_string(root, "format", "physid-mlp", path, log) && check_string(root, "role", role, path, log) &&
             check_string(root, "input", "state-rotmat", path, log)) {
    const cJSON* ver = cJSON_GetObjectItemCaseSensitive(root, "version");
    if (!cJSON_IsNumber(ver) || ver->valuedouble != 1)
      phys_error(log, PHYS_ERR_VALUE, "%s: \"version\": expected 1", path);
    else
      n = read_net(root, path, log);
  }
  cJSON_Delete(root);
  free(text);
  return n;
}
