

def test_a_caller_with_future_flags_is_compiled_as_before(installed):
    """exec() compiles a text with its caller's __future__ flags: a caller
    that has one (annotations) gets exec()'s own compile, not the cache's."""
    caller = compile("def run(text, ns):\n    exec(text, {}, ns)\n", "<caller>", "exec",
                     flags=__import__("__future__").annotations.compiler_flag, dont_inherit=True)
    scope = {"exec": dccache._exec}
    exec(caller, scope)
    ns = {}
    scope["run"]("def f(x: int) -> int:\n    return x\n", ns)
    assert ns["f"].__annotations__ == {"x": "int", "return": "int"}     # as the caller's flags say
    assert "def f(x: int) -> int:\n    return x\n" not in dccache._codes
