"""bpftrace's current standard library (plyc/frontends/bpftrace/stdlib.py):
the IR of each value, its errors, and the helpers the tracer asks the kernel
for. Behaviour on a kernel, against bpftrace 0.27: tests/runtime/
bt-stdlib-values.test, bt-usermode.test."""

from plyc.codegen import loops, printers, resources
from plyc.ir.dump import dump

from btlower import err, lower
from plyc import driver


def driver_c(src: str) -> str:
    """The BPF C of a bpftrace script."""
    return driver.compile_source(src, "tool.bt", driver.Options()).generated.bpf_c


def test_ir_of_string_functions_and_clocks():
    prog = lower('BEGIN { $s = "ab";\n'
                 '  printf("%d %d %d\\n", strlen($s), strcontains(comm, $s), nsecs(boot));\n'
                 '  printf("%d %d\\n", nsecs(monotonic), nsecs(tai)); }')
    assert "bpf_ktime_get_boot_ns() + plyc_params.tai_offset" in \
        driver_c('BEGIN { print(nsecs(sw_tai)); }')
    text = dump(prog)
    assert 'strlen($s:char[8]):u64' in text
    assert 'strcontains(comm:char[16], $s:char[8]):bool' in text
    assert '_clock("boot":char[5]):u64' in text and '_clock("tai":char[4]):u64' in text
    res = resources.build(prog, "tool", "tool.bt")
    # the newer clocks' helpers are asked of the kernel before the load (runtime-c/load/needs.c)
    assert [(n["helper_name"], n["since"], n["line"], n["what"]) for n in loops.needs(res)] == \
        [("bpf_ktime_get_boot_ns", "5.8", 2, '"nsecs(boot)"'), ("bpf_ktime_get_tai_ns", "6.1", 3, '"nsecs(tai)"')]


def test_a_pointer_is_read_as_a_string():
    text = dump(lower('tracepoint:syscalls:sys_enter_openat { print(strlen(args->filename)); }'))
    assert "strlen(str(field.filename:char *):char[1024]):u64" in text
    # an integer is no string (bpftrace: "string-like values must be ... pointers")
    assert "read a string from an address with str(p)" in err('kprobe:f { print(strlen(arg0)); }')


def test_ppid_and_usermode():
    text = dump(lower('BEGIN { print((ppid, usermode)); }\nprofile:hz:99 { print(usermode); }'))
    assert "curtask:struct task_struct *->real_parent:struct task_struct *->pid:" in text
    assert "->pid:s32, 1:u8)" in text       # BEGIN runs in the tracer: user mode
    assert "usermode():u8" in text
    kp = lower('kprobe:f { print(usermode); }')
    assert kp.probes[0].uses_regs       # no fentry twin: it has no pt_regs


def test_text_values_are_integers_the_tracer_names():
    prog = lower('BEGIN { @e[strerror(-2)] = 1; print(signal_name(9)); }')
    text = dump(prog)
    assert "map @e hash [s32 (errno)] -> s64" in text
    assert "signal_name(cast(9:s64):s32):s32 (signal)" in text   # read as an int32, as 0.27
    types = [t for e in prog.events for t in e.arg_types]
    assert [printers.rt_kind(t) for t in types] == ["PLYC_K_SIGNAL"]
    assert "strerror() needs an integer, got char[8]" in err('BEGIN { print(strerror("a")); }')


def test_errorf_and_warnf_are_stderr_lines():
    prog = lower('BEGIN { errorf("bad %d\\n", 5);\n  warnf("w"); }')
    assert [(e.kind, e.span.line) for e in prog.events] == [("errorf", 1), ("warnf", 2)]
    res = resources.build(prog, "tool", "tool.bt")
    c = "\n".join(printers.event_body(res.events[0], res))
    assert '"tool.bt:1:9-30: ERROR: "' in c and "fputs(\"bad \", fp);" in c and "fputc('\\n', fp);" in c
    # a one-liner (plyc run -e) is "stdin", as bpftrace names a -e program
    one = resources.build(prog, "tool", "<command-line>")
    assert '"stdin:1:9-30: ERROR: "' in "\n".join(printers.event_body(one.events[0], one))
    assert "errorf() has no value" in err('BEGIN { $x = errorf("a"); }')
    assert "the format has 1 conversion but 0 arguments follow" in err('BEGIN { warnf("%d"); }')


def test_builtin_spellings():
    # bpftrace 0.27's core builtins are also `__builtin_NAME`; its stdlib's are not
    assert dump(lower('kretprobe:f { print((__builtin_retval, __builtin_func)); }')) == \
        dump(lower('kretprobe:f { print((retval, func)); }'))
    assert "unknown identifier '__builtin_pid'" in err('BEGIN { print(__builtin_pid); }')


def test_getopt_options_and_their_params():
    prog = lower('BEGIN { printf("%d %d %s\\n", getopt("f"), getopt("n", 3, "a number"), getopt("s", "x"));\n'
                 '  print(getopt("n", 3, "a number")); }')
    # an integer option is unsigned unless its default is negative, a flag a bool (0.27's types)
    assert prog.options == [("f", "bool", "false", ""), ("n", "uint", "3", "a number"), ("s", "str", "x", "")]
    assert lower('BEGIN { print(getopt("m", -3)); }').options == [("m", "int", "-3", "")]
    assert "emit printf 1 (param.opt_num:bool, param.opt_num[1]:u64, str(param.opt_str[2]:char[1024]):char[1024])" \
        in dump(prog)
    src = driver_c('BEGIN { printf("%s %d\\n", getopt("s", "x"), getopt("n", -2)); }')
    assert "plyc_params.opt_str[0]" in src and "plyc_params.opt_num[1]" in src
    assert "First argument to 'getopt' must be a string literal." in err('BEGIN { print(getopt(1)); }')
    assert "Second argument to 'getopt' must be a string literal, integer literal, or a boolean literal." in \
        err('BEGIN { print(getopt("a", pid)); }')
    assert "the option 'a' needs to have the same default value in all places it is used. Previous default " \
        "value: 1" in err('BEGIN { print(getopt("a", 1)); print(getopt("a", 2)); }')


def test_pton_is_an_array_made_at_compile_time():
    text = dump(lower('BEGIN { $a = pton("10.0.0.1"); print(ntop(pton("::1"))); }'))
    assert '$a = "\\n\\000\\000\\001":u8[4]' in text
    assert "ntop(2:u64, " not in text and ":u8[16])" in text
    assert "pton() expects a valid IPv4/IPv6 address, got ::ffff:1.2.3.4" in err('BEGIN { print(pton("::ffff:1.2.3.4")); }')
    assert "pton() takes a string literal" in err('BEGIN { $s = "a"; print(pton($s)); }')


def test_the_variables_as_calls():
    # 0.27's stdlib spells them as macros too: comm(), nsecs(), usermode(), ppid([task])
    assert dump(lower('kprobe:f { print((comm(), nsecs(), usermode(), ppid(), ppid(curtask))); }')) == \
        dump(lower('kprobe:f { print((comm, nsecs, usermode, ppid, ppid)); }'))
    assert "ppid() takes a task (struct task_struct *), got s64" in err('BEGIN { print(ppid(1)); }')
    # and every other builtin variable (bpftrace's runtime suite calls cpu(), elapsed(), ncpus())
    names = "cpu elapsed ncpus uid gid curtask jiffies cgroup numaid username rand func retval".split()
    assert dump(lower("kretprobe:f { print((" + ", ".join(f"{n}()" for n in names) + ")); }")) == \
        dump(lower("kretprobe:f { print((" + ", ".join(names) + ")); }"))
    assert "cpu() takes 0 arguments, got 1" in err("BEGIN { print(cpu(1)); }")
    # a macro overloads them by arity, as 0.27's macros are: cpu() stays the builtin
    assert dump(lower('macro cpu(x) { x } BEGIN { print((cpu("hi"), cpu())); }')) == \
        dump(lower('BEGIN { print(("hi", cpu)); }'))
    assert "macro two takes 2 arguments, got 1" in err("macro two(a, b) { a + b } BEGIN { print(two(1)); }")
    assert "nsecs() takes 0 or 1 arguments, got 2" in err('BEGIN { print(nsecs(1, 2)); }')


def test_refused_by_name():
    assert "print_map() is not supported by plyc yet" in err('BEGIN { @m = 1; print_map(@m); }')


def test_errors():
    assert "usermode reads the registers of the probed code; tracepoint probes have none" in \
        err('tracepoint:sched:sched_switch { print(usermode); }')
    assert "usermode is not supported on aarch64" in err('profile:hz:99 { print(usermode); }', target="aarch64")
    assert "nsecs() takes a clock: monotonic, boot, tai or sw_tai" in err('BEGIN { print(nsecs(wall)); }')
    assert "strlen() needs a string, got s64" in err('BEGIN { print(strlen(5)); }')
    assert "strcontains() takes 2 arguments, got 1" in err('BEGIN { print(strcontains("a")); }')


def test_comm_of_a_pid():
    text = dump(lower('tracepoint:raw_syscalls:sys_enter { print(comm(pid)); print(comm()); }'))
    assert "_comm_of(nspid:u32):char[16]" in text and "emit print 2 (comm:char[16])" in text
    c = driver_c('tracepoint:raw_syscalls:sys_enter { print(comm(1)); }')
    assert "bpf_task_release(task);" in c and "&task->comm" in c and "__u8 comm[16];" in c
    assert "Only integer supported for comm()'s pid" in err('tracepoint:raw_syscalls:sys_enter { print(comm("a")); }')
    # BEGIN and END run as raw tracepoints, which may not call the kfunc (0.27 refuses it too)
    assert "Syntax comm(PID) is not supported in this probe type yet. Type: BEGIN" in \
        err('BEGIN { print(comm(1)); }')


def test_cgroup_path_is_an_id_the_tracer_prints_with_its_filter():
    prog = lower('tracepoint:raw_syscalls:sys_enter { print(cgroup_path(cgroup)); '
                 'print(cgroup_path(cgroup, "unified")); @t = strftime("%H", nsecs); }')
    text = dump(prog)
    assert "cgroup_path(cgroup:u64):u64 (cgroup_path)" in text
    # its filter is in the program's table of texts, after strftime's format here: '*' when none
    assert prog.time_formats == ["*", "unified", "%H"]
    types = [t for e in prog.events for t in e.arg_types]
    assert [printers.rt_kind(t) for t in types] == ["PLYC_K_CGROUP_PATH"] * 2
    assert [printers.rt_width(t) for t in types] == [0, 1]
    assert "cgroup_path()'s filter must be a string literal" in \
        err('BEGIN { $f = "a"; print(cgroup_path(1, $f)); }')
    assert "cgroup_path()'s filter is empty: it picks no hierarchy" in err('BEGIN { print(cgroup_path(1, "")); }')
    assert "cgroup_path() needs a cgroup id (an integer), got char[8]" in err('BEGIN { print(cgroup_path("a")); }')


def test_percpu_kaddr_is_a_typed_ksym():
    c = driver_c('tracepoint:raw_syscalls:sys_enter { print(*percpu_kaddr("process_counts")); '
                 '$r = (struct rq *)percpu_kaddr("runqueues", cpu); print($r->cpu); }')
    assert "extern const __u64 process_counts __ksym;" in c and "extern const struct rq runqueues __ksym;" in c
    assert "bpf_this_cpu_ptr(&process_counts)" in c
    assert "bpf_per_cpu_ptr(&runqueues, (__u32)(" in c and "barrier_var(" in c
    assert 'percpu_kaddr("process_counts":char[15]):u64 *' in \
        dump(lower('BEGIN { $p = percpu_kaddr("process_counts"); print($p); }'))     # 0.27's uint64 *
    assert 'Could not resolve variable "plyc_nope" from BTF' in \
        err('BEGIN { print(percpu_kaddr("plyc_nope")); }')
    assert "percpu_kaddr()'s symbol must be a string literal" in err('BEGIN { $s = "a"; print(percpu_kaddr($s)); }')


def test_strstr_and_str_concat():
    text = dump(lower('BEGIN { $s = "abc"; print(strstr($s, "b")); @c = str_concat(comm, $s); '
                      'print(str_concat("ab", "cd")); }'))
    assert 'strstr($s:char[8], "b":char[8]):s64' in text
    # a new string as long as both whole: comm's 15 bytes, $s's 7, the NUL;
    # of literals, their texts'
    assert 'str_concat(comm:char[16], $s:char[8]):char[23]' in text
    assert 'str_concat("ab":char[8], "cd":char[8]):char[5]' in text
    c = driver_c('BEGIN { print(strstr(comm, "a")); }')
    assert "plyc_strstr(" in c
    assert "str_concat() needs a string, got s64" in err('BEGIN { print(str_concat("a", 1)); }')
    assert "strstr() takes 2 arguments, got 1" in err('BEGIN { print(strstr("a")); }')


def test_namespaced_ids_probetype_and_has_cpid():
    # as 0.27: pid, tid and curr_ns the tracer's PID namespace's ids, init the initial one's
    assert dump(lower('BEGIN { print((pid(curr_ns), tid(curr_ns), tid(), pid)); }')) == \
        dump(lower('BEGIN { print((pid, tid, tid, pid)); }'))
    assert "(nspid:u32, nstid:u32, pid:u32, kpid:u32)" in dump(lower('BEGIN { print((pid, tid, pid(init), tid(init))); }'))
    assert "pid() takes curr_ns or init" in err('BEGIN { print(pid(1)); }')
    text = dump(lower('BEGIN { print(probetype); }\nkfunc:vfs_read { print(probetype()); }\n'
                      'tracepoint:sched:sched_switch { print(__builtin_probetype); }'))
    assert all(f'"{t}":char' in text for t in ("special", "fentry", "tracepoint"))
    prog = lower('BEGIN { print((has_cpid, has_cpid())); }')
    # true when -c gave a command, as the documentation says (0.27.1 inverts it)
    assert "(param.target:u32 != 0:u32):bool" in dump(prog) and prog.uses_target


def test_config_variables_read_in_a_probe():
    text = dump(lower('config = { max_strlen = 100; stack_mode = perf }\n'
                      'BEGIN { print((config.max_strlen, config().stack_mode, config.license, '
                      'config.missing_probes, config.print_maps_on_exit)); }'))
    assert '(100:s64, "perf":char[8], "GPL":char[8], "error":char[8], 1:bool)' in text
    assert "1024:s64" in dump(lower('BEGIN { print(config.max_strlen); }'))     # 0.27's default
    assert '"..":char[8]' in dump(lower('BEGIN { print(config.str_trunc_trailer); }'))
    assert '"~":char[8]' in dump(lower('config = { str_trunc_trailer = "~" }\nBEGIN { print(config.str_trunc_trailer); }'))
    assert "config.max_map_keys is not supported by plyc yet" in err('BEGIN { print(config.max_map_keys); }')
    assert "unknown config variable 'nope'" in err('BEGIN { print(config.nope); }')
    assert "the config record as a whole is not supported by plyc yet" in err('BEGIN { print(config); }')


def test_find_reads_a_key_into_a_variable():
    text = dump(lower('BEGIN { @m[2] = (1, "a"); let $v; if (find(@m, 2, $v)) { print($v); } }'))
    # the lookup and $v's assignment run before the if, as delete()'s value
    assert "$find@1:39 = has @m[2:s64]:bool" in text and "if $find@1:39:bool" in text
    assert "$v = @m[2:s64]" in text
    assert "find() takes a map, a key and a $variable" in err('BEGIN { @m[1] = 1; print(find(@m, 1, @x)); }')
    assert "find() needs a map with keys; @m has none" in err('BEGIN { @m = 1; $v = 0; print(find(@m, 1, $v)); }')
    assert "find() in the right of '&&'" in \
        err('BEGIN { @m[1] = 1; $v = 0; if ($v == 0 && find(@m, 1, $v)) { print($v); } }')
    assert "find()'s value in a while condition is not supported by plyc yet" in \
        err('BEGIN { @m[1] = 1; $v = 0; while (find(@m, 1, $v)) { delete(@m, 1); } }')
    # $v read before find() changes it: taken first, as bpftrace reads it (effects.py)
    assert "$snap0@1:35 = $v:s64" in dump(lower('BEGIN { @m[1] = 1; $v = 0; print(($v, find(@m, 1, $v))); }'))


def test_is_err_is_a_bool_of_the_64_bit_value():
    text = dump(lower('BEGIN { print(is_err(-2)); }'))
    assert ">= 18446744073709547521:u64):bool" in text
    assert "is_err() needs a pointer or an integer, got char[" in err('BEGIN { print(is_err("x")); }')


def test_fail_stops_the_build_with_its_message():
    # 0.27 stops compiling wherever fail() is, its format filled in
    assert err('macro small(x) { if (x > 10) { fail("%s: %d (%x) too big", "small", x, x); } x }\n'
               'BEGIN { print(small(300)); }').startswith("tool.bt:1:32: error: small: 300 (12c) too big\n")
    assert "error: need $1 above 1" in err('BEGIN { if ($1 < 2) { fail("need %d above 1", $1); } }')
    assert "fail()'s first argument must be a format string literal" in err('BEGIN { fail(1); }')


def test_fail_counts_its_arguments_as_printf_does():
    # 0.27 prints a fail() with an argument short half filled and crashes on
    # one too many: plyc refuses both as printf's count, located at the call
    assert err('BEGIN { fail("a %d", 1, 2); }') == (
        "tool.bt:1:9: error: the format has 1 conversion but 2 arguments follow\n"
        'BEGIN { fail("a %d", 1, 2); }\n        ^~~~~~~~~~~~~~~~~~')
    assert err('BEGIN { fail("a %d %d", 1); }').startswith(
        "tool.bt:1:9: error: the format has 2 conversions but 1 argument follows\n")
    assert "the format has 1 conversion but 0 arguments follow" in err('BEGIN { fail("a %d"); }')
    assert "the format has 0 conversions but 1 argument follows" in err('BEGIN { fail("a", 1); }')
    # a literal % as printf takes it, `%%`
    assert err('BEGIN { fail("100%% sure"); }').startswith("tool.bt:1:9: error: 100% sure\n")


def test_type_questions_are_constants_and_static_assert_stops_the_build():
    # is_str() and the others are answered when the script is compiled
    # (their values beside 0.27's: tests/runtime/bt-meta.test)
    text = dump(lower('BEGIN { $s = "a"; print((is_str($s), is_integer($s), is_literal(1 + 2))); }'))
    assert "emit print 1 (1:bool, 0:bool, 1:bool)" in text
    assert err('BEGIN { static_assert(is_ptr(1), "want a pointer"); }').startswith(
        "tool.bt:1:9: error: want a pointer\n")
    assert "static_assert()'s condition must be known when the script is compiled" in \
        err('BEGIN { static_assert(pid == 1, "x"); }')
    assert "static_assert()'s message must be a string literal" in err('BEGIN { static_assert(1, 2); }')
    assert "is_str() takes 1 argument, got 2" in err('BEGIN { print(is_str(1, 2)); }')


def test_assert_is_a_statement_that_exits_1():
    text = dump(lower('BEGIN { assert(pid == 1, "not one"); }'))
    assert "if (!(nspid:u32 == 1:s64):bool):bool  @1\n    emit errorf 1 (\"not one\":char[8])  @1\n" \
        "    emit exit 2 (1:s64)  @1\n" in text
    assert "assert(condition, message) is a statement of its own" in err('BEGIN { $x = assert(1, "a"); }')


def test_memcmp_takes_strings_and_arrays():
    assert "memcmp(comm:char[16], \"sh\":char[8], 2:s64):s32" in dump(lower('BEGIN { print(memcmp(comm, "sh", 2)); }'))
    assert "memcmp() compares strings or arrays, got " in err('BEGIN { print(memcmp(1, "sh", 2)); }')
    assert "memcmp()'s count must be an integer, got " in err('BEGIN { print(memcmp(comm, "sh", "x")); }')


def test_container_of_is_a_cast_of_the_address_less_the_offset():
    text = dump(lower('BEGIN { $c = container_of(0, typeof(struct task_struct), se.load); print($c->pid); }'))
    assert "_offsetof(\"struct task_struct\":char[64], \"se.load\":char[64])" in text
    assert "container_of() takes a pointer, the container's type as typeof(TYPE) and a member's name" in \
        err('BEGIN { $c = container_of(0, struct_x, tasks); }')


def test_string_questions():
    # assert_str() as 0.27's stdlib checks, strcap() a constant of a string
    # or an array, a pointer's strlen (bt-strcap runs them beside 0.27)
    assert "string-like arrays must contain a char-like type" in err('BEGIN { assert_str(pton("1.2.3.4")); }')
    assert "string-like pointers must point to a char-like type" in err('BEGIN { $c = (char *)0; assert_str($c); }')
    assert "string-like values must be either strings, arrays or pointers" in err('BEGIN { print(strcap(1)); }')
    text = dump(lower('config = { max_strlen = 64 } BEGIN { $p = (int8 *)0; '
                      'print((strcap(str($p)), strcap($p), default_str_length())); }'))
    assert "emit print 1 (64:s64, strlen(str($p:s8 *):char[65]):u64, 64:u64)" in text
