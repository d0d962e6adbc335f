"""Run signatures (align.extraction.signature)."""

import hashlib

from align.extraction.signature import differing, file_digest, files_digest, short


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
