"""Pieces that must agree are checked against each other: any two models as forward and reverse, any named gold
set with any model, in align-extract and align-calibrate; refused in one line, exit 1, nothing written."""

import itertools
import os
import subprocess
import sys

import pytest

pytest.importorskip("fairseq")

from align.extraction.loading import RunError, check_pair, check_reverse, load_aligner  # noqa: E402
from align.gold.registry import TESTSETS  # noqa: E402
from align.spec.languages import base  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHIPPED = {name: os.path.join(ROOT, "data", "models", name) for name in ("deen", "ende", "enfr", "fren")}


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """The four shipped models and Hugging Face copies of two of them (FSMT configs declare their langs)."""
    from hf_plugins.convert import fairseq_to_hf

    out = {name: load_aligner(path) for name, path in SHIPPED.items()}
    for name in ("fren", "ende"):
        folder = str(tmp_path_factory.mktemp(f"hf_{name}"))
        fairseq_to_hf(SHIPPED[name], folder, name[:2], name[2:])
        out[f"hf-{name}"] = load_aligner(folder)
    return out


def test_every_model_declares_its_languages(models):
    assert {k: m.languages() for k, m in models.items()} == {
        "deen": ("de", "en"),
        "ende": ("en", "de"),
        "enfr": ("en", "fr"),
        "fren": ("fr", "en"),
        "hf-fren": ("fr", "en"),
        "hf-ende": ("en", "de"),
    }


def test_any_two_models_agree_only_when_they_are_one_pair_turned_round(models):
    for (f, fwd), (r, rev) in itertools.product(models.items(), repeat=2):
        (fs, ft), (rs, rt) = fwd.languages(), rev.languages()
        if (rs, rt) == (ft, fs):
            assert check_reverse(fwd, rev, r) is True, (f, r)
            continue
        with pytest.raises(RunError, match=r"translates .*expected|is the --model itself") as e:
            check_reverse(fwd, rev, r)
        assert "\n" not in str(e.value), (f, r)


def test_any_named_set_with_any_model(models):
    for (name, spec), (m, model) in itertools.product(TESTSETS.items(), models.items()):
        for langs in (spec.langs, spec.langs[::-1]):
            src, tgt = model.languages()
            if (base(src), base(tgt)) == (base(langs[0]), base(langs[1])):
                assert check_pair(model, langs, name, m) is True
            else:
                with pytest.raises(RunError, match=f"{m} translates {src}->{tgt}, but {name} is"):
                    check_pair(model, langs, name, m)


def _run(module, *args):
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": ROOT}
    return subprocess.run([sys.executable, "-m", module, *args], capture_output=True, text=True, env=env, cwd=ROOT)


def test_commands_refuse_in_one_line_and_write_nothing(tmp_path):
    out, cal = tmp_path / "out", tmp_path / "cal.json"
    cases = [
        ("align.cli.extract", "--model", SHIPPED["fren"], "-t", "hansards", "--out", str(out)),
        ("align.cli.extract", "--model", SHIPPED["enfr"], "--reverse-model", SHIPPED["deen"], "-t", "hansards",
         "--out", str(out)),
        ("align.cli.calibrate", "--model", SHIPPED["enfr"], "--reverse-model", SHIPPED["enfr"], "-t", "hansards",
         "--layer", "0", "-o", str(cal)),
        ("align.cli.calibrate", "--model", SHIPPED["deen"], "-t", "hansards", "--layer", "0", "-o", str(cal)),
    ]  # fmt: skip
    for module, *args in cases:
        r = _run(module, *args)
        assert r.returncode == 1, (args, r.stderr)
        last = r.stderr.strip().splitlines()[-1]
        assert "translates" in last or "itself" in last, last
        assert not out.exists() and not cal.exists()


@pytest.mark.parametrize("flag", ["--reverse-model", "--calibration", "--methods", "--model"])
def test_an_empty_flag_is_a_usage_error(flag, tmp_path):
    args = {"--model": SHIPPED["enfr"], "--input": "-", "--out": str(tmp_path / "o")}
    args[flag] = ""
    r = _run("align.cli.extract", *itertools.chain.from_iterable(args.items()))
    assert r.returncode == 2 and f"{flag} is empty" in r.stderr.strip().splitlines()[-1]


class _Fake:
    def __init__(self, langs, sha="a"):
        self._langs, self._sha = langs, sha

    def languages(self):
        return self._langs

    def identity(self):
        return {"sha256": self._sha, "path": "/x"}


def test_what_cannot_be_told_apart_is_not_refused():
    # the same NLLB model, zho_Hans -> zho_Hant and back: two directions of one language
    assert check_reverse(_Fake(("zho_Hans", "zho_Hant")), _Fake(("zho_Hant", "zho_Hans")), "nllb") is True
    with pytest.raises(RunError, match="is the --model itself"):
        check_reverse(_Fake(("zho_Hans", "zho_Hant")), _Fake(("zho_Hans", "zho_Hant")), "nllb")
    # a multi-source Marian model (mul -> en) with a French set: not checked, not refused
    assert check_pair(_Fake(("mul", "en")), ("fr", "en"), "test set hansards (fr-en)", "opus-mt-mul-en") is False
    with pytest.raises(RunError, match="translates mul->en, but"):
        check_pair(_Fake(("mul", "en")), ("fr", "de"), "a set", "opus-mt-mul-en")
    # a code the table does not reduce (ukr_Cyrl) against a two-letter one: not checked, not refused
    assert check_reverse(_Fake(("uk", "en"), "a"), _Fake(("eng_Latn", "ukr_Cyrl"), "b"), "nllb") is False


def test_an_empty_combine_keeps_its_meaning():
    # --combine "" is no combination (the reverse links only), as before; every other empty flag is refused
    from align.cli.common import empty_flag
    from align.cli.extract import build_parser

    ap = build_parser()
    assert empty_flag(ap, {"combine": "", "model": "m"}) is None
    assert empty_flag(ap, {"combine": "", "reverse_model": " "}) == "--reverse-model"


def test_language_flags_do_not_turn_a_fixed_pair_into_another(models):
    # a fairseq model and an FSMT copy declare their languages: flags that say otherwise are refused, flags that
    # agree are fine (a multilingual model, which declares none, takes them)
    from align.extraction.loading import check_language_flags

    for name in ("enfr", "hf-fren"):
        src, tgt = models[name].languages()
        check_language_flags(models[name], src, tgt, name)
        with pytest.raises(RunError, match=rf"{name} translates {src}->{tgt}, but --src-lang is {tgt}"):
            check_language_flags(models[name], tgt, None, name)
        with pytest.raises(RunError, match=r"but --tgt-lang is de"):
            check_language_flags(models[name], None, "de", name)
    # the FSMT copy keeps its own languages whatever it was loaded with
    assert models["hf-fren"].declared_languages() == ("fr", "en")


def test_the_reverse_model_is_checked_against_the_set_and_the_preprocessing(models):
    from align.extraction.loading import check_same_preprocessing

    # the reverse model reads the set turned round: De->En as the reverse of an En->Fr set is refused
    with pytest.raises(RunError, match=r"--reverse-model d translates de->en, but hansards turned round is fr->en"):
        check_pair(models["deen"], ("fr", "en"), "hansards turned round", "--reverse-model d")
    fwd, rev = models["enfr"], models["fren"]
    was = rev.lowercase
    try:
        rev.lowercase = not fwd.lowercase
        with pytest.raises(RunError, match="would read different words"):
            check_same_preprocessing(fwd, rev, "r", "f")
    finally:
        rev.lowercase = was


def test_commands_refuse_language_flags_against_the_model(tmp_path):
    out, cal = tmp_path / "out", tmp_path / "cal.json"
    cases = [
        ("align.cli.extract", "--model", SHIPPED["enfr"], "-t", "hansards", "--src-lang", "de", "--tgt-lang", "en",
         "--out", str(out)),
        ("align.cli.calibrate", "--model", SHIPPED["enfr"], "-t", "hansards", "--src-lang", "de", "--layer", "0",
         "-o", str(cal)),
    ]  # fmt: skip
    for module, *args in cases:
        r = _run(module, *args)
        assert r.returncode == 1, (args, r.stderr)
        assert "translates en->fr, but --src-lang is de" in r.stderr.strip().splitlines()[-1], r.stderr
        assert not out.exists() and not cal.exists()
