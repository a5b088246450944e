"""Which files the command line touches: include/exclude, .gitignore, symlinks."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from inliner.cli import main, process
from inliner.cli.files import (
    DEFAULT_EXCLUDE,
    DEFAULT_INCLUDE,
    Filters,
    GitIgnore,
    discover,
    gitignored,
)
from inliner.engine import FlattenResult, Selection

FN = "import torch\nclass F(torch.autograd.Function):\n    pass\n"
FLAT = "import torch\nclass F:  # flattened\n    pass\n"


def fake_flatten(
    source: str, *, path: str = "<string>", select: Selection | None = None, **_options: object
) -> FlattenResult:
    new = source.replace("(torch.autograd.Function):", ":  # flattened")
    return FlattenResult(new, flattened=("F",) if new != source else (), changed=new != source)


@pytest.fixture(autouse=True)
def engine(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(process, "flatten", fake_flatten)


@pytest.fixture
def proj(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    monkeypatch.chdir(root)
    return root


def touch(root: Path, *names: str, text: str = FN) -> None:
    for name in names:
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


def filters(**kw: object) -> Filters:
    base: dict[str, object] = {"include": re.compile(DEFAULT_INCLUDE), "exclude": re.compile(DEFAULT_EXCLUDE)}
    base.update(kw)
    return Filters(**base)  # type: ignore[arg-type]


def found(paths: list[str], root: Path, **kw: object) -> list[str]:
    return [f.display for f in discover(paths, root, filters(**kw)).files]


# --- .gitignore matcher -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "path", "is_dir", "expected"),
    [
        ("*.py", "a.py", False, True),
        ("*.py", "deep/er/a.py", False, True),
        ("*.py", "a.pyc", False, False),
        ("build/", "build", True, True),
        ("build/", "build", False, False),  # dir-only pattern, a file named build
        ("build/", "src/build", True, True),
        ("/top.py", "top.py", False, True),
        ("/top.py", "sub/top.py", False, False),
        ("sub/x.py", "sub/x.py", False, True),
        ("sub/x.py", "a/sub/x.py", False, False),  # a middle slash anchors
        ("**/gen", "a/b/gen", True, True),
        ("**/gen", "gen", True, True),
        ("a/**/z.py", "a/z.py", False, True),
        ("a/**/z.py", "a/b/c/z.py", False, True),
        ("a/**", "a/b/c.py", False, True),
        ("a/**", "a", True, False),
        ("m?.py", "m1.py", False, True),
        ("m[0-3].py", "m2.py", False, True),
        ("m[!0-3].py", "m2.py", False, False),
        ("\\#x.py", "#x.py", False, True),
        ("# comment", "# comment", False, False),
    ],
)
def test_gitignore_patterns(tmp_path: Path, pattern: str, path: str, is_dir: bool, expected: bool) -> None:
    spec = GitIgnore.parse(str(tmp_path), pattern + "\n")
    assert gitignored((spec,), str(tmp_path / path), is_dir) is expected


def test_gitignore_negation_and_order(tmp_path: Path) -> None:
    spec = GitIgnore.parse(str(tmp_path), "*.py\n!keep.py\n")
    assert gitignored((spec,), str(tmp_path / "x.py"), False)
    assert not gitignored((spec,), str(tmp_path / "keep.py"), False)
    deeper = GitIgnore.parse(str(tmp_path / "sub"), "keep.py\n")
    assert gitignored((spec, deeper), str(tmp_path / "sub" / "keep.py"), False)
    assert not gitignored((spec, deeper), str(tmp_path / "keep.py"), False)


# --- discovery ----------------------------------------------------------------------------


def test_recursion_include_and_default_excludes(proj: Path) -> None:
    touch(
        proj,
        "a.py",
        "notes.txt",
        "stub.pyi",
        "pkg/b.py",
        "pkg/sub/c.py",
        "build/x.py",
        "dist/x.py",
        ".venv/lib/x.py",
        "venv/x.py",
        ".tox/x.py",
        ".nox/x.py",
        ".mypy_cache/x.py",
        ".pytest_cache/x.py",
        "pkg/__pycache__/x.py",
        "_build/x.py",
        "buck-out/x.py",
        "node_modules/x.py",
        ".git/x.py",
        ".hg/x.py",
        "pkg/build_utils.py",
    )
    assert found(["."], proj) == ["a.py", "pkg/b.py", "pkg/build_utils.py", "pkg/sub/c.py"]


def test_include_exclude_extend_exclude(proj: Path) -> None:
    touch(proj, "a.py", "legacy/old.py", "pkg/gen_x.py", "pkg/m.py", "build/b.py")
    assert found(["."], proj, include=re.compile(r"/pkg/.*\.py$")) == ["pkg/gen_x.py", "pkg/m.py"]
    assert found(["."], proj, extend_exclude=re.compile(r"/legacy/|gen_")) == ["a.py", "pkg/m.py"]
    # --exclude replaces the defaults
    assert found(["."], proj, exclude=re.compile(r"/legacy/")) == ["a.py", "build/b.py", "pkg/gen_x.py", "pkg/m.py"]


def test_explicit_paths_are_always_processed(proj: Path) -> None:
    touch(proj, "build/b.py", "build/c.py", "gen/g.py", "gen/h.txt")
    (proj / ".gitignore").write_text("gen/\n")
    assert found(["build/b.py"], proj) == ["build/b.py"]
    assert found(["gen/h.txt"], proj) == ["gen/h.txt"]
    # naming an excluded or ignored directory processes its contents
    assert found(["build"], proj) == ["build/b.py", "build/c.py"]
    assert found(["gen"], proj) == ["gen/g.py"]
    # unless --force-exclude says otherwise
    assert found(["build/b.py"], proj, force_exclude=re.compile(r"/build/")) == []
    assert found(["build"], proj, force_exclude=re.compile(r"/build/")) == []
    assert found(["."], proj, force_exclude=re.compile(r"/c\.py$")) == []


def test_gitignore_root_nested_and_disabled_by_exclude(proj: Path) -> None:
    touch(proj, "a.py", "skip_me.py", "pkg/b.py", "pkg/local.py", "pkg/keep.py", "out/x.py")
    (proj / ".gitignore").write_text("skip_me.py\nout/\n*.py\n!a.py\n!pkg/\n!pkg/*.py\n")
    (proj / "pkg" / ".gitignore").write_text("local.py\n")
    assert found(["."], proj) == ["a.py", "pkg/b.py", "pkg/keep.py"]
    # the .gitignore files between the root and a named directory apply too
    assert found(["pkg"], proj) == ["pkg/b.py", "pkg/keep.py"]
    # an explicit --exclude turns .gitignore off (black's rule)
    f = discover(["."], proj, filters(exclude=re.compile(r"/\.git/"), use_gitignore=False))
    assert [s.display for s in f.files] == ["a.py", "out/x.py", "pkg/b.py", "pkg/keep.py", "pkg/local.py", "skip_me.py"]


def test_gitignore_through_main(proj: Path, capsys: pytest.CaptureFixture[str]) -> None:
    touch(proj, "a.py", "ignored.py")
    (proj / ".gitignore").write_text("ignored.py\n")
    assert main(["-v", "."]) == 0
    assert (proj / "a.py").read_text() == FLAT
    assert (proj / "ignored.py").read_text() == FN
    assert "ignored.py skipped: ignored by .gitignore" in capsys.readouterr().err
    # --exclude on the command line turns .gitignore off
    assert main(["--exclude", "^$", "."]) == 0
    assert (proj / "ignored.py").read_text() == FLAT


def test_default_excludes_through_main(proj: Path) -> None:
    touch(proj, "a.py", ".venv/lib/x.py", "pkg/__pycache__/y.py", "node_modules/z.py")
    assert main(["--extend-exclude", "/pkg/", "."]) == 0
    assert (proj / "a.py").read_text() == FLAT
    for name in (".venv/lib/x.py", "pkg/__pycache__/y.py", "node_modules/z.py"):
        assert (proj / name).read_text() == FN


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_symlink_outside_root_is_never_written(proj: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    outside = tmp_path / "outside"
    touch(outside, "o.py", "dir/p.py")
    touch(proj, "src/a.py")
    (proj / "src" / "link.py").symlink_to(outside / "o.py")
    (proj / "src" / "linkdir").symlink_to(outside / "dir", target_is_directory=True)
    (proj / "src" / "dangling.py").symlink_to(proj / "nowhere.py")
    assert main(["-v", "src"]) == 0
    assert (outside / "o.py").read_text() == FN
    assert (outside / "dir" / "p.py").read_text() == FN
    assert (proj / "src" / "a.py").read_text() == FLAT
    err = capsys.readouterr().err
    assert "src/link.py skipped: symbolic link to" in err
    assert "src/linkdir skipped: symbolic link to" in err
    assert "src/dangling.py skipped: broken symbolic link" in err
    assert main(["src"]) == 0
    assert "skipped" not in capsys.readouterr().err  # only with -v
    # named on the command line, it still resolves outside the project root
    assert main(["-v", "src/link.py", "src/linkdir"]) == 0
    assert (outside / "o.py").read_text() == FN
    assert (outside / "dir" / "p.py").read_text() == FN
    err = capsys.readouterr().err
    assert "src/link.py skipped: resolves to" in err
    assert "src/linkdir skipped: resolves to" in err


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_symlinks_inside_root_processed_once_and_stay_links(proj: Path) -> None:
    touch(proj, "pkg/a.py")
    (proj / "pkg" / "alias.py").symlink_to("a.py")
    (proj / "pkg" / "loop").symlink_to(proj / "pkg", target_is_directory=True)
    assert found(["pkg"], proj) == ["pkg/a.py"]
    # a symlink named on the command line: the target is written, the link stays a link
    assert main(["pkg/alias.py"]) == 0
    assert (proj / "pkg" / "alias.py").is_symlink()
    assert (proj / "pkg" / "a.py").read_text() == FLAT


def test_duplicate_arguments_processed_once(proj: Path, capsys: pytest.CaptureFixture[str]) -> None:
    touch(proj, "pkg/a.py")
    assert found(["pkg", "pkg/a.py", "./pkg"], proj) == ["pkg/a.py"]
    assert main(["pkg", "pkg/a.py"]) == 0
    assert capsys.readouterr().err.count("rewrote") == 1
