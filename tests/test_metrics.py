"""tracer --metrics: the aggregations served to Prometheus while tracing
(docs/metrics.md). A real Prometheus (Debian's package) scrapes a tracer and
its query API gives the exact count; promtool checks the exposition of every
aggregation kind with awkward keys; bad requests never stop tracing; a scrape
of 10,000 keys is timed."""
import json
import os
import random
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

import builds  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def own_comm(monkeypatch):
    """The workloads' comm here: one that other tests running at the same
    time don't use (set per test: the whole session shares os.environ)."""
    monkeypatch.setenv("WORKLOAD_COMM", "plyc-metrics")


COUNT = ('tracepoint:syscalls/sys_enter_getppid / comm == "plyc-metrics" /\n'
         '{\n\t@calls[comm] = count();\n\t@q = quantize(pid);\n}\n'
         # the getppid workload reads 1024 bytes of /sys once (glibc's get_nprocs)
         'tracepoint:syscalls/sys_enter_read / comm == "plyc-metrics" && data->count != 1024 /\n'
         '{\n\t@sizes = quantize(data->count);\n}\n')


def build(tmp_path, script, *opts, name="t"):
    src = tmp_path / f"{name}.ply"
    src.write_text(script)
    out = tmp_path / name
    proc = builds.run([sys.executable, "-m", "plyc", "build", str(src), "-o", str(out), *opts],
                          capture_output=True, text=True, cwd=ROOT, timeout=180)
    assert proc.returncode == 0, proc.stderr
    return str(out)


class Tracer:
    """A tracer running with --metrics on 127.0.0.1 (a port it picks)."""

    def __init__(self, path, *args):
        self.proc = subprocess.Popen([path, "--metrics", "127.0.0.1:0", *args], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        line = self.proc.stderr.readline()
        m = re.search(r"serving metrics at http://127\.0\.0\.1:(\d+)/metrics", line)
        if not m:
            self.proc.kill()
            raise AssertionError(line + self.proc.communicate()[1])
        self.port = int(m.group(1))
        # attached once the listener answers with a probe count
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if re.search(r"^\w*probes_attached [1-9]", self.scrape(), re.M):
                    return
            except OSError:
                pass
            time.sleep(0.1)
        self.proc.kill()
        self.proc.communicate()
        raise AssertionError("the tracer never attached")

    def scrape(self, accept=None, timeout=10):
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}/metrics")
        if accept:
            req.add_header("Accept", accept)
        with urllib.request.urlopen(req, timeout=timeout) as r:
            assert r.status == 200
            return r.read().decode()

    def stop(self):
        self.proc.send_signal(signal.SIGINT)
        out, err = self.proc.communicate(timeout=30)
        return self.proc.returncode, out, err


@pytest.fixture
def tracers():
    started = []
    yield started
    for t in started:
        if t.proc.poll() is None:
            t.proc.kill()
            t.proc.communicate()


def sample(text, name, **labels):
    """The value of one sample of the text format, or None."""
    want = ",".join(f'{k}="{v}"' for k, v in labels.items())
    pat = "^" + re.escape(name) + (r"\{" + re.escape(want) + r"\}" if labels else "") + r" (\S+)$"
    m = re.search(pat, text, re.M)
    return float(m.group(1)) if m else None


# --- the runtime's C, without BPF or sockets (tests/c/test_metrics.c) -----

@pytest.fixture(scope="module")
def c_out(tmp_path_factory):
    from test_runtime_c import syscall_table
    tmp = tmp_path_factory.mktemp("metrics_c")
    rt = ROOT / "runtime-c"
    (tmp / "plyc_syscalls.h").write_text(syscall_table("gcc"))
    subprocess.run(["gcc", "-std=gnu11", "-Wall", "-Wextra", "-Werror", "-O2", f"-I{rt}", f"-I{tmp}",
                    str(ROOT / "tests/c/test_metrics.c"),
                    *[str(rt / f) for f in ("metrics/metrics.c", "maps/mapread.c", "maps/aggregations.c",
                                            "core/rt.c", "values/format.c", "values/json.c", "values/btvalue.c",
                                            "values/btvalues.c", "values/text.c", "values/syscalls.c", "values/errnos.c", "values/signals.c", "values/cgroups.c", "symbols/ksyms.c",
                                            "symbols/usyms.c", "symbols/usymsref.c", "symbols/demangle.c")],
                    "-lbpf", "-lelf", "-lz", "-o", str(tmp / "tm")], check=True, capture_output=True, text=True)
    subprocess.run([str(tmp / "tm"), str(tmp)], check=True, timeout=30)
    return {p.stem: p.read_bytes().decode("utf-8") for p in tmp.glob("*.txt")}


def test_label_values(c_out):
    assert c_out["label_plain"] == "bash"
    assert c_out["label_escapes"] == r'a\\b\"c\nd'
    # bad UTF-8 and control bytes as the text \xNN (its backslash escaped); é passes
    assert c_out["label_bad_utf8"] == r"x\\xff\\xfey" + "é" + r"\\xe2\\x82"
    assert c_out["label_controls"] == r"t\\x09u\\x01v\\x7f"
    # overlong forms, surrogates and code points past U+10FFFF are not UTF-8
    assert c_out["label_overlong"] == "".join(rf"\\x{b:02x}" for b in b"\xc0\xaf\xed\xa0\x80\xf4\x90\x80\x80")
    assert c_out["label_full"] == "0123456789abcdef"


FAMILIES = """\
# HELP plyc_reads_total @reads: count() in t.ply
# TYPE plyc_reads_total counter
plyc_reads_total{comm="ba\\"sh",pid="20"} 7
plyc_reads_total{comm="z\\\\xffsh",pid="7"} 42
# HELP plyc_at @: quantize() in t.ply
# TYPE plyc_at histogram
plyc_at_bucket{k0="ba\\"sh",k1="20",le="-1.0"} 4
plyc_at_bucket{k0="ba\\"sh",k1="20",le="1.0"} 6
plyc_at_bucket{k0="ba\\"sh",k1="20",le="3.0"} 6
plyc_at_bucket{k0="ba\\"sh",k1="20",le="7.0"} 6
plyc_at_bucket{k0="ba\\"sh",k1="20",le="15.0"} 7
plyc_at_bucket{k0="ba\\"sh",k1="20",le="+Inf"} 7
plyc_at_sum{k0="ba\\"sh",k1="20"} -2
plyc_at_count{k0="ba\\"sh",k1="20"} 7
plyc_at_bucket{k0="z\\\\xffsh",k1="7",le="-1.0"} 0
plyc_at_bucket{k0="z\\\\xffsh",k1="7",le="1.0"} 0
plyc_at_bucket{k0="z\\\\xffsh",k1="7",le="3.0"} 5
plyc_at_bucket{k0="z\\\\xffsh",k1="7",le="+Inf"} 5
plyc_at_sum{k0="z\\\\xffsh",k1="7"} 12
plyc_at_count{k0="z\\\\xffsh",k1="7"} 5
# HELP plyc_lin @lin: lquantize() in t.ply
# TYPE plyc_lin histogram
plyc_lin_bucket{le="-1.0"} 1
plyc_lin_bucket{le="9.0"} 1
plyc_lin_bucket{le="19.0"} 3
plyc_lin_bucket{le="29.0"} 3
plyc_lin_bucket{le="39.0"} 3
plyc_lin_bucket{le="+Inf"} 6
plyc_lin_sum 150
plyc_lin_count 6
# HELP plyc_mean @mean: avg() in t.ply
# TYPE plyc_mean gauge
plyc_mean -2.5
"""


def test_families(c_out):
    """Worked out by hand from tests/c/test_metrics.c's values: a signed
    quantize with negatives (le=-1), buckets up to the highest non-empty one,
    the exact sum kept after the buckets, lquantize's linear bounds, avg's
    exact mean."""
    assert c_out["families"] == FAMILIES
    om = FAMILIES
    for fam, typ, suffix in (("plyc_reads", "counter", "_total"), ("plyc_at", "histogram", ""),
                             ("plyc_lin", "histogram", ""), ("plyc_mean", "gauge", "")):
        help_line = re.search(rf"^# HELP {fam}{suffix} .*$", om, re.M).group(0)
        om = om.replace(f"{help_line}\n# TYPE {fam}{suffix} {typ}\n",
                        f"# TYPE {fam} {typ}\n{help_line.replace(fam + suffix, fam, 1)}\n")
    # OpenMetrics: no _sum in a histogram with negative bounds
    om = re.sub(r"^plyc_(at|lin)_sum.*\n", "", om, flags=re.M)
    assert c_out["families_om"] == om


def test_log2_family(c_out):
    """bcc's log2 buckets ([0] is 0, [i] is 2^(i-1) .. 2^i - 1): bounds 0,
    1, 3, 7, 15 up to the highest non-empty bucket, and the sum kept."""
    assert c_out["family_log2"] == (
        "# HELP plyc_lat @lat: quantize() in t.ply\n"
        "# TYPE plyc_lat histogram\n"
        'plyc_lat_bucket{le="0.0"} 1\n'
        'plyc_lat_bucket{le="1.0"} 3\n'
        'plyc_lat_bucket{le="3.0"} 3\n'
        'plyc_lat_bucket{le="7.0"} 3\n'
        'plyc_lat_bucket{le="15.0"} 6\n'
        'plyc_lat_bucket{le="+Inf"} 6\n'
        "plyc_lat_sum 29\n"
        "plyc_lat_count 6\n")


def test_bt_hist_and_stats_families(c_out):
    """bpftrace's hist(): le -1 (below 0), 0, 1, 3, 7 up to the highest
    non-empty bucket; OpenMetrics without _sum (negative bounds). stats():
    the exact mean, as avg()."""
    buckets = ('plyc_h_bucket{le="-1.0"} 1\n'
               'plyc_h_bucket{le="0.0"} 3\n'
               'plyc_h_bucket{le="1.0"} 3\n'
               'plyc_h_bucket{le="3.0"} 3\n'
               'plyc_h_bucket{le="7.0"} 4\n'
               'plyc_h_bucket{le="+Inf"} 4\n')
    assert c_out["family_bt_hist"] == (
        "# HELP plyc_h @h: hist() in t.ply\n# TYPE plyc_h histogram\n" + buckets +
        "plyc_h_sum 1\nplyc_h_count 4\n"
        "# TYPE plyc_h histogram\n# HELP plyc_h @h: hist() in t.ply\n" + buckets +
        "plyc_h_count 4\n"
        "# HELP plyc_s @s: stats() in t.ply\n# TYPE plyc_s gauge\nplyc_s 3.5\n")


def test_http_answers(c_out):
    text = "text/plain; version=0.0.4; charset=utf-8"
    om = "application/openmetrics-text; version=1.0.0; charset=utf-8"
    assert c_out["get"] == f"HTTP/1.1 200 OK\r\nContent-Type: {text}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    assert c_out["get_om"].startswith(f"HTTP/1.1 200 OK\r\nContent-Type: {om}\r\n")
    assert c_out["get_lf_only"].startswith("HTTP/1.1 200 OK\r\n")
    assert c_out["incomplete"] == "incomplete\n"
    for case, status in (("not_found", "404 Not Found"), ("bad_version", "400 Bad Request"),
                         ("bad_header", "400 Bad Request"), ("nul_header", "400 Bad Request"),
                         ("too_big", "431 Request Header Fields Too Large")):
        assert c_out[case] == (f"HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\n"
                               f"Content-Length: {len(status) + 1}\r\nConnection: close\r\n\r\n{status}\n"), case
    assert c_out["post"].startswith("HTTP/1.1 405 Method Not Allowed\r\n") and "\r\nAllow: GET\r\n" in c_out["post"]


# --- the tracer's side ---------------------------------------------------

@pytest.mark.bpf
def test_help_lists_metrics(tmp_path):
    tracer = build(tmp_path, COUNT)
    out = subprocess.run([tracer, "-h"], capture_output=True, text=True)
    assert out.returncode == 0
    assert "--metrics [ADDR:]PORT" in out.stdout and "--metrics-prefix NAME" in out.stdout


@pytest.mark.bpf
def test_bad_metrics_options(tmp_path):
    tracer = build(tmp_path, COUNT)
    for args, msg in ((["--metrics", "nope"], "[ADDR:]PORT"), (["--metrics", "1.2.3:80"], "not an IPv4"),
                      (["--metrics", "127.0.0.1:0", "--metrics-prefix", "a-b"], "metric name")):
        out = subprocess.run([tracer, *args, "-d", "1"], capture_output=True, text=True, timeout=30)
        assert out.returncode == 1 and msg in out.stderr, out.stderr


@pytest.mark.bpf
def test_counts_histograms_and_the_exit_dump(tmp_path, workload, tracers):
    tracer = build(tmp_path, COUNT)
    t = Tracer(tracer)
    tracers.append(t)
    subprocess.run([workload, "getppid", "1234"], check=True)
    subprocess.run(f"{workload} read 4 1; {workload} read 2 3; {workload} read 1 100", shell=True, check=True)
    text = t.scrape()
    assert sample(text, "plyc_calls_total", comm="plyc-metrics") == 1234
    assert "# TYPE plyc_calls_total counter" in text
    # cumulative buckets at the bounds integers can't cross, then +Inf, _sum, _count
    assert sample(text, "plyc_sizes_bucket", le="1.0") == 4
    assert sample(text, "plyc_sizes_bucket", le="3.0") == 6
    assert sample(text, "plyc_sizes_bucket", le="63.0") == 6
    assert sample(text, "plyc_sizes_bucket", le="127.0") == 7
    assert sample(text, "plyc_sizes_bucket", le="+Inf") == 7
    assert sample(text, "plyc_sizes_sum") == 4 * 1 + 2 * 3 + 100
    assert sample(text, "plyc_sizes_count") == 7
    assert sample(text, "plyc_events_lost_total") == 0
    assert sample(text, "plyc_map_updates_dropped_total", map="@calls", reason="full") == 0
    assert re.search(r'^plyc_build_info\{tracer="t",script="t.ply",plyc_version="[^"]+"\} 1$', text, re.M)
    om = t.scrape(accept="application/openmetrics-text; version=1.0.0")
    assert om.endswith("# EOF\n")
    assert "# TYPE plyc_calls counter" in om and 'plyc_calls_total{comm="plyc-metrics"} 1234' in om
    rc, out, err = t.stop()
    assert rc == 0, err
    assert "\n@calls:\n{ plyc-metrics    }: 1234\n" in out


@pytest.mark.bpf
def test_prefix(tmp_path, tracers):
    tracer = build(tmp_path, "interval:10ms { @ = count(); }\ninterval:100ms { printf(\"tick\\n\"); }\n"
                             "END { printf(\"end\\n\"); }\n")
    t = Tracer(tracer, "--metrics-prefix", "dev1")
    tracers.append(t)
    time.sleep(0.3)
    text = t.scrape()
    assert re.search(r"^dev1_at_total \d+$", text, re.M)
    assert re.search(r"^dev1_events_lost_total 0$", text, re.M)
    assert "plyc_" not in text.replace("plyc_version", "")
    # printf output still goes to stdout, END still runs, the maps are dumped
    rc, out, err = t.stop()
    assert rc == 0, err
    assert out.startswith("tick\n") and re.search(r"\nend\n\n@: \d+\n$", out), out


@pytest.mark.bpf
def test_argdist_tracer(tmp_path, workload, tracers):
    out = tmp_path / "ad"
    proc = subprocess.run([sys.executable, "-m", "plyc", "argdist", "-c",
                           "-C", 't:syscalls:sys_enter_read():u64:count:STRCMP("plyc-metrics", $COMM)',
                           "-H", 't:syscalls:sys_enter_read():u64:count:STRCMP("plyc-metrics", $COMM)',
                           "-i", "100", "-o", str(out)], capture_output=True, text=True, cwd=ROOT, timeout=180)
    assert proc.returncode == 0, proc.stderr
    t = Tracer(str(out))
    tracers.append(t)
    subprocess.run(f"{workload} read 3 16; {workload} read 2 100", shell=True, check=True)
    text = t.scrape()
    counts = {m.group(1): float(m.group(2)) for m in re.finditer(r'^plyc_\w+_total\{count="(\d+)"\} (\S+)$',
                                                                 text, re.M)}
    assert counts.get("16") == 3 and counts.get("100") == 2, text
    # bcc's log2 buckets: [16, 31] and [64, 127]
    hist = re.search(r"^# TYPE (plyc_\w+) histogram$", text, re.M).group(1)
    assert sample(text, hist + "_bucket", le="15.0") == 0
    assert sample(text, hist + "_bucket", le="31.0") == 3
    assert sample(text, hist + "_bucket", le="127.0") == 5
    assert sample(text, hist + "_sum") == 3 * 16 + 2 * 100
    t.stop()


# --- promtool and Prometheus --------------------------------------------

def have_prometheus():
    if shutil.which("prometheus") and shutil.which("promtool"):
        return True
    if os.geteuid() == 0 and shutil.which("apt-get"):
        subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", "prometheus"],
                       capture_output=True, env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"}, timeout=600)
    return bool(shutil.which("prometheus") and shutil.which("promtool"))


@pytest.fixture(scope="session")
def prometheus_pkg():
    if not have_prometheus():
        pytest.skip("Debian's prometheus package (prometheus, promtool) can't be installed")


needs_prometheus = pytest.mark.usefixtures("prometheus_pkg")

AWKWARD = r'''tracepoint:syscalls/sys_enter_openat / comm == "plyc-metrics" /
{
	@opens[str(data->filename), pid] = count();
	@bytes[str(data->filename)] = sum(pid);
	@neg[str(data->filename)] = sum(-1);
	@lo[comm] = min(pid);
	@hi[comm] = max(pid);
	@mean[comm] = avg(pid);
	@q[str(data->filename)] = quantize(pid);
	@sq = quantize(-2);
	@lq[comm] = lquantize(pid % 100, 10, 90, 7);
	@[comm, kpid] = count();
	@k[comm, pid + 1, 2] = count();
	@stk[stack] = count();
	@t = max(time);
	plain[pid] = 1;
}
'''


@needs_prometheus
@pytest.mark.bpf
def test_promtool_checks_every_kind_and_awkward_keys(tmp_path, workload, tracers):
    tracer = build(tmp_path, AWKWARD)
    t = Tracer(tracer)
    tracers.append(t)
    d = tmp_path / "names"
    d.mkdir()
    names = [b'quote"d', b"back\\slash", b"new\nline", b"bad\xff\xfeutf8", b"tab\tand\x01ctl", "ünï".encode()]
    for n in names:
        subprocess.run([workload.encode(), b"open", bytes(d).rstrip(b"/") + b"/" + n, b"2"], check=True)
    text = t.scrape()
    check = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr + text
    # label values: \\ \" \n escaped, other control bytes and bad UTF-8 as \xNN
    base = str(d)
    for n, shown in ((b'quote"d', 'quote\\"d'), (b"back\\slash", "back\\\\slash"), (b"new\nline", "new\\nline"),
                     (b"bad", "bad\\\\xff\\\\xfeutf8"), (b"tab", "tab\\\\x09and\\\\x01ctl"), (b"\xc3", "ünï")):
        assert re.search(r'^plyc_bytes_total\{filename="' + re.escape(base + "/" + shown) + r'"\} \d+$', text, re.M), \
            (shown, text)
    assert re.search(r'^plyc_opens_total\{filename="[^"]*ünï",pid="\d+"\} 2$', text, re.M)
    assert "# TYPE plyc_neg gauge" in text and "# TYPE plyc_mean gauge" in text
    assert re.search(r'^plyc_at_total\{comm="plyc-metrics",kpid="\d+"\} 2$', text, re.M)
    assert re.search(r'^plyc_k_total\{comm="plyc-metrics",k1="\d+",k2="2"\} 2$', text, re.M)
    assert re.search(r'^plyc_sq_bucket\{le="-1.0"\} 12$', text, re.M)
    assert "plyc_plain" not in text   # plain maps are not exported
    om = t.scrape(accept="application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5")
    assert om.endswith("# EOF\n") and "# TYPE plyc_opens counter" in om
    rc, out, err = t.stop()
    assert rc == 0, err


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Prometheus:
    def __init__(self, tmp_path, target_port):
        cfg = tmp_path / "prometheus.yml"
        cfg.write_text("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                       "scrape_configs:\n  - job_name: plyc\n    static_configs:\n"
                       f"      - targets: ['127.0.0.1:{target_port}']\n")
        self.port = free_port()
        self.log = open(tmp_path / "prometheus.log", "w")
        self.proc = subprocess.Popen(["prometheus", f"--config.file={cfg}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                                      f"--web.listen-address=127.0.0.1:{self.port}"],
                                     stdout=self.log, stderr=subprocess.STDOUT)

    def query(self, q):
        url = f"http://127.0.0.1:{self.port}/api/v1/query?" + urllib.parse.urlencode({"query": q})
        with urllib.request.urlopen(url, timeout=5) as r:
            return json.load(r)["data"]["result"]

    def wait(self, q, timeout=60):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                res = self.query(q)
                if res:
                    return res
            except OSError:
                pass
            time.sleep(0.5)
        raise AssertionError(f"Prometheus never had {q}")

    def stop(self):
        self.proc.kill()
        self.proc.wait()
        self.log.close()


@needs_prometheus
@pytest.mark.bpf
def test_prometheus_scrapes_the_exact_count(tmp_path, workload, tracers):
    tracer = build(tmp_path, COUNT)
    t = Tracer(tracer)
    tracers.append(t)
    subprocess.run([workload, "getppid", "4321"], check=True)
    subprocess.run(f"{workload} read 5 1; {workload} read 3 100; {workload} read 2 1500", shell=True, check=True)
    prom = Prometheus(tmp_path, t.port)
    try:
        res = prom.wait('plyc_calls_total{comm="plyc-metrics"}')
        assert [r["value"][1] for r in res] == ["4321"]
        assert res[0]["metric"]["job"] == "plyc"
        # 10 reads: 5 of 1 byte, 3 of 100, 2 of 1500: the median is in [0, 1],
        # the 0.9 quantile in [1024, 2047]
        med = float(prom.wait("histogram_quantile(0.5, plyc_sizes_bucket)")[0]["value"][1])
        p90 = float(prom.wait("histogram_quantile(0.9, plyc_sizes_bucket)")[0]["value"][1])
        assert 0 <= med <= 1 and 1023 <= p90 <= 2047, (med, p90)
        avg = float(prom.wait("plyc_sizes_sum / plyc_sizes_count")[0]["value"][1])
        assert avg == (5 + 300 + 3000) / 10
        # Prometheus asked for OpenMetrics and parsed it: the target is up
        with urllib.request.urlopen(f"http://127.0.0.1:{prom.port}/api/v1/targets", timeout=5) as r:
            targets = json.load(r)["data"]["activeTargets"]
        assert targets[0]["health"] == "up", targets
    finally:
        prom.stop()
    rc, out, err = t.stop()
    assert rc == 0, err
    assert "{ plyc-metrics    }: 4321\n" in out


# --- bad requests -------------------------------------------------------

def raw(port, data, timeout=10, read=True, shut=False):
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        if data:
            s.sendall(data)
        if shut:
            s.shutdown(socket.SHUT_WR)
        if not read:
            return s
        out = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                return out
            out += chunk
    finally:
        if read:
            s.close()


def status(resp):
    m = re.match(rb"HTTP/1\.1 (\d+) ", resp)
    return int(m.group(1)) if m else None


@pytest.mark.bpf
def test_bad_requests_never_stop_tracing(tmp_path, workload, tracers):
    tracer = build(tmp_path, COUNT)
    t = Tracer(tracer)
    tracers.append(t)
    p = t.port
    assert status(raw(p, b"GET /nope HTTP/1.1\r\nHost: x\r\n\r\n")) == 404
    assert status(raw(p, b"GET / HTTP/1.0\r\n\r\n")) == 404
    assert status(raw(p, b"POST /metrics HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc")) == 405
    assert status(raw(p, b"HEAD /metrics HTTP/1.1\r\n\r\n")) == 405
    assert status(raw(p, b"GET /metrics HTTP/2.0\r\n\r\n")) == 400
    assert status(raw(p, b"GET /metrics\r\n\r\n")) == 400
    assert status(raw(p, b"GET /metrics HTTP/1.1\r\nno colon here\r\n\r\n")) == 400
    assert status(raw(p, b"GET /metrics?x=1 HTTP/1.1\r\nHost: y\r\n\r\n")) == 200
    assert status(raw(p, b"GET /metrics HTTP/1.1\r\n" + b"X-Big: " + b"a" * 10000 + b"\r\n\r\n")) == 431
    assert status(raw(p, b"GET /metrics HTTP/1.1\r\n" + b"X: y\r\n" * 100 + b"\r\n")) == 431
    assert status(raw(p, b"\x00\xff" * 5000)) == 431
    rnd = random.Random(14)
    for i in range(200):
        junk = bytes(rnd.randrange(256) for _ in range(rnd.randrange(1, 600)))
        if i % 2:
            junk += b"\r\n\r\n"
        try:
            resp = raw(p, junk, timeout=10, shut=True)
        except OSError:
            continue
        assert resp == b"" or status(resp) in (400, 404, 405, 431), resp[:100]

    # slowloris: half a request, one byte at a time; many idle connections
    # beyond the cap; a reader that never reads a big answer
    slow = [raw(p, b"GET /metr", read=False) for _ in range(8)]
    idle = [socket.create_connection(("127.0.0.1", p)) for _ in range(40)]
    for s in idle:
        s.settimeout(10)
    stuck = [raw(p, b"GET /metrics HTTP/1.1\r\n\r\n", read=False) for _ in range(3)]
    for s in stuck:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
    subprocess.run([workload, "getppid", "777"], check=True)
    for _ in range(3):
        for s in slow:
            try:
                s.send(b"i")
            except OSError:
                pass
        time.sleep(1)
    # the slow and idle ones time out (5 s for a whole request): a scraper gets in
    for s in idle:
        try:
            s.recv(100)
        except OSError:
            pass
    deadline = time.monotonic() + 20
    while True:
        try:
            text = t.scrape(timeout=5)
            break
        except OSError:
            assert time.monotonic() < deadline, "no scrape got through"
            time.sleep(0.5)
    assert sample(text, "plyc_calls_total", comm="plyc-metrics") == 777
    for s in slow + idle + stuck:
        s.close()
    # several scrapers at once
    socks = [raw(p, b"GET /metrics HTTP/1.1\r\n\r\n", read=False) for _ in range(10)]
    for s in socks:
        data = b""
        while True:
            c = s.recv(65536)
            if not c:
                break
            data += c
        s.close()
        assert status(data) == 200 and b"plyc_calls_total" in data
    subprocess.run([workload, "getppid", "223"], check=True)
    assert sample(t.scrape(), "plyc_calls_total", comm="plyc-metrics") == 1000
    rc, out, err = t.stop()
    assert rc == 0, err
    assert "{ plyc-metrics    }: 1000\n" in out


# --- measured -----------------------------------------------------------

@pytest.mark.bpf
def test_scrape_of_10000_keys_is_under_50ms(tmp_path, workload, tracers):
    tracer = build(tmp_path, 'tracepoint:syscalls/sys_enter_getppid / comm == "plyc-metrics" /\n'
                             '{\n\t@[comm, time % 10000] = count();\n}\n', "--map-entries", "16384")
    t = Tracer(tracer)
    tracers.append(t)
    for _ in range(30):
        subprocess.run([workload, "getppid", "100000"], check=True)
        text = t.scrape()
        if text.count("plyc_at_total{") >= 10000:
            break
    assert text.count("plyc_at_total{") == 10000
    # a scraper that never reads its (475 kB) answer holds no one up
    stuck = raw(t.port, b"GET /metrics HTTP/1.1\r\n\r\n", read=False)
    stuck.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    times = []
    for _ in range(15):
        start = time.perf_counter()
        body = t.scrape()
        times.append(time.perf_counter() - start)
        assert body.count("plyc_at_total{") == 10000
    med = statistics.median(times)
    print(f"\nscrape of 10,000 keys: median {med * 1000:.1f} ms, min {min(times) * 1000:.1f} ms, "
          f"{len(body)} bytes")
    assert med < 0.050, times
    stuck.close()
    rc, out, err = t.stop()
    assert rc == 0, err
    assert out.count("{ plyc-metrics   ,") == 10000


@pytest.mark.bpf
def test_the_port_is_free_once_the_tracer_stops(tmp_path, tracers):
    # 30 tracepoints and 20 more: past 32 links they are detached by a
    # background child, which must not inherit the listener
    tracer = build(tmp_path, "tracepoint:syscalls/sys_enter_get* { @[comm] = count(); }\n"
                             "tracepoint:syscalls/sys_enter_set* { @[comm] = count(); }\n")
    t = Tracer(tracer)
    tracers.append(t)
    assert sample(t.scrape(), "plyc_probes_attached") >= 32
    rc, out, err = t.stop()
    assert rc == 0, err
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", t.port))
        s.listen()
