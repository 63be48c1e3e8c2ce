// test_penalty_deriv.c - derivatives of the penalty contact step (src/grad/penalty_deriv.c), through the public
// entry points phys_step_jacobian, phys_step_vjp, phys_step_param_jacobian, phys_step_param_vjp (dispatch):
//  1. d eps / d zeta of the clamped spring-damper's restitution against four-point central differences
//     (under- and overdamped);
//  2. the replayed step: v + dt d->qacc after phys_step_jacobian equals phys_step's v+ bit for bit (same
//     contacts, coefficients and number of solves);
//  3. A, B against four-point central differences of phys_step (phys_step_jacobian_fd at h and 2h; h = 1e-5
//     in q, 1e-4 in v and u) and P against four-point central differences of phys_step under phys_param_set
//     (step 1e-4 max(1, |theta|); with size:GEOM and pos:BODY, the contact geometry's parameters), relative 1e-6 with a floor of 1e-4 of max(block max, |x+|)
//     (grad_models.h), on: a ball resting, a ball hitting the plane while sliding and spinning (friction
//     re-evaluated, 3 solves), a box sliding and turning on its 4 bottom corners, a box tumbling on one
//     corner, two balls pressed together in the air (the dense factorization), two balls head-on at friction 0, the elbow of the toss data
//     bent on the floor, a hinge and a slide beyond their limits (implicit limit springs, no contact), and
//     MuJoCo's humanoid lying on the floor (contacts and active limits).
//     States are picked away from the model's switches, and the test asserts it: no pair of geoms is within
//     20 h of touching or of separating, no penetrating contact separates (f_n >= k depth > 0 at v), and
//     every tangential speed is 0 or >= 10 v_slip (sticking contacts at rest stay below v_slip / 2 under
//     the steps in v);
//  4. dot-product tests: phys_step_vjp's xbar and ubar equal A' y and B' y entrywise for a random y (to 1e-12
//     of sum_i |A_ij y_i|), A and B coming from the forward mode (columns) and the VJP from the reverse mode:
//     two independent linearizations of the same tape. P is built from reverse passes (rows), so
//     phys_step_param_vjp = P' y only checks that the entry points reach the same code; item 3 checks P.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collision.h"
#include "contact.h"
#include "grad/grad_models.h"
#include "params.h"
#include "penalty_deriv.h"
#include "spec.h"
#include "urdf.h"

// four-point central differences from steps h and 2h: h = 1e-5 in q, where the geometry makes higher
// derivatives large (tilting the lying humanoid: its two-point d(v+)/d(tilt) errs by 3e-6 relative at
// h = 1e-5, 1e-3 at 1e-4), VH = 1e-4 in v and u and PH = 1e-4 relative in theta, which enter the step
// almost linearly, so that rounding dominates (the humanoid's d(v+)/dv errs by 3e-6 at 1e-5, 2e-8 at 1e-4)
static const double g_h = 1e-5;
#define FD_H g_h
#define FD_VH 1e-4
#define FD_PH 1e-4

//---------------------------------------------------------------------------------------------------------
// models

// write xml to a temporary file and load it with penalty contact
static physModel* load_xml(const char* xml) {
  char path[] = "/tmp/test_penalty_deriv_XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  if (fd < 0) exit(2);
  FILE* f = fdopen(fd, "w");
  fputs(xml, f);
  fclose(f);
  char file[64];
  snprintf(file, sizeof file, "%s.xml", path);
  rename(path, file);
  physModel* m = gm_load(file, 0);
  unlink(file);
  m->opt.contact = PHYS_CONTACT_PENALTY;
  return m;
}

static const char* const BALL =
    "<mujoco>\n"
    "  <option timestep='0.001'/>\n"
    "  <worldbody>\n"
    "    <geom name='floor' type='plane' size='5 5 .1' friction='0.3'/>\n"
    "    <body name='ball' pos='0 0 1'>\n"
    "      <freejoint/>\n"
    "      <geom name='ball' type='sphere' size='.1' mass='1' friction='0.5'/>\n"
    "    </body>\n"
    "  </worldbody>\n"
    "  <custom>\n"
    "    <numeric name='physid:restitution:floor' data='0'/>\n"
    "    <numeric name='physid:restitution:ball' data='0.6'/>\n"
    "  </custom>\n"
    "</mujoco>\n";

static const char* const BOX =
    "<mujoco>\n"
    "  <option timestep='0.001'/>\n"
    "  <worldbody>\n"
    "    <geom name='floor' type='plane' size='5 5 .1' friction='0.2'/>\n"
    "    <body name='box' pos='0 0 1'>\n"
    "      <freejoint/>\n"
    "      <geom name='box' type='box' size='.1 .08 .06' mass='1.3' friction='0.6'/>\n"
    "    </body>\n"
    "  </worldbody>\n"
    "  <custom>\n"
    "    <numeric name='physid:restitution:box' data='0.3'/>\n"
    "  </custom>\n"
    "</mujoco>\n";

static const char* const TWO_BALLS =
    "<mujoco>\n"
    "  <option timestep='0.001' gravity='0 0 0'/>\n"
    "  <worldbody>\n"
    "    <body name='a' pos='0 0 1'>\n"
    "      <freejoint/>\n"
    "      <geom name='a' type='sphere' size='.1' mass='1' friction='0.4'/>\n"
    "    </body>\n"
    "    <body name='b' pos='0.2 0 1'>\n"
    "      <freejoint/>\n"
    "      <geom name='b' type='sphere' size='.15' mass='2' friction='0.7'/>\n"
    "    </body>\n"
    "  </worldbody>\n"
    "  <custom>\n"
    "    <numeric name='physid:restitution:a' data='0.9'/>\n"
    "  </custom>\n"
    "</mujoco>\n";

static const char* const HINGE =
    "<mujoco>\n"
    "  <option timestep='0.002'/>\n"
    "  <worldbody>\n"
    "    <body name='arm' pos='0 0 1'>\n"
    "      <joint name='hinge' type='hinge' axis='0 1 0' limited='true' range='-0.5 0.5' damping='0.1'/>\n"
    "      <geom name='arm' type='capsule' fromto='0 0 0 0.5 0 0' size='0.05' mass='1'/>\n"
    "      <body name='tip' pos='0.5 0 0'>\n"
    "        <joint name='slide' type='slide' axis='1 0 0' limited='true' range='-0.1 0.1'/>\n"
    "        <geom name='tip' type='sphere' size='0.05' mass='0.3'/>\n"
    "      </body>\n"
    "    </body>\n"
    "  </worldbody>\n"
    "  <actuator><motor name='motor' joint='hinge' gear='2'/></actuator>\n"
    "</mujoco>\n";

// the elbow of the toss data (URDF, floating base: free joint + hinge) with a floor plane added
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
  m->opt.contact = PHYS_CONTACT_PENALTY;
  m->geom_friction[3 * phys_name2id(m, "geom", "floor")] = 0.1;   // the elbow's friction decides (no tie)
  return m;
}

// free joint jnt at position p, orientation axis-angle
static void set_free(const physModel* m, physData* d, int jnt, const double p[3], const double axis[3],
                     double angle) {
  double* q = d->qpos + m->jnt_qposadr[jnt];
  q[0] = p[0], q[1] = p[1], q[2] = p[2];
  phys_axisangle2quat(q + 3, axis, angle);
}

// lower the free joint jnt (world z) so that the deepest contact has dist = -depth (found with margin 1)
static void sink(physModel* m, physData* d, int jnt, double depth) {
  double* keep = malloc(sizeof(double) * (size_t)m->ngeom);
  for (int g = 0; g < m->ngeom; g++) keep[g] = m->geom_margin[g], m->geom_margin[g] = 1;
  phys_kinematics(m, d);
  phys_collision(m, d);
  double lo = INFINITY;
  for (int i = 0; i < d->ncon; i++) lo = fmin(lo, d->contact[i].dist);
  for (int g = 0; g < m->ngeom; g++) m->geom_margin[g] = keep[g];
  free(keep);
  d->qpos[m->jnt_qposadr[jnt] + 2] -= lo + depth;
  d->ncon = 0;
}

//---------------------------------------------------------------------------------------------------------
// checks

// 1 if contact c's torsional and rolling slips (issue 16: |w_n|, |w_t| of the relative angular velocity w, each
// regularized at v_slip, its only switch) are away from v_slip by v_slip / 2 and by twice the v steps' reach
// (2 VH times a column of the relative rotation Jacobian), for the coefficients the contact has
static int angular_margins(const physModel* m, physData* d, const physContact* c) {
  int nv = m->nv, ok = 1;
  double ang[2], w[3] = {0, 0, 0}, vs = m->opt.penalty_vslip, lever = 0;
  phys_contact_friction_ang(m, c, ang);
  if (!(ang[0] > 0 || ang[1] > 0)) return 1;
  double* r1 = malloc(sizeof(double) * 3 * (size_t)nv);
  double* r0 = malloc(sizeof(double) * 3 * (size_t)nv);
  phys_jac(m, d, c->pos, m->geom_bodyid[c->geom[1]], NULL, r1);
  phys_jac(m, d, c->pos, m->geom_bodyid[c->geom[0]], NULL, r0);
  for (int j = 0; j < nv; j++) {
    double col[3] = {r1[j] - r0[j], r1[nv + j] - r0[nv + j], r1[2 * nv + j] - r0[2 * nv + j]};
    for (int r = 0; r < 3; r++) w[r] += col[r] * d->qvel[j];
    lever = fmax(lever, phys_norm3(col));
  }
  double wn = phys_dot3(w, c->frame), wt[3] = {w[0] - wn * c->frame[0], w[1] - wn * c->frame[1], w[2] - wn * c->frame[2]};
  double slips[2] = {fabs(wn), phys_norm3(wt)};
  for (int k = 0; k < 2; k++) {
    if (!(ang[k] > 0)) continue;
    if (!(fabs(slips[k] - vs) >= fmax(0.5 * vs, 4 * FD_VH * lever))) ok = 0;
  }
  free(r1);
  free(r0);
  return ok;
}

// the state's margins from the switches (file comment, item 3), contacts found with every geom margin raised
// by 20 h (so that pairs about to touch are seen too); returns 1 if they hold
static int check_margins(const char* name, physModel* m, physData* d) {
  double* keep = malloc(sizeof(double) * (size_t)m->ngeom);
  for (int g = 0; g < m->ngeom; g++) keep[g] = m->geom_margin[g], m->geom_margin[g] += 20 * g_h;
  phys_kinematics(m, d);
  phys_com_pos(m, d);
  phys_com_vel(m, d);
  phys_collision(m, d);
  for (int g = 0; g < m->ngeom; g++) m->geom_margin[g] = keep[g];
  free(keep);
  int nv = m->nv, ok = 1;
  double* jp = malloc(sizeof(double) * 3 * (size_t)nv);
  double* jq = malloc(sizeof(double) * 3 * (size_t)nv);
  for (int i = 0; i < d->ncon; i++) {
    const physContact* c = d->contact + i;
    if (fabs(c->dist) < 20 * g_h) ok = 0;
    if (!(c->dist < 0)) continue;
    // relative point velocity: not separating (f_n >= k depth > 0), tangential part 0 or above 10 v_slip
    double vr[3] = {0, 0, 0};
    phys_jac(m, d, c->pos, m->geom_bodyid[c->geom[1]], jp, NULL);
    phys_jac(m, d, c->pos, m->geom_bodyid[c->geom[0]], jq, NULL);
    for (int r = 0; r < 3; r++)
      for (int j = 0; j < nv; j++) vr[r] += (jp[r * nv + j] - jq[r * nv + j]) * d->qvel[j];
    double vn = phys_dot3(vr, c->frame);
    double vt[3] = {vr[0] - vn * c->frame[0], vr[1] - vn * c->frame[1], vr[2] - vn * c->frame[2]};
    double st = phys_norm3(vt), lever = 0;
    if (vn > 0 || (st > 0 && st < 10 * m->opt.penalty_vslip)) ok = 0;
    // a sticking contact stays below v_slip under the v steps (2 VH times a column of J_rel)
    for (int j = 0; j < nv; j++) {
      double col[3] = {jp[j] - jq[j], jp[nv + j] - jq[nv + j], jp[2 * nv + j] - jq[2 * nv + j]};
      lever = fmax(lever, phys_norm3(col));
    }
    if (st == 0 && !(2 * FD_VH * lever < 0.5 * m->opt.penalty_vslip)) ok = 0;
    ok = ok && angular_margins(m, d, c);
  }
  free(jp);
  free(jq);
  d->ncon = 0;
  CHECK_MSG(ok, "%s: state too close to a switch of the penalty model", name);
  return ok;
}

// x+ (q+ (-) q0, v+ - v0) of phys_step from d's state in e with theta (set into m)
static void param_step(physModel* m, const physData* d, physData* e, const physParamTable* t, const double* th,
                       const double* q0, const double* v0, double* res) {
  int nv = m->nv;
  CHECK(phys_param_set(t, m, th) == PHYS_OK);
  memcpy(e->qpos, d->qpos, sizeof(double) * (size_t)m->nq);
  memcpy(e->qvel, d->qvel, sizeof(double) * (size_t)nv);
  memcpy(e->ctrl, d->ctrl, sizeof(double) * (size_t)m->nu);
  e->ncon = 0;
  e->time = d->time;
  phys_step(m, e);
  if (q0) {
    phys_difference_pos(m, res, 1, q0, e->qpos);
    for (int i = 0; i < nv; i++) res[nv + i] = e->qvel[i] - v0[i];
  }
}

// 1 if column c of t belongs to a size:GEOM or pos:BODY entry (a length of the contact geometry)
static int geometric_column(const physParamTable* t, int c) {
  for (int e = 0; e < t->n; e++)
    if (c >= t->param[e].adr && c < t->param[e].adr + t->param[e].size)
      return t->param[e].kind == PHYS_PAR_SIZE || t->param[e].kind == PHYS_PAR_POS;
  return 0;
}

// P by four-point central differences of phys_step under phys_param_set, step PH s_c in theta_c with
// s_c = max(1, |theta_c|) (penalty stiffness is 1e4), s_c = 0.1 for the geometry's lengths (size, pos: a
// 1e-4 m step on a lying humanoid's shin leaves the stencil's h^4 term at 1.4e-6 relative, 1e-5 m well
// below); returns P's columns times s_c (and the analytic P's columns scaled alike in Pa), so that both are
// derivatives in the steps' units
static void param_fd(physModel* m, physData* d, const physParamTable* t, double* P, double* Pa) {
  int nv = m->nv, n2 = 2 * nv, nt = t->ntheta;
  physData* e = phys_make_data(m);
  double* th = malloc(sizeof(double) * (size_t)nt);
  double* th0 = malloc(sizeof(double) * (size_t)nt);
  double* q0 = malloc(sizeof(double) * (size_t)m->nq);
  double* v0 = malloc(sizeof(double) * (size_t)nv);
  double* r = malloc(sizeof(double) * 4 * (size_t)n2);
  phys_param_get(t, m, th0);
  memcpy(th, th0, sizeof(double) * (size_t)nt);
  param_step(m, d, e, t, th, NULL, NULL, NULL);
  memcpy(q0, e->qpos, sizeof(double) * (size_t)m->nq);
  memcpy(v0, e->qvel, sizeof(double) * (size_t)nv);
  for (int c = 0; c < nt; c++) {
    double sc = geometric_column(t, c) ? 0.1 : fmax(1, fabs(th0[c])), off[4] = {2, 1, -1, -2};
    for (int k = 0; k < 4; k++) {
      th[c] = th0[c] + off[k] * FD_PH * sc;
      param_step(m, d, e, t, th, q0, v0, r + (size_t)k * n2);
    }
    th[c] = th0[c];
    for (int i = 0; i < n2; i++) {
      P[(size_t)i * nt + c] = gm_fd4(r[i], r[n2 + i], r[2 * n2 + i], r[3 * n2 + i], FD_PH);
      Pa[(size_t)i * nt + c] *= sc;
    }
  }
  CHECK(phys_param_set(t, m, th0) == PHYS_OK);
  free(th);
  free(th0);
  free(q0);
  free(v0);
  free(r);
  phys_free_data(e);
}

// columns c0 .. c0+nc of the rows r0 .. r0+nr of M (ld) into out
static void block(double* out, const double* M, int ld, int r0, int c0, int nr, int nc) {
  for (int i = 0; i < nr; i++)
    for (int j = 0; j < nc; j++) out[i * nc + j] = M[(size_t)(r0 + i) * ld + c0 + j];
}

// compare the (q+, v+) x (input) blocks of an analytic matrix against its reference, entries relative to
// max(|entry|, GM_FLOOR max(block max, fscale)) with fscale the state's scale |x+| (rounding in the
// differences is a fraction of |x+|, grad_models.h); returns the worst error
static double compare(const char* scene, const char* cols, const physModel* m, const double* X, const double* R,
                      double fscale, int c0, int nc, int ld) {
  int nv = m->nv;
  double* a = malloc(sizeof(double) * (size_t)nv * (size_t)(nc + 1));
  double* b = malloc(sizeof(double) * (size_t)nv * (size_t)(nc + 1));
  double worst = 0;
  for (int r = 0; r < 2; r++) {
    char what[200];
    snprintf(what, sizeof what, "%s: d%s+/d%s", scene, r == 0 ? "q" : "v", cols);
    block(a, X, ld, r * nv, c0, nv, nc);
    block(b, R, ld, r * nv, c0, nv, nc);
    worst = fmax(worst, gm_compare(what, a, b, nv, nc, fscale, GM_RTOL));
  }
  free(a);
  free(b);
  return worst;
}

static double g_worst_a = 0, g_worst_p = 0, g_worst_dot = 0;

// every check of item 2-4 at d's state; specs: the parameter table
static void check_scene(const char* name, physModel* m, physData* d, const char* const* spec, int nspec,
                        physRng* rng) {
  int nv = m->nv, n2 = 2 * nv, nu = m->nu;
  check_margins(name, m, d);
  CHECK_MSG(phys_penalty_deriv_applies(m, d), "%s: no penalty constraint at the state", name);
  double* A = calloc((size_t)n2 * n2, sizeof(double));
  double* Af = calloc((size_t)n2 * n2, sizeof(double));
  double* B = calloc((size_t)n2 * (nu + 1), sizeof(double));
  double* Bf = calloc((size_t)n2 * (nu + 1), sizeof(double));
  CHECK_MSG(phys_step_jacobian(m, d, A, B) == PHYS_OK, "%s: phys_step_jacobian refused", name);

  // the replayed step is phys_step's (with penetrating contacts: the same L' D L solves; without, the step
  // takes one articulated-body pass, equal to rounding)
  physData* e = phys_make_data(m);
  memcpy(e->qpos, d->qpos, sizeof(double) * (size_t)m->nq);
  memcpy(e->qvel, d->qvel, sizeof(double) * (size_t)nv);
  memcpy(e->ctrl, d->ctrl, sizeof(double) * (size_t)nu);
  e->time = d->time;
  phys_step(m, e);
  int same = 1, ncon = 0;
  for (int i = 0; i < e->ncon; i++) ncon += e->contact[i].dist < 0;
  for (int i = 0; i < nv; i++) {
    double vp = d->qvel[i] + m->opt.timestep * d->qacc[i];
    same = same && (ncon > 0 ? vp == e->qvel[i] : fabs(vp - e->qvel[i]) <= 1e-13 * (1 + fabs(vp)));
  }
  CHECK_MSG(same, "%s: replayed v+ differs from phys_step's", name);
  double fscale = fmax(gm_maxabs(e->qpos, m->nq), gm_maxabs(e->qvel, nv));
  printf("%s: %d contacts (%d penetrating), %d limits\n", name, e->ncon, ncon, e->nlimit);
  phys_free_data(e);

  // A, B against four-point central differences: the twin at h and 2h, (4 J_h - J_2h) / 3; the q columns
  // from h = FD_H, the v and u columns from h = FD_VH
  double* A1 = calloc((size_t)n2 * n2, sizeof(double));
  double* A2 = calloc((size_t)n2 * n2, sizeof(double));
  double* B2 = calloc((size_t)n2 * (nu + 1), sizeof(double));
  CHECK(phys_step_jacobian_fd(m, d, FD_H, A1, NULL) == PHYS_OK);
  CHECK(phys_step_jacobian_fd(m, d, 2 * FD_H, A2, NULL) == PHYS_OK);
  for (int i = 0; i < n2 * n2; i++) Af[i] = (4 * A1[i] - A2[i]) / 3;   // q columns kept below
  CHECK(phys_step_jacobian_fd(m, d, FD_VH, A1, nu > 0 ? Bf : NULL) == PHYS_OK);
  CHECK(phys_step_jacobian_fd(m, d, 2 * FD_VH, A2, nu > 0 ? B2 : NULL) == PHYS_OK);
  for (int i = 0; i < n2; i++)
    for (int j = nv; j < n2; j++) Af[i * n2 + j] = (4 * A1[i * n2 + j] - A2[i * n2 + j]) / 3;
  for (int i = 0; i < n2 * nu; i++) Bf[i] = (4 * Bf[i] - B2[i]) / 3;
  free(A1);
  free(A2);
  free(B2);
  double wa = compare(name, "q", m, A, Af, fscale, 0, nv, n2);
  wa = fmax(wa, compare(name, "v", m, A, Af, fscale, nv, nv, n2));
  if (nu > 0) wa = fmax(wa, compare(name, "u", m, B, Bf, fscale, 0, nu, nu));
  g_worst_a = fmax(g_worst_a, wa);

  // reverse entry points
  double* y = malloc(sizeof(double) * (size_t)n2);
  double* xb = malloc(sizeof(double) * (size_t)n2);
  double* ub = malloc(sizeof(double) * (size_t)(nu + 1));
  gm_rand_vec(rng, y, n2);
  CHECK(phys_step_vjp(m, d, y, xb, ub) == PHYS_OK);
  double wdot = 0;
  for (int j = 0; j < n2 + nu; j++) {
    const double* M = j < n2 ? A : B;
    int ld = j < n2 ? n2 : nu, c = j < n2 ? j : j - n2;
    double s = 0, t = 0, r = j < n2 ? xb[j] : ub[c];
    for (int i = 0; i < n2; i++) s += M[(size_t)i * ld + c] * y[i], t += fabs(M[(size_t)i * ld + c] * y[i]);
    CHECK_NEAR(r, s, 1e-12 * t + 1e-300);
    if (t > 0) wdot = fmax(wdot, fabs(r - s) / t);
  }
  g_worst_dot = fmax(g_worst_dot, wdot);

  // P
  double wp = 0;
  if (nspec > 0) {
    physParamTable t;
    physLog log;
    memset(&log, 0, sizeof log);
    CHECK_MSG(phys_param_table_build(&t, m, spec, nspec, &log) == PHYS_OK, "%s", log.error);
    int nt = t.ntheta;
    double* P = calloc((size_t)n2 * nt, sizeof(double));
    double* Pf = calloc((size_t)n2 * nt, sizeof(double));
    double* tb = calloc((size_t)nt, sizeof(double));
    double* Ps = calloc((size_t)n2 * nt, sizeof(double));
    CHECK_MSG(phys_step_param_jacobian(m, d, &t, P) == PHYS_OK, "%s: phys_step_param_jacobian refused", name);
    memcpy(Ps, P, sizeof(double) * (size_t)n2 * nt);
    param_fd(m, d, &t, Pf, Ps);
    for (int e2 = 0; e2 < t.n; e2++) {
      const physParam* p = t.param + e2;
      wp = fmax(wp, compare(name, p->name, m, Ps, Pf, fscale, p->adr, p->size, nt));
    }
    free(Ps);
    CHECK(phys_step_param_vjp(m, d, &t, y, tb) == PHYS_OK);
    for (int j = 0; j < nt; j++) {
      double s = 0, sc = 0;
      for (int i = 0; i < n2; i++) s += P[(size_t)i * nt + j] * y[i], sc += fabs(P[(size_t)i * nt + j] * y[i]);
      CHECK_NEAR(tb[j], s, 1e-12 * sc + 1e-300);
    }
    free(P);
    free(Pf);
    free(tb);
    phys_param_table_free(&t);
  }
  g_worst_p = fmax(g_worst_p, wp);
  printf("  worst relative error: A, B %.2g; P %.2g\n", wa, wp);
  free(A);
  free(Af);
  free(B);
  free(Bf);
  free(y);
  free(xb);
  free(ub);
}

//---------------------------------------------------------------------------------------------------------
// scenes

static void scene_ball(physRng* rng) {
  physModel* m = load_xml(BALL);
  physData* d = phys_make_data(m);
  d->time = 1;   // not time 0: no interpenetration warning
  // (height:floor: issue 14 s29, the plane's offset; through phys_constraint_param_vjp_matrix like size and pos)
  const char* spec[] = {"friction:ball", "restitution:ball", "penalty:stiffness", "inertia:ball", "size:ball",
                        "height:floor"};
  double p[3] = {0.1, -0.2, 0}, z[3] = {0, 0, 1};
  // resting: at rest 0.5 mm deep (friction viscous, one solve)
  set_free(m, d, 0, p, z, 0.3);
  sink(m, d, 0, 5e-4);
  check_scene("ball resting", m, d, spec, 6, rng);
  // hitting the plane while sliding and spinning (C re-evaluated: 3 solves)
  sink(m, d, 0, 2e-3);
  double v[6] = {0.4, -0.3, -1.2, 2, -1, 3};
  memcpy(d->qvel, v, sizeof v);
  check_scene("ball bouncing, sliding", m, d, spec, 6, rng);
  phys_free_data(d);
  phys_free_model(m);
}

static const char* const BOX_SPEC[] = {"friction:box", "restitution:box", "penalty:stiffness", "inertia:box",
                                       "size:box"};

// the box of BOX tumbling on a corner, 1.5 mm deep: check_scene under `name` with the table spec
static void box_tumbling(physModel* m, physData* d, const char* name, const char* const* spec, int nspec,
                         physRng* rng) {
  double p[3] = {0.2, 0.1, 0}, ax[3] = {0.3, 1, 0.2};
  set_free(m, d, 0, p, ax, 0.5);
  sink(m, d, 0, 1.5e-3);
  double w[6] = {0.3, -0.1, -0.4, 3, -2, 1};
  memcpy(d->qvel, w, sizeof w);
  check_scene(name, m, d, spec, nspec, rng);
}

// the box of BOX sliding and turning on its four floor corners, 0.8 mm deep: likewise
static void box_sliding(physModel* m, physData* d, const char* name, const char* const* spec, int nspec,
                        physRng* rng) {
  double p[3] = {0.2, 0.1, 0}, z[3] = {0, 0, 1};
  set_free(m, d, 0, p, z, 0.4);
  sink(m, d, 0, 8e-4);
  double v[6] = {0.5, 0.2, -0.05, 0, 0, 0.7};
  memcpy(d->qvel, v, sizeof v);
  check_scene(name, m, d, spec, nspec, rng);
}

static void scene_box(physRng* rng) {
  physModel* m = load_xml(BOX);
  physData* d = phys_make_data(m);
  d->time = 1;   // not time 0: no interpenetration warning
  box_sliding(m, d, "box sliding and turning (4 corners)", BOX_SPEC, 5, rng);
  box_tumbling(m, d, "box tumbling on a corner", BOX_SPEC, 5, rng);
  phys_free_data(d);
  phys_free_model(m);
}

// the box at dt = 30 ms: k_c dt^2 = 9 kg > 4 m >= 4 m_e, so every contact's damping is the step's stability
// floor k_c dt - 2 m_e / dt (phys_penalty_damping), not the restitution's 2 zeta sqrt(k_c m_e): its
// derivatives through m_e (q, inertia, size) and k_c, and none through the restitution
static void scene_box_floor(physRng* rng) {
  physModel* m = load_xml(BOX);
  m->opt.timestep = 0.03;
  physData* d = phys_make_data(m);
  d->time = 1;   // not time 0: no interpenetration warning
  box_tumbling(m, d, "box on a corner, dt 30 ms (damping at the stability floor)", BOX_SPEC, 5, rng);
  phys_free_data(d);
  phys_free_model(m);
}

// the balls of TWO_BALLS overlapping 2 mm along a tilted line, closing and shearing
static void two_balls_pressed(const physModel* m, physData* d) {
  double u[3] = {0.8, 0.36, 0.48}, pa[3] = {0, 0, 1}, pb[3], z[3] = {0, 0, 1};
  for (int i = 0; i < 3; i++) pb[i] = pa[i] + (0.25 - 2e-3) * u[i];
  set_free(m, d, 0, pa, z, 0);
  set_free(m, d, 1, pb, z, 0.7);
  double v[12] = {0.5, 0.1, 0, 1, 0, -2, -0.3, 0.2, 0.1, 0, 3, 1};
  memcpy(d->qvel, v, sizeof v);
}

static void scene_two_balls(physRng* rng) {
  physModel* m = load_xml(TWO_BALLS);
  physData* d = phys_make_data(m);
  d->time = 1;   // not time 0: no interpenetration warning
  const char* spec[] = {"friction:b", "restitution:a", "penalty:stiffness", "mass:a", "mass:b"};
  two_balls_pressed(m, d);
  check_scene("two balls pressed (dense factor)", m, d, spec, 5, rng);
  phys_free_data(d);
  phys_free_model(m);
}

// the two balls head-on at friction 0 (issue 10 item 13: a frictionless contact has no tangential response in
// any model): overlap 2 mm along x, closing, the second ball drifting sideways and spinning
static void scene_two_balls_frictionless(physRng* rng) {
  physModel* m = load_xml(TWO_BALLS);
  for (int g = 0; g < m->ngeom; g++) m->geom_friction[3 * g] = 0;
  physData* d = phys_make_data(m);
  d->time = 1;
  const char* spec[] = {"restitution:a", "penalty:stiffness", "mass:a", "mass:b"};
  double pa[3] = {0, 0, 1}, pb[3] = {0.25 - 2e-3, 0, 1}, z[3] = {0, 0, 1};
  set_free(m, d, 0, pa, z, 0);
  set_free(m, d, 1, pb, z, 0);
  double v[12] = {1, 0, 0, 0, 0, 0, 0, 0.3, 0, 0, 0, 3};
  memcpy(d->qvel, v, sizeof v);
  check_scene("two balls head-on, friction 0", m, d, spec, 4, rng);
  phys_free_data(d);
  phys_free_model(m);
}

// a single free body of m (freed here) at p turned by angle about z, sunk depth deep, moving at v: the analytic
// dx+/dtheta of the one scalar entry spec at theta = 0 against the one-sided second-order difference
// (-3 x(0) + 4 x(h) - x(2h)) / 2h, relative to its largest entry, which must be > 1e-3 (theta moves the step)
static void check_right_derivative(physModel* m, const double p[3], double angle, double depth, const double v[6],
                                   const char* spec, const char* what) {
  physData* d = phys_make_data(m);
  d->time = 1;
  double z[3] = {0, 0, 1};
  set_free(m, d, 0, p, z, angle);
  sink(m, d, 0, depth);
  memcpy(d->qvel, v, 6 * sizeof(double));
  physParamTable t;
  physLog log = {0};
  CHECK_MSG(phys_param_table_build(&t, m, &spec, 1, &log) == PHYS_OK, "%s", log.error);
  int n2 = 2 * m->nv;
  double P[12], x1[12], x2[12], th = 0, h = 1e-6, worst = 0, pmax = 0;
  CHECK(m->nv == 6 && phys_step_param_jacobian(m, d, &t, P) == PHYS_OK);
  physData* e = phys_make_data(m);
  double q0[7], v0[6];
  param_step(m, d, e, &t, &th, NULL, NULL, NULL);
  memcpy(q0, e->qpos, sizeof q0);
  memcpy(v0, e->qvel, sizeof v0);
  th = h;
  param_step(m, d, e, &t, &th, q0, v0, x1);
  th = 2 * h;
  param_step(m, d, e, &t, &th, q0, v0, x2);
  th = 0;
  CHECK(phys_param_set(&t, m, &th) == PHYS_OK);
  for (int i = 0; i < n2; i++) pmax = fmax(pmax, fabs((4 * x1[i] - x2[i]) / (2 * h)));   // (x(0) = 0)
  for (int i = 0; i < n2; i++) worst = fmax(worst, fabs(P[i] - (4 * x1[i] - x2[i]) / (2 * h)) / pmax);
  printf("%s at %s 0: |dx+/dtheta| max %.3g, right-difference error %.2g\n", what, spec, pmax, worst);
  CHECK_MSG(pmax > 1e-3, "%s: the step does not depend on %s: |dx+/dtheta| = %g", what, spec, pmax);
  CHECK_MSG(worst < 1e-4, "%s: dx+/dtheta at %s 0 is not the right derivative: error %g", what, spec, worst);
  phys_param_table_free(&t);
  phys_free_data(e);
  phys_free_data(d);
  phys_free_model(m);
}

// issue 16: the ball of BALL with condim 6 and torsional and rolling friction 0.02, 0.01 m (penalty.c's angular
// rows): A, B, P at rest (every slip 0: viscous, "stick"), and sliding, spinning and rolling above v_slip (the
// coefficients re-evaluated: 3 solves); the torsional and rolling coefficients as parameters. lcp, cone and ccp
// (angular.c's rows) differentiate the same state (their checks: test_step_contact_angular.c)
static const char* const BALL6_SPEC[] = {"friction:ball", "torsion:ball", "rolling:ball", "penalty:stiffness",
                                         "inertia:ball", "height:floor"};

static void ball6(physModel* m) {
  m->geom_condim[1] = 6;
  m->geom_friction[3 * 1 + 1] = 0.02, m->geom_friction[3 * 1 + 2] = 0.01;
}

static void scene_ball_condim6(physRng* rng) {
  physModel* m = load_xml(BALL);
  physData* d = phys_make_data(m);
  ball6(m);
  d->time = 1;
  int n = 2 * m->nv;
  double* A = malloc(sizeof(double) * (size_t)(n * n));
  double p[3] = {0.1, -0.2, 0}, z[3] = {0, 0, 1};
  set_free(m, d, 0, p, z, 0.3);
  sink(m, d, 0, 5e-4);
  check_scene("ball condim 6 at rest (every slip 0)", m, d, BALL6_SPEC, 6, rng);
  sink(m, d, 0, 2e-3);
  double v[6] = {0.4, -0.3, -1.2, 2, -1, 3};
  memcpy(d->qvel, v, sizeof v);
  check_scene("ball condim 6 bouncing, sliding, spinning, rolling", m, d, BALL6_SPEC, 6, rng);
  // lcp, cone and ccp simulate the rows (src/contact/angular.c) and differentiate them
  // (tests/grad/test_step_contact_angular.c checks them)
  for (int c = PHYS_CONTACT_LCP; c <= PHYS_CONTACT_CCP; c++) {
    m->opt.contact = c;
    set_free(m, d, 0, p, z, 0.3);
    sink(m, d, 0, 5e-4);
    physStatus st = phys_step_jacobian(m, d, A, NULL);
    CHECK_MSG(st == PHYS_OK, "%s: status %d: %s", phys_contact_name(c), (int)st, d->lastwarning);
  }
  m->opt.contact = PHYS_CONTACT_PENALTY;
  free(A);
  phys_free_data(d);
  phys_free_model(m);
}

// the box of BOX with condim 6 (torsion 0.03, rolling 0.02 m): sliding and turning on its four corners (each its
// own angular rows), tumbling on a corner
static void scene_box_condim6(physRng* rng) {
  physModel* m = load_xml(BOX);
  physData* d = phys_make_data(m);
  m->geom_condim[1] = 6;
  m->geom_friction[3 * 1 + 1] = 0.03, m->geom_friction[3 * 1 + 2] = 0.02;
  d->time = 1;
  const char* spec[] = {"friction:box", "torsion:box", "rolling:box", "restitution:box", "inertia:box", "size:box"};
  box_sliding(m, d, "box condim 6 sliding and turning (4 corners)", spec, 6, rng);
  box_tumbling(m, d, "box condim 6 tumbling on a corner", spec, 6, rng);
  phys_free_data(d);
  phys_free_model(m);
}

// two balls of condim 6 pressed (a contact not with a plane: its normal, and so its angular rows, turn with both
// bodies); a size parameter with such a contact is refused, with a message
static void scene_two_balls_condim6(physRng* rng) {
  physModel* m = load_xml(TWO_BALLS);
  for (int g = 0; g < 2; g++) m->geom_condim[g] = 6;   // (no ties: a holds the torsion, b the rolling)
  m->geom_friction[1] = 0.015, m->geom_friction[2] = 0.01, m->geom_friction[4] = 0.01, m->geom_friction[5] = 0.02;
  physData* d = phys_make_data(m);
  d->time = 1;
  const char* spec[] = {"friction:b", "torsion:a", "rolling:b", "mass:a", "mass:b"};
  two_balls_pressed(m, d);
  check_scene("two balls condim 6 pressed", m, d, spec, 5, rng);
  physParamTable t;
  physLog log = {0};
  const char* size[] = {"size:a"};
  CHECK(phys_param_table_build(&t, m, size, 1, &log) == PHYS_OK);
  double P[24];
  d->lastwarning[0] = 0;
  physStatus st = phys_step_param_jacobian(m, d, &t, P);
  CHECK_MSG(st == PHYS_ERR_ARG && strstr(d->lastwarning, "torsional or rolling friction of the contact of geoms"),
            "status %d: %s", (int)st, d->lastwarning);
  phys_param_table_free(&t);
  phys_free_data(d);
  phys_free_model(m);
}

// the ball spinning and rolling at torsional friction 0 (rolling 0.01): dx+/dmu_spin is the right derivative
// (raising it from 0 brakes the spin), by check_right_derivative
static void scene_ball_torsion0(void) {
  physModel* m = load_xml(BALL);
  ball6(m);
  m->geom_friction[3 * 1 + 1] = m->geom_friction[1] = 0;   // (the ball's and the floor's: the pair's 0)
  double p[3] = {0.1, -0.2, 0}, v[6] = {0.2, -0.1, 0, 1, -2, 5};
  check_right_derivative(m, p, 0.3, 1e-3, v, "torsion:ball", "ball spinning and rolling");
}

// the box sliding at friction 0: dx+/dmu is the right derivative (raising mu from 0 decelerates the slide), by
// the one-sided second-order difference (-3 x(0) + 4 x(h) - x(2h)) / 2h (C = mu f_n / slip is linear in mu, so
// the right branch is smooth). The reverse pass once skipped a contact's friction terms when C = 0, which at
// mu = 0 dropped dC/dmu = f_n / slip too: the column was 0 and a fit that reached friction 0 stopped there.
static void scene_box_frictionless_param(void) {
  physModel* m = load_xml(BOX);
  for (int g = 0; g < m->ngeom; g++) m->geom_friction[3 * g] = 0;
  double p[3] = {0.2, 0.1, 0}, v[6] = {0.5, 0.2, -0.05, 0, 0, 0.7};
  check_right_derivative(m, p, 0.4, 8e-4, v, "friction:box", "box sliding");
}

static void scene_elbow(physRng* rng) {
  physModel* m = load_elbow();
  physData* d = phys_make_data(m);
  d->time = 1;   // not time 0: no interpenetration warning
  const char* spec[] = {"penalty:stiffness", "mass:elbow_1", "inertia:elbow_2", "pos:elbow_2"};
  double p[3] = {0.1, 0.2, 0.5}, ax[3] = {0.2, 1, 0.1};
  set_free(m, d, 0, p, ax, -0.1);
  d->qpos[7] = 0.2;
  sink(m, d, 0, 1.2e-3);
  for (int i = 0; i < m->nv; i++) d->qvel[i] = 0;
  d->qvel[0] = 0.4, d->qvel[1] = -0.2, d->qvel[2] = -0.3, d->qvel[4] = 1, d->qvel[6] = 0.5;
  check_scene("elbow bent on the floor", m, d, spec, 4, rng);
  phys_free_data(d);
  phys_free_model(m);
}

static void scene_hinge(physRng* rng) {
  physModel* m = load_xml(HINGE);
  physData* d = phys_make_data(m);
  d->time = 1;   // not time 0: no interpenetration warning
  // the motor given a gain, a bias and a velocity term (df/dv through the penalty step)
  m->actuator_gainprm[0] = 1.5, m->actuator_biasprm[0] = 0.1, m->actuator_biasprm[2] = -0.4;
  const char* spec[] = {"penalty:stiffness", "penalty:damping", "damping:hinge", "mass:arm", "gear:motor",
                        "gain:motor", "bias:motor"};
  d->qpos[0] = 0.55;    // beyond the upper limit, moving in
  d->qpos[1] = -0.12;   // beyond the lower limit of the slide
  d->qvel[0] = -0.3;
  d->qvel[1] = 0.2;
  d->ctrl[0] = 0.7;
  check_scene("hinge and slide beyond their limits", m, d, spec, 7, rng);
  phys_free_data(d);
  phys_free_model(m);
}

// MuJoCo's humanoid lying bent on the floor (capsules and spheres on the plane, limbs touching), at rest
static void scene_humanoid(physRng* rng) {
  if (access(GM_HUMANOID, R_OK) != 0) {
    printf("humanoid: %s not found, skipped\n", GM_HUMANOID);
    return;
  }
  physModel* m = gm_load(GM_HUMANOID, 0);
  m->opt.contact = PHYS_CONTACT_PENALTY;
  physData* d = phys_make_data(m);
  d->time = 1;
  const char* spec[] = {"penalty:stiffness", "mass:torso", "friction:floor", "size:torso", "pos:right_shin"};
  double y[3] = {0, 1, 0}, p[3] = {0, 0, 0.09};
  set_free(m, d, 0, p, y, -M_PI / 2 + 0.05);
  for (int k = 7; k < m->nq; k++) d->qpos[k] = 0.08 * sin(1.7 * k);
  sink(m, d, 0, 4e-3);   // the deepest contact 4 mm deep (penalty forces of a body resting, not 0.25 m)
  check_scene("humanoid lying bent on the floor", m, d, spec, 5, rng);
  phys_free_data(d);
  phys_free_model(m);
}

//---------------------------------------------------------------------------------------------------------
// restitution law

static void test_restitution_deriv(void) {
  const double zs[] = {0.05, 0.3, 0.7, 0.95, 1.2, 2, 4.5};
  double worst = 0;
  for (size_t i = 0; i < sizeof zs / sizeof zs[0]; i++) {
    double z = zs[i], h = 1e-3;
    double fd = gm_fd4(phys_penalty_restitution(z + 2 * h), phys_penalty_restitution(z + h),
                       phys_penalty_restitution(z - h), phys_penalty_restitution(z - 2 * h), h);
    double a = phys_penalty_restitution_deriv(z);
    worst = fmax(worst, fabs(a - fd) / fabs(fd));
    CHECK_REL(a, fd, 1e-8, 1e-6);
  }
  printf("d eps / d zeta: worst relative error %.2g\n", worst);
}

int main(void) {
  physRng rng;
  phys_rng_seed(&rng, 7);
  test_restitution_deriv();
  scene_ball(&rng);
  scene_ball_condim6(&rng);
  scene_box_condim6(&rng);
  scene_two_balls_condim6(&rng);
  scene_ball_torsion0();
  scene_box(&rng);
  scene_box_floor(&rng);
  scene_two_balls(&rng);
  scene_two_balls_frictionless(&rng);
  scene_box_frictionless_param();
  scene_elbow(&rng);
  scene_hinge(&rng);
  scene_humanoid(&rng);
  printf("worst: A, B %.2g, P %.2g; dot-product (VJP vs forward-mode A, B) %.2g\n", g_worst_a, g_worst_p, g_worst_dot);
  return test_done();
}
