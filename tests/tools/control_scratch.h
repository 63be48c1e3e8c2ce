// control_scratch.h - the scratch folder of the optimize and mpc command tests with the models their tasks
// use; include after sh_run.h.
#ifndef PHYS_CONTROL_SCRATCH_H
#define PHYS_CONTROL_SCRATCH_H

#include <stdio.h>
#include <stdlib.h>

// the scratch folder with the models the tasks use (pendulum.xml: models/pendulum_motor.xml, nomotor.xml:
// tests/data/pendulum.xml); 0 if it cannot be made
static inline int control_scratch(const char* name) {
  snprintf(g_dir, sizeof g_dir, "/tmp/%s_XXXXXX", name);
  if (!mkdtemp(g_dir)) return 0;
  char* model = slurp("models/pendulum_motor.xml");
  put("pendulum.xml", model);
  free(model);
  model = slurp("tests/data/pendulum.xml");
  put("nomotor.xml", model);
  free(model);
  return 1;
}

#endif  // PHYS_CONTROL_SCRATCH_H
