"""align-extract and align-merge end to end on the shipped En-Fr model (a few Hansards lines)."""

import json
import os

import pytest

from align.io.atomic import new_file_mode

pytest.importorskip("fairseq")
pytestmark = pytest.mark.fairseq
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODEL = os.path.join(ROOT, "data", "models", "enfr")


@pytest.fixture(scope="module")
def pairs_file(tmp_path_factory):
    from align.io.text import read_text_pairs

    pairs = read_text_pairs(os.path.join(ROOT, "align", "gold", "sets", "enfr_hansards", "enfr.src-tgt"))[:11]
    p = tmp_path_factory.mktemp("in") / "pairs.txt"
    p.write_text("".join(f"{' '.join(s).lower()} ||| {' '.join(t).lower()}\n" for s, t in pairs), encoding="utf-8")
    return str(p)


def run(*args):
    from align.cli.extract import main

    return main(list(args))


def files(d):
    return {n: open(os.path.join(d, n), "rb").read() for n in sorted(os.listdir(d)) if n.endswith(".align")}


def test_out_and_shards_merge_byte_identical(pairs_file, tmp_path):
    from align.cli.merge import main as merge_main

    whole = tmp_path / "whole"
    assert (
        run(
            "--model",
            MODEL,
            "--input",
            pairs_file,
            "--out",
            str(whole),
            "--methods",
            "norm,alti,attn-head",
            "--shifts",
            "awo,awi",
            "--batch-size",
            "4",
        )
        == 0
    )
    got = files(whole)
    # norm and alti: 3 layers x 2 shifts; attn-head: 4 heads more
    assert len(got) == 2 * 3 * 2 + 3 * 2 * 4
    assert all(len(v.decode().splitlines()) == 11 for v in got.values())
    sharded = tmp_path / "sharded"
    for k in range(3):
        assert (
            run(
                "--model",
                MODEL,
                "--input",
                pairs_file,
                "--out",
                str(sharded),
                "--methods",
                "norm,alti,attn-head",
                "--shifts",
                "awo,awi",
                "--shard",
                f"{k}/3",
                "--batch-size",
                "64",
            )
            == 0
        )
    assert files(sharded) == {}
    assert merge_main([str(sharded)]) == 0
    assert files(sharded / "merged") == got
    # merged files get the mode open() gives, not mkstemp's 0o600; shard folders os.mkdir's, not mkdtemp's 0o700
    assert {os.stat(sharded / "merged" / n).st_mode & 0o777 for n in got} == {new_file_mode()}
    os.mkdir(tmp_path / "plain")
    assert {os.stat(sharded / f"shard-{k}-of-3").st_mode & 0o777 for k in range(3)} == {
        os.stat(tmp_path / "plain").st_mode & 0o777
    }


def test_print_one_setting_equals_the_file(pairs_file, tmp_path, capsys):
    out = tmp_path / "o"
    assert run("--model", MODEL, "--input", pairs_file, "--out", str(out), "--methods", "norm", "--layers", "2") == 0
    capsys.readouterr()
    assert run("--model", MODEL, "--input", pairs_file, "--methods", "norm", "--layers", "2", "--format", "json") == 0
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
    assert f"{bad}:7: found 0 '|||' separators; expected one line 'source ||| target'" in capsys.readouterr().err
    assert not out.exists() or os.listdir(out) == []


def test_usage_errors_exit_2(pairs_file):
    for args in (
        ["--methods", "grad"],
        ["--shard", "3/3", "--out", "x"],
        ["--threshold", "0.3"],
        ["--methods", "norm,attn"],
        ["--reverse-alignment-layer", "L"],  # the reverse model's layer, without a reverse model
        ["-l", "fr-en"],  # -l reads a named set the other way; there is none
    ):
        code = run("--model", MODEL, "--input", pairs_file, *args)
        assert code == 2, args


def test_merge_refuses_overlap(tmp_path):
    from align.extraction.shards import ShardError, merge, write_shard

    write_shard(str(tmp_path), 0, 2, 3, {"a.align": [(0, "0-0"), (2, "1-1")]})
    write_shard(str(tmp_path), 1, 2, 3, {"a.align": [(1, "0-1"), (2, "1-1")]})
    with pytest.raises(ShardError, match=r"shard-1-of-2/a.align:2: sentence 2 is in another shard too"):
        merge(str(tmp_path))
    assert not (tmp_path / "merged").exists() and not [n for n in os.listdir(tmp_path) if n.startswith(".")]


# ----------------------------------------------------------------------------------------------
# never silently wrong at corpus scale (issue 29) and streaming / launchers (issue 31)
# ----------------------------------------------------------------------------------------------


def _lines(pairs_file):
    return open(pairs_file, encoding="utf-8").read().splitlines()


def _write(path, lines, raw=None):
    path.write_bytes(raw if raw is not None else ("\n".join(lines) + "\n").encode("utf-8"))
    return str(path)


def test_manifest_carries_the_run_signature(pairs_file, tmp_path):
    out = tmp_path / "o"
    assert run("--model", MODEL, "--input", pairs_file, "--out", str(out), "--methods", "norm", "--layers", "0") == 0
    man = json.loads((out / "manifest.json").read_text())
    sig = man["signature"]
    assert sig["input"]["lines"] == 11 and len(sig["input"]["sha256"]) == 64 and len(sig["model"]["sha256"]) == 64
    assert sig["settings"]["methods"] == ["norm"] and sig["settings"]["level"] == "word"
    assert sig["settings"]["preprocessing"] == {"lowercase": True} and man["sentences"] == 11


def test_merge_refuses_shards_of_other_settings(pairs_file, tmp_path, capsys):
    from align.cli.merge import main as merge_main

    out = tmp_path / "s"
    common = ["--model", MODEL, "--input", pairs_file, "--out", str(out), "--methods", "norm", "--layers", "0"]
    assert run(*common, "--shard", "0/2") == 0
    assert run(*common, "--shard", "1/2", "--decoder", "intersect") == 0
    capsys.readouterr()
    assert merge_main([str(out)]) == 1
    err = capsys.readouterr().err
    assert "shard-1-of-2: made by another run than" in err and "settings.decoder" in err
    assert not (out / "merged").exists()


def test_rerun_into_a_used_folder_is_refused_or_replaces_it_whole(pairs_file, tmp_path, capsys):
    out = tmp_path / "o"
    args = ["--model", MODEL, "--input", pairs_file, "--out", str(out), "--layers", "0"]
    assert run(*args, "--methods", "norm,attn") == 0
    capsys.readouterr()
    assert run(*args, "--methods", "alti") == 1
    err = capsys.readouterr().err
    assert "holds files" in err and "--overwrite" in err
    assert sorted(os.listdir(out)) == ["attn-awi-layer0.align", "manifest.json", "norm-awi-layer0.align"]
    assert run(*args, "--methods", "alti", "--overwrite") == 0
    assert sorted(os.listdir(out)) == ["alti-awi-layer0.align", "manifest.json"]  # nothing of the old run mixed in


def test_a_bare_carriage_return_never_shifts_lines(pairs_file, tmp_path, capsys):
    lines = _lines(pairs_file)
    bad = _write(
        tmp_path / "cr.txt",
        None,
        raw=(
            "\n".join(lines[:4]) + "\n" + lines[4].replace(" ||| ", " \r ||| ", 1) + "\n" + "\n".join(lines[5:]) + "\n"
        ).encode(),
    )
    assert run("--model", MODEL, "--input", bad, "--methods", "norm", "--layers", "0") == 1
    assert f"{bad}:5: a carriage return (\\r) at column" in capsys.readouterr().err
    crlf = _write(tmp_path / "crlf.txt", None, raw=("\r\n".join(lines) + "\r\n").encode())
    assert run("--model", MODEL, "--input", crlf, "--methods", "norm", "--layers", "0") == 0
    got = capsys.readouterr().out
    assert run("--model", MODEL, "--input", pairs_file, "--methods", "norm", "--layers", "0") == 0
    assert capsys.readouterr().out == got  # CRLF line ends: the same 11 lines


def test_tokenization_errors_name_the_input_line_even_in_a_shard(pairs_file, tmp_path, capsys):
    lines = _lines(pairs_file)
    lines[7] = "the \u200b house ||| la maison"  # SentencePiece leaves no piece for U+200B
    bad = _write(tmp_path / "zw.txt", lines)
    out = tmp_path / "o"
    assert run("--model", MODEL, "--input", bad, "--out", str(out), "--shard", "1/3", "--methods", "norm") == 1
    err = capsys.readouterr().err
    assert f"{bad}:8: source: SentencePiece leaves no piece for word 2 '\\u200b'" in err, err
    assert not out.exists() or os.listdir(out) == []
    # the other shards do not own line 8 and are not stopped by it
    assert run("--model", MODEL, "--input", bad, "--out", str(out), "--shard", "0/3", "--methods", "norm") == 0


def test_too_long_input_is_an_error_or_truncated(pairs_file, tmp_path, capsys):
    import sentencepiece

    lines = _lines(pairs_file)
    lines[2] = " ".join(["word"] * 1100) + " ||| " + " ".join(["mot"] * 5)
    long = _write(tmp_path / "long.txt", lines)
    # "word" is k pieces of the model's SentencePiece (2 in the x20 En->Fr's): 1100 k + 1 tokens with the EOS
    k = len(sentencepiece.SentencePieceProcessor(model_file=os.path.join(MODEL, "spm.model")).encode("word"))
    assert run("--model", MODEL, "--input", long, "--methods", "norm", "--layers", "0") == 1
    assert (
        f"{long}:3: source: {1100 * k + 1} tokens (specials included) but the model takes at most 1024"
        in capsys.readouterr().err
    )
    assert (
        run("--model", MODEL, "--input", long, "--methods", "norm", "--layers", "0", "--truncate", "--format", "json")
        == 0
    )
    cap = capsys.readouterr()
    assert json.loads(cap.err.strip().splitlines()[-1])["truncated"] == 1
    links = cap.out.splitlines()[2].split()
    # links only to the words whose pieces fit beside the EOS: (1024 - 1) // k of them (511 when "word" is 2 pieces)
    assert max(int(x.split("-")[0]) for x in links) < (1024 - 1) // k


def test_mixed_case_input_is_lowercased_for_the_lowercased_model(pairs_file, tmp_path, capsys):
    lines = _lines(pairs_file)
    upper = _write(tmp_path / "upper.txt", [line.upper() for line in lines])
    assert run("--model", MODEL, "--input", upper, "--methods", "norm", "--layers", "0") == 0
    got = capsys.readouterr()
    assert "lowercased" in got.err
    assert run("--model", MODEL, "--input", pairs_file, "--methods", "norm", "--layers", "0") == 0
    assert capsys.readouterr().out == got.out


def test_empty_input_writes_empty_files(tmp_path, capsys):
    empty = _write(tmp_path / "empty.txt", None, raw=b"")
    out = tmp_path / "o"
    assert run("--model", MODEL, "--input", empty, "--out", str(out), "--methods", "norm,attn", "--layers", "1") == 0
    assert sorted(os.listdir(out)) == ["attn-awi-layer1.align", "manifest.json", "norm-awi-layer1.align"]
    assert (out / "norm-awi-layer1.align").read_text() == ""
    assert "aligned 0 pairs" in capsys.readouterr().err


@pytest.mark.parametrize("suffix", [".gz", ".xz", ".zst"])
def test_compressed_input(pairs_file, tmp_path, capsys, suffix):
    import gzip
    import lzma

    data = open(pairs_file, "rb").read()
    if suffix == ".zst":
        zstandard = pytest.importorskip("zstandard")
        packed = zstandard.ZstdCompressor().compress(data)
    else:
        packed = gzip.compress(data) if suffix == ".gz" else lzma.compress(data)
    path = _write(tmp_path / f"pairs.txt{suffix}", None, raw=packed)
    assert run("--model", MODEL, "--input", path, "--methods", "norm", "--layers", "0") == 0
    got = capsys.readouterr().out
    assert run("--model", MODEL, "--input", pairs_file, "--methods", "norm", "--layers", "0") == 0
    assert capsys.readouterr().out == got


def test_streaming_chunks_give_the_same_files(pairs_file, tmp_path, monkeypatch):
    import align.extraction.run as cli

    whole, small = tmp_path / "whole", tmp_path / "small"
    args = ["--model", MODEL, "--input", pairs_file, "--methods", "norm,attn-head", "--layers", "1"]
    assert run(*args, "--out", str(whole)) == 0
    monkeypatch.setattr(cli, "CHUNK", 3)  # 11 lines in chunks of 3
    assert run(*args, "--out", str(small), "--batch-size", "2") == 0
    assert files(small) == files(whole)


def test_save_scores_writes_a_matrix_per_sentence(pairs_file, tmp_path):
    from align.io.softscores import read_scores
    from align.io.text import read_text_pairs

    out = tmp_path / "o"
    assert (
        run(
            "--model",
            MODEL,
            "--input",
            pairs_file,
            "--out",
            str(out),
            "--methods",
            "norm",
            "--layers",
            "0",
            "--save-scores",
        )
        == 0
    )
    mats = read_scores(str(out / "norm-awi-layer0.scores.jsonl"))
    pairs = read_text_pairs(pairs_file)
    assert [m.shape for m in mats] == [(len(t), len(s)) for s, t in pairs]
    links = (out / "norm-awi-layer0.align").read_text().splitlines()
    for m, line in zip(mats, links):  # argmax links: each target word's best source word has 255
        for tok in line.split():
            s, t = map(int, tok.split("-"))
            assert m[t, s] == 255


def test_shard_auto_from_slurm_variables_equals_one_process(pairs_file, tmp_path, monkeypatch, capsys):
    whole, auto = tmp_path / "whole", tmp_path / "auto"
    args = ["--model", MODEL, "--input", pairs_file, "--methods", "norm,attn-head", "--layers", "2"]
    assert run(*args, "--out", str(whole)) == 0
    for k in range(3):
        monkeypatch.setenv("SLURM_ARRAY_TASK_ID", str(k + 1))
        monkeypatch.setenv("SLURM_ARRAY_TASK_COUNT", "3")
        monkeypatch.setenv("SLURM_ARRAY_TASK_MIN", "1")
        assert run(*args, "--out", str(auto), "--shard", "auto") == 0
    assert "merged into" in capsys.readouterr().err  # the last task to finish merged
    assert files(auto / "merged") == files(whole)


def test_shard_auto_without_a_launcher_is_a_usage_error(pairs_file, monkeypatch):
    for v in ("RANK", "WORLD_SIZE", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT"):
        monkeypatch.delenv(v, raising=False)
    code = run("--model", MODEL, "--input", pairs_file, "--out", "x", "--shard", "auto")
    assert code == 2


def test_torchrun_two_processes_byte_identical(pairs_file, tmp_path):
    import shutil
    import subprocess
    import sys

    exe = os.path.join(os.path.dirname(sys.executable), "align-extract")
    torchrun = os.path.join(os.path.dirname(sys.executable), "torchrun")
    if not (os.path.exists(exe) and os.path.exists(torchrun)):
        pytest.skip("align-extract / torchrun not installed in this environment")
    whole, auto = tmp_path / "whole", tmp_path / "auto"
    args = ["--model", MODEL, "--input", pairs_file, "--methods", "norm,alti", "--layers", "0,2", "--shifts", "awo,awi"]
    assert run(*args, "--out", str(whole)) == 0
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    p = subprocess.run(
        [torchrun, "--nproc-per-node", "2", "--no-python", exe, *args, "--out", str(auto), "--shard", "auto"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        cwd=str(tmp_path),
    )
    assert p.returncode == 0, p.stderr[-3000:]
    assert files(auto / "merged") == files(whole)
    assert sorted(os.listdir(auto)) == ["merged", "shard-0-of-2", "shard-1-of-2"]
    shutil.rmtree(auto)


def test_named_test_set_is_the_same_input(tmp_path, capsys):
    """-t hansards aligns the set's text: the links of --input enfr.src-tgt, and the signature names the set."""
    text = os.path.join(ROOT, "align", "gold", "sets", "enfr_hansards", "enfr.src-tgt")
    a, b = tmp_path / "a", tmp_path / "b"
    assert run("--model", MODEL, "--input", text, "--out", str(a), "--methods", "attn", "--layers", "0") == 0
    assert run("--model", MODEL, "-t", "hansards", "--out", str(b), "--methods", "attn", "--layers", "0") == 0
    assert files(a) == files(b)
    sig = json.load(open(b / "manifest.json"))["signature"]["input"]
    assert sig["test_set"].startswith("test:hansards|lang:en-fr|sha:") and sig["lines"] == 447


@pytest.mark.parametrize(
    "argv,message",
    [
        (["-t", "hansards", "--input", "x"], "give --input PAIRS or -t NAME"),
        (["-t", "nope"], "unknown test set 'nope'"),
        (["-t", "hansards", "-l", "de-en"], "neither en-fr nor fr-en"),
        (["--input", "x", "-l", "fr-en"], "-l and --testsets-dir apply to -t NAME"),
        (["-t", "hansards", "--translate"], "--translate needs source sentences"),
    ],
)
def test_named_test_set_usage(argv, message, capsys):
    code = run("--model", MODEL, *argv)
    assert code == 2 and message in capsys.readouterr().err


def _launcher(monkeypatch, rank, world):
    for v in ("SLURM_PROCID", "SLURM_NTASKS", "SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT", "LOCAL_RANK"):
        monkeypatch.delenv(v, raising=False)
    monkeypatch.setenv("RANK", str(rank))
    monkeypatch.setenv("WORLD_SIZE", str(world))


def test_shard_auto_with_one_process_still_ends_in_merged(pairs_file, tmp_path, monkeypatch, capsys):
    whole, auto = tmp_path / "whole", tmp_path / "auto"
    args = ["--model", MODEL, "--input", pairs_file, "--methods", "norm", "--layers", "1"]
    assert run(*args, "--out", str(whole)) == 0
    _launcher(monkeypatch, 0, 1)
    assert run(*args, "--out", str(auto), "--shard", "auto") == 0
    assert files(auto / "merged") == files(whole)
    assert "merged into" in capsys.readouterr().err


def test_torchrun_rerun_with_another_input_never_leaves_the_old_merged(pairs_file, tmp_path, monkeypatch, capsys):
    other = _write(tmp_path / "other.txt", _lines(pairs_file)[3:9])
    auto, whole = tmp_path / "auto", tmp_path / "whole"
    common = ["--methods", "norm", "--layers", "1", "--out", str(auto), "--shard", "auto"]
    for k in range(2):
        _launcher(monkeypatch, k, 2)
        assert run("--model", MODEL, "--input", pairs_file, *common) == 0
    _launcher(monkeypatch, 0, 2)  # rank 0 of the rerun: the old merged/ goes, and rank 1's old shard is no failure
    assert run("--model", MODEL, "--input", other, *common, "--overwrite") == 0
    assert not (auto / "merged").exists()
    _launcher(monkeypatch, 1, 2)
    assert run("--model", MODEL, "--input", other, *common, "--overwrite") == 0
    monkeypatch.delenv("RANK")
    monkeypatch.delenv("WORLD_SIZE")
    assert run("--model", MODEL, "--input", other, "--methods", "norm", "--layers", "1", "--out", str(whole)) == 0
    assert files(auto / "merged") == files(whole)


def test_a_lock_of_another_host_is_reported_with_exit_1(pairs_file, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("NORM_ALIGN_MERGE_WAIT", "0")
    auto = tmp_path / "auto"
    auto.mkdir()
    (auto / ".merge-lock").mkdir()
    (auto / ".merge-lock" / "owner").write_text("node7~4242\n")
    _launcher(monkeypatch, 0, 1)
    assert (
        run(
            "--model",
            MODEL,
            "--input",
            pairs_file,
            "--methods",
            "norm",
            "--layers",
            "1",
            "--out",
            str(auto),
            "--shard",
            "auto",
        )
        == 1
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not merged" in err[0] and "held by process 4242 on host node7" in err[0]


@pytest.mark.parametrize("shard", ["", " ", "0", "1/0", "a/b"])
def test_a_bad_shard_is_a_usage_error(pairs_file, tmp_path, shard):
    code = run("--model", MODEL, "--input", pairs_file, "--out", str(tmp_path / "o"), "--shard", shard)
    assert code == 2


def test_overwrite_never_deletes_the_input_or_files_of_the_user(pairs_file, tmp_path, capsys):
    out = tmp_path / "o"
    out.mkdir()
    inp = out / "pairs.txt"
    inp.write_bytes(open(pairs_file, "rb").read())
    args = ["--model", MODEL, "--methods", "norm", "--layers", "0", "--out", str(out), "--overwrite"]
    assert run(*args, "--input", str(inp)) == 1
    assert "holds the input" in capsys.readouterr().err and inp.exists()
    assert run(*args, "--input", pairs_file) == 1
    err = capsys.readouterr().err
    assert "holds pairs.txt, which no manifest.json" in err and inp.exists()


def test_out_here_or_under_a_file_is_refused_before_the_model_loads(pairs_file, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("")
    args = ["--model", "no-such-model-is-loaded", "--input", pairs_file, "--methods", "norm"]
    assert run(*args, "--out", ".", "--overwrite") == 1
    assert "is the current folder" in capsys.readouterr().err
    assert run(*args, "--out", "afile/sub") == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "afile is a file; expected a folder" in err[0] and "Errno" not in err[0]


def test_input_from_a_fifo_is_read_as_stdin_is(pairs_file, tmp_path, capsys):
    import threading

    fifo = tmp_path / "in.fifo"
    os.mkfifo(fifo)
    data = open(pairs_file, "rb").read()
    writer = threading.Thread(target=lambda: fifo.write_bytes(data))
    writer.start()
    args = ["--model", MODEL, "--methods", "norm", "--layers", "0"]
    try:
        assert run(*args, "--input", str(fifo), "--progress", "on") == 0
    finally:
        writer.join(timeout=30)
    got = capsys.readouterr().out
    assert run(*args, "--input", pairs_file) == 0
    assert capsys.readouterr().out == got and got.count("\n") == 11
    assert run(*args, "--input", str(fifo), "--out", str(tmp_path / "s"), "--shard", "0/2") == 1
    assert "is a pipe" in capsys.readouterr().err


def test_a_refused_pickle_is_one_line(tmp_path, capsys):
    torch = pytest.importorskip("torch")

    class Evil:
        def __reduce__(self):
            return (os.system, ("echo pwned",))

    torch.save({"model": Evil()}, tmp_path / "model.pt")
    pairs = _write(tmp_path / "p.txt", ["a b ||| c d"])
    assert run("--model", str(tmp_path / "model.pt"), "--input", pairs) == 1
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "refused" in err and "pwned" not in err
