"""`args.name` and `retval` of the probes whose arguments are typed from
a BTF prototype: kfunc/kretfunc (the function's) and rawtracepoint (the
tracepoint's). The providers find each argument's word and type
(plyc/providers/kfunc.py, rawtracepoint.py); here they become IR."""
from __future__ import annotations

from ... import types as T
from ...diag import PlycError
from ...ir import nodes as ir
from ...ir import variables as V
from ...providers import Var


def _var(chk, find, span) -> ir.Variable:
    try:
        var = find()
    except PlycError as err:
        d = err.diags[0]
        chk.err(d.message, d.span, d.note)
    return ir.Variable(var, type=var.type, span=span)


def field(chk, name: str, span) -> ir.Variable:
    """args.name / args->name."""
    probe = chk.probe
    return _var(chk, lambda: probe.provider.arg(probe.target, name, chk.st.ktypes, span), span)


def retval(chk, span) -> ir.Variable:
    """retval of a kretfunc, typed from the function's prototype."""
    probe = chk.probe
    return _var(chk, lambda: probe.provider.retval(probe.target, chk.st.ktypes, span), span)


def owns(probe, name: str) -> bool:
    """Whether this module types `name` in this probe."""
    return name == "retval" and probe.provider.retval is not None


# `func` in a kretprobe, kfunc or kretfunc wildcard: the address of the
# function that fired, from the kernel (bpf_get_func_ip, Linux 5.15; the
# tracer names the release where an older verifier refuses it), printed
# as its symbol. A kretprobe has no registers of the entry to read it from.
FUNC_IP = Var("func", T.SYM, V.FUNC_IP, doc="the traced function's address, as a symbol")


def func_ip(span) -> ir.Variable:
    return ir.Variable(FUNC_IP, type=FUNC_IP.type, span=span)
