"""Where `plyc list` finds probes: this machine's kernel (tracefs, its list
of traceable functions, its BTF) or a kernel's BTF file (`--btf FILE`), and
user binaries (elfsyms.py). The providers say what they list and how
(plyc/providers/listing.py); here are the readers and the text of a
listed type, as bpftrace 0.27's `-lv` prints it."""
from __future__ import annotations

import functools
import os
from dataclasses import dataclass, field
from typing import Optional

from . import btf as B
from . import tp_btf, tracefs

TRACEABLE = "available_filter_functions"


class ListError(Exception):
    pass


@dataclass(frozen=True)
class Listed:
    """One line of the list and, with -v, the lines under it."""
    line: str
    details: tuple = ()


def type_text(b: B.BTF, tid: int) -> str:
    """A BTF type as C spells it, qualifiers kept (`const char *`), as
    bpftrace prints an argument's."""
    t = b[tid]
    if t.kind == B.PTR:
        inner = b[t.type]
        if inner.kind == B.FUNC_PROTO:
            return "void *"         # a function pointer: bpftrace too names no prototype
        return type_text(b, t.type) + " *"
    if t.kind == B.CONST:
        return "const " + type_text(b, t.type)
    if t.kind == B.VOLATILE:
        return "volatile " + type_text(b, t.type)
    if t.kind in (B.RESTRICT, B.TYPE_TAG):
        return type_text(b, t.type)
    return b.type_name(tid)


@dataclass
class Source:
    """This machine (btf_path None) or a kernel's BTF file."""
    btf_path: Optional[str] = None
    notes: list = field(default_factory=list)       # said once on stderr (what was left out, and why)

    @property
    def machine(self) -> bool:
        return self.btf_path is None

    def btf(self) -> B.BTF:
        try:
            return B.load(self.btf_path)
        except B.BTFError as err:
            raise ListError(str(err)) from None

    def module_btfs(self) -> list:
        """(module, its split BTF) of the modules loaded here (none with --btf)."""
        if not self.machine:
            return []
        base = self.btf()
        out = []
        for path in B.modules(base):
            try:
                out.append((os.path.basename(path), B.module(base, os.path.basename(path))))
            except B.BTFError:
                continue
        return out

    @functools.cached_property
    def traceable(self) -> Optional[dict]:
        """This machine's traceable functions (tracefs'
        available_filter_functions): name -> module ("" for the kernel's);
        None where it cannot be read (or --btf)."""
        if not self.machine:
            return None
        try:
            path = os.path.join(tracefs.root(), TRACEABLE)
            with open(path) as f:
                text = f.read()
        except (OSError, tracefs.TracefsError):
            return None
        out: dict = {}
        for line in text.splitlines():
            words = line.split()
            if words:
                module = words[1].strip("[]") if len(words) > 1 and words[1].startswith("[") else ""
                out.setdefault(words[0], module)
        return out

    def kernel_functions(self) -> dict:
        """What kprobes attach to: name -> module. The traceable list where
        it opens; else (a kernel that hides it, as this lab's does) the
        kernel's text symbols (/proc/kallsyms), which may name a function
        the kernel refuses to probe; with --btf, the file's functions.
        Read once a Source: each glob kprobe of a script asks again."""
        return self._kernel_functions

    @functools.cached_property
    def _kernel_functions(self) -> dict:
        if self.traceable is not None:
            return self.traceable
        if not self.machine:
            return {n: "" for n in self.btf().names_of(B.FUNC)}
        out: dict = {}
        try:
            with open("/proc/kallsyms") as f:
                for line in f:
                    words = line.split()
                    if len(words) >= 3 and words[1] in "tT" and not words[2].startswith("__pfx_"):
                        out.setdefault(words[2], words[3].strip("[]") if len(words) > 3 else "")
        except OSError as err:
            raise ListError(f"cannot read /proc/kallsyms: {err.strerror}") from None
        self.notes.append(f"{TRACEABLE} cannot be read here: kprobes listed from /proc/kallsyms "
                          "(some of them the kernel may refuse to probe)")
        return out

    def has_kernel_function(self, name: str, module: str = "") -> bool:
        """Whether kernel_functions() has name (in module, if given),
        found in the file's bytes: what plyc check asks of one exact name,
        without parsing some 100,000 lines."""
        if not self.machine:
            return name in self.kernel_functions()
        word = name.encode()
        tail = (b"\t[" + module.encode() + b"]") if module else b""
        data, traceable = self._symbol_bytes
        if traceable:
            lines = [b"\n" + word + (b" [" + module.encode() + b"]" if module else b"")]
        else:
            lines = [b" " + kind + b" " + word + tail for kind in (b"t", b"T")]
        # the name whole: the line ends after it (or, with no module asked, a module follows)
        ends = (b"\n",) if module else (b"\n", b"\t", b" ")
        for line in lines:
            at = data.find(line)
            while at >= 0:
                after = data[at + len(line):at + len(line) + 1]
                if after in ends or not after:
                    return True
                at = data.find(line, at + 1)
        return False

    @functools.cached_property
    def _symbol_bytes(self) -> tuple:
        """(the bytes has_kernel_function searches, whether they are the
        traceable list): read once a Source, a script's every exact kprobe
        asks."""
        try:
            with open(os.path.join(tracefs.root(), TRACEABLE), "rb") as f:
                return b"\n" + f.read(), True
        except (OSError, tracefs.TracefsError):
            try:
                with open("/proc/kallsyms", "rb") as f:
                    return f.read(), False
            except OSError as err:
                raise ListError(f"cannot read /proc/kallsyms: {err.strerror}") from None

    def tracepoints(self) -> list:
        """(group, event) of every tracepoint: this machine's tracefs; with
        --btf, the events the file has (btf_trace_EVENT) in the group this
        machine's tracefs gives them (BTF names no group)."""
        mine = self._machine_tracepoints()
        if self.machine:
            return mine
        group_of = {e: g for g, e in mine}
        events = [n[len("btf_trace_"):] for n in self.btf().names_of(B.TYPEDEF) if n.startswith("btf_trace_")]
        out = sorted((group_of[e], e) for e in events if e in group_of)
        if len(out) < len(events):
            self.notes.append(f"{len(events) - len(out)} tracepoints of {self.btf_path} are left out: this "
                              "machine has no event of their names to give their group "
                              "(rawtracepoint: lists them all)")
        return out

    def _machine_tracepoints(self) -> list:
        try:
            root = tracefs.root()
        except tracefs.TracefsError as err:
            raise ListError(str(err)) from None
        events = os.path.join(root, "events")
        out = []
        try:
            groups = sorted(os.listdir(events))
        except OSError as err:
            raise ListError(f"cannot read {events}: {err.strerror}") from None
        for g in groups:
            try:
                names = os.listdir(os.path.join(events, g))
            except (NotADirectoryError, OSError):
                continue
            out.extend((g, e) for e in names if os.path.isfile(os.path.join(events, g, e, "format")))
        return sorted(out)

    def tracepoint_fields(self, group: str, event: str) -> tuple:
        """Its fields as the format file declares them, less the common_ ones."""
        if self.machine:
            path = os.path.join(tracefs.root(), "events", group, event, "format")
            try:
                with open(path) as f:
                    text = f.read()
            except OSError:
                return ()
            decls = (m["decl"].strip() for m in tracefs.FIELD_RE.finditer(text))
            return tuple(d for d in decls if " common_" not in f" {d}" and not d.startswith("common_"))
        try:
            fields = tp_btf.event_fields(self.btf(), self.btf_path, group, event)
        except tracefs.TracefsError:
            return ()
        return tuple(f"{f.ctype} {f.decl or f.name}" for f in fields.values() if not f.name.startswith("common_"))
