// pbd.h - the position-based step (PHYS_INT_PBD, issue 17 item 1): extended position-based dynamics (XPBD) of
// the model's bodies in maximal coordinates, started from and returned to physid's (q, v) state (pbd.c).
#ifndef PHYS_PBD_H
#define PHYS_PBD_H

#include <stddef.h>

#include "collision.h"
#include "physid.h"

// the arena (doubles) the PBD step takes besides its contact detection: its bodies, joints, contacts, Jacobi
// accumulators, the velocity least-squares system and the saved state, plus what its derivatives take
// (src/grad/pbd_deriv.c: the same on complex numbers, their kinematics and contact list); data.c adds it to the
// arena when m->opt.integrator is PHYS_INT_PBD
size_t phys_pbd_arena_need(const physModel* m);

// one PBD step of m->opt.timestep from d's (qpos, qvel): contacts detected into cl at the start state; on success
// qpos, qvel, qacc = (v+ - v)/dt and time advanced and 1 returned; 0 with the state untouched if m is not
// supported (a PHYS_WARN_REJECTED warning says why). qpos0, qvel0 receive the arena copies of the start state
// (for the caller's restore when the arena runs out)
int phys_pbd_step(const physModel* m, physData* d, physContactList* cl, double* volatile* qpos0,
                  double* volatile* qvel0);

#endif  // PHYS_PBD_H
