"""align-eval's heatmap: AER of each hypothesis file, one row per file family, one column per layer."""

from __future__ import annotations

import os
import re
from typing import Any

from align.io.lines import strip_compression
from align.spec.setting import Setting, is_blend

_OTHER_LAYERED = re.compile(r"(?P<key>.+?)[.-]layer(?P<layer>\d+)(?P<rest>.*)")
"""Another tool's file named by layer (``model.layer3``): a row ``KEY+REST``, column N."""


def heatmap_cell(name: str) -> tuple[str, int]:
    """The (row, column) of one hypothesis file in the heatmap: a setting's file (with any suffix after the
    first ``.``: ``.reverse``, ``.gmean-threshold``) is the row METHOD-SHIFT[-headH]SUFFIX at its layer; a
    blend is a row of its own; another tool's ``...layerN...`` name is read as such; else the name, column 0."""
    head, dot, rest = name.partition(".")
    if not is_blend(name):
        try:
            s = Setting.parse(head, any_method=True)
        except ValueError:
            m = _OTHER_LAYERED.fullmatch(name)
            return (m["key"] + m["rest"], int(m["layer"])) if m else (name, 0)
        return f"{s.method}-{s.shift}" + ("" if s.head is None else f"-head{s.head}") + dot + rest, s.layer
    return name, 0


def plot_heatmap(results: list[dict[str, Any]], path: str) -> None:
    """Heatmap of AER: one row per file family, one column per layer (names ``...layerN...``)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise RuntimeError("--plot needs matplotlib: pip install matplotlib (or the project's [plot] extra)") from None
    import numpy as np

    cells: dict[str, dict[int, float]] = {}
    for r in results:
        name = strip_compression(os.path.basename(r["hyp"]))
        for ext in (".align", ".pharaoh", ".talp", ".txt"):
            name = name[: -len(ext)] if name.endswith(ext) else name
        row, col = heatmap_cell(name)
        cells.setdefault(row, {})[col] = r["aer"]
    rows = list(cells)
    cols = sorted({c for v in cells.values() for c in v})
    grid = np.full((len(rows), len(cols)), np.nan)
    for i, row in enumerate(rows):
        for j, col in enumerate(cols):
            grid[i, j] = cells[row].get(col, np.nan)
    fig, ax = plt.subplots(figsize=(1.2 + 0.8 * len(cols), 1.0 + 0.4 * len(rows)))
    im = ax.imshow(grid, cmap="viridis_r", aspect="auto")
    ax.set_xticks(range(len(cols)), [str(c) for c in cols] if len(cols) > 1 else ["AER"])
    if len(cols) > 1:
        ax.set_xlabel("layer")
    ax.set_yticks(range(len(rows)), rows)
    mid = np.nanmean(grid) if np.isfinite(grid).any() else 0
    for i in range(len(rows)):
        for j in range(len(cols)):
            if not np.isnan(grid[i, j]):
                # dark text on the light (low-AER) end of viridis_r, white on the dark end
                ax.text(
                    j,
                    i,
                    f"{grid[i, j]:.1f}",
                    ha="center",
                    va="center",
                    fontsize=8,
                    color="black" if grid[i, j] < mid else "white",
                )
    fig.colorbar(im, ax=ax, label="AER (%)")
    fig.tight_layout()
    tmp = os.path.join(os.path.dirname(os.path.abspath(path)), f".tmp-{os.getpid()}-{os.path.basename(path)}")
    try:
        fig.savefig(tmp, dpi=120, format=os.path.splitext(path)[1][1:] or "png")
        os.replace(tmp, path)  # no partial image is ever left at the destination
    finally:
        plt.close(fig)
        if os.path.exists(tmp):
            os.unlink(tmp)
