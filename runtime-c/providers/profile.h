/* profile: a timer on every CPU, or one (profile.c). */
#ifndef PLYC_PROVIDER_PROFILE_H
#define PLYC_PROVIDER_PROFILE_H

#include <stdint.h>

#include "plyc_provider.h"

struct plyc_profile_data {
	uint32_t freq;             /* hz */
	int cpu;                   /* -1: every CPU */
};

extern const struct plyc_provider plyc_provider_profile;

#endif
