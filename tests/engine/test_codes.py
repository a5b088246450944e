"""Every diagnostic code, before and after: an input that produces it, and what the engine does.

A refusal leaves its class (or call) byte-identical and names the code at it; ``INL001``
rewrites; the codes a ctx record replaced are never reported, their example is flattened
with a record instead. Adding a code to ``Code`` without an example here fails
``test_every_code_has_an_example``.
"""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from inliner import flatten
from inliner.engine.codes import Code
from inliner.engine.function_class import lower_class
from inliner.engine.incremental import FlattenCache

HEAD = "import torch\nfrom torch.autograd import Function\n\n\n"


def _function(forward: str, backward: str = "        return g\n", *, extra: str = "") -> str:
    """A Function class ``F`` with the given forward and backward bodies (8-space indented)."""
    return (
        HEAD
        + "class F(Function):\n"
        + extra
        + "    @staticmethod\n    def forward(ctx, x):\n"
        + forward
        + "\n    @staticmethod\n    def backward(ctx, g):\n"
        + backward
    )


def _op_call(fwd_body: str) -> str:
    """A module calling ``autograd_function_apply`` with a forward body ``fwd_body`` (unindented)."""
    return (
        HEAD
        + "from torch._functorch.autograd_function import autograd_function_apply\n\n\n"
        + "def fwd_body(ctx, x):\n"
        + textwrap.indent(fwd_body, "    ")
        + "\n\n\ndef bwd_body(ctx, g, s):\n    return g * s\n\n\n"
        + "def f(x):\n    return autograd_function_apply(fwd_body, bwd_body, x, "
        + "args_tensor_mask=[True], non_differentiable_idx=[])\n"
    )


#: code -> an input that produces it
REFUSED: dict[Code, str] = {
    Code.CTX_UNSUPPORTED: _function("        ctx = None\n        return x * 2\n"),
    Code.CTX_TORCH_ATTRIBUTE: _function("        ctx.needs_input_grad = (True,)\n        return x * 2\n"),
    Code.CTX_ESCAPES: HEAD
    + "STASH = []\n\n\n"
    + _function("        STASH.append(ctx)\n        return x * 2\n")[len(HEAD) :],
    Code.CLASS_SHAPE: _function("        return x * 2\n", extra="    def __init__(self):\n        pass\n\n"),
    Code.DECORATOR: HEAD
    + "def tag(f):\n    return f\n\n\n"
    + _function("        return x * 2\n").replace(
        "    @staticmethod\n    def forward", "    @tag\n    @staticmethod\n    def forward"
    )[len(HEAD) :],
    Code.SIGNATURE: HEAD
    + "class F(Function):\n    @staticmethod\n    def forward(x):\n        return x * 2\n\n"
    + "    @staticmethod\n    def setup_context(ctx, inputs):\n        pass\n\n"
    + "    @staticmethod\n    def backward(ctx, g):\n        return g\n",
    Code.SETUP_CONTEXT_COMPUTES: HEAD
    + "class F(Function):\n    @staticmethod\n    def forward(x):\n        return x * 2\n\n"
    + "    @staticmethod\n    def setup_context(ctx, inputs, output):\n        (x,) = inputs\n"
    + "        ctx.save_for_backward(x.cos())\n\n"
    + "    @staticmethod\n    def backward(ctx, g):\n        (c,) = ctx.saved_tensors\n        return g * c\n",
    Code.USED_AS_FUNCTION: _function("        return x * 2\n") + "\n\nOK = isinstance(object(), F)\n",
    Code.MEANT_AS_BASE: HEAD
    + "class F(Function):\n    @staticmethod\n    def forward(cls, ctx, x):\n        return x * cls.scale\n\n"
    + "    @staticmethod\n    def backward(ctx, g):\n        return g\n",
    Code.OP_BODIES_NOT_FOUND: HEAD
    + "from torch._functorch.autograd_function import autograd_function_apply\n\n\n"
    + "def f(fwd, bwd, x):\n    return autograd_function_apply(fwd, bwd, x, args_tensor_mask=[True], non_differentiable_idx=[])\n",
    Code.OP_CALL_SHAPE: _op_call("return x * 2"),
    Code.OP_BODY_NOT_STRAIGHT_LINE: _op_call("if x.sum() > 0:\n    x = x + 1\nreturn x * 2, (x,)"),
    Code.OP_BODY_GRAD_MODE: _op_call("torch.set_grad_enabled(False)\nreturn x * 2, (x,)"),
}

#: codes whose example is still flattened: the record took over (or the pragma is ignored)
FLATTENED_WITH: dict[Code, str] = {
    Code.CTX_ATTRIBUTE_ON_SOME_PATHS: _function(
        "        if x.sum() > 0:\n            ctx.extra = 1\n        return x * 2\n", "        return g * ctx.extra\n"
    ),
    Code.BACKWARD_WRITES_CTX: _function(
        "        ctx.calls = 0\n        return x * 2\n", "        ctx.calls += 1\n        return g\n"
    ),
    Code.MARKS_UNMATCHED: _function(
        "        out = x * 2\n        ctx.mark_non_differentiable(out.argmax())\n        return out\n"
    ),
    Code.CONDITIONAL_MATERIALIZE_GRADS: _function(
        "        if x.sum() > 0:\n            ctx.set_materialize_grads(False)\n        return x * 2\n"
    ),
    Code.CONDITIONAL_SAVE_FOR_FORWARD: _function(
        "        if x.sum() > 0:\n            ctx.save_for_forward(x)\n        return x * 2\n"
    ),
}

FLATTENED = _function("        return x * 2\n")
PRAGMA = FLATTENED.replace("class F(Function):", "class F(Function):  # inliner: compile=fast")


@pytest.mark.parametrize("code", REFUSED, ids=str)
def test_a_refusal_names_its_code_and_leaves_the_source_alone(code: Code) -> None:
    result = flatten(REFUSED[code], path="m.py")
    assert [d.code for d in result.diagnostics if d.code != Code.FLATTENED] == [code], result.diagnostics
    assert result.source == REFUSED[code] and not result.changed
    (diagnostic,) = [d for d in result.diagnostics if d.code == code]
    label = "class F: " if code < "INL200" else "autograd_function_apply call"
    assert diagnostic.message.startswith(label) and diagnostic.message.endswith("; left untouched")
    assert diagnostic.message.count("class F") <= 1, "the label is added once, by the pipeline"


@pytest.mark.parametrize("code", FLATTENED_WITH, ids=str)
def test_a_code_the_record_replaced_is_not_reported_and_the_class_is_flattened(code: Code) -> None:
    result = flatten(FLATTENED_WITH[code], path="m.py")
    assert [d.code for d in result.diagnostics] == [Code.FLATTENED]
    assert result.flattened == ("F",) and "record" in result.diagnostics[0].message
    code = "\n".join(line for line in result.source.splitlines() if "_reason=" not in line)  # reasons name ctx
    assert "class F" not in code and "ctx." not in code


def test_flattened() -> None:
    result = flatten(FLATTENED, path="m.py")
    assert [d.code for d in result.diagnostics] == [Code.FLATTENED] and result.flattened == ("F",)
    assert "class F" not in result.source and "def f_fwd(x):" in result.source


def test_a_pragma_not_understood_is_ignored_and_the_class_flattened() -> None:
    result = flatten(PRAGMA, path="m.py")
    assert sorted(d.code for d in result.diagnostics) == [Code.FLATTENED, Code.PRAGMA_NOT_UNDERSTOOD]
    assert result.flattened == ("F",)


def test_parse_error() -> None:
    broken = HEAD + "class F(Function):\n    def forward(:\n"
    result = flatten(broken, path="m.py")
    assert [d.code for d in result.diagnostics] == [Code.PARSE_ERROR] and result.source == broken


_FUTURE = "from __future__ import annotations\n"
_COMPILE_ERRORS = {  # name: (what precedes the Function, what follows it, the compiler's message)
    "a repeated parameter": ("", "def helper(a, a):\n    return a\n", "duplicate argument"),
    "return outside a function": ("", "if True:\n    return 1\n", "'return' outside function"),
    "global after an assignment": ("", "limit = 1\nglobal limit\n", "assigned to before global declaration"),
    "global in a module-level block": ("", "limit = 1\nif limit:\n    global limit\n", "prior to global"),
    "a late __future__ import": ("", _FUTURE, "beginning of the file"),
    "a __future__ feature the later statements get": (
        _FUTURE,
        "def helper(x: (y := 1)):\n    return x\n",  # compiles without the feature
        "within an annotation",
    ),
    "an error after __future__ imports": (_FUTURE, "def helper(a, a):\n    return a\n", "duplicate argument"),
}


@pytest.mark.parametrize("name", list(_COMPILE_ERRORS))
def test_what_only_the_compiler_finds_is_reported_with_or_without_a_cache(name: str) -> None:
    """Statements are compiled one by one and remembered; what ties them together
    (module-level ``global``, ``__future__`` imports) is compiled whole, so nothing is missed."""
    head, tail, message = _COMPILE_ERRORS[name]
    good = head + FLATTENED + "\n\nvalue = 1\n"
    bad = head + FLATTENED + "\n\n" + tail
    cache = FlattenCache()
    assert flatten(good, path="m.py", cache=cache).flattened == ("F",)
    for result in (flatten(bad, path="m.py", cache=cache), flatten(bad, path="m.py")):
        (diagnostic,) = result.diagnostics
        assert diagnostic.code == Code.PARSE_ERROR and message in diagnostic.message, diagnostic.format()
        assert diagnostic.line > FLATTENED.count("\n") and result.source == bad


@pytest.mark.engine_bug
def test_internal_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(node, **kwargs):
        raise KeyError("boom")

    monkeypatch.setattr(lower_class, "lower_function_class", broken)
    result = flatten(FLATTENED, path="m.py")
    assert [d.code for d in result.diagnostics] == [Code.INTERNAL_ERROR] and result.source == FLATTENED


@pytest.mark.engine_bug
def test_invariant_violation(monkeypatch: pytest.MonkeyPatch) -> None:
    real = lower_class.lower_function_class

    def leaks_ctx(node, **kwargs):
        vjp = real(node, **kwargs)
        leak = cst.parse_statement("unused = ctx.scale\n")
        vjp.fwd = vjp.fwd.with_changes(body=vjp.fwd.body.with_changes(body=[leak, *vjp.fwd.body.body]))
        return vjp

    monkeypatch.setattr(lower_class, "lower_function_class", leaks_ctx)
    result = flatten(FLATTENED, path="m.py")
    assert [d.code for d in result.diagnostics] == [Code.INVARIANT_VIOLATION] and result.source == FLATTENED


def test_every_code_has_an_example() -> None:
    elsewhere = {
        Code.PARSE_ERROR,
        Code.FLATTENED,
        Code.INTERNAL_ERROR,
        Code.INVARIANT_VIOLATION,
        Code.PRAGMA_NOT_UNDERSTOOD,
    }
    assert set(REFUSED) | set(FLATTENED_WITH) | elsewhere == set(Code)
    assert not (set(REFUSED) & set(FLATTENED_WITH))
