"""Which shard a process aligns, from its launcher's environment (standard library only).

``--shard auto`` reads what the launcher sets:
- torchrun and accelerate: ``RANK`` / ``WORLD_SIZE`` (and ``LOCAL_RANK``, the GPU of the process);
- Slurm tasks (``srun``): ``SLURM_PROCID`` / ``SLURM_NTASKS`` (and ``SLURM_LOCALID``);
- Slurm job arrays: ``SLURM_ARRAY_TASK_ID`` / ``SLURM_ARRAY_TASK_COUNT`` (ids counted from
  ``SLURM_ARRAY_TASK_MIN``); with several tasks (or torchrun ranks) per array task, array task a
  and rank r make shard ``a * ranks + r``.

torchrun inside an ``srun`` step is consistent when its world spans the Slurm tasks evenly (rank
r belongs to task ``r // (WORLD_SIZE / SLURM_NTASKS)``); anything else is an error that says what
each launcher set.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass


class LaunchError(ValueError):
    """The environment names no shard, or launchers that disagree."""


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` of ``count`` (0-based), the process's local rank on its node (None when the
    launcher sets none) and which launcher set it."""

    index: int
    count: int
    local_rank: int | None
    launcher: str


def _int(env: Mapping[str, str], name: str) -> int | None:
    v = env.get(name)
    if v is None or v == "":
        return None
    try:
        return int(v)
    except ValueError:
        raise LaunchError(f"{name}={v!r} is not an integer") from None


def _pair(env: Mapping[str, str], rank: str, size: str) -> tuple[int, int] | None:
    r, n = _int(env, rank), _int(env, size)
    if r is None and n is None:
        return None
    if r is None or n is None:
        raise LaunchError(
            f"{rank if r is None else size} is missing while {size if r is None else rank} is set; expected both"
        )
    if n < 1 or not 0 <= r < n:
        raise LaunchError(f"{rank}={r} and {size}={n}: expected 0 <= {rank} < {size}")
    return r, n


def shard_from_env(env: Mapping[str, str] | None = None) -> Shard:
    """The shard of this process, from torchrun / accelerate / Slurm variables; LaunchError if none
    is set or they disagree."""
    env = os.environ if env is None else env
    torch = _pair(env, "RANK", "WORLD_SIZE")
    tasks = _pair(env, "SLURM_PROCID", "SLURM_NTASKS")
    array_id, array_count = _int(env, "SLURM_ARRAY_TASK_ID"), _int(env, "SLURM_ARRAY_TASK_COUNT")
    array = None
    if array_id is not None or array_count is not None:
        if array_id is None or array_count is None:
            raise LaunchError("SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT must both be set for a job array")
        first = _int(env, "SLURM_ARRAY_TASK_MIN") or 0
        if array_count < 1 or not 0 <= array_id - first < array_count:
            raise LaunchError(
                f"SLURM_ARRAY_TASK_ID={array_id} is not among the {array_count} tasks from SLURM_ARRAY_TASK_MIN={first}"
            )
        array = (array_id - first, array_count)
    if torch is not None and tasks is not None and tasks[1] > 1:
        per_task, rest = divmod(torch[1], tasks[1])
        if rest or per_task < 1 or torch[0] // per_task != tasks[0]:
            raise LaunchError(
                f"the launchers disagree: RANK/WORLD_SIZE say {torch[0]}/{torch[1]} but "
                f"SLURM_PROCID/SLURM_NTASKS say {tasks[0]}/{tasks[1]}; give --shard K/N"
            )
    inner, launcher, local = None, "", None
    if torch is not None:
        inner, launcher, local = torch, "torchrun", _int(env, "LOCAL_RANK")
    elif tasks is not None:
        inner, launcher, local = tasks, "slurm", _int(env, "SLURM_LOCALID")
    if array is not None:
        r, n = inner or (0, 1)
        return Shard(array[0] * n + r, array[1] * n, local, "slurm-array" + (f"+{launcher}" if launcher else ""))
    if inner is None:
        raise LaunchError(
            "--shard auto: no launcher variables found (torchrun/accelerate set RANK and WORLD_SIZE; "
            "Slurm sets SLURM_PROCID and SLURM_NTASKS, or SLURM_ARRAY_TASK_ID and "
            "SLURM_ARRAY_TASK_COUNT); give --shard K/N"
        )
    return Shard(inner[0], inner[1], local, launcher)
