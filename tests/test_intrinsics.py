"""The IR is data (issue 21, point 2): intrinsics, variable sources and
aggregations are named in the core (plyc/ir/, plyc/aggregations.py) and
each has exactly one C emitter in plyc/codegen/; the front ends hold
typing rules and no C."""
import ast
import inspect
import re
from pathlib import Path

import pytest

from plyc import aggregations as AGG
from plyc import builtins as B
from plyc import providers
from plyc.codegen import aggregations as CAGG
from plyc.codegen import intrinsics as CI
from plyc.codegen import variables as CV
from plyc.frontends.bpftrace import builtins as BT
from plyc.frontends.bpftrace import events, fargs, stacks, values
from plyc import driver
from plyc.ir import intrinsics as I
from plyc.ir import nodes as ir
from plyc.ir import variables as V

PLYC = Path(__file__).resolve().parent.parent / "plyc"


def test_every_intrinsic_has_one_emitter_and_every_emitter_an_intrinsic():
    assert set(CI.EMIT) == set(I.ALL)
    assert len(I.ALL) == len(set(I.ALL)) == len(I.BY_NAME)
    assert all(callable(f) for f in CI.EMIT.values())


def test_intrinsics_are_data():
    for i in I.ALL:
        assert not any(callable(getattr(i, f)) for f in i.__dataclass_fields__), i
        assert i.doc


def test_every_variable_source_has_its_c_and_no_more():
    assert not set(CV.CODE) & set(CV.FILL)
    assert set(CV.CODE) | set(CV.FILL) == set(V.SOURCES)
    assert len({s.name for s in V.SOURCES}) == len(V.SOURCES)


def test_every_aggregation_has_its_update_and_no_more():
    assert set(CAGG.UPDATE) == set(AGG.AGGREGATIONS)


def _functions():
    return [*B.FUNCTIONS.values(), *BT.FUNCTIONS.values(), *stacks.FUNCTIONS.values(),
            *events.FUNCTIONS.values()]


def test_every_function_applies_an_intrinsic_or_is_an_event():
    for f in _functions():
        assert f.op is None or f.op in I.ALL, f.name
        assert not hasattr(f, "emit")
    # the output functions (and unwatch, an event the tracer acts on) are ir.EmitEvents: no intrinsic
    assert {f.name for f in _functions() if f.op is None} == \
        {"exit", "clear", "print", "printf", "cat", "system", "join", "unwatch"}


def _variables():
    out = list(B.VARIABLES) + list(BT.VARIABLES.values()) + [BT.CURTASK, values.USERNAME, stacks.IP, fargs.FUNC_IP]
    for p in providers.REGISTRY:
        out += p.variables
    return out


def test_every_variable_reads_a_core_source():
    for v in _variables():
        assert isinstance(v, V.Var) and v.reads in V.SOURCES, v.name
        assert isinstance(v.index, int)


def test_run_invariance_is_the_variables_data():
    """The variables whose value stays the same within a run (the key
    hoisting's), as cgen.py listed them by name before it was data."""
    names = {v.name for v in _variables() if v.invariant}
    assert names == {"comm", "execname", "pid", "kpid", "nspid", "nstid", "uid", "gid", "cpu", "stack", "caller", "retval"} | \
        {f"arg{i}" for i in range(12)}
    assert not any(v.invariant for v in _variables() if v.reads in (V.KTIME, V.RAND, V.CTX))


# C the BPF code generator writes: helper calls, plyc's runtime macros and
# helpers, the context's words, clang builtins called (bpftrace's own
# `__builtin_` names, `__builtin_comm`, `__builtin_config`, are no calls),
# casts to kernel integer types.
C_TEXT = re.compile(r"\bbpf_[a-z_0-9]+\(|\bplyc_[a-z_0-9]+\(|\bPLYC_[A-Z_0-9]+\(|\bctx\[|__builtin_[a-z_0-9]+\(|"
                    r"\(__[us](8|16|32|64)\)")
# Front-end modules with C text that is not emitted: argdist parses the
# user's C headers with pycparser, after a prelude of its own.
C_ALLOWED = {"argdist/ctypes.py"}


def c_literals(source: str) -> list:
    """The string literals (f-strings' parts too) that look like generated
    C, less docstrings."""
    tree = ast.parse(source)
    docs = {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.FunctionDef, ast.ClassDef)) and n.body
            and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    return [n.value for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs
            and C_TEXT.search(n.value)]


def emits(source: str) -> bool:
    """Whether a module writes lines of C through the generator (`g.line`)."""
    return any(isinstance(n, ast.Attribute) and n.attr == "line" and isinstance(n.value, ast.Name)
               and n.value.id == "g" for n in ast.walk(ast.parse(source)))


def test_the_c_finder_finds_c():
    src = inspect.getsource(CI)
    assert len(c_literals(src)) > 20 and emits(src)
    assert c_literals(inspect.getsource(CV))
    assert not c_literals('"""bpf_probe_read_kernel(p) in a docstring"""\nx = "a message"\n')


def test_no_front_end_has_c():
    front = PLYC / "frontends"
    found = {str(p.relative_to(front)): c_literals(p.read_text()) for p in sorted(front.rglob("*.py"))}
    bad = {name: lits for name, lits in found.items() if lits and name not in C_ALLOWED}
    assert bad == {}
    assert all(found[name] for name in C_ALLOWED), "an allowed exception no longer needed"
    assert [str(p) for p in front.rglob("*.py") if emits(p.read_text())] == []


def test_the_ir_and_the_core_tables_have_no_c():
    paths = sorted((PLYC / "ir").glob("*.py")) + [PLYC / "builtins.py", PLYC / "aggregations.py"]
    found = {str(p.relative_to(PLYC)): c_literals(p.read_text()) for p in paths}
    assert {k: v for k, v in found.items() if v} == {}
    assert len(found) > 8


# Each intrinsic a front end's rule gives, from a script (ply's for the
# functions bpftrace lacks), and a line of the C its emitter writes for it (the runtime cases in tests/runtime/ run most
# of them: bt-builtins, bt-ntop, bt-values, bt-events, ...).
SCRIPTS = [
    (I.STR, 'kprobe:do_sys_openat2 { print(str(arg1)); }', "plyc_read_str("),
    (I.MEM, 'kprobe:do_sys_openat2 { print(mem(arg1, 4)); }', "plyc_read_any("),
    (I.DYN, 'tracepoint:sched/sched_process_exec { print(dyn(data->filename)); }', "plyc_read_dataloc("),
    (I.UPTR, 'kprobe:do_sys_openat2 { print(str(uptr(arg1))); }', "bpf_probe_read_user_str("),
    (I.KSYM, 'kprobe:do_sys_openat2 { print(ksym(arg1)); }', None),
    (I.STRCMP, 'kprobe:do_sys_openat2 { print(strcmp(comm, "sh")); }', "plyc_strcmp("),
    (I.BSWAP, 'BEGIN { printf("%x\\n", bswap((uint32)0x12345678)); }', "__builtin_bswap32("),
    (I.KPTR, 'kprobe:do_sys_openat2 { printf("%d\\n", *(int32 *)kptr(arg1)); }', "bpf_probe_read_kernel("),
    (I.STRNCMP, 'kprobe:do_sys_openat2 { print(strncmp(comm, "sh", 2)); }', "plyc_strcmp("),
    (I.JOIN_READ, 'tracepoint:syscalls:sys_enter_execve { join(args->argv); }', "bpf_probe_read_user_str("),
    (I.NTOP, 'kprobe:tcp_connect { print(ntop(arg1)); }', "__builtin_memcpy("),
    (I.TP_NAME, 'tracepoint:syscalls:sys_enter_open* { print(probe); }', "plyc_tp_name(ctx, "),
    (I.DIV, 'kprobe:do_sys_openat2 { print(arg1 / arg2); }', " ? "),
    (I.MOD, 'kprobe:do_sys_openat2 { print(arg1 % arg2); }', " ? "),
    (I.SARG, 'kprobe:do_sys_openat2 { print(sarg0); }', "plyc_stack_word((struct pt_regs *)ctx, 0, 0)"),
    (I.OFFSETOF, 'BEGIN { print(offsetof(struct task_struct, pid)); }', "bpf_core_field_offset(struct task_struct, pid)"),
    (I.MACADDR, 'kprobe:do_sys_openat2 { print(macaddr(arg1)); }', "plyc_read_any("),
    (I.STRFTIME, 'kprobe:do_sys_openat2 { print(strftime("%H", nsecs)); }', None),
    (I.LEN, 'kprobe:do_sys_openat2 { @m[tid] = 1; print(len(@m)); }', "bpf_for_each_map_elem("),
    (I.MEMBER, 'struct s { int a; } kprobe:do_sys_openat2 { print(((struct s *)arg1)->a); }', "plyc_read_any("),
    (I.USTACK, 'kprobe:do_sys_openat2 { print(ustack); }', "plyc_ustackid(ctx, &plyc_stacks)"),
    (I.KSTACK, 'kprobe:do_sys_openat2 { print(kstack(3)); }', "plyc_stackid_in(ctx, &plyc_stacks_3, 0)"),
    (I.USYM, 'uprobe:/bin/sh:main { print(usym(reg("ip"))); }', "plyc_ns_pid_tgid() >> 32"),
    (I.SIGNAL, 'kprobe:do_sys_openat2 { signal("KILL"); }', "bpf_send_signal((__u32)("),
    (I.SIGNAL_THREAD, 'kprobe:do_sys_openat2 { signal_thread(9); }', "bpf_send_signal_thread((__u32)("),
    (I.MEMCMP, 'kprobe:do_sys_openat2 { print(memcmp(comm, "sh", arg2)); }', "plyc_memcmp("),
    (I.OVERRIDE, 'kprobe:do_sys_openat2 { override(1); }', "bpf_override_return((struct pt_regs *)ctx, "),
    (I.WRITE_USER, 'uprobe:/bin/sh:main { $s = "hi"; print(write_user(arg0, $s, arg1)); }',
     "bpf_probe_write_user((void *)(unsigned long)("),
    (I.BUF, 'kprobe:do_sys_openat2 { print(buf(arg1, 8)); }', "plyc_read_any("),
    (I.PATH, 'kprobe:vfs_open { print(path(arg0)); }', "bpf_d_path((struct path *)"),
    (I.STRLEN, 'kprobe:do_sys_openat2 { print(strlen(comm)); }', "plyc_strnlen("),
    (I.STRCONTAINS, 'kprobe:do_sys_openat2 { print(strcontains(comm, "sh")); }', "plyc_strcontains("),
    (I.STRSTR, 'kprobe:do_sys_openat2 { print(strstr(comm, "sh")); }', "plyc_strstr("),
    (I.STR_CONCAT, 'kprobe:do_sys_openat2 { print(str_concat(comm, "sh")); }', "plyc_str_concat("),
    (I.STR_CUT, 'kprobe:do_sys_openat2 { $n = 3; print(str(comm, $n)); }', "plyc_str_cut("),
    (I.BYTE_AT, 'BEGIN { $a = "foo"; $i = (uint64)1; print($a[$i]); }', " ? (__s8)"),
    (I.SOCKET_COOKIE, 'kfunc:tcp_close { print(socket_cookie(args.sk)); }', "bpf_get_socket_cookie("),
    (I.BUF_EQUAL, 'BEGIN { $a = buf("hi", 2); print($a != buf("bye", 3)); }', "plyc_buf_equal("),
    (I.CLOCK, 'kprobe:do_sys_openat2 { print(nsecs(tai)); }', "bpf_ktime_get_tai_ns()"),
    (I.USERMODE, 'profile:hz:99 { print(usermode); }', "->cs & 3) == 3)"),
    (I.STRERROR, 'kretprobe:do_sys_openat2 { print(strerror(retval)); }', "ctx"),
    (I.SIGNAL_NAME, 'kprobe:do_send_sig_info { print(signal_name(arg0)); }', "ctx"),
    (I.SYSCALL_NAME, 'tracepoint:raw_syscalls:sys_enter { print(syscall_name(args.id)); }', "ctx"),
    (I.ADDR, 'BEGIN { $x = 1; print(*&$x); }', "(unsigned long)PLYC_LOW_BYTES(&v_x, 8)"),
    (I.CGROUP_PATH, 'tracepoint:raw_syscalls:sys_enter { print(cgroup_path(cgroup, "unified")); }', None),
    (I.PERCPU_KADDR, 'tracepoint:raw_syscalls:sys_enter { print(*percpu_kaddr("process_counts", 0)); }',
     "bpf_per_cpu_ptr(&process_counts, (__u32)("),
    (I.COMM_OF, 'tracepoint:raw_syscalls:sys_enter { print(comm(1)); }', "bpf_task_from_pid((__s32)("),
    (I.C_CALL, f'import "{Path(__file__).resolve().parent / "helpers/add_one.bpf.c"}";\n'
               'BEGIN { print(bt_test_add_one(1)); }', "bt_test_add_one(((__s64)(__s32)1LL))"),
]


PLY_ONLY = (I.MEM, I.DYN, I.STRCMP)


def test_scripts_cover_every_intrinsic():
    assert {i for i, _, _ in SCRIPTS} == set(I.ALL)


def _calls(prog) -> set:
    out = set()

    def visit(n):
        if isinstance(n, ir.Call):
            out.add(n.func)
        if isinstance(n, list):
            for x in n:
                visit(x)
        elif isinstance(n, ir.Node):
            for f in n.__dataclass_fields__:
                if f != "span":
                    visit(getattr(n, f))
    for p in prog.probes:
        visit(p.body)
    return out


@pytest.mark.parametrize("op,script,c", SCRIPTS, ids=[i.name for i, _, _ in SCRIPTS])
def test_each_intrinsic_lowers_and_emits(op, script, c):
    if op in PLY_ONLY:
        compiled = driver.compile_source(script, "tool.ply", driver.Options())
    else:
        compiled = driver.compile_source(script, "tool.bt", driver.Options(frontend={"unsafe": True}))
    assert op in _calls(compiled.ir)
    if c is not None:
        assert c in compiled.generated.bpf_c
