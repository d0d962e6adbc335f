"""Committed results hold no machine paths: a path in a results file is relative to the repository."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MACHINE_PATH = re.compile(r"(?<![\w.])/(?:work|root|home|tmp|Users|private|var/folders|scratch|mnt)/")


def test_no_results_file_names_a_machine_path():
    bad = []
    for path in sorted((ROOT / "benchmarks" / "results").rglob("*")):
        if path.is_file() and path.suffix in (".txt", ".md", ".json", ".tsv", ".csv"):
            for n, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
                if MACHINE_PATH.search(line):
                    bad.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()[:120]}")
    assert not bad, "\n".join(bad)
