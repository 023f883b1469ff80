"""The pipeline, one call per stage:

    front end (parse, passes -> IR) -> resources -> render -> toolchain

The stages' modules are imported where they are first used: the command
line imports this module to state its options, and a cached `plyc run`
uses none of them (docs/performance.md).
"""
from __future__ import annotations

import os
import re
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Optional

from . import bounds
from .diag import PlycError, Diagnostic
from .frontends import registry
from .frontends.base import FrontEnd, Settings
from .output import LINKED, check_target, install, keep, keep_dir, work_folder
from .cachedir import ToolchainError
from .toolchain import Toolchain, at_once, embed_object, loader_prelude, quick_embed, translate_c_error

if TYPE_CHECKING:
    from .codegen import render, resources
    from .ir import nodes as ir


@dataclass
class Options:
    env: Optional[dict] = None
    strsize: int = 128
    map_entries: int = bounds.DEFAULT_MAP_ENTRIES
    hist_entries: int = bounds.DEFAULT_HIST_ENTRIES
    buffer_size: int = bounds.DEFAULT_BUFFER
    stack_entries: int = bounds.DEFAULT_STACK_ENTRIES
    target: str = "x86_64"
    verbose: bool = False
    keep_dir: Optional[str] = None
    strip: bool = True
    btf: Optional[str] = None        # kernel BTF for typing kernel types (default: this machine's)
    sysroot: Optional[str] = None     # the target's libraries (cross builds)
    libc: Optional[str] = None        # glibc or musl (default: toolchain.default_libc())
    lang: Optional[str] = None        # a front end's name (default: from the file name, language())
    # Front-end options given (name -> True): each front end gets those it
    # declares (FrontEnd.options); one given to a front end that lacks it is an error.
    frontend: dict = field(default_factory=dict)
    # bpftrace's -I DIR and --include FILE: where its #include lines are
    # searched, and headers included before the script's own
    include_dirs: tuple = ()
    include_files: tuple = ()
    # For front ends whose probes are not script lines: (a probe's span line,
    # spec) -> (where, text) it came from, for the tracer's messages about it.
    origin: Optional[Callable[[int, str], Optional[tuple]]] = None
    # plyc run's: the tracer runs on this machine and is never shipped, so
    # its link may take the quicker ways (Toolchain.quick)
    quick: bool = False


@dataclass
class Compiled:
    program: Optional[object]          # the script's AST (None for IR a front end built itself)
    ir: ir.Program
    resources: resources.Resources
    generated: render.Generated
    source: str = ""                   # the script's text and file name, for located errors
    filename: str = ""


def tracer_name(path: str) -> str:
    base = os.path.basename(path)
    for suffix in registry.suffixes():
        if base.endswith(suffix):
            base = base[:-len(suffix)]
            break
    return re.sub(r"[^A-Za-z0-9_]", "_", base) or "tracer"


LANGUAGES = registry.names()


def front_end(filename: str, lang: Optional[str] = None) -> FrontEnd:
    return registry.get(filename, lang)


def language(filename: str, lang: Optional[str] = None) -> str:
    """The script's language: as told, else the one its file name's suffix
    says (bpftrace for a .bt file), else ply."""
    return front_end(filename, lang).name


def parse(source: str, filename: str, lang: Optional[str] = None):
    """The script's tree in its language's AST."""
    return front_end(filename, lang).parse(source, filename)


def lower(source: str, filename: str, opts: Options) -> ir.Program:
    """Any language's script, parsed and lowered into the IR."""
    return analyze(parse(source, filename, opts.lang), source, filename, opts)


def settings(fe: FrontEnd, opts: Options) -> Settings:
    """The front end's settings from the build's options; a front-end option
    given that this front end does not take is refused."""
    accepted = {o.name for o in fe.options}
    for name, on in sorted(opts.frontend.items()):
        if on and name not in accepted:
            takers = [f.name for f in registry.FRONTENDS if any(o.name == name for o in f.options)]
            raise PlycError(Diagnostic(f"--{name} is an option of {' and '.join(takers) or 'no'} scripts, "
                                       f"not of {fe.name} ones", None))
    if (opts.include_dirs or opts.include_files) and not fe.c_headers:
        raise PlycError(Diagnostic(f"-I and --include are options of scripts that #include C headers "
                                   f"(bpftrace's), not of {fe.name} ones", None))
    env = dict(os.environ) if opts.env is None else opts.env
    return Settings(env, opts.strsize, opts.btf, opts.target,
                    {o.name: (opts.frontend.get(o.name) or o.choices[0] if o.choices else bool(opts.frontend.get(o.name)))
                     for o in sorted(fe.options, key=lambda o: o.name)},
                    tuple(opts.include_dirs), tuple(opts.include_files))


def analyze(program, source: str, filename: str, opts: Options) -> ir.Program:
    """A script's tree (parse's) typed into IR by its language's front end."""
    fe = front_end(filename, opts.lang)
    try:
        prog = fe.lower(program, settings(fe, opts))
    except PlycError as err:
        raise PlycError(err.diags, filename, source) from None
    for warning in prog.warnings:    # one line each, located
        print(warning.render_lines(filename, []), file=sys.stderr)
    return prog


def compile_source(source: str, filename: str, opts: Options, name: Optional[str] = None) -> Compiled:
    program = parse(source, filename, opts.lang)
    compiled = compile_ir(analyze(program, source, filename, opts), source, filename, opts, name)
    compiled.program = program
    return compiled


def build_limits(prog: ir.Program, opts: Options) -> dict:
    """The build options, where the script's own (prog.limits) replace the
    defaults: an option given other than its default wins, as bpftrace's
    environment variables win over its config block."""
    out = dict(map_entries=opts.map_entries, hist_entries=opts.hist_entries, buffer_size=opts.buffer_size,
               stack_entries=opts.stack_entries)
    defaults = dict(map_entries=bounds.DEFAULT_MAP_ENTRIES, buffer_size=bounds.DEFAULT_BUFFER)
    for name, value in prog.limits.items():
        if name not in out or out[name] == defaults.get(name):
            out[name] = value
    return out


def plan(prog: ir.Program, source: str, filename: str, opts: Options,
         name: Optional[str] = None) -> resources.Resources:
    """The optimising passes (plyc/ir/opt/) and the Resources, held to the
    kernel's fixed limits (codegen/limits.py): what `plyc check` checks too."""
    from .codegen import limits, resources
    from .ir.opt import optimize
    optimize(prog)
    res = resources.build(prog, name or tracer_name(filename), os.path.basename(filename), build_limits(prog, opts))
    limits.check(res, filename, source)
    return res


def compile_ir(prog: ir.Program, source: str, filename: str, opts: Options,
               name: Optional[str] = None) -> Compiled:
    """From the IR on: the optimising passes (plyc/ir/opt/), resources and
    the generated C (source: for messages)."""
    from .codegen import render
    res = plan(prog, source, filename, opts, name)
    # the tracer prints what the front end's language's tool prints (runtime-c/output/bpftrace.c)
    generated = render.render(prog, res, opts.origin, prog.style, source)
    return Compiled(None, prog, res, generated, source, filename)


def build(source: str, filename: str, out: str, opts: Options) -> Compiled:
    """A script, in any front end's language, into the tracer `out`."""
    early = start_early(out, opts, source)
    try:
        return link(compile_source(source, filename, opts, tracer_name(out)), out, opts, early)
    finally:
        if early is not None:
            early.close()


@dataclass
class Early:
    """A quick build's toolchain and work folder, made before the front end
    runs, and clang started in it on the BPF C to come (early.py)."""
    tc: Toolchain
    workdir: Path
    name: str
    bpf: object

    def close(self):
        self.bpf.stop()
        shutil.rmtree(self.workdir, ignore_errors=True)


def start_early(out: str, opts: Options, source: str) -> Optional[Early]:
    """For a quick build (plyc run's, for this machine: Toolchain.quick),
    clang started before the front end runs; None for any other build,
    with --keep (its folder is copied, a FIFO in it too), for a script
    that may import C files (the word `import`: its BPF C is compiled to
    bitcode, linked with theirs), or when the toolchain has a problem
    (link() reports it, after the script's own)."""
    if not opts.quick or opts.keep_dir or "import" in source:
        return None
    try:
        tc = Toolchain.detect(opts.target, opts.verbose, opts.sysroot, opts.libc)
    except ToolchainError:
        return None
    if not tc.quick():
        return None
    from .early import EarlyBPF
    name, workdir = tracer_name(out), work_folder()
    try:
        return Early(tc, workdir, name, EarlyBPF(tc, workdir / f"{name}.bpf.c", workdir / f"{name}.bpf.o", workdir))
    except BaseException:
        shutil.rmtree(workdir, ignore_errors=True)
        raise


def build_ir(prog: ir.Program, source: str, filename: str, out: str, opts: Options) -> Compiled:
    """A front end's IR into the tracer `out` (source, filename: for messages)."""
    return link(compile_ir(prog, source, filename, opts, tracer_name(out)), out, opts)


def link(compiled: Compiled, out: str, opts: Options, early: Optional[Early] = None) -> Compiled:
    """The generated files compiled and linked into the tracer `out`; on
    any failure or signal, nothing is left behind but what --keep asks for.
    early: start_early's, whose clang is given the BPF C (the caller closes it)."""
    from .codegen import limits, render
    name = compiled.resources.name
    if early is not None and (early.name != name or compiled.ir.c_files):
        # another name, or C files the script imports (clang's object is
        # then LLVM bitcode linked with theirs): not what clang was started on
        early.close()
        early = None
    check_target(out)
    if opts.keep_dir:
        keep_dir(opts.keep_dir)
    tc = early.tc if early else Toolchain.detect(opts.target, opts.verbose, opts.sysroot, opts.libc)
    gen = compiled.generated
    # Everything is made in a private folder of plyc's own (mkdtemp: 0700,
    # below a temporary folder no one else can change): the compilers and
    # the linker write paths there that no one can swap. Only copies,
    # written by descriptor, leave it (output.install, output.keep).
    workdir, kept = early.workdir if early else work_folder(), False
    try:
        if not early:
            (workdir / f"{name}.bpf.c").write_text(gen.bpf_c)
        (workdir / f"{name}.h").write_text(gen.header)
        (workdir / f"{name}.c").write_text(gen.loader_c)

        def bpf():
            try:
                user_c = compiled.ir.c_files
                if user_c:
                    from . import usercode
                    if usercode.wants_vmlinux(user_c):
                        usercode.vmlinux_header(opts.btf, workdir)
                if early:
                    early.bpf.feed(gen.bpf_c)       # the header it includes is written
                else:
                    tc.compile_bpf(workdir / f"{name}.bpf.c", workdir / f"{name}.bpf.o", workdir, user_c=user_c)
            except ToolchainError as err:
                stack = limits.stack_error(str(err), gen.bpf_c, compiled.resources)
                if stack:
                    raise PlycError(stack, compiled.filename, compiled.source) from None
                located = translate_c_error(str(err), f"{name}.bpf.c",
                                            render.linemap(gen.bpf_c, compiled.resources.script),
                                            compiled.resources.script)
                raise ToolchainError((located + "\n" if located else "") + str(err)) from None

        quick = opts.quick and tc.quick()
        # a quick build's loader: its fixed includes precompiled, once
        prelude = loader_prelude(gen.loader_c, name) if quick else None
        # clang's BPF object and the C compiler's loader object at once (the
        # loader does not include the BPF object: obj.c, compiled at the link)
        at_once(bpf, lambda: tc.compile_loader(workdir / f"{name}.c", workdir / f"{name}.o", workdir, prelude))
        btf = b""
        if opts.btf:
            # For devices whose kernel has no BTF: the part of the target
            # kernel's BTF this program needs goes into the tracer.
            from .btf import BTFError, raw_btf
            from .toolchain import min_core_btf
            try:
                (workdir / "kernel.btf").write_bytes(raw_btf(opts.btf, str(workdir), label=f"--btf {opts.btf}"))
            except BTFError as err:
                raise ToolchainError(str(err)) from None
            btf = min_core_btf(tc, workdir / "kernel.btf", workdir / f"{name}.bpf.o", workdir / "min.btf")
        linked = workdir / LINKED
        if quick:
            quick_embed(workdir / f"{name}.bpf.o", workdir / f"{name}.obj.s", workdir / "min.btf" if btf else None)
            tc.link_loader(workdir / f"{name}.o", workdir / f"{name}.obj.s", linked, workdir, opts.strip,
                           tc.quick_link(), static=False)
        else:
            embed_object((workdir / f"{name}.bpf.o").read_bytes(), workdir / f"{name}.obj.c", btf)
            tc.link_loader(workdir / f"{name}.o", workdir / f"{name}.obj.c", linked, workdir, opts.strip)
        if opts.keep_dir:
            kept = True
            keep(opts.keep_dir, workdir, skip=(LINKED,))
        # the run cache's tracer (quick): a crash that loses its name costs a
        # rebuild, not worth a sync of the folder on the way to the probes
        install(linked, out, durable_name=not opts.quick)
    except Exception:
        if opts.keep_dir and not kept:
            # what was made so far, to look into the failure (not after a signal)
            try:
                keep(opts.keep_dir, workdir, skip=(LINKED,))
            except ToolchainError:
                pass
        raise
    finally:
        if not early:
            shutil.rmtree(workdir, ignore_errors=True)      # early's, by its caller
    return compiled
