"""Named test sets: every entry loads, verifies and normalises its original files as the registry says."""

import dataclasses
import os
import shutil

import numpy as np
import pytest
from conftest import SHARED

from align.gold import testsets
from align.io.text import read_text_pairs


def needs_shared(spec):
    if not spec.shipped and not (SHARED / "gold" / spec.folder).is_dir():
        pytest.skip(f"{spec.name} is not shipped and {SHARED}/gold/{spec.folder} is missing")


@pytest.mark.parametrize("name", testsets.names())
def test_every_set_loads_with_the_registry_counts(name, monkeypatch):
    spec = testsets.get(name)
    needs_shared(spec)
    monkeypatch.setenv(testsets.ENV, str(SHARED / "gold"))
    ts = testsets.load(name)
    assert (len(ts), int(ts.gold.sure.sum()), int((~ts.gold.sure).sum())) == (spec.pairs, spec.sure, spec.possible)
    assert ts.langs == spec.langs and ts.verified
    sl, tl = ts.lengths()
    sent = ts.gold.sentence_ids()
    assert np.all(ts.gold.src < sl[sent]) and np.all(ts.gold.tgt < tl[sent])  # normalised: every link inside
    assert ts.signature() == f"test:{name}|lang:{spec.pair}|sha:{spec.checksum[:12]}"


def test_shipped_sets_are_the_redistributable_ones():
    assert {n for n, s in testsets.TESTSETS.items() if s.shipped} == {"hansards", "wpt03", "kftt", "czenali"}
    for spec in testsets.TESTSETS.values():
        where = os.path.join(testsets.SHIPPED_DIR, spec.folder)
        assert os.path.isdir(where) == spec.shipped, spec.name  # RWTH and the sets of unstated licence never ship
        if spec.shipped:
            assert os.path.isfile(os.path.join(where, "README.md"))
            if "CC BY-SA" in spec.licence:
                assert "Attribution-ShareAlike" in open(os.path.join(where, "LICENSE"), encoding="utf-8").read()


# Hand-read golden links (0-based, first side first) from the original files:
#   hansards line 1  "2-2 1-1" (talp, 1-based)            -> (1, 1), (0, 0)
#   pcedt sentence 1 "0001 5 1 S" (English 5, Czech 1)     -> (Czech 0, English 4), sure
#   wpt05 snum 26    "26 2 1" (English 2, Hindi 1)         -> (1, 0)
#   denero line 1    "... 3-4-P ..." (0-based)             -> (3, 4) possible
#   czenali line 1   "0-0 1-0 4-2 5-1 6-3 7-4 3p2"         -> 6 sure, (3, 2) possible
GOLDEN = [
    ("hansards", 0, (1, 1), True),
    ("hansards", 0, (0, 0), True),
    ("pcedt", 0, (0, 4), True),
    ("wpt05", 0, (1, 0), True),
    ("denero", 0, (3, 4), False),
    ("czenali", 0, (3, 2), False),
    ("czenali", 0, (7, 4), True),
]


@pytest.mark.parametrize("name,k,link,sure", GOLDEN)
def test_links_are_read_in_the_original_files_convention(name, k, link, sure, monkeypatch):
    needs_shared(testsets.get(name))
    monkeypatch.setenv(testsets.ENV, str(SHARED / "gold"))
    ts = testsets.load(name)
    assert link in (ts.gold.links(k, "sure") if sure else ts.gold.links(k, "possible"))


def test_other_direction_flips_text_and_gold():
    a, b = testsets.load("hansards"), testsets.load("hansards", "fr-en")
    assert b.langs == ("fr", "en") and b.src == a.tgt and b.tgt == a.src
    assert b.gold == a.gold.reversed()
    assert b.signature().startswith("test:hansards|lang:fr-en|")


def test_kftt_mojibake_is_repaired_as_the_shared_fixed_copy(shared):
    ts = testsets.load("kftt")
    fixed = read_text_pairs(str(shared / "gold" / "jaen_kftt" / "jaen.src-tgt.fixed-mojibake"))
    assert ts.src == [s for s, _ in fixed] and ts.tgt == [t for _, t in fixed]
    assert (
        len(ts.notes) == 7
        and ts.tgt[350][:10]
        != read_text_pairs(os.path.join(testsets.SHIPPED_DIR, "jaen_kftt", "jaen.src-tgt"))[350][1][:10]
    )


def test_wpt05_drops_the_link_past_its_sentence(shared, monkeypatch):
    monkeypatch.setenv(testsets.ENV, str(shared / "gold"))
    ts = testsets.load("wpt05")
    assert len(ts.notes) == 1 and "sentence 41" in ts.notes[0]  # snum 68 is the 41st sentence (numbers from 26)
    assert int(ts.gold.sure.sum()) == 1408 and ts.gold.n_links == 1408


def test_unknown_names_and_directions_list_the_valid_ones():
    with pytest.raises(testsets.UnknownTestSetError, match="valid: rwth, hansards, wpt03"):
        testsets.load("hansard")
    with pytest.raises(testsets.UnknownTestSetError, match="neither en-fr nor fr-en"):
        testsets.load("hansards", "de-en")


def test_a_missing_set_says_which_files_to_put_where(tmp_path, monkeypatch):
    monkeypatch.setenv(testsets.ENV, str(tmp_path))
    with pytest.raises(testsets.TestSetError) as e:
        testsets.load("rwth")
    msg = str(e.value)
    assert "not shipped" in msg and "deen.src-tgt, deen.gold" in msg and str(tmp_path / "deen_rwth") in msg
    assert "rwth-aachen" in msg


def test_a_shipped_set_with_a_missing_file_says_the_installation_is_damaged(tmp_path, monkeypatch):
    shipped = tmp_path / "sets"
    shutil.copytree(os.path.join(testsets.SHIPPED_DIR, "enfr_hansards"), shipped / "enfr_hansards")
    (shipped / "enfr_hansards" / "enfr.gold").unlink()
    monkeypatch.setattr(testsets, "SHIPPED_DIR", str(shipped))
    monkeypatch.delenv(testsets.ENV, raising=False)
    monkeypatch.delenv(testsets.SHARED_ENV, raising=False)
    with pytest.raises(testsets.TestSetError) as e:
        testsets.load("hansards")
    msg = str(e.value)
    assert "not shipped" not in msg and "ships with norm-align" in msg and "installation is damaged" in msg
    assert f"enfr.gold is missing from {shipped / 'enfr_hansards'}" in msg and "enfr.src-tgt" not in msg
    monkeypatch.setenv(testsets.ENV, str(tmp_path / "other"))  # a folder that does not have it either
    with pytest.raises(testsets.TestSetError, match=r"does not hold them all either"):
        testsets.load("hansards")
    row = testsets.format_listing(testsets.listing()).splitlines()[2]
    assert row.startswith("hansards") and row.endswith("missing from the installed package (damaged: reinstall)")


def test_an_entry_of_an_unknown_layout_is_refused_naming_the_set(monkeypatch):
    from align.gold import registry
    from align.gold.layouts import UnknownLayoutError

    bad = dataclasses.replace(testsets.get("hansards"), text=("tsv", "enfr.src-tgt"))
    monkeypatch.setitem(registry.TESTSETS, "hansards", bad)
    with pytest.raises(
        UnknownLayoutError, match=r"^test set 'hansards': unknown text layout 'tsv'; valid: pairs, sides, wpt$"
    ):
        testsets.load("hansards")


def test_a_changed_file_is_refused_unless_unverified(tmp_path, shared):
    shutil.copytree(shared / "gold" / "esfr_inesc100", tmp_path / "esfr_inesc100")
    (tmp_path / "esfr_inesc100" / "esfr.gold").chmod(0o644)
    with open(tmp_path / "esfr_inesc100" / "esfr.gold", "a") as f:
        f.write("\n")
    with pytest.raises(testsets.TestSetError, match=r"esfr\.gold: sha256 .* differs"):
        testsets.load("inesc", folder=str(tmp_path))
    ts = testsets.load("inesc", folder=str(tmp_path), verify_checksums=False)
    assert ts.signature().endswith("sha:unverified") and len(ts) == 100


def test_listing_says_where_each_set_is(tmp_path):
    rows = {r["name"]: r for r in testsets.listing(str(tmp_path))}
    assert rows["hansards"]["where"] == "shipped" and rows["rwth"]["where"] is None
    text = testsets.format_listing(testsets.listing(str(tmp_path)))
    assert "missing" in text and "hansards  en-fr    447" in text


def test_shared_data_is_found_only_through_the_variable_or_option(monkeypatch):
    monkeypatch.setenv("NORM_ALIGN_SHARED", "/some/where")
    assert testsets.shared_data_dir() == "/some/where" and testsets.shared_data_dir("/x") == "/x"
    monkeypatch.delenv(testsets.ENV, raising=False)
    assert testsets.testsets_dir() == os.path.join("/some/where", "gold")
    monkeypatch.delenv("NORM_ALIGN_SHARED")
    with pytest.raises(testsets.TestSetError, match=r"set \$NORM_ALIGN_SHARED"):
        testsets.shared_data_dir()
    assert testsets.testsets_dir() is None  # never ../shared guessed from where the package is
