"""eval.scoring, the library under align-eval: EvalOptions in, one dict per hypothesis out, the signature."""

import pytest
from conftest import write

from eval.scoring import EvalOptions, evaluate, signature


def test_options_score_files_without_a_command_line(tmp_path):
    # gold (talp, 1-based): sentence 1 sure 0-0, possible 1-1; hypothesis (pharaoh, 0-based): 0-0 1-1 0-1.
    # |A|=3, |S|=1, |A&S|=1, |A&P|=2: AER = 1 - (1 + 2) / (3 + 1) = 25.0; precision 2/3, recall 1/1
    g = write(tmp_path, "g.talp", "1-1 2p2\n")
    h = write(tmp_path, "h.align", "0-0 1-1 0-1\n")
    (r,) = evaluate(EvalOptions(gold=g, hyps=(h,)))
    assert r["aer"] == pytest.approx(25.0) and r["precision"] == pytest.approx(200 / 3) and r["recall"] == 100.0
    assert r["signature"] == signature(EvalOptions())
    assert r["signature"].startswith("fmt:talp|base:1|hypfmt:pharaoh|hypbase:0|rev:no|allsure:no|version:")


def test_options_take_parsed_flags_and_changes():
    import argparse

    flags = argparse.Namespace(hyp_format="talp", hyps=["a", "b"], bootstrap=100, unrelated=1)
    opts = EvalOptions.of(flags, bootstrap=0)
    assert opts.hyp_format == "talp" and opts.hyps == ("a", "b") and opts.bootstrap == 0 and opts.seed == 12345


def test_no_gold_is_an_error_not_a_crash(tmp_path):
    h = write(tmp_path, "h.align", "0-0\n")
    with pytest.raises(ValueError, match="no gold"):
        evaluate(EvalOptions(hyps=(h,)))
