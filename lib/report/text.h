/* UTF-8 text measures shared by the text renderers (internal). */
#ifndef TPROF_REPORT_TEXT_H
#define TPROF_REPORT_TEXT_H

#include <stddef.h>

/* Display width of UTF-8 text: code points (continuation bytes skipped). */
static inline int text_width(const char *s)
{
    int w = 0;
    for (; *s; s++) w += ((unsigned char)*s & 0xC0) != 0x80;
    return w;
}

/* Byte offset of the N-th code point. */
static inline size_t text_cp_offset(const char *s, int n)
{
    size_t i = 0;
    for (; s[i] && n > 0; n--) {
        i++;
        while (((unsigned char)s[i] & 0xC0) == 0x80) i++;
    }
    return i;
}

/* The split of a cell cut to LIMIT code points with "..." in the middle:
 * HEAD code points of the start and TAIL of the end, so that both ends stay
 * readable. */
static inline void text_cut_split(int limit, int *head, int *tail)
{
    *head = (limit - 3) * 2 / 3;
    *tail = limit - 3 - *head;
}

#endif
