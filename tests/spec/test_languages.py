"""align.spec.languages: codes of every toolkit compared, by hand."""

from align.spec.languages import base, compare


def test_codes_of_every_toolkit():
    assert [base(c) for c in ("en", "EN", "eng_Latn", "en_XX", "__en__", "deu", "fra_Latn")] == [
        "en", "en", "en", "en", "en", "de", "fr",
    ]  # fmt: skip
    assert base(None) is None and base("mul") is None and base("ROMANCE") is None and base("gem") is None


def test_compare_says_when_it_cannot_tell():
    assert compare("eng_Latn", "en") is True and compare("fr", "de") is False
    assert compare("zho_Hans", "zho_Hant") is True  # one language (two scripts)
    assert compare("mul", "fr") is None  # many languages: nothing to check
    assert compare("uk", "ukr_Cyrl") is None  # a code this module cannot reduce: not told apart, not refused
    assert compare("ukr_Cyrl", "ukr") is True and compare("xyz", "abc") is False
