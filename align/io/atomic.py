"""Writing files whole or not at all: a temporary file in the same folder renamed onto the path, with the mode
``open`` would have given it."""

from __future__ import annotations

import gzip
import os
import sys
import tempfile


def _umask() -> int:
    mask = os.umask(0)  # the only portable way to read it is to set it
    os.umask(mask)
    return mask


def new_file_mode() -> int:
    """The mode ``open(path, "w")`` would give a new file: 0o666 less the umask."""
    return 0o666 & ~_umask()


def replace_atomic(tmp: str, path: str) -> None:
    """Rename a finished temporary file or folder onto ``path``, with the mode ``open`` or ``os.mkdir`` would
    have given it: mkstemp makes 0o600 files and mkdtemp 0o700 folders, hidden from the user's group."""
    os.chmod(tmp, (0o777 & ~_umask()) if os.path.isdir(tmp) else new_file_mode())
    os.replace(tmp, path)


def write_text_atomic(path: str, text: str) -> None:
    """Write ``text`` to ``path`` via a temporary file in the same folder, so no partial file is left; ``-``:
    standard output, BrokenPipeError if its reader goes away before taking all of it."""
    if path == "-":
        from .console import check_stdout_taken

        sys.stdout.write(text)
        check_stdout_taken()  # flushed; a reader gone with some of it unread (| head -1) is a broken pipe
        return
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=os.path.basename(path))
    try:
        if str(path).endswith(".gz"):
            with os.fdopen(fd, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb") as f:
                f.write(text.encode("utf-8"))
        else:
            with open(fd, "w", encoding="utf-8", newline="\n") as f:
                f.write(text)
        replace_atomic(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
