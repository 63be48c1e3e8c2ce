// bench_solvers.c - the contact solvers on settled piles (issue 19 item 3): instructions per step (callgrind),
// solver iterations and warnings of consecutive steps of a settled scene, per contact model.
//
// The scene settles with lcp (the cheapest constrained model to settle with: `--settle` steps), then the
// chosen model takes `--warmup` steps (so that its own warm start, the contact list's impulses and labels,
// is in place) and then `--steps` measured steps, consecutive (each step warm-started from the one before, as
// in a simulation). For each measured step the solver's iterations (d->solver_iter: Lemke's pivots for lcp,
// ADMM iterations for cone and ccp) and the numerical warnings are summed. The settled state can be saved
// (`--save FILE`) and loaded (`--load FILE`) so that a callgrind run does not settle under valgrind. With
// `--cold 1` every measured step starts without a warm start (the contact list emptied before it).
//
// usage: bench_solvers MODEL.xml [--contact lcp|cone|ccp|penalty] [--settle N] [--warmup N] [--steps N]
//                      [--save FILE] [--load FILE] [--cold 0|1]
// prints: RESULT<TAB>model=..<TAB>contact=..<TAB>ncon=..<TAB>rows=..<TAB>steps=..<TAB>iter_mean=..
//         <TAB>iter_max=..<TAB>warnings=..<TAB>qsum=..<TAB>first_warning=..
// (qsum: sum (i + 1) qpos_i at the end, a digest to compare runs)
// Instructions: valgrind --tool=callgrind --toggle-collect=measured_step, total / steps
// (scripts/bench_solvers.sh). Information only, never a pass/fail test.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "physid.h"
#include "step.h"

__attribute__((noinline)) void measured_step(const physModel* m, physData* d) { phys_step(m, d); }

// contact model from its name, -1 if unknown
static int contact_model(const char* s) {
  static const char* names[] = {"lcp", "cone", "ccp", "penalty"};
  static const int ids[] = {PHYS_CONTACT_LCP, PHYS_CONTACT_CONE, PHYS_CONTACT_CCP, PHYS_CONTACT_PENALTY};
  for (int i = 0; i < 4; i++)
    if (!strcmp(s, names[i])) return ids[i];
  return -1;
}

// the settled state: time, qpos, qvel and both contact lists (the warm start), binary, this build only
static int state_io(const physModel* m, physData* d, const char* file, int save) {
  FILE* f = fopen(file, save ? "wb" : "rb");
  if (!f) return 0;
  size_t ok = 1;
  size_t nq = (size_t)m->nq, nv = (size_t)m->nv;
#define IO(p, sz, k) ok &= (save ? fwrite(p, sz, k, f) : fread(p, sz, k, f)) == (k)
  IO(&d->time, sizeof(double), 1);
  IO(d->qpos, sizeof(double), nq);
  IO(d->qvel, sizeof(double), nv);
  IO(&d->ncon, sizeof(int), 1);
  IO(&d->ncon_prev, sizeof(int), 1);
  if (ok && (d->ncon > m->nconmax || d->ncon_prev > m->nconmax || d->ncon < 0 || d->ncon_prev < 0)) ok = 0;
  if (ok) IO(d->contact, sizeof(physContact), (size_t)d->ncon);
  if (ok) IO(d->contact_prev, sizeof(physContact), (size_t)d->ncon_prev);
#undef IO
  fclose(f);
  return (int)ok;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: bench_solvers MODEL.xml [--contact C] [--settle N] [--warmup N] [--steps N] "
                    "[--save FILE] [--load FILE]\n");
    return 2;
  }
  const char *file = argv[1], *save = NULL, *load = NULL, *cname = "lcp";
  int settle = 1500, warmup = 20, steps = 20, cold = 0;
  for (int i = 2; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--contact")) cname = argv[i + 1];
    else if (!strcmp(argv[i], "--settle")) settle = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--warmup")) warmup = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--steps")) steps = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--save")) save = argv[i + 1];
    else if (!strcmp(argv[i], "--load")) load = argv[i + 1];
    else if (!strcmp(argv[i], "--cold")) cold = atoi(argv[i + 1]);
    else {
      fprintf(stderr, "bench_solvers: unknown option %s\n", argv[i]);
      return 2;
    }
  }
  int contact = contact_model(cname);
  if (contact < 0) {
    fprintf(stderr, "bench_solvers: unknown contact model %s\n", cname);
    return 2;
  }
  physLog log = {0};
  log.quiet = 1;
  physModel* m = phys_load(file, NULL, &log);
  if (!m) {
    fprintf(stderr, "bench_solvers: %s: %s\n", file, log.error);
    return 1;
  }
  physData* d = phys_make_data(m);
  if (load) {
    if (!state_io(m, d, load, 0)) {
      fprintf(stderr, "bench_solvers: cannot read the state %s\n", load);
      return 1;
    }
  } else {
    m->opt.contact = PHYS_CONTACT_LCP;
    for (int i = 0; i < settle; i++) phys_step(m, d);
  }
  if (save && !state_io(m, d, save, 1)) {
    fprintf(stderr, "bench_solvers: cannot write the state %s\n", save);
    return 1;
  }
  m->opt.contact = contact;
  for (int i = 0; i < warmup; i++) phys_step(m, d);
  int w0 = d->nwarning, imax = 0, rows = 0;
  long isum = 0;
  for (int i = 0; i < steps; i++) {
    if (cold) d->ncon = 0;   // no warm start: the step's solver starts cold
    measured_step(m, d);
    isum += d->solver_iter;
    imax = d->solver_iter > imax ? d->solver_iter : imax;
  }
  for (int i = 0; i < d->ncon; i++) rows += d->contact[i].dist <= 0 ? 3 : 0;
  const char* first = "";
  for (int k = 0; k < PHYS_NWARNKIND; k++)
    if (d->warning_count[k] > 0) {
      first = d->warning_first[k];
      break;
    }
  double qsum = 0;   // a digest of the end state, to compare runs: sum (i + 1) qpos_i
  for (int i = 0; i < m->nq; i++) qsum += (i + 1) * d->qpos[i];
  printf("RESULT\tmodel=%s\tcontact=%s\tncon=%d\trows=%d\tsteps=%d\titer_mean=%.1f\titer_max=%d\twarnings=%d"
         "\tqsum=%.15g\tfirst_warning=%s\n",
         file, cname, d->ncon, rows, steps, steps ? (double)isum / steps : 0.0, imax, d->nwarning - w0, qsum, first);
  phys_free_data(d);
  phys_free_model(m);
  return 0;
}
