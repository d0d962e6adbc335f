"""What a model's training text held of the gold test sentences (its *protocol*), read from the model's own record,
so that figures labelled "seen once" or "never seen" come from models that saw the sentences so, and a forward and
a reverse model tabled together were trained alike (standard library only: no torch, no fairseq).

The record is written by ``data/scripts/prepare.py`` (a training run's ``work/NAME/prepare.json``) and carried into a
shipped model's ``model_config.json`` as ``training_text`` by ``data/scripts/export_model.py``.

>>> protocol_of(["data/models/enfr", "data/models/fren"])      # doctest: +SKIP
'x20'
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Mapping, Sequence
from typing import Any

PROTOCOLS = ("x20", "halves")
"""What a model's training text held of the gold test sentences: ``x20`` every one twenty times (the models shipped
up to 0.2.0, which predate the record, and any model whose record does not say test_halves), ``halves`` the
odd-numbered once and the even-numbered never (benchmarks/results/halves_protocol.md)."""


class ProtocolError(ValueError):
    """A model's record that cannot be read, models of two protocols tabled together, or a ``--protocol`` their
    record contradicts."""


def read_training_text(path: str | os.PathLike[str]) -> dict[str, Any]:
    """What a model's training text held of the gold test sentences (``test_repeat`` N, or ``test_halves``): the
    ``training_text`` of a shipped model's ``model_config.json`` (data/scripts/export_model.py writes it; given the
    folder or a file in it), or for a training checkpoint ``work/NAME/checkpoints/*.pt`` its run's
    ``work/NAME/prepare.json``; ``{}`` when neither says (the models shipped up to 0.2.0 predate the record: x20)."""
    p = os.fspath(path)
    if os.path.isdir(p):
        candidates = [os.path.join(p, "model_config.json")]
    else:  # a model's file (its config beside it), or a training checkpoint (its run's prepare.json above it)
        candidates = [os.path.join(os.path.dirname(os.path.abspath(p)), "model_config.json")]
        if p.endswith(".pt"):
            candidates += [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(p))), "prepare.json")]
    for config in candidates:
        if os.path.isfile(config):
            try:
                with open(config, encoding="utf-8") as f:
                    d = json.load(f)
            except (OSError, ValueError) as e:
                raise ProtocolError(f"{config}: not readable JSON ({e})") from None
            got = (d.get("training_text") or {}) if config.endswith("model_config.json") else d
            return {k: got[k] for k in ("test_repeat", "test_halves") if isinstance(got, dict) and got.get(k)}
    return {}


def describe_halves(record: Mapping[str, Any]) -> str:
    """One sentence of what a test-halves model's training text held of the gold (``read_training_text(...)
    ["test_halves"]``, prepare.py's counts): how many odd-numbered sentences it held once, and which it left out."""
    once, left = int(record.get("seen_once", 0)), int(record.get("odd_not_added_equal_to_an_even_one", 0))
    text = f"{once} of the {once + left} odd-numbered test sentences once in the training text"
    if left:
        text += f" ({left} equal to an even-numbered one left out: never wins)"
    return text + f", the {int(record.get('never_seen', 0))} even-numbered never"


def protocol_of(paths: Sequence[str | os.PathLike[str]], wanted: str = "auto") -> str:
    """The protocol (:data:`PROTOCOLS`) of the models at ``paths`` (folders or training checkpoints), which must
    agree: figures labelled "never seen" must come from models that never saw those sentences, and a forward and a
    reverse model of two protocols make a table of neither. ``wanted`` (not ``auto``): raise unless it is theirs.
    :class:`ProtocolError` names the model that differs."""
    got = {os.fspath(p): "halves" if read_training_text(p).get("test_halves") else "x20" for p in paths}
    kinds = sorted(set(got.values()))
    if len(kinds) > 1:
        listing = "; ".join(f"{p}: {k}" for p, k in got.items())
        raise ProtocolError(f"the models are of different test-sentence protocols ({listing}): train both alike")
    actual = kinds[0] if kinds else "x20"
    if wanted not in ("auto", actual):
        if wanted == "halves":
            raise ProtocolError(
                f"{next(iter(got))}: --protocol halves needs models of the test-halves protocol (model_config.json's "
                "training_text, or the run's prepare.json, says test_halves); these are not"
            )
        raise ProtocolError(f"--protocol {wanted}, but the models are of the {actual} protocol ({', '.join(got)})")
    return actual


def add_protocol_argument(ap: argparse.ArgumentParser, effect: str) -> None:
    """Add ``--protocol {auto,x20,halves}`` (default ``auto``) to ``ap``, one text for every command that tables
    models by protocol; ``effect`` says what the choice changes in that command. Resolve it with
    :func:`protocol_of`."""
    ap.add_argument(
        "--protocol",
        choices=("auto", *PROTOCOLS),
        default="auto",
        help="what the models saw of the gold pairs: x20 (every one twenty times: the models shipped up to 0.2.0) or "
        "halves (the odd-numbered once, the even-numbered never); auto (default): what the models' record says "
        f"(they must agree). {effect}",
    )
