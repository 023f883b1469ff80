/* tracepoint: static kernel tracepoints (tracepoint.c). */
#ifndef PLYC_PROVIDER_TRACEPOINT_H
#define PLYC_PROVIDER_TRACEPOINT_H

#include "plyc_provider.h"

struct plyc_tracepoint_data {
	const char *target;        /* group/event (a glob on the event allowed) */
	int names;                 /* `probe` is read: each event attached with a cookie naming it */
	int glob_fields;           /* a glob whose fields are read: each event's offsets under its cookie */
};

extern const struct plyc_provider plyc_provider_tracepoint;

#endif
