"""The documentation site: ``mkdocs build --strict`` (a broken link, a missing page or reference, a
docstring mkdocstrings cannot read: each fails the build), the generated command-line reference, and
every page opened in headless Chromium over http on 127.0.0.1 with no console error. Without the build:
the tables generated from the registries list every name, every console script is documented, and
every repository path the README and the pages name exists.

Without mkdocs (the ``dev`` extra) the build test skips, and without the browser the page check
skips, saying so; under CI (``CI`` set) both fail instead."""

import configparser
import functools
import http.server
import importlib.util
import os
import re
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
        # not -q: mkdocs then drops the warnings before --strict counts them, and a broken link passes
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"), "-d", str(out)],
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
        "guides/contributing/",
        "guides/test-sets/",
        "reference/api/commands/",
    ):
        assert page in got, page
    assert (site / "results" / "align_view.png").is_file() and (site / "search" / "search_index.json").is_file()


def test_cli_reference_comes_from_the_parsers(site):
    from eval.cli import build_parser

    html = (site / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
    assert len(console_scripts()) >= 6
    for name in console_scripts():
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


def test_api_reference_covers_every_console_script(site):
    html = (site / "reference" / "api" / "commands" / "index.html").read_text(encoding="utf-8")
    for name, target in console_scripts().items():
        module, _, function = target.partition(":")
        assert f'id="{name}"' in html and f'id="{module}"' in html and f'id="{module}.{function}"' in html, name


# ----------------------------------------------------------------------------------------------
# what the hook generates, checked without building the site
# ----------------------------------------------------------------------------------------------


@functools.cache
def hooks():
    """docs/hooks.py as a module (it needs mkdocs, the ``dev`` extra)."""
    try:
        import mkdocs  # noqa: F401
    except ImportError as e:
        _need(f"{e.name} is not installed (pip install -e '.[dev]'): docs/hooks.py needs it")
    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "docs" / "hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def console_scripts() -> dict[str, str]:
    """setup.cfg's console scripts, read here (not by the hook): name -> module:function."""
    cfg = configparser.ConfigParser(interpolation=None)
    cfg.read(ROOT / "setup.cfg", encoding="utf-8")
    lines = cfg["options.entry_points"]["console_scripts"].strip().splitlines()
    return dict((part.strip() for part in line.split("=", 1)) for line in lines)


def _table_names(markdown: str) -> list[str]:
    """The first cell (a code span) of every table row."""
    return re.findall(r"^\| `([^`]+)` \|", markdown, re.M)


@pytest.mark.parametrize(
    "page, marker",
    [("methods.md", "<!-- table: methods -->"), ("guides/contributing.md", "<!-- table: method-needs -->")],
)
def test_method_tables_come_from_the_registry(page, marker):
    pytest.importorskip("torch")
    from align.attribution.methods import METHODS, NEEDS

    text = (ROOT / "docs" / page).read_text(encoding="utf-8")
    table = hooks().expand(marker)
    assert marker in text and table in hooks().expand(text), page
    want = list(METHODS) if marker.endswith("methods -->") else list(NEEDS)
    assert _table_names(table) == want
    if marker.endswith("methods -->"):
        for m in METHODS.values():
            assert f"| `{m.name}` | {hooks()._cell(m.description)} |" in table, m.name


def test_test_set_table_comes_from_the_registry():
    reg = hooks().testsets_registry()
    text = (ROOT / "docs" / "guides" / "test-sets.md").read_text(encoding="utf-8")
    table = hooks().expand("<!-- table: test-sets -->")
    assert "<!-- table: test-sets -->" in text and table in hooks().expand(text)
    assert len(reg.names()) >= 10 and _table_names(table) == reg.names()
    for name in reg.names():
        t = reg.get(name)
        shipped = "yes" if t.shipped else "no"
        assert f"| `{name}` | {t.pair} | {t.pairs} | {t.sure} / {t.possible} | {shipped} |" in table, name


def test_an_unknown_marker_is_refused():
    with pytest.raises(ValueError, match=r"unknown marker <!-- table: method -->; valid: <!-- table: methods -->"):
        hooks().expand("text\n\n<!-- table: method -->\n")
    with pytest.raises(ValueError, match="unknown marker <!-- api: Console-Scripts -->"):
        hooks().expand("<!-- api: Console-Scripts -->")
    assert hooks().expand("a `<!-- table: methods -->` in a sentence") == "a `<!-- table: methods -->` in a sentence"


def test_every_console_script_is_in_both_references():
    scripts = console_scripts()
    assert hooks().console_scripts() == scripts
    text = (ROOT / "docs" / "reference" / "api" / "commands.md").read_text(encoding="utf-8")
    assert "<!-- api: console-scripts -->" in text
    out = hooks().expand(text)
    modules = {target.partition(":")[0] for target in scripts.values()}
    assert set(re.findall(r"^::: (\S+)$", out, re.M)) == modules
    assert all(f"`{name}`" in out for name in scripts)
    # documented once: a module on two pages would have two addresses
    elsewhere = {
        m for p in (ROOT / "docs" / "reference").rglob("*.md") for m in re.findall(r"^::: (\S+)$", p.read_text(), re.M)
    }
    assert not modules & elsewhere


# ----------------------------------------------------------------------------------------------
# every repository path the README and the pages name exists
# ----------------------------------------------------------------------------------------------

PREFIXES = ("align/", "eval/", "fairseq_plugins/", "hf_plugins/", "data/", "benchmarks/", "tests/", "docs/", ".ci/")
# file names written in capitals; any other word in capitals is a placeholder (data/models/NAME, test_NAME.py)
CAPITALS = {"README", "LICENSE", "CHANGELOG", "MANIFEST", "MODEL_CARD", "CONTRIBUTING"}
PLACEHOLDER = re.compile(r"(?:^|[^A-Za-z])[A-Z]{2,}(?:[^A-Za-z]|$)")
# what a command run has made or will make, never committed: work/, demo_out/, site/ (anywhere in a path)
PRODUCED_DIRS = {"work", "demo_out", "site"}
# a file a page names as a script's output before the script has run: path -> the script that writes it
NOT_YET_WRITTEN = {"benchmarks/results/gpu.md": "benchmarks/gpu_check.py"}  # no GPU run yet (align-extract.md)
FENCE = re.compile(r"^ *```.*?^ *```", re.M | re.S)
SPAN_OR_LINK = re.compile(r"`([^`\n]+)`|\]\(([^)\s]+)\)")


def _doc_files() -> list[Path]:
    # CHANGELOG.md is history: the paths it names were right when written
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def _is_path(token: str) -> bool:
    if not token.startswith(PREFIXES) or re.search(r"[*?<>{}$%\[\]]|\.\.\.", token):
        return False
    for part in token.split(":")[0].split("/"):  # a suffix (::test_name, :NAME) is not part of the path
        if part in PRODUCED_DIRS or (part.split(".")[0] not in CAPITALS and PLACEHOLDER.search(part)):
            return False
    return True


def named_paths(text: str) -> list[str]:
    """The repository paths in code spans, code blocks and link targets of one Markdown text."""
    chunks = [m.group(0) for m in FENCE.finditer(text)]
    for m in SPAN_OR_LINK.finditer(FENCE.sub("", text)):
        chunks.append(m.group(1) if m.group(1) is not None else m.group(2).split("#")[0])
    out = []
    for chunk in chunks:
        for token in re.split(r"[\s=\"'`,;()|]+", chunk):
            token = token.rstrip(".:")
            if _is_path(token):
                out.append(token)
    return out


def test_named_paths_are_found():
    text = (
        "See `tests/a/test_b.py::test_c` and [x](docs/y.md#z), `python benchmarks/b.py --out=data/models/enfr`.\n"
        "```bash\nalign-eval align/links/gold/x.gold 'tests/t.py'\n```\n"
        "Not: `data/models/NAME/`, `tests/attribution/test_NAME.py`, `align/*.py`, `work/bin`, `../results/a.md`,\n"
        "`data/work/x`, `tests/<name>.py`, `data/models/$MODEL`.\n"
    )
    assert named_paths(text) == [
        "align/links/gold/x.gold",
        "tests/t.py",
        "tests/a/test_b.py::test_c",
        "docs/y.md",
        "benchmarks/b.py",
        "data/models/enfr",
    ]
    assert named_paths("`data/models/enfr/MODEL_CARD.md`, `align/links/testsets.py:TESTSETS`") == [
        "data/models/enfr/MODEL_CARD.md",
        "align/links/testsets.py:TESTSETS",
    ]


def test_every_path_the_docs_name_exists():
    stale = []
    for doc in _doc_files():
        for path in named_paths(doc.read_text(encoding="utf-8")):
            file, _, test = path.partition("::")
            where = ROOT / file.split(":")[0]
            if file in NOT_YET_WRITTEN and not where.exists():
                writer = (ROOT / NOT_YET_WRITTEN[file]).read_text(encoding="utf-8")
                assert file in writer, f"{NOT_YET_WRITTEN[file]} no longer writes {file}"
            elif not where.exists() or (file.endswith("/") and not where.is_dir()):
                stale.append(f"{doc.relative_to(ROOT)}: {path} does not exist")
            elif test and not re.search(rf"^\s*(async )?def {re.escape(test)}\(", where.read_text(), re.M):
                stale.append(f"{doc.relative_to(ROOT)}: {path}: no such test in {file}")
    assert not stale, "\n".join(stale)


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
