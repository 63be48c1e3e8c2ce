// mesh_assimp.h - Collada (.dae) mesh files through Debian's libassimp (optional dependency, on by default:
// CMake option PHYS_ASSIMP; a build without it refuses .dae files with a message saying so).
//
// Untrusted input: the file is read by physid itself (a regular file, at most PHYS_MESH_MAXSCENE bytes) and
// handed to libassimp through an in-memory file system that serves only that buffer, so the importer never
// opens a file of its own (a reference inside the file to another file fails to load). Every triangle is
// checked (indices in range, coordinates finite) before it reaches the caller.
#ifndef PHYS_MESH_ASSIMP_H
#define PHYS_MESH_ASSIMP_H

#include <stdio.h>

#include "physid.h"

#define PHYS_MESH_MAXSCENE (256L << 20)   // refuse scene files larger than 256 MiB

// receives one triangle p0 p1 p2 (p[9], in the file's metres after its node transforms); a non-OK status
// stops the read and is returned
typedef physStatus (*physMeshTriFn)(void* ctx, const double p[9]);

// 1 when this build reads .dae files (libassimp found at configure time), else 0
int phys_mesh_scene_supported(void);

// read the Collada file open on fp (size bytes, name path for messages) and call tri once per triangle of every
// mesh instance in the scene's node tree, in node order (depth first), each vertex moved by the product of its
// nodes' transforms. Collada's <unit meter> is applied; its <up_axis> is ignored (the ROS convention: the file's
// axes are the link's axes, as RViz and MoveIt read them). Polygons are triangulated by libassimp; points
// and lines are skipped. PHYS_ERR_IO (cannot read), PHYS_ERR_PARSE (libassimp's message), PHYS_ERR_VALUE (a
// coordinate not finite, or a scene libassimp marks incomplete: one without meshes), PHYS_ERR_ARG (too large,
// too deep a node tree, or no libassimp in this build).
physStatus phys_mesh_scene_read(FILE* fp, long size, const char* path, physMeshTriFn tri, void* ctx,
                                physLog* log);

#endif  // PHYS_MESH_ASSIMP_H
