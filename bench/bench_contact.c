// bench_contact.c - microseconds per step with contact: physid with each contact model (lcp, cone, ccp,
// penalty) side by side with MuJoCo 2.2.2's mj_step, on the scenes of issue 3:
//   box_rest     tests/data/box.xml (1 kg cube on a plane, mu 0.8, dt 2 ms), settled 500 steps
//   box_slide    the same, settled, then vx = 1 m/s and 10 steps of sliding (both engines), so that the
//                warm starts (physid's contact states, MuJoCo's qacc_warmstart) are those of steady sliding;
//                for ccp the box starts at the height dt*mu*vx of its gliding state (an impulsive push
//                launches a box under Anitescu's relaxation: tests/contact/test_scene_slide.c)
//   half_cheetah /usr/share/doc/dart/data/mjcf/openai/half_cheetah.xml.gz (dt 10 ms), settled 200 steps
//   humanoid     /usr/share/mujoco/model/humanoid/humanoid.xml lying on the floor (settled 1000 steps)
//   (humanoid and half cheetah: both engines are measured in MuJoCo's settled pose: physid takes MuJoCo's
//   state 5 steps before the end of its settling and steps from there, building its warm start)
//   atlas        Atlas v3 (dart-doc atlas_v3_no_head.urdf, floating) on ground.urdf, Nimble's set-up:
//                gravity -y, root rotated -pi/2 about x, dt 1 ms; physid builds it with the spec API
//                (both URDFs parsed, phys_spec_attach), MuJoCo from its URDF import plus a free root and
//                the ground box; 10 steps into the fall so that it moves and touches
// Each engine settles its own copy of the scene; the state after settling (time, qpos, qvel, ctrl, and the
// warm starts: physid's contact lists, MuJoCo's qacc_warmstart) is restored before each sample, so every
// sample is the same step. Medians over samples; rounds interleave the engines against machine drift.
//
// usage: bench_contact [--root DIR] [--samples N] [--rounds R] [--only ENGINE] [--scene NAME]...
//   DIR: the source tree (for tests/data/box.xml; default "." or $PHYS_SOURCE); ENGINE: lcp, cone, ccp,
//   penalty or mujoco. Prints one line per scene and engine:
//   RESULT<TAB>scene<TAB>engine<TAB>nv=..<TAB>ncon=..<TAB>median_us=..<TAB>min_us=..
// Instructions: run under valgrind --tool=callgrind --toggle-collect='measured_*' with --only and one
// --scene, and divide the total by the samples (scripts/bench_contact.sh does). Timing is information,
// never a pass/fail test.
#include <math.h>
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "physid.h"
#include "spec.h"
#include "urdf.h"

#define ATLAS_DIR "/usr/share/doc/dart/data/sdf/atlas/"
#define CHEETAH "/usr/share/doc/dart/data/mjcf/openai/half_cheetah.xml.gz"
#define HUMANOID "/usr/share/mujoco/model/humanoid/humanoid.xml"

enum { SC_BOX_REST = 0, SC_BOX_SLIDE, SC_CHEETAH, SC_HUMANOID, SC_ATLAS, NSCENE };
static const char* g_scene[NSCENE] = {"box_rest", "box_slide", "half_cheetah", "humanoid", "atlas"};
#define SLIDE_STEPS 10   // steps of sliding before the box_slide state is saved
#define SHARED_STEPS 5   // humanoid, half cheetah: physid takes MuJoCo's settled state this many steps early
static const int g_settle[NSCENE] = {500, 500, 200, 1000, 10};

enum { ENG_LCP = 0, ENG_CONE, ENG_CCP, ENG_PENALTY, ENG_MUJOCO, NENGINE };
static const char* g_engine[NENGINE] = {"lcp", "cone", "ccp", "penalty", "mujoco"};

// one engine on one scene, with its saved state
typedef struct benchRun_ {
  physModel* pm;
  physData* pd;
  mjModel* mm;
  mjData* md;
  double time, *qpos, *qvel, *ctrl, *warm;   // saved state (warm: MuJoCo's qacc_warmstart)
  physContact *con, *con_prev;               // physid's contact lists (warm start of lcp)
  int ncon, ncon_prev;
  int nv, contacts;                          // size, contacts in the measured step
  double* sample;
  int nsample;
} benchRun;

//---------------------------------------------------------------------------------------------------------
// measured calls (noinline: callgrind --toggle-collect targets)

__attribute__((noinline)) void measured_phys_step(const physModel* m, physData* d) { phys_step(m, d); }

__attribute__((noinline)) void measured_mj_step(const mjModel* m, mjData* d) { mj_step(m, d); }

// monotonic clock in microseconds
static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec * 1e-3;
}

// ascending order of doubles for qsort
static int cmp_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

// a copy of n doubles (n may be 0)
static double* copy_doubles(const double* x, int n) {
  double* y = malloc(sizeof(double) * (size_t)(n + 1));
  if (n) memcpy(y, x, sizeof(double) * (size_t)n);
  return y;
}

//---------------------------------------------------------------------------------------------------------
// files MuJoCo 2.2.2 cannot read directly

// gunzip `gz` into a new temporary .xml file (mkstemps; the model has no relative file references); 0 on failure
static int gunzip_tmp(char* out, size_t nout, const char* gz) {
  snprintf(out, nout, "/tmp/bench_contact_XXXXXX.xml");
  int fd = mkstemps(out, 4);
  gzFile in = gzopen(gz, "rb");
  if (fd < 0 || !in) {
    if (fd >= 0) close(fd);
    if (in) gzclose(in);
    return 0;
  }
  char buf[65536];
  int n, ok = 1;
  while ((n = gzread(in, buf, sizeof buf)) > 0) ok &= write(fd, buf, (size_t)n) == n;
  gzclose(in);
  close(fd);
  return ok && n == 0;
}

// MuJoCo's Atlas on the ground: its URDF import fuses the fixed root (pelvis) into the world, so the saved
// MJCF's world content is wrapped in a floating pelvis body (the URDF's pelvis inertial, rotated -pi/2
// about x), with the ground.urdf box, Nimble's gravity and dt; NULL on failure
static mjModel* mj_atlas(void) {
  char err[1000] = "", tmp[64] = "/tmp/bench_contact_XXXXXX.xml";
  mjModel* u = mj_loadXML(ATLAS_DIR "atlas_v3_no_head.urdf", NULL, err, sizeof err);
  int fd = mkstemps(tmp, 4);
  if (!u || fd < 0) {
    fprintf(stderr, "bench_contact: MuJoCo cannot load the Atlas URDF: %s\n", err);
    if (u) mj_deleteModel(u);
    return NULL;
  }
  close(fd);
  mj_saveLastXML(tmp, u, err, sizeof err);
  mj_deleteModel(u);
  FILE* f = fopen(tmp, "rb");
  static char xml[1 << 20], out[(1 << 20) + 4096];
  size_t n = f ? fread(xml, 1, sizeof xml - 1, f) : 0;
  if (f) fclose(f);
  xml[n] = 0;
  char *compiler = strstr(xml, "<compiler "), *wb = strstr(xml, "<worldbody>"), *we = strstr(xml, "</worldbody>");
  if (!compiler || !wb || !we) {
    remove(tmp);
    return NULL;
  }
  compiler += strlen("<compiler ");
  wb += strlen("<worldbody>");
  int k = snprintf(out, sizeof out, "%.*smeshdir=\"%s\" %.*s", (int)(compiler - xml), xml, ATLAS_DIR,
                   (int)(wb - compiler), compiler);
  k += snprintf(out + k, sizeof out - (size_t)k,
                "\n<geom name=\"ground\" type=\"box\" size=\"12.5 0.025 12.5\" pos=\"0 -0.95 0\"/>"
                "\n<body name=\"pelvis\" quat=\"0.70710678118654757 -0.70710678118654746 0 0\"><freejoint/>"
                "<inertial pos=\"0.0111 0 0.0271\" mass=\"17.882\" fullinertia=\"0.1244 0.0958 0.1167 0.0008 "
                "-0.0007 -0.0005\"/>%.*s</body>%s", (int)(we - wb), wb, we);
  char* opt = strstr(out, "<size ");
  f = fopen(tmp, "wb");
  if (!f || !opt) {
    if (f) fclose(f);
    remove(tmp);
    return NULL;
  }
  fwrite(out, 1, (size_t)(opt - out), f);
  fprintf(f, "<option timestep=\"0.001\" gravity=\"0 -9.81 0\"/>\n  ");
  fputs(opt, f);
  fclose(f);
  mjModel* m = mj_loadXML(tmp, NULL, err, sizeof err);
  if (!m) fprintf(stderr, "bench_contact: MuJoCo Atlas: %s\n", err);
  remove(tmp);
  return m;
}

// physid's Atlas on the ground through the spec API: both URDFs parsed, the ground attached to the world,
// Nimble's gravity and dt; the root's rotation is set in qpos by the caller. NULL on failure
static physModel* phys_atlas(void) {
  physLog log;
  memset(&log, 0, sizeof log);
  physLoadOptions opt = {.urdf_floating = 1, .strict_mesh = 0};
  physSpec* atlas = phys_parse_urdf(ATLAS_DIR "atlas_v3_no_head.urdf", &opt, &log);
  physSpec* ground = phys_parse_urdf(ATLAS_DIR "ground.urdf", NULL, &log);
  physModel* m = NULL;
  if (atlas && ground && phys_spec_attach(atlas, ground, 0) == PHYS_OK) {
    atlas->opt.timestep = 0.001;
    atlas->opt.gravity[0] = atlas->opt.gravity[2] = 0;
    atlas->opt.gravity[1] = -9.81;
    m = phys_compile(atlas, &log);
  }
  if (!m) fprintf(stderr, "bench_contact: physid Atlas: %s\n", log.error);
  phys_spec_free(atlas);
  phys_spec_free(ground);
  return m;
}

//---------------------------------------------------------------------------------------------------------
// set-up

// the scene's initial state in physid: keyframe 0 or qpos0; Atlas rotated -pi/2 about x
static void phys_initial(int scene, const physModel* m, physData* d) {
  if (m->nkey) phys_reset_keyframe(m, d, 0);
  else phys_reset_data(m, d);
  if (scene == SC_ATLAS) {
    d->qpos[3] = cos(-M_PI / 4);
    d->qpos[4] = sin(-M_PI / 4);
    d->qpos[5] = d->qpos[6] = 0;
  }
}

// MuJoCo's state after `steps` steps of settling scene (MJCF scenes: the same qpos/qvel layout as physid's)
// copied into d; 0 if MuJoCo cannot load it
static int mj_settled(int scene, const char* root, int steps, physData* d) {
  char err[1000] = "", tmp[64] = "";
  (void)root;
  if (scene == SC_CHEETAH && !gunzip_tmp(tmp, sizeof tmp, CHEETAH)) return 0;
  mjModel* mm = mj_loadXML(scene == SC_CHEETAH ? tmp : HUMANOID, NULL, err, sizeof err);
  if (tmp[0]) remove(tmp);
  if (!mm) return 0;
  mjData* md = mj_makeData(mm);
  if (mm->nkey) mj_resetDataKeyframe(mm, md, 0);
  for (int i = 0; i < steps; i++) mj_step(mm, md);
  int ok = mm->nq == d->nq && mm->nv == d->nv;
  if (ok) {
    d->time = md->time;
    memcpy(d->qpos, md->qpos, sizeof(double) * (size_t)mm->nq);
    memcpy(d->qvel, md->qvel, sizeof(double) * (size_t)mm->nv);
  }
  mj_deleteData(md);
  mj_deleteModel(mm);
  return ok;
}

// load the scene into physid (contact model `model`) and settle; 0 on failure
static int setup_phys(benchRun* r, const char* root, int scene, int model) {
  physLog log;
  memset(&log, 0, sizeof log);
  char file[1024];
  if (scene == SC_BOX_REST || scene == SC_BOX_SLIDE) snprintf(file, sizeof file, "%s/tests/data/box.xml", root);
  else snprintf(file, sizeof file, "%s", scene == SC_CHEETAH ? CHEETAH : HUMANOID);
  r->pm = scene == SC_ATLAS ? phys_atlas() : phys_load(file, NULL, &log);
  if (!r->pm) {
    if (scene != SC_ATLAS) fprintf(stderr, "bench_contact: physid cannot load %s: %s\n", file, log.error);
    return 0;
  }
  r->pm->opt.contact = model;
  r->pd = phys_make_data(r->pm);
  physData* d = r->pd;
  phys_initial(scene, r->pm, d);
  if ((scene == SC_HUMANOID || scene == SC_CHEETAH) && mj_settled(scene, root, g_settle[scene] - SHARED_STEPS, d)) {
    // the same pose as MuJoCo's: start from MuJoCo's state SHARED_STEPS before the end of its settling
    for (int i = 0; i < SHARED_STEPS; i++) phys_step(r->pm, d);
  } else {
    for (int i = 0; i < g_settle[scene]; i++) phys_step(r->pm, d);
  }
  if (scene == SC_BOX_SLIDE) {
    d->qvel[0] = 1;
    if (model == PHYS_CONTACT_CCP) d->qpos[2] += r->pm->opt.timestep * 0.8 * d->qvel[0];  // box.xml: mu 0.8
    for (int i = 0; i < SLIDE_STEPS; i++) phys_step(r->pm, d);
  }
  r->nv = r->pm->nv;
  r->time = d->time;
  r->qpos = copy_doubles(d->qpos, r->pm->nq);
  r->qvel = copy_doubles(d->qvel, r->pm->nv);
  r->ctrl = copy_doubles(d->ctrl, r->pm->nu);
  size_t ncm = (size_t)r->pm->nconmax + 1;
  r->con = malloc(sizeof(physContact) * ncm);
  r->con_prev = malloc(sizeof(physContact) * ncm);
  memcpy(r->con, d->contact, sizeof(physContact) * (size_t)d->ncon);
  memcpy(r->con_prev, d->contact_prev, sizeof(physContact) * (size_t)d->ncon_prev);
  r->ncon = d->ncon;
  r->ncon_prev = d->ncon_prev;
  return 1;
}

// load the scene into MuJoCo and settle; 0 on failure
static int setup_mj(benchRun* r, const char* root, int scene) {
  char err[1000] = "", file[1024], tmp[64] = "";
  if (scene == SC_BOX_REST || scene == SC_BOX_SLIDE) snprintf(file, sizeof file, "%s/tests/data/box.xml", root);
  else if (scene == SC_HUMANOID) snprintf(file, sizeof file, "%s", HUMANOID);
  else if (scene == SC_CHEETAH) {
    if (!gunzip_tmp(tmp, sizeof tmp, CHEETAH)) return 0;
    snprintf(file, sizeof file, "%s", tmp);
  }
  r->mm = scene == SC_ATLAS ? mj_atlas() : mj_loadXML(file, NULL, err, sizeof err);
  if (tmp[0]) remove(tmp);
  if (!r->mm) {
    if (scene != SC_ATLAS) fprintf(stderr, "bench_contact: MuJoCo cannot load %s: %s\n", file, err);
    return 0;
  }
  r->md = mj_makeData(r->mm);
  if (r->mm->nkey) mj_resetDataKeyframe(r->mm, r->md, 0);
  for (int i = 0; i < g_settle[scene]; i++) mj_step(r->mm, r->md);
  if (scene == SC_BOX_SLIDE) {
    r->md->qvel[0] = 1;
    for (int i = 0; i < SLIDE_STEPS; i++) mj_step(r->mm, r->md);
  }
  r->nv = r->mm->nv;
  r->time = r->md->time;
  r->qpos = copy_doubles(r->md->qpos, r->mm->nq);
  r->qvel = copy_doubles(r->md->qvel, r->mm->nv);
  r->ctrl = copy_doubles(r->md->ctrl, r->mm->nu);
  r->warm = copy_doubles(r->md->qacc_warmstart, r->mm->nv);
  return 1;
}

// restore the saved state
static void state_load(benchRun* r) {
  if (r->pd) {
    physData* d = r->pd;
    d->time = r->time;
    memcpy(d->qpos, r->qpos, sizeof(double) * (size_t)r->pm->nq);
    memcpy(d->qvel, r->qvel, sizeof(double) * (size_t)r->pm->nv);
    memcpy(d->ctrl, r->ctrl, sizeof(double) * (size_t)r->pm->nu);
    memcpy(d->contact, r->con, sizeof(physContact) * (size_t)r->ncon);
    memcpy(d->contact_prev, r->con_prev, sizeof(physContact) * (size_t)r->ncon_prev);
    d->ncon = r->ncon;
    d->ncon_prev = r->ncon_prev;
  } else {
    r->md->time = r->time;
    mju_copy(r->md->qpos, r->qpos, r->mm->nq);
    mju_copy(r->md->qvel, r->qvel, r->mm->nv);
    mju_copy(r->md->ctrl, r->ctrl, r->mm->nu);
    mju_copy(r->md->qacc_warmstart, r->warm, r->mm->nv);
  }
}

// one timed sample; also records the contacts of the step
static double sample(benchRun* r) {
  state_load(r);
  double t = now_us();
  if (r->pd) measured_phys_step(r->pm, r->pd);
  else measured_mj_step(r->mm, r->md);
  t = now_us() - t;
  r->contacts = r->pd ? r->pd->ncon : r->md->ncon;
  return t;
}

// release a run
static void run_free(benchRun* r) {
  if (r->pd) phys_free_data(r->pd);
  if (r->pm) phys_free_model(r->pm);
  if (r->md) mj_deleteData(r->md);
  if (r->mm) mj_deleteModel(r->mm);
  free(r->qpos);
  free(r->qvel);
  free(r->ctrl);
  free(r->warm);
  free(r->con);
  free(r->con_prev);
  free(r->sample);
  memset(r, 0, sizeof *r);
}

//---------------------------------------------------------------------------------------------------------
// main

int main(int argc, char** argv) {
  const char* root = getenv("PHYS_SOURCE") ? getenv("PHYS_SOURCE") : ".";
  int samples = 1000, rounds = 3, only = -1, want[NSCENE] = {0}, nwant = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--root") && i + 1 < argc) root = argv[++i];
    else if (!strcmp(argv[i], "--samples") && i + 1 < argc) samples = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) rounds = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--only") && i + 1 < argc) {
      const char* e = argv[++i];
      for (int k = 0; k < NENGINE; k++)
        if (!strcmp(e, g_engine[k])) only = k;
      if (only < 0) return fprintf(stderr, "bench_contact: unknown engine '%s'\n", e), 2;
    } else if (!strcmp(argv[i], "--scene") && i + 1 < argc) {
      const char* s = argv[++i];
      int found = 0;
      for (int k = 0; k < NSCENE; k++)
        if (!strcmp(s, g_scene[k])) want[k] = found = 1;
      if (!found) return fprintf(stderr, "bench_contact: unknown scene '%s'\n", s), 2;
      nwant++;
    } else {
      fprintf(stderr, "usage: bench_contact [--root DIR] [--samples N] [--rounds R] [--only ENGINE] "
                      "[--scene box_rest|box_slide|half_cheetah|humanoid|atlas]...\n");
      return 2;
    }
  }
  if (samples < 1 || rounds < 1) return fprintf(stderr, "bench_contact: samples and rounds must be >= 1\n"), 2;
  for (int s = 0; s < NSCENE; s++) {
    if (nwant && !want[s]) continue;
    benchRun run[NENGINE];
    memset(run, 0, sizeof run);
    int ok[NENGINE] = {0};
    for (int e = 0; e < NENGINE; e++) {
      if (only >= 0 && e != only) continue;
      ok[e] = e == ENG_MUJOCO ? setup_mj(run + e, root, s) : setup_phys(run + e, root, s, e);
      if (ok[e]) run[e].sample = malloc(sizeof(double) * (size_t)(samples * rounds));
    }
    for (int k = 0; k < rounds; k++)
      for (int e = 0; e < NENGINE; e++)
        for (int i = 0; ok[e] && i < samples; i++) run[e].sample[run[e].nsample++] = sample(run + e);
    for (int e = 0; e < NENGINE; e++) {
      if (!ok[e]) {
        if (only < 0 || e == only) printf("RESULT\t%s\t%s\tnv=-\tncon=-\tmedian_us=-\tmin_us=-\n", g_scene[s], g_engine[e]);
        continue;
      }
      qsort(run[e].sample, (size_t)run[e].nsample, sizeof(double), cmp_double);
      int warn = run[e].pd ? run[e].pd->nwarning : run[e].md->warning[mjWARN_BADQACC].number;
      printf("RESULT\t%s\t%s\tnv=%d\tncon=%d\tmedian_us=%.3f\tmin_us=%.3f\twarnings=%d\n", g_scene[s], g_engine[e],
             run[e].nv, run[e].contacts, run[e].sample[run[e].nsample / 2], run[e].sample[0], warn);
      fflush(stdout);
      run_free(run + e);
    }
  }
  return 0;
}
