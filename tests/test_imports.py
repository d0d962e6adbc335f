"""align/ and eval/ are numpy-only: importing them (and running align-eval) loads no torch or fairseq."""

import subprocess
import sys


def test_core_imports_without_torch():
    code = ("import sys; import align, align.formats, align.decode, align.symmetrize, align.subwords, "
            "align.extract, eval, eval.cli; "
            "bad = [m for m in ('torch', 'fairseq', 'matplotlib') if m in sys.modules]; print(bad); sys.exit(bool(bad))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_unsupported_model_error():
    import pytest
    pytest.importorskip("fairseq")
    from fairseq_plugins.capture import UnsupportedModelError, decoder_layers

    class NotTransformer:
        decoder = None
    with pytest.raises(UnsupportedModelError, match="not an encoder-decoder Transformer"):
        decoder_layers(NotTransformer())
