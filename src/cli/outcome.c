/* One input's outcome in a trace command (cli_run), as bytes: how its read
 * went, how its analysis went, its rank and its results (parts) in the
 * results' own text form (tprof_result_write). Every run passes the results
 * through this form, whether one process analysed every input or
 * trainprof-mpi spread them over many: the results the root prints are read
 * back from the same bytes either way, so its output cannot depend on where
 * an input was analysed. */
#include <inttypes.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "trainprof/analysis.h"
#include "trainprof/error.h"

#define OUTCOME_FORM 1

/* A memory stream's bytes after its close: cut to their length (the
 * stream's buffer grows ahead of them, and many are held until sent), or
 * freed after an error RC. */
static int closed(int rc, char **buf, size_t *len)
{
    if (rc) {
        free(*buf);
        *buf = NULL;
        *len = 0;
        return rc;
    }
    char *fit = realloc(*buf, *len + 1); /* with the stream's closing NUL */
    if (fit) *buf = fit;
    return 0;
}

int cli_parts_write(tprof_result *const *parts, size_t np, char **buf, size_t *len)
{
    *buf = NULL;
    *len = 0;
    FILE *f = open_memstream(buf, len);
    if (!f) return TPROF_ENOMEM;
    __fsetlocking(f, FSETLOCKING_BYCALLER); /* this thread's own stream: no lock per character */
    int rc = 0;
    for (size_t p = 0; !rc && p < np; p++) {
        if (!parts[p]) {
            fputs("part -\n", f);
            continue;
        }
        fprintf(f, "part %s\n", tprof_result_desc_of(parts[p])->name);
        rc = tprof_result_write(parts[p], f);
    }
    if (ferror(f) && !rc) rc = TPROF_ENOMEM;
    if (fclose(f) && !rc) rc = TPROF_ENOMEM;
    return closed(rc, buf, len);
}

/* The parts from F. */
static int parts_from(FILE *f, tprof_result **parts, size_t np, char *err, size_t errlen)
{
    char name[128];
    int rc = 0;
    for (size_t p = 0; !rc && p < np; p++) {
        if (fscanf(f, "part %127s", name) != 1 || fgetc(f) != '\n') {
            snprintf(err, errlen, "part %zu missing", p);
            rc = TPROF_EFORMAT;
        } else if (strcmp(name, "-")) {
            const tprof_result_desc *d = tprof_result_desc_find(name);
            if (!d) {
                snprintf(err, errlen, "part %zu: no result named %s", p, name);
                rc = TPROF_EFORMAT;
            } else
                rc = tprof_result_read(&parts[p], d, f, err, errlen);
        }
    }
    return rc;
}

int cli_parts_read(const char *buf, size_t len, tprof_result **parts, size_t np, char *err, size_t errlen)
{
    for (size_t p = 0; p < np; p++) parts[p] = NULL;
    FILE *f = len ? fmemopen((void *)buf, len, "r") : NULL;
    if (!f) {
        snprintf(err, errlen, "no parts");
        return len ? TPROF_ENOMEM : TPROF_EFORMAT;
    }
    __fsetlocking(f, FSETLOCKING_BYCALLER);
    int rc = parts_from(f, parts, np, err, errlen);
    fclose(f);
    if (rc)
        for (size_t p = 0; p < np; p++) tprof_result_free(parts[p]), parts[p] = NULL;
    return rc;
}

int cli_outcome_write(const cli_outcome *o, const char *parts, size_t parts_len, char **buf, size_t *len)
{
    *buf = NULL;
    *len = 0;
    FILE *f = open_memstream(buf, len);
    if (!f) return TPROF_ENOMEM;
    size_t held = o->held ? strlen(o->held) : 0;
    fprintf(f, "tprof-outcome %d %d %d %d %" PRId64 " %" PRId64 " %zu\n", OUTCOME_FORM, o->read_rc, o->read_exit,
            o->job_rc, o->rank, o->claimed, held);
    if (held) fwrite(o->held, 1, held, f);
    fputc('\n', f);
    if (parts_len) fwrite(parts, 1, parts_len, f);
    int rc = ferror(f) ? TPROF_ENOMEM : 0;
    if (fclose(f) && !rc) rc = TPROF_ENOMEM;
    return closed(rc, buf, len);
}

int cli_outcome_head(const char *buf, size_t len, cli_outcome *o, size_t *parts_at, char *err, size_t errlen)
{
    memset(o, 0, sizeof *o);
    *parts_at = len;
    FILE *f = fmemopen((void *)buf, len, "r");
    if (!f) return TPROF_ENOMEM;
    int form = 0;
    size_t held = 0;
    int rc = 0;
    if (fscanf(f, "tprof-outcome %d %d %d %d %" SCNd64 " %" SCNd64 " %zu", &form, &o->read_rc, &o->read_exit,
               &o->job_rc, &o->rank, &o->claimed, &held) != 7 ||
        form != OUTCOME_FORM || fgetc(f) != '\n' || held > len) {
        snprintf(err, errlen, "not an outcome of this version");
        rc = TPROF_EFORMAT;
    }
    if (!rc && held) {
        o->held = malloc(held + 1);
        if (!o->held) rc = TPROF_ENOMEM;
        else if (fread(o->held, 1, held, f) != held) {
            snprintf(err, errlen, "its held steps are cut");
            rc = TPROF_EFORMAT;
        } else
            o->held[held] = 0;
    }
    if (!rc && fgetc(f) != '\n') {
        snprintf(err, errlen, "no line after its header");
        rc = TPROF_EFORMAT;
    }
    if (!rc) *parts_at = (size_t)ftell(f); /* an input that was not read has no parts: LEN */
    fclose(f);
    if (rc) cli_outcome_free(o, NULL, 0);
    return rc;
}

int cli_outcome_read(const char *buf, size_t len, cli_outcome *o, tprof_result **parts, size_t np, char *err,
                     size_t errlen)
{
    for (size_t p = 0; p < np; p++) parts[p] = NULL;
    size_t at;
    int rc = cli_outcome_head(buf, len, o, &at, err, errlen);
    if (!rc && at < len) rc = cli_parts_read(buf + at, len - at, parts, np, err, errlen);
    if (rc) cli_outcome_free(o, parts, np);
    return rc;
}

void cli_outcome_free(cli_outcome *o, tprof_result **parts, size_t np)
{
    free(o->held);
    o->held = NULL;
    for (size_t p = 0; parts && p < np; p++) {
        tprof_result_free(parts[p]);
        parts[p] = NULL;
    }
}

int cli_worse_exit(int a, int b)
{
    /* a usage error, then unreadable input, then a truncated one */
    static const int rank_of[] = { [EXIT_OK] = 0, [EXIT_TRUNC] = 1, [EXIT_INPUT] = 2, [EXIT_USAGE] = 3 };
    int ra = a >= 0 && a <= EXIT_TRUNC ? rank_of[a] : 4, rb = b >= 0 && b <= EXIT_TRUNC ? rank_of[b] : 4;
    return rb > ra ? b : a;
}
