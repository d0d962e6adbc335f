"""align/ and eval/ are numpy-only: importing them (and running align-eval) loads no torch or fairseq."""

import subprocess
import sys


def test_core_imports_without_torch():
    code = ("import sys; import align, align.formats, align.decode, align.symmetrize, align.subwords, "
            "align.extract, eval, eval.cli; "
            "bad = [m for m in ('torch', 'fairseq', 'matplotlib') if m in sys.modules]; print(bad); sys.exit(bool(bad))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_engine_imports_no_framework():
    # the engine, the registry and the adapters are framework-free: torch, never fairseq or transformers
    code = ("import sys; import align.engine, align.methods, align.adapters, align.aligner, align.extract_cli, "
            "align.shards; bad = [m for m in ('fairseq', 'transformers') if m in sys.modules]; print(bad); "
            "sys.exit(bool(bad))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_unsupported_model_error():
    import pytest
    pytest.importorskip("torch")
    from align.adapters import FairseqAdapter, UnsupportedModelError

    class NotTransformer:
        decoder = None
    with pytest.raises(UnsupportedModelError, match="not an encoder-decoder Transformer"):
        FairseqAdapter(1, 2).decoder_layers(NotTransformer())
