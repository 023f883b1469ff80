"""BEGIN and END: run once, before the probes attach and after they detach.
Both are raw_tp programs the tracer runs itself with BPF_PROG_TEST_RUN, or
before 5.10 as uprobe programs on an instruction of its own
(runtime-c/load/once.c): their bodies must not read the context."""
from __future__ import annotations

from .base import Provider, Target, spec_error


def _parse(name):
    def parse(spec) -> Target:
        if spec.arg:
            raise spec_error(spec, f"{spec.provider} takes no argument")
        return Target(BEGIN if name == "BEGIN" else END, spec)
    return parse


BEGIN = Provider(name="BEGIN", aliases=(), parse=_parse("BEGIN"), section=lambda t: "raw_tp",
                 ctx_decl="void *ctx", c_provider="plyc_provider_begin", runs_once=True, has_stack=False,
                 doc="once, before the probes start")
END = Provider(name="END", aliases=(), parse=_parse("END"), section=lambda t: "raw_tp",
               ctx_decl="void *ctx", c_provider="plyc_provider_end", runs_once=True, has_stack=False,
               doc="once, after the probes stop")
