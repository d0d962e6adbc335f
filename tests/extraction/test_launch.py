"""--shard auto: the shard of a process from its launcher's variables (align.extraction.launch)."""

import pytest

from align.extraction.launch import LaunchError, shard_from_env


@pytest.mark.parametrize(
    "env,want",
    [
        ({"RANK": "3", "WORLD_SIZE": "8", "LOCAL_RANK": "3"}, (3, 8, 3, "torchrun")),
        ({"SLURM_PROCID": "1", "SLURM_NTASKS": "4", "SLURM_LOCALID": "1"}, (1, 4, 1, "slurm")),
        ({"SLURM_ARRAY_TASK_ID": "2", "SLURM_ARRAY_TASK_COUNT": "5"}, (2, 5, None, "slurm-array")),
        # arrays counted from SLURM_ARRAY_TASK_MIN (sbatch --array=1-5)
        (
            {"SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_COUNT": "5", "SLURM_ARRAY_TASK_MIN": "1"},
            (2, 5, None, "slurm-array"),
        ),
        # 2 torchrun ranks in each of 3 array tasks: array task 1, rank 1 -> shard 1 * 2 + 1 = 3 of 6
        (
            {
                "SLURM_ARRAY_TASK_ID": "1",
                "SLURM_ARRAY_TASK_COUNT": "3",
                "RANK": "1",
                "WORLD_SIZE": "2",
                "SLURM_PROCID": "0",
                "SLURM_NTASKS": "1",
            },
            (3, 6, None, "slurm-array+torchrun"),
        ),
        # torchrun inside srun with 2 tasks of 4 ranks each: rank 5 is in task 1 -> consistent
        ({"RANK": "5", "WORLD_SIZE": "8", "SLURM_PROCID": "1", "SLURM_NTASKS": "2"}, (5, 8, None, "torchrun")),
        # a plain sbatch job: one task of one
        ({"SLURM_PROCID": "0", "SLURM_NTASKS": "1"}, (0, 1, None, "slurm")),
    ],
)
def test_shard_from_env(env, want):
    s = shard_from_env(env)
    assert (s.index, s.count, s.local_rank, s.launcher) == want


@pytest.mark.parametrize(
    "env,msg",
    [
        ({}, "no launcher variables found"),
        ({"RANK": "1"}, "WORLD_SIZE is missing while RANK is set"),
        ({"RANK": "4", "WORLD_SIZE": "4"}, "expected 0 <= RANK < WORLD_SIZE"),
        ({"RANK": "x", "WORLD_SIZE": "4"}, "RANK='x' is not an integer"),
        ({"RANK": "1", "WORLD_SIZE": "4", "SLURM_PROCID": "1", "SLURM_NTASKS": "3"}, "the launchers disagree"),
        ({"RANK": "1", "WORLD_SIZE": "4", "SLURM_PROCID": "1", "SLURM_NTASKS": "2"}, "the launchers disagree"),
        ({"SLURM_ARRAY_TASK_ID": "1"}, "must both be set"),
        ({"SLURM_ARRAY_TASK_ID": "9", "SLURM_ARRAY_TASK_COUNT": "3"}, "is not among the 3 tasks"),
    ],
)
def test_no_or_disagreeing_launchers_are_errors(env, msg):
    with pytest.raises(LaunchError, match=msg):
        shard_from_env(env)
