"""The tracer's output runtime (runtime-c/) against ply's formats.

tests/c/test_format.c drives the runtime and writes what it printed for
each case to OUTDIR/<case>.txt; the expected text below was worked out
from ply's source (src/libply/type.c, built-in/aggregation.c,
built-in/proc.c, aux/kallsyms.c, libply.c), not from plyc's output.
docs/output.md describes the formats.
"""

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from plyc import toolchain

ROOT = Path(__file__).resolve().parent.parent
RUNTIME = ROOT / "runtime-c"
SOURCES = ["core/rt.c", "values/format.c", "values/plyvalue.c", "values/json.c", "values/text.c", "values/btvalue.c", "values/btvalues.c",
           "values/syscalls.c", "values/errnos.c", "values/signals.c", "values/cgroups.c",
           "symbols/ksyms.c", "symbols/usyms.c", "symbols/usymsref.c", "symbols/demangle.c", "maps/aggregations.c", "maps/mapread.c",
           "output/rows.c", "output/btrows.c", "output/bttseries.c", "output/ply.c", "output/bpftrace.c", "output/bccreport.c",
           "output/dump.c", "output/select.c", "load/verifier.c"]
CFLAGS = ["-std=gnu11", "-Wall", "-Wextra", "-Werror", "-O2"]


def syscall_table(cc: str) -> str:
    """syscall_name()'s table for cc's target, made as plyc/toolchain.py makes it."""
    macros = subprocess.run([cc, *toolchain.SYSCALL_MACROS], input="#include <sys/syscall.h>\n",
                            check=True, capture_output=True, text=True).stdout
    return toolchain.syscall_table(macros)


@pytest.fixture(scope="module")
def out(tmp_path_factory):
    """Build and run the C driver once; return {case: text}."""
    if not shutil.which("gcc"):
        pytest.skip("gcc not installed")
    tmp = tmp_path_factory.mktemp("runtime_c")
    exe = tmp / "test_format"
    (tmp / "plyc_syscalls.h").write_text(syscall_table("gcc"))
    subprocess.run(
        ["gcc", *CFLAGS, f"-I{RUNTIME}", f"-I{tmp}", str(ROOT / "tests/c/test_format.c"),
         *[str(RUNTIME / s) for s in SOURCES],
         "-lbpf", "-lelf", "-lz", "-o", str(exe)],
        check=True, capture_output=True, text=True)
    # The driver sets its own locale variables and TZ where it needs them.
    subprocess.run([str(exe), str(tmp)], check=True, timeout=60)
    return {p.stem: p.read_text(encoding="utf-8") for p in tmp.glob("*.txt")}


# --- helpers to spell out histogram rows -------------------------------

def ubar(blocks, partial=""):
    """ply's Unicode bar: full blocks, an optional partial block, padded to
    32 columns between ┤ and │."""
    used = blocks + (1 if partial else 0)
    return "┤" + "█" * blocks + partial + " " * (32 - used) + "│"


def abar(n):
    """ply's ASCII bar: n '#' in 32 columns between | and |."""
    return "|" + "#" * n + " " * (32 - n) + "|"


def row(label, count, bar):
    """One bucket row: tab, label, tab, count in 8 columns, space, bar."""
    return f"\t{label}\t{count:>8} {bar}\n"


GAP = "\t...\n"


# --- scalar values -------------------------------------------------------

def test_ints(out):
    assert out["ints"] == (
        "-5\n"
        "250\n"
        "-300\n"
        "65000\n"
        "-70000\n"
        "4000000000\n"
        "-9223372036854775808\n"
        "18446744073709551615\n"
        "4294897296\n"          # -70000 as u32
        "-1\n"                  # UINT64_MAX as s64
        "   42\n"               # pid: %5u
        " 3\n"                  # cpu: %2u
        "12345\n"               # u64 at an odd offset
    )


def test_text_escapes(out):
    """Untrusted text for a terminal (values/text.c): ESC, BEL, TAB, DEL,
    a C1 control (U+009B, CSI to some terminals) and invalid bytes as \\xNN;
    U+00A0, é and a backslash as they are; a truncated UTF-8 sequence byte by
    byte; the buffer form never splits an escape."""
    assert out["text_escapes"] == (
        "a\\x1b[31m\\x07\\x09\\x7f\\xc2\\x9b\xa0é\\xff\\xe2\\x82z\\\n"
        "a\\x1b[\n"
        "a\\x1b[3\n")


def test_strings(out):
    assert out["strings"] == (
        "[bash           ]\n"           # char[16]: %-15s
        "[abcdefghijklmnop]\n"          # full, no NUL: all 16, no more
        "[dist   ]\n"                   # char[8] literal: %-7s
        "[               ]\n"           # empty comm
        # not printable: ply's hex dump on lines of its own
        "[\n000:  61 62 01 00 00 00 00 00" + " " * 27 + "ab......\n]\n"
    )


def test_durations(out):
    assert out["durations"].splitlines() == [
        "[   0ns]", "[   1ns]", "[ 999ns]",
        "[1.00us]", "[1.02us]", "[1.50us]", "[9.99us]", "[10.0us]",
        "[12.3us]", "[ 123us]", "[ 999us]",
        "[1.00ms]", "[4.00ms]", "[45.6ms]", "[ 999ms]",
        "[1.05 s]", "[12.3 s]", "[ 999 s]",
        "[  16 M]", "[ 120 M]", "[  27 H]", "[ 100 D]", "[   3 Y]",
        "[  -5ns]",
    ]


def test_walltime(out):
    assert out["walltime"] == "22:13:20.123456789\n1700000000123456789\n"
    assert re.fullmatch(r"\d\d:\d\d:\d\d\.\d{9}\n", out["walltime_now"])


def test_hex_and_mem(out):
    assert out["hex"] == (
        "<ffff888012345678>\n"
        "[\n"
        "000:  30 31 32 33 34 35 36 37  38 39 61 62 63 64 65 66"
        "   01234567 89abcdef\n"
        "010:  58 59 5a 0a" + " " * 40 + "XYZ.\n"
        "]\n"
        "[\n"
        "000:  30 31 32 33 34 35 36 37" + " " * 27 + "01234567\n"
        "]\n"
    )


def test_syms(out):
    assert out["syms"] == (
        "loaded 5\n"
        "vfs_read\n"
        "vfs_read+16\n"         # ply 2.x: decimal offsets
        "vfs_write+5\n"
        "vfs_write+3856\n"      # data symbols are not candidates
        "_stext\n"              # first name of an address wins
        "_stext+4\n"
        "mod_fn+1\n"
        "<0000000000001000>\n"  # below every symbol
        "vfs_read+16\n"
    )
    assert out["syms_restricted"] == "loaded -1\n<ffffffff81001010>\n"


def test_stacks(out):
    assert out["stack_frames"] == "\n\tvfs_read+16\n\tvfs_write\n\tmod_fn+1\n"
    assert out["stack_unreadable"] == "<STACKID7>\n[]\n"


# --- map dumps --------------------------------------------------------------

def test_count_int_keys(out):
    # by value, then by key (signed)
    assert out["count_int_keys"] == (
        "\n@:\n"
        "{ 5 }: 1\n"
        "{ -1 }: 2\n"
        "{ 3 }: 10\n"
        "{ 7 }: 10\n"
    )


def test_empty_map_prints_nothing(out):
    assert out["empty_map"] == ""
    assert out["empty_map_json"] == ""


def test_count_str_keys(out):
    assert out["count_str_keys"] == (
        "\n@calls:\n"
        "{ ls              }: 1\n"
        "{ bash            }: 5\n"
        "{ sshd            }: 5\n"
    )


def test_sum_tuple_keys(out):
    assert out["sum_tuple_keys"] == (
        "\n@bytes:\n"
        "{ zsh            ,     7 }: -4\n"
        "{ bash           ,    20 }: 30\n"
        "{ bash           ,   100 }: 30\n"
    )


def test_min_max_avg(out):
    assert out["min"] == "\n@lo:\n{ 3 }: -40\n{ 1 }: -3\n{ 2 }: 12\n"
    assert out["max_time"] == (
        "\n@hi:\n{ 3 }:    7ns\n{ 1 }: 1.50us\n{ 2 }: 2.00ms\n")
    # integer average, truncated toward zero: 10/4, -9/2, 300/3
    assert out["avg"] == "\n@mean:\n{ 2 }: -4\n{ 1 }: 2\n{ 3 }: 100\n"


def test_no_key(out):
    assert out["no_key"] == "\n@total: 42\n"


def test_plain_map(out):
    assert out["plain_map"] == "\nrx:\n{ 2 }: 1.02us\n{ 4294901761 }: 1.50us\n"


# --- histograms ----------------------------------------------------------------

def quantize_unsigned(bar):
    """@size[u32] = quantize(x): two keys; key 2 sorts first because ply
    compares histograms bucket by bucket from the lowest (1 < 3)."""
    return (
        "\n@size:\n"
        "{ 2 }: \n"
        + row("[   0,    1]", 1, bar(2, 1))
        + GAP
        + row("[  1M,   2M)", 1, bar(2, 1))
        + "\n"
        "{ 1 }: \n"
        + row("[   0,    1]", 3, bar(14, 3))
        + row("[   2,    3]", 1, bar(14, 1))
        + GAP
        + row("[  16,   31]", 2, bar(14, 2))
        + GAP
        + row("[ 512,   1k)", 1, bar(14, 1))
        + row("[  1k,   2k)", 7, bar(14, 7))
        + "\n"
    )


# Bars per (total, count), from ply's arithmetic:
# Unicode w = (int)(count/total * 256 + 0.5) eighths; ASCII (count/total * 32 + 0.5).
UTF8_BARS = {
    (2, 1): ubar(16),           # w = 128
    (14, 3): ubar(6, "▉"),      # w = 55: 6 full + 7/8
    (14, 1): ubar(2, "▎"),      # w = 18: 2 full + 2/8
    (14, 2): ubar(4, "▋"),      # w = 37: 4 full + 5/8
    (14, 7): ubar(16),          # w = 128
    (4, 2): ubar(16),
    (4, 1): ubar(8),            # w = 64
    (9, 1): ubar(3, "▌"),       # w = 28: 3 full + 4/8
    (9, 5): ubar(17, "▊"),      # w = 142: 17 full + 6/8
    (9, 3): ubar(10, "▋"),      # w = 85: 10 full + 5/8
    (8, 1): ubar(4),            # w = 32
    (8, 2): ubar(8),
    (8, 4): ubar(16),
}
ASCII_BARS = {
    (2, 1): abar(16), (14, 3): abar(7), (14, 1): abar(2), (14, 2): abar(5),
    (14, 7): abar(16), (4, 2): abar(16), (4, 1): abar(8),
    (9, 1): abar(4), (9, 5): abar(18), (9, 3): abar(11),
    (8, 1): abar(4), (8, 2): abar(8), (8, 4): abar(16),
}


def utf8(total, count):
    return UTF8_BARS[(total, count)]


def ascii_(total, count):
    return ASCII_BARS[(total, count)]


def test_quantize_unsigned(out):
    assert out["quantize_unsigned_utf8"] == quantize_unsigned(utf8)
    assert out["quantize_unsigned_ascii"] == quantize_unsigned(ascii_)


def quantize_signed(bar):
    """@["dist"] = quantize(retval) with negative values."""
    return (
        "\n@:\n"
        "{ dist    }: \n"
        + row("         < 0", 2, bar(4, 2))
        + GAP                                   # bucket [0, 1] is empty
        + row("[   4,    7]", 1, bar(4, 1))
        + row("[   8,   15]", 1, bar(4, 1))
        + "\n"
    )


def test_quantize_signed(out):
    assert out["quantize_signed_utf8"] == quantize_signed(utf8)
    assert out["quantize_signed_ascii"] == quantize_signed(ascii_)
    assert out["quantize_signed_adjacent"] == (
        "\n@:\n"
        "{ dist    }: \n"
        + row("         < 0", 1, utf8(4, 1))
        + row("[   0,    1]", 1, utf8(4, 1))
        + row("[   2,    3]", 2, utf8(4, 2))
        + "\n"
    )


def quantize_time(bar):
    """@lat = quantize(time - start): durations as closed bounds; no key."""
    return (
        "\n@lat:\n"
        + row("[   0ns,    1ns]", 1, bar(9, 1))
        + GAP
        + row("[1.02us, 2.04us]", 5, bar(9, 5))
        + GAP
        + row("[1.04ms, 2.09ms]", 3, bar(9, 3))
        + "\n"
    )


def test_quantize_time(out):
    assert out["quantize_time_utf8"] == quantize_time(utf8)
    assert out["quantize_time_ascii"] == quantize_time(ascii_)


def lquantize(bar):
    """@lin[pid] = lquantize(x, 0, 100, 10)."""
    return (
        "\n@lin:\n"
        "{  1234 }: \n"
        + row("         < 0", 1, bar(8, 1))
        + row("[   0,    9]", 2, bar(8, 2))
        + GAP
        + row("[  20,   29]", 4, bar(8, 4))
        + GAP
        + row("      >= 100", 1, bar(8, 1))
        + "\n"
    )


def test_lquantize(out):
    assert out["lquantize_utf8"] == lquantize(utf8)
    assert out["lquantize_ascii"] == lquantize(ascii_)


# --- JSON -------------------------------------------------------------------------

def test_json_map_dumps(out):
    assert out["count_int_keys_json"] == (
        '{"map": "@", "entries": [{"key": [5], "value": 1}, '
        '{"key": [-1], "value": 2}, {"key": [3], "value": 10}, '
        '{"key": [7], "value": 10}]}\n')
    assert out["sum_tuple_keys_json"] == (
        '{"map": "@bytes", "entries": [{"key": ["zsh", 7], "value": -4}, '
        '{"key": ["bash", 20], "value": 30}, '
        '{"key": ["bash", 100], "value": 30}]}\n')
    assert out["min_json"] == (
        '{"map": "@lo", "entries": [{"key": [3], "value": -40}, '
        '{"key": [1], "value": -3}, {"key": [2], "value": 12}]}\n')
    assert out["max_time_json"] == (
        '{"map": "@hi", "entries": [{"key": [3], "value": 7}, '
        '{"key": [1], "value": 1500}, {"key": [2], "value": 2000000}]}\n')
    assert out["avg_json"] == (
        '{"map": "@mean", "entries": [{"key": [2], "value": -4}, '
        '{"key": [1], "value": 2}, {"key": [3], "value": 100}]}\n')
    assert out["no_key_json"] == (
        '{"map": "@total", "entries": [{"key": [], "value": 42}]}\n')


def test_json_histograms(out):
    assert out["quantize_unsigned_json"] == (
        '{"map": "@size", "entries": ['
        '{"key": [2], "value": {"buckets": ['
        '{"lo": 0, "hi": 1, "count": 1}, '
        '{"lo": 1048576, "hi": 2097151, "count": 1}]}}, '
        '{"key": [1], "value": {"buckets": ['
        '{"lo": 0, "hi": 1, "count": 3}, '
        '{"lo": 2, "hi": 3, "count": 1}, '
        '{"lo": 16, "hi": 31, "count": 2}, '
        '{"lo": 512, "hi": 1023, "count": 1}, '
        '{"lo": 1024, "hi": 2047, "count": 7}]}}]}\n')
    assert out["quantize_signed_json"] == (
        '{"map": "@", "entries": [{"key": ["dist"], "value": {"buckets": ['
        '{"lo": -9223372036854775808, "hi": -1, "count": 2}, '
        '{"lo": 4, "hi": 7, "count": 1}, '
        '{"lo": 8, "hi": 15, "count": 1}]}}]}\n')
    assert out["quantize_time_json"] == (
        '{"map": "@lat", "entries": [{"key": [], "value": {"buckets": ['
        '{"lo": 0, "hi": 1, "count": 1}, '
        '{"lo": 1024, "hi": 2047, "count": 5}, '
        '{"lo": 1048576, "hi": 2097151, "count": 3}]}}]}\n')
    assert out["lquantize_json"] == (
        '{"map": "@lin", "entries": [{"key": [1234], "value": {"buckets": ['
        '{"lo": -9223372036854775808, "hi": -1, "count": 1}, '
        '{"lo": 0, "hi": 9, "count": 2}, '
        '{"lo": 20, "hi": 29, "count": 4}, '
        '{"lo": 100, "hi": 9223372036854775807, "count": 1}]}}]}\n')


def test_json_lines_parse(out):
    import json
    for name, text in out.items():
        if name.endswith("_json") and text and not name.startswith("bt_"):
            assert json.loads(text)["map"].startswith("@")
        elif name.endswith("_json") and text:
            # bpftrace's objects, one per line
            for line in text.splitlines():
                assert json.loads(line)["type"] in ("map", "hist", "stats", "tseries")


def test_json_values(out):
    assert out["json_values"] == (
        '"a\\"b\\\\c\\nd\\u0001é\\u00ff"\n'   # escapes; valid UTF-8 kept
        '"abcdefghijklmnop"\n'               # full char[16], no NUL
        '"dead000f"\n'                       # mem
        '"0xffff888012345678"\n'             # pointer
        '"vfs_read+16"\n'                    # sym
        '1500\n'                             # time: ns
        '-70000\n'
        '-1\n'
        '18446744073709551615\n'
        '"tab\\t"\n'                         # maxlen stops the string
    )


# --- per-CPU merging, init, real maps ------------------------------------------------

def test_merge(out):
    assert out["merge"] == (
        "count 6\n"
        "min -5 set 1\n"        # the CPU that never stored is ignored
        "max 3 set 1\n"
        "umax -5\n"             # unsigned compare: -5 is 2^64-5
        "unset 0 set 0\n"
        "avg 6/3\n"
        "buckets 1 5 3 0\n"
        "plain 9\n"
    )


def test_init(out):
    assert out["init"] == (
        "utf8 1\n"      # LANG=en_US.UTF-8
        "utf8 0\n"      # LANG=C
        "utf8 0\n"      # nothing set
        "utf8 1\n"      # LC_ALL=C.UTF-8 beats LANG=C
        "utf8 1\n"      # empty LC_ALL is skipped; LANG=sv_SE.utf8
        "utf8 0\n"      # LC_ALL=C beats LANG=en_US.UTF-8
        "utf8 1\n"      # LC_CTYPE=en_US.UTF-8 beats LANG=C
        "utf8 0\n"      # PLYC_ASCII=1
        "utf8 1\n"      # PLYC_ASCII=0
        "out is stdout 1\n"
        "stack_fd -1\n"
    )


def test_bpf_maps(out):
    text = out["bpf"]
    if text.startswith("SKIP"):
        pytest.skip(text.strip())
    ncpus = int(re.search(r"min over (\d+) cpus", text).group(1))
    low = [7 * k - (ncpus - 1) for k in (1, 2, 3)]
    assert text == (
        "\n@:\n{ 1 }: 11\n{ 2 }: 21\n{ 3 }: 31\n"
        "dumped 3\n"
        f"\n@lo:\n{{ 1 }}: {low[0]}\n{{ 2 }}: {low[1]}\n{{ 3 }}: {low[2]}\n"
        f"dumped 3 min over {ncpus} cpus\n"
        "zeroed 0\n"
        "@[1]: 0\n@[2]: 0\n@[3]: 0\n"
        "dumped 3\n"
        "cleared 0\n"
        "dumped 0\n"
    )


# --- portability: the runtime must build for the device too --------------------------

@pytest.mark.parametrize("cc", ["aarch64-linux-gnu-gcc",
                                "arm-linux-gnueabihf-gcc",
                                "riscv64-linux-gnu-gcc"])
def test_cross_compiles(cc, tmp_path):
    if not shutil.which(cc):
        pytest.skip(f"{cc} not installed")
    # Only libbpf's headers from the host: they are arch-independent; the
    # kernel and libc headers come from the cross toolchain.
    inc = tmp_path / "include"
    inc.mkdir()
    os.symlink("/usr/include/bpf", inc / "bpf")
    (inc / "plyc_syscalls.h").write_text(syscall_table(cc))
    for src in SOURCES + ["../tests/c/test_format.c"]:
        subprocess.run(
            [cc, *CFLAGS, f"-I{RUNTIME}", f"-I{inc}", "-c",
             str(RUNTIME / src), "-o", str(tmp_path / "x.o")],
            check=True)


def test_verifier_hints(out):
    """An old kernel's refusal names the feature and the release it came in;
    any other refusal is left to the verifier's own words."""
    assert out["verifier_hints"] == (
        "the program has a loop, and this kernel refuses loops in BPF programs: "
        "bounded loops came in Linux 5.3\n"
        "this kernel has no BPF helper bpf_ringbuf_reserve for this kind of probe (it came in Linux 5.8)\n"
        "this kernel has no BPF helper bpf_probe_read_kernel for this kind of probe (it came in Linux 5.5)\n"
        "this kernel has no BPF helper #999 for this kind of probe\n"
        "this kernel has no BPF helper bpf_for_each_map_elem for this kind of probe (it came in Linux 5.13)\n"
        "the verifier follows each path of a program, and each iteration of a loop apart (a while loop "
        "up to plyc's cap of 1024), up to a million instructions: a smaller loop body, or a constant "
        "bound, loads\n"
        "-\n"
        "this kernel has no BPF helper bpf_send_signal for this kind of probe (it came in Linux 5.3)\n"
        "this kernel has no BPF helper bpf_override_return for this kind of probe (it came in Linux "
        "4.16, in kernels built with CONFIG_BPF_KPROBE_OVERRIDE)\n"
        "path() (bpf_d_path) can only be used in probes of the functions the kernel allows it in "
        "(btf_allowlist_d_path: security_inode_getattr, vfs_truncate, filp_close, ...)\n")


def test_bt_buf(out):
    # bpftrace 0.17's %r, %rx and %rh of the same bytes (tests/runtime/bt-cat-buf.test
    # compares them with bpftrace itself)
    assert out["bt_buf"] == "a\\x0a\\x01\\xff\n\\x61\\x0a\\x01\\xff\n61 0a 01 ff\nok\n"


# --- bpftrace's style (runtime-c/output/bpftrace.c) ----------------------------
# The expected text is what bpftrace 0.17 (Debian 12) printed for the same
# values from BEGIN (bpftrace -e '... exit(); }'), kept here as bytes.

def btrow(label, count, top):
    """One hist/lhist row: label in 16 columns, count in 8, a 52-column bar
    of '@' scaled to the largest count and truncated."""
    bar = "@" * int(count / top * 52)
    return f"{label:<16}{count:>8} |{bar:<52}|\n"


def bt_hist_labels():
    """bpftrace's hist() labels from [0] on: [0], [1], [2, 4), ... [512, 1K), ..."""
    def p(n):
        for unit, shift in (("T", 40), ("G", 30), ("M", 20), ("K", 10)):
            if n >= shift:
                return f"{1 << (n - shift)}{unit}"
        return str(1 << n)
    return ["(..., 0)", "[0]", "[1]"] + [f"[{p(i)}, {p(i + 1)})" for i in range(1, 63)]


def test_bt_count(out):
    # values ascending; keys printed as bpftrace does, in [ ]
    assert out["bt_count"] == "@a[256]: 1\n@a[-1]: 2\n@a[2]: 3\n@a[7]: 4\n"
    assert out["bt_count_json"] == '{"type": "map", "data": {"@a": {"256": 1, "-1": 2, "2": 3, "7": 4}}}\n'
    # equal values: plyc orders by key, integers unsigned (bpftrace: its
    # hash map's order, which changes from run to run)
    assert out["bt_count_ties"] == "@a[2]: 1\n@a[7]: 1\n@a[256]: 1\n@a[-1]: 1\n"


def test_bt_plain_keys(out):
    # string values: by key, first member first; strings unpadded
    assert out["bt_plain_keys"] == "@t[a, 1]: z\n@t[a, 3]: y\n@t[a, -1]: w\"\xe9\n@t[b, 2]: x\n"
    # bpftrace escapes bytes above 0x7f as negative chars: \uffffffc3
    assert out["bt_plain_keys_json"] == (
        '{"type": "map", "data": {"@t": {"a,1": "z", "a,3": "y", '
        '"a,-1": "w\\"\\uffffffc3\\uffffffa9", "b,2": "x"}}}\n')
    assert out["bt_plain_ints"] == "@b[2]: -5\n@b[1]: 3\n"


def test_bt_tuples(out):
    # bpftrace 0.17's layout of ((int8)-2, "ab", (7, "x")): the nested tuple
    # at 8; entries by key, the tuple key member by member (2 before 256)
    assert out["bt_tuples"] == "@t[3, (2, b)]: (-2, ab, (7, x))\n@t[3, (256, a)]: (1, c, (-1, yz))\n"
    # a tuple in a JSON key without blanks, as bpftrace 0.27 writes it (0.17 has no tuple keys)
    assert out["bt_tuples_json"] == (
        '{"type": "map", "data": {"@t": {"3,(2,b)": [-2,"ab",[7,"x"]], "3,(256,a)": [1,"c",[-1,"yz"]]}}}\n')
    assert out["bt_tuple_value"] == "@t: (7, x)\n"


def test_bt_records(out):
    # bpftrace 0.27's records (tuples with member names): "{ .a = 1 }" in
    # text, objects in JSON, "{.k=3,.t=(2,b)}" in a JSON key
    assert out["bt_records"] == "@r[{ .k = 3, .t = (2, b) }]: { .n = 7, .x = x }\n"
    assert out["bt_records_json"] == (
        '{"type": "map", "data": {"@r": {"{.k=3,.t=(2,b)}": {"n": 7, "x": "x"}}}}\n')


def test_bt_hist(out):
    # bpftrace 0.17 printed these rows but the last: it counts every value
    # of 2^31 or more in [2G, 4G); plyc goes on to [4G, 8G) and up to 2^63
    labels = bt_hist_labels()
    counts = {0: 1, 1: 1, 2: 2, 3: 1, 12: 1, 23: 1, 34: 1}
    rows = "".join(btrow(labels[i], counts.get(i, 0), 2) for i in range(35))
    assert out["bt_hist"] == "@h: \n" + rows + "\n"
    assert rows.startswith("(..., 0)               1 |" + "@" * 26 + " " * 26 + "|\n")
    assert "[1K, 2K)               1 |" in rows and "[4G, 8G)" in rows
    buckets = ['{"max": -1, "count": 1}', '{"min": 0, "max": 0, "count": 1}',
               '{"min": 1, "max": 1, "count": 2}'] + [
        f'{{"min": {1 << i}, "max": {(2 << i) - 1}, "count": {counts.get(i + 2, 0)}}}' for i in range(1, 33)]
    assert out["bt_hist_json"] == '{"type": "hist", "data": {"@h": [' + ", ".join(buckets) + "]}}\n"
    # zero(@h): the name and no rows
    assert out["bt_hist_zeroed"] == "@h: \n\n"


def test_bt_hist_027(out):
    # bpftrace 0.27 (a tracer's default): no blank after "@h:", JSON's
    # buckets joined by "," alone; the rows as 0.17's
    assert out["bt_hist_027"] == out["bt_hist"].replace("@h: \n", "@h:\n", 1)
    assert out["bt_hist_json_027"] == out["bt_hist_json"].replace("}, {", "},{")
    assert "}, {" not in out["bt_hist_json_027"] and out["bt_hist_json_027"].count("},{") == 34
    assert out["bt_hist_keys_027"] == out["bt_hist_keys"].replace("]: \n", "]:\n")


def test_bt_hist_keys(out):
    labels = bt_hist_labels()
    # by total count: @g[1] (1), @g[2] (3), @g[3] (3, ties by key)
    g1 = "@g[1]: \n" + btrow("[2, 4)", 1, 1)
    g2 = "@g[2]: \n" + "".join(btrow(labels[i], {3: 1, 8: 2}.get(i, 0), 2) for i in range(3, 9))
    g3 = "@g[3]: \n" + "".join(btrow(labels[i], {2: 1, 42: 2}.get(i, 0), 2) for i in range(2, 43))
    assert out["bt_hist_keys"] == g1 + "\n" + g2 + "\n" + g3 + "\n"
    assert g3.endswith("[512G, 1T)             0 |" + " " * 52 + "|\n[1T, 2T)               2 |" + "@" * 52 + "|\n")
    assert out["bt_hist_keys_json"].startswith(
        '{"type": "hist", "data": {"@g": {"1": [{"min": 2, "max": 3, "count": 1}], "2": [')


def test_bt_lhist(out):
    # lhist(x, 0, 100, 10) of -5, 3, 35, 100, 250
    labels = ["(..., 0)"] + [f"[{i}, {i + 10})" for i in range(0, 100, 10)] + ["[100, ...)"]
    counts = {0: 1, 1: 1, 4: 1, 11: 2}
    assert out["bt_lhist"] == "@l: \n" + "".join(btrow(labels[i], counts.get(i, 0), 2) for i in range(12)) + "\n"
    buckets = ['{"max": -1, "count": 1}'] + [
        f'{{"min": {lo}, "max": {lo + 9}, "count": {counts.get(lo // 10 + 1, 0)}}}' for lo in range(0, 100, 10)
    ] + ['{"min": 100, "count": 2}']
    assert out["bt_lhist_json"] == '{"type": "hist", "data": {"@l": [' + ", ".join(buckets) + "]}}\n"
    # bounds in K and M when whole
    assert out["bt_lhist_k"] == ("@j: \n" + btrow("[0, 1K)", 1, 1) + btrow("[1K, 2K)", 0, 1) +
                                 btrow("[2K, 3K)", 1, 1) + "\n")
    assert out["bt_lhist_m"] == ("@k: \n" + btrow("[0, 1M)", 1, 1) + btrow("[1M, 2M)", 0, 1) +
                                 btrow("[2M, ...)", 1, 1) + "\n")


def test_bt_lhist_027(out):
    assert out["bt_lhist_027"] == out["bt_lhist"].replace("@l: \n", "@l:\n")
    assert out["bt_lhist_k_027"] == out["bt_lhist_k"].replace("@j: \n", "@j:\n")


def test_bt_avg_stats_027(out):
    # 0.27: { .count = N, ... }, no blank line after avg() and stats() maps
    assert out["bt_avg_027"] == "@a[2]: 4\n@a[1]: 10\n@a[3]: 11\n"
    assert out["bt_stats_027"] == ("@s[2]: { .count = 3, .average = 4, .total = 12 }\n"
                                   "@s[1]: { .count = 1, .average = 10, .total = 10 }\n"
                                   "@s[3]: { .count = 1, .average = 11, .total = 11 }\n")
    assert out["bt_stats_nokey_027"] == "@s: { .count = 3, .average = 4, .total = 12 }\n"
    assert out["bt_stats_json_027"] == out["bt_stats_json"]


def test_bt_avg_stats(out):
    # by average; a blank line after the dump
    assert out["bt_avg"] == "@a[2]: 4\n@a[1]: 10\n@a[3]: 11\n\n"
    assert out["bt_avg_json"] == '{"type": "stats", "data": {"@a": {"2": 4, "1": 10, "3": 11}}}\n'
    assert out["bt_stats"] == ("@s[2]: count 3, average 4, total 12\n@s[1]: count 1, average 10, total 10\n"
                               "@s[3]: count 1, average 11, total 11\n\n")
    assert out["bt_stats_json"] == (
        '{"type": "stats", "data": {"@s": {"2": {"count": 3, "average": 4, "total": 12}, '
        '"1": {"count": 1, "average": 10, "total": 10}, "3": {"count": 1, "average": 11, "total": 11}}}}\n')
    assert out["bt_stats_nokey"] == "@s: count 3, average 4, total 12\n\n"
    assert out["bt_stats_nokey_json"] == '{"type": "stats", "data": {"@s": {"count": 3, "average": 4, "total": 12}}}\n'


def test_bt_empty(out):
    # an empty map is a blank line (two for avg and stats: PLYC_A_AVG 5,
    # PLYC_A_STATS 9); a key-less count() is 0; JSON prints nothing
    assert out["bt_empty"] == "0:\n2:\n5:\n\n9:\n\n10:\n1:\n@c: 0\n"
    assert out["bt_empty_json"] == '{"type": "map", "data": {"@c": 0}}\n'


def test_bt_empty_027(out):
    # 0.27 prints nothing of an empty keyed map; a key-less count() or
    # sum() is its zero in a print() (left out of the exit dump:
    # output/bpftrace.c's at_exit)
    assert out["bt_empty_027"] == "0:2:5:9:10:1:@c: 0\n"
    assert out["bt_empty_json_027"] == '{"type": "map", "data": {"@c": 0}}\n' * 2


def test_bt_events_027(out):
    # 0.27's JSON banner has "count" too; no blank lines before the exit
    # dump in JSON, two in text
    assert out["bt_events_027"] == (
        '{"type": "attached_probes", "count": 2, "data": {"probes": 2}}\n||' + "|\n\n|")


def test_bt_events(out):
    text = ("Attaching 1 probe...\nAttaching 8 probes...\n5\nstr\n(5, ab, -2)\nab\\x01\\x0a\n0x1234\n\n\n")
    json = ('{"type": "attached_probes", "data": {"probes": 1}}\n'
            '{"type": "attached_probes", "data": {"probes": 8}}\n'
            '{"type": "value", "data": 5}\n{"type": "value", "data": "str"}\n'
            '{"type": "value", "data": [5,"ab",-2]}\n{"type": "value", "data": "ab\\\\x01\\\\x0a"}\n'
            '{"type": "value", "data": 4660}\n\n\n')     # a pointer: its number, as 0.27 writes it
    printf = '{"type": "printf", "data": "a\\tb \\"3\\"\\n\\u0001\\uffffffc3\\uffffffa9"}\n'
    # the same print() through ply's operations, text then JSON
    ply = '5, ab     , -2\n5\n{"print": [5, "ab", -2]}\n{"print": [5]}\n'
    assert out["bt_events"] == text + json + printf + ply


def test_bt_top_div_time_join(out):
    import time
    year = time.strftime("%Y", time.gmtime())
    assert out["bt_top_div"] == (
        # print(@a, 2), print(@a, 0, 2)
        "@a[2]: 2\n@a[3]: 3\n" "@a[1]: 0\n@a[2]: 1\n@a[3]: 1\n"
        # print(@h, 0, 2) of hist(3) three times and hist(5)
        "@h: \n" + btrow("[2, 4)", 3, 3).replace("       3 |", "       1 |")
        + btrow("[4, 8)", 1, 3).replace("       1 |", "       0 |") + "\n"
        # print(@v, 1, 3) of avg(); print(@s, 1, 3) of stats(): all, undivided
        "@v[2]: 10\n\n"
        "@s[1]: count 1, average 10, total 10\n@s[2]: count 1, average 30, total 30\n\n"
        # print(@p, 0, 2) of 7 and -9
        "@p[2]: -4\n@p[1]: 3\n"
        '{"type": "map", "data": {"@p": {"2": -4, "1": 3}}}\n'
        '{"type": "hist", "data": {"@h": [{"min": 2, "max": 3, "count": 1}, {"min": 4, "max": 7, "count": 0}]}}\n'
        '{"type": "join", "data": "/bin/echo a b"}\n'
        "/bin/echo a b\n/bin/echo,a,b\n"
        f"{year}|"
        f'{{"type": "time", "data": "{year}\\n"}}\n')


def test_bt_inet(out):
    # ntop(): IPv4, IPv6 (compressed, v4-mapped as inet_ntop writes it), and
    # an unknown family as the empty string bpftrace 0.17 prints
    assert out["bt_inet"] == ('127.0.0.1|"127.0.0.1"|"127.0.0.1"\n'
                              '2001:db8::1|"2001:db8::1"|"2001:db8::1"\n'
                              '::ffff:10.0.0.9|"::ffff:10.0.0.9"|"::ffff:10.0.0.9"\n'
                              '|""|""\n')


def ts_rule(pad: int, ends: str, fill: str = "_") -> str:
    """A tseries chart's top or bottom rule: pad spaces, then 53 columns."""
    return " " * pad + ends[0] + fill * 51 + ends[1] + "\n"


def ts_scale(pad: int, lo: str, hi: str) -> str:
    return " " * pad + f"{lo:<21}{hi:>32}\n"


def test_bt_tseries(out):
    # bpftrace 0.27's charts (output/bttseries.c; its observed output: tests/runtime/
    # bt-tseries*.test): keys in the order of their bytes (256, 1, -1); a row per
    # interval from the key's first of the map's last 4 to the map's latest,
    # "-" where none; times in UTC (TAI - 37 s) to the interval's unit (one row:
    # ns); a '.' column at zero; a key with no interval there scaled null to null
    row = lambda t, col, v, dot=None: t + " " + "".join(
        "*" if i == col else "|" if i in (0, 52) else "." if i == dot else " " for i in range(53)) + f" {v}\n"
    assert out["bt_tseries"] == (
        "@k[256]:\n" + ts_scale(19, "6", "8") + "hh:mm:ss.ns        |" + "_" * 51 + "|\n"
        + row("22:12:43.000003000", 26, 7) + ts_rule(19, "vv") + ts_scale(19, "6", "8") + "\n"
        "@k[1]:\n" + ts_scale(16, "-3", "10") + "hh:mm:ss.\u03bcs    |" + "_" * 51 + "|\n"
        + row("22:12:43.000000", 32, 5, 12) + row("22:12:43.000001", 0, -3, 12)
        + row("22:12:43.000002", None, "-", 12) + row("22:12:43.000003", 52, 10, 12)
        + ts_rule(16, "vv") + ts_scale(16, "-3", "10") + "\n"
        "@k[-1]:\n" + ts_scale(19, "null", "null") + "hh:mm:ss.ns        |" + "_" * 51 + "|\n"
        + row("22:12:43.000003000", None, "-") + ts_rule(19, "vv") + ts_scale(19, "null", "null") + "\n")
    start = '{"interval_start":"2023-11-14 22:12:43.'
    assert out["bt_tseries_json"] == (
        '{"type": "tseries", "data": {"@k": {"256": [' + start + '000003000","value":7}], '
        '"1": [' + start + '000000000","value":5},' + start + '000001000","value":-3},'
        + start + '000003000","value":10}], "-1": []}}}\n')
    # unsigned, in 2 s intervals: whole seconds; the 64-bit maximum
    top = "18446744073709551615"
    assert out["bt_tseries_u64"] == (
        "@u:\n" + ts_scale(9, "0", top) + "hh:mm:ss |" + "_" * 51 + "|\n"
        + row("22:12:43", 0, 0) + row("22:12:45", 52, top) + row("22:12:47", 0, 0)
        + ts_rule(9, "vv") + ts_scale(9, "0", top) + "\n")
    assert out["bt_tseries_u64_json"] == (
        '{"type": "tseries", "data": {"@u": [{"interval_start":"2023-11-14 22:12:43.000000000","value":0},'
        '{"interval_start":"2023-11-14 22:12:45.000000000","value":' + top + '},'
        '{"interval_start":"2023-11-14 22:12:47.000000000","value":0}]}}\n')
    # zero(): every interval 0, so the last 4 reach back before 1970
    assert out["bt_tseries_zeroed"] == "@k[1]:\n<no data>\n"
    assert out["bt_tseries_zeroed_json"] == '{"type": "tseries", "data": {"@k": {"1": []}}}\n'
    # two CPUs' slots: the latest interval wins; in one interval the last value
    # is the latest stored (meta 9 > 2), avg adds sums and counts, max, min, sum
    assert out["bt_tseries_merge"] == ("0: 4 9 30, 8 31, 0\n1: -2 11 30, 8 31, 0\n2: 4 9 30, 8 31, 0\n"
                                       "3: -6 9 30, 8 31, 0\n4: -2 9 30, 8 31, 0\n")
