"""``align-eval GOLD HYP [HYP ...]``: score alignment files against a gold alignment.

Prints one line per hypothesis (a table when there are several), or ``--format json``.
Exit status: 0 ok, 1 bad input (message ``file:line: ...``), 2 usage.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import sys
from typing import Sequence

from align.formats import (FORMATS, AlignmentFormatError, LineCountError, check_links_in_range,
                           read_alignments, read_lines, read_text_pairs, read_wpt_text, write_text_atomic)
from align.links import Alignments

from .metrics import bootstrap_ci, count_matches, paired_bootstrap, rates, score_counts


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="align-eval", description="Score word alignments against gold: AER, precision, recall, F1 "
        "(corpus level). Links are read 0-based (src, tgt) after the format's index base and any --reverse.")
    p.add_argument("gold", help="gold alignment file (talp by default: i-j sure, ipj possible, 1-based)")
    p.add_argument("hyps", nargs="+", metavar="HYP", help="hypothesis files (pharaoh, 0-based, by default); - for stdin")
    p.add_argument("--gold-format", choices=FORMATS, default="talp")
    p.add_argument("--gold-base", type=int, choices=(0, 1), help="index base of the gold (default: the format's)")
    p.add_argument("--hyp-format", choices=FORMATS, default="pharaoh")
    p.add_argument("--hyp-base", type=int, choices=(0, 1), help="index base of the hypotheses (default: the format's)")
    p.add_argument("--reverse-gold", action="store_true", help="the gold file is target first")
    p.add_argument("--reverse-hyp", action="store_true", help="the hypothesis files are target first")
    p.add_argument("--all-sure", action="store_true", help="count possible gold links as sure")
    p.add_argument("--text", help="'src ||| tgt' file: check that every link lies inside its sentence")
    p.add_argument("--naacl-ids", help="WPT text file ('<s snum=N>') or one number per line: the sentence "
                   "number of each line, for naacl files (default 1..max)")
    p.add_argument("--bootstrap", type=int, default=0, metavar="N",
                   help="N bootstrap resamples for 95%% confidence intervals (e.g. 1000)")
    p.add_argument("--paired-bootstrap", type=int, default=0, metavar="N",
                   help="N paired-bootstrap resamples testing each HYP against the first")
    p.add_argument("--seed", type=int, default=12345, help="random seed of the resampling")
    p.add_argument("--plot", metavar="FILE.png", help="heatmap of AER (needs matplotlib)")
    p.add_argument("--per-sentence", metavar="FILE.tsv",
                   help="write per-sentence AER, precision, recall, F1 (percent) of every HYP as TSV")
    p.add_argument("--format", choices=("text", "json"), default="text", dest="out_format")
    return p


def _read_ids(path: str) -> list[int]:
    lines = read_lines(path)
    if lines and lines[0].lstrip().startswith("<s"):
        return read_wpt_text(path)[0]
    ids = []
    for i, line in enumerate(lines, 1):
        if not re.fullmatch(r"\s*\d+\s*", line):
            raise AlignmentFormatError(path, i, f"found {line.strip()!r}; expected one sentence number")
        ids.append(int(line))
    return ids


def load(path: str, fmt: str, base: int | None, reverse: bool, ids, text, all_sure: bool = False) -> Alignments:
    """Read one alignment file and check it against the text, if given."""
    al = read_alignments(path, fmt, base, reverse, ids)
    if text is not None:
        check_links_in_range(al, [len(s) for s, _ in text], [len(t) for _, t in text], path)
    return al.all_sure() if all_sure else al


def evaluate(args: argparse.Namespace) -> list[dict]:
    """Score every hypothesis; returns one dict per file (rates in percent)."""
    text = read_text_pairs(args.text) if args.text else None
    ids = _read_ids(args.naacl_ids) if args.naacl_ids else None
    gold = load(args.gold, args.gold_format, args.gold_base, args.reverse_gold, ids, text, args.all_sure)
    results, counts = [], []
    for path in args.hyps:
        hyp = load(path, args.hyp_format, args.hyp_base, args.reverse_hyp, ids, text)
        if len(hyp) != len(gold):
            raise LineCountError(path, None, f"{len(hyp)} sentences; expected {len(gold)} as in the gold {args.gold}")
        c = count_matches(gold, hyp)
        score = score_counts(c)
        if args.bootstrap:
            score = dataclasses.replace(score, ci=bootstrap_ci(c, args.bootstrap, seed=args.seed))
        d = score.as_dict("<stdin>" if path == "-" else path)
        if args.paired_bootstrap and counts:
            test = paired_bootstrap(counts[0], c, args.paired_bootstrap, seed=args.seed)
            d["paired_bootstrap"] = {"baseline": results[0]["hyp"], "p_value": test["p_value"],
                                     "delta_aer": 100 * test["delta"],
                                     "delta_aer_ci": [100 * x for x in test["delta_ci"]]}
        results.append(d)
        counts.append(c)
    if args.per_sentence:
        write_per_sentence(args.per_sentence, results, counts)
    return results


def write_per_sentence(path: str, results: list[dict], counts: list) -> None:
    """TSV: one row per sentence (1-based), four columns per hypothesis file."""
    cols = ["sentence"] + [f"{r['hyp']}:{m}" for r in results for m in ("aer", "precision", "recall", "f1")]
    per = [100 * rates(c.stacked()).T for c in counts]  # each (n_sentences, 4)
    n = len(counts[0])
    rows = ["\t".join(cols)]
    for k in range(n):
        rows.append("\t".join([str(k + 1)] + [f"{v:.2f}" for p in per for v in p[k]]))
    write_text_atomic(path, "\n".join(rows) + "\n")


def format_table(results: list[dict]) -> str:
    """Aligned text table, one row per hypothesis."""
    width = max(len(r["hyp"]) for r in results)
    rows = []
    for r in results:
        ci = f" [{r['ci']['aer'][0]:.1f}, {r['ci']['aer'][1]:.1f}]" if "ci" in r else ""
        pb = ""
        if "paired_bootstrap" in r:
            pb = f"  vs first: dAER {r['paired_bootstrap']['delta_aer']:+.1f} p={r['paired_bootstrap']['p_value']:.4f}"
        rows.append(f"{r['hyp']:<{width}}  AER {r['aer']:5.1f}{ci}  P {r['precision']:5.1f}  R {r['recall']:5.1f}"
                    f"  F1 {r['f1']:5.1f}  links {r['links']}  sents {r['sentences']}{pb}")
    return "\n".join(rows)


_GRID = re.compile(r"(?P<key>.+?)[.-]layer(?P<layer>\d+)(?P<rest>.*)")


def plot_heatmap(results: list[dict], path: str) -> None:
    """Heatmap of AER: one row per file family, one column per layer (names ``...layerN...``)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise RuntimeError("--plot needs matplotlib: pip install matplotlib (or the project's [plot] extra)") from None
    import numpy as np

    cells: dict[str, dict[int, float]] = {}
    for r in results:
        name = os.path.basename(r["hyp"])
        for ext in (".gz", ".align", ".pharaoh", ".talp", ".txt"):
            name = name[: -len(ext)] if name.endswith(ext) else name
        m = _GRID.fullmatch(name)
        row, col = (m["key"] + m["rest"], int(m["layer"])) if m else (name, 0)
        cells.setdefault(row, {})[col] = r["aer"]
    rows = list(cells)
    cols = sorted({c for v in cells.values() for c in v})
    grid = np.full((len(rows), len(cols)), np.nan)
    for i, row in enumerate(rows):
        for j, col in enumerate(cols):
            grid[i, j] = cells[row].get(col, np.nan)
    fig, ax = plt.subplots(figsize=(1.2 + 0.8 * len(cols), 1.0 + 0.4 * len(rows)))
    im = ax.imshow(grid, cmap="viridis_r", aspect="auto")
    ax.set_xticks(range(len(cols)), [str(c) for c in cols] if len(cols) > 1 else ["AER"])
    if len(cols) > 1:
        ax.set_xlabel("layer")
    ax.set_yticks(range(len(rows)), rows)
    mid = np.nanmean(grid) if np.isfinite(grid).any() else 0
    for i in range(len(rows)):
        for j in range(len(cols)):
            if not np.isnan(grid[i, j]):
                # dark text on the light (low-AER) end of viridis_r, white on the dark end
                ax.text(j, i, f"{grid[i, j]:.1f}", ha="center", va="center", fontsize=8,
                        color="black" if grid[i, j] < mid else "white")
    fig.colorbar(im, ax=ax, label="AER (%)")
    fig.tight_layout()
    tmp = os.path.join(os.path.dirname(os.path.abspath(path)), f".tmp-{os.getpid()}-{os.path.basename(path)}")
    try:
        fig.savefig(tmp, dpi=120, format=os.path.splitext(path)[1][1:] or "png")
        os.replace(tmp, path)  # no partial image is ever left at the destination
    finally:
        plt.close(fig)
        if os.path.exists(tmp):
            os.unlink(tmp)


def main(argv: Sequence[str] | None = None) -> int:
    """Console entry point of ``align-eval``."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        return int(e.code or 0) if e.code in (0, None) else 2
    if sum(h == "-" for h in [args.gold, *args.hyps]) > 1:
        parser.print_usage(sys.stderr)
        print("align-eval: error: stdin (-) can be read once", file=sys.stderr)
        return 2
    try:
        results = evaluate(args)
        if args.plot:
            plot_heatmap(results, args.plot)
    except (AlignmentFormatError, ValueError) as e:
        print(f"align-eval: {e}", file=sys.stderr)
        return 1
    except RuntimeError as e:
        print(f"align-eval: {e}", file=sys.stderr)
        return 2
    if args.out_format == "json":
        print(json.dumps(results, indent=1))
    else:
        print(format_table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
