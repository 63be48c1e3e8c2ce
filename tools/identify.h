// identify.h - the pieces of `physid identify` (cmd_identify.c): the identified model written back to its
// MJCF or URDF file (model_write.c) and the HTML report (report.c).
#ifndef PHYS_IDENTIFY_H
#define PHYS_IDENTIFY_H

#include <stdio.h>

#include "params.h"
#include "physid.h"
#include "sysid.h"

// everything a run produced, for the result file, the written model and the report
typedef struct idRun_ {
  const char* model_path;   // the model file as given
  physModel* m;             // holds the identified values after the fit
  physParamTable table;
  double* theta0;           // initial values (ntheta)
  double* lower;            // bounds (ntheta; -HUGE_VAL / HUGE_VAL when unbounded)
  double* upper;
  char (*label)[192];       // one label per theta component: the spec, "spec[i]" when the entry has size > 1
  physDataset ds;
  physFitOptions fit;
  double ctrl[64];          // --ctrl-value: the controls held during every trajectory (fit.ctrl points here)
  physFitResult res;
  double *se, *ci_lo, *ci_hi;   // the default method's (res.method) standard errors and 95% intervals, clipped to
                            // the bounds (ntheta each; one allocation at se)
  double wall;              // wall time of the fit (s)
} idRun;

// names of physSeMethod: result.json's "method", the report
static const char* const id_method_name[3] = {"iid", "cluster", "bootstrap"};

// --write-model: the model file src edited to hold m's values of every parameter of t, written to f (MJCF:
// geom friction/size, physid:restitution custom numerics, joint damping/armature/stiffness, tendon
// stiffness/damping/springlength, body <inertial> and pos, option gravity, actuator gear, physid:penalty;
// URDF: link <inertial>, joint <dynamics damping>). f NULL: check only that every parameter can be written
// (run before the fit). Returns 0 with a message in err on failure.
int id_write_model(FILE* f, const char* src, const physModel* m, const physParamTable* t, char* err, size_t nerr);

// --write-model of a composed world (--add): the whole model m (with the identified values) as one MJCF file
// written to f: bodies, inertials (principal frame), joints, geoms, sites, tendons, motors, pairs, excludes,
// keyframes, options and physid's <custom> settings, "%.17g". f NULL: check only that m can be written (no
// meshes, no unnamed object that another refers to, no massless moving body). Returns 0 with a message in err.
int id_write_world(FILE* f, const physModel* m, char* err, size_t nerr);

// --report: one self-contained HTML page (inline SVG, no scripts or external resources) with the settings,
// the parameter table, the loss per iteration (log scale), the parameter traces, the correlation heat map
// and observed vs predicted positions of up to three trajectories. Deterministic (no times or dates).
// Returns 0 with a message in err on failure.
int id_write_report(FILE* f, const idRun* run, char* err, size_t nerr);

#endif  // PHYS_IDENTIFY_H
