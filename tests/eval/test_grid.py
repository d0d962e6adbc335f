import pytest

from eval.grid import GridKey, best, format_grid, format_markdown, layer_rows, parse_name, summarize_heads


def row(name, aer, p=50.0, r=50.0):
    return {"hyp": name, "aer": aer, "precision": p, "recall": r, "f1": 50.0}


def test_parse_name_layer_and_head():
    assert parse_name("norm-awi-layer2.align") == GridKey("norm", "awi", 2, None)
    assert parse_name("attn-res-ln-ff-awo-layer10.align") == GridKey("attn-res-ln-ff", "awo", 10, None)
    assert parse_name("norm-head-awo-layer0-head3.align") == GridKey("norm-head", "awo", 0, 3)
    assert parse_name("norm-head-best-awo-layer0") == GridKey("norm-head-best", "awo", 0, None)


@pytest.mark.parametrize("bad", ["norm-layer2.align", "norm-awx-layer1.align", "norm-awo-layerX.align", "x.align"])
def test_parse_name_rejects(bad):
    with pytest.raises(ValueError, match="is not a setting"):
        parse_name(bad)


def test_summarize_heads_best_and_mean():
    rows = [
        row("norm-head-awo-layer1-head0.align", 40.0, 60, 60),
        row("norm-head-awo-layer1-head1.align", 30.0, 70, 70),
        row("norm-head-awo-layer1-head2.align", 50.0, 50, 50),
        row("norm-awo-layer1.align", 20.0),
    ]
    out = {r["hyp"]: r for r in summarize_heads(rows)}
    assert set(out) == {"norm-head-best-awo-layer1", "norm-head-mean-awo-layer1"}
    assert out["norm-head-best-awo-layer1"]["aer"] == 30.0 and out["norm-head-best-awo-layer1"]["head"] == 1
    # mean of 40, 30, 50 = 40; precision (60 + 70 + 50) / 3 = 60
    assert out["norm-head-mean-awo-layer1"]["aer"] == pytest.approx(40.0)
    assert out["norm-head-mean-awo-layer1"]["precision"] == pytest.approx(60.0)
    assert out["norm-head-mean-awo-layer1"]["heads"] == 3
    assert [r["hyp"] for r in layer_rows(rows)] == ["norm-awo-layer1.align"]


def test_best_and_tables():
    rows = [
        row("attn-awo-layer0.align", 50.0),
        row("attn-awo-layer1.align", 45.0),
        row("norm-awo-layer0.align", 42.0),
        row("norm-awi-layer1.align", 30.0),
    ]
    assert best(rows)["hyp"] == "norm-awi-layer1.align"
    assert best(rows, "attn")["hyp"] == "attn-awo-layer1.align"
    with pytest.raises(ValueError, match="no rows for method 'norm-head'"):
        best(rows, "norm-head")
    text = format_grid(rows).splitlines()
    assert text[0].split()[-2:] == ["layer", "1"]
    assert text[1].split() == ["attn-awo", "50.0", "45.0"]
    assert text[2].split() == ["norm-awi", "nan", "30.0"]
    md = format_markdown(rows).splitlines()
    assert md[0] == "| AER (%) | layer 0 | layer 1 |"
    assert md[2] == "| attn-awo | 50.0 | **45.0** |"
    assert md[3] == "| norm-awi |  | **30.0** |"
    rows[0]["precision"] = 70.0  # highest precision is the best
    assert format_markdown(rows, "precision", "P").splitlines()[2] == "| attn-awo | **70.0** | 50.0 |"
