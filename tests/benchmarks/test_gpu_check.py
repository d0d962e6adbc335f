"""benchmarks/gpu_check.py on the CPU (the GPU run needs a lent device): every row it promises is
written to its report, and links in float32 equal the reference."""

import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_gpu_check_runs_on_cpu_and_writes_its_report(tmp_path):
    out = tmp_path / "gpu.md"
    r = subprocess.run(
        [
            sys.executable,
            os.path.join(ROOT, "benchmarks", "gpu_check.py"),
            "--device",
            "cpu",
            "--limit",
            "4",
            "--bench-pairs",
            "8",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": ROOT},
        timeout=600,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    report = out.read_text()
    for row in (
        "engine cpu float32:",
        "engine cpu float16:",
        "engine cpu bfloat16:",
        "plugin cpu float32:",
        "## bench_extract on the device",
        "8 pairs in batches of 64, float16 on cpu",
    ):
        assert row in report
    # the same weights in the same precision on the same device: every link equal
    assert re.search(r"engine cpu float32: .* links equal to CPU float32: 100\.00%", report)
    assert re.search(r"plugin cpu float32: [\d.]+ s; links equal to the engine's: 100\.00%", report)
    assert sorted(os.listdir(tmp_path)) == [
        "gpu.md",
        "gpu_bench_extract_float16.json",
        "gpu_bench_extract_float32.json",
    ]
