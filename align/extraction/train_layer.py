"""Training an alignment layer on a frozen model's own alignments (torch; what ``align-train`` runs).

The teacher is word links of the training corpus that the model (with its reverse model: both directions
combined) wrote itself, never gold. Each target word's links become a distribution over the source tokens
(each linked source word an equal share, split evenly over its pieces) at the decoder step the layer reads the
word at (``awi``: where the word is the decoder's input); a target word without links adds nothing. The loss is
the cross-entropy of the layer's distribution against it, averaged over the rows that have links (Shift-AET's
objective, Chen et al. 2020).

Batches are pairs of similar length; their order is shuffled per epoch from a seed, so a run resumed from a
checkpoint sees exactly the batches the uninterrupted run would have.
"""

from __future__ import annotations

import errno
import fcntl
import os
import pickle
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import IO, Any

import numpy as np
import torch

from ..attribution.learned import AlignmentHead, HeadShape, query_states
from ..io.atomic import write_text_atomic
from .adapters import Batch
from .aligner import Encoded
from .engine import Recorder, collate

ROW_OFFSET = {"awo": 0, "awi": 1}
"""Decoder step of target token k: k + offset (:func:`align.links.rows.select_rows`)."""


class TrainingLockedError(RuntimeError):
    """Another training writes into the same folder."""


def lock_folder(folder: str) -> IO[str]:
    """Hold ``folder/train/lock`` for this process (released when it exits, however it exits); a second
    training into the same folder gets TrainingLockedError."""
    path = os.path.join(folder, "train", "lock")
    while True:
        os.makedirs(os.path.join(folder, "train"), exist_ok=True)
        f = open(path, "a+", encoding="utf-8")
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            f.close()
            if e.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise  # not "held by another": a file system without locks, say; an OSError of its own
            raise TrainingLockedError(
                f"{folder}: another align-train is writing here (train/lock is held); wait for it or give another --out"
            ) from None
        try:
            same = os.fstat(f.fileno()).st_ino == os.stat(path).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        f.close()  # the file was removed (a failed run's clean-up) after we opened it: lock the one at the path now
    f.seek(0)
    f.truncate()
    f.write(f"{os.getpid()}\n")
    f.flush()
    return f


def target_rows(
    src: Encoded, tgt: Encoded, links: Sequence[tuple[int, int]], shift: str = "awi"
) -> tuple[np.ndarray, np.ndarray]:
    """The teacher's distributions of one pair: ``(rows, dist)`` with ``rows`` (R,) the decoder steps that have
    links and ``dist`` (R, S) over source tokens, each row summing to 1. Links are 0-based ``(src_word,
    tgt_word)``; a link to a word the encoding dropped (truncation) is left out."""
    src_tokens: dict[int, np.ndarray] = {}
    for w in np.unique(src.words[src.words >= 0]):
        src_tokens[int(w)] = np.flatnonzero(src.words == w)
    by_tgt: dict[int, list[int]] = {}
    for s, t in sorted(set(links)):  # a link given twice counts once
        if s in src_tokens:
            by_tgt.setdefault(t, []).append(s)
    rows, dist = [], []
    offset = ROW_OFFSET[shift]
    for t, ss in sorted(by_tgt.items()):
        toks = np.flatnonzero(tgt.words == t)
        if not len(toks):
            continue
        row = np.zeros(len(src.ids), dtype=np.float32)
        for s in ss:
            row[src_tokens[s]] += 1.0 / (len(ss) * len(src_tokens[s]))
        for k in toks:
            rows.append(int(k) + offset)
            dist.append(row)
    if not rows:
        return np.zeros(0, dtype=np.int64), np.zeros((0, len(src.ids)), dtype=np.float32)
    return np.asarray(rows, dtype=np.int64), np.stack(dist)


@dataclass(frozen=True)
class Example:
    """One training pair: source ids, target labels, the decoder steps with teacher links (R,), and the teacher's
    distributions over source tokens kept sparse (a pair's (R, S) rows hold a few nonzeros each: a corpus of 100k
    pairs would otherwise hold hundreds of MB): ``at`` (N,) the row, ``cols`` (N,) the source token, ``vals`` (N,)
    the weight of each nonzero."""

    src: list[int]
    labels: list[int]
    rows: np.ndarray
    at: np.ndarray
    cols: np.ndarray
    vals: np.ndarray

    @classmethod
    def of(cls, src: list[int], labels: list[int], rows: np.ndarray, dist: np.ndarray) -> Example:
        """From :func:`target_rows`' ``(rows (R,), dist (R, S))``."""
        at, cols = np.nonzero(dist)
        return cls(src, labels, rows, at.astype(np.int32), cols.astype(np.int32), dist[at, cols].astype(np.float32))

    def dense(self, width: int) -> np.ndarray:
        """(R, width) the teacher's distributions, zero beyond the pair's source tokens."""
        out = np.zeros((len(self.rows), width), dtype=np.float32)
        out[self.at, self.cols] = self.vals
        return out


def batches(examples: Sequence[Example], batch_size: int) -> list[list[int]]:
    """Indices of pairs of similar length, ``batch_size`` a batch (pairs without teacher rows left out)."""
    order = sorted(
        (i for i, e in enumerate(examples) if len(e.rows)),
        key=lambda i: (len(examples[i].src), len(examples[i].labels)),
    )
    return [order[b : b + batch_size] for b in range(0, len(order), batch_size)]


def epoch_order(n_batches: int, epoch: int, seed: int) -> list[int]:
    """The batches' order in ``epoch`` (0-based): a shuffle fixed by ``seed`` and the epoch."""
    order = list(range(n_batches))
    random.Random(seed * 1_000_003 + epoch).shuffle(order)
    return order


def schedule(n_batches: int, epochs: int, seed: int) -> Iterator[tuple[int, int]]:
    """``(step, batch index)`` of the whole run, step 1-based."""
    step = 0
    for epoch in range(epochs):
        for b in epoch_order(n_batches, epoch, seed):
            step += 1
            yield step, b


def batch_loss(
    model: Any, adapter: Any, head: AlignmentHead, examples: Sequence[Example], pad: int
) -> tuple[torch.Tensor, int]:
    """Mean cross-entropy of the head against the teacher rows of one batch, and the number of rows; the frozen
    model runs without gradients, the head with."""
    device = next(head.parameters()).device
    src_ids, src_mask = collate([e.src for e in examples], pad, device)
    lab, tgt_mask = collate([e.labels for e in examples], pad, device)
    with torch.no_grad(), Recorder(model, adapter) as rec:
        adapter.forward(model, Batch(src_ids, src_mask, lab, tgt_mask))
        inputs, layer = rec.layer_inputs(head.layer), rec.layer(head.layer)
        q, k = query_states(inputs, layer).detach(), inputs.x.detach()
    logp = head.log_probs(q, k, src_mask)  # (B, T, S)
    S = logp.shape[-1]
    b_idx = np.concatenate([np.full(len(e.rows), i) for i, e in enumerate(examples)])
    r_idx = np.concatenate([e.rows for e in examples])
    target = np.concatenate([e.dense(S) for e in examples])  # (R, S), built per batch only
    rows = logp[torch.as_tensor(b_idx, device=device), torch.as_tensor(r_idx, device=device)]  # (R, S)
    t = torch.as_tensor(target, device=device)
    loss = -(rows * t).sum() / max(len(r_idx), 1)
    return loss, len(r_idx)


@dataclass
class TrainState:
    """Where a training stands: the head, its optimizer, the next step, and the losses logged so far."""

    head: AlignmentHead
    optimizer: torch.optim.Optimizer
    step: int = 0
    losses: list[tuple[int, float]] | None = None
    running: float | None = None  # the loss's moving average (checkpointed: a resumed run logs what the whole one does)


def new_state(shape: HeadShape, attn: Any, lr: float, device: Any) -> TrainState:
    """A head initialised from the model's cross-attention at its layer (``attn``: the attention module), Adam."""
    head = AlignmentHead(shape).init_from(attn).to(device)
    return TrainState(head, torch.optim.Adam(head.parameters(), lr=lr), 0, [])


def save_checkpoint(folder: str, state: TrainState, fingerprint: str) -> None:
    """``folder/train/checkpoint_last.pt`` (head, Adam's moments, step, losses, the run's fingerprint), atomically;
    and the head alone as ``folder/train/step-N.safetensors`` for an AER curve."""
    from safetensors.torch import save_file

    train = os.path.join(folder, "train")
    os.makedirs(train, exist_ok=True)
    tmp = os.path.join(train, "checkpoint_last.pt.tmp")
    torch.save(
        {
            "head": state.head.state_dict(),
            "optimizer": state.optimizer.state_dict(),
            "step": state.step,
            "losses": [list(x) for x in state.losses or []],
            "running": state.running,
            "fingerprint": fingerprint,
        },
        tmp,
    )
    with open(tmp, "rb") as f:
        os.fsync(f.fileno())  # on disk before it replaces the last good one: a crash leaves one or the other whole
    os.replace(tmp, os.path.join(train, "checkpoint_last.pt"))
    snap = os.path.join(train, f"step-{state.step}.safetensors")
    save_file({k: v.detach().float().contiguous().cpu() for k, v in state.head.state_dict().items()}, snap + ".tmp")
    os.replace(snap + ".tmp", snap)
    write_text_atomic(os.path.join(train, "last_step.txt"), f"{state.step}\n")


def load_checkpoint(folder: str, state: TrainState, fingerprint: str, discard_other: bool = False) -> bool:
    """Resume ``state`` from ``folder/train/checkpoint_last.pt`` when there is one; a checkpoint of another run
    (another model, corpus, teacher or hyper-parameters) is ValueError, or with ``discard_other`` removed with its
    step snapshots (a new run starts). True when resumed."""
    train = os.path.join(folder, "train")
    path = os.path.join(train, "checkpoint_last.pt")
    if not os.path.isfile(path):
        return False
    try:
        ck = torch.load(path, map_location="cpu", weights_only=True)
    except (EOFError, RuntimeError, OSError, pickle.UnpicklingError) as e:
        if not discard_other:
            raise ValueError(
                f"{path}: unreadable ({type(e).__name__}: cut short by a crash?); --overwrite starts the training again"
            ) from None
        ck = {}  # removed below with its step snapshots, as a checkpoint of another run
    if ck.get("fingerprint") != fingerprint:
        if not discard_other:
            raise ValueError(
                f"{path}: a checkpoint of another training (model, corpus, teacher or settings differ); "
                "give another --out, or --overwrite to start again"
            )
        for name in os.listdir(train):
            if name.startswith("step-") or name in ("checkpoint_last.pt", "last_step.txt"):
                os.remove(os.path.join(train, name))
        return False
    state.head.load_state_dict(ck["head"])
    state.optimizer.load_state_dict(ck["optimizer"])
    state.step = int(ck["step"])
    state.losses = [(int(a), float(b)) for a, b in ck.get("losses", [])]
    state.running = None if ck.get("running") is None else float(ck["running"])
    return True


def train_head(
    aligner: Any,
    examples: Sequence[Example],
    folder: str,
    state: TrainState,
    fingerprint: str,
    epochs: int,
    batch_size: int,
    seed: int,
    checkpoint_every: int,
    bar: Any = None,
) -> TrainState:
    """Train ``state.head`` on ``examples`` from ``state.step`` on (steps before it, done by an earlier run, are
    skipped in the same order), a checkpoint every ``checkpoint_every`` steps and at the end; ``bar``: a tqdm bar."""
    plan = batches(examples, batch_size)
    state.head.train()
    aligner.model.eval()
    running = state.running
    for step, b in schedule(len(plan), epochs, seed):
        if step <= state.step:
            continue
        loss, _ = batch_loss(aligner.model, aligner.adapter, state.head, [examples[i] for i in plan[b]], aligner.pad)
        state.optimizer.zero_grad()
        loss.backward()
        state.optimizer.step()
        state.step = step
        value = loss.detach().item()
        running = state.running = value if running is None else 0.98 * running + 0.02 * value
        if step % 50 == 0 or step == 1:
            state.losses = (state.losses or []) + [(step, round(running, 5))]
        if bar is not None:
            bar.update(1)
            bar.set_postfix(loss=f"{running:.3f}")
        if step % checkpoint_every == 0:
            save_checkpoint(folder, state, fingerprint)
    if running is not None and (state.losses or [(0, 0.0)])[-1][0] != state.step:
        state.losses = (state.losses or []) + [(state.step, round(running, 5))]
    if state.step and state.step % checkpoint_every:
        save_checkpoint(folder, state, fingerprint)
    state.head.eval()
    return state


def n_steps(examples: Sequence[Example], batch_size: int, epochs: int) -> int:
    """Steps of a whole run."""
    return len(batches(examples, batch_size)) * epochs
