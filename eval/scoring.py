"""align-eval's scoring: every hypothesis file against the gold, read in step a block at a time, with bootstrap
intervals and paired tests, and the signature of the settings (sacrebleu style). The command (:mod:`eval.cli`)
parses flags into :class:`EvalOptions`; :mod:`eval.view`, the demo and the benchmarks call this module.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

import numpy as np

from align import __version__
from align.gold import testsets
from align.io.atomic import write_text_atomic
from align.io.console import clean_text
from align.io.formats import FORMATS, AlignmentStream, TextLengthStream, raise_count_mismatch
from align.io.lines import BLOCK_LINES
from align.io.text import read_sentence_ids
from align.links.alignments import Alignments

from .metrics import MIN_SENTENCES, SentenceCounts, bootstrap_ci, count_matches, paired_bootstrap, rates, score_totals
from .provenance import check_hypothesis_set

HYP_GROUP = 128
"""Hypothesis files open at once; the gold is read once per group (once in all when it is stdin)."""


@dataclass(frozen=True)
class EvalOptions:
    """How the files are read and what is computed: everything the signature records, and the files."""

    gold: str | None = None
    hyps: tuple[str, ...] = ()
    text: str | None = None
    gold_format: str | None = None  # None: talp
    gold_base: int | None = None  # None: the format's
    hyp_format: str = "pharaoh"
    hyp_base: int | None = None
    reverse_gold: bool = False
    reverse_hyp: bool = False
    all_sure: bool = False
    naacl_ids: str | None = None
    bootstrap: int = 0
    paired_bootstrap: int = 0
    seed: int = 12345
    per_sentence: str | None = None

    @classmethod
    def of(cls, flags: Any, **changes: Any) -> EvalOptions:
        """The options of parsed command-line ``flags`` (a namespace; an attribute it lacks keeps its default),
        with ``changes``."""
        got = {f.name: getattr(flags, f.name) for f in dataclasses.fields(cls) if hasattr(flags, f.name)}
        got["hyps"] = tuple(got.get("hyps") or ())
        return cls(**{**got, **changes})


class _MemoryStream:
    """A corpus in memory read in blocks like :class:`AlignmentStream` (a named test set's gold)."""

    def __init__(self, alignments: Alignments, name: str) -> None:
        self.al, self.name, self.unit, self.sentences = alignments, name, "sentences", 0

    def take(self, n: int, lengths: tuple[np.ndarray, np.ndarray] | None = None) -> Alignments:
        k = self.sentences
        self.sentences = min(k + n, len(self.al))
        return self.al.select(np.arange(k, self.sentences))

    def count_all(self) -> int:
        return len(self.al)


class _MemoryLengths:
    """Sentence lengths in memory read in blocks like :class:`TextLengthStream` (a named test set's text)."""

    def __init__(self, lengths: tuple[np.ndarray, np.ndarray], name: str) -> None:
        self.lengths, self.name, self.unit, self.sentences = lengths, name, "sentence pairs", 0

    def take(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        k = self.sentences
        self.sentences = min(k + n, len(self.lengths[0]))
        return self.lengths[0][k : self.sentences], self.lengths[1][k : self.sentences]

    def count_all(self) -> int:
        return len(self.lengths[0])


def signature(args: EvalOptions, testset: testsets.LoadedTestSet | None = None) -> str:
    """Every setting that changes the figures, sacrebleu style:
    ``fmt:talp|base:1|hypfmt:pharaoh|hypbase:0|rev:no|allsure:no|version:0.2.0``; with a named test
    set its name, direction and checksum replace the gold file's format:
    ``test:hansards|lang:en-fr|sha:e0aa322eb361|hypfmt:pharaoh|...``."""
    gold_format = args.gold_format or "talp"
    gold_base = FORMATS[gold_format] if args.gold_base is None else args.gold_base
    hyp_base = FORMATS[args.hyp_format] if args.hyp_base is None else args.hyp_base
    rev = {(False, False): "no", (True, False): "gold", (False, True): "hyp", (True, True): "both"}[
        (bool(args.reverse_gold), bool(args.reverse_hyp))
    ]
    head = [testset.signature()] if testset is not None else [f"fmt:{gold_format}", f"base:{gold_base}"]
    parts = [
        *head,
        f"hypfmt:{args.hyp_format}",
        f"hypbase:{hyp_base}",
        f"rev:{rev}",
        f"allsure:{'yes' if args.all_sure else 'no'}",
    ]
    if "naacl" in (gold_format if testset is None else "", args.hyp_format):
        # how NAACL sentence numbers map to sentences: the named set's own ids (wpt05 starts at 26), a file, or 1..n
        ids = "set" if testset is not None and testset.ids is not None else ("file" if args.naacl_ids else "1..max")
        parts.append(f"ids:{ids}")
    if args.bootstrap:
        parts.append(f"bs:{args.bootstrap}")
    if args.paired_bootstrap:
        parts.append(f"pbs:{args.paired_bootstrap}")
    if args.bootstrap or args.paired_bootstrap:
        parts.append(f"seed:{args.seed}")
    parts.append(f"version:{__version__}")
    return "|".join(parts)


def count_in_step(
    args: EvalOptions,
    hyps: Sequence[str],
    ids: Sequence[int] | None,
    per_sentence: bool,
    block_lines: int = BLOCK_LINES,
    testset: testsets.LoadedTestSet | None = None,
) -> list[tuple[np.ndarray, int, SentenceCounts | None]]:
    """Read the gold, the hypotheses (and the --text file) in step, a block of sentences at a time.

    Returns per hypothesis its four corpus totals |A|, |S|, |A&S|, |A&P|, the number of sentences and,
    if ``per_sentence``, its :class:`SentenceCounts`. A file whose sentence count differs from the
    gold's raises LineCountError naming it. With a named ``testset`` its gold and text lengths are used.
    """
    with ExitStack() as stack:
        text: TextLengthStream | _MemoryLengths | None
        gold: AlignmentStream | _MemoryStream
        if testset is not None:
            gold = _MemoryStream(testset.gold, f"test set {testset.name} ({testset.pair})")
            text = _MemoryLengths(testset.lengths(), gold.name)
        elif args.gold is None:
            raise ValueError("no gold: give a gold file (EvalOptions.gold) or a named test set")
        else:
            gold = stack.enter_context(
                AlignmentStream(args.gold, args.gold_format or "talp", args.gold_base, args.reverse_gold, ids)
            )
            text = stack.enter_context(TextLengthStream(args.text)) if args.text else None
        streams = [
            stack.enter_context(AlignmentStream(p, args.hyp_format, args.hyp_base, args.reverse_hyp, ids)) for p in hyps
        ]
        totals = [np.zeros(4, dtype=np.int64) for _ in hyps]
        parts: list[list[SentenceCounts]] = [[] for _ in hyps]
        while True:
            lengths = text.take(block_lines) if text else None
            g = gold.take(block_lines, lengths)
            if args.all_sure:
                g = g.all_sure()
            in_step = lengths is None or len(lengths[0]) == len(g)
            for h, total, part in zip(streams, totals, parts):
                block = h.take(block_lines, lengths)
                if len(block) != len(g):
                    in_step = False
                    continue
                c = count_matches(g, block)
                total += c.totals()
                if per_sentence:
                    part.append(c)
            if not in_step:
                raise_count_mismatch(gold, [*streams, *([text] if text else [])])
            if len(g) < block_lines:
                break
        return [
            (t, gold.sentences, SentenceCounts.concatenate(p) if per_sentence else None) for t, p in zip(totals, parts)
        ]


def evaluate(
    args: EvalOptions, testset: testsets.LoadedTestSet | None = None, block_lines: int = BLOCK_LINES
) -> list[dict[str, Any]]:
    """Score every hypothesis of ``args`` against ``testset`` (a named set, loaded) or ``args.gold``; one dict per
    file (rates in percent), each with the signature."""
    if testset is not None:  # a run's file of another set or direction: its manifest says so
        for path in args.hyps:
            check_hypothesis_set(path, testset.name, testset.pair, args.reverse_hyp)
    # with -t a NAACL hypothesis is numbered as the set's own NAACL files are (WPT 2005: snum 26...)
    ids = testset.ids if testset is not None else (read_sentence_ids(args.naacl_ids) if args.naacl_ids else None)
    keep = bool(args.bootstrap or args.paired_bootstrap or args.per_sentence)
    group = len(args.hyps) if "-" in (args.gold, args.text) else HYP_GROUP
    counted = []
    for start in range(0, len(args.hyps), group):
        counted += count_in_step(args, args.hyps[start : start + group], ids, keep, block_lines, testset)
    sig = signature(args, testset)
    results: list[dict[str, Any]] = []
    counts: list[SentenceCounts] = []  # kept when resampling or --per-sentence needs them
    for path, (totals, n, c) in zip(args.hyps, counted):
        score = score_totals(totals, n)
        if args.bootstrap and c is not None:
            score = dataclasses.replace(score, ci=bootstrap_ci(c, args.bootstrap, seed=args.seed))
        d = score.as_dict("<stdin>" if path == "-" else path)
        if args.bootstrap and not score.ci and c is not None:
            d["ci"] = None  # too few sentences to resample: no interval rather than one of zero width
            d["ci_undecided"] = f"{len(c)} sentence(s); a bootstrap interval needs at least {MIN_SENTENCES}"
        if args.paired_bootstrap and counts and c is not None:
            test = paired_bootstrap(counts[0], c, args.paired_bootstrap, seed=args.seed)
            d["paired_bootstrap"] = {
                "baseline": results[0]["hyp"],
                "p_value": test["p_value"],
                "p_one_sided": test["p_one_sided"],
                "delta_aer": 100 * test["delta"],
                "delta_aer_ci": None if test["delta_ci"] is None else [100 * x for x in test["delta_ci"]],
            }
            if "undecided" in test:
                d["paired_bootstrap"]["undecided"] = test["undecided"]
        d["signature"] = sig
        if testset is not None:
            d["test_set"] = {
                k: v for k, v in testset.describe().items() if k in ("name", "langs", "sha256", "verified")
            }
        results.append(d)
        if c is not None:
            counts.append(c)
    if args.per_sentence:
        write_per_sentence(args.per_sentence, results, counts)
    return results


def write_per_sentence(path: str, results: list[dict[str, Any]], counts: list[SentenceCounts]) -> None:
    """TSV: one row per sentence (1-based), four columns per hypothesis file."""
    cols = ["sentence"] + [f"{clean_text(r['hyp'])}:{m}" for r in results for m in ("aer", "precision", "recall", "f1")]
    per = [100 * rates(c.stacked()).T for c in counts]  # each (n_sentences, 4)
    n = len(counts[0])
    rows = ["\t".join(cols)]
    for k in range(n):
        rows.append("\t".join([str(k + 1)] + [f"{v:.2f}" for p in per for v in p[k]]))
    write_text_atomic(path, "\n".join(rows) + "\n")
