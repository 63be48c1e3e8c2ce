// mesh.h - triangle mesh files (binary/ASCII STL, Wavefront OBJ, Collada .dae through libassimp: mesh_assimp.h)
// and exact mesh mass properties.
//
// Untrusted input: every count is checked against the file size or a hard cap before allocation, every
// number must be finite, every face index must be in range. Errors name the file (and line for text).
#ifndef PHYS_MESH_H
#define PHYS_MESH_H

#include "physid.h"
#include "spec.h"

#define PHYS_MESH_MAXFACE 10000000   // refuse meshes with more triangles (10 M, ~ 500 MB of STL)
#define PHYS_MESH_MAXVERT 10000000   // refuse meshes with more vertices
#define PHYS_MESH_MAXLINE 65538      // longest line of a text mesh (OBJ, ASCII STL): 65536 bytes + newline + NUL

// load a mesh file into out->vert/nvert/face/nface (owned, malloc'ed) and out->file, scaling every
// vertex by scale (x, y, z; NULL: 1 1 1). The format follows the extension (.stl, .obj, .dae, any case).
// Duplicate STL vertices (STL repeats them per facet) are merged by exact position. OBJ polygons are
// fan-triangulated (v0 vi vi+1); v, v/vt, v//vn, v/vt/vn and negative (relative) indices are accepted.
// A DAE file's triangles (every mesh instance of its node tree, moved by its nodes' transforms, <unit> applied,
// <up_axis> ignored) are merged like STL's (mesh_assimp.h; refused when the build has no libassimp).
// Other fields of out (name, line) are left alone. On failure out->vert/face stay NULL.
physStatus phys_mesh_load(const char* path, const double scale[3], physSpecMesh* out, physLog* log);

// mass properties of a closed, outward-oriented triangle mesh at unit density, exact by signed
// tetrahedra: volume, centre of mass com (mesh frame) and inertia about the com in mesh axes
// (xx yy zz xy xz yz, tensor entries: I_xy = -integral of x*y). Any output may be NULL.
// Returns PHYS_ERR_MODEL for an open mesh (a directed edge without its opposite: also a face with
// flipped winding), PHYS_ERR_VALUE for a zero or negative volume (flat or inside-out mesh),
// PHYS_ERR_ARG for no faces or a face index out of range; outputs are then untouched.
physStatus phys_mesh_inertia(const physSpecMesh* mesh, double* volume, double com[3], double inertia[6]);

#endif  // PHYS_MESH_H
