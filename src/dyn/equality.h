// equality.h - equality constraint rows (issue 15 item 1; src/dyn/equality.c): the residual r(q) and its
// Jacobian J = dr/dq (in velocity coordinates: dr/dt = J v) of each active MJCF <equality>, MuJoCo 2.2.2's
// definitions (physEqType, physid.h): connect 3 rows, weld 6, joint 1, tendon 1 (fixed tendons).
//
// Row kinds: each physEqType has one row function
// in the table of equality.c, physEqRowFn, which writes its rows' residual and Jacobian at d's kinematics.
// A new kind adds its enum value, its row count in phys_equality_dim and its function in the table; the
// step, the solvers and the derivatives see only rows (r, J).
#ifndef PHYS_EQUALITY_H
#define PHYS_EQUALITY_H

#include "physid.h"

// rows of equality constraint e's kind (connect 3, weld 6, joint 1, tendon 1)
int phys_equality_dim(const physModel* m, int e);
// rows of every active equality constraint (0 with none, or with PHYS_DSBL_EQUALITY: <flag equality="disable">)
int phys_equality_rows(const physModel* m);
// one kind's rows: residual r (dim) and Jacobian J (dim x nv, zeroed by the caller) of constraint e at d's
// kinematics (phys_kinematics, phys_com_pos: cdof)
typedef void (*physEqRowFn)(const physModel* m, const physData* d, int e, double* r, double* J);
// the active constraints' rows in model order into r (ne) and J (ne x nv); returns ne (0 with PHYS_DSBL_EQUALITY)
int phys_equality_eval(const physModel* m, const physData* d, double* r, double* J);

#endif  // PHYS_EQUALITY_H
