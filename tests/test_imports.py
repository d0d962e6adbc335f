"""The folders say what a module may import, and this keeps it true: statically (every import
statement of every module, function-level ones included) and at run time (what importing loads)."""

import ast
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
from align.layers import FRAMEWORKS, LAYERS  # noqa: E402

RULES = {folder: banned for folder, (_, banned) in LAYERS.items()}
"""folder: what its modules must never import (align.layers, which the layout page shows too)."""


def _imports(path: str, package: str) -> list[tuple[int, str]]:
    """(line, absolute module) of every import in a file; relative imports resolved against ``package``."""
    tree = ast.parse(open(path, encoding="utf-8").read(), path)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # from ..links.formats import X (package align.cli): align.links.formats
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1])
                if node.module:
                    out.append((node.lineno, f"{base}.{node.module}"))
                else:  # from . import name: the name may be a module
                    out += [(node.lineno, f"{base}.{a.name}") for a in node.names]
            else:
                out.append((node.lineno, node.module))
    return out


def _banned(module: str, banned: set[str]) -> bool:
    return any(module == b or module.startswith(b + ".") for b in banned)


@pytest.mark.parametrize("folder", sorted(RULES))
def test_each_folder_imports_only_its_layers(folder):
    bad = []
    for name in sorted(os.listdir(os.path.join(ROOT, folder))):
        if not name.endswith(".py"):
            continue
        package = folder.replace("/", ".")
        for line, mod in _imports(os.path.join(ROOT, folder, name), package):
            if _banned(mod, RULES[folder]):
                bad.append(f"{folder}/{name}:{line}: imports {mod}")
    assert not bad, "\n".join(bad)


def test_every_folder_of_align_is_a_declared_layer():
    found = {
        os.path.relpath(d, ROOT)
        for d, _, names in os.walk(os.path.join(ROOT, "align"))
        if "__pycache__" not in d and any(n.endswith(".py") for n in names) and d != os.path.join(ROOT, "align")
    }
    assert found <= set(LAYERS), f"folders without a rule in align/layers.py: {sorted(found - set(LAYERS))}"


def test_no_framework_outside_the_plugins():
    bad = []
    for top in ("align", "eval"):
        for dirpath, _, names in os.walk(os.path.join(ROOT, top)):
            for name in names:
                if name.endswith(".py"):
                    path = os.path.join(dirpath, name)
                    rel = os.path.relpath(path, ROOT)
                    for line, mod in _imports(path, os.path.relpath(dirpath, ROOT).replace(os.sep, ".")):
                        if _banned(mod, FRAMEWORKS):
                            bad.append(f"{rel}:{line}: imports {mod}")
    assert not bad, "\n".join(bad)


def _loaded(code: str) -> list[str]:
    r = subprocess.run(
        [sys.executable, "-c", code + "; import sys, json; print(json.dumps(sorted(sys.modules)))"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert r.returncode == 0, r.stderr
    return r.stdout.strip().splitlines()[-1]


def test_text_layer_and_eval_load_no_torch():
    mods = _loaded(
        "import align, align.io.formats, align.links.decode, align.links.symmetrize, align.spec, "
        "align.links.subwords, align.links.rows, align.io.softscores, align.io.inputs, align.gold.testsets, align.gold.protocol, "
        "align.confidence.calibration, align.confidence.ece, eval, eval.cli, eval.view"
    )
    assert '"torch"' not in mods and '"fairseq"' not in mods and '"matplotlib"' not in mods


def test_merging_shards_needs_no_torch():
    mods = _loaded(
        "import align.cli.merge, align.extraction.shards, align.extraction.outputs, "
        "align.spec.signature, align.extraction.launch"
    )
    assert '"torch"' not in mods


def test_engine_and_cli_load_no_framework():
    mods = _loaded(
        "import align.extraction.engine, align.attribution.methods, align.extraction.adapters, "
        "align.extraction.aligner, align.cli.extract"
    )
    assert '"fairseq"' not in mods and '"transformers"' not in mods


def test_old_module_paths_still_work_with_a_warning():
    code = (
        "import warnings; warnings.simplefilter('always'); import align\n"
        "with warnings.catch_warnings(record=True) as w:\n"
        "    warnings.simplefilter('always')\n"
        "    import align.formats, align.norms, align.extract_cli\n"
        "    from align.shards import merge\n"
        "    import align.links.formats as lf, align.links.testsets as lt\n"
        "import align.io as new\n"
        "assert align.formats is new and align.extract_cli.main is __import__('align.cli.extract', fromlist=['x']).main\n"
        "msgs = [str(x.message) for x in w if issubclass(x.category, DeprecationWarning)]\n"
        "assert any('align.formats moved to align.io' in m for m in msgs), msgs\n"
        "from align.gold import testsets\n"
        "assert lf is new and lt is testsets and lf.read_text_pairs is new.text.read_text_pairs\n"
        "print('ok')"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stderr


def test_unsupported_model_error():
    pytest.importorskip("torch")
    from align.extraction.adapters import FairseqAdapter, UnsupportedModelError

    class NotTransformer:
        decoder = None

    with pytest.raises(UnsupportedModelError, match="not an encoder-decoder Transformer"):
        FairseqAdapter(1, 2).decoder_layers(NotTransformer())


def test_every_command_module_imports_without_torch():
    # --help and --version must work with numpy alone (pip install norm-align): no command imports torch at load
    code = (
        "import sys; sys.modules['torch'] = None\n"
        "import align.cli.calibrate, align.cli.extract, align.cli.merge, align.cli.symmetrize, eval.cli, eval.view\n"
        "print('ok')"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


def test_no_import_cycle_between_modules_of_align():
    # module-level imports only (a function-level import that breaks a cycle on purpose is named in a comment,
    # e.g. norms -> feedforward, shards -> writer); TYPE_CHECKING blocks are not imports at run time
    graph: dict[str, set[str]] = {}
    for dirpath, _, names in os.walk(os.path.join(ROOT, "align")):
        for name in names:
            if not name.endswith(".py"):
                continue
            path = os.path.join(dirpath, name)
            package = os.path.relpath(dirpath, ROOT).replace(os.sep, ".")
            module = package if name == "__init__.py" else f"{package}.{name[:-3]}"
            tree = ast.parse(open(path, encoding="utf-8").read(), path)
            deps = set()
            for node in tree.body:  # top level only
                if isinstance(node, ast.ImportFrom) and node.level:
                    parts = package.split(".")
                    base = ".".join(parts[: len(parts) - node.level + 1])
                    targets = [f"{base}.{node.module}"] if node.module else [f"{base}.{a.name}" for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module:
                    targets = [node.module]
                elif isinstance(node, ast.Import):
                    targets = [a.name for a in node.names]
                else:
                    continue
                deps |= {t for t in targets if t.startswith("align.")}
            graph[module] = deps
    modules = set(graph)

    def resolve(dep: str) -> str | None:
        while dep and dep not in modules:
            dep = dep.rpartition(".")[0]
        return dep or None

    edges = {
        m: {r for d in deps if (r := resolve(d)) and r != m and not m.startswith(r + ".")} for m, deps in graph.items()
    }
    state: dict[str, int] = {}
    cycle: list[str] = []

    def visit(m: str, path: list[str]) -> bool:
        state[m] = 1
        for n in sorted(edges.get(m, ())):
            if state.get(n) == 1:
                cycle.extend(path[path.index(n) :] + [m, n] if n in path else [m, n])
                return True
            if n not in state and visit(n, path + [m]):
                return True
        state[m] = 2
        return False

    found = any(visit(m, []) for m in sorted(modules) if m not in state)
    assert not found, "import cycle: " + " -> ".join(cycle)
