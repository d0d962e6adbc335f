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
            assert first and not second
    with lock(str(tmp_path)) as again:
        assert again
