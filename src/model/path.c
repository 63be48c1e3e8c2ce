// path.c - model-relative file names that cannot leave the model folder.
#define _XOPEN_SOURCE 700   // realpath
#include "path.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// collapse "//", "." and ".." of an absolute path in place, without touching the file system
static void normalize_path(char* p) {
  char* out = p;   // p[0] == '/'
  const char* in = p;
  while (*in) {
    while (*in == '/') in++;
    if (!*in) break;
    const char* end = strchr(in, '/');
    size_t len = end ? (size_t)(end - in) : strlen(in);
    if (len == 1 && in[0] == '.') {
      // stay
    } else if (len == 2 && in[0] == '.' && in[1] == '.') {   // drop the last written "/component"
      while (out > p && *(out - 1) != '/') out--;
      if (out > p) out--;
    } else {   // out never passes in, so copying forward is safe
      *out++ = '/';
      memmove(out, in, len);
      out += len;
    }
    in += len;
  }
  if (out == p) *out++ = '/';
  *out = 0;
}

// 1 if path is folder or below it
int phys_path_inside(const char* path, const char* folder) {
  size_t n = strlen(folder);
  if (n == 1 && folder[0] == '/') return 1;
  return !strncmp(path, folder, n) && (path[n] == '/' || path[n] == 0);
}

// join, normalise, check as written, follow links, check again
physPathResult phys_path_resolve(const char* folder, const char* sub, const char* file, char out[PATH_MAX]) {
  char joined[3 * PATH_MAX];
  if (file[0] == '/') {
    snprintf(joined, sizeof(joined), "%s", file);
  } else if (sub && sub[0] == '/') {
    snprintf(joined, sizeof(joined), "%s/%s", sub, file);
  } else if (sub && sub[0]) {
    snprintf(joined, sizeof(joined), "%s/%s/%s", folder, sub, file);
  } else {
    snprintf(joined, sizeof(joined), "%s/%s", folder, file);
  }
  if (strlen(joined) >= PATH_MAX) return PHYS_PATH_TOOLONG;
  normalize_path(joined);
  if (!phys_path_inside(joined, folder)) return PHYS_PATH_OUTSIDE;
  if (!realpath(joined, out)) return PHYS_PATH_MISSING;
  return phys_path_inside(out, folder) ? PHYS_PATH_OK : PHYS_PATH_OUTSIDE;
}
