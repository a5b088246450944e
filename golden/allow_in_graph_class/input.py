"""Functions the project itself allows in dynamo's graph, by decorator and by a later call."""
import torch


@torch._dynamo.allow_in_graph
class FusedScale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight):
        ctx.save_for_backward(x, weight)
        return torch.ops.aten.mul.Tensor(x, weight)

    @staticmethod
    def backward(ctx, grad):
        x, weight = ctx.saved_tensors
        return grad * weight * 2, (grad * x).sum(0) * 3


class ClampGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        return grad.clamp(-0.5, 0.5) * 4


torch.compiler.allow_in_graph(ClampGrad)


def scenario_fused_scale():
    x = torch.randn(3, 4, requires_grad=True)
    w = torch.randn(4, requires_grad=True)
    return [x, w], FusedScale.apply(x, w)


def scenario_clamp_grad():
    x = torch.randn(5, requires_grad=True)
    return [x], ClampGrad.apply(x) * 3
