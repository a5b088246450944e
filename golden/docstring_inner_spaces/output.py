import torch
from inliner.runtime import custom_vjp


def event_time_fwd(x):
    """ event_t is the solution to event_fn """
    return x * 2, (x,)


def event_time_bwd(residuals, g):
    """Not the true derivative.

    The inner lines carry the method's indentation:
        this one four more,
    and the closing quotes their own line.
    """
    (x,) = residuals
    return g * x * 3


EventTime = custom_vjp(
    event_time_fwd, event_time_bwd, name="EventTime", saved_for_backward_idx=(0,)
)


def make(power):
    def power_fwd(x):
        """Raise x to a power.

          Two spaces more than the margin, kept relative to it.
        """
        return x**power, (x,)

    def power_bwd(residuals, g):
        '''   Leading spaces on the first line stay.
        Trailing spaces after the last word stay too.   '''
        (x,) = residuals
        return g * power * x * 5

    Power = custom_vjp(power_fwd, power_bwd, name="Power", saved_for_backward_idx=(0,))

    return Power


squared = make(2)


def scenario_docstrings():
    x = torch.randn(3, requires_grad=True)
    return [x], EventTime(x) + squared(x)
