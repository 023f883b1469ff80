/* Values whose text the tracer makes when it prints them, as bpftrace
 * does: a uid as its user name (username), six bytes as a MAC address
 * (macaddr()), a time since boot in a strftime(3) format (strftime()),
 * an errno and a signal number as 0.27 names them (strerror(): errnos.c,
 * signal_name(): signals.c).
 * The BPF side only stores the integer; the text is made here, on the
 * device, from its /etc/passwd, its clocks and its time zone. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "plyc_btout.h"
#include "plyc_rt.h"

/* bpftrace reads /etc/passwd itself (no NSS): the first line whose third
 * field is the uid names it; "" when none does. */
static const char *user_name(uint64_t uid, char *buf, size_t len)
{
	FILE *f = fopen("/etc/passwd", "r");
	char line[1024];

	buf[0] = '\0';
	if (!f)
		return buf;
	while (fgets(line, sizeof(line), f)) {
		char *name = line, *colon = strchr(line, ':'), *id, *end;

		if (!colon || !(id = strchr(colon + 1, ':')))
			continue;
		id++;
		end = id + strcspn(id, ":\n");
		if (end == id || *end != ':')
			continue;
		*end = '\0';
		if (strspn(id, "0123456789") != strlen(id) || strtoull(id, NULL, 10) != uid)
			continue;
		*colon = '\0';
		snprintf(buf, len, "%s", name);
		break;
	}
	fclose(f);
	return buf;
}

static const char *mac_text(const unsigned char *b, char *buf, size_t len)
{
	snprintf(buf, len, "%02X:%02X:%02X:%02X:%02X:%02X", b[0], b[1], b[2], b[3], b[4], b[5]);
	return buf;
}

/* fmt with bpftrace's %f (the microseconds, 6 digits) written out, then
 * strftime(3) of the wall-clock time `mono_ns` (bpf_ktime_get_ns()'s clock)
 * was, in the local time zone. */
static const char *time_text(const char *fmt, uint64_t mono_ns, char *buf, size_t len)
{
	int64_t real = (int64_t)mono_ns + plyc_rt.mono_to_real_ns;
	time_t secs = (time_t)(real / 1000000000);
	long usec = (long)(real % 1000000000) / 1000;
	char f[512];
	size_t i, n = 0;
	struct tm tm;

	if (usec < 0) {
		usec += 1000000;
		secs--;
	}
	for (i = 0; fmt[i] && n + 8 < sizeof(f); i++) {
		if (fmt[i] == '%' && fmt[i + 1] == 'f') {
			n += (size_t)snprintf(f + n, sizeof(f) - n, "%06ld", usec);
			i++;
		} else if (fmt[i] == '%' && fmt[i + 1]) {
			f[n++] = fmt[i++];
			f[n++] = fmt[i];
		} else {
			f[n++] = fmt[i];
		}
	}
	f[n] = '\0';
	buf[0] = '\0';
	if (!localtime_r(&secs, &tm) || !strftime(buf, len, f, &tm))
		snprintf(buf, len, "(?)");
	return buf;
}

/* An enum's value by its name, as bpftrace 0.27 prints it; a value the
 * enum does not name as its number. */
static const char *enum_text(const struct plyc_type *t, int64_t v, char *buf, size_t len)
{
	const struct plyc_enumerator *e = plyc_rt.enums ? plyc_rt.enums[t->width] : NULL;

	for (; e && e->name; e++)
		if (e->value == v) {
			snprintf(buf, len, "%s", e->name);
			return buf;
		}
	/* a value no enumerator names: its number, unsigned as 0.27's casts
	 * to an enum are (`(enum e)-1` is 18446744073709551615) */
	if (t->is_signed)
		snprintf(buf, len, "%" PRId64, v);
	else
		snprintf(buf, len, "%" PRIu64, (uint64_t)v & (t->size < 8 ? (UINT64_C(1) << 8 * t->size) - 1 : UINT64_MAX));
	return buf;
}

const char *plyc_value_text(const struct plyc_type *t, const void *data, char *buf, size_t len)
{
	const char *fmt;

	switch (t->kind) {
	case PLYC_K_USERNAME:
		return user_name(plyc_load_uint(data, t->size), buf, len);
	case PLYC_K_MAC:
		return mac_text(data, buf, len);
	case PLYC_K_STRFTIME:
		fmt = plyc_rt.time_formats ? plyc_rt.time_formats[t->width] : NULL;
		return time_text(fmt ? fmt : "", plyc_load_uint(data, t->size), buf, len);
	case PLYC_K_ERRNO:
		snprintf(buf, len, "%s", plyc_errno_text((int32_t)plyc_load_uint(data, t->size)));
		return buf;
	case PLYC_K_SIGNAL:
		return plyc_signal_text((int32_t)plyc_load_uint(data, t->size), buf, len);
	case PLYC_K_SYSCALL:
		snprintf(buf, len, "%s", plyc_syscall_name((long)(int32_t)plyc_load_uint(data, t->size)));
		return buf;
	case PLYC_K_CGROUP_PATH:
		fmt = plyc_rt.time_formats ? plyc_rt.time_formats[t->width] : NULL;
		return plyc_cgroup_path(plyc_load_uint(data, t->size), fmt ? fmt : "*", buf, len);
	case PLYC_K_ENUM:
		if (!plyc_bt_version->enum_names)
			break;
		return enum_text(t, plyc_load_int(data, t->size), buf, len);
	case PLYC_K_BOOL:
		if (!plyc_bt_version->bool_words)
			break;
		snprintf(buf, len, "%s", plyc_load_uint(data, t->size) ? "true" : "false");
		return buf;
	default:
		break;
	}
	if (t->kind == PLYC_K_ENUM)
		snprintf(buf, len, "%" PRId64, plyc_load_int(data, t->size));
	else
		snprintf(buf, len, "%" PRIu64, plyc_load_uint(data, t->size));
	return buf;
}
