// implicit.c - the implicit integrator's velocity stage (PHYS_INT_IMPLICIT, issue 16 item 4): backward Euler
// linearized once per step on the passive forces (step.h phys_implicit_acc has the equations).
//
// Which forces are implicit: the passive ones, f_p = joint springs - B v - sum_s u_s (k_s (L_s - L0_s) + b_s Ldot_s)
// with u_s = dL_s/dq' (hinge/slide/ball/free joint springs, dof damping, springs and dampers along site paths and
// fixed tendons: the cables of a tensegrity). Their linearization uses the positive semidefinite part:
//   K = -df_p/dq ~ diag(joint stiffness on the joint's dofs) + sum_s k_s u_s u_s',
//   D = -df_p/dv  = diag(dof_damping) + sum_s b_s u_s u_s'      (exact: Ldot = u' v),
// K drops the tension times the path's curvature (-(k (L - L0) + b Ldot) d u_s/dq, indefinite for a taut cable
// turning, and the ball spring's log map curvature): the matrix stays symmetric positive definite for any
// stiffness and dt, as the Gauss-Newton stiffness of cloth simulators. Actuator forces (servos), applied forces,
// gravity, Coriolis and contact forces stay explicit (penalty contacts keep penalty.c's own linearly implicit
// dampers; constrained steps: see step.h).
// Paper 002 (appendix VI) solves one 21 x 21 system per rod with each spring's far end held at time t and the
// spring force along its direction at t: the same stiffness direction (k u u' on the spring's axis) applied rod
// by rod (block Jacobi). Here one nv x nv system couples every rod and every cable (the whole tensegrity at once).
#include <math.h>
#include <string.h>

#include "arena.h"
#include "chol.h"
#include "dyn.h"
#include "model.h"
#include "physid.h"
#include "step.h"

// u = dL_s/dq' (nv) of spring s at d's kinematics: the generalized force of a unit tension, negated
static void spring_moment(const physModel* m, const physData* d, int s, double* u) {
  memset(u, 0, sizeof(double) * (size_t)m->nv);
  phys_spring_eval(m, d, s, NULL, -1, u);
}

// K (stiffness) and D (damping) of the implicit step at d's kinematics (nv x nv each, row-major; either may be
// NULL), the header's positive semidefinite linearization; scratch nv from d's arena
void phys_implicit_kd(const physModel* m, physData* d, double* K, double* D) {
  int nv = m->nv;
  size_t nn = (size_t)nv * nv;
  if (K) memset(K, 0, sizeof(double) * nn);
  if (D) memset(D, 0, sizeof(double) * nn);
  if (m->opt.disableflags & PHYS_DSBL_PASSIVE) {
    // no passive force but the dof damping MuJoCo's mj_Euler integrates anyway (step.c)
    if (D && !(m->opt.disableflags & PHYS_DSBL_EULERDAMP))
      for (int i = 0; i < nv; i++) D[(size_t)i * nv + i] = m->dof_damping[i];
    return;
  }
  for (int j = 0; j < m->njnt && K; j++) {
    int da = m->jnt_dofadr[j], n = m->jnt_type[j] == PHYS_JNT_FREE ? 6 : (m->jnt_type[j] == PHYS_JNT_BALL ? 3 : 1);
    for (int i = da; i < da + n; i++) K[(size_t)i * nv + i] = m->jnt_stiffness[j];
  }
  if (D && !(m->opt.disableflags & PHYS_DSBL_EULERDAMP))
    for (int i = 0; i < nv; i++) D[(size_t)i * nv + i] = m->dof_damping[i];
  size_t mark = phys_stack_mark(d);
  double* u = phys_stack_alloc(d, (size_t)nv);
  for (int s = 0; s < m->nspring; s++) {
    double k = K ? m->spring_stiffness[s] : 0, b = D ? m->spring_damping[s] : 0;
    if (k == 0 && b == 0) continue;
    spring_moment(m, d, s, u);
    for (int i = 0; i < nv; i++) {
      if (u[i] == 0) continue;
      for (int c = 0; c < nv; c++) {
        if (k != 0) K[(size_t)i * nv + c] += k * u[i] * u[c];
        if (b != 0) D[(size_t)i * nv + c] += b * u[i] * u[c];
      }
    }
  }
  phys_stack_free(d, mark);
}

// H = M + dt D + dt^2 K (nv x nv) and the right-hand side r = tau - c - dt K v (nv) at d's state (qM and
// qfrc_bias computed), K and D from phys_implicit_kd; scratch 2 nv^2 + nv from d's arena
void phys_implicit_system(const physModel* m, physData* d, const double* tau, double* H, double* r) {
  int nv = m->nv;
  double dt = m->opt.timestep;
  size_t mark = phys_stack_mark(d), nn = (size_t)nv * nv;
  double* K = phys_stack_alloc(d, nn);
  double* D = phys_stack_alloc(d, nn);
  phys_implicit_kd(m, d, K, D);
  for (int i = 0; i < nv; i++) {
    double kv = 0;
    for (int c = 0; c < nv; c++) {
      size_t ic = (size_t)i * nv + c;
      H[ic] = d->qM[ic] + dt * D[ic] + dt * dt * K[ic];
      kv += K[ic] * d->qvel[c];
    }
    r[i] = tau[i] - d->qfrc_bias[i] - dt * kv;
  }
  phys_stack_free(d, mark);
}

// acc = H^-1 (tau - c - dt K v) (step.h); 0 if H is not positive definite
int phys_implicit_acc(const physModel* m, physData* d, const double* tau, double* acc) {
  int nv = m->nv;
  size_t mark = phys_stack_mark(d);
  double* H = phys_stack_alloc(d, (size_t)nv * nv);
  phys_crb(m, d);
  phys_bias_forces(m, d);
  phys_implicit_system(m, d, tau, H, acc);
  int ok = phys_chol_factor(H, nv, 0) == nv;
  if (ok) phys_chol_solve(acc, H, acc, nv);
  phys_stack_free(d, mark);
  return ok;
}
