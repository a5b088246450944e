"""A backward that gives a gradient for an input that needs none (a number, a module, a
dataclass passed to forward; found by torch's own dynamo test of autograd.Function,
``test_nn_module_dataclasses_as_inputs``). Eager autograd raises on it at backward time,
original and rewrite alike; the compiled original drops it (``autograd_function_apply``
differentiates its tensor inputs alone), and so does the rewrite's graph node, where it
raised while AOTAutograd traced the backward, at the forward call.
"""

from __future__ import annotations

import pytest
import torch
import torch._dynamo

from inliner import flatten
from tests.support.harness import TORCH_2_13, load_module

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


SOURCE = """
import dataclasses

import torch


@dataclasses.dataclass
class Data:
    count: int
    values: torch.Tensor


class Mixes(torch.autograd.Function):
    @staticmethod
    def forward(ctx, module, data, x):
        return module.b * data.count * data.values + x, data.values + x

    @staticmethod
    def backward(ctx, grad, grad_values):
        return grad * 4, None, grad * 2 + grad_values


class Scaled(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        return x * scale

    @staticmethod
    def backward(ctx, g):
        return g * 3, g * 5
"""


@pytest.fixture(scope="module")
def modules():
    result = flatten(SOURCE, path="graph_gradients.py")
    assert set(result.flattened) == {"Mixes", "Scaled"}, [d.format() for d in result.diagnostics]
    return load_module(SOURCE, "graph_gradients_original"), load_module(result.source, "graph_gradients_flat")


def _grad(module, compiled: bool, backend: str = "aot_eager") -> torch.Tensor:
    torch._dynamo.reset()
    mixes = module.Mixes.apply if isinstance(module.Mixes, type) else module.Mixes
    scaled = module.Scaled.apply if isinstance(module.Scaled, type) else module.Scaled
    holder = torch.nn.Module()
    holder.b = torch.ones(2, 2) * 0.5

    def body(data, x):
        y, v = mixes(holder, data, x)
        return y + v + scaled(x, 2.0)

    run = torch.compile(body, backend=backend, fullgraph=True) if compiled else body
    torch.manual_seed(0)
    x = torch.randn(2, 2, requires_grad=True)
    run(module.Data(3, torch.randn(2, 2)), x).sum().backward()
    return x.grad


@pytest.mark.parametrize("backend", ["aot_eager", "eager"])
def test_the_compiled_call_drops_a_gradient_for_an_input_that_needs_none(modules, backend):
    """(torch 2.9's dynamo refuses to compile the original: "Grad of non-Tensor arg ... is
    not None".)"""
    original, flat = modules
    assert flat.Mixes.compile_path == flat.Scaled.compile_path == "graph"
    want = torch.full((2, 2), 2.0 + 1.0 + 3.0)  # the custom backwards, x only
    assert torch.equal(_grad(flat, compiled=True, backend=backend), want)
    if TORCH_2_13:
        assert torch.equal(_grad(original, compiled=True, backend=backend), want)
    else:
        with pytest.raises(Exception, match="Grad of non-Tensor arg"):
            _grad(original, compiled=True, backend=backend)


def test_eager_still_raises_as_the_original_does(modules):
    for module in modules:
        with pytest.raises(RuntimeError, match="returned a gradient different than None"):
            _grad(module, compiled=False)
