// gen_superball.c - the SUPERball's ground-truth trajectories from MuJoCo 2.2.2 (issue 16 item 2, paper 002).
//
// gen_superball MODEL OUTDIR noncontact|contact [--amp A] [--seed S]
//
// Simulates MODEL (models/superball_fixed.xml for the non-contact set: rod r0 welded to the world, no floor;
// models/superball.xml for the contact set: six free rods rolling on the floor) with MuJoCo at its 1 ms
// timestep and writes the paper's sets: 10 training, 2 validation and 10 test trajectories of 5 s, each at
// 1 kHz (every step, 5001 rows) and at 10 Hz (every 100th step, 51 rows), as physid data files:
//   OUTDIR/{train,valid,test}/{1khz,10hz}/trajNN.csv, header t,q0..,v0..,u0..
// (qpos and qvel in MuJoCo's layout, which is physid's; u = the controls held from that row to the next,
// zero-order hold, so `physid identify` replays them). Controls: a new value for every cable every 0.1 s,
// uniform in [-A, A] (default A = 0.5: +-500 N, a rest-length shift of +-5 cm at gain 1000 and stiffness
// 10,000; the model's ctrlrange +-100 would shift a 0.95 m cable by 10 m). Initial state: the model's pose at
// rest (non-contact); the contact set turns the pose (lying on a cable triangle) by a random yaw and starts it
// tumbling about the floor point below its centre at 0 .. 3 rad/s about a random horizontal axis
// (start_rolling). Trajectory j of a set draws from seed S + 1000 k + j
// (k = 0, 1, 2 for train, valid, test). The activations (act) of a filter model start at 0 and are written
// after the controls (act0..: the state's, physid's data format).
#include <errno.h>
#include <math.h>
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "rng.h"

enum { STEPS = 5000, HOLD = 100 };
static const double WMAX = 3;   // the contact set's largest initial tumbling rate, rad/s

typedef struct {
  const char* name;
  int count;
} genSplit;

// mkdir -p for one path of at most two new levels under an existing folder; 0 on success
static int make_dir(const char* path) {
  if (mkdir(path, 0755) == 0 || errno == EEXIST) return 0;
  fprintf(stderr, "gen_superball: cannot create folder %s: %s\n", path, strerror(errno));
  return 1;
}

// writes the header t,q0..,v0..,u0..(,act0.. when the model has activations) of model m
static void write_header(FILE* f, const mjModel* m) {
  fprintf(f, "t");
  for (int i = 0; i < m->nq; i++) fprintf(f, ",q%d", i);
  for (int i = 0; i < m->nv; i++) fprintf(f, ",v%d", i);
  for (int i = 0; i < m->nu; i++) fprintf(f, ",u%d", i);
  for (int i = 0; i < m->na; i++) fprintf(f, ",act%d", i);
  fprintf(f, "\n");
}

// writes one row: the state of d (qpos, qvel, act) and the controls held from it
static void write_row(FILE* f, const mjModel* m, const mjData* d) {
  fprintf(f, "%.17g", d->time);
  for (int i = 0; i < m->nq; i++) fprintf(f, ",%.17g", d->qpos[i]);
  for (int i = 0; i < m->nv; i++) fprintf(f, ",%.17g", d->qvel[i]);
  for (int i = 0; i < m->nu; i++) fprintf(f, ",%.17g", d->ctrl[i]);
  for (int i = 0; i < m->na; i++) fprintf(f, ",%.17g", d->act[i]);
  fprintf(f, "\n");
}

// the contact set's start: every free rod's pose turned by a random yaw psi about the world z axis through
// the origin (the structure's centre lies on it), and the whole structure set tumbling as one rigid body about
// the floor point below its centre: angular velocity w (uniform 0 .. WMAX rad/s about a random horizontal axis),
// each rod's centre moving at w x (c - p0), its angular velocity w in its own frame (MuJoCo's free-joint qvel)
static void start_rolling(const mjModel* m, mjData* d, physRng* rng) {
  double psi = phys_rng_range(rng, -M_PI, M_PI), wmag = phys_rng_range(rng, 0, WMAX);
  double dir = phys_rng_range(rng, -M_PI, M_PI), c = cos(psi), s = sin(psi);
  double qz[4] = {cos(psi / 2), 0, 0, sin(psi / 2)}, w[3] = {wmag * cos(dir), wmag * sin(dir), 0};
  for (int j = 0; j < m->njnt; j++) {
    if (m->jnt_type[j] != mjJNT_FREE) continue;
    mjtNum* q = d->qpos + m->jnt_qposadr[j];
    mjtNum* v = d->qvel + m->jnt_dofadr[j];
    double x = q[0], y = q[1], quat[4], r[3], qneg[4];
    q[0] = c * x - s * y;
    q[1] = s * x + c * y;
    mju_mulQuat(quat, qz, q + 3);
    mju_copy(q + 3, quat, 4);
    mju_copy3(r, q);   // from the floor point below the centre (the origin's x, y) to the rod's centre
    mju_cross(v, w, r);
    mju_negQuat(qneg, quat);
    mju_rotVecQuat(v + 3, w, qneg);
  }
}

// simulates one 5 s trajectory with seed and writes it at 1 kHz to f1k and at 10 Hz to f10; 0 on success
static int run_one(const mjModel* m, mjData* d, int contact, double amp, uint64_t seed, FILE* f1k, FILE* f10) {
  physRng rng;
  phys_rng_seed(&rng, seed);
  mj_resetData(m, d);
  if (contact) start_rolling(m, d, &rng);
  write_header(f1k, m);
  write_header(f10, m);
  for (int k = 0; k <= STEPS; k++) {
    if (k % HOLD == 0)
      for (int i = 0; i < m->nu; i++) d->ctrl[i] = k < STEPS ? phys_rng_range(&rng, -amp, amp) : d->ctrl[i];
    write_row(f1k, m, d);
    if (k % HOLD == 0) write_row(f10, m, d);
    if (k == STEPS) break;
    mj_step(m, d);
    for (int i = 0; i < m->nq; i++)
      if (!isfinite(d->qpos[i])) {
        fprintf(stderr, "gen_superball: the state became non-finite at step %d (seed %llu)\n", k + 1,
                (unsigned long long)seed);
        return 1;
      }
  }
  for (int w = 0; w < mjNWARNING; w++)
    if (d->warning[w].number)
      fprintf(stderr, "gen_superball: seed %llu: MuJoCo warning %d raised %d times\n", (unsigned long long)seed, w,
              d->warning[w].number);
  return 0;
}

// opens OUTDIR/split/rate/trajNN.csv for writing
static FILE* open_out(const char* out, const char* split, const char* rate, int j) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", out, split);
  if (make_dir(path)) return NULL;
  snprintf(path, sizeof path, "%s/%s/%s", out, split, rate);
  if (make_dir(path)) return NULL;
  snprintf(path, sizeof path, "%s/%s/%s/traj%02d.csv", out, split, rate, j);
  FILE* f = fopen(path, "w");
  if (!f) fprintf(stderr, "gen_superball: cannot write %s: %s\n", path, strerror(errno));
  return f;
}

int main(int argc, char** argv) {
  if (argc < 4 || (strcmp(argv[3], "noncontact") && strcmp(argv[3], "contact"))) {
    fprintf(stderr, "usage: gen_superball MODEL OUTDIR noncontact|contact [--amp A] [--seed S]\n");
    return 2;
  }
  double amp = 0.5;
  unsigned long long seed0 = 1;
  for (int a = 4; a < argc; a += 2) {
    if (a + 1 >= argc) {
      fprintf(stderr, "gen_superball: option %s needs a value\n", argv[a]);
      return 2;
    }
    char* end = NULL;
    if (!strcmp(argv[a], "--amp")) amp = strtod(argv[a + 1], &end);
    else if (!strcmp(argv[a], "--seed")) seed0 = strtoull(argv[a + 1], &end, 10);
    else {
      fprintf(stderr, "gen_superball: unknown option %s\n", argv[a]);
      return 2;
    }
    if (*end || end == argv[a + 1] || !(amp > 0 && amp <= 100)) {
      fprintf(stderr, "gen_superball: %s '%s': expected %s\n", argv[a], argv[a + 1],
              strcmp(argv[a], "--amp") ? "a whole number" : "a number in (0, 100]");
      return 2;
    }
  }
  char err[1000] = "";
  mjModel* m = mj_loadXML(argv[1], NULL, err, sizeof err);
  if (!m) {
    fprintf(stderr, "gen_superball: %s: %s\n", argv[1], err);
    return 1;
  }
  mjData* d = mj_makeData(m);
  if (make_dir(argv[2])) return 1;
  const genSplit splits[3] = {{"train", 10}, {"valid", 2}, {"test", 10}};
  int contact = !strcmp(argv[3], "contact"), rc = 0;
  for (int k = 0; k < 3 && !rc; k++)
    for (int j = 0; j < splits[k].count && !rc; j++) {
      FILE* f1k = open_out(argv[2], splits[k].name, "1khz", j);
      FILE* f10 = open_out(argv[2], splits[k].name, "10hz", j);
      rc = !f1k || !f10 || run_one(m, d, contact, amp, seed0 + 1000 * (uint64_t)k + (uint64_t)j, f1k, f10);
      if (f1k && fclose(f1k)) rc = 1;
      if (f10 && fclose(f10)) rc = 1;
    }
  mj_deleteData(d);
  mj_deleteModel(m);
  return rc;
}
