/* trainprof mem: the timeline files (CSV/JSON series and an SVG of the top
 * call sites stacked) and the --compare output. */
#include "mem_cli.h"
#include "trainprof/source.h"
#include "trainprof/error.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trainprof/report.h"

#define NTOP 10

static const char *const colors[] = { "#4e79a7", "#f28e2c", "#e15759", "#76b7b2", "#59a14f",
                                      "#edc949", "#af7aa1", "#ff9da7", "#9c755f", "#bab0ab" };

/* The function of frame "file:line:function" (the text after its last ':'). */
static size_t frame_function(const char *f, size_t n, const char **out)
{
    size_t k = n;
    while (k > 0 && f[k - 1] != ':') k--;
    *out = f + k;
    return n - k;
}

/* A call site (frames "file:line:function;..." outermost first) as a legend
 * shows it: its innermost K functions, innermost first ("arena_floats <
 * train_step"), the innermost with its file's name and line when WHERE
 * ("forward (model.py:105) < _call_impl"), into BUF; 1 when K covers every
 * frame. */
static int site_label(const char *site, size_t k, int where, char *buf, size_t len)
{
    size_t nf = 1, used = 0;
    for (const char *p = site; *p; p++) nf += *p == ';';
    buf[0] = 0;
    const char *end = site + strlen(site);
    for (size_t i = 0; i < k && i < nf; i++) { /* frame nf-1-i, from the end */
        const char *b = end;
        while (b > site && b[-1] != ';') b--;
        const char *fn;
        size_t fl = frame_function(b, (size_t)(end - b), &fn);
        int w;
        if (!fl) w = snprintf(buf + used, len - used, "%s%.*s", i ? " < " : "", (int)(end - b), b);
        else if (i == 0 && where && fn - 1 > b) { /* "file:line" before ':function', the file's name alone */
            const char *file = fn - 1, *slash = file;
            while (slash > b && slash[-1] != '/') slash--;
            w = snprintf(buf + used, len - used, "%.*s (%.*s)", (int)fl, fn, (int)(file - slash), slash);
        } else
            w = snprintf(buf + used, len - used, "%s%.*s", i ? " < " : "", (int)fl, fn);
        if (w < 0 || (size_t)w >= len - used) break;
        used += (size_t)w;
        end = b > site ? b - 1 : site;
    }
    return k >= nf;
}

/* Legends for the N sites, distinct: each gets more functions while another
 * shows alike, then its innermost frame's file and line, then a number
 * ("#2") where even that shows alike. */
static void site_labels(char *const *sites, size_t n, char (*out)[160])
{
    size_t k[NTOP];
    int whole[NTOP], where[NTOP];
    for (size_t i = 0; i < n; i++) k[i] = 1, where[i] = 0, whole[i] = site_label(sites[i], 1, 0, out[i], sizeof out[i]);
    for (int round = 0; round < 32; round++) {
        int again = 0;
        for (size_t i = 0; i < n; i++)
            for (size_t j = i + 1; j < n; j++) {
                if (strcmp(out[i], out[j])) continue;
                size_t both[2] = { i, j };
                for (int e = 0; e < 2; e++) {
                    size_t x = both[e];
                    if (whole[x] && where[x]) continue;
                    if (whole[x]) where[x] = 1; /* every function shown: add where the innermost is */
                    else k[x]++;
                    whole[x] = site_label(sites[x], k[x], where[x], out[x], sizeof out[x]);
                    again = 1;
                }
            }
        if (!again) break;
    }
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1, c = 1; j < n; j++)
            if (!strcmp(out[i], out[j])) {
                size_t l = strlen(out[j]);
                snprintf(out[j] + l, sizeof out[j] - l, " #%zu", ++c);
            }
}

/* The panel of one device: active memory stacked by call site, reserved
 * dashed, grid lines and labels at round ticks on both axes (a time axis
 * when the snapshot has times, else the allocator's events in order), the
 * peak and each OOM marked, a legend of distinct names. */
static void svg_panel(FILE *f, const tprof_mem_timeline *t, const tprof_mem_device *d, double y0)
{
    const double W = 1000, H = 300, L = 80, R = 20;
    double pw = W - L - R;
    int64_t maxv = 1;
    int timed = t->npts > 0;
    double x0 = INFINITY, x1 = -INFINITY;
    for (size_t i = 0; i < t->npts; i++) {
        if (t->pts[i].active > maxv) maxv = t->pts[i].active;
        if (t->pts[i].reserved > maxv) maxv = t->pts[i].reserved;
        if (t->pts[i].index >= 0 && t->pts[i].time_us < 0) timed = 0;
    }
    int64_t t0 = 0;
    for (size_t i = 0; timed && i < t->npts; i++)
        if (t->pts[i].index >= 0) {
            t0 = t->pts[i].time_us;
            break;
        }
    /* x of a point: seconds since the first event (the state before the
     * history at 0), or its event's place */
#define XV(index, time) (timed ? ((index) < 0 ? 0.0 : (double)((time) - t0) / 1e6) : (double)((index) + 1))
    for (size_t i = 0; i < t->npts; i++) {
        double x = XV(t->pts[i].index, t->pts[i].time_us);
        x0 = fmin(x0, x), x1 = fmax(x1, x);
    }
    if (!(x1 > x0)) x0 = 0, x1 = x0 + 1;
    /* bytes in the unit that keeps the ticks below 1024 of it */
    static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
    int u = 0;
    double unit = 1;
    while (u < 4 && (double)maxv / unit >= 1024) unit *= 1024, u++;
    char a[32], b[32];
    fprintf(f, "<g transform=\"translate(0,%.0f)\">\n", y0);
    fprintf(f, "<text x=\"%.0f\" y=\"20\" font-size=\"14\">device %" PRId64 ": active memory by call site (peak %s), "
               "reserved dashed (peak %s)</text>\n",
            L, d->device, tprof_fmt_bytes(a, sizeof a, d->peak_active), tprof_fmt_bytes(b, sizeof b, d->reserved_peak));
    double top = 30;
#define X(p) (L + pw * (XV((p)->index, (p)->time_us) - x0) / (x1 - x0))
#define Y(v) (top + H - H * (double)(v) / (double)maxv)
    double ticks[12];
    size_t nt = tprof_ticks(0, (double)maxv / unit, 6, ticks);
    for (size_t k = 0; k < nt; k++) {
        double y = Y(ticks[k] * unit);
        fprintf(f, "<line x1=\"%.0f\" x2=\"%.0f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#e5e5e5\"/>", L, L + pw, y, y);
        fprintf(f, "<text x=\"%.0f\" y=\"%.1f\" font-size=\"10\" text-anchor=\"end\">%g %s</text>\n", L - 4, y + 3,
                ticks[k], units[u]);
    }
    nt = tprof_ticks(x0, x1, 10, ticks);
    for (size_t k = 0; k < nt; k++) {
        if (!timed && ticks[k] != floor(ticks[k])) continue;
        double x = L + pw * (ticks[k] - x0) / (x1 - x0);
        fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.0f\" y2=\"%.0f\" stroke=\"#e5e5e5\"/>", x, x, top, top + H);
        fprintf(f, "<text x=\"%.1f\" y=\"%.0f\" font-size=\"10\" text-anchor=\"middle\">%g</text>\n", x, top + H + 13,
                ticks[k]);
    }
    size_t w = t->ntop + 1;
    for (size_t layer = 0; layer < w; layer++) {
        fprintf(f, "<polygon fill=\"%s\" points=\"", layer < t->ntop ? colors[layer % 10] : "#cccccc");
        for (size_t i = 0; i < t->npts; i++) {
            int64_t base = 0;
            for (size_t j = 0; j <= layer; j++) base += t->pts[i].site_bytes[j];
            fprintf(f, "%.1f,%.1f ", X(&t->pts[i]), Y(base));
        }
        for (size_t i = t->npts; i-- > 0;) {
            int64_t base = 0;
            for (size_t j = 0; j < layer; j++) base += t->pts[i].site_bytes[j];
            fprintf(f, "%.1f,%.1f ", X(&t->pts[i]), Y(base));
        }
        fprintf(f, "\"/>\n");
    }
    fprintf(f, "<polyline fill=\"none\" stroke=\"black\" stroke-dasharray=\"4,3\" points=\"");
    for (size_t i = 0; i < t->npts; i++) fprintf(f, "%.1f,%.1f ", X(&t->pts[i]), Y(t->pts[i].reserved));
    fprintf(f, "\"/>\n");
    fprintf(f, "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"black\"/>\n", L, top + H, L + pw, top + H);
    fprintf(f, "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"black\"/>\n", L, top, L, top + H);
    fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"10\" text-anchor=\"end\" fill=\"#666\">%s</text>\n", L + pw,
            top + H + 26, timed ? "time since the device's first event (s)" : "allocator event (no times in the snapshot)");
    /* the peak, and each OOM with a place on the axis */
    if (d->peak_index >= 0 && (!timed || d->peak_time_us >= 0)) {
        double x = L + pw * (XV(d->peak_index, d->peak_time_us) - x0) / (x1 - x0);
        fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.0f\" y2=\"%.0f\" stroke=\"#c0392b\" stroke-dasharray=\"2,2\"/>"
                   "<text x=\"%.1f\" y=\"%.0f\" font-size=\"10\" fill=\"#c0392b\">peak %s</text>\n",
                x, x, top, top + H, x + 3, top + 10, tprof_fmt_bytes(a, sizeof a, d->peak_active));
    }
    for (size_t k = 0; k < d->nooms; k++) {
        const tprof_mem_oom *o = &d->ooms[k];
        if (timed && o->time_us < 0) continue;
        double x = L + pw * (XV((int64_t)o->index, o->time_us) - x0) / (x1 - x0);
        fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.0f\" y2=\"%.0f\" stroke=\"#c0392b\" stroke-width=\"2\"/>"
                   "<text x=\"%.1f\" y=\"%.0f\" font-size=\"10\" fill=\"#c0392b\" text-anchor=\"end\">OOM</text>\n",
                x, x, top, top + H, x - 3, top + 22);
    }
    char labels[NTOP][160];
    site_labels(t->top, t->ntop < NTOP ? t->ntop : NTOP, labels);
    for (size_t layer = 0; layer < w; layer++) {
        double ly = top + H + 44 + 14.0 * (double)layer;
        fprintf(f, "<rect x=\"%.0f\" y=\"%.1f\" width=\"10\" height=\"10\" fill=\"%s\"/>", L, ly - 9,
                layer < t->ntop ? colors[layer % 10] : "#cccccc");
        fprintf(f, "<text x=\"%.0f\" y=\"%.1f\" font-size=\"11\"><title>", L + 14, ly);
        tprof_xml_text(f, layer < t->ntop ? t->top[layer] : "other", 4096);
        fprintf(f, "</title>");
        tprof_xml_text(f, layer < t->ntop && layer < NTOP ? labels[layer] : "other call sites", 140);
        fprintf(f, "</text>\n");
    }
    fprintf(f, "</g>\n");
#undef X
#undef Y
#undef XV
}

/* A timeline's two outputs, written to memory first so that nothing is left
 * half-written on disk. */
typedef struct {
    FILE *data, *svg;
    char *dbuf, *sbuf;
    size_t dlen, slen;
} timeline_files;

static void timeline_discard(timeline_files *t)
{
    if (t->data) fclose(t->data);
    if (t->svg) fclose(t->svg);
    free(t->dbuf);
    free(t->sbuf);
}

static int timeline_open(timeline_files *t)
{
    *t = (timeline_files){ 0 };
    t->data = open_memstream(&t->dbuf, &t->dlen);
    t->svg = open_memstream(&t->sbuf, &t->slen);
    if (t->data && t->svg) return 0;
    timeline_discard(t);
    return -1;
}

/* Closes both streams and writes PREFIX.csv (or .json) and PREFIX.svg.
 * Returns an exit code. */
static int commit_timeline(const char *prefix, int json, timeline_files *t)
{
    fclose(t->data);
    fclose(t->svg);
    size_t pl = strlen(prefix);
    char *path = malloc(pl + 8);
    int e = path ? EXIT_OK : EXIT_INPUT;
    if (path) {
        snprintf(path, pl + 8, "%s.%s", prefix, json ? "json" : "csv");
        e = cli_write_file(path, t->dbuf, t->dlen);
        snprintf(path, pl + 8, "%s.svg", prefix);
        if (!e) e = cli_write_file(path, t->sbuf, t->slen);
    }
    free(path);
    free(t->dbuf);
    free(t->sbuf);
    return e;
}

/* A timeline result as the data file: JSON {"file", devices} or CSV rows. */
static void write_data(FILE *df, const char *path, const tprof_result *res, int json)
{
    if (json) {
        tprof_jw w;
        tprof_jw_init(&w, df);
        cli_json_file_result(&w, path, res, 0);
        return;
    }
    const tprof_rows *rows = tprof_result_table_c(res, 1);
    tprof_rows_csv_header(tprof_rows_desc(rows), NULL, df);
    tprof_rows_csv(rows, NULL, 0, 0, df);
}

int mem_cli_write_timeline(const tprof_mem_snapshot *s, const tprof_mem_report *r, const char *prefix, int json,
                           int depth, size_t points)
{
    timeline_files tf;
    tprof_result *res = tprof_result_new(&tprof_mem_timeline_desc);
    if (!res || timeline_open(&tf)) {
        tprof_result_free(res);
        cli_error("out of memory");
        return EXIT_INPUT;
    }
    FILE *sf = tf.svg;
    double panel = 300 + 30 + 54 + 14.0 * (NTOP + 1) + 20; /* svg_panel: plot, title, axis and legend */
    fprintf(sf, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"1000\" height=\"%.0f\" font-family=\"sans-serif\">\n",
            panel * (double)(r->ndev ? r->ndev : 1));
    fprintf(sf, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
    int rc = 0;
    for (size_t i = 0; i < r->ndev && !rc; i++) {
        tprof_mem_timeline t;
        rc = tprof_mem_timeline_build(s, r->dev[i].device, depth, NTOP, points, &t);
        if (rc) break;
        svg_panel(sf, &t, &r->dev[i], panel * (double)i);
        rc = tprof_mem_timeline_add(res, &t);
        tprof_mem_timeline_free(&t);
    }
    if (!rc) write_data(tf.data, s->path, res, json);
    tprof_result_free(res);
    fprintf(sf, "</svg>\n");
    if (rc) {
        cli_error("%s: out of memory building the timeline", s->path);
        timeline_discard(&tf);
        return EXIT_INPUT;
    }
    return commit_timeline(prefix, json, &tf);
}


/* "+1.5 MiB" or "-512 B" */
static const char *signed_bytes(char *buf, size_t len, int64_t v)
{
    char z[32];
    snprintf(buf, len, "%s%s", v >= 0 ? "+" : "-", tprof_fmt_bytes(z, sizeof z, v >= 0 ? v : -v));
    return buf;
}

int mem_cli_print_compare(const char *a, const char *b, const tprof_mem_compare *c, cli_format fmt, int top)
{
    tprof_result *res;
    int rc = tprof_mem_compare_tables(a, b, c, &res);
    if (rc) return rc;
    if (fmt != FMT_TABLE) {
        rc = cli_print_whole(res, fmt, 0);
        tprof_result_free(res);
        return rc;
    }
    char x[32], y[32], d[40];
    const tprof_rows *t0 = tprof_result_top_c(res), *sites = tprof_result_table_c(res, 0);
    printf("A  %s\nB  %s\n", tprof_rows_at(t0, 0, "a")->v.s, tprof_rows_at(t0, 0, "b")->v.s);
    printf("peak active (all devices): A %s, B %s, %s\n\n",
           tprof_fmt_bytes(x, sizeof x, tprof_rows_at(t0, 0, "peak_a_bytes")->v.i),
           tprof_fmt_bytes(y, sizeof y, tprof_rows_at(t0, 0, "peak_b_bytes")->v.i),
           signed_bytes(d, sizeof d, tprof_rows_at(t0, 0, "peak_delta_bytes")->v.i));
    static const char *const hdr[] = { "B - A", "A", "B", "call site live at the peak" };
    tprof_table *t = tprof_table_new(4, hdr, "rrrl");
    if (!t) {
        tprof_result_free(res);
        return TPROF_ENOMEM;
    }
    tprof_table_limit(t, 3, 110);
    size_t n = tprof_rows_count(sites), moved = 0;
    for (size_t i = 0; i < n && (top <= 0 || i < (size_t)top); i++) {
        char site[1024];
        const tprof_cell *sa = tprof_rows_at(sites, i, "site_a");
        int other_lines = sa && !sa->null;
        moved += (size_t)other_lines;
        if (other_lines) site[0] = '*';
        mem_cli_short_site(tprof_rows_at(sites, i, "site")->v.s, site + other_lines, sizeof site - 1);
        const char *row[] = { signed_bytes(d, sizeof d, tprof_rows_at(sites, i, "delta_bytes")->v.i),
                              tprof_fmt_bytes(x, sizeof x, tprof_rows_at(sites, i, "a_bytes")->v.i),
                              tprof_fmt_bytes(y, sizeof y, tprof_rows_at(sites, i, "b_bytes")->v.i), site };
        tprof_table_row(t, row);
    }
    tprof_table_print(t, stdout);
    if (moved)
        printf("\n* the same functions and files at other line numbers in A (site_a in CSV and JSON): %zu site%s\n",
               moved, moved == 1 ? "" : "s");
    tprof_table_free(t);
    tprof_result_free(res);
    return 0;
}

const char *mem_cli_short_site(const char *site, char *buf, size_t len)
{
    size_t o = 0;
    for (const char *f = site; *f && o + 1 < len;) {
        const char *end = strchr(f, ';');
        if (!end) end = f + strlen(f);
        /* the file is what comes before ":LINE:" ending the frame; keep its base name */
        const char *start = f;
        for (const char *q = f; q < end; q++)
            if (*q == '/') start = q + 1;
        if (start > end) start = f;
        size_t n = (size_t)(end - start);
        if (o + n + 2 > len) n = len - o - 2;
        memcpy(buf + o, start, n);
        o += n;
        if (*end == ';' && o + 1 < len) buf[o++] = ';';
        f = *end ? end + 1 : end;
    }
    buf[o] = 0;
    return buf;
}

/* ---- the [memory] events of a Kineto trace ------------------------------ */

static void ktimeline_svg(FILE *f, const tprof_mem_kreport *r)
{
    const double W = 1000, H = 260, L = 80, R = 20, P = H + 70;
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"1000\" height=\"%.0f\" font-family=\"sans-serif\">\n",
            P * (double)(r->ndev ? r->ndev : 1));
    fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
    for (size_t i = 0; i < r->ndev; i++) {
        const tprof_mem_kdevice *d = &r->dev[i];
        int64_t maxv = 1, t0 = d->npts ? d->pts[0].ts : 0, t1 = t0 + 1;
        for (size_t j = 0; j < d->npts; j++) {
            if (d->pts[j].allocated > maxv) maxv = d->pts[j].allocated;
            if (d->pts[j].reserved > maxv) maxv = d->pts[j].reserved;
            if (d->pts[j].ts > t1) t1 = d->pts[j].ts;
        }
        char a[32], b[32];
        double y0 = P * (double)i + 30;
        fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"14\">device %" PRId64 ": allocated (blue, peak %s), "
                   "reserved (dashed, peak %s)</text>\n",
                L, y0 - 10, d->device, tprof_fmt_bytes(a, sizeof a, d->peak_allocated),
                d->peak_reserved >= 0 ? tprof_fmt_bytes(b, sizeof b, d->peak_reserved) : "unknown");
        for (int pass = 0; pass < 2; pass++) {
            fprintf(f, "<polyline fill=\"none\" stroke=\"%s\"%s points=\"", pass ? "black" : "#4e79a7",
                    pass ? " stroke-dasharray=\"4,3\"" : "");
            for (size_t j = 0; j < d->npts; j++) {
                int64_t v = pass ? d->pts[j].reserved : d->pts[j].allocated;
                if (v < 0) continue;
                fprintf(f, "%.1f,%.1f ", L + (W - L - R) * (double)(d->pts[j].ts - t0) / (double)(t1 - t0),
                        y0 + H - H * (double)v / (double)maxv);
            }
            fprintf(f, "\"/>\n");
        }
        fprintf(f, "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"black\"/>\n", L, y0 + H, W - R, y0 + H);
        fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"10\" text-anchor=\"end\">%s</text>\n", L - 4, y0 + 4,
                tprof_fmt_bytes(a, sizeof a, maxv));
        fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"10\">%s of trace time</text>\n", L, y0 + H + 14,
                tprof_fmt_duration(a, sizeof a, t1 - t0));
    }
    fprintf(f, "</svg>\n");
}

static int ktimeline(const char *path, const tprof_mem_kreport *r, const char *prefix, int json)
{
    timeline_files tf;
    tprof_result *res;
    if (tprof_mem_trace_timeline_tables(r, &res)) return EXIT_INPUT;
    if (timeline_open(&tf)) {
        tprof_result_free(res);
        return EXIT_INPUT;
    }
    write_data(tf.data, path, res, json);
    tprof_result_free(res);
    ktimeline_svg(tf.svg, r);
    return commit_timeline(prefix, json, &tf);
}

/* The text form of a trace's [memory] events. */
static void print_ktrace(const char *path, const tprof_result *res)
{
    char a[32], b[32], c[32];
    printf("%s\n  format        Kineto trace, [memory] events of the profiler's memory view\n", path);
    const tprof_rows *dev = tprof_result_table_c(res, 0);
    for (size_t i = 0; i < tprof_rows_count(dev); i++) {
        int64_t device = tprof_rows_at(dev, i, "device")->v.i, peak_step = tprof_rows_at(dev, i, "peak_step")->v.i;
        int64_t reserved = tprof_rows_at(dev, i, "peak_reserved_bytes")->v.i, res_end = tprof_rows_at(dev, i, "reserved_at_end_bytes")->v.i;
        if (device < 0) printf("\nhost (Device Id %" PRId64 ")\n", device);
        else printf("\ndevice %" PRId64 "\n", device);
        printf("  samples       %" PRId64 "%s\n", tprof_rows_at(dev, i, "samples")->v.i,
               tprof_rows_at(dev, i, "has_totals")->v.i ? "" : " (no Total Allocated: running sum of Bytes from the first event)");
        int64_t peak = tprof_rows_at(dev, i, "peak_allocated_bytes")->v.i;
        printf("  peak alloc.   %s (%" PRId64 " B) at ts %" PRId64 " ns", tprof_fmt_bytes(a, sizeof a, peak), peak,
               tprof_rows_at(dev, i, "peak_allocated_ts_ns")->v.i);
        if (peak_step >= 0) printf(", in ProfilerStep#%" PRId64, peak_step);
        printf("\n");
        if (reserved >= 0)
            printf("  peak reserved %s at ts %" PRId64 " ns\n", tprof_fmt_bytes(b, sizeof b, reserved),
                   tprof_rows_at(dev, i, "peak_reserved_ts_ns")->v.i);
        printf("  at the end    allocated %s", tprof_fmt_bytes(c, sizeof c, tprof_rows_at(dev, i, "allocated_at_end_bytes")->v.i));
        if (res_end >= 0) printf(", reserved %s", tprof_fmt_bytes(a, sizeof a, res_end));
        printf("\n");
        const tprof_rows *st = tprof_rows_child_c(dev, i, 0);
        if (!tprof_rows_count(st)) continue;
        static const char *const hdr[] = { "step", "peak allocated", "peak reserved" };
        tprof_table *t = tprof_table_new(3, hdr, "rrr");
        for (size_t j = 0; t && j < tprof_rows_count(st); j++) {
            char num[32];
            int64_t pa = tprof_rows_at(st, j, "peak_allocated_bytes")->v.i, pr = tprof_rows_at(st, j, "peak_reserved_bytes")->v.i;
            snprintf(num, sizeof num, "%" PRId64, tprof_rows_at(st, j, "step")->v.i);
            const char *row[] = { num, pa >= 0 ? tprof_fmt_bytes(a, sizeof a, pa) : "-",
                                  pr >= 0 ? tprof_fmt_bytes(b, sizeof b, pr) : "-" };
            tprof_table_row(t, row);
        }
        if (t) {
            tprof_table_print(t, stdout);
            tprof_table_free(t);
        }
    }
}

int mem_cli_trace(const char *path, cli_format fmt, tprof_jw *jw, const char *prefix, size_t points)
{
    tprof_read_opts opts = { .keep = TPROF_KEEP_MEMORY };
    tprof_read_result res;
    char *paths[1] = { (char *)path };
    int worst = cli_read_traces(paths, 1, &opts, &res);
    if (!res.trace) return worst;
    tprof_mem_kreport r;
    if (tprof_mem_from_trace(res.trace, points, &r)) {
        cli_error("%s: out of memory", path);
        tprof_trace_free(res.trace);
        return EXIT_INPUT;
    }
    if (!r.ndev) /* mem reads a trace only for its [memory] events; its time is for the trace commands */
        cli_warn("%s: no [memory] events (record with profile_memory=True)" TPROF_HINT_MARK
                 "this is a Chrome/PyTorch profiler trace: for its time use trainprof kernels, summary or "
                 "another trace command; mem reads CUDA memory snapshots (pickles) and traces' [memory] events",
                 path);
    tprof_result *out;
    if (tprof_mem_trace_tables(&r, tprof_trace_meta_get(res.trace)->truncated, &out)) {
        cli_error("%s: out of memory", path);
        tprof_mem_kreport_free(&r);
        tprof_trace_free(res.trace);
        return EXIT_INPUT;
    }
    if (fmt == FMT_JSON)
        cli_json_file_result(jw, path, out, 0);
    else if (fmt == FMT_CSV)
        tprof_rows_csv(tprof_result_table_c(out, 1), &path, 1, 0, stdout);
    else
        print_ktrace(path, out);
    tprof_result_free(out);
    if (prefix) {
        int e = ktimeline(path, &r, prefix, fmt == FMT_JSON);
        if (e > worst) worst = e;
    }
    tprof_mem_kreport_free(&r);
    tprof_trace_free(res.trace);
    return worst;
}

int mem_cli_ascend(const char *path, cli_format fmt, tprof_jw *jw)
{
    char err[400];
    tprof_result *r;
    int rc = tprof_mem_ascend(path, &r, err, sizeof err);
    if (rc && rc != TPROF_ETRUNC) {
        cli_error("%s", err[0] ? err : tprof_strerror(rc));
        return EXIT_INPUT;
    }
    if (rc == TPROF_ETRUNC) cli_warn("%s; results cover the rows before it", err);
    if (fmt == FMT_JSON)
        cli_json_file_result(jw, path, r, 0);
    else if (fmt == FMT_CSV)
        tprof_rows_csv(tprof_result_table_c(r, 2), &path, 1, 0, stdout);
    else {
        const tprof_rows *top = tprof_result_top_c(r), *ops = tprof_result_table_c(r, 1);
        char a[32], b[32];
        const tprof_cell *src = tprof_rows_at(top, 0, "operator_memory");
        int db = !src->null && strstr(src->v.s, ":OP_MEMORY") != NULL;
        printf("== %s ==\nAscend memory (%s)\n\n", path, db ? "the profiler database's MEMORY_RECORD" : "memory_record.csv");
        if (tprof_rows_print_table(tprof_result_table_c(r, 0), 0, stdout)) rc = TPROF_ENOMEM;
        const tprof_cell *peak = tprof_rows_at(top, 0, "peak_bytes");
        if (!peak->null && !tprof_rows_at(top, 0, "live_bytes")->null) {
            printf("\nat %s's peak allocated, %s on %s: %" PRId64 " allocations of %s live, %s\n",
                   tprof_rows_str(top, 0, "peak_component"), tprof_fmt_bytes(a, sizeof a, peak->v.i),
                   tprof_rows_str(top, 0, "peak_device"), tprof_rows_int(top, 0, "live_allocations"),
                   db ? "OP_MEMORY" : "operator_memory.csv", tprof_fmt_bytes(b, sizeof b, tprof_rows_int(top, 0, "live_bytes")));
            if (tprof_rows_count(ops) && tprof_rows_print_table(ops, 10, stdout)) rc = TPROF_ENOMEM;
            if (tprof_rows_count(ops) > 10) printf("(the 10 largest of %zu ops; --format json has them all)\n", tprof_rows_count(ops));
        } else if (!peak->null)
            printf("\nno operator_memory.csv beside it (nor a database's OP_MEMORY): the ops holding memory at the "
                   "peak are not known\n");
    }
    tprof_result_free(r);
    return rc == TPROF_ETRUNC ? EXIT_TRUNC : rc ? EXIT_INPUT : EXIT_OK;
}
