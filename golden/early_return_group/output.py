import torch
from inliner.runtime import custom_vjp


def maybe_fwd(x, flag):
    saved_tensors = ()
    if flag:
        saved_tensors = (x,)
        return x * 2, (saved_tensors, flag)
    saved_tensors = (x, x * 3)
    return x * 3, (saved_tensors, flag)


def maybe_bwd(residuals, g):
    saved_tensors, flag = residuals
    saved = saved_tensors
    if flag:
        return g * saved[0] * 5, None
    return g * saved[0] * saved[1], None


Maybe = custom_vjp(
    maybe_fwd, maybe_bwd, name="Maybe", saved_tensors_idx=0, ctx_attrs={1: "flag"}
)


def scenario_flag_true():
    x = torch.randn(3, requires_grad=True)
    return [x], Maybe(x, True)


def scenario_flag_false():
    x = torch.randn(3, requires_grad=True)
    return [x], Maybe(x, False)
