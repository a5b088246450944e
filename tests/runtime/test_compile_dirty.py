"""``mark_dirty`` under torch.compile (``inliner.runtime._dynamo._dirty_call``).

When the input a Function modifies in place is an input of the compiled region,
AOTAutograd takes the modification (made under forward's ``no_grad``) as hidden from
autograd: the input keeps its old history and its gradient skips the custom backward
(torch 2.13; the original, through the higher-order op, loses it too). The rewrite's graph
node dirties a clone and copies it back with autograd recording the copy, so the
compiled rewrite gives the *eager* original's gradients, through the output and through
the modified input; a ctx record that may dirty inputs, and a dirty input passed twice,
break the graph instead (the call runs eagerly, with one warning).
"""

from __future__ import annotations

import pytest
import torch
import torch._dynamo

from inliner import flatten
from inliner.runtime import CompileFallbackWarning
from tests.support.harness import load_module

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

SOURCE = """\
import torch


class Dirty(torch.autograd.Function):
    @staticmethod
    def forward(ctx, w, x):
        x.mul_(2.0)
        ctx.mark_dirty(x)
        ctx.save_for_backward(w)
        return x

    @staticmethod
    def backward(ctx, g):
        (w,) = ctx.saved_tensors
        return g * 3.0, g * w * 4.0  # not the true derivative


class MaybeDirty(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, inplace):
        if inplace:
            x.mul_(2)
            ctx.mark_dirty(x)
            return x
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 3, None
"""

WEIGHTS = torch.tensor([1.0, 2.0, 3.0])


@pytest.fixture(scope="module")
def modules():
    result = flatten(SOURCE)
    assert set(result.flattened) == {"Dirty", "MaybeDirty"}
    return load_module(SOURCE, "dirty_original"), load_module(result.source, "dirty_rewrite")


@pytest.fixture(autouse=True)
def _fresh():
    from inliner.runtime import _fallback

    torch._dynamo.reset()
    _fallback._fallback_names.clear()
    yield
    torch._dynamo.reset()


def _grads(fn, through: str, needs_grad: bool = True):
    """Call ``fn(w, x)`` with ``x`` a non-leaf input of the region; the gradients of the
    leaves of a loss on the output or on the modified input itself."""
    torch.manual_seed(0)
    w = torch.randn(3, requires_grad=True)
    leaf = torch.randn(3, requires_grad=needs_grad)
    x = leaf * 1
    out = fn(w, x)
    target = out if through == "output" else x
    leaves = [w, leaf] if needs_grad else [w]
    grads = torch.autograd.grad((target * WEIGHTS).sum(), leaves, allow_unused=True)
    return [None if g is None else g.detach() for g in grads], out.detach(), x.detach()


def _same(a, b):
    return len(a) == len(b) and all(
        (x is None and y is None) or (x is not None and y is not None and torch.allclose(x, y)) for x, y in zip(a, b)
    )


@pytest.mark.parametrize("through", ["output", "input"])
@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_a_dirty_region_input_gets_the_eager_custom_gradient(modules, backend, through):
    original, rewrite = modules
    want, want_out, want_x = _grads(lambda w, x: original.Dirty.apply(w, x), through)
    compiled = torch.compile(lambda w, x: rewrite.Dirty(w, x), backend=backend, fullgraph=True)
    for _ in range(3):
        got, out, x = _grads(compiled, through)
        assert _same(got, want), (got, want)
        assert torch.equal(out, want_out) and torch.equal(x, want_x)


def test_the_compiled_original_loses_it_on_torch_2_13(modules):
    """What the fix is measured against: on torch 2.13 the original under torch.compile
    gives the bare cotangent to the dirty input (2.9.1 keeps the custom gradient)."""
    original, _ = modules
    want, _, _ = _grads(lambda w, x: original.Dirty.apply(w, x), "output")
    got, _, _ = _grads(torch.compile(lambda w, x: original.Dirty.apply(w, x), backend="aot_eager"), "output")
    if torch.__version__.startswith("2.9."):
        assert _same(got, want)
        return
    assert not _same(got, want)
    assert torch.equal(got[1], WEIGHTS)  # d(out * WEIGHTS)/d(leaf) without the custom backward


def test_a_dirty_input_that_needs_no_grad_takes_the_custom_history(modules):
    original, rewrite = modules
    want, _, _ = _grads(lambda w, x: original.Dirty.apply(w, x), "input", needs_grad=False)
    compiled = torch.compile(lambda w, x: rewrite.Dirty(w, x), backend="aot_eager", fullgraph=True)
    got, _, _ = _grads(compiled, "input", needs_grad=False)
    assert _same(got, want), (got, want)


def test_a_record_that_may_dirty_runs_eagerly_with_one_warning(modules):
    from inliner.runtime import _fallback

    original, rewrite = modules
    for inplace in (True, False):
        want, _, _ = _grads(lambda w, x: original.MaybeDirty.apply(x, inplace) * w, "output")  # noqa: B023
        torch._dynamo.reset()
        _fallback._fallback_names.clear()
        compiled = torch.compile(lambda w, x: rewrite.MaybeDirty(x, inplace) * w, backend="aot_eager")  # noqa: B023
        with pytest.warns(CompileFallbackWarning, match="MaybeDirty runs eagerly"):
            got, _, _ = _grads(compiled, "output")
        assert _same(got, want), (inplace, got, want)


def test_a_dirty_input_passed_twice_runs_eagerly(modules):
    original, rewrite = modules

    def twice(F):
        def body(w, x):
            return F(x, x)  # forward modifies x, then saves it (as w): eager sees the change

        return body

    want, want_out, _ = _grads(twice(original.Dirty.apply), "output")
    with pytest.warns(CompileFallbackWarning, match="also passed as another argument"):
        got, out, _ = _grads(torch.compile(twice(rewrite.Dirty), backend="aot_eager"), "output")
    assert _same(got, want) and torch.equal(out, want_out)


def test_a_dirty_leaf_raises_as_in_eager(modules):
    original, rewrite = modules
    w, leaf = torch.randn(3, requires_grad=True), torch.randn(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        original.Dirty.apply(w, leaf)
    with pytest.raises(Exception, match="leaf"):
        torch.compile(lambda w, x: rewrite.Dirty(w, x), backend="aot_eager")(w, leaf)
