"""The pass over a tree that finds the Function classes other modules derive from.

Every way a module can name a class of another module is resolved to that class; what
cannot be resolved counts as every Function class of that name (left as written is safe);
what resolves elsewhere (the same module, another library) does not count.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from inliner.subclassed import _may_define, for_module, package_files, package_root, subclassed_in_tree

BASE = """\
import torch
from torch.autograd import Function


class Base(Function):
    @staticmethod
    def forward(ctx, x):
        return x

    @staticmethod
    def backward(ctx, g):
        return g


class Mid(Base):
    pass


class Plain:
    pass
"""


def _tree(root: Path, files: dict[str, str]) -> dict[str, str]:
    """Write ``pkg/...`` files (``pkg/__init__.py`` and ``pkg/base.py`` always) and run the pass on ``pkg``."""
    files = {"pkg/__init__.py": "", "pkg/base.py": BASE, **files}
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return subclassed_in_tree({"pkg.base": root / "pkg" / "base.py"})


#: how a module of the package names the base -> the module's text
RESOLVED = {
    "a relative import": "from .base import Base\n\nclass Sub(Base):\n    pass\n",
    "a relative import from a sub-package": "from ..base import Base\n\nclass Sub(Base):\n    pass\n",
    "an absolute import, renamed": "from pkg.base import Base as B\n\nclass Sub(B):\n    pass\n",
    "a module renamed": "import pkg.base as b\n\nclass Sub(b.Base):\n    pass\n",
    "a dotted module": "import pkg.base\n\nclass Sub(pkg.base.Base):\n    pass\n",
    "a module from its package": "from pkg import base\n\nclass Sub(base.Base):\n    pass\n",
    "a re-export": "from pkg import Base\n\nclass Sub(Base):\n    pass\n",
    "a star import": "from pkg.base import *\n\nclass Sub(Base):\n    pass\n",
    "a parameter (not resolved: by name)": "def make(Base):\n    class Sub(Base):\n        pass\n    return Sub\n",
    "an assignment (not resolved: by name)": "import pkg.base\n\nBase = pkg.base.Base\n\nclass Sub(Base):\n    pass\n",
    "an attribute of a call (not resolved: by name)": (
        "import importlib\n\nclass Sub(importlib.import_module('pkg.base').Base):\n    pass\n"
    ),
    "getattr under another name (not resolved: by name)": (
        "import importlib\n\nB = getattr(importlib.import_module('pkg.base'), 'Base')\n\nclass Sub(B):\n    pass\n"
    ),
}


@pytest.mark.parametrize("how", list(RESOLVED))
def test_a_subclass_in_another_module_is_found(tmp_path: Path, how: str) -> None:
    module = "pkg/sub/user.py" if "sub-package" in how else "pkg/user.py"
    reexport = {"pkg/__init__.py": "from .base import Base\n"} if how == "a re-export" else {}
    found = _tree(tmp_path, {module: RESOLVED[how], "pkg/sub/__init__.py": "", **reexport})
    user = "pkg.sub.user" if "sub-package" in how else "pkg.user"
    assert found == {"pkg.base.Base": f"{user}.Sub"}


#: a module that derives from something else -> its text
NOT_SUBCLASSES = {
    "the same module": "",
    "another library's class of the same name": "from other.lib import Base\n\nclass Sub(Base):\n    pass\n",
    "its own class of the same name": (
        "import torch\n\nclass Base(torch.autograd.Function):\n    pass\n\nclass Sub(Base):\n    pass\n"
    ),
    "a plain class of the module": "from .base import Plain\n\nclass Sub(Plain):\n    pass\n",
}


@pytest.mark.parametrize("how", list(NOT_SUBCLASSES))
def test_what_derives_from_something_else_is_not_found(tmp_path: Path, how: str) -> None:
    assert _tree(tmp_path, {"pkg/user.py": NOT_SUBCLASSES[how]}) == {}


def test_a_same_module_subclass_of_a_function_is_a_base_too(tmp_path: Path) -> None:
    found = _tree(tmp_path, {"pkg/user.py": "from .base import Mid\n\nclass Leaf(Mid):\n    pass\n"})
    assert found == {"pkg.base.Mid": "pkg.user.Leaf"}


def test_files_that_cannot_be_read_are_skipped(tmp_path: Path) -> None:
    found = _tree(
        tmp_path,
        {"pkg/broken.py": "class Sub(Base:\n", "pkg/user.py": "from .base import Base\n\nclass Sub(Base):\n    pass\n"},
    )
    assert found == {"pkg.base.Base": "pkg.user.Sub"}


def test_the_package_of_a_file_and_its_modules(tmp_path: Path) -> None:
    for name in ("pkg/__init__.py", "pkg/a.py", "pkg/sub/__init__.py", "pkg/sub/b.py", "pkg/ns/c.py", "pkg/no-id/d.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    assert package_root(tmp_path / "pkg" / "sub" / "b.py", "pkg.sub.b") == (tmp_path / "pkg", "pkg")
    assert package_root(tmp_path / "pkg" / "sub" / "__init__.py", "pkg.sub") == (tmp_path / "pkg", "pkg")
    assert package_root(tmp_path / "alone.py", "alone") is None
    assert sorted(package_files(tmp_path / "pkg", "pkg")) == ["pkg", "pkg.a", "pkg.ns.c", "pkg.sub", "pkg.sub.b"]


def test_a_module_is_told_only_about_its_own_classes() -> None:
    found = {"pkg.a.Base": "pkg.b.Sub", "pkg.ab.Base": "pkg.b.Sub", "pkg.a.Outer.Inner": "pkg.b.Sub2"}
    assert for_module(found, "pkg.a") == {"pkg.a.Base": "pkg.b.Sub"}
    assert for_module(found, None) == {}


#: a file's text -> whether it may define a Function class (what the pass then reads)
MAY_DEFINE = {
    "class A(torch.autograd.Function):\n": True,
    "class A(\n    Base,\n    Function,\n):\n": True,
    "class A(MyFunction):\n": True,
    "from torch.autograd import Function as F\n": True,
    "F = torch.autograd.Function\n": True,
    "class A(make(1), Function):\n": False,
    "def f(Function):\n    pass\n": False,
    "x = 'a Function'\n": False,
    "class A(Base):\n    kind = 'no Function here'\n": False,
}


@pytest.mark.parametrize("text", list(MAY_DEFINE))
def test_files_that_may_define_a_function_class(text: str) -> None:
    assert _may_define(text) is MAY_DEFINE[text]
