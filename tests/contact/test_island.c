// test_island.c - the constraint problem split into islands (src/contact/island.c, issue 19 item 1):
//  1. islands.xml (a box alone, a stack of two, a sphere): three islands in the order of their root dofs (0, 6,
//     18), every row in exactly one, rows ascending, each island's dofs 6, 12, 6; a row's island is the one of
//     its contact's bodies;
//  2. islands_eq.xml: a connect constraint joins two boxes that share no contact into one island (two islands,
//     not three), and without the equality's rows the same contacts make three;
//  3. independent bodies: the box of islands.xml, with islands on, moves bit for bit as in islands_alone.xml
//     (the box alone), for lcp, cone and ccp: pushed sideways (sliding, then sticking) for 300 steps (ccp's box
//     from its gliding height dt mu v, test_scene_slide.c: launched, it would fly, and a step without contacts
//     takes the articulated-body pass instead of the factor, other bits for other reasons);
//  4. islands on and off give the same trajectory to rounding (lcp: 1e-12 m and m/s over 300 steps of the
//     pushed scene; cone and ccp: their solver tolerance, 1e-7), and the same step Jacobians (lcp, cone, ccp) and
//     VJP to rounding (1e-9 relative to the largest entry);
//  5. derivatives per island (the solvers' derivatives factor island by island, src/contact/lcp_vjp.c,
//     ccp_vjp.c; step_contact_vjp.c's G_bar and mass terms by islands): box a's rows of the step Jacobian A in
//     the scene equal A of the box alone (its columns; to 1e-12 of the largest entry, lcp, cone, ccp), its rows
//     are 0 in the other bodies' columns, and the VJP of a cotangent on every body gives, on box a's entries,
//     the VJP of the box alone with box a's part of that cotangent;
//  6. the same for penalty, whose step and derivatives factor H_k along its elimination tree (src/grad/
//     penalty_deriv.c; the stack b1-b2 couples two trees, so the whole matrix is not on the tree's pattern);
//  7. the islands are computed once per problem by the assembly (p->isl) and equal phys_islands' on it; a model of
//     one tree (the box alone, the humanoid on the floor with its limits) has one island of all rows and dofs and
//     rows without support lists.
#include <math.h>
#include <string.h>

#include "contact.h"
#include "grad.h"
#include "physid.h"
#include "step.h"
#include "test.h"

#define SCENE "tests/data/contact/islands.xml"
#define ALONE "tests/data/contact/islands_alone.xml"
#define SCENE_EQ "tests/data/contact/islands_eq.xml"
#define STEPS 300

static physModel* load(const char* file) {
  physLog log = {0};
  physModel* m = phys_load(file, NULL, &log);
  CHECK_MSG(m != NULL, "%s: %s", file, log.error);
  return m;
}

// the scene and the box alone with contact model `model`, and their data; 0 if a model did not load
static int load_pair(int model, physModel** m, physModel** ma, physData** d, physData** da) {
  *m = load(SCENE);
  *ma = load(ALONE);
  if (!*m || !*ma) return 0;
  (*m)->opt.contact = (*ma)->opt.contact = model;
  *d = phys_make_data(*m);
  *da = phys_make_data(*ma);
  return 1;
}

// the islands of one step's constraint problem at d's state (after settling): count, and the islands' first
// root dof, dofs and rows into first, ndof, nrow (capacity 8); with_eq 0 leaves the equality rows out
static int stage_islands(const physModel* m, physData* d, int with_eq, int* first, int* ndof, int* nrow,
                         int* ok_rows) {
  size_t mark = phys_stack_mark(d);
  physStepStage st;
  physContactList cl = {(physContact*)phys_stack_alloc(d, sizeof(physContact) * (size_t)m->nconmax / sizeof(double) + 1),
                        0, m->nconmax, 0, 0};
  physWarmStart warm = {0, NULL};
  int n = -1;
  if (phys_step_stage(m, d, NULL, &warm, &cl, &st) == 1) {
    physIslands isl;
    n = phys_islands(m, d, &st.p, with_eq && st.eq.ne ? st.eq.J : NULL, with_eq ? st.eq.ne : 0, &isl);
    int* seen = calloc((size_t)st.p.n + 1, sizeof(int));
    *ok_rows = isl.start[0] == 0 && isl.start[n] == st.p.n;
    for (int k = 0; k < n && k < 8; k++) {
      nrow[k] = isl.start[k + 1] - isl.start[k];
      ndof[k] = isl.ndof[k];
      first[k] = -1;
      for (int a = isl.start[k]; a < isl.start[k + 1]; a++) {
        int r = isl.row[a];
        seen[r]++;
        if (a > isl.start[k]) *ok_rows &= r > isl.row[a - 1];
        if (r < 3 * st.p.nc) {   // a contact row: its island is the one of its free body's root dof
          const physContact* c = st.p.con + r / 3;
          int body = m->geom_bodyid[c->geom[1]] ? m->geom_bodyid[c->geom[1]] : m->geom_bodyid[c->geom[0]];
          int root = m->body_dofadr[m->body_rootid[body]];
          if (first[k] < 0 || root < first[k]) first[k] = root;
        }
      }
    }
    for (int r = 0; r < st.p.n; r++) *ok_rows &= seen[r] == 1;
    free(seen);
  }
  phys_stack_free(d, mark);
  return n;
}

// islands of islands.xml and islands_eq.xml after settling
static void test_partition(void) {
  physModel* m = load(SCENE);
  physModel* me = load(SCENE_EQ);
  if (!m || !me) return;
  physData* d = phys_make_data(m);
  for (int i = 0; i < 200; i++) phys_step(m, d);
  int first[8], ndof[8], nrow[8], ok = 0;
  int n = stage_islands(m, d, 1, first, ndof, nrow, &ok);
  CHECK_MSG(n == 3, "islands %d", n);
  CHECK(ok);
  if (n == 3) {
    CHECK(first[0] == 0 && first[1] == 6 && first[2] == 18);
    CHECK(ndof[0] == 6 && ndof[1] == 12 && ndof[2] == 6);
    CHECK_MSG(nrow[0] == 12 && nrow[1] == 24 && nrow[2] == 3, "rows %d %d %d", nrow[0], nrow[1], nrow[2]);
  }
  physData* de = phys_make_data(me);
  for (int i = 0; i < 200; i++) phys_step(me, de);
  n = stage_islands(me, de, 1, first, ndof, nrow, &ok);
  CHECK_MSG(n == 2, "islands with the connect %d", n);
  CHECK(ok);
  if (n == 2) CHECK(first[0] == 0 && ndof[0] == 12 && first[1] == 12 && ndof[1] == 6);
  n = stage_islands(me, de, 0, first, ndof, nrow, &ok);
  CHECK_MSG(n == 3, "islands without the equality rows %d", n);
  phys_free_data(de);
  phys_free_data(d);
  phys_free_model(me);
  phys_free_model(m);
}

// the assembly's islands p->isl (computed once, reused by the solves) against phys_islands on the same problem:
// the same count, row lists and dofs; a model of one tree (the box alone, the humanoid lying on the floor with
// its limits) has one island of all rows and all dofs, taken without the union-find, and rows without support
// lists (p->sup NULL: the dense loops); the scene of three trees keeps its lists
static void check_assembly_islands(const physModel* m, physData* d, int one_tree, const char* what) {
  size_t mark = phys_stack_mark(d);
  physStepStage st;
  physContactList cl = {(physContact*)phys_stack_alloc(d, sizeof(physContact) * (size_t)m->nconmax / sizeof(double) + 1),
                        0, m->nconmax, 0, 0};
  physWarmStart warm = {0, NULL};
  CHECK_MSG(phys_step_stage(m, d, NULL, &warm, &cl, &st) == 1, "%s: stage", what);
  const physConstraintProblem* p = &st.p;
  CHECK_MSG(p->n > 0 && p->isl != NULL, "%s: rows %d, islands kept", what, p->n);
  CHECK_MSG(phys_one_tree(m) == one_tree, "%s: one tree", what);
  CHECK_MSG((p->sup == NULL) == one_tree, "%s: support lists", what);
  if (p->n > 0 && p->isl) {
    physIslands isl;
    int n = phys_islands(m, d, p, NULL, 0, &isl), same = n == p->isl->n;
    for (int k = 0; same && k < n; k++) same = isl.start[k] == p->isl->start[k] && isl.ndof[k] == p->isl->ndof[k];
    for (int a = 0; same && a < p->n; a++) same = isl.row[a] == p->isl->row[a];
    CHECK_MSG(same && isl.start[n] == p->n, "%s: the assembly's islands differ from phys_islands'", what);
    if (one_tree) CHECK_MSG(n == 1 && isl.ndof[0] == m->nv, "%s: %d islands", what, n);
  }
  phys_stack_free(d, mark);
}

static void test_one_tree(void) {
  physModel* m = load(SCENE);
  physModel* ma = load(ALONE);
  if (!m || !ma) return;
  physData* d = phys_make_data(m);
  physData* da = phys_make_data(ma);
  for (int i = 0; i < 200; i++) phys_step(m, d), phys_step(ma, da);
  check_assembly_islands(m, d, 0, "islands.xml");
  check_assembly_islands(ma, da, 1, "islands_alone.xml");
  phys_free_data(da);
  phys_free_data(d);
  phys_free_model(ma);
  phys_free_model(m);
  physLog log = {0};
  physModel* mh = phys_load("/usr/share/mujoco/model/humanoid/humanoid.xml", NULL, &log);
  if (!mh) return;   // (libmujoco-samples absent: the box alone above is the one-tree case)
  physData* dh = phys_make_data(mh);
  for (int i = 0; i < 600; i++) phys_step(mh, dh);   // fallen, lying on the floor: contacts and limits
  CHECK_MSG(phys_constraint_nlimit(mh, dh) > 0 || dh->ncon > 0, "humanoid: no rows");
  check_assembly_islands(mh, dh, 1, "humanoid.xml");
  phys_free_data(dh);
  phys_free_model(mh);
}

// the scene pushed: box a sideways at 1 m/s (slides, then sticks), the sphere rolling at 0.5 m/s; n steps,
// the qpos and qvel of every step into traj (n x (nq + nv)), or only box a's first 7 + 6 when a_only
static void run(const physModel* m, physData* d, int n, double* traj, int a_only) {
  phys_reset_data(m, d);
  for (int i = 0; i < 50; i++) phys_step(m, d);
  d->qvel[0] = 1;
  if (m->opt.contact == PHYS_CONTACT_CCP) d->qpos[2] += m->opt.timestep * 0.8;   // ccp's gliding height dt mu v
  if (m->nv > 18) d->qvel[18] = 0.5;
  int nq = a_only ? 7 : m->nq, nv = a_only ? 6 : m->nv;
  for (int i = 0; i < n; i++) {
    phys_step(m, d);
    memcpy(traj + (size_t)i * (nq + nv), d->qpos, sizeof(double) * (size_t)nq);
    memcpy(traj + (size_t)i * (nq + nv) + nq, d->qvel, sizeof(double) * (size_t)nv);
  }
}

// largest |x - y| over n numbers
static double maxdiff(const double* x, const double* y, size_t n) {
  double e = 0;
  for (size_t i = 0; i < n; i++) e = fmax(e, fabs(x[i] - y[i]));
  return e;
}

// items 3 and 4 (trajectories) for contact model `model`
static void test_trajectories(int model) {
  static const char* const NAME[] = {"lcp", "cone", "ccp"};
  physModel *m, *ma;
  physData *d, *da;
  if (!load_pair(model, &m, &ma, &d, &da)) return;
  size_t w = (size_t)(m->nq + m->nv);
  double* a_alone = malloc(sizeof(double) * 13 * STEPS);
  double* a_scene = malloc(sizeof(double) * 13 * STEPS);
  double* on = malloc(sizeof(double) * w * STEPS);
  double* off = malloc(sizeof(double) * w * STEPS);
  run(ma, da, STEPS, a_alone, 1);
  run(m, d, STEPS, a_scene, 1);
  CHECK_MSG(memcmp(a_alone, a_scene, sizeof(double) * 13 * STEPS) == 0,
            "%s: the box in the scene differs from the box alone by %.3g", NAME[model],
            maxdiff(a_alone, a_scene, 13 * STEPS));
  CHECK_MSG(d->nwarning == 0 && da->nwarning == 0, "%s: warnings %d %d", NAME[model], d->nwarning, da->nwarning);
  run(m, d, STEPS, on, 0);
  m->opt.disableflags |= PHYS_DSBL_ISLAND;
  run(m, d, STEPS, off, 0);
  double e = maxdiff(on, off, w * STEPS), tol = model == PHYS_CONTACT_LCP ? 1e-12 : 1e-7;
  CHECK_MSG(e <= tol, "%s: islands on and off differ by %.3g > %.3g", NAME[model], e, tol);
  // the box did slide
  CHECK_MSG(on[(STEPS - 1) * w] > 0.02, "%s: the box moved %.3g m", NAME[model], on[(STEPS - 1) * w]);
  free(a_alone), free(a_scene), free(on), free(off);
  phys_free_data(da);
  phys_free_data(d);
  phys_free_model(ma);
  phys_free_model(m);
}

// item 4 (derivatives): A, B and a VJP at the pushed scene's state 20 steps after the push, islands on and off
static void test_derivatives(int model) {
  physModel* m = load(SCENE);
  if (!m) return;
  m->opt.contact = model;
  physData* d = phys_make_data(m);
  int nx = 2 * m->nv;
  double* traj = malloc(sizeof(double) * (size_t)(m->nq + m->nv) * 20);
  double* A[2] = {malloc(sizeof(double) * (size_t)nx * nx), malloc(sizeof(double) * (size_t)nx * nx)};
  double* xb[2] = {malloc(sizeof(double) * (size_t)nx), malloc(sizeof(double) * (size_t)nx)};
  double* y = malloc(sizeof(double) * (size_t)nx);
  for (int i = 0; i < nx; i++) y[i] = 1.0 + 0.1 * i;
  run(m, d, 20, traj, 0);
  physStatus st[2];
  double scale = 0;
  for (int k = 0; k < 2; k++) {
    if (k) m->opt.disableflags |= PHYS_DSBL_ISLAND;
    st[k] = phys_step_jacobian(m, d, A[k], NULL);
    phys_step_vjp(m, d, y, xb[k], NULL);
  }
  CHECK(st[0] == PHYS_OK && st[1] == PHYS_OK);
  for (int i = 0; i < nx * nx; i++) scale = fmax(scale, fabs(A[1][i]));
  double ea = maxdiff(A[0], A[1], (size_t)nx * nx), ev = maxdiff(xb[0], xb[1], (size_t)nx), sv = 0;
  for (int i = 0; i < nx; i++) sv = fmax(sv, fabs(xb[1][i]));
  CHECK_MSG(ea <= 1e-9 * scale, "model %d: A differs by %.3g (scale %.3g)", model, ea, scale);
  CHECK_MSG(ev <= 1e-9 * sv, "model %d: VJP differs by %.3g (scale %.3g)", model, ev, sv);
  free(traj), free(A[0]), free(A[1]), free(xb[0]), free(xb[1]), free(y);
  phys_free_data(d);
  phys_free_model(m);
}

// item 5 for contact model `model`: box a's derivative rows in the scene against the box alone, 20 steps
// after the push (both states bit for bit the same: item 3)
static void test_derivatives_alone(int model) {
  physModel *m, *ma;
  physData *d, *da;
  if (!load_pair(model, &m, &ma, &d, &da)) return;
  int nv = m->nv, nx = 2 * nv;
  double* traj = malloc(sizeof(double) * (size_t)(m->nq + nv) * 20);
  double* A = malloc(sizeof(double) * (size_t)nx * nx);
  double Aa[144], xba[12], ya[12];
  double* y = malloc(sizeof(double) * (size_t)nx);
  double* xb = malloc(sizeof(double) * (size_t)nx);
  run(m, d, 20, traj, 0);
  run(ma, da, 20, traj, 1);
  CHECK(memcmp(d->qpos, da->qpos, sizeof(double) * 7) == 0 && memcmp(d->qvel, da->qvel, sizeof(double) * 6) == 0);
  CHECK(phys_step_jacobian(m, d, A, NULL) == PHYS_OK);
  CHECK(phys_step_jacobian(ma, da, Aa, NULL) == PHYS_OK);
  // box a's entries of the state: dq 0..5, v nv..nv+5 (alone: 0..5, 6..11)
  double scale = 0, e = 0, eo = 0;
  for (int i = 0; i < 144; i++) scale = fmax(scale, fabs(Aa[i]));
  for (int i = 0; i < 12; i++) {
    const double* Ai = A + (size_t)(i < 6 ? i : nv + i - 6) * nx;
    for (int j = 0; j < nx; j++) {
      int ja = j < 6 ? j : (j >= nv && j < nv + 6 ? j - nv + 6 : -1);
      if (ja >= 0) e = fmax(e, fabs(Ai[j] - Aa[i * 12 + ja]));
      else eo = fmax(eo, fabs(Ai[j]));
    }
  }
  CHECK_MSG(scale > 0 && e <= 1e-12 * scale, "model %d: box a's rows differ from the box alone by %.3g (scale %.3g)",
            model, e, scale);
  CHECK_MSG(eo == 0, "model %d: box a's rows reach the other bodies by %.3g", model, eo);
  for (int i = 0; i < nx; i++) y[i] = 1.0 + 0.1 * i;
  for (int i = 0; i < 12; i++) ya[i] = y[i < 6 ? i : nv + i - 6];
  CHECK(phys_step_vjp(m, d, y, xb, NULL) == PHYS_OK);
  CHECK(phys_step_vjp(ma, da, ya, xba, NULL) == PHYS_OK);
  double ev = 0, sv = 0;
  for (int i = 0; i < 12; i++) {
    sv = fmax(sv, fabs(xba[i]));
    ev = fmax(ev, fabs(xb[i < 6 ? i : nv + i - 6] - xba[i]));
  }
  CHECK_MSG(sv > 0 && ev <= 1e-12 * sv, "model %d: box a's VJP differs from the box alone by %.3g (scale %.3g)",
            model, ev, sv);
  free(traj), free(A), free(y), free(xb);
  phys_free_data(da);
  phys_free_data(d);
  phys_free_model(ma);
  phys_free_model(m);
}

int main(void) {
  test_partition();
  test_one_tree();
  for (int model = PHYS_CONTACT_LCP; model <= PHYS_CONTACT_CCP; model++) {
    test_trajectories(model);
    test_derivatives(model);
    test_derivatives_alone(model);
  }
  test_derivatives_alone(PHYS_CONTACT_PENALTY);   // penalty's factor along the elimination tree (item 6)
  return test_done();
}
