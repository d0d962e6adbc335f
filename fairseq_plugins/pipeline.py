"""Forced alignment of whole test sets with fairseq models, in process (the engine of
``align-extract``) or through ``fairseq-generate`` and the plugin (the demo's path)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

from align.links.alignments import Alignments
from align.links.subwords import check_word_map, word_map

from .hub import NormAligner

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def align_pairs(
    model_dir: str,
    pairs: list,
    methods: list[str],
    batch_size: int = 32,
    progress: bool = False,
    device: str | None = None,
) -> dict[str, Alignments]:
    """Forced alignment of (src words, tgt words) pairs with a fairseq model folder, every layer, AWO
    and AWI, per-head methods one file per head: {dump file name: links (src, tgt)}. The same
    engine as ``align-extract`` and the plugin (imported here only when called); ``device`` places the
    model (default CPU), scores stay float32."""
    aligner = NormAligner.from_checkpoint(model_dir, device=device)
    spec = aligner.spec(methods, None, ("awo", "awi"))
    return {
        name: Alignments.from_lists(links) for name, links in aligner.dump(pairs, spec, batch_size, progress).items()
    }


def binarize(model_dir: str, pairs, src: str, tgt: str, work: str) -> str:
    """SentencePiece-encode (src words, tgt words) pairs (keeping their words) and binarize them with
    the model's dictionaries into ``work/bin``; the segmented text stays in ``work/test.{src,tgt}``."""
    import sentencepiece

    sp = sentencepiece.SentencePieceProcessor(model_file=os.path.join(model_dir, "spm.model"))
    for side, k in ((src, 0), (tgt, 1)):
        lines = []
        for i, pair in enumerate(pairs):
            words = [w.lower() for w in pair[k]]
            pieces = sp.encode(" ".join(words), out_type=str)
            check_word_map(pieces, word_map(pieces, "sentencepiece"), words, sentence=f"{side} line {i + 1}")
            lines.append(" ".join(pieces) + "\n")
        with open(os.path.join(work, f"test.{side}"), "w", encoding="utf-8") as f:
            f.writelines(lines)
    dest = os.path.join(work, "bin")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "fairseq_cli.preprocess",
            "--source-lang",
            src,
            "--target-lang",
            tgt,
            "--testpref",
            os.path.join(work, "test"),
            "--destdir",
            dest,
            "--workers",
            "1",
            "--srcdict",
            os.path.join(model_dir, f"dict.{src}.txt"),
            "--tgtdict",
            os.path.join(model_dir, f"dict.{tgt}.txt"),
        ],
        check=True,
        capture_output=True,
    )
    return dest


def generate_command(
    model_dir: str, data: str, src: str, tgt: str, dump: str, batch_size: int, methods: str, text: str | None = None
) -> list[str]:
    """The fairseq-generate command of a forced-alignment dump with the plugin."""
    cmd = [
        sys.executable,
        "-m",
        "fairseq_cli.generate",
        data,
        "--path",
        model_dir,
        "--user-dir",
        os.path.join(ROOT, "fairseq_plugins"),
        "--task",
        "translation_norm_align",
        "--source-lang",
        src,
        "--target-lang",
        tgt,
        "--gen-subset",
        "test",
        "--score-reference",
        "--print-alignment",
        "--alignment-method",
        "norm",
        "--alignment-shift",
        "awi",
        "--alignment-dump",
        dump,
        "--alignment-dump-overwrite",
        "--batch-size",
        str(batch_size),
        "--alignment-dump-methods",
        methods,
    ]
    return cmd + (["--alignment-text", text] if text else [])


def run_with_progress(cmd: list[str], env: dict, log_path: str, total: int) -> int:
    """Run fairseq-generate, keep its output in ``log_path``, show 'aligned k/total' as A- lines arrive."""
    with open(log_path, "w") as log, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, text=True, env=env)
        done = 0
        assert proc.stdout is not None  # stdout=PIPE
        for line in proc.stdout:
            log.write(line)
            if line.startswith("A-"):
                done += 1
                if done % 16 == 0 or done == total:
                    print(f"\r      aligned {done}/{total} sentences", end="", file=sys.stderr, flush=True)
        proc.wait()
        print(file=sys.stderr)
        if proc.returncode != 0:
            err.seek(0)
            print(err.read()[-4000:], file=sys.stderr)
        return proc.returncode
