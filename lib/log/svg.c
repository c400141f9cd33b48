/* A small self-contained SVG of MFU, throughput and loss over steps: one
 * panel per quantity any log has, one line per log. Lines with more than
 * 2000 points keep each bucket's min and max, so spikes stay visible. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "trainprof/error.h"
#include "trainprof/log.h"
#include "trainprof/report.h"

#define W 800
#define PH 200 /* panel height */
#define ML 70  /* margins */
#define MR 20
#define MT 30
#define MAX_POINTS 2000

static const char *const colours[] = { "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b" };

static void polyline(FILE *f, const int64_t *st, const double *v, size_t n, double x0, double x1, double y0,
                     double y1, int top, const char *colour)
{
    double sx = x1 > x0 ? (W - ML - MR) / (x1 - x0) : 0, sy = y1 > y0 ? (PH - 40) / (y1 - y0) : 0;
    size_t bucket = n > MAX_POINTS ? (n + MAX_POINTS / 2 - 1) / (MAX_POINTS / 2) : 1;
    fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.2\" points=\"", colour);
    for (size_t b = 0; b < n; b += bucket) {
        size_t e = b + bucket < n ? b + bucket : n, lo = SIZE_MAX, hi = SIZE_MAX;
        for (size_t i = b; i < e; i++) {
            if (!isfinite(v[i])) continue;
            if (lo == SIZE_MAX || v[i] < v[lo]) lo = i;
            if (hi == SIZE_MAX || v[i] > v[hi]) hi = i;
        }
        if (lo == SIZE_MAX) continue;
        size_t a = lo < hi ? lo : hi, z = lo < hi ? hi : lo;
        for (int k = 0; k < (a == z ? 1 : 2); k++) {
            size_t i = k ? z : a;
            double x = ML + ((double)st[i] - x0) * sx;
            double y = top + 20 + (PH - 40) - (v[i] - y0) * sy;
            fprintf(f, "%.1f,%.1f ", x, y);
        }
    }
    fputs("\"/>\n", f);
}

int tprof_log_svg(const tprof_log *const *logs, size_t n, FILE *f)
{
    static const struct {
        tprof_log_role role;
        const char *title;
    } panels[] = { { TPROF_LOG_ROLE_MFU, "MFU" }, { TPROF_LOG_ROLE_THROUGHPUT, "throughput" },
                   { TPROF_LOG_ROLE_LOSS, "loss" } };
    int shown[3] = { 0 };
    size_t np = 0;
    double x0 = INFINITY, x1 = -INFINITY;
    for (size_t p = 0; p < 3; p++)
        for (size_t l = 0; l < n; l++) {
            long mi = tprof_log_find_role(logs[l], panels[p].role);
            const int64_t *st;
            const double *v;
            size_t k = mi < 0 ? 0 : tprof_log_points(logs[l], (size_t)mi, &st, &v);
            if (!k) continue;
            if (!shown[p]) np++;
            shown[p] = 1;
            if ((double)st[0] < x0) x0 = (double)st[0];
            if ((double)st[k - 1] > x1) x1 = (double)st[k - 1];
        }
    int height = MT + (int)(np ? np : 1) * PH + 20 + (int)n * 16;
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
               "font-family=\"sans-serif\" font-size=\"11\">\n"
               "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
            W, height, W, height);
    if (!np) fputs("<text x=\"20\" y=\"40\">no MFU, throughput or loss metric in these logs</text>\n", f);
    int top = MT;
    for (size_t p = 0; p < 3; p++) {
        if (!shown[p]) continue;
        double y0 = INFINITY, y1 = -INFINITY;
        for (size_t l = 0; l < n; l++) {
            long mi = tprof_log_find_role(logs[l], panels[p].role);
            const int64_t *st;
            const double *v;
            size_t k = mi < 0 ? 0 : tprof_log_points(logs[l], (size_t)mi, &st, &v);
            for (size_t i = 0; i < k; i++)
                if (isfinite(v[i])) y0 = fmin(y0, v[i]), y1 = fmax(y1, v[i]);
        }
        if (!(y0 <= y1)) y0 = 0, y1 = 1;
        fprintf(f, "<g>\n<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#999\"/>\n", ML,
                top + 20, W - ML - MR, PH - 40);
        fprintf(f, "<text x=\"%d\" y=\"%d\" font-weight=\"bold\">%s</text>\n", ML, top + 14, panels[p].title);
        fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%.4g</text>\n", ML - 4, top + 24, y1);
        fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%.4g</text>\n", ML - 4, top + PH - 20, y0);
        fprintf(f, "<text x=\"%d\" y=\"%d\">step %.0f</text>\n", ML, top + PH - 6, x0);
        fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">step %.0f</text>\n", W - MR, top + PH - 6, x1);
        for (size_t l = 0; l < n; l++) {
            long mi = tprof_log_find_role(logs[l], panels[p].role);
            const int64_t *st;
            const double *v;
            size_t k = mi < 0 ? 0 : tprof_log_points(logs[l], (size_t)mi, &st, &v);
            if (!k) continue;
            polyline(f, st, v, k, x0, x1, y0, y1, top, colours[l % 6]);
        }
        fputs("</g>\n", f);
        top += PH;
    }
    for (size_t l = 0; l < n; l++) { /* legend: file and the metrics drawn */
        fprintf(f, "<text x=\"%d\" y=\"%d\" fill=\"%s\">", ML, top + 14 + (int)l * 16, colours[l % 6]);
        tprof_xml_text(f, tprof_log_name(logs[l]), SIZE_MAX);
        for (size_t p = 0, first = 1; p < 3; p++) {
            long mi = tprof_log_find_role(logs[l], panels[p].role);
            if (mi < 0) continue;
            fputs(first ? ": " : ", ", f);
            first = 0;
            tprof_xml_text(f, tprof_log_metric(logs[l], (size_t)mi), SIZE_MAX);
        }
        fputs("</text>\n", f);
    }
    fputs("</svg>\n", f);
    return ferror(f) ? TPROF_EIO : 0;
}
