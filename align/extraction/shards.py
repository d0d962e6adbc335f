"""Sharded alignment dumps: each rank writes its sentences with global ids; ``align-merge DIR``
joins the shards into one file per setting, in input order, byte-identical to an unsharded run,
and publishes them as the folder ``DIR/merged/`` (standard library only).

A shard is ``DIR/shard-K-of-N/`` holding ``manifest.json`` and one file per setting whose lines are
``ID<TAB>payload`` (0-based global sentence ids, ascending; the payload is the line an unsharded run
writes). The manifest names the shard, the corpus size, the files and the run's signature (model,
input, settings, version: :mod:`align.spec.signature`); shards whose signatures differ are refused, naming
the field. Merging streams: memory holds one line per shard, whatever the corpus size.
"""

from __future__ import annotations

import heapq
import json
import os
import re
import shutil
import time
from collections.abc import Iterator
from typing import IO

from ..io.manifest import MANIFEST, recorded_signature
from ..spec.signature import HOW_ASKED, differing
from .outputs import OutputExistsError, _host, clean_stale, lock, publishing

_SHARD = re.compile(r"^shard-(\d+)-of-(\d+)$")
MERGED = "merged"
MODEL_FIELDS = ("model", "reverse_model")
"""The signature's fields that identify a model (:func:`align.spec.signature.model_key` compares them)."""


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


def shard_manifest(
    shard: int, shards: int, total: int, sentences: int, files: list[str], signature: dict | None
) -> dict:
    """What a shard records about itself and its run."""
    return {
        "shard": shard,
        "shards": shards,
        "total": total,
        "sentences": sentences,
        "files": sorted(files),
        "signature": signature or {},
    }


def write_shard(
    folder: str,
    shard: int,
    shards: int,
    total: int,
    files: dict[str, list[tuple[int, str]]],
    signature: dict | None = None,
    overwrite: bool = False,
) -> str:
    """Write one rank's part: ``files`` maps a setting's file name to ``(global id, payload)`` rows.
    Published with one rename, so a shard is whole or absent (an existing one replaced only with ``overwrite``)."""
    if not 0 <= shard < shards:
        raise ShardError(f"shard {shard} is not in 0..{shards - 1}")
    os.makedirs(folder, exist_ok=True)
    final = shard_dir(folder, shard, shards)
    if os.path.exists(final) and not overwrite:
        raise ShardError(f"{final} exists already: remove it before writing the shard again")
    from .writer import OutputFolder  # the one writer of output folders (it builds on this module's manifests)

    ids: set[int] = set()
    with OutputFolder(final, overwrite, shard=(shard, shards)) as out:
        out.open(files)
        for name, rows in files.items():
            for i, payload in sorted(rows):
                out.write(name, i, payload)
                ids.add(i)
        out.finish(len(ids), signature or {}, total=total)
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
        raise ShardError(
            f"{os.path.join(path, MANIFEST)}: no valid {', '.join(bad)}; expected a shard manifest "
            "written by align-extract or the fairseq plugin"
        )
    if not man["files"]:  # every run writes one file at least: an empty list was edited, or the shard is damaged
        raise ShardError(f"{os.path.join(path, MANIFEST)}: lists no files; expected the files of the run's settings")
    for name in man["files"]:
        check_file_name(name, os.path.join(path, MANIFEST))
    if len(set(man["files"])) != len(man["files"]):
        raise ShardError(f"{os.path.join(path, MANIFEST)}: a file is listed twice; expected each file once")
    return man


MAX_NAME_LENGTH = 200
"""The longest file name a shard manifest lists (align-extract refuses a --blend that would make a longer one)."""
_NAME = re.compile(rf"^[^./\\\x00-\x1f][^/\\\x00-\x1f]{{0,{MAX_NAME_LENGTH - 1}}}$")


def check_file_name(name, where: str) -> str:
    """``name`` if it is a plain file name (no folder part, not hidden, not ``..``); ShardError naming
    ``where`` otherwise: a manifest is input, and its names must never reach outside their folder."""
    if not isinstance(name, str) or not _NAME.match(name) or name == MANIFEST:
        raise ShardError(
            f"{where}: file name {str(name)[:80]!r}; expected a plain file name inside the shard "
            "folder (no '/', '..', hidden or control characters)"
        )
    return name


def _rows(path: str, f: IO[bytes]) -> Iterator[tuple[int, str, int]]:
    """``(id, payload, line)`` of one shard file (read as bytes, decoded line by line so that a bad byte is named
    by its line), ids checked to ascend."""
    last = -1
    for n, raw in enumerate(f, 1):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise ShardError(f"{path}:{n}: bytes {raw[max(0, e.start - 8) : e.end + 8]!r} are not UTF-8") from None
        if not line.endswith("\n"):
            raise ShardError(f"{path}:{n}: the last line has no newline; the shard file is cut short")
        sid, tab, payload = line[:-1].partition("\t")
        if not tab or not (sid.isascii() and sid.isdigit()):  # isdigit alone takes '²', which int() refuses
            raise ShardError(f"{path}:{n}: expected 'ID<TAB>payload'; found {line.rstrip()[:60]!r}")
        i = int(sid)
        if i <= last:
            raise ShardError(
                f"{path}:{n}: sentence {i} after {last}; expected ascending ids"
                + (" (it appears twice)" if i == last else "")
            )
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
        raise ShardError(
            f"{folder}: shard(s) {', '.join(map(str, missing))} of {shards} missing (expected "
            + ", ".join(os.path.basename(shard_dir(folder, k, shards)) for k in missing)
            + ")"
        )
    return {k: os.path.join(folder, e) for e, (k, _) in found.items()}


def check_manifests(paths: dict[int, str]) -> list[dict]:
    """The manifests of a complete set of shards, in shard order; ShardError naming the first field
    in which a shard's run differs from shard 0's."""
    mans = [_read_manifest(paths[k]) for k in sorted(paths)]
    first = mans[0]
    for k, man in enumerate(mans):
        if man["shard"] != k or man["shards"] != len(mans):
            raise ShardError(
                f"{paths[k]}: its manifest says shard {man['shard']} of {man['shards']}; expected "
                f"{k} of {len(mans)} as the folder name says"
            )
        if man["total"] != first["total"]:
            raise ShardError(
                f"{paths[k]}: the input has {man['total']} sentences but {first['total']} in "
                f"{paths[0]}: shards of different inputs"
            )
        diff = differing(first.get("signature") or {}, man.get("signature") or {})
        # how a model was asked for (a Hub branch or the commit it resolves to) does not make another model
        diff = [d for d in diff if d.rsplit(".", 1)[-1] not in HOW_ASKED or d.split(".")[0] not in MODEL_FIELDS]
        if diff:
            raise ShardError(
                f"{paths[k]}: made by another run than {paths[0]}: {', '.join(diff)} differ"
                f" (e.g. {diff[0]}: {_get(man, diff[0])!r} vs {_get(first, diff[0])!r})"
            )
        if sorted(man["files"]) != sorted(first["files"]):
            extra = sorted(set(man["files"]) ^ set(first["files"]))
            raise ShardError(
                f"{paths[k]}: writes other settings than {paths[0]} (differing files: "
                f"{', '.join(extra[:5])}); expected the same methods, layers and shifts"
            )
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
            write_manifest(
                tmp,
                {"shards": len(paths), "sentences": total, "files": names, "signature": mans[0].get("signature") or {}},
            )
    except OutputExistsError as e:
        raise ShardError(str(e)) from None
    return len(paths), total, names


def _tagged(k: int, path: str, f: IO[bytes]) -> Iterator[tuple[int, int, str, int]]:
    """``(id, shard, payload, line)`` rows of shard ``k``'s file (``k`` bound now, not when the rows are read)."""
    for i, payload, n in _rows(path, f):
        yield i, k, payload, n


def _merge_file(paths: dict[int, str], name: str, total: int, out: str) -> None:
    """Stream the shards' ``name`` files into ``out`` by ascending id (a k-way merge)."""
    folder = os.path.dirname(paths[min(paths)]) if paths else "."  # the run's folder, for errors
    handles = []
    try:
        streams = []
        for k in sorted(paths):
            p = os.path.join(paths[k], name)
            try:
                f = open(p, "rb")
            except OSError as e:
                raise ShardError(f"{p}: listed in the manifest but unreadable ({e.strerror})") from None
            handles.append(f)
            streams.append(_tagged(k, p, f))
        expected = 0
        with open(out, "w", encoding="utf-8", newline="\n") as w:
            for i, k, payload, n in heapq.merge(*streams):
                if i != expected:
                    where = os.path.join(paths[k], name)
                    if i < expected:
                        raise ShardError(
                            f"{where}:{n}: sentence {i} is in another shard too; expected each sentence in one shard"
                        )
                    raise ShardError(
                        f"{name} of the shards in {folder}: sentence {expected} is in no shard (the next is {i} in "
                        f"{where}:{n})"
                    )
                if i >= total:
                    raise ShardError(f"{os.path.join(paths[k], name)}:{n}: sentence {i}; the input has {total}")
                w.write(payload + "\n")
                expected += 1
        if expected != total:
            raise ShardError(
                f"{name} of the shards in {folder}: they hold {expected} of {total} sentences (missing from "
                f"{expected} on)"
            )
    finally:
        for f in handles:
            f.close()


def merged_signature(folder: str) -> dict | None:
    """The signature recorded in ``DIR/merged/manifest.json`` (None when there is none to read)."""
    return recorded_signature(merged_dir(folder))


def drop_stale_merged(folder: str, signature: dict) -> bool:
    """Remove ``DIR/merged/`` when it holds another run than ``signature`` (its shards were replaced):
    a reader never takes the old run's files for the new one's. Returns whether it was removed."""
    dest = merged_dir(folder)
    if os.path.islink(dest):  # never moved aside or followed: the merge refuses it in one line
        return False
    if not os.path.isdir(dest) or merged_signature(folder) == signature:
        return False
    # named as a temporary folder of merged/: if this process is killed before the rmtree, the next
    # run's clean_stale removes it, and --overwrite counts it as the tool's own
    aside = os.path.join(folder, f".{MERGED}.tmp~{_host()}~{os.getpid()}~stale")
    try:
        os.rename(dest, aside)  # one rename: readers see the old folder or none
    except OSError:
        return False  # another process moved it first
    shutil.rmtree(aside, ignore_errors=True)
    return True


def merge_when_complete(folder: str, signature: dict | None = None) -> tuple[str | None, str]:
    """Under a launcher (``--shard auto``): the process that finds every shard of its own run
    (``signature``) present merges, under a lock. Returns ``(merged folder, "")`` when ``DIR/merged/``
    holds this run (merged now or by another process), else ``(None, why)``: ``why`` is empty while
    shards are missing or of an older run (those ranks are still running; the last one merges), and
    says what to do when a lock stops the merge. ShardError for shards that can never merge."""
    try:
        paths = find_shards(folder)
    except ShardError:
        return None, ""  # the others are still running: the last to finish merges
    if signature is not None:
        for k in sorted(paths):
            if (_read_manifest(paths[k]).get("signature") or {}) != signature:
                return None, ""  # shard k is still the earlier run's: its rank will merge when it is done
    if signature is not None and merged_signature(folder) == signature:
        return merged_dir(folder), ""
    deadline = time.monotonic() + merge_wait()
    while True:
        with lock(folder) as (mine, why, busy):
            if mine:
                if signature is not None and merged_signature(folder) == signature:
                    return merged_dir(folder), ""  # merged by another process just before
                if signature is None and os.path.exists(merged_dir(folder)):
                    return merged_dir(folder), ""
                merge(folder, overwrite=True)
                return merged_dir(folder), ""
        if signature is not None and merged_signature(folder) == signature:
            return merged_dir(folder), ""  # the lock's owner merged this run
        if not busy or time.monotonic() >= deadline:
            return None, why
        time.sleep(1)  # another process merges now: wait for it, so this rank does not end in a failure


def merge_wait() -> float:
    """Seconds a rank waits for another process's merge lock (``NORM_ALIGN_MERGE_WAIT``, default 600)."""
    try:
        return max(0.0, float(os.environ.get("NORM_ALIGN_MERGE_WAIT", "600")))
    except ValueError:
        return 600.0
