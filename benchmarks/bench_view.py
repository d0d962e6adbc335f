"""align-view at corpus size: a 10,000-sentence page (the Hansards gold repeated, three hypotheses made
from it by moving 10%, 25% and 40% of the links one target word on), its size, and how fast it opens
in headless Chromium.

The load time is the page's own ``performance.now()`` (time from the start of navigation: reading
the file, parsing the HTML, ``JSON.parse`` of the data, the first sentence drawn) after the frame that
paints the first grid (a ``requestAnimationFrame`` callback, then a task), the median of several loads
in fresh tabs of one browser; beside it the time the grid was in the DOM and the driver's time from
its ``get`` (WebDriver) to the load event. A second page adds soft scores for one
hypothesis. Target (issue 30): under 2 s; the ratio printed is load time / 2 s.

Usage: python benchmarks/bench_view.py [--sentences 10000] [--loads 5] [--out benchmarks/results/bench_view.json]
       python benchmarks/bench_view.py --screenshot "demo_out/view.html#s=385&a=alti-awi-layer0&b=attn-awi-layer0"
The second form writes README's picture, benchmarks/results/align_view.png: Chromium's own
``--screenshot`` at 1200x800, reduced to 256 colours with Pillow (matplotlib's dependency) to stay small.
Needs /usr/bin/chromium, /usr/bin/chromedriver (Debian: apt-get install chromium chromium-driver) and selenium
(tests/browser.py drives it).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "tests"))

import numpy as np  # noqa: E402

from align.io.formats import read_alignments, write_alignments  # noqa: E402
from align.io.lines import read_lines  # noqa: E402
from align.io.softscores import write_scores  # noqa: E402
from align.io.text import read_text_pairs  # noqa: E402
from align.links.alignments import Alignments  # noqa: E402
from eval.view import main as view_main  # noqa: E402

HANSARDS = os.path.join(ROOT, "align", "gold", "sets", "enfr_hansards")
TARGET_S = 2.0


def make_corpus(folder: str, n: int, seed: int = 0) -> dict:
    """The Hansards text and gold repeated to ``n`` lines, and three hypotheses made from the gold."""
    text_lines = read_lines(os.path.join(HANSARDS, "enfr.src-tgt"))
    gold_lines = read_lines(os.path.join(HANSARDS, "enfr.gold"))
    reps = -(-n // len(text_lines))
    paths = {"text": os.path.join(folder, "corpus.src-tgt"), "gold": os.path.join(folder, "corpus.talp")}
    for key, lines in (("text", text_lines), ("gold", gold_lines)):
        with open(paths[key], "w", encoding="utf-8") as f:
            f.write("".join(line + "\n" for line in (lines * reps)[:n]))
    gold = read_alignments(paths["gold"], "talp")
    pairs = read_text_pairs(paths["text"])
    tgt_len = np.array([len(t) for _, t in pairs])
    sent = gold.sentence_ids()
    rng = np.random.default_rng(seed)
    for share in (10, 25, 40):
        tgt = gold.tgt.astype(np.int64)
        move = rng.random(len(tgt)) < share / 100
        tgt[move] = (tgt[move] + 1) % tgt_len[sent[move]]
        paths[f"moved{share}"] = os.path.join(folder, f"moved{share}.align")
        write_alignments(Alignments.from_arrays(sent, gold.src, tgt, None, len(gold)), paths[f"moved{share}"])
    paths["scores"] = os.path.join(folder, "moved10.scores.jsonl")
    write_scores(paths["scores"], (rng.random((len(t), len(s))) for s, t in pairs))
    return paths


def build(paths: dict, out: str, scores: bool) -> tuple[int, float]:
    """Write the page with ``align-view``; returns its size in bytes and the seconds it took."""
    args = [
        paths["text"],
        paths["moved10"],
        paths["moved25"],
        paths["moved40"],
        "--gold",
        paths["gold"],
        "-o",
        out,
        "--format",
        "json",
    ]
    if scores:
        args += ["--scores", f"moved10={paths['scores']}"]
    import contextlib
    import io

    t0 = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):  # its one-line JSON summary
        code = view_main(args)
    if code != 0:
        raise SystemExit("align-view failed")
    return os.path.getsize(out), time.perf_counter() - t0


def measure_loads(browser, path: str, loads: int) -> dict:
    """Median first-grid time (page clock) and navigate-to-load time (driver clock) over ``loads`` fresh tabs,
    and the time to re-sort the whole corpus by AER and to filter it by a word."""
    first, dom, nav = [], [], []
    for _ in range(loads):
        page = browser.open("about:blank")
        nav.append(page.navigate("file://" + path))
        first.append(page.wait_for("window.alignView && window.alignView.paintedMs") / 1000)
        dom.append(page.evaluate("window.alignView.firstGridMs") / 1000)
        errors = page.errors()
        if errors:
            raise SystemExit(f"console errors: {errors}")
        page.close()
    page = browser.open("file://" + path)
    page.wait_for("window.alignView")
    timed = (
        "(function () {{ var e = document.getElementById('{id}'), t = performance.now(); e.value = '{value}'; "
        "e.dispatchEvent(new Event('{event}')); return performance.now() - t; }})()"
    )
    sort_ms = page.evaluate(timed.format(id="sort", value="aer-a", event="change"))
    filter_ms = page.evaluate(timed.format(id="filter", value="minister", event="input"))
    n_dom = page.evaluate("document.getElementsByTagName('*').length")
    page.close()
    return {
        "first_grid_s": statistics.median(first),
        "first_grid_all_s": first,
        "grid_in_dom_s": statistics.median(dom),
        "load_event_s": statistics.median(nav),
        "sort_by_aer_ms": sort_ms,
        "filter_ms": filter_ms,
        "dom_elements": n_dom,
    }


def screenshot(page: str, path: str, size: str = "1200,800") -> int:
    """``chromium --headless --screenshot`` of ``page`` (a file, ``#fragment`` allowed), saved to ``path``
    in 256 colours; returns its size in bytes."""
    import subprocess

    from browser import CHROMIUM, FLAGS
    from PIL import Image

    file, _, fragment = page.partition("#")
    url = "file://" + os.path.abspath(file) + (f"#{fragment}" if fragment else "")
    with tempfile.TemporaryDirectory() as tmp:
        raw = os.path.join(tmp, "shot.png")
        subprocess.run(
            [CHROMIUM, *FLAGS, f"--user-data-dir={tmp}/profile", f"--screenshot={raw}", f"--window-size={size}", url],
            check=True,
            capture_output=True,
            timeout=120,
        )
        with Image.open(raw) as im:
            im.convert("RGB").quantize(256, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE).save(
                path, optimize=True
            )
    return os.path.getsize(path)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sentences", type=int, default=10000)
    ap.add_argument("--loads", type=int, default=5, help="page loads per variant (the median is reported)")
    ap.add_argument(
        "--out",
        default=os.path.join(ROOT, "benchmarks", "results", "bench_view.json"),
        help="JSON of the figures ('' for none)",
    )
    ap.add_argument("--screenshot", metavar="PAGE[#s=N]", help="only take README's screenshot of this page")
    ap.add_argument("--png", default=os.path.join(ROOT, "benchmarks", "results", "align_view.png"))
    args = ap.parse_args(argv)
    from browser import Chromium, missing

    why = missing()
    if why:
        print(f"bench_view: headless Chromium: {why}", file=sys.stderr)
        return 2
    if args.screenshot:
        print(f"{args.png}: {screenshot(args.screenshot, args.png):,} bytes")
        return 0
    rows = []
    with tempfile.TemporaryDirectory() as tmp, Chromium() as browser:
        version = browser.version
        paths = make_corpus(tmp, args.sentences)
        print(
            f"align-view page of {args.sentences} sentences (the Hansards gold repeated), 3 hypotheses and the "
            f"gold; {browser.version}, headless; median of {args.loads} loads"
        )
        for scores in (False, True):
            page = os.path.join(tmp, f"view{'-scores' if scores else ''}.html")
            size, build_s = build(paths, page, scores)
            r = {
                "sentences": args.sentences,
                "hypotheses": 3,
                "soft_scores": 1 if scores else 0,
                "bytes": size,
                "build_s": build_s,
                **measure_loads(browser, page, args.loads),
            }
            r["ratio_to_target"] = r["first_grid_s"] / TARGET_S
            rows.append(r)
            label = "with soft scores of 1 hypothesis" if scores else "without soft scores"
            print(
                f"{label:>34}: {size:,} bytes ({size / 1024:,.0f} KB); first grid painted at "
                f"{1000 * r['first_grid_s']:.0f} ms (in the DOM at {1000 * r['grid_in_dom_s']:.0f} ms, load event "
                f"{1000 * r['load_event_s']:.0f} ms); {r['ratio_to_target']:.3f} of the 2 s target; "
                f"built in {build_s:.1f} s; re-sort by AER {r['sort_by_aer_ms']:.0f} ms, filter "
                f"{r['filter_ms']:.0f} ms; {r['dom_elements']} DOM elements"
            )
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"browser": f"{version} headless", "target_s": TARGET_S, "rows": rows}, f, indent=1)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
