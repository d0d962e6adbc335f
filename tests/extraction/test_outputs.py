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


@pytest.mark.parametrize("target", ["folder", "dangling"])
def test_a_symbolic_link_as_destination_is_refused_and_nothing_is_left(tmp_path, target):
    """--out LINK --overwrite replaced the link by a folder, left the target's stale files and a `.tmp` link."""
    real = tmp_path / "real"
    if target == "folder":
        with publishing(str(real)) as tmp:
            open(os.path.join(tmp, "a.align"), "w").write("old\n")
            open(os.path.join(tmp, "manifest.json"), "w").write('{"files": ["a.align"]}\n')
    (tmp_path / "LINK").symlink_to(real)
    before = sorted(os.listdir(tmp_path))
    for dest in (str(tmp_path / "LINK"), str(tmp_path / "LINK") + "/"):
        for overwrite in (False, True):
            with pytest.raises(OutputExistsError, match=r"LINK/?: is a symbolic link \(to .*real\)"):
                check_destination(dest, overwrite)
            with pytest.raises(OutputExistsError, match="is a symbolic link"):
                with publishing(dest, overwrite) as tmp:
                    open(os.path.join(tmp, "a.align"), "w").write("new\n")
    assert sorted(os.listdir(tmp_path)) == before and (tmp_path / "LINK").is_symlink()
    if target == "folder":
        assert (real / "a.align").read_text() == "old\n"


def test_a_link_that_appears_before_the_rename_is_refused_and_no_temporary_stays(tmp_path):
    real, dest = tmp_path / "real", tmp_path / "out"
    real.mkdir()
    with pytest.raises(OutputExistsError, match="is a symbolic link"):
        with publishing(str(dest), overwrite=True) as tmp:
            open(os.path.join(tmp, "a.align"), "w").write("1\n")
            dest.symlink_to(real)  # another process, meanwhile
    assert sorted(os.listdir(tmp_path)) == ["out", "real"] and dest.is_symlink() and not os.listdir(real)


def test_stale_temporary_links_are_removed_not_their_targets(tmp_path):
    host = socket.gethostname()
    kept = tmp_path / "kept"
    kept.mkdir()
    (kept / "x").write_text("1")
    dead_link = tmp_path / f".out.tmp~{host}~999999999~old-abc"
    dead_link.symlink_to(kept)  # what a run that moved a linked --out aside left, before links were refused
    removed = clean_stale(str(tmp_path / "out"), lambda msg: None)
    assert removed == [str(dead_link)] and not os.path.lexists(dead_link)
    assert (kept / "x").read_text() == "1"


def test_a_failed_rename_puts_the_earlier_folder_back(tmp_path, monkeypatch):
    import align.extraction.outputs as outputs

    dest = tmp_path / "out"
    with publishing(str(dest)) as tmp:
        open(os.path.join(tmp, "a.align"), "w").write("old\n")
        open(os.path.join(tmp, "manifest.json"), "w").write('{"files": ["a.align"]}\n')

    def fail(tmp, path):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(outputs, "replace_atomic", fail)
    with pytest.raises(OSError):
        with publishing(str(dest), overwrite=True) as tmp:
            open(os.path.join(tmp, "a.align"), "w").write("new\n")
    assert sorted(os.listdir(tmp_path)) == ["out"] and (dest / "a.align").read_text() == "old\n"
