"""Sharded alignment dumps: each rank writes its sentences with global ids; ``align-merge DIR``
joins the shards into one Pharaoh file per setting, in input order, byte-identical to an
unsharded run. Numpy-free, framework-free.

A shard is ``DIR/shard-K-of-N/`` holding ``manifest.json`` (shard, shards, total sentences, the
files) and one file per setting whose lines are ``ID<TAB>links`` (0-based global sentence ids).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile

from .formats import replace_atomic

_SHARD = re.compile(r"^shard-(\d+)-of-(\d+)$")


class ShardError(ValueError):
    """Shards that do not make exactly one whole, consistent corpus."""


def shard_dir(folder: str, shard: int, shards: int) -> str:
    """``DIR/shard-K-of-N`` (K 0-based)."""
    return os.path.join(folder, f"shard-{shard}-of-{shards}")


def write_shard(folder: str, shard: int, shards: int, total: int, files: dict[str, list[tuple[int, str]]]) -> str:
    """Write one rank's part: ``files`` maps a setting's file name to ``(global id, links)`` rows.
    Written to a temporary folder first and renamed, so a shard is whole or absent."""
    if not 0 <= shard < shards:
        raise ShardError(f"shard {shard} is not in 0..{shards - 1}")
    os.makedirs(folder, exist_ok=True)
    final = shard_dir(folder, shard, shards)
    if os.path.exists(final):
        raise ShardError(f"{final} exists already: remove it before writing the shard again")
    tmp = tempfile.mkdtemp(dir=folder, prefix=".tmp-shard-")
    for name, rows in files.items():
        with open(os.path.join(tmp, name), "w", encoding="utf-8", newline="\n") as f:
            f.writelines(f"{i}\t{links}\n" for i, links in rows)
    ids = sorted({i for rows in files.values() for i, _ in rows})
    with open(os.path.join(tmp, "manifest.json"), "w") as f:
        json.dump({"shard": shard, "shards": shards, "total": total, "sentences": len(ids),
                   "files": sorted(files)}, f, indent=1)
    replace_atomic(tmp, final)
    return final


def _read_shard(path: str) -> tuple[dict, dict[str, dict[int, str]]]:
    try:
        with open(os.path.join(path, "manifest.json")) as f:
            man = json.load(f)
    except (OSError, ValueError) as e:
        raise ShardError(f"{path}: no readable manifest.json ({e}); the shard is incomplete") from None
    files: dict[str, dict[int, str]] = {}
    for name in man.get("files", []):
        rows: dict[int, str] = {}
        fpath = os.path.join(path, name)
        try:
            with open(fpath, encoding="utf-8") as f:
                for n, line in enumerate(f, 1):
                    sid, tab, links = line.rstrip("\n").partition("\t")
                    if not tab or not sid.isdigit():
                        raise ShardError(f"{fpath}:{n}: expected 'ID<TAB>links'; found {line.rstrip()[:60]!r}")
                    if int(sid) in rows:
                        raise ShardError(f"{fpath}:{n}: sentence {sid} appears twice")
                    rows[int(sid)] = links
        except OSError as e:
            raise ShardError(f"{fpath}: listed in the manifest but unreadable ({e})") from None
        files[name] = rows
    return man, files


def merge(folder: str) -> tuple[int, int, list[str]]:
    """Merge every ``shard-K-of-N`` of ``folder`` into its top level; returns (shards, sentences,
    file names). Checks everything before writing: a missing, extra, duplicated or overlapping
    shard raises ShardError and no file is written."""
    found = {}
    for entry in sorted(os.listdir(folder)):
        m = _SHARD.match(entry)
        if m and os.path.isdir(os.path.join(folder, entry)):
            found[entry] = (int(m.group(1)), int(m.group(2)))
    if not found:
        raise ShardError(f"{folder}: no shard-K-of-N folders")
    counts = {n for _, n in found.values()}
    if len(counts) != 1:
        raise ShardError(f"{folder}: shards of different runs ({', '.join(sorted(found))})")
    shards = counts.pop()
    missing = sorted(set(range(shards)) - {k for k, _ in found.values()})
    if missing:
        raise ShardError(f"{folder}: shard(s) {', '.join(map(str, missing))} of {shards} missing")
    parts = [_read_shard(os.path.join(folder, e)) for e in sorted(found, key=lambda e: found[e][0])]
    totals = {man["total"] for man, _ in parts}
    names = {tuple(sorted(files)) for _, files in parts}
    if len(totals) != 1 or len(names) != 1:
        raise ShardError(f"{folder}: shards disagree on the corpus size or the settings written")
    total, names = totals.pop(), list(names.pop())
    for name in names:
        seen: dict[int, int] = {}
        for k, (_, files) in enumerate(parts):
            for sid in files[name]:
                if sid in seen:
                    raise ShardError(f"{folder}: sentence {sid} is in shard {seen[sid]} and shard {k} ({name})")
                seen[sid] = k
        if sorted(seen) != list(range(total)):
            lost = sorted(set(range(total)) - set(seen))[:5]
            raise ShardError(f"{folder}: {name} covers {len(seen)} of {total} sentences (missing e.g. {lost})")
    tmps = []
    try:
        for name in names:
            fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-merge-")
            tmps.append((tmp, os.path.join(folder, name)))
            rows = {}
            for _, files in parts:
                rows.update(files[name])
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
                f.writelines(rows[i] + "\n" for i in range(total))
        for tmp, dest in tmps:
            replace_atomic(tmp, dest)
    finally:
        for tmp, _ in tmps:
            if os.path.exists(tmp):
                os.remove(tmp)
    return shards, total, names


def main(argv=None) -> int:
    """align-merge DIR: join DIR/shard-K-of-N/ into one Pharaoh file per setting."""
    ap = argparse.ArgumentParser(prog="align-merge", description="Merge the shards of a sharded alignment dump "
                                 "(DIR/shard-K-of-N/) into one Pharaoh file per setting in DIR, in input order.")
    ap.add_argument("folder")
    ap.add_argument("--format", choices=("text", "json"), default="text")
    args = ap.parse_args(argv)
    try:
        shards, total, names = merge(args.folder)
    except (ShardError, OSError) as e:
        print(f"align-merge: {e}", file=sys.stderr)
        return 1
    if args.format == "json":
        print(json.dumps({"folder": args.folder, "shards": shards, "sentences": total, "files": names}))
    else:
        print(f"merged {shards} shards: {len(names)} files of {total} sentences in {args.folder}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
