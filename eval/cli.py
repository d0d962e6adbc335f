"""``align-eval GOLD HYP [HYP ...]`` or ``align-eval -t NAME HYP [HYP ...]``: score alignment files against a gold alignment.

Prints one line per hypothesis (a table when there are several) and the settings signature, or
``--format json``. The files are read in step, a block of sentences at a time, and only four counts
per sentence are kept (|A|, |S|, |A&S|, |A&P|; only the corpus totals unless resampling or
``--per-sentence`` needs them), so memory does not grow with the number of links.
Exit status: 0 ok, 1 bad input (message ``file:line: ...``), 2 usage.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections.abc import Sequence
from contextlib import ExitStack
from typing import Any

import numpy as np

from align import __version__
from align.gold import testsets
from align.io.atomic import write_text_atomic
from align.io.console import clean_text, console_main
from align.io.errors import AlignmentFormatError
from align.io.formats import FORMATS, AlignmentStream, TextLengthStream, raise_count_mismatch
from align.io.lines import BLOCK_LINES
from align.io.text import read_sentence_ids
from align.links.alignments import Alignments

from .metrics import MIN_SENTENCES, SentenceCounts, bootstrap_ci, count_matches, paired_bootstrap, rates, score_totals
from .plot import plot_heatmap
from .provenance import check_hypothesis_set

HYP_GROUP = 128
"""Hypothesis files open at once; the gold is read once per group (once in all when it is stdin)."""


def _count(text: str) -> int:
    n = int(text)
    if n < 0:
        raise argparse.ArgumentTypeError(f"{n} is negative; expected a number of resamples >= 0")
    return n


def _seed(text: str) -> int:
    """--seed: a non-negative integer (numpy's generators take no negative seed); a usage error otherwise."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text}: expected an integer >= 0") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"{n} is negative; expected an integer >= 0 (the resampling's seed)")
    return n


def parse_flags(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> argparse.Namespace | int:
    """The parsed flags, or the exit status argparse ended with: 0 after --help, 2 for a usage error."""
    try:
        return parser.parse_intermixed_args(argv)  # GOLD -l fr-en HYP: positionals on both sides of a flag
    except SystemExit as e:
        return 0 if e.code in (0, None) else 2


def add_format_args(p: argparse.ArgumentParser) -> None:
    """The gold and hypothesis file-format flags that align-eval and align-view share."""
    p.add_argument("--gold-format", choices=FORMATS, help="default talp")
    p.add_argument("--gold-base", type=int, choices=(0, 1), help="index base of the gold (default: the format's)")
    p.add_argument("--hyp-format", choices=FORMATS, default="pharaoh")
    p.add_argument("--hyp-base", type=int, choices=(0, 1), help="index base of the hypotheses (default: the format's)")
    p.add_argument("--reverse-gold", action="store_true", help="the gold file is target first")
    p.add_argument("--reverse-hyp", action="store_true", help="the hypothesis files are target first")
    p.add_argument("--all-sure", action="store_true", help="count possible gold links as sure")


def add_testset_args(p: argparse.ArgumentParser) -> None:
    """The named-test-set flags that align-eval and align-view share (:mod:`align.gold.testsets`)."""
    g = p.add_argument_group("named test sets (align-eval --list shows them)")
    g.add_argument(
        "-t",
        "--test-set",
        metavar="NAME",
        help="score against test set NAME (its gold and text, "
        f"checksums verified) instead of a GOLD file: {', '.join(testsets.TESTSETS)}",
    )
    g.add_argument(
        "-l",
        "--langs",
        metavar="SRC-TGT",
        help="the hypotheses' direction, e.g. fr-en for hansards "
        "(en-fr): the gold is flipped to it (default: the set's own order)",
    )
    g.add_argument(
        "--testsets-dir",
        metavar="DIR",
        help=f"folder of the sets that are not shipped, laid out "
        f"DIR/FOLDER/FILE (default ${testsets.ENV}, else ${testsets.SHARED_ENV}/gold)",
    )
    g.add_argument(
        "--no-verify",
        action="store_true",
        help="use a set whose files' sha256 differ from the registry's (the signature then says sha:unverified)",
    )


def load_testset(args: argparse.Namespace, file_flags: dict[str, Any] | None = None) -> testsets.LoadedTestSet | None:
    """The test set named by ``-t`` (None without it); UsageError for flags that contradict it (the gold
    format flags, and the caller's ``file_flags``: flag -> value, such as ``{"--text": args.text}``)."""
    name = getattr(args, "test_set", None)
    if not name:
        extra = [
            f
            for f, v in (("-l", getattr(args, "langs", None)), ("--no-verify", getattr(args, "no_verify", False)))
            if v
        ]
        if extra:
            raise UsageError(f"{', '.join(extra)} applies to a named test set; give -t NAME")
        return None
    gold_flags = [
        f
        for f, v in (
            ("--gold-format", args.gold_format),
            ("--gold-base", args.gold_base is not None),
            ("--reverse-gold", args.reverse_gold),
            ("--naacl-ids", args.naacl_ids),
            *(file_flags or {}).items(),
        )
        if v
    ]
    if gold_flags:
        raise UsageError(
            f"{', '.join(gold_flags)} describe a gold file or its numbering; -t {name} brings its own gold and text, "
            "normalised (use -l for the direction)"
        )
    testsets.get(name)  # an unknown name is a usage error (UnknownTestSetError), before any file is read
    return testsets.load(name, args.langs, args.testsets_dir, not args.no_verify)


class UsageError(Exception):
    """Arguments that contradict each other (exit 2)."""


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


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="align-eval",
        usage="align-eval [-h] (GOLD | -t NAME [-l SRC-TGT]) HYP [HYP ...] [options]\n       align-eval --list",
        description="Score word alignments against gold: AER, precision, recall, F1 "
        "(corpus level). Links are read 0-based (src, tgt) after the format's index base and any --reverse.",
        epilog="Examples: align-eval gold.talp my.align | align-eval -t hansards my.align | "
        "align-eval -t hansards -l fr-en fren.align | align-eval --list. "
        "Exit status: 0 ok, 1 bad input (file:line: ...), 2 usage.",
    )
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    p.add_argument(
        "files",
        nargs="*",
        metavar="[GOLD] HYP",
        help="the gold alignment file (talp by default: i-j "
        "sure, ipj possible, 1-based), then hypothesis files (pharaoh, 0-based, by default); only "
        "hypotheses with -t; - for stdin",
    )
    add_testset_args(p)
    p.add_argument(
        "--list",
        action="store_true",
        help="list the named test sets (languages, pairs, links, where their files are) and exit",
    )
    add_format_args(p)
    p.add_argument(
        "--text",
        help="'src ||| tgt' file: check that every link lies inside its "
        "sentence (-t NAME checks against the set's own text)",
    )
    p.add_argument(
        "--naacl-ids",
        help="WPT text file ('<s snum=N>') or one number per line: the sentence "
        "number of each line, for naacl files (default 1..max)",
    )
    p.add_argument(
        "--bootstrap",
        type=_count,
        default=0,
        metavar="N",
        help="N bootstrap resamples for 95%% confidence intervals (e.g. 1000)",
    )
    p.add_argument(
        "--paired-bootstrap",
        type=_count,
        default=0,
        metavar="N",
        help="N paired-bootstrap resamples testing each HYP against the first",
    )
    p.add_argument("--seed", type=_seed, default=12345, help="random seed of the resampling (>= 0)")
    p.add_argument("--plot", metavar="FILE.png", help="heatmap of AER (needs matplotlib)")
    p.add_argument(
        "--per-sentence",
        metavar="FILE.tsv",
        help="write per-sentence AER, precision, recall, F1 (percent) of every HYP as TSV",
    )
    p.add_argument("--format", choices=("text", "json"), default="text", dest="out_format")
    return p


def signature(args: argparse.Namespace, testset: testsets.LoadedTestSet | None = None) -> str:
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
    args: argparse.Namespace,
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


def split_files(args: argparse.Namespace) -> None:
    """``files`` -> ``gold`` and ``hyps`` (all hypotheses with ``-t``); UsageError when too few are given."""
    files = list(args.files)
    if getattr(args, "test_set", None):
        args.gold, args.hyps = None, files
    else:
        args.gold, args.hyps = (files[0], files[1:]) if files else (None, [])
    if not args.hyps:
        raise UsageError("give a GOLD file and at least one HYP, or -t NAME and at least one HYP (--list shows names)")


def evaluate(
    args: argparse.Namespace, block_lines: int = BLOCK_LINES, testset: testsets.LoadedTestSet | None = None
) -> list[dict[str, Any]]:
    """Score every hypothesis; returns one dict per file (rates in percent), each with the signature.
    ``testset``: the loaded ``-t`` set, if the caller has it (else it is loaded here)."""
    if not hasattr(args, "hyps"):
        split_files(args)
    if testset is None:
        testset = load_testset(args, {"--text": args.text})
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


def format_table(results: list[dict[str, Any]]) -> str:
    """Aligned text table, one row per hypothesis."""
    width = max(len(r["hyp"]) for r in results)
    rows = []
    for r in results:
        ci = (
            f" [{r['ci']['aer'][0]:.1f}, {r['ci']['aer'][1]:.1f}]"
            if r.get("ci")
            else " [no interval: too few sentences]"
            if "ci" in r
            else ""
        )
        pb = ""
        if "paired_bootstrap" in r:
            t = r["paired_bootstrap"]
            if t["p_value"] is None:
                pb = f"  vs first: dAER {t['delta_aer']:+.1f}, the test cannot decide ({t['undecided']})"
            else:
                pb = (
                    f"  vs first: dAER {t['delta_aer']:+.1f} [{t['delta_aer_ci'][0]:+.1f}, "
                    f"{t['delta_aer_ci'][1]:+.1f}] p={t['p_value']:.4f} (two-sided)"
                )
        rows.append(
            f"{r['hyp']:<{width}}  AER {r['aer']:5.1f}{ci}  P {r['precision']:5.1f}  R {r['recall']:5.1f}"
            f"  F1 {r['f1']:5.1f}  links {r['links']}  sents {r['sentences']}{pb}"
        )
    return "\n".join(rows)


@console_main("align-eval")
def main(argv: Sequence[str] | None = None) -> int:
    """Console entry point of ``align-eval``."""
    parser = build_parser()
    args = parse_flags(parser, argv)
    if isinstance(args, int):
        return args
    if args.list:
        rows = testsets.listing(args.testsets_dir)
        print(json.dumps(rows, indent=1) if args.out_format == "json" else testsets.format_listing(rows))
        return 0
    try:
        split_files(args)
        if sum(h == "-" for h in [args.gold, *args.hyps, args.text, args.naacl_ids]) > 1:
            raise UsageError("stdin (-) can be read once")
        testset = load_testset(args, {"--text": args.text})
    except (UsageError, testsets.UnknownTestSetError) as e:
        parser.print_usage(sys.stderr)
        print(f"align-eval: error: {e}", file=sys.stderr)
        return 2
    except (AlignmentFormatError, ValueError) as e:  # a set's files missing or changed
        print(f"align-eval: {e}", file=sys.stderr)
        return 1
    try:
        results = evaluate(args, testset=testset)
        if args.plot:
            plot_heatmap(results, args.plot)
    except (AlignmentFormatError, ValueError) as e:
        print(f"align-eval: {e}", file=sys.stderr)
        return 1
    except OSError as e:  # an output (--per-sentence, --plot) that cannot be written
        print(f"align-eval: cannot write: {e}", file=sys.stderr)
        return 1
    except RuntimeError as e:
        print(f"align-eval: {e}", file=sys.stderr)
        return 2
    if args.out_format == "json":
        print(json.dumps(results, indent=1))
    else:
        print(format_table(results))
        print(f"signature: {results[0]['signature']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
