/* BEGIN, END and self (SIGUSR1 received): no data; the tracer runs them
 * itself (once.c). */
#ifndef PLYC_PROVIDER_SPECIAL_H
#define PLYC_PROVIDER_SPECIAL_H

#include "plyc_provider.h"

extern const struct plyc_provider plyc_provider_begin;
extern const struct plyc_provider plyc_provider_end;
extern const struct plyc_provider plyc_provider_self_usr1;

#endif
