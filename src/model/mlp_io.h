// mlp_io.h - a network (src/math/mlp.h) as a JSON file: the residual acceleration network saved beside an
// identified model and the end-to-end baseline's network. The format (docs/identification.md, "Network files"):
//   {"format": "physid-mlp", "version": 1, "role": "residual" | "end-to-end",
//    "input": "state-rotmat", "activation": "relu" | "tanh", "sizes": [n0, n1, ..., nL],
//    "layers": [{"W": [[row 0], ..., [row n1-1]], "b": [n1 values]}, ...]}
// W_l has size[l+1] rows of size[l] values (y = W x + b), every value a finite number written with 17
// significant digits (read back bit for bit). "input" names the features (src/step/residual.h).
#ifndef PHYS_MLP_IO_H
#define PHYS_MLP_IO_H

#include <stdio.h>

#include "mlp.h"
#include "physid.h"

#define PHYS_MLP_FILE_MAXBYTES (256L << 20)   // refuse network files larger than 256 MB

// write n as the JSON above with the given role to f; 0 on a write error
int phys_mlp_write_json(FILE* f, const physMlp* n, const char* role);
// read a network file whose role must be role; NULL and log->error ("FILE: element: what") on any error
physMlp* phys_mlp_read_json(const char* path, const char* role, physLog* log);

#endif  // PHYS_MLP_IO_H
