import torch


class Accumulate(torch.autograd.Function):
    # attributes backward never reads, set on some paths only (a loop that may not run,
    # a branch): the original's node has each exactly where forward set it
    @staticmethod
    def forward(ctx, x, steps):
        ctx.steps = steps
        for i in range(steps):
            ctx.last_step = i
        if steps > 2:
            ctx.long_run = True
        return x * steps

    @staticmethod
    def backward(ctx, g):
        return g * ctx.steps * 2, None


def node_attributes(out):
    return sorted(k for k in vars(out.grad_fn) if not k.startswith("_"))


def scenario_no_steps():
    x = torch.randn(3, requires_grad=True)
    out = Accumulate.apply(x, 0)
    return [x], (out, node_attributes(out))


def scenario_some_steps():
    x = torch.randn(3, requires_grad=True)
    out = Accumulate.apply(x, 2)
    return [x], (out, node_attributes(out), out.grad_fn.last_step)


def scenario_long_run():
    x = torch.randn(3, requires_grad=True)
    out = Accumulate.apply(x, 4)
    return [x], (out, node_attributes(out), out.grad_fn.last_step, out.grad_fn.long_run)
