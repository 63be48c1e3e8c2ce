// test_contact_deriv.c - derivatives of the constraint geometry (src/grad/contact_deriv.c): the rows J(q) and
// distances dist(q) of contacts and joint limits, against central differences of the assembled problem.
//
// Reference. q(t) = q (+) t dq (phys_integrate_pos), then kinematics, com_pos, collision and
// phys_constraint_assemble again; contacts are matched to the base ones by geom pair and nearest position (the
// list order of equally deep points may change), limit rows by their dof. Four-point central differences
// (-f(2h) + 8 f(h) - 8 f(-h) + f(-2h)) / 12h with h = 1e-4 (FD_H): truncation h^4 |f^(5)| / 30 ~ 3e-18 (sizes
// and lever arms ~ 1 m), rounding ~ 1.5 eps |f| / h times the conditioning of the pair function. The measured
// worst errors fall as 1/h, i.e. they are the reference's rounding: 6.8e-7, 3.5e-7, 1.4e-7, 1.5e-7, 5.0e-8 at
// h = 1e-5, 2e-5, 3e-5, 5e-5, 1e-4 (the two-point stencil at h = 1e-6: 6.6e-7). Compared (gm_compare)
// relative to max(|entry|, GM_FLOOR * scale), scale = max(the block's largest entry, the function's own scale
// |f|): a difference quotient's rounding is a fraction of |f|, not of each entry, and exact zeros (a translation
// of a whole body leaves J unchanged) come out as ~1e-12 |f|. Tolerance 1e-6 (GM_RTOL): a missing term (frame
// rotation, cdof turning, point motion) is of the order of the entries.
// Scenes keep every contact strictly inside its feature (penetration >= 1e-3 m, away from capsule end
// switches and from phys_contact_frame's axis switch |n_x| = 0.8), so f is smooth on [q - 2h, q + 2h].
// Directions: every tangent coordinate and 3 random ones; random alpha, beta, gamma per scene.
// Also: the dot-product test <alpha, dJ[dq] beta> + <gamma, ddist[dq]> = <q_bar, dq> (1e-12 relative to the
// sum of |terms|), <dJt_alpha, beta> = <alpha, dJ_beta>, size gradients against central differences in
// geom_size, bit-identical repeats, refused problems and pairs.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collision.h"
#include "contact.h"
#include "contact_deriv.h"
#include "factor.h"
#include "grad/grad_models.h"
#include "primitive_deriv.h"
#include "spec.h"
#include "urdf.h"

//---------------------------------------------------------------------------------------------------------
// models

// write xml to a temporary file and load it
static physModel* load_xml_opt(const char* xml, const physLoadOptions* opt);
static physModel* load_xml(const char* xml) { return load_xml_opt(xml, NULL); }

// load_xml with load options
static physModel* load_xml_opt(const char* xml, const physLoadOptions* opt) {
  char path[] = "/tmp/test_contact_deriv_XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  if (fd < 0) exit(2);
  FILE* f = fdopen(fd, "w");
  fputs(xml, f);
  fclose(f);
  char file[64];
  snprintf(file, sizeof file, "%s.xml", path);
  rename(path, file);
  physLog log = {0};
  physModel* m = phys_load(file, opt, &log);
  unlink(file);
  if (!m) {
    fprintf(stderr, "cannot load %s: %s\n", file, log.error);
    exit(2);
  }
  return m;
}

// the elbow of the toss data (URDF, floating base: free joint + hinge about y) with a floor plane added
static physModel* load_elbow(void) {
  physLog log;
  memset(&log, 0, sizeof log);
  physLoadOptions opt = {.urdf_floating = 1};
  physSpec* s = phys_parse_urdf("tests/data/elbow/elbow.urdf", &opt, &log);
  if (!s) {
    fprintf(stderr, "cannot parse the elbow: %s\n", log.error);
    exit(2);
  }
  int g = phys_spec_add_geom(s, 0, PHYS_GEOM_PLANE);
  snprintf(s->geom[g].name, sizeof s->geom[g].name, "floor");
  s->geom[g].size[0] = s->geom[g].size[1] = 5, s->geom[g].size[2] = 0.1;
  physModel* m = phys_compile(s, &log);
  phys_spec_free(s);
  if (!m) {
    fprintf(stderr, "cannot compile the elbow: %s\n", log.error);
    exit(2);
  }
  return m;
}

// move plane geom `floor` (on the world body) along its normal so that the deepest contact with it has
// dist = -depth at the current qpos (contacts found with a temporarily large margin)
static void sink_floor(physModel* m, physData* d, int floor, double depth) {
  double* keep = malloc(sizeof(double) * (size_t)m->ngeom);
  for (int g = 0; g < m->ngeom; g++) keep[g] = m->geom_margin[g], m->geom_margin[g] = 1;
  phys_kinematics(m, d);
  phys_collision(m, d);
  double lo = INFINITY;
  for (int i = 0; i < d->ncon; i++)
    if (d->contact[i].geom[0] == floor || d->contact[i].geom[1] == floor) lo = fmin(lo, d->contact[i].dist);
  for (int g = 0; g < m->ngeom; g++) m->geom_margin[g] = keep[g];
  free(keep);
  CHECK_MSG(isfinite(lo), "sink_floor: nothing near the floor");
  if (!isfinite(lo)) return;
  const double* R = d->geom_xmat + 9 * floor;
  for (int k = 0; k < 3; k++) m->geom_pos[3 * floor + k] += (lo + depth) * R[3 * k + 2];
}

//---------------------------------------------------------------------------------------------------------
// the problem at a configuration

// kinematics, collision, M~ factor and the assembled problem at d->qpos (arrays in d's arena)
static void setup(const physModel* m, physData* d, physConstraintProblem* p) {
  double *J, *G, *g, *mu;
  phys_kinematics(m, d);
  phys_com_pos(m, d);
  phys_com_vel(m, d);
  phys_collision(m, d);
  phys_crb(m, d);
  phys_factor_m(m, d->qLD, d->qM, NULL);
  phys_constraint_assemble(m, d, d->contact, d->ncon, d->qvel, NULL, p, &J, &G, &g, &mu);
}

// a copy of the problem's rows and distances and of the contacts' identities
typedef struct {
  int nc, nl, n;
  double* J;     // n x nv
  double* dist;  // n (tangent rows 0)
  double* pos;   // 3 nc
  int* geom;     // 2 nc
  double* ang;   // 3 nc x nv: the contacts' angular rows (phys_contact_angular_jac; issue 16)
} snap_t;

// distance of limit row `row` (J = +-e_dof): q - lo (+1) or hi - q (-1)
static double limit_dist(const physModel* m, const physData* d, const double* Jrow) {
  for (int j = 0; j < m->nv; j++) {
    if (Jrow[j] == 0) continue;
    int jn = m->dof_jntid[j];
    double q = d->qpos[m->jnt_qposadr[jn]];
    return Jrow[j] > 0 ? q - m->jnt_range[2 * jn] : m->jnt_range[2 * jn + 1] - q;
  }
  return NAN;
}

// snapshot of the problem at configuration q (d->qpos is restored)
static snap_t snapshot(const physModel* m, physData* d, const double* q) {
  int nv = m->nv;
  double* q0 = malloc(sizeof(double) * (size_t)m->nq);
  memcpy(q0, d->qpos, sizeof(double) * (size_t)m->nq);
  memcpy(d->qpos, q, sizeof(double) * (size_t)m->nq);
  size_t mark = phys_stack_mark(d);
  physConstraintProblem p;
  setup(m, d, &p);
  snap_t s = {p.nc, p.nl, p.n, NULL, NULL, NULL, NULL, NULL};
  s.ang = malloc(sizeof(double) * (3 * (size_t)p.nc * nv + 1));
  for (int i = 0; i < p.nc; i++) phys_contact_angular_jac(m, d, d->contact + i, s.ang + (size_t)(3 * i) * nv);
  s.J = malloc(sizeof(double) * ((size_t)p.n * nv + 1));
  s.dist = calloc((size_t)p.n + 1, sizeof(double));
  s.pos = malloc(sizeof(double) * (3 * (size_t)p.nc + 1));
  s.geom = malloc(sizeof(int) * (2 * (size_t)p.nc + 1));
  memcpy(s.J, p.J, sizeof(double) * (size_t)p.n * nv);
  for (int i = 0; i < p.nc; i++) {
    s.dist[3 * i] = d->contact[i].dist;
    memcpy(s.pos + 3 * i, d->contact[i].pos, sizeof(double) * 3);
    s.geom[2 * i] = d->contact[i].geom[0], s.geom[2 * i + 1] = d->contact[i].geom[1];
  }
  for (int l = 0; l < p.nl; l++) s.dist[3 * p.nc + l] = limit_dist(m, d, p.J + (size_t)(3 * p.nc + l) * nv);
  phys_stack_free(d, mark);
  memcpy(d->qpos, q0, sizeof(double) * (size_t)m->nq);
  free(q0);
  return s;
}

static void snap_free(snap_t* s) {
  free(s->J), free(s->dist), free(s->pos), free(s->geom), free(s->ang);
}

// row map from base rows to s's rows: contacts by geom pair and nearest position, limit rows by their column;
// returns 0 if the structure differs (then FD cannot be taken)
static int match_rows(const snap_t* base, const snap_t* s, int nv, int* map) {
  if (base->nc != s->nc || base->nl != s->nl) return 0;
  for (int i = 0; i < base->nc; i++) {
    int best = -1;
    double db = INFINITY;
    for (int a = 0; a < s->nc; a++) {
      if (s->geom[2 * a] != base->geom[2 * i] || s->geom[2 * a + 1] != base->geom[2 * i + 1]) continue;
      double e = 0;
      for (int k = 0; k < 3; k++) {
        double dk = s->pos[3 * a + k] - base->pos[3 * i + k];
        e += dk * dk;
      }
      if (e < db) db = e, best = a;
    }
    if (best < 0 || db > 1e-6) return 0;   // moved by more than 1 mm: another point
    for (int r = 0; r < 3; r++) map[3 * i + r] = 3 * best + r;
  }
  for (int l = 0; l < base->nl; l++) {
    int row = 3 * base->nc + l;
    if (memcmp(base->J + (size_t)row * nv, s->J + (size_t)row * nv, sizeof(double) * (size_t)nv)) return 0;
    map[row] = row;
  }
  return 1;
}

static double urand(physRng* r) { return phys_rng_range(r, -1, 1); }

#define FD_H 1e-4   // step of the four-point central differences (see the top of the file)

//---------------------------------------------------------------------------------------------------------
// the checks of one scene

// the four-point stencil: offsets +2h, +h, -h, -2h and weights (-1, 8, -8, 1) / 12h
static const double FD_OFF[4] = {2, 1, -1, -2}, FD_W[4] = {-1, 8, -8, 1};

// four-point central differences along tangent direction v: Jb (n) of J beta, Ja (nv) of J' alpha, dd (n) of
// dist; fs[0..2] = max with the scales of J beta, J' alpha, dist; 0 if the contact set changes
static int fd_direction(const physModel* m, physData* d, const snap_t* base, const double* v, const double* alpha,
                        const double* beta, double* Jb, double* Ja, double* dd, double fs[3]) {
  int nv = m->nv, n = base->n, ok = 1;
  double* q = malloc(sizeof(double) * (size_t)m->nq);
  int* map = malloc(sizeof(int) * (size_t)(n + 1));
  for (int s = 0; s < 4 && ok; s++) {
    memcpy(q, d->qpos, sizeof(double) * (size_t)m->nq);
    phys_integrate_pos(m, q, v, FD_OFF[s] * FD_H);
    snap_t sp = snapshot(m, d, q);
    ok = match_rows(base, &sp, nv, map);
    double w = FD_W[s] / (12 * FD_H);
    for (int i = 0; i < n && ok; i++) {
      const double* J = sp.J + (size_t)map[i] * nv;
      double jb = 0;
      for (int j = 0; j < nv; j++) jb += J[j] * beta[j], Ja[j] += w * alpha[i] * J[j];
      Jb[i] += w * jb;
      dd[i] += w * sp.dist[map[i]];
      fs[0] = fmax(fs[0], fabs(jb));
      fs[2] = fmax(fs[2], fabs(sp.dist[map[i]]));
    }
    for (int j = 0; j < nv && ok; j++) {
      double a = 0;
      for (int i = 0; i < n; i++) a += alpha[i] * sp.J[(size_t)map[i] * nv + j];
      fs[1] = fmax(fs[1], fabs(a));
    }
    snap_free(&sp);
  }
  free(q), free(map);
  return ok;
}

// dJ beta, dJ' alpha and ddist along the tangent directions against central differences; the dot-product
// test; returns the worst relative error of the three blocks
static double check_q(const char* name, const physModel* m, physData* d, physRng* rng) {
  int nv = m->nv;
  size_t mark = phys_stack_mark(d);
  physConstraintProblem p;
  setup(m, d, &p);
  int n = p.n, ndir = nv + 3;
  printf("%s: nv %d, %d contacts, %d limit rows\n", name, nv, p.nc, p.nl);
  CHECK_MSG(p.nc + p.nl > 0, "%s: no constraint rows", name);
  double* alpha = malloc(sizeof(double) * (size_t)(n + 1));
  double* gamma = malloc(sizeof(double) * (size_t)(n + 1));
  double* beta = malloc(sizeof(double) * (size_t)nv);
  double* dq = malloc(sizeof(double) * (size_t)nv * ndir);
  for (int i = 0; i < n; i++) alpha[i] = urand(rng), gamma[i] = urand(rng);
  for (int j = 0; j < nv; j++) beta[j] = urand(rng);
  memset(dq, 0, sizeof(double) * (size_t)nv * ndir);
  for (int k = 0; k < nv; k++) dq[(size_t)k * nv + k] = 1;
  for (int k = nv; k < ndir; k++) {   // random unit directions
    double* v = dq + (size_t)k * nv;
    double nrm = 0;
    for (int j = 0; j < nv; j++) v[j] = urand(rng), nrm += v[j] * v[j];
    for (int j = 0; j < nv; j++) v[j] /= sqrt(nrm);
  }

  // analytic, and the dot-product tests
  double *aJb = malloc(sizeof(double) * (size_t)n * ndir + 1), *aJa = malloc(sizeof(double) * (size_t)nv * ndir);
  double *ad = malloc(sizeof(double) * (size_t)n * ndir + 1), *qbar = calloc((size_t)nv, sizeof(double));
  physStatus st = phys_constraint_vjp(m, d, &p, alpha, beta, gamma, qbar);
  CHECK_MSG(st == PHYS_OK, "%s: vjp: %s", name, d->lastwarning);
  if (st != PHYS_OK) {   // nothing more to compare
    free(alpha), free(gamma), free(beta), free(dq), free(aJb), free(aJa), free(ad), free(qbar);
    phys_stack_free(d, mark);
    return INFINITY;
  }
  double worst_dot = 0, worst_sym = 0, worst_jac = 0, dmax_dot = 0, smax_dot = 0, dmax_sym = 0, smax_sym = 0;
  for (int k = 0; k < ndir; k++) {
    const double* v = dq + (size_t)k * nv;
    double *Jb = aJb + (size_t)k * n, *Ja = aJa + (size_t)k * nv, *dd = ad + (size_t)k * n;
    st = phys_constraint_jvp(m, d, &p, v, alpha, beta, Jb, Ja, dd);
    CHECK_MSG(st == PHYS_OK, "%s: jvp: %s", name, d->lastwarning);
    double lhs = 0, rhs = 0, sc = 0, s1 = 0, s2 = 0, ssc = 0;
    for (int i = 0; i < n; i++) {
      lhs += alpha[i] * Jb[i] + gamma[i] * dd[i];
      sc += fabs(alpha[i] * Jb[i]) + fabs(gamma[i] * dd[i]);
      s1 += alpha[i] * Jb[i];
      ssc += fabs(alpha[i] * Jb[i]);
    }
    for (int j = 0; j < nv; j++) {
      rhs += qbar[j] * v[j];
      sc += fabs(qbar[j] * v[j]);
      s2 += Ja[j] * beta[j];
      ssc += fabs(Ja[j] * beta[j]);
    }
    // relative to the sums of |terms|, the largest over the directions: a direction whose terms cancel to 0
    // (a translation of a whole tree moves no contact relative to itself) keeps the rounding of the others
    dmax_dot = fmax(dmax_dot, fabs(lhs - rhs)), smax_dot = fmax(smax_dot, sc);
    dmax_sym = fmax(dmax_sym, fabs(s1 - s2)), smax_sym = fmax(smax_sym, ssc);
  }
  worst_dot = dmax_dot / fmax(smax_dot, 1e-300), worst_sym = dmax_sym / fmax(smax_sym, 1e-300);
  CHECK_MSG(worst_dot <= GM_DOT_TOL, "%s: dot-product test %.3g", name, worst_dot);
  // the full matrices (computed per chain, not per direction): column k is the forward mode along e_k, to
  // rounding (1e-12 of the block's largest entry)
  double *Mb = malloc(sizeof(double) * (size_t)n * nv + 1), *Ma = malloc(sizeof(double) * (size_t)nv * nv);
  double* Md = malloc(sizeof(double) * (size_t)n * nv + 1);
  st = phys_constraint_jacobian(m, d, &p, alpha, beta, Mb, Ma, Md);
  CHECK_MSG(st == PHYS_OK, "%s: jacobian: %s", name, d->lastwarning);
  double eb = 0, ea = 0, ed = 0;
  double sb = gm_maxabs(aJb, n * nv), sa = gm_maxabs(aJa, nv * nv), sd = gm_maxabs(ad, n * nv);
  for (int k = 0; k < nv; k++) {
    for (int i = 0; i < n; i++) {
      eb = fmax(eb, fabs(Mb[(size_t)i * nv + k] - aJb[(size_t)k * n + i]) / fmax(sb, 1e-300));
      ed = fmax(ed, fabs(Md[(size_t)i * nv + k] - ad[(size_t)k * n + i]) / fmax(sd, 1e-300));
    }
    for (int j = 0; j < nv; j++)
      ea = fmax(ea, fabs(Ma[(size_t)j * nv + k] - aJa[(size_t)k * nv + j]) / fmax(sa, 1e-300));
  }
  CHECK_MSG(eb <= 1e-12 && ea <= 1e-12 && ed <= 1e-12, "%s: phys_constraint_jacobian vs jvp along e_k: %.3g %.3g %.3g",
            name, eb, ea, ed);
  worst_jac = fmax(worst_jac, fmax(eb, fmax(ea, ed)));
  free(Mb), free(Ma), free(Md);
  CHECK_MSG(worst_sym <= GM_DOT_TOL, "%s: <dJ'alpha, beta> vs <alpha, dJ beta> %.3g", name, worst_sym);

  // determinism: the same calls give the same bits
  double* qbar2 = calloc((size_t)nv, sizeof(double));
  phys_constraint_vjp(m, d, &p, alpha, beta, gamma, qbar2);
  CHECK_MSG(!memcmp(qbar, qbar2, sizeof(double) * (size_t)nv), "%s: vjp not bit-identical", name);
  free(qbar2);

  // central differences
  snap_t base = snapshot(m, d, d->qpos);
  double *fJb = calloc((size_t)n * ndir + 1, sizeof(double)), *fJa = calloc((size_t)nv * ndir, sizeof(double));
  double* fd = calloc((size_t)n * ndir + 1, sizeof(double));
  double fs[3] = {0, 0, 0};
  int ok = 1;
  for (int k = 0; k < ndir && ok; k++) {
    ok = fd_direction(m, d, &base, dq + (size_t)k * nv, alpha, beta, fJb + (size_t)k * n, fJa + (size_t)k * nv,
                      fd + (size_t)k * n, fs);
    CHECK_MSG(ok, "%s: direction %d changes the contact set", name, k);
  }
  double fscale_b = fs[0], fscale_a = fs[1], fscale_d = fs[2];
  double err = 0;
  if (ok) {
    char what[128];
    snprintf(what, sizeof what, "%s: dJ beta", name);
    err = fmax(err, gm_compare(what, aJb, fJb, ndir, n, fscale_b, GM_RTOL));
    snprintf(what, sizeof what, "%s: dJ' alpha", name);
    err = fmax(err, gm_compare(what, aJa, fJa, ndir, nv, fscale_a, GM_RTOL));
    snprintf(what, sizeof what, "%s: ddist", name);
    err = fmax(err, gm_compare(what, ad, fd, ndir, n, fscale_d, GM_RTOL));
  }
  printf("  q: worst rel %.2e over %d directions; dot-product %.1e, transpose %.1e; matrices %.1e\n", err, ndir,
         worst_dot, worst_sym, worst_jac);
  snap_free(&base);
  free(alpha), free(gamma), free(beta), free(dq), free(aJb), free(aJa), free(ad), free(qbar);
  free(fJb), free(fJa), free(fd);
  phys_stack_free(d, mark);
  return err;
}

// s(size) = alpha' J beta + gamma' dist at the current qpos (the model's sizes as they are now)
static double size_objective(const physModel* m, physData* d, const snap_t* base, const double* alpha,
                             const double* beta, const double* A, const double* gamma, int* ok) {
  snap_t s = snapshot(m, d, d->qpos);
  int nv = m->nv, n = base->n;
  int* map = malloc(sizeof(int) * (size_t)(n + 1));
  double v = 0;
  *ok = match_rows(base, &s, nv, map);
  for (int i = 0; i < n && *ok; i++) {
    const double* J = s.J + (size_t)map[i] * nv;
    double jb = 0;
    for (int j = 0; j < nv; j++) jb += J[j] * (A ? A[(size_t)i * nv + j] : alpha[i] * beta[j]);
    v += jb + ((i < 3 * base->nc && i % 3) ? 0 : gamma[i] * s.dist[map[i]]);
  }
  free(map);
  snap_free(&s);
  return v;
}

// gradient of alpha' J beta + gamma' dist (matrix 0) or <A, J> + gamma' dist (matrix 1, random A) in the sizes
// of every geom in contact against central differences
static double check_size(const char* name, physModel* m, physData* d, physRng* rng, int matrix) {
  size_t mark = phys_stack_mark(d);
  physConstraintProblem p;
  setup(m, d, &p);
  int n = p.n, nv = m->nv;
  double* alpha = malloc(sizeof(double) * (size_t)(n + 1));
  double* gamma = malloc(sizeof(double) * (size_t)(n + 1));
  double* beta = malloc(sizeof(double) * (size_t)nv);
  for (int i = 0; i < n; i++) alpha[i] = urand(rng), gamma[i] = urand(rng);
  for (int j = 0; j < nv; j++) beta[j] = urand(rng);
  double* A = NULL;
  if (matrix) {
    A = malloc(sizeof(double) * ((size_t)n * nv + 1));
    for (int i = 0; i < n * nv; i++) A[i] = urand(rng);
  }
  double* an = calloc(3 * (size_t)m->ngeom + 1, sizeof(double));
  double* fdv = calloc(3 * (size_t)m->ngeom + 1, sizeof(double));
  int cnt = 0, ok = 1, ng = 0;
  int* geoms = malloc(sizeof(int) * (size_t)m->ngeom);
  int* done = calloc((size_t)m->ngeom, sizeof(int));
  for (int i = 0; i < p.nc; i++)
    for (int e = 0; e < 2; e++) {
      int g = d->contact[i].geom[e];
      if (!done[g] && phys_geom_nsize(m->geom_type[g]) > 0) done[g] = 1, geoms[ng++] = g;
    }
  // analytic first (d->contact is that of p), then the differences (which re-collide)
  for (int a = 0; a < ng; a++) {
    int g = geoms[a], ns = phys_geom_nsize(m->geom_type[g]);
    double sb[3] = {0, 0, 0};
    physStatus st = A ? phys_constraint_size_vjp_matrix(m, d, &p, g, A, gamma, sb)
                      : phys_constraint_size_vjp(m, d, &p, g, alpha, beta, gamma, sb);
    CHECK_MSG(st == PHYS_OK, "%s: size_vjp: %s", name, d->lastwarning);
    if (st != PHYS_OK) {   // nothing to compare
      ng = 0;
      break;
    }
    for (int k = 0; k < ns; k++) an[cnt++] = sb[k];
  }
  snap_t base = snapshot(m, d, d->qpos);
  double f0 = fabs(size_objective(m, d, &base, alpha, beta, A, gamma, &ok));
  cnt = 0;
  for (int a = 0; a < ng; a++) {
    int g = geoms[a], ns = phys_geom_nsize(m->geom_type[g]);
    for (int k = 0; k < ns; k++) {
      double keep = m->geom_size[3 * g + k], v = 0;
      for (int st = 0; st < 4; st++) {
        int oks;
        m->geom_size[3 * g + k] = keep + FD_OFF[st] * FD_H;
        v += FD_W[st] / (12 * FD_H) * size_objective(m, d, &base, alpha, beta, A, gamma, &oks);
        CHECK_MSG(oks, "%s: size %d of geom %d changes the contact set", name, k, g);
      }
      m->geom_size[3 * g + k] = keep;
      fdv[cnt++] = v;
    }
  }
  free(geoms);
  char what[128];
  snprintf(what, sizeof what, "%s: size gradient%s", name, A ? " (matrix weights)" : "");
  double err = cnt ? gm_compare(what, an, fdv, 1, cnt, f0, GM_RTOL) : 0;
  printf("  sizes%s: %d parameters, worst rel %.2e\n", A ? " (matrix weights)" : "", cnt, err);
  free(A);
  snap_free(&base);
  free(done), free(an), free(fdv), free(alpha), free(gamma), free(beta);
  phys_stack_free(d, mark);
  return err;
}

// the matrix forms: phys_constraint_dJ along each direction against the forward mode (dJ beta, alpha' dJ), the
// reverse mode for a random A by the dot-product test <A, dJ[dq]> + <gamma, ddist[dq]> = <q_bar, dq>, and
// A = alpha beta' against phys_constraint_vjp (1e-12)
static void check_matrix(const char* name, const physModel* m, physData* d, physRng* rng) {
  int nv = m->nv;
  size_t mark = phys_stack_mark(d);
  physConstraintProblem p;
  setup(m, d, &p);
  int n = p.n;
  double* alpha = malloc(sizeof(double) * (size_t)(n + 1));
  double* gamma = malloc(sizeof(double) * (size_t)(n + 1));
  double* beta = malloc(sizeof(double) * (size_t)nv);
  double* A = malloc(sizeof(double) * ((size_t)n * nv + 1));
  double* A1 = malloc(sizeof(double) * ((size_t)n * nv + 1));
  double* dJ = malloc(sizeof(double) * ((size_t)n * nv + 1));
  double *dq = malloc(sizeof(double) * (size_t)nv), *Jb = malloc(sizeof(double) * (size_t)(n + 1));
  double *Ja = malloc(sizeof(double) * (size_t)nv), *dd = malloc(sizeof(double) * (size_t)(n + 1));
  double *qa = calloc((size_t)nv, sizeof(double)), *qr = calloc((size_t)nv, sizeof(double));
  for (int i = 0; i < n; i++) alpha[i] = urand(rng), gamma[i] = urand(rng);
  for (int j = 0; j < nv; j++) beta[j] = urand(rng);
  for (int i = 0; i < n * nv; i++) A[i] = urand(rng);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < nv; j++) A1[(size_t)i * nv + j] = alpha[i] * beta[j];
  // rank one: the matrix reverse mode is phys_constraint_vjp
  physStatus st = phys_constraint_vjp(m, d, &p, alpha, beta, gamma, qr);
  st = st == PHYS_OK ? phys_constraint_vjp_matrix(m, d, &p, A1, gamma, qa) : st;
  CHECK_MSG(st == PHYS_OK, "%s: vjp_matrix: %s", name, d->lastwarning);
  double e1 = 0, s1 = gm_maxabs(qr, nv);
  for (int j = 0; j < nv; j++) e1 = fmax(e1, fabs(qa[j] - qr[j]) / fmax(s1, 1e-300));
  CHECK_MSG(e1 <= 1e-12, "%s: vjp_matrix(alpha beta') vs vjp: %.3g", name, e1);
  memset(qa, 0, sizeof(double) * (size_t)nv);
  st = phys_constraint_vjp_matrix(m, d, &p, A, gamma, qa);
  CHECK_MSG(st == PHYS_OK, "%s: vjp_matrix: %s", name, d->lastwarning);
  double emat = 0, smat = 0, edot = 0, sdot = 0, sm = 0;
  for (int k = 0; k < nv + 3 && st == PHYS_OK; k++) {
    for (int j = 0; j < nv; j++) dq[j] = k < nv ? (j == k) : urand(rng);
    st = phys_constraint_dJ(m, d, &p, dq, dJ);
    CHECK_MSG(st == PHYS_OK, "%s: dJ: %s", name, d->lastwarning);
    phys_constraint_jvp(m, d, &p, dq, alpha, beta, Jb, Ja, dd);
    // dJ beta and alpha' dJ against the forward mode
    for (int i = 0; i < n; i++) {
      double v = 0;
      for (int j = 0; j < nv; j++) v += dJ[(size_t)i * nv + j] * beta[j];
      emat = fmax(emat, fabs(v - Jb[i])), smat = fmax(smat, fabs(Jb[i]));
    }
    for (int j = 0; j < nv; j++) {
      double v = 0;
      for (int i = 0; i < n; i++) v += alpha[i] * dJ[(size_t)i * nv + j];
      emat = fmax(emat, fabs(v - Ja[j])), smat = fmax(smat, fabs(Ja[j]));
    }
    // <A, dJ> + <gamma, ddist> = <q_bar, dq>
    double lhs = 0, rhs = 0, sc = 0;
    for (int i = 0; i < n * nv; i++) lhs += A[i] * dJ[i], sc += fabs(A[i] * dJ[i]);
    for (int i = 0; i < n; i++) lhs += gamma[i] * dd[i], sc += fabs(gamma[i] * dd[i]);
    for (int j = 0; j < nv; j++) rhs += qa[j] * dq[j], sc += fabs(qa[j] * dq[j]);
    edot = fmax(edot, fabs(lhs - rhs)), sdot = fmax(sdot, sc);
    sm = fmax(sm, gm_maxabs(dJ, n * nv));
  }
  emat /= fmax(smat, 1e-300), edot /= fmax(sdot, 1e-300);
  CHECK_MSG(emat <= 1e-12, "%s: phys_constraint_dJ vs the forward mode %.3g", name, emat);
  CHECK_MSG(edot <= GM_DOT_TOL, "%s: matrix dot-product test %.3g", name, edot);
  printf("  matrix forms: dJ vs forward %.1e, vjp_matrix vs vjp %.1e, dot-product %.1e\n", emat, e1, edot);
  free(alpha), free(gamma), free(beta), free(A), free(A1), free(dJ), free(dq), free(Jb), free(Ja), free(dd);
  free(qa), free(qr);
  phys_stack_free(d, mark);
}

// the contacts' angular rows A (issue 16): phys_angular_dJ along every tangent direction e_k and 3 random ones
// against four-point central differences of phys_contact_angular_jac (contacts matched as check_q's), its dJ
// output against phys_constraint_dJ bit for bit, and the dot-product test <W, dA> = <q_bar, dq> of
// phys_angular_vjp_matrix for a random W
static void check_angular(const char* name, const physModel* m, physData* d, physRng* rng) {
  int nv = m->nv;
  size_t mark = phys_stack_mark(d);
  physConstraintProblem p;
  setup(m, d, &p);
  snap_t base = snapshot(m, d, d->qpos);
  int na = 3 * p.nc, *map = malloc(sizeof(int) * (size_t)(p.n + 1));
  double *W = malloc(sizeof(double) * ((size_t)na * nv + 1)), *dA = malloc(sizeof(double) * ((size_t)na * nv + 1));
  double *fd = malloc(sizeof(double) * ((size_t)na * nv + 1)), *dJ = malloc(sizeof(double) * ((size_t)p.n * nv + 1));
  double *dJ0 = malloc(sizeof(double) * ((size_t)p.n * nv + 1)), *qb = calloc((size_t)nv, sizeof(double));
  double *dq = malloc(sizeof(double) * (size_t)nv), *q = malloc(sizeof(double) * (size_t)m->nq);
  for (int i = 0; i < na * nv; i++) W[i] = urand(rng);
  physStatus st = phys_angular_vjp_matrix(m, d, &p, W, qb);
  double efd = 0, sfd = gm_maxabs(base.ang, na * nv), edot = 0, sdot = 0;
  int same = 1;
  for (int k = 0; k < nv + 3 && st == PHYS_OK; k++) {
    for (int j = 0; j < nv; j++) dq[j] = k < nv ? (j == k) : urand(rng);
    setup(m, d, &p);   // (the snapshots below leave d at another configuration)
    st = phys_angular_dJ(m, d, &p, dq, dJ, dA);
    if (st == PHYS_OK) st = phys_constraint_dJ(m, d, &p, dq, dJ0);
    same = same && !memcmp(dJ, dJ0, sizeof(double) * (size_t)p.n * nv);
    memset(fd, 0, sizeof(double) * (size_t)na * nv);
    int ok = 1;
    for (int s = 0; s < 4 && ok; s++) {
      memcpy(q, d->qpos, sizeof(double) * (size_t)m->nq);
      phys_integrate_pos(m, q, dq, FD_OFF[s] * FD_H);
      snap_t sp = snapshot(m, d, q);
      ok = match_rows(&base, &sp, nv, map);
      for (int r = 0; r < na && ok; r++)
        for (int j = 0; j < nv; j++) fd[(size_t)r * nv + j] += FD_W[s] / (12 * FD_H) * sp.ang[(size_t)map[r] * nv + j];
      snap_free(&sp);
    }
    CHECK_MSG(ok, "%s: the contacts changed along direction %d", name, k);
    double lhs = 0, sc = 0, rhs = 0;
    for (int i = 0; i < na * nv && ok; i++) {
      efd = fmax(efd, fabs(dA[i] - fd[i]) / fmax(fabs(fd[i]), GM_FLOOR * fmax(sfd, 1)));
      lhs += W[i] * dA[i], sc += fabs(W[i] * dA[i]);
    }
    for (int j = 0; j < nv; j++) rhs += qb[j] * dq[j], sc += fabs(qb[j] * dq[j]);
    edot = fmax(edot, fabs(lhs - rhs)), sdot = fmax(sdot, sc);
  }
  edot /= fmax(sdot, 1e-300);
  CHECK_MSG(st == PHYS_OK, "%s: angular rows: %s", name, d->lastwarning);
  CHECK_MSG(same, "%s: phys_angular_dJ's dJ differs from phys_constraint_dJ", name);
  CHECK_MSG(efd <= GM_RTOL, "%s: angular rows' dA vs central differences %.3g", name, efd);
  CHECK_MSG(edot <= GM_DOT_TOL, "%s: angular rows' dot-product test %.3g", name, edot);
  printf("  angular rows: dA vs differences %.1e, dot-product %.1e\n", efd, edot);
  snap_free(&base);
  free(map), free(W), free(dA), free(fd), free(dJ), free(dJ0), free(qb), free(dq), free(q);
  phys_stack_free(d, mark);
}

// all checks on one scene at d->qpos
static void check_scene(const char* name, physModel* m, physData* d, physRng* rng) {
  check_q(name, m, d, rng);
  check_angular(name, m, d, rng);
  check_matrix(name, m, d, rng);
  check_size(name, m, d, rng, 0);
  check_size(name, m, d, rng, 1);
}

//---------------------------------------------------------------------------------------------------------
// scenes

// free body pose: position and orientation (axis-angle)
static void set_free(const physModel* m, physData* d, int jnt, double x, double y, double z, const double axis[3],
                     double angle) {
  double* q = d->qpos + m->jnt_qposadr[jnt];
  q[0] = x, q[1] = y, q[2] = z;
  phys_axisangle2quat(q + 3, axis, angle);
}

static const char* const FREE_ON_PLANE =
    "<mujoco>\n"
    "  <compiler angle='radian'/>\n"
    "  <worldbody>\n"
    "    <geom name='floor' type='plane' size='5 5 0.1' euler='0.2 -0.1 0'/>\n"
    "    <body name='obj' pos='0 0 1'>\n"
    "      <freejoint/>\n"
    "      <geom name='obj' type='%s' size='%s'/>\n"
    "    </body>\n"
    "  </worldbody>\n"
    "</mujoco>\n";

// a free geom of `type` and `size` on a tilted plane, in orientation (axis, angle), sunk by depth
static void scene_free_on_plane(const char* name, const char* type, const char* size, const double axis[3],
                                double angle, double depth, int expect, physRng* rng) {
  char xml[1024];
  snprintf(xml, sizeof xml, FREE_ON_PLANE, type, size);
  physModel* m = load_xml(xml);
  physData* d = phys_make_data(m);
  set_free(m, d, 0, 0.3, -0.2, 1, axis, angle);
  double* qq = d->qpos + 3;
  phys_quat_mul(qq, m->geom_quat, qq);   // orientation relative to the plane's frame
  sink_floor(m, d, 0, depth);
  phys_kinematics(m, d);
  phys_collision(m, d);
  CHECK_MSG(d->ncon == expect, "%s: %d contacts, expected %d", name, d->ncon, expect);
  check_scene(name, m, d, rng);
  phys_free_data(d);
  phys_free_model(m);
}

static const char* const TWO_FREE =
    "<mujoco>\n"
    "  <compiler angle='radian'/>\n"
    "  <worldbody>\n"
    "    <body name='a'>\n"
    "      <freejoint/>\n"
    "      <geom name='a' type='%s' size='%s'/>\n"
    "    </body>\n"
    "    <body name='b'>\n"
    "      <freejoint/>\n"
    "      <geom name='b' type='%s' size='%s'/>\n"
    "    </body>\n"
    "  </worldbody>\n"
    "</mujoco>\n";

// two free geoms at given poses (b's geom listed second; swap lists it first: the contact's normal flips)
static void scene_two_free(const char* name, const char* ta, const char* sa, const char* tb, const char* sb,
                           const double xa[3], const double aa[4], const double xb[3], const double ab[4], int expect,
                           physRng* rng) {
  char xml[1024];
  snprintf(xml, sizeof xml, TWO_FREE, ta, sa, tb, sb);
  physModel* m = load_xml(xml);
  physData* d = phys_make_data(m);
  set_free(m, d, 0, xa[0], xa[1], xa[2], aa, aa[3]);
  set_free(m, d, 1, xb[0], xb[1], xb[2], ab, ab[3]);
  phys_kinematics(m, d);
  phys_collision(m, d);
  CHECK_MSG(d->ncon == expect, "%s: %d contacts, expected %d", name, d->ncon, expect);
  check_scene(name, m, d, rng);
  phys_free_data(d);
  phys_free_model(m);
}

// a scene given as MJCF (poses in the file), contact model `model`, the first free body moving at vx along x
// (ccp's envelope grows with it), the floor (geom 0, when depth != 0) moved to make the smallest dist -depth;
// expect contacts
static void scene_xml(const char* name, const char* xml, int model, double vx, double depth, int expect,
                      physRng* rng) {
  physModel* m = load_xml(xml);
  m->opt.contact = model;
  physData* d = phys_make_data(m);
  if (vx != 0) d->qvel[0] = vx;
  if (depth != 0) sink_floor(m, d, 0, depth);
  phys_kinematics(m, d);
  phys_com_pos(m, d);
  phys_com_vel(m, d);
  phys_collision(m, d);
  double dmax = -INFINITY;
  for (int i = 0; i < d->ncon; i++) dmax = fmax(dmax, d->contact[i].dist);
  CHECK_MSG(d->ncon == expect, "%s: %d contacts, expected %d", name, d->ncon, expect);
  printf("%s: %d contacts, largest dist %.2e\n", name, d->ncon, dmax);
  check_scene(name, m, d, rng);
  phys_free_data(d);
  phys_free_model(m);
}

// contacts found within a margin (dist > 0): ccp's collision envelope of a sliding sphere and box, and an
// explicit <pair> listing the higher geom first (the contact's normal opposite to the pair function's) with a
// margin
static const char* const CCP_SPHERE =
    "<mujoco><compiler angle='radian'/><worldbody><geom name='floor' type='plane' size='5 5 0.1'/>"
    "<body pos='0 0 0.101'><freejoint/><geom type='sphere' size='0.1'/></body></worldbody></mujoco>";
static const char* const CCP_BOX =
    "<mujoco><compiler angle='radian'/><worldbody><geom name='floor' type='plane' size='5 5 0.1' euler='0.1 0 0'/>"
    "<body pos='0 0 0.1' euler='0.1013 0.0006 0.3'><freejoint/><geom type='box' size='0.1 0.1 0.05'/></body>"
    "</worldbody></mujoco>";
static const char* const PAIR_FLIP =
    "<mujoco><compiler angle='radian'/><worldbody>"
    "<body name='a'><freejoint/><geom name='a' type='sphere' size='0.1'/></body>"
    "<body name='b' pos='0.15 0.1 0.05'><freejoint/><geom name='b' type='sphere' size='0.08'/></body>"
    "</worldbody><contact><pair geom1='b' geom2='a' margin='0.01'/></contact></mujoco>";
// the pairs of primitive_deriv beyond the first set: box on box (a face), sphere on a box, cylinder and
// ellipsoid on a plane, sphere against a cylinder's side
static const char* const BOX_BOX =
    "<mujoco><compiler angle='radian'/><worldbody><geom name='table' type='box' size='0.5 0.5 0.1'/>"
    "<body pos='0.1 -0.05 0.199' euler='0.0003 -0.0002 0.3'><freejoint/><geom type='box' size='0.1 0.08 0.1'/>"
    "</body></worldbody></mujoco>";
// a box defined before the floor (geom 0 the box, geom 1 a plane on a static body): plane-box runs with the
// plane first, the contact's geoms the other way round (pairflip), so its stored features swap back before the
// derivative reads the box's corner
static const char* const BOX_BEFORE_FLOOR =
    "<mujoco><compiler angle='radian'/><worldbody>"
    "<body pos='0.1 0 0.049' euler='0 0 0.3'><freejoint/><geom type='box' size='0.2 0.1 0.05'/></body>"
    "<body name='ground'><geom name='floor' type='plane' size='5 5 0.1'/></body></worldbody></mujoco>";
static const char* const SPHERE_BOX =
    "<mujoco><compiler angle='radian'/><worldbody><geom name='table' type='box' size='0.5 0.5 0.1' euler='0.1 0.2 0'/>"
    "<body pos='0.13735 -0.01739 0.17335'><freejoint/><geom type='sphere' size='0.1'/></body></worldbody></mujoco>";
static const char* const CYL_PLANE =
    "<mujoco><compiler angle='radian'/><worldbody><geom name='floor' type='plane' size='5 5 0.1' euler='0.1 -0.1 0'/>"
    "<body pos='0 0 1' euler='0.4 0.3 0'><freejoint/><geom type='cylinder' size='0.1 0.2'/></body>"
    "</worldbody></mujoco>";
static const char* const ELL_PLANE =
    "<mujoco><compiler angle='radian'/><worldbody><geom name='floor' type='plane' size='5 5 0.1' euler='0.1 -0.1 0'/>"
    "<body pos='0 0 1' euler='0.4 0.3 0.2'><freejoint/><geom type='ellipsoid' size='0.1 0.2 0.15'/></body>"
    "</worldbody></mujoco>";
static const char* const SPHERE_CYL =
    "<mujoco><compiler angle='radian'/><worldbody><geom name='post' type='cylinder' size='0.1 0.3' euler='0.2 0.1 0'/>"
    "<body pos='0.19 0.02 0.05'><freejoint/><geom type='sphere' size='0.1'/></body></worldbody></mujoco>";

// GJK/EPA witness points on smooth patches (collision/witness.h), within the geoms' margins: a cube's corner over a
// cylinder's rim, a box's corner over an ellipsoid, two ellipsoids (both sides smooth)
static const char* const CYL_CUBE =
    "<mujoco><worldbody><body><freejoint/><geom type='cylinder' size='0.2 0.3' margin='0.1'/></body>"
    "<body pos='0.24 0.03 0.458564' quat='0.8880738 0.3250576 -0.3250576 0'><freejoint/>"
    "<geom type='box' size='0.08 0.08 0.08' margin='0.1'/></body></worldbody></mujoco>";
static const char* const ELL_BOX =
    "<mujoco><worldbody><body quat='0.9800666 0.0560679 0.1868924 -0.0373776'><freejoint/>"
    "<geom type='ellipsoid' size='0.3 0.2 0.15' margin='0.3'/></body>"
    "<body pos='0.1 0.05 0.33' quat='0.9553365 0.0789808 0.1579616 0.2369424'><freejoint/>"
    "<geom type='box' size='0.1 0.08 0.06' margin='0.3'/></body></worldbody></mujoco>";
static const char* const ELL_ELL =
    "<mujoco><worldbody><body quat='0.9800666 0.0560679 0.1868924 -0.0373776'><freejoint/>"
    "<geom type='ellipsoid' size='0.3 0.2 0.15' margin='0.3'/></body>"
    "<body pos='0.2 0.1 0.36' quat='0.8525245 0.1396933 0.2793866 0.4190798'><freejoint/>"
    "<geom type='ellipsoid' size='0.15 0.25 0.1' margin='0.3'/></body></worldbody></mujoco>";

// contacts within one tree: a grandchild's sphere against the root's capsule (one chain contains the other)
// and two branches against each other (the root's free dofs shared: their rows cancel)
static const char* const BRANCHES =
    "<mujoco><compiler angle='radian'/><worldbody>"
    "<body name='root' pos='0 0 1' euler='0.1 0.2 0.3'><freejoint/>"
    "<geom name='torso' type='capsule' fromto='-0.2 0 0 0.2 0 0' size='0.05'/>"
    "<body name='l1' pos='0.2 0 0'><joint name='h1' type='hinge' axis='0 1 0'/>"
    "<geom name='l1' type='capsule' fromto='0 0 0 0 0 -0.3' size='0.04'/>"
    "<body name='l2' pos='0 0 -0.3'><joint name='h2' type='hinge' axis='0 1 0.2'/>"
    "<geom name='l2' type='capsule' fromto='0 0 0 -0.3 0 0' size='0.04'/>"
    "<body name='l3' pos='-0.3 0 0'><joint name='b3' type='ball'/>"
    "<geom name='l3' type='sphere' pos='0 0 0.22' size='0.05'/></body></body></body>"
    "<body name='r1' pos='-0.2 0 0'><joint name='hr' type='hinge' axis='1 0 0'/>"
    "<geom name='r1' type='capsule' fromto='0 0 0 0.2 0.05 -0.35' size='0.04'/></body>"
    "</body></worldbody></mujoco>";

// convex meshes (GJK/EPA pairs, collision/convex_deriv.c): a tetrahedron-like hull on the floor, and another
// hull pierced by a box; the OBJ is written beside the model (mesh paths stay in the model's folder)
static const char* const HULL_OBJ =
    "v 0 0 0\nv 0.2 0 0\nv 0 0.15 0\nv 0 0 0.1\nv 0.1 0.1 0.12\n"
    "f 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 5 4\nf 2 3 5\nf 3 4 5\n";
static const char* const HULLS =
    "<mujoco><compiler angle='radian'/><asset><mesh name='hull' file='%s'/></asset><worldbody>"
    "<geom name='floor' type='plane' size='5 5 0.1' euler='0.1 -0.1 0'/>"
    "<body pos='0 0 0.3' euler='0.5 0.3 0.2'><freejoint/><geom type='mesh' mesh='hull'/></body>"
    "<body pos='0.6 0 0.5' euler='0.2 0.1 0.4'><freejoint/><geom type='mesh' mesh='hull'/></body>"
    "<body pos='0.65 0.05 0.66' euler='0.3 0.7 0.1'><freejoint/><geom type='box' size='0.1 0.08 0.05'/></body>"
    "</worldbody></mujoco>";

static void scene_hulls(physRng* rng) {
  char obj[] = "/tmp/test_contact_deriv_XXXXXX.obj";
  int fd = mkstemps(obj, 4);
  CHECK(fd >= 0);
  if (fd < 0) return;
  FILE* f = fdopen(fd, "w");
  fputs(HULL_OBJ, f);
  fclose(f);
  char xml[1024];
  snprintf(xml, sizeof xml, HULLS, strrchr(obj, '/') + 1);
  scene_xml("convex hulls: on the floor, pierced by a box", xml, PHYS_CONTACT_LCP, 0, 2e-3, 4, rng);
  unlink(obj);
}

// a chain with a ball, a limited hinge and a slide (dof groups, axes turning with the joints before them), a
// capsule, a box and a sphere near a tilted floor, limits active
static const char* const CHAIN =
    "<mujoco>\n"
    "  <compiler angle='radian'/>\n"
    "  <worldbody>\n"
    "    <geom name='floor' type='plane' size='5 5 0.1' euler='0.1 -0.2 0'/>\n"
    "    <body name='a' pos='0 0 0.6'>\n"
    "      <joint name='ball' type='ball'/>\n"
    "      <geom name='arm' type='capsule' fromto='0 0 0 0.3 0.05 -0.25' size='0.04'/>\n"
    "      <body name='b' pos='0.3 0.05 -0.25'>\n"
    "        <joint name='h' type='hinge' axis='0.1 1 0.2' limited='true' range='-0.3 0.3'/>\n"
    "        <joint name='s' type='slide' axis='0.2 0 1' limited='true' range='-0.05 0.05'/>\n"
    "        <geom name='box' type='box' size='0.06 0.05 0.04' euler='0.3 0.2 0.1'/>\n"
    "        <body name='c' pos='0.12 0 -0.05'>\n"
    "          <joint name='h2' type='hinge' axis='1 0.3 0'/>\n"
    "          <geom name='ball' type='sphere' pos='0.05 0 -0.08' size='0.05'/>\n"
    "          <geom name='stick' type='capsule' fromto='0 0 0 0 0.2 -0.1' size='0.03'/>\n"
    "        </body>\n"
    "      </body>\n"
    "    </body>\n"
    "  </worldbody>\n"
    "</mujoco>\n";

static void scene_chain(physRng* rng) {
  physModel* m = load_xml(CHAIN);
  physData* d = phys_make_data(m);
  double axis[3] = {0.3, 1, 0.2};
  phys_axisangle2quat(d->qpos, axis, 0.7);
  d->qpos[4] = 0.33;    // hinge beyond its upper limit
  d->qpos[5] = -0.06;   // slide beyond its lower limit
  d->qpos[6] = 0.4;
  sink_floor(m, d, 0, 4e-3);
  check_scene("chain (ball, limited hinge and slide) on a floor", m, d, rng);
  phys_free_data(d);
  phys_free_model(m);
}

// the elbow lying on the floor: both boxes flat (8 corners), then the second box turned about the hinge
static void scene_elbow(physRng* rng) {
  physModel* m = load_elbow();
  physData* d = phys_make_data(m);
  int floor = phys_name2id(m, "geom", "floor");
  double z[3] = {0, 0, 1};
  set_free(m, d, 0, 0.1, 0.2, 0.5, z, 0.4);
  d->qpos[7] = 0;
  sink_floor(m, d, floor, 1e-3);
  phys_kinematics(m, d);
  phys_collision(m, d);
  CHECK_MSG(d->ncon == 8, "elbow flat: %d contacts, expected 8", d->ncon);
  check_scene("elbow flat on the floor", m, d, rng);
  d->qpos[7] = 0.2;
  double ax[3] = {0.2, 1, 0.1};
  set_free(m, d, 0, 0.1, 0.2, 0.5, ax, -0.1);
  sink_floor(m, d, floor, 2e-3);
  check_scene("elbow bent on the floor", m, d, rng);
  phys_free_data(d);
  phys_free_model(m);
}

// MuJoCo's humanoid lying bent on the floor (capsules and spheres on the plane, limits active where hit)
static void scene_humanoid(physRng* rng) {
  if (access(GM_HUMANOID, R_OK) != 0) {
    printf("humanoid: %s not found, skipped\n", GM_HUMANOID);
    return;
  }
  physModel* m = gm_load(GM_HUMANOID, 0);
  physData* d = phys_make_data(m);
  int floor = phys_name2id(m, "geom", "floor");
  double y[3] = {0, 1, 0};
  set_free(m, d, 0, 0, 0, 0.09, y, -M_PI / 2 + 0.05);
  for (int k = 7; k < m->nq; k++) d->qpos[k] = 0.1 * sin(1.7 * k);
  phys_kinematics(m, d);
  phys_collision(m, d);
  int nfloor = 0;   // contacts with the floor; the others are between limbs (capsule-capsule, sphere-capsule)
  for (int i = 0; i < d->ncon; i++) nfloor += d->contact[i].geom[0] == floor || d->contact[i].geom[1] == floor;
  CHECK_MSG(d->ncon == 17 && nfloor >= 8, "humanoid: %d contacts, %d with the floor", d->ncon, nfloor);
  printf("humanoid: %d contacts, %d with the floor\n", d->ncon, nfloor);
  check_scene("humanoid lying bent on the floor", m, d, rng);
  phys_free_data(d);
  phys_free_model(m);
}

//---------------------------------------------------------------------------------------------------------
// refusals

// refused calls: a pair without geometry derivative (the message names it; capsule-box until primitive_deriv
// has it, else it must work), a problem of another state, a geom out of range, missing inputs; the arena is
// left as it was
static void test_refusals(void) {
  physModel* m = load_xml(
      "<mujoco><compiler angle='radian'/><worldbody><geom name='floor' type='plane' size='5 5 0.1'/>"
      "<body pos='0 0 0.09'><freejoint/><geom type='sphere' size='0.1'/></body>"
      "<body pos='1 0 0.3' euler='0.3 0.2 0'><freejoint/><geom type='box' size='0.2 0.2 0.1'/></body>"
      "<body pos='1 0 0.45' euler='1.4 0.1 0'><freejoint/><geom type='capsule' size='0.05 0.2'/></body>"
      "</worldbody></mujoco>");
  physData* d = phys_make_data(m);
  size_t mark = phys_stack_mark(d);
  physConstraintProblem p;
  setup(m, d, &p);
  int ncb = 0, icb = -1;   // capsule-box contacts
  for (int i = 0; i < d->ncon; i++)
    if (d->contact[i].geom[0] == 2 && d->contact[i].geom[1] == 3) ncb++, icb = i;
  CHECK_MSG(ncb > 0, "refusals: no capsule-box contact (%d contacts)", d->ncon);
  size_t inuse = phys_stack_mark(d);
  int nv = m->nv;
  double* dq = calloc((size_t)nv, sizeof(double));
  double* qbar = calloc((size_t)nv, sizeof(double));
  double* gamma = calloc((size_t)p.n + 1, sizeof(double));
  double* dd = calloc((size_t)p.n + 1, sizeof(double));
  double jac[7 * 64];
  if (icb >= 0) {
    // the pair function's order is capsule (type 2) before box (type 5): geoms 3, 2
    int supported = phys_primitive_deriv(jac, m, d, 3, 2, 0) == 0;
    physStatus st = phys_constraint_jvp(m, d, &p, dq, NULL, NULL, NULL, NULL, dd);
    if (!supported) {
      CHECK(st == PHYS_ERR_ARG);
      CHECK_MSG(strstr(d->lastwarning, "capsule-box") != NULL, "message: %s", d->lastwarning);
      CHECK(phys_constraint_vjp(m, d, &p, NULL, NULL, gamma, qbar) == PHYS_ERR_ARG);
      CHECK(phys_constraint_size_vjp(m, d, &p, 2, NULL, NULL, gamma, qbar) == PHYS_ERR_ARG);
    } else {
      CHECK_MSG(st == PHYS_OK, "capsule-box supported by primitive_deriv but refused: %s", d->lastwarning);
    }
    printf("refusals: capsule-box %s\n", supported ? "supported" : "refused");
  }
  // a degenerate configuration: concentric spheres have no normal to differentiate
  physModel* m2 = load_xml("<mujoco><worldbody><body><freejoint/><geom type='sphere' size='0.1'/></body>"
                           "<body><freejoint/><geom type='sphere' size='0.05'/></body></worldbody></mujoco>");
  physData* d2 = phys_make_data(m2);
  size_t mark2 = phys_stack_mark(d2);
  physConstraintProblem p2;
  setup(m2, d2, &p2);
  CHECK(p2.nc == 1);
  double* g2 = calloc((size_t)p2.n + 1, sizeof(double));
  double* qb2 = calloc((size_t)m2->nv, sizeof(double));
  g2[0] = 1;
  CHECK(phys_constraint_vjp(m2, d2, &p2, NULL, NULL, g2, qb2) == PHYS_ERR_ARG);
  CHECK_MSG(strstr(d2->lastwarning, "sphere-sphere") != NULL, "message: %s", d2->lastwarning);
  free(g2), free(qb2);
  phys_stack_free(d2, mark2);
  phys_free_data(d2);
  phys_free_model(m2);

  // the contacts are differentiated from their record (pairflip, pairout, feature: physid.h), not found again:
  // a box corner's contacts with their corners swapped, or a contact numbered as another output, are refused
  {
    char xml[1024];
    snprintf(xml, sizeof xml, FREE_ON_PLANE, "box", "0.2 0.1 0.05");
    physModel* m3 = load_xml(xml);
    physData* d3 = phys_make_data(m3);
    size_t mark3 = phys_stack_mark(d3);
    set_free(m3, d3, 0, 0.3, -0.2, 1, (const double[3]){0, 0, 1}, 0.5);
    phys_quat_mul(d3->qpos + 3, m3->geom_quat, d3->qpos + 3);
    sink_floor(m3, d3, 0, 1e-3);
    physConstraintProblem p3;
    setup(m3, d3, &p3);
    CHECK(p3.nc == 4);
    double* dq3 = calloc((size_t)m3->nv, sizeof(double));
    double* dd3 = calloc((size_t)p3.n, sizeof(double));
    dq3[2] = 1;
    CHECK(phys_constraint_jvp(m3, d3, &p3, dq3, NULL, NULL, NULL, NULL, dd3) == PHYS_OK);
    CHECK_NEAR(dd3[0], cos(0.2) * cos(0.1), 1e-12);   // the box rises along z: every corner's dist grows by n_z
    int f0 = d3->contact[0].feature[1], f1 = d3->contact[1].feature[1];
    d3->contact[0].feature[1] = f1, d3->contact[1].feature[1] = f0;
    CHECK(phys_constraint_jvp(m3, d3, &p3, dq3, NULL, NULL, NULL, NULL, dd3) == PHYS_ERR_ARG);
    CHECK_MSG(strstr(d3->lastwarning, "no geometry derivative that reproduces it"), "message: %s", d3->lastwarning);
    d3->contact[0].feature[1] = f0, d3->contact[1].feature[1] = f1;
    d3->contact[3].pairout = 5;
    CHECK(phys_constraint_jvp(m3, d3, &p3, dq3, NULL, NULL, NULL, NULL, dd3) == PHYS_ERR_ARG);
    CHECK_MSG(strstr(d3->lastwarning, "its record (output 5"), "message: %s", d3->lastwarning);
    free(dq3), free(dd3);
    phys_stack_free(d3, mark3);
    phys_free_data(d3);
    phys_free_model(m3);
  }

  physConstraintProblem bad = p;
  bad.con = NULL;   // a problem without its contacts
  CHECK(phys_constraint_vjp(m, d, &bad, NULL, NULL, gamma, qbar) == PHYS_ERR_ARG);
  CHECK(strstr(d->lastwarning, "is not the one of d") != NULL);
  CHECK(phys_constraint_size_vjp(m, d, &p, 99, NULL, NULL, gamma, qbar) == PHYS_ERR_ARG);
  CHECK(phys_constraint_jvp(m, d, &p, NULL, NULL, NULL, NULL, NULL, dd) == PHYS_ERR_ARG);
  CHECK(phys_constraint_jvp(m, d, &p, dq, NULL, NULL, dd, NULL, NULL) == PHYS_ERR_ARG);   // dJ_beta without beta
  CHECK(phys_constraint_jacobian(m, d, &p, NULL, NULL, NULL, qbar, NULL) == PHYS_ERR_ARG);   // without alpha
  CHECK(phys_stack_mark(d) == inuse);   // the calls leave nothing in the arena
  free(dq), free(qbar), free(gamma), free(dd);
  phys_stack_free(d, mark);
  phys_free_data(d);
  phys_free_model(m);
}

// issue 14 item 2: the derivative in a learned shape's vertices is for its contacts with planes only: the box of
// BOX_BOX loaded as a learned mesh (vertices:top) on the table box is refused (PHYS_ERR_ARG) with the reason
// (plane contacts: test_step_contact_deriv.c's test_vertices)
static void test_vertices_refused(void) {
  const char* geoms[1] = {"top"};
  physLoadOptions opt = {0};
  opt.vertex_geoms = geoms, opt.nvertex_geoms = 1;
  physModel* m = load_xml_opt(
      "<mujoco><compiler angle='radian'/><worldbody><geom name='table' type='box' size='0.5 0.5 0.1'/>"
      "<body pos='0.1 -0.05 0.199' euler='0.0003 -0.0002 0.3'><freejoint/>"
      "<geom name='top' type='box' size='0.1 0.08 0.1'/></body></worldbody></mujoco>", &opt);
  physData* d = phys_make_data(m);
  const char* spec[1] = {"vertices:top"};
  physParamTable t;
  CHECK(phys_param_table_build(&t, m, spec, 1, NULL) == PHYS_OK);
  double xb[12] = {0}, tb[24];
  xb[2] = 1;
  CHECK(phys_step_param_vjp(m, d, &t, xb, tb) == PHYS_ERR_ARG);
  CHECK_MSG(strstr(d->lastwarning, "of learned geom 'top' with the box 'table': derivatives with respect to learned "
                   "vertices are for contacts with planes only"), "%s", d->lastwarning);
  phys_param_table_free(&t);
  phys_free_data(d);
  phys_free_model(m);
}

int main(void) {
  test_vertices_refused();
  physRng rng;
  phys_rng_seed(&rng, 20261122);
  double ex[3] = {1, 0, 0}, ob[3] = {0.3, -0.5, 0.8};
  scene_free_on_plane("sphere on a plane", "sphere", "0.1", ob, 0.9, 2e-3, 1, &rng);
  // on an edge exactly (the corners' depths tie up to rounding), flat and on an edge tilted by ~1e-4 rad (they
  // differ by ~1e-5 m), and exactly flat on the tilted plane (the 4 corners' depths tie up to rounding: each
  // contact is differentiated at the corner collision recorded for it)
  double ez2[3] = {2e-4, 1e-4, 1}, ex2[3] = {1, 0, 3e-4}, ez[3] = {0, 0, 1};
  scene_free_on_plane("box exactly flat on a tilted plane", "box", "0.2 0.1 0.05", ez, 0.5, 1e-3, 4, &rng);
  scene_free_on_plane("box exactly on an edge", "box", "0.2 0.1 0.05", ex, 0.4, 1e-3, 2, &rng);
  scene_free_on_plane("box flat on a plane", "box", "0.2 0.1 0.05", ez2, 0.5, 1e-3, 4, &rng);
  scene_free_on_plane("box on an edge", "box", "0.2 0.1 0.05", ex2, 0.4, 1e-3, 2, &rng);
  scene_free_on_plane("box on a corner", "box", "0.2 0.1 0.05", ob, 0.7, 1e-3, 1, &rng);
  scene_free_on_plane("capsule tilted on a plane", "capsule", "0.05 0.2", ob, 0.6, 2e-3, 1, &rng);
  scene_free_on_plane("capsule flat on a plane", "capsule", "0.05 0.2", ex, M_PI / 2, 2e-3, 2, &rng);
  double xa[3] = {0.1, 0.2, 0.3}, xb[3] = {0.25, 0.3, 0.4}, aa[4] = {0.3, 1, 0.2, 0.5}, ab[4] = {1, -0.2, 0.4, 1.1};
  scene_two_free("two spheres", "sphere", "0.1", "sphere", "0.12", xa, aa, xb, ab, 1, &rng);
  double xc[3] = {0.02, 0.03, 0.09}, ac[4] = {0.1, 1, 0, 1.5}, ad[4] = {1, 0.1, 0, -1.4}, x0[3] = {0, 0, 0};
  scene_two_free("capsule-capsule", "capsule", "0.05 0.2", "capsule", "0.06 0.15", x0, ac, xc, ad, 1, &rng);
  scene_two_free("capsule-sphere (swapped order)", "capsule", "0.05 0.2", "sphere", "0.1", xa, aa, xb, ab, 1, &rng);
  scene_xml("cylinder rim - cube corner (margin)", CYL_CUBE, PHYS_CONTACT_LCP, 0, 0, 1, &rng);
  scene_xml("ellipsoid - box corner (margin)", ELL_BOX, PHYS_CONTACT_LCP, 0, 0, 1, &rng);
  scene_xml("ellipsoid - ellipsoid (margin)", ELL_ELL, PHYS_CONTACT_LCP, 0, 0, 1, &rng);
  scene_xml("ccp: sphere sliding within the envelope", CCP_SPHERE, PHYS_CONTACT_CCP, 2, -1e-3, 1, &rng);
  scene_xml("ccp: box sliding within the envelope", CCP_BOX, PHYS_CONTACT_CCP, 2, -1e-4, 4, &rng);
  scene_xml("<pair> b-a with a margin", PAIR_FLIP, PHYS_CONTACT_LCP, 0, 0, 1, &rng);
  scene_xml("box on a box", BOX_BOX, PHYS_CONTACT_LCP, 0, 0, 4, &rng);
  scene_xml("box defined before the floor", BOX_BEFORE_FLOOR, PHYS_CONTACT_LCP, 0, 0, 4, &rng);
  scene_xml("sphere on a tilted box", SPHERE_BOX, PHYS_CONTACT_LCP, 0, 0, 1, &rng);
  scene_xml("cylinder on a plane", CYL_PLANE, PHYS_CONTACT_LCP, 0, 2e-3, 1, &rng);
  scene_xml("ellipsoid on a plane", ELL_PLANE, PHYS_CONTACT_LCP, 0, 2e-3, 1, &rng);
  scene_xml("sphere against a cylinder", SPHERE_CYL, PHYS_CONTACT_LCP, 0, 0, 1, &rng);
  scene_xml("branches of one tree", BRANCHES, PHYS_CONTACT_LCP, 0, 0, 3, &rng);
  scene_hulls(&rng);
  scene_chain(&rng);
  scene_elbow(&rng);
  scene_humanoid(&rng);
  test_refusals();
  return test_done();
}
