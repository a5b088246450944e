"""The surfaces hand the engine the project's other modules (``inliner.project_sources``),
so that a decorator imported from one is seen into for the compile kind: the reader
itself, the command line (its worker processes too) and the LSP/codemod options.
The hook's use (and its cache) is tested in tests/surfaces/test_hook.py."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from inliner.cli import main
from inliner.engine.analysis.compile_overrides import engine_options
from inliner.project_sources import ProjectSources, unchanged

WRAPPERS = """\
import functools


def pure(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)

    return wrapper
"""

OPS = """\
import torch
from ..wrappers import pure


class Doubled(torch.autograd.Function):
    @staticmethod
    @pure
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 7
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """pkg/wrappers.py and pkg/sub/ops.py under a project root (it has .git)."""
    (tmp_path / ".git").mkdir()
    for path, text in {
        "pkg/__init__.py": "",
        "pkg/wrappers.py": WRAPPERS,
        "pkg/sub/__init__.py": "",
        "pkg/sub/ops.py": OPS,
    }.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_reader_reads_modules_and_packages_under_the_import_root(project: Path):
    sources = ProjectSources.of_file(project / "pkg/sub/ops.py", "pkg.sub.ops")
    assert sources is not None and Path(sources.root) == project.resolve()
    assert sources("pkg.wrappers") == WRAPPERS
    assert sources("pkg.sub") == ""
    assert sources("torch") is None  # not the project's
    assert sources("pkg/../etc") is None
    assert ProjectSources.of_file(project / "pkg/__init__.py", "pkg").root == sources.root
    assert ProjectSources.of_file(project / "pkg/sub/ops.py", None) is None


def test_the_reader_remembers_what_it_read_so_a_cache_can_check_it(project: Path):
    sources = ProjectSources(str(project))
    sources("pkg.wrappers")
    sources("pkg.absent")
    read = dict(sources.read)
    assert unchanged(read)
    (project / "pkg/absent.py").write_text("")
    assert not unchanged(read), "a module written later changes the answer"
    (project / "pkg/absent.py").unlink()
    (project / "pkg/wrappers.py").write_text(WRAPPERS + "\n")
    assert not unchanged(read)


def test_a_worker_process_gets_the_root_only():
    sources = ProjectSources("/somewhere")
    sources.read["x"] = "y"
    copy = pickle.loads(pickle.dumps(sources))
    assert copy.root == "/somewhere" and copy.read == {}


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_the_command_line_sees_into_a_decorator_of_another_module(project: Path, jobs: str, capsys):
    assert main(["-j", jobs, "pkg"]) == 0
    flat = (project / "pkg/sub/ops.py").read_text()
    assert 'compile_kind="opaque"' in flat and "split_decorators=True" in flat, flat


def test_the_one_file_surfaces_get_a_reader(project: Path):
    options = engine_options(project / "pkg/sub/ops.py")
    assert options["module"] == "pkg.sub.ops"
    assert options["sources"]("pkg.wrappers") == WRAPPERS
