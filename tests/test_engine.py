"""Engine contract: pure text in, text out; byte-identical outside rewritten regions."""

from __future__ import annotations

import pytest

from inliner import flatten
from inliner.engine import Selection
from inliner.rewrite import may_contain_candidates

DOUBLE = '''\
class Double(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 3
'''

HEADER = "# -*- coding: utf-8 -*-\n# keep   this    spacing\nimport torch\n\n\n"
FOOTER = "\n\ny = Double.apply(x)  # trailing comment\nz   =   (1,\n   2)\n"


def test_untouched_text_is_byte_identical():
    source = HEADER + DOUBLE + FOOTER
    result = flatten(source)
    assert result.changed and result.flattened == ("Double",)
    new = result.source
    assert "# keep   this    spacing\n" in new
    assert new.endswith("\n\ny = Double(x)  # trailing comment\nz   =   (1,\n   2)\n")
    assert new.startswith("# -*- coding: utf-8 -*-\n# keep   this    spacing\nfrom inliner.runtime import custom_vjp\nimport torch\n")


def test_crlf_line_endings_are_kept():
    source = (HEADER + DOUBLE + FOOTER).replace("\n", "\r\n")
    new = flatten(source).source
    assert "\r\n" in new
    assert new.count("\n") == new.count("\r\n"), "every newline stays CRLF, generated ones too"


def test_tabs_indentation_inside_a_function_is_kept():
    source = "import torch\n\ndef make():\n\tclass D(torch.autograd.Function):\n\t\t@staticmethod\n\t\tdef forward(ctx, x):\n\t\t\treturn x\n\n\t\t@staticmethod\n\t\tdef backward(ctx, g):\n\t\t\treturn g * 2\n\treturn D.apply\n"
    new = flatten(source).source
    compile(new, "<t>", "exec")
    assert "\treturn D\n" in new


def test_file_without_function_is_not_parsed():
    assert not may_contain_candidates("import os\nprint('hello')\n")
    source = "def broken(:\n"  # would not even parse
    assert flatten(source).source == source


def test_syntax_error_is_reported_and_text_left_alone():
    source = "import torch\nclass F(torch.autograd.Function):\n    def forward(ctx, x:\n"
    result = flatten(source, path="bad.py")
    assert result.source == source and result.error
    assert result.diagnostics[0].code == "INL000"
    assert result.diagnostics[0].format().startswith("bad.py:")


def test_class_with_forward_backward_but_not_a_function_is_untouched():
    source = "class Double:\n    @staticmethod\n    def forward(ctx, x):\n        return x\n\n    @staticmethod\n    def backward(ctx, g):\n        return g\n"
    assert flatten(source).source == source


def test_shadowed_function_name_is_not_torch():
    source = "from torch.autograd import Function\nFunction = object\n" + DOUBLE.replace("torch.autograd.Function", "Function")
    result = flatten(source)
    assert not result.changed
    assert result.diagnostics[0].code == "INL105" and "Double" in result.diagnostics[0].message


@pytest.mark.parametrize("select", [Selection(name="Second"), Selection(line=16), Selection.parse("x.py:16")])
def test_selection_rewrites_one_class_and_its_call_sites(select):
    first = DOUBLE.replace("Double", "First")
    second = DOUBLE.replace("Double", "Second")
    source = "import torch\n\n\n" + first + "\n\n" + second + "\n\na = First.apply(x)\nb = Second.apply(x)\n"
    result = flatten(source, select=select)
    assert result.flattened == ("Second",)
    assert "class First(torch.autograd.Function)" in result.source
    assert "a = First.apply(x)" in result.source and "b = Second(x)" in result.source


def test_diagnostic_positions_are_one_based():
    source = "import torch\n\n\nclass H(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n        helper(ctx)\n        return x\n\n    @staticmethod\n    def backward(ctx, g):\n        return g\n"
    result = flatten(source, path="h.py")
    (diag,) = result.diagnostics
    assert diag.format() == "h.py:7:16: INL102 class H: `ctx` is passed to a helper or stored elsewhere; left untouched"
    assert result.refused == ("H",) and not result.changed


def test_runtime_name_collision_uses_an_alias():
    source = "import torch\ncustom_vjp = 1\n\n\n" + DOUBLE
    new = flatten(source).source
    assert "from inliner.runtime import custom_vjp as _inliner_custom_vjp" in new
    assert "Double = _inliner_custom_vjp(" in new


def test_generated_names_avoid_existing_ones():
    source = "import torch\ndouble_fwd = 1\n\n\n" + DOUBLE
    new = flatten(source).source
    assert "def double_fwd_1(x):" in new and "double_fwd = 1" in new


def test_future_import_and_docstring_stay_first():
    source = '"""Doc."""\nfrom __future__ import annotations\nimport torch\n\n\n' + DOUBLE
    new = flatten(source).source
    assert new.startswith('"""Doc."""\nfrom __future__ import annotations\nfrom inliner.runtime import custom_vjp\n')


def test_class_in_class_body_is_refused():
    source = "import torch\n\n\nclass Outer:\n" + "".join("    " + line if line.strip() else line for line in DOUBLE.splitlines(True))
    result = flatten(source)
    assert not result.changed and result.diagnostics[0].code == "INL105"
