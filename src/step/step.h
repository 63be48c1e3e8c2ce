// step.h - internals of the step shared with tests and benchmarks: the step with an explicit contact
// solver (to compare solvers on one model, or to test the step against a reference solver).
#ifndef PHYS_STEP_H
#define PHYS_STEP_H

#include "contact.h"
#include "physid.h"

// a contact solver with the signature of phys_solve_lcp / phys_solve_cone / phys_solve_ccp
typedef physStatus (*physSolverFn)(const physModel* m, physData* d, const physConstraintProblem* p,
                                   physConstraintSolution* sol);

// phys_step with `solver` for the constraint problem instead of the one m->opt.contact names (NULL: that
// one); penalty models (m->opt.contact == PHYS_CONTACT_PENALTY) use no solver and ignore it
void phys_step_solver(const physModel* m, physData* d, physSolverFn solver);

#endif  // PHYS_STEP_H
