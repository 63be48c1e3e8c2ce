// svgplot.c - the HTML pages' plotting (svgplot.h): escaped text, table numbers, line plots as inline SVG and
// the page head with its style sheet; shared by identify's report (report.c) and optimize/mpc's page.
#include <math.h>
#include <stdio.h>

#include "svgplot.h"

const char* const svg_palette[6] = {"#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf"};

//---------------------------------------------------------------------------------------------------------
// text

// write s with &, <, >, " escaped
void html_text(FILE* f, const char* s) {
  for (; *s; s++) {
    if (*s == '&') fputs("&amp;", f);
    else if (*s == '<') fputs("&lt;", f);
    else if (*s == '>') fputs("&gt;", f);
    else if (*s == '"') fputs("&quot;", f);
    else fputc(*s, f);
  }
}

// a number for a table cell ("-" when infinite, "n/a" when NaN)
void cell_number(FILE* f, double x) {
  if (isnan(x)) fputs("<td>n/a</td>", f);
  else if (isinf(x)) fputs(x > 0 ? "<td>+inf</td>" : "<td>-inf</td>", f);
  else fprintf(f, "<td>%.6g</td>", x);
}

//---------------------------------------------------------------------------------------------------------
// plots

// y value on the plot's scale (log10 when logy; values <= 0 clamp to the smallest positive one)
static double scale_y(double y, int logy, double floor_y) {
  return logy ? log10(y > floor_y ? y : floor_y) : y;
}

// data ranges of the series: x in [x0, x1], scaled y in [y0, y1] (padded when flat)
static void plot_ranges(double r[4], const svgSeries* s, int ns, int logy, double floor_y) {
  r[0] = r[2] = HUGE_VAL;
  r[1] = r[3] = -HUGE_VAL;
  for (int i = 0; i < ns; i++)
    for (int k = 0; k < s[i].n; k++) {
      double x = s[i].x[k], y = scale_y(s[i].y[(size_t)k * s[i].stride], logy, floor_y);
      if (!isfinite(x) || !isfinite(y)) continue;
      r[0] = fmin(r[0], x), r[1] = fmax(r[1], x), r[2] = fmin(r[2], y), r[3] = fmax(r[3], y);
    }
  if (!(r[0] <= r[1])) r[0] = 0, r[1] = 1;
  if (!(r[2] <= r[3])) r[2] = 0, r[3] = 1;
  if (r[1] - r[0] <= 0) r[1] = r[0] + 1;
  if (r[3] - r[2] <= 1e-300 + 1e-12 * fabs(r[3])) r[2] -= 0.5 + 0.05 * fabs(r[2]), r[3] += 0.5 + 0.05 * fabs(r[3]);
}

// axes with 5 ticks each and their labels (10^k on a log axis)
static void plot_axes(FILE* f, const double r[4], int logy, const char* xlabel) {
  const int L = 64, T = 24, W = PLOT_W - L - 12, H = PLOT_H - T - 36;
  fprintf(f, "<rect x='%d' y='%d' width='%d' height='%d' fill='#fff' stroke='#999'/>\n", L, T, W, H);
  for (int i = 0; i <= 4; i++) {
    double fx = r[0] + (r[1] - r[0]) * i / 4, fy = r[2] + (r[3] - r[2]) * i / 4;
    int px = L + W * i / 4, py = T + H - H * i / 4;
    fprintf(f, "<line x1='%d' y1='%d' x2='%d' y2='%d' stroke='#eee'/>", L, py, L + W, py);
    fprintf(f, "<text x='%d' y='%d' text-anchor='end'>", L - 4, py + 4);
    if (logy) fprintf(f, "%.3g</text>\n", pow(10, fy));
    else fprintf(f, "%.4g</text>\n", fy);
    fprintf(f, "<text x='%d' y='%d' text-anchor='middle'>%.4g</text>\n", px, T + H + 16, fx);
  }
  fprintf(f, "<text x='%d' y='%d' text-anchor='middle'>", L + W / 2, PLOT_H - 4);
  html_text(f, xlabel);
  fputs("</text>\n", f);
}

// one series as a polyline in the plot's frame
static void plot_line(FILE* f, const svgSeries* s, const double r[4], int logy, double floor_y) {
  const int L = 64, T = 24, W = PLOT_W - L - 12, H = PLOT_H - T - 36;
  fprintf(f, "<polyline fill='none' stroke='%s' stroke-width='%s'%s points='", s->color, s->dashed == 2 ? "1" : "1.5",
          s->dashed == 1 ? " stroke-dasharray='5,3'" : s->dashed == 2 ? " stroke-dasharray='1,2'" : "");
  for (int k = 0; k < s->n; k++) {
    double y = scale_y(s->y[(size_t)k * s->stride], logy, floor_y);
    if (!isfinite(y) || !isfinite(s->x[k])) continue;
    fprintf(f, "%.1f,%.1f ", L + W * (s->x[k] - r[0]) / (r[1] - r[0]), T + H - H * (y - r[2]) / (r[3] - r[2]));
  }
  fputs("'/>\n", f);
}

// an SVG line plot with a title; logy: log10 scale
void svg_plot(FILE* f, const char* title, const char* xlabel, const svgSeries* s, int ns, int logy) {
  double floor_y = HUGE_VAL, r[4];
  for (int i = 0; logy && i < ns; i++)
    for (int k = 0; k < s[i].n; k++)
      if (s[i].y[(size_t)k * s[i].stride] > 0) floor_y = fmin(floor_y, s[i].y[(size_t)k * s[i].stride]);
  if (!isfinite(floor_y)) floor_y = 1e-300;
  plot_ranges(r, s, ns, logy, floor_y);
  fprintf(f, "<svg xmlns='http://www.w3.org/2000/svg' width='%d' height='%d' font-size='11'>\n", PLOT_W, PLOT_H);
  fprintf(f, "<text x='%d' y='14' text-anchor='middle' font-weight='bold'>", PLOT_W / 2);
  html_text(f, title);
  fputs("</text>\n", f);
  plot_axes(f, r, logy, xlabel);
  for (int i = 0; i < ns; i++) plot_line(f, s + i, r, logy, floor_y);
  fputs("</svg>\n", f);
}

// the page's head with its style sheet (title "physid COMMAND")
void page_head(FILE* f, const char* command) {
  fprintf(f, "<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>physid %s</title>\n<style>\n"
        "body{font-family:sans-serif;margin:24px;color:#222} table{border-collapse:collapse;margin:8px 0}\n"
        ".grid td,.grid th{border:1px solid #ccc;padding:3px 8px;text-align:right} .grid td.name{text-align:left}\n"
        ".kv th{text-align:left;padding-right:12px} .row{display:flex;flex-wrap:wrap;gap:8px}\n"
        ".warn{color:#a60;font-weight:bold}\n</style></head><body>\n", command);
}

