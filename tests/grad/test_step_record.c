// test_step_record.c - the step record (src/grad/step_record.c):
//  1. the kind is the step's own: a ball in the air is smooth, the ball resting on the floor is constrained
//     with the model's solver (lcp, cone, ccp) or penalty, and with contacts disabled smooth again; a
//     constrained model whose last step had contacts (d->ncon > 0, detected once in the stage) and one whose
//     list is empty get the same kind;
//  2. linearizing leaves d's state as it was, and after phys_step_record_free (or a derivative call) its
//     contact lists (the next step's warm start) and the arena mark too;
//  3. the record's Jacobian and VJP are phys_step_jacobian's and phys_step_vjp's bit for bit (the public
//     functions are one linearization and one dispatch);
//  4. ccp's envelope grows with the speed: a ball gliding fast 1 cm above the floor is in contact for the step,
//     and the record says so on a fresh physData too, whose body velocities (cvel) are not yet computed (the
//     record once detected with them stale: smooth, and a fit's sensitivity step failed on the next state).
#include "grad_models.h"
#include "step_record.h"

#define BALL "tests/data/contact/ball_drop.xml"

// the ball at height z (bottom z - 0.1) with velocity vz, after `steps` steps of simulation from there
static void ball_at(const physModel* m, physData* d, double z, double vz, int steps) {
  memset(d->qvel, 0, sizeof(double) * (size_t)m->nv);
  d->qpos[0] = d->qpos[1] = 0, d->qpos[2] = z;
  d->qpos[3] = 1, d->qpos[4] = d->qpos[5] = d->qpos[6] = 0;
  d->qvel[0] = 0.3, d->qvel[2] = vz;
  d->ncon = d->ncon_prev = 0;
  for (int s = 0; s < steps; s++) phys_step(m, d);
}

// the kind phys_step_linearize records at d's state; d's lists and the arena unchanged
static int kind_at(const physModel* m, physData* d) {
  int ncon = d->ncon, nprev = d->ncon_prev;
  size_t bytes = sizeof(physContact) * (size_t)ncon, mark = phys_stack_mark(d);
  physContact* keep = malloc(bytes + 1);
  memcpy(keep, d->contact, bytes);
  double q[7];
  memcpy(q, d->qpos, sizeof q);
  physStepRecord rec;
  CHECK(phys_step_linearize(m, d, &rec) == PHYS_OK);
  int kind = (int)rec.kind;
  CHECK(rec.kind != PHYS_STEP_CONSTRAINED || rec.solver == m->opt.contact);
  CHECK(memcmp(q, d->qpos, sizeof q) == 0);
  phys_step_record_free(d, &rec);
  CHECK(d->ncon == ncon && d->ncon_prev == nprev && memcmp(keep, d->contact, bytes) == 0);
  CHECK(phys_stack_mark(d) == mark);
  free(keep);
  return kind;
}

// item 3: the record's A and A'y against the public functions', bit for bit
static void same_as_public(const physModel* m, physData* d) {
  int n2 = 2 * m->nv;
  double A1[144], A2[144], y[12], x1[12], x2[12];
  for (int i = 0; i < n2; i++) y[i] = 0.1 * (i + 1) - 0.5;
  CHECK(phys_step_jacobian(m, d, A1, NULL) == PHYS_OK);
  CHECK(phys_step_vjp(m, d, y, x1, NULL) == PHYS_OK);
  physStepRecord rec;
  CHECK(phys_step_linearize(m, d, &rec) == PHYS_OK);
  CHECK(phys_step_record_jacobian(m, d, &rec, NULL, A2, NULL, NULL) == PHYS_OK);
  phys_step_record_free(d, &rec);
  CHECK(phys_step_linearize(m, d, &rec) == PHYS_OK);
  CHECK(phys_step_record_vjp(m, d, &rec, NULL, y, x2, NULL, NULL, NULL) == PHYS_OK);
  phys_step_record_free(d, &rec);
  // one record, two derivative calls (the second re-enters the stage's lists the first kept)
  double x3[12];
  CHECK(phys_step_linearize(m, d, &rec) == PHYS_OK);
  CHECK(phys_step_record_jacobian(m, d, &rec, NULL, A2, NULL, NULL) == PHYS_OK);
  CHECK(phys_step_record_vjp(m, d, &rec, NULL, y, x3, NULL, NULL, NULL) == PHYS_OK);
  phys_step_record_free(d, &rec);
  CHECK(memcmp(x1, x3, sizeof(double) * (size_t)n2) == 0);
  CHECK(memcmp(A1, A2, sizeof(double) * (size_t)n2 * n2) == 0);
  CHECK(memcmp(x1, x2, sizeof(double) * (size_t)n2) == 0);
}

int main(void) {
  const int models[4] = {PHYS_CONTACT_LCP, PHYS_CONTACT_CONE, PHYS_CONTACT_CCP, PHYS_CONTACT_PENALTY};
  for (int k = 0; k < 4; k++) {
    physModel* m = gm_load(BALL, 0);
    m->opt.contact = models[k];
    physData* d = phys_make_data(m);
    int touching = models[k] == PHYS_CONTACT_PENALTY ? PHYS_STEP_PENALTY : PHYS_STEP_CONSTRAINED;
    // in the air
    ball_at(m, d, 0.6, 0, 0);
    CHECK(kind_at(m, d) == PHYS_STEP_SMOOTH);
    same_as_public(m, d);
    // resting on the floor after 300 steps (contacts in the list: the stage detects them once), and the same
    // state with the list emptied (detected first)
    ball_at(m, d, 0.099, 0, 300);
    CHECK(d->ncon > 0 || models[k] == PHYS_CONTACT_PENALTY);
    CHECK_MSG(kind_at(m, d) == touching, "contact model %d: kind %d", models[k], kind_at(m, d));
    same_as_public(m, d);
    int ncon = d->ncon;
    d->ncon = 0;
    CHECK(kind_at(m, d) == touching);
    d->ncon = ncon;
    // contacts off: smooth
    m->opt.disableflags |= PHYS_DSBL_CONTACT;
    CHECK(kind_at(m, d) == PHYS_STEP_SMOOTH);
    same_as_public(m, d);
    phys_free_data(d);
    phys_free_model(m);
  }
  // 4. ccp, friction 1 (the envelope 2 dt mu |v| = 0.04 m at 2 m/s, dt 0.01): 1 cm above the floor at 2 m/s
  physModel* m = gm_load(BALL, 0);
  m->opt.contact = PHYS_CONTACT_CCP;
  m->opt.timestep = 0.01;
  for (int g = 0; g < m->ngeom; g++) m->geom_friction[3 * g] = 1;
  physData* d = phys_make_data(m);
  ball_at(m, d, 0.11, 0, 0);
  d->qvel[0] = 2;
  CHECK_MSG(kind_at(m, d) == PHYS_STEP_CONSTRAINED, "fresh data: kind %d", kind_at(m, d));
  physData* d2 = phys_make_data(m);
  ball_at(m, d2, 0.11, 0, 0);
  d2->qvel[0] = 2;
  phys_forward(m, d2);   // cvel at the state
  CHECK(kind_at(m, d2) == PHYS_STEP_CONSTRAINED);
  phys_free_data(d2);
  phys_free_data(d);
  phys_free_model(m);
  return test_done();
}
