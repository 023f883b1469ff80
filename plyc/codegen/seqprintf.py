"""printf() in a pinned iterator (providers/iterators.py): written with
bpf_seq_printf into the text a read of the pin returns, as bpftrace does,
since no tracer is there to print events. The kernel formats it (its
bstr_printf), so only what it formats is taken: integers (%d %i %u %x %X,
each passed as 64 bits, cut to the bits C's length gives it first, as
bpftrace's printf prints them) and strings (%s, the address of the bytes
the program holds), flags and widths as written. What else such a probe
would print was refused when it was lowered (providers/iterators.py's
check_pinned)."""
from __future__ import annotations

from ..ir import nodes as ir
from ..printf import Conv
from .cescape import c_string


def emit(g, s: ir.EmitEvent) -> None:
    ev = s.event
    fmt, values = [], []
    for part in ev.parts:
        if not isinstance(part, Conv):
            fmt.append(part.replace("%", "%%"))
            continue
        arg = s.args[len(values)]
        spec = part.flags + (part.width or "") + (f".{part.prec}" if part.prec is not None else "")
        if part.conv != "s":
            bits = part.bits if part.bits < 64 else 64
            signed = part.conv in "di"
            x = g.scalar(arg)
            if bits < 64:
                x = f"({'__s' if signed else '__u'}{bits})({x})"
            values.append(f"(__u64)({'__s64' if signed else '__u64'})({x})")
            fmt.append(f"%{spec}ll{part.conv}")
        else:
            values.append(f"(__u64)(unsigned long)({g.bytes(arg)})")
            fmt.append(f"%{spec}s")
    seq = "*(struct seq_file **)((void **)ctx)[0]"
    text = "".join(fmt)
    f, a = g.tmp("sfmt"), g.tmp("sargs")
    g.line("{")
    g.line(f"\tstatic const char {f}[] = {c_string(text)};")
    if values:
        g.line(f"\t__u64 {a}[{len(values)}] = {{ {', '.join(values)} }};")
        g.line(f"\tbpf_seq_printf({seq}, {f}, sizeof({f}), {a}, sizeof({a}));")
    else:
        g.line(f"\tbpf_seq_printf({seq}, {f}, sizeof({f}), (void *)0, 0);")
    g.line("}")
