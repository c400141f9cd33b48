/* A small self-contained SVG of MFU, throughput and loss over steps: one
 * panel per quantity any log has, one line per log, with ticks and grid
 * lines on both axes, the metric's name (its unit) in the panel's title and
 * the log's anomalies on it marked. Lines with more than 2000 points keep
 * each bucket's min and max, so spikes stay visible. */
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

#define NTICKS 6

/* Panel geometry: step X and value V at pixel coordinates. */
typedef struct {
    double x0, x1, y0, y1;
    int top;
} panel;
static double px(const panel *p, double x) { return ML + (p->x1 > p->x0 ? (x - p->x0) * (W - ML - MR) / (p->x1 - p->x0) : 0); }
static double py(const panel *p, double v)
{
    return p->top + 20 + (PH - 40) - (p->y1 > p->y0 ? (v - p->y0) * (PH - 40) / (p->y1 - p->y0) : 0);
}

/* Grid lines and labels at nice ticks on both axes, "step" under the x axis. */
static void axes(FILE *f, const panel *p)
{
    double t[NTICKS + 2];
    size_t n = tprof_ticks(p->y0, p->y1, NTICKS, t);
    for (size_t i = 0; i < n; i++) {
        double y = py(p, t[i]);
        fprintf(f, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#e5e5e5\"/>", ML, W - MR, y, y);
        fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.4g</text>\n", ML - 4, y + 4, t[i]);
    }
    n = tprof_ticks(p->x0, p->x1, NTICKS + 2, t);
    for (size_t i = 0; i < n; i++) {
        if (t[i] != floor(t[i])) continue; /* steps are whole */
        double x = px(p, t[i]);
        fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" stroke=\"#e5e5e5\"/>", x, x, p->top + 20,
                p->top + PH - 20);
        fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%.0f</text>\n", x, p->top + PH - 7, t[i]);
    }
    fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" fill=\"#666\">step</text>\n", W - MR, p->top + PH + 4);
}

/* The anomalies of LOG on metric MI as red rings, each named in its title. */
static void anomalies(FILE *f, const tprof_log *lg, long mi, const panel *p)
{
    const tprof_log_anomaly *a;
    size_t na = tprof_log_anomalies(lg, &a);
    for (size_t k = 0; k < na; k++) {
        if ((long)a[k].metric != mi) continue;
        double v = isfinite(a[k].value) ? a[k].value : p->y1; /* NaN / inf: at the top */
        fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"none\" stroke=\"#d62728\" stroke-width=\"2\">"
                   "<title>%s at step %lld</title></circle>\n",
                px(p, (double)a[k].step), py(p, v), tprof_log_anomaly_name(a[k].kind), (long long)a[k].step);
    }
}

int tprof_log_svg(const tprof_log *const *logs, size_t n, FILE *f)
{
    static const struct {
        tprof_log_role role;
        const char *title;
    } panels[] = { { TPROF_LOG_ROLE_MFU, "MFU" }, { TPROF_LOG_ROLE_THROUGHPUT, "throughput" },
                   { TPROF_LOG_ROLE_LOSS, "loss" } };
    int shown[3] = { 0 };
    size_t np = 0, nanom = 0;
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
    for (size_t l = 0; l < n; l++) {
        const tprof_log_anomaly *a;
        nanom += tprof_log_anomalies(logs[l], &a);
    }
    int height = MT + (int)(np ? np : 1) * (PH + 10) + 20 + (int)(n + (nanom > 0)) * 16;
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
               "font-family=\"sans-serif\" font-size=\"11\">\n"
               "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
            W, height, W, height);
    if (!np) fputs("<text x=\"20\" y=\"40\">no MFU, throughput or loss metric in these logs</text>\n", f);
    int top = MT;
    for (size_t p = 0; p < 3; p++) {
        if (!shown[p]) continue;
        panel pn = { x0, x1, INFINITY, -INFINITY, top };
        const char *metric = NULL; /* the first log's name for it: what the title calls it, with its unit */
        for (size_t l = 0; l < n; l++) {
            long mi = tprof_log_find_role(logs[l], panels[p].role);
            const int64_t *st;
            const double *v;
            size_t k = mi < 0 ? 0 : tprof_log_points(logs[l], (size_t)mi, &st, &v);
            if (k && !metric) metric = tprof_log_metric(logs[l], (size_t)mi);
            for (size_t i = 0; i < k; i++)
                if (isfinite(v[i])) pn.y0 = fmin(pn.y0, v[i]), pn.y1 = fmax(pn.y1, v[i]);
        }
        if (!(pn.y0 <= pn.y1)) pn.y0 = 0, pn.y1 = 1;
        if (pn.y0 == pn.y1) pn.y0 -= fabs(pn.y0) * 0.05 + 1e-9, pn.y1 += fabs(pn.y1) * 0.05 + 1e-9;
        fprintf(f, "<g>\n<text x=\"%d\" y=\"%d\" font-weight=\"bold\">%s", ML, top + 14, panels[p].title);
        if (metric) {
            fputs(": ", f);
            tprof_xml_text(f, metric, 80);
        }
        fputs("</text>\n", f);
        axes(f, &pn);
        fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#999\"/>\n", ML,
                top + 20, W - ML - MR, PH - 40);
        for (size_t l = 0; l < n; l++) {
            long mi = tprof_log_find_role(logs[l], panels[p].role);
            const int64_t *st;
            const double *v;
            size_t k = mi < 0 ? 0 : tprof_log_points(logs[l], (size_t)mi, &st, &v);
            if (!k) continue;
            polyline(f, st, v, k, x0, x1, pn.y0, pn.y1, top, colours[l % 6]);
            anomalies(f, logs[l], mi, &pn);
        }
        fputs("</g>\n", f);
        top += PH + 10;
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
    if (nanom)
        fprintf(f, "<text x=\"%d\" y=\"%d\" fill=\"#d62728\">o anomaly (trainprof log; its kind on hover)</text>\n",
                ML, top + 14 + (int)n * 16);
    fputs("</svg>\n", f);
    return ferror(f) ? TPROF_EIO : 0;
}
