import torch
from inliner.runtime import custom_vjp


def rms(t):
    return t.pow(2).mean().sqrt()


def euler_step(t, scale):
    return t * scale


# in the style of torchdiffeq's OdeintAdjointMethod: options kept on ctx, read back
# in backward, and reachable from outside as out.grad_fn.<name>
def adjoint_step_fwd(x, w, step, options):
    return step(x * w, options["scale"]), (x, w, step, options)


def adjoint_step_bwd(residuals, g):
    step_saved, options_saved = residuals[2:]
    with torch.no_grad():
        x, w = residuals[:2]
        step = step_saved
        options = options_saved
        norm = options["norm"]
        scale = options["scale"]
        gx = step(g * w, scale) * norm(g)
        gw = step(g * x, scale)
    return gx, gw, None, None


AdjointStep = custom_vjp(
    adjoint_step_fwd,
    adjoint_step_bwd,
    name="AdjointStep",
    saved_for_backward_idx=(0, 1),
    ctx_attrs={2: "step", 3: "options"},
    saved_on_demand=True,
    compile_kind="opaque",
    compile_reason="forward calls step, passed in as an argument",
    backward_kind="side_effecting",
    backward_reason="backward calls step, a value from outside the body",
    backward_nones=(2, 3),
)


def blend_fwd(x, alpha):
    output = x * alpha
    inputs = (x, alpha)
    _, alpha = inputs
    return output, (alpha,)


def blend_bwd(residuals, g):
    (alpha,) = residuals
    return g * (alpha + 1), None


Blend = custom_vjp(
    blend_fwd, blend_bwd, name="Blend", ctx_attrs={0: "alpha"}, fill_defaults=True
)


def _call(options=None):
    x = torch.randn(4, requires_grad=True)
    w = torch.randn(4, requires_grad=True)
    options = {"norm": rms, "scale": 2.0} if options is None else options
    return x, w, AdjointStep(x, w, euler_step, options)


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
    y2 = AdjointStep(x, w, euler_step, {"norm": rms, "scale": 3.0})
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
    y = Blend(x, 0.5)
    seen = y.grad_fn.alpha
    y.grad_fn.alpha = 4.0
    return [x], (y, seen)
