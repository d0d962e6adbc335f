"""align-extract: word alignments of sentence pairs from any supported translation model.

``align-extract --model PATH --input PAIRS [--out DIR] [--methods attn,norm] [--layers 0,1]
[--shifts awo,awi] [--translate] [--shard K/N]``. ``PATH`` is a fairseq checkpoint (``model.pt``
or a safetensors model folder, with dictionaries and ``spm.model`` beside it) or a Hugging Face
model folder (``config.json``); ``PAIRS`` holds one ``source ||| target`` pair per line
(awesome-align's input; ``-`` for stdin), or source lines only with ``--translate``.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import shutil
import sys
import tempfile
import time
from typing import Iterator

from .extract import LEVELS, SHIFTS, SPECIALS
from .formats import format_links, replace_atomic, split_tokens

# Framework loaders by name, imported only when used: align/ never imports fairseq or transformers.
LOADERS = {
    "fairseq": "fairseq_plugins.hub:NormAligner.from_checkpoint",
    "hf": "hf_plugins.hub:HFAligner.from_pretrained",
}


class InputError(ValueError):
    """Bad input: the message names the file and line."""


def framework_of(path: str) -> str:
    """``hf`` for a folder with config.json (Hugging Face), else ``fairseq``."""
    return "hf" if os.path.isdir(path) and os.path.isfile(os.path.join(path, "config.json")) else "fairseq"


def load_aligner(path: str, framework: str | None = None, **kwargs):
    """Load a model as an :class:`align.aligner.Aligner` with the framework's loader."""
    framework = framework or framework_of(path)
    if framework not in LOADERS:
        raise ValueError(f"unknown framework {framework!r}; valid: {', '.join(LOADERS)}")
    module, _, attr = LOADERS[framework].partition(":")
    obj = importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj(path, **{k: v for k, v in kwargs.items() if v is not None})


def read_pairs(path: str, translate: bool, lowercase: bool) -> Iterator[tuple[int, list[str], list[str] | None]]:
    """(0-based line, source words, target words or None) per line; InputError naming file:line."""
    name = "<stdin>" if path == "-" else path
    f = sys.stdin if path == "-" else open(path, encoding="utf-8-sig", newline=None)
    try:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\r\n")
            if lowercase:
                line = line.lower()
            if translate:
                if "|||" in line:
                    raise InputError(f"{name}:{n}: found '|||'; --translate expects source sentences only")
                src, tgt = split_tokens(line), None
            else:
                parts = line.split("|||")
                if len(parts) != 2:
                    raise InputError(f"{name}:{n}: expected 'source ||| target' (one '|||'); found {len(parts) - 1}")
                src, tgt = split_tokens(parts[0]), split_tokens(parts[1])
                if not tgt:
                    raise InputError(f"{name}:{n}: the target side is empty")
            if not src:
                raise InputError(f"{name}:{n}: the source side is empty")
            yield n - 1, src, tgt
    except UnicodeDecodeError as e:
        raise InputError(f"{name}: not UTF-8 ({e})") from None
    finally:
        if f is not sys.stdin:
            f.close()


def _csv(s: str | None) -> list[str]:
    return [x.strip() for x in s.split(",") if x.strip()] if s else []


def parse_shard(s: str | None) -> tuple[int, int]:
    """``K/N`` (K 0-based) -> (K, N)."""
    if not s:
        return 0, 1
    try:
        k, n = (int(x) for x in s.split("/"))
    except ValueError:
        raise ValueError(f"--shard {s!r}: expected K/N such as 0/4") from None
    if not (n >= 1 and 0 <= k < n):
        raise ValueError(f"--shard {s!r}: K must be in 0..N-1")
    return k, n


def build_parser() -> argparse.ArgumentParser:
    from .decode import DECODERS
    from .methods import METHODS

    ap = argparse.ArgumentParser(prog="align-extract", description=__doc__.splitlines()[0])
    ap.add_argument("--model", required=True, help="fairseq model.pt / model folder, or a Hugging Face model folder")
    ap.add_argument("--input", required=True, help="'source ||| target' per line ('-': stdin)")
    ap.add_argument("--out", help="folder: one Pharaoh file per (method, shift, layer[, head]); default: print one setting")
    ap.add_argument("--methods", default="norm", help=f"comma-separated, of: {', '.join(METHODS)} (default norm)")
    ap.add_argument("--layers", help="comma-separated decoder layers, 0-based (default: all with --out, else the last)")
    ap.add_argument("--shifts", default="awi", help=f"comma-separated, of: {', '.join(SHIFTS)} (default awi)")
    ap.add_argument("--heads", help="heads averaged by per-head methods (default all; --out writes one file per head)")
    ap.add_argument("--level", default="word", choices=LEVELS)
    ap.add_argument("--decoder", default="argmax", choices=list(DECODERS))
    ap.add_argument("--threshold", type=float, help="cutoff of the threshold decoders (share of the row; ratio "
                    "to the row maximum for relative-threshold)")
    ap.add_argument("--specials", default="drop", choices=SPECIALS)
    ap.add_argument("--translate", action="store_true", help="input is source lines: translate, then align the output")
    ap.add_argument("--beam", type=int, default=5, help="beam size with --translate")
    ap.add_argument("--lowercase", action="store_true", help="lowercase the input (models trained on lowercased text)")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--device", default="cpu", help="cpu, cuda, cuda:1, ...")
    ap.add_argument("--dtype", choices=("float32", "float16", "bfloat16"), default="float32",
                    help="the model's dtype (scores are float32 either way)")
    ap.add_argument("--src-lang", help="source language code of multilingual tokenizers (NLLB: eng_Latn)")
    ap.add_argument("--tgt-lang", help="target language code (NLLB: fra_Latn)")
    ap.add_argument("--framework", choices=list(LOADERS), help="default: hf for a folder with config.json")
    ap.add_argument("--trust-checkpoint", action="store_true",
                    help="unpickle a fairseq .pt fully (can run code: only for a file you trust)")
    ap.add_argument("--shard", help="K/N: align lines K, K+N, ... and write OUT/shard-K-of-N/ (merge with align-merge)")
    ap.add_argument("--format", choices=("text", "json"), default="text", help="the summary line's format")
    ap.add_argument("--progress", choices=("auto", "on", "off"), default="auto")
    return ap


def main(argv=None) -> int:
    """align-extract: see the module docstring; exit 0 ok, 1 bad input, 2 usage."""
    ap = build_parser()
    args = ap.parse_args(argv)
    t0 = time.time()
    try:
        shard, shards = parse_shard(args.shard)
        if shards > 1 and not args.out:
            raise ValueError("--shard needs --out")
        if args.threshold is not None and args.decoder not in ("threshold", "relative-threshold"):
            raise ValueError(f"--threshold applies to the threshold decoders; --decoder is {args.decoder}")
        methods, shifts = _csv(args.methods), _csv(args.shifts)
        layers = [int(x) for x in _csv(args.layers)] if args.layers else None
        heads = [int(x) for x in _csv(args.heads)] if args.heads else None
    except ValueError as e:
        ap.error(str(e))
    import torch

    dtype = getattr(torch, args.dtype)
    kwargs = dict(device=args.device, dtype=dtype)
    fw = args.framework or framework_of(args.model)
    if fw == "hf":
        kwargs.update(src_lang=args.src_lang, tgt_lang=args.tgt_lang)
    else:
        kwargs.update(trust=args.trust_checkpoint or None)
    from .methods import METHODS
    bad = [m for m in methods if m not in METHODS]
    if bad:
        ap.error(f"--methods: unknown {', '.join(bad)}; valid: {', '.join(METHODS)}")
    try:
        aligner = load_aligner(args.model, fw, **kwargs)
    except (OSError, ValueError) as e:
        print(f"align-extract: {args.model}: {e}", file=sys.stderr)
        return 1
    if layers is None:
        layers = list(range(aligner.n_layers)) if args.out else [aligner.n_layers - 1]
    opts = {}
    if args.threshold is not None:
        opts["threshold" if args.decoder == "threshold" else "ratio"] = args.threshold
    try:
        spec = aligner.spec(methods, layers, shifts, args.level, args.decoder, heads, args.specials, **opts)
    except ValueError as e:  # a layer, head or shift this model does not have
        ap.error(str(e))
    if not args.out and (len(spec.methods), len(spec.layers), len(spec.shifts)) != (1, 1, 1):
        ap.error("without --out, give one method, one layer and one shift (or --out DIR for many)")
    try:
        n = run(aligner, spec, args, shard, shards)
    except (OSError, ValueError) as e:
        print(f"align-extract: {e}", file=sys.stderr)
        return 1
    summary = {"model": args.model, "framework": fw, "pairs": n, "methods": list(spec.methods),
               "layers": list(spec.layers), "shifts": list(spec.shifts), "out": args.out,
               "shard": f"{shard}/{shards}", "seconds": round(time.time() - t0, 1)}
    if args.format == "json":
        print(json.dumps(summary), file=sys.stderr if not args.out else sys.stdout)
    else:
        print(f"aligned {n} pairs with {fw} {args.model}: {len(spec.methods)} method(s) x {len(spec.layers)} layer(s) "
              f"x {len(spec.shifts)} shift(s) in {summary['seconds']} s" + (f"; files in {args.out}" if args.out else ""),
              file=sys.stderr)
    return 0


def run(aligner, spec, args, shard: int, shards: int) -> int:
    """Align every (shard's) pair of ``args.input``; returns the number of pairs aligned. Output files
    appear only when every pair is done (written to a temporary folder, then moved)."""
    rows = [(i, s, t) for i, s, t in read_pairs(args.input, args.translate, args.lowercase) if i % shards == shard]
    if args.translate:
        hyps = aligner.translate([s for _, s, _ in rows], batch_size=args.batch_size, **({"beam": args.beam}
                                 if type(aligner).__name__ == "NormAligner" else {"num_beams": args.beam}))
        rows = [(i, s, h) for (i, s, _), h in zip(rows, hyps)]
    pairs = ((s, t) for _, s, t in rows)
    it = aligner.iter_scores(pairs, spec, args.batch_size)
    show = args.progress == "on" or (args.progress == "auto" and len(rows) > 500 and sys.stderr.isatty())
    if show:
        from tqdm import tqdm
        it = tqdm(it, total=len(rows), desc="aligning", unit="pair")
    if not args.out:
        (m,), (la,), (sh,) = spec.methods, spec.layers, spec.shifts
        out = []
        from .engine import links_for
        for k, se, te, sc in _named(it, rows, args.input):
            out.append(format_links(links_for(sc, se.words, te.words, spec, m, la, sh)) + "\n")
        sys.stdout.write("".join(out))
        return len(rows)
    os.makedirs(args.out, exist_ok=True)
    tmp = tempfile.mkdtemp(dir=args.out, prefix=".tmp-extract-")
    try:
        files: dict[str, object] = {}
        for k, se, te, sc in _named(it, rows, args.input):
            gid = rows[k][0]
            for name, links in aligner.links(se, te, sc, spec, per_head_files=spec.heads is None).items():
                f = files.get(name)
                if f is None:
                    f = files[name] = open(os.path.join(tmp, name), "w", encoding="utf-8", newline="\n")
                f.write((f"{gid}\t" if shards > 1 else "") + format_links(links) + "\n")
        for f in files.values():
            f.close()
        if args.translate:
            with open(os.path.join(tmp, "translations.txt"), "w", encoding="utf-8") as f:
                f.writelines(" ".join(t) + "\n" for _, _, t in rows)
        if shards > 1:
            from .shards import ShardError, shard_dir
            dest = shard_dir(args.out, shard, shards)
            if os.path.exists(dest):
                raise ShardError(f"{dest} exists already: remove it before writing the shard again")
            n_total = sum(1 for _ in read_pairs(args.input, args.translate, False)) if args.input != "-" else None
            if n_total is None:
                raise ValueError("--shard needs a file input (the total line count must be known)")
            with open(os.path.join(tmp, "manifest.json"), "w") as f:
                json.dump({"shard": shard, "shards": shards, "total": n_total, "sentences": len(rows),
                           "files": sorted(files)}, f, indent=1)
            replace_atomic(tmp, dest)  # a mkdtemp folder, 0o700 until then
        else:
            for name in os.listdir(tmp):
                os.replace(os.path.join(tmp, name), os.path.join(args.out, name))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return len(rows)


def _named(it, rows, path: str):
    """Re-raise word-map errors with the input file and line."""
    from .subwords import WordMapError
    try:
        for k, se, te, sc in it:
            yield k, se, te, sc
    except WordMapError as e:
        msg = str(e)
        # "source sentence 3: ..." -> the input line of the 3rd pair aligned here
        head, _, rest = msg.partition(":")
        try:
            k = int(head.split()[-1]) - 1
            line = rows[k][0] + 1
            raise InputError(f"{path}:{line}: {head.rsplit(' ', 2)[0]}{':' + rest}") from None
        except (ValueError, IndexError):
            raise InputError(f"{path}: {msg}") from None


if __name__ == "__main__":
    sys.exit(main())
