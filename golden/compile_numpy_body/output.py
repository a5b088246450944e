"""Forward leaves torch for numpy (fake tensors cannot run it); backward is torch."""
import numpy as np
import torch
from inliner.runtime import custom_vjp


def numpy_sin_fwd(x):
    result = np.sin(x.detach().cpu().numpy())
    return torch.from_numpy(result).to(x.dtype), (x,)


def numpy_sin_bwd(residuals, grad):
    (x,) = residuals
    return grad * torch.cos(x) * 2


NumpySin = custom_vjp(
    numpy_sin_fwd,
    numpy_sin_bwd,
    name="NumpySin",
    saved_for_backward_idx=(0,),
    compile_kind="opaque",
    compile_reason="forward calls numpy.sin",
    backward_kind="traceable",
)


def scenario_numpy():
    x = torch.randn(5, dtype=torch.float64, requires_grad=True)
    return [x], NumpySin(x)
