// make_tosses.c - simulated tosses for paper 004's simulated scenarios, made by MuJoCo 2.2.2 (the independent
// simulator: the model identified by physid never sees how they were made):
//   - the vortex: a force field pulling towards and swirling around the vertical line (x, y) = (cx, cy), applied
//     at the centre of mass of the model's first body through xfrc_applied at every step:
//       F = m (-a r + b e_z x r),  r = (x - cx, y - cy, 0)     (a pull, b swirl, both in 1/s^2);
//   - gravity mismatch: the tosses made with gravity g (the model file's own gravity replaced), later identified
//     with models that assume another g.
// Every toss starts from a random state (seeded; the same seed gives the same files): position in a box above
// the floor, a random orientation, velocity and angular velocity as the real cube tosses (about 1 m/s, 4 rad/s).
// Each file is one toss at the model's timestep, in the ContactNets column layout physid reads
// (t,px,py,pz,qw,qx,qy,qz,vx,vy,vz,wx_body,wy_body,wz_body).
//
//   built as build/make_tosses when MuJoCo is present (PHYS_ORACLE), or
//   cc -O2 -o make_tosses examples/ccn/make_tosses.c -lmujoco -lm
// Checked by tests/tools/test_oracle_make_tosses.c (the recorded accelerations are the field's, to rounding).
//   make_tosses MODEL.xml OUTDIR N SAMPLES [a b cx cy] [--gravity G] [--seed S]
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <mujoco/mujoco.h>

// uniform in [lo, hi) from a 64-bit xorshift state
static double uniform(unsigned long long* s, double lo, double hi) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return lo + (hi - lo) * (double)(*s >> 11) / 9007199254740992.0;
}

// a random state of the free body: position, unit quaternion (normalized 4 normals by Box-Muller), velocities
static void random_state(const mjModel* m, mjData* d, unsigned long long* s) {
  double* q = d->qpos;
  q[0] = uniform(s, 0.1, 0.3), q[1] = uniform(s, 0.1, 0.3), q[2] = uniform(s, 0.1, 0.2);
  double n = 0;
  for (int k = 0; k < 4; k++) {
    double u1 = uniform(s, 1e-12, 1), u2 = uniform(s, 0, 1);
    q[3 + k] = sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
    n += q[3 + k] * q[3 + k];
  }
  for (int k = 0; k < 4; k++) q[3 + k] /= sqrt(n);
  for (int k = 0; k < 3; k++) d->qvel[k] = uniform(s, -1, 1);
  d->qvel[2] = uniform(s, -1, 0.5);
  for (int k = 3; k < 6; k++) d->qvel[k] = uniform(s, -5, 5);
  (void)m;
}

int main(int argc, char** argv) {
  double a = 0, b = 0, cx = 0, cy = 0, g = NAN;
  unsigned long long seed = 14;
  int npos = 0;
  const char* pos[8];
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--gravity") == 0 && i + 1 < argc) g = atof(argv[++i]);
    else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) seed = strtoull(argv[++i], NULL, 10);
    else if (npos < 8) pos[npos++] = argv[i];
  }
  if (npos != 4 && npos != 8) {
    fprintf(stderr, "usage: make_tosses MODEL.xml OUTDIR N SAMPLES [a b cx cy] [--gravity G] [--seed S]\n");
    return 2;
  }
  int ntoss = atoi(pos[2]), nsamp = atoi(pos[3]);
  if (npos == 8) a = atof(pos[4]), b = atof(pos[5]), cx = atof(pos[6]), cy = atof(pos[7]);
  if (ntoss < 1 || nsamp < 2 || seed == 0) {
    fprintf(stderr, "make_tosses: N >= 1, SAMPLES >= 2 and a nonzero seed are needed\n");
    return 2;
  }
  char err[1000] = "";
  mjModel* m = mj_loadXML(pos[0], NULL, err, sizeof err);
  if (!m) {
    fprintf(stderr, "make_tosses: %s: %s\n", pos[0], err);
    return 1;
  }
  if (m->njnt < 1 || m->jnt_type[0] != mjJNT_FREE || m->nq != 7) {
    fprintf(stderr, "make_tosses: %s: the model must be one free body\n", pos[0]);
    return 1;
  }
  if (m->opt.integrator != mjINT_EULER) {   // mj_step1/mj_step2 (the force at this sample) are Euler's split
    fprintf(stderr, "make_tosses: %s: the model must use MuJoCo's Euler integrator\n", pos[0]);
    mj_deleteModel(m);
    return 1;
  }
  if (!isnan(g)) m->opt.gravity[0] = 0, m->opt.gravity[1] = 0, m->opt.gravity[2] = -g;
  mkdir(pos[1], 0755);
  mjData* d = mj_makeData(m);
  int body = m->jnt_bodyid[0];
  double mass = m->body_mass[body];
  unsigned long long s = seed * 0x9E3779B97F4A7C15ull;   // spread a small seed over the bits
  for (int t = 0; t < ntoss; t++) {
    char name[4096];
    snprintf(name, sizeof name, "%s/toss_%03d.csv", pos[1], t);
    FILE* f = fopen(name, "w");
    if (!f) {
      fprintf(stderr, "make_tosses: cannot write %s\n", name);
      return 1;
    }
    mj_resetData(m, d);
    random_state(m, d, &s);
    mj_forward(m, d);
    fprintf(f, "t,px,py,pz,qw,qx,qy,qz,vx,vy,vz,wx_body,wy_body,wz_body\n");
    for (int k = 0; k < nsamp; k++) {
      fprintf(f, "%.10g", d->time);
      for (int i = 0; i < 7; i++) fprintf(f, ",%.10g", d->qpos[i]);
      for (int i = 0; i < 6; i++) fprintf(f, ",%.10g", d->qvel[i]);
      fprintf(f, "\n");
      // the vortex force at the centre of mass of this sample, no torque: mj_step1 computes the kinematics
      // (xipos) at the current state, mj_step2 integrates with the force (MuJoCo's Euler). Until s30 the force
      // was read from xipos after mj_step, i.e. at the previous sample's position (a one-step lag).
      mj_step1(m, d);
      const double* c = d->xipos + 3 * body;
      double rx = c[0] - cx, ry = c[1] - cy;
      double* xf = d->xfrc_applied + 6 * body;
      xf[0] = mass * (-a * rx - b * ry);
      xf[1] = mass * (-a * ry + b * rx);
      xf[2] = 0;
      mj_step2(m, d);
    }
    fclose(f);
  }
  printf("make_tosses: %d tosses of %d samples (dt %.9g s) in %s: vortex a %g b %g around (%g, %g), gravity %g, "
         "seed %llu\n", ntoss, nsamp, m->opt.timestep, pos[1], a, b, cx, cy, -m->opt.gravity[2], seed);
  mj_deleteData(d);
  mj_deleteModel(m);
  return 0;
}
