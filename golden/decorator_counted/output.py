import functools

import torch
from inliner.runtime import custom_vjp

EVALUATED = []  # decorator arguments evaluated, and decorator factories called
APPLIED = []  # decorators applied to a function
CALLS = []  # calls through the decorated functions


def tag(name):
    EVALUATED.append("argument " + name)
    return name


def counted(name):
    EVALUATED.append("factory " + name)

    def decorator(fn):
        APPLIED.append(name)

        @functools.wraps(fn)
        def wrapper(ctx, *args):
            CALLS.append(name)
            return fn(ctx, *args)

        return wrapper

    return decorator


def twice_fwd(x):
    return x * 2, (x,)


def twice_bwd(residuals, g):
    (x,) = residuals
    return g * x * 3


Twice = custom_vjp(
    twice_fwd,
    twice_bwd,
    name="Twice",
    saved_for_backward_idx=(0,),
    forward_decorators=(counted(tag("forward")),),
    backward_decorators=(counted(tag("backward")),),
    compile_kind="side_effecting",
    compile_reason='forward\'s decorator counted(tag("forward")) is replayed around it',
)


def scenario_counts():
    start = len(CALLS)
    x = torch.randn(3, requires_grad=True)
    y = Twice(Twice(x))
    (g,) = torch.autograd.grad(y.sum(), x, retain_graph=True)
    return [x], (y, g, list(EVALUATED), list(APPLIED), CALLS[start:])
