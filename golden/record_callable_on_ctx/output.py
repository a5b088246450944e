import torch
from inliner.runtime import Record, custom_vjp


def _tanh_derivative(x):
    return 1 - torch.tanh(x) ** 2 * 0.5


def _sigmoid_derivative(x):
    s = torch.sigmoid(x)
    return s * (1 - s) * 3


def activation_fwd(x, kind):
    """A callable chosen in forward, stored on ctx and called in backward."""
    state = Record("Activation")
    state.derivative = _tanh_derivative if kind == "tanh" else _sigmoid_derivative
    state.save_for_backward(x)
    return torch.tanh(x) if kind == "tanh" else torch.sigmoid(x), (state,)


def activation_bwd(residuals, g):
    (state,) = residuals
    (x,) = state.saved_tensors
    return g * state.derivative(x), None


Activation = custom_vjp(
    activation_fwd,
    activation_bwd,
    name="Activation",
    ctx_record=True,
    backward_kind="side_effecting",
    backward_reason="backward calls state.derivative, a method of state (stored on ctx)",
    backward_nones=(1,),
    record_read_only=True,
)


def recompute_fwd(x):
    """Checkpoint-style: backward re-runs a function kept on ctx under enable_grad."""
    state = Record("Recompute")
    state.run = torch.sin
    state.save_for_backward(x)
    return state.run(x) * 2, (state,)


def recompute_bwd(residuals, g):
    (state,) = residuals
    (x,) = state.saved_tensors
    with torch.enable_grad():
        detached = x.detach().requires_grad_()
        out = state.run(detached) * 5
    (grad,) = torch.autograd.grad(out, detached, g)
    return grad


Recompute = custom_vjp(
    recompute_fwd,
    recompute_bwd,
    name="Recompute",
    ctx_record=True,
    compile_kind="opaque",
    compile_reason="forward calls state.run",
    backward_kind="side_effecting",
    backward_reason="backward calls state.run, a method of state (stored on ctx)",
    backward_nones=(),
    record_read_only=True,
)


def scenario_tanh():
    x = torch.randn(3, requires_grad=True)
    return [x], Activation(x, "tanh")


def scenario_sigmoid():
    x = torch.randn(3, requires_grad=True)
    return [x], Activation(x, "sigmoid")


def scenario_recompute():
    x = torch.randn(3, requires_grad=True)
    return [x], Recompute(x)
