"""hardware:EVENT on this machine: run for real where it has a PMU, and
where it has none (most VMs) told as that, naming the event, exit 1."""
import subprocess
import sys
from pathlib import Path

import pytest

import builds  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
PMU = Path("/sys/bus/event_source/devices/cpu").exists()

pytestmark = pytest.mark.bpf


def build(tmp_path, script: str) -> Path:
    (tmp_path / "t.ply").write_text(script)
    proc = builds.run([sys.executable, "-m", "plyc", "build", tmp_path / "t.ply", "-o", tmp_path / "t"],
                          cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return tmp_path / "t"


def test_hardware_event(tmp_path):
    tracer = build(tmp_path, "hardware:instructions:1000000 { @ = count(); }\n")
    proc = subprocess.run([tracer, "-c", "true"], capture_output=True, text=True, timeout=60)
    if PMU:
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.startswith("\n@: ")
    else:
        assert (proc.returncode, proc.stdout) == (1, "")
        assert proc.stderr == ("t.ply:1: error: hardware:instructions:1000000: this device has no hardware "
                               "counter for instructions (no PMU, or one without this event: a virtual "
                               "machine often has none)\n")


def test_generated_data(tmp_path):
    """The probe table's provider data: bpftrace's default count, by alias."""
    keep = tmp_path / "gen"
    (tmp_path / "t.ply").write_text("s:cs { @ = count(); }\n")
    proc = builds.run([sys.executable, "-m", "plyc", "build", tmp_path / "t.ply", "-o", tmp_path / "t",
                           "--keep", keep], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    loader = (keep / "t.c").read_text()
    assert """static const struct plyc_perfevent_data software_cs_data = {
	.event = "context-switches",
	.type = PERF_TYPE_SOFTWARE,
	.config = PERF_COUNT_SW_CONTEXT_SWITCHES,
	.period = 1000ULL,
};""" in loader
    assert "\t\t.provider = &plyc_provider_software,\n\t\t.data = &software_cs_data,\n" in loader
