// test_e2e.c - paper 004's end-to-end baseline (src/sysid/e2e.c): the network's shape (the paper's 4 x 256 tanh
// for the cube: 18 features to 6 velocities), training by minibatch Adam lowers the next-velocity loss on ten
// throws of a ball under gravity (a 2 x 32 network, 300 epochs: the loss / 100 or better) and the same seed gives
// the same weights bit for bit, and the rollout step of a constant network (zero weights, bias c): v+ = c and
// the position moves by dt c; a network of the wrong sizes is refused.
#include <string.h>

#include "e2e.h"
#include "grad/grad_models.h"
#include "residual.h"

// ntraj throws of m (the ball), T samples each, one step apart
static void throws(physModel* m, int ntraj, int T, physDataset* ds) {
  memset(ds, 0, sizeof(*ds));
  ds->ntraj = ntraj;
  ds->traj = calloc((size_t)ntraj, sizeof(physTrajectory));
  physData* d = phys_make_data(m);
  physRng r;
  phys_rng_seed(&r, 2);
  for (int k = 0; k < ntraj; k++) {
    physTrajectory* tr = ds->traj + k;
    tr->T = T;
    tr->time = malloc(sizeof(double) * T);
    tr->qpos = malloc(sizeof(double) * T * m->nq);
    tr->qvel = malloc(sizeof(double) * T * m->nv);
    phys_reset_data(m, d);
    for (int i = 0; i < 3; i++) d->qvel[i] = phys_rng_range(&r, -1, 1);
    for (int s = 0; s < T; s++) {
      tr->time[s] = d->time;
      memcpy(tr->qpos + (size_t)s * m->nq, d->qpos, sizeof(double) * m->nq);
      memcpy(tr->qvel + (size_t)s * m->nv, d->qvel, sizeof(double) * m->nv);
      phys_step(m, d);
    }
  }
  ds->nq = m->nq, ds->nv = m->nv, ds->dt_obs = m->opt.timestep;
  phys_free_data(d);
}

int main(void) {
  physModel* m = gm_load("tests/data/freebody.xml", 0);
  m->opt.gravity[2] = -9.81;
  m->opt.timestep = 0.01;
  char err[160];
  physMlp* big = phys_e2e_alloc(m, 4, 256, 1, err, sizeof err);
  CHECK(big && big->nlayer == 5 && big->size[0] == 18 && big->size[1] == 256 && big->size[4] == 256 &&
        big->size[5] == 6 && big->act == PHYS_MLP_TANH);
  phys_mlp_free(big);

  physDataset ds;
  throws(m, 10, 20, &ds);
  physE2eOptions o;
  phys_e2e_defaults(&o);
  o.epochs = 300, o.batch = 32, o.lr = 3e-3;
  physMlp* n = phys_e2e_alloc(m, 2, 32, 3, err, sizeof err);
  physMlp* n2 = phys_mlp_copy(n);
  double hist[301];
  physLog log;
  memset(&log, 0, sizeof log);
  CHECK(phys_e2e_train(m, n, &ds, &o, hist, &log) == PHYS_OK);
  CHECK_MSG(hist[300] < hist[0] / 100, "end-to-end loss %.4g -> %.4g", hist[0], hist[300]);
  printf("end-to-end (2 x 32 tanh, 10 throws x 19 transitions): loss %.4g -> %.4g in 300 epochs\n", hist[0], hist[300]);
  CHECK(phys_e2e_train(m, n2, &ds, &o, NULL, &log) == PHYS_OK);
  CHECK(memcmp(n->w, n2->w, sizeof(double) * (size_t)n->nparam) == 0);

  // the rollout step of a constant network
  memset(n->w, 0, sizeof(double) * (size_t)n->nparam);
  double c[6] = {0.5, -1, 2, 0, 0, 0}, q[7] = {1, 2, 3, 1, 0, 0, 0}, v[6] = {9, 9, 9, 0, 0, 0};
  memcpy(n->w + phys_mlp_boff(n, n->nlayer - 1), c, sizeof c);
  double* work = malloc(sizeof(double) * phys_e2e_nwork(m, n));
  phys_e2e_step(m, n, 0.1, q, v, work);
  CHECK(v[0] == 0.5 && v[1] == -1 && v[2] == 2 && fabs(q[0] - 1.05) < 1e-15 && fabs(q[1] - 1.9) < 1e-15 &&
        fabs(q[2] - 3.2) < 1e-15 && q[3] == 1);
  free(work);

  // wrong sizes
  int bad[3] = {5, 4, 6};
  physMlp* b = phys_mlp_alloc(2, bad, PHYS_MLP_TANH, err, sizeof err);
  memset(&log, 0, sizeof log);
  CHECK(phys_e2e_train(m, b, &ds, &o, NULL, &log) == PHYS_ERR_SIZE && strstr(log.error, "needs 18 to 6"));
  phys_mlp_free(b);
  phys_mlp_free(n), phys_mlp_free(n2);
  for (int k = 0; k < ds.ntraj; k++) free(ds.traj[k].time), free(ds.traj[k].qpos), free(ds.traj[k].qvel);
  free(ds.traj);
  phys_free_model(m);
  return test_done();
}
