// sensor.c - sensor values (MJCF <sensor>, physSensorType) from a physData's kinematics, velocities,
// acceleration and constraint impulses, with MuJoCo 2.2.2's definitions (engine_sensor.c):
//   position stage:      jointpos, framepos, framequat, subtreecom
//   velocity stage:      jointvel, framelinvel, frameangvel (world), gyro, velocimeter (site frame)
//   acceleration stage:  actuatorfrc, accelerometer, force, torque, touch
// The acceleration stage rebuilds MuJoCo's mj_rnePostConstraint: body accelerations a_b = a_parent +
// cdof_dot qvel + cdof qacc from the world's -gravity, and the interaction forces f_b = I_b a_b + v_b x* I_b v_b
// - f_ext,b summed over each subtree (f_ext: xfrc_applied and the contacts' forces, impulse/dt). Spatial
// quantities are about the world origin here, about the subtree's centre of mass in MuJoCo: the same vectors
// moved to the sensor's point. Where physid's step differs from MuJoCo's (hard contacts, impulses), the
// acceleration-stage values inherit that difference; without constraints they agree (tests/dyn/test_sensor.c).
// Scratch from d's arena (12 nbody + 2 nv doubles and ABA's); nothing is allocated.
#include <math.h>
#include <string.h>

#include "dyn.h"
#include "rng.h"
#include "rot.h"
#include "spatial.h"

//---------------------------------------------------------------------------------------------------------
// frames of the sensed objects

// world position, rotation and body of a frame object (body: its inertial frame; xbody: its frame)
void phys_object_frame(const physModel* m, const physData* d, int objtype, int id, const double** pos,
                         const double** mat, int* body) {
  switch (objtype) {
    case PHYS_OBJ_XBODY: *pos = d->xpos + 3 * id, *mat = d->xmat + 9 * id, *body = id; break;
    case PHYS_OBJ_GEOM: *pos = d->geom_xpos + 3 * id, *mat = d->geom_xmat + 9 * id, *body = m->geom_bodyid[id]; break;
    case PHYS_OBJ_SITE: *pos = d->site_xpos + 3 * id, *mat = d->site_xmat + 9 * id, *body = m->site_bodyid[id]; break;
    default: *pos = d->xipos + 3 * id, *mat = d->ximat + 9 * id, *body = id; break;
  }
}

// world orientation of a frame object as MuJoCo's framequat: the body quaternion times the object's local one
void phys_object_quat(const physModel* m, const physData* d, int objtype, int id, double q[4]) {
  const double* local = objtype == PHYS_OBJ_GEOM ? m->geom_quat + 4 * id
                        : objtype == PHYS_OBJ_SITE ? m->site_quat + 4 * id
                        : objtype == PHYS_OBJ_BODY ? m->body_iquat + 4 * id : NULL;
  int body = objtype == PHYS_OBJ_GEOM ? m->geom_bodyid[id] : objtype == PHYS_OBJ_SITE ? m->site_bodyid[id] : id;
  if (local) phys_quat_mul(q, d->xquat + 4 * body, local);
  else memcpy(q, d->xquat + 4 * body, 4 * sizeof(double));
}

// centre of mass of body b's subtree (the body's own com when the subtree has no mass, as MuJoCo)
static void subtree_com(const physModel* m, const physData* d, int b, double com[3]) {
  double sum[3] = {0, 0, 0};
  for (int k = b; k < m->nbody; k++) {
    int in = k == b;
    for (int p = k; !in && p > b; p = m->body_parentid[p]) in = m->body_parentid[p] == b;
    if (in) phys_addscl3(sum, sum, d->xipos + 3 * k, m->body_mass[k]);
  }
  double mass = m->body_subtreemass[b];
  if (mass < 1e-15) phys_copy3(com, d->xipos + 3 * b);
  else for (int k = 0; k < 3; k++) com[k] = sum[k] / mass;
}

//---------------------------------------------------------------------------------------------------------
// acceleration stage: body accelerations and interaction forces (MuJoCo's cacc, cfrc_int)

// cacc (nbody x 6): a_world = (0, -gravity), a_b = a_parent + sum over b's dofs of cdof_dot qvel + cdof qacc
static void body_acc(const physModel* m, const physData* d, const double* qacc, double* cacc) {
  memset(cacc, 0, 6 * sizeof(double));
  if (!(m->opt.disableflags & PHYS_DSBL_GRAVITY))
    for (int k = 0; k < 3; k++) cacc[3 + k] = -m->opt.gravity[k];
  for (int b = 1; b < m->nbody; b++) {
    double* a = cacc + 6 * b;
    memcpy(a, cacc + 6 * m->body_parentid[b], 6 * sizeof(double));
    for (int j = m->body_dofadr[b]; m->body_dofnum[b] > 0 && j < m->body_dofadr[b] + m->body_dofnum[b]; j++)
      for (int k = 0; k < 6; k++) a[k] += d->cdof_dot[6 * j + k] * d->qvel[j] + d->cdof[6 * j + k] * qacc[j];
  }
}

// MuJoCo's qacc from physid's (into acc, nv): mj_step's sensors see the explicit acceleration of mj_forward,
// M a_e = f, while physid's step integrates joint damping implicitly, (M + dt D) a = f (phys_step). So
// a_e = a + M^-1 dt D a, computed as ABA(RNEA(a) + (armature + dt D) a) (phys_rnea has no armature); a itself
// when damping is explicit (eulerdamp disabled) or absent
static void explicit_acc(const physModel* m, physData* d, double* acc) {
  int damped = 0;
  for (int i = 0; i < m->nv; i++) damped |= m->dof_damping[i] > 0;
  if (!damped || (m->opt.disableflags & PHYS_DSBL_EULERDAMP)) {
    memcpy(acc, d->qacc, (size_t)m->nv * sizeof(double));
    return;
  }
  double* rhs = phys_stack_alloc(d, (size_t)m->nv);
  phys_rnea(m, d, d->qacc, rhs);
  for (int i = 0; i < m->nv; i++) rhs[i] += (m->dof_armature[i] + m->opt.timestep * m->dof_damping[i]) * d->qacc[i];
  phys_aba(m, d, rhs, NULL, acc);
}

// f += a world force at a world point (as a spatial force about the origin), times sign
static void add_point_force(double f[6], const double point[3], const double force[3], double sign) {
  double tq[3];
  phys_cross3(tq, point, force);
  for (int k = 0; k < 3; k++) f[k] += sign * tq[k], f[3 + k] += sign * force[k];
}

// 1 if contact c carries a force: a row of the constraint problem (lcp, cone, ccp), or every penalty contact
// (penalty forces have no rows; their impulses F dt are in lambda)
static int contact_acts(const physModel* m, const physContact* c) {
  return c->efc_adr >= 0 || m->opt.contact == PHYS_CONTACT_PENALTY;
}

// world force of contact i (normal and friction impulses / dt), acting on geom[1]'s body (minus on geom[0]'s)
static void contact_force(const physModel* m, const physContact* c, double force[3]) {
  double dt = m->opt.timestep;
  for (int k = 0; k < 3; k++)
    force[k] = (c->frame[k] * c->lambda[0] + c->frame[3 + k] * c->lambda[1] + c->frame[6 + k] * c->lambda[2]) / dt;
}

// cfrc (nbody x 6): f_b = I_b a_b + v_b x* (I_b v_b) - f_ext,b, then each subtree's sum (leaves first)
static void body_force(const physModel* m, const physData* d, const physContact* con, int ncon, const double* cacc,
                       double* cfrc) {
  memset(cfrc, 0, 6 * (size_t)m->nbody * sizeof(double));
  for (int b = 1; b < m->nbody; b++) {
    const double* x = d->xfrc_applied + 6 * b;
    add_point_force(cfrc + 6 * b, d->xipos + 3 * b, x, -1);
    for (int k = 0; k < 3; k++) cfrc[6 * b + k] -= x[3 + k];
  }
  for (int i = 0; i < ncon; i++) {
    const physContact* c = con + i;
    if (!contact_acts(m, c)) continue;
    double force[3];
    contact_force(m, c, force);
    add_point_force(cfrc + 6 * m->geom_bodyid[c->geom[1]], c->pos, force, -1);
    add_point_force(cfrc + 6 * m->geom_bodyid[c->geom[0]], c->pos, force, 1);
  }
  for (int b = 1; b < m->nbody; b++) {
    double iv[6], vxiv[6], ia[6];
    phys_inert_mul(iv, d->cinert + 10 * b, d->cvel + 6 * b);
    phys_cross_force(vxiv, d->cvel + 6 * b, iv);
    phys_inert_mul(ia, d->cinert + 10 * b, cacc + 6 * b);
    for (int k = 0; k < 6; k++) cfrc[6 * b + k] += ia[k] + vxiv[k];
  }
  for (int b = m->nbody - 1; b > 0; b--)
    for (int k = 0; k < 6; k++) cfrc[6 * m->body_parentid[b] + k] += cfrc[6 * b + k];
}

//---------------------------------------------------------------------------------------------------------
// touch: the contact's normal force when the ray from the contact point along its normal meets the site's zone

// 1 if the ray p + t u, t >= 0, meets the axis-aligned box |x_k| <= s_k (slab test)
static int ray_box(const double p[3], const double u[3], const double s[3]) {
  double t0 = 0, t1 = INFINITY;
  for (int k = 0; k < 3; k++) {
    if (fabs(u[k]) < 1e-300) {
      if (fabs(p[k]) > s[k]) return 0;
      continue;
    }
    double a = (-s[k] - p[k]) / u[k], b = (s[k] - p[k]) / u[k];
    if (a > b) { double t = a; a = b; b = t; }
    t0 = fmax(t0, a);
    t1 = fmin(t1, b);
  }
  return t0 <= t1;
}

// 1 if the ray p + t u, t >= 0, meets the ellipsoid sum (x_k / s_k)^2 <= 1 (a sphere: s all equal)
static int ray_ellipsoid(const double p[3], const double u[3], const double s[3]) {
  double a = 0, b = 0, c = -1;
  for (int k = 0; k < 3; k++) {
    double pk = p[k] / s[k], uk = u[k] / s[k];
    a += uk * uk, b += 2 * pk * uk, c += pk * pk;
  }
  if (c <= 0) return 1;                      // starts inside
  double disc = b * b - 4 * a * c;
  return disc >= 0 && b < 0 && a > 0;        // both roots positive: the ray meets it ahead
}

// 1 if the ray from world point p along world direction u meets site s's zone (MuJoCo's mju_rayGeom >= 0)
static int ray_site(const physModel* m, const physData* d, int s, const double p[3], const double u[3]) {
  double rel[3], pl[3], ul[3], size[3];
  const double* R = d->site_xmat + 9 * s;
  phys_sub3(rel, p, d->site_xpos + 3 * s);
  phys_matT_vec3(pl, R, rel);
  phys_matT_vec3(ul, R, u);
  const double* sz = m->site_size + 3 * s;
  int type = m->site_type[s];
  if (type == PHYS_SITE_BOX) return ray_box(pl, ul, sz);
  for (int k = 0; k < 3; k++) size[k] = type == PHYS_SITE_SPHERE ? sz[0] : sz[k];
  return ray_ellipsoid(pl, ul, size);
}

// sum of the positive normal forces of the contacts on site s's body whose ray meets the zone
static double touch(const physModel* m, const physData* d, const physContact* con, int ncon, int s) {
  int body = m->site_bodyid[s];
  double sum = 0;
  for (int i = 0; i < ncon; i++) {
    const physContact* c = con + i;
    int b0 = m->geom_bodyid[c->geom[0]], b1 = m->geom_bodyid[c->geom[1]];
    double fn = c->lambda[0] / m->opt.timestep, ray[3];
    if (!contact_acts(m, c) || (body != b0 && body != b1) || !(fn > 0)) continue;
    for (int k = 0; k < 3; k++) ray[k] = body == b1 ? -c->frame[k] : c->frame[k];
    if (ray_site(m, d, s, c->pos, ray)) sum += fn;
  }
  return sum;
}

//---------------------------------------------------------------------------------------------------------
// the sensors

// velocity (or acceleration, v = the body's motion vector) of a frame object in world coordinates at its point:
// (angular, linear at pos)
static void motion_at(double res[6], const double* v, const double pos[3]) {
  double wxp[3];
  phys_cross3(wxp, v, pos);
  for (int k = 0; k < 3; k++) res[k] = v[k], res[3 + k] = v[3 + k] + wxp[k];
}

// one sensor's values into out (dim of its type); cacc, cfrc as above (NULL before the acceleration stage)
static void sensor_value(const physModel* m, const physData* d, const physContact* con, int ncon, int i,
                         const double* cacc, const double* cfrc, double* out) {
  int id = m->sensor_objid[i], objtype = m->sensor_objtype[i], body = 0;
  const double *pos = d->xpos, *R = d->xmat;
  double v[6], a[6], w[3];
  if (objtype != PHYS_OBJ_JOINT && objtype != PHYS_OBJ_ACTUATOR) phys_object_frame(m, d, objtype, id, &pos, &R, &body);
  switch (m->sensor_type[i]) {
    case PHYS_SENS_JOINTPOS: out[0] = d->qpos[m->jnt_qposadr[id]]; break;
    case PHYS_SENS_JOINTVEL: out[0] = d->qvel[m->jnt_dofadr[id]]; break;
    case PHYS_SENS_ACTUATORFRC:
      out[0] = (m->opt.disableflags & PHYS_DSBL_ACTUATION) ? 0 : phys_actuator_force(m, d, id, NULL);
      break;
    case PHYS_SENS_FRAMEPOS: phys_copy3(out, pos); break;
    case PHYS_SENS_FRAMEQUAT: phys_object_quat(m, d, objtype, id, out); break;
    case PHYS_SENS_SUBTREECOM: subtree_com(m, d, id, out); break;
    case PHYS_SENS_FRAMELINVEL:
    case PHYS_SENS_FRAMEANGVEL:
      motion_at(v, d->cvel + 6 * body, pos);
      phys_copy3(out, v + (m->sensor_type[i] == PHYS_SENS_FRAMEANGVEL ? 0 : 3));
      break;
    case PHYS_SENS_GYRO:
    case PHYS_SENS_VELOCIMETER:
      motion_at(v, d->cvel + 6 * body, pos);
      phys_matT_vec3(out, R, v + (m->sensor_type[i] == PHYS_SENS_GYRO ? 0 : 3));
      break;
    case PHYS_SENS_ACCELEROMETER:
      // a_p + w x v_p: the classical acceleration of the site's point, minus gravity, in the site frame
      motion_at(v, d->cvel + 6 * body, pos);
      motion_at(a, cacc + 6 * body, pos);
      phys_cross3(w, v, v + 3);
      for (int k = 0; k < 3; k++) w[k] += a[3 + k];
      phys_matT_vec3(out, R, w);
      break;
    case PHYS_SENS_FORCE:
    case PHYS_SENS_TORQUE:
      phys_force_to_local(a, R, pos, cfrc + 6 * body);
      phys_copy3(out, a + (m->sensor_type[i] == PHYS_SENS_FORCE ? 3 : 0));
      break;
    case PHYS_SENS_TOUCH: out[0] = touch(m, d, con, ncon, id); break;
    default: break;
  }
}

// MuJoCo's cutoff: real values clamped to [-cutoff, cutoff], touch (positive) to cutoff above, quaternions not
static void apply_cutoff(const physModel* m, int i, double* out) {
  double c = m->sensor_cutoff[i];
  if (!(c > 0) || m->sensor_type[i] == PHYS_SENS_FRAMEQUAT) return;
  for (int k = 0; k < m->sensor_dim[i]; k++) {
    if (out[k] > c) out[k] = c;
    if (out[k] < -c && m->sensor_type[i] != PHYS_SENS_TOUCH) out[k] = -c;
  }
}

// 1 if sensor type t needs the acceleration stage
static int acc_stage(int t) {
  return t == PHYS_SENS_ACCELEROMETER || t == PHYS_SENS_FORCE || t == PHYS_SENS_TORQUE;
}

void phys_sensor_list(const physModel* m, physData* d, const physContact* con, int ncon) {
  if (m->nsensor == 0) return;
  size_t mark = phys_stack_mark(d);
  double *cacc = NULL, *cfrc = NULL;
  for (int i = 0; i < m->nsensor && !cacc; i++) {
    if (!acc_stage(m->sensor_type[i])) continue;
    cacc = phys_stack_alloc(d, 6 * (size_t)m->nbody);
    cfrc = phys_stack_alloc(d, 6 * (size_t)m->nbody);
    double* acc = phys_stack_alloc(d, (size_t)m->nv);
    explicit_acc(m, d, acc);
    body_acc(m, d, acc, cacc);
    body_force(m, d, con, ncon, cacc, cfrc);
  }
  for (int i = 0; i < m->nsensor; i++) {
    double* out = d->sensordata + m->sensor_adr[i];
    sensor_value(m, d, con, ncon, i, cacc, cfrc, out);
    apply_cutoff(m, i, out);
  }
  phys_stack_free(d, mark);
}

void phys_sensor(const physModel* m, physData* d) { phys_sensor_list(m, d, d->contact, d->ncon); }

//---------------------------------------------------------------------------------------------------------
// noise

// a standard normal deviate from the splitmix64 stream *state (Box-Muller on two uniforms in (0, 1])
static double normal_deviate(uint64_t* state) {
  double u1 = 1 - (double)(phys_splitmix64(state) >> 11) * 0x1p-53;
  double u2 = (double)(phys_splitmix64(state) >> 11) * 0x1p-53;
  return sqrt(-2 * log(u1)) * cos(2 * 3.14159265358979323846 * u2);
}

void phys_sensor_noise(const physModel* m, const double* clean, double* noisy, uint64_t* state) {
  for (int i = 0; i < m->nsensor; i++) {
    int adr = m->sensor_adr[i], dim = m->sensor_dim[i], type = m->sensor_type[i];
    double sd = m->sensor_noise[i];
    if (noisy != clean) memcpy(noisy + adr, clean + adr, (size_t)dim * sizeof(double));
    if (!(sd > 0)) continue;
    if (type == PHYS_SENS_FRAMEQUAT) {
      double rv[3], dq[4];
      for (int k = 0; k < 3; k++) rv[k] = sd * normal_deviate(state);
      phys_quat_exp(dq, rv);
      phys_quat_mul(noisy + adr, noisy + adr, dq);
      phys_quat_normalize(noisy + adr);
      continue;
    }
    for (int k = 0; k < dim; k++) noisy[adr + k] += sd * normal_deviate(state);
    if (type == PHYS_SENS_TOUCH && noisy[adr] < 0) noisy[adr] = 0;
  }
}
