// mlp.h - a small fully connected network (multilayer perceptron) with its forward pass, its forward-mode
// derivative w.r.t. the input and its reverse mode w.r.t. the input and the weights; one sample (cblas_dgemv)
// or a batch of samples (cblas_dgemm). Used as the residual acceleration of the step (paper 004: two hidden
// layers of 128, ReLU) and as the end-to-end baseline (4 x 256, tanh).
//
// Layers l = 0 .. nlayer-1 map h_l (size[l]) to h_{l+1} = act(W_l h_l + b_l) (size[l+1]), h_0 = x the input; the
// last layer is linear (y = W_{L-1} h_{L-1} + b_{L-1}). It lives in the math layer: it depends on BLAS only,
// and the step (src/step) and the fits (src/sysid) above it use it.
//
// Matrix products go through the standard CBLAS interface (<cblas.h>, pkg-config `blas`): Debian's reference
// BLAS on the project's machines (bit-identical results, no threads); a user's OpenBLAS is picked up through the
// libblas.so.3 alternative without rebuilding.
#ifndef PHYS_MLP_H
#define PHYS_MLP_H

#include <stddef.h>

#include "rng.h"

#define PHYS_MLP_MAXLAYER 8     // weight layers at most (hidden layers + 1)
#define PHYS_MLP_MAXWIDTH 4096  // widest layer

typedef enum physMlpAct_ {
  PHYS_MLP_RELU = 0,   // max(z, 0); derivative 1 where the output is > 0, else 0
  PHYS_MLP_TANH = 1    // tanh(z); derivative 1 - h^2
} physMlpAct;

typedef struct physMlp_ {
  int nlayer;                        // weight layers
  int size[PHYS_MLP_MAXLAYER + 1];   // size[0] inputs, size[nlayer] outputs
  physMlpAct act;                    // activation of the hidden layers (the output layer is linear)
  int nparam;                        // number of weights and biases
  double* w;                         // nparam values: per layer W_l (size[l+1] x size[l], row-major), then b_l
} physMlp;

// a network of nlayer weight layers with widths size[0..nlayer], weights zero. NULL (and a message in err,
// errlen) if a size is out of range (1 .. PHYS_MLP_MAXWIDTH, 1 .. PHYS_MLP_MAXLAYER layers) or on no memory
physMlp* phys_mlp_alloc(int nlayer, const int* size, physMlpAct act, char* err, size_t errlen);
void phys_mlp_free(physMlp* n);
// a copy of n (NULL on no memory)
physMlp* phys_mlp_copy(const physMlp* n);
// the name of an activation ("relu", "tanh"); phys_mlp_act_parse: the activation of a name, -1 if unknown
const char* phys_mlp_act_name(physMlpAct a);
int phys_mlp_act_parse(const char* name);

// weights uniform in +-1/sqrt(fan_in) (PyTorch's default for linear layers), biases likewise; the output layer
// scaled by out_scale (0: the network starts as the zero function)
void phys_mlp_randomize(physMlp* n, physRng* rng, double out_scale);
// offsets of layer l's W_l and b_l in n->w
int phys_mlp_woff(const physMlp* n, int l);
int phys_mlp_boff(const physMlp* n, int l);

// doubles of the hidden activations of one sample (sum of size[1 .. nlayer-1]) and of the backward scratch
// (2 x the widest layer)
int phys_mlp_nact(const physMlp* n);
int phys_mlp_nwork(const physMlp* n);

// y (size[nlayer]) = the network at x (size[0]); act (phys_mlp_nact) receives the hidden activations h_1 ..
void phys_mlp_forward(const physMlp* n, const double* x, double* y, double* act);
// ydot = dy/dx xdot at the point of act (from phys_mlp_forward); work: phys_mlp_nwork doubles
void phys_mlp_jvp(const physMlp* n, const double* act, const double* xdot, double* ydot, double* work);
// reverse mode at the point (x, act): xbar = (dy/dx)' ybar (NULL: not wanted) and wbar (nparam, NULL: not
// wanted) += (dy/dw)' ybar; work: phys_mlp_nwork doubles
void phys_mlp_vjp(const physMlp* n, const double* x, const double* act, const double* ybar, double* xbar,
                  double* wbar, double* work);

// a batch of nb samples, rows of X (nb x size[0]) -> rows of Y (nb x size[nlayer]); act: nb x phys_mlp_nact,
// stored layer by layer (layer l's block nb x size[l], row-major)
void phys_mlp_forward_batch(const physMlp* n, int nb, const double* X, double* Y, double* act);
// the batch's reverse mode: Xbar (nb x size[0], NULL: not wanted) and wbar += the sum over the samples;
// work: nb x phys_mlp_nwork doubles
void phys_mlp_vjp_batch(const physMlp* n, int nb, const double* X, const double* act, const double* Ybar,
                        double* Xbar, double* wbar, double* work);

#endif  // PHYS_MLP_H
