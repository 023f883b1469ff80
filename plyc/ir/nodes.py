"""The typed core IR: what every front end (plyc/frontends/) produces
and the code generator reads. No front-end words here: a `@map` or a
predicate is gone by the time a program is IR. Every expression carries its
type (plyc.types.Type) and the span of the script text it came from;
statements carry their span (the BPF C's `/* script:line */` comments and
the verifier's messages map back through it)."""
from __future__ import annotations

from dataclasses import field
from typing import Any, Optional

from ..lazyclass import node

from .. import types as T
from .intrinsics import Intrinsic
from .variables import Var

from ..span import NOSPAN, SourceFile, Span, script_line  # noqa: F401  (ir.Span: spans are the IR's too)


@node
class Spec:
    """A probe spec as written: `provider:arg` (arg "" for BEGIN/END)."""
    provider: str        # as written (alias or full name)
    arg: str
    span: Span = field(default=NOSPAN, kw_only=True)


@node
class Node:
    span: Span = field(default=NOSPAN, kw_only=True)


# --- expressions -----------------------------------------------------------

@node
class Expr(Node):
    type: T.Type = field(default=T.S64, kw_only=True)


@node
class IntConst(Expr):
    value: int


@node
class BytesConst(Expr):
    """A string known at compile time, NUL-padded to its type's size."""
    value: bytes


@node
class Variable(Expr):
    """A built-in or provider variable (comm, pid, arg0, data, ...)."""
    var: Var


@node
class Local(Expr):
    """A scratch variable of the probe, zero until set (Probe.locals)."""
    name: str


# Run-time parameters: set by the tracer before the load (plyc_params).
TARGET = "target"          # -c COMMAND's pid (u32)
ARG_NUM = "arg_num"        # the Nth positional argument as a number
ARG_STR = "arg_str"        # ... as a string (char[strsize])
PID_FILTER = "pid_filter"  # -p PID, or 0
START_NS = "start_ns"      # bpf_ktime_get_ns()'s clock when the tracer set its parameters (u64)
ARG_COUNT = "arg_count"    # how many positional arguments the tracer was given (u64)
OPT_NUM = "opt_num"        # the Nth (0-based) named option (Program.options) as a number (a flag: 0 or 1)
OPT_STR = "opt_str"        # ... as a string (char[strsize])


@node
class Param(Expr):
    kind: str            # TARGET | ARG_NUM | ARG_STR | PID_FILTER
    index: int = 0       # ARG_*: 1-based
    offset: int = 0      # ARG_STR: the bytes of the text skipped (bpftrace's str($1 + n))


# Values the tracer finds on the device at start-up and sets in plyc_params
# (DeviceConst.kind): what bpftrace resolves on the machine it compiles on.
KADDR = "kaddr"            # a kernel symbol's address, from /proc/kallsyms
CGROUPID = "cgroupid"      # a cgroup v2 directory's id (its file handle)
NCPUS = "ncpus"            # the CPUs the device has (possible ones)
UADDR = "uaddr"            # a symbol's link-time address in a uprobe's binary
UADDR_FIXED = "uaddr_fixed"  # ... which must be a fixed-address executable (not PIE)


@node
class DeviceConst(Expr):
    """A u64 the tracer resolves on the device before the load (one per
    distinct kind and name in a program), known to the verifier as a
    constant of .rodata."""
    kind: str            # KADDR | CGROUPID | NCPUS | UADDR | UADDR_FIXED
    name: str = ""
    binary: str = ""     # UADDR*: the binary (a uprobe's path)


@node
class Deref(Expr):
    """`*addr`: an integer of type .type read from memory at addr (kernel
    memory, or user memory for a user pointer); 0 if the read fails."""
    addr: Expr
    user: bool = False


@node
class MapRead(Expr):
    """The value stored under keys in a plain map, 0 when there is none."""
    map: str
    keys: list


@node
class MapHas(Expr):
    """1 if the map holds an entry under keys, else 0."""
    map: str
    keys: list


@node
class LookupValue(Expr):
    """The value a LookupLet's entry holds, 0 when it found none: read
    where the expression is, through the bound pointer."""
    name: str            # the LookupLet's
    map: str


@node
class LookupFound(Expr):
    """1 if a LookupLet found an entry, else 0."""
    name: str
    map: str


@node
class KeyRef(Expr):
    """A map key a KeyLet built, as the whole of an access's `keys`."""
    name: str


@node
class Unary(Expr):
    op: str              # ! ~ -
    operand: Expr


@node
class Binary(Expr):
    """Integer arithmetic and comparisons; == and != also of two strings."""
    op: str
    left: Expr
    right: Expr


@node
class Ternary(Expr):
    cond: Expr
    then: Expr
    other: Expr


@node
class TpField(Expr):
    """A field of the probe's tracepoint record (offset from the device)."""
    name: str
    field: Any                     # its tracefs.Field (the tables above the IR are named, not imported)


@node
class Register(Expr):
    """A register of the probed context (pt_regs), by the arch's name."""
    name: str


@node
class KMember(Expr):
    """obj->field (obj a pointer to a kernel type) or obj.field (obj a
    kernel struct value): read by CO-RE; a bit-field by CO-RE's field
    info (where its bits are on the device's kernel)."""
    obj: Expr
    field: str
    bitfield: bool = False


@node
class Index(Expr):
    """obj[index]: a byte of a string/buffer, or an element of a kernel array."""
    obj: Expr
    index: int


@node
class Cast(Expr):
    """operand converted to .type (an integer or a pointer type)."""
    operand: Expr


@node
class SizeOf(Expr):
    """The size of a C type: `size` when known now, else the kernel type
    `ctype`'s size on the device (CO-RE)."""
    ctype: str
    size: Optional[int] = None


@node
class UserRead(Expr):
    """An integer of `size` bytes read from user memory at addr."""
    addr: Expr
    size: int
    signed: bool


@node
class Call(Expr):
    """An intrinsic (plyc/ir/intrinsics.py) applied to typed arguments."""
    func: Intrinsic
    args: list


@node
class TupleMake(Expr):
    """A tuple of the items' values (type: types.Tuple, members placed by
    types.tuple_layout)."""
    items: list
    # a kernel struct held by value (`*curtask`): its C name, which an error
    # names it by rather than by its members
    struct: str = field(default="", kw_only=True)


@node
class TupleGet(Expr):
    """Member `index` of a tuple value."""
    obj: Expr
    index: int


# --- statements ------------------------------------------------------------

@node
class Stmt(Node):
    pass


@node
class Block(Stmt):
    stmts: list


@node
class If(Stmt):
    cond: Expr
    then: Stmt
    other: Optional[Stmt] = None


@node
class Return(Stmt):
    pass


@node
class SetLocal(Stmt):
    name: str
    value: Expr


@node
class LookupLet(Stmt):
    """Look the entry under keys up in a plain map once, binding a pointer
    to it (none if absent) that LookupValue/LookupFound read later in the
    run; made by plyc/ir/opt/lookups.py, which proves the entry unchanged
    between the two."""
    name: str            # unique in the probe
    map: str
    keys: list


@node
class KeyLet(Stmt):
    """Build the key of `map` from keys once, for the accesses after it
    that name it by a KeyRef (plyc/ir/opt/hoist_keys.py); it lives as long
    as the block it is in."""
    name: str            # unique in the probe
    map: str
    keys: list


@node
class MapStore(Stmt):
    map: str
    keys: list
    value: Expr


@node
class Aggregate(Stmt):
    """Update the aggregation under keys with args (x first, if it takes one)."""
    map: str
    keys: list
    agg: Any                       # its aggregations.Aggregation
    args: list


@node
class MapDelete(Stmt):
    map: str
    keys: list


@node
class EmitEvent(Stmt):
    """Send one output record of `event` carrying args' values."""
    event: "Event"
    args: list


@node
class CallStmt(Stmt):
    """A built-in called for its effect, its value unused (an ir.Call, or
    what a built-in's typing rule made of the call, e.g. a UserRead)."""
    call: Expr


@node
class While(Stmt):
    """Run body while cond holds, at most LOOP_CAP times (the verifier must
    see the loop end). `step` (a range's increment) runs before each test
    but the first, also after a `continue`."""
    cond: Expr
    body: Stmt
    step: Optional[Stmt] = None


# The most iterations of a While: a bound the verifier can always follow, so
# that a loop whose end depends on data still loads (docs/bpftrace.md, Loops).
LOOP_CAP = 1024


@node
class ForMap(Stmt):
    """Run body for each entry of the plain map `map`, with the locals
    `keys` (one per key part) and `value` set to the entry's (a callback of
    bpf_for_each_map_elem, Linux 5.13)."""
    map: str
    keys: list            # local names, one per key part
    value: str            # local name
    body: Stmt


@node
class Break(Stmt):
    """Leave the innermost While or ForMap."""


@node
class Continue(Stmt):
    """Go on with the innermost loop's next iteration."""


# --- program ---------------------------------------------------------------

# Map storage kinds.
AGGREGATION = "aggregation"   # per-CPU values the tracer merges and prints
HASH = "hash"                 # plain values, read and written by probes


@node
class Map:
    name: str                      # as the script names it (and the output prints it)
    index: int                     # order of first appearance
    storage: str                   # AGGREGATION | HASH
    span: Span                     # first appearance
    key_types: Optional[list] = None
    value_type: Optional[T.Type] = None   # the stored value, or the aggregated argument
    agg: Optional[Any] = None      # its aggregations.Aggregation, for an aggregation
    params: tuple = ()             # the aggregation's constant arguments (lquantize: min, max, step)
    key_names: Optional[list] = None      # a name per key where every use agrees (--metrics labels)
    written: bool = False
    # How the output style prints plain integer keys and values (not their
    # Type's; plyc/sema/looks.py): widths (0: none), and whether in hex
    key_widths: Optional[list] = None
    value_width: int = 0
    key_hex: Optional[list] = None
    value_hex: bool = False
    # Declared by the script (bpftrace's `let @m = lruhash(N)`): an LRU hash
    # (the least recently used entry makes room), and its size; else plyc's
    lru: bool = False
    max_entries: Optional[int] = None

    @property
    def is_agg(self) -> bool:
        return self.storage == AGGREGATION


# Event kinds, and what the tracer does with each record.
PRINTF = "printf"        # print the args by `parts`
PRINT = "print"          # print the args, comma separated
EXIT = "exit"            # stop with the status args[0]
CLEAR = "clear"          # empty `map`
PRINTMAP = "printmap"    # print `map`
TIME = "time"            # print the wall-clock time, strftime format parts[0]
ZERO = "zero"            # set every value of `map` to zero, keys kept
JOIN = "join"            # print the strings in args[0] (one per parts[1] bytes), joined by parts[0]
CAT = "cat"              # print the file named by the args formatted by `parts` (as printf's)
SYSTEM = "system"        # run the command the args formatted by `parts` make, print its output
ERRORF = "errorf"        # print the args by `parts` to stderr, after the script's place and "ERROR:"
WARNF = "warnf"          # ... "WARNING:" (bpftrace's errorf() and warnf())
UNWATCH = "unwatch"      # stop the watchpoints on the address args[0] (bpftrace's unwatch())


@node
class Event:
    id: int                        # 1, 2, ... in order of first appearance
    kind: str
    span: Span
    parts: list = field(default_factory=list)      # printf: literals and printf.Conv
    arg_types: list = field(default_factory=list)
    map: Optional[str] = None      # clear / printmap
    arg_widths: list = field(default_factory=list)  # the output style's print widths (sema/looks.py)
    arg_hex: list = field(default_factory=list)     # and which it prints in hex


@node
class Probe:
    """One BPF program: a body under one spec."""
    index: int
    spec: Spec
    target: Any                    # its providers.Target
    body: Block
    locals: dict = field(default_factory=dict)     # scratch name -> Type
    tp_fields: dict = field(default_factory=dict)  # tracepoint field name -> tracefs.Field
    uses_stack: bool = False
    uses_regs: bool = False                         # needs the kprobe's pt_regs (no fentry twin)
    args_read: set = field(default_factory=set)    # argN and retval read (an fentry twin's ctx)
    bpf_defines: set = field(default_factory=set)  # plyc.bpf.h features its code needs (PLYC_TP_NAMES)
    stack_limits: set = field(default_factory=set)  # frame limits of its stacks (kstack(n)): a map each
    needs_fentry: str = ""                          # what runs only as an fentry/fexit twin ("path()")
    sleepable: bool = False                         # an iterator calling bpf_d_path (iter.s/)
    # Where each temporary of its code lives, in the order the code makes
    # them (plyc/ir/opt/temps.py's Temp records; None until that pass ran)
    temps: Optional[list] = None

    @property
    def provider(self):
        """Its target's providers.Provider."""
        return self.target.provider


@node
class Program:
    probes: list
    maps: dict                     # name -> Map, in order of first appearance
    events: list
    nargs: int = 0                 # highest positional argument used
    uses_target: bool = False
    strsize: int = T.DEFAULT_STRSIZE
    ktypes: Optional[Any] = None   # the kernel_types.KernelTypes the front end typed with
    arch: str = "x86_64"
    report: Optional[Any] = None   # a periodic report request (plyc/ir/report.py)
    time_formats: list = field(default_factory=list)   # strftime() formats, by their type's width
    enums: list = field(default_factory=list)   # [(value, name), ...] of each enum type, by its width
    args_optional: bool = False    # a $N not given reads 0 / "" (bpftrace's), else the tracer stops
    args_wide: list = field(default_factory=list)  # the $N (1-based) given up to UINT64_MAX, read as its bits
    missing_probes: str = "error"  # a probe the device lacks: error | warn | ignore (left out)
    license: str = "GPL"           # the BPF object's (bpftrace's config license; GPL-compatible only)
    # Build limits the script sets itself (bpftrace's config block): map_entries,
    # buffer_size, stack_temp_max, print_maps_on_exit; a build option given on
    # the command line wins (driver.compile_ir).
    limits: dict = field(default_factory=dict)
    # What the tracer prints like (ply, bpftrace): the front end's language's
    # tool. Set by the front end; render passes it to the runtime.
    style: str = "ply"
    # What the front end warns of at build time (diag.Diagnostic, severity
    # "warning"): printed to stderr by the driver, the build goes on.
    warnings: list = field(default_factory=list)
    # named options (bpftrace's getopt()): (name, "bool"|"int"|"uint"|"str", default text, description)
    options: list = field(default_factory=list)
    # bounds the tracer checks a numeric $N against when it starts (bpftrace's
    # unroll($N), which bpftrace checks when it compiles): (N, lo, hi, line, col, what)
    arg_bounds: list = field(default_factory=list)
    # The tracer's -p PID filters the events of the probes whose provider
    # says so (Provider.pid_filtered), as bpftrace 0.27's -p does; else -p
    # only sets $target and attaches uprobes to that process (ply's)
    pid_filter: bool = False
    # The C files the script imports (span.SourceFile each), compiled and
    # linked with the program (usercode.py), and the prototypes of their
    # functions it calls: (name, C return type, [C parameter types])
    c_files: list = field(default_factory=list)
    c_functions: list = field(default_factory=list)
    # What the tracer warns of at start when it runs neither a command (-c)
    # nor for a process (-p): a bpftrace script's cpid, then 0 ("" for none)
    no_target_warning: str = ""

    @property
    def uses_stack(self) -> bool:
        return any(p.uses_stack for p in self.probes)


def children(node):
    """The IR nodes directly inside node, in order."""
    for name in node.__dataclass_fields__:
        value = getattr(node, name)
        if isinstance(value, Node):
            yield value
        elif isinstance(value, list):
            yield from (v for v in value if isinstance(v, Node))


def walk(node):
    yield node
    for child in children(node):
        yield from walk(child)
