"""Pragmas override the engine's conservative decision, in both directions (and a bad one is reported)."""
import torch
from inliner.runtime import custom_vjp

_activation = torch.nn.Tanh()


def module_activation_fwd(x):
    y = _activation(x)
    return y, (y,)


def module_activation_bwd(residuals, grad):
    (y,) = residuals
    return grad * (1 - y * y) * 2


ModuleActivation = custom_vjp(
    module_activation_fwd,
    module_activation_bwd,
    name="ModuleActivation",
    saved_for_backward_idx=(0,),
)


def keep_eager_fwd(x):
    return x * 2, ()


def keep_eager_bwd(residuals, grad):
    return grad * 3


KeepEager = custom_vjp(
    keep_eager_fwd,
    keep_eager_bwd,
    name="KeepEager",
    compile_kind="side_effecting",
    compile_reason="set by the pragma on line 20",
)


def misspelled_fwd(x):
    return x.exp(), ()


def misspelled_bwd(residuals, grad):
    return grad * 4


Misspelled = custom_vjp(misspelled_fwd, misspelled_bwd, name="Misspelled")


def scenario_all():
    x = torch.randn(3, requires_grad=True)
    return [x], (ModuleActivation(x), KeepEager(x), Misspelled(x))
