/* Drives the output runtime (runtime-c/) for tests/test_runtime_c.py.
 *
 * Usage: test_format OUTDIR
 *
 * Every case writes what the runtime printed to OUTDIR/<case>.txt; the
 * pytest side holds the expected text (ply's formats) and compares.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "plyc_agg.h"
#include "plyc_rt.h"
#include "plyc_btout.h"
#include "plyc_style.h"
#include "plyc_verifier.h"

static const char *outdir;

/* The operations a tracer of this style (with or without bcc's report)
 * uses: what its generated loader names (plyc/codegen/render.py). */
static void plyc_output_select(enum plyc_style style, int report)
{
	plyc_output_use(style == PLYC_STYLE_PLY ? &plyc_output_ply : &plyc_output_bpftrace, style,
			report ? &plyc_output_bccreport : NULL);
}

static FILE *open_case(const char *name)
{
	char path[4096];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s.txt", outdir, name);
	fp = fopen(path, "w");
	if (!fp) {
		perror(path);
		exit(2);
	}
	return fp;
}

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static const struct plyc_type t_u32 = { PLYC_K_INT, 4, 0, 0, 0, NULL };
static const struct plyc_type t_s32 = { PLYC_K_INT, 4, 1, 0, 0, NULL };
static const struct plyc_type t_u64 = { PLYC_K_INT, 8, 0, 0, 0, NULL };
static const struct plyc_type t_s64 = { PLYC_K_INT, 8, 1, 0, 0, NULL };
static const struct plyc_type t_pid = { PLYC_K_INT, 4, 0, 5, 0, NULL };
static const struct plyc_type t_comm = { PLYC_K_STR, 16, 0, 0, 0, NULL };
static const struct plyc_type t_lit8 = { PLYC_K_STR, 8, 0, 0, 0, NULL };
static const struct plyc_type t_time = { PLYC_K_TIME, 8, 1, 0, 0, NULL };

static void print_line(FILE *fp, const struct plyc_type *t, const void *v)
{
	plyc_print_value(fp, t, v);
	fputc('\n', fp);
}

static void case_ints(void)
{
	FILE *fp = open_case("ints");
	int8_t s8 = -5;
	uint8_t u8 = 250;
	int16_t s16 = -300;
	uint16_t u16 = 65000;
	int32_t s32 = -70000;
	uint32_t u32 = 4000000000u, pid = 42, cpu = 3;
	int64_t s64 = INT64_MIN;
	uint64_t u64 = UINT64_MAX;
	/* an int at an odd offset of a packed record */
	unsigned char rec[9] = { 0xaa, 0x39, 0x30, 0, 0, 0, 0, 0, 0 };
	struct plyc_type t;

	t = (struct plyc_type){ PLYC_K_INT, 1, 1, 0, 0, NULL };  print_line(fp, &t, &s8);
	t = (struct plyc_type){ PLYC_K_INT, 1, 0, 0, 0, NULL };  print_line(fp, &t, &u8);
	t = (struct plyc_type){ PLYC_K_INT, 2, 1, 0, 0, NULL };  print_line(fp, &t, &s16);
	t = (struct plyc_type){ PLYC_K_INT, 2, 0, 0, 0, NULL };  print_line(fp, &t, &u16);
	print_line(fp, &t_s32, &s32);
	print_line(fp, &t_u32, &u32);
	print_line(fp, &t_s64, &s64);
	print_line(fp, &t_u64, &u64);
	/* the same bits, the other signedness */
	print_line(fp, &t_u32, &s32);
	print_line(fp, &t_s64, &u64);
	print_line(fp, &t_pid, &pid);
	t = (struct plyc_type){ PLYC_K_INT, 4, 0, 2, 0, NULL };  print_line(fp, &t, &cpu);
	print_line(fp, &t_u64, rec + 1);
	fclose(fp);
}

static void case_strings(void)
{
	FILE *fp = open_case("strings");
	char comm[16] = "bash";
	char full[16];
	char lit[8] = "dist";
	char bin[8] = { 'a', 'b', 1 };
	char empty[16] = "";

	memcpy(full, "abcdefghijklmnop", 16);	/* no NUL */

	fputc('[', fp); plyc_print_value(fp, &t_comm, comm); fputs("]\n", fp);
	fputc('[', fp); plyc_print_value(fp, &t_comm, full); fputs("]\n", fp);
	fputc('[', fp); plyc_print_value(fp, &t_lit8, lit); fputs("]\n", fp);
	fputc('[', fp); plyc_print_value(fp, &t_comm, empty); fputs("]\n", fp);
	fputc('[', fp); plyc_print_value(fp, &t_lit8, bin); fputs("]\n", fp);
	fclose(fp);
}

/* Untrusted text for a terminal: control characters (C0, DEL, C1 as
 * UTF-8) and bytes that are no UTF-8 as \xNN, the rest as it is; the
 * buffer form stops whole before its end. */
static void case_text_escapes(void)
{
	FILE *fp = open_case("text_escapes");
	const char s[] = "a\x1b[31m\x07\t\x7f\xc2\x9b\xc2\xa0\xc3\xa9\xff\xe2\x82z\\";
	char buf[8];

	plyc_text_string(fp, s, sizeof(s));
	fputc('\n', fp);
	plyc_text_string(fp, s, 3);             /* maxlen cuts the bytes read */
	fputc('\n', fp);
	fputs(plyc_text_escape(s, sizeof(s), buf, sizeof(buf)), fp);
	fputc('\n', fp);
	fclose(fp);
}

static void case_durations(void)
{
	static const int64_t ns[] = {
		0, 1, 999, 1000, 1020, 1500, 9999, 10000, 12345, 123456,
		999999, 1000000, 4000000, 45600000, 999000000,
		1050000000LL, 12300000000LL, 999000000000LL,
		1000000000000LL,		/* 1000 s */
		7200000000000LL,		/* 2 h */
		100000000000000LL,		/* 100000 s */
		8640000000000000LL,		/* 100 days */
		94608000000000000LL,		/* 3 years of 365 days */
		-5,
	};
	FILE *fp = open_case("durations");
	size_t i;

	for (i = 0; i < ARRAY_SIZE(ns); i++) {
		fputc('[', fp);
		plyc_print_value(fp, &t_time, &ns[i]);
		fputs("]\n", fp);
	}
	fclose(fp);
}

static void case_walltime(void)
{
	struct plyc_type t = { PLYC_K_WALLTIME, 8, 0, 0, 0, NULL };
	FILE *fp = open_case("walltime");
	uint64_t mono = 5000000000ULL + 123456789ULL;
	int64_t saved = plyc_rt.mono_to_real_ns;

	/* 1700000000 s since the epoch is 2023-11-14 22:13:20 UTC */
	setenv("TZ", "UTC", 1);
	tzset();
	plyc_rt.mono_to_real_ns = 1700000000LL * 1000000000LL - 5000000000LL;
	print_line(fp, &t, &mono);
	plyc_json_value(fp, &t, &mono);
	fputc('\n', fp);
	plyc_rt.mono_to_real_ns = saved;
	fclose(fp);

	/* now, with the offset plyc_rt_init() measured */
	fp = open_case("walltime_now");
	{
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		mono = (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
		print_line(fp, &t, &mono);
	}
	fclose(fp);
}

static void case_hex(void)
{
	struct plyc_type thex = { PLYC_K_HEX, 8, 0, 0, 0, NULL };
	struct plyc_type tmem = { PLYC_K_MEM, 20, 0, 0, 0, NULL };
	struct plyc_type tmem8 = { PLYC_K_MEM, 8, 0, 0, 0, NULL };
	uint64_t ptr = 0xffff888012345678ULL;
	const char mem[20] = "0123456789abcdefXYZ\n";
	FILE *fp = open_case("hex");

	print_line(fp, &thex, &ptr);
	fputc('[', fp); plyc_print_value(fp, &tmem, mem); fputs("]\n", fp);
	fputc('[', fp); plyc_print_value(fp, &tmem8, mem); fputs("]\n", fp);
	fclose(fp);
}

/* A kallsyms file in the kernel's format: unsorted, with duplicates,
 * data symbols and module symbols. */
static void write_kallsyms(const char *path)
{
	FILE *fp = fopen(path, "w");

	if (!fp) {
		perror(path);
		exit(2);
	}
	fputs("ffffffff81000000 T _stext\n"
	      "ffffffff81000000 T _text\n"
	      "ffffffff81001100 T vfs_write\n"
	      "ffffffff81001000 t vfs_read\n"
	      "ffffffff81002000 D some_data\n"
	      "ffffffff81002000 d more_data\n"
	      "ffffffffc0001000 t mod_fn\t[mymod]\n", fp);
	fclose(fp);
}

static void case_syms(void)
{
	static const uint64_t addrs[] = {
		0xffffffff81001000ULL, 0xffffffff81001010ULL,
		0xffffffff81001105ULL, 0xffffffff81002010ULL,
		0xffffffff81000000ULL, 0xffffffff81000004ULL,
		0xffffffffc0001001ULL, 0x1000ULL,
	};
	static const uint64_t ips[] = {
		0xffffffff81001010ULL, 0xffffffff81001100ULL,
		0xffffffffc0001001ULL, 0, 0xffffffff81001000ULL,
	};
	struct plyc_type tsym = { PLYC_K_SYM, 8, 0, 0, 0, NULL };
	struct plyc_type tstack = { PLYC_K_STACK, 8, 1, 0, 0, NULL };
	char path[4096], buf[PLYC_KSYM_LEN];
	int64_t id = 7;
	FILE *fp;
	size_t i;
	int n;

	snprintf(path, sizeof(path), "%s/kallsyms", outdir);
	write_kallsyms(path);
	n = plyc_ksyms_load(path);

	fp = open_case("syms");
	fprintf(fp, "loaded %d\n", n);
	for (i = 0; i < ARRAY_SIZE(addrs); i++)
		fprintf(fp, "%s\n", plyc_ksym(addrs[i], buf, sizeof(buf)));
	print_line(fp, &tsym, &addrs[1]);
	fclose(fp);

	fp = open_case("stack_frames");
	plyc_print_frames(fp, ips, ARRAY_SIZE(ips));
	fclose(fp);

	/* no stack map: the id is all there is */
	fp = open_case("stack_unreadable");
	plyc_rt.stack_fd = -1;
	print_line(fp, &tstack, &id);
	plyc_json_value(fp, &tstack, &id);
	fputc('\n', fp);
	fclose(fp);

	/* a file whose addresses are all 0, as without CAP_SYSLOG */
	fp = fopen(path, "w");
	fputs("0000000000000000 T _stext\n0000000000000000 t vfs_read\n", fp);
	fclose(fp);
	fp = open_case("syms_restricted");
	fprintf(fp, "loaded %d\n", plyc_ksyms_load(path));
	fprintf(fp, "%s\n", plyc_ksym(0xffffffff81001010ULL, buf, sizeof(buf)));
	fclose(fp);

	/* back to the good table for the cases that follow */
	write_kallsyms(path);
	plyc_ksyms_load(path);
}

/* --- map dumps --------------------------------------------------------- */

static void dump(const char *name, const struct plyc_map *m,
		 struct plyc_entry *ents, size_t n, int json)
{
	FILE *fp = open_case(name);

	plyc_rt.json = json;
	plyc_map_print(fp, m, ents, n);
	plyc_rt.json = 0;
	fclose(fp);
}

static const struct plyc_field f_s32[] = { { { PLYC_K_INT, 4, 1, 0, 0, NULL }, 0, NULL } };
static const struct plyc_field f_u32[] = { { { PLYC_K_INT, 4, 0, 0, 0, NULL }, 0, NULL } };
static const struct plyc_field f_comm[] = { { { PLYC_K_STR, 16, 0, 0, 0, NULL }, 0, NULL } };
static const struct plyc_field f_lit8[] = { { { PLYC_K_STR, 8, 0, 0, 0, NULL }, 0, NULL } };

static void case_count_int_keys(void)
{
	struct plyc_map m = {
		.name = "@", .agg = PLYC_A_COUNT, .nkeys = 1, .keys = f_s32,
		.key_size = 4, .value = t_u64, .value_size = 8,
	};
	int32_t keys[] = { 3, -1, 7, 5 };
	uint64_t vals[] = { 10, 2, 10, 1 };
	struct plyc_entry ents[4];
	size_t i;

	for (i = 0; i < 4; i++)
		ents[i] = (struct plyc_entry){ &keys[i], &vals[i] };
	dump("count_int_keys", &m, ents, 4, 0);
	dump("count_int_keys_json", &m, ents, 4, 1);
	dump("empty_map", &m, ents, 0, 0);
	dump("empty_map_json", &m, ents, 0, 1);
}

static void case_count_str_keys(void)
{
	struct plyc_map m = {
		.name = "@calls", .agg = PLYC_A_COUNT, .nkeys = 1,
		.keys = f_comm, .key_size = 16, .value = t_u64,
		.value_size = 8,
	};
	char keys[3][16] = { "sshd", "ls", "bash" };
	uint64_t vals[] = { 5, 1, 5 };
	struct plyc_entry ents[3];
	size_t i;

	for (i = 0; i < 3; i++)
		ents[i] = (struct plyc_entry){ keys[i], &vals[i] };
	dump("count_str_keys", &m, ents, 3, 0);
}

/* @bytes[comm, pid] = sum(x) with a signed x */
struct comm_pid {
	char comm[16];
	uint32_t pid;
};

static const struct plyc_field f_comm_pid[] = {
	{ { PLYC_K_STR, 16, 0, 0, 0, NULL }, 0, NULL },
	{ { PLYC_K_INT, 4, 0, 5, 0, NULL }, 16, NULL },
};

static void case_sum_tuple_keys(void)
{
	struct plyc_map m = {
		.name = "@bytes", .agg = PLYC_A_SUM, .nkeys = 2,
		.keys = f_comm_pid, .key_size = sizeof(struct comm_pid),
		.value = t_s64, .value_size = 8,
	};
	struct comm_pid keys[] = {
		{ "bash", 100 }, { "bash", 20 }, { "zsh", 7 },
	};
	int64_t vals[] = { 30, 30, -4 };
	struct plyc_entry ents[3];
	size_t i;

	for (i = 0; i < 3; i++)
		ents[i] = (struct plyc_entry){ &keys[i], &vals[i] };
	dump("sum_tuple_keys", &m, ents, 3, 0);
	dump("sum_tuple_keys_json", &m, ents, 3, 1);
}

static void case_min_max_avg(void)
{
	struct plyc_map m = {
		.name = "@lo", .agg = PLYC_A_MIN, .nkeys = 1, .keys = f_u32,
		.key_size = 4, .value = t_s64, .value_size = 16,
	};
	uint32_t keys[] = { 1, 2, 3 };
	struct plyc_minmax mm[] = { { -3, 1 }, { 12, 1 }, { -40, 1 } };
	struct plyc_minmax mx[] = { { 1500, 1 }, { 2000000, 1 }, { 7, 1 } };
	struct plyc_avg av[] = { { 10, 4 }, { -9, 2 }, { 300, 3 } };
	struct plyc_entry ents[3];
	size_t i;

	for (i = 0; i < 3; i++)
		ents[i] = (struct plyc_entry){ &keys[i], &mm[i] };
	dump("min", &m, ents, 3, 0);
	dump("min_json", &m, ents, 3, 1);

	/* max of durations */
	m.name = "@hi";
	m.agg = PLYC_A_MAX;
	m.value = t_time;
	for (i = 0; i < 3; i++)
		ents[i] = (struct plyc_entry){ &keys[i], &mx[i] };
	dump("max_time", &m, ents, 3, 0);
	dump("max_time_json", &m, ents, 3, 1);

	m.name = "@mean";
	m.agg = PLYC_A_AVG;
	m.value = t_s64;
	for (i = 0; i < 3; i++)
		ents[i] = (struct plyc_entry){ &keys[i], &av[i] };
	dump("avg", &m, ents, 3, 0);
	dump("avg_json", &m, ents, 3, 1);
}

static void case_no_key(void)
{
	struct plyc_map m = {
		.name = "@total", .agg = PLYC_A_COUNT, .nkeys = 0,
		.key_size = 4, .value = t_u64, .value_size = 8,
	};
	uint32_t zero = 0;
	uint64_t v = 42;
	struct plyc_entry e = { &zero, &v };

	dump("no_key", &m, &e, 1, 0);
	dump("no_key_json", &m, &e, 1, 1);
}

static void case_plain_map(void)
{
	/* rx[arg0] = time; */
	struct plyc_map m = {
		.name = "rx", .agg = PLYC_A_NONE, .nkeys = 1,
		.keys = (const struct plyc_field[]){ { t_u64, 0, NULL } },
		.key_size = 8, .value = t_time, .value_size = 8,
	};
	uint64_t keys[] = { 0xffff0001, 2 };
	int64_t vals[] = { 1500, 1020 };
	struct plyc_entry ents[2];
	size_t i;

	for (i = 0; i < 2; i++)
		ents[i] = (struct plyc_entry){ &keys[i], &vals[i] };
	dump("plain_map", &m, ents, 2, 0);
}

/* --- histograms --------------------------------------------------------- */

static void case_quantize_unsigned(void)
{
	struct plyc_map m = {
		.name = "@size", .agg = PLYC_A_QUANTIZE, .nkeys = 1,
		.keys = f_u32, .key_size = 4, .value = t_u64,
		.value_size = 8 * PLYC_QUANTIZE_BUCKETS,
		.nbuckets = PLYC_QUANTIZE_BUCKETS,
	};
	uint64_t h1[PLYC_QUANTIZE_BUCKETS] = { 0 }, h2[PLYC_QUANTIZE_BUCKETS] = { 0 };
	uint32_t keys[] = { 1, 2 };
	struct plyc_entry ents[2];

	/* key 1: values in [0,1], [2,3], [16,31], [512,1k), [1k,2k) */
	h1[0] = 3; h1[1] = 1; h1[4] = 2; h1[9] = 1; h1[10] = 7;
	/* key 2 sorts first: ply compares bucket 0 first (1 < 3) */
	h2[0] = 1; h2[20] = 1;

	ents[0] = (struct plyc_entry){ &keys[0], h1 };
	ents[1] = (struct plyc_entry){ &keys[1], h2 };

	plyc_rt.utf8 = 1;
	dump("quantize_unsigned_utf8", &m, ents, 2, 0);
	plyc_rt.utf8 = 0;
	dump("quantize_unsigned_ascii", &m, ents, 2, 0);
	dump("quantize_unsigned_json", &m, ents, 2, 1);
}

static void case_quantize_signed(void)
{
	/* @["dist"] = quantize(retval); */
	struct plyc_map m = {
		.name = "@", .agg = PLYC_A_QUANTIZE, .nkeys = 1,
		.keys = f_lit8, .key_size = 8, .value = t_s64,
		.value_size = 8 * PLYC_QUANTIZE_BUCKETS,
		.nbuckets = PLYC_QUANTIZE_BUCKETS,
	};
	uint64_t h[PLYC_QUANTIZE_BUCKETS] = { 0 };
	char key[8] = "dist";
	struct plyc_entry e = { key, h };

	h[63] = 2;	/* < 0 */
	h[2] = 1;	/* [4, 7] */
	h[3] = 1;	/* [8, 15] */

	plyc_rt.utf8 = 1;
	dump("quantize_signed_utf8", &m, &e, 1, 0);
	plyc_rt.utf8 = 0;
	dump("quantize_signed_ascii", &m, &e, 1, 0);
	dump("quantize_signed_json", &m, &e, 1, 1);

	/* negatives and bucket 0: no "..." between them */
	memset(h, 0, sizeof(h));
	h[63] = 1;
	h[0] = 1;
	h[1] = 2;
	plyc_rt.utf8 = 1;
	dump("quantize_signed_adjacent", &m, &e, 1, 0);
}

static void case_quantize_time(void)
{
	/* @lat = quantize(time - start);  (no key: [ext]) */
	struct plyc_map m = {
		.name = "@lat", .agg = PLYC_A_QUANTIZE, .nkeys = 0,
		.key_size = 4, .value = t_time,
		.value_size = 8 * PLYC_QUANTIZE_BUCKETS,
		.nbuckets = PLYC_QUANTIZE_BUCKETS,
	};
	uint64_t h[PLYC_QUANTIZE_BUCKETS] = { 0 };
	uint32_t zero = 0;
	struct plyc_entry e = { &zero, h };

	h[0] = 1;	/* [0, 1] ns */
	h[10] = 5;	/* [1024, 2047] ns */
	h[20] = 3;	/* [1048576, 2097151] ns */

	plyc_rt.utf8 = 1;
	dump("quantize_time_utf8", &m, &e, 1, 0);
	plyc_rt.utf8 = 0;
	dump("quantize_time_ascii", &m, &e, 1, 0);
	dump("quantize_time_json", &m, &e, 1, 1);
}

static void case_lquantize(void)
{
	/* @[pid] = lquantize(x, 0, 100, 10); */
	struct plyc_map m = {
		.name = "@lin", .agg = PLYC_A_LQUANTIZE, .nkeys = 1,
		.keys = (const struct plyc_field[]){ { t_pid, 0, NULL } },
		.key_size = 4, .value = t_s64, .value_size = 8 * 12,
		.lq_min = 0, .lq_max = 100, .lq_step = 10, .nbuckets = 12,
	};
	uint64_t h[12] = { 0 };
	uint32_t pid = 1234;
	struct plyc_entry e = { &pid, h };

	h[0] = 1;	/* < 0 */
	h[1] = 2;	/* [0, 9] */
	h[3] = 4;	/* [20, 29] */
	h[11] = 1;	/* >= 100 */

	plyc_rt.utf8 = 1;
	dump("lquantize_utf8", &m, &e, 1, 0);
	plyc_rt.utf8 = 0;
	dump("lquantize_ascii", &m, &e, 1, 0);
	dump("lquantize_json", &m, &e, 1, 1);
}

/* --- JSON values --------------------------------------------------------- */

static void case_json_values(void)
{
	struct plyc_type tstr = { PLYC_K_STR, 16, 0, 0, 0, NULL };
	struct plyc_type tmem = { PLYC_K_MEM, 4, 0, 0, 0, NULL };
	struct plyc_type thex = { PLYC_K_HEX, 8, 0, 0, 0, NULL };
	struct plyc_type tsym = { PLYC_K_SYM, 8, 0, 0, 0, NULL };
	struct plyc_type ts8 = { PLYC_K_INT, 1, 1, 0, 0, NULL };
	char s[16] = "a\"b\\c\nd\x01\xc3\xa9\xff";
	char full[16];
	unsigned char mem[4] = { 0xde, 0xad, 0x00, 0x0f };
	uint64_t ptr = 0xffff888012345678ULL;
	uint64_t sym = 0xffffffff81001010ULL;
	int64_t ns = 1500, neg = -70000;
	int8_t s8 = -1;
	uint64_t u64 = UINT64_MAX;
	FILE *fp = open_case("json_values");

	memcpy(full, "abcdefghijklmnop", 16);
	plyc_json_value(fp, &tstr, s);      fputc('\n', fp);
	plyc_json_value(fp, &tstr, full);   fputc('\n', fp);
	plyc_json_value(fp, &tmem, mem);    fputc('\n', fp);
	plyc_json_value(fp, &thex, &ptr);   fputc('\n', fp);
	plyc_json_value(fp, &tsym, &sym);   fputc('\n', fp);
	plyc_json_value(fp, &t_time, &ns);  fputc('\n', fp);
	plyc_json_value(fp, &t_s64, &neg);  fputc('\n', fp);
	plyc_json_value(fp, &ts8, &s8);     fputc('\n', fp);
	plyc_json_value(fp, &t_u64, &u64);  fputc('\n', fp);
	plyc_json_string(fp, "tab\there", 4);
	fputc('\n', fp);
	fclose(fp);
}

/* --- per-CPU merging ------------------------------------------------------ */

static void case_merge(void)
{
	FILE *fp = open_case("merge");
	struct plyc_map m = { .name = "@", .value = t_s64 };
	uint64_t counts[3] = { 1, 2, 3 }, out64;
	/* the padded per-CPU layout of 16-byte values */
	struct plyc_minmax mm[3] = { { 0, 0 }, { -5, 1 }, { 3, 1 } }, omm;
	struct plyc_avg av[3] = { { 10, 1 }, { -4, 2 }, { 0, 0 } }, oav;
	uint64_t q[2][4] = { { 1, 0, 2, 0 }, { 0, 5, 1, 0 } }, oq[4];
	struct { uint32_t v; uint32_t pad; } plain[3] = { { 0, 0 }, { 9, 0 }, { 8, 0 } };
	uint32_t oplain;

	m.agg = PLYC_A_COUNT; m.value_size = 8;
	plyc_map_merge(&m, &out64, counts, 3);
	fprintf(fp, "count %" PRIu64 "\n", out64);

	m.agg = PLYC_A_MIN; m.value_size = 16;
	plyc_map_merge(&m, &omm, mm, 3);
	fprintf(fp, "min %" PRId64 " set %" PRIu64 "\n", omm.value, omm.set);

	m.agg = PLYC_A_MAX;
	plyc_map_merge(&m, &omm, mm, 3);
	fprintf(fp, "max %" PRId64 " set %" PRIu64 "\n", omm.value, omm.set);

	/* unsigned: -5 is the largest */
	m.value = t_u64;
	plyc_map_merge(&m, &omm, mm, 3);
	fprintf(fp, "umax %" PRId64 "\n", omm.value);
	m.value = t_s64;

	plyc_map_merge(&m, &omm, mm, 1);	/* one CPU, never set */
	fprintf(fp, "unset %" PRId64 " set %" PRIu64 "\n", omm.value, omm.set);

	m.agg = PLYC_A_AVG;
	plyc_map_merge(&m, &oav, av, 3);
	fprintf(fp, "avg %" PRId64 "/%" PRIu64 "\n", oav.sum, oav.count);

	m.agg = PLYC_A_QUANTIZE; m.value_size = 32; m.nbuckets = 4;
	plyc_map_merge(&m, oq, q, 2);
	fprintf(fp, "buckets %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
		oq[0], oq[1], oq[2], oq[3]);

	m.agg = PLYC_A_NONE; m.value = t_u32; m.value_size = 4;
	plyc_map_merge(&m, &oplain, plain, 3);
	fprintf(fp, "plain %" PRIu32 "\n", oplain);
	fclose(fp);
}

/* --- plyc_rt_init ---------------------------------------------------------- */

static void case_init(void)
{
	static const struct {
		const char *lc_all, *lc_ctype, *lang, *ascii;
	} envs[] = {
		{ NULL, NULL, "en_US.UTF-8", NULL },
		{ NULL, NULL, "C", NULL },
		{ NULL, NULL, NULL, NULL },
		{ "C.UTF-8", NULL, "C", NULL },
		{ "", NULL, "sv_SE.utf8", NULL },
		{ "C", NULL, "en_US.UTF-8", NULL },
		{ NULL, "en_US.UTF-8", "C", NULL },
		{ NULL, NULL, "en_US.UTF-8", "1" },
		{ NULL, NULL, "en_US.UTF-8", "0" },
	};
	FILE *fp = open_case("init");
	size_t i;

#define SETENV(name, v) ((v) ? setenv(name, v, 1) : unsetenv(name))
	for (i = 0; i < ARRAY_SIZE(envs); i++) {
		SETENV("LC_ALL", envs[i].lc_all);
		SETENV("LC_CTYPE", envs[i].lc_ctype);
		SETENV("LANG", envs[i].lang);
		SETENV("PLYC_ASCII", envs[i].ascii);
		plyc_rt_init();
		fprintf(fp, "utf8 %d\n", plyc_rt.utf8);
	}
#undef SETENV
	fprintf(fp, "out is stdout %d\n", plyc_rt.out == stdout);
	fprintf(fp, "stack_fd %d\n", plyc_rt.stack_fd);
	fclose(fp);
}

/* --- against real BPF maps, where this machine allows them -------------- */

static void case_bpf(void)
{
	struct plyc_map m = {
		.name = "@", .agg = PLYC_A_COUNT, .nkeys = 1, .keys = f_u32,
		.key_size = 4, .value = t_u64, .value_size = 8, .percpu = 1,
	};
	struct plyc_map mm = {
		.name = "@lo", .agg = PLYC_A_MIN, .nkeys = 1, .keys = f_u32,
		.key_size = 4, .value = t_s64, .value_size = 16, .percpu = 1,
	};
	int ncpus = libbpf_num_possible_cpus(), c, ret;
	FILE *fp = open_case("bpf");
	uint64_t *vals;
	struct plyc_minmax *mvals;
	uint32_t k;

	m.fd = bpf_map_create(BPF_MAP_TYPE_PERCPU_HASH, "plyc_test", 4, 8, 16, NULL);
	mm.fd = bpf_map_create(BPF_MAP_TYPE_PERCPU_HASH, "plyc_test2", 4, 16, 16, NULL);
	if (m.fd < 0 || mm.fd < 0 || ncpus <= 0) {
		fprintf(fp, "SKIP cannot create BPF maps: %s\n", strerror(errno));
		fclose(fp);
		return;
	}

	vals = calloc(ncpus, 8);
	mvals = calloc(ncpus, sizeof(*mvals));
	for (k = 1; k <= 3; k++) {
		for (c = 0; c < ncpus; c++)
			vals[c] = (c == ncpus - 1) ? 10 * k : 0;
		vals[0] += 1;	/* so counts are 10k+1 with 1 CPU too */
		bpf_map_update_elem(m.fd, &k, vals, BPF_ANY);

		for (c = 0; c < ncpus; c++)
			mvals[c] = (struct plyc_minmax){ (int64_t)k * 7 - c, 1 };
		bpf_map_update_elem(mm.fd, &k, mvals, BPF_ANY);
	}

	plyc_rt.out = fp;
	ret = plyc_map_dump(&m);
	fprintf(fp, "dumped %d\n", ret);
	ret = plyc_map_dump(&mm);
	fprintf(fp, "dumped %d min over %d cpus\n", ret, ncpus);
	/* bpftrace's zero(): the keys stay, their values are 0 */
	ret = plyc_map_zero(&m);
	fprintf(fp, "zeroed %d\n", ret);
	plyc_output_select(PLYC_STYLE_BPFTRACE017, 0);
	ret = plyc_map_dump(&m);
	plyc_output_select(PLYC_STYLE_PLY, 0);
	fprintf(fp, "dumped %d\n", ret);
	ret = plyc_map_clear(&m);
	fprintf(fp, "cleared %d\n", ret);
	ret = plyc_map_dump(&m);
	fprintf(fp, "dumped %d\n", ret);
	plyc_rt.out = stdout;

	free(vals);
	free(mvals);
	close(m.fd);
	close(mm.fd);
	fclose(fp);
}

/* Old kernels' verifier logs, told as the feature they lack. */
static void case_verifier_hints(void)
{
	static const char *const logs[] = {
		"0: (b7) r1 = 0\nback-edge from insn 12 to 4\nprocessed 0 insns\n",
		"5: (85) call unknown#131\ninvalid func unknown#131\n",
		"5: (85) call bpf_probe_read_kernel#113\nunknown func bpf_probe_read_kernel#113\n",
		"invalid func unknown#999\n",
		"5: (85) call bpf_for_each_map_elem#164\ninvalid func unknown#164\n",
		"BPF program is too large. Processed 1000001 insn\nprocessed 1000001 insns\n",
		"R1 invalid mem access 'inv'\nprocessed 12 insns\n",
		"4: (85) call bpf_send_signal#109\nunknown func bpf_send_signal#109\n",
		"9: (85) call bpf_override_return#58\nunknown func bpf_override_return#58\n",
		"56: (85) call bpf_d_path#147\nhelper call is not allowed in probe\nprocessed 54 insns\n",
	};
	FILE *fp = open_case("verifier_hints");
	char hint[512];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(logs); i++)
		fprintf(fp, "%s\n", plyc_verifier_hint(logs[i], hint, sizeof(hint)) ? hint : "-");
	fclose(fp);
}

/* --- bpftrace's style (output/bpftrace.c): the values of bpftrace runs ------- */

/* buf() values (a u32 length, then the bytes) by %r, %rx and %rh; a length
 * past the capacity is the capacity. */
static void case_bt_buf(void)
{
	static const unsigned char a[4 + 6] = { 4, 0, 0, 0, 'a', '\n', 0x01, 0xff, 'z', 'z' };
	static const unsigned char big[4 + 2] = { 200, 0, 0, 0, 'o', 'k' };
	static const char modes[] = { ' ', 'x', 'h' };
	FILE *fp = open_case("bt_buf");
	size_t i;

	for (i = 0; i < sizeof(modes); i++) {
		plyc_bt_buf_format(fp, a, sizeof(a), modes[i]);
		fputc('\n', fp);
	}
	plyc_bt_buf_format(fp, big, sizeof(big), ' ');
	fputc('\n', fp);
	fclose(fp);
}

/* The dump as bpftrace 0.17 prints it (NAME), and as 0.27 does (NAME_027):
 * a tracer's default, struct plyc_bt_version's differences. */
static void bt_dump(const char *name, const struct plyc_map *m, struct plyc_entry *ents, size_t n,
		    int json)
{
	char name27[128];

	plyc_output_select(PLYC_STYLE_BPFTRACE017, 0);
	dump(name, m, ents, n, json);
	snprintf(name27, sizeof(name27), "%s_027", name);
	plyc_output_select(PLYC_STYLE_BPFTRACE, 0);
	dump(name27, m, ents, n, json);
	plyc_output_select(PLYC_STYLE_PLY, 0);
}

/* @a[k] = count() with counts 1, 2, 3, 4 under keys 7, -1, 256, 2 */
static void case_bt_count(void)
{
	struct plyc_map m = {
		.name = "@a", .agg = PLYC_A_COUNT, .nkeys = 1, .keys = f_s32,
		.key_size = 4, .value = t_u64, .value_size = 8,
	};
	int32_t keys[] = { 7, -1, 256, 2 };
	uint64_t vals[] = { 4, 2, 1, 3 };
	struct plyc_entry ents[4];
	size_t i;

	for (i = 0; i < 4; i++)
		ents[i] = (struct plyc_entry){ &keys[i], &vals[i] };
	bt_dump("bt_count", &m, ents, 4, 0);
	bt_dump("bt_count_json", &m, ents, 4, 1);
	/* ties: by key (bpftrace: its hash map's order) */
	vals[0] = vals[1] = vals[2] = vals[3] = 1;
	bt_dump("bt_count_ties", &m, ents, 4, 0);
}

/* @t[str, int] = "value": by key, strings then integers unsigned */
static void case_bt_plain_keys(void)
{
	struct keyrec {
		char s[8];
		int32_t i;
	} keys[] = { { "b", 2 }, { "a", 3 }, { "a", 1 }, { "a", -1 } };
	static const struct plyc_field f[] = { { { PLYC_K_STR, 8, 0, 0, 0, NULL }, 0, NULL },
					       { { PLYC_K_INT, 4, 1, 0, 0, NULL }, 8, NULL } };
	struct plyc_map m = {
		.name = "@t", .agg = PLYC_A_NONE, .nkeys = 2, .keys = f,
		.key_size = sizeof(keys[0]), .value = t_lit8, .value_size = 8,
	};
	char vals[4][8] = { "x", "y", "z", "w\"\xc3\xa9" };
	struct plyc_entry ents[4];
	size_t i;

	for (i = 0; i < 4; i++)
		ents[i] = (struct plyc_entry){ &keys[i], vals[i] };
	bt_dump("bt_plain_keys", &m, ents, 4, 0);
	bt_dump("bt_plain_keys_json", &m, ents, 4, 1);

	/* plain integers sort by value, signed */
	m.name = "@b";
	m.nkeys = 1;
	m.keys = f_s32;
	m.key_size = 4;
	m.value = t_s64;
	{
		int32_t k[] = { 1, 2 };
		int64_t v[] = { 3, -5 };

		for (i = 0; i < 2; i++)
			ents[i] = (struct plyc_entry){ &k[i], &v[i] };
		bt_dump("bt_plain_ints", &m, ents, 2, 0);
	}
}

/* Tuples (PLYC_K_TUPLE), laid out as bpftrace lays them out: @t[k] =
 * ((int8)-2, "ab", (7, "x")) with a nested tuple key member, text and JSON;
 * entries by key, tuple keys member by member (2 before 256, which a
 * compare of the little-endian bytes would put first). */
static void case_bt_tuples(void)
{
	static const struct plyc_field inner[] = {
		{ { PLYC_K_INT, 8, 1, 0, 0, NULL }, 0, NULL },
		{ { PLYC_K_STR, 2, 0, 0, 0, NULL }, 8, NULL },
	};
	static const struct plyc_field outer[] = {
		{ { PLYC_K_INT, 1, 1, 0, 0, NULL }, 0, NULL },
		{ { PLYC_K_STR, 3, 0, 0, 0, NULL }, 1, NULL },
		{ { PLYC_K_TUPLE, 16, 0, 0, 2, inner }, 8, NULL },
	};
	static const struct plyc_field keyf[] = {
		{ { PLYC_K_INT, 4, 1, 0, 0, NULL }, 0, NULL },
		{ { PLYC_K_TUPLE, 16, 0, 0, 2, inner }, 8, NULL },
	};
	struct val { int8_t a; char s[3]; char pad[4]; int64_t n; char x[2]; char pad2[6]; } vals[] = {
		{ -2, "ab", "", 7, "x", "" }, { 1, "c", "", -1, "yz", "" },
	};
	struct key { int32_t k; char pad[4]; int64_t n; char x[2]; char pad2[6]; } keys[] = {
		{ 3, "", 2, "b", "" }, { 3, "", 256, "a", "" },
	};
	struct plyc_map m = {
		.name = "@t", .agg = PLYC_A_NONE, .nkeys = 2, .keys = keyf, .key_size = sizeof(keys[0]),
		.value = { PLYC_K_TUPLE, 24, 0, 0, 3, outer }, .value_size = sizeof(vals[0]),
	};
	struct plyc_entry ents[2] = { { &keys[0], &vals[0] }, { &keys[1], &vals[1] } };

	bt_dump("bt_tuples", &m, ents, 2, 0);
	bt_dump("bt_tuples_json", &m, ents, 2, 1);
	/* the nested tuple alone, a key-less map's value */
	m.value = outer[2].type;
	m.nkeys = 0;
	ents[0].value = &vals[0].n;
	bt_dump("bt_tuple_value", &m, ents, 1, 0);
}

/* bpftrace 0.27's records: @r[(k=3, t=(2, "b"))] = (n=7, x="x"), members
 * with names (struct plyc_field's name) */
static void case_bt_records(void)
{
	static const struct plyc_field inner[] = {
		{ { PLYC_K_INT, 8, 1, 0, 0, NULL }, 0, NULL },
		{ { PLYC_K_STR, 2, 0, 0, 0, NULL }, 8, NULL },
	};
	static const struct plyc_field keyrec[] = {
		{ { PLYC_K_INT, 4, 1, 0, 0, NULL }, 0, "k" },
		{ { PLYC_K_TUPLE, 16, 0, 0, 2, inner }, 8, "t" },
	};
	static const struct plyc_field keyf[] = {
		{ { PLYC_K_TUPLE, 24, 0, 0, 2, keyrec }, 0, NULL },
	};
	static const struct plyc_field valrec[] = {
		{ { PLYC_K_INT, 8, 1, 0, 0, NULL }, 0, "n" },
		{ { PLYC_K_STR, 2, 0, 0, 0, NULL }, 8, "x" },
	};
	struct val { int64_t n; char x[2]; char pad[6]; } val = { 7, "x", "" };
	struct key { int32_t k; char pad[4]; int64_t n; char x[2]; char pad2[6]; } key = { 3, "", 2, "b", "" };
	struct plyc_map m = {
		.name = "@r", .agg = PLYC_A_NONE, .nkeys = 1, .keys = keyf, .key_size = sizeof(key),
		.value = { PLYC_K_TUPLE, 16, 0, 0, 2, valrec }, .value_size = sizeof(val),
	};
	struct plyc_entry ents[1] = { { &key, &val } };

	bt_dump("bt_records", &m, ents, 1, 0);
	bt_dump("bt_records_json", &m, ents, 1, 1);
}

/* ntop() values (PLYC_K_INET): u64 family, then the address bytes as in
 * memory; a family other than AF_INET/AF_INET6 prints nothing, as in bpftrace */
static void case_bt_inet(void)
{
	static const struct plyc_type t_inet = { PLYC_K_INET, 24, 0, 0, 0, NULL };
	struct { uint64_t af; uint8_t addr[16]; } v[] = {
		{ 2, { 127, 0, 0, 1 } },
		{ 10, { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 } },
		{ 10, { [10] = 0xff, [11] = 0xff, [12] = 10, [15] = 9 } },
		{ 7, { 1, 2, 3, 4 } },
	};
	FILE *fp = open_case("bt_inet");
	size_t i;

	for (i = 0; i < ARRAY_SIZE(v); i++) {
		plyc_bt_value(fp, &t_inet, &v[i], 8);
		fputc('|', fp);
		plyc_bt_json_value(fp, &t_inet, &v[i]);
		fputc('|', fp);
		plyc_json_value(fp, &t_inet, &v[i]);
		fputc('\n', fp);
	}
	fclose(fp);
}

/* hist(-1), hist(0), hist(1) twice, hist(2), hist(1500), hist(3000000),
 * hist(5000000000) */
static void case_bt_hist(void)
{
	struct plyc_map m = {
		.name = "@h", .agg = PLYC_A_HIST, .value = t_s64,
		.value_size = 8 * PLYC_HIST_BUCKETS + 8, .nbuckets = PLYC_HIST_BUCKETS,
	};
	uint64_t h[PLYC_HIST_BUCKETS + 1] = { 0 };
	struct plyc_entry e = { NULL, h };

	h[0] = 1;		/* -1 */
	h[1] = 1;		/* 0 */
	h[2] = 2;		/* 1 */
	h[3] = 1;		/* 2 */
	h[2 + 10] = 1;		/* 1500: [1K, 2K) */
	h[2 + 21] = 1;		/* 3000000: [2M, 4M) */
	h[2 + 32] = 1;		/* 5000000000: [4G, 8G) */
	bt_dump("bt_hist", &m, &e, 1, 0);
	bt_dump("bt_hist_json", &m, &e, 1, 1);
	memset(h, 0, sizeof(h));
	bt_dump("bt_hist_zeroed", &m, &e, 1, 0);
}

/* @g[k] = hist(): sorted by their total counts */
static void case_bt_hist_keys(void)
{
	struct plyc_map m = {
		.name = "@g", .agg = PLYC_A_HIST, .nkeys = 1, .keys = f_s32, .key_size = 4,
		.value = t_s64, .value_size = 8 * PLYC_HIST_BUCKETS + 8,
		.nbuckets = PLYC_HIST_BUCKETS,
	};
	uint64_t h[3][PLYC_HIST_BUCKETS + 1] = { { 0 } };
	int32_t keys[] = { 1, 2, 3 };
	struct plyc_entry ents[3];
	size_t i;

	h[0][3] = 1;			/* 3 */
	h[1][3] = 1;			/* 3 */
	h[1][2 + 6] = 2;		/* 100, twice */
	h[2][2] = 1;			/* 1, under the key 3 */
	h[2][2 + 40] = 2;		/* 2^40 */
	for (i = 0; i < 3; i++)
		ents[i] = (struct plyc_entry){ &keys[i], h[i] };
	bt_dump("bt_hist_keys", &m, ents, 3, 0);
	bt_dump("bt_hist_keys_json", &m, ents, 3, 1);
}

/* lhist(x, 0, 100, 10) of -5, 3, 35, 100, 250, and one in K */
static void case_bt_lhist(void)
{
	struct plyc_map m = {
		.name = "@l", .agg = PLYC_A_LQUANTIZE, .value = t_s64, .value_size = 8 * 12 + 8,
		.lq_min = 0, .lq_max = 100, .lq_step = 10, .nbuckets = 12,
	};
	uint64_t h[13] = { 0 };
	uint64_t j[6] = { 0 };
	struct plyc_entry e = { NULL, h };

	h[0] = 1;
	h[1] = 1;
	h[4] = 1;
	h[11] = 2;
	bt_dump("bt_lhist", &m, &e, 1, 0);
	bt_dump("bt_lhist_json", &m, &e, 1, 1);

	/* lhist(x, 0, 4096, 1024) of 5 and 3000; lhist(x, 0, 2M, 1M) of 2M */
	m.name = "@j";
	m.lq_max = 4096;
	m.lq_step = 1024;
	m.nbuckets = 6;
	m.value_size = 8 * 6 + 8;
	e.value = j;
	j[1] = 1;
	j[3] = 1;
	bt_dump("bt_lhist_k", &m, &e, 1, 0);
	m.name = "@k";
	m.lq_max = 2097152;
	m.lq_step = 1048576;
	m.nbuckets = 4;
	memset(j, 0, sizeof(j));
	j[1] = 1;
	j[3] = 1;
	bt_dump("bt_lhist_m", &m, &e, 1, 0);
}

/* @a[k] = avg(x), @s[k] = stats(x): by average */
static void case_bt_stats(void)
{
	struct plyc_map m = {
		.name = "@a", .agg = PLYC_A_AVG, .nkeys = 1, .keys = f_s32, .key_size = 4,
		.value = t_s64, .value_size = 16,
	};
	int32_t keys[] = { 1, 2, 3 };
	struct plyc_avg av[] = { { 10, 1 }, { 12, 3 }, { 11, 1 } };
	struct plyc_entry ents[3];
	size_t i;

	for (i = 0; i < 3; i++)
		ents[i] = (struct plyc_entry){ &keys[i], &av[i] };
	bt_dump("bt_avg", &m, ents, 3, 0);
	bt_dump("bt_avg_json", &m, ents, 3, 1);
	m.name = "@s";
	m.agg = PLYC_A_STATS;
	bt_dump("bt_stats", &m, ents, 3, 0);
	bt_dump("bt_stats_json", &m, ents, 3, 1);
	m.nkeys = 0;
	bt_dump("bt_stats_nokey", &m, ents, 1, 0);
	bt_dump("bt_stats_nokey_json", &m, ents, 1, 1);
}

/* Maps with nothing in them: a blank line (two for stats and avg), and a
 * key-less count() is 0; nothing in JSON. */
static void bt_empty(enum plyc_style style, const char *name, const char *json_name)
{
	static const enum plyc_agg aggs[] = { PLYC_A_NONE, PLYC_A_SUM, PLYC_A_AVG, PLYC_A_STATS,
					      PLYC_A_HIST, PLYC_A_COUNT };
	struct plyc_map m = {
		.name = "@e", .nkeys = 1, .keys = f_s32, .key_size = 4, .value = t_s64, .value_size = 8,
		.nbuckets = PLYC_HIST_BUCKETS,
	};
	FILE *fp = open_case(name), *js = open_case(json_name);
	size_t i;

	plyc_output_select(style, 0);
	for (i = 0; i < ARRAY_SIZE(aggs); i++) {
		m.agg = aggs[i];
		fprintf(fp, "%d:", (int)aggs[i]);
		plyc_map_print(fp, &m, NULL, 0);
	}
	m.nkeys = 0;
	m.agg = PLYC_A_COUNT;
	m.name = "@c";
	plyc_map_print(fp, &m, NULL, 0);
	plyc_rt.json = 1;
	plyc_map_print(js, &m, NULL, 0);
	m.agg = PLYC_A_SUM;
	plyc_map_print(js, &m, NULL, 0);
	plyc_rt.json = 0;
	plyc_output_select(PLYC_STYLE_PLY, 0);
	fclose(fp);
	fclose(js);
}

/* 0.17 prints them; 0.27 prints nothing of them */
static void case_bt_empty(void)
{
	bt_empty(PLYC_STYLE_BPFTRACE017, "bt_empty", "bt_empty_json");
	bt_empty(PLYC_STYLE_BPFTRACE, "bt_empty_027", "bt_empty_json_027");
}

/* 0.27's banner in JSON (its text goes to stderr) and exit banner */
static void case_bt_events_027(void)
{
	FILE *fp = open_case("bt_events_027");
	int json;

	plyc_output_select(PLYC_STYLE_BPFTRACE, 0);
	for (json = 1; json >= 0; json--) {
		plyc_rt.json = json;
		if (json)
			plyc_bt_attached(fp, 2);
		fputs("|", fp);
		plyc_bt_exit_banner(fp);
		fputs("|", fp);
	}
	plyc_output_select(PLYC_STYLE_PLY, 0);
	fclose(fp);
}

/* print(): values, tuples, buffers, pointers, in bpftrace's style (and a few in
 * ply's); printf in JSON; the banner */
static void case_bt_events(void)
{
	FILE *fp = open_case("bt_events");
	int64_t five = 5, neg = -2;
	char str[8] = "str", ab[8] = "ab";
	unsigned char buf[4] = { 'a', 'b', 1, '\n' };
	uint64_t ptr = 0x1234;
	const struct plyc_type t_buf = { PLYC_K_MEM, 4, 0, 0, 0, NULL }, t_ptr = { PLYC_K_HEX, 8, 0, 0, 0, NULL };
	const struct plyc_type *one[] = { &t_s64 }, *s[] = { &t_lit8 }, *b[] = { &t_buf },
		*p[] = { &t_ptr }, *tup[] = { &t_s64, &t_lit8, &t_s64 };
	const void *v5[] = { &five }, *vs[] = { str }, *vb[] = { buf }, *vp[] = { &ptr },
		*vt[] = { &five, ab, &neg };
	int json;

	plyc_output_select(PLYC_STYLE_BPFTRACE017, 0);
	for (json = 0; json < 2; json++) {
		plyc_rt.json = json;
		plyc_bt_attached(fp, 1);
		plyc_bt_attached(fp, 8);
		plyc_print(fp, one, v5, 1);
		plyc_print(fp, s, vs, 1);
		plyc_print(fp, tup, vt, 3);
		plyc_print(fp, b, vb, 1);
		plyc_print(fp, p, vp, 1);
		plyc_bt_exit_banner(fp);
	}
	plyc_bt_json_printf(fp, "a\tb \"3\"\n\x01\xc3\xa9", 11);
	/* the same print()s in ply's style */
	plyc_output_select(PLYC_STYLE_PLY, 0);
	for (json = 0; json < 2; json++) {
		plyc_rt.json = json;
		plyc_print(fp, tup, vt, 3);
		plyc_print(fp, one, v5, 1);
	}
	plyc_rt.json = 0;
	fclose(fp);
}

/* print(@map, top, div), time() and join() */
static void case_bt_top_div(void)
{
	struct plyc_map m = {
		.name = "@a", .agg = PLYC_A_COUNT, .nkeys = 1, .keys = f_s32,
		.key_size = 4, .value = t_u64, .value_size = 8,
	};
	struct plyc_map h = {
		.name = "@h", .agg = PLYC_A_HIST, .value = t_s64,
		.value_size = 8 * PLYC_HIST_BUCKETS + 8, .nbuckets = PLYC_HIST_BUCKETS,
	};
	FILE *fp = open_case("bt_top_div");
	int32_t keys[] = { 3, 1, 2 };
	uint64_t vals[] = { 3, 1, 2 }, hv[PLYC_HIST_BUCKETS + 1] = { 0 };
	int64_t pv[] = { 7, -9 };
	struct plyc_avg av[] = { { 10, 1 }, { 30, 1 } };
	struct plyc_entry ents[3], he = { NULL, hv };
	const char *const args[] = { "/bin/echo", "a", "b" };
	size_t i;

	plyc_output_select(PLYC_STYLE_BPFTRACE017, 0);
	for (i = 0; i < 3; i++)
		ents[i] = (struct plyc_entry){ &keys[i], &vals[i] };
	plyc_bt_map_print_top(fp, &m, ents, 3, 2, 1);
	plyc_bt_map_print_top(fp, &m, ents, 3, 0, 2);
	/* hist: counts divided, bars not */
	hv[3] = 3;
	hv[4] = 1;
	plyc_bt_map_print_top(fp, &h, &he, 1, 0, 2);
	/* avg: top and div; stats: neither */
	m.name = "@v";
	m.agg = PLYC_A_AVG;
	m.value = t_s64;
	for (i = 0; i < 2; i++)
		ents[i] = (struct plyc_entry){ &keys[i + 1], &av[i] };
	plyc_bt_map_print_top(fp, &m, ents, 2, 1, 3);
	m.name = "@s";
	m.agg = PLYC_A_STATS;
	plyc_bt_map_print_top(fp, &m, ents, 2, 1, 3);
	/* plain integers, signed */
	m.name = "@p";
	m.agg = PLYC_A_NONE;
	for (i = 0; i < 2; i++)
		ents[i] = (struct plyc_entry){ &keys[i + 1], &pv[i] };
	plyc_bt_map_print_top(fp, &m, ents, 2, 0, 2);
	plyc_rt.json = 1;
	plyc_bt_map_print_top(fp, &m, ents, 2, 0, 2);
	plyc_bt_map_print_top(fp, &h, &he, 1, 0, 2);
	plyc_bt_join(fp, args, 3, NULL);
	plyc_rt.json = 0;
	plyc_bt_join(fp, args, 3, NULL);
	plyc_bt_join(fp, args, 3, ",");
	setenv("TZ", "UTC", 1);
	tzset();
	plyc_bt_time(fp, "%Y|");
	plyc_rt.json = 1;
	plyc_bt_time(fp, "%Y\n");
	plyc_rt.json = 0;
	plyc_output_select(PLYC_STYLE_PLY, 0);
	fclose(fp);
}

/* tseries(): charts as bpftrace 0.27 draws them (its observed output), by
 * TAI intervals shown in UTC (37 s behind TAI) */
static void case_bt_tseries(void)
{
	/* @k[s32] = tseries(x, 1us, 4, "sum") */
	struct plyc_map m = {
		.name = "@k", .agg = PLYC_A_TSERIES, .nkeys = 1, .keys = f_s32, .key_size = 4,
		.value = t_s64, .value_size = 4 * sizeof(struct plyc_ts_slot),
		.ts_interval = 1000, .ts_intervals = 4, .ts_agg = PLYC_TS_SUM,
	};
	/* @u = tseries((uint64)x, 2s, 3) */
	struct plyc_map u = {
		.name = "@u", .agg = PLYC_A_TSERIES, .value = t_u64, .value_size = 3 * sizeof(struct plyc_ts_slot),
		.ts_interval = 2000000000, .ts_intervals = 3, .ts_agg = PLYC_TS_LAST,
	};
	const uint64_t e = 1700000000000000ULL;	/* 2023-11-14 22:13:20 TAI, in us */
	struct plyc_ts_slot k1[4] = { { 0 } }, k256[4] = { { 0 } }, kneg[4] = { { 0 } }, uv[3] = { { 0 } };
	struct plyc_ts_slot cpu[2][3], merged[3];
	int32_t keys[] = { 1, 256, -1 };
	struct plyc_entry ents[3] = { { &keys[0], k1 }, { &keys[1], k256 }, { &keys[2], kneg } }, ue = { NULL, uv };
	FILE *fp;
	int i;

	/* key 1: 5, -3, nothing, 10 (slot = interval % 4); 256: 7 in the last
	 * interval only; -1: an interval older than the last 4 */
	k1[e % 4] = (struct plyc_ts_slot){ 5, 0, e };
	k1[(e + 1) % 4] = (struct plyc_ts_slot){ -3, 0, e + 1 };
	k1[(e + 3) % 4] = (struct plyc_ts_slot){ 10, 0, e + 3 };
	k256[(e + 3) % 4] = (struct plyc_ts_slot){ 7, 0, e + 3 };
	kneg[(e - 10) % 4] = (struct plyc_ts_slot){ 1, 0, e - 10 };
	/* 0, the 64-bit maximum, 0 again, in 2 s intervals */
	for (i = 0; i < 3; i++)
		uv[(850000000 + i) % 3] = (struct plyc_ts_slot){ i == 1 ? -1 : 0, 1, 850000000 + i };
	setenv("TZ", "UTC", 1);
	tzset();
	plyc_rt.tai_to_real_ns = -37000000000LL;
	bt_dump("bt_tseries", &m, ents, 3, 0);
	bt_dump("bt_tseries_json", &m, ents, 3, 1);
	bt_dump("bt_tseries_u64", &u, &ue, 1, 0);
	bt_dump("bt_tseries_u64_json", &u, &ue, 1, 1);
	/* zero() left every interval 0: its last ones reach back before 1970 */
	memset(k1, 0, sizeof(k1));
	ents[0] = (struct plyc_entry){ &keys[0], k1 };
	bt_dump("bt_tseries_zeroed", &m, ents, 1, 0);
	bt_dump("bt_tseries_zeroed_json", &m, ents, 1, 1);

	/* two CPUs' values of one interval merge by the aggregator; an older
	 * interval in a slot gives way to the newer */
	fp = open_case("bt_tseries_merge");
	memset(cpu, 0, sizeof(cpu));
	cpu[0][0] = (struct plyc_ts_slot){ 4, 9, 30 };
	cpu[1][0] = (struct plyc_ts_slot){ -6, 2, 30 };
	cpu[0][1] = (struct plyc_ts_slot){ 1, 1, 28 };
	cpu[1][1] = (struct plyc_ts_slot){ 8, 1, 31 };
	for (i = PLYC_TS_LAST; i <= PLYC_TS_SUM; i++) {
		u.ts_agg = (uint32_t)i;
		u.value = t_s64;
		plyc_agg_ops(&u)->merge(&u, merged, (const char *)cpu, sizeof(cpu[0]), 2);
		fprintf(fp, "%d: %" PRId64 " %" PRIu64 " %" PRIu64 ", %" PRId64 " %" PRIu64 ", %" PRIu64 "\n", i,
			merged[0].value, merged[0].meta, merged[0].epoch, merged[1].value, merged[1].epoch,
			merged[2].epoch);
	}
	fclose(fp);
	plyc_rt.tai_to_real_ns = 0;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s OUTDIR\n", argv[0]);
		return 2;
	}
	outdir = argv[1];

	case_init();
	plyc_output_select(PLYC_STYLE_PLY, 0);
	plyc_rt.utf8 = 1;

	case_ints();
	case_strings();
	case_text_escapes();
	case_durations();
	case_walltime();
	case_hex();
	case_syms();
	case_count_int_keys();
	case_count_str_keys();
	case_sum_tuple_keys();
	case_min_max_avg();
	case_no_key();
	case_plain_map();
	case_quantize_unsigned();
	case_quantize_signed();
	case_quantize_time();
	case_lquantize();
	case_json_values();
	case_merge();
	case_bpf();
	case_verifier_hints();
	case_bt_buf();
	case_bt_count();
	case_bt_plain_keys();
	case_bt_tuples();
	case_bt_records();
	case_bt_hist();
	case_bt_hist_keys();
	case_bt_lhist();
	case_bt_stats();
	case_bt_empty();
	case_bt_events_027();
	case_bt_events();
	case_bt_top_div();
	case_bt_inet();
	case_bt_tseries();
	return 0;
}
