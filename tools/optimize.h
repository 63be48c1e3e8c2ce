// optimize.h - the methods of `physid optimize` beside DDP (cmd_optimize.c reads the task and dispatches):
// single shooting "lbfgsb", "adam" (optimize_shooting.c, src/control/shooting.h) and stochastic search
// "random", "cem", "mppi" (optimize_sampling.c, src/control/sampling.h). Each reads its own "options" object,
// solves, prints its progress lines and adds its options to the result JSON.
#ifndef PHYS_OPTIMIZE_H
#define PHYS_OPTIMIZE_H

#include <cjson/cJSON.h>

#include "control.h"
#include "sampling.h"
#include "shooting.h"

// a method's settings read from the task's "method" and "options"
typedef struct optMethod_ {
  const char* name;         // the method as named in the task
  int sampling;             // 1: random, cem, mppi; 0: lbfgsb, adam
  int maxiter;              // iterations (p->maxiter)
  double tol;               // < 0: the problem's default
  int complementarity;      // lbfgsb, adam: the complementarity-aware lcp gradient (PHYS_GRAD_COMPLEMENTARITY)
  physShootOptions shoot;
  physSampleOptions sample;
} optMethod;

// one key of an "options" object: its kind and range; value and given are set by opt_read_keys
enum { OPT_NUMBER = 0, OPT_INTEGER, OPT_BOOL };
typedef struct optKey_ {
  const char* name;
  int kind;
  double lo, hi;            // the range of a number or an integer
  double value;             // the value read (a bool: 0 or 1)
  int given;                // 1 if the key is present
} optKey;

// read object o (the task's "options") against keys: 0 and a message "FILE: options: unknown key 'k' (valid
// for METHOD: ...)" or "FILE: options.k: expected ..." otherwise
int opt_read_keys(const char* file, const char* method, const cJSON* o, optKey* keys, int nkeys);

// 1 if name is one of these methods, with *mo set to its defaults
int opt_shooting_method(optMethod* mo, const char* name);
int opt_sampling_method(optMethod* mo, const char* name);
// the method's "options" (o may be NULL: the defaults); 0 and a message naming the key otherwise
int opt_shooting_options(optMethod* mo, const char* file, const cJSON* o);
int opt_sampling_options(optMethod* mo, const char* file, const cJSON* o);
// solve p from d's state by the method (complementarity: the caller sets PHYS_GRAD_COMPLEMENTARITY in the
// model's gradflags); the status and message of the solver
physStatus opt_method_solve(const optMethod* mo, physData* d, physControlProblem* p, physLog* log);
// the method's options added to the result JSON r as "options"
void opt_method_result(cJSON* r, const optMethod* mo);
// the sampling methods' part of the two (optimize_sampling.c)
physStatus opt_sampling_solve(const optMethod* mo, physData* d, physControlProblem* p, physLog* log);
void opt_sampling_result(cJSON* r, const optMethod* mo);

#endif  // PHYS_OPTIMIZE_H
