"""``scripts/real_projects.py``'s check of the user's text (it downloads, so CI runs only
this part): a docstring the rewrite moves to another indentation keeps the value
``help()`` shows (``inspect.cleandoc``), which docs/flattening.md promises; any other
change of a docstring, or a docstring left as a bare string statement, is reported."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "real_projects.py"

ORIGINAL = '''\
class Diagonalization:
    @staticmethod
    def forward(ctx, x):
        r"""
        :param x: the matrix
            (indented further)
        """
        return x
'''

MOVED = '''\
def diagonalization_fwd(x):
    r"""
    :param x: the matrix
        (indented further)
    """
    return x
'''


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def script():
    for helper in ("compile_paths", "census"):  # it imports census.py (which imports compile_paths.py) by name
        if helper not in sys.modules:
            _load(helper, SCRIPT.parent / f"{helper}.py")
    return _load("real_projects_script", SCRIPT)


def _changes(script, tmp_path: Path, before: str, after: str) -> list[str]:
    for side, text in (("before", before), ("after", after)):
        (tmp_path / side).mkdir()
        (tmp_path / side / "m.py").write_text(text)
    return script._text_changes(tmp_path / "before", tmp_path / "after")


def test_a_docstring_moved_to_another_indentation_is_no_change(script, tmp_path):
    assert _changes(script, tmp_path, ORIGINAL, MOVED) == []


def test_a_docstring_whose_words_changed_is_reported(script, tmp_path):
    changed = _changes(script, tmp_path, ORIGINAL, MOVED.replace("the matrix", "a matrix"))
    assert len(changed) == 1 and "a docstring's value changed" in changed[0]


def test_a_docstring_left_as_a_bare_string_is_reported(script, tmp_path):
    loose = MOVED.replace('    r"""', '    y = 1\n    r"""', 1)
    changed = _changes(script, tmp_path, ORIGINAL, loose)
    assert any("bare string statement" in line for line in changed), changed
