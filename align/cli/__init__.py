"""The console scripts' ``main`` functions: ``align-extract`` (:mod:`.extract`), ``align-merge``
(:mod:`.merge`) and ``align-symmetrize`` (:mod:`.symmetrize`). ``align-eval`` and ``align-view`` are
:mod:`eval`'s. Each parses arguments, calls the layers below, prints, and turns errors into exit
status 1 (bad input) or 2 (usage)."""

from .symmetrize import main  # align.cli:main (align-symmetrize) before 0.2.0; goes away in 0.3.0

__all__ = ["main"]
