// test_tendon_deriv.c - the sliding tangent points of wrapped spatial tendons (src/grad/tendon_deriv.c) and the
// spring geometry built on them (phys_spring_hessian, src/grad/passive_deriv.c), against four-point central
// differences (grad_models.h, h = 1e-3 unless said) at seeded random states:
//  1. phys_tendon_slide: S = dt/dq - J_B(t), the tangent points' velocity relative to their geom's body, against
//     differences of the tangent points phys_tendon_path finds;
//  2. phys_spring_hessian: JL against differences of L, K = d(JL')/dq against differences of JL, and K symmetric
//     (it is L's Hessian), for every spatial tendon of tests/data/tendons_wrap.xml (spheres and cylinders with and
//     without side sites, a helix, a pulley) and MuJoCo's arm26.xml (six tendons over two cylinders); the same
//     with the sliding terms left out misses by the order of K itself on tendons_wrap (printed: what the test
//     catches) and by nothing on arm26, whose paths stay in the planes of its hinges;
//  3. the kink (tests/data/tendon_kink.xml): where the path starts touching the sphere L and JL are continuous
//     (the tangent points meet the straight line there) and K jumps: on each side (1e-3 rad from the switch) JL and
//     K agree with central differences (h = 1e-6, inside that side), JL's two sides agree to O(distance), K's
//     differ; at the switch L's two sides agree to the arc's rounding (4e-9 m).
#include "grad_models.h"
#include "model.h"
#include "tendon_deriv.h"

#define ARM26 "/usr/share/mujoco/model/tendon_arm/arm26.xml"

static void kin(const physModel* m, physData* d) {
  phys_kinematics(m, d);
  phys_com_pos(m, d);
}

// 1. S of every tangent point of spring s against differences of the points (same path structure assumed:
// a point that changes branch within 2h skips the state); returns the worst relative error
static double check_slide(const physModel* m, physData* d, int s) {
  int nv = m->nv;
  physTendonPath p, pp;
  kin(m, d);
  phys_tendon_path(m, s, d->site_xpos, d->geom_xpos, d->geom_xmat, &p);
  double *q0 = malloc(sizeof(double) * m->nq), *S = malloc(sizeof(double) * 3 * nv), *JB = malloc(sizeof(double) * 3 * nv);
  double *F = malloc(sizeof(double) * 3 * nv), worst = 0;
  memcpy(q0, d->qpos, sizeof(double) * m->nq);
  const double step[4] = {2 * GM_H4, GM_H4, -GM_H4, -2 * GM_H4}, wt[4] = {-1, 8, -8, 1};
  for (int k = 0; k < p.npoint; k++) {
    if (p.wrap[k] < 0) continue;
    CHECK(phys_tendon_slide(m, d, s, &p, k, S));
    phys_jac(m, d, p.x[k], p.body[k], JB, NULL);
    memset(F, 0, sizeof(double) * 3 * nv);
    int same = 1;
    for (int j = 0; j < nv && same; j++)
      for (int h = 0; h < 4; h++) {
        gm_perturb(m, d->qpos, q0, j, step[h]);
        kin(m, d);
        phys_tendon_path(m, s, d->site_xpos, d->geom_xpos, d->geom_xmat, &pp);
        same &= pp.npoint == p.npoint && pp.wrap[k] == p.wrap[k];
        for (int i = 0; i < 3; i++) F[i * nv + j] += wt[h] * pp.x[k][i] / (12 * GM_H4);
      }
    memcpy(d->qpos, q0, sizeof(double) * m->nq);
    kin(m, d);
    if (!same) continue;
    for (int i = 0; i < 3 * nv; i++) F[i] -= JB[i];
    worst = fmax(worst, gm_compare("slide", S, F, 3, nv, 1, GM_RTOL));
  }
  free(q0), free(S), free(JB), free(F);
  return worst;
}

// 2. JL and K of spring s against differences of L and JL; K symmetric. *nosl: the error K would have without
// the sliding terms (K minus them against the differences). Returns the worst relative error of K
static double check_hessian(const physModel* m, physData* d, int s, double* nosl) {
  int nv = m->nv;
  double *q0 = malloc(sizeof(double) * m->nq), *JL = malloc(sizeof(double) * nv), *K = malloc(sizeof(double) * nv * nv);
  double *Kf = calloc((size_t)nv * nv, sizeof(double)), *Lf = calloc(nv, sizeof(double)), *J = malloc(sizeof(double) * nv);
  double *K0 = malloc(sizeof(double) * nv * nv);
  const double step[4] = {2 * GM_H4, GM_H4, -GM_H4, -2 * GM_H4}, wt[4] = {-1, 8, -8, 1};
  memcpy(q0, d->qpos, sizeof(double) * m->nq);
  kin(m, d);
  phys_spring_hessian(m, d, s, JL, K);
  for (int j = 0; j < nv; j++)
    for (int h = 0; h < 4; h++) {
      gm_perturb(m, d->qpos, q0, j, step[h]);
      kin(m, d);
      double L = phys_spring_hessian(m, d, s, J, K0);
      Lf[j] += wt[h] * L / (12 * GM_H4);
      for (int i = 0; i < nv; i++) Kf[i * nv + j] += wt[h] * J[i] / (12 * GM_H4);
    }
  memcpy(d->qpos, q0, sizeof(double) * m->nq);
  kin(m, d);
  double asym = 0, kmax = gm_maxabs(K, nv * nv);
  for (int i = 0; i < nv; i++)
    for (int j = 0; j < nv; j++) asym = fmax(asym, fabs(K[i * nv + j] - K[j * nv + i]));
  CHECK_MSG(asym <= 1e-12 * fmax(1, kmax), "spring %d: K not symmetric by %.2e", s, asym);
  gm_compare("JL", JL, Lf, 1, nv, 1, GM_RTOL);
  double worst = gm_compare("K", K, Kf, nv, nv, 1, GM_RTOL);
  // K without the sliding terms: subtract them (phys_tendon_slide_add on a zero matrix, segment by segment)
  physTendonPath p;
  phys_tendon_path(m, s, d->site_xpos, d->geom_xpos, d->geom_xmat, &p);
  memset(K0, 0, sizeof(double) * nv * nv);
  double *Ja = malloc(sizeof(double) * 3 * nv), *Jb = malloc(sizeof(double) * 3 * nv);
  for (int k = 0; k + 1 < p.npoint; k++) {
    double u[3] = {p.x[k + 1][0] - p.x[k][0], p.x[k + 1][1] - p.x[k][1], p.x[k + 1][2] - p.x[k][2]}, l;
    if (p.w[k] == 0 || (l = sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2])) == 0) continue;
    for (int i = 0; i < 3; i++) u[i] /= l;
    phys_jac(m, d, p.x[k], p.body[k], Ja, NULL);
    phys_jac(m, d, p.x[k + 1], p.body[k + 1], Jb, NULL);
    for (int j = 0; j < nv; j++) {   // P J_d into Jb
      double c[3] = {Jb[j] - Ja[j], Jb[nv + j] - Ja[nv + j], Jb[2 * nv + j] - Ja[2 * nv + j]};
      double uc = u[0] * c[0] + u[1] * c[1] + u[2] * c[2];
      for (int r = 0; r < 3; r++) Jb[r * nv + j] = (c[r] - u[r] * uc) / l;
    }
    phys_tendon_slide_add(m, d, s, &p, k, u, p.w[k], Jb, K0, NULL, NULL, NULL, NULL);
  }
  double miss = 0;
  for (int i = 0; i < nv * nv; i++) miss = fmax(miss, fabs(K[i] - K0[i] - Kf[i]));
  *nosl = fmax(*nosl, miss / fmax(1, gm_maxabs(Kf, nv * nv)));
  free(q0), free(JL), free(K), free(Kf), free(Lf), free(J), free(K0), free(Ja), free(Jb);
  return worst;
}

// 1 and 2 at nstate random states of every wrapping tendon of the model at path
static void check_model(const char* name, const char* path, int nstate, uint64_t seed, int slides) {
  physModel* m = gm_load(path, 0);
  physData* d = phys_make_data(m);
  physRng r;
  phys_rng_seed(&r, seed);
  double ws = 0, wk = 0, nosl = 0;
  int nwrap = 0;
  for (int st = 0; st < nstate; st++) {
    gm_random_state(m, d, &r, 1);
    for (int s = 0; s < m->nspring; s++) {
      if (m->spring_type[s] != PHYS_SPRING_PATH) continue;
      physTendonPath p;
      kin(m, d);
      phys_tendon_path(m, s, d->site_xpos, d->geom_xpos, d->geom_xmat, &p);
      nwrap += p.arcs > 0;
      ws = fmax(ws, check_slide(m, d, s));
      wk = fmax(wk, check_hessian(m, d, s, &nosl));
    }
  }
  printf("%-13s %d states x %d tendons (%d wrapped): slide %.1e, K %.1e; K without the sliding terms off by %.1e\n",
         name, nstate, m->nspring, nwrap, ws, wk, nosl);
  CHECK(nwrap > 0 && (slides ? nosl > 1e-3 : nosl < 1e-12));   // the states wrap; the sliding terms matter there
  phys_free_data(d);
  phys_free_model(m);
}

// L, JL, K of the kink model's tendon at hinge angle th
static double at_angle(const physModel* m, physData* d, double th, double* JL, double* K, int* wrapped) {
  d->qpos[0] = th;
  kin(m, d);
  physTendonPath p;
  phys_tendon_path(m, 0, d->site_xpos, d->geom_xpos, d->geom_xmat, &p);
  *wrapped = p.npoint > 2;
  return phys_spring_hessian(m, d, 0, JL, K);
}

// 3. the switch between the straight and the wrapped path
static void check_kink(void) {
  physModel* m = gm_load("tests/data/tendon_kink.xml", 0);
  physData* d = phys_make_data(m);
  double JL, K, lo = 0, hi = 1.5;
  int w;
  at_angle(m, d, lo, &JL, &K, &w);
  CHECK(!w);
  at_angle(m, d, hi, &JL, &K, &w);
  CHECK(w);
  for (int it = 0; it < 80; it++) {   // bisection to the switch angle
    double mid = 0.5 * (lo + hi);
    at_angle(m, d, mid, &JL, &K, &w);
    if (w) hi = mid;
    else lo = mid;
  }
  // (off 1e-3 from the switch: nearer, the arc's acos near 1 turns the cosine's rounding eps into sqrt(2 eps) r
  // of length, 1.5e-9 m at the switch itself, which a difference quotient divides by h)
  const double h = 1e-6, off = 1e-3;
  double Js[2], Ks[2], Lsw[2];
  for (int side = 0; side < 2; side++) {
    double th = side ? hi + off : lo - off, Jp, Jm, Kp, Km, Lp, Lm;
    at_angle(m, d, th, Js + side, Ks + side, &w);
    CHECK(w == side);
    Lp = at_angle(m, d, th + h, &Jp, &Kp, &w);
    Lm = at_angle(m, d, th - h, &Jm, &Km, &w);
    CHECK_REL(Js[side], (Lp - Lm) / (2 * h), 1e-7, 1e-9);
    CHECK_REL(Ks[side], (Jp - Jm) / (2 * h), 1e-6, 1e-9);
    Lsw[side] = at_angle(m, d, side ? hi : lo, &Jp, &Kp, &w);
  }
  // continuity of L and JL across the switch (over 2 off), K's jump
  CHECK_NEAR(Lsw[0], Lsw[1], 4e-9);   // (the acos's sqrt(2 eps) r above)
  CHECK(fabs(Js[1] - Js[0]) <= 4 * off * fmax(fabs(Ks[0]), fabs(Ks[1])));
  CHECK(fabs(Ks[1] - Ks[0]) > 0.1 * fmax(fabs(Ks[0]), fabs(Ks[1])));
  printf("kink at hinge %.6f rad: L %.6f m, JL %.6f / %.6f m, K straight %.5f, wrapped %.5f m\n", hi, Lsw[1], Js[0],
         Js[1], Ks[0], Ks[1]);
  phys_free_data(d);
  phys_free_model(m);
}

int main(void) {
  check_model("tendons_wrap", "tests/data/tendons_wrap.xml", 4, 3, 1);
  // arm26's paths lie in the planes of its hinges: the tangent points slide along the path (S parallel to u),
  // where the sliding terms vanish (P u = 0, (u x w) . u = 0)
  check_model("arm26", ARM26, 4, 5, 0);
  check_kink();
  return test_done();
}
