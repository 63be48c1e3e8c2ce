// view.c - the 3-D replay page (view.h). The page data, one JavaScript object PHYSID_VIEW:
//   geoms    [{body, type, size[3], pos[3], quat[4] (w x y z, in the body frame), rgba[4], mesh}] every geom
//   meshes   [{vert [3 n] in the geom frame, face [3 f]}] the model's meshes
//   bodies   the ids of the bodies drawn (those with geoms, the world apart: its geoms are static)
//   traj     [{label, group, time [F], pose [F x bodies x 7: x y z qw qx qy qz, world], contacts [F][6 c: point,
//            force]}]; group: the index into groups of the scene the trajectory belongs to
//   groups   [label] the scenes (one unnamed scene when no trajectory names a group); the player shows one at a time
//   contacts 1 if the frames carry contacts; center[3], radius: a sphere around all the motion (the first camera);
//   extent: half size of an infinite plane; forcescale: metres of arrow per newton (the model's weight, total mass
//   times |g|, half the radius; without gravity the largest force; the player clamps arrows at the radius)
// Frames are samples at least 1/fps apart (the first and last always kept); the player interpolates between them
// (positions linearly, orientations by slerp). Numbers are printed with 4 decimals for positions (0.1 mm) and 5 for
// quaternions and forces' directions, trailing zeros dropped: a 10 s humanoid trajectory at 60 frames per second
// is about 0.5 MB beside three.js's 0.9 MB.
// Deterministic: the same model and trajectories give the same bytes.
#include "view.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

// the player script (tools/view_page.js), embedded at build time by cmake/embed.cmake
#include "view_page_js.h"

//---------------------------------------------------------------------------------------------------------
// three.js

// append n bytes to the buffer *buf of length *len (kept NUL-terminated); 0 when out of memory
static int append_bytes(char** buf, size_t* len, const char* bytes, size_t n) {
  char* grown = realloc(*buf, *len + n + 1);
  if (!grown) return 0;
  memcpy(grown + *len, bytes, n);
  *buf = grown, *len += n, grown[*len] = 0;
  return 1;
}

// append file path's bytes to *buf; 0 and a message on failure
static int append_file(char** buf, size_t* len, const char* path) {
  FILE* f = fopen(path, "rb");
  if (!f) {
    cli_error("cannot read %s: install Debian's libjs-three (scripts/setup.sh) or give --three DIR", path);
    return 0;
  }
  char chunk[65536];
  size_t k;
  int ok = 1;
  while (ok && (k = fread(chunk, 1, sizeof chunk, f)) > 0) ok = append_bytes(buf, len, chunk, k);
  if (ferror(f)) ok = 0;
  fclose(f);
  if (!ok) cli_error("cannot read %s", path);
  return ok;
}

int view_read_three(char** js, const char* dir) {
  static const char* const file[2] = {"three.min.js", "examples/js/controls/OrbitControls.js"};
  char path[4096];
  size_t n = 0;
  int ok = 1;
  *js = NULL;
  for (int i = 0; i < 2 && ok; i++) {
    snprintf(path, sizeof path, "%s/%s", dir ? dir : VIEW_THREE_DIR, file[i]);
    ok = append_file(js, &n, path) && append_bytes(js, &n, "\n", 1);
  }
  // a script that closes the <script> element it sits in cannot be inlined
  if (ok && (strstr(*js, "</script") || strstr(*js, "</SCRIPT"))) {
    cli_error("%s: three.js holds '</script': cannot inline it in a page", dir ? dir : VIEW_THREE_DIR);
    ok = 0;
  }
  if (!ok) free(*js), *js = NULL;
  return ok;
}

//---------------------------------------------------------------------------------------------------------
// numbers and strings

// x with `decimals` decimals, trailing zeros (and a bare point) dropped, "-0" as "0"
static void put_num(FILE* f, double x, int decimals) {
  char s[64];
  snprintf(s, sizeof s, "%.*f", decimals, x);
  char* end = s + strlen(s);
  if (strchr(s, '.')) {
    while (end[-1] == '0') *--end = 0;
    if (end[-1] == '.') *--end = 0;
  }
  fputs(strcmp(s, "-0") == 0 ? "0" : s, f);
}

// n numbers separated by commas
static void put_nums(FILE* f, const double* x, int n, int decimals) {
  for (int i = 0; i < n; i++) {
    if (i) fputc(',', f);
    put_num(f, x[i], decimals);
  }
}

// s as a JavaScript string literal safe inside a <script> element: quotes, backslashes, control characters and
// < > & as \u escapes
static void put_js_string(FILE* f, const char* s) {
  fputc('"', f);
  for (const unsigned char* p = (const unsigned char*)(s ? s : ""); *p; p++) {
    if (*p < 0x20 || *p == '"' || *p == '\\' || *p == '<' || *p == '>' || *p == '&') fprintf(f, "\\u%04x", *p);
    else fputc(*p, f);
  }
  fputc('"', f);
}

// s as HTML text (< > & " escaped)
static void put_html_text(FILE* f, const char* s) {
  for (const char* p = s ? s : ""; *p; p++) {
    switch (*p) {
      case '<': fputs("&lt;", f); break;
      case '>': fputs("&gt;", f); break;
      case '&': fputs("&amp;", f); break;
      case '"': fputs("&quot;", f); break;
      default: fputc(*p, f);
    }
  }
}

//---------------------------------------------------------------------------------------------------------
// the model

static const char* const g_geom_type[PHYS_NGEOMTYPE] = {"plane", "sphere", "capsule", "ellipsoid", "cylinder",
                                                        "box", "mesh"};

// geoms: [{body, type, size, pos, quat, rgba, mesh}, ...]
static void put_geoms(FILE* f, const physModel* m) {
  fputs("geoms:[", f);
  for (int g = 0; g < m->ngeom; g++) {
    int type = m->geom_type[g];
    fprintf(f, "%s{body:%d,type:\"%s\",size:[", g ? "," : "", m->geom_bodyid[g],
            type >= 0 && type < PHYS_NGEOMTYPE ? g_geom_type[type] : "none");
    put_nums(f, m->geom_size + 3 * g, 3, 5);
    fputs("],pos:[", f);
    put_nums(f, m->geom_pos + 3 * g, 3, 5);
    fputs("],quat:[", f);
    put_nums(f, m->geom_quat + 4 * g, 4, 6);
    fputs("],rgba:[", f);
    put_nums(f, m->geom_visrgba + 4 * g, 4, 3);
    fprintf(f, "],mesh:%d}", type == PHYS_GEOM_MESH ? m->geom_dataid[g] : -1);
  }
  fputs("],\n", f);
}

// meshes: [{vert, face}, ...]
static void put_meshes(FILE* f, const physModel* m) {
  fputs("meshes:[", f);
  for (int k = 0; k < m->nmesh; k++) {
    fputs(k ? ",{vert:[" : "{vert:[", f);
    put_nums(f, m->mesh_vert + 3 * (size_t)m->mesh_vertadr[k], 3 * m->mesh_vertnum[k], 5);
    fputs("],face:[", f);
    const int* face = m->mesh_face + 3 * (size_t)m->mesh_faceadr[k];
    for (int i = 0; i < 3 * m->mesh_facenum[k]; i++) fprintf(f, i ? ",%d" : "%d", face[i]);
    fputs("]}", f);
  }
  fputs("],\n", f);
}

// the bodies drawn (with geoms, not the world) into body[]; their number
static int drawn_bodies(const physModel* m, int* body) {
  int n = 0;
  for (int b = 1; b < m->nbody; b++) {
    for (int g = 0; g < m->ngeom; g++) {
      if (m->geom_bodyid[g] == b) {
        body[n++] = b;
        break;
      }
    }
  }
  return n;
}

//---------------------------------------------------------------------------------------------------------
// frames

// the samples kept as frames: the first, every sample at least 1/fps after the last kept one, and the last;
// their indices into keep[], their number
static int frame_samples(const viewTrajectory* tr, double fps, int* keep) {
  int n = 0;
  for (int i = 0; i < tr->T; i++) {
    if (i == 0 || i == tr->T - 1 || tr->time[i] - tr->time[keep[n - 1]] >= 1 / fps - 1e-9) keep[n++] = i;
  }
  return n;
}

// the bounds of the motion (every drawn body's position in every frame): lo, hi
typedef struct viewBounds_ {
  double lo[3], hi[3];
  double fmax;              // largest contact force (N)
} viewBounds;

// d at sample i of tr: state and inputs (zero where tr has none), the contact list cleared (no warm start)
static void set_sample(const physModel* m, physData* d, const viewTrajectory* tr, int i) {
  phys_reset_data(m, d);
  memcpy(d->qpos, tr->qpos + (size_t)i * m->nq, sizeof(double) * (size_t)m->nq);
  if (tr->qvel) memcpy(d->qvel, tr->qvel + (size_t)i * m->nv, sizeof(double) * (size_t)m->nv);
  if (tr->ctrl) memcpy(d->ctrl, tr->ctrl + (size_t)i * m->nu, sizeof(double) * (size_t)m->nu);
  if (tr->qfrc) memcpy(d->qfrc_applied, tr->qfrc + (size_t)i * m->nv, sizeof(double) * (size_t)m->nv);
  d->time = tr->time[i];
}

// pose: the drawn bodies' world positions and orientations at every frame, and the bounds
static void put_poses(FILE* f, const physModel* m, physData* d, const viewTrajectory* tr, const int* keep, int nf,
                      const int* body, int nb, viewBounds* bd) {
  fputs(",pose:[", f);
  for (int j = 0; j < nf; j++) {
    set_sample(m, d, tr, keep[j]);
    phys_kinematics(m, d);
    for (int i = 0; i < nb; i++) {
      const double* p = d->xpos + 3 * body[i];
      if (j || i) fputc(',', f);
      put_nums(f, p, 3, 4);
      fputc(',', f);
      put_nums(f, d->xquat + 4 * body[i], 4, 5);
      for (int k = 0; k < 3; k++) {
        if (p[k] < bd->lo[k]) bd->lo[k] = p[k];
        if (p[k] > bd->hi[k]) bd->hi[k] = p[k];
      }
    }
  }
  fputc(']', f);
}

// contacts: per frame the contact points and world forces F = frame' lambda / dt of one model step from the frame's
// sample (the forces the model applies there)
static void put_contacts(FILE* f, const physModel* m, physData* d, const viewTrajectory* tr, const int* keep, int nf,
                         viewBounds* bd) {
  fputs(",contacts:[", f);
  for (int j = 0; j < nf; j++) {
    set_sample(m, d, tr, keep[j]);
    phys_step(m, d);
    fputs(j ? ",[" : "[", f);
    for (int c = 0; c < d->ncon; c++) {
      const physContact* con = d->contact + c;
      double F[3];
      for (int k = 0; k < 3; k++) {
        F[k] = (con->frame[k] * con->lambda[0] + con->frame[3 + k] * con->lambda[1] +
                con->frame[6 + k] * con->lambda[2]) / m->opt.timestep;
      }
      double norm = sqrt(F[0] * F[0] + F[1] * F[1] + F[2] * F[2]);
      if (norm > bd->fmax) bd->fmax = norm;
      if (c) fputc(',', f);
      put_nums(f, con->pos, 3, 4);
      fputc(',', f);
      put_nums(f, F, 3, 4);
    }
    fputc(']', f);
  }
  fputc(']', f);
}

// one trajectory's frames
static int put_trajectory(FILE* f, const physModel* m, physData* d, const viewTrajectory* tr, int group,
                          const viewOptions* opt, const int* body, int nb, viewBounds* bd) {
  int* keep = malloc(sizeof(int) * (size_t)(tr->T > 0 ? tr->T : 1));
  if (!keep) return 0;
  int nf = frame_samples(tr, opt->fps > 0 ? opt->fps : 60, keep);
  fputs("{label:", f);
  put_js_string(f, tr->label);
  fprintf(f, ",group:%d,time:[", group);
  for (int j = 0; j < nf; j++) {
    if (j) fputc(',', f);
    put_num(f, tr->time[keep[j]], 6);
  }
  fputc(']', f);
  put_poses(f, m, d, tr, keep, nf, body, nb, bd);
  if (opt->contacts) put_contacts(f, m, d, tr, keep, nf, bd);
  fputc('}', f);
  free(keep);
  return 1;
}

// center, radius, extent and force scale from the bounds (the geoms' bounding spheres widen the motion's box)
static void put_frame_of_view(FILE* f, const physModel* m, const viewBounds* bd, int nb) {
  double c[3], r = 0, rgeom = 0;
  for (int g = 0; g < m->ngeom; g++) {
    if (m->geom_bodyid[g] != 0 && m->geom_rbound[g] > rgeom) rgeom = m->geom_rbound[g];
  }
  for (int k = 0; k < 3; k++) {
    c[k] = nb ? 0.5 * (bd->lo[k] + bd->hi[k]) : 0;
    double h = nb ? 0.5 * (bd->hi[k] - bd->lo[k]) : 0;
    r += h * h;
  }
  r = sqrt(r) + rgeom;
  if (r < 0.05) r = 0.05;   // a model without moving geoms: a view of the origin
  fputs(",\ncenter:[", f);
  put_nums(f, c, 3, 4);
  fputs("],radius:", f);
  put_num(f, r, 4);
  fputs(",extent:", f);
  put_num(f, r * 3 > 5 ? r * 3 : 5, 4);
  // arrows to the scale of the weight (a resting body's forces sum to it; an impact's are clamped by the player)
  double mass = 0, g = sqrt(m->opt.gravity[0] * m->opt.gravity[0] + m->opt.gravity[1] * m->opt.gravity[1] +
                            m->opt.gravity[2] * m->opt.gravity[2]);
  for (int b = 1; b < m->nbody; b++) mass += m->body_mass[b];
  double ref = mass * g > 0 ? mass * g : bd->fmax;
  fputs(",forcescale:", f);
  put_num(f, ref > 0 ? 0.5 * r / ref : 0, 8);
}

// 1 when trajectory k (> 0) starts a new group: its group text differs from trajectory k - 1's
static int new_group(const viewTrajectory* tr, int k) {
  const char *a = tr[k - 1].group, *b = tr[k].group;
  return (a == NULL) != (b == NULL) || (a && strcmp(a, b) != 0);
}

int view_write_data(FILE* f, const physModel* m, const viewTrajectory* tr, int ntraj, const viewOptions* opt) {
  int* body = malloc(sizeof(int) * (size_t)m->nbody);
  physData* d = phys_make_data(m);
  if (!body || !d) {
    free(body), phys_free_data(d);
    cli_error("out of memory");
    return 0;
  }
  int nb = drawn_bodies(m, body), ok = 1;
  viewBounds bd = {{INFINITY, INFINITY, INFINITY}, {-INFINITY, -INFINITY, -INFINITY}, 0};
  fputs("window.PHYSID_VIEW = {\n", f);
  put_geoms(f, m);
  put_meshes(f, m);
  fputs("bodies:[", f);
  for (int i = 0; i < nb; i++) fprintf(f, i ? ",%d" : "%d", body[i]);
  fprintf(f, "],contacts:%s,\ntraj:[", opt->contacts ? "true" : "false");
  for (int k = 0, group = 0; k < ntraj && ok; k++) {
    if (k) fputs(",\n", f);
    group += k > 0 && new_group(tr, k);
    ok = put_trajectory(f, m, d, tr + k, group, opt, body, nb, &bd);
  }
  fputs("],\ngroups:[", f);
  for (int k = 0, n = 0; k < ntraj; k++) {
    if (k > 0 && !new_group(tr, k)) continue;
    if (n++) fputc(',', f);
    put_js_string(f, tr[k].group ? tr[k].group : "");
  }
  if (ntraj == 0) put_js_string(f, "");
  fputc(']', f);
  put_frame_of_view(f, m, &bd, nb && ntraj);
  fputs("};\n", f);
  free(body);
  phys_free_data(d);
  if (!ok) cli_error("out of memory");
  return ok;
}

//---------------------------------------------------------------------------------------------------------
// the page

static const char g_style[] =
    ".physid-view{font:14px sans-serif;color:#222;max-width:1100px}\n"
    ".physid-view #view{width:100%;height:560px;background:#ebeef2}\n"
    ".physid-view .bar{display:flex;gap:10px;align-items:center;margin:6px 0}\n"
    ".physid-view #timeline{flex:1}\n"
    ".physid-view #clock{font-family:monospace;min-width:11em}\n"
    ".physid-view #legend div{display:flex;align-items:center;gap:6px;margin:2px 0}\n"
    ".physid-view .swatch{display:inline-block;width:14px;height:14px;border-radius:3px}\n";

static const char g_markup[] =
    "<div class=\"physid-view\">\n<div id=\"view\"></div>\n<div class=\"bar\"><button id=\"play\">pause</button>"
    "<input id=\"timeline\" type=\"range\" min=\"0\" max=\"1000\" value=\"0\"><span id=\"clock\"></span>"
    "<label>speed <select id=\"speed\"><option value=\"0.1\">0.1x</option><option value=\"0.25\">0.25x</option>"
    "<option value=\"0.5\">0.5x</option><option value=\"1\" selected>1x</option><option value=\"2\">2x</option>"
    "<option value=\"4\">4x</option></select></label>"
    "<label><input id=\"follow\" type=\"checkbox\"> follow</label>"
    "<label><input id=\"contacts\" type=\"checkbox\" checked> contacts</label>"
    "<label id=\"grouplabel\">show <select id=\"group\"></select></label></div>\n"
    "<div id=\"legend\"></div>\n"
    "<p>Drag to orbit, right-drag to pan, scroll to zoom. The first trajectory (of each scene) in the model's "
    "colours, the others as ghosts.</p>\n</div>\n";

int view_write_player(FILE* f, const physModel* m, const viewTrajectory* tr, int ntraj, const viewOptions* opt,
                      const char* three_js) {
  fprintf(f, "<style>\n%s</style>\n%s<script>\n%s\n</script>\n<script>\n", g_style, g_markup, three_js);
  if (!view_write_data(f, m, tr, ntraj, opt)) return 0;
  fprintf(f, "</script>\n<script>\n%s</script>\n", view_page_js);
  return 1;
}

int view_write_page(FILE* f, const physModel* m, const viewTrajectory* tr, int ntraj, const viewOptions* opt,
                    const char* three_js) {
  fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>", f);
  put_html_text(f, opt->title ? opt->title : m->modelname);
  fputs("</title>\n</head>\n<body>\n<h1 style=\"font:600 18px sans-serif\">", f);
  put_html_text(f, opt->title ? opt->title : m->modelname);
  fputs("</h1>\n", f);
  if (!view_write_player(f, m, tr, ntraj, opt, three_js)) return 0;
  fputs("</body>\n</html>\n", f);
  return 1;
}
