"""Write a shipped model's MODEL_CARD.md from what was measured: the data recipe (prepare.json), the
architecture and update count (the checkpoint), training time and validation perplexity (the
fairseq-train log), held-out BLEU (bleu.py's output line) and AER (a results.json of demo.py or
benchmarks/rwth_experiment.py).

Usage: python data/scripts/model_card.py MODEL_DIR --work WORKDIR --log TRAIN_LOG --command CMD
           [--log TRAIN_LOG --command CMD ...] [--bleu BLEU_LINE_FILE] [--aer RESULTS_JSON]
           [--curve AER_CURVE_MD] [--title TITLE] [--note TEXT]

Training that ran in several sessions (each resuming from the last checkpoint) gives one ``--log`` and
one ``--command`` per run, in order, or one log that holds them all (``train_background.sh ... >> LOG``: each
fairseq-train start in it is a run; the runs before the last one from scratch trained another model and are left
out).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from datetime import datetime

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

from eval.grid import best, layer_rows, parse_name  # noqa: E402

_INNER = re.compile(r"\| train_inner \|.*?num_updates=(\d+)")
_STAMP = re.compile(r"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) \|")
_VALID = re.compile(r"valid on 'valid' subset \| .*?\| nll_loss ([\d.]+) \| ppl ([\d.]+) .*?\| num_updates (\d+)")


_START = re.compile(
    r"fairseq\.trainer \| (?:No existing checkpoint found|Loaded checkpoint .*?\(epoch \d+ @ (\d+) updates\))"
)
_THREADS = re.compile(r"threads: (\d+)$")
_SAVED = re.compile(r"Saved checkpoint .*?\(epoch \d+ @ (\d+) updates")


def log_runs(path: str) -> list[dict]:
    """The fairseq-train runs of one log, in order (a log that ``>>`` appended every resumed run to): per run its
    first update (0 from scratch, else the update count it loaded), the last update it logged and saved, its wall
    seconds (its start to its last line of progress, so the hours between two runs do not count; a pause within a
    run does), the mean of its ``ups=``, its validation perplexities (``valid``: update -> perplexity; the last as
    ``valid_ppl`` at ``valid_update``), and its threads where train_background.sh logged them (else None)."""
    runs: list[dict] = []
    cur: dict | None = None
    threads = None  # train_background.sh's "threads: N" line, before the run it starts
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if m := _THREADS.match(line):
                threads = int(m[1])
                continue
            t = _STAMP.match(line)
            stamp = datetime.strptime(t[1], "%Y-%m-%d %H:%M:%S") if t else None
            m = _START.search(line)
            if m and stamp:
                cur = {"start_update": int(m[1] or 0), "t0": stamp, "t1": stamp, "ups_list": [], "threads": threads}
                runs.append(cur)
                threads = None
                continue
            if cur is None:
                continue
            # the run's end: its last line of progress (the next run's start-up lines, stamped after the hours
            # between two sessions, come before that run's own start line)
            progress = False
            if m := _INNER.search(line):
                cur["updates_logged"], progress = int(m[1]), True
                if u := re.search(r"ups=([\d.]+)", line):
                    cur["ups_list"].append(float(u[1]))
            if m := _SAVED.search(line):
                cur["saved"], progress = int(m[1]), True
            if m := _VALID.search(line):
                cur["valid_ppl"], cur["valid_update"], progress = float(m[2]), int(m[3]), True
                cur.setdefault("valid", {})[int(m[3])] = float(m[2])
            if progress and stamp:
                cur["t1"] = stamp
    for r in runs:
        r["wall_s"] = (r.pop("t1") - r.pop("t0")).total_seconds()
        ups = r.pop("ups_list")
        if ups:
            r["ups"] = sum(ups) / len(ups)
    return runs


def model_runs(runs: list[dict]) -> tuple[list[dict], int]:
    """The runs that trained the model: from the last run that started from scratch (or the first run, where none
    did: a run that continued a shipped model) to the end; and how many runs before it were left out."""
    first = max((i for i, r in enumerate(runs) if r["start_update"] == 0), default=0)
    return runs[first:], first


def distinct_parameters(model: dict, share_all: bool, share_decoder_io: bool) -> int:
    """Parameters of a fairseq state dict, each tied weight once (shared embeddings are one matrix under
    up to three keys; an export may store them as one tensor or as equal copies)."""
    tied = set()
    if share_all:
        tied.add("decoder.embed_tokens.weight")
    if share_all or share_decoder_io:
        tied.add("decoder.output_projection.weight")
    seen, total = set(), 0
    for k, v in model.items():
        # buffers, no parameters: fairseq's version markers and the sinusoidal positions' _float_tensor
        if k.endswith((".version", "_float_tensor")) or k in tied:
            continue
        if v.numel() and v.data_ptr() in seen:  # one tensor under two keys
            continue
        seen.add(v.data_ptr())
        total += v.numel()
    return total


def checkpoint_facts(path: str) -> dict:
    """Architecture and update count stored in the exported model (a folder, safetensors or .pt)."""
    from fairseq_plugins.checkpoint import read_state, resolve_model_path

    state = read_state(path)
    m = state["cfg"]["model"]
    get = (lambda k: getattr(m, k, None)) if not isinstance(m, dict) else m.get
    hist = state.get("optimizer_history") or [{}]
    params = distinct_parameters(
        state["model"], bool(get("share_all_embeddings")), bool(get("share_decoder_input_output_embed"))
    )
    dtypes = sorted({str(v.dtype).removeprefix("torch.") for v in state["model"].values() if v.is_floating_point()})
    return {
        "arch": get("arch"),
        "encoder_layers": get("encoder_layers"),
        "decoder_layers": get("decoder_layers"),
        "d_model": get("encoder_embed_dim"),
        "ffn": get("encoder_ffn_embed_dim"),
        "heads": get("decoder_attention_heads"),
        "normalize_before": get("decoder_normalize_before"),
        "dropout": get("dropout"),
        "updates": hist[-1].get("num_updates"),
        "parameters": params,
        "shared": bool(get("share_all_embeddings")),
        "dtypes": "/".join(dtypes),
        "optimizer_state": bool((state.get("last_optimizer_state") or {}).get("state")),  # Adam moments
        "size_mb": round(os.path.getsize(resolve_model_path(path)) / 1e6, 1),
    }


def aer_lines(results_path: str, direction: str | None = None) -> list[str]:
    """Best layer of each method and shift from a demo results.json (a list of rows) or from one
    direction (default: the first) of rwth_experiment.py's JSON."""
    with open(results_path) as f:
        rows = json.load(f)
    if isinstance(rows, dict):
        dirs = rows["directions"]
        if direction is not None and direction not in dirs:
            raise ValueError(f"{results_path}: no direction {direction!r}; it has {', '.join(dirs)}")
        rows = dirs[direction or next(iter(dirs))]["grid"]
    out = ["| method | shift | best layer | AER | P | R |", "|---|---|---:|---:|---:|---:|"]
    by_shift: dict[str, list[dict]] = {}
    methods: set[tuple[str, str]] = set()
    for r in layer_rows(rows):
        k = parse_name(r["hyp"])
        by_shift.setdefault(k.shift, []).append(r)
        methods.add((k.method, k.shift))
    for method, shift in sorted(methods):
        b = best(by_shift[shift], method)
        out.append(
            f"| {method} | {shift.upper()} | {parse_name(b['hyp']).layer} | {b['aer']:.1f} | "
            f"{b['precision']:.1f} | {b['recall']:.1f} |"
        )
    return out


def data_lines(prep: dict) -> list[str]:
    """The card's data lines from prepare.json: the training text and what it held of the gold test sentences
    (every one ``test_repeat`` times, or the test-halves protocol: the odd-numbered once, the even-numbered never)."""
    halves = prep.get("test_halves")
    if halves:
        held = (
            f"including {halves['seen_once']} of the {prep['test_pairs']} test sentences once: the odd-numbered; "
            f"the {halves['never_seen']} even-numbered never"
        )
        protocol = (
            "test halves (benchmarks/results/halves_protocol.md): on the odd-numbered sentences lilt/alignment-scripts' "
            "(every aligner trains on the test sentences once), on the even-numbered a model that never saw them"
        )
        notes = [
            f"- {halves['odd_not_added_equal_to_an_even_one']} odd-numbered sentences equal to an even-numbered one "
            f"not added; {halves['training_pairs_removed_equal_to_an_even_one']} training pairs equal to an "
            f"even-numbered one removed; {halves['even_with_a_side_in_training']} even-numbered sentences have one "
            "side equal to a side of a training pair"
        ]
    else:
        held = f"including the {prep['test_pairs']} test sentences x{prep['test_repeat']}"
        protocol = (
            "lilt/alignment-scripts (every aligner trains on the test sentences too)"
            + (f", here each {prep['test_repeat']} times" if prep.get("test_repeat", 1) != 1 else "")
            + "; Kobayashi et al. (2020) removed the test sentences instead"
        )
        notes = []
    return [
        f"- training pairs: {prep['train_pairs']} ({held}), from {', '.join(prep['train_files'])} and "
        f"{prep['test_file']}",
        *notes,
        f"- validation: {prep['valid_pairs']} pairs; seed {prep['seed']}; sentencepiece {prep['sentencepiece']}",
        f"- protocol: {protocol}",
    ]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model_dir")
    ap.add_argument("--work", required=True)
    ap.add_argument("--log", required=True, action="append", help="fairseq-train log; once per run, in order")
    ap.add_argument("--command", required=True, action="append", help="the command of each --log's run")
    ap.add_argument("--curve", help="an aer_curve.py Markdown file (AER against updates)")
    ap.add_argument("--bleu", help="file holding bleu.py's output line")
    ap.add_argument("--aer", help="results.json of demo.py or rwth_experiment.py")
    ap.add_argument("--aer-direction", help="direction key in rwth_experiment.py's JSON (deen, ende)")
    ap.add_argument("--aer-set", default="the gold set", help="what --aer was measured on, for the heading")
    ap.add_argument("--title", default=None)
    ap.add_argument("--note", default="")
    ap.add_argument("--threads", type=int, required=True, help="OMP_NUM_THREADS the training ran with")
    args = ap.parse_args(argv)
    if len(args.log) != len(args.command):
        ap.error(f"{len(args.log)} --log but {len(args.command)} --command: give one command per run")
    import fairseq
    import torch

    with open(os.path.join(args.work, "prepare.json")) as f:
        prep = json.load(f)
    ck = checkpoint_facts(args.model_dir)
    every = []
    for log, cmd in zip(args.log, args.command):
        got = log_runs(log)
        if not got:
            raise SystemExit(
                f"{log}: no fairseq-train run in it (no 'No existing checkpoint found' or 'Loaded checkpoint')"
            )
        every += [{**r, "command": cmd} for r in got]
    runs, left_out = model_runs(every)
    # the validation of the checkpoint shipped (make_models.sh exports the lowest validation loss, not the last)
    valid = {u: ppl for r in runs for u, ppl in r.get("valid", {}).items()}
    shipped = ck["updates"] if ck["updates"] in valid else max(valid, default=None)
    lg = {"valid_ppl": valid[shipped], "valid_update": shipped} if shipped is not None else {}
    wall = sum(r.get("wall_s", 0) for r in runs)
    ups = [r["ups"] for r in runs if "ups" in r]
    title = args.title or os.path.basename(os.path.normpath(args.model_dir))
    lines = [
        f"# Model card: {title}",
        "",
        f"{args.note}".strip(),
        "",
        "## Model",
        f"- fairseq `{ck['arch']}`, post-LN" if not ck["normalize_before"] else f"- fairseq `{ck['arch']}`, pre-LN",
        f"- {ck['encoder_layers']}+{ck['decoder_layers']} layers, d_model {ck['d_model']}, FF {ck['ffn']}, "
        f"{ck['heads']} heads, {'shared' if ck['shared'] else 'separate'} embeddings, dropout {ck['dropout']}; "
        f"{ck['parameters'] / 1e6:.1f}M parameters; weights stored in {ck['dtypes']} ({ck['size_mb']} MB, "
        f"{'with' if ck['optimizer_state'] else 'no'} optimizer moments)",
        f"- joint SentencePiece BPE, {prep['vocab']} pieces (`spm.model`), lowercased text",
        "",
        "## Data (training text plus the test sentences, never their gold links)",
        *data_lines(prep),
        "",
        "## Training",
    ]
    for i, r in enumerate(runs, 1):
        end = r.get("saved", r.get("updates_logged", r["start_update"]))
        lines.append(
            f"- {'run ' + str(i) + ': ' if len(runs) > 1 else ''}`{r['command']}`"
            + (f" (updates {r['start_update']}-{end}, {r['wall_s'] / 60:.0f} min" if len(runs) > 1 else "")
            + (f", {r['threads']} thread{'s' if r['threads'] > 1 else ''}" if len(runs) > 1 and r["threads"] else "")
            + (")" if len(runs) > 1 else "")
        )
    if len(runs) > 1:
        lines.append(
            "- each run resumed from the previous run's last saved checkpoint (weights, Adam's moments, data "
            "position); updates after it were lost and done again"
        )
    if left_out:
        lines.append(f"- the log's {left_out} earlier run(s) trained from scratch before this model's run; not counted")
    lines += [
        f"- {ck['updates']} updates; {wall / 60:.0f} min wall (pauses within a run included) on {args.threads} CPU "
        f"thread{'s' if args.threads > 1 else ''}{' where a run does not say' if len(runs) > 1 else ''} "
        f"({sum(ups) / len(ups) if ups else float('nan'):.2f} updates/s); fairseq {fairseq.__version__}, "
        f"torch {torch.__version__}",
        f"- validation perplexity {lg['valid_ppl']:.2f} at update {lg['valid_update']}"
        if "valid_ppl" in lg
        else "- no validation logged",
        "",
    ]
    if args.bleu:
        with open(args.bleu) as f:
            lines += ["## Held-out BLEU (sacrebleu, beam 5)", f"- `{f.read().strip()}`", ""]
    if args.aer:
        lines += (
            [f"## Word alignment on {args.aer_set} (AER %, forced alignment, best layer per method and shift)", ""]
            + aer_lines(args.aer, args.aer_direction)
            + [""]
        )
    if args.curve:
        with open(args.curve, encoding="utf-8") as f:
            table = [line for line in f.read().splitlines() if line.startswith("|")]
        lines += (
            ["## AER during training (best layer per method and shift; `benchmarks/aer_curve.py`)", ""] + table + [""]
        )
    text = "\n".join(line for line in lines) + "\n"
    text = re.sub(r"\n{3,}", "\n\n", text)
    path = os.path.join(args.model_dir, "MODEL_CARD.md")
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
