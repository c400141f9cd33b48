/* ProfileConfig: defaults, YAML (libyaml events), VeOmni's argv syntax and
 * validation. Unlike VeOmni, bad values fail here, at load time, with the
 * key named, instead of later inside the profiler's schedule. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#include "trainprof/error.h"
#include "trainprof/profiler.h"

#define PFX "train.profile."

void tprof_config_default(tprof_profile_config *c)
{
    memset(c, 0, sizeof *c);
    c->enable = false;
    c->start_step = 1;
    c->end_step = 2;
    snprintf(c->trace_dir, sizeof c->trace_dir, "./trace");
    c->record_shapes = true;
    c->profile_memory = true;
    c->with_stack = true;
    c->with_modules = false;
    c->rank0_only = true;
    snprintf(c->prefix, sizeof c->prefix, "trainprof");
    c->max_events = 1 << 18;
}

enum kind { K_BOOL, K_INT, K_STR };
typedef struct {
    const char *name;
    enum kind kind;
    size_t off, size;
} field;

#define F(n, k) { #n, k, offsetof(tprof_profile_config, n), sizeof(((tprof_profile_config *)0)->n) }
static const field fields[] = {
    F(enable, K_BOOL),        F(start_step, K_INT),   F(end_step, K_INT),      F(trace_dir, K_STR),
    F(record_shapes, K_BOOL), F(profile_memory, K_BOOL), F(with_stack, K_BOOL), F(with_modules, K_BOOL),
    F(rank0_only, K_BOOL),    F(prefix, K_STR),       F(max_events, K_INT),
};
#undef F

static const field *find_field(const char *key)
{
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        if (strcmp(fields[i].name, key) == 0) return &fields[i];
    return NULL;
}

static int err(char *errbuf, size_t errlen, const char *fmt, const char *a, const char *b)
{
    if (errbuf && errlen) snprintf(errbuf, errlen, fmt, a, b);
    return TPROF_EUSAGE;
}

/* argparse's _string_to_bool: -1 when neither. */
static int parse_bool(const char *v)
{
    static const char *const yes[] = { "yes", "true", "t", "y", "1" }, *const no[] = { "no", "false", "f", "n", "0" };
    for (int i = 0; i < 5; i++) {
        if (strcasecmp(v, yes[i]) == 0) return 1;
        if (strcasecmp(v, no[i]) == 0) return 0;
    }
    return -1;
}

static int parse_int(const char *v, int64_t *out)
{
    const char *p = v;
    if (*p == '+' || *p == '-') p++;
    if (!isdigit((unsigned char)*p)) return -1;
    for (const char *q = p; *q; q++)
        if (!isdigit((unsigned char)*q)) return -1;
    errno = 0;
    long long x = strtoll(v, NULL, 10);
    if (errno) return -1;
    *out = x;
    return 0;
}

static int set_field(tprof_profile_config *c, const field *f, const char *value, char *errbuf, size_t errlen)
{
    char *dst = (char *)c + f->off;
    switch (f->kind) {
    case K_BOOL: {
        int b = parse_bool(value);
        if (b < 0)
            return err(errbuf, errlen, PFX "%s: '%s': Boolean value expected (yes/true/t/y/1 or no/false/f/n/0)",
                       f->name, value);
        *(bool *)dst = b;
        return 0;
    }
    case K_INT: {
        int64_t x;
        if (parse_int(value, &x))
            return err(errbuf, errlen, PFX "%s: '%s': an integer expected", f->name, value);
        if (f->size == sizeof(int)) {
            if (x < INT_MIN || x > INT_MAX)
                return err(errbuf, errlen, PFX "%s: '%s': out of range", f->name, value);
            *(int *)dst = (int)x;
        } else {
            *(int64_t *)dst = x;
        }
        return 0;
    }
    case K_STR:
        if (strlen(value) >= f->size)
            return err(errbuf, errlen, PFX "%s: '%s': too long", f->name, value);
        memcpy(dst, value, strlen(value) + 1);
        return 0;
    }
    return TPROF_EUSAGE;
}

int tprof_config_set(tprof_profile_config *c, const char *key, const char *value, char *errbuf, size_t errlen)
{
    const field *f = find_field(key);
    if (!f)
        return err(errbuf, errlen,
                   "unknown key " PFX "%s%s (known: enable, start_step, end_step, trace_dir, record_shapes, "
                   "profile_memory, with_stack, with_modules, rank0_only, prefix, max_events)",
                   key, "");
    return set_field(c, f, value, errbuf, errlen);
}

int tprof_config_validate(const tprof_profile_config *c, char *errbuf, size_t errlen)
{
    char a[32], b[32];
    snprintf(a, sizeof a, "%d", c->start_step);
    snprintf(b, sizeof b, "%d", c->end_step);
    if (c->start_step < 1)
        return err(errbuf, errlen, PFX "start_step = %s: must be >= 1 (global steps count from 1)%s", a, "");
    if (c->end_step <= c->start_step)
        return err(errbuf, errlen,
                   PFX "end_step = %s: must be greater than start_step = %s (steps [start_step, end_step) are recorded)",
                   b, a);
    if (!c->trace_dir[0]) return err(errbuf, errlen, PFX "trace_dir: must not be empty%s%s", "", "");
    if (strncmp(c->trace_dir, "hdfs://", 7) == 0)
        return err(errbuf, errlen, PFX "trace_dir = %s: hdfs:// is not supported, give a local directory%s",
                   c->trace_dir, "");
    if (!c->prefix[0] || strchr(c->prefix, '/'))
        return err(errbuf, errlen, PFX "prefix = '%s': must be non-empty, without '/'%s", c->prefix, "");
    if (c->max_events < 16) return err(errbuf, errlen, PFX "max_events: must be >= 16%s%s", "", "");
    /* the buffers are max_events * 72 bytes (more with shapes and stacks) and
     * shape/frame offsets are 32-bit: a bound keeps the sizes representable */
    if (c->max_events > TPROF_MAX_EVENTS_LIMIT) {
        char v[32];
        snprintf(v, sizeof v, "%" PRId64, c->max_events);
        return err(errbuf, errlen, PFX "max_events = %s: must be <= %s (67108864, 4.5 GiB per thread)", v, "1<<26");
    }
    return 0;
}

/* ---- YAML ---------------------------------------------------------------- */

/* YAML 1.1 booleans as PyYAML's safe_load reads plain scalars. */
static int yaml_bool(const char *v)
{
    static const char *const yes[] = { "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON", "y", "Y" };
    static const char *const no[] = { "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF", "n", "N" };
    for (size_t i = 0; i < sizeof yes / sizeof *yes; i++)
        if (strcmp(v, yes[i]) == 0) return 1;
    for (size_t i = 0; i < sizeof no / sizeof *no; i++)
        if (strcmp(v, no[i]) == 0) return 0;
    return -1;
}

static int yaml_scalar(tprof_profile_config *c, const char *path, const char *key, const yaml_event_t *ev,
                       char *errbuf, size_t errlen)
{
    const field *f = find_field(key);
    char where[1200];
    snprintf(where, sizeof where, "%s: line %zu: " PFX "%s", path, ev->start_mark.line + 1, key);
    if (!f)
        return err(errbuf, errlen,
                   "%s: unknown key in the profile block (known: enable, start_step, end_step, trace_dir, "
                   "record_shapes, profile_memory, with_stack, with_modules, rank0_only, prefix, max_events)%s",
                   where, "");
    const char *v = (const char *)ev->data.scalar.value;
    int plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
    if (f->kind == K_BOOL) {
        int b = plain ? yaml_bool(v) : -1;
        if (b < 0) return err(errbuf, errlen, "%s: '%s': a boolean expected (true/false)", where, v);
        *(bool *)((char *)c + f->off) = b;
        return 0;
    }
    if (f->kind == K_INT) {
        int64_t x;
        if (!plain || parse_int(v, &x)) return err(errbuf, errlen, "%s: '%s': an integer expected", where, v);
    } else if (plain && (!*v || strcmp(v, "~") == 0 || strcmp(v, "null") == 0)) {
        return err(errbuf, errlen, "%s: a string expected, not null%s", where, "");
    }
    char m[1024];
    int rc = set_field(c, f, v, m, sizeof m);
    if (rc) return err(errbuf, errlen, "%s: %s", path, m);
    return 0;
}

#define MAXDEPTH 32

int tprof_config_load_yaml(tprof_profile_config *c, const char *path, tprof_config_other_fn other, void *ud,
                           char *errbuf, size_t errlen)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        if (errbuf && errlen) snprintf(errbuf, errlen, "%s: %s", path, strerror(errno));
        return TPROF_EIO;
    }
    yaml_parser_t p;
    if (!yaml_parser_initialize(&p)) {
        fclose(fp);
        return TPROF_ENOMEM;
    }
    yaml_parser_set_input_file(&p, fp);
    /* A stack of containers: for mappings, the key waiting for its value. */
    struct {
        int mapping;
        char *key; /* NULL while a key is expected */
    } st[MAXDEPTH];
    int depth = 0, rc = 0, done = 0, skip = 0, ndocs = 0; /* skip: nesting inside an ignored sequence/alias */
    char dotted[1024];
    while (!done && !rc) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&p, &ev)) {
            if (errbuf && errlen)
                snprintf(errbuf, errlen, "%s: line %zu: %s %s", path, p.problem_mark.line + 1,
                         p.problem ? p.problem : "YAML error", p.context ? p.context : "");
            rc = TPROF_EFORMAT;
            break;
        }
        /* dotted path of the value this event starts: keys of the mapping stack */
        dotted[0] = 0;
        int inkey = depth > 0 && st[depth - 1].mapping && !st[depth - 1].key;
        if (!inkey) {
            size_t n = 0;
            for (int i = 0; i < depth; i++) {
                if (!st[i].mapping || !st[i].key) break;
                n += (size_t)snprintf(dotted + n, n < sizeof dotted ? sizeof dotted - n : 0, "%s%s", i ? "." : "",
                                      st[i].key);
                if (n >= sizeof dotted) n = sizeof dotted - 1;
            }
        }
        int in_seq = 0;
        for (int i = 0; i < depth; i++) in_seq |= !st[i].mapping;
        int is_profile_value = !inkey && !in_seq && strncmp(dotted, PFX, strlen(PFX)) == 0;
        switch (ev.type) {
        case YAML_STREAM_END_EVENT: done = 1; break;
        case YAML_DOCUMENT_START_EVENT:
            /* as yaml.safe_load: one document */
            if (++ndocs > 1) {
                char line[32];
                snprintf(line, sizeof line, "%zu", ev.start_mark.line + 1);
                rc = err(errbuf, errlen, "%s: line %s: expected a single YAML document", path, line);
            }
            break;
        case YAML_SCALAR_EVENT:
            if (inkey && !skip) {
                st[depth - 1].key = strdup((const char *)ev.data.scalar.value);
                if (!st[depth - 1].key) rc = TPROF_ENOMEM;
                break;
            }
            if (skip) break;
            if (is_profile_value) {
                rc = yaml_scalar(c, path, dotted + strlen(PFX), &ev, errbuf, errlen);
            } else if (strcmp(dotted, "train.profile") == 0 || strcmp(dotted, "train") == 0) {
                const char *v = (const char *)ev.data.scalar.value;
                if (!(ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE && (!*v || !strcmp(v, "~") || !strcmp(v, "null"))))
                    rc = err(errbuf, errlen, "%s: %s: a mapping expected", path, dotted);
            } else if (other && dotted[0] && !in_seq) {
                int r = other(ud, dotted, (const char *)ev.data.scalar.value, errbuf, errlen);
                if (r < 0) rc = r;
            }
            if (depth > 0 && st[depth - 1].mapping) {
                free(st[depth - 1].key);
                st[depth - 1].key = NULL;
            }
            break;
        case YAML_ALIAS_EVENT:
            if (is_profile_value) rc = err(errbuf, errlen, "%s: %s: aliases are not supported here", path, dotted);
            if (depth > 0 && st[depth - 1].mapping) {
                free(st[depth - 1].key);
                st[depth - 1].key = NULL;
            }
            break;
        case YAML_SEQUENCE_START_EVENT:
        case YAML_MAPPING_START_EVENT:
            if (is_profile_value)
                rc = err(errbuf, errlen, "%s: %s: a scalar expected, not a list or mapping", path, dotted);
            else if (ev.type == YAML_SEQUENCE_START_EVENT &&
                     (strcmp(dotted, "train.profile") == 0 || strcmp(dotted, "train") == 0))
                rc = err(errbuf, errlen, "%s: %s: a mapping expected", path, dotted);
            else if (inkey)
                rc = err(errbuf, errlen, "%s: complex mapping keys are not supported%s", path, "");
            else if (depth == MAXDEPTH)
                rc = err(errbuf, errlen, "%s: nested deeper than %s levels", path, "32");
            else {
                st[depth].mapping = ev.type == YAML_MAPPING_START_EVENT;
                st[depth].key = NULL;
                depth++;
            }
            break;
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT:
            depth--;
            free(st[depth].key);
            if (depth > 0 && st[depth - 1].mapping) {
                free(st[depth - 1].key);
                st[depth - 1].key = NULL;
            }
            break;
        default: break;
        }
        yaml_event_delete(&ev);
    }
    for (int i = 0; i < depth; i++) free(st[i].key);
    yaml_parser_delete(&p);
    fclose(fp);
    return rc;
}

/* ---- argv ---------------------------------------------------------------- */

static int is_yaml(const char *a)
{
    size_t n = strlen(a);
    return (n > 5 && strcmp(a + n - 5, ".yaml") == 0) || (n > 4 && strcmp(a + n - 4, ".yml") == 0);
}

int tprof_config_from_args(tprof_profile_config *c, int *argc, char **argv, tprof_config_other_fn other, void *ud,
                           char *errbuf, size_t errlen)
{
    int n = *argc, rc;
    /* no argv[0] (execve with an empty argv): nothing to parse, and argv[1]
     * is past the array, so argv is left as it is */
    if (n < 1 || !argv) return tprof_config_validate(c, errbuf, errlen);
    char *used = calloc((size_t)n + 1, 1);
    if (!used) return TPROF_ENOMEM;
    /* the file first: flags override it wherever they stand */
    for (int i = 1; i < n; i++) {
        if (strcmp(argv[i], "--") == 0) break;
        if (argv[i][0] == '-' || !is_yaml(argv[i])) continue;
        /* a *.yaml is the file unless it is the value of a non-boolean profile flag */
        const char *prev = argv[i - 1];
        if (i > 1 && strncmp(prev, "--" PFX, 2 + strlen(PFX)) == 0 && !strchr(prev, '=')) {
            const field *f = find_field(prev + 2 + strlen(PFX));
            if (f && f->kind != K_BOOL) continue;
        }
        {
            if ((rc = tprof_config_load_yaml(c, argv[i], other, ud, errbuf, errlen))) goto out;
            used[i] = 1;
            break;
        }
    }
    for (int i = 1; i < n; i++) {
        if (strcmp(argv[i], "--") == 0) break;
        if (strncmp(argv[i], "--", 2) != 0 || used[i]) continue;
        const char *a = argv[i] + 2;
        const char *eq = strchr(a, '=');
        char key[256];
        size_t kl = eq ? (size_t)(eq - a) : strlen(a);
        if (kl >= sizeof key) continue;
        memcpy(key, a, kl);
        key[kl] = 0;
        const char *val = eq ? eq + 1 : NULL;
        int has_next = i + 1 < n && strncmp(argv[i + 1], "--", 2) != 0;
        if (strncmp(key, PFX, strlen(PFX)) == 0) {
            const field *f = find_field(key + strlen(PFX));
            if (!f) {
                rc = tprof_config_set(c, key + strlen(PFX), "", errbuf, errlen);
                goto out;
            }
            used[i] = 1;
            if (!val && f->kind == K_BOOL) {
                /* nargs="?", const=True: a following bool word is its value */
                if (has_next && parse_bool(argv[i + 1]) >= 0) {
                    val = argv[++i];
                    used[i] = 1;
                } else {
                    val = "true";
                }
            } else if (!val) {
                if (!has_next) {
                    rc = err(errbuf, errlen, "--%s: expected one argument%s", key, "");
                    goto out;
                }
                val = argv[++i];
                used[i] = 1;
            }
            if ((rc = set_field(c, f, val, errbuf, errlen))) goto out;
        } else if (other && strchr(key, '.')) {
            /* the program's own dotted keys: --a.b=v or --a.b v */
            int took_next = 0;
            if (!val && has_next && !is_yaml(argv[i + 1])) {
                val = argv[i + 1];
                took_next = 1;
            }
            int r = other(ud, key, val ? val : "true", errbuf, errlen);
            if (r < 0) {
                rc = r;
                goto out;
            }
            if (r == 0) {
                used[i] = 1;
                if (took_next) used[++i] = 1;
            }
        }
    }
    rc = tprof_config_validate(c, errbuf, errlen);
    if (!rc) {
        int k = 1;
        for (int i = 1; i < n; i++)
            if (!used[i]) argv[k++] = argv[i];
        argv[k] = NULL;
        *argc = k;
    }
out:
    free(used);
    return rc;
}
