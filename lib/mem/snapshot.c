/* The snapshot model: segments, blocks, per-device traces and annotations
 * taken from a decoded pickle, in any of the layouts PyTorch has written. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trainprof/error.h"
#include "trainprof/mem.h"

static const char *const action_names[TPROF_MEM_ACTION_COUNT] = {
    "alloc",       "free_requested", "free_completed", "free",     "segment_alloc", "segment_free",
    "segment_map", "segment_unmap",  "snapshot",       "oom",      "annotate",      "other",
};

const char *tprof_mem_action_name(tprof_mem_action a)
{
    return (unsigned)a < TPROF_MEM_ACTION_COUNT ? action_names[a] : "other";
}

const char *tprof_snap_form_name(tprof_snap_form f)
{
    switch (f) {
    case TPROF_SNAP_CURRENT: return "current (segments, device_traces, allocator_settings)";
    case TPROF_SNAP_TRACES: return "segments and device_traces";
    case TPROF_SNAP_HISTORY: return "2023 form (block history)";
    case TPROF_SNAP_SEGMENTS: return "list of segments";
    }
    return "?";
}

static uint8_t action_of(const tprof_pickle *pk, tprof_pv v)
{
    size_t n;
    const char *s = tprof_pickle_str(pk, v, &n);
    if (!s) return TPROF_MEM_OTHER;
    for (int a = 0; a < TPROF_MEM_OTHER; a++)
        if (strlen(action_names[a]) == n && !memcmp(action_names[a], s, n)) return (uint8_t)a;
    return TPROF_MEM_OTHER;
}

static uint8_t state_of(const tprof_pickle *pk, tprof_pv v)
{
    if (tprof_pickle_str_eq(pk, v, "inactive")) return TPROF_BLOCK_INACTIVE;
    if (tprof_pickle_str_eq(pk, v, "active_allocated")) return TPROF_BLOCK_ACTIVE_ALLOCATED;
    if (tprof_pickle_str_eq(pk, v, "active_pending_free")) return TPROF_BLOCK_ACTIVE_PENDING_FREE;
    if (tprof_pickle_str_eq(pk, v, "active_awaiting_free")) return TPROF_BLOCK_ACTIVE_AWAITING_FREE;
    return TPROF_BLOCK_UNKNOWN;
}

static int has_key(const tprof_pickle *pk, tprof_pv d, const char *k)
{
    size_t n = tprof_pickle_len(pk, d);
    for (size_t i = 0; i < n; i++)
        if (tprof_pickle_str_eq(pk, tprof_pickle_dict_key(pk, d, i), k)) return 1;
    return 0;
}

static int64_t geti(const tprof_pickle *pk, tprof_pv d, const char *k, int64_t dflt)
{
    return tprof_pickle_int(pk, tprof_pickle_get(pk, d, k), dflt);
}

/* The keys every segment has, in every layout PyTorch has written. */
static const char *const segment_keys[] = { "address", "total_size", "blocks" };

static const char *missing_key(const tprof_pickle *pk, tprof_pv d)
{
    for (size_t k = 0; k < sizeof segment_keys / sizeof *segment_keys; k++)
        if (!has_key(pk, d, segment_keys[k])) return segment_keys[k];
    return NULL;
}

/* A bare list is a snapshot when its items are segments (an empty list is
 * one with no segments). A segment the cut of a truncated file fell inside
 * may lack keys and is let through. Else *BAD is the first other item. */
static int segment_list(const tprof_pickle *pk, tprof_pv list, size_t *bad)
{
    size_t n = tprof_pickle_len(pk, list);
    for (size_t i = 0; i < n; i++) {
        tprof_pv v = tprof_pickle_item(pk, list, i);
        if (tprof_pickle_type(pk, v) == TPROF_PK_DICT && (tprof_pickle_partial(pk, v) || !missing_key(pk, v)))
            continue;
        *bad = i;
        return 0;
    }
    return 1;
}

static int add_segments(tprof_mem_snapshot *s, tprof_pv list)
{
    const tprof_pickle *pk = s->pk;
    size_t n = tprof_pickle_len(pk, list), nb = 0;
    for (size_t i = 0; i < n; i++) nb += tprof_pickle_len(pk, tprof_pickle_get(pk, tprof_pickle_item(pk, list, i), "blocks"));
    /* memo references can repeat one list of blocks under many segments: a
     * few KiB of pickle would become billions of records. A real snapshot's
     * blocks are distinct values, so there are never more of them than values. */
    if (nb > tprof_pickle_nvalues(pk) + 16) return TPROF_ELIMIT;
    s->segs = calloc(n ? n : 1, sizeof *s->segs);
    s->blocks = calloc(nb ? nb : 1, sizeof *s->blocks);
    if (!s->segs || !s->blocks) return TPROF_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        tprof_pv sv = tprof_pickle_item(pk, list, i);
        if (tprof_pickle_type(pk, sv) != TPROF_PK_DICT) {
            s->skipped++;
            continue;
        }
        /* a segment cut inside its block list (its last key) keeps its
         * complete blocks; one cut before it lacks fields, left out */
        if (tprof_pickle_partial(pk, sv) && !has_key(pk, sv, "blocks")) {
            s->cut_entries++;
            continue;
        }
        tprof_mem_segment *g = &s->segs[s->nsegs++];
        g->device = geti(pk, sv, "device", 0);
        g->address = tprof_pickle_uint(pk, tprof_pickle_get(pk, sv, "address"));
        g->total_size = geti(pk, sv, "total_size", 0);
        g->allocated_size = geti(pk, sv, "allocated_size", 0);
        g->active_size = geti(pk, sv, "active_size", 0);
        g->requested_size = geti(pk, sv, "requested_size", 0);
        g->stream = geti(pk, sv, "stream", 0);
        g->expandable = (int)geti(pk, sv, "is_expandable", 0);
        g->large = tprof_pickle_str_eq(pk, tprof_pickle_get(pk, sv, "segment_type"), "large");
        g->first_block = s->nblocks;
        tprof_pv bl = tprof_pickle_get(pk, sv, "blocks");
        size_t m = tprof_pickle_len(pk, bl);
        uint64_t addr = g->address;
        for (size_t j = 0; j < m; j++) {
            tprof_pv bv = tprof_pickle_item(pk, bl, j);
            if (tprof_pickle_type(pk, bv) != TPROF_PK_DICT) {
                s->skipped++;
                continue;
            }
            if (tprof_pickle_partial(pk, bv)) {
                s->cut_entries++; /* a block cut in half by truncation */
                continue;
            }
            tprof_mem_block *b = &s->blocks[s->nblocks++];
            b->addr = addr; /* as the viewer: blocks tile their segment */
            b->size = geti(pk, bv, "size", 0);
            b->state = state_of(pk, tprof_pickle_get(pk, bv, "state"));
            int64_t req = geti(pk, bv, "requested_size", 0);
            if (has_key(pk, bv, "frames")) {
                b->frames = tprof_pickle_get(pk, bv, "frames");
                b->requested_size = has_key(pk, bv, "requested_size") ? req : b->size;
            } else {
                /* legacy: frames and the real size in the first history entry */
                tprof_pv h0 = tprof_pickle_item(pk, tprof_pickle_get(pk, bv, "history"), 0);
                if (tprof_pickle_type(pk, h0) == TPROF_PK_DICT) {
                    b->frames = tprof_pickle_get(pk, h0, "frames");
                    b->requested_size = req ? req : geti(pk, h0, "real_size", 0);
                } else {
                    b->frames = TPROF_PV_NONE;
                    b->requested_size = req ? req : b->size;
                }
            }
            addr += (uint64_t)b->size;
        }
        g->nblocks = s->nblocks - g->first_block;
    }
    return 0;
}

static int add_traces(tprof_mem_snapshot *s, tprof_pv list)
{
    const tprof_pickle *pk = s->pk;
    size_t n = tprof_pickle_len(pk, list);
    s->traces = calloc(n ? n : 1, sizeof *s->traces);
    s->ntrace = calloc(n ? n : 1, sizeof *s->ntrace);
    if (!s->traces || !s->ntrace) return TPROF_ENOMEM;
    s->ntraces = n;
    uint64_t total = 0; /* as for blocks: trace entries repeated through the memo are refused */
    for (size_t d = 0; d < n; d++) total += tprof_pickle_len(pk, tprof_pickle_item(pk, list, d));
    if (total > tprof_pickle_nvalues(pk) + 16) return TPROF_ELIMIT;
    for (size_t d = 0; d < n; d++) {
        tprof_pv tl = tprof_pickle_item(pk, list, d);
        size_t m = tprof_pickle_len(pk, tl);
        tprof_mem_event *ev = malloc((m ? m : 1) * sizeof *ev);
        if (!ev) return TPROF_ENOMEM;
        s->traces[d] = ev;
        size_t k = 0;
        for (size_t i = 0; i < m; i++) {
            tprof_pv e = tprof_pickle_item(pk, tl, i);
            if (tprof_pickle_partial(pk, e)) {
                s->cut_entries++; /* the entry the cut fell inside: only complete ones count */
                continue;
            }
            /* one pass over the entry's keys (the hot loop of a large file) */
            tprof_mem_event x = { .time_us = -1, .device_free = -1, .frames = TPROF_PV_NONE };
            int has_action = 0;
            size_t np = tprof_pickle_len(pk, e);
            if (tprof_pickle_type(pk, e) != TPROF_PK_DICT) np = 0;
            for (size_t j = 0; j < np; j++) {
                size_t kl;
                const char *kk = tprof_pickle_str(pk, tprof_pickle_dict_key(pk, e, j), &kl);
                tprof_pv v = tprof_pickle_dict_value(pk, e, j);
                if (!kk) continue;
                switch (kl) {
                case 4:
                    if (!memcmp(kk, "addr", 4)) x.addr = tprof_pickle_uint(pk, v);
                    else if (!memcmp(kk, "size", 4)) x.size = tprof_pickle_int(pk, v, 0);
                    break;
                case 6:
                    if (!memcmp(kk, "action", 6)) {
                        has_action = tprof_pickle_type(pk, v) == TPROF_PK_STR;
                        x.action = action_of(pk, v);
                    } else if (!memcmp(kk, "frames", 6)) x.frames = v;
                    else if (!memcmp(kk, "stream", 6)) x.stream = tprof_pickle_int(pk, v, 0);
                    break;
                case 7:
                    if (!memcmp(kk, "time_us", 7)) x.time_us = tprof_pickle_int(pk, v, -1);
                    break;
                case 11:
                    if (!memcmp(kk, "device_free", 11)) x.device_free = tprof_pickle_int(pk, v, -1);
                    break;
                default:
                    break;
                }
            }
            if (!has_action) {
                s->skipped++; /* not an entry */
                continue;
            }
            ev[k++] = x;
        }
        s->ntrace[d] = k;
    }
    return 0;
}

static int add_annotations(tprof_mem_snapshot *s, tprof_pv list)
{
    const tprof_pickle *pk = s->pk;
    size_t n = tprof_pickle_len(pk, list);
    s->ann = calloc(n ? n : 1, sizeof *s->ann);
    if (!s->ann) return TPROF_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        tprof_pv a = tprof_pickle_item(pk, list, i);
        if (tprof_pickle_partial(pk, a)) continue; /* cut in half */
        tprof_pv name = tprof_pickle_get(pk, a, "name");
        if (tprof_pickle_type(pk, name) != TPROF_PK_STR) continue;
        s->ann[s->nann++] = (tprof_mem_annotation){
            .device = geti(pk, a, "device", 0),
            .time_us = geti(pk, a, "time_us", -1),
            .start = tprof_pickle_str_eq(pk, tprof_pickle_get(pk, a, "stage"), "START"),
            .name = name,
        };
    }
    return 0;
}

int tprof_mem_snapshot_from_pickle(tprof_mem_snapshot **out, tprof_pickle *pk, const char *path, char *errbuf,
                                   size_t errlen)
{
    *out = NULL;
    tprof_mem_snapshot *s = calloc(1, sizeof *s);
    if (!s) {
        tprof_pickle_close(pk);
        return TPROF_ENOMEM;
    }
    s->pk = pk;
    s->path = path;
    s->truncated = tprof_pickle_truncated(pk);
    tprof_pv root = tprof_pickle_root(pk);
    tprof_pk_type t = tprof_pickle_type(pk, root);
    int rc = 0;
    size_t bad = 0;
    if (t == TPROF_PK_LIST && !segment_list(pk, root, &bad)) {
        if (errbuf && errlen) {
            tprof_pv b = tprof_pickle_item(pk, root, bad);
            char what[64];
            if (tprof_pickle_type(pk, b) == TPROF_PK_DICT)
                snprintf(what, sizeof what, "a dict without \"%s\"", missing_key(pk, b));
            else
                snprintf(what, sizeof what, "of type %s", tprof_pickle_type_name(tprof_pickle_type(pk, b)));
            snprintf(errbuf, errlen,
                     "%s: byte 0: not a memory snapshot: the pickle holds a list whose item %zu is %s; expected "
                     "a list of segments (dicts with \"address\", \"total_size\" and \"blocks\") or a dict with "
                     "\"segments\" and \"device_traces\"",
                     path, bad, what);
        }
        tprof_mem_snapshot_close(s);
        return TPROF_EFORMAT;
    }
    if (t == TPROF_PK_LIST) {
        s->form = TPROF_SNAP_SEGMENTS;
        rc = add_segments(s, root);
        if (!rc) rc = add_traces(s, TPROF_PV_NONE);
    } else if (t == TPROF_PK_DICT && (has_key(pk, root, "segments") || has_key(pk, root, "device_traces"))) {
        rc = add_segments(s, tprof_pickle_get(pk, root, "segments"));
        if (!rc) rc = add_traces(s, tprof_pickle_get(pk, root, "device_traces"));
        if (!rc) rc = add_annotations(s, tprof_pickle_get(pk, root, "external_annotations"));
        int history = 0; /* (after a refusal the lists are not walked) */
        for (size_t i = 0; !rc && !history && i < tprof_pickle_len(pk, tprof_pickle_get(pk, root, "segments")); i++) {
            tprof_pv bl = tprof_pickle_get(pk, tprof_pickle_item(pk, tprof_pickle_get(pk, root, "segments"), i), "blocks");
            for (size_t j = 0; !history && j < tprof_pickle_len(pk, bl); j++)
                history = has_key(pk, tprof_pickle_item(pk, bl, j), "history");
        }
        s->form = has_key(pk, root, "allocator_settings") ? TPROF_SNAP_CURRENT
                  : history                               ? TPROF_SNAP_HISTORY
                                                          : TPROF_SNAP_TRACES;
    } else {
        if (errbuf && errlen)
            snprintf(errbuf, errlen,
                     "%s: byte 0: not a memory snapshot: the pickle holds a %s, expected a dict with "
                     "\"segments\" and \"device_traces\" or a list of segments",
                     path, tprof_pickle_type_name(t));
        tprof_mem_snapshot_close(s);
        return TPROF_EFORMAT;
    }
    if (rc) {
        if (errbuf && errlen) {
            if (rc == TPROF_ELIMIT)
                snprintf(errbuf, errlen,
                         "%s: not a memory snapshot PyTorch writes: its segments or device traces repeat the same "
                         "lists through pickle references (more records than the %llu values in the file); refused",
                         path, (unsigned long long)tprof_pickle_nvalues(pk));
            else
                snprintf(errbuf, errlen, "%s: out of memory", path);
        }
        tprof_mem_snapshot_close(s);
        return rc;
    }
    *out = s;
    return 0;
}

int tprof_mem_snapshot_open(tprof_mem_snapshot **out, const char *path, char *errbuf, size_t errlen)
{
    return tprof_mem_snapshot_open_opts(out, path, NULL, errbuf, errlen);
}

int tprof_mem_snapshot_open_opts(tprof_mem_snapshot **out, const char *path, const tprof_pickle_opts *o,
                                 char *errbuf, size_t errlen)
{
    *out = NULL;
    tprof_pickle *pk;
    int rc = tprof_pickle_load_opts(&pk, path, o, errbuf, errlen);
    if (rc && rc != TPROF_ETRUNC) return rc;
    uint64_t bytes = tprof_pickle_bytes(pk);
    char cut[1024] = "";
    if (rc && errbuf && errlen) snprintf(cut, sizeof cut, "%s", errbuf);
    int mrc = tprof_mem_snapshot_from_pickle(out, pk, path, errbuf, errlen);
    if (mrc) {
        /* a cut so early that what came before it is no snapshot */
        size_t used = errbuf && errlen ? strlen(errbuf) : 0;
        if (rc && used + 1 < errlen)
            snprintf(errbuf + used, errlen - used, " (the file is cut short after %llu bytes)",
                     (unsigned long long)bytes);
        return mrc;
    }
    if (rc && errbuf && errlen) snprintf(errbuf, errlen, "%s", cut);
    return rc; /* TPROF_ETRUNC keeps its message */
}

void tprof_mem_snapshot_close(tprof_mem_snapshot *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->ntraces; i++) free(s->traces[i]);
    free(s->traces);
    free(s->ntrace);
    free(s->segs);
    free(s->blocks);
    free(s->ann);
    tprof_pickle_close(s->pk);
    free(s);
}

static int is_python(const char *f, size_t n) { return n >= 3 && !memcmp(f + n - 3, ".py", 3); }

static int has_part(const char *s, size_t n, const char *w)
{
    return s && memmem(s, n, w, strlen(w)) != NULL;
}

/* A frame of PyTorch's own machinery, left out of call sites as PyTorch's
 * memory viewer leaves it out of its stacks (MemoryViz.js and
 * torch/cuda/_memory_viz.py: a function name or a file name holding one of
 * these parts), and the caching allocator's own frames, which the viewer
 * shows but which are in every native stack. docs/METRICS.md, call sites. */
static int internal_frame(const char *name, size_t nl, const char *file, size_t fl)
{
    static const char *const names[] = { "unwind::unwind", "CapturedTraceback::gather", "gather_with_cpp", "_start",
                                         "__libc_start_main", "PyEval_", "PyObject_", "PyFunction_",
                                         /* trainprof's addition */
                                         "CUDACachingAllocator::" };
    static const char *const files[] = { "core/boxing", "/Register", "/Redispatch", "pythonrun.c", "Modules/main.c",
                                         "Objects/call.c", "Objects/methodobject.c", "pycore_ceval.h", "ceval.c",
                                         "cpython/abstract.h",
                                         /* trainprof's addition */
                                         "CUDACachingAllocator.cpp" };
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (has_part(name, nl, names[i])) return 1;
    for (size_t i = 0; i < sizeof files / sizeof *files; i++)
        if (has_part(file, fl, files[i])) return 1;
    return 0;
}

char *tprof_mem_call_site(const tprof_mem_snapshot *s, tprof_pv frames, int depth, char *buf, size_t len)
{
    const tprof_pickle *pk = s->pk;
    size_t n = tprof_pickle_len(pk, frames);
    if (!len) return buf;
    buf[0] = 0;
    if (n == 0) {
        snprintf(buf, len, "(no stack recorded)");
        return buf;
    }
    if (depth < 1) depth = 1;
    if (depth > 64) depth = 64;
    /* frames are innermost first; PyTorch's own frames left out, keep the
     * DEPTH innermost Python ones (as PyTorch's viewer), or the innermost
     * native frames when none is Python */
    size_t idx[64], nat[64];
    int k = 0, m = 0;
    for (size_t i = 0; i < n && k < depth; i++) {
        tprof_pv fr = tprof_pickle_item(pk, frames, i);
        size_t fl = 0, nl = 0;
        const char *f = tprof_pickle_str(pk, tprof_pickle_get(pk, fr, "filename"), &fl);
        const char *nm = tprof_pickle_str(pk, tprof_pickle_get(pk, fr, "name"), &nl);
        if (internal_frame(nm, nl, f, fl)) continue;
        if (f && is_python(f, fl)) idx[k++] = i;
        else if (m < depth) nat[m++] = i;
    }
    /* a C/C++ program (trainprof's recording library), or a stack of
     * PyTorch's C++ threads (autograd's backward): native frames only */
    if (!k) {
        memcpy(idx, nat, (size_t)m * sizeof *idx);
        k = m;
    }
    if (!k) {
        snprintf(buf, len, "(PyTorch's own frames only)");
        return buf;
    }
    size_t used = 0;
    for (int j = k - 1; j >= 0; j--) {
        tprof_pv fr = tprof_pickle_item(pk, frames, idx[j]);
        size_t fl, nl;
        const char *f = tprof_pickle_str(pk, tprof_pickle_get(pk, fr, "filename"), &fl);
        const char *nm = tprof_pickle_str(pk, tprof_pickle_get(pk, fr, "name"), &nl);
        tprof_pv lv = tprof_pickle_get(pk, fr, "line");
        char line[24];
        if (tprof_pickle_is_unsigned(pk, lv))
            snprintf(line, sizeof line, "%llu", (unsigned long long)tprof_pickle_uint(pk, lv));
        else
            snprintf(line, sizeof line, "%lld", (long long)tprof_pickle_int(pk, lv, 0));
        int w = snprintf(buf + used, len - used, "%s%.*s:%s:%.*s", j == k - 1 ? "" : ";", (int)(fl > 4096 ? 4096 : fl),
                         f, line, (int)(nl > 4096 ? 4096 : nl), nm ? nm : "");
        if (w < 0 || (size_t)w >= len - used) break;
        used += (size_t)w;
    }
    return buf;
}
