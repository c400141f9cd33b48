/* Kernel classes from kernel names. The rules are listed in docs/METRICS.md;
 * keep the two in step. */
#include "trainprof/trace.h"
#include "trainprof/error.h"
#include "trace_internal.h"

#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct {
    tprof_class klass;
    char *glob;
} rule;

struct tprof_classifier {
    rule *rules;
    size_t n, cap;
};

static const char *const class_names[TPROF_CLASS_COUNT] = {
    [TPROF_CLASS_COMPUTE] = "compute",
    [TPROF_CLASS_COMM] = "communication",
    [TPROF_CLASS_MEMORY] = "memory",
    [TPROF_CLASS_OTHER] = "other",
};

const char *tprof_class_name(tprof_class k)
{
    return (unsigned)k < TPROF_CLASS_COUNT ? class_names[k] : "?";
}

int tprof_class_parse(const char *s, tprof_class *out)
{
    for (int k = 0; k < TPROF_CLASS_COUNT; k++)
        if (strcasecmp(s, class_names[k]) == 0) { *out = (tprof_class)k; return 0; }
    if (strcasecmp(s, "comm") == 0) { *out = TPROF_CLASS_COMM; return 0; }
    if (strcasecmp(s, "mem") == 0) { *out = TPROF_CLASS_MEMORY; return 0; }
    return TPROF_EUSAGE;
}

const char *tprof_kind_name(tprof_kind k)
{
    static const char *const n[TPROF_KIND_COUNT] = {
        "cpu", "runtime", "gpu", "gpu_annotation", "flow", "instant", "counter", "metadata", "other"
    };
    return (unsigned)k < TPROF_KIND_COUNT ? n[k] : "?";
}

tprof_classifier *tprof_classifier_new(void) { return calloc(1, sizeof(tprof_classifier)); }

void tprof_classifier_free(tprof_classifier *c)
{
    if (!c) return;
    for (size_t i = 0; i < c->n; i++) free(c->rules[i].glob);
    free(c->rules);
    free(c);
}

int tprof_classifier_add(tprof_classifier *c, tprof_class klass, const char *glob)
{
    if (!c || !glob || (unsigned)klass >= TPROF_CLASS_COUNT) return TPROF_EUSAGE;
    if (c->n == c->cap) {
        size_t nc = c->cap ? c->cap * 2 : 8;
        rule *r = realloc(c->rules, nc * sizeof *r);
        if (!r) return TPROF_ENOMEM;
        c->rules = r;
        c->cap = nc;
    }
    char *g = strdup(glob);
    if (!g) return TPROF_ENOMEM;
    c->rules[c->n].klass = klass;
    c->rules[c->n].glob = g;
    c->n++;
    return 0;
}

int tprof_classifier_load(tprof_classifier *c, const char *path, char *errbuf, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(errbuf, errlen, "%s: cannot open: %s", path, strerror(errno));
        return TPROF_EIO;
    }
    char line[4096];
    int lineno = 0, rc = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        char *p = line;
        while (isspace((unsigned char)*p)) p++;
        if (*p == '#' || *p == 0) continue;
        char *cls = p;
        while (*p && !isspace((unsigned char)*p) && *p != ':') p++;
        if (*p == 0) goto bad;
        *p++ = 0;
        while (isspace((unsigned char)*p) || *p == ':') p++;
        char *e = p + strlen(p);
        while (e > p && isspace((unsigned char)e[-1])) *--e = 0;
        tprof_class k;
        if (*p == 0 || tprof_class_parse(cls, &k)) goto bad;
        if ((rc = tprof_classifier_add(c, k, p))) break;
        continue;
    bad:
        snprintf(errbuf, errlen,
                 "%s:%d: expected \"CLASS GLOB\" with CLASS one of compute, communication, memory, other",
                 path, lineno);
        rc = TPROF_EFORMAT;
        break;
    }
    fclose(f);
    return rc;
}

static int has_prefix(const char *s, const char *p) { return strncmp(s, p, strlen(p)) == 0; }

int tprof_classify_user(const tprof_classifier *c, const char *name)
{
    if (c)
        for (size_t i = 0; i < c->n; i++)
            if (fnmatch(c->rules[i].glob, name, 0) == 0) return (int)c->rules[i].klass;
    return -1;
}

int tprof_classify_cat(const char *cat)
{
    /* memory copies and sets (Kineto and 2021 spellings); waits on a GPU track */
    if (!strcmp(cat, "gpu_memcpy") || !strcmp(cat, "gpu_memset") || !strcmp(cat, "Memcpy") || !strcmp(cat, "Memset"))
        return TPROF_CLASS_MEMORY;
    if (!strcmp(cat, "cuda_sync")) return TPROF_CLASS_OTHER;
    return -1;
}

tprof_class tprof_classify_name(const char *name)
{
    if (has_prefix(name, "Memcpy ") || has_prefix(name, "Memset ")) return TPROF_CLASS_MEMORY;
    if (!strcmp(name, "Event Sync") || !strcmp(name, "Context Sync") || !strcmp(name, "Stream Sync") ||
        !strcmp(name, "Stream Wait Event") || !strcmp(name, "Notify_Wait"))
        return TPROF_CLASS_OTHER;
    /* collectives: NCCL (ncclKernel_*, ncclDevKernel_*, ncclKernel inside a
     * templated name), RCCL (same names on ROCm, or rccl), HCCL (Ascend hcom_) */
    if (strstr(name, "nccl") || strstr(name, "rccl") || strstr(name, "NCCL") || strstr(name, "RCCL") ||
        has_prefix(name, "hcom_") || strstr(name, "hccl") || strstr(name, "HCCL"))
        return TPROF_CLASS_COMM;
    return TPROF_CLASS_COMPUTE;
}

/* User rules, then the category rules, then the name rules. */
tprof_class tprof_classify(const tprof_classifier *c, const char *cat, const char *name)
{
    int k = tprof_classify_user(c, name);
    if (k < 0) k = tprof_classify_cat(cat);
    return k >= 0 ? (tprof_class)k : tprof_classify_name(name);
}
