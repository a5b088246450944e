import torch


class Counter(torch.autograd.Function):
    """A counter on ctx that backward advances: each backward of one call sees the last one's write."""

    @staticmethod
    def forward(ctx, x):
        ctx.calls = 0
        return x * 2

    @staticmethod
    def backward(ctx, g):
        ctx.calls += 1
        return g * ctx.calls * 3


class DropsBlocks(torch.autograd.Function):
    """Frees what backward used (real code: `ctx.blocks = None`): a second backward fails."""

    @staticmethod
    def forward(ctx, x, w):
        ctx.blocks = [x * 2, w.sin()]
        return x * w

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.blocks
        ctx.blocks = None
        return g * b * 5, g * a


class Forgets(torch.autograd.Function):
    """`del ctx.attr` in backward: a second backward reads an attribute that is gone."""

    @staticmethod
    def forward(ctx, x, scale):
        ctx.scale = scale
        ctx.save_for_backward(x)
        return x * scale

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        scale = ctx.scale
        del ctx.scale
        return g * x * scale, None


class Caches(torch.autograd.Function):
    """Backward caches a value on ctx the first time and reuses it (a write through a closure)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        ctx.cache = None
        return x.exp()

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors

        def cached():
            if ctx.cache is None:
                ctx.cache = x.cos() * 4
            return ctx.cache

        return g * cached()


def scenario_counter_backward_twice():
    x = torch.randn(3, requires_grad=True)
    y = Counter.apply(x)
    (first,) = torch.autograd.grad(y.sum(), x, retain_graph=True)
    (second,) = torch.autograd.grad(y.sum(), x, retain_graph=True)
    return [x], (y, first, second)  # the harness's own backward is the third


def scenario_counter_per_call():
    x = torch.randn(3, requires_grad=True)
    return [x], (Counter.apply(x), Counter.apply(x * 2))


def scenario_drops_blocks_second_backward_fails():
    x = torch.randn(3, requires_grad=True)
    w = torch.randn(3, requires_grad=True)
    y = DropsBlocks.apply(x, w)
    gx, gw = torch.autograd.grad(y.sum(), (x, w), retain_graph=True)
    return [x, w], (y, gx, gw)


def scenario_forgets_second_backward_fails():
    x = torch.randn(3, requires_grad=True)
    y = Forgets.apply(x, 1.5)
    (gx,) = torch.autograd.grad(y.sum(), x, retain_graph=True)
    return [x], (y, gx)


def scenario_caches_twice():
    x = torch.randn(3, requires_grad=True)
    y = Caches.apply(x)
    (first,) = torch.autograd.grad(y.sum(), x, retain_graph=True)
    return [x], (y, first)


def scenario_freed_without_retain():
    x = torch.randn(3, requires_grad=True)
    y = Forgets.apply(x, 2.0)
    (gx,) = torch.autograd.grad(y.sum(), x)
    return [x], (y, gx)  # the harness's backward: saved tensors were freed
