"""The test-set registry (align.gold.registry): every entry's fields typed and filled in, entries built
with keyword arguments only, unknown names refused with the valid ones listed."""

import dataclasses
import re
import typing

import pytest

from align.gold import registry, testsets
from align.gold.fixes import FIXES
from align.gold.layouts import LAYOUTS
from align.gold.registry import TESTSETS, TestSet
from align.io.formats import FORMATS

HINTS = typing.get_type_hints(TestSet)
FIELDS = [f.name for f in dataclasses.fields(TestSet)]
# text fields that may not be empty (defects and fixes may be (): nothing known, nothing to repair)
REQUIRED_TEXT = ["name", "title", "folder", "gold", "gold_format", "licence", "source", "citation"]
FILES_OF_LAYOUT = {"pairs": 1, "sides": 2, "wpt": 2}


def conforms(value, hint) -> bool:
    """``value`` is of type ``hint`` (str, int, bool, tuple[str, str], tuple[str, ...], dict[str, str])."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is tuple:
        if not isinstance(value, tuple):
            return False
        if len(args) == 2 and args[1] is Ellipsis:
            return all(conforms(v, args[0]) for v in value)
        return len(value) == len(args) and all(conforms(v, a) for v, a in zip(value, args))
    if origin is dict:
        return isinstance(value, dict) and all(conforms(k, args[0]) and conforms(v, args[1]) for k, v in value.items())
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, hint)


def test_conforms_tells_the_types_apart():
    assert conforms(("en", "fr"), tuple[str, str]) and not conforms(("en",), tuple[str, str])
    assert (
        conforms((), tuple[str, ...])
        and not conforms(("a", 1), tuple[str, ...])
        and not conforms(["a"], tuple[str, ...])
    )
    assert conforms({"a": "b"}, dict[str, str]) and not conforms({"a": 1}, dict[str, str])
    assert conforms(3, int) and not conforms(True, int) and conforms(True, bool) and not conforms(1, bool)


def test_the_registry_has_the_ten_sets_in_order():
    assert registry.names() == [
        "rwth", "hansards", "wpt03", "kftt", "tsinghua", "denero", "pcedt", "czenali", "wpt05", "inesc",
    ]  # fmt: skip
    assert len(FIELDS) == 19


@pytest.mark.parametrize("name", list(TESTSETS))
def test_every_field_is_typed_and_filled_in(name):
    t = TESTSETS[name]
    assert t.name == name
    for f in FIELDS:
        assert conforms(getattr(t, f), HINTS[f]), f"{name}.{f} = {getattr(t, f)!r} is not {HINTS[f]}"
    for f in REQUIRED_TEXT:
        assert getattr(t, f).strip(), f"{name}.{f} is empty"
    assert all(t.langs) and t.langs[0] != t.langs[1] and re.fullmatch(r"[a-z]{2}-[a-z]{2}", t.pair)
    assert t.pairs > 0 and t.sure > 0 and t.possible >= 0
    assert all(d.strip() for d in t.defects)


@pytest.mark.parametrize("name", list(TESTSETS))
def test_every_entry_names_files_it_lists_and_things_that_exist(name):
    t = TESTSETS[name]
    assert t.files and all(re.fullmatch(r"[0-9a-f]{64}", sha) for sha in t.files.values())
    layout, *text_files = t.text
    assert layout in LAYOUTS and len(text_files) == FILES_OF_LAYOUT[layout]
    assert set(text_files) | {t.gold} == set(t.files)  # every file is read, and every file read is checked
    assert t.gold_format in FORMATS and t.gold_base in (0, 1)
    assert all(fix in FIXES for fix in t.fixes)


def test_names_and_folders_are_unique():
    assert len({t.folder for t in TESTSETS.values()}) == len(TESTSETS)


def _fields_of(t: TestSet) -> dict:
    return {f: getattr(t, f) for f in FIELDS}


def test_an_entry_is_built_with_every_field_named():
    hansards = TESTSETS["hansards"]
    assert TestSet(**_fields_of(hansards)) == hansards
    with pytest.raises(TypeError, match="positional"):
        TestSet(*_fields_of(hansards).values())
    for missing in ("defects", "fixes", "licence"):
        fields = _fields_of(hansards)
        del fields[missing]
        with pytest.raises(TypeError, match=missing):
            TestSet(**fields)


def test_an_unknown_name_lists_the_valid_ones():
    with pytest.raises(
        registry.UnknownTestSetError, match=f"unknown test set 'hansard'; valid: {', '.join(TESTSETS)}$"
    ):
        registry.get("hansard")
    assert issubclass(registry.UnknownTestSetError, registry.TestSetError)
    assert issubclass(registry.TestSetError, ValueError)


def test_loading_re_exports_the_registry():
    for name in ("TESTSETS", "TestSet", "TestSetError", "UnknownTestSetError", "names", "get"):
        assert getattr(testsets, name) is getattr(registry, name), name
    assert testsets.FIXES is FIXES
    assert all(hasattr(testsets, name) for name in testsets.__all__)


def test_the_registry_file_is_checked_on_load(tmp_path):
    import json

    from align.gold.registry import REGISTRY_FILE, TestSetError, read_registry

    data = json.load(open(REGISTRY_FILE, encoding="utf-8"))
    assert list(read_registry()) == [e["name"] for e in data["testsets"]]
    bad = dict(data, testsets=[{k: v for k, v in data["testsets"][0].items() if k != "gold_base"}])
    path = tmp_path / "registry.json"
    path.write_text(json.dumps(bad), encoding="utf-8")
    with pytest.raises(TestSetError, match=r"entry 1 \(rwth\): fields \['gold_base'\] missing or unknown"):
        read_registry(str(path))
    bad = dict(data, testsets=[dict(data["testsets"][0], pairs="508")])
    path.write_text(json.dumps(bad), encoding="utf-8")
    with pytest.raises(TestSetError, match="pairs .508. is not an int"):
        read_registry(str(path))
    path.write_text(json.dumps(dict(data, version=2)), encoding="utf-8")
    with pytest.raises(TestSetError, match="expected a norm-align/testsets file of version 1"):
        read_registry(str(path))
