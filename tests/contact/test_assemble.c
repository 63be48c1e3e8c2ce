// test_assemble.c - src/contact/assemble.c: contact and joint-limit rows of the constraint problem.
// Checks J against finite differences of the material contact points (and of an analytic distance),
// G against J M~^-1 J' with M~ inverted densely here by Gauss-Jordan, the restitution and Baumgarte terms
// of g, the limit rows and their activation, and the warm-start matching by geom pair and order.
// Contacts are written by hand (any point, any orthonormal frame): the rows must not depend on collision.
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "chol.h"
#include "contact.h"
#include "dyn.h"
#include "factor.h"
#include "rot.h"
#include "test.h"

// a free ball over a plane, and a damped limited hinge arm carrying a slide + hinge tip
static const char* MODEL =
    "<mujoco model='asm'>\n"
    "  <compiler angle='radian'/>\n"
    "  <option timestep='0.01'/>\n"
    "  <worldbody>\n"
    "    <geom name='floor' type='plane' size='5 5 .1'/>\n"
    "    <body name='ball' pos='0.3 0.1 0.5' quat='0.9 0.1 -0.3 0.2'>\n"
    "      <freejoint/>\n"
    "      <geom name='ball' type='sphere' size='0.1' mass='2'/>\n"
    "    </body>\n"
    "    <body name='arm' pos='0 0 1'>\n"
    "      <joint name='hinge' type='hinge' axis='0 1 0.3' limited='true' range='-0.5 0.5' damping='0.7'/>\n"
    "      <geom name='arm' type='capsule' fromto='0 0 0 0.5 0 0' size='0.05'/>\n"
    "      <body name='tip' pos='0.5 0 0'>\n"
    "        <joint name='slide' type='slide' axis='1 0 0' limited='true' range='-0.1 0.2'/>\n"
    "        <joint name='hinge2' type='hinge' axis='0 0 1' damping='0.2'/>\n"
    "        <geom name='tip' type='box' size='0.05 0.04 0.03'/>\n"
    "      </body>\n"
    "    </body>\n"
    "  </worldbody>\n"
    "</mujoco>\n";

static unsigned long long rng = 88172645463325252ull;

// uniform in [lo, hi) (xorshift64)
static double urand(double lo, double hi) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return lo + (hi - lo) * (double)(rng >> 11) * 0x1.0p-53;
}

// write MODEL to a temporary file and load it
static physModel* load_model(void) {
  char path[] = "/tmp/test_assemble_XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  if (fd < 0) return NULL;
  FILE* f = fdopen(fd, "w");
  fputs(MODEL, f);
  fclose(f);
  char file[64];
  snprintf(file, sizeof file, "%s.xml", path);
  rename(path, file);
  physLog log;
  memset(&log, 0, sizeof log);
  physModel* m = phys_load_mjcf(file, &log);
  CHECK_MSG(m != NULL, "%s", log.error);
  unlink(file);
  return m;
}

// a random right-handed orthonormal frame (rows)
static void rand_frame(double frame[9]) {
  double q[4] = {urand(-1, 1), urand(-1, 1), urand(-1, 1), urand(-1, 1)}, R[9];
  phys_quat_normalize(q);
  phys_quat2mat(R, q);
  memcpy(frame, R, sizeof R);
}

// kinematics and spatial quantities at the current state
static void kin(const physModel* m, physData* d) {
  phys_kinematics(m, d);
  phys_com_pos(m, d);
  phys_com_vel(m, d);
}

// M~ = M + dt diag(damping) factored into d->qLD (phys_factor_m, as the step); a copy of M~ into Mt (nv x nv)
static void factor(const physModel* m, physData* d, double* Mt) {
  int nv = m->nv;
  double add[16];
  CHECK(nv <= 16);
  phys_crb(m, d);
  for (int i = 0; i < nv * nv; i++) Mt[i] = d->qM[i];
  for (int i = 0; i < nv; i++) {
    add[i] = m->opt.timestep * m->dof_damping[i];
    Mt[i * nv + i] += add[i];
  }
  CHECK(phys_factor_m(m, d->qLD, d->qM, add) == nv);
}

// inverse of a (n x n) by Gauss-Jordan with partial pivoting, independent of src/math
static void invert(double* inv, const double* a, int n) {
  double w[2 * 16 * 16];
  for (int i = 0; i < n; i++)
    for (int j = 0; j < 2 * n; j++) w[i * 2 * n + j] = j < n ? a[i * n + j] : (j - n == i);
  for (int c = 0; c < n; c++) {
    int p = c;
    for (int r = c + 1; r < n; r++)
      if (fabs(w[r * 2 * n + c]) > fabs(w[p * 2 * n + c])) p = r;
    for (int j = 0; j < 2 * n; j++) {
      double t = w[c * 2 * n + j];
      w[c * 2 * n + j] = w[p * 2 * n + j];
      w[p * 2 * n + j] = t;
    }
    double piv = w[c * 2 * n + c];
    for (int j = 0; j < 2 * n; j++) w[c * 2 * n + j] /= piv;
    for (int r = 0; r < n; r++) {
      if (r == c) continue;
      double f = w[r * 2 * n + c];
      for (int j = 0; j < 2 * n; j++) w[r * 2 * n + j] -= f * w[c * 2 * n + j];
    }
  }
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) inv[i * n + j] = w[i * 2 * n + n + j];
}

// material point of body b that is at world point p in the reference pose (x0, R0): x + R R0' (p - x0)
static void material_point(double res[3], const physData* d, int b, const double x0[3], const double R0[9],
                           const double p[3]) {
  double r[3] = {p[0] - x0[0], p[1] - x0[1], p[2] - x0[2]}, loc[3];
  phys_matT_vec3(loc, R0, r);
  phys_mat_vec3(res, d->xmat + 9 * b, loc);
  for (int i = 0; i < 3; i++) res[i] += d->xpos[3 * b + i];
}

// frame * (p1 - p0) of the material points of contact c after moving q by t*v (from q0)
static void rel_point(double res[3], const physModel* m, physData* d, const physContact* c, const double* q0,
                      const double* v, double t, const double* x0, const double* R0) {
  memcpy(d->qpos, q0, sizeof(double) * (size_t)m->nq);
  phys_integrate_pos(m, d->qpos, v, t);
  phys_kinematics(m, d);
  double p[2][3];
  for (int s = 0; s < 2; s++) {
    int b = m->geom_bodyid[c->geom[s]];
    material_point(p[s], d, b, x0 + 3 * b, R0 + 9 * b, c->pos);
  }
  double dp[3] = {p[1][0] - p[0][0], p[1][1] - p[0][1], p[1][2] - p[0][2]};
  phys_mat_vec3(res, c->frame, dp);
}

// the contacts of the tests: ball on floor (normal +z from the floor), arm vs ball, arm vs tip (shared
// hinge dof), each with a random point and frame (only the rows' kinematics are checked)
static void make_contacts(const physModel* m, physData* d) {
  int floor = phys_name2id(m, "geom", "floor"), ball = phys_name2id(m, "geom", "ball");
  int arm = phys_name2id(m, "geom", "arm"), tip = phys_name2id(m, "geom", "tip");
  int pairs[3][2] = {{floor, ball}, {ball, arm}, {arm, tip}};
  d->ncon = 3;
  for (int i = 0; i < 3; i++) {
    physContact* c = d->contact + i;
    memset(c, 0, sizeof *c);
    c->geom[0] = pairs[i][0];
    c->geom[1] = pairs[i][1];
    for (int k = 0; k < 3; k++) c->pos[k] = urand(-0.5, 0.5) + (k == 2 ? 0.6 : 0);
    rand_frame(c->frame);
    c->dist = 0;
    c->mu = 0.3 + 0.1 * i;
    c->pair = -1;
  }
  // ball on floor: the contact point under the centre, normal +z, dist = height - radius
  int bb = m->geom_bodyid[ball];
  physContact* c = d->contact;
  double n[3] = {0, 0, 1}, t1[3] = {1, 0, 0}, t2[3] = {0, 1, 0};
  memcpy(c->frame, n, sizeof n);
  memcpy(c->frame + 3, t1, sizeof t1);
  memcpy(c->frame + 6, t2, sizeof t2);
  c->pos[0] = d->xpos[3 * bb];
  c->pos[1] = d->xpos[3 * bb + 1];
  c->pos[2] = 0.5 * (d->xpos[3 * bb + 2] - 0.1);
  c->dist = d->xpos[3 * bb + 2] - 0.1;
}

//---------------------------------------------------------------------------------------------------------
// J by finite differences; the normal row is the rate of the ball's height above the floor

static void test_jacobian(const physModel* m, physData* d) {
  int nv = m->nv, nq = m->nq;
  double q0[32], v[32], x0[3 * 8], R0[9 * 8], Mt[16 * 16];
  for (int i = 0; i < nq; i++) q0[i] = d->qpos[i];
  kin(m, d);
  factor(m, d, Mt);
  make_contacts(m, d);
  memcpy(x0, d->xpos, sizeof(double) * 3 * (size_t)m->nbody);
  memcpy(R0, d->xmat, sizeof(double) * 9 * (size_t)m->nbody);
  for (int i = 0; i < nv; i++) v[i] = urand(-1, 1);

  size_t mark = phys_stack_mark(d);
  physConstraintProblem p;
  double *J, *G, *g, *mu;
  phys_constraint_assemble(m, d, d->contact, d->ncon, v, NULL, &p, &J, &G, &g, &mu);
  CHECK(p.nc == 3 && p.nl == 0 && p.n == 9 && p.nv == nv);
  CHECK(mu[0] == 0.3 && mu[2] == 0.5);
  for (int i = 0; i < 3; i++) CHECK(d->contact[i].efc_adr == 3 * i);

  // J v = d/dt frame (p1 - p0) of the material points, central differences
  double h = 1e-6, maxerr = 0, maxval = 0;
  for (int i = 0; i < 3; i++) {
    const physContact* c = d->contact + i;
    double plus[3], minus[3];
    rel_point(plus, m, d, c, q0, v, h, x0, R0);
    rel_point(minus, m, d, c, q0, v, -h, x0, R0);
    for (int r = 0; r < 3; r++) {
      double fd = (plus[r] - minus[r]) / (2 * h), jv = 0;
      for (int k = 0; k < nv; k++) jv += J[(3 * i + r) * nv + k] * v[k];
      maxerr = fmax(maxerr, fabs(fd - jv));
      maxval = fmax(maxval, fabs(jv));
    }
  }
  CHECK_MSG(maxerr < 1e-8 && maxval > 0.1, "J v vs finite differences: err %g (scale %g)", maxerr, maxval);

  // normal row of ball-floor: rate of the distance (ball height - radius)
  int bb = m->body_jntadr[phys_name2id(m, "body", "ball")];
  double zp, zm, jv = 0;
  memcpy(d->qpos, q0, sizeof(double) * (size_t)nq);
  phys_integrate_pos(m, d->qpos, v, h);
  zp = d->qpos[m->jnt_qposadr[bb] + 2];
  memcpy(d->qpos, q0, sizeof(double) * (size_t)nq);
  phys_integrate_pos(m, d->qpos, v, -h);
  zm = d->qpos[m->jnt_qposadr[bb] + 2];
  for (int k = 0; k < nv; k++) jv += J[k] * v[k];
  CHECK_NEAR(jv, (zp - zm) / (2 * h), 1e-9);

  // arm-tip rows: the shared hinge dof moves both points alike and cancels
  int hinge = m->jnt_dofadr[phys_name2id(m, "joint", "hinge")];
  for (int r = 6; r < 9; r++) CHECK_NEAR(J[r * nv + hinge], 0, 1e-15);
  memcpy(d->qpos, q0, sizeof(double) * (size_t)nq);
  phys_stack_free(d, mark);
}

//---------------------------------------------------------------------------------------------------------
// G = J M~^-1 J' densely; symmetric, positive semidefinite; g terms

static void test_delassus(const physModel* m, physData* d) {
  int nv = m->nv;
  double Mt[16 * 16], Minv[16 * 16], vf[16];
  kin(m, d);
  factor(m, d, Mt);
  invert(Minv, Mt, nv);
  unsigned long long seed = rng;   // the same contacts again below
  make_contacts(m, d);
  for (int i = 0; i < nv; i++) {
    d->qvel[i] = urand(-1, 1);
    vf[i] = urand(-1, 1);
  }
  size_t mark = phys_stack_mark(d);
  physConstraintProblem p;
  double *J, *G, *g, *mu;
  phys_constraint_assemble(m, d, d->contact, d->ncon, vf, NULL, &p, &J, &G, &g, &mu);
  int n = p.n;
  double maxerr = 0, maxg = 0, asym = 0;
  for (int r = 0; r < n; r++) {
    for (int c = 0; c < n; c++) {
      double s = 0;
      for (int i = 0; i < nv; i++)
        for (int k = 0; k < nv; k++) s += J[r * nv + i] * Minv[i * nv + k] * J[c * nv + k];
      maxerr = fmax(maxerr, fabs(G[r * n + c] - s));
      maxg = fmax(maxg, fabs(s));
      asym = fmax(asym, fabs(G[r * n + c] - G[c * n + r]));
    }
  }
  CHECK_MSG(maxerr <= 1e-12 * maxg && maxg > 0, "G vs J M~^-1 J': %g (scale %g)", maxerr, maxg);
  CHECK(asym == 0);
  // positive semidefinite: G + 1e-12 tr(G) I has a Cholesky factor; x'Gx = |L^-1 J'x|^2 for random x
  double A[9 * 9], tr = 0;
  for (int i = 0; i < n; i++) tr += G[i * n + i];
  memcpy(A, G, sizeof(double) * (size_t)(n * n));
  for (int i = 0; i < n; i++) A[i * n + i] += 1e-12 * tr;
  CHECK(phys_chol_factor(A, n, 0) == n);

  // g = J vf with no restitution (dist 0 for the random contacts); the ball above the floor (dist > 0,
  // within the margin) may close its gap within the step: g_n = J_n vf + dist/dt, unless its free motion
  // closes the gap with restitution to apply (none here)
  for (int r = 0; r < n; r++) {
    double s = 0;
    for (int k = 0; k < nv; k++) s += J[r * nv + k] * vf[k];
    if (r < 3 * p.nc && r % 3 == 0 && d->contact[r / 3].dist > 0) s += d->contact[r / 3].dist / m->opt.timestep;
    CHECK_NEAR(g[r], s, 1e-14 * fmax(1, fabs(s)));
  }
  phys_stack_free(d, mark);

  // restitution (approaching only): g_n = J_n vf + eps*phi(J_n v) (contact.h); drift goes to the position problem:
  // gpos_n = beta*min(dist + slop, 0)/dt, with v = -+J_n,i' so that contact i approaches (J_n,i v < 0) or separates
  double dt = m->opt.timestep, beta = m->opt.baumgarte, eps = 0.6, Jn[3][16];
  CHECK(beta == 0.2);
  for (int i = 0; i < 3; i++) memcpy(Jn[i], J + 3 * i * nv, sizeof(double) * (size_t)nv);
  for (int i = 0; i < 3; i++) {
    for (int sgn = -1; sgn <= 1; sgn += 2) {
      rng = seed;
      make_contacts(m, d);
      for (int c = 0; c < 3; c++) {
        d->contact[c].restitution = eps;
        d->contact[c].dist = c == 2 ? -0.5 * PHYS_CONTACT_SLOP : -0.01 * (c + 1);  // the third within the slop
      }
      for (int k = 0; k < nv; k++) d->qvel[k] = sgn * (1 + i) * Jn[i][k];
      mark = phys_stack_mark(d);
      phys_constraint_assemble(m, d, d->contact, d->ncon, vf, NULL, &p, &J, &G, &g, &mu);
      double vn = 0, jvf = 0;
      for (int k = 0; k < nv; k++) {
        vn += J[3 * i * nv + k] * d->qvel[k];
        jvf += J[3 * i * nv + k] * vf[k];
      }
      CHECK(sgn < 0 ? vn < -1e-3 : vn > 1e-3);
      CHECK_NEAR(g[3 * i], jvf + (sgn < 0 ? eps * phys_restitution_phi(vn, NULL) : 0), 1e-13);
      double dist = d->contact[i].dist, want = dist + PHYS_CONTACT_SLOP < 0 ? beta * (dist + PHYS_CONTACT_SLOP) / dt : 0;
      CHECK_NEAR(p.gpos[3 * i], want, 1e-13);
      CHECK(p.npos == 2);
      // tangent rows carry no restitution or stabilization
      for (int r = 1; r < 3; r++) {
        double t = 0;
        for (int k = 0; k < nv; k++) t += J[(3 * i + r) * nv + k] * vf[k];
        CHECK_NEAR(g[3 * i + r], t, 1e-14);
        CHECK(p.gpos[3 * i + r] == 0);
      }
      phys_stack_free(d, mark);
    }
  }
  (void)Minv;
}

//---------------------------------------------------------------------------------------------------------
// joint limits: activation, sign, stabilization; PHYS_DSBL_LIMIT

static void test_limits(physModel* m, physData* d) {
  int nv = m->nv, jh = phys_name2id(m, "joint", "hinge"), js = phys_name2id(m, "joint", "slide");
  int jh2 = phys_name2id(m, "joint", "hinge2");
  double Mt[16 * 16], Minv[16 * 16], vf[16], dt = m->opt.timestep, beta = m->opt.baumgarte;
  phys_reset_data(m, d);
  d->qpos[m->jnt_qposadr[jh]] = 0.6;      // 0.1 beyond the upper limit 0.5
  d->qpos[m->jnt_qposadr[js]] = -0.13;    // 0.03 beyond the lower limit -0.1
  d->qpos[m->jnt_qposadr[jh2]] = 10;      // unlimited: no row
  kin(m, d);
  factor(m, d, Mt);
  invert(Minv, Mt, nv);
  for (int i = 0; i < nv; i++) vf[i] = urand(-1, 1);
  d->ncon = 0;
  CHECK(phys_constraint_nlimit(m, d) == 2);
  size_t mark = phys_stack_mark(d);
  physConstraintProblem p;
  double *J, *G, *g, *mu;
  phys_constraint_assemble(m, d, d->contact, d->ncon, vf, NULL, &p, &J, &G, &g, &mu);
  CHECK(p.nc == 0 && p.nl == 2 && p.n == 2 && phys_constraint_nlimit(m, d) == 2);
  int dh = m->jnt_dofadr[jh], ds = m->jnt_dofadr[js];
  // joints in order: hinge upper (row -e), slide lower (row +e)
  for (int k = 0; k < nv; k++) {
    CHECK(J[k] == (k == dh ? -1.0 : 0.0));
    CHECK(J[nv + k] == (k == ds ? 1.0 : 0.0));
  }
  CHECK_NEAR(g[0], -vf[dh], 1e-12);
  CHECK_NEAR(g[1], vf[ds], 1e-12);
  CHECK_NEAR(p.gpos[0], beta * (-0.1 + PHYS_CONTACT_SLOP) / dt, 1e-12);
  CHECK_NEAR(p.gpos[1], beta * (-0.03 + PHYS_CONTACT_SLOP) / dt, 1e-12);
  CHECK(p.npos == 2);
  CHECK_REL(G[0], Minv[dh * nv + dh], 1e-12, 0);
  CHECK_REL(G[1], -Minv[dh * nv + ds], 1e-12, 1e-300);
  CHECK(G[1] == G[2]);
  CHECK(p.warm[0] == PHYS_ROW_CLAMPING && p.warm[1] == PHYS_ROW_CLAMPING);
  phys_stack_free(d, mark);

  // within range: no rows; exactly at the limit: a row with no stabilization
  d->qpos[m->jnt_qposadr[jh]] = 0.5;
  d->qpos[m->jnt_qposadr[js]] = 0.0;
  CHECK(phys_constraint_nlimit(m, d) == 1);
  d->qpos[m->jnt_qposadr[jh]] = 0.4999;
  CHECK(phys_constraint_nlimit(m, d) == 0);
  // disabled
  d->qpos[m->jnt_qposadr[jh]] = 0.7;
  m->opt.disableflags |= PHYS_DSBL_LIMIT;
  CHECK(phys_constraint_nlimit(m, d) == 0);
  m->opt.disableflags &= ~PHYS_DSBL_LIMIT;
  CHECK(phys_constraint_nlimit(m, d) == 1);
  phys_reset_data(m, d);
}

//---------------------------------------------------------------------------------------------------------
// warm start: a contact takes the nearest previous contact of its geom pair, its impulse moved from the
// previous contact frame to the current one (here the same frame: the same numbers)

static void test_warm(const physModel* m, physData* d) {
  double Mt[16 * 16], vf[16] = {0};
  phys_reset_data(m, d);
  kin(m, d);
  factor(m, d, Mt);
  make_contacts(m, d);
  // previous list (the warm-start input): (arm, tip) twice, (floor, ball) once, (ball, arm) absent, an extra
  // unknown pair
  physContact prev[4];
  physWarmStart ws = {4, prev};
  int pairs[4][2] = {{d->contact[2].geom[0], d->contact[2].geom[1]},
                     {d->contact[0].geom[0], d->contact[0].geom[1]},
                     {d->contact[2].geom[0], d->contact[2].geom[1]},
                     {d->contact[1].geom[1], d->contact[1].geom[0]}};
  for (int a = 0; a < 4; a++) {
    physContact* c = prev + a;
    memset(c, 0, sizeof *c);
    c->geom[0] = pairs[a][0];
    c->geom[1] = pairs[a][1];
    // positions: the (arm, tip) ones at contact 2's point and 0.05 m beside it (contact 3 below), frames as now
    const physContact* now = d->contact + (a == 1 ? 0 : 2);
    memcpy(c->pos, now->pos, sizeof c->pos);
    memcpy(c->frame, now->frame, sizeof c->frame);
    if (a == 2) c->pos[0] += 0.05;
    for (int r = 0; r < 3; r++) {
      c->state[r] = (a + r) % 4;
      c->lambda[r] = 10 * a + r;
    }
  }
  // this step: (floor, ball), (ball, arm), (arm, tip), (arm, tip)
  d->contact[3] = d->contact[2];
  d->contact[3].pos[0] += 0.04;   // nearer to previous contact 2 than to previous contact 0
  d->ncon = 4;
  size_t mark = phys_stack_mark(d);
  physConstraintProblem p;
  double *J, *G, *g, *mu;
  phys_constraint_assemble(m, d, d->contact, d->ncon, vf, &ws, &p, &J, &G, &g, &mu);
  CHECK(p.n == 12 && p.warm != NULL);
  int want_prev[4] = {1, -1, 0, 2};
  for (int i = 0; i < 4; i++) {
    for (int r = 0; r < 3; r++) {
      int a = want_prev[i];
      int st = a >= 0 ? (a + r) % 4 : PHYS_ROW_SEPARATING;
      CHECK(p.warm[3 * i + r] == st);
      CHECK(d->contact[i].state[r] == st);
      CHECK_NEAR(d->contact[i].lambda[r], a >= 0 ? 10 * a + r : 0, 1e-12);
      CHECK_NEAR(p.lambda0[3 * i + r], a >= 0 ? 10 * a + r : 0, 1e-12);
    }
  }
  phys_stack_free(d, mark);
  d->ncon = d->ncon_prev = 0;
}

int main(void) {
  physModel* m = load_model();
  if (!m) return test_done();
  physData* d = phys_make_data(m);
  CHECK(m->nv == 9 && m->nconmax >= 4);
  for (int i = 0; i < m->nq; i++) d->qpos[i] = m->qpos0[i];
  d->qpos[m->jnt_qposadr[1]] = 0.2;
  test_jacobian(m, d);
  test_delassus(m, d);
  test_limits(m, d);
  test_warm(m, d);
  CHECK(d->pstack == 0);
  phys_free_data(d);
  phys_free_model(m);
  return test_done();
}
