"""Kernel types for casts and member access, from BTF. The checker asks here
for the type of `((struct file *)p)->f_path.dentry`; code generation asks
for the C definitions to emit. Those definitions hold only the members a
script touches and carry preserve_access_index, so every read is a CO-RE
relocation that the device's kernel resolves when the tracer loads."""
from __future__ import annotations

import os
from typing import Optional

from . import btf as B
from . import types as T


# Structs the generated C's headers define (runtime-c/bpf/plyc_arch.bpf.h).
HEADER_DEFINED = frozenset({"pt_regs"})


class KernelTypes:
    def __init__(self, path: Optional[str] = None):
        self.path = path
        self._btf: Optional[B.BTF] = None
        # Named struct/union id -> accessed member tree: {member index: subtree or None}
        self.uses: dict[int, dict] = {}
        # Per-CPU variables declared as typed ksyms: name -> its VAR's id
        self.ksyms: dict[str, int] = {}
        self._nenums = 0        # anonymous enums declared (c_decl), numbering their enumerator

    @property
    def btf(self) -> B.BTF:
        if self._btf is None:
            self._btf = B.load(self.path)
        return self._btf

    # --- types ----------------------------------------------------------------

    def lookup(self, words: tuple) -> Optional[int]:
        """The BTF id of `struct X`, `union X` or `enum X`."""
        kinds = {"struct": (B.STRUCT,), "union": (B.UNION,), "enum": (B.ENUM, B.ENUM64)}.get(words[0], ())
        for kind in kinds:
            tid = self.btf.find(kind, words[1])
            if tid is not None:
                return tid
        if kinds and self.btf.base is None and self.path is None:
            # A loaded module's type: its split BTF holds the kernel's types
            # too (same ids), so it becomes the BTF read from here on; the
            # tracer's CO-RE relocations name it and libbpf finds it in the
            # device's module BTF. One module a program.
            module = B.module_with(self.btf, kinds, words[1])
            if module is not None:
                self._btf = module
                return self.lookup(words)
        return None

    def use_module(self, name: str) -> B.BTF:
        """Module `name`'s split BTF, read from here on (it holds the kernel's
        types too, same ids), as a module's type makes it (lookup): one
        module a program. BTFError where it is not loaded on the build
        machine or another module's BTF is in use."""
        b = self.btf
        if b.base is not None:
            if os.path.basename(b.path) == name:
                return b
            raise B.BTFError(f"the program already reads module {os.path.basename(b.path)}'s BTF: "
                             f"one module's types a program")
        found = B.module(b, name) if self.path is None else None
        if found is None:
            raise B.BTFError(f"module {name}'s BTF is not on the build machine (/sys/kernel/btf/{name}: "
                             "the module is not loaded here" + (", and --btf reads no modules)" if self.path
                                                               else ")"))
        self._btf = found
        return found

    def pointer_to(self, tid: int) -> T.Type:
        b = self.btf
        target = b.strip(tid)
        name = b.type_name(target)
        if b[target].kind in (B.STRUCT, B.UNION):
            self.use(target)
        return T.Type("int", 8, False, pointee=name, btf=target)

    def value_type(self, tid: int) -> T.Type:
        """The plyc type of a value of BTF type `tid`."""
        b = self.btf
        t = b[b.strip(tid)]
        if t.kind == B.INT:
            if t.name in ("char", "signed char", "unsigned char") and t.size == 1:
                return T.Int(1, t.signed)
            return T.Int(t.size, t.signed)
        if t.kind in (B.ENUM, B.ENUM64):
            return T.Int(t.size, t.signed)
        if t.kind == B.PTR:
            target = b[b.strip(t.type)]
            if target.kind == B.INT and target.size == 1:
                return T.Ptr("char")
            if target.kind in (B.STRUCT, B.UNION) and target.name:
                return self.pointer_to(target.id)
            return T.Ptr(b.type_name(t.type))
        if t.kind == B.ARRAY:
            elem = b[b.strip(t.type)]
            size = b.size(t.id)
            if elem.kind == B.INT and elem.size == 1:
                return T.Str(size)
            return T.Type("buf", size, pointee=b.type_name(t.type), btf=t.id)
        if t.kind in (B.STRUCT, B.UNION):
            if t.name:
                self.use(t.id)
            return T.Type("struct", t.size, pointee=b.type_name(t.id), btf=t.id)
        raise TypeError(f"values of type {b.type_name(tid)} are not supported")

    def element_type(self, array: T.Type) -> T.Type:
        b = self.btf
        return self.value_type(b[array.btf].type)

    # --- members ----------------------------------------------------------------

    def member(self, owner: int, name: str, bitfields: bool = False):
        """(path of member indexes, member type) of owner.name, or None.
        Records the access so the member is emitted in the local definition.
        A bit-field only where the caller reads it as one (bitfields: the
        KMember's `bitfield`, a CO-RE bit-field read)."""
        b = self.btf
        path = b.find_member(owner, name)
        if path is None:
            return None
        if path[-1].bitfield_size and not bitfields:
            raise TypeError(f"'{name}' is a bitfield, which can't be read yet")
        # Record the access in the owner's tree, through anonymous members.
        container = b.strip(owner)
        tree = self.use(container)
        for i, m in enumerate(path):
            index = next(j for j, x in enumerate(b[container].members) if x is m)
            if i == len(path) - 1:
                tree.setdefault(index, None)
            else:
                if tree.get(index) is None:
                    tree[index] = {}
                tree = tree[index]
                container = b.strip(m.type)
        return path, self.value_type(path[-1].type)

    def percpu_var(self, name: str) -> Optional[int]:
        """The kernel's per-CPU variable `name` (a VAR of its BTF, which
        holds only those), to be declared an extern typed ksym (libbpf
        resolves it at load; bpf_this_cpu_ptr() needs its BTF type); its
        VAR's id, or None when the BTF has none."""
        vid = self.btf.find(B.VAR, name)
        if vid is None:
            return None
        self.ksyms[name] = vid
        t = self.btf[self.btf.strip(self.btf[vid].type)]
        while t.kind == B.ARRAY:
            t = self.btf[self.btf.strip(t.type)]
        if t.kind in (B.STRUCT, B.UNION) and t.name:
            self.use(t.id)      # declared, so the extern has its type
        return vid

    def use(self, tid: int) -> dict:
        return self.uses.setdefault(tid, {})

    def is_bitfield(self, owner: int, name: str) -> bool:
        """Whether owner.name (through anonymous members) is a bit-field."""
        path = self.btf.find_member(owner, name) if owner else None
        return bool(path and path[-1].bitfield_size)

    def members_of(self, t: T.Type) -> list:
        b = self.btf
        st = b[t.btf]
        return [m.name for m in st.members if m.name][:12]

    # --- C definitions ------------------------------------------------------------

    def definitions(self, header_types: tuple = ()) -> list:
        """C lines defining every struct/union the script touches, innermost
        first (a member held by value needs its type complete); not those
        the BPF side's arch header defines (pt_regs, and header_types: the
        target's own, arch.py)."""
        b = self.btf
        defined = HEADER_DEFINED | set(header_types)
        done: set = set()
        out: list = []

        def deps(tid: int, tree: dict, acc: list):
            t = b[tid]
            for index, sub in sorted(tree.items()):
                m = t.members[index]
                mt = b[b.strip(m.type)]
                while mt.kind == B.ARRAY:
                    mt = b[b.strip(mt.type)]
                if not m.name and sub is not None:
                    deps(mt.id, sub, acc)
                elif self._inline(mt):
                    deps(mt.id, self.uses[mt.id], acc)
                elif mt.kind in (B.STRUCT, B.UNION) and mt.name:
                    acc.append(mt.id)

        def emit(tid: int):
            if tid in done or b[tid].name in defined:     # a member's type too (perf's regs)
                return
            done.add(tid)
            acc: list = []
            deps(tid, self.uses.get(tid, {}), acc)
            for d in acc:
                emit(d)
            t = b[tid]
            kw = "struct" if t.kind == B.STRUCT else "union"
            out.append(f"{kw} {t.name} {{")
            out.extend(self._members(tid, self.uses.get(tid, {}), 1))
            out.append("} __attribute__((preserve_access_index));")
            out.append("")

        for tid in sorted(self.uses):
            # anonymous ones are defined inside their holder; pt_regs by the
            # BPF side's arch header (the ABI's layout, the kernel's names)
            if b[tid].name and b[tid].name not in defined:
                emit(tid)
        for name, vid in sorted(self.ksyms.items()):
            out.append(f"extern const {self.c_decl(b[vid].type, name)} __ksym;")
        return out

    def _inline(self, t) -> bool:
        """A named member of an anonymous struct/union type whose members the
        script reads (`in6_u` of struct in6_addr): defined in place."""
        return t.kind in (B.STRUCT, B.UNION) and not t.name and t.id in self.uses

    def _members(self, tid: int, tree: dict, depth: int) -> list:
        b = self.btf
        t = b[tid]
        pad = "\t" * depth
        lines = []
        for index, sub in sorted(tree.items()):
            m = t.members[index]
            if not m.name:
                inner = b[b.strip(m.type)]
                kw = "struct" if inner.kind == B.STRUCT else "union"
                lines.append(f"{pad}{kw} {{")
                lines.extend(self._members(inner.id, sub or {}, depth + 1))
                lines.append(f"{pad}}};")
            elif self._inline(b[b.strip(m.type)]):
                inner = b[b.strip(m.type)]
                kw = "struct" if inner.kind == B.STRUCT else "union"
                lines.append(f"{pad}{kw} {{")
                lines.extend(self._members(inner.id, self.uses[inner.id], depth + 1))
                lines.append(f"{pad}}} {m.name};")
            elif m.bitfield_size:
                lines.append(f"{pad}{self.c_decl(m.type, m.name)} : {m.bitfield_size};")
            else:
                lines.append(f"{pad}{self.c_decl(m.type, m.name)};")
        return lines

    def c_decl(self, tid: int, name: str) -> str:
        """A member declaration whose kind CO-RE can match against the
        kernel's: ints by size, pointers as void *, arrays, records by name."""
        b = self.btf
        t = b[b.strip(tid)]
        if t.kind == B.ARRAY:
            return self.c_decl(t.type, f"{name}[{t.nelems}]")
        if t.kind == B.PTR:
            return f"void *{name}"
        if t.kind in (B.ENUM, B.ENUM64) and t.size in (4, 8):
            # An anonymous enum: CO-RE matches it with the kernel's enum of
            # any name (an integer would not match an enum), and names none
            # of its enumerators, which may be the headers' names too.
            self._nenums += 1
            wide = f", plyc_kenum{self._nenums}_w = 0xffffffffffffffffULL" if t.size == 8 else ""
            return f"enum {{ plyc_kenum{self._nenums} = 0{wide} }} {name}"
        if t.kind in (B.INT, B.ENUM, B.ENUM64):
            if t.size in (1, 2, 4, 8):
                return f"__{'s' if t.signed else 'u'}{t.size * 8} {name}"
            return f"__u8 {name}[{t.size}]"
        if t.kind in (B.STRUCT, B.UNION) and t.name:
            return f"{'struct' if t.kind == B.STRUCT else 'union'} {t.name} {name}"
        return f"__u8 {name}[{t.size}]"
