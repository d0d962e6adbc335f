"""Alignment Error Rate (Och & Ney 2003), precision, recall and F1, corpus-level (micro).

With hypothesis links A, sure gold links S and possible gold links P (S is a subset of P):
``precision = |A & P| / |A|``, ``recall = |A & S| / |S|``,
``AER = 1 - (|A & S| + |A & P|) / (|A| + |S|)``, ``F1 = 2 P R / (P + R)``.
Every count is summed over the corpus before dividing. Empty sets give defined values: an empty
hypothesis has precision 1 (it claims nothing false), an empty gold has recall 1, AER is 0 when
both are empty, and F1 is 0 when precision + recall is 0.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from align.confidence.ece import expected_calibration_error, reliability  # noqa: F401  (scores of link probabilities)
from align.links.alignments import Alignments


@dataclass(frozen=True)
class SentenceCounts:
    """Per-sentence counts, each (n_sentences,) int: |A|, |S|, |A & S|, |A & P|."""

    hyp: np.ndarray
    sure: np.ndarray
    hyp_sure: np.ndarray
    hyp_possible: np.ndarray

    def __len__(self) -> int:
        return len(self.hyp)

    def totals(self) -> np.ndarray:
        """The four corpus totals as a (4,) array."""
        return np.array([x.sum(dtype=np.int64) for x in (self.hyp, self.sure, self.hyp_sure, self.hyp_possible)])

    @classmethod
    def concatenate(cls, parts: list[SentenceCounts]) -> SentenceCounts:
        """Counts of consecutive blocks of sentences as one corpus (int32 per sentence and count)."""
        if not parts:
            z = np.zeros(0, dtype=np.int32)
            return cls(z, z, z, z)
        return cls(
            *(
                np.concatenate([getattr(p, f) for p in parts]).astype(np.int32)
                for f in ("hyp", "sure", "hyp_sure", "hyp_possible")
            )
        )

    def stacked(self) -> np.ndarray:
        """(4, n_sentences) float64 matrix of the counts, rows in field order."""
        return np.stack([self.hyp, self.sure, self.hyp_sure, self.hyp_possible]).astype(np.float64)


@dataclass(frozen=True)
class AERScore:
    """Corpus scores as fractions in [0, 1], with the counts behind them."""

    aer: float
    precision: float
    recall: float
    f1: float
    links: int
    sentences: int
    sure: int
    matched_sure: int
    matched_possible: int
    ci: dict[str, tuple[float, float]] = field(default_factory=dict)

    def as_dict(self, name: str | None = None) -> dict[str, Any]:
        """JSON-ready dict, rates in percent (unrounded)."""
        d: dict[str, Any] = {"hyp": name} if name is not None else {}
        d.update(
            aer=100 * self.aer,
            precision=100 * self.precision,
            recall=100 * self.recall,
            f1=100 * self.f1,
            links=self.links,
            sentences=self.sentences,
            sure=self.sure,
            matched_sure=self.matched_sure,
            matched_possible=self.matched_possible,
        )
        if self.ci:
            d["ci"] = {k: [100 * v[0], 100 * v[1]] for k, v in self.ci.items()}
        return d

    def format(self, name: str | None = None, is_json: bool = False) -> str:
        """One line of text (``AER 20.6 P 91.3 R 70.2 F1 79.4 links 7964 sents 508``) or JSON."""
        if is_json:
            return json.dumps(self.as_dict(name))
        ci = ""
        if "aer" in self.ci:
            lo, hi = self.ci["aer"]
            ci = f" [{100 * lo:.1f}, {100 * hi:.1f}]"
        head = f"{name}: " if name else ""
        return (
            f"{head}AER {100 * self.aer:.1f}{ci} P {100 * self.precision:.1f} "
            f"R {100 * self.recall:.1f} F1 {100 * self.f1:.1f} links {self.links} "
            f"sents {self.sentences}"
        )


def count_matches(gold: Alignments, hyp: Alignments) -> SentenceCounts:
    """Per-sentence counts of hypothesis links against gold; both corpora must have equal length."""
    if len(gold) != len(hyp):
        raise ValueError(f"gold has {len(gold)} sentences but hypothesis has {len(hyp)}")
    n = len(gold)
    bits = max(gold.side_bits(), hyp.side_bits())  # one packing for both, so that equal links have equal keys
    g_keys = gold.keys(bits)  # sorted, unique
    h_keys = hyp.keys(bits)
    h_sent = hyp.sentence_ids()
    pos = np.searchsorted(g_keys, h_keys)
    pos_c = np.minimum(pos, max(len(g_keys) - 1, 0))
    in_p = (pos < len(g_keys)) & (g_keys[pos_c] == h_keys) if len(g_keys) else np.zeros(len(h_keys), bool)
    in_s = in_p & gold.sure[pos_c] if len(g_keys) else in_p
    g_sent = gold.sentence_ids()
    return SentenceCounts(
        hyp=np.diff(hyp.offsets),
        sure=np.bincount(g_sent[gold.sure], minlength=n).astype(np.int64),
        hyp_sure=np.bincount(h_sent[in_s], minlength=n).astype(np.int64),
        hyp_possible=np.bincount(h_sent[in_p], minlength=n).astype(np.int64),
    )


def rates(totals: np.ndarray) -> np.ndarray:
    """(4, ...) totals |A|, |S|, |A&S|, |A&P| -> (4, ...) AER, precision, recall, F1 (fractions)."""
    a, s, a_s, a_p = (np.asarray(t, dtype=np.float64) for t in totals)
    with np.errstate(divide="ignore", invalid="ignore"):
        precision = np.where(a > 0, a_p / a, 1.0)
        recall = np.where(s > 0, a_s / s, 1.0)
        aer = np.where(a + s > 0, 1.0 - (a_s + a_p) / (a + s), 0.0)
        f1 = np.where(precision + recall > 0, 2 * precision * recall / (precision + recall), 0.0)
    return np.stack([aer, precision, recall, f1])


def score_counts(counts: SentenceCounts) -> AERScore:
    """Corpus scores from per-sentence counts."""
    return score_totals(counts.totals(), len(counts))


def score_totals(totals: np.ndarray, sentences: int) -> AERScore:
    """Corpus scores from the four corpus totals |A|, |S|, |A&S|, |A&P| of ``sentences`` sentences."""
    t = [int(x) for x in totals]
    aer, p, r, f = (float(x) for x in rates(np.array(t)))
    return AERScore(
        aer, p, r, f, links=t[0], sentences=int(sentences), sure=t[1], matched_sure=t[2], matched_possible=t[3]
    )


def score_corpus(gold: Alignments, hyp: Alignments) -> AERScore:
    """Corpus-level AER, precision, recall, F1 of ``hyp`` against ``gold`` (sure/possible)."""
    return score_counts(count_matches(gold, hyp))


def score_sentences(gold: Alignments, hyp: Alignments) -> np.ndarray:
    """Per-sentence (n_sentences, 4) AER, precision, recall, F1 (fractions)."""
    per: np.ndarray = rates(count_matches(gold, hyp).stacked()).T
    return per


def _resampled_totals(stacked: np.ndarray, n_samples: int, seed: int) -> np.ndarray:
    """(4, n_samples) count totals of bootstrap resamples of the sentences (columns of ``stacked``).

    Resamples are drawn in chunks so memory stays near ``2e7`` floats whatever the corpus size.
    """
    n = stacked.shape[1]
    rng = np.random.default_rng(seed)
    out = np.empty((stacked.shape[0], n_samples))
    chunk = max(1, int(2e7 // max(n, 1)))
    for start in range(0, n_samples, chunk):
        k = min(chunk, n_samples - start)
        idx = rng.integers(0, n, size=(k, n))
        for r in range(stacked.shape[0]):
            out[r, start : start + k] = stacked[r][idx].sum(axis=1)
    return out


def bootstrap_ci(
    counts: SentenceCounts, n_samples: int = 1000, confidence: float = 0.95, seed: int = 12345
) -> dict[str, tuple[float, float]]:
    """Percentile bootstrap intervals over sentences for aer, precision, recall, f1 (Koehn 2004);
    empty below ``MIN_SENTENCES`` sentences, where resampling says nothing (an interval of zero width)."""
    if len(counts) < MIN_SENTENCES:
        return {}
    stats = rates(_resampled_totals(counts.stacked(), n_samples, seed))
    lo, hi = (1 - confidence) / 2 * 100, (1 + confidence) / 2 * 100
    return {
        name: (float(np.percentile(row, lo)), float(np.percentile(row, hi)))
        for name, row in zip(("aer", "precision", "recall", "f1"), stats)
    }


MIN_SENTENCES = 2
"""Fewest sentences a bootstrap resamples: with one, every resample is that sentence."""


def paired_bootstrap(
    baseline: SentenceCounts, system: SentenceCounts, n_samples: int = 1000, seed: int = 12345
) -> dict[str, Any]:
    """Paired bootstrap test (Koehn 2004) of the AER difference ``system - baseline``.

    Both are resampled with the same sentences. ``p_value`` is two-sided: the share of resamples
    whose difference lies at least as far from the observed difference as that lies from 0 (the
    resampled differences shifted to the null hypothesis of no difference; Efron and Tibshirani
    1993, Sec. 16.4), ``(count + 1) / (n_samples + 1)``. ``p_one_sided`` is the
    share of resamples in which the system is not better (AER not lower), smoothed the same way:
    the test of "the system's AER is lower". ``delta_ci`` is the 95% percentile interval.

    The two p-values are two constructions, and on a skewed resampling they part: for an observed difference
    ``d < 0``, ``p_one_sided`` counts the resamples at or above 0 and ``p_value`` counts those and the ones at or
    below ``2 d`` (the other tail of the shifted null), so ``p_value >= p_one_sided`` always, but it is twice it
    only when the resampled differences are symmetric. ``delta_ci`` agrees with ``p_one_sided`` (both read the
    resamples as they are): quote the one-sided p with the interval for a directional claim.

    The test cannot decide, and both p-values are None with the reason in ``undecided``, below
    ``MIN_SENTENCES`` sentences, or when the observed difference is not 0 but no resample differs
    from it (no variance: every resample repeats the same sentences' difference, so a p-value would
    only count the resamples). Identical systems (every difference 0) get p = 1.
    """
    if len(baseline) != len(system):
        raise ValueError(f"paired test needs equal corpora; got {len(baseline)} and {len(system)} sentences")
    if len(baseline) < MIN_SENTENCES:
        observed = float(rates(system.totals())[0] - rates(baseline.totals())[0]) if len(baseline) else 0.0
        return {
            "p_value": None,
            "p_one_sided": None,
            "delta": observed,
            "delta_ci": None,
            "undecided": f"{len(baseline)} sentence(s); a paired bootstrap needs at least {MIN_SENTENCES}",
        }
    # One draw of sentence indices serves both systems: stack their counts and resample together.
    both = _resampled_totals(np.vstack([baseline.stacked(), system.stacked()]), n_samples, seed)
    aer_b, aer_s = rates(both[:4])[0], rates(both[4:])[0]
    diffs = aer_s - aer_b
    observed = float(rates(system.totals())[0] - rates(baseline.totals())[0])
    if observed != 0 and float(np.ptp(diffs)) <= 1e-12:
        return {
            "p_value": None,
            "p_one_sided": None,
            "delta": observed,
            "delta_ci": None,
            "undecided": "the resampled differences do not vary (no variance); the test cannot decide",
        }
    not_better = int(np.sum(aer_s >= aer_b))
    # a tiny tolerance: a difference equal to the observed one up to rounding counts as "as far"
    as_far = int(np.sum(np.abs(diffs - observed) >= abs(observed) - 1e-12))
    return {
        "p_value": (as_far + 1) / (n_samples + 1),
        "p_one_sided": (not_better + 1) / (n_samples + 1),
        "delta": observed,
        "delta_ci": (float(np.percentile(diffs, 2.5)), float(np.percentile(diffs, 97.5))),
    }


def roc_auc(positive: np.ndarray, negative: np.ndarray) -> float:
    """Area under the ROC curve of scores meant to be higher for ``positive`` (Mann-Whitney U / (n+ n-); ties
    count one half)."""
    pos, neg = np.asarray(positive, dtype=np.float64), np.asarray(negative, dtype=np.float64)
    if not len(pos) or not len(neg):
        raise ValueError("ROC-AUC needs at least one positive and one negative")
    ranks = _ranks(np.concatenate([pos, neg]))
    return float((ranks[: len(pos)].sum() - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg)))


def _ranks(x: np.ndarray) -> np.ndarray:
    """(n,) 1-based ranks of (n,) values, ties (infinities too) given their average rank; ValueError on NaN."""
    x = np.asarray(x, dtype=np.float64)
    if np.isnan(x).any():
        raise ValueError(f"{int(np.isnan(x).sum())} NaN value(s); ranks need numbers (NaN has no place among them)")
    order = x.argsort(kind="mergesort")
    ranks = np.empty(len(x))
    sx = x[order]
    # ties by equality, not by a zero difference: inf - inf is NaN, which would split equal infinities
    starts = np.r_[0, np.flatnonzero(sx[1:] != sx[:-1]) + 1]
    for a, b in zip(starts, np.r_[starts[1:], len(x)]):
        ranks[order[a:b]] = (a + b + 1) / 2
    return ranks


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman's rank correlation (Pearson's of the tie-averaged ranks); NaN if either side is constant."""
    ra, rb = _ranks(a), _ranks(b)
    if len(ra) != len(rb):
        raise ValueError(f"{len(ra)} and {len(rb)} values; expected as many on each side")
    if ra.std() == 0 or rb.std() == 0:
        return float("nan")
    return float(np.corrcoef(ra, rb)[0, 1])
