"""The fairseq plugin end to end, on a tiny model trained here on a task with a known alignment."""

import os
import subprocess
import sys

import pytest

pytest.importorskip("fairseq")

from align.formats import read_alignments  # noqa: E402
from align.links import Alignments  # noqa: E402
from eval.metrics import score_corpus  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
pytestmark = pytest.mark.fairseq


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    import tiny_model
    return tiny_model.build(str(tmp_path_factory.mktemp("tiny")))


def generate(tiny, *extra, plugin=True, check=True):
    # --user-dir always, for the plugin's safe checkpoint loader; plugin=False keeps fairseq's own task
    cmd = [sys.executable, "-m", "fairseq_cli.generate", tiny["data"], "--path", tiny["ckpt"],
           "--source-lang", "src", "--target-lang", "tgt", "--gen-subset", "test", "--print-alignment",
           "--user-dir", os.path.join(ROOT, "fairseq_plugins")]
    if plugin:
        cmd += ["--task", "translation_norm_align"]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": ROOT}
    r = subprocess.run(cmd + list(extra), capture_output=True, text=True, env=env, cwd=ROOT)
    if check and r.returncode != 0:
        raise AssertionError(r.stderr[-3000:])
    return r


def a_lines(out: str) -> dict[int, set]:
    res = {}
    for line in out.splitlines():
        if line.startswith("A-"):
            k, _, v = line.partition("\t")
            res[int(k[2:])] = set(v.split())
    return res


def test_every_sentence_and_known_alignment(tiny, tmp_path):
    # 50 test sentences: not a multiple of 8; the multiple is asked for explicitly too.
    dump = tmp_path / "dump"
    r = generate(tiny, "--score-reference", "--alignment-method", "norm", "--alignment-dump", str(dump),
                 "--batch-size", "16", "--required-batch-size-multiple", "8")
    assert len(a_lines(r.stdout)) == tiny["n_test"] == 50
    gold = read_alignments(tiny["gold"])
    aer = {}
    for name in os.listdir(dump):
        hyp = read_alignments(str(dump / name))
        assert len(hyp) == 50
        aer[name] = score_corpus(gold, hyp).aer
    # one file per (method, shift, layer) and per head of per-head methods: 3*2*2 + 2*2*2*4
    assert len(aer) == 44
    # the reversal alignment is recovered by AWO at the best layer, by weights and by norms
    for method in ("attn", "norm", "attn-res-ln"):
        assert min(aer[f"{method}-awo-layer{k}.align"] for k in (0, 1)) < 0.10, method
    # the A- lines are the last layer's norm AWO, the same as the dump's
    dumped = read_alignments(str(dump / "norm-awo-layer1.align"))
    lines = a_lines(r.stdout)
    assert all({f"{s}-{t}" for s, t in dumped.links(k)} == lines[k] for k in range(50))


def test_attn_equals_fairseqs_own_alignment(tiny):
    for mode in (["--score-reference"], ["--beam", "4"]):
        own = a_lines(generate(tiny, *mode, "--batch-size", "16", plugin=False).stdout)
        ours = a_lines(generate(tiny, *mode, "--batch-size", "16", "--alignment-method", "attn",
                                "--alignment-level", "subword").stdout)
        assert len(own) >= 40  # fairseq itself loses len % 8 sentences here
        assert all(own[k] == ours[k] for k in own)
        assert len(ours) == 50


def test_batch_size_and_padding_side_never_change_an_alignment(tiny, tmp_path):
    outs = []
    # fairseq turns a bool field that defaults to True into a store_false flag: --left-pad-source
    # alone switches sources to right padding.
    for name, flags in (("bs1", ["--batch-size", "1"]), ("bs64", ["--batch-size", "64"]),
                        ("right", ["--batch-size", "64", "--left-pad-source"])):
        d = tmp_path / name
        generate(tiny, "--score-reference", *flags, "--alignment-dump", str(d),
                 "--alignment-dump-methods", "norm,attn-res-ln,norm-head")
        outs.append({n: (d / n).read_text() for n in os.listdir(d)})
    assert outs[0] == outs[1] == outs[2] and len(outs[0]) == 2 * 2 * 2 + 2 * 2 * 4


def test_awi_reads_the_next_decoder_step(tiny):
    awo = a_lines(generate(tiny, "--score-reference", "--alignment-level", "subword", "--alignment-shift", "awo",
                           "--batch-size", "50").stdout)
    awi = a_lines(generate(tiny, "--score-reference", "--alignment-level", "subword", "--alignment-shift", "awi",
                           "--batch-size", "50").stdout)
    for k in awo:
        fo = {int(x.split("-")[1]): x.split("-")[0] for x in awo[k]}
        fi = {int(x.split("-")[1]): x.split("-")[0] for x in awi[k]}
        n = len(fo)
        # AWI's target token t is read at the step where AWO reads token t + 1
        assert all(fi[t] == fo[t + 1] for t in range(n - 1))


@pytest.mark.parametrize("flags,msg", [
    (["--alignment-method", "grad"], "valid: attn"),
    (["--alignment-layer", "7"], "layers 0..1"),
    (["--alignment-shift", "both"], "valid: awo, awi"),
    (["--alignment-heads", "9", "--alignment-method", "norm-head"], "heads 0..3"),
    (["--alignment-specials", "keep"], "valid: drop, null"),
    (["--alignment-level", "char"], "valid: word, subword, word-any"),
])
def test_bad_flags(tiny, flags, msg):
    r = generate(tiny, "--score-reference", *flags, check=False)
    assert r.returncode != 0 and msg in r.stderr


def test_python_api_matches_the_plugin(tiny, tmp_path):
    from fairseq_plugins.hub import NormAligner

    d = tmp_path / "dump"
    generate(tiny, "--score-reference", "--alignment-dump", str(d), "--alignment-dump-methods", "norm",
             "--alignment-dump-shifts", "awo,awi")
    aligner = NormAligner.from_checkpoint(tiny["ckpt"], data_dir=tiny["data"], source_lang="src", target_lang="tgt")
    raw = os.path.join(tiny["root"], "raw")
    src = open(os.path.join(raw, "test.src")).read().splitlines()
    tgt = open(os.path.join(raw, "test.tgt")).read().splitlines()
    out = aligner.align(src, tgt, methods=["norm"], shifts=["awo", "awi"], batch_size=7, progress=False)
    for (method, layer, shift), links in out.items():
        assert Alignments.from_lists(links) == read_alignments(str(d / f"{method}-{shift}-layer{layer}.align"))
    m = aligner.score_matrix(src[0], tgt[0], "norm", 1, "awo")
    assert m.shape == (4, 4)  # 4 target words, 4 source words
    with pytest.raises(ValueError, match="2 source sentences but 1 target"):
        aligner.align(src[:2], tgt[:1])


def test_detect_scheme():
    from fairseq.data import Dictionary

    from fairseq_plugins.engine import detect_scheme

    def make(symbols):
        d = Dictionary()
        for sym in symbols:
            d.add_symbol(sym)
        return d
    assert detect_scheme(make(["\u2581the", "\u2581ho", "use"])) == "sentencepiece"
    assert detect_scheme(make(["the", "ho@@", "use", "wa@@"])) == "subword-nmt"
    assert detect_scheme(make(["the", "house"] * 1 + [f"w{i}" for i in range(40)])) == "none"
