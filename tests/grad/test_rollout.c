// test_rollout.c - the rollout gradient with checkpointing (src/grad/rollout.c).
//
// Models: the pendulum, tests/data/mixed.xml (free, ball, limited slide, hinge, springs, motors on joints
// and on a spring) and the double pendulum; T in {1, 7, 100}; a parameter table on each.
// 1. dL/dx_0, dL/du and dL/dtheta against six-point central differences of the whole rollout
//    (phys_rollout): f' ~ (f(3h) - 9 f(2h) + 45 f(h) - 45 f(-h) + 9 f(-2h) - f(-3h)) / 60h, truncation
//    h^6 |f^(7)| / 140, rounding ~1.8 eps |f| / h. h = 1e-3 (rad, m, rad/s, m/s, control and theta units).
//    Measured worst relative error over all blocks and T (ROLLOUT_H=h overrides h):
//      four-point: h = 1e-2 7.9e-3, 3e-3 6.6e-5, 1e-3 8.1e-7, 3e-4 2.9e-7, 1e-4 1.3e-6
//      six-point:  h = 1e-2 3.2e-4, 3e-3 2.4e-7, 1e-3 6.0e-8, 3e-4 3.4e-7
//    (worst always mixed.xml's dL/dtheta, its stiff spring): the U shape (truncation above, rounding below)
//    shows the difference quotient's own error, and six-point at 1e-3 sits at its bottom, 17x below the
//    tolerance GM_RTOL = 1e-6 (relative to max(|entry|, 1e-4 * block scale)). A missing term (a dropped
//    loss gradient, a skipped step in the recursion, a wrong control index, zero damping's kink: 3e-3
//    measured) changes entries by far more.
// 2. Every checkpoint interval (k = 1 the full tape, the default ceil(sqrt T), a budget, k = T) gives the
//    same loss and gradient bit for bit, and the checkpoints and recomputed segment states are bit for bit
//    the states of the plain phys_step loop.
// 3. Memory: the workspace is exactly phys_rollout_worksize doubles, every word the rollout reads written (the
//    records' states and ncon contacts and everything after the records; the same gradient and words from
//    two different initial fills; a record's room past its ncon contacts need not be), nothing past it,
//    2 ceil(sqrt T) states for T = 100 instead of T + 1.
// 4. A rollout that goes non-finite (a NaN, infinite or huge control, a loss or gradient that overflows) is refused
//    with PHYS_ERR_NUMERIC, L = +inf and a message naming the step; nothing non-finite is returned.
// 5. Penalty contact: a box sliding and spinning on the floor with its corners pressed in (60 steps), friction,
//    restitution, penalty stiffness and mass as parameters: 1 and 2 as above (lcp, cone, ccp rollouts:
//    test_step_contact_deriv.c).
// 6. Activations (issue 15 item 2): tests/data/actuator_contact.xml's cube on one corner pushed by a filtered
//    thruster beside an arm with an integrator and a filtered servo, lcp, 40 steps: dL/dx0 (x = q, v, act),
//    dL/du and dL/dtheta (timeconst of both filters, gain, mass) as 1, and 2 (records with act); and the same
//    with a loss that reads act too (phys_rollout_grad_act: the act term of the gradient).
// 8. phys_rollout_vjp (cotangents of the states, no callback) against phys_rollout_grad_act with that loss.
// 7. The thruster's time constant recovered from a simulated recording (200 lcp steps, truth 0.05 s, start 0.1)
//    by Newton steps on the rollout gradient's dL/dtau, to 1e-6.
#include "grad_models.h"
#include "params.h"
#include "rollout.h"
#include "step.h"

static double H_FD = 1e-3;   // ROLLOUT_H overrides (to measure the error against h)
#define MAXREC 20000   // recorded states (qpos, qvel) of the plain rollout

// the test loss and, optionally, a recording of the states it is evaluated at
typedef struct lossCtx_ {
  const physModel* m;
  double* rec;   // NULL or (T+1) x (nq + nv)
  int nrec;
} lossCtx;

// l_t = w_t [ sum_hinge/slide 0.5 (q - r_j)^2 + sum_free 0.5 |p - r|^2 + sum_ball/free a . R(q) e ]
//       + 0.5 wv_t |v|^2 + c . v,   w_t = 1 + 0.01 t, wv_t = 0.5 + 0.02 t, c_i = 0.1 (i + 1).
// Rotation term: R(q exp(dq)) e = R (e + dq x e) to first order, so d/d(dq) (a . R e) = e x (R' a).
static double test_loss(void* vctx, int t, const double* qpos, const double* qvel, double* gq, double* gv) {
  lossCtx* c = vctx;
  const physModel* m = c->m;
  static const double a[3] = {0.3, -0.5, 0.8}, e[3] = {1, 0.2, -0.4}, rp[3] = {0.1, 0.2, 0.3};
  double w = 1 + 0.01 * t, wv = 0.5 + 0.02 * t, l = 0;
  if (c->rec && t < c->nrec) {
    memcpy(c->rec + (size_t)t * (m->nq + m->nv), qpos, sizeof(double) * m->nq);
    memcpy(c->rec + (size_t)t * (m->nq + m->nv) + m->nq, qvel, sizeof(double) * m->nv);
  }
  for (int j = 0; j < m->njnt; j++) {
    const double* q = qpos + m->jnt_qposadr[j];
    double* g = gq + m->jnt_dofadr[j];
    int type = m->jnt_type[j];
    if (type == PHYS_JNT_HINGE || type == PHYS_JNT_SLIDE) {
      double dq = q[0] - 0.1 * (j + 1);
      l += 0.5 * w * dq * dq;
      g[0] += w * dq;
      continue;
    }
    if (type == PHYS_JNT_FREE) {
      for (int i = 0; i < 3; i++) {
        l += 0.5 * w * (q[i] - rp[i]) * (q[i] - rp[i]);
        g[i] += w * (q[i] - rp[i]);
      }
      q += 3;
      g += 3;
    }
    double R[9], Re[3], Rta[3], cr[3];
    phys_quat2mat(R, q);
    phys_mat_vec3(Re, R, e);
    phys_matT_vec3(Rta, R, a);
    phys_cross3(cr, e, Rta);
    l += w * phys_dot3(a, Re);
    for (int i = 0; i < 3; i++) g[i] += w * cr[i];
  }
  for (int i = 0; i < m->nv; i++) {
    l += 0.5 * wv * qvel[i] * qvel[i] + 0.1 * (i + 1) * qvel[i];
    gv[i] += wv * qvel[i] + 0.1 * (i + 1);
  }
  return l;
}

// 6: a loss of the activations too (phys_rollout_grad_act): test_loss + sum_i w_t (0.5 (act_i - 0.1 (i + 1))^2 +
// 0.3 act_i), w_t = 1 + 0.02 t. g_act_loss = 1 makes rollout_loss and run_grad use it
static int g_act_loss;
static double test_loss_act(void* vctx, int t, const double* qpos, const double* qvel, const double* act,
                            double* gq, double* gv, double* ga) {
  lossCtx* c = vctx;
  double l = test_loss(vctx, t, qpos, qvel, gq, gv), w = 1 + 0.02 * t;
  for (int i = 0; i < c->m->na; i++) {
    double e = act[i] - 0.1 * (i + 1);
    l += w * (0.5 * e * e + 0.3 * act[i]);
    ga[i] += w * (e + 0.3);
  }
  return l;
}

// one test case: model, initial state, controls, parameter table
typedef struct rollCase_ {
  const char* name;
  physModel* m;
  physData* d;
  physParamTable tab;
  double *qpos0, *qvel0, *act0, time0, *u;   // act0: NULL without activations
  int T;
} rollCase;

static void check_vjp(struct rollCase_* c);   // 8, below

// d <- the case's initial state
static void reset_case(rollCase* c) {
  memcpy(c->d->qpos, c->qpos0, sizeof(double) * c->m->nq);
  memcpy(c->d->qvel, c->qvel0, sizeof(double) * c->m->nv);
  if (c->act0) memcpy(c->d->act, c->act0, sizeof(double) * c->m->na);
  c->d->time = c->time0;
  c->d->ncon = c->d->ncon_prev = 0;
}

// total loss of the plain rollout from the case's initial state
static double rollout_loss(rollCase* c) {
  lossCtx lc = {c->m, NULL, 0};
  reset_case(c);
  if (!g_act_loss) return phys_rollout(c->m, c->d, c->T, c->u, test_loss, &lc);
  const physModel* m = c->m;   // the plain loop with the act loss, summed as phys_rollout sums
  double L = 0, g[128];
  for (int t = 0; t <= c->T; t++) {
    memset(g, 0, sizeof g);
    L += test_loss_act(&lc, t, c->d->qpos, c->d->qvel, c->d->act, g, g + m->nv, g + 2 * m->nv);
    if (t == c->T) break;
    memcpy(c->d->ctrl, c->u + (size_t)t * m->nu, sizeof(double) * m->nu);
    phys_step(m, c->d);
  }
  return L;
}

// six-point central difference of the rollout loss along a perturbation applied by set(c, i, h) and undone
// by set(c, i, -h): (f(3h) - 9 f(2h) + 45 f(h) - 45 f(-h) + 9 f(-2h) - f(-3h)) / 60h
typedef void (*perturbFn)(rollCase* c, int i, double h);
static double fd6(rollCase* c, perturbFn set, int i) {
  static const double w[6] = {1, -9, 45, -45, 9, -1}, o[6] = {3, 2, 1, -1, -2, -3};
  double s = 0;
  for (int k = 0; k < 6; k++) {
    set(c, i, o[k] * H_FD);
    s += w[k] * rollout_loss(c);
    set(c, i, -o[k] * H_FD);   // undo
  }
  return s / (60 * H_FD);
}

// x_0 tangent coordinate i (q tangent for i < nv, qvel for i < 2nv, else act) moved by h; -h undoes it (integration of a
// single tangent coordinate is exactly invertible only to rounding: restore from a copy instead)
static double* g_xsave;
static void perturb_x(rollCase* c, int i, double h) {
  int nv = c->m->nv;
  if (g_xsave == NULL) {   // apply
    g_xsave = malloc(sizeof(double) * (c->m->nq + nv + 1));
    memcpy(g_xsave, c->qpos0, sizeof(double) * c->m->nq);
    memcpy(g_xsave + c->m->nq, c->qvel0, sizeof(double) * nv);
    if (i < nv) gm_perturb(c->m, c->qpos0, g_xsave, i, h);
    else if (i < 2 * nv) c->qvel0[i - nv] += h;
    else g_xsave[c->m->nq + nv] = c->act0[i - 2 * nv], c->act0[i - 2 * nv] += h;
  } else {                 // undo
    memcpy(c->qpos0, g_xsave, sizeof(double) * c->m->nq);
    memcpy(c->qvel0, g_xsave + c->m->nq, sizeof(double) * nv);
    if (i >= 2 * nv) c->act0[i - 2 * nv] = g_xsave[c->m->nq + nv];
    free(g_xsave);
    g_xsave = NULL;
  }
}

// control i of the flattened u (T x nu) moved by h
static double g_usave;
static int g_uset;
static void perturb_u(rollCase* c, int i, double h) {
  if (!g_uset) {
    g_usave = c->u[i];
    c->u[i] += h;
  } else {
    c->u[i] = g_usave;
  }
  g_uset = !g_uset;
  (void)h;
}

// theta_i moved by h through phys_param_set; undone by setting the saved theta
static double* g_theta0;
static int g_tset;
static void perturb_theta(rollCase* c, int i, double h) {
  int n = c->tab.ntheta;
  if (!g_tset) {
    double* th = malloc(sizeof(double) * n);
    memcpy(th, g_theta0, sizeof(double) * n);
    th[i] += h;
    CHECK(phys_param_set(&c->tab, c->m, th) == PHYS_OK);
    free(th);
  } else {
    CHECK(phys_param_set(&c->tab, c->m, g_theta0) == PHYS_OK);
  }
  g_tset = !g_tset;
}

// the gradient with interval k into fresh arrays; returns the status
typedef struct gradOut_ {
  double L, *xb, *ub, *tb, *work;
  size_t nwork;
  physStatus st;
} gradOut;

static gradOut run_grad_filled(rollCase* c, int k, physLog* log, int fill) {
  const physModel* m = c->m;
  gradOut o;
  int kk = k ? k : phys_rollout_interval(c->T, 0);
  o.nwork = phys_rollout_worksize(m, c->T, kk, c->tab.ntheta);
  o.work = malloc(sizeof(double) * (o.nwork + 16));
  memset(o.work, fill, sizeof(double) * (o.nwork + 16));   // sentinel bytes: written words change
  o.xb = calloc(2 * m->nv + m->na, sizeof(double));
  o.ub = calloc((size_t)c->T * m->nu + 1, sizeof(double));
  o.tb = calloc(c->tab.ntheta + 1, sizeof(double));
  lossCtx lc = {m, NULL, 0};
  reset_case(c);
  if (g_act_loss)
    o.st = phys_rollout_grad_act(m, c->d, &c->tab, c->T, k, c->u, test_loss_act, &lc, o.work, &o.L, o.xb, o.ub,
                                 o.tb, log);
  else
    o.st = phys_rollout_grad(m, c->d, &c->tab, c->T, k, c->u, test_loss, &lc, o.work, &o.L, o.xb, o.ub, o.tb,
                             log);
  return o;
}

// the workspace filled with 0xA5 bytes before the call
static gradOut run_grad(rollCase* c, int k, physLog* log) {
  return run_grad_filled(c, k, log, 0xA5);
}

static void free_grad(gradOut* o) {
  free(o->work);
  free(o->xb);
  free(o->ub);
  free(o->tb);
}

// 1: the gradient against central differences of the rollout
static void check_fd(rollCase* c) {
  const physModel* m = c->m;
  int nv = m->nv, nu = m->nu, T = c->T, nt = c->tab.ntheta, nx = 2 * nv + m->na;
  physLog log;
  memset(&log, 0, sizeof(log));
  gradOut o = run_grad(c, 0, &log);
  CHECK_MSG(o.st == PHYS_OK, "%s T=%d: status %d: %s", c->name, T, o.st, log.error);
  double L = rollout_loss(c);
  CHECK_MSG(memcmp(&L, &o.L, sizeof(L)) == 0, "%s T=%d: loss %.17g != rollout %.17g", c->name, T, o.L, L);

  double* ref = malloc(sizeof(double) * (nx + (size_t)T * nu + nt + 1));
  for (int i = 0; i < nx; i++) ref[i] = fd6(c, perturb_x, i);
  char what[128];
  snprintf(what, sizeof(what), "%s T=%d dL/dx0", c->name, T);
  double ex = gm_compare(what, o.xb, ref, 1, nx, fabs(L), GM_RTOL);
  double eu = 0, et = 0;
  if (nu > 0) {
    for (int i = 0; i < T * nu; i++) ref[i] = fd6(c, perturb_u, i);
    snprintf(what, sizeof(what), "%s T=%d dL/du", c->name, T);
    eu = gm_compare(what, o.ub, ref, T, nu, fabs(L), GM_RTOL);
  }
  if (nt > 0) {
    g_theta0 = malloc(sizeof(double) * nt);
    phys_param_get(&c->tab, m, g_theta0);
    for (int i = 0; i < nt; i++) ref[i] = fd6(c, perturb_theta, i);
    free(g_theta0);
    snprintf(what, sizeof(what), "%s T=%d dL/dtheta", c->name, T);
    et = gm_compare(what, o.tb, ref, 1, nt, fabs(L), GM_RTOL);
  }
  printf("%-16s T=%3d L=%-12.6g rel err x0 %.2e  u %.2e  theta %.2e  (nv %d, nu %d, ntheta %d)\n", c->name,
         T, L, ex, eu, et, nv, nu, nt);
  free(ref);
  free_grad(&o);
}

// 1 if word x is n sentinel bytes `fill`
static int is_fill(const double* x, int fill) {
  unsigned char pat[sizeof(double)];
  memset(pat, fill, sizeof(pat));
  return memcmp(x, pat, sizeof(pat)) == 0;
}

// 3 for interval k, o the gradient from a workspace of 0xA5 bytes: the predicted size; every word the rollout
// reads was written: the same gradient and the same words from a workspace of 0x5A bytes, where every word of
// the records' states, counts and ncon contacts and every word after the records is written (differs from
// the sentinel in both runs; the same value in both, but for the contacts' padding bytes); the room past a
// record's contacts (up to nconmax) need not be written; nothing past the workspace written
static void check_memory(rollCase* c, int k, const gradOut* o, int nrec) {
  const physModel* m = c->m;
  int T = c->T, nv = m->nv, na = m->na, ns = m->nq + nv + na + 1, nstate = phys_rollout_nstate(T, k);
  size_t pred = (size_t)nstate * nrec + 3 * (size_t)(2 * nv + na) + c->tab.ntheta;
  CHECK(o->nwork == pred);
  physLog log;
  memset(&log, 0, sizeof(log));
  gradOut b = run_grad_filled(c, k, &log, 0x5A);
  CHECK(b.st == PHYS_OK && b.nwork == o->nwork);
  int same = memcmp(&b.L, &o->L, sizeof(double)) == 0 &&
             memcmp(b.xb, o->xb, sizeof(double) * (2 * nv + na)) == 0 &&
             memcmp(b.ub, o->ub, sizeof(double) * (size_t)T * m->nu) == 0 &&
             memcmp(b.tb, o->tb, sizeof(double) * c->tab.ntheta) == 0;
  CHECK_MSG(same, "%s T=%d k=%d: the gradient depends on the workspace's initial bytes", c->name, T, k);
  int unwritten = 0, differ = 0, overrun = 0;
  for (size_t i = 0; i < o->nwork + 16; i++) {
    size_t s = i / (size_t)nrec, j = i % (size_t)nrec;
    if (i >= o->nwork) {
      overrun += !is_fill(o->work + i, 0xA5) || !is_fill(b.work + i, 0x5A);
      continue;
    }
    if (s < (size_t)nstate && j > (size_t)ns) {   // a record's contact room: its ncon contacts are used
      double ncon = o->work[s * nrec + ns];
      if (!(ncon >= 0 && ncon <= m->nconmax)) {
        unwritten++;
        continue;
      }
      if ((j - ns - 1) * sizeof(double) >= sizeof(physContact) * (size_t)ncon) continue;
      unwritten += is_fill(o->work + i, 0xA5) || is_fill(b.work + i, 0x5A);   // (a contact's padding bytes
      continue;                                                                // are not compared)
    }
    unwritten += is_fill(o->work + i, 0xA5);
    differ += memcmp(o->work + i, b.work + i, sizeof(double)) != 0;
  }
  CHECK_MSG(unwritten == 0 && differ == 0 && overrun == 0,
            "%s T=%d k=%d: %d used workspace words not written, %d differ between sentinels, %d written past it",
            c->name, T, k, unwritten, differ, overrun);
  free_grad(&b);
}

// 2, 3: bit-identical gradients for every interval, bit-identical recomputed states, exact memory
static void check_checkpoints(rollCase* c) {
  const physModel* m = c->m;
  // a record: qpos, qvel, act, time, ncon, the contact list in room for nconmax (rollout.h)
  int T = c->T, nq = m->nq, nv = m->nv, na = m->na;
  int nrec = nq + nv + na + 2 +
             (int)((sizeof(physContact) * (size_t)m->nconmax + sizeof(double) - 1) / sizeof(double));
  physLog log;
  memset(&log, 0, sizeof(log));

  // the plain loop's states
  double* states = malloc(sizeof(double) * (size_t)(T + 1) * (nq + nv));
  double* times = malloc(sizeof(double) * (size_t)(T + 1));
  lossCtx lc = {m, states, T + 1};
  reset_case(c);
  for (int t = 0; t < T; t++) {
    times[t] = c->d->time;
    memcpy(c->d->ctrl, c->u + (size_t)t * m->nu, sizeof(double) * m->nu);
    phys_step(m, c->d);
  }
  times[T] = c->d->time;
  reset_case(c);
  phys_rollout(m, c->d, T, c->u, test_loss, &lc);

  gradOut full = run_grad(c, 1, &log);
  CHECK(full.st == PHYS_OK);
  int kdef = phys_rollout_interval(T, 0), kbud = phys_rollout_interval(T, phys_rollout_nstate(T, kdef) + 1);
  int ks[4] = {kdef, kbud > 0 ? kbud : kdef, T, T > 2 ? 2 : 1};
  for (int n = 0; n < 4; n++) {
    int k = ks[n];
    gradOut o = run_grad(c, k, &log);
    CHECK(o.st == PHYS_OK);
    CHECK_MSG(memcmp(&o.L, &full.L, sizeof(double)) == 0, "%s T=%d k=%d: loss differs", c->name, T, k);
    CHECK_MSG(memcmp(o.xb, full.xb, sizeof(double) * (2 * nv + na)) == 0, "%s T=%d k=%d: dL/dx0 differs from the "
              "full tape", c->name, T, k);
    CHECK_MSG(memcmp(o.ub, full.ub, sizeof(double) * (size_t)T * m->nu) == 0, "%s T=%d k=%d: dL/du differs",
              c->name, T, k);
    CHECK_MSG(memcmp(o.tb, full.tb, sizeof(double) * c->tab.ntheta) == 0, "%s T=%d k=%d: dL/dtheta differs",
              c->name, T, k);

    // checkpoints x_0, x_k, ... and segment 0's recomputed x_0 .. x_{k-1}: bit for bit the plain states
    int nchk = (T + k - 1) / k;
    for (int s = 0; s < nchk + k && s < nchk + T; s++) {
      int t = s < nchk ? s * k : s - nchk;
      const double* r = o.work + (size_t)s * nrec;
      int same = memcmp(r, states + (size_t)t * (nq + nv), sizeof(double) * (nq + nv)) == 0 &&
                 memcmp(r + nq + nv + na, times + t, sizeof(double)) == 0;
      CHECK_MSG(same, "%s T=%d k=%d: record %d (state %d) differs from phys_step's", c->name, T, k, s, t);
    }

    check_memory(c, k, &o, nrec);
    free_grad(&o);
  }
  CHECK(phys_rollout_nstate(T, 1) == T + 1);
  free_grad(&full);
  free(states);
  free(times);
}

// build a case: model file, parameter specs, initial state from a seeded random state (slide overrides)
static void make_case(rollCase* c, const char* name, const char* file, const char* const* spec, int nspec,
                      int T, uint64_t seed, double vs) {
  memset(c, 0, sizeof(*c));
  c->name = name;
  c->m = gm_load(file, 0);
  // zero damping made positive: phys_step integrates implicitly only if some damping is positive, so the
  // rollout has a kink in a damping parameter at zero (as test_param_deriv.c)
  for (int k = 0; k < c->m->nv; k++)
    if (c->m->dof_damping[k] == 0) c->m->dof_damping[k] = 0.05;
  c->d = phys_make_data(c->m);
  physLog log;
  memset(&log, 0, sizeof(log));
  CHECK_MSG(phys_param_table_build(&c->tab, c->m, spec, nspec, &log) == PHYS_OK, "%s: %s", name, log.error);
  physRng r;
  phys_rng_seed(&r, seed);
  gm_random_state(c->m, c->d, &r, vs);
  for (int j = 0; j < c->m->njnt; j++)
    if (c->m->jnt_limited[j]) {   // the limited slide of mixed.xml: at its spring's rest, at rest
      c->d->qpos[c->m->jnt_qposadr[j]] = 0.05;
      c->d->qvel[c->m->jnt_dofadr[j]] = 0;
    }
  // mixed.xml: the free base moved so that the spring from "anchor" to "tipsite" starts 0.1 m long (its rest
  // length) instead of ~1.5 m, whose 56 N would drive the slide into its limit within 0.2 s
  int sa = phys_name2id(c->m, "site", "anchor"), st = phys_name2id(c->m, "site", "tipsite");
  if (sa >= 0 && st >= 0 && c->m->jnt_type[0] == PHYS_JNT_FREE) {
    phys_kinematics(c->m, c->d);
    for (int i = 0; i < 3; i++)
      c->d->qpos[i] += c->d->site_xpos[3 * sa + i] - c->d->site_xpos[3 * st + i] + (i == 2 ? -0.1 : 0);
  }
  c->qpos0 = malloc(sizeof(double) * c->m->nq);
  c->qvel0 = malloc(sizeof(double) * c->m->nv);
  memcpy(c->qpos0, c->d->qpos, sizeof(double) * c->m->nq);
  memcpy(c->qvel0, c->d->qvel, sizeof(double) * c->m->nv);
  c->time0 = 0;
  c->T = T;
  c->u = malloc(sizeof(double) * ((size_t)T * c->m->nu + 1));
  for (int t = 0; t < T; t++)
    for (int i = 0; i < c->m->nu; i++) c->u[t * c->m->nu + i] = 0.4 * sin(0.05 * t + 1.3 * i + 0.2);
}

static void free_case(rollCase* c) {
  phys_param_table_free(&c->tab);
  phys_free_data(c->d);
  phys_free_model(c->m);
  free(c->qpos0);
  free(c->qvel0);
  free(c->act0);
  free(c->u);
}

// 4: penalty contact through the rollout: a box sliding on the floor at 1 m/s along x and 0.3 m/s along y
// with a spin, its four corners pressed in by m g / (4 k) (they stay in contact, above v_slip, for the whole
// rollout, so the loss is smooth in every input; differences at h = 1e-5), friction and
// restitution (through the contact dampers), the penalty stiffness and the mass as parameters
static void check_penalty(void) {
  const char* box_spec[] = {"friction:box", "restitution:box", "penalty:stiffness", "mass:box"};
  rollCase c;
  memset(&c, 0, sizeof c);
  c.name = "box_penalty";
  c.m = gm_load("tests/data/contact/box_plane.xml", 0);
  c.m->opt.contact = PHYS_CONTACT_PENALTY;
  c.m->geom_restitution[phys_name2id(c.m, "geom", "box")] = 0.3;
  // the floor's friction below the box's: at a tie (both 0.5) the pair's max(a, b) has only one-sided
  // derivatives, the gradient gives the right one (collision.h) and central differences their mean, half
  c.m->geom_friction[3 * phys_name2id(c.m, "geom", "floor")] = 0.3;
  c.d = phys_make_data(c.m);
  physLog log;
  memset(&log, 0, sizeof(log));
  CHECK_MSG(phys_param_table_build(&c.tab, c.m, box_spec, 4, &log) == PHYS_OK, "box: %s", log.error);
  c.d->qpos[2] = 0.1 - 9.81 / (4 * c.m->opt.penalty_stiffness);   // each corner carries m g / 4
  c.d->qvel[0] = 1, c.d->qvel[1] = 0.3, c.d->qvel[5] = 0.5;
  c.T = 60;
  c.qpos0 = malloc(sizeof(double) * c.m->nq);
  c.qvel0 = malloc(sizeof(double) * c.m->nv);
  memcpy(c.qpos0, c.d->qpos, sizeof(double) * c.m->nq);
  memcpy(c.qvel0, c.d->qvel, sizeof(double) * c.m->nv);
  c.u = malloc(sizeof(double));
  phys_step(c.m, c.d);
  CHECK_MSG(c.d->ncon == 4, "box: %d contacts after one step", c.d->ncon);
  reset_case(&c);
  double h = H_FD;
  H_FD = 1e-5;   // the corners stay in contact within perturbations of this size (2.5e-4 m pressed in)
  check_fd(&c);
  H_FD = h;
  check_vjp(&c);
  check_checkpoints(&c);
  free_case(&c);
}

// 6: activations through the rollout (lcp): the cube on one corner sliding and spinning (in contact the whole
// rollout), pushed by its filtered thruster, and the arm's integrator and filtered servo, with controls that
// keep every activation inside its range and every control inside its ctrlrange
static void check_act(void) {
  const char* spec[] = {"timeconst:thrust", "timeconst:servo", "gain:thrust", "mass:box"};
  rollCase c;
  memset(&c, 0, sizeof c);
  c.name = "act_contact";
  c.m = gm_load("tests/data/actuator_contact.xml", 0);
  c.d = phys_make_data(c.m);
  physLog log;
  memset(&log, 0, sizeof(log));
  CHECK_MSG(phys_param_table_build(&c.tab, c.m, spec, 4, &log) == PHYS_OK, "act: %s", log.error);
  c.d->qpos[2] = 0.1 - 2e-4;
  c.d->qvel[0] = 1, c.d->qvel[1] = 0.3, c.d->qvel[5] = 0.5;
  c.d->qpos[7] = 0.3, c.d->qpos[8] = -0.4, c.d->qvel[6] = 0.5, c.d->qvel[7] = -1;
  c.T = 40;
  c.qpos0 = malloc(sizeof(double) * c.m->nq);
  c.qvel0 = malloc(sizeof(double) * c.m->nv);
  c.act0 = malloc(sizeof(double) * c.m->na);
  memcpy(c.qpos0, c.d->qpos, sizeof(double) * c.m->nq);
  memcpy(c.qvel0, c.d->qvel, sizeof(double) * c.m->nv);
  double act0[3] = {0.4, 0.1, -0.3};
  memcpy(c.act0, act0, sizeof act0);
  c.u = malloc(sizeof(double) * (size_t)c.T * c.m->nu);
  for (int t = 0; t < c.T; t++)
    for (int i = 0; i < c.m->nu; i++) c.u[t * c.m->nu + i] = 0.3 * sin(0.05 * t + 1.3 * i + 0.2) + (i == 1 ? 0.5 : 0);
  reset_case(&c);
  phys_step(c.m, c.d);
  CHECK_MSG(c.d->ncon > 0, "act: no contact after one step");
  reset_case(&c);
  double h = H_FD;
  H_FD = 1e-5;   // contact kept within perturbations of this size
  check_fd(&c);
  g_act_loss = 1;   // the loss reads act too: its act term against differences, every interval bit for bit
  check_fd(&c);
  check_checkpoints(&c);
  g_act_loss = 0;
  H_FD = h;
  check_vjp(&c);
  check_checkpoints(&c);
  free_case(&c);
}

// 7: a time constant recovered from simulated data through the rollout gradient (issue 15 item 2): the cube's
// thruster (tau 0.05 s) recorded over 200 lcp steps from act 0 under a step in its control (1 then 0.7), the
// model's tau set to 0.1, then Newton steps on dL/dtau = 0 with dL/dtau from phys_rollout_grad and the curvature
// from a difference of two such gradients: the loss is the squared error of the cube's x position and velocity
// against the recording
typedef struct tauCtx_ {
  const double* rec;   // (T + 1) x 2: x, vx
} tauCtx;

static double tau_loss(void* vctx, int t, const double* qpos, const double* qvel, double* gq, double* gv) {
  const tauCtx* c = vctx;
  double ex = qpos[0] - c->rec[2 * t], ev = qvel[0] - c->rec[2 * t + 1];
  gq[0] = 1e4 * ex, gv[0] = 1e2 * ev;
  return 0.5 * (1e4 * ex * ex + 1e2 * ev * ev);
}

static void check_act_identify(void) {
  physModel* m = gm_load("tests/data/actuator_contact.xml", 0);
  physData* d = phys_make_data(m);
  const char* spec[] = {"timeconst:thrust"};
  physParamTable tab;
  physLog log;
  memset(&log, 0, sizeof log);
  CHECK_MSG(phys_param_table_build(&tab, m, spec, 1, &log) == PHYS_OK, "%s", log.error);
  int T = 200, nu = m->nu;
  double* u = calloc((size_t)T * nu, sizeof(double));
  double* rec = malloc(sizeof(double) * 2 * (size_t)(T + 1));
  for (int t = 0; t < T; t++) u[(size_t)t * nu + 1] = t < 100 ? 1.0 : 0.7;   // the thruster's control
  size_t ns = phys_state_size(m);
  double* x0 = malloc(sizeof(double) * ns);
  d->qpos[2] = 0.1 - 2e-4;
  phys_state_save(m, d, x0);
  for (int t = 0; t <= T; t++) {   // the recording at the true tau (0.05)
    rec[2 * t] = d->qpos[0], rec[2 * t + 1] = d->qvel[0];
    if (t < T) memcpy(d->ctrl, u + (size_t)t * nu, sizeof(double) * nu), phys_step(m, d);
  }
  CHECK_MSG(rec[2 * T] > 0.02, "x_T %g", rec[2 * T]);   // the cube slid (3.85 cm)
  tauCtx c = {rec};
  int k = phys_rollout_interval(T, 0);
  double* work = malloc(sizeof(double) * phys_rollout_worksize(m, T, k, 1));
  double tau = 0.1, L = 0, g = 0, gh = 0, h = 1e-6;
  for (int it = 0; it < 8; it++) {   // Newton on dL/dtau = 0 (the curvature by a difference of the gradient)
    CHECK(phys_param_set(&tab, m, &tau) == PHYS_OK);
    phys_state_load(m, d, x0), d->ncon = 0;
    CHECK(phys_rollout_grad(m, d, &tab, T, k, u, tau_loss, &c, work, &L, NULL, NULL, &g, &log) == PHYS_OK);
    double th = tau + h;
    CHECK(phys_param_set(&tab, m, &th) == PHYS_OK);
    phys_state_load(m, d, x0), d->ncon = 0;
    CHECK(phys_rollout_grad(m, d, &tab, T, k, u, tau_loss, &c, work, NULL, NULL, NULL, &gh, &log) == PHYS_OK);
    double step = -g / ((gh - g) / h);
    tau = fmax(0.5 * tau, fmin(2 * tau, tau + step));
  }
  printf("act_identify: timeconst:thrust from 0.1 to %.12g (truth 0.05), loss %.3g\n", tau, L);
  CHECK_MSG(fabs(tau - 0.05) < 1e-6, "timeconst recovered as %.12g (truth 0.05)", tau);
  phys_param_table_free(&tab);
  free(u), free(rec), free(x0), free(work);
  phys_free_data(d);
  phys_free_model(m);
}

// bad arguments are refused
static void check_refusal(void) {
  physModel* m = gm_load("tests/data/box.xml", 0);
  lossCtx lc = {m, NULL, 0};
  double L;
  physLog log;
  memset(&log, 0, sizeof(log));
  CHECK(phys_rollout_grad(m, NULL, NULL, 0, 0, NULL, test_loss, &lc, NULL, &L, NULL, NULL, NULL, &log) ==
        PHYS_ERR_ARG);
  phys_free_model(m);
}

// loss of the rejection tests: l_t = 0.5 q_0^2 (ctx NULL) or a value and gradient entry that overflow (ctx: two
// doubles, l_t and dl_t/dq_0)
static double rejected_loss(void* ctx, int t, const double* qpos, const double* qvel, double* g_q, double* g_v) {
  (void)t, (void)qvel, (void)g_v;
  if (ctx) {
    g_q[0] = ((double*)ctx)[1];
    return ((double*)ctx)[0];
  }
  g_q[0] = qpos[0];
  return 0.5 * qpos[0] * qpos[0];
}

// phys_rollout_grad of 10 steps of the pendulum with the motor from angle 0.3 at u; returns its status, its
// message in err; checks that L is +inf when it fails, that d is back at x_0, that xbar0 is untouched and
// that no number it wrote is not finite
static physStatus rejected_case(double* u, double* ctx, char* err) {
  physModel* m = phys_load("models/pendulum_motor.xml", NULL, NULL);
  physData* d = phys_make_data(m);
  int T = 10, k = phys_rollout_interval(T, 0);
  d->qpos[0] = 0.3;
  double* work = malloc(sizeof(double) * phys_rollout_worksize(m, T, k, 0));
  double L = 0, xb[2] = {7, 7}, ub[10];
  physLog log;
  memset(&log, 0, sizeof(log));
  physStatus st = phys_rollout_grad(m, d, NULL, T, k, u, rejected_loss, ctx, work, &L, xb, ub, NULL, &log);
  CHECK(d->qpos[0] == 0.3 && d->qvel[0] == 0 && d->time == 0);
  for (int t = 0; t < T; t++) CHECK(isfinite(ub[t]));
  if (st != PHYS_OK) CHECK(L == INFINITY && xb[0] == 7 && xb[1] == 7);
  else CHECK(isfinite(L) && isfinite(xb[0]) && isfinite(xb[1]));
  strcpy(err, log.error);
  printf("  rejected rollout: status %d, '%s'\n", (int)st, log.error);
  free(work);
  phys_free_data(d);
  phys_free_model(m);
  return st;
}

// a rollout that goes non-finite is reported with the step and what failed (PHYS_ERR_NUMERIC, L = +inf): a
// NaN control at step 3, an infinite control at step 5, a control of 1e308 N m at step 5 (the state after it
// is finite, its loss term overflows), a loss term of +inf at
// every step, loss terms whose sum overflows, a gradient that overflows in the reverse pass; a finite one is
// PHYS_OK
static void check_rejected(void) {
  double u[10] = {0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5};
  char err[PHYS_MSGLEN];
  CHECK(rejected_case(u, NULL, err) == PHYS_OK);
  u[3] = NAN;
  CHECK(rejected_case(u, NULL, err) == PHYS_ERR_NUMERIC);
  CHECK_MSG(strstr(err, "phys_rollout_grad: step 3 rejected (phys_step: non-finite state"), "%s", err);
  u[3] = 0.5, u[5] = INFINITY;
  CHECK(rejected_case(u, NULL, err) == PHYS_ERR_NUMERIC);
  CHECK_MSG(strstr(err, "phys_rollout_grad: step 5 rejected (phys_step: non-finite state"), "%s", err);
  u[5] = 1e308;   // the angle after step 5 is finite (about 1e304 rad), its loss term is not
  CHECK(rejected_case(u, NULL, err) == PHYS_ERR_NUMERIC);
  CHECK_MSG(strstr(err, "phys_rollout_grad: the loss at step 6 is inf"), "%s", err);
  u[5] = 0.5;
  double inf_loss[2] = {INFINITY, 0}, big_loss[2] = {1e308, 0}, big_grad[2] = {0, 1e308};
  CHECK(rejected_case(u, inf_loss, err) == PHYS_ERR_NUMERIC);
  CHECK_MSG(strstr(err, "phys_rollout_grad: the loss at step 0 is inf"), "%s", err);
  CHECK(rejected_case(u, big_loss, err) == PHYS_ERR_NUMERIC);
  CHECK_MSG(strstr(err, "phys_rollout_grad: the summed loss overflows at step 1"), "%s", err);
  CHECK(rejected_case(u, big_grad, err) == PHYS_ERR_NUMERIC);
  CHECK_MSG(strstr(err, "phys_rollout_grad: step ") && strstr(err, "the gradient dL/dx[0] is not finite"), "%s", err);
}

// the interval for budgets
static void check_interval(void) {
  CHECK(phys_rollout_interval(100, 0) == 10);
  CHECK(phys_rollout_interval(101, 0) == 11);
  CHECK(phys_rollout_interval(1, 0) == 1);
  CHECK(phys_rollout_interval(7, 0) == 3);
  CHECK(phys_rollout_nstate(100, 10) == 20);
  CHECK(phys_rollout_interval(100, 25) == 5);    // ceil(100/5) + 5 = 25; k = 4 needs 29
  CHECK(phys_rollout_interval(100, 19) == -1);   // min over k of ceil(100/k) + k is 20
  CHECK(phys_rollout_interval(100, 200) == 1);   // the full tape fits
  // k = 0 means the default interval in the size as in phys_rollout_grad (the size gave no state records for k = 0
  // while the gradient wrote ceil(T/k) + k of them past the caller's buffer)
  physModel* m = gm_load("tests/data/box.xml", 0);
  CHECK(m && phys_rollout_worksize(m, 100, 0, 3) == phys_rollout_worksize(m, 100, 10, 3));
  phys_free_model(m);
}

// 8: phys_rollout_vjp (the states' cotangents, no callback) against phys_rollout_grad_act with the loss l_t =
// qbar_t . qpos_t + vbar_t . qvel_t + abar_t . act_t written here, its quaternion gradient by quaternion products
// (d qpos / d dq_k = q (0, e_k) / 2): the same numbers to rounding (1e-13 relative); a cotangent dropped at one
// state (qbar_3 = 0) changes dL/dx0 (the test sees each state's term)
typedef struct cotCtx_ {
  const physModel* m;
  const double *qb, *vb, *ab;
} cotCtx;

static double cot_loss(void* vctx, int t, const double* qpos, const double* qvel, const double* act, double* gq,
                       double* gv, double* ga) {
  const cotCtx* c = vctx;
  const physModel* m = c->m;
  const double *qb = c->qb + (size_t)t * m->nq, *vb = c->vb + (size_t)t * m->nv, *ab = c->ab + (size_t)t * m->na;
  double l = 0;
  for (int i = 0; i < m->nq; i++) l += qb[i] * qpos[i];
  for (int i = 0; i < m->nv; i++) l += vb[i] * qvel[i], gv[i] = vb[i];
  for (int i = 0; i < m->na; i++) l += ab[i] * act[i], ga[i] = ab[i];
  for (int j = 0; j < m->njnt; j++) {
    int qa = m->jnt_qposadr[j], da = m->jnt_dofadr[j], type = m->jnt_type[j], nlin = type == PHYS_JNT_FREE ? 3 : 0;
    if (type == PHYS_JNT_HINGE || type == PHYS_JNT_SLIDE) nlin = 1;
    for (int i = 0; i < nlin; i++) gq[da + i] = qb[qa + i];
    if (type == PHYS_JNT_HINGE || type == PHYS_JNT_SLIDE) continue;
    for (int k = 0; k < 3; k++) {
      double e[4] = {0, k == 0, k == 1, k == 2}, dq[4];
      phys_quat_mul(dq, qpos + qa + nlin, e);
      gq[da + nlin + k] = 0.5 * (qb[qa + nlin] * dq[0] + qb[qa + nlin + 1] * dq[1] + qb[qa + nlin + 2] * dq[2] +
                                 qb[qa + nlin + 3] * dq[3]);
    }
  }
  return l;
}

static void check_vjp(rollCase* c) {
  const physModel* m = c->m;
  int T = c->T, nx = 2 * m->nv + m->na, nt = c->tab.ntheta;
  physRng r;
  phys_rng_seed(&r, 88);
  size_t nq = (size_t)(T + 1) * m->nq, nv = (size_t)(T + 1) * m->nv, na = (size_t)(T + 1) * m->na;
  double* cot = malloc(sizeof(double) * (nq + nv + na + 1));
  gm_rand_vec(&r, cot, (int)(nq + nv + na));
  cotCtx cc = {m, cot, cot + nq, cot + nq + nv};
  size_t nw = phys_rollout_worksize(m, T, 0, nt);
  double* work = malloc(sizeof(double) * nw);
  double *xa = calloc(nx, sizeof(double)), *xb = calloc(nx, sizeof(double)), *xc = calloc(nx, sizeof(double));
  double *ua = calloc((size_t)T * m->nu + 1, sizeof(double)), *ub = calloc((size_t)T * m->nu + 1, sizeof(double));
  double ta[32], tb[32], L;
  physLog log;
  memset(&log, 0, sizeof log);
  reset_case(c);
  CHECK_MSG(phys_rollout_vjp(m, c->d, &c->tab, T, 0, c->u, cc.qb, cc.vb, m->na ? cc.ab : NULL, work, xa, ua, ta,
                             &log) == PHYS_OK, "%s: %s", c->name, log.error);
  reset_case(c);
  CHECK(phys_rollout_grad_act(m, c->d, &c->tab, T, 0, c->u, cot_loss, &cc, work, &L, xb, ub, tb, &log) == PHYS_OK);
  char what[96];
  snprintf(what, sizeof what, "%s T=%d rollout_vjp dL/dx0", c->name, T);
  gm_compare(what, xa, xb, 1, nx, 1, 1e-13);
  snprintf(what, sizeof what, "%s T=%d rollout_vjp dL/du", c->name, T);
  if (m->nu) gm_compare(what, ua, ub, T, m->nu, 1, 1e-13);
  snprintf(what, sizeof what, "%s T=%d rollout_vjp dL/dtheta", c->name, T);
  gm_compare(what, ta, tb, 1, nt, 1, 1e-13);
  if (T > 3) {   // state 3's position cotangent dropped: dL/dx0 moves
    memset(cot + 3 * (size_t)m->nq, 0, sizeof(double) * m->nq);
    reset_case(c);
    CHECK(phys_rollout_vjp(m, c->d, &c->tab, T, 0, c->u, cc.qb, cc.vb, cc.ab, work, xc, NULL, NULL, &log) == PHYS_OK);
    double diff = 0;
    for (int i = 0; i < nx; i++) diff = fmax(diff, fabs(xc[i] - xa[i]));
    CHECK_MSG(diff > 1e-6, "%s: dropping qbar_3 changed dL/dx0 by %.3g only", c->name, diff);
  }
  free(cot), free(work), free(xa), free(xb), free(xc), free(ua), free(ub);
}

int main(void) {
  const char* hs = getenv("ROLLOUT_H");
  if (hs) H_FD = atof(hs);
  check_interval();
  check_refusal();
  check_rejected();
  check_penalty();
  check_act();
  check_act_identify();
  const char* pen[] = {"mass:bob", "com:bob", "damping:swing", "gravity"};
  const char* mix[] = {"inertia:arm", "stiffness:ball", "damping:slide", "stiffness:spring", "damping:spring",
                       "restlength:spring", "gear:m_hinge", "mass:base", "gravity"};
  const char* dbl[] = {"inertia:link2", "mass:link1", "com:link1", "gravity"};
  int Ts[3] = {1, 7, 100};
  for (int n = 0; n < 3; n++) {
    rollCase c[3];
    make_case(&c[0], "pendulum", "tests/data/pendulum.xml", pen, 4, Ts[n], 11, 1);
    make_case(&c[1], "mixed", "tests/data/mixed.xml", mix, 9, Ts[n], 12, 0.3);
    make_case(&c[2], "double_pendulum", "tests/data/double_pendulum.xml", dbl, 4, Ts[n], 13, 1);
    for (int i = 0; i < 3; i++) {
      check_vjp(&c[i]);
      check_fd(&c[i]);
      check_checkpoints(&c[i]);
      free_case(&c[i]);
    }
  }
  return test_done();
}
