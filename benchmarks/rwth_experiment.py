"""The 2020 paper's experiment on RWTH De-En with our models: attention weights against norms (and
the block-level methods), layer by layer, AWO and AWI, De->En and En->De, symmetrized, next to
eflomal on equal data and to other systems' outputs. Writes ``OUT/NAME.{md,json}`` and
``OUT/NAME_<direction>.png`` (NAME: ``--name``, default rwth_deen). Any named test set works:
``-t hansards --forward data/models/enfr --reverse data/models/fren --name hansards_enfr`` runs it on Hansards.

Usage: python benchmarks/rwth_experiment.py [-t rwth] [--testsets-dir DIR]
           [--forward data/models/deen] [--reverse data/models/ende] [--out benchmarks/results] [--limit N]

The gold text and links are the named test set's (``align.gold.testsets``; RWTH from ``--testsets-dir``,
``$NORM_ALIGN_TESTSETS`` or ``../shared/data/gold``, checksums verified); the RWTH set is never copied
into the project. ``--forward`` translates the gold's first side into its second,
``--reverse`` the other way; a missing model directory is reported and its direction left out.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import time
from collections.abc import Callable

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from align.gold import testsets  # noqa: E402
from align.gold.protocol import ProtocolError, describe_halves, protocol_of, read_training_text  # noqa: E402
from align.gold.testsets import shared_data_dir  # noqa: E402
from align.io.formats import read_alignments  # noqa: E402
from align.links.alignments import Alignments  # noqa: E402
from align.links.symmetrize import symmetrize_corpus  # noqa: E402
from eval.experiment import folds_of, held_out_choice, holm, load_gold, score_all  # noqa: E402
from eval.grid import best, format_markdown, layer_rows, parse_name, summarize_heads  # noqa: E402
from eval.metrics import bootstrap_ci, count_matches, paired_bootstrap, score_counts  # noqa: E402
from eval.plot import plot_heatmap  # noqa: E402

LAYER_METHODS = ("attn", "norm", "attn-res-ln", "attn-res-ln-ff", "alti", "alti-rollout", "value-zeroing")
ALL_METHODS = list(LAYER_METHODS) + ["attn-head", "norm-head"]

# Quoted, not recomputed: the ALTI+ authors' stored AER figures on RWTH De-En (their repository
# mt-upc/transformer-contributions-nmt, AER notebook): a 6-layer post-LN Transformer trained on Europarl De-En.
ALTI_PAPER = [
    {"system": "Ferrando et al. 2022, attention weights, AWI layer 2", "aer": 28.2},
    {"system": "Ferrando et al. 2022, ALTI+ cross-attention, AWI layer 2", "aer": 26.0},
    {"system": "Ferrando et al. 2022, attention weights, best AWO layer", "aer": 49.9},
    {"system": "Ferrando et al. 2022, ALTI+ cross-attention, best AWO layer", "aer": 38.9},
]

# Quoted, not recomputed: Kobayashi et al. (2020), EMNLP, Section 5; the source of each figure is in PAPER_DATA.
PAPER = [
    {"system": "Kobayashi et al. 2020, attention weights, AWO", "aer": 47.7},
    {"system": "Kobayashi et al. 2020, norm, AWO", "aer": 41.4},
    {"system": "Kobayashi et al. 2020, attention weights, AWI", "aer": 29.8},
    {"system": "Kobayashi et al. 2020, norm, AWI", "aer": 25.0},
]
PAPER_DATA = (
    "Europarl v7 De-En (about 1.9M pairs), RWTH test sentences removed; transformer_iwslt_de_en "
    "(6+6 layers, d=512); De->En; mean of 5 seeds at the best layer; Section 5 of the paper, unrounded "
    "in the output of the authors' notebook gorokoba560/norm-analysis-of-transformer "
    "emnlp2020/exp2_nmt/run.ipynb: AWO 47.742 -> 41.362, AWI 29.769 -> 24.985"
)

# Outputs in ../shared/data/system_outputs aligned to the RWTH gold, scored here by our scorer.
OTHERS = [
    (
        "fast_align forward",
        "fast_align/test.deen.talp",
        False,
        "Europarl v7 De-En + test sentences (lilt/alignment-scripts)",
    ),
    (
        "fast_align reverse",
        "fast_align/test.deen.reverse.talp",
        True,
        "Europarl v7 De-En + test sentences (lilt/alignment-scripts)",
    ),
    (
        "fast_align grow-diag-final (lilt)",
        "fast_align/test.deen.grow-diagonal-final.talp",
        False,
        "Europarl v7 De-En + test sentences (lilt/alignment-scripts)",
    ),
    ("MGIZA++ forward", "mgiza/test.deen.talp", False, "Europarl v7 De-En + test sentences (lilt/alignment-scripts)"),
    (
        "MGIZA++ reverse",
        "mgiza/test.deen.reverse.talp",
        True,
        "Europarl v7 De-En + test sentences (lilt/alignment-scripts)",
    ),
    (
        "MGIZA++ grow-diag-final (lilt)",
        "mgiza/test.deen.grow-diagonal-final.talp",
        False,
        "Europarl v7 De-En + test sentences (lilt/alignment-scripts)",
    ),
    (
        "Cross-Align",
        "cross_align/deen.crossalign.out",
        False,
        "multilingual BERT pre-training + fine-tuning on parallel text (Lai et al. 2022)",
    ),
]


def align_direction(
    model_dir: str, pairs: list, batch_size: int, methods=ALL_METHODS, device: str | None = None
) -> dict[str, Alignments]:
    """Forced alignment of ``pairs`` (src words, tgt words) with one model, in process (align-extract's
    engine) on ``device`` (default CPU): {dump file name: links (src, tgt)}."""
    from fairseq_plugins.pipeline import align_pairs

    return align_pairs(model_dir, pairs, list(methods), batch_size, progress=sys.stderr.isatty(), device=device)


def compare(get: Callable, methods, n_samples: int, fields: Callable) -> list[dict]:
    """Per shift, each method against ``attn`` and against ``norm`` (attn vs norm once): paired bootstrap
    over sentences of the counts ``get(method, shift)`` gives as ``(counts, info)`` (None: absent), the
    ``fields(base_info, method_info)`` of each test; p-values Holm-adjusted over all the tests."""
    out = []
    for shift in ("awo", "awi"):
        for base in ("attn", "norm"):
            b = get(base, shift)
            if b is None:
                continue
            for method in methods:
                if method == base or (base == "norm" and method == "attn"):
                    continue
                m = get(method, shift)
                if m is None:
                    continue
                test = paired_bootstrap(b[0], m[0], n_samples)
                if test["p_value"] is None:  # too few sentences or no variance: no p-value to report or adjust
                    raise ValueError(
                        f"{method} vs {base} ({shift}): the paired bootstrap cannot decide: {test['undecided']}"
                    )
                out.append(
                    {
                        "shift": shift,
                        "base": base,
                        "method": method,
                        **fields(b[1], m[1]),
                        "delta": 100 * test["delta"],
                        "delta_ci": [100 * x for x in test["delta_ci"]],
                        # the claim tested is directional ("the method's AER is lower"): one-sided
                        "p_value": test["p_one_sided"],
                    }
                )
    for t, adj in zip(out, holm([t["p_value"] for t in out])):
        t["p_holm"] = adj
    return out


def headline_tests(rows: list[dict], counts: dict, n_samples: int) -> list[dict]:
    """Per shift: each method's best layer against best-layer ``attn`` and against best-layer ``norm``,
    paired bootstrap over sentences; p-values Holm-adjusted over all the tests of one direction."""
    main = layer_rows(rows)

    def get(method: str, shift: str):
        try:
            r = best([r for r in main if parse_name(r["hyp"]).shift == shift], method)
        except ValueError:
            return None
        return counts[r["hyp"]], r

    return compare(
        get,
        LAYER_METHODS,
        n_samples,
        lambda b, m: {"attn": b["hyp"], "attn_aer": b["aer"], "norm": m["hyp"], "norm_aer": m["aer"]},
    )


# The per-head methods choose a (layer, head) on the tuning half, like attn-head-best in the tables.
HEAD_METHODS = ("attn-head", "norm-head")


def candidates(rows: list[dict], method: str, shift: str) -> list[str]:
    """Settings one method can be tuned over for one shift: its layers (per-head methods: every
    (layer, head)), in name order."""
    want_head = method in HEAD_METHODS
    out = []
    for r in rows:
        k = parse_name(r["hyp"])
        if k.method == method and k.shift == shift and (k.head is not None) == want_head:
            out.append((k.layer, -1 if k.head is None else k.head, r["hyp"]))
    return [name for *_, name in sorted(out)]  # by (layer, head) as numbers: layer2 before layer10


def held_out_tests(rows: list[dict], counts: dict, n_samples: int, k: int = 2) -> dict:
    """The honest headline: each method's setting chosen on ``k - 1`` folds of the sentences and scored
    on the remaining one (sentence i in fold i % k), pooled over folds; per shift, each method's pooled
    held-out alignments against ``attn``'s and against ``norm``'s (paired bootstrap), Holm over the
    direction. Returns {"choices": [...], "tests": [...]}."""
    n = len(next(iter(counts.values())))
    if n < k:  # --limit 1: nothing to hold out
        return {"folds": k, "choices": [], "tests": []}
    folds = folds_of(n, k)
    choices, pooled = [], {}
    for shift in ("awo", "awi"):
        for method in list(LAYER_METHODS) + list(HEAD_METHODS):
            cand = candidates(rows, method, shift)
            if not cand:
                continue
            h = held_out_choice(counts, cand, folds)
            pooled[(method, shift)] = h["pooled"]
            choices.append(
                {
                    "shift": shift,
                    "method": method,
                    "aer": 100 * score_counts(h["pooled"]).aer,
                    "folds": [{**f, "chosen": f["chosen"].removesuffix(".align")} for f in h["folds"]],
                }
            )
    tests = compare(
        lambda method, shift: (
            (pooled[(method, shift)], 100 * score_counts(pooled[(method, shift)]).aer)
            if (method, shift) in pooled
            else None
        ),
        list(LAYER_METHODS) + list(HEAD_METHODS),
        n_samples,
        lambda b, m: {"base_aer": b, "aer": m},
    )
    return {"folds": k, "choices": choices, "tests": tests}


def ff_effect(rows: list[dict]) -> list[dict]:
    """Per shift and layer: AER of attn-res-ln-ff minus attn-res-ln (what the FF block does), and minus norm."""
    cell = {}
    for r in layer_rows(rows):
        k = parse_name(r["hyp"])
        cell[(k.method, k.shift, k.layer)] = r["aer"]
    out = []
    for (method, shift, layer), aer in sorted(cell.items()):
        if method == "attn-res-ln-ff" and ("attn-res-ln", shift, layer) in cell:
            out.append(
                {
                    "shift": shift,
                    "layer": layer,
                    "aer_ff": aer,
                    "minus_attn_res_ln": aer - cell[("attn-res-ln", shift, layer)],
                    "minus_norm": aer - cell.get(("norm", shift, layer), float("nan")),
                }
            )
    return out


def symmetrized(
    gold: Alignments,
    fwd_rows: list[dict],
    fwd: dict[str, Alignments],
    rev_rows: list[dict],
    rev: dict[str, Alignments],
    n_samples: int,
) -> list[dict]:
    """Each method's best forward and best reverse setting (both in the gold's orientation), symmetrized."""
    out = []
    for method in LAYER_METHODS:
        try:
            f, r = best(layer_rows(fwd_rows), method), best(layer_rows(rev_rows), method)
        except ValueError:
            continue
        for how in ("intersect", "grow-diag", "grow-diag-final-and"):
            c = count_matches(gold, symmetrize_corpus(fwd[f["hyp"]], rev[r["hyp"]], how))
            d = score_counts(c).as_dict(f"{method} {how}")
            ci = bootstrap_ci(c, n_samples).get("aer")  # none below eval.metrics.MIN_SENTENCES sentences
            d.update(forward=f["hyp"], reverse=r["hyp"], ci95_aer=[100 * x for x in ci] if ci else None)
            out.append(d)
    return out


def others(gold: Alignments, outputs_dir: str) -> list[dict]:
    """Other systems' RWTH outputs from ``outputs_dir`` (their first ``len(gold)`` sentences), scored
    here, with their training data named."""
    rows = []
    for name, rel, swap, data in OTHERS:
        hyp = read_alignments(os.path.join(outputs_dir, rel))
        if len(hyp) > len(gold):  # --limit
            hyp = hyp.select(list(range(len(gold))))
        rows.append(
            {**score_counts(count_matches(gold, hyp.reversed() if swap else hyp)).as_dict(name), "training_data": data}
        )
    return rows


def _fmt_rows(rows: list[dict], extra: str | None = None) -> list[str]:
    lines = [
        "| system | AER | P | R | " + (f"{extra} |" if extra else ""),
        "|---|---:|---:|---:|" + ("---|" if extra else ""),
    ]
    for r in rows:
        lines.append(
            f"| {r['hyp']} | {r['aer']:.1f} | {r['precision']:.1f} | {r['recall']:.1f} | "
            + (f"{r.get(extra, '')} |" if extra else "")
        )
    return lines


def plain_words(directions: dict, tests: dict, ff: dict) -> list[str]:
    """What holds and what does not, from the figures themselves."""
    lines = []
    for d, res in directions.items():
        for shift in ("awo", "awi"):
            cells = [t for t in tests.get(d, []) if t["shift"] == shift and t["base"] == "attn"]
            if cells:
                top = min(cells, key=lambda t: t["norm_aer"])
                a_aer = cells[0]["attn_aer"]
                lines.append(
                    f"- {res['label']} {shift.upper()}: the best method is `{top['method']}` "
                    f"({top['norm'].removesuffix('.align')}, AER {top['norm_aer']:.1f}) against `attn` "
                    f"{a_aer:.1f}" + ("" if top["norm_aer"] < a_aer else ": no method beats attention here") + "."
                )
        for t in tests.get(d, []):
            if not (t["base"] == "attn" and t["method"] == "norm"):
                continue
            verdict = "lower" if t["delta"] < 0 else "higher"
            sig = "significant" if t["p_holm"] < 0.05 else "not significant"
            lines.append(
                f"- {res['label']} {t['shift'].upper()}: best `norm` ({t['norm'].removesuffix('.align')}) "
                f"AER {t['norm_aer']:.1f} vs best `attn` ({t['attn'].removesuffix('.align')}) "
                f"{t['attn_aer']:.1f}: norms {verdict} by {abs(t['delta']):.1f} points "
                f"(95% CI of the difference [{t['delta_ci'][0]:.1f}, {t['delta_ci'][1]:.1f}], "
                f"one-sided paired bootstrap p = {t['p_value']:.3f}, Holm-adjusted {t['p_holm']:.3f}, {sig}). "
                "The paper (De->En): " + ("47.7 -> 41.4." if t["shift"] == "awo" else "29.8 -> 25.0.")
            )
        eff = ff.get(d, [])
        if eff:
            worse = sum(1 for e in eff if e["minus_attn_res_ln"] > 0)
            lines.append(
                f"- {res['label']}: carrying the decomposition through the FF block changes AER by "
                + ", ".join(f"{e['minus_attn_res_ln']:+.1f} ({e['shift'].upper()} layer {e['layer']})" for e in eff)
                + f" against attn-res-ln; worse in {worse} of {len(eff)} cells."
            )
    return lines


PAPER_AWI_MARGIN = 4.8  # Kobayashi et al. (2020), AWI: attention weights 29.8 -> norms 25.0


def held_out_section(directions: dict, held: dict, n: int) -> list[str]:
    """The held-out headline: what holds in plain words, the choices per fold, the tests."""
    md = [
        "## Headline: settings chosen on held-out sentences (two folds)",
        "",
        f"Each method's layer (per-head methods: layer and head) is chosen on one half of the {n} sentences "
        "(0-based sentence i in fold i % 2: 'even' is sentences 0, 2, 4, ...) and scored on the other; the two held-out halves are pooled into one "
        "alignment of every sentence, on which methods are compared (paired bootstrap over sentences, "
        '1,000 resamples; p one-sided, for "the method\'s AER is lower", Holm-adjusted over all the tests of one '
        "direction).",
        "",
    ]
    for d, res in directions.items():
        h = held.get(d)
        if not h:
            continue
        for shift in ("awo", "awi"):
            cells = [c for c in h["choices"] if c["shift"] == shift]
            if cells:
                top = min(cells, key=lambda c: c["aer"])
                attn = next((c for c in cells if c["method"] == "attn"), None)
                md.append(
                    f"- {res['label']} {shift.upper()}: best held-out method `{top['method']}` AER "
                    f"{top['aer']:.1f}" + (f" against `attn` {attn['aer']:.1f}." if attn else ".")
                )
            for t in h["tests"]:
                if t["shift"] == shift and t["base"] == "attn" and t["method"] == "norm":
                    gain = -t["delta"]
                    sig = t["p_holm"] < 0.05
                    line = (
                        f"- {res['label']} {shift.upper()}: `norm` {t['aer']:.1f} vs `attn` {t['base_aer']:.1f}: "
                        + (
                            "no difference (under 0.05 points)"
                            if abs(gain) < 0.05
                            else f"norms {'lower' if gain > 0 else 'higher'} by {abs(gain):.1f} points"
                        )
                        + " (95% CI of the "
                        f"difference [{t['delta_ci'][0]:.1f}, {t['delta_ci'][1]:.1f}], one-sided p = {t['p_value']:.3f}, "
                        f"Holm {t['p_holm']:.3f})."
                    )
                    if shift == "awi":
                        line += f" The paper's AWI margin is {PAPER_AWI_MARGIN} points: " + (
                            "reached."
                            if gain >= PAPER_AWI_MARGIN and sig
                            else "as large, but not significant."
                            if gain >= PAPER_AWI_MARGIN
                            else f"not reached ({PAPER_AWI_MARGIN - gain:.1f} points short"
                            + ("" if sig else ", and not significant")
                            + ")."
                        )
                    md.append(line)
    md.append("")
    for d, res in directions.items():
        h = held.get(d)
        if not h:
            continue
        md += [
            f"{res['label']}, held-out choices:",
            "",
            "| shift | method | chosen on odd -> AER on even | chosen on even -> AER on odd | pooled AER |",
            "|---|---|---|---|---:|",
        ]
        for c in h["choices"]:
            f0, f1 = c["folds"]
            md.append(
                f"| {c['shift'].upper()} | {c['method']} | {f0['chosen']} -> {f0['test_aer']:.1f} | "
                f"{f1['chosen']} -> {f1['test_aer']:.1f} | {c['aer']:.1f} |"
            )
        md += [
            "",
            f"{res['label']}, held-out tests:",
            "",
            "| shift | method | AER | against | its AER | delta | 95% CI | p (one-sided) | p (Holm) |",
            "|---|---|---:|---|---:|---:|---|---:|---:|",
        ]
        for t in h["tests"]:
            md.append(
                f"| {t['shift'].upper()} | {t['method']} | {t['aer']:.1f} | {t['base']} | {t['base_aer']:.1f} | "
                f"{t['delta']:+.1f} | [{t['delta_ci'][0]:.1f}, {t['delta_ci'][1]:.1f}] | {t['p_value']:.3f} | "
                f"{t['p_holm']:.3f} |"
            )
        md.append("")
    return md


PROTOCOL_TEXT = {
    "x20": "Protocol of our models and of eflomal: the training text plus the test sentences (never their gold "
    "links), as lilt/alignment-scripts trains every aligner, here each 20 times (as the models' record says, or "
    "assumed where it says nothing, as for the models shipped up to 0.2.0); the paper removed the test sentences.",
    "halves": "Protocol of our models: the test halves (benchmarks/results/halves_protocol.md: {record}; never a gold "
    "link); eflomal trained on the same corpus with every test sentence once (it must see a sentence to align it), "
    "as lilt/alignment-scripts trains every aligner; the paper removed the test sentences.",
}
"""The report's protocol sentence, from what the models' record says (align.gold.protocol.protocol_of)."""
EFLOMAL_BESIDE = {
    "x20": {True: " (exactly the NMT models' text)", False: " (the NMT models saw them x20)"},
    "halves": {True: " (the NMT models' corpus, but they saw the odd-numbered once and the even-numbered never)",
               False: " (the NMT models' corpus, but they saw the odd-numbered once and the even-numbered never)"},
}  # fmt: skip


def write_report(
    out: str,
    meta: dict,
    directions: dict,
    tests: dict,
    ff: dict,
    sym: list,
    other_rows: list,
    eflomal: dict | None,
    held: dict | None = None,
) -> str:
    """Write NAME.md and NAME.json (atomically; NAME = meta["name"]) and return the Markdown."""
    name = meta.get("name", "rwth_deen")
    md = [
        f"# {meta.get('title', 'RWTH De-En word alignment')}: {meta['sentences']} sentence pairs",
        "",
        f"Every figure below was printed by `{meta.get('command', 'python benchmarks/rwth_experiment.py')}` (the "
        "gold read from `--gold-dir`, never copied), the eflomal rows by the command given with them.",
        "",
        "AER (%) against the gold (sure + possible links), word level, argmax over source words. "
        + PROTOCOL_TEXT[meta.get("protocol", "x20")].format(record=meta.get("record", ""))
        + f" Models: {meta['models']}.",
        "",
    ]
    for d, res in directions.items():
        md += [
            f"## {res['label']} ({res['model']})",
            "",
            format_markdown(res["grid"]),
            "",
            f"![AER per layer]({name}_{d}.png)",
            "",
            "<details><summary>precision and recall</summary>",
            "",
            format_markdown(res["grid"], "precision", "P (%)"),
            "",
            format_markdown(res["grid"], "recall", "R (%)"),
            "",
            "</details>",
            "",
        ]
    if held:
        md += held_out_section(directions, held, meta["sentences"])
    if tests:
        md += [
            "## The paper's protocol: best layer per method on all sentences (paired bootstrap)",
            "",
            f"Layers chosen on the same {meta['sentences']} sentences that are scored, as Kobayashi et al. (2020) "
            'report (optimistic: the choice sees the test). p-values are one-sided ("the method\'s AER is lower") and '
            "Holm-adjusted over the tests of one direction (each method against `attn` and against `norm`, "
            "both shifts).",
            "",
        ]
        md += plain_words(directions, tests, ff) + [""]
        for d, res in directions.items():
            md += [
                f"{res['label']}:",
                "",
                "| shift | method | best setting | AER | against | its AER | delta | "
                "95% CI | p (one-sided) | p (Holm) |",
                "|---|---|---|---:|---|---:|---:|---|---:|---:|",
            ]
            for t in tests.get(d, []):
                md.append(
                    f"| {t['shift'].upper()} | {t['method']} | {t['norm'].removesuffix('.align')} | "
                    f"{t['norm_aer']:.1f} | {t['base']} | {t['attn_aer']:.1f} | {t['delta']:+.1f} | "
                    f"[{t['delta_ci'][0]:.1f}, {t['delta_ci'][1]:.1f}] | {t['p_value']:.3f} | {t['p_holm']:.3f} |"
                )
            md.append("")
    if sym:
        md += ["## Symmetrized (best forward and best reverse setting of each method on all sentences)", ""]
        top = min(sym, key=lambda r: r["aer"])
        run = "x1" if meta.get("protocol") == "halves" else "x20"  # eflomal as the models saw the sentences
        e_same = (eflomal or {}).get(run)
        if e_same:
            eb = min(e_same["results"].values(), key=lambda r: r["aer"])
            md += [
                f"Best symmetrized: `{top['hyp']}` AER {top['aer']:.1f} against eflomal on the same text "
                f"(test sentences {run}) `{eb['hyp']}` {eb['aer']:.1f} (both settings picked on these sentences): "
                + (
                    f"ahead by {eb['aer'] - top['aer']:.1f} points."
                    if top["aer"] < eb["aer"]
                    else f"behind by {top['aer'] - eb['aer']:.1f} points."
                ),
                "",
            ]
        md += _fmt_rows(sym, "forward") + [""]
    md += ["## Other systems", ""]
    if meta.get("pair", "deen") == "deen":  # the published figures are on RWTH De-En
        md += (
            [f"Kobayashi et al. (2020), quoted: {PAPER_DATA}.", "", "| system | AER |", "|---|---:|"]
            + [f"| {p['system']} | {p['aer']:.1f} |" for p in PAPER]
            + [""]
        )
        md += [
            "ALTI+ authors' figures, quoted (Ferrando et al. 2022; their repository's AER notebook; a 6-layer "
            "post-LN Transformer trained on Europarl De-En, De->En):",
            "",
            "| system | AER |",
            "|---|---:|",
        ]
        md += [f"| {p['system']} | {p['aer']:.1f} |" for p in ALTI_PAPER] + [""]
    for run in sorted(eflomal or {}, key=lambda r: -int(r[1:])):  # x20 first
        e = eflomal[run]
        same = EFLOMAL_BESIDE[meta.get("protocol", "x20")][e["test_repeat"] == 20]
        md += [
            f"eflomal {e['eflomal']} on our models' corpus with the test sentences {run}{same}: "
            f"{e['train_pairs']} pairs + {e['test_pairs']} x{e['test_repeat']} "
            f"(`python benchmarks/eflomal_baseline.py --pair {e.get('pair', 'deen')} --test-repeat {e['test_repeat']}`):",
            "",
        ]
        md += _fmt_rows([r for r in e["results"].values()]) + [""]
    if other_rows:
        md += ["Outputs in ../shared/data/system_outputs, scored here (training data differ from ours):", ""]
        md += _fmt_rows(other_rows, "training_data") + [""]
    text = "\n".join(md) + "\n"
    payload = {
        "meta": meta,
        "directions": directions,
        "held_out": held,
        "paper_protocol": tests,
        "ff_effect": ff,
        "symmetrized": sym,
        "paper": {"data": PAPER_DATA, "rows": PAPER},
        "eflomal": eflomal,
        "others": other_rows,
    }
    for fname, body in ((f"{name}.md", text), (f"{name}.json", json.dumps(payload, indent=1))):
        tmp = os.path.join(out, f".tmp-{fname}")
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(body)
        os.replace(tmp, os.path.join(out, fname))
    return text


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-t", "--test-set", default="rwth", help="named test set (align-eval --list; default rwth)")
    ap.add_argument(
        "--testsets-dir",
        help="folder of the sets that are not shipped, e.g. your copy of the RWTH set "
        "as DIR/deen_rwth/deen.{src-tgt,gold} (default $NORM_ALIGN_TESTSETS, else $NORM_ALIGN_SHARED/gold)",
    )
    ap.add_argument("--forward", default=os.path.join(ROOT, "data", "models", "deen"))
    ap.add_argument("--reverse", default=os.path.join(ROOT, "data", "models", "ende"))
    ap.add_argument(
        "--others",
        help="folder of other systems' outputs on the RWTH set ('' to leave them out; default "
        "$NORM_ALIGN_SHARED/system_outputs)",
    )
    ap.add_argument(
        "--eflomal",
        nargs="*",
        default=[os.path.join(ROOT, "benchmarks", "results", f"eflomal_deen_x{n}.json") for n in (20, 1)],
        help="eflomal_baseline.py results to report (default: the x20 and x1 runs)",
    )
    ap.add_argument("--out", default=os.path.join(ROOT, "benchmarks", "results"))
    ap.add_argument("--limit", type=int, default=0, help="only the first N sentences (a quick look)")
    ap.add_argument("--name", help="stem of the output files (default rwth_deen; rwth_deen_halves for models of the "
                    "test-halves protocol, so that the x20 results stay)")  # fmt: skip
    ap.add_argument("--title", default="RWTH De-En word alignment", help="heading of the report")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--device", default="cpu", help="where the models run (cpu, cuda, cuda:1, ...)")
    ap.add_argument("--bootstrap", type=int, default=1000)
    args = ap.parse_args(argv)
    if args.others is None:
        args.others = os.path.join(shared_data_dir(), "system_outputs")
    present = [m for m in (args.forward, args.reverse) if os.path.isdir(m) or os.path.isfile(m)]
    try:  # the report says what the models saw of the gold: their own record, the same for both
        protocol = protocol_of(present)
    except ProtocolError as e:
        print(f"rwth_experiment: {e}", file=sys.stderr)
        return 1
    args.name = args.name or "rwth_deen" + ("_halves" if protocol == "halves" else "")
    record = read_training_text(present[0]).get("test_halves") if present else None
    t0 = time.time()
    try:
        src, tgt = testsets.get(args.test_set).langs
        args.pair = src + tgt
        pairs, gold = load_gold(args.test_set, args.limit, args.testsets_dir)
    except ValueError as e:
        print(f"rwth_experiment: {e}", file=sys.stderr)
        return 1
    os.makedirs(args.out, exist_ok=True)
    plan = [
        ("forward", args.forward, src, tgt, f"{src}{tgt}", f"{src.title()}->{tgt.title()}", False),
        ("reverse", args.reverse, tgt, src, f"{tgt}{src}", f"{tgt.title()}->{src.title()}", True),
    ]
    directions, dumps, all_rows, tests, ff, models, held = {}, {}, {}, {}, {}, [], {}
    for _role, model_dir, _s, _t, key, label, swap in plan:
        if not any(os.path.exists(os.path.join(model_dir, f)) for f in ("model.safetensors", "model.pt")):
            print(f"rwth_experiment: no model in {model_dir}: {label} left out", file=sys.stderr)
            continue
        print(f"[{label}] forced alignment of {len(pairs)} sentences with {model_dir}", file=sys.stderr, flush=True)
        sent = [(b, a) for a, b in pairs] if swap else pairs
        hyps = align_direction(model_dir, sent, args.batch_size, device=args.device)
        if swap:
            hyps = {name: h.reversed() for name, h in hyps.items()}
        rows, counts = score_all(gold, hyps)
        dumps[key], all_rows[key] = hyps, rows
        grid = layer_rows(rows) + summarize_heads(rows)
        directions[key] = {"label": label, "model": os.path.relpath(model_dir, ROOT), "grid": grid}
        tests[key] = headline_tests(rows, counts, args.bootstrap)
        held[key] = held_out_tests(rows, counts, args.bootstrap)
        ff[key] = ff_effect(rows)
        models.append(f"{label} `{os.path.relpath(model_dir, ROOT)}`")
        plot_heatmap(layer_rows(rows), os.path.join(args.out, f"{args.name}_{key}.png"))
    if not directions:
        print("rwth_experiment: no model to run (see --forward/--reverse)", file=sys.stderr)
        return 1
    keys = list(dumps)
    sym = (
        symmetrized(gold, all_rows[keys[0]], dumps[keys[0]], all_rows[keys[1]], dumps[keys[1]], args.bootstrap)
        if len(keys) == 2
        else []
    )
    other_rows = others(gold, args.others) if args.others else []
    eflomal = {}
    if args.limit:
        print("rwth_experiment: --limit: eflomal's whole-set figures left out", file=sys.stderr)
    else:
        for path in args.eflomal:
            if not os.path.exists(path):
                print(f"rwth_experiment: no {path} (run benchmarks/eflomal_baseline.py): left out", file=sys.stderr)
                continue
            with open(path) as f:
                e = json.load(f)
            eflomal[f"x{e['test_repeat']}"] = e
    given = sys.argv[1:] if argv is None else list(argv)
    meta = {
        "sentences": len(pairs),
        "models": "; ".join(models),
        "seconds": round(time.time() - t0, 1),
        "gold": f"test set {args.test_set} ({testsets.get(args.test_set).pair}, sha256 "
        f"{testsets.get(args.test_set).checksum[:12]}; read where it is, never copied)",
        "pair": args.pair,
        "protocol": protocol,
        "record": describe_halves(record) if record else "",
        "name": args.name,
        "title": args.title,
        "command": shlex.join(["python", "benchmarks/rwth_experiment.py", *given]),
    }
    text = write_report(args.out, meta, directions, tests, ff, sym, other_rows, eflomal, held)
    print(text)
    print(f"{len(pairs)} sentences, {meta['seconds']} s -> {args.out}/{args.name}.md", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
