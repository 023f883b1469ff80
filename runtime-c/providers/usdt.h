/* usdt: user static tracepoints (usdt.c). */
#ifndef PLYC_PROVIDER_USDT_H
#define PLYC_PROVIDER_USDT_H

#include "plyc_provider.h"

struct plyc_usdt_data {
	const char *path;          /* binary or library, as written */
	const char *provider;      /* the USDT provider, or NULL: the one that has `name` */
	const char *name;
};

extern const struct plyc_provider plyc_provider_usdt;

#endif
