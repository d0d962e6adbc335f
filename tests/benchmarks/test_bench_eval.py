"""The scoring benchmark's baseline (aer.py's algorithm, re-implemented) agrees with align-eval."""

import json
import os
import sys

import pytest

sys.path.insert(
    0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "benchmarks")
)

from bench_eval import aer_py_equivalent, generate, measure, same_aer  # noqa: E402
from conftest import write  # noqa: E402

from eval.cli import main  # noqa: E402


def test_equivalent_by_hand(tmp_path):
    # gold talp 1-based: S = {00}, P = {00, 11}; hyp {00, 11, 22}: |A|=3 |S|=1 |A&S|=1 |A&P|=2
    # AER = 1 - 3/4 = 0.25, precision 2/3, recall 1
    g, h = write(tmp_path, "g", "1-1 2p2\n"), write(tmp_path, "h", "0-0 1-1 2-2\n")
    r = aer_py_equivalent(g, h)
    assert (r["links"], r["sure"], r["matched_sure"], r["matched_possible"]) == (3, 1, 1, 2)
    assert r["aer"] == pytest.approx(0.25) and r["precision"] == pytest.approx(2 / 3) and r["recall"] == 1
    assert aer_py_equivalent(g, write(tmp_path, "r", "0-0 1-1 2-2\n"), reverse_hyp=True)["matched_possible"] == 2


def test_generated_corpus_same_counts_as_align_eval(tmp_path, capsys):
    g, h = str(tmp_path / "g.talp"), str(tmp_path / "h.align")
    assert generate(g, h, 300) > 300 * 9
    assert main([g, h, "--format", "json"]) == 0
    ours = json.loads(capsys.readouterr().out)[0]
    ours["aer"] /= 100
    theirs = aer_py_equivalent(g, h)
    assert same_aer(ours, theirs)
    assert not same_aer(ours, {**theirs, "matched_sure": theirs["matched_sure"] - 1})


def test_measure_reports_the_child_peak():
    r = measure([sys.executable, "-c", "x = bytearray(200 * 2**20); print(len(x))"])
    assert r["stdout"].strip() == str(200 * 2**20) and r["peak_mb"] >= 200
    with pytest.raises(RuntimeError, match="exited 3"):
        measure([sys.executable, "-c", "import sys; sys.exit(3)"])
