/* Unit tests of the streaming JSON tokenizer (lib/json/tokenizer.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "trainprof/error.h"
#include "trainprof/json.h"
#include "unit.h"

/* ---- helpers ---------------------------------------------------------- */

typedef struct {
    tprof_json_type type;
    const char *text; /* NULL: not checked (brackets, literals, EOF) */
    size_t len;       /* used when text has NULs; 0: strlen(text) */
    uint64_t offset;
    int depth;
} want_tok;

static const char *type_name(tprof_json_type t)
{
    static const char *const n[] = { "EOF", "OBJ_BEGIN", "OBJ_END", "ARR_BEGIN", "ARR_END", "KEY",
                                     "STRING", "NUMBER", "TRUE", "FALSE", "NULL" };
    return (unsigned)t < sizeof n / sizeof n[0] ? n[t] : "?";
}

/* Pulls every token; appends a canonical line per token to OUT (type,
 * offset, depth, text bytes). Returns 0 after EOF or the error code. */
static int collect(tprof_json *j, ubuf *out, size_t *ntok)
{
    size_t n = 0;
    for (;;) {
        tprof_json_token t;
        int rc = tprof_json_next(j, &t);
        if (rc) {
            if (ntok) *ntok = n;
            return rc;
        }
        n++;
        ubuf_printf(out, "%s@%llu/%d:%zu:", type_name(t.type), (unsigned long long)t.offset, t.depth,
                    t.text && (t.type == TPROF_JSON_KEY || t.type == TPROF_JSON_STRING ||
                               t.type == TPROF_JSON_NUMBER) ? t.len : (size_t)0);
        if (t.type == TPROF_JSON_KEY || t.type == TPROF_JSON_STRING || t.type == TPROF_JSON_NUMBER)
            ubuf_add(out, t.text, t.len);
        ubuf_str(out, "\n");
        if (t.type == TPROF_JSON_EOF) {
            if (ntok) *ntok = n;
            return 0;
        }
    }
}

/* Tokenizes DOC read through a callback delivering CHUNK bytes per call
 * (0: as much as asked). */
static int collect_chunked(const void *doc, size_t len, size_t chunk, int end_code, ubuf *out, char *msg,
                           size_t msglen)
{
    chunk_reader r = { .data = doc, .len = len, .chunk = chunk, .end_code = end_code };
    tprof_json *j;
    assert_int_equal(tprof_json_open(&j, chunk_read, &r, "chunked.json"), 0);
    int rc = collect(j, out, NULL);
    if (msg) snprintf(msg, msglen, "%s", tprof_json_errmsg(j));
    tprof_json_close(j);
    return rc;
}

static int collect_mem(const void *doc, size_t len, ubuf *out, char *msg, size_t msglen)
{
    tprof_json *j;
    assert_int_equal(tprof_json_open_mem(&j, doc, len, "mem.json"), 0);
    int rc = collect(j, out, NULL);
    if (msg) snprintf(msg, msglen, "%s", tprof_json_errmsg(j));
    tprof_json_close(j);
    return rc;
}

static void check_tokens(tprof_json *j, const want_tok *w, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        tprof_json_token t;
        int rc = tprof_json_next(j, &t);
        if (rc) fail_msg("token %zu: error %d: %s", i, rc, tprof_json_errmsg(j));
        if (t.type != w[i].type)
            fail_msg("token %zu: type %s, expected %s", i, type_name(t.type), type_name(w[i].type));
        if (t.offset != w[i].offset)
            fail_msg("token %zu (%s): offset %llu, expected %llu", i, type_name(t.type),
                     (unsigned long long)t.offset, (unsigned long long)w[i].offset);
        if (t.depth != w[i].depth)
            fail_msg("token %zu (%s): depth %d, expected %d", i, type_name(t.type), t.depth, w[i].depth);
        if (w[i].text) {
            size_t wl = w[i].len ? w[i].len : strlen(w[i].text);
            if (t.len != wl || memcmp(t.text, w[i].text, wl) != 0)
                fail_msg("token %zu (%s): text '%.*s' (%zu bytes), expected '%s' (%zu bytes)", i,
                         type_name(t.type), (int)t.len, t.text, t.len, w[i].text, wl);
        }
    }
}

/* Expects the first error of DOC (in memory) to be CODE at byte AT (-1: any). */
static void expect_error_mem(const char *doc, size_t len, int code, long long at)
{
    tprof_json *j;
    assert_int_equal(tprof_json_open_mem(&j, doc, len, "bad.json"), 0);
    tprof_json_token t;
    int rc;
    size_t guard = 0;
    while ((rc = tprof_json_next(j, &t)) == 0 && t.type != TPROF_JSON_EOF) assert_true(++guard < 100000);
    if (rc != code)
        fail_msg("document '%.*s': rc %d (%s), expected %d; msg '%s'", (int)len, doc, rc, tprof_strerror(rc), code,
                 tprof_json_errmsg(j));
    const char *msg = tprof_json_errmsg(j);
    assert_non_null(strstr(msg, "bad.json"));
    if (at >= 0 && msg_byte(msg) != at)
        fail_msg("document '%.*s': message '%s' does not name byte %lld", (int)len, doc, msg, at);
    /* errors are sticky */
    assert_int_equal(tprof_json_next(j, &t), code);
    tprof_json_close(j);
}

/* Same through a read callback delivering CHUNK bytes at a time. */
static void expect_error_chunked(const char *doc, size_t len, size_t chunk, int code, long long at)
{
    chunk_reader r = { .data = (const uint8_t *)doc, .len = len, .chunk = chunk };
    tprof_json *j;
    assert_int_equal(tprof_json_open(&j, chunk_read, &r, "bad.json"), 0);
    tprof_json_token t;
    int rc;
    size_t guard = 0;
    while ((rc = tprof_json_next(j, &t)) == 0 && t.type != TPROF_JSON_EOF) assert_true(++guard < 100000);
    if (rc != code)
        fail_msg("document '%.*s' (chunk %zu): rc %d, expected %d; msg '%s'", (int)len, doc, chunk, rc, code,
                 tprof_json_errmsg(j));
    if (at >= 0 && msg_byte(tprof_json_errmsg(j)) != at)
        fail_msg("document '%.*s' (chunk %zu): message '%s' does not name byte %lld", (int)len, doc, chunk,
                 tprof_json_errmsg(j), at);
    tprof_json_close(j);
}

#define EXPECT_ERR(lit, code, at) expect_error_mem(lit, sizeof(lit) - 1, code, at)

static void next_is(tprof_json *j, tprof_json_type type, const char *text)
{
    tprof_json_token t;
    int rc = tprof_json_next(j, &t);
    if (rc) fail_msg("expected %s, got error %s", type_name(type), tprof_json_errmsg(j));
    if (t.type != type) fail_msg("expected %s, got %s", type_name(type), type_name(t.type));
    if (text && (t.len != strlen(text) || memcmp(t.text, text, t.len) != 0))
        fail_msg("expected '%s', got '%.*s'", text, (int)t.len, t.text);
}

/* ---- structure and offsets ------------------------------------------- */

/*            0         1         2         3         4         5
 *            0123456789012345678901234567890123456789012345678901234567890 */
static const char DOC_A[] = "{\"a\":[1,true,false,null,\"s\"],\"b\":{\"c\":-2.5e3},\"e\":[],\"f\":{}}";

static const want_tok DOC_A_TOKENS[] = {
    { TPROF_JSON_OBJ_BEGIN, NULL, 0, 0, 1 },
    { TPROF_JSON_KEY, "a", 0, 1, 1 },
    { TPROF_JSON_ARR_BEGIN, NULL, 0, 5, 2 },
    { TPROF_JSON_NUMBER, "1", 0, 6, 2 },
    { TPROF_JSON_TRUE, NULL, 0, 8, 2 },
    { TPROF_JSON_FALSE, NULL, 0, 13, 2 },
    { TPROF_JSON_NULL, NULL, 0, 19, 2 },
    { TPROF_JSON_STRING, "s", 0, 24, 2 },
    { TPROF_JSON_ARR_END, NULL, 0, 27, 1 },
    { TPROF_JSON_KEY, "b", 0, 29, 1 },
    { TPROF_JSON_OBJ_BEGIN, NULL, 0, 33, 2 },
    { TPROF_JSON_KEY, "c", 0, 34, 2 },
    { TPROF_JSON_NUMBER, "-2.5e3", 0, 38, 2 },
    { TPROF_JSON_OBJ_END, NULL, 0, 44, 1 },
    { TPROF_JSON_KEY, "e", 0, 46, 1 },
    { TPROF_JSON_ARR_BEGIN, NULL, 0, 50, 2 },
    { TPROF_JSON_ARR_END, NULL, 0, 51, 1 },
    { TPROF_JSON_KEY, "f", 0, 53, 1 },
    { TPROF_JSON_OBJ_BEGIN, NULL, 0, 57, 2 },
    { TPROF_JSON_OBJ_END, NULL, 0, 58, 1 },
    { TPROF_JSON_OBJ_END, NULL, 0, 59, 0 },
    { TPROF_JSON_EOF, NULL, 0, 60, 0 },
};

static void test_nested_tokens_mem(void **state)
{
    (void)state;
    assert_int_equal(sizeof DOC_A - 1, 60);
    tprof_json *j;
    assert_int_equal(tprof_json_open_mem(&j, DOC_A, sizeof DOC_A - 1, "a.json"), 0);
    check_tokens(j, DOC_A_TOKENS, sizeof DOC_A_TOKENS / sizeof DOC_A_TOKENS[0]);
    assert_int_equal(tprof_json_offset(j), 60);
    /* EOF repeats */
    tprof_json_token t;
    assert_int_equal(tprof_json_next(j, &t), 0);
    assert_int_equal(t.type, TPROF_JSON_EOF);
    tprof_json_close(j);
}

static void test_nested_tokens_callback(void **state)
{
    (void)state;
    static const size_t chunks[] = { 0, 1, 2, 3, 7, 64 };
    for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++) {
        chunk_reader r = { .data = (const uint8_t *)DOC_A, .len = sizeof DOC_A - 1, .chunk = chunks[c] };
        tprof_json *j;
        assert_int_equal(tprof_json_open(&j, chunk_read, &r, "a.json"), 0);
        check_tokens(j, DOC_A_TOKENS, sizeof DOC_A_TOKENS / sizeof DOC_A_TOKENS[0]);
        tprof_json_close(j);
    }
}

static void test_whitespace_between_tokens(void **state)
{
    (void)state;
    /*                   0 1 2 3 4 5 6 7 8 9 10 */
    static const char d[] = " \t\r\n[ 1 ,\n\"x\"\t] \n";
    /* '[' at 4, '1' at 6, '"x"' at 10, ']' at 14, end 17 */
    static const want_tok w[] = {
        { TPROF_JSON_ARR_BEGIN, NULL, 0, 4, 1 }, { TPROF_JSON_NUMBER, "1", 0, 6, 1 },
        { TPROF_JSON_STRING, "x", 0, 10, 1 },    { TPROF_JSON_ARR_END, NULL, 0, 14, 0 },
        { TPROF_JSON_EOF, NULL, 0, 17, 0 },
    };
    assert_int_equal(sizeof d - 1, 17);
    tprof_json *j;
    assert_int_equal(tprof_json_open_mem(&j, d, sizeof d - 1, NULL), 0);
    check_tokens(j, w, sizeof w / sizeof w[0]);
    tprof_json_close(j);
}

static void test_offset_progress(void **state)
{
    (void)state;
    tprof_json *j;
    assert_int_equal(tprof_json_open_mem(&j, DOC_A, sizeof DOC_A - 1, NULL), 0);
    assert_int_equal(tprof_json_offset(j), 0);
    tprof_json_token t;
    assert_int_equal(tprof_json_next(j, &t), 0); /* { */
    assert_int_equal(tprof_json_offset(j), 1);
    assert_int_equal(tprof_json_next(j, &t), 0); /* "a" ends at 3 */
    assert_int_equal(tprof_json_offset(j), 4);
    tprof_json_close(j);
}

static void test_top_level_scalars_mem(void **state)
{
    (void)state;
    static const struct { const char *doc; tprof_json_type type; const char *text; } c[] = {
        { "42", TPROF_JSON_NUMBER, "42" },   { " -0.5 ", TPROF_JSON_NUMBER, "-0.5" },
        { "\"hi\"", TPROF_JSON_STRING, "hi" }, { "true", TPROF_JSON_TRUE, NULL },
        { "false\n", TPROF_JSON_FALSE, NULL }, { "null", TPROF_JSON_NULL, NULL },
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        tprof_json *j;
        assert_int_equal(tprof_json_open_mem(&j, c[i].doc, strlen(c[i].doc), NULL), 0);
        tprof_json_token t;
        int rc = tprof_json_next(j, &t);
        if (rc) fail_msg("'%s': %d %s", c[i].doc, rc, tprof_json_errmsg(j));
        assert_int_equal(t.type, c[i].type);
        assert_int_equal(t.depth, 0);
        if (c[i].text) {
            assert_int_equal(t.len, strlen(c[i].text));
            assert_memory_equal(t.text, c[i].text, t.len);
        }
        assert_int_equal(tprof_json_next(j, &t), 0);
        assert_int_equal(t.type, TPROF_JSON_EOF);
        tprof_json_close(j);
    }
}

/* A document that is one number, read through a callback: the number ends
 * where the input ends, which is only known after the callback returns 0. */
static void test_top_level_number_callback(void **state)
{
    (void)state;
    static const char *const docs[] = { "42", "-0.5", "1e3", "0" };
    for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++) {
        chunk_reader r = { .data = (const uint8_t *)docs[i], .len = strlen(docs[i]) };
        tprof_json *j;
        assert_int_equal(tprof_json_open(&j, chunk_read, &r, "num.json"), 0);
        tprof_json_token t;
        int rc = tprof_json_next(j, &t);
        if (rc) fail_msg("top-level number '%s' via callback: rc %d (%s), expected a NUMBER token; msg '%s'",
                         docs[i], rc, tprof_strerror(rc), tprof_json_errmsg(j));
        assert_int_equal(t.type, TPROF_JSON_NUMBER);
        assert_int_equal(t.len, strlen(docs[i]));
        assert_memory_equal(t.text, docs[i], t.len);
        assert_int_equal(tprof_json_next(j, &t), 0);
        assert_int_equal(t.type, TPROF_JSON_EOF);
        tprof_json_close(j);
    }
}

/* ---- strings ---------------------------------------------------------- */

static void test_escapes(void **state)
{
    (void)state;
    static const char d[] = "[\"\\\"\\\\\\/\\b\\f\\n\\r\\t\",\"caf\\u00e9\",\"\\ud83d\\ude00\",\"a\\ud800b\","
                            "\"\\udc00x\",\"\\u00E9\\u0041\",\"a\\u0000b\",\"\\ud83d\\u0041 \",\"\\uD83D\\uDE00\"]";
    static const char *const want[] = {
        "\"\\/\b\f\n\r\t",
        "caf\xc3\xa9",
        "\xf0\x9f\x98\x80",
        "a\xef\xbf\xbd" "b",
        "\xef\xbf\xbdx",
        "\xc3\xa9" "A",
        "a\0b",
        "\xef\xbf\xbd" "A ",
        "\xf0\x9f\x98\x80",
    };
    static const size_t want_len[] = { 8, 5, 4, 5, 4, 3, 3, 5, 4 };
    static const size_t chunks[] = { 0, 1, 5 };
    for (int mode = 0; mode < 4; mode++) {
        tprof_json *j;
        chunk_reader r = { .data = (const uint8_t *)d, .len = sizeof d - 1 };
        if (mode == 0) assert_int_equal(tprof_json_open_mem(&j, d, sizeof d - 1, NULL), 0);
        else {
            r.chunk = chunks[mode - 1];
            assert_int_equal(tprof_json_open(&j, chunk_read, &r, NULL), 0);
        }
        tprof_json_token t;
        assert_int_equal(tprof_json_next(j, &t), 0);
        assert_int_equal(t.type, TPROF_JSON_ARR_BEGIN);
        for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
            int rc = tprof_json_next(j, &t);
            if (rc) fail_msg("string %zu (mode %d): %s", i, mode, tprof_json_errmsg(j));
            assert_int_equal(t.type, TPROF_JSON_STRING);
            if (t.len != want_len[i] || memcmp(t.text, want[i], want_len[i]) != 0)
                fail_msg("string %zu (mode %d): got %zu bytes, expected %zu", i, mode, t.len, want_len[i]);
        }
        assert_int_equal(tprof_json_next(j, &t), 0);
        assert_int_equal(t.type, TPROF_JSON_ARR_END);
        assert_int_equal(tprof_json_next(j, &t), 0);
        assert_int_equal(t.type, TPROF_JSON_EOF);
        tprof_json_close(j);
    }
}

static void test_escaped_key(void **state)
{
    (void)state;
    static const char d[] = "{\"k\\u00e9y\\n\":1}";
    tprof_json *j;
    assert_int_equal(tprof_json_open_mem(&j, d, sizeof d - 1, NULL), 0);
    tprof_json_token t;
    assert_int_equal(tprof_json_next(j, &t), 0);
    assert_int_equal(tprof_json_next(j, &t), 0);
    assert_int_equal(t.type, TPROF_JSON_KEY);
    assert_int_equal(t.len, 5);
    assert_memory_equal(t.text, "k\xc3\xa9y\n", 5);
    tprof_json_close(j);
}

/* A lone high surrogate right before the closing quote, near the end of the
 * input: the string is complete, so it decodes to U+FFFD. */
static void test_lone_high_surrogate_at_string_end(void **state)
{
    (void)state;
    static const char *const docs[] = { "[\"\\ud83d\"]", "{\"k\":\"\\ud83d\"}", "\"\\ud83d\"", "[\"\\ud83dx\"]" };
    static const char *const want[] = { "\xef\xbf\xbd", "\xef\xbf\xbd", "\xef\xbf\xbd", "\xef\xbf\xbdx" };
    for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++) {
        tprof_json *j;
        assert_int_equal(tprof_json_open_mem(&j, docs[i], strlen(docs[i]), NULL), 0);
        tprof_json_token t;
        int rc;
        int found = 0;
        while ((rc = tprof_json_next(j, &t)) == 0 && t.type != TPROF_JSON_EOF)
            if (t.type == TPROF_JSON_STRING) {
                assert_int_equal(t.len, strlen(want[i]));
                assert_memory_equal(t.text, want[i], t.len);
                found = 1;
            }
        char msg[400];
        snprintf(msg, sizeof msg, "%s", tprof_json_errmsg(j));
        tprof_json_close(j);
        if (rc) fail_msg("'%s': rc %d (%s), expected the string to decode to U+FFFD; msg '%s'", docs[i], rc,
                         tprof_strerror(rc), msg);
        assert_true(found);
    }
}

static void test_raw_utf8_passes(void **state)
{
    (void)state;
    /* 2-, 3- and 4-byte sequences at their boundaries; DEL is not a control */
    static const char d[] = "[\"\xc2\x80 \xdf\xbf \xe0\xa0\x80 \xed\x9f\xbf \xee\x80\x80 \xef\xbf\xbf "
                            "\xf0\x90\x80\x80 \xf4\x8f\xbf\xbf \x7f\"]";
    tprof_json *j;
    assert_int_equal(tprof_json_open_mem(&j, d, sizeof d - 1, NULL), 0);
    tprof_json_token t;
    assert_int_equal(tprof_json_next(j, &t), 0);
    assert_int_equal(tprof_json_next(j, &t), 0);
    assert_int_equal(t.type, TPROF_JSON_STRING);
    assert_int_equal(t.len, sizeof d - 1 - 4);
    assert_memory_equal(t.text, d + 2, t.len);
    tprof_json_close(j);
}

static void test_invalid_utf8(void **state)
{
    (void)state;
    /* "[\"ok\", \"a" is 9 bytes: the bad byte is byte 9 */
    static const struct { const char *bad; size_t n; } c[] = {
        { "\xc0\x80", 2 },          /* overlong NUL */
        { "\xc1\xbf", 2 },          /* overlong */
        { "\xe0\x80\x80", 3 },      /* overlong 3-byte */
        { "\xed\xa0\x80", 3 },      /* UTF-16 surrogate D800 */
        { "\xf0\x80\x80\x80", 4 },  /* overlong 4-byte */
        { "\xf4\x90\x80\x80", 4 },  /* above U+10FFFF */
        { "\xf5\x80\x80\x80", 4 },  /* invalid lead */
        { "\xff", 1 },
        { "\x80", 1 },              /* lone continuation */
        { "\xe2\x82", 2 },          /* truncated sequence (then the quote) */
        { "\xf0\x9f\x98", 3 },      /* truncated 4-byte sequence */
        { "\xc3", 1 },              /* truncated 2-byte sequence */
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        char doc[64];
        size_t n = 0;
        memcpy(doc, "[\"ok\", \"a", 9);
        n = 9;
        memcpy(doc + n, c[i].bad, c[i].n);
        n += c[i].n;
        memcpy(doc + n, "z\"]", 3);
        n += 3;
        expect_error_mem(doc, n, TPROF_EFORMAT, 9);
        expect_error_chunked(doc, n, 1, TPROF_EFORMAT, 9);
        expect_error_chunked(doc, n, 10, TPROF_EFORMAT, 9);
        /* same after an escape (the decoding path): "[\"\\n" is 4 bytes */
        n = 0;
        memcpy(doc, "[\"\\n", 4);
        n = 4;
        memcpy(doc + n, c[i].bad, c[i].n);
        n += c[i].n;
        memcpy(doc + n, "\"]", 2);
        n += 2;
        expect_error_mem(doc, n, TPROF_EFORMAT, 4);
        expect_error_chunked(doc, n, 1, TPROF_EFORMAT, 4);
    }
    /* in a key */
    EXPECT_ERR("{\"\xed\xa0\x80\":1}", TPROF_EFORMAT, 2);
}

static void test_control_chars(void **state)
{
    (void)state;
    EXPECT_ERR("[\"a\x01" "b\"]", TPROF_EFORMAT, 3);
    EXPECT_ERR("[\"a\tb\"]", TPROF_EFORMAT, 3);
    EXPECT_ERR("[\"a\nb\"]", TPROF_EFORMAT, 3);
    EXPECT_ERR("[\"\\t\x1f\"]", TPROF_EFORMAT, 4);
    EXPECT_ERR("{\"k\x02\":1}", TPROF_EFORMAT, 3);
    expect_error_chunked("[\"a\x01" "b\"]", 7, 1, TPROF_EFORMAT, 3);
}

static void test_bad_escapes(void **state)
{
    (void)state;
    EXPECT_ERR("[\"\\x\"]", TPROF_EFORMAT, 2);
    EXPECT_ERR("[\"ab\\'\"]", TPROF_EFORMAT, 4);
    EXPECT_ERR("[\"\\u12G4\"]", TPROF_EFORMAT, 2);
    EXPECT_ERR("[\"\\u12\"]", TPROF_EFORMAT, 2);
    EXPECT_ERR("[\"\\U00e9\"]", TPROF_EFORMAT, 2);
    expect_error_chunked("[\"\\u12G4\"]", 10, 1, TPROF_EFORMAT, 2);
}

/* ---- numbers and literals -------------------------------------------- */

static void test_valid_numbers(void **state)
{
    (void)state;
    static const char *const nums[] = { "0",   "-0",   "1.5e+10", "1E-3", "-12.34", "123456789012345678901234567890",
                                        "0.0", "1e5",  "-0.0e-0", "7E+0", "0e1",    "9.999999999999999999e999" };
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++) {
        char doc[128];
        int n = snprintf(doc, sizeof doc, "[%s,%s]", nums[i], nums[i]);
        for (int mode = 0; mode < 3; mode++) {
            tprof_json *j;
            chunk_reader r = { .data = (const uint8_t *)doc, .len = (size_t)n, .chunk = mode == 1 ? 1 : 3 };
            if (mode == 0) assert_int_equal(tprof_json_open_mem(&j, doc, (size_t)n, NULL), 0);
            else assert_int_equal(tprof_json_open(&j, chunk_read, &r, NULL), 0);
            tprof_json_token t;
            assert_int_equal(tprof_json_next(j, &t), 0);
            for (int k = 0; k < 2; k++) {
                int rc = tprof_json_next(j, &t);
                if (rc) fail_msg("'%s' (mode %d): %s", nums[i], mode, tprof_json_errmsg(j));
                assert_int_equal(t.type, TPROF_JSON_NUMBER);
                assert_int_equal(t.len, strlen(nums[i]));
                assert_memory_equal(t.text, nums[i], t.len);
            }
            assert_int_equal(tprof_json_next(j, &t), 0);
            assert_int_equal(t.type, TPROF_JSON_ARR_END);
            assert_int_equal(tprof_json_next(j, &t), 0);
            assert_int_equal(t.type, TPROF_JSON_EOF);
            tprof_json_close(j);
        }
    }
}

static void test_invalid_numbers(void **state)
{
    (void)state;
    static const char *const nums[] = { "01",  "1.",   ".5",   "-",    "1e",  "+1",   "0x1",  "-01", "1.e5",
                                        "1e+", "--1",  "1.5.", "00",   "- 1", "-a",   "1e5.", "Infinity",
                                        "NaN", "-Infinity", "1E+-2", "0.e1", "1ee2" };
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++) {
        char doc[64];
        int n = snprintf(doc, sizeof doc, "[%s]", nums[i]);
        expect_error_mem(doc, (size_t)n, TPROF_EFORMAT, -1);
        expect_error_chunked(doc, (size_t)n, 1, TPROF_EFORMAT, -1);
        expect_error_chunked(doc, (size_t)n, 0, TPROF_EFORMAT, -1);
    }
    /* unambiguous at the top level too */
    EXPECT_ERR("01", TPROF_EFORMAT, -1);
    EXPECT_ERR(".5", TPROF_EFORMAT, 0);
    EXPECT_ERR("+1", TPROF_EFORMAT, 0);
    EXPECT_ERR("0x1", TPROF_EFORMAT, 1);
}

static void test_literals(void **state)
{
    (void)state;
    static const char d[] = "[true,false,null]";
    static const want_tok w[] = {
        { TPROF_JSON_ARR_BEGIN, NULL, 0, 0, 1 }, { TPROF_JSON_TRUE, NULL, 0, 1, 1 },
        { TPROF_JSON_FALSE, NULL, 0, 6, 1 },     { TPROF_JSON_NULL, NULL, 0, 12, 1 },
        { TPROF_JSON_ARR_END, NULL, 0, 16, 0 },  { TPROF_JSON_EOF, NULL, 0, 17, 0 },
    };
    tprof_json *j;
    assert_int_equal(tprof_json_open_mem(&j, d, sizeof d - 1, NULL), 0);
    check_tokens(j, w, sizeof w / sizeof w[0]);
    tprof_json_close(j);

    EXPECT_ERR("[tru]", TPROF_EFORMAT, 1);
    EXPECT_ERR("[trUe]", TPROF_EFORMAT, 1);
    EXPECT_ERR("[nul]", TPROF_EFORMAT, 1);
    EXPECT_ERR("[fals]", TPROF_EFORMAT, 1);
    EXPECT_ERR("[True]", TPROF_EFORMAT, 1);
    EXPECT_ERR("[nan]", TPROF_EFORMAT, 1);
    EXPECT_ERR("[truex]", TPROF_EFORMAT, 5);
    EXPECT_ERR("[nullnull]", TPROF_EFORMAT, 5);
    expect_error_chunked("[tru]", 5, 1, TPROF_EFORMAT, 1);
    /* a literal cut by the end of the input is a truncation */
    EXPECT_ERR("[tru", TPROF_ETRUNC, -1);
    EXPECT_ERR("fal", TPROF_ETRUNC, -1);
}

/* ---- grammar errors --------------------------------------------------- */

static void test_structure_errors(void **state)
{
    (void)state;
    EXPECT_ERR("{} x", TPROF_EFORMAT, 3);
    EXPECT_ERR("[1]]", TPROF_EFORMAT, 3);
    EXPECT_ERR("{}{}", TPROF_EFORMAT, 2);
    EXPECT_ERR("1 2", TPROF_EFORMAT, 2);
    EXPECT_ERR("\"a\" \"b\"", TPROF_EFORMAT, 4);
    EXPECT_ERR("[1,]", TPROF_EFORMAT, 3);
    EXPECT_ERR("[,1]", TPROF_EFORMAT, 1);
    EXPECT_ERR("[1 2]", TPROF_EFORMAT, 3);
    EXPECT_ERR("{\"a\" 1}", TPROF_EFORMAT, 5);
    EXPECT_ERR("{\"a\":1,}", TPROF_EFORMAT, 7);
    EXPECT_ERR("{1:2}", TPROF_EFORMAT, 1);
    EXPECT_ERR("{\"a\":1]", TPROF_EFORMAT, 6);
    EXPECT_ERR("[1}", TPROF_EFORMAT, 2);
    EXPECT_ERR("{\"a\"}", TPROF_EFORMAT, 4);
    EXPECT_ERR("]", TPROF_EFORMAT, 0);
    EXPECT_ERR("'a'", TPROF_EFORMAT, 0);
    EXPECT_ERR("[\x01]", TPROF_EFORMAT, 1);
    expect_error_chunked("{} x", 4, 1, TPROF_EFORMAT, 3);
    expect_error_chunked("[1 2]", 5, 1, TPROF_EFORMAT, 3);
}

static void test_trailing_whitespace_ok(void **state)
{
    (void)state;
    static const char d[] = "{} \n\t\r  ";
    ubuf b = { 0 };
    assert_int_equal(collect_mem(d, sizeof d - 1, &b, NULL, 0), 0);
    ubuf_free(&b);
    assert_int_equal(collect_chunked(d, sizeof d - 1, 1, 0, &b, NULL, 0), 0);
    ubuf_free(&b);
}

static void test_empty_input(void **state)
{
    (void)state;
    EXPECT_ERR("", TPROF_EFORMAT, 0);
    EXPECT_ERR("  \n\t ", TPROF_EFORMAT, -1);
    expect_error_chunked("", 0, 0, TPROF_EFORMAT, 0);
    expect_error_chunked("   ", 3, 1, TPROF_EFORMAT, -1);
}

static void test_depth_limit(void **state)
{
    (void)state;
    const int max = TPROF_JSON_MAX_DEPTH;
    char *d = malloc((size_t)max * 2 + 4);
    assert_non_null(d);
    /* exactly the limit: fine */
    memset(d, '[', (size_t)max);
    memset(d + max, ']', (size_t)max);
    tprof_json *j;
    assert_int_equal(tprof_json_open_mem(&j, d, (size_t)max * 2, NULL), 0);
    tprof_json_token t;
    int deepest = 0, rc;
    size_t n = 0;
    while ((rc = tprof_json_next(j, &t)) == 0 && t.type != TPROF_JSON_EOF) {
        if (t.depth > deepest) deepest = t.depth;
        n++;
    }
    assert_int_equal(rc, 0);
    assert_int_equal(deepest, max);
    assert_int_equal(n, (size_t)max * 2);
    tprof_json_close(j);

    /* one deeper: TPROF_ELIMIT at the offending bracket */
    memset(d, '[', (size_t)max + 1);
    memset(d + max + 1, ']', (size_t)max + 1);
    expect_error_mem(d, (size_t)max * 2 + 2, TPROF_ELIMIT, max);
    expect_error_chunked(d, (size_t)max * 2 + 2, 7, TPROF_ELIMIT, max);

    /* objects count too: {"a":{"a":...  each level is 5 bytes */
    ubuf b = { 0 };
    for (int i = 0; i <= max; i++) ubuf_str(&b, "{\"a\":");
    ubuf_str(&b, "1");
    for (int i = 0; i <= max; i++) ubuf_str(&b, "}");
    expect_error_mem((const char *)b.p, b.len, TPROF_ELIMIT, (long long)max * 5);
    ubuf_free(&b);
    free(d);
}

/* ---- truncation ------------------------------------------------------- */

static const char SAMPLE[] =
    "{\"name\":\"caf\\u00e9 \\ud83d\\ude00 \\\"q\\\"\",\"raw\":\"\xc3\xa9\xf0\x9f\x98\x80\","
    "\"n\":[0,-1.5e+3,12.75,1E-3,-0],\"t\":true,\"f\":false,\"z\":null,\"o\":{\"a\":[],\"b\":{}}}";

/* Tokens up to an error must be a prefix of the full stream (a number cut by
 * the end may be shorter). */
static void check_prefix(const ubuf *part, const ubuf *full, size_t cut)
{
    const char *p = (const char *)part->p, *f = (const char *)full->p;
    size_t pl = part->len;
    if (pl == 0) return;
    if (pl <= full->len && memcmp(p, f, pl) == 0) return;
    /* the last token may be a number cut short: compare up to its line */
    const char *last = p + pl - 1;
    while (last > p && last[-1] != '\n') last--;
    size_t head = (size_t)(last - p);
    assert_true(head <= full->len);
    if (memcmp(p, f, head) != 0 || strncmp(last, "NUMBER@", 7) != 0)
        fail_msg("cut %zu: tokens before the error are not a prefix of the full stream", cut);
}

static void truncation_sweep(int mode)
{
    const size_t len = sizeof SAMPLE - 1;
    ubuf full = { 0 };
    int rc = mode == 0 ? collect_mem(SAMPLE, len, &full, NULL, 0) : collect_chunked(SAMPLE, len, 7, 0, &full, NULL, 0);
    assert_int_equal(rc, 0);
    char bad[2048] = "";
    size_t nbad = 0;
    for (size_t cut = 1; cut < len; cut++) {
        ubuf part = { 0 };
        char msg[400];
        if (mode == 0) rc = collect_mem(SAMPLE, cut, &part, msg, sizeof msg);
        else if (mode == 1) rc = collect_chunked(SAMPLE, cut, 7, 0, &part, msg, sizeof msg);
        else rc = collect_chunked(SAMPLE, cut, 1, TPROF_ETRUNC, &part, msg, sizeof msg);
        if (rc != TPROF_ETRUNC) {
            if (nbad++ < 8) {
                size_t l = strlen(bad);
                snprintf(bad + l, sizeof bad - l, "\n  cut %zu ('...%.*s'): rc %d: %s", cut,
                         (int)(cut < 12 ? cut : 12), SAMPLE + cut - (cut < 12 ? cut : 12), rc, msg);
            }
        } else
            check_prefix(&part, &full, cut);
        ubuf_free(&part);
    }
    ubuf_free(&full);
    if (nbad) fail_msg("mode %d: %zu of %zu cuts did not give TPROF_ETRUNC:%s", mode, nbad, len - 1, bad);
}

static void test_truncation_every_byte_mem(void **state)
{
    (void)state;
    truncation_sweep(0);
}

static void test_truncation_every_byte_callback(void **state)
{
    (void)state;
    truncation_sweep(1);
}

/* The read callback itself reports the cut (as a compressed source does). */
static void test_truncation_every_byte_source_cut(void **state)
{
    (void)state;
    truncation_sweep(2);
}

/* A complete document whose source then reports a cut: every token is
 * delivered; the end is either EOF or TPROF_ETRUNC, never a format error. */
static void test_complete_document_then_source_cut(void **state)
{
    (void)state;
    static const char d[] = "{\"a\":[1,2]}";
    chunk_reader r = { .data = (const uint8_t *)d, .len = sizeof d - 1, .end_code = TPROF_ETRUNC };
    tprof_json *j;
    assert_int_equal(tprof_json_open(&j, chunk_read, &r, NULL), 0);
    next_is(j, TPROF_JSON_OBJ_BEGIN, NULL);
    next_is(j, TPROF_JSON_KEY, "a");
    next_is(j, TPROF_JSON_ARR_BEGIN, NULL);
    next_is(j, TPROF_JSON_NUMBER, "1");
    next_is(j, TPROF_JSON_NUMBER, "2");
    next_is(j, TPROF_JSON_ARR_END, NULL);
    next_is(j, TPROF_JSON_OBJ_END, NULL);
    tprof_json_token t;
    int rc = tprof_json_next(j, &t);
    assert_true(rc == TPROF_ETRUNC || (rc == 0 && t.type == TPROF_JSON_EOF));
    tprof_json_close(j);
}

static void test_source_error_propagates(void **state)
{
    (void)state;
    chunk_reader r = { .data = (const uint8_t *)"[1,2,", .len = 5, .end_code = TPROF_EIO };
    tprof_json *j;
    assert_int_equal(tprof_json_open(&j, chunk_read, &r, "io.json"), 0);
    tprof_json_token t;
    int rc;
    while ((rc = tprof_json_next(j, &t)) == 0) assert_int_not_equal(t.type, TPROF_JSON_EOF);
    assert_int_equal(rc, TPROF_EIO);
    assert_int_equal(tprof_json_next(j, &t), TPROF_EIO);
    tprof_json_close(j);
}

/* ---- chunking equivalence and window growth --------------------------- */

static void build_rich_doc(ubuf *b)
{
    uint64_t seed = 42;
    ubuf_str(b, "{\"traceEvents\":[");
    for (int i = 0; i < 60; i++) {
        if (i) ubuf_str(b, ",\n ");
        ubuf_printf(b, "{\"ph\":\"X\",\"name\":\"k\\u00e9rnel_%d \\ud83d\\ude00 \xe2\x82\xac\\\"\\\\\",\"ts\":%d.%03d,"
                       "\"dur\":-%de-%d,\"args\":{\"a\":[true,false,null,{}],\"s\":\"",
                    i, 1000 + i * 37, i * 7 % 1000, i + 1, i % 4);
        /* a long-ish run with multi-byte characters and escapes */
        int n = (int)(rng_next(&seed) % 200);
        for (int k = 0; k < n; k++) {
            switch (rng_next(&seed) % 6) {
            case 0: ubuf_str(b, "\xc3\xa9"); break;
            case 1: ubuf_str(b, "\\n"); break;
            case 2: ubuf_str(b, "\xf0\x9f\x98\x80"); break;
            case 3: ubuf_str(b, "\\u2603"); break;
            default: ubuf_str(b, "abcdefg"); break;
            }
        }
        ubuf_str(b, "\"}}");
    }
    ubuf_str(b, "],\"deviceProperties\":[],\"x\":1.25E+2}");
}

static void test_same_tokens_any_chunking(void **state)
{
    (void)state;
    ubuf doc = { 0 };
    build_rich_doc(&doc);
    ubuf ref = { 0 };
    size_t ntok = 0;
    {
        tprof_json *j;
        assert_int_equal(tprof_json_open_mem(&j, doc.p, doc.len, NULL), 0);
        int rc = collect(j, &ref, &ntok);
        if (rc) fail_msg("mem: %s", tprof_json_errmsg(j));
        tprof_json_close(j);
    }
    assert_true(ntok > 60 * 20);
    static const size_t chunks[] = { 0, 1, 7, 4096, 65537 };
    for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++) {
        ubuf got = { 0 };
        char msg[400];
        int rc = collect_chunked(doc.p, doc.len, chunks[c], 0, &got, msg, sizeof msg);
        if (rc) fail_msg("chunk %zu: rc %d: %s", chunks[c], rc, msg);
        if (got.len != ref.len || memcmp(got.p, ref.p, ref.len) != 0)
            fail_msg("chunk %zu: token stream differs from the in-memory one", chunks[c]);
        ubuf_free(&got);
    }
    ubuf_free(&ref);
    ubuf_free(&doc);
}

/* A small first window (tprof_json_open_sized, as the reader opens small
 * inputs) gives the same tokens: it grows for tokens longer than it. */
static void test_same_tokens_small_window(void **state)
{
    (void)state;
    ubuf doc = { 0 };
    build_rich_doc(&doc);
    ubuf ref = { 0 };
    {
        tprof_json *j;
        assert_int_equal(tprof_json_open_mem(&j, doc.p, doc.len, NULL), 0);
        if (collect(j, &ref, NULL)) fail_msg("mem: %s", tprof_json_errmsg(j));
        tprof_json_close(j);
    }
    static const size_t windows[] = { 1, 64, 100, 4096 };
    static const size_t chunks[] = { 0, 1, 7, 4096 };
    for (size_t w = 0; w < sizeof windows / sizeof windows[0]; w++)
        for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++) {
            chunk_reader r = { .data = doc.p, .len = doc.len, .chunk = chunks[c] };
            tprof_json *j;
            assert_int_equal(tprof_json_open_sized(&j, chunk_read, &r, NULL, windows[w]), 0);
            ubuf got = { 0 };
            if (collect(j, &got, NULL)) fail_msg("window %zu chunk %zu: %s", windows[w], chunks[c], tprof_json_errmsg(j));
            if (got.len != ref.len || memcmp(got.p, ref.p, ref.len) != 0)
                fail_msg("window %zu chunk %zu: token stream differs from the in-memory one", windows[w], chunks[c]);
            tprof_json_close(j);
            ubuf_free(&got);
        }
    /* a string 100 times the window */
    ubuf big = { 0 };
    ubuf_str(&big, "[\"");
    for (int i = 0; i < 6400; i++) ubuf_str(&big, "x");
    ubuf_str(&big, "\"]");
    chunk_reader r = { .data = big.p, .len = big.len, .chunk = 0 };
    tprof_json *j;
    assert_int_equal(tprof_json_open_sized(&j, chunk_read, &r, NULL, 64), 0);
    tprof_json_token t;
    assert_int_equal(tprof_json_next(j, &t), 0);
    assert_int_equal(tprof_json_next(j, &t), 0);
    assert_int_equal(t.type, TPROF_JSON_STRING);
    assert_int_equal(t.len, 6400);
    tprof_json_close(j);
    ubuf_free(&big);
    ubuf_free(&ref);
    ubuf_free(&doc);
}

/* A document much larger than the 1 MiB window, many small tokens. */
static void test_many_tokens_across_windows(void **state)
{
    (void)state;
    ubuf doc = { 0 };
    const int n = 400000;
    ubuf_str(&doc, "[");
    for (int i = 0; i < n; i++) ubuf_printf(&doc, i ? ",%d" : "%d", i);
    ubuf_str(&doc, "]");
    assert_true(doc.len > (2u << 20));
    static const size_t chunks[] = { 0, 7, 100000 };
    for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++) {
        chunk_reader r = { .data = doc.p, .len = doc.len, .chunk = chunks[c] };
        tprof_json *j;
        assert_int_equal(tprof_json_open(&j, chunk_read, &r, NULL), 0);
        tprof_json_token t;
        assert_int_equal(tprof_json_next(j, &t), 0);
        uint64_t off = 1;
        for (int i = 0; i < n; i++) {
            int rc = tprof_json_next(j, &t);
            if (rc) fail_msg("number %d: %s", i, tprof_json_errmsg(j));
            char want[16];
            int wl = snprintf(want, sizeof want, "%d", i);
            assert_int_equal(t.type, TPROF_JSON_NUMBER);
            if (t.offset != off || t.len != (size_t)wl || memcmp(t.text, want, (size_t)wl) != 0)
                fail_msg("number %d (chunk %zu): '%.*s' at %llu, expected '%s' at %llu", i, chunks[c], (int)t.len,
                         t.text, (unsigned long long)t.offset, want, (unsigned long long)off);
            off += (uint64_t)wl + 1;
        }
        assert_int_equal(tprof_json_next(j, &t), 0);
        assert_int_equal(t.type, TPROF_JSON_ARR_END);
        assert_int_equal(tprof_json_next(j, &t), 0);
        assert_int_equal(t.type, TPROF_JSON_EOF);
        assert_int_equal(tprof_json_offset(j), doc.len);
        tprof_json_close(j);
    }
    ubuf_free(&doc);
}

/* Strings longer than the initial 1 MiB window force it to grow. */
static void test_long_string_grows_window(void **state)
{
    (void)state;
    static const size_t sizes[] = { (3u << 19) /* 1.5 MiB */, (3u << 20) + 5 /* 3 MiB: grows twice */ };
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        size_t n = sizes[s];
        ubuf doc = { 0 }, want = { 0 };
        ubuf_str(&doc, "[\"");
        uint8_t *run = malloc(n);
        assert_non_null(run);
        for (size_t i = 0; i < n; i++) run[i] = (uint8_t)('a' + i % 26);
        ubuf_add(&doc, run, n);
        ubuf_add(&want, run, n);
        ubuf_str(&doc, "\\n\xc3\xa9\\u00e9\"");
        ubuf_str(&want, "\n\xc3\xa9\xc3\xa9");
        /* a second long string without escapes (the zero-copy path) */
        ubuf_str(&doc, ",\"");
        ubuf_add(&doc, run, n);
        ubuf_str(&doc, "\",7]");
        free(run);
        static const size_t chunks[] = { 0, 65536, 999983 };
        for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++) {
            chunk_reader r = { .data = doc.p, .len = doc.len, .chunk = chunks[c] };
            tprof_json *j;
            assert_int_equal(tprof_json_open(&j, chunk_read, &r, NULL), 0);
            tprof_json_token t;
            assert_int_equal(tprof_json_next(j, &t), 0);
            int rc = tprof_json_next(j, &t);
            if (rc) fail_msg("size %zu chunk %zu: %s", n, chunks[c], tprof_json_errmsg(j));
            assert_int_equal(t.type, TPROF_JSON_STRING);
            assert_int_equal(t.offset, 1);
            assert_int_equal(t.len, want.len);
            assert_memory_equal(t.text, want.p, want.len);
            rc = tprof_json_next(j, &t);
            if (rc) fail_msg("size %zu chunk %zu: %s", n, chunks[c], tprof_json_errmsg(j));
            assert_int_equal(t.type, TPROF_JSON_STRING);
            assert_int_equal(t.len, n);
            assert_memory_equal(t.text, want.p, n);
            assert_int_equal(t.offset, n + 14);
            assert_int_equal(tprof_json_next(j, &t), 0);
            assert_int_equal(t.type, TPROF_JSON_NUMBER);
            assert_memory_equal(t.text, "7", 1);
            assert_int_equal(tprof_json_next(j, &t), 0);
            assert_int_equal(tprof_json_next(j, &t), 0);
            assert_int_equal(t.type, TPROF_JSON_EOF);
            tprof_json_close(j);
        }
        ubuf_free(&doc);
        ubuf_free(&want);
    }
}

/* ---- skipping --------------------------------------------------------- */

static void test_skip(void **state)
{
    (void)state;
    static const char d[] = "{\"skip\":{\"a\":[1,{\"b\":\"}\"}],\"c\":\"]\"},\"keep\":2,\"num\":3,"
                            "\"arr\":[[1,2],[3]],\"last\":\"x\"}";
    static const size_t chunks[] = { 0, 1, 4 };
    for (int mode = 0; mode < 4; mode++) {
        tprof_json *j;
        chunk_reader r = { .data = (const uint8_t *)d, .len = sizeof d - 1 };
        if (mode == 0) assert_int_equal(tprof_json_open_mem(&j, d, sizeof d - 1, NULL), 0);
        else {
            r.chunk = chunks[mode - 1];
            assert_int_equal(tprof_json_open(&j, chunk_read, &r, NULL), 0);
        }
        next_is(j, TPROF_JSON_OBJ_BEGIN, NULL);
        next_is(j, TPROF_JSON_KEY, "skip");
        assert_int_equal(tprof_json_skip_value(j), 0); /* an object value */
        next_is(j, TPROF_JSON_KEY, "keep");
        next_is(j, TPROF_JSON_NUMBER, "2");
        next_is(j, TPROF_JSON_KEY, "num");
        assert_int_equal(tprof_json_skip_value(j), 0); /* a scalar value */
        next_is(j, TPROF_JSON_KEY, "arr");
        next_is(j, TPROF_JSON_ARR_BEGIN, NULL);
        next_is(j, TPROF_JSON_ARR_BEGIN, NULL);
        assert_int_equal(tprof_json_skip_container(j), 0); /* [1,2] */
        assert_int_equal(tprof_json_skip_value(j), 0);     /* [3] inside the array */
        next_is(j, TPROF_JSON_ARR_END, NULL);
        next_is(j, TPROF_JSON_KEY, "last");
        next_is(j, TPROF_JSON_STRING, "x");
        next_is(j, TPROF_JSON_OBJ_END, NULL);
        next_is(j, TPROF_JSON_EOF, NULL);
        tprof_json_close(j);
    }
}

static void test_skip_validates(void **state)
{
    (void)state;
    static const char bad[] = "{\"a\":[1,{\"b\":tru}],\"c\":1}";
    tprof_json *j;
    assert_int_equal(tprof_json_open_mem(&j, bad, sizeof bad - 1, NULL), 0);
    next_is(j, TPROF_JSON_OBJ_BEGIN, NULL);
    next_is(j, TPROF_JSON_KEY, "a");
    assert_int_equal(tprof_json_skip_value(j), TPROF_EFORMAT);
    tprof_json_close(j);

    static const char bad_utf8[] = "[[\"\xc0\x80\"],1]";
    assert_int_equal(tprof_json_open_mem(&j, bad_utf8, sizeof bad_utf8 - 1, NULL), 0);
    next_is(j, TPROF_JSON_ARR_BEGIN, NULL);
    next_is(j, TPROF_JSON_ARR_BEGIN, NULL);
    assert_int_equal(tprof_json_skip_container(j), TPROF_EFORMAT);
    assert_int_equal(msg_byte(tprof_json_errmsg(j)), 3);
    tprof_json_close(j);

    static const char cut[] = "{\"a\":[1,[2,3";
    assert_int_equal(tprof_json_open_mem(&j, cut, sizeof cut - 1, NULL), 0);
    next_is(j, TPROF_JSON_OBJ_BEGIN, NULL);
    next_is(j, TPROF_JSON_KEY, "a");
    assert_int_equal(tprof_json_skip_value(j), TPROF_ETRUNC);
    tprof_json_close(j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nested_tokens_mem),
        cmocka_unit_test(test_nested_tokens_callback),
        cmocka_unit_test(test_whitespace_between_tokens),
        cmocka_unit_test(test_offset_progress),
        cmocka_unit_test(test_top_level_scalars_mem),
        cmocka_unit_test(test_top_level_number_callback),
        cmocka_unit_test(test_escapes),
        cmocka_unit_test(test_escaped_key),
        cmocka_unit_test(test_lone_high_surrogate_at_string_end),
        cmocka_unit_test(test_raw_utf8_passes),
        cmocka_unit_test(test_invalid_utf8),
        cmocka_unit_test(test_control_chars),
        cmocka_unit_test(test_bad_escapes),
        cmocka_unit_test(test_valid_numbers),
        cmocka_unit_test(test_invalid_numbers),
        cmocka_unit_test(test_literals),
        cmocka_unit_test(test_structure_errors),
        cmocka_unit_test(test_trailing_whitespace_ok),
        cmocka_unit_test(test_empty_input),
        cmocka_unit_test(test_depth_limit),
        cmocka_unit_test(test_truncation_every_byte_mem),
        cmocka_unit_test(test_truncation_every_byte_callback),
        cmocka_unit_test(test_truncation_every_byte_source_cut),
        cmocka_unit_test(test_complete_document_then_source_cut),
        cmocka_unit_test(test_source_error_propagates),
        cmocka_unit_test(test_same_tokens_any_chunking),
        cmocka_unit_test(test_same_tokens_small_window),
        cmocka_unit_test(test_many_tokens_across_windows),
        cmocka_unit_test(test_long_string_grows_window),
        cmocka_unit_test(test_skip),
        cmocka_unit_test(test_skip_validates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
