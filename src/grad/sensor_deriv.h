// sensor_deriv.h - exact derivatives of the position- and velocity-stage sensors (src/dyn/sensor.c) with respect
// to the state, in grad.h's tangent coordinates: what an identification on sensor readings needs.
#ifndef PHYS_SENSOR_DERIV_H
#define PHYS_SENSOR_DERIV_H

#include "physid.h"

// 1 if sensor type t has a state derivative here: jointpos, jointvel, framepos, framequat, framelinvel,
// frameangvel, gyro, velocimeter, subtreecom (the acceleration stage, actuatorfrc and touch have none)
int phys_sensor_has_deriv(int type);

// H (dim x 2nv, row-major) = d sensor_i / d (q tangent, v) at d's state (phys_kinematics, phys_com_pos and
// phys_com_vel done; grad.h's tangent coordinates). A value held at its cutoff has a zero row. PHYS_ERR_ARG for a
// sensor without a derivative (phys_sensor_has_deriv) or out of range.
physStatus phys_sensor_deriv(const physModel* m, physData* d, int i, double* H);

#endif  // PHYS_SENSOR_DERIV_H
