"""What a sentence pair is described by, for a score of "is this pair a translation?" (numpy only).

A registry of features (:data:`FEATURES`), each declaring what it needs (:data:`NEEDS`): the pair's words,
its link probabilities (a calibration's cell model), or what a translation model says about the pair under
forced decoding, one log-probability per target token (the forward model: P(target | source); the reverse
model: P(source | target)). The translation models' features come from the pass that scores the alignment:
no extra pass.

- Cross-entropy, per token (the end-of-sentence token included): dual conditional cross-entropy filtering
  (Junczys-Dowmunt 2018, "Dual conditional cross-entropy filtering of noisy parallel corpora", WMT, the best
  system of that year's parallel corpus filtering task) scores a pair by ``|H_f - H_r| + (H_f + H_r) / 2``
  with ``H_f``, ``H_r`` the per-token cross-entropies of the two directions: both models must find the pair
  likely, and equally likely. We keep both terms apart and add the worst token and the end of the sentence:
  a pair with one side cut short (truncated, appended) has one token the model finds very unlikely (the
  early or late end) inside an otherwise fluent sentence, which the mean dilutes.
- Alignment shape (from the link probabilities): how much of each side is covered by a link, links per word,
  and how far the links stray from the diagonal (words shuffled on one side scatter them).
- Words: the length ratio (the baseline of every filter) and the share of target words found verbatim among
  the source words (a sentence left untranslated copies its source; Bicleaner's hard rules catch it too).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ..spec.registry import add

NEEDS = ("links", "words", "forward", "reverse")
"""What a feature may need: link probabilities, the words, the forward or the reverse model's log-probabilities."""

_EPS = 1e-12


@dataclass(frozen=True)
class PairEvidence:
    """What is known of one sentence pair: (T, S) link probabilities (target rows, source columns), the source
    and target words, and the forced-decoding log-probabilities of the forward model's labels (target tokens
    and the end token, (n_t,)) and of the reverse model's ((n_s,)), each None when not computed."""

    probs: np.ndarray
    src: Sequence[str] = ()
    tgt: Sequence[str] = ()
    forward: np.ndarray | None = None
    reverse: np.ndarray | None = None

    def has(self, need: str) -> bool:
        """Whether this pair carries what ``need`` (:data:`NEEDS`) names."""
        if need == "links":
            return self.probs is not None
        if need == "words":
            return len(self.src) > 0 or len(self.tgt) > 0
        value = self.forward if need == "forward" else self.reverse
        return value is not None and len(value) > 0


@dataclass(frozen=True)
class Feature:
    """One feature: ``compute(evidence) -> float``, with what it needs and what it says."""

    name: str
    description: str
    needs: frozenset[str]
    compute: Callable[[PairEvidence], float]


FEATURES: dict[str, Feature] = {}
"""Every feature, by name."""


Compute = Callable[[PairEvidence], float]


def register(name: str, description: str, needs: str) -> Callable[[Compute], Compute]:
    """Decorator: add ``compute`` to :data:`FEATURES` under ``name``, needing the space-separated ``needs``."""

    wanted = frozenset(needs.split())
    unknown = wanted - set(NEEDS)
    if unknown:
        raise ValueError(f"feature {name!r} needs {sorted(unknown)}; valid needs: {', '.join(NEEDS)}")

    def wrap(fn: Compute) -> Compute:
        add(FEATURES, name, Feature(name, description, wanted, fn), "sentence feature")
        return fn

    return wrap


def _coverage(p: np.ndarray, axis: int) -> float:
    return float(p.max(axis).mean())


@register("tgt_coverage", "mean over target words of the best link probability", "links")
def _tgt_coverage(e: PairEvidence) -> float:
    return _coverage(e.probs, 1)


@register("src_coverage", "mean over source words of the best link probability", "links")
def _src_coverage(e: PairEvidence) -> float:
    return _coverage(e.probs, 0)


@register("coverage_hmean", "harmonic mean of the two coverages", "links")
def _coverage_hmean(e: PairEvidence) -> float:
    ct, cs = _coverage(e.probs, 1), _coverage(e.probs, 0)
    return 2 * ct * cs / (ct + cs + _EPS)


@register("links_per_tgt_word", "expected links per target word (the probabilities' sum over T)", "links")
def _links_per_tgt(e: PairEvidence) -> float:
    return float(e.probs.sum() / e.probs.shape[0])


@register("links_per_src_word", "expected links per source word (the probabilities' sum over S)", "links")
def _links_per_src(e: PairEvidence) -> float:
    return float(e.probs.sum() / e.probs.shape[1])


@register("abs_log_length_ratio", "|log(T / S)|, T and S the word counts of the two sides", "links")
def _abs_ratio(e: PairEvidence) -> float:
    return abs(math.log(e.probs.shape[0] / e.probs.shape[1]))


@register("log_length_ratio", "log(T / S)", "links")
def _ratio(e: PairEvidence) -> float:
    return math.log(e.probs.shape[0] / e.probs.shape[1])


@register("diagonal_distance", "mean over target words of |i/T - j/S| at their best link, weighted by it", "links")
def _diagonal(e: PairEvidence) -> float:
    p = e.probs
    t, s = p.shape
    best = p.argmax(1)
    dist = np.abs((np.arange(t) + 0.5) / t - (best + 0.5) / s)
    w = p.max(1)
    return float((dist * w).sum() / (w.sum() + _EPS))


@register("log_src_words", "log of the source's word count", "words")
def _log_src(e: PairEvidence) -> float:
    return math.log(max(1, len(e.src)))


@register("log_tgt_words", "log of the target's word count", "words")
def _log_tgt(e: PairEvidence) -> float:
    return math.log(max(1, len(e.tgt)))


@register("copied", "share of target words found verbatim among the source words (lowercased)", "words")
def _copied(e: PairEvidence) -> float:
    if not e.tgt:
        return 0.0
    src = {w.lower() for w in e.src}
    return sum(w.lower() in src for w in e.tgt) / len(e.tgt)


def _lp(values: np.ndarray | None) -> np.ndarray:
    """A model's log-probabilities (feature_vector checks first that the pair carries them)."""
    if values is None:
        raise ValueError("the feature needs a model's log-probabilities, which this pair does not carry")
    return values


def _ce(lp: np.ndarray | None) -> float:
    return float(-np.mean(_lp(lp)))


@register("fwd_ce", "forward model: cross-entropy per target token, end token included (nats)", "forward")
def _fwd_ce(e: PairEvidence) -> float:
    return _ce(e.forward)


@register("fwd_ce_worst", "forward model: the highest cross-entropy of one target token", "forward")
def _fwd_worst(e: PairEvidence) -> float:
    return float(-np.min(_lp(e.forward)))


@register("fwd_ce_end", "forward model: cross-entropy of the end token (the target ends here)", "forward")
def _fwd_end(e: PairEvidence) -> float:
    return float(-_lp(e.forward)[-1])


def _top3(lp: np.ndarray) -> float:
    return float(-np.sort(lp)[:3].mean())


def _tail(lp: np.ndarray) -> float:
    body = -lp[:-1]  # the end token has its own feature
    if len(body) < 2:
        return 0.0
    half = len(body) // 2
    return float(body[half:].mean() - body[:half].mean())


@register("fwd_ce_top3", "forward model: mean cross-entropy of the three least likely target tokens", "forward")
def _fwd_top3(e: PairEvidence) -> float:
    return _top3(_lp(e.forward))


@register("fwd_ce_tail", "forward model: cross-entropy of the target's second half minus its first half "
          "(an appended sentence is unlikely at the end only)", "forward")  # fmt: skip
def _fwd_tail(e: PairEvidence) -> float:
    return _tail(_lp(e.forward))


@register("rev_ce_top3", "reverse model: mean cross-entropy of the three least likely source tokens", "reverse")
def _rev_top3(e: PairEvidence) -> float:
    return _top3(_lp(e.reverse))


@register("rev_ce_tail", "reverse model: cross-entropy of the source's second half minus its first half", "reverse")
def _rev_tail(e: PairEvidence) -> float:
    return _tail(_lp(e.reverse))


@register("rev_ce", "reverse model: cross-entropy per source token, end token included (nats)", "reverse")
def _rev_ce(e: PairEvidence) -> float:
    return _ce(e.reverse)


@register("rev_ce_worst", "reverse model: the highest cross-entropy of one source token", "reverse")
def _rev_worst(e: PairEvidence) -> float:
    return float(-np.min(_lp(e.reverse)))


@register("rev_ce_end", "reverse model: cross-entropy of the end token", "reverse")
def _rev_end(e: PairEvidence) -> float:
    return float(-_lp(e.reverse)[-1])


@register("ce_gap", "|fwd_ce - rev_ce|: how much the two models disagree", "forward reverse")
def _gap(e: PairEvidence) -> float:
    return abs(_ce(e.forward) - _ce(e.reverse))


@register("dcce", "dual conditional cross-entropy, |fwd_ce - rev_ce| + (fwd_ce + rev_ce) / 2 "
          "(Junczys-Dowmunt 2018, eq. 4; lower is better)", "forward reverse")  # fmt: skip
def _dcce(e: PairEvidence) -> float:
    f, r = _ce(e.forward), _ce(e.reverse)
    return abs(f - r) + 0.5 * (f + r)


LINK_FEATURES = (
    "tgt_coverage",
    "src_coverage",
    "coverage_hmean",
    "links_per_tgt_word",
    "links_per_src_word",
    "abs_log_length_ratio",
    "log_length_ratio",
)
"""The sentence features of calibration files of version 1 (link probabilities only)."""

FORWARD_FEATURES = LINK_FEATURES + (
    "diagonal_distance",
    "log_src_words",
    "log_tgt_words",
    "copied",
    "fwd_ce",
    "fwd_ce_worst",
    "fwd_ce_end",
    "fwd_ce_top3",
    "fwd_ce_tail",
)
"""The sentence score's features with the forward model alone."""

BOTH_FEATURES = FORWARD_FEATURES + (
    "rev_ce",
    "rev_ce_worst",
    "rev_ce_end",
    "rev_ce_top3",
    "rev_ce_tail",
    "ce_gap",
    "dcce",
)
"""The sentence score's features with the reverse model too (``--reverse-model``)."""

COMPACT_BOTH_FEATURES = ("dcce", "abs_log_length_ratio", "coverage_hmean", "fwd_ce_end", "rev_ce_end")
"""The sentence model ``align-calibrate --reverse-model`` fits by default: the dual conditional cross-entropy, the
length ratio, the links' coverage and each model's surprise at the sentence's end. Measured against
:data:`BOTH_FEATURES` (benchmarks/results/sentence_scores.md, rank_corpus.md; x20 models): leave-one-kind-out
ROC-AUC Hansards mean 0.978 against 0.980, worst 0.917 against 0.900; RWTH 0.998 against 0.999; but in the lowest 70
of 20,000 real Hansard pairs read blind, 36 defects against 26: the many features read free translations and
headings as noise."""

COMPACT_FORWARD_FEATURES = ("fwd_ce", "abs_log_length_ratio", "coverage_hmean", "fwd_ce_end")
"""The same without the reverse model: leave-one-kind-out mean 0.932 against :data:`FORWARD_FEATURES`' 0.903 on
Hansards, 0.986 against 0.940 on RWTH (benchmarks/results/sentence_scores.md)."""

PER_KIND_BOTH_FEATURES = COMPACT_BOTH_FEATURES + ("fwd_ce", "rev_ce", "links_per_src_word", "links_per_tgt_word")
"""The features of the sentence model ``per-kind`` with the reverse model (the default of ``align-calibrate
--reverse-model``): ``compact``'s, each model's cross-entropy apart and the links per word of each side. Measured
(one detector per kind, :mod:`align.confidence.per_kind`; benchmarks/results/sentence_scores.md, rank_corpus.md):
leave-one-kind-out ROC-AUC mean / worst, Hansards 0.987 / 0.929 against ``compact``'s 0.978 / 0.917, RWTH 0.998 /
0.982 against 0.998 / 0.976 (x20 models), Hansards with models that never saw the pairs 0.974 / 0.877 against 0.950 /
0.801; in the lowest 70 of 20,000 real Hansard pairs read blind, 40 defects against 36."""

PER_KIND_FORWARD_FEATURES = COMPACT_FORWARD_FEATURES + ("links_per_src_word", "links_per_tgt_word")
"""The same without the reverse model: ``compact``'s forward features and the links per word of each side."""


class SentenceModel(NamedTuple):
    """A sentence model ``align-calibrate --sentence-model`` fits: its features without the reverse model and with
    it, and whether it is one logistic regression per kind of noise (:mod:`align.confidence.per_kind`) rather than
    one over every kind."""

    forward: tuple[str, ...]
    both: tuple[str, ...]
    per_kind: bool
    description: str

    def features(self, both: bool) -> tuple[str, ...]:
        """The features with the reverse model (``both``) or without it."""
        return self.both if both else self.forward


SENTENCE_MODELS = {
    "per-kind": SentenceModel(
        PER_KIND_FORWARD_FEATURES, PER_KIND_BOTH_FEATURES, True,
        "one detector per kind of noise over the dual conditional cross-entropy, each model's cross-entropy, the "
        "length ratio, the links' coverage and links per word and the models' surprise at the end; a pair is as "
        "suspect as the most suspicious detector says; catches kinds it was never fitted on best",
    ),
    "compact": SentenceModel(
        COMPACT_FORWARD_FEATURES, COMPACT_BOTH_FEATURES, False,
        "one regression over five of those: the dual conditional cross-entropy, the length ratio, the coverage "
        "and the models' surprise at the end",
    ),
    "full": SentenceModel(FORWARD_FEATURES, BOTH_FEATURES, False, "one regression over every feature"),
}  # fmt: skip
"""``align-calibrate --sentence-model``: name -> :class:`SentenceModel`; its ``description`` is the option's help."""

DEFAULT_SENTENCE_MODEL = "per-kind"
"""The sentence model ``align-calibrate`` fits unless told otherwise: it catches kinds it was never fitted on best."""

SENTENCE_CHOICES = (
    LINK_FEATURES, FORWARD_FEATURES, BOTH_FEATURES, COMPACT_FORWARD_FEATURES, COMPACT_BOTH_FEATURES,
    PER_KIND_FORWARD_FEATURES, PER_KIND_BOTH_FEATURES,
)  # fmt: skip
"""The feature lists a calibration's sentence model may have: version 1's, then those of :data:`SENTENCE_MODELS`."""


def sentence_choices(both: bool) -> tuple[tuple[str, ...], ...]:
    """The lists of :data:`SENTENCE_CHOICES` a calibration may have: with ``both`` False (one direction), only those
    that do not need the reverse model."""
    return tuple(c for c in SENTENCE_CHOICES if both or "reverse" not in needs_of(c))


def needs_of(names: Sequence[str]) -> frozenset[str]:
    """What the features ``names`` need together; ValueError naming an unknown feature and the valid ones."""
    out: set[str] = set()
    for n in names:
        if n not in FEATURES:
            raise ValueError(f"unknown sentence feature {n!r}; valid: {', '.join(FEATURES)}")
        out |= FEATURES[n].needs
    return frozenset(out)


def available_features(evidence: PairEvidence) -> dict[str, float]:
    """Every feature of :data:`FEATURES` whose needs the pair carries, by name, in registry order."""
    have = {n for n in NEEDS if evidence.has(n)}
    return {n: float(f.compute(evidence)) for n, f in FEATURES.items() if f.needs <= have}


def feature_vector(evidence: PairEvidence, names: Sequence[str]) -> np.ndarray:
    """(len(names),) the features of one pair, in order; ValueError naming what the pair lacks."""
    for need in needs_of(names):
        if not evidence.has(need):
            raise ValueError(f"the sentence features need {need!r}, which this pair does not carry")
    return np.array([FEATURES[n].compute(evidence) for n in names], dtype=np.float64)
