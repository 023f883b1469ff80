/* What an old kernel's verifier log means for the script: the kernel
 * feature a rejected program needed and the release that brings it. */
#ifndef PLYC_VERIFIER_H
#define PLYC_VERIFIER_H

#include <stddef.h>

/* A note for the user when `log` shows a missing kernel feature, written
 * to buf; 0 when the log shows none (the verifier's own words stand). */
int plyc_verifier_hint(const char *log, char *buf, size_t len);

#endif
