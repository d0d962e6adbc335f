"""Training an alignment layer (align.extraction.train_layer): the teacher's rows by hand, one training at a time
per folder, and a run resumed from its checkpoint ending exactly where the uninterrupted run ends."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("safetensors")

from align.attribution.learned import HeadShape  # noqa: E402
from align.extraction.aligner import Encoded  # noqa: E402
from align.extraction.train_layer import (  # noqa: E402
    Example,
    TrainingLockedError,
    batches,
    load_checkpoint,
    lock_folder,
    new_state,
    schedule,
    target_rows,
    train_head,
)

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_target_rows_by_hand():
    # source tokens: word 0 in two pieces, word 1, EOS; target labels: word 0, word 1 in two pieces, EOS
    src = Encoded([5, 6, 7, 2], np.array([0, 0, 1, -1]))
    tgt = Encoded([8, 9, 10, 2], np.array([0, 1, 1]))
    rows, dist = target_rows(src, tgt, [(0, 0), (1, 0), (1, 1)], "awi")
    # target word 0 (label 0, read at step 1): words 0 and 1 half each, word 0's half over its two pieces;
    # target word 1 (labels 1 and 2, steps 2 and 3): all on source word 1
    assert rows.tolist() == [1, 2, 3]
    np.testing.assert_allclose(dist, [[0.25, 0.25, 0.5, 0], [0, 0, 1, 0], [0, 0, 1, 0]])
    rows, _ = target_rows(src, tgt, [(0, 0)], "awo")
    assert rows.tolist() == [0]


def test_examples_keep_the_teacher_rows_sparse_and_give_them_back():
    # the distributions of test_target_rows_by_hand: 5 nonzeros of 12 cells, given back densely at any width
    src = Encoded([5, 6, 7, 2], np.array([0, 0, 1, -1]))
    tgt = Encoded([8, 9, 10, 2], np.array([0, 1, 1]))
    rows, dist = target_rows(src, tgt, [(0, 0), (1, 0), (1, 1)], "awi")
    e = Example.of(src.ids, tgt.ids, rows, dist)
    assert len(e.vals) == 5 and e.at.tolist() == [0, 0, 0, 1, 2] and e.cols.tolist() == [0, 1, 2, 2, 2]
    np.testing.assert_array_equal(e.dense(4), dist)
    np.testing.assert_array_equal(e.dense(6)[:, 4:], np.zeros((3, 2)))


def test_links_to_words_a_truncation_dropped_add_nothing():
    src = Encoded([5, 2], np.array([0, -1]), dropped=1)
    tgt = Encoded([8, 2], np.array([0]))
    rows, dist = target_rows(src, tgt, [(1, 0), (0, 1)], "awi")
    assert rows.tolist() == [] and dist.shape == (0, 2)


def test_the_schedule_is_fixed_by_its_seed():
    a = list(schedule(5, 2, seed=1))
    assert a == list(schedule(5, 2, seed=1)) and [s for s, _ in a] == list(range(1, 11))
    assert sorted(b for _, b in a[:5]) == list(range(5)) and a != list(schedule(5, 2, seed=2))


def test_batches_group_similar_lengths_and_skip_pairs_without_rows():
    ex = [
        Example.of([1] * n, [1] * n, np.arange(1 if n != 3 else 0), np.zeros((1 if n != 3 else 0, n)))
        for n in (5, 2, 3, 4)
    ]
    assert batches(ex, 2) == [[1, 3], [0]]


def test_a_second_training_into_one_folder_is_refused(tmp_path):
    held = lock_folder(str(tmp_path))
    try:
        with pytest.raises(TrainingLockedError, match="another align-train"):
            lock_folder(str(tmp_path))
    finally:
        held.close()
    lock_folder(str(tmp_path)).close()  # free again once the first one ends


def test_a_lock_file_removed_while_waiting_is_not_trusted(tmp_path, monkeypatch):
    # a failed run removes its empty folders and lock after releasing it; a run that opened the old file meanwhile
    # must lock the file at the path (a new one), or two runs would each hold "the" lock
    import os

    import align.extraction.train_layer as tl

    real_flock, removed = tl.fcntl.flock, []

    def flock_after_removal(f, how):
        if not removed:  # the file just opened is unlinked before this run locks it
            os.remove(tmp_path / "train" / "lock")
            removed.append(True)
        return real_flock(f, how)

    monkeypatch.setattr(tl.fcntl, "flock", flock_after_removal)
    held = lock_folder(str(tmp_path))
    try:
        assert os.fstat(held.fileno()).st_ino == os.stat(tmp_path / "train" / "lock").st_ino
        monkeypatch.setattr(tl.fcntl, "flock", real_flock)
        with pytest.raises(TrainingLockedError):
            lock_folder(str(tmp_path))
    finally:
        held.close()


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    pytest.importorskip("transformers")
    pytest.importorskip("sentencepiece")
    from hf_tiny import tiny_marian

    from hf_plugins.hub import HFAligner

    model, tok = tiny_marian(str(tmp_path_factory.mktemp("tok")), d_model=16, heads=2, ffn=32, seed=1)
    al = HFAligner(model, tok)
    pairs = [("the house is small .", "la maison est petite ."), ("the house .", "la maison ."),
             ("it is small .", "elle est petite ."), ("the small house .", "la petite maison .")] * 3  # fmt: skip
    examples = []
    for k, (s, t) in enumerate(pairs):
        se, te = al.encode_pair(s.split(), t.split(), k)
        n = min(len(s.split()), len(t.split()))
        rows, dist = target_rows(se, te, [(i, i) for i in range(n)], "awi")
        examples.append(Example.of(se.ids, te.ids, rows, dist))
    return al, examples


def _fresh(al):
    sites = al.adapter.decoder_layers(al.model)
    torch.manual_seed(0)
    return new_state(HeadShape(1, 16, 2), sites[1].cross.attn, 1e-2, "cpu")


def test_a_resumed_run_ends_where_the_uninterrupted_one_does(tiny, tmp_path, monkeypatch):
    al, ex = tiny
    straight = train_head(al, ex, str(tmp_path / "a"), _fresh(al), "fp", 2, 4, 1, 2)
    assert straight.step == 6

    import align.extraction.train_layer as tl

    real = tl.save_checkpoint
    calls = []

    def stop_after_first(folder, state, fp):
        real(folder, state, fp)
        calls.append(state.step)
        raise KeyboardInterrupt  # the machine went away right after the first checkpoint

    monkeypatch.setattr(tl, "save_checkpoint", stop_after_first)
    with pytest.raises(KeyboardInterrupt):
        train_head(al, ex, str(tmp_path / "b"), _fresh(al), "fp", 2, 4, 1, 2)
    monkeypatch.setattr(tl, "save_checkpoint", real)
    assert calls == [2]
    state = _fresh(al)
    assert load_checkpoint(str(tmp_path / "b"), state, "fp") and state.step == 2
    resumed = train_head(al, ex, str(tmp_path / "b"), state, "fp", 2, 4, 1, 2)
    for k, v in straight.head.state_dict().items():
        torch.testing.assert_close(resumed.head.state_dict()[k], v, rtol=0, atol=1e-6)
    assert (tmp_path / "b" / "train" / "step-6.safetensors").exists()


def test_training_lowers_the_loss_against_the_teacher(tiny, tmp_path):
    from align.extraction.train_layer import batch_loss

    al, ex = tiny
    state = _fresh(al)
    before = batch_loss(al.model, al.adapter, state.head, ex, al.pad)[0].item()
    train_head(al, ex, str(tmp_path), state, "fp", 20, 4, 1, 100)
    after = batch_loss(al.model, al.adapter, state.head, ex, al.pad)[0].item()
    assert after < 0.8 * before, (before, after)


def test_a_checkpoint_of_another_run_is_refused(tiny, tmp_path):
    al, ex = tiny
    train_head(al, ex[:4], str(tmp_path), _fresh(al), "one run", 1, 4, 1, 1)
    with pytest.raises(ValueError, match="another training"):
        load_checkpoint(str(tmp_path), _fresh(al), "another run")


@pytest.mark.parametrize("content", [b"", b"PK\x03\x04 cut short"])
def test_an_unreadable_checkpoint_is_one_line_or_with_overwrite_a_fresh_start(tiny, tmp_path, content):
    al, _ = tiny
    (tmp_path / "train").mkdir()
    (tmp_path / "train" / "checkpoint_last.pt").write_bytes(content)  # a crash mid-write on a disk without fsync
    (tmp_path / "train" / "step-2.safetensors").write_bytes(b"")
    with pytest.raises(ValueError, match=r"checkpoint_last.pt: unreadable .*--overwrite starts the training again"):
        load_checkpoint(str(tmp_path), _fresh(al), "fp")
    assert not load_checkpoint(str(tmp_path), _fresh(al), "fp", discard_other=True)
    assert (
        not (tmp_path / "train" / "checkpoint_last.pt").exists()
        and not (tmp_path / "train" / "step-2.safetensors").exists()
    )
