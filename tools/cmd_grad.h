// cmd_grad.h - what `physid jacobian` (cmd_grad.c) and `physid gradcheck` (cmd_gradcheck.c) share: the
// options, the --wrt list (state, ctrl, params, param:KIND:NAME), the parameter table behind it, the state
// save/restore that keeps contact warm starts, and the explanation of a refused state.
#ifndef PHYS_CMD_GRAD_H
#define PHYS_CMD_GRAD_H

#include "cli.h"
#include "params.h"
#include "physid.h"

// the options the two commands share
typedef struct gradArgs_ {
  const char* model;
  const char* init;         // jacobian: state file
  const char* out;          // jacobian: output file (NULL: stdout)
  const char* wrt;          // the --wrt list (NULL: the command's default)
  double dt;                // 0: the model's timestep
  int contact;              // physContactModel, -1: the model's
  int states;               // gradcheck: number of states
  int seed;                 // gradcheck: seed
  int nocontact;
  int floating;
  int quiet;                // --quiet: no warnings on stderr
} gradArgs;

// the columns --wrt asks for: A (state), B (ctrl), P (the parameter table; ntheta 0 if none)
typedef struct gradWrt_ {
  int state, ctrl;
  physParamTable table;
} gradWrt;

// load the model with --dt, --contact, --no-contact applied; NULL (message printed) on failure
physModel* grad_load_model(const gradArgs* a);
// parse a comma-separated --wrt list of "state", "ctrl", "params" (every parameter grad_default_params
// finds) and "param:KIND:NAME" (params.h) into w; 0 and a message (exit code 2 for the caller) on error.
// Free with grad_wrt_free (also after an error).
int grad_parse_wrt(gradWrt* w, const physModel* m, const char* text);
void grad_wrt_free(gradWrt* w);
// the specs of every parameter of m whose step derivative exists as a two-sided derivative at the model's
// values: inertia and pos of named bodies (where allowed), damping and armature of joints where positive,
// joint stiffness, gravity, gears, springs, friction (> 0) and restitution (inside (0, 1)) of colliding
// geoms, sizes of colliding spheres, capsules and boxes, and penalty stiffness/damping with penalty contact.
// Returns the count; *spec is malloc'd (free with grad_free_specs).
int grad_default_params(char*** spec, const physModel* m);
void grad_free_specs(char** spec, int n);

// explain a status of phys_step_jacobian / phys_step_param_jacobian other than PHYS_OK (where: "file" or
// "file: state 3"): contacts or limits whose derivatives are not available, an unsupported ball joint, a
// numerical failure
void grad_explain_status(const physModel* m, physData* d, physStatus st, const char* where);

// a saved simulation state: time, qpos, qvel, ctrl and the contact list (the next step's warm-start input;
// d->contact_prev is phys_step's own copy, an input of nothing)
typedef struct gradSave_ {
  double time;
  int ncon;
  double *qpos, *qvel, *ctrl, *act;   // (act: na activations)
  physContact* contact;
} gradSave;

// allocate s for m (0 if out of memory); free with grad_save_free
int grad_save_alloc(gradSave* s, const physModel* m);
void grad_save_free(gradSave* s);
void grad_save(gradSave* s, const physModel* m, const physData* d);
void grad_restore(physData* d, const physModel* m, const gradSave* s);

#endif  // PHYS_CMD_GRAD_H
