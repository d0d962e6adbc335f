"""What every console script shares (standard library only): output that cannot be written (a closed
pipe, a full disk, a closed standard output) and arguments that are not valid UTF-8 end in one line and
an exit status, never a traceback."""

from __future__ import annotations

import functools
import os
import re
import stat
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any, cast

_SURROGATE = re.compile("[\ud800-\udfff]")

PIPE_WAIT_S = 2.0
"""How long a command that wrote into a pipe waits at its end for a reader still there to take what it
wrote (``| head -1`` has read its line and gone within milliseconds; a reader that never reads costs this)."""


Main = Callable[..., int]
"""A console script's entry point: ``main(argv=None) -> int``."""


class StdoutError(Exception):
    """Standard output does not take what a command writes (a full disk, a closed descriptor). Not an
    OSError, so that no command's own ``except OSError`` for its files mistakes it for one of them."""


def clean_text(text: str) -> str:
    """``text`` with what UTF-8 cannot encode (a file name's or argument's undecodable bytes, which
    Python keeps as lone surrogates) replaced by U+FFFD: safe to write into a page or a file."""
    return _SURROGATE.sub("\ufffd", text)


class _GuardedStdout:
    """``sys.stdout`` while a command runs: the stream's own writes and flushes, with an OSError other than
    a broken pipe raised as StdoutError; with no stream (standard output closed, ``>&-``) the first write
    raises it. Everything else is the stream's."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self.wrote = False  # whether anything was written (what is in a shared pipe may be another's)

    def _call(self, name: str, *args: Any) -> Any:
        if self._stream is None:
            raise StdoutError("it is closed")
        try:
            return getattr(self._stream, name)(*args)
        except BrokenPipeError:
            raise  # console_main says it in one line
        except OSError as e:
            raise StdoutError(e.strerror or str(e)) from None

    def write(self, text: str) -> int:
        self.wrote = self.wrote or bool(text)
        return cast(int, self._call("write", text))

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if self._stream is not None:
            self._call("flush")

    def isatty(self) -> bool:
        return self._stream is not None and bool(self._stream.isatty())

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _quiet_stdout() -> None:
    """Point standard output at /dev/null, so the interpreter's last flush after a closed pipe says nothing."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # no real file descriptor (a test's captured stdout)
        pass


def _hold_closed(fd: int) -> None:
    """Put /dev/null on ``fd`` if it is closed (``>&-``), so that no file the command opens takes its number
    (and then receives what is meant for standard output or error)."""
    try:
        os.fstat(fd)
        return
    except OSError:
        pass
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        if devnull != fd:
            os.dup2(devnull, fd)
            os.close(devnull)
    except OSError:
        pass


def _unread_fifo_bytes(fd: int) -> int:
    """Bytes written to the pipe ``fd`` that no reader has taken yet (0 where the system cannot say)."""
    import array
    import fcntl
    import termios

    n = array.array("i", [0])
    fcntl.ioctl(fd, termios.FIONREAD, n)
    return int(n[0])


def reader_left_output_unread(stream: Any, wait: float = PIPE_WAIT_S) -> bool:
    """Whether ``stream`` is a pipe whose reader went away (``| head -1``) before taking everything written to
    it. The writes went into the pipe's buffer, so they raised no BrokenPipeError: waits up to ``wait``
    seconds for a reader still there to take the rest (False if it does, or does not within ``wait``)."""
    try:
        import select

        fd = stream.fileno()
        if not stat.S_ISFIFO(os.fstat(fd).st_mode):
            return False
        poll = select.poll()
        poll.register(fd, 0)  # POLLERR alone: the pipe has no reader left
        deadline = time.monotonic() + wait
        while _unread_fifo_bytes(fd):
            if poll.poll(0):
                return _unread_fifo_bytes(fd) > 0  # the reader is gone: nothing more will be taken
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.005)
    except (OSError, ValueError, AttributeError, ImportError):  # not a real pipe, or a system without these
        return False
    return False


def check_stdout_taken() -> None:
    """Flush standard output; BrokenPipeError if it is a pipe whose reader went away without taking everything
    (:func:`reader_left_output_unread`). A command that says on standard error what it wrote to standard
    output calls it first, so that it never says so of output its reader did not take."""
    sys.stdout.flush()
    if reader_left_output_unread(sys.stdout):
        raise BrokenPipeError


def _say(prog: str, message: str) -> int:
    _quiet_stdout()
    try:
        print(f"{prog}: {message}", file=sys.stderr)
    except OSError:
        pass
    return 1


def _exit_status(code: object) -> int:
    """The status ``sys.exit(code)`` would give the process: None 0, an int itself, anything else (a message,
    printed on standard error as Python does) 1."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    try:
        print(code, file=sys.stderr)
    except OSError:
        pass
    return 1


def console_main(prog: str) -> Callable[[Main], Main]:
    """Wrap a console script's ``main(argv) -> int``: a reader that closes the pipe early (``| head -1``), even
    after the last write, ends it with one line and status 1, so do a full disk (``> /dev/full``) and a closed
    standard output (``>&-``) once something is written to it; names or text with undecodable bytes are
    printed escaped (``\\udcff``) instead of raising UnicodeEncodeError; a usage error or ``--help`` (argparse's
    SystemExit) is returned as its status (2, 0), not raised, as ``main(argv) -> int`` promises."""

    def wrap(main: Main) -> Main:
        @functools.wraps(main)
        def run(argv: Sequence[str] | None = None) -> int:
            out, err = sys.stdout, sys.stderr
            if out is None:
                _hold_closed(1)
            if err is None:  # print(file=None) would write a message to standard output: drop it instead
                _hold_closed(2)
                sys.stderr = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 (closed below)
            for stream in (sys.stdout, sys.stderr):
                try:
                    cast(Any, stream).reconfigure(errors="backslashreplace")
                except (AttributeError, ValueError, OSError):
                    pass
            guard = _GuardedStdout(out)
            sys.stdout = cast(Any, guard)
            try:
                code = main(argv)
                guard.flush()
                if code == 0 and guard.wrote and reader_left_output_unread(out):
                    raise BrokenPipeError
                return code
            except SystemExit as e:  # argparse's usage errors (2) and --help (0): main(argv) returns its status
                try:
                    guard.flush()
                except BrokenPipeError:
                    return _say(prog, "standard output was closed before everything was written (broken pipe)")
                return _exit_status(e.code)
            except BrokenPipeError:
                return _say(prog, "standard output was closed before everything was written (broken pipe)")
            except StdoutError as e:
                return _say(prog, f"cannot write standard output: {e}")
            finally:
                sys.stdout = out
                if err is None and sys.stderr is not None:
                    sys.stderr.close()
                    sys.stderr = err

        return run

    return wrap
