/* tracer --metrics: Prometheus's view of the tracer's aggregations.
 *
 * Two halves. The exposition (plyc_metrics_render): at each scrape every
 * exported map is read once, with one bpf_map_lookup_batch where the
 * kernel has it (else get_next_key + lookup), per-CPU values merged as the
 * exit dump merges them, then written as a metric family. The responder:
 * a listening socket and up to MAX_CONNS connections, all non-blocking, in
 * one epoll set that the tracer's poll loop watches next to the ring
 * buffer; one request per connection (Connection: close), only GET
 * /metrics, with size, header and time limits. See docs/metrics.md. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "plyc_agg.h"
#include "plyc_metrics.h"

#define REQ_MAX 8192            /* request line and headers */
#define HEADERS_MAX 64
#define MAX_CONNS 16
#define READ_TIMEOUT 5.0        /* seconds from accept to a whole request */
#define WRITE_TIMEOUT 30.0      /* seconds from accept to the last byte sent */

/* --- names and values --------------------------------------------------- */

static int name_char(int c, int first)
{
	return c == '_' || c == ':' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (!first && c >= '0' && c <= '9');
}

int plyc_metrics_prefix_ok(const char *prefix)
{
	const char *p;

	for (p = prefix; *p; p++)
		if (!name_char((unsigned char)*p, p == prefix))
			return 0;
	return 1;
}

/* "@reads" -> "reads", "@" -> "at"; anything not allowed in a name -> '_'. */
static void base_name(char *buf, size_t len, const char *prefix, const char *map)
{
	size_t n;
	char *p;

	static const char *const own[] = {
		"build_info", "probes_attached", "events_lost", "map_updates_dropped", "stacks_not_recorded",
	};
	size_t i;
	int taken = 0;

	if (map[0] == '@')
		map++;
	/* the tracer's own families keep their names: @events_lost is
	 * plyc_events_lost_map */
	for (i = 0; i < sizeof(own) / sizeof(own[0]); i++)
		taken |= !strcmp(map, own[i]);
	n = (size_t)snprintf(buf, len, "%s%s%s%s", prefix, *prefix ? "_" : "", *map ? map : "at",
			     taken ? "_map" : "");
	if (n >= len)
		n = len - 1;
	for (p = buf; *p; p++)
		if (!name_char((unsigned char)*p, p == buf))
			*p = '_';
}

void plyc_metrics_label_value(FILE *fp, const char *str, size_t maxlen)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n = strnlen(str, maxlen), i = 0, l;

	while (i < n) {
		unsigned char c = s[i];

		if (c == '\\')
			fputs("\\\\", fp);
		else if (c == '"')
			fputs("\\\"", fp);
		else if (c == '\n')
			fputs("\\n", fp);
		else if (c < 0x20 || c == 0x7f)
			fprintf(fp, "\\\\x%02x", c);
		else if ((l = plyc_utf8_len(s + i, n - i)) > 0) {
			fwrite(s + i, 1, l, fp);
			i += l;
			continue;
		} else
			fprintf(fp, "\\\\x%02x", c);
		i++;
	}
}

/* One key member as a label value. */
static void key_value(FILE *fp, const struct plyc_type *t, const char *p)
{
	char buf[PLYC_KSYM_LEN];
	uint64_t ips[PLYC_STACK_DEPTH];
	int64_t id;
	uint32_t i;
	int n;

	if (plyc_kind_is_text(t->kind)) {
		char text[PLYC_VALUE_TEXT_LEN];

		plyc_metrics_label_value(fp, plyc_value_text(t, p, text, sizeof(text)), sizeof(text));
		return;
	}
	switch (t->kind) {
	case PLYC_K_STR:
		plyc_metrics_label_value(fp, p, t->size);
		break;
	case PLYC_K_HEX:
		fprintf(fp, "0x%" PRIx64, plyc_load_uint(p, t->size));
		break;
	case PLYC_K_SYM:
		plyc_metrics_label_value(fp, plyc_ksym(plyc_load_uint(p, t->size), buf, sizeof(buf)),
					 sizeof(buf));
		break;
	case PLYC_K_STACK:
		/* folded, as flame graph tools read it: outermost frame first,
		 * ';' between frames */
		id = plyc_load_int(p, t->size);
		if (plyc_stack_read(id, ips)) {
			fprintf(fp, "<STACKID%" PRId64 ">", id);
			break;
		}
		for (n = 0; n < PLYC_STACK_DEPTH && ips[n]; n++)
			;
		while (n-- > 0) {
			plyc_metrics_label_value(fp, plyc_ksym(ips[n], buf, sizeof(buf)), sizeof(buf));
			if (n)
				fputc(';', fp);
		}
		break;
	case PLYC_K_INET:
		plyc_metrics_label_value(fp, plyc_inet_text(p, buf, sizeof(buf)), sizeof(buf));
		break;
	case PLYC_K_USYM:
		plyc_metrics_label_value(fp, plyc_usyms->text(p, buf, sizeof(buf)), sizeof(buf));
		break;
	case PLYC_K_USTACK:
		/* folded as kernel stacks are; the pid is in the high 32 bits */
		id = (int32_t)(uint32_t)plyc_load_uint(p, 8);
		if (id < 0 || plyc_stack_read_limit(id, PLYC_STACK_LIMIT(t), ips)) {
			fprintf(fp, "<STACKID%" PRId64 ">", id);
			break;
		}
		for (n = 0; n < PLYC_STACK_DEPTH && ips[n]; n++)
			;
		while (n-- > 0) {
			plyc_metrics_label_value(fp, plyc_usyms->bt((uint32_t)(plyc_load_uint(p, 8) >> 32), ips[n], 1, 0,
								    buf, sizeof(buf)), sizeof(buf));
			if (n)
				fputc(';', fp);
		}
		break;
	case PLYC_K_BUF:
	case PLYC_K_MEM:
		for (i = 0; i < t->size; i++)
			fprintf(fp, "%02x", (unsigned char)p[i]);
		break;
	case PLYC_K_WALLTIME:
		fprintf(fp, "%" PRId64, (int64_t)plyc_load_uint(p, t->size) + plyc_rt.mono_to_real_ns);
		break;
	case PLYC_K_TUPLE:
		/* one label: the members joined by ',' (bpftrace's JSON key) */
		for (i = 0; i < t->nfields; i++) {
			if (i)
				fputc(',', fp);
			key_value(fp, &t->fields[i].type, p + t->fields[i].offset);
		}
		break;
	default:
		if (t->size > 8) {
			for (i = 0; i < t->size; i++)
				fprintf(fp, "%02x", (unsigned char)p[i]);
		} else if (t->is_signed)
			fprintf(fp, "%" PRId64, plyc_load_int(p, t->size));
		else
			fprintf(fp, "%" PRIu64, plyc_load_uint(p, t->size));
		break;
	}
}

/* {name="v",...} for one key, plus an le label for a bucket (NULL: none). */
static void labels(FILE *fp, const struct plyc_map *m, const char *key, const char *le)
{
	uint32_t i;

	if (!m->nkeys && !le)
		return;
	fputc('{', fp);
	for (i = 0; i < m->nkeys; i++) {
		if (m->key_names && m->key_names[i])
			fprintf(fp, "%s%s=\"", i ? "," : "", m->key_names[i]);
		else
			fprintf(fp, "%sk%u=\"", i ? "," : "", i);
		key_value(fp, &m->keys[i].type, key + m->keys[i].offset);
		fputc('"', fp);
	}
	if (le)
		fprintf(fp, "%sle=\"%s\"", m->nkeys ? "," : "", le);
	fputc('}', fp);
}

static void help_text(FILE *fp, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\\\", fp);
		else if (*s == '\n')
			fputs("\\n", fp);
		else
			fputc(*s, fp);
	}
}

/* # TYPE and # HELP of a family; OpenMetrics names a counter's family
 * without its _total, the text format names the samples' series. */
static void family_head(FILE *fp, const char *family, const char *sample_suffix, const char *type,
			const char *help, const char *help2, int om)
{
	if (om)
		fprintf(fp, "# TYPE %s %s\n# HELP %s ", family, type, family);
	else
		fprintf(fp, "# HELP %s%s ", family, sample_suffix);
	help_text(fp, help);
	help_text(fp, help2);
	fputc('\n', fp);
	if (!om)
		fprintf(fp, "# TYPE %s%s %s\n", family, sample_suffix, type);
}

static int exported(const struct plyc_map *m)
{
	return plyc_agg_ops(m)->name != NULL;
}

void plyc_metrics_family(FILE *fp, const struct plyc_metrics_src *src, int index,
			 const char *keys, const char *vals, size_t n, int om)
{
	const struct plyc_map *m = &src->maps[index];
	const struct plyc_agg_ops *ops = plyc_agg_ops(m);
	struct plyc_metric_out out = { .fp = fp, .m = m, .om = om, .labels = labels };
	char name[256], help[512];
	const char *type;
	size_t e;

	if (!exported(m))
		return;
	base_name(name, sizeof(name), src->prefix, m->name);
	snprintf(help, sizeof(help), "%s: %s in %s", m->name, ops->name, src->script);
	type = ops->metric_type(m, &out.suffix);
	family_head(fp, name, out.suffix, type, help,
		    m->value.kind == PLYC_K_TIME ? " (nanoseconds)" : "", om);
	out.name = name;
	for (e = 0; e < n; e++) {
		out.key = keys + e * m->key_size;
		ops->metric(&out, vals + e * m->value_size);
	}
}

/* --- reading the maps --------------------------------------------------- */

static size_t round8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/* Every entry of m in one pass: as many entries per bpf_map_lookup_batch
 * as the map holds (so one call, normally), per-CPU values merged. -EINVAL
 * or -EOPNOTSUPP before any entry: the kernel has no batch for this map. */
static int collect_batch(const struct plyc_map *m, char **keysp, char **valsp, size_t *np)
{
	size_t ks = m->key_size, vs = m->value_size, stride, n = 0;
	struct bpf_map_info info;
	uint32_t ilen = sizeof(info), count, chunk, i;
	int ncpus = 1, err = 0, first = 1;
	char *kbuf = NULL, *vbuf = NULL, *keys = NULL, *vals = NULL;
	uint64_t in_batch = 0, out_batch = 0;
	LIBBPF_OPTS(bpf_map_batch_opts, opts);

	if (m->percpu) {
		ncpus = libbpf_num_possible_cpus();
		if (ncpus <= 0)
			return -EINVAL;
	}
	stride = m->percpu ? (size_t)ncpus * round8(vs) : vs;
	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(m->fd, &info, &ilen) || !info.max_entries)
		return -EINVAL;
	chunk = info.max_entries;
	/* at most 16 MiB of raw values per call */
	if ((size_t)chunk * stride > (16u << 20))
		chunk = (uint32_t)((16u << 20) / stride) + 1;
	kbuf = malloc((size_t)chunk * ks);
	vbuf = malloc((size_t)chunk * stride);
	keys = malloc((size_t)info.max_entries * ks + 1);
	vals = malloc((size_t)info.max_entries * vs + 1);
	if (!kbuf || !vbuf || !keys || !vals) {
		err = -ENOMEM;
		goto out;
	}
	for (;;) {
		int r;

		count = chunk;
		r = bpf_map_lookup_batch(m->fd, first ? NULL : &in_batch, &out_batch, kbuf, vbuf, &count,
					 &opts);
		if (r && errno != ENOENT) {
			err = -errno;
			break;
		}
		for (i = 0; i < count && n < info.max_entries; i++) {
			char *v = vals + n * vs;

			memcpy(keys + n * ks, kbuf + (size_t)i * ks, ks);
			if (m->percpu)
				plyc_map_merge(m, v, vbuf + (size_t)i * stride, ncpus);
			else
				memcpy(v, vbuf + (size_t)i * stride, vs);
			/* a key-less aggregation's array slot: all zero is never updated */
			if (!m->nkeys && plyc_is_zero(v, vs))
				continue;
			n++;
		}
		if (r)
			break;	/* ENOENT: that was the last batch */
		first = 0;
		in_batch = out_batch;
	}
out:
	free(kbuf);
	free(vbuf);
	if (err) {
		free(keys);
		free(vals);
		return err;
	}
	*keysp = keys;
	*valsp = vals;
	*np = n;
	return 0;
}

static int batch_broken;        /* the kernel has no batch ops: get_next_key */

static int collect(const struct plyc_map *m, char **keys, char **vals, size_t *n)
{
	int err;

	/* PLYC_METRICS_NO_BATCH: the fallback, to measure it (docs/metrics.md) */
	if (!batch_broken && getenv("PLYC_METRICS_NO_BATCH"))
		batch_broken = 1;
	if (!batch_broken) {
		err = collect_batch(m, keys, vals, n);
		if (err != -EINVAL && err != -EOPNOTSUPP && err != -ENOTSUP && err != -524 /* ENOTSUPP */)
			return err;
		batch_broken = 1;
	}
	return plyc_map_collect(m, keys, vals, n);
}

static void tracer_metrics(FILE *fp, const struct plyc_metrics_src *src, int om)
{
	/* by row of plyc_stats (PLYC_STAT_ROW_*) */
	static const char *const reasons[PLYC_STAT_ROWS] = { "full", "busy", "other", "nomem" };
	int i, r;
	char name[256];
	const char *p = src->prefix, *us = *src->prefix ? "_" : "";

	snprintf(name, sizeof(name), "%s%sbuild_info", p, us);
	family_head(fp, name, "", "gauge", "the tracer: its script and the plyc that built it", "", om);
	fprintf(fp, "%s{tracer=\"", name);
	plyc_metrics_label_value(fp, src->tracer, 1024);
	fputs("\",script=\"", fp);
	plyc_metrics_label_value(fp, src->script, 1024);
	fputs("\",plyc_version=\"", fp);
	plyc_metrics_label_value(fp, src->version, 1024);
	fputs("\"} 1\n", fp);

	snprintf(name, sizeof(name), "%s%sprobes_attached", p, us);
	family_head(fp, name, "", "gauge", "probes attached (one per tracepoint, function, CPU...)", "", om);
	fprintf(fp, "%s %d\n", name, src->probes_attached);

	snprintf(name, sizeof(name), "%s%sevents_lost", p, us);
	family_head(fp, name, "_total", "counter", "events lost: the output buffer was full", "", om);
	fprintf(fp, "%s_total %" PRIu64 "\n", name,
		plyc_stat_sum(src->stats_fd, plyc_stat_index(src->nmaps, PLYC_STAT_ROW_FULL, 0)) +
		src->output_lost);

	snprintf(name, sizeof(name), "%s%smap_updates_dropped", p, us);
	family_head(fp, name, "_total", "counter",
		    "map updates dropped, by map and reason (full, busy, other, nomem: docs/output.md)", "", om);
	for (i = 0; i < src->nmaps; i++) {
		for (r = 0; r < PLYC_STAT_ROWS; r++) {
			fprintf(fp, "%s_total{map=\"", name);
			plyc_metrics_label_value(fp, src->maps[i].name, 256);
			fprintf(fp, "\",reason=\"%s\"} %" PRIu64 "\n", reasons[r],
				plyc_stat_sum(src->stats_fd, plyc_stat_index(src->nmaps, r, 1 + i)));
		}
	}

	snprintf(name, sizeof(name), "%s%sstacks_not_recorded", p, us);
	family_head(fp, name, "_total", "counter",
		    "stacks counted under an empty stack, by reason (collision, full)", "", om);
	fprintf(fp, "%s_total{reason=\"collision\"} %" PRIu64 "\n", name,
		plyc_stat_sum(src->stats_fd, plyc_stat_index(src->nmaps, PLYC_STAT_ROW_BUSY, 0)));
	fprintf(fp, "%s_total{reason=\"full\"} %" PRIu64 "\n", name,
		plyc_stat_sum(src->stats_fd, plyc_stat_index(src->nmaps, PLYC_STAT_ROW_OTHER, 0)));
}

int plyc_metrics_render(FILE *fp, const struct plyc_metrics_src *src, int om)
{
	int i, err;

	for (i = 0; i < src->nmaps; i++) {
		const struct plyc_map *m = &src->maps[i];
		char *keys = NULL, *vals = NULL;
		size_t n = 0;

		if (!exported(m) || m->fd < 0)
			continue;
		err = collect(m, &keys, &vals, &n);
		if (err)
			return err;
		plyc_metrics_family(fp, src, i, keys, vals, n, om);
		free(keys);
		free(vals);
	}
	tracer_metrics(fp, src, om);
	if (om)
		fputs("# EOF\n", fp);
	return 0;
}

/* --- HTTP ----------------------------------------------------------------- */

static char *response(int status, const char *reason, const char *ctype, const char *extra,
		      const char *body, size_t blen, size_t *len)
{
	char head[512];
	int h = snprintf(head, sizeof(head),
			 "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%sConnection: close\r\n\r\n",
			 status, reason, ctype, blen, extra ? extra : "");
	char *out = malloc((size_t)h + blen + 1);

	if (!out)
		return NULL;
	memcpy(out, head, (size_t)h);
	memcpy(out + h, body, blen);
	*len = (size_t)h + blen;
	return out;
}

static char *error_response(int status, size_t *len)
{
	const char *reason, *extra = NULL;
	char body[96];

	switch (status) {
	case 404: reason = "Not Found"; break;
	case 405: reason = "Method Not Allowed"; extra = "Allow: GET\r\n"; break;
	case 431: reason = "Request Header Fields Too Large"; break;
	case 500: reason = "Internal Server Error"; break;
	case 503: reason = "Service Unavailable"; break;
	default: status = 400; reason = "Bad Request"; break;
	}
	snprintf(body, sizeof(body), "%d %s\n", status, reason);
	return response(status, reason, "text/plain; charset=utf-8", extra, body, strlen(body), len);
}

static int token_char(int c)
{
	return c > 0x20 && c < 0x7f && !strchr("\"(),/:;<=>?@[\\]{}", c);
}

/* Where the request's headers end (just past the empty line), or 0. */
static size_t head_end(const char *req, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		if (req[i] != '\n')
			continue;
		if (i + 1 < len && req[i + 1] == '\n')
			return i + 2;
		if (i + 2 < len && req[i + 1] == '\r' && req[i + 2] == '\n')
			return i + 3;
	}
	return 0;
}

char *plyc_metrics_respond(const char *req, size_t len, const struct plyc_metrics_src *src, int *status,
			   size_t *resp_len)
{
	size_t end = head_end(req, len), i, mlen, tlen, nheaders = 0;
	const char *p, *line_end, *target, *version;
	int om = 0;

	if (!end) {
		/* a bare request line with no headers yet is just incomplete */
		if (len < REQ_MAX)
			return NULL;
		*status = 431;
		return error_response(*status, resp_len);
	}
	if (end > REQ_MAX) {
		*status = 431;
		return error_response(*status, resp_len);
	}
	/* request line: METHOD SP TARGET SP HTTP/1.x */
	line_end = memchr(req, '\n', end);
	for (mlen = 0; mlen < end && token_char((unsigned char)req[mlen]); mlen++)
		;
	*status = 400;
	if (!mlen || req[mlen] != ' ')
		return error_response(*status, resp_len);
	target = req + mlen + 1;
	for (tlen = 0; target + tlen < line_end && (unsigned char)target[tlen] > 0x20 && target[tlen] != 0x7f; tlen++)
		;
	if (!tlen || target[tlen] != ' ')
		return error_response(*status, resp_len);
	version = target + tlen + 1;
	if (line_end - version < 8 || memcmp(version, "HTTP/1.", 7) || (version[7] != '0' && version[7] != '1') ||
	    (line_end - version > 9) || (line_end - version == 9 && version[8] != '\r'))
		return error_response(*status, resp_len);
	/* headers: NAME ':' value, no line folding */
	for (p = line_end + 1; p < req + end; p = line_end + 1) {
		size_t nlen;

		line_end = memchr(p, '\n', (size_t)(req + end - p));
		if (!line_end)
			break;
		if (line_end == p || (line_end == p + 1 && *p == '\r'))
			break;	/* the empty line */
		if (++nheaders > HEADERS_MAX) {
			*status = 431;
			return error_response(*status, resp_len);
		}
		for (nlen = 0; p + nlen < line_end && token_char((unsigned char)p[nlen]); nlen++)
			;
		if (!nlen || p[nlen] != ':')
			return error_response(*status, resp_len);
		for (i = nlen + 1; p + i < line_end; i++)
			if (p[i] == 0)
				return error_response(*status, resp_len);
		if (nlen == 6 && !strncasecmp(p, "accept", 6) &&
		    memmem(p + nlen, (size_t)(line_end - p - (ptrdiff_t)nlen), "application/openmetrics-text", 28))
			om = 1;
	}
	if (mlen != 3 || memcmp(req, "GET", 3)) {
		*status = 405;
		return error_response(*status, resp_len);
	}
	p = memchr(target, '?', tlen);
	if ((p ? (size_t)(p - target) : tlen) != 8 || memcmp(target, "/metrics", 8)) {
		*status = 404;
		return error_response(*status, resp_len);
	}
	{
		char *body = NULL, *out;
		size_t blen = 0;
		FILE *fp = open_memstream(&body, &blen);
		int err;

		if (!fp) {
			*status = 500;
			return error_response(*status, resp_len);
		}
		err = src ? plyc_metrics_render(fp, src, om) : 0;
		fclose(fp);
		if (err) {
			free(body);
			*status = 500;
			return error_response(*status, resp_len);
		}
		*status = 200;
		out = response(200, "OK",
			       om ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
				  : "text/plain; version=0.0.4; charset=utf-8",
			       NULL, body ? body : "", blen, resp_len);
		free(body);
		return out;
	}
}

/* --- sockets -------------------------------------------------------------- */

struct conn {
	int fd;
	size_t len;
	char req[REQ_MAX + 1];
	char *out;
	size_t out_len, out_off;
	double read_deadline, deadline;
};

static int listen_fd = -1, ep_fd = -1;
static struct conn *conns[MAX_CONNS];
static char listener_tag;       /* epoll data of the listening socket */

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int plyc_metrics_listen(const char *spec, char *err, size_t errlen, char *bound, size_t boundlen)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	char host[64] = "0.0.0.0";
	const char *port = spec, *colon = strrchr(spec, ':'), *whole = spec;
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &listener_tag };
	size_t pl;
	long pn = 0;
	int one = 1, fd;

	memset(&ss, 0, sizeof(ss));
	/* "::1" is an IPv6 address, not host ":" and port 1 (and "::1:9100"
	 * is one too): an IPv6 address and its port are written [::1]:PORT */
	if (spec[0] != '[' && strlen(spec) < sizeof(host) &&
	    inet_pton(AF_INET6, spec, &((struct sockaddr_in6 *)&ss)->sin6_addr) == 1) {
		snprintf(err, errlen, "--metrics %s: an IPv6 address needs a port: [%s]:PORT", spec, spec);
		return -1;
	}
	if (colon) {
		size_t hl = (size_t)(colon - spec);
		int bracketed = spec[0] == '[' && hl >= 2 && spec[hl - 1] == ']';

		if (bracketed) {
			spec++;
			hl -= 2;
		}
		if (hl >= sizeof(host) || !hl || (spec[0] == '[' && !bracketed)) {
			snprintf(err, errlen, "--metrics takes [ADDR:]PORT, not '%s'", whole);
			return -1;
		}
		memcpy(host, spec, hl);
		host[hl] = 0;
		port = colon + 1;
		/* [ADDR] is IPv6's way; an IPv4 address stands bare */
		if (bracketed != (inet_pton(AF_INET6, host, &((struct sockaddr_in6 *)&ss)->sin6_addr) == 1)) {
			snprintf(err, errlen, bracketed ? "--metrics %s: brackets are for an IPv6 address: %s:PORT"
				 : "--metrics %s: '%s' is not an IPv4 address (an IPv6 one is written [ADDR]:PORT)",
				 whole, host);
			return -1;
		}
	} else if (spec[0] == '[') {
		snprintf(err, errlen, "--metrics takes [ADDR:]PORT, not '%s'", whole);
		return -1;
	}
	/* digits only: no sign, no space, no 0x (strtol would take them) */
	pl = strlen(port);
	if (!pl || pl > 5 || strspn(port, "0123456789") != pl || (pn = strtol(port, NULL, 10)) > 65535) {
		snprintf(err, errlen, "--metrics %s: the port must be a number from 0 to 65535, not '%s' "
			 "(--metrics takes [ADDR:]PORT)", whole, port);
		return -1;
	}
	memset(&ss, 0, sizeof(ss));
	if (inet_pton(AF_INET, host, &((struct sockaddr_in *)&ss)->sin_addr) == 1) {
		((struct sockaddr_in *)&ss)->sin_family = AF_INET;
		((struct sockaddr_in *)&ss)->sin_port = htons((uint16_t)pn);
		sl = sizeof(struct sockaddr_in);
	} else if (inet_pton(AF_INET6, host, &((struct sockaddr_in6 *)&ss)->sin6_addr) == 1) {
		((struct sockaddr_in6 *)&ss)->sin6_family = AF_INET6;
		((struct sockaddr_in6 *)&ss)->sin6_port = htons((uint16_t)pn);
		sl = sizeof(struct sockaddr_in6);
	} else {
		snprintf(err, errlen, "--metrics: '%s' is not an IPv4 or IPv6 address", host);
		return -1;
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "--metrics: socket: %s", strerror(errno));
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, sl) || listen(fd, 64)) {
		snprintf(err, errlen, "--metrics %s: %s", whole, strerror(errno));
		close(fd);
		return -1;
	}
	ep_fd = epoll_create1(EPOLL_CLOEXEC);
	if (ep_fd < 0 || epoll_ctl(ep_fd, EPOLL_CTL_ADD, fd, &ev)) {
		snprintf(err, errlen, "--metrics: epoll: %s", strerror(errno));
		close(fd);
		if (ep_fd >= 0)
			close(ep_fd);
		ep_fd = -1;
		return -1;
	}
	listen_fd = fd;
	sl = sizeof(ss);
	getsockname(fd, (struct sockaddr *)&ss, &sl);
	if (ss.ss_family == AF_INET6) {
		char a[INET6_ADDRSTRLEN];

		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, a, sizeof(a));
		snprintf(bound, boundlen, "[%s]:%u", a, ntohs(((struct sockaddr_in6 *)&ss)->sin6_port));
	} else {
		char a[INET_ADDRSTRLEN];

		inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, a, sizeof(a));
		snprintf(bound, boundlen, "%s:%u", a, ntohs(((struct sockaddr_in *)&ss)->sin_port));
	}
	return 0;
}

int plyc_metrics_fd(void)
{
	return ep_fd;
}

static void drop(int slot)
{
	struct conn *c = conns[slot];

	if (!c)
		return;
	epoll_ctl(ep_fd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	free(c->out);
	free(c);
	conns[slot] = NULL;
}

static void accept_all(void)
{
	for (;;) {
		int fd = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC), slot;
		struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP };
		struct conn *c;

		if (fd < 0)
			return;	/* EAGAIN, or a connection gone before accept */
		for (slot = 0; slot < MAX_CONNS && conns[slot]; slot++)
			;
		if (slot == MAX_CONNS || !(c = calloc(1, sizeof(*c)))) {
			size_t len;
			char *r = error_response(503, &len);

			/* best effort, never waits */
			if (r && send(fd, r, len, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
				errno = 0;
			free(r);
			close(fd);
			continue;
		}
		c->fd = fd;
		c->read_deadline = mono() + READ_TIMEOUT;
		c->deadline = mono() + WRITE_TIMEOUT;
		ev.data.ptr = c;
		if (epoll_ctl(ep_fd, EPOLL_CTL_ADD, fd, &ev)) {
			close(fd);
			free(c);
			continue;
		}
		conns[slot] = c;
	}
}

/* Send what the socket takes; 1 when everything is sent (or it failed). */
static int flush_out(struct conn *c)
{
	while (c->out_off < c->out_len) {
		ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0)
			return errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR ? 1 : 0;
		c->out_off += (size_t)n;
	}
	return 1;
}

/* 1 when the connection is done with. */
static int on_ready(struct conn *c, uint32_t events, const struct plyc_metrics_src *src)
{
	if (!c->out) {
		int status;

		for (;;) {
			ssize_t n;

			if (c->len >= REQ_MAX)
				break;
			n = recv(c->fd, c->req + c->len, REQ_MAX - c->len, MSG_DONTWAIT);
			if (n == 0)
				return 1;	/* closed before a whole request */
			if (n < 0) {
				if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
					break;
				return 1;
			}
			c->len += (size_t)n;
		}
		c->out = plyc_metrics_respond(c->req, c->len, src, &status, &c->out_len);
		if (!c->out)
			return c->len >= REQ_MAX || (events & (EPOLLHUP | EPOLLERR));
		/* the rest of the request is not read: shut it down when done */
		{
			struct epoll_event ev = { .events = EPOLLOUT, .data.ptr = c };

			epoll_ctl(ep_fd, EPOLL_CTL_MOD, c->fd, &ev);
		}
	}
	if (events & (EPOLLERR))
		return 1;
	if (flush_out(c)) {
		shutdown(c->fd, SHUT_WR);
		return 1;
	}
	return 0;
}

void plyc_metrics_serve(const struct plyc_metrics_src *src)
{
	struct epoll_event evs[MAX_CONNS + 1];
	double t;
	int n, i, s;

	if (ep_fd < 0)
		return;
	n = epoll_wait(ep_fd, evs, MAX_CONNS + 1, 0);
	for (i = 0; i < n; i++) {
		struct conn *c = evs[i].data.ptr;

		if (evs[i].data.ptr == &listener_tag) {
			accept_all();
			continue;
		}
		for (s = 0; s < MAX_CONNS && conns[s] != c; s++)
			;
		if (s < MAX_CONNS && on_ready(c, evs[i].events, src))
			drop(s);
	}
	/* slowloris: a whole request within READ_TIMEOUT, the whole answer
	 * taken within WRITE_TIMEOUT */
	t = mono();
	for (s = 0; s < MAX_CONNS; s++) {
		struct conn *c = conns[s];

		if (c && ((!c->out && t > c->read_deadline) || t > c->deadline)) {
			if (!c->out) {
				size_t len;
				char *r = error_response(400, &len);

				if (r && send(c->fd, r, len, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
					errno = 0;
				free(r);
			}
			drop(s);
		}
	}
}

void plyc_metrics_close(void)
{
	int s;

	for (s = 0; s < MAX_CONNS; s++)
		drop(s);
	if (listen_fd >= 0)
		close(listen_fd);
	if (ep_fd >= 0)
		close(ep_fd);
	listen_fd = ep_fd = -1;
}
