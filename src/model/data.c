// data.c - physData: one allocation holding state, computed quantities and the scratch arena.
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "physid.h"

size_t phys_arena_pairkeys(const physModel* m) {
  size_t ng = (size_t)m->ngeom, all = ng * ng / 2 + 8, most = (size_t)1 << 18;
  return all < most ? all : most;
}

// the broad phase's scratch in doubles (collision.c): sweep entries (9 doubles each, a bound of sizeof(sweep_t)),
// plane and order lists, sort keys, the candidate keys, 8-double alignment of the 5 blocks
static size_t broad_phase_size(const physModel* m) {
  size_t ng = (size_t)m->ngeom;
  return 9 * ng + 2 * (ng / 2 + 1) + ng + 1 + phys_arena_pairkeys(m) + 5 * 8;
}

// arena size in doubles: the broad phase's scratch (broad_phase_size) and dense nv x nv work, and the contact problem of n = 3*nconmax + njnt rows
// (J n x nv, M^-1 J' nv x n, G n x n, the LCP tableau of 7/3 n rows ~ 5.4 n^2, solver vectors). The
// coefficients are upper estimates, not a derived maximum: measured high-water marks (d->pstack_max) of
// the step, its Jacobians, VJPs and rollout on tests/grad/test_golden.c's scenes stay below 2% of it
// (the box on the plane 4.4k of 463k doubles, the humanoid on the floor 54k of 2.76M). An exhausted arena
// is a status, not an abort (arena.h).
static size_t dense_size(const physModel* m) {
  size_t nv = (size_t)m->nv, nb = (size_t)m->nbody, n = 3 * (size_t)m->nconmax + (size_t)m->njnt;
  return 16 * nv * nv + 400 * (nv + nb) + 10 * n * n + 8 * n * nv + 64 * n + 65536;
}

size_t phys_arena_size(const physModel* m) { return dense_size(m) + broad_phase_size(m); }

size_t phys_arena_tables(const physModel* m) { return dense_size(m) / 8; }

static size_t data_arrays_size(const physData* d) {
  size_t size = 0;
#define PHYS_X_SIZE(type, name, n, mult) size += ((sizeof(type) * (size_t)(d->n) * (size_t)(mult) + 7) / 8) * 8;
  const int nv = d->nv;  // second size of qM
  (void)nv;
  PHYS_DATA_ARRAYS(PHYS_X_SIZE)
#undef PHYS_X_SIZE
  return size;
}

physData* phys_make_data(const physModel* m) {
  physData* d = calloc(1, sizeof(physData));
  if (!d) return NULL;
  d->nq = m->nq;
  d->nv = m->nv;
  d->nbody = m->nbody;
  d->njnt = m->njnt;
  d->ngeom = m->ngeom;
  d->nsite = m->nsite;
  d->nspring = m->nspring;
  d->nu = m->nu;
  d->nconmax = m->nconmax;
  d->nstack = phys_arena_size(m);
  d->nbuffer = data_arrays_size(d) + d->nstack * sizeof(double);
  d->buffer = calloc(1, d->nbuffer);
  if (!d->buffer) {
    free(d);
    return NULL;
  }
  char* p = (char*)d->buffer;
#define PHYS_X_PTR(type, name, n, mult)                                          \
  d->name = (type*)p;                                                            \
  p += ((sizeof(type) * (size_t)(d->n) * (size_t)(mult) + 7) / 8) * 8;
  const int nv = d->nv;
  (void)nv;
  PHYS_DATA_ARRAYS(PHYS_X_PTR)
#undef PHYS_X_PTR
  d->stack = (double*)p;
  phys_reset_data(m, d);
  return d;
}

void phys_free_data(physData* d) {
  if (!d) return;
  free(d->buffer);
  free(d);
}

// qpos0, zero velocity, controls and applied forces, time 0, no warnings
void phys_reset_data(const physModel* m, physData* d) {
  memset(d->buffer, 0, d->nbuffer - d->nstack * sizeof(double));
  memcpy(d->qpos, m->qpos0, sizeof(double) * (size_t)m->nq);
  d->time = 0;
  d->ncon = d->ncon_prev = d->ncon_dropped = d->nlimit = d->solver_iter = 0;
  d->solver_residual = 0;
  d->nwarning = 0;
  d->lastwarning[0] = 0;
  memset(d->warning_count, 0, sizeof d->warning_count);
  memset(d->warning_time, 0, sizeof d->warning_time);
  memset(d->warning_first, 0, sizeof d->warning_first);
  d->energy_start = d->energy_scale = d->energy_tstart = d->energy_poswork = 0;
  d->energy_tend = NAN;
  d->energy_state = 0;
  d->energy_input = 0;
  d->pstack = 0;
  d->pstack_max = 0;
}

physStatus phys_reset_keyframe(const physModel* m, physData* d, int k) {
  if (k < 0 || k >= m->nkey) return PHYS_ERR_ARG;
  phys_reset_data(m, d);
  d->time = m->key_time[k];
  memcpy(d->qpos, m->key_qpos + (size_t)k * m->nq, sizeof(double) * (size_t)m->nq);
  memcpy(d->qvel, m->key_qvel + (size_t)k * m->nv, sizeof(double) * (size_t)m->nv);
  memcpy(d->ctrl, m->key_ctrl + (size_t)k * m->nu, sizeof(double) * (size_t)m->nu);
  return PHYS_OK;
}

//---------------------------------------------------------------------------------------------------------
// scratch arena

size_t phys_stack_mark(const physData* d) { return d->pstack; }

// n doubles from the arena, 8-double aligned. Exhausted: inside a guarded call, back to its guard
// (arena.h); outside one, a counted warning and NULL
double* phys_stack_alloc(physData* d, size_t n) {
  size_t start = (d->pstack + 7) & ~(size_t)7;
  if (start > d->nstack || n > d->nstack - start) {
    size_t free_ = d->nstack - (start < d->nstack ? start : d->nstack);
    physArenaGuard* g = d->arena_guard;
    if (g) {
      g->request = n, g->free = free_;
      longjmp(g->env, 1);
    }
    phys_data_warn(d, PHYS_WARN_OTHER, "phys_stack_alloc: scratch arena exhausted (%zu doubles asked, %zu free of %zu)",
                   n, free_, d->nstack);
    return NULL;
  }
  d->pstack = start + n;
  if (d->pstack > d->pstack_max) d->pstack_max = d->pstack;
  return d->stack + start;
}

void phys_arena_enter(physData* d, physArenaGuard* g) {
  g->prev = d->arena_guard;
  g->mark = d->pstack;
  g->request = g->free = 0;
  d->arena_guard = g;
}

void phys_arena_leave(physData* d, physArenaGuard* g) { d->arena_guard = g->prev; }

physStatus phys_arena_failed(physData* d, physArenaGuard* g, physWarning kind, const char* who) {
  d->arena_guard = g->prev;
  d->pstack = g->mark;
  phys_data_warn(d, kind, "%s: scratch arena exhausted (%zu doubles asked, %zu free of %zu)", who,
                 g->request, g->free, d->nstack);
  return PHYS_ERR_NOMEM;
}

void phys_stack_free(physData* d, size_t mark) { d->pstack = mark; }

// count a warning of the given kind whose text is already in d->lastwarning; the kind's first one keeps
// its text and time
static void count_warning(physData* d, physWarning kind) {
  if ((int)kind < 0 || kind >= PHYS_NWARNKIND) kind = PHYS_WARN_OTHER;
  d->nwarning++;
  if (d->warning_count[kind]++ == 0) {
    d->warning_time[kind] = d->time;
    memcpy(d->warning_first[kind], d->lastwarning, sizeof d->lastwarning);
  }
}

// count a numerical warning of kind PHYS_WARN_OTHER and keep its text
void phys_data_warning(physData* d, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(d->lastwarning, sizeof(d->lastwarning), fmt, ap);
  va_end(ap);
  count_warning(d, PHYS_WARN_OTHER);
}

// count a numerical warning of a kind and keep its text
void phys_data_warn(physData* d, physWarning kind, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(d->lastwarning, sizeof(d->lastwarning), fmt, ap);
  va_end(ap);
  count_warning(d, kind);
}

static const char* const WARNING_NAMES[PHYS_NWARNKIND] = {
    "other", "initial overlap", "solver not converged", "solver failed", "contacts dropped", "energy gain",
    "step rejected"};

const char* phys_warning_name(int kind) {
  return kind >= 0 && kind < PHYS_NWARNKIND ? WARNING_NAMES[kind] : "unknown";
}
