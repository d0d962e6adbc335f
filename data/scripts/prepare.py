"""Build training data for a translation model whose attention we align: text, SentencePiece, binarized.

Protocol (lilt/alignment-scripts, the usual one for unsupervised aligners): the training text plus
the test sentences (never their gold links), the test sentences repeated ``--test-repeat`` times.
Kobayashi et al. (2020) instead removed the test sentences from the training data.
``--test-halves`` makes both protocols at once: the odd-numbered test sentences (1st, 3rd, ...: the
lines ``align-calibrate --fit-on odd`` takes) in the training text once, the even-numbered never. A
training pair equal to a never-seen test pair (after lowercasing and whitespace) is removed, and an
odd-numbered sentence equal to an even-numbered one is not added: "never" wins; both are counted in
``prepare.json``.

Everything is lowercased (as in the paper); the test side keeps the gold set's tokenization, so
SentencePiece pieces map back to the gold's words by the '▁' marker.

Example (En-Fr demo model):
  python data/scripts/prepare.py --src en --tgt fr --out work/enfr \
      --train ../shared/data/parallel/multi30k/tok/train.lc.norm.tok.{en,fr} \
      --valid ../shared/data/parallel/multi30k/tok/val.lc.norm.tok.{en,fr} \
      --test ../shared/align/gold/sets/enfr_hansards/enfr.src-tgt --test-repeat 20 --vocab 8000
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

from align.io.text import read_text_pairs  # noqa: E402


def _read(path: str) -> list[str]:
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return [" ".join(line.split()) for line in f]


def _pairs(src_path: str, tgt_path: str) -> list[tuple[str, str]]:
    s, t = _read(src_path), _read(tgt_path)
    if len(s) != len(t):
        raise SystemExit(f"{src_path} has {len(s)} lines but {tgt_path} has {len(t)}")
    return [(a.lower(), b.lower()) for a, b in zip(s, t) if a and b]


def write_full_dictionary(sp, train_files: list[str], path: str) -> None:
    """A joined fairseq dictionary of every SentencePiece piece, most frequent in the training text first:
    a piece the training text never shows (a BPE merge absorbed by longer ones) still gets its own id,
    so no in-vocabulary piece is ever binarized as <unk> and loses its word marker."""
    from collections import Counter

    counts: Counter = Counter()
    for name in train_files:
        with open(name, encoding="utf-8") as f:
            for line in f:
                counts.update(line.split())
    pieces = [sp.id_to_piece(i) for i in range(sp.get_piece_size())]
    specials = {"<unk>", "<s>", "</s>", "<pad>"}
    rank = {p: i for i, p in enumerate(pieces)}
    order = sorted((p for p in pieces if p not in specials), key=lambda p: (-counts[p], rank[p]))
    with open(path, "w", encoding="utf-8") as f:
        f.writelines(f"{p} {counts[p]}\n" for p in order)


def split_halves(
    train: list[tuple[str, str]], test: list[tuple[str, str]]
) -> tuple[list[tuple[str, str]], dict[str, int]]:
    """The training pairs with the odd-numbered test pairs (0-based even indices) added once and every pair
    equal to an even-numbered test pair removed; returns (pairs, counts for prepare.json)."""
    never = set(test[1::2])
    kept = [p for p in train if p not in never]
    once = [p for p in test[0::2] if p not in never]
    src_seen, tgt_seen = {a for a, _ in kept + once}, {b for _, b in kept + once}
    counts = {
        "seen_once": len(once),
        "never_seen": len(test[1::2]),
        "odd_not_added_equal_to_an_even_one": len(test[0::2]) - len(once),
        "training_pairs_removed_equal_to_an_even_one": len(train) - len(kept),
        # a short line ("2 .") can still be in the training text as one side of another pair
        "even_with_a_side_in_training": sum(1 for s, t in test[1::2] if s in src_seen or t in tgt_seen),
    }
    return kept + once, counts


def _train_spm(spm, args, raw: str, spm_prefix: str) -> None:
    """A joint BPE model of ``args.vocab`` pieces on the training text of both sides."""
    spm.SentencePieceTrainer.train(
        input=[os.path.join(raw, f"train.{args.src}"), os.path.join(raw, f"train.{args.tgt}")],
        model_prefix=spm_prefix,
        vocab_size=args.vocab,
        model_type="bpe",
        character_coverage=1.0,
        bos_id=-1,
        eos_id=-1,
        pad_id=-1,
        unk_id=0,
        num_threads=2,
        minloglevel=2,
    )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--src", required=True)
    ap.add_argument("--tgt", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--train", nargs="+", required=True, help="SRC TGT file pairs")
    ap.add_argument("--valid", nargs=2, required=True)
    ap.add_argument("--test", required=True, help="'src ||| tgt' gold text (source first)")
    ap.add_argument(
        "--test-repeat", type=int, default=20, help="0: the paper's protocol (test sentences not trained on)"
    )
    ap.add_argument(
        "--test-halves",
        action="store_true",
        help="odd-numbered test sentences once, even-numbered never (overrides --test-repeat)",
    )
    ap.add_argument("--vocab", type=int, default=8000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--dict", help="use this joined fairseq dictionary (a model being resumed) instead of building one")
    ap.add_argument(
        "--spm",
        help="use this SentencePiece model (a model being resumed on new text) instead of training one; needs --dict",
    )
    args = ap.parse_args(argv)
    if len(args.train) % 2:
        ap.error("--train takes SRC TGT file pairs")
    if args.spm and not args.dict:
        ap.error("--spm needs --dict (the dictionary the resumed model was trained with)")
    import sentencepiece as spm

    os.makedirs(args.out, exist_ok=True)
    train = []
    for i in range(0, len(args.train), 2):
        train += _pairs(args.train[i], args.train[i + 1])
    test = [(" ".join(s).lower(), " ".join(t).lower()) for s, t in read_text_pairs(args.test)]
    halves = {}
    if args.test_halves:
        train, halves = split_halves(train, test)
    else:
        train += test * args.test_repeat
    random.Random(args.seed).shuffle(train)
    valid = _pairs(*args.valid)
    raw = os.path.join(args.out, "raw")
    os.makedirs(raw, exist_ok=True)
    for split, data in (("train", train), ("valid", valid), ("test", test)):
        for side, k in ((args.src, 0), (args.tgt, 1)):
            with open(os.path.join(raw, f"{split}.{side}"), "w", encoding="utf-8") as f:
                f.writelines(p[k] + "\n" for p in data)
    spm_prefix = os.path.join(args.out, "spm")
    if args.spm:  # the resumed model's own pieces: its embeddings mean nothing under another segmentation
        import shutil

        dst = spm_prefix + ".model"
        if not (os.path.exists(dst) and os.path.samefile(args.spm, dst)):  # resuming from work/NAME itself
            shutil.copyfile(args.spm, dst)
    else:
        _train_spm(spm, args, raw, spm_prefix)
    sp = spm.SentencePieceProcessor(model_file=spm_prefix + ".model")
    bpe = os.path.join(args.out, "bpe")
    os.makedirs(bpe, exist_ok=True)
    for split in ("train", "valid", "test"):
        for side in (args.src, args.tgt):
            with open(os.path.join(raw, f"{split}.{side}"), encoding="utf-8") as f:
                lines = [" ".join(sp.encode(line.rstrip("\n"), out_type=str)) for line in f]
            with open(os.path.join(bpe, f"{split}.{side}"), "w", encoding="utf-8") as f:
                f.writelines(line + "\n" for line in lines)
    dict_path = args.dict or os.path.join(args.out, "dict.joined.txt")
    if not args.dict:
        write_full_dictionary(sp, [os.path.join(bpe, f"train.{side}") for side in (args.src, args.tgt)], dict_path)
    subprocess.run(
        [
            "fairseq-preprocess",
            "--source-lang",
            args.src,
            "--target-lang",
            args.tgt,
            "--trainpref",
            f"{bpe}/train",
            "--validpref",
            f"{bpe}/valid",
            "--testpref",
            f"{bpe}/test",
            "--destdir",
            os.path.join(args.out, "bin"),
            "--srcdict",
            dict_path,
            "--tgtdict",
            dict_path,
            "--workers",
            "2",
        ],
        check=True,
    )
    meta = {
        "train_pairs": len(train),
        "test_pairs": len(test),
        "test_repeat": None if args.test_halves else args.test_repeat,
        "test_halves": halves or None,
        "valid_pairs": len(valid),
        "vocab": sp.get_piece_size(),
        "seed": args.seed,
        "spm_from": args.spm,
        "dict_from": args.dict,
        "sentencepiece": spm.__version__,
        "train_files": args.train,
        "test_file": args.test,
    }
    with open(os.path.join(args.out, "prepare.json"), "w") as f:
        json.dump(meta, f, indent=1)
    print(json.dumps(meta))
    return 0


if __name__ == "__main__":
    sys.exit(main())
