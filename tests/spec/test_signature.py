"""Run signatures (align.spec.signature)."""

import hashlib

from align.spec.signature import differing, file_digest, files_digest, model_key, short


def test_file_digest_is_sha256(tmp_path):
    p = tmp_path / "a"
    p.write_bytes(b"abc" * 1000000)
    assert file_digest(str(p)) == hashlib.sha256(b"abc" * 1000000).hexdigest()


def test_files_digest_depends_on_names_and_contents_not_order(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_text("1")
    b.write_text("2")
    d = files_digest([str(a), str(b)])
    assert d == files_digest([str(b), str(a)])
    b.write_text("3")
    assert files_digest([str(a), str(b)]) != d


def test_differing_names_nested_fields():
    a = {"version": "1", "model": {"sha256": "x"}, "settings": {"level": "word", "layers": [0, 1]}}
    b = {"version": "1", "model": {"sha256": "y"}, "settings": {"level": "word", "layers": [0]}, "extra": 1}
    assert differing(a, b) == ["extra", "model.sha256", "settings.layers"]
    assert differing(a, a) == []


def test_short_form():
    assert (
        short(
            {
                "model": {"revision": "abcdef0123456789", "path": "p"},
                "input": {"lines": 3, "sha256": "ff"},
                "version": "0.2.0",
            }
        )
        == "model:revision=abcdef012345|input:lines=3,sha256=ff|version:0.2.0"
    )


def test_signature_object_keeps_format_1():
    from align.spec.alignspec import AlignSpec
    from align.spec.signature import Signature, identity_fields, spec_settings

    spec = AlignSpec(methods=("norm",), layers=(0,), shifts=("awi",))
    s = spec_settings(spec)
    # format 1: no "blends" key without blends, heads "all" when none chosen
    assert s == {
        "methods": ["norm"],
        "layers": [0],
        "shifts": ["awi"],
        "heads": "all",
        "level": "word",
        "decoder": "argmax",
        "decoder_options": {},
        "specials": "drop",
    }
    assert "heads" not in spec_settings(spec, heads=False)
    blended = AlignSpec(methods=("norm",), layers=(0,), blends=("norm-awi-layer0+norm-awo-layer0.align",))
    assert spec_settings(blended)["blends"] == ["norm-awi-layer0+norm-awo-layer0"]
    one = Signature(model=identity_fields({"sha256": "ab", "path": "/x"}), input={}, settings=s, version="0.2.0")
    assert one.as_dict() == {"version": "0.2.0", "model": {"sha256": "ab"}, "input": {}, "settings": s}
    both = Signature(model={"sha256": "ab"}, input={}, settings=s, version="0.2.0", reverse_model={"sha256": "cd"})
    assert one.differing(both) == ["reverse_model"] and Signature.FORMAT == 1
    assert both.short() == "model:sha256=ab|reverse_model:sha256=cd|input:|version:0.2.0"


def test_model_key_drops_how_a_model_was_asked_for():
    hub = {"hub_id": "org/m", "revision": "c0ffee", "requested": "main"}
    assert model_key(hub) == model_key({**hub, "requested": "c0ffee"}) == {"hub_id": "org/m", "revision": "c0ffee"}
    assert model_key({"path": "/a/m", "sha256": "ab"}) == {"sha256": "ab"} and model_key(None) == {}
