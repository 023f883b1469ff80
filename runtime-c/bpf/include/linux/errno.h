/* The errno values libbpf's BPF-side headers (usdt.bpf.h) use, so BPF
 * programs build without the build machine's <asm/errno.h>, which a
 * `-target bpf` compile cannot find (it lives in a multiarch directory).
 * These values are the same on every Linux architecture. */
#ifndef PLYC_LINUX_ERRNO_H
#define PLYC_LINUX_ERRNO_H

#define ENOENT 2
#define ESRCH 3
#define E2BIG 7
#define EINVAL 22

#endif
