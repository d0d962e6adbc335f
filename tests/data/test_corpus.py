import os

from data.prep.corpus import write_sides


def test_write_sides_writes_one_file_per_side_and_subset(tmp_path):
    out = str(tmp_path / "new" / "c")  # the folder does not exist yet
    write_sides(out, [("", [("a b", "x"), ("c", "y z")]), (".test", [("d", "w")])], ("de", "en"))
    read = {n: open(os.path.join(tmp_path, "new", n), encoding="utf-8").read() for n in os.listdir(tmp_path / "new")}
    assert read == {"c.de": "a b\nc\n", "c.en": "x\ny z\n", "c.test.de": "d\n", "c.test.en": "w\n"}
