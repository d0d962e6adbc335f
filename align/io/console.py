"""What every console script shares (standard library only): a closed output pipe and arguments
that are not valid UTF-8 end in one line and an exit status, never a traceback."""

from __future__ import annotations

import functools
import os
import re
import sys
from collections.abc import Callable, Sequence
from typing import Any, cast

_SURROGATE = re.compile("[\ud800-\udfff]")


Main = Callable[..., int]
"""A console script's entry point: ``main(argv=None) -> int``."""


def clean_text(text: str) -> str:
    """``text`` with what UTF-8 cannot encode (a file name's or argument's undecodable bytes, which
    Python keeps as lone surrogates) replaced by U+FFFD: safe to write into a page or a file."""
    return _SURROGATE.sub("\ufffd", text)


def _quiet_stdout() -> None:
    """Point standard output at /dev/null, so the interpreter's last flush after a closed pipe says nothing."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # no real file descriptor (a test's captured stdout)
        pass


def console_main(prog: str) -> Callable[[Main], Main]:
    """Wrap a console script's ``main(argv) -> int``: a reader that closes the pipe early (``| head -1``)
    ends it with one line and status 1, and names or text with undecodable bytes are printed escaped
    (``\\udcff``) instead of raising UnicodeEncodeError."""

    def wrap(main: Main) -> Main:
        @functools.wraps(main)
        def run(argv: Sequence[str] | None = None) -> int:
            for stream in (sys.stdout, sys.stderr):
                try:
                    cast(Any, stream).reconfigure(errors="backslashreplace")
                except (AttributeError, ValueError, OSError):
                    pass
            try:
                code = main(argv)
                sys.stdout.flush()
                return code
            except BrokenPipeError:
                _quiet_stdout()
                try:
                    print(
                        f"{prog}: standard output was closed before everything was written (broken pipe)",
                        file=sys.stderr,
                    )
                except OSError:
                    pass
                return 1

        return run

    return wrap
