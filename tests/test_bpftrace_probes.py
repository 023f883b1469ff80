"""bpftrace's kfunc/kretfunc (fentry/fexit), rawtracepoint and module
kprobes, lowered to the IR: arguments typed from the build machine's BTF
prototypes, wildcards whose matches must agree, `func` in return and
kfunc wildcards, and what is refused, with the reason. On a kernel:
tests/runtime/bt-rawtracepoint.test (this machine), tests/vm/cases/bt-kfunc*.test
(the 5.10, 6.1 and 6.12 guests: this kernel attaches no trampolines)."""

import pytest

from plyc import driver
from plyc.ir.dump import dump


from btlower import err, lower


def probe_lines(src: str) -> list:
    return [line for line in dump(lower(src)).splitlines() if line.startswith(("probe", "  "))]


def test_kfunc_arguments_and_retval_typed_from_the_prototype():
    """args.count is vfs_read's third word, args->file a struct file * read
    through BTF; retval the word after the four arguments, a ssize_t."""
    prog = lower('kfunc:vfs_read { @[probe, func] = sum(args.count); printf("%d\\n", args->file->f_flags); }\n'
                 'kretfunc:vfs_read { @r = hist(retval); }')
    assert [line for line in dump(prog).splitlines() if line.startswith(("probe", "  "))] == [
        "probe 0 kfunc:vfs_read -> kfunc vfs_read line 1",
        '  @["fentry:vmlinux:vfs_read":char[24], "vfs_read":char[16]] <- sum(args_count:u64)  @1',
        "  emit printf 1 (args_file:struct file *->f_flags:u32)  @1",
        "probe 1 kretfunc:vfs_read -> kretfunc vfs_read line 2",
        "  @r[] <- hist(retval:s64)  @2"]
    assert prog.probes[0].target.extra["args"] == {"count": 2, "file": 0}
    assert prog.probes[1].target.extra["retval"] == 4


def test_fentry_and_fexit_spellings():
    assert probe_lines("fentry:vfs_read { @ = count(); } fexit:vfs_read { @x = count(); }") == [
        "probe 0 kfunc:vfs_read -> kfunc vfs_read line 1", "  @[] <- count()  @1",
        "probe 1 kretfunc:vfs_read -> kretfunc vfs_read line 1", "  @x[] <- count()  @1"]


def test_func_in_return_and_kfunc_wildcards_is_the_function_that_fired():
    """bpf_get_func_ip(): the traced function's address, printed as its symbol."""
    for spec in ("kfunc:vfs_rea*", "kretfunc:vfs_rea*", "kretprobe:vfs_rea*"):
        assert "  @[func:u64 (sym)] <- count()  @1" in probe_lines(f"{spec} {{ @[func] = count(); }}")
    # an exact name sharing the body with such a wildcard: the same, so func has one type
    assert probe_lines("kretprobe:vfs_rea*, kretprobe:vfs_write { @[func] = count(); }")[3] == \
        "  @[func:u64 (sym)] <- count()  @1"


def test_wildcard_matches_must_agree():
    assert err("fentry:vfs_rea* { @ = sum(args.count); }") == (
        "tool.bt:1:27: error: function vfs_readlink (a match of vfs_rea*) has no argument 'count'\n"
        "fentry:vfs_rea* { @ = sum(args.count); }\n"
        "                          ^~~~~~~~~~\n"
        "note: its arguments are: dentry, buffer, buflen")
    assert err("fexit:vfs_rea* { @ = sum(retval); }") == (
        "tool.bt:1:26: error: retval differs among the functions vfs_rea* matches: vfs_read takes 4 "
        "arguments and returns ssize_t, vfs_readlink 3 and int; a wildcard's program reads one place\n"
        "fexit:vfs_rea* { @ = sum(retval); }\n"
        "                         ^~~~~~")
    # vfs_read and vfs_write agree on args.count (ctx[2], size_t)
    assert "sum(args_count:u64)" in dump(lower("kfunc:vfs_[rw][er]i*e, kfunc:vfs_read { @ = sum(args.count); }"))


def test_kfunc_errors():
    assert err("kfunc:vfs_read { @ = sum(args.nosuch); }") == (
        "tool.bt:1:26: error: function vfs_read has no argument 'nosuch'\n"
        "kfunc:vfs_read { @ = sum(args.nosuch); }\n"
        "                         ^~~~~~~~~~~\n"
        "note: its arguments are: file, buf, count, pos")
    assert err("kretfunc:nosuch_fn { @ = sum(retval); }") == (
        "tool.bt:1:1: error: the build machine's kernel BTF has no function nosuch_fn\n"
        "kretfunc:nosuch_fn { @ = sum(retval); }\n^~~~~~~~~~~~~~~~~~")
    assert err("kfunc:kvm:kvm_vcpu_ioctl { @ = sum(args.arg); }") == (
        "tool.bt:1:36: error: the arguments of kvm:kvm_vcpu_ioctl are typed from the module's BTF: module "
        "kvm's BTF is not on the build machine (/sys/kernel/btf/kvm: the module is not loaded here)\n"
        "kfunc:kvm:kvm_vcpu_ioctl { @ = sum(args.arg); }\n"
        "                                   ^~~~~~~~")
    assert err("kfunc:bpf:1:f { }") == (
        "tool.bt:1:1: error: kfunc probes on BPF programs (bpf:1:f) are not supported by plyc yet\n"
        "kfunc:bpf:1:f { }\n^~~~~~~~~~~~~")


def test_kfunc_in_a_module_without_arguments():
    prog = lower("kfunc:kvm:kvm_vcpu_ioctl { @[probe] = count(); }")
    assert prog.probes[0].target.extra["module"] == "kvm"
    assert prog.probes[0].target.target == "kvm_vcpu_ioctl"


def test_rawtracepoint_words_and_typed_arguments():
    """arg0.. are words; args.prev is typed from btf_trace_sched_switch, named
    by __bpf_trace_sched_switch; sched_wakeup's names are its class's."""
    assert probe_lines("rawtracepoint:sched_switch { @[args.prev->pid, arg0] = count(); }") == [
        "probe 0 rawtracepoint:sched_switch -> rawtracepoint sched_switch line 1 reads=arg0",
        "  @[args_prev:struct task_struct *->pid:s32, arg0:u64] <- count()  @1"]
    assert probe_lines("rt:vmlinux:sched_wakeup { @[args.p->pid] = count(); }")[1] == \
        "  @[args_p:struct task_struct *->pid:s32] <- count()  @1"
    assert err("rawtracepoint:sched_switch { @ = sum(args.x); }") == (
        "tool.bt:1:38: error: rawtracepoint:sched_switch has no argument 'x'\n"
        "rawtracepoint:sched_switch { @ = sum(args.x); }\n"
        "                                     ^~~~~~\n"
        "note: its arguments are: preempt, prev, next, prev_state")
    assert err("rt:sched_* { }") == (
        "tool.bt:1:1: error: rawtracepoint wildcards are not supported by plyc yet\n"
        "rt:sched_* { }\n^~~~~~~~~~")


def test_kprobe_in_a_module():
    """kprobe:MODULE:f is resolved in that module's symbols on the device;
    func is the function, probe as written; no fentry twin (vmlinux's BTF)."""
    prog = lower("kprobe:kvm:kvm_vcpu_ioctl, kretprobe:kvm:kvm_vcpu_ioctl { @[func, probe] = count(); }")
    assert [p.target.extra["module"] for p in prog.probes] == ["kvm", "kvm"]
    assert [line for line in dump(prog).splitlines() if line.startswith("  ")] == [
        '  @["kvm_vcpu_ioctl":char[16], "kprobe:kvm:kvm_vcpu_ioctl":char[32]] <- count()  @1',
        '  @["kvm_vcpu_ioctl":char[16], "kretprobe:kvm:kvm_vcpu_ioctl":char[32]] <- count()  @1']
    assert lower("kprobe:vmlinux:vfs_read { }").probes[0].target.extra["module"] == ""


def test_probe_in_kprobe_wildcards_is_the_function_that_fired():
    """Each matched function is attached with a BPF cookie under which the
    tracer puts its name (the tracepoint wildcards' table); an exact kprobe
    sharing the body keeps its own name, a constant."""
    prog = lower("kprobe:vfs_rea*, kretprobe:vfs_rea*, kprobe:vfs_write { @[probe] = count(); }")
    assert [line for line in dump(prog).splitlines() if line.startswith("  ")] == [
        "  @[_tp_name():char[128]] <- count()  @1", "  @[_tp_name():char[128]] <- count()  @1",
        '  @["kprobe:vfs_write":char[24]] <- count()  @1']
    assert [p.bpf_defines for p in prog.probes] == [{"PLYC_TP_NAMES"}, {"PLYC_TP_NAMES"}, set()]


def test_probe_in_kfunc_wildcards_is_the_function_that_fired():
    """A kfunc or kretfunc glob: each clone's link carries a BPF cookie
    naming its function in the same table (Linux 6.0); an exact kfunc
    sharing the body is 0.27's name for it, a constant."""
    src = "kfunc:vfs_rea*, kretfunc:vfs_rea*, fentry:vfs_write { @[probe] = count(); }"
    prog = lower(src)
    assert [line for line in dump(prog).splitlines() if line.startswith("  ")] == [
        "  @[_tp_name():char[128]] <- count()  @1", "  @[_tp_name():char[128]] <- count()  @1",
        '  @["fentry:vmlinux:vfs_write":char[32]] <- count()  @1']
    assert [p.bpf_defines for p in prog.probes] == [{"PLYC_TP_NAMES"}, {"PLYC_TP_NAMES"}, set()]
    loader = driver.compile_source(src, "tool.bt", driver.Options()).generated.loader_c
    assert [line.strip() for line in loader.splitlines() if line.strip().startswith(".names")] == [
        ".names = 1,", ".names = 1,", ".names = 0,"]


def test_kprobe_alternatives_are_a_group():
    """dcsnoop's `kprobe:lookup_fast, kprobe:lookup_fast.constprop.*`,
    biolatency's `kprobe:blk_account_io_start, kprobe:__blk_account_io_start`:
    the attach points of one probe are a group (its number, from 1); the
    tracer leaves out those the device lacks while another of the group is
    there (tests/vm/cases/bt-dcsnoop.test, bt-biolatency.test). A probe of
    one attach point is no group: it must be there."""
    src = ("kprobe:vfs_rea* { }\n"
           "kprobe:lookup_fast, kprobe:lookup_fast.constprop.* { @ = count(); }\n")
    assert [p.target.extra.get("group", 0) for p in lower(src).probes] == [0, 2, 2]
    loader = driver.compile_source(src, "tool.bt", driver.Options()).generated.loader_c
    lines = [line.strip() for line in loader.splitlines() if line.strip().startswith((".target", ".group"))]
    assert lines == ['.target = "vfs_rea*",', ".group = 0,",
                     '.target = "lookup_fast",', ".group = 2,",
                     '.target = "lookup_fast.constprop.*",', ".group = 2,"]


def test_uprobe_wildcards_name_the_function_that_fired():
    """A uprobe glob: `probe` by the BPF cookie each matched function is
    attached with (the kprobe wildcards' table), `func` the symbol of the
    address that fired, in an exact uprobe sharing the body too; a
    uretprobe's `func` is the symbol it returns into, glob or not."""
    prog = lower("uprobe:/bin/sh:read*, uprobe:/bin/sh:main, uretprobe:/bin/sh:read* "
                 "{ @[probe, func] = count(); }")
    assert [line for line in dump(prog).splitlines() if line.startswith("  ")] == [
        "  @[_tp_name():char[128], usym(_ip:u64):usym] <- count()  @1",
        '  @["uprobe:/bin/sh:main":char[24], usym(_ip:u64):usym] <- count()  @1',
        "  @[_tp_name():char[128], usym(_ip:u64):usym] <- count()  @1"]
    assert [p.bpf_defines for p in prog.probes] == [{"PLYC_TP_NAMES"}, set(), {"PLYC_TP_NAMES"}]
    assert [(p.target.target, p.target.glob) for p in prog.probes] == [
        ("read*", True), ("main", False), ("read*", True)]
    assert lower("uprobe:/bin/sh:re?d[a-z]* { }").probes[0].target.glob


@pytest.mark.parametrize("spec, message", [
    ("uprobe:/bin/sh:read*+4", "'read*+4' is not a function name glob"),
    ("uprobe:/bin/sh:read*@GLIBC_2.2.5", "'read*@GLIBC_2.2.5' is not a function name glob"),
    ("uretprobe:/bin/sh:read*+0x10", "'read*+0x10' is not a function name glob"),
])
def test_uprobe_glob_errors(spec, message):
    text = err(spec + " { }")
    assert message in text and "a glob takes no +offset or @VERSION" in text


def test_iter_ctx_is_the_iterators_context_typed_from_btf():
    """iter:OBJECT's `ctx` is `struct bpf_iter__OBJECT *`, its members read
    through BTF; `it` is the short name. On a kernel: tests/runtime/bt-iter-*.test."""
    assert probe_lines('iter:task { printf("%s:%d\\n", ctx->task->comm, ctx->task->pid); }\n') == [
        "probe 0 iter:task -> iter task line 1",
        "  emit printf 1 (ctx:struct bpf_iter__task *->task:struct task_struct *->comm:char[16], "
        "ctx:struct bpf_iter__task *->task:struct task_struct *->pid:s32)  @1"]
    assert probe_lines("it:task_file { @[ctx->fd] = count(); }")[0] == "probe 0 iter:task_file -> iter task_file line 1"
    assert probe_lines("iter:task_vma { @ = sum(ctx->vma->vm_end - ctx->vma->vm_start); }")[1].startswith(
        "  @[] <- sum((cast(ctx:struct bpf_iter__task_vma *->vma:struct vm_area_struct *->vm_end:")


def test_iter_path_is_a_sleepable_iterator():
    """path() in an iterator: bpf_d_path is allowed in sleepable iterators
    (Linux 5.12), so the probe becomes one (iter.s/); the argument is walked
    from ctx by pointers (codegen). On a kernel: tests/runtime/bt-iter-path.test."""
    prog = lower('iter:task_file { printf("%s\\n", path(ctx->file->f_path)); }\n')
    assert prog.probes[0].sleepable
    assert not lower('iter:task_file { printf("%d\\n", ctx->fd); }\n').probes[0].sleepable
    # path(p, size) (current bpftrace): a string of that size (256 without)
    assert "printf 1 (path(ctx:struct bpf_iter__task_file *->file:struct file *->f_path:struct):char[64])" in \
        probe_lines('iter:task_file { printf("%s\\n", path(ctx->file->f_path, 64)); }\n')[1]
    assert err('iter:task_file { printf("%s\\n", path(ctx->file->f_path, 0)); }').startswith(
        "tool.bt:1:57: error: path()'s size must be a constant from 1 to 4096")
    assert probe_lines('iter:task_vma { @[path(ctx->vma->vm_file->f_path)] = count(); }\n')[1].startswith(
        "  @[path(ctx:struct bpf_iter__task_vma *->vma:struct vm_area_struct *->vm_file:struct file *->f_path")


@pytest.mark.parametrize("src,message", [
    ("iter:tcp { }", "tool.bt:1:1: error: unknown iterator 'tcp'\niter:tcp { }\n^~~~~~~~\n"
     "note: plyc's iterators are: task, task_file, task_vma"),
    ("iter:task:/sys/fs/bpf/ { }", "tool.bt:1:1: error: '/sys/fs/bpf/' names no file to pin the iterator at"),
    ("iter:task { }\niter:task_file { }", "tool.bt:2:1: error: iter:task_file beside iter:task: a script with "
     "an iter probe has no other probe than BEGIN and END"),
    ("iter:task { }\ntracepoint:sched:sched_switch { }", "tool.bt:2:1: error: tracepoint:sched:sched_switch "
     "beside iter:task"),
    ("iter:task_file { $f = ctx->file; printf(\"%s\\n\", path($f->f_path)); }", "tool.bt:1:54: error: path() in "
     "an iter probe takes a struct path reached from ctx by members (ctx->file->f_path)"),
    ("BEGIN { printf(\"%p\\n\", ctx); }", "tool.bt:1:24: error: The ctx builtin can not be used with 'begin' probes"),
])
def test_iter_errors(src, message):
    assert err(src).startswith(message)


def made_up_event_btf(tmp_path, event="plyc_made_up"):
    """A kernel BTF whose only tracepoint record is struct
    trace_event_raw_EVENT { struct trace_entry ent; u32 __data_loc_name;
    int value; char *ptr; }, an event no build machine has (the encoder's
    integers are all signed)."""
    from test_foreign_names import encode_btf
    path = tmp_path / "k.btf"
    path.write_bytes(encode_btf([
        ("int", b"unsigned short", 2),                                                  # 1
        ("int", b"unsigned char", 1),                                                   # 2
        ("int", b"int", 4),                                                             # 3
        ("int", b"unsigned int", 4),                                                    # 4
        ("struct", b"trace_entry", 8, [(b"type", 1, 0), (b"flags", 2, 16), (b"preempt_count", 2, 24),
                                       (b"pid", 3, 32)]),                               # 5
        ("int", b"char", 1),                                                            # 6
        ("ptr", 6),                                                                     # 7
        ("struct", b"trace_event_raw_" + event.encode(), 32,
         [(b"ent", 5, 0), (b"__data_loc_name", 4, 64), (b"value", 3, 96), (b"ptr", 7, 128)]),  # 8
    ]))
    return str(path)


def test_a_tracepoint_the_build_machine_lacks_is_typed_from_btf(tmp_path):
    """With --btf FILE, a tracepoint the build machine's tracefs lacks takes
    its fields from FILE's struct trace_event_raw_EVENT: names, sizes and
    types (a __data_loc_NAME member is the __data_loc field NAME; ent the
    common_* fields); the tracer reads the offsets from the device's format
    file, as for every tracepoint. In a guest: tests/vm/cases/bt-tracepoint-btf.test."""
    btf = made_up_event_btf(tmp_path)
    prog = lower('tracepoint:plyc:plyc_made_up { printf("%s %d %d %p\\n", str(args->name), args.value, '
                 'args->common_pid, args->ptr); }\n', btf=btf)
    fields = prog.probes[0].tp_fields
    assert [(f.name, f.ctype, f.size, f.signed, f.type.kind) for f in fields.values()] == [
        ("name", "__data_loc char[]", 4, True, "dataloc"), ("value", "int", 4, True, "int"),
        ("common_pid", "int", 4, True, "int"), ("ptr", "char *", 8, False, "int")]
    assert "no field 'nope'" in err("tracepoint:plyc:plyc_made_up { @ = args->nope; }", btf=btf)
    # without --btf, or an event FILE has no struct of: the build machine's error
    assert "no tracepoint plyc:plyc_made_up on the build machine\n" in err(
        "tracepoint:plyc:plyc_made_up { @ = args->value; }")
    assert ("no tracepoint plyc:other on the build machine, nor a struct trace_event_raw_other in "
            f"{btf}, nor one of a class of events") in err("tracepoint:plyc:other { @ = args->value; }", btf=btf)


def _module_with_functions(folder, base):
    """A module's split BTF over `base` (beside a `vmlinux` in folder):
    struct plyc_mod_thing { int x; }, int plyc_mod_read(int count, struct
    plyc_mod_thing *t) and long plyc_mod_write(int count, long t)."""
    import struct as S
    from plyc import btf as B
    first, sb = len(base.types), len(base.strings)
    names = ["plyc_mod_thing", "x", "count", "t", "plyc_mod_read", "plyc_mod_write"]
    strs = b"\0" + b"".join(n.encode() + b"\0" for n in names)
    off = lambda n: sb + strs.index(b"\0" + n.encode() + b"\0") + 1  # noqa: E731
    i32, i64 = base.find(B.INT, "int"), base.find(B.INT, "long int")
    thing, ptr, rproto, rfunc, wproto = first, first + 1, first + 2, first + 3, first + 4
    types = (S.pack("<III", off("plyc_mod_thing"), (B.STRUCT << 24) | 1, 4) + S.pack("<III", off("x"), i32, 0)
             + S.pack("<III", 0, B.PTR << 24, thing)
             + S.pack("<III", 0, (B.FUNC_PROTO << 24) | 2, i32)
             + S.pack("<II", off("count"), i32) + S.pack("<II", off("t"), ptr)
             + S.pack("<III", off("plyc_mod_read"), (B.FUNC << 24) | 1, rproto)
             + S.pack("<III", 0, (B.FUNC_PROTO << 24) | 2, i64)
             + S.pack("<II", off("count"), i32) + S.pack("<II", off("t"), i64)
             + S.pack("<III", off("plyc_mod_write"), (B.FUNC << 24) | 1, wproto))
    assert rfunc == first + 3
    hdr = S.pack("<HBBIIIII", 0xEB9F, 1, 0, 24, 0, len(types), len(types), len(strs))
    (folder / "plyc_mod").write_bytes(hdr + types + strs)


def test_kfunc_arguments_of_a_module_function_and_a_module_wildcard(tmp_path, monkeypatch):
    """kfunc:MODULE:f's args and retval, and a wildcard in a module's
    functions, typed from the module's split BTF on the build machine
    (/sys/kernel/btf/MODULE: a made-up one here, beside the kernel's), as
    bpftrace reads them; the module's struct types through it. The tracer
    loads each match for the device module's BTF (runtime-c/providers/kfunc.c;
    lab: tests/vm/cases/bt-kfunc-module.test)."""
    import os
    from plyc import btf as B
    if not os.path.exists("/sys/kernel/btf/vmlinux"):
        pytest.skip("this kernel has no BTF (/sys/kernel/btf/vmlinux): no base for a module's")
    (tmp_path / "vmlinux").symlink_to("/sys/kernel/btf/vmlinux")
    _module_with_functions(tmp_path, B.load("/sys/kernel/btf/vmlinux"))
    monkeypatch.setenv("PLYC_BTF", str(tmp_path / "vmlinux"))
    lines = probe_lines("kfunc:plyc_mod:plyc_mod_read { @[args.count] = sum(args.t->x); }\n"
                        "kretfunc:plyc_mod:plyc_mod_read { @r = sum(retval); }\n"
                        "kfunc:plyc_mod:plyc_mod_* { @c = sum(args.count); }\n")
    assert "@[args_count:s32] <- sum(args_t:struct plyc_mod_thing *->x:s32)" in "\n".join(lines)
    assert "@r[] <- sum(retval:s32)" in "\n".join(lines)
    assert "@c[] <- sum(args_count:s32)" in "\n".join(lines)
    prog = lower("kfunc:plyc_mod:plyc_mod_* { @c = sum(args.count); }")
    assert [f for f, _ in prog.probes[0].target.extra["matches"]] == ["plyc_mod_read", "plyc_mod_write"]
    assert err("kfunc:plyc_mod:plyc_mod_* { @ = sum(args.t); }").startswith(
        "tool.bt:1:37: error: argument 't' differs among the functions plyc_mod_* matches: struct "
        "plyc_mod_thing * (argument 1) in plyc_mod_read, long int (argument 1) in plyc_mod_write")
    assert err("kfunc:plyc_mod:nosuch_* { @ = sum(args.count); }").startswith(
        "tool.bt:1:1: error: no function in the build machine's module plyc_mod's BTF matches nosuch_*")
    # vmlinux's own functions are not the module's
    assert err("kfunc:plyc_mod:vfs_read { @ = sum(args.count); }").startswith(
        "tool.bt:1:1: error: the build machine's module plyc_mod's BTF has no function vfs_read")


@pytest.mark.parametrize("group,event", [
    ("sched", "sched_switch"), ("sched", "sched_process_exec"), ("timer", "hrtimer_start"),
    ("irq", "irq_handler_entry"), ("kmem", "kmalloc"),
    ("writeback", "writeback_dirty_folio"),     # an event of a class (writeback_folio_template)
])
def test_tracepoint_fields_from_btf_are_the_format_files(group, event):
    """What --btf types a tracepoint the build machine lacks with (tp_btf.py)
    is what this machine's format file says of its own events: the same
    fields, sizes and types, common_* and __data_loc ones included."""
    from plyc import btf as B, tp_btf, tracefs
    fmt = tracefs.event_fields(group, event)
    got = tp_btf.event_fields(B.load("/sys/kernel/btf/vmlinux"), "vmlinux", group, event)
    assert [(f.name, f.size, f.type) for f in got.values()] == [(f.name, f.size, f.type) for f in fmt.values()]


def test_an_event_of_an_ambiguous_class_is_not_typed_from_btf():
    """sched_wakeup's class takes a task_struct * as other classes do: which
    struct is its record BTF does not say, and the error says what was looked for."""
    from plyc import btf as B, tp_btf, tracefs
    with pytest.raises(tracefs.TracefsError, match="nor one of a class of events whose __bpf_trace_CLASS takes "
                       "btf_trace_sched_wakeup's arguments"):
        tp_btf.event_fields(B.load("/sys/kernel/btf/vmlinux"), "vmlinux", "sched", "sched_wakeup")
