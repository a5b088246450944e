import torch
from inliner.runtime import Record, custom_vjp


def centered_fwd(x):
    """Tuple targets that mix ctx attributes and locals."""
    state = Record("Centered")
    state.mean, centered = x.mean(), x - x.mean()
    n, state.shape = x.numel(), x.shape
    state.save_for_backward(centered)
    return centered * n, (state,)


def centered_bwd(residuals, g):
    (state,) = residuals
    (centered,) = state.saved_tensors
    return (g * centered * 3 + state.mean).reshape(state.shape)


Centered = custom_vjp(centered_fwd, centered_bwd, name="Centered", ctx_record=True)


def split_fwd(x):
    """A for loop whose target is a ctx attribute, and a starred target."""
    state = Record("Split")
    for state.last in x.unbind(0):
        pass
    first, *state.rest = x.unbind(0)
    return first * 2, (state,)


def split_bwd(residuals, g):
    (state,) = residuals
    return torch.stack([g * 3, *(g * r for r in state.rest)]) + state.last


Split = custom_vjp(split_fwd, split_bwd, name="Split", ctx_record=True)


def scenario_centered():
    x = torch.randn(2, 3, requires_grad=True)
    return [x], Centered(x)


def scenario_split():
    x = torch.randn(3, 2, requires_grad=True)
    return [x], Split(x)
