// mesh_assimp.c - Collada (.dae) mesh files through libassimp's C interface (see mesh_assimp.h).
#include "mesh_assimp.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef PHYS_HAVE_ASSIMP
#include <assimp/cfileio.h>
#include <assimp/cimport.h>
#include <assimp/config.h>
#include <assimp/postprocess.h>
#include <assimp/scene.h>

#define SCENE_NAME "physid_mesh.dae"   // the only name the in-memory file system serves (extension: the format)
#define SCENE_MAXDEPTH 256             // refuse node trees deeper than this (the walk is recursive)

int phys_mesh_scene_supported(void) { return 1; }

//---------------------------------------------------------------------------------------------------------
// an in-memory file system that serves one read-only buffer under SCENE_NAME and refuses every other name

typedef struct memBuf_ {
  const char* data;
  size_t size;
} memBuf;

typedef struct memFile_ {
  const memBuf* buf;
  size_t pos;
} memFile;

// read up to count items of size bytes at the cursor (fread's contract: whole items only)
static size_t mem_read(struct aiFile* f, char* out, size_t size, size_t count) {
  memFile* m = (memFile*)f->UserData;
  if (size == 0 || m->pos >= m->buf->size) return 0;
  size_t n = (m->buf->size - m->pos) / size;
  if (n > count) n = count;
  memcpy(out, m->buf->data + m->pos, n * size);
  m->pos += n * size;
  return n;
}

// writing is refused
static size_t mem_write(struct aiFile* f, const char* in, size_t size, size_t count) {
  (void)f, (void)in, (void)size, (void)count;
  return 0;
}

// cursor position
static size_t mem_tell(struct aiFile* f) { return ((memFile*)f->UserData)->pos; }

// file size
static size_t mem_size(struct aiFile* f) { return ((memFile*)f->UserData)->buf->size; }

// move the cursor (from the start, the cursor or the end); a place outside the buffer fails
static enum aiReturn mem_seek(struct aiFile* f, size_t off, enum aiOrigin origin) {
  memFile* m = (memFile*)f->UserData;
  size_t base = origin == aiOrigin_SET ? 0 : origin == aiOrigin_CUR ? m->pos : m->buf->size;
  if (origin == aiOrigin_END) {
    if (off > base) return aiReturn_FAILURE;
    m->pos = base - off;
    return aiReturn_SUCCESS;
  }
  if (off > m->buf->size - base) return aiReturn_FAILURE;
  m->pos = base + off;
  return aiReturn_SUCCESS;
}

// nothing to flush
static void mem_flush(struct aiFile* f) { (void)f; }

// open SCENE_NAME for reading (a new cursor each time); every other name or a write mode: NULL
static struct aiFile* mem_open(struct aiFileIO* io, const char* name, const char* mode) {
  if (!name || strcmp(name, SCENE_NAME) != 0 || !mode || strchr(mode, 'w') || strchr(mode, 'a')) return NULL;
  struct aiFile* f = calloc(1, sizeof(*f) + sizeof(memFile));
  if (!f) return NULL;
  memFile* m = (memFile*)(f + 1);
  m->buf = (const memBuf*)io->UserData;
  f->ReadProc = mem_read;
  f->WriteProc = mem_write;
  f->TellProc = mem_tell;
  f->FileSizeProc = mem_size;
  f->SeekProc = mem_seek;
  f->FlushProc = mem_flush;
  f->UserData = (aiUserData)m;
  return f;
}

// close a file of mem_open
static void mem_close(struct aiFileIO* io, struct aiFile* f) {
  (void)io;
  free(f);
}

//---------------------------------------------------------------------------------------------------------
// the scene's node tree

typedef struct sceneWalk_ {
  const struct aiScene* scene;
  const char* path;
  physMeshTriFn tri;
  void* ctx;
  physLog* log;
} sceneWalk;

// c = a * b for 3x4 affine matrices (rotation-scale 3x3 | translation), row-major
static void affine_mul(const double a[12], const double b[12], double c[12]) {
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 4; j++) {
      double s = j == 3 ? a[4 * i + 3] : 0;
      for (int k = 0; k < 3; k++) s += a[4 * i + k] * b[4 * k + j];
      c[4 * i + j] = s;
    }
  }
}

// the mesh's triangles moved by the affine map x, each passed to the walk's callback
static physStatus emit_mesh(const sceneWalk* w, const struct aiMesh* mesh, const double x[12]) {
  for (unsigned f = 0; f < mesh->mNumFaces; f++) {
    const struct aiFace* face = mesh->mFaces + f;
    if (face->mNumIndices != 3) continue;   // a point or a line
    double p[9];
    for (int k = 0; k < 3; k++) {
      unsigned v = face->mIndices[k];
      if (v >= mesh->mNumVertices) {
        return phys_error(w->log, PHYS_ERR_PARSE, "%s: mesh '%s' face %u: vertex index %u out of range", w->path,
                          mesh->mName.data, f, v);
      }
      const struct aiVector3D* q = mesh->mVertices + v;
      for (int i = 0; i < 3; i++) {
        double y = x[4 * i] * q->x + x[4 * i + 1] * q->y + x[4 * i + 2] * q->z + x[4 * i + 3];
        if (!isfinite(y)) {
          return phys_error(w->log, PHYS_ERR_VALUE, "%s: mesh '%s' face %u: vertex coordinate is not finite",
                            w->path, mesh->mName.data, f);
        }
        p[3 * k + i] = y;
      }
    }
    physStatus st = w->tri(w->ctx, p);
    if (st != PHYS_OK) return st;
  }
  return PHYS_OK;
}

// node and its children, depth first; parent is the product of the ancestors' transforms
static physStatus walk_node(const sceneWalk* w, const struct aiNode* node, const double parent[12], int depth) {
  if (depth > SCENE_MAXDEPTH) {
    return phys_error(w->log, PHYS_ERR_ARG, "%s: node tree deeper than %d levels (refused)", w->path,
                      SCENE_MAXDEPTH);
  }
  const struct aiMatrix4x4* t = &node->mTransformation;
  const double local[12] = {t->a1, t->a2, t->a3, t->a4, t->b1, t->b2, t->b3, t->b4, t->c1, t->c2, t->c3, t->c4};
  double x[12];
  affine_mul(parent, local, x);
  for (unsigned i = 0; i < node->mNumMeshes; i++) {
    unsigned m = node->mMeshes[i];
    if (m >= w->scene->mNumMeshes) {
      return phys_error(w->log, PHYS_ERR_PARSE, "%s: node '%s' names mesh %u of %u", w->path, node->mName.data, m,
                        w->scene->mNumMeshes);
    }
    physStatus st = emit_mesh(w, w->scene->mMeshes[m], x);
    if (st != PHYS_OK) return st;
  }
  for (unsigned i = 0; i < node->mNumChildren; i++) {
    physStatus st = walk_node(w, node->mChildren[i], x, depth + 1);
    if (st != PHYS_OK) return st;
  }
  return PHYS_OK;
}

// import the buffer with libassimp (Collada's up axis ignored, polygons triangulated, data validated) and walk it
static physStatus import_buffer(const memBuf* buf, const char* path, physMeshTriFn tri, void* ctx,
                                physLog* log) {
  struct aiFileIO io = {.OpenProc = mem_open, .CloseProc = mem_close, .UserData = (aiUserData)buf};
  struct aiPropertyStore* props = aiCreatePropertyStore();
  if (!props) return phys_error(log, PHYS_ERR_NOMEM, "%s: out of memory", path);
  aiSetImportPropertyInteger(props, AI_CONFIG_IMPORT_COLLADA_IGNORE_UP_DIRECTION, 1);
  const struct aiScene* scene = aiImportFileExWithProperties(
      SCENE_NAME, aiProcess_Triangulate | aiProcess_ValidateDataStructure, &io, props);
  aiReleasePropertyStore(props);
  if (!scene || !scene->mRootNode) {
    physStatus st = phys_error(log, PHYS_ERR_PARSE, "%s: not a readable Collada file (libassimp: %s)", path,
                               aiGetErrorString());
    if (scene) aiReleaseImport(scene);
    return st;
  }
  if (scene->mFlags & AI_SCENE_FLAGS_INCOMPLETE) {   // e.g. no mesh: libassimp then draws the nodes as pyramids
    aiReleaseImport(scene);
    return phys_error(log, PHYS_ERR_VALUE, "%s: no mesh in the scene (libassimp marks it incomplete)", path);
  }
  static const double identity[12] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0};
  sceneWalk w = {.scene = scene, .path = path, .tri = tri, .ctx = ctx, .log = log};
  physStatus st = walk_node(&w, scene->mRootNode, identity, 0);
  aiReleaseImport(scene);
  return st;
}

// read the whole file (size checked against the cap) and import it
physStatus phys_mesh_scene_read(FILE* fp, long size, const char* path, physMeshTriFn tri, void* ctx,
                                physLog* log) {
  if (size < 0 || size > PHYS_MESH_MAXSCENE) {
    return phys_error(log, PHYS_ERR_ARG, "%s: scene file larger than %ld bytes (refused)", path,
                      PHYS_MESH_MAXSCENE);
  }
  char* data = malloc(size ? (size_t)size : 1);
  if (!data) return phys_error(log, PHYS_ERR_NOMEM, "%s: out of memory", path);
  if (fread(data, 1, (size_t)size, fp) != (size_t)size) {
    free(data);
    return phys_error(log, PHYS_ERR_IO, "%s: cannot read mesh file", path);
  }
  memBuf buf = {.data = data, .size = (size_t)size};
  physStatus st = import_buffer(&buf, path, tri, ctx, log);
  free(data);
  return st;
}

#else  // built without libassimp

int phys_mesh_scene_supported(void) { return 0; }

// every call fails: this build cannot read Collada files
physStatus phys_mesh_scene_read(FILE* fp, long size, const char* path, physMeshTriFn tri, void* ctx,
                                physLog* log) {
  (void)fp, (void)size, (void)tri, (void)ctx;
  return phys_error(log, PHYS_ERR_ARG, "%s: this build of physid reads no Collada (.dae) files (built without "
                    "libassimp: install libassimp-dev and configure with -DPHYS_ASSIMP=ON)", path);
}

#endif
