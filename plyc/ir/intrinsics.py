"""The core's intrinsics, as data: the functions an ir.Call applies
(Intrinsic). A front end's typing rule picks one; the code generator's
table gives its C (plyc/codegen/intrinsics.py, one emitter each: a test
holds the two tables to the same names). The names are the IR dump's
(`str(p)`, `_sarg(2)`); those starting with `_` are no script's function
but what a front end lowers a construct to."""
from __future__ import annotations

from dataclasses import dataclass


# Its C's byte temporary (plyc/ir/opt/temps.py places it; its size is
# the call's result type's): none (a scalar, or its argument's own array),
# made BEFORE its arguments are read (read into it), or AFTER them.
BEFORE, AFTER = "before", "after"
# How its C reads its arguments: each as an integer, each as a value (an
# integer, else an array), as strings compared (a constant as a literal
# of its own), or not at all (constants it prints). str() and buf() read
# theirs each its own way (temps.py knows them; buf's length first).
SCALARS, VALUES, STRINGS, NONE = "scalars", "values", "strings", "none"


@dataclass(frozen=True)
class Intrinsic:
    name: str
    doc: str
    temp: str = ""
    args: str = SCALARS


def _i(name: str, doc: str, temp: str = "", args: str = SCALARS) -> Intrinsic:
    return Intrinsic(name, doc, temp, args)


# Shared by every front end (plyc/builtins.py's functions).
STR = _i("str", "a string read from memory (kernel, else user), or a string resized", BEFORE)
MEM = _i("mem", "bytes read from a pointer, printed as hex", BEFORE)
DYN = _i("dyn", "a __data_loc tracepoint field's string", BEFORE)
UPTR = _i("uptr", "its argument, typed as a user pointer")
KSYM = _i("ksym", "its argument, typed as a kernel symbol's address")
STRCMP = _i("strcmp", "compare two strings (<0, 0, >0)", args=STRINGS)

# bpftrace's (plyc/frontends/bpftrace/ types them).
BSWAP = _i("bswap", "an integer's bytes reversed")
KPTR = _i("kptr", "its argument, typed as a kernel pointer")
STRNCMP = _i("strncmp", "0 when the first n bytes of two strings are equal, else 1 (n: a constant, the third argument)",
               args=VALUES)
JOIN_READ = _i("_join_read", "up to 16 strings of a NULL-terminated char ** array, 1024 bytes each", BEFORE)
NTOP = _i("ntop", "an address family and an IPv4/IPv6 address, as one inet value", AFTER, VALUES)
TP_NAME = _i("_tp_name", "the name of the tracepoint that fired (a glob's)", BEFORE, NONE)
DIV = _i("/", "division, 1 when the divisor is 0 (bpftrace)")
MOD = _i("%", "modulo, 1 when the divisor is 0 (bpftrace)")
SARG = _i("_sarg", "the Nth word of the probed function's stack arguments", args=NONE)
OFFSETOF = _i("_offsetof", "a member's offset in a kernel type (CO-RE): type and member path as strings",
              args=NONE)
MACADDR = _i("macaddr", "six bytes (at a pointer, or of an array) in a u64", args=VALUES)
STRFTIME = _i("strftime", "its argument, typed as a time the tracer formats")
LEN = _i("len", "how many entries a map (named by a string) holds", args=NONE)
MEMBER = _i("member", "an integer or pointer read from memory at an address (its type's size)")
USTACK = _i("ustack", "the user stack's id (frame limit: the argument)", args=NONE)
KSTACK = _i("kstack", "the kernel stack's id (frame limit: the argument)", args=NONE)
USYM = _i("usym", "a user address with the current pid (the tracer names it)", AFTER)
SIGNAL = _i("signal", "send a signal to the current task")
SIGNAL_THREAD = _i("signal_thread", "send a signal to the current thread")
MEMCMP = _i("memcmp", "two values' first n bytes compared: the first differing bytes' difference, as "
                      "signed chars, else 0 (n: the third argument)", args=VALUES)
OVERRIDE = _i("override", "return early from the probed kernel function with a value")
WRITE_USER = _i("write_user", "write a value's first n bytes to a user address (bpf_probe_write_user): 1 when "
                              "written, else 0 (n: the third argument)", args=VALUES)
BUF = _i("buf", "bytes from a pointer or array, with their length", BEFORE, VALUES)
PATH = _i("path", "a struct path's full path (bpf_d_path, fentry only)", BEFORE)
STRLEN = _i("strlen", "a string's length: its bytes before the NUL", args=STRINGS)
STRCONTAINS = _i("strcontains", "1 if the second string is in the first", args=STRINGS)
STRSTR = _i("strstr", "the index of the second string in the first, negative when it is not there",
            args=STRINGS)
STR_CONCAT = _i("str_concat", "two strings, one after the other", AFTER, STRINGS)
STR_CUT = _i("_str_cut", "a string cut to a size known at run time (its NUL counted)", AFTER, VALUES)
CLOCK = _i("_clock", "a clock's nanoseconds (its name a string: monotonic, boot, tai)", args=NONE)
STRERROR = _i("strerror", "its argument, typed as an errno the tracer prints as text")
SIGNAL_NAME = _i("signal_name", "its argument, typed as a signal number the tracer prints as text")
SYSCALL_NAME = _i("syscall_name", "its argument, typed as a syscall number the tracer prints as its name")
ADDR = _i("_addr", "the address of a scratch local on the BPF stack (bpftrace's &$x)", args=NONE)
USERMODE = _i("usermode", "1 if the probed context (pt_regs) was in user mode (x86_64)")
CGROUP_PATH = _i("cgroup_path", "its argument, typed as a cgroup id the tracer prints as its paths")
PERCPU_KADDR = _i("percpu_kaddr", "a kernel per-CPU variable's address (its name a string) on this CPU or on a CPU")
BYTE_AT = _i("_byte_at", "a string's byte at an index known at run time, 0 past its end", args=VALUES)
BUF_EQUAL = _i("_buf_equal", "1 when two buffers hold the same length and bytes", args=VALUES)
SOCKET_COOKIE = _i("socket_cookie", "a socket's cookie (bpf_get_socket_cookie of a function's struct sock *)")
C_CALL = _i("_c_call", "a function of a C file the script imports (its name, then its arguments)")
COMM_OF = _i("_comm_of", "the comm of the task of a pid (the bpf_task_from_pid kfunc), N/A for none", AFTER)

# Sizes both sides need: join()'s strings (bpftrace 0.17's limits: 16
# arguments of up to 1024 bytes), a tracepoint's name (runtime-c/plyc_tp.h's
# PLYC_TP_NAME_SIZE: room for a uprobe's path), the full stack map's frames
# (PLYC_STACK_DEPTH).
JOIN_ARGS, JOIN_SIZE = 16, 1024
TP_NAME_SIZE = 128
STACK_DEPTH = 127
# _clock's clocks: the BPF helper reading each, and the Linux it came in.
# sw_tai: the boot clock plus an offset to TAI the tracer measures at start.
CLOCKS = {"monotonic": ("bpf_ktime_get_ns", "4.1"), "boot": ("bpf_ktime_get_boot_ns", "5.8"),
          "tai": ("bpf_ktime_get_tai_ns", "6.1"), "sw_tai": ("bpf_ktime_get_boot_ns", "5.8")}

ALL = (STR, MEM, DYN, UPTR, KSYM, STRCMP, BSWAP, KPTR, STRNCMP, JOIN_READ, NTOP, TP_NAME, DIV, MOD, SARG,
       OFFSETOF, MACADDR, STRFTIME, LEN, MEMBER, USTACK, KSTACK, USYM, SIGNAL, SIGNAL_THREAD, MEMCMP, OVERRIDE, WRITE_USER, BUF, PATH,
       STRLEN, STRCONTAINS, STRSTR, STR_CONCAT, STR_CUT, CLOCK, USERMODE, STRERROR, SIGNAL_NAME, SYSCALL_NAME, ADDR,
       COMM_OF, CGROUP_PATH, PERCPU_KADDR, BYTE_AT, BUF_EQUAL, SOCKET_COOKIE, C_CALL)
BY_NAME = {i.name: i for i in ALL}
