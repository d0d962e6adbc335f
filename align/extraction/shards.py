"""Sharded alignment dumps: each rank writes its sentences with global ids; ``align-merge DIR``
joins the shards into one file per setting, in input order, byte-identical to an unsharded run,
and publishes them as the folder ``DIR/merged/`` (standard library only).

A shard is ``DIR/shard-K-of-N/`` holding ``manifest.json`` and one file per setting whose lines are
``ID<TAB>payload`` (0-based global sentence ids, ascending; the payload is the line an unsharded run
writes). The manifest names the shard, the corpus size, the files and the run's signature (model,
input, settings, version: :mod:`align.extraction.signature`); shards whose signatures differ are refused, naming
the field. Merging streams: memory holds one line per shard, whatever the corpus size.
"""

from __future__ import annotations

import heapq
import json
import os
import re
from collections.abc import Iterator
from typing import IO

from .outputs import OutputExistsError, clean_stale, publishing
from .signature import differing

_SHARD = re.compile(r"^shard-(\d+)-of-(\d+)$")
MERGED = "merged"
MANIFEST = "manifest.json"


class ShardError(ValueError):
    """Shards that do not make exactly one whole, consistent corpus."""


def shard_dir(folder: str, shard: int, shards: int) -> str:
    """``DIR/shard-K-of-N`` (K 0-based)."""
    return os.path.join(folder, f"shard-{shard}-of-{shards}")


def merged_dir(folder: str) -> str:
    """``DIR/merged``: where align-merge publishes the joined files."""
    return os.path.join(folder, MERGED)


def write_manifest(folder: str, manifest: dict) -> None:
    """``manifest.json`` of an output folder (sorted keys, one field per line)."""
    with open(os.path.join(folder, MANIFEST), "w", encoding="utf-8") as f:
        f.write(json.dumps(manifest, indent=1, sort_keys=True) + "\n")


def shard_manifest(shard: int, shards: int, total: int, sentences: int, files: list[str],
                   signature: dict | None) -> dict:
    """What a shard records about itself and its run."""
    return {"shard": shard, "shards": shards, "total": total, "sentences": sentences, "files": sorted(files),
            "signature": signature or {}}


def write_shard(folder: str, shard: int, shards: int, total: int, files: dict[str, list[tuple[int, str]]],
                signature: dict | None = None) -> str:
    """Write one rank's part: ``files`` maps a setting's file name to ``(global id, payload)`` rows.
    Published with one rename, so a shard is whole or absent."""
    if not 0 <= shard < shards:
        raise ShardError(f"shard {shard} is not in 0..{shards - 1}")
    os.makedirs(folder, exist_ok=True)
    final = shard_dir(folder, shard, shards)
    if os.path.exists(final):
        raise ShardError(f"{final} exists already: remove it before writing the shard again")
    ids: set[int] = set()
    with publishing(final) as tmp:
        for name, rows in files.items():
            with open(os.path.join(tmp, name), "w", encoding="utf-8", newline="\n") as f:
                for i, payload in sorted(rows):
                    f.write(f"{i}\t{payload}\n")
                    ids.add(i)
        write_manifest(tmp, shard_manifest(shard, shards, total, len(ids), list(files), signature))
    return final


def _read_manifest(path: str) -> dict:
    try:
        with open(os.path.join(path, MANIFEST), encoding="utf-8") as f:
            man = json.load(f)
    except (OSError, ValueError) as e:
        raise ShardError(f"{path}: no readable {MANIFEST} ({e}); the shard is incomplete") from None
    need = {"shard": int, "shards": int, "total": int, "files": list}
    bad = [k for k, t in need.items() if not isinstance(man.get(k) if isinstance(man, dict) else None, t)]
    if bad:
        raise ShardError(f"{os.path.join(path, MANIFEST)}: no valid {', '.join(bad)}; expected a shard manifest "
                         "written by align-extract or the fairseq plugin")
    return man


def _rows(path: str, f: IO[str]) -> Iterator[tuple[int, str, int]]:
    """``(id, payload, line)`` of one shard file, ids checked to ascend."""
    last = -1
    for n, line in enumerate(f, 1):
        if not line.endswith("\n"):
            raise ShardError(f"{path}:{n}: the last line has no newline; the shard file is cut short")
        sid, tab, payload = line[:-1].partition("\t")
        if not tab or not sid.isdigit():
            raise ShardError(f"{path}:{n}: expected 'ID<TAB>payload'; found {line.rstrip()[:60]!r}")
        i = int(sid)
        if i <= last:
            raise ShardError(f"{path}:{n}: sentence {i} after {last}; expected ascending ids"
                             + (" (it appears twice)" if i == last else ""))
        last = i
        yield i, payload, n


def find_shards(folder: str) -> dict[int, str]:
    """``{K: path}`` of the shard folders of one run in ``folder``; ShardError for mixed or missing ones."""
    found: dict[str, tuple[int, int]] = {}
    try:
        entries = sorted(os.listdir(folder))
    except OSError as e:
        raise ShardError(f"{folder}: cannot list ({e.strerror}); expected the --out folder of a sharded run") from None
    for entry in entries:
        m = _SHARD.match(entry)
        if m and os.path.isdir(os.path.join(folder, entry)):
            found[entry] = (int(m.group(1)), int(m.group(2)))
    if not found:
        raise ShardError(f"{folder}: no shard-K-of-N folders; expected the --out folder of a sharded run")
    counts = sorted({n for _, n in found.values()})
    if len(counts) != 1:
        raise ShardError(f"{folder}: shards of different runs ({', '.join(sorted(found))}); expected one N")
    shards = counts[0]
    missing = sorted(set(range(shards)) - {k for k, _ in found.values()})
    if missing:
        raise ShardError(f"{folder}: shard(s) {', '.join(map(str, missing))} of {shards} missing (expected "
                         + ", ".join(os.path.basename(shard_dir(folder, k, shards)) for k in missing) + ")")
    return {k: os.path.join(folder, e) for e, (k, _) in found.items()}


def check_manifests(paths: dict[int, str]) -> list[dict]:
    """The manifests of a complete set of shards, in shard order; ShardError naming the first field
    in which a shard's run differs from shard 0's."""
    mans = [_read_manifest(paths[k]) for k in sorted(paths)]
    first = mans[0]
    for k, man in enumerate(mans):
        if man["shard"] != k or man["shards"] != len(mans):
            raise ShardError(f"{paths[k]}: its manifest says shard {man['shard']} of {man['shards']}; expected "
                             f"{k} of {len(mans)} as the folder name says")
        if man["total"] != first["total"]:
            raise ShardError(f"{paths[k]}: the input has {man['total']} sentences but {first['total']} in "
                             f"{paths[0]}: shards of different inputs")
        if sorted(man["files"]) != sorted(first["files"]):
            extra = sorted(set(man["files"]) ^ set(first["files"]))
            raise ShardError(f"{paths[k]}: writes other settings than {paths[0]} (differing files: "
                             f"{', '.join(extra[:5])}); expected the same methods, layers and shifts")
        diff = differing(first.get("signature") or {}, man.get("signature") or {})
        if diff:
            raise ShardError(f"{paths[k]}: made by another run than {paths[0]}: {', '.join(diff)} differ"
                             f" (e.g. {diff[0]}: {_get(man, diff[0])!r} vs {_get(first, diff[0])!r})")
    return mans


def _get(man: dict, dotted: str):
    v = man.get("signature") or {}
    for part in dotted.split("."):
        v = v.get(part) if isinstance(v, dict) else None
    return v


def merge(folder: str, overwrite: bool = False) -> tuple[int, int, list[str]]:
    """Join every ``shard-K-of-N`` of ``folder`` into ``folder/merged/``; returns (shards, sentences,
    file names). Everything is checked while the files are written to a temporary folder, which is
    published only when every sentence of every file is there exactly once: a missing, extra,
    duplicated or overlapping shard, or shards of different runs, raise ShardError and nothing is
    published."""
    paths = find_shards(folder)
    mans = check_manifests(paths)
    total, names = mans[0]["total"], sorted(mans[0]["files"])
    dest = merged_dir(folder)
    clean_stale(dest)
    try:
        with publishing(dest, overwrite) as tmp:
            for name in names:
                _merge_file(paths, name, total, os.path.join(tmp, name))
            write_manifest(tmp, {"shards": len(paths), "sentences": total, "files": names,
                                 "signature": mans[0].get("signature") or {}})
    except OutputExistsError as e:
        raise ShardError(str(e)) from None
    return len(paths), total, names


def _merge_file(paths: dict[int, str], name: str, total: int, out: str) -> None:
    """Stream the shards' ``name`` files into ``out`` by ascending id (a k-way merge)."""
    handles = []
    try:
        streams = []
        for k in sorted(paths):
            p = os.path.join(paths[k], name)
            try:
                f = open(p, encoding="utf-8", newline="\n")
            except OSError as e:
                raise ShardError(f"{p}: listed in the manifest but unreadable ({e.strerror})") from None
            handles.append(f)
            streams.append(((i, k, payload, n) for i, payload, n in _rows(p, f)))
        expected = 0
        with open(out, "w", encoding="utf-8", newline="\n") as w:
            for i, k, payload, n in heapq.merge(*streams):
                if i != expected:
                    where = os.path.join(paths[k], name)
                    if i < expected:
                        raise ShardError(f"{where}:{n}: sentence {i} is in another shard too; expected each "
                                         "sentence in one shard")
                    raise ShardError(f"{name}: sentence {expected} is in no shard (the next is {i} in {where}:{n})")
                if i >= total:
                    raise ShardError(f"{os.path.join(paths[k], name)}:{n}: sentence {i}; the input has {total}")
                w.write(payload + "\n")
                expected += 1
        if expected != total:
            raise ShardError(f"{name}: the shards hold {expected} of {total} sentences (missing from {expected} on)")
    finally:
        for f in handles:
            f.close()


def merge_when_complete(folder: str) -> str | None:
    """Under a launcher (``--shard auto``): the process that finds every shard present merges (one of
    them, under a lock); returns the merged folder, or None while shards are missing or another process
    merges."""
    from .outputs import lock

    try:
        find_shards(folder)
    except ShardError:
        return None  # the others are still running: the last to finish merges
    with lock(folder) as mine:
        if not mine or os.path.exists(merged_dir(folder)):
            return None
        merge(folder)
    return merged_dir(folder)
