/* interval: a timer on one CPU (interval.c). */
#ifndef PLYC_PROVIDER_INTERVAL_H
#define PLYC_PROVIDER_INTERVAL_H

#include <stdint.h>

#include "plyc_provider.h"

struct plyc_interval_data {
	uint64_t period_ns;
	int cpu;
};

extern const struct plyc_provider plyc_provider_interval;

#endif
