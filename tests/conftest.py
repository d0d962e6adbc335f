import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
SHARED = Path(os.environ.get("NORM_ALIGN_SHARED", ROOT.parent / "shared" / "data"))
# The library finds the shared data only through $NORM_ALIGN_SHARED (align.gold.testsets.shared_data_dir):
# the suite names the copy beside the checkout, and every subprocess it starts inherits it.
if SHARED.is_dir():
    os.environ.setdefault("NORM_ALIGN_SHARED", str(SHARED))


@pytest.fixture(scope="module")
def one_torch_thread():
    """One intra-op torch thread for the module: on a 2-core machine shared with other jobs, two
    threads spin against them and run small tensors 10-50x slower."""
    import torch

    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


@pytest.fixture
def shared() -> Path:
    if not SHARED.is_dir():
        pytest.skip(f"shared data not found at {SHARED} (set NORM_ALIGN_SHARED)")
    return SHARED


def write(tmp_path: Path, name: str, text: str) -> str:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return str(p)


def pytest_configure(config):
    # Under CI a missing ../shared or a framework that does not import must fail the suite, never let
    # its tests skip quietly.
    if os.environ.get("CI"):
        if not SHARED.is_dir():
            raise pytest.UsageError(f"CI: shared data not found at {SHARED} (set NORM_ALIGN_SHARED)")
        for name in ("torch", "fairseq", "transformers"):
            try:
                __import__(name)
            except Exception as e:  # an OSError from a broken extension counts too
                raise pytest.UsageError(f"CI: {name} does not import ({type(e).__name__}: {e})") from None
