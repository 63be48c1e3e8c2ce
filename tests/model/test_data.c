// test_data.c - data allocation, reset, keyframes and the scratch arena: an exhausted arena gives a status,
// a counted warning naming the call and a usable d (the box resting on the plane, lcp and penalty contact).
// With --slow only the arena at a full contact list (test_saturated: 25 cubes, nv 150; CTest
// model/test_data_slow, label slow).
#include <string.h>
#include <unistd.h>

#include "arena.h"
#include "grad.h"
#include "params.h"
#include "rollout.h"
#include "spec.h"
#include "test.h"

// the box resting on the plane with contact model cm, 3e-4 deep after 5 steps
static physModel* box_model(int cm) {
  physLog log = {0};
  physModel* m = phys_load("tests/data/contact/box_plane.xml", NULL, &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  if (m) m->opt.contact = cm;
  return m;
}

static void box_state(const physModel* m, physData* d) {
  phys_reset_data(m, d);
  d->qpos[2] = 0.1 - 3e-4;
  for (int i = 0; i < 5; i++) phys_step(m, d);
}

// rollout loss: 0.5 |v|^2
static double vel_loss(void* ctx, int t, const double* qpos, const double* qvel, double* g_q, double* g_v) {
  const physModel* m = ctx;
  double l = 0;
  (void)t, (void)qpos, (void)g_q;
  for (int i = 0; i < m->nv; i++) l += 0.5 * qvel[i] * qvel[i], g_v[i] = qvel[i];
  return l;
}

// with only `free_` doubles of the arena left to them, the step derivatives, the parameter derivatives and
// the rollout gradient return PHYS_ERR_NOMEM with a warning naming the call (arena back at the caller's
// mark; a step the call ran inside may have counted its own rejection first) and phys_step rejects the step
// (qpos, qvel, time unchanged); released, the same calls give the results of a data that never ran out,
// bit for bit
static void test_exhaustion(int cm, size_t free_) {
  physModel* m = box_model(cm);
  if (!m) return;
  physData *d = phys_make_data(m), *ref = phys_make_data(m);
  const char* spec[] = {"mass:box", "friction:floor"};
  physParamTable t;
  physLog log = {0};
  CHECK(phys_param_table_build(&t, m, spec, 2, &log) == PHYS_OK);
  int nv = m->nv, n2 = 2 * nv;
  double *A = malloc(sizeof(double) * n2 * n2), *Aref = malloc(sizeof(double) * n2 * n2);
  double *P = malloc(sizeof(double) * n2 * 2), *y = malloc(sizeof(double) * n2), *xb = malloc(sizeof(double) * n2);
  double *work = malloc(sizeof(double) * phys_rollout_worksize(m, 4, 2, 2)), tb[2];
  for (int i = 0; i < n2; i++) y[i] = 1.0 / (i + 1);
  box_state(m, ref);
  box_state(m, d);
  CHECK(ref->ncon == 4 && phys_step_jacobian(m, ref, Aref, NULL) == PHYS_OK);

  size_t hold = d->nstack - free_, mark = phys_stack_mark(d);
  CHECK(phys_stack_alloc(d, hold) != NULL);
  size_t held = phys_stack_mark(d);
  const char* who[4] = {"phys_step_jacobian", "phys_step_param_jacobian", "phys_step_vjp_lambda",
                        "phys_step_param_vjp"};
  for (int c = 0; c < 4; c++) {
    int nwarn = d->nwarning;
    physStatus st = c == 0   ? phys_step_jacobian(m, d, A, NULL)
                    : c == 1 ? phys_step_param_jacobian(m, d, &t, P)
                    : c == 2 ? phys_step_vjp(m, d, y, xb, NULL)
                             : phys_step_param_vjp(m, d, &t, y, tb);
    CHECK_MSG(st == PHYS_ERR_NOMEM, "%s with %zu free: status %s", who[c], free_, phys_status_str(st));
    CHECK_MSG(strstr(d->lastwarning, who[c]) && strstr(d->lastwarning, "scratch arena exhausted"), "%s: '%s'",
              who[c], d->lastwarning);
    CHECK_MSG(d->nwarning > nwarn && phys_stack_mark(d) == held && d->arena_guard == NULL, "%s: %d warnings (was %d), mark %zu (%zu): %s", who[c], d->nwarning, nwarn, phys_stack_mark(d), held, d->lastwarning);
  }
  // the rollout gradient: its VJPs run out; the status and a message come back
  {
    double q0 = d->qpos[2], t0 = d->time;
    physStatus st = phys_rollout_grad(m, d, &t, 4, 2, NULL, vel_loss, m, work, NULL, NULL, NULL, tb, &log);
    CHECK_MSG(st == PHYS_ERR_NOMEM && strstr(log.error, "phys_rollout_grad"), "rollout: %s, '%s'",
              phys_status_str(st), log.error);
    CHECK(d->qpos[2] == q0 && d->time == t0 && phys_stack_mark(d) == held);
  }
  // a step (which takes about 900 doubles here) with at most 64 free: rejected, the state as it was
  if (free_ > 64) CHECK(phys_stack_alloc(d, free_ - 64) != NULL);
  double q[7], v[6], time = d->time;
  memcpy(q, d->qpos, sizeof q);
  memcpy(v, d->qvel, sizeof v);
  int nrej = d->warning_count[PHYS_WARN_REJECTED];
  phys_step(m, d);
  CHECK(memcmp(q, d->qpos, sizeof q) == 0 && memcmp(v, d->qvel, sizeof v) == 0 && d->time == time);
  CHECK(d->warning_count[PHYS_WARN_REJECTED] == nrej + 1 && strstr(d->lastwarning, "phys_step: step rejected") &&
        strstr(d->lastwarning, "scratch arena exhausted"));
  CHECK(d->pstack + 64 >= d->nstack);
  phys_stack_free(d, held);
  // a direct request beyond the arena: NULL and a warning, nothing taken
  CHECK(phys_stack_alloc(d, d->nstack) == NULL && strstr(d->lastwarning, "phys_stack_alloc: scratch arena exhausted"));
  CHECK(phys_stack_mark(d) == held);

  // released: the same results as the data that never ran out
  phys_stack_free(d, mark);
  CHECK(phys_step_jacobian(m, d, A, NULL) == PHYS_OK && memcmp(A, Aref, sizeof(double) * n2 * n2) == 0);
  phys_step(m, ref);
  phys_step(m, d);
  CHECK(memcmp(d->qpos, ref->qpos, sizeof(double) * m->nq) == 0 && memcmp(d->qvel, ref->qvel, sizeof(double) * nv) == 0 &&
        d->time == ref->time);
  free(A), free(Aref), free(P), free(y), free(xb), free(work);
  phys_param_table_free(&t);
  phys_free_data(d), phys_free_data(ref), phys_free_model(m);
}

// the arena suffices at saturation: 25 cubes (0.1 m, 1 kg, nv 150) on a plane, 3e-4 deep, 4 contacts each
// beyond <size nconmax='64'/> (the list is full: 64 contacts, 192 rows); the step, A, P and the VJPs of every
// contact model, and the step and A of lcp and cone with a frictionloss row on every dof (coupled to the
// contact rows: cone's chain is ccp's, penalty has no rows), run without
// exhausting it, within the need of the deepest chain at the full list (phys_arena_need, arena.h), which
// overestimates each model's high-water mark by at most 2.5x (measured without frictionloss: lcp 784k of
// 1.19M doubles, cone and ccp 535k of 847k, penalty 231k of 466k; with frictionloss lcp 860k, cone 611k), also
// for P with 250 parameters (740k of 1.19M). The size, 3.01M doubles, is 3.5x the largest mark: it holds
// the same chains with the most parameters a table can hold (1523 here, 10 nv per parameter in lcp's P)
static void test_saturated(void) {
  char xml[8192];
  int len = snprintf(xml, sizeof xml, "<mujoco><option timestep='0.001'/><size nconmax='64'/><worldbody>"
                                      "<geom name='floor' type='plane' size='5 5 .1'/>");
  for (int i = 0; i < 25; i++)
    len += snprintf(xml + len, sizeof xml - (size_t)len,
                    "<body name='b%d' pos='%g %g %g'><freejoint/><geom type='box' size='.05 .05 .05' mass='1'/></body>",
                    i, 0.3 * (i % 5), 0.3 * (i / 5), 0.05 - 3e-4);
  snprintf(xml + len, sizeof xml - (size_t)len, "</worldbody></mujoco>");
  char path[] = "/tmp/test_data_XXXXXX.xml";
  int fd = mkstemps(path, 4);
  CHECK(fd >= 0);
  if (fd < 0) return;
  CHECK(write(fd, xml, strlen(xml)) == (ssize_t)strlen(xml));
  close(fd);
  physLog log = {0};
  physModel* m = phys_load(path, NULL, &log);
  unlink(path);
  CHECK_MSG(m != NULL, "%s", log.error);
  if (!m) return;
  int nv = m->nv, n2 = 2 * nv;
  const char* spec[] = {"mass:b0", "friction:floor"};
  physParamTable t;
  CHECK(phys_param_table_build(&t, m, spec, 2, &log) == PHYS_OK);
  double *A = malloc(sizeof(double) * n2 * n2), *P = malloc(sizeof(double) * n2 * 2), *y = calloc(n2, sizeof(double));
  double *xb = malloc(sizeof(double) * n2), tb[2];
  y[2] = 1;
  size_t peak = 0, size = 0;
  for (int k = 0; k < PHYS_NCONTACTMODEL + 2; k++) {   // (with frictionloss: lcp and cone, the step and A)
    int cm = k % PHYS_NCONTACTMODEL, fl = k >= PHYS_NCONTACTMODEL;
    m->opt.contact = cm;
    for (int i = 0; i < nv; i++) m->dof_frictionloss[i] = fl ? 0.5 : 0;
    m->nfrictionloss = fl ? nv : 0;
    physData* d = phys_make_data(m);
    phys_step(m, d);
    CHECK_MSG(d->ncon == m->nconmax && d->ncon_dropped > 0, "%s: %d contacts of %d", phys_contact_name(cm), d->ncon,
              m->nconmax);
    CHECK(phys_step_jacobian(m, d, A, NULL) == PHYS_OK);
    CHECK(fl || phys_step_param_jacobian(m, d, &t, P) == PHYS_OK);
    CHECK(fl || phys_step_vjp(m, d, y, xb, NULL) == PHYS_OK);
    CHECK(fl || phys_step_param_vjp(m, d, &t, y, tb) == PHYS_OK);
    CHECK_MSG(!strstr(d->lastwarning, "exhausted"), "%s: %s", phys_contact_name(cm), d->lastwarning);
    size_t need = phys_arena_need(m, cm, m->nconmax, 0, t.ntheta);
    CHECK_MSG(d->pstack_max <= need && 2 * need <= 5 * d->pstack_max && need <= d->nstack, "%s: high-water %zu, need %zu",
              phys_contact_name(cm), d->pstack_max, need);
    printf("saturated %-7s%s: %d contacts, nv %d: high-water %zu, need %zu (%.2fx), size %zu doubles\n",
           phys_contact_name(cm), fl ? " with frictionloss" : "", d->ncon, nv, d->pstack_max, need,
           (double)need / (double)d->pstack_max, d->nstack);
    peak = d->pstack_max > peak ? d->pstack_max : peak;
    size = d->nstack;
    phys_free_data(d);
  }
  // the parameter terms: P of lcp (the largest chain) with every body's 10 inertial parameters (250)
  {
    const char* all[25];
    char names[25][24];
    for (int i = 0; i < 25; i++) snprintf(names[i], sizeof names[i], "inertia:b%d", i), all[i] = names[i];
    physParamTable big;
    CHECK(phys_param_table_build(&big, m, all, 25, &log) == PHYS_OK && big.ntheta == 250);
    m->opt.contact = PHYS_CONTACT_LCP;
    for (int i = 0; i < nv; i++) m->dof_frictionloss[i] = 0;
    m->nfrictionloss = 0;
    physData* d = phys_make_data(m);
    double* Pb = malloc(sizeof(double) * n2 * 250);
    phys_step(m, d);
    CHECK(phys_step_param_jacobian(m, d, &big, Pb) == PHYS_OK);
    size_t need = phys_arena_need(m, PHYS_CONTACT_LCP, m->nconmax, 0, 250);
    CHECK_MSG(d->pstack_max <= need && 2 * need <= 5 * d->pstack_max, "250 parameters: high-water %zu, need %zu",
              d->pstack_max, need);
    printf("saturated lcp, P of 250 parameters: high-water %zu, need %zu (%.2fx)\n", d->pstack_max, need,
           (double)need / (double)d->pstack_max);
    free(Pb);
    phys_free_data(d);
    phys_param_table_free(&big);
  }
  printf("saturated: size %zu doubles, %.2fx the largest high-water mark %zu (the size holds %d parameters)\n", size,
         (double)size / (double)peak, peak, phys_arena_ntheta_max(m));
  free(A), free(P), free(y), free(xb);
  phys_param_table_free(&t);
  phys_free_model(m);
}

// the arena's size is the largest need of the four contact models at the full list (nconmax contacts, two
// rows per limited hinge or slide, the most parameters a table can hold), and the table budget is two
// Delassus matrices of that list
static size_t arena_max_need(const physModel* m, int nlim) {
  size_t size = 0;
  for (int cm = 0; cm < PHYS_NCONTACTMODEL; cm++) {
    size_t need = phys_arena_need(m, cm, m->nconmax, nlim, phys_arena_ntheta_max(m));
    size = need > size ? need : size;
  }
  return size;
}

static void test_arena_size(void) {
  physModel* m = box_model(PHYS_CONTACT_LCP);
  if (!m) return;
  physData* d = phys_make_data(m);
  size_t n = 3 * (size_t)m->nconmax;
  CHECK_MSG(phys_arena_size(m) == arena_max_need(m, 0) && d->nstack == phys_arena_size(m), "box: %zu, need %zu",
            phys_arena_size(m), arena_max_need(m, 0));
  CHECK(phys_arena_tables(m) == 2 * n * n);
  // the need grows with the contacts, and a penalty chain holds no Delassus matrix
  CHECK(phys_arena_need(m, PHYS_CONTACT_LCP, 1, 0, 1) < phys_arena_need(m, PHYS_CONTACT_LCP, 2, 0, 1));
  CHECK(phys_arena_need(m, PHYS_CONTACT_PENALTY, m->nconmax, 0, 1) < n * n);
  printf("arena: box on the plane (nv %d, ngeom %d, nconmax %d): %zu doubles; phys_make_data %zu bytes\n", m->nv,
         m->ngeom, m->nconmax, d->nstack, d->nbuffer);
  phys_free_data(d);
  phys_free_model(m);
  // 800 world spheres: the candidate batch at its cap 2^18
  physSpec* s = phys_spec_new();
  for (int i = 0; i < 800; i++) {
    int g = phys_spec_add_geom(s, 0, PHYS_GEOM_SPHERE);
    s->geom[g].size[0] = 0.1;
  }
  physLog log = {0};
  m = phys_compile(s, &log);
  phys_spec_free(s);
  CHECK_MSG(m != NULL, "%s", log.error);
  if (!m) return;
  CHECK(m->ngeom == 800 && phys_arena_pairkeys(m) == (size_t)1 << 18 && phys_arena_size(m) == arena_max_need(m, 0));
  phys_free_model(m);
}

int main(int argc, char** argv) {
  if (argc > 2 || (argc == 2 && strcmp(argv[1], "--slow") != 0)) {
    fprintf(stderr, "usage: %s [--slow]\n", argv[0]);
    return 2;
  }
  if (argc == 2) {
    test_saturated();
    return test_done();
  }
  physSpec* s = phys_spec_new();
  int b = phys_spec_add_body(s, 0);
  phys_spec_add_joint(s, b, PHYS_JNT_BALL);
  int j = phys_spec_add_joint(s, b, PHYS_JNT_HINGE);
  s->joint[j].ref = 0.25;
  int g = phys_spec_add_geom(s, b, PHYS_GEOM_SPHERE);
  s->geom[g].size[0] = 0.1;
  int k = phys_spec_add_key(s);
  s->key[k].time = 2;
  s->key[k].qpos = calloc(5, sizeof(double));
  s->key[k].nqpos = 5;
  s->key[k].qpos[0] = 1;
  s->key[k].qpos[4] = -1;
  physLog log = {0};
  physModel* m = phys_compile(s, &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  phys_spec_free(s);
  if (!m) return test_done();
  physData* d = phys_make_data(m);
  CHECK(d != NULL);
  // reset puts qpos0 (identity quaternion, hinge ref) and zero velocity
  CHECK(d->qpos[0] == 1 && d->qpos[4] == 0.25 && d->qvel[3] == 0);
  CHECK(phys_reset_keyframe(m, d, 0) == PHYS_OK);
  CHECK(d->time == 2 && d->qpos[4] == -1);
  CHECK(phys_reset_keyframe(m, d, 1) == PHYS_ERR_ARG);
  // arena: aligned blocks, mark/free restores, distinct blocks do not overlap
  size_t mark = phys_stack_mark(d);
  double* a = phys_stack_alloc(d, 3);
  double* c = phys_stack_alloc(d, 5);
  CHECK(((size_t)(c - d->stack)) % 8 == 0 && c >= a + 3);
  phys_stack_free(d, mark);
  CHECK(phys_stack_mark(d) == mark);
  CHECK(phys_stack_alloc(d, 1) == a);
  phys_stack_free(d, mark);
  phys_data_warning(d, "bad %d", 1);
  CHECK(d->nwarning == 1 && strcmp(d->lastwarning, "bad 1") == 0);
  phys_reset_data(m, d);
  CHECK(d->nwarning == 0);
  phys_free_data(d);
  physModel* m2 = phys_copy_model(m);
  CHECK(m2 && m2->nbuffer == m->nbuffer && memcmp(m2->buffer, m->buffer, m->nbuffer) == 0 && m2->qpos0 != m->qpos0);
  phys_free_model(m2);
  phys_free_model(m);
  // exhaustion at the first request (0 free) and deep inside the calls (1024 free: the box's calls take
  // 2000-4400 doubles)
  for (int cm = 0; cm < 2; cm++) {
    test_exhaustion(cm ? PHYS_CONTACT_PENALTY : PHYS_CONTACT_LCP, 0);
    test_exhaustion(cm ? PHYS_CONTACT_PENALTY : PHYS_CONTACT_LCP, 1024);
  }
  test_arena_size();
  return test_done();
}
