import torch


class Maybe(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, flag):
        ctx.flag = flag
        if flag:
            ctx.save_for_backward(x)
            return x * 2
        ctx.save_for_backward(x, x * 3)
        return x * 3

    @staticmethod
    def backward(ctx, g):
        saved = ctx.saved_tensors
        if ctx.flag:
            return g * saved[0] * 5, None
        return g * saved[0] * saved[1], None


def scenario_flag_true():
    x = torch.randn(3, requires_grad=True)
    return [x], Maybe.apply(x, True)


def scenario_flag_false():
    x = torch.randn(3, requires_grad=True)
    return [x], Maybe.apply(x, False)
