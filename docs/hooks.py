"""MkDocs hooks: pages made at build time from the code and the repository, never retyped.

- ``reference/cli.md``: every console script's flags, read from its argparse parser (the parser each
  ``main`` builds is caught as it parses, so a script needs no extra entry point), and the fairseq
  plugin's task flags, read from its config dataclass;
- ``results/``: ``benchmarks/results/`` as committed (tables, JSON, figures);
- ``changelog.md``: ``CHANGELOG.md``;
- markers in a page, each replaced by what the code says when the page is built (:func:`expand`):
  ``<!-- table: methods -->`` and ``<!-- table: method-needs -->`` from the method registry
  (``align.attribution.methods``), ``<!-- table: test-sets -->`` from the gold test-set registry,
  ``<!-- api: console-scripts -->`` one mkdocstrings section per module of setup.cfg's console scripts.

The console scripts themselves (the CLI reference, the API page of their modules) are read from setup.cfg's
``[options.entry_points]``, so a new command is documented by adding its entry point.
"""

from __future__ import annotations

import argparse
import configparser
import dataclasses
import importlib
import logging
import os
import re
import sys
from types import ModuleType
from typing import Any

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def console_scripts() -> dict[str, str]:
    """setup.cfg's console scripts in its order: name -> ``module:function``."""
    cfg = configparser.ConfigParser(interpolation=None)
    cfg.read(os.path.join(ROOT, "setup.cfg"), encoding="utf-8")
    out = {}
    for line in cfg.get("options.entry_points", "console_scripts", fallback="").splitlines():
        name, eq, target = line.partition("=")
        if eq:
            out[name.strip()] = target.strip()
    if not out:
        raise RuntimeError("setup.cfg names no console_scripts in [options.entry_points]")
    return out


class _Caught(Exception):
    def __init__(self, parser: argparse.ArgumentParser) -> None:
        self.parser = parser


def parser_of(target: str) -> argparse.ArgumentParser:
    """The parser ``main`` builds, caught when it starts parsing (nothing runs)."""
    module, _, name = target.partition(":")
    main = getattr(importlib.import_module(module), name)
    real = argparse.ArgumentParser.parse_args
    real_intermixed = argparse.ArgumentParser.parse_intermixed_args  # align-eval and align-view parse this way

    def catch(self: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> Any:
        raise _Caught(self)

    argparse.ArgumentParser.parse_args = catch  # type: ignore[method-assign]
    argparse.ArgumentParser.parse_intermixed_args = catch  # type: ignore[method-assign]
    try:
        main([])
    except _Caught as c:
        return c.parser
    finally:
        argparse.ArgumentParser.parse_args = real  # type: ignore[method-assign]
        argparse.ArgumentParser.parse_intermixed_args = real_intermixed  # type: ignore[method-assign]
    raise RuntimeError(f"{target} returned without parsing its arguments")


def _cell(text: str) -> str:
    """Help text as one table cell: one line, Markdown's and HTML's special characters escaped."""
    text = " ".join(str(text).split())
    for c in "\\`*_[]|":
        text = text.replace(c, "\\" + c)
    return text.replace("<", "&lt;").replace(">", "&gt;")


def _flags(action: argparse.Action) -> str:
    if not action.option_strings:
        return f"`{action.metavar or action.dest}`"
    return ", ".join(f"`{s}`" for s in action.option_strings)


def parser_markdown(name: str, parser: argparse.ArgumentParser) -> str:
    """One section: usage, description, a table of every argument, the epilog."""
    parser.prog = name
    usage = parser.format_usage().strip()
    out = [f"## `{name}`", "", "```text", usage, "```", ""]
    if parser.description:
        out += [parser.description.strip(), ""]
    out += ["| argument | default | choices | what it does |", "|---|---|---|---|"]
    for a in parser._actions:
        if isinstance(a, argparse._HelpAction):
            continue
        default = "" if a.default in (None, argparse.SUPPRESS, False) or not a.option_strings else f"`{a.default}`"
        if isinstance(a, argparse._VersionAction):
            default = ""
        choices = ", ".join(f"`{c}`" for c in a.choices) if a.choices else ""
        text = (a.help or "").replace("%%", "%")
        if isinstance(a, argparse._VersionAction):
            text = "print the version and exit"
        out.append(f"| {_flags(a)} | {default} | {choices} | {_cell(text)} |")
    out.append("")
    if parser.epilog:
        out += [parser.epilog.strip(), ""]
    return "\n".join(out)


def plugin_markdown() -> str:
    """The fairseq task's flags, from its config dataclass (fairseq prints none of them in --help)."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    logging.disable(logging.WARNING)  # fairseq's import chatter (INFO about optional packages)
    try:
        from fairseq.tasks.translation import TranslationConfig

        from fairseq_plugins.tasks import NormAlignConfig
    except Exception as e:  # fairseq missing or broken: say so on the page rather than fail the build
        return f"## `fairseq-generate --task translation_norm_align`\n\nNot generated: fairseq does not import ({e}).\n"
    finally:  # fairseq's import configures the root logger (DEBUG to stderr); the build's own stays
        root.handlers[:] = handlers
        root.setLevel(level)
        logging.disable(logging.NOTSET)
    inherited = {f.name for f in dataclasses.fields(TranslationConfig)}
    out = [
        "## `fairseq-generate --task translation_norm_align`",
        "",
        "The plugin's own flags (`--user-dir fairseq_plugins`), read from `fairseq_plugins.tasks.NormAlignConfig`; "
        "fairseq's translation flags come on top.",
        "",
        "| flag | default | what it does |",
        "|---|---|---|",
    ]
    for f in dataclasses.fields(NormAlignConfig):
        if f.name in inherited:
            continue
        default = "" if f.default in (None, dataclasses.MISSING, False) else f"`{f.default}`"
        out.append(f"| `--{f.name.replace('_', '-')}` | {default} | {_cell(f.metadata.get('help', ''))} |")
    return "\n".join(out) + "\n"


def cli_page() -> str:
    from align import __version__

    parts = [
        "# Command-line reference",
        "",
        f"Generated from the argparse parsers of norm-align {__version__} when the site is built; "
        "`COMMAND --help` prints the same. Exit status everywhere: 0 ok, 1 bad input (one line, "
        "`file:line: ...`), 2 usage (or, for `align-extract` without torch, the extra to install).",
        "",
    ]
    for name, target in console_scripts().items():
        parts.append(parser_markdown(name, parser_of(target)))
    parts.append(plugin_markdown())
    return "\n".join(parts)


# -- pages' markers: <!-- table: NAME --> and <!-- api: NAME -->, expanded from the code --------------------------

MARKER = re.compile(r"^<!-- (table|api): (\S+) -->$", re.MULTILINE)


def testsets_registry() -> ModuleType:
    """The gold test-set registry (``names()``, ``get(name)``, ``listing()``)."""
    return importlib.import_module("align.gold.testsets")


def _first_sentence(doc: str | None) -> str:
    text = " ".join((doc or "").split())
    return text.split(". ")[0].rstrip(".") + "." if text else ""


def layout_table() -> str:
    """One row per package folder, drawn from the tree: its docstring's first sentence, its modules, and what it
    may import (``align.layers``, which ``tests/test_imports.py`` checks)."""
    import ast

    from align.layers import LAYERS

    plugins = {"fairseq_plugins": "fairseq, any `align` layer", "hf_plugins": "transformers, any `align` layer"}
    out = ["| folder | what | modules | may import |", "|---|---|---|---|"]
    for folder, may in [*((f, m) for f, (m, _) in LAYERS.items()), *plugins.items()]:
        path = os.path.join(ROOT, folder)
        init = os.path.join(path, "__init__.py")
        doc = ast.get_docstring(ast.parse(open(init, encoding="utf-8").read())) if os.path.exists(init) else ""
        mods = sorted(n[:-3] for n in os.listdir(path) if n.endswith(".py") and n != "__init__.py")
        out.append(f"| `{folder}/` | {_cell(_first_sentence(doc))} | {', '.join(f'`{m}`' for m in mods)} | {may} |")
    return "\n".join(out)


def methods_registry() -> ModuleType | str:
    """``align.attribution.methods``, or why it does not import (it needs torch, which the docs extra lacks)."""
    try:
        return importlib.import_module("align.attribution.methods")
    except ModuleNotFoundError as e:
        if (e.name or "").partition(".")[0] != "torch":
            raise
        return f"Not generated: `align.attribution.methods` does not import ({_cell(e)}); install torch to see it."


def methods_table() -> str:
    """One row per registered attribution method, in registry order."""
    reg = methods_registry()
    if isinstance(reg, str):
        return reg
    out = ["| method | what it scores | per head | needs | source |", "|---|---|---|---|---|"]
    for m in reg.METHODS.values():
        needs = ", ".join(f"`{n}`" for n in sorted(m.needs))
        out.append(
            f"| `{m.name}` | {_cell(m.description)} | {'yes' if m.per_head else ''} | {needs} | {_cell(m.cite)} |"
        )
    return "\n".join(out)


def method_needs_table() -> str:
    """What a method may declare it needs (``NEEDS``), and which registered methods need each."""
    reg = methods_registry()
    if isinstance(reg, str):
        return reg
    out = ["| need | what the engine then computes or records | needed by |", "|---|---|---|"]
    for need, what in reg.NEEDS.items():
        users = ", ".join(f"`{m.name}`" for m in reg.METHODS.values() if need in m.needs)
        out.append(f"| `{need}` | {_cell(what)} | {users} |")
    return "\n".join(out)


def sentence_features_table() -> str:
    """One row per registered sentence feature (``align.confidence.sentence``), and which lists use it."""
    reg = importlib.import_module("align.confidence.sentence")
    out = ["| feature | what it is | needs | forward only | both models |", "|---|---|---|---|---|"]
    for f in reg.FEATURES.values():
        needs = ", ".join(f"`{n}`" for n in sorted(f.needs))
        fwd, both = ("yes" if f.name in lst else "" for lst in (reg.FORWARD_FEATURES, reg.BOTH_FEATURES))
        out.append(f"| `{f.name}` | {_cell(f.description)} | {needs} | {fwd} | {both} |")
    return "\n".join(out)


def noise_kinds_table() -> str:
    """One row per kind of noise (``align.confidence.noise``)."""
    reg = importlib.import_module("align.confidence.noise")
    out = ["| kind | what it does to a clean pair | from |", "|---|---|---|"]
    for k in reg.KINDS.values():
        out.append(f"| `{k.name}` | {_cell(k.description)} | {_cell(k.source)} |")
    return "\n".join(out)


def testsets_table() -> str:
    """One row per named gold test set, from the registry's ``listing()``."""
    out = [
        "| name | languages | pairs | sure / possible | shipped | what it is | licence |",
        "|---|---|---:|---:|---|---|---|",
    ]
    for r in testsets_registry().listing():
        out.append(
            f"| `{r['name']}` | {r['langs']} | {r['pairs']} | {r['sure']} / {r['possible']} | "
            f"{'yes' if r['shipped'] else 'no'} | {_cell(r['title'])} | {_cell(r['licence'])} |"
        )
    return "\n".join(out)


def console_scripts_api() -> str:
    """One mkdocstrings section per module that setup.cfg's console scripts run, under the scripts' names."""
    modules: dict[str, list[str]] = {}
    for name, target in console_scripts().items():
        modules.setdefault(target.partition(":")[0], []).append(name)
    out = []
    for module, names in modules.items():
        out += [
            f"## {', '.join(f'`{n}`' for n in names)}",
            "",
            f"::: {module}",
            "    options:",
            "      heading_level: 3",
            "",
        ]
    return "\n".join(out)


EXPANSIONS = {
    ("table", "methods"): methods_table,
    ("table", "method-needs"): method_needs_table,
    ("table", "test-sets"): testsets_table,
    ("table", "layout"): layout_table,
    ("table", "sentence-features"): sentence_features_table,
    ("table", "noise-kinds"): noise_kinds_table,
    ("api", "console-scripts"): console_scripts_api,
}


def expand(markdown: str) -> str:
    """The page with every marker replaced by what it stands for; an unknown marker is an error."""

    def one(m: re.Match[str]) -> str:
        make = EXPANSIONS.get((m.group(1), m.group(2)))
        if make is None:
            valid = ", ".join(f"<!-- {k}: {n} -->" for k, n in EXPANSIONS)
            raise ValueError(f"unknown marker {m.group(0)}; valid: {valid}")
        return make()

    return MARKER.sub(one, markdown)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    try:
        return expand(markdown)
    except ValueError as e:
        raise PluginError(f"{page.file.src_uri}: {e}") from None


def on_files(files: Files, config: Any) -> Files:
    files.append(File.generated(config, "reference/cli.md", content=cli_page()))
    with open(os.path.join(ROOT, "CHANGELOG.md"), encoding="utf-8") as f:
        files.append(File.generated(config, "changelog.md", content=f.read()))
    results = os.path.join(ROOT, "benchmarks", "results")
    for name in sorted(os.listdir(results)):
        if name.endswith((".md", ".png", ".json", ".txt")):
            files.append(File.generated(config, f"results/{name}", abs_src_path=os.path.join(results, name)))
    return files
