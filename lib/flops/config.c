/* config.json into a small tree (through the project's tokenizer), typed
 * look-ups with messages that name the key, and the model handle. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flops_internal.h"
#include "trainprof/error.h"
#include "trainprof/source.h"
#include "trainprof/json.h"

static void cv_free(cv *v)
{
    for (size_t i = 0; i < v->n; i++) cv_free(&v->kids[i]);
    free(v->kids);
    free(v->key);
    free(v->str);
}

static char *dupn(const char *s, size_t n)
{
    char *p = malloc(n + 1);
    if (!p) return NULL;
    memcpy(p, s, n);
    p[n] = 0;
    return p;
}

/* Parses the value whose first token is TOK into V. */
static int parse_value(tprof_json *j, tprof_json_token *tok, cv *v)
{
    v->offset = tok->offset;
    switch (tok->type) {
    case TPROF_JSON_NULL: v->type = CV_NULL; return 0;
    case TPROF_JSON_TRUE: v->type = CV_BOOL; v->b = 1; return 0;
    case TPROF_JSON_FALSE: v->type = CV_BOOL; v->b = 0; return 0;
    case TPROF_JSON_STRING:
        v->type = CV_STR;
        return (v->str = dupn(tok->text, tok->len)) ? 0 : TPROF_ENOMEM;
    case TPROF_JSON_NUMBER:
        v->type = CV_NUM;
        if (!(v->str = dupn(tok->text, tok->len))) return TPROF_ENOMEM;
        v->num = tprof_json_parse_double(tok->text, tok->len);
        v->is_int = tprof_json_parse_int(tok->text, tok->len, &v->i) == 0;
        return 0;
    case TPROF_JSON_OBJ_BEGIN:
    case TPROF_JSON_ARR_BEGIN: {
        int obj = tok->type == TPROF_JSON_OBJ_BEGIN;
        v->type = obj ? CV_OBJ : CV_ARR;
        size_t cap = 0;
        for (;;) {
            int rc = tprof_json_next(j, tok);
            if (rc) return rc;
            if (tok->type == TPROF_JSON_OBJ_END || tok->type == TPROF_JSON_ARR_END) return 0;
            if (v->n == cap) {
                cap = cap ? 2 * cap : 8;
                cv *k = realloc(v->kids, cap * sizeof *k);
                if (!k) return TPROF_ENOMEM;
                v->kids = k;
            }
            cv *kid = &v->kids[v->n++];
            memset(kid, 0, sizeof *kid);
            if (obj) {
                if (!(kid->key = dupn(tok->text, tok->len))) return TPROF_ENOMEM;
                if ((rc = tprof_json_next(j, tok))) return rc;
            }
            if ((rc = parse_value(j, tok, kid))) return rc;
        }
    }
    default: return TPROF_EFORMAT;
    }
}

#define SUPPORTED                                                                                \
    "llama, seed_oss, qwen2, qwen3, qwen2_vl, qwen2_5_vl, qwen3_vl, qwen3_moe, qwen3_vl_moe, "          \
    "qwen3_next, qwen3_5, qwen3_5_text, qwen3_5_moe, qwen3_5_moe_text, deepseek_v3, deepseek_v4, gpt_oss"

const char *tprof_flops_supported(void) { return SUPPORTED; }

/* A whole word of SUPPORTED. */
static int is_supported(const char *t)
{
    static const char all[] = SUPPORTED;
    size_t n = strlen(t);
    for (const char *p = all; n && (p = strstr(p, t)) != NULL; p += n)
        if ((p == all || p[-1] == ' ') && (p[n] == ',' || p[n] == 0)) return 1;
    return 0;
}

int tprof_model_parse(tprof_model **out, const void *data, size_t len, const char *name, char *errbuf,
                      size_t errlen)
{
    *out = NULL;
    if (errlen) errbuf[0] = 0;
    tprof_model *m = calloc(1, sizeof *m);
    if (!m || !(m->name = strdup(name ? name : "config"))) {
        free(m);
        return TPROF_ENOMEM;
    }
    tprof_json *j = NULL;
    int rc = tprof_json_open_mem(&j, data, len, m->name);
    tprof_json_token tok;
    if (!rc) rc = tprof_json_next(j, &tok);
    if (!rc && tok.type == TPROF_JSON_EOF) rc = TPROF_ETRUNC;
    if (!rc) rc = parse_value(j, &tok, &m->root);
    if (!rc && (rc = tprof_json_next(j, &tok)) == 0 && tok.type != TPROF_JSON_EOF) rc = TPROF_EFORMAT;
    if (rc) {
        if (rc == TPROF_ENOMEM) snprintf(errbuf, errlen, "%s: out of memory", m->name);
        else if (len == 0) snprintf(errbuf, errlen, "%s: empty file, expected a JSON object", m->name);
        else snprintf(errbuf, errlen, "%s", tprof_json_errmsg(j));
        if (rc != TPROF_ENOMEM) rc = TPROF_EFORMAT;
    } else if (m->root.type != CV_OBJ) {
        snprintf(errbuf, errlen, "%s: byte %llu: expected a JSON object (a config.json)", m->name,
                 (unsigned long long)m->root.offset);
        rc = TPROF_EFORMAT;
    } else {
        const cv *t = cv_get(&m->root, "model_type");
        if (!t || t->type != CV_STR) {
            snprintf(errbuf, errlen, "%s: no \"model_type\" string; supported: %s", m->name, tprof_flops_supported());
            rc = TPROF_EUSAGE;
        } else {
            rc = is_supported(t->str) && strlen(t->str) < sizeof m->type ? 0 : TPROF_EUSAGE;
            if (rc)
                snprintf(errbuf, errlen, "%s: byte %llu: model_type \"%.64s\" has no FLOPs formula; supported: %s",
                         m->name, (unsigned long long)t->offset, t->str, tprof_flops_supported());
            else
                snprintf(m->type, sizeof m->type, "%s", t->str);
        }
    }
    tprof_json_close(j);
    if (rc && rc != TPROF_ENOMEM) /* another kind of file (a trace, a snapshot): say which */
        tprof_input_hint_append(data, len < TPROF_SOURCE_HEAD ? len : TPROF_SOURCE_HEAD,
                                TPROF_INPUT_BIT(TPROF_INPUT_CONFIG), errbuf, errlen);
    if (rc) {
        tprof_model_free(m);
        return rc;
    }
    *out = m;
    return 0;
}

int tprof_model_load(tprof_model **out, const char *path, char *errbuf, size_t errlen)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(errbuf, errlen, "%s: %s", path, strerror(errno));
        return TPROF_EIO;
    }
    char *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            cap = cap ? 2 * cap : 65536;
            char *p = cap > ((size_t)64 << 20) ? NULL : realloc(buf, cap);
            if (!p) {
                free(buf);
                fclose(f);
                snprintf(errbuf, errlen, "%s: larger than 64 MiB, not a config.json", path);
                return TPROF_EFORMAT;
            }
            buf = p;
        }
        size_t n = fread(buf + len, 1, cap - len, f);
        len += n;
        if (n == 0) break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        snprintf(errbuf, errlen, "%s: read error (a directory?)", path);
        return TPROF_EIO;
    }
    int rc = tprof_model_parse(out, buf, len, path, errbuf, errlen);
    free(buf);
    return rc;
}

void tprof_model_free(tprof_model *m)
{
    if (!m) return;
    cv_free(&m->root);
    free(m->name);
    free(m);
}

const char *tprof_model_type(const tprof_model *m) { return m->type; }

const cv *cv_get(const cv *obj, const char *key)
{
    if (!obj || obj->type != CV_OBJ) return NULL;
    const cv *found = NULL; /* the last duplicate wins, as in Python's json */
    for (size_t i = 0; i < obj->n; i++)
        if (!strcmp(obj->kids[i].key, key)) found = &obj->kids[i];
    return found && found->type != CV_NULL ? found : NULL;
}

void fail(fctx *c, const char *fmt, ...)
{
    if (c->rc) return;
    c->rc = TPROF_EFORMAT;
    int n = snprintf(c->err, c->errlen, "%s: ", c->m->name);
    if (n < 0 || (size_t)n >= c->errlen) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err + n, c->errlen - (size_t)n, fmt, ap);
    va_end(ap);
}

static const cv *need(fctx *c, const cv *obj, const char *key)
{
    const cv *v = cv_get(obj, key);
    if (!v) fail(c, "%s%s: missing, needed by the %s formula", c->where, key, c->m->type);
    return v;
}

int64_t need_int(fctx *c, const cv *obj, const char *key)
{
    const cv *v = need(c, obj, key);
    if (!v) return 0;
    if (v->type != CV_NUM || !v->is_int || v->i < 0) {
        fail(c, "byte %llu: %s%s: expected a non-negative integer", (unsigned long long)v->offset, c->where, key);
        return 0;
    }
    return v->i;
}

int64_t need_pos(fctx *c, const cv *obj, const char *key)
{
    int64_t x = need_int(c, obj, key);
    if (!c->rc && x == 0) fail(c, "%s%s: must be positive", c->where, key);
    return x;
}

int64_t opt_int(fctx *c, const cv *obj, const char *key, int64_t def)
{
    return cv_get(obj, key) ? need_int(c, obj, key) : def;
}

double need_num(fctx *c, const cv *obj, const char *key)
{
    const cv *v = need(c, obj, key);
    if (!v) return 0;
    if (v->type != CV_NUM) {
        fail(c, "byte %llu: %s%s: expected a number", (unsigned long long)v->offset, c->where, key);
        return 0;
    }
    return v->num;
}

int64_t count_str(fctx *c, const cv *obj, const char *key, const char *name)
{
    const cv *v = cv_get(obj, key);
    if (!v) return -1;
    if (v->type != CV_ARR) {
        fail(c, "byte %llu: %s%s: expected an array of strings", (unsigned long long)v->offset, c->where, key);
        return 0;
    }
    int64_t k = 0;
    for (size_t i = 0; i < v->n; i++)
        if (v->kids[i].type == CV_STR && !strcmp(v->kids[i].str, name)) k++;
    return k;
}

int64_t arr_len(fctx *c, const cv *obj, const char *key)
{
    const cv *v = cv_get(obj, key);
    if (!v) return 0;
    if (v->type != CV_ARR) {
        fail(c, "byte %llu: %s%s: expected an array", (unsigned long long)v->offset, c->where, key);
        return 0;
    }
    return (int64_t)v->n;
}
