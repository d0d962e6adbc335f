"""Output folders that appear whole or not at all (standard library only).

A run writes into a temporary folder beside its destination and publishes it with one rename, so
a reader never sees a mix of old and new files or a half-written set. Temporary folders are named
``.NAME.tmp~HOST~PID~RANDOM``: one a killed run left behind on this host is removed by the next run
(its process is gone); one from another host or a live process is reported, never touched.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from ..io.atomic import replace_atomic

_SEP = "~"


class OutputExistsError(ValueError):
    """The destination already holds files and replacing them was not asked for."""


def _host() -> str:
    return socket.gethostname().replace(_SEP, "-") or "localhost"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's live process
        return True
    return True


def _prefix(dest: str) -> tuple[str, str]:
    dest = os.path.abspath(dest)
    return os.path.dirname(dest), f".{os.path.basename(dest)}.tmp{_SEP}"


def _remove(path: str) -> None:
    """Remove a temporary entry whatever it is: a folder (whole), or a file or symbolic link (itself, never
    what it points to)."""
    if os.path.islink(path) or not os.path.isdir(path):
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
    else:
        shutil.rmtree(path, ignore_errors=True)


def clean_stale(dest: str, say: Callable[[str], None] | None = None) -> list[str]:
    """Remove the temporary folders of ``dest`` that runs killed on this host left behind; report
    (through ``say``, default stderr) those of live processes or other hosts. Returns the removed paths."""
    say = say or (lambda msg: print(msg, file=sys.stderr))
    parent, prefix = _prefix(dest)
    removed: list[str] = []
    try:
        names = os.listdir(parent)
    except OSError:
        return removed
    for name in sorted(names):
        if not name.startswith(prefix):
            continue
        path = os.path.join(parent, name)
        parts = name[len(prefix) :].split(_SEP)
        host, pid = (parts[0], int(parts[1])) if len(parts) >= 3 and parts[1].isdigit() else ("?", -1)
        if host == _host() and pid > 0 and not _alive(pid):
            try:
                _remove(path)
            except OSError as e:
                say(f"note: {path}: a temporary entry left by a killed run (process {pid}) that cannot be removed: {e}")
                continue
            removed.append(path)
            say(f"removed {path}: a temporary folder left by a killed run (process {pid})")
        else:
            say(
                f"note: {path} is the temporary folder of a run on host {host} (process {pid}) that may still be "
                "going; remove it if that run is gone"
            )
    return removed


def is_empty_or_missing(path: str) -> bool:
    """Whether ``path`` does not exist or is an empty folder."""
    return not os.path.exists(path) or (os.path.isdir(path) and not os.listdir(path))


_TOOL_ENTRIES = re.compile(r"^(shard-\d+-of-\d+|merged|scored)$")
_TMP_ENTRY = re.compile(r"^\..+\.tmp~")


def _inside(path: str, folder: str) -> bool:
    """Whether ``path`` is ``folder`` or lies under it (both resolved)."""
    path, folder = os.path.realpath(path), os.path.realpath(folder)
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def foreign_entries(folder: str) -> list[str]:
    """Entries of ``folder`` that no ``manifest.json`` of this tool lists (a shard folder, ``merged/``
    or a run's temporary folder counts when it is ours in turn): what ``--overwrite`` must not delete."""
    import json

    try:
        names = sorted(os.listdir(folder))
    except OSError as e:
        return [f"(cannot list: {e.strerror})"]
    listed: set[str] = set()
    try:
        with open(os.path.join(folder, "manifest.json"), encoding="utf-8") as f:
            man = json.load(f)
        files = man.get("files") if isinstance(man, dict) else None
        listed = {x for x in files if isinstance(x, str)} if isinstance(files, list) else set()
        listed.add("manifest.json")
    except (OSError, ValueError):
        pass
    out = []
    for name in names:
        path = os.path.join(folder, name)
        if name in listed and not os.path.islink(path) and os.path.isfile(path):
            continue
        if name == ".merge-lock" or _TMP_ENTRY.match(name):
            continue
        if _TOOL_ENTRIES.match(name) and os.path.isdir(path) and not os.path.islink(path) and not foreign_entries(path):
            continue
        out.append(name)
    return out


def check_destination(dest: str, overwrite: bool, what: str = "output folder", inputs: tuple[str, ...] = ()) -> None:
    """Raise OutputExistsError unless ``dest`` is missing, empty, or may be replaced; checked before any work.

    ``--overwrite`` replaces only a folder this tool wrote (every entry listed by its manifest) that
    holds none of ``inputs``; never the current folder or one above it (a rename cannot move it)."""
    absolute = os.path.abspath(dest)
    if os.path.islink(absolute):  # a rename would replace the link, not fill the folder it points to
        raise OutputExistsError(
            f"{dest}: is a symbolic link (to {os.readlink(absolute)}); expected a folder or a new name (the "
            "files are published with one rename, which would replace the link, not fill the folder it points to)"
        )
    up = os.path.dirname(absolute)
    while True:  # a file where a folder above dest should be: say so, not "[Errno 17] File exists"
        if os.path.lexists(up) and not os.path.isdir(up):
            raise OutputExistsError(f"{dest}: {up} is a file; expected a folder to hold the {what}")
        if os.path.dirname(up) == up:
            break
        up = os.path.dirname(up)
    if os.path.exists(dest) and not os.path.isdir(dest):
        raise OutputExistsError(f"{dest}: exists and is not a folder; expected a folder to write the {what} into")
    if _inside(os.getcwd(), dest):
        raise OutputExistsError(
            f"{dest}: is the current folder or holds it; expected a folder below it for the "
            f"{what} (it is published with one rename, which cannot move the current folder)"
        )
    for path in inputs:
        if path and path != "-" and _inside(path, dest):
            raise OutputExistsError(
                f"{dest}: holds the input {path}; expected an {what} apart from the input (--overwrite would delete it)"
            )
    if not overwrite and not is_empty_or_missing(dest):
        raise OutputExistsError(
            f"{dest}: the {what} exists and holds files (an earlier run's?); remove it, choose "
            "another folder, or pass --overwrite to replace it whole"
        )
    if overwrite and not is_empty_or_missing(dest):
        foreign = foreign_entries(dest)
        if foreign:
            raise OutputExistsError(
                f"{dest}: holds {', '.join(foreign[:3])}{' ...' if len(foreign) > 3 else ''}, "
                "which no manifest.json of this tool lists; --overwrite replaces only a folder "
                "this tool wrote: remove those files yourself or choose another folder"
            )
    parent = os.path.dirname(absolute)
    os.makedirs(parent, exist_ok=True)
    if not os.access(parent, os.W_OK):
        raise OutputExistsError(f"{parent}: not writable; expected a folder where the {what} can be created")


@contextmanager
def publishing(dest: str, overwrite: bool = False) -> Iterator[str]:
    """Yield a fresh temporary folder beside ``dest``; when the block ends without an error, it
    becomes ``dest`` with one rename (an existing ``dest`` is replaced only with ``overwrite``, and
    then moved aside first and removed after). On an error the temporary folder is removed."""
    check_destination(dest, overwrite)
    parent, prefix = _prefix(dest)
    tmp = tempfile.mkdtemp(dir=parent, prefix=f"{prefix}{_host()}{_SEP}{os.getpid()}{_SEP}")
    try:
        yield tmp
        if os.path.isdir(dest) and not os.path.islink(dest) and not os.listdir(dest):
            os.rmdir(dest)
        old = None
        if os.path.lexists(dest):
            check_destination(dest, overwrite)  # nothing appeared meanwhile that we may not replace
            old = tempfile.mkdtemp(dir=parent, prefix=f"{prefix}{_host()}{_SEP}{os.getpid()}{_SEP}old-")
            os.rmdir(old)
            os.replace(dest, old)
        try:
            replace_atomic(tmp, dest)
        except BaseException:
            if old is not None:  # the earlier folder back where it was, not left under a temporary name
                os.replace(old, dest)
            raise
        if old is not None:
            _remove(old)
    finally:
        if os.path.lexists(tmp):
            _remove(tmp)


def _lock_owner(path: str) -> str:
    try:
        with open(os.path.join(path, "owner"), encoding="utf-8") as f:
            return f.read().strip()
    except (OSError, ValueError):
        return ""


@contextmanager
def lock(folder: str, name: str = ".merge-lock") -> Iterator[tuple[bool, str, bool]]:
    """An exclusive lock among processes sharing ``folder``: yields ``(True, "", False)`` to the process
    that holds it, ``(False, why, busy)`` to the others (``busy``: its owner may be alive and working). The lock is a
    folder holding its owner (``HOST~PID``),
    made whole and renamed into place, so it never exists without an owner. One left by a process
    killed on this host is taken over; one without an owner, or of another host or a live process,
    is left alone and ``why`` says whose it is and what to do."""
    path = os.path.join(folder, name)
    mine = f"{_host()}{_SEP}{os.getpid()}"
    for _ in range(2):  # a second try after taking over a dead owner's lock
        tmp = tempfile.mkdtemp(dir=folder, prefix=f".{name}.tmp{_SEP}{mine}{_SEP}")
        with open(os.path.join(tmp, "owner"), "w", encoding="utf-8") as f:
            f.write(mine + "\n")
        try:
            os.rename(tmp, path)  # fails when the lock exists (a non-empty folder, or anything else)
        except OSError:
            shutil.rmtree(tmp, ignore_errors=True)
            if not os.path.lexists(path):
                continue  # released meanwhile: try again
        else:
            try:
                yield True, "", False
            finally:
                shutil.rmtree(path, ignore_errors=True)
            return
        owner = _lock_owner(path)
        host, _, pid = owner.partition(_SEP)
        if not owner or not pid.isdigit():
            yield (
                False,
                (
                    f"{path} has no valid owner file (found {owner[:40]!r}); expected HOST~PID: remove it "
                    f"and run align-merge {folder}"
                ),
                False,
            )
            return
        if host == _host() and not _alive(int(pid)):
            stale = f"{path}.stale{_SEP}{mine}"
            try:
                os.rename(path, stale)  # one process takes it over; the others find it gone or new
            except OSError:
                continue
            shutil.rmtree(stale, ignore_errors=True)
            continue
        where = "this host" if host == _host() else f"host {host}"
        yield (
            False,
            (
                f"{path} is held by process {pid} on {where} (merging now?); if that run is gone, remove "
                f"it and run align-merge {folder}"
            ),
            True,
        )
        return
    yield False, f"{path}: could not be taken; run align-merge {folder}", False
