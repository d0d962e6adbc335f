"""align-view's page in a real browser: headless Chromium (Debian's /usr/bin/chromium, driven by
Selenium through Debian's /usr/bin/chromedriver) loads the written file, its JS runs, and the
rendered DOM is checked against counts computed here in Python.

Without the browser, the driver or selenium these tests skip, saying so; under CI (``CI`` set) they fail instead.
One browser per module, one fresh tab per test; every test ends with no console error.
"""

import json
import os
import struct

import numpy as np
import pytest
from browser import Chromium, missing
from conftest import write
from test_view import GOLD, TEXT, make_hyps

from align.io.formats import read_alignments
from align.io.softscores import quantize_scores, write_scores
from align.io.text import read_text_pairs
from eval.cli import main as eval_main
from eval.metrics import score_sentences
from eval.view import main

pytestmark = pytest.mark.browser

# Five sentences; links 0-based (src, tgt) in the comments. Per-sentence AER (%), by hand:
#   1  gold S {00 11 22 33}      A {00 11 22 33}: 0             B {00 12 22}: 1 - (2+2)/(3+4) = 42.86
#   2  gold S {00} P {11}        A {00 11 22}: 1 - (1+2)/(3+1) = 25   B {20}: 1 - 0/(1+1) = 100
#   3  gold S {01 10}            A {00 11}: 1 - 0/4 = 100       B {01 10}: 0
#   4  gold S {00 .. 77}         A {00 .. 66, 79}: 1 - 14/16 = 12.5   B {}: 1 - 0/8 = 100
#   5  gold {}                   A {}: 0 (both empty)           B {00}: 1 - 0/1 = 100
TEXT_LINES = [
    "the house is small ||| la maison est petite",
    "<script>alert(1)</script> &amp; x\u2028y ||| a < b",
    "zebra crossing ||| passage piéton",
    "a b c d e f g h ||| a b c d e f g h i j",
    "ok ||| d'accord",
]
GOLD_LINES = ["1-1 2-2 3-3 4-4", "1-1 2p2", "1-2 2-1", " ".join(f"{i}-{i}" for i in range(1, 9)), ""]
A_LINES = ["0-0 1-1 2-2 3-3", "0-0 1-1 2-2", "0-0 1-1", " ".join(f"{i}-{i}" for i in range(7)) + " 7-9", ""]
B_LINES = ["0-0 1-2 2-2", "2-0", "0-1 1-0", "", "0-0"]
AER_A = [0.0, 25.0, 100.0, 12.5, 0.0]
AER_B = [42.86, 100.0, 0.0, 100.0, 100.0]


@pytest.fixture(scope="module")
def browser():
    why = missing()
    if why:
        why = f"headless Chromium: {why}; the align-view browser tests need it"
        if os.environ.get("CI"):
            pytest.fail(f"CI: {why}", pytrace=False)
        pytest.skip(why)
    with Chromium() as b:
        yield b


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    d = tmp_path_factory.mktemp("view")
    files = {
        name: write(d, name, "\n".join(lines) + "\n")
        for name, lines in (("text", TEXT_LINES), ("gold.talp", GOLD_LINES), ("A.align", A_LINES), ("B.align", B_LINES))
    }
    pairs = read_text_pairs(files["text"])
    rng = np.random.default_rng(7)
    raw = [rng.random((len(t), len(s))) * (rng.random((len(t), len(s))) < 0.6) for s, t in pairs]
    write_scores(str(d / "A.scores.jsonl"), raw)
    out = str(d / "view.html")
    assert (
        main(
            [
                files["text"],
                files["A.align"],
                files["B.align"],
                "--gold",
                files["gold.talp"],
                "--scores",
                str(d / "A.scores.jsonl"),
                "-o",
                out,
            ]
        )
        == 0
    )
    return {"dir": d, "url": "file://" + out, "pairs": pairs, "q": [quantize_scores(m) for m in raw], **files}


@pytest.fixture
def page(browser, corpus):
    p = browser.open(corpus["url"])
    p.wait_for("document.body.dataset.ready === '1'")
    yield p
    assert p.evaluate("1") == 1  # collect the events still in the pipe
    assert p.errors() == [], p.errors()
    assert p.dialogs() == []
    p.close()


def text(page, selector):
    return page.evaluate(f"document.querySelector({selector!r}).textContent")


def count(page, selector):
    return page.evaluate(f"document.querySelectorAll({selector!r}).length")


def expected_cells(gold, hyp, k):
    """Cell classes of sentence k, from the files: plain set arithmetic on the links."""
    s, p, h = set(gold.links(k, "sure")), set(gold.links(k, "possible")), set(hyp.links(k))
    return {
        "hit-sure": len(h & s),
        "hit-possible": len(h & p),
        "false": len(h - s - p),
        "miss-sure": len(s - h),
        "gold-possible": len(p - h),
    }


def test_hand_made_aer_is_what_eval_computes(corpus):
    gold = read_alignments(corpus["gold.talp"], "talp")
    for name, want in (("A.align", AER_A), ("B.align", AER_B)):
        got = 100 * score_sentences(gold, read_alignments(corpus[name]))[:, 0]
        assert np.round(got, 2).tolist() == want


def test_cells_per_class_equal_the_link_counts(page, corpus):
    gold = read_alignments(corpus["gold.talp"], "talp")
    hyps = {"a": read_alignments(corpus["A.align"]), "b": read_alignments(corpus["B.align"])}
    for k, (src, tgt) in enumerate(corpus["pairs"]):
        assert text(page, "#sent-title") == f"sentence {k + 1} of 5"
        for panel, hyp in hyps.items():
            want = expected_cells(gold, hyp, k)
            got = {c: count(page, f"#panel-{panel} td.cell.{c}") for c in want}
            assert got == want, (k, panel)
            assert count(page, f"#panel-{panel} td.cell") == len(src) * len(tgt)
            marks = page.evaluate(
                f"Array.from(document.querySelectorAll('#panel-{panel} td.cell')).map(e => e.textContent).join('')"
            )
            assert marks.count("●") == want["hit-sure"] and marks.count("✕") == want["false"]
            assert marks.count("◐") == want["hit-possible"] and marks.count("○") == want["miss-sure"]
        # soft scores of A shade exactly its nonzero cells; B has none
        assert count(page, "#panel-a td.cell[style*='background']") == int(np.count_nonzero(corpus["q"][k]))
        assert count(page, "#panel-b td.cell[style*='background']") == 0
        # the per-sentence AER in the summary table: A then B
        assert page.evaluate(
            "Array.from(document.querySelectorAll('#summary td.sent-aer')).map(e => +e.textContent)"
        ) == [AER_A[k], AER_B[k]]
        page.key("j")
    assert text(page, "#sent-title") == "sentence 5 of 5"  # j stops at the last sentence


def test_only_the_current_grids_are_in_the_dom(page):
    assert count(page, "table.grid") == 2
    assert count(page, "#list-items li") == 5


def select(page, element, value):
    page.evaluate(
        f"(function () {{ var s = document.getElementById({element!r}); s.value = {value!r}; "
        "s.dispatchEvent(new Event('change')); }())"
    )


def listed(page):
    return page.evaluate("Array.from(document.querySelectorAll('#list-items li')).map(e => +e.dataset.k + 1)")


def test_sort_by_aer_puts_the_worst_sentence_first(page):
    worst = int(np.argmax(AER_A)) + 1  # sentence 3, AER 100
    select(page, "sort", "aer-a")
    assert text(page, "#sent-title") == f"sentence {worst} of 5"
    assert listed(page) == [3, 2, 4, 1, 5]  # 100, 25, 12.5, 0, 0 (ties in corpus order)
    assert page.evaluate("location.hash").startswith(f"#s={worst}&")
    select(page, "sort", "aer-b")
    assert listed(page) == [2, 4, 5, 1, 3]  # 100, 100, 100, 42.86, 0
    select(page, "sort", "diff")  # A - B: -42.86, -75, 100, -87.5, -100
    assert listed(page) == [3, 1, 2, 4, 5]
    select(page, "sort", "length")  # words: 8, 6, 4, 18, 2
    assert listed(page) == [4, 1, 2, 3, 5]
    page.evaluate("document.getElementById('reverse').click()")
    assert listed(page) == [5, 3, 2, 1, 4] and text(page, "#sent-title") == "sentence 5 of 5"
    # B as method A: sorting by A's AER now follows B's figures
    page.evaluate("document.getElementById('reverse').click()")
    select(page, "method-a", "1")
    select(page, "sort", "aer-a")
    assert listed(page) == [2, 4, 5, 1, 3]


def test_filter_finds_a_word(page):
    page.key("/")
    assert page.evaluate("document.activeElement.id") == "filter"
    page.type("ZEBRA")
    assert listed(page) == [3] and text(page, "#sent-title") == "sentence 3 of 5"
    assert text(page, "#position") == "1 of 1 shown"
    page.evaluate(
        "document.getElementById('filter').value = 'petite'; "
        "document.getElementById('filter').dispatchEvent(new Event('input'))"
    )
    assert listed(page) == [1]  # a target word
    page.evaluate(
        "document.getElementById('filter').value = 'pa*'; "
        "document.getElementById('filter').dispatchEvent(new Event('input'))"
    )
    assert listed(page) == [3]  # prefix: passage
    page.evaluate(
        "document.getElementById('filter').value = 'nowhere'; "
        "document.getElementById('filter').dispatchEvent(new Event('input'))"
    )
    assert listed(page) == [] and text(page, "#page-info") == "no sentence matches"


def test_escaped_script_is_text(page):
    page.key("j")
    assert text(page, "#sent-title") == "sentence 2 of 5"
    cols = page.evaluate("Array.from(document.querySelectorAll('#panel-a th.col')).map(e => e.textContent)")
    assert cols == ["<script>alert(1)</script>", "&amp;", "x\u2028y"]
    rows = page.evaluate("Array.from(document.querySelectorAll('#panel-a th.row')).map(e => e.textContent)")
    assert rows == ["a", "<", "b"]
    assert count(page, "script") == 2  # the data and the program: the word made no element
    assert page.evaluate("document.querySelector('#src-words').textContent").endswith(
        "<script>alert(1)</script> &amp; x\u2028y"
    )
    # hovering a cell names its words, as text
    page.evaluate(
        "document.querySelector('#panel-a tbody td.cell').dispatchEvent(new MouseEvent('mouseover', {bubbles: true}))"
    )
    hover = text(page, "#hover")
    assert hover.startswith(
        "A: source 0 \u201c<script>alert(1)</script>\u201d \u2194 target 0 \u201ca\u201d: sure hit; soft score "
    )
    assert count(page, "#panel-a th.hl") == 2  # its column and row headers are highlighted
    # the page fixture then checks that no dialog opened and nothing reached the console


def test_fragment_and_keys(browser, corpus):
    page = browser.open(corpus["url"] + "#s=4")
    page.wait_for("document.body.dataset.ready === '1'")
    assert text(page, "#sent-title") == "sentence 4 of 5"
    page.key("ArrowRight")
    assert page.evaluate("location.hash") == "#s=5&a=A&b=B"
    page.key("k")
    page.key("ArrowLeft")
    assert text(page, "#sent-title") == "sentence 3 of 5"
    page.evaluate("location.hash = '#s=2&a=B&b=A'")
    page.wait_for("document.getElementById('sent-title').textContent === 'sentence 2 of 5'")
    assert page.evaluate("document.getElementById('method-a').value") == "1"
    assert page.evaluate("document.querySelector('#panel-a table.grid').dataset.method") == "B"
    page.key("/")
    page.key("k")  # typed into the filter (no sentence has the word k), not a step back
    assert page.evaluate("document.getElementById('filter').value") == "k"
    assert text(page, "#sent-title") == "sentence 2 of 5" and listed(page) == []
    assert page.errors() == [] and page.dialogs() == []
    page.close()


def test_hansards_page_in_the_browser(browser, tmp_path, capsys):
    hyps = make_hyps(tmp_path)
    out = str(tmp_path / "view.html")
    assert main([TEXT, hyps["near"], hyps["far"], "--gold", GOLD, "-o", out]) == 0
    capsys.readouterr()
    page = browser.open("file://" + out)
    page.wait_for("document.body.dataset.ready === '1'")
    assert page.evaluate("window.alignView.firstGridMs") < 2000
    gold = read_alignments(GOLD, "talp")
    far = read_alignments(hyps["far"])
    per = 100 * score_sentences(gold, far)[:, 0]
    # the summary table shows what align-eval gives (to 0.01)
    assert eval_main([GOLD, hyps["near"], hyps["far"], "--format", "json"]) == 0
    ref = json.loads(capsys.readouterr().out)
    shown = page.evaluate(
        "Array.from(document.querySelectorAll('#summary tbody tr')).map("
        "r => Array.from(r.cells).slice(1, 5).map(c => +c.textContent))"
    )
    for row, want in zip(shown, ref):
        assert np.allclose(row, [want[k] for k in ("aer", "precision", "recall", "f1")], atol=0.0051)
    # far as method A, sorted by its AER: the worst sentence first (ties: the first in the corpus)
    select(page, "method-a", "1")
    select(page, "sort", "aer-a")
    worst = int(np.argmax(np.round(per, 2)))
    assert text(page, "#sent-title") == f"sentence {worst + 1} of 447"
    want = expected_cells(gold, far, worst)
    assert {c: count(page, f"#panel-a td.cell.{c}") for c in want} == want
    assert listed(page)[:3] == [int(i) + 1 for i in np.argsort(-np.round(per, 2), kind="stable")[:3]]
    assert count(page, "#list-items li") == 50  # one page of the list
    shot = str(tmp_path / "align_view.png")
    assert page.screenshot(shot) > 10_000
    with open(shot, "rb") as f:
        head = f.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", head[16:24]) == (1200, 800)
    assert page.errors() == [] and page.dialogs() == []
    page.close()


def test_benchmark_measures_a_page(browser, tmp_path):
    import sys

    sys.path.insert(
        0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "benchmarks")
    )
    from bench_view import build, make_corpus, measure_loads

    paths = make_corpus(str(tmp_path), 300)
    page = str(tmp_path / "v.html")
    build(paths, page, scores=False)
    r = measure_loads(browser, page, 1)
    assert 0 < r["grid_in_dom_s"] <= r["first_grid_s"] < 2.0
    assert r["dom_elements"] < 2000 and r["sort_by_aer_ms"] >= 0


def test_page_without_gold_and_empty_pages(browser, tmp_path, capsys):
    t = write(tmp_path, "t", "a b ||| x y z\n ||| w\n")
    h = write(tmp_path, "h.align", "0-0 1-2\n\n")
    out = str(tmp_path / "v.html")
    assert main([t, h, "-o", out]) == 0
    page = browser.open("file://" + out)
    page.wait_for("document.body.dataset.ready === '1'")
    assert count(page, "#panel-a td.cell.link") == 2 and count(page, "#panel-a td.cell") == 6
    assert count(page, "td.hit-sure, td.false, td.miss-sure") == 0
    assert count(page, "#panel-b table") == 0 and page.evaluate("document.getElementById('panel-b').hidden")
    assert page.evaluate("Array.from(document.getElementById('sort').options).map(o => o.value)") == [
        "corpus",
        "length",
    ]  # no AER without a gold
    page.key("j")
    assert text(page, "#panel-a .empty") == "an empty side: no grid"
    assert page.errors() == [] and page.dialogs() == []
    page.close()
    empty = write(tmp_path, "e", "")
    assert main([empty, write(tmp_path, "e.align", ""), "-o", out]) == 0
    capsys.readouterr()
    page = browser.open("file://" + out)
    page.wait_for("document.body.dataset.ready === '1'")
    assert text(page, "#sent-title") == "no sentences" and text(page, "#page-info") == "no sentence matches"
    assert page.errors() == [] and page.dialogs() == []
    page.close()


def test_sentence_scores_sort_the_likeliest_noise_first(browser, tmp_path, capsys):
    # a corpus without gold, each pair's sentence score (align-extract --sentence-scores): 0.9, 0.05, 0.5, 0.05
    t = write(tmp_path, "t", "a b ||| x y\nc ||| z w v\nd ||| u\ne f ||| s\n")
    h = write(tmp_path, "h.align", "0-0 1-1\n0-0\n0-0\n1-0\n")
    sc = write(tmp_path, "s.tsv", "1\t0.900000\n2\t0.050000\n3\t0.500000\n4\t0.050000\n")
    out = str(tmp_path / "v.html")
    assert main([t, h, "--sentence-scores", sc, "-o", out]) == 0
    capsys.readouterr()
    page = browser.open("file://" + out)
    page.wait_for("document.body.dataset.ready === '1'")
    assert page.evaluate("Array.from(document.getElementById('sort').options).map(o => o.value)") == [
        "corpus",
        "length",
        "score",
    ]
    assert text(page, "#sent-title") == "sentence 1 of 4, sentence score 0.9000"
    select(page, "sort", "score")
    assert listed(page) == [2, 4, 3, 1]  # 0.05, 0.05 (ties in corpus order), 0.5, 0.9
    assert text(page, "#sent-title") == "sentence 2 of 4, sentence score 0.0500"
    assert page.evaluate("Array.from(document.querySelectorAll('#list-items li .val')).map(e => e.textContent)") == [
        "0.0500",
        "0.0500",
        "0.5000",
        "0.9000",
    ]
    assert page.errors() == [] and page.dialogs() == []
    page.close()


def test_any_address_opens_and_bidi_controls_stay_in_their_word(browser, tmp_path, capsys):
    # U+202E (right-to-left override) and U+2067 (right-to-left isolate) inside one word
    t = write(tmp_path, "t", "one \u202etwo three four ||| un \u2067deux trois\nx ||| y\n")
    h = write(tmp_path, "h\u202e.align", "0-0 1-1\n0-0\n")
    out = str(tmp_path / "v.html")
    assert main([t, h, "-o", out]) == 0
    for address in ("#a=%E0%A4%A", "#s=%", "#s=2&a=%ZZ&b=%", "#%%%&&==&s=2"):
        page = browser.open("file://" + out + address)
        page.wait_for("document.body.dataset.ready === '1'")
        assert text(page, "#sent-title").startswith("sentence ")
        assert page.errors() == [] and page.dialogs() == [], (address, page.errors())
        page.close()
    page = browser.open("file://" + out + "#s=1")
    page.wait_for("document.body.dataset.ready === '1'")
    words = page.evaluate("Array.from(document.querySelectorAll('#src-words bdi')).map(e => e.textContent)")
    assert words == ["one", "\u202etwo", "three", "four"]
    # laid out left to right: the override turns its own word only
    lefts = page.evaluate(
        "Array.from(document.querySelectorAll('#src-words bdi')).map(e => e.getBoundingClientRect().left)"
    )
    assert lefts == sorted(lefts)
    assert page.evaluate("getComputedStyle(document.querySelector('#panel-a th.col')).unicodeBidi") == "isolate"
    assert count(page, "#list-items li bdi") == 4 + 1
    assert page.errors() == [] and page.dialogs() == []
    page.close()
