import torch


class EventTime(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        """ event_t is the solution to event_fn """
        ctx.save_for_backward(x)
        return x * 2

    @staticmethod
    def backward(ctx, g):
        """Not the true derivative.

        The inner lines carry the method's indentation:
            this one four more,
        and the closing quotes their own line.
        """
        (x,) = ctx.saved_tensors
        return g * x * 3


def make(power):
    class Power(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            """Raise x to a power.

              Two spaces more than the margin, kept relative to it.
            """
            ctx.save_for_backward(x)
            return x**power

        @staticmethod
        def backward(ctx, g):
            '''   Leading spaces on the first line stay.
            Trailing spaces after the last word stay too.   '''
            (x,) = ctx.saved_tensors
            return g * power * x * 5

    return Power.apply


squared = make(2)


def scenario_docstrings():
    x = torch.randn(3, requires_grad=True)
    return [x], EventTime.apply(x) + squared(x)
