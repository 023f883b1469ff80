"""bpftrace's language: the parser of plyc/frontends/bpftrace.

Shapes are asserted through `sx` (plyc/frontends/bpftrace/ast.py), errors
with their exact text, line, column and caret. The scripts are written for
these tests in the shapes `man bpftrace` (0.17) and bpftrace's current
docs/language.md show."""
import glob
import os

import pytest

from plyc.diag import PlycError
from plyc.frontends.bpftrace import parse
from plyc.frontends.bpftrace import ast as A
from plyc.frontends.bpftrace.ast import sx

DEBIAN_TOOLS = sorted(glob.glob("/usr/sbin/*.bt"))


def body(src: str) -> str:
    """The s-expression of the first probe's statements."""
    return sx(parse(src).probes[0].body.stmts)


def err(src: str) -> str:
    with pytest.raises(PlycError) as info:
        parse(src, "tool.bt")
    return info.value.render()


@pytest.mark.parametrize("path", DEBIAN_TOOLS or ["(none)"], ids=os.path.basename)
def test_debian_tools_parse(path):
    """Every tool of Debian's bpftrace package parses, read where it is installed."""
    if not DEBIAN_TOOLS:
        pytest.skip("bpftrace's tools are not installed here (/usr/sbin/*.bt): apt-get install bpftrace")
    text = open(path).read()
    program = parse(text, path)
    assert program.probes
    for probe in program.probes:
        for spec in probe.specs:
            assert text[_offset(text, spec.span):].startswith(spec.text)
    for c in program.preamble:
        assert text[c.start:c.end] == c.text


def _offset(text, span):
    lines = text.split("\n")
    return sum(len(line) + 1 for line in lines[:span.line - 1]) + span.col - 1


def test_debian_tools_count():
    if not DEBIAN_TOOLS:
        pytest.skip("bpftrace's tools are not installed here (/usr/sbin/*.bt)")
    assert len(DEBIAN_TOOLS) >= 36


# --- the preamble -------------------------------------------------------------

def test_preamble_kept_as_text():
    src = ("#!/usr/bin/env bpftrace\n"
           "#include <linux/sched.h>\n"
           "#define TWO \\\n  2\n"
           "struct S {\n  int x;   // a field\n  struct { int y; } in;\n}\n"
           "union U { int a; long b; };\n"
           "BEGIN { exit(); }\n")
    program = parse(src)
    assert [(c.kind, c.text) for c in program.preamble] == [
        ("preprocessor", "#include <linux/sched.h>"),
        ("preprocessor", "#define TWO \\\n  2"),
        ("struct", "struct S {\n  int x;   // a field\n  struct { int y; } in;\n}"),
        ("union", "union U { int a; long b; };"),
    ]
    assert program.preamble[2].span == A.Span(5, 1, 8, 2)


def test_config_block():
    program = parse("config = {\n  max_map_keys = 2;\n  stack_mode=perf\n}\nBEGIN { }")
    assert sx(program.config) == "(Config [(ConfigItem max_map_keys 2) (ConfigItem stack_mode perf)])"


def test_macros():
    program = parse("macro one() { 1 }\nmacro add($a, x, @m) { $a += x; @m++; $a }\n"
                    "BEGIN { print(add($v, 1 + 2, @n)); print(one); }")
    assert sx(program.macros) == (
        "[(Macro one [] (Block [(ExprStmt 1)])) "
        "(Macro add [(MacroParam a var) (MacroParam x expr) (MacroParam @m map)] "
        "(Block [(Assign $a += x) (ExprStmt (IncDec ++ @m)) (ExprStmt $a)]))]")


# --- probes -------------------------------------------------------------------

def test_probe_specs():
    src = ("BEGIN,END,begin,\n"
           "  kprobe:tcp_reset, k:tcp_*, kr:vfs_read, kprobe:kvm:x86_emulate_insn, kprobe:f+0x10,\n"
           "  uprobe:/bin/bash:readline, ur:libc:malloc, u:./a.out:\"fn(char const*)\",\n"
           "  usdt:/usr/bin/x:ns:probe, U:*:loop, t:syscalls:sys_enter_*, tracepoint:sched:sched_switch,\n"
           "  rt:sched_switch, kfunc:tcp_reset, fr:fget, fentry:vfs_read, fexit:kvm:f,\n"
           "  i:s:1, interval:ms:100, interval:1s, p:hz:99, profile:997,\n"
           "  software:faults:100, s:cs:, hardware:cache-misses:1e6, h:cycles,\n"
           "  watchpoint:0x10000000:8:rw, aw:increment+arg1:4:w, iter:task, it:task_file:/sys/fs/bpf/f\n"
           "{ }")
    specs = parse(src).probes[0].specs
    assert [str(s) for s in specs] == [
        "BEGIN", "END", "BEGIN",
        "kprobe:tcp_reset", "kprobe:tcp_*", "kretprobe:vfs_read", "kprobe:kvm:x86_emulate_insn",
        "kprobe:f+0x10",
        "uprobe:/bin/bash:readline", "uretprobe:libc:malloc", "uprobe:./a.out:fn(char const*)",
        "usdt:/usr/bin/x:ns:probe", "usdt:*:loop", "tracepoint:syscalls:sys_enter_*",
        "tracepoint:sched:sched_switch",
        "rawtracepoint:sched_switch", "kfunc:tcp_reset", "kretfunc:fget", "kfunc:vfs_read",
        "kretfunc:kvm:f",
        "interval:s:1", "interval:ms:100", "interval:1s", "profile:hz:99", "profile:997",
        "software:faults:100", "software:cs:", "hardware:cache-misses:1e6", "hardware:cycles",
        "watchpoint:0x10000000:8:rw", "asyncwatchpoint:increment+arg1:4:w", "iter:task",
        "iter:task_file:/sys/fs/bpf/f",
    ]
    assert [s.wildcard for s in specs[3:5]] == [False, True]
    assert specs[1].span == A.Span(1, 7, 1, 10)
    assert specs[3].span == A.Span(2, 3, 2, 19)


def test_predicates():
    src = ("kprobe:vfs_read /arg2 < 16/ { }\n"
           "t:syscalls:sys_enter_openat\n/comm == \"bash\" && pid != $1/\n{ }\n"
           "i:s:1 / @n / 2 > 1 / { }\n"
           "kprobe:f /!@fname[tid]/{ }\n")
    assert [sx(p.predicate) for p in parse(src).probes] == [
        "(Binary < arg2 16)",
        "(Binary && (Binary == comm 'bash') (Binary != pid $1))",
        "(Binary > (Binary / @n 2) 1)",
        "(Unary ! (Map @fname [tid]))",
    ]


# --- statements ---------------------------------------------------------------

def test_maps_and_assignments():
    assert body("BEGIN { @ = count(); @x[pid, comm] = sum(arg0); @y[(1, 2)]++; @z -= 5; "
                "$a <<= 1; $a >>= 2; $a *= 3; $a /= 4; $a %= 5; $a &= 6; $a |= 7; $a ^= 8; "
                "--@w; $b = $a--; _ = 1 }") == (
        "[(Assign @ = (Call count [])) (Assign (Map @x [pid comm]) = (Call sum [arg0])) "
        "(ExprStmt (IncDec ++ (Map @y [(Tuple [1 2])]))) (Assign @z -= 5) "
        "(Assign $a <<= 1) (Assign $a >>= 2) (Assign $a *= 3) (Assign $a /= 4) (Assign $a %= 5) "
        "(Assign $a &= 6) (Assign $a |= 7) (Assign $a ^= 8) (ExprStmt (IncDec -- prefix @w)) "
        "(Assign $b = (IncDec -- $a)) (Assign _ = 1)]")


def test_if_else_chains():
    assert body("BEGIN { if ($a == 1) { $b = 1 } else if ($a) { } else { $b = 2; } $c = 3 }") == (
        "[(If (Binary == $a 1) (Block [(Assign $b = 1)]) "
        "(If $a (Block []) (Block [(Assign $b = 2)]))) (Assign $c = 3)]")


def test_if_without_parentheses():
    """bpftrace 0.2x's `if COND {` (its tools' `if $ns {`), COND one operand:
    the same tree as 0.17's `if (COND) {`. What 0.27 refuses (a binary
    operator, `(a) && b`) is refused, saying how to write it."""
    assert body("BEGIN { if $ns { $a = 1 } else if !@m[1] { } }") == \
        body("BEGIN { if ($ns) { $a = 1 } else if (!@m[1]) { } }") == (
            "[(If $ns (Block [(Assign $a = 1)]) (If (Unary ! (Map @m [1])) (Block [])))]")
    assert body("BEGIN { if -$t.0 { } if strlen($s) { } if pid { } }") == (
        "[(If (Unary - (TupleIndex $t 0)) (Block [])) (If (Call strlen [$s]) (Block [])) (If pid (Block []))]")


def test_while_without_parentheses():
    assert body("BEGIN { while $i { $i--; } while !@done { } }") == \
        body("BEGIN { while ($i) { $i--; } while (!@done) { } }") == (
            "[(While $i (Block [(ExprStmt (IncDec -- $i))])) (While (Unary ! @done) (Block []))]")


def test_for_without_parentheses():
    """current bpftrace's `for $x : @m {` and `for $i : a..b {` (its tools'):
    the same trees as with the parentheses."""
    assert body("BEGIN { for $kv : @m { } for $j : ((uint64)0)..$n { } }") == \
        body("BEGIN { for ($kv : @m) { } for ($j : ((uint64)0)..$n) { } }") == (
            "[(For $kv @m (Block [])) (For $j (Range (Cast <uint64> 0) $n) (Block []))]")


def test_elvis():
    """current bpftrace's `a ?: b`, read as `a ? a : b` (right-associative)
    where `a` reads the same twice."""
    assert body("BEGIN { $x = $a ?: @m[$k] ?: -($b + 1); }") == (
        "[(Assign $x = (Ternary $a $a (Ternary (Map @m [$k]) (Map @m [$k]) (Unary - (Binary + $b 1)))))]")


def test_loops():
    assert body("BEGIN { unroll(3) { print(\"u\") } while ($i <= 100) { if ($i > 5) { break; } "
                "$i++; continue } for ($kv : @m) { print($kv.0.1); } "
                "for ($c : 0..ncpus) { return } }") == (
        "[(Unroll 3 (Block [(ExprStmt (Call print ['u']))])) "
        "(While (Binary <= $i 100) (Block [(If (Binary > $i 5) (Block [(Jump break)])) "
        "(ExprStmt (IncDec ++ $i)) (Jump continue)])) "
        "(For $kv @m (Block [(ExprStmt (Call print [(TupleIndex (TupleIndex $kv 0) 1)]))])) "
        "(For $c (Range 0 ncpus) (Block [(Jump return)]))]")


def test_let_and_blocks():
    assert body("BEGIN { let $a; let $b = 1; { $c = 2; } }") == (
        "[(Let $a) (Let $b 1) (Block [(Assign $c = 2)])]")


def test_typeof_where_a_type_goes():
    # typeof(TYPE) is the type; typeof(e) keeps e (typed where it is used)
    assert body("BEGIN { $a = (typeof($x))1; $b = sizeof(typeof(@m)); $c = (typeof(uint8 *))2; }") == (
        "[(Assign $a = (Cast <typeof> 1)) (Assign $b = (Sizeof <typeof>)) (Assign $c = (Cast <uint8 *> 2))]")


def test_block_expressions():
    """`{ stmt; ...; value }` where a value goes: the last expression,
    without ';', is the value; a block ending with one is one too."""
    assert body("BEGIN { $a = { let $x = 5; $x + 1 }; f({ 7 }); if ({ $z = 1; $z }) { } "
                "@m[{ 2 }] = { let $v = 3; { $v * $v } }; }") == (
        "[(Assign $a = (BlockExpr [(Let $x 5)] (Binary + $x 1))) (ExprStmt (Call f [(BlockExpr [] 7)])) "
        "(If (BlockExpr [(Assign $z = 1)] $z) (Block [])) "
        "(Assign (Map @m [(BlockExpr [] 2)]) = (BlockExpr [(Let $v 3)] (BlockExpr [] (Binary * $v $v))))]")


# --- expressions --------------------------------------------------------------

def test_precedence():
    assert body("BEGIN { $x = 1 + 2 * 3 - 4 / 2 % 3 << 1 | 2 & 3 ^ 4 == 5 || !6 && ~7 != -8; }") == (
        "[(Assign $x = (Binary || (Binary | (Binary << (Binary - (Binary + 1 (Binary * 2 3)) "
        "(Binary % (Binary / 4 2) 3)) 1) (Binary ^ (Binary & 2 3) (Binary == 4 5))) "
        "(Binary && (Unary ! 6) (Binary != (Unary ~ 7) (Unary - 8)))))]")


def test_ternary():
    assert body("BEGIN { $b = $a > 0 ? $a : -1; $a == 1 ? print(\"t\") : print(\"f\"); "
                "$c = $x ? 1 : $y ? 2 : 3 }") == (
        "[(Assign $b = (Ternary (Binary > $a 0) $a (Unary - 1))) "
        "(ExprStmt (Ternary (Binary == $a 1) (Call print ['t']) (Call print ['f']))) "
        "(Assign $c = (Ternary $x 1 (Ternary $y 2 3)))]")


def test_fields_casts_and_pointers():
    assert body("kprobe:f { $t = (struct task_struct *)curtask; $p = $t->parent->pid; "
                "$n = ((struct qstr *)arg1)->name; $f = args->filename; $g = args.filename; "
                "$y = (uint32) $z; $py = (int16 *) $pz; $u = (unsigned long)$t; $q = (pid_t)$x; "
                "$a = (uint8[8])12345; $b = (int8[])$a; $s = *$ptr; $e = $s.y[0]; $r = &$s; "
                "$k = (struct sock **)arg0; $m = (AF_INET); }") == (
        "[(Assign $t = (Cast <struct task_struct *> curtask)) "
        "(Assign $p = (Field (Field $t parent arrow) pid arrow)) "
        "(Assign $n = (Field (Cast <struct qstr *> arg1) name arrow)) "
        "(Assign $f = (Field args filename arrow)) (Assign $g = (Field args filename)) "
        "(Assign $y = (Cast <uint32> $z)) (Assign $py = (Cast <int16 *> $pz)) "
        "(Assign $u = (Cast <unsigned long> $t)) (Assign $q = (Cast <pid_t> $x)) "
        "(Assign $a = (Cast <uint8[8]> 12345)) (Assign $b = (Cast <int8[]> $a)) "
        "(Assign $s = (Unary * $ptr)) (Assign $e = (Index (Field $s y) 0)) "
        "(Assign $r = (Unary & $s)) (Assign $k = (Cast <struct sock **> arg0)) "
        "(Assign $m = AF_INET)]")


def test_tuples():
    assert body("BEGIN { $a = (1, 2); $b = (3, 4, $a); $c = (1,); $d = (); print($b.0); "
                "print($a[1]); $e = (1); }") == (
        "[(Assign $a = (Tuple [1 2])) (Assign $b = (Tuple [3 4 $a])) (Assign $c = (Tuple [1])) "
        "(Assign $d = (Tuple [])) (ExprStmt (Call print [(TupleIndex $b 0)])) "
        "(ExprStmt (Call print [(Index $a 1)])) (Assign $e = 1)]")


def test_records():
    """bpftrace 0.27's records: `(name=value, ...)`, a tuple with its members'
    names; one member is a record too (no comma: `(a=1)`)."""
    assert body("BEGIN { $r = (a=1, b=(c=2)); print($r.a); $t[0]; $e = (x == 1); }") == (
        "[(Assign $r = (Tuple [1 (Tuple [2] [c])] [a b])) (ExprStmt (Call print [(Field $r a)])) "
        "(ExprStmt (Index $t 0)) (Assign $e = (Binary == x 1))]")


def test_record_errors():
    """As bpftrace 0.27 refuses them: a name twice, a member without a name,
    a trailing comma (0.27: `syntax: expected identifier`)."""
    assert err("BEGIN { $r = (a=1, a=2); }") == (
        "tool.bt:1:20: error: Named argument list already contains name: a\n"
        "BEGIN { $r = (a=1, a=2); }\n" + " " * 19 + "^~~")
    assert err("BEGIN { $r = (a=1, 2); }") == (
        "tool.bt:1:20: error: expected identifier (a record's member: 'name=value'), found '2'\n"
        "BEGIN { $r = (a=1, 2); }\n" + " " * 19 + "^")
    assert err("BEGIN { $r = (a=1,); }").splitlines()[0] == (
        "tool.bt:1:19: error: expected identifier (a record's member: 'name=value'), found ')'")
    assert err("BEGIN { $r = (a=1); $r.a = 2; }").splitlines()[3] == (
        "note: tuples and records are immutable once created (bpftrace 0.27): assign a new one")


def test_sizeof_offsetof_positional():
    assert body("BEGIN { $a = sizeof(struct task_struct); $b = sizeof($a); $c = sizeof(uint64); "
                "$d = offsetof(struct task_struct, se.vruntime); $e = sizeof(pid_t); "
                "printf(\"%d %s\\n\", $#, str($2)); }") == (
        "[(Assign $a = (Sizeof <struct task_struct>)) (Assign $b = (Sizeof $a)) "
        "(Assign $c = (Sizeof <uint64>)) (Assign $d = (Offsetof <struct task_struct> [se vruntime])) "
        "(Assign $e = (Sizeof <pid_t>)) (ExprStmt (Call printf ['%d %s\\n' $# (Call str [$2])]))]")


def test_calls_of_both_spellings():
    assert body("BEGIN { delete(@m[1, 2]); delete(@m, (1, 2)); @s[kstack(perf, 3)] = count(); "
                "print(@, 2, 10); clear(@m); exit(); }") == (
        "[(ExprStmt (Call delete [(Map @m [1 2])])) (ExprStmt (Call delete [@m (Tuple [1 2])])) "
        "(Assign (Map @s [(Call kstack [perf 3])]) = (Call count [])) "
        "(ExprStmt (Call print [@ 2 10])) (ExprStmt (Call clear [@m])) (ExprStmt (Call exit []))]")


@pytest.mark.parametrize("text,value", [
    ("123", 123), ("0x10", 16), ("0X1f", 31), ("0123", 83), ("1_000_123_000", 1000123000),
    ("2e3", 2000), ("1e6", 1000000), ("123UL", 123), ("123U", 123), ("123LL", 123),
    ("10ns", 10), ("5us", 5000), ("1ms", 1000000), ("2s", 2000000000), ("1m", 60000000000),
    ("1h", 3600000000000), ("1d", 86400000000000), ("18446744073709551615", 2**64 - 1), ("0", 0),
])
def test_integer_literals(text, value):
    lit = parse(f"BEGIN {{ $x = {text}; }}").probes[0].body.stmts[0].value
    assert (lit.value, lit.text) == (value, text)


def test_strings_and_comments():
    src = ('// a comment\nBEGIN /* here */ { // inline\n'
           '  print(/* in a call */ "a\\n\\t\\"\\\\\\101\\x41\\0");\n/*\n multi\n*/ }')
    assert body(src) == "[(ExprStmt (Call print ['a\\n\\t\"\\\\AA\\x00']))]"


def test_spans():
    stmt = parse("BEGIN {\n  $x = $t->se.vruntime + 1;\n}").probes[0].body.stmts[0]
    assert stmt.span == A.Span(2, 3, 2, 27)
    assert stmt.value.span == A.Span(2, 8, 2, 27)
    assert stmt.value.left.span == A.Span(2, 8, 2, 23)
    assert stmt.value.left.obj.span == A.Span(2, 8, 2, 14)


# --- errors -------------------------------------------------------------------

ERRORS = [
    ("BEGIN { $x = 1 $y = 2 }",
     "tool.bt:1:16: error: expected ';' or '}' after the statement, found '$y'\n"
     "BEGIN { $x = 1 $y = 2 }\n               ^~"),
    ("kprobe:foo /pid == 1 { }",
     "tool.bt:1:22: error: expected '/' to end the predicate, found '{'\n"
     "kprobe:foo /pid == 1 { }\n                     ^"),
    ("kprobe:foo {\n  @x = ;\n}",
     "tool.bt:2:8: error: expected an expression, found ';'\n  @x = ;\n       ^"),
    ("foo:bar { }",
     "tool.bt:1:1: error: unknown probe type 'foo'\nfoo:bar { }\n^~~"),
    ("tracepoint:sched { }",
     "tool.bt:1:1: error: a tracepoint probe is written 'tracepoint:category:event'\n"
     "tracepoint:sched { }\n^~~~~~~~~~~~~~~~"),
    ("BEGIN:x { }",
     "tool.bt:1:1: error: a BEGIN probe is written 'BEGIN'\nBEGIN:x { }\n^~~~~~~"),
    ("BEGIN { $c = 'a'; }",
     "tool.bt:1:14: error: character literals are not part of bpftrace's language; "
     "write the character's code (65 for 'A')\nBEGIN { $c = 'a'; }\n             ^"),
    ("BEGIN { $x = 09; }",
     "tool.bt:1:14: error: invalid octal literal '09'\nBEGIN { $x = 09; }\n             ^~"),
    ("BEGIN { $x = 12abc; }",
     "tool.bt:1:14: error: invalid integer literal '12abc'\nBEGIN { $x = 12abc; }\n             ^~~~~"),
    ("BEGIN { $x = 1e-3; }",
     "tool.bt:1:14: error: invalid integer literal '1e'\nBEGIN { $x = 1e-3; }\n             ^~"),
    ("BEGIN { $x = 18446744073709551616; }",
     "tool.bt:1:14: error: integer literal '18446744073709551616' does not fit in 64 bits\n"
     "BEGIN { $x = 18446744073709551616; }\n             ^~~~~~~~~~~~~~~~~~~~"),
    ('BEGIN { printf("abc); }',
     'tool.bt:1:16: error: unterminated string\nBEGIN { printf("abc); }\n               ^~~~~~~~'),
    ('BEGIN { $x = "\\q"; }',
     'tool.bt:1:15: error: invalid escape \'\\q\' in string\nBEGIN { $x = "\\q"; }\n              ^~'),
    ("BEGIN { if 1 $x = 1; }",
     "tool.bt:1:14: error: expected '{' (bpftrace needs braces around an if's body), found '$x'\n"
     "BEGIN { if 1 $x = 1; }\n             ^~"),
    ("BEGIN { if $a == 1 { } }",
     "tool.bt:1:15: error: expected '{' after the if condition (without parentheses, bpftrace reads "
     "one operand: `if ($a == 1) {`), found '=='\nBEGIN { if $a == 1 { } }\n              ^~"),
    ("BEGIN { if ($a) && $b { } }",
     "tool.bt:1:17: error: expected '{' (bpftrace needs braces around an if's body), found '&&'\n"
     "BEGIN { if ($a) && $b { } }\n                ^~"),
    ("BEGIN { for $i : 0..$n + 1 { } }",
     "tool.bt:1:24: error: expected '{' after the for loop's head (a range's ends are one operand each: "
     "`0..($n + 1)`), found '+'\nBEGIN { for $i : 0..$n + 1 { } }\n                       ^"),
    ("BEGIN { for { } }",
     "tool.bt:1:13: error: expected '(' or a scratch variable ($name) after 'for', found '{'\n"
     "BEGIN { for { } }\n            ^"),
    ("BEGIN { $x = nsecs ?: 1; }",
     "tool.bt:1:14: error: the left of '?:' must be a variable, a map's value, a literal or arithmetic "
     "on them (plyc reads it twice): assign it to a $variable first\nBEGIN { $x = nsecs ?: 1; }\n"
     "             ^~~~~"),
    ("BEGIN { $x = @m[$i++] ?: 1; }",
     "tool.bt:1:14: error: the left of '?:' must be a variable, a map's value, a literal or arithmetic "
     "on them (plyc reads it twice): assign it to a $variable first\nBEGIN { $x = @m[$i++] ?: 1; }\n"
     "             ^~~~~~~~"),
    ("BEGIN { while $i < 3 { } }",
     "tool.bt:1:18: error: expected '{' after the while condition (without parentheses, bpftrace reads "
     "one operand: `while ($a == 1) {`), found '<'\nBEGIN { while $i < 3 { } }\n                 ^"),
    ("BEGIN { if { } }",
     "tool.bt:1:12: error: expected a condition after 'if', found '{'\nBEGIN { if { } }\n           ^"),
    ("BEGIN { if (1 { } }",
     "tool.bt:1:15: error: expected ')' to close the if condition, found '{'\nBEGIN { if (1 { } }\n              ^"),
    ("BEGIN { if (1) $x = 1; }",
     "tool.bt:1:16: error: expected '{' (bpftrace needs braces around an if's body), found '$x'\n"
     "BEGIN { if (1) $x = 1; }\n               ^~"),
    ("BEGIN { 1 + 2 = 3; }",
     "tool.bt:1:9: error: '=' needs a variable or map on its left\nBEGIN { 1 + 2 = 3; }\n        ^~~~~"),
    ("BEGIN { ++3 }",
     "tool.bt:1:9: error: '++' needs a variable or map\nBEGIN { ++3 }\n        ^~"),
    ("BEGIN {\n  print(1);",
     "tool.bt:2:12: error: expected '}' to close the block opened at line 1, found the end of the script\n"
     "  print(1);\n           ^"),
    ("", "tool.bt:1:1: error: the script has no probes\n\n^"),
    ("struct S { int a; }\n", "tool.bt:2:1: error: the script has no probes\n\n^"),
    ("BEGIN { /* x }",
     "tool.bt:1:9: error: unterminated comment\nBEGIN { /* x }\n        ^~"),
    ("BEGIN { }\n#include <linux/sched.h>",
     "tool.bt:2:1: error: a preprocessor line must come before the first probe\n"
     "#include <linux/sched.h>\n^"),
    ("BEGIN { }\nstruct S { int a; }",
     "tool.bt:2:1: error: a struct definition must come before the first probe\n"
     "struct S { int a; }\n^~~~~~"),
    ("BEGIN { }\nconfig = { a = 1 }",
     "tool.bt:2:1: error: the config block must come first, before macros and probes\n"
     "config = { a = 1 }\n^~~~~~"),
    ("BEGIN { }\nimport \"lib.bt\";",
     "tool.bt:2:1: error: an import must come before macros and probes\nimport \"lib.bt\";\n^~~~~~"),
    ("let @a = lruhash(1 + 1);\nBEGIN { }",
     "tool.bt:1:20: error: expected ')' after the map's size, found '+'\n"
     "let @a = lruhash(1 + 1);\n" + " " * 19 + "^"),
    ("BEGIN { }\nlet @a = hash(2);",
     "tool.bt:2:1: error: a map declaration must come before the first probe\n"
     "let @a = hash(2);\n^~~"),
    ("name= { }", "tool.bt:1:7: error: expected a probe after its name, found '{'\nname= { }\n      ^"),
    ("BEGIN { $a = { let $x = 1; }; }",
     "tool.bt:1:28: error: expected the block's value (a block used as a value ends with an expression "
     "without ';': { let $x = 1; $x + 1 }), found '}'\n"
     "BEGIN { $a = { let $x = 1; }; }\n" + " " * 27 + "^"),
    ("fn add($a: int64): int64 { return $a; }\nBEGIN { }",
     "tool.bt:1:1: error: user-defined functions ('fn') are not supported: bpftrace 0.27 parses them, but a "
     "call to one is an \"Unknown function\" there and a script defining one crashes it\n"
     "fn add($a: int64): int64 { return $a; }\n^~\n"
     "note: write it as a macro: macro add(a, b) { a + b }"),
    ("BEGIN { else { } }",
     "tool.bt:1:9: error: expected a statement ('else' without 'if'), found 'else'\n"
     "BEGIN { else { } }\n        ^~~~"),
    ("BEGIN { $x = if; }",      # an if as a value (tests/test_bpftrace_semantics.py) without its condition
     "tool.bt:1:16: error: expected an expression, found ';'\nBEGIN { $x = if; }\n               ^"),
    ("BEGIN { for ($i in @m) { } }",
     "tool.bt:1:17: error: expected ':' after $i (for ($x : @map) or for ($i : start..end)), found 'in'\n"
     "BEGIN { for ($i in @m) { } }\n                ^~"),
    ("BEGIN { f(1, 2; }",
     "tool.bt:1:15: error: expected ')' or ',' in the list, found ';'\nBEGIN { f(1, 2; }\n              ^"),
    ("kprobe:f kprobe:g { }",
     "tool.bt:1:10: error: expected ',', a predicate or '{' after the probe, found 'kprobe'\n"
     "kprobe:f kprobe:g { }\n         ^~~~~~"),
    ("BEGIN { $x = `a`; }",
     "tool.bt:1:14: error: invalid character '`'\nBEGIN { $x = `a`; }\n             ^"),
    ("{ }", "tool.bt:1:1: error: expected a probe, found '{'\n{ }\n^"),
    ("BEGIN { $x = 1 ? 2; }",
     "tool.bt:1:19: error: expected ':' in the ternary operator (cond ? a : b), found ';'\n"
     "BEGIN { $x = 1 ? 2; }\n                  ^"),
]


@pytest.mark.parametrize("src,message", ERRORS, ids=range(len(ERRORS)))
def test_errors(src, message):
    assert err(src) == message


def test_deep_nesting_is_an_error():
    # located: at the parenthesis that opens the 101st level
    assert err("BEGIN { $x = " + "(" * 5000 + "1" + ")" * 5000 + "; }").split("\n")[0] == \
        "tool.bt:1:113: error: the script nests more than 100 levels deep here"


def test_a_probe_name_is_read_as_the_probe_without_it():
    """current bpftrace's `name=spec`: its `probe` is the spec (0.27 prints it so)."""
    prog = parse('first=tracepoint:syscalls:sys_enter_getppid, x2=BEGIN { print(probe); }', "tool.bt")
    specs = prog.probes[0].specs
    assert [(s.provider, s.text) for s in specs] == [("tracepoint", "tracepoint:syscalls:sys_enter_getppid"),
                                                      ("BEGIN", "BEGIN")]
    assert (specs[0].span.col, specs[1].span.col) == (7, 49)


def test_a_comma_after_the_last_probe_of_a_list():
    prog = parse("kprobe:a,\nkprobe:b,\n/pid == 1/\n{ }\nkprobe:c, { }")
    assert [[s.text for s in p.specs] for p in prog.probes] == [["kprobe:a", "kprobe:b"], ["kprobe:c"]]
    assert prog.probes[0].predicate is not None
