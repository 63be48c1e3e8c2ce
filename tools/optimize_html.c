// optimize_html.c - the HTML page of `physid optimize` and `physid mpc` (optimize.h): one self-contained page
// (inline SVG and CSS through svgplot.c, no external resources) with a summary table, the cost per
// iteration (optimize) or per replan (mpc) on a log scale, every control over time and the chosen state
// coordinates over time; with the task's "replay": true the 3-D player of the planned (optimize) or executed (mpc)
// motion (tools/view.h: three.js inlined, scripts). Deterministic for given data (no dates or times of day).
#include <stdlib.h>
#include <string.h>

#include "optimize.h"
#include "svgplot.h"
#include "view.h"

// the index of a trajectory CSV column name "qI" or "vI" in the state row (qpos, qvel); -1 if not one of m's
static int state_column(const physModel* m, const char* name) {
  if ((name[0] != 'q' && name[0] != 'v') || name[1] < '0' || name[1] > '9') return -1;
  char* end;
  long i = strtol(name + 1, &end, 10);
  if (*end || i >= (name[0] == 'q' ? m->nq : m->nv)) return -1;
  return name[0] == 'q' ? (int)i : m->nq + (int)i;
}

// the "replay" key: absent or a boolean; when true three.js must be readable (before any work)
static int read_replay(optTask* t) {
  const cJSON* v = cJSON_GetObjectItemCaseSensitive(t->root, "replay");
  t->replay = 0;
  if (!v) return 1;
  if (!cJSON_IsBool(v)) {
    cli_error("%s: replay: expected true or false", t->file);
    return 0;
  }
  t->replay = cJSON_IsTrue(v);
  char* three = NULL;
  if (t->replay && !view_read_three(&three, NULL)) return 0;
  free(three);
  return 1;
}

int opt_read_plot(optTask* t, const physModel* m) {
  if (!read_replay(t)) return 0;
  const cJSON* v = cJSON_GetObjectItemCaseSensitive(t->root, "plot");
  int *sel = t->plot, *nsel = &t->nplot;
  *nsel = 0;
  if (!v) {   // the first positions and velocities
    for (int i = 0; i < m->nq && i < OPT_PLOT_MAX / 2; i++) sel[(*nsel)++] = i;
    for (int i = 0; i < m->nv && i < OPT_PLOT_MAX / 2; i++) sel[(*nsel)++] = m->nq + i;
    return 1;
  }
  if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) < 1 || cJSON_GetArraySize(v) > OPT_PLOT_MAX) {
    cli_error("%s: plot: expected an array of 1 to %d state coordinate names (\"q0\", \"v0\", ...)", t->file,
              OPT_PLOT_MAX);
    return 0;
  }
  const cJSON* e;
  cJSON_ArrayForEach(e, v) {
    int c = cJSON_IsString(e) ? state_column(m, e->valuestring) : -1;
    if (c < 0) {
      cli_error("%s: plot[%d]: expected a state coordinate of model '%s': q0..q%d or v0..v%d", t->file, *nsel,
                m->modelname, m->nq - 1, m->nv - 1);
      return 0;
    }
    sel[(*nsel)++] = c;
  }
  return 1;
}

// the summary table of (name, value) rows
static void page_summary(FILE* f, const optPage* pg) {
  fprintf(f, "<h1>physid %s: ", pg->command);
  html_text(f, pg->title);
  fputs("</h1>\n<table class='kv'>\n", f);
  for (int i = 0; i < pg->n_rows; i++) {
    fputs("<tr><th>", f);
    html_text(f, pg->rows[2 * i]);
    fputs("</th><td>", f);
    html_text(f, pg->rows[2 * i + 1]);
    fputs("</td></tr>\n", f);
  }
  fputs("</table>\n", f);
}

// the 3-D player of the motion: X's positions (T + 1 rows of nq + nv) as one trajectory; 0 on failure (message)
static int section_replay(FILE* f, const physModel* m, const optPage* pg) {
  int n = pg->T + 1, ns = m->nq + m->nv;
  double* qpos = malloc(sizeof(double) * (size_t)n * (size_t)(m->nq ? m->nq : 1));
  char* three = NULL;
  int ok = qpos && view_read_three(&three, NULL);
  if (!qpos) cli_error("out of memory");
  if (ok) {
    for (int k = 0; k < n; k++) memcpy(qpos + (size_t)k * m->nq, pg->X + (size_t)k * ns, sizeof(double) * (size_t)m->nq);
    viewTrajectory v = {!strcmp(pg->command, "mpc") ? "executed" : "planned", n, pg->times, qpos, NULL, NULL, NULL, NULL};
    viewOptions opt = {60, 0, NULL, NULL};
    fputs("<h2>Replay</h2>\n", f);
    ok = view_write_player(f, m, &v, 1, &opt, three);
  }
  free(three);
  free(qpos);
  return ok;
}

int opt_write_html(FILE* f, const physModel* m, const optPage* pg, const int* sel, int nsel) {
  int ns = m->nq + m->nv, nk = pg->n_iter > 0 ? pg->n_iter : 1;
  double* k = malloc(sizeof(double) * (size_t)nk);
  if (!k) return 0;
  for (int i = 0; i < pg->n_iter; i++) k[i] = i;
  page_head(f, pg->command);
  page_summary(f, pg);
  fputs("<h2>Cost</h2>\n<div class='row'>\n", f);
  svgSeries c = {k, pg->iter_cost, pg->n_iter, 1, svg_palette[1], 0};
  char title[128];
  snprintf(title, sizeof title, "cost per %s (log scale)", pg->iter_label);
  svg_plot(f, title, pg->iter_label, &c, 1, 1);
  fputs("</div>\n<h2>Controls</h2>\n<div class='row'>\n", f);
  for (int j = 0; j < m->nu; j++) {
    svgSeries u = {pg->times, pg->U + j, pg->T, m->nu, svg_palette[j % 6], 0};
    snprintf(title, sizeof title, "u%d (actuator '%.80s')", j, phys_id2name(m, "actuator", j));
    svg_plot(f, title, "time (s)", &u, 1, 0);
  }
  fputs("</div>\n<h2>State</h2>\n<div class='row'>\n", f);
  for (int i = 0; i < nsel; i++) {
    int col = sel[i], q = col < m->nq;
    svgSeries x = {pg->times, pg->X + col, pg->T + 1, ns, svg_palette[(i + 1) % 6], 0};
    snprintf(title, sizeof title, "%c%d", q ? 'q' : 'v', q ? col : col - m->nq);
    svg_plot(f, title, "time (s)", &x, 1, 0);
  }
  fputs("</div>\n", f);
  int ok = !pg->replay || section_replay(f, m, pg);
  fputs("</body></html>\n", f);
  free(k);
  return ok && !ferror(f);
}
