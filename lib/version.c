#include "trainprof/version.h"

const char *tprof_version(void) { return TPROF_VERSION_STRING; }
