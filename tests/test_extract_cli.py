"""align-extract and align-merge end to end on the shipped En-Fr model (a few Hansards lines)."""

import json
import os

import pytest

from align.formats import new_file_mode

pytest.importorskip("fairseq")
pytestmark = pytest.mark.fairseq
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODEL = os.path.join(ROOT, "data", "models", "enfr", "model.pt")


@pytest.fixture(scope="module")
def pairs_file(tmp_path_factory):
    from align.formats import read_text_pairs
    pairs = read_text_pairs(os.path.join(ROOT, "data", "gold", "enfr_hansards", "enfr.src-tgt"))[:11]
    p = tmp_path_factory.mktemp("in") / "pairs.txt"
    p.write_text("".join(f"{' '.join(s).lower()} ||| {' '.join(t).lower()}\n" for s, t in pairs), encoding="utf-8")
    return str(p)


def run(*args):
    from align.extract_cli import main
    return main(list(args))


def files(d):
    return {n: open(os.path.join(d, n), "rb").read() for n in sorted(os.listdir(d)) if n.endswith(".align")}


def test_out_and_shards_merge_byte_identical(pairs_file, tmp_path):
    from align.shards import main as merge_main
    whole = tmp_path / "whole"
    assert run("--model", MODEL, "--input", pairs_file, "--out", str(whole), "--methods", "norm,alti,attn-head",
               "--shifts", "awo,awi", "--batch-size", "4") == 0
    got = files(whole)
    # norm and alti: 3 layers x 2 shifts; attn-head: 4 heads more
    assert len(got) == 2 * 3 * 2 + 3 * 2 * 4
    assert all(len(v.decode().splitlines()) == 11 for v in got.values())
    sharded = tmp_path / "sharded"
    for k in range(3):
        assert run("--model", MODEL, "--input", pairs_file, "--out", str(sharded), "--methods", "norm,alti,attn-head",
                   "--shifts", "awo,awi", "--shard", f"{k}/3", "--batch-size", "64") == 0
    assert files(sharded) == {}
    assert merge_main([str(sharded)]) == 0
    assert files(sharded) == got
    # merged files get the mode open() gives, not mkstemp's 0o600; shard folders os.mkdir's, not mkdtemp's 0o700
    assert {os.stat(sharded / n).st_mode & 0o777 for n in got} == {new_file_mode()}
    os.mkdir(tmp_path / "plain")
    assert {os.stat(sharded / f"shard-{k}-of-3").st_mode & 0o777 for k in range(3)} == {
        os.stat(tmp_path / "plain").st_mode & 0o777}


def test_print_one_setting_equals_the_file(pairs_file, tmp_path, capsys):
    out = tmp_path / "o"
    assert run("--model", MODEL, "--input", pairs_file, "--out", str(out), "--methods", "norm", "--layers", "2") == 0
    capsys.readouterr()
    assert run("--model", MODEL, "--input", pairs_file, "--methods", "norm", "--layers", "2",
               "--format", "json") == 0
    cap = capsys.readouterr()
    assert cap.out == (out / "norm-awi-layer2.align").read_text()
    assert json.loads(cap.err.strip().splitlines()[-1])["pairs"] == 11


def test_bad_line_names_file_and_line_and_writes_nothing(pairs_file, tmp_path, capsys):
    bad = tmp_path / "bad.txt"
    lines = open(pairs_file, encoding="utf-8").read().splitlines()
    lines[6] = lines[6].replace("|||", "|")
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "out"
    assert run("--model", MODEL, "--input", str(bad), "--out", str(out)) == 1
    assert f"{bad}:7: expected 'source ||| target'" in capsys.readouterr().err
    assert not out.exists() or os.listdir(out) == []


def test_usage_errors_exit_2(pairs_file):
    for args in (["--methods", "grad"], ["--shard", "3/3", "--out", "x"], ["--threshold", "0.3"],
                 ["--methods", "norm,attn"]):
        with pytest.raises(SystemExit) as e:
            run("--model", MODEL, "--input", pairs_file, *args)
        assert e.value.code == 2, args


def test_merge_refuses_overlap(tmp_path):
    from align.shards import ShardError, merge, write_shard
    write_shard(str(tmp_path), 0, 2, 3, {"a.align": [(0, "0-0"), (2, "1-1")]})
    write_shard(str(tmp_path), 1, 2, 3, {"a.align": [(1, "0-1"), (2, "1-1")]})
    with pytest.raises(ShardError, match="sentence 2 is in shard 0 and shard 1"):
        merge(str(tmp_path))
    assert not (tmp_path / "a.align").exists()
