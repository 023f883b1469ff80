"""scripts/bpftrace_suite.py's own logic (the yardstick run by hand against a
bpftrace checkout, docs/bpftrace.md): reading a test file, bpftrace's command
line, the checks of an output. A synthetic file written here; nothing runs."""
import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("bpftrace_suite", ROOT / "scripts" / "bpftrace_suite.py")
suite = importlib.util.module_from_spec(_spec)
sys.modules["bpftrace_suite"] = suite
_spec.loader.exec_module(suite)

TEXT = """\
# a comment between tests
NAME counts one
PROG interval:1s { @n = count();
     exit(); }
EXPECT @n: 1
TIMEOUT 7

NAME shell line
RUN {{BPFTRACE}} -q -f json -e 'BEGIN { exit(); }' p1 -- --aa=2 p2
EXPECT_REGEX ^\\{"type"
EXPECT_NONE ERROR
EXPECT two
       lines
REQUIRES_FEATURE btf !kprobe_multi
ENV A=1 B=2
WILL_FAIL

NAME needs a built program
PROG uprobe:./testprogs/uprobe_test:f { exit(); }
AFTER ./testprogs/uprobe_test
EXPECT x
ARCH x86_64|aarch64

NAME another architecture
PROG BEGIN { exit(); }
EXPECT y
ARCH s390x
"""


def test_parse_file(tmp_path):
    f = tmp_path / "mysuite"
    f.write_text(TEXT)
    a, b, c, d = suite.parse_file(f)
    assert (a.id, a.prog, a.expects, a.timeout) == (
        "mysuite.counts one", "interval:1s { @n = count();\nexit(); }", [("text", "@n: 1")], 7)
    assert b.run.startswith("{{BPFTRACE}} -q -f json -e ")
    assert b.expects == [("regex", '^\\{"type"'), ("text_none", "ERROR"), ("text", "two\nlines")]
    assert (b.features, b.env, b.will_fail, b.timeout) == (["btf", "!kprobe_multi"], {"A": "1", "B": "2"}, True, 5)
    assert c.after == "./testprogs/uprobe_test" and c.arch == ["x86_64", "aarch64"]
    feats = {"btf": True, "kprobe_multi": False}
    assert suite.why_skipped(c, feats) == "needs the suite's built programs"
    assert suite.why_skipped(d, feats) == "another architecture"
    assert suite.why_skipped(b, feats) == ""
    assert suite.why_skipped(b, {"btf": True, "kprobe_multi": True}) == "feature !kprobe_multi"


def test_unknown_directive(tmp_path):
    f = tmp_path / "bad"
    f.write_text("NAME x\nPROG BEGIN {}\nEXPECTT y\n")
    try:
        suite.parse_file(f)
    except ValueError as e:
        assert "unknown directive EXPECTT" in str(e)
    else:
        raise AssertionError("an unknown directive was taken")


def test_bpftrace_command_line():
    opts, words = suite.split_bpftrace_args(["-q", "-f", "json", "-e", "BEGIN {}", "p1", "--", "--aa=2", "p2"])
    assert opts == [("-q", None), ("-f", "json"), ("-e", "BEGIN {}")]
    assert words == ["p1", "--aa=2", "p2"]
    # bundled short options, a value glued or next
    assert suite.split_bpftrace_args(["-lv", "kprobe:f"]) == ([("-l", None), ("-v", None)], ["kprobe:f"])
    assert suite.split_bpftrace_args(["-ve", "BEGIN {}"])[0] == [("-v", None), ("-e", "BEGIN {}")]
    assert suite.split_bpftrace_args(["--pid=12", "x.bt"]) == ([("--pid", "12")], ["x.bt"])


def test_features_of_info():
    info = "  loop: yes                  btf: yes\n  kprobe_multi: no\n  libdw (DWARF support): yes\n"
    assert suite.features_of(info) == {"loop": True, "btf": True, "kprobe_multi": False, "dwarf": True}


def test_checks(tmp_path):
    out = "Attached 1 probe\n  @n: 1  \nhello world\n"
    assert suite.expect_met("text", "@n: 1", out, tmp_path)
    assert not suite.expect_met("text", "@n: 2", out, tmp_path)
    assert not suite.expect_met("text", "hello", out, tmp_path)       # a whole line
    assert suite.expect_met("text_none", "hello", out, tmp_path)
    assert suite.expect_met("regex", r"^hello \w+$", out, tmp_path)
    assert suite.expect_met("regex_none", r"^ERROR", out, tmp_path)
    (tmp_path / "o.json").write_text('{"a": [1, 2]}\n')
    assert suite.expect_met("json", "o.json", '\n{"a":[1,2]}\n', tmp_path)
    assert not suite.expect_met("json", "o.json", '{"a":[1,2]}\n{"b":1}\n', tmp_path)
    (tmp_path / "o.ndjson").write_text('{"a": 1}\n{"b": 2}\n')
    assert suite.expect_met("json", "o.ndjson", '{"a":1}\n{"b":2}', tmp_path)
    (tmp_path / "o.txt").write_text("\nexact\n")
    assert suite.expect_met("file", "o.txt", "exact\n\n", tmp_path)


def test_verdict(tmp_path):
    case = suite.Case("s", "n")
    case.expects = [("text", "ok")]
    assert suite.verdict(case, "ok\n", 0, False, tmp_path) == ("pass", "")
    assert suite.verdict(case, "ok\n", 1, False, tmp_path)[0] == "fail"
    assert suite.verdict(case, "ok\n", 1, True, tmp_path) == ("pass", "")   # stopped at its timeout
    res, why = suite.verdict(case, "x.bt:1:3: error: no such thing\n", 1, False, tmp_path)
    assert (res, why) == ("fail", "exit 1: no such thing")
    case.will_fail = True
    assert suite.verdict(case, "ok\n", 1, False, tmp_path) == ("pass", "")
    assert suite.verdict(case, "ok\n", 0, False, tmp_path)[0] == "fail"
