"""backward does something before it reads ctx.saved_tensors: a side effect, or a statement
that may raise. A second backward through the freed graph fails at the read, so the
rewrite must read the saved tensors there too: the side effect happens first, as in the
original, and the statement's own error wins over the freed-graph one."""
import torch
from inliner.runtime import custom_vjp

LOG = []


def side_effect_log():
    return list(LOG)


def reset_side_effects():
    LOG.clear()


def logged_fwd(x):
    return x * 2, (x,)


def logged_bwd(residuals, g):
    LOG.append("backward")
    (x,) = residuals[:1]
    return g * x * 3


Logged = custom_vjp(
    logged_fwd,
    logged_bwd,
    name="Logged",
    saved_for_backward_idx=(0,),
    saved_on_demand=True,
    backward_kind="side_effecting",
    backward_reason="backward appends to module-level LOG",
    backward_nones=(),
)


class Strict:
    armed = False  # the next check raises (once)


def check(g):
    if Strict.armed:
        Strict.armed = False
        raise ValueError("strict mode: no second backward")
    return g


def checks_first_fwd(x):
    return x * 2, (x,)


def checks_first_bwd(residuals, g):
    g = check(g)  # may raise before the read
    (x,) = residuals[:1]
    return g * x * 3


ChecksFirst = custom_vjp(
    checks_first_fwd,
    checks_first_bwd,
    name="ChecksFirst",
    saved_for_backward_idx=(0,),
    saved_on_demand=True,
    backward_kind="side_effecting",
    backward_reason="backward calls check, which sets module-level Strict.armed",
    backward_nones=(),
)


def constants_first_fwd(x):
    """Names bound to constants before the read cannot raise: the read stays up front."""
    k = 3.0
    return x * 2, (x, k)


def constants_first_bwd(residuals, g):
    x, k = residuals
    gx = None
    gx = g * x * k
    return gx


ConstantsFirst = custom_vjp(
    constants_first_fwd,
    constants_first_bwd,
    name="ConstantsFirst",
    saved_for_backward_idx=(0,),
    ctx_attrs={1: "k"},
)


def scenario_logged_twice():
    x = torch.randn(3, requires_grad=True)
    y = Logged(x)
    y.sum().backward()
    return [x], y  # the harness's backward runs through the freed graph


def scenario_logged_once():
    x = torch.randn(3, requires_grad=True)
    return [x], Logged(x)


def scenario_checks_twice():
    x = torch.randn(3, requires_grad=True)
    y = ChecksFirst(x)
    y.sum().backward()
    Strict.armed = True
    try:
        y.sum().backward()  # check's error, not the freed graph's
        error = None
    except Exception as exc:
        error = type(exc).__name__
    finally:
        Strict.armed = False
    return [x], (y, error)


def scenario_checks_once():
    x = torch.randn(3, requires_grad=True)
    return [x], ChecksFirst(x)


def scenario_constants_twice():
    x = torch.randn(3, requires_grad=True)
    y = ConstantsFirst(x)
    y.sum().backward()
    return [x], y
