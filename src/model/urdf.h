// urdf.h - URDF reader: links become bodies, joints become joints, collision elements become geoms.
//
// Semantics (see urdf.c for details):
//  - joint types: revolute -> limited hinge, continuous -> unlimited hinge, prismatic -> limited slide,
//    fixed -> child body without a joint (kept, not merged), floating -> free joint; planar is refused.
//  - the child link frame is the joint origin (xyz, fixed-axis rpy: R = Rz(y) Ry(p) Rx(r)); the joint axis
//    (default 1 0 0, normalized) is in that frame.
//  - the single root link is welded to the world, or gets a free joint with opt->urdf_floating; a root
//    link named "world" is the world body itself (its children attach to body 0).
//  - links without <inertial> have mass 0; a moving link whose whole subtree is massless is an error.
//  - mesh files: relative to the URDF's folder; package://PKG/rest searches `rest` under the URDF's folder
//    and up to 3 parent folders; nothing resolving outside the 3rd parent is opened (an error). A missing
//    file or an unsupported format (STL, OBJ and, built with libassimp, Collada DAE are read) drops the geom
//    with a warning, or fails with opt->strict_mesh.
//  - collision geoms are named by <collision name>, else LINK for the link's first <collision> and LINK_K for
//    its (K+1)-th; a name asked for twice goes to a name attribute before a generated name, then to the
//    earlier geom, the other geom staying unnamed with a warning (MuJoCo 2.2.2 names none).
//  - opt->urdf_actuate: a motor per revolute, continuous and prismatic joint (gear 1, ctrlrange from effort).
//  - visual, material, transmission, gazebo and foreign-namespace elements are ignored.
#ifndef PHYS_URDF_H
#define PHYS_URDF_H

#include "physid.h"
#include "spec.h"

#define PHYS_URDF_MAXLINK 100000   // refuse files with more links or joints

// parse a URDF file into a new spec (free with phys_spec_free); NULL on error (log->error says why).
// opt may be NULL (defaults: fixed root, missing meshes are warnings).
physSpec* phys_parse_urdf(const char* filename, const physLoadOptions* opt, physLog* log);

#endif  // PHYS_URDF_H
