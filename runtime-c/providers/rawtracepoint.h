/* rawtracepoint: a tracepoint's raw arguments (rawtracepoint.c). */
#ifndef PLYC_PROVIDER_RAWTRACEPOINT_H
#define PLYC_PROVIDER_RAWTRACEPOINT_H

#include "plyc_provider.h"

struct plyc_rawtracepoint_data {
	const char *target;        /* the tracepoint's name (sched_switch) */
	const char *module;        /* rawtracepoint:MODULE:event's module, else NULL */
};

extern const struct plyc_provider plyc_provider_rawtracepoint;

#endif
