"""The imports around a rewrite: where the runtime's goes, which ones the rewrite removes,
and every reason it keeps one."""

from __future__ import annotations

import subprocess
import sys

import pytest

from inliner import flatten
from inliner.engine.imports import TORCH_MODULES

FUNCTION = """

class Twice({base}):
    @staticmethod
    def forward(ctx{annotation}, x){returns}:
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 3
"""


def _head(
    imports: str, *, base: str = "Function", annotation: str = "", returns: str = "", tail: str = "", path: str = "m.py"
) -> str:
    """The rewritten module up to its first function: what the import edits touched."""
    source = imports + FUNCTION.format(base=base, annotation=annotation, returns=returns) + tail
    result = flatten(source, path=path)
    assert result.flattened == ("Twice",), result.diagnostics
    return result.source[: result.source.index("\n\ndef ")]


PLACED = [
    pytest.param(
        "import torch\nfrom torch.autograd import Function\n",
        {},
        "import torch\nfrom inliner.runtime import custom_vjp\n",
        id="after-plain-imports-of-its-section",
    ),
    pytest.param(
        "from __future__ import annotations\n\nimport math\n\nimport torch\nimport torch.nn as nn\nfrom torch.autograd import Function\n",
        {"tail": "\nmath, nn\n"},
        "from __future__ import annotations\n\nimport math\n\nimport torch\nimport torch.nn as nn\nfrom inliner.runtime import custom_vjp\n",
        id="into-torch-section-not-above-future-or-stdlib",
    ),
    pytest.param(
        '"""Doc."""\n\nimport os\n\nfrom torch.autograd import Function, gradcheck\nfrom torch.nn import Linear\n',
        {"tail": "\nos, gradcheck, Linear\n"},
        '"""Doc."""\n\nimport os\n\nfrom inliner.runtime import custom_vjp\nfrom torch.autograd import gradcheck\nfrom torch.nn import Linear\n',
        id="before-a-later-module-and-one-name-of-a-line-dropped",
    ),
    pytest.param(
        "import math\nx = 1\nimport torch\n",
        {"base": "torch.autograd.Function", "tail": "\nmath, torch\n"},
        "import math\n\nfrom inliner.runtime import custom_vjp\n\nx = 1\nimport torch\n",
        id="a-section-of-its-own-after-standard-library-imports",
    ),
    pytest.param(
        "import torch\n\nfrom torch.autograd import Function\n\nimport numpy as np\n",
        {"tail": "\nnp\n"},
        "import torch\nfrom inliner.runtime import custom_vjp\n\nimport numpy as np\n",
        id="an-emptied-section-leaves-one-separator",
    ),
    pytest.param(
        "from torch.autograd import (\n    gradcheck,  # kept\n    Function,  # the base\n)\n",
        {"tail": "\ngradcheck\n"},
        "from inliner.runtime import custom_vjp\nfrom torch.autograd import (\n    gradcheck,  # kept\n)\n",
        id="a-parenthesised-name-goes-with-its-line",
    ),
    pytest.param(
        "from typing import Any, Optional\n\nimport torch\nfrom torch.autograd import Function\nfrom torch.autograd.function import FunctionCtx\n",
        {"annotation": ": FunctionCtx", "returns": " -> Any", "tail": "\nOptional\n"},
        "from typing import Optional\n\nimport torch\nfrom inliner.runtime import custom_vjp\n",
        id="annotation-names-only-the-class-used",
    ),
]


@pytest.mark.parametrize(("imports", "options", "expected"), PLACED)
def test_runtime_import_placed_and_unused_removed(imports, options, expected):
    assert _head(imports, **options) == expected


BASE = "from torch.autograd import Function"
KEPT = [
    pytest.param(f"import torch\n{BASE}\n__all__ = ['Function']\n", {}, BASE, id="in-__all__"),
    pytest.param(
        f"import torch\n{BASE}\n", {"tail": "\n\ndef f(x: 'Function'):\n    pass\n"}, BASE, id="in-a-string-annotation"
    ),
    pytest.param(f"import torch\n{BASE}  # noqa: F401\n", {}, BASE + "  # noqa: F401", id="noqa"),
    pytest.param(f"import torch\n{BASE} as Function\n", {}, BASE + " as Function", id="explicit-re-export"),
    pytest.param(f"import torch\n{BASE}\n", {"path": "pkg/__init__.py"}, BASE, id="package-init"),
    pytest.param(f"import torch\n{BASE}\n", {"tail": "\nglobals()\n"}, BASE, id="globals-read-by-name"),
    pytest.param(
        f"import torch\n{BASE}\nfrom mylib import Base\n",
        {"returns": " -> Base"},
        "from mylib import Base",
        id="third-party-may-have-import-effects",
    ),
    pytest.param(
        f"import torch\nimport torch.utils.checkpoint as checkpoint\n{BASE}\n",
        {"returns": " -> checkpoint.X"},
        "import torch.utils.checkpoint as checkpoint",
        id="torch-module-import-torch-may-not-load",
    ),
    pytest.param(
        f"import torch\n{BASE}\nfrom typing import Any\n", {}, "from typing import Any", id="unused-before-the-rewrite"
    ),
]


@pytest.mark.parametrize(("imports", "options", "stays"), KEPT)
def test_imports_that_stay(imports, options, stays):
    assert stays in _head(imports, **options).splitlines()


def test_star_and_other_conditional_imports_are_not_touched():
    imports = "import torch\nfrom torch.autograd import *\nimport sys\nif sys.version_info >= (3, 8):\n    from torch.autograd.function import FunctionCtx\n"
    source = (
        imports + FUNCTION.format(base="torch.autograd.Function", annotation=": 'FunctionCtx'", returns="") + "\nsys\n"
    )
    result = flatten(source, path="m.py")
    assert "from torch.autograd import *\n" in result.source
    assert "    from torch.autograd.function import FunctionCtx\n" in result.source


def test_torch_modules_are_loaded_by_import_torch():
    """Dropping an import of one of these changes nothing: ``import torch`` (which the
    runtime does) has loaded it already."""
    code = "import sys, torch; print('\\n'.join(sorted(sys.modules)))"
    loaded = set(
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    )
    assert loaded >= TORCH_MODULES, sorted(TORCH_MODULES - loaded)


def test_type_checking_imports_go_and_an_emptied_block_with_them():
    imports = "from typing import TYPE_CHECKING\n\nimport torch\n\nif TYPE_CHECKING:\n    from mylib import Context\n"
    assert _head(imports, base="torch.autograd.Function", annotation=": Context", tail="\ntorch\n") == (
        "import torch\nfrom inliner.runtime import custom_vjp\n"
    )
    kept = (
        "from typing import TYPE_CHECKING\n\nimport torch\n\nif TYPE_CHECKING:\n    from mylib import Context, Other\n"
    )
    assert _head(kept, base="torch.autograd.Function", annotation=": Context", tail="\nx: 'Other' = torch\n") == (
        "from typing import TYPE_CHECKING\n\nimport torch\nfrom inliner.runtime import custom_vjp\n\nif TYPE_CHECKING:\n    from mylib import Other\n"
    )


def _in_function(prelude: str, after: str = "") -> str:
    """A module whose Function is defined in ``make``, below ``prelude`` (the function's first lines)."""
    body = FUNCTION.format(base="Function", annotation="", returns="").strip("\n")
    indented = "\n".join("    " + line if line else "" for line in body.splitlines())
    source = f"import torch\n\n\ndef make():\n{prelude}\n{indented}\n{after}    return Twice.apply\n"
    result = flatten(source)
    assert result.flattened == ("Twice",), result.diagnostics
    return result.source


def test_an_import_in_a_function_that_the_rewrite_left_unused_goes():
    out = _in_function("    from torch.autograd import Function\n")
    assert "def make():\n    def twice_fwd(x):" in out  # the blank line after it went too
    assert "Function" not in out


@pytest.mark.parametrize(
    "prelude, after",
    [
        pytest.param("    from torch.autograd import Function\n", "    print(Function)\n", id="still-used"),
        pytest.param("    from torch.autograd import Function  # noqa\n", "", id="noqa"),
        pytest.param("    from torch.autograd import Function\n", "    print(locals())\n", id="locals-read"),
    ],
)
def test_an_import_in_a_function_that_stays(prelude, after):
    out = _in_function(prelude, after)
    assert prelude.strip() in out


def test_a_function_import_of_another_name_stays():
    out = _in_function("    from torch.autograd import Function, grad\n", "    print(grad)\n")
    assert "    from torch.autograd import grad\n" in out


@pytest.mark.parametrize(
    "head",
    [
        pytest.param("from torch.autograd import Function\n\n\n", id="the-only-import-removed"),
        pytest.param("from torch.autograd import Function\n\n\n# about Twice\n", id="a-comment-above-the-class"),
    ],
)
def test_the_runtime_import_is_two_blank_lines_above_a_definition(head):
    """pycodestyle's E302: a top-level definition right after the import wants two blank lines."""
    out = flatten(head + FUNCTION.format(base="Function", annotation="", returns="").lstrip("\n")).source
    assert out.startswith("from inliner.runtime import custom_vjp\n\n\n")
    assert not out.startswith("from inliner.runtime import custom_vjp\n\n\n\n")
