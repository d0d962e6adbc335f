"""benchmarks/bench_view.py: the repeated Hansards corpus and the page it builds (the browser part is
in test_view_browser.py)."""

import os
import sys

sys.path.insert(
    0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "benchmarks")
)

from bench_view import build, make_corpus  # noqa: E402

from align.io.lines import read_lines  # noqa: E402
from eval.cli import main as eval_main  # noqa: E402


def test_corpus_repeats_the_gold_and_hypotheses_get_worse(tmp_path, capsys):
    paths = make_corpus(str(tmp_path), 500)
    text, gold = read_lines(paths["text"]), read_lines(paths["gold"])
    assert len(text) == len(gold) == 500 and text[447:] == text[:53] and gold[447] == gold[0]
    assert eval_main([paths["gold"], paths["moved10"], paths["moved25"], paths["moved40"], "--format", "json"]) == 0
    import json

    aer = [r["aer"] for r in json.loads(capsys.readouterr().out)]
    assert aer[0] < aer[1] < aer[2]
    assert len(read_lines(paths["scores"])) == 500
    size, seconds = build(paths, str(tmp_path / "v.html"), scores=True)
    assert size == os.path.getsize(tmp_path / "v.html") and seconds > 0
    assert capsys.readouterr().out == ""  # align-view's summary line is kept out of the benchmark's output
