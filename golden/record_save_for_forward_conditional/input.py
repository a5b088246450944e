import torch
import torch.autograd.forward_ad as fwAD


class MaybeTangent(torch.autograd.Function):
    """save_for_forward on one path only; jvp reads what was saved, or not."""

    @staticmethod
    def forward(ctx, x, w, keep):
        ctx.save_for_backward(x, w)
        if keep:
            ctx.save_for_forward(x, w)
        ctx.keep = keep
        return x * w

    @staticmethod
    def jvp(ctx, tx, tw, _):
        if ctx.keep:
            x, w = ctx.saved_tensors
            return tx * w * 3 + tw * x
        return tx * 2 + tw * 5

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        return g * w * 3, g * x, None


def scenario_backward():
    x = torch.randn(3, requires_grad=True)
    w = torch.randn(3, requires_grad=True)
    return [x, w], MaybeTangent.apply(x, w, True)


def _forward_ad(keep):
    x, w = torch.randn(3), torch.randn(3)
    tx, tw = torch.randn(3), torch.randn(3)
    with fwAD.dual_level():
        out = MaybeTangent.apply(fwAD.make_dual(x, tx), fwAD.make_dual(w, tw), keep)
        return [], fwAD.unpack_dual(out).tangent.clone()


def scenario_forward_ad_kept():
    return _forward_ad(True)


def scenario_forward_ad_not_kept():
    return _forward_ad(False)
