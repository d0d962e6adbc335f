"""``align-view TEXT HYP [HYP ...]``: one self-contained HTML page to look at alignments in a browser.

Every hypothesis beside the gold (if given), sentence by sentence: the source-target grid with each
link marked as a sure hit (●), possible hit (◐), false link (✕) or missed sure link (○) (unhit
possible gold links: ·), soft scores (``--scores``, see :mod:`align.io.softscores`) as cell shading,
per-sentence AER, two methods side by side, sorting by AER, by the AER difference of two methods,
by length or by each pair's sentence score (``--sentence-scores``: a corpus's likeliest noise first), a word filter, keys j/k (or the arrow keys) and links to one sentence (``#s=17``).

The data is embedded once as JSON in a ``<script type="application/json">`` (``<``, ``>``, ``&``,
U+2028 and U+2029 escaped as ``\\u003c`` ...; links as base-64 cell numbers, :func:`encode_cells`),
and a little plain JS (``view_template.html``) draws only the current sentence's grids and one
page of the sentence list; every word goes into the page as text (``textContent``), never as HTML.
No network, no CDN: the file opens from disk.

Scores are :mod:`eval.metrics`' (corpus AER, precision, recall, F1 and per-sentence AER, equal to
``align-eval`` and its ``--per-sentence``), read with :mod:`align.io.formats`' readers and the same
format flags. Exit status: 0 ok, 1 bad input (``file:line: ...``), 2 usage.
"""

from __future__ import annotations

import argparse
import html
import json
import os
import re
import sys
from collections.abc import Mapping, Sequence
from importlib import resources
from typing import Any

import numpy as np

from align import __version__
from align.gold import testsets
from align.io.atomic import write_text_atomic
from align.io.console import clean_text, console_main
from align.io.errors import AlignmentFormatError, LineCountError, UsageError
from align.io.formats import read_alignments
from align.io.lines import strip_compression
from align.io.softscores import SUFFIX as SCORES_SUFFIX, iter_scores_meta, quantize_scores
from align.io.text import check_links_in_range, read_sentence_ids, read_text_pairs
from align.links.alignments import Alignments

from .cli import add_format_args, add_testset_args, load_testset, parse_flags
from .metrics import count_matches, rates, score_counts
from .provenance import check_hypothesis_set, check_run_input, lines_sha256
from .scoring import EvalOptions, signature

TEMPLATE = "view_template.html"
"""The page's HTML, CSS and JS (package data of ``eval``), with ``{{TITLE}}`` and ``{{DATA}}`` slots."""

_JSON_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
_JSON_ESCAPE_RE = re.compile("[<>&\u2028\u2029]")


def embed_json(obj: Any) -> str:
    """JSON text safe inside ``<script type="application/json">``: no ``</script>``, no ``<!--``, no
    character that ends a line in old JS parsers. The five characters only occur inside JSON strings,
    where ``\\u003c`` and the like decode to the same text."""
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return _JSON_ESCAPE_RE.sub(lambda m: _JSON_ESCAPES[m[0]], text)


def default_name(path: str, suffix: str = ".align") -> str:
    """A hypothesis' name from its file name: ``dump/norm-awi-layer1.align.gz`` (or ``.xz``, ``.zst``) ->
    ``norm-awi-layer1``."""
    name = strip_compression(os.path.basename(str(path)))
    return name[: -len(suffix)] if name.endswith(suffix) and len(name) > len(suffix) else name


def parse_named(spec: str, suffix: str = ".align") -> tuple[str, str]:
    """``NAME=PATH`` -> (NAME, PATH); a plain PATH (or one that exists as a file) -> (its default name, PATH)."""
    name, sep, path = spec.partition("=")
    if sep and name and path and os.sep not in name and not os.path.exists(spec):
        return name, path
    return default_name(spec, suffix), spec


CELL_DIGITS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
"""The 64 digits of the page's link encoding (base64url's alphabet: nothing to escape in JSON or HTML)."""


def cell_width(src_len: int, tgt_len: int) -> int:
    """Digits per link in a sentence of ``src_len`` x ``tgt_len`` words: the fewest w with 64**w >= S*T (at least 1)."""
    w, cap = 1, 64
    while cap < src_len * tgt_len:
        w, cap = w + 1, cap * 64
    return w


def encode_cells(al: Alignments, src_len: Sequence[int], tgt_len: Sequence[int]) -> list[str]:
    """Each sentence's links as one string: link ``(s, t)`` is the cell ``t * S + s`` of the (tgt, src)
    grid written in :data:`CELL_DIGITS`, most significant first, in :func:`cell_width` digits; the
    links follow each other without separator (``(0, 0), (1, 1)`` of a 3 x 3 sentence: ``"AE"``).
    About a third of the size of ``"0-0 1-1"``: a 10,000-sentence page stays a few MB."""
    n = len(al)
    S = np.asarray(src_len, dtype=np.int64)
    T = np.asarray(tgt_len, dtype=np.int64)
    width = np.array([cell_width(int(a), int(b)) for a, b in zip(S, T)], dtype=np.int64)
    sent = al.sentence_ids()
    cell = al.tgt.astype(np.int64) * S[sent] + al.src.astype(np.int64)
    top = int(width.max()) if n else 1
    digits = np.stack([(cell // 64 ** (top - 1 - i)) % 64 for i in range(top)], axis=1).reshape(-1, top)
    keep = np.arange(top)[None, :] >= (top - width[sent])[:, None]  # the last `width` digits of each link
    text = np.frombuffer(CELL_DIGITS.encode("ascii"), dtype=np.uint8)[digits[keep]].tobytes().decode("ascii")
    ends = np.cumsum(np.diff(al.offsets) * width)
    starts = ends - np.diff(al.offsets) * width
    return [text[a:b] for a, b in zip(starts.tolist(), ends.tolist())]


def decode_cells(code: str, src_len: int, tgt_len: int) -> list[tuple[int, int]]:
    """The ``(s, t)`` links of one string of :func:`encode_cells` (the page's JS does the same)."""
    w = cell_width(src_len, tgt_len)
    out = []
    for i in range(0, len(code), w):
        c = 0
        for ch in code[i : i + w]:
            c = 64 * c + CELL_DIGITS.index(ch)
        out.append((c % src_len, c // src_len))
    return out


def _gold_cells(gold: Alignments, src_len: Sequence[int], tgt_len: Sequence[int]) -> list[str]:
    """Gold links per sentence: the sure ones, then ``.`` and the possible ones if there are any."""
    sure = encode_cells(_subset(gold, gold.sure), src_len, tgt_len)
    possible = encode_cells(_subset(gold, ~gold.sure), src_len, tgt_len)
    return [f"{s}.{p}" if p else s for s, p in zip(sure, possible)]


def _subset(al: Alignments, keep: np.ndarray) -> Alignments:
    sent = al.sentence_ids()[keep]
    return Alignments.from_arrays(sent, al.src[keep], al.tgt[keep], None, len(al))


def page_data(
    pairs: Sequence[tuple[Sequence[str], Sequence[str]]],
    hyps: Mapping[str, Alignments],
    gold: Alignments | None = None,
    scores: Mapping[str, Sequence[np.ndarray]] | None = None,
    title: str = "align-view",
    sig: str | None = None,
    paths: Mapping[str, str] | None = None,
    sentence_scores: Sequence[float] | None = None,
) -> dict[str, Any]:
    """The page's data: words (each side joined by single spaces), links (:func:`encode_cells`; the
    gold's possible links after a ``.``), soft scores (base64 of the (T, S) bytes), corpus scores
    (rates in percent) and per-sentence AER (percent, to 0.01, as ``align-eval --per-sentence``).

    ``pairs``: (source words, target words) per sentence; ``hyps``: name -> links, 0-based
    ``(src, tgt)`` in the gold's orientation; ``scores``: name (one of ``hyps``) -> one
    (tgt_len, src_len) uint8 matrix per sentence (:mod:`align.io.softscores`); ``sentence_scores``: (n,) each
    pair's sentence score (``align-extract --sentence-scores``), to 4 decimals, for the list and the sort. ValueError
    if a corpus or the sentence scores have another number of sentences than ``pairs`` or a matrix another shape
    than its sentence.
    """
    import base64

    n = len(pairs)
    scores = dict(scores or {})
    for name, al in [*hyps.items(), *([("gold", gold)] if gold is not None else [])]:
        if len(al) != n:
            raise ValueError(f"{name}: {len(al)} sentences; expected {n} as in the text")
    if sentence_scores is not None and len(sentence_scores) != n:
        raise ValueError(f"sentence scores: {len(sentence_scores)}; expected {n} as in the text")
    unknown = [s for s in scores if s not in hyps]
    if unknown:
        raise ValueError(f"soft scores for {', '.join(unknown)}; expected names of hypotheses: {', '.join(hyps)}")
    src_len = [len(s) for s, _ in pairs]
    tgt_len = [len(t) for _, t in pairs]
    hyp_rows: list[dict[str, Any]] = []
    links: list[list[str]] = []
    per_sentence: list[list[float]] = []
    soft: list[list[str] | None] = []
    for name, al in hyps.items():
        row = {"name": name, "path": (paths or {}).get(name, name), "links": int(al.n_links)}
        if gold is not None:
            counts = count_matches(gold, al)
            row.update(score_counts(counts).as_dict())
            row["name"] = name
            per_sentence.append([round(float(x), 2) for x in 100 * rates(counts.stacked())[0]])
        hyp_rows.append(row)
        links.append(encode_cells(al, src_len, tgt_len))
        mats = scores.get(name)
        if mats is None:
            soft.append(None)
            continue
        if len(mats) != n:
            raise ValueError(f"soft scores of {name}: {len(mats)} matrices; expected {n} as in the text")
        enc = []
        for k, (m, (s, t)) in enumerate(zip(mats, pairs)):
            m = np.asarray(m)
            if m.shape != (len(t), len(s)) or m.dtype != np.uint8:
                raise ValueError(
                    f"soft scores of {name}, sentence {k + 1}: a {m.dtype} matrix of shape {m.shape}; "
                    f"expected uint8 of shape (tgt, src) = ({len(t)}, {len(s)})"
                )
            enc.append(base64.b64encode(m.tobytes()).decode("ascii"))
        soft.append(enc)
    return {
        "version": 1,
        "title": title,
        "signature": sig,
        "src": [" ".join(s) for s, _ in pairs],
        "tgt": [" ".join(t) for _, t in pairs],
        "gold": _gold_cells(gold, src_len, tgt_len) if gold is not None else None,
        "hyps": hyp_rows,
        "links": links,
        "aer": per_sentence if gold is not None else None,
        "scores": soft,
        "sent": None if sentence_scores is None else [round(float(x), 4) for x in sentence_scores],
    }


def render_page(data: dict[str, Any]) -> str:
    """The HTML page of :func:`page_data`'s data: the template with the title and the escaped JSON filled in."""
    template = resources.files("eval").joinpath(TEMPLATE).read_text(encoding="utf-8")
    slots = {"{{TITLE}}": html.escape(str(data.get("title", "align-view"))), "{{DATA}}": embed_json(data)}
    return re.sub(r"\{\{TITLE\}\}|\{\{DATA\}\}", lambda m: slots[m[0]], template)  # one pass: no slot in a slot


def build_page(*args: Any, **kwargs: Any) -> str:
    """The whole self-contained page: :func:`render_page` of :func:`page_data` (the same arguments)."""
    return render_page(page_data(*args, **kwargs))


# -- the command --------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="align-view",
        description="Write one self-contained HTML page showing word alignments sentence by "
        "sentence, every hypothesis beside the gold: sure/possible hits, false and missed links, soft scores, "
        "per-sentence AER, sorting, filtering. Flags as align-eval's.",
    )
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    p.usage = "align-view [-h] (TEXT [--gold GOLD] | -t NAME [-l SRC-TGT]) [NAME=]HYP [[NAME=]HYP ...] [options]"
    p.add_argument(
        "files",
        nargs="*",
        metavar="[TEXT] [NAME=]HYP",
        help="the 'src ||| tgt' text file (one sentence pair per line; - for stdin), then hypothesis "
        "files (pharaoh, 0-based, by default; NAME defaults to the file name without .align); only "
        "hypotheses with -t",
    )
    p.add_argument("--gold", help="gold alignment file (talp by default: i-j sure, ipj possible, 1-based)")
    add_testset_args(p)
    add_format_args(p)
    p.add_argument(
        "--naacl-ids",
        help="WPT text file ('<s snum=N>') or one number per line: the sentence number "
        "of each line, for naacl files (default 1..number of text lines)",
    )
    p.add_argument(
        "--scores",
        action="append",
        default=[],
        metavar="[NAME=]PATH",
        help=f"soft scores ({SCORES_SUFFIX}, from align-extract --save-scores) of hypothesis NAME "
        f"(default: the file name without {SCORES_SUFFIX}), shown as cell shading; repeatable",
    )
    p.add_argument(
        "--sentence-scores",
        metavar="TSV",
        help="each pair's sentence score (sentence_scores.tsv of align-extract --sentence-scores on the same text): "
        "shown in the list, and a sort 'sentence score, lowest first' (a corpus's likeliest noise first)",
    )
    p.add_argument("-o", "--out", default="view.html", help="the HTML file to write (default: view.html)")
    p.add_argument("--title", help="the page's title (default: align-view: TEXT)")
    p.add_argument(
        "--format", choices=("text", "json"), default="text", dest="out_format", help="the summary line's format"
    )
    return p


def split_files(args: argparse.Namespace) -> None:
    """``files`` -> ``text`` and ``hyps`` (all hypotheses with ``-t``); UsageError when too few are given."""
    files = list(args.files)
    if getattr(args, "test_set", None):
        args.text, args.hyps = None, files
    else:
        args.text, args.hyps = (files[0], files[1:]) if files else (None, [])
    if not args.hyps:
        raise UsageError("give a TEXT file and at least one HYP, or -t NAME and at least one HYP")


def _named_inputs(args: argparse.Namespace) -> tuple[dict[str, str], dict[str, str]]:
    hyps: dict[str, str] = {}
    for spec in args.hyps:
        name, path = parse_named(spec)
        if name in hyps:
            raise UsageError(f"two hypotheses named {name!r} ({hyps[name]} and {path}); name them NAME=PATH")
        hyps[name] = path
    scores: dict[str, str] = {}
    for spec in args.scores:
        # NAME.probs.jsonl (align-extract --calibration) belongs to NAME as NAME.scores.jsonl does
        name, path = parse_named(spec, ".probs.jsonl" if spec.endswith(".probs.jsonl") else SCORES_SUFFIX)
        if name not in hyps:
            raise UsageError(f"--scores {spec}: no hypothesis named {name!r}; expected one of {', '.join(hyps)}")
        if name in scores:
            raise UsageError(f"--scores given twice for {name!r}")
        scores[name] = path
    paths = [args.text, *hyps.values(), *scores.values(), args.gold, args.naacl_ids, args.sentence_scores]
    if sum(p == "-" for p in paths) > 1:
        raise UsageError("stdin (-) can be read once")
    return hyps, scores


def _read_soft(path: str, pairs: Sequence[tuple[Sequence[str], Sequence[str]]], text_name: str) -> list[np.ndarray]:
    out = []
    for k, (m, reverse) in enumerate(iter_scores_meta(path)):
        # float32 lines shaded as 8-bit ones (row max 255); a reverse model's (S, T) matrix, its rows scaled as
        # that model wrote them, turned round to the pair's (T, S) beside its source-first links
        m = m if m.dtype == np.uint8 else quantize_scores(m)
        m = m.T if reverse else m
        if k >= len(pairs):
            raise LineCountError(
                path, None, f"more than {len(pairs)} lines; expected {len(pairs)} as in the text {text_name}"
            )
        s, t = pairs[k]
        if m.shape != (len(t), len(s)):
            raise AlignmentFormatError(
                path,
                k + 1,
                f"a {m.shape[0]}x{m.shape[1]} (tgt x src) matrix; expected "
                f"{len(t)}x{len(s)}, the word counts of sentence {k + 1} in {text_name}",
            )
        out.append(m)
    if len(out) != len(pairs):
        raise LineCountError(path, None, f"{len(out)} lines; expected {len(pairs)} as in the text {text_name}")
    return out


def load(args: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    """Read and check every input named by the arguments; returns (page HTML, its summary fields)."""
    if not hasattr(args, "hyps"):
        split_files(args)
    hyp_paths, score_paths = _named_inputs(args)
    testset = load_testset(args, {"--gold": args.gold})
    if testset is not None:
        text_name = f"test set {testset.name} ({testset.pair})"
        pairs = list(zip(testset.src, testset.tgt))
    else:
        text_name = "<stdin>" if args.text == "-" else args.text
        pairs = read_text_pairs(args.text)
    n = len(pairs)
    src_len = [len(s) for s, _ in pairs]
    tgt_len = [len(t) for _, t in pairs]
    ids = (
        testset.ids
        if testset is not None
        else (read_sentence_ids(args.naacl_ids) if args.naacl_ids else list(range(1, n + 1)))
    )

    def read(path: str, fmt: str, base: int | None, reverse: bool) -> Alignments:
        al = read_alignments(path, fmt, base, reverse, ids if fmt == "naacl" else None)
        name = "<stdin>" if path == "-" else path
        if len(al) != n:
            raise LineCountError(name, None, f"{len(al)} sentences; expected {n} as in the text {text_name}")
        check_links_in_range(al, src_len, tgt_len, name)
        return al

    gold = testset.gold if testset is not None else None
    if args.gold:
        gold = read(args.gold, args.gold_format or "talp", args.gold_base, args.reverse_gold)
    if gold is not None and args.all_sure:
        gold = gold.all_sure()
    if testset is not None:  # a run's file of another set or direction: its manifest says so
        for path in hyp_paths.values():
            check_hypothesis_set(path, testset.name, testset.pair, args.reverse_hyp)
        for path in [*score_paths.values(), *([args.sentence_scores] if args.sentence_scores else [])]:
            check_hypothesis_set(path, testset.name, testset.pair)
    elif args.text != "-" and os.path.isfile(args.text):  # a run's file of another text of as many lines
        digest = lines_sha256(args.text)
        for path in [*hyp_paths.values(), *score_paths.values(), args.sentence_scores]:
            if path:
                check_run_input(path, args.text, digest)
    hyps = {name: read(path, args.hyp_format, args.hyp_base, args.reverse_hyp) for name, path in hyp_paths.items()}
    soft = {name: _read_soft(path, pairs, text_name) for name, path in score_paths.items()}
    sent = None
    if args.sentence_scores:
        from align.confidence.filtering import read_scores  # numpy only

        sent, _ = read_scores(args.sentence_scores)
        if len(sent) != n:
            raise LineCountError(
                args.sentence_scores, None, f"{len(sent)} lines; expected {n}, one per pair of the text {text_name}"
            )
    opts = EvalOptions.of(args, bootstrap=0, paired_bootstrap=0, seed=0, naacl_ids=args.naacl_ids or None)
    sig = signature(opts, testset) if gold is not None else None
    title = (
        args.title
        if args.title is not None
        else (
            f"align-view: {testset.name} {testset.pair}"
            if testset is not None
            else f"align-view: {os.path.basename(text_name)}"
        )
    )
    # a title or file name with bytes that are not UTF-8 shows them as U+FFFD; it never stops the page
    hyps, soft = {clean_text(k): v for k, v in hyps.items()}, {clean_text(k): v for k, v in soft.items()}
    page = build_page(
        pairs,
        hyps,
        gold,
        soft,
        clean_text(title),
        sig,
        {clean_text(k): clean_text(v) for k, v in hyp_paths.items()},
        sentence_scores=sent,
    )
    return page, {"sentences": n, "hypotheses": len(hyps), "gold": gold is not None, "scores": sorted(soft),
                  "sentence_scores": sent is not None}  # fmt: skip


@console_main("align-view")
def main(argv: Sequence[str] | None = None) -> int:
    """Console entry point of ``align-view``."""
    parser = build_parser()
    args = parse_flags(parser, argv)
    try:
        split_files(args)
        page, summary = load(args)
    except (UsageError, testsets.UnknownTestSetError) as e:
        parser.print_usage(sys.stderr)
        print(f"align-view: error: {e}", file=sys.stderr)
        return 2
    except (AlignmentFormatError, ValueError) as e:
        print(f"align-view: {e}", file=sys.stderr)
        return 1
    try:
        write_text_atomic(args.out, page)
    except BrokenPipeError:
        raise  # console_main says it in one line
    except OSError as e:
        print(f"align-view: cannot write: {e}", file=sys.stderr)
        return 1
    size = len(page.encode("utf-8"))
    stream = sys.stderr if args.out == "-" else sys.stdout  # the page itself went to stdout
    if args.out_format == "json":
        print(
            json.dumps(
                {
                    "path": args.out,
                    "sentences": summary["sentences"],
                    "hypotheses": summary["hypotheses"],
                    "bytes": size,
                    "gold": summary["gold"],
                    "scores": summary["scores"],
                    "sentence_scores": summary["sentence_scores"],
                }
            ),
            file=stream,
        )
    else:
        n, h = summary["sentences"], summary["hypotheses"]
        print(
            f"wrote {args.out}: {n} sentence{'' if n == 1 else 's'}, {h} hypothes{'is' if h == 1 else 'es'}"
            f"{' and the gold' if summary['gold'] else ''}, {size / 1024:.0f} KB",
            file=stream,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
