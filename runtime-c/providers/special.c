/* BEGIN and END attach to nothing: once.c runs them, before the probes
 * attach and after they stop. */
#include "providers/special.h"

const struct plyc_provider plyc_provider_begin = { .name = "BEGIN" };
const struct plyc_provider plyc_provider_end = { .name = "END" };
