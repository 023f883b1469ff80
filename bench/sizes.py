#!/usr/bin/env python3
"""Where a tracer's bytes go: the link of a plyc build done again with the
linker's map (lld's --print-map: zig's cc, so the musl tracers), each
input section of the file (not .bss) given to the piece whose archive or
object it came from. Merged strings and constants (lld's `<internal>`
sections) name no file: they are shared out in proportion to the string
sections of the objects the link kept, read from those objects.

The musl builds are link-time optimised: the link's input is LLVM bitcode
(zig's musl too) and its code one object (NAME.lto.o), each function and
object in a section of its own name. Those are given to the piece whose
bitcode defines that name (read with zig's clang as LLVM IR; a name none
defines is musl's), and the merged strings shared out by the string
constants of plyc's inputs (musl's own strings, not read, go to them too:
an estimate).

    python3 bench/sizes.py [--target T ...] [SCRIPT]     a table per target

Standard library only; bench/run.py calls pieces() for `make bench`."""
from __future__ import annotations

import argparse
import os
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "syscall-count.ply"

# The pieces, in the order of the table: (name, test on an input file's path).
PIECES = (
    ("libbpf", lambda f: f.endswith("/libbpf.a")),
    ("libelf", lambda f: f.endswith("/libelf.a")),
    ("zlib", lambda f: f.endswith("/libz.a")),
    ("plyc's runtime", lambda f: f.endswith("/libplycrt.a") or f.endswith("/libplyccompat.a")),
    # NAME.obj.c, compiled by the link (by zig into its cache)
    ("BPF object (+ BTF)", lambda f: ".obj." in os.path.basename(f)),
    ("C library (musl, compiler-rt)", lambda f: "/zig/" in f or f.endswith(("/libc.a", "crt1.o", "crti.o", "crtn.o"))),
    ("generated loader", lambda f: f.endswith(".o")),
)
MERGED = "merged strings and constants"
# lld's map: VMA LMA Size Align, then the output section (column 5) or an
# input section (indented further) or a symbol (further still).
LINE = re.compile(r"^\s*([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)\s+(\d+)( +)(\S.*)$")


def piece_of(path: str) -> str:
    for name, test in PIECES:
        if test(path):
            return name
    return "other"


def parse_map(text: str) -> tuple:
    """{output section: size} of the sections in the file, and
    [(input file, archive member or None, section, size)] of their input
    sections."""
    outs, ins, current = {}, [], None
    lines = text.splitlines()
    # the columns: the output section's name starts where "Out" does
    head = next(i for i, l in enumerate(lines) if "VMA" in l and "Out" in l)
    out_col, in_col = lines[head].index("Out"), lines[head].index("In ")
    for line in lines[head + 1:]:
        m = LINE.match(line)
        if not m:
            continue
        col, size, what = m.start(6), int(m.group(3), 16), m.group(6)
        if col == out_col:
            current = what
            outs[current] = size
        elif col == in_col and current:
            fm = re.match(r"^(.*?)(?:\((.*?)\))?:\((.*)\)$", what)
            if fm:
                ins.append((current, fm.group(1), fm.group(2), fm.group(3), size))
    return outs, ins


def merged_globals(text: str) -> dict:
    """{LTO input section of merged globals (LLVM's GlobalMerge, on POWER:
    .L_MergedGlobals.N): [(symbol, bytes)]}: the symbols the map lists in
    it, each to the next one's address (the last to the section's end)."""
    lines = text.splitlines()
    head = next(i for i, l in enumerate(lines) if "VMA" in l and "Out" in l)
    in_col = lines[head].index("In ")
    found, section = {}, None
    for line in lines[head + 1:]:
        m = LINE.match(line)
        if not m:
            continue
        col, vma, size, what = m.start(6), int(m.group(1), 16), int(m.group(3), 16), m.group(6)
        if col == in_col:
            section = None
            if ".lto.o:(" in what and "_MergedGlobals" in what:
                section = what.split(":(", 1)[1][:-1]
                found[section] = (vma, size, [])
        elif col > in_col and section:
            found[section][2].append((vma, what))
    out = {}
    for name, (start, size, syms) in found.items():
        syms.sort()
        ends = [v for v, _ in syms[1:]] + [start + size]
        out[name] = [(sym, end - v) for (v, sym), end in zip(syms, ends)]
        if syms and syms[0][0] > start:
            out[name].append(("", syms[0][0] - start))
    return out


# What the file holds: allocated sections with contents (.bss is not in it).
NOT_IN_FILE = (".bss", ".tbss", ".comment", ".shstrtab", ".symtab", ".strtab")


def string_sections(path: str) -> dict:
    """{archive member or None: bytes of its .rodata.str*/.rodata.cst*
    sections}, before the link merges them (llvm-size reads every target's
    ELF)."""
    text = subprocess.run(["llvm-size", "-A", path], capture_output=True, text=True).stdout
    out, member = {}, None
    for line in text.splitlines():
        head = re.match(r"^(\S+)\s+\(ex .*\):$", line)
        if head:
            member = os.path.basename(head.group(1))
        words = line.split()
        if len(words) == 3 and words[0].startswith((".rodata.str", ".rodata.cst")) and words[1].isdigit():
            out[member] = out.get(member, 0) + int(words[1])
    return out


# An LTO section's name: a kind, maybe LLVM's hint, then the symbol.
LTO_SECTION = re.compile(r"^\.(?:text|rodata|data\.rel\.ro|data|sdata|sbss|bss|tbss|tdata)"
                         r"(?:\.(?:unlikely|hot|startup|exit|split))?\.(.+)$")
# IR: a string constant's bytes.
IR_STRING = re.compile(r'^@\S+ = .*constant \[(\d+) x i8\] c"', re.M)


def bitcode_names(cc: list, inputs: list) -> tuple:
    """({symbol: piece}, {piece: bytes of string constants}) of the
    link's bitcode inputs (archives and objects): each member dumped as
    LLVM IR by the link's compiler (cc: zig, "cc", -target T)."""
    names, strings = {}, {}
    with tempfile.TemporaryDirectory(prefix="plyc-sizes-ir-") as tmp:
        for n, path in enumerate(inputs):
            piece = piece_of(path)
            d = Path(tmp) / str(n)
            d.mkdir()
            if path.endswith(".a"):
                subprocess.run([cc[0], "ar", "x", os.path.abspath(path)], cwd=d, check=True)
                members = sorted(d.iterdir())
            else:
                members = [Path(path)]
            for m in members:
                if m.read_bytes()[:4] != b"BC\xc0\xde":
                    continue
                bc = d / (m.name + ".bc")
                bc.write_bytes(m.read_bytes())
                ll = bc.with_suffix(".ll")
                subprocess.run([*cc, "-S", "-emit-llvm", str(bc), "-o", str(ll)], capture_output=True, check=True)
                ir = ll.read_text()
                for line in ir.splitlines():
                    if line.startswith("define ") or (line.startswith("@") and " external " not in line):
                        m2 = re.search(r'@("[^"]+"|[\w.$]+)', line)
                        if m2:
                            names.setdefault(m2.group(1).strip('"'), piece)
                strings[piece] = strings.get(piece, 0) + sum(int(k) for k in IR_STRING.findall(ir))
    return names, strings


LIBC = "C library (musl, compiler-rt)"


def lto_piece(names: dict, symbol: str) -> str:
    """The piece of an LTO section's symbol; LTO renames a static that
    another module's shares (NAME.1, NAME.llvm.123, NAME.constprop.0).
    zig links its musl as bitcode too: what no plyc input defines is its."""
    while symbol not in names and "." in symbol:
        symbol = symbol.rsplit(".", 1)[0]
    return names.get(symbol, LIBC)


def pieces(map_text: str, lto: tuple = ({}, {})) -> dict:
    """{piece: bytes in the file}, with "sections" {output section: bytes};
    lto: bitcode_names() of the link's inputs, if it was optimised."""
    outs, ins = parse_map(map_text)
    names, lto_strings = lto
    merged_syms = merged_globals(map_text) if names else {}
    got = {name: 0 for name, _ in PIECES}
    got["other"] = 0
    merged = 0
    files = set()
    for sect, path, member, insect, size in ins:
        if sect.startswith(NOT_IN_FILE):
            continue
        if path == "<internal>":
            if sect.startswith(".rodata"):
                merged += size
            else:
                got["other"] += size     # .eh_frame_hdr, .got ...: the link's own
            continue
        if path.endswith(".lto.o"):
            m = LTO_SECTION.match(insect)
            if insect.startswith(".rodata.str") or insect.startswith(".rodata.cst"):
                merged += size
            elif merged_syms.get(insect):
                for sym, n in merged_syms[insect]:
                    got[lto_piece(names, sym) if sym else "other"] += n
            else:
                got[lto_piece(names, m.group(1)) if m else "other"] += size
            continue
        got[piece_of(path)] += size
        files.add((path, member))
    # the merged strings, shared out by each kept object's string sections
    share, read = dict(lto_strings), {}
    for path, member in files:
        if path not in read:
            try:
                read[path] = string_sections(path)
            except OSError:
                read[path] = {}
        n = read[path].get(member and os.path.basename(member), 0)
        if n:
            p = piece_of(path)
            share[p] = share.get(p, 0) + n
    total = sum(share.values())
    if total:
        for p, n in share.items():
            got[p] += merged * n // total
        got["other"] += merged - sum(merged * n // total for n in share.values())
    else:
        got["other"] += merged
    got = {k: v for k, v in got.items() if v or k != "other"}
    got["sections"] = {k: v for k, v in outs.items() if not k.startswith(NOT_IN_FILE)}
    return got


def link_map(script: Path, target: str, libc: str = "musl", env=None) -> tuple:
    """Build script's tracer for target and link it again with the map:
    (the tracer's size in bytes, the map's text, bitcode_names() of the
    link's inputs)."""
    with tempfile.TemporaryDirectory(prefix="plyc-sizes-") as tmp:
        keep, out = Path(tmp) / "keep", Path(tmp) / "tracer"
        proc = subprocess.run([sys.executable, "-m", "plyc", "build", "-q", "-v", "--keep", str(keep),
                               "--target", target, "--libc", libc, str(script), "-o", str(out)],
                              capture_output=True, text=True, cwd=ROOT, env=env)
        if proc.returncode != 0:
            raise RuntimeError((proc.stderr or proc.stdout).strip()[-2000:])
        link = [l[2:] for l in proc.stdout.splitlines() if l.startswith("+ ") and " -static " in l][-1]
        argv = shlex.split(link)
        workdir = os.path.dirname(argv[argv.index("-o") + 1])
        argv = [a.replace(workdir, str(keep)) for a in argv]
        argv[argv.index("-o") + 1] = str(Path(tmp) / "relinked")
        m = subprocess.run([*argv, "-Wl,--print-map"], capture_output=True, text=True, cwd=keep)
        if m.returncode != 0:
            raise RuntimeError(m.stderr.strip()[-2000:])
        size = out.stat().st_size
        if (Path(tmp) / "relinked").stat().st_size != size:
            raise RuntimeError("the link done again is not the tracer plyc wrote")
        lto = ({}, {})
        if "-flto" in argv:
            # the inputs: objects, archives, and -L/-l's archives; NAME.obj.c
            # is compiled by the link itself (its only symbols: plyc_bpf_*)
            dirs = [a[2:] for a in argv if a.startswith("-L")]
            inputs = [os.path.join(keep, a) if not os.path.isabs(a) else a for a in argv[1:]
                      if a.endswith((".a", ".o")) and not a.startswith("-")]
            inputs += [os.path.join(d, f"lib{a[2:]}.a") for a in argv if a.startswith("-l")
                       for d in dirs if os.path.exists(os.path.join(d, f"lib{a[2:]}.a"))]
            lto = bitcode_names(argv[:argv.index("-target") + 2], [i for i in inputs if os.path.exists(i)])
            for sym in ("plyc_bpf_object", "plyc_bpf_object_size", "plyc_embedded_btf", "plyc_embedded_btf_size"):
                lto[0][sym] = "BPF object (+ BTF)"
        return size, m.stdout, lto


def table(results: dict) -> str:
    """A markdown table: a row per piece, a column per target."""
    targets = list(results)
    names = [n for n, _ in PIECES] + ["other"]
    rows = ["| piece | " + " | ".join(targets) + " |", "|---|" + "---:|" * len(targets)]
    for n in names + ["total"]:
        cells = []
        for t in targets:
            r = results[t]
            v = r.get("size") if n == "total" else r["pieces"].get(n)
            cells.append(f"{v:,}" if isinstance(v, int) else "")
        rows.append(f"| {n} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def measure(script: Path, target: str, libc: str = "musl") -> dict:
    """{"size": the tracer's bytes, "pieces": {piece: bytes}, "sections":
    {output section: bytes}} of script's tracer for target."""
    size, text, lto = link_map(script, target, libc)
    p = pieces(text, lto)
    sections = p.pop("sections")
    return {"size": size, "pieces": p, "sections": sections}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--target", action="append", help="a target (again for more; default x86_64)")
    ap.add_argument("script", nargs="?", default=str(EXAMPLE))
    args = ap.parse_args(argv)
    results = {}
    for t in args.target or ["x86_64"]:
        try:
            results[t] = measure(Path(args.script).resolve(), t)
        except (RuntimeError, OSError) as err:
            print(f"{t}: {err}", file=sys.stderr)
    if results:
        print(table(results))
    return 0 if results else 1


if __name__ == "__main__":
    sys.exit(main())
