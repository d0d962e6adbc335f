"""benchmarks/bidirectional.py under the test-halves protocol: each half's figures, tests per half, the report."""

import os
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="module")
def bi():
    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    import bidirectional

    return bidirectional


def counts(hyp, sure, hyp_sure, hyp_possible):
    from eval.metrics import SentenceCounts

    return SentenceCounts(*(np.array(x, dtype=np.int32) for x in (hyp, sure, hyp_sure, hyp_possible)))


def test_each_half_is_scored_alone(bi):
    # 4 sentences, 0-based 0 and 2 the odd-numbered (seen once), 1 and 3 the even-numbered (never seen).
    # Odd-numbered: |A| 2+2, |S| 2+2, |A&S| 2+2, |A&P| 2+2 -> AER 0. Even-numbered: |A| 2+2, |S| 2+2, |A&S| 1+0,
    # |A&P| 1+0 -> AER 1 - (1 + 1) / (4 + 4) = 0.75. Pooled: 1 - (5 + 5) / (8 + 8) = 0.375.
    c = counts([2, 2, 2, 2], [2, 2, 2, 2], [2, 1, 2, 0], [2, 1, 2, 0])
    s = bi.summary({"pooled": c, "folds": []}, 3, 50)
    assert s["aer"] == pytest.approx(37.5)
    assert [h["aer"] for h in s["halves"]] == pytest.approx([0.0, 75.0])
    assert [h["sentences"] for h in s["halves"]] == [2, 2]


def test_paired_tests_run_on_the_whole_set_and_each_half(bi):
    rng = np.random.default_rng(0)
    n = 40
    sure = rng.integers(3, 6, n)
    ours = counts(sure, sure, sure, sure)  # every link right
    base = counts(sure, sure, sure - 1, sure - 1)  # one wrong link a sentence
    tests = bi.paired_tests({"soft": {"_pooled": ours}}, {"eflomal": base}, 200)
    assert [t["half"] for t in tests] == [None, 0, 1]
    for t in tests:
        assert t["delta"] < 0 and t["p_one_sided"] < 0.05
    # the baseline's AER per half from its own half: sentence counts differ, so the halves' AERs do too
    aer = [1 - 2 * (sure[i::2] - 1).sum() / (2 * sure[i::2].sum()) for i in (0, 1)]
    assert [t["baseline_aer"] for t in tests[1:]] == pytest.approx([100 * a for a in aer])


def test_the_halves_report_names_the_protocol_and_both_halves(bi):
    c = counts([2, 2, 2, 2], [2, 2, 2, 2], [2, 1, 2, 0], [2, 1, 2, 0])
    fam = bi.summary({"pooled": c, "folds": [{"chosen": "a"}, {"chosen": "b"}]}, 3, 20)
    fam.pop("_pooled")
    meta = {"test_set": "hansards", "sentences": 4, "forward": "f", "reverse": "r", "methods": ["norm"],
            "shifts": ["awi"], "blends": [], "seconds": 1, "seconds_scoring": 1, "command": "c",
            "protocol": "halves", "protocol_text": bi.PROTOCOL_TEXT["halves"], "eflomal": "eflomal_enfr_x1"}  # fmt: skip
    md = bi.markdown({"meta": meta, "held_out": {"soft": fam}, "held_out_8bit": {}, "tests": [], "published": []})
    assert "seen once (odd-numbered): AER" in md and "eflomal_enfr_x1" in md
    assert "| soft | 0.0 (" in md and "| 75.0 (" in md and "| 37.5 | 3 | `a` / `b` |" in md


def test_a_checkpoint_vocabulary_missing_a_dictionary_is_named(bi, tmp_path):
    # --forward-vocab work/NAME: spm.model there, the dictionaries in bin/ (make_models.sh); de is not there
    (tmp_path / "bin").mkdir()
    (tmp_path / "spm.model").write_text("")
    (tmp_path / "bin" / "dict.en.txt").write_text("")
    with pytest.raises(SystemExit, match=r"no dict\.de\.txt in it or in its bin/"):
        bi.load_model(str(tmp_path / "checkpoints" / "checkpoint_last.pt"), str(tmp_path), ("de", "en"))


def test_the_halves_protocol_refuses_models_that_saw_the_test_sentences(bi, tmp_path):
    # models whose record says x20 (not the shipped ones: those will be of the protocol); refused before the gold
    # is read or a model loaded
    import json

    for name in ("fwd", "rev"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "model_config.json").write_text(json.dumps({"training_text": {"test_repeat": 20}}))
    args = ["-t", "hansards", "--forward", str(tmp_path / "fwd"), "--reverse", str(tmp_path / "rev"), "--out", str(tmp_path)]  # fmt: skip
    with pytest.raises(SystemExit, match="needs models of the test-halves protocol"):
        bi.main([*args, "--protocol", "halves"])
    (tmp_path / "rev" / "model_config.json").write_text(json.dumps({"training_text": {"test_halves": {"seen_once": 1}}}))  # fmt: skip
    with pytest.raises(SystemExit, match="different test-sentence protocols"):
        bi.main(args)  # --protocol auto: the two models must agree
