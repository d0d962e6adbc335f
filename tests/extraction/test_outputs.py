"""Output folders published whole (align.extraction.outputs)."""

import os
import socket

import pytest

from align.extraction.outputs import OutputExistsError, check_destination, clean_stale, lock, publishing


def test_published_whole_or_not_at_all(tmp_path):
    dest = tmp_path / "out"
    with publishing(str(dest)) as tmp:
        (open(os.path.join(tmp, "a"), "w")).write("1")
        assert not dest.exists()  # nothing visible until the block ends
    assert (dest / "a").read_text() == "1"
    with pytest.raises(RuntimeError):
        with publishing(str(tmp_path / "other")) as tmp:
            open(os.path.join(tmp, "a"), "w").write("1")
            raise RuntimeError("killed")
    assert not (tmp_path / "other").exists()
    assert sorted(os.listdir(tmp_path)) == ["out"]  # no temporary folder left behind


def test_used_folder_is_refused_unless_overwrite(tmp_path):
    dest = tmp_path / "out"
    dest.mkdir()
    (dest / "old.align").write_text("0-0\n")
    (dest / "manifest.json").write_text('{"files": ["old.align"]}\n')  # a folder this tool wrote
    with pytest.raises(OutputExistsError, match="holds files .* --overwrite"):
        check_destination(str(dest), False)
    with publishing(str(dest), overwrite=True) as tmp:
        open(os.path.join(tmp, "new.align"), "w").write("1-1\n")
    assert os.listdir(dest) == ["new.align"]  # replaced whole: no old file mixed in
    assert sorted(os.listdir(tmp_path)) == ["out"]
    check_destination(str(tmp_path / "empty"), False)  # missing is fine
    (tmp_path / "f").write_text("")
    with pytest.raises(OutputExistsError, match="not a folder"):
        check_destination(str(tmp_path / "f"), True)


def test_stale_temporaries_of_killed_runs_are_removed_others_reported(tmp_path):
    host = socket.gethostname()
    dead = tmp_path / f".out.tmp~{host}~999999999~abc"
    live = tmp_path / f".out.tmp~{host}~{os.getpid()}~abc"
    other = tmp_path / ".out.tmp~elsewhere~12~abc"
    for d in (dead, live, other):
        d.mkdir()
    said = []
    removed = clean_stale(str(tmp_path / "out"), said.append)
    assert removed == [str(dead)] and not dead.exists() and live.exists() and other.exists()
    assert len(said) == 3 and "killed run" in said[[str(dead) in m for m in said].index(True)]


def test_lock_is_exclusive(tmp_path):
    with lock(str(tmp_path)) as first:
        with lock(str(tmp_path)) as second:
            assert first[0] and not second[0] and second[2]  # busy: its owner is alive
            assert f"held by process {os.getpid()} on this host" in second[1]
    with lock(str(tmp_path)) as again:
        assert again[0]
    assert os.listdir(tmp_path) == []


def test_a_lock_is_never_without_its_owner_and_foreign_locks_are_reported(tmp_path):
    path = tmp_path / ".merge-lock"
    path.mkdir()
    (path / "owner").write_text(f"{socket.gethostname()}~999999999\n")  # killed on this host: taken over
    with lock(str(tmp_path)) as (mine, why, busy):
        assert mine and (path / "owner").read_text().strip() == f"{socket.gethostname()}~{os.getpid()}"
    path.mkdir()
    (path / "owner").write_text("elsewhere~12\n")  # another host's: reported, never taken
    with lock(str(tmp_path)) as (mine, why, busy):
        assert not mine and busy and "held by process 12 on host elsewhere" in why and "align-merge" in why
    (path / "owner").write_text("")  # no owner: reported (what to remove), not waited for
    with lock(str(tmp_path)) as (mine, why, busy):
        assert not mine and not busy and "no valid owner" in why
    assert path.exists()


def test_overwrite_removes_only_folders_the_tool_wrote(tmp_path, monkeypatch):
    dest = tmp_path / "out"
    dest.mkdir()
    (dest / "pairs.txt").write_text("a ||| b\n")  # the user's input, in the folder
    with pytest.raises(OutputExistsError, match="holds the input"):
        check_destination(str(dest), True, inputs=(str(dest / "pairs.txt"),))
    with pytest.raises(OutputExistsError, match="holds pairs.txt, which no manifest.json"):
        check_destination(str(dest), True)
    (dest / "manifest.json").write_text('{"files": ["a.align"]}\n')
    (dest / "a.align").write_text("")
    with pytest.raises(OutputExistsError, match="holds pairs.txt, which no manifest.json"):
        check_destination(str(dest), True)
    (dest / "pairs.txt").unlink()
    check_destination(str(dest), True)  # only what the manifest lists: may be replaced
    assert (dest / "a.align").exists()


def test_current_folder_and_a_file_above_are_refused_before_any_work(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(OutputExistsError, match="is the current folder or holds it"):
        check_destination(".", True)
    with pytest.raises(OutputExistsError, match="is the current folder or holds it"):
        check_destination(str(tmp_path.parent), True)
    (tmp_path / "afile").write_text("x")
    with pytest.raises(OutputExistsError, match="afile is a file; expected a folder"):
        check_destination("afile/sub", False)
