// test_step_friction_islands.c - the friction rows solved by islands (src/step/step.c frictionloss_coupled,
// src/contact/island.c phys_friction_groups; issue 19), on islands_friction.xml (box a alone, a sled with joint
// frictionloss on the floor, a cylinder with torsional friction, a pendulum with frictionloss touching nothing):
//  1. the groups: three (the sled's tree, the cylinder's, the pendulum's), in the order of their root dofs 6, 8,
//     14, with 2, 6 and 1 dofs; the sled's and the cylinder's contact rows in their groups, box a's in none; the
//     sled's frictionloss row in group 0, the cylinder's torsional rows (one per contact) in group 1, the
//     pendulum's row in group 2;
//  2. box a, whose island has no friction row, moves bit for bit as in islands_alone.xml (the box alone) while
//     the sled slides against its frictionloss, the cylinder spins down and the pendulum swings (lcp, cone,
//     ccp; 300 steps of the pushed scene, no warning);
//  3. by groups and on the whole problem (PHYS_DSBL_ISLAND: the path before islands) the same trajectory to
//     the block Gauss-Seidel's tolerance (1e-10 of the impulses' energy: 1e-9 m and m/s over 300 steps), and
//     the same step Jacobian A and VJP to 1e-9 of their largest entry (the derivatives read the friction rows'
//     solution from the step record; ccp: outside the cylinder's entries, test_derivatives says why);
//  4. the friction rows acted: the sled and the cylinder's spin stop within the run.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contact.h"
#include "grad.h"
#include "physid.h"
#include "step.h"
#include "test.h"

#define SCENE "tests/data/contact/islands_friction.xml"
#define ALONE "tests/data/contact/islands_alone.xml"
#define STEPS 300

static const char* const NAME[] = {"lcp", "cone", "ccp"};

static physModel* load(const char* file, int model) {
  physLog log = {0};
  physModel* m = phys_load(file, NULL, &log);
  CHECK_MSG(m != NULL, "%s: %s", file, log.error);
  if (m) m->opt.contact = model;
  return m;
}

// item 1 after 100 settling steps (lcp)
static void test_groups(void) {
  physModel* m = load(SCENE, PHYS_CONTACT_LCP);
  if (!m) return;
  physData* d = phys_make_data(m);
  for (int i = 0; i < 100; i++) phys_step(m, d);
  size_t mark = phys_stack_mark(d);
  physStepStage st;
  physContactList cl = {(physContact*)phys_stack_alloc(d, sizeof(physContact) * (size_t)m->nconmax / sizeof(double) + 1),
                        0, m->nconmax, 0, 0};
  physWarmStart warm = {0, NULL};
  CHECK(phys_step_stage(m, d, NULL, &warm, &cl, &st) == 1);
  const physConstraintProblem* p = &st.p;
  const physFrictionRows* fr = &st.fr;
  int ncyl = 0;   // (the cylinder's contacts: one torsional row each)
  for (int i = 0; i < p->nc; i++) ncyl += m->geom_bodyid[p->con[i].geom[1]] == 3 || m->geom_bodyid[p->con[i].geom[0]] == 3;
  CHECK_MSG(ncyl > 0 && fr->nf == 2 + ncyl && fr->nfd == 2 && fr->nfa == ncyl, "friction rows %d (dof %d, angular %d; "
            "cylinder contacts %d)", fr->nf, fr->nfd, fr->nfa, ncyl);
  int* rg = malloc(sizeof(int) * ((size_t)p->n + 1));
  int* fg = malloc(sizeof(int) * ((size_t)fr->nf + 1));
  int gdof[16];
  int ng = fr->nf == 2 + ncyl ? phys_friction_groups(m, d, p, NULL, 0, fr, rg, fg, gdof) : -1;
  CHECK_MSG(ng == 3, "groups %d", ng);
  if (ng == 3) {
    CHECK_MSG(gdof[0] == 2 && gdof[1] == 6 && gdof[2] == 1, "dofs %d %d %d", gdof[0], gdof[1], gdof[2]);
    int okf = fg[0] == 0 && fg[1] == 2;
    for (int i = 2; i < fr->nf; i++) okf &= fg[i] == 1;
    CHECK_MSG(okf, "friction rows' groups");
    int ok = 1, seen[3] = {0};
    for (int r = 0; r < 3 * p->nc; r++) {
      const physContact* c = p->con + r / 3;
      int body = m->geom_bodyid[c->geom[1]] ? m->geom_bodyid[c->geom[1]] : m->geom_bodyid[c->geom[0]];
      int want = body == 1 ? -1 : body - 2;   // (bodies a, s, c: 1, 2, 3)
      ok &= rg[r] == want;
      if (rg[r] >= 0) seen[rg[r]]++;
    }
    CHECK_MSG(ok, "contact rows' groups");
    CHECK_MSG(seen[0] > 0 && seen[1] > 0 && seen[2] == 0, "rows in groups %d %d %d", seen[0], seen[1], seen[2]);
  }
  free(rg), free(fg);
  phys_stack_free(d, mark);
  phys_free_data(d);
  phys_free_model(m);
}

// the scene pushed after 50 settling steps: box a sideways at 1 m/s, the sled at 1 m/s, the cylinder spun at
// 2 rad/s about its axis (faster, ccp's relaxation launches it: ccp.c) (with a_only: the box alone, islands_alone.xml); n steps, the qpos and qvel of every
// step into traj (n x (nq + nv)), or only box a's first 7 + 6 when a_only
static void run(const physModel* m, physData* d, int n, double* traj, int a_only) {
  phys_reset_data(m, d);
  if (m->nv > 6) d->qpos[16] = 1.4;   // (the pendulum tilted)
  for (int i = 0; i < 50; i++) phys_step(m, d);
  d->qvel[0] = 1;
  if (m->opt.contact == PHYS_CONTACT_CCP) d->qpos[2] += m->opt.timestep * 0.8;   // ccp's gliding height dt mu v
  if (m->nv > 6) d->qvel[6] = 1, d->qvel[13] = 2;
  int nq = a_only ? 7 : m->nq, nv = a_only ? 6 : m->nv;
  for (double* row = traj; row < traj + (size_t)n * (nq + nv); row += nq + nv) {
    phys_step(m, d);
    memcpy(row, d->qpos, sizeof(double) * (size_t)nq);
    memcpy(row + nq, d->qvel, sizeof(double) * (size_t)nv);
  }
}

// largest |x - y| over n numbers, its index into *at (may be NULL)
static double maxdiff_at(const double* x, const double* y, size_t n, size_t* at) {
  size_t k = 0;
  for (size_t i = 1; i < n; i++)
    if (fabs(x[i] - y[i]) > fabs(x[k] - y[k])) k = i;
  if (at) *at = k;
  return n > 0 ? fabs(x[k] - y[k]) : 0;
}

// items 2, 3 (trajectories) and 4 for contact model `model`
static void test_trajectories(int model) {
  physModel* m = load(SCENE, model);
  physModel* ma = load(ALONE, model);
  if (!m || !ma) return;
  physData* d = phys_make_data(m);
  physData* da = phys_make_data(ma);
  size_t w = (size_t)(m->nq + m->nv), at;
  // the whole state by groups (on) and whole (off); box a's 13 numbers alone and in the scene
  double* buf = malloc(sizeof(double) * (2 * w + 26) * STEPS);
  double *on = buf, *off = on + w * STEPS, *a_alone = off + w * STEPS, *a_scene = a_alone + 13 * STEPS;
  run(m, d, STEPS, on, 0);
  CHECK_MSG(d->nwarning == 0, "%s: %d warnings by groups", NAME[model], d->nwarning);
  m->opt.disableflags |= PHYS_DSBL_ISLAND;
  run(m, d, STEPS, off, 0);
  double e = maxdiff_at(on, off, w * STEPS, &at);
  CHECK_MSG(e <= 1e-9, "%s: by groups and whole differ by %.3g (step %zu, entry %zu)", NAME[model], e, at / w,
            at % w);
  m->opt.disableflags &= ~PHYS_DSBL_ISLAND;
  run(m, d, STEPS, a_scene, 1);
  run(ma, da, STEPS, a_alone, 1);
  double ea = maxdiff_at(a_alone, a_scene, 13 * STEPS, NULL);
  CHECK_MSG(memcmp(a_alone, a_scene, sizeof(double) * 13 * STEPS) == 0 && da->nwarning == 0,
            "%s: box a in the scene differs from the box alone by %.3g (%d warnings alone)", NAME[model], ea,
            da->nwarning);
  const double* last = on + (STEPS - 1) * w;
  CHECK_MSG(fabs(last[m->nq + 6]) < 1e-9, "%s: the sled still moves at %.3g m/s", NAME[model], last[m->nq + 6]);
  CHECK_MSG(fabs(last[m->nq + 13]) < 1e-6, "%s: the cylinder still spins at %.3g rad/s", NAME[model],
            last[m->nq + 13]);
  printf("%s: by groups against the whole problem: %.3g (trajectory, 300 steps)\n", NAME[model], e);
  free(buf);
  phys_free_data(da);
  phys_free_data(d);
  phys_free_model(ma);
  phys_free_model(m);
}

// 1 if entry i of the state (q, v: 2 nv) is the cylinder's (dofs 8..13)
static int cylinder_entry(int i, int nv) { return i % nv >= 8 && i % nv <= 13; }

// item 3 (derivatives): A and a VJP 20 steps after the push, by groups and whole. ccp: the cylinder's four
// contacts on its flat face share its weight in no unique way (G singular), the two solves return different
// normal impulses for the same velocities (0.0048 / 0.0050 against 0.0035 / 0.0063 N s here, qvel to 2e-13),
// and d(J(q)' lambda)/dq depends on the impulses themselves: its rows and columns are compared for lcp and
// cone only, the other bodies' everywhere (the VJP with a cotangent that is 0 on the cylinder)
static void test_derivatives(int model) {
  physModel* m = load(SCENE, model);
  if (!m) return;
  physData* d = phys_make_data(m);
  int nx = 2 * m->nv, skip = model == PHYS_CONTACT_CCP;
  double* traj = malloc(sizeof(double) * (size_t)(m->nq + m->nv) * 20);
  double* A[2] = {malloc(sizeof(double) * (size_t)nx * nx), malloc(sizeof(double) * (size_t)nx * nx)};
  double* xb[2] = {malloc(sizeof(double) * (size_t)nx), malloc(sizeof(double) * (size_t)nx)};
  double* y = malloc(sizeof(double) * (size_t)nx);
  for (int i = 0; i < nx; i++) y[i] = skip && cylinder_entry(i, m->nv) ? 0 : 1.0 + 0.1 * i;
  run(m, d, 20, traj, 0);
  physStatus st[2];
  for (int k = 0; k < 2; k++) {
    if (k) m->opt.disableflags |= PHYS_DSBL_ISLAND;
    st[k] = phys_step_jacobian(m, d, A[k], NULL);
    phys_step_vjp(m, d, y, xb[k], NULL);
  }
  CHECK(st[0] == PHYS_OK && st[1] == PHYS_OK);
  double scale = 0, sv = 0, ea = 0, ev = 0;
  for (int i = 0; i < nx; i++) {
    if (skip && cylinder_entry(i, m->nv)) continue;
    for (int j = 0; j < nx; j++) {
      if (skip && cylinder_entry(j, m->nv)) continue;
      scale = fmax(scale, fabs(A[1][(size_t)i * nx + j]));
      ea = fmax(ea, fabs(A[0][(size_t)i * nx + j] - A[1][(size_t)i * nx + j]));
    }
    sv = fmax(sv, fabs(xb[1][i]));
    ev = fmax(ev, fabs(xb[0][i] - xb[1][i]));
  }
  CHECK_MSG(ea <= 1e-9 * scale, "%s: A differs by %.3g (scale %.3g)", NAME[model], ea, scale);
  CHECK_MSG(ev <= 1e-9 * sv, "%s: VJP differs by %.3g (scale %.3g)", NAME[model], ev, sv);
  free(traj), free(A[0]), free(A[1]), free(xb[0]), free(xb[1]), free(y);
  phys_free_data(d);
  phys_free_model(m);
}

int main(void) {
  test_groups();
  for (int model = PHYS_CONTACT_LCP; model <= PHYS_CONTACT_CCP; model++) {
    test_trajectories(model);
    test_derivatives(model);
  }
  return test_done();
}
