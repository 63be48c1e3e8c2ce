// physid/params.h - physical parameters theta of a model (public; issue 18 item 1): the vector of named
// quantities ("mass:BODY", "damping:JOINT", "friction:GEOM", ...) that the derivatives (physid/derivatives.h)
// differentiate with respect to and that identification fits. The kinds, their sizes, bounds and the
// log-Cholesky map of "inertia:BODY" are listed in docs/derivatives.md and in `physid identify --help`.
//
//   physParamTable t;
//   const char* spec[] = {"damping:hinge", "mass:link1"};
//   if (phys_param_table_build(&t, m, spec, 2, &log) != PHYS_OK) ...   // log.error names the bad spec
//   double theta[t.ntheta];  phys_param_get(&t, m, theta);  theta[0] = 0.2;  phys_param_set(&t, m, theta);
//   phys_param_table_free(&t);
#ifndef PHYSID_PARAMS_H
#define PHYSID_PARAMS_H

#include "../physid.h"

#ifdef __cplusplus
extern "C" {
#endif

// one entry: theta[adr .. adr+size) acts on object id (body, joint, actuator, spring, geom; -1 gravity).
// A tied spec (a pattern, below) gives one entry per matched object, all with the same adr: theta holds one
// shared value and the derivative columns of its entries add up (param_deriv.c accumulates into R).
typedef struct physParam_ {
  int kind, id, adr, size;
  int spec;         // index of the spec it came from
  int tied;         // 1 for the second and later entries of a pattern (list, label and read theta from the first)
  char name[160];   // the spec "KIND:NAME" (the pattern for every entry of a tied spec)
} physParam;

typedef struct physParamTable_ {
  int n;            // entries
  int ntheta;       // total length of theta
  physParam* param;
  double* input;    // ntheta: the values of the input kinds at their adr (delay 0, gain 1, bias 0 at build);
                    // phys_param_get/set read and write them here (NULL without input kinds)
  const double* insens;   // n, caller-owned, may be NULL: d u_eff / d theta of each input entry for the step
                    // being differentiated (phys_param_input_hold); NULL: the input kinds' columns are 0
  const unsigned char* held;   // ntheta, caller-owned, may be NULL: held[a] != 0 marks component a as held (an
                    // optimizer's equal bounds): its derivative is not wanted, and the pbd step, whose columns
                    // each cost a complex step, skips it (its P column and theta_bar entry 0); the other step
                    // types compute it as usual (cheap there)
} physParamTable;

// build t from nspec specs "KIND:NAME" (NAME may be a shell pattern for the joint, body and actuator kinds: the
// matches share one value). PHYS_ERR_ARG with log->error listing the valid kinds or names. Free t with
// phys_param_table_free, also after a failed build.
physStatus phys_param_table_build(physParamTable* t, const physModel* m, const char* const* spec, int nspec,
                                  physLog* log);
void phys_param_table_free(physParamTable* t);
// theta (t->ntheta values) from the model
void phys_param_get(const physParamTable* t, const physModel* m, double* theta);
// theta into the model; PHYS_ERR_VALUE (the model unchanged) for a non-finite value or one out of its kind's
// range (a mass <= 0, negative friction, restitution outside [0, 1], ...)
physStatus phys_param_set(const physParamTable* t, physModel* m, const double* theta);
// the bounds of each theta (either may be NULL; -HUGE_VAL / HUGE_VAL when unbounded)
void phys_param_bounds(const physParamTable* t, double* lower, double* upper);

#ifdef __cplusplus
}
#endif
#endif  // PHYSID_PARAMS_H
