/* Drives runtime-c/metrics/metrics.c without BPF or sockets: label values,
 * families from merged values, and the HTTP answers to requests given as
 * bytes. Writes each case to OUTDIR/<case>.txt for tests/test_metrics.py. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plyc_metrics.h"

static const char *outdir;

static FILE *open_case(const char *name)
{
	char path[4096];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s.txt", outdir, name);
	fp = fopen(path, "w");
	if (!fp) {
		perror(path);
		exit(1);
	}
	return fp;
}

static void label_case(const char *name, const char *s, size_t n)
{
	FILE *fp = open_case(name);

	plyc_metrics_label_value(fp, s, n);
	fclose(fp);
}

static void respond_case(const char *name, const char *req, size_t len)
{
	FILE *fp = open_case(name);
	size_t rlen = 0;
	int status = 0;
	char *r = plyc_metrics_respond(req, len, NULL, &status, &rlen);

	if (!r)
		fprintf(fp, "incomplete\n");
	else
		fwrite(r, 1, rlen, fp);
	free(r);
	fclose(fp);
}

struct key {
	char comm[16];
	uint32_t pid;
};

int main(int argc, char **argv)
{
	static const struct plyc_field keys[] = {
		{ { PLYC_K_STR, 16, 0, 0, 0, NULL }, 0, NULL },
		{ { PLYC_K_INT, 4, 0, 5, 0, NULL }, 16, NULL },
	};
	static const char *const names[] = { "comm", "pid" };
	struct plyc_map maps[] = {
		{ .name = "@reads", .agg = PLYC_A_COUNT, .nkeys = 2, .keys = keys, .key_size = 20,
		  .value = { PLYC_K_INT, 8, 0, 0, 0, NULL }, .value_size = 8, .percpu = 1, .fd = -1, .key_names = names },
		{ .name = "@", .agg = PLYC_A_QUANTIZE, .nkeys = 2, .keys = keys, .key_size = 20,
		  .value = { PLYC_K_INT, 8, 1, 0, 0, NULL }, .value_size = 8 * 64 + 8, .nbuckets = 64, .percpu = 1, .fd = -1 },
		{ .name = "@lin", .agg = PLYC_A_LQUANTIZE, .nkeys = 0, .key_size = 4,
		  .value = { PLYC_K_INT, 8, 1, 0, 0, NULL }, .value_size = 8 * 6 + 8, .nbuckets = 6,
		  .lq_min = 0, .lq_max = 40, .lq_step = 10, .percpu = 1, .fd = -1 },
		{ .name = "@mean", .agg = PLYC_A_AVG, .nkeys = 0, .key_size = 4,
		  .value = { PLYC_K_INT, 8, 1, 0, 0, NULL }, .value_size = 16, .percpu = 1, .fd = -1 },
	};
	struct plyc_metrics_src src = {
		.tracer = "t", .script = "t.ply", .version = "0", .prefix = "plyc",
		.maps = maps, .nmaps = 4, .stats_fd = -1,
	};
	struct key k[2];
	uint64_t counts[2] = { 7, 42 }, hist[2][65], lin[7];
	struct plyc_avg avg = { -5, 2 };
	FILE *fp;
	int om;

	if (argc != 2)
		return 2;
	outdir = argv[1];

	label_case("label_plain", "bash", 16);
	label_case("label_escapes", "a\\b\"c\nd", 16);
	label_case("label_bad_utf8", "x\xff\xfey\xc3\xa9\xe2\x82", 16);
	label_case("label_controls", "t\tu\x01v\x7f", 16);
	label_case("label_overlong", "\xc0\xaf\xed\xa0\x80\xf4\x90\x80\x80", 16);
	label_case("label_full", "0123456789abcdefXYZ", 16);

	memset(k, 0, sizeof(k));
	strcpy(k[0].comm, "ba\"sh");
	k[0].pid = 20;
	strcpy(k[1].comm, "z\xffsh");
	k[1].pid = 7;
	memset(hist, 0, sizeof(hist));
	hist[0][0] = 2;		/* 0, 1 */
	hist[0][3] = 1;		/* 8..15 */
	hist[0][63] = 4;	/* negative */
	hist[0][64] = (uint64_t)(1 + 9 - 4 * 3);	/* the sum */
	hist[1][1] = 5;		/* 2, 3 */
	hist[1][64] = 12;
	memset(lin, 0, sizeof(lin));
	lin[0] = 1;		/* < 0 */
	lin[2] = 2;		/* 10..19 */
	lin[5] = 3;		/* >= 40 */
	lin[6] = 150;

	for (om = 0; om < 2; om++) {
		fp = open_case(om ? "families_om" : "families");
		plyc_metrics_family(fp, &src, 0, (const char *)k, (const char *)counts, 2, om);
		plyc_metrics_family(fp, &src, 1, (const char *)k, (const char *)hist, 2, om);
		plyc_metrics_family(fp, &src, 2, "", (const char *)lin, 1, om);
		plyc_metrics_family(fp, &src, 3, "", (const char *)&avg, 1, om);
		fclose(fp);
	}

	{
		/* the log2 aggregation: bcc's buckets */
		struct plyc_map lm = { .name = "@lat", .agg = PLYC_A_LOG2, .key_size = 4,
				       .value = { PLYC_K_INT, 8, 0, 0, 0, NULL }, .value_size = 8 * 64 + 8,
				       .nbuckets = 64, .percpu = 1, .fd = -1 };
		struct plyc_metrics_src lsrc = src;
		uint64_t lh[65] = { 0 };

		lsrc.maps = &lm;
		lsrc.nmaps = 1;
		lh[0] = 1;	/* 0 */
		lh[1] = 2;	/* 1, 1 */
		lh[4] = 3;	/* 8, 9, 10 */
		lh[64] = 29;
		fp = open_case("family_log2");
		plyc_metrics_family(fp, &lsrc, 0, "", (const char *)lh, 1, 0);
		fclose(fp);
	}

	{
		/* bpftrace's hist(): [0] < 0, [1] 0, [i] 2^(i-2) .. 2^(i-1) - 1; stats() */
		struct plyc_map hm = { .name = "@h", .agg = PLYC_A_HIST, .key_size = 4,
				       .value = { PLYC_K_INT, 8, 1, 0, 0, NULL }, .value_size = 8 * 65 + 8,
				       .nbuckets = 65, .percpu = 1, .fd = -1 };
		struct plyc_map sm = { .name = "@s", .agg = PLYC_A_STATS, .key_size = 4,
				       .value = { PLYC_K_INT, 8, 1, 0, 0, NULL }, .value_size = 16, .percpu = 1,
				       .fd = -1 };
		struct plyc_metrics_src hsrc = src;
		uint64_t hh[66] = { 0 };
		struct plyc_avg st = { 7, 2 };

		hsrc.maps = &hm;
		hsrc.nmaps = 1;
		hh[0] = 1;	/* -4 */
		hh[1] = 2;	/* 0, 0 */
		hh[4] = 1;	/* 5 */
		hh[65] = 1;	/* the sum */
		fp = open_case("family_bt_hist");
		plyc_metrics_family(fp, &hsrc, 0, "", (const char *)hh, 1, 0);
		plyc_metrics_family(fp, &hsrc, 0, "", (const char *)hh, 1, 1);
		hsrc.maps = &sm;
		plyc_metrics_family(fp, &hsrc, 0, "", (const char *)&st, 1, 0);
		fclose(fp);
	}

	respond_case("get", "GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: */*\r\n\r\n", 47);
	respond_case("get_om", "GET /metrics HTTP/1.1\r\naccept: application/openmetrics-text; version=1.0.0\r\n\r\n", 80);
	respond_case("get_lf_only", "GET /metrics?a=b HTTP/1.0\n\n", 27);
	respond_case("incomplete", "GET /metrics HTTP/1.1\r\nHost: x\r\n", 32);
	respond_case("not_found", "GET /metricsx HTTP/1.1\r\n\r\n", 26);
	respond_case("post", "POST /metrics HTTP/1.1\r\n\r\n", 26);
	respond_case("bad_version", "GET /metrics HTTP/2\r\n\r\n", 23);
	respond_case("bad_header", "GET /metrics HTTP/1.1\r\n: x\r\n\r\n", 30);
	respond_case("nul_header", "GET /metrics HTTP/1.1\r\nX: a\0b\r\n\r\n", 33);
	{
		char big[9000];

		memset(big, 'a', sizeof(big));
		respond_case("too_big", big, sizeof(big));
	}
	return 0;
}
