import torch


class F(torch.autograd.Function):
    @staticmethod
    def forward(ctx, A, B, largest):
        A = A.contiguous()
        if B is not None:
            B = B * 2
        ctx.save_for_backward(A, B)
        ctx.largest = largest
        return A * B

    @staticmethod
    def backward(ctx, g):
        A, B = ctx.saved_tensors
        largest = ctx.largest
        if largest is None:
            largest = 3
        return g * B * largest, g * A, None


def scenario_rebound():
    a = torch.randn(3, requires_grad=True)
    b = torch.randn(3, requires_grad=True)
    return [a, b], F.apply(a, b, None)


def scenario_largest():
    a = torch.randn(3, requires_grad=True)
    b = torch.randn(3, requires_grad=True)
    return [a, b], F.apply(a, b, 5)
