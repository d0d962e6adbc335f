"""An extraction plan run over its input, streaming: read, (translate,) score and write a chunk at a time.

:func:`extract` takes an :class:`~align.extraction.plan.ExtractPlan` and writes through one
:class:`~align.extraction.writer.OutputFolder` (every setting's links, the reverse model's, each combination,
score files, a calibration's probabilities and sentence scores, translations, the manifest with the run's
:class:`~align.spec.signature.Signature`), or prints one setting's links when the plan has no output folder.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from contextlib import nullcontext
from typing import Any, TextIO

import numpy as np

from .. import __version__
from ..io.formats import format_links
from ..io.inputs import PairReader, count_lines
from ..io.softscores import encode_scores, scores_name
from ..spec.setting import base_name, combined_file, reverse_file
from ..spec.signature import Signature, identity_fields, spec_settings
from .plan import ExtractPlan
from .writer import OutputFolder

CHUNK = 2048
"""Pairs read, (translated,) scored and written at a time: memory is per chunk, never per corpus."""


def fit_shape(m: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """``m`` cut or padded with zeros to ``shape`` (the words one model kept under --truncate, the other's)."""
    if m.shape == shape:
        return m
    out = np.zeros(shape, dtype=m.dtype)
    common = tuple(slice(0, min(a, b)) for a, b in zip(m.shape, shape))
    out[common] = m[common]
    return out


def signature(plan: ExtractPlan, reader: PairReader) -> Signature:
    """Everything that changes this run's output: :mod:`align.spec.signature`."""
    f, aligner, spec = plan.flags, plan.aligner, plan.spec
    settings = spec_settings(spec)
    blends = settings.pop("blends", None)
    settings.update(
        preprocessing=aligner.preprocessing(),
        translate={"beam": f.beam} if f.translate else False,
        truncate=f.truncate,
        dtype=f.dtype,
        device=plan.checked.device.split(":")[0],
        # True for 8-bit files (as before --scores-precision existed), else the precision's name
        save_scores=(True if f.scores_precision == "8bit" else f.scores_precision) if f.save_scores else False,
        src_lang=f.src_lang,
        tgt_lang=f.tgt_lang,
        calibration=_calibration_signature(plan),
    )
    if blends:
        settings["blends"] = blends
    layers = [getattr(a, "alignment_layer", None) for a in (aligner, plan.reverse[0] if plan.reverse else None)]
    if any(x is not None for x in layers):  # only then: runs without one keep their signature
        settings["alignment_layer"] = [None if x is None else x.weights_sha256 for x in layers]
    reverse_model = None
    if plan.reverse is not None:  # only then: one direction's signature stays as it was
        reverse = plan.reverse[0]
        reverse_model = {**identity_fields(reverse.identity()), "preprocessing": reverse.preprocessing()}
        settings["combine"] = {"combinations": list(plan.combos), "threshold": plan.checked.combine_threshold}
    test_set = plan.test_set_signature
    return Signature(
        model=identity_fields(aligner.identity() if hasattr(aligner, "identity") else {}),
        input={"sha256": reader.sha256, "lines": reader.lines, **({"test_set": test_set} if test_set else {})},
        settings=settings,
        version=__version__,
        reverse_model=reverse_model,
    )


def _calibration_signature(plan: ExtractPlan) -> dict[str, Any] | bool:
    """The calibration file's digest and how it was used (False without one)."""
    f, cal = plan.flags, plan.calibrated
    if not f.calibration or cal is None:
        return False
    return {
        "sha256": cal.sha256,
        "prob_threshold": f.prob_threshold,
        "sentence_scores": f.sentence_scores,
        "reverse_model": identity_fields(cal.reverse.identity()) if cal.reverse else None,
        "fitted_on": cal.calibration.fitted_on,
    }


def _chunks(reader: PairReader) -> Iterator[list[tuple[int, list[str], list[str] | None]]]:
    buf = []
    for row in reader:
        buf.append(row)
        if len(buf) >= CHUNK:
            yield buf
            buf = []
    if buf:
        yield buf


def _logprobs(plan: ExtractPlan, need: str) -> bool:
    """Whether the run's sentence scores need ``need`` (``forward`` or ``reverse``): the models' log-probabilities
    of the labels, which the pass that scores the alignment gives."""
    c, f = plan.calibrated, plan.flags
    if c is None or not f.sentence_scores:
        return False
    # --sentence-features: every feature the run can compute, the reverse model's with one
    return need in c.calibration.sentence_needs or (
        f.sentence_features and (need == "forward" or c.reverse is not None)
    )


def _score_reverse(plan: ExtractPlan, items: list[tuple[str, Any, Any]]) -> dict[int, tuple[Any, Any, Any]]:
    """With a reverse model: ``{k: (source, target, scores)}`` of the reverse model for ``items[k]`` turned
    round (its source is the pair's target), batched by length as the forward pass is."""
    if plan.reverse is None:
        return {}
    reverse, rspec = plan.reverse
    # the reverse model's "source" is the pair's target: say so in its errors
    turned = [
        (f"{where} (turned round for the reverse model: its source is the pair's target)", t, s)
        for where, s, t in items
    ]
    f = plan.flags
    lp = _logprobs(plan, "reverse")
    return {k: (rse, rte, rsc) for k, rse, rte, rsc in reverse.score_items(turned, rspec, f.batch_size, f.truncate, lp)}


def _both_directions(
    plan: ExtractPlan,
    names: list[str],
    links_of: dict[str, Any],
    fwd: dict[str, Any],
    rev: dict[str, Any],
    scored: tuple,
) -> dict[str, Any]:
    """The reverse links (turned round to ``(src, tgt)``) and every combination of one pair, keyed by file name.
    ``fwd``/``rev``: word-score matrices by setting name, forward (T, S) and reverse (S, T); under
    --truncate the two models may keep different numbers of words: the forward's words are the pair's, and
    a word the reverse model cut has no score from it (zeros)."""
    from ..links.combine import combine, combine_links, reverse_links

    assert plan.reverse is not None  # called only with one
    reverse, rspec = plan.reverse
    rlinks = reverse.links(*scored, rspec, rspec.heads is None, rev)
    out = {}
    for name in names:
        back = reverse_links(rlinks[name])
        out[reverse_file(name)] = back
        if fwd:  # float32, as --scores-precision float32 stores them: align-symmetrize on the files gives these links
            f, r = fwd[name].astype(np.float32), fit_shape(rev[name], fwd[name].shape[::-1]).astype(np.float32)
        for c in plan.combos:
            if ":" in c:
                out[combined_file(name, c)] = combine(c, f, r, plan.checked.combine_threshold)
            else:
                out[combined_file(name, c)] = combine_links(c, links_of[name], back)
    return out


def _write_calibrated(
    plan: ExtractPlan, se: Any, te: Any, sc: Any, links_of: dict[str, Any], out: OutputFolder, index: int,
    scored: tuple | None, words: tuple[Any, Any],
) -> None:  # fmt: skip
    """The calibrated setting's probabilities (and links, under --prob-threshold) and the pair's sentence score;
    ``scored``: the reverse model's (source, target, scores) of the pair, with a bidirectional calibration;
    ``words``: the pair's (source words, target words)."""
    c = plan.calibrated
    assert c is not None  # called only with one
    name, cal = c.name, c.calibration
    w = plan.aligner.word_scores(se, te, sc, c.spec, null=True)[name]  # only the calibrated setting's matrix
    both: tuple = ()
    if c.reverse is not None and scored is not None:
        rw = c.reverse.word_scores(*scored, c.reverse_spec, null=True)[name]
        t, s = w.shape[0], w.shape[1] - 1
        both = (fit_shape(rw[:, :-1], (s, t)), fit_shape(rw[:, -1:], (s, 1))[:, 0])  # --truncate: see fit_shape
    probs = cal.probabilities(w[:, :-1], w[:, -1], *both)
    if plan.flags.prob_threshold is not None:
        links_of[name] = [(int(s), int(t)) for t, s in zip(*np.nonzero(probs >= plan.flags.prob_threshold))]
    links = sorted(links_of[name])  # format_links writes them in this order: the probabilities follow it
    links_of[name] = links
    base = base_name(name)
    out.write(base + ".probs", index, " ".join(f"{probs[t, s]:.4f}" for s, t in links))
    out.write(base + ".probs.jsonl", index, encode_scores(probs, absolute=True))
    if plan.flags.sentence_scores:
        from .engine import LOGPROBS

        t, s = probs.shape  # under --truncate the words the forward model kept
        rev_lp = scored[2].get(LOGPROBS) if scored is not None else None
        pair = (probs, list(words[0])[:s], list(words[1])[:t], sc.get(LOGPROBS), rev_lp)
        score, features = cal.sentence_features(*pair, every=plan.flags.sentence_features)  # each computed once
        out.write("sentence_scores.tsv", index, f"{index + 1}\t{score:.6f}")
        if plan.flags.sentence_features:
            row = {"line": index + 1, "score": round(score, 6), "features": features}
            out.write("sentence_features.jsonl", index, json.dumps(row, separators=(",", ":")))


def output_files(plan: ExtractPlan) -> tuple[list[str], list[str], list[str]]:
    """``(setting files, every links file, score files)`` of a run with an output folder, in writing order."""
    per_head_files = plan.spec.heads is None
    names = plan.aligner.output_names(plan.spec, per_head_files)
    both = (
        [n2 for n in names for n2 in [reverse_file(n)] + [combined_file(n, c) for c in plan.combos]]
        if plan.reverse is not None
        else []
    )
    scored = names + ([reverse_file(n) for n in names] if plan.reverse is not None else [])
    return names, names + both, [scores_name(n) for n in scored] if plan.flags.save_scores else []


def _progress(plan: ExtractPlan) -> Any:
    f = plan.flags
    if not (f.progress == "on" or (f.progress == "auto" and sys.stderr.isatty())):
        return None
    from tqdm import tqdm

    total = count_lines(plan.input) if os.path.isfile(plan.input) else None  # a pipe cannot be read twice
    c = plan.checked
    return tqdm(
        total=None if total is None else len(range(c.shard, total, c.shards)),
        desc="aligning",
        unit="pair",
        file=sys.stderr,
        dynamic_ncols=True,
    )


def _write_pair(
    plan: ExtractPlan, out: OutputFolder, names: list[str], row: tuple[int, Any, Any], se: Any, te: Any, sc: Any,
    scored: tuple | None,
) -> int:  # fmt: skip
    """Every file's line of pair ``row = (index, source words, target words)``: links of each setting and blend,
    the reverse model's and their combinations, score files, the calibration's; ``scored`` is the reverse
    model's (source, target, scores).
    Returns 1 when the reverse model cut words off the pair (--truncate), else 0."""
    f, aligner, spec = plan.flags, plan.aligner, plan.spec
    index = row[0]
    per_head_files = spec.heads is None
    soft = f.save_scores or any(":" in x for x in plan.combos)
    fwd = aligner.word_scores(se, te, sc, spec, per_head_files) if soft else {}
    links_of = aligner.links(se, te, sc, spec, per_head_files, fwd)
    rev: dict = {}
    truncated = 0
    if plan.reverse is not None and scored is not None:
        rse, rte, rsc = scored
        truncated = int(bool(rse.dropped or rte.dropped))
        reverse, rspec = plan.reverse
        rev = reverse.word_scores(rse, rte, rsc, rspec, per_head_files) if soft else {}
    if plan.calibrated is not None:  # first: under --prob-threshold its links are NAME.align's
        _write_calibrated(plan, se, te, sc, links_of, out, index, scored, row[1:])
    if plan.reverse is not None and scored is not None:
        links_of.update(_both_directions(plan, names, links_of, fwd, rev, scored))
    for name, links in links_of.items():
        out.write(name, index, format_links(links))
    if f.save_scores:
        for name, m in fwd.items():
            out.write(scores_name(name), index, encode_scores(m, precision=f.scores_precision))
        for name, m in rev.items():
            out.write(
                scores_name(reverse_file(name)), index, encode_scores(m, precision=f.scores_precision, reverse=True)
            )
    return truncated


def extract(plan: ExtractPlan, stdout: TextIO | None = None) -> dict[str, Any]:
    """Align every (shard's) pair of the plan's input, streaming. With an output folder, files go to a temporary
    folder published whole at the end; without, one setting is printed as it goes. Returns pairs, lines,
    truncated (both directions) and the signature."""
    from .engine import links_for

    f, c, aligner, spec = plan.flags, plan.checked, plan.aligner, plan.spec
    reader = PairReader(plan.input, f.translate, (c.shard, c.shards))
    if plan.input_name:  # a named test set's text: errors name the set, not a temporary file
        reader.name = plan.input_name
    stats: dict[str, Any] = {"pairs": 0, "truncated": 0, "truncated_reverse": 0}
    bar = _progress(plan)
    out = OutputFolder(c.dest, f.overwrite, (c.shard, c.shards) if f.shard is not None else None) if c.dest else None
    names: list[str] = []
    with out if out is not None else nullcontext():
        if out is not None:
            names, links_files, score_files = output_files(plan)
            out.open(links_files + score_files)  # every setting's file, so an empty input gives empty files
            if f.translate:
                out.open(["translations.txt"])
            if plan.calibrated is not None:
                base = base_name(plan.calibrated.name)
                out.open(
                    [base + ".probs", base + ".probs.jsonl"]
                    + (["sentence_scores.tsv"] if f.sentence_scores else [])
                    + (["sentence_features.jsonl"] if f.sentence_features else [])
                )
        for chunk in _chunks(reader):
            where = [f"{reader.name}:{i + 1}" for i, _, _ in chunk]
            if f.translate:
                hyps = aligner.translate([s for _, s, _ in chunk], batch_size=f.batch_size, beam=f.beam)
                chunk = [(i, s, h) for (i, s, _), h in zip(chunk, hyps)]
                if out is not None:
                    for i, _, h in chunk:
                        out.write("translations.txt", i, " ".join(h or ()))
            items = [(w, s, t) for w, (_, s, t) in zip(where, chunk)]
            lines = []
            rev_scored = _score_reverse(plan, items) if out is not None else {}
            scores = aligner.score_items(items, spec, f.batch_size, f.truncate, _logprobs(plan, "forward"))
            for k, se, te, sc in scores:
                stats["truncated"] += bool(se.dropped or te.dropped)
                if out is None:
                    (m,), (la,), (sh,) = spec.methods, spec.layers or (), spec.shifts
                    lines.append(format_links(links_for(sc, se.words, te.words, spec, m, la, sh)) + "\n")
                    continue
                stats["truncated_reverse"] += _write_pair(plan, out, names, chunk[k], se, te, sc, rev_scored.get(k))
            if out is None:
                (stdout or sys.stdout).writelines(lines)
                (stdout or sys.stdout).flush()
            stats["pairs"] += len(chunk)
            if bar is not None:
                bar.update(len(chunk))
        stats["lines"] = reader.lines
        stats["signature"] = signature(plan, reader).as_dict()
        if out is not None:
            extra: dict[str, Any] = {"model_path": f.model}
            if plan.reverse is not None:
                extra["reverse_model_path"] = f.reverse_model
            total = reader.lines if f.shard is not None else None
            out.finish(stats["pairs"], stats["signature"], total=total, **extra)
    if bar is not None:
        bar.close()
    return stats
