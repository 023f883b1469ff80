"""BEGIN and END: run once, before the probes attach and after they detach;
self (bpftrace's `self:signal:SIGUSR1`): each time the tracer receives the
signal. All are raw_tp programs the tracer runs itself with
BPF_PROG_TEST_RUN, or before 5.10 as uprobe programs on an instruction of
its own (runtime-c/load/once.c): their bodies must not read the context."""
from __future__ import annotations

from .base import Fields, Provider, Target, spec_error


def fields(spec) -> Fields:
    return Fields(extra=spec.arg)


def _make(name):
    def make(spec, f: Fields) -> Target:
        if f.extra:
            raise spec_error(spec, f"{spec.provider} takes no argument")
        return Target(BEGIN if name == "BEGIN" else END, spec)
    return make


BEGIN = Provider(name="BEGIN", aliases=(), fields=fields, make=_make("BEGIN"), spell=lambda f: "", section=lambda t: "raw_tp",
                 ctx_decl="void *ctx", c_provider="plyc_provider_begin", task_context=lambda t: True, runs_once=True, has_stack=False, prog_name="begin",
                 doc="once, before the probes start")
def self_fields(spec) -> Fields:
    group, _, function = spec.arg.partition(":")
    return Fields(group=group, function=function)


# bpftrace 0.27 has one event of its own process: SIGUSR1 received.
SIGNALS = ("SIGUSR1",)


def _make_self(spec, f: Fields) -> Target:
    if f.group != "signal" or f.function not in SIGNALS:
        raise spec_error(spec, f"a self probe is self:signal:{'|'.join(SIGNALS)}",
                         "the tracer's own events: the signal it receives (bpftrace 0.27 has these)")
    return Target(SELF, spec, target=f.function)


SELF = Provider(name="self", aliases=(), fields=self_fields, make=_make_self,
                spell=lambda f: f"{f.group}:{f.function}", section=lambda t: "raw_tp",
                ctx_decl="void *ctx", c_provider="plyc_provider_self_usr1", task_context=lambda t: True, runs_once=True, has_stack=False,
                prog_name="self_signal_usr1", example="signal:SIGUSR1",
                doc="each time the tracer receives SIGUSR1")
END = Provider(name="END", aliases=(), fields=fields, make=_make("END"), spell=lambda f: "", section=lambda t: "raw_tp",
               ctx_decl="void *ctx", c_provider="plyc_provider_end", task_context=lambda t: True, runs_once=True, has_stack=False, prog_name="end",
               doc="once, after the probes stop")
