"""The scorer reproduces published AER figures from the systems' own released outputs (../shared)."""

import pytest

from align.io.formats import read_alignments
from align.links.symmetrize import symmetrize_corpus
from eval.metrics import score_corpus

GOLD = {
    "deen": "deen_rwth/deen.gold",
    "enfr": "enfr_hansards/enfr.gold",
    "roen": "roen_wpt03/roen.gold",
    "jaen": "jaen_kftt/jaen.gold",
    "zhen": "zhen_tsinghua/zhen.gold",
}

# lilt/alignment-scripts results/giza/*-results.txt: AER, precision, recall (percent, one decimal).
MGIZA = [
    ("deen", "talp", 21.0, 86.2, 72.8),
    ("deen", "reverse.talp", 23.1, 86.6, 69.0),
    ("deen", "grow-diagonal-final.talp", 20.6, 91.3, 70.2),
    ("deen", "intersection.talp", 23.4, 95.8, 63.7),
    ("deen", "union.talp", 20.9, 80.1, 78.1),
    ("enfr", "talp", 8.0, 91.4, 92.9),
    ("enfr", "reverse.talp", 9.8, 91.6, 88.3),
    ("enfr", "grow-diagonal.talp", 5.9, 97.5, 89.7),
    ("enfr", "grow-diagonal-final.talp", 6.2, 95.5, 91.6),
    ("roen", "talp", 28.7, 82.7, 62.6),
    ("roen", "reverse.talp", 32.2, 79.5, 59.1),
    ("roen", "grow-diagonal-final.talp", 26.4, 90.9, 61.8),
    ("roen", "union.talp", 30.3, 72.3, 67.4),
]
# lilt/alignment-scripts results/fastalign/*-results.txt (computed from an earlier version of the
# output files than the one stored: a few links differ, so allow 0.1 point).
FAST_ALIGN = [
    ("deen", "talp", 28.5, 71.3, 71.8),
    ("deen", "reverse.talp", 32.0, 69.7, 66.4),
    ("deen", "grow-diagonal-final.talp", 27.7, 80.6, 65.5),
    ("enfr", "talp", 16.4, 80.0, 90.1),
    ("enfr", "grow-diagonal.talp", 10.5, 90.8, 87.8),
    ("roen", "talp", 33.8, 71.8, 61.3),
]
# Cross-Align README (lisasiyu/Cross-Align): De-En 13.6, En-Fr 3.4, Ro-En 20.9, Zh-En 10.1, Ja-En 35.4.
CROSS_ALIGN = [("deen", 13.6), ("enfr", 3.4), ("roen", 20.9), ("zhen", 10.1), ("jaen", 35.4)]


def _score(shared, pair, hyp_path, reverse=False):
    gold = read_alignments(str(shared / "gold" / GOLD[pair]), "talp")
    return score_corpus(gold, read_alignments(str(hyp_path), "pharaoh", reverse=reverse))


@pytest.mark.parametrize("system,table,tol", [("mgiza", MGIZA, 0.051), ("fast_align", FAST_ALIGN, 0.151)])
def test_lilt_results(shared, system, table, tol):
    for pair, name, aer, p, r in table:
        # lilt's reverse files are written target first
        s = _score(shared, pair, shared / "system_outputs" / system / f"test.{pair}.{name}", name == "reverse.talp")
        got = (100 * s.aer, 100 * s.precision, 100 * s.recall)
        assert got == pytest.approx((aer, p, r), abs=tol), (pair, name, got)


def test_cross_align_results(shared):
    for pair, aer in CROSS_ALIGN:
        s = _score(shared, pair, shared / "system_outputs" / "cross_align" / f"{pair}.crossalign.out")
        assert 100 * s.aer == pytest.approx(aer, abs=0.151), pair


def test_intersection_and_union_equal_lilts_files(shared):
    # lilt's own grow-diagonal differs from atools, but intersection and union are unambiguous.
    out = shared / "system_outputs" / "mgiza"
    for pair in ("deen", "enfr", "roen"):
        fwd = read_alignments(str(out / f"test.{pair}.talp"))
        rev = read_alignments(str(out / f"test.{pair}.reverse.talp"), reverse=True)
        for ours, theirs in (("intersect", "intersection"), ("union", "union")):
            assert symmetrize_corpus(fwd, rev, ours) == read_alignments(str(out / f"test.{pair}.{theirs}.talp"))


def test_naacl_gold_czen(shared):
    # czen.wal is NAACL with the English index first while the text is Czech first.
    gold = read_alignments(str(shared / "gold/csen_pcedt515/czen.wal"), "naacl", reverse=True)
    assert len(gold) == 515
    assert int(gold.sure.sum()) == 10934 and int((~gold.sure).sum()) == 4510


# (path, format, base, reverse, sentences, sure, possible) from ../shared/data/README.md
GOLD_SETS = [
    ("deen_rwth/deen.gold", "talp", None, False, 508, 9613, 921),
    ("enfr_hansards/enfr.gold", "talp", None, False, 447, 4038, 13400),
    ("roen_wpt03/roen.gold", "talp", None, False, 248, 6198, 0),
    ("jaen_kftt/jaen.gold", "talp", None, False, 582, 13562, 0),
    ("zhen_tsinghua/zhen.gold", "talp", None, False, 450, 11238, 178),
    ("zhen_denero_nist02/train.align", "pharaoh", None, False, 150, 3668, 989),
    ("encs_pcedt78/encs.gold", "talp", 0, False, 78, 1247, 454),
    ("esfr_inesc100/esfr.gold", "talp", None, False, 100, 1139, 292),  # no final newline
]


@pytest.mark.parametrize("path,fmt,base,reverse,n,sure,possible", GOLD_SETS)
def test_gold_sets_read_with_their_documented_counts(shared, path, fmt, base, reverse, n, sure, possible):
    gold = read_alignments(str(shared / "gold" / path), fmt, base, reverse)
    assert (len(gold), int(gold.sure.sum()), int((~gold.sure).sum())) == (n, sure, possible)


def test_enhi_naacl_with_wpt_sentence_numbers_and_its_bad_link(shared):
    from align.io.errors import LinkRangeError
    from align.io.text import check_links_in_range, read_wpt_text

    d = shared / "gold" / "enhi_wpt05"
    ids, en = read_wpt_text(str(d / "test.eng"))
    ids_hi, hi = read_wpt_text(str(d / "test.hin"))
    assert ids == ids_hi and ids[0] == 26 and len(ids) == 90
    gold = read_alignments(str(d / "test.eng.hin.wa"), "naacl", naacl_ids=ids)
    assert len(gold) == 90 and gold.n_links == 1409
    # the documented defect: one link (snum 68) points past the end of its sentence
    with pytest.raises(LinkRangeError) as e:
        check_links_in_range(gold, [len(s) for s in en], [len(t) for t in hi], "test.eng.hin.wa")
    assert e.value.line == ids.index(68) + 1
