// spec.h - the editable model description that parsers fill and phys_compile turns into a physModel.
//
// Parsers resolve defaults, units (degrees), orientation specs (euler, axisangle, xyaxes, zaxis, fromto)
// and local/global coordinates; the spec holds every frame relative to its parent body, quaternions w first.
// Bodies must be added parent before child, in depth-first order of the file (MuJoCo's body numbering).
#ifndef PHYS_SPEC_H
#define PHYS_SPEC_H

#include "physid.h"

#define PHYS_NAMELEN 128

typedef struct physSpecBody_ {
  char name[PHYS_NAMELEN];
  int parent;                 // parent body index (-1 only for the world body 0)
  double pos[3], quat[4];     // frame in the parent body frame
  int has_inertial;           // 1: mass/ipos/iquat/inertia given explicitly
  double mass;
  double ipos[3], iquat[4];   // inertial frame in the body frame
  double inertia[3];          // principal moments (when has_fullinertia == 0)
  int has_fullinertia;
  double fullinertia[6];      // xx yy zz xy xz yz in the inertial frame (iquat), when has_fullinertia
  int line;                   // source line (0 if unknown)
  int fileid;                 // source file: index into physSpec.srcfile, 0 = physSpec.filename
  int urdf;                   // a URDF link: may lack mass and inertia when a link below it has both
  int inertiafromgeom;        // composed worlds: 1 + the compiler inertiafromgeom of this body's file (0: the
                              // spec's own physSpec.inertiafromgeom)
} physSpecBody;

typedef struct physSpecJoint_ {
  char name[PHYS_NAMELEN];
  int body;
  int type;                   // physJointType
  double pos[3], axis[3];     // anchor and axis in the body frame (axis need not be unit)
  double ref;                 // hinge/slide value in qpos0
  double springref;           // hinge/slide spring reference
  double stiffness, damping, armature;
  double frictionloss;        // dry friction (N or N m): a constraint row per dof, |force| <= frictionloss
  int limited;
  double range[2];            // in rad / m
  int line;
  int fileid;                 // source file: index into physSpec.srcfile, 0 = physSpec.filename
} physSpecJoint;

typedef struct physSpecGeom_ {
  char name[PHYS_NAMELEN];
  int body;
  int type;                   // physGeomType
  double pos[3], quat[4];     // in the body frame
  double size[3];
  double friction[3];
  double restitution;
  double margin;
  int contype, conaffinity, condim;
  double density;             // used when mass < 0
  double mass;                // < 0: from density*volume
  int mesh;                   // index into meshes, -1 if none
  double rgba[4];
  double matrgba[4];          // the colour of the MJCF material the geom references (has_material: 1)
  int has_material;
  int group;
  int line;
  int fileid;                 // source file: index into physSpec.srcfile, 0 = physSpec.filename
} physSpecGeom;

typedef struct physSpecSite_ {
  char name[PHYS_NAMELEN];
  int body;
  double pos[3], quat[4];
  int type;                   // physSiteType (default sphere)
  double size[3];             // MJCF site size (default 0.005 0.005 0.005)
  int line;
  int fileid;                 // source file: index into physSpec.srcfile, 0 = physSpec.filename
} physSpecSite;

typedef struct physSpecSpring_ {
  char name[PHYS_NAMELEN];
  int site[64];               // path: site, joint (fixed tendon) or geom indices (pulley: -1), as objtype
  int nsite;
  int type;                   // physSpringType (0 site path)
  int objtype[64];            // physWrapType of each entry (0 site)
  double prm[64];             // joint: coef; geom: side site index or -1; pulley: divisor
  double stiffness, damping;
  double restlength;          // < 0: length at qpos0 (MuJoCo's springlength = -1)
  int limited;                // issue 15 item 3: 1 if the length is limited to range (lower < upper)
  double range[2];
  double frictionloss;        // issue 15 item 3: dry friction along the tendon (>= 0)
  int line;
  int fileid;                 // source file: index into physSpec.srcfile, 0 = physSpec.filename
} physSpecSpring;

typedef struct physSpecActuator_ {
  char name[PHYS_NAMELEN];
  int trntype;                // physTrnType
  char target[PHYS_NAMELEN];  // joint or spring name, resolved by phys_compile
  double gear[6];
  double gainprm[3];          // force = (g0 + g1 L + g2 Ldot) ctrl + b0 + b1 L + b2 Ldot (MuJoCo's affine
  double biasprm[3];          // gain and bias; L = gear q, Ldot = gear qdot): default gain 1, bias 0
  int ctrllimited;
  double ctrlrange[2];
  // dynamics and limits (issue 15 item 2): physDynType, dynprm[0..2] (filter: tau), clamps of force and act
  int dyntype;
  double dynprm[3];
  int forcelimited, actlimited;
  double forcerange[2], actrange[2];
  // muscles and slider-crank transmissions (issue 15 items 2 and 6, session 28): MuJoCo 2.2.2's muscle gain and
  // bias (physGainType) with their 9 parameters each, lengthrange (lower >= upper: computed by phys_compile),
  // the slider site's name and the crank length of a PHYS_TRN_SLIDERCRANK actuator
  int gaintype, biastype;
  double musclegain[9], musclebias[9];
  double lengthrange[2];
  char slider[PHYS_NAMELEN];
  double cranklength;
  int line;
  int fileid;                 // source file: index into physSpec.srcfile, 0 = physSpec.filename
} physSpecActuator;

typedef struct physSpecSensor_ {
  char name[PHYS_NAMELEN];
  int type;                   // physSensorType
  int objtype;                // physObjType of the object named by target
  char target[PHYS_NAMELEN];  // joint, actuator, site or frame object name, resolved by phys_compile
  double noise;               // standard deviation (>= 0)
  double cutoff;              // > 0: clamp (>= 0)
  int line;
  int fileid;                 // source file: index into physSpec.srcfile, 0 = physSpec.filename
} physSpecSensor;

typedef struct physSpecMesh_ {
  char name[PHYS_NAMELEN];
  char file[1024];            // resolved path (for messages)
  double* vert;               // nvert x 3, already scaled (owned, freed by phys_spec_free)
  int nvert;
  int* face;                  // nface x 3 (owned)
  int nface;
  int line;
  int fileid;                 // source file: index into physSpec.srcfile, 0 = physSpec.filename
  int learn;                  // issue 14 item 2: 1 = its vertices are learned (vertices:GEOM): the model reserves
                              // hull regions for any hull of them (mesh_hullcap) and phys_hull_rebuild remakes it
} physSpecMesh;

typedef struct physSpecKey_ {
  char name[PHYS_NAMELEN];
  double time;
  double* qpos;               // nq values or NULL (owned); sizes checked by phys_compile
  int nqpos;
  double* qvel;               // owned or NULL
  int nqvel;
  double* ctrl;               // owned or NULL
  int nctrl;
  double* act;                // activations (na values) or NULL (owned)
  int nact;
  int line;
  int fileid;                 // source file: index into physSpec.srcfile, 0 = physSpec.filename
} physSpecKey;

typedef struct physSpecPair_ {
  char name[PHYS_NAMELEN];
  char geom1[PHYS_NAMELEN], geom2[PHYS_NAMELEN];  // resolved by phys_compile
  double friction;            // < 0: max of the geoms' (as without the pair)
  double restitution;         // < 0: max of the geoms'
  double margin;              // < 0: max of the geoms'
  int line;
  int fileid;                 // source file: index into physSpec.srcfile, 0 = physSpec.filename
} physSpecPair;

typedef struct physSpecExclude_ {
  char body1[PHYS_NAMELEN], body2[PHYS_NAMELEN];  // resolved by phys_compile
  int line;
  int fileid;                 // source file: index into physSpec.srcfile, 0 = physSpec.filename
} physSpecExclude;

// issue 15 item 1: an MJCF <equality> element (names resolved by phys_compile; eq_data by physEqType)
typedef struct physSpecEquality_ {
  char name[PHYS_NAMELEN];    // "" unnamed (first member: compile.c's unique_names)
  int type;                   // physEqType
  char obj1[PHYS_NAMELEN], obj2[PHYS_NAMELEN];  // body1/body2 (connect, weld) or joint1/joint2 (joint); "" unset
  double data[PHYS_EQ_NDATA]; // anchor (connect: data[0..2]), relpose (weld: data[3..9], quat 0: from qpos0),
                              // torquescale (weld: data[10]), polycoef (joint: data[0..4])
  int active;
  double solref[2], solimp[5];
  int line;
  int fileid;                 // source file: index into physSpec.srcfile, 0 = physSpec.filename
} physSpecEquality;

// growable arrays: T* items; int n, cap
#define PHYS_SPEC_LIST(T, name) T* name; int n##name; int cap_##name

typedef struct physSpec_ {
  char modelname[128];
  char filename[512];
  char** srcfile;             // other files elements came from (MJCF <include>s), owned; srcfile[0] unused
  int nsrcfile;
  physOption opt;
  int inertiafromgeom;        // 0 false, 1 true, 2 auto (MJCF default: from geoms when no <inertial>)
  int urdf;                   // read from URDF: messages say "link"; a moving link may lack mass and inertia
                              // when a link below it has both (MJCF: MuJoCo's rule, see phys_compile)
  double settotalmass;        // > 0: scale all masses and inertias so the total is this
  double boundmass, boundinertia;  // MJCF compiler options (0: off)
  PHYS_SPEC_LIST(physSpecBody, body);
  PHYS_SPEC_LIST(physSpecJoint, joint);
  PHYS_SPEC_LIST(physSpecGeom, geom);
  PHYS_SPEC_LIST(physSpecSite, site);
  PHYS_SPEC_LIST(physSpecSpring, spring);
  PHYS_SPEC_LIST(physSpecActuator, actuator);
  PHYS_SPEC_LIST(physSpecSensor, sensor);
  PHYS_SPEC_LIST(physSpecMesh, mesh);
  PHYS_SPEC_LIST(physSpecKey, key);
  PHYS_SPEC_LIST(physSpecPair, pair);
  PHYS_SPEC_LIST(physSpecExclude, exclude);
  PHYS_SPEC_LIST(physSpecEquality, equality);   // issue 15 item 1
  int nconmax;                // contact capacity (0: default from the geoms)
} physSpec;

// a new spec with the world body and MuJoCo's default options (dt 0.002, gravity -9.81 z)
physSpec* phys_spec_new(void);
void phys_spec_free(physSpec* s);

// append an element initialised to MJCF defaults; returns its index, -1 on allocation failure
int phys_spec_add_body(physSpec* s, int parent);
int phys_spec_add_joint(physSpec* s, int body, int type);
int phys_spec_add_geom(physSpec* s, int body, int type);
// the colour a geom is drawn in, by MuJoCo's rule: its material's rgba when it references a material and its own
// rgba is the default 0.5 0.5 0.5 1 (an rgba of its own takes precedence), else its rgba
const double* phys_spec_geom_drawn_rgba(const physSpecGeom* g);
int phys_spec_add_site(physSpec* s, int body);
int phys_spec_add_spring(physSpec* s);
int phys_spec_add_actuator(physSpec* s);
int phys_spec_add_sensor(physSpec* s);
int phys_spec_add_mesh(physSpec* s);
int phys_spec_add_key(physSpec* s);
int phys_spec_add_pair(physSpec* s);        // friction, restitution, margin < 0: from the geoms
int phys_spec_add_exclude(physSpec* s);
int phys_spec_add_equality(physSpec* s);      // MuJoCo's defaults (active, solref 0.02 1, solimp, torquescale 1)

// index of file name in s->srcfile for an element's `fileid` (added once; 0 for s->filename), -1 out of memory
int phys_spec_add_file(physSpec* s, const char* name);

// issue 14 item 2 (model/vertices.c): the geoms named in geoms[0..n) get learned shapes: a box becomes a mesh of
// its 8 corners named after the geom (same mass and inertia), a mesh (used by no other geom) keeps its vertices;
// their meshes are marked learn. PHYS_ERR_ARG naming the geom for another type or an unknown name
physStatus phys_spec_learn_vertices(physSpec* s, const char* const* geoms, int n, physLog* log);

// "file:line: " of an element (its `fileid` and `line`; "file: " when the line is unknown) into buf
const char* phys_spec_where(const physSpec* s, int file, int line, char* buf, size_t n);

// append src's bodies and elements to dst, src's world body becoming dst's body `parent` (details in
// spec.c); keyframes are not copied. PHYS_OK, PHYS_ERR_ARG, PHYS_ERR_NOMEM
physStatus phys_spec_attach(physSpec* dst, const physSpec* src, int parent);

// the spec of a model file and, with opt->add, of the files composed with it into one world (load.c): every
// added file's bodies hang from the world body, the options are the first file's (a warning for an added file
// that sets others), the first file's keyframes are extended with the added files' qpos0, urdf_floating acts
// on the first file only; each URDF file's links do not collide within its own trees (<exclude> pairs) unless
// opt->urdf_self_collision. NULL on error (log says why)
physSpec* phys_parse_world(const char* filename, const physLoadOptions* opt, physLog* log);

// default options (MuJoCo's where MuJoCo has them; physid's contact settings otherwise)
void phys_default_option(physOption* opt);

// phys_compile's equality part (compile_equality.c): ids, MuJoCo 2.2.2's qpos0 data (m's bodies and joints done)
physStatus phys_compile_equality(const physSpec* s, physModel* m, physLog* log);

// compile into a model: resolve names, compute addresses, qpos0, inertia from geoms, validate.
// Errors name s->filename, the element's line and name.
physModel* phys_compile(const physSpec* s, physLog* log);

// mass, centre (in the geom frame: 0) and principal inertia (geom frame axes) of a geom of density
// rho or given mass, with MuJoCo's formulas; mesh needs the mesh (may be NULL otherwise).
// Returns PHYS_OK or an error for degenerate sizes.
physStatus phys_geom_inertia(const physSpecGeom* g, const physSpecMesh* mesh, double* mass,
                             double com[3], double inertia[6]);

#endif  // PHYS_SPEC_H
