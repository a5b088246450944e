"""A linear layer with a hand-written backward, the way many projects write one."""
import torch
from torch import nn
from torch.autograd import Function
from torch.autograd.function import once_differentiable


class ScaledLinearFunction(Function):
    @staticmethod
    def forward(ctx, input, weight, bias, scale):
        ctx.save_for_backward(input, weight)
        ctx.scale = scale
        ctx.has_bias = bias is not None
        output = input.matmul(weight.t()) * scale
        if bias is not None:
            output = output + bias
        return output

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        input, weight = ctx.saved_tensors
        grad_input = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_input = grad_output.matmul(weight) * ctx.scale
        if ctx.needs_input_grad[1]:
            grad_weight = grad_output.t().matmul(input) * ctx.scale
        if ctx.has_bias and ctx.needs_input_grad[2]:
            grad_bias = grad_output.sum(0)
        return grad_input, grad_weight, grad_bias, None


class ScaledLinear(nn.Module):
    def __init__(self, in_features, out_features, scale=0.5):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_features, in_features))
        self.bias = nn.Parameter(torch.zeros(out_features))
        self.scale = scale

    def forward(self, x):
        return ScaledLinearFunction.apply(x, self.weight, self.bias, self.scale)
