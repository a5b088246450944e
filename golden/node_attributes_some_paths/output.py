import torch
from inliner.runtime import Record, custom_vjp


# attributes backward never reads, set on some paths only (a loop that may not run,
# a branch): the original's node has each exactly where forward set it
def accumulate_fwd(x, steps):
    state = Record("Accumulate")
    state.steps = steps
    for i in range(steps):
        state.last_step = i
    if steps > 2:
        state.long_run = True
    return x * steps, (state,)


def accumulate_bwd(residuals, g):
    (state,) = residuals
    return g * state.steps * 2, None


Accumulate = custom_vjp(
    accumulate_fwd, accumulate_bwd, name="Accumulate", ctx_record=True
)


def node_attributes(out):
    return sorted(k for k in vars(out.grad_fn) if not k.startswith("_"))


def scenario_no_steps():
    x = torch.randn(3, requires_grad=True)
    out = Accumulate(x, 0)
    return [x], (out, node_attributes(out))


def scenario_some_steps():
    x = torch.randn(3, requires_grad=True)
    out = Accumulate(x, 2)
    return [x], (out, node_attributes(out), out.grad_fn.last_step)


def scenario_long_run():
    x = torch.randn(3, requires_grad=True)
    out = Accumulate(x, 4)
    return [x], (out, node_attributes(out), out.grad_fn.last_step, out.grad_fn.long_run)
