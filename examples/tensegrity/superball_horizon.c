// superball_horizon.c - the recurrent loss's gradient against the horizon (issue 16 item 3, paper 002).
//
// superball_horizon MODEL DATA.csv SCALE SPEC...
//
// DATA is one trajectory at 10 Hz as examples/tensegrity/gen_superball writes it (t,q0..,v0..,u0..). The model
// runs at its 1 ms timestep, 100 steps per observation interval, from the data's first state, with the
// recorded controls held (zero-order hold), and is compared with every observation it reaches:
//   L(H) = sum over observations k = 1..H/0.1 s of 1/2 |q(t_k) (-) q_k|^2 + 1/2 |v(t_k) - v_k|^2
// (tangent coordinates: m, rad, m/s, rad/s). The parameters (SPEC: params.h's specs, e.g. 'stiffness:*') are set
// to SCALE times the model's values (SCALE = 1 is the truth when the data came from MODEL). For each horizon
// H = 0.1, 0.2, 0.5, 1, 2, 5 s (T = 100 .. 5000 steps) it prints L, |dL/dtheta|, the scale-free gradient
// theta_j dL/dtheta_j of each parameter, and the directional derivative along theta itself against a central
// difference (relative step 1e-6) as a check that the 5000-step reverse pass is the loss's derivative.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "params.h"
#include "physid.h"
#include "rollout.h"
#include "superball_csv.h"

enum { HOLD = 100 };

typedef struct {
  const physModel* m;
  const double* rows;   // the data rows, ncol each
  int ncol;
  double* dq;           // nv scratch
} horizonLoss;

// l_t: zero between observations; at t = k HOLD (k >= 1) the squared error against row k, gradient in g_q, g_v
static double obs_loss(void* ctx, int t, const double* qpos, const double* qvel, double* g_q, double* g_v) {
  horizonLoss* c = ctx;
  if (t == 0 || t % HOLD) return 0;
  const physModel* m = c->m;
  const double* row = c->rows + (size_t)(t / HOLD) * c->ncol;
  double l = 0;
  phys_difference_pos(m, c->dq, 1.0, row + 1, qpos);   // q (-) q_obs in tangent coordinates
  for (int i = 0; i < m->nv; i++) {
    double ev = qvel[i] - row[1 + m->nq + i];
    g_q[i] = c->dq[i];   // d(1/2 |theta|^2) along the tangent is theta itself, also for rotation vectors
    g_v[i] = ev;
    l += 0.5 * (c->dq[i] * c->dq[i] + ev * ev);
  }
  return l;
}

// the loss and gradient of horizon T steps from row 0 at theta; 0 on success
static int horizon_grad(physModel* m, physData* d, const physParamTable* t, const double* theta, int T,
                        const double* u, horizonLoss* c, double* work, double* loss, double* grad) {
  physLog log = {0};
  if (phys_param_set(t, m, theta) != PHYS_OK) return 1;
  phys_reset_data(m, d);
  memcpy(d->qpos, c->rows + 1, sizeof(double) * (size_t)m->nq);
  memcpy(d->qvel, c->rows + 1 + m->nq, sizeof(double) * (size_t)m->nv);
  physStatus st = phys_rollout_grad(m, d, t, T, 0, u, obs_loss, c, work, loss, NULL, NULL, grad, &log);
  if (st != PHYS_OK) fprintf(stderr, "superball_horizon: %s\n", log.error);
  return st != PHYS_OK;
}

int main(int argc, char** argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: superball_horizon MODEL DATA.csv SCALE SPEC...\n");
    return 2;
  }
  physLog log = {0};
  physModel* m = phys_load(argv[1], NULL, &log);
  if (!m) {
    fprintf(stderr, "superball_horizon: %s\n", log.error);
    return 1;
  }
  physParamTable t;
  if (phys_param_table_build(&t, m, (const char* const*)argv + 4, argc - 4, &log) != PHYS_OK) {
    fprintf(stderr, "superball_horizon: %s\n", log.error);
    return 1;
  }
  int nq = m->nq, nv = m->nv, nu = m->nu, ncol = 1 + nq + nv + nu, nt = t.ntheta;
  double* rows = malloc(sizeof(double) * (size_t)SUPERBALL_MAXROW * ncol);
  int nrow = superball_read_rows(argv[2], ncol, rows);
  if (nrow < 2) {
    fprintf(stderr, "superball_horizon: %s: fewer than 2 rows of %d numbers\n", argv[2], ncol);
    return 1;
  }
  physData* d = phys_make_data(m);
  double *theta = malloc(sizeof(double) * nt), *th = malloc(sizeof(double) * nt);
  double *grad = malloc(sizeof(double) * nt), *gtmp = malloc(sizeof(double) * nt);
  phys_param_get(&t, m, theta);
  for (int j = 0; j < nt; j++) theta[j] *= atof(argv[3]);
  int Tmax = (nrow - 1) * HOLD;
  double* u = malloc(sizeof(double) * (size_t)Tmax * (nu ? nu : 1));
  for (int s = 0; s < Tmax; s++)
    for (int a = 0; a < nu; a++) u[(size_t)s * nu + a] = rows[(size_t)(s / HOLD) * ncol + 1 + nq + nv + a];
  double* work = malloc(sizeof(double) * phys_rollout_worksize(m, Tmax, phys_rollout_interval(Tmax, 0), nt));
  horizonLoss c = {m, rows, ncol, malloc(sizeof(double) * nv)};
  static const double H[6] = {0.1, 0.2, 0.5, 1, 2, 5};
  printf("| horizon (s) | steps | loss | abs(dL/dtheta) |");
  for (int e = 0; e < t.n; e++)   // a tied spec's entries share one theta: one column each
    if (!e || t.param[e].adr != t.param[e - 1].adr) printf(" theta dL/dtheta %s |", t.param[e].name);
  printf(" directional derivative vs central difference (rel.) |\n|---|---|---|---|");
  for (int e = 0; e < t.n; e++)
    if (!e || t.param[e].adr != t.param[e - 1].adr) printf("---|");
  printf("---|\n");
  int rc = 0;
  for (int h = 0; h < 6 && !rc; h++) {
    int T = (int)lround(H[h] / m->opt.timestep);
    if (T > Tmax) break;
    double* w = realloc(work, sizeof(double) * phys_rollout_worksize(m, T, phys_rollout_interval(T, 0), nt));
    work = w;
    double loss, lp, lm, norm = 0, dir = 0, eps = 1e-6;
    if ((rc = horizon_grad(m, d, &t, theta, T, u, &c, work, &loss, grad))) break;
    for (int j = 0; j < nt; j++) norm += grad[j] * grad[j], dir += grad[j] * theta[j];
    for (int j = 0; j < nt; j++) th[j] = theta[j] * (1 + eps);
    rc |= horizon_grad(m, d, &t, th, T, u, &c, work, &lp, gtmp);
    for (int j = 0; j < nt; j++) th[j] = theta[j] * (1 - eps);
    rc |= horizon_grad(m, d, &t, th, T, u, &c, work, &lm, gtmp);
    double fd = (lp - lm) / (2 * eps);
    printf("| %g | %d | %.4g | %.4g |", H[h], T, loss, sqrt(norm));
    for (int e = 0; e < t.n; e++)
      if (!e || t.param[e].adr != t.param[e - 1].adr) printf(" %.4g |", theta[t.param[e].adr] * grad[t.param[e].adr]);
    printf(" %.3g |\n", fabs(dir - fd) / fmax(fabs(fd), 1e-300));
  }
  phys_param_table_free(&t);
  phys_free_data(d);
  phys_free_model(m);
  free(rows), free(theta), free(th), free(grad), free(gtmp), free(u), free(work), free(c.dq);
  return rc;
}
