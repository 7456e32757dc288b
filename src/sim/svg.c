/*
 * SVG line charts, written straight to a FILE. The page has a fixed size (viewBox), the plot
 * area sits left, the legend right of it. Axis ranges are widened to whole multiples of a "nice"
 * tick step so that the ticks land on the corners; data are then mapped linearly to pixels.
 * Numbers are printed with two decimals, which is well below a pixel. Points are clamped to the
 * plot area rather than clipped with a clipPath, which simple renderers (ImageMagick's) ignore.
 */
#include "sim/svg.h"

#include <math.h>

#define PAGE_W   880.0
#define PAGE_H   520.0
#define MARGIN_L 70.0
#define MARGIN_T 50.0
#define MARGIN_B 60.0
#define LEGEND_W 210.0
#define TICKS    6

static const char *const palette[] = {
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
    "#8c564b", "#e377c2", "#bcbd22", "#17becf", "#7f7f7f",
};

/* Writes s with the five XML special characters escaped. */
static void put_text(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '&':
            fputs("&amp;", f);
            break;
        case '<':
            fputs("&lt;", f);
            break;
        case '>':
            fputs("&gt;", f);
            break;
        case '"':
            fputs("&quot;", f);
            break;
        case '\'':
            fputs("&apos;", f);
            break;
        default:
            fputc(*s, f);
        }
    }
}

/* 1, 2 or 5 times a power of ten, near range / TICKS. */
static double nice_step(double range)
{
    double raw = range / TICKS;
    double mag = pow(10.0, floor(log10(raw)));
    double norm = raw / mag;
    double k = norm < 1.5 ? 1.0 : norm < 3.5 ? 2.0 : norm < 7.5 ? 5.0 : 10.0;
    return k * mag;
}

/* Widens [*lo, *hi] to whole steps; returns the step. Degenerate ranges become [lo, lo + 1]. */
static double widen(double *lo, double *hi)
{
    if (!isfinite(*lo) || !isfinite(*hi)) {
        *lo = 0.0;
        *hi = 1.0;
    }
    if (*hi <= *lo) {
        *hi = *lo + 1.0;
    }
    double step = nice_step(*hi - *lo);
    *lo = floor(*lo / step + 1e-9) * step;
    *hi = ceil(*hi / step - 1e-9) * step;
    return step;
}

static double clamp(double v, double lo, double hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

static double px(const gp_svg_chart *c, double x)
{
    return c->left + clamp((x - c->xmin) / (c->xmax - c->xmin), 0.0, 1.0) * c->width;
}

static double py(const gp_svg_chart *c, double y)
{
    return c->top + c->height - clamp((y - c->ymin) / (c->ymax - c->ymin), 0.0, 1.0) * c->height;
}

/* Decimals that show a multiple of step exactly (0 for steps >= 1). */
static int decimals(double step)
{
    int d = (int)ceil(-log10(step) - 1e-9);
    return d < 0 ? 0 : d > 6 ? 6 : d;
}

static void draw_xticks(const gp_svg_chart *c, double step)
{
    FILE *f = c->f;
    int dec = decimals(step);
    int n = (int)lround((c->xmax - c->xmin) / step);
    for (int i = 0; i <= n; i++) {
        double v = c->xmin + i * step, x = px(c, v);
        fprintf(f, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#e0e0e0\"/>\n",
                x, c->top, x, c->top + c->height);
        fprintf(f, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#000\"/>\n", x,
                c->top + c->height, x, c->top + c->height + 5);
        fprintf(f, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\">%.*f</text>\n", x,
                c->top + c->height + 18, dec, fabs(v) < step * 1e-9 ? 0.0 : v);
    }
}

static void draw_yticks(const gp_svg_chart *c, double step)
{
    FILE *f = c->f;
    int dec = decimals(step);
    int n = (int)lround((c->ymax - c->ymin) / step);
    for (int i = 0; i <= n; i++) {
        double v = c->ymin + i * step, y = py(c, v);
        fprintf(f, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#e0e0e0\"/>\n",
                c->left, y, c->left + c->width, y);
        fprintf(f, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#000\"/>\n",
                c->left - 5, y, c->left, y);
        fprintf(f, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"end\">%.*f</text>\n", c->left - 8,
                y + 4, dec, fabs(v) < step * 1e-9 ? 0.0 : v);
    }
}

void gp_svg_begin(gp_svg_chart *c, FILE *f, const gp_svg_axes *a)
{
    *c = (gp_svg_chart){.f = f, .xmin = a->xmin, .xmax = a->xmax, .ymin = a->ymin, .ymax = a->ymax};
    double xstep = widen(&c->xmin, &c->xmax), ystep = widen(&c->ymin, &c->ymax);
    c->left = MARGIN_L;
    c->top = MARGIN_T;
    c->width = PAGE_W - MARGIN_L - LEGEND_W;
    c->height = PAGE_H - MARGIN_T - MARGIN_B;
    fprintf(f,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
            "viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" font-size=\"12\">\n",
            PAGE_W, PAGE_H, PAGE_W, PAGE_H);
    fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n");
    fprintf(f, "<text x=\"%.2f\" y=\"28\" text-anchor=\"middle\" font-size=\"16\">",
            c->left + c->width / 2);
    put_text(f, a->title);
    fputs("</text>\n", f);
    draw_xticks(c, xstep);
    draw_yticks(c, ystep);
    fprintf(f,
            "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"none\" "
            "stroke=\"#000\"/>\n",
            c->left, c->top, c->width, c->height);
    fprintf(f, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\">", c->left + c->width / 2,
            PAGE_H - 18);
    put_text(f, a->xlabel);
    fputs("</text>\n", f);
    fprintf(f,
            "<text x=\"18\" y=\"%.2f\" text-anchor=\"middle\" transform=\"rotate(-90 18 %.2f)\">",
            c->top + c->height / 2, c->top + c->height / 2);
    put_text(f, a->ylabel);
    fputs("</text>\n", f);
}

void gp_svg_add_series(gp_svg_chart *c, const gp_svg_series *s)
{
    FILE *f = c->f;
    const char *color = s->color;
    if (!color) {
        color = palette[c->ncolors++ % (int)(sizeof(palette) / sizeof(palette[0]))];
    }
    const char *dash = s->dashed ? " stroke-dasharray=\"6 4\"" : "";
    fputs("<polyline fill=\"none\" stroke=\"", f);
    put_text(f, color);
    fprintf(f, "\" stroke-width=\"1.5\"%s points=\"", dash);
    int written = 0;
    for (int i = 0; i < s->n; i++) {
        if (isnan(s->x[i]) || isnan(s->y[i])) {
            continue;
        }
        fprintf(f, "%s%.2f,%.2f",
                written == 0  ? ""
                : written % 8 ? " "
                              : "\n",
                px(c, s->x[i]), py(c, s->y[i]));
        written++;
    }
    fputs("\"/>\n", f);
    double lx = c->left + c->width + 20, ly = c->top + 10 + 20.0 * c->nseries;
    fprintf(f, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"", lx, ly, lx + 28,
            ly);
    put_text(f, color);
    fprintf(f, "\" stroke-width=\"2\"%s/>\n", dash);
    fprintf(f, "<text x=\"%.2f\" y=\"%.2f\">", lx + 36, ly + 4);
    put_text(f, s->label);
    fputs("</text>\n", f);
    c->nseries++;
}

void gp_svg_end(gp_svg_chart *c)
{
    fputs("</svg>\n", c->f);
    c->f = NULL;
}
