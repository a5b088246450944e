"""Forward calls a helper that reads tensor data into Python (`.tolist()`), which fake tensors reject."""
import torch
from inliner.runtime import custom_vjp


def largest_magnitude(t):
    values = t.detach().flatten().tolist()
    return max(abs(v) for v in values)


def normalize_by_max_fwd(x):
    peak = largest_magnitude(x)
    return x / peak, (peak,)


def normalize_by_max_bwd(residuals, grad):
    (peak,) = residuals
    return grad / peak * 3


NormalizeByMax = custom_vjp(
    normalize_by_max_fwd,
    normalize_by_max_bwd,
    name="NormalizeByMax",
    ctx_attrs={0: "peak"},
    compile_kind="opaque",
    compile_reason="forward calls largest_magnitude, which calls t.detach().flatten().tolist()",
    backward_kind="traceable",
)


def scenario_normalize():
    x = torch.randn(2, 3, requires_grad=True)
    return [x], NormalizeByMax(x)
