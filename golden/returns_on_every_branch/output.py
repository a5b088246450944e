import torch
from inliner.runtime import custom_vjp


def branches_fwd(x, mode):
    if mode == "double":
        factor = 2.0
        return x * 2, (mode, factor)
    elif mode == "triple":
        factor = 3.0
        return x * 3, (mode, factor)
    else:
        factor = 1.0
        return x, (mode, factor)


def branches_bwd(residuals, g):
    (factor,) = residuals[1:]
    return g * factor * 10, None


Branches = custom_vjp(
    branches_fwd, branches_bwd, name="Branches", ctx_attrs={0: "mode", 1: "factor"}
)


def scenario_double():
    x = torch.randn(3, requires_grad=True)
    return [x], Branches(x, "double")


def scenario_identity():
    x = torch.randn(3, requires_grad=True)
    y = Branches(x, "other")
    return [x], (y, y is x, y._base is x)
