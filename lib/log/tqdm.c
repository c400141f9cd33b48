/* tqdm progress bars: "desc: 12%|█▏   | 120/1000 [01:23<10:12, 1.44it/s, loss=2.31, lr=3e-4]".
 * The step is the counter N of N/M; the rate becomes step_time(s); the
 * postfix items are "k=v" (set_postfix) or "k: v" (set_postfix_str, as
 * VeOmni writes them). */
#include <ctype.h>
#include <string.h>

#include "log_internal.h"

int lg_parse_tqdm(const char *s, size_t n, tprof_log_record *r)
{
    /* the bar's right edge, then " N/M [" */
    size_t i = 0;
    const char *bar = NULL;
    for (; i + 1 < n; i++)
        if (s[i] == '%' && s[i + 1] == '|') {
            bar = s + i + 2;
            break;
        }
    if (!bar) return 0;
    const char *pipe = memchr(bar, '|', (size_t)(s + n - bar));
    if (!pipe) return 0;
    size_t j = (size_t)(pipe - s) + 1;
    while (j < n && lg_space(s[j])) j++;
    int64_t step = 0;
    size_t d = j;
    while (j < n && isdigit((unsigned char)s[j]) && step < 100000000000000000LL) step = step * 10 + (s[j++] - '0');
    if (j == d || j >= n || s[j] != '/') return 0;
    const char *open = memchr(s + j, '[', n - j);
    if (!open) return 0;
    size_t a = (size_t)(open - s) + 1, e = n;
    while (e > a && s[e - 1] != ']') e--;
    if (e == a) e = n; /* cut before the closing bracket: take what is there */
    else e--;
    r->step = step;
    r->n = 0;
    /* items separated by ", ": elapsed<remaining, rate, postfix... */
    size_t k = a;
    for (int item = 0; k < e; item++) {
        size_t st = k;
        while (k < e && !(s[k] == ',' && (k + 1 >= e || s[k + 1] == ' '))) k++;
        const char *p = s + st;
        size_t len = k - st;
        while (len && lg_space(*p)) p++, len--;
        if (item == 1) {
            double v;
            size_t nl = lg_number(p, len, &v);
            if (nl && len - nl >= 4 && !memcmp(p + nl, "it/s", 4)) {
                if (v > 0) lg_add(r, "step_time(s)", 12, 1.0 / v);
            } else if (nl && len - nl >= 4 && !memcmp(p + nl, "s/it", 4)) {
                lg_add(r, "step_time(s)", 12, v);
            }
        } else if (item >= 2) {
            lg_parse_kv(p, len, r);
        }
        k++;
    }
    r->step = step; /* a postfix "step" key does not move the bar's counter */
    r->format = TPROF_LOG_TQDM;
    return 1;
}
