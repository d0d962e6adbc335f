"""Tables over a grid of alignment files named ``METHOD-SHIFT-layerN[-headH].align``
(the plugin's ``--alignment-dump`` names): parse the names, summarize heads, format AER grids."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from align.spec.setting import Setting

GridKey = Setting
"""Where one alignment file sits in the grid (:class:`align.spec.setting.Setting`); ``head`` is None for
layer-level methods."""


def parse_name(name: str) -> Setting:
    """``norm-head-awi-layer2-head3.align`` -> Setting('norm-head', 'awi', 2, 3); any method string (the
    summaries' ``norm-best``); ValueError for a blend or a name that is not a setting's."""
    return Setting.parse(name, any_method=True)


def summarize_heads(rows: Iterable[dict[str, Any]], key: str = "aer") -> list[dict[str, Any]]:
    """Per-head rows (``hyp`` names with ``-headH``) -> two rows per (method, shift, layer):
    ``METHOD-best-SHIFT-layerN`` (the head with the lowest ``key``, named in ``head``) and
    ``METHOD-mean-SHIFT-layerN`` (``key``, precision and recall averaged over heads)."""
    groups: dict[tuple[Any, ...], list[tuple[int, dict[str, Any]]]] = {}
    for r in rows:
        k = parse_name(r["hyp"])
        if k.head is not None:
            groups.setdefault((k.method, k.shift, k.layer), []).append((k.head, r))
    out = []
    for (method, shift, layer), heads in sorted(groups.items()):
        best_head, best = min(heads, key=lambda hr: hr[1][key])
        out.append({**best, "hyp": Setting(f"{method}-best", shift, layer).name, "head": best_head})
        mean = {m: sum(r[m] for _, r in heads) / len(heads) for m in ("aer", "precision", "recall", "f1")}
        out.append({"hyp": Setting(f"{method}-mean", shift, layer).name, **mean, "heads": len(heads)})
    return out


def layer_rows(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows of layer-level files (no ``-headH``)."""
    return [r for r in rows if parse_name(r["hyp"]).head is None]


def best(rows: Iterable[dict[str, Any]], method: str | None = None, key: str = "aer") -> dict[str, Any]:
    """The row with the lowest ``key`` (optionally among one method's rows); ValueError if none."""
    cand = [r for r in rows if method is None or parse_name(r["hyp"]).method == method]
    if not cand:
        raise ValueError(f"no rows for method {method!r}")
    return min(cand, key=lambda r: r[key])


def _cells(rows: Iterable[dict[str, Any]], key: str) -> tuple[dict[str, dict[int, float]], list[int]]:
    """{METHOD-SHIFT: {layer: row[key]}} and the sorted layers present."""
    grid: dict[str, dict[int, float]] = {}
    for r in rows:
        k = parse_name(r["hyp"])
        grid.setdefault(f"{k.method}-{k.shift}", {})[k.layer] = r[key]
    return grid, sorted({n for v in grid.values() for n in v})


def format_grid(rows: Iterable[dict[str, Any]], key: str = "aer", title: str = "AER (%)") -> str:
    """Fixed-width table: one row per METHOD-SHIFT, one column per layer, cells ``key`` to 0.1."""
    grid, layers = _cells(rows, key)
    width = max([len(k) for k in grid] + [len(title)]) + 2
    head = f"{title:<{width}}" + "".join(f"{'layer ' + str(n):>9}" for n in layers)
    lines = [head] + [
        f"{name:<{width}}" + "".join(f"{grid[name].get(n, float('nan')):9.1f}" for n in layers) for name in sorted(grid)
    ]
    return "\n".join(lines)


def format_markdown(rows: Iterable[dict[str, Any]], key: str = "aer", title: str = "AER (%)") -> str:
    """The same grid as a Markdown table (best cell of each row in bold: lowest AER, highest otherwise)."""
    grid, layers = _cells(rows, key)
    lines = [f"| {title} | " + " | ".join(f"layer {n}" for n in layers) + " |", "|---|" + "---:|" * len(layers)]
    for name in sorted(grid):
        top = (min if key == "aer" else max)(grid[name].values())
        cells = [
            (
                ""
                if n not in grid[name]
                else (f"**{grid[name][n]:.1f}**" if grid[name][n] == top else f"{grid[name][n]:.1f}")
            )
            for n in layers
        ]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)
