// test_step_contact_atlas.c - the constrained step's derivatives on Atlas standing (issue 4 item 6): Atlas v3
// (dart-doc's atlas_v3_no_head.urdf, floating root, 33 dofs) on dart-doc's ground.urdf, Nimble's set-up
// (gravity along -y, dt 1 ms, bench/bench_table2.c), settled 10 steps onto its feet (8 mesh-hull contacts).
// For lcp, cone, ccp and penalty: A = dx+/dx against central differences of phys_step (phys_step_jacobian_fd) at
// h = 1e-6 over the input columns whose differences at h and 2h agree to 1e-4 (the others straddle a foot
// corner's mode switch and are counted; at least 90% must be compared), to 1e-4 relative (floor 1e-3 of the
// largest entry); the reverse mode against A by a dot-product test to 1e-12; the next phys_step unchanged by
// the derivative calls (bit for bit).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arena.h"
#include "grad.h"
#include "grad/grad_models.h"
#include "spec.h"
#include "urdf.h"

#define ATLAS_DIR "/usr/share/doc/dart/data/sdf/atlas/"

// Atlas on the ground (both URDFs, the ground attached to the world), gravity -y, dt 1 ms
static physModel* load_atlas(void) {
  physLog log;
  memset(&log, 0, sizeof log);
  physLoadOptions opt = {.urdf_floating = 1, .strict_mesh = 0};
  physSpec* atlas = phys_parse_urdf(ATLAS_DIR "atlas_v3_no_head.urdf", &opt, &log);
  physSpec* ground = phys_parse_urdf(ATLAS_DIR "ground.urdf", NULL, &log);
  physModel* m = NULL;
  if (atlas && ground && phys_spec_attach(atlas, ground, 0) == PHYS_OK) {
    atlas->opt.timestep = 0.001;
    atlas->opt.gravity[0] = atlas->opt.gravity[2] = 0;
    atlas->opt.gravity[1] = -9.81;
    m = phys_compile(atlas, &log);
  }
  CHECK_MSG(m != NULL, "Atlas: %s", log.error);
  phys_spec_free(atlas);
  phys_spec_free(ground);
  return m;
}

typedef struct {
  double *qpos, *qvel, time;
  physContact *con, *prev;
  int ncon, nprev;
} snap;

static void save(snap* s, const physModel* m, const physData* d) {
  memcpy(s->qpos, d->qpos, sizeof(double) * m->nq);
  memcpy(s->qvel, d->qvel, sizeof(double) * m->nv);
  memcpy(s->con, d->contact, sizeof(physContact) * d->ncon);
  memcpy(s->prev, d->contact_prev, sizeof(physContact) * d->ncon_prev);
  s->time = d->time, s->ncon = d->ncon, s->nprev = d->ncon_prev;
}

static void load(const snap* s, const physModel* m, physData* d) {
  memcpy(d->qpos, s->qpos, sizeof(double) * m->nq);
  memcpy(d->qvel, s->qvel, sizeof(double) * m->nv);
  memcpy(d->contact, s->con, sizeof(physContact) * s->ncon);
  memcpy(d->contact_prev, s->prev, sizeof(physContact) * s->nprev);
  d->time = s->time, d->ncon = s->ncon, d->ncon_prev = s->nprev;
}

static void check_model(physModel* m, int model) {
  static const char* name[4] = {"lcp", "cone", "ccp", "penalty"};
  m->opt.contact = model;
  m->opt.solver_tolerance = 1e-12;
  physData* d = phys_make_data(m);
  int nv = m->nv, n2 = 2 * nv;
  d->qpos[3] = cos(-M_PI / 4), d->qpos[4] = sin(-M_PI / 4), d->qpos[5] = d->qpos[6] = 0;
  for (int i = 0; i < 10; i++) phys_step(m, d);
  snap s = {malloc(sizeof(double) * m->nq), malloc(sizeof(double) * nv), 0, malloc(sizeof(physContact) * m->nconmax),
            malloc(sizeof(physContact) * m->nconmax), 0, 0};
  save(&s, m, d);
  double *A = malloc(sizeof(double) * n2 * n2), *F1 = malloc(sizeof(double) * n2 * n2),
         *F2 = malloc(sizeof(double) * n2 * n2);
  CHECK(phys_step_jacobian(m, d, A, NULL) == PHYS_OK);
  load(&s, m, d);
  CHECK(phys_step_jacobian_fd(m, d, 1e-6, F1, NULL) == PHYS_OK);
  load(&s, m, d);
  CHECK(phys_step_jacobian_fd(m, d, 2e-6, F2, NULL) == PHYS_OK);
  load(&s, m, d);
  double scale = gm_maxabs(A, n2 * n2), worst = 0;
  int used = 0;
  for (int j = 0; j < n2; j++) {
    int smooth = 1;
    for (int i = 0; i < n2 && smooth; i++) {
      double a = F1[i * n2 + j], b = F2[i * n2 + j];
      smooth = fabs(a - b) <= 1e-4 * fmax(fmax(fabs(a), fabs(b)), 1e-3 * scale);
    }
    if (!smooth) continue;
    used++;
    for (int i = 0; i < n2; i++) {
      double a = A[i * n2 + j], b = F1[i * n2 + j];
      worst = fmax(worst, fabs(a - b) / fmax(fmax(fabs(a), fabs(b)), 1e-3 * scale));
    }
  }
  printf("Atlas %s: %d contacts, %d of %d input columns away from a switch, worst relative error %.3g\n",
         name[model], s.ncon, used, n2, worst);
  CHECK(s.ncon >= 4);
  CHECK_MSG(used >= 0.9 * n2, "%s: only %d of %d columns compared", name[model], used, n2);
  CHECK_MSG(worst <= 1e-4, "%s: A differs from central differences by %.3g", name[model], worst);
  // reverse mode: <y, A x> = <A' y, x>
  double *x = malloc(sizeof(double) * n2), *y = malloc(sizeof(double) * n2), *yb = malloc(sizeof(double) * n2);
  for (int i = 0; i < n2; i++) x[i] = sin(0.7 * i + 0.1), y[i] = cos(0.37 * i);
  CHECK(phys_step_vjp(m, d, y, yb, NULL) == PHYS_OK);
  double lhs = gm_bilinear(A, y, x, n2, n2, NULL), rhs = 0, mag = 0;
  for (int i = 0; i < n2; i++) rhs += yb[i] * x[i], mag += fabs(yb[i] * x[i]);
  CHECK_MSG(fabs(lhs - rhs) <= 1e-12 * mag, "%s: dot test %.3g", name[model], fabs(lhs - rhs) / mag);
  // the derivative calls leave the next step unchanged
  load(&s, m, d);
  phys_step(m, d);
  double* q1 = malloc(sizeof(double) * m->nq);
  memcpy(q1, d->qpos, sizeof(double) * m->nq);
  load(&s, m, d);
  phys_step_jacobian(m, d, A, NULL);
  phys_step_vjp(m, d, y, yb, NULL);
  phys_step(m, d);
  CHECK(memcmp(q1, d->qpos, sizeof(double) * m->nq) == 0);
  int ncon = s.ncon > d->ncon ? s.ncon : d->ncon;
  free(q1), free(x), free(y), free(yb), free(A), free(F1), free(F2);
  free(s.qpos), free(s.qvel), free(s.con), free(s.prev);
  // the arena: the steps, Jacobians and VJPs above within phys_arena_size, none exhausted it, and within the
  // deepest chain's need at these contacts and limit rows (arena.h), which overestimates it by at most 4x
  size_t need = phys_arena_need(m, model, ncon, d->nlimit, 0);
  CHECK(d->pstack_max <= phys_arena_size(m) && d->nstack == phys_arena_size(m) &&
        d->warning_count[PHYS_WARN_REJECTED] == 0 && !strstr(d->lastwarning, "exhausted"));
  CHECK_MSG(d->pstack_max <= need && need <= 4 * d->pstack_max, "%s: high-water %zu, need %zu",
            phys_contact_name(model), d->pstack_max, need);
  printf("arena %s: high-water %zu, need %zu (%.2fx) at %d contacts, %d limit rows; size %zu doubles (ngeom %d, "
         "phys_make_data %zu bytes)\n", phys_contact_name(model), d->pstack_max, need,
         (double)need / (double)d->pstack_max, ncon, d->nlimit, d->nstack, m->ngeom, d->nbuffer);
  phys_free_data(d);
}

int main(void) {
  if (access(ATLAS_DIR "atlas_v3_no_head.urdf", R_OK) != 0) {
    CHECK_MSG(0, "dart-doc's Atlas is not installed (scripts/setup.sh installs dart-doc)");
    return test_done();
  }
  physModel* m = load_atlas();
  if (!m) return test_done();
  for (int k = 0; k < 4; k++)
    check_model(m, (int[]){PHYS_CONTACT_LCP, PHYS_CONTACT_CONE, PHYS_CONTACT_CCP, PHYS_CONTACT_PENALTY}[k]);
  phys_free_model(m);
  return test_done();
}
