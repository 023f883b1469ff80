"""BPF C for one IR probe: statements in order, each behind a comment
naming its script line (the loader maps verifier errors back through it).
Expressions print as C; strings, buffers and records live in temporaries
filled by the statements emitted before their use: small ones on the BPF
stack, the rest in the probe's per-CPU scratch slot, as plyc/ir/opt/temps.py
placed them (see Scope)."""
from __future__ import annotations

import re
from typing import Optional

from .. import types as T
from ..ir import nodes as ir
from ..ir.nodes import script_line
from ..ir.opt import temps
from . import aggread, aggregations, intrinsics, loops, seqprintf, variables
from .cescape import c_comment, c_string
from .ctext import MAX_STORES, MEMSET_FENCE, bare, c_int, copy_stmts, mem_calls, words
from .resources import TP_DIRECT_SLOTS, Field, Resources, record_type
from .tuples import TupleGen


# Where each temporary lives (the stack, or the probe's own slot of the
# per-CPU array plyc_scratch) is plyc/ir/opt/temps.py's decision, recorded
# on the probe (docs/design.md: "Temporaries").
SCRATCH = "scratch"                 # the C pointer to the probe's slot
WORDS = "__attribute__((aligned(8)))"
# Probe kinds whose program can be preempted, and so can start again on
# the same CPU (another task hitting the same uprobe) before it ends: their
# scratch slot has a busy flag. The other kinds never nest with themselves
# on a CPU (docs/design.md).
RETURN = "\0return"                 # placeholder for `return 0;`, see finish()


class Scope:
    """The scratch temporaries of one statement: its own, and those of the
    statements nested in it, which never live at the same time as one
    another and so share memory (a union). The root holds the $locals."""

    def __init__(self, line: int = 0):
        self.line = line
        self.members: list = []     # (declaration, size)
        self.nested: list = []      # Scopes

    def size(self) -> int:
        """An upper bound of the C struct's size (every member 8-aligned)."""
        return sum(words(n) for _, n in self.members) + max([s.size() for s in self.nested] + [0])

    def decls(self, depth: int) -> list:
        ind = "\t" * depth
        out = [f"{ind}{d};" for d, _ in self.members]
        if len(self.nested) == 1:
            out += self.nested[0].decls(depth)
        elif self.nested:
            out.append(f"{ind}union {{")
            for sub in self.nested:
                out.append(f"{ind}\tstruct {{\t/* line {sub.line} */")
                out += sub.decls(depth + 2)
                out.append(f"{ind}\t}};")
            out.append(f"{ind}}};")
        return out


class FuncGen(TupleGen):
    """Generates the body of one BPF program."""

    def __init__(self, probe: ir.Probe, res: Resources, fentry: Optional[dict] = None, source: list = ()):
        self.probe = probe
        self.source = source                    # the script's lines, quoted in comments
        # A kprobe with an fentry/fexit twin (its plan): one body for both
        # programs, reading arguments as fentry or kprobe by its `fentry` flag.
        self.fentry = fentry
        self.res = res
        self.lines: list[tuple[str, int]] = []   # (text, script line)
        self.keyrefs: dict = {}                 # a KeyLet's name -> its key's C lvalue
        self.casts: dict = {}                   # "((T)x)" this generated -> (T, x)
        self.typed: dict = {}                   # expressions known to be of a C type -> it
        self.consts: dict = {}                  # constants' C text -> value
        self._depth = 1
        self.ntmp = 0
        self.cur_line = script_line(probe.spec.span)
        self.commented = None                   # (file, line) of the last statement's comment
        if probe.temps is None:
            raise AssertionError("code generation before the optimising passes (plyc/ir/opt/temps.py)")
        self.temps = iter(probe.temps)          # where each temporary lives, in order (ir/opt/temps.py)
        self.root = self.scope = Scope(self.cur_line)
        self.uses_scratch = False
        self.local_ref: dict = {}               # $name of a string/buffer -> its C lvalue
        self.loops: list = []                   # enclosing loops: None (C), or a callback's store-back lines
        self.callbacks: list = []               # functions of for-loop bodies (loops.py)
        self.callback_names: set = set()        # their C names

    # --- output ------------------------------------------------------------

    @property
    def depth(self) -> int:
        return self._depth

    @depth.setter
    def depth(self, value: int):
        self._depth = value

    def line(self, text: str):
        self.lines.append(("\t" * self.depth + text, self.cur_line))

    def zero(self, addr: str, size: int):
        """Zero the object at addr (an array, or &struct) of size bytes.
        After another memset, a compiler barrier first: clang would merge
        the two (adjacent scratch members) into one it cannot inline; so
        after a parameter's copy, whose zeros past its end clang makes one."""
        if self.lines and self.lines[-1][0].lstrip("\t").startswith(("__builtin_memset(", "plyc_copy_param_str(")):
            self.line(MEMSET_FENCE)
        if size <= MAX_STORES * 8:
            self.line(f"__builtin_memset({addr}, 0, sizeof({addr.lstrip('&')}));")
        else:
            self.lines_of(mem_calls("memset", addr, None, size))

    def tmp(self, prefix: str = "t") -> str:
        self.ntmp += 1
        return f"{prefix}{self.ntmp}"

    def place(self, name: str, decl: str, size: int) -> Optional[str]:
        """Where a new temporary `decl` (declaring `name`, 8-aligned) lives,
        as the temps pass decided for the next one the code makes: None for
        the stack, where the caller declares it; else its lvalue in the
        scratch slot."""
        t = next(self.temps, None)
        if t is None or t.size != size:
            raise AssertionError(f"a temporary of {size} bytes that plyc/ir/opt/temps.py did not place "
                                 f"(it has {t.size if t else 'none'} next)")
        if not t.scratch:
            return None
        self.scope.members.append((decl, size))
        self.uses_scratch = True
        return f"{SCRATCH}->{name}"

    def record(self, prefix: str, ctype: str, size: int) -> str:
        """A new temporary of a record type, zeroed (padding included: keys
        are compared as bytes)."""
        name = self.tmp(prefix)
        ref = self.place(name, f"{ctype} {name} {WORDS}", size)
        if ref is None:
            ref = name
            self.line(f"{ctype} {name} {WORDS};")
        self.zero(f"&{ref}", size)
        return ref

    def array(self, name: str, size: int, zero: bool = True) -> str:
        """A char array, zeroed unless the caller fills all of it.
        8-aligned, so copies into keys and records move words, not bytes.
        Zeroed: string reads (and 6.1's bpf_get_current_comm) stop at the
        NUL, and what follows it ends up in keys and output too."""
        ref = self.place(name, f"char {name}[{size}] {WORDS}", size)
        if ref is None:
            self.line(f"char {name}[{size}] {WORDS}{' = {}' if zero else ''};")
            return name
        if zero:
            self.zero(ref, size)
        return ref

    def local_bytes(self, size: int, zero: bool = True) -> str:
        return self.array(self.tmp(), size, zero)

    def literal_bytes(self, data: bytes, size: int) -> str:
        """A char array holding a string constant, NUL-padded to `size`."""
        name = self.tmp()
        data = (data + b"\0" * size)[:size]
        ref = self.place(name, f"char {name}[{size}] {WORDS}", size)
        if ref is None:
            # C zero-fills what the initializer leaves.
            init = c_string(data.rstrip(b"\0"))
            self.line(f"char {name}[{size}] {WORDS} = {init};")
            return name
        self.line(f"__builtin_memcpy({ref}, {c_string(data)}, {size});")
        return ref

    def ret(self):
        self.line(RETURN)

    def lines_of(self, stmts: list):
        for st in stmts:
            self.line(st)

    def if_else(self, cond: str, then: list, other: list):
        """if (cond) then; else other; (lists of C statements)."""
        if len(then) == 1 and len(other) == 1:
            self.lines_of([f"if ({cond})", "\t" + then[0], "else", "\t" + other[0]])
        else:
            self.lines_of([f"if ({cond}) {{"] + ["\t" + st for st in then] + ["} else {"] +
                          ["\t" + st for st in other] + ["}"])

    # --- program -------------------------------------------------------------

    def generate(self) -> "FuncGen":
        read = {n.name for n in ir.walk(self.probe.body) if isinstance(n, ir.Local)}
        for name, typ in sorted(self.probe.locals.items()):
            if typ.is_bytes:
                self.local_ref[name] = self.array(loops.local_c(name), typ.size)
            else:
                self.line(f"{typ.scalar_ctype()} {loops.local_c(name)} = 0;")
                if name not in read:
                    # Set but never read (bpftrace runs such a script): used,
                    # so that -Wunused-but-set-variable holds its peace.
                    self.line(f"(void){loops.local_c(name)};")
        self.stmt(self.probe.body)
        if not loops.ends_in(self.probe.body, (ir.Return,)):
            self.ret()
        if next(self.temps, None) is not None:
            raise AssertionError("plyc/ir/opt/temps.py placed a temporary this code did not make")
        return self

    @property
    def guarded(self) -> bool:
        return self.uses_scratch and self.probe.provider.preemptible

    def scratch_decls(self) -> list:
        """The members of this program's scratch struct."""
        busy = [f"\t__u32 busy;\t/* claimed by a run of {c_comment(self.probe.spec.provider)} on this CPU */"] \
            if self.guarded else []
        return busy + self.root.decls(1)

    def scratch_size(self) -> int:
        return self.root.size() + (8 if self.guarded else 0)

    def finish(self, struct: Optional[str] = None, slot: int = 0) -> list:
        """The program's lines: the scratch slot looked up first when it has
        one (struct: its C type, slot: its index in plyc_scratch)."""
        head, release = [], []
        line = script_line(self.probe.spec.span)
        if self.uses_scratch:
            head = [f"__u32 slot = {slot};",
                    f"struct {struct} *{SCRATCH} = bpf_map_lookup_elem(&plyc_scratch, &slot);",
                    ""]
            if self.guarded:
                head += [f"if (!{SCRATCH})", "\treturn 0;",
                         f"if ({SCRATCH}->busy) {{",
                         "\t/* this probe, preempted in another task, holds the slot */",
                         "\tplyc_count_lost();", "\treturn 0;", "}",
                         f"{SCRATCH}->busy = 1;"]
                release = [f"{SCRATCH}->busy = 0;"]
            else:
                head += [f"if (!{SCRATCH})", "\treturn 0;"]
        out = [("\t" + text if text else "", line) for text in head]
        for text, n in self.lines:
            lines = self.scratch_placeholder(text, struct)
            if lines is not None:
                out += [(t, n) for t in lines]
                continue
            if text.endswith(RETURN):
                ind = text[:-len(RETURN)]
                out += [(ind + r, n) for r in release] + [(ind + "return 0;", n)]
            else:
                out.append((text, n))
        return out

    # --- statements ----------------------------------------------------------

    def stmt(self, s: ir.Stmt):
        if isinstance(s, ir.Block):
            self.stmt_Block(s)
            return
        self.cur_line = script_line(s.span)
        if (s.span.origin, s.span.line) != self.commented:
            # Statements of one script line (a KeyLet or LookupLet and its
            # user, an early return) share its comment.
            self.lines.append(("\t" * self.depth + self.comment(s.span), script_line(s.span)))
            self.commented = (s.span.origin, s.span.line)
        if isinstance(s, ir.KeyLet):
            # Its key serves the statements after it in the block: it lives
            # in the enclosing statement's scratch scope, not one of its own.
            self.stmt_KeyLet(s)
            return
        start = len(self.lines)
        # This statement's scratch temporaries are dead once it is done:
        # they share memory with those of its siblings.
        outer, self.scope = self.scope, Scope(script_line(s.span))
        getattr(self, "stmt_" + type(s).__name__)(s)
        if self.scope.members or self.scope.nested:
            outer.nested.append(self.scope)
            self.lines.insert(start, ("\t" * self.depth + f"plyc_scratch_fence({SCRATCH});", script_line(s.span)))
        self.scope = outer

    def comment(self, span: ir.Span) -> str:
        """`/* script.ply:7: start[kpid] = time; */`: the statement's line
        as written (render.linemap finds the script line in it); from an
        imported file, `/* script.bt:1: lib.bt:7: ... */`."""
        line, lines, where = span.line, self.source, f"{self.res.script}:{script_line(span)}"
        if span.origin is not None:
            lines = span.origin.text.split("\n")
            where += f": {span.origin.tracer_name}:{line}"
        text = lines[line - 1].strip() if 0 < line <= len(lines) else ""
        text = c_comment(" ".join(text.split()))
        where = c_comment(where)
        return f"/* {where}: {text} */" if text else f"/* {where} */"

    def stmt_Block(self, s: ir.Block):
        for sub in s.stmts:
            self.stmt(sub)

    def block(self, s: ir.Stmt):
        self.depth += 1
        self.stmt(s)
        self.depth -= 1

    def stmt_If(self, s: ir.If):
        cond = bare(self.uncast(self.scalar(s.cond)))
        self.line(f"if ({cond}) {{")
        self.block(s.then)
        if s.other is not None:
            self.line("} else {")
            self.block(s.other)
        self.line("}")

    def stmt_Return(self, s):
        loops.stmt_Return(self, s)

    def stmt_While(self, s: ir.While):
        loops.stmt_While(self, s)

    def stmt_ForMap(self, s: ir.ForMap):
        loops.stmt_ForMap(self, s)

    def stmt_Break(self, s: ir.Break):
        loops.stmt_Break(self, s)

    def stmt_Continue(self, s: ir.Continue):
        loops.stmt_Continue(self, s)

    def callback_functions(self, struct: Optional[str]) -> list:
        """The for loops' callbacks, their scratch pointer resolved."""
        out = []
        for cb in self.callbacks:
            body = []
            for text, _ in cb["body"]:
                lines = self.scratch_placeholder(text, struct)
                body += [text] if lines is None else lines
            out.append(dict(cb, body=body))
        return out

    def scratch_placeholder(self, text: str, struct: Optional[str]) -> Optional[list]:
        """A line of loops.py's placeholders as C (none where the probe has
        no scratch slot), or None for any other line."""
        if loops.SCRATCH_PASS in text:
            ind, c = text.split(loops.SCRATCH_PASS)
            return [f"{ind}{c}.scratch = {SCRATCH};"] if self.uses_scratch else []
        if text.endswith(loops.SCRATCH_DECL):
            ind = text[:-len(loops.SCRATCH_DECL)]
            return [f"{ind}struct {struct} *{SCRATCH} = plyc_lc->scratch;", f"{ind}(void){SCRATCH};"] \
                if self.uses_scratch else []
        return None

    def stmt_CallStmt(self, s: ir.CallStmt):
        # Evaluated for the statements it emits; its value is unused.
        if s.call.type.is_bytes:
            self.bytes(s.call)
        else:
            self.scalar(s.call)

    def stmt_LookupLet(self, s: ir.LookupLet):
        m = self.res.map(s.map)
        key = self.key(s.keys, m)
        self.line(f"{m.value_ctype} *{s.name} = bpf_map_lookup_elem(&{m.cname}, &{key});")

    def stmt_MapDelete(self, s: ir.MapDelete):
        m = self.res.map(s.map)
        key = self.key(s.keys, m)
        if m.info.is_agg and not m.keys:
            self.line(f"(void){key};")
            return aggread.zero(self, m)        # a per-CPU array keeps its slot
        self.line(f"bpf_map_delete_elem(&{m.cname}, &{key});")

    def stmt_SetLocal(self, s: ir.SetLocal):
        typ = self.probe.locals[s.name]
        if isinstance(s.value, ir.Local) and s.value.name == s.name:
            # `$x = $x` changes nothing (clang's -Wself-assign refuses the C);
            # a read, where it may be the only one (-Wunused-but-set-variable)
            self.line(f"(void){self.local_ref[s.name] if typ.is_bytes else loops.local_c(s.name)};")
            return
        if typ.is_bytes:
            self.copy_bytes(self.local_ref[s.name], typ.size, s.value, typ)
        else:
            self.line(f"{loops.local_c(s.name)} = {self.stored(s.value)};")

    def stmt_MapStore(self, s: ir.MapStore):
        m = self.res.map(s.map)
        val = Field("v", m.info.value_type)
        if val.type.is_bytes:
            vname = self.record("val", m.value_ctype, m.value_size)
            self.copy_bytes(f"{vname}.v", val.type.size, s.value, val.type)
        else:
            x = self.stored(s.value)
            vname = self.tmp("val")
            ref = self.place(vname, f"{m.value_ctype} {vname}", m.value_size)
            if ref is None:
                self.line(f"{m.value_ctype} {vname} = {{ .v = {x} }};")
            else:
                vname = ref
                self.line(f"{vname}.v = {x};")
        key = self.key(s.keys, m)
        self.line(f"plyc_map_store(&{m.cname}, &{key}, &{vname}, {m.info.index});")

    def stmt_Aggregate(self, s: ir.Aggregate):
        m = self.res.map(s.map)
        x = self.stored(s.args[0]) if s.agg.takes_x else None
        if x is not None and not x.isidentifier():
            xv = self.tmp("x")
            self.line(f"{'__s64' if m.info.value_type.signed else '__u64'} {xv} = {x};")
            x = xv
        key = self.key(s.keys, m)
        v = self.tmp("agg")
        self.line(f"{m.value_ctype} *{v} = plyc_agg_lookup(&{m.cname}, &{key}, {m.info.index});")
        self.line(f"if ({v}) {{")
        self.depth += 1
        for line in aggregations.update(s.agg, v, x, m):
            self.line(line)
        self.depth -= 1
        self.line("}")

    def key(self, keys: list, m) -> str:
        """A map's key: the one a KeyLet built (keys: its KeyRef), or built here."""
        if keys and isinstance(keys[0], ir.KeyRef):
            return self.keyrefs[keys[0].name]
        return self.build_key(keys, m)

    def stmt_KeyLet(self, s: ir.KeyLet):
        self.keyrefs[s.name] = self.build_key(s.keys, self.res.map(s.map))

    def build_key(self, keys: list, m) -> str:
        if not m.keys:
            k = self.tmp("key")
            ref = self.place(k, f"__u32 {k}", 4)
            if ref is None:
                self.line(f"__u32 {k} = 0;")
                return k
            self.line(f"{ref} = 0;")
            return ref
        # Values first: reading them may emit statements of their own.
        values = self.field_values(m.keys, keys)
        if m.scalar_key:
            k = self.tmp("key")
            ref = self.place(k, f"{m.key_ctype} {k}", m.key_size)
            if ref is None:
                self.line(f"{m.key_ctype} {k} = {values[0]};")
                return k
            self.line(f"{ref} = {values[0]};")
            return ref
        k = self.record("key", m.key_ctype, m.key_size)
        self.fill_fields(f"{k}.", m.keys, keys, values, 8)
        return k

    def field_values(self, fields: list, exprs: list) -> list:
        """C for each record field's value: a scalar, an array's name, or
        None where the field is read from memory straight into its place."""
        values = []
        for f, e in zip(fields, exprs):
            if f.type.is_bytes and self.direct_read(e):
                values.append(None)
            else:
                values.append(self.bytes_as(e, f.type) if f.type.is_bytes else self.stored(e))
        return values

    def fill_fields(self, prefix: str, fields: list, exprs: list, values: list, base: int):
        """Fill a record's fields; `base`: the record's known alignment."""
        for f, e, val in zip(fields, exprs, values):
            if f.type.is_bytes:
                if val is None:
                    self.read_bytes_into(f"{prefix}{f.name}", f.type.size, e)
                else:
                    self.copy_array(f"{prefix}{f.name}", f.type.size, val, self.size_as(e, f.type),
                                    f.offset, base)
            else:
                self.line(f"{prefix}{f.name} = {val};")

    # --- events ---------------------------------------------------------------

    def stmt_EmitEvent(self, s: ir.EmitEvent):
        if self.probe.target.extra.get("pin"):
            seqprintf.emit(self, s)      # a pinned iterator: no tracer reads events
            return
        er = self.res.event(s.event)
        exprs = s.args
        values = self.field_values(er.fields, exprs)
        if self.scope.members:
            # Addressed afresh below: clang keeps no address from above alive
            # across the reservation.
            self.line(f"plyc_scratch_fence({SCRATCH});")
        r = self.tmp("ev")
        # The output layer (plyc.bpf.h): ring buffer, or this probe's slot
        # of the perf-buffer path; a record it has no room for is counted
        # here, after the one NULL check of the reservation.
        self.line(f"struct {er.cname} *{r} = plyc_event_reserve(sizeof(*{r}), {self.probe.index});")
        self.line(f"if ({r}) {{")
        self.depth += 1
        self.line(f"{r}->id = {s.event.id};")
        # As clang knows it: the record type's own alignment.
        self.fill_fields(f"{r}->", er.fields, exprs, values, max([4] + [f.align for f in er.fields]))
        self.line(f"plyc_event_submit(ctx, {r}, sizeof(*{r}));")
        self.depth -= 1
        self.line("} else {")
        self.line("\tplyc_count_lost();")
        self.line("}")

    # --- bytes ------------------------------------------------------------------

    direct_read = staticmethod(temps.direct_read)

    def read_bytes_into(self, dst: str, size: int, call: ir.Call):
        size = min(size, call.type.size)
        if call.func.name == "mem":
            fn = "plyc_read_user" if call.args[0].type.user else "plyc_read_any"
            self.line(f"{fn}({dst}, {size}, {self.pointer(call.args[0])});")
        else:
            self.read_string_into(dst, size, call.args[0])

    def read_string_into(self, dst: str, size: int, arg):
        typ = arg.type
        if typ.kind == "dataloc":
            loc = self.scalar(arg)
            self.line(f"plyc_read_dataloc({dst}, {size}, ctx, {loc});")
            return
        fn = "bpf_probe_read_user_str" if typ.user else "plyc_read_str"
        self.line(f"{fn}({dst}, {size}, {self.pointer(arg)});")

    def copy_array(self, dst: str, dsize: int, src: str, ssize: int, offset: int = 0, base: int = 8):
        self.lines_of(copy_stmts(dst, dsize, src, ssize, offset, base))

    def copy_bytes(self, dst: str, dsize: int, e, dtype=None):
        """dtype: the destination's type, where a tuple may need converting."""
        if self.direct_read(e):
            self.read_bytes_into(dst, dsize, e)
            return
        src = self.bytes_as(e, dtype) if dtype is not None else self.bytes_ref(e)
        self.copy_array(dst, dsize, src, e.type.size if dtype is None else self.size_as(e, dtype))

    def bytes_ref(self, e) -> str:
        """Like bytes(), but a string constant as a literal (NUL-padded to
        its size): copied from, it needs no array of its own."""
        if isinstance(e, ir.BytesConst):
            # C's literal ends in one NUL of its own; an array (bpftrace's
            # pton()) fills its whole size, the NUL past it.
            n = e.type.size - (e.type.kind == "str")
            return c_string((e.value + b"\0" * e.type.size)[:n])
        return self.bytes(e)

    def string_sized(self, e) -> tuple:
        """A string and its size, for a comparison: a constant as a literal
        of its own length (comparisons stop at the NUL)."""
        if isinstance(e, ir.BytesConst):
            data = e.value.split(b"\0")[0]
            return c_string(data), min(len(data) + 1, e.type.size)
        return self.bytes(e), e.type.size

    def bytes(self, e) -> str:
        """The name of a char array holding the value of a string/buffer expression."""
        typ = e.type
        if isinstance(e, ir.BytesConst):
            return self.literal_bytes(e.value, typ.size)
        if isinstance(e, ir.Variable):
            name = self.local_bytes(typ.size)
            self.line(f"{variables.fill(e.var)}({name}, sizeof({name}));")
            return name
        if isinstance(e, ir.Local):
            return self.local_ref[e.name]
        if isinstance(e, (ir.MapRead, ir.LookupValue)):
            p = self.lookup(e)
            name = self.local_bytes(typ.size, zero=False)
            # The kernel keeps map values 8-aligned: copy words, not the
            # bytes a char array's alignment would make clang copy.
            self.if_else(p, mem_calls("memcpy", name, f"__builtin_assume_aligned({p}->v, 8)", typ.size),
                         mem_calls("memset", name, None, typ.size))
            return name
        if isinstance(e, (ir.TpField, ir.KMember)):
            return self.member_bytes(e)
        if isinstance(e, ir.Call):
            return self.call(e)
        if isinstance(e, (ir.TupleMake, ir.TupleGet)):
            return self.tuple_bytes(e)
        if isinstance(e, ir.Deref):
            # a string or tuple read through a pointer (bpftrace's *&$s), whole
            ptr = self.pointer(e.addr)
            name = self.local_bytes(typ.size, zero=False)
            read = "plyc_read_user" if e.user else "bpf_probe_read_kernel"
            self.line(f"{read}({name}, {typ.size}, {ptr});")
            return name
        if isinstance(e, ir.Ternary):
            c = bare(self.uncast(self.scalar(e.cond)))
            # a branch's tuple of narrower members is converted to the wider value's layout
            a, b = self.bytes_as(e.then, typ), self.bytes_as(e.other, typ)
            name = self.local_bytes(typ.size, zero=False)
            self.if_else(c, copy_stmts(name, typ.size, a, self.size_as(e.then, typ)),
                         copy_stmts(name, typ.size, b, self.size_as(e.other, typ)))
            return name
        raise AssertionError(f"no bytes for {type(e).__name__}")

    # --- scalars -------------------------------------------------------------------

    def scalar(self, e) -> str:
        """A C expression for an integer value, as __s64/__u64 (constants
        come folded: plyc/ir/opt/constfold.py)."""
        return getattr(self, "sc_" + type(e).__name__)(e)

    def const(self, value: int) -> str:
        text = c_int(value)
        self.consts[text] = value
        self.typed[text] = "__u64" if text.endswith("ULL") else "__s64"
        return text

    def cast(self, ctype: str, x: str) -> str:
        """x (a unary expression) as ctype; uncast() can take the cast off again."""
        if self.typed.get(x) == ctype:
            return x
        text = f"(({ctype}){x})"
        self.casts[text] = (ctype, x)
        self.typed[text] = ctype
        return text

    def uncast(self, x: str) -> str:
        """x without the casts to __s64/__u64 that scalar() wrapped it in,
        where the value is stored into (or tested as) an integer of at most
        64 bits: C converts it the same way, modulo the width."""
        while x in self.casts:
            x = self.casts[x][1]
        return x

    def operand(self, ctype: str, x: str) -> str:
        """x converted to ctype as an operand (no cast it already has)."""
        if x in self.consts:
            v = self.consts[x] % (1 << 64)
            if ctype == "__u64":
                return f"{v}ULL"
            if v < 1 << 63:
                return f"{v}LL"
        if self.typed.get(x) == ctype:
            return f"({ctype}){self.casts[x][1]}" if x in self.casts else x
        return f"({ctype}){x}"

    def pointer(self, e) -> str:
        """An integer expression as the address it holds."""
        x = self.uncast(self.scalar(e))
        if not (x.isidentifier() or bare(x) != x):
            x = f"({x})"
        return f"(const void *)(unsigned long){x}"

    def stored(self, e) -> str:
        """An integer expression for a store into a record field, key or local."""
        return bare(self.uncast(self.scalar(e)))

    def sc_IntConst(self, e: ir.IntConst) -> str:
        return self.const(e.value)

    def sc_Variable(self, e: ir.Variable) -> str:
        typ, name = e.type, e.var.name
        if typ.kind == "ctx":
            return "(__u64)(unsigned long)ctx"
        code = variables.code(e.var, self.probe.index)
        # The shared body's two sides, chosen by the constant `fentry`.
        kprobe = re.sub(r"\bctx\b", "(struct pt_regs *)ctx", code)
        if self.fentry and name.startswith("arg") and name[3:].isdigit():
            code = f"(fentry ? plyc_fentry_arg(ctx, {name[3:]}, {int(self.fentry['wrapped'])}) : {kprobe})"
        elif self.fentry and name == "retval":
            code = f"(fentry ? ((__u64 *)ctx)[{self.fentry['nargs']}] : {kprobe})"
        if typ.size < 8 and not code.startswith(f"({typ.ctype()})"):
            # Narrow values (an int retval) are sign- or zero-extended from their size.
            code = f"({typ.ctype()}){code}"
        return self.cast(typ.scalar_ctype(), code)

    def sc_Local(self, e: ir.Local) -> str:
        name = loops.local_c(e.name)
        self.typed[name] = e.type.scalar_ctype()
        return name

    PARAMS = {ir.TARGET: "((__u64)plyc_params.target)", ir.PID_FILTER: "((__u64)(__u32)plyc_params.pid_filter)",
              ir.START_NS: "plyc_params.start_ns", ir.ARG_COUNT: "plyc_params.arg_count"}

    def sc_Param(self, e: ir.Param) -> str:
        if e.kind == ir.ARG_NUM:
            return f"plyc_params.arg_num[{e.index - 1}]"
        if e.kind == ir.OPT_NUM:
            return f"plyc_params.opt_num[{e.index}]"
        return self.PARAMS[e.kind]

    def sc_DeviceConst(self, e: ir.DeviceConst) -> str:
        # set by the tracer before the load: a constant to the verifier
        return f"plyc_params.dconst[{self.res.dconst(e)}]"

    def lookup(self, e) -> str:
        """The pointer to the entry a MapRead reads (looked up here), or
        that a LookupValue's LookupLet bound."""
        if isinstance(e, ir.LookupValue):
            return e.name
        m = self.res.map(e.map)
        key = self.key(e.keys, m)
        p = self.tmp("p")
        self.line(f"{m.value_ctype} *{p} = bpf_map_lookup_elem(&{m.cname}, &{key});")
        return p

    def sc_MapRead(self, e) -> str:
        m = self.res.map(e.map)
        if m.info.is_agg and isinstance(e, ir.MapRead):
            return aggread.read(self, e, m)     # every CPU's value combined
        p = self.lookup(e)
        typ = e.type
        stored = record_type(m.info.value_type)
        v = f"{p}->v" if stored.kind != "str" and stored.ctype() == typ.scalar_ctype() else \
            f"({typ.scalar_ctype()}){p}->v"
        return f"({p} ? {v} : 0)"

    sc_LookupValue = sc_MapRead

    def sc_LookupFound(self, e: ir.LookupFound) -> str:
        return f"(__s64)({e.name} != 0)"

    def sc_MapHas(self, e: ir.MapHas) -> str:
        m = self.res.map(e.map)
        key = self.key(e.keys, m)
        return f"(__s64)(bpf_map_lookup_elem(&{m.cname}, &{key}) != 0)"

    def sc_Unary(self, e: ir.Unary) -> str:
        x = self.scalar(e.operand)
        if e.op == "!":
            return f"!{self.uncast(x)}"
        if e.op == "-":
            return f"(-{self.operand('__s64', x)})"
        # the operand converted first: `~(a > b)` of a comparison is
        # clang's -Wbool-operation otherwise
        ct = e.type.scalar_ctype()
        return f"({ct})~{self.operand(ct, x)}"

    def sc_Binary(self, e: ir.Binary) -> str:
        lt, rt = e.left.type, e.right.type
        if lt.kind == "str":
            (a, asize), (b, bsize) = self.string_sized(e.left), self.string_sized(e.right)
            eq = "==" if e.op == "==" else "!="
            return f"(plyc_strcmp({a}, {asize}, {b}, {bsize}) {eq} 0)"
        a, b = self.scalar(e.left), self.scalar(e.right)
        typ = e.type
        if e.op in ("&&", "||"):
            # Comparisons with 0 keep clang quiet about constant operands.
            return f"(__s64)(({a}) != 0 {e.op} ({b}) != 0)"
        if e.op in ("==", "!=", "<", "<=", ">", ">="):
            ct = "__s64" if T.promoted(lt, rt).signed else "__u64"
            return f"({self.operand(ct, a)} {e.op} {self.operand(ct, b)})"
        ct = typ.scalar_ctype()
        if e.op in ("/", "%") and typ.signed:
            # BPF has no signed division before v4 of its ISA.
            fn = "plyc_sdiv" if e.op == "/" else "plyc_smod"
            return f"{fn}({a}, {b})"
        if e.op == ">>" and lt.signed:
            return f"({self.operand('__s64', a)} >> {b})"
        if e.op == "<<":
            # Shifted unsigned: C leaves a negative signed value shifted
            # left undefined (and clang refuses a constant one). The cast
            # back also keeps clang's -Wint-in-bool-context quiet about a
            # shift tested as a condition (`if ($a << 2)`).
            text = f"(({ct})({self.operand('__u64', a)} << {self.operand(ct, b)}))"
        else:
            text = f"({self.operand(ct, a)} {e.op} {self.operand(ct, b)})"
        self.typed[text] = ct
        return text

    def sc_Ternary(self, e: ir.Ternary) -> str:
        c, a, b = self.scalar(e.cond), self.scalar(e.then), self.scalar(e.other)
        return f"({e.type.scalar_ctype()})({c} ? {a} : {b})"

    def lvalue(self, e) -> str:
        """A C lvalue naming a kernel object's member, for CO-RE reads. It
        reads nothing itself: only the pointers on the way are loaded."""
        if isinstance(e, ir.Index):
            return f"({self.lvalue(e.obj)})[{e.index}]"
        objt = e.obj.type
        if objt.kind == "struct":
            return f"({self.lvalue(e.obj)}).{e.field}"
        # The pointer goes into a variable first: everything inside a CO-RE
        # access expression is relocated, and its computation must not be.
        base = self.tmp("b")
        self.line(f"__u64 {base} = {self.stored(e.obj)};")
        return f"(({objt.pointee} *)(unsigned long){base})->{e.field}"

    @staticmethod
    def core_read(e) -> str:
        """bpf_core_read, or its user-memory twin when the access starts at a
        user pointer (a syscall's argument): the kernel's read fails there."""
        while isinstance(e.obj, (ir.KMember, ir.Index)) and not e.obj.type.is_pointer:
            e = e.obj
        return "bpf_core_read_user" if e.obj.type.user else "bpf_core_read"

    def core_target(self) -> str:
        """A zeroed __u64 a CO-RE read writes into (a stack variable, or its
        scratch slot where temps.py placed it)."""
        name = self.tmp("k")
        ref = self.place(name, f"__u64 {name}", 8)
        if ref is None:
            self.line(f"__u64 {name} = 0;")
        else:
            name = ref
            self.line(f"{name} = 0;")
        return name

    def core_scalar(self, e) -> str:
        typ = e.type
        lv = self.lvalue(e)
        name = self.core_target()
        # Read as many bytes as the device's kernel has for this member.
        self.line(f"PLYC_CORE_SCALAR({self.core_read(e)}, {name}, {lv});")
        if typ.signed and typ.size < 8:
            return self.cast("__s64", f"(__s{typ.size * 8}){name}")
        self.typed[name] = "__u64"
        return self.cast(typ.scalar_ctype(), name)

    def sc_Register(self, e: ir.Register) -> str:
        return self.cast("__u64", f"PLYC_REG(ctx, {e.name})")

    def sc_KMember(self, e: ir.KMember) -> str:
        if e.bitfield:
            return self.core_bitfield(e)
        return self.core_scalar(e)

    def bitfield_parts(self, e) -> tuple:
        """(pointer, access chain) of a kernel member: `ptr->chain` is its
        lvalue, the chain CO-RE's field info measures from the pointer."""
        if isinstance(e, ir.Index):
            s, chain = self.bitfield_parts(e.obj)
            return s, f"{chain}[{e.index}]"
        objt = e.obj.type
        if objt.kind == "struct":
            s, chain = self.bitfield_parts(e.obj)
            return s, f"{chain}.{e.field}"
        base = self.tmp("b")
        self.line(f"__u64 {base} = {self.stored(e.obj)};")
        return f"(({objt.pointee} *)(unsigned long){base})", e.field

    def core_bitfield(self, e: ir.KMember) -> str:
        """A bit-field, where its bits are on the device's kernel (CO-RE
        field info), sign-extended if the kernel's is signed."""
        typ = e.type
        s, chain = self.bitfield_parts(e)
        name = self.core_target()
        read = "bpf_probe_read_user" if self.core_read(e) == "bpf_core_read_user" else "bpf_probe_read_kernel"
        self.line(f"PLYC_CORE_BITFIELD({read}, {name}, {s}, {chain});")
        self.typed[name] = "__u64"
        return self.cast(typ.scalar_ctype(), name)

    def sc_TpField(self, e: ir.TpField) -> str:
        typ = e.type
        slot = self.res.slot(self.probe.index, e.name)
        name = self.tmp("f")
        # Read the field at the size the device's format gives it (syscall
        # arguments are word-sized: 8 bytes here, 4 on 32-bit devices), then
        # take its declared C type's size and sign: one context load that the
        # tracer rewrites before load (plyc_tp_int), or past the slots the
        # placeholders can number, the helper read.
        size = 4 if typ.kind == "dataloc" else typ.size
        where = f"plyc_params.tp_off[{slot.slot}], plyc_params.tp_size[{slot.slot}], {size}, {int(typ.signed)}"
        if self.probe.target.glob:
            # Where the field is depends on the matched event that fired.
            self.line(f"__u64 {name} = plyc_tp_glob_int(ctx, {slot.slot}, {size}, {int(typ.signed)});")
        elif slot.slot < TP_DIRECT_SLOTS:
            self.line(f"__u64 {name} = plyc_tp_int(ctx, {slot.slot}, {where});")
        else:
            self.line(f"__u64 {name} = plyc_tp_read(ctx, {where});")
        self.typed[name] = "__u64"
        return self.cast(typ.scalar_ctype(), name)

    def member_bytes(self, e) -> str:
        """A string/array member, read whole (zeroed on failure)."""
        typ = e.type
        name = self.local_bytes(typ.size, zero=False)
        if isinstance(e, ir.KMember):
            lv = self.lvalue(e)
            self.line(f"{self.core_read(e)}({name}, sizeof({name}), &{lv});")
            return name
        slot = self.res.slot(self.probe.index, e.name)
        if self.probe.target.glob:
            self.line(f"__builtin_memset({name}, 0, sizeof({name}));")
            self.line(f"plyc_tp_glob_bytes(ctx, {slot.slot}, {name}, sizeof({name}));")
            return name
        self.line(f"bpf_probe_read_kernel({name}, sizeof({name}), "
                  f"(const char *)ctx + plyc_params.tp_off[{slot.slot}]);")
        return name

    def sc_Index(self, e: ir.Index) -> str:
        if e.obj.type.btf:
            return self.core_scalar(e)
        arr = self.bytes(e.obj)
        ct = "__s8" if e.type.signed else "__u8"
        return f"((__s64)({ct}){arr}[{e.index}])"

    def sc_Cast(self, e: ir.Cast) -> str:
        typ = e.type
        if e.operand.type.is_bytes:
            # an array's bytes as an integer of its size, in the device's byte order
            arr, name = self.bytes_ref(e.operand), self.tmp("a")
            self.line(f"{typ.ctype()} {name} = 0;")
            self.line(f"__builtin_memcpy(&{name}, {arr}, sizeof({name}));")
            return f"(({typ.scalar_ctype()}){name})"
        x = self.scalar(e.operand)
        if typ.size == 8:
            return self.cast(typ.scalar_ctype(), x)
        return self.cast(typ.scalar_ctype(), f"({typ.ctype()}){self.uncast(x)}")

    def sc_SizeOf(self, e: ir.SizeOf) -> str:
        if e.size is None:
            # The size on the device's kernel, by CO-RE.
            return f"((__u64)bpf_core_type_size({e.ctype}))"
        return f"{e.size}ULL"

    def sc_UserRead(self, e: ir.UserRead) -> str:
        typ = e.type
        ptr = self.pointer(e.addr)
        name = self.tmp("u")
        self.line(f"{typ.ctype()} {name} = 0;")
        self.line(f"plyc_read_user(&{name}, sizeof({name}), {ptr});")
        return f"(({typ.scalar_ctype()}){name})"

    def sc_Deref(self, e: ir.Deref) -> str:
        typ = e.type
        ptr = self.pointer(e.addr)
        name = self.tmp("d")
        read = "plyc_read_user" if e.user else "bpf_probe_read_kernel"
        self.line(f"{typ.ctype()} {name} = 0;")
        self.line(f"{read}(&{name}, sizeof({name}), {ptr});")
        return self.cast(typ.scalar_ctype(), name)

    def sc_Call(self, e: ir.Call) -> str:
        return self.call(e)

    def call(self, e: ir.Call) -> Optional[str]:
        return intrinsics.emit(self, e)


def generate(probe: ir.Probe, res: Resources, fentry: Optional[dict] = None, source: list = ()) -> FuncGen:
    """The program of one probe; its finish() gives the lines once the
    scratch slot is known."""
    return FuncGen(probe, res, fentry, source).generate()
