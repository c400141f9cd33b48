/* collectives.c's tables of matched collectives and of waits per rank,
 * which summary.c copies into its result (internal). */
#ifndef TPROF_COLLECTIVES_TABLES_H
#define TPROF_COLLECTIVES_TABLES_H

#include "trainprof/result.h"

extern const tprof_table_desc tprof_coll_groups_table;
extern const tprof_table_desc tprof_coll_waits_table;

#endif
