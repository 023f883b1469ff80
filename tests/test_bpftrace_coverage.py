"""Every bpftrace feature plyc has is used by a runtime case compared with
bpftrace 0.27 (issue 31: "our own case for each documented feature runs
side by side with 0.27").

The features are plyc's own tables of its bpftrace front end, not a list
written here: the functions and aggregations it lowers (lower.py's
FUNCTIONS, AGGREGATIONS), its builtin variables (the names of its tables
of variables and of 0.27's macros of none or one argument: builtins.py,
stdlib.py, lower.py), printf's conversions and length modifiers
(plyc/printf.py), its probe types and their short names (probes.py), its
config variables (config.py's ACCEPTED) and its type forms (lower.py's
INT_TYPES and the forms the parser reads: casts to pointers, arrays,
string[N], typeof, sizeof, offsetof, a typed let).

A case counts when its `=== compare` section names `bpftrace 0.27`
(tests/test_bpftrace_compat.py runs it under 0.27 and holds its output to
the case's stdout, which test_runtime.py holds plyc's tracer to) and
0.27 prints what plyc prints: a case with `compare-0.27-stdout` lines
(a difference docs/bpftrace.md lists) does not. A use is found in the
case's script as plyc's parser reads it: a call, an identifier, a probe's
provider as written, a config block's item or a `config.NAME` read, a
printf (errorf, warnf) format's conversions, a type as written.

What cannot run here is on UNRUNNABLE below, each with why; what plyc
refuses by name (lower.py's FUNCTIONS_NOT_YET, config.py's REFUSED, the
probe types it has no provider for) is not a feature of its and is left
out, its refusal tested in test_bpftrace_lower.py."""
import re

import pytest

from plyc import printf, providers
from plyc.frontends.bpftrace import builtins as BT
from plyc.frontends.bpftrace import config, formats, lower, parser, probes, stacks, stdlib
from plyc.frontends.bpftrace import ast as A
from plyc.frontends.bpftrace.trees import walk
from test_bpftrace_compat import built_for, versions
from test_runtime import CASES, parse_case, substituter

# Features no case can run on this machine, by kind, each with why (they
# run where a reason says, or nowhere the tests reach).
UNRUNNABLE = {
    "probe": {
        "kprobe": "this kernel (6.18, the host's) has no kprobes; they run in the vm guests' cases "
                  "(tests/vm/cases/*.test), which 0.27 does not run",
        "k": "kprobe's short name (the same)",
        "kretprobe": "no kretprobes on this kernel (the vm guests' cases)",
        "kr": "kretprobe's short name (the same)",
        "kfunc": "no fentry on this kernel (its BTF has no trampolines here); the vm guests' cases",
        "f": "kfunc's short name (the same)",
        "fentry": "kfunc's other name (the same)",
        "kretfunc": "no fexit on this kernel; the vm guests' cases",
        "fr": "kretfunc's short name (the same)",
        "fexit": "kretfunc's other name (the same)",
        "hardware": "a hardware PMU event: this machine (a virtual one) has no PMU "
                    "(/sys/bus/event_source/devices/ has no cpu; 0.27 cannot attach one either)",
        "h": "hardware's short name (the same)",
    },
    "function": {
        "fail": "stops the build, as 0.27 stops compiling: no tracer runs (its messages are held in "
                "tests/test_bpftrace_stdlib.py)",
        "path": "0.27 refuses it on this machine (its d_path probe loads an fentry program, which this "
                "kernel refuses); bt-iter-path runs plyc's alone",
        "percpu_kaddr": "this kernel's /proc/kallsyms lists no data symbols (no CONFIG_KALLSYMS_ALL): "
                        "neither plyc's tracer nor 0.27 finds a per-CPU variable's address to load",
        "unwatch": "0.27.1 has no code for it and ends with a segmentation fault; tests/test_watchpoint.py "
                   "runs plyc's",
        "socket_cookie": "needs a kfunc (fentry) probe: none on this kernel",
        "override": "needs a kprobe on an ALLOW_ERROR_INJECTION function: no kprobes here",
        "write_user": "this kernel is locked down (integrity mode), which takes bpf_probe_write_user from "
                      "every program, 0.27's too (\"cannot use helper\"); bt-write-user (tests/vm/cases) "
                      "runs plyc's in Debian's kernels, test_bpftrace_write_user.py the refusal here",
    },
    "variable": {
        "sarg0": "0.27 aborts on sargN (a BUG in its type resolver): bt-stack-args compares it with 0.17",
        "has_cpid": "plyc prints what bpftrace's documentation says (true with -c), 0.27.1 the opposite: "
                    "bt-has-cpid runs it beside 0.27 with 0.27's lines apart (docs/bpftrace.md)",
    },
}

# The probe-context variables lower.py reads by their form, not from a
# table: args (a tracepoint's, rawtracepoint's, kfunc's fields), argN,
# sargN, ctx.
CONTEXT_FORMS = {"args": r"args", "arg0": r"arg\d+", "sarg0": r"sarg\d+", "ctx": r"ctx"}

# Type forms beside lower.py's INT_TYPES: what the parser reads as a type.
TYPE_FORMS = ("string", "struct", "union", "enum", "pointer", "array", "string[N]", "typeof", "sizeof",
              "offsetof", "typed let", "C name")


def features() -> dict:
    """kind -> the names plyc's tables give it."""
    funcs = set(lower.FUNCTIONS) | set(lower.AGGREGATIONS)
    variables = {n for n, ((lo, _), _) in stdlib.FUNCTIONS.items() if lo == 0} | set(BT.VARIABLES) | \
        set(lower.VARIABLES) | set(CONTEXT_FORMS) | {"kstack", "ustack"}
    # the names of functions that are also variables are variables (comm(): stdlib's macro)
    funcs -= {n for n in variables if n not in stacks.FUNCTIONS and n not in ("comm", "pid", "tid", "nsecs")}
    # the probe types plyc has a provider for (the parser knows the others,
    # asyncwatchpoint, test and bench, to refuse them by name)
    lowered = [t for t in probes.PROBE_TYPES if providers.lookup(t.name) is not None]
    probe_names = {t.name for t in lowered} | {s for t in lowered for s in t.short}
    return {
        "function": funcs,
        "variable": variables,
        # (ply's %v is text in bpftrace, as 0.27 prints it: bt-probe-short-names)
        "printf": {f"%{c}" for c in printf.CONVERSIONS if c not in formats.NOT_BPFTRACE} |
                  {f"length {n}" for n in printf.LENGTHS},
        "probe": probe_names,
        "config": set(config.ACCEPTED),
        "type": set(lower.INT_TYPES) | set(TYPE_FORMS),
    }


def matches_027(case: dict) -> bool:
    """Whether the case runs under bpftrace 0.27 and prints what plyc prints."""
    return "bpftrace" in case and "compare" in case and "0.27" in versions(case) and \
        built_for(case) == "0.27" and not any(k.startswith("compare-0.27-") for k in case)


def _type_uses(tn: A.TypeName) -> set:
    out = set()
    words = tn.words
    if words[0] in ("struct", "union", "enum"):
        out.add(words[0])
    elif tn.base == "typeof":
        out.add("typeof")
    elif tn.base in lower.INT_TYPES or tn.base == "string":
        out.add(tn.base)
    elif not set(words) & parser.TYPE_WORDS or len(words) > 1:
        out.add("C name")       # the kernel's or C's name: (uint64_t)x, (unsigned long)x
    if tn.pointers:
        out.add("pointer")
    if tn.array_len is not None:
        out.add("string[N]" if tn.base == "string" else "array")
    return out


def uses(text: str) -> dict:
    """kind -> the names a bpftrace script uses."""
    out = {k: set() for k in ("function", "variable", "printf", "probe", "config", "type")}
    prog = parser.parse(text)
    for n in walk(prog):
        if isinstance(n, A.Call):
            name = stdlib.builtin_name(n.name)
            out["function"].add(name)
            if not n.args:
                out["variable"].add(name)      # 0.27's macro of the variable
            if name in ("printf", "errorf", "warnf") and n.args and isinstance(n.args[0], A.Str):
                try:
                    parts = printf.parse(n.args[0].value.decode("utf-8", "replace"))
                except printf.FormatError:
                    parts = []
                for p in parts:
                    if not isinstance(p, str):
                        out["printf"].add(f"%{p.conv}")
                        if p.length:
                            out["printf"].add(f"length {p.length}")
        elif isinstance(n, A.Ident):
            name = stdlib.builtin_name(n.name)
            out["variable"].add(name)
            for form, pattern in CONTEXT_FORMS.items():
                if re.fullmatch(pattern, name):
                    out["variable"].add(form)
        elif isinstance(n, A.ProbeSpec):
            written = n.text.split(":")[0].strip()
            out["probe"] |= {written, n.provider}
            t = probes.BY_NAME.get(written)
            if t is not None:
                out["probe"].add(t.name)
        elif isinstance(n, A.ConfigItem):
            out["config"].add(config.canonical(n.name))    # BPFTRACE_MAX_MAP_KEYS too
        elif isinstance(n, A.Field) and config.is_record(n.obj):
            out["config"].add(n.name)
        elif isinstance(n, A.TypeName):
            out["type"] |= _type_uses(n)
        elif isinstance(n, A.Sizeof):
            out["type"].add("sizeof")
        elif isinstance(n, A.Offsetof):
            out["type"].add("offsetof")
        elif isinstance(n, A.Let) and n.type is not None:
            out["type"].add("typed let")
    return out


def covered() -> dict:
    """kind -> name -> the cases (compared with 0.27, matching) that use it."""
    out = {}
    subst = substituter("/bin/workload", "/bin/usdt")      # paths as the parser reads them
    for path in CASES:
        case = parse_case(path)
        if not matches_027(case):
            continue
        for kind, names in uses(subst(case["bpftrace"])).items():
            for name in names:
                out.setdefault(kind, {}).setdefault(name, []).append(path.stem)
    return out


FEATURES = features()
COVERED = covered()


@pytest.mark.parametrize("kind", sorted(FEATURES))
def test_each_feature_has_a_case_compared_with_027(kind):
    missing = sorted(n for n in FEATURES[kind] - set(COVERED.get(kind, {})) if n not in UNRUNNABLE.get(kind, {}))
    assert not missing, f"bpftrace {kind}s with no runtime case compared with 0.27 and matching it: " \
                        f"{', '.join(missing)} (tests/runtime/bt-*.test, === compare: bpftrace 0.27)"


def test_the_allow_list_names_only_features_plyc_has():
    for kind, names in UNRUNNABLE.items():
        stale = sorted(set(names) - FEATURES[kind])
        assert not stale, f"UNRUNNABLE[{kind!r}] names what plyc's tables do not: {stale}"


def test_the_allow_list_holds_only_what_no_case_runs():
    # a feature that a matching case runs after all comes off the list; a
    # probe type a case names for its missing-probe handling
    # (bt-missing-kfuncs: nothing attaches) is not run there
    ran = {(k, n) for k, names in UNRUNNABLE.items() for n in names if k != "probe" and n in COVERED.get(k, {})}
    assert not ran, f"UNRUNNABLE lists features a case compared with 0.27 runs: {sorted(ran)}"


def test_the_collector_sees_each_kind():
    # the collector on a script of its own, so that a kind no case uses is
    # not found covered by a collector that misses it
    got = uses('config = { BPFTRACE_MAX_STRLEN = 64 } kprobe:f, t:syscalls:sys_enter_read '
               '{ let $x: uint8 = 1; printf("%lld %rx\\n", (int64)sizeof(struct s), buf(args.buf, 2)); '
               '@[comm(), pid] = count(); print(config.on_stack_limit); $p = (uint64_t)arg0; $q = (int8[8])0; '
               '$r = (typeof($x))offsetof(struct s, a); $s = (string[4])"abc"; }')
    assert got["function"] == {"printf", "buf", "comm", "count", "print"}
    assert got["config"] == {"max_strlen", "on_stack_limit"}
    assert got["probe"] == {"kprobe", "t", "tracepoint"}
    assert got["printf"] == {"%d", "length ll", "%rx"}
    # (a call of no argument counts as the variable's macro: count() is none)
    assert got["variable"] & FEATURES["variable"] == {"comm", "pid", "args", "arg0"}
    assert got["type"] == {"uint8", "typed let", "sizeof", "struct", "int64", "C name", "array", "int8",
                           "typeof", "offsetof", "string", "string[N]"}


def test_what_is_left_out_is_refused_by_name():
    # the probe types, functions and config variables plyc's tables refuse
    # are no features of its: a build says so where they are written
    from btlower import err
    for t in probes.PROBE_TYPES:
        if providers.lookup(t.name) is None:
            spec = ":".join([t.name] + ["1"] * t.parts[0])      # as many parts as it takes
            assert err(f"{spec} {{ print(1); }}").startswith(
                f"tool.bt:1:1: error: {t.name} probes are not supported by plyc yet\n")
    for name in lower.FUNCTIONS_NOT_YET:
        assert f"{name}() is not supported by plyc yet" in err(f"BEGIN {{ {name}(1); }}")
    for name in config.REFUSED:
        assert f"config variable {name} is not supported by plyc yet" in \
            err(f"config = {{ {name} = 1 }} BEGIN {{ print(1); }}")
