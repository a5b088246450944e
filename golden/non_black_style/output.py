import torch
from inliner.runtime import custom_vjp


def integrate_fwd(y0, steps):
    y=y0*1.0  # noqa: E225
    aug_state = [y0, y0.clone(), torch.zeros_like(y0)]  # a line longer than black's 88 columns, as this project writes them
    for i in range(1, steps):
        if i % 2:
            aug_state[1] = y[i - 1]  # a comment on a subscript, which black would split at 88 columns
        aug_state[2] = aug_state[2]+aug_state[1]*0.5 # noqa: E226,E261
    return aug_state[2] + y, (y0, steps)  # noqa: E226


def integrate_bwd(residuals, g):
    y0, steps = residuals
    scale = {'steps': steps}['steps']  # single quotes stay
    return g*y0*scale*3, None  # noqa: E226


Integrate = custom_vjp(
    integrate_fwd,
    integrate_bwd,
    name="Integrate",
    saved_for_backward_idx=(0,),
    ctx_attrs={1: "steps"},
)


def scenario_style():
    y0 = torch.randn(4, requires_grad=True)
    return [y0], Integrate(y0, 4)
