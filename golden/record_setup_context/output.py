import torch
from inliner.runtime import Record, custom_vjp


def scale_shift_fwd(x, scale, shift):
    """setup_context style whose setup_context unpacks inputs into a local and ctx attributes."""
    state = Record("ScaleShift")
    output = x * scale + shift
    inputs = (x, scale, shift)
    x, state.scale, state.shift = inputs
    state.save_for_backward(x)
    return output, (state,)


def scale_shift_bwd(residuals, g):
    (state,) = residuals
    (x,) = state.saved_tensors
    return g * state.scale * 3 + x * x, None, None


ScaleShift = custom_vjp(
    scale_shift_fwd,
    scale_shift_bwd,
    name="ScaleShift",
    fill_defaults=True,
    ctx_record=True,
)


def scenario_eager():
    x = torch.randn(3, requires_grad=True)
    return [x], ScaleShift(x, 2.0, 1.0)


def scenario_func_grad_of_grad():
    x = torch.randn(3)
    grad = torch.func.grad(lambda t: ScaleShift(t, 2.0, 1.0).sum())
    return [], torch.func.grad(lambda t: grad(t).sum())(x)
