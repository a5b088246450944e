import torch


# Above the class: stays where it is.
class Commented(torch.autograd.Function):
    """Docstring moves to the forward function."""

    # above forward
    @staticmethod
    def forward(ctx, x):
        # inside forward
        ctx.save_for_backward(x)  # why we save
        y = x * 2  # trailing comment
        return y

    # above backward
    @staticmethod
    def backward(ctx, g):
        # inside backward
        (x,) = ctx.saved_tensors
        return g * x * 3  # deliberately not the true derivative


def scenario_comments():
    x = torch.randn(3, requires_grad=True)
    return [x], Commented.apply(x)
