// test_residual.c - the residual acceleration stage of the step (src/step/residual.c): the features' layout
// (mixed.xml: free 3 + 9, ball 9, slide 1, hinge 1, then v), a contact-free step with a network moves v by
// exactly dt r more than without it (r the network at the step's start), a step with contacts (the cube on the
// floor, lcp) adds dt r to the free velocity (checked through the unconstrained direction: the cube resting,
// r pointing up lifts it off), the network's size checks, and phys_copy_model's deep copy.
#include <string.h>

#include "mlp.h"
#include "physid.h"
#include "residual.h"
#include "rot.h"
#include "step.h"
#include "grad/grad_models.h"   // (gm_load)

// a 2-layer network of m's sizes with random weights (output layer scaled by out)
static physMlp* net(const physModel* m, physMlpAct act, double out, uint64_t seed) {
  int size[3] = {phys_residual_nfeature(m), 16, m->nv};
  char err[128];
  physMlp* n = phys_mlp_alloc(2, size, act, err, sizeof(err));
  physRng r;
  phys_rng_seed(&r, seed);
  phys_mlp_randomize(n, &r, out);
  return n;
}

int main(void) {
  physModel* m = gm_load("tests/data/mixed.xml", 0);
  CHECK(phys_residual_nfeature(m) == 12 + 9 + 1 + 1 + m->nv);
  physData* d = phys_make_data(m);
  for (int i = 0; i < m->nv; i++) d->qvel[i] = 0.1 * (i + 1);
  double quat[4] = {0.8, 0.2, -0.4, 0.4}, R[9];
  double nq = sqrt(0.64 + 0.04 + 0.16 + 0.16);
  for (int k = 0; k < 4; k++) d->qpos[3 + k] = quat[k] / nq, quat[k] /= nq;
  double phi[64];
  phys_residual_features(m, d->qpos, d->qvel, phi);
  phys_quat2mat(R, quat);
  CHECK(phi[0] == d->qpos[0] && phi[2] == d->qpos[2] && !memcmp(phi + 3, R, sizeof R));
  CHECK(phi[21] == d->qpos[m->jnt_qposadr[2]] && phi[22] == d->qpos[m->jnt_qposadr[3]]);
  CHECK(!memcmp(phi + 23, d->qvel, sizeof(double) * (size_t)m->nv));

  // contact-free step: v+ (network) - v+ (none) = dt r(x0), to rounding
  double x0[64], v1[32], r[32];
  phys_state_save(m, d, x0);
  phys_step(m, d);
  memcpy(v1, d->qvel, sizeof(double) * (size_t)m->nv);
  phys_free_data(d);
  m->residual = net(m, PHYS_MLP_TANH, 5, 1);
  char err[160];
  CHECK(phys_residual_check(m, m->residual, err, sizeof(err)) == NULL);
  d = phys_make_data(m);   // (after the network: the arena holds its scratch)
  phys_state_load(m, d, x0);
  phys_residual_acc(m, d, r);
  phys_step(m, d);
  double e = 0, rmax = 0;
  for (int i = 0; i < m->nv; i++) {
    e = fmax(e, fabs(d->qvel[i] - v1[i] - m->opt.timestep * r[i]));
    rmax = fmax(rmax, fabs(r[i]));
  }
  CHECK_MSG(rmax > 0.1 && e <= 1e-13, "v+ with the network - v+ without vs dt r: %.3g (|r| %.3g)", e, rmax);
  CHECK(d->nwarning == 0);

  // deep copy: the copy owns its own network with the same weights
  physModel* c = phys_copy_model(m);
  CHECK(c && c->residual && c->residual != m->residual && c->residual->nparam == m->residual->nparam);
  CHECK(c && !memcmp(c->residual->w, m->residual->w, sizeof(double) * (size_t)m->residual->nparam));
  phys_free_model(c);

  // a network of the wrong sizes, and contact penalty, are refused with a message
  int bad[3] = {5, 4, m->nv};
  physMlp* b = phys_mlp_alloc(2, bad, PHYS_MLP_RELU, err, sizeof(err));
  CHECK(phys_residual_check(m, b, err, sizeof(err)) != NULL);
  CHECK_MSG(strstr(err, "5 inputs") && strstr(err, "needs 34"), "message: %s", err);
  phys_mlp_free(b);
  m->opt.contact = PHYS_CONTACT_PENALTY;
  CHECK(phys_residual_check(m, m->residual, err, sizeof(err)) != NULL && strstr(err, "penalty"));
  phys_free_data(d);
  phys_free_model(m);

  // the cube resting on the floor (lcp) with a residual pointing up at 2 g: it leaves the floor, v_z = dt (2 g - g)
  physModel* cube = gm_load("models/cube.xml", 0);
  int sz[2] = {phys_residual_nfeature(cube), 6};
  cube->residual = phys_mlp_alloc(1, sz, PHYS_MLP_RELU, err, sizeof(err));
  cube->residual->w[phys_mlp_boff(cube->residual, 0) + 2] = 2 * 9.81;   // r = (0, 0, 2 g, 0, 0, 0)
  d = phys_make_data(cube);
  d->qpos[2] = 0.0524;
  phys_step(cube, d);
  CHECK_MSG(fabs(d->qvel[2] - cube->opt.timestep * 9.81) <= 1e-12, "cube lifted by the residual: v_z %.17g", d->qvel[2]);
  phys_free_data(d);
  phys_free_model(cube);
  return test_done();
}
