// model.h - internal model helpers shared by the compiler and the loaders.
#ifndef PHYS_MODEL_H
#define PHYS_MODEL_H

#include "physid.h"

// allocate a model with the sizes (and options) of `sizes`; arrays zeroed
physModel* phys_model_alloc(const physModel* sizes);

#endif  // PHYS_MODEL_H
