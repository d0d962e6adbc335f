"""Alignment metrics: AER, precision, recall, F1, with bootstrap statistics (numpy only)."""

from .metrics import AERScore, SentenceCounts, bootstrap_ci, count_matches, paired_bootstrap, score_corpus

__all__ = ["AERScore", "SentenceCounts", "bootstrap_ci", "count_matches", "paired_bootstrap", "score_corpus"]
