/* iter: the program is linked as a BPF iterator, and the tracer runs the
 * iteration once, at attach (after BEGIN): it reads the iterator to its end,
 * and the run ends there (ends_run), as bpftrace's script does. What the
 * program prints goes through the events. It also writes one byte to the
 * iterator's text per object it is called for: attach reads that text
 * a few bytes at a time, so each read() runs the program for a few objects
 * only, and it drains the events between reads (the ring buffer would
 * fill over a machine's open files). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <linux/bpf.h>

#include "plyc_attach.h"
#include "plyc_output.h"
#include "providers/iter.h"

/* Objects a read() runs the program for, at most (a byte each). */
#define PER_READ 64

/* Whether this kernel lets a sleepable iterator over BTF function id call
 * bpf_d_path (5.12). A call with no path fails to load either way: the
 * log says whether the helper itself was refused. */
static int d_path_allowed(int id)
{
	static char log[4096];
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = BPF_TRACE_ITER,
		    .attach_btf_id = (__u32)id, .prog_flags = BPF_F_SLEEPABLE, .log_buf = log,
		    .log_size = sizeof(log), .log_level = 1);
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_1, .imm = 0 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_2, .imm = 0 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_3, .imm = 0 },
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_d_path },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int fd;

	log[0] = 0;
	fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, NULL, "GPL", insns, sizeof(insns) / sizeof(insns[0]), &opts);
	if (fd >= 0) {
		close(fd);
		return 1;
	}
	return log[0] && !strstr(log, "not allowed") && !strstr(log, "unknown func") &&
	       !strstr(log, "can be sleepable");
}

static int resolve(struct plyc_probe_ctx *c)
{
	const struct plyc_iter_data *d = c->pr->data;
	struct btf *btf = btf__load_vmlinux_btf();
	char func[64];
	int id;

	if (!btf)
		return plyc_probe_error(c->prog, c->pr, "iter probes need the kernel's BTF "
					"(/sys/kernel/btf/vmlinux, CONFIG_DEBUG_INFO_BTF), which this kernel lacks");
	snprintf(func, sizeof(func), "bpf_iter_%s", d->target);
	id = btf__find_by_name_kind(btf, func, BTF_KIND_FUNC);
	btf__free(btf);
	if (id < 0)
		return plyc_probe_error(c->prog, c->pr, "this kernel has no %s iterator (BPF iterators over %s "
					"came with Linux %s)", d->target, d->target, d->since);
	if (d->sleepable && !d_path_allowed(id))
		return plyc_probe_fatal(c->prog, c->pr, "path() in an iter probe needs a sleepable iterator "
					"(bpf_d_path is allowed there since Linux 5.12), which this kernel can't load");
	return 0;
}

#ifndef BPF_FS_MAGIC
#define BPF_FS_MAGIC 0xcafe4a11
#endif

/* iter:OBJECT:PIN: the link pinned at d->pin (a BPF file system's file),
 * where it stays after the tracer ends, as the user asked (bpftrace 0.27
 * pins it and ends the run too). The folder is opened and checked to be a
 * BPF file system first, with clear words where it is not, and the pin
 * must not exist (the kernel would refuse it: EEXIST). */
static int pin(struct plyc_probe_ctx *c, struct bpf_link *link)
{
	const struct plyc_iter_data *d = c->pr->data;
	const char *slash = strrchr(d->pin, '/');
	char dir[4096];
	struct statfs fs;
	struct stat st;
	int dfd;

	snprintf(dir, sizeof(dir), "%.*s", slash == d->pin ? 1 : (int)(slash - d->pin), d->pin);
	dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return plyc_probe_error(c->prog, c->pr, "cannot pin the iterator at %s: %s: %s", d->pin, dir,
					plyc_errstr(errno));
	/* f_type is an int on 32-bit targets, and the magic does not fit one */
	if (fstatfs(dfd, &fs) || (uint32_t)fs.f_type != (uint32_t)BPF_FS_MAGIC) {
		close(dfd);
		return plyc_probe_error(c->prog, c->pr, "cannot pin the iterator at %s: %s is not a BPF file "
					"system (mount one: mount -t bpf bpf %s)", d->pin, dir, dir);
	}
	if (fstatat(dfd, slash + 1, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		close(dfd);
		return plyc_probe_error(c->prog, c->pr, "cannot pin the iterator at %s: it exists (remove it, "
					"or name another pin)", d->pin);
	}
	close(dfd);
	if (bpf_obj_pin(bpf_link__fd(link), d->pin))
		return plyc_probe_error(c->prog, c->pr, "cannot pin the iterator at %s: %s", d->pin,
					plyc_errstr(errno));
	/* 0.27's words, on stdout */
	printf("Program pinned to %s\n", d->pin);
	if (fflush(stdout))
		return plyc_probe_error(c->prog, c->pr, "cannot write: %s", plyc_errstr(errno));
	return 0;
}

static int attach(struct plyc_probe_ctx *c, struct bpf_object *obj, struct bpf_program *bp,
		  struct plyc_links *links)
{
	const struct plyc_iter_data *d = c->pr->data;
	struct bpf_link *link = bpf_program__attach_iter(bp, NULL);
	char buf[PER_READ];
	ssize_t n;
	int fd;

	(void)obj;
	if (!link)
		return plyc_probe_error(c->prog, c->pr, "cannot link the iterator: %s", plyc_errstr(errno));
	if (plyc_add_link(links, link))
		return -1;
	if (d->pin)
		return pin(c, link);
	fd = bpf_iter_create(bpf_link__fd(link));
	if (fd < 0)
		return plyc_probe_error(c->prog, c->pr, "cannot start the iteration: %s", plyc_errstr(errno));
	while ((n = read(fd, buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR))
		plyc_output_drain();
	if (n < 0) {
		int err = errno;

		close(fd);
		return plyc_probe_error(c->prog, c->pr, "the iteration failed: %s", plyc_errstr(err));
	}
	close(fd);
	return 0;
}

static void list(const struct plyc_probe_ctx *c, FILE *fp)
{
	fprintf(fp, "iter:%s\n", ((const struct plyc_iter_data *)c->pr->data)->target);
}

const struct plyc_provider plyc_provider_iter = {
	.name = "iter", .resolve = resolve, .attach = attach, .ends_run = 1, .list = list,
};
