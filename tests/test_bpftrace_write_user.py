"""write_user() run on this machine (marker bpf). Its write is checked in
Debian's kernels under qemu (tests/vm/cases/bt-write-user.test): this
machine's kernel is locked down (integrity mode, CONFIG_LOCK_DOWN_KERNEL_FORCE_INTEGRITY),
which takes bpf_probe_write_user away from every program; here the tracer
must say so, and where the kernel is not locked down, write."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

SCRIPT = """uprobe:{workload}:plyc_probe
{{
	$s = "HEL";
	@head = write_user(arg0, $s, 3);
	@tail = write_user(arg0 + 3, "LO", arg1 - 3);
}}
"""


@pytest.mark.bpf
def test_write_user_rewrites_the_buffer_or_says_why(tmp_path, workload):
    script = tmp_path / "wu.bt"
    script.write_text(SCRIPT.format(workload=workload))
    tracer = tmp_path / "wu"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    subprocess.run([sys.executable, "-m", "plyc", "build", "--unsafe", str(script), "-o", str(tracer)],
                   check=True, env=env, timeout=300)
    proc = subprocess.run([str(tracer), "-c", f"{workload} rewrite hello"], capture_output=True, text=True,
                          timeout=60)
    if proc.returncode == 0:
        assert proc.stdout == "HELLO\n\n\n@head: true\n@tail: true\n", proc.stdout
    else:
        # the verifier's "cannot use helper bpf_probe_write_user#36", put in words
        assert ("note: this kernel has no BPF helper bpf_probe_write_user for this kind of probe "
                "(it came in Linux 4.8, for root, in a kernel not locked down (kernel_lockdown(7): "
                "integrity or confidentiality mode takes it away))") in proc.stderr, proc.stderr
