/* libFuzzer target: the streaming tokenizer, fed in small chunks from a
 * small first window, so that window refills, growth and token restarts
 * are exercised (and no 1 MiB window is allocated per input). */
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include "trainprof/json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct {
    const uint8_t *p;
    size_t n, pos, chunk;
} feed;

static ssize_t rd(void *ctx, void *buf, size_t cap)
{
    feed *f = ctx;
    size_t k = f->n - f->pos;
    if (k > f->chunk) k = f->chunk;
    if (k > cap) k = cap;
    memcpy(buf, f->p + f->pos, k);
    f->pos += k;
    return (ssize_t)k;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0) return 0;
    /* the first byte picks the chunk size, 1..256 bytes per read, and (its
     * bits mixed) the first window, 64 B..4 KiB */
    feed f = { data + 1, size - 1, 0, (size_t)data[0] + 1 };
    size_t window = (size_t)64 << ((data[0] * 37u >> 3) % 7);
    tprof_json *j;
    if (tprof_json_open_sized(&j, rd, &f, "fuzz", window)) return 0;
    tprof_json_token t;
    int depth = 0;
    while (tprof_json_next(j, &t) == 0 && t.type != TPROF_JSON_EOF) {
        if (t.type == TPROF_JSON_OBJ_BEGIN || t.type == TPROF_JSON_ARR_BEGIN) depth++;
        if (t.type == TPROF_JSON_OBJ_END || t.type == TPROF_JSON_ARR_END) depth--;
        if (depth < 0 || depth > TPROF_JSON_MAX_DEPTH) __builtin_trap();
        if (t.type == TPROF_JSON_NUMBER) {
            int64_t v;
            tprof_json_parse_scaled(t.text, t.len, 3, &v);
            tprof_json_parse_int(t.text, t.len, &v);
        }
    }
    tprof_json_close(j);
    return 0;
}
