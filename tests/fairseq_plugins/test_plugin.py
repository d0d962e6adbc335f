"""The fairseq plugin end to end, on a tiny model trained here on a task with a known alignment."""

import os
import subprocess
import sys

import pytest

pytest.importorskip("fairseq")

from align.io.formats import read_alignments  # noqa: E402
from align.links.alignments import Alignments  # noqa: E402
from eval.metrics import score_corpus  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
pytestmark = pytest.mark.fairseq


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    import tiny_model

    return tiny_model.build(str(tmp_path_factory.mktemp("tiny")))


def generate(tiny, *extra, plugin=True, check=True):
    # --user-dir always, for the plugin's safe checkpoint loader; plugin=False keeps fairseq's own task
    cmd = [
        sys.executable,
        "-m",
        "fairseq_cli.generate",
        tiny["data"],
        "--path",
        tiny["ckpt"],
        "--source-lang",
        "src",
        "--target-lang",
        "tgt",
        "--gen-subset",
        "test",
        "--print-alignment",
        "--user-dir",
        os.path.join(ROOT, "fairseq_plugins"),
    ]
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
    r = generate(
        tiny,
        "--score-reference",
        "--alignment-method",
        "norm",
        "--alignment-dump",
        str(dump),
        "--batch-size",
        "16",
        "--required-batch-size-multiple",
        "8",
    )
    assert len(a_lines(r.stdout)) == tiny["n_test"] == 50
    gold = read_alignments(tiny["gold"])
    aer = {}
    assert (dump / "manifest.json").exists()
    for name in [n for n in os.listdir(dump) if n.endswith(".align")]:
        hyp = read_alignments(str(dump / name))
        assert len(hyp) == 50
        aer[name] = score_corpus(gold, hyp).aer
    # one file per (method, shift, layer) and per head of per-head methods: 3*2*2 + 2*2*2*4
    assert len(aer) == 44
    # the reversal alignment is recovered by AWO at the best layer, by weights and by norms
    for method in ("attn", "norm", "attn-res-ln"):
        assert min(aer[f"{method}-awo-layer{k}.align"] for k in (0, 1)) < 0.10, method
    # word-level AWI reads each target word at the step where it is the input, which on the reversal
    # task points at the next word's source: far from the gold, at the recorded figures (AER as a
    # fraction; AWO above is near 0, so a swapped shift fails here)
    assert aer["attn-awi-layer1.align"] == pytest.approx(0.68, abs=0.03)
    assert aer["norm-awi-layer1.align"] == pytest.approx(0.73, abs=0.03)
    awi = read_alignments(str(dump / "norm-awi-layer1.align"))
    n_tgt = [len(line.split()) for line in open(tiny["gold"])]  # one gold link per target word
    assert all(sorted(t for _, t in awi.links(k)) == list(range(n_tgt[k])) for k in range(50))
    # the A- lines are the last layer's norm AWO, the same as the dump's
    dumped = read_alignments(str(dump / "norm-awo-layer1.align"))
    lines = a_lines(r.stdout)
    assert all({f"{s}-{t}" for s, t in dumped.links(k)} == lines[k] for k in range(50))


def test_attn_equals_fairseqs_own_alignment(tiny):
    for mode in (["--score-reference"], ["--beam", "4"]):
        own = a_lines(generate(tiny, *mode, "--batch-size", "16", plugin=False).stdout)
        ours = a_lines(
            generate(
                tiny, *mode, "--batch-size", "16", "--alignment-method", "attn", "--alignment-level", "subword"
            ).stdout
        )
        assert len(own) >= 40  # fairseq itself loses len % 8 sentences here
        assert all(own[k] == ours[k] for k in own)
        assert len(ours) == 50


def test_batch_size_and_padding_side_never_change_an_alignment(tiny, tmp_path):
    outs = []
    # fairseq turns a bool field that defaults to True into a store_false flag: --left-pad-source
    # alone switches sources to right padding.
    for name, flags in (
        ("bs1", ["--batch-size", "1"]),
        ("bs64", ["--batch-size", "64"]),
        ("right", ["--batch-size", "64", "--left-pad-source"]),
    ):
        d = tmp_path / name
        generate(
            tiny,
            "--score-reference",
            *flags,
            "--alignment-dump",
            str(d),
            "--alignment-dump-methods",
            "norm,attn-res-ln,norm-head",
        )
        outs.append({n: (d / n).read_text() for n in os.listdir(d) if n.endswith(".align")})
    assert outs[0] == outs[1] == outs[2] and len(outs[0]) == 2 * 2 * 2 + 2 * 2 * 4


def test_awi_reads_the_next_decoder_step(tiny):
    awo = a_lines(
        generate(
            tiny, "--score-reference", "--alignment-level", "subword", "--alignment-shift", "awo", "--batch-size", "50"
        ).stdout
    )
    awi = a_lines(
        generate(
            tiny, "--score-reference", "--alignment-level", "subword", "--alignment-shift", "awi", "--batch-size", "50"
        ).stdout
    )
    for k in awo:
        fo = {int(x.split("-")[1]): x.split("-")[0] for x in awo[k]}
        fi = {int(x.split("-")[1]): x.split("-")[0] for x in awi[k]}
        n = len(fo)
        # AWI's target token t is read at the step where AWO reads token t + 1
        assert all(fi[t] == fo[t + 1] for t in range(n - 1))


@pytest.mark.parametrize(
    "flags,msg",
    [
        (["--alignment-method", "grad"], "valid: attn"),
        (["--alignment-layer", "7"], "layers 0..1"),
        (["--alignment-shift", "both"], "valid: awo, awi"),
        (["--alignment-heads", "9", "--alignment-method", "norm-head"], "heads 0..3"),
        (["--alignment-specials", "keep"], "valid: drop, null"),
        (["--alignment-level", "char"], "valid: word, subword, word-any"),
    ],
)
def test_bad_flags(tiny, flags, msg):
    r = generate(tiny, "--score-reference", *flags, check=False)
    assert r.returncode != 0 and msg in r.stderr


def test_python_api_matches_the_plugin(tiny, tmp_path):
    from fairseq_plugins.hub import NormAligner

    d = tmp_path / "dump"
    generate(
        tiny,
        "--score-reference",
        "--alignment-dump",
        str(d),
        "--alignment-dump-methods",
        "norm",
        "--alignment-dump-shifts",
        "awo,awi",
    )
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


def _dump(d) -> dict[str, bytes]:
    return {n: (d / n).read_bytes() for n in sorted(os.listdir(d)) if n.endswith(".align")}


def test_sharded_dump_merges_to_the_unsharded_one(tiny, tmp_path):
    from align.extraction.shards import ShardError, merge

    flags = ["--score-reference", "--batch-size", "8", "--alignment-dump-methods", "norm,attn-head"]
    whole = tmp_path / "whole"
    generate(tiny, *flags, "--alignment-dump", str(whole))
    sharded = tmp_path / "sharded"
    for k in range(3):
        r = generate(
            tiny,
            *flags,
            "--alignment-dump",
            str(sharded),
            "--distributed-world-size",
            "3",
            "--distributed-rank",
            str(k),
        )
        assert len(a_lines(r.stdout)) < 50  # each rank aligns only its part
        assert (sharded / f"shard-{k}-of-3" / "manifest.json").exists()
    assert _dump(sharded) == {}  # nothing at the top level before the merge
    r = subprocess.run(
        [sys.executable, "-m", "align.cli.merge", str(sharded)], capture_output=True, text=True, cwd=ROOT
    )
    assert r.returncode == 0, r.stderr
    assert _dump(sharded / "merged") == _dump(whole) and len(_dump(whole)) == 2 * 2 * (1 + 4)
    # a missing shard fails and writes nothing
    broken = tmp_path / "broken"
    broken.mkdir()
    for k in (0, 2):
        os.rename(sharded / f"shard-{k}-of-3", broken / f"shard-{k}-of-3")
    with pytest.raises(ShardError, match="shard\\(s\\) 1 of 3 missing"):
        merge(str(broken))
    assert not (broken / "merged").exists()


@pytest.mark.parametrize(
    "flags,msg",
    [
        (["--alignment-subwords", "bogus"], "--alignment-subwords 'bogus' is unknown"),
        (["--alignment-heads", "0,x", "--alignment-method", "norm-head"], "--alignment-heads '0,x': expected"),
        (["--alignment-heads", "0,2", "--alignment-method", "norm"], "--alignment-heads applies to per-head methods"),
        (["--alignment-threshold", "0.2"], "--alignment-threshold applies to the decoders"),
        (["--alignment-dump-methods", "norm,bogus"], "--alignment-dump-methods 'bogus'"),
        (["--alignment-method", "learned"], "use align-extract --methods learned"),
    ],
)
def test_flags_checked_before_any_work(tiny, flags, msg):
    # today's failures came mid-run ("sentence 17") or as a bare int() error, or not at all
    r = generate(tiny, "--score-reference", *flags, check=False)
    assert r.returncode != 0 and msg in r.stderr, r.stderr[-2000:]
    assert "S-" not in r.stdout  # no sentence was processed


def test_heads_apply_to_per_head_methods(tiny):
    base = a_lines(
        generate(
            tiny, "--score-reference", "--alignment-method", "norm-head", "--alignment-layer", "0", "--batch-size", "50"
        ).stdout
    )
    two = a_lines(
        generate(
            tiny,
            "--score-reference",
            "--alignment-method",
            "norm-head",
            "--alignment-layer",
            "0",
            "--alignment-heads",
            "0,2",
            "--batch-size",
            "50",
        ).stdout
    )
    assert base != two  # the chosen heads change the averaged scores


def test_threshold_decoder_works_for_norms(tiny):
    # the cutoff applies to each target word's share of its row, so norms are not linked wholesale
    gold = read_alignments(tiny["gold"])
    n_gold = sum(len(gold.links(k)) for k in range(50))
    for thr, most in (("0.1", 2.5), ("0.4", 1.2)):
        lines = a_lines(
            generate(
                tiny,
                "--score-reference",
                "--alignment-method",
                "norm",
                "--alignment-decoder",
                "threshold",
                "--alignment-threshold",
                thr,
                "--batch-size",
                "50",
            ).stdout
        )
        n = sum(len(v) for v in lines.values())
        assert 0 < n <= most * n_gold, (thr, n, n_gold)


def test_every_alignment_flag_is_documented():
    from fairseq_plugins.tasks import NormAlignConfig

    readme = open(os.path.join(ROOT, "docs", "guides", "fairseq-plugin.md"), encoding="utf-8").read()
    for name in NormAlignConfig.__dataclass_fields__:
        if name.startswith("alignment_"):
            assert "--" + name.replace("_", "-") in readme, name


def _binarize_with_unknown_piece(tiny, tmp_path):
    """A test set whose source has a piece the dictionary lacks: '▁zz' becomes <unk>."""
    raw = tmp_path / "raw"
    raw.mkdir()
    # words: a | zz+q? no: '▁zz' opens word 1, 'x' continues it ('▁d x' is a real two-piece word) | b
    (raw / "test.src").write_text("\u2581a \u2581zz x \u2581b\n\u2581c \u2581d x\n")
    (raw / "test.tgt").write_text("\u2581B q \u2581Z \u2581A\n\u2581D \u2581C\n")
    data = tmp_path / "bin"
    d = os.path.join(tiny["data"], "dict.src.txt")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "fairseq_cli.preprocess",
            "--source-lang",
            "src",
            "--target-lang",
            "tgt",
            "--testpref",
            str(raw / "test"),
            "--destdir",
            str(data),
            "--srcdict",
            d,
            "--tgtdict",
            os.path.join(tiny["data"], "dict.tgt.txt"),
            "--workers",
            "1",
        ],
        check=True,
        capture_output=True,
    )
    return str(data), str(raw / "test")


def test_unknown_piece_never_shifts_a_word(tiny, tmp_path):
    data, text = _binarize_with_unknown_piece(tiny, tmp_path)
    t = dict(tiny, data=data)
    r = generate(t, "--score-reference", "--alignment-method", "norm", "--batch-size", "2", check=False)
    assert r.returncode != 0 and "sentence 0 (source): token 1 is <unk>" in r.stderr, r.stderr[-1500:]
    r = generate(t, "--score-reference", "--alignment-method", "norm", "--batch-size", "2", "--alignment-text", text)
    lines = a_lines(r.stdout)
    # one link per target word (argmax), every source index within the 3 words 'a', 'zz x', 'b'
    links = [tuple(map(int, x.split("-"))) for x in lines[0]]
    assert sorted(t for _, t in links) == [0, 1, 2] and all(0 <= s < 3 for s, _ in links)
    # the Python API knows the real pieces without help and gives the same links
    from fairseq_plugins.hub import NormAligner

    aligner = NormAligner.from_checkpoint(tiny["ckpt"], data_dir=tiny["data"], source_lang="src", target_lang="tgt")
    api = aligner.align(
        ["\u2581a \u2581zz x \u2581b"], ["\u2581B q \u2581Z \u2581A"], methods=["norm"], layers=[1], shifts=["awo"]
    )
    assert {f"{s}-{t}" for s, t in api[("norm", 1, "awo")][0]} == lines[0]


def _root_logging_after(setup: str) -> list:
    code = (
        setup + "; import logging, fairseq_plugins; r = logging.getLogger(); "
        "logging.getLogger('matplotlib.font_manager').debug('font search'); "
        "print(r.level, [type(h).__name__ for h in r.handlers])"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    return [r.stdout.strip(), r.stderr]


def test_import_leaves_a_library_users_logging_alone():
    # fairseq's import calls logging.basicConfig(level=DEBUG); before the fix the root logger came back
    # at 10 with a StreamHandler, the tensorboardX INFO line and this DEBUG record printed on stderr
    out, err = _root_logging_after("import os")
    assert out == "30 []"  # WARNING, no handler: Python's defaults
    assert "font search" not in err and "INFO:" not in err and "DEBUG" not in err


def test_import_keeps_logging_a_user_set_up_first():
    out, err = _root_logging_after("import logging; logging.basicConfig(level=logging.INFO)")
    assert out == "20 ['StreamHandler']"
    assert "font search" not in err


def test_errors_are_one_line_with_exit_status(tiny, tmp_path):
    # a bad flag: usage, exit 2, one line, no traceback, before any sentence
    r = generate(tiny, "--score-reference", "--alignment-method", "grad", check=False)
    assert r.returncode == 2 and "Traceback" not in r.stderr and "S-" not in r.stdout
    assert r.stderr.strip().splitlines()[-1].startswith("fairseq-generate: --alignment-method 'grad' is unknown")
    # a used --alignment-dump folder: refused before decoding (the run is not lost after it)
    used = tmp_path / "used"
    used.mkdir()
    (used / "old.align").write_text("0-0\n")
    r = generate(tiny, "--score-reference", "--alignment-dump", str(used), check=False)
    assert r.returncode == 2 and "Traceback" not in r.stderr and "S-" not in r.stdout
    assert "holds files" in r.stderr and os.listdir(used) == ["old.align"]
    r = generate(tiny, "--score-reference", "--alignment-dump", str(used), "--alignment-dump-overwrite", check=False)
    assert r.returncode == 2 and "which no manifest.json" in r.stderr and os.listdir(used) == ["old.align"]
    (used / "manifest.json").write_text('{"files": ["old.align"]}\n')  # a dump this tool wrote: replaced
    r = generate(
        tiny,
        "--score-reference",
        "--alignment-dump",
        str(used),
        "--alignment-dump-overwrite",
        "--alignment-dump-methods",
        "norm",
    )
    assert "old.align" not in os.listdir(used) and "manifest.json" in os.listdir(used)
    # a dump path that cannot be a folder
    f = tmp_path / "file"
    f.write_text("")
    r = generate(tiny, "--score-reference", "--alignment-dump", str(f / "x"), check=False)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    # a checkpoint our loader refuses: exit 1, one line
    import torch

    bad = tmp_path / "bad.pt"
    torch.save({"model": {}, "x": torch.nn.Linear(1, 1)}, str(bad))
    cmd = [
        sys.executable,
        "-m",
        "fairseq_cli.generate",
        tiny["data"],
        "--path",
        str(bad),
        "--source-lang",
        "src",
        "--target-lang",
        "tgt",
        "--gen-subset",
        "test",
        "--user-dir",
        os.path.join(ROOT, "fairseq_plugins"),
        "--task",
        "translation_norm_align",
        "--score-reference",
    ]
    r = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": ROOT}, cwd=ROOT)
    assert r.returncode == 1 and "Traceback" not in r.stderr and "refused" in r.stderr, r.stderr[-2000:]


def test_alignment_shard_auto_under_a_launcher(tiny, tmp_path):
    flags = ["--score-reference", "--batch-size", "8", "--alignment-dump-methods", "norm"]
    whole = tmp_path / "whole"
    generate(tiny, *flags, "--alignment-dump", str(whole))
    auto = tmp_path / "auto"
    env = dict(os.environ)
    try:
        for k in range(2):
            os.environ.update(RANK=str(k), WORLD_SIZE="2")
            generate(tiny, *flags, "--alignment-dump", str(auto), "--alignment-shard", "auto")
    finally:
        os.environ.clear()
        os.environ.update(env)
    assert _dump(auto / "merged") == _dump(whole)  # the second rank to finish merged
    one = tmp_path / "one"  # one process under a launcher: it ends in DIR/merged/ too (#42)
    try:
        os.environ.update(RANK="0", WORLD_SIZE="1")
        generate(tiny, *flags, "--alignment-dump", str(one), "--alignment-shard", "auto")
    finally:
        os.environ.clear()
        os.environ.update(env)
    assert _dump(one / "merged") == _dump(whole) and sorted(os.listdir(one)) == ["merged", "shard-0-of-1"]


def test_alignment_text_with_a_bare_cr_is_refused(tmp_path):
    from align.io.inputs import InputError
    from fairseq_plugins.tasks import read_segmented_text

    p = tmp_path / "test.src"
    p.write_bytes(b"\xe2\x96\x81a b\n\xe2\x96\x81c\rd\n")
    with pytest.raises(InputError, match=r"test.src:2: a carriage return \(\\r\) inside the line"):
        read_segmented_text(str(p), False)
    p.write_bytes("\u2581The house\n".encode())
    with pytest.raises(InputError, match="test.src:1: uppercase letters, but the model was trained on lowercased"):
        read_segmented_text(str(p), True)
    assert read_segmented_text(str(p), False) == ["\u2581The house"]
