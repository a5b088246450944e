import torch


class SaveWhatIsNeeded(torch.autograd.Function):
    """Forward reads ctx.needs_input_grad (valid there) to save only what backward will use."""

    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(
            w if ctx.needs_input_grad[0] else None,
            x if ctx.needs_input_grad[1] else None,
        )
        return x * w

    @staticmethod
    def backward(ctx, g):
        w, x = ctx.saved_tensors
        gx = g * w * 3 if ctx.needs_input_grad[0] else None
        gw = g * x * 2 if ctx.needs_input_grad[1] else None
        return gx, gw


def scenario_both():
    x = torch.randn(3, requires_grad=True)
    w = torch.randn(3, requires_grad=True)
    return [x, w], SaveWhatIsNeeded.apply(x, w)


def scenario_only_x():
    x = torch.randn(3, requires_grad=True)
    w = torch.randn(3)
    return [x], SaveWhatIsNeeded.apply(x, w)


def scenario_only_w():
    x = torch.randn(3)
    w = torch.randn(3, requires_grad=True)
    return [w], SaveWhatIsNeeded.apply(x, w)

