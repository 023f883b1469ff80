"""The functions of the C files a script imports (`import "lib.bpf.c";`),
as bpftrace 0.27 offers them: each file is compiled (usercode.py) when the
script is lowered, its errors and warnings said at its own lines, and its
global functions, read from the object's BTF, are what the script may
call by name, typed by their prototypes (static ones are not: 0.27's
"Unknown function"). An integer argument is converted to its parameter's
type (0.27's warning where a wider value is narrowed), a pointer one takes
any pointer; a value of another type is refused in 0.27's words. Types
the file defines are not the script's (0.27: "Cannot resolve unknown
type")."""
from __future__ import annotations

from dataclasses import dataclass

from ... import arch as ARCH
from ... import btf as B
from ... import types as T
from ... import usercode
from ...diag import Collector, Diagnostic
from ...ir import fold
from ...ir import intrinsics as I
from ...ir import nodes as ir
from ...output import work_folder
from ...span import Span


@dataclass
class CFunction:
    name: str
    ret: object                # T.Type (T.VOID for none); None: one a script cannot take
    params: list               # (name, T.Type or None: a type a script cannot pass, C type, C's name of it)
    ret_c: str
    params_c: list
    source: object = None      # the span.SourceFile defining it
    ret_name: str = ""         # its return type as C names it (messages)


def load(st, diag: Collector) -> None:
    """st.cfuncs: the callable functions of st.ast.c_files, by name."""
    st.cfuncs = {}
    files = st.ast.c_files
    if not files:
        return
    import shutil
    from ...toolchain import find_clang
    clang = find_clang()
    a = ARCH.get(st.arch)
    if clang is None:
        diag.error("importing a C file needs clang on the build machine", Span(1, 1, 1, 1, files[0]))
        return
    folder = work_folder()
    try:
        if usercode.wants_vmlinux(files):
            usercode.vmlinux_header(st.ktypes.path, folder)
        for i, source in enumerate(files):
            out = folder / f"user{i}.o"
            proc = usercode.compile_one(clang, a, folder, source, out, bitcode=False)
            failed = proc.returncode != 0
            said = False
            for sev, line, col, text in usercode.messages(proc.stderr, source):
                span = Span(line, col, line, col, source)
                if sev == "error":
                    diag.error(text, span)
                    said = True
                else:
                    st.warnings.append(Diagnostic(text, span, severity="warning"))
            if failed:
                if not said:
                    diag.error(f"clang cannot compile {source.name}: {proc.stderr.strip()[-400:]}",
                               Span(1, 1, 1, 1, source))
                continue
            _functions(st, out.read_bytes(), source, diag)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _functions(st, obj: bytes, source, diag: Collector) -> None:
    sec = B._elf_section(obj, ".BTF")
    if sec is None:
        return       # a file with no functions
    btf = B.BTF(sec, source.name)
    for tid in range(1, len(btf.types)):
        t = btf[tid]
        if t.kind != B.FUNC or t.linkage != 1:
            continue
        proto = btf[t.type]
        ret, ret_c = _type(btf, proto.type)
        params = []
        for name, ptid in proto.members:
            typ, c = _type(btf, ptid)
            params.append((name, typ, c, btf.type_name(ptid) if ptid else "void"))
        if t.name.startswith("plyc_"):
            # linked with the program, whose own names start so
            diag.error(f"{t.name}(): a name starting with plyc_ is plyc's own in the program", _at(source, t.name))
            continue
        if t.name in st.cfuncs:
            diag.error(f"{t.name}() is defined in {st.cfuncs[t.name].source.name} too", _at(source, t.name))
            continue
        st.cfuncs[t.name] = CFunction(t.name, ret, params, ret_c or "void", [p[2] for p in params], source,
                                      btf.type_name(proto.type) if proto.type else "void")


def _at(source, name: str) -> Span:
    """Where the file first names `name` (its definition, most often)."""
    import re
    for i, line in enumerate(source.text.splitlines(), 1):
        m = re.search(rf"\b{re.escape(name)}\s*\(", line)
        if m:
            return Span(i, m.start() + 1, i, m.start() + len(name), source)
    return Span(1, 1, 1, 1, source)


def _type(btf, tid: int):
    """(plyc's type, its C type) of a parameter or return type; (None,
    None) for one a script cannot pass or take (a struct by value)."""
    if tid == 0:
        return T.VOID, "void"
    t = btf[btf.strip(tid)]
    if t.kind == B.INT and t.is_bool:
        return T.Int(1, False, "bool"), "_Bool"
    if t.kind in (B.INT, B.ENUM, B.ENUM64) and t.size in (1, 2, 4, 8):
        return T.Int(t.size, t.signed), f"__{'s' if t.signed else 'u'}{t.size * 8}"
    if t.kind == B.PTR:
        return T.Ptr("void"), "void *"
    return None, None


def call(low, e, args: list) -> ir.Expr:
    """e (an A.Call of an imported function), its arguments lowered."""
    f = low.st.cfuncs[e.name]
    if len(args) != len(f.params):
        low.err(f"Function `{e.name}` requires {len(f.params)} arguments, got only {len(args)}", e.span)
        return ir.IntConst(0, type=T.S64, span=e.span)
    out = [ir.BytesConst(e.name.encode(), type=T.literal_str(e.name.encode()))]
    for (name, typ, _, tname), arg, a_node in zip(f.params, args, e.args):
        what = f" for argument `{name}`" if name else ""
        if typ is None:
            low.err(f"{e.name}()'s parameter{' ' + name if name else ''} is a {tname} held by value, "
                    f"which a script cannot pass", a_node.span)
        elif typ.is_pointer:
            if not arg.type.is_pointer:
                low.err(f"Expected {tname}{what} got {arg.type}", a_node.span)
            out.append(arg)
        elif not arg.type.is_int or arg.type.is_pointer:
            low.err(f"Expected {tname}{what} got {arg.type}", a_node.span)
            out.append(arg)
        else:
            if arg.type.size > typ.size and fold.value(arg) is None:     # 0.27 folds a literal's
                _warn(low, f"Expression of type: {arg.type} being cast to type: {typ}. This may cause "
                           "unexpected results. Use an explicit cast to suppress this warning.", a_node.span)
            out.append(ir.Cast(arg, type=typ, span=a_node.span))
    if f.ret is None:
        low.err(f"{e.name}() returns a {f.ret_name} by value, which a script cannot take", e.span)
    used = (f.name, f.ret_c, f.params_c)
    if used not in low.st.cfuncs_used:
        low.st.cfuncs_used.append(used)
    return ir.Call(I.C_CALL, out, type=f.ret or T.S64, span=e.span)


def _warn(low, message: str, span) -> None:
    d = Diagnostic(message, span, "warning")
    if low.final and d not in low.st.warnings:
        low.st.warnings.append(d)
