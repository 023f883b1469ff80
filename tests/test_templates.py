"""The C templates rendered without jinja2's import (plyc/codegen/templates.py,
jinjart.py: docs/performance.md, "At the desk"): jinja2 compiles them once
into the cache and jinjart runs the compiled code. The output must be
jinja2's own, byte for byte; what jinjart does not run goes to jinja2."""
import glob
import os
import subprocess
import sys
from pathlib import Path

import jinja2
import pytest

from plyc import driver
from plyc.codegen import jinjart, templates
from plyc.codegen.cescape import c_string

ROOT = Path(__file__).resolve().parent.parent
NAMES = ("prog.bpf.c.j2", "shared.h.j2", "loader.c.j2")


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("PLYC_CACHE", str(tmp_path / "cache"))
    templates._renderer.cache_clear()
    templates.jinja_env.cache_clear()
    yield tmp_path / "cache"
    templates._renderer.cache_clear()
    templates.jinja_env.cache_clear()


def compiled(text: str) -> str:
    return templates.jinja_env().compile(text, "t", "t", raw=True)


def fast_render(text: str, **variables) -> str:
    return jinjart.renderer(jinjart.executable(compiled(text), "t"), templates.finalize)(variables)


def jinja_render(text: str, **variables) -> str:
    return templates.jinja_env().from_string(text).render(**variables)


def test_plycs_templates_all_run_on_jinjart(cache):
    for name in NAMES:
        assert templates._renderer(name) is not None, name
    # compiled once into the cache, each a file only we can write
    files = sorted(p.name for p in (cache / "templates").glob("*.code"))
    assert [f.split("-")[0] for f in files] == sorted(NAMES)
    for f in (cache / "templates").glob("*.code"):
        assert f.stat().st_mode & 0o022 == 0


SCRIPTS = (sorted(glob.glob(str(ROOT / "examples" / "*.ply"))) + sorted(glob.glob(str(ROOT / "bench" / "workloads" / "*")))
           + sorted(glob.glob("/usr/sbin/*.bt"))[:12])


def test_every_script_renders_as_jinja2_renders_it(cache, monkeypatch):
    """Each template render of many scripts, on jinjart and on jinja2: the
    same text."""
    calls = []
    real = templates.render

    def both(template, /, **variables):
        fast = templates._renderer(template)(variables)
        assert fast == templates.jinja_env().get_template(template).render(**variables), template
        calls.append(template)
        return real(template, **variables)

    monkeypatch.setattr(templates, "render", both)
    monkeypatch.setattr("plyc.codegen.render.render_template", both)
    built = 0
    for path in SCRIPTS:
        try:
            driver.compile_source(Path(path).read_text(), path, driver.Options())
        except Exception:       # noqa: BLE001  (a tool this kernel lacks a probe for)
            continue
        built += 1
    assert built >= 30 and len(calls) == 3 * built


def test_a_build_imports_no_jinja2_once_the_templates_are_compiled(cache):
    code = ("import sys; from plyc import driver; "
            "driver.compile_source('tracepoint:syscalls:sys_enter_getppid { @[comm] = count(); }', "
            "'<command-line>', driver.Options(lang='bpftrace')); "
            "print(sorted(m for m in sys.modules if m.startswith(('jinja2', 'markupsafe'))))")
    env = dict(os.environ, PLYC_CACHE=str(cache), PYTHONPATH=str(ROOT))
    first = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert first.returncode == 0, first.stderr
    assert "'jinja2'" in first.stdout         # the first compiles them
    again = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip() == "[]"


LOOP = ("{% for x in xs %}{{ loop.index0 }} {{ loop.index }} {{ loop.revindex0 }} {{ loop.revindex }} "
        "{{ loop.length }}{% if loop.first %} first{% endif %}{% if loop.last %} last{% endif %}\n{% endfor %}"
        "{% for r in rows %}{% for f in r.fields %}{{ f.name }}{{ r['n'] }}{{ r.fields[0].name }}{% endfor %}"
        "{% endfor %}{{ xs | length }} {{ nothing | default(7) }} {{ k ~ 1 if xs else 0 }}\n")


def test_the_constructs_plycs_templates_use_render_as_jinja2(cache):
    variables = dict(xs=[5, 6, 7], rows=[dict(n=1, fields=[dict(name="a"), dict(name="b")])], k="z")
    assert jinjart.supported(compiled(LOOP))
    assert fast_render(LOOP, **variables) == jinja_render(LOOP, **variables)
    assert fast_render(LOOP, xs=[], rows=[], k="z") == jinja_render(LOOP, xs=[], rows=[], k="z")


@pytest.mark.parametrize("text", [
    "{% macro m(x) %}{{ x }}{% endmacro %}{{ m(1) }}",
    "{{ xs | join(',') }}",
    "{% for x in xs %}{{ loop.cycle('a', 'b') }}{% endfor %}",
    "{% for x in xs %}{{ loop }}{% endfor %}",
    "{% for x in xs recursive %}{{ loop(x) }}{% endfor %}",
    "{% set y = 1 %}{{ y }}",
    "{% if x is defined %}1{% endif %}",
    "{{ x if y }}",
    '{% include "shared.h.j2" %}',
    "{% block b %}{% endblock %}",
], ids=["macro", "join", "cycle", "loop-itself", "recursive", "top-set", "test", "cond-undefined", "include",
        "block"])
def test_what_jinjart_does_not_run_stays_with_jinja2(cache, text):
    assert not jinjart.supported(compiled(text))


def test_an_undefined_variable_is_jinja2s_error(cache):
    with pytest.raises(Exception) as direct:
        templates.jinja_env().get_template("shared.h.j2").render()
    with pytest.raises(type(direct.value)) as ours:
        templates.render("shared.h.j2")
    assert str(ours.value) == str(direct.value)
    # used in a test or a loop: jinjart gives up, jinja2 says what is undefined
    for text in ("{% if x %}1{% endif %}", "{% for i in x %}{% endfor %}", "{{ x.y }}"):
        with pytest.raises(jinjart.Unsupported):
            fast_render(text)
        with pytest.raises(jinja2.UndefinedError):
            jinja_render(text)


def test_unescaped_text_is_refused_on_either_path(cache):
    text = "{{ name }}\n"
    assert fast_render(text, name=c_string('a"b')) == '"a\\"b"\n'
    with pytest.raises(templates.UnescapedText):
        fast_render(text, name='a"b')
    with pytest.raises(templates.UnescapedText):
        templates.render("shared.h.j2", version_comment='x */ y', script_comment="s", guard="G", records=[],
                         nargs_dim=1, nopts_dim=1, ndconst_dim=1, nslots_dim=1, strsize=64, nprobes=1)


def test_a_compiled_template_not_ours_is_not_loaded(cache):
    templates._renderer("shared.h.j2")
    kept = next((cache / "templates").glob("shared.h.j2-*.code"))
    kept.chmod(0o666)
    assert templates._load(kept) is None
    templates._renderer.cache_clear()
    assert templates._renderer("shared.h.j2") is not None     # compiled again, in its place
    assert kept.stat().st_mode & 0o022 == 0
    kept.write_bytes(b"not marshal")
    assert templates._load(kept) is None
