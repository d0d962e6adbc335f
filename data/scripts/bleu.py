"""Held-out BLEU of a shipped model: translate a tokenized, lowercased test set with beam search and
score with sacrebleu (``tokenize=none``: the text is already tokenized; the signature is printed).

Usage: python data/scripts/bleu.py MODEL_DIR SRC_FILE REF_FILE SRC TGT [--limit N] [--beam 5] [--max-len-a A --max-len-b B]
Example: python data/scripts/bleu.py data/models/enfr \
    ../shared/data/parallel/multi30k/tok/test_2016_flickr.lc.norm.tok.{en,fr} en fr
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import unicodedata

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

from align.io.lines import read_lines  # noqa: E402
from align.io.text import split_tokens  # noqa: E402
from fairseq_plugins.pipeline import binarize  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for a in ("model_dir", "src_file", "ref_file", "src", "tgt"):
        ap.add_argument(a)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--beam", type=int, default=5)
    ap.add_argument("--max-len-a", type=float, default=0, help="fairseq-generate's: at most a*source+b tokens")
    ap.add_argument("--max-len-b", type=int, default=200)
    args = ap.parse_args(argv)
    import sacrebleu

    src, ref = read_lines(args.src_file), read_lines(args.ref_file)
    if len(src) != len(ref):
        print(f"bleu: {args.src_file} has {len(src)} lines but {args.ref_file} has {len(ref)}", file=sys.stderr)
        return 1
    if args.limit:
        src, ref = src[: args.limit], ref[: args.limit]

    # Format characters (zero-width spaces in FLORES) are no words to SentencePiece: drop them.
    def words(line: str) -> list[str]:
        return [w for w in split_tokens(line.lower()) if "".join(c for c in w if unicodedata.category(c) != "Cf")]

    pairs = [(words(s), words(r)) for s, r in zip(src, ref)]
    with tempfile.TemporaryDirectory() as work:
        data = binarize(args.model_dir, pairs, args.src, args.tgt, work)
        # --user-dir only for the plugin's safe checkpoint loader; the task stays fairseq's translation
        cmd = [
            sys.executable,
            "-m",
            "fairseq_cli.generate",
            data,
            "--path",
            args.model_dir,
            "--user-dir",
            os.path.join(ROOT, "fairseq_plugins"),
            "--source-lang",
            args.src,
            "--target-lang",
            args.tgt,
            "--gen-subset",
            "test",
            "--beam",
            str(args.beam),
            "--batch-size",
            "64",
            "--post-process",
            "sentencepiece",
            "--required-batch-size-multiple",
            "1",
            "--max-len-a",
            str(args.max_len_a),
            "--max-len-b",
            str(args.max_len_b),
        ]
        run = subprocess.run(cmd, capture_output=True, text=True)
        if run.returncode != 0:
            print(f"bleu: fairseq-generate failed (exit {run.returncode}):\n{run.stderr[-3000:]}", file=sys.stderr)
            return 1
        out = run.stdout
    hyps = {}
    for line in out.splitlines():
        if line.startswith("D-"):
            k, _, rest = line.partition("\t")
            hyps[int(k[2:])] = rest.partition("\t")[2]
    if len(hyps) != len(pairs):
        print(f"bleu: {len(hyps)} translations for {len(pairs)} sentences", file=sys.stderr)
        return 1
    bleu = sacrebleu.metrics.BLEU(tokenize="none")
    score = bleu.corpus_score([hyps[k] for k in range(len(pairs))], [[" ".join(t) for _, t in pairs]])
    print(f"{score} ({len(pairs)} sentences, beam {args.beam}) | {bleu.get_signature()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
