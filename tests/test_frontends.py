"""The front-end registry (plyc/frontends/registry.py): the driver asks it
which front end reads a script, the front end records the tracer's output
style in the IR, front-end options reach only the front ends that declare
them, and a front end added to the registry is used with no driver change
(docs/design.md, "How to add a front end", done once here)."""
import pytest

from plyc import cli, driver, runcache
from plyc.frontends import base, registry
from plyc.frontends import ply as ply_fe
from plyc.frontends.ply.lower import lower as ply_lower

SCRIPT = 'BEGIN { printf("hi\\n"); exit(); }'


def test_the_file_name_or_lang_picks_the_front_end():
    assert driver.front_end("a/tool.bt").name == "bpftrace"
    assert driver.front_end("a/tool.ply").name == "ply"
    assert driver.front_end("<command-line>").name == "ply"          # no suffix: the default
    assert driver.front_end("tool.ply", "bpftrace").name == "bpftrace"
    assert driver.LANGUAGES == ("ply", "bpftrace")
    assert [o.name for o in registry.options()] == ["unsafe", "bpftrace-output"]


def test_the_front_end_records_the_output_style():
    assert driver.lower(SCRIPT, "t.bt", driver.Options(env={})).style == "bpftrace"
    assert driver.lower(SCRIPT, "t.ply", driver.Options(env={})).style == "ply"
    # the same script told to be bpftrace's, whatever its file is called
    assert driver.lower(SCRIPT, "t.ply", driver.Options(env={}, lang="bpftrace")).style == "bpftrace"


def test_the_style_comes_from_the_ir_not_the_file_name():
    """IR a front end made bpftrace's prints as bpftrace, even from a file
    called .ply (the driver used to guess the style from the name)."""
    prog = driver.lower(SCRIPT, "t.bt", driver.Options(env={}))
    loader = driver.compile_ir(prog, SCRIPT, "t.ply", driver.Options(env={}), name="t").generated.loader_c
    assert ".style = PLYC_STYLE_BPFTRACE" in loader
    prog.style = "ply"
    loader = driver.compile_ir(prog, SCRIPT, "t.bt", driver.Options(env={}), name="t").generated.loader_c
    assert ".style = PLYC_STYLE_PLY" in loader


def test_a_front_end_option_reaches_only_its_front_end(capsys):
    unsafe = 'BEGIN { system("true"); exit(); }'
    assert cli.main(["check", "--lang", "bpftrace", "-e", unsafe]) == 1
    assert "system() is an unsafe function" in capsys.readouterr().err
    assert cli.main(["check", "--lang", "bpftrace", "--unsafe", "-e", unsafe]) == 0
    # ply has no --unsafe: refused, not silently ignored
    assert cli.main(["check", "--unsafe", "-e", "BEGIN { exit(); }"]) == 1
    assert capsys.readouterr().err.strip() == \
        "<command-line>: error: --unsafe is an option of bpftrace scripts, not of ply ones"


def test_settings_hold_the_declared_options_only():
    bt = registry.get("t.bt")
    s = driver.settings(bt, driver.Options(env={"A": "1"}, strsize=64, frontend={"unsafe": True}))
    assert s == base.Settings({"A": "1"}, 64, None, "x86_64", {"bpftrace-output": "0.27", "unsafe": True})
    assert driver.settings(registry.get("t.ply"), driver.Options(env={})).options == {}


def test_a_choice_option_takes_its_value_and_defaults_to_its_first(capsys):
    """--bpftrace-output picks whose output a .bt script's tracer prints:
    its style reaches the generated program description; a ply script
    refuses it, argparse a version it does not know."""
    bt = registry.get("t.bt")
    s = driver.settings(bt, driver.Options(env={}, frontend={"bpftrace-output": "0.17"}))
    assert s.options["bpftrace-output"] == "0.17"
    for given, style in ((None, "PLYC_STYLE_BPFTRACE"), ("0.27", "PLYC_STYLE_BPFTRACE"),
                         ("0.17", "PLYC_STYLE_BPFTRACE017")):
        opts = driver.Options(frontend={"bpftrace-output": given})
        loader = driver.compile_source("BEGIN { exit(); }", "t.bt", opts).generated.loader_c
        assert f".style = {style}," in loader or f".style = {style}\n" in loader
    assert cli.main(["check", "--bpftrace-output", "0.17", "-e", "BEGIN { exit(); }"]) == 1
    assert capsys.readouterr().err.strip() == \
        "<command-line>: error: --bpftrace-output is an option of bpftrace scripts, not of ply ones"
    with pytest.raises(SystemExit):
        cli.main(["check", "--lang", "bpftrace", "--bpftrace-output", "0.20", "-e", "BEGIN { exit(); }"])


def test_a_new_front_end_needs_no_driver_change(monkeypatch):
    """A front end of `.toy` files (ply's syntax, bpftrace's output) added to
    the registry: the driver parses, lowers and names tracers through it."""
    seen = []

    def lower(tree, s: base.Settings):
        seen.append(s.options)
        prog = ply_lower(tree, s.env, s.strsize, s.btf, s.target)
        prog.style = "bpftrace"
        return prog

    toy = base.FrontEnd("toy", (".toy",), ply_fe.parse, lower, options=(base.Option("loud", "a toy flag"),))
    monkeypatch.setattr(registry, "FRONTENDS", registry.FRONTENDS + (toy,))
    compiled = driver.compile_source(SCRIPT, "dir/x.toy", driver.Options(env={}, frontend={"loud": True}),
                                     name=driver.tracer_name("dir/x.toy"))
    assert seen == [{"loud": True}]
    assert compiled.resources.name == "x"
    assert ".style = PLYC_STYLE_BPFTRACE" in compiled.generated.loader_c
    assert compiled.program is not None and type(compiled.program).__module__.startswith("plyc.frontends.ply")


def test_the_run_cache_builds_once(tmp_path, monkeypatch):
    monkeypatch.setenv("PLYC_CACHE", str(tmp_path / "cache"))
    built = []

    def build(path):
        built.append(path)
        with open(path, "w") as f:
            f.write("tracer")

    first = runcache.tracer("k1", "t", build)
    again = runcache.tracer("k1", "t", build)
    assert first == again == tmp_path / "cache" / "run" / "k1" / "t"
    assert built == [str(first)]
    runcache.tracer("k2", "t", build)
    assert len(built) == 2


@pytest.mark.parametrize("command", ["build", "run", "check", "emit", "argdist", "doctor", "sysroot"])
def test_each_subcommand_is_its_own_module(command):
    import importlib
    module = importlib.import_module(f"plyc.commands.{command}")
    assert module in cli.COMMANDS
    assert command in cli.parser()._subparsers._group_actions[0].choices
