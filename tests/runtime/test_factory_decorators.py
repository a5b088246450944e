"""A Function made by a factory, its methods under ``@torch.no_grad()``, the factory called
inside a compiled function (found by the differential fuzzer, seed 710080; golden case
``factory_decorators``, whose tracer driver makes it outside the compiled call).

The original's class statement breaks dynamo's graph before its decorators are evaluated.
The rewrite's ``custom_vjp`` call breaks it too, but dynamo evaluated the arguments first:
handed across that break, a ``torch.no_grad()`` it built turned grad mode off for the rest
of the frame and after it (torch 2.13), so the output did not require grad and grad mode
stayed off. Inside a function the engine now writes the decorators as a function that
returns them, which ``custom_vjp`` calls.
"""

from __future__ import annotations

import pytest
import torch
import torch._dynamo

from inliner import flatten
from tests.support.golden import GOLDEN
from tests.support.harness import load_module

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

#: the golden case's original: ``make(power)`` returns ``Scale.apply``
SOURCE = (GOLDEN / "factory_decorators" / "input.py").read_text()


def _run(module, compiled: bool) -> tuple[bool, torch.Tensor, bool]:
    torch._dynamo.reset()

    def body(t):
        return module.make(2.0)(t * 1)

    run = torch.compile(body, backend="aot_eager") if compiled else body
    torch.manual_seed(0)
    x = torch.randn(3, requires_grad=True)
    out = run(x)
    requires_grad, enabled = out.requires_grad, torch.is_grad_enabled()
    torch.set_grad_enabled(True)  # what the bug left off
    if requires_grad:
        out.sum().backward()
    return requires_grad, x.grad, enabled


def test_the_decorators_are_written_as_a_function_inside_the_factory():
    result = flatten(SOURCE, path="factory_decorators.py")
    assert "forward_decorators=lambda: (torch.no_grad(),)" in result.source
    assert "backward_decorators=lambda: (torch.no_grad(),)" in result.source


def test_a_factory_with_no_grad_methods_compiles_as_the_original():
    original = load_module(SOURCE, "factory_decorators_original")
    flat = load_module(flatten(SOURCE, path="factory_decorators.py").source, "factory_decorators_flat")
    want = _run(original, compiled=True)
    got = _run(flat, compiled=True)
    assert got[0] and got[2], "the output requires grad, and grad mode is still on"
    assert want[0] and torch.equal(got[1], want[1])
    assert torch.equal(got[1], _run(flat, compiled=False)[1])
