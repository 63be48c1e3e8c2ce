// com.c - spatial inertias and dof motion subspaces (phys_com_pos), body velocities and the time
// derivatives of the dof subspaces (phys_com_vel). World-aligned, about the world origin.
#include <string.h>

#include "dyn.h"
#include "physid.h"
#include "rot.h"
#include "spatial.h"

// cinert_b = (m, m c, Ic + m(|c|^2 E - c c')) with c = xipos, Ic = ximat diag(inertia) ximat'
static void body_cinert(const physModel* m, physData* d, int b) {
  double Ic[6];
  phys_sym3_rot_diag(Ic, d->ximat + 9 * b, m->body_inertia + 3 * b);
  phys_inert_from_com(d->cinert + 10 * b, m->body_mass[b], d->xipos + 3 * b, Ic);
}

// rotation about a world axis a through the world point p: cdof = (a, p x a)
static void dof_rotation(double cdof[6], const double a[3], const double p[3]) {
  phys_copy3(cdof, a);
  phys_cross3(cdof + 3, p, a);
}

// cdof of every dof: slide (0, axis); hinge (axis, anchor x axis); free translation (0, e_i);
// ball and free rotation: body-frame angular velocity, axes = columns of the body's final xmat (MuJoCo),
// about the joint anchor (the body origin for a free joint)
void phys_com_pos(const physModel* m, physData* d) {
  for (int b = 0; b < m->nbody; b++) body_cinert(m, d, b);

  for (int j = 0; j < m->njnt; j++) {
    double* cdof = d->cdof + 6 * m->jnt_dofadr[j];
    const double* xaxis = d->xaxis + 3 * j;
    const double* xanchor = d->xanchor + 3 * j;
    const double* R = d->xmat + 9 * m->jnt_bodyid[j];
    switch (m->jnt_type[j]) {
      case PHYS_JNT_SLIDE:
        memset(cdof, 0, 3 * sizeof(double));
        phys_copy3(cdof + 3, xaxis);
        break;
      case PHYS_JNT_HINGE:
        dof_rotation(cdof, xaxis, xanchor);
        break;
      case PHYS_JNT_FREE:
        memset(cdof, 0, 18 * sizeof(double));
        cdof[3] = cdof[10] = cdof[17] = 1;
        cdof += 18;  // then the rotation, as a ball joint about the body origin (xanchor = xpos)
        // fall through
      default:  // PHYS_JNT_BALL
        for (int k = 0; k < 3; k++) {
          double a[3] = {R[k], R[3 + k], R[6 + k]};
          dof_rotation(cdof + 6 * k, a, xanchor);
        }
        break;
    }
  }
}

// v += sum_k cdof_k qvel_k over n dofs
static void add_dof_velocity(double v[6], const double* cdof, const double* qvel, int n) {
  for (int k = 0; k < n; k++)
    for (int i = 0; i < 6; i++) v[i] += cdof[6 * k + i] * qvel[k];
}

// cvel_b = cvel_parent + sum_j cdof_j qvel_j, accumulated joint by joint; cdof_dot_j = v x cdof_j with v
// the velocity of the frame the dof is attached to: for hinge/slide the velocity before the joint (its
// own term drops since cdof x cdof = 0); for ball/free rotations the velocity including all three
// rotation dofs, since their axes turn with the body (exact when the ball is the body's last joint).
// Free translations are constant: cdof_dot = 0. The sum sum_j cdof_dot_j qvel_j equals MuJoCo's.
void phys_com_vel(const physModel* m, physData* d) { phys_com_vel_of(m, d->cdof, d->qvel, d->cvel, d->cdof_dot); }

// phys_com_vel's sums for any qvel (nv) into cvel (6 nbody) and cdof_dot (6 nv); with qvel a tangent dq of the
// configuration these are the bodies' twists and the dofs' axes' derivatives along dq (src/grad/equality_deriv.c)
void phys_com_vel_of(const physModel* m, const double* cdofs, const double* qvels, double* cvel, double* cdof_dots) {
  memset(cvel, 0, 6 * sizeof(double));
  for (int b = 1; b < m->nbody; b++) {
    double* v = cvel + 6 * b;
    memcpy(v, cvel + 6 * m->body_parentid[b], 6 * sizeof(double));
    int j0 = m->body_jntadr[b], nj = m->body_jntnum[b];
    for (int j = j0; j < j0 + nj; j++) {
      int da = m->jnt_dofadr[j];
      const double* cdof = cdofs + 6 * da;
      const double* qvel = qvels + da;
      double* cdof_dot = cdof_dots + 6 * da;
      switch (m->jnt_type[j]) {
        case PHYS_JNT_FREE:
          memset(cdof_dot, 0, 18 * sizeof(double));
          add_dof_velocity(v, cdof, qvel, 3);
          cdof += 18;
          qvel += 3;
          cdof_dot += 18;
          // fall through
        case PHYS_JNT_BALL:
          add_dof_velocity(v, cdof, qvel, 3);
          for (int k = 0; k < 3; k++) phys_cross_motion(cdof_dot + 6 * k, v, cdof + 6 * k);
          break;
        default:  // hinge, slide
          phys_cross_motion(cdof_dot, v, cdof);
          add_dof_velocity(v, cdof, qvel, 1);
          break;
      }
    }
  }
}
