"""Shared pieces of the RWTH experiment and the AER curves: gold loading, scoring many
hypotheses, Holm's correction (numpy-free where possible; no torch)."""

from __future__ import annotations

import os

from align.formats import read_alignments, read_text_pairs
from align.links import Alignments

from .metrics import count_matches, score_counts


def load_gold(gold_dir: str, pair: str, limit: int = 0) -> tuple[list, Alignments]:
    """``PAIR.src-tgt`` (lowercased words, first side first) and ``PAIR.gold`` (talp) of ``gold_dir``,
    the first ``limit`` sentences if ``limit``; ValueError if their sentence counts differ."""
    pairs = [([w.lower() for w in s], [w.lower() for w in t])
             for s, t in read_text_pairs(os.path.join(gold_dir, f"{pair}.src-tgt"))]
    gold = read_alignments(os.path.join(gold_dir, f"{pair}.gold"), "talp")
    if len(gold) != len(pairs):
        raise ValueError(f"{gold_dir}: {len(pairs)} text lines in {pair}.src-tgt but {len(gold)} gold sentences "
                         f"in {pair}.gold")
    if limit:
        pairs, gold = pairs[:limit], gold.select(list(range(min(limit, len(gold)))))
    return pairs, gold


def score_all(gold: Alignments, hyps: dict[str, Alignments]) -> tuple[list[dict], dict]:
    """Score every hypothesis (already in the gold's orientation): rows for tables and per-sentence counts."""
    rows, counts = [], {}
    for name, hyp in hyps.items():
        c = count_matches(gold, hyp)
        counts[name] = c
        rows.append(score_counts(c).as_dict(name))
    return rows, counts


def holm(p_values: list[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the input order (Holm 1979): the k-th smallest raw p
    is multiplied by (m - k), running maximum, capped at 1."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    out = [0.0] * m
    running = 0.0
    for k, i in enumerate(order):
        running = max(running, min(1.0, (m - k) * p_values[i]))
        out[i] = running
    return out

