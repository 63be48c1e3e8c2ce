// vertices.c - issue 14 item 2: geoms whose collision shape is learned as the convex hull of their vertices
// (params.h vertices:GEOM). Loading marks them in the spec before compiling (physLoadOptions.vertex_geoms): a box
// becomes a mesh of its 8 corners (same volume, mass and inertia), a mesh keeps its vertices; either way the model
// reserves hull regions for any hull of the mesh's vertices (mesh_hullcap), which phys_hull_rebuild remakes.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "spec.h"

// the 8 corners (x fastest: corner c has signs of bits 0, 1, 2) and 12 outward triangles of a box of half sizes h
static int box_mesh(physSpecMesh* sm, const double h[3]) {
  static const int tri[12][3] = {{0, 2, 3}, {0, 3, 1}, {4, 5, 7}, {4, 7, 6}, {0, 1, 5}, {0, 5, 4},
                                 {2, 6, 7}, {2, 7, 3}, {0, 4, 6}, {0, 6, 2}, {1, 3, 7}, {1, 7, 5}};
  sm->vert = malloc(sizeof(double) * 24);
  sm->face = malloc(sizeof(int) * 36);
  if (!sm->vert || !sm->face) return 0;
  for (int c = 0; c < 8; c++)
    for (int k = 0; k < 3; k++) sm->vert[3 * c + k] = (c >> k & 1) ? h[k] : -h[k];
  memcpy(sm->face, tri, sizeof(tri));
  sm->nvert = 8;
  sm->nface = 12;
  return 1;
}

// geom g (a box) becomes a learned mesh of its corners named after it
static physStatus box_to_mesh(physSpec* s, int g, physLog* log) {
  char at[700];
  physSpecGeom* sg = s->geom + g;
  for (int i = 0; i < s->nmesh; i++)
    if (!strcmp(s->mesh[i].name, sg->name))
      return phys_error(log, PHYS_ERR_ARG, "%svertices:%s: a mesh named '%s' exists already (the box's corners "
                        "become a mesh of the geom's name)", phys_spec_where(s, sg->fileid, sg->line, at, sizeof at),
                        sg->name, sg->name);
  int i = phys_spec_add_mesh(s);
  if (i < 0) return phys_error(log, PHYS_ERR_NOMEM, "vertices:%s: out of memory", sg->name);
  sg = s->geom + g;
  physSpecMesh* sm = s->mesh + i;
  snprintf(sm->name, sizeof sm->name, "%s", sg->name);
  snprintf(sm->file, sizeof sm->file, "corners of box geom '%s'", sg->name);
  sm->line = sg->line, sm->fileid = sg->fileid, sm->learn = 1;
  if (!box_mesh(sm, sg->size)) return phys_error(log, PHYS_ERR_NOMEM, "vertices:%s: out of memory", sg->name);
  sg->type = PHYS_GEOM_MESH;
  sg->mesh = i;
  return PHYS_OK;
}

// mark geom `name`'s shape as learned; PHYS_ERR_ARG naming it when it is not a box or a mesh of its own
static physStatus learn_one(physSpec* s, const char* name, physLog* log) {
  int g = -1;
  for (int i = 0; i < s->ngeom && g < 0; i++)
    if (!strcmp(s->geom[i].name, name)) g = i;
  if (g < 0) return phys_error(log, PHYS_ERR_ARG, "vertices:%s: no geom named '%s'", name, name);
  physSpecGeom* sg = s->geom + g;
  char at[700];
  phys_spec_where(s, sg->fileid, sg->line, at, sizeof at);
  if (sg->type == PHYS_GEOM_BOX) return box_to_mesh(s, g, log);
  if (sg->type != PHYS_GEOM_MESH || sg->mesh < 0)
    return phys_error(log, PHYS_ERR_ARG, "%svertices:%s: the geom is not a box or a mesh (a learned shape is the "
                      "convex hull of vertices)", at, name);
  for (int i = 0; i < s->ngeom; i++)
    if (i != g && s->geom[i].type == PHYS_GEOM_MESH && s->geom[i].mesh == sg->mesh)
      return phys_error(log, PHYS_ERR_ARG, "%svertices:%s: its mesh '%s' is also geom '%s''s; learned vertices "
                        "belong to one geom", at, name, s->mesh[sg->mesh].name, s->geom[i].name);
  s->mesh[sg->mesh].learn = 1;
  return PHYS_OK;
}

physStatus phys_spec_learn_vertices(physSpec* s, const char* const* geoms, int n, physLog* log) {
  for (int i = 0; i < n; i++) {
    physStatus st = learn_one(s, geoms[i], log);
    if (st != PHYS_OK) return st;
  }
  return PHYS_OK;
}
