/* The ProfileConfig loader on arbitrary bytes: the YAML file (through a
 * memfd, as the loader takes a path) and, split at NUL bytes, the same bytes
 * as a command line. Any result is fine; crashes, leaks and UB are not. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "trainprof/profiler.h"

static int other(void *ud, const char *key, const char *value, char *errbuf, size_t errlen)
{
    (void)ud;
    (void)errbuf;
    (void)errlen;
    return strlen(key) + strlen(value) > 3 ? 1 : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[512], path[64];
    tprof_profile_config c;
    int fd = memfd_create("fuzz_config", 0);
    if (fd < 0) return 0;
    if (write(fd, data, size) == (ssize_t)size) {
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        tprof_config_default(&c);
        if (tprof_config_load_yaml(&c, path, other, NULL, err, sizeof err) == 0) tprof_config_validate(&c, err, sizeof err);
    }
    close(fd);
    /* argv: the bytes split at NUL (at most 32 arguments) */
    char *copy = malloc(size + 1);
    if (!copy) return 0;
    memcpy(copy, data, size);
    copy[size] = 0;
    char *argv[34];
    int argc = 0;
    argv[argc++] = "prog";
    for (size_t i = 0; i < size && argc < 33;) {
        argv[argc++] = copy + i;
        i += strlen(copy + i) + 1;
    }
    argv[argc] = NULL;
    tprof_config_default(&c);
    tprof_config_from_args(&c, &argc, argv, other, NULL, err, sizeof err);
    free(copy);
    return 0;
}
