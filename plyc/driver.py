"""The pipeline, one call per stage:

    front end (parse, passes -> IR) -> resources -> render -> toolchain
"""
from __future__ import annotations

import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

from .codegen import render, resources
from .diag import PlycError, Diagnostic
from .frontends import bpftrace, ply
from .frontends.ply import ast
from .ir import nodes as ir
from .output import check_target, discard, finish, keep_dir, temporary
from .toolchain import Toolchain, ToolchainError, embed_object, translate_c_error


@dataclass
class Options:
    env: Optional[dict] = None
    strsize: int = 128
    map_entries: int = resources.DEFAULT_MAP_ENTRIES
    hist_entries: int = resources.DEFAULT_HIST_ENTRIES
    buffer_size: int = resources.DEFAULT_BUFFER
    stack_entries: int = resources.DEFAULT_STACK_ENTRIES
    target: str = "x86_64"
    verbose: bool = False
    keep_dir: Optional[str] = None
    strip: bool = True
    btf: Optional[str] = None        # kernel BTF for typing kernel types (default: this machine's)
    sysroot: Optional[str] = None     # the target's libraries (cross builds)
    libc: Optional[str] = None        # glibc or musl (default: toolchain.default_libc())
    lang: Optional[str] = None        # ply or bpftrace (default: from the file name, language())
    unsafe: bool = False              # bpftrace's unsafe functions allowed (system, signal, override)
    # For front ends whose probes are not script lines: (a probe's span line,
    # spec) -> (where, text) it came from, for the tracer's messages about it.
    origin: Optional[Callable[[int, str], Optional[tuple]]] = None


@dataclass
class Compiled:
    program: Optional[ast.Program]     # the ply AST (None for a front end that makes IR itself)
    ir: ir.Program
    resources: resources.Resources
    generated: render.Generated


def tracer_name(path: str) -> str:
    base = os.path.basename(path)
    base = re.sub(r"\.(ply|bt)$", "", base)
    return re.sub(r"[^A-Za-z0-9_]", "_", base) or "tracer"


LANGUAGES = ("ply", "bpftrace")


def language(filename: str, lang: Optional[str] = None) -> str:
    """The script's language: as told, else bpftrace for a .bt file, else ply."""
    if lang:
        return lang
    return "bpftrace" if filename.endswith(".bt") else "ply"


def parse(source: str, filename: str, lang: Optional[str] = None):
    """The script's tree in its language's AST."""
    if language(filename, lang) == "bpftrace":
        return bpftrace.parse(source, filename)
    return ply.parse(source, filename)


def lower(source: str, filename: str, opts: Options) -> ir.Program:
    """Any language's script, parsed and lowered into the IR."""
    program = parse(source, filename, opts.lang)
    if language(filename, opts.lang) == "ply":
        return analyze(program, source, filename, opts)
    try:
        return bpftrace.lower(program, opts.btf, opts.target,
                              build_env=dict(os.environ) if opts.env is None else opts.env,
                              unsafe=opts.unsafe)
    except PlycError as err:
        raise PlycError(err.diags, filename, source) from None


def analyze(program: ast.Program, source: str, filename: str, opts: Options) -> ir.Program:
    """The ply front end's passes: its AST typed into IR."""
    env = dict(os.environ) if opts.env is None else opts.env
    try:
        return ply.lower(program, env, opts.strsize, opts.btf, opts.target)
    except PlycError as err:
        raise PlycError(err.diags, filename, source) from None


def compile_source(source: str, filename: str, opts: Options, name: Optional[str] = None) -> Compiled:
    if language(filename, opts.lang) != "ply":
        return compile_ir(lower(source, filename, opts), source, filename, opts, name)
    program = parse(source, filename, opts.lang)
    prog = analyze(program, source, filename, opts)
    compiled = compile_ir(prog, source, filename, opts, name)
    compiled.program = program
    return compiled


def build_limits(prog: ir.Program, opts: Options) -> dict:
    """The build options, where the script's own (prog.limits) replace the
    defaults: an option given other than its default wins, as bpftrace's
    environment variables win over its config block."""
    out = dict(map_entries=opts.map_entries, hist_entries=opts.hist_entries, buffer_size=opts.buffer_size,
               stack_entries=opts.stack_entries)
    defaults = dict(map_entries=resources.DEFAULT_MAP_ENTRIES, buffer_size=resources.DEFAULT_BUFFER)
    for name, value in prog.limits.items():
        if name not in out or out[name] == defaults.get(name):
            out[name] = value
    return out


def compile_ir(prog: ir.Program, source: str, filename: str, opts: Options,
               name: Optional[str] = None) -> Compiled:
    """From the IR on: resources and the generated C (source: for messages)."""
    script = os.path.basename(filename)
    res = resources.build(prog, name or tracer_name(filename), script, build_limits(prog, opts))
    not_here = [p for p in prog.probes if not p.provider.runnable_here]
    if not_here:
        p = not_here[0]
        raise PlycError(Diagnostic(f"{p.provider.name} probes are not supported by this version of plyc yet "
                                   "(they parse and type-check; code generation is still to come)",
                                   p.spec.span), filename, source)
    # the tracer prints what the script's language's tool prints (runtime-c/btoutput.c)
    style = "bpftrace" if language(filename, opts.lang) == "bpftrace" else "ply"
    generated = render.render(prog, res, opts.origin, style, source)
    return Compiled(None, prog, res, generated)


def build(source: str, filename: str, out: str, opts: Options) -> Compiled:
    """A script, in any front end's language, into the tracer `out`."""
    return link(compile_source(source, filename, opts, tracer_name(out)), out, opts)


def build_ir(prog: ir.Program, source: str, filename: str, out: str, opts: Options) -> Compiled:
    """A front end's IR into the tracer `out` (source, filename: for messages)."""
    return link(compile_ir(prog, source, filename, opts, tracer_name(out)), out, opts)


def link(compiled: Compiled, out: str, opts: Options) -> Compiled:
    """The generated files compiled and linked into the tracer `out`; on
    any failure or signal, nothing is left behind but what --keep asks for."""
    name = compiled.resources.name
    check_target(out)
    tc = Toolchain.detect(opts.target, opts.verbose, opts.sysroot, opts.libc)
    workdir, tmp_out = None, None
    gen = compiled.generated
    try:
        workdir = keep_dir(opts.keep_dir) if opts.keep_dir else Path(tempfile.mkdtemp(prefix="plyc-"))
        (workdir / f"{name}.bpf.c").write_text(gen.bpf_c)
        (workdir / f"{name}.h").write_text(gen.header)
        (workdir / f"{name}.c").write_text(gen.loader_c)
        try:
            tc.compile_bpf(workdir / f"{name}.bpf.c", workdir / f"{name}.bpf.o", workdir)
        except ToolchainError as err:
            located = translate_c_error(str(err), f"{name}.bpf.c",
                                        render.linemap(gen.bpf_c, compiled.resources.script),
                                        compiled.resources.script)
            raise ToolchainError((located + "\n" if located else "") + str(err)) from None
        btf = b""
        if opts.btf:
            # For devices whose kernel has no BTF: the part of the target
            # kernel's BTF this program needs goes into the tracer.
            from .btf import BTFError, raw_btf
            from .toolchain import min_core_btf
            try:
                (workdir / "kernel.btf").write_bytes(raw_btf(opts.btf, str(workdir)))
            except BTFError as err:
                raise ToolchainError(str(err)) from None
            btf = min_core_btf(tc, workdir / "kernel.btf", workdir / f"{name}.bpf.o", workdir / "min.btf")
        embed_object((workdir / f"{name}.bpf.o").read_bytes(), workdir / f"{name}.obj.c", btf)
        tmp_out = temporary(out)
        tc.link_loader(workdir / f"{name}.c", workdir / f"{name}.obj.c", tmp_out, workdir, opts.strip)
        finish(tmp_out, out)
        tmp_out = None
    finally:
        discard(tmp_out)
        if workdir is not None and not opts.keep_dir:
            shutil.rmtree(workdir, ignore_errors=True)
    return compiled
