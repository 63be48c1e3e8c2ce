// test_oracle_mjcf.c - models read by physid's MJCF reader + compiler against MuJoCo 2.2.2's mjModel.
//
// For each model both engines load the same file (gzip files are gunzipped into a temp folder for MuJoCo,
// physid reads the .gz itself) and every compiled quantity the reader and compiler produce is compared:
// sizes, options, qpos0, body frames and inertia, joints, dofs, geoms, actuators, to 1e-12 relative.
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "mjcf.h"
#include "physid.h"
#include "rot.h"
#include "test.h"

static const double TOL = 1e-12;

//---------------------------------------------------------------------------------------------------------
// comparisons: per field, the largest relative error against the field's scale

// max_i |a_i - b_i| / max(max_i |a_i|, max_i |b_i|, floor) over n values (stride-free)
static double rel_err(const double* a, const double* b, int n, double floor, int* worst) {
  double scale = floor, err = 0;
  for (int i = 0; i < n; i++) scale = fmax(scale, fmax(fabs(a[i]), fabs(b[i])));
  *worst = -1;
  for (int i = 0; i < n; i++) {
    double e = fabs(a[i] - b[i]) / scale;
    if (!(e <= err)) {
      err = isnan(e) ? INFINITY : e;
      *worst = i;
    }
  }
  return err;
}

// compare two arrays of n*dim values, each group of dim against its own scale (floor: scale minimum)
static void cmp_field_tol(const char* model, const char* field, const double* a, const mjtNum* b, int n,
                          int dim, double floor, double tol) {
  double maxerr = 0;
  int at = -1, k;
  for (int i = 0; i < n; i++) {
    double e = rel_err(a + dim * i, b + dim * i, dim, floor, &k);
    if (e > maxerr) {
      maxerr = e;
      at = dim * i + k;
    }
  }
  CHECK_MSG(maxerr <= tol, "%s: %s[%d] physid %.17g mujoco %.17g (rel err %.3g)", model, field, at,
            at >= 0 ? a[at] : 0, at >= 0 ? b[at] : 0, maxerr);
}

// cmp_field_tol at TOL
static void cmp_field(const char* model, const char* field, const double* a, const mjtNum* b, int n, int dim,
                      double floor) {
  cmp_field_tol(model, field, a, b, n, dim, floor, TOL);
}

// compare integer arrays
static void cmp_int(const char* model, const char* field, const int* a, const int* b, int n) {
  int bad = -1;
  for (int i = 0; i < n && bad < 0; i++) {
    if (a[i] != b[i]) bad = i;
  }
  CHECK_MSG(bad < 0, "%s: %s[%d] physid %d mujoco %d", model, field, bad, bad >= 0 ? a[bad] : 0,
            bad >= 0 ? b[bad] : 0);
}

// byte flags (MuJoCo's mjtByte) against ints
static void cmp_byte(const char* model, const char* field, const int* a, const mjtByte* b, int n) {
  int bad = -1;
  for (int i = 0; i < n && bad < 0; i++) {
    if (a[i] != (int)b[i]) bad = i;
  }
  CHECK_MSG(bad < 0, "%s: %s[%d] physid %d mujoco %d", model, field, bad, bad >= 0 ? a[bad] : 0,
            bad >= 0 ? (int)b[bad] : 0);
}

// quaternions up to sign: flip a copy of a to b's hemisphere before comparing
static void cmp_quat(const char* model, const char* field, const double* a, const mjtNum* b, int n) {
  double* t = malloc(sizeof(double) * 4 * (n ? n : 1));
  for (int i = 0; i < n; i++) {
    double dot = 0;
    for (int k = 0; k < 4; k++) dot += a[4 * i + k] * b[4 * i + k];
    for (int k = 0; k < 4; k++) t[4 * i + k] = dot < 0 ? -a[4 * i + k] : a[4 * i + k];
  }
  cmp_field(model, field, t, b, n, 4, 1);
  free(t);
}

// inertia tensor about the com in the body frame: R diag(I) R'
static void inertia_tensor(double out[9], const double quat[4], const double I[3]) {
  double R[9];
  phys_quat2mat(R, quat);
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 3; j++) {
      out[3 * i + j] = R[3 * i] * I[0] * R[3 * j] + R[3 * i + 1] * I[1] * R[3 * j + 1] + R[3 * i + 2] * I[2] * R[3 * j + 2];
    }
  }
}

// bodies: frames, mass, principal moments (descending) and the full tensor in the body frame
static void cmp_bodies(const char* name, const physModel* p, const mjModel* m) {
  cmp_field(name, "body_pos", p->body_pos, m->body_pos, m->nbody, 3, 1);
  cmp_quat(name, "body_quat", p->body_quat, m->body_quat, m->nbody);
  cmp_field(name, "body_ipos", p->body_ipos, m->body_ipos, m->nbody, 3, 1);
  cmp_field(name, "body_mass", p->body_mass, m->body_mass, m->nbody, 1, 1e-300);
  cmp_int(name, "body_parentid (bodies 1..)", p->body_parentid + 1, m->body_parentid + 1, m->nbody - 1);
  double* Ip = malloc(sizeof(double) * 3 * m->nbody);
  double* Im = malloc(sizeof(double) * 3 * m->nbody);
  double* Tp = malloc(sizeof(double) * 9 * m->nbody);
  double* Tm = malloc(sizeof(double) * 9 * m->nbody);
  for (int b = 0; b < m->nbody; b++) {
    for (int k = 0; k < 3; k++) {
      Ip[3 * b + k] = p->body_inertia[3 * b + k];
      Im[3 * b + k] = m->body_inertia[3 * b + k];
    }
    for (int x = 0; x < 2; x++) {   // sort descending (bubble sort of 3)
      for (int y = 0; y < 2 - x; y++) {
        double* v[2] = {Ip + 3 * b, Im + 3 * b};
        for (int s = 0; s < 2; s++) {
          if (v[s][y] < v[s][y + 1]) {
            double t = v[s][y];
            v[s][y] = v[s][y + 1];
            v[s][y + 1] = t;
          }
        }
      }
    }
    inertia_tensor(Tp + 9 * b, p->body_iquat + 4 * b, p->body_inertia + 3 * b);
    inertia_tensor(Tm + 9 * b, m->body_iquat + 4 * b, m->body_inertia + 3 * b);
  }
  cmp_field(name, "body_inertia (sorted)", Ip, Im, m->nbody, 3, 1e-300);
  // MuJoCo's Jacobi eigensolver (mju_eig3) leaves its iquat off by up to ~4e-11 rad: on thrower.xml's
  // body 1 its tensor is off the exact one by 3.9e-11 relative while physid's is within 1e-15 (checked
  // against a long-double computation in exact_thrower_body1 below), so this field is held to 1e-10
  cmp_field_tol(name, "body inertia tensor R diag(I) R'", Tp, Tm, m->nbody, 9, 1e-300, 1e-10);
  free(Ip);
  free(Im);
  free(Tp);
  free(Tm);
}

// joints and dofs; ranges only where limited (MuJoCo leaves unlimited ranges in degrees)
static void cmp_joints(const char* name, const physModel* p, const mjModel* m) {
  cmp_int(name, "jnt_type", p->jnt_type, m->jnt_type, m->njnt);
  cmp_int(name, "jnt_bodyid", p->jnt_bodyid, m->jnt_bodyid, m->njnt);
  cmp_byte(name, "jnt_limited", p->jnt_limited, m->jnt_limited, m->njnt);
  cmp_field(name, "jnt_pos", p->jnt_pos, m->jnt_pos, m->njnt, 3, 1);
  cmp_field(name, "jnt_axis", p->jnt_axis, m->jnt_axis, m->njnt, 3, 1);
  cmp_field(name, "jnt_stiffness", p->jnt_stiffness, m->jnt_stiffness, m->njnt, 1, 1e-300);
  double* rp = calloc(2 * m->njnt + 1, sizeof(double));
  double* rm = calloc(2 * m->njnt + 1, sizeof(double));
  for (int j = 0; j < m->njnt; j++) {
    if (!m->jnt_limited[j] || !p->jnt_limited[j]) continue;
    for (int k = 0; k < 2; k++) {
      rp[2 * j + k] = p->jnt_range[2 * j + k];
      rm[2 * j + k] = m->jnt_range[2 * j + k];
    }
  }
  cmp_field(name, "jnt_range (limited joints)", rp, rm, m->njnt, 2, 1);
  free(rp);
  free(rm);
  cmp_field(name, "qpos0", p->qpos0, m->qpos0, m->nq, 1, 1);
  cmp_field(name, "qpos_spring", p->qpos_spring, m->qpos_spring, m->nq, 1, 1);
  cmp_field(name, "dof_damping", p->dof_damping, m->dof_damping, m->nv, 1, 1e-300);
  cmp_field(name, "dof_armature", p->dof_armature, m->dof_armature, m->nv, 1, 1e-300);
  cmp_int(name, "dof_bodyid", p->dof_bodyid, m->dof_bodyid, m->nv);
}

// geoms: type (MuJoCo has hfield at 1), body, frame, size, contact parameters
static void cmp_geoms(const char* name, const physModel* p, const mjModel* m) {
  int* type = malloc(sizeof(int) * (m->ngeom + 1));
  for (int g = 0; g < m->ngeom; g++) type[g] = p->geom_type[g] == PHYS_GEOM_PLANE ? 0 : p->geom_type[g] + 1;
  cmp_int(name, "geom_type", type, m->geom_type, m->ngeom);
  free(type);
  cmp_int(name, "geom_bodyid", p->geom_bodyid, m->geom_bodyid, m->ngeom);
  cmp_int(name, "geom_contype", p->geom_contype, m->geom_contype, m->ngeom);
  cmp_int(name, "geom_conaffinity", p->geom_conaffinity, m->geom_conaffinity, m->ngeom);
  cmp_int(name, "geom_condim", p->geom_condim, m->geom_condim, m->ngeom);
  cmp_field(name, "geom_size", p->geom_size, m->geom_size, m->ngeom, 3, 1e-300);
  cmp_field(name, "geom_pos", p->geom_pos, m->geom_pos, m->ngeom, 3, 1);
  cmp_quat(name, "geom_quat", p->geom_quat, m->geom_quat, m->ngeom);
  cmp_field(name, "geom_friction", p->geom_friction, m->geom_friction, m->ngeom, 3, 1e-300);
  cmp_field(name, "geom_margin", p->geom_margin, m->geom_margin, m->ngeom, 1, 1);
  double* rgba = malloc(sizeof(double) * 4 * (m->ngeom + 1));
  for (int i = 0; i < 4 * m->ngeom; i++) rgba[i] = m->geom_rgba[i];
  cmp_field_tol(name, "geom_rgba", p->geom_rgba, rgba, m->ngeom, 4, 1, 6e-8);   // MuJoCo stores floats
  // the drawn colour: MuJoCo's renderer takes the material's rgba when the geom's own is the default
  for (int g = 0; g < m->ngeom; g++) {
    const float* own = m->geom_rgba + 4 * g;
    int dflt = own[0] == 0.5f && own[1] == 0.5f && own[2] == 0.5f && own[3] == 1.0f, mat = m->geom_matid[g];
    for (int k = 0; k < 4; k++) rgba[4 * g + k] = mat >= 0 && dflt ? m->mat_rgba[4 * mat + k] : own[k];
  }
  cmp_field_tol(name, "geom_visrgba", p->geom_visrgba, rgba, m->ngeom, 4, 1, 6e-8);
  free(rgba);
}

// actuator dynamics and limits (issue 15 item 2): na, dyntype, dynprm[0..2], force and activation ranges where
// limited
static void cmp_actuator_dynamics(const char* name, const physModel* p, const mjModel* m) {
  CHECK_MSG(p->na == m->na, "%s: na physid %d mujoco %d", name, p->na, m->na);
  cmp_int(name, "actuator_dyntype", p->actuator_dyntype, m->actuator_dyntype, m->nu);
  cmp_byte(name, "actuator_forcelimited", p->actuator_forcelimited, m->actuator_forcelimited, m->nu);
  cmp_byte(name, "actuator_actlimited", p->actuator_actlimited, m->actuator_actlimited, m->nu);
  double* dm = calloc(3 * m->nu + 1, sizeof(double));
  double* rp = calloc(4 * m->nu + 1, sizeof(double));
  double* rm = calloc(4 * m->nu + 1, sizeof(double));
  for (int i = 0; i < m->nu; i++) {
    for (int k = 0; k < 3; k++) dm[3 * i + k] = m->actuator_dynprm[mjNDYN * i + k];
    for (int k = 0; k < 2 && m->actuator_forcelimited[i]; k++) {
      rp[4 * i + k] = p->actuator_forcerange[2 * i + k];
      rm[4 * i + k] = m->actuator_forcerange[2 * i + k];
    }
    for (int k = 0; k < 2 && m->actuator_actlimited[i]; k++) {
      rp[4 * i + 2 + k] = p->actuator_actrange[2 * i + k];
      rm[4 * i + 2 + k] = m->actuator_actrange[2 * i + k];
    }
  }
  cmp_field(name, "actuator_dynprm", p->actuator_dynprm, dm, m->nu, 3, 1e-300);
  cmp_field(name, "actuator_forcerange, actrange (limited)", rp, rm, m->nu, 4, 1);
  free(dm);
  free(rp);
  free(rm);
}

// actuators: transmission, gear, control range where limited, gain and bias; dynamics and limits
static void cmp_actuators(const char* name, const physModel* p, const mjModel* m) {
  int* trn = malloc(sizeof(int) * (m->nu + 1));
  for (int i = 0; i < m->nu; i++)
    trn[i] = p->actuator_trntype[i] == PHYS_TRN_JOINT  ? mjTRN_JOINT
             : p->actuator_trntype[i] == PHYS_TRN_SITE ? mjTRN_SITE
                                                       : mjTRN_TENDON;
  cmp_int(name, "actuator_trntype", trn, m->actuator_trntype, m->nu);
  free(trn);
  int* trnid = malloc(sizeof(int) * (m->nu + 1));
  for (int i = 0; i < m->nu; i++) trnid[i] = m->actuator_trnid[2 * i];   // MuJoCo: nu x 2
  cmp_int(name, "actuator_trnid", p->actuator_trnid, trnid, m->nu);
  free(trnid);
  cmp_byte(name, "actuator_ctrllimited", p->actuator_ctrllimited, m->actuator_ctrllimited, m->nu);
  cmp_field(name, "actuator_gear", p->actuator_gear, m->actuator_gear, m->nu, 6, 1e-300);
  double* rp = calloc(2 * m->nu + 1, sizeof(double));
  double* rm = calloc(2 * m->nu + 1, sizeof(double));
  for (int i = 0; i < m->nu; i++) {
    if (!m->actuator_ctrllimited[i]) continue;
    rp[2 * i] = p->actuator_ctrlrange[2 * i];
    rp[2 * i + 1] = p->actuator_ctrlrange[2 * i + 1];
    rm[2 * i] = m->actuator_ctrlrange[2 * i];
    rm[2 * i + 1] = m->actuator_ctrlrange[2 * i + 1];
  }
  cmp_field(name, "actuator_ctrlrange (limited)", rp, rm, m->nu, 2, 1);
  // gain and bias as they act: gainprm[1..2] only with gaintype affine, biasprm only with biastype affine
  double* gm = calloc(3 * m->nu + 1, sizeof(double));
  double* bm = calloc(3 * m->nu + 1, sizeof(double));
  for (int i = 0; i < m->nu; i++)
    for (int k = 0; k < 3; k++) {
      gm[3 * i + k] = k == 0 || m->actuator_gaintype[i] == mjGAIN_AFFINE ? m->actuator_gainprm[mjNGAIN * i + k] : 0;
      bm[3 * i + k] = m->actuator_biastype[i] == mjBIAS_AFFINE ? m->actuator_biasprm[mjNBIAS * i + k] : 0;
    }
  cmp_field(name, "actuator_gainprm", p->actuator_gainprm, gm, m->nu, 3, 1e-300);
  cmp_field(name, "actuator_biasprm", p->actuator_biasprm, bm, m->nu, 3, 1e-300);
  free(gm);
  free(bm);
  free(rp);
  free(rm);
  cmp_actuator_dynamics(name, p, m);
}

// springs (spatial tendons: sites, wrapped geoms with side sites, pulleys with divisors; fixed tendons: joints
// and coefficients) and keyframes
static void cmp_springs_keys(const char* name, const physModel* p, const mjModel* m, int no_keys) {
  CHECK_MSG(p->nspring == m->ntendon, "%s: nspring %d ntendon %d", name, p->nspring, m->ntendon);
  CHECK_MSG(p->nspringsite == m->nwrap, "%s: nspringsite %d nwrap %d", name, p->nspringsite, m->nwrap);
  if (p->nspring == m->ntendon && p->nspringsite == m->nwrap) {
    for (int i = 0; i < m->ntendon; i++) {
      CHECK(p->spring_adr[i] == m->tendon_adr[i] && p->spring_num[i] == m->tendon_num[i]);
      // physWrapType against mjtWrap: site, joint, pulley, sphere, cylinder
      static const int MJTYPE[5] = {mjWRAP_SITE, mjWRAP_JOINT, mjWRAP_PULLEY, mjWRAP_SPHERE, mjWRAP_CYLINDER};
      for (int k = m->tendon_adr[i]; k < m->tendon_adr[i] + m->tendon_num[i]; k++) {
        int fixed = m->wrap_type[k] == mjWRAP_JOINT, t = p->spring_objtype[k];
        CHECK_MSG(fixed == (p->spring_type[i] == PHYS_SPRING_FIXED), "%s: tendon %d type", name, i);
        CHECK_MSG(t >= 0 && t < 5 && MJTYPE[t] == m->wrap_type[k], "%s: tendon %d entry %d type", name, i, k);
        CHECK_MSG(p->spring_site[k] == m->wrap_objid[k], "%s: tendon %d object %d", name, i, k);
        CHECK_MSG(p->spring_prm[k] == m->wrap_prm[k], "%s: tendon %d prm %d: %g %g", name, i, k, p->spring_prm[k],
                  m->wrap_prm[k]);
      }
    }
    cmp_field(name, "spring_stiffness", p->spring_stiffness, m->tendon_stiffness, m->ntendon, 1, 1e-300);
    cmp_field(name, "spring_damping", p->spring_damping, m->tendon_damping, m->ntendon, 1, 1e-300);
    cmp_field(name, "spring_restlength", p->spring_restlength, m->tendon_lengthspring, m->ntendon, 1, 1e-300);
  }
  if (no_keys) return;
  CHECK_MSG(p->nkey == m->nkey, "%s: nkey %d %d", name, p->nkey, m->nkey);
  if (p->nkey == m->nkey) {
    cmp_field(name, "key_time", p->key_time, m->key_time, m->nkey, 1, 1);
    cmp_field(name, "key_qpos", p->key_qpos, m->key_qpos, m->nkey, m->nq, 1);
    cmp_field(name, "key_qvel", p->key_qvel, m->key_qvel, m->nkey, m->nv, 1);
    cmp_field(name, "key_ctrl", p->key_ctrl, m->key_ctrl, m->nkey, m->nu, 1);
    cmp_field(name, "key_act", p->key_act, m->key_act, m->nkey, m->na, 1);
  }
}

//---------------------------------------------------------------------------------------------------------
// models

static char tmpdir[256];

// gunzip src into the temp folder for MuJoCo; returns the new path (static buffer)
static const char* gunzip(const char* src) {
  static char out[512];
  const char* base = strrchr(src, '/') ? strrchr(src, '/') + 1 : src;
  snprintf(out, sizeof(out), "%s/%s", tmpdir, base);
  out[strlen(out) - 3] = 0;   // drop ".gz"
  gzFile in = gzopen(src, "rb");
  FILE* f = fopen(out, "wb");
  if (!in || !f) {
    if (in) gzclose(in);
    if (f) fclose(f);
    return NULL;
  }
  char buf[65536];
  int n;
  while ((n = gzread(in, buf, sizeof(buf))) > 0) fwrite(buf, 1, (size_t)n, f);
  gzclose(in);
  fclose(f);
  return out;
}

// load path in both engines and compare everything; sizes only if full == 0; no_keys: the model's
// <size nkey> makes MuJoCo allocate empty keyframes physid does not create (keys not compared)
static void compare_model(const char* path, int full, int no_keys) {
  const char* mjpath = path;
  size_t len = strlen(path);
  if (len > 3 && !strcmp(path + len - 3, ".gz")) mjpath = gunzip(path);
  char err[1000] = "";
  mjModel* m = mjpath ? mj_loadXML(mjpath, NULL, err, sizeof(err)) : NULL;
  CHECK_MSG(m != NULL, "%s: MuJoCo cannot load it: %s", path, err);
  physLog log = {0};
  physModel* p = phys_load_mjcf(path, &log);
  CHECK_MSG(p != NULL, "%s: physid cannot load it: %s", path, log.error);
  if (!m || !p) {
    if (m) mj_deleteModel(m);
    phys_free_model(p);
    return;
  }
  const char* name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
  int sizes[6][2] = {{p->nq, m->nq}, {p->nv, m->nv}, {p->nbody, m->nbody}, {p->njnt, m->njnt},
                     {p->ngeom, m->ngeom}, {p->nu, m->nu}};
  const char* sizename[6] = {"nq", "nv", "nbody", "njnt", "ngeom", "nu"};
  int same = 1;
  for (int i = 0; i < 6; i++) {
    CHECK_MSG(sizes[i][0] == sizes[i][1], "%s: %s physid %d mujoco %d", name, sizename[i], sizes[i][0],
              sizes[i][1]);
    same &= sizes[i][0] == sizes[i][1];
  }
  if (same && full) {
    CHECK_REL(p->opt.timestep, m->opt.timestep, TOL, 0);
    cmp_field(name, "opt.gravity", p->opt.gravity, m->opt.gravity, 1, 3, 1);
    cmp_bodies(name, p, m);
    cmp_joints(name, p, m);
    cmp_geoms(name, p, m);
    cmp_actuators(name, p, m);
    cmp_springs_keys(name, p, m, no_keys);
  }
  printf("%-28s nq %3d nv %3d nbody %3d ngeom %3d nu %3d  warnings %d%s\n", name, p->nq, p->nv, p->nbody,
         p->ngeom, p->nu, log.nwarning, log.nwarning ? ":" : "");
  for (int i = 0; i < log.nkind && i < 3; i++) printf("    %s (x%d)\n", log.warning[i], log.count[i]);
  phys_free_model(p);
  mj_deleteModel(m);
}

// thrower.xml body 1 (r_shoulder_pan_link): four light spheres and a capsule; its inertia tensor about the
// com computed here in long double from the geoms (sphere 2/5 m r^2; MuJoCo's capsule: cylinder plus
// hemispheres shifted to its ends) must match physid's R diag(I) R' to 1e-14
static void exact_thrower_body1(void) {
  typedef long double L;
  const L pi = 3.141592653589793238462643383279L;
  physLog log = {0};
  physModel* p = phys_load_mjcf("/usr/share/doc/dart/data/mjcf/openai/thrower.xml.gz", &log);
  CHECK_MSG(p != NULL, "thrower: %s", log.error);
  if (!p) return;
  const L sph[4][4] = {{-0.06L, 0.05L, 0.2L, 0.05L}, {0.06L, 0.05L, 0.2L, 0.05L},
                       {-0.06L, 0.09L, 0.2L, 0.03L}, {0.06L, 0.09L, 0.2L, 0.03L}};
  L m[5], pos[5][3], Ic[5][3], M = 0, c[3] = {0, 0, 0}, J[3][3] = {{0}};
  for (int i = 0; i < 4; i++) {   // spheres of density 1e-4
    L r = sph[i][3];
    m[i] = 0.0001L * 4.0L / 3.0L * pi * r * r * r;
    for (int k = 0; k < 3; k++) {
      pos[i][k] = sph[i][k];
      Ic[i][k] = 0.4L * m[i] * r * r;
    }
  }
  L r = 0.1L, H = 0.6L;   // capsule fromto 0 0 -0.4 -> 0 0 0.2, radius 0.1, density 1
  m[4] = pi * r * r * (4.0L / 3.0L * r + H);
  pos[4][0] = pos[4][1] = 0;
  pos[4][2] = -0.1L;
  L ms = m[4] * 4 * r / (4 * r + 3 * H), mc = m[4] - ms;
  Ic[4][0] = Ic[4][1] = mc * (3 * r * r + H * H) / 12 + 0.4L * ms * r * r + ms * H * (3 * r + 2 * H) / 8;
  Ic[4][2] = mc * r * r / 2 + 0.4L * ms * r * r;
  for (int i = 0; i < 5; i++) {
    M += m[i];
    for (int k = 0; k < 3; k++) c[k] += m[i] * pos[i][k];
  }
  for (int k = 0; k < 3; k++) c[k] /= M;
  for (int i = 0; i < 5; i++) {   // J = sum Ic_i + m_i (|d|^2 E - d d')
    L d[3] = {pos[i][0] - c[0], pos[i][1] - c[1], pos[i][2] - c[2]};
    L dd = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
    for (int a = 0; a < 3; a++) {
      for (int b = 0; b < 3; b++) J[a][b] += (a == b ? Ic[i][a] : 0) + m[i] * ((a == b ? dd : 0) - d[a] * d[b]);
    }
  }
  double T[9], Jd[9];
  inertia_tensor(T, p->body_iquat + 4, p->body_inertia + 3);
  for (int a = 0; a < 9; a++) Jd[a] = (double)J[a / 3][a % 3];
  int at;
  double err = rel_err(T, Jd, 9, 0, &at);
  CHECK_MSG(err <= 1e-14, "thrower body 1 tensor[%d]: physid %.17g exact %.17g (rel %.3g)", at, T[at], Jd[at], err);
  CHECK_REL(p->body_mass[1], (double)M, 1e-15, 0);
  double cd[3] = {(double)c[0], (double)c[1], (double)c[2]};
  CHECK(rel_err(p->body_ipos + 3, cd, 3, 0, &at) <= 1e-14);
  phys_free_model(p);
}

// models that MuJoCo refuses or accepts for duplicate names and for the mass and inertia of moving bodies:
// physid must agree on each, and its refusal must name the file and line 2 (where the offending element is)
static void refusals_agree(void) {
  static const char* const cases[] = {
      // duplicate names per kind (MuJoCo: "repeated name in <kind> array"); across kinds and unnamed: fine
      "<worldbody><body name='b'><freejoint/><geom size='1'/></body>\n<body name='b'><geom size='1'/></body></worldbody>",
      "<worldbody>\n<body name='world'><geom size='1'/></body></worldbody>",
      "<worldbody><body><joint name='j'/>\n<joint name='j' axis='1 0 0'/><geom size='1'/></body></worldbody>",
      "<worldbody><geom name='g' size='1'/>\n<geom name='g' size='1'/></worldbody>",
      "<worldbody><site name='s'/>\n<site name='s'/></worldbody>",
      "<worldbody><body><joint name='j'/><geom size='1'/></body></worldbody><actuator><motor name='a' joint='j'/>\n"
      "<motor name='a' joint='j'/></actuator>",
      "<worldbody><site name='s1'/><body><freejoint/><geom size='1'/><site name='s2'/></body></worldbody><tendon>"
      "<spatial name='t'><site site='s1'/><site site='s2'/></spatial>\n<spatial name='t'><site site='s1'/>"
      "<site site='s2'/></spatial></tendon>",
      "<worldbody/><keyframe><key name='k'/>\n<key name='k'/></keyframe>",
      "<worldbody><geom name='a' size='1'/><geom name='b' size='1'/></worldbody><contact><pair name='p' geom1='a' "
      "geom2='b'/>\n<pair name='p' geom1='a' geom2='b'/></contact>",
      "<worldbody><body name='x'><joint name='x'/><geom name='x' size='1'/><site name='x'/></body></worldbody>",
      "<worldbody><geom size='1'/><geom size='1'/><site/><site/></worldbody>",
      // moving bodies: mass and the three principal moments > mjMINVAL, on the body or a welded child
      "<worldbody>\n<body><freejoint/><inertial pos='0 0 0' mass='1' diaginertia='0 0 0'/></body></worldbody>",
      "<worldbody>\n<body><joint type='slide'/><inertial pos='0 0 0' mass='1' diaginertia='0 0 0'/></body></worldbody>",
      "<worldbody>\n<body><joint axis='0 1 0'/><inertial pos='1 0 0' mass='1' diaginertia='0 0 0'/></body></worldbody>",
      "<worldbody>\n<body><freejoint/><inertial pos='0 0 0' mass='0' diaginertia='1 1 1'/></body></worldbody>",
      "<worldbody>\n<body><freejoint/><inertial pos='0 0 0' mass='1' diaginertia='1e-16 1e-16 1e-16'/></body></worldbody>",
      "<worldbody>\n<body><freejoint/><inertial pos='0 0 0' mass='1' diaginertia='1e-14 1e-14 1e-14'/></body></worldbody>",
      "<worldbody>\n<body><freejoint/><inertial pos='0 0 0' mass='1' diaginertia='1 1 0'/></body></worldbody>",
      "<worldbody>\n<body><freejoint/><inertial pos='0 0 0' mass='1' diaginertia='0 0 0'/><body pos='1 0 0'>"
      "<inertial pos='0 0 0' mass='1' diaginertia='1 1 1'/></body></body></worldbody>",
      "<worldbody>\n<body><freejoint/><inertial pos='0 0 0' mass='1' diaginertia='0 0 0'/><body pos='1 0 0'>"
      "<inertial pos='0 0 0' mass='1' diaginertia='0 0 0'/></body></body></worldbody>",
      "<worldbody>\n<body><freejoint/><inertial pos='0 0 0' mass='0' diaginertia='0 0 0'/><body pos='1 0 0'>"
      "<inertial pos='0 0 0' mass='1' diaginertia='1 1 1'/></body></body></worldbody>",
      "<worldbody>\n<body><freejoint/><inertial pos='0 0 0' mass='1' diaginertia='0 0 0'/><body><inertial pos='0 0 0' "
      "mass='0' diaginertia='0 0 0'/><body><inertial pos='0 0 0' mass='1' diaginertia='1 1 1'/></body></body></body>"
      "</worldbody>",
      "<worldbody>\n<body><freejoint/><inertial pos='0 0 0' mass='1' diaginertia='0 0 0'/><body pos='1 0 0'><joint/>"
      "<inertial pos='0 0 0' mass='1' diaginertia='1 1 1'/></body></body></worldbody>",
      "<worldbody>\n<body><joint/><body><joint/><geom size='1'/></body></body></worldbody>",
      "<worldbody>\n<body><freejoint/><geom type='sphere' size='1e-6'/></body></worldbody>",
      "<worldbody><body><inertial pos='0 0 0' mass='1' diaginertia='0 0 0'/></body></worldbody>",
      // <damper>: kv >= 0 and ctrlrange >= 0 (MuJoCo: "damping coefficient cannot be negative", "damper control
      // range cannot be negative"); a damper with ctrlrange 0 1 and an intvelocity load
      "<worldbody><body><joint name='j'/><geom size='1'/></body></worldbody><actuator>\n<damper joint='j' kv='-1' "
      "ctrlrange='0 1'/></actuator>",
      "<worldbody><body><joint name='j'/><geom size='1'/></body></worldbody><actuator>\n<damper joint='j' kv='1' "
      "ctrlrange='-1 1'/></actuator>",
      "<worldbody><body><joint name='j'/><geom size='1'/></body></worldbody><actuator>\n<damper joint='j' kv='1' "
      "ctrlrange='0 1'/><intvelocity joint='j' kp='2' actrange='-1 1'/></actuator>",
      // ... its ctrlrange required on the element (a default's does not count), no ctrllimited attribute; an
      // intvelocity needs an actrange (actlimited implied: [0, 0] is invalid) and has no actlimited or kv
      "<default><damper ctrlrange='0 1'/></default><worldbody><body><joint name='j'/><geom size='1'/></body>"
      "</worldbody><actuator>\n<damper joint='j' kv='1'/></actuator>",
      "<worldbody><body><joint name='j'/><geom size='1'/></body></worldbody><actuator>\n<damper joint='j' kv='1' "
      "ctrlrange='0 1' ctrllimited='false'/></actuator>",
      "<worldbody><body><joint name='j'/><geom size='1'/></body></worldbody><actuator>\n<intvelocity joint='j' "
      "kp='2'/></actuator>",
      "<worldbody><body><joint name='j'/><geom size='1'/></body></worldbody><actuator>\n<intvelocity joint='j' "
      "kp='2' actrange='-1 1' actlimited='false'/></actuator>",
      "<worldbody><body><joint name='j'/><geom size='1'/></body></worldbody><actuator>\n<intvelocity joint='j' "
      "kp='2' actrange='-1 1' kv='1'/></actuator>",
      // empty ranges: MuJoCo refuses lower == upper ("invalid control/force/activation range")
      "<worldbody><body><joint name='j'/><geom size='1'/></body></worldbody><actuator>\n<general joint='j' "
      "ctrllimited='true' ctrlrange='0 0'/></actuator>",
      "<worldbody><body><joint name='j'/><geom size='1'/></body></worldbody><actuator>\n<general joint='j' "
      "forcelimited='true' forcerange='1 1'/></actuator>",
      "<worldbody><body><joint name='j'/><geom size='1'/></body></worldbody><actuator>\n<general joint='j' "
      "dyntype='integrator' actlimited='true' actrange='0 0'/></actuator>",
  };
  char path[600];
  snprintf(path, sizeof(path), "%s/refuse.xml", tmpdir);
  int nrefused = 0;
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    FILE* f = fopen(path, "w");
    fprintf(f, "<mujoco>%s</mujoco>\n", cases[i]);
    fclose(f);
    char err[1000] = "";
    mjModel* mm = mj_loadXML(path, NULL, err, sizeof(err));
    physLog log = {0};
    physModel* pm = phys_load_mjcf(path, &log);
    CHECK_MSG((mm != NULL) == (pm != NULL), "case %zu: mujoco %s (%s), physid %s (%s)", i,
              mm ? "loads" : "refuses", err, pm ? "loads" : "refuses", log.error);
    if (!mm && !pm) {
      nrefused++;
      CHECK_MSG(strstr(log.error, "refuse.xml:2: "), "case %zu: %s", i, log.error);
    }
    if (mm) mj_deleteModel(mm);
    phys_free_model(pm);
  }
  CHECK_MSG(nrefused == 30, "%d refused", nrefused);
}

int main(void) {
  snprintf(tmpdir, sizeof(tmpdir), "/tmp/physid_oracle_mjcf_XXXXXX");
  if (!mkdtemp(tmpdir)) {
    perror("mkdtemp");
    return 1;
  }
  static const char* const FULL[] = {
      "/usr/share/mujoco/model/humanoid/humanoid.xml",
      "/usr/share/mujoco/model/humanoid/22_humanoids.xml",
      "/usr/share/mujoco/model/humanoid100/humanoid100.xml",   // <include>, 100 free bodies
      "/usr/share/mujoco/model/hammock/humanoid_body.xml",
      "/usr/share/doc/dart/data/mjcf/openai/half_cheetah.xml.gz",
      "/usr/share/doc/dart/data/mjcf/openai/ant.xml.gz",
      "/usr/share/doc/dart/data/mjcf/openai/humanoid.xml.gz",   // fixed tendons (limits warned); <size nkey='5'>
      "/usr/share/doc/dart/data/mjcf/openai/pusher.xml.gz",
      "/usr/share/doc/dart/data/mjcf/openai/striker.xml.gz",
      "/usr/share/doc/dart/data/mjcf/openai/thrower.xml.gz",
      "/usr/share/doc/dart/data/mjcf/openai/inverted_double_pendulum.xml",
      "/usr/share/doc/dart/data/mjcf/openai/point.xml",
      "/usr/share/doc/dart/data/mjcf/openai/reacher.xml",
      "/usr/share/doc/dart/data/mjcf/openai/swimmer.xml",
      "models/arm7.xml",
      "tests/data/box.xml",
      "tests/data/pendulum.xml",
      "tests/data/double_pendulum.xml",
      "tests/data/chain3.xml",
      "tests/data/freebody.xml",
      "tests/data/mixed.xml",
      "tests/data/springmass.xml",
      "tests/data/actuators.xml",
      "tests/data/actuator_defaults.xml",
      "tests/data/tendons_fixed.xml",
      "tests/data/tendons_wrap.xml",
      "tests/data/actuator_dynamics.xml",
      "tests/data/actuator_site.xml",
      "tests/data/actuator_damper.xml",
      "models/superball.xml",
      "models/superball_fixed.xml",
  };
  for (size_t i = 0; i < sizeof(FULL) / sizeof(FULL[0]); i++) compare_model(FULL[i], 1, strstr(FULL[i], "humanoid.xml.gz") != NULL);

  // a spring path through three sites on rotated bodies without springlength: MuJoCo's rest length is the
  // path length at qpos0; keyframes with missing vectors (MuJoCo fills qpos0 and zeros)
  char model[600];
  snprintf(model, sizeof(model), "%s/springs.xml", tmpdir);
  FILE* f = fopen(model, "w");
  fputs("<mujoco>\n<worldbody>\n<site name='a' pos='0.1 0.2 2'/>\n"
        "<body pos='0 0 1' euler='10 20 30'><joint axis='1 1 0' ref='15' springref='40' pos='0.1 0 0'/><geom size='.1'/>\n"
        "  <site name='b' pos='0.3 0 0'/>\n"
        "  <body pos='0.5 0 0' axisangle='0 1 0 40'><joint type='slide' axis='0 1 1' ref='0.2' springref='-0.1'/><geom size='.1'/>\n"
        "    <site name='c' pos='0 0.2 0.1'/></body></body>\n</worldbody>\n"
        "<tendon><spatial name='t1' stiffness='3' damping='.5'><site site='a'/><site site='b'/><site site='c'/></spatial>\n"
        "<spatial stiffness='4' springlength='.7'><site site='a'/><site site='c'/></spatial></tendon>\n"
        "<actuator><motor tendon='t1' gear='2'/></actuator>\n"
        "<keyframe><key time='0.5' qvel='1 2'/><key qpos='0.3 0.4' ctrl='1'/></keyframe>\n</mujoco>\n", f);
  fclose(f);
  compare_model(model, 1, 0);
  exact_thrower_body1();
  refusals_agree();
  char cmd[300];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmpdir);
  return test_done();
}
