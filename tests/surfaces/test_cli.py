"""The command line: exit codes, modes, stdin, safety, encodings, config, workers.

Most tests run ``main([...])`` in process against a fake engine (patched over
``inliner.cli.process.flatten``) so they test the CLI, not the rewrite. The fake
turns ``class X(torch.autograd.Function):`` into ``class X:  # flattened`` (valid
Python, idempotent, newline-preserving) and refuses classes whose name starts with
``Keep``. The end-to-end tests at the bottom use the real engine and skip until
``inliner.engine.rewrite`` exists.
"""

from __future__ import annotations

import io
import os
import re
import stat
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from inliner.cli import main, process
from inliner.engine import FlattenResult, Selection
from inliner.engine.diagnostics import Diagnostic, Severity
from tests.support.harness import assert_same
from tests.support.paths import ROOT
from tests.support.subclass_tree import outcomes, write_tree

CLASS_RE = re.compile(r"^class (\w+)\(torch\.autograd\.Function\):", re.MULTILINE)

FN = "import torch\n\n\nclass Double(torch.autograd.Function):\n    pass\n"
FLAT = "import torch\n\n\nclass Double:  # flattened\n    pass\n"
PLAIN = "x = 1\n"


def fake_flatten(
    source: str, *, path: str = "<string>", select: Selection | None = None, **_options: object
) -> FlattenResult:
    if "SYNTAX ERROR" in source:
        diag = Diagnostic(path, 1, 1, "INL000", "cannot parse: invalid syntax", Severity.ERROR)
        return FlattenResult(source, diagnostics=(diag,), error="cannot parse: invalid syntax")
    flattened: list[str] = []
    refused: list[str] = []
    diagnostics: list[Diagnostic] = []

    def sub(m: re.Match[str]) -> str:
        name = m.group(1)
        line = source.count("\n", 0, m.start()) + 1
        if select is not None and (
            (select.name is not None and select.name != name) or (select.line is not None and select.line != line)
        ):
            return m.group(0)
        if name.startswith("Keep"):
            refused.append(name)
            diagnostics.append(
                Diagnostic(path, line, 1, "INL105", f"{name}: shape not supported", Severity.WARNING, name)
            )
            return m.group(0)
        flattened.append(name)
        diagnostics.append(Diagnostic(path, line, 1, "INL001", f"{name} flattened", Severity.INFO, name))
        return f"class {name}:  # flattened"

    new = CLASS_RE.sub(sub, source)
    return FlattenResult(new, tuple(diagnostics), tuple(flattened), tuple(refused), changed=new != source)


def broken_output(
    source: str, *, path: str = "<string>", select: Selection | None = None, **_options: object
) -> FlattenResult:
    if "autograd" not in source:
        return FlattenResult(source)
    return FlattenResult(source.replace("torch.autograd.Function", "torch.autograd.Function, ("), changed=True)


def unstable(
    source: str, *, path: str = "<string>", select: Selection | None = None, **_options: object
) -> FlattenResult:
    return FlattenResult(source + "# again\n", flattened=("X",), changed=True)


@pytest.fixture(autouse=True)
def engine(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(process, "flatten", fake_flatten)
    monkeypatch.delenv("NO_COLOR", raising=False)


@pytest.fixture
def proj(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project root (it has .git) as the working directory."""
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, str):
        text = text.encode("utf-8")
    path.write_bytes(text)
    return path


def set_stdin(monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))


# --- exit codes and basic modes -------------------------------------------------------


def test_rewrites_in_place_and_reports(proj: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = write(proj / "a.py", FN)
    b = write(proj / "b.py", PLAIN)
    assert main(["."]) == 0
    assert a.read_text() == FLAT
    assert b.read_text() == PLAIN
    out, err = capsys.readouterr()
    assert out == ""
    assert "rewrote a.py" in err.splitlines()
    assert "All done! 1 file rewritten, 1 file left unchanged." in err
    assert "Functions: 1 flattened, 0 refused." in err


def test_nothing_to_do(proj: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 0
    assert "Nothing to do" in capsys.readouterr().err
    (proj / "empty").mkdir()
    assert main(["empty"]) == 0
    assert "No Python files" in capsys.readouterr().err


def test_unchanged_file_keeps_mtime(proj: Path) -> None:
    b = write(proj / "b.py", PLAIN)
    os.utime(b, ns=(1_000_000_000, 1_000_000_000))
    assert main(["b.py"]) == 0
    assert b.stat().st_mtime_ns == 1_000_000_000


def test_check_exit_codes_and_writes_nothing(proj: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = write(proj / "a.py", FN)
    write(proj / "b.py", PLAIN)
    assert main(["--check", "b.py"]) == 0
    assert main(["--check", "."]) == 1
    assert a.read_text() == FN
    out, err = capsys.readouterr()
    assert out == ""
    assert "would rewrite a.py" in err
    assert "1 file would be rewritten" in err


def test_diff_format_and_writes_nothing(proj: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = write(proj / "a.py", FN)
    assert main(["--diff", "a.py"]) == 0
    assert a.read_text() == FN
    out, err = capsys.readouterr()
    assert out == (
        "--- a.py\n"
        "+++ a.py\n"
        "@@ -1,5 +1,5 @@\n"
        " import torch\n"
        " \n"
        " \n"
        "-class Double(torch.autograd.Function):\n"
        "+class Double:  # flattened\n"
        "     pass\n"
    )
    assert "\033[" not in out
    assert "would rewrite a.py" in err
    assert main(["--diff", "--check", "a.py"]) == 1
    assert a.read_text() == FN


def test_diff_without_trailing_newline(proj: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(proj / "a.py", FN.rstrip("\n"))
    assert main(["--diff", "a.py"]) == 0
    out = capsys.readouterr().out
    assert out.endswith("+class Double:  # flattened\n     pass\n\\ No newline at end of file\n")


def test_diff_color(proj: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    write(proj / "a.py", FN)
    assert main(["--diff", "--color", "a.py"]) == 0
    out = capsys.readouterr().out
    assert "\033[1m--- a.py\033[0m\n" in out
    assert "\033[31m-class Double(torch.autograd.Function):\033[0m\n" in out
    assert "\033[32m+class Double:  # flattened\033[0m\n" in out
    assert "\033[36m@@" in out
    # a terminal colors by default, unless NO_COLOR; --color still wins over NO_COLOR
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    assert main(["--diff", "a.py"]) == 0
    assert "\033[" in capsys.readouterr().out
    monkeypatch.setenv("NO_COLOR", "1")
    assert main(["--diff", "a.py"]) == 0
    assert "\033[" not in capsys.readouterr().out
    assert main(["--diff", "--color", "a.py"]) == 0
    assert "\033[" in capsys.readouterr().out
    monkeypatch.delenv("NO_COLOR")
    assert main(["--diff", "--no-color", "a.py"]) == 0
    assert "\033[" not in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv",
    [
        ["--jobs", "0", "a.py"],
        ["--jobs", "x", "a.py"],
        ["--no-such-option", "a.py"],
        ["missing.py"],
        ["--include", "(", "a.py"],
        ["-q", "-v", "a.py"],
        ["--select", "", "a.py"],
        ["-", "-"],
    ],
)
def test_usage_errors_exit_2(proj: Path, capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    write(proj / "a.py", FN)
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert "error" in err
    assert (proj / "a.py").read_text() == FN


def test_help_and_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.startswith("inliner ")
    assert main(["--help"]) == 0
    assert "--check" in capsys.readouterr().out


def test_failed_file_left_identical_and_others_processed(proj: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad_bytes = b"SYNTAX ERROR\r\nclass A(torch.autograd.Function):\n"
    bad = write(proj / "bad.py", bad_bytes)
    good = write(proj / "good.py", FN)
    assert main(["."]) == 123
    assert bad.read_bytes() == bad_bytes
    assert good.read_text() == FLAT
    err = capsys.readouterr().err
    assert "bad.py:1:1: INL000 cannot parse: invalid syntax" in err
    assert "error: cannot process bad.py: cannot parse: invalid syntax" in err
    assert "rewrote good.py" in err
    assert "1 file rewritten" in err and "1 file failed" in err
    # --check: failures win over "would change"
    write(proj / "good.py", FN)
    assert main(["--check", "."]) == 123


def test_undecodable_file_fails(proj: Path, capsys: pytest.CaptureFixture[str]) -> None:
    raw = b"x = 1\ny = 2\nz = '\xff'\n"
    bad = write(proj / "bad.py", raw)
    assert main(["bad.py"]) == 123
    assert bad.read_bytes() == raw
    assert "cannot decode as utf-8" in capsys.readouterr().err


def test_diagnostics_and_verbosity(proj: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = FN + "\n\nclass KeepMe(torch.autograd.Function):\n    pass\n"
    write(proj / "a.py", src)
    write(proj / "b.py", PLAIN)
    assert main(["--check", "."]) == 1
    err = capsys.readouterr().err
    assert "a.py:8:1: INL105 KeepMe: shape not supported" in err
    assert "INL001" not in err  # info only with -v
    assert "b.py unchanged" not in err
    assert "Functions: 1 would be flattened, 1 refused." in err

    assert main(["--check", "-v", "."]) == 1
    err = capsys.readouterr().err
    assert "a.py:4:1: INL001 Double flattened" in err
    assert "b.py unchanged" in err
    assert "project root" in err

    assert main(["--check", "-q", "."]) == 1
    assert capsys.readouterr().err == ""

    write(proj / "c.py", "SYNTAX ERROR\n")
    assert main(["-q", "--check", "."]) == 123
    err = capsys.readouterr().err
    assert "INL105" not in err  # warnings hidden by -q, errors are not
    assert err.splitlines() == [
        "c.py:1:1: INL000 cannot parse: invalid syntax",
        "error: cannot process c.py: cannot parse: invalid syntax",
    ]


# --- stdin ----------------------------------------------------------------------------


def test_stdin_to_stdout(proj: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    set_stdin(monkeypatch, FN.encode())
    assert main(["-", "--stdin-filename", "pkg/mod.py"]) == 0
    out, err = capsys.readouterr()
    assert out == FLAT
    assert "rewrote pkg/mod.py" in err


def test_stdin_unchanged_is_echoed(
    proj: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    set_stdin(monkeypatch, b"x = 1\r\n")
    assert main(["-"]) == 0
    assert capsys.readouterr().out == "x = 1\r\n"


def test_stdin_check_and_diff(proj: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    set_stdin(monkeypatch, FN.encode())
    assert main(["--check", "-", "--stdin-filename", "m.py"]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert "would rewrite m.py" in err
    set_stdin(monkeypatch, FN.encode())
    assert main(["--diff", "-", "--stdin-filename", "m.py"]) == 0
    assert capsys.readouterr().out.startswith("--- m.py\n+++ m.py\n")


def test_stdin_failure_echoes_input(
    proj: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    set_stdin(monkeypatch, b"SYNTAX ERROR\n")
    assert main(["-", "--stdin-filename", "m.py"]) == 123
    out, err = capsys.readouterr()
    assert out == "SYNTAX ERROR\n"
    assert "error: cannot process m.py" in err


def test_stdin_filename_finds_config(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path / "proj" / "pyproject.toml", "[tool.inliner]\ncheck = true\n")
    monkeypatch.chdir(tmp_path)
    set_stdin(monkeypatch, FN.encode())
    assert main(["-", "--stdin-filename", "proj/src/m.py"]) == 1  # check came from the config
    assert capsys.readouterr().out == ""


def test_stdin_force_exclude_passes_through(
    proj: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    set_stdin(monkeypatch, FN.encode())
    assert main(["-", "--stdin-filename", "gen/m.py", "--force-exclude", "/gen/"]) == 0
    assert capsys.readouterr().out == FN


# --- safety ---------------------------------------------------------------------------


def test_safe_mode_refuses_output_that_does_not_parse(
    proj: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(process, "flatten", broken_output)
    a = write(proj / "a.py", FN)
    b = write(proj / "b.py", PLAIN)
    assert main(["."]) == 123
    assert a.read_text() == FN
    assert b.read_text() == PLAIN
    err = capsys.readouterr().err
    assert "error: cannot process a.py: the rewritten code does not parse" in err
    assert "1 file failed" in err
    assert main(["--check", "."]) == 123
    # --fast skips the check (and writes what the engine said)
    assert main(["--fast", "a.py"]) == 0
    assert a.read_text() != FN


def test_safe_mode_refuses_unstable_output(
    proj: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(process, "flatten", unstable)
    a = write(proj / "a.py", FN)
    assert main(["a.py"]) == 123
    assert a.read_text() == FN
    assert "not stable" in capsys.readouterr().err
    assert main(["--fast", "a.py"]) == 0
    assert a.read_text() == FN + "# again\n"


def _crashing_rewrite(monkeypatch: pytest.MonkeyPatch) -> None:
    """The real engine, with a bug that stops it on any file holding a Function."""
    import inliner.engine.rewrite
    from inliner import engine

    real = inliner.engine.rewrite.rewrite_module

    def crashing(source: str, **kwargs: object) -> FlattenResult:
        if "autograd" in source:
            raise RuntimeError("boom")
        return real(source, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(inliner.engine.rewrite, "rewrite_module", crashing)
    monkeypatch.setattr(process, "flatten", engine.flatten)


@pytest.mark.engine_bug
def test_internal_error_is_a_failure(
    proj: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _crashing_rewrite(monkeypatch)
    a = write(proj / "a.py", FN)
    write(proj / "b.py", PLAIN)
    assert main(["-j", "1", "."]) == 123
    assert a.read_text() == FN
    err = capsys.readouterr().err
    assert "error: cannot process a.py: internal error: RuntimeError: boom at test_cli.py:" in err
    assert "please report this as an inliner bug" in err
    assert "a.py:1:1: INL002 internal error (RuntimeError: boom at test_cli.py:" in err
    assert "1 file left unchanged" in err


@pytest.mark.engine_bug
def test_internal_error_on_stdin_echoes_input(
    proj: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _crashing_rewrite(monkeypatch)
    set_stdin(monkeypatch, FN.encode())
    assert main(["-", "--stdin-filename", "m.py"]) == 123
    out, err = capsys.readouterr()
    assert out == FN
    assert "error: cannot process m.py: internal error: RuntimeError: boom" in err


def test_write_failure_leaves_file_and_no_temp(
    proj: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from inliner.cli import io as sio

    def no_replace(src: str, dst: str) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(sio.os, "replace", no_replace)
    a = write(proj / "a.py", FN)
    assert main(["a.py"]) == 123
    assert a.read_text() == FN
    assert sorted(p.name for p in proj.iterdir()) == [".git", "a.py"]
    assert "cannot process a.py: cannot write: Permission denied" in capsys.readouterr().err


def test_check_does_not_verify_unchanged_files_twice(proj: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []

    def counting(source: str, **kw: object) -> FlattenResult:
        calls.append(source)
        return fake_flatten(source, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(process, "flatten", counting)
    write(proj / "a.py", FN)
    write(proj / "b.py", PLAIN)
    assert main(["-j", "1", "--check", "."]) == 1
    assert len(calls) == 3  # a.py twice (rewrite + stability check), b.py once


# --- files on disk: encodings, newlines, modes ------------------------------------------


def test_write_keeps_mode(proj: Path) -> None:
    a = write(proj / "a.py", FN)
    a.chmod(0o751)
    assert main(["a.py"]) == 0
    assert a.read_text() == FLAT
    assert stat.S_IMODE(a.stat().st_mode) == 0o751


def test_write_keeps_crlf(proj: Path) -> None:
    a = write(proj / "a.py", FN.replace("\n", "\r\n").encode())
    assert main(["a.py"]) == 0
    assert a.read_bytes() == FLAT.replace("\n", "\r\n").encode()


def test_write_keeps_latin1_cookie_encoding(proj: Path) -> None:
    head = "# -*- coding: latin-1 -*-\n# caf\u00e9\n"
    a = write(proj / "a.py", (head + FN).encode("latin-1"))
    assert main(["a.py"]) == 0
    assert a.read_bytes() == (head + FLAT).encode("latin-1")


def test_write_keeps_utf8_bom(proj: Path) -> None:
    a = write(proj / "a.py", b"\xef\xbb\xbf" + ("# \u2713\n" + FN).encode())
    assert main(["a.py"]) == 0
    assert a.read_bytes() == b"\xef\xbb\xbf" + ("# \u2713\n" + FLAT).encode()


def test_output_that_cannot_be_encoded_fails(
    proj: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def adds_snowman(source: str, **kw: object) -> FlattenResult:
        if "autograd" not in source:
            return FlattenResult(source)
        return FlattenResult(source.replace("torch.autograd.Function", "object") + "# \u2603\n", changed=True)

    monkeypatch.setattr(process, "flatten", adds_snowman)
    raw = ("# -*- coding: latin-1 -*-\n" + FN).encode("latin-1")
    a = write(proj / "a.py", raw)
    assert main(["a.py"]) == 123
    assert a.read_bytes() == raw
    assert "cannot be encoded as iso-8859-1" in capsys.readouterr().err


def test_stdin_keeps_bom_and_crlf(
    proj: Path, capsysbinary: pytest.CaptureFixture[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    data = b"\xef\xbb\xbf" + FN.replace("\n", "\r\n").encode()
    set_stdin(monkeypatch, data)
    assert main(["-"]) == 0
    assert capsysbinary.readouterr().out == b"\xef\xbb\xbf" + FLAT.replace("\n", "\r\n").encode()


# --- selection --------------------------------------------------------------------------


def test_select_by_name(proj: Path) -> None:
    a = write(proj / "a.py", FN + "\n\nclass Triple(torch.autograd.Function):\n    pass\n")
    assert main(["--select", "Triple", "a.py"]) == 0
    text = a.read_text()
    assert "class Triple:  # flattened" in text
    assert "class Double(torch.autograd.Function):" in text


def test_select_path_line_affects_only_that_file(proj: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = FN + "\n\nclass Triple(torch.autograd.Function):\n    pass\n"
    a = write(proj / "pkg" / "a.py", src)
    b = write(proj / "pkg" / "b.py", src)
    assert main(["--select", "pkg/a.py:8", "pkg"]) == 0
    assert a.read_text() == src.replace("class Triple(torch.autograd.Function):", "class Triple:  # flattened")
    assert b.read_text() == src
    # PATH:LINE alone names the file to process
    assert main(["--select", "pkg/b.py:4"]) == 0
    assert "class Double:  # flattened" in b.read_text()
    assert "class Triple(torch.autograd.Function):" in b.read_text()
    # a PATH that is not among the files is a usage error
    assert main(["--select", "other.py:3", "pkg"]) == 2
    assert "not among the files" in capsys.readouterr().err


# --- config -------------------------------------------------------------------------------


def test_config_found_from_nested_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path / "pyproject.toml", "[tool.inliner]\ncheck = true\nextend-exclude = '/gen/'\n")
    a = write(tmp_path / "src" / "pkg" / "a.py", FN)
    g = write(tmp_path / "src" / "pkg" / "gen" / "g.py", FN)
    monkeypatch.chdir(tmp_path / "src" / "pkg")
    assert main(["."]) == 1  # --check from the config
    assert a.read_text() == FN
    err = capsys.readouterr().err
    assert "would rewrite a.py" in err
    assert "g.py" not in err
    assert main(["-v", "."]) == 1
    assert f"Using configuration from {tmp_path / 'pyproject.toml'}" in capsys.readouterr().err
    assert g.read_text() == FN


def test_config_keys_with_underscores_and_cli_override(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    write(
        tmp_path / "pyproject.toml", '[tool.inliner]\ninclude = "\\\\.pyx$"\nextend_exclude = "/skip/"\nquiet = true\n'
    )
    a = write(tmp_path / "a.py", FN)
    write(tmp_path / "skip" / "s.py", FN)
    monkeypatch.chdir(tmp_path)
    assert main(["."]) == 0
    assert a.read_text() == FN  # .pyx only
    assert capsys.readouterr().err == ""  # quiet
    assert main(["-v", "--include", r"\.py$", "."]) == 0
    assert a.read_text() == FLAT
    err = capsys.readouterr().err
    assert "rewrote a.py" in err
    assert "rewrote skip/s.py" not in err
    assert "skip skipped: matches --extend-exclude" in err
    assert (tmp_path / "skip" / "s.py").read_text() == FN


def test_config_unknown_key_warns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path / "pyproject.toml", "[tool.inliner]\nline-width = 88\nselect = 'X'\n")
    write(tmp_path / "a.py", PLAIN)
    monkeypatch.chdir(tmp_path)
    assert main(["a.py"]) == 0
    err = capsys.readouterr().err
    assert "warning:" in err and "unknown key 'line-width'" in err
    assert "cannot set 'select'" in err


@pytest.mark.parametrize("body", ["jobs = 'many'", "check = 1", "jobs = true", "this is not toml"])
def test_config_bad_value_is_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], body: str
) -> None:
    write(tmp_path / "pyproject.toml", "[tool.inliner]\n" + body + "\n")
    write(tmp_path / "a.py", FN)
    monkeypatch.chdir(tmp_path)
    assert main(["a.py"]) == 2
    assert "pyproject.toml" in capsys.readouterr().err
    assert (tmp_path / "a.py").read_text() == FN


def test_explicit_config_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path / "conf.toml", "[tool.inliner]\ncheck = true\n")
    write(tmp_path / "a.py", FN)
    monkeypatch.chdir(tmp_path)
    assert main(["--config", "conf.toml", "a.py"]) == 1


def test_pyproject_without_tool_table_is_not_a_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path / "pyproject.toml", "[tool.inliner]\ncheck = true\n")
    write(tmp_path / "sub" / "pyproject.toml", "[tool.black]\nline-length = 100\n")
    write(tmp_path / "sub" / "a.py", FN)
    monkeypatch.chdir(tmp_path / "sub")
    assert main(["a.py"]) == 1


# --- workers and progress ------------------------------------------------------------------


def test_jobs_do_not_change_output(proj: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for i in range(8):
        body = FN if i % 2 else PLAIN
        if i == 5:
            body = "SYNTAX ERROR\n"
        if i == 3:
            body = FN + "\n\nclass KeepIt(torch.autograd.Function):\n    pass\n"
        write(proj / f"pkg{i % 3}" / f"m{i}.py", body)
    results = []
    for jobs in ("1", "2"):
        code = main(["--diff", "-v", "-j", jobs, "."])
        results.append((code, capsys.readouterr()))
    assert results[0] == results[1]
    code, (out, err) = results[0]
    assert code == 123
    assert out.count("--- ") == 3
    paths = [line.split()[-1] for line in err.splitlines() if line.startswith("would rewrite")]
    assert paths == sorted(paths)
    # and writing in parallel writes the same files
    assert main(["-j", "2", "."]) == 123
    assert (proj / "pkg1" / "m1.py").read_text() == FLAT


def test_progress_bar_only_on_a_terminal(
    proj: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(25):
        write(proj / f"m{i:02}.py", PLAIN)
    assert main(["-j", "1", "."]) == 0
    assert "\r" not in capsys.readouterr().err
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    assert main(["-j", "1", "."]) == 0
    err = capsys.readouterr().err
    assert "25/25 files" in err
    assert "\r\033[K" in err
    assert main(["-j", "1", "-q", "."]) == 0
    assert capsys.readouterr().err == ""


# --- entry points ----------------------------------------------------------------------------


def _env() -> dict[str, str]:
    env = dict(os.environ)
    root = str(ROOT)
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("NO_COLOR", None)
    return env


def test_python_dash_m(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "inliner", "--version"], capture_output=True, text=True, env=_env(), cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("inliner ")
    proc = subprocess.run(
        [sys.executable, "-m", "inliner", "--bogus"], capture_output=True, text=True, env=_env(), cwd=tmp_path
    )
    assert proc.returncode == 2
    assert "usage: inliner" in proc.stderr


def test_pre_commit_hook_file() -> None:
    text = (ROOT / ".pre-commit-hooks.yaml").read_text()
    for line in ("- id: inliner", "entry: inliner", "language: python", "types: [python]"):
        assert line in text


# --- end to end with the real engine (run once inliner.engine.rewrite exists) -------------------------

REAL_FN = """\
import torch
class Double(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2
    @staticmethod
    def backward(ctx, g):
        return g * 3
"""


@pytest.fixture
def real_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("inliner.engine.rewrite")
    from inliner import engine

    monkeypatch.setattr(process, "flatten", engine.flatten)


def test_e2e_rewrite_check_and_idempotence(proj: Path, real_engine: None, capsys: pytest.CaptureFixture[str]) -> None:
    a = write(proj / "a.py", REAL_FN)
    assert main(["--check", "a.py"]) == 1
    assert a.read_text() == REAL_FN
    assert main(["--diff", "a.py"]) == 0
    assert capsys.readouterr().out.startswith("--- a.py\n+++ a.py\n")
    assert main(["a.py"]) == 0
    new = a.read_text()
    assert new != REAL_FN
    compile(new, "a.py", "exec")
    assert "rewrote a.py" in capsys.readouterr().err
    assert main(["--check", "a.py"]) == 0  # nothing left to do


@pytest.mark.engine_bug
def test_e2e_internal_error_in_one_class_refuses_it(
    proj: Path, real_engine: None, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import inliner.engine.function_class.lower_class

    real = inliner.engine.function_class.lower_class.lower_function_class

    def lowering(node, **kwargs):  # type: ignore[no-untyped-def]
        if node.name.value == "Other":
            raise RuntimeError("boom")
        return real(node, **kwargs)

    monkeypatch.setattr(inliner.engine.function_class.lower_class, "lower_function_class", lowering)
    other = REAL_FN.split("\n", 1)[1].replace("Double", "Other")
    a = write(proj / "a.py", REAL_FN + "\n" + other)
    assert main(["a.py"]) == 0  # a refusal like any other: the rest of the file is rewritten
    new = a.read_text()
    assert "class Double" not in new and "class Other(torch.autograd.Function):" in new
    line = (REAL_FN + "\n" + other).splitlines().index("class Other(torch.autograd.Function):") + 1
    err = capsys.readouterr().err
    assert f"a.py:{line}:7: INL002 class Other: internal error (RuntimeError: boom at test_cli.py:" in err
    assert "rewrote a.py" in err


def _forget(*packages: str) -> None:
    for name in [m for m in sys.modules if m.partition(".")[0] in packages]:
        del sys.modules[name]


@pytest.mark.parametrize("given", ["the package", "the base's file alone"])
def test_e2e_a_base_another_module_subclasses_stays_a_function(
    given: str, proj: Path, real_engine: None, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The subclasses' modules import after the rewrite, and every call computes what it did."""
    original, rewritten = f"inl_tree_{uuid.uuid4().hex[:8]}", f"inl_tree_{uuid.uuid4().hex[:8]}"
    monkeypatch.syspath_prepend(str(proj))
    write_tree(proj, original)
    package = write_tree(proj, rewritten)
    target = package if given == "the package" else package / "preference.py"
    try:
        assert main([str(target)]) == 0
        assert_same(outcomes(original), outcomes(rewritten), "the tree")
        err = capsys.readouterr().err
        assert f"class PreferenceBase: it is meant as a base: class DPO in module {rewritten}.losses.dpo" in err
        text = (package / "preference.py").read_text()
        assert "class PreferenceBase(torch.autograd.Function):" in text and "class Scale" not in text, text
    finally:
        _forget(original, rewritten)


def test_each_file_is_told_which_of_its_classes_other_files_subclass(
    proj: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    told: dict[str, object] = {}

    def recording(source: str, *, path: str = "<string>", **options: object) -> FlattenResult:
        told[path] = options.get("subclassed")
        return FlattenResult(source)

    monkeypatch.setattr(process, "flatten", recording)
    write_tree(proj, "told")
    assert main(["-j", "1", "told"]) == 0
    preference = os.path.join("told", "preference.py")
    assert told.pop(preference) == {
        "told.preference.PreferenceBase": "told.losses.dpo.DPO",  # the first subclass in file order
    }
    assert set(told.values()) == {None}


def test_e2e_jobs_and_crlf(proj: Path, real_engine: None, capsys: pytest.CaptureFixture[str]) -> None:
    for i in range(3):
        write(proj / f"m{i}.py", REAL_FN.replace("\n", "\r\n").encode())
    bad = "import torch\nclass A(torch.autograd.Function):\n    def (:\n"
    write(proj / "bad.py", bad)
    outs = []
    for jobs in ("1", "2"):
        outs.append((main(["--diff", "-j", jobs, "."]), capsys.readouterr()))
    assert outs[0] == outs[1]
    assert outs[0][0] == 123
    assert main(["."]) == 123
    data = (proj / "m0.py").read_bytes()
    assert data.count(b"\r\n") == data.count(b"\n")
    assert (proj / "bad.py").read_text() == bad


def test_e2e_subprocess(tmp_path: Path, real_engine: None) -> None:
    write(tmp_path / "a.py", REAL_FN)
    proc = subprocess.run(
        [sys.executable, "-m", "inliner", "a.py"], capture_output=True, text=True, env=_env(), cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""
    assert "rewrote a.py" in proc.stderr
    assert (tmp_path / "a.py").read_text() != REAL_FN
