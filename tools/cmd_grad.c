// cmd_grad.c - `physid jacobian` (the Jacobians A = dx+/dx, B = dx+/du of one contact-free step at a given
// state, as CSV) and `physid gradcheck` (the analytic Jacobians against four-point central differences at
// random contact-free states). x = (tangent of q, v), 2nv numbers (src/grad/grad.h).
//
// gradcheck's reference is the four-point central stencil at h = 1e-3 built from the finite-difference twin
// at h and 2h: (4 J_h - J_2h) / 3 (truncation h^4 |f^(5)| / 30, rounding about 1.5 eps |f| / h). Each entry's
// error is taken relative to max(|reference entry|, 1e-4 scale), scale = max(largest entry of the block, the
// scale of x+ itself: max(1, |q|, |v|, dt |a|)), since the rounding noise of a difference quotient is a
// fraction of |x+|, not of each entry. Tolerance 1e-6 (issue 4; tests/grad/grad_models.h explains it).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "contact.h"
#include "grad.h"
#include "rng.h"
#include "trajio.h"

enum { WRT_STATE = 0, WRT_CTRL, WRT_BOTH };   // order of the --wrt choices

#define GC_H 1e-3         // finite-difference step (rad, m, rad/s, m/s, control units)
#define GC_TOL 1e-6       // relative tolerance in smooth states
#define GC_FLOOR 1e-4     // entries are compared relative to max(|entry|, GC_FLOOR * scale)
#define GC_TRIES 100      // random draws per state before giving up on finding one without contacts

// the options the two commands share
typedef struct gradArgs_ {
  const char* model;
  const char* init;         // jacobian: state file
  const char* out;          // jacobian: output file (NULL: stdout)
  double dt;                // 0: the model's timestep
  int wrt;                  // WRT_*
  int states;               // gradcheck: number of random states
  int seed;                 // gradcheck: seed
  int nocontact;
  int floating;
} gradArgs;

// load the model with the shared options applied; NULL (message printed) on failure
static physModel* load_model(const gradArgs* a) {
  physModel* m = cli_load_model(a->model, a->floating);
  if (!m) return NULL;
  if (a->dt > 0) m->opt.timestep = a->dt;
  if (a->nocontact) m->opt.disableflags |= PHYS_DSBL_CONTACT;
  return m;
}

// 1 if every value of x (n) is finite
static int all_finite(const double* x, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (!isfinite(x[i])) return 0;
  }
  return 1;
}

// explain a status of phys_step_jacobian other than PHYS_OK (where: "file" or "file: state 3")
static void explain_status(const physModel* m, physData* d, physStatus st, const char* where) {
  if (st == PHYS_ERR_ARG) {
    int nlimit = phys_constraint_nlimit(m, d);
    cli_error("%s: the state has %s; derivatives through contacts and joint limits are not implemented yet "
              "(issue 4)%s", where, nlimit > 0 ? "an active joint limit" : "contacts",
              nlimit > 0 ? "" : " (--no-contact disables contacts)");
  } else if (st == PHYS_ERR_MODEL) {
    cli_error("%s: a ball joint is not the last joint of its body: the step Jacobians do not support it", where);
  } else {
    cli_error("%s: numerical failure in the step Jacobians: %s", where, d->lastwarning);
  }
}

//---------------------------------------------------------------------------------------------------------
// physid jacobian

// the state of the --init file (t column optional), zero controls
static int read_state(const physModel* m, physData* d, const char* init) {
  physLog log;
  memset(&log, 0, sizeof log);
  phys_reset_data(m, d);
  if (phys_traj_read_state(&d->time, d->qpos, d->qvel, m, init, &log) == PHYS_OK) return 1;
  cli_error("%s", log.error);
  return 0;
}

// header dq0..dq{nv-1},dv0..dv{nv-1} (state) then u0..u{nu-1} (ctrl), and the 2nv rows [A B] as %.17g
static int write_jacobian(FILE* f, const physModel* m, const double* A, const double* B, int wrt) {
  int nv = m->nv, nu = m->nu, n2 = 2 * nv, first = 1;
  if (wrt != WRT_CTRL) {
    for (int j = 0; j < n2; j++, first = 0) fprintf(f, "%s%s%d", first ? "" : ",", j < nv ? "dq" : "dv", j % nv);
  }
  if (wrt != WRT_STATE) {
    for (int j = 0; j < nu; j++, first = 0) fprintf(f, "%su%d", first ? "" : ",", j);
  }
  fputc('\n', f);
  for (int i = 0; i < n2; i++) {
    first = 1;
    if (wrt != WRT_CTRL) {
      for (int j = 0; j < n2; j++, first = 0) fprintf(f, "%s%.17g", first ? "" : ",", A[(size_t)i * n2 + j]);
    }
    if (wrt != WRT_STATE) {
      for (int j = 0; j < nu; j++, first = 0) fprintf(f, "%s%.17g", first ? "" : ",", B[(size_t)i * nu + j]);
    }
    fputc('\n', f);
  }
  return !ferror(f);
}

// compute A and B at the state, then write them atomically
static int jacobian(const physModel* m, physData* d, const gradArgs* a) {
  int n2 = 2 * m->nv, nu = m->nu;
  double* A = malloc(sizeof(double) * ((size_t)n2 * n2 + 1));
  double* B = malloc(sizeof(double) * ((size_t)n2 * nu + 1));
  int code = CLI_EXIT_INPUT;
  physStatus st = A && B ? phys_step_jacobian(m, d, A, B) : PHYS_ERR_NOMEM;
  if (!A || !B) {
    cli_error("%s: out of memory", a->model);
  } else if (st != PHYS_OK) {
    explain_status(m, d, st, a->init);
  } else if (!all_finite(A, (size_t)n2 * n2) || !all_finite(B, (size_t)n2 * nu)) {
    cli_error("%s: the Jacobians at this state are not finite", a->init);
  } else {
    cliOutput o;
    memset(&o, 0, sizeof o);
    if (cli_output_open(&o, a->out)) {
      if (write_jacobian(o.f, m, A, B, a->wrt)) {
        code = cli_output_commit(&o) ? CLI_EXIT_OK : CLI_EXIT_INPUT;
      } else {
        cli_error("%s: write error", a->out ? o.tmp : "stdout");
        cli_output_abort(&o);
      }
    }
  }
  free(A);
  free(B);
  return code;
}

// physid jacobian
int cli_jacobian(int argc, char** argv) {
  gradArgs a = {0};
  const argOption opt[] = {
      {"--init", ARG_STRING, &a.init, "FILE", "the state: CSV with one row (t column optional); controls zero",
       0, 0, 1},
      {"--dt", ARG_DOUBLE, &a.dt, "DT", "timestep in seconds (default: the model's)", 1e-9, 1, 0},
      {"--wrt", ARG_CHOICE, &a.wrt, "state|ctrl|state,ctrl",
       "columns: state (A, default), ctrl (B) or both ([A B])", 0, 0, 0},
      {"--out", ARG_STRING, &a.out, "FILE", "write the CSV here (default: stdout)", 0, 0, 0},
      {"--no-contact", ARG_FLAG, &a.nocontact, "", "disable contacts (PHYS_DSBL_CONTACT)", 0, 0, 0},
      {"--floating", ARG_FLAG, &a.floating, "", "URDF: give the root link a free joint", 0, 0, 0},
  };
  const argCommand cmd = {"jacobian",
                          "Write the Jacobians of one contact-free step x+ = step(x, u), x = (dq, v) in tangent "
                          "coordinates,\nas CSV: 2nv rows (dq+0.., dv+0..), columns dq0..dq{nv-1},dv0..dv{nv-1} "
                          "(A = dx+/dx) and/or\nu0..u{nu-1} (B = dx+/du), one header row, values as %.17g. "
                          "States with contacts or an active\njoint limit are refused (exit 1).",
                          "MODEL", 1, opt, sizeof opt / sizeof opt[0],
                          "physid jacobian tests/data/pendulum.xml --init state.csv --wrt state,ctrl --out AB.csv"};
  const char* pos[ARGS_MAXPOS];
  int code = cli_parse(pos, &cmd, argc, argv);
  if (code >= 0) return code;
  a.model = pos[0];
  physModel* m = load_model(&a);
  if (!m) return CLI_EXIT_INPUT;
  physData* d = phys_make_data(m);
  code = CLI_EXIT_INPUT;
  if (!d) cli_error("%s: out of memory allocating the simulation data", a.model);
  else if (a.wrt == WRT_CTRL && m->nu == 0) cli_error("%s: --wrt ctrl: the model has no actuators", a.model);
  else if (read_state(m, d, a.init)) code = jacobian(m, d, &a);
  phys_free_data(d);
  phys_free_model(m);
  return code;
}

//---------------------------------------------------------------------------------------------------------
// physid gradcheck

// one compared block of [A B]: rows r0.., columns c0.. of a matrix with ld columns
typedef struct gcBlock_ {
  const char* name;
  int isB, r0, c0, nr, nc;
  double maxabs, maxrel;    // worst over the states
} gcBlock;

// a uniformly random unit quaternion: uniform in the unit 4-ball by rejection, normalized
static void random_quat(double* q, physRng* r) {
  double n2 = 0;
  do {
    n2 = 0;
    for (int i = 0; i < 4; i++) {
      q[i] = phys_rng_range(r, -1, 1);
      n2 += q[i] * q[i];
    }
  } while (n2 > 1 || n2 < 1e-6);
  double s = 1 / sqrt(n2);
  for (int i = 0; i < 4; i++) q[i] *= s;
}

// random state: hinge/slide within the inner 90% of their ranges (or qpos0 +- 1), unit quaternions, free
// positions in [-1, 1]^3, qvel in [-1, 1], ctrl within the inner 80% of ctrlrange (or [-1, 1])
static void random_state(const physModel* m, physData* d, physRng* r) {
  phys_reset_data(m, d);
  for (int j = 0; j < m->njnt; j++) {
    double* q = d->qpos + m->jnt_qposadr[j];
    const double* rg = m->jnt_range + 2 * j;
    if (m->jnt_type[j] == PHYS_JNT_FREE) {
      for (int i = 0; i < 3; i++) q[i] = phys_rng_range(r, -1, 1);
      random_quat(q + 3, r);
    } else if (m->jnt_type[j] == PHYS_JNT_BALL) {
      random_quat(q, r);
    } else if (m->jnt_limited[j]) {
      q[0] = phys_rng_range(r, rg[0] + 0.05 * (rg[1] - rg[0]), rg[1] - 0.05 * (rg[1] - rg[0]));
    } else {
      q[0] = m->qpos0[m->jnt_qposadr[j]] + phys_rng_range(r, -1, 1);
    }
  }
  for (int i = 0; i < m->nv; i++) d->qvel[i] = phys_rng_range(r, -1, 1);
  for (int i = 0; i < m->nu; i++) {
    const double* rg = m->actuator_ctrlrange + 2 * i;
    d->ctrl[i] = m->actuator_ctrllimited[i] ? phys_rng_range(r, 0.9 * rg[0] + 0.1 * rg[1], 0.1 * rg[0] + 0.9 * rg[1])
                                            : phys_rng_range(r, -1, 1);
  }
}

// largest |x_i| (n values), 0 if n = 0
static double maxabs(const double* x, size_t n) {
  double s = 0;
  for (size_t i = 0; i < n; i++) s = fmax(s, fabs(x[i]));
  return s;
}

// fold one state's comparison of block b (analytic X against reference Y, ld columns) into its worst errors:
// abs = |X - Y|, rel = abs / max(|Y|, GC_FLOOR * max(max |Y| of the block, fscale))
static void compare_block(gcBlock* b, const double* X, const double* Y, int ld, double fscale) {
  double bmax = 0;
  for (int i = 0; i < b->nr; i++)
    for (int j = 0; j < b->nc; j++) bmax = fmax(bmax, fabs(Y[(size_t)(b->r0 + i) * ld + b->c0 + j]));
  double scale = fmax(bmax, fscale);
  for (int i = 0; i < b->nr; i++) {
    for (int j = 0; j < b->nc; j++) {
      size_t k = (size_t)(b->r0 + i) * ld + b->c0 + j;
      double e = fabs(X[k] - Y[k]), s = fmax(fmax(fabs(Y[k]), GC_FLOOR * scale), 1e-300);
      if (isnan(e)) e = INFINITY;   // a non-finite entry fails
      b->maxabs = fmax(b->maxabs, e);
      b->maxrel = fmax(b->maxrel, e / s);
    }
  }
}

// scratch of gradcheck: analytic A, B; the twin at h and 2h
typedef struct gcWork_ {
  double *A, *B, *Ah, *Bh, *A2, *B2;
} gcWork;

// draw a random state whose step has no contacts (limits are disabled) and take its analytic Jacobians;
// returns the status of the last try
static physStatus draw_state(const physModel* m, physData* d, physRng* r, gcWork* w) {
  physStatus st = PHYS_ERR_ARG;
  for (int t = 0; t < GC_TRIES && st == PHYS_ERR_ARG; t++) {
    random_state(m, d, r);
    st = phys_step_jacobian(m, d, w->A, w->B);
  }
  return st;
}

// one state: analytic against (4 J_h - J_2h) / 3; 0 (message printed) if the state could not be used
static int check_state(gcBlock* blk, int nblk, const physModel* m, physData* d, physRng* r, gcWork* w,
                       const char* where) {
  int nv = m->nv, nu = m->nu, n2 = 2 * nv;
  physStatus st = draw_state(m, d, r, w);
  if (st != PHYS_OK) {
    if (st == PHYS_ERR_ARG) cli_error("%s: no contact-free state in %d random draws (try --no-contact)", where,
                                      GC_TRIES);
    else explain_status(m, d, st, where);
    return 0;
  }
  // rounding of x+ scales with |q|, |v| and the velocity change dt |a| (d->qacc: the step's acceleration)
  double fscale = fmax(fmax(1, maxabs(d->qpos, (size_t)m->nq)), maxabs(d->qvel, (size_t)nv));
  fscale = fmax(fscale, m->opt.timestep * maxabs(d->qacc, (size_t)nv));
  if (phys_step_jacobian_fd(m, d, GC_H, w->Ah, w->Bh) != PHYS_OK ||
      phys_step_jacobian_fd(m, d, 2 * GC_H, w->A2, w->B2) != PHYS_OK) {
    cli_error("%s: a perturbed step failed: %s", where, d->lastwarning);
    return 0;
  }
  for (size_t i = 0; i < (size_t)n2 * n2; i++) w->Ah[i] = (4 * w->Ah[i] - w->A2[i]) / 3;
  for (size_t i = 0; i < (size_t)n2 * nu; i++) w->Bh[i] = (4 * w->Bh[i] - w->B2[i]) / 3;
  for (int k = 0; k < nblk; k++) {
    if (blk[k].isB) compare_block(blk + k, w->B, w->Bh, nu, fscale);
    else compare_block(blk + k, w->A, w->Ah, n2, fscale);
  }
  return 1;
}

// the blocks --wrt asks for: dq+/dq, dq+/dv, dv+/dq, dv+/dv (state), dq+/du, dv+/du (ctrl, if nu > 0)
static int make_blocks(gcBlock* blk, const physModel* m, int wrt) {
  static const char* names[6] = {"dq+/dq", "dq+/dv", "dv+/dq", "dv+/dv", "dq+/du", "dv+/du"};
  int nv = m->nv, n = 0;
  for (int k = 0; k < 6; k++) {
    int isB = k >= 4;
    if ((isB && (wrt == WRT_STATE || m->nu == 0)) || (!isB && wrt == WRT_CTRL)) continue;
    gcBlock b = {names[k], isB, isB ? (k - 4) * nv : (k / 2) * nv, isB ? 0 : (k % 2) * nv, nv,
                 isB ? m->nu : nv, 0, 0};
    blk[n++] = b;
  }
  return n;
}

// print the table; returns 1 if every block passes
static int print_table(const gcBlock* blk, int nblk, const physModel* m, const gradArgs* a) {
  printf("gradcheck %s: nv %d, nu %d, dt %g, %d state%s, seed %d, four-point central differences at h = %g\n",
         a->model, m->nv, m->nu, m->opt.timestep, a->states, a->states == 1 ? "" : "s", a->seed, GC_H);
  printf("%-8s %13s %13s %10s  %s\n", "block", "max abs err", "max rel err", "tolerance", "result");
  int npass = 0;
  for (int k = 0; k < nblk; k++) {
    int pass = blk[k].maxrel <= GC_TOL;
    npass += pass;
    printf("%-8s %13.3e %13.3e %10.0e  %s\n", blk[k].name, blk[k].maxabs, blk[k].maxrel, GC_TOL,
           pass ? "PASS" : "FAIL");
  }
  printf("%d of %d blocks pass\n", npass, nblk);
  return npass == nblk;
}

// every state, then the table
static int gradcheck(const physModel* m, physData* d, const gradArgs* a) {
  int n2 = 2 * m->nv, nu = m->nu, ok = 1;
  size_t na = (size_t)n2 * n2 + 1, nb = (size_t)n2 * nu + 1;
  double* buf = malloc(sizeof(double) * 3 * (na + nb));
  if (!buf) {
    cli_error("%s: out of memory", a->model);
    return CLI_EXIT_INPUT;
  }
  gcWork w = {buf, buf + na, buf + na + nb, buf + 2 * na + nb, buf + 2 * na + 2 * nb, buf + 3 * na + 2 * nb};
  gcBlock blk[6];
  int nblk = make_blocks(blk, m, a->wrt);
  physRng r;
  phys_rng_seed(&r, (uint64_t)a->seed);
  char where[512];
  for (int s = 0; s < a->states && ok; s++) {
    snprintf(where, sizeof where, "%s: state %d", a->model, s);
    ok = check_state(blk, nblk, m, d, &r, &w, where);
  }
  free(buf);
  if (!ok) return CLI_EXIT_INPUT;
  return print_table(blk, nblk, m, a) ? CLI_EXIT_OK : CLI_EXIT_INPUT;
}

// physid gradcheck
int cli_gradcheck(int argc, char** argv) {
  gradArgs a = {0};
  a.states = 5;
  a.wrt = WRT_BOTH;
  const argOption opt[] = {
      {"--states", ARG_INT, &a.states, "N", "number of random states (default 5)", 1, 100000, 0},
      {"--seed", ARG_INT, &a.seed, "S", "seed of the random states (default 0)", 0, 2147483647, 0},
      {"--wrt", ARG_CHOICE, &a.wrt, "state|ctrl|state,ctrl", "blocks: of A, of B, or both (default)", 0, 0, 0},
      {"--dt", ARG_DOUBLE, &a.dt, "DT", "timestep in seconds (default: the model's)", 1e-9, 1, 0},
      {"--no-contact", ARG_FLAG, &a.nocontact, "",
       "disable contacts (else states with contacts are drawn again)", 0, 0, 0},
      {"--floating", ARG_FLAG, &a.floating, "", "URDF: give the root link a free joint", 0, 0, 0},
  };
  const argCommand cmd = {"gradcheck",
                          "Compare the analytic step Jacobians A = dx+/dx, B = dx+/du with four-point central "
                          "differences\n(h = 1e-3) at N random states, joint limits disabled; print per block "
                          "the largest absolute and\nrelative error, tolerance 1e-6, PASS/FAIL. Exit 0 if every "
                          "block passes, else 1.",
                          "MODEL", 1, opt, sizeof opt / sizeof opt[0],
                          "physid gradcheck /usr/share/mujoco/model/humanoid/humanoid.xml --no-contact --states 3"};
  const char* pos[ARGS_MAXPOS];
  int code = cli_parse(pos, &cmd, argc, argv);
  if (code >= 0) return code;
  a.model = pos[0];
  physModel* m = load_model(&a);
  if (!m) return CLI_EXIT_INPUT;
  m->opt.disableflags |= PHYS_DSBL_LIMIT;
  physData* d = phys_make_data(m);
  code = CLI_EXIT_INPUT;
  if (!d) cli_error("%s: out of memory allocating the simulation data", a.model);
  else code = gradcheck(m, d, &a);
  phys_free_data(d);
  phys_free_model(m);
  return code;
}
