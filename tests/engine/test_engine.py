"""Engine contract: pure text in, text out; byte-identical outside rewritten regions."""

from __future__ import annotations

import pytest

from inliner import flatten
from inliner.engine import Selection
from inliner.engine.read import may_contain_candidates
from tests.support.harness import assert_same, load_module, run_all
from tests.support.paths import DOCS, ROOT

DOUBLE = """\
class Double(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 3
"""

HEADER = "# -*- coding: utf-8 -*-\n# keep   this    spacing\nimport torch\n\n\n"
FOOTER = "\n\ny = Double.apply(x)  # trailing comment\nz   =   (1,\n   2)\n"


def test_untouched_text_is_byte_identical():
    source = HEADER + DOUBLE + FOOTER
    result = flatten(source)
    assert result.changed and result.flattened == ("Double",)
    new = result.source
    assert "# keep   this    spacing\n" in new
    assert new.endswith("\n\ny = Double(x)  # trailing comment\nz   =   (1,\n   2)\n")
    # `import torch` goes: only the class used it
    assert new.startswith(
        "# -*- coding: utf-8 -*-\n# keep   this    spacing\nfrom inliner.runtime import custom_vjp\n\n\ndef "
    )


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
    source = "from torch.autograd import Function\nFunction = object\n" + DOUBLE.replace(
        "torch.autograd.Function", "Function"
    )
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
    assert (
        diag.format()
        == "h.py:7:16: INL102 class H: `ctx` is passed to `helper`, whose body the engine cannot check; left untouched"
    )
    assert result.refused == ("H",) and not result.changed


def test_runtime_name_collision_uses_an_alias():
    source = "import torch\ncustom_vjp = 1\n\n\n" + DOUBLE
    new = flatten(source).source
    assert "from inliner.runtime import custom_vjp as _inliner_custom_vjp" in new
    assert "Double = _inliner_custom_vjp(" in new


TWO_FUNCTIONS = (
    DOUBLE.replace("Double", "First")
    + "\n\n"
    + DOUBLE.replace("Double", "Second").replace("g * 3", "g * 5")
    + """

def scenario_both():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    return [x], (First.apply(x), Second.apply(x * x))
"""
)


@pytest.mark.parametrize("header", ["", "custom_vjp = 'mine'\n"])  # the runtime's import: plain, aliased
def test_a_second_selection_reuses_the_runtime_import_the_first_added(header):
    """Flatten one class, then the other (the editor's "Flatten" twice): one runtime import."""
    source = "import torch\n" + header + "\n\n" + TWO_FUNCTIONS
    once = flatten(source, select=Selection(name="First"))
    twice = flatten(once.source, select=Selection(name="Second"))
    assert once.flattened == ("First",) and twice.flattened == ("Second",)
    (runtime_import,) = [line for line in twice.source.splitlines() if "inliner.runtime" in line]
    assert runtime_import in once.source
    assert_same(run_all(load_module(source, "original")), run_all(load_module(twice.source, "twice")))


RUNTIME_IMPORT = "from inliner.runtime import custom_vjp\n"


@pytest.mark.parametrize(
    "header, footer",
    [
        (RUNTIME_IMPORT + "custom_vjp = None\n", ""),  # rebound after the import
        (RUNTIME_IMPORT, "\ndef rebind():\n    global custom_vjp\n    custom_vjp = None\n"),
        (RUNTIME_IMPORT, "\nglobals()[name] = None\n"),  # a name known only at run time
        ("if torch.cuda.is_available():\n    " + RUNTIME_IMPORT, ""),  # not for the module's whole run
        ("", "\n" + RUNTIME_IMPORT),  # only after the classes
    ],
)
def test_a_runtime_import_the_module_may_not_hold_is_not_reused(header, footer):
    source = "import torch\n" + header + "\n\n" + TWO_FUNCTIONS + footer
    result = flatten(source, select=Selection(name="First"))
    assert result.flattened == ("First",)
    assert "First = _inliner_custom_vjp(" in result.source
    assert "from inliner.runtime import custom_vjp as _inliner_custom_vjp\n" in result.source


def test_generated_names_avoid_existing_ones():
    source = "import torch\ndouble_fwd = 1\n\n\n" + DOUBLE
    new = flatten(source).source
    assert "def double_fwd_1(x):" in new and "double_fwd = 1" in new


def test_future_import_and_docstring_stay_first():
    source = '"""Doc."""\nfrom __future__ import annotations\nimport torch\n\n\n' + DOUBLE + "\ntorch\n"
    new = flatten(source).source
    assert new.startswith(
        '"""Doc."""\nfrom __future__ import annotations\nimport torch\nfrom inliner.runtime import custom_vjp\n'
    )
    alone = flatten('"""Doc."""\nfrom __future__ import annotations\nimport torch\n\n\n' + DOUBLE).source
    assert alone.startswith(
        '"""Doc."""\nfrom __future__ import annotations\n\nfrom inliner.runtime import custom_vjp\n\n\ndef '
    )


def test_class_in_class_body_is_refused():
    source = "import torch\n\n\nclass Outer:\n" + "".join(
        "    " + line if line.strip() else line for line in DOUBLE.splitlines(True)
    )
    result = flatten(source)
    assert not result.changed and result.diagnostics[0].code == "INL105"


# --- an internal error is part of the result, never an exception ----------------------------


@pytest.mark.engine_bug
def test_an_internal_error_in_one_class_refuses_it_and_flattens_the_others(monkeypatch):
    import inliner.engine.function_class.lower_class

    real = inliner.engine.function_class.lower_class.lower_function_class

    def lowering(node, **kwargs):
        if node.name.value == "Second":
            raise KeyError("boom")
        return real(node, **kwargs)

    monkeypatch.setattr(inliner.engine.function_class.lower_class, "lower_function_class", lowering)
    second = DOUBLE.replace("Double", "Second")
    source = "import torch\n\n\n" + DOUBLE + "\n\n" + second + "\n\na = Double.apply(x)\nb = Second.apply(x)\n"
    result = flatten(source, path="m.py")
    assert result.error is None and result.changed
    assert result.flattened == ("Double",) and result.refused == ("Second",)
    assert second in result.source and "b = Second.apply(x)" in result.source, "the failed class is byte-identical"
    assert "a = Double(x)" in result.source and "class Double" not in result.source
    (diagnostic,) = [d for d in result.diagnostics if d.name == "Second"]
    line = source.splitlines().index("class Second(torch.autograd.Function):") + 1
    assert (diagnostic.code, diagnostic.severity, diagnostic.line, diagnostic.column) == ("INL002", "warning", line, 7)
    assert diagnostic.end_line == line and diagnostic.end_column == 13  # the class name
    assert diagnostic.format().startswith(
        f"m.py:{line}:7: INL002 class Second: internal error (KeyError: 'boom' at test_engine.py:"
    )
    assert diagnostic.message.endswith("please report this as an inliner bug; left untouched")


@pytest.mark.engine_bug
@pytest.mark.parametrize("where", ["resolve", "lower_hop", "cleanup"])  # finding, lowering, after naming it
def test_an_internal_error_in_one_op_call_refuses_it_and_flattens_the_other(monkeypatch, where):

    import inliner.engine.op_call.lower_call

    real = getattr(inliner.engine.op_call.lower_call, where)

    def failing(first, *args, **kwargs):  # the op call's site, or (lower_hop) the flat function's name
        if first.startswith("SaveIntermediate") if isinstance(first, str) else first.call.args[0].id == "fwd_body_1":
            raise ValueError("boom")
        return real(first, *args, **kwargs)

    monkeypatch.setattr(inliner.engine.op_call.lower_call, where, failing)
    source = (ROOT / "golden" / "hop_two_calls" / "input.py").read_text()
    source += "\n\nSaveInputs = SaveIntermediate = None  # taken: the flat functions get other names\n"
    result = flatten(source, path="dump.py")
    assert result.error is None and result.changed
    name = "autograd_function_apply" if where == "resolve" else "SaveIntermediate"  # named once resolved
    assert result.flattened == ("SaveInputs_1",) and result.refused == (name,)
    call = "torch.ops.higher_order.autograd_function_apply(fwd_body_1, bwd_body_1, l_x_,"
    assert call in result.source and "class fwd_body_1" in result.source
    assert "autograd_function_apply(fwd_body_0" not in result.source
    (diagnostic,) = [d for d in result.diagnostics if d.code == "INL002"]
    lines = source.splitlines()
    line = next(i for i, text in enumerate(lines, 1) if call in text)
    assert (diagnostic.name, diagnostic.line, diagnostic.column) == (name, line, lines[line - 1].index("torch.ops") + 1)
    assert "internal error (ValueError: boom at test_engine.py:" in diagnostic.message


@pytest.mark.engine_bug
def test_an_internal_error_in_the_whole_file_is_the_results_error(monkeypatch):
    import inliner.engine.read

    def broken(*args, **kwargs):
        raise RecursionError("too deep")

    monkeypatch.setattr(inliner.engine.read.ScopeIndex, "build", broken)
    source = "import torch\n\n\n" + DOUBLE
    result = flatten(source, path="m.py")  # does not raise
    assert result.source == source and not result.changed and not result.flattened
    assert result.error.startswith("internal error: RecursionError: too deep at test_engine.py:")
    assert result.error.endswith("please report this as an inliner bug")
    (diagnostic,) = result.diagnostics
    assert (diagnostic.code, diagnostic.severity, diagnostic.line, diagnostic.column) == ("INL002", "error", 1, 1)
    assert diagnostic.format().startswith(
        "m.py:1:1: INL002 internal error (RecursionError: too deep at test_engine.py:"
    )


def test_every_diagnostic_code_is_in_the_docs_table():
    import re

    from inliner.engine.codes import Code

    page = (DOCS / "diagnostics.md").read_text()
    assert re.findall(r"^\| `(INL\d{3})` \|", page, re.MULTILINE) == sorted(c.value for c in Code)
