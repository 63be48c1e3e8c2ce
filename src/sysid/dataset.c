// dataset.c - recorded trajectories for identification (sysid.h): CSV as `physid simulate` writes it
// (t,q0..,v0.., read by trajio.c), CSV with named columns, NumPy .npy arrays, many files or folders.
//
// Column names of a named CSV (the first rule that matches wins):
//   1. an explicit mapping "COLUMN=q:JOINT[:i]" / "COLUMN=v:JOINT[:i]" (i: index within the joint's
//      positions or velocities, default 0);
//   2. "t" (or "time"): the time of the sample;
//   3. if the model's first joint is free, MuJoCo's free-joint layout without a prefix: px,py,pz (world
//      position), qw,qx,qy,qz (orientation, w first), vx,vy,vz (world linear velocity), wx_body,wy_body,
//      wz_body (body angular velocity): the ContactNets toss files;
//   4. "q<i>" / "v<i>": qpos[i] / qvel[i] of the model;
//   5. a joint's name: "JOINT" / "JOINT_dot" for hinges and slides; "JOINT_<suffix>" with the suffixes of
//      rule 3 for free joints (px..wz_body) and ball joints (qw..qz, wx_body..wz_body);
//   6. "theta" / "theta_dot": the model's only hinge or slide joint, if it has exactly one (elbow tosses);
//   7. "sensor:NAME" / "sensor:NAME:k": value k of the sensor NAME (its index when unnamed), as `physid simulate
//      --sensors` writes them (phys_sensor_column): a sensor's value at the sample's state;
//   8. "act<i>" / "act:ACTUATOR": the activation act[i] (the actuator's, which must have dynamics): the state's
//      act part (issue 15), all na of them or none; identify and evaluate start each segment at it (none: 0).
// Any other column is an error listing what was expected. A file may hold a subset of the coordinates;
// a quaternion is all four components or none. Missing positions are qpos0 (and not observed), missing
// velocities are backward differences of the positions ((q_k (-) q_{k-1}) / (t_k - t_{k-1}), exactly the
// semi-implicit Euler step's velocity; at k = 0 the linear extrapolation 2 v_1 - v_2) and not observed. All files of a set
// must observe the same coordinates. opt->observe ("q", "v", "q:JOINT", "v:JOINT", "q:JOINT:i", comma
// separated) keeps only the listed columns; the others are treated as absent. With "sensor:NAME" items
// (a sensor's values; "sensor" all of them) the residuals go on the listed sensors: the state columns are then
// read as the values the loss starts from (a rollout's first sample, a segment's start) but observed only when
// listed too.
//
// .npy: version 1-3, dtype '<f8', C order, shape (T, 1 + nq + nv) with columns t, qpos, qvel (then the inputs and
// activations, npy_plain_layout), or structured with named fields; others are refused with the reason. Errors name file:line:column (CSV) or file: row, column (.npy).
#include <dirent.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "rot.h"
#include "sysid.h"
#include "trajio.h"

#define DS_MAXFILES 1000000       // files in one data set
#define DS_MAXCOLS 100000         // columns in one file

enum { COL_TIME = 0, COL_Q, COL_V, COL_U, COL_TAU, COL_SENS, COL_ACT };

// what one column of a file holds: the time, qpos[index], qvel[index], ctrl[index] or qfrc_applied[index]
typedef struct dsColumn_ {
  int kind;
  int index;
} dsColumn;

// one file read into full-state rows, with the coordinates it gave
typedef struct dsFile_ {
  int T;
  int* line;                // source line (CSV) or row (npy, 1-based) of each sample     (T x 1)
  double* time;             //                                                            (T x 1)
  double* qpos;             // qpos0 where a coordinate was absent                        (T x nq)
  double* qvel;             // 0 where absent (differenced later)                         (T x nv)
  unsigned char* has_q;     // qpos coordinate given                                      (nq x 1)
  unsigned char* has_v;     // qvel coordinate given                                      (nv x 1)
  int nu, ntau;             // input columns given: the model's nu controls, nv joint forces (else 0)
  double* ctrl;             // recorded controls (NULL when nu = 0)                       (T x nu)
  double* qfrc;             // recorded applied joint forces (NULL when ntau = 0)         (T x nv)
  int nsens;                // sensor values of the model when the file has sensor columns (else 0)
  double* sens;             // recorded sensor values, 0 where absent (NULL when nsens = 0) (T x nsens)
  unsigned char* has_s;     // sensor value given (the model's nsensordata flags; caller's)
  double* act;              // recorded activations act0.. (NULL without)                   (T x na)
  int nact;                 // named columns: m->na when the file has activation columns (else 0)
} dsFile;

static const char* const free_q[7] = {"px", "py", "pz", "qw", "qx", "qy", "qz"};
static const char* const free_v[6] = {"vx", "vy", "vz", "wx_body", "wy_body", "wz_body"};

//---------------------------------------------------------------------------------------------------------
// small helpers

// number of qpos coordinates of a joint type: free 7, ball 4, hinge/slide 1
static int jnt_nq(int type) {
  return type == PHYS_JNT_FREE ? 7 : type == PHYS_JNT_BALL ? 4 : 1;
}

// number of dofs of a joint type: free 6, ball 3, hinge/slide 1
static int jnt_nv(int type) {
  return type == PHYS_JNT_FREE ? 6 : type == PHYS_JNT_BALL ? 3 : 1;
}

// suffix k of a joint's position (q) or velocity (v) names: free px..qz / vx..wz_body, ball qw..qz / wx..
static const char* jnt_suffix(int type, int v, int k) {
  if (type == PHYS_JNT_FREE) return v ? free_v[k] : free_q[k];
  return v ? free_v[3 + k] : free_q[3 + k];
}

// 1 if s ends with suffix
static int ends_with(const char* s, const char* suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  return n >= k && strcmp(s + n - k, suffix) == 0;
}

// parse a non-negative decimal integer filling all of s; -1 if s is not one
static int parse_index(const char* s) {
  if (!*s || strlen(s) > 9) return -1;
  for (const char* c = s; *c; c++)
    if (*c < '0' || *c > '9') return -1;
  return atoi(s);
}

// the only hinge or slide joint of m, -1 if there are none or several
static int single_scalar_joint(const physModel* m) {
  int found = -1;
  for (int j = 0; j < m->njnt; j++) {
    if (m->jnt_type[j] != PHYS_JNT_HINGE && m->jnt_type[j] != PHYS_JNT_SLIDE) continue;
    if (found >= 0) return -1;
    found = j;
  }
  return found;
}

// column name for messages: "q3", "v2", "u1", "tau0" or "t"
static void target_name(char out[32], const dsColumn* c) {
  static const char* const prefix[7] = {"t", "q", "v", "u", "tau", "sensordata", "act"};
  if (c->kind == COL_TIME) snprintf(out, 32, "t");
  else snprintf(out, 32, "%s%d", prefix[c->kind], c->index);
}

// append text to buf (size n), truncating with "..." when full
static void append(char* buf, size_t n, const char* text) {
  size_t len = strlen(buf);
  if (len + strlen(text) + 4 < n) memcpy(buf + len, text, strlen(text) + 1);
  else if (len + 4 < n) memcpy(buf + len, "...", 4);
}

// what the columns of a named CSV may be, for messages
static void describe_expected(char* buf, size_t n, const physModel* m) {
  char tmp[320];
  buf[0] = 0;
  append(buf, n, "t");
  if (m->njnt && m->jnt_type[0] == PHYS_JNT_FREE) {
    snprintf(tmp, sizeof tmp, ", px,py,pz,qw,qx,qy,qz,vx,vy,vz,wx_body,wy_body,wz_body (free joint '%.80s')",
             phys_id2name(m, "joint", 0));
    append(buf, n, tmp);
  }
  snprintf(tmp, sizeof tmp, ", q0..q%d, v0..v%d", m->nq - 1, m->nv - 1);
  append(buf, n, tmp);
  for (int j = 0; j < m->njnt; j++) {
    const char* name = phys_id2name(m, "joint", j);
    int type = m->jnt_type[j];
    if (!*name) continue;
    if (type == PHYS_JNT_HINGE || type == PHYS_JNT_SLIDE) snprintf(tmp, sizeof tmp, ", %.80s, %.80s_dot", name, name);
    else snprintf(tmp, sizeof tmp, ", %.80s_%s..%.80s_%s", name, jnt_suffix(type, 0, 0), name,
                  jnt_suffix(type, 1, jnt_nv(type) - 1));
    append(buf, n, tmp);
  }
  if (single_scalar_joint(m) >= 0) append(buf, n, ", theta, theta_dot");
  if (m->nu > 0) {
    snprintf(tmp, sizeof tmp, "; recorded inputs: controls u0..u%d or ctrl:ACTUATOR (all %d or none)", m->nu - 1,
             m->nu);
    append(buf, n, tmp);
  }
  snprintf(tmp, sizeof tmp, "; joint forces tau0..tau%d or qfrc:JOINT[:i] (all %d or none)", m->nv - 1, m->nv);
  append(buf, n, tmp);
  if (m->na > 0) {
    snprintf(tmp, sizeof tmp, "; activations act0..act%d or act:ACTUATOR (all %d or none)", m->na - 1, m->na);
    append(buf, n, tmp);
  }
  append(buf, n, "; or --map COLUMN=q:JOINT[:i]");
}

//---------------------------------------------------------------------------------------------------------
// column mappings and the observe filter

// parse "q:JOINT[:i]" / "v:JOINT[:i]" (i < 0: every coordinate) into kind, joint, i; 0 if malformed
static int parse_target(int* kind, int* joint, int* i, const physModel* m, const char* text, int default_i) {
  char buf[256];
  if (strlen(text) >= sizeof buf || (text[0] != 'q' && text[0] != 'v') || text[1] != ':') return 0;
  *kind = text[0] == 'q' ? COL_Q : COL_V;
  snprintf(buf, sizeof buf, "%s", text + 2);
  char* colon = strrchr(buf, ':');
  *i = default_i;
  if (colon && parse_index(colon + 1) >= 0) {
    *i = parse_index(colon + 1);
    *colon = 0;
  }
  *joint = phys_name2id(m, "joint", buf);
  return *joint >= 0;
}

// list the joint names of m into buf for messages
static void list_joints(char* buf, size_t n, const physModel* m) {
  buf[0] = 0;
  for (int j = 0; j < m->njnt; j++) {
    if (j) append(buf, n, ", ");
    append(buf, n, *phys_id2name(m, "joint", j) ? phys_id2name(m, "joint", j) : "(unnamed)");
  }
}

// one mapping "COLUMN=q:JOINT[:i]" -> column name (into col) and target; PHYS_ERR_ARG if malformed
static physStatus parse_map(char col[256], dsColumn* target, const physModel* m, const char* map, physLog* log) {
  const char* eq = strchr(map, '=');
  int kind, joint, i;
  if (!eq || eq == map || (size_t)(eq - map) >= 256 || !parse_target(&kind, &joint, &i, m, eq + 1, 0)) {
    char joints[400];
    list_joints(joints, sizeof joints, m);
    return phys_error(log, PHYS_ERR_ARG, "--map '%s': expected COLUMN=q:JOINT[:i] or COLUMN=v:JOINT[:i] "
                      "with JOINT one of: %s", map, joints);
  }
  int type = m->jnt_type[joint];
  int n = kind == COL_Q ? jnt_nq(type) : jnt_nv(type);
  if (i >= n) {
    return phys_error(log, PHYS_ERR_ARG, "--map '%s': joint '%s' has %d %s coordinate%s (index 0..%d)", map,
                      phys_id2name(m, "joint", joint), n, kind == COL_Q ? "position" : "velocity",
                      n > 1 ? "s" : "", n - 1);
  }
  memcpy(col, map, (size_t)(eq - map));
  col[eq - map] = 0;
  target->kind = kind;
  target->index = (kind == COL_Q ? m->jnt_qposadr[joint] : m->jnt_dofadr[joint]) + i;
  return PHYS_OK;
}

// mark the sensor values an observe item "sensor" (all) or "sensor:NAME" (one sensor's) selects
static physStatus observe_sensor(unsigned char* keep_s, const physModel* m, const char* item, physLog* log) {
  int i = item[6] ? phys_name2id(m, "sensor", item + 7) : -1;
  if (!item[6]) {
    memset(keep_s, 1, (size_t)m->nsensordata);
    return m->nsensor ? PHYS_OK : phys_error(log, PHYS_ERR_ARG, "--observe item 'sensor': model '%s' has no "
                                             "sensors", m->modelname);
  }
  if (i < 0) {
    char names[400] = "";
    for (int k = 0; k < m->nsensor; k++) {
      const char* n = phys_id2name(m, "sensor", k);
      if (*n) append(names, sizeof names, k ? " " : ""), append(names, sizeof names, n);
    }
    return phys_error(log, PHYS_ERR_ARG, "--observe item '%s': no sensor of that name; the model's named sensors: %s",
                      item, names[0] ? names : "(none)");
  }
  memset(keep_s + m->sensor_adr[i], 1, (size_t)m->sensor_dim[i]);
  return PHYS_OK;
}

// mark the coordinates an observe item selects ("q", "v", "q:JOINT", "v:JOINT:i", "sensor[:NAME]")
static physStatus observe_item(unsigned char* keep_q, unsigned char* keep_v, unsigned char* keep_s,
                               const physModel* m, const char* item, physLog* log) {
  if (strncmp(item, "sensor", 6) == 0 && (item[6] == 0 || item[6] == ':')) return observe_sensor(keep_s, m, item, log);
  if (strcmp(item, "q") == 0 || strcmp(item, "v") == 0) {
    memset(item[0] == 'q' ? keep_q : keep_v, 1, (size_t)(item[0] == 'q' ? m->nq : m->nv));
    return PHYS_OK;
  }
  int kind, joint, i;
  if (!parse_target(&kind, &joint, &i, m, item, -1)) {
    char joints[400];
    list_joints(joints, sizeof joints, m);
    return phys_error(log, PHYS_ERR_ARG, "--observe item '%s': expected q, v, q:JOINT[:i], v:JOINT[:i] or "
                      "sensor[:NAME] with JOINT one of: %s", item, joints);
  }
  int type = m->jnt_type[joint];
  int n = kind == COL_Q ? jnt_nq(type) : jnt_nv(type);
  int adr = kind == COL_Q ? m->jnt_qposadr[joint] : m->jnt_dofadr[joint];
  if (i >= n) {
    return phys_error(log, PHYS_ERR_ARG, "--observe item '%s': joint '%s' has only %d coordinates", item,
                      phys_id2name(m, "joint", joint), n);
  }
  unsigned char* keep = kind == COL_Q ? keep_q : keep_v;
  // a quaternion is observed whole: selecting one of its components selects all four
  int whole = kind == COL_Q && i >= 0 && ((type == PHYS_JNT_FREE && i >= 3) || type == PHYS_JNT_BALL);
  if (i < 0 || (whole && type == PHYS_JNT_BALL)) memset(keep + adr, 1, (size_t)n);
  else if (whole) memset(keep + adr + 3, 1, 4);
  else keep[adr + i] = 1;
  return PHYS_OK;
}

// the observe filter: keep_q (nq), keep_v (nv), keep_s (nsensordata) from a comma list; every state coordinate
// and no sensor when observe is NULL. 1: kept and observed; with sensor items, 2 for the state coordinates not listed: kept as start values,
// not observed
static physStatus parse_observe(unsigned char* keep_q, unsigned char* keep_v, unsigned char* keep_s,
                                const physModel* m, const char* observe, physLog* log) {
  memset(keep_q, observe ? 0 : 1, (size_t)m->nq);
  memset(keep_v, observe ? 0 : 1, (size_t)m->nv);
  memset(keep_s, 0, (size_t)m->nsensordata);   // sensors are observed only when listed
  if (!observe) return PHYS_OK;
  char buf[4096];
  if (strlen(observe) >= sizeof buf) return phys_error(log, PHYS_ERR_ARG, "--observe: list too long");
  snprintf(buf, sizeof buf, "%s", observe);
  int nitem = 0;
  for (char *save = NULL, *item = strtok_r(buf, ", ", &save); item; item = strtok_r(NULL, ", ", &save)) {
    physStatus s = observe_item(keep_q, keep_v, keep_s, m, item, log);
    if (s != PHYS_OK) return s;
    nitem++;
  }
  if (!nitem) return phys_error(log, PHYS_ERR_ARG, "--observe '%s': no items", observe);
  int sensors = 0;
  for (int i = 0; i < m->nsensordata; i++) sensors |= keep_s[i];
  for (int i = 0; sensors && i < m->nq; i++) keep_q[i] = keep_q[i] ? 1 : 2;
  for (int i = 0; sensors && i < m->nv; i++) keep_v[i] = keep_v[i] ? 1 : 2;
  return PHYS_OK;
}

// rule 5: "JOINT", "JOINT_dot", "JOINT_<suffix>"; 1 and the target if name is one of them
static int match_joint_column(dsColumn* c, const physModel* m, const char* name) {
  for (int j = 0; j < m->njnt; j++) {
    const char* jn = phys_id2name(m, "joint", j);
    size_t len = strlen(jn);
    int type = m->jnt_type[j];
    if (!len || strncmp(name, jn, len) != 0) continue;
    const char* rest = name + len;
    if (type == PHYS_JNT_HINGE || type == PHYS_JNT_SLIDE) {
      if (!*rest || strcmp(rest, "_dot") == 0) {
        *c = (dsColumn){*rest ? COL_V : COL_Q, *rest ? m->jnt_dofadr[j] : m->jnt_qposadr[j]};
        return 1;
      }
      continue;
    }
    if (rest[0] != '_') continue;
    for (int v = 0; v < 2; v++) {
      for (int k = 0; k < (v ? jnt_nv(type) : jnt_nq(type)); k++) {
        if (strcmp(rest + 1, jnt_suffix(type, v, k)) != 0) continue;
        *c = (dsColumn){v ? COL_V : COL_Q, (v ? m->jnt_dofadr[j] : m->jnt_qposadr[j]) + k};
        return 1;
      }
    }
  }
  return 0;
}

// recorded inputs: "u<i>" / "ctrl:ACTUATOR" (control i), "tau<i>" / "qfrc:JOINT[:i]" (applied force on dof i)
static int match_input_column(dsColumn* c, const physModel* m, const char* name) {
  int i = name[0] == 'u' ? parse_index(name + 1) : -1;
  if (i >= 0 && i < m->nu) {
    *c = (dsColumn){COL_U, i};
    return 1;
  }
  i = strncmp(name, "tau", 3) == 0 ? parse_index(name + 3) : -1;
  if (i >= 0 && i < m->nv) {
    *c = (dsColumn){COL_TAU, i};
    return 1;
  }
  if (strncmp(name, "ctrl:", 5) == 0 && (i = phys_name2id(m, "actuator", name + 5)) >= 0) {
    *c = (dsColumn){COL_U, i};
    return 1;
  }
  char buf[256];
  if (strncmp(name, "qfrc:", 5) != 0 || strlen(name + 5) >= sizeof buf) return 0;
  snprintf(buf, sizeof buf, "%s", name + 5);
  char* colon = strrchr(buf, ':');
  int k = 0;
  if (colon && parse_index(colon + 1) >= 0) k = parse_index(colon + 1), *colon = 0;
  int j = phys_name2id(m, "joint", buf);
  if (j < 0 || k >= jnt_nv(m->jnt_type[j])) return 0;
  *c = (dsColumn){COL_TAU, m->jnt_dofadr[j] + k};
  return 1;
}

// rule 7: "sensor:NAME[:k]" as phys_sensor_column names the values; 1 and the target if name is one of them
static int match_sensor_column(dsColumn* c, const physModel* m, const char* name) {
  if (strncmp(name, "sensor:", 7) != 0) return 0;
  for (int i = 0; i < m->nsensor; i++)
    for (int k = 0; k < m->sensor_dim[i]; k++) {
      char col[192];
      if (strcmp(phys_sensor_column(m, i, k, col, sizeof col), name) != 0) continue;
      *c = (dsColumn){COL_SENS, m->sensor_adr[i] + k};
      return 1;
    }
  return 0;
}

// rule 8: "act<i>" (i < na) or "act:ACTUATOR" (an actuator with dynamics); 1 and the target if name is one
static int match_act_column(dsColumn* c, const physModel* m, const char* name) {
  int i = strncmp(name, "act", 3) == 0 ? parse_index(name + 3) : -1, a;
  if (i >= 0 && i < m->na) {
    *c = (dsColumn){COL_ACT, i};
    return 1;
  }
  if (strncmp(name, "act:", 4) != 0 || (a = phys_name2id(m, "actuator", name + 4)) < 0 || m->actuator_actadr[a] < 0)
    return 0;
  *c = (dsColumn){COL_ACT, m->actuator_actadr[a]};
  return 1;
}

// the target of a column name by rules 2-8 (rule 1, --map, is checked by the caller); 0 if none
static int match_column(dsColumn* c, const physModel* m, const char* name) {
  if (match_sensor_column(c, m, name) || match_act_column(c, m, name)) return 1;
  if (strcmp(name, "t") == 0 || strcmp(name, "time") == 0) {
    *c = (dsColumn){COL_TIME, 0};
    return 1;
  }
  if (m->njnt && m->jnt_type[0] == PHYS_JNT_FREE) {
    for (int v = 0; v < 2; v++) {
      for (int k = 0; k < (v ? 6 : 7); k++) {
        if (strcmp(name, v ? free_v[k] : free_q[k]) != 0) continue;
        *c = (dsColumn){v ? COL_V : COL_Q, (v ? m->jnt_dofadr[0] : m->jnt_qposadr[0]) + k};
        return 1;
      }
    }
  }
  if (match_input_column(c, m, name)) return 1;
  int i = (name[0] == 'q' || name[0] == 'v') ? parse_index(name + 1) : -1;
  if (i >= 0 && i < (name[0] == 'q' ? m->nq : m->nv)) {
    *c = (dsColumn){name[0] == 'q' ? COL_Q : COL_V, i};
    return 1;
  }
  if (match_joint_column(c, m, name)) return 1;
  int j = single_scalar_joint(m);
  if (j >= 0 && (strcmp(name, "theta") == 0 || strcmp(name, "theta_dot") == 0)) {
    *c = (dsColumn){name[5] ? COL_V : COL_Q, name[5] ? m->jnt_dofadr[j] : m->jnt_qposadr[j]};
    return 1;
  }
  return 0;
}

//---------------------------------------------------------------------------------------------------------
// file records

// grow a file record to hold at least n rows (capacity doubling); 0 on failure
static int file_grow(dsFile* f, int* cap, const physModel* m, int n) {
  if (n <= *cap) return 1;
  size_t c = *cap ? 2 * (size_t)*cap : 64;
  void* p;
  if ((p = realloc(f->line, c * sizeof(int)))) f->line = p;
  if (p && (p = realloc(f->time, c * sizeof(double)))) f->time = p;
  if (p && (p = realloc(f->qpos, c * sizeof(double) * (size_t)(m->nq ? m->nq : 1)))) f->qpos = p;
  if (p && (p = realloc(f->qvel, c * sizeof(double) * (size_t)(m->nv ? m->nv : 1)))) f->qvel = p;
  if (p && f->nu && (p = realloc(f->ctrl, c * sizeof(double) * (size_t)f->nu))) f->ctrl = p;
  if (p && f->ntau && (p = realloc(f->qfrc, c * sizeof(double) * (size_t)f->ntau))) f->qfrc = p;
  if (p && f->nsens && (p = realloc(f->sens, c * sizeof(double) * (size_t)f->nsens))) f->sens = p;
  if (p && f->nact && (p = realloc(f->act, c * sizeof(double) * (size_t)f->nact))) f->act = p;
  if (p) *cap = (int)c;
  return p != NULL;
}

// free a file record's arrays (the flags are the caller's)
static void file_free(dsFile* f) {
  free(f->line);
  free(f->time);
  free(f->qpos);
  free(f->qvel);
  free(f->ctrl);
  free(f->qfrc);
  free(f->sens);
  free(f->act);
  f->line = NULL;
  f->time = f->qpos = f->qvel = f->ctrl = f->qfrc = f->sens = f->act = NULL;
}

// a row with the defaults of absent coordinates: qpos0 and zero velocity
static void row_defaults(double* qpos, double* qvel, const physModel* m) {
  memcpy(qpos, m->qpos0, sizeof(double) * (size_t)m->nq);
  memset(qvel, 0, sizeof(double) * (size_t)m->nv);
}

//---------------------------------------------------------------------------------------------------------
// CSV with named columns

// the target of a header name: --map first, then the naming rules; PHYS_ERR_PARSE naming what is expected
static physStatus resolve_column(dsColumn* c, const physModel* m, const char* name, const char* const* col_map,
                                 const dsColumn* map_target, int nmap, const char* file, int column, physLog* log) {
  for (int k = 0; k < nmap; k++) {
    if (strcmp(col_map[k], name) == 0) {
      *c = map_target[k];
      return PHYS_OK;
    }
  }
  if (match_column(c, m, name)) return PHYS_OK;
  char expected[PHYS_MSGLEN / 2];
  describe_expected(expected, sizeof expected, m);
  return phys_error(log, PHYS_ERR_PARSE, "%s:1:%d: column '%.60s' matches no coordinate of model '%s' "
                    "(nq=%d, nv=%d); expected: %s", file, column, name, m->modelname, m->nq, m->nv, expected);
}

// the names of the missing inputs of a group (given[i] == 0), for messages: " u3 (ctrl:motor4), u5 (ctrl:..)"
static void describe_missing(char* buf, size_t n, const physModel* m, const int* given, int count, int controls) {
  char tmp[200];
  buf[0] = 0;
  for (int i = 0; i < count; i++) {
    if (given[i]) continue;
    const char* name = "";
    if (controls) name = phys_id2name(m, "actuator", i);
    else
      for (int j = 0; j < m->njnt; j++)
        if (i >= m->jnt_dofadr[j] && i < m->jnt_dofadr[j] + jnt_nv(m->jnt_type[j])) name = phys_id2name(m, "joint", j);
    snprintf(tmp, sizeof tmp, " %s%d%s%s%.80s%s", controls ? "u" : "tau", i, *name ? " (" : "",
             *name ? (controls ? "ctrl:" : "qfrc:") : "", name, *name ? ")" : "");
    append(buf, n, tmp);
  }
}

// the recorded inputs of a header (given_u: nu, given_tau: nv flags, nonzero where a column gives them): each
// group all or none; sets f->nu, f->ntau
static physStatus check_inputs(dsFile* f, const physModel* m, const int* given_u, const int* given_tau,
                               const char* file, physLog* log) {
  int nu = 0, ntau = 0;
  for (int i = 0; i < m->nu; i++) nu += given_u[i] != 0;
  for (int i = 0; i < m->nv; i++) ntau += given_tau[i] != 0;
  char missing[PHYS_MSGLEN / 2];
  if (nu && nu < m->nu) {
    describe_missing(missing, sizeof missing, m, given_u, m->nu, 1);
    return phys_error(log, PHYS_ERR_PARSE, "%s:1: the columns give %d of the %d controls of model '%s'; give all of "
                      "u0..u%d (or ctrl:ACTUATOR) or none; missing:%s", file, nu, m->nu, m->modelname, m->nu - 1,
                      missing);
  }
  if (ntau && ntau < m->nv) {
    describe_missing(missing, sizeof missing, m, given_tau, m->nv, 0);
    return phys_error(log, PHYS_ERR_PARSE, "%s:1: the columns give %d of the %d joint forces of model '%s'; give "
                      "all of tau0..tau%d (or qfrc:JOINT[:i]) or none; missing:%s", file, ntau, m->nv, m->modelname,
                      m->nv - 1, missing);
  }
  f->nu = nu ? m->nu : 0;
  f->ntau = ntau ? m->nv : 0;
  return PHYS_OK;
}

// the activation columns of a header (given: na flags, nonzero where a column gives one): all or none; sets
// f->nact
static physStatus check_acts(dsFile* f, const physModel* m, const int* given, const char* file, physLog* log) {
  int n = 0, miss = -1;
  for (int i = 0; i < m->na; i++) n += given[i] != 0;
  for (int i = 0; i < m->na && miss < 0; i++)
    if (!given[i]) miss = i;
  f->nact = n ? m->na : 0;
  if (!n || n == m->na) return PHYS_OK;
  const char* name = "";
  for (int a = 0; a < m->nu; a++)
    if (m->actuator_actadr[a] == miss) name = phys_id2name(m, "actuator", a);
  return phys_error(log, PHYS_ERR_PARSE, "%s:1: the columns give %d of the %d activations of model '%s'; give all of "
                    "act0..act%d (or act:ACTUATOR) or none; missing act%d%s%.80s%s", file, n, m->na, m->modelname,
                    m->na - 1, miss, *name ? " (act:" : "", name, *name ? ")" : "");
}

// the header of a named CSV: every column's target, no duplicates, a time column, whole quaternions, inputs
// all or none
static physStatus parse_named_header(dsColumn* col, int* ncol, dsFile* f, const physModel* m, char* header,
                                     const char* const* col_map, const dsColumn* map_target, int nmap,
                                     const char* file, physLog* log) {
  int* owner = calloc((size_t)(1 + m->nq + 2 * m->nv + m->nu + m->nsensordata + m->na), sizeof(int));   // 1 + column that set each target
  if (!owner) return phys_error(log, PHYS_ERR_NOMEM, "%s: out of memory", file);
  physStatus s = PHYS_OK;
  char* cursor = header;
  int n = 0;
  for (; s == PHYS_OK && n < *ncol; n++) {
    char* name = phys_csv_field(&cursor);
    s = resolve_column(col + n, m, name, col_map, map_target, nmap, file, n + 1, log);
    if (s != PHYS_OK) break;
    int kind = col[n].kind, slot = kind == COL_TIME ? 0 : kind == COL_Q ? 1 + col[n].index
                                   : kind == COL_V ? 1 + m->nq + col[n].index
                                   : kind == COL_U ? 1 + m->nq + m->nv + col[n].index
                                   : kind == COL_TAU ? 1 + m->nq + m->nv + m->nu + col[n].index
                                   : kind == COL_SENS ? 1 + m->nq + 2 * m->nv + m->nu + col[n].index
                                                      : 1 + m->nq + 2 * m->nv + m->nu + m->nsensordata + col[n].index;
    if (owner[slot]) {
      char t[32];
      target_name(t, col + n);
      s = phys_error(log, PHYS_ERR_PARSE, "%s:1:%d: column '%.60s' gives %s, as column %d already does", file,
                     n + 1, name, t, owner[slot]);
    }
    owner[slot] = n + 1;
    if (col[n].kind == COL_Q) f->has_q[col[n].index] = 1;
    if (col[n].kind == COL_V) f->has_v[col[n].index] = 1;
    if (col[n].kind == COL_SENS) f->has_s[col[n].index] = 1, f->nsens = m->nsensordata;
  }
  if (s == PHYS_OK && !owner[0]) {
    s = phys_error(log, PHYS_ERR_PARSE, "%s:1: no time column ('t')", file);
  }
  if (s == PHYS_OK) s = check_inputs(f, m, owner + 1 + m->nq + m->nv, owner + 1 + m->nq + m->nv + m->nu, file, log);
  if (s == PHYS_OK) s = check_acts(f, m, owner + 1 + m->nq + 2 * m->nv + m->nu + m->nsensordata, file, log);
  free(owner);
  for (int j = 0; s == PHYS_OK && j < m->njnt; j++) {
    int type = m->jnt_type[j], adr = m->jnt_qposadr[j] + (type == PHYS_JNT_FREE ? 3 : 0);
    if (type != PHYS_JNT_FREE && type != PHYS_JNT_BALL) continue;
    int k = f->has_q[adr] + f->has_q[adr + 1] + f->has_q[adr + 2] + f->has_q[adr + 3];
    if (k != 0 && k != 4) {
      s = phys_error(log, PHYS_ERR_PARSE, "%s:1: joint '%s': the columns give %d of the 4 quaternion "
                     "components q%d..q%d; give all four or none", file, phys_id2name(m, "joint", j), k, adr,
                     adr + 3);
    }
  }
  return s;
}

// parse one finite number of a field; the message names file:line:column and the column's name
static physStatus parse_number(double* x, const char* field, const char* file, int line, int column,
                               const char* name, physLog* log) {
  char* end;
  *x = strtod(field, &end);
  if (!*field || *end) {
    return phys_error(log, PHYS_ERR_PARSE, "%s:%d:%d: column '%s': '%.40s' is not a number", file, line, column,
                      name, field);
  }
  if (!isfinite(*x)) {
    return phys_error(log, PHYS_ERR_VALUE, "%s:%d:%d: column '%s': value '%.40s' is not finite", file, line,
                      column, name, field);
  }
  return PHYS_OK;
}

// value x of column c into sample k of f
static void store_value(dsFile* f, int k, const dsColumn* c, double x, const physModel* m) {
  switch (c->kind) {
    case COL_TIME: f->time[k] = x; break;
    case COL_Q: f->qpos[(size_t)k * m->nq + c->index] = x; break;
    case COL_V: f->qvel[(size_t)k * m->nv + c->index] = x; break;
    case COL_U: f->ctrl[(size_t)k * f->nu + c->index] = x; break;
    case COL_SENS: f->sens[(size_t)k * f->nsens + c->index] = x; break;
    case COL_ACT: f->act[(size_t)k * f->nact + c->index] = x; break;
    default: f->qfrc[(size_t)k * f->ntau + c->index] = x; break;
  }
}

// one data row of a named CSV into sample k of f
static physStatus parse_named_row(dsFile* f, int k, char* text, char* const* names, const dsColumn* col,
                                  int ncol, const physModel* m, const char* file, int line, physLog* log) {
  double* qpos = f->qpos + (size_t)k * m->nq;
  double* qvel = f->qvel + (size_t)k * m->nv;
  row_defaults(qpos, qvel, m);
  if (f->nsens) memset(f->sens + (size_t)k * f->nsens, 0, sizeof(double) * (size_t)f->nsens);
  int nfield = 1;
  for (const char* c = text; *c; c++) nfield += *c == ',';
  if (nfield != ncol) {
    return phys_error(log, PHYS_ERR_SIZE, "%s:%d: %d columns, the header has %d", file, line, nfield, ncol);
  }
  char* cursor = text;
  for (int c = 0; c < ncol; c++) {
    double x;
    physStatus s = parse_number(&x, phys_csv_field(&cursor), file, line, c + 1, names[c], log);
    if (s != PHYS_OK) return s;
    store_value(f, k, col + c, x, m);
  }
  f->line[k] = line;
  return phys_traj_check_quat(qpos, m, file, line, log);
}

// copy the header's names (for messages) into one buffer of ncol nul-terminated strings
static char** header_names(const char* header, int ncol) {
  char** names = malloc(sizeof(char*) * (size_t)ncol + strlen(header) + 1);
  if (!names) return NULL;
  char* text = (char*)(names + ncol);
  strcpy(text, header);
  char* cursor = text;
  for (int c = 0; c < ncol; c++) names[c] = phys_csv_field(&cursor);
  return names;
}

// the data rows of a named CSV; blank lines only at the end
static physStatus read_named_rows(dsFile* f, physLineReader* r, char* const* names, const dsColumn* col, int ncol,
                                  const physModel* m, physLog* log) {
  int rows = 0, blank = 0, capacity = 0, more;
  const char* file = r->filename;
  physStatus s = PHYS_OK;
  while (s == PHYS_OK && (more = phys_line_next(r, log)) > 0) {
    if (!r->buf[strspn(r->buf, " \t")]) {
      if (!blank) blank = r->lineno;
      continue;
    }
    if (blank) return phys_error(log, PHYS_ERR_PARSE, "%s:%d: blank line inside the data", file, blank);
    if (rows >= r->max_rows) {
      return phys_error(log, PHYS_ERR_SIZE, "%s:%d: more than %d data rows (the limit of one file)", file, r->lineno,
                        r->max_rows);
    }
    if (!file_grow(f, &capacity, m, rows + 1)) {
      return phys_error(log, PHYS_ERR_NOMEM, "%s:%d: out of memory at %d rows", file, r->lineno, rows);
    }
    s = parse_named_row(f, rows, r->buf, names, col, ncol, m, file, r->lineno, log);
    rows++;
  }
  if (s == PHYS_OK && more < 0) s = r->status;
  f->T = rows;
  if (s == PHYS_OK && !rows) s = phys_error(log, PHYS_ERR_PARSE, "%s: no data rows after the header", file);
  return s;
}

// a CSV with named columns (the header is the reader's current line)
static physStatus read_named_csv(dsFile* f, physLineReader* r, const physModel* m, const char* const* col_map,
                                 const dsColumn* map_target, int nmap, physLog* log) {
  const char* file = r->filename;
  int ncol = 1;
  for (const char* c = r->buf; *c; c++) ncol += *c == ',';
  if (ncol > DS_MAXCOLS) return phys_error(log, PHYS_ERR_SIZE, "%s:1: more than %d columns", file, DS_MAXCOLS);
  dsColumn* col = malloc(sizeof(dsColumn) * (size_t)ncol);
  char** names = header_names(r->buf, ncol);
  physStatus s = col && names ? PHYS_OK : phys_error(log, PHYS_ERR_NOMEM, "%s: out of memory", file);
  if (s == PHYS_OK) s = parse_named_header(col, &ncol, f, m, r->buf, col_map, map_target, nmap, file, log);
  if (s == PHYS_OK) s = read_named_rows(f, r, names, col, ncol, m, log);
  free(col);
  free(names);
  return s;
}

// 1 if a header line is physid simulate's "t,q0,...,q{nq-1},v0,...,v{nv-1}", maybe followed by ",u0..", ",tau0..",
// ",act0.."
static int is_simulate_header(const char* header, const physModel* m) {
  char want[32];
  const char* p = header;
  for (int c = 0; c < 1 + m->nq + m->nv; c++) {
    if (c == 0) snprintf(want, sizeof want, "t");
    else if (c <= m->nq) snprintf(want, sizeof want, ",q%d", c - 1);
    else snprintf(want, sizeof want, ",v%d", c - 1 - m->nq);
    size_t n = strlen(want);
    if (strncmp(p, want, n) != 0) return 0;
    p += n;
  }
  if (strstr(p, ",sensor:")) return 0;   // sensor columns: read by name (rule 7)
  return *p == 0 || strncmp(p, ",u0", 3) == 0 || strncmp(p, ",tau0", 5) == 0 ||
         strncmp(p, ",act0", 5) == 0;   // inputs and activations: trajio checks them
}

// a file in physid simulate's layout, read by trajio.c (the same validation as --init) from the header on
static physStatus read_simulate_csv(dsFile* f, const physModel* m, physLineReader* r, physLog* log) {
  physTraj t;
  physStatus s = phys_traj_read_lines(&t, m, r, 0, log);
  if (s != PHYS_OK) return s;
  f->T = t.nrow;
  f->line = t.line;
  f->time = t.time;
  f->qpos = t.qpos;
  f->qvel = t.qvel;
  f->nu = t.nu;
  f->ntau = t.ntau;
  f->ctrl = t.ctrl;
  f->qfrc = t.qfrc;
  f->act = t.act;
  memset(f->has_q, 1, (size_t)m->nq);
  memset(f->has_v, 1, (size_t)m->nv);
  return PHYS_OK;
}

// a CSV file from its open stream: the simulate layout through trajio.c, anything else by column names
static physStatus read_csv(dsFile* f, const physModel* m, const char* const* col_map, const dsColumn* map_target,
                           int nmap, FILE* fp, const char* file, physLog* log) {
  physLineReader r;
  phys_line_init(&r, fp, file);
  int first = phys_line_next(&r, log);
  physStatus s = r.status;
  if (first == 0) s = phys_error(log, PHYS_ERR_PARSE, "%s: empty file (expected a header line)", file);
  else if (first > 0 && is_simulate_header(r.buf, m) && nmap == 0) s = read_simulate_csv(f, m, &r, log);
  else if (first > 0) s = read_named_csv(f, &r, m, col_map, map_target, nmap, log);
  phys_line_free(&r);
  return s;
}

//---------------------------------------------------------------------------------------------------------
// .npy

// the value of key in a .npy header dict ("'descr': '<f8'" -> "'<f8'"), copied to out; 0 if absent
static int npy_value(char* out, size_t n, const char* header, const char* key) {
  const char* p = strstr(header, key);
  if (!p) return 0;
  p += strlen(key);
  p += strspn(p, " \t:");
  size_t len = *p == '(' ? strcspn(p, ")") + 1 : *p == '[' ? strcspn(p, "]") + 1 : strcspn(p, ",}");
  if (len >= n) return 0;
  memcpy(out, p, len);
  out[len] = 0;
  while (len > 0 && (out[len - 1] == ' ')) out[--len] = 0;
  return 1;
}

// parse the shape tuple "(a, b)" into rows, cols; 0 unless it is 2-D
static int npy_shape(long* rows, long* cols, const char* tuple) {
  char* end;
  if (tuple[0] != '(') return 0;
  *rows = strtol(tuple + 1, &end, 10);
  if (end == tuple + 1 || *end != ',') return 0;
  const char* p = end + 1 + strspn(end + 1, " ");
  *cols = strtol(p, &end, 10);
  if (end == p) return 0;
  end += strspn(end, " ,");
  return *end == ')';
}

// the column layout of a plain 2-D .npy of ncol columns, simulate's trajectory order: t, qpos, qvel, then (if ncol
// allows) the nu controls, then the nv joint forces (nu = 0: t, qpos, qvel, tau), then, for a model with
// activations (na > 0, after the controls), the na activations act0.. (widths 1 + nq + nv + nu + na and
// 1 + nq + nv + nu + nv + na; where na = nv the width with one of the two groups reads the forces: name the
// columns in a structured array for the other); col (ncol) gets the targets, f->nu / f->ntau / f->nact the groups;
// 0 if ncol is none of these widths
static int npy_plain_layout(dsColumn* col, dsFile* f, const physModel* m, long ncol) {
  long base = 1 + m->nq + m->nv;
  f->nu = ncol >= base + m->nu && m->nu > 0 ? m->nu : 0;
  long rest = ncol - base - f->nu;   // forces and activations
  f->ntau = rest == m->nv || (m->na > 0 && f->nu > 0 && rest == m->nv + m->na) ? m->nv : 0;
  f->nact = m->na > 0 && f->nu > 0 && rest == f->ntau + m->na ? m->na : 0;
  if (rest != f->ntau + f->nact) return 0;
  for (long c = 0; c < ncol; c++) {
    long i = c - 1, iu = i - m->nq - m->nv, it = iu - f->nu;
    col[c] = c == 0 ? (dsColumn){COL_TIME, 0} : i < m->nq ? (dsColumn){COL_Q, (int)i}
             : iu < 0 ? (dsColumn){COL_V, (int)(i - m->nq)} : iu < f->nu ? (dsColumn){COL_U, (int)iu}
             : it < f->ntau ? (dsColumn){COL_TAU, (int)it} : (dsColumn){COL_ACT, (int)(it - f->ntau)};
  }
  memset(f->has_q, 1, (size_t)m->nq);
  memset(f->has_v, 1, (size_t)m->nv);
  return 1;
}

// the field names of a structured dtype "[('t', '<f8'), ('q0', '<f8'), ...]" joined by commas into names (a
// header line for parse_named_header); every field must be a scalar '<f8'. *ncol out; 0 if malformed
static int npy_fields(char* names, size_t n, int* ncol, const char* descr) {
  const char* p = descr + 1;
  size_t len = 0;
  *ncol = 0;
  names[0] = 0;
  for (;;) {
    p += strspn(p, " ,");
    if (*p == ']') return *ncol > 0;
    if (*p != '(') return 0;
    p += 1 + strspn(p + 1, " ");
    char quote = *p;
    if (quote != '\'' && quote != '"') return 0;
    const char* end = strchr(p + 1, quote);
    if (!end || len + (size_t)(end - p) + 2 >= n) return 0;
    if (*ncol) names[len++] = ',';
    memcpy(names + len, p + 1, (size_t)(end - p - 1));
    len += (size_t)(end - p - 1);
    names[len] = 0;
    p = end + 1 + strspn(end + 1, " ");
    if (*p != ',' || strncmp(p + 1 + strspn(p + 1, " "), "'<f8')", 6) != 0) return 0;
    p = strchr(p, ')') + 1;
    if (++*ncol > DS_MAXCOLS) return 0;
  }
}

// check a .npy header: C order; '<f8' with shape (T, ncol) laid out as npy_plain_layout says, or a structured
// dtype of '<f8' fields named as CSV columns with shape (T,). T, *ncol and col (malloc'd) out
static physStatus npy_check_header(long* T, int* ncol, dsColumn** col, dsFile* f, const char* header,
                                   const physModel* m, const char* const* col_map, const dsColumn* map_target,
                                   int nmap, const char* file, physLog* log) {
  char descr[8192], order[64], shape[128], names[8192];
  long rows, cols = 0, base = 1 + m->nq + m->nv;
  if (!npy_value(descr, sizeof descr, header, "'descr'") || !npy_value(order, sizeof order, header, "'fortran_order'") ||
      !npy_value(shape, sizeof shape, header, "'shape'")) {
    return phys_error(log, PHYS_ERR_PARSE, "%s: malformed .npy header '%.200s'", file, header);
  }
  int structured = descr[0] == '[';
  if (!structured && strcmp(descr, "'<f8'") != 0) {
    return phys_error(log, PHYS_ERR_PARSE, "%s: .npy dtype %s is not supported: save the array as little-endian "
                      "float64 ('<f8'), e.g. a.astype('<f8'), or as a structured array of '<f8' fields", file, descr);
  }
  if (strcmp(order, "False") != 0) {
    return phys_error(log, PHYS_ERR_PARSE, "%s: .npy array in Fortran order is not supported: save it in C order "
                      "(np.ascontiguousarray)", file);
  }
  if (structured) {
    if (!npy_fields(names, sizeof names, ncol, descr) || sscanf(shape, "(%ld,)", &rows) != 1 || rows < 1 ||
        rows > PHYS_TRAJ_MAXROWS) {
      return phys_error(log, PHYS_ERR_PARSE, "%s: structured .npy dtype %.200s, shape %s: expected '<f8' fields "
                        "named as CSV columns (t, q0.., v0.., u0.., tau0.. or joint and actuator names) and a 1-D "
                        "shape (T,)", file, descr, shape);
    }
    *col = malloc(sizeof(dsColumn) * (size_t)*ncol);
    if (!*col) return phys_error(log, PHYS_ERR_NOMEM, "%s: out of memory", file);
    *T = rows;
    return parse_named_header(*col, ncol, f, m, names, col_map, map_target, nmap, file, log);
  }
  if (descr[0] == '[' || !npy_shape(&rows, &cols, shape)) {
    return phys_error(log, PHYS_ERR_SIZE, "%s: .npy shape %s: expected 2-D (T, %ld) = (T, 1 + nq + nv) with "
                      "columns t, qpos, qvel", file, shape, base);
  }
  *col = malloc(sizeof(dsColumn) * (size_t)(cols > 0 && cols <= DS_MAXCOLS ? cols : 1));
  if (!*col) return phys_error(log, PHYS_ERR_NOMEM, "%s: out of memory", file);
  if (cols < 1 || cols > DS_MAXCOLS || !npy_plain_layout(*col, f, m, cols) || rows < 1 || rows > PHYS_TRAJ_MAXROWS) {
    return phys_error(log, PHYS_ERR_SIZE, "%s: .npy shape (%ld, %ld): expected (T, %ld) = (T, 1 + nq + nv) with "
                      "columns t, qpos, qvel for model '%s' (nq=%d, nv=%d), 1 <= T <= %d; recorded inputs follow the "
                      "state: (T, %ld) with the nu=%d controls, (T, %ld) with controls and nv joint forces%s (a "
                      "structured array names its columns instead)", file, rows, cols, base, m->modelname, m->nq,
                      m->nv, PHYS_TRAJ_MAXROWS, base + m->nu, m->nu, base + m->nu + m->nv,
                      m->na > 0 && m->nu > 0 ? ", either followed by the na activations" : "");
  }
  *T = rows;
  *ncol = (int)cols;
  return PHYS_OK;
}

// read the magic, version and header text of a .npy file (header malloc'd into *header); *offset: where the data
// start. A regular file must hold the header it announces (checked before allocating it)
static physStatus npy_read_header(char** header, long* offset, FILE* fp, const struct stat* st, const char* file,
                                  physLog* log) {
  unsigned char pre[12];
  if (fread(pre, 1, 10, fp) != 10 || memcmp(pre, "\x93NUMPY", 6) != 0) {
    return phys_error(log, PHYS_ERR_PARSE, "%s: not a .npy file (no \\x93NUMPY magic)", file);
  }
  unsigned long len = pre[8] | (unsigned long)pre[9] << 8;
  *offset = 10;
  if (pre[6] == 2 || pre[6] == 3) {
    if (fread(pre + 10, 1, 2, fp) != 2) return phys_error(log, PHYS_ERR_PARSE, "%s: truncated .npy header", file);
    len |= (unsigned long)pre[10] << 16 | (unsigned long)pre[11] << 24;
    *offset = 12;
  } else if (pre[6] != 1) {
    return phys_error(log, PHYS_ERR_PARSE, "%s: .npy format version %d.%d is not supported (1, 2 or 3)", file,
                      pre[6], pre[7]);
  }
  if (len > 1 << 20) return phys_error(log, PHYS_ERR_PARSE, "%s: .npy header of %lu bytes", file, len);
  if (S_ISREG(st->st_mode) && (long long)(*offset + len) > (long long)st->st_size) {
    return phys_error(log, PHYS_ERR_PARSE, "%s: truncated .npy header: %lu bytes announced, the file has %lld", file,
                      len, (long long)st->st_size);
  }
  *offset += (long)len;
  *header = malloc(len + 1);
  if (!*header) return phys_error(log, PHYS_ERR_NOMEM, "%s: out of memory", file);
  if (fread(*header, 1, len, fp) != len) return phys_error(log, PHYS_ERR_PARSE, "%s: truncated .npy header", file);
  (*header)[len] = 0;
  return PHYS_OK;
}

// a regular file must hold the T rows of ncol values its shape announces (checked before allocating them)
static physStatus npy_check_size(const struct stat* st, long offset, long T, int ncol, const char* file, physLog* log) {
  long long need = (long long)T * ncol * 8, have = (long long)st->st_size - offset;
  if (!S_ISREG(st->st_mode) || need == have) return PHYS_OK;
  return phys_error(log, PHYS_ERR_SIZE, "%s: the .npy shape (%ld, %d) needs %lld bytes of data, the file has %lld%s",
                    file, T, ncol, need, have, need > have ? " (truncated)" : " (data beyond the shape)");
}

// a little-endian float64 from 8 bytes
static double le_double(const unsigned char* b) {
  uint64_t u = 0;
  for (int k = 7; k >= 0; k--) u = u << 8 | b[k];
  double x;
  memcpy(&x, &u, sizeof x);
  return x;
}

// the values of a .npy file: T rows of ncol values (column c to col[c]), every value finite; the rows grow as they
// are read (a FIFO's shape is not checked against a size); absent coordinates as a named CSV's
static physStatus npy_read_rows(dsFile* f, FILE* fp, int T, const dsColumn* col, int ncol, const physModel* m,
                                const char* file, physLog* log) {
  int capacity = 0;
  unsigned char* row = malloc((size_t)ncol * 8);
  if (!row) return phys_error(log, PHYS_ERR_NOMEM, "%s: out of memory", file);
  physStatus s = PHYS_OK;
  for (int k = 0; s == PHYS_OK && k < T; k++) {
    if (fread(row, 8, (size_t)ncol, fp) != (size_t)ncol) {
      s = phys_error(log, PHYS_ERR_PARSE, "%s: truncated .npy data at row %d of %d", file, k + 1, T);
      break;
    }
    if (!file_grow(f, &capacity, m, k + 1)) {
      s = phys_error(log, PHYS_ERR_NOMEM, "%s: out of memory at row %d", file, k + 1);
      break;
    }
    f->T = k + 1;
    row_defaults(f->qpos + (size_t)k * m->nq, f->qvel + (size_t)k * m->nv, m);
    for (int c = 0; s == PHYS_OK && c < ncol; c++) {
      double x = le_double(row + 8 * c);
      if (!isfinite(x)) {
        char name[32];
        target_name(name, col + c);
        s = phys_error(log, PHYS_ERR_VALUE, "%s: row %d, column %d ('%s'): value %g is not finite", file, k + 1,
                       c + 1, name, x);
      }
      store_value(f, k, col + c, x, m);
    }
    f->line[k] = k + 1;
    if (s == PHYS_OK) s = phys_traj_check_quat(f->qpos + (size_t)k * m->nq, m, file, k + 1, log);
  }
  if (s == PHYS_OK && fgetc(fp) != EOF) s = phys_error(log, PHYS_ERR_SIZE, "%s: data beyond the .npy shape", file);
  free(row);
  return s;
}

// a .npy file (version 1-3, C order, '<f8' (T, ncol) or structured '<f8' fields (T,)) from its open stream
static physStatus read_npy(dsFile* f, const physModel* m, const char* const* col_map, const dsColumn* map_target,
                           int nmap, FILE* fp, const char* file, physLog* log) {
  struct stat st;
  char* header = NULL;
  dsColumn* col = NULL;
  long T = 0, offset = 0;
  int ncol = 0;
  physStatus s = fstat(fileno(fp), &st) == 0 ? PHYS_OK : phys_error(log, PHYS_ERR_IO, "%s: %s", file, strerror(errno));
  if (s == PHYS_OK) s = npy_read_header(&header, &offset, fp, &st, file, log);
  if (s == PHYS_OK) s = npy_check_header(&T, &ncol, &col, f, header, m, col_map, map_target, nmap, file, log);
  if (s == PHYS_OK) s = npy_check_size(&st, offset, T, ncol, file, log);
  if (s == PHYS_OK) s = npy_read_rows(f, fp, (int)T, col, ncol, m, file, log);
  free(col);
  free(header);
  return s;
}

//---------------------------------------------------------------------------------------------------------
// after reading: the observe filter, time, missing velocities

// drop coordinates outside the observe filter (positions back to qpos0, velocities to 0, sensor values unmarked)
static void apply_observe(dsFile* f, const physModel* m, const unsigned char* keep_q, const unsigned char* keep_v,
                          const unsigned char* keep_s) {
  for (int i = 0; f->nsens && i < m->nsensordata; i++)
    if (!keep_s[i]) f->has_s[i] = 0;
  for (int i = 0; i < m->nq; i++) {
    if (!f->has_q[i] || keep_q[i]) continue;
    f->has_q[i] = 0;
    for (int k = 0; k < f->T; k++) f->qpos[(size_t)k * m->nq + i] = m->qpos0[i];
  }
  for (int i = 0; i < m->nv; i++) {
    if (!f->has_v[i] || keep_v[i]) continue;
    f->has_v[i] = 0;
    for (int k = 0; k < f->T; k++) f->qvel[(size_t)k * m->nv + i] = 0;
  }
}

// at least 2 samples, times strictly increasing
static physStatus check_time(const dsFile* f, const char* file, physLog* log) {
  if (f->T < 2) return phys_error(log, PHYS_ERR_SIZE, "%s: %d sample; a trajectory needs at least 2", file, f->T);
  for (int k = 1; k < f->T; k++) {
    if (!(f->time[k] > f->time[k - 1])) {
      return phys_error(log, PHYS_ERR_VALUE, "%s:%d:1: time %.17g does not increase (previous sample, line %d: "
                        "%.17g)", file, f->line[k], f->time[k], f->line[k - 1], f->time[k - 1]);
    }
  }
  return PHYS_OK;
}

// sysid.h
void phys_wrap_continuous(double* vdiff, const physModel* m, double dt) {
  for (int j = 0; j < m->njnt; j++) {
    if (m->jnt_type[j] != PHYS_JNT_HINGE || m->jnt_limited[j]) continue;
    int i = m->jnt_dofadr[j];
    vdiff[i] = phys_wrap_angle(vdiff[i] * dt) / dt;
  }
}

// velocities absent from the file: v_k = (q_k (-) q_{k-1}) / (t_k - t_{k-1}) for k >= 1 (semi-implicit Euler's
// own velocity; a continuous hinge's difference wrapped into (-pi, pi]); v_0 = 2 v_1 - v_2, the linear extrapolation (error O(dt^2) where the forward difference v_1
// is O(dt) off), or v_1 when T = 2
static void fill_velocities(dsFile* f, const physModel* m, double* vdiff) {
  int nv = m->nv;
  for (int k = 1; k < f->T; k++) {
    phys_difference_pos(m, vdiff, f->time[k] - f->time[k - 1], f->qpos + (size_t)(k - 1) * m->nq,
                        f->qpos + (size_t)k * m->nq);
    phys_wrap_continuous(vdiff, m, f->time[k] - f->time[k - 1]);
    for (int i = 0; i < nv; i++) {
      if (!f->has_v[i]) f->qvel[(size_t)k * nv + i] = vdiff[i];
    }
  }
  for (int i = 0; i < nv; i++) {
    if (f->has_v[i]) continue;
    double v1 = f->qvel[(size_t)nv + i], v2 = f->T > 2 ? f->qvel[2 * (size_t)nv + i] : v1;
    f->qvel[i] = 2 * v1 - v2;
  }
}

// observed tangent coordinates of positions (nv flags) from the qpos coordinates a file gave
static void tangent_flags(unsigned char* obs_q, const physModel* m, const unsigned char* has_q) {
  for (int j = 0; j < m->njnt; j++) {
    int type = m->jnt_type[j], qa = m->jnt_qposadr[j], da = m->jnt_dofadr[j];
    if (type == PHYS_JNT_FREE) {
      for (int i = 0; i < 3; i++) obs_q[da + i] = has_q[qa + i];
      for (int i = 3; i < 6; i++) obs_q[da + i] = has_q[qa + 3];
    } else if (type == PHYS_JNT_BALL) {
      for (int i = 0; i < 3; i++) obs_q[da + i] = has_q[qa];
    } else {
      obs_q[da] = has_q[qa];
    }
  }
}

// the coordinates list of a flags pair, for messages ("q0 q1 v3")
static void describe_flags(char* buf, size_t n, const unsigned char* fq, const unsigned char* fv, const physModel* m) {
  char tmp[32];
  buf[0] = 0;
  for (int i = 0; i < 2 * m->nv; i++) {
    if (!(i < m->nv ? fq[i] : fv[i - m->nv])) continue;
    snprintf(tmp, sizeof tmp, " %s%d", i < m->nv ? "dq" : "v", i % m->nv);
    append(buf, n, tmp);
  }
  if (!buf[0]) append(buf, n, " (nothing)");
}

//---------------------------------------------------------------------------------------------------------
// paths: files and folders

// qsort comparison of two strings
static int compare_names(const void* a, const void* b) {
  return strcmp(*(const char* const*)a, *(const char* const*)b);
}

// append a copy of a path to the list (growing it); 0 on failure
static int list_add(char*** list, int* n, int* cap, const char* path) {
  if (*n >= *cap) {
    int c = *cap ? 2 * *cap : 64;
    char** p = realloc(*list, sizeof(char*) * (size_t)c);
    if (!p) return 0;
    *list = p;
    *cap = c;
  }
  (*list)[*n] = strdup(path);
  return (*list)[(*n)++] != NULL;
}

int phys_dataset_file_name(const char* name) {
  return name[0] != '.' && (ends_with(name, ".csv") || ends_with(name, ".npy"));
}

// the .csv and .npy files of a folder in name order (hidden files and subfolders skipped)
static physStatus list_folder(char*** list, int* n, int* cap, const char* dir, physLog* log) {
  DIR* d = opendir(dir);
  if (!d) return phys_error(log, PHYS_ERR_IO, "%s: cannot open folder: %s", dir, strerror(errno));
  int first = *n;
  physStatus s = PHYS_OK;
  for (struct dirent* e = readdir(d); e && s == PHYS_OK; e = readdir(d)) {
    char full[4096];
    struct stat st;
    if (!phys_dataset_file_name(e->d_name)) continue;
    if (snprintf(full, sizeof full, "%s/%s", dir, e->d_name) >= (int)sizeof full) continue;
    if (stat(full, &st) != 0 || !S_ISREG(st.st_mode)) continue;
    if (*n >= DS_MAXFILES) s = phys_error(log, PHYS_ERR_NOMEM, "%s: more than %d files", dir, DS_MAXFILES);
    else if (!list_add(list, n, cap, full)) s = phys_error(log, PHYS_ERR_NOMEM, "%s: out of memory", dir);
  }
  closedir(d);
  if (s == PHYS_OK && *n == first) {
    s = phys_error(log, PHYS_ERR_IO, "%s: empty folder: no .csv or .npy files in it", dir);
  }
  if (s == PHYS_OK) qsort(*list + first, (size_t)(*n - first), sizeof(char*), compare_names);
  return s;
}

// every path: a file as it is, a folder as its files in name order; then skip and limit
static physStatus expand_paths(char*** list, int* n, const char* const* paths, int npath, const physDataOptions* opt,
                               physLog* log) {
  int cap = 0;
  physStatus s = PHYS_OK;
  if (npath < 1) return phys_error(log, PHYS_ERR_ARG, "no data files given");
  for (int p = 0; p < npath && s == PHYS_OK; p++) {
    struct stat st;
    if (stat(paths[p], &st) != 0) s = phys_error(log, PHYS_ERR_IO, "%s: cannot open: %s", paths[p], strerror(errno));
    else if (S_ISDIR(st.st_mode)) s = list_folder(list, n, &cap, paths[p], log);
    else if (!list_add(list, n, &cap, paths[p])) s = phys_error(log, PHYS_ERR_NOMEM, "out of memory");
  }
  if (s != PHYS_OK) return s;
  int skip = opt && opt->first_file > 0 ? opt->first_file : 0;
  int keep = opt && opt->max_files > 0 ? opt->max_files : *n;
  if (skip >= *n) return phys_error(log, PHYS_ERR_ARG, "skipping %d files leaves none of the %d files", skip, *n);
  for (int k = 0; k < *n; k++) {
    if (k < skip || k >= skip + keep) {
      free((*list)[k]);
      (*list)[k] = NULL;
    }
  }
  int m = 0;
  for (int k = 0; k < *n; k++)
    if ((*list)[k]) (*list)[m++] = (*list)[k];
  *n = m;
  return PHYS_OK;
}

//---------------------------------------------------------------------------------------------------------
// the data set

// read one file of any format into f (flags zeroed first), then observe, time checks and velocities
static physStatus load_file(dsFile* f, const physModel* m, const char* file, const char* const* col_map,
                            const dsColumn* map_target, int nmap, const unsigned char* keep_q,
                            const unsigned char* keep_v, const unsigned char* keep_s, double* vdiff, physLog* log) {
  memset(f->has_q, 0, (size_t)m->nq);
  memset(f->has_v, 0, (size_t)m->nv);
  memset(f->has_s, 0, (size_t)m->nsensordata);
  f->nsens = 0;
  f->nu = f->ntau = f->nact = 0;
  FILE* fp;
  physStatus s = phys_input_open(&fp, file, log);
  if (s != PHYS_OK) return s;
  int c = getc(fp);   // a .npy file starts with the byte 0x93, which no text file does (opened once: FIFOs work)
  ungetc(c, fp);
  if (ends_with(file, ".npy") || c == 0x93) s = read_npy(f, m, col_map, map_target, nmap, fp, file, log);
  else s = read_csv(f, m, col_map, map_target, nmap, fp, file, log);
  fclose(fp);
  if (s == PHYS_OK) apply_observe(f, m, keep_q, keep_v, keep_s);
  if (s == PHYS_OK) s = check_time(f, file, log);
  if (s == PHYS_OK) fill_velocities(f, m, vdiff);
  return s;
}

// move a file record into trajectory k of the data set
static void store_traj(physTrajectory* tr, dsFile* f, const physModel* m, const char* file) {
  snprintf(tr->source, sizeof tr->source, "%s", file);
  tr->T = f->T;
  tr->time = f->time;
  tr->qpos = f->qpos;
  tr->qvel = f->qvel;
  tr->ctrl = f->ctrl;
  tr->qfrc = f->qfrc;
  tr->sens = f->sens;
  tr->act = f->act;
  tr->has_qvel = 0;
  for (int i = 0; i < m->nv; i++) tr->has_qvel |= f->has_v[i];
  free(f->line);
  f->line = NULL;
  f->time = f->qpos = f->qvel = f->ctrl = f->qfrc = f->sens = f->act = NULL;
}

// the observed flags of a file (the coordinates it gives that the observe filter marks observed, keep 1); the
// first file sets them, the others must agree
static physStatus check_observed(physDataset* ds, const physModel* m, const dsFile* f, unsigned char* fq, int k,
                                 const unsigned char* keep_q, const unsigned char* keep_v, const char* file,
                                 physLog* log) {
  unsigned char* hq = fq + m->nv;   // scratch: the observed positions (nq), velocities (nv)
  unsigned char* hv = hq + m->nq;
  for (int i = 0; i < m->nq; i++) hq[i] = f->has_q[i] && keep_q[i] == 1;
  for (int i = 0; i < m->nv; i++) hv[i] = f->has_v[i] && keep_v[i] == 1;
  tangent_flags(fq, m, hq);
  int nobs_s = 0;
  for (int i = 0; f->nsens && i < m->nsensordata; i++) nobs_s += f->has_s[i];
  if (k == 0 && nobs_s) {
    ds->nsens = m->nsensordata;
    ds->obs_s = malloc((size_t)m->nsensordata);
    if (!ds->obs_s) return phys_error(log, PHYS_ERR_NOMEM, "out of memory");
    memcpy(ds->obs_s, f->has_s, (size_t)m->nsensordata);
  } else if ((ds->obs_s != NULL) != (nobs_s > 0) ||
             (ds->obs_s && memcmp(ds->obs_s, f->has_s, (size_t)m->nsensordata))) {
    return phys_error(log, PHYS_ERR_PARSE, "%s: observes other sensor values than %s (all files must give the same "
                      "sensor columns)", file, ds->traj[0].source);
  }
  if (k == 0) {
    memcpy(ds->obs_q, fq, (size_t)m->nv);
    memcpy(ds->obs_v, hv, (size_t)m->nv);
    ds->has_ctrl = f->nu > 0;
    ds->has_qfrc = f->ntau > 0;
    return PHYS_OK;
  }
  if ((f->nu > 0) != ds->has_ctrl || (f->ntau > 0) != ds->has_qfrc) {
    return phys_error(log, PHYS_ERR_PARSE, "%s: %s controls and %s joint forces, but %s %s controls and %s joint "
                      "forces (all files must record the same inputs)", file, f->nu ? "records" : "has no",
                      f->ntau ? "records" : "no", ds->traj[0].source, ds->has_ctrl ? "records" : "has no",
                      ds->has_qfrc ? "records" : "no");
  }
  if (!memcmp(ds->obs_q, fq, (size_t)m->nv) && !memcmp(ds->obs_v, hv, (size_t)m->nv)) return PHYS_OK;
  char a[256], b[256];
  describe_flags(a, sizeof a, fq, hv, m);
  describe_flags(b, sizeof b, ds->obs_q, ds->obs_v, m);
  return phys_error(log, PHYS_ERR_PARSE, "%s: observes%s, but %s observes%s (all files must give the same "
                    "coordinates)", file, a, ds->traj[0].source, b);
}

// median spacing of all samples (deterministic: sorted copy)
static int compare_doubles(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

// dt_obs = median over all trajectories of t_{k+1} - t_k
static physStatus median_spacing(physDataset* ds, physLog* log) {
  size_t n = 0;
  for (int k = 0; k < ds->ntraj; k++) n += (size_t)(ds->traj[k].T - 1);
  double* dt = malloc(sizeof(double) * (n ? n : 1));
  if (!dt) return phys_error(log, PHYS_ERR_NOMEM, "out of memory");
  size_t i = 0;
  for (int k = 0; k < ds->ntraj; k++)
    for (int s = 1; s < ds->traj[k].T; s++) dt[i++] = ds->traj[k].time[s] - ds->traj[k].time[s - 1];
  qsort(dt, n, sizeof(double), compare_doubles);
  ds->dt_obs = n % 2 ? dt[n / 2] : 0.5 * (dt[n / 2 - 1] + dt[n / 2]);
  free(dt);
  return PHYS_OK;
}

// parse every --map entry up front
static physStatus parse_maps(char (*col_map)[256], dsColumn* target, const physModel* m, const physDataOptions* opt,
                             physLog* log) {
  for (int k = 0; opt && k < opt->nmap; k++) {
    physStatus s = parse_map(col_map[k], target + k, m, opt->map[k], log);
    if (s != PHYS_OK) return s;
  }
  return PHYS_OK;
}

// read the files one by one into ds (its arrays already allocated)
static physStatus load_files(physDataset* ds, const physModel* m, char* const* files, int nfile,
                             const char* const* col_map, const dsColumn* map_target, int nmap,
                             const unsigned char* keep_q, const unsigned char* keep_v, const unsigned char* keep_s,
                             physLog* log) {
  size_t nvv = (size_t)(m->nv ? m->nv : 1);
  // has_q (nq), has_v (nv), tangent (nv) with check_observed's scratch (nq + nv), has_s (nsensordata)
  unsigned char* flags = calloc((size_t)(2 * m->nq + 4 * nvv + (size_t)m->nsensordata + 1), 1);
  double* vdiff = malloc(sizeof(double) * nvv);
  physStatus s = flags && vdiff ? PHYS_OK : phys_error(log, PHYS_ERR_NOMEM, "out of memory");
  for (int k = 0; k < nfile && s == PHYS_OK; k++) {
    dsFile f = {0};
    f.has_q = flags;
    f.has_v = flags + m->nq;
    f.has_s = flags + 2 * m->nq + 4 * nvv;
    s = load_file(&f, m, files[k], col_map, map_target, nmap, keep_q, keep_v, keep_s, vdiff, log);
    if (s == PHYS_OK) s = check_observed(ds, m, &f, flags + m->nq + nvv, k, keep_q, keep_v, files[k], log);
    if (s == PHYS_OK) {
      store_traj(ds->traj + k, &f, m, files[k]);
      ds->ntraj = k + 1;
    }
    file_free(&f);
  }
  free(flags);
  free(vdiff);
  return s;
}

// expand the paths, parse mappings and filter, read every file, check them against each other
physStatus phys_dataset_load(physDataset* ds, const physModel* m, const char* const* paths, int npath,
                             const physDataOptions* opt, physLog* log) {
  memset(ds, 0, sizeof *ds);
  ds->nq = m->nq;
  ds->nv = m->nv;
  ds->nu = m->nu;
  int nmap = opt && opt->nmap > 0 ? opt->nmap : 0, nfile = 0;
  char** files = NULL;
  char(*col_map)[256] = calloc((size_t)(nmap ? nmap : 1), 256);
  const char** col_ptr = calloc((size_t)(nmap ? nmap : 1), sizeof(char*));
  dsColumn* map_target = calloc((size_t)(nmap ? nmap : 1), sizeof(dsColumn));
  unsigned char* keep = calloc((size_t)(m->nq + m->nv + m->nsensordata + 1), 1);
  ds->obs_q = calloc((size_t)(m->nv ? m->nv : 1), 1);
  ds->obs_v = calloc((size_t)(m->nv ? m->nv : 1), 1);
  physStatus s = col_map && col_ptr && map_target && keep && ds->obs_q && ds->obs_v
                     ? PHYS_OK : phys_error(log, PHYS_ERR_NOMEM, "out of memory");
  if (s == PHYS_OK) s = parse_maps(col_map, map_target, m, opt, log);
  if (s == PHYS_OK) s = parse_observe(keep, keep + m->nq, keep + m->nq + m->nv, m, opt ? opt->observe : NULL, log);
  if (s == PHYS_OK) s = expand_paths(&files, &nfile, paths, npath, opt, log);
  if (s == PHYS_OK && !(ds->traj = calloc((size_t)nfile, sizeof(physTrajectory)))) {
    s = phys_error(log, PHYS_ERR_NOMEM, "out of memory for %d trajectories", nfile);
  }
  for (int k = 0; k < nmap; k++) col_ptr[k] = col_map[k];
  if (s == PHYS_OK)
    s = load_files(ds, m, files, nfile, col_ptr, map_target, nmap, keep, keep + m->nq, keep + m->nq + m->nv, log);
  if (s == PHYS_OK) s = median_spacing(ds, log);
  for (int k = 0; k < nfile; k++) free(files[k]);
  free(files);
  free(col_map);
  free(col_ptr);
  free(map_target);
  free(keep);
  return s;
}

// release every trajectory and the flags; ds is zeroed
void phys_dataset_free(physDataset* ds) {
  for (int k = 0; ds->traj && k < ds->ntraj; k++) {
    free(ds->traj[k].time);
    free(ds->traj[k].qpos);
    free(ds->traj[k].qvel);
    free(ds->traj[k].ctrl);
    free(ds->traj[k].qfrc);
    free(ds->traj[k].sens);
    free(ds->traj[k].act);
  }
  free(ds->traj);
  free(ds->obs_q);
  free(ds->obs_v);
  free(ds->obs_s);
  memset(ds, 0, sizeof *ds);
}
