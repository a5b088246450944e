"""Functions the project itself allows in dynamo's graph, by decorator and by a later call."""
import torch
from inliner.runtime import FlatClass, custom_vjp


def fused_scale_fwd(x, weight):
    return torch.ops.aten.mul.Tensor(x, weight), (x, weight)


def fused_scale_bwd(residuals, grad):
    x, weight = residuals
    return grad * weight * 2, (grad * x).sum(0) * 3


@torch._dynamo.allow_in_graph
class FusedScale(FlatClass):
    apply = staticmethod(
        custom_vjp(
            fused_scale_fwd,
            fused_scale_bwd,
            name="FusedScale",
            saved_for_backward_idx=(0, 1),
        )
    )


def clamp_grad_fwd(x):
    return x.clone(), ()


def clamp_grad_bwd(residuals, grad):
    return grad.clamp(-0.5, 0.5) * 4


class ClampGrad(FlatClass):
    apply = staticmethod(custom_vjp(clamp_grad_fwd, clamp_grad_bwd, name="ClampGrad"))


torch.compiler.allow_in_graph(ClampGrad)


def scenario_fused_scale():
    x = torch.randn(3, 4, requires_grad=True)
    w = torch.randn(4, requires_grad=True)
    return [x, w], FusedScale.apply(x, w)


def scenario_clamp_grad():
    x = torch.randn(5, requires_grad=True)
    return [x], ClampGrad.apply(x) * 3
