/* Every provider's C half, one line each (the order is plyc/providers'
 * REGISTRY's). Generated probe tables point to these. */
#ifndef PLYC_PROVIDERS_H
#define PLYC_PROVIDERS_H

#include "providers/tracepoint.h"
#include "providers/kprobe.h"
#include "providers/uprobe.h"
#include "providers/usdt.h"
#include "providers/interval.h"
#include "providers/profile.h"
#include "providers/perfevent.h"
#include "providers/special.h"
#include "providers/kfunc.h"
#include "providers/rawtracepoint.h"
#include "providers/iter.h"
#include "providers/watchpoint.h"

#endif
