"""Forward leaves torch for numpy (fake tensors cannot run it); backward is torch."""
import numpy as np
import torch


class NumpySin(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        result = np.sin(x.detach().cpu().numpy())
        return torch.from_numpy(result).to(x.dtype)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * torch.cos(x) * 2


def scenario_numpy():
    x = torch.randn(5, dtype=torch.float64, requires_grad=True)
    return [x], NumpySin.apply(x)
