import torch


class Integrate(torch.autograd.Function):
    @staticmethod
    def forward(ctx, y0, steps):
        y=y0*1.0  # noqa: E225
        aug_state = [y0, y0.clone(), torch.zeros_like(y0)]  # a line longer than black's 88 columns, as this project writes them
        for i in range(1, steps):
            if i % 2:
                aug_state[1] = y[i - 1]  # a comment on a subscript, which black would split at 88 columns
            aug_state[2] = aug_state[2]+aug_state[1]*0.5 # noqa: E226,E261
        ctx.save_for_backward(y0)
        ctx.steps = steps
        return aug_state[2]+y  # noqa: E226

    @staticmethod
    def backward(ctx, g):
        y0, = ctx.saved_tensors
        scale = {'steps': ctx.steps}['steps']  # single quotes stay
        return g*y0*scale*3, None  # noqa: E226


def scenario_style():
    y0 = torch.randn(4, requires_grad=True)
    return [y0], Integrate.apply(y0, 4)
