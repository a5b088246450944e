"""A user's own ``allow_in_graph`` on a flattened Function (``inliner.runtime._allowed``).

The original Function allowed in the graph is one call dynamo does not trace into: even a
forward that calls ``graph_break()`` compiles with ``fullgraph=True``, in one frame. Each
case runs the original module and its rewrite side by side: values, custom gradients,
frames, and eager calls.
"""

from __future__ import annotations

import sys
import types

import pytest
import torch
import torch._dynamo
import torch._dynamo.testing

from inliner import flatten

SOURCE = """
import torch


@torch._dynamo.allow_in_graph
class PureScale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.n = x.shape[0]
        return x * 3

    @staticmethod
    def backward(ctx, g):
        return g * ctx.n


@torch.compiler.allow_in_graph
class BreakingScale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        torch._dynamo.graph_break()
        return x * 3

    @staticmethod
    def backward(ctx, g):
        return g * 5


class LaterAllowed(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, k):
        ctx.k = k
        return x * k

    @staticmethod
    def backward(ctx, g):
        return g * 6 * ctx.k, None


torch.compiler.allow_in_graph(LaterAllowed)


def pure(t):
    return PureScale.apply(t).sin()


def breaking(t):
    return BreakingScale.apply(t) + 1


def later(t):
    return LaterAllowed.apply(t, 2.0)
"""

CASES = ("pure", "breaking", "later")


def _load(source: str, name: str) -> types.ModuleType:
    module = types.ModuleType(name)
    sys.modules[name] = module
    exec(compile(source, f"{name}.py", "exec"), module.__dict__)
    return module


@pytest.fixture(scope="module")
def modules():
    rewritten = flatten(SOURCE, path="allowed_mod.py", module="allowed_twin").source
    assert "custom_vjp(" in rewritten  # every class is flattened
    yield _load(SOURCE, "allowed_orig"), _load(rewritten, "allowed_twin")
    del sys.modules["allowed_orig"], sys.modules["allowed_twin"]


def _run(fn, compiled: bool) -> tuple:
    torch._dynamo.reset()
    counter = torch._dynamo.testing.CompileCounterWithBackend("aot_eager")
    call = torch.compile(fn, backend=counter, fullgraph=True) if compiled else fn
    results = []
    for _ in range(3):
        x = torch.arange(4.0, requires_grad=True)
        y = call(x)
        y.sum().backward()
        results.append((y.detach().tolist(), x.grad.tolist()))
    return results, counter.frame_count


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "eager"])
def test_allowed_class_behaves_as_the_original(modules, case, compiled):
    original, twin = (getattr(m, case) for m in modules)
    expected = _run(original, compiled)
    assert _run(twin, compiled) == expected
    if compiled:
        assert expected[1] == 1  # one frame, not traced into: graph_break() never breaks


def test_allowed_flat_callable_is_one_graph_node():
    """``allow_in_graph`` on a flat callable the engine emitted as a plain function."""
    source = (
        "import torch\n\n\nclass Twice(torch.autograd.Function):\n"
        "    @staticmethod\n    def forward(ctx, x):\n        torch._dynamo.graph_break()\n"
        "        return x * 2\n\n    @staticmethod\n    def backward(ctx, g):\n        return g * 7\n"
    )
    twin = _load(flatten(source, path="twice.py", module="twice_twin").source, "twice_twin")
    try:
        assert isinstance(twin.Twice, types.FunctionType)
        torch._dynamo.allow_in_graph(twin.Twice)
        torch._dynamo.reset()
        counter = torch._dynamo.testing.CompileCounterWithBackend("aot_eager")
        x = torch.arange(3.0, requires_grad=True)
        y = torch.compile(lambda t: twin.Twice(t) + twin.Twice.apply(t), backend=counter, fullgraph=True)(x)
        y.sum().backward()
        assert y.tolist() == [0.0, 4.0, 8.0] and x.grad.tolist() == [14.0] * 3
        assert counter.frame_count == 1
        assert twin.Twice.compile_path == "graph"
    finally:
        del sys.modules["twice_twin"]


LATE = """
import sys
import torch
from inliner.runtime import FlatClass, custom_vjp

assert "torch._dynamo" not in sys.modules


def fwd(x):
    torch._dynamo.graph_break()
    return x * 3, ()


def bwd(residuals, g):
    return g * 6


class Late(FlatClass):
    apply = staticmethod(custom_vjp(fwd, bwd, name="Late", compile_kind="opaque"))


torch.compiler.allow_in_graph(Late)  # imports dynamo, which registers Late first
x = torch.arange(4.0, requires_grad=True)
y = torch.compile(lambda t: Late.apply(t), backend="aot_eager", fullgraph=True)(x)
y.sum().backward()
print(y.tolist(), x.grad.tolist(), Late.apply.compile_path)
"""


def test_allowing_a_class_made_before_dynamo_was_loaded():
    import subprocess

    done = subprocess.run([sys.executable, "-c", LATE], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split("\n")[-2] == "[0.0, 3.0, 6.0, 9.0] [6.0, 6.0, 6.0, 6.0] graph"
