"""Which ctx attributes the engine names for the autograd node (``custom_vjp(ctx_attrs=...)``):
each one backward reads and forward sets on every path, under its own name. Every case is
also run against its original, through ``grad_fn``."""

from __future__ import annotations

from inliner import flatten
from tests.support.harness import assert_same, load_module, run_all


def _flat(source: str) -> str:
    result = flatten(source, path="m.py")
    assert result.refused == (), result.diagnostics
    return result.source


def _behaves_the_same(source: str, label: str) -> str:
    rewritten = _flat(source)
    assert_same(
        run_all(load_module(source, f"{label}_original")), run_all(load_module(rewritten, f"{label}_rewritten")), label
    )
    return rewritten


TUPLE_SET_AND_FORWARD_READ = """
import torch


class Shift(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, a, b):
        ctx.a, ctx.b = a, b
        ctx.total = ctx.a + ctx.b
        return x + ctx.total

    @staticmethod
    def backward(ctx, g):
        return g * ctx.total + ctx.a, None, None


def scenario_write_through_the_node():
    x = torch.randn(3, requires_grad=True)
    out = Shift.apply(x, 1.0, 2.0)
    seen = (out.grad_fn.a, out.grad_fn.b, out.grad_fn.total)
    out.grad_fn.total = 10.0
    return [x], (out, seen)
"""


def test_tuple_sets_and_attributes_forward_reads_back_are_on_the_node():
    rewritten = _behaves_the_same(TUPLE_SET_AND_FORWARD_READ, "tuple_set")
    assert 'ctx_attrs={0: "a", 1: "b", 2: "total"}' in rewritten  # b: on the node, though backward never reads it


DEFAULT_ON_SOME_PATHS = """
import torch


class Maybe(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, keep):
        ctx.k = 3.0
        if keep:
            ctx.kept = x * 2
        return x * ctx.k

    @staticmethod
    def backward(ctx, g):
        kept = getattr(ctx, "kept", None)
        return (g * ctx.k if kept is None else g * kept), None


def scenario_kept():
    x = torch.randn(3, requires_grad=True)
    out = Maybe.apply(x, True)
    out.grad_fn.k = 5.0
    return [x], out


def scenario_not_kept():
    x = torch.randn(3, requires_grad=True)
    out = Maybe.apply(x, False)
    out.grad_fn.k = 5.0
    return [x], (out, hasattr(out.grad_fn, "kept"))
"""


def test_an_attribute_that_starts_at_its_default_stays_off_the_node():
    """On the path that does not set it, the original's node has no such attribute, and a
    residual cannot be absent: the engine leaves it off the node (on every path)."""
    rewritten = _behaves_the_same(DEFAULT_ON_SOME_PATHS, "default_on_some_paths")
    assert 'ctx_attrs={0: "k"}' in rewritten
