"""Write a shipped model's MODEL_CARD.md from what was measured: the data recipe (prepare.json), the
architecture and update count (the checkpoint), training time and validation perplexity (the
fairseq-train log), held-out BLEU (bleu.py's output line) and AER (a results.json of demo.py or
benchmarks/rwth_experiment.py).

Usage: python data/scripts/model_card.py MODEL_DIR --work WORKDIR --log TRAIN_LOG --command CMD
           [--log TRAIN_LOG --command CMD ...] [--bleu BLEU_LINE_FILE] [--aer RESULTS_JSON]
           [--curve AER_CURVE_MD] [--title TITLE] [--note TEXT]

Training that ran in several sessions (each resuming from the last checkpoint) gives one ``--log`` and
one ``--command`` per run, in order.
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


def log_facts(path: str) -> dict:
    """First and last logged update, wall seconds, last validation perplexity (with its update), updates/s."""
    facts: dict = {}
    ups = []
    start = None
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            t = _STAMP.match(line)
            if t and start is None:
                start = datetime.strptime(t[1], "%Y-%m-%d %H:%M:%S")
            m = _INNER.search(line)
            if m:
                # from the time stamps: fairseq's own wall meter restarts at 0 in a resumed run
                facts["updates_logged"] = int(m[1])
                facts["wall_s"] = (datetime.strptime(t[1], "%Y-%m-%d %H:%M:%S") - start).total_seconds()
                facts.setdefault("first_logged", int(m[1]))
                u = re.search(r"ups=([\d.]+)", line)
                if u:
                    ups.append(float(u[1]))
            m = _VALID.search(line)
            if m:
                facts["valid_ppl"], facts["valid_update"] = float(m[2]), int(m[3])
    if ups:
        facts["ups"] = sum(ups) / len(ups)
    return facts


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
    runs = [log_facts(p) for p in args.log]
    lg = runs[-1]
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
        f"- training pairs: {prep['train_pairs']} (including the {prep['test_pairs']} test sentences "
        f"x{prep['test_repeat']}), from {', '.join(prep['train_files'])} and {prep['test_file']}",
        f"- validation: {prep['valid_pairs']} pairs; seed {prep['seed']}; sentencepiece {prep['sentencepiece']}",
        "- protocol: lilt/alignment-scripts (every aligner trains on the test sentences too); Kobayashi "
        "et al. (2020) removed the test sentences instead",
        "",
        "## Training",
    ]
    for i, (cmd, r) in enumerate(zip(args.command, runs), 1):
        lines.append(
            f"- {'run ' + str(i) + ': ' if len(runs) > 1 else ''}`{cmd}`"
            + (
                f" (updates {r['first_logged']}-{r['updates_logged']} logged, {r['wall_s'] / 60:.0f} min)"
                if len(runs) > 1 and "wall_s" in r
                else ""
            )
        )
    if len(runs) > 1:
        lines.append(
            "- each run resumed from the previous run's last saved checkpoint (every 250 updates); "
            "updates logged after it were lost and done again"
        )
    lines += [
        f"- {ck['updates']} updates; {wall / 60:.0f} min wall on {args.threads} CPU thread"
        f"{'s' if args.threads > 1 else ''} "
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
