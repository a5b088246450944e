import torch
from inliner.runtime import Record, custom_vjp


def save_what_is_needed_fwd(x, w, *, needs_input_grad):
    """Forward reads ctx.needs_input_grad (valid there) to save only what backward will use."""
    state = Record("SaveWhatIsNeeded", needs_input_grad)
    state.save_for_backward(
        w if state.needs_input_grad[0] else None,
        x if state.needs_input_grad[1] else None,
    )
    return x * w, (state,)


def save_what_is_needed_bwd(residuals, g):
    (state,) = residuals
    w, x = state.saved_tensors
    gx = g * w * 3 if state.needs_input_grad[0] else None
    gw = g * x * 2 if state.needs_input_grad[1] else None
    return gx, gw


SaveWhatIsNeeded = custom_vjp(
    save_what_is_needed_fwd,
    save_what_is_needed_bwd,
    name="SaveWhatIsNeeded",
    ctx_record=True,
    fwd_needs_input_grad=True,
)


def scenario_both():
    x = torch.randn(3, requires_grad=True)
    w = torch.randn(3, requires_grad=True)
    return [x, w], SaveWhatIsNeeded(x, w)


def scenario_only_x():
    x = torch.randn(3, requires_grad=True)
    w = torch.randn(3)
    return [x], SaveWhatIsNeeded(x, w)


def scenario_only_w():
    x = torch.randn(3)
    w = torch.randn(3, requires_grad=True)
    return [w], SaveWhatIsNeeded(x, w)

