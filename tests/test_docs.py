"""The documentation site: ``mkdocs build --strict`` (a broken link, a missing page or reference, a
docstring mkdocstrings cannot read: each fails the build), the generated command-line reference, and
every page opened in headless Chromium over http on 127.0.0.1 with no console error.

Without mkdocs (the ``dev`` extra) the build test skips, and without the browser the page check
skips, saying so; under CI (``CI`` set) both fail instead."""

import functools
import http.server
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from browser import Chromium, missing

ROOT = Path(__file__).resolve().parents[1]


def _need(why: str | None) -> None:
    if why:
        if os.environ.get("CI"):
            pytest.fail(f"CI: {why}", pytrace=False)
        pytest.skip(why)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    try:
        import material  # noqa: F401
        import mkdocs  # noqa: F401
        import mkdocstrings  # noqa: F401
    except ImportError as e:
        _need(f"{e.name} is not installed (pip install -e '.[dev]'): the docs build needs it")
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    r = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-f", str(ROOT / "mkdocs.yml"), "-d", str(out)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=300,
    )
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    return out


def pages(site: Path) -> list[str]:
    return sorted(str(p.relative_to(site).parent).replace(os.sep, "/") + "/" for p in site.rglob("index.html"))


def test_every_part_of_the_site_is_there(site):
    got = set(pages(site))
    for page in (
        "./",
        "getting-started/",
        "methods/",
        "changelog/",
        "reference/cli/",
        "reference/api/",
        "reference/api/links/",
        "reference/api/eval/",
        "reference/api/attribution/",
        "reference/api/extraction/",
        "reference/api/fairseq/",
        "reference/api/hf/",
        "results/",
        "results/hansards_enfr/",
        "results/rwth_deen/",
        "tutorials/score/",
        "tutorials/fairseq/",
        "tutorials/huggingface/",
        "tutorials/corpus/",
        "tutorials/viewer/",
        "guides/align-eval/",
        "guides/align-extract/",
        "guides/align-view/",
        "guides/fairseq-plugin/",
    ):
        assert page in got, page
    assert (site / "results" / "align_view.png").is_file() and (site / "search" / "search_index.json").is_file()


def test_cli_reference_comes_from_the_parsers(site):
    from eval.cli import build_parser

    html = (site / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
    for name in ("align-eval", "align-view", "align-extract", "align-merge", "align-symmetrize"):
        assert f'id="{name}"' in html, name
    flags = [s for a in build_parser()._actions for s in a.option_strings if s.startswith("--") and s != "--help"]
    assert flags and all(f"<code>{f}</code>" in html for f in flags), [
        f for f in flags if f"<code>{f}</code>" not in html
    ]
    for flag in ("--shard", "--save-scores", "--reverse-target-first", "--overwrite"):
        assert f"<code>{flag}</code>" in html, flag


def test_api_reference_reads_the_docstrings(site):
    html = (site / "reference" / "api" / "extraction" / "index.html").read_text(encoding="utf-8")
    assert "align.extraction.aligner.Aligner" in html and "Word links per sentence" in html
    html = (site / "reference" / "api" / "links" / "index.html").read_text(encoding="utf-8")
    assert "read_alignments" in html


@pytest.fixture(scope="module")
def served(site):
    handler = functools.partial(QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):
        pass


@pytest.mark.browser
def test_every_page_opens_without_console_errors(site, served):
    why = missing()
    _need(f"headless Chromium: {why}; the docs page check needs it" if why else None)
    with Chromium() as browser:
        for page in pages(site):
            tab = browser.open(served + ("" if page == "./" else page))
            tab.wait_for("document.readyState === 'complete'")
            assert tab.evaluate("document.querySelector('h1') !== null"), page
            if page == "./":  # Material's search: its worker loads the index over http
                tab.evaluate(
                    "document.querySelector('.md-search__input').value = 'AER'; "
                    "document.querySelector('.md-search__input').dispatchEvent(new Event('input')); 1"
                )
                tab.wait_for("document.querySelectorAll('.md-search-result__item').length > 0")
            assert tab.errors() == [], (page, tab.errors())
            tab.close()
