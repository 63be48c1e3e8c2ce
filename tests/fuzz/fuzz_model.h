// fuzz_model.h - the model loader harnesses (fuzz_mjcf.c, fuzz_urdf.c): the input is the model file, beside
// fixed files it may name (tet.stl, box.obj, inc.xml); a model that loads is also stepped once.
#ifndef PHYS_FUZZ_MODEL_H
#define PHYS_FUZZ_MODEL_H

#include "fuzz.h"

// a fixed text file `name` in the private folder (written once)
static void fuzz_fixture(const char* name, const char* text) {
  char path[4400];
  fuzz_write(path, sizeof path, name, text, strlen(text));
}

// an ASCII STL tetrahedron, an OBJ box of quads and an MJCF fragment for <include file="inc.xml"/>
static void fuzz_model_fixtures(void) {
  fuzz_fixture("tet.stl",
               "solid t\n"
               "facet normal 0 0 -1\nouter loop\nvertex 0 0 0\nvertex 0 1 0\nvertex 1 0 0\nendloop\nendfacet\n"
               "facet normal 0 -1 0\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nvertex 0 0 1\nendloop\nendfacet\n"
               "facet normal -1 0 0\nouter loop\nvertex 0 0 0\nvertex 0 0 1\nvertex 0 1 0\nendloop\nendfacet\n"
               "facet normal 1 1 1\nouter loop\nvertex 1 0 0\nvertex 0 1 0\nvertex 0 0 1\nendloop\nendfacet\n"
               "endsolid t\n");
  fuzz_fixture("box.obj",
               "v -1 -1 -1\nv 1 -1 -1\nv 1 1 -1\nv -1 1 -1\nv -1 -1 1\nv 1 -1 1\nv 1 1 1\nv -1 1 1\n"
               "f 1 4 3 2\nf 5 6 7 8\nf 1 2 6 5\nf 2 3 7 6\nf 3 4 8 7\nf 4 1 5 8\n");
  fuzz_fixture("inc.xml",
               "<mujoco><asset><mesh name=\"inc_tet\" file=\"tet.stl\"/></asset>\n"
               "<worldbody><body name=\"inc_body\" pos=\"0 0 1\"><freejoint/>"
               "<geom type=\"mesh\" mesh=\"inc_tet\"/></body></worldbody></mujoco>\n");
}

// load the bytes as the model file `name` (its extension picks the reader); step a model that loads once
static void fuzz_model_input(const char* name, const uint8_t* data, size_t size) {
  static int ready = 0;
  if (!ready) {
    fuzz_model_fixtures();
    ready = 1;
  }
  char path[4400];
  fuzz_write(path, sizeof path, name, data, size);
  physLog log;
  memset(&log, 0, sizeof log);
  physModel* m = phys_load(path, NULL, &log);
  fuzz_verbose("phys_load", m ? PHYS_OK : PHYS_ERR_MODEL, log.error);
  if (!m) return;
  physData* d = phys_make_data(m);
  if (d) {
    phys_reset_data(m, d);
    phys_step(m, d);
    phys_free_data(d);
  }
  phys_free_model(m);
}

#endif  // PHYS_FUZZ_MODEL_H
