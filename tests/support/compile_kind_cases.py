"""Hand-written Functions that torch.compile cannot simply trace through, each beside the
flat equivalent the engine emits for it (``custom_vjp`` with its ``compile_kind``).

- side effects: forward appends to ``SIDE_EFFECT_LOG``; backward does; forward mutates a
  list it is given; forward keeps an intermediate its output is a view of (torch 2.13's
  dynamo fails on that original with an internal error) (``side_effecting``: an eager
  island under dynamo);
- bodies fake tensors cannot run: numpy, ``.tolist()`` (``opaque``: an eager island);
- object arguments of pure-torch bodies: a dataclass holding a tensor (made outside the
  compiled region, and inside it), an ``nn.Module``, a lambda (``traceable``: one graph
  node, the objects carried by the shim in ``inliner.runtime._dynamo``).

Every backward is deliberately not the true derivative. ``SIDE_EFFECT_LOG`` follows the
golden-case convention (tests/support/tracer_cases.py reads it from a golden module if present).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch.autograd import Function

from inliner.runtime import custom_vjp

SIDE_EFFECT_LOG: list = []


# --------------------------------------------------------------------- side effects


class FwdLog(Function):
    @staticmethod
    def forward(ctx, x):
        SIDE_EFFECT_LOG.append("forward")
        ctx.save_for_backward(x)
        return x * 2

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x * 3


def fwd_log_fwd(x):
    SIDE_EFFECT_LOG.append("forward")
    return x * 2, (x,)


def fwd_log_bwd(residuals, g):
    (x,) = residuals
    return g * x * 3


FwdLogFlat = custom_vjp(
    fwd_log_fwd,
    fwd_log_bwd,
    name="FwdLog",
    saved_for_backward_idx=(0,),
    compile_kind="side_effecting",
    compile_reason="forward appends to SIDE_EFFECT_LOG",
)


class BwdLog(Function):
    @staticmethod
    def forward(ctx, x):
        return x.sin()

    @staticmethod
    def backward(ctx, g):
        SIDE_EFFECT_LOG.append(("backward", tuple(g.shape)))
        return g * 3


def bwd_log_fwd(x):
    return x.sin(), ()


def bwd_log_bwd(residuals, g):
    SIDE_EFFECT_LOG.append(("backward", tuple(g.shape)))
    return g * 3


BwdLogFlat = custom_vjp(
    bwd_log_fwd,
    bwd_log_bwd,
    name="BwdLog",
    compile_kind="side_effecting",
    compile_reason="backward appends to SIDE_EFFECT_LOG",
)


class AppendTo(Function):
    """Forward appends its output to a list it is given."""

    @staticmethod
    def forward(ctx, x, acc):
        y = x * 2
        acc.append(y.detach().clone())
        return y

    @staticmethod
    def backward(ctx, g):
        return g * 3, None


def append_to_fwd(x, acc):
    y = x * 2
    acc.append(y.detach().clone())
    return y, ()


def append_to_bwd(residuals, g):
    return g * 3, None


AppendToFlat = custom_vjp(
    append_to_fwd,
    append_to_bwd,
    name="AppendTo",
    compile_kind="side_effecting",
    compile_reason="forward calls acc.append",
)


class KeepIntermediate(Function):
    """Forward keeps an intermediate that its output is a view of (a cache, a debug hook)."""

    @staticmethod
    def forward(ctx, x):
        y = x * 2
        SIDE_EFFECT_LOG.append(y)
        return y.view(-1)

    @staticmethod
    def backward(ctx, g):
        return g * 3


def keep_intermediate_fwd(x):
    y = x * 2
    SIDE_EFFECT_LOG.append(y)
    return y.view(-1), ()


def keep_intermediate_bwd(residuals, g):
    return g * 3


KeepIntermediateFlat = custom_vjp(
    keep_intermediate_fwd,
    keep_intermediate_bwd,
    name="KeepIntermediate",
    compile_kind="side_effecting",
    compile_reason="forward appends to SIDE_EFFECT_LOG",
)


# --------------------------------------------------------------------- bodies that leave torch


class NumpySin(Function):
    @staticmethod
    def forward(ctx, x):
        return torch.from_numpy(np.sin(x.detach().numpy()))

    @staticmethod
    def backward(ctx, g):
        return g * 3


def numpy_sin_fwd(x):
    return torch.from_numpy(np.sin(x.detach().numpy())), ()


def numpy_sin_bwd(residuals, g):
    return g * 3


NumpySinFlat = custom_vjp(
    numpy_sin_fwd, numpy_sin_bwd, name="NumpySin", compile_kind="opaque", compile_reason="forward calls numpy.sin"
)


def host_double(x: torch.Tensor) -> torch.Tensor:
    """Stands for a C-extension call: it needs the values (a fake tensor has none)."""
    return torch.tensor([v * 2.0 for v in x.tolist()], dtype=x.dtype)


class HostDouble(Function):
    @staticmethod
    def forward(ctx, x):
        return host_double(x)

    @staticmethod
    def backward(ctx, g):
        return g * 3


def host_double_fwd(x):
    return host_double(x), ()


def host_double_bwd(residuals, g):
    return g * 3


HostDoubleFlat = custom_vjp(
    host_double_fwd,
    host_double_bwd,
    name="HostDouble",
    compile_kind="opaque",
    compile_reason="forward calls host_double",
)


# --------------------------------------------------------------------- object arguments


@dataclass
class Config:
    weight: torch.Tensor
    scale: float


CONFIG = Config(torch.linspace(0.5, 1.5, 4), 2.0)


class ScaleBy(Function):
    @staticmethod
    def forward(ctx, x, cfg):
        ctx.save_for_backward(x, cfg.weight)
        ctx.scale = cfg.scale
        return x * cfg.weight * cfg.scale

    @staticmethod
    def backward(ctx, g):
        x, weight = ctx.saved_tensors
        return g * weight * ctx.scale * 3, None


def scale_by_fwd(x, cfg):
    return x * cfg.weight * cfg.scale, (x, cfg.weight, cfg.scale)


def scale_by_bwd(residuals, g):
    x, weight, scale = residuals
    return g * weight * scale * 3, None


ScaleByFlat = custom_vjp(scale_by_fwd, scale_by_bwd, name="ScaleBy", saved_for_backward_idx=(0, 1))

torch.manual_seed(0)
LINEAR = torch.nn.Linear(4, 4)


class ApplyModule(Function):
    @staticmethod
    def forward(ctx, x, module):
        return module(x)

    @staticmethod
    def backward(ctx, g):
        return g * 3, None


def apply_module_fwd(x, module):
    return module(x), ()


def apply_module_bwd(residuals, g):
    return g * 3, None


ApplyModuleFlat = custom_vjp(apply_module_fwd, apply_module_bwd, name="ApplyModule")


def squash(t):
    return torch.tanh(t) * 2


SQUASH = lambda t: torch.tanh(t) * 2


class ApplyFn(Function):
    @staticmethod
    def forward(ctx, x, fn):
        return fn(x)

    @staticmethod
    def backward(ctx, g):
        return g * 3, None


def apply_fn_fwd(x, fn):
    return fn(x), ()


def apply_fn_bwd(residuals, g):
    return g * 3, None


ApplyFnFlat = custom_vjp(apply_fn_fwd, apply_fn_bwd, name="ApplyFn")


# --------------------------------------------------------------------- the cases


@dataclasses.dataclass(frozen=True)
class Case:
    name: str
    original: Callable  # Name.apply
    flat: Callable
    call: Callable[..., Any]  # call(F, *tensors): the traced body
    kind: str  # the flat callable's compile_kind
    # None if the original compiles with fullgraph=True (on torch 2.13; ORIGINAL_FULLGRAPH_29
    # says where 2.9 differs); else a substring of its error
    original_fullgraph: str | None = None
    # whether the flat call passes a module or a function (dynamo 2.9 cannot hand those over)
    passes_objects: bool = False
    # None if the original compiles (without fullgraph); else a substring of its error
    original_compile: str | None = None

    def body(self, rewritten: bool) -> Callable:
        fn = self.flat if rewritten else self.original
        return lambda *tensors: self.call(fn, *tensors)


def make_inputs() -> tuple:
    torch.manual_seed(0)
    return (torch.randn(4).requires_grad_(),)


_UNSAFE = "Unsafe side effect"

#: torch 2.9's dynamo refuses every side effect inside an autograd.Function (2.13 replays
#: a forward's mutation of an outside list).
ORIGINAL_FULLGRAPH_29 = {
    "forward_side_effect": "Mutating a variable not in the current scope",
    "backward_side_effect": "Mutating a variable not in the current scope",
    "list_argument_mutated": "Mutating a variable not in the current scope",
    "intermediate_kept": "Mutating a variable not in the current scope",
}
#: torch 2.9 runs the original around a graph break where 2.13 fails internally.
ORIGINAL_COMPILE_29: dict[str, str | None] = {"intermediate_kept": None}

CASES = {
    c.name: c
    for c in [
        # dynamo replays a forward's mutation of an outside list: the original compiles
        # whole; the rewrite is an eager island (FULLGRAPH_ORIGINAL_ONLY)
        Case("forward_side_effect", FwdLog.apply, FwdLogFlat, lambda F, x: F(x) + 1, "side_effecting"),
        Case("backward_side_effect", BwdLog.apply, BwdLogFlat, lambda F, x: F(x) * 2, "side_effecting", _UNSAFE),
        Case(
            "list_argument_mutated",
            AppendTo.apply,
            AppendToFlat,
            lambda F, x: F(x, SIDE_EFFECT_LOG) + 1,
            "side_effecting",
        ),
        # dynamo fails on the original even without fullgraph (an internal error on 2.13)
        Case(
            "intermediate_kept",
            KeepIntermediate.apply,
            KeepIntermediateFlat,
            lambda F, x: F(x) + 1,
            "side_effecting",
            "aliases an input or output",
            original_compile="aliases an input or output",
        ),
        # dynamo translates numpy to torch: the original compiles whole; the rewrite is an
        # eager island (see tests/runtime/test_compile_kinds.py, FULLGRAPH_ORIGINAL_ONLY)
        Case("numpy_body", NumpySin.apply, NumpySinFlat, lambda F, x: F(x) + 1, "opaque"),
        Case("fake_tensor_rejecting", HostDouble.apply, HostDoubleFlat, lambda F, x: F(x) + 1, "opaque", "tolist"),
        Case("dataclass_argument", ScaleBy.apply, ScaleByFlat, lambda F, x: F(x, CONFIG), "traceable"),
        Case(
            "dataclass_made_inside",
            ScaleBy.apply,
            ScaleByFlat,
            lambda F, x: F(x, Config(x.detach().cos(), 3.0)),
            "traceable",
        ),
        Case("module_argument", ApplyModule.apply, ApplyModuleFlat, lambda F, x: F(x, LINEAR), "traceable", None, True),
        Case("function_argument", ApplyFn.apply, ApplyFnFlat, lambda F, x: F(x, squash), "traceable", None, True),
        Case("lambda_argument", ApplyFn.apply, ApplyFnFlat, lambda F, x: F(x, SQUASH), "traceable", None, True),
        Case(
            "lambda_made_inside",
            ApplyFn.apply,
            ApplyFnFlat,
            lambda F, x: F(x, lambda t: torch.tanh(t) * 2),
            "traceable",
            None,
            True,
        ),
    ]
}
