"""plyc/layout.py, C's struct layout engine, against the target compilers:
for every target, records generated from a seed (bit-fields named, unnamed
and `:0`, packed and aligned records and members, unions, arrays, nested and
anonymous members, every C scalar type) and a set of hand-picked tricky
ones are laid out by the engine and by the compiler, which must agree on
every member's offset (bit-fields: to the bit), every size and alignment.

clang (`-target`, every target) prints its record layouts
(-fdump-record-layouts: offsets and bit ranges); the target's gcc (the cross
compilers scripts/setup.sh installs) checks sizeof, _Alignof and offsetof
in _Static_asserts. One compile of each per target."""
import random
import re
import shutil
import subprocess
from dataclasses import dataclass, field

import pytest

from plyc import arch as ARCH
from plyc import layout as L

SEED = 33
COUNT = 160

# Hand-picked: where the targets' ABIs differ (ARM's unnamed bit-fields,
# long double), and the bit-field and packing rules' corners.
TRICKY = r"""
struct t_zero { char a; int :0; char b; };
struct t_anon { char a; int :4; };
struct t_llbits { char a; long long b:3; };
struct t_straddle { char a; int b:31; int c:2; };
struct t_ldouble { char a; long double d; };
struct t_llong { char a; long long b; };
struct t_double { char a; double b; };
struct t_shortbits { short a:9; char c; };
struct t_charzero { char a; char :0; char b; };
struct t_llzero { char a; long long :0; char b; };
union t_ubits { char a; int b:3; };
union t_uanon { char a; int :3; };
struct __attribute__((packed)) t_packedbits { char a; int b:31; int c:2; char d; };
struct t_memberpacked { char a; int b:4; int c:30 __attribute__((packed)); };
struct t_memberaligned { char a; int b __attribute__((aligned(16))); };
struct t_aligned { char a; } __attribute__((aligned(8)));
struct t_mixed { int a:3; long long b:40; int c:10; };
struct t_bool { char a; _Bool b:1; };
struct t_packedzero { char a; int :0; char b; } __attribute__((packed));
struct t_nested { char a; struct t_straddle s; union { short x; char y[3]; }; struct { char p; long q; }; };
struct t_array { char a; struct t_llong arr[2]; short s[3]; };
struct t_packedaligned { char a; int b; } __attribute__((packed, aligned(4)));
struct t_packedmemberaligned { char a; int b __attribute__((aligned(8))); } __attribute__((packed));
"""

# A bare `aligned` (__BIGGEST_ALIGNMENT__): gcc's test writes it so, clang's
# as the number gcc takes, since clang 14 takes 16 on MIPS, where gcc (the
# system compiler, whose __BIGGEST_ALIGNMENT__ clang defines too) takes 8.
BARE_ALIGNED = "plyc_bare_aligned"

SCALARS = [["char"], ["signed", "char"], ["unsigned", "char"], ["short"], ["unsigned", "short"], ["int"],
           ["unsigned", "int"], ["long"], ["unsigned", "long"], ["long", "long"], ["unsigned", "long", "long"],
           ["_Bool"], ["float"], ["double"], ["long", "double"]]
TYPE_WORDS = {"char", "short", "int", "long", "signed", "unsigned", "_Bool", "float", "double"}
BITFIELD_TYPES = [t for t in SCALARS if t[-1] not in ("float", "double")]


@dataclass
class Member:
    c: str                      # the declaration, as C
    field: L.Field
    name: str = ""              # "" for an unnamed bit-field or an anonymous member
    record: "Record" = None     # an anonymous record member's own


@dataclass
class Record:
    tag: str                    # "struct x", or the anonymous one's C body
    union: bool
    members: list = field(default_factory=list)
    packed: bool = False
    aligned: int = 0            # 0: none; -1: bare `aligned`
    layout: L.Layout = None
    definition: str = ""        # a named one's C definition


class Generator:
    def __init__(self, seed: int, abi: L.ABI, aligned_bitfields: bool):
        self.rng, self.abi = random.Random(seed), abi
        self.aligned_bitfields = aligned_bitfields
        self.records: list = []     # named records defined so far
        self.names = 0              # members are m1, m2, ... (anonymous members' too: one scope)

    def scalar(self):
        words = self.rng.choice(SCALARS + [["pointer"]])
        if words == ["pointer"]:
            return "void *", L.pointer(self.abi)
        return " ".join(words), L.scalar(self.abi, words)

    def member(self, depth: int) -> Member:
        self.names += 1
        r, name = self.rng.random(), f"m{self.names}"
        if r < 0.3:
            words = self.rng.choice(BITFIELD_TYPES)
            s = L.scalar(self.abi, words)
            top = 1 if words == ["_Bool"] else s.size * 8
            width = min(top, self.rng.choice([0, 1, 1, 2, 3, 5, 7, top // 2 + 1, top - 1, top]))
            named = width > 0 and self.rng.random() < 0.7
            packed = named and self.rng.random() < 0.1
            aligned = self.rng.choice([0] * 12 + [1, 2, 4, 8]) if named and self.aligned_bitfields else 0
            attr = (" __attribute__((packed))" if packed else "") + \
                (f" __attribute__((aligned({aligned})))" if aligned else "")
            return Member(f"{' '.join(words)} {name if named else ''}:{width}{attr};",
                          L.Field(s.size, s.align, bits=width, named=named, packed=packed, aligned=aligned),
                          name if named else "")
        if r < 0.4 and depth < 2:
            rec = self.record("", depth + 1)
            return Member(f"{rec.tag};", L.Field(rec.layout.size, rec.layout.align), "", rec)
        if r < 0.55 and self.records:
            rec = self.rng.choice(self.records)
            ctype, size, align = rec.tag, rec.layout.size, rec.layout.align
        else:
            ctype, s = self.scalar()
            size, align = s.size, s.align
        count = self.rng.choice([0, 0, 0, 1, 2, 3])
        aligned = self.rng.choice([0] * 12 + [1, 2, 4, 8, 16])
        packed = self.rng.random() < 0.08
        attr = (f" __attribute__((aligned({aligned})))" if aligned else "") + \
            (" __attribute__((packed))" if packed else "")
        decl = f"{ctype} {name}" + (f"[{count}]" if count else "") + attr + ";"
        return Member(decl, L.Field(size * (count or 1), align, packed=packed, aligned=aligned), name)

    def record(self, name: str, depth: int = 0) -> Record:
        union = self.rng.random() < 0.2
        kw = "union" if union else "struct"
        rec = Record("", union, packed=self.rng.random() < 0.15,
                     aligned=self.rng.choice([0] * 10 + [2, 4, 8, 16, 32, -1]))
        rec.members = [self.member(depth) for _ in range(self.rng.randint(1, 7))]
        if not any(m.name or m.record for m in rec.members):
            rec.members.append(Member("char last;", L.Field(1, 1), "last"))
        attrs = (["packed"] if rec.packed else []) + \
            ([BARE_ALIGNED] if rec.aligned == -1 else [f"aligned({rec.aligned})"] if rec.aligned else [])
        attr = f" __attribute__(({', '.join(attrs)}))" if attrs else ""
        body = " ".join(m.c for m in rec.members)
        rec.layout = L.place([m.field for m in rec.members], self.abi, union, rec.packed,
                             self.abi.biggest_align if rec.aligned == -1 else rec.aligned)
        rec.tag = f"{kw} {name}".strip() if name else f"{kw} {{ {body} }}{attr}"
        rec.definition = f"{kw} {name} {{ {body} }}{attr};" if name else ""
        return rec


def tricky(abi: L.ABI) -> list:
    """TRICKY's records, read with a small parser of their own simple C."""
    out, known = [], {}
    for line in TRICKY.strip().splitlines():
        m = re.match(r"(struct|union) (__attribute__\(\(packed\)\) )?(\w+) \{ (.*) \}(.*);$", line)
        kw, pre, name, body, post = m.groups()
        rec = Record(f"{kw} {name}", kw == "union", packed=bool(pre) or "packed" in post)
        al = re.search(r"aligned\((\d+)\)", post)
        rec.aligned = int(al.group(1)) if al else 0
        for decl in _split(body):
            rec.members.append(_tricky_member(decl, abi, known))
        rec.layout = L.place([x.field for x in rec.members], abi, rec.union, rec.packed, rec.aligned)
        rec.definition = line
        known[rec.tag] = rec
        out.append(rec)
    return out


def _split(body: str) -> list:
    out, depth, cur = [], 0, ""
    for ch in body:
        cur += ch
        depth += (ch == "{") - (ch == "}")
        if ch == ";" and depth == 0:
            out.append(cur.strip())
            cur = ""
    return out


def _tricky_member(decl: str, abi, known) -> Member:
    inner = re.match(r"(struct|union) \{ (.*) \};$", decl)
    if inner:
        rec = Record(decl[:-1], inner.group(1) == "union")
        rec.members = [_tricky_member(d, abi, known) for d in _split(inner.group(2))]
        rec.layout = L.place([x.field for x in rec.members], abi, rec.union)
        return Member(decl, L.Field(rec.layout.size, rec.layout.align), "", rec)
    packed = "__attribute__((packed))" in decl
    al = re.search(r"aligned\((\d+)\)", decl)
    text = re.sub(r"__attribute__\(\([^)]*\)?\)\)", "", decl).rstrip(" ;")
    m = re.match(r"(.*?)\s*(?::(\d+)|\[(\d+)\])?$", text)
    words, width, count = m.group(1).split(), m.group(2), m.group(3)
    named = words[-1] not in TYPE_WORDS and words[-2:-1] not in (["struct"], ["union"])
    ctype, name = (" ".join(words[:-1]), words[-1]) if named else (" ".join(words), "")
    if ctype.startswith(("struct", "union")):
        lay = known[ctype].layout
        size, align = lay.size, lay.align
    else:
        s = L.scalar(abi, ctype.split())
        size, align = s.size, s.align
    return Member(decl, L.Field(size * int(count or 1), align, bits=None if width is None else int(width),
                                named=bool(name), packed=packed, aligned=int(al.group(1)) if al else 0), name)


def records(target: str, aligned_bitfields: bool = False) -> list:
    """The tricky records and COUNT generated ones; with aligned_bitfields,
    some bit-fields `aligned(N)` too, for gcc only: clang 14 lets such a
    bit-field span more units of its type than the type does, where gcc
    (the target's system compiler, whose layout plyc follows) moves it on."""
    abi = L.abi(target)
    gen = Generator(SEED, abi, aligned_bitfields)
    out = tricky(abi)
    for i in range(COUNT):
        rec = gen.record(f"g{i}")
        gen.records.append(rec)
        out.append(rec)
    return out


def source(recs: list, asserts: bool = False) -> str:
    lines = ["#include <stddef.h>"]
    for i, rec in enumerate(recs):
        lines.append(rec.definition)
        lines.append(f"{rec.tag} v{i};")
        if asserts:
            lines.append(f"_Static_assert(sizeof({rec.tag}) == {rec.layout.size}, \"{rec.tag} size\");")
            lines.append(f"_Static_assert(_Alignof({rec.tag}) == {rec.layout.align}, \"{rec.tag} align\");")
            for m, off in zip(rec.members, rec.layout.offsets):
                if m.name and m.field.bits is None:
                    lines.append(f"_Static_assert(offsetof({rec.tag}, {m.name}) == {off}, "
                                 f"\"{rec.tag} {m.name}\");")
    return "\n".join(lines) + "\n"


def expected(rec: Record, base: int = 0) -> list:
    """(bit offset, size, align) lines as clang's dump gives them: each
    member, and an anonymous record's members after it."""
    out = []
    for m, bit in zip(rec.members, rec.layout.bits):
        out.append(base + bit)
        if m.record is not None:
            out += expected(m.record, base + bit)
    return out


DUMP_FIELD = re.compile(r"^\s*(\d+)(?::(\d+|-)(?:-\d+)?)? \|(\s+)\S")
DUMP_SIZE = re.compile(r"\[sizeof=(\d+), (?:dsize=\d+, )?align=(\d+)")


def clang_layouts(target: str, text: str, tmp_path) -> dict:
    """Record name -> ([bit offset of each member, an anonymous member's
    own members' after it], size, align), as clang lays them out."""
    src = tmp_path / f"{target}.c"
    src.write_text(text.replace(BARE_ALIGNED, f"aligned({L.abi(target).biggest_align})"))
    proc = subprocess.run(["clang", "-target", ARCH.get(target).triplet, "-c", "-emit-llvm", "-o", "/dev/null",
                           "-w", "-Xclang", "-fdump-record-layouts", str(src)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    out, name = {}, None
    for line in proc.stdout.splitlines():
        if line.startswith("*** Dumping"):
            name = None
            continue
        m = re.match(r"^\s*0 \| ((?:struct|union) \w+)$", line)
        if m and name is None:
            name, fields, counted = m.group(1), [], {0: True}
            continue
        if name is None:
            continue
        size = DUMP_SIZE.search(line)
        if size:
            out[name] = (fields, int(size.group(1)), int(size.group(2)))
            name = None
            continue
        f = DUMP_FIELD.match(line)
        if f:
            # members of the record and of its anonymous members (clang
            # writes `(anonymous at ...)`), not of its named members
            depth = (len(f.group(3)) - 1) // 2
            ok = counted.get(depth - 1, False)
            if ok:
                bit = f.group(2)
                fields.append(int(f.group(1)) * 8 + (int(bit) if bit not in (None, "-") else 0))
            counted = {d: v for d, v in counted.items() if d < depth}
            counted[depth] = ok and "(anonymous" in line
    return out


@pytest.mark.parametrize("target", ARCH.TARGETS)
def test_layouts_are_clangs(target, tmp_path):
    recs = records(target)
    got = clang_layouts(target, source(recs), tmp_path)
    assert len(got) == len(recs)
    bad = []
    for rec in recs:
        want = (expected(rec), rec.layout.size, rec.layout.align)
        if got[rec.tag] != want:
            bad.append(f"{rec.definition}\n  clang: {got[rec.tag]}\n  plyc:  {want}")
    assert bad == [], f"{len(bad)} of {len(recs)} differ:\n" + "\n".join(bad[:5])


@pytest.mark.parametrize("target", ARCH.TARGETS)
def test_layouts_are_gccs(target, tmp_path):
    cc = "gcc" if ARCH.is_native(target) else f"{ARCH.get(target).triplet}-gcc"
    if shutil.which(cc) is None:
        pytest.skip(f"no {cc} (scripts/setup.sh installs {ARCH.get(target).cc_package})")
    recs = records(target, aligned_bitfields=True)
    src = tmp_path / f"{target}.c"
    src.write_text(source(recs, asserts=True).replace(BARE_ALIGNED, "aligned"))
    proc = subprocess.run([cc, "-fsyntax-only", "-w", "-fmax-errors=0", str(src)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, "\n".join(ln for ln in proc.stderr.splitlines() if "error" in ln)[:3000]
    assert proc.stderr == ""


def test_the_checks_see_a_difference(tmp_path):
    """A layout one byte off is caught (the comparison reads real numbers)."""
    rec = tricky(L.abi("x86_64"))[0]
    got = clang_layouts("x86_64", source([rec]), tmp_path)
    assert got["struct t_zero"] == ([0, 32, 32], 5, 1) == (expected(rec), rec.layout.size, rec.layout.align)
    assert got["struct t_zero"] != (expected(rec)[:-1] + [40], rec.layout.size, rec.layout.align)


def test_arm_aligns_to_unnamed_bit_fields():
    """The one rule where the targets differ (AAPCS): `int :0` aligns the
    struct on ARM, not on x86_64."""
    fields = [L.Field(1, 1), L.Field(4, 4, bits=0, named=False), L.Field(1, 1)]
    assert L.place(fields, L.abi("armhf")).size == 8
    assert L.place(fields, L.abi("aarch64")).size == 8
    assert L.place(fields, L.abi("x86_64")).size == 5
    assert L.place(fields, L.abi("x86_64")).offsets == (0, 4, 4)


def test_long_double_per_target():
    ld = {t: (s.size, s.align) for t in ARCH.TARGETS for s in [L.scalar(L.abi(t), ["long", "double"])]}
    assert ld["x86_64"] == (16, 16) and ld["s390x"] == (16, 8) and ld["armhf"] == (8, 8)


@pytest.mark.parametrize("target", ARCH.TARGETS)
def test_abi_columns_are_the_compilers(target):
    """arch.py's C ABI columns, as the target's clang predefines them."""
    proc = subprocess.run(["clang", "-target", ARCH.get(target).triplet, "-dM", "-E", "-x", "c", "/dev/null"],
                          capture_output=True, text=True, check=True)
    macros = dict(re.findall(r"#define (\w+) (.*)", proc.stdout))
    a = L.abi(target)
    assert int(macros["__SIZEOF_POINTER__"]) == int(macros["__SIZEOF_LONG__"]) == a.ptr
    assert int(macros["__SIZEOF_LONG_DOUBLE__"]) == a.ldouble
    assert int(macros["__BIGGEST_ALIGNMENT__"]) == a.biggest_align
    assert ("__CHAR_UNSIGNED__" not in macros) == a.char_signed
