// compile_equality.c - phys_compile's part for <equality> (issue 15 item 1): names resolved to body and joint
// ids, and the data MuJoCo 2.2.2's mj_setConst derives at qpos0 (connect's anchor in body2's frame, weld's
// relative pose when relpose's quaternion is 0), so eq_data holds MuJoCo's values (physEqType, physid.h).
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "rot.h"
#include "spec.h"

// index of the spec body or joint named name (-1: none); the world is body 0
static int find_body(const physSpec* s, const char* name) {
  for (int b = 0; b < s->nbody; b++)
    if (!strcmp(s->body[b].name, name)) return b;
  return -1;
}

static int find_joint(const physSpec* s, const char* name) {
  for (int j = 0; j < s->njoint; j++)
    if (!strcmp(s->joint[j].name, name)) return j;
  return -1;
}

// tendon equality (issue 15 item 2): the spring ids of tendon1 and tendon2 ("" : -1) into o[0], o[1]; both must
// be fixed tendons (a spatial tendon's length at qpos0, MuJoCo's tendon_length0, is not kept)
static physStatus tendon_objects(const physSpec* s, const physSpecEquality* e, const char* at, int o[2],
                                 physLog* log) {
  for (int k = 0; k < 2; k++) {
    const char* name = k ? e->obj2 : e->obj1;
    o[k] = -1;
    if (k && !name[0]) break;
    for (int i = 0; i < s->nspring && o[k] < 0; i++)
      if (!strcmp(s->spring[i].name, name)) o[k] = i;
    if (o[k] < 0) return phys_error(log, PHYS_ERR_MODEL, "%s<tendon>: tendon '%s' not found", at, name);
    if (s->spring[o[k]].type != PHYS_SPRING_FIXED)
      return phys_error(log, PHYS_ERR_MODEL, "%s<tendon>: tendon '%s' is spatial: tendon equalities are supported "
                        "between fixed tendons only", at, name);
  }
  return PHYS_OK;
}

// world position and orientation of body b at qpos0: its body_pos/body_quat composed along the tree (every
// joint is at its reference there: free and ball joints' qpos0 are the body's own pose)
static void body_frame0(const physModel* m, int b, double pos[3], double quat[4]) {
  phys_quat_identity(quat);
  pos[0] = pos[1] = pos[2] = 0;
  int chain[256], n = 0;
  for (int k = b; k > 0 && n < 256; k = m->body_parentid[k]) chain[n++] = k;
  while (n-- > 0) {
    int k = chain[n];
    double p[3];
    phys_quat_rotate(p, quat, m->body_pos + 3 * k);
    for (int i = 0; i < 3; i++) pos[i] += p[i];
    phys_quat_mul(quat, quat, m->body_quat + 4 * k);
  }
}

// res = the world point x expressed in the frame (pos, quat)
static void to_frame(double res[3], const double pos[3], const double quat[4], const double x[3]) {
  double qc[4], d[3] = {x[0] - pos[0], x[1] - pos[1], x[2] - pos[2]};
  phys_quat_conj(qc, quat);
  phys_quat_rotate(res, qc, d);
}

// connect: data[3..5] = the anchor (body1's frame) in body2's frame at qpos0
static void connect_data(const physModel* m, int b1, int b2, double* data) {
  double p1[3], q1[4], p2[3], q2[4], a[3];
  body_frame0(m, b1, p1, q1);
  body_frame0(m, b2, p2, q2);
  phys_quat_rotate(a, q1, data);
  for (int i = 0; i < 3; i++) a[i] += p1[i];
  to_frame(data + 3, p2, q2, a);
}

// weld: relpose from qpos0 when its quaternion is 0 (data[3..5] body2's anchor in body1's frame, data[6..9]
// conj(q1) q2), else its quaternion normalized
static void weld_data(const physModel* m, int b1, int b2, double* data) {
  double* rq = data + 6;
  double nq = sqrt(rq[0] * rq[0] + rq[1] * rq[1] + rq[2] * rq[2] + rq[3] * rq[3]);
  if (nq > 0) {
    for (int i = 0; i < 4; i++) rq[i] /= nq;
    return;
  }
  double p1[3], q1[4], p2[3], q2[4], a[3], qc[4];
  body_frame0(m, b1, p1, q1);
  body_frame0(m, b2, p2, q2);
  phys_quat_rotate(a, q2, data);
  for (int i = 0; i < 3; i++) a[i] += p2[i];
  to_frame(data + 3, p1, q1, a);
  phys_quat_conj(qc, q1);
  phys_quat_mul(rq, qc, q2);
}

// the equality constraints of s into m (m's bodies and joints compiled)
physStatus phys_compile_equality(const physSpec* s, physModel* m, physLog* log) {
  char buf[600];
  for (int i = 0; i < s->nequality; i++) {
    const physSpecEquality* e = s->equality + i;
    const char* at = phys_spec_where(s, e->fileid, e->line, buf, sizeof(buf));
    static const char* const TAG[] = {"connect", "weld", "joint", "tendon"};
    if (e->type < PHYS_EQ_CONNECT || e->type > PHYS_EQ_TENDON)
      return phys_error(log, PHYS_ERR_MODEL, "%sequality %d: unsupported type", at, i);
    int o1, o2;
    if (e->type == PHYS_EQ_TENDON) {
      int o[2];
      physStatus st = tendon_objects(s, e, at, o, log);
      if (st) return st;
      o1 = o[0];
      o2 = o[1];
    } else if (e->type == PHYS_EQ_JOINT) {
      o1 = find_joint(s, e->obj1);
      o2 = e->obj2[0] ? find_joint(s, e->obj2) : -1;
      if (o1 < 0 || (e->obj2[0] && o2 < 0))
        return phys_error(log, PHYS_ERR_MODEL, "%s<joint>: joint '%s' not found", at, o1 < 0 ? e->obj1 : e->obj2);
      for (int k = 0; k < 2; k++) {
        int j = k ? o2 : o1;
        if (j >= 0 && m->jnt_type[j] != PHYS_JNT_HINGE && m->jnt_type[j] != PHYS_JNT_SLIDE)
          return phys_error(log, PHYS_ERR_MODEL, "%s<joint>: joint '%s' must be a hinge or a slide", at,
                            k ? e->obj2 : e->obj1);
      }
    } else {
      o1 = find_body(s, e->obj1);
      o2 = find_body(s, e->obj2);
      if (o1 < 0 || o2 < 0)
        return phys_error(log, PHYS_ERR_MODEL, "%s<%s>: body '%s' not found", at, TAG[e->type],
                          o1 < 0 ? e->obj1 : e->obj2);
      if (o1 == o2)
        return phys_error(log, PHYS_ERR_MODEL, "%s<%s>: body1 and body2 are the same body '%s'", at, TAG[e->type],
                          e->obj1);
    }
    if (!(e->solref[0] != 0))
      return phys_error(log, PHYS_ERR_VALUE, "%s<%s>: solref[0] must be nonzero", at, TAG[e->type]);
    m->eq_type[i] = e->type;
    m->eq_obj1id[i] = o1;
    m->eq_obj2id[i] = o2;
    m->eq_active[i] = e->active;
    memcpy(m->eq_solref + 2 * i, e->solref, sizeof e->solref);
    memcpy(m->eq_solimp + 5 * i, e->solimp, sizeof e->solimp);
    double* data = m->eq_data + PHYS_EQ_NDATA * i;
    memcpy(data, e->data, sizeof e->data);
    if (e->type == PHYS_EQ_CONNECT) connect_data(m, o1, o2, data);
    if (e->type == PHYS_EQ_WELD) weld_data(m, o1, o2, data);
  }
  return PHYS_OK;
}
