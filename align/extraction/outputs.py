"""Output folders that appear whole or not at all (standard library only).

A run writes into a temporary folder beside its destination and publishes it with one rename, so
a reader never sees a mix of old and new files or a half-written set. Temporary folders are named
``.NAME.tmp~HOST~PID~RANDOM``: one a killed run left behind on this host is removed by the next run
(its process is gone); one from another host or a live process is reported, never touched.
"""

from __future__ import annotations

import os
import shutil
import socket
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from ..links.formats import replace_atomic

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
        parts = name[len(prefix):].split(_SEP)
        host, pid = (parts[0], int(parts[1])) if len(parts) >= 3 and parts[1].isdigit() else ("?", -1)
        if host == _host() and pid > 0 and not _alive(pid):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
            say(f"removed {path}: a temporary folder left by a killed run (process {pid})")
        else:
            say(f"note: {path} is the temporary folder of a run on host {host} (process {pid}) that may still be "
                "going; remove it if that run is gone")
    return removed


def is_empty_or_missing(path: str) -> bool:
    """Whether ``path`` does not exist or is an empty folder."""
    return not os.path.exists(path) or (os.path.isdir(path) and not os.listdir(path))


def check_destination(dest: str, overwrite: bool, what: str = "output folder") -> None:
    """Raise OutputExistsError unless ``dest`` is missing, empty, or may be replaced; checked before any work."""
    if os.path.exists(dest) and not os.path.isdir(dest):
        raise OutputExistsError(f"{dest}: exists and is not a folder; expected a folder to write the {what} into")
    if not overwrite and not is_empty_or_missing(dest):
        raise OutputExistsError(f"{dest}: the {what} exists and holds files (an earlier run's?); remove it, choose "
                                "another folder, or pass --overwrite to replace it whole")
    parent = os.path.dirname(os.path.abspath(dest))
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
        if os.path.isdir(dest) and not os.listdir(dest):
            os.rmdir(dest)
        old = None
        if os.path.exists(dest):
            check_destination(dest, overwrite)  # nothing appeared meanwhile that we may not replace
            old = tempfile.mkdtemp(dir=parent, prefix=f"{prefix}{_host()}{_SEP}{os.getpid()}{_SEP}old-")
            os.rmdir(old)
            os.replace(dest, old)
        replace_atomic(tmp, dest)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    finally:
        if os.path.exists(tmp):
            shutil.rmtree(tmp, ignore_errors=True)


@contextmanager
def lock(folder: str, name: str = ".merge-lock") -> Iterator[bool]:
    """An exclusive lock among processes sharing ``folder`` (a directory made with one mkdir): yields
    True to the process that holds it, False to the others. A lock left by a process killed on this
    host is taken over."""
    path = os.path.join(folder, name)
    mine = f"{_host()}{_SEP}{os.getpid()}"
    try:
        os.mkdir(path)
    except FileExistsError:
        try:
            owner = open(os.path.join(path, "owner")).read().strip()
        except OSError:
            owner = ""
        host, _, pid = owner.partition(_SEP)
        if not (host == _host() and pid.isdigit() and not _alive(int(pid))):
            yield False
            return
    with open(os.path.join(path, "owner"), "w") as f:
        f.write(mine)
    try:
        yield True
    finally:
        shutil.rmtree(path, ignore_errors=True)
