import torch
import torch.autograd.forward_ad as fwAD
from inliner.runtime import Record, custom_vjp


def maybe_tangent_fwd(x, w, keep):
    """save_for_forward on one path only; jvp reads what was saved, or not."""
    state = Record("MaybeTangent")
    state.save_for_backward(x, w)
    if keep:
        state.save_for_forward(x, w)
    state.keep = keep
    return x * w, (state,)


def maybe_tangent_bwd(residuals, g):
    (state,) = residuals
    x, w = state.saved_tensors
    return g * w * 3, g * x, None


def maybe_tangent_jvp(residuals, tx, tw, _):
    (state,) = residuals
    if state.keep:
        x, w = state.saved_tensors
        return tx * w * 3 + tw * x
    return tx * 2 + tw * 5


MaybeTangent = custom_vjp(
    maybe_tangent_fwd,
    maybe_tangent_bwd,
    name="MaybeTangent",
    jvp=maybe_tangent_jvp,
    ctx_record=True,
)


def scenario_backward():
    x = torch.randn(3, requires_grad=True)
    w = torch.randn(3, requires_grad=True)
    return [x, w], MaybeTangent(x, w, True)


def _forward_ad(keep):
    x, w = torch.randn(3), torch.randn(3)
    tx, tw = torch.randn(3), torch.randn(3)
    with fwAD.dual_level():
        out = MaybeTangent(fwAD.make_dual(x, tx), fwAD.make_dual(w, tw), keep)
        return [], fwAD.unpack_dual(out).tangent.clone()


def scenario_forward_ad_kept():
    return _forward_ad(True)


def scenario_forward_ad_not_kept():
    return _forward_ad(False)
