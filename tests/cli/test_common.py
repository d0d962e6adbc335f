"""align.cli.common: the number flags' argparse type."""

import argparse

import pytest

from align.cli.common import number_in


@pytest.mark.parametrize(
    "kind, bounds, text, want",
    [
        (int, {"low": 0, "low_open": True}, "3", 3),
        (float, {"low": 0, "high": 1}, "0", 0.0),  # a closed end takes its bound
        (float, {"low": 0, "high": 1}, "1", 1.0),
        (float, {"low": 0, "high": 1, "low_open": True}, "1", 1.0),
    ],
)
def test_numbers_in_range(kind, bounds, text, want):
    assert number_in(kind, **bounds)(text) == want


@pytest.mark.parametrize(
    "kind, bounds, text, message",
    [
        (int, {"low": 0, "low_open": True}, "0", "0: expected a number above 0"),
        (int, {"low": 0, "low_open": True}, "1.5", "1.5: expected an integer"),
        (float, {"low": 0, "high": 1}, "1.2", "1.2: expected a number in [0, 1]"),
        (float, {"low": 0, "high": 1, "low_open": True}, "0", "0: expected a number in (0, 1]"),
        (float, {"low": 0}, "-1", "-1: expected a number at least 0"),
        (float, {"low": 0}, "x", "x: expected a number"),
    ],
)
def test_numbers_out_of_range_name_the_range(kind, bounds, text, message):
    with pytest.raises(argparse.ArgumentTypeError) as e:
        number_in(kind, **bounds)(text)
    assert str(e.value) == message
