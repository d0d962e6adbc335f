"""Convert one of our fairseq models to a Hugging Face folder (FSMT weights in safetensors, Marian
tokenizer over our SentencePiece model and dictionary) that AutoModelForSeq2SeqLM and AutoTokenizer load.

Usage: python data/scripts/fairseq_to_hf.py MODEL_DIR OUT_DIR [--src de --tgt en]
(languages default to the dict.SRC.txt / dict.TGT.txt pair in MODEL_DIR and the model card's direction)
"""

from __future__ import annotations

import argparse
import glob
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model_dir")
    ap.add_argument("out_dir")
    ap.add_argument("--src", help="source language (default: read from the model's config)")
    ap.add_argument("--tgt")
    ap.add_argument("--trust-checkpoint", action="store_true", help="unpickle model.pt fully (a file you trust)")
    args = ap.parse_args(argv)
    from fairseq_plugins.checkpoint import read_state, resolve_model_path
    from hf_plugins.convert import fairseq_to_hf

    src, tgt = args.src, args.tgt
    try:
        if not (src and tgt):
            state = read_state(resolve_model_path(args.model_dir), trust=args.trust_checkpoint)
            task = (state.get("cfg") or {}).get("task") or {}
            src, tgt = src or task.get("source_lang"), tgt or task.get("target_lang")
        if not (src and tgt):
            langs = sorted(os.path.basename(p)[5:-4] for p in glob.glob(os.path.join(args.model_dir, "dict.*.txt")))
            ap.error(f"cannot tell the direction; pass --src and --tgt (dictionaries: {', '.join(langs)})")
        out = fairseq_to_hf(args.model_dir, args.out_dir, src, tgt, trust=args.trust_checkpoint)
    except (OSError, ValueError) as e:
        print(f"fairseq_to_hf: {e}", file=sys.stderr)
        return 1
    print(
        f"wrote {out} ({src}->{tgt}): load with AutoModelForSeq2SeqLM / AutoTokenizer, or align-extract --model {out}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
