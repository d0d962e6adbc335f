"""One writer of an extraction's output folder, for align-extract and the fairseq plugin alike (standard library).

Every file is written into a temporary folder beside the destination and published with one rename when the
run is done (:func:`align.extraction.outputs.publishing`), so a folder is whole or absent. A shard's lines carry
their global sentence id (``ID<TAB>payload``) and its manifest says which shard it is (:mod:`.shards`);
``align-merge`` joins the shards into the unsharded run's bytes.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from contextlib import ExitStack
from types import TracebackType
from typing import IO, Any

from .outputs import publishing
from .shards import shard_manifest, write_manifest


class OutputFolder:
    """Files of one output folder (or one shard's), opened by name, written line by line, published whole.

    Use as a context manager: ``open`` the files first (every file exists even for an empty input), ``write``
    lines, then ``finish`` with the manifest's fields; an error inside the block removes the temporary folder.
    """

    def __init__(self, dest: str, overwrite: bool = False, shard: tuple[int, int] | None = None) -> None:
        self.dest, self.overwrite, self.shard = dest, overwrite, shard
        self._stack = ExitStack()
        self._files: dict[str, IO[str]] = {}
        self.tmp = ""

    def __enter__(self) -> OutputFolder:
        self.tmp = self._stack.enter_context(publishing(self.dest, self.overwrite))
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self._close_files()
        self._stack.__exit__(kind, error, tb)  # publishes on success, removes the temporary folder on an error

    def open(self, names: Iterable[str]) -> None:
        """Create (empty) every named file, in order."""
        for name in names:
            if name not in self._files:
                self._files[name] = open(os.path.join(self.tmp, name), "w", encoding="utf-8", newline="\n")

    def write(self, name: str, index: int, payload: str) -> None:
        """One line of file ``name`` for sentence ``index`` (0-based, global): ``ID<TAB>`` first in a shard."""
        self._files[name].write((f"{index}\t" if self.shard is not None else "") + payload + "\n")

    @property
    def names(self) -> list[str]:
        """The files opened, in order."""
        return list(self._files)

    def _close_files(self) -> None:
        for f in self._files.values():
            if not f.closed:
                f.close()

    def finish(self, sentences: int, signature: Mapping[str, Any], total: int | None = None, **extra: Any) -> None:
        """Close the files and write ``manifest.json``: a shard's (with ``total``, the input's line count) or the
        whole run's; ``extra`` fields join it (``model_path``, ...)."""
        self._close_files()
        if self.shard is not None:
            k, n = self.shard
            man = shard_manifest(k, n, sentences if total is None else total, sentences, self.names, dict(signature))
        else:
            man = {"sentences": sentences, "files": sorted(self.names), "signature": dict(signature)}
        man.update(extra)
        write_manifest(self.tmp, man)
