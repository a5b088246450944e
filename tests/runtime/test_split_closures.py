"""The split path with a Function defined inside a function (as tests and factories
write them): ``fwd`` builds an object of a class defined there, read from its closure.

Dynamo calls such a class only when it has a source; the split shim is a polyfill,
traced without one, so ``inliner.runtime._split`` hands dynamo ``fwd`` through a
module-level namespace. The original and the rewrite run side by side: values, custom
gradients and frames, under ``fullgraph=True``.
"""

from __future__ import annotations

import gc
import sys
import types

import pytest
import torch
import torch._dynamo
import torch._dynamo.testing

from inliner import flatten
from tests.support.harness import TORCH_2_13

SOURCE = """
from dataclasses import dataclass

import torch


def make_dataclass_output():
    @dataclass
    class Pair:
        a: torch.Tensor

    class MakesPair(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, Pair(a=x + 1)

        @staticmethod
        def backward(ctx, g, _unused):
            return g * 5

    return MakesPair


def make_plain_class_output():
    class Box:
        def __init__(self, a):
            self.a = a

    class MakesBox(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, Box(x.sin())

        @staticmethod
        def backward(ctx, g, _unused):
            return g * 7

    return MakesBox


def dataclass_output(t, F=make_dataclass_output()):
    y, pair = F.apply(t)
    return y + pair.a


def plain_class_output(t, F=make_plain_class_output()):
    y, box = F.apply(t)
    return y + box.a.detach()
"""


def _load(source: str, name: str) -> types.ModuleType:
    module = types.ModuleType(name)
    sys.modules[name] = module
    exec(compile(source, f"{name}.py", "exec"), module.__dict__)
    return module


@pytest.fixture(scope="module")
def modules():
    result = flatten(SOURCE, path="closures.py", module="closures_twin")
    assert "custom_vjp(" in result.source
    yield _load(SOURCE, "closures_orig"), _load(result.source, "closures_twin")
    del sys.modules["closures_orig"], sys.modules["closures_twin"]


def _run(fn) -> tuple:
    torch._dynamo.reset()
    counter = torch._dynamo.testing.CompileCounterWithBackend("aot_eager")
    compiled = torch.compile(fn, backend=counter, fullgraph=True)
    results = []
    for _ in range(3):
        x = torch.arange(3.0, requires_grad=True)
        y = compiled(x)
        y.sum().backward()
        results.append((y.detach().tolist(), x.grad.tolist()))
    return results, counter.frame_count


@pytest.mark.parametrize("case", ["dataclass_output", "plain_class_output"])
def test_a_class_from_fwds_closure_compiles_as_the_original(modules, case):
    original, twin = (getattr(m, case) for m in modules)
    if TORCH_2_13:  # 2.9's dynamo cannot build the class inside the original's HOP ("Unsupported function call")
        assert _run(twin) == _run(original)
    assert _run(twin)[1] == 1


def test_the_held_fwd_goes_with_its_function(modules):
    from inliner.runtime import _split

    if "thunder" in sys.modules:  # a known leak: thunder's lookaside map keeps every flat callable
        pytest.skip("thunder is loaded: its lookaside map holds every flat callable made since")
    twin = modules[1]
    gc.collect()  # other tests' Functions may still be waiting to go
    before = len(vars(_split._FWDS))
    made = [twin.make_dataclass_output() for _ in range(3)]
    assert len(vars(_split._FWDS)) == before + 3
    del made
    gc.collect()
    assert len(vars(_split._FWDS)) == before
