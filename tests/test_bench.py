"""The benchmark harness still works: `bench/run.py --smoke` builds every
workload for plyc and the reference, runs each tool once on `count` and
writes the JSON the README's figures come from (~20 s). The benchmarks
themselves are `make bench`, never part of the tests."""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.bpf


def test_bench_smoke(tmp_path):
    # bpftrace is a peer of the benchmarks, not a dependency of the tests:
    # without it, the smoke run leaves it out rather than installing it.
    tools = ["plyc", "plyc-musl", "reference"] + (["bpftrace"] if shutil.which("bpftrace") else [])
    out = tmp_path / "smoke.json"
    proc = subprocess.run([sys.executable, "bench/run.py", "--smoke", "--tools", ",".join(tools),
                           "--out", str(out), "--build-dir", str(tmp_path / "build")],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = json.loads(out.read_text())
    assert set(res) >= {"meta", "workloads", "goals"}
    assert res["meta"]["tools"] == tools and res["meta"]["workloads"] == ["count"]
    for name in ("count", "quantize", "latency", "printf", "profile"):
        assert (tmp_path / "build" / "plyc" / name).exists()
        assert (tmp_path / "build" / "plyc-musl" / name).exists()
        assert (tmp_path / "build" / "reference" / name).exists()
    w = res["workloads"]["count"]
    assert set(w) >= {"what", "untraced_s", "metrics", "ratios", "sizes_by_target", "runs", "count_check"}
    for key in ("cost_ns", "slowdown", "attach_ms", "short_wall_ms", "rss_mb", "size_mb", "cpu_ms"):
        for tool in tools:
            s = w["metrics"][key][tool]
            assert s is not None and s["min"] <= s["median"] <= s["max"], (key, tool, s)
        assert set(w["ratios"][key]) == {"plyc/reference", "plyc/bpftrace"}
    for key in ("build_cold_s", "build_warm_s"):
        assert w["metrics"][key]["plyc"]["median"] > 0
    # Every tool counted every call of the load exactly.
    for tool in tools:
        assert all(counted == expected for counted, expected in w["count_check"][tool]), w["count_check"]
    assert "in-kernel cost per event" in proc.stdout
    # The musl tracer's size next to glibc's (x86_64 only in the smoke run).
    assert w["sizes_by_target"]["plyc-musl"]["x86_64"] < w["sizes_by_target"]["plyc"]["x86_64"]
