// drone_task.h - paper 001's drone task (examples/drone) for the control tests (test_ddp.c, test_shooting.c):
// models/drone.xml resting on the ground (keyframe "ground") under lcp, 100 steps of 10 ms, final height 1 m
// (weight 100) and vertical velocity 0 (weight 10), control effort 1e-3. Include after test.h.
#ifndef PHYS_DRONE_TASK_H
#define PHYS_DRONE_TASK_H

#include "control.h"

// the task's model (*m; with aware the complementarity-aware gradient flag), data at rest (*d) and problem of
// maxiter iterations; the caller frees the three
static inline physControlProblem* drone_task(int aware, int maxiter, physModel** m, physData** d) {
  *m = phys_load("models/drone.xml", NULL, NULL);
  CHECK(*m != NULL);
  if (aware) (*m)->opt.gradflags |= PHYS_GRAD_COMPLEMENTARITY;
  *d = phys_make_data(*m);
  phys_reset_keyframe(*m, *d, 0);
  physControlProblem* p = phys_control_make(*m, 100, maxiter);
  p->fin.qref[2] = 1.0, p->fin.wq[2] = 100, p->fin.wv[2] = 10;
  for (int j = 0; j < 4; j++) p->wu[j] = 1e-3;
  return p;
}

#endif  // PHYS_DRONE_TASK_H
