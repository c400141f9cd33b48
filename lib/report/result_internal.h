/* What result.c, render.c and ranks_view.c share about results. */
#ifndef TPROF_RESULT_INTERNAL_H
#define TPROF_RESULT_INTERNAL_H

#include "trainprof/result.h"

struct tprof_rows {
    const tprof_table_desc *d;
    tprof_result *owner; /* holds the strings */
    size_t n, cap;
    tprof_cell *cells;  /* n * ncols, row-major */
    tprof_rows **kids;  /* n * nchildren; NULL until a row's child is used */
};

struct tprof_result {
    const tprof_result_desc *d;
    tprof_rows *top;
    tprof_rows **tables;
    char **strs;
    size_t nstrs, capstrs;
};

int result_kind_is_int(tprof_col_kind k);
int result_kind_is_str(tprof_col_kind k);
/* A numeric cell as a double. */
double result_cell_num(const tprof_col_desc *c, const tprof_cell *v);
/* A copy of S owned by R. */
const char *result_strdup(tprof_result *r, const char *s, size_t len);

#endif
