/* Re-emits a JSON document through trainprof's tokenizer as compact JSON,
 * so tests can compare it with an independent parser (Python's json).
 * Numbers are written exactly as read; strings re-escaped. */
#include <stdio.h>
#include <stdlib.h>

#include "trainprof/error.h"
#include "trainprof/json.h"
#include "trainprof/source.h"

static ssize_t rd(void *ctx, void *buf, size_t cap) { return tprof_source_read(ctx, buf, cap); }

static void put_str(const char *s, size_t n)
{
    putchar('"');
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') printf("\\%c", c);
        else if (c < 0x20) printf("\\u%04x", c);
        else putchar(c);
    }
    putchar('"');
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: json_dump FILE\n");
        return 2;
    }
    char err[512];
    tprof_source *src;
    if (tprof_source_open(&src, argv[1], err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        return 3;
    }
    tprof_json *j;
    if (tprof_json_open(&j, rd, src, argv[1])) return 3;
    tprof_json_token t;
    int need_comma = 0, rc;
    while ((rc = tprof_json_next(j, &t)) == 0 && t.type != TPROF_JSON_EOF) {
        int closing = t.type == TPROF_JSON_OBJ_END || t.type == TPROF_JSON_ARR_END;
        if (need_comma && !closing) putchar(',');
        need_comma = 1;
        switch (t.type) {
        case TPROF_JSON_OBJ_BEGIN: putchar('{'); need_comma = 0; break;
        case TPROF_JSON_ARR_BEGIN: putchar('['); need_comma = 0; break;
        case TPROF_JSON_OBJ_END: putchar('}'); break;
        case TPROF_JSON_ARR_END: putchar(']'); break;
        case TPROF_JSON_KEY: put_str(t.text, t.len); putchar(':'); need_comma = 0; break;
        case TPROF_JSON_STRING: put_str(t.text, t.len); break;
        case TPROF_JSON_NUMBER: fwrite(t.text, 1, t.len, stdout); break;
        case TPROF_JSON_TRUE: fputs("true", stdout); break;
        case TPROF_JSON_FALSE: fputs("false", stdout); break;
        case TPROF_JSON_NULL: fputs("null", stdout); break;
        default: break;
        }
    }
    putchar('\n');
    if (rc) fprintf(stderr, "%s\n", tprof_json_errmsg(j));
    tprof_json_close(j);
    tprof_source_close(src);
    return rc == 0 ? 0 : rc == TPROF_ETRUNC ? 4 : 3;
}
