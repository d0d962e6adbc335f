"""The errors of bad input in a file: ``path:line: what was found, what was expected`` (standard library)."""

from __future__ import annotations


class AlignmentFormatError(ValueError):
    """Bad input in a file: ``path:line: what was found, what was expected``."""

    def __init__(self, path: str, line: int | None, message: str) -> None:
        self.path, self.line, self.message = path, line, message
        where = f"{path}:{line}" if line is not None else path
        super().__init__(f"{where}: {message}")


class LineCountError(AlignmentFormatError):
    """Two files that must be parallel have different numbers of lines."""


class LinkRangeError(AlignmentFormatError):
    """A link points outside its sentence, or below the file's index base."""


class UsageError(ValueError):
    """Flags that do not fit (each other, the files or the model): a command's exit 2, its message one line. The one
    type every command raises and catches (it is a ValueError: catch it before ValueError)."""
