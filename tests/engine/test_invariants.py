"""The safe-mode invariant: no rewrite reads a name the original could not have read."""

from __future__ import annotations

import libcst as cst
import pytest
import torch

import inliner.engine.function_class.lower_class as lower_class
from inliner import flatten
from inliner.engine.codes import Code
from inliner.engine.invariants import outside_reads

TWO_CLASSES = """\
import torch


class Broken(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 3


class Fine(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 4

    @staticmethod
    def backward(ctx, g):
        return g * 5
"""


def _function(code: str) -> cst.FunctionDef:
    node = cst.parse_statement(code)
    assert isinstance(node, cst.FunctionDef)
    return node


def test_outside_reads_follow_python_scoping():
    f = _function(
        "@deco(arg)\n"
        "def f(x, y=default):\n"
        "    z = x + g(y)\n"
        "    h = lambda a: a + z + k\n"
        "    return [w for w in z if w > limit], h\n"
    )
    assert outside_reads(f) == {"deco", "arg", "default", "g", "k", "limit"}


@pytest.fixture
def lowering_reads_ctx(monkeypatch):
    """A lowering bug: the fwd of class ``Broken`` keeps a ``ctx`` read."""
    real = lower_class.lower_function_class

    def buggy(node, **kwargs):
        vjp = real(node, **kwargs)
        if node.name.value == "Broken":
            leak = cst.parse_statement("unused = ctx.scale\n")
            body = vjp.fwd.body.with_changes(body=[leak, *vjp.fwd.body.body])
            vjp.fwd = vjp.fwd.with_changes(body=body)
        return vjp

    monkeypatch.setattr(lower_class, "lower_function_class", buggy)


@pytest.mark.engine_bug
def test_a_lowering_that_leaks_ctx_refuses_only_that_class(lowering_reads_ctx):
    result = flatten(TWO_CLASSES, path="m.py")
    assert result.refused == ("Broken",) and result.flattened == ("Fine",)
    (diagnostic,) = [d for d in result.diagnostics if d.code == Code.INVARIANT_VIOLATION]
    assert diagnostic.format().startswith("m.py:4:7: INL003 class Broken: internal error:")
    assert "`ctx`" in diagnostic.message and "report" in diagnostic.message
    assert "class Broken(torch.autograd.Function):" in result.source
    assert "def fine_fwd(x):" in result.source
    compile(result.source, "m.py", "exec")


def test_the_real_code_that_was_rewritten_wrongly_keeps_its_error():
    """`ctx.scale = ctx.scale or ...` reads ctx.scale before it is set: the named lowering
    refuses it, and the ctx record keeps the original's AttributeError, word for word."""
    source = TWO_CLASSES.replace(
        "        return x * 2\n", "        ctx.scale = ctx.scale or x.new_ones(())\n        return x * 2\n", 1
    )
    result = flatten(source, path="m.py")
    assert result.flattened == ("Broken", "Fine")
    assert any(
        d.code == "INL001" and "record" in d.message and "before setting it" in d.message for d in result.diagnostics
    )
    assert "state.scale = state.scale or x.new_ones(())" in result.source
    errors = []
    for text in (source, result.source):
        namespace: dict = {}
        exec(compile(text, "m.py", "exec"), namespace)
        with pytest.raises(AttributeError) as caught:
            namespace["Broken"].apply(torch.ones(2, requires_grad=True))
        errors.append(str(caught.value))
    assert errors[0] == errors[1] == "'BrokenBackward' object has no attribute 'scale'"
