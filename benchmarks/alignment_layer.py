"""The alignment layer a model teaches itself (align-train), as its training goes: AER on a gold set at every
checkpoint, both directions combined, beside the teacher it learns from and the model's attention at its layer.

1. ``align-train --model M --reverse-model R`` on ``--pairs`` pairs of ``--corpus`` (a seeded sample; the teacher:
   both models' own combined alignments, never gold), a checkpoint every ``--every`` steps.
2. For step 0 (the layer as initialised: the model's attention at its layer) and every checkpoint: ``align-extract
   -t SET --methods learned --reverse-model R --combine ...`` with that checkpoint's weights; each combination
   scored on the gold's odd and even sentences, and the combination chosen on one half reported on the other.
3. The teacher's own figures (the same extraction with its blend and combination).

Writes ``OUT.json``, ``OUT.md`` (the table, with the protocol of the models' training text named by ``--protocol``)
and ``OUT.png`` (the curve).
Usage: python benchmarks/alignment_layer.py --model data/models/enfr --reverse-model data/models/fren -t hansards
           --corpus work/enfr_corpus --pairs 20000 [--layer 1] [--protocol auto|x20|halves] [--work work/alignment_layer/enfr]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from align.cli.extract import main as extract  # noqa: E402
from align.cli.train import main as train  # noqa: E402
from align.extraction.alignment_layer import CONFIG, WEIGHTS  # noqa: E402
from align.gold import testsets  # noqa: E402
from align.gold.protocol import ProtocolError, add_protocol_argument, protocol_of  # noqa: E402
from align.io.atomic import write_text_atomic  # noqa: E402
from align.io.formats import read_alignments  # noqa: E402
from align.spec.signature import file_digest  # noqa: E402
from eval.experiment import folds_of, held_out_choice, score_all  # noqa: E402
from eval.metrics import score_counts  # noqa: E402

COMBOS = ["grow-diag-final-and", "intersect", "gmean:threshold", "hmean:threshold", "gmean:intersect"]


ZERO_WIDTH = ("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff")
"""Characters SentencePiece leaves no piece for: a word made of them cannot be aligned (align-train names its line)."""


def sample_corpus(
    prefix: str,
    src: str,
    tgt: str,
    n: int,
    out: str,
    seed: int = 7,
    extra: Sequence[str] = (),
    never: Sequence[str] = (),
) -> tuple[int, int]:
    """``n`` pairs of ``PREFIX.SRC``/``PREFIX.TGT`` (a seeded sample, in corpus order) as ``src ||| tgt`` lines, then
    the ``extra`` lines (``src ||| tgt``, e.g. the gold pairs the models' training text held once); (pairs written,
    pairs of the sample left out: an empty side, a '|||', a zero-width character, or equal to a ``never`` pair,
    lowercased with whitespace normalized, as data/scripts/prepare.py --test-halves removes them)."""
    with open(f"{prefix}.{src}", encoding="utf-8") as f:
        a = f.read().split("\n")
    with open(f"{prefix}.{tgt}", encoding="utf-8") as f:
        b = f.read().split("\n")
    m = min(len(a), len(b))
    idx = range(m) if not n or n >= m else sorted(random.Random(seed).sample(range(m), n))

    def key(s: str, t: str) -> tuple[str, str]:
        return " ".join(s.lower().split()), " ".join(t.lower().split())

    banned = {key(*line.split(" ||| ", 1)) for line in never}

    def usable(i: int) -> bool:
        both = a[i] + b[i]
        clean = bool(a[i].strip() and b[i].strip()) and "|||" not in both and not any(c in both for c in ZERO_WIDTH)
        return clean and key(a[i], b[i]) not in banned

    # the population keeps the files' final empty "line" (after their last newline), so that a seed samples what
    # it always did; that one is no pair, and not counted as left out
    last = m - 1 if not a[m - 1] and not b[m - 1] else m
    lines = [f"{a[i]} ||| {b[i]}\n" for i in idx if usable(i)]
    kept = len(lines)
    lines += [line.rstrip("\n") + "\n" for line in extra]
    write_text_atomic(out, "".join(lines))
    return len(lines), sum(1 for i in idx if i < last) - kept


def layer_at(final: str, weights: str | None, dest: str) -> str:
    """A layer folder with ``final``'s config and the weights of one checkpoint (its digest put in the config);
    ``weights`` None: the weights as initialised (step 0), written by the caller."""
    os.makedirs(dest, exist_ok=True)
    if weights is not None:
        shutil.copy(weights, os.path.join(dest, WEIGHTS))
    with open(os.path.join(final, CONFIG), encoding="utf-8") as f:
        cfg = json.load(f)
    cfg["weights_sha256"] = file_digest(os.path.join(dest, WEIGHTS))
    write_text_atomic(os.path.join(dest, CONFIG), json.dumps(cfg, indent=1) + "\n")
    return dest


def initial_weights(model: str, final: str, dest: str) -> None:
    """The step-0 weights: the model's own query and key projections at the layer (what align-train starts from)."""
    from safetensors.torch import save_file

    from align.attribution.learned import AlignmentHead, HeadShape
    from align.extraction.loading import load_aligner

    with open(os.path.join(final, CONFIG), encoding="utf-8") as f:
        s = json.load(f)["shape"]
    al = load_aligner(model)
    attn = al.adapter.decoder_layers(al.model)[s["layer"]].cross.attn
    head = AlignmentHead(HeadShape(s["layer"], s["dim"], s["heads"], s["shift"])).init_from(attn)
    os.makedirs(dest, exist_ok=True)
    save_file({k: v.detach().contiguous() for k, v in head.state_dict().items()}, os.path.join(dest, WEIGHTS))


def score_run(out: str, names: list[str], gold, folds) -> dict:
    """Each file's AER (all, odd, even) and the combination chosen on one half, scored on the other."""
    hyps = {n: read_alignments(os.path.join(out, n)) for n in names}
    rows, counts = score_all(gold, hyps)
    res = {"files": {}}
    for n in names:
        c = counts[n]
        res["files"][n] = {
            "all": round(100 * score_counts(c).aer, 2),
            "odd": round(100 * score_counts(_sub(c, folds[0])).aer, 2),
            "even": round(100 * score_counts(_sub(c, folds[1])).aer, 2),
        }
    combined = [n for n in names if n.count(".") == 2]
    if combined:
        ch = held_out_choice(counts, combined, folds)
        res["chosen"] = {
            "odd": {"chosen": ch["folds"][0]["chosen"], "aer": round(ch["folds"][0]["test_aer"], 2)},
            "even": {"chosen": ch["folds"][1]["chosen"], "aer": round(ch["folds"][1]["test_aer"], 2)},
            "pooled": round(100 * score_counts(ch["pooled"]).aer, 2),
        }
    return res


def _sub(c, idx):
    from eval.experiment import subset

    return subset(c, idx)


def run_extract(args, out: str, extra: list[str]) -> None:
    code = extract(
        ["--model", args.model, "--reverse-model", args.reverse_model, "-t", args.test_set, "-l", args.langs,
         "--out", out, "--overwrite", "--combine", ",".join(COMBOS), "--progress", "off", *extra]
    )  # fmt: skip
    if code != 0:
        raise SystemExit(f"align-extract failed ({code})")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--reverse-model", required=True)
    ap.add_argument("-t", "--test-set", required=True)
    ap.add_argument("-l", "--langs", required=True, help="the model's direction, e.g. en-fr")
    ap.add_argument("--corpus", required=True, help="PREFIX of PREFIX.SRC / PREFIX.TGT (tokenized, parallel)")
    ap.add_argument("--pairs", type=int, default=20000, help="pairs sampled from the corpus (0: all)")
    ap.add_argument("--layer", type=int)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--every", type=int, default=100, help="steps between checkpoints measured")
    add_protocol_argument(ap, "Labels the report (halves: by half, seen once and never seen).")
    ap.add_argument(
        "--gold-once",
        choices=("none", "odd"),
        help="odd: add the gold set's odd-numbered pairs to the sample once, as the test-halves models' training text "
        "held them (never their links; the even-numbered never); default: odd for halves, none for x20",
    )
    ap.add_argument("--work", help="default work/alignment_layer/MODEL")
    ap.add_argument("--out", help="default benchmarks/results/alignment_layer_SET_MODEL")
    ap.add_argument(
        "--cost-pairs", type=int, default=1000, help="corpus pairs the extraction cost is timed on (0: not timed)"
    )
    ap.add_argument(
        "--teacher-combine", default="gmean:threshold", help="the teacher's combination (align-train --combine)"
    )
    ap.add_argument("--cost-only", action="store_true", help="time the extraction into an earlier run's OUT.json")
    args = ap.parse_args(argv)
    try:  # the report's protocol is the models' own record, the same for both
        args.protocol = protocol_of([args.model, args.reverse_model], args.protocol)
    except ProtocolError as e:
        raise SystemExit(str(e)) from None
    # the layer's corpus holds the gold as the models' training text did
    args.gold_once = args.gold_once or ("odd" if args.protocol == "halves" else "none")
    name = os.path.basename(os.path.normpath(args.model))
    work = args.work or os.path.join(ROOT, "work", "alignment_layer", name)
    out = args.out or os.path.join(ROOT, "benchmarks", "results", f"alignment_layer_{args.test_set}_{name}")
    os.makedirs(work, exist_ok=True)
    src, tgt = args.langs.split("-")
    t0 = time.time()
    corpus = os.path.join(work, "corpus.txt")
    extra: list[str] = []
    never: list[str] = []
    if args.gold_once == "odd":  # 0-based lines 0, 2, ...: the sentences the half models saw once
        seen = testsets.load(args.test_set, args.langs)
        gold = [f"{' '.join(s)} ||| {' '.join(t)}" for s, t in zip(seen.src, seen.tgt)]
        extra, never = gold[0::2], gold[1::2]  # the even-numbered never: a corpus pair equal to one is left out
    n, left_out = sample_corpus(args.corpus, src, tgt, args.pairs, corpus, extra=extra, never=never)
    fwd, rev = os.path.join(work, "fwd"), os.path.join(work, "rev")
    cmd = ["--model", args.model, "--reverse-model", args.reverse_model, "--input", corpus, "--out", fwd,
           "--reverse-out", rev, "--epochs", str(args.epochs), "--lr", str(args.lr), "--checkpoint-every",
           str(args.every), "--truncate", "--progress", "on", "--combine", args.teacher_combine] + (["--layer", str(args.layer)] if args.layer is not None else [])  # fmt: skip
    timing = os.path.join(work, "train_seconds.txt")
    if os.path.isfile(os.path.join(fwd, CONFIG)):  # trained by an earlier run: on this very sample?
        with open(os.path.join(fwd, CONFIG), encoding="utf-8") as f:
            had = json.load(f)["corpus"]["sha256"]
        if had != file_digest(corpus):
            raise SystemExit(f"{work}: its layers were trained on another sample (other --pairs, --gold-once or "
                             "corpus); give another --work")  # fmt: skip
    else:
        if train(cmd) != 0:
            return 1
        write_text_atomic(timing, f"{round(time.time() - t0)}\n")
    with open(timing, encoding="utf-8") as f:
        train_s = int(f.read())  # the training's own time, also when this run found the layers trained
    if args.cost_only:  # time the extraction only, into the results of an earlier run
        with open(out + ".json", encoding="utf-8") as f:
            result = json.load(f)
        combine = result["teacher"]["combine"]
        result["cost"] = cost(args, corpus, fwd, rev, result["layer"], result["teacher"]["blend"], combine,
                              args.cost_pairs, work)  # fmt: skip
        write_text_atomic(out + ".json", json.dumps(result, indent=1) + "\n")
        write_text_atomic(
            out + ".md", table(result, file_names(result["layer"]), file_names(None, result["teacher"]["blend"]))
        )
        print(json.dumps(result["cost"]))
        return 0
    with open(os.path.join(fwd, CONFIG), encoding="utf-8") as f:
        cfg = json.load(f)
    layer, steps = cfg["shape"]["layer"], cfg["training"]["steps"]
    ts = testsets.load(args.test_set, args.langs)
    gold = ts.gold
    folds = folds_of(len(gold), 2)
    result: dict = {"model": args.model, "reverse_model": args.reverse_model, "test_set": args.test_set,
                    "protocol": args.protocol, "gold_once": args.gold_once, "pairs": n, "left_out": left_out, "layer": layer, "steps": steps,
                    "train_seconds": train_s, "training": cfg["training"], "curve": []}  # fmt: skip
    names = file_names(layer)
    with tempfile.TemporaryDirectory() as tmp:
        # the teacher
        blend = cfg["teacher"]["blend"]
        run_extract(args, os.path.join(tmp, "teacher"), ["--methods", "attn", "--layers", str(layer), "--blend", blend])
        tnames = file_names(None, blend)
        result["teacher"] = {
            "blend": blend,
            "combine": cfg["teacher"]["combine"],
            **score_run(os.path.join(tmp, "teacher"), tnames, gold, folds),
        }

        def steps_of(folder: str) -> set[int]:
            names = os.listdir(os.path.join(folder, "train"))
            return {int(x[5:-12]) for x in names if x.startswith("step-") and x.endswith(".safetensors")}

        # the checkpoints both layers have (each direction may keep other pairs after truncation)
        points = [0] + sorted(steps_of(fwd) & steps_of(rev))
        for step in points:
            lf, lr = os.path.join(tmp, f"f{step}"), os.path.join(tmp, f"r{step}")
            if step == 0:
                initial_weights(args.model, fwd, lf)
                initial_weights(args.reverse_model, rev, lr)
                layer_at(fwd, None, lf)
                layer_at(rev, None, lr)
            else:
                layer_at(fwd, os.path.join(fwd, "train", f"step-{step}.safetensors"), lf)
                layer_at(rev, os.path.join(rev, "train", f"step-{step}.safetensors"), lr)
            o = os.path.join(tmp, f"x{step}")
            run_extract(args, o, ["--methods", "learned", "--layers", str(layer), "--alignment-layer", lf,
                                  "--reverse-alignment-layer", lr])  # fmt: skip
            point = {"step": step, **score_run(o, names, gold, folds)}
            result["curve"].append(point)
            print(f"step {step}: one direction {point['files'][names[0]]['all']}, chosen on the other half "
                  f"{point['chosen']['odd']['aer']} (odd) {point['chosen']['even']['aer']} (even)", file=sys.stderr)  # fmt: skip
    if args.cost_pairs:
        result["cost"] = cost(args, corpus, fwd, rev, layer, blend, cfg["teacher"]["combine"], args.cost_pairs, work)
    result["seconds"] = round(time.time() - t0)
    write_text_atomic(out + ".json", json.dumps(result, indent=1) + "\n")
    write_text_atomic(out + ".md", table(result, names, tnames))
    plot(result, out + ".png")
    print(table(result, names, tnames))
    return 0


def file_names(layer: int | None, blend: str = "") -> list[str]:
    """The files of one direction and of every combination: the layer's (``learned``), or ``blend``'s."""
    stem = blend or f"learned-awi-layer{layer}"
    return [f"{stem}.align"] + [f"{stem}.{c.replace(':', '-')}.align" for c in COMBOS]


def cost(args, corpus: str, fwd: str, rev: str, layer: int, blend: str, combine: str, n: int, work: str) -> dict:
    """Seconds of both-direction extraction of the first ``n`` corpus pairs (fastest of two, alternating): with the
    trained layers (``learned``), with the teacher's blend (the recommended setting without a layer), and with the
    model's attention at the layer alone (what the layer adds to the pass it shares)."""
    from contextlib import redirect_stderr
    from io import StringIO

    head = os.path.join(work, f"head{n}.txt")
    with open(corpus, encoding="utf-8") as f, open(head, "w", encoding="utf-8") as g:
        g.writelines(line for _, line in zip(range(n), f))
    common = ["--model", args.model, "--reverse-model", args.reverse_model, "--input", head, "--combine", combine,
              "--truncate", "--progress", "off", "--overwrite", "--out", os.path.join(work, "cost")]  # fmt: skip
    runs = {
        "learned": ["--methods", "learned", "--layers", str(layer), "--alignment-layer", fwd,
                    "--reverse-alignment-layer", rev],
        "teacher_blend": ["--methods", "attn", "--layers", str(layer), "--blend", blend],
        "attn_at_layer": ["--methods", "attn", "--layers", str(layer)],
    }  # fmt: skip
    best: dict[str, float] = {}
    for _ in range(2):
        for name, extra in runs.items():
            t = time.perf_counter()
            with redirect_stderr(StringIO()) as err:
                code = extract(common + extra)
            if code != 0:
                raise SystemExit(f"align-extract ({name}) failed: {err.getvalue().strip()}")
            best[name] = min(best.get(name, math.inf), time.perf_counter() - t)
    return {
        "pairs": n,
        "seconds": {k: round(v, 2) for k, v in best.items()},
        "ratio_to_teacher_blend": round(best["learned"] / best["teacher_blend"], 3),
        "ratio_to_attn": round(best["learned"] / best["attn_at_layer"], 3),
    }


def table(r: dict, names: list[str], tnames: list[str]) -> str:
    last = r["curve"][-1]
    lines = [
        f"# The alignment layer on {r['test_set']} ({r['model']} with {r['reverse_model']})",
        "",
        f"Protocol of the models' training text: **{r['protocol']}**"
        + (" (their record's, or assumed x20 where it records nothing)" if r["protocol"] == "x20" else "")
        + (
            "; the gold set's odd-numbered pairs added to the layer's corpus once"
            if r.get("gold_once") == "odd"
            else ""
        )
        + f". The layer reads decoder layer {r['layer']}, trained "
        f"{r['steps']} steps on {r['pairs']} corpus pairs (no gold; {r.get('left_out', 0)} pairs of the sample left out: "
        f"an empty side or a zero-width character) in {r['train_seconds']} s; its teacher: "
        f"`{r['teacher']['blend']}` in each direction, combined by `{r['teacher']['combine']}`.",
        "",
        "AER (%); `chosen`: the combination chosen on the other half of the gold, scored on this half.",
        "",
        "| | one direction | chosen, odd half | chosen, even half | " + " | ".join(c for c in COMBOS) + " |",
        "|---|---|---|---|" + "---|" * len(COMBOS),
    ]

    def row(label, p, ns):
        f = p["files"]
        return (f"| {label} | {f[ns[0]]['all']} | {p['chosen']['odd']['aer']} ({p['chosen']['odd']['chosen'].split('.')[-2]}) | "
                f"{p['chosen']['even']['aer']} ({p['chosen']['even']['chosen'].split('.')[-2]}) | "
                + " | ".join(str(f[n]["all"]) for n in ns[1:]) + " |")  # fmt: skip

    lines.append(row("teacher", r["teacher"], tnames))
    first = r["curve"][0]
    lines.append(row("step 0 (the model's attention at the layer)", first, names))
    lines.append(row(f"step {last['step']} (trained)", last, names))
    lines += ["", "Every checkpoint (one direction; chosen combination, odd / even half):", ""]
    lines += [
        f"- step {p['step']}: {p['files'][names[0]]['all']}; {p['chosen']['odd']['aer']} / {p['chosen']['even']['aer']}"
        for p in r["curve"]
    ]
    if "cost" in r:
        c = r["cost"]
        sec = c["seconds"]
        lines += ["", f"Extraction cost, both directions, {c['pairs']} corpus pairs (fastest of two): with the layer "
                  f"{sec['learned']} s; the teacher's blend {sec['teacher_blend']} s (**{c['ratio_to_teacher_blend']}x**); "
                  f"the model's attention at the layer {sec['attn_at_layer']} s ({c['ratio_to_attn']}x)."]  # fmt: skip
    return "\n".join(lines) + "\n"


def plot(r: dict, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    xs = [p["step"] for p in r["curve"]]
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot(xs, [p["chosen"]["odd"]["aer"] for p in r["curve"]], marker="o", label="combined, odd half")
    ax.plot(xs, [p["chosen"]["even"]["aer"] for p in r["curve"]], marker="o", label="combined, even half")
    ax.axhline(r["teacher"]["chosen"]["odd"]["aer"], ls="--", c="gray", label="teacher, odd half")
    ax.set_xlabel("training step")
    ax.set_ylabel("AER (%)")
    ax.set_title(f"alignment layer, {r['test_set']} ({r['protocol']})")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    raise SystemExit(main())
