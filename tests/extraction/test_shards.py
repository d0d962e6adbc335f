"""Sharded dumps and align-merge (align.extraction.shards): streaming k-way merge, manifests with run
signatures, one-rename publishing."""

import json
import os

import pytest

from align.cli.merge import main
from align.extraction.shards import ShardError, merge, merge_when_complete, write_shard

SIG = {
    "version": "0.1.0",
    "model": {"sha256": "m1"},
    "input": {"sha256": "i1", "lines": 5},
    "settings": {"level": "word", "decoder": "argmax", "methods": ["norm"]},
}


def _three(tmp_path, sig2=None, total=5):
    # round-robin shards of 5 sentences: 0 gets 0, 3; 1 gets 1, 4; 2 gets 2
    for k in range(3):
        rows = [(i, f"{i}-{i}") for i in range(k, total, 3)]
        write_shard(
            str(tmp_path),
            k,
            3,
            total,
            {"a.align": rows, "b.align": rows},
            sig2 if (sig2 is not None and k == 2) else SIG,
        )


def test_merge_joins_in_input_order(tmp_path, capsys):
    _three(tmp_path)
    assert main([str(tmp_path), "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["shards"] == 3 and out["sentences"] == 5 and out["files"] == ["a.align", "b.align"]
    assert (tmp_path / "merged" / "a.align").read_text() == "0-0\n1-1\n2-2\n3-3\n4-4\n"
    man = json.loads((tmp_path / "merged" / "manifest.json").read_text())
    assert man["signature"] == SIG


@pytest.mark.parametrize(
    "field,value",
    [
        ("model", {"sha256": "m2"}),
        ("input", {"sha256": "i2", "lines": 5}),
        ("settings", {**SIG["settings"], "decoder": "intersect"}),
        ("version", "0.2.0"),
    ],
)
def test_shards_of_different_runs_are_refused_naming_the_field(tmp_path, field, value):
    _three(tmp_path, {**SIG, field: value})
    with pytest.raises(ShardError, match=rf"shard-2-of-3: made by another run than .*shard-0-of-3: {field}"):
        merge(str(tmp_path))
    assert not (tmp_path / "merged").exists()


def test_a_hub_model_asked_by_branch_or_by_commit_is_one_run(tmp_path):
    # "main" and the commit it resolves to are one model (align.spec.signature.HOW_ASKED); another revision is not
    asked = {"repo": "org/m", "revision": "abc123", "requested": "main"}
    sig = {**SIG, "model": asked}
    for k in range(2):
        model = asked if k == 0 else {**asked, "requested": "abc123"}
        write_shard(str(tmp_path / "x"), k, 2, 2, {"a.align": [(k, "0-0")]}, {**sig, "model": model})
    assert merge(str(tmp_path / "x")) == (2, 2, ["a.align"])
    for k in range(2):
        model = asked if k == 0 else {**asked, "revision": "def456"}
        write_shard(str(tmp_path / "y"), k, 2, 2, {"a.align": [(k, "0-0")]}, {**sig, "model": model})
    with pytest.raises(ShardError, match=r"model\.revision differ"):
        merge(str(tmp_path / "y"))


def test_an_empty_shard_is_fine_and_an_empty_corpus_too(tmp_path):
    # 2 sentences in 3 shards: shard 2 has none
    for k in range(3):
        write_shard(str(tmp_path / "x"), k, 3, 2, {"a.align": [(i, "0-0") for i in range(k, 2, 3)]}, SIG)
    assert merge(str(tmp_path / "x")) == (3, 2, ["a.align"])
    for k in range(2):
        write_shard(str(tmp_path / "y"), k, 2, 0, {"a.align": []}, SIG)
    assert merge(str(tmp_path / "y")) == (2, 0, ["a.align"])
    assert (tmp_path / "y" / "merged" / "a.align").read_text() == ""


def test_missing_shard_names_the_folder(tmp_path):
    write_shard(str(tmp_path), 0, 3, 5, {"a.align": [(0, "")]}, SIG)
    with pytest.raises(ShardError, match=r"shard\(s\) 1, 2 of 3 missing \(expected shard-1-of-3, shard-2-of-3\)"):
        merge(str(tmp_path))


def test_gap_duplicate_and_cut_file_are_refused(tmp_path):
    _three(tmp_path)
    (tmp_path / "shard-1-of-3" / "b.align").write_text("1\t1-1\n")  # sentence 4 lost
    with pytest.raises(
        ShardError, match=r"b.align of the shards in .+: they hold 4 of 5 sentences \(missing from 4 on\)"
    ):
        merge(str(tmp_path))
    (tmp_path / "shard-1-of-3" / "b.align").write_text("1\t1-1\n4\t4-4")  # no final newline: cut short
    with pytest.raises(ShardError, match=r"shard-1-of-3/b.align:2: the last line has no newline"):
        merge(str(tmp_path))
    (tmp_path / "shard-1-of-3" / "b.align").write_text("1\t1-1\n4\t4-4\n1\t1-1\n")
    with pytest.raises(ShardError, match=r"b.align:3: sentence 1 after 4; expected ascending ids"):
        merge(str(tmp_path))
    assert not (tmp_path / "merged").exists()


def test_a_merge_killed_midway_publishes_nothing(tmp_path, monkeypatch):
    import align.extraction.shards as shards

    _three(tmp_path)
    real = shards._merge_file
    calls = []

    def dies_on_the_second(*a):
        calls.append(a)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*a)

    monkeypatch.setattr(shards, "_merge_file", dies_on_the_second)
    with pytest.raises(KeyboardInterrupt):
        merge(str(tmp_path))
    assert sorted(os.listdir(tmp_path)) == ["shard-0-of-3", "shard-1-of-3", "shard-2-of-3"]
    monkeypatch.setattr(shards, "_merge_file", real)
    merge(str(tmp_path))
    with pytest.raises(ShardError, match="merged: the output folder exists"):  # a second merge replaces nothing
        merge(str(tmp_path))
    assert merge(str(tmp_path), overwrite=True)[1] == 5


def test_merge_memory_does_not_hold_the_corpus(tmp_path):
    # streaming: the merge reads line by line (a generator per shard), checked on a 200k-line corpus
    import tracemalloc

    total = 200000
    for k in range(2):
        d = tmp_path / f"shard-{k}-of-2"
        d.mkdir()
        with open(d / "a.align", "w") as f:
            f.writelines(f"{i}\t{i % 50}-{i % 40} {i % 7}-{i % 9}\n" for i in range(k, total, 2))
        (d / "manifest.json").write_text(
            json.dumps({"shard": k, "shards": 2, "total": total, "files": ["a.align"], "signature": SIG})
        )
    tracemalloc.start()
    merge(str(tmp_path))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 2_000_000, peak  # the merged file is 2.6 MB; reading it whole would take several times that
    assert sum(1 for _ in open(tmp_path / "merged" / "a.align")) == total


@pytest.mark.parametrize("name", ["/tmp/victim", "../victim", "..", "sub/a.align", ".hidden", "manifest.json", 7])
def test_manifest_names_never_reach_outside_the_shard(tmp_path, name):
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    run = tmp_path / "run"
    _three(run)
    for k in range(3):
        m = run / f"shard-{k}-of-3" / "manifest.json"
        man = json.loads(m.read_text())
        man["files"] = ["a.align", str(victim) if name == "/tmp/victim" else name]
        m.write_text(json.dumps(man))
    with pytest.raises(ShardError, match="expected a plain file name"):
        merge(str(run))
    assert victim.read_text() == "precious\n" and not (run / "merged").exists()


def test_a_missing_id_names_the_shard_file_and_line_it_was_found_in(tmp_path):
    _three(tmp_path)
    (tmp_path / "shard-0-of-3" / "a.align").write_text("0\t0-0\n")  # sentence 3 lost; 4 is next, in shard 1
    with pytest.raises(ShardError, match=r"sentence 3 is in no shard \(the next is 4 in .*shard-1-of-3/a.align:2\)"):
        merge(str(tmp_path))


def test_merge_when_complete_remerges_a_stale_merged_folder(tmp_path):
    _three(tmp_path)
    assert merge_when_complete(str(tmp_path), SIG) == (str(tmp_path / "merged"), "")
    new = {**SIG, "input": {"sha256": "i2", "lines": 5}}
    for k in range(3):  # the run repeated with --overwrite and another input: every shard replaced
        rows = [(i, f"{i}-0") for i in range(k, 5, 3)]
        write_shard(str(tmp_path), k, 3, 5, {"a.align": rows, "b.align": rows}, new, overwrite=True)
        merged, why = merge_when_complete(str(tmp_path), new)
        assert why == "" and (merged is None) == (k < 2)  # older shards: their ranks still run; no failure
    assert (tmp_path / "merged" / "a.align").read_text() == "0-0\n1-0\n2-0\n3-0\n4-0\n"
    assert json.loads((tmp_path / "merged" / "manifest.json").read_text())["signature"] == new
    assert merge_when_complete(str(tmp_path), new) == (str(tmp_path / "merged"), "")  # already merged: fine


def test_merge_when_complete_reports_a_lock_it_cannot_take(tmp_path, monkeypatch):
    monkeypatch.setenv("NORM_ALIGN_MERGE_WAIT", "0")
    _three(tmp_path)
    (tmp_path / ".merge-lock").mkdir()
    (tmp_path / ".merge-lock" / "owner").write_text("otherhost~77\n")
    merged, why = merge_when_complete(str(tmp_path), SIG)
    assert merged is None and "held by process 77 on host otherhost" in why
    (tmp_path / ".merge-lock" / "owner").unlink()
    (tmp_path / ".merge-lock" / "junk").write_text("")
    merged, why = merge_when_complete(str(tmp_path), SIG)
    assert merged is None and "no valid owner" in why
    assert not (tmp_path / "merged").exists()


def test_write_shard_replaces_an_earlier_shard_only_when_asked(tmp_path):
    # the plugin's --alignment-dump-overwrite: checked at the start, so the end must not refuse it
    write_shard(str(tmp_path), 0, 1, 1, {"a.align": [(0, "0-0")]}, SIG)
    with pytest.raises(ShardError, match="exists already"):
        write_shard(str(tmp_path), 0, 1, 1, {"a.align": [(0, "1-1")]}, SIG)
    write_shard(str(tmp_path), 0, 1, 1, {"a.align": [(0, "1-1")]}, SIG, overwrite=True)
    assert (tmp_path / "shard-0-of-1" / "a.align").read_text() == "0\t1-1\n"


def test_an_empty_lock_left_by_a_killed_process_is_taken_over(tmp_path):
    # mkdir-then-write locks of 0.1 could be left empty by a kill between the two; no owner ever holds one
    _three(tmp_path)
    (tmp_path / ".merge-lock").mkdir()
    assert merge_when_complete(str(tmp_path), SIG) == (str(tmp_path / "merged"), "")
    assert not (tmp_path / ".merge-lock").exists()


def test_a_manifest_listing_no_files_is_refused(tmp_path):
    for k in range(2):
        write_shard(str(tmp_path), k, 2, 2, {"a.align": [(k, "0-0")]})
    path = tmp_path / "shard-1-of-2" / "manifest.json"
    man = json.loads(path.read_text())
    path.write_text(json.dumps(dict(man, files=[])))
    with pytest.raises(ShardError, match=r"shard-1-of-2/manifest.json: lists no files; expected the files"):
        merge(str(tmp_path))
    assert not (tmp_path / "merged").exists()


def test_merged_a_symbolic_link_is_refused_never_followed_or_moved(tmp_path, capsys):
    from align.extraction.shards import drop_stale_merged

    run, elsewhere = tmp_path / "run", tmp_path / "elsewhere"
    write_shard(str(run), 0, 1, 1, {"a.align": [(0, "0-0")]}, SIG)
    elsewhere.mkdir()
    (elsewhere / "manifest.json").write_text('{"files": [], "signature": {"other": 1}}\n')
    (run / "merged").symlink_to(elsewhere)
    assert not drop_stale_merged(str(run), SIG)  # another run's merged/, but a link: left for the merge to refuse
    assert main([str(run), "--overwrite"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "merged: is a symbolic link (to " in err, err
    assert sorted(os.listdir(run)) == ["merged", "shard-0-of-1"] and (run / "merged").is_symlink()
    assert os.listdir(elsewhere) == ["manifest.json"]


@pytest.mark.parametrize(
    "line, message",
    [
        (b"3\t3-3\xff\n", r"shard-0-of-3/a.align:2: bytes .* are not UTF-8"),
        ("\u00b2\t3-3\n".encode(), r"shard-0-of-3/a.align:2: expected 'ID<TAB>payload'"),  # '²'.isdigit() is True
    ],
)
def test_a_bad_byte_or_a_non_ascii_digit_names_the_shard_file_and_line(tmp_path, capsys, line, message):
    _three(tmp_path)
    (tmp_path / "shard-0-of-3" / "a.align").write_bytes(b"0\t0-0\n" + line)
    with pytest.raises(ShardError, match=message):
        merge(str(tmp_path))
    assert main([str(tmp_path)]) == 1 and capsys.readouterr().err.count("\n") == 1
    assert not (tmp_path / "merged").exists()
