/* Reads each trace twice, through the fast event path and through the
 * generic token path, and checks both give the same events and counts.
 * Used by tests/cli/fast_path.py and by the fuzz_trace target's logic. */
#include <stdio.h>
#include <string.h>

#include "path_diff.h"

int main(int argc, char **argv)
{
    int bad = 0;
    for (int i = 1; i < argc; i++) {
        char why[512];
        unsigned chunks = 0;
        if (tprof_path_diff_file(argv[i], why, sizeof why, &chunks)) {
            printf("DIFF %s: %s\n", argv[i], why);
            bad = 1;
        } else
            printf("same %s (%u chunks)\n", argv[i], chunks);
    }
    return bad;
}
