"""Generate the benchmark's documents: a large test-style module with about a hundred
Functions of the shapes real code has, and a small one with a single Function."""

from __future__ import annotations

_SAVED = '''\
class Linear{i}(torch.autograd.Function):
    """A scaled linear layer ({i})."""

    @staticmethod
    def forward(ctx, x, weight, scale):
        ctx.save_for_backward(x, weight)
        ctx.scale = scale  # a plain float
        return x @ weight.t() * scale

    @staticmethod
    def backward(ctx, grad_out):
        x, weight = ctx.saved_tensors
        grad_x = grad_out @ weight * ctx.scale * {k}
        grad_w = grad_out.t() @ x * ctx.scale
        return grad_x, grad_w, None
'''

_SETUP = """\
class Exp{i}(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x, scale=2.0):
        return x.exp() * scale

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, scale = inputs
        ctx.save_for_backward(output)
        ctx.scale = scale

    @staticmethod
    def backward(ctx, g):
        (out,) = ctx.saved_tensors
        return g * out * {k}, None
"""

_DIRTY = """\
class AddInPlace{i}(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, y):
        x.add_(y)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, g):
        return g * {k}, g
"""

_BRANCHES = """\
class Clamp{i}(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, low, high):
        mask = (x >= low) & (x <= high)
        ctx.save_for_backward(mask)
        if low > high:
            ctx.flipped = True
            return x.clamp(high, low)
        ctx.flipped = False
        return x.clamp(low, high)

    @staticmethod
    def backward(ctx, g):
        (mask,) = ctx.saved_tensors
        scale = -{k} if ctx.flipped else {k}
        return g * mask * scale, None, None
"""

_REFUSED = """\
def _stash{i}(ctx, x):
    ctx.save_for_backward(x)


class Stashed{i}(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        _stash{i}(ctx, x)
        return x * 2

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x * {k}
"""

_TEST = """\
def test_{name}_{i}():
    torch.manual_seed({i})
    x = torch.randn(4, 3, requires_grad=True)
    w = torch.randn(5, 3, requires_grad=True)
    y = {call}
    y.sum().backward()
    assert x.grad is not None
    assert torch.isfinite(x.grad).all()
    values = [float(v) for v in y.flatten()[:3]]
    assert len(values) == 3
    return values
"""

_CALLS = {
    "Linear": "Linear{i}.apply(x, w, 0.5)",
    "Exp": "Exp{i}.apply(x @ w.t())",
    "AddInPlace": "AddInPlace{i}.apply((x * 1) @ w.t(), torch.ones(4, 5))",
    "Clamp": "Clamp{i}.apply(x @ w.t(), -1.0, 1.0)",
    "Stashed": "Stashed{i}.apply(x @ w.t())",
}
_SHAPES = [("Linear", _SAVED), ("Exp", _SETUP), ("AddInPlace", _DIRTY), ("Clamp", _BRANCHES), ("Stashed", _REFUSED)]


def generate(functions: int = 100) -> str:
    """A module of ``functions`` Functions (every fifth one refused), each with a test using it."""
    parts = ['"""Generated: many autograd Functions and their tests, as in a large test module."""\n', "import torch\n"]
    for i in range(functions):
        name, template = _SHAPES[i % len(_SHAPES)]
        parts.append("\n\n" + template.format(i=i, k=i % 7 + 2))
        parts.append("\n\n" + _TEST.format(name=name.lower(), i=i, call=_CALLS[name].format(i=i)))
    return "".join(parts)


def generate_small() -> str:
    """A module with one Function and some ordinary code around it."""
    helpers = "".join(
        f"\n\ndef helper_{i}(x):\n    y = x * {i} + 1\n    return y.sum() / (y.numel() or 1)\n" for i in range(20)
    )
    return '"""A small module."""\nimport torch\n\n\n' + _SAVED.format(i=0, k=3) + helpers
