// test_batch.c - steps, step VJPs and rollouts of many rows in one call (src/grad/batch.c).
//
// Models: models/cube.xml (free joint, lcp contact, and again under penalty contact: the rows start pressed
// 0.05..0.2 mm into the table, sliding and spinning, so every step has contacts) and
// tests/data/actuator_contact.xml (a free box on the floor pushed by a filtered thruster, an arm with an
// integrator and a filtered servo: na = 3, nu = 4), each with a parameter table.
// 1. Every row of phys_step_batch, phys_step_vjp_batch (xbar, ubar, thetabar) and phys_rollout_batch (T = 25)
//    equals, bit for bit, the one-by-one calls (phys_step; phys_step_vjp and phys_step_param_vjp; a phys_step
//    loop) on a Data reset and set to the row's state and controls - for nwork = 1, 2 and 3 (rows on different
//    threads), and with the work Datas left dirty by other steps beforehand (their previous contact lists, time
//    and warnings must not leak into a row).
// 2. The batch VJP (penalty cube, actuator_contact.xml) against central differences of the batch step, in the
//    dot-product form xbar_next . (f(x + h e) - f(x - h e)) / 2h = xbar . e for a random tangent direction e (u
//    and theta moved the same way), h = 1e-6, so the batched reverse mode is checked on its own, not only
//    against phys_step_vjp. (Not lcp's cube: four corners on a face, its contact impulses are not unique.)
// 3. Bad arguments (nwork 0 or above PHYS_BATCH_MAXTHREADS, a NULL work Data, a NULL array) give PHYS_ERR_ARG
//    with a message; rows whose state is not finite give PHYS_ERR_NUMERIC naming the first failing row (row 2,
//    not row 5), the same message for every nwork.
// 4. phys_step_vjp_batch_qpos (cotangents in qpos coordinates) against phys_step_vjp_batch with the maps done
//    here by quaternion products, and the two maps' round trip.
// 5. phys_rollout_states (T steps of one Data in one call) against a phys_step loop on a twin Data, bit for bit:
//    every row, and the Data left at x_T (time, contact list carried: the Datas start mid-run, after a few steps,
//    so warm starts and time are in play); with controls per step and with NULL (ctrl held); a non-finite state
//    gives PHYS_ERR_NUMERIC "step 0 rejected", bad arguments PHYS_ERR_ARG.
// 6. phys_rollout_states_vjp (reverse mode of T = 8 chained one-row steps from their stored states) equals the
//    chain of phys_step_vjp_batch_qpos calls made here (x_0's quaternion cotangent then projected on its tangent
//    plane by the two maps), bit for bit, and against central differences of
//    L = sum_s ybar_s . x_s over the chained phys_step_batch steps (h = 1e-6, a random direction of x_0 off the
//    quaternion, of every control and of theta): the dot-product test, relative 1e-5.
#include "grad_models.h"
#include "params.h"
#include "physid/derivatives.h"

#define NB 7
#define T_ROLL 25
#define NWMAX 3

typedef struct batchCase_ {
  const char* name;
  physModel* m;
  physParamTable tab;
  int ns, nx, nu, nth;
  double *x, *u, *xbar_next, *useq;   // rows (NB x ns), controls (NB x nu), cotangents (NB x nx), NB x T x nu
} batchCase;

// d reset, then the row's state (qpos, qvel, act) and controls: what the batch promises a row equals
static void ref_load(const batchCase* c, physData* d, int b, const double* u) {
  const physModel* m = c->m;
  phys_reset_data(m, d);
  memcpy(d->qpos, c->x + b * c->ns, sizeof(double) * m->nq);
  memcpy(d->qvel, c->x + b * c->ns + m->nq, sizeof(double) * m->nv);
  if (m->na) memcpy(d->act, c->x + b * c->ns + m->nq + m->nv, sizeof(double) * m->na);
  if (m->nu) memcpy(d->ctrl, u, sizeof(double) * m->nu);
}

static void save_row(const physModel* m, const physData* d, double* x) {
  memcpy(x, d->qpos, sizeof(double) * m->nq);
  memcpy(x + m->nq, d->qvel, sizeof(double) * m->nv);
  if (m->na) memcpy(x + m->nq + m->nv, d->act, sizeof(double) * m->na);
}

// nwork Datas, each dirtied by a few steps from the first row (contacts, time, warnings)
static void make_work(const batchCase* c, physData** w, int nwork) {
  for (int i = 0; i < nwork; i++) {
    w[i] = phys_make_data(c->m);
    ref_load(c, w[i], i % NB, c->u);
    for (int s = 0; s < 3 + i; s++) phys_step(c->m, w[i]);
  }
}

static void free_work(physData** w, int nwork) {
  for (int i = 0; i < nwork; i++) phys_free_data(w[i]);
}

// 1: the batch calls against the one-by-one calls, bit for bit, for nwork = 1..NWMAX
static void check_identical(const batchCase* c) {
  const physModel* m = c->m;
  int ns = c->ns, nx = c->nx, nu = c->nu, nth = c->nth;
  double ref_x[NB * 64], ref_xb[NB * 64], ref_ub[NB * 8], ref_tb[NB * 8];
  double* ref_roll = malloc(sizeof(double) * NB * (T_ROLL + 1) * ns);
  physData* d = phys_make_data(m);
  for (int b = 0; b < NB; b++) {
    ref_load(c, d, b, c->u + b * nu);
    phys_step(m, d);
    save_row(m, d, ref_x + b * ns);
    ref_load(c, d, b, c->u + b * nu);
    CHECK(phys_step_vjp(m, d, c->xbar_next + b * nx, ref_xb + b * nx, ref_ub + b * nu) == PHYS_OK);
    CHECK(phys_step_param_vjp(m, d, &c->tab, c->xbar_next + b * nx, ref_tb + b * nth) == PHYS_OK);
    ref_load(c, d, b, c->useq + b * T_ROLL * nu);
    double* xs = ref_roll + b * (T_ROLL + 1) * ns;
    save_row(m, d, xs);
    for (int s = 0; s < T_ROLL; s++) {
      if (nu) memcpy(d->ctrl, c->useq + (b * T_ROLL + s) * nu, sizeof(double) * nu);
      phys_step(m, d);
      save_row(m, d, xs + (s + 1) * ns);
    }
    CHECK_MSG(d->ncon > 0 || strcmp(c->name, "cube"), "%s row %d: no contact at the end", c->name, b);
  }
  phys_free_data(d);
  physLog log;
  memset(&log, 0, sizeof log);
  double x1[NB * 64], xb[NB * 64], ub[NB * 8], tb[NB * 8];
  double* roll = malloc(sizeof(double) * NB * (T_ROLL + 1) * ns);
  for (int nwork = 1; nwork <= NWMAX; nwork++) {
    physData* w[NWMAX];
    make_work(c, w, nwork);
    CHECK_MSG(phys_step_batch(m, w, nwork, NB, c->x, c->u, x1, &log) == PHYS_OK, "%s", log.error);
    CHECK_MSG(!memcmp(x1, ref_x, sizeof(double) * NB * ns), "%s nwork %d: step rows differ", c->name, nwork);
    CHECK_MSG(phys_step_vjp_batch(m, w, nwork, &c->tab, NB, c->x, c->u, c->xbar_next, xb, ub, tb, &log) ==
              PHYS_OK, "%s", log.error);
    CHECK_MSG(!memcmp(xb, ref_xb, sizeof(double) * NB * nx), "%s nwork %d: xbar rows differ", c->name, nwork);
    CHECK_MSG(!memcmp(ub, ref_ub, sizeof(double) * NB * nu), "%s nwork %d: ubar rows differ", c->name, nwork);
    CHECK_MSG(!memcmp(tb, ref_tb, sizeof(double) * NB * nth), "%s nwork %d: thetabar rows differ", c->name, nwork);
    CHECK_MSG(phys_rollout_batch(m, w, nwork, NB, T_ROLL, c->x, c->useq, roll, &log) == PHYS_OK, "%s", log.error);
    CHECK_MSG(!memcmp(roll, ref_roll, sizeof(double) * NB * (T_ROLL + 1) * ns), "%s nwork %d: rollouts differ",
              c->name, nwork);
    free_work(w, nwork);
  }
  free(roll);
  free(ref_roll);
}

// x moved by h along the tangent direction e (nx: q tangent, v, act) into xp
static void move(const physModel* m, const double* x, const double* e, double h, double* xp) {
  memcpy(xp, x, sizeof(double) * (m->nq + m->nv + m->na));
  double dq[64];
  for (int i = 0; i < m->nv; i++) dq[i] = h * e[i];
  phys_integrate_pos(m, xp, dq, 1);
  for (int i = 0; i < m->nv + m->na; i++) xp[m->nq + i] += h * e[m->nv + i];
}

// the difference quotient of xbar_next . (xnext in tangent coordinates) along (e_x, e_u, e_theta), h = 1e-6
static double fd_dot(batchCase* c, physData* w, int b, const double* ex, const double* eu, const double* et) {
  const physModel* m = c->m;
  double h = 1e-6, xp[2][64], up[2][8], th0[8], th[8], xn[2][64];
  phys_param_get(&c->tab, c->m, th0);
  for (int k = 0; k < 2; k++) {
    double s = k ? -h : h;
    move(m, c->x + b * c->ns, ex, s, xp[k]);
    for (int i = 0; i < c->nu; i++) up[k][i] = c->u[b * c->nu + i] + s * eu[i];
    for (int i = 0; i < c->nth; i++) th[i] = th0[i] + s * et[i];
    CHECK(phys_param_set(&c->tab, c->m, th) == PHYS_OK);
    CHECK(phys_step_batch(m, &w, 1, 1, xp[k], up[k], xn[k], NULL) == PHYS_OK);
  }
  CHECK(phys_param_set(&c->tab, c->m, th0) == PHYS_OK);
  double dq[64], dot = 0;
  phys_difference_pos(m, dq, 2 * h, xn[1], xn[0]);   // (q+ - q-) / 2h in the tangent at q-
  const double* xb = c->xbar_next + b * c->nx;
  for (int i = 0; i < m->nv; i++) dot += xb[i] * dq[i];
  for (int i = 0; i < m->nv + m->na; i++) dot += xb[m->nv + i] * (xn[0][m->nq + i] - xn[1][m->nq + i]) / (2 * h);
  return dot;
}

// 2: the batch VJP against differences of the batch step, every row, one random direction each
static void check_fd(batchCase* c) {
  const physModel* m = c->m;
  physData* w = phys_make_data(m);
  physRng r;
  phys_rng_seed(&r, 31);
  double xb[NB * 64], ub[NB * 8], tb[NB * 8];
  CHECK(phys_step_vjp_batch(m, &w, 1, &c->tab, NB, c->x, c->u, c->xbar_next, xb, ub, tb, NULL) == PHYS_OK);
  for (int b = 0; b < NB; b++) {
    double ex[64], eu[8], et[8];
    gm_rand_vec(&r, ex, c->nx);
    gm_rand_vec(&r, eu, c->nu);
    gm_rand_vec(&r, et, c->nth);
    double an = 0, scale = 0;
    for (int i = 0; i < c->nx; i++) an += xb[b * c->nx + i] * ex[i], scale += fabs(xb[b * c->nx + i] * ex[i]);
    for (int i = 0; i < c->nu; i++) an += ub[b * c->nu + i] * eu[i], scale += fabs(ub[b * c->nu + i] * eu[i]);
    for (int i = 0; i < c->nth; i++) an += tb[b * c->nth + i] * et[i], scale += fabs(tb[b * c->nth + i] * et[i]);
    double fd = fd_dot(c, w, b, ex, eu, et);
    CHECK_MSG(fabs(an - fd) <= 1e-6 * fmax(scale, 1e-3), "%s row %d: vjp . e %.12g, differences %.12g", c->name, b,
              an, fd);
  }
  phys_free_data(w);
}

// a quaternion's cotangent maps by quaternion products: d qpos / d dq_k = q (0, e_k) / 2, so (dqpos/dtangent)' qbar
// has components qbar . q (0, e_k) / 2, and (dtangent/dqpos)' g = sum_k 2 g_k q (0, e_k)
static void ref_to_tangent(const double* q, const double* qb, double* g) {
  for (int k = 0; k < 3; k++) {
    double e[4] = {0, k == 0, k == 1, k == 2}, dq[4];
    phys_quat_mul(dq, q, e);
    g[k] = 0.5 * (qb[0] * dq[0] + qb[1] * dq[1] + qb[2] * dq[2] + qb[3] * dq[3]);
  }
}
static void ref_to_qpos(const double* q, const double* g, double* qb) {
  memset(qb, 0, 4 * sizeof(double));
  for (int k = 0; k < 3; k++) {
    double e[4] = {0, k == 0, k == 1, k == 2}, dq[4];
    phys_quat_mul(dq, q, e);   // column k of L(q)[:, 1:]
    for (int i = 0; i < 4; i++) qb[i] += 2 * g[k] * dq[i];
  }
}

// 4: phys_step_vjp_batch_qpos against phys_step_vjp_batch with the cotangents mapped here (the first joint is
// free: its quaternion by quaternion products, the other coordinates their own), to 1e-14 relative; and the maps
// themselves: to_tangent(to_qpos(g)) = g (L(q)[:, 1:]' L(q)[:, 1:] = I for a unit q)
static void check_qpos(const batchCase* c) {
  const physModel* m = c->m;
  int ns = c->ns, nx = c->nx, nq = m->nq, nv = m->nv;
  CHECK(m->jnt_type[0] == PHYS_JNT_FREE && m->jnt_qposadr[0] == 0);
  physData* w = phys_make_data(m);
  physRng r;
  phys_rng_seed(&r, 41);
  double xn[NB * 64], yb[NB * 64], xq[NB * 64], ub[NB * 8], tb[NB * 8], xbn[NB * 64], xb[NB * 64], ub2[NB * 8];
  double tb2[NB * 8];
  physLog log;
  memset(&log, 0, sizeof log);
  CHECK(phys_step_batch(m, &w, 1, NB, c->x, c->u, xn, &log) == PHYS_OK);
  gm_rand_vec(&r, yb, NB * ns);
  CHECK_MSG(phys_step_vjp_batch_qpos(m, &w, 1, &c->tab, NB, c->x, c->u, xn, yb, xq, ub, tb, &log) == PHYS_OK, "%s",
            log.error);
  for (int b = 0; b < NB; b++) {   // the reference cotangent of the next state in the tangent
    double *g = xbn + b * nx, *y = yb + b * ns;
    memcpy(g, y, 3 * sizeof(double));
    ref_to_tangent(xn + b * ns + 3, y + 3, g + 3);
    memcpy(g + 6, y + 7, sizeof(double) * (nq - 7));   // hinges after the free joint (actuator_contact.xml)
    memcpy(g + nv, y + nq, sizeof(double) * (nx - nv));
  }
  CHECK(phys_step_vjp_batch(m, &w, 1, &c->tab, NB, c->x, c->u, xbn, xb, ub2, tb2, &log) == PHYS_OK);
  double err = 0;
  for (int b = 0; b < NB; b++) {
    double ref[64], *g = xb + b * nx;
    memcpy(ref, g, 3 * sizeof(double));
    ref_to_qpos(c->x + b * ns + 3, g + 3, ref + 3);
    memcpy(ref + 7, g + 6, sizeof(double) * (nq - 7));
    memcpy(ref + nq, g + nv, sizeof(double) * (nx - nv));
    for (int i = 0; i < ns; i++) err = fmax(err, fabs(xq[b * ns + i] - ref[i]) / fmax(fabs(ref[i]), 1));
    double back[64], qb[64];
    phys_tangent_bar_to_qpos(m, c->x + b * ns, g, qb);
    phys_qpos_bar_to_tangent(m, c->x + b * ns, qb, back);
    for (int i = 0; i < nv; i++) err = fmax(err, fabs(back[i] - g[i]) / fmax(fabs(g[i]), 1));
  }
  CHECK_MSG(err < 1e-14, "%s: qpos-coordinate VJP or maps off by %.3g", c->name, err);
  CHECK(!memcmp(ub, ub2, sizeof(double) * NB * c->nu) && !memcmp(tb, tb2, sizeof(double) * NB * c->nth));
  phys_free_data(w);
}

// 3: refusals and the first failing row
static void check_errors(const batchCase* c) {
  const physModel* m = c->m;
  physLog log;
  memset(&log, 0, sizeof log);
  physData* w[NWMAX];
  make_work(c, w, NWMAX);
  double out[NB * 64 * 5], x[NB * 64];
  CHECK(phys_step_batch(m, w, 0, NB, c->x, c->u, out, &log) == PHYS_ERR_ARG && strstr(log.error, "nwork 0"));
  CHECK(phys_step_batch(m, w, PHYS_BATCH_MAXTHREADS + 1, NB, c->x, c->u, out, &log) == PHYS_ERR_ARG);
  CHECK(phys_step_batch(m, w, NWMAX, NB, NULL, c->u, out, &log) == PHYS_ERR_ARG);
  CHECK(phys_step_vjp_batch(m, w, 1, NULL, NB, c->x, c->u, NULL, out, NULL, NULL, &log) == PHYS_ERR_ARG);
  physData* null_work[2] = {w[0], NULL};
  memset(&log, 0, sizeof log);   // (a log keeps its first error)
  CHECK(phys_step_batch(m, null_work, 2, NB, c->x, c->u, out, &log) == PHYS_ERR_ARG &&
        strstr(log.error, "work[1]"));
  memcpy(x, c->x, sizeof(double) * NB * c->ns);
  x[5 * c->ns + m->nq] = NAN;   // rows 5 and 2 cannot step
  x[2 * c->ns + m->nq + 1] = INFINITY;
  for (int nwork = 1; nwork <= NWMAX; nwork++) {
    memset(&log, 0, sizeof log);
    CHECK(phys_step_batch(m, w, nwork, NB, x, c->u, out, &log) == PHYS_ERR_NUMERIC);
    CHECK_MSG(strstr(log.error, "row 2: step 0 rejected") != NULL, "%s nwork %d: %s", c->name, nwork, log.error);
    CHECK(phys_rollout_batch(m, w, nwork, NB, 4, x, c->useq, out, &log) == PHYS_ERR_NUMERIC);
    CHECK_MSG(strstr(log.error, "row 2: step 0 rejected") != NULL, "%s nwork %d: %s", c->name, nwork, log.error);
  }
  CHECK(phys_step_batch(m, w, NWMAX, 0, NULL, NULL, NULL, &log) == PHYS_OK);   // no rows: nothing to do
  free_work(w, NWMAX);
}

// two Datas in the same state mid-run: both from row 1, with its controls, after 4 steps
static void twin_start(const batchCase* c, physData* a, physData* b) {
  ref_load(c, a, 1, c->u + c->nu);
  ref_load(c, b, 1, c->u + c->nu);
  for (int s = 0; s < 4; s++) phys_step(c->m, a), phys_step(c->m, b);
}

// 5: phys_rollout_states against a phys_step loop, bit for bit, with controls per step and held
static void check_states(const batchCase* c) {
  const physModel* m = c->m;
  int ns = c->ns;
  physData *d = phys_make_data(m), *ref = phys_make_data(m);
  double xs[(T_ROLL + 1) * 64], row[64];
  physLog log;
  for (int held = 0; held < 2; held++) {
    twin_start(c, d, ref);
    memset(&log, 0, sizeof log);
    const double* u = held ? NULL : c->useq;
    CHECK_MSG(phys_rollout_states(m, d, T_ROLL, u, xs, &log) == PHYS_OK, "%s", log.error);
    int same = 1;
    for (int s = 0; s <= T_ROLL; s++) {
      save_row(m, ref, row);
      same &= !memcmp(row, xs + s * ns, sizeof(double) * ns);
      if (s == T_ROLL) break;
      if (u && m->nu) memcpy(ref->ctrl, u + s * m->nu, sizeof(double) * m->nu);
      phys_step(m, ref);
    }
    save_row(m, d, row);
    same &= !memcmp(row, xs + T_ROLL * ns, sizeof(double) * ns) && d->time == ref->time && d->ncon == ref->ncon;
    CHECK_MSG(same, "%s: phys_rollout_states (held %d) differs from the phys_step loop", c->name, held);
    CHECK(ref->time > 0 && (c->m->opt.contact == PHYS_CONTACT_PENALTY || ref->ncon > 0));
  }
  twin_start(c, d, ref);
  d->qvel[0] = NAN;
  memset(&log, 0, sizeof log);
  CHECK(phys_rollout_states(m, d, 3, c->useq, xs, &log) == PHYS_ERR_NUMERIC);
  CHECK_MSG(strncmp(log.error, "step 0 rejected (", 17) == 0, "%s: %s", c->name, log.error);
  memset(&log, 0, sizeof log);
  CHECK(phys_rollout_states(m, d, -1, NULL, xs, &log) == PHYS_ERR_ARG && strstr(log.error, "T -1"));
  CHECK(phys_rollout_states(m, d, 2, NULL, NULL, NULL) == PHYS_ERR_ARG);
  phys_free_data(d);
  phys_free_data(ref);
}

#define T_CHAIN 8

// x_0 .. x_T of T_CHAIN chained one-row steps from x0 (controls us, theta th set first); L = sum_s yb_s . x_s
static double chain(batchCase* c, physData* w, const double* x0, const double* us, const double* th,
                    const double* yb, double* xs) {
  CHECK(phys_param_set(&c->tab, c->m, th) == PHYS_OK);
  memcpy(xs, x0, sizeof(double) * c->ns);
  for (int s = 0; s < T_CHAIN; s++)
    CHECK(phys_step_batch(c->m, &w, 1, 1, xs + s * c->ns, us + s * c->nu, xs + (s + 1) * c->ns, NULL) == PHYS_OK);
  double L = 0;
  for (int i = 0; i < (T_CHAIN + 1) * c->ns; i++) L += yb[i] * xs[i];
  return L;
}

// 6: phys_rollout_states_vjp against the chain of batch VJPs (bit for bit) and against differences
static void check_states_vjp(batchCase* c) {
  const physModel* m = c->m;
  int ns = c->ns, nu = c->nu, nth = c->nth;
  physData* w = phys_make_data(m);
  physRng r;
  phys_rng_seed(&r, 11);
  double xs[(T_CHAIN + 1) * 64], yb[(T_CHAIN + 1) * 64], x0b[64], ub[T_CHAIN * 8], tb[8], th0[8];
  double c0[64], out[64], ub2[T_CHAIN * 8], tb2[8] = {0}, tbs[8];
  phys_param_get(&c->tab, m, th0);
  gm_rand_vec(&r, yb, (T_CHAIN + 1) * ns);
  chain(c, w, c->x + ns, c->useq, th0, yb, xs);
  physLog log;
  memset(&log, 0, sizeof log);
  CHECK_MSG(phys_rollout_states_vjp(m, w, &c->tab, T_CHAIN, xs, c->useq, yb, x0b, ub, tb, &log) == PHYS_OK, "%s",
            log.error);
  memcpy(c0, yb + T_CHAIN * ns, sizeof(double) * ns);   // the same chain, one batch VJP per step
  for (int s = T_CHAIN - 1; s >= 0; s--) {
    CHECK(phys_step_vjp_batch_qpos(m, &w, 1, &c->tab, 1, xs + s * ns, c->useq + s * nu, xs + (s + 1) * ns, c0, out,
                                   ub2 + s * nu, tbs, NULL) == PHYS_OK);
    for (int i = 0; i < ns; i++) c0[i] = out[i] + yb[s * ns + i];
    for (int i = 0; i < nth; i++) tb2[i] += tbs[i];
  }
  double gt[64];   // x_0's quaternion cotangent in its tangent plane
  phys_qpos_bar_to_tangent(m, xs, c0, gt);
  phys_tangent_bar_to_qpos(m, xs, gt, c0);
  CHECK_MSG(!memcmp(c0, x0b, sizeof(double) * ns) && !memcmp(ub, ub2, sizeof(double) * T_CHAIN * nu) &&
                !memcmp(tb, tb2, sizeof(double) * nth), "%s: phys_rollout_states_vjp differs from the chain", c->name);
  double ex[64] = {0}, eu[T_CHAIN * 8], et[8], xp[64], up[T_CHAIN * 8], thp[8], Lpm[2], xt[(T_CHAIN + 1) * 64];
  gm_rand_vec(&r, ex, ns);
  for (int i = 3; i < 7; i++) ex[i] = 0;   // the free joint's quaternion (qpos 3..6 in both models) held
  gm_rand_vec(&r, eu, T_CHAIN * nu);
  gm_rand_vec(&r, et, nth);
  double h = 1e-6, dot = 0;
  for (int k = 0; k < 2; k++) {
    double sg = k ? -h : h;
    for (int i = 0; i < ns; i++) xp[i] = c->x[ns + i] + sg * ex[i];
    for (int i = 0; i < T_CHAIN * nu; i++) up[i] = c->useq[i] + sg * eu[i];
    for (int i = 0; i < nth; i++) thp[i] = th0[i] + sg * et[i] * fabs(th0[i]);
    Lpm[k] = chain(c, w, xp, up, thp, yb, xt);
  }
  CHECK(phys_param_set(&c->tab, c->m, th0) == PHYS_OK);
  for (int i = 0; i < ns; i++) dot += x0b[i] * ex[i];
  for (int i = 0; i < T_CHAIN * nu; i++) dot += ub[i] * eu[i];
  for (int i = 0; i < nth; i++) dot += tb[i] * et[i] * fabs(th0[i]);
  double fd = (Lpm[0] - Lpm[1]) / (2 * h);
  CHECK_MSG(fabs(fd - dot) <= 1e-5 * fmax(fabs(fd), 1), "%s: rollout VJP %.12g, differences %.12g", c->name, dot, fd);
  CHECK(phys_rollout_states_vjp(m, w, NULL, -1, xs, NULL, yb, x0b, NULL, NULL, &log) == PHYS_ERR_ARG);
  phys_free_data(w);
}

// the rows: the base state pressed 0..0.2 mm deeper (qpos[2]), velocities and activations spread, controls random
static void make_case(batchCase* c, const char* name, const char* file, const char* const* spec, int nspec,
                      const double* q0, const double* v0, double vs) {
  memset(c, 0, sizeof *c);
  c->name = name;
  c->m = gm_load(file, 0);
  physModel* m = c->m;
  physLog log;
  memset(&log, 0, sizeof log);
  CHECK_MSG(phys_param_table_build(&c->tab, m, spec, nspec, &log) == PHYS_OK, "%s: %s", name, log.error);
  c->ns = m->nq + m->nv + m->na, c->nx = 2 * m->nv + m->na, c->nu = m->nu, c->nth = c->tab.ntheta;
  c->x = malloc(sizeof(double) * NB * c->ns);
  c->u = malloc(sizeof(double) * NB * (c->nu + 1));
  c->xbar_next = malloc(sizeof(double) * NB * c->nx);
  c->useq = malloc(sizeof(double) * NB * T_ROLL * (c->nu + 1));
  physRng r;
  phys_rng_seed(&r, 7);
  for (int b = 0; b < NB; b++) {
    double* x = c->x + b * c->ns;
    memcpy(x, q0, sizeof(double) * m->nq);
    x[2] -= 5e-5 + 1.5e-4 * b / (NB - 1);   // pressed in: away from distance 0, where contact switches on
    for (int i = 0; i < m->nv; i++) x[m->nq + i] = v0[i] + phys_rng_range(&r, -vs, vs);
    for (int i = 0; i < m->na; i++) x[m->nq + m->nv + i] = phys_rng_range(&r, -0.3, 0.4);
    for (int i = 0; i < c->nu; i++) c->u[b * c->nu + i] = phys_rng_range(&r, -1, 1);
    gm_rand_vec(&r, c->xbar_next + b * c->nx, c->nx);
  }
  for (int i = 0; i < NB * T_ROLL * c->nu; i++) c->useq[i] = phys_rng_range(&r, -1, 1);
}

static void free_case(batchCase* c) {
  phys_param_table_free(&c->tab);
  phys_free_model(c->m);
  free(c->x), free(c->u), free(c->xbar_next), free(c->useq);
}

int main(void) {
  batchCase c[3];
  const char* cube_spec[] = {"friction:cube", "restitution:cube", "mass:cube"};
  double cube_q[7] = {0, 0, 0.0524, 1, 0, 0, 0}, cube_v[6] = {0.4, -0.2, -0.05, 0, 0, 2};
  make_case(&c[0], "cube", "models/cube.xml", cube_spec, 3, cube_q, cube_v, 0.1);
  const char* act_spec[] = {"timeconst:thrust", "timeconst:servo", "gain:thrust", "mass:box"};
  double act_q[9] = {0, 0, 0.1 - 2e-4, 1, 0, 0, 0, 0.3, -0.4}, act_v[8] = {1, 0.3, 0, 0, 0, 0.5, 0.5, -1};
  make_case(&c[1], "act_contact", "tests/data/actuator_contact.xml", act_spec, 4, act_q, act_v, 0.2);
  CHECK(c[1].m->na == 3 && c[1].m->nq == 9 && c[1].m->nv == 8);
  make_case(&c[2], "cube_penalty", "models/cube.xml", cube_spec, 3, cube_q, cube_v, 0.1);
  c[2].m->opt.contact = PHYS_CONTACT_PENALTY;
  for (int i = 0; i < 3; i++) {
    check_identical(&c[i]);
    if (i) check_fd(&c[i]);
    check_qpos(&c[i]);
    check_errors(&c[i]);
    check_states(&c[i]);
    check_states_vjp(&c[i]);
    free_case(&c[i]);
  }
  return test_done();
}
