"""The parser: every construct of docs LANGUAGE.md parses into the right AST.

Shapes are asserted through `sx`, a compact s-expression of the dataclasses
in plyc/frontends/ply/ast.py: `(- (- a b) c)` is Binary('-', Binary('-', a, b), c)."""
import pytest

from plyc import providers
from plyc.frontends.ply import ast
from plyc.frontends.ply.parser import parse


# Complete scripts that parse and type-check; test_fuzz.py mutates them.
VALID_SCRIPTS = [
    """#!/usr/bin/env plyc
# Every comment style, several probes, maps of every kind.
tracepoint:sched/sched_switch / data->prev_pid != 0 && !strcmp(comm, "bash") /
{
\t@[comm, data->prev_comm] = count();   // keyed by two strings
\t@prio = lquantize(data->prev_prio, 0, 140, 10);
\tlast[kpid] = time;
\t/* a scratch variable and compound assignments */
\t$x = data->prev_pid;
\t$x += 1; $x <<= 2; $x |= 0x10; $x &= 0b1111_1111; $x ^= 017; $x %= 1_000;
\tif ($x > 10)
\t\tprintf("%d %s %c\\n", $x, comm, data->prev_comm[0]);
\telse if ($x < 0)
\t\treturn;
\telse
\t\tprint($x, data->next_comm);
}
""",
    """tracepoint:syscalls/sys_enter_read { start[kpid] = time; }
tracepoint:syscalls/sys_exit_read / start[kpid] / {
\t@["latency"] = quantize(time - start[kpid]);
\t@sizes[pid] = sum(data->ret > 0 ? data->ret : 0);
\t@lo = min(data->ret); @hi = max(data->ret); @mean = avg(data->ret);
\tdelete start[kpid];
}
END { print(@sizes); clear(@lo); printf("done at %v\\n", walltime); }
""",
    """kprobe:vfs_read, kprobe:vfs_write, k:vfs_*r[ei][at][de] { @[caller] = count(); @s[stack] = count(); }
kretprobe:vfs_read if (retval < 0) { printf("%d %v\\n", -retval, retval); exit(1); }
kr:vfs_write / retval >= 0 / { @w = quantize(retval); }
""",
    """tracepoint:syscalls/sys_enter_openat { print(comm, pid, str(data->filename)); }
tracepoint:syscalls/sys_enter_* { @[comm] = count(); }
t:sched/sched_process_exec { printf("%v %-16s %5d %s\\n", time, comm, pid, dyn(data->filename)); }
""",
    """interval:1s { print(@calls); clear(@calls); }
i:500ms { @calls = count(); }
interval:s:2 { exit(0); }
profile:99hz { @[cpu] = count(); }
profile:1:100hz { @one = count(); }
BEGIN { printf("%s %d %x %u %o %c %v %%\\n", "start", -1, 255, 1 << 3, 8, 65, uid + gid); }
""",
    """uprobe:/bin/bash:readline { @[arg0 & 0xff, comm] = count(); }
u:c:malloc { @bytes[pid] = sum(arg0); printf("%p\\n", uptr(arg1)); }
ur:c:malloc / retval == 0 / { printf("malloc failed in %s\\n", comm); }
uretprobe:/bin/bash:readline { @r = count(); }
usdt:/usr/bin/python3:python:function__entry { @calls[arg1] = count(); }
""",
    """BEGIN
{
\t$a = 1 + 2 * 3 - 4 / 2 % 3;
\t$b = ($a << 1 + 2) >> 1 & 0xf | 1 ^ 2;
\t$c = !$a == $b || $a && $b != 0;
\t$d = $a < $b ? $a <= $b : $a > $b ? 1 : $a >= $b;
\t$e = ~$a + -$b + +$c + (u32)$d + (s8)-1 + sizeof(u64);
\tprintf("%d %d %d %d %d\\n", $a, $b, $c, $d, $e);
\tif ($a) if ($b) exit(); else exit(2);
\t;
\t{ }
}
END printf("bye\\n");
""",
    """tracepoint:syscalls/sys_exit_read
{
\t@["dist"] = quantize(data->ret);
\t@by[comm, pid, cpu] = count();
\t@all = count();
}
""",
]


# --- helpers ---------------------------------------------------------------

def sx(n) -> str:
    if isinstance(n, ast.Num):
        return str(n.value)
    if isinstance(n, ast.Str):
        return repr(n.value)[1:]        # b'x\n' -> 'x\n'
    if isinstance(n, ast.Name):
        return n.name
    if isinstance(n, ast.Dollar):
        return "$" + n.name
    if isinstance(n, ast.MapRef):
        return n.name + (f"[{', '.join(sx(k) for k in n.keys)}]" if n.keys else "")
    if isinstance(n, ast.Unary):
        return f"({n.op} {sx(n.operand)})"
    if isinstance(n, ast.Binary):
        return f"({n.op} {sx(n.left)} {sx(n.right)})"
    if isinstance(n, ast.Ternary):
        return f"(? {sx(n.cond)} {sx(n.then)} {sx(n.other)})"
    if isinstance(n, ast.Call):
        return f"{n.func}({', '.join(sx(a) for a in n.args)})"
    if isinstance(n, ast.Member):
        return f"({'->' if n.arrow else '.'} {sx(n.obj)} {n.field})"
    if isinstance(n, ast.Index):
        return f"(index {sx(n.obj)} {sx(n.index)})"
    if isinstance(n, ast.Cast):
        return f"(cast {n.type} {sx(n.operand)})"
    if isinstance(n, ast.SizeOf):
        return f"(sizeof {n.type})"
    if isinstance(n, ast.Block):
        return "{" + " ".join(sx(s) for s in n.stmts) + "}"
    if isinstance(n, ast.ExprStmt):
        return sx(n.expr) + ";"
    if isinstance(n, ast.Assign):
        return f"(= {sx(n.target)} {sx(n.value)})"
    if isinstance(n, ast.If):
        other = f" {sx(n.other)}" if n.other is not None else ""
        return f"(if {sx(n.cond)} {sx(n.then)}{other})"
    if isinstance(n, ast.Return):
        return "return"
    if isinstance(n, ast.Delete):
        return f"(delete {sx(n.target)})"
    raise TypeError(type(n).__name__)


def probe(src: str) -> ast.Probe:
    program = parse(src, "t.ply")
    assert len(program.probes) == 1
    return program.probes[0]


def body(src: str) -> str:
    """The s-expression of the statements of `BEGIN { src }`."""
    return sx(probe("BEGIN { " + src + " }").body)


def expr(src: str) -> str:
    """The s-expression of one expression."""
    stmt = probe("BEGIN { $t = " + src + "; }").body.stmts[0]
    assert isinstance(stmt, ast.Assign) and sx(stmt.target) == "$t"
    return sx(stmt.value)


def expr_node(src: str) -> ast.Expr:
    return probe("BEGIN { $t = " + src + "; }").body.stmts[0].value


# --- lexical ---------------------------------------------------------------

def test_comments_of_every_kind():
    src = ("#!/usr/bin/env plyc\n"
           "# a line comment\n"
           "BEGIN /* before the body */ {\n"
           "\t/* a comment\n"
           "\t   over lines */ exit(); // to the end of the line\n"
           "\t# exit(1);\n"
           "}\n")
    p = probe(src)
    assert [(s.provider, s.arg) for s in p.specs] == [("BEGIN", "")]
    assert sx(p.body) == "{exit();}"
    assert p.span.line == 3


def test_slash_slash_comment_after_a_division():
    assert body("$x = 4 / 2; // half of it\n $y = 1;") == "{(= $x (/ 4 2)) (= $y 1)}"


def test_comment_markers_inside_strings_are_text():
    assert expr('"# not /* a */ comment // here"') == "'# not /* a */ comment // here'"


def test_comments_between_predicate_and_body():
    p = probe("kprobe:vfs_read / arg0 > 1 / # why\n /* and */ { exit(); }")
    assert sx(p.predicate) == "(> arg0 1)"
    assert sx(p.body) == "{exit();}"


@pytest.mark.parametrize("text,value", [
    ("0", 0), ("7", 7), ("1_000", 1000), ("1_000_000", 10**6), ("0x1F", 31), ("0Xff", 255),
    ("0x_dead_beef", 0xdeadbeef), ("0b101", 5), ("0B1_0000_0000", 256), ("017", 15), ("00", 0),
    ("0_7", 7), ("18446744073709551615", 2**64 - 1),
])
def test_integer_literals(text, value):
    node = expr_node(text)
    assert isinstance(node, ast.Num) and node.value == value


@pytest.mark.parametrize("text,value", [
    (r'"plain"', b"plain"),
    (r'"a\nb"', b"a\nb"),
    (r'"\t|\\|\"|\r|\0"', b'\t|\\|"|\r|\0'),
    (r'"\x41\x7e\x00\xff"', b"A~\x00\xff"),
    (r'"\x4g"', b"\x04g"),          # one hex digit is enough
    (r'"\x414"', b"A4"),            # at most two are taken
    (r'"%d\n"', b"%d\n"),
    (r'""', b""),
    ('"caf\u00e9"', "caf\u00e9".encode()),
    (r'"con" "cat" "enated"', b"concatenated"),
])
def test_string_literals_and_escapes(text, value):
    node = expr_node(text)
    assert isinstance(node, ast.Str) and node.value == value


def test_keywords_are_not_prefixes_of_names():
    assert body("iffy(); return_x(); deleted[1] = 2; sizeofx(1);") == \
        "{iffy(); return_x(); (= deleted[1] 2) sizeofx(1);}"


# --- probes ------------------------------------------------------------------

def test_several_comma_separated_specs_share_a_body():
    p = probe("kprobe:vfs_read, kretprobe:vfs_write,t:sched/sched_switch,\n  BEGIN { exit(); }")
    assert [(s.provider, s.arg) for s in p.specs] == [
        ("kprobe", "vfs_read"), ("kretprobe", "vfs_write"), ("t", "sched/sched_switch"), ("BEGIN", "")]
    assert p.predicate is None
    assert sx(p.body) == "{exit();}"


def test_several_probes():
    program = parse("BEGIN { exit(); }\nEND{exit(1);} interval:1s{ exit(2); }", "t.ply")
    assert [(p.specs[0].provider, sx(p.body)) for p in program.probes] == [
        ("BEGIN", "{exit();}"), ("END", "{exit(1);}"), ("interval", "{exit(2);}")]
    assert program.filename == "t.ply"


@pytest.mark.parametrize("src,pred", [
    ("kprobe:vfs_read / arg0 > 1 / { exit(); }", "(> arg0 1)"),
    ("kprobe:vfs_read / arg0 / 2 > 1 / { exit(); }", "(> (/ arg0 2) 1)"),
    ("kprobe:vfs_read /arg0/2/ { exit(); }", "(/ arg0 2)"),
    ("kprobe:vfs_read / (arg0 / 2) / 3 / {}", "(/ (/ arg0 2) 3)"),
    ('t:syscalls/sys_enter_* / !strcmp(execname, "dd") /\n{ exit(); }', "(! strcmp(execname, 'dd'))"),
    ("t:syscalls/sys_exit_read / start[kpid] / { exit(); }", "start[kpid]"),
    ("BEGIN, END / $1 == 2 && pid != 0 / { exit(); }", "(&& (== $1 2) (!= pid 0))"),
])
def test_predicates(src, pred):
    p = probe(src)
    assert sx(p.predicate) == pred


def test_predicate_is_kept_apart_from_the_body():
    p = probe("kprobe:vfs_read / arg0 / { @ = count(); }")
    assert isinstance(p.predicate, ast.Name)
    assert isinstance(p.body, ast.Block) and sx(p.body) == "{(= @ count())}"


@pytest.mark.parametrize("src,shape", [
    ("kretprobe:vfs_read if (retval < 0) { exit(); }", "(if (< retval 0) {exit();})"),
    ('BEGIN printf("hi\\n");', "printf('hi\\n');"),
    ("BEGIN @ = count();", "(= @ count())"),
    ("BEGIN $x = 1;", "(= $x 1)"),
    ("BEGIN return;", "return"),
    ("BEGIN ;", "{}"),
    ("BEGIN delete m[1];", "(delete m[1])"),
    ("BEGIN if (1) exit(); else exit(1);", "(if 1 exit(); exit(1);)"),
])
def test_braceless_probe_takes_one_statement(src, shape):
    assert sx(probe(src).body) == shape


def test_braceless_probes_in_sequence():
    program = parse("BEGIN exit(1);\nEND exit(2);\nk:f if (arg0) exit(3);", "t.ply")
    assert [sx(p.body) for p in program.probes] == ["exit(1);", "exit(2);", "(if arg0 exit(3);)"]


# --- providers: every spelling, as the parser splits it and the provider reads it

@pytest.mark.parametrize("spec,provider,arg,name", [
    ("kprobe:SyS_*", "kprobe", "SyS_*", "kprobe"),
    ("k:vfs_*r[ei][at][de]", "k", "vfs_*r[ei][at][de]", "kprobe"),
    ("k:vfs_read+16", "k", "vfs_read+16", "kprobe"),
    ("k:0xffffffff81000000", "k", "0xffffffff81000000", "kprobe"),
    ("kr:vfs_read", "kr", "vfs_read", "kretprobe"),
    ("kretprobe:vfs_*", "kretprobe", "vfs_*", "kretprobe"),
    ("t:sched/sched_switch", "t", "sched/sched_switch", "tracepoint"),
    ("tracepoint:syscalls/sys_enter_*", "tracepoint", "syscalls/sys_enter_*", "tracepoint"),
    ("tracepoint:syscalls/*", "tracepoint", "syscalls/*", "tracepoint"),
    ("u:/bin/bash:readline", "u", "/bin/bash:readline", "uprobe"),
    ("uprobe:c:malloc", "uprobe", "c:malloc", "uprobe"),
    ("uprobe:./a.out:main+4", "uprobe", "./a.out:main+4", "uprobe"),
    ("ur:/lib/x86_64-linux-gnu/libc.so.6:malloc", "ur", "/lib/x86_64-linux-gnu/libc.so.6:malloc",
     "uretprobe"),
    ("uretprobe:c:free", "uretprobe", "c:free", "uretprobe"),
    ("usdt:/path/to/bin:prov:name", "usdt", "/path/to/bin:prov:name", "usdt"),
    ("interval:1", "interval", "1", "interval"),
    ("i:500ms", "i", "500ms", "interval"),
    ("interval:s:1", "interval", "s:1", "interval"),
    ("profile:99hz", "profile", "99hz", "profile"),
    ("profile:1:100hz", "profile", "1:100hz", "profile"),
    ("BEGIN", "BEGIN", "", "BEGIN"),
    ("END", "END", "", "END"),
    ("software:page-faults:100", "software", "page-faults:100", "software"),
    ("s:faults", "s", "faults", "software"),
    ("hardware:cache-misses:1000000", "hardware", "cache-misses:1000000", "hardware"),
    ("h:cycles", "h", "cycles", "hardware"),
])
def test_provider_spellings(spec, provider, arg, name):
    for text in (f"{spec} {{ exit(); }}", f"{spec}{{ exit(); }}", f"{spec}\n{{\n}}"):
        s = probe(text).specs[0]
        assert (s.provider, s.arg) == (provider, arg)
        assert s.span.line == 1 and s.span.col == 1 and s.span.end_col == len(spec) + 1
    # The provider accepts the spelling.
    assert providers.lookup(provider).parse(s).provider.name == name


@pytest.mark.parametrize("spec,period_ns", [
    ("interval:1", 10**9), ("i:500ms", 5 * 10**8), ("interval:s:1", 10**9), ("interval:1s", 10**9),
    ("interval:ms:20", 2 * 10**7), ("interval:10us", 10**4), ("interval:2m", 120 * 10**9),
    ("i:1_000ns", 1000),
])
def test_interval_spellings(spec, period_ns):
    s = probe(spec + " { exit(); }").specs[0]
    assert providers.lookup(s.provider).parse(s).period_ns == period_ns


@pytest.mark.parametrize("spec,freq,cpu", [("profile:99hz", 99, -1), ("profile:1:100hz", 100, 1),
                                           ("profile:1000", 1000, -1)])
def test_profile_spellings(spec, freq, cpu):
    s = probe(spec + " { exit(); }").specs[0]
    t = providers.lookup(s.provider).parse(s)
    assert (t.freq, t.cpu) == (freq, cpu)


def test_tracepoint_glob_is_marked():
    s = probe("tracepoint:syscalls/sys_enter_* { exit(); }").specs[0]
    assert providers.lookup(s.provider).parse(s).glob
    s = probe("tracepoint:sched/sched_switch { exit(); }").specs[0]
    assert not providers.lookup(s.provider).parse(s).glob


# --- statements ------------------------------------------------------------

def test_if_else_chain():
    assert body("if (a) x(); else if (b) y(); else { z(); }") == \
        "{(if a x(); (if b y(); {z();}))}"


def test_dangling_else_binds_to_the_nearest_if():
    assert body("if (a) if (b) x(); else y();") == "{(if a (if b x(); y();))}"
    assert body("if (a) { if (b) x(); } else y();") == "{(if a {(if b x();)} y();)}"
    assert body("if (a) if (b) x(); else if (c) y(); else z();") == \
        "{(if a (if b x(); (if c y(); z();)))}"


def test_if_without_braces_then_more_statements():
    assert body("if (a) x(); y();") == "{(if a x();) y();}"


def test_return_and_empty_statements():
    assert body("return; ; { } if (a) return;") == "{return {} {} (if a return)}"


def test_scratch_variables():
    assert body("$x = 1; $long_name_2 = $x; print($x);") == \
        "{(= $x 1) (= $long_name_2 $x) print($x);}"


@pytest.mark.parametrize("op", ["+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>"])
def test_compound_assignment_reads_and_writes_the_target(op):
    stmts = probe(f"BEGIN {{ $x {op}= 2; m[k] {op}= $x; }}").body.stmts
    assert [sx(s) for s in stmts] == [f"(= $x ({op} $x 2))", f"(= m[k] ({op} m[k] $x))"]
    assign = stmts[0]
    assert isinstance(assign, ast.Assign) and assign.value.left is assign.target


def test_env_target_and_positional_dollars():
    assert expr("$target + $1 + $HOME") == "(+ (+ $target $1) $HOME)"


# --- expressions -------------------------------------------------------------

@pytest.mark.parametrize("src,shape", [
    # associativity
    ("a - b - c", "(- (- a b) c)"),
    ("a / b / c", "(/ (/ a b) c)"),
    ("a % b * c", "(* (% a b) c)"),
    ("a << b >> c", "(>> (<< a b) c)"),
    ("a < b <= c", "(<= (< a b) c)"),
    ("a == b != c", "(!= (== a b) c)"),
    ("a && b && c", "(&& (&& a b) c)"),
    ("a ? b : c ? d : e", "(? a b (? c d e))"),
    # precedence, one level against the next
    ("a + b * c", "(+ a (* b c))"),
    ("a * b + c", "(+ (* a b) c)"),
    ("a << 1 + 2", "(<< a (+ 1 2))"),
    ("a < b << c", "(< a (<< b c))"),
    ("a == b < c", "(== a (< b c))"),
    ("a & b == c", "(& a (== b c))"),
    ("a ^ b & c", "(^ a (& b c))"),
    ("a | b ^ c", "(| a (^ b c))"),
    ("a && b | c", "(&& a (| b c))"),
    ("a || b && c", "(|| a (&& b c))"),
    ("a && b || c", "(|| (&& a b) c)"),
    ("a || b ? c : d", "(? (|| a b) c d)"),
    ("a ? b || c : d", "(? a (|| b c) d)"),
    ("a | b & c ^ d", "(| a (^ (& b c) d))"),
    # unary
    ("!a == b", "(== (! a) b)"),
    ("-a * b", "(* (- a) b)"),
    ("~a & b", "(& (~ a) b)"),
    ("- -a", "(- (- a))"),
    ("+a", "(+ a)"),
    ("*a + 1", "(+ (* a) 1)"),
    ("a - -1", "(- a (- 1))"),
    ("!!a", "(! (! a))"),
    # grouping
    ("(a + b) * c", "(* (+ a b) c)"),
    ("a - (b - c)", "(- a (- b c))"),
    ("((a))", "a"),
    # comparisons keep their spelling
    ("a >= b", "(>= a b)"),
    ("a > b", "(> a b)"),
    ("a >> b", "(>> a b)"),
    ("a<<b", "(<< a b)"),
    ("a<b", "(< a b)"),
])
def test_operator_precedence_and_associativity(src, shape):
    assert expr(src) == shape


@pytest.mark.parametrize("src,shape", [
    ("(u32)x", "(cast u32 x)"),
    ("(u32)-1", "(cast u32 (- 1))"),
    ("(unsigned long long)x", "(cast unsigned long long x)"),
    ("(const char *)arg1", "(cast const char * arg1)"),
    ("(char **)x", "(cast char ** x)"),
    ("(struct file *)arg0", "(cast struct file * arg0)"),
    ("(u8)x + 1", "(+ (cast u8 x) 1)"),
    ("(u64)x->y", "(cast u64 (-> x y))"),
    ("(s32)(u16)x", "(cast s32 (cast u16 x))"),
    ("sizeof(int)", "(sizeof int)"),
    ("sizeof(struct task_struct)", "(sizeof struct task_struct)"),
    ("sizeof(u64) * 2", "(* (sizeof u64) 2)"),
])
def test_casts_and_sizeof(src, shape):
    assert expr(src) == shape


def test_cast_type_names_are_split_into_words_and_stars():
    node = expr_node("(struct file *)arg0")
    assert isinstance(node, ast.Cast)
    assert node.type.words == ("struct", "file") and node.type.pointers == 1
    assert str(node.type) == "struct file *"
    node = expr_node("(unsigned int)x")
    assert node.type.words == ("unsigned", "int") and node.type.pointers == 0


@pytest.mark.parametrize("src,shape", [
    ("a->b.c->d", "(-> (. (-> a b) c) d)"),
    ("data->arr[2]", "(index (-> data arr) 2)"),
    ("data->arr[1 + 1].x", "(. (index (-> data arr) (+ 1 1)) x)"),
    ("regs->ip", "(-> regs ip)"),
    ("((struct file *)arg0)->f_path.dentry->d_name.name",
     "(. (-> (. (-> (cast struct file * arg0) f_path) dentry) d_name) name)"),
    ("-data->x", "(- (-> data x))"),
    ("!a->b", "(! (-> a b))"),
])
def test_member_chains(src, shape):
    assert expr(src) == shape


def test_member_node_fields():
    node = expr_node("a->b.c")
    assert isinstance(node, ast.Member) and node.field == "c" and not node.arrow
    assert isinstance(node.obj, ast.Member) and node.obj.field == "b" and node.obj.arrow


def test_maps_reads_writes_and_delete():
    assert body("@[k] = count(); @name[k1, k2] = sum(x); @x = count(); m[k] = 1; "
                "m[1, \"s\"] = m[k] + 1; delete m[k]; delete m[1, \"s\"];") == (
        "{(= @[k] count()) (= @name[k1, k2] sum(x)) (= @x count()) (= m[k] 1) "
        "(= m[1, 's'] (+ m[k] 1)) (delete m[k]) (delete m[1, 's'])}")


def test_map_ref_nodes():
    stmts = probe('BEGIN { @ = count(); @q["size", pid] = quantize(arg0); m[k] = 1; }').body.stmts
    anon, agg, plain = (s.target for s in stmts)
    assert (anon.name, anon.keys, anon.is_agg) == ("@", [], True)
    assert agg.name == "@q" and agg.is_agg and [sx(k) for k in agg.keys] == ["'size'", "pid"]
    assert plain.name == "m" and not plain.is_agg and [sx(k) for k in plain.keys] == ["k"]


def test_map_without_key_in_an_expression():
    assert body("print(@x); clear(@); print(@calls, 1);") == "{print(@x); clear(@); print(@calls, 1);}"


@pytest.mark.parametrize("src,shape", [
    ("f()", "f()"),
    ("f(1)", "f(1)"),
    ("f(1, a, \"s\")", "f(1, a, 's')"),
    ("f(g(h()), (1), -2)", "f(g(h()), 1, (- 2))"),
    ("lquantize(x, 0, 100, 10)", "lquantize(x, 0, 100, 10)"),
    ("str(data->filename, 32)", "str((-> data filename), 32)"),
    ("f(a ? b : c, d)", "f((? a b c), d)"),
])
def test_calls(src, shape):
    assert expr(src) == shape


def test_call_node_keeps_the_name_span():
    node = expr_node("strcmp(comm, \"x\")")
    assert isinstance(node, ast.Call) and node.func == "strcmp" and len(node.args) == 2
    assert node.name_span == ast.Span(1, 14, 1, 20)


# --- spans -------------------------------------------------------------------

def test_spans_of_nodes():
    src = ("BEGIN\n"
           "{\n"
           "    @[comm] = count();\n"
           "    if (pid > 10)\n"
           "        printf(\"%d\\n\", pid);\n"
           "}\n")
    p = probe(src)
    assert p.span == ast.Span(1, 1, 6, 2)
    assert p.specs[0].span == ast.Span(1, 1, 1, 6)
    assert p.body.span == ast.Span(2, 1, 6, 2)
    assign, if_ = p.body.stmts
    assert assign.span == ast.Span(3, 5, 3, 23)
    assert assign.target.span == ast.Span(3, 5, 3, 12)
    assert assign.target.keys[0].span == ast.Span(3, 7, 3, 11)
    assert assign.value.span == ast.Span(3, 15, 3, 22)
    assert if_.span == ast.Span(4, 5, 5, 29)
    assert if_.cond.span == ast.Span(4, 9, 4, 17)
    assert if_.cond.right.span == ast.Span(4, 15, 4, 17)
    call = if_.then.expr
    assert call.span == ast.Span(5, 9, 5, 28)
    assert call.args[0].span == ast.Span(5, 16, 5, 22)


def test_spans_of_multi_spec_probes_and_predicates():
    p = probe("k:a,\n  kr:bb / arg0 / 2 / { exit(); }")
    assert [s.span for s in p.specs] == [ast.Span(1, 1, 1, 4), ast.Span(2, 3, 2, 8)]
    assert p.predicate.span == ast.Span(2, 11, 2, 19)
    assert p.predicate.left.span == ast.Span(2, 11, 2, 15)


def test_spans_count_a_tab_as_one_column():
    p = probe("BEGIN {\n\t\t$x = 1;\n}")
    assert p.body.stmts[0].target.span == ast.Span(2, 3, 2, 5)


def test_compound_assignment_span_covers_the_statement():
    stmt = probe("BEGIN { $abc += 10; }").body.stmts[0]
    assert stmt.span == ast.Span(1, 9, 1, 20)
    assert stmt.value.right.span == ast.Span(1, 17, 1, 19)


def test_walk_visits_every_node_in_source_order():
    p = probe("BEGIN { if (a) x(1); else y(b); }")
    names = [type(n).__name__ for n in ast.walk(p.body)]
    assert names == ["Block", "If", "Name", "ExprStmt", "Call", "Num", "ExprStmt", "Call", "Name"]


# --- the scripts the fuzzer starts from ----------------------------------------

@pytest.mark.parametrize("index", range(len(VALID_SCRIPTS)))
def test_valid_scripts_parse_and_check(index):
    from plyc import driver
    src = VALID_SCRIPTS[index]
    program = parse(src, "v.ply")
    prog = driver.analyze(program, src, "v.ply", driver.Options(env={}))
    assert len(prog.probes) == sum(len(p.specs) for p in program.probes)


@pytest.mark.parametrize("spec,event,period", [
    ("software:page-faults:100", "page-faults", 100), ("s:faults", "page-faults", 100),
    ("software:cs", "context-switches", 1000), ("software:cpu:1_000", "cpu-clock", 1000),
    ("software:task-clock", "task-clock", 1), ("software:major-faults", "major-faults", 1),
    ("h:cycles", "cpu-cycles", 1000000), ("hardware:branches", "branch-instructions", 100000),
    ("hardware:bus-cycles:7", "bus-cycles", 7), ("h:ref-cycles", "ref-cycles", 1000000),
])
def test_perf_event_names_and_default_counts(spec, event, period):
    """bpftrace's event names, aliases and default counts (sample periods)."""
    s = probe(f"{spec} {{ exit(); }}").specs[0]
    t = providers.lookup(s.provider).parse(s)
    assert (t.target, t.extra["period"]) == (event, period)
