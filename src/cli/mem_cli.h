/* trainprof mem's renderers for the timeline and the comparison (internal). */
#ifndef TPROF_MEM_CLI_H
#define TPROF_MEM_CLI_H

#include "cli.h"
#include "trainprof/mem.h"

/* Writes PREFIX.csv (PREFIX.json when JSON) and PREFIX.svg for every device
 * of R. Returns an exit code (EXIT_OK or EXIT_INPUT after printing why). */
int mem_cli_write_timeline(const tprof_mem_snapshot *s, const tprof_mem_report *r, const char *prefix, int json,
                           int depth, size_t points);
/* The [memory] events of a Kineto trace: report (and timeline files when
 * PREFIX is not NULL). JW is the open JSON array for FMT_JSON. */
int mem_cli_trace(const char *path, cli_format fmt, tprof_jw *jw, const char *prefix, size_t points);
/* Ascend's memory_record.csv (and the operator_memory.csv beside it) in
 * FMT: JSON into JW, CSV's long rows, or text. Returns an exit code. */
int mem_cli_ascend(const char *path, cli_format fmt, tprof_jw *jw);
/* A call site for a table: each frame's file reduced to its base name
 * ("model.py:102:forward;functional.py:373:einsum"), so that sites that
 * differ in the middle of long paths stay apart. CSV and JSON keep the paths. */
const char *mem_cli_short_site(const char *site, char *buf, size_t len);
/* The comparison of two snapshots; 0 or TPROF_ENOMEM. */
int mem_cli_print_compare(const char *a, const char *b, const tprof_mem_compare *c, cli_format fmt, int top);

#endif
