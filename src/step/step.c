// step.c - the simulation step: integration on the configuration manifold, forward dynamics, one
// semi-implicit Euler step with implicit joint damping (MuJoCo 2.2.2's mj_Euler) and frictional contact
// and joint-limit constraints (DESIGN.md section 4), and mechanical energy.
//
// Without active constraints (contacts disabled or none found, no joint at a limit) the step is MuJoCo's
// step with mjDSBL_CONSTRAINT: one articulated-body pass, no mass matrix. With constraints, the velocity
// update goes through the contact problem (lcp, cone, ccp) or penalty forces (src/contact/contact.h).
// The constrained update's warm start is an explicit read-only input (physWarmStart, contact.h): phys_step
// moves d->contact to d->contact_prev and passes that; phys_step_warm and the velocity stage the derivatives
// re-run (step.h) take the list from their caller and leave d->contact_prev alone. The step's contacts go to
// a list its caller names (physContactList): phys_step's is d->contact, a re-run's its own.
#include <math.h>
#include <string.h>

#include "arena.h"
#include "collision.h"
#include "dyn.h"
#include "contact.h"
#include "equality.h"
#include "factor.h"
#include "model.h"
#include "physid.h"
#include "residual.h"
#include "rot.h"
#include "spatial.h"
#include "step.h"
#include "pbd.h"

//---------------------------------------------------------------------------------------------------------
// configuration manifold

// qpos <- qpos (+) dt*qvel: hinge/slide q += dt*v; free position += dt*v_world; ball and free quaternion
// quat <- quat * exp(dt*omega_body/2), normalized (the body-frame exponential map, as mju_quatIntegrate)
void phys_integrate_pos(const physModel* m, double* qpos, const double* qvel, double dt) {
  for (int j = 0; j < m->njnt; j++) {
    double* q = qpos + m->jnt_qposadr[j];
    const double* v = qvel + m->jnt_dofadr[j];
    switch (m->jnt_type[j]) {
      case PHYS_JNT_FREE:
        // p <- p + dt*v_world, then the orientation like a ball joint
        q[0] += dt * v[0];
        q[1] += dt * v[1];
        q[2] += dt * v[2];
        phys_quat_integrate(q + 3, v + 3, dt);
        break;
      case PHYS_JNT_BALL:
        phys_quat_integrate(q, v, dt);
        break;
      default:
        // hinge, slide: q <- q + dt*v
        q[0] += dt * v[0];
        break;
    }
  }
}

// res = log(normalize(q1)^-1 * normalize(q2)) / dt: body-frame angular velocity taking q1 to q2 in dt
static void quat_difference(double res[3], const double q1[4], const double q2[4], double dt) {
  double a[4] = {q1[0], q1[1], q1[2], q1[3]}, b[4] = {q2[0], q2[1], q2[2], q2[3]}, ac[4], dq[4];
  phys_quat_normalize(a);
  phys_quat_normalize(b);
  phys_quat_conj(ac, a);
  phys_quat_mul(dq, ac, b);
  phys_quat_log(res, dq);
  res[0] /= dt;
  res[1] /= dt;
  res[2] /= dt;
}

// qvel = (qpos2 (-) qpos1)/dt, the inverse of phys_integrate_pos (as mj_differentiatePos)
void phys_difference_pos(const physModel* m, double* qvel, double dt, const double* qpos1,
                         const double* qpos2) {
  for (int j = 0; j < m->njnt; j++) {
    int pa = m->jnt_qposadr[j], va = m->jnt_dofadr[j];
    switch (m->jnt_type[j]) {
      case PHYS_JNT_FREE:
        // v_world = (p2 - p1)/dt, then the orientation like a ball joint
        for (int i = 0; i < 3; i++) {
          qvel[va + i] = (qpos2[pa + i] - qpos1[pa + i]) / dt;
        }
        quat_difference(qvel + va + 3, qpos1 + pa + 3, qpos2 + pa + 3, dt);
        break;
      case PHYS_JNT_BALL:
        quat_difference(qvel + va, qpos1 + pa, qpos2 + pa, dt);
        break;
      default:
        qvel[va] = (qpos2[pa] - qpos1[pa]) / dt;
        break;
    }
  }
}

//---------------------------------------------------------------------------------------------------------
// forward dynamics

// qfrc += J' f for every body with a nonzero xfrc_applied (world force 3, torque 3 at the body com)
static void add_xfrc(const physModel* m, physData* d, double* qfrc) {
  int nv = m->nv;
  size_t mark = phys_stack_mark(d);
  double* jacp = phys_stack_alloc(d, 3 * (size_t)nv);
  double* jacr = phys_stack_alloc(d, 3 * (size_t)nv);
  for (int b = 1; b < m->nbody; b++) {
    const double* f = d->xfrc_applied + 6 * b;
    if (f[0] == 0 && f[1] == 0 && f[2] == 0 && f[3] == 0 && f[4] == 0 && f[5] == 0) {
      continue;
    }
    // qfrc += jacp' force + jacr' torque, both Jacobians at the centre of mass xipos
    phys_jac(m, d, d->xipos + 3 * b, b, jacp, jacr);
    for (int k = 0; k < 3; k++) {
      for (int i = 0; i < nv; i++) {
        qfrc[i] += jacp[k * nv + i] * f[k] + jacr[k * nv + i] * f[3 + k];
      }
    }
  }
  phys_stack_free(d, mark);
}

// run the smooth pipeline and return the generalized force without bias:
// tau = qfrc_passive + qfrc_actuator + qfrc_applied + J' xfrc_applied.
// The step needs no mass matrix or explicit bias (ABA forms both implicitly): with_matrices = 0 skips them.
static void smooth_pipeline(const physModel* m, physData* d, double* tau, int with_matrices) {
  phys_kinematics(m, d);
  phys_com_pos(m, d);
  phys_com_vel(m, d);
  if (with_matrices) {
    phys_crb(m, d);
    phys_bias_forces(m, d);
  }
  phys_passive(m, d);
  phys_actuation(m, d);
  for (int i = 0; i < m->nv; i++) {
    tau[i] = d->qfrc_passive[i] + d->qfrc_actuator[i] + d->qfrc_applied[i];
  }
  add_xfrc(m, d, tau);
}

// the smooth pipeline with qM and qfrc_bias, tau as above (step.h)
void phys_step_force(const physModel* m, physData* d, double* tau) { smooth_pipeline(m, d, tau, 1); }

// all smooth quantities at the current state, and qacc = M^-1 (tau - qfrc_bias) with tau as above
// (MuJoCo's mj_forward with constraints disabled reports this qacc)
void phys_forward(const physModel* m, physData* d) {
  size_t mark = phys_stack_mark(d);
  double* tau = phys_stack_alloc(d, (size_t)m->nv);
  smooth_pipeline(m, d, tau, 1);
  phys_aba(m, d, tau, NULL, d->qacc);
  phys_sensor(m, d);
  phys_stack_free(d, mark);
}

//---------------------------------------------------------------------------------------------------------
// time stepping

// 1 if every value of x (n) is finite
static int all_finite(const double* x, int n) {
  for (int i = 0; i < n; i++) {
    if (!isfinite(x[i])) {
      return 0;
    }
  }
  return 1;
}

// 1 if joint damping is integrated implicitly (step.h; static for the step's own calls, which inline it)
static int implicit_damping(const physModel* m) {
  if (m->opt.disableflags & PHYS_DSBL_EULERDAMP) {
    return 0;
  }
  for (int i = 0; i < m->nv; i++) {
    if (m->dof_damping[i] > 0) {
      return 1;
    }
  }
  return 0;
}

int phys_implicit_damping(const physModel* m) { return implicit_damping(m); }

// add = dt B (dt dof_damping) if phys_implicit_damping, else 0 (step.h)
void phys_implicit_damping_add(const physModel* m, double* add) {
  int damp = implicit_damping(m);
  for (int i = 0; i < m->nv; i++) add[i] = damp ? m->opt.timestep * m->dof_damping[i] : 0;
}

// acc = (M + dt B)^-1 tau' with tau' = tau - c by one articulated-body pass (no mass matrix), B the
// implicit joint damping (zero when implicit_damping is off)
static void unconstrained_acc(const physModel* m, physData* d, const double* tau, double* acc) {
  double dt = m->opt.timestep;
  if (implicit_damping(m)) {
    size_t mark = phys_stack_mark(d);
    double* add = phys_stack_alloc(d, (size_t)m->nv);
    for (int i = 0; i < m->nv; i++) {
      add[i] = dt * m->dof_damping[i];
    }
    phys_aba(m, d, tau, add, acc);
    phys_stack_free(d, mark);
  } else {
    phys_aba(m, d, tau, NULL, acc);
  }
}

// acc += r, the residual network's acceleration at d's state (residual.h; nothing without a network)
static void add_residual(const physModel* m, physData* d, double* acc) {
  if (!m->residual) return;
  size_t mark = phys_stack_mark(d);
  double* r = phys_stack_alloc(d, (size_t)m->nv);
  phys_residual_acc(m, d, r);
  for (int i = 0; i < m->nv; i++) acc[i] += r[i];
  phys_stack_free(d, mark);
}

//---------------------------------------------------------------------------------------------------------
// constraints

// depth (m) beyond which a contact at time 0 counts as an interpenetrating initial state
#define PHYS_PENETRATION_WARN 1e-3

// the warm start of phys_step: the last step's contacts (with their impulses) move to d->contact_prev, the
// list the step starts from (the only writer of d->contact_prev; nothing else reads it but this step)
static physWarmStart keep_previous(physData* d) {
  memcpy(d->contact_prev, d->contact, sizeof(physContact) * (size_t)d->ncon);
  d->ncon_prev = d->ncon;
  return (physWarmStart){d->ncon_prev, d->contact_prev};
}

// detect this step's contacts into cl (needs kinematics); none when contacts are disabled. Deep contacts at
// time 0 raise one counted warning.
static void detect_contacts(const physModel* m, physData* d, physContactList* cl) {
  cl->n = 0;
  if (m->opt.disableflags & PHYS_DSBL_CONTACT) {
    return;
  }
  phys_collision_into(m, d, cl);
  if (d->time != 0) {
    return;
  }
  for (int i = 0; i < cl->n; i++) {
    const physContact* c = cl->con + i;
    if (c->dist < -PHYS_PENETRATION_WARN) {
      phys_data_warn(d, PHYS_WARN_OVERLAP, "phys_step: initial state interpenetrates: geoms %d and %d overlap by %g m "
                        "(separated by drift stabilization, baumgarte %g)", c->geom[0], c->geom[1], -c->dist,
                        m->opt.baumgarte);
      return;
    }
  }
}

// the solver of the model's contact option
static physSolverFn option_solver(const physModel* m) {
  switch (m->opt.contact) {
    case PHYS_CONTACT_CONE:
      return phys_solve_cone;
    case PHYS_CONTACT_CCP:
      return phys_solve_ccp;
    default:
      return phys_solve_lcp;
  }
}

// res += M~^-1 J' lambda (p's rows, over their dofs: phys_constraint_jt); scratch f (nv)
static void add_impulse_velocity(const physModel* m, const physData* d, double* res,
                                 const physConstraintProblem* p, const double* lambda, double* f) {
  phys_constraint_jt(p, lambda, f);
  phys_solve_m(m, d->qLD, f, f);
  for (int i = 0; i < m->nv; i++) {
    res[i] += f[i];
  }
}

// position correction by split impulse (contact.h): pseudo-impulses lambda_p of the frictionless problem
// on the same G with g = gpos (solved exactly by the lcp solver), vpos = M~^-1 J' lambda_p. The solver's
// warm guess: rows with gpos < 0 clamp, the others separate (vpos is the same for every exact lambda_p:
// a symmetric positive semidefinite LCP has a unique G lambda_p). pp and sol (lambda_p, all 0 without
// correction) in arena memory of the caller's mark.
static void position_correction(const physModel* m, physData* d, const physConstraintProblem* p,
                                const physEqualityRows* eq, physConstraintProblem* pp, physConstraintSolution* sol,
                                double* vpos) {
  int nv = m->nv;
  memset(vpos, 0, sizeof(double) * (size_t)nv);
  double* mu0 = phys_stack_alloc(d, (size_t)p->nc + 1);
  int* warm = (int*)phys_stack_alloc(d, (size_t)p->n + 1);
  memset(sol, 0, sizeof(*sol));
  sol->lambda = phys_stack_alloc(d, (size_t)p->n + 1);
  sol->state = (int*)phys_stack_alloc(d, (size_t)p->n + 1);
  memset(sol->lambda, 0, sizeof(double) * ((size_t)p->n + 1));
  memset(sol->state, 0, sizeof(int) * ((size_t)p->n + 1));
  memset(mu0, 0, sizeof(double) * ((size_t)p->nc + 1));
  for (int i = 0; i < p->n; i++) {
    warm[i] = p->gpos[i] < 0 ? PHYS_ROW_CLAMPING : PHYS_ROW_SEPARATING;
  }
  *pp = *p;
  pp->g = p->gpos;
  pp->mu = mu0;
  pp->warm = warm;
  if (p->npos == 0) {
    return;
  }
  size_t mark = phys_stack_mark(d);
  double* f = phys_stack_alloc(d, (size_t)nv);
  phys_solve_islands(m, d, phys_solve_lcp, pp, eq->ne > 0 ? eq->J : NULL, eq->ne, sol);
  add_impulse_velocity(m, d, vpos, p, sol->lambda, f);
  phys_stack_free(d, mark);
}

// the time-of-impact displacement of the margin impacts (assemble.c phys_normal_bias): contact i with t* > 0
// (phys_toi_time) moves at the free velocity until t* and at v+ after, so with the impact's share of its
// impulse lambda_i applied at t* instead of at the step's start (gravity's share held over the whole step):
// q+ = q + dt v+ - sigma_i M~^-1 J_i' lambda_i (sigma_i: phys_toi_shift); added to the position update velocity:
// vpos += M~^-1 J' (s o lambda), s = -sigma_i/dt on contact i's three rows (0 on the others)
// A step without margin contacts (p->nmargin = 0) returns at once; e, the scratch f and its zeroing wait for
// the first contact whose shift is nonzero (the same sums in the same order).
static void toi_displacement(const physModel* m, physData* d, const physConstraintProblem* p, const double* lambda,
                             double* vpos) {
  if (p->nmargin == 0) return;
  int nv = m->nv;
  double dt = m->opt.timestep, e = -1, *f = NULL;
  size_t mark = 0;
  for (int i = 0; i < p->nc; i++) {
    if (!(p->con[i].dist > 0)) continue;   // touching or penetrating: no time of impact (phys_toi_time), sigma = 0
    double vn = phys_constraint_row_dot(p, 3 * i, d->qvel);
    if (e < 0) e = phys_toi_hold_speed(m);
    double s = -phys_toi_shift(p->con + i, vn, dt, e, NULL) / dt;
    if (s == 0) continue;
    if (!f) {
      mark = phys_stack_mark(d);
      f = phys_stack_alloc(d, (size_t)nv);
      memset(f, 0, sizeof(double) * (size_t)nv);
    }
    for (int r = 0; r < 3; r++) {
      const int* dof;
      const double* Jr = p->J + (size_t)(3 * i + r) * nv;
      int nd = phys_constraint_row_dofs(p, 3 * i + r, &dof);
      for (int t = 0; t < nd; t++) f[dof ? dof[t] : t] += s * Jr[dof ? dof[t] : t] * lambda[3 * i + r];
    }
  }
  if (f) {
    phys_solve_m(m, d->qLD, f, f);
    for (int k = 0; k < nv; k++) vpos[k] += f[k];
    phys_stack_free(d, mark);
  }
}

// x' G x for the impulses x = (xc, xf) of the contact and frictionloss rows: |M~^-1 J' x|^2 in M~'s norm, twice
// the kinetic energy the impulses give
static double impulse_energy(const physConstraintProblem* p, const physFrictionRows* fr, const double* Gcf,
                             const double* xc, const double* xf) {
  int n = p->n, nf = fr->nf;
  double e = 0;
  for (int r = 0; r < n; r++) {
    double s = 0;
    for (int c = 0; c < n; c++) s += p->G[(size_t)r * n + c] * xc[c];
    for (int i = 0; i < nf; i++) s += 2 * Gcf[(size_t)r * nf + i] * xf[i];
    e += xc[r] * s;
  }
  for (int i = 0; i < nf; i++)
    for (int j = 0; j < nf; j++) e += xf[i] * fr->G[(size_t)i * nf + j] * xf[j];
  return e;
}

// at most this many alternations of the frictionloss rows and the contact problem (frictionloss_coupled)
#define PHYS_FRICTIONLOSS_SWEEPS 100
// the same with torsional or rolling friction rows (angular.c), whose under-relaxed sweeps converge more slowly
#define PHYS_ANGULAR_SWEEPS 400

// the frictionloss rows fr together with the contact and limit rows p (solved once as sol, without friction),
// Gcf = J M~^-1 E (n x nf) their coupling: block Gauss-Seidel, the friction box problem given the contact
// impulses (g_f + G_fc lambda_c), then the contact problem given the friction impulses (g + G_cf lambda_f,
// warm-started from its last solution), until the velocity change the impulses give moves by at most 1e-10 of
// itself (in M~'s norm, impulse_energy: the impulses themselves need not settle, a singular G leaves them free
// along its null space), or by at most 1e-6 of itself without shrinking any more (the rounding floor along a
// null space: contact and friction rows that share a load trade it by rounding-sized steps forever). A fixed
// point is a solution of the whole problem (each block's conditions hold with the other's impulses). With
// torsional or rolling friction rows (angular.c: their bounds follow lambda_n) the sweeps can cycle (a rod on
// two contacts trades a pitching rolling torque for a shift of its normal impulses): the friction block's new
// impulses are then under-relaxed, lambda_f = om new + (1 - om) old, om halved (down to 1/64) at each sweep
// that does not shrink the change, and up to PHYS_ANGULAR_SWEEPS sweeps run. p->g, p->warm, p->lambda0 end as
// the last solve's (arena memory of the caller's mark). A counted warning if the sweeps run out. Returns the
// iterations of the contact solves summed
static int coupled_sweeps(const physModel* m, physData* d, physSolverFn solver, physConstraintProblem* p,
                          physConstraintSolution* sol, physFrictionRows* fr, const double* Gcf) {
  int n = p->n, nf = fr->nf, total = 0;
  double* g0 = phys_stack_alloc(d, (size_t)n + 1);
  double* gc = phys_stack_alloc(d, (size_t)n + 1);
  double* gf = phys_stack_alloc(d, (size_t)nf + 1);
  double* lc = phys_stack_alloc(d, (size_t)n + 1);
  double* lf = phys_stack_alloc(d, (size_t)nf + 1);
  int* warm = (int*)phys_stack_alloc(d, (size_t)n + 1);
  memcpy(g0, p->g, sizeof(double) * (size_t)n);
  int it;
  double dE0 = INFINITY, om = 1;
  int sweeps = fr->nfa > 0 ? PHYS_ANGULAR_SWEEPS : PHYS_FRICTIONLOSS_SWEEPS;
  for (it = 0; it < sweeps; it++) {
    memcpy(lc, sol->lambda, sizeof(double) * (size_t)n);
    memcpy(lf, fr->lambda, sizeof(double) * (size_t)nf);
    for (int i = 0; i < nf; i++) {
      gf[i] = fr->g[i];
      for (int r = 0; r < n; r++) gf[i] += Gcf[(size_t)r * nf + i] * lc[r];
    }
    phys_friction_block_solve(d, fr, gf, lc);   // (angular rows: bounds mu lambda_n from lc, angular.c)
    if (fr->nfa > 0 && it > 0 && om < 1)
      for (int i = 0; i < nf; i++) fr->lambda[i] = om * fr->lambda[i] + (1 - om) * lf[i];
    for (int r = 0; r < n; r++) {
      gc[r] = g0[r];
      for (int i = 0; i < nf; i++) gc[r] += Gcf[(size_t)r * nf + i] * fr->lambda[i];
    }
    memcpy(warm, sol->state, sizeof(int) * (size_t)n);
    p->g = gc;
    p->warm = warm;
    p->lambda0 = lc;
    solver(m, d, p, sol);
    total += sol->iterations;
    for (int r = 0; r < n; r++) lc[r] = sol->lambda[r] - lc[r];
    for (int i = 0; i < nf; i++) lf[i] = fr->lambda[i] - lf[i];
    double dE = impulse_energy(p, fr, Gcf, lc, lf), E = impulse_energy(p, fr, Gcf, sol->lambda, fr->lambda);
    if (dE <= 1e-20 * E || (dE <= 1e-12 * E && dE >= 0.5 * dE0)) break;
    if (fr->nfa > 0 && dE >= dE0 && om > 1.0 / 64) om *= 0.5;
    dE0 = dE;
  }
  if (it == sweeps)
    phys_data_warn(d, PHYS_WARN_SOLVER, "phys_step: frictionloss and contact rows did not settle in %d sweeps at "
                   "time %g", sweeps, d->time);
  return total;
}

// Gcf (nk x nf) = J_rows W E_cols: rows of p's J (over their dofs, ascending, as the dense product: J is 0
// elsewhere) times the nf columns cols of fr's W E
static void coupling_rows(const physConstraintProblem* p, const physFrictionRows* fr, const int* rows, int nk,
                          const int* cols, int nf, double* Gcf) {
  int nv = p->nv;
  for (int a = 0; a < nk; a++) {
    const double* Jr = p->J + (size_t)rows[a] * nv;
    const int* s;
    int k = phys_constraint_row_dofs(p, rows[a], &s);
    for (int i = 0; i < nf; i++) {
      const double* WE = fr->WE + cols[i];
      double acc = 0;
      for (int t = k - 1; t >= 0; t--) {
        int j = s ? s[t] : k - 1 - t;
        acc += Jr[j] * WE[(size_t)j * fr->nf];
      }
      Gcf[(size_t)a * nf + i] = acc;
    }
  }
}

// the rows of p in group k (rgroup) into rows, their number; p's contacts among them renumbered into cmap
// (nc; -1 outside)
static int group_rows(const physConstraintProblem* p, const int* rgroup, int k, int* rows, int* cmap) {
  int nk = 0, nc = 0;
  for (int i = 0; i < p->nc; i++) cmap[i] = -1;
  for (int r = 0; r < p->n; r++)
    if (rgroup[r] == k) {
      if (r < 3 * p->nc && r % 3 == 0) cmap[r / 3] = nc++;
      rows[nk++] = r;
    }
  return nk;
}

// group k of the friction rows (phys_friction_groups: rgroup, fgroup, its dofs ndof) solved on its own by
// coupled_sweeps, its impulses and states scattered into sol and fr, its last solve's g, warm, lambda0 into
// g, warm, l0 (p's rows), sol->residual the larger of its own and the last solve's; returns the iterations of
// its contact solves
static int group_solve(const physModel* m, physData* d, physSolverFn solver, const physConstraintProblem* p,
                       physConstraintSolution* sol, physFrictionRows* fr, const int* rgroup, const int* fgroup,
                       int k, int ndof, double* g, int* warm, double* l0) {
  size_t mark = phys_stack_mark(d);
  int* rows = (int*)phys_stack_alloc(d, (size_t)p->n / 2 + 1);
  int* cols = (int*)phys_stack_alloc(d, (size_t)fr->nf / 2 + 1);
  int* cmap = (int*)phys_stack_alloc(d, (size_t)p->nc / 2 + 1);
  int nk = group_rows(p, rgroup, k, rows, cmap), nfk = 0, iters = 0;
  for (int i = 0; i < fr->nf; i++)
    if (fgroup[i] == k) cols[nfk++] = i;
  physFrictionRows fq;
  phys_friction_rows_sub(d, fr, cols, nfk, cmap, &fq);
  if (nk == 0) {
    phys_friction_block_solve(d, &fq, fq.g, NULL);   // (no contact rows: no angular rows either)
  } else {
    physConstraintProblem q;
    phys_island_problem(d, p, rows, nk, ndof, &q);
    physConstraintSolution qs = {.lambda = phys_stack_alloc(d, (size_t)nk + 1),
                                 .state = (int*)phys_stack_alloc(d, (size_t)nk / 2 + 1)};
    for (int a = 0; a < nk; a++) qs.lambda[a] = sol->lambda[rows[a]], qs.state[a] = sol->state[rows[a]];
    double* Gcf = phys_stack_alloc(d, (size_t)nk * nfk + 1);
    coupling_rows(p, fr, rows, nk, cols, nfk, Gcf);
    iters = coupled_sweeps(m, d, solver, &q, &qs, &fq, Gcf);
    sol->residual = qs.residual > sol->residual ? qs.residual : sol->residual;
    for (int a = 0; a < nk; a++) {
      int r = rows[a];
      sol->lambda[r] = qs.lambda[a], sol->state[r] = qs.state[a];
      g[r] = q.g[a], warm[r] = q.warm[a], l0[r] = q.lambda0[a];
    }
  }
  for (int a = 0; a < nfk; a++) {
    int i = cols[a];
    fr->lambda[i] = fq.lambda[a], fr->state[i] = fq.state[a], fr->b[i] = fq.b[a];
  }
  phys_stack_free(d, mark);
  return iters;
}

// the frictionloss rows fr with the contact and limit rows p (solved once, by islands, as sol; Je, ne the
// eliminated equality rows): group by group (phys_friction_groups: a joint's row with its tree's island, a
// tendon's with every island it reaches, an angular row with its contact's), each by coupled_sweeps on its
// own rows, in the groups' order; the rows of no group keep sol's impulses (nothing couples them to friction).
// One group holding every row, or PHYS_DSBL_ISLAND: coupled_sweeps on the whole problem. p->g, p->warm,
// p->lambda0 end as each row's last solve's (its first, outside the groups). d->solver_iter: the last solve's
// iterations (one group) or, by groups, every solve's in the step summed. Arena memory of the caller's mark
static void frictionloss_coupled(const physModel* m, physData* d, physSolverFn solver, physConstraintProblem* p,
                                 physConstraintSolution* sol, physFrictionRows* fr, const double* Je, int ne) {
  int n = p->n, nf = fr->nf, nv = m->nv;
  int* rgroup = (int*)phys_stack_alloc(d, (size_t)n / 2 + 1);
  int* fgroup = (int*)phys_stack_alloc(d, (size_t)nf / 2 + 1);
  int* gdof = (int*)phys_stack_alloc(d, (size_t)nv / 2 + 1);
  int ng = -1, whole = 1;
  if (!(m->opt.disableflags & PHYS_DSBL_ISLAND)) {
    ng = phys_friction_groups(m, d, p, Je, ne, fr, rgroup, fgroup, gdof);
    for (int r = 0; r < n && whole; r++) whole = rgroup[r] == 0;
    whole = whole && ng == 1;
  }
  if (whole) {   // (the whole problem, as before islands)
    double* Gcf = phys_stack_alloc(d, (size_t)n * nf + 1);
    for (int r = 0; r < n; r++) rgroup[r] = r;
    for (int i = 0; i < nf; i++) fgroup[i] = i;
    coupling_rows(p, fr, rgroup, n, fgroup, nf, Gcf);
    coupled_sweeps(m, d, solver, p, sol, fr, Gcf);
  } else {
    double* g = phys_stack_alloc(d, (size_t)n + 1);
    double* l0 = phys_stack_alloc(d, (size_t)n + 1);
    int* warm = (int*)phys_stack_alloc(d, (size_t)n / 2 + 1);
    memcpy(g, p->g, sizeof(double) * (size_t)n);
    memcpy(l0, sol->lambda, sizeof(double) * (size_t)n);
    memcpy(warm, sol->state, sizeof(int) * (size_t)n);
    for (int i = 0; i < nf; i++)
      if (fgroup[i] < 0) fr->lambda[i] = 0, fr->state[i] = PHYS_ROW_CLAMPING;   // (a row on no dof: no force)
    int iters = sol->iterations;
    for (int k = 0; k < ng; k++)
      iters += group_solve(m, d, solver, p, sol, fr, rgroup, fgroup, k, gdof[k], g, warm, l0);
    p->g = g, p->warm = warm, p->lambda0 = l0;
    sol->iterations = iters;
  }
  d->solver_iter = sol->iterations;
  d->solver_residual = sol->residual;
}

// the frictionloss rows of st (the velocity problem st->p solved as st->sol without them) and the contacts'
// torsional and rolling friction rows (angular.c; rolling pairs one disk under cone and ccp): alone in one box
// solve, with contact or limit rows by frictionloss_coupled (out of line: models without frictionloss skip it)
static __attribute__((noinline)) void frictionloss_solve(const physModel* m, physData* d, physSolverFn solver,
                                                         physStepStage* st) {
  physFrictionRows* fr = &st->fr;
  int disk = m->opt.contact == PHYS_CONTACT_CONE || m->opt.contact == PHYS_CONTACT_CCP;
  phys_friction_rows_assemble(m, d, d->qLD, st->vf, st->p.con, st->p.nc, disk, fr);
  if (st->p.n == 0) phys_frictionloss_box(d, fr->G, fr->g, fr->b, fr->nf, fr->lambda, fr->state);
  else frictionloss_coupled(m, d, solver, &st->p, &st->sol, fr, st->eq.ne > 0 ? st->eq.J : NULL, st->eq.ne);
}

// v+ (vnew) and qfrc_constraint with the frictionloss impulses
static __attribute__((noinline)) void frictionloss_finish(const physModel* m, physData* d,
                                                          const physFrictionRows* fr, double* vnew) {
  phys_frictionloss_apply(m, fr, vnew);
  phys_frictionloss_qfrc(m, fr, d->qfrc_constraint);
}

// v+ through the constraint problem (lcp, cone, ccp) into st (step.h; arena memory of the caller's mark):
//   M~ = M + dt B = L' D L (qLD, tree-sparse, phys_factor_m),   v_f = v + dt M~^-1 (tau - c),
//   lambda = solver(G, g, mu; guesses from warm),   v+ = v_f + M~^-1 J' lambda,   qfrc_constraint = J' lambda / dt;
// impulses and row states are stored in st->con, the limit rows counted there. Returns 0 (nothing changed but a counted warning) if
// M~ is not positive definite.
int phys_step_constrained(const physModel* m, physData* d, physSolverFn solver, const double* tau,
                          const physWarmStart* warm, physStepStage* st) {
  int nv = m->nv;
  double dt = m->opt.timestep;
  double* f = phys_stack_alloc(d, (size_t)nv);
  double* vnew = st->vnew = phys_stack_alloc(d, (size_t)nv);
  st->vf = phys_stack_alloc(d, (size_t)nv);
  st->vpos = phys_stack_alloc(d, (size_t)nv);

  // M~ = M + dt B = L' D L along the tree (qLD)
  phys_crb(m, d);
  phys_bias_forces(m, d);
  phys_implicit_damping_add(m, f);
  if (phys_factor_m(m, d->qLD, d->qM, f) != nv) {
    phys_data_warn(d, PHYS_WARN_REJECTED, "phys_step: mass matrix not positive definite at time %g; step rejected", d->time);
    return 0;
  }

  // v_f = v + dt (M~^-1 (tau - c) + r), r the residual network's acceleration (none: 0)
  for (int i = 0; i < nv; i++) {
    f[i] = tau[i] - d->qfrc_bias[i];
  }
  phys_solve_m(m, d->qLD, f, f);
  add_residual(m, d, f);
  for (int i = 0; i < nv; i++) {
    vnew[i] = d->qvel[i] + dt * f[i];
  }
  memcpy(st->vf, vnew, sizeof(double) * (size_t)nv);

  // the contact problem and its impulses
  physConstraintProblem* p = &st->p;
  double *J, *G, *g, *mu;
  int frictional = phys_frictionloss_count(m) > 0 || phys_angular_count(m, st->con->con, st->con->n) > 0;
  // (rows read densely: equality rows, tendon frictionloss rows, whose groups join islands, frictionloss_coupled)
  int dense = !st->sparse_rows || m->neq > 0 || phys_frictionloss_count(m) > m->nfrictionloss;
  phys_constraint_assemble_rows(m, d, st->con->con, st->con->n, vnew, warm, dense, p, &J, &G, &g, &mu);
  st->con->nlimit = p->nl;
  st->eq.ne = 0;
  if (m->neq > 0) {   // equality rows, eliminated from the contact problem (step_equality.c)
    phys_equality_assemble(m, d, d->qLD, &st->eq);
    if (st->eq.ne > 0 && p->n > 0) phys_equality_eliminate(m, d, &st->eq, vnew, p);
  }
  physConstraintSolution* sol = &st->sol;
  memset(sol, 0, sizeof(*sol));
  sol->lambda = phys_stack_alloc(d, (size_t)p->n + 1);
  sol->state = (int*)phys_stack_alloc(d, (size_t)p->n + 1);
  memset(sol->lambda, 0, sizeof(double) * (size_t)p->n);
  memset(sol->state, 0, sizeof(int) * (size_t)p->n);
  if (p->n > 0) phys_solve_islands(m, d, solver, p, st->eq.ne > 0 ? st->eq.J : NULL, st->eq.ne, sol);   // (island.c)
  d->solver_iter = sol->iterations;
  d->solver_residual = sol->residual;
  st->fr.nf = st->fr.nfa = 0;
  if (frictional) frictionloss_solve(m, d, solver, st);   // (p->con is st->con->con)
  for (int i = 0; i < p->nc; i++) {
    for (int r = 0; r < 3; r++) {
      st->con->con[i].lambda[r] = sol->lambda[3 * i + r];
      st->con->con[i].state[r] = sol->state[3 * i + r];
    }
  }

  // qfrc_constraint = J' lambda / dt, v+ = v_f + M~^-1 J' lambda
  phys_constraint_jt(p, sol->lambda, f);
  for (int i = 0; i < nv; i++) {
    d->qfrc_constraint[i] = f[i] / dt;
  }
  phys_solve_m(m, d->qLD, f, f);
  for (int i = 0; i < nv; i++) {
    vnew[i] += f[i];
  }
  if (st->fr.nf > 0) frictionloss_finish(m, d, &st->fr, vnew);
  if (st->eq.ne > 0) phys_equality_finish(m, d, &st->eq, vnew, d->qfrc_constraint);
  position_correction(m, d, p, &st->eq, &st->pp, &st->sol_pos, st->vpos);
  if (st->eq.ne > 0) phys_equality_position(m, d, &st->eq, st->vpos);
  toi_displacement(m, d, p, sol->lambda, st->vpos);
  return 1;
}

// phys_step_constrained on the contacts cl into vnew, vpos (nv each) with its memory released
static int constrained_velocity(const physModel* m, physData* d, physSolverFn solver, const double* tau,
                                const physWarmStart* warm, physContactList* cl, double* vnew, double* vpos) {
  size_t mark = phys_stack_mark(d);
  physStepStage st;
  st.con = cl;
  st.sparse_rows = 1;   // (J is read only through its rows' dofs here)
  int ok = phys_step_constrained(m, d, solver, tau, warm, &st);
  if (ok) {
    memcpy(vnew, st.vnew, sizeof(double) * (size_t)m->nv);
    memcpy(vpos, st.vpos, sizeof(double) * (size_t)m->nv);
  }
  phys_stack_free(d, mark);
  return ok;
}

// 1 if some contact of cl penetrates (penalty forces possible)
static int penalty_penetrating(const physContactList* cl) {
  for (int i = 0; i < cl->n; i++)
    if (cl->con[i].dist < 0) return 1;
  return 0;
}

// 1 if some contact of cl has torsional or rolling friction (penalty's angular rows)
static int penalty_angular(const physModel* m, const physContactList* cl) {
  for (int i = 0; i < cl->n; i++) {
    double ang[2];
    phys_contact_friction_ang(m, cl->con + i, ang);
    if (ang[0] > 0 || ang[1] > 0) return 1;
  }
  return 0;
}

// at most this many solves of one penalty step (penalty_dense)
#define PHYS_PENALTY_SOLVES 3

// penalty with penetrating contacts cl: the linearly implicit step (src/contact/penalty.c)
//   H = M + dt B + A + dt sum_c (d_c J_n' J_n + C_c J_t' J_t) = L' D L,   v+ = v + dt H^-1 rhs,
//   rhs = tau - c + f_limit + sum_c J_n' (k (-phi) - d v_n) - C J_t' v_t
// so the contacts' normal dampers and friction act at v+ (A, f_limit: implicit limit springs). m_e of the
// restitution dampers comes from M~ = M + dt B, factored first (qLD, phys_factor_m). H keeps the tree's
// pattern when every contact lies on one chain, and is otherwise block-sparse by islands of coupled trees: the
// L' D L runs along H's elimination tree (phys_penalty_etree: no work outside H's entries and their fill, the
// same numbers as the dense pattern's), dense only with equality rows or tendon springs. A second solve re-evaluates
// C at v+ (the friction of a sliding contact is then mu f_n to second order in a step's speed change), a
// third one follows only if a contact was released (its f_n at v+ would pull). qfrc_constraint = the
// penalty force at v+. Returns 0 (counted warning, nothing changed) if a matrix is not positive definite.
static int penalty_dense(const physModel* m, physData* d, physContactList* cl, const double* tau,
                         const double* add, const double* alim, double* vnew) {
  int nv = m->nv, nc = cl->n;
  double dt = m->opt.timestep;
  size_t mark = phys_stack_mark(d), nn = (size_t)nv * (size_t)nv;
  double* J = phys_stack_alloc(d, 3 * (size_t)nc * (size_t)nv + 1);
  double* H = phys_stack_alloc(d, nn);
  physPenaltyContact* pc = (physPenaltyContact*)phys_stack_alloc(
      d, ((size_t)nc * sizeof(physPenaltyContact) + sizeof(double) - 1) / sizeof(double) + 1);
  physEqualityRows er = {0};   // equality springs (step_equality.c): H dense
  // tendon limit springs and frictionloss (tendon_rows.c): H dense
  int ntl = phys_penalty_tendon_limits(m, d, NULL, NULL, NULL) + phys_penalty_tendon_frictionloss(m, d, NULL, NULL, NULL);
  const int* parent = NULL;   // H's elimination tree (equality rows and tendon springs: dense)
  if (m->neq == 0 && ntl == 0 && phys_penalty_tree(m, cl->con, nc)) {
    parent = m->dof_parentid;   // every contact on one chain: H keeps the tree's pattern, its etree is the tree
  } else if (m->neq == 0 && ntl == 0) {
    int* et = (int*)phys_stack_alloc(d, (size_t)nv / 2 + 1);
    phys_penalty_etree(m, d, cl->con, nc, et);
    parent = et;
  }
  phys_crb(m, d);
  phys_bias_forces(m, d);

  // M~ = M + dt B factored (qLD) for the contacts' Delassus diagonals; their linearization
  phys_implicit_damping_add(m, vnew);
  int ok = phys_factor_m(m, d->qLD, d->qM, vnew) == nv;
  int ang = penalty_angular(m, cl);   // (J and the angular rows are read on the contacts' chains only)
  if (ok) phys_penalty_contacts_rows(m, d, cl->con, nc, d->qLD, 0, pc, J);
  if (ok && ang)   // torsional and rolling friction (issue 16): angular rows
    phys_penalty_contacts_ang(m, d, cl->con, nc, pc, J, phys_stack_alloc(d, 3 * (size_t)nc * (size_t)nv + 1));
  if (ok && m->neq > 0) phys_equality_assemble(m, d, d->qLD, &er);

  // H a = rhs, again after phys_penalty_update changed a coefficient (once) or released a contact
  for (int it = 0; ok && it < PHYS_PENALTY_SOLVES; it++) {
    phys_ldl_copy(H, d->qM, parent, nv);   // (the entries the factor reads; the contacts add inside them)
    for (int i = 0; i < nv; i++) {
      H[i * nv + i] += add[i];
      vnew[i] = tau[i] + d->qfrc_constraint[i] - d->qfrc_bias[i];
    }
    phys_penalty_assemble(m, d, nc, pc, J, vnew, H);
    if (er.ne > 0) phys_equality_penalty_assemble(m, d, &er, vnew, H);
    if (ntl > 0) phys_penalty_tendon_limits(m, d, NULL, H, NULL), phys_penalty_tendon_frictionloss(m, d, NULL, H, NULL);
    ok = phys_ldl_factor(H, parent, nv) == nv;
    if (!ok) break;
    phys_ldl_solve(vnew, H, parent, vnew, nv);
    for (int i = 0; i < nv; i++) vnew[i] = d->qvel[i] + dt * vnew[i];
    int changed = it + 1 < PHYS_PENALTY_SOLVES ? phys_penalty_update(m, cl->con, nc, pc, J, vnew) : 0;
    if (!changed) break;
  }
  if (!ok) {
    phys_data_warn(d, PHYS_WARN_REJECTED, "phys_step: penalty matrix not positive definite at time %g; step rejected", d->time);
    phys_stack_free(d, mark);
    return 0;
  }

  // forces at v+: contacts (and their impulses), limits (f - A a)
  phys_penalty_finish(m, cl->con, nc, pc, J, vnew, d->qfrc_constraint);
  if (er.ne > 0) phys_equality_penalty_finish(m, d, &er, vnew, d->qfrc_constraint);
  for (int i = 0; i < nv; i++) d->qfrc_constraint[i] -= alim[i] * (vnew[i] - d->qvel[i]) / dt;
  if (ntl > 0) {
    phys_penalty_tendon_limits(m, d, d->qfrc_constraint, NULL, vnew);
    phys_penalty_tendon_frictionloss(m, d, d->qfrc_constraint, NULL, vnew);
  }
  phys_stack_free(d, mark);
  return 1;
}

// v+ with penalty forces. Joint-limit springs in implicit form (A = diag(dt d_c + dt^2 k_c) on limited
// dofs, phys_penalty_limits). Without penetrating contacts, one ABA pass:
//   v+ = v + dt (M + dt B + A)^-1 (tau + f_limit - c),  qfrc_constraint = f_limit - A a;
// with them, with equality rows, pushing tendon limits or tendon frictionloss (rank-one terms r r' along the
// tendon's moment, tendon_rows.c) the dense implicit step penalty_dense. The contacts cl receive their impulses and the number of
// active limits. Returns 0 if the step is rejected.
static int penalty_velocity(const physModel* m, physData* d, physContactList* cl, double* tau, double* vnew) {
  int nv = m->nv;
  double dt = m->opt.timestep;
  size_t mark = phys_stack_mark(d);
  double* add = phys_stack_alloc(d, (size_t)nv);
  double* alim = phys_stack_alloc(d, (size_t)nv);
  memset(d->qfrc_constraint, 0, sizeof(double) * (size_t)nv);
  memset(alim, 0, sizeof(double) * (size_t)nv);
  cl->nlimit = phys_penalty_limits(m, d, d->qfrc_constraint, alim);
  int ntl = m->nspring > 0 ? phys_penalty_tendon_limits(m, d, d->qfrc_constraint, NULL, NULL) : 0;
  cl->nlimit += ntl;
  if (m->nspring > 0) ntl += phys_penalty_tendon_frictionloss(m, d, d->qfrc_constraint, NULL, NULL);
  phys_penalty_frictionloss(m, d, d->qfrc_constraint, alim);
  int damp = implicit_damping(m);
  for (int i = 0; i < nv; i++) add[i] = alim[i] + (damp ? dt * m->dof_damping[i] : 0);
  if (penalty_penetrating(cl) || phys_equality_rows(m) > 0 || ntl > 0) {   // (tendon limits: H dense)
    int ok = penalty_dense(m, d, cl, tau, add, alim, vnew);
    phys_stack_free(d, mark);
    return ok;
  }
  for (int i = 0; i < cl->n; i++) {
    memset(cl->con[i].lambda, 0, sizeof cl->con[i].lambda);   // contacts without force
    cl->con[i].efc_adr = -1;
  }
  for (int i = 0; i < nv; i++) tau[i] += d->qfrc_constraint[i];
  phys_aba(m, d, tau, add, vnew);
  for (int i = 0; i < nv; i++) {
    d->qfrc_constraint[i] -= alim[i] * vnew[i];
    vnew[i] = d->qvel[i] + dt * vnew[i];
  }
  phys_stack_free(d, mark);
  return 1;
}

//---------------------------------------------------------------------------------------------------------
// energy check (PHYS_ENBL_ENERGY)
//
// At the start of each step, E = T + U at the current state from what the step computed anyway (cvel,
// cinert, site positions, the contact list): T = 0.5 sum_b cvel_b . (cinert_b cvel_b) + 0.5 sum armature v^2
// (= 0.5 v' M v), U as phys_energy's (gravity, joint and point springs) plus, with penalty contacts, the
// energy 0.5 k_c phi^2 of the contact and limit springs. The previous step (start energy E0) gained
//   gain = E - E0 - W_pos - U_fresh,
// W_pos = dt vpos . c the potential energy its position correction added (split impulse, removing
// penetration; c ~ the gravity load when resting), U_fresh the springs of penalty contacts found already
// penetrating (the detection's energy, penalty_energy). Without work input in that step (every ctrl, act,
// qfrc_applied and xfrc_applied zero) a gain above
//   PHYS_ENERGY_RTOL (S0 + S) + PHYS_ENERGY_ATOL (|U0| + |U|) + PHYS_ENERGY_LIFT M_total |g|
// (S = T plus the penalty springs' energy) is a PHYS_WARN_ENERGY warning, its time the gaining step's start.
// Semi-implicit Euler changes the energy of a smooth system by O(dt^2) per step, (omega dt)^2 T for a mode
// of frequency omega: 1% of the kinetic energy allows omega dt ~ 0.1 on conservative systems. The second
// term is rounding; the third the whole mass lifted by 0.1 um (the humanoid lying under lcp creeps by up to
// 32 nm in a step as its contacts settle). A resting contact turned into a rebound, or an unstable penalty
// spring, gains far more. Consecutive steps are compared only when the state was not set in between (the
// time and a hash of qpos, qvel as the last step left them).

#define PHYS_ENERGY_RTOL 1e-2
#define PHYS_ENERGY_ATOL 1e-10
#define PHYS_ENERGY_LIFT 1e-7

static double gravity_energy(const physModel* m, const physData* d);   // (energy, below)
static double joint_spring_energy(const physModel* m, const physData* d);
static double point_spring_energy(const physModel* m, const physData* d);

// kinetic energy 0.5 v' M v from the body velocities and inertias (needs phys_com_pos, phys_com_vel)
static double kinetic_energy(const physModel* m, const physData* d) {
  double T = 0, f[6];
  for (int b = 1; b < m->nbody; b++) {
    phys_inert_mul(f, d->cinert + 10 * b, d->cvel + 6 * b);
    T += 0.5 * phys_dot6(d->cvel + 6 * b, f);
  }
  for (int i = 0; i < m->nv; i++) T += 0.5 * m->dof_armature[i] * d->qvel[i] * d->qvel[i];
  return T;
}

// 1 if geom pair (g0, g1) had a penetrating contact in the last step's list (the warm-start input)
static int pair_was_penetrating(const physWarmStart* prev, int g0, int g1) {
  for (int a = 0; a < prev->n; a++) {
    const physContact* p = prev->con + a;
    if (p->geom[0] == g0 && p->geom[1] == g1 && p->dist < 0) return 1;
  }
  return 0;
}

// energy 0.5 k_c sum min(phi, 0)^2 of the penalty springs: penetrating contacts and violated joint limits;
// *fresh = the part of pairs that did not penetrate at the last step's start (a contact found already
// penetrated: the step before moved it in without its spring acting, so that energy is the detection's, not
// a gain of the dynamics; cl: this step's contacts, prev: the last step's list)
static double penalty_energy(const physModel* m, const physData* d, const physContactList* cl,
                             const physWarmStart* prev, double* fresh) {
  double e = 0, k = m->opt.penalty_stiffness;
  *fresh = 0;
  for (int i = 0; i < cl->n; i++) {
    const physContact* c = cl->con + i;
    double x = c->dist < 0 ? c->dist : 0;
    e += 0.5 * k * x * x;
    if (x < 0 && !pair_was_penetrating(prev, c->geom[0], c->geom[1])) *fresh += 0.5 * k * x * x;
  }
  for (int j = 0; j < m->njnt && !(m->opt.disableflags & PHYS_DSBL_LIMIT); j++) {
    if (!m->jnt_limited[j] || (m->jnt_type[j] != PHYS_JNT_HINGE && m->jnt_type[j] != PHYS_JNT_SLIDE)) continue;
    double q = d->qpos[m->jnt_qposadr[j]], lo = m->jnt_range[2 * j], hi = m->jnt_range[2 * j + 1];
    double x = q < lo ? lo - q : (q > hi ? q - hi : 0);
    e += 0.5 * k * x * x;
  }
  return e;
}

// potential energy as phys_energy's (needs kinematics), plus the penalty springs (*spring; *fresh:
// penalty_energy's)
static double potential_energy(const physModel* m, const physData* d, const physContactList* cl,
                               const physWarmStart* prev, double* spring, double* fresh) {
  double U = gravity_energy(m, d);
  *spring = *fresh = 0;
  if (!(m->opt.disableflags & PHYS_DSBL_PASSIVE)) U += joint_spring_energy(m, d) + point_spring_energy(m, d);
  if (m->opt.contact == PHYS_CONTACT_PENALTY) *spring = penalty_energy(m, d, cl, prev, fresh);
  return U + *spring;
}

// 1 if a control or an activation (actuation enabled), qfrc_applied or xfrc_applied is nonzero, or a residual
// network acts: the step may do work
static int work_input(const physModel* m, const physData* d) {
  if (m->residual) return 1;
  if (!(m->opt.disableflags & PHYS_DSBL_ACTUATION)) {
    for (int i = 0; i < m->nu; i++)
      if (d->ctrl[i] != 0) return 1;
    for (int i = 0; i < m->na; i++)   // an activation drives its actuator after its control went to 0
      if (d->act[i] != 0) return 1;
  }
  for (int i = 0; i < m->nv; i++)
    if (d->qfrc_applied[i] != 0) return 1;
  for (int i = 6; i < 6 * m->nbody; i++)
    if (d->xfrc_applied[i] != 0) return 1;
  return 0;
}

// FNV-1a hash of the bits of qpos and qvel
static uint64_t state_hash(const physModel* m, const physData* d) {
  uint64_t h = 1469598103934665603ULL, x;
  for (int i = 0; i < m->nq + m->nv; i++) {
    memcpy(&x, i < m->nq ? d->qpos + i : d->qvel + i - m->nq, sizeof x);
    h = (h ^ x) * 1099511628211ULL;
  }
  return h;
}

// at a step's start (kinematics, cvel and the contact list cl of this state computed; prev the last step's
// list): compare with the last step's start energy (file comment above) and record this one
static void energy_check(const physModel* m, physData* d, const physContactList* cl, const physWarmStart* prev) {
  double spring, fresh, T = kinetic_energy(m, d), U = potential_energy(m, d, cl, prev, &spring, &fresh), E = T + U;
  if (d->energy_tend == d->time && !d->energy_input && d->energy_state == state_hash(m, d)) {
    double U0 = d->energy_start - d->energy_scale, gain = E - d->energy_start - d->energy_poswork - fresh;
    double g = phys_norm3(m->opt.gravity);
    double tol = PHYS_ENERGY_RTOL * (T + spring + d->energy_scale) + PHYS_ENERGY_ATOL * (fabs(U0) + fabs(U)) +
                 PHYS_ENERGY_LIFT * m->body_subtreemass[0] * g;
    if (gain > tol) {
      int first = d->warning_count[PHYS_WARN_ENERGY] == 0;
      phys_data_warn(d, PHYS_WARN_ENERGY, "phys_step: energy rose by %.3g J (from %.9g J) in the step at time %g "
                     "without work input", gain, d->energy_start, d->energy_tstart);
      if (first) d->warning_time[PHYS_WARN_ENERGY] = d->energy_tstart;
    }
  }
  d->energy_start = E;
  d->energy_scale = T + spring;
  d->energy_tstart = d->time;
  d->energy_input = work_input(m, d);
  d->energy_poswork = 0;
}

// the potential energy W_pos = dt vpos . qfrc_bias the step's position correction vpos adds (qfrc_bias is
// computed whenever vpos is nonzero)
static void energy_poswork(const physModel* m, physData* d, const double* vpos) {
  double w = 0;
  for (int i = 0; i < m->nv; i++)
    if (vpos[i] != 0) w += vpos[i] * d->qfrc_bias[i];
  d->energy_poswork = m->opt.timestep * w;
}

//---------------------------------------------------------------------------------------------------------
// the step

// One semi-implicit Euler step. Smooth part exactly as MuJoCo 2.2.2's mj_Euler:
//   f  = qfrc_passive + qfrc_actuator + qfrc_applied + J' xfrc_applied - qfrc_bias   (at q, v)
//   a  = (M + dt*B)^-1 f,   B = diag(dof_damping)        (implicit joint damping)
//   v+ = v + dt*a,   q+ = q (+) dt*v+,   time += dt
// Implicit damping: f already holds the explicit damping force -B v (phys_passive), as in MuJoCo. With
// f = f_o - B v, (M + dt B) a = f gives M a = f_o - B (v + dt a) = f_o - B v+: the damper is evaluated at
// the new velocity (backward Euler for the damping term, forward for the rest), so a stiff damper with
// dt*b >> M decays monotonically instead of diverging as explicit Euler does for dt > 2M/b. It is skipped
// (a = M^-1 f) when PHYS_DSBL_EULERDAMP is set or all dof_damping are zero; like MuJoCo 2.2.2 it does not
// look at PHYS_DSBL_PASSIVE.
// Constraints: after kinematics, collision (unless PHYS_DSBL_CONTACT) and the joint limits at q. With
// none active the step is the unconstrained one above (one articulated-body pass; qM and qfrc_bias are not
// computed: call phys_forward for them). Otherwise, by m->opt.contact: lcp, cone, ccp solve for impulses,
// v+ = v_f + M~^-1 J' lambda (M~ = M + dt B; qM, qfrc_bias and the tree-sparse factor qLD of M~ are
// computed), and penetration deeper than PHYS_CONTACT_SLOP is removed at the position level (split
// impulse, contact.h); penalty adds its forces to f, with normal dampers and friction implicit in one
// L' D L solve (tree-sparse when the contacts allow) when a contact penetrates (penalty_dense; qM,
// qfrc_bias and qLD computed), one articulated-body pass otherwise. d->qacc = (v+ - v)/dt is the
// acceleration used, d->qfrc_constraint the constraint force (J' lambda / dt, or the penalty force),
// d->contact the contacts with their impulses; the previous list moves to d->contact_prev, the step's
// warm-start input (physWarmStart, contact.h; phys_step_warm takes it explicitly instead).
// A non-finite new state is not accepted: qpos, qvel and time are restored and a warning is counted in d.
// With m->opt.integrator PHYS_INT_IMPLICIT the velocity stage without active constraints is backward Euler
// linearized on the passive forces instead (implicit.c, step.h phys_implicit_acc; issue 16 item 4); a step
// with active constraints stays as above.
// Scratch comes from d's stack arena; nothing is allocated.
void phys_step(const physModel* m, physData* d) { phys_step_solver(m, d, NULL); }

// the state at a step's start, kept in the arena (NULL until saved): what a step that ran out of arena restores
typedef struct stepBackup_ {
  double* qpos0;
  double* qvel0;
  double* act0;
} stepBackup;

// act += dt act_dot (MuJoCo 2.2.2's Euler: after the forces used the current act), clamped to actrange where
// actlimited
static void integrate_act(const physModel* m, physData* d, double dt) {
  for (int a = 0; a < m->nu; a++) {
    int adr = m->actuator_actadr[a];
    if (adr < 0) continue;
    double x = d->act[adr] + dt * d->act_dot[adr];
    if (m->actuator_actlimited[a]) {
      const double* r = m->actuator_actrange + 2 * a;
      x = x < r[0] ? r[0] : (x > r[1] ? r[1] : x);
    }
    d->act[adr] = x;
  }
}

// phys_step_solver's body with the warm-start input warm (NULL: d's last list, moved to d->contact_prev
// first as phys_step does), the step's contacts into cl; bk receives the saved state
static void step_body(const physModel* m, physData* d, physSolverFn solver, const physWarmStart* warm,
                      physContactList* cl, volatile stepBackup* bk) {
  int nq = m->nq, nv = m->nv;
  double dt = m->opt.timestep;
  size_t mark = phys_stack_mark(d);
  double* tau = phys_stack_alloc(d, (size_t)nv);
  double* vnew = phys_stack_alloc(d, (size_t)nv);
  double* vpos = phys_stack_alloc(d, (size_t)nv);   // position-only correction velocity (split impulse)
  double* qpos0 = phys_stack_alloc(d, (size_t)nq);
  double* qvel0 = phys_stack_alloc(d, (size_t)nv);
  double* act0 = phys_stack_alloc(d, (size_t)m->na);
  memcpy(qpos0, d->qpos, sizeof(double) * (size_t)nq);
  memcpy(qvel0, d->qvel, sizeof(double) * (size_t)nv);
  if (m->na) memcpy(act0, d->act, sizeof(double) * (size_t)m->na);
  bk->qpos0 = qpos0, bk->qvel0 = qvel0, bk->act0 = act0;

  smooth_pipeline(m, d, tau, 0);
  physWarmStart prev = warm ? *warm : keep_previous(d);
  detect_contacts(m, d, cl);
  if (phys_adhesion_any(m)) {   // adhesion actuators: their moments come from this step's contacts (adhesion.c)
    double* fadh = phys_stack_alloc(d, (size_t)nv);
    memset(fadh, 0, sizeof(double) * (size_t)nv);
    phys_adhesion(m, d, cl->con, cl->n, fadh);
    for (int i = 0; i < nv; i++) tau[i] += fadh[i], d->qfrc_actuator[i] += fadh[i];
  }
  int energy = m->opt.enableflags & PHYS_ENBL_ENERGY;
  if (energy) energy_check(m, d, cl, &prev);
  int ok = 1, nlimit = phys_constraint_nlimit(m, d);
  cl->nlimit = 0;
  d->solver_iter = 0;
  d->solver_residual = 0;
  memset(vpos, 0, sizeof(double) * (size_t)nv);
  if (cl->n == 0 && nlimit == 0 && phys_frictionloss_count(m) == 0 && phys_equality_rows(m) == 0) {
    // a = (M + dt B)^-1 (tau - c) + r: one articulated-body pass, no mass matrix, and the residual network's
    // acceleration r (none: 0); v+ = v + dt a
    memset(d->qfrc_constraint, 0, sizeof(double) * (size_t)nv);
    if (m->opt.integrator == PHYS_INT_IMPLICIT) ok = phys_implicit_acc(m, d, tau, d->qacc);   // (implicit.c)
    else unconstrained_acc(m, d, tau, d->qacc);
    if (!ok) phys_data_warn(d, PHYS_WARN_REJECTED, "phys_step: implicit matrix M + dt D + dt^2 K not positive definite at time %g; step rejected", d->time);
    add_residual(m, d, d->qacc);
    for (int i = 0; i < nv; i++) {
      vnew[i] = d->qvel[i] + dt * d->qacc[i];
    }
  } else {
    if (m->opt.contact == PHYS_CONTACT_PENALTY) {
      ok = penalty_velocity(m, d, cl, tau, vnew);
    } else {
      ok = constrained_velocity(m, d, solver ? solver : option_solver(m), tau, &prev, cl, vnew, vpos);
    }
    for (int i = 0; i < nv; i++) {
      d->qacc[i] = (vnew[i] - d->qvel[i]) / dt;
    }
  }
  // sensors at the step's start state, as MuJoCo's mj_step (its mj_forward before integrating); none: no call
  if (m->nsensor > 0) phys_sensor_list(m, d, cl->con, cl->n);

  // v+ as computed; q+ = q (+) dt*(v+ + vpos), vpos the split-impulse position correction
  if (ok) {
    memcpy(d->qvel, vnew, sizeof(double) * (size_t)nv);
    if (energy) energy_poswork(m, d, vpos);
    for (int i = 0; i < nv; i++) {
      vpos[i] += vnew[i];
    }
    phys_integrate_pos(m, d->qpos, vpos, dt);
    integrate_act(m, d, dt);
  }

  // reject a non-finite state: restore and count a warning
  if (ok && all_finite(d->qpos, nq) && all_finite(d->qvel, nv) && all_finite(d->act, m->na)) {
    d->time += dt;
    if (energy) {
      d->energy_tend = d->time;
      d->energy_state = state_hash(m, d);
    }
  } else {
    d->energy_tend = NAN;
    memcpy(d->qpos, qpos0, sizeof(double) * (size_t)nq);
    memcpy(d->qvel, qvel0, sizeof(double) * (size_t)nv);
    if (m->na) memcpy(d->act, act0, sizeof(double) * (size_t)m->na);
    if (ok) {
      phys_data_warn(d, PHYS_WARN_REJECTED, "phys_step: non-finite state at time %g; step rejected, state restored", d->time);
    }
  }
  phys_stack_free(d, mark);
}

// the step under an arena guard (step_body's arguments). A step that runs out of arena (arena.h) is
// rejected: qpos, qvel and time as at its start, a PHYS_WARN_REJECTED warning
static void guarded_step(const physModel* m, physData* d, physSolverFn solver, const physWarmStart* warm,
                         physContactList* cl) {
  volatile stepBackup bk = {NULL, NULL, NULL};
  physArenaGuard g;
  d->nstep++;
  phys_arena_enter(d, &g);
  if (setjmp(g.env)) {
    // the saved state is still in the arena (the refused request wrote nothing)
    if (bk.qpos0) memcpy(d->qpos, bk.qpos0, sizeof(double) * (size_t)m->nq);
    if (bk.qvel0) memcpy(d->qvel, bk.qvel0, sizeof(double) * (size_t)m->nv);
    if (bk.act0 && m->na) memcpy(d->act, bk.act0, sizeof(double) * (size_t)m->na);
    d->energy_tend = NAN;
    phys_arena_failed(d, &g, PHYS_WARN_REJECTED, "phys_step: step rejected, state restored");
    return;
  }
  if (m->opt.integrator == PHYS_INT_PBD) phys_pbd_step(m, d, cl, &bk.qpos0, &bk.qvel0);
  else step_body(m, d, solver, warm, cl, &bk);
  phys_arena_leave(d, &g);
}

// the step into d's own contact list (d->contact, ncon, ncon_dropped, nlimit), the step's output: the list
// keeps d's values until the detection replaces them (a step rejected before it leaves them as they were)
static void step_into_data(const physModel* m, physData* d, physSolverFn solver, const physWarmStart* warm) {
  physContactList cl = {d->contact, d->ncon, d->nconmax, d->ncon_dropped, d->nlimit};
  guarded_step(m, d, solver, warm, &cl);
  d->ncon = cl.n;
  d->ncon_dropped = cl.dropped;
  d->nlimit = cl.nlimit;
}

// phys_step with a given contact solver (step.h); NULL: the solver of m->opt.contact
void phys_step_solver(const physModel* m, physData* d, physSolverFn solver) { step_into_data(m, d, solver, NULL); }

// the step from an explicit warm-start input into out (step.h): d->contact_prev is neither read nor written
void phys_step_warm(const physModel* m, physData* d, physSolverFn solver, const physWarmStart* warm,
                    physContactList* out) {
  physWarmStart cold = {0, NULL};
  if (out) guarded_step(m, d, solver, warm ? warm : &cold, out);
  else step_into_data(m, d, solver, warm ? warm : &cold);
}

// phys_step's velocity stage at d's state without integrating (step.h): smooth pipeline, contact detection
// into the caller's list con (d->contact, d->contact_prev untouched) and, with constraints and lcp/cone/ccp,
// the constrained update from the warm-start input warm into st with d->qacc = (v+ - v)/dt
int phys_step_stage(const physModel* m, physData* d, physSolverFn solver, const physWarmStart* warm,
                    physContactList* con, physStepStage* st) {
  int nv = m->nv;
  double dt = m->opt.timestep;
  memset(st, 0, sizeof(*st));
  st->con = con;
  st->tau = phys_stack_alloc(d, (size_t)nv);
  smooth_pipeline(m, d, st->tau, 0);
  detect_contacts(m, d, con);
  int nlimit = phys_constraint_nlimit(m, d);
  con->nlimit = 0;
  d->solver_iter = 0;
  d->solver_residual = 0;
  if ((con->n == 0 && nlimit == 0) || m->opt.contact == PHYS_CONTACT_PENALTY) {
    return 0;
  }
  if (!phys_step_constrained(m, d, solver ? solver : option_solver(m), st->tau, warm, st)) {
    return -1;
  }
  for (int i = 0; i < nv; i++) {
    d->qacc[i] = (st->vnew[i] - d->qvel[i]) / dt;
  }
  return 1;
}

//---------------------------------------------------------------------------------------------------------
// energy

// length of spring s: sum of the distances between consecutive path sites (needs site_xpos); a fixed
// tendon's sum coef q and a path with wraps or pulleys: phys_spring_eval
static double spring_length(const physModel* m, const physData* d, int s) {
  if (!phys_tendon_plain(m, s)) return phys_spring_eval(m, d, s, NULL, 0, NULL);
  double len = 0;
  const int* site = m->spring_site + m->spring_adr[s];
  for (int k = 0; k + 1 < m->spring_num[s]; k++) {
    const double* a = d->site_xpos + 3 * site[k];
    const double* b = d->site_xpos + 3 * site[k + 1];
    double dx[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
    len += phys_norm3(dx);
  }
  return len;
}

// potential energy of joint springs: 0.5 k (q - q_spring)^2 for hinge/slide, 0.5 k |p - p_spring|^2 for
// a free joint's position, 0.5 k |log(q_spring^-1 q)|^2 for ball and free orientations (as mj_energyPos)
static double joint_spring_energy(const physModel* m, const physData* d) {
  double e = 0;
  for (int j = 0; j < m->njnt; j++) {
    double k = m->jnt_stiffness[j], dif[3];
    int pa = m->jnt_qposadr[j];
    if (k == 0) {
      continue;
    }
    int type = m->jnt_type[j];
    if (type == PHYS_JNT_FREE) {
      // position part, then the orientation part at pa + 3
      for (int i = 0; i < 3; i++) {
        dif[i] = d->qpos[pa + i] - m->qpos_spring[pa + i];
      }
      e += 0.5 * k * phys_dot3(dif, dif);
      pa += 3;
    }
    if (type == PHYS_JNT_FREE || type == PHYS_JNT_BALL) {
      quat_difference(dif, m->qpos_spring + pa, d->qpos + pa, 1.0);
      e += 0.5 * k * phys_dot3(dif, dif);
    } else {
      dif[0] = d->qpos[pa] - m->qpos_spring[pa];
      e += 0.5 * k * dif[0] * dif[0];
    }
  }
  return e;
}

// rest length of spring s: spring_restlength + gear[0]*ctrl (clamped) of its PHYS_TRN_RESTLENGTH actuators
static double spring_rest(const physModel* m, const physData* d, int s) {
  double L0 = m->spring_restlength[s];
  if (m->opt.disableflags & PHYS_DSBL_ACTUATION) {
    return L0;
  }
  for (int a = 0; a < m->nu; a++) {
    if (m->actuator_trntype[a] == PHYS_TRN_RESTLENGTH && m->actuator_trnid[a] == s) {
      double c = d->ctrl[a];
      const double* r = m->actuator_ctrlrange + 2 * a;
      if (m->actuator_ctrllimited[a]) {
        c = c < r[0] ? r[0] : (c > r[1] ? r[1] : c);
      }
      L0 += m->actuator_gear[6 * a] * c;
    }
  }
  return L0;
}

// potential energy of the point-to-point springs: 0.5 k (L - L0)^2 (two-sided, as MuJoCo's tendon springs)
static double point_spring_energy(const physModel* m, const physData* d) {
  double e = 0;
  for (int s = 0; s < m->nspring; s++) {
    double dl = spring_length(m, d, s) - spring_rest(m, d, s);
    e += 0.5 * m->spring_stiffness[s] * dl * dl;
  }
  return e;
}

// gravitational potential energy U = -sum_b m_b g . xipos_b (0 with gravity disabled; needs kinematics)
static double gravity_energy(const physModel* m, const physData* d) {
  double U = 0;
  if (m->opt.disableflags & PHYS_DSBL_GRAVITY) return 0;
  for (int b = 1; b < m->nbody; b++) U -= m->body_mass[b] * phys_dot3(m->opt.gravity, d->xipos + 3 * b);
  return U;
}

// energy[0] = potential (gravity - sum m_b g.xipos_b, joint and point springs), energy[1] = kinetic
// 0.5 v' M v (M with armature). Recomputes kinematics and M at the current state (overwrites xpos...qM).
void phys_energy(const physModel* m, physData* d, double energy[2]) {
  int nv = m->nv;
  phys_kinematics(m, d);
  phys_com_pos(m, d);
  phys_crb(m, d);

  double pot = gravity_energy(m, d);
  if (!(m->opt.disableflags & PHYS_DSBL_PASSIVE)) {
    pot += joint_spring_energy(m, d) + point_spring_energy(m, d);
  }

  // T = 0.5 v' M v
  double kin = 0;
  for (int i = 0; i < nv; i++) {
    double mv = 0;
    for (int k = 0; k < nv; k++) {
      mv += d->qM[i * nv + k] * d->qvel[k];
    }
    kin += 0.5 * d->qvel[i] * mv;
  }
  energy[0] = pot;
  energy[1] = kin;
}

//---------------------------------------------------------------------------------------------------------
// the state a step advances (step.h): qpos, qvel, time

size_t phys_state_size(const physModel* m) { return (size_t)(m->nq + m->nv + m->na + 1); }

// x <- (qpos, qvel, act, time) of d
void phys_state_save(const physModel* m, const physData* d, double* x) {
  memcpy(x, d->qpos, sizeof(double) * (size_t)m->nq);
  memcpy(x + m->nq, d->qvel, sizeof(double) * (size_t)m->nv);
  if (m->na) memcpy(x + m->nq + m->nv, d->act, sizeof(double) * (size_t)m->na);
  x[m->nq + m->nv + m->na] = d->time;
}

// d's qpos, qvel, act, time <- x
void phys_state_load(const physModel* m, physData* d, const double* x) {
  memcpy(d->qpos, x, sizeof(double) * (size_t)m->nq);
  memcpy(d->qvel, x + m->nq, sizeof(double) * (size_t)m->nv);
  if (m->na) memcpy(d->act, x + m->nq + m->nv, sizeof(double) * (size_t)m->na);
  d->time = x[m->nq + m->nv + m->na];
}
