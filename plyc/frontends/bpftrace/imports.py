"""Current bpftrace's `import "lib.bt";`, `import "lib.bpf.c";` and
`import "dir";`: other .bt files, beside the importing one, whose
definitions, macros, map declarations and probes join the script's, and
C files compiled with the program (cimports.py: their functions are
called from the script).

An imported file's spans say which file they are in (Span.origin), so its
errors print its name and lines. Its probes come before the importer's (as
bpftrace 0.27 runs them); a file imported twice, or back, counts once; a
folder's .bt files are taken in name order (bpftrace takes the folder's
order, which the file system decides)."""
from __future__ import annotations

import os

from ...diag import error
from ...span import SourceFile, script_line
from . import ast as A

# As read_script: a file larger than a script can be is not one.
FILE_MAX = 16 << 20
# How many files a script may import, all its imports' imports counted.
MAX_FILES = 256


def resolve(program: A.Program, filename: str, parse_file) -> A.Program:
    """The script with its imports' parts joined in; parse_file(text,
    origin) parses one imported file."""
    if not program.imports:
        return program
    seen = {_key(filename)} if os.path.isfile(filename) else set()
    parts = _Parts()
    _take(program, _folder(filename), (filename, os.path.basename(filename)), parse_file, seen, parts)
    return A.Program(parts.preamble, program.config, parts.macros, parts.probes, parts.decls,
                     imported=parts.files, c_files=parts.c_files, span=program.span)


class _Parts:
    def __init__(self):
        self.preamble, self.macros, self.probes, self.decls = [], [], [], []
        self.files = []      # SourceFile of each file imported, in order
        self.c_files = []    # SourceFile of each C file imported, in order

    def add(self, program: A.Program):
        self.preamble += program.preamble
        self.macros += program.macros
        self.probes += program.probes
        self.decls += program.decls


def _take(program: A.Program, folder: str, shown: tuple, parse_file, seen: set, parts: _Parts):
    """The program's imports (depth first, each once), then its own parts.
    shown: the importing file's names, as messages and as the tracer print it."""
    for imp in program.imports:
        for path, name, tracer_name in _files(imp, folder, shown):
            key = _key(path)
            if key in seen:
                continue
            seen.add(key)
            if len(seen) > MAX_FILES:
                raise error(f"more than {MAX_FILES} files imported", imp.span)
            text = _read(path, imp)
            if is_c(path):
                parts.c_files.append(SourceFile(name, text, script_line(imp.span), tracer_name))
                continue
            parts.files.append(SourceFile(name, text, script_line(imp.span), tracer_name))
            sub = parse_file(text, parts.files[-1])
            if sub.config is not None:
                raise error("a config block in an imported file: the script's own config block sets the run",
                            sub.config.span)
            _take(sub, os.path.dirname(path), (name, tracer_name), parse_file, seen, parts)
    parts.add(program)


def _files(imp: A.Import, folder: str, shown: tuple) -> list:
    """The (path, name as messages print it, name as the tracer prints it)
    of each file an import names."""
    written = imp.path.decode("utf-8", "replace")
    if not written or "\0" in written:
        raise error("an import names no file", imp.span)
    path = os.path.join(folder, written)
    name, tracer_name = (os.path.join(os.path.dirname(n), written) for n in shown)
    if os.path.isdir(path):
        try:
            entries = sorted(e for e in os.listdir(path) if e.endswith(".bt") or is_c(e))
        except OSError as err:
            raise error(f"cannot read the folder {name}: {err.strerror}", imp.span)
        return [(os.path.join(path, e), os.path.join(name, e), os.path.join(tracer_name, e)) for e in entries
                if os.path.isfile(os.path.join(path, e))]
    if not os.path.exists(path):
        raise error(f"cannot find the imported file {name}", imp.span, f"looked for {path}")
    if not os.path.isfile(path):     # a FIFO or a device would hang or never end
        raise error(f"cannot import {name}: not a regular file", imp.span)
    if not written.endswith(".bt") and not is_c(written):
        raise error(f"cannot import {name}: an import names a .bt file, a .bpf.c file or a folder of them",
                    imp.span)
    return [(path, name, tracer_name)]


def is_c(path: str) -> bool:
    """A C file compiled into the program: `.bpf.c`, as 0.27 names them
    (a plain `.c` is no import of 0.27's either)."""
    return path.endswith(".bpf.c")


def _read(path: str, imp: A.Import) -> str:
    try:
        with open(path, "rb") as f:
            data = f.read(FILE_MAX + 1)
    except OSError as err:
        raise error(f"cannot read the imported file: {err.strerror}", imp.span)
    if len(data) > FILE_MAX:
        raise error(f"the imported file is larger than {FILE_MAX >> 20} MiB: not a script", imp.span)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise error("the imported file is not UTF-8 text", imp.span) from None


def _folder(filename: str) -> str:
    """Where the script's imports are looked for: beside it (-e: here)."""
    return os.path.dirname(filename) if filename not in ("<command-line>", "<stdin>", "<script>", "-") else "."


def _key(path: str) -> tuple:
    st = os.stat(path)
    return (st.st_dev, st.st_ino)
