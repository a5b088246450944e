"""The width of the engine's own lines is the project's: black's or ruff's ``line-length``,
found from the file's directory upward (inliner/style.py), through every surface."""

from __future__ import annotations

from pathlib import Path

import pytest

from inliner.cli import main
from inliner.engine.analysis.compile_overrides import engine_options
from inliner.style import find_line_length

FUNCTION = """import torch


class ScaleFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 2

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x * 3
"""
ONE_LINE = (  # 113 columns
    'ScaleFunction = custom_vjp(scale_function_fwd, scale_function_bwd, name="ScaleFunction", saved_for_backward_idx=(0,))\n'
)


def _project(root: Path, files: dict[str, str]) -> Path:
    (root / ".git").mkdir(parents=True)
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


@pytest.mark.parametrize(
    "files, expected",
    [
        pytest.param({}, 88, id="none-black-default"),
        pytest.param({"pyproject.toml": "[tool.black]\nline-length = 120\n"}, 120, id="black"),
        pytest.param({"pyproject.toml": "[tool.ruff]\nline-length = 100\n"}, 100, id="ruff"),
        pytest.param(
            {"pyproject.toml": "[tool.black]\nline-length = 110\n[tool.ruff]\nline-length = 100\n"},
            110,
            id="black-first",
        ),
        pytest.param({"ruff.toml": "line-length = 99\n"}, 99, id="ruff-toml"),
        pytest.param(
            {"pyproject.toml": "[tool.inliner]\nline-length = 77\n[tool.black]\nline-length = 110\n"},
            77,
            id="inliner-first",
        ),
        pytest.param(
            {"pyproject.toml": "[tool.ruff]\nline-length = 120\n", "pkg/pyproject.toml": "[tool.inliner]\n"},
            120,
            id="an-inliner-table-without-it-is-passed",
        ),
        pytest.param({".ruff.toml": "line-length = 101\n"}, 101, id="dot-ruff-toml"),
        pytest.param({"pyproject.toml": "[tool.black]\nskip-string-normalization = true\n"}, 88, id="black-without-it"),
        pytest.param({"pyproject.toml": "[tool.black]\nline-length = 'wide'\n"}, 88, id="not-a-number"),
        pytest.param({"pyproject.toml": "[tool.black\n"}, 88, id="unreadable"),
        pytest.param(
            {"pyproject.toml": "[tool.ruff]\nline-length = 120\n", "pkg/pyproject.toml": "[tool.black]\n"},
            88,
            id="nearest-configuration-decides",
        ),
        pytest.param(
            {"pyproject.toml": "[tool.ruff]\nline-length = 120\n", "pkg/pyproject.toml": "[project]\nname = 'x'\n"},
            120,
            id="a-pyproject-without-either-table-is-passed",
        ),
    ],
)
def test_found_from_the_files_directory_upward(tmp_path, files, expected):
    root = _project(tmp_path, files)
    (root / "pkg").mkdir(exist_ok=True)
    assert find_line_length(root / "pkg" / "mod.py") == expected


def test_the_search_stops_at_the_repository_root(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.black]\nline-length = 120\n")
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    assert find_line_length(repo / "mod.py") == 88


def test_the_command_line_formats_at_the_projects_width(tmp_path, monkeypatch):
    root = _project(tmp_path / "wide", {"pyproject.toml": "[tool.black]\nline-length = 120\n", "wide.py": FUNCTION})
    narrow = _project(tmp_path / "narrow", {"narrow.py": FUNCTION})
    monkeypatch.chdir(root)
    assert main(["wide.py"]) == 0
    assert ONE_LINE in (root / "wide.py").read_text()
    monkeypatch.chdir(narrow)
    assert main(["narrow.py"]) == 0
    assert ONE_LINE not in (narrow / "narrow.py").read_text()


def test_the_hook_and_the_language_server_get_it(tmp_path):
    """Both take ``engine_options`` of the file they flatten."""
    root = _project(tmp_path, {"ruff.toml": "line-length = 120\n", "mod.py": FUNCTION})
    assert engine_options(root / "mod.py")["line_length"] == 120
    assert engine_options(None)["line_length"] == 88


@pytest.mark.parametrize(
    "files, argv",
    [
        pytest.param({}, ["--line-length", "120", "mod.py"], id="flag"),
        pytest.param({"pyproject.toml": "[tool.inliner]\nline-length = 120\n"}, ["mod.py"], id="tool-inliner"),
        pytest.param(
            {"pyproject.toml": "[tool.black]\nline-length = 60\n"}, ["-l", "120", "mod.py"], id="flag-over-black"
        ),
    ],
)
def test_the_command_line_can_say_it(tmp_path, monkeypatch, files, argv):
    root = _project(tmp_path, {**files, "mod.py": FUNCTION})
    monkeypatch.chdir(root)
    assert main(argv) == 0
    assert ONE_LINE in (root / "mod.py").read_text()
