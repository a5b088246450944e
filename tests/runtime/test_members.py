"""``F.forward`` and ``F.backward`` on a flat callable (``inliner.runtime._members``): code
the rewrite did not see reads, wraps and patches them as on the original Function
(gpytorch's own tests do ``patch.object(F, "forward", wraps=F.forward)`` and check that
the forward ran). Each test runs the original and the rewrite side by side."""

from __future__ import annotations

import types
from unittest.mock import patch

import pytest
import torch

from inliner import flatten
from tests.support.harness import load_module

SOURCE = '''
import torch


class Compute(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        """The predictive update."""
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        return g * b * 3, g * a
'''


@pytest.fixture(scope="module")
def pair() -> tuple[types.ModuleType, types.ModuleType]:
    result = flatten(SOURCE, path="members.py")
    assert result.flattened == ("Compute",), [d.format() for d in result.diagnostics]
    return load_module(SOURCE, "members_original"), load_module(result.source, "members_flat")


def _call(module: types.ModuleType) -> tuple[torch.Tensor, tuple[torch.Tensor, ...]]:
    torch.manual_seed(0)
    a, b = torch.randn(3, requires_grad=True), torch.randn(3, requires_grad=True)
    out = module.Compute.apply(a, b)
    return out.detach(), torch.autograd.grad(out.sum(), (a, b))


def test_a_wrapped_forward_and_backward_see_every_eager_call(pair):
    counts = []
    for module in pair:
        fn = module.Compute
        with (
            patch.object(fn, "forward", wraps=fn.forward) as forward,
            patch.object(fn, "backward", wraps=fn.backward) as backward,
        ):
            results = [_call(module), _call(module)]
        counts.append((forward.call_count, backward.call_count))
        _call(module)  # the patch is gone: nothing more is counted
        assert (forward.call_count, backward.call_count) == counts[-1]
        assert fn.forward is not forward and fn.backward is not backward
        counts.append(results)
    (original_counts, original_results), (flat_counts, flat_results) = counts[:2], counts[2:]
    assert original_counts == flat_counts == (2, 2)
    for (out, grads), (want_out, want_grads) in zip(flat_results, original_results, strict=True):
        assert torch.equal(out, want_out)
        assert all(torch.equal(g, w) for g, w in zip(grads, want_grads, strict=True))


def test_a_replaced_forward_runs_in_its_place(pair):
    """A patch that changes what forward does changes the call, on the original as on the
    rewrite (the custom backward stays)."""
    outs = []
    for module in pair:
        fn = module.Compute
        real = fn.forward

        def doubled(ctx, a, b, real=real):
            return real(ctx, a, b) * 2

        with patch.object(fn, "forward", doubled):
            outs.append(_call(module))
    (out, grads), (want_out, want_grads) = outs[1], outs[0]
    assert torch.equal(out, want_out)
    assert all(torch.equal(g, w) for g, w in zip(grads, want_grads, strict=True))


def test_the_members_are_named_and_documented_as_the_original_s(pair):
    original, flat = pair
    assert flat.Compute.forward.__qualname__ == "Compute.forward"
    assert flat.Compute.forward.__doc__ == original.Compute.forward.__doc__
    assert flat.Compute.backward.__name__ == "backward"
