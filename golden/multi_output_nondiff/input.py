import torch


class SortTop(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        values, index = x.sort()
        ctx.save_for_backward(index)
        ctx.mark_non_differentiable(index)
        return values, index

    @staticmethod
    def backward(ctx, grad_values, grad_index):
        (index,) = ctx.saved_tensors
        grad = torch.zeros_like(grad_values)
        grad.scatter_(0, index, grad_values * 4)
        return grad


def scenario_outputs():
    x = torch.randn(5, requires_grad=True)
    values, index = SortTop.apply(x)
    return [x], (values, index)
