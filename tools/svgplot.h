// svgplot.h - self-contained HTML pages (inline SVG and CSS, no scripts, no external resources): the plotting
// shared by identify's report (report.c) and the optimize/mpc page (optimize_html.c).
#ifndef PHYS_SVGPLOT_H
#define PHYS_SVGPLOT_H

#include <stdio.h>

#define PLOT_W 460                // plot size in pixels
#define PLOT_H 240

extern const char* const svg_palette[6];

// one line of a plot: y[k * stride] against x[k], k < n
typedef struct svgSeries_ {
  const double* x;
  const double* y;
  int n, stride;
  const char* color;
  int dashed;               // 0 solid, 1 dashed, 2 dotted
} svgSeries;

// write s with &, <, >, " escaped
void html_text(FILE* f, const char* s);
// a number for a table cell ("-" when infinite, "n/a" when NaN)
void cell_number(FILE* f, double x);
// an SVG line plot with a title; logy: log10 scale
void svg_plot(FILE* f, const char* title, const char* xlabel, const svgSeries* s, int ns, int logy);
// the page's head with its style sheet (title "physid COMMAND")
void page_head(FILE* f, const char* command);

#endif  // PHYS_SVGPLOT_H
