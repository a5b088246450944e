import torch


def rms(t):
    return t.pow(2).mean().sqrt()


def euler_step(t, scale):
    return t * scale


class AdjointStep(torch.autograd.Function):
    # in the style of torchdiffeq's OdeintAdjointMethod: options kept on ctx, read back
    # in backward, and reachable from outside as out.grad_fn.<name>
    @staticmethod
    def forward(ctx, x, w, step, options):
        ctx.step = step
        ctx.options = options
        ctx.save_for_backward(x, w)
        return step(x * w, options["scale"])

    @staticmethod
    def backward(ctx, g):
        with torch.no_grad():
            x, w = ctx.saved_tensors
            step = ctx.step
            options = ctx.options
            norm = options["norm"]
            scale = options["scale"]
            gx = step(g * w, scale) * norm(g)
            gw = step(g * x, scale)
        return gx, gw, None, None


class Blend(torch.autograd.Function):
    @staticmethod
    def forward(x, alpha):
        return x * alpha

    @staticmethod
    def setup_context(ctx, inputs, output):
        _, alpha = inputs
        ctx.alpha = alpha

    @staticmethod
    def backward(ctx, g):
        return g * (ctx.alpha + 1), None


def _call(options=None):
    x = torch.randn(4, requires_grad=True)
    w = torch.randn(4, requires_grad=True)
    options = {"norm": rms, "scale": 2.0} if options is None else options
    return x, w, AdjointStep.apply(x, w, euler_step, options)


def scenario_read_through_grad_fn():
    x, w, y = _call()
    node = y.grad_fn
    return [x, w], (y, node.options["scale"], sorted(node.options), node.step.__name__, type(node).__name__)


def scenario_spy_in_option_dict():
    # torchdiffeq's test: swap the norm in the node's option dict for a spy, then backward
    x, w, y = _call()
    calls = []

    def spy(t):
        calls.append(t.shape)
        return rms(t) * 3

    y.grad_fn.options["norm"] = spy
    (gx, gw) = torch.autograd.grad(y.sum(), [x, w])
    return [], (gx, gw, len(calls))


def scenario_replace_option_dict():
    x, w, y = _call()
    y.grad_fn.options = {"norm": rms, "scale": 5.0}
    return [x, w], y


def scenario_replace_callable():
    x, w, y = _call()
    calls = []

    def spy_step(t, scale):
        calls.append(scale)
        return t * scale - 1

    y.grad_fn.step = spy_step
    (gx, gw) = torch.autograd.grad(y.sum(), [x, w])
    return [], (gx, gw, calls)


def scenario_each_call_has_its_node():
    x, w, y1 = _call()
    y2 = AdjointStep.apply(x, w, euler_step, {"norm": rms, "scale": 3.0})
    y1.grad_fn.options = {"norm": rms, "scale": 7.0}
    return [x, w], (y1, y2, y2.grad_fn.options["scale"])


def scenario_saved_tensors_on_node():
    x, w, y = _call()
    saved = y.grad_fn.saved_tensors
    return [x, w], (y, len(saved), saved[0] is x, saved[1] is w)


def scenario_missing_attribute():
    _, _, y = _call()
    return [], y.grad_fn.adjoint_rtol


def scenario_deleted_before_backward():
    x, w, y = _call()
    del y.grad_fn.step
    return [x, w], y


def scenario_setup_context_style():
    x = torch.randn(3, requires_grad=True)
    y = Blend.apply(x, 0.5)
    seen = y.grad_fn.alpha
    y.grad_fn.alpha = 4.0
    return [x], (y, seen)
