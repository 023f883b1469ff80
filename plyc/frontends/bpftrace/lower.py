"""bpftrace's rules, lowering its tree to the core IR.

The front end's passes, run in order by plyc.ir.passes.run (each stops the
compilation if it reported errors):
  refuse   what plyc does not lower yet, each by name with its span, all at once;
           the preamble evaluated as on a kernel with BTF (preamble.py)
  resolve  each spec's parts given to its provider (specs.py) and resolved
  learn    a silent typing run: the maps' and locals' types
  type     names resolved and typed, the IR built:
           - a map assigned count()/sum()/min()/max()/avg() anywhere is a
             per-CPU aggregation, any other map a plain hash map;
           - `$x` a scratch local, `$1` a positional parameter, `cpid` -c's pid;
           - `args->f` and `args.f` a tracepoint field, other `.`/`->` a kernel
             member through BTF (bpftrace follows a pointer with either);
           - a predicate is an `if` around the body, `unroll(n)` n copies of
             its body, `x op= y` and `x++` are `x = x op y`;
           - integers print as plain numbers (no durations for nsecs), as
             bpftrace prints them.
The typing of operators, casts, kernel members, aggregations and the
shared builtins (printf, str, exit, print, clear, ksym) is plyc/sema's, which
every front end types through; this module walks bpftrace's tree and calls it
with typed IR, and gives the builtins' rules the answers about its tree. The
tree is never changed; the IR is new nodes."""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Optional

from ... import aggregations as AGG
from ... import arch
from ... import builtins as B
from ... import providers
from ... import types as T
from ...diag import Collector, Diagnostic, PlycError, did_you_mean
from ...ir import intrinsics as I
from ...ir import nodes as ir
from ...ir import passes
from ...kernel_types import KernelTypes
from ...sema import Sema, TypeRef, looks
from ...sema.typer import Bail
from . import ast as A
from . import builtins as BT
from . import abi, aggreads, blocks, formats, byvalue, cdefs, cimports, config, constants, decls, division, effects, events, fargs, headers, lets, loops, macros, pointers, preamble, scopes, signs, smalltypes, stacks, structs, typenames
from . import aggwords, probes
from . import specs as S
from . import stdlib
from . import kvalues, literals, meta, positionals, tuples
from . import typeof
from . import values as V
from .trees import const_value, walk

# bpftrace's aggregations as the table (plyc/aggregations.py) names them.
AGG_NAMES = {"count": "count", "sum": "sum", "min": "min", "max": "max", "avg": "avg",
             "hist": "hist", "lhist": "lquantize", "stats": "stats", "tseries": "tseries"}
AGGREGATIONS = tuple(AGG_NAMES)
# bpftrace's functions plyc lowers: the shared builtins' rules, delete(), and
# this front end's own (builtins.py).
SHARED = ("printf", "exit", "str", "print", "clear", "ksym", "uptr")
FUNCTIONS = SHARED + ("delete", "find", "time", "zero") + tuple(BT.FUNCTIONS) + tuple(stacks.FUNCTIONS) + \
    tuple(events.FUNCTIONS) + tuple(V.FUNCTIONS) + tuple(stdlib.FUNCTIONS) + tuple(stdlib.EVENTS) + \
    tuple(meta.FUNCTIONS)
# bpftrace's other functions, refused by name until they are lowered.
FUNCTIONS_NOT_YET = frozenset(
    "skboutput print_map".split())
# bpftrace's builtin variables as plyc's names (pid and tid: builtins.py's).
VARIABLES = {"uid": "uid", "gid": "gid", "cpu": "cpu",
             "comm": "comm", "kstack": "stack"}
VARIABLES_NOT_YET = frozenset()
INT_TYPES = {"int8": "s8", "uint8": "u8", "int16": "s16", "uint16": "u16", "int32": "s32",
             "uint32": "u32", "int64": "s64", "uint64": "u64", "bool": "bool"}
# Operators whose value is current bpftrace's bool (printed true/false).
BOOL_OPS = ("==", "!=", "<", "<=", ">", ">=", "&&", "||")


def tseries_call(low, call: A.Call) -> A.Call:
    """tseries(x, interval_ns, n[, aggregator]) as the table's four arguments
    (no aggregator: "", the last value), its argument count checked as
    bpftrace words it."""
    if not 3 <= len(call.args) <= 4:
        more = "at least 3" if len(call.args) < 3 else "at most 4"
        low.err(f"tseries() requires {more} arguments ({len(call.args)} provided)", call.span)
    if len(call.args) == 4:
        return call
    return replace(call, args=[*call.args, A.Str(b"", span=call.span)])


def as_bool(typ: T.Type) -> T.Type:
    """A 0/1 integer that prints as bpftrace 0.2x prints a bool."""
    return replace(typ, denotes="bool")


def _provider(spec: A.ProbeSpec):
    """The provider of a spec as written (None: a probe type plyc has none for)."""
    return providers.lookup(spec.provider)


def _iterates(probe: A.Probe) -> bool:
    """Whether every attach point is an iterator's: `ctx` is their context."""
    return all(_provider(s) is not None and _provider(s).var("ctx") is not None for s in probe.specs)


def not_yet(what: str) -> str:
    return f"{what} is not supported by plyc yet"


# --- refuse: what is not lowered yet, found in one walk ------------------------

def _prints_tuple(n) -> bool:
    # (a key-less map in it is its value, not the map print() would dump)
    return (isinstance(n, A.Call) and n.name == "print" and len(n.args) == 1
            and isinstance(n.args[0], A.Tuple) and 1 < len(n.args[0].items) < B.MANY
            and not any(isinstance(i, A.Map) and i.keys is None for i in n.args[0].items))


# bpftrace 0.27 gives a string one byte more than max_strlen below this
# (its pad_max_strlen): from it on, a string is max_strlen bytes, its NUL
# among them, and never printed as cut.
PAD_BELOW = 1024


def refuse(st: "Lowering", diag: Collector):
    prog = macros.expand(st.ast, diag, frozenset(FUNCTIONS))    # macros are gone from here on
    prog = meta.expand(prog, st.version)       # assert(), container_of(), str(123): 0.27's
    # variables: 0.27's block scopes, or 0.17's probe-wide ones (blocks.py: a block expression's own)
    st.ast = prog = blocks.scope(prog, diag) if st.version == "0.17" else scopes.scope(prog, st.scope_errors)
    st.ast = prog = blocks.aggregations_last(prog, AGGREGATIONS)
    st.snapshots = effects.check(prog, diag)
    st.preamble = preamble.evaluate(prog.preamble, diag)
    st.preamble.includes[:0] = headers.include_lines(st.include_files)
    st.cdefs = cdefs.parse(st.preamble.cdefs, st.arch, diag)
    for name, value in st.cdefs.constants.items():     # enumerators
        st.preamble.constants.setdefault(name, A.Int(value, str(value)))
    st.config = config.evaluate(prog.config, diag, st.env_items)
    decls.check(prog.decls, diag)
    if st.config.strsize is not None:
        st.strsize = st.config.strsize
    st.max_strlen = st.strsize
    if st.version != "0.17" and st.strsize < PAD_BELOW:
        # 0.27 reads a string of max_strlen N (under 1024) into N + 1 bytes:
        # one that fills N is taken as cut and printed with its trailer
        st.strsize, st.str_cut = st.strsize + 1, True
    for probe in prog.probes:
        for n in walk([probe.predicate, probe.body]):
            what = None
            if isinstance(n, A.Call) and n.name in FUNCTIONS_NOT_YET:
                what = f"{n.name}()"
            elif isinstance(n, A.Call) and n.name == "typeof":     # typeof.py and lets.py read the others
                what = "typeof() outside a cast, sizeof() or 'let $x: typeof(e)'"
            elif isinstance(n, A.Ident) and n.name in VARIABLES_NOT_YET and not _iterates(probe):
                what = f"'{n.name}'"
            if what:
                span = n.name_span if isinstance(n, A.Call) else n.span
                diag.error(not_yet(what), span)
        for loop in walk([probe.body]):
            if isinstance(loop, A.While):   # delete()'s value is read before its statement
                for n in walk([loop.cond]):
                    if isinstance(n, A.Call) and n.name in ("delete", "find"):
                        diag.error(not_yet(f"{n.name}()'s value in a while condition"), n.name_span)
    _one_iterator(prog, diag)


def _one_iterator(prog: A.Program, diag: Collector):
    """An iter probe runs alone beside BEGIN and END: the run ends with its
    iteration (bpftrace 0.27 runs one, and aborts on any other probe)."""
    specs = [s for p in prog.probes for s in p.specs if not (_provider(s) and _provider(s).runs_once)]
    iters = [s for s in specs if _provider(s) and _provider(s).ends_run]
    if iters and len(specs) > 1:
        other = next(s for s in specs if s is not iters[0])
        diag.error(f"{other.text} beside {iters[0].text}: a script with an iter probe has no other probe "
                   "than BEGIN and END", other.span,
                   "the iteration runs once, then the run ends (as bpftrace's)")


# --- resolve ---------------------------------------------------------------------

@dataclass(eq=False)
class Unit:
    """A probe body under one of its specs, on its way to an ir.Probe."""
    index: int
    probe: A.Probe
    spec: ir.Spec
    target: object
    body: A.Stmt
    written: A.ProbeSpec = None     # the spec as the script wrote it (for `probe`)


class Lowering:
    """The state bpftrace's passes share (what plyc/sema's Sema reads)."""

    def __init__(self, program: A.Program, strsize: int, btf_path: Optional[str], arch: str):
        self.ast = program
        self.env: dict = {}
        self.build_env: dict = {}           # the build machine's environment (headers.py)
        self.env_items: list = []           # its BPFTRACE_* variables as config items
        self.include_dirs: tuple = ()       # -I DIR, searched before the system's headers (headers.py)
        self.include_files: tuple = ()      # --include FILE, before the script's #includes
        self.strsize = strsize              # a string's bytes, its NUL among them
        self.max_strlen = strsize           # the script's max_strlen (config.max_strlen)
        self.str_cut = False                # strings read at strsize are cut at strsize - 1 (PAD_BELOW)
        self.version = "0.27"
        self.ktypes = KernelTypes(btf_path)
        self.arch = arch
        self.units: list = []
        self.maps: dict = {}                # what `learn` found, completed by `type`
        self.locals: dict = {}              # unit index -> its $locals' types, from `learn`
        self.preamble = preamble.Preamble()
        self.config = config.Config()
        self.cdefs = cdefs.Definitions()
        self.ir: Optional[ir.Program] = None
        self.time_formats: list = []        # strftime()'s formats, in order of first use (values.py)
        self.enum_tables: dict = {}         # an enum's words, ("btf", id) of a kernel's -> its table's number (structs.enum_type, kvalues)
        self.unsafe = False                 # built with --unsafe: system(), signal(), override()
        self.options: dict = {}             # getopt()'s named options by name (stdlib.py)
        self.snapshots: set = set()         # $variable reads taken before a hoisted change (effects.py)
        self.arg_bounds: dict = {}          # unroll($N)'s checks at start-up (loops.py), by place
        self.warnings: list = []            # Diagnostics printed at build time (abi.py's values)
        self.warned: set = set()            # the names abi.py's warnings were given for
        self.scope_errors: dict = {}        # scopes.py's errors by place, said by the Typer
        self.cfuncs: dict = {}              # the imported C files' functions by name (cimports.py)
        self.cfuncs_used: list = []         # the prototypes of those the script calls, for the C
        self.reads_cpid = False             # the script reads cpid (0 without -c: warned of at start)
        self.asks_cpid = False              # ... or asks has_cpid() first (then not)


def resolve(st: Lowering, diag: Collector):
    pairs, written, fields = [], [], []
    for probe in st.ast.probes:
        for spec in probe.specs:
            try:
                core, f = S.to_ir(spec)
                pairs.append((probe, core))
                fields.append(f)
                written.append(spec)
            except PlycError as err:
                diag.diags.extend(err.diags)
    if diag.diags:
        return
    targets = providers.resolve_specs([s for _, s in pairs], diag, fields, arch=st.arch)
    for (probe, _), (spec, target), bt_spec in zip(pairs, targets, written):
        if target is not None:
            if len(probe.specs) > 1:
                # one of several alternatives (dcsnoop's lookup_fast.constprop.*,
                # biolatency's __blk_account_io_start): where the device lacks it,
                # the others run, as in bpftrace (kprobes: providers/kprobe.py)
                target.extra["group"] = st.ast.probes.index(probe) + 1
            body = probe.body
            if probe.predicate is not None:
                body = A.If(probe.predicate, probe.body, None, span=probe.predicate.span)
            st.units.append(Unit(len(st.units), probe, spec, target, body, bt_spec))


def learn(st: Lowering, diag: Collector):
    """Map and local types from a silent run (a map may be read before the probe writing it)."""
    Typer(st, diag, final=False).run()


def type_program(st: Lowering, diag: Collector):
    st.ir = Typer(st, diag, final=True).run()
    # scopes.py's errors no statement reached (one failed before) and no other error is at
    said = {d.span for d in diag.diags}
    for (span, _), (message, note) in st.scope_errors.items():
        if span not in said:
            diag.error(message, span, note)
    if st.ir is not None:
        decls.apply(st.ast.decls, st.ir.maps, diag)
        st.ir.limits = dict(st.config.limits)
        st.ir.time_formats = st.time_formats
        st.ir.options = [opt for opt, _ in st.options.values()]
        st.ir.enums = [kvalues.enumerators(st, words) for words in st.enum_tables]
        st.ir.args_optional = True      # bpftrace reads a $N not given as 0 or ""
        st.ir.args_wide = positionals.wide_args(st.ast)
        st.ir.arg_bounds = list(st.arg_bounds.values())
        st.ir.missing_probes = st.config.missing_probes
        st.ir.license = st.config.license
        st.ir.pid_filter = True     # the tracer's -p PID filters kernel probes, as bpftrace 0.27's
        if st.reads_cpid and not st.asks_cpid:
            # 0.27.1 warns so as it reads cpid (0.17 refuses the script)
            st.ir.no_target_warning = "no command runs (-c CMD): the script's cpid is 0"
        st.ir.warnings = st.warnings
        st.ir.c_files = list(st.ast.c_files)
        st.ir.c_functions = st.cfuncs_used


def addresses(st: Lowering, diag: Collector):
    """Addresses bpftrace prints in hex (plyc/sema/looks.py)."""
    looks.attach(st.ir, looks.BPFTRACE)


def pinned_iterators(st: Lowering, diag: Collector):
    """What a pinned iterator cannot show (providers/iterators.py)."""
    from ...providers import iterators
    for p in st.ir.probes:
        iterators.check_pinned(p, diag)


PASSES = (refuse, events.refuse_unsafe, resolve, cimports.load, learn, type_program) + passes.on_ir(passes.CORE) + \
    (pinned_iterators, addresses)


def lower(program: A.Program, btf_path: Optional[str] = None, arch: str = "x86_64",
          strsize: int = 64, build_env: Optional[dict] = None, unsafe: bool = False,
          include_dirs: tuple = (), include_files: tuple = (), version: str = "0.27",
          env_items: Optional[list] = None) -> ir.Program:
    """The IR of a bpftrace program; strings are 64 bytes, as bpftrace's
    BPFTRACE_STRLEN default. build_env: the build machine's environment
    (where kernel headers are: headers.py). version: the bpftrace whose
    output the tracer prints (`--bpftrace-output`), where a value's
    lowering differs (`func` in a uretprobe). env_items: the config items
    of build_env's BPFTRACE_* variables, where the caller has read them
    (config.from_environment)."""
    st = Lowering(program, strsize, btf_path, arch)
    st.build_env = {} if build_env is None else build_env
    st.env_items = config.from_environment(st.build_env)[0] if env_items is None else env_items
    st.include_dirs, st.include_files = tuple(include_dirs), tuple(include_files)
    st.unsafe = unsafe
    st.version = version
    passes.run(PASSES, st)
    return st.ir


# --- type ----------------------------------------------------------------------------

def map_keys(ref: A.Map) -> list:
    """`@m[a, b]` and `@m[(a, b)]` name the same key."""
    keys = ref.keys or []
    if len(keys) == 1 and isinstance(keys[0], A.Tuple) and not keys[0].names:
        return keys[0].items
    return keys


# C's fixed-width names, the kernel's UAPI ones: casts 0.27 reads as its own
# (`(uint64_t)1`, `(__u16)x`), whether or not the kernel's BTF has them.
C_INT_TYPES = {**{f"{u}int{n}_t": f"{u[:1] or 's'}{n}" for u in ("u", "") for n in (8, 16, 32, 64)},
               **{f"__{s}{n}": f"{s}{n}" for s in "us" for n in (8, 16, 32, 64)}}


def type_ref(tn: A.TypeName) -> TypeRef:
    """A bpftrace type name in the core's words (uint32 is u32)."""
    words = tn.words
    if len(words) == 1 and words[0] in C_INT_TYPES:
        words = (C_INT_TYPES[words[0]],)
    words = (INT_TYPES[words[0]],) if len(words) == 1 and words[0] in INT_TYPES else words
    return TypeRef(words, tn.pointers, tn.span)


class Typer(Sema):
    """bpftrace's walk of its tree, typed through the shared rules
    (plyc/sema) with bpftrace's names and rules."""

    STRING_COMPARE_HINT = "compare strings with strcmp(a, b) or =="
    # the shared builtins' rules where bpftrace's differ (printf's C lengths, 0.27's words)
    printf_conversions = formats.printf_conversions
    printf_accepts = formats.printf_accepts
    AGG_WORDS = aggwords.WORDS

    def __init__(self, st: Lowering, diag: Collector, final: bool):
        super().__init__(st, diag, final)
        # A map is an aggregation when some assignment gives it one.
        self.agg_funcs = aggreads.functions(st.ast.probes, AGGREGATIONS)     # @name -> "count", ...
        self.agg_maps = set(self.agg_funcs)
        # maps given keys somewhere: print(@m) of one is its dump, wherever it is written
        self.keyed_maps = {n.name for n in walk([p.body for p in st.ast.probes]) if isinstance(n, A.Map) and n.keys}
        self.loop_kinds: list = []      # the loops around the statement being typed (loops.py)
        self.pairs: dict = {}           # a for loop's $kv -> its parts' locals (loops.py)
        self.declared: dict = {}        # (probe, $name) -> its `let $x: type` (lets.py)
        self.assigned_values: set = set()   # the probe's $names given a value by `=` (assigned_names)
        self.before: list = []          # statements to run before the one being typed (delete()'s value, blocks.py)
        self.temps: dict = {}           # a value's own local by its node (blocks.py)
        # the address index_place made last for an element of structs (p[i],
        # arr[$i]): expr_Index makes that one, and only that one, the struct
        self._struct_element: Optional[ir.Expr] = None
        self.kvalue_reads: dict = {}    # id(probe) -> the members its kernel struct values read (kvalues.py)
        # (probe, $name) and (None, @map) whose assignment was an error, said once: their reads
        # are dropped silently. The final pass's only, where every Bail follows an error said.
        self.unassigned: set = set()
        self.text_positionals = positionals.text_uses(st.ast)    # $N only printed: read as given (positionals.py)

    def err(self, message: str, span, note: str = None):
        super().err(scopes.shown(message), span, scopes.shown(note))

    def type_unit(self, u) -> ir.Probe:
        self.unit_body = u.body         # the values its variables are given (smalltypes.py)
        return super().type_unit(u)

    def read_str(self, size: int) -> T.Type:
        """0.27 reads at most its max_strlen's bytes (str(p, 2000) too), and
        marks a string read whole at that size cut (PAD_BELOW)."""
        if self.st.version == "0.17":
            return T.Str(size)
        size = min(size, self.st.strsize)
        return T.Str(size, cut=self.st.str_cut and size == self.st.strsize)

    def stmt(self, s):
        """A statement, after what its expressions need run first."""
        outer, self.before = self.before, []
        try:
            node = super().stmt(s)
            before = self.before
        finally:
            self.before = outer
        if before:
            return ir.Block(before + ([node] if node is not None else []), span=s.span)
        return node

    def assigned_names(self, body) -> set:
        # the $names given a value by `=` (not `let`): an untyped `let $x;`
        # of one of them takes the type of its first value (stmt_Let)
        finds = {n.args[2].name for n in walk(body) if effects.finds(n)}     # find(@m, k, $v) assigns $v
        self.assigned_values = {n.target.name for n in walk(body)
                                if isinstance(n, A.Assign) and isinstance(n.target, A.Var)} | finds
        return {n.target.name for n in walk(body)
                if isinstance(n, (A.Assign, A.IncDec)) and isinstance(n.target, A.Var)} | finds | \
            {n.var.name for n in walk(body) if isinstance(n, A.Let)} | \
            {n.var.name for n in walk(body) if isinstance(n, A.For) and isinstance(n.iterable, A.Range)}

    # --- statements ---------------------------------------------------------------

    def stmt_Block(self, s: A.Block):
        return self.block(s.stmts, s.span)

    def stmt_If(self, s: A.If):
        aggreads.check_operand(self, s.cond, s.span, "condition")
        return self.if_(lambda: self.cond(s.cond), s.then, s.other, s.span)

    def stmt_ExprStmt(self, s: A.ExprStmt):
        e = s.expr
        if isinstance(e, A.IncDec):
            one = A.Int(1, "1", span=e.span)
            return self.stmt_Assign(A.Assign(e.target, e.op[0] + "=", one, span=s.span))
        if isinstance(e, A.BlockExpr):
            # a block expression as a statement (a macro's `x;` given
            # `{ printf("hi") }`): its statements, then its value's effects
            return self.block([*e.stmts, A.ExprStmt(e.value, span=e.value.span)], s.span)
        if isinstance(e, A.Ternary) and (isinstance(e.then, A.Call) or isinstance(e.other, A.Call)):
            # `c ? printf(..) : exit()`: 0.27 runs one branch for its effect, as if/else
            def branch(x):
                return A.Block([A.ExprStmt(x, span=x.span)], span=x.span)
            return self.stmt_If(A.If(e.cond, branch(e.then), branch(e.other), span=s.span))
        if not isinstance(e, A.Call):
            # bpftrace 0.27 runs it with a warning ("Return value discarded"):
            # typed (its errors told), what it runs first kept, the value dropped
            where = ("discarded", e.span.line, e.span.col, id(e.span.origin))
            if where not in self.st.warned:     # once, however often the probe is lowered
                self.st.warned.add(where)
                self.st.warnings.append(Diagnostic("this expression's value is discarded", e.span, "warning"))
            self.expr(e)
            return None
        if e.name in AGGREGATIONS:
            self.err(f"{e.name}() must be assigned to a map, e.g. @x = {e.name}("
                     f"{AGG.AGGREGATIONS[AGG_NAMES[e.name]].example_args})", e.span)
        if e.name == "delete":
            return self.delete(e, s.span)
        node = self.call(e, statement=True)
        if isinstance(node, ir.Stmt):
            node.span = s.span
            if e.name == "exit":
                # bpftrace's exit() ends the probe too: nothing after it runs.
                return ir.Block([node, ir.Return(span=s.span)], span=s.span)
            return node
        return ir.CallStmt(node, span=s.span)

    def stmt_Assign(self, s: A.Assign):
        target, value = s.target, s.value
        if isinstance(target, A.Ident):                 # `_ = expr`: evaluated, discarded
            x = self.expr(value)
            return ir.CallStmt(x, span=s.span) if isinstance(x, ir.Call) else None
        if s.op != "=":
            value = A.Binary(s.op[:-1], target, value, span=s.span)
        if isinstance(target, A.Var):
            try:
                decl = lets.declared(self, target.name)
                x = self.expr(value) if decl is None else lets.convert(self, target.name, decl, value, value.span)
                byvalue.refuse_stored(self, x, "$" + target.name, value.span)
                return self.set_local(target.name, x, s.span, value.span)
            except Bail:
                # its reads are not errors of their own ("read before it is assigned")
                if self.final:
                    self.unassigned.add((id(self.probe), target.name))
                raise
        if s.op == "=":
            aggreads.check_copy(self, target, value, s.span)
        if target.name in self.agg_maps:
            if not (isinstance(value, A.Call) and value.name in AGGREGATIONS):
                self.err(f"{target.name} holds an aggregation elsewhere; it can't be assigned a value "
                         "here", value.span)
            return self.agg_assign(target, value, s.span)
        held = self.maps.get(target.name)
        try:
            if isinstance(value, A.Ident) and stdlib.builtin_name(value.name) == "func" and \
                    held is not None and held.value_type == T.SYM:
                x = self.func(value.span, symbol=True)
            else:
                x = self.expr(value)
            self.check_storable(x, value.span)
            byvalue.refuse_stored(self, x, target.name, value.span)
        except Bail:
            if self.final:
                self.unassigned.add((None, target.name))    # as a variable's, above
            raise
        info, keys = self.map_ref(target, writing=True)
        return self.map_store(info, keys, x, s.span, value.span)

    def time(self, call: A.Call, statement: bool) -> ir.EmitEvent:
        """time([FMT]): the tracer prints the wall-clock time (default "%H:%M:%S\\n")."""
        if not statement:
            self.err("time() has no value", call.span)
        if len(call.args) > 1:
            self.err(f"time() takes 0 or 1 arguments, got {len(call.args)}", call.span)
        fmt = b"%H:%M:%S\n"
        if call.args:
            fmt = self.literal_string(call.args[0])
            if fmt is None:
                self.err("time()'s format must be a string literal", call.args[0].span)
        return self.event(call, ir.TIME, [], parts=[fmt.decode("utf-8", "replace")], arg_types=[])

    def whole_map_arg(self, call: A.Call) -> str:
        whole = self.whole_map(call.args[0]) if call.args else None
        if whole is None:
            self.err(f"{call.name}() takes a map, e.g. {call.name}(@name)", call.span)
        if whole[0] not in self.maps:
            self.err(f"no map named {whole[0]}", call.args[0].span)
        return whole[0]

    def zero(self, call: A.Call, statement: bool) -> ir.EmitEvent:
        """zero(@m): every value back to zero, the keys kept (the tracer does it)."""
        if not statement:
            self.err("zero() has no value", call.span)
        if len(call.args) != 1:
            self.err(f"zero() takes 1 argument, got {len(call.args)}", call.span)
        return self.event(call, ir.ZERO, map=self.whole_map_arg(call))

    def print_top(self, call: A.Call, statement: bool) -> ir.EmitEvent:
        """print(@m, top[, div]): the top largest entries, values divided by div."""
        if not statement:
            self.err("print() has no value", call.span)
        if len(call.args) > 3:
            self.err(f"print() of a map takes at most 3 arguments, got {len(call.args)}", call.span)
        name = self.whole_map_arg(call)
        top = self.const_int(call.args[1], "print()'s top must be a constant")
        div = self.const_int(call.args[2], "print()'s div must be a constant") if len(call.args) > 2 else 1
        if not 0 <= top < 1 << 32 or not 1 <= div < 1 << 32:
            self.err("print(@m, top, div) needs 0 <= top and 1 <= div, both 32-bit", call.span)
        return self.event(call, ir.PRINTMAP, map=name, parts=[top, div])

    def agg_assign(self, target: A.Map, value: A.Call, span) -> ir.Aggregate:
        agg = AGG.AGGREGATIONS[AGG_NAMES[value.name]]
        if value.name == "tseries":
            value = tseries_call(self, value)
        if value.name == "hist" and len(value.args) == 1:
            value = replace(value, args=[*value.args, A.Int(0, "0", span=value.span)])     # k: 0
        elif value.name == "hist" and len(value.args) != 2:
            self.err(f"hist() takes 1 or 2 arguments, got {len(value.args)}", value.span)
        info, keys = self.map_ref(target, writing=True)
        # bpftrace's aggregations hold plain numbers
        return self.aggregate(info, keys, agg, value.name, value, span, keeps_meaning=False)

    def stmt_Let(self, s: A.Let):
        scopes.error(self, s.span)
        if s.type is not None:
            typ = lets.declare(self, s)
            if s.value is None:         # bpftrace's zero of the type
                zero = A.Str(b"", span=s.span) if typ.kind == "str" else A.Int(0, "0", span=s.span)
                return self.stmt_Assign(A.Assign(s.var, "=", zero, span=s.span))
        elif s.value is None and s.var.name in self.assigned_values:
            # `let $x;`: declared, typed by what the probe assigns it (an inet
            # in tcpconnect.bt), zero of that type until then, as in 0.27:
            # each time it runs (in a loop's body), so zeroed here once its
            # type is known (the final run)
            self.defined.add(s.var.name)
            typ = self.probe.locals.get(s.var.name)
            if not self.final or typ is None:
                return None
            zero = ir.BytesConst(b"", type=typ) if typ.is_bytes else ir.IntConst(0, type=typ)
            return ir.SetLocal(s.var.name, zero, span=s.span)
        value = s.value if s.value is not None else A.Int(0, "0", span=s.span)
        return self.stmt_Assign(A.Assign(s.var, "=", value, span=s.span))

    def stmt_Unroll(self, s: A.Unroll):
        if isinstance(s.count, A.Positional) and s.count.index > 0:
            return loops.unroll_param(self, s)
        n = const_value(s.count)
        if n is None or not 1 <= n <= 100:
            self.err("unroll's count must be a constant from 1 to 100", s.count.span)
        return ir.Block([self.body(s.body) for _ in range(n)], span=s.span)

    def stmt_Jump(self, s: A.Jump):
        return loops.lower_jump(self, s)

    def stmt_While(self, s: A.While):
        return loops.lower_while(self, s)

    def stmt_For(self, s: A.For):
        return loops.lower_for(self, s)

    def delete_value(self, call: A.Call) -> ir.Expr:
        """delete()'s value (current bpftrace): whether the key was there, a
        bool. Read into a local of its own (has_key()'s test) and the key
        deleted, both before the statement that uses it."""
        span = call.span
        name = f"delete@{span.line}:{span.col}"
        typ = as_bool(T.S32)
        delete = self.delete(call, span)
        self.probe.locals[name] = typ
        self.defined.add(name)
        self.before.append(ir.SetLocal(name, ir.MapHas(delete.map, delete.keys, type=typ, span=span), span=span))
        self.before.append(delete)
        return ir.Local(name, type=typ)

    def find_value(self, call: A.Call) -> ir.Expr:
        """find(@m, k, $v) (0.27's stdlib): whether @m holds k, a bool, and
        $v set to k's value when it does. Run before the statement that
        uses it, as delete()'s value (effects.py says where it may not)."""
        args, span = call.args, call.span
        if len(args) != 3 or not isinstance(args[0], A.Map) or args[0].keys is not None or \
                not isinstance(args[2], A.Var):
            self.err("find() takes a map, a key and a $variable: find(@m, key, $v)", span)
        m, key, var = args
        if m.name in self.agg_maps:
            self.err(not_yet("find() of an aggregation's map"), m.span, "read it with @m[key]")
        info = self.maps.get(m.name)
        if info is not None and info.value_type is not None and not info.key_types:
            self.err(f"find() needs a map with keys; {m.name} has none", m.span)
        ref = A.Map(m.name, key.items if isinstance(key, A.Tuple) and not key.names else [key], span=span)
        info, keys = self.map_ref(ref, writing=False)
        name = f"find@{span.line}:{span.col}"
        typ = as_bool(T.S32)
        self.probe.locals[name] = typ
        self.defined.add(name)
        self.before.append(ir.SetLocal(name, ir.MapHas(info.name, keys, type=typ, span=span), span=span))
        store = self.stmt_Assign(A.Assign(var, "=", ref, span=span))
        self.before.append(ir.If(ir.Local(name, type=typ), store, None, span=span))
        return ir.Local(name, type=typ)

    def delete(self, call: A.Call, span):
        """`delete(@m[k])` (0.17) or `delete(@m, k)` (current)."""
        args = call.args
        if len(args) == 1 and isinstance(args[0], A.Map):
            ref = args[0]
        elif len(args) == 2 and isinstance(args[0], A.Map) and args[0].keys is None:
            key = args[1]
            ref = A.Map(args[0].name, key.items if isinstance(key, A.Tuple) and not key.names else [key], span=call.span)
        else:
            self.err("delete() takes a map element: delete(@m[key]) or delete(@m, key)", call.span)
        if ref.name in self.agg_maps:
            aggreads.check_delete(self, ref.name, call.span)
        info, keys = self.map_ref(ref, writing=False)
        return ir.MapDelete(info.name, keys, span=span)

    # --- maps ---------------------------------------------------------------------

    def map_ref(self, ref: A.Map, writing: bool) -> tuple:
        info = self.map_info(ref.name, ir.AGGREGATION if ref.name in self.agg_maps else ir.HASH, ref.span)
        exprs = map_keys(ref)
        keys = tuples.flatten_key(self, [self.expr(k) for k in exprs], exprs)
        # a tuple key's members were written as one expression
        spans = [k.span for k in exprs] if len(exprs) == len(keys) else [exprs[0].span] * len(keys)
        self.map_keys(info, keys, spans, ref.span, [None] * len(keys))
        return info, keys

    def whole_map(self, e) -> Optional[tuple]:
        if isinstance(e, A.Map) and e.keys is None:
            return e.name, e.name in self.agg_maps
        return None

    # --- the shared rules' questions ---------------------------------------------------

    def cond(self, e) -> ir.Expr:
        x = self.expr(e)
        return self.condition(x, e.span,
                              'compare strings with == or strncmp(a, b, n) == 0' if x.type.kind == "str" else None)

    def const_int(self, e, what: str = "expected a constant integer") -> int:
        self.literal(e)         # 0.27's refusal of it first, where it is
        val = const_value(e)
        if val is None:
            self.err(what, e.span)
        return val

    def literal_string(self, e) -> Optional[bytes]:
        return e.value if isinstance(e, A.Str) else None

    def is_positional(self, e) -> bool:
        return isinstance(e, A.Positional)

    # --- expressions ---------------------------------------------------------------

    def expr(self, e, statement: bool = False):
        if isinstance(e, A.Call):
            return self.call(e, statement)
        node = getattr(self, "expr_" + type(e).__name__)(e)
        node.span = e.span
        return node

    def expr_Int(self, e: A.Int):
        return self.int_const(e.value)

    def expr_Str(self, e: A.Str):
        return ir.BytesConst(e.value, type=T.literal_str(e.value))

    def expr_Var(self, e: A.Var):
        scopes.error(self, e.span)
        if e.name in self.pairs:
            return loops.whole_pair(self, e)
        if e.name not in self.scratch_names or e.name not in self.defined:
            if (id(self.probe), e.name) in self.unassigned:
                raise Bail()
            self.err(f"${e.name} is read before it is assigned", e.span)
        value = ir.Local(e.name, type=self.probe.locals.get(e.name, T.S64))
        if id(e) in self.st.snapshots:
            return blocks.snapshot(self, e, value)
        return value

    def expr_Positional(self, e: A.Positional):
        if e.index == 0:
            self.err("$0 is not a parameter; they start at $1", e.span)
        self.nargs = max(self.nargs, e.index)
        if id(e) in self.text_positionals:     # the text given, as 0.27 prints it (positionals.py)
            param = ir.Param(ir.ARG_STR, e.index, type=self.read_str(self.st.strsize), span=e.span)
            text = ir.Call(I.STR, [param], type=self.read_str(self.st.strsize), span=e.span)
            # one not given is 0.27's 0 (a number), not str()'s ""
            given = ir.Binary(">=", ir.Param(ir.ARG_COUNT, type=T.U64, span=e.span),
                              ir.IntConst(e.index, type=T.U64, span=e.span), type=T.S32, span=e.span)
            return self.ternary(given, text, ir.BytesConst(b"0", type=T.literal_str(b"0"), span=e.span), e.span)
        return ir.Param(ir.ARG_NUM, e.index, type=T.S64)

    def expr_ParamCount(self, e: A.ParamCount):
        return ir.Param(ir.ARG_COUNT, type=T.U64)

    def expr_Map(self, e: A.Map):
        if e.name in self.agg_maps:     # its value, every CPU's combined
            return aggreads.read(self, e, lambda ref: self.map_ref(ref, writing=False))
        info, keys = self.map_ref(e, writing=False)
        if info.value_type is None:
            if (None, e.name) in self.unassigned:
                raise Bail()
            if self.final:
                self.err(f"map '{e.name}' is read but never assigned", e.span)
            return ir.MapRead(info.name, keys, type=T.S64)
        return ir.MapRead(info.name, keys, type=info.value_type)

    def expr_Ident(self, e: A.Ident):
        name = stdlib.builtin_name(e.name)
        const = self.st.preamble.constants.get(name)
        if const is None and name in ("true", "false"):
            # bpftrace's bool literals (before the kernel's enum { false, true }
            # would read them as its int enumerators)
            return ir.IntConst(int(name == "true"), type=as_bool(T.Int(1, False)), span=e.span)
        if const is not None:
            node = self.expr(const)
            if name in self.st.cdefs.enum_of:       # an enumerator prints as its name, as in 0.27
                node = ir.Cast(node, type=structs.enum_type(self, self.st.cdefs.enum_of[name], structs.VALUE_WIDTH),
                               span=e.span)
            return node
        if name == "config":
            self.err(not_yet("the config record as a whole"), e.span, "read its variables: config.max_strlen")
        if name == "cpid":
            self.uses_target = True
            self.st.reads_cpid = True
            return ir.Param(ir.TARGET, type=T.U32)
        probe = self.probe
        if name == "kstack" and (probe.provider.runs_once or self.st.config.stack_mode != "bpftrace"):
            return stacks.kstack(self, e.span)      # BEGIN's and END's: the tracer's own; or another mode
        if name in BT.VARIABLES:
            var = BT.VARIABLES[name]
            return ir.Variable(var, type=var.type)
        value = V.variable(self, name, e.span) or stdlib.variable(self, name, e.span)
        if value is not None:
            return value
        if name == "ustack":
            return stacks.ustack(self, e.span)
        if name == "curtask":
            return ir.Variable(BT.CURTASK, type=BT.curtask_type(self, e.span))
        if name == "elapsed":
            # ns since the tracer set its parameters, on bpf_ktime_get_ns()'s clock
            start = ir.Param(ir.START_NS, type=T.U64, span=e.span)
            return ir.Binary("-", ir.Variable(BT.VARIABLES["nsecs"], type=T.U64, span=e.span), start, type=T.U64)
        if name == "probe":
            # The probe's name as bpftrace prints it: known now unless a wildcard.
            unit = self.st.units[probe.index]
            written = unit.written
            if written.wildcard and probe.provider.names_matches:
                probe.bpf_defines.add("PLYC_TP_NAMES")
                return ir.Call(BT.TP_NAME, [], type=T.Str(BT.TP_NAME_SIZE), span=e.span)
            if written.wildcard:
                self.err(not_yet(f"'probe' in a {probe.provider.name} wildcard probe"), e.span)
            return self.expr(A.Str(S.probe_name(written, unit.target).encode(), span=e.span))
        if name == "func":
            return self.func(e.span)
        if fargs.owns(probe, name):
            return fargs.retval(self, e.span)
        if name == "ctx":
            return kvalues.context(self, e.span)
        return self.expr_Ident_rest(e, name)

    def func(self, span, symbol: bool = False):
        """`func`: the probed function's name, known now for an exact-name
        probe; symbol: as its address's symbol (a map that holds ksym()'s
        values, as sid's xfsdist.bt stores both in @name)."""
        probe = self.probe
        e = A.Ident("func", span=span)
        pname = probe.provider.name
        unit = self.st.units[probe.index]
        how = probes.of(probe.provider).func      # bpftrace's rule for its probe type
        # a glob of this kind shares the body (an exact name beside it reads func as it does)
        globbed = any(u.probe is unit.probe and u.target.glob and probes.of(u.target.provider).func == how
                      for u in self.st.units)
        if how == "caller" and (symbol or globbed):
            # The function that fired: the symbol of the probed address (no fentry
            # twin: it needs the kprobe's registers), as bpftrace 0.17 resolves it;
            # an exact-name kprobe sharing the body with a glob too (vfsstat's
            # @[func]), so that func has one type there.
            return self.variable("caller", e.span)
        if how == "func_ip" and (symbol or globbed):
            # as in a kprobe glob, an exact name sharing the body too
            return fargs.func_ip(e.span)
        if how == "user_return" and (self.st.version == "0.17" or globbed):
            # 0.17's: the function it returns into; 0.27's glob too (plyc's)
            return stacks.uretprobe_func(self, e.span)
        if how == "user" and globbed:
            return stacks.uprobe_func(self, e.span)
        if not how or probe.target.glob:
            what = "a wildcard probe" if probe.target.glob else f"{pname} probes"
            self.err(not_yet(f"'func' in {what}"), e.span)
        written = probe.spec.arg.rsplit(":", 1)[-1].split("+")[0]
        return self.expr(A.Str(written.encode(), span=e.span))

    def expr_Ident_rest(self, e: A.Ident, name: str):
        probe = self.probe
        if name == "args":
            var = probe.provider.var("data")
            if var is None:
                self.err(f"{probe.provider.name} probes have no 'args'", e.span,
                         "args holds a tracepoint's, kfunc's or rawtracepoint's arguments; "
                         "kprobes and uprobes have arg0, arg1, ...")
            return ir.Variable(var, type=var.type)
        plyname = VARIABLES.get(name)
        if plyname is None and (name == "retval" or (name.startswith("arg") and name[3:].isdigit())):
            plyname = name
        if plyname is None and self.st.preamble.includes:
            # the script's headers first, as bpftrace expands their macros
            value, warning, where = abi.constant(name, self.st.preamble.includes, self.st.build_env, self.st.arch,
                                                 self.st.ktypes, self.st.include_dirs)
            if warning and name not in self.st.warned:
                self.st.warned.add(name)    # said once, where first used
                self.st.warnings.append(Diagnostic(warning, e.span, "warning"))
            if value is not None:
                return self.expr(value)
        if plyname is None:
            found = constants.enumerator_of(name, self.st.ktypes)
            if found is not None:
                # of its kernel enum's type: %s and a map key print its name, as 0.27's
                return ir.IntConst(found[0], type=kvalues.denoted(self, found[1], T.S64, structs.VALUE_WIDTH))
        if plyname is None:
            if self.st.preamble.includes:
                note = "; ".join(where) or None
            else:
                note = "not #define'd by the script, which #includes no header" if name.isupper() else None
            known = headers.header_of(name, self.st.build_env, self.st.arch)
            if known:
                note = f"{name} is defined in <{known}>: #include it" + (f"; {note}" if note and self.st.preamble.includes else "")
            self.err(f"unknown identifier '{name}'", e.span, note)
        node = self.variable(plyname, e.span)
        if plyname == "retval" or plyname.startswith("arg"):
            # bpftrace's are integers, not what a kprobe's prototype types them (kprobe.typed)
            node.type = T.Int(node.type.size, node.type.signed)
        return node

    def expr_Field(self, e: A.Field):
        node = self.field_base(e)
        if node.type.kind == "struct":
            return kvalues.value(self, node, e.span)    # a kernel struct as a value: a record
        if node.type.kind == "buf" and node.type.btf:
            return kvalues.value(self, node, e.span)    # a kernel array as a value: a list
        return node

    def array_operand(self, e: A.Expr):
        """e lowered where a kernel array stays an array (indexed, cast to
        an integer, read by buf(), ntop(), macaddr()), not a list."""
        return self.field_base(e) if isinstance(e, (A.Field, A.Index)) else self.expr(e)

    def field_base(self, e: A.Expr):
        """e lowered, a kernel struct member held by value kept as a place
        to read its own members through (`curtask->se.load.weight`)."""
        if isinstance(e, A.Index):
            return self.index_place(e)
        if not isinstance(e, A.Field):
            return self.expr(e)
        if config.is_record(e.obj):
            value = config.read(self.st, e.name, e.span, self.err)
            if isinstance(value, bool):
                return ir.IntConst(int(value), type=as_bool(T.Int(1, False)), span=e.span)
            return self.expr(value)
        script = structs.field(self, e)     # a struct the script defines
        if script is not None:
            return script
        obj = self.field_base(e.obj)
        if obj.type.kind == "tuple":
            return tuples.field(self, obj, e.name, e.span) if obj.type.names else \
                self.err(f"Can not access field '{e.name}' on expression of type '{obj.type}'", e.span)
        if obj.type.kind == "ctx" and obj.type.pointee == "fields":
            node = self.tp_field(e.name, e.span)
            node.type = kvalues.tp_enum(self, node.field.ctype, node.type)
            return node
        if obj.type.kind == "ctx" and obj.type.pointee == "fargs":
            return fargs.field(self, e.name, e.span)
        # bpftrace follows a pointer with '.' or '->' alike.
        typ = self.kernel_member(obj.type, e.name, obj.type.is_pointer, e.span, bitfields=True)
        if obj.type.user and typ.is_pointer:
            typ = replace(typ, user=True)   # bpftrace keeps a user pointer's address space
        return kvalues.member(self, obj, e.name, typ)

    def expr_BlockExpr(self, e: A.BlockExpr):
        return blocks.block_value(self, e)

    def expr_IncDec(self, e: A.IncDec):
        return blocks.incdec_value(self, e)

    def expr_Tuple(self, e: A.Tuple):
        return tuples.make(self, e)

    def expr_Ternary(self, e: A.Ternary):
        folded = self.literal(e)
        if folded is not None:
            return folded
        aggreads.check_operand(self, e.cond, e.span, "condition")
        return tuples.ternary(self, e)

    def expr_TupleIndex(self, e: A.TupleIndex):
        base = loops.pair_base(e)[0]
        if isinstance(base, A.Var) and base.name in self.pairs:
            return loops.pair_part(self, e)     # a for loop's $kv.0, $kv.1 (loops.py)
        return tuples.get(self, e)

    def expr_Index(self, e: A.Index):
        node = self.index_place(e)
        if node is self._struct_element:
            return V.pointed(self, node, e.span)        # p[i] of a struct pointer: the struct
        if node.type.kind == "struct" or (node.type.kind == "buf" and node.type.btf):
            return kvalues.value(self, node, e.span)    # a kernel struct (array) element as a value
        return node

    def index_place(self, e: A.Index):
        """e[i] lowered, a kernel struct or array element kept as a place to
        read through (`curtask->sighand->action[1].sa.sa_flags`)."""
        script = structs.index(self, e)
        if script is not None:
            return script
        obj = self.array_operand(e.obj)
        if obj.type.kind == "tuple":
            return tuples.index(self, obj, e)
        if obj.type.is_pointer:
            return self.pointer_index(obj, e)
        if const_value(e.index) is None and isinstance(obj, ir.KMember) and \
                (obj.type.kind == "str" or (obj.type.kind == "buf" and obj.type.btf)):
            at = V.element_at(self, obj, self.expr(e.index), e.span, e.index.span)
            if at.type.is_pointer:
                self._struct_element = at
            return at
        if const_value(e.index) is None and obj.type.kind == "str" and not obj.type.btf:
            return V.char_at(self, obj, self.expr(e.index), e.span, e.index.span)
        idx = self.const_int(e.index, "an index must be a constant integer")
        return self.index(obj, idx, e.span, e.index.span)

    def pointer_index(self, ptr: ir.Expr, e: A.Index):
        """p[i], as bpftrace reads it: *(p + i), i known at run time too; a
        struct's pointer (p + i) stays a place to read members through."""
        idx = self.expr(e.index)
        if not idx.type.is_int or idx.type.is_pointer:
            self.err(f"an index must be an integer, got {idx.type}", e.index.span)
        if (const_value(e.index) or 0) < 0:
            self.err("The array index operator [] only accepts non-negative integer indices", e.index.span)
        if ptr.type.pointee in (None, "void"):
            self.err(f"The array index operator [] cannot be used on a pointer to an unsized type ({ptr.type})",
                     e.span, "cast it to a pointer to a sized type first, e.g. (uint8 *)")
        at = pointers.arith(self, A.Binary("+", e.obj, e.index, span=e.span), ptr, idx)
        if V.is_struct_pointer(self, ptr.type):
            self._struct_element = at
            return at
        return V.pointed(self, at, e.span)

    def expr_Cast(self, e: A.Cast):
        if e.type.base == "typeof":
            return typeof.cast(self, e)
        script = structs.cast(self, e, lambda: self.expr(e.operand))
        if script is not None:
            return script
        tn = typenames.resolve(self, e.type, type_ref(e.type))
        x = self.array_operand(e.operand)
        if tn.base in ("string", "buffer") and not tn.pointers and tn.array_len is not None:
            return typenames.text_cast(self, x, tn, e.span)
        if tn.array_len is not None and not tn.pointers:
            return typenames.int_to_array(self, x, type_ref(replace(tn, array_len=None)), tn.array_len, e.span)
        if x.type.denotes == "array" and not tn.pointers:
            return typenames.list_to_int(self, x, type_ref(tn), e.span)
        if x.type.kind == "buf" and not tn.pointers and tn.array_len is None:
            return typenames.array_to_int(self, x, type_ref(tn), e.span)
        if tn.pointers:
            x = pointers.cast_operand(x, literal=isinstance(e.operand, A.Unary) and e.operand.op == "-" and
                                      isinstance(e.operand.operand, A.Int))
        cast = self.cast(x, type_ref(tn), e.span)
        if tn.words[:1] == ("enum",) and not tn.pointers and tn.array_len is None:
            # a kernel enum's value, 64-bit and printed by its enumerator's
            # name, as 0.27 types the cast (and an enumerator: expr_Identifier)
            cast.type = kvalues.enum_cast(self, tn.words, cast.type, structs.VALUE_WIDTH)
        if e.type.words in (("bool",), ("_Bool",)) and not e.type.pointers and e.type.array_len is None:
            # C's (and bpftrace's) bool is 0 or 1: (bool)256 is 1, not its low byte.
            zero = ir.IntConst(0, type=T.S64, span=e.span)
            cast.operand = ir.Binary("!=", cast.operand, zero, type=T.S32, span=e.span)
            cast.type = as_bool(cast.type)
        return cast

    def literal(self, e: A.Expr) -> Optional[ir.Expr]:
        """e folded into one literal as 0.27 folds literal expressions
        (literals.py: `9223372036854775807 + 1` is a uint64 2^63, `1 < 2` a
        bool), its refusals located; None where e is no literal expression.
        A 0.17 build folds nothing: 0.17 computes them as any value, in
        64-bit C (`~1` is -2, `-7 / 2` 9223372036854775804)."""
        if self.st.version == "0.17":
            return None
        try:
            lit = literals.fold(e, self.literal_word)
        except literals.Refused as refused:
            self.err(refused.message, refused.span)
        if lit is None:
            return None
        if lit.is_bool:
            return ir.IntConst(lit.value, type=as_bool(T.Int(1, False)), span=e.span)
        return self.int_const(lit.value)

    def literal_word(self, e: A.Ident):
        """`true` and `false`, unless the script's preamble defines the name."""
        if self.st.preamble.constants.get(stdlib.builtin_name(e.name)) is not None:
            return None
        return literals.bool_word(e)

    def expr_Binary(self, e: A.Binary):
        folded = self.literal(e)
        if folded is not None:
            return folded
        left, right = self.expr(e.left), self.expr(e.right)
        if "tuple" in (left.type.kind, right.type.kind):
            node = tuples.compare(self, e.op, left, right, e.span)
            node.type = as_bool(node.type)
            return node
        if left.type.kind == right.type.kind == "buf" and not (left.type.btf or right.type.btf):
            return V.buffers_compare(self, e.op, left, right, e.span)
        if e.op in ("+", "-") and (left.type.is_pointer or right.type.is_pointer):
            return pointers.arith(self, e, left, right)     # scaled by the pointee's size
        left, right = signs.operands(e.op, left, right)     # 0.27's signs, not C's
        if signs.logical(e.op, left, right):
            node = division.guarded(self.binary(e.op, signs.as_uint64(left), signs.as_uint64(right),
                                                e.left.span, e.right.span))
            return ir.Cast(node, type=T.S64, span=e.span)
        node = division.guarded(signs.shift(self.binary(e.op, left, right, e.left.span, e.right.span)))    # x / 0 is 1
        if e.op in BOOL_OPS:
            node.type = as_bool(node.type)
        return node

    def expr_Unary(self, e: A.Unary):
        if e.op == "*":
            return V.deref(self, e)
        if e.op == "&":
            return pointers.address_of(self, e)
        aggreads.check_operand(self, e.operand, e.span, e.op)
        folded = self.literal(e)
        if folded is not None:
            return folded       # `~1` is 18446744073709551614, a uint64
        node = signs.unary(self.unary(e.op, self.expr(e.operand), e.span))     # 0.27's width and sign
        if e.op == "!":
            node.type = as_bool(node.type)
        return node

    def expr_Offsetof(self, e: A.Offsetof):
        return V.offsetof(self, e)

    def expr_Sizeof(self, e: A.Sizeof):
        if isinstance(e.arg, A.Unary) and e.arg.op == "*":
            rec = structs.record_of(self, self.expr(e.arg.operand).type)
            if rec is not None and structs.kernel_twin(self, rec.words):
                # sizeof(*p) of the script's struct the kernel also has: the kernel's, as 0.27's
                return ir.IntConst(structs.twin_size(self, rec.words, e.span), type=T.U64)
        if not isinstance(e.arg, A.TypeName):
            x = self.typed_only(e.arg)
            if isinstance(x, ir.Deref) and x.type.is_bytes:
                # 0.27's size of *&$s is not its value's (8 for a tuple)
                self.err(not_yet("sizeof() of a string or tuple read through a pointer"), e.span)
            # 0.27's type of it (smalltypes.py): a literal (folded) is of the
            # smallest signed type holding it, sizeof(1) is 1, sizeof(300) 2,
            # so is a variable given one, a comparison a bool
            return ir.IntConst(smalltypes.visible(self, smalltypes.of(self, e.arg)).size, type=T.U64)
        if e.arg.array_len is not None:     # sizeof(T[N]), sizeof(T *[N]): N of them
            elem = self.expr_Sizeof(replace(e, arg=replace(e.arg, array_len=None)))
            n = ir.IntConst(e.arg.array_len, type=T.U64, span=e.span)
            known = elem.value if isinstance(elem, ir.IntConst) else getattr(elem, "size", None)
            if known is not None:
                return ir.IntConst(known * e.arg.array_len, type=T.U64)
            return ir.Binary("*", elem, n, type=T.U64, span=e.span)     # the device's size (CO-RE)
        if e.arg.pointers and e.arg.base != "typeof":
            return ir.IntConst(arch.get(self.st.arch).ptr, type=T.U64)  # any pointer: the target's
        if e.arg.base == "typeof":
            return typeof.sizeof(self, e.arg)
        script = structs.sizeof(self, e.arg)
        if script is not None:
            return script
        return self.sizeof(type_ref(e.arg), e.span)

    def str_cut(self, e: A.Call) -> ir.Expr:
        """str(p, n), n known at run time only (0.27 takes it; published
        tools compute it): the string read at its full size (max_strlen, or
        the string's), then cut to n bytes with its NUL, n clamped to it."""
        whole = self.call(replace(e, args=e.args[:1]), statement=False)
        n = self.expr(e.args[1])
        if not n.type.is_int or n.type.is_pointer:
            self.err(f"str()'s size must be an integer, got {n.type}", e.args[1].span)
        return ir.Call(I.STR_CUT, [whole, n], type=whole.type, span=e.span)

    def typed_only(self, e: A.Expr) -> ir.Expr:
        """e typed, never run (sizeof's operand): what a block expression in
        it would run before the statement is dropped."""
        outer, self.before = self.before, []
        try:
            return self.expr(e)
        finally:
            self.before = outer

    def call(self, e: A.Call, statement: bool):
        if e.name in AGGREGATIONS:
            self.err(f"{e.name}() must be assigned to a map, e.g. @x = {e.name}("
                     f"{AGG.AGGREGATIONS[AGG_NAMES[e.name]].example_args})", e.span)
        if e.name == "delete":
            return self.delete_value(e)
        if e.name == "find":
            return self.find_value(e)
        e = formats.literal_percents(self, e)     # 0.27 prints a '%' that starts no conversion
        if e.name == "printf":
            e = aggreads.printf_call(self, e)
        if e.name not in FUNCTIONS and e.name in self.st.cfuncs:
            return cimports.call(self, e, [self.expr(a) for a in e.args])
        if e.name not in FUNCTIONS:
            self.err(f"unknown function '{e.name}'", e.name_span,
                     did_you_mean(e.name, FUNCTIONS + AGGREGATIONS) or
                     f"functions plyc lowers: {', '.join(FUNCTIONS + AGGREGATIONS)}")
        if e.name == "print" and len(e.args) > 1:
            return self.print_top(e, statement)
        whole = self.whole_map(e.args[0]) if e.name == "print" and len(e.args) == 1 else None
        if whole and (whole[0] in self.maps or whole[0] in self.keyed_maps):
            # bpftrace dumps any map, a key-less plain one too ("@x: 5")
            return self.event(e, ir.PRINTMAP, map=whole[0])
        if _prints_tuple(e):
            # the shared print() of several values prints them as bpftrace
            # prints a tuple, "(a, b)"
            e = replace(e, args=e.args[0].items)
        if e.name == "zero":
            return self.zero(e, statement)
        if e.name == "time":
            return self.time(e, statement)
        if e.name == "str" and len(e.args) == 2 and const_value(e.args[1]) is None:
            return self.str_cut(e)
        if e.name == "str" and e.args and positionals.text_offset(e.args[0]) is not None:
            # str($1 + n): the text given, from its byte n on, as 0.27 reads it
            pos, skip = positionals.text_offset(e.args[0])
            node = self.call(replace(e, args=[pos, *e.args[1:]]), statement)
            node.args[0].offset = skip
            return node
        if e.name in V.FUNCTIONS:
            return V.call(self, e)
        if e.name in stdlib.FUNCTIONS:
            return stdlib.call(self, e)
        if e.name in meta.FUNCTIONS:
            return meta.call(self, e)
        func = BT.FUNCTIONS.get(e.name) or stacks.FUNCTIONS.get(e.name) or events.FUNCTIONS.get(e.name) or \
            stdlib.EVENTS.get(e.name)
        if func is None:
            return self.apply(B.FUNCTIONS[e.name], e.name, e, statement, e.span)    # the shared builtins'
        return self.apply(func, e.name, e, statement, None)
