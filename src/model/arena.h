// arena.h - the status of an exhausted scratch arena (data.c): a call that takes scratch from d's arena runs
// under a guard; phys_stack_alloc, when the arena cannot hold a request, returns to the innermost guard's
// call (longjmp) instead of aborting, and the call returns PHYS_ERR_NOMEM. The arena is only scratch: no
// memory is owned across the jump (nothing inside a step or a derivative allocates), so unwinding leaks
// nothing; the guard puts the arena back at the call's mark and counts a warning naming the call.
//
// Use (setjmp must be called in the guarded function's own frame, as the whole controlling expression):
//   physArenaGuard g;
//   phys_arena_enter(d, &g);
//   if (setjmp(g.env)) return phys_arena_failed(d, &g, PHYS_WARN_OTHER, "phys_step_jacobian");
//   physStatus st = step_jacobian(m, d, A, B);
//   phys_arena_leave(d, &g);
//   return st;
#ifndef PHYS_ARENA_H
#define PHYS_ARENA_H

#include <setjmp.h>

#include "physid.h"

typedef struct physArenaGuard_ {
  jmp_buf env;                       // where phys_stack_alloc returns on exhaustion
  struct physArenaGuard_* prev;      // the enclosing guard (NULL: outermost)
  size_t mark;                       // arena mark at the call's start
  size_t request, free;              // the refused request and the free space then (doubles)
} physArenaGuard;

// push g as d's innermost guard and remember the arena's mark
void phys_arena_enter(physData* d, physArenaGuard* g);
// pop g (the call finished normally)
void phys_arena_leave(physData* d, physArenaGuard* g);
// after the jump: pop g, put the arena back at g's mark, count a warning of the given kind "<who>: scratch
// arena exhausted (...)" and return PHYS_ERR_NOMEM
physStatus phys_arena_failed(physData* d, physArenaGuard* g, physWarning kind, const char* who);

// the whole body of a public function returning physStatus that runs `call` under a guard (warning kind
// PHYS_WARN_OTHER); who names the function in the warning
#define PHYS_ARENA_CALL(d, who, call)                                               \
  do {                                                                              \
    physArenaGuard guard_;                                                          \
    phys_arena_enter((d), &guard_);                                                 \
    if (setjmp(guard_.env)) return phys_arena_failed((d), &guard_, PHYS_WARN_OTHER, (who)); \
    physStatus st_ = (call);                                                        \
    phys_arena_leave((d), &guard_);                                                 \
    return st_;                                                                     \
  } while (0)

// the broad phase's batch of candidate pairs (collision.c): every pair of the model's geoms at once, at most 2^18
// (keys of 8 bytes, one double each); a size of the model, so that no choice depends on the free space
size_t phys_arena_pairkeys(const physModel* m);

// the budget T of the step derivatives' optional n x n x B work (step_contact_jvp.c: Delassus mass blocks of B
// columns, the cone/ccp solvers' tables): two Delassus matrices of the full list, 2 (3 nconmax + l)^2 with l
// = 2 per limited hinge or slide (data.c), a size of the model
size_t phys_arena_tables(const physModel* m);

// the arena (doubles) that the deepest call chain takes under contact model `model` (PHYS_CONTACT_*) with ncon
// contacts, nlim joint-limit rows and ntheta parameters: the maximum over the step and its derivatives of the
// stages nested in each (data.c states each stage's equation). phys_arena_size(m) is its maximum over the
// contact models at ncon = nconmax, nlim = 2 per limited hinge or slide and ntheta = phys_arena_ntheta_max(m)
size_t phys_arena_need(const physModel* m, int model, int ncon, int nlim, int ntheta);
// the most parameters a table can hold (params.c: each object's kinds once, overlaps refused): 13 per body
// (inertia, or mass and com; pos), 7 per dof (damping, armature, stiffness, frictionloss of its joint; the
// delay, gain and bias of its force channel), 13 per actuator (gear up to 6, gain, bias, kp, kv, the input
// channel's 3), 3 per spring, 5 per geom (friction, restitution, up to 3 sizes), 2 penalty constants, gravity 3
int phys_arena_ntheta_max(const physModel* m);

#endif  // PHYS_ARENA_H
