"""Small Functions compiled and dumped by the op-call tests (tests/engine/test_hop_dumps.py on torch
2.13, tests/tracers/test_thunder_repro.py in the thunder tier).

Every backward is a deliberate lie (an extra factor), so a run that loses it shows.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn


class SaveInputs(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return x * w

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        return g * w * 3, g * x * 5


class SaveIntermediate(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = x.sin()
        ctx.save_for_backward(y)
        return y * 2

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y * 7


class NonTensorAttr(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, k):
        ctx.k = k
        return x * k

    @staticmethod
    def backward(ctx, g):
        return g * ctx.k * 11, None


class TwoOutputs(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = x * 2
        i = y.argmax()
        ctx.mark_non_differentiable(i)
        ctx.save_for_backward(x)
        return y, i

    @staticmethod
    def backward(ctx, g, gi):
        (x,) = ctx.saved_tensors
        return g * x * 13


class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(4))

    def forward(self, x):
        return SaveInputs.apply(x, self.weight).sum()


def f_save_inputs(x, w):
    return SaveInputs.apply(x, w).sum()


def f_intermediate(x):
    return SaveIntermediate.apply(x).sum()


def f_attr(x):
    return NonTensorAttr.apply(x, 3.0).sum()


def f_two_outputs(x):
    y, i = TwoOutputs.apply(x)
    return y.sum() + i


def f_two_functions(x, w):
    return (SaveInputs.apply(x, w) + SaveIntermediate.apply(x)).sum()


def f_nested(h, w):
    """Each result the next call's operand, with no local in between: the dump passes
    ``autograd_function_apply`` itself on (torch 2.9)."""
    return NonTensorAttr.apply(SaveIntermediate.apply(SaveInputs.apply(h, w)), 3.0).sum()


FUNCTIONS = (SaveInputs, SaveIntermediate, NonTensorAttr, TwoOutputs)


def through_forward(fn: Callable, inputs: list[torch.Tensor]) -> torch.Tensor:
    """Run ``fn`` with every Function's forward differentiated by autograd (no custom backward)."""

    class Ctx:
        def save_for_backward(self, *a):
            pass

        def mark_non_differentiable(self, *a):
            pass

    saved = {cls: cls.__dict__["apply"] if "apply" in cls.__dict__ else None for cls in FUNCTIONS}
    for cls in FUNCTIONS:
        cls.apply = lambda *args, _cls=cls: _cls.forward(Ctx(), *args)
    try:
        return fn(*inputs)
    finally:
        for cls, apply in saved.items():
            if apply is None:
                del cls.apply
            else:
                cls.apply = apply
