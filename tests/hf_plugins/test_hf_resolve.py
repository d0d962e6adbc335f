"""Hugging Face models by Hub id (hf_plugins.resolve): a Hub-style cache built on disk from tiny
random Marian and M2M100 models saved in code, HF_HOME pointing at it, HF_HUB_OFFLINE=1. No test
reaches the network."""

import json
import os

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("huggingface_hub")
pytest.importorskip("sentencepiece")

from hf_plugins.hub import HFAligner  # noqa: E402
from hf_plugins.resolve import ModelSourceError, resolve_model  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COMMIT = {"marian": "1" * 40, "m2m100": "2" * 40}
PAIRS = ["the house is small . ||| la maison est petite .", "a cat ||| un chat"]


def _marian(folder):
    from hf_tiny import tiny_marian

    return tiny_marian(folder, d_model=32, heads=4, ffn=64, seed=11)


def _m2m100(folder):
    import io

    import sentencepiece as spm
    from hf_tiny import randomize

    buf = io.BytesIO()
    text = ["the house is small .", "la maison est petite .", "a cat un chat"] * 20
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(text),
        model_writer=buf,
        vocab_size=40,
        model_type="unigram",
        character_coverage=1.0,
        bos_id=-1,
        eos_id=-1,
        unk_id=0,
        hard_vocab_limit=False,
        minloglevel=2,
    )
    sp_path = os.path.join(folder, "in.model")
    open(sp_path, "wb").write(buf.getvalue())
    sp = spm.SentencePieceProcessor(model_file=sp_path)
    vocab = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3}
    for i in range(sp.get_piece_size()):
        vocab.setdefault(sp.id_to_piece(i), len(vocab))
    vpath = os.path.join(folder, "in.json")
    json.dump(vocab, open(vpath, "w"))
    tok = transformers.M2M100Tokenizer(vocab_file=vpath, spm_file=sp_path, src_lang="en", tgt_lang="fr")
    os.remove(vpath)
    os.remove(sp_path)
    from hf_plugins.hub import special_ids

    cfg = transformers.M2M100Config(
        vocab_size=max(special_ids(tok) | set(tok.get_vocab().values())) + 1,
        d_model=32,
        encoder_layers=1,
        decoder_layers=2,
        encoder_attention_heads=4,
        decoder_attention_heads=4,
        encoder_ffn_dim=64,
        decoder_ffn_dim=64,
        max_position_embeddings=64,
        pad_token_id=1,
        eos_token_id=2,
        bos_token_id=0,
        decoder_start_token_id=2,
    )
    torch.manual_seed(0)
    model = transformers.M2M100ForConditionalGeneration(cfg).eval()
    randomize(model, 12)
    return model, tok


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    """HF_HOME with a Hub-style cache: hub/models--test--NAME/{refs/main, snapshots/COMMIT/...}."""
    home = tmp_path_factory.mktemp("hf_home")
    for name, build in (("marian", _marian), ("m2m100", _m2m100)):
        repo = home / "hub" / f"models--test--tiny-{name}"
        snap = repo / "snapshots" / COMMIT[name]
        snap.mkdir(parents=True)
        (repo / "refs").mkdir()
        (repo / "refs" / "main").write_text(COMMIT[name])
        model, tok = build(str(snap))
        model.save_pretrained(str(snap), safe_serialization=True)
        tok.save_pretrained(str(snap))
    return home


@pytest.fixture
def offline(hub, monkeypatch):
    monkeypatch.setenv("HF_HOME", str(hub))
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return hub


def _run(*args):
    from align.cli.extract import main

    return main(list(args))


@pytest.mark.parametrize("name,langs", [("marian", []), ("m2m100", ["--src-lang", "en", "--tgt-lang", "fr"])])
def test_hub_id_and_revisions_give_the_folders_links(offline, tmp_path, capsys, name, langs):
    pairs = tmp_path / "pairs.txt"
    pairs.write_text("\n".join(PAIRS) + "\n", encoding="utf-8")
    folder = offline / "hub" / f"models--test--tiny-{name}" / "snapshots" / COMMIT[name]
    common = ["--input", str(pairs), "--methods", "norm", "--layers", "1", *langs]
    assert _run("--model", str(folder), *common) == 0
    want = capsys.readouterr().out
    assert want.count("\n") == 2
    for spec in (f"test/tiny-{name}", f"test/tiny-{name}@{COMMIT[name]}", f"test/tiny-{name}@main"):
        assert _run("--model", spec, *common, "--format", "json") == 0, spec
        cap = capsys.readouterr()
        assert cap.out == want, spec
        summary = json.loads(cap.err.strip().splitlines()[-1])
        assert summary["signature"]["model"]["revision"] == COMMIT[name]  # the commit used, recorded
        assert summary["framework"] == "hf"


def test_revision_lands_in_the_manifest_and_text_summary(offline, tmp_path, capsys):
    pairs = tmp_path / "pairs.txt"
    pairs.write_text("\n".join(PAIRS) + "\n", encoding="utf-8")
    out = tmp_path / "o"
    assert _run("--model", "test/tiny-marian", "--input", str(pairs), "--out", str(out), "--methods", "attn") == 0
    assert f"test/tiny-marian@{COMMIT['marian'][:12]}" in capsys.readouterr().err
    sig = json.loads((out / "manifest.json").read_text())["signature"]
    assert sig["model"] == {"hub_id": "test/tiny-marian", "revision": COMMIT["marian"], "requested": "main"}


def test_missing_id_and_wrong_revision_are_one_line_errors(offline, tmp_path, capsys):
    pairs = tmp_path / "pairs.txt"
    pairs.write_text("\n".join(PAIRS) + "\n", encoding="utf-8")
    assert _run("--model", "test/not-there", "--input", str(pairs)) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "test/not-there: revision 'main' is not in the Hub cache" in err and "hf download test/not-there" in err
    assert _run("--model", "test/tiny-marian@v9", "--input", str(pairs)) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "revision 'v9' is not in the Hub cache" in err
    assert f"main -> {COMMIT['marian'][:12]}" in err  # what the cache does hold


def test_a_local_folder_of_that_name_wins(offline, tmp_path, monkeypatch):
    local = tmp_path / "test" / "tiny-marian"
    local.mkdir(parents=True)
    (local / "config.json").write_text("{}")
    monkeypatch.chdir(tmp_path)
    folder, source = resolve_model("test/tiny-marian")
    assert folder == "test/tiny-marian" and "sha256" in source and "revision" not in source


def test_unsupported_type_and_remote_code_are_refused_without_running_it(tmp_path, capsys, monkeypatch):
    # a config with auto_map and an unknown model_type: transformers would ask on stdin whether to run
    # the folder's Python; we never ask and never run it, even with 'y' on stdin
    folder = tmp_path / "remote"
    folder.mkdir()
    (folder / "config.json").write_text(
        json.dumps(
            {
                "model_type": "evil",
                "auto_map": {
                    "AutoConfig": "configuration_evil.EvilConfig",
                    "AutoModelForSeq2SeqLM": "modeling_evil.EvilModel",
                },
            }
        )
    )
    marker = tmp_path / "ran"
    (folder / "configuration_evil.py").write_text(f"open({str(marker)!r}, 'w').write('code ran')\n")
    pairs = tmp_path / "pairs.txt"
    pairs.write_text("y\ny\n", encoding="utf-8")
    import io
    import sys

    monkeypatch.setattr(sys, "stdin", io.StringIO("y\ny\ny\n"))
    assert _run("--model", str(folder), "--input", str(pairs)) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and "never a model's own code" in err
    assert not marker.exists()
    t5 = tmp_path / "t5"
    transformers.T5ForConditionalGeneration(
        transformers.T5Config(vocab_size=32, d_model=8, d_kv=4, d_ff=16, num_layers=1, num_heads=2)
    ).save_pretrained(str(t5))
    assert HFAligner  # loaded lazily by the CLI
    assert _run("--model", str(t5), "--input", str(pairs)) == 1
    err = capsys.readouterr().err
    assert "model type 't5' is not supported; supported: marian, bart, fsmt, m2m_100, mbart, pegasus" in err


def test_resolve_rejects_what_is_neither_folder_nor_id(offline):
    with pytest.raises(ModelSourceError, match="not a Hub id"):
        resolve_model("no/such/thing/here")


@pytest.mark.parametrize("rev", ["../../../other", "main"])
def test_a_revision_never_leads_out_of_its_repository(tmp_path, monkeypatch, rev):
    # another repository's snapshot in the cache, and a file that points at it: through a revision
    # with '..' or a refs file naming a path, resolving test/mine must not land there
    hub = tmp_path / "hub"
    other = hub / "models--test--other" / "snapshots" / ("3" * 40)
    other.mkdir(parents=True)
    (other / "config.json").write_text("{}")
    (hub / "models--test--mine" / "snapshots").mkdir(parents=True)
    (hub / "models--test--mine" / "refs").mkdir()
    pointer = "../../models--test--other/snapshots/" + "3" * 40
    (tmp_path / "other").write_text(pointer)
    (hub / "models--test--mine" / "refs" / "main").write_text(pointer)
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelSourceError, match="revision"):
        print(resolve_model(f"test/mine@{rev}"))


def test_check_revision_takes_branches_tags_and_commits():
    from hf_plugins.resolve import check_revision

    for rev in ("main", "v1.0", "refs/pr/1", "1" * 40, "release-2024_01"):
        assert check_revision(rev) == rev


def test_the_same_multilingual_model_is_its_own_reverse_with_languages_swapped(offline, tmp_path, capsys):
    """M2M100 both ways: --reverse-model names the same Hub id; it runs fr->en (the languages swapped)."""
    from hf_plugins.hub import HFAligner

    pairs = tmp_path / "pairs.txt"
    pairs.write_text("\n".join(PAIRS) + "\n", encoding="utf-8")
    out = tmp_path / "o"
    langs = ["--src-lang", "en", "--tgt-lang", "fr"]
    args = ["--model", "test/tiny-m2m100", "--reverse-model", "test/tiny-m2m100", "--input", str(pairs)]
    assert _run(*args, *langs, "--methods", "norm", "--layers", "1", "--out", str(out)) == 0
    man = json.loads((out / "manifest.json").read_text())
    assert man["signature"]["reverse_model"]["revision"] == COMMIT["m2m100"]
    # the reverse file is the model run fr->en on the turned pairs, turned round
    folder = offline / "hub" / "models--test--tiny-m2m100" / "snapshots" / COMMIT["m2m100"]
    rev = HFAligner.from_pretrained(str(folder), src_lang="fr", tgt_lang="en")
    assert rev.languages() == ("fr", "en")
    turned = [tuple(reversed([x.strip() for x in p.split("|||")])) for p in PAIRS]
    want = rev.align([s for s, _ in turned], [t for _, t in turned], methods=["norm"], layers=[1])[("norm", 1, "awi")]
    got = [line.split() for line in (out / "norm-awi-layer1.reverse.align").read_text().splitlines()]
    assert got == [[f"{s}-{t}" for s, t in sorted((t, s) for s, t in links)] for links in want]


def test_a_one_pair_model_as_its_own_reverse_is_refused(offline, tmp_path, capsys):
    """Marian declares no languages: the same model as --reverse-model would align one direction twice."""
    pairs = tmp_path / "pairs.txt"
    pairs.write_text("\n".join(PAIRS) + "\n", encoding="utf-8")
    out = tmp_path / "o"
    code = _run("--model", "test/tiny-marian", "--reverse-model", "test/tiny-marian", "--input", str(pairs),
                "--out", str(out))  # fmt: skip
    err = capsys.readouterr().err
    assert code == 1 and "align the same direction twice" in err and not out.exists()
