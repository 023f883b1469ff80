"""The `config = { name = value; ... }` block of current bpftrace (its
docs/language.md, "Config Variables"): the variables that change what plyc
builds are honoured, the others refused by name. A name is written as
bpftrace accepts it: `max_strlen`, `MAX_STRLEN` or `BPFTRACE_MAX_STRLEN`;
bpftrace 0.17's environment names (`BPFTRACE_STRLEN`,
`BPFTRACE_MAP_KEYS_MAX`) are taken too.

Honoured, into Config's fields (the lowering and plyc/driver.py read them):
  max_strlen       bytes of a string (str(), comm-sized values stay theirs);
                   under 1024, one byte more and the trailer (lower.py's PAD_BELOW)
  str_trunc_trailer  what follows a string cut at max_strlen (0.27's "..")
  max_map_keys     entries of every map (`plyc build --map-entries`)
  perf_rb_pages    the output ring buffer, in 4 KiB pages (`--buffer-size`)
  on_stack_limit   the largest temporary kept on the BPF stack (ir/opt/temps.py)
  print_maps_on_exit  false: no map dump at exit
  cpp_demangle     false: user symbols' C++ names as the symbol table has them
A build option given on plyc's command line (other than its default) wins
over the block, as bpftrace's environment variables win over it.
missing_probes  error, warn or ignore: a probe whose target the device lacks
                 stops the tracer, or is left out (runtime-c/probes/attach.c)
license          the BPF object's license, one of bpftrace's GPL-compatible ones
stack_mode       bpftrace, perf or raw: the mode of a kstack/ustack that names none
                 (build_id refused: plyc's stack maps keep addresses)
Accepted at the one behaviour plyc has:
unstable_macro=enable or warn (macros are always expanded), unstable_tseries=enable
or warn (tseries() is always lowered), unstable_addr, unstable_import and
unstable_map_decl at any value (0.27: "deprecated and has no effect": '&',
imports and map declarations are always on)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ... import bounds
from ...diag import Collector
from . import ast as A

ALIASES = {"strlen": "max_strlen", "map_keys_max": "max_map_keys"}
# The same ranges as plyc's command line (plyc/bounds.py, docs/safety.md):
# `--strsize`, `--map-entries`, `--buffer-size` in 4 KiB pages.
NUMBERS = {"max_strlen": bounds.STRSIZE, "max_map_keys": bounds.MAP_ENTRIES,
           "perf_rb_pages": (1, bounds.BUFFER_SIZE[1] // 4096), "on_stack_limit": (0, 256)}
BOOLS = ("print_maps_on_exit", "cpp_demangle")
# Variables plyc has one behaviour of: its values are accepted, others refused
# (macros are always on: bpftrace's unstable_macro=warn only adds a warning;
# 0.27 ignores unstable_addr, unstable_import and unstable_map_decl).
ANY = ("enable", "warn", "error")
FIXED = {"missing_probes": ("error", "warn", "ignore"),
         "unstable_macro": ("enable", "warn"), "unstable_tseries": ("enable", "warn"),
         "unstable_addr": ANY, "unstable_import": ANY, "unstable_map_decl": ANY}
# Variables of a value of their own kind (evaluate reads each).
OTHERS = ("license", "stack_mode", "str_trunc_trailer")
# Every variable a build takes.
ACCEPTED = (*NUMBERS, *BOOLS, *FIXED, *OTHERS)
# The rest of bpftrace's variables: refused by name, with why.
REFUSED = {
    "cache_user_symbols": "plyc's tracers always keep a file's symbols, once per file (device and inode)",
    "lazy_symbolication": "plyc's tracers always name user addresses when they print them",
    "show_debug_info": "plyc's user stacks name symbols only (no DWARF line information)",
    "log_size": "plyc's tracers size the verifier's log themselves",
    "max_bpf_progs": "plyc generates one BPF program per probe",
    "max_probes": "plyc's tracers attach every probe they name",
    "max_cat_bytes": "the tracer reads BPFTRACE_MAX_CAT_BYTES (or 0.17's BPFTRACE_CAT_BYTES_MAX) from its "
                     "environment where it runs",
    "max_type_res_iterations": "plyc resolves types through BTF",
}
PAGE = 4096
# str_trunc_trailer's default, 0.27's
TRAILER = ".."
# the longest trailer (codegen/printers.py's TRAILER_ROOM, its NUL aside)
TRAILER_MAX = 63
# 0.27's stack modes, in the order its error lists them; build_id's stack
# map holds (build id, offset) pairs, which plyc's tracers do not print.
STACK_MODES = ("bpftrace", "raw", "perf")


# The GPL-compatible licenses bpftrace 0.27 takes (its `license`): the
# kernel gives GPL-only helpers (bpf_probe_read_*, ...) only to these.
LICENSES = ("Dual MIT/GPL", "Dual BSD/GPL", "Dual MPL/GPL", "GPL and additional rights", "GPL v2", "GPL")


@dataclass
class Config:
    strsize: Optional[int] = None
    missing_probes: str = "error"       # error | warn | ignore (plyc/ir Program.missing_probes)
    license: str = "GPL"                # one of LICENSES (plyc/ir Program.license)
    stack_mode: str = "bpftrace"        # one of STACK_MODES (stacks.py)
    limits: dict = field(default_factory=dict)   # driver options: map_entries, buffer_size, ...


# bpftrace's environment variables (0.27's man page, "Environment Variables",
# and each config variable as BPFTRACE_NAME; 0.17's names too) as a build
# reads them: the config variables above go into the build, over the
# script's config block as bpftrace's environment wins over it; these are
# read elsewhere (headers.py: where the kernel's headers are; the tracer,
# where it runs: cat()'s limit); the rest are said not to apply, once a
# build (docs/bpftrace.md, "Environment variables").
ENV_ELSEWHERE = ("kernel_source", "kernel_build", "max_cat_bytes", "cat_bytes_max")
ENV_NOT_USED = {
    **REFUSED,
    "btf": "plyc build --btf FILE gives the target kernel's BTF, the tracer's own --btf FILE the running kernel's",
    "vmlinux": "plyc's tracers resolve kernel symbols through /proc/kallsyms",
    "color": "plyc's tracers print no colours",
    "no_cpp_demangle": "bpftrace 0.27 names it BPFTRACE_CPP_DEMANGLE (=false: no demangling)",
    "no_user_symbols": "plyc's tracers always name user addresses",
    "use_blazesym": REFUSED["show_debug_info"],
    "unstable_dw_ustack": "plyc's user stacks follow frame pointers (no DWARF unwinding)",
    "unstable_typeinfo": "plyc has no typeinfo()",
    "debug_output": "plyc emit shows each stage of the compiler",
}
del ENV_NOT_USED["max_cat_bytes"]


def from_environment(env: dict) -> tuple:
    """(config items from bpftrace's environment variables in env, after
    the script's own: evaluate takes them last; warnings, one line each,
    for the variables a build does not use)."""
    items, warnings = [], []
    for key in sorted(k for k in env if k.upper() == k and k.startswith("BPFTRACE_")):
        name, value = canonical(key), env[key]
        if name in ACCEPTED:
            if value.isdigit():
                v = A.Int(int(value), value)
            elif name in ("license", "str_trunc_trailer") or name in NUMBERS:
                v = A.Str(value.encode("utf-8", "replace"))
            else:
                v = A.Ident(value)
            items.append(A.ConfigItem(key, v))
        elif name in ENV_ELSEWHERE:
            continue
        elif name in ENV_NOT_USED:
            warnings.append(f"{key} is not used by plyc: {ENV_NOT_USED[name]}")
        else:
            warnings.append(f"{key} is no variable of bpftrace's that plyc knows: not used")
    return items, warnings


def canonical(name: str) -> str:
    n = name.lower()
    if n.startswith("bpftrace_"):
        n = n[len("bpftrace_"):]
    return ALIASES.get(n, n)


def evaluate(block: Optional[A.Config], diag: Collector, env_items: tuple = ()) -> Config:
    """The script's config block, then env_items (from_environment's: they
    win, as bpftrace's environment does)."""
    out = Config()
    items = list(block.items) if block is not None else []
    seen: dict = {}
    for item in items + list(env_items):
        name, v = canonical(item.name), item.value
        if name in seen and item not in env_items:
            diag.error(f"config variable {name} is set twice", item.span)
            continue
        seen[name] = item
        if name in NUMBERS:
            lo, hi = NUMBERS[name]
            if not isinstance(v, A.Int):
                diag.error(f"{item.name} takes a number from {lo} to {hi}", v.span)
                continue
            problem = bounds.check(item.name, v.value, (lo, hi))
            if problem:
                diag.error(problem, v.span)
                continue
            if name == "max_strlen":
                out.strsize = v.value
            elif name == "max_map_keys":
                out.limits["map_entries"] = v.value
            elif name == "on_stack_limit":
                out.limits["stack_temp_max"] = v.value
            else:
                pages = v.value
                if pages & (pages - 1):
                    diag.error(f"{item.name} must be a power of two (the ring buffer's size)", v.span)
                    continue
                out.limits["buffer_size"] = pages * PAGE
        elif name in BOOLS:
            word = v.name if isinstance(v, A.Ident) else v.value if isinstance(v, A.Int) else None
            if word not in ("true", "false", 0, 1):
                diag.error(f"{item.name} takes true or false", v.span)
                continue
            out.limits[name] = word in ("true", 1)
        elif name in FIXED:
            got = v.name if isinstance(v, A.Ident) else v.value.decode("utf-8", "replace") \
                if isinstance(v, A.Str) else str(v.value)
            if got.lower() not in FIXED[name]:
                want = " or ".join(f"{name}={w or chr(34) * 2}" for w in FIXED[name])
                diag.error(f"{item.name}={got or chr(34) * 2} is not supported by plyc yet", v.span,
                           f"plyc's tracers have {want} only")
            elif name == "missing_probes":
                out.missing_probes = got.lower()
        elif name == "stack_mode":
            got = v.name if isinstance(v, A.Ident) else v.value.decode("utf-8", "replace") \
                if isinstance(v, A.Str) else str(v.value)
            if got == "build_id":
                diag.error("stack_mode=build_id is not supported by plyc yet", v.span,
                           "plyc's stack maps keep addresses, printed as symbols: bpftrace, raw or perf")
            elif got not in STACK_MODES:
                diag.error(f"invalid value for stack_mode: valid values are {', '.join(STACK_MODES)} "
                           "and build_id", v.span)
            else:
                out.stack_mode = got
        elif name == "str_trunc_trailer":
            # any text, as 0.27 takes it (a number as its digits)
            got = v.value.decode("utf-8", "replace") if isinstance(v, A.Str) else \
                str(v.value) if isinstance(v, A.Int) else v.name
            if len(got.encode()) > TRAILER_MAX:
                diag.error(f"str_trunc_trailer is longer than the {TRAILER_MAX} bytes plyc's tracers keep for it",
                           v.span)
                continue
            out.limits["str_trailer"] = got
        elif name == "license":
            got = v.value.decode("utf-8", "replace") if isinstance(v, A.Str) else getattr(v, "name", None)
            if got not in LICENSES:
                diag.error(f"license={got or chr(34) * 2} is not a license the kernel lets the BPF helpers "
                           "plyc calls run under", v.span, "bpftrace's (GPL-compatible) licenses: " + ", ".join(LICENSES))
                continue
            out.license = got
        elif name in REFUSED:
            diag.error(f"config variable {item.name} is not supported by plyc yet", item.span, REFUSED[name])
        else:
            diag.error(f"unknown config variable '{item.name}'", item.span,
                       "bpftrace's: " + ", ".join(sorted({*ACCEPTED, *REFUSED})))
    return out


# `config.NAME` in a probe (0.27's config record): the value plyc builds
# with, a constant. Those plyc's command line may change behind the block
# (--map-entries, --buffer-size) are not known to the front end.
COMMAND_LINE = {"max_map_keys": "--map-entries", "perf_rb_pages": "--buffer-size",
                "on_stack_limit": "the build's stack options"}


def is_record(e) -> bool:
    """`config`, `config()` or `__builtin_config` (what 0.27's stdlib macro
    config() expands to), the record config.NAME reads."""
    return (isinstance(e, A.Ident) and e.name in ("config", "__builtin_config")) or \
        (isinstance(e, A.Call) and e.name == "config" and not e.args)


def read(st, name: str, span, diag_err):
    """config.NAME as a literal of the script's tree (plyc's value; a bool
    as Python's, which the script's tree has no literal of), or an
    error (diag_err(message, span, note) raises)."""
    key = canonical(name)
    cfg = st.config
    values = {
        "max_strlen": lambda: A.Int(st.max_strlen, str(st.max_strlen), span=span),
        "stack_mode": lambda: A.Str(cfg.stack_mode.encode(), span=span),
        "license": lambda: A.Str(cfg.license.encode(), span=span),
        "missing_probes": lambda: A.Str(cfg.missing_probes.encode(), span=span),
        # the trailer a cut string is printed with (0.17 prints none)
        "str_trunc_trailer": lambda: A.Str(b"" if st.version == "0.17" else
                                           cfg.limits.get("str_trailer", TRAILER).encode(), span=span),
        "print_maps_on_exit": lambda: bool(cfg.limits.get("print_maps_on_exit", True)),
        "cpp_demangle": lambda: bool(cfg.limits.get("cpp_demangle", True)),
    }
    if key in values:
        return values[key]()
    if key in COMMAND_LINE:
        diag_err(f"config.{name} is not supported by plyc yet", span,
                 f"plyc's command line ({COMMAND_LINE[key]}) may set it after the script is read")
    if key in REFUSED:
        diag_err(f"config.{name} is not supported by plyc yet", span, REFUSED[key])
    if key in FIXED:
        diag_err(f"config.{name} is not supported by plyc yet", span, "plyc has one behaviour of it (docs/bpftrace.md)")
    diag_err(f"unknown config variable '{name}'", span,
             "plyc reads: " + ", ".join(sorted(values)))
