"""What unusual scripts of bpftrace's current language (0.2x) mean, as
0.27 reads them: shifts as conditions, printf's flags, signs, an `if` as a
value, tuple and pointer indexing, kernel arrays, script structs the kernel
also has. plyc once compiled each to C clang refused, refused it where 0.27
accepts it, or ran it to another answer (found by issue 24's adversarial
pass); their runs beside 0.27 are tests/runtime/bt-hostile24-*.test."""
import pytest

from plyc import driver
from plyc.ir.dump import dump

from btlower import err, lower
from cbuild import bpf_compile_error


def compiled(src: str) -> driver.Compiled:
    out = driver.compile_source(src, "tool.bt", driver.Options(frontend={"unsafe": False}))
    problem = bpf_compile_error(out)
    assert problem == "", problem
    return out


def test_a_shift_tested_as_a_condition_compiles():
    # clang's -Wint-in-bool-context refused `if (v << 2)`
    compiled('BEGIN { $a = 3; if ($a << 2) { printf("y\\n"); } if (!($a << 2)) { exit(); }\n'
             '  $c = ($a << 1) ? 1 : 2; while ($a << 0) { $a--; } @ = (uint8)(1 << 9) + $c; }')


def test_printf_takes_and_ignores_a_precision_and_the_space_flag_as_0_27():
    prog = lower('BEGIN { printf("%.0s %-5.2s % d %.3x %5p", "a", "b", 1, 2, 3); }')
    convs = [p for p in prog.events[0].parts if not isinstance(p, str)]
    assert [(c.flags, c.width, c.prec) for c in convs] == \
        [("", None, None), ("-", "5", None), ("", None, None), ("", None, None), ("", "5", None)]
    assert convs[-1].null_p == "0"


def test_kv_0_of_a_key_of_several_parts_is_their_tuple():
    compiled('BEGIN { @m[1, "a"] = 5; for ($kv : @m) { $k = $kv.0; @x[$kv.0] = $k.0; print($kv.0); } }')
    assert "no element 2" in err('BEGIN { @m[1, 2] = 5; for ($kv : @m) { print($kv.2); } }')


def test_a_script_struct_the_kernel_also_has_is_sized_as_the_kernels():
    from plyc.ir.dump import dump
    text = dump(lower('struct list_head { int x; int y; }\n'
                      'BEGIN { @[sizeof(struct list_head), offsetof(struct list_head, y)] = 1; }'))
    assert "  @[16:u64, 4:u64] = 1:s64  @2\n" in text
    assert "has no member 'z'" in err('struct list_head { int x; }\nBEGIN { @ = offsetof(struct list_head, z); }')


@pytest.mark.parametrize("expr, typed", [
    ("(uint32)arg0 - (uint32)arg1", "(cast(cast(arg0:u64):u32):s64 - cast(cast(arg1:u64):u32):s64):s64"),
    ("arg0 * (int32)arg1", "(cast(arg0:u64):s64 * cast(arg1:u64):s32):s64"),
    ("arg0 * 2", "(arg0:u64 * 2:s64):u64"),                  # a literal that is not negative: neither
    ("arg0 < (int8)arg1", "(cast(arg0:u64):s64 < cast(arg1:u64):s8):bool"),
    ("-(uint32)arg0", "cast((-cast(arg0:u64):u32):u64):u32"),     # of its operand's width
    ("(int64)arg0 >> 1", "cast((cast(cast(arg0:u64):s64):u64 >> 1:s64):u64):s64"),
    ("-7 / 2", "-3:s64"),     # two literals fold, as 0.27 folds them
])
def test_signs_are_0_27s(expr, typed):
    text = dump(lower(f"kprobe:vfs_read {{ @ = {expr}; }}"))
    assert f"@[] = {typed}  @1" in text, text


def test_unroll_of_a_parameter_is_bounded_when_the_tracer_starts():
    prog = lower('BEGIN {\n  unroll($2) { printf("x\\n"); }\n}')
    assert prog.arg_bounds == [(2, 1, 100, 2, 3, "unroll")]
    out = compiled('BEGIN {\n  unroll($2) { printf("x\\n"); }\n}')
    assert '{ 2, 1LL, 100LL, 2, 3, "unroll" },' in out.generated.loader_c


def test_an_if_with_an_else_is_a_value():
    text = dump(lower('BEGIN { $a = 2; $w = if ($a == 1) { 10 } else if ($a == 2) { 20 } else { 30 };\n'
                      '  $v = { $a = 1; if ($a) { 2 } else { 3 } }; @[$w, $v] = 1; }'))
    assert "$w = (($a:s64 == 1:s64):bool ? 10:s64 : (($a:s64 == 2:s64):bool ? 20:s64 : 30:s64):s64):s64  @1" in text
    assert "an if used as a value needs one" in err('BEGIN { $x = if (1) { 2 }; }')
    assert "a block expression in a branch of '?:'" in err('BEGIN { $x = if (1) { @y = 1; 2 } else { 3 }; }')


def test_a_short_parameter_string_is_read_through_its_volatile():
    c = compiled('config = { max_strlen = 16 }\nBEGIN { printf("%s %s\\n", str($1), getopt("name", "d")); }'
                 ).generated.bpf_c
    assert "plyc_copy_param_str(t1, sizeof(t1), plyc_params.arg_str[0], sizeof(plyc_params.arg_str[0]));" in c
    assert "(const char *)plyc_params" not in c


@pytest.mark.parametrize("value, typename", [
    ("username", "username_t"), ("strerror(1)", "string[1024]"), ("signal_name(9)", "string[1024]"),
    ("macaddr(arg0)", "mac_address"), ('strftime("%H", nsecs)', "timestamp"), ("cgroup_path(1)", "cgroup_path_t"),
])
def test_a_text_value_has_no_integer_conversion_as_in_0_27(value, typename):
    assert f"unsupported format specifier for type '{typename}': d" in \
        err(f'kprobe:vfs_read {{ printf("%d\\n", {value}); }}')


def test_typeof_an_aggregation_is_no_casts_type():
    assert "Cannot cast to typeof(@s), an aggregation's 'sum_t'" in \
        err('BEGIN { @s = sum(5); $x = (typeof(@s))10; }')


def test_a_map_written_a_signed_value_holds_signed_values():
    prog = lower('BEGIN { @a = (uint8)1; @a = -1; @e = (int32)5; @e = (uint32)4000000000; @n = 1; }')
    assert [(m.name, str(m.value_type)) for m in prog.maps.values()] == [("@a", "s64"), ("@e", "s64"), ("@n", "s64")]


def test_a_variable_assigned_itself_compiles():
    # clang's -Wself-assign refused `v_x = v_x;` (0.27 refuses the untyped one:
    # "Could not resolve the type"; plyc reads it as 0, docs/bpftrace.md)
    compiled('BEGIN { let $x; $x = $x; print($x); $y = 5; $y = $y; $s = "a"; $s = $s; print(($y, $s)); }')


def test_a_tuple_printed_with_a_width_is_padded_whole():
    # 0.27 pads the tuple's first character instead ("    (1, 2)" for %5s):
    # docs/bpftrace.md
    loader = compiled('BEGIN { printf("%20s\\n", (1, "a")); }').generated.loader_c
    assert "plyc_print_value_padded(fp, 0, plyc_fmt_int(20), " in loader and "open_memstream" not in loader


def test_comm_of_a_pid_read_from_kernel_memory_compiles():
    # an internal error: "a temporary of 16 bytes that temps.py did not place"
    compiled('kprobe:vfs_read { print(comm(curtask->pid)); @[comm(curtask->real_parent->pid)] = 1; }')


def test_a_run_time_string_size_cuts_the_string_read_whole():
    # was refused; 0.27 takes it (bt-str-size-runtime, compared with 0.27)
    text = dump(lower('BEGIN { $s = "hello"; $n = 3; print(str($s, $n)); }'))
    assert "_str_cut(str($s:char[8]):char[8], $n:s64):char[8]" in text
    assert "str()'s size must be an integer, got char[8]" in err('BEGIN { $s = "hello"; print(str($s, $s)); }')


def test_a_variable_assigned_a_signed_value_is_an_int64():
    prog = lower('BEGIN { $a = (uint32)5; $a -= 10; $u = (uint32)5; $u = 7; let $l: uint8 = 1; $l -= 3; }')
    assert {n: str(t) for n, t in prog.probes[0].locals.items()} == {"a": "s64", "u": "u64", "l": "u8"}


def test_a_tuple_index_of_literals_in_arithmetic_is_folded_as_0_27():
    assert "only valid for integer literals" in err('BEGIN { $t = (1, 2); print($t[(uint8)0]); }')
    assert "$t:(s64, s64, s64).2:s64" in dump(lower('BEGIN { $t = (1, 2, 3); print($t[1 + 1]); }'))


def test_a_pointer_is_indexed_as_0_27_indexes_it():
    # p[i] is *(p + i), i known at run time too; plyc refused every p[i]
    compiled('tracepoint:syscalls:sys_enter_execve { $i = 1; printf("%s %s\\n", str(args->argv[0]),\n'
             '  str(args->argv[$i])); $p = (struct k_sigaction *)curtask->sighand; print($p[$i]);\n'
             '  @f = $p[2].sa.sa_flags; $q = (uint16 *)curtask; @q[$q[$i]] = $q[3]; }')
    from plyc import tracefs
    assert tracefs.field_type("syscalls", "const char *const *", "argv", 8, False).pointee == "char *"
    assert "an index must be an integer" in err('BEGIN { $q = (uint16 *)curtask; print($q["a"]); }')


def test_a_kernel_array_member_is_indexed_at_run_time_as_0_27_indexes_it():
    # at the array's CO-RE address plus $i elements; plyc wanted a constant
    out = compiled('BEGIN { $i = 9; print(curtask->sighand->action[$i]); @f = curtask->sighand->action[$i].sa.sa_flags;\n'
                   '  @b[curtask->cpus_mask.bits[$i - 8]] = curtask->signal->rlim[$i].rlim_cur; }')
    assert "bpf_core_field_offset(struct sighand_struct, action)" in out.generated.bpf_c
    assert "bpf_core_field_offset(struct task_struct, cpus_mask.bits)" in out.generated.bpf_c
    assert "must be a constant integer" in err('BEGIN { $i = 1; $x = curtask->cpus_mask; print($x.bits[$i]); }')


def test_a_kernel_array_as_a_whole_key_stays_one_key():
    # spread as a tuple's elements, it printed @y[3, 0, 0, 0]; 0.27: @y[[3,0,0,0]]
    prog = lower('BEGIN { @y[curtask->cpus_mask.bits] = 1; @t[(1, 2)] = 1; }')
    keys = {m.name: len(m.key_types) for m in prog.maps.values()}
    assert keys["@y"] == 1 and keys["@t"] == 2, keys


def test_a_flexible_array_member_is_indexed_past_its_zero_elements():
    compiled('BEGIN { $l = 0; @a = curtask->thread_pid->numbers[1].nr; @b = curtask->thread_pid->numbers[$l];\n'
             '  print(curtask->thread_pid->numbers[0]); }')
    assert "out of bounds" in err('BEGIN { print(curtask->cpus_mask.bits[4]); }')


def test_pointer_indexes_0_27_refuses_are_refused():
    assert "non-negative" in err('BEGIN { $p = (int8 *)curtask; print($p[-1]); }')
    assert "unsized type" in err('BEGIN { $p = (void *)curtask; print($p[1]); }')
    compiled('BEGIN { $i = 1; @c = curtask->comm[$i]; }')


def test_a_tracepoint_fields_kernel_struct_pointer_is_dereferenced_as_a_struct_value():
    # `*args->cred` (const struct cred *): plyc said "can't dereference"; 0.27 prints
    # the struct as it prints `{ .val = 0 }` of args->cred->uid (checked by hand on 6.18)
    compiled('tracepoint:capability:cap_capable { $c = *args->cred; print($c.euid); @[*args->cred] = count();\n'
             '  print(args->cred->uid); }')
