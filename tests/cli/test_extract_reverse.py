"""align-extract --reverse-model: both directions in one run (De->En with the shipped En->De), checked against
separate runs of each model and against align.links.combine on the Python API's score matrices."""

import json

import pytest

pytest.importorskip("fairseq")
pytestmark = pytest.mark.fairseq
from extract_helpers import DEEN, ENDE, PAIRS, lines, run  # noqa: E402

COMBOS = "grow-diag-final-and,intersect,hmean:threshold,gmean:itermax,mean:intersect"


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    d = tmp_path_factory.mktemp("both")
    (d / "p.txt").write_text("".join(f"{s} ||| {t}\n" for s, t in PAIRS), encoding="utf-8")
    (d / "turned.txt").write_text("".join(f"{t} ||| {s}\n" for s, t in PAIRS), encoding="utf-8")
    common = ["--methods", "norm,attn", "--layers", "0,2", "--batch-size", "2"]
    assert run("--model", DEEN, "--reverse-model", ENDE, "--input", str(d / "p.txt"), "--out", str(d / "o"),
               "--combine", COMBOS, *common) == 0  # fmt: skip
    assert run("--model", ENDE, "--input", str(d / "turned.txt"), "--out", str(d / "r"), *common) == 0
    return d


def test_reverse_files_are_the_reverse_model_turned_round(both):
    from align.links.combine import reverse_links

    for name in ("norm-awi-layer0", "attn-awi-layer2"):
        alone = lines(both / "r" / f"{name}.align")
        got = lines(both / "o" / f"{name}.reverse.align")
        assert got == [reverse_links(x) for x in alone] and len(got) == len(PAIRS)


def test_hard_combinations_are_atools_on_the_two_files(both):
    from align.links.symmetrize import SYMMETRIZERS

    for name in ("norm-awi-layer0", "norm-awi-layer2", "attn-awi-layer0"):
        fwd, rev = lines(both / "o" / f"{name}.align"), lines(both / "o" / f"{name}.reverse.align")
        for h in ("grow-diag-final-and", "intersect"):
            want = [SYMMETRIZERS[h](f, r) for f, r in zip(fwd, rev)]
            assert lines(both / "o" / f"{name}.{h}.align") == want


def test_soft_combinations_equal_the_api_matrices_combined(both):
    from align.links.combine import DEFAULT_THRESHOLD, combine
    from fairseq_plugins.hub import NormAligner

    fw, bw = NormAligner.from_checkpoint(DEEN), NormAligner.from_checkpoint(ENDE)
    for method, layer in (("norm", 0), ("attn", 2)):
        name = f"{method}-awi-layer{layer}"
        f = [fw.score_matrix(s, t, method, layer) for s, t in PAIRS]
        r = [bw.score_matrix(t, s, method, layer) for s, t in PAIRS]
        assert all(a.shape == b.shape[::-1] for a, b in zip(f, r))
        for c in ("hmean:threshold", "gmean:itermax", "mean:intersect"):
            want = [combine(c, a, b, DEFAULT_THRESHOLD) for a, b in zip(f, r)]
            assert lines(both / "o" / f"{name}.{c.replace(':', '-')}.align") == want, (name, c)
    # the one-word pair: every combination links the two words
    assert lines(both / "o" / "norm-awi-layer0.hmean-threshold.align")[3] == [(0, 0)]


def test_manifest_names_both_models_and_the_combinations(both):
    man = json.loads((both / "o" / "manifest.json").read_text())
    sig = man["signature"]
    assert len(sig["reverse_model"]["sha256"]) == 64 and sig["reverse_model"]["sha256"] != sig["model"]["sha256"]
    assert sig["settings"]["combine"] == {"combinations": COMBOS.split(","), "threshold": 0.2}
    assert man["reverse_model_path"] == ENDE
    # 2 methods x 2 layers: forward, reverse and 5 combinations each
    assert len([n for n in man["files"] if n.endswith(".align")]) == 4 * 7


def test_shards_merge_and_mixed_directions_never_do(both, tmp_path, capsys):
    from align.cli.merge import main as merge_main

    p = str(both / "p.txt")
    common = ["--model", DEEN, "--input", p, "--methods", "norm", "--layers", "0", "--out"]
    out = tmp_path / "s"
    for k in range(2):
        assert run(*common, str(out), "--reverse-model", ENDE, "--shard", f"{k}/2") == 0
    assert merge_main([str(out)]) == 0
    for n in ("norm-awi-layer0.reverse.align", "norm-awi-layer0.grow-diag-final-and.align"):
        assert (out / "merged" / n).read_bytes() == (both / "o" / n).read_bytes()
    mixed = tmp_path / "m"
    assert run(*common, str(mixed), "--reverse-model", ENDE, "--shard", "0/2") == 0
    assert run(*common, str(mixed), "--shard", "1/2") == 0
    capsys.readouterr()
    assert merge_main([str(mixed)]) == 1
    err = capsys.readouterr().err
    assert "made by another run" in err and "reverse_model" in err and not (mixed / "merged").exists()


def test_a_reverse_model_of_the_same_direction_is_refused(both, tmp_path, capsys):
    code = run("--model", DEEN, "--reverse-model", DEEN, "--input", str(both / "p.txt"), "--out", str(tmp_path / "x"))
    err = capsys.readouterr().err
    assert code == 1 and "translates de->en; expected en->de" in err and not (tmp_path / "x").exists()


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--combine", "intersect"], "--combine and --combine-threshold need --reverse-model"),
        (["--reverse-model", ENDE, "--combine", "hmean:grow"], "valid: threshold, intersect, itermax, argmax"),
        (["--reverse-model", ENDE, "--combine", "gdfa"], "valid: intersect, union, grow-diag"),
        (["--reverse-model", ENDE, "--level", "subword"], "needs --level word"),
        (["--reverse-model", ENDE, "--combine", "intersect", "--combine-threshold", "0.3"], "has none"),
        (["--reverse-model", ENDE, "--combine-threshold", "1.5"], "expected a value in [0, 1]"),
        (["--reverse-model", ENDE, "--layers", "5"], "layer 5 does not exist"),
    ],
)
def test_usage_errors(both, tmp_path, capsys, extra, message):
    code = run("--model", DEEN, "--input", str(both / "p.txt"), "--out", str(tmp_path / "x"), *extra)
    assert code == 2 and message in capsys.readouterr().err and not (tmp_path / "x").exists()


def test_reverse_model_needs_out(both, capsys):
    code = run("--model", DEEN, "--reverse-model", ENDE, "--input", str(both / "p.txt"))
    assert code == 2 and "needs --out" in capsys.readouterr().err


def test_truncation_combines_the_words_both_models_kept(tmp_path, capsys):
    """A pair longer than the models' positions: each model cuts its own side; combinations read the rest."""
    long_de, long_en = " ".join(["haus"] * 1100), " ".join(["house"] * 1050)
    (tmp_path / "p.txt").write_text(f"{long_de} ||| {long_en}\nja ||| yes\n", encoding="utf-8")
    args = ["--model", DEEN, "--reverse-model", ENDE, "--input", str(tmp_path / "p.txt"), "--methods", "norm"]
    assert run(*args, "--layers", "0", "--out", str(tmp_path / "o"), "--truncate") == 0
    got = lines(tmp_path / "o" / "norm-awi-layer0.gmean-threshold.align")
    assert len(got) == 2 and got[1] == [(0, 0)]
    hard = lines(tmp_path / "o" / "norm-awi-layer0.grow-diag-final-and.align")[0]  # a long row of one repeated
    assert hard and all(s < 1024 and t < 1024 for s, t in hard)  # word has no cell above the soft threshold
    assert "truncated" in capsys.readouterr().err


def test_float32_score_files_give_align_symmetrize_the_same_links(both, tmp_path):
    from align.cli.symmetrize import main as symmetrize

    out = tmp_path / "o"
    assert run("--model", DEEN, "--reverse-model", ENDE, "--input", str(both / "p.txt"), "--out", str(out),
               "--methods", "norm", "--layers", "0", "--save-scores", "--scores-precision", "float32") == 0  # fmt: skip
    fwd, rev = out / "norm-awi-layer0.scores.jsonl", out / "norm-awi-layer0.reverse.scores.jsonl"
    assert '"dtype": "float32"' in fwd.read_text() and '"dtype": "float32"' in rev.read_text()
    for combo in ("gmean:threshold", "grow-diag-final-and"):
        assert symmetrize(["-m", combo, str(fwd), str(rev), "-o", str(tmp_path / "s.align")]) == 0
        name = f"norm-awi-layer0.{combo.replace(':', '-')}.align"
        assert (tmp_path / "s.align").read_bytes() == (out / name).read_bytes(), combo
    man = json.loads((out / "manifest.json").read_text())
    assert man["signature"]["settings"]["save_scores"] == "float32"


# AER (%) on all 508 RWTH De-En sentences, measured with `align-extract --model data/models/deen --reverse-model
# data/models/ende -t rwth --methods alti --layers 0` and `align-eval -t rwth` (this session's figures; the held-out
# protocol's are in benchmarks/results/bidirectional_rwth.md).
RWTH = {
    "alti-awi-layer0.align": 29.26,
    "alti-awi-layer0.reverse.align": 30.60,
    "alti-awi-layer0.grow-diag-final-and.align": 25.44,
    "alti-awi-layer0.gmean-threshold.align": 20.96,
    # the blend of AWI layer 0 (alti) and AWO layer 2 (attn), each direction, then combined the same way
    "alti-awi-layer0+attn-awo-layer2.align": 28.41,
    "alti-awi-layer0+attn-awo-layer2.reverse.align": 27.88,
    "alti-awi-layer0+attn-awo-layer2.gmean-threshold.align": 18.58,
}


def test_rwth_figures_both_directions(shared, tmp_path, capsys):
    from align.gold import testsets
    from align.io.formats import read_alignments
    from eval.metrics import score_corpus

    out = tmp_path / "o"
    assert run("--model", DEEN, "--reverse-model", ENDE, "-t", "rwth", "--testsets-dir", str(shared / "gold"),
               "--methods", "alti", "--layers", "0", "--blend", "alti-awi-layer0+attn-awo-layer2",
               "--out", str(out)) == 0  # fmt: skip
    gold = testsets.load("rwth", folder=str(shared / "gold")).gold
    for name, want in RWTH.items():
        got = 100 * score_corpus(gold, read_alignments(str(out / name), "pharaoh")).aer
        assert got == pytest.approx(want, abs=0.01), name


def test_reverse_score_files_are_marked_and_read_the_right_way_round(both, tmp_path, capsys):
    from align.cli.symmetrize import main as symmetrize
    from align.io.softscores import iter_scores_meta
    from eval.view import main as view

    out = tmp_path / "o"
    assert run("--model", DEEN, "--reverse-model", ENDE, "--input", str(both / "p.txt"), "--out", str(out),
               "--methods", "norm", "--layers", "0", "--save-scores") == 0  # fmt: skip
    fwd, rev = out / "norm-awi-layer0.scores.jsonl", out / "norm-awi-layer0.reverse.scores.jsonl"
    f, r = list(iter_scores_meta(str(fwd))), list(iter_scores_meta(str(rev)))
    assert not any(m for _, m in f) and all(m for _, m in r)
    assert all(a.shape == b.shape[::-1] for (a, _), (b, _) in zip(f, r))
    # align-view shows the reverse model's matrices beside its (source-first) links: turned round
    page = tmp_path / "v.html"
    hyp = out / "norm-awi-layer0.reverse.align"
    assert view([str(both / "p.txt"), str(hyp), "--scores", f"norm-awi-layer0.reverse={rev}", "-o", str(page)]) == 0
    # the two files the wrong way round: one line naming the file and line
    capsys.readouterr()
    assert symmetrize(["-m", "gmean:threshold", str(rev), str(fwd)]) == 1
    err = capsys.readouterr().err
    assert "norm-awi-layer0.reverse.scores.jsonl:1" in err and "reverse model's matrix" in err
