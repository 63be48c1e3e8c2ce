// physid.h - public C API of physid: models, data, dynamics and simulation.
//
// Conventions (see DESIGN.md):
//  - physModel is constant during simulation and owns every parameter; physData owns state and workspace.
//    Each is one allocation; nothing allocates inside a step.
//  - State layout follows MuJoCo: per joint free (q: pos 3 + quat 4 w-first; v: world linear velocity of
//    the body origin 3 + body-frame angular velocity 3), ball (quat 4 / body-frame angular velocity 3),
//    hinge (1/1), slide (1/1).
//  - Arrays are row-major; every field's comment gives its shape.
#ifndef PHYSID_H
#define PHYSID_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PHYS_VERSION "0.1.0"

//---------------------------------------------------------------------------------------------------------
// status codes and messages

typedef enum physStatus_ {
  PHYS_OK = 0,
  PHYS_ERR_ARG,        // invalid argument to an API call
  PHYS_ERR_IO,         // a file could not be opened, read or written
  PHYS_ERR_PARSE,      // malformed file (XML, CSV, mesh)
  PHYS_ERR_MODEL,      // the file is well formed but describes an invalid model
  PHYS_ERR_VALUE,      // a number is out of range or not finite
  PHYS_ERR_SIZE,       // wrong number of values or columns
  PHYS_ERR_NOMEM,      // allocation failed or a size limit was exceeded
  PHYS_ERR_NUMERIC,    // numerical failure (singular matrix, NaN in the state)
  PHYS_NSTATUS
} physStatus;

const char* phys_status_str(physStatus s);
// the version of the library linked at run time ("0.1.0"): compare with the header's PHYS_VERSION to catch a
// program built against other headers than the libphysid.so it runs with
const char* phys_version(void);

#define PHYS_MSGLEN 1024
#define PHYS_MAXWARN 16

// error and warning sink for loaders and other API calls; zero-initialise before use.
// Warnings are aggregated by kind (the call site's message format, or the kind given to phys_warning_kind):
// the first of each kind is kept with the number of times its kind was raised.
typedef struct physLog_ {
  physStatus status;                      // status of the last failing call
  char error[PHYS_MSGLEN];                // "file:line: <element>: what went wrong"
  int nwarning;                           // number of warnings raised, repeats included
  int nkind;                              // number of distinct kinds raised (may exceed PHYS_MAXWARN)
  char warning[PHYS_MAXWARN][256];        // the first warning of each of the first PHYS_MAXWARN kinds
  int count[PHYS_MAXWARN];                // how many warnings of that kind were raised
  const char* kind[PHYS_MAXWARN];         // the kind's key (a static string: the format)
  int quiet;                              // set by the caller: phys_log_print_warnings prints nothing
} physLog;

// record an error (printf-style); returns s so callers can `return phys_error(log, ...)`
physStatus phys_error(physLog* log, physStatus s, const char* fmt, ...)
    __attribute__((format(printf, 3, 4)));
// record a warning whose kind is its format string
void phys_warning(physLog* log, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
// record a warning of the given kind (a static string; wrappers that format "file:line: " first pass their
// caller's format) with the text fmt, ...
void phys_warning_kind(physLog* log, const char* kind, const char* fmt, ...) __attribute__((format(printf, 3, 4)));
// print the warnings to f: one line per kind, "warning: <first>" and " (and N more like it)" when
// repeated, then one line for the kinds beyond PHYS_MAXWARN; nothing when log->quiet. Returns the lines.
int phys_log_print_warnings(const physLog* log, FILE* f);
// forget the warnings (keeps the error and quiet)
void phys_log_clear_warnings(physLog* log);

//---------------------------------------------------------------------------------------------------------
// enums

typedef enum physJoint_ { PHYS_JNT_FREE = 0, PHYS_JNT_BALL, PHYS_JNT_SLIDE, PHYS_JNT_HINGE } physJointType;

typedef enum physGeom_ {
  PHYS_GEOM_PLANE = 0, PHYS_GEOM_SPHERE, PHYS_GEOM_CAPSULE, PHYS_GEOM_ELLIPSOID, PHYS_GEOM_CYLINDER,
  PHYS_GEOM_BOX, PHYS_GEOM_MESH, PHYS_NGEOMTYPE
} physGeomType;

typedef enum physTrn_ {
  PHYS_TRN_JOINT = 0,      // force gear*ctrl on a hinge/slide joint (or gear[0..5] on free/ball dofs)
  PHYS_TRN_SPRING,         // tension gear*ctrl along a spring (MJCF motor on a spatial tendon)
  PHYS_TRN_RESTLENGTH,     // ctrl sets the spring's rest length: L0 = spring_restlength + gear*ctrl
  PHYS_TRN_SITE,           // force gear[0..2]*f and torque gear[3..5]*f at a site, in the site's frame (MuJoCo's
                           // mjTRN_SITE without refsite)
  PHYS_TRN_SLIDERCRANK,    // MuJoCo's slider-crank: length a'v - sqrt((a'v)^2 + r^2 - v'v) of the crank site (trnid)
                           // seen from the slider site (trnid2, axis a its z) with rod length r (cranklength)
  PHYS_TRN_BODY            // MuJoCo's adhesion (mjTRN_BODY): force f pulls body trnid along the normals of its
                           // contacts, moment -(1/n) sum of their normal rows (src/contact/adhesion.c; length 0)
} physTrnType;

typedef enum physSpringType_ {
  PHYS_SPRING_PATH = 0,    // length along a path of sites (MJCF spatial tendon through sites)
  PHYS_SPRING_FIXED        // length sum_k coef_k q(joint_k) of hinge/slide joints (MJCF fixed tendon)
} physSpringType;

typedef enum physWrapType_ {
  PHYS_WRAP_SITE = 0,      // a site of a spatial path
  PHYS_WRAP_JOINT,         // a joint of a fixed tendon (prm: its coefficient)
  PHYS_WRAP_PULLEY,        // a pulley: the path branches; later segments count 1/divisor (prm)
  PHYS_WRAP_SPHERE,        // a sphere geom the path between two sites wraps (prm: side site or -1)
  PHYS_WRAP_CYLINDER       // a cylinder geom likewise, on its circle projection with a helix
} physWrapType;

// actuator dynamics (MuJoCo 2.2.2's mjtDyn none, integrator, filter): the actuator's input is ctrl (none) or
// its activation act, advanced by the step with act_dot = ctrl (integrator) or (ctrl - act) / dynprm[0] (filter)
// (muscle: MuJoCo 2.2.2's mju_muscleDynamics with the activation and deactivation time constants dynprm[0..1])
typedef enum physDyn_ { PHYS_DYN_NONE = 0, PHYS_DYN_INTEGRATOR, PHYS_DYN_FILTER, PHYS_DYN_MUSCLE } physDynType;
// an actuator's gain or bias type: affine (MuJoCo's fixed and affine: actuator_gainprm / biasprm) or MuJoCo
// 2.2.2's muscle (mju_muscleGain / mju_muscleBias of the actuator's length and velocity, actuator_muscleprm)
typedef enum physGain_ { PHYS_GAIN_AFFINE = 0, PHYS_GAIN_MUSCLE } physGainType;

// time integrators (option integrator; CLI --integrator): semi-implicit Euler (MuJoCo 2.2.2's mj_Euler), backward
// Euler linearized on the passive forces (springs and dampers of joints, paths and tendons; src/step/step.h
// phys_implicit_acc; issue 16 item 4), and position-based dynamics in maximal coordinates (XPBD, src/step/pbd.c;
// issue 17 item 1, options pbd_* below)
typedef enum physIntegrator_ { PHYS_INT_EULER = 0, PHYS_INT_IMPLICIT = 1, PHYS_INT_PBD = 2 } physIntegrator;

// sensor types (MJCF <sensor> children; MuJoCo 2.2.2's definitions, docs/mjcf.md), with their stage: position
// (jointpos, framepos, framequat, subtreecom), velocity (jointvel, framelinvel, frameangvel, gyro,
// velocimeter), acceleration (actuatorfrc, accelerometer, force, torque, touch: need the step's qacc and forces)
typedef enum physSensor_ {
  PHYS_SENS_JOINTPOS = 0,  // hinge/slide joint position (1)
  PHYS_SENS_JOINTVEL,      // hinge/slide joint velocity (1)
  PHYS_SENS_ACTUATORFRC,   // actuator force, before the gear (1)
  PHYS_SENS_FRAMEPOS,      // position of a body (com frame), xbody, geom or site, world (3)
  PHYS_SENS_FRAMEQUAT,     // orientation quaternion, w first (4)
  PHYS_SENS_FRAMELINVEL,   // linear velocity of the object's origin, world (3)
  PHYS_SENS_FRAMEANGVEL,   // angular velocity, world (3)
  PHYS_SENS_ACCELEROMETER, // linear acceleration minus gravity of a site's origin, site frame (3)
  PHYS_SENS_GYRO,          // angular velocity, site frame (3)
  PHYS_SENS_VELOCIMETER,   // linear velocity of a site's origin, site frame (3)
  PHYS_SENS_FORCE,         // force the parent exerts on the site's body's subtree, site frame (3)
  PHYS_SENS_TORQUE,        // torque of that interaction about the site, site frame (3)
  PHYS_SENS_TOUCH,         // sum of contact normal forces on the site's body inside the site's zone (1)
  PHYS_SENS_SUBTREECOM,    // centre of mass of a body's subtree, world (3)
  PHYS_NSENSTYPE
} physSensorType;

// objects a frame sensor is attached to (MuJoCo's objtype; body = the body's inertial frame)
// equality constraint types (MJCF <equality>, MuJoCo 2.2.2's mjtEq order) and their eq_data layout:
//   connect: data[0..2] anchor in body1's frame, data[3..5] the same point in body2's frame at qpos0;
//            residual p1 - p2 (3 rows)
//   weld:    data[0..2] anchor in body2's frame (0), data[3..5] body2's anchor in body1's frame and
//            data[6..9] body2's orientation relative to body1 (relpose, or from qpos0), data[10] torquescale;
//            residual p1 - p2 (3 rows), torquescale * vec(conj(q2) q1 relquat) (3 rows)
//   joint:   data[0..4] polycoef: q1 - q1_0 = sum_k data[k] (q2 - q2_0)^k (1 row; no joint2: q1 - q1_0 = data[0])
//   tendon:  data[0..4] polycoef as joint with fixed tendons' lengths: L1 - L1_0 = sum_k data[k] (L2 - L2_0)^k,
//            L_0 the length at qpos0 (1 row; no tendon2: L1 - L1_0 = data[0]); obj1id/obj2id: spring ids
typedef enum physEq_ { PHYS_EQ_CONNECT = 0, PHYS_EQ_WELD, PHYS_EQ_JOINT, PHYS_EQ_TENDON } physEqType;
#define PHYS_EQ_NDATA 11

typedef enum physObj_ { PHYS_OBJ_NONE = 0, PHYS_OBJ_BODY, PHYS_OBJ_XBODY, PHYS_OBJ_JOINT, PHYS_OBJ_GEOM,
                        PHYS_OBJ_SITE, PHYS_OBJ_ACTUATOR } physObjType;

// site zone shape of a touch sensor (MJCF site type)
typedef enum physSiteType_ { PHYS_SITE_SPHERE = 0, PHYS_SITE_CAPSULE, PHYS_SITE_ELLIPSOID, PHYS_SITE_CYLINDER,
                             PHYS_SITE_BOX } physSiteType;

// MJCF name of a sensor type ("jointpos", ...) and back (-1 if unknown); its number of values
const char* phys_sensor_name(int type);
int phys_sensor_from_name(const char* name);
int phys_sensor_dim(int type);

// frictional contact models (DESIGN.md section 4); a model option, overridable from the API and CLI
typedef enum physContactModel_ {
  PHYS_CONTACT_LCP = 0,    // boxed LCP with a 4-sided friction pyramid, exact pivoting (paper 001, Nimble)
  PHYS_CONTACT_CONE,       // staggered projections with the exact Coulomb cone: QP + QCQP by ADMM (paper 000)
  PHYS_CONTACT_CCP,        // Anitescu's convex relaxation: one second-order-cone program
  PHYS_CONTACT_PENALTY,    // spring-damper normal force, regularized Coulomb friction (paper 002)
  PHYS_NCONTACTMODEL
} physContactModel;

// name of a contact model ("lcp", "cone", "ccp", "penalty") and back (-1 if unknown)
const char* phys_contact_name(int model);
int phys_contact_from_name(const char* name);

// disable flags (option disableflags); contact and limit constraints come with the contact layer
enum {
  PHYS_DSBL_CONTACT = 1 << 0,
  PHYS_DSBL_LIMIT = 1 << 1,
  PHYS_DSBL_GRAVITY = 1 << 2,
  PHYS_DSBL_PASSIVE = 1 << 3,     // joint springs/dampers and spring forces
  PHYS_DSBL_EULERDAMP = 1 << 4,   // integrate joint damping explicitly instead of implicitly
  PHYS_DSBL_ACTUATION = 1 << 5,
  PHYS_DSBL_SELFCOLLISION = 1 << 6, // geoms of one kinematic tree (same body_rootid) do not collide
  PHYS_DSBL_EQUALITY = 1 << 7,      // equality constraints do not act (MJCF <flag equality="disable">)
  PHYS_DSBL_ISLAND = 1 << 8         // lcp, cone, ccp solve the whole constraint problem at once instead of
                                    // island by island (src/contact/island.c; the same solution to rounding)
};

// enable flags (option enableflags)
enum {
  PHYS_ENBL_ENERGY = 1 << 0,  // phys_step checks energy: a step without work input that gains energy beyond
                              // a tolerance counts a PHYS_WARN_ENERGY warning (src/step/step.c)
  PHYS_ENBL_SENSORNOISE = 1 << 1  // MJCF <flag sensornoise="enable">: `simulate --sensors` writes noisy values
                              // (phys_sensor_noise); d->sensordata itself stays noise-free
};

//---------------------------------------------------------------------------------------------------------
// physModel: sizes, options, then arrays that all point into one buffer
//
// Field table (X-macro): X(type, name, count, multiplier): array `name` holds count*multiplier values.

#define PHYS_MODEL_ARRAYS(X)                                                                               \
  /* joint state */                                                                                        \
  X(double, qpos0, nq, 1)                /* default configuration (ref for hinge/slide)        (nq x 1) */ \
  X(double, qpos_spring, nq, 1)          /* joint spring reference configuration               (nq x 1) */ \
  /* bodies (body 0 is the world) */                                                                       \
  X(int, body_parentid, nbody, 1)        /* parent body id (-1 for the world)               (nbody x 1) */ \
  X(int, body_rootid, nbody, 1)          /* top-most ancestor below the world               (nbody x 1) */ \
  X(int, body_jntnum, nbody, 1)          /* number of joints of this body                   (nbody x 1) */ \
  X(int, body_jntadr, nbody, 1)          /* first joint id (-1 if none)                     (nbody x 1) */ \
  X(int, body_dofnum, nbody, 1)          /* number of dofs of this body                     (nbody x 1) */ \
  X(int, body_dofadr, nbody, 1)          /* first dof id (-1 if none)                       (nbody x 1) */ \
  X(int, body_geomnum, nbody, 1)         /* number of geoms                                 (nbody x 1) */ \
  X(int, body_geomadr, nbody, 1)         /* first geom id (-1 if none)                      (nbody x 1) */ \
  X(int, body_name, nbody, 1)            /* name address in names (-1 if unnamed)          (nbody x 1) */ \
  X(double, body_pos, nbody, 3)          /* position in the parent frame (joint placement)  (nbody x 3) */ \
  X(double, body_quat, nbody, 4)         /* orientation in the parent frame, w first        (nbody x 4) */ \
  X(double, body_ipos, nbody, 3)         /* centre of mass in the body frame                (nbody x 3) */ \
  X(double, body_iquat, nbody, 4)        /* principal inertia frame in the body frame       (nbody x 4) */ \
  X(double, body_mass, nbody, 1)         /* mass                                            (nbody x 1) */ \
  X(double, body_inertia, nbody, 3)      /* principal moments about the centre of mass      (nbody x 3) */ \
  X(double, body_subtreemass, nbody, 1)  /* mass of the subtree rooted here                 (nbody x 1) */ \
  X(int, body_weldid, nbody, 1)          /* nearest ancestor-or-self with dofs (0: world)   (nbody x 1) */ \
  /* joints */                                                                                             \
  X(int, jnt_type, njnt, 1)              /* physJointType                                    (njnt x 1) */ \
  X(int, jnt_bodyid, njnt, 1)            /* body the joint moves                             (njnt x 1) */ \
  X(int, jnt_qposadr, njnt, 1)           /* start address in qpos                            (njnt x 1) */ \
  X(int, jnt_dofadr, njnt, 1)            /* start address in qvel                            (njnt x 1) */ \
  X(int, jnt_limited, njnt, 1)           /* 1 if the joint has a range                       (njnt x 1) */ \
  X(int, jnt_name, njnt, 1)              /* name address in names                            (njnt x 1) */ \
  X(double, jnt_pos, njnt, 3)            /* anchor in the body frame                         (njnt x 3) */ \
  X(double, jnt_axis, njnt, 3)           /* unit axis in the body frame (hinge/slide)        (njnt x 3) */ \
  X(double, jnt_stiffness, njnt, 1)      /* spring stiffness towards qpos_spring             (njnt x 1) */ \
  X(double, jnt_range, njnt, 2)          /* lower, upper limit (rad or m)                    (njnt x 2) */ \
  /* degrees of freedom */                                                                                 \
  X(int, dof_bodyid, nv, 1)              /* body of this dof                                   (nv x 1) */ \
  X(int, dof_jntid, nv, 1)               /* joint of this dof                                  (nv x 1) */ \
  X(int, dof_parentid, nv, 1)            /* previous dof on the path to the root (-1 at root)  (nv x 1) */ \
  X(double, dof_damping, nv, 1)          /* viscous damping                                    (nv x 1) */ \
  X(double, dof_armature, nv, 1)         /* rotor inertia added to the mass matrix diagonal    (nv x 1) */ \
  X(double, dof_frictionloss, nv, 1)     /* dry friction: |constraint force| <= frictionloss   (nv x 1) */ \
  /* geoms */                                                                                              \
  X(int, geom_type, ngeom, 1)            /* physGeomType                                    (ngeom x 1) */ \
  X(int, geom_bodyid, ngeom, 1)          /* body id                                         (ngeom x 1) */ \
  X(int, geom_contype, ngeom, 1)         /* contact type bitmask                            (ngeom x 1) */ \
  X(int, geom_conaffinity, ngeom, 1)     /* contact affinity bitmask                        (ngeom x 1) */ \
  X(int, geom_condim, ngeom, 1)          /* contact dimensionality (1, 3, 4, 6)             (ngeom x 1) */ \
  X(int, geom_dataid, ngeom, 1)          /* mesh id (-1 if not a mesh)                      (ngeom x 1) */ \
  X(int, geom_name, ngeom, 1)            /* name address in names                           (ngeom x 1) */ \
  X(double, geom_pos, ngeom, 3)          /* position in the body frame                      (ngeom x 3) */ \
  X(double, geom_quat, ngeom, 4)         /* orientation in the body frame                   (ngeom x 4) */ \
  X(double, geom_size, ngeom, 3)         /* type-specific sizes as in MJCF                  (ngeom x 3) */ \
  X(double, geom_friction, ngeom, 3)     /* sliding, torsional, rolling friction            (ngeom x 3) */ \
  X(double, geom_restitution, ngeom, 1)  /* coefficient of restitution in [0,1]             (ngeom x 1) */ \
  X(double, geom_margin, ngeom, 1)       /* contact detection margin                        (ngeom x 1) */ \
  X(double, geom_rbound, ngeom, 1)       /* radius of the bounding sphere (0: infinite)     (ngeom x 1) */ \
  X(double, geom_rgba, ngeom, 4)         /* colour                                          (ngeom x 4) */ \
  X(double, geom_visrgba, ngeom, 4)      /* colour drawn: the material's when MuJoCo draws it (ngeom x 4) */ \
  /* sites */                                                                                              \
  X(int, site_bodyid, nsite, 1)          /* body id                                         (nsite x 1) */ \
  X(int, site_name, nsite, 1)            /* name address in names                           (nsite x 1) */ \
  X(double, site_pos, nsite, 3)          /* position in the body frame                      (nsite x 3) */ \
  X(double, site_quat, nsite, 4)         /* orientation in the body frame                   (nsite x 4) */ \
  X(int, site_type, nsite, 1)            /* physSiteType (a touch sensor's zone)            (nsite x 1) */ \
  X(double, site_size, nsite, 3)         /* zone sizes as MJCF site size                    (nsite x 3) */ \
  /* point-to-point springs (MJCF spatial tendons through sites): path of sites */                          \
  X(int, spring_adr, nspring, 1)         /* first entry in spring_site                    (nspring x 1) */ \
  X(int, spring_num, nspring, 1)         /* number of sites in the path (>= 2)            (nspring x 1) */ \
  X(int, spring_name, nspring, 1)        /* name address in names                         (nspring x 1) */ \
  X(double, spring_stiffness, nspring, 1) /* tension = stiffness*(L - L0) (both signs) ... (nspring x 1) */ \
  X(double, spring_damping, nspring, 1)  /* ... - damping*dL/dt                           (nspring x 1) */ \
  X(double, spring_restlength, nspring, 1) /* rest length L0                              (nspring x 1) */ \
  X(int, spring_site, nspringsite, 1)    /* object ids: site, joint or geom (pulley -1) (nspringsite x 1) */ \
  /* issue 15 item 3 (tendons): fixed tendons L = sum coef_k q(joint_k) over hinge/slide joints; spatial   \
     paths through sites, wrapping sphere and cylinder geoms, split by pulleys (MuJoCo's wrap_type/prm) */ \
  X(int, spring_type, nspring, 1)        /* physSpringType: site path or fixed            (nspring x 1) */ \
  X(int, spring_objtype, nspringsite, 1) /* physWrapType of each path entry           (nspringsite x 1) */ \
  X(double, spring_prm, nspringsite, 1)  /* joint: coef; geom: side site or -1; pulley: divisor; site: 0 (nspringsite x 1) */ \
  /* issue 15 item 3 (tendon limits and frictionloss, session 28): constraint rows (src/contact/tendon_rows.c) */ \
  X(int, spring_limited, nspring, 1)     /* 1 if the length is limited to spring_range    (nspring x 1) */ \
  X(double, spring_range, nspring, 2)    /* lower, upper length limit (m; fixed: its units) (nspring x 2) */ \
  X(double, spring_frictionloss, nspring, 1) /* dry friction along the tendon: |force| <= it (nspring x 1) */ \
  /* actuators */                                                                                          \
  X(int, actuator_trntype, nu, 1)        /* physTrnType                                        (nu x 1) */ \
  X(int, actuator_trnid, nu, 1)          /* joint or spring id                                 (nu x 1) */ \
  X(int, actuator_ctrllimited, nu, 1)    /* 1 if ctrl is clamped to ctrlrange                  (nu x 1) */ \
  X(int, actuator_name, nu, 1)           /* name address in names                              (nu x 1) */ \
  X(double, actuator_gear, nu, 6)        /* transmission gain (gear[0] for 1-dof targets)      (nu x 6) */ \
  X(double, actuator_ctrlrange, nu, 2)   /* control range                                      (nu x 2) */ \
  X(double, actuator_gainprm, nu, 3)     /* gain g0 + g1 L + g2 Ldot (MuJoCo gainprm[0..2])    (nu x 3) */ \
  X(double, actuator_biasprm, nu, 3)     /* bias b0 + b1 L + b2 Ldot (MuJoCo biasprm[0..2])    (nu x 3) */ \
  /* actuator dynamics and limits (issue 15 item 2) */                                                     \
  X(int, actuator_dyntype, nu, 1)        /* physDynType                                        (nu x 1) */ \
  X(int, actuator_actadr, nu, 1)         /* its activation's index in act (-1: none)           (nu x 1) */ \
  X(int, actuator_forcelimited, nu, 1)   /* 1 if the force is clamped to forcerange            (nu x 1) */ \
  X(int, actuator_actlimited, nu, 1)     /* 1 if the activation is clamped to actrange         (nu x 1) */ \
  X(double, actuator_dynprm, nu, 3)      /* dynamics parameters (filter: dynprm[0] = tau)      (nu x 3) */ \
  X(double, actuator_forcerange, nu, 2)  /* force range                                        (nu x 2) */ \
  X(double, actuator_actrange, nu, 2)    /* activation range                                   (nu x 2) */ \
  /* muscles and slider-crank transmissions (issue 15 items 2 and 6, session 28; src/dyn/muscle.c) */      \
  X(int, actuator_gaintype, nu, 1)       /* physGainType (muscle: actuator_muscleprm[0..8])    (nu x 1) */ \
  X(int, actuator_biastype, nu, 1)       /* physGainType (muscle: actuator_muscleprm[9..17])   (nu x 1) */ \
  X(double, actuator_muscleprm, nu, 18)  /* MuJoCo's muscle gainprm[0..8], biasprm[0..8]      (nu x 18) */ \
  X(double, actuator_lengthrange, nu, 2) /* actuator length range (muscles' normalization)     (nu x 2) */ \
  X(double, actuator_acc0, nu, 1)        /* |M^-1 moment| at qpos0 (muscles: force = scale/acc0) (nu x 1) */ \
  X(int, actuator_trnid2, nu, 1)         /* slider-crank: the slider site (-1 otherwise)       (nu x 1) */ \
  X(double, actuator_cranklength, nu, 1) /* slider-crank: the rod's length                     (nu x 1) */ \
  /* meshes */                                                                                             \
  X(int, mesh_vertadr, nmesh, 1)         /* first vertex                                    (nmesh x 1) */ \
  X(int, mesh_vertnum, nmesh, 1)         /* number of vertices                              (nmesh x 1) */ \
  X(int, mesh_faceadr, nmesh, 1)         /* first face                                      (nmesh x 1) */ \
  X(int, mesh_facenum, nmesh, 1)         /* number of faces                                 (nmesh x 1) */ \
  X(int, mesh_name, nmesh, 1)            /* name address in names                           (nmesh x 1) */ \
  X(double, mesh_vert, nmeshvert, 3)     /* vertices in the geom frame (scaled)         (nmeshvert x 3) */ \
  X(int, mesh_face, nmeshface, 3)        /* triangles (vertex indices within the mesh)  (nmeshface x 3) */ \
  /* convex hulls of the meshes (src/model/hull.c, qhull at compile time); faces are merged coplanar polygons */ \
  X(int, mesh_hulladr, nmesh, 1)         /* first entry in hull_vert                        (nmesh x 1) */ \
  X(int, mesh_hullnum, nmesh, 1)         /* number of hull vertices (0: no hull)            (nmesh x 1) */ \
  X(int, mesh_hullfaceadr, nmesh, 1)     /* first hull face                                 (nmesh x 1) */ \
  X(int, mesh_hullfacenum, nmesh, 1)     /* number of hull faces                            (nmesh x 1) */ \
  X(int, hull_vert, nhullvert, 1)        /* hull vertices (vertex indices within the mesh) (nhullvert x 1) */ \
  X(double, hull_facenormal, nhullface, 4) /* outward unit normal n, offset b: n.x <= b inside (nhullface x 4) */ \
  X(int, hull_faceadr, nhullface, 1)     /* first entry of the face in hull_facevert      (nhullface x 1) */ \
  X(int, hull_facenum, nhullface, 1)     /* vertices of the face (>= 3)                   (nhullface x 1) */ \
  X(int, hull_facevert, nhullfacevert, 1) /* face polygons, counterclockwise seen from outside, vertex indices within the mesh (nhullfacevert x 1) */ \
  /* issue 14 item 2 (vertices:GEOM): a learned mesh's hull regions are reserved for any hull of its vertices */ \
  X(int, mesh_hullcap, nmesh, 1)         /* 0: hull fixed; N: regions for N vertices, 2N-4 faces, 6N-12 face vertices (phys_hull_rebuild) (nmesh x 1) */ \
  /* explicit contact pairs (MJCF <contact><pair>) and excluded body pairs (<exclude>) */                  \
  X(int, pair_geom1, npair, 1)           /* first geom                                      (npair x 1) */ \
  X(int, pair_geom2, npair, 1)           /* second geom                                     (npair x 1) */ \
  X(double, pair_friction, npair, 1)     /* sliding friction of the pair                    (npair x 1) */ \
  X(double, pair_restitution, npair, 1)  /* restitution of the pair                         (npair x 1) */ \
  X(double, pair_margin, npair, 1)       /* detection margin of the pair                    (npair x 1) */ \
  X(int, exclude_body1, nexclude, 1)     /* first body                                   (nexclude x 1) */ \
  X(int, exclude_body2, nexclude, 1)     /* second body                                  (nexclude x 1) */ \
  /* issue 15 item 1: equality constraints (MJCF <equality>; src/dyn/equality.c)                  */     \
  X(int, eq_type, neq, 1)                /* physEqType                                        (neq x 1) */ \
  X(int, eq_name, neq, 1)                /* name address in names (-1: unnamed; issue 15 item 2) (neq x 1) */ \
  X(int, eq_obj1id, neq, 1)              /* body1 (connect, weld) or joint1 (joint)           (neq x 1) */ \
  X(int, eq_obj2id, neq, 1)              /* body2 (0: world) or joint2 (-1: none)             (neq x 1) */ \
  X(int, eq_active, neq, 1)              /* 1 if the constraint acts                          (neq x 1) */ \
  X(double, eq_solref, neq, 2)           /* MuJoCo solref (penalty's spring and damper)       (neq x 2) */ \
  X(double, eq_solimp, neq, 5)           /* MuJoCo solimp (penalty reads solimp[1])           (neq x 5) */ \
  X(double, eq_data, neq, 11)            /* MuJoCo 2.2.2's eq_data layout (physEqType)       (neq x 11) */ \
  /* sensors (MJCF <sensor>) */                                                                           \
  X(int, sensor_type, nsensor, 1)        /* physSensorType                                (nsensor x 1) */ \
  X(int, sensor_objtype, nsensor, 1)     /* physObjType of the object sensed              (nsensor x 1) */ \
  X(int, sensor_objid, nsensor, 1)       /* its id                                        (nsensor x 1) */ \
  X(int, sensor_dim, nsensor, 1)         /* number of values                              (nsensor x 1) */ \
  X(int, sensor_adr, nsensor, 1)         /* first value in sensordata                     (nsensor x 1) */ \
  X(int, sensor_name, nsensor, 1)        /* name address in names (-1 if unnamed)         (nsensor x 1) */ \
  X(double, sensor_cutoff, nsensor, 1)   /* > 0: |value| clamped to it (touch: above)     (nsensor x 1) */ \
  X(double, sensor_noise, nsensor, 1)    /* noise standard deviation (phys_sensor_noise)  (nsensor x 1) */ \
  /* keyframes */                                                                                          \
  X(double, key_time, nkey, 1)           /* time                                             (nkey x 1) */ \
  X(double, key_qpos, nkey, nq)          /* configuration                                   (nkey x nq) */ \
  X(double, key_qvel, nkey, nv)          /* velocity                                        (nkey x nv) */ \
  X(double, key_ctrl, nkey, nu)          /* control                                         (nkey x nu) */ \
  X(double, key_act, nkey, na)           /* activations (issue 15 item 2)                   (nkey x na) */ \
  X(int, key_name, nkey, 1)              /* name address in names                            (nkey x 1) */ \
  /* names: concatenated zero-terminated strings */                                                        \
  X(char, names, nnames, 1)              /* all names                                      (nnames x 1) */

// simulation options (MJCF <option>)
typedef struct physOption_ {
  double timestep;          // simulation step (s)
  double gravity[3];        // gravitational acceleration (m/s^2)
  int integrator;           // physIntegrator
  int disableflags;         // PHYS_DSBL_* bits
  int enableflags;          // PHYS_ENBL_* bits (default 0)
  // contact
  int contact;              // physContactModel (default lcp)
  double baumgarte;         // beta of the drift stabilization beta*min(phi,0)/dt in [0,1] (default 0.2)
  double penalty_stiffness; // penalty normal stiffness k_c (N/m, default 1e4)
  double penalty_damping;   // penalty joint-limit damping (N s/m or N m s/rad, default 1e2); contact damping
                            // comes from each contact's restitution (src/contact/penalty.c)
  double penalty_vslip;     // penalty friction regularization velocity (m/s, default 1e-3)
  int solver_iterations;    // iteration cap of iterative solvers (ADMM; default 100)
  double solver_tolerance;  // residual tolerance of iterative solvers (default 1e-10)
  int gradflags;            // PHYS_GRAD_* bits: options of the step's derivatives (default 0)
  // issue 17 item 1: the pbd integrator (PHYS_INT_PBD, src/step/pbd.c)
  int pbd_substeps;         // substeps per step (default 20)
  int pbd_iterations;       // constraint sweeps per substep (default 1)
  int pbd_jacobi;           // 1: Jacobi sweeps (corrections averaged per body); 0: Gauss-Seidel (default)
  double pbd_compliance;    // XPBD compliance of the joint constraints (m/N and rad/(N m); default 0: rigid)
} physOption;

// gradient options (option gradflags; MJCF <custom><text name="physid:grad" data="toi complementarity"/>)
enum {
  PHYS_GRAD_TOI = 1 << 0,            // time-of-impact correction of elastic bounces (paper 001 VI)
  PHYS_GRAD_COMPLEMENTARITY = 1 << 1 // complementarity-aware lcp gradients (paper 001 IV-D)
};

typedef struct physModel_ {
  // sizes
  int nq;                   // number of generalized coordinates
  int nv;                   // number of degrees of freedom
  int nbody;                // number of bodies, including the world body 0
  int njnt;                 // number of joints
  int ngeom;                // number of geoms
  int nsite;                // number of sites
  int nspring;              // number of point-to-point springs
  int nspringsite;          // total number of sites in spring paths
  int nu;                   // number of actuators (controls)
  int na;                   // number of activations (actuators with dynamics; issue 15 item 2)
  int nmesh;                // number of meshes
  int nmeshvert;            // total mesh vertices
  int nmeshface;            // total mesh triangles
  int nhullvert;            // total convex-hull vertices of all meshes
  int nhullface;            // total convex-hull faces (polygons)
  int nhullfacevert;        // total vertex entries of the hull faces
  int nkey;                 // number of keyframes
  int nsensor;              // number of sensors
  int nsensordata;          // values of all sensors (sum of sensor_dim)
  int npair;                // number of explicit contact pairs
  int nexclude;             // number of excluded body pairs
  int neq;                  // number of equality constraints (issue 15 item 1)
  int nconmax;              // capacity of the contact list (MJCF <size nconmax>; default from the geoms)
  int nfrictionloss;        // dofs with dof_frictionloss > 0 (derived: the compiler and phys_param_set keep it;
                            // recount it after changing dof_frictionloss by hand)
  int nnames;               // bytes in names

  physOption opt;           // options
  char modelname[128];      // model name
  char filename[512];       // file it was loaded from

  // arrays, all in one buffer
#define PHYS_X_DECL(type, name, n, m) type* name;
  PHYS_MODEL_ARRAYS(PHYS_X_DECL)
#undef PHYS_X_DECL

  void* buffer;             // the single allocation the arrays point into
  size_t nbuffer;           // its size in bytes
  struct physMlp_* residual;  // residual acceleration network added to the dynamics (src/step/residual.h;
                              // owned: phys_free_model frees it, phys_copy_model copies it; NULL: none)
} physModel;

//---------------------------------------------------------------------------------------------------------
// contacts

#define PHYS_MAXPAIRCON 8    // most contact points one geom pair produces (a box face on a box: 8, reduced to 4)

// row classification of a constraint row after a solve (what the VJP of the solver needs)
typedef enum physRowState_ {
  PHYS_ROW_SEPARATING = 0,  // lambda = 0 and the row's velocity is positive (or no force needed)
  PHYS_ROW_CLAMPING,        // lambda strictly inside its bounds: the row's velocity is 0
  PHYS_ROW_UPPER,           // friction at +mu*lambda_n (pyramid) or on the cone's surface (cone, ccp)
  PHYS_ROW_LOWER            // friction at -mu*lambda_n (pyramid)
} physRowState;

// the feature of a geom that produced a contact point (physContact.feature): PHYS_FEATURE(kind, index), with
// PHYS_FEATURE_FLAGGED(kind, index, flags) for how the point was produced where the feature alone does not say.
// Indices:
//  - plane: FACE 0;  sphere, ellipsoid: SURFACE 0;
//  - capsule: VERTEX 0 / 1 = the end of its axis segment at -h / +h (local z), EDGE 0 = a point inside the segment
//    (the closest-point solve); against a box face EDGE 1 / 2 = where the segment enters / leaves the face's
//    prism (clipped at a side plane); on the second contact of nearly parallel capsules EDGE 3 / 4 = the point
//    facing the other capsule's -h / +h end;
//  - box (half sizes s, local axes 0..2): VERTEX v = the corner (+-s_0, +-s_1, +-s_2) with bit k of v set for +s_k;
//    EDGE 4a + b = the edge along axis a at the signs of axes (a+1)%3 (bit 0 of b set: +) and (a+2)%3 (bit 1);
//    FACE 2k + (1 on the +s_k side, 0 on the -s_k side);
//  - cylinder (radius r, half-height h, axis local z): FACE 0 / 1 = the cap at -h / +h; SURFACE 0 = the curved
//    side; EDGE c = the rim of cap c (0: -h, 1: +h); a plane-cylinder rim point EDGE c + 2 q, q = 0..3 the rim
//    direction u, v, -u, -v (u: the rim direction deepest below the plane, v = axis x u: primitive.c);
//  - mesh: VERTEX i = hull vertex i (the i-th of the mesh's hull vertices); FACE f = hull face f;
//  - a clipped point of a manifold of the GJK/EPA pairs (convex.h): the reference face (a box's or mesh's FACE, a
//    cylinder's cap) flagged PHYS_FEATF_REF and the incident feature (a face, a cylinder's cap or SURFACE side, a
//    capsule's EDGE 0) flagged PHYS_FEATF_INC; the point's number among the clipped points in physContact.clip,
//    and a cylinder's rim polygon angle in physContact.featangle;
//  - the single witness point of the GJK/EPA pairs: flagged PHYS_FEATF_WITNESS, with PHYS_FEATF_INSIDE when the
//    (cores of the) shapes overlap (EPA); on a polytope (box corners, mesh hull vertices, a sphere's centre or a
//    capsule's segment as a core) a geom's VERTEX, EDGE or FACE when 1, 2 or 3 distinct support vertices of it span
//    the simplex (its first vertex's id the index), the vertices in physContact.witness; on a smooth patch
//    (witness -1) a cylinder's rim EDGE c, its side SURFACE 0 or its cap FACE c, an ellipsoid's SURFACE 0, the
//    other geom's feature then the distinct support vertices its point combines (witness: their ids ascending);
//  - the two points of a line contact of parallel sides of the GJK/EPA pairs (cylinder-cylinder, capsule-cylinder):
//    geom[0]'s side (a cylinder's SURFACE 0, a capsule's EDGE 0) flagged PHYS_FEATF_REF, geom[1]'s flagged
//    PHYS_FEATF_INC, the overlap's end (0 low, 1 high along geom[0]'s axis) in physContact.clip, the cylinders' side
//    angles in physContact.featangle; the normal is perpendicular to geom[0]'s axis, towards geom[1]'s centre;
//  - UNKNOWN: not recorded.
// Flags (PHYS_FEATURE_FLAGS): PHYS_FEATF_REF / PHYS_FEATF_INC: the point is a clipped point of a face manifold and
// this geom holds the reference face / the incident feature, for box-box with the face's axis PHYS_FEATURE_AXIS (a
// box-box contact without them comes from an edge axis: the closest points of two edges); PHYS_FEATF_INSIDE: the
// core of this geom (a sphere's centre, a capsule's segment) lies inside the other geom (the penetration branch of
// sphere-box, sphere-cylinder, capsule-box; the overlapping cores of a GJK/EPA witness point); PHYS_FEATF_WITNESS:
// a GJK/EPA witness point (physContact.witness).
typedef enum physFeatureKind_ {
  PHYS_FEAT_UNKNOWN = 0,
  PHYS_FEAT_SURFACE,
  PHYS_FEAT_FACE,
  PHYS_FEAT_EDGE,
  PHYS_FEAT_VERTEX
} physFeatureKind;
enum { PHYS_FEATF_REF = 1, PHYS_FEATF_INC = 2, PHYS_FEATF_INSIDE = 4, PHYS_FEATF_WITNESS = 8 };
#define PHYS_FEATURE(kind, index) ((int)(index) << 12 | (int)(kind))
#define PHYS_FEATURE_FLAGGED(kind, index, flags) (PHYS_FEATURE(kind, index) | (int)(flags) << 4)
#define PHYS_FEATURE_AXIS_FLAG(axis) ((int)(axis) << 4)   // the flags of PHYS_FEATURE_AXIS = axis
#define PHYS_FEATURE_KIND(f) ((f) & 0xf)
#define PHYS_FEATURE_INDEX(f) ((f) >> 12)
#define PHYS_FEATURE_FLAGS(f) ((f) >> 4 & 0xf)
#define PHYS_FEATURE_AXIS(f) ((f) >> 8 & 0x3)
#define PHYS_FEATURE_BASE(f) ((f) & ~0xff0)   // kind and index without the flags and axis

// one contact point between two geoms
typedef struct physContact_ {
  double pos[3];            // point midway between the two surfaces, world
  double frame[9];          // rows: normal (pointing from geom[0] to geom[1]), tangent 1, tangent 2
  double dist;              // signed distance between the surfaces along the normal (< 0: penetration)
  double mu;                // sliding friction of the pair (max of the geoms', or the <pair>'s)
  double restitution;       // restitution of the pair (max of the geoms', or the <pair>'s)
  int geom[2];              // geom ids, geom[0] < geom[1] unless from a <pair>
  int pair;                 // index of the explicit <pair> (-1: from the broad phase)
  int feature[2];           // the features of geom[0], geom[1] that produced it (PHYS_FEATURE, physFeatureKind)
  int pairflip;             // 1: its pair function (phys_collide_fn of the geom types) ran with geom[1] first (the
                            // lower type; the lower id for equal types) and wrote the normal -frame row 0
  int pairout;              // its number among that call's outputs (a call's outputs are consecutive in d->contact)
  int witness[2][3];        // a single witness point of the GJK/EPA pairs (features flagged PHYS_FEATF_WITNESS): the
                            // support vertices of geom[0], geom[1] forming the final GJK simplex or EPA face, vertex
                            // i of one paired with vertex i of the other (a box's corner numbered as its VERTEX, a
                            // mesh's hull vertex number, a capsule's end 0 / 1, a sphere's centre 0), -1 past its size;
                            // against a smooth patch (feature doc above) only the polytope's distinct vertices
  int clip;                 // a clipped point of a GJK/EPA face manifold: its number among the clipped points; a
                            // line contact's point (features above): its overlap end 0 / 1; else -1
  double featangle[2];      // a clipped point of a GJK/EPA face manifold with a cylinder (geom[0], geom[1]): the angle
                            // in the cylinder's frame of its cap polygon's first vertex or side segment, atan2 of the
                            // direction its feature faced (the distance's normal); else 0
  int efc_adr;              // first of its 3 rows (normal, t1, t2) in the constraint problem (-1: none)
  double lambda[3];         // impulse (normal, t1, t2) from the last solve (N s), in frame coordinates
  int state[3];             // physRowState of each row after the last solve
} physContact;

//---------------------------------------------------------------------------------------------------------
// physData: state, computed quantities and a scratch arena, one allocation

#define PHYS_DATA_ARRAYS(X)                                                                                \
  /* state and inputs */                                                                                   \
  X(double, qpos, nq, 1)                 /* position                                           (nq x 1) */ \
  X(double, qvel, nv, 1)                 /* velocity                                           (nv x 1) */ \
  X(double, ctrl, nu, 1)                 /* control                                            (nu x 1) */ \
  X(double, act, na, 1)                  /* actuator activations (state)                       (na x 1) */ \
  X(double, qfrc_applied, nv, 1)         /* applied generalized force                          (nv x 1) */ \
  X(double, xfrc_applied, nbody, 6)      /* applied world force 3, torque 3 at the body com  (nbody x 6) */ \
  /* outputs of the step */                                                                                \
  X(double, qacc, nv, 1)                 /* acceleration                                       (nv x 1) */ \
  X(double, act_dot, na, 1)              /* activation rate (phys_actuation)                   (na x 1) */ \
  /* kinematics (phys_kinematics) */                                                                       \
  X(double, xpos, nbody, 3)              /* body frame position, world                       (nbody x 3) */ \
  X(double, xquat, nbody, 4)             /* body frame orientation, world                    (nbody x 4) */ \
  X(double, xmat, nbody, 9)              /* body frame rotation matrix, world                (nbody x 9) */ \
  X(double, xipos, nbody, 3)             /* centre of mass, world                            (nbody x 3) */ \
  X(double, ximat, nbody, 9)             /* principal inertia frame, world                   (nbody x 9) */ \
  X(double, xanchor, njnt, 3)            /* joint anchor, world                               (njnt x 3) */ \
  X(double, xaxis, njnt, 3)              /* joint axis, world                                 (njnt x 3) */ \
  X(double, geom_xpos, ngeom, 3)         /* geom position, world                             (ngeom x 3) */ \
  X(double, geom_xmat, ngeom, 9)         /* geom rotation, world                             (ngeom x 9) */ \
  X(double, site_xpos, nsite, 3)         /* site position, world                             (nsite x 3) */ \
  X(double, site_xmat, nsite, 9)         /* site rotation, world                             (nsite x 9) */ \
  /* spatial quantities, world-aligned, about the world origin: motion (ang, lin), force (torque, force) */ \
  X(double, cdof, nv, 6)                 /* motion subspace of each dof                        (nv x 6) */ \
  X(double, cinert, nbody, 10)           /* spatial inertia: mass, m*com (3), rot. inertia about origin (6: xx yy zz xy xz yz) (nbody x 10) */ \
  X(double, cvel, nbody, 6)              /* body spatial velocity                            (nbody x 6) */ \
  X(double, cdof_dot, nv, 6)             /* time derivative of cdof                            (nv x 6) */ \
  /* springs */                                                                                            \
  X(double, spring_length, nspring, 1)   /* current length                                (nspring x 1) */ \
  X(double, spring_velocity, nspring, 1) /* rate of change of the length                  (nspring x 1) */ \
  X(double, spring_force, nspring, 1)    /* tension (>= 0 pulls the sites together)       (nspring x 1) */ \
  /* generalized forces */                                                                                 \
  X(double, qfrc_bias, nv, 1)            /* Coriolis, centrifugal and gravity: c(q,v)          (nv x 1) */ \
  X(double, qfrc_passive, nv, 1)         /* joint springs, damping, spring forces              (nv x 1) */ \
  X(double, qfrc_actuator, nv, 1)        /* actuator forces                                    (nv x 1) */ \
  X(double, qM, nv, nv)                  /* joint-space inertia (dense; with armature)        (nv x nv) */ \
  X(double, qLD, nv, nv)                 /* M + dt*damping = L'DL on the dof tree (factor.h)  (nv x nv) */ \
  /* contacts (phys_collision) and their impulses (the contact solver) */                                 \
  X(physContact, contact, nconmax, 1)    /* contact list, d->ncon used                   (nconmax x 1) */ \
  X(physContact, contact_prev, nconmax, 1) /* the list the last step started from      (nconmax x 1) */ \
  X(double, qfrc_constraint, nv, 1)      /* J' lambda / dt of the last step                    (nv x 1) */ \
  /* sensors (src/dyn/sensor.c): at the state the last step started from, as MuJoCo's after mj_step */      \
  X(double, sensordata, nsensordata, 1)  /* sensor values, noise-free                  (nsensordata x 1) */

// kinds of the numerical warnings counted in physData (phys_data_warn): each kind keeps its count, the
// time of its first occurrence and its first message, so identical warnings aggregate into one line
typedef enum physWarning_ {
  PHYS_WARN_OTHER = 0,      // not classified (phys_data_warning)
  PHYS_WARN_OVERLAP,        // the initial state interpenetrates deeper than 1 mm (corrected by the step)
  PHYS_WARN_SOLVER,         // a contact solve stopped short of its tolerance (its best iterate is used)
  PHYS_WARN_SOLVER_FAILED,  // a contact solve failed (non-finite or singular problem): impulses set to 0
  PHYS_WARN_CONTACTS,       // contacts dropped beyond nconmax
  PHYS_WARN_ENERGY,         // a step without work input gained energy (PHYS_ENBL_ENERGY, phys_step)
  PHYS_WARN_REJECTED,       // step rejected (non-finite state, matrix not positive definite): state restored
  PHYS_NWARNKIND
} physWarning;

// short name of a warning kind ("solver not converged", ...; "unknown" out of range)
const char* phys_warning_name(int kind);

typedef struct physData_ {
  double time;              // simulation time
  int nwarning;             // numerical warnings raised during steps (all kinds)
  int warning_count[PHYS_NWARNKIND];    // warnings of each physWarning kind
  double warning_time[PHYS_NWARNKIND];  // d->time at the start of the step that raised the kind's first one
  char warning_first[PHYS_NWARNKIND][256];  // text of the kind's first warning
  // PHYS_ENBL_ENERGY (phys_step): the last step's energy at its start, for the check at the next step's start
  double energy_start;      // mechanical energy (phys_energy's, plus penalty springs) at the last step's start
  double energy_scale;      // its kinetic part plus the penalty springs' (the tolerance's scale)
  double energy_tstart;     // d->time at the last step's start
  double energy_tend;       // d->time after the last step (NAN: no step to compare with)
  double energy_poswork;    // potential energy the last step's position correction added (split impulse)
  uint64_t energy_state;    // hash of qpos, qvel after the last step (a state set in between: no check)
  int energy_input;         // 1 if the last step had a work input (ctrl, qfrc_applied, xfrc_applied)
  int ncon;                 // contacts in d->contact
  int ncon_prev;            // contacts in d->contact_prev (phys_step's warm-start input: written by phys_step
                            // alone, read by nothing else; the next step's is d->contact)
  int ncon_dropped;         // contacts lost because nconmax was exceeded (counted, also a warning)
  int nlimit;               // active joint-limit rows in the last step
  int solver_iter;          // iterations of the last contact solve (pivots for lcp, sweeps for ADMM)
  double solver_residual;   // final residual of the last iterative solve
  uint64_t nlcp_local;      // lcp local structures (the labels' partition, the clamped system's pseudo-inverse)
                            // the derivatives built since phys_make_data / phys_reset_data: a statistic (the step
                            // record builds one per problem and linearization, src/contact/contact.h)
  uint64_t nccp_local;      // cone's and ccp's local structures (the natural map's linearization and its reverse
                            // factor) the derivatives built since phys_make_data / phys_reset_data: a statistic
                            // (the step record builds one per linearization, src/contact/contact.h)
  char lastwarning[256];    // text of the last warning
  // work counters for comparing methods (never read by the library; the caller may reset them)
  long long nstep;          // steps taken on d (phys_step and its variants; rejected ones included)
  long long nlinearize;     // step linearizations on d (phys_step_linearize*: Jacobians, VJPs)

  // sizes copied from the model for self-contained views
  int nq, nv, nbody, njnt, ngeom, nsite, nspring, nu, nconmax, nsensordata;
  int na;                   // activations (issue 15 item 2)

#define PHYS_X_DECL(type, name, n, m) type* name;
  PHYS_DATA_ARRAYS(PHYS_X_DECL)
#undef PHYS_X_DECL

  // scratch arena: phys_stack_mark / phys_stack_alloc / phys_stack_free
  double* stack;            // arena
  size_t nstack;            // capacity (doubles)
  size_t pstack;            // first free slot
  size_t pstack_max;        // largest pstack reached since phys_make_data / phys_reset_data (high-water mark)
  void* arena_guard;        // innermost phys_arena_guard of the running call (NULL: none; internal)
  // issue 15 item 2 (activations in the derivatives; internal): 1 while the step derivatives take the input
  // column of an actuator with dynamics as its activation's (src/grad/act_deriv.h), 0 otherwise
  int grad_act_input;

  void* buffer;             // the single allocation
  size_t nbuffer;
} physData;

//---------------------------------------------------------------------------------------------------------
// model life cycle

// loader options
typedef struct physLoadOptions_ {
  int urdf_floating;        // URDF: give the root link a free joint (as Pinocchio's free-flyer root)
  int strict_mesh;          // a missing mesh file is an error (default: warning, geom dropped)
  int urdf_self_collision;  // URDF: links of the robot collide with each other (default: they do not, as
                            // DART's skeletons; loading sets PHYS_DSBL_SELFCOLLISION unless this is 1)
  int urdf_actuate;         // URDF: a motor on every revolute, continuous and prismatic joint, named after the
                            // joint, gear 1, ctrlrange [-effort, effort] from <limit effort> (no effort or 0:
                            // not control-limited), in joint order
  const char* const* add;   // further model files (MJCF or URDF) composed into one world with the first (see
  int nadd;                 // phys_load): their bodies hang from the world, options come from the first file
  const char* const* vertex_geoms;   // geoms whose shape is learned as the hull of its vertices (vertices:GEOM,
  int nvertex_geoms;                 // issue 14 item 2): a box becomes a mesh of its 8 corners, a mesh keeps its
                                     // vertices; the model reserves room for any hull of them (mesh_hullcap)
} physLoadOptions;

// load an MJCF (.xml, .xml.gz) or URDF (.urdf) file; NULL on error (log->error says why). With opt->add, the
// files add[0..nadd) are composed with it into one world: their bodies hang from the world body, the options,
// name and keyframes (extended by the added files' qpos0) are the first file's, urdf_floating acts on the
// first file only, names must be unique across the files (docs/cli.md, Models)
physModel* phys_load(const char* filename, const physLoadOptions* opt, physLog* log);
physModel* phys_load_mjcf(const char* filename, physLog* log);
physModel* phys_load_urdf(const char* filename, const physLoadOptions* opt, physLog* log);
void phys_free_model(physModel* m);
// penalty contact at the model's options (opt.contact penalty, else nothing): a warning when some body's
// contacts need more damping than their restitution gives for the step to integrate them (k_c dt^2 > 2 m_e,
// m_e its smallest effective mass at a contact), and one when some body's weight compresses a contact spring
// beyond its size (m g / k_c); the loader runs it, call it again after changing contact, timestep or k_c.
// Under lcp, cone and ccp it warns of nothing (their contacts are hard rows)
void phys_penalty_check(const physModel* m, physLog* log);
physModel* phys_copy_model(const physModel* m);

// id of a named object of the given kind ("body", "joint", "geom", "site", "spring", "actuator", "mesh",
// "key"); -1 if not found
int phys_name2id(const physModel* m, const char* kind, const char* name);
// name of object id of the given kind ("" if unnamed)
const char* phys_id2name(const physModel* m, const char* kind, int id);

//---------------------------------------------------------------------------------------------------------
// data life cycle and scratch arena

physData* phys_make_data(const physModel* m);
void phys_free_data(physData* d);
// reset to qpos0, zero velocity and controls, time 0
void phys_reset_data(const physModel* m, physData* d);
// reset to keyframe k
physStatus phys_reset_keyframe(const physModel* m, physData* d, int k);

// The arena holds phys_arena_size(m) doubles (data.c): the need of the deepest call chain, derived stage by
// stage from the model's sizes (nv, nbody, nu, nconmax, the limit rows, frictionloss rows, the most
// parameters a table can hold) as the sum of what the stages nested in one call take (collision, assembly,
// the contact solver, the step, its record, the Jacobians, VJPs, parameter derivatives, time of impact, the
// control layer's linearization), maximized over the calls and the four contact models at the full contact
// list; data.c and docs/library.md state each stage's equation. It holds a full contact list; the tests
// measure high-water marks 1.2 to 7.2 times below the need at the contacts they meet (the smallest scenes are
// dominated by its linear term) and 1.4 to 2.0 times below at a full list. No algorithm
// depends on the free space: the broad phase's batch and the step derivatives' optional tables are sizes of
// the model.
// Exhausting it does not abort: inside a call that returns a status (phys_step_jacobian, the VJPs, the
// parameter derivatives, phys_rollout_grad) the call returns PHYS_ERR_NOMEM; phys_step rejects the step (state
// and time unchanged, a PHYS_WARN_REJECTED warning); either way a warning saying which call ran out, how much
// it asked for and how much was free is counted in d, the arena is back at its mark from the call's start and
// d stays usable. A direct phys_stack_alloc outside such a call returns NULL (and counts the warning).
size_t phys_arena_size(const physModel* m);
size_t phys_stack_mark(const physData* d);
double* phys_stack_alloc(physData* d, size_t n);
void phys_stack_free(physData* d, size_t mark);
// count a numerical warning of kind PHYS_WARN_OTHER (phys_data_warn) and keep its text in d->lastwarning
void phys_data_warning(physData* d, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
// count a numerical warning of the given kind (physWarning): nwarning, warning_count[kind], lastwarning, and
// for the kind's first one warning_time[kind] and warning_first[kind]
void phys_data_warn(physData* d, physWarning kind, const char* fmt, ...) __attribute__((format(printf, 3, 4)));

//---------------------------------------------------------------------------------------------------------
// dynamics (src/dyn)

void phys_kinematics(const physModel* m, physData* d);      // xpos, xquat, ..., geom/site frames
void phys_com_pos(const physModel* m, physData* d);         // cinert, cdof
void phys_com_vel(const physModel* m, physData* d);         // cvel, cdof_dot
void phys_crb(const physModel* m, physData* d);             // qM (with armature)
// qfrc_bias = c(q, v): Coriolis, centrifugal and gravity forces, RNEA at zero acceleration (MuJoCo's mj_rne
// with flg_acc 0, Pinocchio's nonLinearEffects); phys_rnea below takes a given acceleration
void phys_bias_forces(const physModel* m, physData* d);
void phys_passive(const physModel* m, physData* d);         // qfrc_passive, spring_length/force
void phys_actuation(const physModel* m, physData* d);       // qfrc_actuator from ctrl
// generalized force of an inverse dynamics problem: tau = M(q) qacc + c(q, v) (no armature/passive)
void phys_rnea(const physModel* m, physData* d, const double* qacc, double* tau);
// forward dynamics by the articulated-body algorithm: qacc = (M + diag(add))^-1 (tau - c);
// add (nv, may be NULL) is added to the armature (the step passes dt*damping for implicit damping)
void phys_aba(const physModel* m, physData* d, const double* tau, const double* add, double* qacc);
// joint-torque regressor: tau = Y(q, v, qacc) pi, pi = 10 inertial parameters per body (nbody-1 bodies,
// order: m, m*c (3), I about the body origin in body frame (xx yy zz xy xz yz)); Y is nv x 10*(nbody-1)
void phys_regressor(const physModel* m, physData* d, const double* qacc, double* Y);
// jacobians of a point attached to body (world point) and of the body's rotation: jacp, jacr 3 x nv
void phys_jac(const physModel* m, const physData* d, const double point[3], int body, double* jacp,
              double* jacr);

//---------------------------------------------------------------------------------------------------------
// simulation (src/step)

void phys_forward(const physModel* m, physData* d);   // all of the above at the current state, qacc, sensordata
// sensordata from d's kinematics and velocities (phys_kinematics, phys_com_pos, phys_com_vel done), d->qacc and the
// contacts' impulses: phys_step and phys_forward call it (src/dyn/sensor.c; MuJoCo 2.2.2's definitions)
void phys_sensor(const physModel* m, physData* d);
// noisy = clean + Gaussian noise of each sensor's standard deviation (sensor_noise) from the seeded stream
// *state (phys_splitmix64's state, advanced); framequat: rotated by a random rotation vector of that deviation
// (stays unit), touch: kept >= 0. noisy may be clean
void phys_sensor_noise(const physModel* m, const double* clean, double* noisy, uint64_t* state);
// one semi-implicit Euler step as MuJoCo 2.2.2's mj_Euler: joint damping implicit ((M + dt*diag(damping))^-1),
// with contact and joint-limit constraints by m->opt.contact (lcp, cone, ccp: impulses from the solver;
// penalty: forces); without active constraints exactly the unconstrained step (one ABA pass, qM and
// qfrc_bias not computed). A non-finite new state is rejected (state restored, warning counted in d).
// d->qacc is the acceleration used, (v+ - v)/dt; d->contact and d->qfrc_constraint the constraint result
void phys_step(const physModel* m, physData* d);
// 1 if the pbd integrator (PHYS_INT_PBD) supports m; else 0 and, in msg (n bytes), what it does not support yet
// (src/step/pbd.c: one joint per body, no limits/springs/damping on ball and free joints, no armature on slide
// joints or free translations, no tendons, equality constraints, frictionloss, activations, sensors, residual
// networks). phys_step with PHYS_INT_PBD on an unsupported model rejects every step with that message.
// Set opt.integrator before phys_make_data: the arena holds the pbd step's arrays only then
int phys_pbd_supported(const physModel* m, char* msg, size_t n);
// qpos <- qpos (+) dt*qvel  (exponential map on quaternions)
void phys_integrate_pos(const physModel* m, double* qpos, const double* qvel, double dt);
// qvel = (qpos2 (-) qpos1)/dt in tangent coordinates (as mj_differentiatePos)
void phys_difference_pos(const physModel* m, double* qvel, double dt, const double* qpos1,
                         const double* qpos2);
// total mechanical energy (kinetic + gravitational + springs), for tests
void phys_energy(const physModel* m, physData* d, double energy[2]);

#ifdef __cplusplus
}
#endif
#endif  // PHYSID_H
