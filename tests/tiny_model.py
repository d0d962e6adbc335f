"""A tiny fairseq Transformer trained on a synthetic reversal task with a known word alignment.

Source sentences are 3-7 words from a 12-word vocabulary written as SentencePiece pieces (some
words are two pieces: '▁w3' 'x'); the target is the source reversed, each word replaced by its
counterpart (also some two-piece words). Gold: source word j <-> target word n - 1 - j.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys

SRC_WORDS = [
    ["\u2581a"],
    ["\u2581b"],
    ["\u2581c"],
    ["\u2581d", "x"],
    ["\u2581e"],
    ["\u2581f", "y"],
    ["\u2581g"],
    ["\u2581h"],
    ["\u2581i", "z"],
    ["\u2581j"],
    ["\u2581k"],
    ["\u2581l"],
]
TGT_WORDS = [
    ["\u2581A"],
    ["\u2581B", "q"],
    ["\u2581C"],
    ["\u2581D"],
    ["\u2581E", "r"],
    ["\u2581F"],
    ["\u2581G"],
    ["\u2581H", "s"],
    ["\u2581I"],
    ["\u2581J"],
    ["\u2581K", "t"],
    ["\u2581L"],
]


def make_pairs(n: int, seed: int) -> list[tuple[list[int], list[int]]]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        src = [rng.randrange(len(SRC_WORDS)) for _ in range(rng.randint(3, 7))]
        out.append((src, src[::-1]))
    return out


def pieces(words: list[int], table) -> str:
    return " ".join(p for w in words for p in table[w])


def gold_line(n_words: int) -> str:
    """Pharaoh line of the reversal alignment."""
    return " ".join(f"{j}-{n_words - 1 - j}" for j in range(n_words))


def build(root: str, n_train: int = 3000, n_test: int = 50, updates: int = 600) -> dict:
    """Write data, binarize, train; returns paths. ~1 min on 2 CPU cores."""
    raw, data, ckpt = (os.path.join(root, x) for x in ("raw", "bin", "ckpt"))
    os.makedirs(raw, exist_ok=True)
    splits = {"train": make_pairs(n_train, 1), "valid": make_pairs(100, 2), "test": make_pairs(n_test, 3)}
    for split, pairs in splits.items():
        with open(os.path.join(raw, f"{split}.src"), "w") as fs, open(os.path.join(raw, f"{split}.tgt"), "w") as ft:
            for s, t in pairs:
                fs.write(pieces(s, SRC_WORDS) + "\n")
                ft.write(pieces(t, TGT_WORDS) + "\n")
    with open(os.path.join(root, "gold.align"), "w") as f:
        f.writelines(gold_line(len(s)) + "\n" for s, _ in splits["test"])
    py = sys.executable
    env = {**os.environ, "OMP_NUM_THREADS": "2"}
    subprocess.run(
        [
            py,
            "-m",
            "fairseq_cli.preprocess",
            "--source-lang",
            "src",
            "--target-lang",
            "tgt",
            "--trainpref",
            f"{raw}/train",
            "--validpref",
            f"{raw}/valid",
            "--testpref",
            f"{raw}/test",
            "--destdir",
            data,
            "--joined-dictionary",
            "--workers",
            "1",
        ],
        check=True,
        capture_output=True,
        env=env,
    )
    subprocess.run(
        [
            py,
            "-m",
            "fairseq_cli.train",
            data,
            "--arch",
            "transformer",
            "--share-all-embeddings",
            "--encoder-layers",
            "2",
            "--decoder-layers",
            "2",
            "--encoder-embed-dim",
            "64",
            "--decoder-embed-dim",
            "64",
            "--encoder-ffn-embed-dim",
            "128",
            "--decoder-ffn-embed-dim",
            "128",
            "--encoder-attention-heads",
            "4",
            "--decoder-attention-heads",
            "4",
            "--dropout",
            "0.0",
            "--optimizer",
            "adam",
            "--lr",
            "0.003",
            "--lr-scheduler",
            "inverse_sqrt",
            "--warmup-updates",
            "100",
            "--max-tokens",
            "2000",
            "--max-update",
            str(updates),
            "--seed",
            "1",
            "--save-dir",
            ckpt,
            "--no-epoch-checkpoints",
            "--no-last-checkpoints",
            "--disable-validation",
            "--log-format",
            "none",
            "--num-workers",
            "0",
            "--save-interval-updates",
            str(updates),
        ],
        check=True,
        capture_output=True,
        env=env,
    )
    path = os.path.join(ckpt, "checkpoint_best.pt")
    if not os.path.exists(path):
        path = os.path.join(ckpt, "checkpoint_last.pt")
    if not os.path.exists(path):
        cands = [f for f in os.listdir(ckpt) if f.endswith(".pt")]
        path = os.path.join(ckpt, cands[0])
    return {"root": root, "data": data, "ckpt": path, "gold": os.path.join(root, "gold.align"), "n_test": n_test}
