#include "trainprof/report.h"
#include "../json/scan.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

void tprof_json_escape(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        unsigned char c = *p;
        if (c == '"') fputs("\\\"", f);
        else if (c == '\\') fputs("\\\\", f);
        else if (c == '\n') fputs("\\n", f);
        else if (c == '\r') fputs("\\r", f);
        else if (c == '\t') fputs("\\t", f);
        else if (c < 0x20) fprintf(f, "\\u%04x", c);
        else fputc(c, f);
    }
    fputc('"', f);
}

void tprof_csv_field(FILE *f, const char *s)
{
    int quote = 0;
    for (const char *p = s; *p; p++)
        if (*p == ',' || *p == '"' || *p == '\n' || *p == '\r') quote = 1;
    if (!quote) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (const char *p = s; *p; p++) {
        if (*p == '"') fputc('"', f);
        fputc(*p, f);
    }
    fputc('"', f);
}

void tprof_jw_init(tprof_jw *w, FILE *f)
{
    w->f = f;
    w->depth = 0;
    w->first[0] = 1;
    w->after_key = 0;
}

/* Separator before a value or key at the current depth. */
static void sep(tprof_jw *w)
{
    if (w->after_key) {
        w->after_key = 0;
        return;
    }
    if (!w->first[w->depth]) fputc(',', w->f);
    w->first[w->depth] = 0;
}

static void open(tprof_jw *w, char c)
{
    sep(w);
    fputc(c, w->f);
    if (w->depth < TPROF_JW_MAX_DEPTH) w->depth++;
    w->first[w->depth] = 1;
}

static void close_(tprof_jw *w, char c)
{
    fputc(c, w->f);
    if (w->depth > 0) w->depth--;
    if (w->depth == 0) fputc('\n', w->f);
}

void tprof_jw_obj(tprof_jw *w) { open(w, '{'); }
void tprof_jw_obj_end(tprof_jw *w) { close_(w, '}'); }
void tprof_jw_arr(tprof_jw *w) { open(w, '['); }
void tprof_jw_arr_end(tprof_jw *w) { close_(w, ']'); }

void tprof_jw_key(tprof_jw *w, const char *k)
{
    sep(w);
    tprof_json_escape(w->f, k);
    fputc(':', w->f);
    w->after_key = 1;
}

void tprof_jw_str(tprof_jw *w, const char *s)
{
    sep(w);
    if (s) tprof_json_escape(w->f, s);
    else fputs("null", w->f);
}

void tprof_jw_int(tprof_jw *w, int64_t v)
{
    sep(w);
    fprintf(w->f, "%" PRId64, v);
}

void tprof_jw_uint(tprof_jw *w, uint64_t v)
{
    sep(w);
    fprintf(w->f, "%" PRIu64, v);
}

void tprof_jw_double(tprof_jw *w, double v)
{
    sep(w);
    if (isfinite(v)) fprintf(w->f, "%.17g", v);
    else fputs("null", w->f);
}

void tprof_jw_bool(tprof_jw *w, int v)
{
    sep(w);
    fputs(v ? "true" : "false", w->f);
}

void tprof_jw_null(tprof_jw *w)
{
    sep(w);
    fputs("null", w->f);
}

void tprof_jw_kstr(tprof_jw *w, const char *k, const char *s)
{
    tprof_jw_key(w, k);
    tprof_jw_str(w, s);
}

void tprof_jw_kint(tprof_jw *w, const char *k, int64_t v)
{
    tprof_jw_key(w, k);
    tprof_jw_int(w, v);
}

void tprof_jw_kuint(tprof_jw *w, const char *k, uint64_t v)
{
    tprof_jw_key(w, k);
    tprof_jw_uint(w, v);
}

void tprof_jw_kdouble(tprof_jw *w, const char *k, double v)
{
    tprof_jw_key(w, k);
    tprof_jw_double(w, v);
}

void tprof_jw_kbool(tprof_jw *w, const char *k, int v)
{
    tprof_jw_key(w, k);
    tprof_jw_bool(w, v);
}

void tprof_xml_text(FILE *f, const char *s, size_t max)
{
    const uint8_t *p = (const uint8_t *)s, *end = p + strlen(s);
    size_t used = 0;
    while (p < end) {
        int n = *p < 0x80 ? 1 : js_utf8_len(p, end);
        if (used + (size_t)(n > 0 ? n : 1) > max) break;
        used += (size_t)(n > 0 ? n : 1);
        if (n <= 0 || (*p < 0x20)) { /* broken UTF-8 or a control byte: not allowed in XML */
            fputc('?', f);
            p++;
            continue;
        }
        switch (*p) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&apos;", f); break;
        default: fwrite(p, 1, (size_t)n, f);
        }
        p += n;
    }
    if (p < end) fputs("...", f);
}
