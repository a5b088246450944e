"""The LibCST codemod entry (``python -m libcst.tool codemod -x inliner.codemod.Flatten``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from libcst.codemod import CodemodContext, TransformFailure, TransformSkip, TransformSuccess, transform_module

import inliner.codemod
from inliner.codemod import Flatten
from inliner.engine import FlattenResult, Selection
from inliner.engine.diagnostics import Diagnostic, Severity
from tests.support.paths import ROOT

FN = "import torch\nclass F(torch.autograd.Function):\n    pass\nclass KeepG(torch.autograd.Function):\n    pass\n"


def fake_flatten(
    source: str, *, path: str = "<string>", select: Selection | None = None, **_options: object
) -> FlattenResult:
    if "SYNTAX" in source:
        return FlattenResult(source, error="cannot parse")
    if select is not None and select.name not in (None, "F"):
        return FlattenResult(source)
    new = source.replace("class F(torch.autograd.Function):", "class F:  # flattened")
    diags = ()
    if "KeepG" in source:
        diags = (
            Diagnostic(path, 4, 1, "INL105", "KeepG: shape not supported", Severity.WARNING, "KeepG"),
            Diagnostic(path, 2, 1, "INL001", "F flattened", Severity.INFO, "F"),
        )
    return FlattenResult(new, diags, ("F",) if new != source else (), ("KeepG",), changed=new != source)


@pytest.fixture(autouse=True)
def engine(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(inliner.codemod, "flatten", fake_flatten)


def test_transform_success_with_warnings() -> None:
    result = transform_module(Flatten(CodemodContext(filename="m.py")), FN)
    assert isinstance(result, TransformSuccess)
    assert result.code == FN.replace("class F(torch.autograd.Function):", "class F:  # flattened")
    assert result.warning_messages == ["m.py:4:1: INL105 KeepG: shape not supported"]


def test_transform_skip_when_nothing_to_do() -> None:
    result = transform_module(Flatten(CodemodContext(filename="m.py")), "x = 1\n")
    assert isinstance(result, TransformSkip)
    assert "nothing to flatten" in result.skip_description


def test_transform_failure_on_engine_error() -> None:
    result = transform_module(Flatten(CodemodContext(filename="m.py")), "x = 1  # SYNTAX\n")
    assert isinstance(result, TransformFailure)
    assert "cannot parse" in str(result.error)


def test_select_argument() -> None:
    assert isinstance(transform_module(Flatten(CodemodContext(filename="m.py"), select="Other"), FN), TransformSkip)
    assert isinstance(transform_module(Flatten(CodemodContext(filename="m.py"), select="F"), FN), TransformSuccess)
    assert isinstance(transform_module(Flatten(CodemodContext(filename="m.py"), select="n.py:2"), FN), TransformSkip)


def test_libcst_tool_in_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from libcst import tool

    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "m.py").write_text(FN)
    (tmp_path / "src" / "n.py").write_text("x = 1\n")
    monkeypatch.chdir(tmp_path)
    argv = ["codemod", "-x", "inliner.codemod.Flatten", "--no-format", "-j", "1", "--hide-progress", "src"]
    assert tool.main("libcst.tool", argv) == 0
    assert "class F:  # flattened" in (tmp_path / "src" / "m.py").read_text()
    assert (tmp_path / "src" / "n.py").read_text() == "x = 1\n"
    err = capsys.readouterr().err
    assert "Transformed 1 files successfully" in err
    assert "INL105 KeepG" in err


def test_libcst_tool_subprocess_real_engine(tmp_path: Path) -> None:
    pytest.importorskip("inliner.engine.rewrite")
    src = (
        "import torch\n"
        "class Double(torch.autograd.Function):\n"
        "    @staticmethod\n"
        "    def forward(ctx, x):\n"
        "        return x * 2\n"
        "    @staticmethod\n"
        "    def backward(ctx, g):\n"
        "        return g * 3\n"
    )
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "m.py").write_text(src)
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "libcst.tool",
            "codemod",
            "-x",
            "inliner.codemod.Flatten",
            "--no-format",
            "--hide-progress",
            "src",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    new = (tmp_path / "src" / "m.py").read_text()
    assert new != src
    compile(new, "m.py", "exec")
