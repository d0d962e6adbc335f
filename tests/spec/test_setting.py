"""align.spec.setting: the one parser and the one spelling of settings, blends and their files."""

import pytest

from align.spec.setting import Blend, Setting, combined_file, is_blend, parse, reverse_file


def test_setting_names_round_trip():
    s = Setting.parse("attn-res-ln-ff-awo-layer10.align")  # a method name with hyphens
    assert s == Setting("attn-res-ln-ff", "awo", 10) and s.file == "attn-res-ln-ff-awo-layer10.align"
    h = Setting.parse("norm-head-awi-layer2-head3")
    assert (h.method, h.shift, h.layer, h.head) == ("norm-head", "awi", 2, 3) and h.name == "norm-head-awi-layer2-head3"
    assert Setting.parse("norm-head-best-awo-layer0", any_method=True).method == "norm-head-best"
    assert parse("norm-awi-layer0") == Setting("norm", "awi", 0)


@pytest.mark.parametrize(
    "bad", ["norm-layer2.align", "norm-awx-layer1", "norm-awo-layerX", "x.align", "a-awi-layer0+b"]
)
def test_setting_rejects(bad):
    with pytest.raises(ValueError, match="is not a setting; expected METHOD-SHIFT-layerN"):
        Setting.parse(bad)


def test_blend_names_round_trip():
    b = Blend.parse("attn-res-ln-awi-layer2+norm-awo-layer0.align")
    assert b.parts == (Setting("attn-res-ln", "awi", 2), Setting("norm", "awo", 0))
    assert b.file == "attn-res-ln-awi-layer2+norm-awo-layer0.align"
    assert Blend.parse("alti-awi-layer0+attn-awo-layer2+norm-awi-layer1").parts[2] == Setting("norm", "awi", 1)
    assert Blend.parse("a-awi-layer0+b-awo-layer1").key() == Blend.parse("b-awo-layer1+a-awi-layer0").key()
    assert is_blend("a-awi-layer0+b-awo-layer1.align") and not is_blend("norm-awi-layer0.align")
    assert isinstance(parse("a-awi-layer0+b-awo-layer1"), Blend)


@pytest.mark.parametrize(
    "name, message",
    [
        ("norm-awi-layer0", "two or more different settings"),
        ("norm-awi-layer0+norm-awi-layer0", "two or more different settings"),
        ("norm-awi-layer0+attn", "'attn' is not a setting; expected METHOD-SHIFT-layerN"),
        ("norm-awi-layer0+attn-xyz-layer1", "SHIFT one of awo, awi"),
        ("norm-awi-layer0+attn-awo-layer1-head2", "is one head's setting; a blend averages layer-level"),
        ("norm-awi-layer0+", "'' is not a setting"),
    ],
)
def test_bad_blend_names_say_what_was_expected(name, message):
    with pytest.raises(ValueError, match=message):
        Blend.parse(name)


def test_files_of_a_setting():
    assert reverse_file("norm-awi-layer0.align") == "norm-awi-layer0.reverse.align"
    assert reverse_file("a-awi-layer0+b-awo-layer1") == "a-awi-layer0+b-awo-layer1.reverse.align"
    assert combined_file("norm-awi-layer0.align", "gmean:threshold") == "norm-awi-layer0.gmean-threshold.align"
    assert combined_file("norm-awi-layer0", "grow-diag-final-and") == "norm-awi-layer0.grow-diag-final-and.align"
