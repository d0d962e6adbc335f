from conftest import write

from align.cli.symmetrize import main


def test_symmetrize_cli(tmp_path, capsys):
    f = write(tmp_path, "f", "0-0 1-1 2-1\n0-0\n")
    r = write(tmp_path, "r", "0-0 1-1 1-2\n0-0\n")
    assert main(["-m", "grow-diag", f, r]) == 0
    assert capsys.readouterr().out == "0-0 1-1 1-2 2-1\n0-0\n"
    rt = write(tmp_path, "rt", "0-0 1-1 2-1\n0-0\n")  # the same reverse links, target first
    assert main(["-m", "intersect", f, rt, "--reverse-target-first"]) == 0
    assert capsys.readouterr().out == "0-0 1-1\n0-0\n"


def test_symmetrize_cli_errors(tmp_path, capsys):
    f = write(tmp_path, "f", "0-0\n0-0\n")
    r = write(tmp_path, "r", "0-0\n")
    out = tmp_path / "out"
    assert main([f, r, "-o", str(out)]) == 1
    assert "r: 1 lines; expected 2" in capsys.readouterr().err
    assert not out.exists()
    assert main(["-m", "nope", f, r]) == 2
