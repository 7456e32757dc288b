/*
 * A tiny SVG line-chart writer: a frame with a title, two labelled axes with ticks at "nice"
 * steps (1, 2 or 5 times a power of ten) and grid lines, then one polyline per series, each with
 * its entry in a legend right of the plot. It writes as it goes, so a chart is begun, given its
 * series and ended; nothing is allocated.
 *
 * Coordinates outside the axis ranges are clamped to the plot's edges; NaN points are skipped.
 * Text (title, labels) is escaped for XML. Write errors are left on the FILE for the caller to
 * find with ferror(), so the functions return nothing.
 *
 * Ownership: the chart borrows f between gp_svg_begin and gp_svg_end; series data are borrowed
 * for the duration of the call.
 */
#ifndef GP_SIM_SVG_H
#define GP_SIM_SVG_H

#include <stdio.h>

typedef struct gp_svg_axes {
    const char *title;
    const char *xlabel;
    const char *ylabel;
    double xmin, xmax; /* data range; the axis is widened to whole tick steps */
    double ymin, ymax;
} gp_svg_axes;

typedef struct gp_svg_series {
    const char *label; /* legend text */
    const double *x;
    const double *y;
    int n;
    const char *color; /* "#rrggbb" or any SVG colour; NULL: the next colour of the palette */
    int dashed;
} gp_svg_series;

/* A chart being written. Embedded by the caller, who may read the fields (e.g. the widened
 * axis ranges after gp_svg_begin); only svg.c writes them. */
typedef struct gp_svg_chart {
    FILE *f;
    double xmin, xmax, ymin, ymax;   /* axis ranges after widening */
    double left, top, width, height; /* plot area in pixels */
    int nseries;                     /* series written so far: the next legend slot */
    int ncolors;                     /* palette colours used so far */
} gp_svg_chart;

/* Writes the SVG header, title, axes, ticks and grid. */
void gp_svg_begin(gp_svg_chart *c, FILE *f, const gp_svg_axes *a);
/* Writes one series as a polyline and its legend entry. */
void gp_svg_add_series(gp_svg_chart *c, const gp_svg_series *s);
/* Closes the document. c no longer refers to f afterwards. */
void gp_svg_end(gp_svg_chart *c);

#endif
