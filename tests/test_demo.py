"""The main job (./run demo) on the shipped model, on the first sentences only."""

import json
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODEL = os.path.join(ROOT, "data", "models", "enfr", "model.pt")


@pytest.mark.skipif(not os.path.exists(MODEL), reason="shipped model data/models/enfr/model.pt not present")
def test_demo_runs_and_scores_every_file(tmp_path, capsys):
    pytest.importorskip("fairseq")
    sys.path.insert(0, os.path.join(ROOT, "data", "scripts"))
    import demo

    out = tmp_path / "demo"
    assert demo.main(["--out", str(out), "--limit", "12"]) == 0
    results = json.loads((out / "results.json").read_text())
    names = {r["hyp"] for r in results}
    n_layers = len({n.rsplit("-layer", 1)[1].split(".")[0].split("-")[0] for n in names})
    # attn, norm, attn-res-ln, attn-res-ln-ff x AWO/AWI per layer, plus 2 per-head methods x heads
    assert sum(1 for n in names if "-head" not in n) == 4 * 2 * n_layers
    assert all(r["sentences"] == 12 and 0 <= r["aer"] <= 100 for r in results)
    assert (out / "aer_heatmap.png").read_bytes()[:4] == b"\x89PNG"
    assert (out / "example.png").read_bytes()[:4] == b"\x89PNG"
    table = capsys.readouterr().out
    assert "norm-awi" in table and "best:" in table
    for name in os.listdir(out / "alignments"):
        assert len((out / "alignments" / name).read_text().splitlines()) == 12
