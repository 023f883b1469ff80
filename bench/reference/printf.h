/* The record printf.bpf.c sends to printf.c. */
#ifndef REF_PRINTF_H
#define REF_PRINTF_H

struct event {
	__u32 pid;
	char comm[16];
};

#endif
