// path.h - the one rule for the files a model refers to (MJCF includes and meshes, URDF meshes):
// they resolve inside the model's folder, both as written and after following symbolic links.
#ifndef PHYS_PATH_H
#define PHYS_PATH_H

#include <limits.h>

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

typedef enum {
  PHYS_PATH_OK = 0,
  PHYS_PATH_MISSING,   // inside as written but the file does not exist or cannot be reached (errno kept)
  PHYS_PATH_OUTSIDE,   // leaves folder: "..", an absolute path elsewhere, or a symbolic link out of it
  PHYS_PATH_TOOLONG,   // the joined path does not fit PATH_MAX
} physPathResult;

// 1 if the canonical path is folder or lies below it (prefix at a component boundary: /a/bc is not in /a/b)
int phys_path_inside(const char* path, const char* folder);

// resolve file as the model wrote it into the canonical path out. folder is the model folder (a canonical,
// absolute path: the boundary); relative files start from sub when sub is absolute, folder/sub when sub is
// relative, folder when sub is NULL or empty; an absolute file is taken as is. The joined path is first
// normalised lexically ("." "..", "//") and must lie inside folder, then its real path (symbolic links
// followed) must too.
physPathResult phys_path_resolve(const char* folder, const char* sub, const char* file, char out[PATH_MAX]);

#endif  // PHYS_PATH_H
