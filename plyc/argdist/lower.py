"""argdist specifiers to a ply script: the same script a user would write by
hand, so the rest of the compiler (checker, codegen, loader) is shared.
Entry values ($entry(param), $latency) are kept in plain maps keyed by
thread, as argdist does; the report every interval is an interval probe."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

from .spec import SpecError, Specifier

ALIASES = {"$PID": "pid", "$TID": "kpid", "$UID": "uid", "$GID": "gid", "$CPU": "cpu", "$COMM": "comm"}

# C types argdist users write, as the integer types plyc's casts know.
TYPEDEFS = {
    "loff_t": "s64", "off_t": "s64", "umode_t": "u16", "mode_t": "u32", "gfp_t": "u32", "dev_t": "u32",
    "ino_t": "u64", "time_t": "s64", "clockid_t": "s32", "key_t": "s32", "fmode_t": "u32",
    "sector_t": "u64", "blkcnt_t": "u64", "uint8_t": "u8", "uint16_t": "u16", "uint32_t": "u32",
    "uint64_t": "u64", "int8_t": "s8", "int16_t": "s16", "int32_t": "s32", "int64_t": "s64",
    "unsigned long long": "u64", "long long": "s64", "unsigned long": "u64", "long": "s64",
    "unsigned int": "u32", "unsigned": "u32", "int": "s32", "unsigned short": "u16", "short": "s16",
    "unsigned char": "u8", "char": "s8", "signed char": "s8", "bool": "u8", "_Bool": "u8",
    "size_t": "u64", "ssize_t": "s64", "pid_t": "s32", "uid_t": "u32", "gid_t": "u32",
}
INT_NAMES = {"u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64", "__u8", "__u16", "__u32", "__u64",
             "__s8", "__s16", "__s32", "__s64"}
QUALIFIERS = re.compile(r"\b(const|volatile|__user|__restrict|restrict|__kernel|__force)\b")


@dataclass
class ReportSpec:
    map: str                  # "@s0"
    kind: str                 # freq | hist
    header: str               # the label, the specifier, or the histogram's expression
    key_names: list           # display names of the key's expressions
    default: str = ""         # "calls" (total calls) | "retval" | ""


@dataclass
class Lowered:
    script: str
    specs: list = field(default_factory=list)


def norm_type(ctype: str) -> str:
    return re.sub(r"\s+", " ", QUALIFIERS.sub("", ctype)).replace(" *", "*").replace("*", " *").strip()


def is_string_type(ctype: str) -> bool:
    return norm_type(ctype) in ("char *", "unsigned char *")


def int_name(ctype: str) -> Optional[str]:
    t = norm_type(ctype)
    if t in INT_NAMES:
        return t.lstrip("_")
    return TYPEDEFS.get(t)


def cast_prefix(ctype: str) -> str:
    """A ply cast for a value of C type `ctype` ("" when none is known)."""
    t = norm_type(ctype)
    if t.endswith("*"):
        base = t[:-1].strip()
        if re.fullmatch(r"(struct|union) \w+", base):
            return f"({base} *)"
        if base in ("char", "unsigned char", "void"):
            return f"({base} *)"
        ib = int_name(base)
        return f"({ib} *)" if ib else ""
    ib = int_name(t)
    return f"({ib})" if ib else ""


class Translator:
    """One argdist C expression into ply: parameters become typed argN,
    $aliases become variables, $entry()/$latency read the entry maps."""

    TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|\$entry\(\s*\w+\s*\)|\$\w+|[A-Za-z_]\w*|->|\d\w*|\s+|.', re.S)

    def __init__(self, spec: Specifier, index: int, strsize: int):
        self.spec = spec
        self.index = index
        self.strsize = strsize
        self.entry_params: set = set()
        self.latency = False

    def bail(self, msg: str):
        raise SpecError(f"error parsing probe '{self.spec.raw}': {msg}")

    def entry_map(self, what: str) -> str:
        return f"e{self.index}_{what}[kpid]"

    def __call__(self, expr: str) -> str:
        toks = [m.group(0) for m in self.TOKEN.finditer(expr)]
        out, prev, i = [], "", 0
        while i < len(toks):
            tok = toks[i]
            nxt = next((t for t in toks[i + 1:] if not t.isspace()), "")
            if tok.isspace():
                out.append(tok)
                i += 1
                continue
            if tok.startswith("$entry("):
                name = tok[7:-1].strip()
                self.entry_params.add(name)
                out.append(self.entry_map(name))
            elif tok == "$latency":
                self.latency = True
                out.append(f"(time - {self.entry_map('_lat')})")
            elif tok == "$retval":
                if self.spec.probe != "r":
                    self.bail("$retval is only available in return probes (r)")
                out.append("retval")
            elif tok.startswith("$"):
                if tok not in ALIASES:
                    self.bail(f"unknown alias '{tok}' (known: $retval, $entry(param), $latency, "
                              + ", ".join(ALIASES) + ")")
                out.append(ALIASES[tok])
            elif tok == "STRCMP" and nxt == "(":
                i, text = self.strcmp(toks, i)
                out.append(text)
                prev = ")"
                continue
            elif re.fullmatch(r"[A-Za-z_]\w*", tok) and prev not in ("->", "."):
                out.append(self.name(tok, nxt))
            else:
                out.append(tok)
            prev = tok
            i += 1
        return "".join(out).strip()

    def name(self, tok: str, nxt: str) -> str:
        if tok == "args" and nxt == "->" and self.spec.probe == "t":
            return "data"
        found = self.spec.param(tok)
        if found is None:
            return tok
        if self.spec.probe == "r":
            self.bail(f"'{tok}' is a parameter: in a return probe, read it with $entry({tok})")
        pos, param = found
        return f"({cast_prefix(param.type)}arg{pos})"

    def strcmp(self, toks: list, i: int):
        """STRCMP("literal", expr): true when the string at expr equals the literal."""
        depth, j, inner = 0, i + 1, []
        while j < len(toks):
            t = toks[j]
            if t == "(":
                depth += 1
                if depth == 1:
                    j += 1
                    continue
            elif t == ")":
                depth -= 1
                if depth == 0:
                    break
            inner.append(t)
            j += 1
        args = [a.strip() for a in _split_commas("".join(inner))]
        if len(args) != 2 or not args[0].startswith('"'):
            self.bail('STRCMP takes a string literal and an expression: STRCMP("name", expr)')
        return j + 1, f"(strcmp({args[0]}, str({self(args[1])}, {self.strsize})) == 0)"


def _split_commas(text: str) -> list:
    from .spec import split_top
    return split_top(text, ",")


def probe_spec(spec: Specifier, entry: bool = False) -> str:
    ret = spec.probe == "r" and not entry
    if spec.probe == "t":
        return f"tracepoint:{spec.library}/{spec.function}"
    if spec.probe == "u":
        return f"usdt:{spec.library}:{spec.function}"
    if spec.library:
        return f"{'uretprobe' if ret else 'uprobe'}:{spec.library}:{spec.function}"
    return f"{'kretprobe' if ret else 'kprobe'}:{spec.function}"


def key_expr(ctype: str, text: str, strsize: int) -> str:
    if is_string_type(ctype):
        return f"str({text}, {strsize})"
    name = int_name(ctype)
    return f"({name})({text})" if name else f"(u64)({text})"


def lower(specs: list, *, interval: int = 1, strsize: int = 80, tid: Optional[int] = None) -> Lowered:
    out = Lowered("")
    lines = ["/* Generated by plyc argdist. */", ""]
    for i, spec in enumerate(specs):
        tr = Translator(spec, i, strsize)
        exprs = [tr(e) for e in spec.exprs]
        filt = tr(spec.filter) if spec.filter else ""
        conds = []
        if not spec.is_user and spec.probe != "u":
            # -p PID at build or run time: kernel probes filter on it (user
            # probes attach to that process only).
            conds.append("(_pidfilter == 0 || pid == _pidfilter)")
        if tid is not None:
            conds.append(f"kpid == {tid}")
        name = f"@s{i}"
        if spec.kind == "hist":
            update = f"{name} = _log2({exprs[0]});"
        elif spec.default_expr and spec.probe != "r":
            update = f"{name} = count();"
        else:
            keys = ", ".join(key_expr(t, e, strsize) for t, e in zip(spec.types, exprs))
            update = f"{name}[{keys}] = count();"
        needs_entry = bool(tr.entry_params or tr.latency)
        if needs_entry:
            lines.append(f"{probe_spec(spec, entry=True)}")
            lines.append("{")
            for pname in sorted(tr.entry_params):
                pos, param = spec.param(pname)
                lines.append(f"\te{i}_{pname}[kpid] = {cast_prefix(param.type)}arg{pos};")
            if tr.latency:
                lines.append(f"\te{i}__lat[kpid] = time;")
            lines.append(f"\te{i}__seen[kpid] = 1;")
            lines.append("}")
            lines.append("")
            # The return probe only counts calls whose entry it saw, and
            # always forgets the entry, whatever the filter says.
            lines.append(f"{probe_spec(spec)} / e{i}__seen[kpid] /")
            lines.append("{")
            cond = " && ".join(conds + ([f"({filt})"] if filt else []))
            if cond:
                lines.append(f"\tif ({cond})")
                lines.append(f"\t\t{update}")
            else:
                lines.append(f"\t{update}")
            for pname in sorted(tr.entry_params):
                lines.append(f"\tdelete e{i}_{pname}[kpid];")
            if tr.latency:
                lines.append(f"\tdelete e{i}__lat[kpid];")
            lines.append(f"\tdelete e{i}__seen[kpid];")
            lines.append("}")
        else:
            cond = " && ".join(conds + ([f"({filt})"] if filt else []))
            lines.append(f"{probe_spec(spec)}" + (f" / {cond} /" if cond else ""))
            lines.append("{")
            lines.append(f"\t{update}")
            lines.append("}")
        lines.append("")
        if spec.kind == "hist":
            header = spec.label or ("retval" if spec.default_expr else spec.exprs[0])
            out.specs.append(ReportSpec(name, "hist", header, [], "retval" if spec.default_expr else ""))
        else:
            header = spec.label or spec.raw
            default = ("retval" if spec.probe == "r" else "calls") if spec.default_expr else ""
            key_names = ["retval"] if default == "retval" else ([] if default else list(spec.exprs))
            out.specs.append(ReportSpec(name, "freq", header, key_names, default))
    lines += [f"interval:{interval}s", "{", "\t_argdist_report();", "}", ""]
    out.script = "\n".join(lines)
    return out
