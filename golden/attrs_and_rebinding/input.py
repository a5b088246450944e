import torch


class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, k):
        y = x * k
        ctx.save_for_backward(y)
        ctx.k = k
        ctx.shape = x.shape
        k = k + 100  # rebinding after the save must not change what was saved
        y = y + 1
        ctx.tensor_attr = x  # a tensor kept as a plain attribute
        return y * 0 + x * k

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return (g * y * ctx.k + ctx.tensor_attr).reshape(ctx.shape) * 2, None


def scenario_attrs():
    x = torch.randn(4, requires_grad=True)
    return [x], Scale.apply(x, 3.0)


def scenario_mutate_attr_tensor():
    # mutating a tensor kept as ctx.attr is legal (no version check)
    x = torch.randn(4, requires_grad=True)
    x2 = x * 1
    out = Scale.apply(x2, 2.0)
    x2.mul_(3)  # changes ctx.tensor_attr without a version error
    return [x], out
