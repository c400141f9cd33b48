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
    int klass; /* tprof_class, or tprof_phase for phase rules */
    char *glob;
} rule;

typedef struct {
    rule *rules;
    size_t n, cap;
} ruleset;

struct tprof_classifier {
    ruleset kernels, phases, ops;
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

static void ruleset_free(ruleset *s)
{
    for (size_t i = 0; i < s->n; i++) free(s->rules[i].glob);
    free(s->rules);
}

void tprof_classifier_free(tprof_classifier *c)
{
    if (!c) return;
    ruleset_free(&c->kernels);
    ruleset_free(&c->phases);
    ruleset_free(&c->ops);
    free(c);
}

static int ruleset_add(ruleset *s, int value, const char *glob)
{
    if (s->n == s->cap) {
        size_t nc = s->cap ? s->cap * 2 : 8;
        rule *r = realloc(s->rules, nc * sizeof *r);
        if (!r) return TPROF_ENOMEM;
        s->rules = r;
        s->cap = nc;
    }
    char *g = strdup(glob);
    if (!g) return TPROF_ENOMEM;
    s->rules[s->n].klass = value;
    s->rules[s->n].glob = g;
    s->n++;
    return 0;
}

static int ruleset_match(const ruleset *s, const char *name)
{
    for (size_t i = 0; i < s->n; i++)
        if (fnmatch(s->rules[i].glob, name, 0) == 0) return s->rules[i].klass;
    return -1;
}

int tprof_classifier_add(tprof_classifier *c, tprof_class klass, const char *glob)
{
    if (!c || !glob || (unsigned)klass >= TPROF_CLASS_COUNT) return TPROF_EUSAGE;
    return ruleset_add(&c->kernels, (int)klass, glob);
}

int tprof_classifier_add_phase(tprof_classifier *c, tprof_phase phase, const char *glob)
{
    if (!c || !glob || (unsigned)phase >= TPROF_PHASE_OTHER) return TPROF_EUSAGE;
    return ruleset_add(&c->phases, (int)phase, glob);
}

static const char *const phase_names[TPROF_PHASE_COUNT] = { "data", "forward", "backward", "optimizer", "other" };

const char *tprof_phase_name(tprof_phase p) { return (unsigned)p < TPROF_PHASE_COUNT ? phase_names[p] : "?"; }

int tprof_phase_parse(const char *s, tprof_phase *out)
{
    for (int p = 0; p < TPROF_PHASE_OTHER; p++)
        if (strcasecmp(s, phase_names[p]) == 0) {
            *out = (tprof_phase)p;
            return 0;
        }
    return TPROF_EUSAGE;
}

static int starts(const char *s, const char *p) { return strncmp(s, p, strlen(p)) == 0; }

tprof_phase tprof_phase_of(const tprof_classifier *c, const char *n)
{
    if (c && c->phases.n) {
        int p = ruleset_match(&c->phases, n);
        if (p >= 0) return (tprof_phase)p;
    }
    switch (n[0]) { /* most names start with none of these: one compare */
    case '#': /* user annotations in the "## name ##" style (TorchRec, HTA examples) */
        if (!strcmp(n, "## forward ##")) return TPROF_PHASE_FORWARD;
        if (!strcmp(n, "## backward ##")) return TPROF_PHASE_BACKWARD;
        if (!strcmp(n, "## optimizer ##") || !strcmp(n, "## zero_grad ##")) return TPROF_PHASE_OPTIMIZER;
        if (!strcmp(n, "## load_batch ##") || !strcmp(n, "## data_load ##") || !strcmp(n, "## wait_for_batch ##") ||
            !strcmp(n, "## copy_batch_to_gpu ##"))
            return TPROF_PHASE_DATA;
        return TPROF_PHASE_OTHER;
    case 'f': return !strcmp(n, "forward") ? TPROF_PHASE_FORWARD : TPROF_PHASE_OTHER;
    case 'b': return !strcmp(n, "backward") ? TPROF_PHASE_BACKWARD : TPROF_PHASE_OTHER;
    case 'o':
        return !strcmp(n, "optimizer") || !strcmp(n, "optimizer_step") ? TPROF_PHASE_OPTIMIZER : TPROF_PHASE_OTHER;
    case 'd': return !strcmp(n, "data") || !strcmp(n, "data_loading") ? TPROF_PHASE_DATA : TPROF_PHASE_OTHER;
    case 'e': return starts(n, "enumerate(DataLoader)") ? TPROF_PHASE_DATA : TPROF_PHASE_OTHER;
    case 'O':
        return starts(n, "Optimizer.step#") || starts(n, "Optimizer.zero_grad#") ? TPROF_PHASE_OPTIMIZER
                                                                                  : TPROF_PHASE_OTHER;
    case 'a': return starts(n, "autograd::engine::evaluate_function") ? TPROF_PHASE_BACKWARD : TPROF_PHASE_OTHER;
    case 'D': return !strcmp(n, "DistributedDataParallel.forward") ? TPROF_PHASE_FORWARD : TPROF_PHASE_OTHER;
    case 'F': return !strcmp(n, "FullyShardedDataParallel.forward") ? TPROF_PHASE_FORWARD : TPROF_PHASE_OTHER;
    case 'n': return starts(n, "nn.Module: ") ? TPROF_PHASE_FORWARD : TPROF_PHASE_OTHER;
    default: return TPROF_PHASE_OTHER;
    }
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
        if (*p == 0) goto bad;
        rc = tprof_classifier_add_rule(c, cls, p);
        if (rc == TPROF_EUSAGE) goto bad;
        if (rc) break;
        continue;
    bad:
        snprintf(errbuf, errlen,
                 "%s:%d: expected \"CLASS GLOB\" with CLASS one of compute, communication, memory, other, "
                 "a phase (data, forward, backward, optimizer) or an op category (gemm, attention, "
                 "convolution, elementwise, reduction, normalization)",
                 path, lineno);
        rc = TPROF_EFORMAT;
        break;
    }
    fclose(f);
    return rc;
}

static int has_prefix(const char *s, const char *p) { return strncmp(s, p, strlen(p)) == 0; }

int tprof_classifier_add_op_category(tprof_classifier *c, tprof_op_category cat, const char *glob)
{
    if (!c || !glob || (unsigned)cat >= TPROF_OPCAT_COUNT) return TPROF_EUSAGE;
    return ruleset_add(&c->ops, (int)cat, glob);
}

int tprof_classify_op_user(const tprof_classifier *c, const char *name)
{
    return c ? ruleset_match(&c->ops, name) : -1;
}

int tprof_classifier_add_rule(tprof_classifier *c, const char *cls, const char *glob)
{
    tprof_class k;
    tprof_phase ph;
    tprof_op_category oc;
    if (!c || !glob || !*glob) return TPROF_EUSAGE;
    if (tprof_class_parse(cls, &k) == 0) return tprof_classifier_add(c, k, glob);
    if (tprof_phase_parse(cls, &ph) == 0) return tprof_classifier_add_phase(c, ph, glob);
    /* the categories a kernel class names too are kernel rules (above) */
    if (tprof_op_category_parse(cls, &oc) == 0) return tprof_classifier_add_op_category(c, oc, glob);
    return TPROF_EUSAGE;
}

int tprof_classify_user(const tprof_classifier *c, const char *name)
{
    return c ? ruleset_match(&c->kernels, name) : -1;
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
