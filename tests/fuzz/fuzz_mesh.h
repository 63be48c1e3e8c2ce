// fuzz_mesh.h - the mesh harnesses (fuzz_stl.c, fuzz_obj.c): the input is the mesh file, read by
// phys_mesh_load; a mesh that loads also gets its mass properties (phys_mesh_inertia), as a mesh geom would.
#ifndef PHYS_FUZZ_MESH_H
#define PHYS_FUZZ_MESH_H

#include "fuzz.h"
#include "mesh.h"

// load the bytes as mesh file `name` (its extension picks the format)
static void fuzz_mesh_input(const char* name, const uint8_t* data, size_t size) {
  char path[4400];
  fuzz_write(path, sizeof path, name, data, size);
  physLog log;
  memset(&log, 0, sizeof log);
  physSpecMesh mesh;
  memset(&mesh, 0, sizeof mesh);
  const double scale[3] = {1, 2, 0.5};
  physStatus st = phys_mesh_load(path, scale, &mesh, &log);
  fuzz_verbose("phys_mesh_load", st, log.error);
  if (st == PHYS_OK) {
    double volume, com[3], inertia[6];
    st = phys_mesh_inertia(&mesh, &volume, com, inertia);
    fuzz_verbose("phys_mesh_inertia", st, phys_status_str(st));
  }
  free(mesh.vert);
  free(mesh.face);
}

#endif  // PHYS_FUZZ_MESH_H
