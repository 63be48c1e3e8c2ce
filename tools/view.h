// view.h - the 3-D replay page of `physid view` (issue 20): one self-contained HTML file that draws a model's geoms
// with three.js (Debian's libjs-three, inlined) and plays trajectories, the first in the model's colours, the others
// as tinted ghosts with a legend. Reports embed it the same way (view_write_page into an open page).
#ifndef PHYS_VIEW_H
#define PHYS_VIEW_H

#include <stdio.h>

#include "physid.h"

// one trajectory to play: T samples of time and qpos (T x nq); qvel (T x nv), ctrl (T x nu) and qfrc (T x nv) may
// be NULL (contacts then from zero velocity / inputs)
typedef struct viewTrajectory_ {
  const char* label;        // legend text ("observed: toss_0001.csv")
  int T;
  const double* time;
  const double* qpos;
  const double* qvel;
  const double* ctrl;
  const double* qfrc;
  const char* group;        // NULL: one scene with every trajectory; else consecutive trajectories of the same group
                            // text form one scene, and the page has a selector of the groups (identify --replay of
                            // several trajectories: observed and rolled out per toss)
} viewTrajectory;

typedef struct viewOptions_ {
  double fps;               // frames per second kept in the page (default 60: at most one sample per 1/fps s)
  int contacts;             // 1: contact points and force arrows per frame (one step of the model from each frame)
  const char* title;        // page title (NULL: the model's name)
  const char* three_dir;    // folder of three.min.js and examples/js/controls/OrbitControls.js (NULL: Debian's)
} viewOptions;

// Debian's libjs-three folder
#define VIEW_THREE_DIR "/usr/share/javascript/three"

// read three.js and its orbit controls from dir (NULL: VIEW_THREE_DIR) into *js (malloc'ed, NUL-terminated);
// 0 and a message naming the missing file (and the package) on failure
int view_read_three(char** js, const char* dir);
// the page's data (model geoms, frames of every trajectory) as one JavaScript statement `window.PHYSID_VIEW = {...};`
// written to f; m is stepped (contacts) on a scratch physData of its own. 0 and a message on failure (memory)
int view_write_data(FILE* f, const physModel* m, const viewTrajectory* tr, int ntraj, const viewOptions* opt);
// the player's markup, style and scripts (three.js in three_js, the data, the player): a <div> block to place in a
// page's <body>; the whole page is view_write_page
int view_write_player(FILE* f, const physModel* m, const viewTrajectory* tr, int ntraj, const viewOptions* opt,
                      const char* three_js);
// a whole self-contained HTML page holding the player
int view_write_page(FILE* f, const physModel* m, const viewTrajectory* tr, int ntraj, const viewOptions* opt,
                    const char* three_js);

#endif
