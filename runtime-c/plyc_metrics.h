/* tracer --metrics [ADDR:]PORT: the tracer's aggregations served to
 * Prometheus (text format 0.0.4, or OpenMetrics 1.0 when the scraper asks
 * for it) by a small non-blocking HTTP responder that runs inside the
 * tracer's poll loop. See docs/metrics.md. */
#ifndef PLYC_METRICS_H
#define PLYC_METRICS_H

#include <stdio.h>

#include "plyc_rt.h"

/* What a scrape shows besides the maps: read at scrape time. */
struct plyc_metrics_src {
	const char *tracer;         /* the tracer's name */
	const char *script;
	const char *version;        /* plyc's */
	const char *prefix;         /* metric names start with prefix + "_" ("plyc") */
	const struct plyc_map *maps;
	int nmaps;
	int stats_fd;               /* plyc_stats, or -1 */
	int probes_attached;
	uint64_t output_lost;       /* records a full perf buffer dropped (plyc_output_lost) */
};

/* A prefix is valid when it is a Prometheus metric name (or empty). */
int plyc_metrics_prefix_ok(const char *prefix);

/* Bind and listen on "[ADDR:]PORT" ("9100", "127.0.0.1:9100",
 * "[::1]:9100"; no ADDR: every IPv4 address). 0, or -1 with the reason in
 * err. The address bound (port 0 picks one) goes into bound. */
int plyc_metrics_listen(const char *spec, char *err, size_t errlen, char *bound, size_t boundlen);

/* An fd that polls readable when the responder has work (an epoll set of
 * its sockets), or -1 when not listening. */
int plyc_metrics_fd(void);

/* Accept, read, answer and time out connections; never blocks. */
void plyc_metrics_serve(const struct plyc_metrics_src *src);

/* Close every socket. */
void plyc_metrics_close(void);

/* One scrape's body: every exported map, one pass each, and the tracer's
 * own metrics. 0 or a negative errno. */
int plyc_metrics_render(FILE *fp, const struct plyc_metrics_src *src, int openmetrics);

/* The BPF-free half, for unit tests: one map's family from merged values
 * (as plyc_map_collect returns them). `index` is the map's index in src. */
void plyc_metrics_family(FILE *fp, const struct plyc_metrics_src *src, int index,
			 const char *keys, const char *vals, size_t n, int openmetrics);

/* A label value as the exposition formats want it: backslash, double quote
 * and newline escaped; other control characters and bytes that are not
 * valid UTF-8 as the text \xNN (so the value stays valid UTF-8). */
void plyc_metrics_label_value(FILE *fp, const char *s, size_t maxlen);

/* The HTTP side without sockets, for unit tests: the response to one
 * request's bytes, or NULL while the request is incomplete (and within
 * limits). *status is the HTTP status chosen. The caller frees it. */
char *plyc_metrics_respond(const char *req, size_t len, const struct plyc_metrics_src *src,
			   int *status, size_t *resp_len);

#endif
