// model.h - internal model helpers shared by the compiler and the loaders.
#ifndef PHYS_MODEL_H
#define PHYS_MODEL_H

#include "physid.h"

// allocate a model with the sizes (and options) of `sizes`; arrays zeroed
physModel* phys_model_alloc(const physModel* sizes);

// radius of geom g's bounding sphere about its frame at m's sizes (0: infinite, a plane): compile.c's, also
// after a parameter changes a size (src/grad/params.c)
double phys_geom_rbound(const physModel* m, int g);

#endif  // PHYS_MODEL_H
