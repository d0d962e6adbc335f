"""eval.experiment: Holm's adjustment by hand."""

from eval.experiment import holm


def test_holm_by_hand():
    # m = 3: sorted raw 0.01, 0.02, 0.04 -> 3 * 0.01 = 0.03, max(0.03, 2 * 0.02) = 0.04,
    # max(0.04, 1 * 0.04) = 0.04; back in input order
    assert holm([0.04, 0.01, 0.02]) == [0.04, 0.03, 0.04]
    assert holm([0.5, 0.6]) == [1.0, 1.0]  # capped at 1
    assert holm([]) == []
