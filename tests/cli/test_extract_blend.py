"""align-extract --blend: a blend's files are its settings' row shares averaged, decoded, turned round and combined
like a setting's; what it needs is computed even when --methods/--layers omit it; bad blends are usage errors."""

import json

import numpy as np
import pytest

pytest.importorskip("fairseq")
pytestmark = pytest.mark.fairseq
from extract_helpers import DEEN, ENDE, PAIRS, lines, run  # noqa: E402

BLEND = "alti-awi-layer0+attn-awo-layer2"


def matrices(path):
    from align.io.softscores import read_scores

    return [np.asarray(m, dtype=np.float64) for m in read_scores(str(path))]


@pytest.fixture(scope="module")
def out(tmp_path_factory):
    d = tmp_path_factory.mktemp("blend")
    (d / "p.txt").write_text("".join(f"{s} ||| {t}\n" for s, t in PAIRS), encoding="utf-8")
    assert run("--model", DEEN, "--reverse-model", ENDE, "--input", str(d / "p.txt"), "--out", str(d / "o"),
               "--methods", "alti,attn", "--layers", "0,2", "--shifts", "awi,awo", "--blend", BLEND,
               "--combine", "mean:intersect,intersect", "--save-scores", "--scores-precision", "float32") == 0  # fmt: skip
    return d


def test_blend_is_the_mean_of_its_settings_row_shares(out):
    from align.links.blend import blend_scores
    from align.links.decode import decode_argmax

    o = out / "o"
    for suffix in ("", ".reverse"):
        a, b = (
            matrices(o / f"alti-awi-layer0{suffix}.scores.jsonl"),
            matrices(o / f"attn-awo-layer2{suffix}.scores.jsonl"),
        )
        got = matrices(o / f"{BLEND}{suffix}.scores.jsonl")
        assert len(got) == len(PAIRS)
        for x, y, g in zip(a, b, got):
            np.testing.assert_allclose(g, blend_scores([x, y]), atol=1e-6)  # float32 files
    fwd = matrices(o / f"{BLEND}.scores.jsonl")
    assert lines(o / f"{BLEND}.align") == [decode_argmax(m) for m in fwd]


def test_blend_is_reversed_and_combined_like_a_setting(out):
    from align.links.combine import combine, combine_links, reverse_decode

    o = out / "o"
    fwd, rev = matrices(o / f"{BLEND}.scores.jsonl"), matrices(o / f"{BLEND}.reverse.scores.jsonl")
    assert lines(o / f"{BLEND}.reverse.align") == [reverse_decode(r) for r in rev]
    assert lines(o / f"{BLEND}.mean-intersect.align") == [combine("mean:intersect", f, r) for f, r in zip(fwd, rev)]
    want = [
        combine_links("intersect", a, b)
        for a, b in zip(lines(o / f"{BLEND}.align"), lines(o / f"{BLEND}.reverse.align"))
    ]
    assert lines(o / f"{BLEND}.intersect.align") == want
    assert lines(o / f"{BLEND}.mean-intersect.align")[3] == [(0, 0)]  # ja ||| yes


def test_signature_and_summary_name_the_blend(out, tmp_path, capsys):
    sig = json.loads((out / "o" / "manifest.json").read_text())["signature"]
    assert sig["settings"]["blends"] == [BLEND]
    assert run("--model", DEEN, "--input", str(out / "p.txt"), "--out", str(tmp_path / "n"), "--methods", "norm",
               "--layers", "1", "--format", "json") == 0  # fmt: skip
    summary = json.loads(capsys.readouterr().out)
    assert "blends" not in summary["signature"]["settings"] and summary["blends"] == []  # old signatures unchanged


def test_what_a_blend_needs_is_computed_without_being_asked(out, tmp_path):
    # only norm layer 1 awi asked: the blend's alti layer 0 and attn layer 2 AWO are computed for it, not written
    assert run("--model", DEEN, "--reverse-model", ENDE, "--input", str(out / "p.txt"), "--out", str(tmp_path / "o"),
               "--methods", "norm", "--layers", "1", "--blend", BLEND, "--combine", "mean:intersect") == 0  # fmt: skip
    names = sorted(p.name for p in (tmp_path / "o").iterdir())
    assert names == sorted(
        ["manifest.json"]
        + [f"{n}{s}.align" for n in ("norm-awi-layer1", BLEND) for s in ("", ".reverse", ".mean-intersect")]
    )
    for s in ("", ".reverse", ".mean-intersect"):
        assert lines(tmp_path / "o" / f"{BLEND}{s}.align") == lines(out / "o" / f"{BLEND}{s}.align")


def test_python_api_has_the_blend():
    from align.links.blend import blend_scores
    from fairseq_plugins.hub import NormAligner

    al = NormAligner.from_checkpoint(DEEN)
    spec = al.spec(["norm"], [1], ["awi"], blends=[BLEND])
    assert al.output_names(spec) == ["norm-awi-layer1.align", BLEND + ".align"]
    full = al.spec(["alti", "attn"], [0, 2], ["awi", "awo"])
    for _, se, te, sc in al.score_items([("s1", *PAIRS[0])], spec):
        got, asked = al.word_scores(se, te, sc, spec)[BLEND + ".align"], sc
    for _, se, te, sc in al.score_items([("s1", *PAIRS[0])], full):
        w = al.word_scores(se, te, sc, full)
    np.testing.assert_allclose(got, blend_scores([w["alti-awi-layer0.align"], w["attn-awo-layer2.align"]]))
    # only the cells asked for and the blend's are computed, not every method at every layer
    assert set(asked) == {("norm", 1), ("alti", 0), ("attn", 2)}


def test_a_rollout_in_a_blend_still_carries_its_state_from_layer_0():
    from fairseq_plugins.hub import NormAligner

    al = NormAligner.from_checkpoint(DEEN)
    spec = al.spec(["norm"], [0], ["awi"], blends=["alti-rollout-awi-layer2+norm-awo-layer0"])
    full = al.spec(["alti-rollout"], [0, 1, 2], ["awi"])
    items = [(f"s{k}", s, t) for k, (s, t) in enumerate(PAIRS)]
    for (_, _, _, sc), (_, _, _, scf) in zip(al.score_items(items, spec), al.score_items(items, full)):
        assert set(sc) == {("norm", 0), ("alti-rollout", 2)}
        np.testing.assert_allclose(sc[("alti-rollout", 2)], scf[("alti-rollout", 2)], rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--blend", "alti-awi-layer0"], "two or more different settings"),
        (
            ["--blend", "alti-awi-layer0+attn-awo-layer7"],
            "blend 'alti-awi-layer0+attn-awo-layer7': layer 7 does not exist",
        ),
        (
            ["--blend", "alti-awi-layer0+nope-awo-layer1"],
            "blend 'alti-awi-layer0+nope-awo-layer1': unknown method nope; valid:",
        ),
        (
            ["--blend", f"{BLEND},attn-awo-layer2+alti-awi-layer0"],
            "blend 'attn-awo-layer2+alti-awi-layer0' given twice (as 'alti-awi-layer0+attn-awo-layer2' too",
        ),
        (["--blend", BLEND, "--level", "subword"], "blends average word scores: they need --level word"),
        (["--blend", BLEND, "--specials", "null"], "they need --level word and --specials drop"),
    ],
)
def test_usage_errors(out, tmp_path, capsys, extra, message):
    code = run("--model", DEEN, "--input", str(out / "p.txt"), "--out", str(tmp_path / "o"), *extra)
    assert code == 2 and message in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_blend_errors_come_before_the_model_loads(out, tmp_path, capsys):
    # a model path that does not exist: the blend's error is what the user sees, so nothing was loaded first
    no_model = str(tmp_path / "no-model")
    for extra, message in (
        (["--out", str(tmp_path / "o"), "--blend", "alti-awi-layer0"], "two or more different settings"),
        (["--methods", "norm", "--layers", "1", "--blend", BLEND], "--blend needs --out"),
    ):
        code = run("--model", no_model, "--input", str(out / "p.txt"), *extra)
        assert code == 2 and message in capsys.readouterr().err


def test_a_blend_too_long_for_a_file_name_is_refused(out, tmp_path, capsys):
    settings = [f"{m}-{s}-layer{la}" for m in ("value-zeroing", "attn-res-ln") for s in ("awi", "awo") for la in (0, 1)]
    code = run("--model", DEEN, "--reverse-model", ENDE, "--input", str(out / "p.txt"), "--out", str(tmp_path / "o"),
               "--blend", "+".join(settings), "--save-scores", "--combine", "gmean:threshold")  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and "characters; at most 200 fit (blend fewer settings)" in err
    assert "layer1.gmean-threshold.align' of 213 characters" in err and not (tmp_path / "o").exists()


def test_python_api_refuses_blends_where_it_cannot_return_them():
    from fairseq_plugins.hub import NormAligner

    al = NormAligner.from_checkpoint(DEEN)
    with pytest.raises(TypeError, match=r"align\(\) gives settings only"):
        al.align([PAIRS[0][0]], [PAIRS[0][1]], methods=["norm"], blends=[BLEND])
    with pytest.raises(TypeError, match="expected a list of blend names"):
        al.spec(["norm"], [0], ["awi"], blends=BLEND)
