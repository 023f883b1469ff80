/* BEGIN, END and self:signal:SIGUSR1 attach to nothing: once.c runs them,
 * before the probes attach, after they stop, and when the tracer receives
 * SIGUSR1 (loader.c). */
#include "providers/special.h"

const struct plyc_provider plyc_provider_begin = { .name = "BEGIN" };
const struct plyc_provider plyc_provider_end = { .name = "END" };
const struct plyc_provider plyc_provider_self_usr1 = { .name = "self" };
