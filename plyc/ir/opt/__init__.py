"""Optimising passes over a checked ir.Program, each its own module, run in
order by the driver after the core's checks and before resources and code
generation; the code generator prints what they leave. Each rewrites the
program in place, and running them twice changes nothing more."""
from __future__ import annotations

from .. import nodes as ir
from . import constfold, early_return, hoist_keys, lookups, temps

# In order: folding first (keys and conditions compare as constants), the
# early return before the lookups, so that a predicate's lookup serves the
# whole body that follows it; keys once the lookups are known; the
# temporaries' places last, once every key and value is where it stays.
PASSES = (constfold.run, early_return.run, lookups.run, hoist_keys.run, temps.run)


def optimize(program: ir.Program) -> ir.Program:
    for fn in PASSES:
        fn(program)
    return program
